/* What the checkpoint workload's table.md and report.md show (bench/outputs.h), and the
 * projection of the measured checkpoint to the configured full model that they show with it
 * (docs/checkpoint.md, "Report and projection").
 */
#include "checkpoint_outputs.h"

#include <stdbool.h>

#include <math.h>

#include "../bench/outputs.h"
#include "../bench/run.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
/* A scaled checkpoint stands for the full one when each writing rank writes at least this. */
#define CKPT_MIN_BYTES_PER_WRITER GIB

static void ckpt_set_real(json_t *o, const char *key, double v)
{
	if (isfinite(v))
		json_object_set_new(o, key, json_real(v));
}

static double ckpt_num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

void checkpoint_project(struct run *run, json_t *summary, uint64_t full_bytes)
{
	const struct config *cfg = &run->cfg;
	json_t *m = json_object_get(summary, "metric"),
	       *plan = json_object_get(summary, "checkpoint");
	json_t *p = json_object();
	double size = ckpt_num(plan, "total_bytes"),
	       writers = ckpt_num(m, "checkpoint_writing_ranks");
	double durable = ckpt_num(m, "checkpoint_time_to_durable_seconds");
	double rbw = ckpt_num(m, "checkpoint_read_bandwidth_MiB_per_second") * 1024 * 1024;
	double per_writer = writers > 0 ? size / writers : NAN, n = NAN;
	double steps = (double)cfg->checkpoint.every_steps, step_s = cfg->train.computation_time;
	bool scaled = cfg->checkpoint.scale < 1;
	bool stands = !scaled || per_writer >= CKPT_MIN_BYTES_PER_WRITER;

	if (!json_is_object(plan))
		return;
	json_object_set_new(p, "full_size_bytes", json_integer((json_int_t)full_bytes));
	json_object_set_new(p, "scaled", json_boolean(scaled));
	ckpt_set_real(p, "bytes_per_writing_rank", per_writer);
	json_object_set_new(p, "min_bytes_per_writing_rank",
			    json_integer((json_int_t)CKPT_MIN_BYTES_PER_WRITER));
	json_object_set_new(p, "representative", json_boolean(stands));
	if (durable > 0 && size > 0) { /* only a run that wrote has a time to durable */
		n = (double)full_bytes / (size / durable);
		ckpt_set_real(p, "durable_bytes_per_second", size / durable);
		ckpt_set_real(p, "seconds_to_durable", n);
	}
	if (rbw > 0)
		ckpt_set_real(p, "restore_seconds", (double)full_bytes / rbw);
	if (isfinite(n) && steps > 0 && step_s > 0) {
		json_object_set_new(p, "every_steps", json_integer((json_int_t)steps));
		ckpt_set_real(p, "step_seconds", step_s);
		ckpt_set_real(p, "training_time_percentage", 100 * n / (steps * step_s + n));
	}
	json_object_set_new(plan, "projection", p);
	if (!stands)
		run_warn(
		    run,
		    "the scaled checkpoint is too small to stand for the full one: %.0f bytes "
		    "per writing rank (scale %g), below 1 GiB; per-file costs (create, fsync, "
		    ".metadata, folder fsyncs) and caches weigh more than at full size, so the "
		    "projection to %llu bytes is a rough guide (docs/checkpoint.md)",
		    per_writer, cfg->checkpoint.scale, (unsigned long long)full_bytes);
}

/* ---- the description -------------------------------------------------------------------- */

#define CKPT_SIZE                                                                                  \
	"{checkpoint.total_bytes/1073741824:%.3f} GiB ({checkpoint.total_bytes} bytes; model "     \
	"{checkpoint.model_bytes}, optimizer {checkpoint.optimizer_bytes}, gradients "             \
	"{checkpoint.gradient_bytes})"
#define CKPT_PARALLEL                                                                              \
	"tensor {checkpoint.tensor_parallelism} x pipeline {checkpoint.pipeline_parallelism} x "   \
	"data {checkpoint.data_parallelism}, zero_stage {checkpoint.zero_stage}, "                 \
	"{metric.checkpoint_writing_ranks} writing ranks"
