/* HDF5 format: the samples of a file are the rows of a 2-D uint8 dataset `records`
 * (nsamples, record_length), with their labels in an int64 dataset `labels` (nsamples,), as
 * h5py users and DLIO lay them out. Variable record lengths pad each row to the file's largest
 * sample and store each sample's byte count in an int64 dataset `lengths` (nsamples,):
 * `f["records"][i, :f["lengths"][i]]` is sample i.
 *
 * HDF5 does its own I/O (FORMAT_CAP_OWNS_IO): per-rank files through the sec2 driver, shared
 * files through the MPI-IO driver on run->comm, opened collectively once per rank by index().
 * Each read is one H5Dread of a hyperslab, accounted with io_account().
 *
 * The parallel HDF5 library shipped by Debian (and most HPC sites) is not built thread-safe, so
 * every HDF5 call holds one process-wide lock (hdf5_enter): with read_threads > 1 the threads
 * take turns inside HDF5, as h5py serialises them with its own lock.
 *
 * This file is generation and reads; formats/hdf5_meta.c is the lock, errors, file access,
 * opening a file's dataset (index) and probing files other tools wrote.
 */
#include "format.h"
#include "hdf5_meta.h"
#include "sample.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <mpi.h>

#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "../bench/timer.h"

#define HDF5_GEN_BUFFER (4u << 20) /* rows gathered per H5Dwrite when generating */

/* ---- generation ------------------------------------------------------------------------------ */

struct fgen {
	struct run *run;
	struct ds_file *file;
	bool mpio;
	bool variable; /* `lengths` written */
	hid_t fid, records, labels, lengths;
	uint64_t row;	      /* bytes per row: the file's largest sample */
	uint64_t cap_rows;    /* rows gathered before one write */
	uint64_t start, rows; /* gathered rows: [start, start + rows) */
	uint8_t *buf;
	int64_t *lab, *len;
	int err; /* first failure of append (collective calls still happen) */
};

static hid_t hdf5_dcpl(struct run *run, struct fgen *g, char *why, size_t whylen)
{
	int64_t chunking = run->cfg.hdf5.chunking;
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
	hsize_t chunk[2];

	if (dcpl < 0)
		return dcpl;
	/* Rows are written whole (padding included): fill values would be written twice. */
	if (H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0)
		goto out_close;
	if (chunking == 0)
		return dcpl;
	chunk[0] = chunking < 0 ? 1 : (hsize_t)chunking;
	if (chunk[0] > g->file->nsamples)
		chunk[0] = g->file->nsamples ? g->file->nsamples : 1;
	chunk[1] = g->row;
	if (chunk[0] * chunk[1] >= (1ull << 32)) {
		snprintf(why, whylen,
			 "a chunk of %llu rows of %llu bytes exceeds HDF5's 4 GiB chunk limit",
			 (unsigned long long)chunk[0], (unsigned long long)chunk[1]);
		goto out_close;
	}
	if (H5Pset_chunk(dcpl, 2, chunk) < 0)
		goto out_close;
	if (g->mpio && H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0)
		goto out_close;
	return dcpl;

out_close:
	hdf5_quiet_close(H5Pclose, dcpl);
	return -1;
}

