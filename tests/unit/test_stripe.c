/* Striping: the calls a real Lustre client would receive, captured by a fake struct fs_sys.
 *
 * Per-rank files: the data folder gets the layout (open O_DIRECTORY + LL_IOC_LOV_SETSTRIPE with
 * a lov_user_md_v1) and stale files are removed so they inherit it. Shared files: created with
 * llapi_file_create when liblustreapi loads, else open(O_CREAT|O_EXCL|O_LOV_DELAY_CREATE) +
 * LL_IOC_LOV_SETSTRIPE. Read-back through the layout API or LL_IOC_LOV_GETSTRIPE, recorded in
 * "stripe_effective" with a warning on mismatch. MPI-IO hints in both spellings. On other file
 * systems: one warning and "unsupported (ext4)", and no system call at all.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <mpi.h>

#include "bench/run.h"
#include "formats/format.h"
#include "bench/storage/fs.h"
#include "bench/storage/fs_sys.h"

#define FAKE_MAX_CALLS 32
#define FAKE_LIB       ((void *)0x11b)

enum { CALL_OPEN, CALL_IOCTL, CALL_CLOSE, CALL_UNLINK, CALL_MKDIR, CALL_LLAPI_CREATE };

struct fake_call {
	int kind;
	char path[PATH_MAX];
	int flags;
	unsigned long request;
	struct lov_user_md_v1 lum; /* SETSTRIPE argument */
	unsigned long long size;   /* llapi_file_create arguments */
	int offset, count, pattern;
};

/* What the fake Lustre answers and what it saw (tests are single threaded). */
static struct {
	bool have_lib;
	bool have_pfl;	/* the library has the composite layout calls (2.10+) */
	int fail_ioctl; /* errno for SETSTRIPE, 0 = succeed */
	/* GETSTRIPE / layout API answer */
	uint16_t got_count;
	uint32_t got_size;
	uint32_t got_ost;
	uint32_t got_magic;
	int ncalls;
	struct fake_call calls[FAKE_MAX_CALLS];
} fake;

static struct fake_call *fake_log(int kind, const char *path)
{
	struct fake_call *c = &fake.calls[fake.ncalls < FAKE_MAX_CALLS ? fake.ncalls++ : 0];

	memset(c, 0, sizeof(*c));
	c->kind = kind;
	if (path)
		snprintf(c->path, sizeof(c->path), "%s", path);
	return c;
}

static int fake_open(const char *path, int flags, mode_t mode)
{
	(void)mode;
	fake_log(CALL_OPEN, path)->flags = flags;
	return 42;
}

static int fake_ioctl(int fd, unsigned long request, void *arg)
{
	struct fake_call *c = fake_log(CALL_IOCTL, NULL);

	assert_int_equal(fd, 42);
	c->request = request;
	if (request == LL_IOC_LOV_SETSTRIPE) {
		memcpy(&c->lum, arg, sizeof(c->lum));
		if (fake.fail_ioctl) {
			errno = fake.fail_ioctl;
			return -1;
		}
		return 0;
	}
	if (request == LL_IOC_LOV_GETSTRIPE) {
		struct lov_user_md_v1 *lum = arg;

		lum->lmm_magic = fake.got_magic;
		lum->lmm_pattern = LOV_PATTERN_RAID0;
		lum->lmm_stripe_size = fake.got_size;
		lum->lmm_stripe_count = fake.got_count;
		lum->lmm_stripe_offset = 0; /* layout generation in replies */
		for (int i = 0; i < fake.got_count; i++)
			lum->lmm_objects[i].l_ost_idx = fake.got_ost + (uint32_t)i;
		return 0;
	}
	errno = ENOTTY;
	return -1;
}

static int fake_close(int fd)
{
	(void)fd;
	fake_log(CALL_CLOSE, NULL);
	return 0;
}

static int fake_unlink(const char *path)
{
	fake_log(CALL_UNLINK, path);
	errno = ENOENT;
	return -1;
}

static int fake_mkdir(const char *path, mode_t mode)
{
	(void)mode;
	fake_log(CALL_MKDIR, path);
	errno = EEXIST;
	return -1;
}

static void *fake_dlopen(const char *file, int mode)
{
	(void)mode;
	assert_string_equal(file, "liblustreapi.so.1");
	return fake.have_lib ? FAKE_LIB : NULL;
}

static int fake_dlclose(void *h)
{
	assert_ptr_equal(h, FAKE_LIB);
	return 0;
}

/* ---- a fake liblustreapi -------------------------------------------------------------- */

static int fake_llapi_file_create(const char *name, unsigned long long stripe_size,
				  int stripe_offset, int stripe_count, int stripe_pattern)
{
	struct fake_call *c = fake_log(CALL_LLAPI_CREATE, name);

	c->size = stripe_size;
	c->offset = stripe_offset;
	c->count = stripe_count;
	c->pattern = stripe_pattern;
	return 0;
}

static int fake_layout_object;

