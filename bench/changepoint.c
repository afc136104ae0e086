/* Change points by E-divisive means (see changepoint.h). */
#include "changepoint.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

/* The best split of x[0..n): the t that maximises, over every right end k of the left part's
 * comparison (E-divisive: a change that is undone later, a regression fixed, is found too),
 * q(t, k) = t (k - t) / k x (mean(x[0..t)) - mean(x[t..k)))^2. Returns t (0 when n < 2
 * CP_MIN_SEG) and q in *qbest. */
static int cp_best(const double *x, int n, double *qbest)
{
	double pre[CP_MAX_SERIES + 1];
	int best = 0;

	*qbest = 0;
	pre[0] = 0;
	for (int i = 0; i < n; i++)
		pre[i + 1] = pre[i] + x[i];
	for (int k = 2 * CP_MIN_SEG; k <= n; k++)
		for (int t = CP_MIN_SEG; t <= k - CP_MIN_SEG; t++) {
			double d = pre[t] / t - (pre[k] - pre[t]) / (k - t);
			double q = (double)t * (k - t) / k * d * d;
			if (q > *qbest) {
				*qbest = q;
				best = t;
			}
		}
	return best;
}

struct cp_ctx {
	double alpha;
	int perms;
	uint64_t rng;
	double *work;
	struct cp_change *out;
	int max, count;
};

/* Permutation p-value of the best split of x[0..n) with statistic q. */
static double cp_pvalue(struct cp_ctx *c, const double *x, int n, double q)
{
	int hits = 0;

	memcpy(c->work, x, (size_t)n * sizeof(*x));
	for (int p = 0; p < c->perms; p++) {
		double qp;
		for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
			int j = (int)rng_below(&c->rng, (uint64_t)i + 1);
			double t = c->work[i];
			c->work[i] = c->work[j];
			c->work[j] = t;
		}
		cp_best(c->work, n, &qp);
		hits += qp >= q;
	}
	return (1.0 + hits) / (1.0 + c->perms);
}

static void cp_segment(struct cp_ctx *c, const double *x, int off, int n)
{
	double q;
	int t = cp_best(x + off, n, &q);

	if (t == 0 || q <= 0)
		return;
	double p = cp_pvalue(c, x + off, n, q);
	if (p >= c->alpha)
		return;
	cp_segment(c, x, off, t);
	if (c->count < c->max) {
		double a = 0, b = 0;
		for (int i = 0; i < t; i++)
			a += x[off + i];
		for (int i = t; i < n; i++)
			b += x[off + i];
		c->out[c->count++] = (struct cp_change){off + t, a / t, b / (n - t), p};
	}
	cp_segment(c, x, off + t, n - t);
}

int cp_detect(const double *x, int n, double alpha, int permutations, uint64_t seed,
	      struct cp_change *out, int max)
{
	struct cp_ctx c = {alpha > 0 ? alpha : CP_ALPHA,
			   permutations > 0 ? permutations : CP_PERMUTATIONS,
			   seed,
			   NULL,
			   out,
			   max,
			   0};

	if (n > CP_MAX_SERIES)
		n = CP_MAX_SERIES;
	if (n < 2 * CP_MIN_SEG || max <= 0)
		return 0;
	c.work = malloc((size_t)n * sizeof(*c.work));
	if (!c.work)
		return -ENOMEM;
	cp_segment(&c, x, 0, n);
	free(c.work);
	return c.count;
}
