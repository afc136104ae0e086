/* Workload plug-ins: what a run does between reading its config and writing its run folder.
 *
 * One file per workload (workloads/<name>.c, or <name>_workload.c where <name>.c holds the
 * engine) defining `const struct workload_ops <name>_workload`, plus one row in
 * FEEDBENCH_WORKLOADS (workloads/registry.c). The row also puts the name into the choices of
 * `[workload] type`, so adding a workload touches its own file and the registry, nothing else
 * (docs/architecture.md).
 *
 * The runner (bench/runner.c) calls a workload only through these hooks, in this order, every
 * hook collective over run->comm and returning the agreed code (agree.h):
 *
 *   check (every rank, from cfg_validate, no I/O) -> prepare -> [feedbench generate stops here]
 *   -> run x [output] repetitions -> write -> finish (always, also after a failure)
 *
 * Before prepare the runner has chosen the storage back-end (run->storage), the format
 * (run->format), the accelerator when caps has WORKLOAD_CAP_COMPUTE (run->compute_ops), and
 * inspected the file system of [dataset] data_dir (run->fs): every workload keeps its files
 * under data_dir. A workload does its I/O through the io_* wrappers of
 * bench/storage/storage.h, so bytes, calls and latencies are counted the same way for all.
 */
#ifndef FEEDBENCH_WORKLOAD_H
#define FEEDBENCH_WORKLOAD_H

#include <stdbool.h>
#include <stdio.h>

struct config;
struct fb_errbuf;
struct results_ctx;
struct run;
struct workload_outputs;

#define WORKLOAD_OPS_VERSION 1

#define WORKLOAD_CAP_COMPUTE 0x1 /* emulates accelerators: the runner chooses run->compute_ops */
#define WORKLOAD_CAP_DATASET 0x2 /* reads a dataset ([dataset] keys shape its files) */

struct workload_ops {
	unsigned version; /* WORKLOAD_OPS_VERSION */
	const char *name; /* "train": the value of [workload] type */
	const char *help; /* one line for `feedbench list` */
	unsigned caps;	  /* WORKLOAD_CAP_* */

	/* Checks the workload's own keys and their combinations for nranks ranks. Runs on every
	 * rank with the same config, before any file is touched: no I/O, no MPI. Errors name the
	 * config source and return -FB_ECONFIG through fb_fail(err, ...). Optional. */
	int (*check)(const struct config *cfg, int nranks, struct fb_errbuf *err);

	/* Once per run, before the first repetition: lay out, generate or check the files the
	 * workload needs. ctx->gen_s receives the time spent creating them (0 when reused).
	 * `feedbench generate` stops after it. Optional. */
	int (*prepare)(struct run *run, struct results_ctx *ctx);

	/* One repetition. *rep receives the workload's result of this rank (allocated by the
	 * workload, released with free_rep, also after a failure). */
	int (*run)(struct run *run, int repetition, void **rep);

	/* Reduces the repetitions of every rank and writes the run folder final_dir (rank 0,
	 * atomically, through bench/results.h), printing its table unless quiet. */
	int (*write)(struct run *run, void *const *reps, int nreps, const struct results_ctx *ctx,
		     const char *final_dir, bool quiet);

	void (*free_rep)(void *rep);

	/* A repetition that a signal stopped (run returned -FB_EINTR): the epochs it finished
	 * and keeps for write (the same on every rank), 0 when none. Optional: without it an
	 * interrupted repetition keeps nothing. */
	int (*kept_epochs)(const void *rep);

	/* Last, on every rank, whatever happened before. rc: 0 after write; 1 when the run
	 * stopped after prepare on purpose (feedbench generate); negative after a failure (also
	 * one before prepare). Removes what the workload created when the config asks for it
	 * (rc = 0) and releases what prepare built. Optional. */
	void (*finish)(struct run *run, int rc);

	/* What table.md, report.md and the CSV files show, as data (bench/outputs.h): write
	 * builds summary.json and ends with outputs_write_folder; report.md, at the run's end and
	 * from `feedbench plot`, is rendered from summary.json with it. NULL: training's own. */
	const struct workload_outputs *outputs;

	/* `feedbench run --dry-run` (rank 0, after the checks, no I/O, no MPI): prints what a run
	 * of the config would move and allocate, per rank and per host of ranks_per_host ranks.
	 * nranks: the ranks launched (a workload with a fixed geometry plans all of it).
	 * Optional: without it the dry run says the workload has no plan. */
	int (*plan)(const struct config *cfg, int nranks, int ranks_per_host, FILE *out);
};

/* The registry (workloads/registry.c): NULL-terminated, in the order of workload_choices. */
extern const struct workload_ops *const workload_registry[];
/* Names for the choices of [workload] type, NULL-terminated, generated from the registry. */
extern const char *const workload_choices[];

const struct workload_ops *workload_find(const char *name);
/* The workload a parsed config asks for (NULL when the index is out of range). */
const struct workload_ops *workload_of(const struct config *cfg);

#endif
