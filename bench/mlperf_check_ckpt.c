/* The checkpointing rules of `feedbench mlperf check` (docs/mlperf.md): one invocation that
 * writes and reads, or a write invocation then a read invocation, read from the members
 * docs/checkpoint.md documents (summary.json checkpoint.phases, checkpoint.subset). */
#include "mlperf.h"
#include "mlperf_check.h"

#include <math.h>
#include <string.h>

#define CKPT_COUNT   10 /* writes and reads of a CLOSED submission */
#define CKPT_GAP_MAX 30 /* s from the write invocation's end to the read invocation's start */
#define CKPT_MIN_PPN 4	/* simulated accelerators per host, at the least */

static double phase(json_t *s, const char *k)
{
	return mck_num(s, "checkpoint", "phases", k);
}

/* 2.1.23 checkpointingTimestamps (and 4.7.1's structure): one invocation writing and reading,
 * or two, the writes then the reads; 10 of each in CLOSED (Table 3). */
static void rule_invocations(struct mck *c)
{
	const char *r = "2.1.23 checkpointingTimestamps";
	const char *a = mck_str(c->runs[0].s, "checkpoint", "phases", "invocation");
	const char *b = c->n > 1 ? mck_str(c->runs[1].s, "checkpoint", "phases", "invocation") : "";
	double w = phase(c->runs[0].s, "num_checkpoints_write");
	double rd = phase(c->runs[c->n - 1].s, "num_checkpoints_read");

	if (!a[0]) {
		mck_finding(c, MCK_INVALID, r,
			    "%s has no checkpoint.phases: not run with num_checkpoints_write and "
			    "_read (docs/checkpoint.md)",
			    mck_base(c->runs[0].dir));
		return;
	}
	if (!(c->n == 1 && strcmp(a, "both") == 0) &&
	    !(c->n == 2 && strcmp(a, "write") == 0 && strcmp(b, "read") == 0)) {
		mck_finding(
		    c, MCK_INVALID, r,
		    "%d invocation%s (%s%s%s): a submission is one that writes and reads, or "
		    "a write invocation then a read invocation",
		    c->n, c->n == 1 ? "" : "s", a, b[0] ? ", " : "", b);
		return;
	}
	mck_finding(c, MCK_PASS, r, "%s",
		    c->n == 1 ? "one invocation, writes then reads"
			      : "a write invocation, then a read invocation");
	if (w != CKPT_COUNT || rd != CKPT_COUNT)
		mck_finding(c, MCK_OPEN, "4.6.3 checkpointClosedCheckpointParameters",
			    "%.0f writes and %.0f reads: CLOSED is 10 and 10", w, rd);
	else
		mck_finding(c, MCK_PASS, "4.6.3 checkpointClosedCheckpointParameters",
			    "10 writes and 10 reads");
}

/* 4.3.2 checkpointFsyncVerification. */
static void rule_fsync(struct mck *c)
{
	for (int i = 0; i < c->n; i++)
		if (!json_is_true(json_object_get(
			json_object_get(json_object_get(c->runs[i].s, "checkpoint"), "phases"),
			"fsync"))) {
			mck_finding(c, MCK_INVALID, "4.3.2 checkpointFsyncVerification",
				    "%s does not record an fsync of every checkpoint",
				    mck_base(c->runs[i].dir));
			return;
		}
	mck_finding(c, MCK_PASS, "4.3.2 checkpointFsyncVerification",
		    "every checkpoint fsynced before it counted as written");
}

/* 4.3.1 checkpointDataSizeRatio: where a host's share of a checkpoint is below 3 x its RAM,
 * its cache was flushed (dropped, or the checkpoint's files evicted) before the reads. */
