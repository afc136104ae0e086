/* The sweep table and recommendation (terminal, Markdown, CSV, JSON), from the summary.json of
 * every point. report.c writes the sweep's report.md around them. */
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "outputs.h"
#include "report.h"
#include "safefile.h"
#include "util.h"

/* [output] repetitions allows up to 1000. */
#define REPORT_MAX_REPS 1000
/* Columns of the printed table; the CSV and JSON carry every metric. opens/s stands beside
 * samples/s: together they tell a sweep over file layouts (tiny files against shards) where
 * the metadata cost goes. */
static const enum sweep_metric report_table_metrics[] = {
    SWM_BANDWIDTH, SWM_IOPS, SWM_SAMPLES, SWM_OPENS, SWM_AU, SWM_WAIT_P99, SWM_LAT_P99,
};
#define SWM_TABLE ((int)(sizeof(report_table_metrics) / sizeof(report_table_metrics[0])))

/* Each metric over the repetitions (a repetition without it left out), and the first
 * repetitions' values of the optimised metrics. v and col hold REPORT_MAX_REPS rows. */
static void sweep_result_metrics(json_t *root, struct sweep_result *r, double (*v)[SWM_COUNT],
				 double *col)
{
	int n = summary_repetition_values(root, v, REPORT_MAX_REPS);

	for (int m = 0; m < SWM_COUNT; m++) {
		int k = 0;
		for (int j = 0; j < n; j++)
			if (!isnan(v[j][m]))
				col[k++] = v[j][m];
		r->m[m] = stat_summarise(col, k);
	}
	r->repetitions = n;
	r->nopt = n < SWEEP_KEEP_REPS ? n : SWEEP_KEEP_REPS;
	for (int k = 0; k < SWEEP_NOPT; k++) {
		enum sweep_metric om = k == SWEEP_OPT_AU	? SWM_AU
				       : k == SWEEP_OPT_SAMPLES ? SWM_SAMPLES
								: SWM_BANDWIDTH;
		for (int j = 0; j < r->nopt; j++)
			r->opt[k][j] = v[j][om];
	}
}

/* The storage a point ran on: cache state, file system, the stripe it got. */
static void sweep_result_storage(json_t *st, struct sweep_result *r)
{
	json_t *se;

	r->cache_resident = json_is_true(json_object_get(st, "cache_resident"));
	snprintf(r->fs_type, sizeof(r->fs_type), "%s", summary_str(st, "fs_type", "?"));
	se = json_object_get(st, "stripe_effective");
	if (json_is_string(se))
		snprintf(r->stripe_effective, sizeof(r->stripe_effective), "%s",
			 json_string_value(se));
	else if (json_is_object(se)) {
		json_t *ss = json_object_get(se, "servers_spanned");

		/* "count 4, size 1048576, servers 4": requested / effective / spanned */
		if (json_is_integer(ss))
			snprintf(r->stripe_effective, sizeof(r->stripe_effective),
				 "count %.0f, size %.0f, servers %lld", summary_num(se, "count"),
				 summary_num(se, "size"), (long long)json_integer_value(ss));
		else
			snprintf(r->stripe_effective, sizeof(r->stripe_effective),
				 "count %.0f, size %.0f%s", summary_num(se, "count"),
				 summary_num(se, "size"),
				 json_is_string(ss) ? ", servers unknown" : "");
	}
}

