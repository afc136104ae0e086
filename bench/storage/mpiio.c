/* MPI-IO back-end: reads and writes through MPI_File_* so the MPI library's I/O layer (ROMIO
 * or OMPIO), its hints and its collective buffering are what gets measured.
 *
 * Per-rank files are opened on MPI_COMM_SELF; files opened with STORAGE_O_SHARED are opened on
 * run->comm (collective: train.c opens them once per rank on the main thread). Every key of
 * [storage.mpiio] other than feedbench's own is passed as a hint, and the hints the library
 * kept are read back with MPI_File_get_info and recorded once per run, so ignored hints show.
 * O_DIRECT is not offered: ROMIO's direct I/O hints are file-system specific and OMPIO has
 * none, so a request for it is refused by validation (no STORAGE_CAP_DIRECT).
 */
#include "mpiio.h"
#include "fs.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../run.h"
#include "storage.h"
#include "../safefile.h"

/* Largest count handed to one MPI call (counts are int); the wrappers loop over the rest. */
#define MPIIO_MAX_CALL (1u << 30)

struct mpiio_file {
	struct sfile_base base;
	MPI_File fh;
	struct run *run;
};

int mpiio_error_code(int mpirc, char *msg, size_t len)
{
	char text[MPI_MAX_ERROR_STRING];
	int tlen = 0, cls = MPI_ERR_OTHER;

	if (MPI_Error_string(mpirc, text, &tlen) != MPI_SUCCESS)
		snprintf(text, sizeof(text), "MPI error %d", mpirc);
	snprintf(msg, len, "%s", text);
	MPI_Error_class(mpirc, &cls);
	/* Classes with an exact errno keep it: users and tests know "No space left on device". */
	if (cls == MPI_ERR_NO_SUCH_FILE)
		return -ENOENT;
	if (cls == MPI_ERR_NO_SPACE)
		return -ENOSPC;
	if (cls == MPI_ERR_QUOTA)
		return -EDQUOT;
	if (cls == MPI_ERR_ACCESS)
		return -EACCES;
	if (cls == MPI_ERR_READ_ONLY)
		return -EROFS;
	if (cls == MPI_ERR_FILE_EXISTS)
		return -EEXIST;
	return -FB_EMPI;
}

/* Records "cannot <what> '<path>'<where>: <MPI text>" and returns the code. */
static int mpiio_fail(struct run *run, int mpirc, const char *what, const char *path,
		      const char *where)
{
	char text[MPI_MAX_ERROR_STRING + 64];
	int rc = mpiio_error_code(mpirc, text, sizeof(text));

	return run_fail(run, rc, "cannot %s '%s'%s: %s", what, path, where, text);
}

int mpiio_file_handle(struct sfile *sf, MPI_File *fh)
{
	struct mpiio_file *f = (struct mpiio_file *)sf;

	if (!sf || f->base.ops != &mpiio_storage)
		return -EINVAL;
	*fh = f->fh;
	return 0;
}

static json_t *mpiio_info_json(MPI_Info info)
{
	json_t *obj = json_object();
	int nkeys = 0;

	if (info == MPI_INFO_NULL || MPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS)
		return obj;
	for (int i = 0; i < nkeys; i++) {
		char key[MPI_MAX_INFO_KEY + 1];
		char value[MPI_MAX_INFO_VAL + 1];
		int flag = 0;

		if (MPI_Info_get_nthkey(info, i, key) != MPI_SUCCESS)
			continue;
		if (MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag) != MPI_SUCCESS || !flag)
			continue;
		json_object_set_new(obj, key, json_string(value));
	}
	return obj;
}

/* Records requested and effective hints the first time a file is opened in this run. Opens
 * run on reader threads: the run's lock (the one its warnings take) guards the record. No
 * per-run state of its own (run->storage_priv), so that a back-end wrapping this one (faulty)
 * keeps its own there. */
static void mpiio_record_hints(struct run *run, MPI_Info requested, MPI_File fh)
{
	MPI_Info effective = MPI_INFO_NULL;
	json_t *rec;

	pthread_mutex_lock(&run->err.lock);
	if (!run->info_storage || json_object_get(run->info_storage, "mpiio_hints"))
		goto out_unlock;
	if (MPI_File_get_info(fh, &effective) != MPI_SUCCESS)
		effective = MPI_INFO_NULL;
	rec = json_object();
	json_object_set_new(rec, "requested", mpiio_info_json(requested));
	json_object_set_new(rec, "effective", mpiio_info_json(effective));
	json_object_set_new(run->info_storage, "mpiio_hints", rec);
	if (effective != MPI_INFO_NULL)
		MPI_Info_free(&effective);
out_unlock:
	pthread_mutex_unlock(&run->err.lock);
}

