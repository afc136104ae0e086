/* HDF5 format, the part every other piece uses (formats/hdf5.c is the plug-in: generation and
 * reads): the process-wide lock, HDF5's error text, file access property lists, opening a
 * file's dataset once per rank (index) and reading the geometry of files other tools wrote
 * (probe). See formats/hdf5.c for the layout and why every call holds the lock.
 */
#include "format.h"
#include "hdf5_meta.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hdf5.h>
#include <mpi.h>

#include "../bench/child.h"
#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "../bench/safefile.h"
#include "../bench/storage/fs.h"

#define HDF5_ALIGN_THRESHOLD (64u << 10) /* objects this large start on a stripe boundary */
#define HDF5_TRIAL_MS	     60000	 /* a foreign file's trial open in a child */

/* The library is process-global and not thread-safe: one lock for the process, the only
 * mutable static in feedbench, because the state it guards is itself global. */
static pthread_mutex_t hdf5_lock = PTHREAD_MUTEX_INITIALIZER;
/* The child that opens foreign files first (hdf5_probe): one for all the files of a folder (a
 * fork each cost about 10 ms), ended when the dataset is indexed. Used under hdf5_lock. */
static struct child_worker hdf5_worker;

void hdf5_enter(void)
{
	pthread_mutex_lock(&hdf5_lock);
	/* Errors are reported once, by us, with the file name: never HDF5's stack dump. */
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void hdf5_leave(void)
{
	pthread_mutex_unlock(&hdf5_lock);
}

/* ---- errors ---------------------------------------------------------------------------------- */

struct hdf5_why {
	char *buf;
	size_t len;
};

static herr_t hdf5_walk(unsigned n, const H5E_error2_t *e, void *data)
{
	struct hdf5_why *w = data;

	/* Walking downward, the last entry is the innermost, most specific cause. */
	if (e->desc && e->desc[0])
		snprintf(w->buf, w->len, "%s", e->desc);
	return 0;
}

/* The most specific text on HDF5's error stack ("truncated file: eof = ..."), then clears it. */
const char *hdf5_why(char *buf, size_t len)
{
	struct hdf5_why w = {buf, len};

	snprintf(buf, len, "unknown HDF5 error");
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, hdf5_walk, &w);
	H5Eclear2(H5E_DEFAULT);
	return buf;
}

/* Closes id without losing the error stack of an earlier failure: every API call clears it. */
void hdf5_quiet_close(herr_t (*close)(hid_t), hid_t id)
{
	hid_t es = H5Eget_current_stack();

	if (id >= 0)
		close(id);
	if (es >= 0)
		H5Eset_current_stack(es);
}

/* ---- property lists -------------------------------------------------------------------------- */

/* MPI-IO hints for the shared file: the user's [storage.mpiio] keys and the striping hints. */
static MPI_Info hdf5_info(struct run *run)
{
	MPI_Info info;

	if (MPI_Info_create(&info) != MPI_SUCCESS)
		return MPI_INFO_NULL;
	for (int i = 0; i < run->cfg.mpiio.nhints; i++)
		MPI_Info_set(info, run->cfg.mpiio.hints[i].key, run->cfg.mpiio.hints[i].value);
	stripe_hints(run, &info);
	return info;
}

/* File access: sec2 for a file of one rank, MPI-IO on run->comm for a file every rank opens.
 * Collective metadata reads only where every later call is collective too (generation and
 * collective transfers): independent reads may need metadata (chunk indexes) on one rank. */
hid_t hdf5_fapl(struct run *run, bool mpio, bool coll_meta)
{
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);

	if (fapl < 0)
		return fapl;
	if (mpio) {
		MPI_Info info = hdf5_info(run);
		herr_t e = H5Pset_fapl_mpio(fapl, run->comm, info);

		if (info != MPI_INFO_NULL)
			MPI_Info_free(&info);
		if (e < 0)
			goto out_close;
		if (coll_meta && (H5Pset_all_coll_metadata_ops(fapl, true) < 0 ||
				  H5Pset_coll_metadata_write(fapl, true) < 0))
			goto out_close;
	} else if (H5Pset_fapl_sec2(fapl) < 0) {
		goto out_close;
	}
	if (run->cfg.storage.stripe_size > 0 &&
	    H5Pset_alignment(fapl, HDF5_ALIGN_THRESHOLD, run->cfg.storage.stripe_size) < 0)
		goto out_close;
	return fapl;

out_close:
	hdf5_quiet_close(H5Pclose, fapl);
	return -1;
}