/* A composite layout as liblustreapi holds it: components and a current one. */
struct fake_pfl {
	struct {
		uint64_t start, end, count, size;
	} comp[8];
	int n, cur;
	bool in_use;
};

static struct fake_pfl fake_pfls[4]; /* [0]: what the file system holds for read-back */
static bool fake_on_disk_composite;
static struct {
	char path[PATH_MAX];
	int flags;
	struct fake_pfl layout; /* copy of what was passed */
	int kind;		/* 1 file_create, 2 file_open */
} fake_pfl_call;

static bool is_pfl(const void *layout)
{
	return layout != &fake_layout_object;
}

static void *fake_layout_alloc(void)
{
	for (int i = 1; i < 4; i++)
		if (!fake_pfls[i].in_use) {
			memset(&fake_pfls[i], 0, sizeof(fake_pfls[i]));
			fake_pfls[i].in_use = true;
			fake_pfls[i].n = 1;
			return &fake_pfls[i];
		}
	return NULL;
}

static int fake_layout_comp_add(void *layout)
{
	struct fake_pfl *l = layout;

	l->comp[l->n].start = l->comp[l->n - 1].end;
	l->cur = l->n++;
	return 0;
}

static int fake_layout_extent_set(void *layout, uint64_t start, uint64_t end)
{
	struct fake_pfl *l = layout;

	l->comp[l->cur].start = start;
	l->comp[l->cur].end = end;
	return 0;
}

static int fake_layout_extent_get(const void *layout, uint64_t *start, uint64_t *end)
{
	const struct fake_pfl *l = layout;

	*start = l->comp[l->cur].start;
	*end = l->comp[l->cur].end;
	return 0;
}

static int fake_layout_count_set(void *layout, uint64_t v)
{
	((struct fake_pfl *)layout)->comp[((struct fake_pfl *)layout)->cur].count = v;
	return 0;
}

static int fake_layout_size_set(void *layout, uint64_t v)
{
	((struct fake_pfl *)layout)->comp[((struct fake_pfl *)layout)->cur].size = v;
	return 0;
}

static int fake_layout_comp_use(void *layout, uint32_t pos)
{
	struct fake_pfl *l = layout;

	if (pos == LLAPI_LAYOUT_COMP_USE_FIRST) {
		l->cur = 0;
		return 0;
	}
	assert_int_equal(pos, LLAPI_LAYOUT_COMP_USE_NEXT);
	if (l->cur + 1 >= l->n)
		return 1;
	l->cur++;
	return 0;
}

static int fake_layout_file_create(const char *path, int flags, int mode, const void *layout)
{
	(void)mode;
	snprintf(fake_pfl_call.path, sizeof(fake_pfl_call.path), "%s", path);
	fake_pfl_call.flags = flags;
	fake_pfl_call.layout = *(const struct fake_pfl *)layout;
	fake_pfl_call.kind = 1;
	return 43;
}

static int fake_layout_file_open(const char *path, int flags, mode_t mode, const void *layout)
{
	fake_layout_file_create(path, flags, (int)mode, layout);
	fake_pfl_call.kind = 2;
	return 43;
}

static bool fake_layout_is_composite(void *layout)
{
	return is_pfl(layout);
}

static void *fake_layout_get_by_path(const char *path, uint32_t flags)
{
	(void)path;
	(void)flags;
	return fake_on_disk_composite ? (void *)&fake_pfls[0] : (void *)&fake_layout_object;
}

static int fake_layout_count_get(const void *layout, uint64_t *v)
{
	if (is_pfl(layout)) {
		*v = ((const struct fake_pfl *)layout)
			 ->comp[((const struct fake_pfl *)layout)->cur]
			 .count;
		return 0;
	}
	*v = fake.got_count == LOV_ALL_STRIPES ? LLAPI_LAYOUT_WIDE : fake.got_count;
	return 0;
}

static int fake_layout_size_get(const void *layout, uint64_t *v)
{
	if (is_pfl(layout)) {
		*v = ((const struct fake_pfl *)layout)
			 ->comp[((const struct fake_pfl *)layout)->cur]
			 .size;
		return 0;
	}
	*v = fake.got_size;
	return 0;
}

/* Composite: component c's stripes are on OSTs 10c, 10c + 1, ... */
static int fake_layout_ost_index_get(const void *layout, int stripe, uint64_t *v)
{
	if (is_pfl(layout)) {
		*v = 10u * (uint64_t)((const struct fake_pfl *)layout)->cur + (uint64_t)stripe;
		return 0;
	}
	*v = fake.got_ost + (uint64_t)stripe;
	return 0;
}

static void fake_layout_free(void *layout)
{
	if (is_pfl(layout)) {
		if (layout != &fake_pfls[0])
			((struct fake_pfl *)layout)->in_use = false;
		return;
	}
	assert_ptr_equal(layout, &fake_layout_object);
}

