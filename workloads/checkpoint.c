/* The checkpoint workload (`[workload] type = checkpoint`): every rank writes its part of a
 * model checkpoint the way PyTorch Distributed Checkpoint lays it out, makes it durable, and
 * reads it back after evicting it from the page cache, verified byte for byte.
 *
 * Sizing follows DLIO / MLPerf Storage (docs/checkpoint.md): model weights, optimizer state and
 * gradients, in bytes per parameter, split over tensor x pipeline ranks; data-parallel replicas
 * write nothing unless ZeRO-style sharding (zero_stage) gives each a shard.
 *
 * Layouts:
 *   dcp     <folder>/step-<N>/__<rank>_0.distcp, one per writing rank, then .metadata
 *   single  <folder>/step-<N>/checkpoint.bin, each rank its range (MPI-IO with backend =
 *           mpiio, pwrite at offsets otherwise), then .metadata
 * `.metadata` is written by rank 0 only after every rank agreed that its bytes are durable
 * (written, fsync'ed, closed), under a temporary name, fsync'ed, renamed, and the step folder
 * and its parent fsync'ed: a checkpoint without .metadata is incomplete, whatever happened to
 * the job. "Time to durable" ends there.
 *
 * Content: a seeded pattern of transfer_size bytes per (seed, step, rank); each transfer starts
 * with a 32-byte header (magic, step, rank, file offset), so a misplaced or stale block is found
 * as surely as a flipped byte, and the data costs nothing to produce while writing.
 */
#include "checkpoint_store.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "../bench/agree.h"
#include "../bench/results.h"
#include "../bench/rng.h"
#include "../bench/run.h"
#include "../bench/safefile.h"
#include "../bench/timer.h"
#include "../bench/storage/fs.h"
#include "checkpoint_outputs.h"
#include "evict.h"
#include "workload.h"

static int ckpt_prepare(struct run *run, struct results_ctx *ctx)
{
	int rc;

	(void)ctx;
	if ((rc = ckpt_setup(run)) < 0)
		return rc;
	if (ckpt_phased(&run->cfg) && (rc = ckpt_phases_prepare(run)) < 0)
		return rc;
	/* The requested layout: recorded, applied to the data folder where files inherit it,
	 * to each file at creation otherwise (bench/storage/stripe.c). */
	return agree(run, stripe_prepare(run));
}

static int ckpt_rep(struct run *run, int repetition, void **out)
{
	const struct config *cfg = &run->cfg;
	struct ckpt_state *st = ckpt_of(run);
	struct ckpt_rep *rep = calloc(1, sizeof(*rep));
	int rc = 0;

	int64_t n = cfg->checkpoint.count;

	if (ckpt_phased(cfg))
		n = cfg->checkpoint.num_write > cfg->checkpoint.num_read ? cfg->checkpoint.num_write
									 : cfg->checkpoint.num_read;
	if (rep)
		rep->c = calloc((size_t)n, sizeof(*rep->c));
	if (!rep || !rep->c) {
		free(rep);
		return agree(run, run_fail(run, -ENOMEM, "out of memory"));
	}
	*out = rep;
	if (ckpt_phased(cfg))
		return ckpt_phases_run(run, repetition, rep);
	for (int64_t k = 0; k < cfg->checkpoint.count && rc == 0; k++) {
		struct ckpt_one *c = &rep->c[rep->n++];

		c->step = (int64_t)repetition * cfg->checkpoint.count + k + 1;
		c->wrote = cfg->checkpoint.save;
		c->read = cfg->checkpoint.restore || !cfg->checkpoint.save;
		if (!cfg->checkpoint.save) {
			if ((rc = agree(run, ckpt_check_existing(run, st, c->step))) < 0 ||
			    (rc = ckpt_restore(run, st, c)) < 0)
				break;
			continue;
		}
		rc = ckpt_save_step(run, st, c, cfg->checkpoint.restore);
	}
	return rc;
}

static void ckpt_free_rep(void *rep)
{
	struct ckpt_rep *r = rep;

	if (r)
		free(r->c);
	free(r);
}

/* The phases' keys first (their refusals name them), then the checkpoint's. */
static int ckpt_check(const struct config *cfg, int nranks, struct fb_errbuf *err)
{
	int rc = ckpt_phases_check(cfg, nranks, err);

	return rc < 0 ? rc : checkpoint_check(cfg, nranks, err);
}

static void ckpt_finish_all(struct run *run, int rc)
{
	if (ckpt_of(run))
		ckpt_phases_free(ckpt_of(run));
	ckpt_finish(run, rc);
}

const struct workload_ops checkpoint_workload = {
    .version = WORKLOAD_OPS_VERSION,
    .name = "checkpoint",
    .help = "model checkpoints (DCP or one shared file): write to durable, restore, verify; "
	    "MiB/s, time to durable, per-rank skew",
    .caps = 0,
    .check = ckpt_check,
    .prepare = ckpt_prepare,
    .run = ckpt_rep,
    .write = checkpoint_results_write,
    .free_rep = ckpt_free_rep,
    .finish = ckpt_finish_all,
    .outputs = &checkpoint_outputs,
    .plan = ckpt_dry_plan,
};
