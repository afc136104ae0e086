/* TFRecord framing and tf.train.Example coding, without I/O (formats/tfrecord.c).
 *
 * Exposed for the unit tests (tests/unit/test_tfrecord.c) and the decode benchmark
 * (tests/perf/tfrecord_decode.c); the format plug-in is `tfrecord_format`.
 *
 * A record on disk: u64 length (LE), u32 masked CRC32C of those 8 bytes, `length` data bytes,
 * u32 masked CRC32C of the data. Mask: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
 */
#ifndef FEEDBENCH_TFRECORD_H
#define FEEDBENCH_TFRECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TFRECORD_HEADER_BYTES 12 /* length + its CRC */
#define TFRECORD_FOOTER_BYTES 4	 /* data CRC */
#define TFRECORD_FRAME_BYTES  (TFRECORD_HEADER_BYTES + TFRECORD_FOOTER_BYTES)

uint32_t tfrecord_mask(uint32_t crc);
uint32_t tfrecord_masked_crc(const void *buf, size_t len);

/* Writes the 12-byte header of a record holding len data bytes. */
void tfrecord_put_header(uint8_t hdr[TFRECORD_HEADER_BYTES], uint64_t len);
/* Writes the 4-byte footer (masked CRC32C of the data). */
void tfrecord_put_footer(uint8_t ftr[TFRECORD_FOOTER_BYTES], const void *data, size_t len);

/* Checks a header: 0 and *len, or -FB_EFORMAT when the length CRC does not match. */
int tfrecord_check_header(const uint8_t hdr[TFRECORD_HEADER_BYTES], uint64_t *len);
/* Checks a whole framed record of reclen bytes: header CRC, length == reclen - 16, data CRC.
 * 0 with the data at rec + TFRECORD_HEADER_BYTES, or -FB_EFORMAT. */
int tfrecord_check_record(const void *rec, size_t reclen, uint64_t *len);

/* Bytes the Example {image, label, size} takes for an image of len bytes. */
size_t tfrecord_example_size(size_t len, int64_t label);
/* Encodes tf.train.Example {"image": bytes, "label": int64, "size": int64 (= len)} into out
 * (cap >= tfrecord_example_size()); returns the bytes written. */
size_t tfrecord_example_encode(void *out, const void *image, size_t len, int64_t label);

/* Scratch memory for decoding Examples without a malloc per record: protobuf-c allocates the
 * message tree, including a copy of the image bytes, from it. */
struct tfrecord_arena {
	uint8_t *base;
	size_t cap, used;
	void **spill; /* blocks that did not fit (odd inputs), freed at the next decode */
	size_t nspill, spill_cap;
};

void tfrecord_arena_free(struct tfrecord_arena *a);

/* What a decoded Example holds. */
struct tfrecord_example {
	bool has_image;	      /* an `image` feature with at least one bytes value */
	const uint8_t *image; /* its first value (points into the arena) */
	size_t image_len;
	bool has_label;
	int64_t label;
	unsigned nfeatures;
};

/* Decodes an Example with protobuf-c (tensorflow__example__unpack). 0, or -FB_EFORMAT when the
 * bytes are not an Example, -ENOMEM. The result is valid until the next decode with the arena. */
int tfrecord_example_decode(const void *data, size_t len, struct tfrecord_arena *a,
			    struct tfrecord_example *ex);

#endif
