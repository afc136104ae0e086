/* Verdicts that explain themselves: per-rank AU, where each step's lost time went, and the
 * verdict with the numbers behind it. Pure functions over totals (no MPI), so the reduction
 * rules are tested on their own (tests/unit/test_verdict.c).
 */
#ifndef FEEDBENCH_VERDICT_H
#define FEEDBENCH_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

/* Time totals of one rank over the included steps (exclude_start_steps left out), seconds. */
struct step_totals {
	double busy;	/* accelerator busy (compute plug-in's busy_ns) */
	double conf;	/* configured computation time of the same steps (DLIO's numerator) */
	double step;	/* step time: end of the previous step to the end of this one */
	double wait;	/* data wait: trainer waiting for its batch */
	double copy;	/* host-to-device copy */
	double barrier; /* step barrier (and the agreement before a collective read) */
};

/* Lost time as fractions of step time: data_wait + copy + barrier + other = 1 - AU. */
struct lost_time {
	double data_wait, copy, barrier, other;
};

/* AU of one rank in percent: busy / step. */
double verdict_rank_au(const struct step_totals *t);
/* Where one rank's lost time went; "other" is the rest (trainer overhead, release, clock
 * reads), never below 0. */
void verdict_rank_lost(const struct step_totals *t, struct lost_time *out);

/* Run-level figures over n ranks: the mean over ranks of each rank's own AU and lost-time
 * fractions (so the headline lies within the per-rank range). Ranks without an included step
 * are left out; returns how many ranks counted. min/max: the per-rank AU range (may be NULL).
 * conf_au: mean over ranks of conf / step in percent (DLIO's AU definition; may be NULL). */
int verdict_mean(const struct step_totals *t, int n, double *au, struct lost_time *lost,
		 double *au_min, double *au_max, double *conf_au);

/* The verdict class and why. au_pct and threshold_pct in percent. Returns one of
 * "compute-bound", "storage-bound", "below threshold, not storage-bound"; why gets the numbers
 * ("AU 55.3 % < threshold 90 %: data wait 40.1 %, copy 0.0 %, barrier 3.2 %, other 1.4 % of
 * step time; data wait is the main loss"). */
const char *verdict_classify(double au_pct, double threshold_pct, const struct lost_time *l,
			     char *why, size_t len);

/* MLPerf Storage rules, checked on every training run (warnings; errors with --strict). Each
 * returns true when the rule holds, else false with the reason in why. */
#define MLPERF_DATASET_RAM_FACTOR 5  /* dataset >= 5 x the clients' RAM */
#define MLPERF_MIN_STEADY_STEPS	  20 /* included steps per rank and epoch, at the least */
/* The dataset is at least 5 x the RAM of the nodes it is read on, or the page cache is bypassed
 * (direct I/O, page_cache = evict or drop). */
bool verdict_rule_dataset(double data_bytes, double ram_per_node, int nnodes, bool bypassed,
			  char *why, size_t len);
/* Enough steps per epoch for a steady state: after the excluded warm-up steps, at least
 * MLPERF_MIN_STEADY_STEPS and at least twice the batches the reader pool prefetches. */
bool verdict_rule_steps(double min_steps, double prefetch_batches, char *why, size_t len);
/* The AU threshold is the workload's own where MLPerf Storage names one (unet3d and resnet50
 * 90 %, cosmoflow 70 %; matched by the start of [workload] name). */
bool verdict_rule_threshold(const char *workload, double threshold, char *why, size_t len);
#endif
