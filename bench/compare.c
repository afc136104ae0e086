/* `feedbench compare BASELINE CURRENT`: a regression gate for CI.
 *
 * Every metric of every pair of points gets a verdict (compare_stats.c): "regressed" only when
 * the change passes the tolerance and Welch's t-test over the repetitions says the difference
 * is real. The table goes to the terminal; the same rows to Markdown (a merge-request comment),
 * JUnit XML (one testcase per point x metric, as CI systems display it) and JSON. Each file is
 * written whole or not at all (safe_write_atomic).
 *
 * Exit status: 0 no regression, 1 regression, 2 usage, 3 incomparable.
 */
#include "compare.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "build_config.h"
#include "errors.h"
#include "safefile.h"
#include "util.h"

#define CMP_MAX_METRICS SWM_COUNT /* every row of the metric table */
#define CMP_TEST_TEXT                                                                              \
	"Welch's unequal-variance t-test, two-sided: over the repetitions of single runs with a "  \
	"run-to-run noise term, or over run means where a side holds several runs of a config "    \
	"(one run against several: a prediction test with their degrees of freedom)"

struct cmp_opts {
	const char *base_path, *cur_path;
	const char *baseline_name, *baselines_dir;
	const char *markdown, *junit, *json;
	int metrics[CMP_MAX_METRICS];				   /* indices into metric_table */
	bool tol_set[CMP_MAX_METRICS], noise_set[CMP_MAX_METRICS]; /* METRIC=PCT given */
	int nmetrics;
	bool all_metrics;	     /* --metric all: skip a metric neither side recorded */
	double tol[CMP_MAX_METRICS]; /* % per metric_table index */
	double alpha;
	double run_noise[CMP_MAX_METRICS]; /* % per metric_table index */
	bool allow_cached, quiet;
};

struct cmp_row {
	int pair;	  /* index into match.pairs */
	int metric;	  /* index into metric_table */
	double tol;	  /* % */
	double run_noise; /* % */
	struct cmp_outcome o;
};

struct cmp_report {
	const struct cmp_opts *opts;
	struct cmp_side base, cur;
	char base_desc[4200]; /* how the baseline was named */
	struct cmp_match match;
	struct cmp_row *rows;
	int nrows;
	int count[CMP_MISSING + 1];
	bool labelled; /* sweep points: a point column */
	int nwarnings;
	char warnings[CMP_MAX_REASONS + 2][CMP_REASON_LEN * 2];
	char error[CMP_REASON_LEN * 2]; /* a side that could not be read */
	int status;
	char stamp[32]; /* "2026-11-30T10:41:07" (JUnit: no zone) */
	char host[256];
};

static void compare_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: feedbench compare BASELINE CURRENT [options]\n"
	    "       feedbench compare --baseline NAME CURRENT [options]\n"
	    "\n"
	    "Compares two results for CI regression gates. BASELINE and CURRENT are run\n"
	    "folders, sweep folders, summary.json files or folders of runs; points are matched\n"
	    "by config hash (sweeps: by swept values).\n"
	    "\n"
	    "options:\n"
	    "  --baseline NAME    the baseline saved with `feedbench baseline save` as NAME\n"
	    "  --baselines DIR    where saved baselines are (default %s)\n"
	    "  --metric LIST      comma-separated, or all; default "
	    "bandwidth,samples,au,iops,latency_p99,wait_p99\n"
	    "                     (also latency_p50, latency_p90, latency_p999)\n"
	    "  --tolerance PCT    change that counts, in %% (default %g); METRIC=PCT for one "
	    "metric\n"
	    "  --alpha A          significance level of Welch's t-test (default %g)\n"
	    "  --run-noise PCT    run-to-run noise the repetitions of one run cannot show\n"
	    "                     (stddev of a run's mean, %% of it; default 5 for rates and\n"
	    "                     AU, 15 for p99s); METRIC=PCT for one; 0: repetitions alone\n"
	    "  --allow-cached     compare results that may come from the page cache\n"
	    "  --markdown FILE    the table in Markdown (for a merge-request comment)\n"
	    "  --junit FILE       JUnit XML: one testcase per point and metric\n"
	    "  --json FILE        every number, machine-readable\n"
	    "  --quiet            print the verdict line only\n"
	    "\n"
	    "A metric regresses when its change passes the tolerance and Welch's t-test gives\n"
	    "p < alpha: over the repetitions with the run-to-run noise term, or over the run\n"
	    "means where a side has several runs of the config (the noise measured). Beyond\n"
	    "the tolerance but not significant is \"noise\". With one repetition on both sides\n"
	    "the tolerance alone decides (\"low confidence\").\n"
	    "Exit status: 0 no regression, 1 regression, 2 usage error, 3 incomparable results.\n",
	    CMP_BASELINES_DIR, CMP_DEFAULT_TOL, CMP_DEFAULT_ALPH);
}

/* ---- options ------------------------------------------------------------------------------ */

static int cmp_parse_pct(const char *text, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (end == text || errno)
		return -1;
	if (*end == '%')
		end++;
	if (*end || !isfinite(v) || v < 0 || v > 1000)
		return -1;
	*out = v;
	return 0;
}

