/* CephFS layouts through a fake struct fs_sys: the exact xattrs feedbench sets, the probe
 * that turns a refused layout into a configuration error before any data is written, the
 * read-back of every file, the objects of each file and the OSDs `ceph osd map` names for
 * them, "unknown" servers when the CLI cannot answer, and the MPI-IO hints it leaves out.
 * Detection of CephFS (kernel magic, ceph-fuse mount table, ceph.* xattrs) is here too.
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

#define FAKE_MAX 64

/* A fake CephFS: files with a layout xattr, an inode and a size; a log of what was set. */
struct fake_file {
	char path[PATH_MAX];
	char layout[256];
	uint64_t ino, size;
	bool exists, dir;
};

static struct {
	struct fake_file files[FAKE_MAX];
	int nfiles;
	uint64_t next_ino;
	char dflt[256];	      /* layout of a new file without a folder layout */
	char dir_layout[256]; /* ceph.dir.layout of the data folder ("" none) */
	/* setxattr log */
	char set_path[8][PATH_MAX], set_name[8][64], set_value[8][256];
	int nset;
	int nunlink, ncreate;
	char created[FAKE_MAX][PATH_MAX];
	/* the ceph CLI */
	int cli_rc; /* what run_cmd returns */
	const char *cli_err;
	int nosds;
	char *cli_input; /* last stdin given */
	char cli_argv[256];
	int ncli;
	unsigned dev; /* st_dev of every file */
} fake;

static struct fake_file *fake_find(const char *path)
{
	for (int i = 0; i < fake.nfiles; i++)
		if (strcmp(fake.files[i].path, path) == 0)
			return &fake.files[i];
	return NULL;
}

static struct fake_file *fake_add(const char *path, uint64_t size)
{
	struct fake_file *f = fake_find(path);

	if (!f) {
		assert_true(fake.nfiles < FAKE_MAX);
		f = &fake.files[fake.nfiles++];
		snprintf(f->path, sizeof(f->path), "%s", path);
	}
	f->exists = true;
	f->size = size;
	f->ino = fake.next_ino++;
	snprintf(f->layout, sizeof(f->layout), "%s",
		 fake.dir_layout[0] ? fake.dir_layout : fake.dflt);
	return f;
}

static int fake_open(const char *path, int flags, mode_t mode)
{
	struct fake_file *f = fake_find(path);

	(void)mode;
	assert_true(flags & O_CREAT);
	if (f && f->exists && (flags & O_EXCL)) {
		errno = EEXIST;
		return -1;
	}
	fake_add(path, 0);
	snprintf(fake.created[fake.ncreate++ % FAKE_MAX], PATH_MAX, "%s", path);
	return 7;
}

static int fake_close(int fd)
{
	assert_int_equal(fd, 7);
	return 0;
}

static int fake_unlink(const char *path)
{
	struct fake_file *f = fake_find(path);

	fake.nunlink++;
	if (!f || !f->exists) {
		errno = ENOENT;
		return -1;
	}
	f->exists = false;
	return 0;
}

static int fake_mkdir(const char *path, mode_t mode)
{
	(void)path;
	(void)mode;
	errno = EEXIST;
	return -1;
}

static int fake_stat(const char *path, struct stat *st)
{
	struct fake_file *f = fake_find(path);

	if (!f || !f->exists) {
		errno = ENOENT;
		return -1;
	}
	memset(st, 0, sizeof(*st));
	st->st_ino = (ino_t)f->ino;
	st->st_dev = (dev_t)fake.dev;
	st->st_size = (off_t)f->size;
	return 0;
}

static ssize_t fake_getxattr(const char *path, const char *name, void *value, size_t size)
{
	struct fake_file *f = fake_find(path);
	size_t n;

	if (strcmp(name, "ceph.file.layout") != 0 || !f || !f->exists) {
		errno = ENODATA;
		return -1;
	}
	n = strlen(f->layout);
	assert_true(n <= size);
	memcpy(value, f->layout, n);
	return (ssize_t)n;
}

/* Parses "k=v k=v" into the fields a real MDS would check. */
static uint64_t layout_field(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoull(p + strlen(key) + 1, NULL, 10) : 0;
}

