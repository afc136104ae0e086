/* The metric table (bench/metrics.h). */
#include "metrics.h"

#include <string.h>

/* run_noise: how much the mean of a run moves from one run to the next beyond what its
 * repetitions show, as a standard deviation in % of the mean; compare's default (--run-noise).
 * Measured for configs/ci.ini on the shared 2-core VM while others compiled (load average
 * 10-20; tests/perf/compare_gate.sh and the runs of tests/compare): the means of identical
 * runs spread by 4 % (load 10) to 8 % (load 20) in bandwidth, samples/s and IOPS, and by
 * 20-36 % in the p99s (a delayed wake-up ends an emulated read late). The defaults, 10 % for
 * rates and 40 % for the p99s, keep false findings over those runs at 0 in 540 comparisons;
 * AU, judged in percentage points (floor 5), keeps 5 %. A steadier runner can lower them
 * (--run-noise) and detect smaller changes: compare prints what each comparison detects. */
const struct metric metric_table[] = {
    {"bandwidth", SWM_BANDWIDTH, "bandwidth_MiB_per_second", NULL, "train_bandwidth_MiB_per_second",
     "bandwidth (MiB/s)", "MiB/s", "MiB/s", 1.0, true, true, 10,
     "bytes moved over the phase's wall time (slowest rank), MiB = 2^20 bytes", false},
    {"samples", SWM_SAMPLES, "samples_per_second", NULL, "train_throughput_mean_samples_per_second",
     "samples/s", "samples/s", "samples/s", 1.0, true, true, 10,
     "samples delivered to the trainers per second, summed over ranks", false},
    {"au", SWM_AU, "au_percentage", NULL, "train_au_mean_percentage", "AU (%)", "%", "% AU", 1.0,
     true, true, 5, "accelerator utilisation: compute time over step time, mean of ranks", true},
    {"iops", SWM_IOPS, "iops", NULL, "train_iops", "IOPS", "IOPS", "IOPS", 1.0, true, true, 10,
     "I/O calls completed per second of wall time", false},
    {"latency_p99", SWM_LAT_P99, "latency_p99_seconds", "latency_seconds.p99",
     "train_latency_seconds.p99", "latency p99 (µs)", "us", "µs", 1e6, false, true, 40,
     "99th percentile of the time of one I/O call", false},
    {"wait_p99", SWM_WAIT_P99, "data_wait_p99_seconds", "data_wait_seconds.p99",
     "train_data_wait_seconds.p99", "data wait p99 (µs)", "us", "µs", 1e6, false, true, 40,
     "99th percentile of the time a trainer waited for its next batch", false},
    {"latency_p50", SWM_LAT_P50, "latency_p50_seconds", "latency_seconds.p50",
     "train_latency_seconds.p50", "latency p50 (µs)", "us", "µs", 1e6, false, false, 5,
     "median time of one I/O call", false},
    {"latency_p90", SWM_LAT_P90, "latency_p90_seconds", "latency_seconds.p90",
     "train_latency_seconds.p90", "latency p90 (µs)", "us", "µs", 1e6, false, false, 10,
     "90th percentile of the time of one I/O call", false},
    {"latency_p999", SWM_LAT_P999, "latency_p999_seconds", "latency_seconds.p999",
     "train_latency_seconds.p999", "latency p99.9 (µs)", "us", "µs", 1e6, false, false, 20,
     "99.9th percentile of the time of one I/O call", false},
    {"write_bandwidth", SWM_WRITE_BW, "write_bandwidth_MiB_per_second", NULL,
     "ior_write_bandwidth_MiB_per_second", "write bandwidth (MiB/s)", "MiB/s", "MiB/s", 1.0, true,
     false, 5, "bytes of all ranks written (and fsynced when asked) over the write phase's time",
     false},
    {"read_bandwidth", SWM_READ_BW, "read_bandwidth_MiB_per_second", NULL,
     "ior_read_bandwidth_MiB_per_second", "read bandwidth (MiB/s)", "MiB/s", "MiB/s", 1.0, true,
     false, 5, "bytes of all ranks read back over the read phase's time", false},
    {"create_rate", SWM_CREATE, "create_per_second", NULL, "mdtest_create_per_second", "creates/s",
     "ops/s", "creates/s", 1.0, true, false, 5,
     "files created (open for create, write, close) per second, all ranks", false},
    {"stat_rate", SWM_STAT, "stat_per_second", NULL, "mdtest_stat_per_second", "stats/s", "ops/s",
     "stats/s", 1.0, true, false, 5, "stat calls per second, all ranks", false},
    {"read_rate", SWM_READ_OPS, "read_per_second", NULL, "mdtest_read_per_second", "file reads/s",
     "ops/s", "file reads/s", 1.0, true, false, 5,
     "open-read-close of a whole file per second, all ranks", false},
    {"remove_rate", SWM_REMOVE, "remove_per_second", NULL, "mdtest_remove_per_second", "removes/s",
     "ops/s", "removes/s", 1.0, true, false, 5, "files removed per second, all ranks", false},
    {"opens", SWM_OPENS, "opens_per_second", NULL, "train_opens_per_second", "opens/s", "opens/s",
     "opens/s", 1.0, true, false, 5,
     "files opened for reading per second of wall time, all ranks (one metadata operation each)",
     false},
    {"eval_samples", SWM_EVAL_SAMPLES, "eval_samples_per_second", "eval.samples_per_second",
     "eval_throughput_mean_samples_per_second", "eval samples/s", "samples/s", "eval samples/s",
     1.0, true, false, 5,
     "evaluation samples delivered per second of the evaluation passes' wall time, all ranks",
     false},
    {"eval_bandwidth", SWM_EVAL_BW, "eval_bandwidth_MiB_per_second",
     "eval.bandwidth_MiB_per_second", "eval_bandwidth_MiB_per_second", "eval bandwidth (MiB/s)",
     "MiB/s", "eval MiB/s", 1.0, true, false, 5,
     "bytes read by the evaluation passes over their wall time (slowest rank)", false},
    {"eval_au", SWM_EVAL_AU, "eval_au_percentage", "eval.au_percentage", "eval_au_mean_percentage",
     "eval AU (%)", "%", "% eval AU", 1.0, true, false, 5,
     "accelerator utilisation of the evaluation passes (eval_time over step time), mean of ranks",
     true},
};
const int metric_count = (int)(sizeof(metric_table) / sizeof(metric_table[0]));

_Static_assert(sizeof(metric_table) / sizeof(metric_table[0]) == SWM_COUNT,
	       "one row per value-array column");

int metric_find(const char *name)
{
	for (int i = 0; i < metric_count; i++)
		if (strcmp(metric_table[i].name, name) == 0)
			return i;
	return -1;
}

const struct metric *metric_of(enum sweep_metric m)
{
	for (int i = 0; i < metric_count; i++)
		if (metric_table[i].m == m)
			return &metric_table[i];
	return &metric_table[0];
}