/* --tolerance and --run-noise: "PCT" for every metric, "METRIC=PCT" for one. */
static int cmp_opt_pct_per_metric(const char *opt, double *pct, bool *set, double max,
				  const char *arg)
{
	const char *eq = strchr(arg, '=');
	char name[64];
	double v;
	int m = -1;

	if (eq) {
		snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
		m = metric_find(name);
		if (m < 0) {
			fprintf(stderr, "feedbench compare: %s %s: unknown metric '%s'\n", opt, arg,
				name);
			return -1;
		}
	}
	if (cmp_parse_pct(eq ? eq + 1 : arg, &v) < 0 || v > max) {
		fprintf(stderr,
			"feedbench compare: %s '%s': expected a percentage from 0 to %g (10, 10%%) "
			"or METRIC=PCT\n",
			opt, arg, max);
		return -1;
	}
	/* METRIC=PCT wins over a plain PCT, whichever comes first. */
	for (int i = 0; i < metric_count; i++)
		if ((m < 0 && !set[i]) || i == m)
			pct[i] = v;
	if (m >= 0)
		set[m] = true;
	return 0;
}

static int cmp_opt_metrics(struct cmp_opts *o, const char *arg)
{
	char buf[512], *save = NULL;

	o->nmetrics = 0;
	o->all_metrics = strcmp(arg, "all") == 0;
	if (o->all_metrics) {
		for (int i = 0; i < metric_count; i++)
			o->metrics[o->nmetrics++] = i;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
		int m = metric_find(t);
		if (m < 0) {
			fprintf(stderr, "feedbench compare: unknown metric '%s' (choose from:", t);
			for (int i = 0; i < metric_count; i++)
				fprintf(stderr, " %s", metric_table[i].name);
			fprintf(stderr, ", or all)\n");
			return -1;
		}
		bool dup = false;
		for (int i = 0; i < o->nmetrics; i++)
			dup |= o->metrics[i] == m;
		if (!dup && o->nmetrics < CMP_MAX_METRICS)
			o->metrics[o->nmetrics++] = m;
	}
	if (o->nmetrics == 0) {
		fprintf(stderr, "feedbench compare: --metric needs at least one metric\n");
		return -1;
	}
	return 0;
}

/* The output files are checked before anything is read: a folder, link or socket at their
 * name is a usage error (safefile.h). */
static int cmp_check_outputs(const struct cmp_opts *o)
{
	const char *outs[] = {o->markdown, o->junit, o->json};
	char why[PATH_MAX + 160];

	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++)
		if (outs[i] && safe_output_check(outs[i], why, sizeof(why)) < 0) {
			fprintf(stderr, "feedbench compare: %s\n", why);
			return -1;
		}
	return 0;
}

static int cmp_parse_args(struct cmp_opts *o, int argc, char **argv)
{
	const char *pos[2] = {NULL, NULL};
	int npos = 0;

	memset(o, 0, sizeof(*o));
	o->alpha = CMP_DEFAULT_ALPH;
	o->baselines_dir = CMP_BASELINES_DIR;
	for (int i = 0; i < metric_count; i++) {
		o->tol[i] = CMP_DEFAULT_TOL;
		o->run_noise[i] = metric_table[i].run_noise;
		if (metric_table[i].by_default)
			o->metrics[o->nmetrics++] = i;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes = true;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			compare_usage(stdout);
			return 1;
		} else if (strcmp(a, "--allow-cached") == 0) {
			o->allow_cached = true;
			takes = false;
		} else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
			o->quiet = true;
			takes = false;
		} else if (a[0] == '-' && a[1] && !v) {
			fprintf(stderr, "feedbench compare: %s needs a value (see --help)\n", a);
			return -1;
		} else if (strcmp(a, "--baseline") == 0) {
			o->baseline_name = v;
		} else if (strcmp(a, "--baselines") == 0) {
			o->baselines_dir = v;
		} else if (strcmp(a, "--markdown") == 0) {
			o->markdown = v;
		} else if (strcmp(a, "--junit") == 0) {
			o->junit = v;
		} else if (strcmp(a, "--json") == 0) {
			o->json = v;
		} else if (strcmp(a, "--metric") == 0 || strcmp(a, "--metrics") == 0) {
			if (cmp_opt_metrics(o, v) < 0)
				return -1;
		} else if (strcmp(a, "--tolerance") == 0) {
			if (cmp_opt_pct_per_metric("--tolerance", o->tol, o->tol_set, 1000, v) < 0)
				return -1;
		} else if (strcmp(a, "--alpha") == 0) {
			char *end;
			o->alpha = strtod(v, &end);
			if (*end || !(o->alpha > 0 && o->alpha <= 0.5)) {
				fprintf(stderr,
					"feedbench compare: --alpha '%s': expected a number in "
					"(0, 0.5]\n",
					v);
				return -1;
			}
		} else if (strcmp(a, "--run-noise") == 0) {
			if (cmp_opt_pct_per_metric("--run-noise", o->run_noise, o->noise_set, 100,
						   v) < 0)
				return -1;
		} else if (a[0] == '-') {
			fprintf(stderr, "feedbench compare: unknown option '%s' (see --help)\n", a);
			return -1;
		} else {
			takes = false;
			if (npos == 2) {
				fprintf(stderr, "feedbench compare: unexpected argument '%s'\n", a);
				return -1;
			}
			pos[npos++] = a;
		}
		if (takes)
			i++;
	}
	if (o->baseline_name ? npos != 1 : npos != 2) {
		fprintf(stderr, "feedbench compare: %s (see --help)\n",
			o->baseline_name ? "--baseline NAME takes one more argument, CURRENT"
					 : "needs BASELINE and CURRENT");
		return -1;
	}
	o->base_path = o->baseline_name ? NULL : pos[0];
	o->cur_path = pos[npos - 1];
	return cmp_check_outputs(o);
}

/* ---- numbers as text ------------------------------------------------------------------- */

/* Decimals that suit a value of this size (and the stddev printed beside it). */
static int cmp_decimals(double v)
{
	double a = fabs(v);

	return a >= 1000 ? 0 : a >= 100 ? 1 : a >= 1 || a == 0 ? 2 : a >= 0.01 ? 4 : 6;
}