static void *fake_dlsym(void *h, const char *name)
{
	assert_ptr_equal(h, FAKE_LIB);
	if (strcmp(name, "llapi_file_create") == 0)
		return (void *)fake_llapi_file_create;
	if (strcmp(name, "llapi_layout_get_by_path") == 0)
		return (void *)fake_layout_get_by_path;
	if (strcmp(name, "llapi_layout_stripe_count_get") == 0)
		return (void *)fake_layout_count_get;
	if (strcmp(name, "llapi_layout_stripe_size_get") == 0)
		return (void *)fake_layout_size_get;
	if (strcmp(name, "llapi_layout_ost_index_get") == 0)
		return (void *)fake_layout_ost_index_get;
	if (strcmp(name, "llapi_layout_free") == 0)
		return (void *)fake_layout_free;
	if (!fake.have_pfl)
		return NULL;
	if (strcmp(name, "llapi_layout_alloc") == 0)
		return (void *)fake_layout_alloc;
	if (strcmp(name, "llapi_layout_comp_add") == 0)
		return (void *)fake_layout_comp_add;
	if (strcmp(name, "llapi_layout_comp_extent_set") == 0)
		return (void *)fake_layout_extent_set;
	if (strcmp(name, "llapi_layout_comp_extent_get") == 0)
		return (void *)fake_layout_extent_get;
	if (strcmp(name, "llapi_layout_stripe_count_set") == 0)
		return (void *)fake_layout_count_set;
	if (strcmp(name, "llapi_layout_stripe_size_set") == 0)
		return (void *)fake_layout_size_set;
	if (strcmp(name, "llapi_layout_comp_use") == 0)
		return (void *)fake_layout_comp_use;
	if (strcmp(name, "llapi_layout_file_create") == 0)
		return (void *)fake_layout_file_create;
	if (strcmp(name, "llapi_layout_file_open") == 0)
		return (void *)fake_layout_file_open;
	if (strcmp(name, "llapi_layout_is_composite") == 0)
		return (void *)fake_layout_is_composite;
	return NULL;
}

static const struct fs_sys fake_sys = {
    .statfs = NULL, /* detection is test_fsdetect's */
    .realpath = NULL,
    .read_mounts = NULL,
    .open = fake_open,
    .ioctl = fake_ioctl,
    .close = fake_close,
    .unlink = fake_unlink,
    .mkdir = fake_mkdir,
    .dlopen = fake_dlopen,
    .dlsym = fake_dlsym,
    .dlclose = fake_dlclose,
};

/* ---- a run on a fake Lustre ----------------------------------------------------------- */

static struct ds_file two_files[2] = {
    {.path = "/lustre/scratch/ds/raw_0_of_2.raw"},
    {.path = "/lustre/scratch/ds/raw_1_of_2.raw"},
};

static int setup_run(void **state)
{
	struct run *run = calloc(1, sizeof(*run));

	cfg_defaults(&run->cfg);
	snprintf(run->cfg.dataset.data_dir, sizeof(run->cfg.dataset.data_dir), "%s",
		 "/lustre/scratch/ds");
	run->cfg.storage.stripe_count = 4;
	run->cfg.storage.stripe_size = 1048576;
	run->cfg.storage.stripe_offset = -1;
	run->comm = MPI_COMM_WORLD;
	run->nranks = 1;
	snprintf(run->fs.type, sizeof(run->fs.type), "lustre");
	run->fs.magic = LUSTRE_SUPER_MAGIC;
	run->fs.can_stripe = true;
	run->fs.striper = FS_STRIPER_LUSTRE;
	run->fs_sys = &fake_sys;
	run->ds.files = two_files;
	run->ds.nfiles = 2;
	run->ds.nheld = 2;
	run->info_storage = json_object();
	run->warnings = json_array();
	fb_errbuf_init(&run->err);
	memset(&fake, 0, sizeof(fake));
	memset(fake_pfls, 0, sizeof(fake_pfls));
	memset(&fake_pfl_call, 0, sizeof(fake_pfl_call));
	fake_on_disk_composite = false;
	fake.got_magic = LOV_USER_MAGIC_V1;
	*state = run;
	return 0;
}

static int teardown_run(void **state)
{
	struct run *run = *state;

	json_decref(run->info_storage);
	json_decref(run->warnings);
	free(run);
	return 0;
}

static int count_calls(int kind)
{
	int n = 0;

	for (int i = 0; i < fake.ncalls; i++)
		n += fake.calls[i].kind == kind;
	return n;
}

static const struct fake_call *find_call(int kind, int nth)
{
	for (int i = 0; i < fake.ncalls; i++)
		if (fake.calls[i].kind == kind && nth-- == 0)
			return &fake.calls[i];
	return NULL;
}

static bool warned(struct run *run, const char *needle)
{
	size_t i;
	json_t *w;

	json_array_foreach(run->warnings, i,
			   w) if (strstr(json_string_value(w), needle)) return true;
	return false;
}

/* ---- tests ---------------------------------------------------------------------------- */

