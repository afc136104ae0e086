/* The results of a checkpointing submission in the submission's form (docs/mlperf.md):
 * results.json and results.csv with one row per invocation (DLIO's checkpoint metric names:
 * save_checkpoint_io_mean_GB_per_second, ..., in GiB as DLIO computes them) and the
 * submission's row as MLPerf Storage aggregates it (rule 4.3.6 checkpointResultAggregation:
 * the write columns the mean over the invocations that wrote, the read columns over those that
 * read, blank when one of them lacks the value), and checkpoints.csv, one row per checkpoint
 * and invocation. Written by `feedbench mlperf run` from the invocations' summary.json. */
#include "mlperf.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "safefile.h"
#include "util.h"

/* The row's columns: name, then where in summary.json (metric member, or a special source). */
static const struct {
	const char *name, *metric;
	char phase; /* 'w': a write column, 'r': a read column, 0: neither */
} ck_cols[] = {
    {"run", NULL, 0},
    {"invocation", NULL, 0},
    {"model", NULL, 0},
    {"scale", NULL, 0},
    {"num_processes", NULL, 0},
    {"num_hosts", NULL, 0},
    {"processes_per_host", NULL, 0},
    {"checkpoint_size_GiB", NULL, 0},
    {"num_checkpoints_write", NULL, 0},
    {"num_checkpoints_read", NULL, 0},
    {"save_checkpoint_io_mean_GB_per_second", "checkpoint_write_throughput_GiB_per_second", 'w'},
    {"save_checkpoint_duration_mean_seconds", "checkpoint_write_duration_seconds", 'w'},
    {"load_checkpoint_io_mean_GB_per_second", "checkpoint_read_throughput_GiB_per_second", 'r'},
    {"load_checkpoint_duration_mean_seconds", "checkpoint_read_duration_seconds", 'r'},
    {"recovery_duration_mean_seconds", "checkpoint_recovery_seconds", 'r'},
    {"visible_after_seconds", "checkpoint_visible_after_seconds", 'r'},
    {"read_on_other_host", NULL, 'r'},
};
#define CK_NCOLS  (sizeof(ck_cols) / sizeof(ck_cols[0]))
#define CK_STRING 3 /* the first columns are strings */

/* MLPerf Storage's published column names of rule 4.3.6, and the row's columns they take. */
static const char *const ck_published[][2] = {
    {"Write B/W (GiB/s)", "save_checkpoint_io_mean_GB_per_second"},
    {"Write Duration (secs)", "save_checkpoint_duration_mean_seconds"},
    {"Read B/W (GiB/s)", "load_checkpoint_io_mean_GB_per_second"},
    {"Read Duration (secs)", "load_checkpoint_duration_mean_seconds"},
};

static json_t *phase_of(json_t *s, const char *k)
{
	return json_object_get(json_object_get(json_object_get(s, "checkpoint"), "phases"), k);
}

static json_t *num_or_null(json_t *v)
{
	return json_is_number(v) ? json_real(json_number_value(v)) : json_null();
}

/* One invocation's row. */
static json_t *ck_row(const char *folder, json_t *s)
{
	json_t *m = json_object_get(s, "metric"), *cfg = json_object_get(s, "config");
	double params = json_number_value(
	    json_object_get(json_object_get(cfg, "checkpoint"), "num_parameters"));
	const struct mlperf_ckpt_model *model = mlperf_ckpt_model_of(params);
	json_t *row = json_object();
	double size = json_number_value(json_object_get(m, "checkpoint_size_bytes"));

	json_object_set_new(row, "run", json_string(folder));
	json_object_set(row, "invocation", phase_of(s, "invocation"));
	json_object_set_new(row, "model", json_string(model ? model->name : "none"));
	json_object_set(row, "scale",
			json_object_get(json_object_get(s, "checkpoint"), "scale") ?: json_null());
	json_object_set(row, "num_processes", json_object_get(s, "num_ranks"));
	json_object_set(row, "num_hosts", phase_of(s, "hosts"));
	json_object_set(row, "processes_per_host", phase_of(s, "ranks_per_host"));
	json_object_set_new(row, "checkpoint_size_GiB",
			    size > 0 ? json_real(size / 1073741824.0) : json_null());
	json_object_set(row, "num_checkpoints_write", phase_of(s, "num_checkpoints_write"));
	json_object_set(row, "num_checkpoints_read", phase_of(s, "num_checkpoints_read"));
	for (size_t c = 0; c < CK_NCOLS; c++)
		if (ck_cols[c].metric)
			json_object_set_new(row, ck_cols[c].name,
					    num_or_null(json_object_get(m, ck_cols[c].metric)));
	json_object_set(row, "read_on_other_host",
			json_number_value(phase_of(s, "num_checkpoints_read")) > 0
			    ? phase_of(s, "read_on_other_host")
			    : json_null());
	return row;
}

/* Whether the row's invocation wrote (phase 'w') or read ('r'). */
static bool row_in_phase(json_t *row, char phase)
{
	const char *k = phase == 'w' ? "num_checkpoints_write" : "num_checkpoints_read";

	return json_number_value(json_object_get(row, k)) > 0;
}

/* The submission's row (rule 4.3.6): a phase's columns are the mean over the invocations of
 * that phase, null when one of them lacks the value; the others are the first row's. */