/* "812.3 ± 4.1 MiB/s (n=3)", or "(5 runs)" for run means */
static void cmp_stat_text(const struct summary_stat *s, const struct metric *m, bool runs,
			  char *buf, size_t len)
{
	int d = cmp_decimals(s->mean * m->scale);
	char n[32];

	if (runs)
		snprintf(n, sizeof(n), "%d run%s", s->n, s->n == 1 ? "" : "s");
	else
		snprintf(n, sizeof(n), "n=%d", s->n);
	if (s->n == 0)
		snprintf(buf, len, "not recorded");
	else if (s->n > 1)
		snprintf(buf, len, "%.*f ± %.*f %s (%s)", d, s->mean * m->scale, d,
			 s->stddev * m->scale, m->unit, n);
	else
		snprintf(buf, len, "%.*f %s (%s)", d, s->mean * m->scale, m->unit, n);
}

static void cmp_change_text(const struct cmp_outcome *o, char *buf, size_t len)
{
	if (isnan(o->change_pct))
		snprintf(buf, len, "n/a");
	else if (isinf(o->change_pct))
		snprintf(buf, len, "%s (from 0)", o->change_pct > 0 ? "+inf" : "-inf");
	else
		snprintf(buf, len, "%+.1f %%", o->change_pct);
}

static void cmp_p_text(double p, char *buf, size_t len)
{
	if (p < 0.0001)
		snprintf(buf, len, "p<0.0001");
	else
		snprintf(buf, len, "p=%.2g", p);
}

/* The test column: "p=0.0012, 95% CI [-24.0, -18.4] %" or why there is none. */
static void cmp_test_text(const struct cmp_outcome *o, double alpha, char *buf, size_t len)
{
	char p[32];

	if (o->verdict == CMP_MISSING)
		snprintf(buf, len, "-");
	else if (o->low_confidence)
		snprintf(buf, len, "low confidence: %d vs %d repetition%s, tolerance only",
			 o->base.n, o->cur.n, o->base.n * o->cur.n == 1 ? "" : "s");
	else {
		cmp_p_text(o->p, p, sizeof(p));
		if (isnan(o->ci_lo_pct))
			snprintf(buf, len, "%s%s", p, o->by_runs ? ", run means" : "");
		else
			snprintf(buf, len, "%s, %g%% CI [%+.1f, %+.1f] %%%s", p, 100 * (1 - alpha),
				 o->ci_lo_pct, o->ci_hi_pct, o->by_runs ? ", run means" : "");
	}
}

static const char *cmp_row_label(const struct cmp_report *r, const struct cmp_row *row)
{
	const char *l = r->cur.points[r->match.pairs[row->pair].c].label;

	return l[0] ? l : "-";
}

/* ---- verdicts ---------------------------------------------------------------------------- */

/* The values a row tests on one side: the repetitions of its run, or with several runs of the
 * config on either side, the mean of each run (NAN repetitions left out). Returns the count. */
static int cmp_side_values(const struct cmp_side *s, int first, enum sweep_metric m, bool by_runs,
			   double *out)
{
	const struct cmp_point *p0 = &s->points[first];
	int n = 0;

	if (!by_runs) {
		for (int i = 0; i < p0->nreps && n < CMP_MAX_REPS; i++)
			out[n++] = p0->v[i][m];
		return n;
	}
	for (int j = first; j < s->npoints && n < CMP_MAX_REPS; j++) {
		const struct cmp_point *p = &s->points[j];
		double sum = 0;
		int k = 0;

		if (p->group != first)
			continue;
		for (int i = 0; i < p->nreps; i++)
			if (!isnan(p->v[i][m])) {
				sum += p->v[i][m];
				k++;
			}
		out[n++] = k ? sum / k : NAN;
	}
	return n;
}

static bool cmp_pair_by_runs(const struct cmp_report *r, int pair)
{
	return r->base.points[r->match.pairs[pair].b].nruns > 1 ||
	       r->cur.points[r->match.pairs[pair].c].nruns > 1;
}

static int cmp_judge_all(struct cmp_report *r)
{
	const struct cmp_opts *o = r->opts;
	double vb[CMP_MAX_REPS], vc[CMP_MAX_REPS];

	r->rows = calloc((size_t)r->match.npairs * (size_t)o->nmetrics, sizeof(*r->rows));
	if (!r->rows)
		return -ENOMEM;
	for (int p = 0; p < r->match.npairs; p++) {
		int b0 = r->match.pairs[p].b, c0 = r->match.pairs[p].c;
		bool by_runs = cmp_pair_by_runs(r, p);

		r->labelled |= r->cur.points[c0].label[0] != '\0';
		for (int k = 0; k < o->nmetrics; k++) {
			const struct metric *m = &metric_table[o->metrics[k]];
			struct cmp_row *row = &r->rows[r->nrows];
			int nb = cmp_side_values(&r->base, b0, m->m, by_runs, vb);
			int nc = cmp_side_values(&r->cur, c0, m->m, by_runs, vc);
			bool any = false;

			for (int i = 0; i < nb; i++)
				any |= !isnan(vb[i]);
			for (int i = 0; i < nc; i++)
				any |= !isnan(vc[i]);
			/* --metric all: the metrics of other workloads (ior's write bandwidth in a
			 * training comparison) are left out, not reported as missing */
			if (o->all_metrics && !any)
				continue;
			r->nrows++;

			row->pair = p;
			row->metric = o->metrics[k];
			row->tol = o->tol[o->metrics[k]];
			row->run_noise = o->run_noise[o->metrics[k]];
			if (by_runs)
				cmp_judge_runs(vb, nb, vc, nc, m->higher_better, row->tol, o->alpha,
					       row->run_noise, &row->o);
			else
				cmp_judge(vb, nb, vc, nc, m->higher_better, row->tol, o->alpha,
					  row->run_noise, &row->o);
			r->count[row->o.verdict]++;
		}
	}
	return 0;
}