/* CephFS's rule (file_layout_t::is_valid): stripe_unit and object_size in multiples of 64 KiB,
 * object_size a multiple of stripe_unit, stripe_count >= 1; only on an empty file. */
static int fake_setxattr(const char *path, const char *name, const void *value, size_t size,
			 int flags)
{
	char v[256], merged[256];
	struct fake_file *f = fake_find(path);
	uint64_t su, sc, os;
	char pool[64] = "cephfs_data";

	(void)flags;
	snprintf(v, sizeof(v), "%.*s", (int)size, (const char *)value);
	snprintf(fake.set_path[fake.nset % 8], PATH_MAX, "%s", path);
	snprintf(fake.set_name[fake.nset % 8], 64, "%s", name);
	snprintf(fake.set_value[fake.nset % 8], 256, "%s", v);
	fake.nset++;
	if (strcmp(name, "ceph.dir.layout") == 0) {
		snprintf(fake.dir_layout, sizeof(fake.dir_layout), "%s", fake.dflt);
		f = NULL;
	} else if (strcmp(name, "ceph.file.layout") != 0 || !f) {
		errno = EOPNOTSUPP;
		return -1;
	} else if (f->size) {
		errno = ENOTEMPTY;
		return -1;
	}
	{
		const char *base = f ? f->layout : fake.dir_layout;

		su = strstr(v, "stripe_unit=") ? layout_field(v, "stripe_unit")
					       : layout_field(base, "stripe_unit");
		sc = strstr(v, "stripe_count=") ? layout_field(v, "stripe_count")
						: layout_field(base, "stripe_count");
		os = strstr(v, "object_size=") ? layout_field(v, "object_size")
					       : layout_field(base, "object_size");
	}
	if (!su || su % 65536 || !os || os % 65536 || os % su || !sc) {
		errno = EINVAL;
		return -1;
	}
	snprintf(merged, sizeof(merged),
		 "stripe_unit=%llu stripe_count=%llu object_size=%llu pool=%s",
		 (unsigned long long)su, (unsigned long long)sc, (unsigned long long)os, pool);
	snprintf(f ? f->layout : fake.dir_layout, 256, "%s", merged);
	return 0;
}

