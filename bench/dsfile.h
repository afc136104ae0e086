/* The dataset as every part of feedbench sees it: its files and the samples in them. Formats
 * lay samples out in these files, storage opens them, workloads deal them to ranks; none of
 * them owns this header (workloads/dataset.c builds the list, from the config or from files
 * found on disk).
 */
#ifndef FEEDBENCH_DSFILE_H
#define FEEDBENCH_DSFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sfile;

struct ds_file {
	char *path;
	uint32_t index;	      /* file index in the dataset */
	uint64_t nsamples;    /* samples in this file */
	uint64_t first;	      /* global number of its first sample */
	uint64_t bytes;	      /* file size when known (0 = unknown) */
	uint64_t max_sample;  /* largest sample in bytes (for buffer sizing) */
	uint64_t data_bytes;  /* sum of sample sizes */
	void *meta;	      /* format's per-file index (format_ops.index / unindex) */
	struct sfile *shared; /* handle opened collectively for shared MPI-IO access, or NULL */
};

/* A rank holds an entry only for the files it opens: files[k] is dataset file
 * held_first + k * held_step, k < nheld (per_rank: its files i % P == r; shared: all of them).
 * Any file's name, sample count and first sample are computed on demand (dataset_path,
 * dataset_file_samples, dataset_file_first): generated names follow a pattern; discovered
 * names are kept whole only where a rank needs them all (rank 0, and a node's first rank
 * when it evicts the page cache), and sample counts per file only when files differ. */
struct dataset {
	struct ds_file *files; /* the files this rank opens (see above) */
	uint32_t nheld;
	uint32_t held_first, held_step;
	uint32_t nfiles;
	uint64_t nsamples;   /* over all files */
	uint64_t spf;	     /* samples in every file when all equal, else 0 */
	uint64_t *first;     /* spf == 0: file i's first sample, nfiles + 1 entries */
	uint64_t max_sample; /* largest sample of the dataset */
	uint64_t data_bytes; /* sum of sample sizes */
	uint64_t disk_bytes; /* sum of file sizes (0 until known) */
	bool generated;	     /* sizes follow the config (false: probed, verify impossible) */
	uint64_t seed;
	uint64_t id; /* dataset id written into sample headers */
	uint64_t rec_mean, rec_stdev;
	char *name_head, *name_tail; /* generated: "<head><index, name_width digits><tail>" */
	int name_width;
	char **names;	      /* discovered: every file's path where kept (see above), else NULL */
	char *path_arena;     /* one block holding the held entries' paths, or NULL */
	uint64_t arena_bytes; /* its size */
};

/* Size of sample (file, index) of a generated dataset: record_length_bytes, or a deterministic
 * normal variate with record_length_bytes_stdev, clamped to [64, 4 GiB - 1] (SAMPLE_MIN_BYTES of
 * formats/sample.h is the lower bound). */
uint64_t sample_size(uint64_t seed, uint64_t mean, uint64_t stdev, uint32_t file, uint64_t index);

/* Size of a sample of a generated dataset. */
uint64_t dataset_sample_size(const struct dataset *ds, uint32_t file, uint64_t index);
/* Samples in file i, and the global number of its first sample (any file). */
uint64_t dataset_file_samples(const struct dataset *ds, uint32_t i);
uint64_t dataset_file_first(const struct dataset *ds, uint32_t i);
/* This rank's entry of file i, or NULL when it does not hold it. */
struct ds_file *dataset_file(const struct dataset *ds, uint32_t i);
/* Bytes this rank's file table holds: entries, their names, names and first samples kept per
 * file (format indexes, ds_file.meta, not counted). summary.json ranks[].file_table_bytes. */
uint64_t dataset_table_bytes(const struct dataset *ds);
/* Maps a global sample number to its file's index and its index in the file (any file). */
uint32_t dataset_index_of(const struct dataset *ds, uint64_t global, uint64_t *index);
/* Maps a global sample number to its file (which this rank must hold; NULL otherwise). */
struct ds_file *dataset_file_of(const struct dataset *ds, uint64_t global, uint64_t *index);
/* The path of file i in buf (or the held entry's), NULL when this rank does not know it. */
const char *dataset_path(const struct dataset *ds, uint32_t i, char *buf, size_t len);
/* Fills a temporary entry for any file this rank knows the name of (sizes of a generated
 * file computed; of a discovered file copied from the held entry, or 0). 0 or -ENOENT. */
int dataset_entry(const struct dataset *ds, uint32_t i, struct ds_file *e, char *path, size_t len);

#endif
