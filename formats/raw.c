/* raw: samples stored back to back, nothing else. The reference format: the sample header
 * inside every sample is the only structure, so its reads are pure byte ranges.
 */
#include "format.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "sample.h"

struct raw_gen {
	struct run *run;
	struct ds_file *file;
	struct io io;
	struct sfile *sf;
	const uint64_t *offsets; /* NULL: fixed-size samples */
	uint64_t *owned;
};

struct raw_reader {
	struct freader_file b; /* first: freader_file_open() */
};

/* Per-file offsets when sizes vary (8 bytes per sample); NULL when every sample has the same
 * size and the offset is index * size. */
static int raw_offsets(struct run *run, struct ds_file *file, uint64_t **out)
{
	const struct dataset *ds = &run->ds;
	uint64_t *off, pos = 0;

	*out = NULL;
	if (ds->rec_stdev == 0)
		return 0;
	off = malloc((file->nsamples + 1) * sizeof(*off));
	if (!off)
		return run_fail(run, -ENOMEM, "out of memory indexing '%s'", file->path);
	for (uint64_t i = 0; i < file->nsamples; i++) {
		off[i] = pos;
		pos += dataset_sample_size(ds, file->index, i);
	}
	off[file->nsamples] = pos;
	*out = off;
	return 0;
}

static uint64_t raw_offset(const struct run *run, const struct ds_file *file,
			   const uint64_t *offsets, uint64_t index)
{
	return offsets ? offsets[index] : index * run->ds.rec_mean;
}

static int raw_create(struct fgen **out, struct run *run, struct ds_file *file, unsigned flags)
{
	struct raw_gen *g = calloc(1, sizeof(*g));
	int rc, oflags = STORAGE_O_WRITE;

	if (!g)
		return run_fail(run, -ENOMEM, "out of memory");
	g->run = run;
	g->file = file;
	g->io = (struct io){.run = run};
	if (flags & FGEN_COLLECTIVE)
		oflags |= STORAGE_O_SHARED | STORAGE_O_NOTRUNC; /* ranks write disjoint ranges */
	rc = raw_offsets(run, file, &g->owned);
	if (rc == 0)
		rc = io_open(&g->io, &g->sf, file->path, oflags);
	if (rc < 0) {
		free(g->owned);
		free(g);
		return rc;
	}
	g->offsets = g->owned;
	*out = (struct fgen *)g;
	return 0;
}

static int raw_append(struct fgen *fg, uint64_t index, const void *sample, size_t len)
{
	struct raw_gen *g = (struct raw_gen *)fg;

	return io_pwrite(&g->io, g->sf, sample, len,
			 raw_offset(g->run, g->file, g->offsets, index));
}

static int raw_finish(struct fgen *fg)
{
	struct raw_gen *g = (struct raw_gen *)fg;
	int rc = io_sync(&g->io, g->sf);
	/* Closed even after a failed fsync; a shared handle closes collectively (mpiio). */
	int crc = io_close(&g->io, g->sf);

	if (rc == 0)
		rc = crc;
	free(g->owned);
	free(g);
	return rc;
}

static int raw_index(struct run *run, struct ds_file *file)
{
	uint64_t *off;
	int rc = raw_offsets(run, file, &off);

	if (rc == 0)
		file->meta = off;
	return rc;
}

static void raw_unindex(struct ds_file *file)
{
	free(file->meta);
	file->meta = NULL;
}

static int raw_open(struct freader **out, struct run *run, struct ds_file *file, struct io *io)
{
	return freader_file_open(sizeof(struct raw_reader), run, file, io, (void **)out);
}

static int raw_extent(struct run *run, struct ds_file *file, uint64_t index, uint64_t *off,
		      uint64_t *len)
{
	const uint64_t *offsets = file->meta;

	*off = raw_offset(run, file, offsets, index);
	*len = offsets ? offsets[index + 1] - offsets[index] : run->ds.rec_mean;
	return 0;
}

static int raw_read_sample(struct freader *fr, uint64_t index, void *buf, size_t cap, size_t *len)
{
	struct raw_reader *r = (struct raw_reader *)fr;
	uint64_t off, n;

	raw_extent(r->b.run, r->b.file, index, &off, &n);
	if (n > cap)
		return run_fail(r->b.run, -FB_EINTERNAL,
				"sample of %" PRIu64 " bytes exceeds buffer", n);
	*len = n;
	return io_pread(r->b.io, r->b.sf, buf, n, off);
}

static int raw_close(struct freader *fr)
{
	struct raw_reader *r = (struct raw_reader *)fr;
	int rc = freader_file_close(&r->b);

	free(r);
	return rc;
}

const struct format_ops raw_format = {
    .version = FORMAT_OPS_VERSION,
    .name = "raw",
    .ext = ".bin",
    .caps = FORMAT_CAP_SHARED | FORMAT_CAP_PARALLEL_WRITE | FORMAT_CAP_DIRECT | FORMAT_CAP_MPIIO |
	    FORMAT_CAP_BYTE_RANGES,
    .create = raw_create,
    .append = raw_append,
    .finish = raw_finish,
    .index = raw_index,
    .unindex = raw_unindex,
    .open = raw_open,
    .read_sample = raw_read_sample,
    .close = raw_close,
    .extent = raw_extent,
};
