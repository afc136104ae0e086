/* What the image formats (jpeg, png) share: the dimensions rule of generated images, the
 * whole-file read, buffers that grow, and the sample header an image carries.
 *
 * A generated image holds one sample as 8-bit grey pixels, as DLIO's generators write their
 * noise: width = floor(sqrt(L)) (DLIO's `dimension`), height = ceil(L / width), so the
 * L-byte sample fills the first L pixels in row order and the rest of the last row is zero.
 * DLIO's own image is width x width (up to one row less than the sample); feedbench keeps the
 * whole sample so it can be verified.
 */
#ifndef FEEDBENCH_IMAGE_H
#define FEEDBENCH_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"

struct run;

/* The largest decoded image read (a hostile header must not make feedbench allocate
 * gigabytes): 256 MiB, e.g. 16384 x 16384 grey or 8192 x 8192 RGBA. */
#define IMAGE_MAX_DECODED ((uint64_t)256 << 20)
/* 0, or a failure naming path when width x height x bytes per pixel exceeds it. */
int image_check_size(struct run *run, const char *fmt, const char *path, uint64_t width,
		     uint64_t height, unsigned bpp);

/* The image of an L-byte sample: width floor(sqrt(L)), height ceil(L / width). */
void image_dims(uint64_t len, uint32_t *width, uint32_t *height);

/* A buffer that only grows. */
struct image_buf {
	unsigned char *p;
	size_t cap;
};
int image_buf_grow(struct run *run, struct image_buf *b, size_t need, const char *path);
void image_buf_free(struct image_buf *b);

/* Reads the whole file through the reader's io (its size from fstat): *size bytes in b. */
int image_read_file(struct freader_file *f, struct image_buf *b, size_t *size);
/* Reads up to len bytes from the start of path (probes): *got bytes in b, *size the file's. */
int image_read_head(struct run *run, const char *path, size_t len, struct image_buf *b, size_t *got,
		    uint64_t *size);

/* [format.image] decode = false: the sample is the file's bytes, as many as fit in cap. */
size_t image_raw_sample(const struct image_buf *b, size_t size, void *buf, size_t cap);

/* The offset of the first byte where a and b differ (the shorter length when one is a prefix
 * of the other; alen when equal). */
uint64_t image_first_diff(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen);

/* The pixels of sample (file, index) of a generated dataset as the generator writes them:
 * the sample (header + seeded payload, len bytes) then zeros up to width x height. malloc'd;
 * NULL when out of memory. */
unsigned char *image_sample_pixels(const struct run *run, uint32_t file, uint64_t index,
				   uint64_t len, uint32_t width, uint32_t height);

#endif