/* `ceph osd map POOL OBJ` answers: object k of inode i is on OSD (i + k) % nosds. */
static int fake_run_cmd(char *const argv[], const char *input, double timeout_s, char **out,
			char **err)
{
	size_t cap = 1 << 20, n = 0;
	const char *line = input;

	(void)timeout_s;
	fake.ncli++;
	fake.cli_argv[0] = '\0';
	for (int i = 0; argv[i]; i++)
		snprintf(fake.cli_argv + strlen(fake.cli_argv),
			 sizeof(fake.cli_argv) - strlen(fake.cli_argv), "%s%s", i ? " " : "",
			 argv[i]);
	free(fake.cli_input);
	fake.cli_input = strdup(input ? input : "");
	*out = NULL;
	*err = fake.cli_err ? strdup(fake.cli_err) : NULL;
	if (fake.cli_rc)
		return fake.cli_rc;
	*out = malloc(cap);
	if (strstr(fake.cli_argv, " osd ls")) { /* one command in the arguments */
		n += (size_t)snprintf(*out + n, cap - n, "[");
		for (int i = 0; i < fake.nosds; i++)
			n += (size_t)snprintf(*out + n, cap - n, "%s%d", i ? "," : "", i);
		snprintf(*out + n, cap - n, "]\n");
		return 0;
	}
	while (line && *line) {
		char pool[64], obj[64];
		unsigned long long ino, k;

		if (strncmp(line, "osd ls\n", 7) == 0) {
			n += (size_t)snprintf(*out + n, cap - n, "[");
			for (int i = 0; i < fake.nosds; i++)
				n += (size_t)snprintf(*out + n, cap - n, "%s%d", i ? "," : "", i);
			n += (size_t)snprintf(*out + n, cap - n, "]\n\n");
			line += 7;
			continue;
		}

		assert_int_equal(sscanf(line, "osd map %63s %63s", pool, obj), 2);
		assert_int_equal(sscanf(obj, "%llx.%llx", &ino, &k), 2);
		n += (size_t)snprintf(
		    *out + n, cap - n,
		    "\n{\"epoch\":23,\"pool\":\"%s\",\"pool_id\":2,\"objname\":\"%s\","
		    "\"raw_pgid\":\"2.8c5e5e3f\",\"pgid\":\"2.3f\",\"up\":[%d],\"up_primary\":%d,"
		    "\"acting\":[%d],\"acting_primary\":%d}\n",
		    pool, obj, (int)((ino + k) % (unsigned)fake.nosds),
		    (int)((ino + k) % (unsigned)fake.nosds),
		    (int)((ino + k) % (unsigned)fake.nosds),
		    (int)((ino + k) % (unsigned)fake.nosds));
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	return 0;
}

/* The ceph-fuse process serving the mount: started with -c and --id (device 0x2a). */
static int fake_ceph_fuse_args(dev_t dev, char *conf, size_t conflen, char *name, size_t namelen)
{
	if (dev != 0x2a)
		return -ENOENT;
	snprintf(conf, conflen, "/lab/ceph.conf");
	snprintf(name, namelen, "client.h1");
	return 0;
}

static const struct fs_sys fake_sys = {
    .open = fake_open,
    .close = fake_close,
    .unlink = fake_unlink,
    .mkdir = fake_mkdir,
    .stat = fake_stat,
    .getxattr = fake_getxattr,
    .setxattr = fake_setxattr,
    .run_cmd = fake_run_cmd,
    .ceph_fuse_args = fake_ceph_fuse_args,
};

static struct ds_file files2[2] = {
    {.path = "/mnt/cephfs/ds/raw_0_of_2.raw"},
    {.path = "/mnt/cephfs/ds/raw_1_of_2.raw"},
};

static int setup_run(void **state)
{
	struct run *run = calloc(1, sizeof(*run));

	cfg_defaults(&run->cfg);
	snprintf(run->cfg.dataset.data_dir, sizeof(run->cfg.dataset.data_dir), "/mnt/cephfs/ds");
	run->cfg.storage.stripe_count = 4;
	run->cfg.storage.stripe_size = 1048576;
	run->cfg.storage.object_size = 4194304;
	run->cfg.storage.stripe_offset = -1;
	run->comm = MPI_COMM_WORLD;
	run->nranks = 1;
	run->format = format_find("raw");
	snprintf(run->fs.type, sizeof(run->fs.type), "cephfs");
	snprintf(run->fs.client, sizeof(run->fs.client), "ceph-fuse");
	snprintf(run->fs.detected, sizeof(run->fs.detected), "mount table");
	run->fs.magic = FUSE_SUPER_MAGIC;
	run->fs.can_stripe = true;
	run->fs.striper = FS_STRIPER_CEPH;
	run->fs_sys = &fake_sys;
	run->ds.files = files2;
	run->ds.nfiles = 2;
	run->ds.nheld = 2;
	run->info_storage = json_object();
	run->warnings = json_array();
	fb_errbuf_init(&run->err);
	free(fake.cli_input);
	memset(&fake, 0, sizeof(fake));
	fake.next_ino = 0x10000000000ull;
	fake.nosds = 4;
	snprintf(fake.dflt, sizeof(fake.dflt),
		 "stripe_unit=4194304 stripe_count=1 object_size=4194304 pool=cephfs_data");
	*state = run;
	return 0;
}

static int teardown_run(void **state)
{
	struct run *run = *state;

	json_decref(run->info_storage);
	json_decref(run->warnings);
	free(run);
	free(fake.cli_input);
	fake.cli_input = NULL;
	return 0;
}

static bool warned(struct run *run, const char *needle)
{
	size_t i;
	json_t *w;

	json_array_foreach(run->warnings, i, w)
	{
		if (strstr(json_string_value(w), needle))
			return true;
	}
	return false;
}

static json_t *eff_of(struct run *run)
{
	return json_object_get(run->info_storage, "stripe_effective");
}

static json_int_t ival(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

/* ---- tests ----------------------------------------------------------------------------- */

static void test_object_count(void **state)
{
	(void)state;
	/* 4 MiB, su 1 MiB, sc 4, os 4 MiB: one block per object, 4 objects */
	assert_int_equal(ceph_object_count(4 << 20, 1 << 20, 4, 4 << 20), 4);
	/* the same file at stripe_count 1: one object */
	assert_int_equal(ceph_object_count(4 << 20, 1 << 20, 1, 4 << 20), 1);
	/* 1 byte: one object; empty file: none */
	assert_int_equal(ceph_object_count(1, 1 << 20, 4, 4 << 20), 1);
	assert_int_equal(ceph_object_count(0, 1 << 20, 4, 4 << 20), 0);
	/* 2 MiB over sc 4: two blocks, two objects of the first set */
	assert_int_equal(ceph_object_count(2 << 20, 1 << 20, 4, 4 << 20), 2);
	/* 17 MiB over sc 4, os 4 MiB: one full set (16 MiB, 4 objects) + one block */
	assert_int_equal(ceph_object_count(17 << 20, 1 << 20, 4, 4 << 20), 5);
	/* 1 GiB at the default layout: 256 objects */
	assert_int_equal(ceph_object_count(1ull << 30, 4 << 20, 1, 4 << 20), 256);
}

static void test_layout_value(void **state)
{
	struct stripe_layout l = {
	    .count = 4, .size = 1048576, .offset = -1, .object_size = 4194304};
	char v[160];

	(void)state;
	ceph_layout_value(&l, v, sizeof(v));
	assert_string_equal(v, "stripe_unit=1048576 stripe_count=4 object_size=4194304");
	l.size = 0;
	l.object_size = 0;
	ceph_layout_value(&l, v, sizeof(v));
	assert_string_equal(v, "stripe_count=4");
}

/* Per-rank raw files: the probe, then each file created empty and given its layout. */
static void test_prepare_probe_then_file_layouts(void **state)
{
	struct run *run = *state;
	json_t *req;

	assert_int_equal(stripe_prepare(run), 0);
	/* the probe: one setxattr on a temporary file in the data folder, removed again */
	assert_int_equal(fake.nset, 1);
	assert_non_null(strstr(fake.set_path[0], "/mnt/cephfs/ds/.feedbench-layout-probe."));
	assert_string_equal(fake.set_name[0], "ceph.file.layout");
	assert_string_equal(fake.set_value[0],
			    "stripe_unit=1048576 stripe_count=4 object_size=4194304");
	assert_false(fake_find(fake.set_path[0])->exists);
	assert_string_equal(fake.dir_layout, ""); /* the folder is left alone */
	req = json_object_get(run->info_storage, "stripe_requested");
	assert_int_equal(ival(req, "object_size"), 4194304);
	assert_string_equal(json_string_value(json_object_get(run->info_storage, "fs_client")),
			    "ceph-fuse");

	assert_int_equal(stripe_create_file(run, files2[0].path), 0);
	assert_int_equal(fake.nset, 2);
	assert_string_equal(fake.set_path[1], files2[0].path);
	assert_string_equal(fake.set_name[1], "ceph.file.layout");
	assert_string_equal(fake.set_value[1],
			    "stripe_unit=1048576 stripe_count=4 object_size=4194304");
	assert_string_equal(fake_find(files2[0].path)->layout,
			    "stripe_unit=1048576 stripe_count=4 object_size=4194304 "
			    "pool=cephfs_data");
	assert_int_equal(json_array_size(run->warnings), 0);
}

/* A file left from an earlier generation has data: it is removed and created anew, since
 * CephFS refuses a layout on a non-empty file (ENOTEMPTY). */
static void test_create_replaces_old_file(void **state)
{
	struct run *run = *state;
	uint64_t old_ino = fake_add(files2[1].path, 12345)->ino;

	assert_int_equal(stripe_create_file(run, files2[1].path), 0);
	assert_int_not_equal(fake_find(files2[1].path)->ino, old_ino);
	assert_int_equal(fake_find(files2[1].path)->size, 0);
	assert_non_null(strstr(fake_find(files2[1].path)->layout, "stripe_count=4"));
}

/* hdf5 creates its file itself: the folder's default layout is set instead. */
static void test_library_created_format_uses_dir_layout(void **state)
{
	struct run *run = *state;

	run->format = format_find("hdf5");
	assert_non_null(run->format);
	run->cfg.dataset.file_access = FILE_ACCESS_SHARED;
	assert_int_equal(stripe_prepare(run), 0);
	assert_int_equal(fake.nset, 2); /* probe, then the folder */
	assert_string_equal(fake.set_path[1], "/mnt/cephfs/ds");
	assert_string_equal(fake.set_name[1], "ceph.dir.layout");
	assert_string_equal(fake.set_value[1],
			    "stripe_unit=1048576 stripe_count=4 object_size=4194304");
	/* no per-file layout */
	assert_int_equal(stripe_create_file(run, "/mnt/cephfs/ds/data.h5"), 0);
	assert_int_equal(fake.nset, 2);
	/* the file HDF5 creates inherits it */
	fake_add("/mnt/cephfs/ds/data.h5", 0);
	assert_non_null(strstr(fake_find("/mnt/cephfs/ds/data.h5")->layout, "stripe_count=4"));
}

static void test_refused_layout_is_config_error(void **state)
{
	static const struct {
		uint64_t su, os;
		const char *value;
	} cases[] = {
	    /* object_size not a multiple of stripe_unit */
	    {1048576, 1572864 * 2 + 524288,
	     "stripe_unit=1048576 stripe_count=4 object_size=3670016"},
	    /* stripe_unit larger than the default object_size (4 MiB) */
	    {8388608, 0, "stripe_unit=8388608 stripe_count=4"},
	};
	struct run *run = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fb_errbuf_init(&run->err);
		fake.nset = 0;
		fake.ncreate = 0;
		run->cfg.storage.stripe_size = cases[i].su;
		run->cfg.storage.object_size = cases[i].os;
		assert_int_equal(stripe_prepare(run), -FB_ECONFIG);
		assert_int_equal(fb_exit_status(run->err.code), 2);
		assert_non_null(strstr(run->err.msg, "cephfs refuses the layout"));
		assert_non_null(strstr(run->err.msg, cases[i].value));
		assert_non_null(strstr(run->err.msg, "Invalid argument"));
		assert_non_null(strstr(run->err.msg, "object_size a multiple of stripe_unit"));
		assert_non_null(strstr(run->err.msg, "default is stripe_unit 4194304"));
		/* nothing but the probe was created, and it is gone */
		assert_int_equal(fake.ncreate, 1);
		assert_false(fake_find(fake.created[0])->exists);
	}
}

/* CephFS accepts a stripe_count above the OSD count, but the stripes would share OSDs. */
static void test_more_stripes_than_osds_is_config_error(void **state)
{
	struct run *run = *state;

	fake.nosds = 3;
	assert_int_equal(stripe_prepare(run), -FB_ECONFIG);
	assert_string_equal(fake.cli_argv, "ceph --connect-timeout 30 --format json osd ls");
	assert_non_null(strstr(run->err.msg, "stripe_count = 4 is more than the 3 OSDs of the "
					     "cluster (ceph osd ls)"));
	assert_int_equal(fake.ncreate, 0); /* refused before the probe */
	/* without the CLI the probe decides alone */
	fb_errbuf_init(&run->err);
	fake.cli_rc = 127;
	assert_int_equal(stripe_prepare(run), 0);
	assert_int_equal(fake.ncreate, 1);
}

static void test_every_target_has_no_ceph_meaning(void **state)
{
	struct run *run = *state;

	run->cfg.storage.stripe_count = -1;
	assert_int_equal(stripe_prepare(run), -FB_ECONFIG);
	assert_non_null(strstr(run->err.msg, "stripe_count = -1"));
	assert_int_equal(fake.nset, 0);
}

/* Read-back of every file, the objects of each, their OSDs from `ceph osd map`. */
static void test_readback_servers_spanned(void **state)
{
	struct run *run = *state;
	json_t *eff, *files, *f1, *per;

	/* file 0: 4 MiB at sc 4 (4 objects on 4 OSDs); file 1: 1 MiB (1 object) */
	fake.dir_layout[0] = '\0';
	snprintf(fake.dflt, sizeof(fake.dflt),
		 "stripe_unit=1048576 stripe_count=4 object_size=4194304 pool=cephfs_data");
	fake_add(files2[0].path, 4 << 20);
	fake_add(files2[1].path, 1 << 20);
	assert_int_equal(stripe_readback_dataset(run), 0);
	assert_int_equal(fake.ncli, 1);
	assert_string_equal(fake.cli_argv, "ceph --connect-timeout 30 --format json");
	assert_string_equal(fake.cli_input, "osd ls\n"
					    "osd map cephfs_data 10000000000.00000000\n"
					    "osd map cephfs_data 10000000000.00000001\n"
					    "osd map cephfs_data 10000000000.00000002\n"
					    "osd map cephfs_data 10000000000.00000003\n"
					    "osd map cephfs_data 10000000001.00000000\n");
	eff = eff_of(run);
	assert_true(json_is_object(eff));
	assert_int_equal(ival(eff, "count"), 4);
	assert_int_equal(ival(eff, "size"), 1048576);
	assert_int_equal(ival(eff, "object_size"), 4194304);
	assert_string_equal(json_string_value(json_object_get(eff, "pool")), "cephfs_data");
	assert_int_equal(ival(eff, "files_read_back"), 2);
	assert_int_equal(ival(eff, "files_differing"), 0);
	assert_int_equal(ival(eff, "objects"), 4);
	assert_int_equal(ival(eff, "servers_spanned"), 4);
	assert_int_equal(json_array_size(json_object_get(eff, "servers")), 4);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(eff, "servers"), 0)), 0);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(eff, "servers"), 3)), 3);
	files = json_object_get(eff, "files");
	assert_int_equal(json_array_size(files), 2);
	f1 = json_array_get(files, 1);
	assert_string_equal(json_string_value(json_object_get(f1, "path")), files2[1].path);
	assert_int_equal(ival(f1, "objects"), 1);
	assert_int_equal(ival(f1, "servers_spanned"), 1);
	/* inode 0x10000000001, object 0: (1 + 0) % 4 */
	assert_int_equal(json_integer_value(json_array_get(json_object_get(f1, "servers"), 0)), 1);
	per = json_object_get(eff, "servers_spanned_per_file");
	assert_int_equal(ival(per, "min"), 1);
	assert_int_equal(ival(per, "max"), 4);
	assert_int_equal(ival(eff, "dataset_servers_spanned"), 4);
	assert_int_equal(ival(eff, "cluster_osds"), 4);
	assert_non_null(strstr(json_string_value(json_object_get(eff, "set_by")),
			       "ceph.file.layout on each file"));
	assert_int_equal(json_array_size(run->warnings), 0);
}

