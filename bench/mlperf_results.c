/* The results of a training submission in the submission's form (docs/mlperf.md):
 * results.json and results.csv with the columns of mlpstorage's report (its DLIO metric names:
 * train_au_mean_percentage, train_throughput_mean_samples_per_second, ...), one row per measured
 * run and their mean, and system.yaml, the system description the user completes. Written by
 * `feedbench mlperf run` from the run folders' summary.json files. */
#include "mlperf.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "safefile.h"
#include "util.h"

/* The columns, in order: name and the summary.json value they take (NAN: none). */
static const char *const res_cols[] = {"run",
				       "model",
				       "accelerator_type",
				       "num_hosts",
				       "num_accelerators",
				       "train_au_mean_percentage",
				       "au_threshold_percentage",
				       "train_au_meet_expectation",
				       "train_throughput_mean_samples_per_second",
				       "samples_per_second_per_accelerator",
				       "train_io_throughput_GiB_per_second",
				       "train_bytes_read",
				       "train_wall_seconds",
				       "shuffle_seed"};
#define RES_NCOLS     (sizeof(res_cols) / sizeof(res_cols[0]))
#define RES_FIRST_NUM 3 /* columns from here on are numbers */

/* o.a, or o.a.b when b is given; NAN when it is not a number. */
static double get_num(json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(o, a);

	if (b)
		v = json_object_get(v, b);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* One measured run's row as a JSON object (numbers null where summary.json has none). */
static json_t *run_row(const char *folder, json_t *s)
{
	json_t *m = json_object_get(s, "metric"), *ml = json_object_get(s, "mlperf");
	double acc = get_num(s, "num_accelerators", NULL);
	double bytes = get_num(m, "train_bytes_read", NULL);
	double wall = get_num(m, "train_wall_seconds", NULL);
	double sps = get_num(m, "train_throughput_mean_samples_per_second", NULL);
	double thr = get_num(ml, "preset", "au_threshold");
	double v[RES_NCOLS];

	if (!isfinite(thr))
		thr = get_num(json_object_get(s, "config"), "train", "au_threshold");
	v[3] = get_num(s, "num_nodes", NULL);
	v[4] = acc;
	v[5] = get_num(m, "train_au_mean_percentage", NULL);
	v[6] = 100 * thr;
	v[8] = sps;
	v[9] = acc > 0 ? sps / acc : NAN;
	v[10] = wall > 0 ? bytes / wall / 1073741824.0 : NAN;
	v[11] = bytes;
	v[12] = wall;
	v[13] = get_num(json_object_get(s, "config"), "reader", "shuffle_seed");
	json_t *row =
	    json_pack("{s:s, s:s, s:s}", res_cols[0], folder, res_cols[1],
		      json_string_value(json_object_get(ml, "model")) ?: "none", res_cols[2],
		      json_string_value(json_object_get(ml, "accelerator_type")) ?: "none");
	for (size_t c = RES_FIRST_NUM; c < RES_NCOLS; c++)
		if (c == 7)
			json_object_set(row, res_cols[c],
					json_object_get(m, "train_au_meet_expectation"));
		else
			json_object_set_new(row, res_cols[c],
					    isfinite(v[c]) ? json_real(v[c]) : json_null());
	return row;
}

/* The mean of the measured runs, column by column (null where a run lacks the value). */
static json_t *mean_row(json_t *rows)
{
	json_t *mean = json_pack("{s:s}", "run", "mean"), *r;
	size_t i;

	for (size_t c = RES_FIRST_NUM; c < RES_NCOLS; c++) {
		double sum = 0;
		size_t n = 0;

		if (c == 7 || c == RES_NCOLS - 1)
			continue;
		json_array_foreach(rows, i, r)
		{
			json_t *v = json_object_get(r, res_cols[c]);
			if (!json_is_number(v))
				break;
			sum += json_number_value(v);
			n++;
		}
		json_object_set_new(mean, res_cols[c],
				    n && n == json_array_size(rows) ? json_real(sum / (double)n)
								    : json_null());
	}
	return mean;
}

static void csv_row(FILE *f, json_t *row)
{
	for (size_t c = 0; c < RES_NCOLS; c++) {
		if (c)
			fputc(',', f);
		mlperf_csv_cell(f, json_object_get(row, res_cols[c]));
	}
	fputc('\n', f);
}

/* The system description to complete: what the runs know is filled in, the rest says FILL. */
static int write_system_yaml(const char *dir, json_t *s)
{
	json_t *host = json_object_get(s, "host"), *st = json_object_get(s, "storage");
	char *text = NULL;
	char *hosts = json_dumps(json_object_get(s, "hosts"), JSON_COMPACT);
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f) {
		free(hosts);
		return -ENOMEM;
	}
	fprintf(
	    f,
	    "# System under test of this MLPerf Storage submission (rules 2.1.7, 4.7.3, 4.7.4).\n"
	    "# Written by feedbench mlperf run from what the runs saw; complete every FILL.\n"
	    "System:\n"
	    "  name: FILL  # the system name of results/<system-name>/\n"
	    "  description: FILL\n"
	    "  shared_capabilities:\n"
	    "    multi_host_support: FILL            # False for local storage\n"
	    "    simultaneous_write_support: FILL\n"
	    "    simultaneous_read_support: FILL\n"
	    "  remapping_time_seconds: FILL        # 4.7.3: checkpoint done -> readable on "
	    "another host\n"
	    "clients:\n"
	    "  count: %lld\n"
	    "  hosts: %s\n"
	    "  cpu_model: \"%s\"\n"
	    "  cpus: %lld\n"
	    "  memory_bytes: %.0f\n"
	    "  kernel: \"%s\"\n"
	    "  nics: FILL  # model, count and speed per client\n"
	    "storage:\n"
	    "  file_system: %s\n"
	    "  mount: \"%s\"\n"
	    "  product: FILL\n"
	    "  nodes: FILL\n"
	    "  media: FILL  # drives per node, model, capacity\n"
	    "  network: FILL  # fabric between clients and storage\n",
	    (long long)get_num(s, "num_nodes", NULL), hosts ? hosts : "[]",
	    json_string_value(json_object_get(host, "cpu_model")) ?: "unknown",
	    (long long)get_num(host, "cpus", NULL), get_num(host, "memory_bytes", NULL),
	    json_string_value(json_object_get(host, "kernel")) ?: "unknown",
	    json_string_value(json_object_get(st, "fs_type")) ?: "unknown",
	    json_string_value(json_object_get(st, "mount")) ?: "unknown");
	free(hosts);
	return mlperf_write_stream(dir, "system.yaml", f, &text, &len);
}

