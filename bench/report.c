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
#include "outputs.h"
#include "sweep.h"
#include "safefile.h"
#include "util.h"
#include "../workloads/workload.h"

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
	outputs_format_number(mean, a, sizeof(a));
	outputs_format_number(sd, b, sizeof(b));
	fprintf(f, "| %s | %s | %s | %s |\n", name, a, sd_key ? b : "", unit);
}

/* Any scalar of summary.json as text, "n/a" when it has none. */
static const char *report_text(json_t *obj, const char *key, char *buf, size_t len)
{
	json_t *v = json_object_get(obj, key);

	if (!v || json_is_null(v) || json_is_object(v) || json_is_array(v)) {
		snprintf(buf, len, "n/a");
		return buf;
	}
	return summary_text(obj, key, buf, len);
}

/* A count printed whole ("n/a" when summary.json lacks it), so it reads as summary.json has it. */
static const char *report_count(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.0f", v);
	return buf;
}

/* The rest of a table row: each value as outputs_format_number writes it. */
static void report_cells(FILE *f, const double *vals, size_t n)
{
	char a[32];

	for (size_t k = 0; k < n; k++) {
		outputs_format_number(vals[k], a, sizeof(a));
		fprintf(f, " %s |", a);
	}
	fprintf(f, "\n");
}

/* The figures an epoch (or an evaluation pass) has in summary.json, as the rest of its row:
 * wall, MiB/s, IOPS, samples/s, AU, latency and data wait p99 (µs). */
static void report_epoch_cells(FILE *f, json_t *v)
{
	double vals[] = {summary_num(v, "wall_seconds"),
			 summary_num(v, "bandwidth_MiB_per_second"),
			 summary_num(v, "iops"),
			 summary_num(v, "samples_per_second"),
			 summary_num(v, "au_percentage"),
			 summary_num(v, "latency_seconds.p99") * 1e6,
			 summary_num(v, "data_wait_seconds.p99") * 1e6};

	report_cells(f, vals, sizeof(vals) / sizeof(vals[0]));
}

/* "| read threads |" and "| file table |": how read_threads was chosen (auto says why) and the
 * memory each rank's file table takes; rows only where summary.json has the figures. */
static void report_binding_rows(FILE *f, json_t *root)
{
	json_t *b = json_object_get(root, "binding"), *ranks = json_object_get(root, "ranks"), *v;
	const char *choice = summary_str(b, "read_threads_choice", NULL);
	double tmax = summary_num(root, "file_table_max_bytes");
	double sharing = summary_num(b, "ranks_sharing_cpus");
	char t[2][32];
	size_t i, shown = 0;

	if (json_is_object(b) && !isnan(summary_num(b, "cpus_per_rank")))
		fprintf(
		    f,
		    "| binding | %.3g CPU%s per rank (rank 0: CPU list %s, used by %s rank%s of "
		    "the node), %s threads per rank: %s |\n",
		    summary_num(b, "cpus_per_rank"),
		    summary_num(b, "cpus_per_rank") == 1 ? "" : "s",
		    summary_str(b, "cpu_list", "n/a"), report_count(sharing, t[0], sizeof(t[0])),
		    sharing == 1 ? "" : "s",
		    report_count(summary_num(b, "threads_per_rank"), t[1], sizeof(t[1])),
		    json_is_true(json_object_get(b, "readers_share_trainer_core"))
			? "readers share the trainer's CPUs"
			: "each has a CPU of its own");
	if (choice)
		fprintf(f, "| read threads | %s (%s) |\n",
			report_count(summary_num(b, "read_threads"), t[0], sizeof(t[0])), choice);
	if (json_is_boolean(json_object_get(b, "trainer_reads")))
		fprintf(f,
			"| trainer reads | %s: %s batches read by the trainer itself (summed over "
			"ranks), the rest by the reader threads |\n",
			json_is_true(json_object_get(b, "trainer_reads")) ? "yes" : "no",
			report_count(summary_num(b, "trainer_read_batches"), t[0], sizeof(t[0])));
	if (isnan(tmax))
		return;
	fprintf(f, "| file table (memory) | %.0f bytes on the largest rank", tmax);
	json_array_foreach(ranks, i, v)
	{
		double tb = summary_num(v, "file_table_bytes");
		if (isnan(tb))
			continue;
		if (shown == 8) {
			fprintf(f, ", ...");
			break;
		}
		fprintf(f, "%s rank %zu %.0f", shown++ ? "," : ";", i, tb);
	}
	fprintf(f, " |\n");
}

