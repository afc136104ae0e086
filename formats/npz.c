/* npz: many samples per file, laid out as DLIO does: a ZIP (libzip, members stored, not
 * compressed) holding x.npy, uint8 of shape (dim1, dim2, samples), and y.npy, int64 labels.
 *
 * x is written in Fortran order so x[:, :, i] -- one sample -- is contiguous: a sample read is
 * one byte range. dim1 * dim2 is the largest sample of the file; smaller samples are padded
 * with zeros to it, and the sample header inside records the true length, which is what
 * read_sample() returns.
 *
 * [format.npz] read = sample finds x's data offset once per file in index() (central
 * directory, local header, NPY header) and reads byte ranges; read = whole reads the whole file
 * for every sample, as numpy.load does, and the bytes counted are the whole file.
 *
 * Files written by numpy (np.savez, either order) are read too: the sample axis is the last
 * one. DLIO's files (C order, one sample per file) hold each sample as one byte range, read in
 * one call like feedbench's own; with several samples per file a C-order sample is strided
 * and is gathered from reads of the rows covering it. The bytes delivered are the sample's
 * elements in the file's order, as the view numpy gives (x[..., i]) holds them, except with
 * verify = true, when they are put in Fortran order -- feedbench's order, whose sample header
 * and CRC can then be checked whichever order the file was rewritten in.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zip.h>

#include "format.h"
#include "npy.h"
#include "../bench/errors.h"
#include "../bench/run.h"
#include "../bench/storage/storage.h"

#define NPZ_EOCD_BYTES	     22
#define NPZ_EOCD64_BYTES     56
#define NPZ_LOCATOR_BYTES    20
#define NPZ_CDIR_ENTRY_BYTES 46
#define NPZ_LOCAL_BYTES	     30
#define NPZ_CDIR_MAX	     (16u << 20) /* central directory larger than this: not an npz */
#define NPZ_GATHER_BYTES     (4u << 20)	 /* read size when gathering a strided (C order) sample */
#define NPZ_ZEROS_BYTES	     (1u << 20)	 /* padding is fed to libzip in pieces of this size */

/* Where the samples of one file are, found once per file and rank by index(). */
struct npz_meta {
	uint64_t file_size;
	uint64_t x_off; /* file offset of x's first data byte */
	uint64_t n;	/* samples: the last axis of x */
	uint64_t L;	/* bytes per sample (elems * itemsize) */
	uint64_t itemsize;
	uint64_t elems; /* elements per sample */
	bool range;	/* sample i is the L bytes at x_off + i * L (Fortran order, or n == 1) */
	bool c_order;	/* elements in C order, which differs from Fortran order for a sample */
	int sdims;	/* dimensions of a sample (x's without the last) */
	uint64_t shape[NPY_MAX_DIMS];
	char member[64]; /* "x.npy" */
	char detail[256];
};

static uint16_t npz_le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t npz_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t npz_le64(const unsigned char *p)
{
	return (uint64_t)npz_le32(p) | (uint64_t)npz_le32(p + 4) << 32;
}

/* ---- finding x.npy in a zip ----------------------------------------------------------- */

/* A member of the central directory. */
struct npz_entry {
	char name[256];
	uint16_t flags, method;
	uint64_t csize, usize, local; /* compressed and uncompressed size, local header offset */
	uint64_t at;		      /* offset of the central directory entry */
};

/* Reads the end of central directory record (and the zip64 one when present): where the
 * central directory is and how large. */
