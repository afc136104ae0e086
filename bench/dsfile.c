/* Sizes of a generated dataset's samples and the file holding a sample (bench/dsfile.h). */
#include "dsfile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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

uint64_t dataset_file_samples(const struct dataset *ds, uint32_t i)
{
	return ds->spf ? ds->spf : ds->first[i + 1] - ds->first[i];
}

uint64_t dataset_file_first(const struct dataset *ds, uint32_t i)
{
	return ds->spf ? (uint64_t)i * ds->spf : ds->first[i];
}

struct ds_file *dataset_file(const struct dataset *ds, uint32_t i)
{
	uint32_t step = ds->held_step ? ds->held_step : 1, k;

	if (i < ds->held_first)
		return NULL;
	if (step == 1) { /* shared files: no division on every sample */
		k = i - ds->held_first;
	} else {
		if ((i - ds->held_first) % step)
			return NULL;
		k = (i - ds->held_first) / step;
	}
	return k < ds->nheld ? &ds->files[k] : NULL;
}

uint32_t dataset_index_of(const struct dataset *ds, uint64_t global, uint64_t *index)
{
	uint32_t lo = 0, hi = ds->nfiles;

	if (ds->spf) {
		lo = (uint32_t)(global / ds->spf);
	} else {
		while (hi - lo > 1) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (ds->first[mid] <= global)
				lo = mid;
			else
				hi = mid;
		}
	}
	*index = global - dataset_file_first(ds, lo);
	return lo;
}

struct ds_file *dataset_file_of(const struct dataset *ds, uint64_t global, uint64_t *index)
{
	return dataset_file(ds, dataset_index_of(ds, global, index));
}

const char *dataset_path(const struct dataset *ds, uint32_t i, char *buf, size_t len)
{
	const struct ds_file *f;

	if (ds->name_head) {
		snprintf(buf, len, "%s%0*u%s", ds->name_head, ds->name_width, i, ds->name_tail);
		return buf;
	}
	if (ds->names)
		return ds->names[i];
	f = dataset_file(ds, i);
	return f ? f->path : NULL;
}

int dataset_entry(const struct dataset *ds, uint32_t i, struct ds_file *e, char *path, size_t len)
{
	const struct ds_file *held = dataset_file(ds, i);
	const char *p = dataset_path(ds, i, path, len);

	if (!p)
		return -ENOENT;
	if (p != path)
		snprintf(path, len, "%s", p);
	memset(e, 0, sizeof(*e));
	e->path = path;
	e->index = i;
	e->nsamples = dataset_file_samples(ds, i);
	e->first = dataset_file_first(ds, i);
	if (held) {
		e->max_sample = held->max_sample;
		e->data_bytes = held->data_bytes;
		e->bytes = held->bytes;
	} else if (ds->generated) {
		for (uint64_t s = 0; s < e->nsamples; s++) {
			uint64_t sz = dataset_sample_size(ds, i, s);
			e->data_bytes += sz;
			if (sz > e->max_sample)
				e->max_sample = sz;
		}
	}
	return 0;
}

uint64_t dataset_table_bytes(const struct dataset *ds)
{
	uint64_t n = (uint64_t)ds->nheld * sizeof(*ds->files) + ds->arena_bytes;

	if (ds->names)
		n += (uint64_t)ds->nfiles * sizeof(*ds->names);
	if (ds->first)
		n += ((uint64_t)ds->nfiles + 1) * sizeof(*ds->first);
	return n;
}