static int write_csv(const char *dir, json_t *rows, json_t *mean)
{
	char *text = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	for (size_t c = 0; c < RES_NCOLS; c++)
		fprintf(f, "%s%s", c ? "," : "", res_cols[c]);
	fputc('\n', f);
	for (i = 0; i < json_array_size(rows); i++)
		csv_row(f, json_array_get(rows, i));
	csv_row(f, mean);
	return mlperf_write_stream(dir, "results.csv", f, &text, &len);
}

/* The training results: results.json and results.csv, the warm-up left out. */
static int train_results(const char *dir, json_t *runs)
{
	json_t *rows = json_array(), *r;
	size_t i;

	json_array_foreach(runs, i, r)
	{
		if (!json_is_true(json_object_get(r, "warmup")))
			json_array_append_new(
			    rows, run_row(json_string_value(json_object_get(r, "folder")),
					  json_object_get(r, "s")));
	}
	json_t *mean = mean_row(rows);
	json_t *res = json_pack("{s:i, s:s, s:s, s:O, s:O}", "schema", 1, "benchmark", "training",
				"columns_from", "mlpstorage report", "runs", rows, "mean", mean);
	char *text = json_dumps(res, JSON_INDENT(2));
	int rc;

	rc = mlperf_write_text(dir, "results.json", text, text ? strlen(text) : 0);
	if (rc == 0)
		rc = write_csv(dir, rows, mean);
	json_decref(res);
	json_decref(mean);
	json_decref(rows);
	return rc;
}

int mlperf_results_write(const char *dir)
{
	char path[4200];
	json_t *top, *phases, *p, *runs = json_array(), *first;
	size_t i;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/mlperf_run.json", dir);
	top = safe_json_load(path, 0, NULL);
	phases = json_object_get(top, "phases");
	json_array_foreach(phases, i, p)
	{
		const char *folder = json_string_value(json_object_get(p, "folder"));
		json_t *s;

		snprintf(path, sizeof(path), "%s/%s/summary.json", dir, folder ? folder : "");
		s = safe_json_load(path, 0, NULL);
		if (!s) {
			fprintf(stderr, "feedbench: error: cannot read %s\n", path);
			rc = -FB_EFORMAT;
			break;
		}
		json_array_append_new(runs, json_pack("{s:s, s:O, s:o}", "folder", folder, "warmup",
						      json_object_get(p, "warmup") ?: json_false(),
						      "s", s));
	}
	first = json_object_get(json_array_get(runs, 0), "s");
	if (!top || !first)
		rc = rc < 0 ? rc : -FB_EFORMAT;
	if (rc == 0)
		rc = strcmp(json_string_value(json_object_get(first, "workload_type")) ?: "",
			    "checkpoint") == 0
			 ? mlperf_results_ckpt(dir, runs)
			 : train_results(dir, runs);
	if (rc == 0)
		rc = write_system_yaml(dir, first);
	json_decref(runs);
	json_decref(top);
	return rc;
}
