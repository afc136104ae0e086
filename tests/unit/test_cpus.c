/* CPU limits (bench/cpus.h): the cgroup CPU limit a rank runs under and its CPU list.
 *
 * A wrong limit makes feedbench spin against its own readers or leave CPUs idle, and puts a
 * wrong binding into summary.json, so: cpu.max and the v1 CFS files parse to CPUs ("max" and -1
 * are no limit, garbage is refused), the tightest limit on the path from the process's cgroup
 * to the mount point wins, v1 and v2 hierarchies (hybrid machines have both) are both read, and
 * a path outside the mount's root (a container without a cgroup namespace) falls back to the
 * mount point. The files live in a temporary folder standing in for /.
 */
#include <sched.h>
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

#include "bench/cpus.h"
#include "bench/util.h"

static void test_cpu_max(void **state)
{
	static const struct {
		const char *text;
		double cpus;
	} cases[] = {
	    {"max 100000\n", 0},
	    {"150000 100000\n", 1.5},
	    {"50000 100000", 0.5},
	    {"200000 50000\n", 4},
	    {"", -1},
	    {"max", -1},
	    {"abc 100000\n", -1},
	    {"100000 0\n", -1},
	    {"-5 100000\n", -1},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double got = cpus_parse_cpu_max(cases[i].text);
		if (got != cases[i].cpus)
			fail_msg("'%s': %g, want %g", cases[i].text, got, cases[i].cpus);
	}
}

static void test_cfs(void **state)
{
	static const struct {
		const char *quota, *period;
		double cpus;
	} cases[] = {
	    {"-1\n", "100000\n", 0}, {"250000\n", "100000\n", 2.5}, {"100000", "100000", 1},
	    {"x\n", "100000\n", -1}, {"100000\n", "0\n", -1},	    {"0\n", "100000\n", -1},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double got = cpus_parse_cfs(cases[i].quota, cases[i].period);
		if (got != cases[i].cpus)
			fail_msg("quota '%s' period '%s': %g, want %g", cases[i].quota,
				 cases[i].period, got, cases[i].cpus);
	}
}

static void test_cpu_list(void **state)
{
	unsigned char set[16] = {0};
	char buf[64];

	(void)state;
	cpus_format_list(set, 16, buf, sizeof(buf));
	assert_string_equal(buf, "");
	set[0] = 1;
	cpus_format_list(set, 16, buf, sizeof(buf));
	assert_string_equal(buf, "0");
	set[1] = set[2] = set[3] = set[8] = set[10] = set[11] = 1;
	cpus_format_list(set, 16, buf, sizeof(buf));
	assert_string_equal(buf, "0-3,8,10-11");
	cpus_format_list(set, 16, buf, 8); /* too small: ends with "..." */
	assert_string_equal(buf, "0-3...");
}

