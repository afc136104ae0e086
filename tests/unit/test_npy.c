/* NPY headers (formats/npy.h): what feedbench writes matches numpy's layout (numpy's format: a
 * (3, 4) '<f4' array has header length 118 and data at offset 128), and the headers numpy
 * writes -- versions 1 to 3, any dtype, structured dtypes, Python 2 longs -- parse to the
 * right item size and shape; malformed ones are refused with the offset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/npy.h"

/* A header as numpy writes it: magic, version, length, dict padded to 64 with '\n'. */
static size_t make_npy(char *buf, unsigned major, const char *dict)
{
	size_t pre = major == 1 ? 10 : 12, n = strlen(dict);
	size_t total = (pre + n + 1 + 63) / 64 * 64;

	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (char)major;
	buf[7] = 0;
	for (size_t i = 0; i < pre - 8; i++)
		buf[8 + i] = (char)(((total - pre) >> (8 * i)) & 0xff);
	memcpy(buf + pre, dict, n);
	memset(buf + pre + n, ' ', total - pre - n - 1);
	buf[total - 1] = '\n';
	return total;
}

static void test_build_matches_numpy(void **state)
{
	char buf[256], why[256];
	uint64_t shape[2] = {3, 4}, one = 16236;
	struct npy_header h;
	size_t n;

	(void)state;
	n = npy_build(buf, sizeof(buf), "<f4", false, shape, 2);
	assert_int_equal(n, 128);
	assert_int_equal((unsigned char)buf[8] | (unsigned char)buf[9] << 8, 118);
	assert_memory_equal(buf + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }",
			    59);
	assert_int_equal(buf[127], '\n');
	assert_int_equal(npy_parse(buf, n, 0, &h, why, sizeof(why)), 0);
	assert_int_equal(h.data_off, 128);
	assert_int_equal(h.nbytes, 48);

	n = npy_build(buf, sizeof(buf), "|u1", false, &one, 1);
	assert_int_equal(n % 64, 0);
	assert_int_equal(npy_parse(buf, n, 0, &h, why, sizeof(why)), 0);
	assert_int_equal(h.major, 1);
	assert_int_equal(h.ndim, 1);
	assert_int_equal(h.shape[0], 16236);
	assert_int_equal(h.nbytes, 16236);
	assert_string_equal(h.descr, "|u1");
	assert_null(memchr(buf + 10, '\0', n - 10)); /* text after the preamble */
}

static void test_parse_numpy_headers(void **state)
{
	static const struct {
		unsigned major;
		const char *dict;
		uint64_t itemsize, nelem;
		int ndim;
		bool fortran;
		const char *shape;
	} v[] = {
	    {1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", 8, 6, 2, true,
	     "(2, 3)"},
	    {1, "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }", 1, 5, 1, false,
	     "(5,)"},
	    {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4, 1, 0, false, "()"},
	    {2, "{'descr': '<U10', 'fortran_order': False, 'shape': (7,), }", 40, 7, 1, false,
	     "(7,)"},
	    {3, "{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (4,), }", 8, 4, 1, false,
	     "(4,)"},
	    {1, "{'shape': (5L, 2L), 'fortran_order': False, 'descr': '>i2'}", 2, 10, 2, false,
	     "(5, 2)"},
	    {1,
	     "{'descr': [('a', '<i4'), ('b', '<f8', (2,)), (('t', 'c'), '|u1')], "
	     "'fortran_order': False, 'shape': (3,), }",
	     21, 3, 1, false, "(3,)"},
	    {1, "{\"descr\": \"|b1\", \"fortran_order\": False, \"shape\": (0, 9)}", 1, 0, 2, false,
	     "(0, 9)"},
	};
	char buf[512], why[256], shape[64];
	struct npy_header h;

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t n = make_npy(buf, v[i].major, v[i].dict);

		assert_int_equal(npy_parse(buf, n, 0, &h, why, sizeof(why)), 0);
		assert_int_equal(h.major, v[i].major);
		assert_int_equal(h.data_off, n);
		assert_int_equal(h.itemsize, v[i].itemsize);
		assert_int_equal(h.nelem, v[i].nelem);
		assert_int_equal(h.nbytes, v[i].itemsize * v[i].nelem);
		assert_int_equal(h.ndim, v[i].ndim);
		assert_int_equal(h.fortran, v[i].fortran);
		npy_shape_str(&h, shape, sizeof(shape));
		assert_string_equal(shape, v[i].shape);
	}
}

static void test_refused(void **state)
{
	static const struct {
		const char *dict;
		const char *why;
	} v[] = {
	    {"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", "object arrays"},
	    {"{'descr': '<f4', 'fortran_order': False, }", "no 'shape' at offset 1010"},
	    {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }",
	     "fortran_order is not True or False at offset 1044"},
	    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }",
	     "expected a non-negative integer"},
	    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", "unexpected key"},
	    {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }",
	     "overflows"},
	    {"{'descr': '<f4", "unterminated string"},
	};
	char buf[512], why[256];
	struct npy_header h;

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t n = make_npy(buf, 1, v[i].dict);

		assert_int_equal(npy_parse(buf, n, 1000, &h, why, sizeof(why)), -1);
		if (!strstr(why, v[i].why))
			fail_msg("'%s': got '%s', expected '%s'", v[i].dict, why, v[i].why);
	}
	make_npy(buf, 1, "{}");
	buf[1] = 'X';
	assert_int_equal(npy_preamble(buf, 64, 0, &h, why, sizeof(why)), -1);
	assert_string_equal(why, "no NPY magic at offset 0");
	make_npy(buf, 1, "{}");
	buf[6] = 4;
	assert_int_equal(npy_preamble(buf, 64, 0, &h, why, sizeof(why)), -1);
	assert_string_equal(why, "unsupported version 4.0 at offset 6");
	/* a header that claims more bytes than were read */
	assert_int_equal(npy_parse(buf, 5, 0, &h, why, sizeof(why)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_build_matches_numpy),
	    cmocka_unit_test(test_parse_numpy_headers),
	    cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