/* With two OSDs, the four objects of a stripe_count 4 file share them: spanned 2, not 4. */
static void test_readback_fewer_osds_than_stripes(void **state)
{
	struct run *run = *state;

	fake.nosds = 2;
	snprintf(fake.dflt, sizeof(fake.dflt),
		 "stripe_unit=1048576 stripe_count=4 object_size=4194304 pool=cephfs_data");
	fake_add(files2[0].path, 4 << 20);
	fake_add(files2[1].path, 4 << 20);
	assert_int_equal(stripe_readback_dataset(run), 0);
	assert_int_equal(ival(eff_of(run), "count"), 4);
	assert_int_equal(ival(eff_of(run), "servers_spanned"), 2);
	assert_true(warned(run, "stripe_count 4 is more than the 2 OSDs of the cluster"));
}

static void test_readback_mismatch_warns(void **state)
{
	struct run *run = *state;

	fake_add(files2[0].path, 4 << 20); /* default layout: stripe_count 1, su 4 MiB */
	fake_add(files2[1].path, 4 << 20);
	assert_int_equal(stripe_readback_dataset(run), 0);
	assert_int_equal(ival(eff_of(run), "count"), 1);
	assert_int_equal(ival(eff_of(run), "files_differing"), 2);
	assert_int_equal(ival(eff_of(run), "servers_spanned"), 1);
	assert_true(warned(run, "stripe layout differs from the request on 2 files"));
	assert_true(warned(run, "stripe_count 1"));
}

