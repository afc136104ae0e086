/* png: one sample per file, an 8-bit grey PNG as DLIO's generator writes its noise (PIL,
 * zlib level 6), decoded in full on every read as DLIO's reader does
 * (`np.asarray(Image.open(f))`), through libspng.
 *
 * A generated image's pixels are the sample's bytes (image.h: width floor(sqrt(L)), height
 * ceil(L / width)). PNG is lossless: a read returns the first L decoded pixels, which are the
 * sample itself, and the core's verification checks them. Damage to the file is caught by the
 * chunk CRCs (and zlib's Adler-32) while decoding; the failure names the chunk and its offset.
 * Images written by other tools: grey, grey + alpha, RGB and RGBA are returned in their own
 * channels (16-bit samples host-endian), palette images expanded to RGB.
 */
#include "build_config.h"
#include "format.h"

#if FEEDBENCH_HAVE_SPNG
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spng.h>
#include <zlib.h>

#include "image.h"
#include "sample.h"
#include "../bench/errors.h"
#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "../bench/timer.h"

static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

/* The image header (IHDR) and what decoding it gives. */
struct png_info {
	uint32_t width, height;
	unsigned depth, color;
	int fmt;      /* SPNG_FMT_* the image is decoded to */
	unsigned bpp; /* bytes per decoded pixel */
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Signature and IHDR (the first 33 bytes). 0, or -1 with why naming the offset. */
static int png_header(const unsigned char *d, size_t n, struct png_info *in, char *why, size_t wlen)
{
	static const unsigned g8[] = {SPNG_FMT_G8, 1, SPNG_FMT_PNG, 2},
			      rgb[] = {SPNG_FMT_RGB8, 3, SPNG_FMT_PNG, 6},
			      ga[] = {SPNG_FMT_GA8, 2, SPNG_FMT_GA16, 4},
			      rgba[] = {SPNG_FMT_RGBA8, 4, SPNG_FMT_RGBA16, 8},
			      pal[] = {SPNG_FMT_RGB8, 3, SPNG_FMT_RGB8, 3};
	const unsigned *f;

	if (n < 8 || memcmp(d, png_sig, 8) != 0) {
		snprintf(why, wlen, "no PNG signature at offset 0");
		return -1;
	}
	if (n < 33 || be32(d + 8) != 13 || memcmp(d + 12, "IHDR", 4) != 0) {
		snprintf(why, wlen, "no 13-byte IHDR chunk at offset 8");
		return -1;
	}
	in->width = be32(d + 16);
	in->height = be32(d + 20);
	in->depth = d[24];
	in->color = d[25];
	switch (in->color) {
	case 0:
		f = g8;
		break;
	case 2:
		f = rgb;
		break;
	case 3:
		f = pal;
		break;
	case 4:
		f = ga;
		break;
	case 6:
		f = rgba;
		break;
	default:
		snprintf(why, wlen, "unknown PNG colour type %u at offset 25", in->color);
		return -1;
	}
	if (!in->width || !in->height || in->width > INT32_MAX || in->height > INT32_MAX) {
		snprintf(why, wlen, "PNG image of %ux%u pixels at offset 16", in->width,
			 in->height);
		return -1;
	}
	in->fmt = (int)f[in->depth == 16 ? 2 : 0];
	in->bpp = f[in->depth == 16 ? 3 : 1];
	return 0;
}

/* After a decoding failure: the first chunk that runs past the end or fails its CRC. */
static int png_locate(const unsigned char *d, size_t n, char *why, size_t wlen)
{
	size_t pos = 8;

	while (pos + 12 <= n) {
		uint32_t len = be32(d + pos), crc;
		char type[5] = {0};

		memcpy(type, d + pos + 4, 4);
		for (int i = 0; i < 4; i++)
			if (type[i] < 0x20 || type[i] > 0x7e)
				type[i] = '?';
		if (len > INT32_MAX || len > n - pos - 12) {
			snprintf(why, wlen,
				 "truncated PNG: chunk '%s' of %" PRIu32
				 " bytes at offset %zu runs "
				 "past the end of the %zu-byte file",
				 type, len, pos, n);
			return 0;
		}
		crc = (uint32_t)crc32(0, d + pos + 4, len + 4);
		if (crc != be32(d + pos + 8 + len)) {
			snprintf(why, wlen,
				 "chunk '%s' at offset %zu fails its CRC (stored 0x%08x, computed "
				 "0x%08x)",
				 type, pos, be32(d + pos + 8 + len), crc);
			return 0;
		}
		if (memcmp(type, "IEND", 4) == 0)
			return -1;
		pos += 12 + len;
	}
	snprintf(why, wlen, "truncated PNG: no IEND chunk, the file ends at offset %zu", n);
	return 0;
}

/* ---- generation ----------------------------------------------------------------------- */

struct fgen {
	struct fgen_one one;
};

static int png_create(struct fgen **gp, struct run *run, struct ds_file *file, unsigned flags)
{
	(void)flags;
	return fgen_one_create(gp, run, file, "png");
}

static int png_append(struct fgen *g, uint64_t index, const void *sample, size_t len)
{
	struct fgen_one *o = &g->one;
	struct spng_ihdr ihdr = {.bit_depth = 8, .color_type = SPNG_COLOR_TYPE_GRAYSCALE};
	spng_ctx *ctx = NULL;
	unsigned char *pix, *png = NULL;
	size_t n = 0;
	int err = 0, rc = 0;

	if ((rc = fgen_one_check(o, index)))
		return rc;
	image_dims(len, &ihdr.width, &ihdr.height);
	pix = calloc((size_t)ihdr.width * ihdr.height, 1);
	ctx = spng_ctx_new(SPNG_CTX_ENCODER);
	if (!pix || !ctx) {
		rc = run_fail(o->run, -ENOMEM, "cannot set up the PNG encoder for '%s'",
			      o->file->path);
		goto out;
	}
	memcpy(pix, sample, len);
	spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1);
	spng_set_option(ctx, SPNG_IMG_COMPRESSION_LEVEL, 6); /* PIL's default */
	err = spng_set_ihdr(ctx, &ihdr);
	if (!err)
		err = spng_encode_image(ctx, pix, (size_t)ihdr.width * ihdr.height, SPNG_FMT_PNG,
					SPNG_ENCODE_FINALIZE);
	if (!err)
		png = spng_get_png_buffer(ctx, &n, &err);
	if (err || !png) {
		rc = run_fail(o->run, -FB_EINTERNAL, "cannot encode '%s': %s", o->file->path,
			      spng_strerror(err));
		goto out;
	}
	rc = io_pwrite(&o->io, o->f, png, n, 0);
	o->written = rc == 0;
out:
	free(png);
	free(pix);
	spng_ctx_free(ctx);
	return rc;
}

