/* Sweeps: [sweep] value lists and ranges, the cartesian product ordered so dataset keys vary
 * slowest, the errors a user sees for bad values, the hash that guards --resume, the table
 * numbers against the points' summary.json files, the recommendation, and report.md.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "bench/config.h"
#include "bench/report.h"
#include "bench/sweep.h"
#include "bench/util.h"
#include "build_config.h"

static const struct cfg_key *key(const char *dotted)
{
	const struct cfg_key *k = cfg_find_dotted(dotted);

	assert_non_null(k);
	return k;
}

/* ---- expansion ----------------------------------------------------------------------- */

static void test_expand(void **state)
{
	static const struct {
		const char *key, *text;
		const char *want; /* values joined by '|', NULL: an error */
		const char *why;  /* part of the error */
	} cases[] = {
	    {"reader.read_threads", "1..16*2", "1|2|4|8|16", NULL},
	    {"reader.read_threads", "1..4", "1|2|3|4", NULL},
	    {"reader.read_threads", "1..16+4", "1|5|9|13", NULL},
	    {"reader.read_threads", "3..3", "3", NULL},
	    {"reader.read_threads", " 3 , 1..2 ,8", "3|1|2|8", NULL},
	    {"storage.transfer_size", "64KiB..1MiB*4", "64KiB|256KiB|1MiB", NULL},
	    {"storage.transfer_size", "4k..12k+4k", "4KiB|8KiB|12KiB", NULL},
	    {"storage.transfer_size", "1000..1002", "1000|1001|1002", NULL},
	    {"storage.stripe_count", "-1, 0, 4", "-1|0|4", NULL},
	    {"dataset.format", "raw, npy,hdf5", "raw|npy|hdf5", NULL},
	    {"train.computation_time", "1ms, 0.5s", "1ms|0.5s", NULL},
	    {"reader.read_threads", "16..1", NULL, "backwards"},
	    {"reader.read_threads", "1..8*1", NULL, "factor"},
	    {"reader.read_threads", "0..8*2", NULL, "start >= 1"},
	    {"reader.read_threads", "1..8+0", NULL, "step"},
	    {"reader.read_threads", "1..x", NULL, "range"},
	    {"reader.read_threads", "1..4*x", NULL, "step"},
	    {"dataset.format", "a..b", NULL, "integer or size"},
	    {"train.computation_time", "1ms..4ms", NULL, "integer or size"},
	    {"reader.read_threads", "1,,2", NULL, "empty"},
	    {"reader.read_threads", "", NULL, "empty"},
	    {"reader.read_threads", "1, 2, 1", NULL, "twice"},
	    {"reader.read_threads", "1..1000", NULL, "more than"},
	};
	char(*out)[SWEEP_VALUE_MAX] = calloc(SWEEP_MAX_VALUES, SWEEP_VALUE_MAX);
	char why[256], joined[1024];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = sweep_expand(cases[i].text, key(cases[i].key), out, SWEEP_MAX_VALUES, why,
				     sizeof(why));
		if (!cases[i].want) {
			if (n >= 0)
				fail_msg("'%s' expanded (%d values), expected an error",
					 cases[i].text, n);
			assert_int_equal(n, -FB_ECONFIG);
			if (!strstr(why, cases[i].why))
				fail_msg("'%s': '%s' does not say '%s'", cases[i].text, why,
					 cases[i].why);
			continue;
		}
		if (n < 0)
			fail_msg("'%s': %s", cases[i].text, why);
		joined[0] = '\0';
		for (int v = 0; v < n; v++)
			snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%s",
				 v ? "|" : "", out[v]);
		assert_string_equal(joined, cases[i].want);
	}
	free(out);
}

/* ---- the plan ------------------------------------------------------------------------- */

static int parse(struct config *cfg, const char *text, struct fb_errbuf *err)
{
	fb_errbuf_init(err);
	cfg_defaults(cfg);
	return cfg_parse_text(cfg, text, strlen(text), "sweep.ini", err);
}

static const char plan_ini[] = "[dataset]\n"			  /* 1 */
			       "format = raw\n"			  /* 2 */
			       "[reader]\n"			  /* 3 */
			       "read_threads = 2\n"		  /* 4 */
			       "[storage]\n"			  /* 5 */
			       "stripe_count = 1\n"		  /* 6 */
			       "[sweep]\n"			  /* 7 */
			       "reader.read_threads = 1, 2, 4\n"  /* 8 */
			       "dataset.format = raw, npy\n"	  /* 9 */
			       "storage.stripe_count = 1..4*2\n"; /* 10 */

