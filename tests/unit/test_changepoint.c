/* Change points (bench/changepoint.c): synthetic series with known change points are found
 * within one run of the truth; noisy series without one give at most 1 false change point in
 * 100 series. The figures are printed (docs/compare.md quotes them).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "bench/changepoint.h"
#include "bench/rng.h"

#define SERIES 100
#define LEN    30

/* One change: 30 runs, noise sd 1 (5 % of a mean of 20), a shift of 3 sd (15 %) at a random
 * run in 8..22. */
static void test_known_change(void **state)
{
	uint64_t rng = 7;
	int found = 0, extra = 0;

	(void)state;
	for (int s = 0; s < SERIES; s++) {
		double x[LEN];
		int at = 8 + (int)rng_below(&rng, 15);
		struct cp_change c[8];
		for (int i = 0; i < LEN; i++)
			x[i] = 20 + rng_normal(&rng) - (i >= at ? 3 : 0);
		int n = cp_detect(x, LEN, 0, 0, (uint64_t)s, c, 8);
		assert_true(n >= 0);
		bool hit = false;
		for (int k = 0; k < n; k++) {
			if (abs(c[k].index - at) <= 1 && !hit) {
				hit = true;
				assert_true(c[k].after < c[k].before);
				assert_true(c[k].p < CP_ALPHA);
			} else {
				extra++;
			}
		}
		found += hit;
	}
	printf("a 3-sd shift in %d series of %d runs: found within one run in %d, %d other change "
	       "points\n",
	       SERIES, LEN, found, extra);
	assert_true(found >= 95);
	assert_true(extra <= 5); /* measured: 4 */
}

/* Two changes, a rise and a fall back (a regression fixed later). */
static void test_two_changes(void **state)
{
	uint64_t rng = 11;
	double x[40];
	struct cp_change c[8];

	(void)state;
	for (int i = 0; i < 40; i++)
		x[i] = 100 + 2 * rng_normal(&rng) + (i >= 12 && i < 27 ? 10 : 0);
	int n = cp_detect(x, 40, 0, 0, 1, c, 8);
	assert_int_equal(n, 2);
	assert_true(abs(c[0].index - 12) <= 1 && c[0].after > c[0].before);
	assert_true(abs(c[1].index - 27) <= 1 && c[1].after < c[1].before);
}

/* No change: noise only, normal and heavy-tailed (an outlier now and then). */
static void test_no_change(void **state)
{
	uint64_t rng = 3;
	int fp_normal = 0, fp_tails = 0;

	(void)state;
	for (int s = 0; s < SERIES; s++) {
		double x[LEN], y[LEN];
		struct cp_change c[8];
		for (int i = 0; i < LEN; i++) {
			x[i] = 20 + rng_normal(&rng);
			double u = rng_normal(&rng);
			y[i] = 20 + (rng_below(&rng, 10) == 0 ? 5 * u : u);
		}
		fp_normal += cp_detect(x, LEN, 0, 0, (uint64_t)s, c, 8) > 0;
		fp_tails += cp_detect(y, LEN, 0, 0, (uint64_t)s, c, 8) > 0;
	}
	printf("no change: %d of %d normal series and %d of %d heavy-tailed series with a change "
	       "point\n",
	       fp_normal, SERIES, fp_tails, SERIES);
	assert_true(fp_normal <= 1);
	assert_true(fp_tails <= 1);
}

static void test_short(void **state)
{
	double x[] = {1, 2, 100, 100, 100};
	struct cp_change c[2];

	(void)state;
	assert_int_equal(cp_detect(x, 5, 0, 0, 1, c, 2), 0); /* shorter than two segments */
	assert_int_equal(cp_detect(x, 0, 0, 0, 1, c, 2), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_known_change),
	    cmocka_unit_test(test_two_changes),
	    cmocka_unit_test(test_no_change),
	    cmocka_unit_test(test_short),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