static hid_t hdf5_create_dataset(hid_t fid, const char *name, hid_t type, int ndims,
				 const hsize_t *dims, hid_t dcpl)
{
	hid_t space = H5Screate_simple(ndims, dims, NULL);
	hid_t d;

	if (space < 0)
		return space;
	d = H5Dcreate2(fid, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	hdf5_quiet_close(H5Sclose, space);
	return d;
}

/* Creates the file and its datasets; the lock is held. */
static int hdf5_create_locked(struct fgen *g)
{
	struct run *run = g->run;
	const char *path = g->file->path;
	hsize_t dims[2] = {g->file->nsamples, g->row};
	char why[256] = "";
	hid_t fapl, dcpl;

	fapl = hdf5_fapl(run, g->mpio, true);
	if (fapl < 0)
		return run_fail(run, -FB_EHDF5, "hdf5: cannot set up the %s driver for '%s': %s",
				g->mpio ? "mpio" : "sec2", path, hdf5_why(why, sizeof(why)));
	g->fid = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	hdf5_quiet_close(H5Pclose, fapl);
	if (g->fid < 0)
		return run_fail(run, -FB_EHDF5, "hdf5: cannot create '%s': %s", path,
				hdf5_why(why, sizeof(why)));
	dcpl = hdf5_dcpl(run, g, why, sizeof(why));
	if (dcpl < 0) {
		if (why[0])
			return run_fail(run, -FB_ECONFIG, "hdf5: cannot create '%s': %s", path,
					why);
		return run_fail(run, -FB_EHDF5, "hdf5: cannot create '%s': %s", path,
				hdf5_why(why, sizeof(why)));
	}
	g->records = hdf5_create_dataset(g->fid, HDF5_RECORDS, H5T_STD_U8LE, 2, dims, dcpl);
	hdf5_quiet_close(H5Pclose, dcpl);
	if (g->records >= 0)
		g->labels =
		    hdf5_create_dataset(g->fid, HDF5_LABELS, H5T_STD_I64LE, 1, dims, H5P_DEFAULT);
	if (g->records >= 0 && g->labels >= 0 && g->variable)
		g->lengths =
		    hdf5_create_dataset(g->fid, HDF5_LENGTHS, H5T_STD_I64LE, 1, dims, H5P_DEFAULT);
	if (g->records < 0 || g->labels < 0 || (g->variable && g->lengths < 0))
		return run_fail(run, -FB_EHDF5, "hdf5: cannot create datasets in '%s': %s", path,
				hdf5_why(why, sizeof(why)));
	return 0;
}

static void hdf5_gen_free(struct fgen *g)
{
	if (g->lengths >= 0)
		H5Dclose(g->lengths);
	if (g->labels >= 0)
		H5Dclose(g->labels);
	if (g->records >= 0)
		H5Dclose(g->records);
	if (g->fid >= 0)
		H5Fclose(g->fid);
	free(g->buf);
	free(g->lab);
	free(g->len);
	free(g);
}

static int hdf5_create(struct fgen **gp, struct run *run, struct ds_file *file, unsigned flags)
{
	struct fgen *g = calloc(1, sizeof(*g));
	int err;

	if (!g)
		return run_fail(run, -ENOMEM, "hdf5: out of memory creating '%s'", file->path);
	g->run = run;
	g->file = file;
	g->mpio = flags & FGEN_COLLECTIVE;
	g->variable = run->ds.rec_stdev > 0;
	g->fid = g->records = g->labels = g->lengths = -1;
	/* Every rank computes the same row length (sizes are a function of the seed). */
	for (uint64_t i = 0; i < file->nsamples; i++) {
		uint64_t s = dataset_sample_size(&run->ds, file->index, i);

		if (s > g->row)
			g->row = s;
	}
	if (g->row == 0)
		g->row = SAMPLE_MIN_BYTES;
	g->cap_rows = HDF5_GEN_BUFFER / g->row ? HDF5_GEN_BUFFER / g->row : 1;
	g->buf = malloc(g->cap_rows * g->row);
	g->lab = malloc(g->cap_rows * sizeof(*g->lab));
	g->len = malloc(g->cap_rows * sizeof(*g->len));
	/* generate.c has created a shared file with its striping: H5F_ACC_TRUNC keeps it. */
	if (!g->buf || !g->lab || !g->len) {
		hdf5_gen_free(g);
		return run_fail(run, -ENOMEM, "hdf5: out of memory creating '%s'", file->path);
	}
	hdf5_enter();
	err = hdf5_create_locked(g);
	if (err < 0)
		hdf5_gen_free(g);
	hdf5_leave();
	if (err < 0)
		return err;
	*gp = g;
	return 0;
}

static herr_t hdf5_write_rows(hid_t d, hid_t type, uint64_t start, uint64_t rows, uint64_t cols,
			      const void *buf)
{
	hsize_t off[2] = {start, 0}, count[2] = {rows, cols};
	int ndims = cols ? 2 : 1;
	hid_t fs = H5Dget_space(d), ms;
	herr_t e = -1;

	if (fs < 0)
		return -1;
	ms = H5Screate_simple(ndims, count, NULL);
	if (ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, count, NULL) >= 0)
		e = H5Dwrite(d, type, ms, fs, H5P_DEFAULT, buf);
	hdf5_quiet_close(H5Sclose, ms);
	hdf5_quiet_close(H5Sclose, fs);
	return e;
}

