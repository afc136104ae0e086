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
#include "../formats/format.h"
#include "../bench/timer.h"
#include "../formats/sample.h"

static uint64_t epoch_seed(const struct sampler *s, int epoch, uint64_t salt)
{
	uint64_t x = s->shuffle_seed ^ (salt * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)epoch << 32);
	splitmix64(&x);
	return x;
}

/* Fisher-Yates with a seeded generator (Lemire's bounded draw, bias-free enough for
 * shuffling: the bias is below 2^-32 for n < 2^32). Stream formats' shard order only. */
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

/* The round function: murmur3's 64-bit finaliser, a full-avalanche mix. */
static inline uint64_t perm_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

void sampler_perm_init(struct sampler_perm *p, uint64_t n, uint64_t seed)
{
	unsigned bits = 0;

	memset(p, 0, sizeof(*p));
	if (n < 2 || seed == 0)
		return; /* identity */
	while (bits < 64 && (n - 1) >> bits)
		bits++;
	p->n = n;
	p->lo_bits = bits / 2;
	p->hi_bits = bits - p->lo_bits;
	for (int r = 0; r < SAMPLER_PERM_ROUNDS; r++)
		p->key[r] = splitmix64(&seed);
}

static inline uint64_t perm_mask(unsigned bits)
{
	return bits >= 64 ? ~0ull : (1ull << bits) - 1;
}

/* An unbalanced Feistel network: the rounds alternately xor the high half with a keyed mix of
 * the low half and the low half with one of the high half; each round is its own inverse, so
 * the whole is a bijection of [0, 2^bits). Values that land at n or above walk the cycle on
 * until they fall below n: a bijection of [0, n), in fewer than two steps on average since
 * 2^bits < 2n. */
uint64_t sampler_perm_apply(const struct sampler_perm *p, uint64_t x)
{
	if (!p->n)
		return x;
	uint64_t mlo = perm_mask(p->lo_bits), mhi = perm_mask(p->hi_bits);
	do {
		uint64_t hi = x >> p->lo_bits, lo = x & mlo;
		for (int r = 0; r < SAMPLER_PERM_ROUNDS; r += 2) {
			hi ^= perm_mix(lo ^ p->key[r]) & mhi;
			lo ^= perm_mix(hi ^ p->key[r + 1]) & mlo;
		}
		x = (hi << p->lo_bits) | lo;
	} while (x >= p->n);
	return x;
}

/* [reader] shuffle_seed, or the dataset's seed when it is 0. */
static uint64_t sampler_seed(const struct config *cfg)
{
	return (uint64_t)(cfg->reader.shuffle_seed ? cfg->reader.shuffle_seed : cfg->dataset.seed);
}

