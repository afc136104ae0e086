/* report.md of run and sweep folders. Everything here reads what the runs wrote
 * (summary.json, the sweep files), so a report can be rebuilt from a results folder alone
 * (`feedbench plot DIR` does).
 */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "errors.h"
#include "sweep.h"
#include "safefile.h"
#include "util.h"

void report_format_number(double v, char *buf, size_t len)
{
	double a = fabs(v);

	if (isnan(v))
		snprintf(buf, len, "n/a");
	else if (a >= 1000 || a == 0)
		snprintf(buf, len, "%.0f", v);
	else if (a >= 10)
		snprintf(buf, len, "%.1f", v);
	else if (a >= 0.1)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.3g", v);
}

int report_save_file(const char *dir, const char *name, char *text, size_t len,
		     struct fb_errbuf *err)
{
	char path[CFG_PATH_MAX + 64];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	rc = text ? safe_write_atomic(path, text, len) : -ENOMEM;
	if (rc < 0 && err)
		fb_fail(err, rc, "cannot write '%s': %s", path, strerror(-rc));
	return rc;
}

/* ---- report.md --------------------------------------------------------------------------- */

/* Plots a folder may hold, in the order a reader wants them. */
static const char *const report_run_plots[][2] = {
    {"au.png", "Accelerator utilisation per epoch"},
    {"latency.png", "Read latency distribution"},
    {"timeline.png", "Per-rank timeline of reads and compute"},
};

static void report_embed(FILE *f, const char *dir, const char *file, const char *title)
{
	char path[CFG_PATH_MAX + 128];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (stat(path, &sb) == 0)
		fprintf(f, "### %s\n\n![%s](%s)\n\n", title, title, file);
}

static void report_stat_row(FILE *f, const char *name, json_t *metric, const char *mean_key,
			    const char *sd_key, const char *unit, double scale)
{
	double mean = summary_num(metric, mean_key) * scale;
	double sd = sd_key ? summary_num(metric, sd_key) * scale : NAN;
	char a[32], b[32];

	if (isnan(mean))
		return;
	report_format_number(mean, a, sizeof(a));
	report_format_number(sd, b, sizeof(b));
	fprintf(f, "| %s | %s | %s | %s |\n", name, a, sd_key ? b : "", unit);
}

static void report_run_context(FILE *f, json_t *root)
{
	json_t *cfg = json_object_get(root, "config"), *st = json_object_get(root, "storage");
	json_t *ds = json_object_get(cfg, "dataset"), *rd = json_object_get(cfg, "reader");
	json_t *tr = json_object_get(cfg, "train"), *out = json_object_get(cfg, "output");
	json_t *req = json_object_get(st, "stripe_requested");
	json_t *eff = json_object_get(st, "stripe_effective");
	json_t *acc = json_object_get(root, "accelerator");

	fprintf(f, "## What ran\n\n| | |\n|---|---|\n");
	fprintf(f, "| workload | %s |\n", summary_str(root, "workload", "?"));
	fprintf(f, "| start, end (UTC) | %s, %s |\n", summary_str(root, "start", "?"),
		summary_str(root, "end", "?"));
	fprintf(f, "| ranks, nodes | %.0f rank%s on %.0f node%s (rank 0 on %s) |\n",
		summary_num(root, "num_ranks"), summary_num(root, "num_ranks") == 1 ? "" : "s",
		summary_num(root, "num_nodes"), summary_num(root, "num_nodes") == 1 ? "" : "s",
		summary_str(root, "hostname", "?"));
	fprintf(f, "| accelerator | %s |\n", summary_str(acc, "kind", "?"));
	char t[6][64];
	fprintf(f,
		"| dataset | %s, %s files x %s samples of %s bytes (stdev %s), file_access %s |\n",
		summary_text(ds, "format", t[0], 64), summary_text(ds, "num_files_train", t[1], 64),
		summary_text(ds, "num_samples_per_file", t[2], 64),
		summary_text(ds, "record_length_bytes", t[3], 64),
		summary_text(ds, "record_length_bytes_stdev", t[4], 64),
		summary_text(ds, "file_access", t[5], 64));
	fprintf(f, "| data folder | `%s` |\n", summary_text(ds, "data_dir", t[0], 64));
	fprintf(f, "| file system | %s at `%s` |\n", summary_str(st, "fs_type", "?"),
		summary_str(st, "mount", "?"));
	fprintf(f, "| back-end | %s |\n", summary_str(st, "backend", "?"));
	if (json_is_object(req))
		fprintf(f, "| stripe requested | count %.0f, size %.0f bytes |\n",
			summary_num(req, "count"), summary_num(req, "size"));
	if (json_is_string(eff))
		fprintf(f, "| stripe effective | %s |\n", json_string_value(eff));
	else if (json_is_object(eff))
		fprintf(f,
			"| stripe effective | count %.0f, size %.0f bytes, servers spanned %s |\n",
			summary_num(eff, "count"), summary_num(eff, "size"),
			summary_text(eff, "servers_spanned", t[0], 64));
	fprintf(f,
		"| cache state | direct %s, page_cache %s, dataset %.0f bytes, host memory %.0f "
		"bytes: %s |\n",
		json_is_true(json_object_get(st, "direct")) ? "true" : "false",
		summary_str(st, "page_cache", "?"), summary_num(st, "dataset_bytes"),
		summary_num(st, "host_memory_bytes"),
		json_is_true(json_object_get(st, "cache_resident"))
		    ? "**cache-resident** (the page cache can serve it)"
		    : "not cache-resident");
	fprintf(f, "| reader | batch %s, %s threads, prefetch %s |\n",
		summary_text(rd, "batch_size", t[0], 64),
		summary_text(rd, "read_threads", t[1], 64),
		summary_text(rd, "prefetch_size", t[2], 64));
	fprintf(f, "| training | %s epochs, computation_time %s s, %s repetitions |\n",
		summary_text(tr, "epochs", t[0], 64),
		summary_text(tr, "computation_time", t[1], 64),
		summary_text(out, "repetitions", t[2], 64));
	fprintf(f, "| config hash | `%s` |\n\n", summary_str(root, "config_hash", "?"));
}

