/* feedbench: can this storage keep the GPUs fed? */
#include <mpi.h>
#include <stdio.h>

#include "cli.h"
#include "errors.h"

int main(int argc, char **argv)
{
	struct cli cli;
	int provided, status;

	if (cli_parse(&cli, argc, argv) < 0)
		return fb_exit_status(-FB_EUSAGE);
	if (!cli_needs_mpi(&cli))
		return cli_dispatch(&cli);

	/* Reader threads may call MPI-IO concurrently (independent reads). */
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	if (provided < MPI_THREAD_MULTIPLE) {
		fprintf(stderr, "feedbench: error: the MPI library does not provide "
				"MPI_THREAD_MULTIPLE\n");
		MPI_Finalize();
		return 1;
	}
	cli_install_signals();
	status = cli_exit_status(cli_dispatch(&cli));
	MPI_Finalize();
	return status;
}