/* ---- the dataset of a file ------------------------------------------------------------------- */

struct hdf5_find {
	char name[256];
	bool found;
};

static herr_t hdf5_find_nd(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
	struct hdf5_find *f = data;
	H5O_info_t oi;
	hid_t d, s;
	int nd;

	if (info->type != H5L_TYPE_HARD || H5Oget_info_by_name(g, name, &oi, H5P_DEFAULT) < 0 ||
	    oi.type != H5O_TYPE_DATASET)
		return 0;
	d = H5Dopen2(g, name, H5P_DEFAULT);
	if (d < 0)
		return 0;
	s = H5Dget_space(d);
	nd = s >= 0 ? H5Sget_simple_extent_ndims(s) : -1;
	if (s >= 0)
		H5Sclose(s);
	H5Dclose(d);
	if (nd < 2)
		return 0;
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->found = true;
	return 1;
}

/* `records`, or for data written by other tools the first dataset (in name order, in the root
 * group) with two or more dimensions. Returns the dataset or a negative code, recorded. */
static hid_t hdf5_open_records(struct run *run, hid_t fid, const char *path, bool any, char *name,
			       size_t namelen)
{
	struct hdf5_find f = {"", false};
	char why[256];
	htri_t has = H5Lexists(fid, HDF5_RECORDS, H5P_DEFAULT);
	hid_t d;

	if (has > 0) {
		snprintf(f.name, sizeof(f.name), "%s", HDF5_RECORDS);
	} else if (any) {
		hsize_t idx = 0;

		H5Literate(fid, H5_INDEX_NAME, H5_ITER_INC, &idx, hdf5_find_nd, &f);
		H5Eclear2(H5E_DEFAULT);
	}
	if (!f.name[0]) {
		if (has < 0)
			return run_fail(run, -FB_EFORMAT, "hdf5: cannot read '%s': %s", path,
					hdf5_why(why, sizeof(why)));
		return run_fail(run, -FB_EFORMAT, "hdf5: dataset '%s' missing in '%s'%s",
				HDF5_RECORDS, path,
				any ? " (and no dataset with 2 or more dimensions)" : "");
	}
	/* No chunk cache: every sample access reaches the storage (the page cache is the
	 * one cache feedbench reports on, with page_cache and direct). */
	hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
	if (dapl >= 0)
		H5Pset_chunk_cache(dapl, 0, 0, 1.0);
	d = H5Dopen2(fid, f.name, dapl >= 0 ? dapl : H5P_DEFAULT);
	if (dapl >= 0)
		H5Pclose(dapl);
	if (d < 0)
		return run_fail(run, -FB_EFORMAT, "hdf5: cannot open dataset '%s' in '%s': %s",
				f.name, path, hdf5_why(why, sizeof(why)));
	snprintf(name, namelen, "%s", f.name);
	return d;
}

