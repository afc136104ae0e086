/* `feedbench history FOLDER --metric bandwidth`: every run below FOLDER in time order, with the
 * git commit each recorded, as a table, history.csv and a trend plot (plot/history.gp).
 *
 * A series is one workload configuration (workload name and config hash; a sweep point is its
 * own series), so a trend line never mixes results that compare would refuse to compare.
 * Copies of a run (a saved baseline is one) are listed once.
 */
#include "compare.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <jansson.h>

#include "changepoint.h"
#include "errors.h"
#include "report.h"
#include "safefile.h"
#include "util.h"

#define HY_MAX_DEPTH  8
#define HY_MAX_SERIES 16 /* lines drawn; the table and CSV hold them all */

struct hy_run {
	struct cmp_point p;
	int series; /* index into hy.series */
	struct summary_stat s;
};

struct hy {
	struct hy_run *runs;
	int nruns, cap;
	int skipped;
	int impossible;	     /* of them refused as impossible or of an unknown schema: exit 3 */
	char (*series)[640]; /* titles */
	char (*series_key)[200];
	int nseries;
	int metric; /* index into metric_table */
};

static void history_usage(FILE *f)
{
	fprintf(
	    f, "usage: feedbench history FOLDER [--metric M] [--output DIR] [--no-plot]\n"
	       "                         [--changes [--markdown F] [--json F] [--junit F]]\n"
	       "                         [--allow-unfinished]\n"
	       "\n"
	       "Lists every run below FOLDER (run folders, sweep points, saved baselines) by\n"
	       "start time, with the git commit it recorded, and the metric's mean and standard\n"
	       "deviation over its repetitions. Writes DIR/history.csv and, with gnuplot,\n"
	       "DIR/history_METRIC.png and .svg (DIR defaults to FOLDER).\n"
	       "Metrics: bandwidth (default), samples, au, iops, latency_p50, latency_p90,\n"
	       "latency_p99, latency_p999, wait_p99. Runs a signal stopped (<run>.unfinished,\n"
	       "\"interrupted\": true) are skipped unless --allow-unfinished.\n"
	       "--changes finds change points per series (E-divisive means, permutation test,\n"
	       "alpha 0.005): where the metric's mean over runs shifted and stayed, with the run,\n"
	       "commit, magnitude and p-value; also as Markdown, JSON and JUnit (a change for the\n"
	       "worse is a failure).\n");
}

/* The label of a sweep point: its folder's entry in ../sweep_results.json. */
static void hy_point_label(const char *summary, char *label, size_t len)
{
	char dir[PATH_MAX], parent[PATH_MAX + 32];
	const char *slash, *sub;
	json_t *root, *pt;
	size_t i;

	label[0] = '\0';
	slash = strrchr(summary, '/');
	if (!slash)
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - summary), summary);
	slash = strrchr(dir, '/');
	sub = slash ? slash + 1 : dir;
	if (strncmp(sub, "point-", 6) != 0)
		return;
	snprintf(parent, sizeof(parent), "%.*s/sweep_results.json", slash ? (int)(slash - dir) : 1,
		 slash ? dir : ".");
	root = safe_json_load(parent, 0, NULL);
	json_array_foreach(json_object_get(root, "points"), i, pt)
	{
		const char *d = json_string_value(json_object_get(pt, "dir"));
		const char *l = json_string_value(json_object_get(pt, "label"));
		char bad[200];
		if (safe_point_dir_check(d, i, bad, sizeof(bad)) < 0)
			continue; /* a folder outside the sweep is never this point's */
		if (l && strcmp(d, sub) == 0)
			snprintf(label, len, "%s", l);
	}
	json_decref(root);
}

static bool hy_seen(const struct hy *h, const struct cmp_point *p)
{
	for (int i = 0; i < h->nruns; i++)
		if (cmp_same_run(&h->runs[i].p, p))
			return true;
	return false;
}