static int hdf5_flush_rows(struct fgen *g)
{
	char why[256];
	herr_t e;

	if (g->rows == 0)
		return 0;
	hdf5_enter();
	e = hdf5_write_rows(g->records, H5T_NATIVE_UINT8, g->start, g->rows, g->row, g->buf);
	if (e >= 0)
		e = hdf5_write_rows(g->labels, H5T_NATIVE_INT64, g->start, g->rows, 0, g->lab);
	if (e >= 0 && g->variable)
		e = hdf5_write_rows(g->lengths, H5T_NATIVE_INT64, g->start, g->rows, 0, g->len);
	if (e < 0)
		g->err = run_fail(g->run, -FB_EHDF5,
				  "hdf5: cannot write samples %" PRIu64 "-%" PRIu64 " of '%s': %s",
				  g->start, g->start + g->rows - 1, g->file->path,
				  hdf5_why(why, sizeof(why)));
	hdf5_leave();
	g->rows = 0;
	return g->err;
}

static int hdf5_append(struct fgen *g, uint64_t index, const void *sample, size_t len)
{
	uint8_t *row;

	if (g->err < 0)
		return g->err;
	if (len > g->row || index >= g->file->nsamples)
		return g->err = run_fail(g->run, -FB_EINTERNAL,
					 "hdf5: sample %" PRIu64 " of %zu bytes does not fit '%s'",
					 index, len, g->file->path);
	if (g->rows && (index != g->start + g->rows || g->rows == g->cap_rows) &&
	    hdf5_flush_rows(g) < 0)
		return g->err;
	if (g->rows == 0)
		g->start = index;
	row = g->buf + g->rows * g->row;
	memcpy(row, sample, len);
	memset(row + len, 0, g->row - len);
	g->lab[g->rows] = (int64_t)(g->file->first + index);
	g->len[g->rows] = (int64_t)len;
	g->rows++;
	return 0;
}

/* fsync through the driver's own handle: H5Fclose alone leaves the data in the page cache. */
static int hdf5_sync_locked(struct fgen *g)
{
	void *handle = NULL;

	if (H5Fflush(g->fid, H5F_SCOPE_GLOBAL) < 0 ||
	    H5Fget_vfd_handle(g->fid, H5P_DEFAULT, &handle) < 0 || !handle)
		return -FB_EHDF5;
	if (g->mpio)
		return MPI_File_sync(*(MPI_File *)handle) == MPI_SUCCESS ? 0 : -EIO;
	return fsync(*(int *)handle) == 0 ? 0 : -errno;
}

/* The first failure of finish, with HDF5's reason read at once (later calls clear it). */
static int hdf5_finish_fail(struct fgen *g, int err, int code, const char *what)
{
	char why[256];

	if (err < 0)
		return err;
	return run_fail(g->run, code, "hdf5: cannot %s '%s': %s", what, g->file->path,
			code == -FB_EHDF5 ? hdf5_why(why, sizeof(why)) : fb_strerror(code));
}

static int hdf5_finish(struct fgen *g)
{
	hid_t *dsets[] = {&g->lengths, &g->labels, &g->records};
	int err = g->err, e;

	/* Collective calls below happen on every rank even after a local failure. */
	if (err == 0)
		err = hdf5_flush_rows(g);
	g->rows = 0;
	hdf5_enter();
	for (size_t i = 0; i < sizeof(dsets) / sizeof(dsets[0]); i++) {
		if (*dsets[i] >= 0 && H5Dclose(*dsets[i]) < 0)
			err = hdf5_finish_fail(g, err, -FB_EHDF5, "close");
		*dsets[i] = -1;
	}
	e = hdf5_sync_locked(g);
	if (e < 0)
		err = hdf5_finish_fail(g, err, e, "sync");
	if (H5Fclose(g->fid) < 0)
		err = hdf5_finish_fail(g, err, -FB_EHDF5, "close");
	g->fid = -1;
	hdf5_leave();
	hdf5_gen_free(g);
	return err;
}

