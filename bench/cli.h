/* Command line: parsing and dispatch of the subcommands. */
#ifndef FEEDBENCH_CLI_H
#define FEEDBENCH_CLI_H

#include <stdbool.h>

#include "runner.h"

enum cli_command {
	CLI_NONE,
	CLI_RUN,
	CLI_GENERATE,
	CLI_VALIDATE,
	CLI_KEYS,
	CLI_LIST,
	CLI_SWEEP,
	CLI_SEARCH,
	CLI_PLOT,
	CLI_COMPARE,
	CLI_BASELINE,
	CLI_HISTORY,
	CLI_IMPORT_DLIO,
	CLI_IMPORT_TRACE,
	CLI_MLPERF,
	CLI_HELP,
	CLI_VERSION
};

struct cli {
	enum cli_command cmd;
	struct runner_opts opts;
	const char *help; /* CLI_HELP: the command's help text (NULL: the list of commands) */
	int argc;	  /* the subcommand's own arguments (sweep, plot) */
	char **argv;
};

/* Parses argv. 0, or -FB_EUSAGE after printing the problem and a hint. */
int cli_parse(struct cli *c, int argc, char **argv);
/* True when the command runs under MPI (run, generate, validate, sweep). */
bool cli_needs_mpi(const struct cli *c);
/* feedbench search (bench/search.c): collective over MPI_COMM_WORLD; the exit status. */
int search_main(const struct cli *c);
/* True when a launcher (mpiexec, srun) started this process as one of several ranks. */
bool cli_launched(void);
/* Collective over MPI_COMM_WORLD, before any other: 0 when every rank was started with the
 * same feedbench version and arguments; otherwise rank 0 prints one message naming the first
 * rank that differs and its command, and every rank gets exit status 2. Ranks started with
 * different configs, --set values or commands (an MPMD launch) would measure a mix of configs
 * or deadlock in the first collective that differs. */
int cli_check_same_command(int argc, char **argv);
/* Runs the command; returns the process exit status (0, 1, 2). */
int cli_dispatch(struct cli *c);
/* `feedbench import-dlio FILE.yaml [-o OUT.ini]` (import_dlio.c); argv[0] is the command. */
int import_dlio_main(int argc, char **argv);
/* `feedbench import-trace TRACE... [-o OUT.ini]` (import_trace.c). */
int import_trace_main(int argc, char **argv);
/* The exit status of an MPI command: status, or 128 + the signal when one came (130 SIGINT,
 * 143 SIGTERM), even when the command had finished. MPI must be initialised. */
int cli_exit_status(int status);

#endif