#define CKPT_WRITE_BW                                                                              \
	"{metric.checkpoint_write_bandwidth_MiB_per_second:%.1f} MiB/s "                           \
	"({metric.checkpoint_write_bandwidth_MiB_per_second/1024:%.3f} GiB/s), slowest rank"
#define CKPT_READ_BW                                                                               \
	"{metric.checkpoint_read_bandwidth_MiB_per_second:%.1f} MiB/s "                            \
	"({metric.checkpoint_read_bandwidth_MiB_per_second/1024:%.3f} GiB/s), slowest rank, "      \
	"{checkpoint.restore_cache}"                                                               \
	"{metric.checkpoint_restore_verified?, verified byte for byte|, not verified}"
#define CKPT_NAMESPACE                                                                             \
	"{metric.checkpoint_namespace_ops} calls (stat, mkdir, unlink, list, rmdir, rename) in "   \
	"{metric.checkpoint_namespace_seconds:%.4f} s; {metric.checkpoint_folder_fsync_calls} "    \
	"folder fsyncs in {metric.checkpoint_folder_fsync_seconds:%.4f} s"
#define CKPT_SKEW(w)                                                                               \
	"slowest {mean(checkpoints." w "_seconds_per_rank.max):%.4f} s, mean "                     \
	"{mean(checkpoints." w "_seconds_per_rank.mean):%.4f} s, fastest "                         \
	"{mean(checkpoints." w "_seconds_per_rank.min):%.4f} s (every rank, those without bytes "  \
	"included; mean over checkpoints)"
#define CKPT_PROJECTION                                                                            \
	"{checkpoint.projection.full_size_bytes/1073741824:%.4g} GiB at this rate: "               \
	"{checkpoint.projection.seconds_to_durable:%.4g} s to durable"

#define CKPT_PHASES_ROWS                                                                           \
	{"MLPerf phases",                                                                          \
	 "{checkpoint.phases.invocation}: {checkpoint.phases.num_checkpoints_write} written, "     \
	 "{checkpoint.phases.num_checkpoints_read} read; {checkpoint.phases.hosts} host(s), "      \
	 "{checkpoint.phases.ranks_per_host} ranks each; read on another host: "                   \
	 "{checkpoint.phases.read_on_other_host?yes|no}",                                          \
	 "checkpoint.phases"},                                                                     \
	    {"write (MLPerf)",                                                                     \
	     "{metric.checkpoint_write_duration_seconds:%.4f} s, "                                 \
	     "{metric.checkpoint_write_throughput_GiB_per_second:%.3f} GiB/s (longest rank; mean " \
	     "over checkpoints)",                                                                  \
	     NULL},                                                                                \
	    {"read (MLPerf)",                                                                      \
	     "{metric.checkpoint_read_duration_seconds:%.4f} s, "                                  \
	     "{metric.checkpoint_read_throughput_GiB_per_second:%.3f} GiB/s (longest rank; mean "  \
	     "over checkpoints)",                                                                  \
	     NULL},                                                                                \
	    {"recovery",                                                                           \
	     "{metric.checkpoint_recovery_seconds:%.4f} s, "                                       \
	     "{metric.checkpoint_recovery_throughput_GiB_per_second:%.3f} GiB/s (the read and "    \
	     "{checkpoint.phases.visible_after_seconds:%.6f} s until another host could read it)", \
	     NULL},                                                                                \
	{                                                                                          \
		"flush before the reads",                                                          \
		    "{checkpoint.phases.flush.nodes.0.outcome} on "                                \
		    "{checkpoint.phases.flush.nodes.0.host}, "                                     \
		    "{checkpoint.phases.flush.required?required|not required} by the rule (a "     \
		    "host's "                                                                      \
		    "share below 3 x its RAM); every host's in summary.json",                      \
		    "checkpoint.phases.flush"                                                      \
	}

static const struct out_col ckpt_fact_cols[] = {
    {"metric", NULL, true}, {"value", NULL, true}, {NULL, NULL, false}};

