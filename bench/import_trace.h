/* import-trace's state, shared by its files: import_trace_read.c reads traces into it,
 * import_trace.c derives the workload and writes the config (docs/trace.md). */
#ifndef FEEDBENCH_IMPORT_TRACE_H
#define FEEDBENCH_IMPORT_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds on the input (docs/trace.md): a line, the files and threads a trace may name. */
#define IT_MAX_LINE    65536
#define IT_MAX_FILES   (1 << 22)
#define IT_MAX_THREADS 65536
#define IT_MAX_RANKS   4096
#define IT_MAX_SIZES   64
#define IT_MAX_INPUTS  4096
#define IT_MAX_PROCS   1024 /* processes with CPU counters */
#define IT_NPY_HEADER  128  /* numpy's header of a 1-D array: magic, version, dict, padding */
/* Per-sample time less I/O, in bins 1 % wide from 1 µs to 100 s (ln(1e8) / ln(1.01)). */
#define IT_GAP_BINS 1852

struct it_file {
	char *path;
	uint64_t hash;
	uint64_t opens, reads, head_reads; /* head_reads: reads at offset 0 */
	uint64_t bytes, end;		   /* bytes read; the furthest byte read */
	uint64_t cursor;		   /* where a read() without offset starts */
};

struct it_thread {
	int64_t pid, tid;
	uint64_t reads;
	uint64_t pairs, back; /* consecutive reads; those that went back in file or name order */
	int last;	      /* the file of its last read (-1: none) */
	uint64_t last_off;
	double io_us, io_mark;	    /* I/O time so far; at its last per-sample event */
	double io_cpu_us, cpu_mark; /* the I/O events' thread CPU time (tdur) so far; at it */
	uint64_t io_untimed, untimed_mark; /* I/O events without tdur so far; at it */
};

struct it_size {
	uint64_t size, count;
};

/* A process's running totals of what its events timed, in thread CPU time (tdur, µs). */
struct it_tally {
	uint64_t samples, steps; /* per-sample and compute events */
	uint64_t untimed;	 /* I/O, per-sample or compute events without tdur */
	double io_cpu, sample_cpu, compute_cpu;
};

/* A process with CPU counters ("ph":"C" events with args.cpu_us: its CPU time so far, every
 * thread): its totals at its first and last counter, and the counter's values there. */
struct it_proc {
	int64_t pid;
	struct it_tally now, first, last;
	double cpu_first, cpu_last;
	uint64_t counters;
};

struct it_fh { /* dftracer's file hash -> name (an "FH" metadata event) */
	char *path;
	char hash[40];
};

struct it {
	struct it_file *files;
	int *slots;
	size_t nfiles, cap, nread;
	struct it_thread *threads;
	size_t nthreads;
	struct it_size sizes[IT_MAX_SIZES];
	int nsizes;
	uint64_t sizes_other;
	int64_t ranks[IT_MAX_RANKS]; /* pids with compute events */
	int nranks;
	struct it_fh *fh;
	size_t nfh, fhcap;
	struct it_proc procs[IT_MAX_PROCS]; /* every process that did I/O, samples or steps */
	int nprocs;
	uint64_t fetches, fetches_tdur; /* the trainer's waits for a batch ("fetch"), timed */
	double fetch_us, fetch_cpu_us;
	uint64_t reads, bytes, writes, write_bytes, computes, samples, events, skipped;
	uint64_t step0;	  /* compute events of step 0 (args.step): epochs begun, over all ranks */
	uint64_t unnamed; /* reads that named no file */
	double compute_sum, compute_sq;
	double sample_wall_us;		/* per-sample events: time less the I/O inside */
	double sample_tdur_us;		/* thread CPU time (tdur) less the I/O's, where timed */
	uint64_t samples_tdur;		/* per-sample events with tdur, and every I/O inside too */
	uint64_t gap_hist[IT_GAP_BINS]; /* per-sample time less I/O (the wall figure) */
	double t_first, t_last;		/* µs */
	int dxt_inputs, json_inputs;
	char err[1024]; /* the first bad input: file, line, what */
};

/* What the trace says, derived (it_derive). */
struct it_workload {
	char dir[4096];
	uint64_t files, file_min, file_max, file_mean;
	bool npy;
	uint64_t read_size, read_size_count, record, samples_per_file;
	uint64_t samples, samples_per_epoch, epochs, steps_per_epoch, batch;
	uint64_t ranks, threads, readers, pairs, back;
	bool shuffled, epochs_from_steps;
	double compute_s, compute_stdev_s, preprocess_s, wall_s;
	double preprocess_wall_mean_s; /* the mean of per-sample time less I/O, for the comment */
	bool preprocess_cpu;	       /* preprocess_s from tdur, else the 10th percentile */
	/* From the loader processes' CPU counters: their CPU per sample less the I/O's (s), the
	 * samples it covers (0: none), and the mean tdur figure it replaced. */
	double loader_cpu_s, preprocess_tdur_s;
	uint64_t loader_samples, loader_procs;
	/* The trainer's host CPU per step outside compute (s): from the CPU counters of the
	 * processes that computed (host_steps steps), else from fetch events' tdur. */
	double host_s, fetch_wait_s;
	uint64_t host_steps, host_procs;
	bool host_from_fetch;
};

struct it_file *it_file_get(struct it *t, const char *path);
/* tdur: the event's thread CPU time (Chrome's "tdur", µs); negative when it has none. */
int it_read(struct it *t, int64_t pid, int64_t tid, const char *path, uint64_t off, uint64_t size,
	    double ts, double dur, double tdur);
int it_open(struct it *t, int64_t pid, int64_t tid, const char *path, double dur, double tdur);
void it_compute(struct it *t, int64_t pid, double dur_us, double tdur_us, int64_t step);
int it_sample(struct it *t, int64_t pid, int64_t tid, double dur_us, double tdur_us);
/* The trainer's wait for its next batch (a "fetch" or "data_wait" event). */
void it_fetch(struct it *t, double dur_us, double tdur_us);
/* A CPU counter of process pid: its CPU time so far (µs). */
void it_counter(struct it *t, int64_t pid, double cpu_us);
void it_derive_cpu(struct it *t, struct it_workload *d);
void it_derive(struct it *t, struct it_workload *d);
void it_derive_loader(struct it *t, struct it_workload *d);
void it_free(struct it *t);
/* Reads one trace file (Chrome trace JSON lines or darshan-dxt-parser text) into t: 0, or -1
 * with t->err naming the file and line. */
int it_read_file(struct it *t, const char *path);
/* The same from a buffer (fuzz target): name is for messages. */
int it_read_buffer(struct it *t, const char *name, const char *data, size_t len);

#endif
