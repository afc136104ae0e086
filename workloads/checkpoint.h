/* Checkpoints inside a training run ([workload] type = train with [checkpoint]
 * checkpoint_every_epochs): the training workload calls these (checkpoint_train.c); the
 * checkpoint module (checkpoint_store.c) does the work, as for type = checkpoint. Blocking:
 * training waits until each checkpoint is durable; async: it waits for the copy to a staging
 * buffer (and for the previous checkpoint) while a writer thread writes. The time shows in the step
 * and epoch wall times and summary.json says how many training steps it cost.
 */
#ifndef FEEDBENCH_CHECKPOINT_H
#define FEEDBENCH_CHECKPOINT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

struct config;
struct fb_errbuf;
struct run;

bool checkpoint_in_training(const struct config *cfg);
/* The [checkpoint] keys' checks (no I/O), for the training workload's check hook. */
int checkpoint_check(const struct config *cfg, int nranks, struct fb_errbuf *err);
int checkpoint_train_check(const struct config *cfg, int nranks, struct fb_errbuf *err);
/* Collective, once before training: folder, plan, buffers (async: the staging buffer). */
int checkpoint_train_prepare(struct run *run);
/* checkpoint_every_steps: is a checkpoint due after the 1-based global step (counted over the
 * steps every rank has, all epochs)? The same answer on every rank. */
bool checkpoint_train_due_step(const struct run *run, uint64_t global_step);
/* Collective, at a due step (every rank, whatever its rc): agrees that every rank is healthy,
 * then saves. Returns the agreed code; *blocked_s: the time training stood still here.
 * mean_step_s: this rank's mean step time so far (steps lost). */
int checkpoint_train_step(struct run *run, int rc, double mean_step_s, double *blocked_s);
/* A rank that leaves an epoch's step loop on a failure (rc < 0) without having agreed it at a
 * due step: makes the agreement of the next due step in (global_next, global_end], where the
 * others wait, so no rank is left in it. global_next: steps done; global_end: the last step
 * every rank has. Returns rc. */
int checkpoint_train_catchup(struct run *run, int rc, uint64_t global_next, uint64_t global_end);
/* Collective, after every epoch (all ranks agreed it succeeded): saves a checkpoint when one
 * is due. epoch_s and steps: the epoch's wall time and steps on this rank (steps lost);
 * *blocked_s: the time training stood still. */
int checkpoint_train_epoch(struct run *run, int epoch, double epoch_s, uint64_t steps,
			   double *blocked_s);
/* Collective, once after the last epoch, every rank whatever its rc: async: waits for the
 * checkpoint in flight, agrees on its write, makes it durable. Returns rc or the failure. */
int checkpoint_train_end(struct run *run, int rc);
/* Rank 0: adds metric.checkpoint_* and "checkpoint" to a training summary.json. */
void checkpoint_train_json(struct run *run, json_t *summary);
void checkpoint_train_finish(struct run *run);

#endif