static void rule_flush(struct mck *c)
{
	const char *r = "4.3.1 checkpointDataSizeRatio";
	json_t *s = c->runs[c->n - 1].s;
	json_t *fl = json_object_get(json_object_get(json_object_get(s, "checkpoint"), "phases"),
				     "flush"),
	       *nodes = json_object_get(fl, "nodes");

	if (!json_is_array(nodes)) {
		mck_finding(c, MCK_INVALID, r, "%s records no flush before its reads",
			    mck_base(c->runs[c->n - 1].dir));
		return;
	}
	for (size_t i = 0; i < json_array_size(nodes); i++) {
		json_t *n = json_array_get(nodes, i);
		const char *out = mck_str(n, "outcome", NULL, NULL);
		bool flushed = strcmp(out, "dropped") == 0 || strcmp(out, "evicted") == 0 ||
			       mck_num(n, "files_evicted", NULL, NULL) > 0;

		if (json_is_true(json_object_get(n, "required")) && !flushed) {
			mck_finding(
			    c, MCK_INVALID, r,
			    "host %s holds %.2f x its RAM of a checkpoint (under 3) and its "
			    "cache was not flushed: %s (%s)",
			    mck_str(n, "host", NULL, NULL),
			    mck_num(n, "share_over_memory", NULL, NULL), out,
			    mck_str(n, "reason", NULL, NULL));
			return;
		}
	}
	mck_finding(c, MCK_PASS, r,
		    "every host whose share is under 3 x its RAM was flushed "
		    "before the reads");
	/* A page cache drop that was not permitted or failed: the files were evicted instead,
	 * which the rule accepts; said, with the reason. */
	for (size_t i = 0; i < json_array_size(nodes); i++) {
		json_t *n = json_array_get(nodes, i);
		const char *out = mck_str(n, "outcome", NULL, NULL);

		if (strcmp(out, "not permitted") == 0 || strcmp(out, "failed") == 0)
			mck_finding(c, MCK_NOTE, r, "host %s: the page cache drop %s: %s",
				    mck_str(n, "host", NULL, NULL),
				    out[0] == 'f' ? "failed" : "was not permitted",
				    mck_str(n, "reason", NULL, NULL));
	}
}

/* 4.7.1 checkpointCacheFlushValidation: the read invocation started within 30 s of the write
 * invocation's end (two invocations only). */
static void rule_gap(struct mck *c)
{
	const char *r = "4.7.1 checkpointCacheFlushValidation";
	double end, start, gap;

	if (c->n != 2) {
		mck_finding(c, MCK_PASS, r, "one combined invocation: no gap to check");
		return;
	}
	end = mck_iso_seconds(mck_str(c->runs[0].s, "end", NULL, NULL));
	start = mck_iso_seconds(mck_str(c->runs[1].s, "start", NULL, NULL));
	gap = start - end;
	if (!isfinite(gap))
		mck_finding(c, MCK_INVALID, r, "no readable end of %s or start of %s",
			    mck_base(c->runs[0].dir), mck_base(c->runs[1].dir));
	else if (gap < 0)
		mck_finding(c, MCK_NOTE, r,
			    "the read invocation started %.0f s before the write invocation "
			    "ended: the hosts' clocks disagree",
			    -gap);
	else if (gap > CKPT_GAP_MAX)
		mck_finding(c, MCK_INVALID, r,
			    "the read invocation started %.0f s after the write invocation ended "
			    "(at most %d s)",
			    gap, CKPT_GAP_MAX);
	else
		mck_finding(c, MCK_PASS, r,
			    "the read invocation started %.0f s after the writes "
			    "ended",
			    gap);
}

/* 4.3.3 checkpointModelConfigurationReq (one of the four models, full size), 4.6.1
 * checkpointClosedMpiProcesses (8, 64, 512, 1024 processes) and 4.3.5
 * checkpointSubsetRunValidation (a subset: the 8B model on 8 processes). */
static void rule_model(struct mck *c)
{
	json_t *s = c->runs[0].s;
	double params = mck_num(s, "config", "checkpoint", "num_parameters");
	double scale = mck_num(s, "checkpoint", "scale", NULL);
	double ranks = mck_num(s, "num_ranks", NULL, NULL);
	json_t *subset = json_object_get(json_object_get(s, "checkpoint"), "subset");
	const struct mlperf_ckpt_model *m = mlperf_ckpt_model_of(params);

	if (!m || !(scale == 1)) {
		mck_finding(c, MCK_INVALID, "4.3.3 checkpointModelConfigurationReq",
			    !m ? "%.0f parameters: not one of Llama 3 8B, 70B, 405B, 1T"
			       : "%.0f parameters written at scale %g: not the model's size",
			    params, scale);
		return;
	}
	mck_finding(c, MCK_PASS, "4.3.3 checkpointModelConfigurationReq", "%s at full size",
		    m->name);
	if (subset && (m != &mlperf_ckpt_models[0] || ranks != 8))
		mck_finding(c, MCK_INVALID, "4.3.5 checkpointSubsetRunValidation",
			    "a subset run of %s on %.0f processes: only llama3-8b on 8", m->name,
			    ranks);
	else if (!subset && ranks != m->processes)
		mck_finding(c, MCK_INVALID, "4.6.1 checkpointClosedMpiProcesses",
			    "%s on %.0f processes: CLOSED runs it on %d", m->name, ranks,
			    m->processes);
	else
		mck_finding(c, MCK_PASS,
			    subset ? "4.3.5 checkpointSubsetRunValidation"
				   : "4.6.1 checkpointClosedMpiProcesses",
			    "%s on %.0f processes", m->name, ranks);
}

