/* Run orchestration: one `feedbench run` (or one sweep point) from config text to run folder. */
#ifndef FEEDBENCH_RUNNER_H
#define FEEDBENCH_RUNNER_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"

#define RUNNER_MAX_SETS 64

struct runner_opts {
	const char *config_path;	   /* for messages and config.ini */
	const char *config_text;	   /* NULL: rank 0 reads config_path and broadcasts */
	const char *sets[RUNNER_MAX_SETS]; /* "section.key=value" overrides, applied in order */
	int nsets;
	const char
	    *output_dir;      /* --output: parent folder for the run folder (NULL: [output] dir) */
	const char *run_dir;  /* exact run folder to create (sweeps); overrides output_dir */
	bool generate_only;   /* `feedbench generate` */
	bool quiet;	      /* no table on stdout (sweeps print their own) */
	bool no_plots;	      /* sweeps plot once at the end */
	bool strict;	      /* --strict: MLPerf Storage rules are errors */
	bool say_accelerator; /* quiet runs too: say which accelerator and why (a sweep's first) */
	bool dry_run;	      /* run --dry-run: the checks and the workload's plan, no I/O */
	int ranks_per_host;   /* --ranks-per-host of the dry run's plan (0: 8) */
	/* The process's start (main's entry) and MPI_Init's time, monotonic ns: the run's
	 * start-up counts from there (0: from runner_run's entry, MPI_Init not counted). */
	uint64_t started_ns, mpi_init_ns;
};

/* Loads and validates the config on every rank (rank 0 reads, broadcasts, all parse).
 * Returns 0 or -FB_ECONFIG with the message in err (identical on every rank). */
int runner_load_config(struct config *cfg, const struct runner_opts *o, MPI_Comm comm,
		       struct fb_errbuf *err);

/* Runs one workload. Collective over comm. Returns 0 or a negative code; rank 0 has printed the
 * one error message. *summary_path (optional) receives the run folder on rank 0. */
int runner_run(const struct runner_opts *o, MPI_Comm comm, char *run_dir_out, size_t len);

#endif