/* The wire format: what lustre_user.h declares, byte for byte. */
static void test_lustre_abi(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct lov_user_md_v1), 32);
	assert_int_equal(sizeof(struct lov_user_md_v3), 48);
	assert_int_equal(sizeof(struct lov_user_ost_data_v1), 24);
	assert_int_equal(offsetof(struct lov_user_md_v1, lmm_stripe_size), 24);
	assert_int_equal(offsetof(struct lov_user_md_v1, lmm_stripe_count), 28);
	assert_int_equal(offsetof(struct lov_user_md_v1, lmm_stripe_offset), 30);
	/* _IOW('f', 154, long) and _IOW('f', 155, long) on LP64 */
	assert_int_equal(LL_IOC_LOV_SETSTRIPE, 0x4008669a);
	assert_int_equal(LL_IOC_LOV_GETSTRIPE, 0x4008669b);
	assert_int_equal(O_LOV_DELAY_CREATE, O_NOCTTY | FASYNC);
}

static void test_per_rank_sets_directory_layout(void **state)
{
	struct run *run = *state;
	const struct fake_call *open, *ioctl;
	json_t *req;

	run->cfg.dataset.file_access = FILE_ACCESS_PER_RANK;
	assert_int_equal(stripe_prepare(run), 0);

	open = find_call(CALL_OPEN, 0);
	assert_non_null(open);
	assert_string_equal(open->path, "/lustre/scratch/ds");
	assert_true(open->flags & O_DIRECTORY);
	ioctl = find_call(CALL_IOCTL, 0);
	assert_non_null(ioctl);
	assert_int_equal(ioctl->request, LL_IOC_LOV_SETSTRIPE);
	assert_int_equal(ioctl->lum.lmm_magic, 0x0BD10BD0);
	assert_int_equal(ioctl->lum.lmm_pattern, LOV_PATTERN_RAID0);
	assert_int_equal(ioctl->lum.lmm_stripe_count, 4);
	assert_int_equal(ioctl->lum.lmm_stripe_size, 1048576);
	assert_int_equal(ioctl->lum.lmm_stripe_offset, 0xffff); /* any OST */
	assert_int_equal(count_calls(CALL_CLOSE), 1);
	/* files from an earlier generation are removed so they are re-created striped */
	assert_int_equal(count_calls(CALL_UNLINK), 2);
	assert_string_equal(find_call(CALL_UNLINK, 1)->path, "/lustre/scratch/ds/raw_1_of_2.raw");

	req = json_object_get(run->info_storage, "stripe_requested");
	assert_int_equal(json_integer_value(json_object_get(req, "count")), 4);
	assert_int_equal(json_integer_value(json_object_get(req, "size")), 1048576);
	assert_int_equal(json_integer_value(json_object_get(req, "offset")), -1);
	assert_int_equal(json_array_size(run->warnings), 0);
}

static void test_per_rank_only_rank0_touches_the_folder(void **state)
{
	struct run *run = *state;

	run->rank = 1;
	assert_int_equal(stripe_prepare(run), 0);
	assert_int_equal(fake.ncalls, 0);
	assert_non_null(json_object_get(run->info_storage, "stripe_requested"));
}

static void test_shared_file_ioctl_without_library(void **state)
{
	struct run *run = *state;
	const char *path = "/lustre/scratch/ds/raw_0_of_1.raw";
	const struct fake_call *open, *ioctl;

	run->cfg.dataset.file_access = FILE_ACCESS_SHARED;
	run->cfg.storage.stripe_count = -1; /* every OST */
	run->cfg.storage.stripe_offset = 3;
	assert_int_equal(stripe_prepare(run), 0);
	assert_int_equal(fake.ncalls, 0); /* shared files get their layout at creation */

	assert_int_equal(stripe_create_file(run, path), 0);
	assert_string_equal(find_call(CALL_UNLINK, 0)->path, path);
	open = find_call(CALL_OPEN, 0);
	assert_string_equal(open->path, path);
	assert_int_equal(open->flags & (O_CREAT | O_EXCL | O_WRONLY), O_CREAT | O_EXCL | O_WRONLY);
	assert_int_equal(open->flags & O_LOV_DELAY_CREATE, O_LOV_DELAY_CREATE);
	ioctl = find_call(CALL_IOCTL, 0);
	assert_int_equal(ioctl->request, LL_IOC_LOV_SETSTRIPE);
	assert_int_equal(ioctl->lum.lmm_magic, LOV_USER_MAGIC_V1);
	assert_int_equal(ioctl->lum.lmm_stripe_count, 0xffff);
	assert_int_equal(ioctl->lum.lmm_stripe_size, 1048576);
	assert_int_equal(ioctl->lum.lmm_stripe_offset, 3);
	assert_int_equal(count_calls(CALL_CLOSE), 1);
	assert_int_equal(count_calls(CALL_LLAPI_CREATE), 0);
}

/* npz is written by libzip under a temporary name and renamed: a layout given to the file at
 * creation would be lost, so even shared npz files take theirs from the folder. */