static void test_servers_unknown_without_cli(void **state)
{
	static const struct {
		int rc;
		const char *err, *reason;
	} cases[] = {
	    {127, NULL, "the ceph CLI is not installed"},
	    {1, "[errno 2] RADOS object not found (error connecting to the cluster)\n",
	     "ceph osd map failed (exit 1): [errno 2] RADOS object not found (error connecting "
	     "to the cluster)"},
	    {-ETIMEDOUT, NULL, "did not answer within"},
	};
	struct run *run = *state;

	fake_add(files2[0].path, 4 << 20);
	fake_add(files2[1].path, 4 << 20);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *eff;

		fake.cli_rc = cases[i].rc;
		fake.cli_err = cases[i].err;
		assert_int_equal(stripe_readback_dataset(run), 0);
		eff = eff_of(run);
		/* the layout is still known; the servers are not, and the record says why */
		assert_int_equal(ival(eff, "count"), 1);
		assert_string_equal(json_string_value(json_object_get(eff, "servers_spanned")),
				    "unknown");
		assert_non_null(
		    strstr(json_string_value(json_object_get(eff, "servers")), cases[i].reason));
		assert_null(json_object_get(eff, "files"));
		assert_true(warned(run, "the OSDs holding the dataset are unknown"));
	}
}

