/* npy: one sample per file, a 1-D uint8 array of the sample's bytes (numpy.save layout).
 *
 * The "millions of small files" case: every sample read is an open (timed by the core as
 * metadata), a read of the header, a read of the data range and a close. Files written by
 * numpy (any dtype, any shape, versions 1.0 to 3.0) are read too: the sample is then the raw
 * data bytes of the array.
 */
#include "npy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "../bench/errors.h"
#include "../bench/run.h"
#include "../bench/storage/storage.h"

/* ---- generation ----------------------------------------------------------------------- */

struct fgen {
	struct fgen_one one;
};

static int npy_create(struct fgen **gp, struct run *run, struct ds_file *file, unsigned flags)
{
	(void)flags;
	return fgen_one_create(gp, run, file, "npy");
}

static int npy_append(struct fgen *g, uint64_t index, const void *sample, size_t len)
{
	struct fgen_one *o = &g->one;
	char hdr[NPY_PREFIX_BYTES * 2];
	uint64_t shape = len;
	size_t hlen;
	int rc;

	if ((rc = fgen_one_check(o, index)))
		return rc;
	hlen = npy_build(hdr, sizeof(hdr), "|u1", false, &shape, 1);
	if (!hlen)
		return run_fail(o->run, -FB_EINTERNAL, "npy header for '%s' does not fit",
				o->file->path);
	rc = io_pwrite(&o->io, o->f, hdr, hlen, 0);
	if (!rc)
		rc = io_pwrite(&o->io, o->f, sample, len, hlen);
	o->written = rc == 0;
	return rc;
}

/* ---- reading -------------------------------------------------------------------------- */

struct freader {
	struct run *run;
	struct io *io;
	struct sfile *f;
	const char *path;
	struct npy_header h;
};

/* Reads and checks the header of an open file: one read of NPY_PREFIX_BYTES (numpy's usual
 * header size), a second only for longer headers. The data must fill the file exactly. */
static int npy_read_header(struct run *run, struct io *io, struct sfile *f, const char *path,
			   struct npy_header *h)
{
	char first[NPY_PREFIX_BYTES], why[256], shape[256];
	char *big = NULL;
	const char *hdr = first;
	uint64_t size;
	size_t got, more;
	int rc;

	rc = io_pread_upto(io, f, first, sizeof(first), 0, &got);
	if (rc)
		return rc;
	if (npy_preamble(first, got, 0, h, why, sizeof(why)))
		return run_fail(run, -FB_EFORMAT, "bad NPY header in '%s': %s", path, why);
	if (h->data_off > got) {
		big = malloc(h->data_off);
		if (!big)
			return run_fail(run, -ENOMEM, "cannot allocate NPY header of '%s'", path);
		memcpy(big, first, got);
		rc = io_pread_upto(io, f, big + got, h->data_off - got, got, &more);
		if (rc)
			goto out_free;
		got += more;
		hdr = big;
	}
	if (npy_parse(hdr, got, 0, h, why, sizeof(why))) {
		rc = run_fail(run, -FB_EFORMAT, "bad NPY header in '%s': %s", path, why);
		goto out_free;
	}
	rc = io_size(io, f, &size);
	if (rc)
		goto out_free;
	if (size < h->data_off || size - h->data_off != h->nbytes) {
		npy_shape_str(h, shape, sizeof(shape));
		rc = run_fail(run, -FB_EFORMAT,
			      "bad NPY header in '%s': shape %s × %" PRIu64
			      " bytes does not match %" PRIu64 " data bytes at offset %" PRIu64,
			      path, shape, h->itemsize, size > h->data_off ? size - h->data_off : 0,
			      h->data_off);
		goto out_free;
	}
out_free:
	free(big);
	return rc;
}

static int npy_open(struct freader **rp, struct run *run, struct ds_file *file, struct io *io)
{
	struct freader *r;
	int rc;

	r = calloc(1, sizeof(*r));
	if (!r)
		return run_fail(run, -ENOMEM, "cannot allocate npy reader for '%s'", file->path);
	r->run = run;
	r->io = io;
	r->path = file->path;
	rc = io_open(io, &r->f, file->path, STORAGE_O_READ);
	if (rc)
		goto out_free;
	rc = npy_read_header(run, io, r->f, file->path, &r->h);
	if (rc)
		goto out_close;
	*rp = r;
	return 0;
out_close:
	io_close(io, r->f);
out_free:
	free(r);
	return rc;
}

static int npy_read_sample(struct freader *r, uint64_t index, void *buf, size_t cap, size_t *len)
{
	int rc;

	if (index != 0)
		return run_fail(r->run, -FB_EINTERNAL,
				"npy file '%s' holds one sample; asked for sample %" PRIu64,
				r->path, index);
	if (r->h.nbytes > cap)
		return run_fail(r->run, -FB_EDATASET,
				"array of %" PRIu64
				" bytes in '%s' exceeds the %zu-byte sample buffer",
				r->h.nbytes, r->path, cap);
	rc = io_pread(r->io, r->f, buf, r->h.nbytes, r->h.data_off);
	if (rc)
		return rc;
	*len = r->h.nbytes;
	return 0;
}

static int npy_close(struct freader *r)
{
	int rc = io_close(r->io, r->f);

	free(r);
	return rc;
}

/* Where the sample lies in a file feedbench wrote (its header has a known length): for
 * collective reads and for naming the file offset of a verification failure. The data
 * offset of a file written by another tool is known only once its header is read:
 * -ENOTSUP. */
static int npy_extent(struct run *run, struct ds_file *file, uint64_t index, uint64_t *off,
		      uint64_t *len)
{
	char hdr[NPY_PREFIX_BYTES * 2];
	uint64_t n;

	/* No message: train.c asks for extents to name the offset of a verification failure. */
	if (!run->ds.generated || index != 0)
		return -ENOTSUP;
	n = dataset_sample_size(&run->ds, file->index, 0);
	*off = npy_build(hdr, sizeof(hdr), "|u1", false, &n, 1);
	*len = n;
	return 0;
}

static int npy_probe(struct run *run, const char *path, struct probe_info *info)
{
	struct io io = {.run = run};
	struct npy_header h;
	struct sfile *f;
	char shape[200];
	int rc, rc2;

	rc = io_open(&io, &f, path, STORAGE_O_READ);
	if (rc)
		return rc;
	rc = npy_read_header(run, &io, f, path, &h);
	rc2 = io_close(&io, f);
	if (rc || rc2)
		return rc ? rc : rc2;
	npy_shape_str(&h, shape, sizeof(shape));
	info->nsamples = 1;
	info->max_sample = h.nbytes;
	info->data_bytes = h.nbytes;
	snprintf(info->detail, sizeof(info->detail), "npy v%u.%u %.63s %.150s%s", h.major, h.minor,
		 h.descr, shape, h.fortran ? " fortran" : "");
	return 0;
}

static const char *const npy_globs[] = {".npy", NULL};

const struct format_ops npy_format = {
    .version = FORMAT_OPS_VERSION,
    .name = "npy",
    .ext = ".npy",
    .globs = npy_globs,
    .caps = FORMAT_CAP_FILE_PER_SAMPLE | FORMAT_CAP_MPIIO,
    .shared_note = "npy stores one sample per file, so ranks have nothing to share; use "
		   "file_access = per_rank, or npz for many samples per file",
    .create = npy_create,
    .append = npy_append,
    .finish = fgen_one_finish,
    .open = npy_open,
    .read_sample = npy_read_sample,
    .close = npy_close,
    .probe = npy_probe,
    .extent = npy_extent,
};
