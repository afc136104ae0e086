/* Training's reader pool, shared by the files of the training workload (train.c's epoch loop,
 * train_pool.c, train_queued.c, train_collective.c); nothing outside workloads/train*.c uses it.
 *
 * The reader threads live for the whole run and wait between epochs. Step k is read by thread
 * k % read_threads (as DataLoader dispatches batches to its workers; stream formats: by the
 * thread owning the shard) into ring slot k % slots. The ring holds read_threads x
 * prefetch_size batches (DLIO's prefetch per loader), or as many as [reader] prefetch_bytes
 * allows, a whole number per thread: each thread fills its own slots. The trainer consumes
 * steps strictly in order. A slot hands over through one atomic counter (even: free for its
 * next step, odd: filled) and a futex that is woken only when a thread sleeps on it: no lock
 * is shared by the hand-offs. With queued reads (io_depth > 1, samples that are byte ranges) a
 * thread keeps io_depth reads in flight across its batches: it starts its next step while the
 * last reads of the current one complete, when that step's slot is free (batch_window.h). In
 * collective mode (MPI-IO collective or HDF5 collective transfers) the trainer reads each
 * batch itself, because collective calls must be made in the same order by every rank: there
 * are no reader threads then.
 */
#ifndef FEEDBENCH_TRAIN_POOL_H
#define FEEDBENCH_TRAIN_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "batch_window.h"
#include "sampler.h"
#include "workloads.h"

#define READER_CACHE 8 /* open files kept per reader thread */

/* A slot's turn counts its hand-offs: 2r means free for the slot's round r (step r x slots +
 * its index), 2r + 1 filled for round r. TURN_ABORT is or-ed in when the pool stops early, so a
 * sleeper's futex value changes and no one sleeps through an abort. */
#define TURN_ABORT 0x80000000u
#define TURN_MASK  0x7fffffffu

struct slot {
	_Atomic uint32_t turn;	  /* futex word: see above */
	_Atomic uint32_t waiters; /* threads asleep (or going to sleep) on turn */
	_Atomic uint64_t claim;	  /* step + 1 of the batch last claimed here (trainer reads) */
	int rc;			  /* the reader's result for the batch */
	uint64_t bytes;		  /* sample bytes in the batch */
	void *buf;
} __attribute__((aligned(64))); /* one cache line per slot: no false sharing */

/* One waiter's spin budget (the trainer's, or a reader's). */
struct spinner {
	uint32_t limit_ns; /* how long the next wait may spin */
	uint32_t waits;	   /* waits since the budget ran out */
};

struct reader_cache {
	struct ds_file *file;
	struct freader *r;
	uint64_t used;
};

struct worker {
	struct pool *pool;
	pthread_t tid;
	int id;
	struct io_stats stats;
	struct io io;
	struct reader_cache cache[READER_CACHE];
	uint64_t tick;
	_Atomic uint64_t
	    progress_bytes;	       /* stats.bytes after each batch, read by the progress line */
	_Atomic uint64_t progress_ops; /* stats.ops after each batch, read by the live thread */
	struct timeline_event *tl;     /* private timeline buffer */
	int ntl, tlcap;
	struct spinner spin; /* this reader's, for the slots it waits on */
	uint64_t pend_step;  /* lazy wakes: its first batch handed over without a wake-up */
	unsigned npend;	     /* and how many of its batches since */
	struct bwin win;     /* queued reads: its batches in flight (b NULL: reads one by one) */
};

/* Collective mode's per-step scratch, allocated once (batch_size entries, one bit per file). */
struct coll_scratch {
	uint32_t *file;	 /* file of each sample of the batch */
	uint64_t *index; /* its index in the file */
	uint64_t *idx, *lens;
	void **out;
	uint64_t *mine, *all; /* files touched by this rank, by any rank */
	size_t words;
};

struct pool {
	struct run *run;
	const struct sampler *s;
	struct slot *slots;
	unsigned nslots; /* a multiple of nworkers */
	uint64_t nsteps; /* this epoch's */
	atomic_int abort;
	_Atomic uint32_t
	    epoch_seq;		  /* futex word: bumped to start an epoch, or to end the threads */
	_Atomic uint32_t running; /* futex word: threads still in the epoch */
	bool quit;		  /* with the last epoch_seq bump: threads return */
	bool spin;	    /* spin before sleeping: only when every thread has a CPU of its own */
	bool lazy_wake;	    /* readers share the trainer's CPUs: wake-ups in groups (see below) */
	bool trainer_reads; /* and a batch no reader has started is read by the trainer */
	uint64_t trainer_batches; /* batches the trainer read itself, this pool, all epochs */
	uint64_t step_end;	  /* ns: when the trainer's last step ended (trainer_read) */
	uint64_t tpend_step;	  /* the trainer's first slot freed without a wake-up */
	unsigned tnpend;	  /* and how many since */
	struct spinner trainer_spin;
	size_t sample_cap; /* bytes reserved per sample in a batch buffer (aligned) */
	uint64_t epoch_t0; /* ns */
	double time_base;  /* seconds of earlier epochs, for the timeline */
	struct coll_scratch coll;
	struct worker *workers; /* [nworkers + 1]: the last is the trainer's own reader state */
	unsigned nworkers;	/* reader threads */
	unsigned nall;		/* with the trainer's reader state when trainer_reads */
	unsigned nstarted;	/* reader threads started (ended by pool_free) */
};