static void test_plan_order(void **state)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	struct sweep_plan p;
	struct fb_errbuf err;
	char buf[512];
	long fresh = 0;

	(void)state;
	assert_int_equal(parse(cfg, plan_ini, &err), 0);
	if (sweep_plan_build(&p, cfg, 2, false, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(p.npoints, 3 * 2 * 3);
	/* Dataset keys first, each group in config order. */
	assert_string_equal(p.axes[0].key, "dataset.format");
	assert_string_equal(p.axes[1].key, "storage.stripe_count");
	assert_string_equal(p.axes[2].key, "reader.read_threads");
	assert_true(p.axes[0].dataset && p.axes[1].dataset && !p.axes[2].dataset);
	assert_false(p.axes[0].numeric);
	assert_true(p.axes[1].numeric && p.axes[2].numeric);
	/* Defaults: the values the config has outside [sweep]. */
	assert_int_equal(p.axes[0].def_index, 0);
	assert_int_equal(p.axes[1].def_index, 0);
	assert_int_equal(p.axes[2].def_index, 1);
	/* The dataset changes exactly once per dataset combination. */
	for (long i = 0; i < p.npoints; i++)
		fresh += sweep_point_new_dataset(&p, i);
	assert_int_equal(fresh, 2 * 3);
	assert_true(sweep_point_new_dataset(&p, 0));
	assert_false(sweep_point_new_dataset(&p, 1));
	assert_false(sweep_point_new_dataset(&p, 2));
	assert_true(sweep_point_new_dataset(&p, 3));
	/* Labels and folders list the keys in config order. */
	sweep_point_label(&p, 0, -1, buf, sizeof(buf));
	assert_string_equal(buf, "read_threads=1 format=raw stripe_count=1");
	sweep_point_label(&p, 17, -1, buf, sizeof(buf));
	assert_string_equal(buf, "read_threads=4 format=npy stripe_count=4");
	sweep_point_dir(&p, 4, buf, sizeof(buf));
	assert_string_equal(buf, "point-005-read_threads=2-format=raw-stripe_count=2");
	sweep_point_set(&p, 4, 1, buf, sizeof(buf));
	assert_string_equal(buf, "storage.stripe_count=2");
	sweep_point_set(&p, 4, 2, buf, sizeof(buf));
	assert_string_equal(buf, "reader.read_threads=2");
	/* Every combination appears exactly once. */
	int seen[2][3][3] = {{{0}}}, idx[CFG_MAX_SWEEP];
	for (long i = 0; i < p.npoints; i++) {
		sweep_point_index(&p, i, idx);
		seen[idx[0]][idx[1]][idx[2]]++;
	}
	for (int a = 0; a < 2; a++)
		for (int b = 0; b < 3; b++)
			for (int c = 0; c < 3; c++)
				assert_int_equal(seen[a][b][c], 1);
	sweep_plan_free(&p);
	free(cfg);
}

/* [sweep] zip: the named keys walk their lists together (one dimension), the others multiply;
 * a zip with a dataset key moves slowest, and repeated values are fine inside a zip. */
static void test_plan_zip(void **state)
{
	static const char ini[] = "[dataset]\nformat = raw\n[sweep]\n"
				  "reader.read_threads = 1, 2\n"
				  "dataset.format = raw, npy, wds\n"
				  "dataset.num_files_train = 64, 64, 2\n"
				  "zip = format, dataset.num_files_train\n";
	struct config *cfg = calloc(1, sizeof(*cfg));
	struct sweep_plan p;
	struct fb_errbuf err;
	char buf[512], h1[65], h2[65];
	int idx[CFG_MAX_SWEEP], fresh = 0;

	(void)state;
	assert_int_equal(parse(cfg, ini, &err), 0);
	if (sweep_plan_build(&p, cfg, 2, false, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(p.npoints, 3 * 2);
	assert_int_equal(p.ndims, 2);
	assert_string_equal(p.axes[0].key, "dataset.format");
	assert_string_equal(p.axes[1].key, "dataset.num_files_train");
	assert_true(p.axes[0].zipped && p.axes[1].zipped && !p.axes[2].zipped);
	for (long i = 0; i < p.npoints; i++) {
		sweep_point_index(&p, i, idx);
		assert_int_equal(idx[0], idx[1]); /* walked together */
		assert_int_equal(idx[0], i / 2);  /* slowest: the dataset changes 3 times */
		assert_int_equal(idx[2], i % 2);
		fresh += sweep_point_new_dataset(&p, i);
	}
	assert_int_equal(fresh, 3);
	sweep_point_label(&p, 5, -1, buf, sizeof(buf));
	assert_string_equal(buf, "read_threads=2 format=wds num_files_train=2");
	memcpy(h1, p.hash, 65);
	sweep_plan_free(&p);
	/* Without zip the same lists would multiply: the identity differs. */
	assert_int_equal(parse(cfg,
			       "[dataset]\nformat = raw\n[sweep]\nreader.read_threads = 1, 2\n"
			       "dataset.format = raw, npy, wds\n"
			       "dataset.num_files_train = 64, 32, 2\n",
			       &err),
			 0);
	if (sweep_plan_build(&p, cfg, 2, false, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(p.npoints, 2 * 3 * 3);
	memcpy(h2, p.hash, 65);
	assert_string_not_equal(h1, h2);
	sweep_plan_free(&p);
	free(cfg);
}

static void test_plan_errors(void **state)
{
	static const struct {
		const char *sweep; /* line 3 of the config; records are 256 KiB (default) */
		const char *want[3];
	} cases[] = {
	    {"reader.read_threads = 1, two", {"sweep.ini:3", "reader.read_threads", "two"}},
	    {"reader.read_threads = 0, 1", {"sweep.ini:3", "reader.read_threads", NULL}},
	    {"output.repetitions = 1, 2", {"sweep.ini:3", "cannot sweep", NULL}},
	    {"dataset.format = raw, nosuch", {"sweep.ini:3", "nosuch", NULL}},
	    {"storage.transfer_size = 1KiB, 1024", {"sweep.ini:3", "same value", NULL}},
	    {"reader.read_threads = 4..1", {"sweep.ini:3", "backwards", NULL}},
	    /* Valid values, impossible point: found before anything runs. */
	    {"storage.transfer_size = 1KiB, 1MiB", {"sweep point 2", "transfer_size", NULL}},
	    /* zip: lengths, names, and two positions making one point. */
	    {"dataset.format = raw, npy\ndataset.num_files_train = 4, 8, 16\n"
	     "zip = format, num_files_train",
	     {"sweep.ini:5: [sweep] zip: dataset.format has 2 values (line 3)",
	      "dataset.num_files_train has 3 (line 4)", NULL}},
	    {"dataset.format = raw, npy\nzip = format, nosuch",
	     {"sweep.ini:4", "'nosuch' is not a swept key", NULL}},
	    {"dataset.format = raw, npy\nzip = format", {"sweep.ini:4", "zip names one key", NULL}},
	    {"dataset.format = raw, raw\ndataset.num_files_train = 4, 4\n"
	     "zip = format, num_files_train",
	     {"sweep.ini:5", "values 1 and 2 of the zipped keys are the same point", NULL}},
	    {"dataset.format = raw, npy, raw\nreader.read_threads = 1, 2, 1",
	     {"sweep.ini:3", "value 'raw' is listed twice", NULL}},
	};
	struct config *cfg = calloc(1, sizeof(*cfg));
	struct sweep_plan p;
	struct fb_errbuf err;
	char text[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "[dataset]\n[sweep]\n%s\n", cases[i].sweep);
		if (parse(cfg, text, &err) < 0)
			fail_msg("parse '%s': %s", cases[i].sweep, err.msg);
		assert_int_equal(sweep_plan_build(&p, cfg, 2, false, &err), -FB_ECONFIG);
		for (int w = 0; w < 3 && cases[i].want[w]; w++)
			if (!strstr(err.msg, cases[i].want[w]))
				fail_msg("'%s': '%s' does not say '%s'", cases[i].sweep, err.msg,
					 cases[i].want[w]);
	}
	free(cfg);
}

static void plan_hash(const char *text, char hex[65])
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	struct sweep_plan p;
	struct fb_errbuf err;

	assert_int_equal(parse(cfg, text, &err), 0);
	if (sweep_plan_build(&p, cfg, 2, false, &err) < 0)
		fail_msg("%s", err.msg);
	memcpy(hex, p.hash, 65);
	sweep_plan_free(&p);
	free(cfg);
}

static void test_plan_hash(void **state)
{
	char a[65], b[65], c[65], d[65], e[65];

	(void)state;
	plan_hash("[reader]\nread_threads = 2\n[sweep]\nreader.read_threads = 1, 2\n", a);
	plan_hash("[reader]\nread_threads = 2\n[sweep]\nreader.read_threads = 1..2\n", b);
	plan_hash("[reader]\nread_threads = 2\n[sweep]\nreader.read_threads = 1, 4\n", c);
	plan_hash("[reader]\nread_threads = 2\n[train]\nepochs = 3\n[sweep]\n"
		  "reader.read_threads = 1, 2\n",
		  d);
	plan_hash("[reader]\nread_threads = 2\n[output]\ndir = elsewhere\n[sweep]\n"
		  "reader.read_threads = 1, 2\n",
		  e);
	assert_string_equal(a, b);     /* same values, other spelling */
	assert_string_not_equal(a, c); /* other values */
	assert_string_not_equal(a, d); /* other config */
	assert_string_equal(a, e);     /* where results go does not matter */
}

/* ---- the table and the recommendation -------------------------------------------------- */

static char tmpdir[256];

/* fs: "ext4" (striping unsupported) or "cephfs" (a layout read back); au_pass: AU at or above
 * the threshold. */
static void write_summary_on(const char *dir, const double bw[3], double au, bool au_pass,
			     const char *fs)
{
	json_t *s = json_object(), *m = json_object(), *reps = json_array(), *eps = json_array();
	char path[512];

	mkdir(dir, 0755);
	json_object_set_new(m, "train_au_meet_expectation",
			    json_string(au_pass ? "success" : "fail"));
	json_object_set_new(s, "metric", m);
	for (int r = 0; r < 3; r++) {
		json_t *o = json_object(), *e = json_object(), *lat = json_object();

		json_object_set_new(o, "repetition", json_integer(r + 1));
		json_object_set_new(o, "bandwidth_MiB_per_second", json_real(bw[r]));
		json_object_set_new(o, "iops", json_real(bw[r] * 4));
		json_object_set_new(o, "samples_per_second", json_real(bw[r] * 2));
		json_object_set_new(o, "au_percentage", json_real(au + r));
		json_object_set_new(o, "data_wait_p99_seconds", json_real(0.001 * (r + 1)));
		json_object_set_new(o, "latency_p99_seconds", json_real(0.002 * (r + 1)));
		json_array_append_new(reps, o);
		/* p50 exists only per epoch: the reader takes it from there. */
		json_object_set_new(e, "repetition", json_integer(r + 1));
		json_object_set_new(e, "epoch", json_integer(1));
		json_object_set_new(lat, "p50", json_real(0.0001 * (r + 1)));
		json_object_set_new(e, "latency_seconds", lat);
		json_array_append_new(eps, e);
	}
	json_object_set_new(s, "repetitions", reps);
	json_object_set_new(s, "epochs", eps);
	json_t *st = json_object();
	json_object_set_new(st, "cache_resident", json_true());
	json_object_set_new(st, "fs_type", json_string(fs));
	if (strcmp(fs, "ext4") == 0) {
		json_object_set_new(st, "stripe_effective", json_string("unsupported (ext4)"));
	} else {
		json_t *se = json_object();
		json_object_set_new(se, "count", json_integer(1));
		json_object_set_new(se, "size", json_integer(1048576));
		json_object_set_new(st, "stripe_effective", se);
	}
	json_object_set_new(s, "storage", st);
	snprintf(path, sizeof(path), "%s/summary.json", dir);
	assert_int_equal(json_dump_file(s, path, 0), 0);
	json_decref(s);
}

static void write_summary(const char *dir, const double bw[3], double au)
{
	write_summary_on(dir, bw, au, false, "ext4");
}

/* A CSV cell by column name in the row of the given point (1-based). */
static double csv_cell(const char *path, int point, const char *column)
{
	char line[8192], head[8192], *save, *tok;
	FILE *f = fopen(path, "r");
	int col = -1, c = 0;

	assert_non_null(f);
	assert_non_null(fgets(head, sizeof(head), f));
	head[strcspn(head, "\n")] = '\0';
	for (tok = strtok_r(head, ",", &save); tok; tok = strtok_r(NULL, ",", &save), c++)
		if (strcmp(tok, column) == 0)
			col = c;
	if (col < 0)
		fail_msg("no column %s in %s", column, path);
	while (fgets(line, sizeof(line), f)) {
		if (atoi(line) != point)
			continue;
		fclose(f);
		/* No field of these rows holds a comma. */
		c = 0;
		for (tok = strtok_r(line, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save))
			if (c++ == col)
				return strtod(tok, NULL);
		fail_msg("row %d is short", point);
	}
	fclose(f);
	fail_msg("no row %d", point);
	return NAN;
}

static bool file_has(const char *path, const char *text)
{
	char *buf = NULL;
	bool found;

	assert_int_equal(util_read_file(path, &buf, NULL), 0);
	found = strstr(buf, text) != NULL;
	free(buf);
	return found;
}

static void test_table(void **state)
{
	static const char ini[] = "[reader]\nread_threads = 2\n[output]\nrepetitions = 3\n"
				  "[sweep]\ndataset.format = raw, npy\n"
				  "reader.read_threads = 1, 2, 4\n";
	/* raw: the best is read_threads=4, far above the default 2; npy: read_threads=1 beats
	 * the default by 3.4%, inside the noise. */
	static const double bw[6][3] = {
	    {100, 110, 120}, {200, 210, 220}, {320, 330, 340}, /* raw: 1, 2, 4 */
	    {290, 300, 310}, {280, 290, 300}, {90, 100, 110},  /* npy: 1, 2, 4 */
	};
	struct config *cfg = calloc(1, sizeof(*cfg));
	struct sweep_result res[6];
	struct sweep_reco *reco;
	struct sweep_plan p;
	struct fb_errbuf err;
	char dir[512], path[600], why[256];
	int ngroups;

	(void)state;
	assert_int_equal(parse(cfg, ini, &err), 0);
	if (sweep_plan_build(&p, cfg, 2, false, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(p.npoints, 6);
	for (long i = 0; i < 6; i++) {
		sweep_point_dir(&p, i, path, sizeof(path));
		snprintf(dir, sizeof(dir), "%s/%s", tmpdir, path);
		write_summary(dir, bw[i], 90 + i);
		if (i == 5)
			continue; /* point 6 stays unread: an interrupted sweep */
		snprintf(path, sizeof(path), "%s/summary.json", dir);
		if (sweep_read_summary(path, &res[i], why, sizeof(why)) < 0)
			fail_msg("%s", why);
	}
	memset(&res[5], 0, sizeof(res[5]));

	/* Mean and sample stddev over the repetitions of summary.json. */
	assert_true(res[0].done);
	assert_int_equal(res[0].repetitions, 3);
	assert_float_equal(res[0].m[SWM_BANDWIDTH].mean, 110, 1e-9);
	assert_float_equal(res[0].m[SWM_BANDWIDTH].stddev, 10, 1e-9);
	assert_float_equal(res[2].m[SWM_IOPS].mean, 1320, 1e-9);
	assert_float_equal(res[2].m[SWM_SAMPLES].mean, 660, 1e-9);
	assert_float_equal(res[1].m[SWM_AU].mean, 92, 1e-9);
	assert_float_equal(res[1].m[SWM_AU].stddev, 1, 1e-9);
	assert_float_equal(res[0].m[SWM_WAIT_P99].mean, 0.002, 1e-12);
	assert_float_equal(res[0].m[SWM_LAT_P99].mean, 0.004, 1e-12);
	assert_float_equal(res[0].m[SWM_LAT_P50].mean, 0.0002, 1e-12);
	assert_int_equal(res[0].m[SWM_LAT_P90].n, 0); /* not in the summary: n/a, not 0 */
	assert_true(res[0].cache_resident);

	ngroups = sweep_recommend(&p, res, NULL, &reco);
	assert_int_equal(ngroups, 2);
	assert_int_equal(reco[0].best, 2);
	assert_int_equal(reco[0].pick, 2); /* the smaller counts are reliably worse */
	assert_int_equal(reco[0].def, 1);
	assert_float_equal(reco[0].over_def.d.change, (330.0 / 210.0 - 1) * 100, 1e-9);
	assert_int_equal(reco[0].over_def.d.outcome, DECIDE_BETTER);
	assert_int_equal(reco[1].best, 3);
	assert_int_equal(reco[1].pick, 3);
	assert_int_equal(reco[1].def, 4);
	assert_float_equal(reco[1].over_def.d.change, (300.0 / 290.0 - 1) * 100, 1e-9);
	assert_int_equal(reco[1].over_def.d.outcome, DECIDE_SAME); /* +3.4 %: within 5 % */

	fb_errbuf_init(&err);
	if (sweep_write_tables(tmpdir, &p, res, reco, ngroups, NULL, "unit", NULL, &err) < 0)
		fail_msg("%s", err.msg);
	free(reco);

	/* sweep.csv: the numbers of summary.json, canonical key values, NaN for no result. */
	snprintf(path, sizeof(path), "%s/sweep.csv", tmpdir);
	assert_float_equal(csv_cell(path, 2, "bandwidth_MiB_per_second_mean"), 210, 1e-6);
	assert_float_equal(csv_cell(path, 2, "bandwidth_MiB_per_second_stddev"), 10, 1e-6);
	assert_float_equal(csv_cell(path, 3, "au_percentage_mean"), 93, 1e-6);
	assert_float_equal(csv_cell(path, 3, "reader.read_threads"), 4, 0);
	assert_float_equal(csv_cell(path, 5, "done"), 1, 0);
	assert_float_equal(csv_cell(path, 6, "done"), 0, 0);
	assert_true(isnan(csv_cell(path, 6, "bandwidth_MiB_per_second_mean")));

	/* sweep_results.json says the same. */
	snprintf(path, sizeof(path), "%s/sweep_results.json", tmpdir);
	json_t *j = json_load_file(path, 0, NULL);
	assert_non_null(j);
	json_t *pt = json_array_get(json_object_get(j, "points"), 1);
	json_t *bwj = json_object_get(json_object_get(pt, "metrics"), "bandwidth_MiB_per_second");
	assert_float_equal(json_real_value(json_object_get(bwj, "mean")), 210, 1e-9);
	assert_float_equal(json_real_value(json_object_get(bwj, "stddev")), 10, 1e-9);
	json_t *g =
	    json_array_get(json_object_get(json_object_get(j, "recommendation"), "groups"), 0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(g, "best"), "point")),
			 3);
	json_decref(j);

	/* sweep.md: the table and the sentences a user reads. */
	snprintf(path, sizeof(path), "%s/sweep.md", tmpdir);
	assert_true(file_has(path, "| point | format | read_threads | bandwidth (MiB/s)"));
	assert_true(file_has(path, "110.0 ± 10.0"));
	assert_true(file_has(path, "format=raw: recommended read_threads=4: 330.0 ± 10.0 MiB/s, "
				   "the best; over the config's read_threads=2: +57.1 %, better"));
	assert_true(file_has(path, "format=npy: recommended read_threads=1: 300.0 ± 10.0 MiB/s, "
				   "the best; over the config's read_threads=2: +3.4 %, no "
				   "reliable difference"));
	assert_true(file_has(path, "1 of 6 points have no result"));
	assert_true(file_has(path, "cache-resident"));
	assert_true(file_has(path, " not run |"));

	/* report.md of the sweep embeds the table. */
	snprintf(path, sizeof(path), "%s/sweep.json", tmpdir);
	FILE *f = fopen(path, "w");
	fprintf(f,
		"{\"workload\": \"unit\", \"config\": \"sweep.ini\", \"num_ranks\": 2, "
		"\"repetitions\": 3, \"config_hash\": \"%s\", \"points\": [1,2,3,4,5,6]}\n",
		p.hash);
	fclose(f);
	assert_int_equal(report_write_sweep(tmpdir), 0);
	snprintf(path, sizeof(path), "%s/report.md", tmpdir);
	assert_true(file_has(path, "# feedbench sweep: unit"));
	assert_true(
	    file_has(path, "`dataset.format` = raw, npy (default raw; changes the dataset)"));
	assert_true(file_has(path, "## Recommendation"));
	assert_true(file_has(
	    path, "6. [format=npy read_threads=4](point-006-format=npy-read_threads=4/report.md) — "
		  "not run"));
	sweep_plan_free(&p);
	free(cfg);
}

/* A stripe sweep of 4 points written as summaries (fs, au_pass) and read back into res. */
static void stripe_fixture(struct sweep_plan *p, struct config *cfg, struct sweep_result *res,
			   const double bw[4][3], bool au_pass, const char *fs, const char *sub)
{
	static const char ini[] = "[storage]\nstripe_count = 2\n[output]\nrepetitions = 3\n"
				  "[sweep]\nstorage.stripe_count = 1, 2, 4, 8\n";
	char dir[512], name[256], path[600], why[256];
	struct fb_errbuf err;

	assert_int_equal(parse(cfg, ini, &err), 0);
	if (sweep_plan_build(p, cfg, 2, false, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(p->npoints, 4);
	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, sub);
	mkdir(dir, 0755);
	for (long i = 0; i < 4; i++) {
		sweep_point_dir(p, i, name, sizeof(name));
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		write_summary_on(path, bw[i], au_pass ? 95 : 40, au_pass, fs);
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "/summary.json");
		if (sweep_read_summary(path, &res[i], why, sizeof(why)) < 0)
			fail_msg("%s", why);
	}
}

/* The plateau rule: stripe_count 4 reads as fast as 8 (within the noise), 2 and 1 are
 * reliably slower: 4 is recommended, not the maximum, with its gain over the config's 2 and
 * the folder's own stripe_count 1. */
static const double plateau_bw[4][3] = {
    {23, 23.5, 22.5}, {46, 47, 45}, {80, 82, 78}, {81, 83, 79}, /* stripe_count 1, 2, 4, 8 */
};

static void test_plateau(void **state)
{
	struct fs_dir_layout folder = {.known = true, .can_stripe = true, .stripe_count = 1};
	struct config *cfg = calloc(1, sizeof(*cfg));
	struct sweep_result res[4];
	struct sweep_reco *reco;
	struct sweep_plan p;
	struct fb_errbuf err;
	char path[600];

	(void)state;
	snprintf(folder.fs, sizeof(folder.fs), "cephfs");
	snprintf(folder.text, sizeof(folder.text), "ceph.dir.layout of /mnt/lab: stripe_count=1");
	stripe_fixture(&p, cfg, res, plateau_bw, false, "cephfs", "plateau");
	assert_int_equal(sweep_recommend(&p, res, &folder, &reco), 1);
	assert_int_equal(reco[0].kind, RECO_PLATEAU);
	assert_int_equal(reco[0].best, 3);
	assert_int_equal(reco[0].pick, 2);
	assert_int_equal(res[0].vs_best, DECIDE_WORSE);
	assert_int_equal(res[1].vs_best, DECIDE_WORSE);
	assert_int_equal(res[2].vs_best, DECIDE_SAME);
	assert_int_equal(reco[0].over_def.ref, 1);
	assert_int_equal(reco[0].over_def.d.outcome, DECIDE_BETTER);
	assert_int_equal(reco[0].over_fs.ref, 0);
	assert_int_equal(reco[0].over_fs.d.outcome, DECIDE_BETTER);
	fb_errbuf_init(&err);
	snprintf(path, sizeof(path), "%s/plateau", tmpdir);
	if (sweep_write_tables(path, &p, res, reco, 1, &folder, "unit", NULL, &err) < 0)
		fail_msg("%s", err.msg);
	snprintf(path, sizeof(path), "%s/plateau/sweep.md", tmpdir);
	assert_true(file_has(path, "- recommended stripe_count=4: 80.0 ± 2.00 MiB/s, the smallest "
				   "not reliably worse than the best stripe_count=8 (81.0 ± 2.00 "
				   "MiB/s; -1.2 %, no reliable difference); over the config's "
				   "stripe_count=2: +73.9 %, better"));
	assert_true(file_has(path, "; over the folder's default stripe_count=1 (ceph.dir.layout "
				   "of /mnt/lab: stripe_count=1): +247.8 %, better"));
	snprintf(path, sizeof(path), "%s/plateau/sweep_results.json", tmpdir);
	json_t *j = json_load_file(path, 0, NULL), *g;
	g = json_array_get(json_object_get(json_object_get(j, "recommendation"), "groups"), 0);
	assert_string_equal(json_string_value(json_object_get(g, "kind")), "plateau");
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(g, "recommended"), "point")), 3);
	json_decref(j);
	free(reco);
	sweep_plan_free(&p);
	free(cfg);
}

