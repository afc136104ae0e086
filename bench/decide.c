/* One decision rule (see decide.h for the rule, docs/compare.md for the statistics).
 *
 * Student's t distribution is the regularised incomplete beta function:
 * P(|T| >= t) = I_{df/(df+t^2)}(df/2, 1/2). I_x(a, b) is evaluated with its continued fraction
 * (DLMF 8.17.22) by the modified Lentz method, on the side of x where the fraction converges
 * quickly (x < (a+1)/(a+b+2), else through I_x(a,b) = 1 - I_{1-x}(b,a)). That is one function
 * of libm-level code; the libraries that offer it (GSL, Boost) would be a large dependency,
 * under GPL for GSL, for these lines. tests/unit/test_compare.c checks the p-values against
 * SciPy.
 */
#include "decide.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define DECIDE_CF_ITER 500
#define DECIDE_CF_EPS  1e-15
#define DECIDE_TINY    1e-300
#define DECIDE_DF_MAX  1e9 /* no estimated variance: a normal tail */

/* ---- Student's t ------------------------------------------------------------------------ */

/* The continued fraction of I_x(a, b) (without its front factor), modified Lentz. */
static double decide_betacf(double a, double b, double x)
{
	double c = 1.0, d = 0.0, f = 1.0;

	for (int j = 1; j <= DECIDE_CF_ITER; j++) {
		int m = j / 2;
		double dj;

		if (j % 2) /* d_{2m+1} */
			dj = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
		else /* d_{2m} */
			dj = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
		d = 1.0 + dj * d;
		c = 1.0 + dj / c;
		if (fabs(d) < DECIDE_TINY)
			d = DECIDE_TINY;
		if (fabs(c) < DECIDE_TINY)
			c = DECIDE_TINY;
		d = 1.0 / d;
		f *= c * d;
		if (fabs(c * d - 1.0) < DECIDE_CF_EPS)
			break;
	}
	return 1.0 / f;
}

double decide_betainc(double a, double b, double x)
{
	if (x <= 0.0)
		return 0.0;
	if (x >= 1.0)
		return 1.0;
	if (x > (a + 1.0) / (a + b + 2.0))
		return 1.0 - decide_betainc(b, a, 1.0 - x);
	double lfront = a * log(x) + b * log1p(-x) - (lgamma(a) + lgamma(b) - lgamma(a + b));
	return exp(lfront) / a * decide_betacf(a, b, x);
}

double decide_t_two_sided(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(t))
		return 0.0;
	return decide_betainc(df / 2.0, 0.5, df / (df + t * t));
}