/* ---- independent reads ----------------------------------------------------------------------- */

struct freader {
	struct run *run;
	struct ds_file *file;
	struct hdf5_meta *m;
	struct io *io;
	hid_t fspace;
	struct io_meter meter; /* what this thread's H5Dread calls really read */
};

/* Accounts one H5Dread: the bytes and read calls the library really made, from the thread's
 * kernel counters (metadata lookups included, chunk-cache hits excluded); the nominal sample
 * bytes only where the kernel cannot tell, with a warning. */
static void hdf5_account(struct run *run, struct io *io, struct io_meter *meter,
			 const uint64_t before[2], uint64_t nominal, uint64_t ns)
{
	uint64_t after[2];

	if (before[0] != UINT64_MAX && io_meter_read(meter, &after[0], &after[1]) == 0) {
		/* A rank that took part in a collective read with nothing of its own to read
		 * and read nothing for others made no read call to count. */
		if (nominal || after[1] > before[1])
			io_account_calls(io, after[0] - before[0], after[1] - before[1], ns);
		return;
	}
	if (!nominal)
		return;
	run_warn(run, "hdf5: /proc/thread-self/io is not readable: HDF5 bytes read are the "
		      "samples' sizes, not what the library read");
	io_account(io, nominal, ns);
}

static void hdf5_meter_start(struct io_meter *meter, uint64_t before[2])
{
	if (io_meter_read(meter, &before[0], &before[1]) < 0)
		before[0] = UINT64_MAX;
}

static int hdf5_open(struct freader **rp, struct run *run, struct ds_file *file, struct io *io)
{
	struct freader *r;

	if (!file->meta)
		return run_fail(run, -FB_EINTERNAL, "hdf5: '%s' read before it was indexed",
				file->path);
	r = calloc(1, sizeof(*r));
	if (!r)
		return run_fail(run, -ENOMEM, "hdf5: out of memory opening '%s'", file->path);
	r->run = run;
	r->file = file;
	r->m = file->meta;
	r->io = io;
	io_meter_open(&r->meter);
	hdf5_enter();
	r->fspace = H5Dget_space(r->m->dset);
	hdf5_leave();
	if (r->fspace < 0) {
		io_meter_close(&r->meter);
		free(r);
		return run_fail(run, -FB_EHDF5, "hdf5: cannot get the dataspace of '%s'",
				file->path);
	}
	*rp = r;
	return 0;
}

/* Selects sample `index` (its row, or the first lengths[index] bytes of it) in space with op;
 * returns the elements selected. */
static hssize_t hdf5_select(const struct hdf5_meta *m, hid_t space, H5S_seloper_t op,
			    uint64_t index)
{
	hsize_t start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK];
	hsize_t n = 1;

	start[0] = index;
	count[0] = 1;
	for (int i = 1; i < m->ndims; i++)
		count[i] = m->dims[i];
	if (m->lengths)
		count[1] = (hsize_t)m->lengths[index];
	for (int i = 1; i < m->ndims; i++)
		n *= count[i];
	if (n == 0)
		return 0;
	if (H5Sselect_hyperslab(space, op, start, NULL, count, NULL) < 0)
		return -1;
	return (hssize_t)n;
}

