/* The CPUs a rank may use: its affinity mask (mpirun --bind-to, --map-by ...:PE=n, Slurm's
 * --cpus-per-task) and its cgroup's CPU bandwidth limit (cgroup v2 cpu.max, v1 CFS quota), and
 * how a rank's threads sit on them. Spinning at hand-offs, warnings and summary.json's
 * "binding" are decided from these, never from the machine's CPU count.
 */
#ifndef FEEDBENCH_CPUS_H
#define FEEDBENCH_CPUS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct run;

/* What this process may run on. */
struct cpu_limits {
	int online;	      /* CPUs online on the node */
	int affinity;	      /* CPUs in this process's affinity mask */
	char list[128];	      /* that mask as a CPU list ("0-3,8"; "..." when longer) */
	double quota;	      /* cgroup CPU bandwidth limit in CPUs; 0 when there is none */
	char quota_file[256]; /* the file the limit came from; "" when none */
};

/* How one rank's threads sit on its CPUs (collective over run->node_comm). */
struct cpu_binding {
	struct cpu_limits lim;
	int sharing;	    /* ranks of this node whose affinity masks overlap this rank's */
	double cpus;	    /* CPUs this rank can count on: its mask shared with overlapping
			       ranks, capped by the cgroup limit shared by the ranks in it */
	unsigned threads;   /* threads that run this rank's reads and steps (readers + trainer) */
	bool readers_share; /* fewer CPUs than threads: readers and the trainer share a core */
};

/* Reads this process's affinity and cgroup limit. 0 or a negative errno (affinity unknown). */
int cpus_detect(struct cpu_limits *c);

/* Collective over run->comm: fills b for `threads` busy threads per rank (reader threads + the
 * trainer), and on rank 0 returns in *json (else NULL) summary.json's "binding": rank 0's
 * figures and every rank's CPU list. */
int cpus_binding(struct run *run, unsigned threads, struct cpu_binding *b, json_t **json);

/* Collective over run->comm: sets run->read_threads and run->read_threads_why from
 * read_threads, or for read_threads = auto from the fewest CPUs any rank may use (as in
 * cpu_binding.cpus): cpus_auto_threads() of them, the same count on every rank. */
int cpus_read_threads(struct run *run);
/* read_threads = auto on a rank with `cpus` CPUs and `loaders` loaders (accelerators_per_rank):
 * one CPU kept for the trainer, the rest split over the loaders; at least 1 per loader (with 1
 * CPU or less the reader shares the trainer's). */
unsigned cpus_auto_threads(double cpus, unsigned loaders);

/* ---- parsers, exposed for the unit tests ---- */

/* cgroup v2 cpu.max ("max 100000" or "150000 100000"): CPUs, 0 for no limit, -1 when bad. */
double cpus_parse_cpu_max(const char *text);
/* cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us: CPUs, 0 for no limit (-1), -1 when bad. */
double cpus_parse_cfs(const char *quota, const char *period);
/* The tightest CPU limit on the way from this process's cgroup to the root, read from files
 * under `root` ("" for the real /): cgroup_text is /proc/self/cgroup, mountinfo_text
 * /proc/self/mountinfo. 0 when there is none; file receives the file it came from. */
double cpus_cgroup_quota(const char *cgroup_text, const char *mountinfo_text, const char *root,
			 char *file, size_t len);
/* A CPU list ("0-3,8,10-11") of the n flags in set; "..." ends one that does not fit. */
void cpus_format_list(const unsigned char *set, int n, char *buf, size_t len);

#endif
