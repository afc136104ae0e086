/* The CPUs a rank may use and how its threads sit on them (see cpus.h). */
#include "cpus.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"
#include "util.h"

#define CPUS_MAX    CPU_SETSIZE
#define LINE_FIELDS 12

double cpus_parse_cpu_max(const char *text)
{
	char quota[32];
	double period;

	if (!text || sscanf(text, "%31s %lf", quota, &period) != 2 || period <= 0)
		return -1;
	if (strcmp(quota, "max") == 0)
		return 0;
	char *end;
	double q = strtod(quota, &end);
	if (*end || q <= 0)
		return -1;
	return q / period;
}

double cpus_parse_cfs(const char *quota, const char *period)
{
	char *end;
	double q, p;

	if (!quota || !period)
		return -1;
	q = strtod(quota, &end);
	if (end == quota || (*end && *end != '\n'))
		return -1;
	if (q < 0) /* -1: no limit */
		return 0;
	p = strtod(period, &end);
	if (end == period || (*end && *end != '\n') || p <= 0 || q == 0)
		return -1;
	return q / p;
}

void cpus_format_list(const unsigned char *set, int n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (!set[i])
			continue;
		int j = i;
		while (j + 1 < n && set[j + 1])
			j++;
		char piece[32];
		int k = j > i ? snprintf(piece, sizeof(piece), "%s%d-%d", used ? "," : "", i, j)
			      : snprintf(piece, sizeof(piece), "%s%d", used ? "," : "", i);
		if (used + (size_t)k + 4 >= len) {
			snprintf(buf + used, len - used, "...");
			return;
		}
		memcpy(buf + used, piece, (size_t)k + 1);
		used += (size_t)k;
		i = j;
	}
}

/* Reads a small file under root into buf; false when it cannot. */
static bool read_small(const char *root, const char *path, char *buf, size_t len)
{
	char full[4096];
	FILE *f;
	size_t n;

	snprintf(full, sizeof(full), "%s%s", root, path);
	f = fopen(full, "re");
	if (!f)
		return false;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n > 0;
}

/* The limit set in one cgroup folder (v2 or v1 files), 0 when none. */
static double folder_limit(const char *root, const char *dir, bool v2, char *file, size_t len)
{
	char path[4096], text[128], period[128];
	double cpus;

	if (v2) {
		snprintf(path, sizeof(path), "%s/cpu.max", dir);
		if (!read_small(root, path, text, sizeof(text)))
			return 0;
		cpus = cpus_parse_cpu_max(text);
	} else {
		snprintf(path, sizeof(path), "%s/cpu.cfs_period_us", dir);
		if (!read_small(root, path, period, sizeof(period)))
			return 0;
		snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir);
		if (!read_small(root, path, text, sizeof(text)))
			return 0;
		cpus = cpus_parse_cfs(text, period);
	}
	if (cpus > 0)
		snprintf(file, len, "%s", path);
	return cpus > 0 ? cpus : 0;
}

