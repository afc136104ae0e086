/* The checkpoint workload's outputs (workloads/checkpoint_outputs.c): its table.md and
 * report.md as data (bench/outputs.h), and the projection to the configured full model.
 */
#ifndef FEEDBENCH_CHECKPOINT_OUTPUTS_H
#define FEEDBENCH_CHECKPOINT_OUTPUTS_H

#include <stdint.h>

#include <jansson.h>

struct run;

extern const struct workload_outputs checkpoint_outputs;

/* Rank 0, after summary.json's metric and "checkpoint" (the plan) are in place: adds
 * checkpoint.projection (full_size_bytes, the time to durable and to restore at the measured
 * rates, the share of training time with checkpoint_every_steps and computation_time, and
 * whether the scaled checkpoint stands for the full one) and warns when it does not. */
void checkpoint_project(struct run *run, json_t *summary, uint64_t full_bytes);

#endif