static int npz_find_cdir(struct run *run, struct io *io, struct sfile *f, const char *path,
			 uint64_t size, uint64_t *cd_off, uint64_t *cd_size)
{
	unsigned char *tail, z64[NPZ_EOCD64_BYTES];
	uint64_t tlen, tstart, eocd = 0, loc;
	bool found = false;
	int rc;

	tlen = size < NPZ_EOCD_BYTES + 65535 + NPZ_LOCATOR_BYTES
		   ? size
		   : NPZ_EOCD_BYTES + 65535 + NPZ_LOCATOR_BYTES;
	tstart = size - tlen;
	if (tlen < NPZ_EOCD_BYTES)
		return run_fail(run, -FB_EFORMAT,
				"bad zip in '%s': %" PRIu64
				" bytes is too short for a zip at offset 0",
				path, size);
	tail = malloc(tlen);
	if (!tail)
		return run_fail(run, -ENOMEM, "cannot allocate zip directory of '%s'", path);
	rc = io_pread(io, f, tail, tlen, tstart);
	if (rc)
		goto out_free;
	for (uint64_t i = tlen - NPZ_EOCD_BYTES + 1; i-- > 0;) {
		if (npz_le32(tail + i) == 0x06054b50 &&
		    i + NPZ_EOCD_BYTES + npz_le16(tail + i + 20) <= tlen) {
			eocd = i;
			found = true;
			break;
		}
	}
	if (!found) {
		rc = run_fail(run, -FB_EFORMAT,
			      "bad zip in '%s': no end of central directory record (truncated "
			      "file?) at offset %" PRIu64,
			      path, size);
		goto out_free;
	}
	*cd_size = npz_le32(tail + eocd + 12);
	*cd_off = npz_le32(tail + eocd + 16);
	if (*cd_off == 0xffffffffu || *cd_size == 0xffffffffu ||
	    npz_le16(tail + eocd + 10) == 0xffff) {
		if (eocd < NPZ_LOCATOR_BYTES ||
		    npz_le32(tail + eocd - NPZ_LOCATOR_BYTES) != 0x07064b50) {
			rc = run_fail(run, -FB_EFORMAT,
				      "bad zip in '%s': zip64 locator missing at offset %" PRIu64,
				      path, tstart + eocd - NPZ_LOCATOR_BYTES);
			goto out_free;
		}
		loc = npz_le64(tail + eocd - NPZ_LOCATOR_BYTES + 8);
		if (loc > size || size - loc < NPZ_EOCD64_BYTES) {
			rc = run_fail(run, -FB_EFORMAT,
				      "bad zip in '%s': zip64 end record past the end of the file "
				      "at offset %" PRIu64,
				      path, loc);
			goto out_free;
		}
		rc = io_pread(io, f, z64, sizeof(z64), loc);
		if (rc)
			goto out_free;
		if (npz_le32(z64) != 0x06064b50) {
			rc = run_fail(run, -FB_EFORMAT,
				      "bad zip in '%s': bad zip64 end record signature at offset "
				      "%" PRIu64,
				      path, loc);
			goto out_free;
		}
		*cd_size = npz_le64(z64 + 40);
		*cd_off = npz_le64(z64 + 48);
	}
	if (*cd_off > size || *cd_size > size - *cd_off || *cd_size > NPZ_CDIR_MAX)
		rc = run_fail(run, -FB_EFORMAT,
			      "bad zip in '%s': central directory of %" PRIu64
			      " bytes at offset %" PRIu64 " does not fit the file of %" PRIu64
			      " bytes",
			      path, *cd_size, *cd_off, size);
out_free:
	free(tail);
	return rc;
}

/* Fills e from the central directory entry at cd + pos; zip64 extra fields replace the
 * 0xffffffff placeholders. Returns the entry's length or 0 when it is malformed. */
static size_t npz_parse_entry(const unsigned char *cd, size_t cdlen, size_t pos,
			      struct npz_entry *e)
{
	const unsigned char *p = cd + pos, *x, *end;
	size_t nlen, xlen, clen;

	if (cdlen - pos < NPZ_CDIR_ENTRY_BYTES || npz_le32(p) != 0x02014b50)
		return 0;
	e->flags = npz_le16(p + 8);
	e->method = npz_le16(p + 10);
	e->csize = npz_le32(p + 20);
	e->usize = npz_le32(p + 24);
	nlen = npz_le16(p + 28);
	xlen = npz_le16(p + 30);
	clen = npz_le16(p + 32);
	e->local = npz_le32(p + 42);
	if (cdlen - pos < NPZ_CDIR_ENTRY_BYTES + nlen + xlen + clen)
		return 0;
	snprintf(e->name, sizeof(e->name), "%.*s", (int)nlen, (const char *)p + 46);
	x = p + 46 + nlen;
	end = x + xlen;
	while (end - x >= 4) {
		uint16_t id = npz_le16(x), len = npz_le16(x + 2);
		const unsigned char *v = x + 4;

		if (len > end - v)
			return 0;
		if (id == 0x0001) {
			const unsigned char *vend = v + len;

			if (e->usize == 0xffffffffu && vend - v >= 8) {
				e->usize = npz_le64(v);
				v += 8;
			}
			if (e->csize == 0xffffffffu && vend - v >= 8) {
				e->csize = npz_le64(v);
				v += 8;
			}
			if (e->local == 0xffffffffu && vend - v >= 8)
				e->local = npz_le64(v);
		}
		x += 4 + len;
	}
	return NPZ_CDIR_ENTRY_BYTES + nlen + xlen + clen;
}

/* Picks x.npy (or the first .npy member of a zip written otherwise) from the central
 * directory; *nmembers counts every member. */
static int npz_pick_member(struct run *run, const char *path, const unsigned char *cd, size_t cdlen,
			   uint64_t cd_off, struct npz_entry *pick, int *nmembers)
{
	struct npz_entry e;
	bool found = false;
	size_t pos = 0, len;

	*nmembers = 0;
	while (pos < cdlen) {
		memset(&e, 0, sizeof(e));
		len = npz_parse_entry(cd, cdlen, pos, &e);
		if (!len)
			return run_fail(run, -FB_EFORMAT,
					"bad zip in '%s': bad central directory entry at offset "
					"%" PRIu64,
					path, cd_off + pos);
		e.at = cd_off + pos;
		(*nmembers)++;
		if (strcmp(e.name, "x.npy") == 0 ||
		    (!found && strlen(e.name) > 4 &&
		     strcmp(e.name + strlen(e.name) - 4, ".npy") == 0)) {
			*pick = e;
			found = strcmp(e.name, "x.npy") == 0 || !found;
		}
		pos += len;
	}
	if (!found)
		return run_fail(run, -FB_EFORMAT, "bad npz '%s': no .npy member (expected x.npy)",
				path);
	return 0;
}

