/* A workload's outputs as data: the sections, rows and columns of its table.md, report.md and
 * CSV files, rendered from summary.json by one writer (bench/outputs.c).
 *
 * A workload builds summary.json and describes, once, what its files show; it formats nothing
 * itself. Everything is rendered from summary.json alone, so `feedbench plot DIR` rebuilds
 * report.md exactly as the run wrote it, and every figure a file shows is in summary.json.
 *
 * Templates. Text with fields in braces, each naming a member of the JSON object the template
 * is applied to (summary.json's root; in a table or CSV, the row) by its dotted path, array
 * indexes as numbers ("checkpoints.0.step"); a leading '/' starts from the root inside a row:
 *
 *   {path}            the value: a string as it is, an integer whole, a real as
 *                     outputs_format_number writes it, true or false
 *   {path:%10.2f}     a number or string through one printf conversion: flags, width,
 *                     precision and one of d (an integer, rounded), f, e, g or s
 *   {path*1e6}        the number times a factor ({path/1024}: divided), then as above
 *   {path?yes|no}     the first text when the value is true or a non-zero number, else the
 *                     second; {path=drop?yes|no} when the value, as text, is "drop"
 *   {min(arr.key)}    min, max, mean or sum of key over the array arr (a path through an array
 *                     maps over its elements: "checkpoints.write_seconds_per_rank.max"),
 *                     {count(arr)} its length
 *   {{ and }}         literal braces
 *
 * A value summary.json lacks (absent, null, not a number where one is needed, an empty array)
 * renders "n/a" in tables and text, an empty cell in a CSV, and leaves out a fact row: a
 * report never shows "?", "nan" or a number it does not have.
 */
#ifndef FEEDBENCH_OUTPUTS_H
#define FEEDBENCH_OUTPUTS_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

struct results_ctx;
struct run;

/* A column of a table or CSV: heading (CSV: the header's name) and the cell's template,
 * applied to each row. Lists end with an entry whose head is NULL. */
struct out_col {
	const char *head;
	const char *cell;
	bool left; /* Markdown: left-aligned (text); numbers are right-aligned */
};

/* A row of a table of facts ("| label | value |"). Lists end with label NULL. */
struct out_fact {
	const char *label;
	const char *value; /* template on the root; the row is left out when a value is missing */
	const char
	    *when; /* path: the row only when that member is true or non-zero (NULL: always) */
};

/* One piece of a file, in order. Lists end with an entry whose every pointer is NULL. */
struct out_block {
	const char *when;   /* path: the block only when that member is true or non-zero */
	const char *unless; /* path: the block only when that member is absent, false or zero */
	const char *text;   /* template on the root, written as it is (give the newlines) */
	const char
	    *rows; /* a table of this array of summary.json, one row per element, with cols */
	const struct out_col *cols;
	/* A table of facts under the cols' headings (two empty ones when cols is NULL); a value
	 * may hold more cells of its row: "{a} | {b}". */
	const struct out_fact *facts;
	bool files; /* the sentence naming the folder's files (report.md: those it holds) */
};

/* A CSV file of the run folder: one line per element of the array rows. */
struct out_csv {
	const char *name; /* "ior.csv" */
	const char *rows;
	const struct out_col *cols;
};

/* What a workload writes besides summary.json and config.ini. */
struct workload_outputs {
	const struct out_block *table;	/* table.md (printed at the end of the run) */
	const struct out_block *report; /* report.md; outputs_report adds the title and warnings */
	const struct out_csv *csvs;	/* NULL, or a list ending with name NULL */
};

/* A number as the tables show it: n/a for NAN, fewer decimals for larger values. */
void outputs_format_number(double v, char *buf, size_t len);

/* The "What ran" facts of every run folder: workload, times, ranks and nodes, data folder,
 * file system, back-end, stripes, cache state, version and config hash. */
extern const struct out_fact outputs_what_ran[];

/* Renders one template on obj (root: what '/' starts from) into f. Returns the number of its
 * fields that summary.json lacked (0: complete), or -FB_EFORMAT for a template that does not
 * parse (a bug of its description; the unit test renders every registered one). */
int outputs_template(FILE *f, const char *tpl, json_t *obj, json_t *root);
/* Renders blocks (a table.md or report.md) from summary into f; dir is the run folder (for
 * the files sentence; NULL: lists the files the description names). 0 or -FB_EFORMAT. */
int outputs_render(FILE *f, const struct out_block *blocks, const struct workload_outputs *o,
		   json_t *summary, const char *dir);
/* Renders a CSV (header and one line per row) into f. 0 or -FB_EFORMAT. */
int outputs_csv(FILE *f, const struct out_csv *csv, json_t *summary);
/* report.md of the run folder dir from summary: "# feedbench run: <workload>", the blocks of
 * o->report, the plots the folder holds, and summary.json's warnings. 0 or a negative code. */
int outputs_report(FILE *f, const struct workload_outputs *o, json_t *summary, const char *dir);
/* Rank 0: renders every CSV of o from summary into the folder dir (a run folder being
 * written, bench/results.h). For a workload writing its folder through results_folder_write.
 * 0 or a negative code. */
int outputs_write_csvs(const struct workload_outputs *o, json_t *summary, const char *dir);
/* The write hook's last step (collective): rank 0 renders table.md and the CSVs of
 * run->workload's outputs from summary and writes the run folder with results_write_folder
 * (report.md follows from summary.json there); other ranks pass summary NULL. */
int outputs_write_folder(struct run *run, json_t *summary, const struct results_ctx *ctx,
			 const char *final_dir, bool quiet);

#endif