/* "| MLPerf dataset size |": the preset in effect and rule 3.1.2 over this run's hosts, RAM and
 * accelerators (summary.json "mlperf"); no row where summary.json has no such member. */
static void report_mlperf_row(FILE *f, json_t *root)
{
	json_t *m = json_object_get(root, "mlperf"), *d = json_object_get(m, "datasize");
	char t[4][32];

	if (!json_is_object(d))
		return;
	fprintf(f,
		"| MLPerf dataset size | %s, %s: rule %s %s: %s training files, at least %s "
		"needed (%s hosts of %.1f GiB RAM, %s accelerators) |\n",
		summary_str(m, "model", "n/a"), summary_str(m, "accelerator_type", "n/a"),
		summary_str(d, "rule", "n/a"),
		json_is_true(json_object_get(d, "holds")) ? "holds" : "does not hold",
		report_count(summary_num(d, "num_files_train"), t[0], sizeof(t[0])),
		report_count(summary_num(d, "min_files"), t[1], sizeof(t[1])),
		report_count(summary_num(d, "hosts"), t[2], sizeof(t[2])),
		summary_num(d, "client_memory_bytes") / 1073741824.0,
		report_count(summary_num(d, "accelerators"), t[3], sizeof(t[3])));
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
	fprintf(f, "| workload | %s |\n", summary_str(root, "workload", "n/a"));
	fprintf(f, "| start, end (UTC) | %s, %s |\n", summary_str(root, "start", "n/a"),
		summary_str(root, "end", "n/a"));
	fprintf(f, "| ranks, nodes | %.0f rank%s on %.0f node%s (rank 0 on %s) |\n",
		summary_num(root, "num_ranks"), summary_num(root, "num_ranks") == 1 ? "" : "s",
		summary_num(root, "num_nodes"), summary_num(root, "num_nodes") == 1 ? "" : "s",
		summary_str(root, "hostname", "n/a"));
	if (summary_num(root, "accelerators_per_rank") > 1)
		fprintf(f, "| accelerator | %s, %.0f emulated (%.0f per rank) |\n",
			summary_str(acc, "kind", "n/a"), summary_num(root, "num_accelerators"),
			summary_num(root, "accelerators_per_rank"));
	else
		fprintf(f, "| accelerator | %s |\n", summary_str(acc, "kind", "n/a"));
	char t[6][64];
	fprintf(f,
		"| dataset | %s, %s files x %s samples of %s bytes (stdev %s), file_access %s |\n",
		report_text(ds, "format", t[0], 64), report_text(ds, "num_files_train", t[1], 64),
		report_text(ds, "num_samples_per_file", t[2], 64),
		report_text(ds, "record_length_bytes", t[3], 64),
		report_text(ds, "record_length_bytes_stdev", t[4], 64),
		report_text(ds, "file_access", t[5], 64));
	fprintf(f, "| data folder | `%s` |\n", report_text(ds, "data_dir", t[0], 64));
	fprintf(f, "| file system | %s at `%s` |\n", summary_str(st, "fs_type", "n/a"),
		summary_str(st, "mount", "n/a"));
	fprintf(f, "| back-end | %s |\n", summary_str(st, "backend", "n/a"));
	if (json_is_object(req))
		fprintf(f, "| stripe requested | count %.0f, size %.0f bytes |\n",
			summary_num(req, "count"), summary_num(req, "size"));
	if (json_is_string(eff))
		fprintf(f, "| stripe effective | %s |\n", json_string_value(eff));
	else if (json_is_object(eff))
		fprintf(f,
			"| stripe effective | count %.0f, size %.0f bytes, servers spanned %s |\n",
			summary_num(eff, "count"), summary_num(eff, "size"),
			report_text(eff, "servers_spanned", t[0], 64));
	fprintf(f,
		"| cache state | direct %s, page_cache %s, dataset %s bytes, host memory %s "
		"bytes: %s |\n",
		json_is_true(json_object_get(st, "direct")) ? "true" : "false",
		summary_str(st, "page_cache", "n/a"),
		report_count(summary_num(st, "dataset_bytes"), t[0], sizeof(t[0])),
		report_count(summary_num(st, "host_memory_bytes"), t[1], sizeof(t[1])),
		json_is_true(json_object_get(st, "cache_resident"))
		    ? "**cache-resident** (the page cache can serve it)"
		    : "not cache-resident");
	fprintf(f, "| reader | batch %s, %s threads, prefetch %s |\n",
		report_text(rd, "batch_size", t[0], 64), report_text(rd, "read_threads", t[1], 64),
		report_text(rd, "prefetch_size", t[2], 64));
	report_binding_rows(f, root);
	report_mlperf_row(f, root);
	fprintf(f, "| training | %s epochs, computation_time %s s, %s repetitions |\n",
		report_text(tr, "epochs", t[0], 64), report_text(tr, "computation_time", t[1], 64),
		report_text(out, "repetitions", t[2], 64));
	fprintf(f, "| config hash | `%s` |\n\n", summary_str(root, "config_hash", "n/a"));
}

