/* feedbench: can this storage keep the GPUs fed? */
#include <mpi.h>
#include <stdio.h>
#include <sys/stat.h>

#include "cli.h"
#include "stop.h"
#include "errors.h"
#include "timer.h"

int main(int argc, char **argv)
{
	/* The run's start-up counts from here (summary.json "timing", docs/results.md). */
	uint64_t started = timer_now_ns(), init0;
	struct cli cli;
	int provided, status, parsed;

	/* Nothing feedbench creates (results, datasets, checkpoints, the pictures gnuplot draws)
	 * is writable by group or others, whatever the umask it was started with. */
	umask(umask(0) | 022);
	parsed = cli_parse(&cli, argc, argv);

	/* Under a launcher every rank takes part in MPI, whatever its command: a rank that
	 * never called MPI_Init would leave the others waiting in it. */
	if (!cli_launched() && (parsed < 0 || !cli_needs_mpi(&cli)))
		return parsed < 0 ? fb_exit_status(-FB_EUSAGE) : cli_dispatch(&cli);

	/* Reader threads may call MPI-IO concurrently (independent reads). */
	init0 = timer_now_ns();
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	cli.opts.started_ns = started;
	cli.opts.mpi_init_ns = timer_now_ns() - init0;
	if (provided < MPI_THREAD_MULTIPLE) {
		fprintf(stderr, "feedbench: error: the MPI library does not provide "
				"MPI_THREAD_MULTIPLE\n");
		MPI_Finalize();
		return 1;
	}
	/* Before any other collective: every rank must run the same command. */
	status = cli_check_same_command(argc, argv);
	if (status == 0 && parsed < 0)
		status = fb_exit_status(-FB_EUSAGE);
	if (status == 0) {
		stop_install_signals();
		status = cli_exit_status(cli_dispatch(&cli));
	}
	MPI_Finalize();
	return status;
}
