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

static void *fake_layout_get_by_path(const char *path, uint32_t flags)
{
	(void)path;
	(void)flags;
	return &fake_layout_object;
}

static int fake_layout_count_get(const void *layout, uint64_t *v)
{
	assert_ptr_equal(layout, &fake_layout_object);
	*v = fake.got_count == LOV_ALL_STRIPES ? LLAPI_LAYOUT_WIDE : fake.got_count;
	return 0;
}

static int fake_layout_size_get(const void *layout, uint64_t *v)
{
	(void)layout;
	*v = fake.got_size;
	return 0;
}

static int fake_layout_ost_index_get(const void *layout, int stripe, uint64_t *v)
{
	(void)layout;
	*v = fake.got_ost + (uint64_t)stripe;
	return 0;
}

static void fake_layout_free(void *layout)
{
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
	run->fs_sys = &fake_sys;
	run->ds.files = two_files;
	run->ds.nfiles = 2;
	run->info_storage = json_object();
	run->warnings = json_array();
	fb_errbuf_init(&run->err);
	memset(&fake, 0, sizeof(fake));
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
	assert_int_equal(json_array_size(run->warnings), 0);
}

static void test_not_lustre_warns_once_and_calls_nothing(void **state)
{
	struct run *run = *state;

	snprintf(run->fs.type, sizeof(run->fs.type), "ext4");
	run->fs.magic = 0xEF53;
	run->fs.can_stripe = false;
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
	};
	int rc;

	MPI_Init(&argc, &argv);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	MPI_Finalize();
	return rc;
}
