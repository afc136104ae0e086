/* The sampler (workloads/sampler.h): which samples each rank reads in an epoch.
 *
 * For every rank count from 1 to 7, per_rank and shared, fixed and uneven counts, with and
 * without shuffles: each sample is read exactly once per epoch across ranks (unless drop_last
 * drops it), step counts follow the documented rule, min_steps/max_steps agree with what the
 * ranks really get, shuffled orders differ between epochs, seeded orders repeat across runs,
 * and stream formats (wds) deal whole shards. sampler_check refuses deals that cannot work.
 *
 * The sampler is computed without communication, so one process plays every rank; only
 * `random` shuffles broadcast a seed, over MPI_COMM_SELF here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <mpi.h>

#include "alloc_count.h"
#include "bench/run.h"
#include "formats/format.h"
#include "workloads/dataset.h"
#include "workloads/sampler.h"

/* A run as the runner would have it after loading the config and laying out the dataset. */
static struct run *run_new(const char *format, int nranks, const char *const *sets)
{
	struct run *run = calloc(1, sizeof(*run));
	struct fb_errbuf err;

	assert_non_null(run);
	fb_errbuf_init(&run->err);
	fb_errbuf_init(&err);
	cfg_defaults(&run->cfg);
	snprintf(run->cfg.source, sizeof(run->cfg.source), "test.ini");
	char fmt[64];
	snprintf(fmt, sizeof(fmt), "dataset.format=%s", format);
	if (cfg_set(&run->cfg, fmt, &err) < 0)
		fail_msg("%s", err.msg);
	snprintf(run->cfg.dataset.data_dir, sizeof(run->cfg.dataset.data_dir), "/nonexistent");
	for (size_t i = 0; sets && sets[i]; i++) {
		fb_errbuf_init(&err);
		if (cfg_set(&run->cfg, sets[i], &err) < 0)
			fail_msg("--set %s: %s", sets[i], err.msg);
	}
	/* read_threads = auto is resolved by the train workload from the CPUs; here 2. */
	run->read_threads =
	    run->cfg.reader.read_threads > 0 ? (unsigned)run->cfg.reader.read_threads : 2;
	run->comm = MPI_COMM_SELF;
	run->rank = 0;
	run->nranks = nranks;
	run->format = format_find(format);
	if (!run->format)
		return NULL;
	if (dataset_layout(run, &run->ds) < 0)
		fail_msg("dataset_layout: %s", run->err.msg);
	return run;
}

static void run_free(struct run *run)
{
	if (!run)
		return;
	dataset_free(run, &run->ds);
	free(run);
}

/* Deals one epoch to every rank and checks the rule; returns the per-rank orders (owned by the
 * caller) concatenated in rank order, with *total samples read. */
