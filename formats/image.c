/* Helpers shared by the image formats (jpeg, png): see image.h. */
#include "image.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sample.h"
#include "../bench/errors.h"
#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "format.h"

void image_dims(uint64_t len, uint32_t *width, uint32_t *height)
{
	uint64_t w = (uint64_t)sqrt((double)len);

	/* sqrt of a double may be one off for large values: settle on the exact floor */
	while (w > 1 && w * w > len)
		w--;
	while ((w + 1) * (w + 1) <= len)
		w++;
	if (w == 0)
		w = 1;
	*width = (uint32_t)w;
	*height = (uint32_t)((len + w - 1) / w);
}

int image_buf_grow(struct run *run, struct image_buf *b, size_t need, const char *path)
{
	unsigned char *p;

	if (need <= b->cap)
		return 0;
	p = realloc(b->p, need);
	if (!p)
		return run_fail(run, -ENOMEM, "out of memory reading '%s' (%zu bytes)", path, need);
	b->p = p;
	b->cap = need;
	return 0;
}

void image_buf_free(struct image_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->cap = 0;
}

int image_read_file(struct freader_file *f, struct image_buf *b, size_t *size)
{
	uint64_t sz;
	int rc = io_size(f->io, f->sf, &sz);

	if (rc)
		return rc;
	if (sz > (uint64_t)1 << 32)
		return run_fail(f->run, -FB_EFORMAT,
				"image file '%s' of %llu bytes is larger than 4 GiB", f->file->path,
				(unsigned long long)sz);
	rc = image_buf_grow(f->run, b, sz ? sz : 1, f->file->path);
	if (rc)
		return rc;
	rc = io_pread(f->io, f->sf, b->p, sz, 0);
	if (rc)
		return rc;
	*size = sz;
	return 0;
}

int image_read_head(struct run *run, const char *path, size_t len, struct image_buf *b, size_t *got,
		    uint64_t *size)
{
	struct io io = {.run = run};
	struct sfile *f;
	int rc, rc2;

	rc = io_open(&io, &f, path, STORAGE_O_READ);
	if (rc)
		return rc;
	rc = io_size(&io, f, size);
	if (rc == 0 && *size < len)
		len = *size;
	if (rc == 0)
		rc = image_buf_grow(run, b, len ? len : 1, path);
	if (rc == 0)
		rc = io_pread_upto(&io, f, b->p, len, 0, got);
	rc2 = io_close(&io, f);
	return rc ? rc : rc2;
}

size_t image_raw_sample(const struct image_buf *b, size_t size, void *buf, size_t cap)
{
	size_t n = size < cap ? size : cap;

	memcpy(buf, b->p, n);
	return n;
}

uint64_t image_first_diff(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;

	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return i;
	return n;
}

unsigned char *image_sample_pixels(const struct run *run, uint32_t file, uint64_t index,
				   uint64_t len, uint32_t width, uint32_t height)
{
	size_t n = (size_t)width * height;
	unsigned char *pix = calloc(n ? n : 1, 1);

	if (pix)
		sample_fill(pix, len, run->ds.seed, run->ds.id, file, index);
	return pix;
}

int image_check_size(struct run *run, const char *fmt, const char *path, uint64_t width,
		     uint64_t height, unsigned bpp)
{
	uint64_t n = width * height * bpp;

	if (n <= IMAGE_MAX_DECODED)
		return 0;
	return run_fail(run, -FB_EFORMAT,
			"%s: '%s' is %" PRIu64 "x%" PRIu64 " with %u bytes per pixel: it would "
			"decode to %" PRIu64 " bytes, more than the %" PRIu64
			" MiB feedbench reads",
			fmt, path, width, height, bpp, n, IMAGE_MAX_DECODED >> 20);
}