static int hy_add(struct hy *h, const char *path)
{
	char why[CMP_REASON_LEN * 2];
	struct cmp_point p;

	int rc = cmp_point_load(&p, path, why, sizeof(why));
	if (rc < 0) {
		fprintf(stderr, "feedbench history: skipped %s\n", why);
		h->skipped++;
		h->impossible += rc == -FB_EIMPOSSIBLE;
		return 0;
	}
	if (hy_seen(h, &p)) {
		cmp_point_free(&p);
		return 0;
	}
	if (h->nruns == h->cap) {
		int cap = h->cap ? h->cap * 2 : 64;
		struct hy_run *r = realloc(h->runs, (size_t)cap * sizeof(*r));
		if (!r) {
			cmp_point_free(&p);
			return -ENOMEM;
		}
		h->runs = r;
		h->cap = cap;
	}
	hy_point_label(path, p.label, sizeof(p.label));
	memset(&h->runs[h->nruns], 0, sizeof(h->runs[0]));
	h->runs[h->nruns++].p = p;
	return 0;
}

static int hy_walk_one(void *ctx, const char *path)
{
	return hy_add(ctx, path);
}

static int hy_cmp_start(const void *a, const void *b)
{
	const struct hy_run *x = a, *y = b;
	int c = strcmp(x->p.start, y->p.start);

	if (!c)
		c = strcmp(x->p.run_id, y->p.run_id);
	return c ? c : strcmp(x->p.path, y->p.path); /* the points of one sweep */
}

/* Series by workload and config hash; titles say the workload and point, and the hash when two
 * series would otherwise read the same. */
static int hy_series(struct hy *h)
{
	h->series = calloc((size_t)h->nruns, sizeof(*h->series));
	h->series_key = calloc((size_t)h->nruns, sizeof(*h->series_key));
	if (!h->series || !h->series_key)
		return -ENOMEM;
	for (int i = 0; i < h->nruns; i++) {
		struct hy_run *r = &h->runs[i];
		char key[200];
		int s;

		snprintf(key, sizeof(key), "%.120s|%.64s", r->p.workload, r->p.config_hash);
		for (s = 0; s < h->nseries; s++)
			if (strcmp(h->series_key[s], key) == 0)
				break;
		if (s == h->nseries) {
			snprintf(h->series_key[s], sizeof(h->series_key[0]), "%s", key);
			snprintf(h->series[s], sizeof(h->series[0]), "%s%s%s", r->p.workload,
				 r->p.label[0] ? " " : "", r->p.label);
			h->nseries++;
		}
		r->series = s;
	}
	/* Titles that read the same get their config hash: mark all of them first. */
	bool *dup = calloc((size_t)h->nseries + 1, sizeof(*dup));
	if (!dup)
		return -ENOMEM;
	for (int s = 0; s < h->nseries; s++)
		for (int t = 0; t < h->nseries; t++)
			dup[s] |= s != t && strcmp(h->series[s], h->series[t]) == 0;
	for (int s = 0; s < h->nseries; s++) {
		const char *bar = strchr(h->series_key[s], '|');
		size_t n = strlen(h->series[s]);
		if (dup[s])
			snprintf(h->series[s] + n, sizeof(h->series[0]) - n, " [%.8s]",
				 bar ? bar + 1 : "");
	}
	free(dup);
	return 0;
}

static void hy_stats(struct hy *h)
{
	const struct metric *m = &metric_table[h->metric];

	for (int i = 0; i < h->nruns; i++) {
		struct hy_run *r = &h->runs[i];
		double v[CMP_MAX_REPS];
		int n = 0;

		for (int k = 0; k < r->p.nreps; k++)
			if (!isnan(r->p.v[k][m->m]))
				v[n++] = r->p.v[k][m->m] * m->scale;
		r->s = stat_summarise(v, n);
	}
}