static int hdf5_read_sample(struct freader *r, uint64_t index, void *buf, size_t cap, size_t *len)
{
	struct hdf5_meta *m = r->m;
	char why[256];
	uint64_t bytes, t0, t1, before[2] = {UINT64_MAX, 0};
	hssize_t n;
	hid_t ms;
	herr_t e = 0;

	if (index >= m->dims[0])
		return run_fail(r->run, -FB_EINTERNAL, "hdf5: sample %" PRIu64 " beyond '%s'",
				index, r->file->path);
	bytes = hdf5_sample_bytes(m, index);
	if (bytes > cap)
		return run_fail(r->run, -FB_EINTERNAL,
				"hdf5: sample %" PRIu64 " of '%s' has %" PRIu64
				" bytes, more than the %zu expected",
				index, r->file->path, bytes, cap);
	hdf5_enter();
	n = hdf5_select(m, r->fspace, H5S_SELECT_SET, index);
	if (n > 0) {
		hsize_t mdim = (hsize_t)n;

		ms = H5Screate_simple(1, &mdim, NULL);
		hdf5_meter_start(&r->meter, before);
		t0 = timer_now_ns();
		e = ms < 0 ? -1 : H5Dread(m->dset, m->mtype, ms, r->fspace, H5P_DEFAULT, buf);
		t1 = timer_now_ns();
		hdf5_quiet_close(H5Sclose, ms);
	} else {
		e = n;
		t0 = t1 = 0;
	}
	if (e < 0) {
		int err =
		    run_fail(r->run, -FB_EHDF5, "hdf5: cannot read sample %" PRIu64 " of '%s': %s",
			     index, r->file->path, hdf5_why(why, sizeof(why)));

		hdf5_leave();
		return err;
	}
	if (n > 0)
		hdf5_account(r->run, r->io, &r->meter, before, bytes, t1 - t0);
	hdf5_leave();
	*len = bytes;
	return 0;
}

static int hdf5_close(struct freader *r)
{
	io_meter_close(&r->meter);
	hdf5_enter();
	H5Sclose(r->fspace);
	hdf5_leave();
	free(r);
	return 0;
}

/* ---- collective reads ------------------------------------------------------------------------ */

static const char *hdf5_mode_name(H5D_mpio_actual_io_mode_t mode)
{
	switch (mode) {
	case H5D_MPIO_NO_COLLECTIVE:
		return "independent";
	case H5D_MPIO_CHUNK_INDEPENDENT:
		return "chunk_independent";
	case H5D_MPIO_CHUNK_COLLECTIVE:
		return "chunk_collective";
	case H5D_MPIO_CHUNK_MIXED:
		return "chunk_mixed";
	case H5D_MPIO_CONTIGUOUS_COLLECTIVE:
		return "contiguous_collective";
	}
	return "unknown";
}

static void hdf5_causes(uint32_t cause, char *buf, size_t len)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} causes[] = {
	    {H5D_MPIO_SET_INDEPENDENT, "independent transfer requested"},
	    {H5D_MPIO_DATATYPE_CONVERSION, "datatype conversion"},
	    {H5D_MPIO_DATA_TRANSFORMS, "data transforms"},
	    {H5D_MPIO_MPI_OPT_TYPES_ENV_VAR_DISABLED, "MPI derived types disabled"},
	    {H5D_MPIO_NOT_SIMPLE_OR_SCALAR_DATASPACES, "dataspace not simple"},
	    {H5D_MPIO_NOT_CONTIGUOUS_OR_CHUNKED_DATASET, "layout not contiguous or chunked"},
	    {H5D_MPIO_PARALLEL_FILTERED_WRITES_DISABLED, "filtered writes disabled"},
	    {H5D_MPIO_ERROR_WHILE_CHECKING_COLLECTIVE_POSSIBLE, "error checking"},
	};

	snprintf(buf, len, "%s", cause ? "" : "none");
	for (size_t i = 0; i < sizeof(causes) / sizeof(causes[0]); i++) {
		size_t used = strlen(buf);

		if (cause & causes[i].bit)
			snprintf(buf + used, len - used, "%s%s", used ? ", " : "", causes[i].name);
	}
}

/* What HDF5 really did with the last collective read: summary.json shows whether the
 * collective transfer the user asked for happened. Main thread only (collective mode). */
static void hdf5_record_mode(struct run *run, struct hdf5_meta *m)
{
	H5D_mpio_actual_io_mode_t mode = H5D_MPIO_NO_COLLECTIVE;
	uint32_t local = 0, global = 0;
	json_t *o, *counts;
	char causes[512];

	if (H5Pget_mpio_actual_io_mode(m->dxpl, &mode) < 0 ||
	    H5Pget_mpio_no_collective_cause(m->dxpl, &local, &global) < 0) {
		H5Eclear2(H5E_DEFAULT);
		return;
	}
	if ((unsigned)mode < sizeof(m->mode_count) / sizeof(m->mode_count[0]))
		m->mode_count[mode]++;
	o = run->info_format ? json_object_get(run->info_format, "hdf5") : NULL;
	if (!o)
		return;
	hdf5_causes(global, causes, sizeof(causes));
	json_object_set_new(o, "actual_io_mode", json_string(hdf5_mode_name(mode)));
	json_object_set_new(o, "no_collective_cause", json_string(causes));
	counts = json_object();
	for (unsigned i = 0; counts && i < 5; i++)
		if (m->mode_count[i])
			json_object_set_new(counts, hdf5_mode_name((H5D_mpio_actual_io_mode_t)i),
					    json_integer((json_int_t)m->mode_count[i]));
	if (counts)
		json_object_set_new(o, "collective_reads", counts);
}

