/* The sampler: which samples each rank reads in an epoch, and in what order (rule in
 * sampler.h). Everything is computed locally from the agreed seed; no communication.
 */
#include "sampler.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench/run.h"
#include "../bench/timer.h"
#include "../formats/sample.h"

static uint64_t epoch_seed(const struct sampler *s, int epoch, uint64_t salt)
{
	uint64_t x = s->shuffle_seed ^ (salt * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)epoch << 32);
	splitmix64(&x);
	return x;
}

/* Fisher-Yates with a seeded generator (Lemire's bounded draw, bias-free enough for
 * shuffling: the bias is below 2^-32 for n < 2^32). */
static void shuffle_u64(uint64_t *v, uint64_t n, uint64_t seed)
{
	uint64_t st = seed;

	for (uint64_t i = n; i > 1; i--) {
		uint64_t j = (uint64_t)(((unsigned __int128)splitmix64(&st) * i) >> 64);
		uint64_t t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

int sampler_init(struct sampler *s, struct run *run)
{
	const struct config *cfg = &run->cfg;
	uint64_t seed = (uint64_t)cfg->dataset.seed;

	memset(s, 0, sizeof(*s));
	s->batch = (uint64_t)cfg->reader.batch_size;
	/* random: one seed drawn by rank 0, so all ranks still agree on the deal. */
	if (cfg->reader.file_shuffle == SHUFFLE_RANDOM ||
	    cfg->reader.sample_shuffle == SHUFFLE_RANDOM) {
		if (run->rank == 0)
			seed = timer_now_ns() ^ ((uint64_t)getpid() << 32);
		MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, run->comm);
	}
	s->shuffle_seed = seed;
	return 0;
}

static uint64_t steps_for(uint64_t n, uint64_t batch, bool drop_last)
{
	return drop_last ? n / batch : (n + batch - 1) / batch;
}

/* Samples rank r reads under the rule, without building the order: for step counts. */
static uint64_t rank_count(const struct run *run, int r, int nranks)
{
	const struct dataset *ds = &run->ds;
	bool stream = run->format->caps & FORMAT_CAP_STREAM;

	if (run->cfg.dataset.file_access == FILE_ACCESS_SHARED && !stream) {
		uint64_t n = ds->nsamples, p = (uint64_t)nranks;
		return (uint64_t)(((unsigned __int128)n * (r + 1)) / p -
				  ((unsigned __int128)n * r) / p);
	}
	/* Whole files: per_rank ownership i % P (stream formats deal shards the same way;
	 * shuffling changes the order, not the owner, so counts are fixed). */
	uint64_t n = 0;
	for (uint32_t i = (uint32_t)r; i < ds->nfiles; i += (uint32_t)nranks)
		n += ds->files[i].nsamples;
	return n;
}

/* Emulates WebDataset's shuffle buffer: samples stream in read order; each output is a
 * random pick from a buffer of `size` samples. */
static void buffer_shuffle(uint64_t *v, uint64_t n, uint64_t size, uint64_t seed)
{
	uint64_t *out, st = seed, filled = 0, in = 0, o = 0;
	uint64_t *buf;

	if (size <= 1 || n <= 1)
		return;
	out = malloc(n * sizeof(*out));
	buf = malloc(size * sizeof(*buf));
	if (!out || !buf) {
		free(out);
		free(buf);
		shuffle_u64(v, n, seed); /* degrade to a full shuffle rather than fail */
		return;
	}
	while (o < n) {
		while (filled < size && in < n)
			buf[filled++] = v[in++];
		uint64_t j = (uint64_t)(((unsigned __int128)splitmix64(&st) * filled) >> 64);
		out[o++] = buf[j];
		buf[j] = buf[--filled];
	}
	memcpy(v, out, n * sizeof(*v));
	free(out);
	free(buf);
}

/* The files rank `rank` reads in `epoch`, in read order (all files when shared). */
static int rank_files(const struct sampler *s, struct run *run, int epoch, int rank, int nranks,
		      uint64_t **out, uint64_t *nout)
{
	const struct dataset *ds = &run->ds;
	bool stream = run->format->caps & FORMAT_CAP_STREAM;
	bool shared = run->cfg.dataset.file_access == FILE_ACCESS_SHARED && !stream;
	uint64_t fseed = run->cfg.reader.file_shuffle == SHUFFLE_OFF ? 0 : epoch_seed(s, epoch, 1);
	uint64_t *files = malloc((ds->nfiles ? ds->nfiles : 1) * sizeof(*files)), nf = 0;

	if (!files)
		return run_fail(run, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < ds->nfiles; i++)
		if (shared || (int)(i % (uint32_t)nranks) == rank)
			files[nf++] = i;
	if (fseed)
		shuffle_u64(files, nf, fseed);
	*out = files;
	*nout = nf;
	return 0;
}

/* Stream formats: a rank's shards are dealt round-robin to its reader threads, as WebDataset
 * gives each DataLoader worker whole shards; each thread makes batches from its own stream and
 * the trainer takes them round-robin (a thread whose stream is done drops out of the round). */
static int stream_threads(const struct run *run)
{
	return (int)run->cfg.reader.read_threads;
}

static uint64_t stream_steps(struct run *run, const uint64_t *files, uint64_t nf, uint64_t batch)
{
	int w = stream_threads(run);
	uint64_t steps = 0;

	for (int t = 0; t < w; t++) {
		uint64_t n = 0;
		for (uint64_t j = (uint64_t)t; j < nf; j += (uint64_t)w)
			n += run->ds.files[files[j]].nsamples;
		steps += steps_for(n, batch, run->cfg.reader.drop_last);
	}
	return steps;
}

static int stream_deal(struct sampler *s, struct run *run, const uint64_t *files, uint64_t nf,
		       uint64_t sseed)
{
	const struct dataset *ds = &run->ds;
	int w = stream_threads(run);
	uint64_t total = 0, steps = stream_steps(run, files, nf, s->batch);
	uint64_t **streams = calloc((size_t)w, sizeof(*streams));
	uint64_t *len = calloc((size_t)w, sizeof(*len)), *pos = calloc((size_t)w, sizeof(*pos));
	int rc = 0;

	for (uint64_t j = 0; j < nf; j++)
		total += ds->files[files[j]].nsamples;
	s->order = malloc((total ? total : 1) * sizeof(*s->order));
	s->bounds = malloc((steps + 1) * sizeof(*s->bounds));
	s->owner = malloc((steps ? steps : 1) * sizeof(*s->owner));
	if (!streams || !len || !pos || !s->order || !s->bounds || !s->owner) {
		rc = run_fail(run, -ENOMEM, "out of memory for the sample order");
		goto out;
	}
	for (int t = 0; t < w; t++) {
		uint64_t n = 0;
		for (uint64_t j = (uint64_t)t; j < nf; j += (uint64_t)w)
			n += ds->files[files[j]].nsamples;
		streams[t] = malloc((n ? n : 1) * sizeof(**streams));
		if (!streams[t]) {
			rc = run_fail(run, -ENOMEM, "out of memory for the sample order");
			goto out;
		}
		for (uint64_t j = (uint64_t)t; j < nf; j += (uint64_t)w)
			for (uint64_t k = 0; k < ds->files[files[j]].nsamples; k++)
				streams[t][len[t]++] = ds->files[files[j]].first + k;
		if (sseed)
			buffer_shuffle(streams[t], len[t], (uint64_t)run->cfg.wds.shuffle_buffer,
				       sseed + (uint64_t)t);
	}
	uint64_t n = 0, k = 0;
	for (bool more = true; more;) {
		more = false;
		for (int t = 0; t < w; t++) {
			uint64_t left = len[t] - pos[t];
			uint64_t take = left < s->batch ? left : s->batch;
			if (take == 0 || (take < s->batch && run->cfg.reader.drop_last))
				continue;
			s->bounds[k] = n;
			s->owner[k++] = t;
			memcpy(s->order + n, streams[t] + pos[t], take * sizeof(*s->order));
			n += take;
			pos[t] += take;
			more = true;
		}
	}
	s->bounds[k] = n;
	s->steps = k;
	s->n = n;
out:
	for (int t = 0; streams && t < w; t++)
		free(streams[t]);
	free(streams);
	free(len);
	free(pos);
	return rc;
}

static uint64_t rank_steps(const struct sampler *s, struct run *run, int epoch, int r, int nranks)
{
	if (run->format->caps & FORMAT_CAP_STREAM) {
		uint64_t *files, nf, st = 0;
		if (rank_files(s, run, epoch, r, nranks, &files, &nf) == 0) {
			st = stream_steps(run, files, nf, s->batch);
			free(files);
		}
		return st;
	}
	return steps_for(rank_count(run, r, nranks), s->batch, run->cfg.reader.drop_last);
}

int sampler_epoch(struct sampler *s, struct run *run, int epoch, int rank, int nranks)
{
	const struct config *cfg = &run->cfg;
	const struct dataset *ds = &run->ds;
	bool stream = run->format->caps & FORMAT_CAP_STREAM;
	bool shared = cfg->dataset.file_access == FILE_ACCESS_SHARED && !stream;
	uint64_t sseed = cfg->reader.sample_shuffle == SHUFFLE_OFF ? 0 : epoch_seed(s, epoch, 2);
	uint64_t *files = NULL, nf = 0, n = 0;
	int rc;

	free(s->order);
	free(s->bounds);
	free(s->owner);
	s->order = s->bounds = NULL;
	s->owner = NULL;
	if ((rc = rank_files(s, run, epoch, rank, nranks, &files, &nf)) < 0)
		return rc;
	if (stream) {
		rc = stream_deal(s, run, files, nf, sseed);
		free(files);
		if (rc < 0)
			return rc;
	} else {
		uint64_t total = 0;
		for (uint64_t i = 0; i < nf; i++)
			total += ds->files[files[i]].nsamples;
		uint64_t *all = malloc((total ? total : 1) * sizeof(*all));
		if (!all) {
			free(files);
			return run_fail(run, -ENOMEM,
					"out of memory for the sample order (%" PRIu64 " samples)",
					total);
		}
		for (uint64_t i = 0; i < nf; i++) {
			const struct ds_file *f = &ds->files[files[i]];
			for (uint64_t k = 0; k < f->nsamples; k++)
				all[n++] = f->first + k;
		}
		free(files);
		if (sseed)
			shuffle_u64(all, n, sseed);
		if (shared) {
			uint64_t p = (uint64_t)nranks;
			uint64_t lo = (uint64_t)(((unsigned __int128)n * rank) / p);
			uint64_t hi = (uint64_t)(((unsigned __int128)n * (rank + 1)) / p);
			memmove(all, all + lo, (hi - lo) * sizeof(*all));
			n = hi - lo;
		}
		s->order = all;
		s->steps = steps_for(n, s->batch, cfg->reader.drop_last);
		s->n = cfg->reader.drop_last ? s->steps * s->batch : n;
	}
	s->min_steps = UINT64_MAX;
	s->max_steps = 0;
	for (int r = 0; r < nranks; r++) {
		uint64_t st = r == rank ? s->steps : rank_steps(s, run, epoch, r, nranks);
		if (st < s->min_steps)
			s->min_steps = st;
		if (st > s->max_steps)
			s->max_steps = st;
	}
	return 0;
}

void sampler_batch(const struct sampler *s, uint64_t step, uint64_t *first, uint64_t *count)
{
	if (s->bounds) {
		*first = s->bounds[step];
		*count = step < s->steps ? s->bounds[step + 1] - s->bounds[step] : 0;
		return;
	}
	uint64_t lo = step * s->batch;

	*first = lo;
	*count = lo >= s->n ? 0 : (s->n - lo < s->batch ? s->n - lo : s->batch);
}

void sampler_free(struct sampler *s)
{
	free(s->order);
	free(s->bounds);
	free(s->owner);
	s->order = s->bounds = NULL;
	s->owner = NULL;
}

int sampler_check(struct run *run)
{
	const struct config *cfg = &run->cfg;
	uint64_t batch = (uint64_t)cfg->reader.batch_size, fewest = UINT64_MAX;
	int fewest_rank = 0;

	for (int r = 0; r < run->nranks; r++) {
		uint64_t n = rank_count(run, r, run->nranks);
		if (n < fewest) {
			fewest = n;
			fewest_rank = r;
		}
	}
	if (fewest == 0)
		return run_fail(
		    run, -FB_ECONFIG,
		    "%s: rank %d would read no samples: %u files for %d ranks with "
		    "file_access = %s (use more files, fewer ranks, or file_access = shared)",
		    cfg->source, fewest_rank, run->ds.nfiles, run->nranks,
		    cfg_choice_name("dataset", "file_access", cfg->dataset.file_access));
	if (batch > fewest)
		return run_fail(run, -FB_ECONFIG,
				"%s: batch_size (%" PRIu64 ") is larger than the %" PRIu64
				" samples rank %d reads per epoch",
				cfg->source, batch, fewest, fewest_rank);
	struct sampler probe = {.batch = batch, .shuffle_seed = (uint64_t)cfg->dataset.seed};
	uint64_t steps = UINT64_MAX;
	for (int r = 0; r < run->nranks; r++) {
		uint64_t st = rank_steps(&probe, run, 0, r, run->nranks);
		if (st < steps) {
			steps = st;
			fewest_rank = r;
		}
	}
	if ((uint64_t)cfg->train.exclude_start_steps >= steps)
		return run_fail(run, -FB_ECONFIG,
				"%s: exclude_start_steps (%" PRId64 ") leaves no step to measure: "
				"rank %d has %" PRIu64 " steps per epoch",
				cfg->source, cfg->train.exclude_start_steps, fewest_rank, steps);
	return 0;
}
