/* The decision module (bench/decide.c): the outcome of every rule in decide.h on samples whose
 * answer is known, the numbers behind it (p, CI, MDE, repetitions needed) against values worked
 * by hand or with SciPy, and the two properties a gate is bought for, measured by simulation:
 * identical samples are called different at most alpha of the time, and a change of the stated
 * minimum detectable effect is found with the stated power.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bench/decide.h"
#include "bench/rng.h"

#define assert_close(a, b, tol)                                                                    \
	do {                                                                                       \
		double a_ = (a), b_ = (b);                                                         \
		if (!(fabs(a_ - b_) <= (tol)))                                                     \
			fail_msg("%s = %.10g, expected %.10g (+- %g)", #a, a_, b_, (double)(tol)); \
	} while (0)

static const struct decide_spec rel10 = {.higher_better = true, .floor = 10};

static struct decide_result judge(const double *a, int na, const double *b, int nb,
				  struct decide_spec s)
{
	struct decide_result r;

	assert_int_equal(decide_compare(a, na, b, nb, &s, &r), 0);
	return r;
}

/* n values with mean m and sample standard deviation sd exactly. */
static void make_sample(double *v, int n, double m, double sd)
{
	double mean = 0, ss = 0;

	for (int i = 0; i < n; i++)
		v[i] = (double)i;
	for (int i = 0; i < n; i++)
		mean += v[i] / n;
	for (int i = 0; i < n; i++)
		ss += (v[i] - mean) * (v[i] - mean);
	for (int i = 0; i < n; i++)
		v[i] = m + (n > 1 ? sd * (v[i] - mean) / sqrt(ss / (n - 1)) : 0);
}

static void test_outcomes(void **state)
{
	static const struct {
		const char *what;
		double a[5];
		int na;
		double b[5];
		int nb;
		bool higher_better;
		double run_noise;
		enum decide_outcome want;
	} cases[] = {
	    {"20 % slower, tight", {100, 101, 99}, 3, {80, 81, 79}, 3, true, 0, DECIDE_WORSE},
	    {"20 % slower, noisy",
	     {100, 140, 60},
	     3,
	     {80, 120, 40},
	     3,
	     true,
	     0,
	     DECIDE_INCONCLUSIVE},
	    {"5 % slower, real but below the floor",
	     {100, 100.1, 99.9},
	     3,
	     {95, 95.1, 94.9},
	     3,
	     true,
	     0,
	     DECIDE_SAME},
	    {"20 % faster", {100, 101, 99}, 3, {120, 121, 119}, 3, true, 0, DECIDE_BETTER},
	    {"latency up 30 %", {1.0, 1.01, 0.99}, 3, {1.3, 1.31, 1.29}, 3, false, 0, DECIDE_WORSE},
	    {"latency down 30 %",
	     {1.0, 1.01, 0.99},
	     3,
	     {0.7, 0.71, 0.69},
	     3,
	     false,
	     0,
	     DECIDE_BETTER},
	    {"one value a side, no noise assumed", {100}, 1, {80}, 1, true, 0, DECIDE_INCONCLUSIVE},
	    {"one value a side within the floor", {100}, 1, {95}, 1, true, 0, DECIDE_SAME},
	    {"one value a side, noise assumed 5 %", {100}, 1, {80}, 1, true, 5, DECIDE_WORSE},
	    {"one value against three", {100, 101, 99}, 3, {85}, 1, true, 0, DECIDE_WORSE},
	    {"both zero", {0, 0, 0}, 3, {0, 0, 0}, 3, true, 0, DECIDE_SAME},
	    {"constant sides differ", {10, 10, 10}, 3, {8, 8, 8}, 3, true, 0, DECIDE_WORSE},
	    {"not recorded", {NAN, NAN}, 2, {1, 2}, 2, true, 0, DECIDE_MISSING},
	    {"exactly the floor (bucket edges)",
	     {40.96e-6},
	     1,
	     {45.056e-6},
	     1,
	     false,
	     0,
	     DECIDE_SAME},
	    {"20 % slower, run noise 10 %",
	     {100, 101, 99},
	     3,
	     {80, 81, 79},
	     3,
	     true,
	     10,
	     DECIDE_INCONCLUSIVE},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct decide_spec s = rel10;
		s.higher_better = cases[i].higher_better;
		s.run_noise = cases[i].run_noise;
		struct decide_result r = judge(cases[i].a, cases[i].na, cases[i].b, cases[i].nb, s);
		if (r.outcome != cases[i].want)
			fail_msg("%s: %s, want %s (%s)", cases[i].what,
				 decide_outcome_name(r.outcome), decide_outcome_name(cases[i].want),
				 r.why);
		assert_non_null(strstr(r.why, decide_outcome_name(cases[i].want)));
	}
}