/* Every point at or above the AU threshold: the bandwidth is the emulated compute's, nothing
 * is recommended on it; on ext4 a stripe sweep recommends nothing either. */
static void test_no_recommendation(void **state)
{
	static const char *const cases[][2] = {{"cephfs", "bound"}, {"ext4", "ext4"}};
	struct config *cfg = calloc(1, sizeof(*cfg));
	struct sweep_result res[4];
	struct sweep_reco *reco;
	struct sweep_plan p;
	struct fb_errbuf err;
	char path[600];

	(void)state;
	for (int c = 0; c < 2; c++) {
		bool bound = c == 0;

		stripe_fixture(&p, cfg, res, plateau_bw, bound, cases[c][0], cases[c][1]);
		assert_int_equal(sweep_recommend(&p, res, NULL, &reco), 1);
		assert_int_equal(reco[0].kind, bound ? RECO_COMPUTE_BOUND : RECO_NOT_APPLICABLE);
		fb_errbuf_init(&err);
		snprintf(path, sizeof(path), "%s/%s", tmpdir, cases[c][1]);
		if (sweep_write_tables(path, &p, res, reco, 1, NULL, "unit", NULL, &err) < 0)
			fail_msg("%s", err.msg);
		snprintf(path, sizeof(path), "%s/%s/sweep.md", tmpdir, cases[c][1]);
		assert_true(file_has(
		    path, bound ? "- no recommendation on bandwidth_MiB_per_second: every point "
				  "kept the accelerators busy"
				: "- stripe_count: not applicable on ext4"));
		assert_false(file_has(path, "recommended stripe_count"));
		assert_false(file_has(path, "over the config's"));
		snprintf(path, sizeof(path), "%s/%s/sweep_results.json", tmpdir, cases[c][1]);
		json_t *j = json_load_file(path, 0, NULL), *g;
		g = json_array_get(json_object_get(json_object_get(j, "recommendation"), "groups"),
				   0);
		assert_true(json_is_null(json_object_get(g, "recommended")));
		assert_true(json_is_null(json_object_get(g, "gain_percentage")));
		json_decref(j);
		free(reco);
		sweep_plan_free(&p);
	}
	free(cfg);
}