static uint64_t *deal_epoch(struct run *run, struct sampler *s, int epoch, uint64_t *total)
{
	int P = run->nranks;
	uint64_t N = run->ds.nsamples, B = (uint64_t)run->cfg.reader.batch_size;
	bool drop = run->cfg.reader.drop_last;
	uint64_t *out = malloc((N ? N : 1) * sizeof(*out));
	uint8_t *seen = calloc(N ? N : 1, 1);
	uint64_t n = 0, min_steps = UINT64_MAX, max_steps = 0, dropped = 0;

	assert_non_null(out);
	assert_non_null(seen);
	uint64_t *steps = calloc((size_t)P, sizeof(*steps));
	for (int r = 0; r < P; r++) {
		if (sampler_epoch(s, run, epoch, r, P) < 0)
			fail_msg("sampler_epoch rank %d: %s", r, run->err.msg);
		/* What the rule gives this rank before drop_last. */
		uint64_t have = 0;
		bool stream = run->format->caps & FORMAT_CAP_STREAM;
		if (run->cfg.dataset.file_access == FILE_ACCESS_SHARED && !stream)
			have = N * (uint64_t)(r + 1) / (uint64_t)P - N * (uint64_t)r / (uint64_t)P;
		else
			for (uint32_t f = (uint32_t)r; f < run->ds.nfiles; f += (uint32_t)P)
				have += dataset_file_samples(&run->ds, f);
		uint64_t want_steps = drop ? have / B : (have + B - 1) / B;
		if (stream) {
			/* Shards dealt round-robin to the reader threads; each thread makes its
			 * own batches, so each thread's last batch may be partial. */
			uint64_t T = run->read_threads, k = 0;
			uint64_t *per = calloc(T, sizeof(*per));
			for (uint32_t f = (uint32_t)r; f < run->ds.nfiles; f += (uint32_t)P, k++)
				per[k % T] += dataset_file_samples(&run->ds, f);
			want_steps = 0;
			have = 0;
			for (uint64_t t = 0; t < T; t++) {
				want_steps += drop ? per[t] / B : (per[t] + B - 1) / B;
				have += per[t];
			}
			free(per);
		}
		if (s->steps != want_steps)
			fail_msg("P=%d rank %d: %llu steps for %llu samples, batch %llu; want %llu",
				 P, r, (unsigned long long)s->steps, (unsigned long long)have,
				 (unsigned long long)B, (unsigned long long)want_steps);
		uint64_t want_n = drop ? want_steps * B : have;
		if (stream && !drop)
			want_n = have;
		if (s->n != want_n)
			fail_msg("P=%d rank %d: reads %llu samples, want %llu", P, r,
				 (unsigned long long)s->n, (unsigned long long)want_n);
		dropped += have - want_n;
		steps[r] = s->steps;
		/* Batches cover order[0, n) in steps, each full but the last (stream formats:
		 * each full but the last of each reader thread; all full with drop_last). */
		uint64_t covered = 0;
		for (uint64_t st = 0; st < s->steps; st++) {
			uint64_t first, count;
			sampler_batch(s, st, &first, &count);
			assert_int_equal(first, covered);
			assert_true(count >= 1 && count <= B);
			if ((!stream && st + 1 < s->steps) || drop)
				assert_int_equal(count, B);
			covered += count;
		}
		assert_int_equal(covered, s->n);
		uint64_t first, count;
		sampler_batch(s, s->steps, &first, &count);
		assert_int_equal(count, 0);
		for (uint64_t i = 0; i < s->n; i++) {
			uint64_t g = sampler_sample(s, i);
			if (g >= N)
				fail_msg("P=%d rank %d: sample %llu of %llu", P, r,
					 (unsigned long long)g, (unsigned long long)N);
			if (seen[g]++)
				fail_msg("P=%d epoch %d: sample %llu read twice (rank %d)", P,
					 epoch, (unsigned long long)g, r);
			/* per_rank and stream: a rank reads only from its own files. */
			if (run->cfg.dataset.file_access == FILE_ACCESS_PER_RANK ||
			    (run->format->caps & FORMAT_CAP_STREAM)) {
				uint64_t idx;
				uint32_t fi = dataset_index_of(&run->ds, g, &idx);
				if ((int)(fi % (uint32_t)P) != r)
					fail_msg("P=%d: rank %d reads sample %llu of file %u", P, r,
						 (unsigned long long)g, fi);
			}
			out[n++] = g;
		}
		if (s->steps < min_steps)
			min_steps = s->steps;
		if (s->steps > max_steps)
			max_steps = s->steps;
	}
	/* Every rank's view of min/max steps is the same and true. */
	for (int r = 0; r < P; r++) {
		assert_int_equal(sampler_epoch(s, run, epoch, r, P), 0);
		assert_int_equal(s->min_steps, min_steps);
		assert_int_equal(s->max_steps, max_steps);
	}
	if (!drop && n != N)
		fail_msg("P=%d epoch %d: %llu of %llu samples read", P, epoch,
			 (unsigned long long)n, (unsigned long long)N);
	if (drop && n + dropped != N)
		fail_msg("P=%d drop_last: %llu read + %llu dropped != %llu", P,
			 (unsigned long long)n, (unsigned long long)dropped, (unsigned long long)N);
	free(steps);
	free(seen);
	*total = n;
	return out;
}

struct layout {
	const char *files, *spf, *batch;
};

/* Even and uneven shapes: 7 files on 4 ranks, 13 samples, files fewer than ranks (shared),
 * more files than the largest rank count. */