/* The member must be stored (not encrypted, not compressed) and lie inside the file: its
 * local header is read, and *data set to the offset of its bytes (the NPY header). */
static int npz_member_data(struct run *run, struct io *io, struct sfile *f, const char *path,
			   const struct npz_entry *e, const struct npz_meta *m, uint64_t *data)
{
	unsigned char local[NPZ_LOCAL_BYTES];
	int rc;

	if (e->flags & 0x1)
		return run_fail(run, -FB_EFORMAT,
				"npz member '%s' in '%s' is encrypted at offset %" PRIu64, e->name,
				path, e->at);
	if (e->method != 0 || e->csize != e->usize)
		return run_fail(
		    run, -FB_EFORMAT,
		    "npz member '%s' in '%s' is compressed (method %u) at offset %" PRIu64
		    ": feedbench reads stored members (np.savez), not np.savez_compressed",
		    e->name, path, e->method, e->at);
	if (e->local > m->file_size || m->file_size - e->local < NPZ_LOCAL_BYTES)
		return run_fail(run, -FB_EFORMAT,
				"truncated npz member '%s' in '%s': local header at offset %" PRIu64
				" is past the end of the file (%" PRIu64 " bytes)",
				e->name, path, e->local, m->file_size);
	if ((rc = io_pread(io, f, local, sizeof(local), e->local)))
		return rc;
	if (npz_le32(local) != 0x04034b50)
		return run_fail(run, -FB_EFORMAT,
				"bad npz member '%s' in '%s': no local header signature at offset "
				"%" PRIu64,
				e->name, path, e->local);
	*data = e->local + NPZ_LOCAL_BYTES + npz_le16(local + 26) + npz_le16(local + 28);
	if (*data > m->file_size || m->file_size - *data < e->csize)
		return run_fail(run, -FB_EFORMAT,
				"truncated npz member '%s' in '%s': %" PRIu64
				" data bytes at offset %" PRIu64
				" end past the end of the file (%" PRIu64 " bytes)",
				e->name, path, e->csize, *data, m->file_size);
	return 0;
}

/* The sample geometry from the member's NPY header: samples along the last axis. */
static void npz_geometry(struct npz_meta *m, const struct npz_entry *e, const struct npy_header *h,
			 uint64_t data)
{
	char shape[200];
	int ndims_over1 = 0;

	m->x_off = data + h->data_off;
	m->n = h->shape[h->ndim - 1];
	m->itemsize = h->itemsize;
	m->elems = m->n ? h->nelem / m->n : 0;
	m->L = m->elems * h->itemsize;
	m->sdims = h->ndim - 1;
	memcpy(m->shape, h->shape, sizeof(m->shape));
	/* In C order a sample is strided unless it is one element or the whole array (n == 1,
	 * DLIO's files); its elements are in another order than Fortran's when two of its
	 * dimensions are longer than 1. */
	for (int d = 0; d < m->sdims; d++)
		ndims_over1 += m->shape[d] > 1;
	m->range = h->fortran || m->elems <= 1 || m->n == 1;
	m->c_order = !h->fortran && ndims_over1 > 1;
	snprintf(m->member, sizeof(m->member), "%.63s", e->name);
	npy_shape_str(h, shape, sizeof(shape));
	snprintf(m->detail, sizeof(m->detail), "npz %.63s v%u.%u %.40s %.100s %s order, stored",
		 e->name, h->major, h->minor, h->descr, shape, h->fortran ? "fortran" : "C");
}

/* Checks the member's local header and its NPY header; fills the sample geometry. */
static int npz_read_member(struct run *run, struct io *io, struct sfile *f, const char *path,
			   const struct npz_entry *e, struct npz_meta *m)
{
	char first[NPY_PREFIX_BYTES], why[256], shape[200];
	char *big = NULL;
	const char *hdr = first;
	struct npy_header h;
	uint64_t data = 0;
	size_t got;
	int rc;

	if ((rc = npz_member_data(run, io, f, path, e, m, &data)))
		return rc;
	got = e->csize < sizeof(first) ? e->csize : sizeof(first);
	rc = io_pread(io, f, first, got, data);
	if (rc)
		return rc;
	if (npy_preamble(first, got, data, &h, why, sizeof(why)))
		goto out_bad;
	if (h.data_off > got) {
		if (h.data_off > e->csize) {
			snprintf(why, sizeof(why),
				 "header of %" PRIu64
				 " bytes is longer than the member at offset %" PRIu64,
				 h.data_off, data);
			goto out_bad;
		}
		big = malloc(h.data_off);
		if (!big)
			return run_fail(run, -ENOMEM, "cannot allocate NPY header of '%s'", path);
		memcpy(big, first, got);
		rc = io_pread(io, f, big + got, h.data_off - got, data + got);
		if (rc)
			goto out_free;
		got = h.data_off;
		hdr = big;
	}
	if (npy_parse(hdr, got, data, &h, why, sizeof(why)))
		goto out_bad;
	if (e->csize - h.data_off != h.nbytes) {
		npy_shape_str(&h, shape, sizeof(shape));
		rc = run_fail(run, -FB_EFORMAT,
			      "bad NPY header in '%s' of '%s': shape %s × %" PRIu64
			      " bytes does not match %" PRIu64 " data bytes at offset %" PRIu64,
			      e->name, path, shape, h.itemsize, e->csize - h.data_off,
			      data + h.data_off);
		goto out_free;
	}
	if (h.ndim < 1 || h.itemsize == 0) {
		rc =
		    run_fail(run, -FB_EFORMAT,
			     "bad npz member '%s' in '%s': a %s array has no sample axis at offset "
			     "%" PRIu64,
			     e->name, path, h.ndim < 1 ? "0-d" : "zero-size item", data);
		goto out_free;
	}
	npz_geometry(m, e, &h, data);
	goto out_free;
out_bad:
	rc = run_fail(run, -FB_EFORMAT, "bad NPY header in '%s' of '%s': %s", e->name, path, why);
out_free:
	free(big);
	return rc;
}