/* The hints of [storage.mpiio], plus striping hints for shared files being created. */
static int mpiio_build_info(struct run *run, int flags, MPI_Info *info)
{
	int rc = MPI_Info_create(info);

	if (rc != MPI_SUCCESS)
		return rc;
	for (int i = 0; i < run->cfg.mpiio.nhints; i++) {
		rc =
		    MPI_Info_set(*info, run->cfg.mpiio.hints[i].key, run->cfg.mpiio.hints[i].value);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	if ((flags & STORAGE_O_SHARED) && (flags & STORAGE_O_WRITE))
		stripe_hints(run, info);
	return MPI_SUCCESS;
}

/* Reads: a regular file (links followed); writes: missing or a regular file of ours. */
static int mpiio_check_path(const char *path, int flags)
{
	const char *what;
	struct stat st;

	if (flags & STORAGE_O_WRITE)
		return safe_check_owned(path, &what);
	if (stat(path, &st) < 0)
		return -errno;
	return S_ISREG(st.st_mode) ? 0 : -FB_ENOTREG;
}

static int mpiio_open(struct sfile **out, const char *path, int flags, struct run *run)
{
	MPI_Comm comm = (flags & STORAGE_O_SHARED) ? run->comm : MPI_COMM_SELF;
	MPI_Info info = MPI_INFO_NULL;
	struct mpiio_file *f;
	int amode, mrc, rc = 0;

	if (flags & STORAGE_O_DIRECT)
		return run_fail(run, -EINVAL,
				"cannot open '%s': the mpiio back-end does not do direct I/O",
				path);
	/* MPI_File_open follows links and blocks on a FIFO: the same checks as posix first
	 * (every rank of a shared open sees the same file, so all fail together). */
	if ((rc = mpiio_check_path(path, flags)) < 0)
		return rc;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->base.ops = &mpiio_storage;
	f->base.flags = flags;
	f->run = run;
	f->fh = MPI_FILE_NULL;
	snprintf(f->base.path, sizeof(f->base.path), "%s", path);

	if ((flags & STORAGE_O_WRITE) && (flags & STORAGE_O_READ))
		amode = MPI_MODE_RDWR | MPI_MODE_CREATE;
	else if (flags & STORAGE_O_WRITE)
		amode = MPI_MODE_WRONLY | MPI_MODE_CREATE;
	else
		amode = MPI_MODE_RDONLY;

	mrc = mpiio_build_info(run, flags, &info);
	if (mrc != MPI_SUCCESS) {
		rc = mpiio_fail(run, mrc, "set MPI-IO hints for", path, "");
		goto out_free;
	}
	/* Errors on files are returned, never fatal: the default handler for files is
	 * MPI_ERRORS_RETURN already, but a site may change it. */
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	mrc = MPI_File_open(comm, path, amode, info, &f->fh);
	if (mrc != MPI_SUCCESS) {
		rc = mpiio_fail(run, mrc, "open", path, "");
		goto out_info;
	}
	MPI_File_set_errhandler(f->fh, MPI_ERRORS_RETURN);
	/* STORAGE_O_WRITE means create + truncate, as for posix. set_size is collective on
	 * shared handles, and keeps a layout set at creation (stripe_create_file). */
	if ((flags & STORAGE_O_WRITE) && !(flags & STORAGE_O_NOTRUNC)) {
		mrc = MPI_File_set_size(f->fh, 0);
		if (mrc != MPI_SUCCESS) {
			rc = mpiio_fail(run, mrc, "truncate", path, "");
			goto out_close;
		}
	}
	mpiio_record_hints(run, info, f->fh);
	MPI_Info_free(&info);
	*out = (struct sfile *)f;
	return 0;

out_close:
	MPI_File_close(&f->fh);
out_info:
	if (info != MPI_INFO_NULL)
		MPI_Info_free(&info);
out_free:
	free(f);
	return rc;
}

static ssize_t mpiio_count(struct mpiio_file *f, MPI_Status *st, const char *what, uint64_t off)
{
	char where[48];
	int n = 0;

	if (MPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0) {
		snprintf(where, sizeof(where), " at offset %llu", (unsigned long long)off);
		return run_fail(f->run, -FB_EMPI, "cannot %s '%s'%s: no byte count in the status",
				what, f->base.path, where);
	}
	return n;
}

/* One independent read or write of at most MPIIO_MAX_CALL bytes (MPI counts are int). */
static ssize_t mpiio_xfer(struct sfile *sf, void *buf, size_t len, uint64_t off, bool write)
{
	struct mpiio_file *f = (struct mpiio_file *)sf;
	int count = (int)(len > MPIIO_MAX_CALL ? MPIIO_MAX_CALL : len);
	const char *what = write ? "write" : "read";
	MPI_Status st;
	char where[48];
	int mrc;

	mrc = write ? MPI_File_write_at(f->fh, (MPI_Offset)off, buf, count, MPI_BYTE, &st)
		    : MPI_File_read_at(f->fh, (MPI_Offset)off, buf, count, MPI_BYTE, &st);
	if (mrc != MPI_SUCCESS) {
		snprintf(where, sizeof(where), " at offset %llu", (unsigned long long)off);
		return mpiio_fail(f->run, mrc, what, f->base.path, where);
	}
	return mpiio_count(f, &st, what, off);
}

static ssize_t mpiio_pread(struct sfile *sf, void *buf, size_t len, uint64_t off)
{
	return mpiio_xfer(sf, buf, len, off, false);
}

static ssize_t mpiio_pwrite(struct sfile *sf, const void *buf, size_t len, uint64_t off)
{
	return mpiio_xfer(sf, (void *)buf, len, off, true);
}

int mpiio_bytes_type(size_t len, size_t piece, MPI_Datatype *type, int *count)
{
	MPI_Datatype chunk = MPI_DATATYPE_NULL, body = MPI_DATATYPE_NULL;
	size_t n = piece ? len / piece : 0, rem = piece ? len % piece : 0;
	int mrc;

	*type = MPI_BYTE;
	*count = 0;
	if (piece == 0 || piece > INT_MAX || n > INT_MAX)
		return MPI_ERR_COUNT;
	if (len <= piece) {
		*count = (int)len;
		return MPI_SUCCESS;
	}
	mrc = MPI_Type_contiguous((int)piece, MPI_BYTE, &chunk);
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Type_contiguous((int)n, chunk, &body);
	if (mrc == MPI_SUCCESS && rem == 0) {
		*type = body;
		body = MPI_DATATYPE_NULL;
	} else if (mrc == MPI_SUCCESS) {
		int lens[2] = {1, (int)rem};
		MPI_Aint disp[2] = {0, (MPI_Aint)(n * piece)};
		MPI_Datatype types[2] = {body, MPI_BYTE};

		mrc = MPI_Type_create_struct(2, lens, disp, types, type);
	}
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Type_commit(type);
	if (chunk != MPI_DATATYPE_NULL)
		MPI_Type_free(&chunk);
	if (body != MPI_DATATYPE_NULL)
		MPI_Type_free(&body);
	if (mrc == MPI_SUCCESS) {
		*count = 1;
		return MPI_SUCCESS;
	}
	mpiio_bytes_type_free(type);
	*type = MPI_BYTE;
	return mrc;
}

void mpiio_bytes_type_free(MPI_Datatype *type)
{
	if (*type != MPI_BYTE && *type != MPI_DATATYPE_NULL)
		MPI_Type_free(type);
	*type = MPI_BYTE;
}

/* One collective read or write of len bytes, whatever len: one MPI call on every rank, its
 * memory side described by mpiio_bytes_type (counts are int). A rank that cannot describe its
 * transfer still joins the call, with nothing to move, and then fails. */
static ssize_t mpiio_xfer_all(struct sfile *sf, void *buf, size_t len, uint64_t off, bool write)
{
	struct mpiio_file *f = (struct mpiio_file *)sf;
	const char *what = write ? "write" : "read";
	MPI_Datatype type;
	MPI_Status st;
	MPI_Count n = 0;
	char where[48];
	int count, trc, mrc;

	trc = mpiio_bytes_type(len, MPIIO_MAX_CALL, &type, &count);
	mrc = write ? MPI_File_write_at_all(f->fh, (MPI_Offset)off, buf, count, type, &st)
		    : MPI_File_read_at_all(f->fh, (MPI_Offset)off, buf, count, type, &st);
	mpiio_bytes_type_free(&type);
	snprintf(where, sizeof(where), " at offset %llu collectively", (unsigned long long)off);
	if (trc != MPI_SUCCESS)
		return mpiio_fail(f->run, trc, what, f->base.path, where);
	if (mrc != MPI_SUCCESS)
		return mpiio_fail(f->run, mrc, what, f->base.path, where);
	if (MPI_Get_elements_x(&st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
		return run_fail(f->run, -FB_EMPI, "cannot %s '%s'%s: no byte count in the status",
				what, f->base.path, where);
	return (ssize_t)n;
}

int mpiio_extents_type(const struct storage_extent *ext, size_t n, size_t piece, MPI_Datatype *type,
		       size_t *total)
{
	size_t nblocks = 0, b = 0;
	uint64_t end = 0;
	int *lens = NULL;
	MPI_Aint *disp = NULL;
	int mrc;

	*type = MPI_DATATYPE_NULL;
	*total = 0;
	if (piece == 0 || piece > INT_MAX)
		return MPI_ERR_COUNT;
	for (size_t k = 0; k < n; k++) {
		if (ext[k].off < end || ext[k].off > (uint64_t)PTRDIFF_MAX - ext[k].len)
			return MPI_ERR_ARG;
		end = ext[k].off + ext[k].len;
		*total += ext[k].len;
		nblocks += ext[k].len / piece + (ext[k].len % piece != 0);
	}
	if (nblocks > INT_MAX)
		return MPI_ERR_COUNT;
	if (nblocks == 0) {
		*type = MPI_BYTE;
		return MPI_SUCCESS;
	}
	lens = malloc(sizeof(*lens) * nblocks);
	disp = malloc(sizeof(*disp) * nblocks);
	if (!lens || !disp) {
		mrc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	for (size_t k = 0; k < n; k++)
		for (uint64_t at = 0; at < ext[k].len; at += piece, b++) {
			uint64_t left = ext[k].len - at;

			lens[b] = (int)(left > piece ? piece : left);
			disp[b] = (MPI_Aint)(ext[k].off + at);
		}
	mrc = MPI_Type_create_hindexed((int)nblocks, lens, disp, MPI_BYTE, type);
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Type_commit(type);
	if (mrc != MPI_SUCCESS && *type != MPI_DATATYPE_NULL)
		MPI_Type_free(type);
out_free:
	free(lens);
	free(disp);
	if (mrc != MPI_SUCCESS)
		*type = MPI_DATATYPE_NULL;
	return mrc;
}

/* The bytes of the ranges that lie inside the file, at most got: through a file view, Open MPI
 * (OMPIO and ROMIO alike) reports every byte asked for even when the last ranges run past the
 * end of the file, so the end is checked against the file's size. */
static ssize_t mpiio_extents_upto(struct mpiio_file *f, const struct storage_extent *ext, size_t n,
				  uint64_t got)
{
	MPI_Offset size = 0;
	uint64_t in = 0;

	/* MPI_File_get_size is not collective: a rank with no range need not call it. */
	if (n == 0)
		return (ssize_t)got;
	if (MPI_File_get_size(f->fh, &size) != MPI_SUCCESS || size < 0)
		return (ssize_t)got; /* no better answer than the status */
	for (size_t k = 0; k < n && ext[k].off < (uint64_t)size; k++) {
		uint64_t left = (uint64_t)size - ext[k].off;

		in += ext[k].len < left ? ext[k].len : left;
	}
	return (ssize_t)(in < got ? in : got);
}

/* One MPI_File_read_all of n byte ranges: their hindexed type as the file view (MPI needs
 * non-decreasing displacements: the caller sorted them), the memory side one count of
 * mpiio_bytes_type, then the view back to plain bytes so the handle reads like any other. A
 * rank that cannot describe its ranges still joins the call with nothing to read, then fails. */
static ssize_t mpiio_pread_extents_all(struct sfile *sf, void *buf,
				       const struct storage_extent *ext, size_t n)
{
	struct mpiio_file *f = (struct mpiio_file *)sf;
	MPI_Datatype ftype = MPI_DATATYPE_NULL, mtype = MPI_BYTE;
	MPI_Status st;
	MPI_Count got = 0;
	size_t total = 0;
	char where[64];
	int count = 0, trc, mrc, vrc, rrc;

	snprintf(where, sizeof(where), " at offset %llu collectively",
		 (unsigned long long)(n ? ext[0].off : 0));
	trc = mpiio_extents_type(ext, n, MPIIO_MAX_CALL, &ftype, &total);
	if (trc == MPI_SUCCESS)
		trc = mpiio_bytes_type(total, MPIIO_MAX_CALL, &mtype, &count);
	if (trc != MPI_SUCCESS) {
		/* Nothing to read, so that the others' call is matched. */
		mpiio_bytes_type_free(&ftype);
		mpiio_bytes_type_free(&mtype);
		count = 0;
	}
	vrc = MPI_File_set_view(f->fh, 0, MPI_BYTE, ftype != MPI_DATATYPE_NULL ? ftype : MPI_BYTE,
				"native", MPI_INFO_NULL);
	mrc = MPI_File_read_all(f->fh, buf, count, mtype, &st);
	rrc = MPI_File_set_view(f->fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
	mpiio_bytes_type_free(&ftype);
	mpiio_bytes_type_free(&mtype);
	if (trc != MPI_SUCCESS)
		return mpiio_fail(f->run, trc, "describe the ranges to read of", f->base.path,
				  where);
	if (vrc != MPI_SUCCESS)
		return mpiio_fail(f->run, vrc, "set the file view of", f->base.path, where);
	if (mrc != MPI_SUCCESS)
		return mpiio_fail(f->run, mrc, "read", f->base.path, where);
	if (rrc != MPI_SUCCESS)
		return mpiio_fail(f->run, rrc, "reset the file view of", f->base.path, where);
	if (MPI_Get_elements_x(&st, MPI_BYTE, &got) != MPI_SUCCESS || got == MPI_UNDEFINED ||
	    got < 0)
		return run_fail(f->run, -FB_EMPI, "cannot read '%s'%s: no byte count in the status",
				f->base.path, where);
	return mpiio_extents_upto(f, ext, n, (uint64_t)got);
}

static ssize_t mpiio_pread_all(struct sfile *sf, void *buf, size_t len, uint64_t off)
{
	return mpiio_xfer_all(sf, buf, len, off, false);
}

static ssize_t mpiio_pwrite_all(struct sfile *sf, const void *buf, size_t len, uint64_t off)
{
	return mpiio_xfer_all(sf, (void *)buf, len, off, true);
}

/* Collective on shared handles. */
static int mpiio_sync(struct sfile *sf)
{
	struct mpiio_file *f = (struct mpiio_file *)sf;
	int mrc = MPI_File_sync(f->fh);

	return mrc == MPI_SUCCESS ? 0 : mpiio_fail(f->run, mrc, "sync", f->base.path, "");
}

/* Collective on shared handles. */
static int mpiio_close(struct sfile *sf)
{
	struct mpiio_file *f = (struct mpiio_file *)sf;
	int mrc = MPI_File_close(&f->fh);
	int rc = 0;

	if (mrc != MPI_SUCCESS)
		rc = mpiio_fail(f->run, mrc, "close", f->base.path, "");
	free(f);
	return rc;
}

static int mpiio_size(struct sfile *sf, uint64_t *size)
{
	struct mpiio_file *f = (struct mpiio_file *)sf;
	MPI_Offset n = 0;
	int mrc = MPI_File_get_size(f->fh, &n);

	if (mrc != MPI_SUCCESS)
		return mpiio_fail(f->run, mrc, "get the size of", f->base.path, "");
	*size = (uint64_t)n;
	return 0;
}

/* MPI-IO has no cache control; the page cache belongs to the inode, so a descriptor of our
 * own can drop it. */
static int mpiio_evict(struct sfile *sf)
{
	struct mpiio_file *f = (struct mpiio_file *)sf;
	int fd = open(f->base.path, O_RDONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	rc = -posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	return rc;
}

const struct storage_ops mpiio_storage = {
    .version = STORAGE_OPS_VERSION,
    .name = "mpiio",
    .caps = STORAGE_CAP_COLLECTIVE | STORAGE_CAP_SHARED,
    .open = mpiio_open,
    .pread = mpiio_pread,
    .pwrite = mpiio_pwrite,
    .sync = mpiio_sync,
    .close = mpiio_close,
    .size = mpiio_size,
    .evict = mpiio_evict,
    .pread_all = mpiio_pread_all,
    .pwrite_all = mpiio_pwrite_all,
    .pread_extents_all = mpiio_pread_extents_all,
};
