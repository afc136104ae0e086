/* The write hook's last step for a workload described as data (bench/outputs.h): table.md and
 * the CSVs rendered from summary.json into the run folder of bench/results.h. Above both the
 * renderer (outputs.c) and the folder writer (results.c), which renders report.md through
 * report.c. */
#include "outputs.h"

#include <errno.h>
#include <stdlib.h>

#include "results.h"
#include "run.h"
#include "../workloads/workload.h"

/* Renders text into a new string (NULL when out of memory or the description is broken). */
static char *out_text_of(const struct out_block *blocks, const struct out_csv *csv,
			 const struct workload_outputs *o, json_t *summary)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int rc;

	if (!m)
		return NULL;
	rc = csv ? outputs_csv(m, csv, summary) : outputs_render(m, blocks, o, summary, NULL);
	fclose(m);
	if (rc < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

int outputs_write_csvs(const struct workload_outputs *o, json_t *summary, const char *dir)
{
	for (size_t i = 0; o->csvs && o->csvs[i].name; i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		int rc;

		if (!m)
			return -ENOMEM;
		if ((rc = outputs_csv(m, &o->csvs[i], summary)) < 0) {
			fclose(m);
			free(buf);
			return rc;
		}
		if ((rc = results_write_stream(dir, o->csvs[i].name, &buf, m)) < 0)
			return rc;
	}
	return 0;
}

int outputs_write_folder(struct run *run, json_t *summary, const struct results_ctx *ctx,
			 const char *final_dir, bool quiet)
{
	const struct workload_outputs *o = run->workload->outputs;
	struct results_file files[16];
	int n = 0, rc;

	if (run->rank != 0 || !o)
		return results_write_folder(run, summary, ctx, final_dir, NULL, 0, quiet);
	files[n].name = "table.md";
	files[n++].text = out_text_of(o->table, NULL, o, summary);
	for (size_t i = 0; o->csvs && o->csvs[i].name && n < 16; i++) {
		files[n].name = o->csvs[i].name;
		files[n++].text = out_text_of(NULL, &o->csvs[i], o, summary);
	}
	rc = results_write_folder(run, summary, ctx, final_dir, files, n, quiet);
	for (int i = 0; i < n; i++)
		free((char *)files[i].text);
	return rc;
}
