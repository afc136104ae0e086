/* TFRecord framing and tf.train.Example coding against the published vectors:
 * CRC32C (RFC 3720 B.4), the masked CRC, the record for "hello", and TensorFlow's encoding of
 * {"len": int64_list[4096]}.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "errors.h"
#include "example.pb-c.h"
#include "formats/sample.h"
#include "formats/tfrecord.h"

static void test_crc32c_vectors(void **state)
{
	static const struct {
		uint8_t fill; /* 0..31 or 31..0 when 0xfe / 0xfd */
		uint32_t crc;
	} v[] = {{0x00, 0x8a9136aa}, {0xff, 0x62a8ab43}, {0xfe, 0x46dd794e}, {0xfd, 0x113fdb5c}};
	uint8_t buf[32];

	(void)state;
	assert_int_equal(crc32c("123456789", 9), 0xe3069283);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		for (int k = 0; k < 32; k++)
			buf[k] = v[i].fill == 0xfe   ? (uint8_t)k
				 : v[i].fill == 0xfd ? (uint8_t)(31 - k)
						     : v[i].fill;
		assert_int_equal(crc32c(buf, sizeof(buf)), v[i].crc);
	}
}

static void test_mask(void **state)
{
	(void)state;
	/* ((crc >> 15) | (crc << 17)) + 0xa282ead8, worked by hand for two values. */
	assert_int_equal(tfrecord_mask(0), 0xa282ead8);
	assert_int_equal(tfrecord_mask(0x00008000), 0xa282ead9);
	assert_int_equal(tfrecord_mask(0x80000000), 0xa282ead8u + 0x00010000u);
}

static void test_hello_record(void **state)
{
	static const uint8_t want[21] = {0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
					 0x00, 0xea, 0xb2, 0x04, 0x3e, 0x68, 0x65,
					 0x6c, 0x6c, 0x6f, 0xbb, 0x1f, 0x1c, 0x19};
	uint8_t rec[21];
	uint64_t len = 0;

	(void)state;
	tfrecord_put_header(rec, 5);
	memcpy(rec + TFRECORD_HEADER_BYTES, "hello", 5);
	tfrecord_put_footer(rec + TFRECORD_HEADER_BYTES + 5, "hello", 5);
	assert_memory_equal(rec, want, sizeof(want));
	assert_int_equal(tfrecord_check_record(rec, sizeof(rec), &len), 0);
	assert_int_equal(len, 5);
	assert_int_equal(tfrecord_check_header(rec, &len), 0);
}

/* Every single-byte flip of the frame is caught: length, its CRC, data, data CRC. */
static void test_corruption_detected(void **state)
{
	uint8_t rec[21], bad[21];
	uint64_t len;

	(void)state;
	tfrecord_put_header(rec, 5);
	memcpy(rec + TFRECORD_HEADER_BYTES, "hello", 5);
	tfrecord_put_footer(rec + TFRECORD_HEADER_BYTES + 5, "hello", 5);
	for (size_t i = 0; i < sizeof(rec); i++) {
		memcpy(bad, rec, sizeof(rec));
		bad[i] ^= 0x01;
		assert_int_equal(tfrecord_check_record(bad, sizeof(bad), &len), -FB_EFORMAT);
	}
	/* A frame whose length disagrees with the bytes given (index says otherwise). */
	assert_int_equal(tfrecord_check_record(rec, sizeof(rec) - 1, &len), -FB_EFORMAT);
	assert_int_equal(tfrecord_check_record(rec, 3, &len), -FB_EFORMAT);
}

static void test_example_reference_encoding(void **state)
{
	static const uint8_t want[] = {0x0a, 0x0f, 0x0a, 0x0d, 0x0a, 0x03, 0x6c, 0x65, 0x6e,
				       0x12, 0x06, 0x1a, 0x04, 0x0a, 0x02, 0x80, 0x20};
	Tensorflow__Example ex = TENSORFLOW__EXAMPLE__INIT;
	Tensorflow__Features fs = TENSORFLOW__FEATURES__INIT;
	Tensorflow__Features__FeatureEntry e = TENSORFLOW__FEATURES__FEATURE_ENTRY__INIT;
	Tensorflow__Features__FeatureEntry *ep = &e;
	Tensorflow__Feature f = TENSORFLOW__FEATURE__INIT;
	Tensorflow__Int64List il = TENSORFLOW__INT64_LIST__INIT;
	int64_t v = 4096;
	uint8_t out[64];

	(void)state;
	il.n_value = 1;
	il.value = &v;
	f.kind_case = TENSORFLOW__FEATURE__KIND_INT64_LIST;
	f.int64_list = &il;
	e.key = "len";
	e.value = &f;
	fs.n_feature = 1;
	fs.feature = &ep;
	ex.features = &fs;
	assert_int_equal(tensorflow__example__get_packed_size(&ex), sizeof(want));
	assert_int_equal(tensorflow__example__pack(&ex, out), sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
}

/* feedbench's Example: image bytes, label, size; decodes back to the same bytes. */
static void test_example_round_trip(void **state)
{
	struct tfrecord_arena a = {0};
	struct tfrecord_example ex;
	size_t sizes[] = {0, 1, 64, 4093, 200000};

	(void)state;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		uint8_t *img = malloc(n + 1);
		size_t cap = tfrecord_example_size(n, 123456789012ll);
		uint8_t *enc = malloc(cap);

		assert_non_null(img);
		assert_non_null(enc);
		for (size_t i = 0; i < n; i++)
			img[i] = (uint8_t)(i * 7 + k);
		assert_int_equal(tfrecord_example_encode(enc, img, n, 123456789012ll), cap);
		assert_int_equal(tfrecord_example_decode(enc, cap, &a, &ex), 0);
		assert_true(ex.has_image);
		assert_int_equal(ex.image_len, n);
		if (n)
			assert_memory_equal(ex.image, img, n);
		assert_true(ex.has_label);
		assert_int_equal(ex.label, 123456789012ll);
		assert_int_equal(ex.nfeatures, 3);
		free(img);
		free(enc);
	}
	tfrecord_arena_free(&a);
}

