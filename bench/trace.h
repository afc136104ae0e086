/* Per-operation traces ([output] trace = true; docs/trace.md).
 *
 * Every open, read, write, fsync and close the io_* wrappers make, every queued (io_uring)
 * read, and the training loop's compute steps and data waits become one Chrome trace event
 * ("ph":"X", ts and dur in microseconds) on a line of their own, the JSON lines dftracer
 * writes. Each thread fills a buffer of its own (TRACE_BUF bytes), written to its rank's
 * staging file when full, so memory stays bounded whatever the run's length. When the
 * repetitions end, trace_finish() (collective) sends every rank's file to rank 0, which writes
 * them one after another into one file; results.c puts it into the run folder as trace.pfw.
 */
#ifndef FEEDBENCH_TRACE_H
#define FEEDBENCH_TRACE_H

#include <stdint.h>

struct run;
struct trace;

#define TRACE_FILE "trace.pfw" /* its name in the run folder */

/* Collective, after the run's output folder was checked: with [output] trace on, opens this
 * rank's staging file in dir (the folder run folders go to) and sets run->trace; else does
 * nothing. Returns the agreed code. */
int trace_open(struct run *run, const char *dir);
/* One finished operation of this thread: name ("read"), category ("POSIX"), start and end
 * (timer_now_ns), the file (NULL: none), offset and bytes moved (args). Safe from any thread;
 * does nothing once trace_finish() ran. */
void trace_io(struct trace *t, const char *name, const char *cat, uint64_t t0, uint64_t t1,
	      const char *path, uint64_t off, uint64_t size);
/* One step of the training loop: "compute" or "data_wait", with its step number. */
void trace_step(struct trace *t, const char *name, uint64_t t0, uint64_t t1, uint64_t step);
/* Category of the run's storage calls: "POSIX" for posix (dftracer's), else the back-end's
 * name ("mpiio", "uring", "s3"); queued reads are "io_uring". */
const char *trace_cat(const struct trace *t);
/* Collective: writes every thread's buffer, then rank 0 gathers every rank's file into one
 * (bounded chunks, rank order). Returns the agreed code; a failure names the file. */
int trace_finish(struct run *run);
/* Rank 0, while the run folder is written (results.c): moves the merged trace into folder
 * tmp as TRACE_FILE. 0 when there is none. */
int trace_place(struct run *run, const char *tmp);
/* Removes what is left of the staging files and frees the trace (every rank, always). */
void trace_close(struct run *run);

#endif