/* The numbers: Welch with SciPy's values (ttest_ind(equal_var=False)), the run-noise term, the
 * interval, and the MDE of a z-test worked by hand. */
static void test_numbers(void **state)
{
	double wide[] = {100, 110, 90}, wide15[] = {85, 95, 75}, b[] = {100, 101, 99},
	       c[] = {80, 81, 79}, one[] = {100}, same[] = {100};
	struct decide_spec s = rel10;
	struct decide_result r;

	(void)state;
	/* t = -1.837, df = 4, p = 0.1400; CI -15 +- 2.776 x 8.165 */
	r = judge(wide, 3, wide15, 3, s);
	assert_close(r.change, -15, 1e-9);
	assert_close(r.t, -1.8371173071, 1e-8);
	assert_close(r.df, 4, 1e-9);
	assert_close(r.p, 0.1400, 5e-4);
	assert_close(r.ci_lo, -37.67, 0.01);
	assert_close(r.ci_hi, 7.67, 0.01);
	assert_int_equal(r.outcome, DECIDE_INCONCLUSIVE);
	assert_non_null(strstr(r.why, "allows changes up to -37.7 %"));
	/* The repetitions needed: at reps_needed a side (same spread) a change of 15 % has an
	 * MDE at or below 15 %, one fewer does not. */
	assert_true(r.reps_needed > 3 && r.reps_needed < 100);
	{
		double x[100], y[100];
		int n = r.reps_needed;
		make_sample(x, n, 100, 10);
		make_sample(y, n, 85, 10);
		struct decide_result at = judge(x, n, y, n, s);
		make_sample(x, n - 1, 100, 10);
		make_sample(y, n - 1, 85, 10);
		struct decide_result below = judge(x, n - 1, y, n - 1, s);
		assert_true(at.mde <= 15 + 1e-9);
		assert_true(below.mde > 15);
		char want[64];
		snprintf(want, sizeof(want), "run %d more repetitions", n - 3);
		assert_non_null(strstr(r.why, want));
	}
	/* Run-to-run noise 5 %: se^2 = 1/3 + 1/3 + 5^2 + 4^2, df huge, p = 0.00195. */
	s.run_noise = 5;
	r = judge(b, 3, c, 3, s);
	assert_close(r.se, sqrt(2.0 / 3.0 + 41.0), 1e-9);
	assert_close(r.p, 0.001948, 2e-5);
	assert_int_equal(r.outcome, DECIDE_WORSE);
	/* One value a side, noise 5 %: a z-test, se = 5 sqrt 2; MDE = max(10, 1.95996 se) +
	 * 0.84162 se = 19.81 %; with unlimited repetitions the same (the noise is per run). */
	r = judge(one, 1, same, 1, s);
	assert_int_equal(r.outcome, DECIDE_SAME);
	assert_close(r.mde, (1.959964 + 0.841621) * 5 * sqrt(2.0), 1e-3);
	assert_close(r.mde_limit, r.mde, 1e-3);
	/* -15 % there: not significant at 10 % noise, and repetitions cannot help. */
	s.run_noise = 10;
	double c85[] = {85};
	r = judge(one, 1, c85, 1, s);
	assert_int_equal(r.outcome, DECIDE_INCONCLUSIVE);
	assert_int_equal(r.reps_needed, -1);
	assert_non_null(strstr(r.why, "cannot tell it"));
	/* Without a floor and noise the MDE is (t_0.975 + t_0.8) se with df = 4. */
	s.run_noise = 0;
	s.floor = 0;
	r = judge(wide, 3, wide15, 3, s);
	assert_close(r.mde, (2.776445 + 0.940965) * 8.164966, 2e-3);
	/* A bad spec is refused. */
	s.floor = -1;
	assert_int_equal(decide_compare(b, 3, c, 3, &s, &r), -EINVAL);
	/* NAN values are left out, never counted as zero. */
	double holes[] = {100, NAN, 102};
	r = judge(holes, 3, b, 3, rel10);
	assert_int_equal(r.a.n, 2);
	assert_close(r.a.mean, 101, 1e-12);
}

