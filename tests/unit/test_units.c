/* The value parsers behind every config key: sizes, durations, integers, booleans.
 *
 * Each table row is an input as a user would type it and either the value it must become or a
 * fragment of the reason the parser must give. What users hit (docs/failures.md 2): trailing
 * garbage ("4x"), bad units, negative sizes, numbers beyond 64 bits; none of them may ever
 * wrap around or read as 0.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bench/config.h"

#define KIB 1024ull
#define MIB (1024ull * KIB)
#define GIB (1024ull * MIB)
#define TIB (1024ull * GIB)

struct size_case {
	const char *text;
	uint64_t want;	 /* when why == NULL */
	const char *why; /* fragment of the error, NULL when the text is valid */
};

static const struct size_case size_cases[] = {
    {"0", 0, NULL},
    {"4096", 4096, NULL},
    {"4k", 4 * KIB, NULL},
    {"4K", 4 * KIB, NULL},
    {"4KiB", 4 * KIB, NULL},
    {"4kib", 4 * KIB, NULL},
    {"256KiB", 256 * KIB, NULL},
    {"1m", MIB, NULL},
    {"1MiB", MIB, NULL},
    {"1.5GiB", 3 * GIB / 2, NULL},
    {"1.5g", 3 * GIB / 2, NULL},
    {"2TiB", 2 * TIB, NULL},
    {"1KB", 1000, NULL},
    {"1MB", 1000000, NULL},
    {"1GB", 1000000000ull, NULL},
    {"1TB", 1000000000000ull, NULL},
    {"1.5MB", 1500000, NULL},
    {"100B", 100, NULL},
    {"100b", 100, NULL},
    {" 64 KiB ", 64 * KIB, NULL},
    {"+8k", 8 * KIB, NULL},
    {"0.5k", 512, NULL},
    {"16EiB", 0, "bad size unit"},
    {"15TiB", 15 * TIB, NULL},
    {"18446744073709551616", 0, "does not fit in 64 bits"},
    {"99999999999999999999999", 0, "does not fit in 64 bits"},
    {"17179869184GiB", 0, "does not fit in 64 bits"},
    {"4x", 0, "bad size unit"},
    {"4 k b", 0, "bad size unit"},
    {"4kk", 0, "bad size unit"},
    {"4 KiBs", 0, "bad size unit"},
    {"12 apples", 0, "bad size unit"},
    {"-1", 0, "cannot be negative"},
    {"-4k", 0, "cannot be negative"},
    {"", 0, "expected a size"},
    {"   ", 0, "expected a size"},
    {"k", 0, "expected a size"},
    {"abc", 0, "expected a size"},
    {".", 0, "expected a size"},
    {"0.3", 0, "not a whole number of bytes"},
    {"1.0001k", 0, "not a whole number of bytes"},
    {"0x10", 0, "bad size unit"},
    {"1e6", 0, "bad size unit"},
};

static void test_sizes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(size_cases) / sizeof(size_cases[0]); i++) {
		const struct size_case *c = &size_cases[i];
		uint64_t got = 0xdeadbeef;
		char why[256] = "";
		int rc = cfg_parse_size(c->text, &got, why, sizeof(why));

		if (c->why == NULL) {
			if (rc != 0 || got != c->want)
				fail_msg("size '%s': rc %d, got %llu (%s), want %llu", c->text, rc,
					 (unsigned long long)got, why, (unsigned long long)c->want);
		} else {
			if (rc != -FB_ECONFIG)
				fail_msg("size '%s' was accepted as %llu; want an error with '%s'",
					 c->text, (unsigned long long)got, c->why);
			if (!strstr(why, c->why))
				fail_msg("size '%s': reason '%s' does not say '%s'", c->text, why,
					 c->why);
			if (got != 0xdeadbeef)
				fail_msg("size '%s': a refused value still wrote %llu", c->text,
					 (unsigned long long)got);
		}
	}
}

struct duration_case {
	const char *text;
	double want;
	const char *why;
};

static const struct duration_case duration_cases[] = {
    {"0", 0, NULL},
    {"1", 1, NULL},
    {"0.5s", 0.5, NULL},
    {"0.5", 0.5, NULL},
    {"2ms", 0.002, NULL},
    {"850us", 850e-6, NULL},
    {"850µs", 850e-6, NULL},
    {"100ns", 100e-9, NULL},
    {"1m", 60, NULL},
    {"2min", 120, NULL},
    {"1h", 3600, NULL},
    {"3 sec", 3, NULL},
    {" 10 ms ", 0.010, NULL},
    {"2MS", 0.002, NULL},
    {"0.636", 0.636, NULL},
    {"4x", 0, "bad duration unit"},
    {"5 parsecs", 0, "bad duration unit"},
    {"2msec", 0, "bad duration unit"},
    {"-1s", 0, "cannot be negative"},
    {"-0.5", 0, "cannot be negative"},
    {"", 0, "expected a duration"},
    {"nan", 0, "expected a duration"},
    {"NaN", 0, "expected a duration"},
    {"inf", 0, "expected a duration"},
    {"s", 0, "expected a duration"},
    {"1e3", 0, "bad duration unit"},
};