/* Without CEPH_CONF the CLI is pointed at the configuration of the ceph-fuse client serving
 * the files (the lab's clients run with -c LAB/ceph.conf --id hN, and no /etc/ceph exists). */
static void test_cli_uses_the_mounts_client_config(void **state)
{
	struct run *run = *state;

	unsetenv("CEPH_CONF");
	fake.dev = 0x2a;
	fake_add(files2[0].path, 4 << 20);
	fake_add(files2[1].path, 4 << 20);
	assert_int_equal(stripe_readback_dataset(run), 0);
	assert_string_equal(fake.cli_argv, "ceph -c /lab/ceph.conf --name client.h1 "
					   "--connect-timeout 30 --format json");
	assert_non_null(
	    strstr(json_string_value(json_object_get(run->info_storage, "ceph_cli_conf")),
		   "/lab/ceph.conf, client.h1 (from the ceph-fuse client of this mount)"));
	/* CEPH_CONF wins: the CLI reads it itself */
	setenv("CEPH_CONF", "/etc/other.conf", 1);
	assert_int_equal(stripe_readback_dataset(run), 0);
	assert_string_equal(fake.cli_argv, "ceph --connect-timeout 30 --format json");
	unsetenv("CEPH_CONF");
	/* another mount: no client found, the CLI's own defaults */
	fake.dev = 0x2b;
	assert_int_equal(stripe_readback_dataset(run), 0);
	assert_string_equal(fake.cli_argv, "ceph --connect-timeout 30 --format json");
}