static void hy_print(const struct hy *h, const char *folder)
{
	const struct metric *m = &metric_table[h->metric];
	char head[64];

	snprintf(head, sizeof(head), "%s (%s)", m->name, m->unit);
	printf("history of %s below %s: %d run%s, %d series (%s is better)\n\n", head, folder,
	       h->nruns, h->nruns == 1 ? "" : "s", h->nseries,
	       m->higher_better ? "higher" : "lower");
	printf("%-4s %-21s %-10s %-40s %4s  %-24s %s\n", "#", "start (UTC)", "commit", "series",
	       "reps", head, "vs previous in series");
	for (int i = 0; i < h->nruns; i++) {
		const struct hy_run *r = &h->runs[i];
		char val[64] = "not recorded", prev[32] = "";

		if (r->s.n > 1)
			snprintf(val, sizeof(val), "%.4g ± %.2g", r->s.mean, r->s.stddev);
		else if (r->s.n == 1)
			snprintf(val, sizeof(val), "%.4g", r->s.mean);
		for (int j = i - 1; j >= 0; j--)
			if (h->runs[j].series == r->series) {
				const struct summary_stat *q = &h->runs[j].s;
				if (q->n && r->s.n && q->mean != 0)
					snprintf(prev, sizeof(prev), "%+.1f %%",
						 (r->s.mean - q->mean) / fabs(q->mean) * 100);
				break;
			}
		printf("%-4d %-21s %-10.8s %-40.40s %4d  %-*s %s\n", i + 1, r->p.start,
		       r->p.git_commit[0] ? r->p.git_commit : "-", h->series[r->series], r->p.nreps,
		       r->s.n > 1 ? 25 : 24, val, prev);
	}
}

static int hy_write_csv(const struct hy *h, const char *path)
{
	const struct metric *m = &metric_table[h->metric];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (!f)
		return -ENOMEM;
	fprintf(f, "start,run_id,git_commit,series_id,series,workload,point,config_hash,metric,"
		   "unit,repetitions,mean,stddev,min,max,summary\n");
	for (int i = 0; i < h->nruns; i++) {
		const struct hy_run *r = &h->runs[i];
		const char *fields[] = {r->p.start, r->p.run_id, r->p.git_commit};
		for (size_t k = 0; k < 3; k++) {
			util_csv_field(f, fields[k]);
			fputc(',', f);
		}
		fprintf(f, "%d,", r->series + 1);
		util_csv_field(f, h->series[r->series]);
		fputc(',', f);
		util_csv_field(f, r->p.workload);
		fputc(',', f);
		util_csv_field(f, r->p.label);
		fprintf(f, ",%s,%s,%s,%d,", r->p.config_hash, m->name, m->unit, r->s.n);
		if (r->s.n)
			fprintf(f, "%.10g,%.10g,%.10g,%.10g,", r->s.mean, r->s.stddev, r->s.min,
				r->s.max);
		else
			fprintf(f, "NaN,NaN,NaN,NaN,");
		util_csv_field(f, r->p.path);
		fputc('\n', f);
	}
	fclose(f);
	rc = safe_write_atomic(path, text, len);
	free(text);
	return rc;
}

static int hy_plot(const struct hy *h, const char *csv, const char *out, char *why, size_t len)
{
	const struct metric *m = &metric_table[h->metric];
	char *vars = NULL, buf[PATH_MAX], title[256];
	size_t vlen = 0;
	FILE *f = open_memstream(&vars, &vlen);
	int n = h->nseries < HY_MAX_SERIES ? h->nseries : HY_MAX_SERIES, rc;

	if (!f)
		return -ENOMEM;
	plot_var(f, "csv", csv);
	plot_var(f, "out", out);
	snprintf(title, sizeof(title), "feedbench history: %s, %d runs%s", m->name, h->nruns,
		 n < h->nseries ? " (first 16 series)" : "");
	plot_var(f, "title_text", title);
	snprintf(buf, sizeof(buf), "%s (%s)", m->name, m->unit);
	plot_var(f, "ylabel_text", buf);
	/* Clock times for a day of runs, dates beyond. */
	bool long_span =
	    h->nruns > 1 && strncmp(h->runs[0].p.start, h->runs[h->nruns - 1].p.start, 10) != 0;
	plot_var(f, "xfmt", long_span ? "%Y-%m-%d\n%H:%M" : "%H:%M:%S");
	fprintf(f, "nseries = %d; ", n);
	for (int s = 0; s < n; s++) {
		char name[16];
		snprintf(name, sizeof(name), "t%d", s + 1);
		plot_var(f, name, h->series[s]);
	}
	fclose(f);
	rc = vars ? plot_script("history.gp", vars, why, len) : -ENOMEM;
	free(vars);
	return rc;
}