/* Shape, type and optional lengths of the dataset; 0 or a recorded error. */
static int hdf5_geometry(struct run *run, struct hdf5_meta *m, const char *path)
{
	char why[256];
	hid_t space = H5Dget_space(m->dset), ftype = H5Dget_type(m->dset);
	int err = 0;

	m->ndims = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
	if (m->ndims < 2 || H5Sget_simple_extent_dims(space, m->dims, NULL) < 0 || ftype < 0) {
		err = run_fail(run, -FB_EFORMAT,
			       "hdf5: dataset '%s' in '%s' is not an array of 2 or more dimensions",
			       m->name, path);
		goto out_close;
	}
	/* Variable-length elements read as pointers into library memory: not sample bytes. */
	if (H5Tdetect_class(ftype, H5T_VLEN) > 0 || H5Tis_variable_str(ftype) > 0 ||
	    H5Tdetect_class(ftype, H5T_REFERENCE) > 0) {
		err = run_fail(run, -FB_EFORMAT,
			       "hdf5: dataset '%s' in '%s' has variable-length or reference "
			       "elements; feedbench reads fixed-size elements only",
			       m->name, path);
		goto out_close;
	}
	m->mtype = H5Tget_native_type(ftype, H5T_DIR_ASCEND);
	if (m->mtype < 0) {
		err = run_fail(run, -FB_EFORMAT,
			       "hdf5: dataset '%s' in '%s' has a type feedbench cannot read",
			       m->name, path);
		goto out_close;
	}
	m->elem = H5Tget_size(m->mtype);
	m->row_elems = 1;
	uint64_t row_bytes;
	bool over = false;
	for (int i = 1; i < m->ndims; i++)
		over |= __builtin_mul_overflow(m->row_elems, (uint64_t)m->dims[i], &m->row_elems);
	if (over || m->row_elems == 0 ||
	    __builtin_mul_overflow(m->row_elems, (uint64_t)m->elem, &row_bytes) ||
	    row_bytes > UINT32_MAX) {
		err = run_fail(run, -FB_EFORMAT,
			       "hdf5: dataset '%s' in '%s': a sample (one row) would be empty or "
			       "larger than 4 GiB",
			       m->name, path);
		goto out_close;
	}
	if (m->ndims == 2 && m->elem == 1 && H5Lexists(m->fid, HDF5_LENGTHS, H5P_DEFAULT) > 0) {
		hid_t d = H5Dopen2(m->fid, HDF5_LENGTHS, H5P_DEFAULT);
		hid_t s = d >= 0 ? H5Dget_space(d) : -1;
		hssize_t n = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;

		m->lengths =
		    n == (hssize_t)m->dims[0] ? malloc((n ? n : 1) * sizeof(int64_t)) : NULL;
		if (!m->lengths ||
		    H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, m->lengths) < 0)
			err = run_fail(run, -FB_EFORMAT,
				       "hdf5: dataset '%s' in '%s' does not hold one length per "
				       "sample: %s",
				       HDF5_LENGTHS, path, hdf5_why(why, sizeof(why)));
		for (hssize_t i = 0; err == 0 && i < n; i++)
			if (m->lengths[i] < 0 || (uint64_t)m->lengths[i] > m->row_elems)
				err = run_fail(
				    run, -FB_EFORMAT,
				    "hdf5: '%s' in '%s' says sample %lld has %lld bytes; "
				    "rows hold %llu",
				    HDF5_LENGTHS, path, (long long)i, (long long)m->lengths[i],
				    (unsigned long long)m->row_elems);
		if (s >= 0)
			H5Sclose(s);
		if (d >= 0)
			H5Dclose(d);
	}
out_close:
	if (ftype >= 0)
		H5Tclose(ftype);
	if (space >= 0)
		H5Sclose(space);
	return err;
}

static void hdf5_meta_close(struct hdf5_meta *m)
{
	if (m->dxpl >= 0)
		H5Pclose(m->dxpl);
	if (m->mtype >= 0)
		H5Tclose(m->mtype);
	if (m->dset >= 0)
		H5Dclose(m->dset);
	if (m->fid >= 0)
		H5Fclose(m->fid);
	free(m->lengths);
	free(m->scratch);
	free(m);
}

static const char *hdf5_layout_name(hid_t dset, char *buf, size_t len)
{
	hid_t dcpl = H5Dget_create_plist(dset);
	H5D_layout_t layout = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
	size_t used;

	snprintf(buf, len, "%s",
		 layout == H5D_CHUNKED	    ? "chunked"
		 : layout == H5D_COMPACT    ? "compact"
		 : layout == H5D_CONTIGUOUS ? "contiguous"
					    : "unknown");
	if (layout == H5D_CHUNKED) {
		hsize_t c[H5S_MAX_RANK];
		int nd = H5Pget_chunk(dcpl, H5S_MAX_RANK, c);
		int nf = H5Pget_nfilters(dcpl);

		for (int i = 0; i < nd; i++) {
			used = strlen(buf);
			snprintf(buf + used, len - used, "%s%llu", i ? ", " : " (",
				 (unsigned long long)c[i]);
		}
		used = strlen(buf);
		snprintf(buf + used, len - used, "%s", nd > 0 ? ")" : "");
		for (int i = 0; i < nf; i++) {
			char name[64] = "";
			unsigned fl, cd[8];
			size_t ncd = 8;

			H5Pget_filter2(dcpl, (unsigned)i, &fl, &ncd, cd, sizeof(name), name, NULL);
			used = strlen(buf);
			snprintf(buf + used, len - used, " %s", name[0] ? name : "filter");
		}
	}
	if (dcpl >= 0)
		H5Pclose(dcpl);
	return buf;
}

static void hdf5_record_info(struct run *run, struct hdf5_meta *m)
{
	char layout[256];
	json_t *o;

	if (!run->info_format || json_object_get(run->info_format, "hdf5"))
		return;
	o = json_pack("{s:s, s:s, s:s, s:s}", "driver", m->mpio ? "mpio" : "sec2", "transfer",
		      m->collective ? "collective" : "independent", "dataset", m->name, "layout",
		      hdf5_layout_name(m->dset, layout, sizeof(layout)));
	if (o)
		json_object_set_new(run->info_format, "hdf5", o);
}