static void test_example_decode_errors(void **state)
{
	static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff};
	static const uint8_t wrong_type[] = {0x0a, 0x02, 0x08, 0x01}; /* features: varint */
	struct tfrecord_arena a = {0};
	struct tfrecord_example ex;

	(void)state;
	assert_int_equal(tfrecord_example_decode(garbage, sizeof(garbage), &a, &ex), -FB_EFORMAT);
	assert_int_equal(tfrecord_example_decode(wrong_type, sizeof(wrong_type), &a, &ex),
			 -FB_EFORMAT);
	/* An empty Example is valid and has no image. */
	assert_int_equal(tfrecord_example_decode("", 0, &a, &ex), 0);
	assert_false(ex.has_image);
	tfrecord_arena_free(&a);
}

/* Many small features need more memory than the arena holds: the spill path. */
static void test_example_many_features(void **state)
{
	enum { N = 2000 };
	Tensorflow__Example ex = TENSORFLOW__EXAMPLE__INIT;
	Tensorflow__Features fs = TENSORFLOW__FEATURES__INIT;
	Tensorflow__Features__FeatureEntry *e = calloc(N, sizeof(*e));
	Tensorflow__Features__FeatureEntry **ep = calloc(N, sizeof(*ep));
	Tensorflow__Feature *f = calloc(N, sizeof(*f));
	Tensorflow__Int64List *il = calloc(N, sizeof(*il));
	ProtobufCBinaryData img = {3, (uint8_t *)"abc"};
	Tensorflow__BytesList bl = TENSORFLOW__BYTES_LIST__INIT;
	char(*keys)[16] = calloc(N, sizeof(*keys));
	int64_t v = 1;
	struct tfrecord_arena a = {0};
	struct tfrecord_example out;
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_non_null(e);
	assert_non_null(keys);
	for (int i = 0; i < N; i++) {
		tensorflow__features__feature_entry__init(&e[i]);
		tensorflow__feature__init(&f[i]);
		tensorflow__int64_list__init(&il[i]);
		snprintf(keys[i], sizeof(keys[i]), "k%d", i);
		e[i].key = keys[i];
		e[i].value = &f[i];
		ep[i] = &e[i];
		il[i].n_value = 1;
		il[i].value = &v;
		f[i].kind_case = TENSORFLOW__FEATURE__KIND_INT64_LIST;
		f[i].int64_list = &il[i];
	}
	/* The last feature is the image. */
	bl.n_value = 1;
	bl.value = &img;
	e[N - 1].key = "image";
	f[N - 1].kind_case = TENSORFLOW__FEATURE__KIND_BYTES_LIST;
	f[N - 1].bytes_list = &bl;
	fs.n_feature = N;
	fs.feature = ep;
	ex.features = &fs;
	len = tensorflow__example__get_packed_size(&ex);
	buf = malloc(len);
	assert_non_null(buf);
	tensorflow__example__pack(&ex, buf);
	for (int round = 0; round < 2; round++) {
		assert_int_equal(tfrecord_example_decode(buf, len, &a, &out), 0);
		assert_int_equal(out.nfeatures, N);
		assert_true(out.has_image);
		assert_int_equal(out.image_len, 3);
		assert_memory_equal(out.image, "abc", 3);
		assert_true(a.nspill > 0); /* the path under test was taken */
	}
	tfrecord_arena_free(&a);
	free(buf);
	free(keys);
	free(il);
	free(f);
	free(ep);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_crc32c_vectors),
	    cmocka_unit_test(test_mask),
	    cmocka_unit_test(test_hello_record),
	    cmocka_unit_test(test_corruption_detected),
	    cmocka_unit_test(test_example_reference_encoding),
	    cmocka_unit_test(test_example_round_trip),
	    cmocka_unit_test(test_example_decode_errors),
	    cmocka_unit_test(test_example_many_features),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
