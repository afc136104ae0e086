/* report.md and plots for run and sweep folders (bench/report.c, bench/plot.c). */
#ifndef FEEDBENCH_REPORT_H
#define FEEDBENCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>

/* Writes report.md into a finished run folder from its summary.json (rank 0 only).
 * Returns 0 or a negative errno; a failure is a warning, the results stand. */
int report_write_run(const char *run_dir);

/* Renders the plots of a run or sweep folder with gnuplot (PNG + SVG). A missing gnuplot is
 * not an error: returns 1 and fills why. */
int plot_render(const char *dir, char *why, size_t len);

/* `feedbench plot DIR` and `feedbench sweep CONFIG [...]` (bench/sweep.c). */
int plot_main(int argc, char **argv);
int sweep_main(int argc, char **argv, void *mpi_comm /* MPI_Comm * */);

#endif
