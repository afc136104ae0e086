/* compare: Student's t and Welch's test against SciPy's numbers, the verdict of each case a
 * regression gate meets (regressed, noise, ok, improved, low confidence, missing), reading
 * summaries and sweeps, and the refusals that make two results incomparable.
 *
 * Reference values: scipy 1.x, scipy.special.betainc, scipy.stats.t.ppf and
 * scipy.stats.ttest_ind(current, baseline, equal_var=False).
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

#include "bench/compare.h"
#include "bench/errors.h"
#include "bench/util.h"

static void assert_close(double got, double want, double rel)
{
	double tol = rel * fabs(want) + 1e-300;

	if (fabs(got - want) > tol)
		fail_msg("got %.15g, want %.15g (relative tolerance %g)", got, want, rel);
}

/* ---- Student's t ------------------------------------------------------------------------ */

static void test_betainc(void **state)
{
	static const struct {
		double a, b, x, want;
	} cases[] = {
	    {0.5, 0.5, 0.3, 0.369010119565545}, {2, 3, 0.4, 0.5248},
	    {10, 0.5, 0.9, 0.15164090963471},	{1.5, 0.5, 0.99, 0.872888571569538},
	    {50, 0.5, 0.2, 9.994267861337e-37},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_close(cmp_betainc(cases[i].a, cases[i].b, cases[i].x), cases[i].want, 1e-9);
	assert_true(cmp_betainc(2, 3, 0) == 0.0);
	assert_true(cmp_betainc(2, 3, 1) == 1.0);
}

static void test_t_quantile(void **state)
{
	static const struct {
		double p, df, want;
	} cases[] = {
	    {0.975, 1, 12.7062047362},
	    {0.975, 2.5, 3.574654842},
	    {0.995, 10, 3.16927267262},
	    {0.975, 1000, 1.96233908083},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double t = cmp_t_quantile(cases[i].p, cases[i].df);
		assert_close(t, cases[i].want, 1e-8);
		/* and back: the two-sided tail at that t */
		assert_close(cmp_t_two_sided(t, cases[i].df), 2 * (1 - cases[i].p), 1e-7);
	}
}

static void test_welch(void **state)
{
	static const struct {
		double a[5];
		int na;
		double b[5];
		int nb;
		double t, p, df, lo, hi;
	} cases[] = {
	    {{897.4, 850.0, 930.1},
	     3,
	     {701.6, 720.2, 680.3},
	     3,
	     -7.39038233025,
	     0.00556936034789,
	     2.92701688912,
	     -275.570267884,
	     -108.029732116},
	    {{1, 2, 3, 4},
	     4,
	     {2, 3, 4, 5, 6},
	     5,
	     1.5666989036,
	     0.161285856289,
	     6.98076923077,
	     -0.765220281754,
	     3.76522028175},
	    {{10.0, 10.5},
	     2,
	     {10.2, 10.9, 11.1},
	     3,
	     1.30609431242,
	     0.288192656159,
	     2.80861365659,
	     -0.741090522774,
	     1.70775718944},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cmp_welch w;
		assert_int_equal(
		    cmp_welch_test(cases[i].a, cases[i].na, cases[i].b, cases[i].nb, 0.05, &w), 0);
		assert_close(w.t, cases[i].t, 1e-9);
		assert_close(w.p, cases[i].p, 1e-8);
		assert_close(w.df, cases[i].df, 1e-9);
		assert_close(w.lo, cases[i].lo, 1e-8);
		assert_close(w.hi, cases[i].hi, 1e-8);
	}
	/* One repetition: no test. Constant sides: the difference is exact. */
	struct cmp_welch w;
	double one[] = {1}, c1[] = {5, 5, 5}, c2[] = {4, 4, 4};
	assert_int_equal(cmp_welch_test(one, 1, c1, 3, 0.05, &w), -EINVAL);
	assert_int_equal(cmp_welch_test(c1, 3, c2, 3, 0.05, &w), 0);
	assert_true(w.p == 0.0 && w.lo == -1.0 && w.hi == -1.0);
	assert_int_equal(cmp_welch_test(c1, 3, c1, 3, 0.05, &w), 0);
	assert_true(w.p == 1.0);
}

/* ---- verdicts ---------------------------------------------------------------------------- */

/* cmp_judge through the decision module with the old argument list. */
static void judge(const double *b, int nb, const double *c, int nc, bool higher_better, double tol,
		  double alpha, double run_noise, bool runs, struct cmp_outcome *o)
{
	struct decide_spec s = {.higher_better = higher_better,
				.floor = tol,
				.run_noise = run_noise,
				.runs = runs,
				.alpha = alpha};
	cmp_judge(b, nb, c, nc, &s, o);
}

static void test_judge(void **state)
{
	static const struct {
		const char *what;
		double base[5];
		int nb;
		double cur[5];
		int nc;
		bool higher_better;
		double tol;
		enum cmp_verdict want;
		bool low;
	} cases[] = {
	    {"20 % slower, tight",
	     {100, 101, 99},
	     3,
	     {80, 81, 79},
	     3,
	     true,
	     10,
	     CMP_REGRESSED,
	     false},
	    {"20 % slower, noisy",
	     {100, 140, 60},
	     3,
	     {80, 120, 40},
	     3,
	     true,
	     10,
	     CMP_INCONCLUSIVE,
	     false},
	    {"5 % slower, real but small",
	     {100, 100.1, 99.9},
	     3,
	     {95, 95.1, 94.9},
	     3,
	     true,
	     10,
	     CMP_OK,
	     false},
	    {"20 % faster", {100, 101, 99}, 3, {120, 121, 119}, 3, true, 10, CMP_IMPROVED, false},
	    {"latency up 30 %",
	     {1.0, 1.01, 0.99},
	     3,
	     {1.3, 1.31, 1.29},
	     3,
	     false,
	     10,
	     CMP_REGRESSED,
	     false},
	    {"latency down 30 %",
	     {1.0, 1.01, 0.99},
	     3,
	     {0.7, 0.71, 0.69},
	     3,
	     false,
	     10,
	     CMP_IMPROVED,
	     false},
	    {"single runs beyond tolerance, no noise assumed: no spread to test",
	     {100},
	     1,
	     {85},
	     1,
	     true,
	     10,
	     CMP_INCONCLUSIVE,
	     true},
	    {"single run within tolerance", {100}, 1, {95}, 1, true, 10, CMP_OK, true},
	    {"one side single", {100, 101, 99}, 3, {85}, 1, true, 10, CMP_REGRESSED, true},
	    {"tolerance 25 %", {100, 101, 99}, 3, {80, 81, 79}, 3, true, 25, CMP_OK, false},
	    {"both zero (no compute: AU 0)", {0, 0, 0}, 3, {0, 0, 0}, 3, true, 10, CMP_OK, false},
	    {"constant sides differ",
	     {10, 10, 10},
	     3,
	     {8, 8, 8},
	     3,
	     true,
	     10,
	     CMP_REGRESSED,
	     false},
	    {"not recorded", {NAN, NAN}, 2, {1, 2}, 2, true, 10, CMP_MISSING, false},
	    {"exactly the tolerance (bucket edges)",
	     {40.96e-6},
	     1,
	     {36.864e-6},
	     1,
	     false,
	     10,
	     CMP_OK,
	     true},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cmp_outcome o;
		judge(cases[i].base, cases[i].nb, cases[i].cur, cases[i].nc, cases[i].higher_better,
		      cases[i].tol, 0.05, 0, false, &o);
		if (o.verdict != cases[i].want || o.low_confidence != cases[i].low)
			fail_msg("%s: verdict %s%s, want %s%s", cases[i].what,
				 cmp_verdict_name(o.verdict), o.low_confidence ? " (low)" : "",
				 cmp_verdict_name(cases[i].want), cases[i].low ? " (low)" : "");
	}
	/* The numbers behind a verdict. */
	struct cmp_outcome o;
	double b[] = {100, 101, 99}, c[] = {80, 81, 79};
	judge(b, 3, c, 3, true, 10, 0.05, 0, false, &o);
	assert_close(o.change_pct, -20.0, 1e-12);
	assert_true(o.p < 0.001);
	assert_true(o.ci_lo_pct < -20.0 && o.ci_hi_pct > -20.0 && o.ci_hi_pct < -10.0);
	assert_int_equal(o.base.n, 3);
	/* NAN repetitions are left out, never counted as zero. */
	double holes[] = {100, NAN, 102};
	judge(holes, 3, b, 3, true, 10, 0.05, 0, false, &o);
	assert_int_equal(o.base.n, 2);
	assert_close(o.base.mean, 101, 1e-12);
}

/* A run-to-run noise term widens the standard error; the test turns from regressed to noise. */
static void test_run_noise(void **state)
{
	double b[] = {100, 101, 99}, c[] = {80, 81, 79};
	struct cmp_welch w;
	struct cmp_outcome o;

	(void)state;
	assert_int_equal(cmp_welch_test_run_noise(b, 3, c, 3, 0.05, 0.05, &w), 0);
	/* se^2 = 1/3 + 1/3 + 5^2 + 4^2; the assumed part adds no uncertainty: df is huge */
	assert_close(w.se, sqrt(2.0 / 3.0 + 41.0), 1e-12);
	assert_close(w.t, -20.0 / sqrt(2.0 / 3.0 + 41.0), 1e-12);
	assert_true(w.df > 1e4);
	assert_close(w.p, 0.001948, 1e-2); /* two-sided normal tail at |t| = 3.098 */
	judge(b, 3, c, 3, true, 10, 0.05, 0, false, &o);
	assert_int_equal(o.verdict, CMP_REGRESSED);
	judge(b, 3, c, 3, true, 10, 0.05, 10, false, &o);
	assert_int_equal(o.verdict, CMP_INCONCLUSIVE);
	assert_close(o.p, 0.1192, 2e-2);
}

/* Several runs of a config on a side: judged over run means (SciPy: ttest_ind on the means;
 * the prediction test by hand, t = (x - m) / (s sqrt(1/k + (x/m)^2)), df = k - 1). */
static void test_runs(void **state)
{
	double base[] = {100, 104, 98, 101, 97}, one[] = {80}, three[] = {90, 93, 88};
	struct cmp_outcome o;

	(void)state;
	judge(base, 5, one, 1, true, 10, 0.05, 0, true, &o);
	assert_true(o.by_runs && o.low_confidence); /* one run: its spread borrowed */
	assert_int_equal(o.verdict, CMP_REGRESSED);
	assert_close(o.t, -7.9681907289, 1e-9);
	assert_close(o.p, 0.00134410693696, 1e-7);
	assert_close(o.df, 4, 1e-12);
	assert_close(o.ci_lo_pct, -26.9688219062, 1e-8);
	assert_close(o.ci_hi_pct, -13.0311780938, 1e-8);
	judge(base, 5, three, 3, true, 10, 0.05, 0, true, &o);
	assert_close(o.t, -5.08693651198, 1e-9);
	assert_close(o.p, 0.00461159544663, 1e-7);
	/* the same run on both sides of a single-run pair: tolerance only */
	judge(one, 1, one, 1, true, 10, 0.05, 0, true, &o);
	assert_true(o.low_confidence && o.verdict == CMP_OK);
	/* The assumed run noise is a floor: runs spread by 2.9 % (s = 2.92 on a mean of 100)
	 * count as 10 % with a 10 % floor, an assumed part: t = -20 / (10 sqrt(1/5 + 0.64)) =
	 * -2.18 on a normal tail, p = 0.029 */
	judge(base, 5, one, 1, true, 10, 0.05, 10, true, &o);
	assert_int_equal(o.verdict, CMP_REGRESSED);
	assert_close(o.p, 0.0290, 2e-2);
	assert_close(o.t, -20.0 / sqrt(100.0 / 5 + 64.0), 1e-9);
	/* A floored part is assumed, not estimated: the same verdict whether the runs agree
	 * exactly or nearly (the degrees of freedom do not jump). */
	double same[] = {100, 100}, near[] = {100, 100.000001}, lo[] = {89, 89},
	       lo_near[] = {89, 89.000001};
	struct cmp_outcome o2;
	judge(same, 2, lo, 2, true, 10, 0.05, 5, true, &o);
	judge(near, 2, lo_near, 2, true, 10, 0.05, 5, true, &o2);
	assert_int_equal(o.verdict, o2.verdict);
	assert_close(o.p, o2.p, 1e-6);
	assert_true(o.df >= 1e8);
}

static void test_metrics(void **state)
{
	(void)state;
	assert_int_equal(metric_table[metric_find("bandwidth")].m, SWM_BANDWIDTH);
	assert_true(metric_table[metric_find("bandwidth")].higher_better);
	assert_false(metric_table[metric_find("wait_p99")].higher_better);
	assert_false(metric_table[metric_find("latency_p99")].higher_better);
	assert_int_equal(metric_find("nope"), -1);
	int def = 0;
	for (int i = 0; i < metric_count; i++)
		def += metric_table[i].by_default;
	assert_int_equal(def, 6);
}

/* ---- sides and refusals ------------------------------------------------------------------ */

struct fixture {
	char dir[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/fb_test_compare_XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	util_remove_tree(f->dir);
	free(f);
	return 0;
}

struct summary_spec {
	const char *hash, *fs, *accel;
	int ranks, epochs;
	bool cached;
	double bw[3];
	double slowdown;
};

static void write_summary(const char *path, const struct summary_spec *s)
{
	FILE *f;
	char dir[512];

	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	assert_int_equal(util_mkdirs(dir, 0755), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(
	    f,
	    "{\"schema\": 1, \"workload\": \"ci\", \"run_id\": \"ci-1\", \"start\": "
	    "\"2026-11-30T10:00:00Z\", \"num_ranks\": %d, \"num_nodes\": 1,\n"
	    "\"config\": {\"train\": {\"epochs\": %d}, \"output\": {\"dir\": \"x%d\"},\n"
	    "  \"storage.faulty\": {\"read_slowdown\": %g}},\n"
	    "\"config_hash\": \"%s\", \"storage\": {\"fs_type\": \"%s\", \"cache_resident\": %s, "
	    "\"direct\": true},\n"
	    "\"accelerator\": {\"kind\": \"%s\"}, \"metric\": {},\n\"repetitions\": [",
	    s->ranks, s->epochs, s->ranks, s->slowdown, s->hash, s->fs,
	    s->cached ? "true" : "false", s->accel);
	for (int i = 0; i < 3; i++)
		fprintf(f, "%s{\"bandwidth_MiB_per_second\": %g, \"au_percentage\": 50}",
			i ? "," : "", s->bw[i]);
	fprintf(f, "]}\n");
	fclose(f);
}

static const struct summary_spec base_spec = {"aaaa1111", "ext4", "cpu",	  2,
					      2,	  false,  {100, 101, 99}, 0};

static void path_of(char *out, size_t len, const struct fixture *f, const char *name)
{
	snprintf(out, len, "%s/%s/summary.json", f->dir, name);
}

/* Loads two summary.json files and matches them. */
static void match_two(const struct fixture *f, const struct summary_spec *b,
		      const struct summary_spec *c, bool allow_cached, struct cmp_match *m)
{
	struct cmp_side sb, sc;
	char pb[256], pc[256], why[600];

	path_of(pb, sizeof(pb), f, "base");
	path_of(pc, sizeof(pc), f, "cur");
	write_summary(pb, b);
	write_summary(pc, c);
	assert_int_equal(cmp_side_load(&sb, pb, "baseline", why, sizeof(why)), 0);
	assert_int_equal(cmp_side_load(&sc, pc, "current", why, sizeof(why)), 0);
	assert_int_equal(sb.npoints, 1);
	assert_int_equal(sb.points[0].nreps, 3);
	assert_int_equal(cmp_match_sides(&sb, &sc, allow_cached, m), 0);
	cmp_side_free(&sb);
	cmp_side_free(&sc);
}

static bool has_reason(const struct cmp_match *m, const char *text)
{
	for (int i = 0; i < m->nreasons; i++)
		if (strstr(m->reasons[i], text))
			return true;
	return false;
}

static void test_refusals(void **state)
{
	struct fixture *f = *state;
	struct summary_spec c;
	struct cmp_match m;

	match_two(f, &base_spec, &base_spec, false, &m);
	assert_int_equal(m.nreasons, 0);
	assert_int_equal(m.npairs, 1);
	cmp_match_free(&m);

	c = base_spec;
	c.hash = "bbbb2222";
	c.epochs = 3;
	match_two(f, &base_spec, &c, false, &m);
	assert_true(has_reason(&m, "config differs"));
	assert_true(has_reason(&m, "train.epochs 2 vs 3"));
	cmp_match_free(&m);

	c = base_spec;
	c.ranks = 4;
	c.fs = "lustre";
	c.accel = "cuda";
	match_two(f, &base_spec, &c, false, &m);
	assert_true(has_reason(&m, "ranks differ: 2 vs 4"));
	assert_true(has_reason(&m, "file system differs: ext4 vs lustre"));
	assert_true(has_reason(&m, "accelerator differs: cpu vs cuda"));
	cmp_match_free(&m);

	c = base_spec;
	c.cached = true;
	match_two(f, &base_spec, &c, false, &m);
	assert_true(has_reason(&m, "cache-resident: the current"));
	cmp_match_free(&m);
	match_two(f, &base_spec, &c, true, &m);
	assert_int_equal(m.nreasons, 0);
	cmp_match_free(&m);

	/* Keys outside the hash (output, the faulty back-end's knobs) are a note, not a reason. */
	c = base_spec;
	c.slowdown = 0.2;
	match_two(f, &base_spec, &c, false, &m);
	assert_int_equal(m.nreasons, 0);
	assert_int_equal(m.nnotes, 1);
	assert_non_null(strstr(m.notes[0], "storage.faulty.read_slowdown 0 vs 0.2"));
	cmp_match_free(&m);
}

static void test_bad_inputs(void **state)
{
	struct fixture *f = *state;
	struct cmp_side s;
	char path[256], why[700];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/missing", f->dir);
	assert_int_equal(cmp_side_load(&s, path, "baseline", why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, path));
	assert_non_null(strstr(why, "baseline"));

	/* A truncated summary: the parser's complaint, with the file named. */
	path_of(path, sizeof(path), f, "trunc");
	write_summary(path, &base_spec);
	assert_int_equal(truncate(path, 100), 0);
	assert_int_equal(cmp_side_load(&s, path, "baseline", why, sizeof(why)), -FB_EFORMAT);
	assert_non_null(strstr(why, path));
	assert_non_null(strstr(why, "corrupt"));

	/* JSON, but not a summary. */
	fp = fopen(path, "w");
	fputs("{\"schema\": 1}\n", fp);
	fclose(fp);
	assert_int_equal(cmp_side_load(&s, path, "current", why, sizeof(why)), -FB_EFORMAT);
	assert_non_null(strstr(why, "not a complete feedbench summary"));

	/* A folder with neither file. */
	snprintf(path, sizeof(path), "%s/empty", f->dir);
	assert_int_equal(util_mkdirs(path, 0755), 0);
	assert_int_equal(cmp_side_load(&s, path, "current", why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "neither summary.json"));
}

/* Two sweeps: points paired by swept values; a point on one side only is a note. */
static void test_sweeps(void **state)
{
	struct fixture *f = *state;
	static const char *const labels[] = {"stripe_count=1", "stripe_count=2", "stripe_count=4"};
	struct cmp_side sa, sb;
	struct cmp_match m;
	char path[512], why[700];

	for (int side = 0; side < 2; side++) {
		char dir[300];
		FILE *fp;

		snprintf(dir, sizeof(dir), "%s/sweep%d", f->dir, side);
		for (int i = 0; i < 3; i++) {
			struct summary_spec s = base_spec;
			char hash[16];
			snprintf(hash, sizeof(hash), "hash%d", i);
			s.hash = hash;
			snprintf(path, sizeof(path), "%s/point-%03d/summary.json", dir, i + 1);
			write_summary(path, &s);
		}
		snprintf(path, sizeof(path), "%s/sweep_results.json", dir);
		fp = fopen(path, "w");
		fprintf(fp, "{\"points\": [");
		/* the current sweep has points 1 and 2 only; point 3 of the baseline unfinished */
		for (int i = 0; i < (side ? 2 : 3); i++)
			fprintf(fp, "%s{\"dir\": \"point-%03d\", \"label\": \"%s\", \"done\": %s}",
				i ? "," : "", i + 1, labels[i],
				side == 0 && i == 2 ? "false" : "true");
		fprintf(fp, "]}\n");
		fclose(fp);
	}
	snprintf(path, sizeof(path), "%s/sweep0", f->dir);
	assert_int_equal(cmp_side_load(&sa, path, "baseline", why, sizeof(why)), 0);
	assert_true(sa.sweep);
	assert_int_equal(sa.npoints, 2);
	assert_int_equal(sa.nwarnings, 1);
	assert_non_null(strstr(sa.warnings[0], "did not finish"));
	snprintf(path, sizeof(path), "%s/sweep1/sweep_results.json", f->dir);
	assert_int_equal(cmp_side_load(&sb, path, "current", why, sizeof(why)), 0);
	assert_int_equal(cmp_match_sides(&sa, &sb, false, &m), 0);
	assert_int_equal(m.nreasons, 0);
	assert_int_equal(m.npairs, 2);
	assert_string_equal(sa.points[m.pairs[1].b].label, "stripe_count=2");
	assert_string_equal(sb.points[m.pairs[1].c].label, "stripe_count=2");
	cmp_match_free(&m);
	cmp_side_free(&sa);
	cmp_side_free(&sb);
}

static void test_baseline_names(void **state)
{
	char out[256];

	(void)state;
	assert_int_equal(baseline_path("results/baselines", "ci-main_1.2", out, sizeof(out)), 0);
	assert_string_equal(out, "results/baselines/ci-main_1.2");
	assert_int_equal(baseline_path("d", "../x", out, sizeof(out)), -EINVAL);
	assert_int_equal(baseline_path("d", "a/b", out, sizeof(out)), -EINVAL);
	assert_int_equal(baseline_path("d", ".hidden", out, sizeof(out)), -EINVAL);
	assert_int_equal(baseline_path("d", "", out, sizeof(out)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_betainc),
	    cmocka_unit_test(test_t_quantile),
	    cmocka_unit_test(test_welch),
	    cmocka_unit_test(test_judge),
	    cmocka_unit_test(test_run_noise),
	    cmocka_unit_test(test_runs),
	    cmocka_unit_test(test_metrics),
	    cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_inputs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sweeps, setup, teardown),
	    cmocka_unit_test(test_baseline_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