static const struct layout layouts[] = {
    {"8", "16", "4"}, {"7", "5", "3"},	{"1", "13", "2"}, {"13", "1", "1"}, {"3", "7", "2"},
    {"16", "3", "5"}, {"5", "11", "1"}, {"17", "4", "2"}, {"23", "3", "1"},
};

static const char *const shuffles[][2] = {
    {"off", "off"},	  {"seed", "off"},   {"off", "seed"},	{"seed", "seed"},
    {"random", "random"}, {"random", "off"}, {"off", "random"},
};

/* Bring-your-own data has files of different sizes: file i gets 1 + (5i + spf) % (2 spf + 1)
 * samples (1 to 2 spf + 1), so the sampler's uneven path (prefix sums) is dealt too. */
static void make_uneven(struct run *run)
{
	struct dataset *ds = &run->ds;
	uint64_t spf = ds->nfiles ? dataset_file_samples(ds, 0) : 1, first = 0;

	free(ds->first);
	ds->first = malloc(((size_t)ds->nfiles + 1) * sizeof(*ds->first));
	assert_non_null(ds->first);
	for (uint32_t i = 0; i < ds->nfiles; i++) {
		ds->first[i] = first;
		first += 1 + (5 * (uint64_t)i + spf) % (2 * spf + 1);
	}
	ds->first[ds->nfiles] = first;
	ds->spf = 0;
	for (uint32_t k = 0; k < ds->nheld; k++) {
		ds->files[k].nsamples = dataset_file_samples(ds, ds->files[k].index);
		ds->files[k].first = dataset_file_first(ds, ds->files[k].index);
	}
	ds->nsamples = first;
}

/* Returns how many deals were checked, so a test cannot pass by refusing everything. Every
 * rank count from 1 to 17, every layout, every shuffle mode, three epochs each. */
static int check_all(const char *access, bool drop, bool uneven)
{
	int checked = 0;

	for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
		for (size_t sh = 0; sh < sizeof(shuffles) / sizeof(shuffles[0]); sh++) {
			for (int P = 1; P <= 17; P++) {
				char a[64], b[64], c[64], d[64], e[64], f[64], g[64];
				snprintf(a, sizeof(a), "dataset.file_access=%s", access);
				snprintf(b, sizeof(b), "dataset.num_files_train=%s",
					 layouts[l].files);
				snprintf(c, sizeof(c), "dataset.num_samples_per_file=%s",
					 layouts[l].spf);
				snprintf(d, sizeof(d), "reader.batch_size=%s", layouts[l].batch);
				snprintf(e, sizeof(e), "reader.file_shuffle=%s", shuffles[sh][0]);
				snprintf(f, sizeof(f), "reader.sample_shuffle=%s", shuffles[sh][1]);
				snprintf(g, sizeof(g), "reader.drop_last=%s",
					 drop ? "true" : "false");
				const char *const sets[] = {
				    a, b, c, d, e, f, g, "train.exclude_start_steps=0", NULL};
				struct run *run = run_new("raw", P, sets);
				struct sampler s;
				if (uneven)
					make_uneven(run);
				/* per_rank with fewer files than ranks: sampler_check refuses it.
				 */
				if (sampler_check(run) < 0) {
					bool per_rank = strcmp(access, "per_rank") == 0;
					if ((uint64_t)P >
					    (per_rank ? run->ds.nfiles : run->ds.nsamples)) {
						assert_non_null(strstr(run->err.msg, "no samples"));
					} else if (!strstr(run->err.msg, "batch_size") &&
						   !strstr(run->err.msg, "exclude_start_steps")) {
						fail_msg("unexpected refusal: %s", run->err.msg);
					}
					run_free(run);
					continue;
				}
				assert_int_equal(sampler_init(&s, run), 0);
				for (int ep = 0; ep < 3; ep++) {
					uint64_t n;
					free(deal_epoch(run, &s, ep, &n));
				}
				checked++;
				sampler_free(&s);
				run_free(run);
			}
		}
	}
	return checked;
}

static void test_per_rank(void **state)
{
	(void)state;
	assert_true(check_all("per_rank", false, false) > 500);
}

static void test_shared(void **state)
{
	(void)state;
	assert_true(check_all("shared", false, false) > 750);
}

