/* The page cache's state measured, not predicted: how many of the dataset's bytes sit in the
 * page cache of each node, counted with mincore(2) over a read-only mapping of each file (as
 * fincore and vmtouch do; no page is read or faulted in). Large datasets are sampled: at most
 * CACHESTATE_MAX_FILES files per rank and CACHESTATE_FILE_BYTES per file, in evenly spaced
 * windows; the record says when it sampled (bench/cachestate.c).
 */
#ifndef FEEDBENCH_CACHESTATE_H
#define FEEDBENCH_CACHESTATE_H

#include <stdint.h>

struct run;

#define CACHESTATE_MAX_FILES  512
#define CACHESTATE_FILE_BYTES (256ull << 20)
#define CACHESTATE_WINDOWS    64

/* What one rank counted (or a node's or the run's sum). */
struct cache_count {
	double resident;   /* bytes found in the page cache */
	double examined;   /* bytes examined (all of them unless sampled) */
	double bytes;	   /* size of the files this rank measures, sampled or not */
	double files;	   /* files this rank measures */
	double files_seen; /* of them, examined */
	double failed;	   /* of them, not examined (open, mmap or mincore failed) */
	double sampled;	   /* 1 when files or bytes were left out */
};

/* Counts the page-cache pages of the file at path into c; 0 or a negative errno (the file is
 * then counted as failed). Reads nothing: open, fstat, mmap, mincore, munmap, close. */
int cachestate_file(const char *path, struct cache_count *c);

/* Collective (every rank): measures the run's dataset (run->ds) on every node and, on rank 0,
 * appends {epoch, when, resident_percent, ..., nodes: [...]} to summary.json's
 * storage.page_cache_measured. Per-rank files: each rank its own; shared files: the first rank
 * of each node. Object back-ends (no page cache) record nothing. A file it cannot examine is
 * counted in files_failed, not failed; only rank 0 unable to allocate the gather's buffer fails
 * it: every rank then returns the same code, agreed, with rank 0's message in run->err. */
int cachestate_record(struct run *run, int64_t epoch, const char *when);

/* Collective: the same for one file per rank (path; NULL: this rank counts nothing), recorded
 * as {step, when, ...} in summary.json's storage.<key> (a checkpoint before its restore). */
int cachestate_record_path(struct run *run, const char *path, const char *key, int64_t step,
			   const char *when);

/* Rank 0, after the epochs: one warning when, before an epoch, the measured page cache held
 * half the dataset or more while reads were not direct (the reads came mostly from memory). */
void cachestate_warn(struct run *run);

#endif
