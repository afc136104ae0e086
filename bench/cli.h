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
	CLI_PLOT,
	CLI_COMPARE,
	CLI_BASELINE,
	CLI_HISTORY,
	CLI_IMPORT_DLIO,
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
/* Runs the command; returns the process exit status (0, 1, 2). */
int cli_dispatch(struct cli *c);
/* `feedbench import-dlio FILE.yaml [-o OUT.ini]` (import_dlio.c); argv[0] is the command. */
int import_dlio_main(int argc, char **argv);
/* SIGINT/SIGTERM set feedbench_stop (to the signal); loops check it and stop cleanly. */
void cli_install_signals(void);
/* The exit status of an MPI command: status, or 128 + the signal when one came (130 SIGINT,
 * 143 SIGTERM), even when the command had finished. MPI must be initialised. */
int cli_exit_status(int status);

#endif