static void hy_free(struct hy *h)
{
	for (int i = 0; i < h->nruns; i++)
		cmp_point_free(&h->runs[i].p);
	free(h->runs);
	free(h->series);
	free(h->series_key);
}

/* history.csv (and the pictures) are checked before anything is read: a folder, link or
 * socket at their names is a usage error (safefile.h). */
static int hy_check_outputs(const char *outdir, const char *metric, bool plot)
{
	static const char *const fmt[] = {"%s/history.csv", "%s/history_%s.png",
					  "%s/history_%s.svg"};
	char path[PATH_MAX], why[PATH_MAX + 160];

	for (size_t i = 0; i < (plot ? 3u : 1u); i++) {
		snprintf(path, sizeof(path), fmt[i], outdir, metric);
		if (safe_output_check(path, why, sizeof(why)) < 0) {
			fprintf(stderr, "feedbench history: %s\n", why);
			return -1;
		}
	}
	return 0;
}

/* ---- change points --------------------------------------------------------------------- */

#define HY_MAX_CHANGES 64

struct hy_change {
	int series, run; /* run: index into h->runs of the first run after the change */
	struct cp_change c;
};

struct hy_changes {
	struct hy_change *list;
	int n;
	int *runs_in; /* per series: runs with the metric */
};

/* Change points of every series, over its runs' means in time order. */
static int hy_find_changes(const struct hy *h, struct hy_changes *ch)
{
	double *x = malloc((size_t)h->nruns * sizeof(*x) + 1);
	int *idx = malloc((size_t)h->nruns * sizeof(*idx) + 1);
	struct cp_change cps[HY_MAX_CHANGES];

	ch->list = calloc((size_t)h->nseries * HY_MAX_CHANGES + 1, sizeof(*ch->list));
	ch->runs_in = calloc((size_t)h->nseries + 1, sizeof(*ch->runs_in));
	if (!x || !idx || !ch->list || !ch->runs_in) {
		free(x);
		free(idx);
		return -ENOMEM;
	}
	for (int s = 0; s < h->nseries; s++) {
		int k = 0;
		for (int i = 0; i < h->nruns; i++)
			if (h->runs[i].series == s && h->runs[i].s.n > 0) {
				x[k] = h->runs[i].s.mean;
				idx[k++] = i;
			}
		ch->runs_in[s] = k;
		int n = cp_detect(x, k, CP_ALPHA, CP_PERMUTATIONS, (uint64_t)s + 1, cps,
				  HY_MAX_CHANGES);
		for (int j = 0; j < n; j++)
			ch->list[ch->n++] = (struct hy_change){s, idx[cps[j].index], cps[j]};
	}
	free(x);
	free(idx);
	return 0;
}

static bool hy_worse(const struct hy *h, const struct cp_change *c)
{
	return metric_table[h->metric].higher_better ? c->after < c->before : c->after > c->before;
}

static double hy_change_pct(const struct cp_change *c)
{
	return c->before != 0 ? (c->after - c->before) / fabs(c->before) * 100 : NAN;
}

static void hy_changes_text(const struct hy *h, const struct hy_changes *ch, FILE *f, bool md)
{
	const struct metric *m = &metric_table[h->metric];

	fprintf(f,
		"%schange points of %s (%s is better): E-divisive means, permutation test "
		"(%d permutations, alpha %g per series), segments of at least %d runs\n\n",
		md ? "### feedbench history: " : "", m->name, m->higher_better ? "higher" : "lower",
		CP_PERMUTATIONS, CP_ALPHA, CP_MIN_SEG);
	if (md)
		fprintf(f, "| series | run | start (UTC) | commit | before | after | change | p | "
			   "direction |\n|---|---:|---|---|---:|---:|---:|---:|---|\n");
	for (int i = 0; i < ch->n; i++) {
		const struct hy_change *c = &ch->list[i];
		const struct hy_run *r = &h->runs[c->run];
		const char *fmt =
		    md ? "| %s | %d | %s | %.12s | %.4g | %.4g | %+.1f %% | %.3g | %s |\n"
		       : "%s: from run %d (%s, commit %.12s): %.4g -> %.4g %s, %+.1f %%, "
			 "p=%.3g, %s\n";
		if (md)
			fprintf(f, fmt, h->series[c->series], c->run + 1, r->p.start,
				r->p.git_commit[0] ? r->p.git_commit : "-", c->c.before, c->c.after,
				hy_change_pct(&c->c), c->c.p,
				hy_worse(h, &c->c) ? "worse" : "better");
		else
			fprintf(f, fmt, h->series[c->series], c->run + 1, r->p.start,
				r->p.git_commit[0] ? r->p.git_commit : "-", c->c.before, c->c.after,
				m->unit, hy_change_pct(&c->c), c->c.p,
				hy_worse(h, &c->c) ? "worse" : "better");
	}
	if (ch->n == 0)
		fprintf(f, "%sno change point in %d series\n", md ? "\n" : "", h->nseries);
}

