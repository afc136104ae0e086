/* Lustre striping: apply the requested layout, read back what the file system did, and tell
 * MPI-IO about it.
 *
 * Debian's Open MPI has no Lustre support and older OMPIO reads other hint names than ROMIO,
 * so feedbench sets layouts itself: on the data folder for per-rank files (new files inherit a
 * directory's layout) and on each file at creation (a layout cannot change once a file has
 * data, and regeneration would otherwise truncate files that keep their old layout).
 * liblustreapi is loaded at run time so one binary runs everywhere; without it the ioctls that
 * `lfs setstripe` uses are issued directly. Every system call goes through run->fs_sys so
 * tests can watch what a real Lustre would receive.
 */
#include "fs.h"
#include "fs_sys.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../run.h"
#include "../../formats/format.h"

/* Lustre requires stripe sizes in multiples of 64 KiB. */
#define STRIPE_SIZE_UNIT 65536ull

static struct stripe_layout stripe_requested(const struct run *run)
{
	struct stripe_layout l = {
	    .count = run->cfg.storage.stripe_count,
	    .size = run->cfg.storage.stripe_size,
	    .offset = run->cfg.storage.stripe_offset,
	    .object_size = run->cfg.storage.object_size,
	    .composite = run->cfg.storage.stripe_layout[0] != '\0',
	};

	return l;
}

static bool stripe_is_requested(const struct stripe_layout *l)
{
	return l->count != 0 || l->size != 0 || l->offset >= 0 || l->object_size != 0 ||
	       l->composite;
}

/* The components of [storage] stripe_layout (checked when the config was read). */
static int stripe_comps(const struct run *run, struct stripe_comp *c)
{
	char why[256];
	int n = stripe_layout_parse(run->cfg.storage.stripe_layout, c, STRIPE_MAX_COMPS, why,
				    sizeof(why));

	return n < 0 ? 0 : n;
}

/* A composite layout where the file system has none: a configuration error, not a warning,
 * since the layout asked for decides where each byte of every file goes. */
static int stripe_refuse_composite(struct run *run)
{
	return run_fail(run, -FB_ECONFIG,
			"[storage] stripe_layout = \"%s\": composite (progressive) layouts exist "
			"only on Lustre; %s has none (use stripe_count and stripe_size)",
			run->cfg.storage.stripe_layout,
			run->fs.type[0] ? run->fs.type : "this file system");
}

static bool stripe_applies(const struct run *run)
{
	struct stripe_layout l = stripe_requested(run);

	return stripe_is_requested(&l) && run->fs.can_stripe;
}

static void stripe_record_unsupported(struct run *run)
{
	char text[64];

	snprintf(text, sizeof(text), "unsupported (%s)",
		 run->fs.type[0] ? run->fs.type : "unknown");
	json_object_set_new(run->info_storage, "stripe_effective", json_string(text));
}

/* Records "stripe_requested" and, on a file system that cannot stripe, the one warning and
 * "stripe_effective": "unsupported (<fs>)". Idempotent (run_warn keeps a text once), so it may
 * run at preparation and again at read-back. Returns whether striping was requested. */
static bool stripe_record_request(struct run *run)
{
	struct stripe_layout l = stripe_requested(run);

	json_object_set_new(run->info_storage, "stripe_requested",
			    json_pack("{s:I, s:I, s:I, s:I}", "count", (json_int_t)l.count, "size",
				      (json_int_t)l.size, "offset", (json_int_t)l.offset,
				      "object_size", (json_int_t)l.object_size));
	if (l.composite) {
		struct stripe_comp c[STRIPE_MAX_COMPS];

		json_object_set_new(json_object_get(run->info_storage, "stripe_requested"),
				    "components", pfl_json(c, stripe_comps(run, c)));
	}
	if (run->fs.client[0]) {
		json_object_set_new(run->info_storage, "fs_client", json_string(run->fs.client));
		json_object_set_new(run->info_storage, "fs_detected_by",
				    json_string(run->fs.detected));
	}
	if (!stripe_is_requested(&l)) {
		/* Nothing asked, nothing to warn about; the record still says what the files
		 * have where the file system cannot stripe (Lustre reads it back). */
		if (!run->fs.can_stripe)
			stripe_record_unsupported(run);
		return false;
	}
	if (!run->fs.can_stripe) {
		run_warn(run,
			 "striping is not supported on %s: stripe_count, stripe_size, "
			 "stripe_offset and object_size are ignored",
			 run->fs.type[0] ? run->fs.type : "this file system");
		stripe_record_unsupported(run);
	}
	return true;
}

