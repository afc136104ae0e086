/* The dataset: its files and samples, as generated (sizes derived from the config) or as
 * found on disk (bring your own data: sizes probed by the format).
 */
#ifndef FEEDBENCH_DATASET_H
#define FEEDBENCH_DATASET_H

#include <stdbool.h>
#include <stdint.h>

struct run;
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
};

/* Builds the file list of a generated dataset: names "<data_dir>/<format>_<index>_of_<n><ext>"
 * (or per-sample layout for formats that store one sample per file). */
int dataset_layout(struct run *run, struct dataset *ds);
/* Finds an existing dataset written by other tools and probes each file (generate = never,
 * verify = false). */
int dataset_discover(struct run *run, struct dataset *ds);
void dataset_free(struct run *run, struct dataset *ds);

/* Size of a sample of a generated dataset. */
uint64_t dataset_sample_size(const struct dataset *ds, uint32_t file, uint64_t index);
/* Maps a global sample number to its file (binary search over files[].first). */
struct ds_file *dataset_file_of(const struct dataset *ds, uint64_t global, uint64_t *index);

#endif
