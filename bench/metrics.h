/* The one metric table: every metric that results, report, sweep, compare and history show or
 * judge, with its name, where summary.json keeps it, its unit, and whether higher is better.
 * A workload that records a new metric adds one row here (and its value under `column` in
 * summary.json's repetitions[]); every reader follows.
 */
#ifndef FEEDBENCH_METRICS_H
#define FEEDBENCH_METRICS_H

#include <stdbool.h>

/* Column of a metric in the value arrays of summary_repetition_values() (bench/sweep.h). */
enum sweep_metric {
	SWM_BANDWIDTH, /* MiB/s */
	SWM_IOPS,
	SWM_SAMPLES,  /* samples/s */
	SWM_AU,	      /* % */
	SWM_WAIT_P99, /* s */
	SWM_LAT_P99,  /* s */
	SWM_LAT_P50,
	SWM_LAT_P90,
	SWM_LAT_P999,
	SWM_WRITE_BW,	  /* MiB/s of a write phase (ior) */
	SWM_READ_BW,	  /* MiB/s of a read phase (ior) */
	SWM_CREATE,	  /* files created per second (metadata) */
	SWM_STAT,	  /* stat calls per second (metadata) */
	SWM_READ_OPS,	  /* open-read-close of a file per second (metadata) */
	SWM_REMOVE,	  /* files removed per second (metadata) */
	SWM_OPENS,	  /* files opened for reading per second (train: io_stats opens) */
	SWM_EVAL_SAMPLES, /* samples/s of the evaluation passes (train, num_files_eval) */
	SWM_EVAL_BW,	  /* MiB/s of the evaluation passes */
	SWM_EVAL_AU,	  /* % AU of the evaluation passes */
	SWM_COUNT
};

struct metric {
	const char *name;    /* "bandwidth": what --metric and history take */
	enum sweep_metric m; /* its column in value arrays */
	const char *column;  /* key in repetitions[] and the sweep CSV: "latency_p99_seconds" */
	const char *nested;  /* key in epochs[] when it differs ("latency_seconds.p99"), or NULL */
	const char *total;   /* key under "metric" of a summary without repetitions[] */
	const char *title;   /* table heading with the shown unit: "latency p99 (µs)" */
	const char *unit;    /* shown unit: "us" */
	const char *suffix;  /* after a shown number in a sentence: "MiB/s", "% AU" */
	double scale;	     /* stored value x scale = shown value (seconds -> µs) */
	bool higher_better;  /* direction: a rise is an improvement */
	bool by_default;     /* compared without --metric */
	double run_noise;    /* default run-to-run noise of compare, % (compare_stats.c) */
	const char *description;
	bool points; /* a percentage itself (AU): changes are judged in percentage points */
};

/* In the order compare reports them. */
extern const struct metric metric_table[];
extern const int metric_count;

/* Row by name ("latency_p99"), -1 when unknown. */
int metric_find(const char *name);
/* Row of a value-array column. */
const struct metric *metric_of(enum sweep_metric m);

#endif
