/* The checkpoint module's own state and steps, shared by the checkpoint workload
 * (checkpoint.c, its results checkpoint_results.c) and checkpoints inside training
 * (checkpoint_train.c); checkpoint_store.c plans, writes, restores and removes checkpoints.
 * Nothing outside workloads/checkpoint*.c uses it.
 */
#ifndef FEEDBENCH_CHECKPOINT_STORE_H
#define FEEDBENCH_CHECKPOINT_STORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "../bench/run.h"
#include "../bench/stats.h"
#include "checkpoint.h"

#define MIB	    1048576.0
#define CKPT_HDR    32
#define CKPT_MAGIC  0x31305450434b4246ull /* "FBCKPT01" little-endian */
#define CKPT_SINGLE "checkpoint.bin"
#define CKPT_META   ".metadata"

/* What this rank writes: its share of each part of the model state. */
struct ckpt_plan {
	uint64_t total;			  /* bytes of the whole checkpoint (all ranks) */
	uint64_t full;			  /* total at scale 1: the configured full model */
	uint64_t model, optimizer, grads; /* the parts of total */
	uint64_t mine;			  /* this rank's bytes */
	uint64_t offset;		  /* layout single: where this rank's range starts */
	int tp, pp, dp;			  /* parallel degrees */
	int mp_rank, dp_rank;		  /* model-parallel and data-parallel coordinates */
	int writers;			  /* ranks with bytes to write */
	uint64_t geometry_total;	  /* subset: the whole geometry's bytes (else total) */
	uint64_t *bytes_of;		  /* rank 0: every rank's bytes */
};

/* One checkpoint as one rank saw it. */
struct ckpt_one {
	int64_t step;
	double write_s;	    /* start barrier (async: the writer's start) -> this rank's bytes
			     * durable (fsync, close); the staging copy is not in it */
	double staging_s;   /* async: copying this rank's bytes to the staging buffer */
	double durable_s;   /* rank 0: start barrier -> .metadata renamed, folders fsync'ed */
	double meta_s;	    /* rank 0: agreement that all bytes are durable -> the same end */
	double read_s;	    /* restore: start barrier -> this rank's bytes read (verify time out) */
	uint64_t verify_ns; /* restore: time spent comparing what was read (as ior leaves out) */
	double delete_s;    /* rank 0: removing the checkpoint keep_last pushed out */
	uint64_t wbytes, wcalls, rbytes, rcalls;
	uint64_t files;	  /* files this rank created */
	bool wrote, read; /* this entry saved a checkpoint, restored one (or both) */
};

struct ckpt_rep {
	int n;
	struct ckpt_one *c;
};

struct ckpt_state {
	struct ckpt_plan plan;
	char folder[CFG_PATH_MAX + 32];
	unsigned char *pattern; /* transfer_size bytes of this rank's seeded data */
	unsigned char *rbuf;	/* restore buffer */
	int64_t step;		/* last checkpoint number written */
	/* The shard this rank restores: its own, or with recovery_rank_shift the one rank
	 * src wrote (another host's); its offset in a single file and its bytes. */
	int src;
	uint64_t src_off, src_bytes;
	int read_writer; /* the writing rank in the header of the first transfer this rank
			  * last restored (what was read, not what was meant); -1: none */
	bool flushed;	 /* phases: the flush before the reads evicted them */
	struct ckpt_phases *phases; /* phases: hosts, flush outcomes, visibility (rank 0) */
	bool stripe_read;	    /* the layout of a checkpoint file was read back */
	/* In training (checkpoint_train_*): rank 0's totals. */
	int ntrain;		  /* checkpoints saved */
	double train_block_s;	  /* training stopped: barrier to durable, summed */
	double train_write_max_s; /* slowest rank's write, summed */
	double train_steps_lost;  /* blocked time / mean step time, summed */
	uint64_t train_bytes;	  /* bytes written, all ranks */
	double train_delete_s;
	double train_durable_s; /* barrier to durable, summed */
	double train_end_s;	/* async: waiting for the last checkpoint at the end */
	int nsaves;		/* checkpoints started */
	double train_staging_s; /* async: copying the state to the staging buffer, summed */
	double train_wait_s;	/* async: waiting for the previous checkpoint, summed */
	/* async: the checkpoint in flight (at most one), written by a writer thread. */
	unsigned char *staging; /* this rank's bytes, headers included */
	pthread_t writer;
	bool inflight;
	int writer_rc;
	uint64_t inflight_t0; /* ns: its start (the barrier before the staging copy) */
	struct ckpt_one pending;
	struct run *run;
	/* The writer's copy of the run: its own error buffer, read by the trainer only after
	 * joining the writer (the trainer's run->err is read without a lock elsewhere). */
	struct run *wrun;
	struct io_stats *wst; /* this rank's checkpoint writes (all checkpoints of the run) */
	struct io_stats *rst; /* and restores */
	/* Rank 0's namespace calls of the checkpoints (step folders made and removed, stats,
	 * folder fsyncs, the shared file's creation); the checkpoint folder's creation at the
	 * start is not in it (set-up, as mdtest leaves its folders out). */
	struct io_stats *nst;
};