/* 4.6.2 checkpointClosedAcceleratorsPerHost: at least 4 per host (Table 3's "minimal 4"). */
static void rule_per_host(struct mck *c)
{
	for (int i = 0; i < c->n; i++) {
		double ppn = phase(c->runs[i].s, "ranks_per_host");

		if (!(ppn >= CKPT_MIN_PPN)) {
			mck_finding(c, MCK_INVALID, "4.6.2 checkpointClosedAcceleratorsPerHost",
				    "%s: %.0f processes on a host, at least %d",
				    mck_base(c->runs[i].dir), ppn, CKPT_MIN_PPN);
			return;
		}
	}
	mck_finding(c, MCK_PASS, "4.6.2 checkpointClosedAcceleratorsPerHost",
		    "at least %d processes on every host", CKPT_MIN_PPN);
}

/* A read of a shard written on the reader's own host (checkpoint.phases.reads[]: the writer
 * the headers read name, and its host), or NULL when none is. */
static json_t *same_host_read(json_t *phases)
{
	json_t *reads = json_object_get(phases, "reads"), *e;
	size_t i;

	json_array_foreach(reads, i, e)
	{
		const char *wh = mck_str(e, "shard_host", NULL, NULL);
		if (json_is_integer(json_object_get(e, "shard_rank")) && wh[0] &&
		    strcmp(wh, mck_str(e, "host", NULL, NULL)) == 0)
			return e;
	}
	return NULL;
}

/* feedbench: the reads ran on other hosts than the writes (the failure 4.7 models), with the
 * time until another host could read counted (4.7.2, 4.7.3). */
static void rule_other_host(struct mck *c)
{
	json_t *s = c->runs[c->n - 1].s;
	json_t *ph = json_object_get(json_object_get(s, "checkpoint"), "phases");
	json_t *same = same_host_read(ph);
	double vis = phase(s, "visible_after_seconds");

	if (same)
		mck_finding(c, MCK_NOTE, "4.7.1 checkpointCacheFlushValidation",
			    "rank %.0f on %s read the shard of rank %.0f, written on the same "
			    "host: no failover emulated",
			    mck_num(same, "rank", NULL, NULL), mck_str(same, "host", NULL, NULL),
			    mck_num(same, "shard_rank", NULL, NULL));
	else if (!json_is_true(json_object_get(ph, "read_on_other_host")))
		mck_finding(
		    c, MCK_NOTE, "4.7.1 checkpointCacheFlushValidation",
		    "the reads ran on the hosts that wrote (recovery_rank_shift off, or one "
		    "host): no failover emulated");
	else if (!isfinite(vis))
		mck_finding(c, MCK_NOTE, "4.7.2 checkpointTotalTestDuration",
			    "read on other hosts, but the time until they could read is unknown: "
			    "the recovery time leaves it out");
	else
		mck_finding(c, MCK_PASS, "4.7.2 checkpointTotalTestDuration",
			    "read on other hosts (each rank the shard its headers name, written "
			    "on another host), %.6f s until they could, counted in the recovery",
			    vis);
}

void mck_checkpointing(struct mck *c)
{
	rule_invocations(c);
	rule_fsync(c);
	if (mck_num(c->runs[c->n - 1].s, "checkpoint", "phases", "num_checkpoints_read") > 0)
		rule_flush(c);
	rule_gap(c);
	rule_model(c);
	rule_per_host(c);
	rule_other_host(c);
}
