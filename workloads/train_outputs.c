/* The training workload's CSV files as data (bench/outputs.h): epochs.csv and ranks.csv,
 * rendered from summary.json's epochs[] and ranks[], one line per element. latency.csv and
 * timeline.csv hold figures summary.json does not (the merged histogram's buckets, the
 * timeline's intervals) and are written by workloads/train_tables.c, as are table.md and,
 * from summary.json, report.md (bench/report.c).
 */
#include "../bench/outputs.h"
#include "train_results.h"

static const struct out_col train_epoch_cols[] = {
    {"repetition", "{repetition:%d}", false},
    {"epoch", "{epoch:%d}", false},
    {"wall_seconds", "{wall_seconds:%.9f}", false},
    {"bytes_read", "{bytes_read:%d}", false},
    {"read_ops", "{read_ops:%d}", false},
    {"samples", "{samples:%d}", false},
    {"bandwidth_MiB_per_second", "{bandwidth_MiB_per_second:%.6f}", false},
    {"iops", "{iops:%.6f}", false},
    {"samples_per_second", "{samples_per_second:%.6f}", false},
    {"au_percentage", "{au_percentage:%.6f}", false},
    {"latency_p50_seconds", "{latency_seconds.p50:%.9f}", false},
    {"latency_p90_seconds", "{latency_seconds.p90:%.9f}", false},
    {"latency_p99_seconds", "{latency_seconds.p99:%.9f}", false},
    {"latency_p999_seconds", "{latency_seconds.p999:%.9f}", false},
    {"latency_max_seconds", "{latency_seconds.max:%.9f}", false},
    {"data_wait_p50_seconds", "{data_wait_seconds.p50:%.9f}", false},
    {"data_wait_p99_seconds", "{data_wait_seconds.p99:%.9f}", false},
    {"au_threshold_percentage", "{/config.train.au_threshold*100:%.2f}", false},
    {"lost_data_wait_fraction", "{lost_time.data_wait:%.6f}", false},
    {"lost_copy_fraction", "{lost_time.copy:%.6f}", false},
    {"lost_barrier_fraction", "{lost_time.barrier:%.6f}", false},
    {"lost_other_fraction", "{lost_time.other:%.6f}", false},
    {NULL, NULL, false}};

static const struct out_col train_rank_cols[] = {
    {"rank", "{rank:%d}", false},
    {"host", "{host}", true},
    {"wall_seconds", "{wall_seconds:%.9f}", false},
    {"bytes_read", "{bytes_read:%d}", false},
    {"read_ops", "{read_ops:%d}", false},
    {"samples", "{samples:%d}", false},
    {"bandwidth_MiB_per_second", "{bandwidth_MiB_per_second:%.6f}", false},
    {"au_percentage", "{au_percentage:%.6f}", false},
    {"compute_seconds", "{compute_seconds:%.9f}", false},
    {"step_seconds", "{step_seconds:%.9f}", false},
    {"barrier_seconds", "{step_barrier_seconds:%.9f}", false},
    {"data_wait_p99_seconds", "{data_wait_p99_seconds:%.9f}", false},
    {"latency_p99_seconds", "{latency_p99_seconds:%.9f}", false},
    /* Empty in the whole-run rows; the per-interval rows bench/live.c appends fill them. */
    {"interval", "{interval:%d}", false},
    {"elapsed_seconds", "{elapsed_seconds:%.6f}", false},
    {NULL, NULL, false}};

static const struct out_csv train_csvs[] = {{"epochs.csv", "epochs", train_epoch_cols},
					    {"ranks.csv", "ranks", train_rank_cols},
					    {NULL, NULL, NULL}};

const struct workload_outputs train_outputs = {NULL, NULL, train_csvs};
