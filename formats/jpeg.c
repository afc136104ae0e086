/* jpeg: one sample per file, an 8-bit grey JPEG as DLIO's generator writes its noise (PIL,
 * quality 75 by default), decoded in full on every read as DLIO's reader does
 * (`np.asarray(Image.open(f))`), through libjpeg-turbo's TurboJPEG API.
 *
 * A generated image's pixels are the sample's bytes (image.h: width floor(sqrt(L)), height
 * ceil(L / width)). JPEG is lossy, so the decoded pixels are not the sample: the generator
 * decodes what it encoded and records the CRC32C of those decoded pixels in the sample header,
 * which it stores exactly in an APP9 segment ("feedbench\0" + 40 bytes) after the JFIF APP0.
 * A read returns that header followed by the decoded pixels 40..L, and the core's
 * verification checks the CRC. Encoding is deterministic (same library, same settings), so on
 * a mismatch the image is encoded again from the seed and the first byte of the file that
 * differs names the offset.
 */
#include "build_config.h"
#include "format.h"

#if FEEDBENCH_HAVE_TURBOJPEG
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <turbojpeg.h>

#include "image.h"
#include "sample.h"
#include "../bench/errors.h"
#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "../bench/timer.h"

#define JPEG_TAG     "feedbench"
#define JPEG_TAG_LEN 10 /* with its NUL */
#define JPEG_APP9    0xE9
#define JPEG_SEG_LEN (2 + JPEG_TAG_LEN + SAMPLE_HEADER_BYTES)

/* What the marker walk found before the first scan. */
struct jpeg_info {
	uint32_t width, height;
	unsigned comps, precision;
	uint64_t header_off; /* the sample header in the APP9 segment; 0: none */
	uint64_t scan_off;   /* the SOS marker */
};

static unsigned be16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static bool jpeg_is_sof(unsigned m)
{
	return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
}

/* Walks the marker segments from SOI to the first SOS. 0, or -1 with why (offset named). */
static int jpeg_scan(const unsigned char *d, size_t n, struct jpeg_info *in, char *why, size_t wlen)
{
	size_t pos = 2;

	memset(in, 0, sizeof(*in));
	if (n < 4 || d[0] != 0xFF || d[1] != 0xD8) {
		snprintf(why, wlen, "no JPEG start-of-image marker at offset 0");
		return -1;
	}
	for (;;) {
		unsigned m, len;

		while (pos + 1 < n && d[pos] == 0xFF && d[pos + 1] == 0xFF)
			pos++; /* fill bytes */
		if (pos + 4 > n) {
			snprintf(why, wlen, "truncated JPEG: no scan before the end at offset %zu",
				 pos);
			return -1;
		}
		if (d[pos] != 0xFF) {
			snprintf(why, wlen, "expected a JPEG marker at offset %zu, found 0x%02x",
				 pos, d[pos]);
			return -1;
		}
		m = d[pos + 1];
		if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) { /* no length */
			pos += 2;
			continue;
		}
		len = be16(d + pos + 2);
		if (len < 2 || pos + 2 + len > n) {
			snprintf(
			    why, wlen,
			    "truncated JPEG: marker 0x%02x segment of %u bytes at offset %zu runs "
			    "past the end of the %zu-byte file",
			    m, len, pos, n);
			return -1;
		}
		if (jpeg_is_sof(m)) {
			if (len < 8) {
				snprintf(why, wlen, "JPEG frame header at offset %zu is too short",
					 pos);
				return -1;
			}
			in->precision = d[pos + 4];
			in->height = be16(d + pos + 5);
			in->width = be16(d + pos + 7);
			in->comps = d[pos + 9];
		} else if (m == JPEG_APP9 && len == JPEG_SEG_LEN &&
			   memcmp(d + pos + 4, JPEG_TAG, JPEG_TAG_LEN) == 0) {
			in->header_off = pos + 4 + JPEG_TAG_LEN;
		} else if (m == 0xDA) {
			in->scan_off = pos;
			break;
		} else if (m == 0xD9) {
			snprintf(why, wlen, "JPEG ends (EOI) at offset %zu before any scan", pos);
			return -1;
		}
		pos += 2 + len;
	}
	if (!in->width || !in->height || !in->comps) {
		snprintf(why, wlen, "no JPEG frame header (SOF) before the scan at offset %" PRIu64,
			 in->scan_off);
		return -1;
	}
	return 0;
}

