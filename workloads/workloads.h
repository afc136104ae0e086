/* What a run does: generate the dataset, then train on it. */
#ifndef FEEDBENCH_WORKLOADS_H
#define FEEDBENCH_WORKLOADS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "../bench/config.h"
#include "../bench/stats.h"

struct run;
struct ds_file;
struct io;

/* Generates the dataset when the manifest is missing or does not match (generate = auto), always
 * (always) or never (never: a missing or mismatching dataset is an error). Collective. */
int generate_dataset(struct run *run, bool force);
/* Checks the manifest in data_dir against the config and the files it lists: 0 when they
 * match, 1 when not (the reason in why on rank 0). Collective: each rank stats its block. */
int manifest_check(struct run *run, char *why, size_t len);

/* Per epoch, per rank figures (reduced by results.c). */
struct epoch_rank {
	double wall_s;	   /* from the start barrier to this rank's last step */
	double compute_s;  /* busy time of included steps */
	double conf_s;	   /* configured computation time of included steps (DLIO's AU) */
	double step_s;	   /* step time of included steps (AU denominator) */
	double barrier_s;  /* step barrier time */
	double copy_s;	   /* host-to-device copy time */
	double cpu_user_s; /* CPU time of the whole process (all threads) from the start barrier */
	double cpu_sys_s;  /* to this rank's last step: getrusage(RUSAGE_SELF) */
	uint64_t copy_bytes;
	uint64_t steps;
	struct io_stats io; /* reads of this rank's reader threads */
	struct hist wait;   /* data wait per step */
};

/* One interval of the per-rank timeline (timeline.csv): what a thread was doing. */
enum { TL_READ, TL_WAIT, TL_COMPUTE, TL_BARRIER, TL_EPOCH /* start = end: an epoch begins */ };
struct timeline_event {
	double start, end; /* seconds since the start of the first epoch */
	int thread;	   /* 0 = trainer, 1.. = reader threads */
	int kind;	   /* TL_* */
};
#define TIMELINE_MAX 20000 /* events kept per rank */

struct train_result {
	int epochs;	   /* the epochs it holds: all, or those finished before a signal */
	bool interrupted;  /* stopped by SIGINT/SIGTERM after `epochs` finished epochs */
	int stopped_early; /* enum live_stop (bench/live.h): time_limit or steady_state ended it */
	double stopped_after; /* seconds into the repetition when every rank agreed to stop */
	struct epoch_rank *per_epoch; /* [epochs] for this rank */
	int nevals;		      /* evaluation passes run */
	struct epoch_rank *eval;      /* [nevals]: each pass's figures for this rank */
	int *eval_epoch;	      /* [nevals]: the training epoch (0-based) each followed */
	int naccel;		      /* accelerators_per_rank > 1: emulated accelerators here */
	struct epoch_rank *accel;     /* [epochs x naccel]: each accelerator's figures */
	double buffer_bytes;	      /* memory held by batch buffers */
	double setup_s;	 /* index files and open shared handles, before the first read */
	json_t *binding; /* summary.json "binding" (cpus.h), rank 0 only; owned */
	struct timeline_event *timeline;
	int ntimeline;
};

/* The evaluation phase ([dataset] num_files_eval > 0): DLIO's valid/ set, read after every
 * epochs_between_evals-th training epoch (from eval_after_epoch on). While a pass runs (and while
 * its files are laid out, generated or found), eval_enter() puts the evaluation set in run->ds
 * and its sizes, batch, computation time and folder in run->cfg, so the training code serves
 * both; eval_leave() puts training back. The evaluation files live in valid/ beside a data_dir
 * named train/ (DLIO's layout), else in <data_dir>-valid/, with their own manifest. */
struct eval_swap {
	char data_dir[CFG_PATH_MAX]; /* training's values while the evaluation set is in */
	int64_t nfiles, spf, batch, seed;
	double ct, ct_stdev;
	int nfiles_line;
};
bool eval_enabled(const struct config *cfg);
/* An evaluation follows training epoch `epoch` (0-based). */
bool eval_due(const struct config *cfg, int epoch);
/* The evaluation folder of data_dir (see above). */
void eval_folder(const struct config *cfg, char *buf, size_t len);
void eval_enter(struct run *run, struct eval_swap *sw);
void eval_leave(struct run *run, struct eval_swap *sw);

/* Runs the configured epochs once. Collective; returns the agreed result code. */
int train_run(struct run *run, struct train_result *res);
void train_result_free(struct train_result *res);

/* Collective read of n samples of one file by every rank of run->comm (n may be 0), used when
 * [storage.mpiio] collective = true or [format.hdf5] transfer = collective
 * (workloads/collective.c). out[i] receives sample idx[i] and lens[i] its length. */
int collective_read(struct run *run, struct ds_file *file, const uint64_t *idx, uint64_t n,
		    void *const *out, uint64_t cap, uint64_t *lens, struct io *io);

#endif