/* accelerators_per_rank > 1: one row per emulated accelerator (summary.json accelerators[]). */
static void report_accelerators(FILE *f, json_t *root)
{
	json_t *acc = json_object_get(root, "accelerators"), *v;
	char t[3][32];
	size_t i;

	if (!json_is_array(acc) || json_array_size(acc) == 0)
		return;
	fprintf(
	    f,
	    "\n### Per accelerator\n\n%s emulated accelerators, %s per rank, each with a loader "
	    "of its own (accelerator = loader x ranks + rank); figures over all epochs and "
	    "repetitions.\n\n| accelerator | rank | loader | samples | bytes | samples/s | MiB/s "
	    "| AU (%%) | data wait p99 (µs) |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
	    report_count(summary_num(root, "num_accelerators"), t[0], sizeof(t[0])),
	    report_count(summary_num(root, "accelerators_per_rank"), t[1], sizeof(t[1])));
	json_array_foreach(acc, i, v)
	{
		double vals[] = {summary_num(v, "samples_per_second"),
				 summary_num(v, "bandwidth_MiB_per_second"),
				 summary_num(v, "au_percentage"),
				 summary_num(v, "data_wait_p99_seconds") * 1e6};
		fprintf(f, "| %s | %s | %s |",
			report_count(summary_num(v, "accelerator"), t[0], sizeof(t[0])),
			report_count(summary_num(v, "rank"), t[1], sizeof(t[1])),
			report_count(summary_num(v, "loader"), t[2], sizeof(t[2])));
		fprintf(f, " %s |", report_count(summary_num(v, "samples"), t[0], sizeof(t[0])));
		fprintf(f, " %s |", report_count(summary_num(v, "bytes_read"), t[0], sizeof(t[0])));
		report_cells(f, vals, sizeof(vals) / sizeof(vals[0]));
	}
}

/* The evaluation passes ([dataset] num_files_eval): the set, DLIO's eval_* figures (deviation
 * over passes) and one row per pass (summary.json eval, metric.eval_*). */