static void hy_changes_md(const struct hy *h, const struct hy_changes *ch, FILE *f)
{
	hy_changes_text(h, ch, f, true);
}

static void hy_changes_json(const struct hy *h, const struct hy_changes *ch, FILE *f)
{
	const struct metric *m = &metric_table[h->metric];
	json_t *root = json_object(), *series = json_array();

	json_object_set_new(root, "schema", json_integer(1));
	json_object_set_new(root, "metric", json_string(m->name));
	json_object_set_new(root, "unit", json_string(m->unit));
	json_object_set_new(root, "better", json_string(m->higher_better ? "higher" : "lower"));
	json_object_set_new(root, "method", json_string("E-divisive means, permutation test"));
	json_object_set_new(root, "alpha", json_real(CP_ALPHA));
	json_object_set_new(root, "permutations", json_integer(CP_PERMUTATIONS));
	json_object_set_new(root, "min_segment_runs", json_integer(CP_MIN_SEG));
	for (int s = 0; s < h->nseries; s++) {
		json_t *o = json_object(), *list = json_array();
		const char *bar = strchr(h->series_key[s], '|');
		json_object_set_new(o, "series", json_string(h->series[s]));
		json_object_set_new(o, "config_hash", json_string(bar ? bar + 1 : ""));
		json_object_set_new(o, "runs", json_integer(ch->runs_in[s]));
		for (int i = 0; i < ch->n; i++) {
			const struct hy_change *c = &ch->list[i];
			const struct hy_run *r = &h->runs[c->run];
			if (c->series != s)
				continue;
			json_t *e = json_object();
			json_object_set_new(e, "run", json_integer(c->run + 1));
			json_object_set_new(e, "start", json_string(r->p.start));
			json_object_set_new(e, "run_id", json_string(r->p.run_id));
			json_object_set_new(e, "git_commit", json_string(r->p.git_commit));
			json_object_set_new(e, "summary", json_string(r->p.path));
			json_object_set_new(e, "before", json_real(c->c.before));
			json_object_set_new(e, "after", json_real(c->c.after));
			double pct = hy_change_pct(&c->c);
			json_object_set_new(e, "change_pct",
					    isfinite(pct) ? json_real(pct) : json_null());
			json_object_set_new(e, "p_value", json_real(c->c.p));
			json_object_set_new(e, "direction",
					    json_string(hy_worse(h, &c->c) ? "worse" : "better"));
			json_array_append_new(list, e);
		}
		json_object_set_new(o, "changes", list);
		json_array_append_new(series, o);
	}
	json_object_set_new(root, "series", series);
	json_dumpf(root, f, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
	fputc('\n', f);
	json_decref(root);
}

/* XML text or attribute value: markup escaped, control characters XML 1.0 forbids dropped. */
static void hy_xml(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '&')
			fputs("&amp;", f);
		else if (ch == '<')
			fputs("&lt;", f);
		else if (ch == '>')
			fputs("&gt;", f);
		else if (ch == '"')
			fputs("&quot;", f);
		else if (ch >= 0x20 || ch == '\n' || ch == '\t')
			fputc(ch, f);
	}
}

