/* The bare MPI program of tests/perf/limits.sh: MPI_Init, a barrier, MPI_Finalize. feedbench's
 * start-up plus teardown is measured against this, launched the same way. */
#include <mpi.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