int sweep_read_summary(const char *path, struct sweep_result *r, char *why, size_t len)
{
	double(*v)[SWM_COUNT] = NULL, *col = NULL;
	json_error_t jerr;
	json_t *root;

	memset(r, 0, sizeof(*r));
	v = calloc(REPORT_MAX_REPS, sizeof(*v));
	col = calloc(REPORT_MAX_REPS, sizeof(*col));
	if (!v || !col) {
		free(v);
		free(col);
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	root = safe_json_load(path, 0, &jerr);
	if (!root) {
		struct stat sb;
		int rc = stat(path, &sb) < 0 ? -ENOENT : -FB_EFORMAT;

		snprintf(why, len, "%s: %s", path, rc == -ENOENT ? "not there" : jerr.text);
		free(v);
		free(col);
		return rc;
	}
	if (!json_is_object(json_object_get(root, "metric"))) {
		snprintf(why, len, "%s has no \"metric\" object", path);
		json_decref(root);
		free(v);
		free(col);
		return -FB_EFORMAT;
	}
	sweep_result_metrics(root, r, v, col);
	sweep_result_storage(json_object_get(root, "storage"), r);
	r->au_pass =
	    strcmp(summary_str(json_object_get(root, "metric"), "train_au_meet_expectation", ""),
		   "success") == 0;
	snprintf(r->verdict, sizeof(r->verdict), "%s", summary_str(root, "verdict", ""));
	r->nwarnings = (int)json_array_size(json_object_get(root, "warnings"));
	r->done = true;
	json_decref(root);
	free(v);
	free(col);
	return 0;
}

/* ---- formatting ---------------------------------------------------------------------- */

/* Warnings a reader of the table must see before trusting it. */
static json_t *report_sweep_warnings(const struct sweep_plan *p, const struct sweep_result *r)
{
	json_t *w = json_array();
	long missing = 0, cached = 0, unstriped = 0, single = 0;
	bool stripe_swept = false;
	char line[512], fs[32] = "";

	for (int a = 0; a < p->naxes; a++)
		stripe_swept |= strncmp(p->axes[a].key, "storage.stripe_", 15) == 0;
	for (long i = 0; i < p->npoints; i++) {
		if (!r[i].done) {
			missing++;
			continue;
		}
		cached += r[i].cache_resident;
		single += r[i].m[0].n < 2;
		if (strstr(r[i].stripe_effective, "unsupported")) {
			unstriped++;
			snprintf(fs, sizeof(fs), "%s", r[i].fs_type);
		}
	}
	if (missing) {
		snprintf(line, sizeof(line),
			 "%ld of %ld points have no result (interrupted or failed): the table is "
			 "incomplete; continue with `feedbench sweep --resume`",
			 missing, p->npoints);
		json_array_append_new(w, json_string(line));
	}
	if (cached) {
		snprintf(line, sizeof(line),
			 "%ld point%s read a cache-resident dataset (it fits in RAM and neither "
			 "direct I/O nor cache eviction was used): those numbers measure the page "
			 "cache, not the storage",
			 cached, cached == 1 ? "" : "s");
		json_array_append_new(w, json_string(line));
	}
	if (single) {
		snprintf(line, sizeof(line),
			 "%ld point%s ran a single repetition: without a spread, no difference can "
			 "be told from noise; set [output] repetitions = 3 or more",
			 single, single == 1 ? "" : "s");
		json_array_append_new(w, json_string(line));
	}
	if (stripe_swept && unstriped) {
		snprintf(line, sizeof(line),
			 "striping is unsupported on %s: the stripe settings had no effect, and "
			 "differences between those points are noise",
			 fs);
		json_array_append_new(w, json_string(line));
	}
	return w;
}

/* ---- the sweep table --------------------------------------------------------------------- */

/* Cell text of the printed table: point, swept values (config order), metrics. */
static void report_row_cells(const struct sweep_plan *p, const struct sweep_result *r, long i,
			     char cells[][64], int *ncells)
{
	int idx[CFG_MAX_SWEEP], n = 0;

	sweep_point_index(p, i, idx);
	snprintf(cells[n++], 64, "%ld", i + 1);
	for (int o = 0; o < p->naxes; o++)
		for (int a = 0; a < p->naxes; a++)
			if (p->axes[a].order == o)
				snprintf(cells[n++], 64, "%s", p->axes[a].values[idx[a]]);
	for (int t = 0; t < SWM_TABLE; t++) {
		enum sweep_metric m = report_table_metrics[t];
		if (r[i].done)
			sweep_fmt_stat(&r[i].m[m], (int)m, cells[n++], 64);
		else
			snprintf(cells[n++], 64, "not run");
	}
	*ncells = n;
}

static int report_heads(const struct sweep_plan *p, const char *heads[])
{
	int n = 0;

	heads[n++] = "point";
	for (int o = 0; o < p->naxes; o++)
		for (int a = 0; a < p->naxes; a++)
			if (p->axes[a].order == o)
				heads[n++] = p->axes[a].name;
	for (int t = 0; t < SWM_TABLE; t++)
		heads[n++] = metric_of(report_table_metrics[t])->title;
	return n;
}

/* Display width: the ± sign is two bytes but one column. */
static int report_width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xC0) != 0x80;
	return w;
}