static void test_shared_renamed_format_uses_directory_layout(void **state)
{
	struct run *run = *state;
	const struct fake_call *ioctl;

	run->format = format_find("npz");
	assert_non_null(run->format);
	run->cfg.dataset.file_access = FILE_ACCESS_SHARED;
	assert_int_equal(stripe_prepare(run), 0);
	assert_true(find_call(CALL_OPEN, 0)->flags & O_DIRECTORY);
	ioctl = find_call(CALL_IOCTL, 0);
	assert_non_null(ioctl);
	assert_int_equal(ioctl->request, LL_IOC_LOV_SETSTRIPE);
	assert_int_equal(ioctl->lum.lmm_stripe_count, 4);
}

static void test_shared_file_llapi(void **state)
{
	struct run *run = *state;
	const char *path = "/lustre/scratch/ds/data.h5";
	const struct fake_call *c;

	fake.have_lib = true;
	run->cfg.dataset.file_access = FILE_ACCESS_SHARED;
	assert_int_equal(stripe_create_file(run, path), 0);
	c = find_call(CALL_LLAPI_CREATE, 0);
	assert_non_null(c);
	assert_string_equal(c->path, path);
	assert_int_equal(c->size, 1048576);
	assert_int_equal(c->count, 4);
	assert_int_equal(c->offset, -1);
	assert_int_equal(c->pattern, 0); /* RAID0 */
	assert_int_equal(count_calls(CALL_IOCTL), 0);
}

static void test_create_failure_names_file_and_layout(void **state)
{
	struct run *run = *state;

	fake.fail_ioctl = EINVAL;
	run->cfg.dataset.file_access = FILE_ACCESS_SHARED;
	assert_int_equal(stripe_create_file(run, "/lustre/scratch/ds/f"), -EINVAL);
	assert_int_equal(run->err.code, -EINVAL);
	assert_non_null(strstr(run->err.msg, "cannot create '/lustre/scratch/ds/f'"));
	assert_non_null(strstr(run->err.msg, "stripe_count 4"));
	assert_non_null(strstr(run->err.msg, "Invalid argument"));
}

static void test_readback_ioctl_mismatch_warns(void **state)
{
	struct run *run = *state;
	json_t *eff;

	fake.got_count = 2;
	fake.got_size = 1048576;
	fake.got_ost = 7;
	assert_int_equal(stripe_readback(run, "/lustre/scratch/ds/raw_0_of_2.raw"), 0);
	assert_int_equal(find_call(CALL_IOCTL, 0)->request, LL_IOC_LOV_GETSTRIPE);
	eff = json_object_get(run->info_storage, "stripe_effective");
	assert_true(json_is_object(eff));
	assert_int_equal(json_integer_value(json_object_get(eff, "count")), 2);
	assert_int_equal(json_integer_value(json_object_get(eff, "size")), 1048576);
	assert_int_equal(json_integer_value(json_object_get(eff, "offset")), 7);
	assert_string_equal(json_string_value(json_object_get(eff, "method")), "ioctl");
	/* the OSTs of the two stripes: obdidx 7 and 8 */
	assert_int_equal(json_integer_value(json_object_get(eff, "servers_spanned")), 2);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(eff, "servers"), 1)), 8);
	assert_true(warned(run, "stripe layout differs from the request"));
	assert_true(warned(run, "stripe_count 2"));
	/* a second file with the same layout adds no second warning */
	assert_int_equal(stripe_readback(run, "/lustre/scratch/ds/raw_1_of_2.raw"), 0);
	assert_int_equal(json_array_size(run->warnings), 1);
}

static void test_readback_llapi_match(void **state)
{
	struct run *run = *state;
	json_t *eff;

	fake.have_lib = true;
	fake.got_count = 4;
	fake.got_size = 1048576;
	fake.got_ost = 12;
	assert_int_equal(stripe_readback(run, "/lustre/scratch/ds/raw_0_of_2.raw"), 0);
	assert_int_equal(count_calls(CALL_IOCTL), 0);
	eff = json_object_get(run->info_storage, "stripe_effective");
	assert_int_equal(json_integer_value(json_object_get(eff, "count")), 4);
	assert_int_equal(json_integer_value(json_object_get(eff, "offset")), 12);
	assert_string_equal(json_string_value(json_object_get(eff, "method")), "llapi");
	assert_int_equal(json_integer_value(json_object_get(eff, "servers_spanned")), 4);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(eff, "servers"), 3)),
			 15);
	assert_int_equal(json_array_size(run->warnings), 0);
}

static void test_not_lustre_warns_once_and_calls_nothing(void **state)
{
	struct run *run = *state;

	snprintf(run->fs.type, sizeof(run->fs.type), "ext4");
	run->fs.magic = 0xEF53;
	run->fs.can_stripe = false;
	run->fs.striper = FS_STRIPER_NONE;
	assert_int_equal(stripe_prepare(run), 0);
	assert_int_equal(stripe_create_file(run, "/data/f"), 0);
	assert_int_equal(stripe_readback(run, "/data/f"), 0);
	assert_int_equal(fake.ncalls, 0);
	assert_int_equal(json_array_size(run->warnings), 1);
	assert_true(warned(run, "striping is not supported on ext4"));
	assert_string_equal(
	    json_string_value(json_object_get(run->info_storage, "stripe_effective")),
	    "unsupported (ext4)");
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(run->info_storage, "stripe_requested"), "count")),
			 4);
}

