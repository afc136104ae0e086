/* Dataset layout (generated) and discovery (bring your own data). */
#include "dataset.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../bench/agree.h"
#include "../bench/run.h"
#include "../formats/sample.h"

static int dataset_alloc(struct run *run, struct dataset *ds, uint64_t nfiles)
{
	if (nfiles > UINT32_MAX)
		return run_fail(run, -FB_ECONFIG,
				"%" PRIu64 " files is more than feedbench handles", nfiles);
	ds->files = calloc(nfiles ? nfiles : 1, sizeof(*ds->files));
	if (!ds->files)
		return run_fail(run, -ENOMEM, "out of memory for %" PRIu64 " files", nfiles);
	ds->nfiles = (uint32_t)nfiles;
	return 0;
}

int dataset_layout(struct run *run, struct dataset *ds)
{
	const struct config *cfg = &run->cfg;
	const struct format_ops *fmt = run->format;
	bool per_sample = fmt->caps & FORMAT_CAP_FILE_PER_SAMPLE;
	uint64_t nfiles = (uint64_t)cfg->dataset.num_files_train;
	uint64_t spf = (uint64_t)cfg->dataset.num_samples_per_file;
	int width, rc;
	char digits[32];

	memset(ds, 0, sizeof(*ds));
	ds->generated = true;
	ds->seed = (uint64_t)cfg->dataset.seed;
	ds->id = cfg_dataset_id(cfg);
	ds->rec_mean = cfg->dataset.record_length_bytes;
	ds->rec_stdev = cfg->dataset.record_length_bytes_stdev;
	if (per_sample) {
		nfiles *= spf;
		spf = 1;
	}
	if ((rc = dataset_alloc(run, ds, nfiles)) < 0)
		return rc;
	width = snprintf(digits, sizeof(digits), "%" PRIu64, nfiles);
	/* Every name has the same length (zero-padded index): one block for all paths, exact
	 * lengths, instead of an oversized allocation per file. */
	size_t len = (size_t)snprintf(NULL, 0, "%s/%s-%0*u-of-%" PRIu64 "%s", cfg->dataset.data_dir,
				      fmt->name, width, 0u, nfiles, fmt->ext) +
		     1;
	ds->path_arena = malloc(len * (size_t)(nfiles ? nfiles : 1));
	if (!ds->path_arena)
		return run_fail(run, -ENOMEM, "out of memory for %" PRIu64 " file names", nfiles);
	for (uint32_t i = 0; i < ds->nfiles; i++) {
		struct ds_file *f = &ds->files[i];
		f->path = ds->path_arena + (size_t)i * len;
		snprintf(f->path, len, "%s/%s-%0*u-of-%" PRIu64 "%s", cfg->dataset.data_dir,
			 fmt->name, width, i, nfiles, fmt->ext);
		f->index = i;
		f->nsamples = spf;
		f->first = (uint64_t)i * spf;
		for (uint64_t s = 0; s < spf; s++) {
			uint64_t sz = dataset_sample_size(ds, i, s);
			f->data_bytes += sz;
			if (sz > f->max_sample)
				f->max_sample = sz;
		}
		ds->data_bytes += f->data_bytes;
		if (f->max_sample > ds->max_sample)
			ds->max_sample = f->max_sample;
	}
	ds->nsamples = nfiles * spf;
	return 0;
}

static bool has_ext(const char *name, const char *ext)
{
	size_t n = strlen(name), e = strlen(ext);

	return n > e && strcmp(name + n - e, ext) == 0;
}