/* ---- encoding (generation, and the reference on a verification failure) ----------------- */

/* The file the generator writes for sample (file, index) of len bytes: *out malloc'd. */
static int jpeg_encode(struct run *run, const char *path, uint32_t file, uint64_t index,
		       uint64_t len, unsigned char **out, size_t *outlen)
{
	uint32_t w, h;
	unsigned char *pix, *jb = NULL, *o;
	unsigned long jlen = 0;
	tjhandle c = NULL, d = NULL;
	unsigned char hdr[SAMPLE_HEADER_BYTES];
	size_t pos;
	uint32_t crc;
	int rc = 0;

	image_dims(len, &w, &h);
	if (w > 65500 || h > 65500)
		return run_fail(run, -FB_ECONFIG,
				"a %" PRIu64 "-byte sample makes a %ux%u image: JPEG allows 65500 "
				"pixels a side ('%s')",
				len, w, h, path);
	pix = image_sample_pixels(run, file, index, len, w, h);
	c = tjInitCompress();
	d = tjInitDecompress();
	if (!pix || !c || !d) {
		rc = run_fail(run, -ENOMEM, "cannot set up the JPEG encoder for '%s'", path);
		goto out;
	}
	memcpy(hdr, pix, sizeof(hdr));
	if (tjCompress2(c, pix, (int)w, (int)w, (int)h, TJPF_GRAY, &jb, &jlen, TJSAMP_GRAY,
			(int)run->cfg.image.quality, 0) != 0) {
		rc =
		    run_fail(run, -FB_EINTERNAL, "cannot encode '%s': %s", path, tjGetErrorStr2(c));
		goto out;
	}
	/* the CRC of what a reader decodes: the lossy pixels, not the sample */
	if (tjDecompress2(d, jb, jlen, pix, (int)w, (int)w, (int)h, TJPF_GRAY, 0) != 0) {
		rc = run_fail(run, -FB_EINTERNAL, "cannot decode '%s' just encoded: %s", path,
			      tjGetErrorStr2(d));
		goto out;
	}
	crc = crc32c(pix + SAMPLE_HEADER_BYTES, len - SAMPLE_HEADER_BYTES);
	memcpy(hdr + 4, &crc, 4);
	/* SOI, the JFIF APP0 when there is one, then the APP9 segment */
	pos = 2;
	if (jlen > 6 && jb[2] == 0xFF && jb[3] == 0xE0)
		pos = 4 + be16(jb + 4);
	o = malloc(jlen + 2 + JPEG_SEG_LEN);
	if (!o) {
		rc = run_fail(run, -ENOMEM, "out of memory encoding '%s'", path);
		goto out;
	}
	memcpy(o, jb, pos);
	o[pos] = 0xFF;
	o[pos + 1] = JPEG_APP9;
	o[pos + 2] = JPEG_SEG_LEN >> 8;
	o[pos + 3] = JPEG_SEG_LEN & 0xFF;
	memcpy(o + pos + 4, JPEG_TAG, JPEG_TAG_LEN);
	memcpy(o + pos + 4 + JPEG_TAG_LEN, hdr, sizeof(hdr));
	memcpy(o + pos + 2 + JPEG_SEG_LEN, jb + pos, jlen - pos);
	*out = o;
	*outlen = jlen + 2 + JPEG_SEG_LEN;
out:
	tjFree(jb);
	if (c)
		tjDestroy(c);
	if (d)
		tjDestroy(d);
	free(pix);
	return rc;
}

