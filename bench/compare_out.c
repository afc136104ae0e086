/* The files of `feedbench compare`: the table in Markdown, JUnit XML as CI systems read it, and
 * JSON with every number; also the text of numbers that the terminal shares. Each file is
 * written whole or not at all (safe_write_atomic).
 */
#include "compare_report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "build_config.h"
#include "errors.h"
#include "safefile.h"

/* ---- numbers as text ------------------------------------------------------------------- */

/* Decimals that suit a value of this size (and the stddev printed beside it). */
int cmp_decimals(double v)
{
	double a = fabs(v);

	return a >= 1000 ? 0 : a >= 100 ? 1 : a >= 1 || a == 0 ? 2 : a >= 0.01 ? 4 : 6;
}

/* "812.3 ± 4.1 MiB/s (n=3)", or "(5 runs)" for run means */
void cmp_stat_text(const struct summary_stat *s, const struct metric *m, bool runs, char *buf,
		   size_t len)
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

void cmp_change_text(const struct cmp_outcome *o, char *buf, size_t len)
{
	if (o->points && isfinite(o->d.change) && isfinite(o->change_pct))
		snprintf(buf, len, "%+.1f pt (%+.1f %%)", o->d.change, o->change_pct);
	else if (o->points && isfinite(o->d.change))
		snprintf(buf, len, "%+.1f pt", o->d.change);
	else if (isnan(o->change_pct))
		snprintf(buf, len, "n/a");
	else if (isinf(o->change_pct))
		snprintf(buf, len, "%s (from 0)", o->change_pct > 0 ? "+inf" : "-inf");
	else
		snprintf(buf, len, "%+.1f %%", o->change_pct);
}

void cmp_p_text(double p, char *buf, size_t len)
{
	if (p < 0.0001)
		snprintf(buf, len, "p<0.0001");
	else
		snprintf(buf, len, "p=%.2g", p);
}

/* The test column: "p=0.0012, 95% CI [-24.0, -18.4] %" or why there is none; a side with
 * one value borrowed its spread ("1 vs 3 values"). */
void cmp_test_text(const struct cmp_outcome *o, double alpha, char *buf, size_t len)
{
	const char *u = o->points ? "pt" : "%";
	char p[32], low[64] = "";

	if (o->low_confidence)
		snprintf(low, sizeof(low), ", %d vs %d %s", o->base.n, o->cur.n,
			 o->by_runs ? "runs" : "reps");
	if (o->verdict == CMP_MISSING)
		snprintf(buf, len, "-");
	else if (isnan(o->p))
		snprintf(buf, len, "no spread to test%s", low);
	else {
		cmp_p_text(o->p, p, sizeof(p));
		if (isnan(o->d.ci_lo))
			snprintf(buf, len, "%s%s%s", p, o->by_runs ? ", run means" : "", low);
		else
			snprintf(buf, len, "%s, %g%% CI [%+.1f, %+.1f] %s%s%s", p,
				 100 * (1 - alpha), o->d.ci_lo, o->d.ci_hi, u,
				 o->by_runs ? ", run means" : "", low);
	}
}

/* The smallest change this comparison detects (80 % power): "19.8 %", "3.1 pt". */
void cmp_mde_text(const struct cmp_outcome *o, char *buf, size_t len)
{
	if (isfinite(o->d.mde))
		snprintf(buf, len, "%.1f %s", o->d.mde, o->points ? "pt" : "%");
	else
		snprintf(buf, len, "-");
}

const char *cmp_row_label(const struct cmp_report *r, const struct cmp_row *row)
{
	const char *l = r->cur.points[r->match.pairs[row->pair].c].label;

	return l[0] ? l : "-";
}

const char *cmp_overall(const struct cmp_report *r)
{
	if (r->status == CMP_EXIT_INCOMPARABLE)
		return "incomparable";
	return r->count[CMP_REGRESSED]	    ? "regressed"
	       : r->count[CMP_INCONCLUSIVE] ? "inconclusive"
					    : "ok";
}