int report_write_run(const char *run_dir)
{
	char path[CFG_PATH_MAX + 64], *buf = NULL, a[32];
	json_t *root, *metric, *v;
	size_t len = 0, i;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/summary.json", run_dir);
	root = safe_json_load(path, 0, NULL);
	if (!json_is_object(root)) {
		json_decref(root);
		return -FB_EFORMAT;
	}
	metric = json_object_get(root, "metric");
	f = open_memstream(&buf, &len);
	if (!f) {
		json_decref(root);
		return -ENOMEM;
	}
	fprintf(f, "# feedbench run: %s\n\n", summary_str(root, "workload", "?"));
	fprintf(f,
		"Verdict: **%s**; AU %s the threshold. Files: `summary.json` (everything), "
		"`epochs.csv`, `ranks.csv`, `latency.csv`, `config.ini`.\n\n",
		summary_str(root, "verdict", "?"),
		strcmp(summary_str(metric, "train_au_meet_expectation", ""), "success") == 0
		    ? "meets"
		    : "misses");
	report_run_context(f, root);

	fprintf(f, "## Results\n\nWhole-run figures; the standard deviation (where given) is over "
		   "epochs. Bytes are bytes returned by read calls, MiB = 2^20 bytes.\n\n"
		   "| metric | value | stddev | unit |\n|---|---:|---:|---|\n");
	report_stat_row(f, "bandwidth", metric, "train_bandwidth_MiB_per_second", NULL, "MiB/s", 1);
	report_stat_row(f, "I/O (DLIO)", metric, "train_io_mean_MB_per_second",
			"train_io_stdev_MB_per_second", "MiB/s", 1);
	report_stat_row(f, "IOPS", metric, "train_iops", NULL, "reads/s", 1);
	report_stat_row(f, "throughput", metric, "train_throughput_mean_samples_per_second",
			"train_throughput_stdev_samples_per_second", "samples/s", 1);
	report_stat_row(f, "AU", metric, "train_au_mean_percentage", "train_au_stdev_percentage",
			"%", 1);
	static const char *const q[] = {"p50", "p90", "p99", "p999", "max"};
	for (size_t k = 0; k < 5; k++) {
		char key[64], name[64];
		snprintf(key, sizeof(key), "train_latency_seconds.%s", q[k]);
		snprintf(name, sizeof(name), "read latency %s", q[k]);
		report_stat_row(f, name, metric, key, NULL, "µs", 1e6);
	}
	report_stat_row(f, "data wait p50", metric, "train_data_wait_seconds.p50", NULL, "µs", 1e6);
	report_stat_row(f, "data wait p99", metric, "train_data_wait_seconds.p99", NULL, "µs", 1e6);

	fprintf(f,
		"\n### Per epoch\n\n| repetition | epoch | wall (s) | MiB/s | IOPS | samples/s | "
		"AU (%%) | latency p99 (µs) | data wait p99 (µs) |\n"
		"|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	json_array_foreach(json_object_get(root, "epochs"), i, v)
	{
		double rep = summary_num(v, "repetition");
		double vals[] = {summary_num(v, "wall_seconds"),
				 summary_num(v, "bandwidth_MiB_per_second"),
				 summary_num(v, "iops"),
				 summary_num(v, "samples_per_second"),
				 summary_num(v, "au_percentage"),
				 summary_num(v, "latency_seconds.p99") * 1e6,
				 summary_num(v, "data_wait_seconds.p99") * 1e6};
		fprintf(f, "| %.0f | %.0f |", isnan(rep) ? 1 : rep, summary_num(v, "epoch"));
		for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
			report_format_number(vals[k], a, sizeof(a));
			fprintf(f, " %s |", a);
		}
		fprintf(f, "\n");
	}
	fprintf(f, "\n## Plots\n\n");
	for (size_t k = 0; k < sizeof(report_run_plots) / sizeof(report_run_plots[0]); k++)
		report_embed(f, run_dir, report_run_plots[k][0], report_run_plots[k][1]);
	if (json_array_size(json_object_get(root, "warnings"))) {
		fprintf(f, "## Warnings\n\n");
		json_array_foreach(json_object_get(root, "warnings"), i, v)
		{
			fprintf(f, "- %s\n", json_string_value(v));
		}
	}
	fclose(f);
	json_decref(root);
	rc = report_save_file(run_dir, "report.md", buf, len, NULL);
	free(buf);
	return rc;
}