/* ---- reading -------------------------------------------------------------------------- */

struct freader {
	struct freader_file b;
	struct image_buf data; /* the file */
	struct image_buf pix;  /* decoded pixels that do not fit the sample buffer */
};

static int png_open(struct freader **rp, struct run *run, struct ds_file *file, struct io *io)
{
	return freader_file_open(sizeof(struct freader), run, file, io, (void **)rp);
}

static int png_corrupt(struct freader *r, size_t size, int err)
{
	char why[256];

	if (png_locate(r->data.p, size, why, sizeof(why)) == 0)
		return run_fail(r->b.run, -FB_EFORMAT, "png: corrupt image '%s': %s",
				r->b.file->path, why);
	return run_fail(r->b.run, -FB_EFORMAT,
			"png: corrupt image '%s': %s (every chunk's CRC is right: the damage is "
			"inside the compressed image data)",
			r->b.file->path, spng_strerror(err));
}

/* Decodes the image in data into out (outlen bytes); the time is the decode's. */
static int png_decode(struct freader *r, size_t size, const struct png_info *in, unsigned char *out,
		      size_t outlen, const uint64_t t0[2])
{
	spng_ctx *ctx = spng_ctx_new(0);
	size_t need = 0;
	int err;

	if (!ctx)
		return run_fail(r->b.run, -ENOMEM, "cannot set up the PNG decoder for '%s'",
				r->b.file->path);
	spng_set_chunk_limits(ctx, 64u << 20, 64u << 20);
	err = spng_set_png_buffer(ctx, r->data.p, size);
	if (!err)
		err = spng_decoded_image_size(ctx, in->fmt, &need);
	if (!err && need != outlen)
		err = SPNG_EINTERNAL;
	if (!err)
		err = spng_decode_image(ctx, out, outlen, in->fmt, 0);
	spng_ctx_free(ctx);
	if (err)
		return png_corrupt(r, size, err);
	io_account_decode(r->b.io, outlen, timer_now_ns() - t0[0], io_thread_cpu_ns() - t0[1]);
	return 0;
}