/* Finds x.npy's data in an open npz: end of central directory (zip64 too), central
 * directory, local header, NPY header. */
static int npz_scan(struct run *run, struct io *io, struct sfile *f, const char *path,
		    struct npz_meta *m)
{
	struct npz_entry e = {0};
	unsigned char *cd;
	uint64_t cd_off = 0, cd_size = 0;
	int rc, nmembers;

	memset(m, 0, sizeof(*m));
	rc = io_size(io, f, &m->file_size);
	if (rc)
		return rc;
	rc = npz_find_cdir(run, io, f, path, m->file_size, &cd_off, &cd_size);
	if (rc)
		return rc;
	cd = malloc(cd_size ? cd_size : 1);
	if (!cd)
		return run_fail(run, -ENOMEM, "cannot allocate zip directory of '%s'", path);
	rc = io_pread(io, f, cd, cd_size, cd_off);
	if (!rc)
		rc = npz_pick_member(run, path, cd, cd_size, cd_off, &e, &nmembers);
	free(cd);
	if (!rc)
		rc = npz_read_member(run, io, f, path, &e, m);
	if (!rc && nmembers > 1) {
		size_t n = strlen(m->detail);

		snprintf(m->detail + n, sizeof(m->detail) - n, ", %d members", nmembers);
	}
	return rc;
}

/* ---- generation: libzip pulls x.npy from append() ------------------------------------- */

/* libzip writes the archive inside zip_close(), pulling member data from sources. To write
 * a file of any size without holding it in memory, zip_close() runs on a helper thread and
 * x.npy's source hands it the bytes append() is given, one sample at a time. */
struct fgen {
	struct run *run;
	struct ds_file *file;
	zip_t *za;
	zip_error_t zerr;
	pthread_t closer;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char hdr[NPY_PREFIX_BYTES * 2]; /* x.npy's NPY header, fed first */
	size_t hdr_len, hdr_pos;
	const unsigned char *chunk; /* bytes append() is waiting to hand over */
	size_t chunk_len;
	bool eof, abort, closed;
	int close_err; /* errno-style code of a failed zip_close() */
	char close_why[256];
	uint64_t L, n, next; /* bytes per sample, samples, next index to append */
	unsigned char *ybuf; /* y.npy: header + labels */
	unsigned char *zeros;
	size_t zeros_len;
};

static zip_int64_t npz_source_read(struct fgen *g, void *data, zip_uint64_t len)
{
	zip_int64_t n = 0;

	pthread_mutex_lock(&g->lock);
	if (g->hdr_pos < g->hdr_len) {
		n = (zip_int64_t)(len < g->hdr_len - g->hdr_pos ? len : g->hdr_len - g->hdr_pos);
		memcpy(data, g->hdr + g->hdr_pos, (size_t)n);
		g->hdr_pos += (size_t)n;
		goto out_unlock;
	}
	while (!g->chunk_len && !g->eof && !g->abort)
		pthread_cond_wait(&g->cond, &g->lock);
	if (g->abort) {
		zip_error_set(&g->zerr, ZIP_ER_CANCELLED, 0);
		n = -1;
	} else if (g->chunk_len) {
		n = (zip_int64_t)(len < g->chunk_len ? len : g->chunk_len);
		memcpy(data, g->chunk, (size_t)n);
		g->chunk += n;
		g->chunk_len -= (size_t)n;
		if (!g->chunk_len)
			pthread_cond_broadcast(&g->cond);
	}
out_unlock:
	pthread_mutex_unlock(&g->lock);
	return n;
}