static void test_durations(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(duration_cases) / sizeof(duration_cases[0]); i++) {
		const struct duration_case *c = &duration_cases[i];
		double got = -42;
		char why[256] = "";
		int rc = cfg_parse_duration(c->text, &got, why, sizeof(why));

		if (c->why == NULL) {
			if (rc != 0 || fabs(got - c->want) > 1e-12 * (1 + c->want))
				fail_msg("duration '%s': rc %d, got %.12g (%s), want %.12g",
					 c->text, rc, got, why, c->want);
		} else {
			if (rc != -FB_ECONFIG)
				fail_msg(
				    "duration '%s' was accepted as %g; want an error with '%s'",
				    c->text, got, c->why);
			if (!strstr(why, c->why))
				fail_msg("duration '%s': reason '%s' does not say '%s'", c->text,
					 why, c->why);
			if (got != -42)
				fail_msg("duration '%s': a refused value still wrote %g", c->text,
					 got);
		}
	}
}

struct int_case {
	const char *text;
	int64_t want;
	const char *why;
};

static const struct int_case int_cases[] = {
    {"0", 0, NULL},
    {"42", 42, NULL},
    {"-1", -1, NULL},
    {" 7 ", 7, NULL},
    {"+3", 3, NULL},
    {"9223372036854775807", INT64_MAX, NULL},
    {"-9223372036854775808", INT64_MIN, NULL},
    {"9223372036854775808", 0, "does not fit in 64 bits"},
    {"-9223372036854775809", 0, "does not fit in 64 bits"},
    {"99999999999999999999999999", 0, "does not fit in 64 bits"},
    {"4x", 0, "expected an integer"},
    {"1.5", 0, "expected an integer"},
    {"1e3", 0, "expected an integer"},
    {"four", 0, "expected an integer"},
    {"0x10", 0, "expected an integer"},
    {"3 4", 0, "expected an integer"},
    {"", 0, "expected an integer"},
    {"  ", 0, "expected an integer"},
    {"-", 0, "expected an integer"},
};

static void test_ints(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(int_cases) / sizeof(int_cases[0]); i++) {
		const struct int_case *c = &int_cases[i];
		int64_t got = 0x5a5a;
		char why[256] = "";
		int rc = cfg_parse_int(c->text, &got, why, sizeof(why));

		if (c->why == NULL) {
			if (rc != 0 || got != c->want)
				fail_msg("integer '%s': rc %d, got %lld (%s), want %lld", c->text,
					 rc, (long long)got, why, (long long)c->want);
		} else {
			if (rc != -FB_ECONFIG)
				fail_msg(
				    "integer '%s' was accepted as %lld; want an error with '%s'",
				    c->text, (long long)got, c->why);
			if (!strstr(why, c->why))
				fail_msg("integer '%s': reason '%s' does not say '%s'", c->text,
					 why, c->why);
			if (got != 0x5a5a)
				fail_msg("integer '%s': a refused value still wrote %lld", c->text,
					 (long long)got);
		}
	}
}

struct bool_case {
	const char *text;
	int want; /* 0, 1, or -1 for an error */
};

static const struct bool_case bool_cases[] = {
    {"true", 1},  {"TRUE", 1}, {"yes", 1},    {"Yes", 1},      {"on", 1},  {"1", 1}, {"false", 0},
    {"False", 0}, {"no", 0},   {"off", 0},    {"OFF", 0},      {"0", 0},   {"", -1}, {"2", -1},
    {"tru", -1},  {"y", -1},   {"truee", -1}, {"enabled", -1}, {"-1", -1},
};

static void test_bools(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bool_cases) / sizeof(bool_cases[0]); i++) {
		const struct bool_case *c = &bool_cases[i];
		bool got = false;
		char why[256] = "";
		int rc = cfg_parse_bool(c->text, &got, why, sizeof(why));

		if (c->want < 0) {
			if (rc != -FB_ECONFIG)
				fail_msg("bool '%s' was accepted as %d", c->text, got);
			if (!strstr(why, "expected true or false"))
				fail_msg("bool '%s': reason '%s'", c->text, why);
		} else if (rc != 0 || got != (c->want == 1)) {
			fail_msg("bool '%s': rc %d got %d want %d (%s)", c->text, rc, got, c->want,
				 why);
		}
	}
}

/* A reason never overflows its buffer, even when the input is long. */
static void test_reason_truncated(void **state)
{
	char text[600], why[32];
	uint64_t v;

	(void)state;
	memset(text, 'z', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	memset(why, 0x7f, sizeof(why));
	assert_int_equal(cfg_parse_size(text, &v, why, 16), -FB_ECONFIG);
	assert_true(strlen(why) < 16);
	assert_int_equal((unsigned char)why[16], 0x7f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sizes),
	    cmocka_unit_test(test_durations),
	    cmocka_unit_test(test_ints),
	    cmocka_unit_test(test_bools),
	    cmocka_unit_test(test_reason_truncated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