struct fgen {
	struct fgen_one one;
};

static int jpeg_create(struct fgen **gp, struct run *run, struct ds_file *file, unsigned flags)
{
	(void)flags;
	return fgen_one_create(gp, run, file, "jpeg");
}

static int jpeg_append(struct fgen *g, uint64_t index, const void *sample, size_t len)
{
	struct fgen_one *o = &g->one;
	unsigned char *img = NULL;
	size_t n = 0;
	int rc;

	if ((rc = fgen_one_check(o, index)))
		return rc;
	rc = jpeg_encode(o->run, o->file->path, o->file->index, index, len, &img, &n);
	if (rc == 0)
		rc = io_pwrite(&o->io, o->f, img, n, 0);
	free(img);
	o->written = rc == 0;
	return rc;
}

/* ---- reading -------------------------------------------------------------------------- */

struct freader {
	struct freader_file b;
	tjhandle tj;
	struct image_buf data; /* the file */
	struct image_buf pix;  /* decoded pixels that do not fit the sample buffer */
};

static int jpeg_open(struct freader **rp, struct run *run, struct ds_file *file, struct io *io)
{
	struct freader *r;
	int rc = freader_file_open(sizeof(*r), run, file, io, (void **)&r);

	if (rc)
		return rc;
	r->tj = tjInitDecompress();
	if (!r->tj) {
		freader_file_close(&r->b);
		free(r);
		return run_fail(run, -ENOMEM, "cannot set up the JPEG decoder for '%s'",
				file->path);
	}
	*rp = r;
	return 0;
}

/* Where a generated image differs from what its seed generates: the offset named by a
 * decoding or verification failure. UINT64_MAX when it cannot be known. */
static uint64_t jpeg_damage_at(struct freader *r, size_t size)
{
	struct run *run = r->b.run;
	unsigned char *ref = NULL;
	size_t n = 0;
	uint64_t at;

	if (!run->ds.generated)
		return UINT64_MAX;
	if (jpeg_encode(run, r->b.file->path, r->b.file->index, 0,
			dataset_sample_size(&run->ds, r->b.file->index, 0), &ref, &n))
		return UINT64_MAX;
	at = image_first_diff(r->data.p, size, ref, n);
	free(ref);
	return at == n && n == size ? UINT64_MAX : at;
}

static int jpeg_corrupt(struct freader *r, size_t size, const struct jpeg_info *in, const char *why)
{
	uint64_t at = jpeg_damage_at(r, size);

	if (at != UINT64_MAX)
		return run_fail(r->b.run, -FB_EFORMAT,
				"jpeg: corrupt image '%s' at offset %" PRIu64
				" (the first byte differing from the image its seed generates): %s",
				r->b.file->path, at, why);
	return run_fail(r->b.run, -FB_EFORMAT,
			"jpeg: corrupt image '%s' in the scan data from offset %" PRIu64 ": %s",
			r->b.file->path, in->scan_off, why);
}

/* A generated dataset's file that is not the image its sample makes. */
static int jpeg_foreign(struct freader *r, size_t size, const struct jpeg_info *in, uint64_t want)
{
	uint64_t at = jpeg_damage_at(r, size);
	char where[64] = "";

	if (at != UINT64_MAX)
		snprintf(where, sizeof(where), " at offset %" PRIu64, at);
	return run_fail(r->b.run, -FB_EFORMAT,
			"jpeg: '%s'%s is not the image feedbench generates for its %" PRIu64
			"-byte sample (%ux%u, %u components, %s sample header): regenerate the "
			"dataset",
			r->b.file->path, where, want, in->width, in->height, in->comps,
			in->header_off ? "with a" : "no");
}

/* The generated sample's header and CRC, checked before the core sees them so that a
 * failure names the file offset (verify = true). */