static void test_hints_not_passed_on_ceph(void **state)
{
	struct run *run = *state;
	char v[MPI_MAX_INFO_VAL + 1];
	int flag = 0;
	MPI_Info info;

	MPI_Info_create(&info);
	MPI_Info_set(info, "striping_factor", "8"); /* from the user's [storage.mpiio] */
	stripe_hints(run, &info);
	MPI_Info_get(info, "striping_unit", MPI_MAX_INFO_VAL, v, &flag);
	assert_false(flag);
	MPI_Info_get(info, "stripe_width", MPI_MAX_INFO_VAL, v, &flag);
	assert_false(flag);
	assert_non_null(
	    strstr(json_string_value(json_object_get(run->info_storage, "stripe_hints")),
		   "MPI-IO has no CephFS driver"));
	assert_true(warned(run, "[storage.mpiio] striping_factor does not stripe files on cephfs"));
	MPI_Info_free(&info);
}

/* ---- detection -------------------------------------------------------------------------- */

static struct {
	uint64_t magic;
	const char *mounts;
	bool ceph_xattr;
} det;

static int det_statfs(const char *path, struct statfs *st)
{
	(void)path;
	memset(st, 0, sizeof(*st));
	st->f_type = (__typeof__(st->f_type))det.magic;
	st->f_bsize = 4194304;
	st->f_blocks = 100;
	return 0;
}