static void test_per_rank_drop_last(void **state)
{
	(void)state;
	assert_true(check_all("per_rank", true, false) > 500);
}

static void test_shared_drop_last(void **state)
{
	(void)state;
	assert_true(check_all("shared", true, false) > 750);
}

/* Files of different sample counts (bring your own data), both access modes, with and
 * without drop_last. */
static void test_uneven_files(void **state)
{
	(void)state;
	assert_true(check_all("per_rank", false, true) > 450);
	assert_true(check_all("shared", false, true) > 850);
	assert_true(check_all("per_rank", true, true) > 450);
	assert_true(check_all("shared", true, true) > 850);
}

/* The documented shared rule: rank r takes [r*N/P, (r+1)*N/P) of the (unshuffled) list. */
static void test_shared_blocks(void **state)
{
	const char *const sets[] = {"dataset.file_access=shared", "dataset.num_files_train=1",
				    "dataset.num_samples_per_file=13", "reader.batch_size=2", NULL};
	struct run *run = run_new("raw", 4, sets);
	struct sampler s;
	static const uint64_t lo[] = {0, 3, 6, 9}, cnt[] = {3, 3, 3, 4};

	(void)state;
	assert_int_equal(sampler_check(run), 0);
	assert_int_equal(sampler_init(&s, run), 0);
	for (int r = 0; r < 4; r++) {
		assert_int_equal(sampler_epoch(&s, run, 0, r, 4), 0);
		assert_int_equal(s.n, cnt[r]);
		for (uint64_t i = 0; i < s.n; i++)
			assert_int_equal(sampler_sample(&s, i), lo[r] + i);
		assert_int_equal(s.steps, cnt[r] == 4 ? 2 : 2);
		assert_int_equal(s.min_steps, 2);
		assert_int_equal(s.max_steps, 2);
	}
	sampler_free(&s);
	run_free(run);
}

/* 7 files on 4 ranks, per_rank: ranks 0-2 own 2 files, rank 3 owns 1 (i % P == r). */
static void test_per_rank_owners(void **state)
{
	const char *const sets[] = {"dataset.num_files_train=7", "dataset.num_samples_per_file=4",
				    "reader.batch_size=3", NULL};
	struct run *run = run_new("raw", 4, sets);
	struct sampler s;

	(void)state;
	assert_int_equal(sampler_check(run), 0);
	assert_int_equal(sampler_init(&s, run), 0);
	for (int r = 0; r < 4; r++) {
		assert_int_equal(sampler_epoch(&s, run, 0, r, 4), 0);
		assert_int_equal(s.n, r < 3 ? 8 : 4);
		assert_int_equal(s.steps, r < 3 ? 3 : 2);
		assert_int_equal(s.min_steps, 2);
		assert_int_equal(s.max_steps, 3);
		/* Unshuffled: the owned files in index order, samples in file order. */
		assert_int_equal(sampler_sample(&s, 0), (uint64_t)r * 4);
	}
	sampler_free(&s);
	run_free(run);
}

static bool same_order(const uint64_t *a, const uint64_t *b, uint64_t n)
{
	return memcmp(a, b, n * sizeof(*a)) == 0;
}