static const struct out_fact ckpt_table_facts[] = {
    {"checkpoint size", CKPT_SIZE, NULL},
    {"parallelism", CKPT_PARALLEL, NULL},
    {"files per checkpoint", "{metric.checkpoint_files} (.metadata included)", NULL},
    {"write", CKPT_WRITE_BW, NULL},
    {"write min, max",
     "{metric.checkpoint_write_bandwidth_min_MiB_per_second:%.1f}, "
     "{metric.checkpoint_write_bandwidth_max_MiB_per_second:%.1f} MiB/s over "
     "{metric.checkpoint_count} checkpoints",
     NULL},
    {"time to durable", "{metric.checkpoint_time_to_durable_seconds:%.4f} s", NULL},
    {"restore (read)", CKPT_READ_BW, NULL},
    CKPT_PHASES_ROWS,
    {"namespace (rank 0)", CKPT_NAMESPACE, NULL},
    {"per-rank write time", CKPT_SKEW("write"), NULL},
    {"projection", CKPT_PROJECTION, "checkpoint.projection.scaled"},
    {"stripe", "{storage.stripe_effective}", NULL},
    {"stripe", "see summary.json storage.stripe_*", "storage.stripe_effective.count"},
    {NULL, NULL, NULL}};

static const struct out_block ckpt_table[] = {
    {.text = "# {workload}: checkpoint ({config.checkpoint.layout} layout, {storage.backend} "
	     "back-end, {num_ranks} ranks)\n\n",
     .facts = ckpt_table_facts,
     .cols = ckpt_fact_cols},
    {.text = "\nfolder: {checkpoint.folder}\n"},
    {0}};

static const struct out_fact ckpt_plan_facts[] = {
    {"size", CKPT_SIZE, NULL},
    {"scale",
     "{checkpoint.scale:%g} of the configured {checkpoint.projection.full_size_bytes} bytes",
     "checkpoint.projection.scaled"},
    {"ranks and parallelism", "{num_ranks} ranks: " CKPT_PARALLEL, NULL},
    {"bytes per rank",
     "{checkpoint.bytes_per_rank.0} on rank 0, "
     "{max(checkpoint.bytes_per_rank)} on the largest",
     NULL},
    {"layout",
     "{config.checkpoint.layout}, {metric.checkpoint_files} files per checkpoint "
     "(.metadata included), {config.checkpoint.transfer_size}-byte transfers",
     NULL},
    {"folder", "`{checkpoint.folder}`", NULL},
    {NULL, NULL, NULL}};

static const struct out_col ckpt_stat_cols[] = {{"metric", NULL, true}, {"mean", NULL, false},
						{"min", NULL, false},	{"max", NULL, false},
						{"unit", NULL, true},	{NULL, NULL, false}};

static const struct out_fact ckpt_stats[] = {
    {"write",
     "{metric.checkpoint_write_bandwidth_MiB_per_second/1024:%.3f} | "
     "{metric.checkpoint_write_bandwidth_min_MiB_per_second/1024:%.3f} | "
     "{metric.checkpoint_write_bandwidth_max_MiB_per_second/1024:%.3f} | GiB/s",
     NULL},
    {"time to durable",
     "{mean(checkpoints.time_to_durable_seconds):%.4f} | "
     "{min(checkpoints.time_to_durable_seconds):%.4f} | "
     "{max(checkpoints.time_to_durable_seconds):%.4f} | s",
     NULL},
    {"restore (read)",
     "{metric.checkpoint_read_bandwidth_MiB_per_second/1024:%.3f} | "
     "{metric.checkpoint_read_bandwidth_min_MiB_per_second/1024:%.3f} | "
     "{metric.checkpoint_read_bandwidth_max_MiB_per_second/1024:%.3f} | GiB/s",
     NULL},
    {"slowest rank's write",
     "{mean(checkpoints.write_seconds_per_rank.max):%.4f} | "
     "{min(checkpoints.write_seconds_per_rank.max):%.4f} | "
     "{max(checkpoints.write_seconds_per_rank.max):%.4f} | s",
     NULL},
    {"fastest rank's write",
     "{mean(checkpoints.write_seconds_per_rank.min):%.4f} | "
     "{min(checkpoints.write_seconds_per_rank.min):%.4f} | "
     "{max(checkpoints.write_seconds_per_rank.min):%.4f} | s",
     NULL},
    {"slowest rank's read",
     "{mean(checkpoints.read_seconds_per_rank.max):%.4f} | "
     "{min(checkpoints.read_seconds_per_rank.max):%.4f} | "
     "{max(checkpoints.read_seconds_per_rank.max):%.4f} | s",
     NULL},
    {NULL, NULL, NULL}};

