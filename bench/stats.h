/* Statistics: log-linear latency histograms (exactly mergeable across threads and ranks) and
 * the per-thread I/O counters that the wrappers fill.
 */
#ifndef FEEDBENCH_STATS_H
#define FEEDBENCH_STATS_H

#include <stdint.h>
#include <stddef.h>

/* 16 linear sub-buckets per power of two of nanoseconds: relative error <= 1/16. */
#define HIST_SUB_BITS 4
#define HIST_SUB      (1u << HIST_SUB_BITS)
#define HIST_BUCKETS  (64 * HIST_SUB)

struct hist {
	uint64_t count;
	uint64_t max_ns;
	uint64_t sum_ns;
	uint64_t bucket[HIST_BUCKETS];
};

void hist_reset(struct hist *h);
void hist_add(struct hist *h, uint64_t ns);
void hist_merge(struct hist *dst, const struct hist *src);
/* Value at quantile q in [0,1], in seconds: the upper edge of the bucket holding it, capped at
 * the exact maximum. 0 when the histogram is empty. */
double hist_quantile(const struct hist *h, double q);
/* Bucket index and its upper edge in ns (for latency.csv). */
unsigned hist_bucket_of(uint64_t ns);
uint64_t hist_bucket_upper_ns(unsigned b);

/* I/O counters of one reader thread; merged per rank, then reduced across ranks. */
struct io_stats {
	uint64_t bytes;	       /* bytes actually returned by read calls */
	uint64_t ops;	       /* read transfers completed (one per transfer_size piece) */
	uint64_t opens;	       /* files opened for reading */
	uint64_t open_ns;      /* time spent opening (metadata) */
	uint64_t samples;      /* samples read */
	uint64_t retries;      /* short reads and EINTR that needed another call */
	uint64_t inflight_max; /* most queued reads in flight at once on one thread (io_uring) */
	struct hist latency;   /* per read transfer */
	struct hist ttfb;      /* per read transfer whose back-end reports its time to first
				* byte (S3 GETs); empty on files */
	/* Writes and the namespace, counted by the same wrappers (bench/storage/io.c). */
	uint64_t wbytes;      /* bytes accepted by write calls */
	uint64_t wops;	      /* write calls that moved bytes */
	uint64_t creates;     /* files opened for writing */
	uint64_t create_ns;   /* time spent opening them */
	uint64_t syncs;	      /* fsync calls (files and folders) */
	uint64_t sync_ns;     /* time spent in them */
	uint64_t meta_ops;    /* mkdir, unlink, stat */
	uint64_t meta_ns;     /* time spent in them */
	struct hist wlatency; /* per write call */
	/* Decoding done by a format on the reader threads (jpeg, png): counted apart from the
	 * reads so the time a decoder holds the accelerator back shows on its own. */
	uint64_t decodes;	/* samples decoded */
	uint64_t decode_ns;	/* time spent decoding them */
	uint64_t decode_cpu_ns; /* the thread's CPU time in them */
	uint64_t decode_bytes;	/* bytes the decoder produced (pixels) */
};

void io_stats_reset(struct io_stats *s);
void io_stats_merge(struct io_stats *dst, const struct io_stats *src);

/* Mean, sample standard deviation, min, max of n values; n == 0 gives all zeros and count 0,
 * callers print "n/a" rather than a number. */
struct summary_stat {
	int n;
	double mean, stddev, min, max;
};
struct summary_stat stat_summarise(const double *v, int n);

#endif
