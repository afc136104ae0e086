/* Reduction of the per-rank figures and the run folder: summary.json, epochs.csv, ranks.csv,
 * latency.csv, timeline.csv, config.ini, table.md. Written into a hidden temporary folder and
 * renamed into place, so an interrupted run never leaves a partial result.
 */
#ifndef FEEDBENCH_RESULTS_H
#define FEEDBENCH_RESULTS_H

#include <stdbool.h>
#include <stddef.h>

#include "../workloads/workloads.h"

struct run;

struct results_ctx {
	char start_iso[32];
	char end_iso[32];
	char run_id[64];
	double gen_s; /* generation time (0 when reused) */
	bool plots;   /* render the plots (gnuplot) into the folder before it is renamed */
	bool unique;  /* final_dir may become final_dir-2, -3 ... when taken (not a sweep point) */
};

/* Collective: reduces `nreps` repetitions to rank 0, which writes the run folder `final_dir`
 * (all or nothing: complete under its final name, or what was measured under
 * "<final_dir>.unfinished" and an error) and prints the table unless quiet. On rank 0,
 * run->results_dir gets the name the folder took. Returns the agreed code. */
/* Physical memory of this node in bytes (0 when unknown). */
uint64_t results_host_memory(void);
int results_write(struct run *run, struct train_result *reps, int nreps,
		  const struct results_ctx *ctx, const char *final_dir, bool quiet);

/* For workloads other than train (workloads/workload.h, write hook). */
#include <jansson.h>

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

#endif