double decide_t_quantile(double p, double df)
{
	double tail = 2.0 * (1.0 - p), lo = 0.0, hi = 1.0;

	if (p <= 0.5)
		return 0.0;
	while (decide_t_two_sided(hi, df) > tail && hi < 1e12)
		hi *= 2.0;
	for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = 0.5 * (lo + hi);
		if (decide_t_two_sided(mid, df) > tail)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

/* ---- the variance model ------------------------------------------------------------------- */

/* What is known of the spread: the variance of one value on each side (estimated, or borrowed
 * from the other side), the assumed run-to-run variance of each side's mean, and the degrees
 * of freedom of the estimates. */
struct decide_var {
	double va, vb;	 /* variance of one value */
	double ra, rb;	 /* (run_noise x mean)^2 */
	double dfa, dfb; /* of va, vb; 0: not estimated */
	bool shared;	 /* va and vb come from one estimate (a side with one value) */
	bool runs;
};

/* Standard error of mean(b) - mean(a) with na and nb values a side, and its Welch-Satterthwaite
 * degrees of freedom over the estimated parts. */
static double decide_se(const struct decide_var *v, int na, int nb, double *df)
{
	double pa, pb, ea, eb, den;

	if (v->runs) {
		pa = fmax(v->va, v->ra) / na;
		pb = fmax(v->vb, v->rb) / nb;
		ea = v->dfa > 0 && v->va >= v->ra ? pa : 0;
		eb = v->dfb > 0 && v->vb >= v->rb ? pb : 0;
	} else {
		ea = v->dfa > 0 ? v->va / na : 0;
		eb = v->dfb > 0 ? v->vb / nb : 0;
		pa = v->va / na + v->ra;
		pb = v->vb / nb + v->rb;
	}
	if (v->shared)
		den = (ea + eb) * (ea + eb) / fmax(v->dfa, v->dfb);
	else
		den = (v->dfa > 0 ? ea * ea / v->dfa : 0) + (v->dfb > 0 ? eb * eb / v->dfb : 0);
	double se2 = pa + pb;
	*df = den > 0 ? se2 * se2 / den : DECIDE_DF_MAX;
	if (*df > DECIDE_DF_MAX)
		*df = DECIDE_DF_MAX;
	return sqrt(se2);
}

static void decide_var_init(struct decide_var *v, const struct summary_stat *a,
			    const struct summary_stat *b, const struct decide_spec *s)
{
	double r = s->run_noise / 100.0;

	memset(v, 0, sizeof(*v));
	v->runs = s->runs;
	v->ra = (r * a->mean) * (r * a->mean);
	v->rb = (r * b->mean) * (r * b->mean);
	if (a->n >= 2) {
		v->va = a->stddev * a->stddev;
		v->dfa = a->n - 1;
	}
	if (b->n >= 2) {
		v->vb = b->stddev * b->stddev;
		v->dfb = b->n - 1;
	}
	/* One value on a side: it varies as the other side's values do, relative to its mean. */
	if (a->n == 1 && b->n >= 2) {
		double rel = b->mean != 0 ? a->mean / b->mean : 1.0;
		v->va = v->vb * rel * rel;
		v->dfa = v->dfb;
		v->shared = true;
	} else if (b->n == 1 && a->n >= 2) {
		double rel = a->mean != 0 ? b->mean / a->mean : 1.0;
		v->vb = v->va * rel * rel;
		v->dfb = v->dfa;
		v->shared = true;
	}
}

/* mde in the values' unit for na, nb values a side. */
static double decide_mde_at(const struct decide_var *v, int na, int nb, double floor_v,
			    const struct decide_spec *s, double *se_out)
{
	double df, se = decide_se(v, na, nb, &df);
	double tc = decide_t_quantile(1.0 - s->alpha / 2.0, df);
	double tp = decide_t_quantile(s->power, df);

	if (se_out)
		*se_out = se;
	return fmax(floor_v, tc * se) + tp * se;
}

/* Values a side that detect a change of |target| (values' unit) with the stated power; -1
 * when no count up to DECIDE_MAX_REPS does. */
static int decide_reps_needed(const struct decide_var *v, double target, double floor_v,
			      const struct decide_spec *s)
{
	struct decide_var w = *v;
	int lo = 2, hi = DECIDE_MAX_REPS;

	/* A projection: both sides measured with n values, their spreads as seen now. */
	w.shared = false;
	w.dfa = w.dfb = hi - 1;
	if (decide_mde_at(&w, hi, hi, floor_v, s, NULL) > target)
		return -1;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		w.dfa = w.dfb = mid - 1;
		if (decide_mde_at(&w, mid, mid, floor_v, s, NULL) <= target)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* ---- steadiness ------------------------------------------------------------------------------ */

/* Two-sided p-value of the F-test that both sides have the same relative spread (coefficient of
 * variation): F = (cv_b / cv_a)^2 with (nb - 1, na - 1) degrees of freedom. 1 when a side has
 * fewer than two values or no spread to compare. */
static double decide_steady_p(const struct summary_stat *a, const struct summary_stat *b)
{
	if (a->n < 2 || b->n < 2 || a->mean == 0 || b->mean == 0)
		return 1.0;
	/* Spreads below DECIDE_STEADY_CV count as that much: quantised values (histogram
	 * percentiles are bucket edges) are often equal in every repetition. */
	double ca = fmax(a->stddev / fabs(a->mean), DECIDE_STEADY_CV);
	double cb = fmax(b->stddev / fabs(b->mean), DECIDE_STEADY_CV);
	double f = (cb / ca) * (cb / ca), d1 = b->n - 1, d2 = a->n - 1;
	/* P(F >= f) = I_{d2 / (d2 + d1 f)}(d2 / 2, d1 / 2) */
	double upper = decide_betainc(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * f));
	return 2.0 * fmin(upper, 1.0 - upper);
}

/* ---- the decision -------------------------------------------------------------------------- */

static const char *const decide_names[] = {"no reliable difference", "better", "worse",
					   "inconclusive", "n/a"};

const char *decide_outcome_name(enum decide_outcome o)
{
	return o <= DECIDE_MISSING ? decide_names[o] : "?";
}

static int decide_finite(const double *in, int n, double *out)
{
	int k = 0;

	for (int i = 0; i < n && k < DECIDE_MAX_VALUES; i++)
		if (isfinite(in[i]))
			out[k++] = in[i];
	return k;
}

/* The one-line why: "Welch's t-test over repetitions with run-to-run noise 5 %: change -12.0 %,
 * p=0.003, 95 % CI [-18.1, -5.9] %, detects 14.2 % (power 0.8, floor 10 %): worse" */
static void decide_why(struct decide_result *r, const struct decide_spec *s)
{
	const char *u = s->scale == DECIDE_POINTS ? " points" : " %";
	char p[32], head[160], tail[200] = "";
	size_t len = sizeof(r->why), used;

	if (isnan(r->p))
		snprintf(p, sizeof(p), "no spread to test against");
	else if (r->p < 0.0001)
		snprintf(p, sizeof(p), "p<0.0001");
	else
		snprintf(p, sizeof(p), "p=%.2g", r->p);
	if (s->run_noise > 0)
		snprintf(head, sizeof(head), "Welch's t-test over %s, run-to-run noise %s%g %%",
			 s->runs ? "run means" : "repetitions", s->runs ? "at least " : "",
			 s->run_noise);
	else
		snprintf(head, sizeof(head), "Welch's t-test over %s",
			 s->runs ? "run means" : "repetitions");
	used = (size_t)snprintf(r->why, len, "%s: change %+.1f%s, %s", head, r->change, u, p);
	if (isfinite(r->ci_lo) && used < len)
		used += (size_t)snprintf(r->why + used, len - used, ", %g %% CI [%+.1f, %+.1f]%s",
					 100 * (1 - s->alpha), r->ci_lo, r->ci_hi, u);
	if (isfinite(r->mde) && used < len)
		used += (size_t)snprintf(r->why + used, len - used,
					 ", detects %.1f%s (power %g, floor %g%s)", r->mde, u,
					 s->power, s->floor, u);
	if (r->outcome == DECIDE_INCONCLUSIVE && r->steady_p < DECIDE_STEADY_ALPHA &&
	    r->p < s->alpha) {
		bool b_wild = r->b.stddev / fabs(r->b.mean) > r->a.stddev / fabs(r->a.mean);
		snprintf(
		    tail, sizeof(tail),
		    "; unsteady: the %s's values spread by %.1f %% of their mean against %.1f "
		    "%% (F-test p=%.2g): conditions changed while it ran (a busy machine?); "
		    "run it again",
		    b_wild ? "candidate" : "reference",
		    100 * (b_wild ? r->b.stddev / fabs(r->b.mean) : r->a.stddev / fabs(r->a.mean)),
		    100 * (b_wild ? r->a.stddev / fabs(r->a.mean) : r->b.stddev / fabs(r->b.mean)),
		    r->steady_p);
	} else if (r->outcome == DECIDE_INCONCLUSIVE) {
		double far = fabs(r->ci_lo) > fabs(r->ci_hi) ? r->ci_lo : r->ci_hi;
		size_t t = 0;
		if (isfinite(far))
			t = (size_t)snprintf(tail, sizeof(tail),
					     "; the spread allows changes up to %+.1f%s", far, u);
		if (r->reps_needed > 0 && t < sizeof(tail))
			snprintf(
			    tail + t, sizeof(tail) - t,
			    "; run %d more %s a side (%d a side) to tell a change of this size",
			    r->reps_needed - (r->a.n < r->b.n ? r->a.n : r->b.n),
			    s->runs ? "runs" : "repetitions", r->reps_needed);
		else if (t < sizeof(tail))
			snprintf(tail + t, sizeof(tail) - t,
				 "; more %s cannot tell it (the run-to-run noise alone hides "
				 "changes below %.1f%s): compare several runs a side",
				 s->runs ? "runs" : "repetitions", r->mde_limit, u);
	}
	if (used < len)
		snprintf(r->why + used, len - used, ": %s%s", decide_outcome_name(r->outcome),
			 tail);
}

static bool decide_spec_ok(const struct decide_spec *s)
{
	return s->floor >= 0 && s->run_noise >= 0 && s->alpha > 0 && s->alpha < 1 && s->power > 0 &&
	       s->power < 1 && isfinite(s->floor) && isfinite(s->run_noise);
}

/* The test proper on values with at least one on each side. */
static void decide_test(const struct decide_var *v, struct decide_result *r,
			const struct decide_spec *s, double k, double floor_v)
{
	double diff = r->b.mean - r->a.mean, df, se = decide_se(v, r->a.n, r->b.n, &df);
	bool spread = se > 0 || v->dfa > 0 || v->dfb > 0; /* else nothing to test against */

	r->df = df;
	r->se = se * k;
	r->steady_p = decide_steady_p(&r->a, &r->b);
	if (se > 0) {
		double q = decide_t_quantile(1.0 - s->alpha / 2.0, df) * se;
		r->t = diff / se;
		r->p = decide_t_two_sided(r->t, df);
		r->ci_lo = (diff - q) * k;
		r->ci_hi = (diff + q) * k;
		r->mde = decide_mde_at(v, r->a.n, r->b.n, floor_v, s, NULL) * k;
	} else if (spread) {
		/* Constant values a side and no assumed noise: the difference is exact. */
		r->p = diff == 0.0 ? 1.0 : 0.0;
		r->ci_lo = r->ci_hi = r->change;
		r->mde = s->floor;
	}
	double se_inf = v->runs ? 0 : sqrt(v->ra + v->rb);
	double zc = decide_t_quantile(1.0 - s->alpha / 2.0, DECIDE_DF_MAX);
	r->mde_limit =
	    (fmax(floor_v, zc * se_inf) + decide_t_quantile(s->power, DECIDE_DF_MAX) * se_inf) * k;
	bool beyond = fabs(r->change) > s->floor + 1e-9 * (1.0 + s->floor);
	bool worse = s->higher_better ? diff < 0 : diff > 0;
	if (!beyond)
		r->outcome = DECIDE_SAME;
	else if (r->p < s->alpha && r->steady_p >= DECIDE_STEADY_ALPHA)
		r->outcome = worse ? DECIDE_WORSE : DECIDE_BETTER;
	else if (r->p < s->alpha)
		r->outcome = DECIDE_INCONCLUSIVE; /* unsteady: rerun, more values will not help */
	else {
		r->outcome = DECIDE_INCONCLUSIVE;
		r->reps_needed = spread ? decide_reps_needed(v, fabs(diff), floor_v, s) : 3;
	}
}

int decide_compare(const double *a, int na, const double *b, int nb, const struct decide_spec *in,
		   struct decide_result *r)
{
	double xa[DECIDE_MAX_VALUES], xb[DECIDE_MAX_VALUES];
	struct decide_spec s = *in;
	struct decide_var v;
	double k;

	memset(r, 0, sizeof(*r));
	r->change = r->ci_lo = r->ci_hi = r->p = r->t = r->df = r->se = r->mde = r->mde_limit = NAN;
	s.alpha = s.alpha > 0 ? s.alpha : DECIDE_ALPHA;
	s.power = s.power > 0 ? s.power : DECIDE_POWER;
	if (!decide_spec_ok(&s))
		return -EINVAL;
	na = decide_finite(a, na, xa);
	r->a = stat_summarise(xa, na);
	nb = decide_finite(b, nb, xb);
	r->b = stat_summarise(xb, nb);
	if (na == 0 || nb == 0) {
		r->outcome = DECIDE_MISSING;
		snprintf(r->why, sizeof(r->why), "%s side has no value: n/a",
			 na == 0 ? "the reference" : "the candidate");
		return 0;
	}
	double diff = r->b.mean - r->a.mean;
	if (s.scale == DECIDE_POINTS)
		k = 1.0;
	else if (r->a.mean != 0)
		k = 100.0 / fabs(r->a.mean);
	else
		k = NAN; /* a relative change from 0 */
	r->change = isnan(k) ? (diff == 0 ? 0 : diff > 0 ? INFINITY : -INFINITY) : diff * k;
	decide_var_init(&v, &r->a, &r->b, &s);
	r->borrowed = na < 2 || nb < 2;
	decide_test(&v, r, &s, isnan(k) ? 1.0 : k, isnan(k) ? 0 : s.floor / k);
	if (isnan(k)) {
		r->ci_lo = r->ci_hi = r->se = r->mde = r->mde_limit = NAN;
		if (r->outcome == DECIDE_INCONCLUSIVE)
			r->reps_needed = -1;
	}
	decide_why(r, &s);
	return 0;
}

int decide_against(const struct summary_stat *x, double ref, const struct decide_spec *in,
		   struct decide_result *r)
{
	struct decide_spec s = *in;
	struct decide_var v = {0};
	double k;

	memset(r, 0, sizeof(*r));
	r->change = r->ci_lo = r->ci_hi = r->p = r->t = r->df = r->se = r->mde = r->mde_limit = NAN;
	s.alpha = s.alpha > 0 ? s.alpha : DECIDE_ALPHA;
	s.power = s.power > 0 ? s.power : DECIDE_POWER;
	if (!decide_spec_ok(&s) || !isfinite(ref))
		return -EINVAL;
	r->a = (struct summary_stat){1, ref, 0, ref, ref};
	r->b = *x;
	if (x->n < 1 || !isfinite(x->mean)) {
		r->outcome = DECIDE_MISSING;
		snprintf(r->why, sizeof(r->why), "no value to compare with %g: n/a", ref);
		return 0;
	}
	k = s.scale == DECIDE_POINTS ? 1.0 : ref != 0 ? 100.0 / fabs(ref) : 1.0;
	r->change = (x->mean - ref) * k;
	/* The reference is exact: only the sample's own spread and run-to-run noise count. */
	v.runs = s.runs;
	v.rb = (s.run_noise / 100.0 * x->mean) * (s.run_noise / 100.0 * x->mean);
	if (x->n >= 2) {
		v.vb = x->stddev * x->stddev;
		v.dfb = x->n - 1;
	}
	r->borrowed = x->n < 2;
	decide_test(&v, r, &s, k, s.floor / k);
	decide_why(r, &s);
	return 0;
}

bool decide_reliably_worse(const double *x, int nx, const double *ref, int nref,
			   const struct decide_spec *s)
{
	struct decide_result r;

	return decide_compare(ref, nref, x, nx, s, &r) == 0 && r.outcome == DECIDE_WORSE;
}