/* This process's cgroup path for the v2 hierarchy (v2) or for the v1 "cpu" controller. */
static bool cgroup_path(const char *cgroup_text, bool v2, char *path, size_t len)
{
	const char *line = cgroup_text;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		char buf[4096], *c1, *c2;

		if (n < sizeof(buf)) {
			memcpy(buf, line, n);
			buf[n] = '\0';
			c1 = strchr(buf, ':');
			c2 = c1 ? strchr(c1 + 1, ':') : NULL;
			if (c2) {
				*c2 = '\0';
				bool match = false;
				if (v2) {
					match = strcmp(buf, "0:") == 0 ||
						(c1[1] == '\0' && buf[0] == '0');
				} else {
					for (char *tok = strtok(c1 + 1, ","); tok;
					     tok = strtok(NULL, ","))
						match |= strcmp(tok, "cpu") == 0;
				}
				if (match) {
					snprintf(path, len, "%s", c2 + 1);
					return true;
				}
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

/* Walks from the process's cgroup folder up to the mount point, keeping the tightest limit. */
static double mount_limit(const char *root, const char *mnt_root, const char *mnt_point,
			  const char *cg, bool v2, char *file, size_t len)
{
	char dir[4096];
	size_t rl = strlen(mnt_root), base;
	double best = 0;

	/* A path outside the mount's root (a container without a cgroup namespace) starts at the
	 * mount point, the container's own cgroup. */
	if (strcmp(mnt_root, "/") == 0)
		snprintf(dir, sizeof(dir), "%s%s", mnt_point, cg);
	else if (strncmp(cg, mnt_root, rl) == 0 && (cg[rl] == '/' || cg[rl] == '\0'))
		snprintf(dir, sizeof(dir), "%s%s", mnt_point, cg + rl);
	else
		snprintf(dir, sizeof(dir), "%s", mnt_point);
	base = strlen(mnt_point);
	for (;;) {
		size_t n = strlen(dir);
		while (n > base && n > 1 && dir[n - 1] == '/')
			dir[--n] = '\0';
		char f[256];
		double cpus = folder_limit(root, dir, v2, f, sizeof(f));
		if (cpus > 0 && (best == 0 || cpus < best)) {
			best = cpus;
			snprintf(file, len, "%s", f);
		}
		char *slash = strrchr(dir, '/');
		if (n <= base || !slash || (size_t)(slash - dir) < base)
			break;
		*slash = '\0';
	}
	return best;
}

double cpus_cgroup_quota(const char *cgroup_text, const char *mountinfo_text, const char *root,
			 char *file, size_t len)
{
	const char *line = mountinfo_text;
	double best = 0;

	file[0] = '\0';
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		char buf[4096], *f[LINE_FIELDS] = {0}, *dash, *save = NULL;
		int nf = 0;

		if (n >= sizeof(buf)) {
			line = nl ? nl + 1 : NULL;
			continue;
		}
		memcpy(buf, line, n);
		buf[n] = '\0';
		line = nl ? nl + 1 : NULL;
		dash = strstr(buf, " - ");
		if (!dash)
			continue;
		*dash = '\0';
		for (char *t = strtok_r(buf, " ", &save); t && nf < 5;
		     t = strtok_r(NULL, " ", &save))
			f[nf++] = t;
		char *fstype = strtok_r(dash + 3, " ", &save);
		strtok_r(NULL, " ", &save); /* source */
		char *opts = strtok_r(NULL, " ", &save);
		if (nf < 5 || !fstype)
			continue;
		bool v2 = strcmp(fstype, "cgroup2") == 0, v1 = strcmp(fstype, "cgroup") == 0;
		if (v1) {
			bool cpu = false;
			char *s2 = NULL;
			for (char *t = opts ? strtok_r(opts, ",", &s2) : NULL; t;
			     t = strtok_r(NULL, ",", &s2))
				cpu |= strcmp(t, "cpu") == 0;
			v1 = cpu;
		}
		if (!v1 && !v2)
			continue;
		char cg[4096];
		if (!cgroup_path(cgroup_text, v2, cg, sizeof(cg)))
			continue;
		char mf[256];
		double cpus = mount_limit(root, f[3], f[4], cg, v2, mf, sizeof(mf));
		if (cpus > 0 && (best == 0 || cpus < best)) {
			best = cpus;
			snprintf(file, len, "%s", mf);
		}
	}
	return best;
}

int cpus_detect(struct cpu_limits *c)
{
	cpu_set_t set;
	unsigned char flags[CPUS_MAX];
	char *cg = NULL, *mi = NULL;
	size_t len;

	memset(c, 0, sizeof(*c));
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	c->online = online > 0 ? (int)online : 1;
	if (sched_getaffinity(0, sizeof(set), &set) < 0) {
		c->affinity = c->online;
		snprintf(c->list, sizeof(c->list), "unknown");
		return -errno;
	}
	c->affinity = CPU_COUNT(&set);
	for (int i = 0; i < CPUS_MAX; i++)
		flags[i] = CPU_ISSET(i, &set) ? 1 : 0;
	cpus_format_list(flags, CPUS_MAX, c->list, sizeof(c->list));
	if (util_read_file("/proc/self/cgroup", &cg, &len) == 0 &&
	    util_read_file("/proc/self/mountinfo", &mi, &len) == 0)
		c->quota = cpus_cgroup_quota(cg, mi, "", c->quota_file, sizeof(c->quota_file));
	free(cg);
	free(mi);
	return 0;
}

/* A string's FNV-1a hash: ranks whose limit comes from the same cgroup file share it. */
static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Rank 0's figures and every rank's CPU list and share, for summary.json. */
static json_t *binding_json(struct run *run, const struct cpu_binding *b)
{
	struct {
		double cpus;
		char list[sizeof(b->lim.list)];
	} mine = {0}, *all = NULL;
	json_t *o = NULL;

	mine.cpus = b->cpus;
	snprintf(mine.list, sizeof(mine.list), "%s", b->lim.list);
	if (run->rank == 0)
		all = calloc((size_t)run->nranks, sizeof(*all));
	MPI_Gather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE, 0,
		   run->comm);
	if (run->rank != 0 || !all)
		goto out;
	double lo = all[0].cpus, hi = all[0].cpus;
	json_t *ranks = json_array();
	for (int r = 0; r < run->nranks; r++) {
		json_t *e = json_object();
		lo = all[r].cpus < lo ? all[r].cpus : lo;
		hi = all[r].cpus > hi ? all[r].cpus : hi;
		json_object_set_new(e, "rank", json_integer(r));
		json_object_set_new(e, "cpu_list", json_string(all[r].list));
		json_object_set_new(e, "cpus", json_real(all[r].cpus));
		json_array_append_new(ranks, e);
	}
	o = json_object();
	json_object_set_new(o, "cpus_online", json_integer(b->lim.online));
	json_object_set_new(o, "cpu_list", json_string(b->lim.list));
	json_object_set_new(o, "affinity_cpus", json_integer(b->lim.affinity));
	json_object_set_new(o, "ranks_sharing_cpus", json_integer(b->sharing));
	json_object_set_new(o, "cgroup_cpu_quota",
			    b->lim.quota > 0 ? json_real(b->lim.quota) : json_null());
	json_object_set_new(o, "cgroup_cpu_quota_file", json_string(b->lim.quota_file));
	json_object_set_new(o, "cpus_per_rank", json_real(b->cpus));
	json_object_set_new(o, "cpus_per_rank_min", json_real(lo));
	json_object_set_new(o, "cpus_per_rank_max", json_real(hi));
	json_object_set_new(o, "threads_per_rank", json_integer(b->threads));
	json_object_set_new(o, "readers_share_trainer_core", json_boolean(b->readers_share));
	json_object_set_new(o, "read_threads", json_integer(run->read_threads));
	json_object_set_new(o, "read_threads_choice", json_string(run->read_threads_why));
	json_object_set_new(o, "ranks", ranks);
out:
	free(all);
	return o;
}

/* CPUs this rank can count on: its mask, each CPU counted 1 / (ranks of the node that may run
 * on it), capped by its cgroup's limit shared by the node's ranks in that cgroup; sharing
 * receives the ranks whose masks overlap this one's. Collective over run->node_comm. */
static int rank_cpus(struct run *run, struct cpu_limits *lim, double *cpus, int *sharing)
{
	struct {
		cpu_set_t set;
		uint64_t cgroup; /* hash of the file the cgroup limit came from; 0 when none */
	} mine, *all;
	int rc;

	memset(&mine, 0, sizeof(mine));
	*cpus = 0;
	*sharing = 0;
	rc = cpus_detect(lim);
	if (rc < 0 || sched_getaffinity(0, sizeof(mine.set), &mine.set) < 0) {
		CPU_ZERO(&mine.set);
		for (int i = 0; i < lim->online && i < CPUS_MAX; i++)
			CPU_SET(i, &mine.set);
	}
	mine.cgroup = lim->quota > 0 ? str_hash(lim->quota_file) : 0;
	all = calloc((size_t)run->local_size, sizeof(*all));
	if (!all)
		return -ENOMEM;
	MPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE,
		      run->node_comm);
	int in_cgroup = 0;
	for (int c = 0; c < CPUS_MAX; c++) {
		if (!CPU_ISSET(c, &mine.set))
			continue;
		int users = 0;
		for (int r = 0; r < run->local_size; r++)
			users += CPU_ISSET(c, &all[r].set) ? 1 : 0;
		*cpus += 1.0 / (users ? users : 1);
	}
	for (int r = 0; r < run->local_size; r++) {
		cpu_set_t both;
		CPU_AND(&both, &mine.set, &all[r].set);
		*sharing += CPU_COUNT(&both) > 0 ? 1 : 0;
		in_cgroup += mine.cgroup && all[r].cgroup == mine.cgroup ? 1 : 0;
	}
	free(all);
	if (lim->quota > 0 && in_cgroup > 0 && lim->quota / in_cgroup < *cpus)
		*cpus = lim->quota / in_cgroup;
	return 0;
}