static void report_eval(FILE *f, json_t *root)
{
	json_t *ev = json_object_get(root, "eval"), *metric = json_object_get(root, "metric");
	json_t *passes = json_object_get(ev, "passes"), *v;
	size_t n = json_is_array(passes) ? json_array_size(passes) : 0, i;
	static const char *const keys[] = {
	    "eval_bandwidth_MiB_per_second", "eval_io_mean_MB_per_second",
	    "eval_throughput_mean_samples_per_second", "eval_au_mean_percentage"};
	const char *meets = summary_str(metric, "eval_au_meet_expectation", NULL);
	char t[6][32];
	bool any = false;

	if (!json_is_object(ev))
		return;
	fprintf(
	    f,
	    "\n## Evaluation\n\nEvaluation set: %s files, %s samples, batch %s, eval_time %s s "
	    "per step; after epoch %s and every %s epochs: %zu pass%s%s%s. Training's figures "
	    "above do not include evaluation time.\n\n",
	    report_count(summary_num(ev, "files"), t[0], sizeof(t[0])),
	    report_count(summary_num(ev, "samples"), t[1], sizeof(t[1])),
	    report_count(summary_num(ev, "batch_size"), t[2], sizeof(t[2])),
	    report_text(ev, "eval_time", t[3], sizeof(t[3])),
	    report_count(summary_num(ev, "eval_after_epoch"), t[4], sizeof(t[4])),
	    report_count(summary_num(ev, "epochs_between_evals"), t[5], sizeof(t[5])), n,
	    n == 1 ? "" : "es", meets ? ", AU " : "",
	    meets ? (strcmp(meets, "success") == 0 ? "meets the threshold" : "misses the threshold")
		  : "");
	if (n == 0)
		return;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		any = any || !isnan(summary_num(metric, keys[k]));
	if (any) {
		fprintf(f, "| metric | value | stddev | unit |\n|---|---:|---:|---|\n");
		report_stat_row(f, "bandwidth", metric, keys[0], NULL, "MiB/s", 1);
		report_stat_row(f, "I/O (DLIO)", metric, keys[1], "eval_io_stdev_MB_per_second",
				"MiB/s", 1);
		report_stat_row(f, "throughput", metric, keys[2],
				"eval_throughput_stdev_samples_per_second", "samples/s", 1);
		report_stat_row(f, "AU", metric, keys[3], "eval_au_stdev_percentage", "%", 1);
		fprintf(f, "\n");
	}
	fprintf(f, "| repetition | after epoch | samples | bytes | wall (s) | MiB/s | IOPS | "
		   "samples/s | AU (%%) | latency p99 (µs) | data wait p99 (µs) |\n"
		   "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	json_array_foreach(passes, i, v)
	{
		fprintf(f, "| %s | %s | %s | %s |",
			report_count(summary_num(v, "repetition"), t[0], sizeof(t[0])),
			report_count(summary_num(v, "after_epoch"), t[1], sizeof(t[1])),
			report_count(summary_num(v, "samples"), t[2], sizeof(t[2])),
			report_count(summary_num(v, "bytes_read"), t[3], sizeof(t[3])));
		report_epoch_cells(f, v);
	}
}

/* report.md of a workload that describes its outputs, into f, which it closes: 0 or a
 * negative code; 1 (f left open) for training, whose report is report_write_run's own. */
static int report_write_outputs(FILE *f, json_t *root, const char *run_dir)
{
	const struct workload_ops *w = workload_find(summary_str(root, "workload_type", ""));
	int rc;

	if (!w || !w->outputs || !w->outputs->report)
		return 1;
	rc = outputs_report(f, w->outputs, root, run_dir);
	fclose(f);
	return rc;
}

/* "Verdict: **storage-bound**; AU misses the threshold. Files: ...": the verdict and AU
 * judgement where summary.json has them, and the files the folder holds. */
static void report_run_lead(FILE *f, json_t *root, const char *dir)
{
	static const char *const files[] = {"epochs.csv",   "ranks.csv",  "live.csv", "latency.csv",
					    "timeline.csv", "config.ini", "table.md"};
	const char *verdict = summary_str(root, "verdict", NULL);
	const char *meets =
	    summary_str(json_object_get(root, "metric"), "train_au_meet_expectation", NULL);
	char path[CFG_PATH_MAX + 64];

	if (verdict)
		fprintf(f, "Verdict: **%s**%s%s. ", verdict, meets ? "; AU " : "",
			!meets				? ""
			: strcmp(meets, "success") == 0 ? "meets the threshold"
							: "misses the threshold");
	fprintf(f, "Files: `summary.json` (everything)");
	for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[k]);
		if (access(path, F_OK) == 0)
			fprintf(f, ", `%s`", files[k]);
	}
	fprintf(f, ".\n\n");
}