/* H5Fopen follows links and blocks on a FIFO: anything but a regular file is refused first
 * (a shared file is the same file on every rank, so all ranks refuse it together). */
static int hdf5_check_regular(struct run *run, const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return run_fail(run, -errno, "hdf5: cannot open '%s': %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return run_fail(run, -FB_ENOTREG,
				"hdf5: cannot open '%s': it is %s, not a regular file", path,
				safe_kind(st.st_mode));
	return 0;
}

static int hdf5_index_locked(struct run *run, struct ds_file *file, struct hdf5_meta *m)
{
	char why[256];
	hid_t fapl;
	int err;

	fapl = hdf5_fapl(run, m->mpio, m->collective);
	/* No sieve buffer (nor, at H5Dopen, chunk cache): every sample access reaches the
	 * storage, as the page-cache settings say; HDF5's own caches would serve neighbours. */
	if (fapl >= 0)
		H5Pset_sieve_buf_size(fapl, 0);
	if (fapl < 0)
		return run_fail(run, -FB_EHDF5, "hdf5: cannot set up the %s driver for '%s': %s",
				m->mpio ? "mpio" : "sec2", file->path, hdf5_why(why, sizeof(why)));
	if ((err = hdf5_check_regular(run, file->path)) < 0) {
		hdf5_quiet_close(H5Pclose, fapl);
		return err;
	}
	m->fid = H5Fopen(file->path, H5F_ACC_RDONLY, fapl);
	hdf5_quiet_close(H5Pclose, fapl);
	if (m->fid < 0)
		return run_fail(run, -FB_EFORMAT, "hdf5: cannot open '%s': %s", file->path,
				hdf5_why(why, sizeof(why)));
	m->dset = hdf5_open_records(run, m->fid, file->path, !run->ds.generated, m->name,
				    sizeof(m->name));
	if (m->dset < 0)
		return (int)m->dset;
	err = hdf5_geometry(run, m, file->path);
	if (err < 0)
		return err;
	if (m->dims[0] < file->nsamples)
		return run_fail(run, -FB_EDATASET,
				"hdf5: dataset '%s' in '%s' has %llu samples, expected %llu",
				m->name, file->path, (unsigned long long)m->dims[0],
				(unsigned long long)file->nsamples);
	if (m->collective) {
		m->dxpl = H5Pcreate(H5P_DATASET_XFER);
		if (m->dxpl < 0 || H5Pset_dxpl_mpio(m->dxpl, H5FD_MPIO_COLLECTIVE) < 0)
			return run_fail(run, -FB_EHDF5, "hdf5: cannot set collective transfer: %s",
					hdf5_why(why, sizeof(why)));
	}
	hdf5_record_info(run, m);
	return 0;
}

/* Opens the file once per rank; shared files collectively on run->comm (every rank indexes
 * every shared file, in the same order). */
int hdf5_index(struct run *run, struct ds_file *file)
{
	struct hdf5_meta *m = calloc(1, sizeof(*m));
	int err;

	if (!m)
		return run_fail(run, -ENOMEM, "hdf5: out of memory indexing '%s'", file->path);
	m->fid = m->dset = m->dxpl = m->mtype = -1;
	m->mpio = run->cfg.dataset.file_access == FILE_ACCESS_SHARED;
	m->collective = m->mpio && run->cfg.hdf5.transfer == HDF5_TRANSFER_COLLECTIVE;
	hdf5_enter();
	child_worker_stop(&hdf5_worker); /* the foreign files were all probed */
	err = hdf5_index_locked(run, file, m);
	/* A shared file stays open on every rank or on none: closing it is collective. */
	if (m->mpio) {
		int worst = err;

		MPI_Allreduce(&err, &worst, 1, MPI_INT, MPI_MIN, run->comm);
		if (worst < 0 && err == 0)
			err = run_fail(run, -FB_EPEER, "hdf5: another rank could not open '%s'",
				       file->path);
	}
	if (err < 0)
		hdf5_meta_close(m);
	hdf5_leave();
	if (err < 0)
		return err;
	file->meta = m;
	return 0;
}

void hdf5_unindex(struct ds_file *file)
{
	if (!file->meta)
		return;
	hdf5_enter();
	hdf5_meta_close(file->meta);
	hdf5_leave();
	file->meta = NULL;
}

/* ---- bring your own data --------------------------------------------------------------------- */