static int jpeg_verify(struct freader *r, size_t size, const struct jpeg_info *in,
		       const unsigned char *out, uint64_t len)
{
	struct run *run = r->b.run;
	struct sample_header h;
	uint32_t crc = crc32c(out + SAMPLE_HEADER_BYTES, len - SAMPLE_HEADER_BYTES);
	uint64_t at;

	sample_header_decode(out, &h);
	if (h.magic == SAMPLE_MAGIC && h.seed == run->ds.seed && h.dataset_id == run->ds.id &&
	    h.file == r->b.file->index && h.index == 0 && h.length == len && h.crc == crc)
		return 0;
	at = jpeg_damage_at(r, size);
	if (at == UINT64_MAX)
		return 0; /* the file is the one its seed generates: the core names the field */
	return run_fail(run, -FB_EVERIFY,
			"verification failed: '%s' at offset %" PRIu64
			" (sample 0): decoded pixels CRC32C 0x%08x, header (at offset %" PRIu64
			") says 0x%08x; the file differs there from the image its seed generates",
			r->b.file->path, at, crc, in->header_off, h.crc);
}

/* The decoded image as libjpeg-turbo reads the header (the walk above only finds segments):
 * its size and pixel format; it must agree with the frame header the walk found. */
static int jpeg_geometry(struct freader *r, size_t size, struct jpeg_info *in, int *pf,
			 uint64_t *out)
{
	int w, h, sub, cs;

	if (tjDecompressHeader3(r->tj, r->data.p, size, &w, &h, &sub, &cs) != 0)
		return jpeg_corrupt(r, size, in, tjGetErrorStr2(r->tj));
	if ((uint32_t)w != in->width || (uint32_t)h != in->height)
		return run_fail(r->b.run, -FB_EFORMAT,
				"jpeg: bad image '%s': frame headers disagree (%ux%u, %dx%d)",
				r->b.file->path, in->width, in->height, w, h);
	*pf = cs == TJCS_GRAY			   ? TJPF_GRAY
	      : cs == TJCS_CMYK || cs == TJCS_YCCK ? TJPF_CMYK
						   : TJPF_RGB;
	*out = (uint64_t)w * (uint64_t)h * (uint64_t)tjPixelSize[*pf];
	in->comps = (unsigned)tjPixelSize[*pf];
	return image_check_size(r->b.run, "jpeg", r->b.file->path, (uint64_t)w, (uint64_t)h,
				in->comps);
}

/* Decodes the image in data into out; the time is the decode's. A warning (corrupt data,
 * a premature end) stops the decoder and fails the read: the damage it reports is real. */
static int jpeg_decode(struct freader *r, size_t size, struct jpeg_info *in, int pf,
		       unsigned char *out, uint64_t outlen, const uint64_t t0[2])
{
	int rc = tjDecompress2(r->tj, r->data.p, size, out, (int)in->width, 0, (int)in->height, pf,
			       TJFLAG_STOPONWARNING);
	uint64_t t1 = timer_now_ns();

	if (rc != 0)
		return jpeg_corrupt(r, size, in, tjGetErrorStr2(r->tj));
	io_account_decode(r->b.io, outlen, t1 - t0[0], io_thread_cpu_ns() - t0[1]);
	return 0;
}

