/* Statistics of `feedbench compare`: Welch's t-test and the verdict of one metric. Student's t
 * distribution lives in the decision module (bench/decide.c).
 */
#include "compare.h"
#include "decide.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static const char *const cmp_verdict_names[] = {
#define CMP_X_NAME(name, text) text,
    CMP_VERDICTS(CMP_X_NAME)
#undef CMP_X_NAME
};

const char *cmp_verdict_name(enum cmp_verdict v)
{
	return cmp_verdict_names[v];
}

/* ---- Student's t (bench/decide.c) ---------------------------------------------------- */

double cmp_betainc(double a, double b, double x)
{
	return decide_betainc(a, b, x);
}

double cmp_t_two_sided(double t, double df)
{
	return decide_t_two_sided(t, df);
}

double cmp_t_quantile(double p, double df)
{
	return decide_t_quantile(p, df);
}

int cmp_welch_test(const double *a, int na, const double *b, int nb, double alpha,
		   struct cmp_welch *w)
{
	return cmp_welch_test_run_noise(a, na, b, nb, alpha, 0.0, w);
}

int cmp_welch_test_run_noise(const double *a, int na, const double *b, int nb, double alpha,
			     double run_noise, struct cmp_welch *w)
{
	struct summary_stat sa, sb;
	double wa, wb, ra, rb, denom;

	if (na < 2 || nb < 2)
		return -EINVAL;
	sa = stat_summarise(a, na);
	sb = stat_summarise(b, nb);
	wa = sa.stddev * sa.stddev / na; /* estimated: na - 1 degrees of freedom */
	wb = sb.stddev * sb.stddev / nb;
	ra = run_noise * sa.mean * run_noise * sa.mean; /* assumed: exact */
	rb = run_noise * sb.mean * run_noise * sb.mean;
	w->diff = sb.mean - sa.mean;
	w->se = sqrt(wa + wb + ra + rb);
	if (w->se == 0.0) {
		/* Both sides constant: the difference is exact. */
		w->t = w->df = NAN;
		w->p = w->diff == 0.0 ? 1.0 : 0.0;
		w->lo = w->hi = w->diff;
		return 0;
	}
	w->t = w->diff / w->se;
	/* Welch-Satterthwaite: only the estimated variances carry uncertainty. */
	denom = wa * wa / (na - 1) + wb * wb / (nb - 1);
	w->df = denom > 0 ? (w->se * w->se) * (w->se * w->se) / denom : 1e9;
	if (w->df > 1e9)
		w->df = 1e9;
	w->p = cmp_t_two_sided(w->t, w->df);
	double q = cmp_t_quantile(1.0 - alpha / 2.0, w->df) * w->se;
	w->lo = w->diff - q;
	w->hi = w->diff + q;
	return 0;
}

/* ---- verdict ----------------------------------------------------------------------------- */

static int cmp_finite(const double *in, int n, double *out)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		if (!isnan(in[i]))
			out[k++] = in[i];
	return k;
}

static double cmp_pct(double delta, double base)
{
	if (base != 0.0)
		return delta / fabs(base) * 100.0;
	if (delta == 0.0)
		return 0.0;
	return delta > 0 ? INFINITY : -INFINITY;
}

/* A change passes the tolerance when it is larger than it, past rounding: histogram
 * percentiles are bucket edges, and a change of exactly 10 % is common among them. */
static bool cmp_beyond(double change_pct, double tol_pct)
{
	return fabs(change_pct) > tol_pct + 1e-9 * (1.0 + tol_pct);
}

void cmp_judge(const double *base, int nb, const double *cur, int nc, bool higher_better,
	       double tol_pct, double alpha, double run_noise_pct, struct cmp_outcome *o)
{
	double a[CMP_MAX_REPS], b[CMP_MAX_REPS];
	struct cmp_welch w;
	bool beyond, worse;

	memset(o, 0, sizeof(*o));
	o->p = o->t = o->df = o->ci_lo_pct = o->ci_hi_pct = o->change_pct = NAN;
	nb = cmp_finite(base, nb < CMP_MAX_REPS ? nb : CMP_MAX_REPS, a);
	nc = cmp_finite(cur, nc < CMP_MAX_REPS ? nc : CMP_MAX_REPS, b);
	o->base = stat_summarise(a, nb);
	o->cur = stat_summarise(b, nc);
	if (nb == 0 || nc == 0) {
		o->verdict = CMP_MISSING;
		return;
	}
	o->change_pct = cmp_pct(o->cur.mean - o->base.mean, o->base.mean);
	worse = higher_better ? o->change_pct < 0 : o->change_pct > 0;
	beyond = cmp_beyond(o->change_pct, tol_pct);
	if (nb < 2 || nc < 2) {
		o->low_confidence = true;
		o->verdict = !beyond ? CMP_OK : worse ? CMP_REGRESSED : CMP_IMPROVED;
		return;
	}
	cmp_welch_test_run_noise(a, nb, b, nc, alpha, run_noise_pct / 100.0, &w);
	o->p = w.p;
	o->t = w.t;
	o->df = w.df;
	if (o->base.mean != 0.0) {
		o->ci_lo_pct = cmp_pct(w.lo, o->base.mean);
		o->ci_hi_pct = cmp_pct(w.hi, o->base.mean);
	}
	if (!beyond)
		o->verdict = CMP_OK;
	else if (w.p < alpha)
		o->verdict = worse ? CMP_REGRESSED : CMP_IMPROVED;
	else
		o->verdict = CMP_NOISE;
}