static void report_print_table(FILE *out, const struct sweep_plan *p, const struct sweep_result *r,
			       bool markdown)
{
	const char *heads[CFG_MAX_SWEEP + SWM_TABLE + 1];
	char(*cells)[CFG_MAX_SWEEP + SWM_TABLE + 1][64];
	int nh = report_heads(p, heads), widths[CFG_MAX_SWEEP + SWM_TABLE + 1], nc;

	cells = calloc((size_t)p->npoints, sizeof(*cells));
	if (!cells)
		return;
	for (int c = 0; c < nh; c++)
		widths[c] = report_width(heads[c]);
	for (long i = 0; i < p->npoints; i++) {
		report_row_cells(p, r, i, cells[i], &nc);
		for (int c = 0; c < nc; c++)
			if (report_width(cells[i][c]) > widths[c])
				widths[c] = report_width(cells[i][c]);
	}
	for (int c = 0; c < nh; c++)
		fprintf(out, markdown ? "| %s%*s " : "%s%*s  ", heads[c],
			widths[c] - report_width(heads[c]), "");
	fprintf(out, markdown ? "|\n" : "\n");
	for (int c = 0; markdown && c < nh; c++)
		fprintf(out, "|%s", c > p->naxes ? "---:" : "---");
	if (markdown)
		fprintf(out, "|\n");
	for (long i = 0; i < p->npoints; i++) {
		for (int c = 0; c < nh; c++) {
			int pad = widths[c] - report_width(cells[i][c]);
			bool right = c == 0 || c > p->naxes;
			if (right)
				fprintf(out, markdown ? "| %*s%s " : "%*s%s  ", pad, "",
					cells[i][c]);
			else
				fprintf(out, markdown ? "| %s%*s " : "%s%*s  ", cells[i][c], pad,
					"");
		}
		fprintf(out, markdown ? "|\n" : "\n");
	}
	free(cells);
}

static void report_write_csv(FILE *f, const struct sweep_plan *p, const struct sweep_result *r)
{
	char buf[512];
	int idx[CFG_MAX_SWEEP];

	fprintf(f, "point,dir,label,done,repetitions");
	for (int o = 0; o < p->naxes; o++)
		for (int a = 0; a < p->naxes; a++)
			if (p->axes[a].order == o)
				fprintf(f, ",%s", p->axes[a].key);
	for (int m = 0; m < SWM_COUNT; m++)
		fprintf(f, ",%s_mean,%s_stddev", metric_of(m)->column, metric_of(m)->column);
	fprintf(f, ",cache_resident\n");
	for (long i = 0; i < p->npoints; i++) {
		sweep_point_index(p, i, idx);
		fprintf(f, "%ld,", i + 1);
		sweep_point_dir(p, i, buf, sizeof(buf));
		util_csv_field(f, buf);
		fputc(',', f);
		sweep_point_label(p, i, -1, buf, sizeof(buf));
		util_csv_field(f, buf);
		fprintf(f, ",%d,%d", r[i].done, r[i].repetitions);
		for (int o = 0; o < p->naxes; o++)
			for (int a = 0; a < p->naxes; a++)
				if (p->axes[a].order == o) {
					/* Canonical: bytes and seconds, so plots get numbers. */
					fputc(',', f);
					util_csv_field(f, p->axes[a].canon[idx[a]]);
				}
		for (int m = 0; m < SWM_COUNT; m++) {
			if (r[i].done && r[i].m[m].n > 0)
				fprintf(f, ",%.9g,%.9g", r[i].m[m].mean, r[i].m[m].stddev);
			else
				fprintf(f, ",NaN,NaN");
		}
		fprintf(f, ",%d\n", r[i].cache_resident);
	}
}

static json_t *report_stat_json(const struct summary_stat *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "n", json_integer(s->n));
	json_object_set_new(o, "mean", s->n ? json_real(s->mean) : json_null());
	json_object_set_new(o, "stddev", s->n ? json_real(s->stddev) : json_null());
	json_object_set_new(o, "min", s->n ? json_real(s->min) : json_null());
	json_object_set_new(o, "max", s->n ? json_real(s->max) : json_null());
	return o;
}

