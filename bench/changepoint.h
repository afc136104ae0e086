/* Change points in a series of results (history --changes): where the mean of a metric shifted
 * from one run to the next and stayed, told from run-to-run noise. Pure functions, tested in
 * tests/unit/test_changepoint.c.
 *
 * E-divisive means (Matteson and James 2014, with the exponent alpha = 2 that makes the energy
 * statistic a difference of means; the method of MongoDB's and Hunter's CI performance
 * analysis): the series is split where q(t, k) = t (k - t) / k x (mean(x[0..t)) - mean(x[t..k)))^2
 * is largest over t and the right end k; the split is kept when a permutation test says so (the
 * same maximum over shuffled copies of the segment reached it in fewer than alpha of the
 * permutations); then each side is searched the same way (binary segmentation). A segment is at
 * least CP_MIN_SEG runs, so one outlier is not a change. The permutation test makes no assumption
 * about the noise's distribution, and its false-positive rate per series is alpha.
 */
#ifndef FEEDBENCH_CHANGEPOINT_H
#define FEEDBENCH_CHANGEPOINT_H

#include <stdint.h>

#define CP_MIN_SEG	3
#define CP_ALPHA	0.005 /* per series: at most 1 false change point in 200 series */
#define CP_PERMUTATIONS 999
#define CP_MAX_SERIES	4096 /* values a series holds; more are left out */

struct cp_change {
	int index;	      /* first value after the change (0-based) */
	double before, after; /* means of the segments either side */
	double p;	      /* permutation p-value of the split */
};

/* Change points of x[0..n) in index order; returns how many (at most max) or -ENOMEM.
 * alpha <= 0: CP_ALPHA; permutations <= 0: CP_PERMUTATIONS; seed makes it repeatable. */
int cp_detect(const double *x, int n, double alpha, int permutations, uint64_t seed,
	      struct cp_change *out, int max);

#endif