/* JUnit: one testcase per series; a change for the worse is a failure. */
static void hy_changes_junit(const struct hy *h, const struct hy_changes *ch, FILE *f)
{
	int failures = 0;
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	for (int s = 0; s < h->nseries; s++)
		for (int i = 0; i < ch->n; i++)
			if (ch->list[i].series == s && hy_worse(h, &ch->list[i].c)) {
				failures++;
				break;
			}
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite "
		"name=\"feedbench history --changes %s\" tests=\"%d\" failures=\"%d\" "
		"errors=\"0\" time=\"0\" timestamp=\"%s\">\n",
		metric_table[h->metric].name, h->nseries, failures, stamp);
	for (int s = 0; s < h->nseries; s++) {
		fprintf(f, "    <testcase classname=\"feedbench.history\" name=\"");
		hy_xml(f, h->series[s]);
		fprintf(f, "\" time=\"0\">");
		bool open = false;
		for (int i = 0; i < ch->n; i++) {
			const struct hy_change *c = &ch->list[i];
			const struct hy_run *r = &h->runs[c->run];
			char msg[1024];
			if (c->series != s || !hy_worse(h, &c->c))
				continue;
			snprintf(
			    msg, sizeof(msg),
			    "%s changed for the worse from run %d (%s, commit %s): %.4g -> %.4g, "
			    "%+.1f %%, p=%.3g",
			    metric_table[h->metric].name, c->run + 1, r->p.start,
			    r->p.git_commit[0] ? r->p.git_commit : "-", c->c.before, c->c.after,
			    hy_change_pct(&c->c), c->c.p);
			if (!open)
				fprintf(f, "\n      <failure type=\"change point\" message=\"");
			else
				fputc('\n', f);
			hy_xml(f, msg);
			if (!open)
				fprintf(f, "\">");
			open = true;
		}
		fprintf(f, "%s</testcase>\n", open ? "</failure>\n    " : "");
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
}

static int hy_write_with(const struct hy *h, const struct hy_changes *ch, const char *path,
			 void (*fill)(const struct hy *, const struct hy_changes *, FILE *))
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (!f)
		return -ENOMEM;
	fill(h, ch, f);
	fclose(f);
	rc = safe_write_atomic(path, text, len);
	free(text);
	if (rc < 0)
		fprintf(stderr, "feedbench history: cannot write '%s': %s\n", path,
			fb_strerror(rc));
	return rc;
}

/* --changes: the table, then the files asked for. Returns 0, or 1 when a file failed. */
static int hy_changes(const struct hy *h, const char *const files[3])
{
	struct hy_changes ch = {0};
	int status = 0;

	if (hy_find_changes(h, &ch) < 0) {
		fprintf(stderr, "feedbench history: out of memory\n");
		return 1;
	}
	printf("\n");
	hy_changes_text(h, &ch, stdout, false);
	if (files[0] && hy_write_with(h, &ch, files[0], hy_changes_md) < 0)
		status = 1;
	if (files[1] && hy_write_with(h, &ch, files[1], hy_changes_json) < 0)
		status = 1;
	if (files[2] && hy_write_with(h, &ch, files[2], hy_changes_junit) < 0)
		status = 1;
	free(ch.list);
	free(ch.runs_in);
	return status;
}

/* The command line of `feedbench history`. */
struct hy_args {
	const char *folder, *outdir;
	const char *files[3]; /* --markdown, --json, --junit */
	bool plot, changes;
};

/* Reads the options into a and h->metric: -1 to go on, else the exit status (0 after --help). */
static int hy_parse_args(int argc, char **argv, struct hy *h, struct hy_args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
			history_usage(stdout);
			return 0;
		} else if (strcmp(o, "--no-plot") == 0) {
			a->plot = false;
		} else if (strcmp(o, "--allow-unfinished") == 0) {
			cmp_allow_unfinished(true);
		} else if (strcmp(o, "--metric") == 0 && v) {
			h->metric = metric_find(v);
			if (h->metric < 0) {
				fprintf(stderr, "feedbench history: unknown metric '%s'\n", v);
				history_usage(stderr);
				return 2;
			}
			i++;
		} else if (strcmp(o, "--output") == 0 && v) {
			a->outdir = argv[++i];
		} else if (strcmp(o, "--changes") == 0) {
			a->changes = true;
		} else if ((strcmp(o, "--markdown") == 0 || strcmp(o, "--json") == 0 ||
			    strcmp(o, "--junit") == 0) &&
			   v) {
			a->files[o[2] == 'm' ? 0 : o[3] == 's' ? 1 : 2] = argv[++i];
		} else if (o[0] == '-') {
			fprintf(stderr, "feedbench history: unknown or incomplete option '%s'\n",
				o);
			return 2;
		} else if (!a->folder) {
			a->folder = o;
		} else {
			fprintf(stderr, "feedbench history: unexpected argument '%s'\n", o);
			return 2;
		}
	}
	return -1;
}