/* The swept keys in their order: values as written and canonical, default, kind. */
static json_t *report_keys_json(const struct sweep_plan *p)
{
	json_t *keys = json_array();

	for (int o = 0; o < p->naxes; o++)
		for (int a = 0; a < p->naxes; a++) {
			const struct sweep_axis *ax = &p->axes[a];
			json_t *k, *vals;

			if (ax->order != o)
				continue;
			k = json_object();
			vals = json_array();
			json_object_set_new(k, "key", json_string(ax->key));
			json_object_set_new(k, "name", json_string(ax->name));
			for (int v = 0; v < ax->nvalues; v++)
				json_array_append_new(vals, json_string(ax->values[v]));
			json_object_set_new(k, "values", vals);
			vals = json_array();
			for (int v = 0; v < ax->nvalues; v++)
				json_array_append_new(vals, json_string(ax->canon[v]));
			json_object_set_new(k, "canonical", vals);
			json_object_set_new(k, "default", json_string(ax->def));
			json_object_set_new(k, "numeric", json_boolean(ax->numeric));
			json_object_set_new(k, "dataset", json_boolean(ax->dataset));
			json_object_set_new(k, "zipped", json_boolean(ax->zipped));
			json_array_append_new(keys, k);
		}
	return keys;
}

/* Point i: where, its values, every metric's summary, and how it compares with its group's best. */
static json_t *report_point_json(const struct sweep_plan *p, const struct sweep_result *r, long i)
{
	char buf[512];
	int idx[CFG_MAX_SWEEP];
	json_t *pt = json_object(), *vals = json_object(), *ms = json_object();

	sweep_point_index(p, i, idx);
	json_object_set_new(pt, "point", json_integer(i + 1));
	sweep_point_dir(p, i, buf, sizeof(buf));
	json_object_set_new(pt, "dir", json_string(buf));
	sweep_point_label(p, i, -1, buf, sizeof(buf));
	json_object_set_new(pt, "label", json_string(buf));
	for (int o = 0; o < p->naxes; o++)
		for (int a = 0; a < p->naxes; a++)
			if (p->axes[a].order == o)
				json_object_set_new(vals, p->axes[a].key,
						    json_string(p->axes[a].values[idx[a]]));
	json_object_set_new(pt, "values", vals);
	json_object_set_new(pt, "done", json_boolean(r[i].done));
	json_object_set_new(pt, "repetitions", json_integer(r[i].repetitions));
	for (int m = 0; m < SWM_COUNT; m++)
		json_object_set_new(ms, metric_of(m)->column, report_stat_json(&r[i].m[m]));
	json_object_set_new(pt, "metrics", ms);
	json_object_set_new(pt, "cache_resident", json_boolean(r[i].cache_resident));
	json_object_set_new(pt, "stripe_effective", json_string(r[i].stripe_effective));
	json_object_set_new(pt, "verdict", json_string(r[i].verdict));
	/* Against its group's best (the plateau rule): better never, same, worse,
	 * inconclusive; null where not judged. */
	json_object_set_new(
	    pt, "vs_best",
	    r[i].vs_best >= 0 ? json_string(decide_outcome_name((enum decide_outcome)r[i].vs_best))
			      : json_null());
	return pt;
}

static json_t *report_results_json(const struct sweep_plan *p, const struct sweep_result *r,
				   const struct sweep_reco *reco, int ngroups,
				   const struct fs_dir_layout *folder, const char *workload,
				   json_t *lines, json_t *warnings)
{
	json_t *root = json_object(), *points = json_array();

	json_object_set_new(root, "schema", json_integer(1));
	json_object_set_new(root, "workload", json_string(workload));
	json_object_set_new(root, "config_hash", json_string(p->hash));
	json_object_set_new(root, "optimise",
			    json_string(metric_of(sweep_optimised_metric(p))->column));
	json_object_set_new(root, "repetitions", json_integer(p->repetitions));
	json_object_set_new(root, "keys", report_keys_json(p));
	for (long i = 0; i < p->npoints; i++)
		json_array_append_new(points, report_point_json(p, r, i));
	json_object_set_new(root, "points", points);
	if (folder && folder->known) {
		json_t *fl = json_object();

		json_object_set_new(fl, "fs", json_string(folder->fs));
		json_object_set_new(fl, "can_stripe", json_boolean(folder->can_stripe));
		json_object_set_new(fl, "stripe_count",
				    folder->stripe_count > 0 ? json_integer(folder->stripe_count)
							     : json_null());
		json_object_set_new(fl, "text", json_string(folder->text));
		json_object_set_new(root, "folder_layout", fl);
	}
	json_t *rec = json_object();
	json_object_set_new(rec, "groups", sweep_reco_groups(p, r, reco, ngroups, folder));
	json_object_set(rec, "text", lines);
	json_object_set_new(root, "recommendation", rec);
	json_object_set(root, "warnings", warnings);
	return root;
}

