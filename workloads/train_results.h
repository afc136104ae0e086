/* Training's results: the per-rank figures reduced over ranks and repetitions into summary.json,
 * table.md and the CSVs (epochs, ranks, latency, timeline), written through the run folder of
 * bench/results.h. train_results.c reduces and builds the summary; train_tables.c renders
 * table.md and the CSVs from the same reduced figures. */
#ifndef FEEDBENCH_TRAIN_RESULTS_H
#define FEEDBENCH_TRAIN_RESULTS_H

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "../bench/outputs.h"
#include "../bench/results.h"
#include "../bench/run.h"
#include "../bench/nodes.h"
#include "../bench/verdict.h"
#include "workloads.h"

#define MIB 1048576.0

/* The figures of one epoch of one rank, as a vector gathered to rank 0. */
enum {
	R_WALL,
	R_COMPUTE,
	R_STEP,
	R_BARRIER,
	R_COPY,
	R_COPYB,
	R_STEPS,
	R_BYTES,
	R_OPS,
	R_OPENS,
	R_OPEN_NS,
	R_SAMPLES,
	R_RETRIES,
	R_INFLIGHT,
	R_CPU_USER,
	R_CPU_SYS,
	R_CONF,
	R_WAIT,
	R_DECODES,
	R_DECODE_NS,
	R_DECODE_CPU_NS,
	R_NF
};

/* One epoch reduced over ranks (rank 0). */
struct epoch_total {
	int rep, epoch;
	double wall, bytes, ops, samples, opens, open_s, retries;
	double inflight_max; /* most queued reads in flight on one thread of any rank */
	double decodes, decode_s, decode_cpu_s; /* samples decoded (jpeg, png); wall, CPU in it */
	double bw, iops, sps, au, barrier_s, copy_s, copy_bytes;
	double cpu_user, cpu_sys; /* CPU seconds, summed over ranks */
	double conf_au;		  /* DLIO's AU: configured compute / step time, mean over ranks */
	double dlio_sps;	  /* samples / (wall + start-up in the first epoch), DLIO's way */
	struct lost_time lost;	  /* mean over ranks of each rank's split */
	struct hist lat, wait;
	struct hist ttfb; /* time to first byte of reads, when the back-end reports it (S3) */
};

struct rank_total {
	double wall, bytes, ops, samples, compute, step, barrier;
	double conf, wait, copy; /* configured compute, data wait, H2D copy: included steps */
	double wait_p99, lat_p99;
	double peak_rss;    /* bytes: the rank's peak resident set (getrusage ru_maxrss) */
	double table_bytes; /* bytes: the rank's file tables (dataset_table_bytes) */
	double cpu_user, cpu_sys;
	double live_cpu, live_proc_cpu; /* CPU s of the rank's live thread, of its process then */
	char host[64];
	int node_leader, local_rank; /* which node (its local rank 0's world rank), rank on it */
};

struct report_data {
	struct run *run;
	struct node_total *nodes; /* per node (bench/nodes.c) */
	struct node_rank *node_of;
	int nnodes;
	struct epoch_total *ep;
	int nep;
	struct rank_total *ranks;
	struct hist lat, wait;
	struct hist ttfb; /* time to first byte of reads (S3 GETs); empty on files */
	double tot_bytes, tot_ops, tot_samples, tot_wall, tot_cpu_user, tot_cpu_sys;
	double bw, iops, sps, au_mean, au_sd, io_mean, io_sd, sps_sd;
	double au_min, au_max;	      /* per-rank AU range (ranks with included steps) */
	double dlio_au, dlio_sps;     /* DLIO-comparable: mean over epochs, as DLIO computes them */
	struct lost_time lost;	      /* run level: mean over ranks */
	double min_steps;	      /* measured steps of an epoch on the rank with the fewest */
	double min_steps_cut;	      /* the same over epochs cut short by an early stop */
	json_t *rules;		      /* MLPerf Storage rules broken: their reasons */
	struct step_totals *rep_rank; /* [repetition][rank]: step totals, for per-repetition AU */
	bool cache_resident;
	const char *verdict;
	char verdict_why[512];
	double host_mem;
	json_t *eval;  /* the evaluation passes reduced (eval_reduce), or NULL */
	json_t *accel; /* accelerators_per_rank > 1: per emulated accelerator (accel_reduce) */
};

/* CPU per GiB: CPU seconds (user + system, every thread of every rank) over GiB read; cores
 * busy per accelerator: CPU seconds over (ranks x wall time). Null when nothing was read. */
static inline double cpu_per_gib(double cpu_s, double bytes)
{
	return bytes > 0 ? cpu_s / (bytes / (MIB * 1024)) : NAN;
}

static inline json_t *json_num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static inline double pass_num(json_t *p, const char *key)
{
	return json_number_value(json_object_get(p, key));
}

/* Decoding on the reader threads (jpeg, png), over some epochs: samples decoded, seconds in
 * the decoder, seconds per sample, the decoder's share of the readers' time (decode over
 * decode + read calls + opens), and the step time lost to it: the data wait fraction times
 * that share (an estimate: the readers' time split as their work is). */
struct decode_figures {
	double samples, seconds, per_sample, cpu_per_sample, share, lost;
};
void decode_figures_of(const struct epoch_total *ep, int n, const struct lost_time *lost,
		       struct decode_figures *out);

/* Rank 0: table.md (the metric table, epochs, evaluation, accelerators, warnings). */
void train_table_write(FILE *f, const struct report_data *d, const json_t *summary);
/* epochs.csv and ranks.csv, rendered from summary.json (workloads/train_outputs.c); table.md
 * and report.md are training's own (train_table_write, bench/report.c). */
extern const struct workload_outputs train_outputs;
/* Rank 0: latency.csv and timeline.csv into dir. 0 or -errno. */
int train_write_csvs(const char *dir, const struct report_data *d, const struct timeline_event *tl,
		     const int *tl_count, const int *tl_displ);

/* Collective: reduces `nreps` repetitions to rank 0, which writes the run folder `final_dir`
 * (all or nothing: complete under its final name, or what was measured under
 * "<final_dir>.unfinished" and an error) and prints the table unless quiet. On rank 0,
 * run->results_dir gets the name the folder took. Returns the agreed code. */
int train_results_write(struct run *run, struct train_result *reps, int nreps,
			const struct results_ctx *ctx, const char *final_dir, bool quiet);

#endif