static inline size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

static inline void tl_add(struct timeline_event *buf, int *n, int cap, int thread, int kind,
			  double start, double end)
{
	if (*n >= cap)
		return;
	buf[(*n)++] = (struct timeline_event){start, end, thread, kind};
}

/* ---- train_pool.c: hand-offs between reader threads and the trainer ---------------------- */

/* A waiter spins up to SPIN_NS before it sleeps, at least SPIN_MIN, and probes again every
 * SPIN_PROBE waits; readers sharing the trainer's CPUs hand over up to LAZY_MAX batches per
 * wake-up (train_pool.c says why). */
#define SPIN_NS	   200000u
#define SPIN_MIN   1000u
#define SPIN_PROBE 256u
#define LAZY_MAX   8u

void pool_futex_wait(_Atomic uint32_t *word, uint32_t val);
void pool_futex_wake(_Atomic uint32_t *word);

/* The turn at which step's slot is free (filled: + 1). */
uint32_t pool_step_turn(const struct pool *p, uint64_t step);
/* Waits until slot's turn is want or later; false when the pool stopped. */
bool pool_slot_wait(const struct pool *p, struct spinner *sp, struct slot *slot, uint32_t want);
/* Hands the slot on (filled to the trainer, or free to its reader). */
void pool_slot_publish(struct slot *slot);
/* Hands the slot on without a wake-up; the caller flushes it later. */
void pool_slot_publish_quiet(struct slot *slot);
/* Trainer reads: the reader of step's batch and the trainer both may claim it; true for the
 * one that got it. */
bool pool_slot_claim(struct slot *slot, uint64_t step);
/* Trainer reads this epoch. */
bool pool_trainer_reads_now(const struct pool *p);
/* Stops every wait of this epoch: readers leave, the trainer sees the failure. */
void pool_abort(struct pool *p);
/* A reader's pending wake-ups: its batches from pend_step on. */
void pool_reader_flush(struct worker *w);
/* The epoch ended early (a failure) or the run was interrupted. */
bool pool_reader_stopped(const struct pool *p);
/* Busy on the calling thread's CPU until it has had secs of CPU time: a fixed amount of work
 * (preprocess_time, host_time), which takes longer when the thread waits for a CPU. */
void pool_cpu_busy(double secs);
/* This thread's next step after step (UINT64_MAX: the first); >= nsteps: none left. */
uint64_t pool_worker_next(const struct worker *w, uint64_t step);
/* Records a batch's read interval on the thread's timeline. */
void pool_worker_tl_read(struct worker *w, uint64_t t0, uint64_t t1);

/* ---- train_pool.c: reading one sample ---------------------------------------------------- */

/* The open file of the reader cache (opened, an older one closed, when not there). */
int pool_reader_get(struct worker *w, struct ds_file *file, struct freader **out);
/* Closes every file of the reader's cache. 0 or the first failure. */
int pool_reader_close_all(struct worker *w);
/* [reader] verify: checks a sample's bytes; the message names rank, file, offset, expected and
 * actual. */
/* Reads step's batch into slot's buffer. 0 or the failure. */
int pool_fill_batch(struct worker *w, struct slot *slot, uint64_t step);
int pool_verify_sample(struct run *run, struct ds_file *file, uint64_t index, const void *buf,
		       size_t len);

/* ---- train_pool.c: the trainer's side ---------------------------------------------------- */

/* Waits for step's batch (or reads it itself, trainer reads); NULL and *rc on a failure. */
struct slot *pool_batch_take(struct pool *p, uint64_t step, int *rc, uint64_t *t_ready);
/* Frees step's slot for its reader. */
void pool_batch_release(struct pool *p, uint64_t step);
/* Sets the epoch's steps and wakes the readers. */
void pool_start(struct pool *p, uint64_t nsteps);
/* Ends the epoch: waits until every reader left it. */
void pool_stop(struct pool *p);
/* ---- train_readers.c: the reader threads, set-up and tear-down --------------------------- */

/* The ring, the reader threads (started, waiting for pool_start) and res->binding. */
int pool_init(struct run *run, struct pool *p, struct train_result *res);
void pool_free(struct run *run, struct pool *p);
/* Appends the reader threads' timeline events after the trainer's. */
void pool_timeline_collect(struct pool *p, struct train_result *res);

/* ---- train_queued.c: queued reads across batches (io_depth > 1) -------------------------- */

/* One epoch of a reader thread with io_depth reads in flight across its batches. */
void pool_worker_epoch_queued(struct worker *w);
/* The reader's queue (backend = uring), its batch buffers registered where the kernel allows. */
int pool_queue_init(struct run *run, struct pool *p, struct worker *w, size_t batch_bytes);

/* ---- train_collective.c: collective reads, the trainer reads each batch itself ----------- */

bool collective_mode(const struct run *run);
/* Every rank calls this for every step up to the largest step count, in the same order. */
int collective_batch(struct pool *p, struct worker *w, struct slot *slot, uint64_t step);

#endif
