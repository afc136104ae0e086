/* Sample headers, payloads and verification (formats/sample.h).
 *
 * CRC32C against the RFC 3720 B.4 vectors, then what verification must catch:
 * a flipped byte (named by its offset), a sample from another seed or another dataset, a sample
 * from the wrong place, a truncated read, and a read that never filled its buffer (IOR's
 * lesson: buffers are poisoned with SAMPLE_POISON before a verified read).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/sample.h"

struct crc_case {
	const char *name;
	unsigned char data[32];
	size_t len;
	uint32_t want;
};

static void test_crc32c_vectors(void **state)
{
	struct crc_case cases[5] = {
	    {"123456789", "123456789", 9, 0xe3069283u}, {"32 zero bytes", {0}, 32, 0x8a9136aau},
	    {"32 x 0xff", {0}, 32, 0x62a8ab43u},	{"bytes 0..31", {0}, 32, 0x46dd794eu},
	    {"bytes 31..0", {0}, 32, 0x113fdb5cu},
	};

	(void)state;
	memset(cases[2].data, 0xff, 32);
	for (int i = 0; i < 32; i++) {
		cases[3].data[i] = (unsigned char)i;
		cases[4].data[i] = (unsigned char)(31 - i);
	}
	for (size_t i = 0; i < 5; i++) {
		uint32_t got = crc32c(cases[i].data, cases[i].len);
		if (got != cases[i].want)
			fail_msg("crc32c(%s) = 0x%08x, want 0x%08x", cases[i].name, got,
				 cases[i].want);
	}
	assert_int_equal(crc32c("", 0), 0);
}

/* Continuing a CRC over pieces gives the CRC of the whole, for every split point. */
static void test_crc32c_extend(void **state)
{
	const char *text = "123456789";

	(void)state;
	for (size_t cut = 0; cut <= 9; cut++) {
		uint32_t c = crc32c(text, cut);
		c = crc32c_extend(c, text + cut, 9 - cut);
		assert_int_equal(c, 0xe3069283u);
	}
}

#define SEED	42
#define DSID	0x0123456789abcdefull
#define FILE_IX 3
#define INDEX	17

/* Fills a sample and checks it; returns the verdict and the reason. */
static bool check(const unsigned char *buf, size_t len, uint64_t seed, uint64_t id, uint32_t file,
		  uint64_t index, char *why, size_t whylen, uint64_t *off)
{
	why[0] = '\0';
	*off = 12345;
	return sample_check(buf, len, seed, id, file, index, why, whylen, off);
}

static void test_fill_then_check(void **state)
{
	static const size_t lens[] = {SAMPLE_MIN_BYTES, 65, 71, 100, 4096, 4097, 262144};
	char why[512];
	uint64_t off;

	(void)state;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		unsigned char *buf = malloc(lens[i]);
		struct sample_header h;

		assert_non_null(buf);
		sample_fill(buf, lens[i], SEED, DSID, FILE_IX, INDEX);
		if (!check(buf, lens[i], SEED, DSID, FILE_IX, INDEX, why, sizeof(why), &off))
			fail_msg("a freshly filled %zu-byte sample fails: %s", lens[i], why);
		sample_header_decode(buf, &h);
		assert_int_equal(h.magic, SAMPLE_MAGIC);
		assert_int_equal(h.seed, SEED);
		assert_int_equal(h.dataset_id, DSID);
		assert_int_equal(h.file, FILE_IX);
		assert_int_equal(h.index, INDEX);
		assert_int_equal(h.length, lens[i]);
		assert_int_equal(h.crc,
				 crc32c(buf + SAMPLE_HEADER_BYTES, lens[i] - SAMPLE_HEADER_BYTES));
		/* The header layout is a file-format contract (sample.h). */
		assert_memory_equal(buf, "FBS1", 4);
		free(buf);
	}
}

/* The same (seed, file, index) always gives the same bytes; any change gives others. */
static void test_fill_deterministic(void **state)
{
	unsigned char a[1000], b[1000];

	(void)state;
	sample_fill(a, sizeof(a), SEED, DSID, FILE_IX, INDEX);
	sample_fill(b, sizeof(b), SEED, DSID, FILE_IX, INDEX);
	assert_memory_equal(a, b, sizeof(a));
	sample_fill(b, sizeof(b), SEED + 1, DSID, FILE_IX, INDEX);
	assert_memory_not_equal(a + SAMPLE_HEADER_BYTES, b + SAMPLE_HEADER_BYTES,
				sizeof(a) - SAMPLE_HEADER_BYTES);
	sample_fill(b, sizeof(b), SEED, DSID, FILE_IX + 1, INDEX);
	assert_memory_not_equal(a + SAMPLE_HEADER_BYTES, b + SAMPLE_HEADER_BYTES,
				sizeof(a) - SAMPLE_HEADER_BYTES);
	sample_fill(b, sizeof(b), SEED, DSID, FILE_IX, INDEX + 1);
	assert_memory_not_equal(a + SAMPLE_HEADER_BYTES, b + SAMPLE_HEADER_BYTES,
				sizeof(a) - SAMPLE_HEADER_BYTES);
}