/* MLPerf Storage's phases: num_checkpoints_write / _read set (checkpoint_phases.c). */
static inline bool ckpt_phased(const struct config *cfg)
{
	return cfg->checkpoint.num_write >= 0 || cfg->checkpoint.num_read >= 0;
}

/* Whether the run writes checkpoints, and whether it reads them back. */
static inline bool ckpt_saves(const struct config *cfg)
{
	return ckpt_phased(cfg) ? cfg->checkpoint.num_write > 0 : cfg->checkpoint.save;
}

static inline bool ckpt_restores(const struct config *cfg)
{
	return ckpt_phased(cfg) ? cfg->checkpoint.num_read > 0 : cfg->checkpoint.restore;
}

static inline struct ckpt_state *ckpt_of(struct run *run)
{
	return (struct ckpt_state *)run->workload_priv;
}

/* The plan of rank for nranks ranks (no I/O), and any rank's bytes under it. */
void ckpt_plan_make(const struct config *cfg, int rank, int nranks, struct ckpt_plan *p);
uint64_t ckpt_bytes_of(const struct config *cfg, const struct ckpt_plan *p, int rank);
/* `feedbench run --dry-run` (checkpoint_plan.c): the geometry's plan on out. */
int ckpt_dry_plan(const struct config *cfg, int nranks, int ranks_per_host, FILE *out);

void ckpt_pattern(const struct config *cfg, int64_t step, int rank, unsigned char *buf, size_t len);

/* The header of the transfer at file offset off, over the first bytes of buf. */
void ckpt_header(unsigned char *buf, size_t len, int64_t step, int rank, uint64_t off);

/* The writing rank a transfer's header names (buf holds len bytes read); -1: no header. */
int ckpt_header_rank(const unsigned char *buf, size_t len);

/* Paths: the step folder of checkpoint step, and rank's file in it. */
void ckpt_step_dir(const struct ckpt_state *st, int64_t step, char *buf, size_t len);
void ckpt_file(const struct run *run, const struct ckpt_state *st, int64_t step, int rank,
	       char *buf, size_t len);

/* Writes this rank's bytes at [base, base + len) of path: transfers of transfer_size, each
 * with its header, then fsync and close. */
int ckpt_write_range(struct run *run, struct ckpt_state *st, struct ckpt_one *c, const char *path,
		     uint64_t base, uint64_t len, const unsigned char *staged);

/* Writes path (in dir, under the checkpoint folder) atomically through the back-end: a hidden
 * temporary, fsync, rename, fsync of dir and of the checkpoint folder (namespace calls counted
 * in st->nst). */
int ckpt_put_atomic(struct run *run, struct ckpt_state *st, const char *dir, const char *path,
		    const char *text, size_t len);

/* Rank 0, after every rank's bytes are durable: .metadata under a temporary name, fsync,
 * rename, fsync of the step folder and of the checkpoint folder. */