static const struct out_fact ckpt_more[] = {
    CKPT_PHASES_ROWS,
    {"per-rank write time", CKPT_SKEW("write"), NULL},
    {"per-rank read time", CKPT_SKEW("read"), NULL},
    {"write calls",
     "{metric.checkpoint_write_latency_seconds.calls}, p50 "
     "{metric.checkpoint_write_latency_seconds.p50*1e6:%.1f} µs, p99 "
     "{metric.checkpoint_write_latency_seconds.p99*1e6:%.1f} µs",
     NULL},
    {"read calls",
     "{metric.checkpoint_read_latency_seconds.calls}, p50 "
     "{metric.checkpoint_read_latency_seconds.p50*1e6:%.1f} µs, p99 "
     "{metric.checkpoint_read_latency_seconds.p99*1e6:%.1f} µs",
     NULL},
    {"file fsyncs",
     "{metric.checkpoint_fsync_calls} in {metric.checkpoint_fsync_seconds:%.4f} s "
     "(summed over ranks)",
     NULL},
    {"namespace (rank 0)", CKPT_NAMESPACE, NULL},
    {"old checkpoints deleted in", "{metric.checkpoint_delete_seconds:%.4f} s",
     "config.checkpoint.keep_last"},
    {NULL, NULL, NULL}};

static const struct out_block ckpt_report[] = {
    {.text = "Checkpoint of {checkpoint.total_bytes/1073741824:%.3f} GiB written by "
	     "{metric.checkpoint_writing_ranks} of {num_ranks} ranks, "
	     "{metric.checkpoint_count} checkpoint{metric.checkpoint_count=1?|s}. ",
     .files = true},
    {.text = "## What ran\n\n", .facts = outputs_what_ran},
    {.text = "\n## Checkpoint\n\n", .facts = ckpt_plan_facts},
    {.text = "\n## Results\n\nOver {metric.checkpoint_count} checkpoint"
	     "{metric.checkpoint_count=1?|s}: mean, min and max. Bandwidth is the bytes of all "
	     "ranks over the slowest rank's time from the common start barrier (IOR-style); "
	     "time to durable ends when `.metadata` and the folders are fsynced; GiB = 2^30 "
	     "bytes.\n\n",
     .facts = ckpt_stats,
     .cols = ckpt_stat_cols},
    {.text = "\n", .facts = ckpt_more},
    {.text = "\n## Projection to the full model\n\n" CKPT_PROJECTION,
     .when = "checkpoint.projection.seconds_to_durable"},
    {.text = "; with a checkpoint every {checkpoint.projection.every_steps} steps of "
	     "{checkpoint.projection.step_seconds:%g} s, "
	     "{checkpoint.projection.training_time_percentage:%.1f} % of training time "
	     "(blocking: training waits until the checkpoint is durable)",
     .when = "checkpoint.projection.training_time_percentage"},
    {.text = ". Restoring it: {checkpoint.projection.restore_seconds:%.4g} s",
     .when = "checkpoint.projection.restore_seconds"},
    {.text = ".\n\n", .when = "checkpoint.projection.seconds_to_durable"},
    {.text = "Set [checkpoint] checkpoint_every_steps and [train] computation_time (the step "
	     "time) to see the share of training time this checkpoint takes.\n\n",
     .when = "checkpoint.projection.seconds_to_durable",
     .unless = "checkpoint.projection.training_time_percentage"},
    {.text = "**Warning**: the scaled checkpoint is too small to stand for the full one: "
	     "{checkpoint.projection.bytes_per_writing_rank:%.0f} bytes per writing rank, below "
	     "the {checkpoint.projection.min_bytes_per_writing_rank} bytes (1 GiB) the rule of "
	     "docs/checkpoint.md asks; the projection is a rough guide.\n\n",
     .when = "checkpoint.projection",
     .unless = "checkpoint.projection.representative"},
    {0}};

const struct workload_outputs checkpoint_outputs = {ckpt_table, ckpt_report, NULL};