/* Training's whole-run figures: bandwidth, IOPS, throughput, AU, latencies, decoding, CPU. */
static void report_run_results(FILE *f, json_t *metric)
{
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
	/* jpeg, png: the decoder on the reader threads, apart from the reads */
	report_stat_row(f, "decode per sample", metric, "train_decode_seconds_per_sample", NULL,
			"µs", 1e6);
	report_stat_row(f, "decode CPU per sample", metric, "train_decode_cpu_seconds_per_sample",
			NULL, "µs", 1e6);
	report_stat_row(f, "decode share of the readers' time", metric,
			"train_decode_share_of_reading", NULL, "%", 100);
	report_stat_row(f, "step time lost to decoding (est.)", metric,
			"train_decode_lost_fraction", NULL, "%", 100);
	report_stat_row(f, "CPU per GiB read", metric, "train_cpu_seconds_per_GiB", NULL, "s/GiB",
			1);
}

static void report_run_epochs(FILE *f, json_t *epochs)
{
	size_t i;
	json_t *v;

	fprintf(f,
		"\n### Per epoch\n\n| repetition | epoch | wall (s) | MiB/s | IOPS | samples/s | "
		"AU (%%) | latency p99 (µs) | data wait p99 (µs) |\n"
		"|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	json_array_foreach(epochs, i, v)
	{
		double rep = summary_num(v, "repetition");
		fprintf(f, "| %.0f | %.0f |", isnan(rep) ? 1 : rep, summary_num(v, "epoch"));
		report_epoch_cells(f, v);
	}
}

/* Live statistics (docs/results.md): the slowest rank and its share of the time lost, and a
 * training that stopped early (time_limit, steady_state). */
static void report_live(FILE *f, json_t *root)
{
	json_t *lv = json_object_get(root, "live"), *v;
	size_t i;

	if (json_is_object(lv) && !isnan(summary_num(lv, "slowest_lost_share")))
		fprintf(
		    f,
		    "\n### Stragglers\n\nSlowest rank: **rank %.0f** on host `%s`, %.1f %% of the "
		    "time all ranks spent not computing (live statistics every %g s: `live.csv`, "
		    "and `ranks.csv`'s per-interval rows).\n",
		    summary_num(lv, "slowest_rank"), summary_str(lv, "slowest_host", "n/a"),
		    100 * summary_num(lv, "slowest_lost_share"),
		    summary_num(lv, "interval_seconds"));
	json_array_foreach(json_object_get(root, "stopped_early"), i, v)
	{
		fprintf(f,
			"\nRepetition %.0f stopped early (%s) after %.1f s: %.0f epochs kept, the "
			"last one partial; not an interruption.\n",
			summary_num(v, "repetition"), summary_str(v, "reason", "n/a"),
			summary_num(v, "after_seconds"), summary_num(v, "epochs"));
	}
}

int report_write_run(const char *run_dir)
{
	char path[CFG_PATH_MAX + 64], *buf = NULL;
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
	/* A workload that describes its outputs has its own report (training's is below). */
	if ((rc = report_write_outputs(f, root, run_dir)) != 1) {
		json_decref(root);
		if (rc == 0)
			rc = report_save_file(run_dir, "report.md", buf, len, NULL);
		free(buf);
		return rc;
	}
	fprintf(f, "# feedbench run: %s\n\n", summary_str(root, "workload", "n/a"));
	report_run_lead(f, root, run_dir);
	report_run_context(f, root);

	report_run_results(f, metric);
	report_run_epochs(f, json_object_get(root, "epochs"));
	report_accelerators(f, root);
	report_eval(f, root);
	report_live(f, root);
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

/* The sweep's pictures that exist: bandwidth against each numeric key, bars, latencies. */
static void report_sweep_plots(FILE *f, const char *sweep_dir, json_t *res)
{
	char pat[CFG_PATH_MAX + 64], title[CFG_PATH_MAX + 64];
	json_t *v;
	size_t i;

	fprintf(f, "## Plots\n\n");
	json_array_foreach(json_object_get(res, "keys"), i, v)
	{
		if (!json_is_true(json_object_get(v, "numeric")))
			continue;
		snprintf(pat, sizeof(pat), "sweep_bandwidth_%s.png", summary_str(v, "name", ""));
		snprintf(title, sizeof(title), "Bandwidth against %s", summary_str(v, "name", ""));
		report_embed(f, sweep_dir, pat, title);
	}
	report_embed(f, sweep_dir, "sweep_bars.png", "Bandwidth, samples/s and AU per point");
	report_embed(f, sweep_dir, "sweep_latency.png", "Read latency percentiles per point");
}

/* A sweep of a workload with its own outputs: the context facts every run folder has. */
static const struct out_block report_what_ran[] = {
    {.text = "## What ran\n\n", .facts = outputs_what_ran}, {.text = "\n"}, {0}};

/* The sweep's title, what ran and the keys swept with their values. */
static void report_sweep_head(FILE *f, json_t *sw, json_t *res)
{
	size_t i;
	json_t *v;

	fprintf(f, "# feedbench sweep: %s\n\n", summary_str(sw, "workload", "n/a"));
	fprintf(f,
		"Config `%s` (hash `%.16s`), started %s, %lld ranks; %zu points x %lld "
		"repetition%s. Files: `sweep.csv`, `sweep_results.json`, `sweep.json`, one "
		"run folder per point.\n\n",
		summary_str(sw, "config", "n/a"), summary_str(sw, "config_hash", "n/a"),
		summary_str(sw, "created", "n/a"),
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

		fprintf(f, "- `%s` =", summary_str(v, "key", "n/a"));
		json_array_foreach(vals, j, x)
		{
			fprintf(f, "%s %s", j ? "," : "", json_string_value(x));
		}
		fprintf(f, " (default %s%s)\n", summary_str(v, "default", "n/a"),
			json_is_true(json_object_get(v, "dataset")) ? "; changes the dataset" : "");
	}
	fprintf(f, "\n");
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
	report_sweep_head(f, sw, res);
	if (summary) {
		fprintf(f, "Context below is the first completed point's; the swept keys vary as "
			   "listed above.\n\n");
		const struct workload_ops *w =
		    workload_find(summary_str(summary, "workload_type", ""));
		if (w && w->outputs &&
		    w->outputs->report) /* the facts every workload shares, not training's */
			outputs_render(f, report_what_ran, w->outputs, summary, NULL);
		else
			report_run_context(f, summary);
	}
	if (table)
		fprintf(f, "%s\n", table);
	report_sweep_plots(f, sweep_dir, res);
	fprintf(f, "## Points\n\n");
	json_array_foreach(json_object_get(res, "points"), i, v)
	{
		fprintf(f, "%zu. [%s](%s/report.md)%s\n", i + 1, summary_str(v, "label", "n/a"),
			summary_str(v, "dir", "n/a"),
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