static char *det_realpath(const char *path, char *out)
{
	strcpy(out, path);
	return out;
}

static char *det_read_mounts(void)
{
	return strdup(det.mounts);
}

static ssize_t det_getxattr(const char *path, const char *name, void *value, size_t size)
{
	(void)path;
	if (det.ceph_xattr && strcmp(name, "ceph.dir.entries") == 0 && size >= 2) {
		memcpy(value, "3", 1);
		return 1;
	}
	errno = ENODATA;
	return -1;
}

static void test_detect_cephfs(void **state)
{
	static const struct {
		uint64_t magic;
		const char *mounts;
		bool xattr;
		const char *type, *client, *detected;
		enum fs_striper striper;
	} cases[] = {
	    {0x00c36400, "10.0.0.1:6789:/ /mnt/cephfs ceph rw,name=admin 0 0\n", false, "cephfs",
	     "kernel", "statfs magic 0x00c36400", FS_STRIPER_CEPH},
	    /* ceph-fuse as /proc/self/mounts shows it */
	    {0x65735546, "ceph-fuse /mnt/cephfs fuse.ceph-fuse rw,user_id=0 0 0\n", false, "cephfs",
	     "ceph-fuse", "mount table (ceph-fuse, fuse.ceph-fuse)", FS_STRIPER_CEPH},
	    {0x65735546, "ceph-fuse /mnt/cephfs fuseblk rw,user_id=0 0 0\n", false, "cephfs",
	     "ceph-fuse", "mount table (ceph-fuse, fuseblk)", FS_STRIPER_CEPH},
	    /* a bind mount under another name: the ceph.* xattrs tell */
	    {0x65735546, "/dev/fuse /mnt/cephfs fuse rw 0 0\n", true, "cephfs", "ceph-fuse",
	     "ceph.dir.entries xattr", FS_STRIPER_CEPH},
	    /* another FUSE file system is not CephFS */
	    {0x65735546, "sshfs#me@h: /mnt/cephfs fuse.sshfs rw 0 0\n", false, "fuse.sshfs", "", "",
	     FS_STRIPER_NONE},
	    {0x0BD00BD0, "x /mnt/cephfs lustre rw 0 0\n", false, "lustre", "", "",
	     FS_STRIPER_LUSTRE},
	};
	struct fs_sys sys = fs_sys_default;

	(void)state;
	sys.statfs = det_statfs;
	sys.realpath = det_realpath;
	sys.read_mounts = det_read_mounts;
	sys.getxattr = det_getxattr;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fs_info fs;

		det.magic = cases[i].magic;
		det.mounts = cases[i].mounts;
		det.ceph_xattr = cases[i].xattr;
		assert_int_equal(fs_detect_with(&sys, "/mnt/cephfs", &fs), 0);
		assert_string_equal(fs.type, cases[i].type);
		assert_string_equal(fs.client, cases[i].client);
		assert_string_equal(fs.detected, cases[i].detected);
		assert_int_equal(fs.striper, cases[i].striper);
		assert_int_equal(fs.can_stripe, cases[i].striper != FS_STRIPER_NONE);
	}
}

int main(int argc, char **argv)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup_run, teardown_run)
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_object_count),
	    cmocka_unit_test(test_layout_value),
	    T(test_prepare_probe_then_file_layouts),
	    T(test_create_replaces_old_file),
	    T(test_library_created_format_uses_dir_layout),
	    T(test_refused_layout_is_config_error),
	    T(test_every_target_has_no_ceph_meaning),
	    T(test_more_stripes_than_osds_is_config_error),
	    T(test_readback_servers_spanned),
	    T(test_readback_fewer_osds_than_stripes),
	    T(test_readback_mismatch_warns),
	    T(test_servers_unknown_without_cli),
	    T(test_hints_not_passed_on_ceph),
	    T(test_cli_uses_the_mounts_client_config),
	    cmocka_unit_test(test_detect_cephfs),
	};
	int rc;

	MPI_Init(&argc, &argv);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	MPI_Finalize();
	return rc;
#undef T
}