/* A v1 layout request as `lfs setstripe` sends it: 0 = default, -1 = all / any. */
static void stripe_fill_lum(struct lov_user_md_v1 *lum, const struct stripe_layout *l)
{
	memset(lum, 0, sizeof(*lum));
	lum->lmm_magic = LOV_USER_MAGIC_V1;
	lum->lmm_pattern = LOV_PATTERN_RAID0;
	lum->lmm_stripe_size = (uint32_t)l->size;
	lum->lmm_stripe_count = l->count < 0 ? LOV_ALL_STRIPES : (uint16_t)l->count;
	lum->lmm_stripe_offset = l->offset < 0 ? LOV_OFFSET_DEFAULT : (uint16_t)l->offset;
}

static void stripe_describe(const struct stripe_layout *l, char *buf, size_t len)
{
	snprintf(buf, len,
		 "stripe_count %" PRId64 ", stripe_size %" PRIu64 ", stripe_offset %" PRId64,
		 l->count, l->size, l->offset);
}

/* Opens liblustreapi when it is installed; NULL otherwise (the ioctl path is used). */
static void *stripe_lib_open(const struct fs_sys *sys)
{
	return sys->dlopen(LUSTREAPI_SONAME, RTLD_NOW | RTLD_LOCAL);
}

/* Sets the default layout of a directory: files created in it afterwards inherit it. */
static int stripe_set_dir(struct run *run, const char *dir, const struct stripe_layout *l)
{
	const struct fs_sys *sys = fs_sys_of(run);
	struct lov_user_md_v1 lum;
	char what[128];
	int fd, rc;

	stripe_describe(l, what, sizeof(what));
	rc = fs_sys_mkdir_p(sys, dir);
	if (rc)
		return run_fail(run, rc, "cannot create the data folder '%s': %s", dir,
				fb_strerror(rc));
	fd = sys->open(dir, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0) {
		rc = -errno;
		return run_fail(run, rc, "cannot open the data folder '%s': %s", dir,
				fb_strerror(rc));
	}
	stripe_fill_lum(&lum, l);
	rc = 0;
	if (sys->ioctl(fd, LL_IOC_LOV_SETSTRIPE, &lum) != 0) {
		rc = -errno;
		run_fail(run, rc, "cannot set the stripe layout (%s) of '%s': %s", what, dir,
			 fb_strerror(rc));
	}
	sys->close(fd);
	return rc;
}

/* Per-rank files: the folder's layout applies to files created after it is set, and a file
 * that is truncated keeps its old layout, so files left from an earlier generation are removed
 * (generation rewrites them, and the manifest is removed with them). */
static int stripe_set_dir_and_clear(struct run *run, const struct stripe_layout *l)
{
	const struct fs_sys *sys = fs_sys_of(run);
	int rc = stripe_set_dir(run, run->cfg.dataset.data_dir, l);

	for (uint32_t i = 0; !rc && i < run->ds.nfiles; i++) {
		char pbuf[CFG_PATH_MAX + 64];
		const char *path = dataset_path(&run->ds, i, pbuf, sizeof(pbuf));

		if (path && sys->unlink(path) != 0 && errno != ENOENT) {
			rc = -errno;
			run_fail(run, rc, "cannot remove '%s' to re-create it striped: %s", path,
				 fb_strerror(rc));
		}
	}
	return rc;
}