static const char *cmp_overall(const struct cmp_report *r)
{
	if (r->status == CMP_EXIT_INCOMPARABLE)
		return "incomparable";
	return r->count[CMP_REGRESSED] ? "regressed" : "ok";
}

/* "1 regressed, 4 ok, 1 noise" */
static void cmp_counts_text(const struct cmp_report *r, char *buf, size_t len)
{
	static const enum cmp_verdict order[] = {CMP_REGRESSED, CMP_IMPROVED, CMP_NOISE, CMP_OK,
						 CMP_MISSING};
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (r->count[order[i]] && used < len)
			used +=
			    (size_t)snprintf(buf + used, len - used, "%s%d %s", used ? ", " : "",
					     r->count[order[i]], cmp_verdict_name(order[i]));
}

/* "run", "5 runs", "sweep, 4 points", "summary" */
static void cmp_side_desc(const struct cmp_side *s, char *buf, size_t len)
{
	if (s->sweep)
		snprintf(buf, len, "sweep, %d point%s", s->npoints, s->npoints == 1 ? "" : "s");
	else if (strcmp(s->kind, "runs") == 0)
		snprintf(buf, len, "%d run%s", s->npoints, s->npoints == 1 ? "" : "s");
	else
		snprintf(buf, len, "%s", s->kind);
}

/* ---- terminal ------------------------------------------------------------------------------ */

static void cmp_print_header(const struct cmp_report *r, FILE *f, const char *bullet)
{
	const struct cmp_point *c = &r->cur.points[0];

	fprintf(f, "%sbaseline: %s\n", bullet, r->base_desc);
	char kind[64];
	cmp_side_desc(&r->cur, kind, sizeof(kind));
	fprintf(f, "%scurrent:  %s (%s)\n", bullet, r->cur.path, kind);
	fprintf(f, "%sworkload: %s, %d rank%s on %d node%s, %s, accelerator %s, %s\n", bullet,
		c->workload, c->num_ranks, c->num_ranks == 1 ? "" : "s", c->num_nodes,
		c->num_nodes == 1 ? "" : "s", c->fs_type, c->accel,
		c->has_direct	    ? "direct I/O"
		: c->cache_resident ? "cache-resident"
				    : "buffered I/O");
	bool same = true;
	for (int i = 1; i < r->opts->nmetrics; i++)
		same &= r->opts->tol[r->opts->metrics[i]] == r->opts->tol[r->opts->metrics[0]];
	bool by_runs = false, by_reps = false;
	for (int p = 0; p < r->match.npairs; p++) {
		by_runs |= cmp_pair_by_runs(r, p);
		by_reps |= !cmp_pair_by_runs(r, p);
	}
	fprintf(f, "%stest: Welch's t-test (two-sided, alpha %g) %s%s%s; tolerance ", bullet,
		r->opts->alpha,
		by_runs ? "over run means (several runs of a config: run-to-run noise measured)"
			: "",
		by_runs && by_reps ? ", else " : "",
		by_reps ? "over repetitions with a run-to-run noise term" : "");
	if (same)
		fprintf(f, "%g %%\n", r->opts->tol[r->opts->metrics[0]]);
	else
		fprintf(f, "per metric (column tol)\n");
	char noise[512];
	size_t used = 0;
	for (int i = 0; i < r->opts->nmetrics; i++) {
		int m = r->opts->metrics[i];
		if (r->opts->run_noise[m] > 0 && used < sizeof(noise))
			used += (size_t)snprintf(noise + used, sizeof(noise) - used, "%s%s %g %%",
						 used ? ", " : "", metric_table[m].name,
						 r->opts->run_noise[m]);
	}
	if (used)
		fprintf(f, "%srun-to-run noise (--run-noise%s): %s\n", bullet,
			by_runs ? "; over run means a floor under the measured spread" : "", noise);
}

static void cmp_print_table(const struct cmp_report *r, FILE *f)
{
	char base[96], cur[96], change[48], test[96];

	fprintf(f, "\n");
	if (r->labelled)
		fprintf(f, "%-28s ", "point");
	fprintf(f, "%-13s %-28s %-28s %-10s %5s  %-50s %s\n", "metric", "baseline", "current",
		"change", "tol", "test", "verdict");
	for (int i = 0; i < r->nrows; i++) {
		const struct cmp_row *row = &r->rows[i];
		const struct metric *m = &metric_table[row->metric];

		cmp_stat_text(&row->o.base, m, row->o.by_runs, base, sizeof(base));
		cmp_stat_text(&row->o.cur, m, row->o.by_runs, cur, sizeof(cur));
		cmp_change_text(&row->o, change, sizeof(change));
		cmp_test_text(&row->o, r->opts->alpha, test, sizeof(test));
		if (r->labelled)
			fprintf(f, "%-28s ", cmp_row_label(r, row));
		/* ± is two bytes in UTF-8 and one column: widen by one. */
		fprintf(f, "%-13s %-*s %-*s %-10s %4g%%  %-50s %s\n", m->name,
			row->o.base.n > 1 ? 29 : 28, base, row->o.cur.n > 1 ? 29 : 28, cur, change,
			row->tol, test, cmp_verdict_name(row->o.verdict));
	}
}

