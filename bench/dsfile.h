/* The dataset as every part of feedbench sees it: its files and the samples in them. Formats
 * lay samples out in these files, storage opens them, workloads deal them to ranks; none of
 * them owns this header (workloads/dataset.c builds the list, from the config or from files
 * found on disk).
 */
#ifndef FEEDBENCH_DSFILE_H
#define FEEDBENCH_DSFILE_H

#include <stdbool.h>
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

struct dataset {
	struct ds_file *files;
	uint32_t nfiles;
	uint64_t nsamples;   /* over all files */
	uint64_t max_sample; /* largest sample of the dataset */
	uint64_t data_bytes; /* sum of sample sizes */
	uint64_t disk_bytes; /* sum of file sizes (0 until known) */
	bool generated;	     /* sizes follow the config (false: probed, verify impossible) */
	uint64_t seed;
	uint64_t id; /* dataset id written into sample headers */
	uint64_t rec_mean, rec_stdev;
	char *path_arena; /* one block holding every files[i].path, or NULL: each its own */
};

/* Size of sample (file, index) of a generated dataset: record_length_bytes, or a deterministic
 * normal variate with record_length_bytes_stdev, clamped to [64, 4 GiB - 1] (SAMPLE_MIN_BYTES of
 * formats/sample.h is the lower bound). */
uint64_t sample_size(uint64_t seed, uint64_t mean, uint64_t stdev, uint32_t file, uint64_t index);

/* Size of a sample of a generated dataset. */
uint64_t dataset_sample_size(const struct dataset *ds, uint32_t file, uint64_t index);
/* Maps a global sample number to its file (binary search over files[].first). */
struct ds_file *dataset_file_of(const struct dataset *ds, uint64_t global, uint64_t *index);

#endif
