/* report.md and plots for run and sweep folders (bench/report.c, bench/plot.c). */
#ifndef FEEDBENCH_REPORT_H
#define FEEDBENCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Writes report.md into a finished run folder from its summary.json (rank 0 only).
 * Returns 0 or a negative errno; a failure is a warning, the results stand. */
int report_write_run(const char *run_dir);
/* report.md of a run folder, or of a sweep folder and each of its points that ran. Called after
 * plot_render (which only draws): the reports embed the pictures that exist. 0, or a negative
 * code with the reason (file named) in why. */
int report_write(const char *dir, char *why, size_t len);

/* Writes text (len bytes) to dir/name atomically. NULL text means the writer ran out of
 * memory. 0 or a negative errno (recorded in err when given). */
struct fb_errbuf;
int report_save_file(const char *dir, const char *name, char *text, size_t len,
		     struct fb_errbuf *err);

/* Renders the plots of a run or sweep folder (and its points) with gnuplot (PNG + SVG); draws
 * only: the caller writes report.md afterwards (report_write). A missing gnuplot is not an
 * error: returns 1 and fills why. */
int plot_render(const char *dir, char *why, size_t len);

/* Runs one gnuplot script of plot/ with vars ("name = 'value'; ..."). 0; 1 when gnuplot or
 * the scripts are missing (why says so); a negative code when gnuplot failed. */
int plot_script(const char *script, const char *vars, char *why, size_t len);
/* Writes "name = 'value'; " with value quoted as a gnuplot string. */
void plot_var(FILE *f, const char *name, const char *value);

/* `feedbench plot DIR` and `feedbench sweep CONFIG [...]` (bench/sweep.c). */
int plot_main(int argc, char **argv);
int sweep_main(int argc, char **argv, void *mpi_comm /* MPI_Comm * */);

#endif
