/* Checkpoints inside a training run ([workload] type = train with [checkpoint]
 * checkpoint_every_epochs): the training workload calls these; the checkpoint module
 * (workloads/checkpoint.c) does the work, as for type = checkpoint. Blocking: training waits
 * until each checkpoint is durable; the time shows in the epochs' wall time and summary.json
 * says how many training steps it cost.
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
/* Collective, once before training: folder, plan, buffers. */
int checkpoint_train_prepare(struct run *run);
/* Collective, after every epoch (all ranks agreed it succeeded): saves a checkpoint when one
 * is due. epoch_s and steps: the epoch's wall time and steps on this rank (steps lost). */
int checkpoint_train_epoch(struct run *run, int epoch, double epoch_s, uint64_t steps);
/* Rank 0: adds metric.checkpoint_* and "checkpoint" to a training summary.json. */
void checkpoint_train_json(struct run *run, json_t *summary);
void checkpoint_train_finish(struct run *run);

#endif
