/* Collective reads: every rank reads its samples of one shared file in one collective call
 * (storage_ops.pread_extents_all through io_pread_extents_all; MPI_File_read_all over a file
 * view with mpiio), so the storage library can merge the ranks' requests (two-phase I/O,
 * collective buffering) the way training frameworks built on MPI-IO do.
 *
 * Each rank lists its samples' byte ranges (the format's extent()), sorted by offset because the
 * back-end needs them in increasing order (MPI requires monotonically non-decreasing
 * displacements in a file view), reads them into one staging buffer and hands each sample to its
 * slot (through the format's parse() when the bytes on disk are not the sample itself, as in
 * TFRecord). The back-end takes ranges and totals of any size (mpiio: 1 GiB blocks, one call).
 *
 * Called by the main thread, per batch and per shared file, by every rank in the same order:
 * collectives on one file handle must be. Reader threads are not used in this mode. A rank
 * that cannot take part properly (no extent, a bad index) still joins every collective call
 * with an empty request, so the others never wait for it; it reports its error afterwards.
 */
#include "workloads.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "../formats/format.h"

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

/* Collects and sorts the ranges; assigns staging offsets (a repeated sample is read once) and
 * lists the distinct ranges in ext[] (*next of them, *total bytes). */
static int coll_plan(struct run *run, struct ds_file *file, const uint64_t *idx, uint64_t n,
		     struct coll_range *r, struct storage_extent *ext, size_t *next,
		     uint64_t *total)
{
	const struct format_ops *fmt = run->format;
	uint64_t end = 0;

	*next = 0;
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
		if (r[k].len == 0)
			continue; /* nothing to read: no range */
		*total += r[k].len;
		end = r[k].off + r[k].len;
		ext[*next].off = r[k].off;
		ext[*next].len = r[k].len;
		(*next)++;
	}
	return 0;
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
	struct storage_extent *ext = NULL;
	struct coll_range *r = NULL;
	uint64_t total = 0;
	size_t next = 0;
	char *stage = NULL;
	int rc = 0, rrc;

	/* Without a shared handle there is nothing to join: every rank fails here alike. */
	if (!file->shared)
		return run_fail(run, -FB_EINTERNAL,
				"collective read of '%s' without a shared handle", file->path);
	if (!run->format->extent)
		rc = run_fail(run, -FB_ECONFIG,
			      "format %s cannot be read collectively (it has no sample extents)",
			      run->format->name);
	if (!rc && n > 0) {
		r = calloc(n, sizeof(*r));
		ext = calloc(n, sizeof(*ext));
		rc = r && ext ? coll_plan(run, file, idx, n, r, ext, &next, &total)
			      : run_fail(run, -ENOMEM, "cannot plan a collective read of '%s'",
					 file->path);
	}
	if (!rc && total > 0) {
		stage = malloc(total);
		if (!stage)
			rc =
			    run_fail(run, -ENOMEM, "cannot allocate %" PRIu64 " bytes to read '%s'",
				     total, file->path);
	}
	/* A rank with nothing (or nothing it can) to read joins with an empty request. */
	rrc = io_pread_extents_all(io, file->shared, stage, ext, rc ? 0 : next);
	if (!rc)
		rc = rrc;
	if (!rc && n > 0)
		rc = coll_scatter(run, file, idx, r, n, stage, out, cap, lens);
	free(stage);
	free(ext);
	free(r);
	return rc;
}