int stripe_prepare(struct run *run)
{
	struct stripe_layout l = stripe_requested(run);

	if (l.composite && run->fs.striper != FS_STRIPER_LUSTRE)
		return stripe_refuse_composite(run);
	if (!stripe_record_request(run))
		return 0;
	if (l.size % STRIPE_SIZE_UNIT != 0)
		return run_fail(run, -FB_ECONFIG,
				"[storage] stripe_size = %" PRIu64
				" is not a multiple of 64 KiB (65536), as Lustre requires",
				l.size);
	if (!run->fs.can_stripe)
		return 0;
	if (run->fs.striper == FS_STRIPER_CEPH)
		return ceph_prepare(run, &l);
	if (l.object_size)
		run_warn(run, "object_size is a CephFS setting: ignored on %s", run->fs.type);
	if (l.composite) {
		struct stripe_comp c[STRIPE_MAX_COMPS];

		return pfl_prepare(run, c, stripe_comps(run, c));
	}
	/* Shared files get their layout when they are created (stripe_create_file), except
	 * those a library writes under another name and renames: they take the folder's. */
	if ((run->cfg.dataset.file_access == FILE_ACCESS_SHARED &&
	     !(run->format && (run->format->caps & FORMAT_CAP_RENAMES))) ||
	    run->rank != 0)
		return 0;
	return stripe_set_dir_and_clear(run, &l);
}

/* Creation through liblustreapi: llapi_file_create(name, size, offset, count, pattern). */
static int stripe_create_llapi(const struct fs_sys *sys, void *lib, const char *path,
			       const struct stripe_layout *l, bool *done)
{
	llapi_file_create_fn create;
	int rc;

	*done = false;
	create = (llapi_file_create_fn)sys->dlsym(lib, "llapi_file_create");
	if (!create)
		return 0;
	*done = true;
	rc = create(path, l->size, (int)l->offset, (int)l->count, 0 /* RAID0 */);
	return rc > 0 ? -rc : rc;
}

/* Creation without the library: an inode without objects, then the layout. */
static int stripe_create_ioctl(const struct fs_sys *sys, const char *path,
			       const struct stripe_layout *l)
{
	struct lov_user_md_v1 lum;
	int fd, rc = 0;

	fd = sys->open(path, O_CREAT | O_EXCL | O_WRONLY | O_LOV_DELAY_CREATE, 0644);
	if (fd < 0)
		return -errno;
	stripe_fill_lum(&lum, l);
	if (sys->ioctl(fd, LL_IOC_LOV_SETSTRIPE, &lum) != 0)
		rc = -errno;
	if (sys->close(fd) != 0 && !rc)
		rc = -errno;
	return rc;
}

/* Called by the one rank that creates the file (the caller orders the others after it). */
int stripe_create_file(struct run *run, const char *path)
{
	const struct fs_sys *sys = fs_sys_of(run);
	struct stripe_layout l = stripe_requested(run);
	bool done = false;
	char what[128];
	void *lib;
	int rc;

	if (!stripe_applies(run))
		return 0;
	if (run->fs.striper == FS_STRIPER_CEPH)
		return ceph_create_file(run, path, &l);
	/* Per-rank files and files a library renames into place take the folder's layout. */
	if (run->cfg.dataset.file_access != FILE_ACCESS_SHARED ||
	    (run->format && (run->format->caps & FORMAT_CAP_RENAMES)))
		return 0;
	if (l.composite) {
		struct stripe_comp c[STRIPE_MAX_COMPS];

		return pfl_create_file(run, path, c, stripe_comps(run, c));
	}
	stripe_describe(&l, what, sizeof(what));
	/* A layout cannot change once a file has objects: start from a new inode. */
	if (sys->unlink(path) != 0 && errno != ENOENT) {
		rc = -errno;
		return run_fail(run, rc, "cannot remove '%s' to re-create it striped: %s", path,
				fb_strerror(rc));
	}
	lib = stripe_lib_open(sys);
	if (lib) {
		rc = stripe_create_llapi(sys, lib, path, &l, &done);
		sys->dlclose(lib);
		if (done && rc)
			return run_fail(run, rc,
					"cannot create '%s' with %s (llapi_file_create): %s", path,
					what, fb_strerror(rc));
	}
	if (!done) {
		rc = stripe_create_ioctl(sys, path, &l);
		if (rc)
			return run_fail(run, rc, "cannot create '%s' with %s: %s", path, what,
					fb_strerror(rc));
	}
	return 0;
}

