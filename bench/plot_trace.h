/* The timeline plot's rows from a run's trace.pfw (bench/plot_trace.c). */
#ifndef FEEDBENCH_PLOT_TRACE_H
#define FEEDBENCH_PLOT_TRACE_H

/* Writes csv (timeline.csv's columns: rank,thread,kind,start_seconds,end_seconds) from the
 * read, compute and data_wait events of trace, at most maxrows rows; the trainer (the thread
 * with compute events) is thread 0 of its rank, the others follow in order of appearance.
 * 1: written; 0: no trace or no such event (csv not left behind); negative errno. */
int plot_trace_timeline(const char *trace, const char *csv, int maxrows);

#endif
