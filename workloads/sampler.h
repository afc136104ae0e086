/* The sampler deals the dataset's samples to ranks for one epoch.
 *
 * The rule, identical on every rank and computed without communication:
 * - per_rank: rank r owns the files whose index i satisfies i % nranks == r. file_shuffle
 *   reorders the owned files, sample_shuffle reorders the owned samples, every epoch.
 * - shared: the list of all samples (file order shuffled by file_shuffle, samples shuffled by
 *   sample_shuffle across the whole dataset) is cut into nranks contiguous blocks; rank r
 *   takes [r*N/P, (r+1)*N/P), so counts differ by at most one.
 * - stream formats (wds): shards are owned like per_rank files (also with file_access =
 *   shared: ranks read disjoint shards); a rank's shards are dealt round-robin to its reader
 *   threads, each thread streams its shards in order and makes its own batches (sample_shuffle
 *   emulates a shuffle buffer of [format.wds] shuffle_buffer samples per thread), and the
 *   trainer takes the threads' batches round-robin, as DataLoader workers over WebDataset do.
 *   A thread's last batch may be partial (dropped with drop_last).
 * - steps: ceil(n / batch) per rank (the last batch partial), floor with drop_last (the
 *   remainder is not read). Ranks may have different step counts: step_barrier joins only the
 *   steps every rank has (the minimum), so nothing ever waits for a rank that has finished.
 * Every sample is read exactly once per epoch across ranks unless drop_last drops it.
 */
#ifndef FEEDBENCH_SAMPLER_H
#define FEEDBENCH_SAMPLER_H

#include <stdint.h>

struct run;

struct sampler {
	uint64_t *order;    /* this rank's global sample numbers, in read order */
	uint64_t n;	    /* samples this rank reads this epoch (after drop_last) */
	uint64_t steps;	    /* this rank's steps */
	uint64_t min_steps; /* fewest steps of any rank */
	uint64_t max_steps; /* most steps of any rank */
	uint64_t batch;
	uint64_t shuffle_seed; /* agreed by all ranks at start (random: from rank 0) */
	uint64_t *bounds;      /* stream formats: batch k is order[bounds[k] .. bounds[k+1]) */
	int *owner;	       /* stream formats: reader thread (0-based) that reads batch k */
};

int sampler_init(struct sampler *s, struct run *run);
/* Deals epoch `epoch` (0-based) to rank `rank` of `nranks` (tests call it for every rank). */
int sampler_epoch(struct sampler *s, struct run *run, int epoch, int rank, int nranks);
/* Samples of step `step`: *first index into order, *count. */
void sampler_batch(const struct sampler *s, uint64_t step, uint64_t *first, uint64_t *count);
void sampler_free(struct sampler *s);
/* Refuses deals that cannot work (a rank with no samples, batch larger than a rank's samples,
 * warm-up steps that leave nothing to measure): -FB_ECONFIG before any file is touched. */
int sampler_check(struct run *run);

#endif