/* A flipped payload byte anywhere is caught and named by its offset in the sample. */
static void test_flipped_byte(void **state)
{
	const size_t len = 4099;
	static const size_t where[] = {SAMPLE_HEADER_BYTES, 41, 1000, 4095, 4096, 4098};
	unsigned char *buf = malloc(len);
	char why[512], want[64];
	uint64_t off;

	(void)state;
	assert_non_null(buf);
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		sample_fill(buf, len, SEED, DSID, FILE_IX, INDEX);
		unsigned char orig = buf[where[i]];
		buf[where[i]] ^= 0x01;
		if (check(buf, len, SEED, DSID, FILE_IX, INDEX, why, sizeof(why), &off))
			fail_msg("a flipped byte at %zu passes verification", where[i]);
		assert_int_equal(off, where[i]);
		snprintf(want, sizeof(want), "offset %zu", where[i]);
		if (!strstr(why, want) || !strstr(why, "CRC32C"))
			fail_msg("flip at %zu: reason '%s' does not say '%s'", where[i], why, want);
		snprintf(want, sizeof(want), "expected 0x%02x, actual 0x%02x", orig, orig ^ 1);
		if (!strstr(why, want))
			fail_msg("flip at %zu: reason '%s' does not say '%s'", where[i], why, want);
	}
	free(buf);
}

/* A flipped header byte is caught too (the CRC covers the payload; the header is compared). */
static void test_flipped_header(void **state)
{
	unsigned char buf[256];
	char why[512];
	uint64_t off;

	(void)state;
	for (size_t b = 0; b < SAMPLE_HEADER_BYTES; b++) {
		sample_fill(buf, sizeof(buf), SEED, DSID, FILE_IX, INDEX);
		buf[b] ^= 0x80;
		if (check(buf, sizeof(buf), SEED, DSID, FILE_IX, INDEX, why, sizeof(why), &off))
			fail_msg("a flipped header byte %zu passes verification", b);
		assert_true(why[0] != '\0');
		if (b >= 4 && b < 8)
			continue; /* the CRC field: test_flipped_crc_field */
		assert_true(off < SAMPLE_HEADER_BYTES);
	}
}

/* A flipped bit in the stored CRC must be named at the CRC field (offsets 4-7), not at the
 * first payload byte: the payload is intact. */
static void test_flipped_crc_field(void **state)
{
	unsigned char buf[256];
	char why[512];
	uint64_t off;

	(void)state;
	sample_fill(buf, sizeof(buf), SEED, DSID, FILE_IX, INDEX);
	buf[5] ^= 0x10;
	assert_false(check(buf, sizeof(buf), SEED, DSID, FILE_IX, INDEX, why, sizeof(why), &off));
	assert_non_null(strstr(why, "CRC32C"));
	if (off < 4 || off >= 8)
		fail_msg("a flipped CRC field is reported at sample offset %llu, not 4..7: %s",
			 (unsigned long long)off, why);
}

static void test_other_seed(void **state)
{
	unsigned char buf[512];
	char why[512];
	uint64_t off;

	(void)state;
	sample_fill(buf, sizeof(buf), SEED + 1, DSID, FILE_IX, INDEX);
	assert_false(check(buf, sizeof(buf), SEED, DSID, FILE_IX, INDEX, why, sizeof(why), &off));
	assert_int_equal(off, 8);
	assert_non_null(strstr(why, "seed 43"));
	assert_non_null(strstr(why, "expected seed 42"));
	assert_non_null(strstr(why, "regenerate"));
}

static void test_other_dataset(void **state)
{
	unsigned char buf[512];
	char why[512];
	uint64_t off;

	(void)state;
	sample_fill(buf, sizeof(buf), SEED, DSID ^ 1, FILE_IX, INDEX);
	assert_false(check(buf, sizeof(buf), SEED, DSID, FILE_IX, INDEX, why, sizeof(why), &off));
	assert_int_equal(off, 16);
	assert_non_null(strstr(why, "0123456789abcdef"));
	assert_non_null(strstr(why, "0123456789abcdee"));
	assert_non_null(strstr(why, "another config"));
}

/* A sample from the wrong place (file or index) is not accepted for another one. */
static void test_wrong_place(void **state)
{
	unsigned char buf[512];
	char why[512];
	uint64_t off;

	(void)state;
	sample_fill(buf, sizeof(buf), SEED, DSID, FILE_IX, INDEX + 1);
	assert_false(check(buf, sizeof(buf), SEED, DSID, FILE_IX, INDEX, why, sizeof(why), &off));
	assert_non_null(strstr(why, "expected file 3 sample 17, actual file 3 sample 18"));
	sample_fill(buf, sizeof(buf), SEED, DSID, FILE_IX + 1, INDEX);
	assert_false(check(buf, sizeof(buf), SEED, DSID, FILE_IX, INDEX, why, sizeof(why), &off));
	assert_non_null(strstr(why, "actual file 4"));
}

