/* Sizes of a generated dataset's samples and the file holding a sample (bench/dsfile.h). */
#include "dsfile.h"

#include "rng.h"

#define DSFILE_MIN_SAMPLE 64 /* SAMPLE_MIN_BYTES: room for the sample header */

uint64_t sample_size(uint64_t seed, uint64_t mean, uint64_t stdev, uint32_t file, uint64_t index)
{
	if (stdev == 0)
		return mean < DSFILE_MIN_SAMPLE ? DSFILE_MIN_SAMPLE : mean;
	uint64_t s = rng_mix3(seed ^ 0x5a5a5a5aull, file, index);
	double v = (double)mean + rng_normal(&s) * (double)stdev;
	if (v < DSFILE_MIN_SAMPLE)
		v = DSFILE_MIN_SAMPLE;
	if (v > 4294967295.0)
		v = 4294967295.0;
	return (uint64_t)v;
}

uint64_t dataset_sample_size(const struct dataset *ds, uint32_t file, uint64_t index)
{
	return sample_size(ds->seed, ds->rec_mean, ds->rec_stdev, file, index);
}

struct ds_file *dataset_file_of(const struct dataset *ds, uint64_t global, uint64_t *index)
{
	uint32_t lo = 0, hi = ds->nfiles;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (ds->files[mid].first <= global)
			lo = mid;
		else
			hi = mid;
	}
	*index = global - ds->files[lo].first;
	return &ds->files[lo];
}