struct hdf5_slot {
	uint64_t index;
	uint64_t i; /* position in the caller's arrays */
};

static int hdf5_slot_cmp(const void *a, const void *b)
{
	const struct hdf5_slot *x = a, *y = b;

	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Selects in fs the union of this rank's rows (sorted; a row asked twice is selected once),
 * sets each caller's length and makes scratch hold them; *total is the bytes selected. 0 or a
 * recorded error, after which this rank still joins the collective read. */
static int hdf5_select_rows(struct run *run, struct ds_file *file, hid_t fs,
			    const struct hdf5_slot *slot, uint64_t n, uint64_t cap, uint64_t *lens,
			    uint64_t *total)
{
	struct hdf5_meta *m = file->meta;
	char why[256];
	int err = 0;

	for (uint64_t k = 0; k < n && err == 0; k++) {
		uint64_t bytes = hdf5_sample_bytes(m, slot[k].index);

		lens[slot[k].i] = bytes;
		if (bytes > cap)
			err = run_fail(run, -FB_EINTERNAL,
				       "hdf5: sample %" PRIu64 " of '%s' has %" PRIu64
				       " bytes, more than the %" PRIu64 " expected",
				       slot[k].index, file->path, bytes, cap);
		if (k && slot[k].index == slot[k - 1].index)
			continue;
		if (err == 0 && hdf5_select(m, fs, H5S_SELECT_OR, slot[k].index) < 0) {
			/* Still join the read below (with nothing selected): never hang the
			 * other ranks. */
			err = run_fail(run, -FB_EHDF5,
				       "hdf5: cannot select sample %" PRIu64 " of '%s': %s",
				       slot[k].index, file->path, hdf5_why(why, sizeof(why)));
			break;
		}
		*total += bytes;
	}
	if (err == 0 && *total > m->scratch_cap) {
		uint8_t *p = realloc(m->scratch, *total);

		if (p) {
			m->scratch = p;
			m->scratch_cap = *total;
		} else {
			err =
			    run_fail(run, -ENOMEM, "hdf5: out of memory reading '%s'", file->path);
		}
	}
	return err;
}

/* Copies each row from scratch, where HDF5 put them in file order, to its caller's buffer. */
static void hdf5_scatter(const struct hdf5_meta *m, const struct hdf5_slot *slot, uint64_t n,
			 void *const *out, const uint64_t *lens)
{
	uint64_t pos = 0;

	for (uint64_t k = 0; k < n; k++) {
		if (k && slot[k].index == slot[k - 1].index)
			pos -= lens[slot[k].i];
		memcpy(out[slot[k].i], m->scratch + pos, lens[slot[k].i]);
		pos += lens[slot[k].i];
	}
}

/* One collective H5Dread of the union of this rank's rows. HDF5 delivers a union selection in
 * file order, so rows are sorted, read into scratch and scattered to the callers' buffers. */
static int hdf5_read_collective_locked(struct run *run, struct ds_file *file,
				       struct hdf5_slot *slot, uint64_t n, void *const *out,
				       uint64_t cap, uint64_t *lens, struct io *io)
{
	struct hdf5_meta *m = file->meta;
	uint64_t total = 0, t0, t1, before[2] = {UINT64_MAX, 0};
	struct io_meter meter = {.fd = -1};
	hid_t fs = -1, ms = -1;
	hsize_t mdim;
	void *dst;
	char why[256];
	int err = 0;

	fs = H5Dget_space(m->dset);
	if (fs < 0) { /* a space of the same shape still lets this rank join the read */
		err = run_fail(run, -FB_EHDF5, "hdf5: cannot get the dataspace of '%s': %s",
			       file->path, hdf5_why(why, sizeof(why)));
		fs = H5Screate_simple(m->ndims, m->dims, NULL);
	}
	if (fs < 0 || H5Sselect_none(fs) < 0)
		goto out_hdf5;
	if (err == 0)
		err = hdf5_select_rows(run, file, fs, slot, n, cap, lens, &total);
	/* After a local failure this rank still takes part in the collective read, with nothing
	 * selected, so the others do not hang. */
	if (err < 0) {
		total = 0;
		if (H5Sselect_none(fs) < 0)
			goto out_hdf5;
	}
	mdim = total / m->elem ? total / m->elem : 1;
	ms = H5Screate_simple(1, &mdim, NULL);
	if (ms < 0 || (total == 0 && H5Sselect_none(ms) < 0))
		goto out_hdf5;
	io_meter_open(&meter);
	hdf5_meter_start(&meter, before);
	t0 = timer_now_ns();
	/* An empty selection still needs a buffer argument (HDF5 checks for NULL). */
	dst = m->scratch ? (void *)m->scratch : (void *)&mdim;
	if (H5Dread(m->dset, m->mtype, ms, fs, m->dxpl, dst) < 0)
		goto out_hdf5;
	t1 = timer_now_ns();
	hdf5_record_mode(run, m);
	/* Aggregators of a collective read also read for others: a rank counts what it read. */
	hdf5_account(run, io, &meter, before, total, t1 - t0);
	if (err == 0)
		hdf5_scatter(m, slot, n, out, lens);
	goto out_close;

out_hdf5:
	err = run_fail(run, -FB_EHDF5, "hdf5: collective read of '%s' failed: %s", file->path,
		       hdf5_why(why, sizeof(why)));
out_close:
	io_meter_close(&meter);
	if (ms >= 0)
		H5Sclose(ms);
	if (fs >= 0)
		H5Sclose(fs);
	return err;
}

static int hdf5_read_collective(struct run *run, struct ds_file *file, const uint64_t *idx,
				uint64_t n, void *const *out, uint64_t cap, uint64_t *lens,
				struct io *io)
{
	struct hdf5_meta *m = file->meta;
	struct hdf5_slot *slot;
	int err;

	if (!m || !m->collective)
		return run_fail(run, -FB_EINTERNAL,
				"hdf5: collective read of '%s' without a collective open",
				file->path);
	/* A local failure still takes part in the collective read, with nothing to read. */
	int local = 0;
	slot = malloc((n ? n : 1) * sizeof(*slot));
	if (!slot)
		local = run_fail(run, -ENOMEM, "hdf5: out of memory reading '%s'", file->path);
	for (uint64_t k = 0; slot && k < n && local == 0; k++) {
		slot[k].index = idx[k];
		slot[k].i = k;
		if (idx[k] >= m->dims[0])
			local = run_fail(run, -FB_EINTERNAL, "hdf5: sample %" PRIu64 " beyond '%s'",
					 idx[k], file->path);
	}
	if (local == 0)
		qsort(slot, n, sizeof(*slot), hdf5_slot_cmp);
	hdf5_enter();
	err = hdf5_read_collective_locked(run, file, slot, local ? 0 : n, out, cap, lens, io);
	hdf5_leave();
	free(slot);
	return local ? local : err;
}

static const char *const hdf5_globs[] = {".h5", ".hdf5", NULL};

const struct format_ops hdf5_format = {
    .version = FORMAT_OPS_VERSION,
    .name = "hdf5",
    .ext = ".h5",
    .globs = hdf5_globs,
    .caps = FORMAT_CAP_SHARED | FORMAT_CAP_OWNS_IO | FORMAT_CAP_PARALLEL_WRITE,
    .create = hdf5_create,
    .append = hdf5_append,
    .finish = hdf5_finish,
    .index = hdf5_index,
    .unindex = hdf5_unindex,
    .open = hdf5_open,
    .read_sample = hdf5_read_sample,
    .close = hdf5_close,
    .probe = hdf5_probe,
    .read_collective = hdf5_read_collective,
};