static const char *hdf5_type_name(hid_t t, char *buf, size_t len)
{
	size_t size = H5Tget_size(t);

	switch (H5Tget_class(t)) {
	case H5T_INTEGER:
		snprintf(buf, len, "%sint%zu", H5Tget_sign(t) == H5T_SGN_NONE ? "u" : "", 8 * size);
		break;
	case H5T_FLOAT:
		snprintf(buf, len, "float%zu", 8 * size);
		break;
	default:
		snprintf(buf, len, "%zu-byte", size);
		break;
	}
	return buf;
}

static int hdf5_probe_locked(struct run *run, const char *path, struct probe_info *info,
			     struct hdf5_meta *m)
{
	char why[256], type[32], layout[160], shape[128] = "";
	hid_t fapl = hdf5_fapl(run, false, false);
	int err;

	if (fapl < 0)
		return run_fail(run, -FB_EHDF5, "hdf5: cannot set up the sec2 driver: %s",
				hdf5_why(why, sizeof(why)));
	if ((err = hdf5_check_regular(run, path)) < 0) {
		hdf5_quiet_close(H5Pclose, fapl);
		return err;
	}
	m->fid = H5Fopen(path, H5F_ACC_RDONLY, fapl);
	hdf5_quiet_close(H5Pclose, fapl);
	if (m->fid < 0)
		return run_fail(run, -FB_EFORMAT, "hdf5: cannot open '%s': %s", path,
				hdf5_why(why, sizeof(why)));
	m->dset = hdf5_open_records(run, m->fid, path, true, m->name, sizeof(m->name));
	if (m->dset < 0)
		return (int)m->dset;
	err = hdf5_geometry(run, m, path);
	if (err < 0)
		return err;
	info->nsamples = m->dims[0];
	info->max_sample = 0;
	info->data_bytes = 0;
	for (uint64_t i = 0; m->lengths && i < m->dims[0]; i++) {
		uint64_t b = hdf5_sample_bytes(m, i);

		info->data_bytes += b;
		if (b > info->max_sample)
			info->max_sample = b;
	}
	if (!m->lengths) {
		info->max_sample = m->row_elems * m->elem;
		info->data_bytes = info->max_sample * m->dims[0];
	}
	for (int i = 0; i < m->ndims; i++) {
		size_t used = strlen(shape);

		snprintf(shape + used, sizeof(shape) - used, "%s%llu", i ? ", " : "",
			 (unsigned long long)m->dims[i]);
	}
	snprintf(info->detail, sizeof(info->detail), "hdf5 '%.64s' %.16s (%.60s) %.80s%s", m->name,
		 hdf5_type_name(m->mtype, type, sizeof(type)), shape,
		 hdf5_layout_name(m->dset, layout, sizeof(layout)),
		 m->lengths ? " with 'lengths'" : "");
	return 0;
}

/* The probe's calls, made first in a forked child (child.h): a foreign file that crashes the
 * library ends the child, and the run says so, instead of dying of SIGSEGV inside libhdf5.
 * One worker child (hdf5_worker) serves every file of a folder. */

static int hdf5_trial(const char *path, void *arg)
{
	struct hdf5_meta m = {.fid = -1, .dset = -1, .dxpl = -1, .mtype = -1};
	struct run *run = arg;
	struct probe_info info;

	fb_errbuf_init(&run->err); /* the worker's copy: never held by another thread */
	return hdf5_probe_locked(run, path, &info, &m);
}

int hdf5_probe(struct run *run, const char *path, struct probe_info *info)
{
	struct hdf5_meta *m = calloc(1, sizeof(*m));
	char how[64];
	int err;

	if (!m)
		return run_fail(run, -ENOMEM, "hdf5: out of memory probing '%s'", path);
	m->fid = m->dset = m->dxpl = m->mtype = -1;
	hdf5_enter();
	err =
	    child_worker_call(&hdf5_worker, hdf5_trial, run, path, HDF5_TRIAL_MS, how, sizeof(how));
	if (err == CHILD_CRASHED)
		err = run_fail(run, -FB_EFORMAT,
			       "cannot read '%s': the HDF5 library crashed on it (%s)", path, how);
	else if (err == -ETIMEDOUT)
		err = run_fail(run, -FB_EFORMAT,
			       "cannot read '%s': the HDF5 library did not finish opening it in "
			       "%d s",
			       path, HDF5_TRIAL_MS / 1000);
	else
		err = hdf5_probe_locked(run, path, info, m); /* also when no child could start */
	hdf5_meta_close(m);
	hdf5_leave();
	return err;
}
