/* The dataset's file table (bench/dsfile.h, workloads/dataset.c): a rank holds entries only
 * for the files it opens, and any file's name, sample count and sizes are computed on demand.
 *
 * Names are the ones generation always wrote ("<data_dir>/<format>-<index>-of-<n><ext>"), held
 * entries are the rank's files, entries made on demand match the held ones, and the bytes the
 * layout allocates at 100 000 files fall with the rank count: at most a small constant per file
 * the rank reads (per_rank), all files only where every rank opens every file (shared,
 * collective reads).
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

/* A run as the runner has it before the layout: rank `rank` of `nranks`. */
static struct run *run_new(const char *format, int rank, int nranks, const char *const *sets)
{
	struct run *run = calloc(1, sizeof(*run));
	struct fb_errbuf err;
	char fmt[64];

	assert_non_null(run);
	fb_errbuf_init(&run->err);
	fb_errbuf_init(&err);
	cfg_defaults(&run->cfg);
	snprintf(run->cfg.source, sizeof(run->cfg.source), "test.ini");
	snprintf(fmt, sizeof(fmt), "dataset.format=%s", format);
	if (cfg_set(&run->cfg, fmt, &err) < 0)
		fail_msg("%s", err.msg);
	snprintf(run->cfg.dataset.data_dir, sizeof(run->cfg.dataset.data_dir), "/data/set");
	for (size_t i = 0; sets && sets[i]; i++) {
		fb_errbuf_init(&err);
		if (cfg_set(&run->cfg, sets[i], &err) < 0)
			fail_msg("--set %s: %s", sets[i], err.msg);
	}
	run->comm = MPI_COMM_SELF;
	run->rank = rank;
	run->nranks = nranks;
	run->format = format_find(format);
	assert_non_null(run->format);
	return run;
}

static void run_free(struct run *run)
{
	dataset_free(run, &run->ds);
	free(run);
}

/* Rank 1 of 3, 10 files of 3 samples with varying sizes: names as generation wrote them, the
 * rank's entries only (files 1, 4, 7), entries on demand equal to held ones, and totals over
 * every file. */
static void test_layout(void **state)
{
	const char *const sets[] = {"dataset.num_files_train=10", "dataset.num_samples_per_file=3",
				    "dataset.record_length_bytes=1000",
				    "dataset.record_length_bytes_stdev=300", NULL};
	struct run *run = run_new("npz", 1, 3, sets);
	struct dataset *ds = &run->ds;
	uint64_t sum = 0, max = 0;
	char buf[256], want[256], pbuf[256];

	(void)state;
	assert_int_equal(dataset_layout(run, ds), 0);
	assert_int_equal(ds->nfiles, 10);
	assert_int_equal(ds->nheld, 3);
	assert_int_equal(ds->nsamples, 30);
	for (uint32_t i = 0; i < 10; i++) {
		struct ds_file e, *held = dataset_file(ds, i);
		snprintf(want, sizeof(want), "/data/set/npz-%02u-of-10.npz", i);
		assert_string_equal(dataset_path(ds, i, buf, sizeof(buf)), want);
		assert_int_equal(dataset_entry(ds, i, &e, pbuf, sizeof(pbuf)), 0);
		assert_string_equal(e.path, want);
		assert_int_equal(e.index, i);
		assert_int_equal(e.nsamples, 3);
		assert_int_equal(e.first, 3 * i);
		sum += e.data_bytes;
		max = e.max_sample > max ? e.max_sample : max;
		if (i % 3 != 1) {
			assert_null(held);
			continue;
		}
		assert_ptr_equal(held, &ds->files[i / 3]);
		assert_string_equal(held->path, want);
		assert_int_equal(held->index, i);
		assert_int_equal(held->first, e.first);
		assert_int_equal(held->data_bytes, e.data_bytes);
		assert_int_equal(held->max_sample, e.max_sample);
		uint64_t idx;
		assert_ptr_equal(dataset_file_of(ds, 3 * i + 2, &idx), held);
		assert_int_equal(idx, 2);
	}
	assert_int_equal(sum, ds->data_bytes);
	assert_int_equal(max, ds->max_sample);
	assert_true(ds->max_sample > 1000); /* the sizes did vary */
	uint64_t idx;
	assert_int_equal(dataset_index_of(ds, 29, &idx), 9);
	assert_int_equal(idx, 2);
	assert_null(dataset_file_of(ds, 0, &idx)); /* file 0 is rank 0's */
	run_free(run);
}

