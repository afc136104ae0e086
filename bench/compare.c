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
#include "compare_report.h"

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
	    "  --tolerance PCT    the noise floor: smallest change that counts, in %% of the\n"
	    "                     baseline (default %g), for AU in percentage points (default\n"
	    "                     %g); METRIC=PCT for one metric\n"
	    "  --alpha A          significance level of Welch's t-test (default %g)\n"
	    "  --run-noise PCT    run-to-run noise the repetitions of one run cannot show\n"
	    "                     (stddev of a run's mean, %% of it; default 10 for rates,\n"
	    "                     5 for AU, 40 for p99s); METRIC=PCT for one; 0: repetitions "
	    "alone\n"
	    "  --inconclusive pass|fail  exit 0 (pass) or 1 (fail) when the only finding is an\n"
	    "                     inconclusive metric (default: exit status 4)\n"
	    "  --allow-cached     compare results that may come from the page cache\n"
	    "  --allow-unfinished compare runs stopped by a signal (\"interrupted\": true)\n"
	    "  --markdown FILE    the table in Markdown (for a merge-request comment)\n"
	    "  --junit FILE       JUnit XML: one testcase per point and metric\n"
	    "  --json FILE        every number, machine-readable\n"
	    "  --quiet            print the verdict line only\n"
	    "\n"
	    "A metric regresses when its change passes the tolerance and Welch's t-test gives\n"
	    "p < alpha: over the repetitions with the run-to-run noise term, or over the run\n"
	    "means where a side has several runs of the config (the noise measured). Within\n"
	    "the tolerance is \"ok\" (no reliable difference); beyond it but not significant,\n"
	    "or from an unsteady run, is \"inconclusive\", with the repetitions that would\n"
	    "tell. Column \"detects\": the smallest change this comparison finds (80 %% power).\n"
	    "Exit status: 0 no regression, 1 regression, 2 usage error, 3 incomparable results,\n"
	    "4 inconclusive (no regression found, but a metric could not be decided).\n",
	    CMP_BASELINES_DIR, CMP_DEFAULT_TOL, CMP_DEFAULT_TOL_PT, CMP_DEFAULT_ALPH);
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

static void cmp_opts_defaults(struct cmp_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->alpha = CMP_DEFAULT_ALPH;
	o->baselines_dir = CMP_BASELINES_DIR;
	for (int i = 0; i < metric_count; i++) {
		o->tol[i] = metric_table[i].points ? CMP_DEFAULT_TOL_PT : CMP_DEFAULT_TOL;
		o->run_noise[i] = metric_table[i].run_noise;
		if (metric_table[i].by_default)
			o->metrics[o->nmetrics++] = i;
	}
}

/* An option that takes a value v: 1 when a is one (stored), 0 when it is not, -1 after saying
 * what is wrong with v. */
static int cmp_opt_value(struct cmp_opts *o, const char *a, const char *v)
{
	if (strcmp(a, "--baseline") == 0) {
		o->baseline_name = v;
	} else if (strcmp(a, "--baselines") == 0) {
		o->baselines_dir = v;
	} else if (strcmp(a, "--inconclusive") == 0) {
		o->inconclusive = strcmp(v, "pass") == 0 ? 1 : strcmp(v, "fail") == 0 ? 2 : -1;
		if (o->inconclusive < 0) {
			fprintf(stderr,
				"feedbench compare: --inconclusive '%s': expected pass or fail\n",
				v);
			return -1;
		}
	} else if (strcmp(a, "--markdown") == 0) {
		o->markdown = v;
	} else if (strcmp(a, "--junit") == 0) {
		o->junit = v;
	} else if (strcmp(a, "--json") == 0) {
		o->json = v;
	} else if (strcmp(a, "--metric") == 0 || strcmp(a, "--metrics") == 0) {
		return cmp_opt_metrics(o, v) < 0 ? -1 : 1;
	} else if (strcmp(a, "--tolerance") == 0) {
		return cmp_opt_pct_per_metric("--tolerance", o->tol, o->tol_set, 1000, v) < 0 ? -1
											      : 1;
	} else if (strcmp(a, "--alpha") == 0) {
		char *end;
		o->alpha = strtod(v, &end);
		if (*end || !(o->alpha > 0 && o->alpha <= 0.5)) {
			fprintf(stderr,
				"feedbench compare: --alpha '%s': expected a number in (0, 0.5]\n",
				v);
			return -1;
		}
	} else if (strcmp(a, "--run-noise") == 0) {
		return cmp_opt_pct_per_metric("--run-noise", o->run_noise, o->noise_set, 100, v) < 0
			   ? -1
			   : 1;
	} else {
		return 0;
	}
	return 1;
}