/* AU is a percentage: its change is in points. 6-8 % AU moving by 1.5 points is a 20 %
 * relative change, which a relative floor of 10 % calls worse; in points it is within 5. */
static void test_points(void **state)
{
	double a[] = {7.0, 7.5, 6.5, 7.2, 6.8}, b[] = {5.6, 6.0, 5.2, 5.8, 5.4};
	struct decide_spec s = {.higher_better = true, .floor = 10};
	struct decide_result r;

	(void)state;
	r = judge(a, 5, b, 5, s);
	assert_int_equal(r.outcome, DECIDE_WORSE);
	s.scale = DECIDE_POINTS;
	s.floor = 5;
	r = judge(a, 5, b, 5, s);
	assert_int_equal(r.outcome, DECIDE_SAME);
	assert_close(r.change, -1.4, 1e-9);
	assert_non_null(strstr(r.why, "points"));
	double hi[] = {90, 91, 89}, lo[] = {80, 81, 79};
	r = judge(hi, 3, lo, 3, s);
	assert_int_equal(r.outcome, DECIDE_WORSE);
	assert_close(r.change, -10, 1e-9);
}

/* Run means: the measured spread, the run noise a floor under it; one run against several is a
 * prediction test (t = (x - m) / (s sqrt(1/k + (x/m)^2)), df = k - 1). */
static void test_runs(void **state)
{
	double base[] = {100, 104, 98, 101, 97}, one[] = {80};
	struct decide_spec s = {.higher_better = true, .floor = 10, .runs = true};
	struct decide_result r;

	(void)state;
	r = judge(base, 5, one, 1, s);
	assert_int_equal(r.outcome, DECIDE_WORSE);
	assert_close(r.t, -7.9681907289, 1e-8);
	assert_close(r.p, 0.00134410693696, 1e-7);
	assert_close(r.df, 4, 1e-9);
	assert_close(r.ci_lo, -26.9688219062, 1e-6);
	/* a 10 % floor under a 2.9 % spread: t = -20 / (10 sqrt(1/5 + 0.64)), normal tail */
	s.run_noise = 10;
	r = judge(base, 5, one, 1, s);
	assert_close(r.t, -20.0 / sqrt(100.0 / 5 + 64.0), 1e-9);
	assert_close(r.p, 0.0290, 1e-3);
	/* with many runs the MDE falls to the floor's reach */
	assert_true(r.mde_limit <= 10 + 1e-9);
}

/* Identical runs of a busy machine (measured: 5 repetitions of configs/ci.ini, MiB/s): a run
 * whose repetitions spread by 40 % and whose mean is 40 % lower is unsteady, not worse. */
static void test_unsteady(void **state)
{
	double calm[] = {218, 225, 220, 228, 231}, busy[] = {106, 78, 216, 162, 92},
	       slow[] = {175, 180, 176, 183, 185};
	struct decide_spec s = rel10;
	struct decide_result r;

	(void)state;
	s.run_noise = 5;
	r = judge(calm, 5, busy, 5, s);
	assert_true(r.p < 0.05);
	assert_true(r.steady_p < 0.01);
	assert_int_equal(r.outcome, DECIDE_INCONCLUSIVE);
	assert_non_null(strstr(r.why, "unsteady"));
	/* the same shift with the same spread is worse */
	r = judge(calm, 5, slow, 5, s);
	assert_true(r.steady_p > 0.5);
	assert_int_equal(r.outcome, DECIDE_WORSE);
	/* constant quantised values against a slight spread are steady */
	double q1[] = {2.36, 2.36, 2.36}, q2[] = {2.36, 2.40, 2.45};
	r = judge(q1, 3, q2, 3, s);
	assert_true(r.steady_p >= 0.01);
}

