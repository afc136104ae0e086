/* Statistics (bench/stats.h): the log-linear latency histogram and the repetition summary.
 *
 * The histogram is the source of every percentile feedbench prints, so: buckets are contiguous
 * and cover 0 .. 2^64 ns, the relative error is at most 1/16, merging is exact (a histogram
 * merged from pieces equals the one built from all values, whatever the split: threads and
 * ranks), quantiles never exceed the exact maximum and are 0 when nothing was recorded.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench/stats.h"

/* Each value lands in a bucket whose upper edge is above it and within 1/16 of it. */
static void test_bucket_edges(void **state)
{
	static const uint64_t values[] = {0,
					  1,
					  15,
					  16,
					  17,
					  31,
					  32,
					  33,
					  1000,
					  4095,
					  4096,
					  4097,
					  850000,
					  1000000,
					  999999999,
					  1ull << 40,
					  (1ull << 40) + 1,
					  UINT64_MAX / 2,
					  UINT64_MAX - 1};

	(void)state;
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		uint64_t v = values[i];
		unsigned b = hist_bucket_of(v);
		if (b >= HIST_BUCKETS)
			fail_msg("value %llu maps to bucket %u of %u", (unsigned long long)v, b,
				 HIST_BUCKETS);
		uint64_t up = hist_bucket_upper_ns(b);
		uint64_t lo = b ? hist_bucket_upper_ns(b - 1) : 0;
		if (!(v < up || up == 0) || v < lo)
			fail_msg("value %llu in bucket %u [%llu, %llu)", (unsigned long long)v, b,
				 (unsigned long long)lo, (unsigned long long)up);
		if (v >= 16 && (double)(up - v) > (double)v / 16.0 + 1)
			fail_msg("value %llu: upper edge %llu is more than 1/16 above",
				 (unsigned long long)v, (unsigned long long)up);
	}
}

/* Buckets tile the line: each one starts where the previous ends, and the index grows with the
 * value. */
static void test_buckets_contiguous(void **state)
{
	(void)state;
	for (unsigned b = 1; b < 60 * HIST_SUB; b++) {
		uint64_t lo = hist_bucket_upper_ns(b - 1), up = hist_bucket_upper_ns(b);
		assert_true(up > lo);
		assert_int_equal(hist_bucket_of(lo), b);
		assert_int_equal(hist_bucket_of(up - 1), b);
	}
}

static void test_empty(void **state)
{
	struct hist h;

	(void)state;
	hist_reset(&h);
	assert_int_equal(h.count, 0);
	assert_true(hist_quantile(&h, 0.5) == 0);
	assert_true(hist_quantile(&h, 0.99) == 0);
	assert_true(hist_quantile(&h, 1) == 0);
}

/* Quantiles: within 1/16 above the exact order statistic, never above the maximum. */
static void test_quantiles(void **state)
{
	struct hist h;
	const int n = 1000;
	static const double qs[] = {0.0, 0.01, 0.5, 0.9, 0.99, 0.999, 1.0};

	(void)state;
	hist_reset(&h);
	for (int i = 1; i <= n; i++)
		hist_add(&h, (uint64_t)i * 1000); /* 1 us .. 1 ms */
	assert_int_equal(h.count, n);
	assert_int_equal(h.max_ns, 1000000);
	assert_int_equal(h.sum_ns, 1000ull * n * (n + 1) / 2);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		int rank = (int)ceil(qs[i] * n);
		if (rank < 1)
			rank = 1;
		double exact = rank * 1000e-9, got = hist_quantile(&h, qs[i]);
		if (got < exact || got > exact * (1 + 1.0 / 16) + 1e-9)
			fail_msg("q %.3f: got %.9f s, exact %.9f s", qs[i], got, exact);
		assert_true(got <= 1000000e-9);
	}
	assert_true(hist_quantile(&h, 1.0) == 1e-3); /* capped at the exact maximum */
}

/* One value: every quantile is that value (its bucket edge capped at the maximum). */
static void test_single_value(void **state)
{
	struct hist h;

	(void)state;
	hist_reset(&h);
	hist_add(&h, 123456789);
	assert_true(hist_quantile(&h, 0) == 0.123456789);
	assert_true(hist_quantile(&h, 0.5) == 0.123456789);
	assert_true(hist_quantile(&h, 1) == 0.123456789);
}

