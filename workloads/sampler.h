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
 *
 * Shuffles are seeded bijective permutations (a keyed Feistel network over the smallest
 * power of two holding the list, cycle-walking down to the list's size), evaluated per sample
 * when the trainer asks for it: no rank ever builds the global sample list, and a rank holds
 * O(1) state (plus, only when its files hold different sample counts, one prefix sum per file
 * it reads). The permutation of the shared list is the same on every rank (keyed by the agreed
 * seed and the epoch), so the ranks' blocks stay disjoint and cover the list; per_rank lists
 * are keyed by the rank too. With sample_shuffle the samples of the whole list are permuted,
 * so file_shuffle adds nothing and is not applied on top; file_shuffle alone reorders whole
 * files and keeps each file's samples together and in order.
 */
#ifndef FEEDBENCH_SAMPLER_H
#define FEEDBENCH_SAMPLER_H

#include <stdint.h>

struct run;
struct dataset;
struct config;
struct fb_errbuf;

/* A keyed bijection of [0, n): a Feistel network over [0, 2^bits), cycle-walked into [0, n). */
#define SAMPLER_PERM_ROUNDS 4
struct sampler_perm {
	uint64_t n;			   /* size of the domain; 0: identity */
	unsigned lo_bits, hi_bits;	   /* the two halves of the Feistel network */
	uint64_t key[SAMPLER_PERM_ROUNDS]; /* round keys */
};

void sampler_perm_init(struct sampler_perm *p, uint64_t n, uint64_t seed);
uint64_t sampler_perm_apply(const struct sampler_perm *p, uint64_t x);

struct sampler {
	uint64_t n;	    /* samples this rank reads this epoch (after drop_last) */
	uint64_t steps;	    /* this rank's steps */
	uint64_t min_steps; /* fewest steps of any rank */
	uint64_t max_steps; /* most steps of any rank */
	uint64_t batch;
	uint64_t shuffle_seed; /* agreed by all ranks at start (random: from rank 0) */
	/* Position i of this rank's epoch, for list formats: list position base + i, through
	 * sperm, falls in list file k at offset o; list file k is dataset file
	 * file0 + fperm(k) * fstride. */
	const struct dataset *ds;
	uint64_t base;		   /* shared: where this rank's block starts in the list */
	uint64_t spf;		   /* samples in every list file when all equal, else 0 */
	uint64_t *prefix;	   /* spf == 0: samples before list file k, nlfiles + 1 entries */
	uint32_t file0, fstride;   /* the list's files in the dataset */
	uint32_t nlfiles;	   /* files in the list */
	struct sampler_perm sperm; /* sample_shuffle over the list (or identity) */
	struct sampler_perm fperm; /* file_shuffle over the list's files (or identity) */
	/* Stream formats: the rank's order, materialised (it holds only the rank's shards). */
	uint64_t *order;  /* global sample numbers in read order */
	uint64_t *bounds; /* batch k is order[bounds[k] .. bounds[k+1]) */
	int *owner;	  /* reader thread (0-based) that reads batch k */
};

int sampler_init(struct sampler *s, struct run *run);
/* Deals epoch `epoch` (0-based) to rank `rank` of `nranks` (tests call it for every rank). */
int sampler_epoch(struct sampler *s, struct run *run, int epoch, int rank, int nranks);
/* Samples of step `step`: positions *first .. *first + *count - 1 of this rank's epoch. */
void sampler_batch(const struct sampler *s, uint64_t step, uint64_t *first, uint64_t *count);
/* The global sample number at position i (< s->n) of this rank's epoch. */
uint64_t sampler_sample(const struct sampler *s, uint64_t i);
void sampler_free(struct sampler *s);
/* Refuses deals that cannot work (a rank with no samples, batch larger than a rank's samples,
 * warm-up steps that leave nothing to measure): -FB_ECONFIG before any file is touched. */
int sampler_check(struct run *run);
/* sampler_check for a deal over nranks loaders (accelerators_per_rank x ranks) instead of
 * run->nranks; run->nranks is left alone (other threads read it while the run starts). */
int sampler_check_deal(struct run *run, int nranks);
/* sampler_check on the layout a generated dataset will have (no file, no MPI): what validate
 * and a sweep's start refuse before anything runs. 0 under generate = never (the files are
 * counted when found) and for stream formats with read_threads = auto (the count comes from
 * every rank's CPUs at start-up; the run checks them then). */
int sampler_check_config(const struct config *cfg, int nranks, struct fb_errbuf *err);

#endif