static void cmp_print(const struct cmp_report *r, FILE *f)
{
	char counts[256];

	if (!r->opts->quiet) {
		cmp_print_header(r, f, "");
		cmp_print_table(r, f);
		for (int i = 0; i < r->match.nnotes; i++)
			fprintf(f, "note: %s\n", r->match.notes[i]);
		fprintf(f, "\n");
	}
	cmp_counts_text(r, counts, sizeof(counts));
	fprintf(f, "verdict: %s (%s in %d comparison%s)\n",
		r->count[CMP_REGRESSED] ? "REGRESSED" : "no regression", counts, r->nrows,
		r->nrows == 1 ? "" : "s");
}

/* A table cell: '|' would end it, a newline the row. */
static void cmp_md(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '\n' || *s == '\r')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

/* ---- Markdown ------------------------------------------------------------------------------ */

static void cmp_markdown(const struct cmp_report *r, FILE *f)
{
	char base[96], cur[96], change[48], test[96], counts[256];

	fprintf(f, "### feedbench compare: %s\n\n",
		r->status == CMP_EXIT_INCOMPARABLE ? "incomparable"
		: r->count[CMP_REGRESSED]	   ? "**regressed**"
						   : "no regression");
	if (r->status == CMP_EXIT_INCOMPARABLE) {
		if (r->error[0])
			fprintf(f, "- %s\n", r->error);
		for (int i = 0; i < r->match.nreasons; i++)
			fprintf(f, "- %s\n", r->match.reasons[i]);
		return;
	}
	cmp_print_header(r, f, "- ");
	fprintf(f, "\n");
	if (r->labelled)
		fprintf(f, "| point ");
	fprintf(f, "| metric | baseline | current | change | tolerance | test | verdict |\n");
	if (r->labelled)
		fprintf(f, "|---");
	fprintf(f, "|---|---:|---:|---:|---:|---|---|\n");
	for (int i = 0; i < r->nrows; i++) {
		const struct cmp_row *row = &r->rows[i];
		const struct metric *m = &metric_table[row->metric];
		bool bad = row->o.verdict == CMP_REGRESSED;

		cmp_stat_text(&row->o.base, m, row->o.by_runs, base, sizeof(base));
		cmp_stat_text(&row->o.cur, m, row->o.by_runs, cur, sizeof(cur));
		cmp_change_text(&row->o, change, sizeof(change));
		cmp_test_text(&row->o, r->opts->alpha, test, sizeof(test));
		if (r->labelled) {
			fprintf(f, "| ");
			cmp_md(f, cmp_row_label(r, row));
			fputc(' ', f);
		}
		fprintf(f, "| %s | %s | %s | %s%s%s | %g %% | %s | %s%s%s |\n", m->name, base, cur,
			bad ? "**" : "", change, bad ? "**" : "", row->tol, test, bad ? "**" : "",
			cmp_verdict_name(row->o.verdict), bad ? "**" : "");
	}
	cmp_counts_text(r, counts, sizeof(counts));
	fprintf(f, "\n%s in %d comparison%s.\n", counts, r->nrows, r->nrows == 1 ? "" : "s");
	for (int i = 0; i < r->match.nnotes; i++)
		fprintf(f, "- note: %s\n", r->match.notes[i]);
	for (int i = 0; i < r->nwarnings; i++)
		fprintf(f, "- warning: %s\n", r->warnings[i]);
}

/* ---- JUnit XML ------------------------------------------------------------------------------ */

/* Text or attribute value: markup characters escaped, control characters XML 1.0 forbids
 * dropped. */
static void cmp_xml(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		switch (ch) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			if (ch >= 0x20 || ch == '\n' || ch == '\t')
				fputc(ch, f);
		}
	}
}

static void cmp_junit_suite_open(const struct cmp_report *r, FILE *f, int id, const char *name,
				 int tests, int failures, int errors)
{
	fprintf(f, "  <testsuite name=\"");
	cmp_xml(f, name);
	fprintf(f,
		"\" tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"0\" timestamp=\"%s\" "
		"hostname=\"",
		tests, failures, errors, r->stamp);
	cmp_xml(f, r->host);
	fprintf(f, "\" id=\"%d\" package=\"feedbench\">\n    <properties>\n", id);
	const char *props[][2] = {
	    {"baseline", r->base_desc},
	    {"current", r->cur.path},
	    {"test", CMP_TEST_TEXT},
	};
	for (size_t i = 0; i < sizeof(props) / sizeof(props[0]); i++) {
		fprintf(f, "      <property name=\"%s\" value=\"", props[i][0]);
		cmp_xml(f, props[i][1]);
		fprintf(f, "\"/>\n");
	}
	fprintf(f, "      <property name=\"alpha\" value=\"%g\"/>\n", r->opts->alpha);
	fprintf(f, "    </properties>\n");
}

static void cmp_row_detail(const struct cmp_report *r, const struct cmp_row *row, char *buf,
			   size_t len)
{
	const struct metric *m = &metric_table[row->metric];
	const struct cmp_point *b = &r->base.points[r->match.pairs[row->pair].b];
	const struct cmp_point *c = &r->cur.points[r->match.pairs[row->pair].c];
	char sb[96], sc[96], change[48], test[96];
	size_t used;

	cmp_stat_text(&row->o.base, m, row->o.by_runs, sb, sizeof(sb));
	cmp_stat_text(&row->o.cur, m, row->o.by_runs, sc, sizeof(sc));
	cmp_change_text(&row->o, change, sizeof(change));
	cmp_test_text(&row->o, r->opts->alpha, test, sizeof(test));
	used = (size_t)snprintf(buf, len,
				"%s (%s is better)\nbaseline: %s  [%s]\ncurrent:  %s  [%s]\n"
				"change: %s (tolerance %g %%)\n",
				m->name, m->higher_better ? "higher" : "lower", sb, b->path, sc,
				c->path, change, row->tol);
	if (used < len && !row->o.low_confidence && row->o.verdict != CMP_MISSING)
		used += (size_t)snprintf(buf + used, len - used,
					 "Welch's t-test%s: t=%.3g, df=%.3g, %s\n",
					 row->o.by_runs	      ? " over run means"
					 : row->run_noise > 0 ? " with run-to-run noise"
							      : "",
					 row->o.t, row->o.df, test);
	else if (used < len)
		used += (size_t)snprintf(buf + used, len - used, "%s\n", test);
	if (used < len)
		snprintf(buf + used, len - used, "verdict: %s\n", cmp_verdict_name(row->o.verdict));
}