/* "1 regressed, 4 ok, 1 noise" */
void cmp_counts_text(const struct cmp_report *r, char *buf, size_t len)
{
	static const enum cmp_verdict order[] = {CMP_REGRESSED, CMP_IMPROVED, CMP_INCONCLUSIVE,
						 CMP_OK, CMP_MISSING};
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (r->count[order[i]] && used < len)
			used +=
			    (size_t)snprintf(buf + used, len - used, "%s%d %s", used ? ", " : "",
					     r->count[order[i]], cmp_verdict_name(order[i]));
}

/* "run", "5 runs", "sweep, 4 points", "summary" */
void cmp_side_desc(const struct cmp_side *s, char *buf, size_t len)
{
	if (s->sweep)
		snprintf(buf, len, "sweep, %d point%s", s->npoints, s->npoints == 1 ? "" : "s");
	else if (strcmp(s->kind, "runs") == 0)
		snprintf(buf, len, "%d run%s", s->npoints, s->npoints == 1 ? "" : "s");
	else
		snprintf(buf, len, "%s", s->kind);
}

/* ---- terminal ------------------------------------------------------------------------------ */

void cmp_print_header(const struct cmp_report *r, FILE *f, const char *bullet)
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
	/* One floor for the relative metrics and one in points for AU, or per metric. */
	double rel = NAN, pts = NAN;
	bool same = true;
	for (int i = 0; i < r->opts->nmetrics; i++) {
		int m = r->opts->metrics[i];
		double *t = metric_table[m].points ? &pts : &rel;
		same &= isnan(*t) || *t == r->opts->tol[m];
		*t = r->opts->tol[m];
	}
	bool by_runs = false, by_reps = false;
	for (int p = 0; p < r->match.npairs; p++) {
		by_runs |= cmp_pair_by_runs(r, p);
		by_reps |= !cmp_pair_by_runs(r, p);
	}
	fprintf(f, "%stest: Welch's t-test (two-sided, alpha %g) %s%s%s; tolerance (floor) ",
		bullet, r->opts->alpha,
		by_runs ? "over run means (several runs of a config: run-to-run noise measured)"
			: "",
		by_runs && by_reps ? ", else " : "",
		by_reps ? "over repetitions with a run-to-run noise term" : "");
	if (same && !isnan(rel) && !isnan(pts))
		fprintf(f, "%g %%, AU %g percentage points\n", rel, pts);
	else if (same)
		fprintf(f, isnan(pts) ? "%g %%\n" : "%g percentage points\n",
			isnan(pts) ? rel : pts);
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
	char base[96], cur[96], change[48], test[128], mde[32], counts[256];

	fprintf(f, "### feedbench compare: %s\n\n",
		r->status == CMP_EXIT_INCOMPARABLE ? "incomparable"
		: r->count[CMP_REGRESSED]	   ? "**regressed**"
		: r->count[CMP_INCONCLUSIVE]	   ? "**inconclusive**"
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
	fprintf(f, "| metric | baseline | current | change | tolerance | test | detects | "
		   "verdict |\n");
	if (r->labelled)
		fprintf(f, "|---");
	fprintf(f, "|---|---:|---:|---:|---:|---|---:|---|\n");
	for (int i = 0; i < r->nrows; i++) {
		const struct cmp_row *row = &r->rows[i];
		const struct metric *m = &metric_table[row->metric];
		bool bad = row->o.verdict == CMP_REGRESSED;

		cmp_stat_text(&row->o.base, m, row->o.by_runs, base, sizeof(base));
		cmp_stat_text(&row->o.cur, m, row->o.by_runs, cur, sizeof(cur));
		cmp_change_text(&row->o, change, sizeof(change));
		cmp_test_text(&row->o, r->opts->alpha, test, sizeof(test));
		cmp_mde_text(&row->o, mde, sizeof(mde));
		if (r->labelled) {
			fprintf(f, "| ");
			cmp_md(f, cmp_row_label(r, row));
			fputc(' ', f);
		}
		fprintf(f, "| %s | %s | %s | %s%s%s | %g %s | %s | %s | %s%s%s |\n", m->name, base,
			cur, bad ? "**" : "", change, bad ? "**" : "", row->tol,
			m->points ? "pt" : "%", test, mde, bad ? "**" : "",
			cmp_verdict_name(row->o.verdict), bad ? "**" : "");
	}
	for (int i = 0; i < r->nrows; i++)
		if (r->rows[i].o.verdict == CMP_INCONCLUSIVE) {
			fprintf(f, "\n- %s: ", metric_table[r->rows[i].metric].name);
			cmp_md(f, r->rows[i].o.d.why);
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

/* How a row shows in JUnit: 'f' a failure (a regression; an inconclusive metric with
 * --inconclusive fail), 's' skipped (inconclusive), 'p' passed. */
static char cmp_junit_kind(const struct cmp_report *r, const struct cmp_row *row)
{
	if (row->o.verdict == CMP_REGRESSED)
		return 'f';
	if (row->o.verdict != CMP_INCONCLUSIVE)
		return 'p';
	return r->opts->inconclusive == 2 ? 'f' : r->opts->inconclusive == 1 ? 'p' : 's';
}

static void cmp_junit_suite_open(const struct cmp_report *r, FILE *f, int id, const char *name,
				 int tests, int failures, int errors, int skipped)
{
	fprintf(f, "  <testsuite name=\"");
	cmp_xml(f, name);
	fprintf(f,
		"\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"0\" "
		"timestamp=\"%s\" hostname=\"",
		tests, failures, errors, skipped, r->stamp);
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
	char sb[96], sc[96], change[48], test[128];
	size_t used;

	cmp_stat_text(&row->o.base, m, row->o.by_runs, sb, sizeof(sb));
	cmp_stat_text(&row->o.cur, m, row->o.by_runs, sc, sizeof(sc));
	cmp_change_text(&row->o, change, sizeof(change));
	cmp_test_text(&row->o, r->opts->alpha, test, sizeof(test));
	used = (size_t)snprintf(buf, len,
				"%s (%s is better)\nbaseline: %s  [%s]\ncurrent:  %s  [%s]\n"
				"change: %s (tolerance %g %s)\n",
				m->name, m->higher_better ? "higher" : "lower", sb, b->path, sc,
				c->path, change, row->tol, m->points ? "percentage points" : "%");
	if (used < len && !isnan(row->o.p) && row->o.verdict != CMP_MISSING)
		used += (size_t)snprintf(buf + used, len - used,
					 "Welch's t-test%s: t=%.3g, df=%.3g, %s\n",
					 row->o.by_runs	      ? " over run means"
					 : row->run_noise > 0 ? " with run-to-run noise"
							      : "",
					 row->o.t, row->o.df, test);
	else if (used < len)
		used += (size_t)snprintf(buf + used, len - used, "%s\n", test);
	if (used < len && row->o.verdict != CMP_MISSING)
		used += (size_t)snprintf(buf + used, len - used, "why: %s\n", row->o.d.why);
	if (used < len)
		snprintf(buf + used, len - used, "verdict: %s\n", cmp_verdict_name(row->o.verdict));
}

static void cmp_junit_pair(const struct cmp_report *r, FILE *f, int pair)
{
	const struct cmp_point *c = &r->cur.points[r->match.pairs[pair].c];
	char name[700], cls[700], detail[2048], msg[400], change[48], sb[96], sc[96], p[32];
	int tests = 0, failures = 0, skipped = 0;

	for (int i = 0; i < r->nrows; i++)
		if (r->rows[i].pair == pair) {
			tests++;
			failures += cmp_junit_kind(r, &r->rows[i]) == 'f';
			skipped += cmp_junit_kind(r, &r->rows[i]) == 's';
		}
	snprintf(name, sizeof(name), "feedbench compare: %s%s%s", c->workload,
		 c->label[0] ? " " : "", c->label);
	snprintf(cls, sizeof(cls), "feedbench.%s%s%s", c->workload, c->label[0] ? "." : "",
		 c->label);
	for (char *s = cls; *s; s++)
		if (*s == ' ')
			*s = '.';
	cmp_junit_suite_open(r, f, pair, name, tests, failures, 0, skipped);
	for (int i = 0; i < r->nrows; i++) {
		const struct cmp_row *row = &r->rows[i];
		const struct metric *m = &metric_table[row->metric];
		if (row->pair != pair)
			continue;
		fprintf(f, "    <testcase classname=\"");
		cmp_xml(f, cls);
		fprintf(f, "\" name=\"%s\" time=\"0\"", m->name);
		if (cmp_junit_kind(r, row) == 'p') {
			fprintf(f, "/>\n");
			continue;
		}
		if (cmp_junit_kind(r, row) == 's') {
			fprintf(f, ">\n      <skipped message=\"");
			snprintf(msg, sizeof(msg), "%s inconclusive: %s", m->name, row->o.d.why);
			cmp_xml(f, msg);
			fprintf(f, "\"/>\n    </testcase>\n");
			continue;
		}
		cmp_change_text(&row->o, change, sizeof(change));
		cmp_stat_text(&row->o.base, m, row->o.by_runs, sb, sizeof(sb));
		cmp_stat_text(&row->o.cur, m, row->o.by_runs, sc, sizeof(sc));
		if (isnan(row->o.p))
			snprintf(p, sizeof(p), "no spread to test against");
		else
			cmp_p_text(row->o.p, p, sizeof(p));
		bool reg = row->o.verdict == CMP_REGRESSED;
		snprintf(msg, sizeof(msg), "%s %s %s: baseline %s, current %s (%s)", m->name,
			 reg ? "regressed" : "inconclusive", change, sb, sc, p);
		cmp_row_detail(r, row, detail, sizeof(detail));
		fprintf(f, ">\n      <failure message=\"");
		cmp_xml(f, msg);
		fprintf(f, "\" type=\"%s\">", reg ? "regression" : "inconclusive");
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
		cmp_junit_suite_open(r, f, 0, "feedbench compare", 1, 0, 1, 0);
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
	json_object_set_new(root, "inconclusive_exit",
			    json_string(r->opts->inconclusive == 1   ? "pass"
					: r->opts->inconclusive == 2 ? "fail"
								     : "status 4"));
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
		json_object_set_new(o, "tolerance_unit",
				    json_string(row->o.points ? "percentage points" : "%"));
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
		json_object_set_new(o, "change", cmp_json_num(row->o.d.change));
		json_object_set_new(o, "change_unit",
				    json_string(row->o.points ? "percentage points" : "%"));
		json_object_set_new(o, "ci_low", cmp_json_num(row->o.d.ci_lo));
		json_object_set_new(o, "ci_high", cmp_json_num(row->o.d.ci_hi));
		json_object_set_new(o, "mde", cmp_json_num(row->o.d.mde));
		json_object_set_new(o, "mde_unlimited_repetitions",
				    cmp_json_num(row->o.d.mde_limit));
		json_object_set_new(o, "power", json_real(DECIDE_POWER));
		json_object_set_new(o, "repetitions_needed",
				    row->o.verdict == CMP_INCONCLUSIVE && row->o.d.reps_needed
					? json_integer(row->o.d.reps_needed)
					: json_null());
		json_object_set_new(o, "steady_p", cmp_json_num(row->o.d.steady_p));
		json_object_set_new(o, "why", json_string(row->o.d.why));
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

int cmp_write_outputs(const struct cmp_report *r)
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
