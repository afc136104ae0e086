/* The one writer of workloads' table.md, report.md and CSVs (bench/outputs.c): templates,
 * fact rows, tables and CSVs rendered from a summary.json, a missing value shown as n/a (never
 * "?", "nan" or a zero), and every registered workload's description renders.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench/errors.h"
#include "bench/outputs.h"
#include "workloads/workload.h"

static json_t *summary(void)
{
	json_t *s = json_loads(
	    "{\"workload\": \"w\", \"num_ranks\": 1, \"big\": 112423657472, \"bw\": 2048.5,"
	    " \"name\": \"a|b\", \"on\": true, \"off\": false, \"mode\": \"drop\", \"nul\": null,"
	    " \"rows\": [{\"access\": \"write\", \"bw\": 10.25, \"lat\": {\"p50\": 0.000125},"
	    "             \"it\": 0, \"skew\": {\"max\": 2}},"
	    "            {\"access\": \"read\", \"lat\": {\"p50\": 0.5}, \"it\": 1,"
	    "             \"skew\": {\"max\": 4}}]}",
	    0, NULL);
	assert_non_null(s);
	return s;
}

/* Renders tpl on obj (root s) into a static buffer; *missing gets the return value. */
static const char *render(const char *tpl, json_t *obj, json_t *s, int *missing)
{
	static char out[1024];
	FILE *f = fmemopen(out, sizeof(out), "w");

	assert_non_null(f);
	*missing = outputs_template(f, tpl, obj, s);
	fclose(f);
	return out;
}

static void test_template_fields(void **state)
{
	static const struct {
		const char *tpl, *want;
		int missing;
	} cases[] = {
	    {"{workload} on {num_ranks} rank{num_ranks=1?|s}", "w on 1 rank", 0},
	    {"{big:%d} bytes = {big/1073741824:%.1f} GiB", "112423657472 bytes = 104.7 GiB", 0},
	    {"{bw} MiB/s, {bw/1024:%.3f} GiB/s, {bw:%8.1f}|", "2048 MiB/s, 2.000 GiB/s,   2048.5|",
	     0},
	    {"{name}", "a\\|b", 0}, /* a '|' would end a table cell */
	    {"{on?yes|no} {off?yes|no} {mode=drop?dropped|evicted}", "yes no dropped", 0},
	    {"{rows.1.lat.p50*1e6:%.1f} µs", "500000.0 µs", 0},
	    {"{min(rows.lat.p50)*1e6} {max(rows.skew.max)} {mean(rows.skew.max)} {count(rows)}",
	     "125 4 3 2", 0},
	    {"{{literal}} {nul} {absent:%6.2f}|{absent:%-5s}|", "{literal} n/a    n/a|n/a  |", 3},
	    {"{name:%.1f} {mean(rows.access)}", "n/a n/a", 2}, /* no number to show */
	};
	json_t *s = summary();
	int miss;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = render(cases[i].tpl, s, s, &miss);
		if (strcmp(got, cases[i].want) != 0 || miss != cases[i].missing)
			fail_msg("'%s' rendered '%s' (%d missing), want '%s' (%d)", cases[i].tpl,
				 got, miss, cases[i].want, cases[i].missing);
	}
	/* in a row: its members, and the root's through '/' */
	json_t *row = json_array_get(json_object_get(s, "rows"), 0);
	assert_string_equal(render("{access:%-6s}|{it:%4d}|{/workload}", row, s, &miss),
			    "write |   0|w");
	json_decref(s);
}

static void test_bad_templates(void **state)
{
	static const char *const bad[] = {"{",	     "{}",	  "{a:%n}",  "{a:%10.2q}",
					  "{a?x}",   "{a=1}",	  "{min(a}", "{a*x}",
					  "{a:%*d}", "{a:10.2f}", "{a*0}",   "{a:%%d}"};
	json_t *s = summary();
	int miss;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		render(bad[i], s, s, &miss);
		if (miss != -FB_EFORMAT)
			fail_msg("'%s' was accepted (%d)", bad[i], miss);
	}
	json_decref(s);
}