static void cmp_junit_pair(const struct cmp_report *r, FILE *f, int pair)
{
	const struct cmp_point *c = &r->cur.points[r->match.pairs[pair].c];
	char name[700], cls[700], detail[2048], msg[400], change[48], sb[96], sc[96], p[32];
	int tests = 0, failures = 0;

	for (int i = 0; i < r->nrows; i++)
		if (r->rows[i].pair == pair) {
			tests++;
			failures += r->rows[i].o.verdict == CMP_REGRESSED;
		}
	snprintf(name, sizeof(name), "feedbench compare: %s%s%s", c->workload,
		 c->label[0] ? " " : "", c->label);
	snprintf(cls, sizeof(cls), "feedbench.%s%s%s", c->workload, c->label[0] ? "." : "",
		 c->label);
	for (char *s = cls; *s; s++)
		if (*s == ' ')
			*s = '.';
	cmp_junit_suite_open(r, f, pair, name, tests, failures, 0);
	for (int i = 0; i < r->nrows; i++) {
		const struct cmp_row *row = &r->rows[i];
		const struct metric *m = &metric_table[row->metric];
		if (row->pair != pair)
			continue;
		fprintf(f, "    <testcase classname=\"");
		cmp_xml(f, cls);
		fprintf(f, "\" name=\"%s\" time=\"0\"", m->name);
		if (row->o.verdict != CMP_REGRESSED) {
			fprintf(f, "/>\n");
			continue;
		}
		cmp_change_text(&row->o, change, sizeof(change));
		cmp_stat_text(&row->o.base, m, row->o.by_runs, sb, sizeof(sb));
		cmp_stat_text(&row->o.cur, m, row->o.by_runs, sc, sizeof(sc));
		if (row->o.low_confidence)
			snprintf(p, sizeof(p), "low confidence");
		else
			cmp_p_text(row->o.p, p, sizeof(p));
		snprintf(msg, sizeof(msg), "%s regressed %s: baseline %s, current %s (%s)", m->name,
			 change, sb, sc, p);
		cmp_row_detail(r, row, detail, sizeof(detail));
		fprintf(f, ">\n      <failure message=\"");
		cmp_xml(f, msg);
		fprintf(f, "\" type=\"regression\">");
		cmp_xml(f, detail);
		fprintf(f, "</failure>\n    </testcase>\n");
	}
	fprintf(f, "    <system-out>");
	for (int i = 0; i < r->nrows; i++)
		if (r->rows[i].pair == pair) {
			cmp_row_detail(r, &r->rows[i], detail, sizeof(detail));
			cmp_xml(f, detail);
			fputc('\n', f);
		}
	for (int i = 0; i < r->match.nnotes; i++) {
		fprintf(f, "note: ");
		cmp_xml(f, r->match.notes[i]);
		fputc('\n', f);
	}
	fprintf(f, "</system-out>\n    <system-err>");
	for (int i = 0; i < r->nwarnings; i++) {
		fprintf(f, "warning: ");
		cmp_xml(f, r->warnings[i]);
		fputc('\n', f);
	}
	fprintf(f, "</system-err>\n  </testsuite>\n");
}

static void cmp_junit(const struct cmp_report *r, FILE *f)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
	if (r->status == CMP_EXIT_INCOMPARABLE) {
		const char *first = r->error[0] ? r->error : r->match.reasons[0];
		cmp_junit_suite_open(r, f, 0, "feedbench compare", 1, 0, 1);
		fprintf(f, "    <testcase classname=\"feedbench.compare\" name=\"comparable\" "
			   "time=\"0\">\n      <error message=\"");
		cmp_xml(f, first);
		fprintf(f, "\" type=\"incomparable\">");
		if (r->error[0]) {
			cmp_xml(f, r->error);
			fputc('\n', f);
		}
		for (int i = 0; i < r->match.nreasons; i++) {
			cmp_xml(f, r->match.reasons[i]);
			fputc('\n', f);
		}
		fprintf(f, "</error>\n    </testcase>\n    <system-out></system-out>\n"
			   "    <system-err></system-err>\n  </testsuite>\n");
	} else {
		for (int p = 0; p < r->match.npairs; p++)
			cmp_junit_pair(r, f, p);
	}
	fprintf(f, "</testsuites>\n");
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static json_t *cmp_json_num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* One side of a row: n, mean, stddev, the values tested (repetitions, or run means) and the
 * summary.json files they come from. */
static json_t *cmp_json_stat(const struct summary_stat *s, const struct cmp_side *side, int first,
			     enum sweep_metric m, bool by_runs)
{
	json_t *o = json_object(), *vals = json_array(), *files = json_array();
	double v[CMP_MAX_REPS];
	int n = cmp_side_values(side, first, m, by_runs, v);