unsigned cpus_auto_threads(double cpus, unsigned loaders)
{
	/* The trainer keeps a CPU of its own: it takes every batch and, with CUDA, copies it to
	 * the device; a reader on its CPU would take turns with it at every hand-off. The rest
	 * are shared by the rank's loaders (accelerators_per_rank). */
	double n = floor(cpus + 1e-9) - 1;
	unsigned per = n >= 1 ? (unsigned)n / (loaders ? loaders : 1) : 0;

	return per >= 1 ? per : 1;
}

int cpus_read_threads(struct run *run)
{
	struct cpu_limits lim;
	double cpus, fewest;
	int sharing, rc;

	rc = rank_cpus(run, &lim, &cpus, &sharing);
	if (rc < 0)
		cpus = lim.online; /* still joins the collective below */
	MPI_Allreduce(&cpus, &fewest, 1, MPI_DOUBLE, MPI_MIN, run->comm);
	if (rc < 0)
		return run_fail(run, rc, "cannot read this rank's CPUs: %s", strerror(-rc));
	if (run->cfg.reader.read_threads > 0) {
		run->read_threads = (unsigned)run->cfg.reader.read_threads;
		snprintf(run->read_threads_why, sizeof(run->read_threads_why), "set in the config");
		return 0;
	}
	unsigned loaders = (unsigned)run->cfg.train.accelerators_per_rank;
	char split[64] = "";
	if (loaders > 1 && fewest >= 2)
		snprintf(split, sizeof(split), ", the rest split over %u loaders", loaders);
	run->read_threads = cpus_auto_threads(fewest, loaders);
	snprintf(run->read_threads_why, sizeof(run->read_threads_why),
		 "auto: %.3g CPU%s for this rank%s, %s%s", fewest, fewest == 1 ? "" : "s",
		 fewest < cpus ? " (the fewest of any rank)" : "",
		 fewest < 2 ? "shared by the reader and the trainer" : "one kept for the trainer",
		 split);
	return 0;
}

int cpus_binding(struct run *run, unsigned threads, struct cpu_binding *b, json_t **json)
{
	int rc;

	memset(b, 0, sizeof(*b));
	rc = rank_cpus(run, &b->lim, &b->cpus, &b->sharing);
	if (rc < 0)
		return rc;
	b->threads = threads;
	b->readers_share = b->cpus < (double)threads;
	*json = binding_json(run, b);
	return 0;
}