/* Reads a layout through the layout API; false when the library lacks it. */
static bool stripe_get_llapi(const struct fs_sys *sys, void *lib, const char *path,
			     struct stripe_layout *out, json_t *servers, int *rc)
{
	llapi_layout_get_by_path_fn get;
	llapi_layout_get_u64_fn count_get, size_get;
	llapi_layout_ost_index_get_fn index_get;
	llapi_layout_free_fn layout_free;
	uint64_t v;
	void *layout;

	get = (llapi_layout_get_by_path_fn)sys->dlsym(lib, "llapi_layout_get_by_path");
	count_get = (llapi_layout_get_u64_fn)sys->dlsym(lib, "llapi_layout_stripe_count_get");
	size_get = (llapi_layout_get_u64_fn)sys->dlsym(lib, "llapi_layout_stripe_size_get");
	index_get = (llapi_layout_ost_index_get_fn)sys->dlsym(lib, "llapi_layout_ost_index_get");
	layout_free = (llapi_layout_free_fn)sys->dlsym(lib, "llapi_layout_free");
	if (!get || !count_get || !size_get || !index_get || !layout_free)
		return false;
	*rc = 0;
	layout = get(path, 0);
	if (!layout) {
		*rc = errno ? -errno : -EIO;
		return true;
	}
	out->count = 0;
	if (count_get(layout, &v) == 0)
		out->count = v == LLAPI_LAYOUT_WIDE	 ? -1
			     : v == LLAPI_LAYOUT_DEFAULT ? 0
							 : (int64_t)v;
	out->size = 0;
	if (size_get(layout, &v) == 0 && v != LLAPI_LAYOUT_DEFAULT)
		out->size = v;
	out->offset = -1;
	if (index_get(layout, 0, &v) == 0 && v != LLAPI_LAYOUT_DEFAULT)
		out->offset = (int64_t)v;
	for (int64_t i = 0; i < out->count && i < LOV_MAX_STRIPE_COUNT; i++) {
		if (index_get(layout, (int)i, &v) != 0 || v == LLAPI_LAYOUT_DEFAULT)
			break;
		json_array_append_new(servers, json_integer((json_int_t)v));
	}
	layout_free(layout);
	return true;
}