int sampler_init(struct sampler *s, struct run *run)
{
	const struct config *cfg = &run->cfg;
	uint64_t seed = sampler_seed(cfg);

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

/* Files rank r owns (i % P == r). */
static uint64_t rank_nfiles(const struct dataset *ds, int r, int nranks)
{
	return (uint32_t)r < ds->nfiles
		   ? (ds->nfiles - (uint32_t)r + (uint32_t)nranks - 1) / (uint32_t)nranks
		   : 0;
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
	if (ds->spf) /* every file holds spf samples: count the files */
		return rank_nfiles(ds, r, nranks) * ds->spf;
	for (uint32_t i = (uint32_t)r; i < ds->nfiles; i += (uint32_t)nranks)
		n += dataset_file_samples(ds, i);
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

/* Stream formats: the shards rank `rank` reads in `epoch` (i % nranks == rank), in order. */
static int rank_files(const struct sampler *s, struct run *run, int epoch, int rank, int nranks,
		      uint64_t **out, uint64_t *nout)
{
	const struct dataset *ds = &run->ds;
	uint64_t fseed = run->cfg.reader.file_shuffle == SHUFFLE_OFF ? 0 : epoch_seed(s, epoch, 1);
	uint64_t own = rank_nfiles(ds, rank, nranks);
	uint64_t *files = malloc((own ? own : 1) * sizeof(*files)), nf = 0;

	if (!files)
		return run_fail(run, -ENOMEM, "out of memory");
	for (uint32_t i = (uint32_t)rank; i < ds->nfiles; i += (uint32_t)nranks)
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
	return (int)run->read_threads; /* read_threads = auto resolved (cpus_read_threads) */
}

static uint64_t stream_steps(struct run *run, const uint64_t *files, uint64_t nf, uint64_t batch)
{
	int w = stream_threads(run);
	uint64_t steps = 0;

	for (int t = 0; t < w; t++) {
		uint64_t n = 0;
		for (uint64_t j = (uint64_t)t; j < nf; j += (uint64_t)w)
			n += dataset_file_samples(&run->ds, (uint32_t)files[j]);
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
		total += dataset_file_samples(ds, (uint32_t)files[j]);
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
			n += dataset_file_samples(ds, (uint32_t)files[j]);
		streams[t] = malloc((n ? n : 1) * sizeof(**streams));
		if (!streams[t]) {
			rc = run_fail(run, -ENOMEM, "out of memory for the sample order");
			goto out;
		}
		for (uint64_t j = (uint64_t)t; j < nf; j += (uint64_t)w)
			for (uint64_t k = 0; k < dataset_file_samples(ds, (uint32_t)files[j]); k++)
				streams[t][len[t]++] =
				    dataset_file_first(ds, (uint32_t)files[j]) + k;
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
	if ((run->format->caps & FORMAT_CAP_STREAM) && run->ds.spf) {
		/* Every shard holds spf samples: thread t streams every w-th of the rank's shards,
		 * whatever their order. */
		uint64_t nf = rank_nfiles(&run->ds, r, nranks), w = (uint64_t)stream_threads(run);
		uint64_t st = 0;

		for (uint64_t t = 0; t < w && t < nf; t++)
			st += steps_for((nf - t + w - 1) / w * run->ds.spf, s->batch,
					run->cfg.reader.drop_last);
		return st;
	}
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

/* Keys of the epoch's permutations: the same on every rank for the shared list, mixed with the
 * rank for its own list (per_rank), so ranks do not walk their files in lockstep. */
static uint64_t list_seed(const struct sampler *s, int epoch, uint64_t salt, bool shared, int rank)
{
	uint64_t x = epoch_seed(s, epoch, salt);

	if (!shared) {
		x ^= ((uint64_t)rank + 1) * 0xd1342543de82ef95ull;
		splitmix64(&x);
	}
	return x ? x : 1; /* 0 means "no shuffle" to sampler_perm_init */
}

/* List formats: the rank's list (all files when shared, its own when per_rank), its
 * permutations and its block; nothing per sample is stored. */
static int list_deal(struct sampler *s, struct run *run, int epoch, int rank, int nranks)
{
	const struct config *cfg = &run->cfg;
	const struct dataset *ds = &run->ds;
	bool shared = cfg->dataset.file_access == FILE_ACCESS_SHARED;
	bool sshuf = cfg->reader.sample_shuffle != SHUFFLE_OFF;
	bool fshuf = cfg->reader.file_shuffle != SHUFFLE_OFF && !sshuf;
	uint64_t nlist = 0;

	s->ds = ds;
	s->file0 = shared ? 0 : (uint32_t)rank;
	s->fstride = shared ? 1 : (uint32_t)nranks;
	s->nlfiles =
	    s->file0 < ds->nfiles ? (ds->nfiles - s->file0 + s->fstride - 1) / s->fstride : 0;
	sampler_perm_init(&s->fperm, s->nlfiles, fshuf ? list_seed(s, epoch, 1, shared, rank) : 0);
	s->spf = s->nlfiles ? dataset_file_samples(ds, s->file0) : 0;
	for (uint32_t k = 0; k < s->nlfiles; k++) {
		uint64_t m = dataset_file_samples(ds, s->file0 + k * s->fstride);
		nlist += m;
		if (m != s->spf)
			s->spf = 0;
	}
	if (!s->spf && s->nlfiles) {
		/* Uneven files: prefix sums in read order (one per file of the list). */
		s->prefix = malloc(((size_t)s->nlfiles + 1) * sizeof(*s->prefix));
		if (!s->prefix)
			return run_fail(run, -ENOMEM,
					"out of memory for the file list (%" PRIu32 " files)",
					s->nlfiles);
		s->prefix[0] = 0;
		for (uint32_t k = 0; k < s->nlfiles; k++) {
			uint64_t f = s->file0 + sampler_perm_apply(&s->fperm, k) * s->fstride;
			s->prefix[k + 1] = s->prefix[k] + dataset_file_samples(ds, (uint32_t)f);
		}
	}
	sampler_perm_init(&s->sperm, nlist, sshuf ? list_seed(s, epoch, 2, shared, rank) : 0);
	uint64_t lo = 0, hi = nlist;
	if (shared) {
		uint64_t p = (uint64_t)nranks;
		lo = (uint64_t)(((unsigned __int128)nlist * (uint64_t)rank) / p);
		hi = (uint64_t)(((unsigned __int128)nlist * (uint64_t)(rank + 1)) / p);
	}
	s->base = lo;
	s->steps = steps_for(hi - lo, s->batch, cfg->reader.drop_last);
	s->n = cfg->reader.drop_last ? s->steps * s->batch : hi - lo;
	return 0;
}

static void sampler_clear(struct sampler *s)
{
	free(s->order);
	free(s->bounds);
	free(s->owner);
	free(s->prefix);
	s->order = s->bounds = s->prefix = NULL;
	s->owner = NULL;
	s->ds = NULL;
	memset(&s->sperm, 0, sizeof(s->sperm));
	memset(&s->fperm, 0, sizeof(s->fperm));
}

int sampler_epoch(struct sampler *s, struct run *run, int epoch, int rank, int nranks)
{
	const struct config *cfg = &run->cfg;
	bool stream = run->format->caps & FORMAT_CAP_STREAM;
	int rc;

	sampler_clear(s);
	if (stream) {
		uint64_t sseed =
		    cfg->reader.sample_shuffle == SHUFFLE_OFF ? 0 : epoch_seed(s, epoch, 2);
		uint64_t *files = NULL, nf = 0;
		if ((rc = rank_files(s, run, epoch, rank, nranks, &files, &nf)) < 0)
			return rc;
		rc = stream_deal(s, run, files, nf, sseed);
		free(files);
	} else {
		rc = list_deal(s, run, epoch, rank, nranks);
	}
	if (rc < 0)
		return rc;
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

uint64_t sampler_sample(const struct sampler *s, uint64_t i)
{
	if (s->order)
		return s->order[i];
	uint64_t x = sampler_perm_apply(&s->sperm, s->base + i), k, off;
	if (s->spf) {
		k = x / s->spf;
		off = x % s->spf;
	} else {
		uint32_t lo = 0, hi = s->nlfiles; /* the last k with prefix[k] <= x */
		while (hi - lo > 1) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (s->prefix[mid] <= x)
				lo = mid;
			else
				hi = mid;
		}
		k = lo;
		off = x - s->prefix[k];
	}
	uint64_t f = s->file0 + sampler_perm_apply(&s->fperm, k) * s->fstride;
	return dataset_file_first(s->ds, (uint32_t)f) + off;
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
	sampler_clear(s);
}

int sampler_check_deal(struct run *run, int nranks)
{
	const struct config *cfg = &run->cfg;
	uint64_t batch = (uint64_t)cfg->reader.batch_size, fewest = UINT64_MAX;
	int fewest_rank = 0;

	for (int r = 0; r < nranks; r++) {
		uint64_t n = rank_count(run, r, nranks);
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
		    cfg->source, fewest_rank, run->ds.nfiles, nranks,
		    cfg_choice_name("dataset", "file_access", cfg->dataset.file_access));
	if (batch > fewest)
		return run_fail(run, -FB_ECONFIG,
				"%s: batch_size (%" PRIu64 ") is larger than the %" PRIu64
				" samples rank %d reads per epoch",
				cfg->source, batch, fewest, fewest_rank);
	struct sampler probe = {.batch = batch, .shuffle_seed = sampler_seed(cfg)};
	uint64_t steps = UINT64_MAX;
	for (int r = 0; r < nranks; r++) {
		uint64_t st = rank_steps(&probe, run, 0, r, nranks);
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

int sampler_check(struct run *run)
{
	return sampler_check_deal(run, run->nranks);
}

int sampler_check_config(const struct config *cfg, int nranks, struct fb_errbuf *err)
{
	unsigned read_threads = (unsigned)cfg->reader.read_threads;
	struct run *run;
	uint64_t nfiles = (uint64_t)cfg->dataset.num_files_train;
	uint64_t spf = (uint64_t)cfg->dataset.num_samples_per_file;
	int rc = 0;

	/* Files found under generate = never are counted once they are probed. */
	if (cfg->dataset.generate == GENERATE_NEVER || !(run = calloc(1, sizeof(*run))))
		return 0;
	run->cfg = *cfg;
	run->nranks = nranks;
	run->format = format_find(cfg->dataset.format);
	run->read_threads = read_threads;
	if (run->format && (run->format->caps & FORMAT_CAP_FILE_PER_SAMPLE)) {
		nfiles *= spf;
		spf = 1;
	}
	/* Only stream formats deal by reader thread; read_threads = auto (0) is resolved from
	 * every rank's CPUs at start-up, and a stream dataset is then checked by the run. */
	if (run->format && !(run->format->caps & FORMAT_CAP_STREAM))
		run->read_threads = 1;
	if (run->format && nfiles <= UINT32_MAX && spf > 0 && run->read_threads > 0) {
		run->ds.nfiles = (uint32_t)nfiles;
		run->ds.spf = spf;
		run->ds.nsamples = nfiles * spf;
		fb_errbuf_init(&run->err);
		rc = sampler_check(run);
		if (rc == 0 && cfg->train.accelerators_per_rank > 1)
			rc =
			    sampler_check_deal(run, nranks * (int)cfg->train.accelerators_per_rank);
		if (rc < 0)
			fb_fail(err, rc, "%s", run->err.msg);
	}
	free(run);
	return rc;
}