/* Shuffled: epochs differ; seed: the same across runs; off: the same every epoch. */
static void test_shuffle_orders(void **state)
{
	static const char *const modes[] = {"per_rank", "shared"};

	(void)state;
	for (size_t m = 0; m < 2; m++) {
		char acc[64];
		snprintf(acc, sizeof(acc), "dataset.file_access=%s", modes[m]);
		const char *const seeded[] = {acc,
					      "dataset.num_files_train=6",
					      "dataset.num_samples_per_file=20",
					      "reader.sample_shuffle=seed",
					      "reader.file_shuffle=seed",
					      NULL};
		const char *const other_seed[] = {acc,
						  "dataset.num_files_train=6",
						  "dataset.num_samples_per_file=20",
						  "reader.sample_shuffle=seed",
						  "reader.file_shuffle=seed",
						  "dataset.seed=7",
						  NULL};
		const char *const off[] = {acc, "dataset.num_files_train=6",
					   "dataset.num_samples_per_file=20", NULL};
		struct run *r1 = run_new("raw", 3, seeded), *r2 = run_new("raw", 3, seeded);
		struct run *r3 = run_new("raw", 3, other_seed), *r4 = run_new("raw", 3, off);
		struct sampler s1, s2, s3, s4;
		uint64_t n, *a0, *a1, *b0, *c0, *d0, *d1;

		assert_int_equal(sampler_init(&s1, r1), 0);
		assert_int_equal(sampler_init(&s2, r2), 0);
		assert_int_equal(sampler_init(&s3, r3), 0);
		assert_int_equal(sampler_init(&s4, r4), 0);
		a0 = deal_epoch(r1, &s1, 0, &n);
		a1 = deal_epoch(r1, &s1, 1, &n);
		b0 = deal_epoch(r2, &s2, 0, &n);
		c0 = deal_epoch(r3, &s3, 0, &n);
		d0 = deal_epoch(r4, &s4, 0, &n);
		d1 = deal_epoch(r4, &s4, 1, &n);
		assert_int_equal(n, 120);
		if (same_order(a0, a1, n))
			fail_msg("%s: seeded shuffle gives the same order in epochs 1 and 2",
				 modes[m]);
		if (!same_order(a0, b0, n))
			fail_msg("%s: the same seed gives another order in another run", modes[m]);
		if (same_order(a0, c0, n))
			fail_msg("%s: another seed gives the same order", modes[m]);
		if (!same_order(d0, d1, n))
			fail_msg("%s: no shuffle, yet the order changes between epochs", modes[m]);
		for (uint64_t i = 0; i < n; i++) /* unshuffled per_rank/shared: file order */
			if (m == 1)
				assert_int_equal(d0[i], i);
		free(a0);
		free(a1);
		free(b0);
		free(c0);
		free(d0);
		free(d1);
		sampler_free(&s1);
		sampler_free(&s2);
		sampler_free(&s3);
		sampler_free(&s4);
		run_free(r1);
		run_free(r2);
		run_free(r3);
		run_free(r4);
	}
}

/* file_shuffle alone reorders whole files: samples of a file stay together and in order. */
static void test_file_shuffle_only(void **state)
{
	const char *const sets[] = {"dataset.num_files_train=10", "dataset.num_samples_per_file=5",
				    "reader.file_shuffle=seed", "dataset.file_access=shared", NULL};
	struct run *run = run_new("raw", 1, sets);
	struct sampler s;
	uint64_t n, *o;
	bool moved = false;

	(void)state;
	assert_int_equal(sampler_init(&s, run), 0);
	o = deal_epoch(run, &s, 0, &n);
	for (uint64_t i = 0; i < n; i += 5) {
		assert_int_equal(o[i] % 5, 0);
		for (uint64_t k = 1; k < 5; k++)
			assert_int_equal(o[i + k], o[i] + k);
		moved |= o[i] != i;
	}
	assert_true(moved);
	free(o);
	sampler_free(&s);
	run_free(run);
}

/* Stream formats (wds), the rule of sampler.h: shards owned like per_rank files (also when
 * file_access = shared), dealt round-robin to the rank's reader threads; each thread streams its
 * shards in order and makes its own batches; the trainer takes them round-robin, a finished
 * thread dropping out. Unshuffled, the deal is known exactly; with a shuffle buffer of 4 each
 * thread's samples keep their batches' owners and move at most 3 places earlier. */