/* report.md of a run, from the fixture summary.json a real run wrote. */
static void test_report_run(void **state)
{
	char src[512], dst[512], path[600], *text = NULL;
	size_t len;

	(void)state;
	snprintf(src, sizeof(src), "%s/tests/sweep/fixtures/run/summary.json",
		 FEEDBENCH_SOURCE_DIR);
	snprintf(dst, sizeof(dst), "%s/run", tmpdir);
	mkdir(dst, 0755);
	assert_int_equal(util_read_file(src, &text, &len), 0);
	snprintf(path, sizeof(path), "%s/summary.json", dst);
	FILE *f = fopen(path, "w");
	fwrite(text, 1, len, f);
	fclose(f);
	free(text);
	assert_int_equal(report_write_run(dst), 0);
	snprintf(path, sizeof(path), "%s/report.md", dst);
	assert_true(file_has(path, "# feedbench run: stripe-small"));
	assert_true(file_has(path, "| ranks, nodes | 2 ranks on 1 node"));
	assert_true(file_has(path, "**cache-resident**"));
	assert_true(file_has(path, "| stripe effective | unsupported (ext4) |"));
	assert_true(file_has(path, "| bandwidth |"));
	assert_true(file_has(path, "### Per epoch"));
	/* No pictures yet: none embedded. */
	assert_false(file_has(path, "!["));
	/* A folder without summary.json is refused, not reported. */
	assert_true(report_write_run(tmpdir) < 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/feedbench-test-sweep-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_expand),     cmocka_unit_test(test_plan_order),
	    cmocka_unit_test(test_plan_zip),   cmocka_unit_test(test_plan_errors),
	    cmocka_unit_test(test_plan_hash),  cmocka_unit_test(test_table),
	    cmocka_unit_test(test_plateau),    cmocka_unit_test(test_no_recommendation),
	    cmocka_unit_test(test_report_run),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