static void test_not_requested_is_silent(void **state)
{
	struct run *run = *state;

	run->cfg.storage.stripe_count = 0;
	run->cfg.storage.stripe_size = 0;
	run->cfg.storage.stripe_offset = -1;
	run->fs.can_stripe = false;
	run->fs.striper = FS_STRIPER_NONE;
	snprintf(run->fs.type, sizeof(run->fs.type), "ext4");
	assert_int_equal(stripe_prepare(run), 0);
	assert_int_equal(stripe_create_file(run, "/data/f"), 0);
	assert_int_equal(stripe_readback(run, "/data/f"), 0);
	assert_int_equal(json_array_size(run->warnings), 0);
	/* Recorded all the same (summary.json's contract), without a warning. */
	assert_string_equal(
	    json_string_value(json_object_get(run->info_storage, "stripe_effective")),
	    "unsupported (ext4)");
	assert_int_equal(fake.ncalls, 0);
}

static const char *info_value(MPI_Info info, const char *key, char *buf)
{
	int flag = 0;

	MPI_Info_get(info, key, MPI_MAX_INFO_VAL, buf, &flag);
	return flag ? buf : NULL;
}

static void test_hints_both_spellings(void **state)
{
	struct run *run = *state;
	char v[MPI_MAX_INFO_VAL + 1];
	MPI_Info info;

	MPI_Info_create(&info);
	MPI_Info_set(info, "striping_unit", "4194304"); /* the user's [storage.mpiio] wins */
	run->cfg.storage.stripe_offset = 2;
	stripe_hints(run, &info);
	assert_string_equal(info_value(info, "striping_factor", v), "4");
	assert_string_equal(info_value(info, "striping_unit", v), "4194304");
	assert_string_equal(info_value(info, "stripe_width", v), "4");
	assert_string_equal(info_value(info, "stripe_size", v), "1048576");
	assert_string_equal(info_value(info, "romio_lustre_start_iodevice", v), "2");
	MPI_Info_free(&info);

	/* nothing requested: no hints */
	run->cfg.storage.stripe_count = 0;
	run->cfg.storage.stripe_size = 0;
	run->cfg.storage.stripe_offset = -1;
	MPI_Info_create(&info);
	stripe_hints(run, &info);
	assert_null(info_value(info, "striping_factor", v));
	assert_null(info_value(info, "stripe_width", v));
	MPI_Info_free(&info);
}

/* ---- composite layouts ------------------------------------------------------------------ */

#define GiB (1ull << 30)
#define MiB (1ull << 20)

static void test_stripe_layout_parse(void **state)
{
	static const struct {
		const char *text;
		int n;
		const char *why;
	} cases[] = {
	    {"2GiB:1, 4GiB:4, eof:16", 3, NULL},
	    {"eof:4", 1, NULL},
	    {"  ", 0, NULL},
	    {"1GiB:2:4MiB,EOF:8", 2, NULL},
	    {"2GiB:1, 1GiB:4, eof:16", -1,
	     "component 2: end 1073741824 is not after the previous "
	     "end 2147483648"},
	    {"2GiB:1, 4GiB:4", -1, "the last component must end at eof"},
	    {"2GiB:1, eof:4, 8GiB:16", -1, "component 3 follows one that ends at eof"},
	    {"2GiB:0, eof:4", -1, "component 1: stripe count \"0\" must be a whole number"},
	    {"2GiB:x, eof:4", -1, "component 1: stripe count \"x\""},
	    {"2GiB, eof:4", -1, "component 1 (\"2GiB\"): expected END:COUNT[:SIZE]"},
	    {"100000:1, eof:4", -1, "component 1: end 100000 is not a multiple of 64 KiB"},
	    {"2GiB:1:100k, eof:4", -1,
	     "component 1: stripe size 102400 is not a multiple of 64 KiB"},
	    {"2x:1, eof:4", -1, "component 1: end \"2x\""},
	};
	struct stripe_comp c[STRIPE_MAX_COMPS];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[256] = "";
		int n = stripe_layout_parse(cases[i].text, c, STRIPE_MAX_COMPS, why, sizeof(why));

		assert_int_equal(n, cases[i].n);
		if (cases[i].why) {
			if (!strstr(why, cases[i].why))
				fail_msg("'%s': got \"%s\"", cases[i].text, why);
		}
	}
	assert_int_equal(stripe_layout_parse("2GiB:1, 4GiB:4, eof:16", c, 16, NULL, 0), 3);
	assert_int_equal(c[0].start, 0);
	assert_int_equal(c[0].end, 2 * GiB);
	assert_int_equal(c[0].count, 1);
	assert_int_equal(c[1].start, 2 * GiB);
	assert_int_equal(c[1].end, 4 * GiB);
	assert_int_equal(c[1].count, 4);
	assert_int_equal(c[2].start, 4 * GiB);
	assert_true(c[2].end == UINT64_MAX);
	assert_int_equal(c[2].count, 16);
	assert_int_equal(stripe_layout_parse("1GiB:2:4MiB,EOF:8", c, 16, NULL, 0), 2);
	assert_int_equal(c[0].size, 4 * MiB);
	assert_int_equal(c[1].size, 0);
}