static void check_stream(int P, uint64_t T, bool shuffled, bool shared)
{
	const uint64_t F = 5, SPF = 9, B = 2;
	char threads[64];
	snprintf(threads, sizeof(threads), "reader.read_threads=%llu", (unsigned long long)T);
	const char *const sets[] = {
	    "dataset.num_files_train=5",
	    "dataset.num_samples_per_file=9",
	    "reader.batch_size=2",
	    shared ? "dataset.file_access=shared" : "dataset.file_access=per_rank",
	    shuffled ? "reader.sample_shuffle=seed" : "reader.sample_shuffle=off",
	    "format.wds.shuffle_buffer=4",
	    threads,
	    NULL};
	struct run *run = run_new("wds", P, sets);
	struct sampler s;
	uint64_t n;

	assert_int_equal(sampler_check(run), 0);
	assert_int_equal(sampler_init(&s, run), 0);
	free(deal_epoch(run, &s, 0, &n));
	assert_int_equal(n, F * SPF);
	for (int r = 0; r < P; r++) {
		uint64_t stream[8][64], len[8] = {0}, pos[8] = {0}, k = 0, at = 0;

		assert_int_equal(sampler_epoch(&s, run, 0, r, P), 0);
		assert_non_null(s.owner);
		for (uint64_t f = (uint64_t)r, j = 0; f < F; f += (uint64_t)P, j++)
			for (uint64_t i = 0; i < SPF; i++)
				stream[j % T][len[j % T]++] = f * SPF + i;
		for (bool more = true; more;) {
			more = false;
			for (uint64_t t = 0; t < T; t++) {
				uint64_t take = len[t] - pos[t] < B ? len[t] - pos[t] : B;
				uint64_t first, count;
				if (!take)
					continue;
				more = true;
				sampler_batch(&s, k, &first, &count);
				if (first != at || count != take || (uint64_t)s.owner[k] != t)
					fail_msg(
					    "P=%d T=%llu rank %d batch %llu: first %llu count %llu "
					    "owner %d; want %llu, %llu, thread %llu",
					    P, (unsigned long long)T, r, (unsigned long long)k,
					    (unsigned long long)first, (unsigned long long)count,
					    s.owner[k], (unsigned long long)at,
					    (unsigned long long)take, (unsigned long long)t);
				for (uint64_t c = 0; c < count; c++) {
					uint64_t g = sampler_sample(&s, first + c);
					if (!shuffled) {
						assert_int_equal(g, stream[t][pos[t] + c]);
						continue;
					}
					/* g comes from thread t's stream, at most 3 places later.
					 */
					uint64_t p = 0;
					while (p < len[t] && stream[t][p] != g)
						p++;
					if (p == len[t] || p > pos[t] + c + 3)
						fail_msg(
						    "P=%d T=%llu rank %d: sample %llu out of place",
						    P, (unsigned long long)T, r,
						    (unsigned long long)g);
				}
				pos[t] += take;
				at += take;
				k++;
			}
		}
		assert_int_equal(k, s.steps);
		assert_int_equal(at, s.n);
	}
	sampler_free(&s);
	run_free(run);
}

static void test_stream(void **state)
{
	(void)state;
	if (!format_find("wds")) {
		skip();
		return;
	}
	for (int P = 1; P <= 5; P++)
		for (uint64_t T = 1; T <= 3; T++)
			for (int sh = 0; sh < 2; sh++) {
				check_stream(P, T, sh, false);
				check_stream(P, T, sh, true);
			}
}

/* Peak bytes the sampler allocates to deal one epoch to `rank` (its state kept alive). */
static int64_t sampler_peak(struct run *run, int rank, int nranks)
{
	struct sampler s;
	int64_t base = alloc_live;

	alloc_peak = alloc_live;
	assert_int_equal(sampler_init(&s, run), 0);
	assert_int_equal(sampler_epoch(&s, run, 1, rank, nranks), 0);
	int64_t peak = alloc_peak - base;
	sampler_free(&s);
	return peak;
}

/* What the sampler that built the whole sample list on every rank allocated at 10 M samples
 * in shared mode (measured with this test before the permutation replaced it): the list of
 * all samples (80 MB) and the file list, whatever the rank count. */
#define SAMPLER_BYTES_BEFORE 80083064ll

/* Per-rank memory proportional to the rank's share: at 10 M samples (10 000 files x 1000),
 * fully shuffled, the sampler allocates at most 1/8 of what it did at 8 ranks, and no more at
 * 2P ranks than at P (strictly less where it holds anything per file it reads). */