/* Shared files in a shuffled list, collective reads and one rank: every rank may open every
 * file, so it holds all. */
static void test_hold_all(void **state)
{
	static const struct {
		const char *set, *set2;
		int nranks;
	} cases[] = {{"dataset.file_access=shared", "reader.sample_shuffle=seed", 4},
		     {"dataset.file_access=shared", "reader.file_shuffle=random", 4},
		     {"dataset.file_access=shared", "storage.backend=mpiio", 4},
		     {"storage.mpiio.collective=true", NULL, 4},
		     {"dataset.file_access=per_rank", NULL, 1}};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const char *const sets[] = {"dataset.num_files_train=9", cases[c].set,
					    cases[c].set2, NULL};
		struct run *run = run_new("raw", cases[c].nranks - 1, cases[c].nranks, sets);
		assert_int_equal(dataset_layout(run, &run->ds), 0);
		assert_int_equal(run->ds.nheld, 9);
		for (uint32_t i = 0; i < 9; i++)
			assert_ptr_equal(dataset_file(&run->ds, i), &run->ds.files[i]);
		run_free(run);
	}
}

/* Shared files read in list order: rank r reads samples [45 r / 4, 45 (r + 1) / 4) of 9 files
 * of 5, and holds just the files that block spans (a file on a boundary on both ranks). */
static void test_hold_block(void **state)
{
	(void)state;
	for (int r = 0; r < 4; r++) {
		const char *const sets[] = {
		    "dataset.num_files_train=9",  "dataset.num_samples_per_file=5",
		    "dataset.file_access=shared", "reader.sample_shuffle=off",
		    "reader.file_shuffle=off",	  NULL};
		struct run *run = run_new("raw", r, 4, sets);
		uint64_t lo = 45 * (uint64_t)r / 4, hi = 45 * (uint64_t)(r + 1) / 4, idx;
		assert_int_equal(dataset_layout(run, &run->ds), 0);
		assert_int_equal(run->ds.held_first, lo / 5);
		assert_int_equal(run->ds.nheld, (hi - 1) / 5 - lo / 5 + 1);
		for (uint64_t g = lo; g < hi; g++) {
			struct ds_file *f = dataset_file_of(&run->ds, g, &idx);
			assert_non_null(f);
			assert_int_equal(f->index, g / 5);
			assert_int_equal(idx, g % 5);
			assert_int_equal(f->first, g / 5 * 5);
		}
		if (lo >= 5 && lo % 5 == 0)
			assert_null(dataset_file_of(&run->ds, lo - 1, &idx));
		if (hi % 5 == 0 && hi < 45)
			assert_null(dataset_file_of(&run->ds, hi, &idx));
		assert_null(dataset_file_of(&run->ds, r < 2 ? 44 : 0, &idx));
		run_free(run);
	}
}

/* Bytes the file table took before entries were kept only for a rank's files, at 100 000
 * files: every rank held every file (a 72-byte entry and its 35-byte name in one block),
 * whatever the rank count. */
#define TABLE_BYTES_BEFORE (100000ll * (72 + 35))
/* What a held file may cost: its entry and its name. */
#define TABLE_BYTES_PER_FILE 128
#define TABLE_BYTES_FIXED    4096