	json_object_set_new(o, "n", json_integer(s->n));
	json_object_set_new(o, "unit_of_n", json_string(by_runs ? "runs" : "repetitions"));
	json_object_set_new(o, "mean", s->n ? cmp_json_num(s->mean) : json_null());
	json_object_set_new(o, "stddev", s->n > 1 ? cmp_json_num(s->stddev) : json_null());
	for (int i = 0; i < n; i++)
		if (!isnan(v[i]))
			json_array_append_new(vals, json_real(v[i]));
	json_object_set_new(o, "values", vals);
	for (int j = first; j < side->npoints; j++)
		if (side->points[j].group == first)
			json_array_append_new(files, json_string(side->points[j].path));
	json_object_set_new(o, "summary", json_string(side->points[first].path));
	json_object_set_new(o, "summaries", files);
	return o;
}

static json_t *cmp_json_strings(char (*list)[CMP_REASON_LEN], int n)
{
	json_t *a = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_string(list[i]));
	return a;
}

static json_t *cmp_json(const struct cmp_report *r)
{
	json_t *root = json_object(), *rows = json_array(), *warn = json_array(), *inc;

	json_object_set_new(root, "schema", json_integer(1));
	json_object_set_new(root, "feedbench_version", json_string(FEEDBENCH_VERSION));
	json_object_set_new(root, "verdict", json_string(cmp_overall(r)));
	json_object_set_new(root, "exit_status", json_integer(r->status));
	json_object_set_new(root, "test", json_string("welch"));
	json_object_set_new(root, "test_description", json_string(CMP_TEST_TEXT));
	json_object_set_new(root, "alpha", json_real(r->opts->alpha));
	json_object_set_new(root, "baseline", json_string(r->base_desc));
	json_object_set_new(root, "current", json_string(r->opts->cur_path));
	inc = cmp_json_strings((char(*)[CMP_REASON_LEN])r->match.reasons, r->match.nreasons);
	if (r->error[0])
		json_array_insert_new(inc, 0, json_string(r->error));
	json_object_set_new(root, "incomparable", inc);
	for (int i = 0; i < r->nrows; i++) {
		const struct cmp_row *row = &r->rows[i];
		const struct metric *m = &metric_table[row->metric];
		const struct cmp_point *c = &r->cur.points[r->match.pairs[row->pair].c];
		json_t *o = json_object();

		json_object_set_new(o, "point", json_string(c->label));
		json_object_set_new(o, "workload", json_string(c->workload));
		json_object_set_new(o, "config_hash", json_string(c->config_hash));
		json_object_set_new(o, "metric", json_string(m->name));
		json_object_set_new(o, "unit", json_string(m->scale == 1.0 ? m->unit : "s"));
		json_object_set_new(o, "better",
				    json_string(m->higher_better ? "higher" : "lower"));
		json_object_set_new(o, "tolerance_pct", json_real(row->tol));
		json_object_set_new(o, "run_noise_pct", json_real(row->run_noise));
		json_object_set_new(o, "method",
				    json_string(row->o.by_runs ? "run means" : "repetitions"));
		json_object_set_new(o, "baseline",
				    cmp_json_stat(&row->o.base, &r->base,
						  r->match.pairs[row->pair].b, m->m,
						  row->o.by_runs));
		json_object_set_new(o, "current",
				    cmp_json_stat(&row->o.cur, &r->cur, r->match.pairs[row->pair].c,
						  m->m, row->o.by_runs));
		json_object_set_new(o, "change_pct", cmp_json_num(row->o.change_pct));
		json_object_set_new(o, "p_value", cmp_json_num(row->o.p));
		json_object_set_new(o, "t", cmp_json_num(row->o.t));
		json_object_set_new(o, "df", cmp_json_num(row->o.df));
		json_object_set_new(o, "ci_low_pct", cmp_json_num(row->o.ci_lo_pct));
		json_object_set_new(o, "ci_high_pct", cmp_json_num(row->o.ci_hi_pct));
		json_object_set_new(o, "confidence",
				    json_string(row->o.verdict == CMP_MISSING ? "none"
						: row->o.low_confidence	      ? "low"
									      : "normal"));
		json_object_set_new(o, "verdict", json_string(cmp_verdict_name(row->o.verdict)));
		json_array_append_new(rows, o);
	}
	json_object_set_new(root, "comparisons", rows);
	for (int i = 0; i < r->nwarnings; i++)
		json_array_append_new(warn, json_string(r->warnings[i]));
	json_object_set_new(root, "warnings", warn);
	json_object_set_new(
	    root, "notes",
	    cmp_json_strings((char(*)[CMP_REASON_LEN])r->match.notes, r->match.nnotes));
	return root;
}

/* ---- writing the files --------------------------------------------------------------------- */

static int cmp_write(const struct cmp_report *r, const char *path,
		     void (*fill)(const struct cmp_report *, FILE *))
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int rc;

	if (!mem)
		return -ENOMEM;
	fill(r, mem);
	fclose(mem);
	rc = safe_write_atomic(path, text, len);
	free(text);
	if (rc < 0)
		fprintf(stderr, "feedbench compare: cannot write '%s': %s\n", path,
			fb_strerror(rc));
	return rc;
}

