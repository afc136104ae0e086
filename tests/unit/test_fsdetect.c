/* File-system detection: the statfs magic table, /proc/self/mounts matching, the label rules
 * and the walk up to an existing parent, with fake system calls (a Lustre client is not needed
 * to show what feedbench would report on one), plus one real detection that creates nothing.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bench/run.h"
#include "bench/storage/fs.h"
#include "bench/storage/fs_sys.h"

/* ---- magic table ---------------------------------------------------------------------- */

static void test_magic_table(void **state)
{
	static const struct {
		uint64_t magic;
		const char *name;
	} cases[] = {
	    {0x0BD00BD0, "lustre"},
	    {0x47504653, "gpfs"},
	    {0x19830326, "beegfs"},
	    {0x6969, "nfs"},
	    {0x58465342, "xfs"},
	    {0xEF53, "ext4"},
	    {0x01021994, "tmpfs"},
	    {0x794c7630, "overlay"},
	    {0x65735546, "fuse"},
	    {0x00c36400, "ceph"},
	    {0x9123683E, "btrfs"},
	    /* above 2^31: statfs's signed f_type must not hide it */
	    {0xFF534D42, "cifs"},
	    {0xFFFFFFFFFF534D42ull, "cifs"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *name = fs_magic_name(cases[i].magic);

		assert_non_null(name);
		assert_string_equal(name, cases[i].name);
	}
	assert_null(fs_magic_name(0x1234abcd));
	assert_null(fs_magic_name(0));
}

/* ---- mounts --------------------------------------------------------------------------- */

static const char fake_mounts[] = "proc /proc proc rw,relatime 0 0\n"
				  "/dev/vda / ext4 rw,relatime 0 0\n"
				  "10.0.0.1@o2ib:/scratch /lustre/scratch lustre rw,flock 0 0\n"
				  "10.0.0.2@o2ib:/scratch2 /lustre/scratch2 lustre rw,flock 0 0\n"
				  "server:/home /home/my\\040data nfs4 rw,vers=4.2 0 0\n"
				  "tmpfs /dev/shm tmpfs rw 0 0\n"
				  "overlay /mnt/stack overlay rw,lowerdir=/a 0 0\n"
				  "tmpfs /mnt/stack tmpfs rw 0 0\n"
				  "sshfs#me@host: /mnt/remote fuse.sshfs rw 0 0";

static void test_mounts_longest_prefix(void **state)
{
	static const struct {
		const char *path, *mount, *device, *type;
	} cases[] = {
	    {"/lustre/scratch/user/data", "/lustre/scratch", "10.0.0.1@o2ib:/scratch", "lustre"},
	    {"/lustre/scratch", "/lustre/scratch", "10.0.0.1@o2ib:/scratch", "lustre"},
	    {"/lustre/scratch2/x", "/lustre/scratch2", "10.0.0.2@o2ib:/scratch2", "lustre"},
	    /* a prefix only at a '/' boundary */
	    {"/lustre/scratchy/x", "/", "/dev/vda", "ext4"},
	    {"/home/my data/set", "/home/my data", "server:/home", "nfs4"},
	    {"/home/my", "/", "/dev/vda", "ext4"},
	    {"/dev/shm/feedbench", "/dev/shm", "tmpfs", "tmpfs"},
	    /* mounted twice at one point: the later line hides the earlier */
	    {"/mnt/stack/f", "/mnt/stack", "tmpfs", "tmpfs"},
	    {"/mnt/remote", "/mnt/remote", "sshfs#me@host:", "fuse.sshfs"},
	    {"/", "/", "/dev/vda", "ext4"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char mount[256], device[256], type[64];

		assert_true(fs_mounts_match(fake_mounts, cases[i].path, mount, sizeof(mount),
					    device, sizeof(device), type, sizeof(type)));
		assert_string_equal(mount, cases[i].mount);
		assert_string_equal(device, cases[i].device);
		assert_string_equal(type, cases[i].type);
	}
}

static void test_mounts_no_match(void **state)
{
	char mount[64] = "", device[64] = "", type[64] = "";

	(void)state;
	assert_false(fs_mounts_match("", "/x", mount, sizeof(mount), device, sizeof(device), type,
				     sizeof(type)));
	assert_false(fs_mounts_match("a /data xfs rw 0 0\n", "/database", mount, sizeof(mount),
				     device, sizeof(device), type, sizeof(type)));
	/* a truncated line (no type) is not a mount */
	assert_false(fs_mounts_match("a /data\n", "/data/x", mount, sizeof(mount), device,
				     sizeof(device), type, sizeof(type)));
}

/* ---- detection with fake calls -------------------------------------------------------- */

struct fake_fs {
	const char *existing[8]; /* paths realpath resolves */
	uint64_t magic;
	const char *mounts; /* NULL: /proc/self/mounts unreadable */
	char statfs_path[PATH_MAX];
	int statfs_calls;
};

/* The fake's answers (tests are single threaded; the product code has no globals). */
static struct fake_fs fake;

static int fake_statfs(const char *path, struct statfs *st)
{
	memset(st, 0, sizeof(*st));
	snprintf(fake.statfs_path, sizeof(fake.statfs_path), "%s", path);
	fake.statfs_calls++;
	st->f_type = (__typeof__(st->f_type))fake.magic;
	st->f_bsize = 4194304;
	st->f_frsize = 4096;
	st->f_blocks = 1000000;
	st->f_bfree = 600000;
	st->f_bavail = 500000;
	return 0;
}

static char *fake_realpath(const char *path, char *out)
{
	for (int i = 0; i < 8 && fake.existing[i]; i++)
		if (strcmp(path, fake.existing[i]) == 0) {
			strcpy(out, path);
			return out;
		}
	errno = ENOENT;
	return NULL;
}

static char *fake_read_mounts(void)
{
	return fake.mounts ? strdup(fake.mounts) : NULL;
}

static struct fs_sys fake_sys(void)
{
	struct fs_sys sys = fs_sys_default;

	sys.statfs = fake_statfs;
	sys.realpath = fake_realpath;
	sys.read_mounts = fake_read_mounts;
	return sys;
}

static void test_detect_lustre_walks_up(void **state)
{
	struct fs_sys sys = fake_sys();
	struct fs_info fs;

	(void)state;
	memset(&fake, 0, sizeof(fake));
	fake.existing[0] = "/lustre/scratch";
	fake.existing[1] = "/";
	fake.magic = LUSTRE_SUPER_MAGIC;
	fake.mounts = fake_mounts;
	/* Neither user/ nor data/ exists yet: the file system is the one of /lustre/scratch. */
	assert_int_equal(fs_detect_with(&sys, "/lustre/scratch/user/data/", &fs), 0);
	assert_string_equal(fake.statfs_path, "/lustre/scratch");
	assert_string_equal(fs.type, "lustre");
	assert_string_equal(fs.mount, "/lustre/scratch");
	assert_string_equal(fs.device, "10.0.0.1@o2ib:/scratch");
	assert_true(fs.can_stripe);
	assert_int_equal(fs.magic, 0x0BD00BD0);
	assert_int_equal(fs.block_size, 4194304);
	/* free: what an unprivileged user may write (f_bavail), in fragment units */
	assert_int_equal(fs.free_bytes, 500000ull * 4096);
	assert_int_equal(fs.total_bytes, 1000000ull * 4096);
}

static void test_detect_labels(void **state)
{
	static const struct {
		uint64_t magic;
		const char *mounts;
		const char *type;
		int can_stripe;
	} cases[] = {
	    {0xEF53, "/dev/sda1 /data ext4 rw 0 0\n", "ext4", 0},
	    /* ext2/3/4 share a magic: the mount table tells them apart */
	    {0xEF53, "/dev/sda1 /data ext3 rw 0 0\n", "ext3", 0},
	    {0x6969, "srv:/x /data nfs4 rw 0 0\n", "nfs4", 0},
	    {0x65735546, "dfuse /data fuse.daos rw 0 0\n", "fuse.daos", 0},
	    {0x794c7630, "overlay /data overlay rw 0 0\n", "overlay", 0},
	    /* statfs is the truth when the table disagrees */
	    {0x01021994, "/dev/sda1 /data ext4 rw 0 0\n", "tmpfs", 0},
	    {0x47504653, "gpfs0 /data gpfs rw 0 0\n", "gpfs", 0},
	    /* an unknown magic takes the mount table's name, or says what it is */
	    {0x1234abcd, "x /data weirdfs rw 0 0\n", "weirdfs", 0},
	    {0x1234abcd, NULL, "unknown(0x1234abcd)", 0},
	    {0x0BD00BD0, NULL, "lustre", 1},
	};
	struct fs_sys sys = fake_sys();

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fs_info fs;

		memset(&fake, 0, sizeof(fake));
		fake.existing[0] = "/data";
		fake.magic = cases[i].magic;
		fake.mounts = cases[i].mounts;
		assert_int_equal(fs_detect_with(&sys, "/data", &fs), 0);
		assert_string_equal(fs.type, cases[i].type);
		assert_int_equal(fs.can_stripe, cases[i].can_stripe);
		/* without a mount table the folder itself stands for the mount point */
		assert_string_equal(fs.mount, "/data");
	}
}

static void test_detect_relative_path(void **state)
{
	struct fs_sys sys = fake_sys();
	struct fs_info fs;

	(void)state;
	memset(&fake, 0, sizeof(fake));
	fake.existing[0] = ".";
	fake.magic = 0x58465342;
	fake.mounts = "";
	/* "data/train" and "data" do not exist: the current folder is asked */
	assert_int_equal(fs_detect_with(&sys, "data/train", &fs), 0);
	assert_string_equal(fake.statfs_path, ".");
	assert_string_equal(fs.type, "xfs");
}

/* The real calls: the folder's file system is found and nothing is created. */
static void test_detect_real_creates_nothing(void **state)
{
	char dir[] = "/tmp/fb_fsdetect_XXXXXX";
	char missing[PATH_MAX];
	struct fs_info fs;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(missing, sizeof(missing), "%s/not/yet", dir);
	assert_int_equal(fs_detect(missing, &fs), 0);
	assert_int_equal(stat(missing, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_true(fs.type[0] != '\0');
	assert_true(fs.total_bytes > 0);
	assert_true(fs.block_size > 0);
	assert_true(fs.mount[0] == '/');
	assert_false(fs.can_stripe && fs.magic != LUSTRE_SUPER_MAGIC);
	rmdir(dir);
}

/* The real command runner behind `ceph osd map`: stdin in, stdout and stderr out, the exit
 * status, 127 for a missing program, a time limit, and no SIGPIPE death when the child stops
 * reading early. */
static void test_run_cmd_real(void **state)
{
	char *cat_argv[] = {"sh", "-c", "cat; echo oops >&2; exit 3", NULL};
	char *missing_argv[] = {"feedbench-no-such-program", NULL};
	char *sleep_argv[] = {"sleep", "5", NULL};
	char *true_argv[] = {"true", NULL};
	char *out, *err, *big;
	int rc;

	(void)state;
	rc = fs_sys_default.run_cmd(cat_argv, "osd ls\nosd map a b\n", 10, &out, &err);
	assert_int_equal(rc, 3);
	assert_string_equal(out, "osd ls\nosd map a b\n");
	assert_string_equal(err, "oops\n");
	free(out);
	free(err);
	rc = fs_sys_default.run_cmd(missing_argv, NULL, 10, &out, &err);
	assert_int_equal(rc, 127);
	free(out);
	free(err);
	rc = fs_sys_default.run_cmd(sleep_argv, NULL, 0.2, &out, &err);
	assert_int_equal(rc, -ETIMEDOUT);
	free(out);
	free(err);
	big = malloc(4 << 20);
	memset(big, 'x', (4 << 20) - 1);
	big[(4 << 20) - 1] = '\0';
	rc = fs_sys_default.run_cmd(true_argv, big, 10, &out, &err);
	assert_int_equal(rc, 0);
	free(big);
	free(out);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_magic_table),
	    cmocka_unit_test(test_mounts_longest_prefix),
	    cmocka_unit_test(test_mounts_no_match),
	    cmocka_unit_test(test_detect_lustre_walks_up),
	    cmocka_unit_test(test_detect_labels),
	    cmocka_unit_test(test_detect_relative_path),
	    cmocka_unit_test(test_detect_real_creates_nothing),
	    cmocka_unit_test(test_run_cmd_real),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