/* A sample against a fixed threshold (search: AU against au_threshold), in points. */
static void test_against(void **state)
{
	struct decide_spec s = {.higher_better = true, .scale = DECIDE_POINTS};
	struct summary_stat below = {3, 88, 0.5, 87.5, 88.5}, near = {3, 89.8, 2, 88, 92},
			    above = {3, 95, 1, 94, 96}, one = {1, 80, 0, 80, 80};
	struct decide_result r;

	(void)state;
	assert_int_equal(decide_against(&below, 90, &s, &r), 0);
	assert_int_equal(r.outcome, DECIDE_WORSE);
	/* t = -2 / (0.5 / sqrt 3) = -6.93, df 2: p = 0.0202 */
	assert_close(r.t, -2 / (0.5 / sqrt(3.0)), 1e-9);
	assert_close(r.p, 0.0202, 1e-3);
	assert_int_equal(decide_against(&near, 90, &s, &r), 0);
	assert_int_equal(r.outcome, DECIDE_INCONCLUSIVE);
	assert_int_equal(decide_against(&above, 90, &s, &r), 0);
	assert_int_equal(r.outcome, DECIDE_BETTER);
	assert_int_equal(decide_against(&one, 90, &s, &r), 0); /* no spread to test */
	assert_int_equal(r.outcome, DECIDE_INCONCLUSIVE);
}

static void test_reliably_worse(void **state)
{
	double best[] = {100, 101, 99}, near[] = {98, 99, 97}, far[] = {80, 81, 79};
	struct decide_spec s = rel10;

	(void)state;
	assert_true(decide_reliably_worse(far, 3, best, 3, &s));
	assert_false(decide_reliably_worse(near, 3, best, 3, &s));
	assert_false(decide_reliably_worse(best, 3, far, 3, &s)); /* better, not worse */
	assert_false(decide_reliably_worse(best, 3, best, 3, &s));
	s.higher_better = false; /* for a latency, 80 is the better one */
	assert_false(decide_reliably_worse(far, 3, best, 3, &s));
	assert_true(decide_reliably_worse(best, 3, far, 3, &s));
}

/* Simulated: normal samples of 5 + 5 values. Identical distributions are called different in
 * about alpha of the comparisons; a true change of the MDE is called worse with about the
 * stated power. */
static void test_error_rates(void **state)
{
	const int trials = 2000, n = 5;
	uint64_t rng = 12345;
	struct decide_spec s = {.higher_better = true, .floor = 0};
	double x[5], y[5], sd = 5, mde;
	int alarms = 0, found = 0;

	(void)state;
	make_sample(x, n, 100, sd);
	make_sample(y, n, 100, sd);
	mde = judge(x, n, y, n, s).mde; /* in % of 100: the same in the values' unit */
	for (int t = 0; t < trials; t++) {
		for (int i = 0; i < n; i++) {
			x[i] = 100 + sd * rng_normal(&rng);
			y[i] = 100 + sd * rng_normal(&rng);
		}
		enum decide_outcome o = judge(x, n, y, n, s).outcome;
		alarms += o == DECIDE_WORSE || o == DECIDE_BETTER;
		for (int i = 0; i < n; i++)
			y[i] -= mde;
		found += judge(x, n, y, n, s).outcome == DECIDE_WORSE;
	}
	printf("identical: %d of %d called different (alpha 0.05); MDE %.2f %%: found %d of %d "
	       "(power 0.8)\n",
	       alarms, trials, mde, found, trials);
	assert_true(alarms >= 0.035 * trials && alarms <= 0.065 * trials);
	assert_true(found >= 0.74 * trials && found <= 0.86 * trials);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_outcomes),	   cmocka_unit_test(test_numbers),
	    cmocka_unit_test(test_points),	   cmocka_unit_test(test_runs),
	    cmocka_unit_test(test_reliably_worse), cmocka_unit_test(test_unsteady),
	    cmocka_unit_test(test_against),	   cmocka_unit_test(test_error_rates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
