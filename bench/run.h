/* The state of one run, handed down to every module and plug-in. The only globals in
 * feedbench are constant tables; everything else lives here.
 */
#ifndef FEEDBENCH_RUN_H
#define FEEDBENCH_RUN_H

#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "config.h"
#include "errors.h"
#include "stats.h"
#include "dsfile.h"

/* The plug-ins a run uses, by pointer: a file that calls one includes its header
 * (bench/storage/storage.h, formats/format.h, bench/compute/compute.h, workloads/workload.h). */
struct fs_sys; /* bench/storage/fs_sys.h */
struct workload_ops;
struct storage_ops;
struct format_ops;
struct compute_ops;
struct compute;
struct live;

/* Who can set a layout on the data folder's file system (bench/storage/stripe*.c). */
enum fs_striper { FS_STRIPER_NONE, FS_STRIPER_LUSTRE, FS_STRIPER_CEPH };

/* File system facts about the data folder (bench/storage/fsdetect.c). */
struct fs_info {
	char type[32];	  /* "ext4", "lustre", ... */
	char mount[1024]; /* mount point */
	char device[256]; /* source in /proc/self/mounts */
	uint64_t magic;	  /* statfs f_type */
	uint64_t block_size;
	uint64_t free_bytes;
	uint64_t total_bytes;
	bool can_stripe; /* lustre or cephfs */
	enum fs_striper striper;
	char client[16];   /* cephfs: "kernel" or "ceph-fuse"; "" otherwise */
	char detected[64]; /* cephfs: what told ("statfs magic", "mount table", "ceph.* xattrs") */
};

struct run {
	struct config cfg;
	MPI_Comm comm;	      /* all ranks of the run */
	MPI_Comm notify_comm; /* duplicate of comm for failure notices (agree.c) */
	int notified;	      /* this rank has told the others it failed */
	int notify_buf;	      /* payload of the failure notices */
	int heartbeat_buf;    /* payload of the watchdog heartbeats */
	pthread_t watchdog;   /* agree.c */
	int watchdog_on;
	int watchdog_wake; /* eventfd: watchdog_stop() wakes the sleeping thread at once */
	double watchdog_s;
	int rank, nranks;
	MPI_Comm node_comm; /* ranks on this node */
	int local_rank, local_size, nnodes;
	int node_leader; /* world rank of this node's local rank 0 */
	char hostname[256];
	char (*rank_hosts)[64]; /* host name of every rank (the watchdog names a lost host) */
	int *rank_leaders;	/* node_leader of every rank: which ranks share a node */

	const struct workload_ops *workload; /* [workload] type (workloads/workload.h) */
	const struct storage_ops *storage;
	const struct format_ops *format;
	const struct compute_ops *compute_ops;
	struct compute *compute;
	char accel_why[256];	    /* which accelerator and why */
	unsigned read_threads;	    /* reader threads per rank, read_threads = auto resolved */
	char read_threads_why[192]; /* how that count was chosen (cpus_read_threads) */

	struct dataset ds;
	struct dataset eval_ds; /* [dataset] num_files_eval: the evaluation set (train workload) */
	struct fs_info fs;
	bool dataset_regenerated;
	const struct fs_sys *fs_sys; /* calls behind fs detection and striping; NULL = real */
	void *storage_priv;	     /* back-end state per run (faulty's counters); free() at end */
	void *workload_priv;	     /* the workload's state between prepare and finish */
	struct live *live;	     /* live statistics and early stops (bench/live.h) */

	struct fb_errbuf err;	     /* this rank's first error */
	volatile sig_atomic_t *stop; /* set by SIGINT/SIGTERM */

	/* What plug-ins add to summary.json (jansson objects, owned by the run). */
	json_t *info_storage; /* merged into "storage" */
	json_t *info_format;  /* "format" */
	json_t *info_accel;   /* merged into "accelerator" */
	json_t *warnings;     /* array of strings; rank 0's list is printed and written */

	uint64_t progress_ns;	/* last time the main thread made progress (watchdog) */
	uint64_t stopped_ns;	/* time this rank was seen stopped (SIGSTOP), by the watchdog */
	char results_dir[4096]; /* rank 0: the run folder's name once written (results.c) */
	int verbose;
	int rules_broken; /* MLPerf Storage rules the run broke (results.c; every rank) */
	/* summary.json "timing" (results.c), monotonic clock: where this rank's start-up began
	 * (main's entry, or runner_run's for a run that is not the process's own), MPI_Init's
	 * time (0: not measured here), the start of the workload's first timed phase (0: none
	 * marked, the first repetition's start counts); rank 0: the slowest rank's figures. */
	uint64_t started_ns, mpi_init_ns, first_phase_ns;
	bool started_at_process;
	double startup_s, mpi_init_s, reduce_s; /* reduce_s < 0: not measured */
	struct trace
	    *trace; /* [output] trace: this rank's per-operation trace (trace.h), or NULL */
};

/* Adds a warning once (same text twice is kept once). Rank 0 prints it when the run ends. */
void run_warn(struct run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The workload's first timed phase starts on this rank at t0 (monotonic ns): the end of
 * the run's start-up in summary.json "timing". Only the first call counts; main thread. */
void run_phase_began(struct run *run, uint64_t t0);

/* Records an error with context on this rank; returns code. */
#define run_fail(run, code, ...) fb_fail(&(run)->err, (code), __VA_ARGS__)

#endif