int report_write_sweep(const char *sweep_dir)
{
	char path[CFG_PATH_MAX + 64], *buf = NULL, *table = NULL, first[CFG_PATH_MAX + 300];
	json_t *sw, *res, *v, *summary = NULL;
	size_t len = 0, i;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/sweep.json", sweep_dir);
	sw = safe_json_load(path, 0, NULL);
	snprintf(path, sizeof(path), "%s/sweep_results.json", sweep_dir);
	res = safe_json_load(path, 0, NULL);
	if (!json_is_object(sw) || !json_is_object(res)) {
		json_decref(sw);
		json_decref(res);
		return -FB_EFORMAT;
	}
	json_array_foreach(json_object_get(res, "points"), i, v)
	{
		if (!json_is_true(json_object_get(v, "done")))
			continue;
		snprintf(first, sizeof(first), "%s/%s/summary.json", sweep_dir,
			 summary_str(v, "dir", ""));
		summary = safe_json_load(first, 0, NULL);
		break;
	}
	snprintf(path, sizeof(path), "%s/sweep.md", sweep_dir);
	util_read_file(path, &table, NULL);
	f = open_memstream(&buf, &len);
	if (!f) {
		rc = -ENOMEM;
		goto out_put;
	}
	fprintf(f, "# feedbench sweep: %s\n\n", summary_str(sw, "workload", "?"));
	fprintf(f,
		"Config `%s` (hash `%.16s`), started %s, %lld ranks; %zu points x %lld "
		"repetition%s. Files: `sweep.csv`, `sweep_results.json`, `sweep.json`, one "
		"run folder per point.\n\n",
		summary_str(sw, "config", "?"), summary_str(sw, "config_hash", "?"),
		summary_str(sw, "created", "?"),
		json_integer_value(json_object_get(sw, "num_ranks")),
		json_array_size(json_object_get(sw, "points")),
		json_integer_value(json_object_get(sw, "repetitions")),
		json_integer_value(json_object_get(sw, "repetitions")) == 1 ? "" : "s");
	fprintf(f, "Swept (dataset keys vary slowest, so the dataset is regenerated as rarely as "
		   "possible):\n\n");
	json_array_foreach(json_object_get(res, "keys"), i, v)
	{
		json_t *vals = json_object_get(v, "values"), *x;
		size_t j;

		fprintf(f, "- `%s` =", summary_str(v, "key", "?"));
		json_array_foreach(vals, j, x)
		{
			fprintf(f, "%s %s", j ? "," : "", json_string_value(x));
		}
		fprintf(f, " (default %s%s)\n", summary_str(v, "default", "?"),
			json_is_true(json_object_get(v, "dataset")) ? "; changes the dataset" : "");
	}
	fprintf(f, "\n");
	if (summary) {
		fprintf(f, "Context below is the first completed point's; the swept keys vary as "
			   "listed above.\n\n");
		report_run_context(f, summary);
	}
	if (table)
		fprintf(f, "%s\n", table);
	fprintf(f, "## Plots\n\n");
	{
		char pat[CFG_PATH_MAX + 64];
		json_t *keys = json_object_get(res, "keys");

		json_array_foreach(keys, i, v)
		{
			if (!json_is_true(json_object_get(v, "numeric")))
				continue;
			snprintf(pat, sizeof(pat), "sweep_bandwidth_%s.png",
				 summary_str(v, "name", ""));
			snprintf(path, sizeof(path), "Bandwidth against %s",
				 summary_str(v, "name", ""));
			report_embed(f, sweep_dir, pat, path);
		}
		report_embed(f, sweep_dir, "sweep_bars.png",
			     "Bandwidth, samples/s and AU per point");
		report_embed(f, sweep_dir, "sweep_latency.png",
			     "Read latency percentiles per point");
	}
	fprintf(f, "## Points\n\n");
	json_array_foreach(json_object_get(res, "points"), i, v)
	{
		fprintf(f, "%zu. [%s](%s/report.md)%s\n", i + 1, summary_str(v, "label", "?"),
			summary_str(v, "dir", "?"),
			json_is_true(json_object_get(v, "done")) ? "" : " — not run");
	}
	fclose(f);
	rc = report_save_file(sweep_dir, "report.md", buf, len, NULL);
out_put:
	free(buf);
	free(table);
	json_decref(summary);
	json_decref(sw);
	json_decref(res);
	return rc;
}