static void cmp_json_fill(const struct cmp_report *r, FILE *f)
{
	json_t *root = cmp_json(r);

	json_dumpf(root, f, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
	fputc('\n', f);
	json_decref(root);
}

static int cmp_write_outputs(const struct cmp_report *r)
{
	int rc = 0;

	if (r->opts->markdown && cmp_write(r, r->opts->markdown, cmp_markdown) < 0)
		rc = -1;
	if (r->opts->junit && cmp_write(r, r->opts->junit, cmp_junit) < 0)
		rc = -1;
	if (r->opts->json && cmp_write(r, r->opts->json, cmp_json_fill) < 0)
		rc = -1;
	return rc;
}

/* ---- the command ----------------------------------------------------------------------------- */

static void cmp_warn(struct cmp_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void cmp_warn(struct cmp_report *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nwarnings >= CMP_MAX_REASONS + 2)
		return;
	va_start(ap, fmt);
	vsnprintf(r->warnings[r->nwarnings++], sizeof(r->warnings[0]), fmt, ap);
	va_end(ap);
}

static int cmp_load(struct cmp_report *r)
{
	const struct cmp_opts *o = r->opts;
	char path[PATH_MAX], kind[64];
	const char *base = o->base_path;
	int rc;

	if (o->baseline_name) {
		rc = baseline_path(o->baselines_dir, o->baseline_name, path, sizeof(path));
		if (rc < 0) {
			snprintf(r->error, sizeof(r->error),
				 "baseline name '%s' is not a plain name (letters, digits, . _ -)",
				 o->baseline_name);
			return rc;
		}
		if (access(path, F_OK) < 0) {
			snprintf(r->error, sizeof(r->error),
				 "no baseline named '%s': '%s' is not there (feedbench baseline "
				 "list --baselines %s)",
				 o->baseline_name, path, o->baselines_dir);
			return -ENOENT;
		}
		base = path;
	}
	rc = cmp_side_load(&r->base, base, "baseline", r->error, sizeof(r->error));
	if (rc < 0)
		return rc;
	cmp_side_desc(&r->base, kind, sizeof(kind));
	if (o->baseline_name)
		snprintf(r->base_desc, sizeof(r->base_desc), "baseline '%s' (%s, %s)",
			 o->baseline_name, base, kind);
	else
		snprintf(r->base_desc, sizeof(r->base_desc), "%s (%s)", base, kind);
	rc = cmp_side_load(&r->cur, o->cur_path, "current", r->error, sizeof(r->error));
	if (rc < 0)
		return rc;
	for (int i = 0; i < r->base.nwarnings; i++)
		cmp_warn(r, "%s", r->base.warnings[i]);
	for (int i = 0; i < r->cur.nwarnings; i++)
		cmp_warn(r, "%s", r->cur.warnings[i]);
	return 0;
}

static void cmp_fingerprint(struct cmp_report *r)
{
	char diff[CMP_REASON_LEN];

	if (!r->opts->baseline_name && !r->base.fingerprint)
		return;
	if (!r->base.fingerprint) {
		cmp_warn(r, "baseline '%s' has no fingerprint.json: the host it ran on is unknown",
			 r->base.path);
		return;
	}
	if (baseline_fingerprint_diff(r->base.fingerprint, &r->cur.points[0], diff, sizeof(diff)) >
	    0)
		cmp_warn(r,
			 "host fingerprint differs from the baseline's: %s; a difference may "
			 "come from the machine or the feedbench version, not the change under "
			 "test",
			 diff);
}

int compare_main(int argc, char **argv)
{
	struct cmp_opts opts;
	struct cmp_report *r;
	int rc, status;
	time_t now = time(NULL);
	struct tm tm;

	rc = cmp_parse_args(&opts, argc, argv);
	if (rc != 0)
		return rc > 0 ? 0 : CMP_EXIT_USAGE;
	r = calloc(1, sizeof(*r));
	if (!r)
		return 1;
	r->opts = &opts;
	gmtime_r(&now, &tm);
	strftime(r->stamp, sizeof(r->stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	if (gethostname(r->host, sizeof(r->host) - 1) < 0 || !r->host[0])
		snprintf(r->host, sizeof(r->host), "localhost");
	snprintf(r->base_desc, sizeof(r->base_desc), "%s",
		 opts.baseline_name ? opts.baseline_name : opts.base_path);

	rc = cmp_load(r);
	if (rc == 0)
		rc = cmp_match_sides(&r->base, &r->cur, opts.allow_cached, &r->match);
	if (rc < 0 || r->match.nreasons > 0) {
		r->status = CMP_EXIT_INCOMPARABLE;
		fprintf(stderr, "feedbench compare: incomparable: %s\n",
			r->error[0] ? r->error : r->match.reasons[0]);
		for (int i = r->error[0] ? 0 : 1; i < r->match.nreasons; i++)
			fprintf(stderr, "  also: %s\n", r->match.reasons[i]);
	} else {
		cmp_fingerprint(r);
		if (cmp_judge_all(r) < 0) {
			/* Not 1: that would read as a regression. */
			fprintf(stderr, "feedbench compare: out of memory\n");
			r->status = CMP_EXIT_INCOMPARABLE;
		} else if (r->count[CMP_MISSING] == r->nrows) {
			/* A gate that compared nothing must not pass. */
			r->status = CMP_EXIT_INCOMPARABLE;
			snprintf(r->match.reasons[r->match.nreasons++], CMP_REASON_LEN,
				 "nothing to compare: no metric of %s was recorded on both sides",
				 r->opts->nmetrics == 1 ? metric_table[r->opts->metrics[0]].name
							: "those asked for");
			fprintf(stderr, "feedbench compare: incomparable: %s\n",
				r->match.reasons[r->match.nreasons - 1]);
		} else {
			r->status = r->count[CMP_REGRESSED] ? CMP_EXIT_REGRESSED : CMP_EXIT_OK;
			for (int i = 0; i < r->nwarnings; i++)
				fprintf(stderr, "feedbench compare: warning: %s\n", r->warnings[i]);
			cmp_print(r, stdout);
		}
	}
	status = r->status;
	if (cmp_write_outputs(r) < 0 && status == CMP_EXIT_OK)
		status = CMP_EXIT_USAGE;
	cmp_match_free(&r->match);
	cmp_side_free(&r->base);
	cmp_side_free(&r->cur);
	free(r->rows);
	free(r);
	return status;
}
