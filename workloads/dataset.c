/* Dataset layout (generated) and discovery (bring your own data). */
#include "dataset.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../bench/agree.h"
#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "../formats/format.h"
#include "../formats/sample.h"

/* Shared files read in list order (no shuffle) by independent reads: rank r reads the
 * contiguous block [n r / P, n (r + 1) / P) of the n samples (sampler.c, list_deal), so it opens
 * only the files that block spans. Not with a collective read or shared MPI-IO handles (every
 * rank opens every file together), a format doing its own I/O, K loaders per rank (their blocks
 * are not contiguous), or unequal files (spf 0: the block's files are not known yet). */
static bool shared_block(const struct run *run, uint64_t spf)
{
	const struct config *cfg = &run->cfg;

	return spf && cfg->reader.sample_shuffle == SHUFFLE_OFF &&
	       cfg->reader.file_shuffle == SHUFFLE_OFF && !cfg->mpiio.collective &&
	       cfg->storage.backend != BACKEND_MPIIO && !(run->format->caps & FORMAT_CAP_OWNS_IO) &&
	       cfg->train.accelerators_per_rank <= 1;
}

/* The files this rank opens: per_rank (and stream formats, whose shards are owned the same
 * way) its files i % P == r; when ranks share files, those its block spans (shared_block) or
 * all of them (a shuffled list may send any file to any rank; collective reads). spf: samples
 * in every file, 0 when unequal or not known yet. */
static void dataset_hold(const struct run *run, struct dataset *ds, uint64_t spf)
{
	const struct config *cfg = &run->cfg;
	bool stream = run->format->caps & FORMAT_CAP_STREAM;
	uint32_t p = (uint32_t)run->nranks, r = (uint32_t)run->rank;

	ds->held_step = 1;
	if (p > 1 && cfg->dataset.file_access == FILE_ACCESS_SHARED && !stream &&
	    shared_block(run, spf)) {
		uint64_t n = (uint64_t)ds->nfiles * spf;
		uint64_t lo = (uint64_t)(((unsigned __int128)n * r) / p);
		uint64_t hi = (uint64_t)(((unsigned __int128)n * (r + 1)) / p);
		ds->held_first = hi > lo ? (uint32_t)(lo / spf) : 0;
		ds->nheld = hi > lo ? (uint32_t)((hi - 1) / spf - lo / spf + 1) : 0;
	} else if (p <= 1 || (cfg->dataset.file_access == FILE_ACCESS_SHARED && !stream) ||
		   cfg->mpiio.collective) {
		ds->held_first = 0;
		ds->nheld = ds->nfiles;
	} else {
		ds->held_first = r;
		ds->held_step = p;
		ds->nheld = r < ds->nfiles ? (ds->nfiles - r + p - 1) / p : 0;
	}
}

static int dataset_alloc(struct run *run, struct dataset *ds, uint64_t nfiles, uint64_t spf)
{
	if (nfiles > UINT32_MAX)
		return run_fail(run, -FB_ECONFIG,
				"%" PRIu64 " files is more than feedbench handles", nfiles);
	ds->nfiles = (uint32_t)nfiles;
	dataset_hold(run, ds, spf);
	ds->files = calloc(ds->nheld ? ds->nheld : 1, sizeof(*ds->files));
	if (!ds->files)
		return run_fail(run, -ENOMEM, "out of memory for %" PRIu32 " files", ds->nheld);
	return 0;
}

/* Sizes of generated file i: the sum and the largest of its samples. */
static void layout_sizes(const struct dataset *ds, uint32_t i, uint64_t *sum, uint64_t *max)
{
	*sum = *max = 0;
	for (uint64_t s = 0; s < ds->spf; s++) {
		uint64_t sz = dataset_sample_size(ds, i, s);
		*sum += sz;
		if (sz > *max)
			*max = sz;
	}
}