static int jpeg_read_sample(struct freader *r, uint64_t index, void *buf, size_t cap, size_t *len)
{
	struct run *run = r->b.run;
	const char *path = r->b.file->path;
	struct jpeg_info in;
	char why[256];
	size_t size;
	uint64_t out = 0, want, t0[2];
	unsigned char *dst = buf;
	int pf = TJPF_GRAY, rc = image_read_file(&r->b, &r->data, &size);

	if (rc)
		return rc;
	if (!run->cfg.image.decode) {
		*len = image_raw_sample(&r->data, size, buf, cap);
		return 0;
	}
	t0[0] = timer_now_ns();
	t0[1] = io_thread_cpu_ns();
	if (jpeg_scan(r->data.p, size, &in, why, sizeof(why)))
		return run_fail(run, -FB_EFORMAT, "jpeg: bad image '%s': %s", path, why);
	rc = jpeg_geometry(r, size, &in, &pf, &out);
	if (rc)
		return rc;
	want = run->ds.generated ? dataset_sample_size(&run->ds, r->b.file->index, 0) : out;
	if (run->ds.generated && (in.comps != 1 || out < want || !in.header_off))
		return jpeg_foreign(r, size, &in, want);
	if (want > cap)
		return run_fail(run, -FB_EDATASET,
				"jpeg: '%s' decodes to %" PRIu64
				" bytes, more than the %zu-byte sample buffer",
				path, want, cap);
	if (out > cap) {
		rc = image_buf_grow(run, &r->pix, out, path);
		dst = r->pix.p;
	}
	if (rc == 0)
		rc = jpeg_decode(r, size, &in, pf, dst, out, t0);
	if (rc)
		return rc;
	if (dst != buf)
		memcpy(buf, dst, want);
	if (run->ds.generated) {
		memcpy(buf, r->data.p + in.header_off, SAMPLE_HEADER_BYTES);
		if (run->cfg.dataset.verify && (rc = jpeg_verify(r, size, &in, buf, want)))
			return rc;
	}
	(void)index;
	*len = want;
	return 0;
}

static int jpeg_close(struct freader *r)
{
	int rc = freader_file_close(&r->b);

	tjDestroy(r->tj);
	image_buf_free(&r->data);
	image_buf_free(&r->pix);
	free(r);
	return rc;
}

static int jpeg_probe(struct run *run, const char *path, struct probe_info *info)
{
	struct image_buf b = {0};
	struct jpeg_info in;
	char why[256];
	size_t got = 0;
	uint64_t size = 0;
	int rc = image_read_head(run, path, 1 << 20, &b, &got, &size), bad = 0;

	if (rc == 0) {
		bad = jpeg_scan(b.p, got, &in, why, sizeof(why));
		if (bad && got < size) { /* APP segments past the first MiB: read it all */
			rc = image_read_head(run, path, size, &b, &got, &size);
			bad = rc == 0 && jpeg_scan(b.p, got, &in, why, sizeof(why));
		}
	}
	image_buf_free(&b);
	if (rc)
		return rc;
	if (bad)
		return run_fail(run, -FB_EFORMAT, "jpeg: bad image '%s': %s", path, why);
	rc = image_check_size(run, "jpeg", path, in.width, in.height, in.comps == 1 ? 1 : 4);
	if (rc)
		return rc;
	info->nsamples = 1;
	info->max_sample = (uint64_t)in.width * in.height *
			   (in.comps == 1   ? 1
			    : in.comps == 4 ? 4
					    : 3);
	info->data_bytes = info->max_sample;
	snprintf(info->detail, sizeof(info->detail), "jpeg %ux%u, %u component%s, %u-bit", in.width,
		 in.height, in.comps, in.comps == 1 ? "" : "s", in.precision);
	return 0;
}

static const char *const jpeg_globs[] = {".jpeg", ".jpg", NULL};

const struct format_ops jpeg_format = {
    .version = FORMAT_OPS_VERSION,
    .name = "jpeg",
    .ext = ".jpeg",
    .globs = jpeg_globs,
    .caps = FORMAT_CAP_FILE_PER_SAMPLE | FORMAT_CAP_DECODES,
    .shared_note = "jpeg stores one image per file, so ranks have nothing to share; use "
		   "file_access = per_rank",
    .create = jpeg_create,
    .append = jpeg_append,
    .finish = fgen_one_finish,
    .open = jpeg_open,
    .read_sample = jpeg_read_sample,
    .close = jpeg_close,
    .probe = jpeg_probe,
};

#else

const struct format_ops jpeg_format = {
    .version = FORMAT_OPS_VERSION,
    .name = "jpeg",
    .ext = ".jpeg",
    .not_built = "libturbojpeg not found: Debian libturbojpeg0-dev",
};

#endif
