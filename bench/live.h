/* Live statistics: every [output] live_interval, each rank's counters are gathered without
 * blocking (MPI_Iallgather on a communicator of their own, posted and tested by a thread of
 * their own, so no reader and no trainer ever waits for a slow peer); rank 0 prints one line
 * to stderr and keeps a row for live.csv and a row per rank for ranks.csv. Every rank gets the
 * same gathered figures, so every rank reaches the same decision to stop a phase early
 * ([train] time_limit, steady_state) at the same interval, without another message.
 * See docs/results.md ("live.csv") and docs/performance.md (its cost).
 */
#ifndef FEEDBENCH_LIVE_H
#define FEEDBENCH_LIVE_H

#include <stdbool.h>
#include <stdio.h>

struct run;

/* One rank's counters since the phase began: whatever it moved, read by the live thread
 * (the workload's sampler reads atomics; it must not block). */
struct live_sample {
	double bytes;	  /* bytes read or written */
	double ops;	  /* read or write calls */
	double steps;	  /* training steps (0 for a workload without steps) */
	double compute_s; /* emulated compute of those steps */
	double step_s;	  /* their wall time (AU = compute_s / step_s) */
	double done;	  /* fraction of this rank's phase done, 0 .. 1 */
};

typedef void (*live_sampler)(void *arg, struct live_sample *s);

/* Why a phase ended early; LIVE_RUN: it did not. */
enum live_stop { LIVE_RUN, LIVE_TIME_LIMIT, LIVE_STEADY_STATE };

/* Collective. Begins one phase (an epoch) of a repetition: phase counts from 0 of nphases (the
 * ETA). The first phase starts the live thread, which stays for the repetition's later phases
 * until live_close. time_limit: seconds since the first phase began after which every rank
 * stops (0: none); steady: stop once the last steady_k intervals' MiB/s are each within
 * steady_pct % of their mean (steady_k 0: never). Nothing when [output] live_interval = 0
 * and neither stop is asked for. Returns 0 or a negative code (recorded with run_fail). */
int live_begin(struct run *run, const char *what, int phase, int nphases, live_sampler fn,
	       void *arg);
/* Collective: the phase ended on every rank. Takes the phase back from the thread, completes
 * the gathers every rank has not yet made and records the phase's last row (its totals are
 * the phase's). */
void live_end(struct run *run);
/* The repetition's training ended (after its last live_end): joins the thread. Not
 * collective; live_free does it too. */
void live_close(struct run *run);
/* Why every rank is stopping the phase (cheap, any thread): LIVE_RUN while it goes on. */
enum live_stop live_stopping(const struct run *run);
/* After the run: why it ended early and after how many seconds (LIVE_RUN: it did not). */
enum live_stop live_stopped(const struct run *run, double *after_s);
const char *live_stop_name(enum live_stop why);
/* Rank 0: writes live.csv (and the per-interval rows of ranks.csv's columns into out_ranks,
 * when given) into the folder dir. 0 when there is nothing to write. */
int live_write(const struct run *run, const char *dir);
/* The slowest rank of the run: the one furthest behind at the most intervals, and its share
 * of the lost time (seconds behind the fastest rank, summed over intervals, over the sum of
 * every rank's). -1 when no interval was gathered. Rank 0. */
int live_slowest(const struct run *run, double *share);
/* This rank's live thread's own CPU time over the run (CLOCK_THREAD_CPUTIME_ID, each
 * repetition's thread from its start to its join), and in proc_s the whole process's user +
 * system time (getrusage) over the same spans, which includes it; both 0 when it never ran. */
double live_thread_cpu_s(const struct run *run, double *proc_s);
void live_free(struct run *run);

#endif