void cmp_judge_runs(const double *base, int kb, const double *cur, int kc, bool higher_better,
		    double tol_pct, double alpha, double run_noise_pct, struct cmp_outcome *o)
{
	double r = run_noise_pct / 100.0;

	double a[CMP_MAX_REPS], b[CMP_MAX_REPS], va, vb, df, q;
	bool beyond, worse;

	memset(o, 0, sizeof(*o));
	o->p = o->t = o->df = o->ci_lo_pct = o->ci_hi_pct = o->change_pct = NAN;
	o->by_runs = true;
	kb = cmp_finite(base, kb < CMP_MAX_REPS ? kb : CMP_MAX_REPS, a);
	kc = cmp_finite(cur, kc < CMP_MAX_REPS ? kc : CMP_MAX_REPS, b);
	o->base = stat_summarise(a, kb);
	o->cur = stat_summarise(b, kc);
	if (kb == 0 || kc == 0) {
		o->verdict = CMP_MISSING;
		return;
	}
	o->change_pct = cmp_pct(o->cur.mean - o->base.mean, o->base.mean);
	worse = higher_better ? o->change_pct < 0 : o->change_pct > 0;
	beyond = cmp_beyond(o->change_pct, tol_pct);
	if (kb < 2 && kc < 2) {
		o->low_confidence = true;
		o->verdict = !beyond ? CMP_OK : worse ? CMP_REGRESSED : CMP_IMPROVED;
		return;
	}
	/* The variance of one run's mean: measured, but never below the assumed run noise (runs
	 * made one after another can understate how far runs drift apart over days). A part
	 * taken from the measured spread carries its degrees of freedom; a floored part is
	 * assumed and carries none (Welch-Satterthwaite, as for the repetitions' noise term). */
	double rb = r * o->base.mean * r * o->base.mean, rc = r * o->cur.mean * r * o->cur.mean;
	double sb2 = o->base.stddev * o->base.stddev, sc2 = o->cur.stddev * o->cur.stddev, den;
	if (kb >= 2 && kc >= 2) {
		va = fmax(sb2, rb) / kb;
		vb = fmax(sc2, rc) / kc;
		double ea = sb2 >= rb ? va : 0, eb = sc2 >= rc ? vb : 0;
		den = ea * ea / (kb - 1) + eb * eb / (kc - 1);
	} else {
		/* One run against several: it varies as they do, relative to its mean; both parts
		 * come from the one spread measured on the side with several runs. */
		const struct summary_stat *many = kb >= 2 ? &o->base : &o->cur;
		const struct summary_stat *one = kb >= 2 ? &o->cur : &o->base;
		double rel = many->mean != 0 ? one->mean / many->mean : 1.0;
		double s2 = many->stddev * many->stddev;
		double r_many = kb >= 2 ? rb : rc, r_one = kb >= 2 ? rc : rb;
		double v_many = fmax(s2, r_many) / many->n, v_one = fmax(s2 * rel * rel, r_one);
		double est = (s2 >= r_many ? v_many : 0) + (s2 * rel * rel >= r_one ? v_one : 0);
		va = kb >= 2 ? v_many : v_one;
		vb = kb >= 2 ? v_one : v_many;
		den = est * est / (many->n - 1);
	}
	df = den > 0 ? (va + vb) * (va + vb) / den : 1e9;
	if (df > 1e9)
		df = 1e9;
	double diff = o->cur.mean - o->base.mean, se = sqrt(va + vb);
	o->df = df;
	if (se == 0.0) {
		o->p = diff == 0.0 ? 1.0 : 0.0;
		o->t = NAN;
		q = 0;
	} else {
		o->t = diff / se;
		o->p = cmp_t_two_sided(o->t, df);
		q = cmp_t_quantile(1.0 - alpha / 2.0, df) * se;
	}
	if (o->base.mean != 0.0) {
		o->ci_lo_pct = cmp_pct(diff - q, o->base.mean);
		o->ci_hi_pct = cmp_pct(diff + q, o->base.mean);
	}
	if (!beyond)
		o->verdict = CMP_OK;
	else if (o->p < alpha)
		o->verdict = worse ? CMP_REGRESSED : CMP_IMPROVED;
	else
		o->verdict = CMP_NOISE;
}