static json_t *ck_submission(json_t *rows)
{
	json_t *first = json_array_get(rows, 0), *sub = json_object(), *r;
	size_t i;

	json_object_set_new(sub, "run", json_string("submission"));
	json_object_set_new(sub, "invocation",
			    json_string(json_array_size(rows) == 1 ? "both" : "write, read"));
	for (size_t c = 2; c < CK_NCOLS; c++) {
		const char *k = ck_cols[c].name;
		double sum = 0;
		size_t n = 0;
		bool ok = true;

		if (strncmp(k, "num_checkpoints_", 16) == 0) { /* over the invocations */
			json_array_foreach(rows, i, r)
			{
				sum += json_number_value(json_object_get(r, k));
			}
			json_object_set_new(sub, k, json_integer((json_int_t)sum));
			continue;
		}
		if (!ck_cols[c].phase || c == CK_NCOLS - 1) {
			json_object_set(sub, k, json_object_get(first, k));
			continue;
		}
		json_array_foreach(rows, i, r)
		{
			if (!row_in_phase(r, ck_cols[c].phase))
				continue;
			if (json_is_number(json_object_get(r, k)))
				sum += json_number_value(json_object_get(r, k)), n++;
			else
				ok = false;
		}
		json_object_set_new(sub, k, ok && n ? json_real(sum / (double)n) : json_null());
	}
	json_array_foreach(rows, i, r)
	{
		if (row_in_phase(r, 'r'))
			json_object_set(sub, "read_on_other_host",
					json_object_get(r, "read_on_other_host"));
	}
	return sub;
}

static int ck_csv(const char *dir, json_t *rows, json_t *sub)
{
	char *text = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	for (size_t c = 0; c < CK_NCOLS; c++)
		fprintf(f, "%s%s", c ? "," : "", ck_cols[c].name);
	fputc('\n', f);
	for (i = 0; i <= json_array_size(rows); i++) {
		json_t *r = i < json_array_size(rows) ? json_array_get(rows, i) : sub;
		for (size_t c = 0; c < CK_NCOLS; c++) {
			if (c)
				fputc(',', f);
			mlperf_csv_cell(f, json_object_get(r, ck_cols[c].name));
		}
		fputc('\n', f);
	}
	return mlperf_write_stream(dir, "results.csv", f, &text, &len);
}

/* The per-checkpoint table: every checkpoint of every invocation. */
static int ck_table(const char *dir, json_t *runs, json_t *out)
{
	static const char *const k[] = {"step",
					"write_duration_seconds",
					"write_throughput_GiB_per_second",
					"read_duration_seconds",
					"read_throughput_GiB_per_second",
					"recovery_seconds"};
	char *text = NULL;
	size_t len = 0, i, j;
	FILE *f = open_memstream(&text, &len);
	json_t *run, *c;

	if (!f)
		return -ENOMEM;
	fputs("run", f);
	for (size_t x = 0; x < sizeof(k) / sizeof(k[0]); x++)
		fprintf(f, ",%s", k[x]);
	fputc('\n', f);
	json_array_foreach(runs, i, run)
	{
		json_array_foreach(json_object_get(json_object_get(run, "s"), "checkpoints"), j, c)
		{
			json_t *row = json_pack("{s:O}", "run", json_object_get(run, "folder"));
			util_csv_field(f, json_string_value(json_object_get(run, "folder")));
			for (size_t x = 0; x < sizeof(k) / sizeof(k[0]); x++) {
				json_t *v = json_object_get(c, k[x]);
				fputc(',', f);
				mlperf_csv_cell(f, v);
				json_object_set(row, k[x], v ?: json_null());
			}
			fputc('\n', f);
			json_array_append_new(out, row);
		}
	}
	return mlperf_write_stream(dir, "checkpoints.csv", f, &text, &len);
}

int mlperf_results_ckpt(const char *dir, json_t *runs)
{
	json_t *rows = json_array(), *table = json_array(), *pub = json_object(), *run;
	size_t i;
	int rc;

	json_array_foreach(runs, i, run)
	{
		const char *folder = json_string_value(json_object_get(run, "folder"));
		json_array_append_new(rows, ck_row(folder, json_object_get(run, "s")));
	}
	json_t *sub = ck_submission(rows);
	for (size_t p = 0; p < sizeof(ck_published) / sizeof(ck_published[0]); p++)
		json_object_set(pub, ck_published[p][0], json_object_get(sub, ck_published[p][1]));
	rc = ck_csv(dir, rows, sub);
	if (rc == 0)
		rc = ck_table(dir, runs, table);
	if (rc == 0) {
		json_t *res = json_pack("{s:i, s:s, s:s, s:O, s:O, s:O, s:O}", "schema", 1,
					"benchmark", "checkpointing", "columns_from",
					"mlpstorage report (rule 4.3.6)", "runs", rows,
					"submission", sub, "published", pub, "checkpoints", table);
		char *text = res ? json_dumps(res, JSON_INDENT(2)) : NULL;
		rc = mlperf_write_text(dir, "results.json", text, text ? strlen(text) : 0);
		json_decref(res);
	}
	json_decref(sub);
	json_decref(pub);
	json_decref(table);
	json_decref(rows);
	return rc;
}