/* The folder is a folder and every output can be written, before any work: 0, or 2 said. */
static int hy_check_args(const struct hy *h, struct hy_args *a)
{
	char why[512];
	struct stat sb;

	if (!a->folder) {
		history_usage(stderr);
		return 2;
	}
	if (stat(a->folder, &sb) < 0) {
		fprintf(stderr, "feedbench history: cannot read '%s': %s\n", a->folder,
			strerror(errno));
		return 2;
	}
	if (!S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "feedbench history: '%s' is not a folder\n", a->folder);
		return 2;
	}
	a->outdir = a->outdir ? a->outdir : a->folder;
	for (int i = 0; i < 3; i++)
		if (a->files[i] &&
		    (!a->changes || safe_output_check(a->files[i], why, sizeof(why)) < 0)) {
			fprintf(stderr, "feedbench history: %s\n",
				a->changes ? why
					   : "--markdown, --json and --junit go with --changes");
			return 2;
		}
	if (hy_check_outputs(a->outdir, metric_table[h->metric].name, a->plot) < 0)
		return 2;
	return 0;
}

/* The trend of the runs read: printed, history.csv, the changes and the plot. */
static int hy_report(struct hy *h, const struct hy_args *a)
{
	char csv[PATH_MAX], out[PATH_MAX], why[512];
	int rc, status = 0;

	hy_stats(h);
	hy_print(h, a->folder);
	snprintf(csv, sizeof(csv), "%s/history.csv", a->outdir);
	rc = util_mkdirs(a->outdir, 0755);
	if (rc == 0)
		rc = hy_write_csv(h, csv);
	if (rc < 0) {
		fprintf(stderr, "feedbench history: cannot write '%s': %s\n", csv, fb_strerror(rc));
		return 1;
	}
	printf("\nhistory: %s\n", csv);
	if (a->changes && hy_changes(h, a->files) != 0)
		status = 1;
	if (a->plot) {
		snprintf(out, sizeof(out), "%s/history_%s", a->outdir,
			 metric_table[h->metric].name);
		rc = hy_plot(h, csv, out, why, sizeof(why));
		if (rc == 0)
			printf("plot: %s.png %s.svg\n", out, out);
		else
			fprintf(stderr, "feedbench history: warning: no plot: %s\n", why);
		if (rc < 0)
			status = 1;
	}
	if (h->skipped)
		fprintf(stderr, "feedbench history: %d summary.json file%s skipped (see above)\n",
			h->skipped, h->skipped == 1 ? "" : "s");
	if (h->impossible && status == 0)
		status = 3; /* the trend left out results it cannot compare: say so */
	return status;
}

int history_main(int argc, char **argv)
{
	struct hy h = {.metric = metric_find("bandwidth")};
	struct hy_args a = {.plot = true};
	int rc, status;

	if ((status = hy_parse_args(argc, argv, &h, &a)) >= 0 ||
	    (status = hy_check_args(&h, &a)) != 0)
		return status;
	rc = util_walk_files(a.folder, "summary.json", HY_MAX_DEPTH, hy_walk_one, &h);
	if (rc == 0 && h.nruns == 0) {
		fprintf(stderr, "feedbench history: no run below '%s' (no readable summary.json)\n",
			a.folder);
		hy_free(&h);
		return h.impossible ? 3 : 1;
	}
	/* Time order first: series are numbered (and the first 16 drawn) as they appear. */
	qsort(h.runs, (size_t)h.nruns, sizeof(h.runs[0]), hy_cmp_start);
	if (rc == 0)
		rc = hy_series(&h);
	if (rc < 0) {
		fprintf(stderr, "feedbench history: %s\n", fb_strerror(rc));
		hy_free(&h);
		return 1;
	}
	status = hy_report(&h, &a);
	hy_free(&h);
	return status;
}