/* sweep.md: the table, the recommendation and the warnings; report.md embeds it. */
static void report_write_md(FILE *f, const struct sweep_plan *p, const struct sweep_result *r,
			    json_t *lines, json_t *warnings)
{
	size_t i;
	json_t *v;

	fprintf(f,
		"## Results\n\nMean ± sample standard deviation over %d repetition%s per "
		"point; latencies and data wait in microseconds.\n\n",
		p->repetitions, p->repetitions == 1 ? "" : "s");
	report_print_table(f, p, r, true);
	fprintf(f, "\n## Recommendation\n\nOptimising %s.\n\n",
		metric_of(sweep_optimised_metric(p))->column);
	json_array_foreach(lines, i, v)
	{
		fprintf(f, "- %s\n", json_string_value(v));
	}
	if (json_array_size(warnings)) {
		fprintf(f, "\n## Warnings\n\n");
		json_array_foreach(warnings, i, v)
		{
			fprintf(f, "- %s\n", json_string_value(v));
		}
	}
}

/* The table, the recommendation and the warnings on the terminal. */
static void report_print_term(FILE *term, const struct sweep_plan *p, const struct sweep_result *r,
			      json_t *lines, json_t *warnings)
{
	size_t i;
	json_t *v;

	report_print_table(term, p, r, false);
	fprintf(term, "\nrecommendation (%s):\n", metric_of(sweep_optimised_metric(p))->column);
	json_array_foreach(lines, i, v)
	{
		fprintf(term, "  %s\n", json_string_value(v));
	}
	json_array_foreach(warnings, i, v)
	{
		fprintf(term, "warning: %s\n", json_string_value(v));
	}
	fflush(term);
}

int sweep_write_tables(const char *dir, const struct sweep_plan *p, const struct sweep_result *r,
		       const struct sweep_reco *reco, int ngroups,
		       const struct fs_dir_layout *folder, const char *workload, FILE *term,
		       struct fb_errbuf *err)
{
	json_t *lines = sweep_reco_lines(p, r, reco, ngroups, folder);
	json_t *warnings = report_sweep_warnings(p, r), *root;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	/* sweep.csv */
	f = open_memstream(&buf, &len);
	if (!f)
		return fb_fail(err, -ENOMEM, "out of memory");
	report_write_csv(f, p, r);
	fclose(f);
	rc = report_save_file(dir, "sweep.csv", buf, len, err);
	free(buf);
	if (rc < 0)
		goto out_put;

	/* sweep.md: the table and the recommendation; report.md embeds it. */
	f = open_memstream(&buf, &len);
	if (!f) {
		rc = fb_fail(err, -ENOMEM, "out of memory");
		goto out_put;
	}
	report_write_md(f, p, r, lines, warnings);
	fclose(f);
	rc = report_save_file(dir, "sweep.md", buf, len, err);
	free(buf);
	if (rc < 0)
		goto out_put;

	/* sweep_results.json */
	root = report_results_json(p, r, reco, ngroups, folder, workload, lines, warnings);
	buf = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (buf) {
		len = strlen(buf);
		buf[len++] = '\n'; /* json_dumps leaves room: the NUL becomes the newline */
	}
	rc = report_save_file(dir, "sweep_results.json", buf, len, err);
	free(buf);
	if (rc < 0)
		goto out_put;

	if (term)
		report_print_term(term, p, r, lines, warnings);
out_put:
	json_decref(lines);
	json_decref(warnings);
	return rc;
}