static const struct out_col cols[] = {{"access", "{access:%-5s}", true},
				      {"bw", "{bw:%6.2f}", false},
				      {"p50 (µs)", "{lat.p50*1e6:%.1f}", false},
				      {NULL, NULL, false}};
static const struct out_fact facts[] = {
    {"ranks", "{num_ranks}", NULL},
    {"gone", "{absent} bytes", NULL}, /* left out: summary.json lacks it */
    {"hidden", "{num_ranks}", "off"},
    {"shown", "{bw:%.1f}", "on"},
    {NULL, NULL, NULL}};
static const struct out_col fact_cols[] = {
    {"metric", NULL, true}, {"value", NULL, false}, {NULL, NULL, false}};
static const struct out_block blocks[] = {{.text = "# {workload}\n\n"},
					  {.facts = facts, .cols = fact_cols},
					  {.text = "\n"},
					  {.rows = "rows", .cols = cols},
					  {.when = "off", .text = "never\n"},
					  {.files = true},
					  {0}};
static const struct out_csv csvs[] = {{"x.csv", "rows", cols}, {NULL, NULL, NULL}};
static const struct workload_outputs outs = {blocks, blocks, csvs};

static void test_render_tables(void **state)
{
	char out[2048];
	json_t *s = summary();
	FILE *f = fmemopen(out, sizeof(out), "w");

	assert_int_equal(outputs_render(f, blocks, &outs, s, NULL), 0);
	fclose(f);
	assert_string_equal(out,
			    "# w\n\n"
			    "| metric | value |\n|---|---:|\n| ranks | 1 |\n| shown | 2048.5 |\n"
			    "\n"
			    "| access | bw | p50 (µs) |\n|---|---:|---:|\n"
			    "| write |  10.25 | 125.0 |\n"
			    "| read  |    n/a | 500000.0 |\n"
			    "Files: `summary.json` (everything), `config.ini`, `table.md`, "
			    "`x.csv`.\n\n");
	f = fmemopen(out, sizeof(out), "w");
	assert_int_equal(outputs_csv(f, &csvs[0], s), 0);
	fclose(f);
	/* a missing value is an empty cell, never 0 or nan */
	assert_string_equal(out, "access,bw,p50 (µs)\nwrite, 10.25,125.0\nread ,,500000.0\n");
	json_decref(s);
}

/* Every registered workload's description parses and, on an empty summary.json, shows no
 * "?" and no "nan" (what it cannot show it leaves out or writes as n/a). */
static void test_registered_descriptions(void **state)
{
	json_t *empty = json_object(), *s = summary();
	int with = 0;

	for (const struct workload_ops *const *w = workload_registry; *w; w++) {
		const struct workload_outputs *o = (*w)->outputs;
		char *buf = NULL;
		size_t len = 0;
		if (!o)
			continue;
		with++;
		for (int k = 0; k < 2; k++) {
			json_t *root = k ? s : empty;
			FILE *f = open_memstream(&buf, &len);
			assert_int_equal(outputs_render(f, o->table, o, root, NULL), 0);
			assert_int_equal(outputs_report(f, o, root, NULL), 0);
			for (size_t i = 0; o->csvs && o->csvs[i].name; i++)
				assert_int_equal(outputs_csv(f, &o->csvs[i], root), 0);
			fclose(f);
			if (strstr(buf, "?") || strstr(buf, "nan"))
				fail_msg("%s: '?' or 'nan' in\n%s", (*w)->name, buf);
			free(buf);
			buf = NULL;
		}
	}
	assert_true(with >= 1);
	json_decref(empty);
	json_decref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_template_fields),
	    cmocka_unit_test(test_bad_templates),
	    cmocka_unit_test(test_render_tables),
	    cmocka_unit_test(test_registered_descriptions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