static void test_memory(void **state)
{
	static const int access[] = {FILE_ACCESS_SHARED, FILE_ACCESS_PER_RANK};
	const char *const sets[] = {"dataset.num_files_train=10000",
				    "dataset.num_samples_per_file=1000",
				    "reader.batch_size=16",
				    "reader.file_shuffle=seed",
				    "reader.sample_shuffle=seed",
				    "dataset.record_length_bytes=4KiB",
				    NULL};
	struct run *run = run_new("raw", 8, sets); /* one layout, equal files then uneven */

	(void)state;
	for (int uneven = 0; uneven < 2; uneven++) {
		if (uneven)
			make_uneven(run);
		assert_true(run->ds.nsamples >= 10000000);
		for (size_t a = 0; a < 2; a++) {
			int64_t prev = INT64_MAX;
			run->cfg.dataset.file_access = access[a];
			for (int P = 1; P <= 16; P *= 2) {
				run->nranks = P;
				int64_t peak = sampler_peak(run, P - 1, P);
				print_message("%s%s, %d ranks: sampler peak %lld bytes\n",
					      a ? "per_rank" : "shared",
					      uneven ? " (uneven files)" : "", P, (long long)peak);
				if (P >= 8 && peak > SAMPLER_BYTES_BEFORE / P)
					fail_msg("%d ranks: %lld bytes, more than 1/%d of %lld", P,
						 (long long)peak, P, SAMPLER_BYTES_BEFORE);
				if (peak > prev || (a == 1 && uneven && peak >= prev))
					fail_msg("%d ranks: %lld bytes, not below %lld at %d ranks",
						 P, (long long)peak, (long long)prev, P / 2);
				prev = peak;
			}
		}
	}
	run_free(run);
}

/* The permutation is a bijection of [0, n) for every n, differs between keys, and looks
 * shuffled: few fixed points and few runs of consecutive values. */
static void test_permutation(void **state)
{
	static const uint64_t seeds[] = {1, 2, 0x9e3779b97f4a7c15ull};
	uint8_t *seen = malloc(70000);

	(void)state;
	assert_non_null(seen);
	for (uint64_t n = 1; n <= 70000; n = n < 300 ? n + 1 : n * 2 + 1) {
		uint64_t first[3] = {0};
		for (size_t k = 0; k < 3; k++) {
			struct sampler_perm p;
			uint64_t fixed = 0, runs = 0, prev = 0;
			sampler_perm_init(&p, n, seeds[k]);
			memset(seen, 0, n);
			for (uint64_t i = 0; i < n; i++) {
				uint64_t y = sampler_perm_apply(&p, i);
				if (y >= n || seen[y]++)
					fail_msg(
					    "n=%llu seed %zu: %llu -> %llu twice or out of range",
					    (unsigned long long)n, k, (unsigned long long)i,
					    (unsigned long long)y);
				fixed += y == i;
				runs += i > 0 && y == prev + 1;
				prev = y;
				if (i < 3)
					first[k] = first[k] * n + y;
			}
			if (n >= 1000 && (fixed > 10 || runs > 10))
				fail_msg("n=%llu: %llu fixed points, %llu consecutive pairs: not "
					 "shuffled",
					 (unsigned long long)n, (unsigned long long)fixed,
					 (unsigned long long)runs);
		}
		if (n >= 100 && (first[0] == first[1] || first[1] == first[2]))
			fail_msg("n=%llu: two keys give the same permutation",
				 (unsigned long long)n);
	}
	/* Seed 0 is no shuffle. */
	struct sampler_perm id;
	sampler_perm_init(&id, 1000, 0);
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(sampler_perm_apply(&id, i), i);
	free(seen);
}

/* random: each run draws its own seed (broadcast once, so ranks agree): two runs differ. */
static void test_random_runs_differ(void **state)
{
	const char *const sets[] = {"dataset.file_access=shared", "dataset.num_files_train=4",
				    "dataset.num_samples_per_file=50",
				    "reader.sample_shuffle=random", NULL};
	struct run *run = run_new("raw", 3, sets);
	struct sampler a, b;
	uint64_t n, *oa, *ob;

	(void)state;
	assert_int_equal(sampler_init(&a, run), 0);
	assert_int_equal(sampler_init(&b, run), 0);
	assert_true(a.shuffle_seed != b.shuffle_seed);
	oa = deal_epoch(run, &a, 0, &n);
	ob = deal_epoch(run, &b, 0, &n);
	assert_int_equal(n, 200);
	assert_true(memcmp(oa, ob, n * sizeof(*oa)) != 0);
	free(oa);
	free(ob);
	sampler_free(&a);
	sampler_free(&b);
	run_free(run);
}

