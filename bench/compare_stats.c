/* Statistics of `feedbench compare`: Welch's t-test, and the verdict of one metric through the
 * decision module (bench/decide.c, which also holds Student's t distribution).
 */
#include "compare.h"

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

static double cmp_pct(double delta, double base)
{
	if (base != 0.0)
		return delta / fabs(base) * 100.0;
	if (delta == 0.0)
		return 0.0;
	return delta > 0 ? INFINITY : -INFINITY;
}

void cmp_judge(const double *base, int nb, const double *cur, int nc, const struct decide_spec *s,
	       struct cmp_outcome *o)
{
	static const enum cmp_verdict of[] = {
	    [DECIDE_SAME] = CMP_OK,	    [DECIDE_BETTER] = CMP_IMPROVED,
	    [DECIDE_WORSE] = CMP_REGRESSED, [DECIDE_INCONCLUSIVE] = CMP_INCONCLUSIVE,
	    [DECIDE_MISSING] = CMP_MISSING,
	};
	struct decide_result *d = &o->d;

	memset(o, 0, sizeof(*o));
	if (decide_compare(base, nb, cur, nc, s, d) < 0) {
		o->verdict = CMP_MISSING; /* the options are checked before: not reached */
		return;
	}
	o->base = d->a;
	o->cur = d->b;
	o->by_runs = s->runs;
	o->points = s->scale == DECIDE_POINTS;
	o->low_confidence = d->borrowed && d->outcome != DECIDE_MISSING;
	o->verdict = of[d->outcome];
	o->p = d->p;
	o->t = d->t;
	o->df = d->df;
	o->change_pct =
	    d->outcome == DECIDE_MISSING ? NAN : cmp_pct(d->b.mean - d->a.mean, d->a.mean);
	/* The interval as % of the baseline's mean, whatever unit decided. */
	double k = o->points && d->a.mean != 0 ? 100.0 / fabs(d->a.mean) : 1.0;
	o->ci_lo_pct = d->ci_lo * k;
	o->ci_hi_pct = d->ci_hi * k;
}