static int64_t layout_peak(const char *access, const char *shuffle, int rank, int nranks,
			   uint32_t *nheld)
{
	char acc[64];
	snprintf(acc, sizeof(acc), "dataset.file_access=%s", access);
	const char *const sets[] = {"dataset.num_files_train=100000",
				    "dataset.num_samples_per_file=2",
				    "dataset.record_length_bytes=4KiB",
				    acc,
				    shuffle,
				    NULL};
	struct run *run = run_new("raw", rank, nranks, sets);
	int64_t base = alloc_live;

	alloc_peak = alloc_live;
	assert_int_equal(dataset_layout(run, &run->ds), 0);
	int64_t peak = alloc_peak - base;
	*nheld = run->ds.nheld;
	/* What summary.json reports (ranks[].file_table_bytes) is what the layout allocated,
	 * within malloc's rounding and the fixed part. */
	int64_t told = (int64_t)dataset_table_bytes(&run->ds);
	if (told > peak + TABLE_BYTES_FIXED || told < peak - TABLE_BYTES_FIXED)
		fail_msg("dataset_table_bytes %lld, the layout allocated %lld", (long long)told,
			 (long long)peak);
	run_free(run);
	return peak;
}

/* Per-rank memory proportional to the rank's share (docs/performance.md): at 100 000 generated
 * files, per_rank, the layout allocates at most TABLE_BYTES_PER_FILE per file the rank reads (plus
 * a fixed part), strictly less at 2P ranks than at P, on the first and the last rank. Shared files:
 * every rank opens every file, and holds them all, as before. */
static void test_memory(void **state)
{
	(void)state;
	for (int last = 0; last < 2; last++) {
		int64_t prev = INT64_MAX;
		for (int P = 1; P <= 16; P *= 2) {
			uint32_t nheld;
			int64_t peak = layout_peak("per_rank", NULL, last ? P - 1 : 0, P, &nheld);
			print_message("per_rank, rank %d of %d: %u files held, file table %lld "
				      "bytes (%.1f per held file; before: %lld on every rank)\n",
				      last ? P - 1 : 0, P, nheld, (long long)peak,
				      (double)peak / nheld, TABLE_BYTES_BEFORE);
			assert_int_equal(nheld, (100000 + P - 1 - (last ? P - 1 : 0)) / P);
			if (peak > (int64_t)nheld * TABLE_BYTES_PER_FILE + TABLE_BYTES_FIXED)
				fail_msg("%d ranks: %lld bytes for %u files, more than %d a file",
					 P, (long long)peak, nheld, TABLE_BYTES_PER_FILE);
			if (peak >= prev)
				fail_msg("%d ranks: %lld bytes, not below %lld at %d ranks", P,
					 (long long)peak, (long long)prev, P / 2);
			prev = peak;
		}
	}
	uint32_t nheld;
	int64_t peak = layout_peak("shared", "reader.sample_shuffle=seed", 3, 4, &nheld);
	print_message("shared, shuffled, rank 3 of 4: %u files held, file table %lld bytes\n",
		      nheld, (long long)peak);
	assert_int_equal(nheld, 100000);
	assert_true(peak <= (int64_t)nheld * TABLE_BYTES_PER_FILE + TABLE_BYTES_FIXED);
	assert_true(peak <= TABLE_BYTES_BEFORE + TABLE_BYTES_FIXED);
	/* In list order a rank holds the files of its block: falls with the rank count. */
	int64_t prev = INT64_MAX;
	for (int P = 2; P <= 16; P *= 2) {
		peak = layout_peak("shared", "reader.sample_shuffle=off", P - 1, P, &nheld);
		print_message("shared, in order, rank %d of %d: %u files held, file table %lld "
			      "bytes\n",
			      P - 1, P, nheld, (long long)peak);
		assert_int_equal(nheld, 100000 / P);
		assert_true(peak <= (int64_t)nheld * TABLE_BYTES_PER_FILE + TABLE_BYTES_FIXED);
		assert_true(peak < prev);
		prev = peak;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layout),
	    cmocka_unit_test(test_hold_all),
	    cmocka_unit_test(test_hold_block),
	    cmocka_unit_test(test_memory),
	};
	MPI_Init(NULL, NULL);
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	MPI_Finalize();
	return rc;
}