static zip_int64_t npz_source(void *ud, void *data, zip_uint64_t len, zip_source_cmd_t cmd)
{
	struct fgen *g = ud;
	zip_stat_t *st;

	switch (cmd) {
	case ZIP_SOURCE_OPEN:
	case ZIP_SOURCE_CLOSE:
	case ZIP_SOURCE_FREE:
		return 0;
	case ZIP_SOURCE_READ:
		return npz_source_read(g, data, len);
	case ZIP_SOURCE_STAT:
		st = data;
		zip_stat_init(st);
		st->valid = ZIP_STAT_SIZE;
		st->size = g->hdr_len + g->n * g->L;
		return sizeof(*st);
	case ZIP_SOURCE_ERROR:
		return zip_error_to_data(&g->zerr, data, len);
	case ZIP_SOURCE_SUPPORTS:
		return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ,
						      ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
						      ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, -1);
	default:
		zip_error_set(&g->zerr, ZIP_ER_OPNOTSUPP, 0);
		return -1;
	}
}

static void *npz_closer(void *arg)
{
	struct fgen *g = arg;
	zip_error_t *ze;

	if (zip_close(g->za) < 0) {
		ze = zip_get_error(g->za);
		g->close_err = zip_error_system_type(ze) == ZIP_ET_SYS && zip_error_code_system(ze)
				   ? -zip_error_code_system(ze)
				   : -EIO;
		snprintf(g->close_why, sizeof(g->close_why), "%s", zip_error_strerror(ze));
		zip_discard(g->za);
	}
	g->za = NULL;
	pthread_mutex_lock(&g->lock);
	g->closed = true;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

/* Hands len bytes to libzip and waits until it has taken them. */
static int npz_feed(struct fgen *g, const void *p, size_t len)
{
	bool taken;

	pthread_mutex_lock(&g->lock);
	g->chunk = p;
	g->chunk_len = len;
	pthread_cond_broadcast(&g->cond);
	while (g->chunk_len && !g->closed)
		pthread_cond_wait(&g->cond, &g->lock);
	taken = !g->chunk_len;
	g->chunk_len = 0;
	pthread_mutex_unlock(&g->lock);
	if (taken)
		return 0;
	return run_fail(g->run, g->close_err ? g->close_err : -EIO, "cannot write '%s': %s",
			g->file->path, g->close_why[0] ? g->close_why : "zip writer stopped");
}

/* x.npy's (dim1, dim2): the divisor of L closest to its square root, as DLIO's square
 * images, and (1, L) for a prime. */
static void npz_dims(uint64_t L, uint64_t *d1, uint64_t *d2)
{
	uint64_t best = 1;

	for (uint64_t d = 1; d <= L / d; d++)
		if (L % d == 0)
			best = d;
	*d1 = best;
	*d2 = L / best;
}

/* y.npy: int64 labels, the global sample number (any deterministic label would do). */
static int npz_labels(struct fgen *g, size_t *len)
{
	char hdr[NPY_PREFIX_BYTES * 2];
	size_t hlen;

	hlen = npy_build(hdr, sizeof(hdr), "<i8", false, &g->n, 1);
	if (!hlen)
		return -FB_EINTERNAL;
	g->ybuf = malloc(hlen + g->n * 8);
	if (!g->ybuf)
		return -ENOMEM;
	memcpy(g->ybuf, hdr, hlen);
	for (uint64_t i = 0; i < g->n; i++) {
		uint64_t v = g->file->first + i;

		for (int b = 0; b < 8; b++)
			g->ybuf[hlen + i * 8 + b] = (unsigned char)(v >> (8 * b));
	}
	*len = hlen + g->n * 8;
	return 0;
}

/* Adds x.npy (streamed) and y.npy (in memory) to the archive, both stored. */
static int npz_add_members(struct fgen *g)
{
	zip_source_t *xs, *ys;
	zip_int64_t xi, yi;
	size_t ylen;
	int rc;

	rc = npz_labels(g, &ylen);
	if (rc)
		return run_fail(g->run, rc, "cannot build y.npy for '%s'", g->file->path);
	xs = zip_source_function(g->za, npz_source, g);
	if (!xs)
		goto out_zip;
	xi = zip_file_add(g->za, "x.npy", xs, ZIP_FL_ENC_UTF_8);
	if (xi < 0) {
		zip_source_free(xs);
		goto out_zip;
	}
	ys = zip_source_buffer(g->za, g->ybuf, ylen, 0);
	if (!ys)
		goto out_zip;
	yi = zip_file_add(g->za, "y.npy", ys, ZIP_FL_ENC_UTF_8);
	if (yi < 0) {
		zip_source_free(ys);
		goto out_zip;
	}
	if (zip_set_file_compression(g->za, (zip_uint64_t)xi, ZIP_CM_STORE, 0) ||
	    zip_set_file_compression(g->za, (zip_uint64_t)yi, ZIP_CM_STORE, 0))
		goto out_zip;
	return 0;
out_zip:
	return run_fail(g->run, -EIO, "cannot create '%s': %s", g->file->path, zip_strerror(g->za));
}

static void npz_gen_free(struct fgen *g)
{
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
	zip_error_fini(&g->zerr);
	free(g->zeros);
	free(g->ybuf);
	free(g);
}

static int npz_create(struct fgen **gp, struct run *run, struct ds_file *file, unsigned flags)
{
	struct fgen *g;
	uint64_t shape[3];
	int zerr, rc;

	g = calloc(1, sizeof(*g));
	if (!g)
		return run_fail(run, -ENOMEM, "cannot allocate npz writer for '%s'", file->path);
	g->run = run;
	g->file = file;
	g->n = file->nsamples;
	for (uint64_t i = 0; i < g->n; i++) {
		uint64_t s = dataset_sample_size(&run->ds, file->index, i);

		g->L = s > g->L ? s : g->L;
	}
	npz_dims(g->L, &shape[0], &shape[1]);
	shape[2] = g->n;
	g->hdr_len = npy_build(g->hdr, sizeof(g->hdr), "|u1", true, shape, 3);
	g->zeros_len = g->L < NPZ_ZEROS_BYTES ? g->L : NPZ_ZEROS_BYTES;
	g->zeros = calloc(1, g->zeros_len ? g->zeros_len : 1);
	zip_error_init(&g->zerr);
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	if (!g->hdr_len || !g->zeros) {
		rc = run_fail(run, -ENOMEM, "cannot set up npz writer for '%s'", file->path);
		goto out_free;
	}
	g->za = zip_open(file->path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
	if (!g->za) {
		zip_error_t ze;

		zip_error_init_with_code(&ze, zerr);
		rc = run_fail(run,
			      zip_error_system_type(&ze) == ZIP_ET_SYS ? -zip_error_code_system(&ze)
								       : -EIO,
			      "cannot create '%s': %s", file->path, zip_error_strerror(&ze));
		zip_error_fini(&ze);
		goto out_free;
	}
	rc = npz_add_members(g);
	if (rc)
		goto out_discard;
	rc = pthread_create(&g->closer, NULL, npz_closer, g);
	if (rc) {
		rc = run_fail(run, -rc, "cannot start npz writer thread for '%s'", file->path);
		goto out_discard;
	}
	*gp = g;
	return 0;
out_discard:
	zip_discard(g->za);
out_free:
	npz_gen_free(g);
	return rc;
}

static int npz_append(struct fgen *g, uint64_t index, const void *sample, size_t len)
{
	uint64_t pad;
	int rc;

	if (index != g->next || index >= g->n || len > g->L)
		return run_fail(g->run, -FB_EINTERNAL,
				"npz '%s': sample %" PRIu64 " of %zu bytes appended out of order "
				"(expected %" PRIu64 " of at most %" PRIu64 " bytes)",
				g->file->path, index, len, g->next, g->L);
	rc = npz_feed(g, sample, len);
	for (pad = g->L - len; !rc && pad; pad -= pad < g->zeros_len ? pad : g->zeros_len)
		rc = npz_feed(g, g->zeros, pad < g->zeros_len ? pad : g->zeros_len);
	if (!rc)
		g->next++;
	return rc;
}

/* Ends the stream, waits for zip_close() and makes the file durable: open, fsync, close
 * through the storage wrappers, so a full disk or an I/O error is fatal. */
static int npz_finish(struct fgen *g)
{
	struct io io = {.run = g->run};
	struct sfile *f;
	int rc = 0, rc2;

	pthread_mutex_lock(&g->lock);
	if (g->next == g->n)
		g->eof = true;
	else
		g->abort = true;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->closer, NULL);
	if (g->next != g->n)
		rc = run_fail(g->run, -FB_EINTERNAL,
			      "npz '%s' finished after %" PRIu64 " of %" PRIu64 " samples",
			      g->file->path, g->next, g->n);
	else if (g->close_err)
		rc = run_fail(g->run, g->close_err, "cannot write '%s': %s", g->file->path,
			      g->close_why);
	if (!rc) {
		rc = io_open(&io, &f, g->file->path, STORAGE_O_WRITE | STORAGE_O_NOTRUNC);
		if (!rc) {
			rc = io_sync(&io, f);
			rc2 = io_close(&io, f);
			rc = rc ? rc : rc2;
		}
	}
	npz_gen_free(g);
	return rc;
}

/* ---- reading -------------------------------------------------------------------------- */

static int npz_index(struct run *run, struct ds_file *file)
{
	struct io io = {.run = run};
	struct npz_meta *m;
	struct sfile *f;
	int rc, rc2;

	m = calloc(1, sizeof(*m));
	if (!m)
		return run_fail(run, -ENOMEM, "cannot allocate npz index of '%s'", file->path);
	rc = io_open(&io, &f, file->path, STORAGE_O_READ);
	if (rc)
		goto out_free;
	rc = npz_scan(run, &io, f, file->path, m);
	rc2 = io_close(&io, f);
	rc = rc ? rc : rc2;
	if (!rc && run->ds.generated && (m->n != file->nsamples || m->L < file->max_sample))
		rc = run_fail(run, -FB_EDATASET,
			      "npz '%s' holds %" PRIu64 " samples of %" PRIu64
			      " bytes; the dataset expects %" PRIu64 " of up to %" PRIu64 " bytes",
			      file->path, m->n, m->L, file->nsamples, file->max_sample);
	if (rc)
		goto out_free;
	file->meta = m;
	return 0;
out_free:
	free(m);
	return rc;
}

static void npz_unindex(struct ds_file *file)
{
	free(file->meta);
	file->meta = NULL;
}

struct freader {
	struct run *run;
	struct io *io;
	struct ds_file *file;
	const struct npz_meta *m;
	struct sfile *f;
	unsigned char *scratch;
	size_t scratch_cap;
};

static int npz_open(struct freader **rp, struct run *run, struct ds_file *file, struct io *io)
{
	struct freader *r;
	int rc;

	if (!file->meta)
		return run_fail(run, -FB_EINTERNAL, "npz '%s' read before it was indexed",
				file->path);
	r = calloc(1, sizeof(*r));
	if (!r)
		return run_fail(run, -ENOMEM, "cannot allocate npz reader for '%s'", file->path);
	r->run = run;
	r->io = io;
	r->file = file;
	r->m = file->meta;
	rc = io_open_file(io, file, &r->f);
	if (rc) {
		free(r);
		return rc;
	}
	*rp = r;
	return 0;
}

static int npz_scratch(struct freader *r, uint64_t len)
{
	void *p;

	if (len <= r->scratch_cap)
		return 0;
	p = realloc(r->scratch, len);
	if (!p)
		return run_fail(r->run, -ENOMEM, "cannot allocate %" PRIu64 " bytes to read '%s'",
				len, r->file->path);
	r->scratch = p;
	r->scratch_cap = len;
	return 0;
}

/* Bytes of sample i: generated samples are padded to the largest of their file and only
 * their own bytes are read (the sample header records the same length); samples of files
 * written by other tools are the whole x[..., i]. */
static uint64_t npz_sample_len(const struct run *run, const struct ds_file *file,
			       const struct npz_meta *m, uint64_t i)
{
	uint64_t len;

	if (!run->ds.generated)
		return m->L;
	len = dataset_sample_size(&run->ds, file->index, i);
	return len < m->L ? len : m->L;
}

/* Sample elements go to the output in the file's order, or in Fortran order (verify = true
 * on a C-order file: the same array stored in either order then gives the same sample
 * bytes). npz_place walks the sample's elements in C order, keeping its Fortran position as an
 * odometer (no division per element), so a strided sample can be placed piece by piece. */
struct npz_place {
	const struct npz_meta *m;
	bool fortran;		     /* output in Fortran order */
	uint64_t c, f;		     /* next element: C position, its Fortran position */
	uint64_t idx[NPY_MAX_DIMS];  /* its index along each sample dimension */
	uint64_t fmul[NPY_MAX_DIMS]; /* Fortran stride of each dimension, in elements */
};

static void npz_place_init(struct npz_place *p, const struct npz_meta *m, bool fortran)
{
	uint64_t mul = 1;

	memset(p, 0, sizeof(*p));
	p->m = m;
	p->fortran = fortran && m->c_order;
	for (int d = 0; d < m->sdims; d++) {
		p->fmul[d] = mul;
		mul *= m->shape[d];
	}
}

/* Copies the next `count` elements, found `stride` bytes apart in src, to out. */
static void npz_place(struct npz_place *p, const unsigned char *src, uint64_t stride,
		      uint64_t count, unsigned char *out)
{
	const struct npz_meta *m = p->m;
	uint64_t size = m->itemsize;
	int last = m->sdims - 1;

	if (!p->fortran && stride == size) { /* contiguous in, contiguous out */
		memcpy(out + p->c * size, src, count * size);
		p->c += count;
		return;
	}
	if (!p->fortran) {
		unsigned char *o = out + p->c * size;

		if (size == 1)
			for (uint64_t k = 0; k < count; k++)
				o[k] = src[k * stride];
		else
			for (uint64_t k = 0; k < count; k++)
				memcpy(o + k * size, src + k * stride, size);
		p->c += count;
		return;
	}
	for (uint64_t k = 0; k < count; k++) {
		if (size == 1)
			out[p->f] = src[k * stride];
		else
			memcpy(out + p->f * size, src + k * stride, size);
		p->c++;
		for (int d = last; d >= 0; d--) {
			p->f += p->fmul[d];
			if (++p->idx[d] < m->shape[d])
				break;
			p->f -= m->shape[d] * p->fmul[d];
			p->idx[d] = 0;
		}
	}
}

/* Bytes of sample i placed into out, from raw holding the file's bytes from raw_off on. */
static void npz_extract(const struct npz_meta *m, uint64_t i, const unsigned char *raw,
			uint64_t raw_off, unsigned char *out, bool fortran)
{
	struct npz_place p;

	npz_place_init(&p, m, fortran);
	if (m->range)
		npz_place(&p, raw + (m->x_off + i * m->L - raw_off), m->itemsize, m->elems, out);
	else
		npz_place(&p, raw + (m->x_off + i * m->itemsize - raw_off), m->n * m->itemsize,
			  m->elems, out);
}

/* A strided sample (C order, several samples per file), gathered from reads of
 * NPZ_GATHER_BYTES covering whole rows: such a file costs close to a read of the whole array
 * for every sample. */
static int npz_gather(struct freader *r, uint64_t i, unsigned char *out, bool fortran)
{
	const struct npz_meta *m = r->m;
	uint64_t stride = m->n * m->itemsize, rows, off, len;
	struct npz_place p;
	int rc;

	rows = stride >= NPZ_GATHER_BYTES ? 1 : NPZ_GATHER_BYTES / stride;
	rc = npz_scratch(r, rows * stride);
	if (rc)
		return rc;
	npz_place_init(&p, m, fortran);
	for (uint64_t c0 = 0; c0 < m->elems; c0 += rows) {
		uint64_t c1 = c0 + rows < m->elems ? c0 + rows : m->elems;

		off = m->x_off + c0 * stride + i * m->itemsize;
		len = (c1 - c0 - 1) * stride + m->itemsize;
		rc = io_pread(r->io, r->f, r->scratch, len, off);
		if (rc)
			return rc;
		npz_place(&p, r->scratch, stride, c1 - c0, out);
	}
	return 0;
}

static int npz_read_sample(struct freader *r, uint64_t index, void *buf, size_t cap, size_t *len)
{
	const struct npz_meta *m = r->m;
	bool fortran;
	uint64_t n;
	int rc;

	if (index >= m->n)
		return run_fail(r->run, -FB_EINTERNAL,
				"npz '%s' holds %" PRIu64 " samples; asked for sample %" PRIu64,
				r->file->path, m->n, index);
	if (m->L > cap)
		return run_fail(r->run, -FB_EDATASET,
				"sample of %" PRIu64
				" bytes in '%s' exceeds the %zu-byte sample buffer",
				m->L, r->file->path, cap);
	n = npz_sample_len(r->run, r->file, m, index);
	fortran = r->run->cfg.dataset.verify && m->c_order;
	if (r->run->cfg.npz.read == NPZ_READ_WHOLE) {
		rc = npz_scratch(r, m->file_size);
		if (!rc)
			rc = io_pread(r->io, r->f, r->scratch, m->file_size, 0);
		if (!rc)
			npz_extract(m, index, r->scratch, 0, buf, fortran);
	} else if (m->range && !fortran) {
		rc = io_pread(r->io, r->f, buf, n, m->x_off + index * m->L);
	} else if (m->range) { /* one read, then the elements in Fortran order */
		rc = npz_scratch(r, m->L);
		if (!rc)
			rc = io_pread(r->io, r->f, r->scratch, m->L, m->x_off + index * m->L);
		if (!rc)
			npz_extract(m, index, r->scratch, m->x_off + index * m->L, buf, true);
	} else {
		rc = npz_gather(r, index, buf, fortran);
	}
	if (rc)
		return rc;
	*len = n;
	return 0;
}

static int npz_close(struct freader *r)
{
	int rc = io_close_file(r->io, r->file, r->f);

	free(r->scratch);
	free(r);
	return rc;
}

/* The sample's byte range, for collective MPI-IO reads (also with read = whole: collective
 * reads are byte-range reads). Strided samples (C order) have no single range: -ENOTSUP. */
static int npz_extent(struct run *run, struct ds_file *file, uint64_t index, uint64_t *off,
		      uint64_t *len)
{
	const struct npz_meta *m = file->meta;

	if (!m || index >= m->n)
		return run_fail(run, -FB_EINTERNAL, "npz '%s': no extent for sample %" PRIu64,
				file->path, index);
	/* No message: train.c asks for extents to name the offset of a verification failure.
	 * A range in C order is the sample as numpy's view holds it; with verify = true the
	 * sample is in Fortran order, which no byte range holds. */
	if (!m->range || (m->c_order && run->cfg.dataset.verify))
		return -ENOTSUP;
	*off = m->x_off + index * m->L;
	*len = npz_sample_len(run, file, m, index);
	return 0;
}

static int npz_probe(struct run *run, const char *path, struct probe_info *info)
{
	struct io io = {.run = run};
	struct npz_meta m;
	struct sfile *f;
	int rc, rc2;

	rc = io_open(&io, &f, path, STORAGE_O_READ);
	if (rc)
		return rc;
	rc = npz_scan(run, &io, f, path, &m);
	rc2 = io_close(&io, f);
	if (rc || rc2)
		return rc ? rc : rc2;
	info->nsamples = m.n;
	info->max_sample = m.L;
	info->data_bytes = m.n * m.L;
	snprintf(info->detail, sizeof(info->detail), "%s", m.detail);
	return 0;
}

static const char *const npz_globs[] = {".npz", NULL};

const struct format_ops npz_format = {
    .version = FORMAT_OPS_VERSION,
    .name = "npz",
    .ext = ".npz",
    .globs = npz_globs,
    .caps = FORMAT_CAP_SHARED | FORMAT_CAP_MPIIO | FORMAT_CAP_RENAMES | FORMAT_CAP_WRITES_BY_PATH,
    .create = npz_create,
    .append = npz_append,
    .finish = npz_finish,
    .index = npz_index,
    .unindex = npz_unindex,
    .open = npz_open,
    .read_sample = npz_read_sample,
    .close = npz_close,
    .probe = npz_probe,
    .extent = npz_extent,
};
