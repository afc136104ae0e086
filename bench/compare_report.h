/* The report of `feedbench compare`, shared by the command (compare.c: options, verdicts, the
 * terminal) and its files (compare_out.c: Markdown, JUnit XML, JSON). Private to those two.
 */
#ifndef FEEDBENCH_COMPARE_REPORT_H
#define FEEDBENCH_COMPARE_REPORT_H

#include <stdio.h>

#include "compare.h"
#include "metrics.h"

#define CMP_MAX_METRICS SWM_COUNT /* every row of the metric table */
#define CMP_TEST_TEXT                                                                              \
	"Welch's unequal-variance t-test, two-sided: over the repetitions of single runs with a "  \
	"run-to-run noise term, or over run means where a side holds several runs of a config "    \
	"(one run against several: a prediction test with their degrees of freedom)"

struct cmp_opts {
	const char *base_path, *cur_path;
	const char *baseline_name, *baselines_dir;
	const char *markdown, *junit, *json;
	int metrics[CMP_MAX_METRICS];				   /* indices into metric_table */
	bool tol_set[CMP_MAX_METRICS], noise_set[CMP_MAX_METRICS]; /* METRIC=PCT given */
	int nmetrics;
	bool all_metrics;	     /* --metric all: skip a metric neither side recorded */
	double tol[CMP_MAX_METRICS]; /* % per metric_table index */
	double alpha;
	double run_noise[CMP_MAX_METRICS]; /* % per metric_table index */
	bool allow_cached, quiet;
	int inconclusive; /* 0: exit 4; 1: --inconclusive pass (0); 2: fail (1) */
};

struct cmp_row {
	int pair;	  /* index into match.pairs */
	int metric;	  /* index into metric_table */
	double tol;	  /* % */
	double run_noise; /* % */
	struct cmp_outcome o;
};

struct cmp_report {
	const struct cmp_opts *opts;
	struct cmp_side base, cur;
	char base_desc[4200]; /* how the baseline was named */
	struct cmp_match match;
	struct cmp_row *rows;
	int nrows;
	int count[CMP_MISSING + 1];
	bool labelled; /* sweep points: a point column */
	int nwarnings;
	char warnings[CMP_MAX_REASONS + 2][CMP_REASON_LEN * 2];
	char error[CMP_REASON_LEN * 2]; /* a side that could not be read */
	int status;
	char stamp[32]; /* "2026-11-30T10:41:07" (JUnit: no zone) */
	char host[256];
};

/* Numbers as text: "812.3 ± 4.1 MiB/s (n=3)", "-12.0 %", "p=0.0012", the test column. */
int cmp_decimals(double v);
void cmp_stat_text(const struct summary_stat *s, const struct metric *m, bool runs, char *buf,
		   size_t len);
void cmp_change_text(const struct cmp_outcome *o, char *buf, size_t len);
void cmp_p_text(double p, char *buf, size_t len);
void cmp_test_text(const struct cmp_outcome *o, double alpha, char *buf, size_t len);
void cmp_mde_text(const struct cmp_outcome *o, char *buf, size_t len);
const char *cmp_row_label(const struct cmp_report *r, const struct cmp_row *row);
/* The values a row tests on one side (repetitions, or run means); returns the count. */
int cmp_side_values(const struct cmp_side *s, int first, enum sweep_metric m, bool by_runs,
		    double *out);
bool cmp_pair_by_runs(const struct cmp_report *r, int pair);
/* "regressed", "inconclusive", "ok", "incomparable" */
const char *cmp_overall(const struct cmp_report *r);
void cmp_counts_text(const struct cmp_report *r, char *buf, size_t len);
void cmp_side_desc(const struct cmp_side *s, char *buf, size_t len);
void cmp_print_header(const struct cmp_report *r, FILE *f, const char *bullet);
/* Writes --markdown, --junit and --json; -1 when one could not be written (said on stderr). */
int cmp_write_outputs(const struct cmp_report *r);

#endif
