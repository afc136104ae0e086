/* The run folder of every workload: summary.json, config.ini, report.md, the plots and the
 * workload's own files, written into a hidden temporary folder that is synced and renamed into
 * place, so an interrupted run never leaves a partial result. The members every summary.json
 * starts with. A workload's own figures live beside it (workloads/train_results.c, ...).
 */
#ifndef FEEDBENCH_RESULTS_H
#define FEEDBENCH_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

struct run;

struct results_ctx {
	char start_iso[32];
	char end_iso[32];
	char run_id[64];
	double gen_s; /* generation time (0 when reused) */
	bool plots;   /* render the plots (gnuplot) into the folder before it is renamed */
	bool unique;  /* final_dir may become final_dir-2, -3 ... when taken (not a sweep point) */
	/* A signal stopped the run after finished epochs: summary.json says "interrupted": true
	 * and the folder is <final_dir>.unfinished, never the final name. */
	bool interrupted;
};

/* Physical memory of this node in bytes (0 when unknown). */
uint64_t results_host_memory(void);

/* Collective, after the repetitions: each rank's start-up (from run->started_ns to its first
 * timed phase, or to reps0, the first repetition's start, when the workload marked none) and
 * MPI_Init's time, the slowest rank's into run->startup_s and run->mpi_init_s on rank 0. */
void results_timing_reduce(struct run *run, uint64_t reps0);
/* Collective: this rank's time since t0 (monotonic ns) spent reducing its figures, the
 * slowest rank's into run->reduce_s on rank 0 (summary.json timing.reduce_seconds). */
void results_reduce_time(struct run *run, uint64_t t0);

/* A text file of a run folder: name and NUL-terminated text (NULL: out of memory). */
struct results_file {
	const char *name; /* "table.md", "ior.csv" */
	const char *text;
};

/* The members every summary.json starts with: schema, version, workload name and type, run id,
 * start and end, host, git commit, ranks and nodes, the effective config and its hashes. */
void results_summary_head(struct run *run, const struct results_ctx *ctx, json_t *summary);
/* "storage": back-end, file system, mount, direct, page_cache and what the back-end and
 * striping added (run->info_storage). */
json_t *results_storage_json(struct run *run);
/* Collective: rank 0 writes the run folder final_dir like train's (all or nothing):
 * summary.json (its "warnings" set from every rank's), config.ini, the files given, report.md;
 * prints table.md unless quiet. Returns the agreed code. */
int results_write_folder(struct run *run, json_t *summary, const struct results_ctx *ctx,
			 const char *final_dir, const struct results_file *files, int nfiles,
			 bool quiet);

/* Collective: the warnings other ranks raised join rank 0's run->warnings, each once, prefixed
 * with the rank; rank 0 prints the new ones. */
void results_gather_warnings(struct run *run);
/* Rank 0: writes the run folder final_dir (all or nothing) from summary, config.ini and what
 * fill(tmp, arg) writes into the temporary folder tmp; run->results_dir gets the name taken.
 * Prints table.md unless quiet. 0 or the failure, reported through run_fail. */
int results_folder_write(struct run *run, json_t *summary, const struct results_ctx *ctx,
			 const char *final_dir, int (*fill)(const char *tmp, void *arg), void *arg,
			 bool quiet);
/* Closes an open_memstream (which only then publishes its buffer), writes it as dir/name (a
 * file of the temporary folder, synced with it later) and frees the buffer. 0 or -errno. */
int results_write_stream(const char *dir, const char *name, char **buf, FILE *mem);

#endif