static void assert_comp(const struct fake_pfl *l, int i, uint64_t start, uint64_t end,
			uint64_t count, uint64_t size)
{
	assert_int_equal(l->comp[i].start, start);
	assert_true(l->comp[i].end == end);
	assert_int_equal(l->comp[i].count, count);
	assert_int_equal(l->comp[i].size, size);
}

static void use_composite(struct run *run)
{
	run->cfg.storage.stripe_count = 0;
	run->cfg.storage.stripe_size = 1048576;
	snprintf(run->cfg.storage.stripe_layout, sizeof(run->cfg.storage.stripe_layout),
		 "2GiB:1, 4GiB:4, eof:16");
	fake.have_lib = true;
	fake.have_pfl = true;
}

/* Shared file: llapi_layout_file_create with exactly `lfs setstripe -E 2G -c 1 -E 4G -c 4
 * -E -1 -c 16 -S 1M`. */
static void test_composite_shared_file(void **state)
{
	struct run *run = *state;
	const char *path = "/lustre/scratch/ds/data.raw";
	json_t *comps;

	use_composite(run);
	run->cfg.dataset.file_access = FILE_ACCESS_SHARED;
	assert_int_equal(stripe_prepare(run), 0);
	assert_int_equal(fake_pfl_call.kind, 0); /* nothing on the folder */
	comps =
	    json_object_get(json_object_get(run->info_storage, "stripe_requested"), "components");
	assert_int_equal(json_array_size(comps), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(comps, 2), "end")),
			    "eof");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(comps, 1), "count")), 4);

	assert_int_equal(stripe_create_file(run, path), 0);
	assert_int_equal(fake_pfl_call.kind, 1);
	assert_string_equal(fake_pfl_call.path, path);
	assert_int_equal(fake_pfl_call.flags, O_WRONLY);
	assert_int_equal(fake_pfl_call.layout.n, 3);
	assert_comp(&fake_pfl_call.layout, 0, 0, 2 * GiB, 1, MiB);
	assert_comp(&fake_pfl_call.layout, 1, 2 * GiB, 4 * GiB, 4, MiB);
	assert_comp(&fake_pfl_call.layout, 2, 4 * GiB, LUSTRE_EOF, 16, MiB);
	assert_string_equal(find_call(CALL_UNLINK, 0)->path, path);
	assert_int_equal(count_calls(CALL_IOCTL), 0);
	assert_int_equal(count_calls(CALL_LLAPI_CREATE), 0);
}

/* Per-rank files: the folder gets the composite layout (llapi_layout_file_open). */
static void test_composite_per_rank_folder(void **state)
{
	struct run *run = *state;

	use_composite(run);
	run->cfg.storage.stripe_size = 0;
	snprintf(run->cfg.storage.stripe_layout, sizeof(run->cfg.storage.stripe_layout),
		 "64MiB:1:4MiB, eof:8");
	assert_int_equal(stripe_prepare(run), 0);
	assert_int_equal(fake_pfl_call.kind, 2);
	assert_string_equal(fake_pfl_call.path, "/lustre/scratch/ds");
	assert_int_equal(fake_pfl_call.flags, O_RDONLY);
	assert_int_equal(fake_pfl_call.layout.n, 2);
	assert_comp(&fake_pfl_call.layout, 0, 0, 64 * MiB, 1, 4 * MiB);
	assert_comp(&fake_pfl_call.layout, 1, 64 * MiB, LUSTRE_EOF, 8, 0);
	assert_int_equal(count_calls(CALL_UNLINK), 2); /* stale files re-created */
	/* per-rank files take the folder's layout: no per-file creation */
	assert_int_equal(stripe_create_file(run, two_files[0].path), 0);
	assert_int_equal(fake_pfl_call.kind, 2);
}

static void test_composite_needs_liblustreapi(void **state)
{
	struct run *run = *state;

	use_composite(run);
	fake.have_lib = false;
	assert_int_equal(stripe_prepare(run), -FB_ECONFIG);
	assert_non_null(strstr(run->err.msg, "composite layouts are set through liblustreapi"));
	fb_errbuf_init(&run->err);
	fake.have_lib = true;
	fake.have_pfl = false; /* an old library */
	assert_int_equal(stripe_prepare(run), -FB_ECONFIG);
	assert_non_null(strstr(run->err.msg, "liblustreapi.so.1 has no llapi_layout_alloc"));
	assert_int_equal(count_calls(CALL_IOCTL), 0);
}