struct check_case {
	const char *sets[6];
	int nranks;
	const char *msg; /* NULL: accepted */
};

/* sampler_check: what cannot work is refused with the reason, before any file is touched. */
static void test_check(void **state)
{
	static const struct check_case cases[] = {
	    {{"dataset.num_files_train=4", "dataset.num_samples_per_file=8", "reader.batch_size=8",
	      NULL},
	     2,
	     NULL},
	    {{"dataset.num_files_train=4", "dataset.num_samples_per_file=8", "reader.batch_size=17",
	      NULL},
	     2,
	     "batch_size (17) is larger than the 16 samples rank 0 reads per epoch"},
	    {{"dataset.num_files_train=3", "dataset.num_samples_per_file=8", "reader.batch_size=9",
	      NULL},
	     2,
	     "batch_size (9) is larger than the 8 samples rank 1 reads per epoch"},
	    {{"dataset.num_files_train=2", NULL}, 3, "rank 2 would read no samples"},
	    {{"dataset.num_files_train=2", "dataset.file_access=shared",
	      "dataset.num_samples_per_file=1", "reader.batch_size=1", NULL},
	     3,
	     "rank 0 would read no samples"},
	    {{"dataset.num_files_train=1", "dataset.file_access=shared",
	      "dataset.num_samples_per_file=13", "reader.batch_size=3",
	      "train.exclude_start_steps=0", NULL},
	     4,
	     NULL},
	    {{"dataset.num_files_train=1", "dataset.file_access=shared",
	      "dataset.num_samples_per_file=13", "reader.batch_size=4", NULL},
	     4,
	     "batch_size (4) is larger than the 3 samples"},
	    /* 16 samples per rank, batch 4: 4 steps; excluding 4 leaves nothing. */
	    {{"dataset.num_files_train=2", "dataset.num_samples_per_file=16", "reader.batch_size=4",
	      "train.exclude_start_steps=4", NULL},
	     2,
	     "exclude_start_steps (4) leaves no step to measure"},
	    {{"dataset.num_files_train=2", "dataset.num_samples_per_file=16", "reader.batch_size=4",
	      "train.exclude_start_steps=3", NULL},
	     2,
	     NULL},
	    /* drop_last: 10 samples, batch 4 -> 2 steps; excluding 2 leaves nothing. */
	    {{"dataset.num_files_train=1", "dataset.num_samples_per_file=10", "reader.batch_size=4",
	      "reader.drop_last=true", "train.exclude_start_steps=2", NULL},
	     1,
	     "exclude_start_steps (2) leaves no step to measure"},
	    {{"dataset.num_files_train=1", "dataset.num_samples_per_file=10", "reader.batch_size=4",
	      "train.exclude_start_steps=2", NULL},
	     1,
	     NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct check_case *c = &cases[i];
		struct run *run = run_new("raw", c->nranks, c->sets);
		int rc = sampler_check(run);

		if (!c->msg && rc != 0)
			fail_msg("case %zu refused: %s", i, run->err.msg);
		if (c->msg) {
			if (rc != -FB_ECONFIG)
				fail_msg("case %zu accepted; want '%s'", i, c->msg);
			if (!strstr(run->err.msg, c->msg))
				fail_msg("case %zu: '%s' does not say '%s'", i, run->err.msg,
					 c->msg);
			assert_non_null(strstr(run->err.msg, "test.ini"));
		}
		run_free(run);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_per_rank),
	    cmocka_unit_test(test_shared),
	    cmocka_unit_test(test_per_rank_drop_last),
	    cmocka_unit_test(test_shared_drop_last),
	    cmocka_unit_test(test_uneven_files),
	    cmocka_unit_test(test_shared_blocks),
	    cmocka_unit_test(test_per_rank_owners),
	    cmocka_unit_test(test_shuffle_orders),
	    cmocka_unit_test(test_file_shuffle_only),
	    cmocka_unit_test(test_stream),
	    cmocka_unit_test(test_check),
	    cmocka_unit_test(test_memory),
	    cmocka_unit_test(test_permutation),
	    cmocka_unit_test(test_random_runs_differ),
	};
	int rc;

	MPI_Init(&argc, &argv);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	MPI_Finalize();
	return rc;
}
