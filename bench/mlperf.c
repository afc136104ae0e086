/* `feedbench mlperf SUBCOMMAND`: prepare, run and check an MLPerf Storage v3.0 submission
 * (docs/mlperf.md). */
#include "mlperf.h"

#include <string.h>

static const char mlperf_help[] =
    "usage: feedbench mlperf datasize CONFIG --accelerators-per-host N [--hosts H]\n"
    "                        [--client-memory SIZE] [--set section.key=value]...\n"
    "       mpiexec -n N feedbench mlperf run CONFIG [--set ...] [--output DIR] [--runs 5]\n"
    "                        [--seed BASE] [--split] [--quiet]\n"
    "       feedbench mlperf check FOLDER...\n"
    "\n"
    "MLPerf Storage v3.0 training and checkpointing submissions (docs/mlperf.md).\n"
    "  datasize  the files the dataset needs (rule 3.1.2: >= 500 steps of batch_size on\n"
    "            every accelerator and >= 5 x the clients' RAM; --client-memory is per host,\n"
    "            default this host's RAM) and the config line that generates them\n"
    "  run       a warm-up and 5 runs (--runs), shuffle seeds BASE, BASE+1, ... (default 1),\n"
    "            the page cache of every node dropped before each (the outcome per node\n"
    "            recorded); one folder <output>/<name>-mlperf-<stamp>/ with warmup/,\n"
    "            run-1/ ..., mlperf_run.json, results.json, results.csv and system.yaml;\n"
    "            a checkpoint config: one invocation run/ (its writes, then its reads), or\n"
    "            with --split write/ then read/, and checkpoints.csv\n"
    "  check     the v3.0 rules over a submission folder, or over run folders given in\n"
    "            order (the first is the warm-up); each finding with its rule number and\n"
    "            the verdict CLOSED, OPEN or INVALID with every reason\n"
    "Exit status: 0 success (check: CLOSED), 1 a run failed (check: OPEN or INVALID),\n"
    "2 usage or config error.\n";

bool mlperf_needs_mpi(int argc, char **argv)
{
	return argc > 1 && strcmp(argv[1], "run") == 0;
}

int mlperf_main(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : "";

	if (strcmp(sub, "datasize") == 0)
		return mlperf_datasize_main(argc, argv);
	if (strcmp(sub, "run") == 0)
		return mlperf_run_main(argc, argv);
	if (strcmp(sub, "check") == 0)
		return mlperf_check_main(argc, argv);
	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
		fputs(mlperf_help, stdout);
		return 0;
	}
	fprintf(stderr,
		"feedbench: mlperf: %s%s%s (datasize, run or check; see feedbench mlperf "
		"--help)\n",
		sub[0] ? "unknown subcommand '" : "a subcommand is needed", sub, sub[0] ? "'" : "");
	return 2;
}
