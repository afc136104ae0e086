/* Collective MPI-IO reads: every rank reads its samples of one shared file in one
 * MPI_File_read_all, so the MPI library can merge the ranks' requests (two-phase I/O,
 * collective buffering) the way training frameworks built on MPI-IO do.
 *
 * Each rank describes its samples' byte ranges (the format's extent()) as an hindexed file
 * type, sorted by offset because MPI requires monotonically non-decreasing displacements in a
 * file view, reads them into one staging buffer and hands each sample to its slot (through the
 * format's parse() when the bytes on disk are not the sample itself, as in TFRecord).
 *
 * Called by the main thread, per batch and per shared file, by every rank in the same order:
 * collectives on one file handle must be. Reader threads are not used in this mode. A rank
 * that cannot take part properly (no extent, a bad index) still joins every collective call
 * with an empty request, so the others never wait for it; it reports its error afterwards.
 */
#include "workloads.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/run.h"
#include "../bench/timer.h"
#include "../bench/storage/mpiio.h"

struct coll_range {
	uint64_t off;
	uint64_t len;
	uint64_t i;	/* position in the caller's idx[] */
	uint64_t stage; /* offset of its bytes in the staging buffer */
	bool dup;	/* same range as the one before: read once */
};

static int coll_cmp(const void *a, const void *b)
{
	const struct coll_range *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Collects and sorts the ranges; assigns staging offsets (a repeated sample is read once). */
static int coll_plan(struct run *run, struct ds_file *file, const uint64_t *idx, uint64_t n,
		     struct coll_range *r, uint64_t *nblocks, uint64_t *total)
{
	const struct format_ops *fmt = run->format;
	uint64_t end = 0;

	*nblocks = 0;
	*total = 0;
	for (uint64_t i = 0; i < n; i++) {
		int rc = fmt->extent(run, file, idx[i], &r[i].off, &r[i].len);

		if (rc)
			/* fb_fail keeps a message the format recorded; this one only fills a gap.
			 */
			return run_fail(run, rc,
					"cannot read sample %" PRIu64
					" of '%s' collectively: it has no single byte range (%s)",
					idx[i], file->path, fb_strerror(rc));
		if (r[i].len > INT_MAX)
			return run_fail(run, -EOVERFLOW,
					"cannot read sample %" PRIu64
					" of '%s' collectively: %" PRIu64
					" bytes is more than one MPI block can hold",
					idx[i], file->path, r[i].len);
		r[i].i = i;
	}
	qsort(r, n, sizeof(*r), coll_cmp);
	for (uint64_t k = 0; k < n; k++) {
		if (k > 0 && r[k].off == r[k - 1].off && r[k].len == r[k - 1].len) {
			r[k].stage = r[k - 1].stage;
			r[k].dup = true;
			continue;
		}
		if (k > 0 && r[k].off < end)
			return run_fail(run, -FB_EINTERNAL,
					"samples of '%s' overlap at offset %" PRIu64
					": cannot read them collectively",
					file->path, r[k].off);
		r[k].stage = *total;
		*total += r[k].len;
		end = r[k].off + r[k].len;
		(*nblocks)++;
	}
	if (*total > INT_MAX)
		return run_fail(run, -EOVERFLOW,
				"cannot read %" PRIu64
				" bytes of '%s' in one collective call (at most "
				"2 GiB per rank, file and batch): lower batch_size",
				*total, file->path);
	return 0;
}

/* The file type of the distinct ranges (absolute offsets as displacements). */
static int coll_filetype(const struct coll_range *r, uint64_t n, uint64_t nblocks,
			 MPI_Datatype *type)
{
	int *lens = malloc(sizeof(*lens) * (nblocks ? nblocks : 1));
	MPI_Aint *disp = malloc(sizeof(*disp) * (nblocks ? nblocks : 1));
	uint64_t b = 0;
	int mrc = MPI_ERR_NO_MEM;

	if (!lens || !disp)
		goto out_free;
	for (uint64_t k = 0; k < n; k++) {
		if (r[k].dup)
			continue;
		lens[b] = (int)r[k].len;
		disp[b] = (MPI_Aint)r[k].off;
		b++;
	}
	mrc = MPI_Type_create_hindexed((int)nblocks, lens, disp, MPI_BYTE, type);
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Type_commit(type);
out_free:
	free(lens);
	free(disp);
	return mrc;
}

static int coll_mpi_fail(struct run *run, int mrc, const char *what, const char *path)
{
	char text[MPI_MAX_ERROR_STRING + 1];
	int rc = mpiio_error_code(mrc, text, sizeof(text));

	return run_fail(run, rc, "cannot %s '%s' (collective read): %s", what, path, text);
}

/* Copies (or parses) each sample from the staging buffer into its slot. */
static int coll_scatter(struct run *run, struct ds_file *file, const uint64_t *idx,
			const struct coll_range *r, uint64_t n, const char *stage, void *const *out,
			uint64_t cap, uint64_t *lens)
{
	const struct format_ops *fmt = run->format;

	for (uint64_t k = 0; k < n; k++) {
		const char *raw = stage + r[k].stage;
		uint64_t i = r[k].i;

		if (fmt->parse) {
			size_t got = 0;
			int rc = fmt->parse(run, file, idx[i], raw, r[k].len, out[i], cap, &got);

			if (rc)
				return rc;
			lens[i] = got;
			continue;
		}
		if (r[k].len > cap)
			return run_fail(run, -FB_EFORMAT,
					"sample %" PRIu64 " of '%s' is %" PRIu64
					" bytes, more than the %" PRIu64 "-byte buffer",
					idx[i], file->path, r[k].len, cap);
		memcpy(out[i], raw, r[k].len);
		lens[i] = r[k].len;
	}
	return 0;
}

int collective_read(struct run *run, struct ds_file *file, const uint64_t *idx, uint64_t n,
		    void *const *out, uint64_t cap, uint64_t *lens, struct io *io)
{
	MPI_Datatype ftype = MPI_DATATYPE_NULL;
	struct coll_range *r = NULL;
	uint64_t nblocks = 0, total = 0, t0;
	char *stage = NULL;
	MPI_Status st;
	MPI_File fh;
	int rc = 0, mrc, got = 0;

	/* Without a handle there is nothing to join: every rank fails here alike. */
	if (mpiio_file_handle(file->shared, &fh))
		return run_fail(run, -FB_EINTERNAL,
				"collective read of '%s' without a shared MPI-IO handle",
				file->path);
	if (!run->format->extent)
		rc = run_fail(run, -FB_ECONFIG,
			      "format %s cannot be read collectively (it has no sample extents)",
			      run->format->name);
	if (!rc && n > 0) {
		r = calloc(n, sizeof(*r));
		rc = r ? coll_plan(run, file, idx, n, r, &nblocks, &total) : -ENOMEM;
	}
	if (!rc && total > 0) {
		stage = malloc(total);
		if (!stage)
			rc =
			    run_fail(run, -ENOMEM, "cannot allocate %" PRIu64 " bytes to read '%s'",
				     total, file->path);
	}
	if (!rc && nblocks > 0) {
		mrc = coll_filetype(r, n, nblocks, &ftype);
		if (mrc != MPI_SUCCESS)
			rc = coll_mpi_fail(run, mrc, "describe the samples of", file->path);
	}
	/* A rank with nothing (or nothing it can) to read joins with an empty request. */
	if (rc || nblocks == 0) {
		nblocks = 0;
		total = 0;
	}

	t0 = timer_now_ns();
	mrc =
	    MPI_File_set_view(fh, 0, MPI_BYTE, nblocks ? ftype : MPI_BYTE, "native", MPI_INFO_NULL);
	if (mrc != MPI_SUCCESS && !rc)
		rc = coll_mpi_fail(run, mrc, "set the file view of", file->path);
	mrc = MPI_File_read_all(fh, stage, (int)total, MPI_BYTE, &st);
	if (mrc != MPI_SUCCESS && !rc)
		rc = coll_mpi_fail(run, mrc, "read", file->path);
	else if (mrc == MPI_SUCCESS && MPI_Get_count(&st, MPI_BYTE, &got) == MPI_SUCCESS && !rc &&
		 (uint64_t)got != total)
		rc = run_fail(
		    run, -FB_EEOF,
		    "unexpected end of file in '%s': collective read returned %d of %" PRIu64
		    " bytes",
		    file->path, got, total);
	/* Back to a plain byte view so the handle reads like any other afterwards. */
	mrc = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
	if (mrc != MPI_SUCCESS && !rc)
		rc = coll_mpi_fail(run, mrc, "reset the file view of", file->path);
	if (!rc && total > 0)
		io_account(io, total, timer_now_ns() - t0);

	if (!rc && n > 0)
		rc = coll_scatter(run, file, idx, r, n, stage, out, cap, lens);
	if (ftype != MPI_DATATYPE_NULL)
		MPI_Type_free(&ftype);
	free(stage);
	free(r);
	return rc;
}