/* The points of a sweep folder whose report.md is rewritten: every point sweep_results.json
 * names that is one real folder inside the sweep (safe_point_dir_check, lstat: a link is not
 * followed) holding a summary.json. */
static int report_write_points(const char *sweep_dir, char *why, size_t len)
{
	char path[CFG_PATH_MAX + 64], point[CFG_PATH_MAX + 300];
	json_t *res, *v;
	size_t i;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/sweep_results.json", sweep_dir);
	res = safe_json_load(path, 0, NULL);
	if (!json_is_array(json_object_get(res, "points"))) {
		json_decref(res);
		snprintf(why, len, "cannot read the points of '%s'", path);
		return -FB_EFORMAT;
	}
	json_array_foreach(json_object_get(res, "points"), i, v)
	{
		const char *dir = json_string_value(json_object_get(v, "dir"));
		struct stat st;
		int wrc;

		if ((rc = safe_point_dir_check(dir, i, why, len)) < 0)
			break;
		snprintf(point, sizeof(point), "%s/%s", sweep_dir, dir);
		snprintf(path, sizeof(path), "%s/summary.json", point);
		if (lstat(point, &st) < 0 || !S_ISDIR(st.st_mode) || access(path, R_OK) < 0)
			continue; /* a point that did not run has no report */
		if ((wrc = report_write_run(point)) < 0) {
			snprintf(why, len, "cannot write '%s/report.md': %s", point,
				 fb_strerror(wrc));
			rc = wrc;
			break;
		}
	}
	json_decref(res);
	return rc;
}

int report_write(const char *dir, char *why, size_t len)
{
	char path[CFG_PATH_MAX + 64];
	bool sweep;
	int rc;

	snprintf(path, sizeof(path), "%s/sweep.json", dir);
	sweep = access(path, F_OK) == 0;
	if (sweep && (rc = report_write_points(dir, why, len)) < 0)
		return rc;
	rc = sweep ? report_write_sweep(dir) : report_write_run(dir);
	if (rc < 0)
		snprintf(why, len, "cannot write '%s/report.md': %s", dir, fb_strerror(rc));
	return rc;
}