/* Reads a layout with LL_IOC_LOV_GETSTRIPE; *composite when it is a PFL layout. */
static int stripe_get_ioctl(const struct fs_sys *sys, const char *path, struct stripe_layout *out,
			    json_t *servers, bool *composite)
{
	size_t len = sizeof(struct lov_user_md_v3) +
		     LOV_MAX_STRIPE_COUNT * sizeof(struct lov_user_ost_data_v1);
	struct lov_user_md_v1 *lum;
	int fd, rc = 0;

	*composite = false;
	lum = calloc(1, len);
	if (!lum)
		return -ENOMEM;
	fd = sys->open(path, O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0) {
		rc = -errno;
		goto out_free;
	}
	lum->lmm_magic = LOV_USER_MAGIC_V1;
	if (sys->ioctl(fd, LL_IOC_LOV_GETSTRIPE, lum) != 0) {
		rc = -errno;
		goto out_close;
	}
	if (lum->lmm_magic == LOV_USER_MAGIC_V1 || lum->lmm_magic == LOV_USER_MAGIC_V3) {
		const struct lov_user_ost_data_v1 *obj =
		    lum->lmm_magic == LOV_USER_MAGIC_V1
			? lum->lmm_objects
			: ((struct lov_user_md_v3 *)lum)->lmm_objects;

		out->count = lum->lmm_stripe_count == LOV_ALL_STRIPES ? -1 : lum->lmm_stripe_count;
		out->size = lum->lmm_stripe_size;
		out->offset = lum->lmm_stripe_count > 0 && lum->lmm_stripe_count != LOV_ALL_STRIPES
				  ? (int64_t)obj[0].l_ost_idx
				  : -1;
		for (int i = 0; i < lum->lmm_stripe_count && i < LOV_MAX_STRIPE_COUNT &&
				lum->lmm_stripe_count != LOV_ALL_STRIPES;
		     i++)
			json_array_append_new(servers, json_integer(obj[i].l_ost_idx));
	} else if (lum->lmm_magic == LOV_USER_MAGIC_COMP_V1) {
		*composite = true;
	} else {
		rc = -EPROTO;
	}
out_close:
	sys->close(fd);
out_free:
	free(lum);
	return rc;
}

/* Warns when the effective layout is not what was asked for (values left to the file system
 * are not compared). */
static void stripe_compare(struct run *run, const struct stripe_layout *want,
			   const struct stripe_layout *got)
{
	char w[128], g[128];

	if ((want->count > 0 && got->count != want->count) ||
	    (want->size > 0 && got->size != want->size) ||
	    (want->offset >= 0 && got->offset != want->offset)) {
		stripe_describe(want, w, sizeof(w));
		stripe_describe(got, g, sizeof(g));
		run_warn(run,
			 "stripe layout differs from the request: requested %s, effective %s "
			 "(check with lfs getstripe)",
			 w, g);
	}
}

int stripe_readback(struct run *run, const char *path)
{
	const struct fs_sys *sys = fs_sys_of(run);
	struct stripe_layout want = stripe_requested(run);
	struct stripe_layout got = {.offset = -1};
	const char *method = "ioctl";
	bool composite = false, done = false;
	json_t *eff, *servers;
	void *lib;
	int rc = 0;

	if (want.composite && run->fs.striper != FS_STRIPER_LUSTRE)
		return stripe_refuse_composite(run);
	stripe_record_request(run);
	if (!run->fs.can_stripe)
		return 0;
	if (run->fs.striper == FS_STRIPER_CEPH)
		return ceph_readback(run, &want);
	lib = stripe_lib_open(sys);
	if (lib && pfl_readback(run, lib, path, &rc)) {
		sys->dlclose(lib);
		if (rc)
			return run_fail(run, rc, "cannot read the stripe layout of '%s': %s", path,
					fb_strerror(rc));
		return 0;
	}
	servers = json_array();
	if (lib) {
		done = stripe_get_llapi(sys, lib, path, &got, servers, &rc);
		sys->dlclose(lib);
		method = "llapi";
	}
	if (!done) {
		method = "ioctl";
		json_array_clear(servers);
		rc = stripe_get_ioctl(sys, path, &got, servers, &composite);
	}
	if (rc) {
		json_decref(servers);
		return run_fail(run, rc, "cannot read the stripe layout of '%s': %s", path,
				fb_strerror(rc));
	}
	if (composite) {
		run_warn(run,
			 "'%s' has a composite (PFL) layout: see lfs getstripe for its "
			 "components",
			 path);
		if (!json_object_get(run->info_storage, "stripe_effective"))
			json_object_set_new(run->info_storage, "stripe_effective",
					    json_pack("{s:b, s:s}", "composite", 1, "path", path));
		json_decref(servers);
		return 0;
	}
	/* The first file read back stands for the dataset; every file is compared. */
	eff = json_object_get(run->info_storage, "stripe_effective");
	if (!json_is_object(eff))
		/* servers: the OST index of each stripe (obdidx of lfs getstripe); one file's
		 * stripes never share an OST, so servers_spanned is their number */
		json_object_set_new(
		    run->info_storage, "stripe_effective",
		    json_pack("{s:I, s:I, s:I, s:s, s:s, s:I, s:O}", "count", (json_int_t)got.count,
			      "size", (json_int_t)got.size, "offset", (json_int_t)got.offset,
			      "path", path, "method", method, "servers_spanned",
			      (json_int_t)json_array_size(servers), "servers", servers));
	json_decref(servers);
	if (stripe_is_requested(&want))
		stripe_compare(run, &want, &got);
	return 0;
}

