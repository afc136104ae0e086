/* One decision rule for every "is B different from A?" that feedbench prints: compare's
 * verdicts, history's trends, search's trials and the sweep's recommendation. Pure functions
 * (no MPI, no I/O), tested in tests/unit/test_decide.c; the statistics are explained in
 * docs/compare.md ("How a metric is judged").
 *
 * Inputs: two samples, a (the reference: the baseline, the best point of a sweep) and b (the
 * candidate), one value per repetition or per run, n >= 1 each (NAN values are left out); the
 * direction of goodness; whether changes are relative (% of a's mean) or in percentage
 * points (AU, itself a percentage); the noise floor (the smallest change that matters) and the
 * run-to-run noise (how far a run's mean moves from one run to the next beyond what its own
 * repetitions show).
 *
 * The test is Welch's unequal-variance t-test, two-sided, of mean(b) - mean(a):
 *  - values are repetitions of one run (spec.runs false): the variance of each side's mean is
 *    s^2/n + (r x mean)^2, the second term the assumed run-to-run noise (exact: it adds no
 *    uncertainty to the degrees of freedom, Welch-Satterthwaite over the estimated parts);
 *  - values are run means (spec.runs true): the spread of the runs holds the run-to-run noise;
 *    the variance of one value is the measured s^2, but at least (r x mean)^2;
 *  - a side with one value borrows the other side's spread relative to its mean (a prediction
 *    test with the other side's degrees of freedom); with one value on both sides only the
 *    assumed run-to-run noise is left (a z-test), and without it there is no spread to test
 *    against (inconclusive).
 * A t-test rather than a bootstrap or permutation test: with 3 to 5 values a side a
 * permutation test's smallest p-value is 0.1 (3 + 3) or 0.008 (5 + 5) whatever the effect, and
 * a bootstrap interval of three values has ten distinct resamples; the t-test uses the spread,
 * which is the information small samples have, and its size at n = 3 checked against SciPy.
 *
 * Outcomes:
 *  - DECIDE_BETTER / DECIDE_WORSE: p < alpha and the change is beyond the floor;
 *  - DECIDE_SAME, "no reliable difference": the change is within the floor; mde says how
 *    large a change this comparison would have caught;
 *  - DECIDE_INCONCLUSIVE: the change is beyond the floor but not significant (or there is no
 *    spread to test against): the interval allows changes up to the far end of ci, and
 *    reps_needed says how many values a side would tell a change of this size with the
 *    stated power (-1: more repetitions cannot, the run-to-run noise alone is too large:
 *    compare several runs, which measure it);
 *    The same when the difference is significant but the sides are not equally steady: their
 *    relative spreads (coefficients of variation) differ by an F-test at p < 0.01. Identical
 *    runs of a busy shared machine differ that way (one run's repetitions spread by 40 %
 *    against 2-5 % for the others, its mean 40 % lower): a shift that comes with a tenfold
 *    spread is the machine, not the change under test, and the answer is to run it again;
 *  - DECIDE_MISSING: a side has no value.
 *
 * Minimum detectable effect: the smallest true change that this comparison reports as
 * better/worse with probability `power` (0.8) at level alpha (0.05): both conditions must
 * hold, so mde = max(floor, t_{1-alpha/2} x se) + t_{power} x se (t quantiles with the test's
 * degrees of freedom, se the standard error of the change).
 */
#ifndef FEEDBENCH_DECIDE_H
#define FEEDBENCH_DECIDE_H

#include <stdbool.h>
#include <stddef.h>

#include "stats.h"

#define DECIDE_ALPHA	    0.05
#define DECIDE_POWER	    0.8
#define DECIDE_MAX_VALUES   1000 /* values a side; more are left out */
#define DECIDE_MAX_REPS	    1000 /* the largest reps_needed computed */
#define DECIDE_STEADY_ALPHA 0.01 /* level of the steadiness F-test */
#define DECIDE_STEADY_CV    0.02 /* relative spreads below 2 % count as 2 % in it */

enum decide_scale {
	DECIDE_RELATIVE, /* change in % of mean(a); floor and mde in % */
	DECIDE_POINTS	 /* change in the values' own unit (percentage points for AU) */
};

enum decide_outcome {
	DECIDE_SAME,	     /* no reliable difference */
	DECIDE_BETTER,	     /* b reliably better than a */
	DECIDE_WORSE,	     /* b reliably worse than a */
	DECIDE_INCONCLUSIVE, /* beyond the floor, not significant: more values needed */
	DECIDE_MISSING	     /* a side has no value */
};

struct decide_spec {
	bool higher_better;
	enum decide_scale scale;
	double floor;	  /* smallest change that matters, in the change's unit (>= 0) */
	double run_noise; /* run-to-run noise: stddev of a run's mean, % of the mean (>= 0) */
	bool runs;	  /* values are run means (noise measured; run_noise a floor) */
	double alpha;	  /* 0: DECIDE_ALPHA */
	double power;	  /* 0: DECIDE_POWER */
};

struct decide_result {
	enum decide_outcome outcome;
	struct summary_stat a, b; /* over the values used (NAN left out) */
	double change;		  /* mean(b) - mean(a): % of |mean(a)| or points; +-INF from 0 */
	double ci_lo, ci_hi;	  /* (1 - alpha) confidence interval of the change */
	double p, t, df;	  /* NAN where not computed; df 1e9: a normal tail */
	double se;		  /* standard error of the change, in its unit */
	double mde;		  /* minimum detectable effect (above), in the change's unit */
	double mde_limit;	  /* mde with unlimited values a side (run-to-run noise only) */
	int reps_needed;	  /* inconclusive: values a side to tell this change; -1: cannot */
	double steady_p;	  /* F-test of equal relative spreads (1: not tested) */
	bool borrowed;		  /* a side's spread was borrowed or assumed (one value) */
	char why[384];		  /* one line: test, change, p, CI, MDE, outcome */
};

/* Judges b against a. Returns 0, or -EINVAL for a spec out of range (negative floor or
 * noise, alpha or power outside (0, 1)). */
int decide_compare(const double *a, int na, const double *b, int nb, const struct decide_spec *s,
		   struct decide_result *r);

/* Judges a sample (its summary: n, mean, stddev) against a fixed value ref, a threshold:
 * better/worse when its mean is reliably above/below ref by more than the floor, the same
 * rules otherwise (ref is exact: only the sample's spread and run-to-run noise count). Returns
 * 0 or -EINVAL. */
int decide_against(const struct summary_stat *x, double ref, const struct decide_spec *s,
		   struct decide_result *r);

/* True when x is reliably worse than ref (decide_compare(ref, x).outcome == DECIDE_WORSE):
 * the sweep's plateau rule keeps the smallest knob value not reliably worse than the best. */
bool decide_reliably_worse(const double *x, int nx, const double *ref, int nref,
			   const struct decide_spec *s);

/* "better", "worse", "no reliable difference", "inconclusive", "n/a" */
const char *decide_outcome_name(enum decide_outcome o);

/* Student's t: the two-sided tail P(|T| >= |t|) with df degrees of freedom (df > 0), and the
 * quantile t with P(T <= t) = p (0.5 <= p < 1). Regularised incomplete beta I_x(a, b). */
double decide_t_two_sided(double t, double df);
double decide_t_quantile(double p, double df);
double decide_betainc(double a, double b, double x);

#endif