static int cmp_parse_args(struct cmp_opts *o, int argc, char **argv)
{
	const char *pos[2] = {NULL, NULL};
	int npos = 0, rc;

	cmp_opts_defaults(o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			compare_usage(stdout);
			return 1;
		} else if (strcmp(a, "--allow-cached") == 0) {
			o->allow_cached = true;
		} else if (strcmp(a, "--allow-unfinished") == 0) {
			cmp_allow_unfinished(true);
		} else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
			o->quiet = true;
		} else if (a[0] == '-' && a[1] && !v) {
			fprintf(stderr, "feedbench compare: %s needs a value (see --help)\n", a);
			return -1;
		} else if ((rc = cmp_opt_value(o, a, v)) != 0) {
			if (rc < 0)
				return -1;
			i++;
		} else if (a[0] == '-') {
			fprintf(stderr, "feedbench compare: unknown option '%s' (see --help)\n", a);
			return -1;
		} else if (npos == 2) {
			fprintf(stderr, "feedbench compare: unexpected argument '%s'\n", a);
			return -1;
		} else {
			pos[npos++] = a;
		}
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

/* ---- verdicts ---------------------------------------------------------------------------- */

/* A run whose conditions changed while it ran (one metric's repetitions unsteady, see
 * decide.h) is unsteady for every metric: a shift it shows elsewhere is not a finding either. */
static void cmp_pair_steady(struct cmp_report *r, int pair)
{
	const char *unsteady = NULL;

	for (int i = 0; i < r->nrows; i++)
		if (r->rows[i].pair == pair && r->rows[i].o.verdict == CMP_INCONCLUSIVE &&
		    r->rows[i].o.d.steady_p < DECIDE_STEADY_ALPHA &&
		    r->rows[i].o.d.p < r->opts->alpha)
			unsteady = metric_table[r->rows[i].metric].name;
	if (!unsteady)
		return;
	for (int i = 0; i < r->nrows; i++) {
		struct cmp_outcome *o = &r->rows[i].o;
		if (r->rows[i].pair != pair ||
		    (o->verdict != CMP_REGRESSED && o->verdict != CMP_IMPROVED))
			continue;
		o->verdict = CMP_INCONCLUSIVE;
		o->d.outcome = DECIDE_INCONCLUSIVE;
		size_t n = strlen(o->d.why);
		snprintf(o->d.why + n, sizeof(o->d.why) - n,
			 " -> inconclusive: the run was unsteady (%s); run it again", unsteady);
	}
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
			struct decide_spec spec = {
			    .higher_better = m->higher_better,
			    .scale = m->points ? DECIDE_POINTS : DECIDE_RELATIVE,
			    .floor = row->tol,
			    .run_noise = row->run_noise,
			    .runs = by_runs,
			    .alpha = o->alpha,
			};
			cmp_judge(vb, nb, vc, nc, &spec, &row->o);
		}
		cmp_pair_steady(r, p);
	}
	for (int i = 0; i < r->nrows; i++)
		r->count[r->rows[i].o.verdict]++;
	return 0;
}

static void cmp_print_table(const struct cmp_report *r, FILE *f)
{
	char base[96], cur[96], change[48], test[128], mde[32], tol[32];

	fprintf(f, "\n");
	if (r->labelled)
		fprintf(f, "%-28s ", "point");
	fprintf(f, "%-13s %-28s %-28s %-10s %5s  %-50s %-8s %s\n", "metric", "baseline", "current",
		"change", "tol", "test", "detects", "verdict");
	for (int i = 0; i < r->nrows; i++) {
		const struct cmp_row *row = &r->rows[i];
		const struct metric *m = &metric_table[row->metric];

		cmp_stat_text(&row->o.base, m, row->o.by_runs, base, sizeof(base));
		cmp_stat_text(&row->o.cur, m, row->o.by_runs, cur, sizeof(cur));
		cmp_change_text(&row->o, change, sizeof(change));
		cmp_test_text(&row->o, r->opts->alpha, test, sizeof(test));
		cmp_mde_text(&row->o, mde, sizeof(mde));
		snprintf(tol, sizeof(tol), "%g%s", row->tol, m->points ? "pt" : "%");
		if (r->labelled)
			fprintf(f, "%-28s ", cmp_row_label(r, row));
		/* ± is two bytes in UTF-8 and one column: widen by one. */
		fprintf(f, "%-13s %-*s %-*s %-10s %5s  %-50s %-8s %s\n", m->name,
			row->o.base.n > 1 ? 29 : 28, base, row->o.cur.n > 1 ? 29 : 28, cur, change,
			tol, test, mde, cmp_verdict_name(row->o.verdict));
	}
	for (int i = 0; i < r->nrows; i++)
		if (r->rows[i].o.verdict == CMP_INCONCLUSIVE)
			fprintf(f, "%s: %s\n", metric_table[r->rows[i].metric].name,
				r->rows[i].o.d.why);
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
		r->count[CMP_REGRESSED]	     ? "REGRESSED"
		: r->count[CMP_INCONCLUSIVE] ? "INCONCLUSIVE"
					     : "no regression",
		counts, r->nrows, r->nrows == 1 ? "" : "s");
}

/* A table cell: '|' would end it, a newline the row. */
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
			static const int inc_status[] = {CMP_EXIT_INCONCLUSIVE, CMP_EXIT_OK,
							 CMP_EXIT_REGRESSED};
			r->status = r->count[CMP_REGRESSED]	 ? CMP_EXIT_REGRESSED
				    : r->count[CMP_INCONCLUSIVE] ? inc_status[opts.inconclusive]
								 : CMP_EXIT_OK;
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