/* Merging pieces (threads, ranks) equals recording everything in one histogram. */
static void test_merge_exact(void **state)
{
	struct hist *all = calloc(1, sizeof(*all)), *parts = calloc(7, sizeof(*parts));
	struct hist *merged = calloc(1, sizeof(*merged));
	uint64_t x = 12345;

	(void)state;
	assert_non_null(all);
	assert_non_null(parts);
	assert_non_null(merged);
	hist_reset(all);
	hist_reset(merged);
	for (int p = 0; p < 7; p++)
		hist_reset(&parts[p]);
	for (int i = 0; i < 50000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t v = (x >> 20) % 100000000; /* up to 0.1 s */
		hist_add(all, v);
		hist_add(&parts[(x >> 8) % 7], v);
	}
	for (int p = 0; p < 7; p++)
		hist_merge(merged, &parts[p]);
	assert_int_equal(merged->count, all->count);
	assert_int_equal(merged->sum_ns, all->sum_ns);
	assert_int_equal(merged->max_ns, all->max_ns);
	assert_memory_equal(merged->bucket, all->bucket, sizeof(all->bucket));
	for (double q = 0; q <= 1.0; q += 0.01)
		assert_true(hist_quantile(merged, q) == hist_quantile(all, q));
	/* Merging an empty histogram changes nothing. */
	hist_reset(&parts[0]);
	hist_merge(merged, &parts[0]);
	assert_memory_equal(merged, all, sizeof(*all));
	free(all);
	free(parts);
	free(merged);
}

static void test_io_stats_merge(void **state)
{
	struct io_stats a, b;

	(void)state;
	io_stats_reset(&a);
	io_stats_reset(&b);
	a.bytes = 100;
	a.ops = 2;
	a.samples = 1;
	a.opens = 1;
	a.open_ns = 5;
	a.retries = 1;
	hist_add(&a.latency, 10);
	b.bytes = 4096;
	b.ops = 3;
	b.samples = 3;
	b.retries = 2;
	hist_add(&b.latency, 2000);
	io_stats_merge(&a, &b);
	assert_int_equal(a.bytes, 4196);
	assert_int_equal(a.ops, 5);
	assert_int_equal(a.samples, 4);
	assert_int_equal(a.opens, 1);
	assert_int_equal(a.open_ns, 5);
	assert_int_equal(a.retries, 3);
	assert_int_equal(a.latency.count, 2);
	assert_int_equal(a.latency.max_ns, 2000);
}

struct stat_case {
	double v[6];
	int n;
	double mean, stddev, min, max;
};

/* Sample standard deviation (n - 1), as repetitions are reported; n == 0 is all zeros. */
static void test_summarise(void **state)
{
	static const struct stat_case cases[] = {
	    {{0}, 0, 0, 0, 0, 0},
	    {{5}, 1, 5, 0, 5, 5},
	    {{1, 3}, 2, 2, 1.4142135623730951, 1, 3},
	    {{2, 4, 4, 4, 5, 5}, 6, 4, 1.0954451150103321, 2, 5},
	    {{-1, 1}, 2, 0, 1.4142135623730951, -1, 1},
	    {{7, 7, 7}, 3, 7, 0, 7, 7},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct stat_case *c = &cases[i];
		struct summary_stat s = stat_summarise(c->v, c->n);
		if (s.n != c->n || fabs(s.mean - c->mean) > 1e-12 ||
		    fabs(s.stddev - c->stddev) > 1e-12 || s.min != c->min || s.max != c->max)
			fail_msg("case %zu: n %d mean %g sd %g min %g max %g", i, s.n, s.mean,
				 s.stddev, s.min, s.max);
		assert_false(isnan(s.mean) || isnan(s.stddev));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bucket_edges),   cmocka_unit_test(test_buckets_contiguous),
	    cmocka_unit_test(test_empty),	   cmocka_unit_test(test_quantiles),
	    cmocka_unit_test(test_single_value),   cmocka_unit_test(test_merge_exact),
	    cmocka_unit_test(test_io_stats_merge), cmocka_unit_test(test_summarise),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