/* A read that returned fewer bytes than the sample holds. */
static void test_short_length(void **state)
{
	unsigned char buf[512];
	char why[512];
	uint64_t off;

	(void)state;
	sample_fill(buf, sizeof(buf), SEED, DSID, FILE_IX, INDEX);
	assert_false(check(buf, 300, SEED, DSID, FILE_IX, INDEX, why, sizeof(why), &off));
	assert_non_null(strstr(why, "512"));
	assert_non_null(strstr(why, "300"));
	assert_false(check(buf, 10, SEED, DSID, FILE_IX, INDEX, why, sizeof(why), &off));
	assert_non_null(strstr(why, "shorter than"));
}

/* A poisoned buffer that the read never touched fails and says why. */
static void test_poisoned_buffer(void **state)
{
	unsigned char buf[4096];
	char why[512];
	uint64_t off;

	(void)state;
	memset(buf, SAMPLE_POISON, sizeof(buf));
	assert_false(check(buf, sizeof(buf), SEED, DSID, FILE_IX, INDEX, why, sizeof(why), &off));
	assert_int_equal(off, 0);
	assert_non_null(strstr(why, "unfilled"));

	/* A read that filled only the header (the rest still poison) is caught by the CRC. */
	sample_fill(buf, sizeof(buf), SEED, DSID, FILE_IX, INDEX);
	memset(buf + SAMPLE_HEADER_BYTES, SAMPLE_POISON, sizeof(buf) - SAMPLE_HEADER_BYTES);
	assert_false(check(buf, sizeof(buf), SEED, DSID, FILE_IX, INDEX, why, sizeof(why), &off));
	assert_int_equal(off, SAMPLE_HEADER_BYTES);

	/* A read that stopped half-way. */
	sample_fill(buf, sizeof(buf), SEED, DSID, FILE_IX, INDEX);
	memset(buf + 2048, SAMPLE_POISON, 2048);
	assert_false(check(buf, sizeof(buf), SEED, DSID, FILE_IX, INDEX, why, sizeof(why), &off));
	assert_true(off >= 2048 && off < 2056); /* first byte that differs from the payload */
}

/* Sizes: fixed sizes are exact; with a stdev they are deterministic, clamped, and spread. */
static void test_sample_size(void **state)
{
	double sum = 0, sq = 0;
	const int n = 20000;

	(void)state;
	assert_int_equal(sample_size(1, 4096, 0, 0, 0), 4096);
	assert_int_equal(sample_size(1, 10, 0, 0, 0), SAMPLE_MIN_BYTES);
	for (int i = 0; i < n; i++) {
		uint64_t s = sample_size(7, 100000, 10000, (uint32_t)(i % 13), (uint64_t)i);
		assert_int_equal(s, sample_size(7, 100000, 10000, (uint32_t)(i % 13), (uint64_t)i));
		assert_true(s >= SAMPLE_MIN_BYTES);
		sum += (double)s;
		sq += (double)s * (double)s;
	}
	double mean = sum / n, sd = __builtin_sqrt(sq / n - mean * mean);
	/* 20000 draws: the mean is within 5 standard errors (350 bytes), stdev within 5 %. */
	assert_true(mean > 100000 - 350 && mean < 100000 + 350);
	assert_true(sd > 9500 && sd < 10500);
	/* A huge stdev is clamped, never below the header. */
	for (int i = 0; i < 1000; i++)
		assert_true(sample_size(3, 100, 1000000, 0, (uint64_t)i) >= SAMPLE_MIN_BYTES);
	/* Another seed gives other sizes. */
	int same = 0;
	for (int i = 0; i < 100; i++)
		same += sample_size(1, 100000, 10000, 0, (uint64_t)i) ==
			sample_size(2, 100000, 10000, 0, (uint64_t)i);
	assert_true(same < 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_crc32c_vectors),    cmocka_unit_test(test_crc32c_extend),
	    cmocka_unit_test(test_fill_then_check),   cmocka_unit_test(test_fill_deterministic),
	    cmocka_unit_test(test_flipped_byte),      cmocka_unit_test(test_flipped_header),
	    cmocka_unit_test(test_flipped_crc_field), cmocka_unit_test(test_other_seed),
	    cmocka_unit_test(test_other_dataset),     cmocka_unit_test(test_wrong_place),
	    cmocka_unit_test(test_short_length),      cmocka_unit_test(test_poisoned_buffer),
	    cmocka_unit_test(test_sample_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