static int png_read_sample(struct freader *r, uint64_t index, void *buf, size_t cap, size_t *len)
{
	struct run *run = r->b.run;
	const char *path = r->b.file->path;
	struct png_info in;
	char why[256];
	size_t size;
	uint64_t out, want, t0[2];
	unsigned char *dst = buf;
	int rc = image_read_file(&r->b, &r->data, &size);

	if (rc)
		return rc;
	if (!run->cfg.image.decode) {
		*len = image_raw_sample(&r->data, size, buf, cap);
		return 0;
	}
	t0[0] = timer_now_ns();
	t0[1] = io_thread_cpu_ns();
	if (png_header(r->data.p, size, &in, why, sizeof(why)))
		return run_fail(run, -FB_EFORMAT, "png: bad image '%s': %s", path, why);
	rc = image_check_size(run, "png", path, in.width, in.height, in.bpp);
	if (rc)
		return rc;
	out = (uint64_t)in.width * in.height * in.bpp;
	want = run->ds.generated ? dataset_sample_size(&run->ds, r->b.file->index, 0) : out;
	if (run->ds.generated && (in.color != 0 || in.depth != 8 || out < want))
		return run_fail(
		    run, -FB_EFORMAT,
		    "png: '%s' is not the image feedbench generates for its %" PRIu64
		    "-byte sample (%ux%u, colour type %u, %u-bit): regenerate the dataset",
		    path, want, in.width, in.height, in.color, in.depth);
	if (want > cap)
		return run_fail(run, -FB_EDATASET,
				"png: '%s' decodes to %" PRIu64
				" bytes, more than the %zu-byte sample buffer",
				path, want, cap);
	if (out > cap) {
		rc = image_buf_grow(run, &r->pix, out, path);
		dst = r->pix.p;
	}
	if (rc == 0)
		rc = png_decode(r, size, &in, dst, out, t0);
	if (rc)
		return rc;
	if (dst != buf)
		memcpy(buf, dst, want);
	(void)index;
	*len = want;
	return 0;
}

static int png_close(struct freader *r)
{
	int rc = freader_file_close(&r->b);

	image_buf_free(&r->data);
	image_buf_free(&r->pix);
	free(r);
	return rc;
}

static int png_probe(struct run *run, const char *path, struct probe_info *info)
{
	struct image_buf b = {0};
	struct png_info in;
	char why[256];
	size_t got = 0;
	uint64_t size = 0;
	int rc = image_read_head(run, path, 64, &b, &got, &size);

	if (rc == 0 && png_header(b.p, got, &in, why, sizeof(why)))
		rc = run_fail(run, -FB_EFORMAT, "png: bad image '%s': %s", path, why);
	image_buf_free(&b);
	if (rc == 0)
		rc = image_check_size(run, "png", path, in.width, in.height, in.bpp);
	if (rc)
		return rc;
	info->nsamples = 1;
	info->max_sample = (uint64_t)in.width * in.height * in.bpp;
	info->data_bytes = info->max_sample;
	snprintf(info->detail, sizeof(info->detail), "png %ux%u, colour type %u, %u-bit", in.width,
		 in.height, in.color, in.depth);
	return 0;
}

static const char *const png_globs[] = {".png", NULL};

const struct format_ops png_format = {
    .version = FORMAT_OPS_VERSION,
    .name = "png",
    .ext = ".png",
    .globs = png_globs,
    .caps = FORMAT_CAP_FILE_PER_SAMPLE | FORMAT_CAP_DECODES,
    .shared_note = "png stores one image per file, so ranks have nothing to share; use "
		   "file_access = per_rank",
    .create = png_create,
    .append = png_append,
    .finish = fgen_one_finish,
    .open = png_open,
    .read_sample = png_read_sample,
    .close = png_close,
    .probe = png_probe,
};

#else

const struct format_ops png_format = {
    .version = FORMAT_OPS_VERSION,
    .name = "png",
    .ext = ".png",
    .not_built = "libspng or zlib not found: Debian libspng-dev, zlib1g-dev",
};

#endif