static void test_composite_refused_without_lustre(void **state)
{
	static const char *const types[] = {"cephfs", "ext4"};
	struct run *run = *state;

	use_composite(run);
	for (int i = 0; i < 2; i++) {
		fb_errbuf_init(&run->err);
		snprintf(run->fs.type, sizeof(run->fs.type), "%s", types[i]);
		run->fs.striper = i == 0 ? FS_STRIPER_CEPH : FS_STRIPER_NONE;
		run->fs.can_stripe = i == 0;
		assert_int_equal(stripe_prepare(run), -FB_ECONFIG);
		assert_int_equal(fb_exit_status(run->err.code), 2);
		assert_non_null(strstr(run->err.msg,
				       "composite (progressive) layouts exist only on "
				       "Lustre"));
		assert_non_null(strstr(run->err.msg, types[i]));
		/* an existing dataset (no generation) is refused at read-back */
		fb_errbuf_init(&run->err);
		assert_int_equal(stripe_readback(run, two_files[0].path), -FB_ECONFIG);
	}
	assert_int_equal(fake.ncalls, 0);
}

static void test_composite_readback_components(void **state)
{
	struct run *run = *state;
	json_t *eff, *comps, *c;
	struct fake_pfl *disk = &fake_pfls[0];

	use_composite(run);
	fake_on_disk_composite = true;
	disk->n = 3;
	disk->comp[0].end = 2 * GiB, disk->comp[0].count = 1, disk->comp[0].size = MiB;
	disk->comp[1].start = 2 * GiB, disk->comp[1].end = 4 * GiB, disk->comp[1].count = 4;
	disk->comp[1].size = MiB;
	disk->comp[2].start = 4 * GiB, disk->comp[2].end = LUSTRE_EOF, disk->comp[2].count = 16;
	disk->comp[2].size = MiB;
	assert_int_equal(stripe_readback(run, two_files[0].path), 0);
	eff = json_object_get(run->info_storage, "stripe_effective");
	assert_true(json_is_true(json_object_get(eff, "composite")));
	comps = json_object_get(eff, "components");
	assert_int_equal(json_array_size(comps), 3);
	c = json_array_get(comps, 1);
	assert_int_equal(json_integer_value(json_object_get(c, "start")), 2 * GiB);
	assert_int_equal(json_integer_value(json_object_get(c, "end")), 4 * GiB);
	assert_int_equal(json_integer_value(json_object_get(c, "count")), 4);
	assert_int_equal(json_integer_value(json_object_get(c, "size")), MiB);
	assert_int_equal(json_array_size(json_object_get(c, "servers")), 4);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(c, "servers"), 3)), 13);
	assert_string_equal(json_string_value(json_object_get(json_array_get(comps, 2), "end")),
			    "eof");
	assert_int_equal(json_integer_value(json_object_get(eff, "count")), 1);
	assert_int_equal(json_array_size(run->warnings), 0);

	/* the file system kept only two components: one warning */
	disk->n = 2;
	disk->comp[1].end = LUSTRE_EOF;
	assert_int_equal(stripe_readback(run, two_files[0].path), 0);
	assert_true(warned(run, "composite layout differs from the request"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lustre_abi),
	    cmocka_unit_test_setup_teardown(test_per_rank_sets_directory_layout, setup_run,
					    teardown_run),
	    cmocka_unit_test_setup_teardown(test_per_rank_only_rank0_touches_the_folder, setup_run,
					    teardown_run),
	    cmocka_unit_test_setup_teardown(test_shared_file_ioctl_without_library, setup_run,
					    teardown_run),
	    cmocka_unit_test_setup_teardown(test_shared_file_llapi, setup_run, teardown_run),
	    cmocka_unit_test_setup_teardown(test_shared_renamed_format_uses_directory_layout,
					    setup_run, teardown_run),
	    cmocka_unit_test_setup_teardown(test_create_failure_names_file_and_layout, setup_run,
					    teardown_run),
	    cmocka_unit_test_setup_teardown(test_readback_ioctl_mismatch_warns, setup_run,
					    teardown_run),
	    cmocka_unit_test_setup_teardown(test_readback_llapi_match, setup_run, teardown_run),
	    cmocka_unit_test_setup_teardown(test_not_lustre_warns_once_and_calls_nothing, setup_run,
					    teardown_run),
	    cmocka_unit_test_setup_teardown(test_not_requested_is_silent, setup_run, teardown_run),
	    cmocka_unit_test_setup_teardown(test_hints_both_spellings, setup_run, teardown_run),
	    cmocka_unit_test(test_stripe_layout_parse),
	    cmocka_unit_test_setup_teardown(test_composite_shared_file, setup_run, teardown_run),
	    cmocka_unit_test_setup_teardown(test_composite_per_rank_folder, setup_run,
					    teardown_run),
	    cmocka_unit_test_setup_teardown(test_composite_needs_liblustreapi, setup_run,
					    teardown_run),
	    cmocka_unit_test_setup_teardown(test_composite_refused_without_lustre, setup_run,
					    teardown_run),
	    cmocka_unit_test_setup_teardown(test_composite_readback_components, setup_run,
					    teardown_run),
	};
	int rc;

	MPI_Init(&argc, &argv);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	MPI_Finalize();
	return rc;
}