int ckpt_write_metadata(struct run *run, struct ckpt_state *st, int64_t step);

/* Rank 0, before the start: the step folder (an earlier run's is removed first: a checkpoint
 * is never a mix of two runs), and the shared file of layout single, created with its stripe
 * layout (io_create). */
int ckpt_make_step(struct run *run, struct ckpt_state *st, int64_t step);

/* Collective: one checkpoint saved to durable (every rank its bytes, then .metadata). */
int ckpt_save(struct run *run, struct ckpt_state *st, struct ckpt_one *c);

/* Time to durable (rank 0), given the slowest rank's write time: every rank times from its own
 * exit of the start barrier, and those exits differ (a rank descheduled right after it), so
 * rank 0's own span can be shorter than a rank that left earlier took to write. The longer of
 * the two paths to .metadata counts: rank 0's own, and the slowest write followed by what
 * came after the agreement (.metadata, folder fsyncs): never less than the write time. */
double ckpt_durable(const struct ckpt_one *c, double wmax);

/* Collective: reads this rank's bytes of checkpoint c back, verified byte for byte. */
int ckpt_restore(struct run *run, struct ckpt_state *st, struct ckpt_one *c);

/* Restore only (save = false): rank 0 checks that the checkpoint is complete (.metadata) and
 * was written by this config (same size, ranks and layout). */
int ckpt_check_existing(struct run *run, struct ckpt_state *st, int64_t step);

/* keep_last: removes the checkpoint that falls out of the kept ones (rank 0). */
int ckpt_prune(struct run *run, struct ckpt_state *st, struct ckpt_one *c);

/* Collective: one checkpoint of the workload saved to durable, its layout read back (the first
 * one), restored when restore is set, keep_last applied; a signal stops it. Agreed code. */
int ckpt_save_step(struct run *run, struct ckpt_state *st, struct ckpt_one *c, bool restore);

/* The layout the file system gave a checkpoint file, recorded like a dataset's (first
 * checkpoint only): the checkpoint's files stand in for the dataset's while it is read. */
int ckpt_stripe_readback(struct run *run, struct ckpt_state *st, int64_t step);

/* State, plan, buffers and the checkpoint folder. Collective. */
int ckpt_setup(struct run *run);

/* Frees the state (joins a writer thread still running). */
void ckpt_finish(struct run *run, int rc);

/* The checkpoints' namespace calls through the io_* wrappers (rank 0's: it keeps the folders). */
void ckpt_namespace_json(json_t *m, uint64_t ops, uint64_t ops_ns, uint64_t dsyncs,
			 uint64_t dsync_ns);

/* Phases (checkpoint_phases.c). The keys' checks (no I/O). */
int ckpt_phases_check(const struct config *cfg, int nranks, struct fb_errbuf *err);
/* Collective, once after set-up: ranks per host, the shard each rank restores. */
int ckpt_phases_prepare(struct run *run);
/* Collective: one repetition's write phase, flush, read phase into rep (rep->c sized for
 * max(num_checkpoints_write, num_checkpoints_read)). */
struct ckpt_rep;
int ckpt_phases_run(struct run *run, int repetition, struct ckpt_rep *rep);
/* Rank 0: summary.json's checkpoint.phases. */
json_t *ckpt_phases_json(const struct run *run);
/* Rank 0: adds the phase figures (GiB/s, recovery) to one checkpoint's record and the means to
 * metric. */
void ckpt_phases_record(struct run *run, const struct ckpt_one *c0, double wmax, double rmax,
			json_t *o);
void ckpt_phases_metric(struct run *run, json_t *checkpoints, json_t *metric);
void ckpt_phases_free(struct ckpt_state *st);

/* The workload's write hook (checkpoint_results.c): summary.json, table.md, checkpoints.csv. */
struct results_ctx;
int checkpoint_results_write(struct run *run, void *const *reps, int nreps,
			     const struct results_ctx *ctx, const char *final_dir, bool quiet);

#endif