int stripe_readback_dataset(struct run *run)
{
	if (run->rank != 0 || !run->ds.nfiles)
		return 0;
	char pbuf[CFG_PATH_MAX + 64];
	return stripe_readback(run, dataset_path(&run->ds, 0, pbuf, sizeof(pbuf)));
}

/* Sets key unless the user already gave it in [storage.mpiio] (their value wins). */
static void stripe_hint_set(MPI_Info info, const char *key, long long value)
{
	char text[32];
	int len, flag = 0;

	MPI_Info_get_valuelen(info, key, &len, &flag);
	if (flag)
		return;
	snprintf(text, sizeof(text), "%lld", value);
	MPI_Info_set(info, key, text);
}

/* MPI-IO has no CephFS driver (ROMIO: ufs, nfs, testfs; OMPIO: ufs): striping hints are
 * echoed back by MPI_File_get_info yet stripe nothing. feedbench sets the layout itself, so
 * it passes none, says so in summary.json, and warns about hints the user gave. */
static void stripe_hints_ceph(struct run *run, MPI_Info info, const struct stripe_layout *l)
{
	static const char *const keys[] = {"striping_factor", "striping_unit", "stripe_width",
					   "stripe_size"};
	int len, flag;

	json_object_set_new(
	    run->info_storage, "stripe_hints",
	    json_string(stripe_is_requested(l)
			    ? "not passed: MPI-IO has no CephFS driver, so "
			      "striping hints stripe nothing; feedbench set the "
			      "layout itself (stripe_effective.set_by)"
			    : "none: MPI-IO striping hints stripe nothing on cephfs"));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		flag = 0;
		MPI_Info_get_valuelen(info, keys[i], &len, &flag);
		if (flag)
			run_warn(run,
				 "[storage.mpiio] %s does not stripe files on cephfs (MPI-IO has "
				 "no CephFS driver): use [storage] stripe_count, stripe_size and "
				 "object_size",
				 keys[i]);
	}
}

void stripe_hints(struct run *run, void *mpi_info)
{
	struct stripe_layout l = stripe_requested(run);
	MPI_Info info = *(MPI_Info *)mpi_info;

	if (info == MPI_INFO_NULL)
		return;
	if (run->fs.striper == FS_STRIPER_CEPH) {
		stripe_hints_ceph(run, info, &l);
		return;
	}
	if (!stripe_is_requested(&l))
		return;
	/* ROMIO and the MPI standard spell them striping_*; Open MPI's OMPIO before 4.1.6 reads
	 * stripe_width (the count) and stripe_size. */
	if (l.count != 0) {
		stripe_hint_set(info, "striping_factor", l.count);
		stripe_hint_set(info, "stripe_width", l.count);
	}
	if (l.size != 0) {
		stripe_hint_set(info, "striping_unit", (long long)l.size);
		stripe_hint_set(info, "stripe_size", (long long)l.size);
	}
	if (l.offset >= 0)
		stripe_hint_set(info, "romio_lustre_start_iodevice", l.offset);
}