static void put(const char *root, const char *path, const char *text)
{
	char full[4096];

	snprintf(full, sizeof(full), "%s%s", root, path);
	char *slash = strrchr(full, '/');
	*slash = '\0';
	assert_int_equal(util_mkdirs(full, 0755), 0);
	*slash = '/';
	FILE *f = fopen(full, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static const char mountinfo_v2[] =
    "21 1 0:19 / /proc rw - proc proc rw\n"
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
static const char mountinfo_v1[] =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static void test_cgroup_v2(void **state)
{
	char root[] = "/tmp/fb_cpus_XXXXXX", file[256];
	const char *cg = "0::/job/step\n";

	(void)state;
	assert_non_null(mkdtemp(root));
	/* No cpu.max anywhere: no limit. */
	assert_true(cpus_cgroup_quota(cg, mountinfo_v2, root, file, sizeof(file)) == 0);
	assert_string_equal(file, "");
	put(root, "/sys/fs/cgroup/job/step/cpu.max", "max 100000\n");
	put(root, "/sys/fs/cgroup/job/cpu.max", "300000 100000\n");
	put(root, "/sys/fs/cgroup/cpu.max", "800000 100000\n");
	/* The tightest on the way up: the job's 3 CPUs. */
	assert_true(cpus_cgroup_quota(cg, mountinfo_v2, root, file, sizeof(file)) == 3);
	assert_string_equal(file, "/sys/fs/cgroup/job/cpu.max");
	put(root, "/sys/fs/cgroup/job/step/cpu.max", "150000 100000\n");
	assert_true(cpus_cgroup_quota(cg, mountinfo_v2, root, file, sizeof(file)) == 1.5);
	/* A path the mount does not show (no cgroup namespace): the mount point's own limit. */
	assert_true(
	    cpus_cgroup_quota("0::/elsewhere/x\n", mountinfo_v2, root, file, sizeof(file)) == 8);
	util_remove_tree(root);
}

static void test_cgroup_v1_hybrid(void **state)
{
	char root[] = "/tmp/fb_cpus_XXXXXX", file[256];
	const char *cg = "4:memory:/m\n3:cpuset:/\n2:cpu,cpuacct:/slurm/job_7\n0::/\n";

	(void)state;
	assert_non_null(mkdtemp(root));
	put(root, "/sys/fs/cgroup/cpu,cpuacct/slurm/job_7/cpu.cfs_quota_us", "200000\n");
	put(root, "/sys/fs/cgroup/cpu,cpuacct/slurm/job_7/cpu.cfs_period_us", "100000\n");
	put(root, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
	put(root, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
	assert_true(cpus_cgroup_quota(cg, mountinfo_v1, root, file, sizeof(file)) == 2);
	assert_string_equal(file, "/sys/fs/cgroup/cpu,cpuacct/slurm/job_7/cpu.cfs_quota_us");
	/* The v2 half of a hybrid machine limits too; the tighter one wins. */
	put(root, "/sys/fs/cgroup/unified/cpu.max", "100000 100000\n");
	assert_true(cpus_cgroup_quota(cg, mountinfo_v1, root, file, sizeof(file)) == 1);
	assert_string_equal(file, "/sys/fs/cgroup/unified/cpu.max");
	util_remove_tree(root);
}

/* This machine: whatever the limits are, they are consistent. */
/* read_threads = auto: CPUs - 1 over the loaders, at least 1 (docs/launching.md). */
static void test_auto_threads(void **state)
{
	static const struct {
		double cpus;
		unsigned loaders, want;
	} cases[] = {{0.5, 1, 1}, {1, 1, 1},   {1.5, 1, 1}, {2, 1, 1}, {2.5, 1, 1}, {3, 1, 2},
		     {8, 1, 7},	  {64, 1, 63}, {8, 2, 3},   {3, 2, 1}, {2, 4, 1},   {9, 4, 2}};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned got = cpus_auto_threads(cases[i].cpus, cases[i].loaders);
		if (got != cases[i].want)
			fail_msg("%g CPUs, %u loaders: %u threads, want %u", cases[i].cpus,
				 cases[i].loaders, got, cases[i].want);
	}
}

static void test_detect(void **state)
{
	struct cpu_limits c;

	(void)state;
	assert_int_equal(cpus_detect(&c), 0);
	assert_true(c.online >= 1);
	assert_true(c.affinity >= 1 && c.affinity <= CPU_SETSIZE);
	assert_true(c.list[0] >= '0' && c.list[0] <= '9');
	assert_true(c.quota >= 0);
	assert_true((c.quota > 0) == (c.quota_file[0] != '\0'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cpu_max),	     cmocka_unit_test(test_cfs),
	    cmocka_unit_test(test_cpu_list),	     cmocka_unit_test(test_cgroup_v2),
	    cmocka_unit_test(test_cgroup_v1_hybrid), cmocka_unit_test(test_detect),
	    cmocka_unit_test(test_auto_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