int dataset_layout(struct run *run, struct dataset *ds)
{
	const struct config *cfg = &run->cfg;
	const struct format_ops *fmt = run->format;
	bool per_sample = fmt->caps & FORMAT_CAP_FILE_PER_SAMPLE;
	uint64_t nfiles = (uint64_t)cfg->dataset.num_files_train;
	uint64_t spf = (uint64_t)cfg->dataset.num_samples_per_file;
	int rc;
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
	if ((rc = dataset_alloc(run, ds, nfiles, spf)) < 0)
		return rc;
	ds->spf = spf;
	if (!spf && !(ds->first = calloc(nfiles + 1, sizeof(*ds->first))))
		return run_fail(run, -ENOMEM, "out of memory for %" PRIu64 " files", nfiles);
	/* Names are made from the index when needed: "<data_dir>/<format>-<index>-of-<n><ext>",
	 * the index zero-padded to the width of n. */
	ds->name_width = snprintf(digits, sizeof(digits), "%" PRIu64, nfiles);
	size_t hlen = strlen(cfg->dataset.data_dir) + strlen(fmt->name) + 3;
	size_t tlen = strlen(digits) + strlen(fmt->ext) + 5;
	ds->name_head = malloc(hlen);
	ds->name_tail = malloc(tlen);
	if (!ds->name_head || !ds->name_tail)
		return run_fail(run, -ENOMEM, "out of memory");
	snprintf(ds->name_head, hlen, "%s/%s-", cfg->dataset.data_dir, fmt->name);
	snprintf(ds->name_tail, tlen, "-of-%s%s", digits, fmt->ext);
	size_t len = strlen(ds->name_head) + (size_t)ds->name_width + strlen(ds->name_tail) + 1;
	/* Totals over every file; entries (one block for their names) for this rank's files. */
	if (ds->rec_stdev == 0) {
		ds->max_sample = nfiles && spf ? dataset_sample_size(ds, 0, 0) : 0;
		ds->data_bytes = nfiles * spf * ds->max_sample;
	} else {
		for (uint32_t i = 0; i < ds->nfiles; i++) {
			uint64_t sum, max;
			layout_sizes(ds, i, &sum, &max);
			ds->data_bytes += sum;
			if (max > ds->max_sample)
				ds->max_sample = max;
		}
	}
	ds->arena_bytes = len * (uint64_t)ds->nheld;
	ds->path_arena = malloc(len * (size_t)(ds->nheld ? ds->nheld : 1));
	if (!ds->path_arena)
		return run_fail(run, -ENOMEM, "out of memory for %" PRIu32 " file names",
				ds->nheld);
	for (uint32_t k = 0; k < ds->nheld; k++) {
		struct ds_file *f = &ds->files[k];
		uint32_t i = ds->held_first + k * ds->held_step;
		f->path = ds->path_arena + (size_t)k * len;
		dataset_path(ds, i, f->path, len);
		f->index = i;
		f->nsamples = spf;
		f->first = (uint64_t)i * spf;
		layout_sizes(ds, i, &f->data_bytes, &f->max_sample);
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

/* The names discover_rank0 collects from the listing of the data folder. */
struct discover_names {
	struct run *run;
	char **names;
	size_t n, cap, foreign;
	bool failed; /* an entry could not be kept (recorded) */
};

static int discover_entry(const char *name, void *arg)
{
	struct discover_names *dn = arg;

	if (name[0] == '.')
		return 0;
	if (!format_matches(dn->run->format, name)) {
		/* index files belong to their data files (tfrecord .idx, MDS index.json) */
		if (!has_ext(name, ".idx") && strcmp(name, "index.json") != 0)
			dn->foreign++;
		return 0;
	}
	if (dn->n == dn->cap) {
		size_t cap = dn->cap ? dn->cap * 2 : 256;
		char **nn = realloc(dn->names, cap * sizeof(*nn));
		if (!nn)
			goto out_nomem;
		dn->names = nn;
		dn->cap = cap;
	}
	if (!(dn->names[dn->n] = strdup(name)))
		goto out_nomem;
	dn->n++;
	return 0;
out_nomem:
	dn->failed = true;
	return run_fail(dn->run, -ENOMEM, "out of memory");
}

/* Rank 0 lists (through the back-end's list_dir) and probes, then broadcasts: the other ranks
 * never touch the folder. A num_files_train below the files found reads the first ones in name
 * order (as DLIO does); one above is an error naming both counts. Leaves the paths in *paths
 * (one block, in order) and each file's samples, largest sample and sample bytes in *info (3
 * per file). */
static int discover_rank0(struct run *run, json_t *found, uint64_t *on_disk, uint64_t *nfiles,
			  char **paths, uint64_t *plen, uint64_t **info)
{
	const char *dir = run->cfg.dataset.data_dir;
	struct discover_names dn = {.run = run};
	struct io io = {.run = run};
	int rc = io_list_dir(&io, dir, discover_entry, &dn);
	char **names = dn.names;
	size_t n = dn.n, foreign = dn.foreign;

	if (rc < 0 && !dn.failed)
		rc = run_fail(run, -FB_EDATASET, "cannot open data folder '%s': %s", dir,
			      strerror(-rc));
	if (rc < 0)
		goto out;
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
	*plen = 0;
	for (size_t i = 0; i < n; i++)
		*plen += strlen(dir) + strlen(names[i]) + 2;
	*paths = malloc(*plen);
	*info = malloc(3 * n * sizeof(**info));
	if (!*paths || !*info) {
		rc = run_fail(run, -ENOMEM, "out of memory");
		goto out;
	}
	char *at = *paths;
	for (size_t i = 0; i < n; i++) {
		struct probe_info pi = {0};
		char *path = at;

		at += sprintf(at, "%s/%s", dir, names[i]) + 1;
		rc = run->format->probe(run, path, &pi);
		if (rc < 0)
			goto out;
		(*info)[3 * i] = pi.nsamples;
		(*info)[3 * i + 1] = pi.max_sample;
		(*info)[3 * i + 2] = pi.data_bytes;
		if (i < 100) {
			json_t *o = json_object();
			json_object_set_new(o, "file", json_string(names[i]));
			json_object_set_new(o, "samples", json_integer((json_int_t)pi.nsamples));
			json_object_set_new(o, "bytes", json_integer((json_int_t)pi.data_bytes));
			json_object_set_new(o, "detail", json_string(pi.detail));
			json_array_append_new(found, o);
		}
	}
	*nfiles = n;
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* Every name stays where a rank needs them all: rank 0 (the manifest, messages) and a node's
 * first rank that evicts the page cache for its node's ranks. */
static bool discover_keeps_names(const struct run *run)
{
	return run->rank == 0 ||
	       (run->local_rank == 0 && run->cfg.storage.page_cache == PAGE_CACHE_EVICT);
}

/* Rank 0's findings to every rank in three broadcasts, whatever the number of files: the
 * per-file figures, then all paths in one buffer. Each rank keeps the entries of its files,
 * the per-file sample counts only when they differ, and the names as discover_keeps_names
 * says. */
static int discover_bcast(struct run *run, struct dataset *ds, char *paths, uint64_t plen,
			  uint64_t *v)
{
	uint32_t n = ds->nfiles;
	int rc = 0;

	if (run->rank != 0) {
		v = malloc(3 * (size_t)(n ? n : 1) * sizeof(*v));
		paths = malloc(plen ? plen : 1);
	}
	rc = agree(run, !v || !paths ? run_fail(run, -ENOMEM, "out of memory") : 0);
	if (rc == 0) {
		MPI_Bcast(v, 3 * (int)n, MPI_UINT64_T, 0, run->comm);
		MPI_Bcast(paths, (int)plen, MPI_CHAR, 0, run->comm);
	}
	ds->spf = rc == 0 && n ? v[0] : 0;
	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		ds->nsamples += v[3 * i];
		ds->data_bytes += v[3 * i + 2];
		if (v[3 * i + 1] > ds->max_sample)
			ds->max_sample = v[3 * i + 1];
		if (v[3 * i] != ds->spf)
			ds->spf = 0;
	}
	if (rc == 0 && !ds->spf) {
		ds->first = malloc(((size_t)n + 1) * sizeof(*ds->first));
		if (!ds->first)
			rc = run_fail(run, -ENOMEM, "out of memory");
		for (uint32_t i = 0; ds->first && i <= n; i++)
			ds->first[i] = i ? ds->first[i - 1] + v[3 * (i - 1)] : 0;
	}
	if (rc == 0 && discover_keeps_names(run)) {
		ds->names = malloc((size_t)(n ? n : 1) * sizeof(*ds->names));
		if (!ds->names)
			rc = run_fail(run, -ENOMEM, "out of memory");
		for (uint32_t i = 0; ds->names && i < n; i++)
			ds->names[i] = i ? ds->names[i - 1] + strlen(ds->names[i - 1]) + 1 : paths;
		ds->path_arena = paths; /* the names' block */
		ds->arena_bytes = plen;
		paths = NULL;
	} else if (rc == 0) {
		/* Only this rank's names: their lengths, then one block. */
		size_t need = 1, k = 0;
		const char *at = paths;
		for (uint32_t i = 0; i < n; i++, at += strlen(at) + 1)
			if (dataset_file(ds, i))
				need += strlen(at) + 1;
		ds->path_arena = malloc(need);
		ds->arena_bytes = need;
		if (!ds->path_arena)
			rc = run_fail(run, -ENOMEM, "out of memory");
		char *to = ds->path_arena;
		at = paths;
		for (uint32_t i = 0; to && i < n && k < ds->nheld; i++, at += strlen(at) + 1) {
			if (!dataset_file(ds, i))
				continue;
			ds->files[k++].path = to;
			to = stpcpy(to, at) + 1;
		}
	}
	for (uint32_t k = 0; rc == 0 && k < ds->nheld; k++) {
		struct ds_file *f = &ds->files[k];
		uint32_t i = ds->held_first + k * ds->held_step;
		f->index = i;
		f->nsamples = v[3 * i];
		f->max_sample = v[3 * i + 1];
		f->data_bytes = v[3 * i + 2];
		f->first = dataset_file_first(ds, i);
		if (ds->names)
			f->path = ds->names[i];
	}
	free(paths);
	free(v);
	return agree(run, rc);
}

int dataset_discover(struct run *run, struct dataset *ds)
{
	json_t *found = json_array();
	uint64_t nfiles = 0, on_disk = 0, plen = 0;
	uint64_t *info = NULL;
	char *paths = NULL;
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
	if (run->rank == 0)
		rc = discover_rank0(run, found, &on_disk, &nfiles, &paths, &plen, &info);
	rc = agree(run, rc);
	if (rc < 0) {
		free(paths);
		free(info);
		json_decref(found);
		return rc;
	}
	uint64_t sizes[2] = {nfiles, plen};
	MPI_Bcast(sizes, 2, MPI_UINT64_T, 0, run->comm);
	nfiles = sizes[0];
	plen = sizes[1];
	/* Agreed: a rank that could not allocate must not leave the others in the broadcast. */
	if ((rc = agree(run, dataset_alloc(run, ds, nfiles, 0))) < 0 ||
	    (rc = discover_bcast(run, ds, paths, plen, info)) < 0) {
		json_decref(found);
		return rc;
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
	for (uint32_t k = 0; k < ds->nheld; k++)
		if (ds->files[k].meta && run->format && run->format->unindex)
			run->format->unindex(&ds->files[k]);
	free(ds->path_arena);
	free(ds->names);
	free(ds->first);
	free(ds->name_head);
	free(ds->name_tail);
	free(ds->files);
	memset(ds, 0, sizeof(*ds));
}
