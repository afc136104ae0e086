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

	if (rep)
		rep->c = calloc((size_t)cfg->checkpoint.count, sizeof(*rep->c));
	if (!rep || !rep->c) {
		free(rep);
		return agree(run, run_fail(run, -ENOMEM, "out of memory"));
	}
	*out = rep;
	for (int64_t k = 0; k < cfg->checkpoint.count && rc == 0; k++) {
		struct ckpt_one *c = &rep->c[rep->n++];

		c->step = (int64_t)repetition * cfg->checkpoint.count + k + 1;
		if (!cfg->checkpoint.save) {
			if ((rc = agree(run, ckpt_check_existing(run, st, c->step))) < 0 ||
			    (rc = ckpt_restore(run, st, c)) < 0)
				break;
			continue;
		}
		if ((rc = ckpt_save(run, st, c)) < 0)
			break;
		if ((rc = agree(run, ckpt_stripe_readback(run, st, c->step))) < 0)
			break;
		if (cfg->checkpoint.restore && (rc = ckpt_restore(run, st, c)) < 0)
			break;
		rc = ckpt_prune(run, st, c);
		if (rc == 0 && run->stop && *run->stop)
			rc = run_fail(run, -FB_EINTR, "interrupted by a signal");
		rc = agree(run, rc);
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

const struct workload_ops checkpoint_workload = {
    .version = WORKLOAD_OPS_VERSION,
    .name = "checkpoint",
    .help = "model checkpoints (DCP or one shared file): write to durable, restore, verify; "
	    "MiB/s, time to durable, per-rank skew",
    .caps = 0,
    .check = checkpoint_check,
    .prepare = ckpt_prepare,
    .run = ckpt_rep,
    .write = checkpoint_results_write,
    .free_rep = ckpt_free_rep,
    .finish = ckpt_finish,
    .outputs = &checkpoint_outputs,
};