static bool format_matches(const struct format_ops *fmt, const char *name)
{
	if (fmt->globs) {
		for (size_t i = 0; fmt->globs[i]; i++)
			if (has_ext(name, fmt->globs[i]))
				return true;
		return false;
	}
	return has_ext(name, fmt->ext);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files a config asks for under generate = never: 0 when num_files_train was left at its
 * default (then every file found is read). Formats of one sample per file count
 * num_files_train x num_samples_per_file files, as generation writes them. */
static uint64_t discover_wanted(const struct run *run)
{
	const struct config *cfg = &run->cfg;
	const struct cfg_key *k = cfg_find("dataset", "num_files_train");
	uint64_t want = (uint64_t)cfg->dataset.num_files_train;

	if (!k || cfg->lines[k - cfg_keys] == 0)
		return 0;
	if (run->format->caps & FORMAT_CAP_FILE_PER_SAMPLE)
		want *= (uint64_t)cfg->dataset.num_samples_per_file;
	return want;
}

/* Rank 0 lists and probes, then broadcasts: the other ranks never touch the folder. A
 * num_files_train below the files found reads the first ones in name order (as DLIO does); one
 * above is an error naming both counts. */
static int discover_rank0(struct run *run, struct dataset *ds, json_t *found, uint64_t *on_disk)
{
	const char *dir = run->cfg.dataset.data_dir;
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t n = 0, cap = 0, foreign = 0;
	struct dirent *e;
	int rc = 0;

	if (!d)
		return run_fail(run, -FB_EDATASET, "cannot open data folder '%s': %s", dir,
				strerror(errno));
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (!format_matches(run->format, e->d_name)) {
			if (!has_ext(e->d_name,
				     ".idx")) /* index files belong to their data files */
				foreign++;
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			char **nn = realloc(names, cap * sizeof(*names));
			if (!nn) {
				rc = run_fail(run, -ENOMEM, "out of memory");
				goto out;
			}
			names = nn;
		}
		names[n++] = strdup(e->d_name);
	}
	qsort(names, n, sizeof(*names), name_cmp);
	if (n == 0) {
		rc = run_fail(run, -FB_EDATASET,
			      "data folder '%s' holds no %s files (generate = never)", dir,
			      run->format->name);
		goto out;
	}
	if (foreign)
		run_warn(run, "ignored %zu files in '%s' that are not %s files", foreign, dir,
			 run->format->name);
	*on_disk = n;
	uint64_t want = discover_wanted(run);
	if (want > n) {
		rc = run_fail(run, -FB_EDATASET,
			      "%s: num_files_train asks for %" PRIu64
			      " files but data folder '%s' holds %zu %s files (generate = never)",
			      run->cfg.source, want, dir, n, run->format->name);
		goto out;
	}
	while (want && n > want)
		free(names[--n]);
	if ((rc = dataset_alloc(run, ds, n)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct ds_file *f = &ds->files[i];
		struct probe_info info = {0};
		size_t len = strlen(dir) + strlen(names[i]) + 2;

		f->path = malloc(len);
		if (!f->path) {
			rc = run_fail(run, -ENOMEM, "out of memory");
			goto out;
		}
		snprintf(f->path, len, "%s/%s", dir, names[i]);
		rc = run->format->probe(run, f->path, &info);
		if (rc < 0)
			goto out;
		f->index = (uint32_t)i;
		f->nsamples = info.nsamples;
		f->max_sample = info.max_sample;
		f->data_bytes = info.data_bytes;
		if (i < 100) {
			json_t *o = json_object();
			json_object_set_new(o, "file", json_string(names[i]));
			json_object_set_new(o, "samples", json_integer((json_int_t)info.nsamples));
			json_object_set_new(o, "bytes", json_integer((json_int_t)info.data_bytes));
			json_object_set_new(o, "detail", json_string(info.detail));
			json_array_append_new(found, o);
		}
	}
out:
	closedir(d);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* Rank 0's findings to every rank in three broadcasts, whatever the number of files: the
 * per-file figures, then all paths in one buffer. */
static int discover_bcast(struct run *run, struct dataset *ds)
{
	uint64_t *v = malloc(3 * (size_t)(ds->nfiles ? ds->nfiles : 1) * sizeof(*v));
	uint64_t plen = 0;
	char *paths = NULL;
	int rc = 0;

	if (!v)
		return run_fail(run, -ENOMEM, "out of memory");
	for (uint32_t i = 0; run->rank == 0 && i < ds->nfiles; i++) {
		v[3 * i] = ds->files[i].nsamples;
		v[3 * i + 1] = ds->files[i].max_sample;
		v[3 * i + 2] = ds->files[i].data_bytes;
		plen += strlen(ds->files[i].path) + 1;
	}
	MPI_Bcast(v, 3 * (int)ds->nfiles, MPI_UINT64_T, 0, run->comm);
	MPI_Bcast(&plen, 1, MPI_UINT64_T, 0, run->comm);
	paths = malloc(plen ? plen : 1);
	if (!paths) {
		free(v);
		return run_fail(run, -ENOMEM, "out of memory");
	}
	if (run->rank == 0) {
		char *at = paths;
		for (uint32_t i = 0; i < ds->nfiles; i++)
			at = stpcpy(at, ds->files[i].path) + 1;
	}
	MPI_Bcast(paths, (int)plen, MPI_CHAR, 0, run->comm);
	const char *at = paths;
	for (uint32_t i = 0; run->rank != 0 && i < ds->nfiles && rc == 0; i++) {
		struct ds_file *f = &ds->files[i];
		f->index = i;
		f->nsamples = v[3 * i];
		f->max_sample = v[3 * i + 1];
		f->data_bytes = v[3 * i + 2];
		f->path = (char *)at; /* the broadcast block stays, as the path arena */
		at += strlen(at) + 1;
	}
	if (run->rank != 0)
		ds->path_arena = paths;
	else
		free(paths);
	free(v);
	return rc;
}

int dataset_discover(struct run *run, struct dataset *ds)
{
	json_t *found = json_array();
	uint64_t nfiles = 0, on_disk = 0;
	int rc = 0;

	memset(ds, 0, sizeof(*ds));
	if (!run->format->probe) {
		rc = run_fail(run, -FB_ECONFIG,
			      "format %s cannot read existing files (it has no self-description); "
			      "use generate = auto",
			      run->format->name);
		json_decref(found);
		return rc;
	}
	if (run->rank == 0) {
		rc = discover_rank0(run, ds, found, &on_disk);
		nfiles = rc == 0 ? ds->nfiles : 0;
	}
	rc = agree(run, rc);
	if (rc < 0) {
		json_decref(found);
		return rc;
	}
	MPI_Bcast(&nfiles, 1, MPI_UINT64_T, 0, run->comm);
	/* Agreed: a rank that could not allocate must not leave the others in the broadcast. */
	if ((rc = agree(run, run->rank != 0 ? dataset_alloc(run, ds, nfiles) : 0)) < 0)
		return rc;
	if ((rc = discover_bcast(run, ds)) < 0)
		return rc;
	for (uint32_t i = 0; i < ds->nfiles; i++) {
		ds->files[i].first = ds->nsamples;
		ds->nsamples += ds->files[i].nsamples;
		ds->data_bytes += ds->files[i].data_bytes;
		if (ds->files[i].max_sample > ds->max_sample)
			ds->max_sample = ds->files[i].max_sample;
	}
	if (run->rank == 0) {
		json_t *o = json_object();
		json_object_set_new(o, "files", json_integer(ds->nfiles));
		json_object_set_new(o, "files_on_disk", json_integer((json_int_t)on_disk));
		json_object_set_new(o, "samples", json_integer((json_int_t)ds->nsamples));
		json_object_set_new(o, "bytes", json_integer((json_int_t)ds->data_bytes));
		json_object_set_new(o, "largest_sample_bytes",
				    json_integer((json_int_t)ds->max_sample));
		json_object_set_new(o, "first_files", found);
		json_object_set_new(run->info_format, "discovered", o);
	} else {
		json_decref(found);
	}
	if (ds->nsamples == 0)
		return run_fail(run, -FB_EDATASET, "data folder '%s' holds no samples",
				run->cfg.dataset.data_dir);
	return 0;
}

void dataset_free(struct run *run, struct dataset *ds)
{
	for (uint32_t i = 0; i < ds->nfiles; i++) {
		if (ds->files[i].meta && run->format && run->format->unindex)
			run->format->unindex(&ds->files[i]);
		if (!ds->path_arena)
			free(ds->files[i].path);
	}
	free(ds->path_arena);
	free(ds->files);
	memset(ds, 0, sizeof(*ds));
}
