/* Training emulation: per epoch, the sampler deals samples to ranks, reader threads
 * (DataLoader workers) fill a bounded ring of batch buffers, and the trainer takes each batch,
 * hands it to the compute plug-in, optionally joins a step barrier, and records timings.
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
#include "checkpoint.h"
#include "evict.h"
#include "workloads.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../bench/agree.h"
#include "../bench/cpus.h"
#include "../bench/progress.h"
#include "../bench/run.h"
#include "../bench/timer.h"
#include "../formats/sample.h"
#include "batch_window.h"
#include "sampler.h"

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
	    progress_bytes;	   /* stats.bytes after each batch, read by the progress line */
	struct timeline_event *tl; /* private timeline buffer */
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

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

static void tl_add(struct timeline_event *buf, int *n, int cap, int thread, int kind, double start,
		   double end)
{
	if (*n >= cap)
		return;
	buf[(*n)++] = (struct timeline_event){start, end, thread, kind};
}

/* ---- hand-off between reader threads and the trainer --------------------------------- */

/* A batch of small samples is read in microseconds: sleeping at every hand-off would cost more
 * than the reads. When every thread has a CPU of its own, the waiting side first spins (with a
 * pause instruction), then sleeps on the futex. Spinning pays only while the thread waited for
 * runs on another CPU; on a node busy with other work the scheduler puts the two threads on
 * one CPU and the spinner only delays the other. So each waiter adapts: a spin that ends in
 * time keeps the full SPIN_NS, one that runs out halves the next; at zero the waiter sleeps
 * at once and tries a short spin again every SPIN_PROBE waits. SPIN_NS covers a batch of small
 * samples with room: waking a sleeper on an idle CPU costs tens of microseconds more in a
 * virtual machine (30 us spins left the unbound cached rows of tests/perf/limits.sh at 0.57-0.83
 * of the bare loop and fio; 200 us, 0.78-1.05). */
#define SPIN_NS	   200000u
#define SPIN_MIN   1000u
#define SPIN_PROBE 256u

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static void futex_wait(_Atomic uint32_t *word, uint32_t val)
{
	/* EAGAIN (the word moved on) and EINTR both mean: look again. */
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* The turn at which step's slot is free (filled: + 1). */
static uint32_t step_turn(const struct pool *p, uint64_t step)
{
	return (uint32_t)(step / p->nslots * 2) & TURN_MASK;
}

/* Waits until slot's turn is want or later (later: the trainer read the batch itself, see
 * trainer_reads). False when the pool aborted first. */
static bool slot_wait(const struct pool *p, struct spinner *sp, struct slot *slot, uint32_t want)
{
	uint32_t t = atomic_load_explicit(&slot->turn, memory_order_acquire);

	if (p->spin && sp->limit_ns == 0 && ++sp->waits % SPIN_PROBE == 0)
		sp->limit_ns = SPIN_NS / 8;
	if (p->spin && sp->limit_ns && (t & TURN_MASK) < want && !(t & TURN_ABORT)) {
		uint64_t t0 = timer_now_ns(), spent = 0;
		for (unsigned i = 1; (t & TURN_MASK) < want && !(t & TURN_ABORT); i++) {
			cpu_relax();
			if ((i & 63) == 0 && (spent = timer_now_ns() - t0) > sp->limit_ns)
				break;
			t = atomic_load_explicit(&slot->turn, memory_order_acquire);
		}
		if ((t & TURN_MASK) >= want && spent <= sp->limit_ns)
			sp->limit_ns = SPIN_NS;
		else if ((sp->limit_ns /= 2) < SPIN_MIN)
			sp->limit_ns = 0;
	}
	while ((t & TURN_MASK) < want && !(t & TURN_ABORT)) {
		/* Announce the sleep, then look once more: the publisher stores the turn before
		 * it reads waiters (both sequentially consistent), so either it sees us and
		 * wakes us, or we see its turn here, or the futex sees the word changed. */
		atomic_fetch_add(&slot->waiters, 1);
		t = atomic_load(&slot->turn);
		if ((t & TURN_MASK) < want && !(t & TURN_ABORT))
			futex_wait(&slot->turn, t);
		atomic_fetch_sub(&slot->waiters, 1);
		t = atomic_load_explicit(&slot->turn, memory_order_acquire);
	}
	return (t & TURN_MASK) >= want;
}

/* Trainer reads: the reader of step's batch and the trainer both may claim it once its slot is
 * free; the first wins, the other moves on. Claims of one slot only grow (its steps are a
 * round apart, and a round starts when the previous one was consumed). */
static bool slot_claim(struct slot *slot, uint64_t step)
{
	uint64_t c = atomic_load(&slot->claim);

	while (c <= step)
		if (atomic_compare_exchange_weak(&slot->claim, &c, step + 1))
			return true;
	return false;
}

/* Hands the slot on (filled to the trainer, or free to its reader); a futex call only when
 * someone sleeps on it. */
static void slot_publish(struct slot *slot)
{
	atomic_fetch_add(&slot->turn, 1);
	if (atomic_load(&slot->waiters))
		futex_wake(&slot->turn);
}

/* Lazy wake-ups, when the readers share the trainer's one CPU (binding.readers_share) and the
 * trainer only consumes (pool_init says when): each
 * hand-off that wakes a sleeper costs two context switches on that CPU, which at small samples
 * cost more than the reads (the bound 4 KiB row of tests/perf/limits.sh). So a reader hands its
 * filled batches over without waking the trainer until it must wait for a free slot itself (or
 * LAZY_MAX batches are pending, or its epoch ends), and the trainer frees slots without waking
 * the readers as long as its next batch is already there. Both sides then switch once per group
 * of batches instead of once per batch. Batch order, the ring and the memory bound are as
 * before; a sleeper is never left waiting while the other side waits too (each flushes its
 * pending wakes before it waits, and pool_abort wakes every slot). */
#define LAZY_MAX 8u

/* Hands the slot on without a wake-up; the caller flushes it later. */
static void slot_publish_quiet(struct slot *slot)
{
	atomic_fetch_add(&slot->turn, 1);
}

static void slot_wake(struct slot *slot)
{
	if (atomic_load(&slot->waiters))
		futex_wake(&slot->turn);
}

/* Trainer reads (see trainer_read) this epoch. */
static bool trainer_reads_now(const struct pool *p)
{
	return p->trainer_reads && !p->s->owner; /* a stream's shards belong to one reader */
}

/* Stops every wait of this epoch: readers leave, the trainer sees the failure. */
static void pool_abort(struct pool *p)
{
	atomic_store(&p->abort, 1);
	for (unsigned i = 0; i < p->nslots; i++) {
		atomic_fetch_or(&p->slots[i].turn, TURN_ABORT);
		futex_wake(&p->slots[i].turn);
	}
}

/* ---- reading one sample -------------------------------------------------------------- */

static int reader_get(struct worker *w, struct ds_file *file, struct freader **out)
{
	struct run *run = w->pool->run;
	unsigned victim = 0;
	int rc;

	for (unsigned i = 0; i < READER_CACHE; i++) {
		if (w->cache[i].file == file) {
			w->cache[i].used = ++w->tick;
			*out = w->cache[i].r;
			return 0;
		}
		if (w->cache[i].used < w->cache[victim].used)
			victim = i;
	}
	if (w->cache[victim].file) {
		rc = run->format->close(w->cache[victim].r);
		w->cache[victim].file = NULL;
		if (rc < 0)
			return rc;
	}
	rc = run->format->open(out, run, file, &w->io);
	if (rc < 0)
		return rc;
	w->cache[victim] = (struct reader_cache){file, *out, ++w->tick};
	return 0;
}

static int reader_release(struct worker *w, struct ds_file *file)
{
	struct run *run = w->pool->run;

	/* One sample per file (npy): open, read, close every time, as a loader would. */
	if (!(run->format->caps & FORMAT_CAP_FILE_PER_SAMPLE))
		return 0;
	for (unsigned i = 0; i < READER_CACHE; i++) {
		if (w->cache[i].file == file) {
			int rc = run->format->close(w->cache[i].r);
			w->cache[i].file = NULL;
			w->cache[i].used = 0;
			return rc;
		}
	}
	return 0;
}

static int reader_close_all(struct worker *w)
{
	int rc = 0;

	for (unsigned i = 0; i < READER_CACHE; i++) {
		if (w->cache[i].file) {
			int crc = w->pool->run->format->close(w->cache[i].r);
			if (rc == 0)
				rc = crc;
			w->cache[i].file = NULL;
		}
	}
	return rc;
}

/* Verification failure: the message names rank, file, offset, expected and actual. */
static int verify_fail(struct run *run, struct ds_file *file, uint64_t index, uint64_t bad_off,
		       const char *why)
{
	uint64_t off = 0, len = 0;

	if (run->format->extent && run->format->extent(run, file, index, &off, &len) == 0 &&
	    !(run->format->caps & FORMAT_CAP_OWNS_IO) && run->format->parse == NULL)
		return run_fail(run, -FB_EVERIFY,
				"verification failed: '%s' at offset %" PRIu64 " (sample %" PRIu64
				"): %s",
				file->path, off + bad_off, index, why);
	return run_fail(run, -FB_EVERIFY,
			"verification failed: '%s' sample %" PRIu64 ", byte %" PRIu64
			" of the sample: %s",
			file->path, index, bad_off, why);
}

static int verify_sample(struct run *run, struct ds_file *file, uint64_t index, const void *buf,
			 size_t len)
{
	char why[512];
	uint64_t bad_off;

	if (sample_check(buf, len, run->ds.seed, run->ds.id, file->index, index, why, sizeof(why),
			 &bad_off))
		return 0;
	return verify_fail(run, file, index, bad_off, why);
}

static int read_one(struct worker *w, uint64_t global, void *dst, uint64_t *bytes)
{
	struct pool *p = w->pool;
	struct run *run = p->run;
	bool verify = run->cfg.dataset.verify;
	struct freader *r;
	uint64_t index;
	struct ds_file *file = dataset_file_of(&run->ds, global, &index);
	size_t len = 0;
	int rc;

	if (verify) /* a read that leaves the buffer unfilled must not pass (IOR's lesson) */
		memset(dst, SAMPLE_POISON, file->max_sample);
	rc = reader_get(w, file, &r);
	if (rc < 0)
		return rc;
	rc = run->format->read_sample(r, index, dst, p->sample_cap, &len);
	if (rc == 0)
		rc = reader_release(w, file);
	if (rc < 0)
		return rc;
	w->stats.samples++;
	*bytes += len;
	return verify ? verify_sample(run, file, index, dst, len) : 0;
}

/* The epoch ended early (a failure) or the run was interrupted. */
static bool reader_stopped(const struct pool *p)
{
	return atomic_load_explicit(&p->abort, memory_order_relaxed) ||
	       (p->run->stop && __atomic_load_n(p->run->stop, __ATOMIC_RELAXED));
}

static int fill_batch(struct worker *w, struct slot *slot, uint64_t step)
{
	struct pool *p = w->pool;
	uint64_t first, count;
	int rc = 0;

	sampler_batch(p->s, step, &first, &count);
	slot->bytes = 0;
	for (uint64_t j = 0; j < count && rc == 0; j++) {
		if (reader_stopped(p))
			return -FB_EINTR;
		rc = read_one(w, sampler_sample(p->s, first + j),
			      (char *)slot->buf + j * p->sample_cap, &slot->bytes);
	}
	return rc;
}

/* This thread's next step after `step` (UINT64_MAX: the first): every read_threads-th step,
 * or the next batch of its own shards (stream formats). */
static uint64_t worker_next(const struct worker *w, uint64_t step)
{
	const struct pool *p = w->pool;
	unsigned me = (unsigned)w->id - 1;

	if (!p->s->owner)
		return step == UINT64_MAX ? me : step + p->nworkers;
	for (step = step == UINT64_MAX ? 0 : step + 1; step < p->nsteps; step++)
		if (p->s->owner[step] == (int)me)
			break;
	return step;
}

/* Records a batch's read interval on the thread's timeline. */
static void worker_tl_read(struct worker *w, uint64_t t0, uint64_t t1)
{
	const struct pool *p = w->pool;

	atomic_store_explicit(&w->progress_bytes, w->stats.bytes, memory_order_relaxed);
	tl_add(w->tl, &w->ntl, w->tlcap, w->id, TL_READ,
	       p->time_base + timer_ns_to_s(t0 - p->epoch_t0),
	       p->time_base + timer_ns_to_s(t1 - p->epoch_t0));
}

/* ---- queued reads across batches (io_depth > 1, samples that are byte ranges) ----------- */

/* When the reader cache is full and file is not in it: the file its next open closes. */
static struct freader *reader_victim(const struct worker *w, const struct ds_file *file)
{
	unsigned victim = 0;

	for (unsigned i = 0; i < READER_CACHE; i++) {
		if (w->cache[i].file == file || !w->cache[i].file)
			return NULL;
		if (w->cache[i].used < w->cache[victim].used)
			victim = i;
	}
	return w->cache[victim].r;
}

/* Queues the next sample of batch b into its slot. A file the reader cache is about to close
 * first sees its own reads complete; the other reads stay in flight. */
static int queue_sample(struct worker *w, struct bwin_batch *b)
{
	struct pool *p = w->pool;
	struct run *run = p->run;
	char *dst = (char *)p->slots[b->step % p->nslots].buf + b->queued * p->sample_cap;
	uint64_t index, off, len;
	struct ds_file *file =
	    dataset_file_of(&run->ds, sampler_sample(p->s, b->first + b->queued), &index);
	struct freader *r = reader_victim(w, file);
	int rc = 0;

	if (reader_stopped(p))
		return -FB_EINTR;
	if (r)
		rc = io_queue_wait_file(&w->io, ((struct freader_file *)r)->sf);
	if (rc == 0)
		rc = reader_get(w, file, &r);
	if (rc == 0)
		rc = run->format->extent(run, file, index, &off, &len);
	if (rc == 0 && len > p->sample_cap)
		rc =
		    run_fail(run, -FB_EINTERNAL, "sample of %" PRIu64 " bytes exceeds buffer", len);
	if (rc < 0)
		return rc;
	if (run->cfg.dataset.verify) /* a read that leaves the buffer unfilled must not pass */
		memset(dst, SAMPLE_POISON, file->max_sample);
	rc = io_queue_read(&w->io, ((struct freader_file *)r)->sf, dst, len, off);
	b->bytes += len;
	b->queued++;
	b->mark = io_queue_mark(&w->io);
	return rc;
}

/* Batch b's reads all landed: counts its samples (bytes summed when they were queued) and
 * verifies them, then hands it over (not on a failure: the caller hands the failure over
 * instead). */
static int batch_finish(struct worker *w, const struct bwin_batch *b, uint64_t *t_last)
{
	struct pool *p = w->pool;
	struct run *run = p->run;
	struct slot *slot = &p->slots[b->step % p->nslots];
	int rc = 0;

	slot->bytes = b->bytes;
	w->stats.samples += b->count;
	for (uint64_t j = 0; run->cfg.dataset.verify && j < b->count && rc == 0; j++) {
		uint64_t index, off, len;
		struct ds_file *file =
		    dataset_file_of(&run->ds, sampler_sample(p->s, b->first + j), &index);
		rc = run->format->extent(run, file, index, &off, &len);
		if (rc == 0)
			rc = verify_sample(run, file, index, (char *)slot->buf + j * p->sample_cap,
					   len);
	}
	if (rc < 0)
		return rc;
	/* The batches of one thread overlap in time; the timeline shows each from when the
	 * previous one was handed over (or its own start, if later), so the bars tile. */
	uint64_t t1 = timer_now_ns();
	worker_tl_read(w, b->t0 > *t_last ? b->t0 : *t_last, t1);
	*t_last = t1;
	slot->rc = 0;
	slot_publish(slot);
	return 0;
}

/* One epoch of a thread with queued reads: io_depth reads in flight across its batches
 * (batch_window.h says in which order it works). On a failure the reads in flight land first,
 * then the oldest batch not handed over carries the failure to the trainer. */
static void worker_epoch_queued(struct worker *w)
{
	struct pool *p = w->pool;
	struct bwin *win = &w->win;
	uint64_t next = worker_next(w, UINT64_MAX), t_last = 0;
	int rc = 0;
	bool done = false;

	bwin_reset(win);
	while (rc == 0 && !done) {
		struct bwin_batch *old = bwin_oldest(win);
		struct slot *ns = next < p->nsteps ? &p->slots[next % p->nslots] : NULL;
		unsigned inflight = w->io.inflight;
		bool room = inflight < w->io.depth;
		struct bwin_view v = {
		    .oldest_done =
			old && old->queued == old->count && io_queue_done(&w->io, old->mark),
		    .room = room,
		    .inflight = inflight > 0,
		    .more_steps = ns != NULL,
		    .next_free = ns && (atomic_load_explicit(&ns->turn, memory_order_acquire) &
					TURN_MASK) == step_turn(p, next)};

		switch (bwin_next(win, &v)) {
		case BWIN_PUBLISH:
			if ((rc = batch_finish(w, old, &t_last)) == 0)
				bwin_pop(win);
			break;
		case BWIN_QUEUE:
			rc = queue_sample(w, bwin_newest(win));
			break;
		case BWIN_WAIT_SLOT:
			if (reader_stopped(p) || !slot_wait(p, &w->spin, ns, step_turn(p, next))) {
				done = true;
				break;
			}
			/* fall through */
		case BWIN_START: {
			struct bwin_batch *b = bwin_push(win);
			b->step = next;
			sampler_batch(p->s, next, &b->first, &b->count);
			b->mark = io_queue_mark(&w->io);
			b->t0 = timer_now_ns();
			next = worker_next(w, next);
			break;
		}
		case BWIN_REAP:
			rc = io_queue_poll(&w->io);
			break;
		case BWIN_DONE:
			done = true;
			break;
		}
	}
	/* Every read in flight lands before its buffer can be handed on or freed. */
	int wrc = io_queue_wait(&w->io);
	if (rc == 0)
		rc = wrc;
	if (rc < 0) {
		struct bwin_batch *old = bwin_oldest(win);
		if (old) {
			struct slot *slot = &p->slots[old->step % p->nslots];
			slot->rc = rc;
			slot_publish(slot);
		}
		pool_abort(p);
	}
}

/* A reader's pending wake-ups: its batches from pend_step on, npend of them. */
static void reader_flush(struct worker *w)
{
	uint64_t step = w->pend_step;

	for (unsigned i = 0; i < w->npend; i++, step = worker_next(w, step))
		slot_wake(&w->pool->slots[step % w->pool->nslots]);
	w->npend = 0;
}

static void worker_epoch(struct worker *w)
{
	struct pool *p = w->pool;
	uint64_t t1 = 0;

	if (w->win.b) {
		worker_epoch_queued(w);
		if (reader_close_all(w) < 0)
			pool_abort(p);
		return;
	}

	for (uint64_t step = worker_next(w, UINT64_MAX); step < p->nsteps;
	     step = worker_next(w, step)) {
		struct slot *slot = &p->slots[step % p->nslots];
		uint32_t want = step_turn(p, step);
		/* A slot already free: the batch starts when the last one ended, no clock read. */
		bool free_now =
		    (atomic_load_explicit(&slot->turn, memory_order_acquire) & TURN_MASK) == want;

		if (!free_now)
			reader_flush(w);
		if (atomic_load_explicit(&p->abort, memory_order_relaxed) ||
		    (!free_now && !slot_wait(p, &w->spin, slot, want)))
			break;
		if (trainer_reads_now(p) && !slot_claim(slot, step)) {
			reader_flush(w); /* the trainer read it: pending steps stay contiguous */
			t1 = 0;
			continue;
		}
		uint64_t t0 = free_now && t1 ? t1 : timer_now_ns();
		int rc = fill_batch(w, slot, step);
		t1 = timer_now_ns();
		worker_tl_read(w, t0, t1);
		slot->rc = rc;
		if (p->lazy_wake && rc == 0) {
			slot_publish_quiet(slot);
			if (w->npend++ == 0)
				w->pend_step = step;
			if (w->npend >= LAZY_MAX)
				reader_flush(w);
		} else {
			slot_publish(slot);
		}
		if (rc < 0) {
			pool_abort(p);
			break;
		}
	}
	reader_flush(w);
	if (reader_close_all(w) < 0)
		pool_abort(p);
}

/* A reader thread: one epoch each time epoch_seq moves, until quit. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->pool;
	uint32_t seen = 0, e;

	for (;;) {
		while ((e = atomic_load_explicit(&p->epoch_seq, memory_order_acquire)) == seen)
			futex_wait(&p->epoch_seq, seen);
		seen = e;
		if (p->quit)
			return NULL;
		worker_epoch(w);
		if (atomic_fetch_sub(&p->running, 1) == 1)
			futex_wake(&p->running);
	}
}

/* The trainer's pending wake-ups: slots of steps tpend_step .. + tnpend freed quietly. */
static void trainer_flush(struct pool *p)
{
	/* A slot freed twice needs one wake: at most the ring's last nslots. */
	unsigned n = p->tnpend < p->nslots ? p->tnpend : p->nslots;

	for (unsigned i = p->tnpend - n; i < p->tnpend; i++)
		slot_wake(&p->slots[(p->tpend_step + i) % p->nslots]);
	p->tnpend = 0;
}

/* Trainer reads (pool_init says when): the readers share the trainer's CPUs and the trainer
 * only consumes, so waking a reader and sleeping until it hands the batch over costs two context
 * switches on that CPU, and nothing else can run meanwhile. So when the trainer's next batch is
 * not there and no reader has started it (its slot free, not claimed), the trainer reads it
 * itself, with reader state of its own, exactly as a reader would (the same samples, order,
 * buffer and verification; its reads count in the same figures, and summary.json "binding"
 * counts these batches). The ring, the batch order and the memory bound are unchanged. */
static int trainer_read(struct pool *p, struct slot *slot, uint64_t step, uint64_t *t_ready)
{
	struct worker *tw = &p->workers[p->nworkers];
	int rc = fill_batch(tw, slot, step);

	*t_ready = timer_now_ns(); /* the read started when the trainer's last step ended */
	worker_tl_read(tw, p->step_end, *t_ready);
	slot->rc = rc;
	atomic_fetch_add_explicit(&slot->turn, 1, memory_order_release); /* filled */
	p->trainer_batches++;
	return rc;
}

/* Trainer side: waits for step's batch (or reads it, see trainer_read, and then sets *t_ready).
 * Returns the slot or NULL with *rc set. */
static struct slot *batch_take(struct pool *p, uint64_t step, int *rc, uint64_t *t_ready)
{
	struct slot *slot = &p->slots[step % p->nslots];
	uint32_t want = step_turn(p, step);

	if (trainer_reads_now(p)) {
		uint32_t t = atomic_load_explicit(&slot->turn, memory_order_acquire);
		if (t & TURN_ABORT) /* a reader failed: slot_wait returns its error */
			t = want + 1;
		if (t == want && slot_claim(slot, step)) {
			*rc = trainer_read(p, slot, step, t_ready);
			return *rc < 0 ? NULL : slot;
		}
		if (t <= want) /* a reader is at it: the trainer waits, so no wake stays pending */
			trainer_flush(p);
	}
	if (slot_wait(p, &p->trainer_spin, slot, want + 1)) {
		*rc = slot->rc;
	} else {
		pthread_mutex_lock(&p->run->err.lock);
		*rc = p->run->err.code ? p->run->err.code : -FB_EINTR;
		pthread_mutex_unlock(&p->run->err.lock);
	}
	return *rc < 0 ? NULL : slot;
}

/* Frees step's slot for its reader. Lazily (the readers share the trainer's CPUs): no wake-up
 * while the next batch is already there, up to LAZY_MAX slots. */
static void batch_release(struct pool *p, uint64_t step)
{
	struct slot *slot = &p->slots[step % p->nslots];

	if (!p->lazy_wake) {
		slot_publish(slot);
		return;
	}
	slot_publish_quiet(slot);
	if (p->tnpend++ == 0)
		p->tpend_step = step;
	if (trainer_reads_now(p))
		return; /* batch_take flushes before it waits */
	struct slot *next = &p->slots[(step + 1) % p->nslots];
	bool ready = step + 1 < p->nsteps &&
		     (atomic_load_explicit(&next->turn, memory_order_acquire) & TURN_MASK) ==
			 step_turn(p, step + 1) + 1;
	if (!ready || p->tnpend >= LAZY_MAX)
		trainer_flush(p);
}

/* Sets the epoch's steps and wakes the readers. */
static void pool_start(struct pool *p, uint64_t nsteps)
{
	p->nsteps = nsteps;
	atomic_store(&p->abort, 0);
	for (unsigned i = 0; i < p->nslots; i++) {
		atomic_store(&p->slots[i].turn, 0);
		atomic_store(&p->slots[i].claim, 0);
		p->slots[i].rc = 0;
	}
	atomic_store(&p->running, p->nstarted);
	atomic_fetch_add_explicit(&p->epoch_seq, 1, memory_order_release);
	futex_wake(&p->epoch_seq);
}

/* Ends the epoch: readers still waiting leave (a failure stopped it early), and the trainer
 * waits until every reader is back between epochs. */
static void pool_stop(struct pool *p)
{
	uint32_t r;

	p->tnpend = 0; /* pool_abort wakes every slot */
	pool_abort(p);
	while ((r = atomic_load_explicit(&p->running, memory_order_acquire)) != 0)
		futex_wait(&p->running, r);
}

/* ---- collective reads: the trainer reads each batch itself ---------------------------- */

static bool collective_mode(const struct run *run)
{
	/* A format that does its own I/O (HDF5) says collective through its own key. */
	if (run->format->caps & FORMAT_CAP_OWNS_IO)
		return run->format->read_collective &&
		       run->cfg.hdf5.transfer == HDF5_TRANSFER_COLLECTIVE &&
		       run->cfg.dataset.file_access == FILE_ACCESS_SHARED;
	return run->cfg.mpiio.collective;
}

/* Every rank calls this for every step up to the largest step count (count may be 0), and for
 * every file in the same order, so the collective calls match. */
static int collective_batch(struct pool *p, struct worker *w, struct slot *slot, uint64_t step)
{
	struct run *run = p->run;
	struct coll_scratch *c = &p->coll;
	uint64_t first = 0, count = 0;
	int rc = 0;

	if (step < p->s->steps)
		sampler_batch(p->s, step, &first, &count);
	slot->bytes = 0;
	/* Which files this step touches on any rank: collective calls only for those, in the
	 * same order everywhere. */
	memset(c->mine, 0, c->words * sizeof(*c->mine));
	for (uint64_t j = 0; j < count; j++) {
		uint64_t index;
		struct ds_file *file =
		    dataset_file_of(&run->ds, sampler_sample(p->s, first + j), &index);
		c->file[j] = file->index;
		c->index[j] = index;
		c->mine[file->index / 64] |= 1ull << (file->index % 64);
	}
	agree_allreduce(run, c->mine, c->all, (int)c->words, MPI_UINT64_T, MPI_BOR);
	for (uint32_t f = 0; f < run->ds.nfiles; f++) {
		if (!(c->all[f / 64] & (1ull << (f % 64))))
			continue;
		struct ds_file *file = dataset_file(&run->ds, f); /* collective: every file held */
		uint64_t n = 0;
		for (uint64_t j = 0; j < count; j++) {
			if (c->file[j] != f)
				continue;
			c->idx[n] = c->index[j];
			c->out[n] = (char *)slot->buf + j * p->sample_cap;
			if (run->cfg.dataset.verify)
				memset(c->out[n], SAMPLE_POISON, file->max_sample);
			n++;
		}
		/* A failed rank still takes part, with nothing to read. */
		int crc = run->format->read_collective
			      ? run->format->read_collective(run, file, c->idx, rc ? 0 : n, c->out,
							     p->sample_cap, c->lens, &w->io)
			      : collective_read(run, file, c->idx, rc ? 0 : n, c->out,
						p->sample_cap, c->lens, &w->io);
		if (rc == 0)
			rc = crc;
		for (uint64_t j = 0; j < n && rc == 0; j++) {
			slot->bytes += c->lens[j];
			w->stats.samples++;
			if (run->cfg.dataset.verify)
				rc = verify_sample(run, file, c->idx[j], c->out[j], c->lens[j]);
		}
	}
	return rc;
}

/* ---- epochs ---------------------------------------------------------------------------- */

static double timeval_diff_s(const struct timeval *a, const struct timeval *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_usec - a->tv_usec) / 1e6;
}

struct epoch_ctx {
	struct run *run;
	struct pool *pool;
	struct sampler *s;
	struct train_result *res;
	uint64_t rng;	 /* compute-time variates */
	uint64_t gstep0; /* checkpoint_every_steps: steps every rank had in earlier epochs */
	bool eval;	 /* an evaluation pass (eval_enter): no checkpoints inside it */
};

/* Step barrier: the allreduce a data-parallel step ends with; it also carries failure. */
static int step_barrier(struct run *run, int rc, uint64_t *ns)
{
	int in = rc < 0 ? 1 : 0, out = 0;
	uint64_t t0 = timer_now_ns();

	agree_allreduce(run, &in, &out, 1, MPI_INT, MPI_MAX);
	*ns = timer_now_ns() - t0;
	if (rc == 0 && out)
		return run_fail(run, -FB_EPEER, "stopped because another rank failed");
	return rc;
}

/* Records one step's timings (only steps this rank has; warm-up steps are left out of AU and
 * data wait). pre_ns: the agreement before a collective read, which is neither wait nor
 * compute. */
static void step_account(struct epoch_ctx *e, struct epoch_rank *er, uint64_t step, uint64_t t0,
			 uint64_t prev, uint64_t pre_ns, uint64_t t_ready, uint64_t t_done,
			 uint64_t t_end, uint64_t post_ns, double secs, const struct step_times *st)
{
	struct timeline_event *tl = e->res->timeline;
	int *n = &e->res->ntimeline;
	double tb = e->pool->time_base;

	if (pre_ns)
		tl_add(tl, n, TIMELINE_MAX, 0, TL_BARRIER, tb + timer_ns_to_s(prev - t0),
		       tb + timer_ns_to_s(prev + pre_ns - t0));
	tl_add(tl, n, TIMELINE_MAX, 0, TL_WAIT, tb + timer_ns_to_s(prev + pre_ns - t0),
	       tb + timer_ns_to_s(t_ready - t0));
	tl_add(tl, n, TIMELINE_MAX, 0, TL_COMPUTE, tb + timer_ns_to_s(t_ready - t0),
	       tb + timer_ns_to_s(t_done - t0));
	if (post_ns)
		tl_add(tl, n, TIMELINE_MAX, 0, TL_BARRIER, tb + timer_ns_to_s(t_done - t0),
		       tb + timer_ns_to_s(t_end - t0));
	er->steps++;
	if (step < (uint64_t)e->run->cfg.train.exclude_start_steps)
		return;
	er->compute_s += timer_ns_to_s(st->busy_ns);
	er->conf_s += secs;
	er->step_s += timer_ns_to_s(t_end - prev);
	er->barrier_s += timer_ns_to_s(pre_ns + post_ns);
	er->copy_s += timer_ns_to_s(st->copy_ns);
	er->copy_bytes += st->copy_bytes;
	hist_add(&er->wait, t_ready - prev - pre_ns);
}

static void epoch_progress(struct epoch_ctx *e, struct progress *pg, uint64_t step, uint64_t total,
			   uint64_t t0)
{
	struct pool *p = e->pool;
	uint64_t bytes = 0;
	char extra[64];

	if (!progress_due(pg))
		return;
	for (unsigned i = 0; i < p->nall; i++)
		bytes += atomic_load_explicit(&p->workers[i].progress_bytes, memory_order_relaxed);
	snprintf(extra, sizeof(extra), "%.0f MiB/s (rank 0)",
		 (double)bytes / 1048576.0 / timer_ns_to_s(timer_now_ns() - t0 + 1));
	progress_update(pg, (double)(step + 1) / (double)total, extra);
}

/* In a log (not a terminal), one line per epoch, rank 0 only, flushed as it ends, so a long run
 * under mpiexec shows where it is; a terminal has the bar instead. Rank 0's own figures: no
 * collective is added for it. */
static void epoch_line(const struct progress *pg, const char *what, const struct epoch_rank *er,
		       uint64_t bytes)
{
	if (!pg->active || pg->tty)
		return;
	fprintf(stderr, "feedbench: %s done in %.2f s: %.1f MiB/s, AU %.1f %% (rank 0)\n", what,
		er->wall_s, er->wall_s > 0 ? (double)bytes / 1048576.0 / er->wall_s : 0,
		er->step_s > 0 ? 100 * er->compute_s / er->step_s : 0);
	fflush(stderr);
}

/* One epoch. With reader threads, a failed rank tells the others (agree_notify_failure) and
 * they stop at their next step; with step barriers or collective reads, the failure travels
 * in the agreement every rank makes at the same step, so all leave the loop together and no
 * collective call is left unmatched. */
static int epoch_run(struct epoch_ctx *e, int epoch, struct epoch_rank *er)
{
	struct run *run = e->run;
	struct pool *p = e->pool;
	struct sampler *s = e->s;
	const struct config *cfg = &run->cfg;
	bool coll = collective_mode(run);
	struct worker *tw = &p->workers[0]; /* collective mode reads on the trainer */
	struct progress pg;
	uint64_t total, step = 0;
	double ck_s = 0; /* checkpoints inside this epoch: blocked time */
	bool ck_agreed = false;
	char what[64];
	int rc;

	memset(er, 0, sizeof(*er));
	rc = sampler_epoch(s, run, epoch, run->rank, run->nranks);
	/* every rank evicts (a collective count), whatever its sampler said */
	int erc = evict_dataset(run, !e->eval);
	if (rc == 0)
		rc = erc;
	if ((rc = agree(run, rc)) < 0)
		return rc;
	total = coll ? s->max_steps : s->steps;
	for (unsigned i = 0; i < p->nall; i++) {
		io_stats_reset(&p->workers[i].stats);
		atomic_store(&p->workers[i].progress_bytes, 0);
	}

	if (e->eval)
		snprintf(what, sizeof(what), "evaluation after epoch %d", epoch + 1);
	else
		snprintf(what, sizeof(what), "epoch %d/%" PRId64, epoch + 1, cfg->train.epochs);
	progress_begin(&pg, what, run->rank == 0 && run->verbose >= 0);
	MPI_Barrier(run->comm);
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	uint64_t t0 = timer_now_ns(), prev = t0;
	p->epoch_t0 = p->step_end = t0;
	tl_add(e->res->timeline, &e->res->ntimeline, TIMELINE_MAX, 0, TL_EPOCH, p->time_base,
	       p->time_base);
	if (!coll)
		pool_start(p, s->steps);
	for (; step < total && (coll || rc == 0); step++) {
		struct slot *slot = NULL;
		struct step_times st = {0};
		uint64_t pre_ns = 0, post_ns = 0, t_ready = 0, t_done;
		bool mine = step < s->steps;
		double secs = 0;

		if (coll) {
			/* Agree before each collective batch: a failed rank never leaves the
			 * others waiting inside a collective read. */
			if ((rc = step_barrier(run, rc, &pre_ns)) < 0)
				break;
			slot = &p->slots[0];
			rc = collective_batch(p, tw, slot, step);
		} else {
			slot = batch_take(p, step, &rc, &t_ready);
		}
		if (!t_ready)
			t_ready = timer_now_ns();
		if (rc == 0 && mine) {
			secs = compute_step_seconds(cfg->train.computation_time,
						    cfg->train.computation_time_stdev, &e->rng);
			rc =
			    run->compute_ops->step(run->compute, slot->buf, slot->bytes, secs, &st);
		}
		t_done = timer_now_ns();
		if (!coll && slot)
			batch_release(p, step);
		if (rc == 0 && run->stop && *run->stop)
			rc = run_fail(run, -FB_EINTR, "interrupted by a signal");
		if (rc < 0 && !coll)
			agree_notify_failure(run);
		if (cfg->train.step_barrier && step < s->min_steps) {
			/* Every rank has this step: the allreduce of data-parallel training. */
			rc = step_barrier(run, rc, &post_ns);
			if (rc < 0 && coll) {
				step++;
				break;
			}
		} else if (rc == 0 && !coll && agree_peer_failed(run)) {
			rc = run_fail(run, -FB_EPEER, "stopped because another rank failed");
		}
		if (!e->eval && step < s->min_steps &&
		    checkpoint_train_due_step(run, e->gstep0 + step + 1)) {
			/* A step every rank has: all agree they are healthy, then save; the step's
			 * time includes the checkpoint (AU's denominator, the epoch's wall). */
			double b,
			    mean = (timer_ns_to_s(timer_now_ns() - t0) - ck_s) / (double)(step + 1);
			rc = checkpoint_train_step(run, rc, mean, &b);
			ck_s += b;
			ck_agreed = rc < 0;
			if (rc < 0 && coll) {
				step++;
				break;
			}
		}
		uint64_t t_end = timer_now_ns();
		if (mine)
			step_account(e, er, step, t0, prev, pre_ns, t_ready, t_done, t_end, post_ns,
				     secs, &st);
		prev = p->step_end = t_end;
		watchdog_kick_at(run, t_end);
		if (s->steps)
			epoch_progress(e, &pg, step, total, t0);
	}
	/* Collective mode: a failure in the last step still needs its matching agreement. */
	if (coll && step == total) {
		uint64_t ns;
		rc = step_barrier(run, rc, &ns);
	}
	if (rc < 0 && !coll)
		agree_notify_failure(run);
	if (rc < 0 && !coll && !ck_agreed) /* the others may wait at a checkpoint's agreement */
		rc = checkpoint_train_catchup(run, rc, e->gstep0 + step, e->gstep0 + s->min_steps);
	if (!coll)
		pool_stop(p);
	if (p->trainer_reads) {
		int crc = reader_close_all(&p->workers[p->nworkers]);
		if (rc == 0 && crc < 0)
			rc = crc;
	}
	uint64_t t1 = timer_now_ns();
	getrusage(RUSAGE_SELF, &ru1);
	progress_end(&pg);
	er->wall_s = timer_ns_to_s(t1 - t0);
	uint64_t line_bytes = 0;
	for (unsigned i = 0; i < p->nall; i++)
		line_bytes += p->workers[i].stats.bytes;
	epoch_line(&pg, what, er, line_bytes);
	er->cpu_user_s = timeval_diff_s(&ru0.ru_utime, &ru1.ru_utime);
	er->cpu_sys_s = timeval_diff_s(&ru0.ru_stime, &ru1.ru_stime);
	p->time_base += er->wall_s;
	for (unsigned i = 0; i < p->nall; i++)
		io_stats_merge(&er->io, &p->workers[i].stats);
	if (rc == 0 && run->err.code && !coll)
		rc = run->err.code; /* a reader failed while closing its files */
	return agree(run, rc);
}

/* ---- set-up ---------------------------------------------------------------------------- */

static bool reads_file(const struct run *run, uint32_t i)
{
	return run->cfg.dataset.file_access == FILE_ACCESS_SHARED ||
	       (int)(i % (uint32_t)run->nranks) == run->rank;
}

static int open_shared(struct run *run)
{
	bool want = run->cfg.dataset.file_access == FILE_ACCESS_SHARED &&
		    run->cfg.storage.backend == BACKEND_MPIIO &&
		    !(run->format->caps & FORMAT_CAP_OWNS_IO);
	struct io io = {.run = run}; /* not measured: the epochs' opens are not these */
	int rc = 0;

	if (!want)
		return 0;
	/* Collective opens, in the same order on every rank; every rank opens every file even
	 * after a failure, so that none is left waiting in a collective open. */
	for (uint32_t k = 0; k < run->ds.nheld; k++) { /* shared: every file held */
		struct sfile *sf = NULL;
		int orc =
		    io_open(&io, &sf, run->ds.files[k].path, STORAGE_O_READ | STORAGE_O_SHARED);
		if (orc < 0 && rc == 0)
			rc = orc;
		run->ds.files[k].shared = orc < 0 ? NULL : sf;
	}
	return rc;
}

static int close_shared(struct run *run)
{
	struct io io = {.run = run};
	int rc = 0;

	for (uint32_t k = 0; k < run->ds.nheld; k++) {
		int crc = io_close(&io, run->ds.files[k].shared);
		if (crc < 0 && rc == 0)
			rc = crc;
		run->ds.files[k].shared = NULL;
	}
	return rc;
}

/* Queued reads (backend = uring): one queue per reader thread, the batch buffers registered
 * with it where the kernel allows. Formats whose samples are not plain byte ranges read one
 * sample at a time through the queue: said once. */
static int queue_init(struct run *run, struct pool *p, struct worker *w, size_t batch_bytes)
{
	unsigned depth = (unsigned)run->cfg.storage.io_depth;
	void **bufs;
	int rc = io_queue_open(&w->io, depth);

	if (rc < 0 || !w->io.queue)
		return rc;
	if (depth > 1 && !(run->format->caps & FORMAT_CAP_BYTE_RANGES) && w->id == 1 &&
	    run->rank == 0)
		run_warn(
		    run,
		    "io_depth = %u: format %s reads one sample at a time (depth 1); only "
		    "formats whose samples are byte ranges (raw) keep io_depth reads in flight",
		    depth, run->format->name);
	bufs = calloc(p->nslots, sizeof(*bufs));
	if (!bufs)
		return run_fail(run, -ENOMEM, "out of memory");
	for (unsigned i = 0; i < p->nslots; i++)
		bufs[i] = p->slots[i].buf;
	rc = io_queue_register(&w->io, bufs, batch_bytes, p->nslots);
	free(bufs);
	if (rc < 0 && w->id == 1 && run->rank == 0)
		run_warn(run,
			 "%s: batch buffers not registered with the ring (%s): reads pin pages "
			 "each time",
			 run->storage->name, fb_strerror(rc));
	/* Reads kept in flight across batches: at most every slot of the ring started. */
	if (depth > 1 && (run->format->caps & FORMAT_CAP_BYTE_RANGES) &&
	    bwin_init(&w->win, p->nslots) < 0)
		return run_fail(run, -ENOMEM, "out of memory");
	return 0;
}

/* Ring slots: read_threads x prefetch_size, or the whole batches prefetch_bytes holds, a
 * multiple of the thread count (each thread fills its own slots). */
static unsigned ring_slots(const struct config *cfg, bool coll, unsigned threads,
			   size_t batch_bytes)
{
	uint64_t per;

	if (coll)
		return 1;
	if (!cfg->reader.prefetch_bytes)
		return threads * (unsigned)cfg->reader.prefetch_size;
	per = cfg->reader.prefetch_bytes / batch_bytes / threads;
	if (per < 1)
		per = 1;
	if (per > UINT_MAX / 2 / threads)
		per = UINT_MAX / 2 / threads;
	return threads * (unsigned)per;
}

/* A reader's state: its I/O, stats and timeline (id 0: the trainer's own, trainer_reads). */
static int worker_init(struct run *run, struct pool *p, struct worker *w, int id, unsigned threads)
{
	const struct config *cfg = &run->cfg;

	w->pool = p;
	w->id = id;
	w->spin.limit_ns = SPIN_NS;
	w->io = (struct io){.run = run,
			    .stats = &w->stats,
			    .transfer = cfg->storage.transfer_size,
			    .direct = cfg->storage.direct};
	w->tlcap = TIMELINE_MAX / (int)(threads + 1);
	w->tl = calloc((size_t)w->tlcap, sizeof(*w->tl));
	return w->tl ? 0 : run_fail(run, -ENOMEM, "out of memory");
}

static int pool_init(struct run *run, struct pool *p, struct train_result *res)
{
	const struct config *cfg = &run->cfg;
	bool coll = collective_mode(run);
	unsigned threads = coll ? 1 : run->read_threads;
	unsigned nslots;
	size_t batch_bytes;

	memset(p, 0, sizeof(*p));
	p->run = run;
	/* Collective: every rank, before anything can fail. */
	struct cpu_binding bind;
	int brc = cpus_binding(run, threads + (coll ? 0 : 1), &bind, &res->binding);
	p->sample_cap = align_up(run->ds.max_sample, 4096);
	batch_bytes = p->sample_cap * (size_t)cfg->reader.batch_size;
	nslots = ring_slots(cfg, coll, threads, batch_bytes);
	p->slots = aligned_alloc(64, nslots * sizeof(*p->slots));
	if (p->slots)
		memset(p->slots, 0, nslots * sizeof(*p->slots));
	p->workers = calloc(threads + 1, sizeof(*p->workers));
	if (!p->slots || !p->workers)
		return run_fail(run, -ENOMEM, "out of memory");
	p->nslots = nslots;
	p->nworkers = threads;
	p->nall = threads;
	if (brc < 0)
		return run_fail(run, brc, "cannot read this rank's CPU affinity: %s",
				strerror(-brc));
	/* Spinning pays when every thread of the rank has a CPU of its own (its affinity mask
	 * shared with the ranks that overlap it, capped by its cgroup's CPU limit); under
	 * binding to one core it would take the core from the thread it waits for. */
	p->spin = !bind.readers_share;
	/* Lazy wake-ups only where the trainer is a pure consumer (no emulated compute, barrier or
	 * checkpoint between its batches): with compute, a reader held back by a deferred wake
	 * would lose the overlap that prefetching exists for, and a deferred hand-off would add
	 * to the trainer's data wait. And only on at most one CPU: with two or more, readers on
	 * other CPUs held back by a deferred wake sit idle (2 readers on 2 CPUs, cached 128 KiB:
	 * 8.4-9.5 GiB/s lazy, 8.9-11.9 prompt). */
	p->lazy_wake = bind.readers_share && bind.cpus < 2 && cfg->train.computation_time == 0 &&
		       cfg->train.computation_time_stdev == 0 && cfg->evaluation.eval_time == 0 &&
		       cfg->evaluation.eval_time_stdev == 0 && !cfg->train.step_barrier &&
		       !checkpoint_in_training(cfg) && cfg->train.accelerators_per_rank <= 1;
	p->trainer_spin.limit_ns = SPIN_NS;
	if (!coll && (double)threads > bind.cpus)
		run_warn(run,
			 "read_threads = %u exceed the CPUs this rank may use (%.3g: affinity mask "
			 "and cgroup limit; summary.json \"binding\"): the readers and the trainer "
			 "share them, which caps cached and fast-storage reads; launch with more "
			 "CPUs per rank (mpirun --bind-to none or --map-by ...:PE=%u, srun "
			 "--cpus-per-task=%u) or fewer read_threads",
			 threads, bind.cpus, threads + 1, threads + 1);
	for (unsigned i = 0; i < nslots; i++) {
		p->slots[i].buf = run->compute_ops->alloc_host(run->compute, batch_bytes);
		if (p->slots[i].buf) /* fault the pages in now, not during the first epoch */
			memset(p->slots[i].buf, 0, batch_bytes);
		if (!p->slots[i].buf)
			return run_fail(
			    run, -ENOMEM,
			    "cannot allocate batch buffers: %u x %zu bytes (read_threads "
			    "x prefetch_size, or prefetch_bytes, x batch)",
			    nslots, batch_bytes);
	}
	res->buffer_bytes = (double)nslots * (double)batch_bytes;
	if (coll) {
		struct coll_scratch *c = &p->coll;
		size_t b = (size_t)cfg->reader.batch_size;
		c->words = (run->ds.nfiles + 63) / 64;
		c->file = calloc(b, sizeof(*c->file));
		c->index = calloc(b, sizeof(*c->index));
		c->idx = calloc(b, sizeof(*c->idx));
		c->lens = calloc(b, sizeof(*c->lens));
		c->out = calloc(b, sizeof(*c->out));
		c->mine = calloc(c->words, sizeof(*c->mine));
		c->all = calloc(c->words, sizeof(*c->all));
		if (!c->file || !c->index || !c->idx || !c->lens || !c->out || !c->mine || !c->all)
			return run_fail(run, -ENOMEM, "out of memory");
	}
	for (unsigned i = 0; i < threads; i++) {
		struct worker *w = &p->workers[i];
		int rc = worker_init(run, p, w, (int)i + 1, threads);
		if (rc == 0 && !coll)
			rc = queue_init(run, p, w, batch_bytes);
		if (rc < 0)
			return rc;
	}
	/* Trainer reads where the trainer is a pure consumer on the readers' one CPU (lazy_wake),
	 * reading sample by sample (queued reads keep io_depth in flight
	 * across a thread's own batches, and a stream format's shards belong to one thread each:
	 * checked per epoch). */
	p->trainer_reads = p->lazy_wake && !coll && !p->workers[0].win.b;
	if (p->trainer_reads) {
		int rc = worker_init(run, p, &p->workers[threads], 0, threads);
		if (rc < 0)
			return rc;
		p->nall = threads + 1;
	}
	/* The readers live for the whole run; they wait for the first epoch. */
	for (unsigned i = 0; !coll && i < threads; i++) {
		int err = pthread_create(&p->workers[i].tid, NULL, worker_main, &p->workers[i]);
		if (err) /* pool_free() ends the threads that did start */
			return run_fail(run, -err, "cannot start reader thread: %s", strerror(err));
		p->nstarted++;
	}
	return 0;
}

static void pool_free(struct run *run, struct pool *p)
{
	if (p->nstarted) {
		p->quit = true;
		atomic_fetch_add_explicit(&p->epoch_seq, 1, memory_order_release);
		futex_wake(&p->epoch_seq);
		for (unsigned i = 0; i < p->nstarted; i++)
			pthread_join(p->workers[i].tid, NULL);
	}
	for (unsigned i = 0; p->slots && i < p->nslots; i++)
		if (p->slots[i].buf)
			run->compute_ops->free_host(run->compute, p->slots[i].buf);
	for (unsigned i = 0; p->workers && i < p->nall; i++) {
		io_queue_close(&p->workers[i].io);
		bwin_free(&p->workers[i].win);
		free(p->workers[i].tl);
	}
	free(p->slots);
	free(p->workers);
	free(p->coll.file);
	free(p->coll.index);
	free(p->coll.idx);
	free(p->coll.lens);
	free(p->coll.out);
	free(p->coll.mine);
	free(p->coll.all);
}

/* Appends the reader threads' timeline events after the trainer's. */
static void timeline_collect(struct pool *p, struct train_result *res)
{
	for (unsigned i = 0; i < p->nall; i++)
		for (int k = 0; k < p->workers[i].ntl && res->ntimeline < TIMELINE_MAX; k++)
			res->timeline[res->ntimeline++] = p->workers[i].tl[k];
}

/* Per-file indexes (offsets, members) of the files this rank reads, before the first timed
 * read. */
static int index_files(struct run *run)
{
	int rc = 0;

	for (uint32_t k = 0; rc == 0 && run->format->index && k < run->ds.nheld; k++)
		if (reads_file(run, run->ds.files[k].index) && !run->ds.files[k].meta)
			rc = run->format->index(run, &run->ds.files[k]);
	return rc;
}

/* The evaluation pass's own sampler, reader threads and batch buffers (sized for its batch and
 * samples), made with the evaluation set in place; its threads wait while training runs. */
struct eval_state {
	bool on;
	struct sampler s;
	struct pool p;
	bool pool_made, sampler_made;
};

static int eval_setup(struct run *run, struct eval_state *ev, struct train_result *res)
{
	struct train_result scratch = {0};
	struct eval_swap sw;
	int rc;

	memset(ev, 0, sizeof(*ev));
	if (!eval_enabled(&run->cfg))
		return 0;
	ev->on = true;
	res->eval = calloc((size_t)res->epochs, sizeof(*res->eval));
	res->eval_epoch = calloc((size_t)res->epochs, sizeof(*res->eval_epoch));
	eval_enter(run, &sw);
	rc = !res->eval || !res->eval_epoch ? run_fail(run, -ENOMEM, "out of memory") : 0;
	if (rc == 0 && (rc = sampler_init(&ev->s, run)) == 0)
		ev->sampler_made = true;
	if (rc == 0)
		rc = index_files(run);
	if ((rc = agree(run, rc)) == 0)
		rc = agree(run, open_shared(run));
	if (rc == 0) {
		rc = pool_init(run, &ev->p, &scratch);
		ev->pool_made = true;
		res->buffer_bytes += scratch.buffer_bytes;
		json_decref(scratch.binding);
		rc = agree(run, rc);
	}
	eval_leave(run, &sw);
	return rc;
}

static void eval_teardown(struct run *run, struct eval_state *ev, struct train_result *res)
{
	struct eval_swap sw;

	if (!ev->on)
		return;
	eval_enter(run, &sw);
	if (ev->pool_made) {
		timeline_collect(&ev->p, res);
		pool_free(run, &ev->p);
	}
	if (ev->sampler_made)
		sampler_free(&ev->s);
	int crc = close_shared(run);
	eval_leave(run, &sw);
	if (crc < 0 && run->err.code == 0)
		run_fail(run, crc, "cannot close the evaluation files");
}

/* One evaluation pass after training epoch ep: every rank reads its share of the evaluation
 * set once, with eval_time of compute per batch, as an epoch of its own. Training's reader
 * threads are idle between epochs while the evaluation set is in run->ds. */
static int eval_pass(struct epoch_ctx *train, struct eval_state *ev, int ep)
{
	struct run *run = train->run;
	struct train_result *res = train->res;
	struct eval_swap sw;
	struct epoch_ctx e = {run, &ev->p, &ev->s, res, train->rng ^ 0x6576616cULL, 0, true};
	int rc;

	ev->p.s = &ev->s;
	ev->p.time_base = train->pool->time_base;
	eval_enter(run, &sw);
	rc = epoch_run(&e, ep, &res->eval[res->nevals]);
	eval_leave(run, &sw);
	train->pool->time_base = ev->p.time_base;
	train->rng = e.rng ^ 0x6576616cULL;
	res->eval_epoch[res->nevals++] = ep;
	return rc;
}

/* ---- accelerators_per_rank = K > 1 ------------------------------------------------------ */

/* K emulated accelerators on this rank, each with its own loader (sampler, reader threads, batch
 * ring) and the share of the samples of accelerator a = k x ranks + rank out of ranks x K (so a
 * rank's accelerators read only the files the rank holds, i % ranks == rank). They step
 * together: each step takes every accelerator's batch, copies each, and computes once for all
 * (the K devices compute in parallel; the CPU emulation waits computation_time once). An
 * accelerator whose batch came early waits for the others: that wait counts as barrier time,
 * as it would at the gradient allreduce. */
struct multi {
	int k;
	struct sampler *s; /* [k] */
	struct pool *p;	   /* [k] */
	int nsampler, npool;
};

static int multi_epoch(struct epoch_ctx *e, struct multi *m, int epoch, struct epoch_rank *er,
		       struct epoch_rank *acc)
{
	struct run *run = e->run;
	const struct config *cfg = &run->cfg;
	int K = m->k, P = run->nranks, rc = 0;
	uint64_t total = 0, min_steps, step = 0;
	struct progress pg;
	char what[64];

	memset(er, 0, sizeof(*er));
	for (int k = 0; k < K; k++)
		memset(&acc[k], 0, sizeof(acc[k]));
	for (int k = 0; k < K && rc == 0; k++)
		rc = sampler_epoch(&m->s[k], run, epoch, k * P + run->rank, P * K);
	int erc = evict_dataset(run, true);
	if (rc == 0)
		rc = erc;
	if ((rc = agree(run, rc)) < 0)
		return rc;
	min_steps = m->s[0].min_steps;
	for (int k = 0; k < K; k++) {
		if (m->s[k].steps > total)
			total = m->s[k].steps;
		for (unsigned i = 0; i < m->p[k].nworkers; i++) {
			io_stats_reset(&m->p[k].workers[i].stats);
			atomic_store(&m->p[k].workers[i].progress_bytes, 0);
		}
	}
	snprintf(what, sizeof(what), "epoch %d/%" PRId64, epoch + 1, cfg->train.epochs);
	progress_begin(&pg, what, run->rank == 0 && run->verbose >= 0);
	MPI_Barrier(run->comm);
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	uint64_t t0 = timer_now_ns(), prev = t0;
	for (int k = 0; k < K; k++) {
		m->p[k].epoch_t0 = t0;
		pool_start(&m->p[k], m->s[k].steps);
	}
	struct slot **slot = calloc((size_t)K, sizeof(*slot));
	uint64_t *ready = calloc((size_t)K, sizeof(*ready));
	struct step_times *st = calloc((size_t)K, sizeof(*st));
	if (!slot || !ready || !st)
		rc = run_fail(run, -ENOMEM, "out of memory");
	for (; step < total && rc == 0; step++) {
		struct step_times sc = {0};
		uint64_t post_ns = 0, t_ready, t_done, t_end;
		double secs = 0;
		bool any = false;

		for (int k = 0; k < K; k++) {
			slot[k] = NULL;
			memset(&st[k], 0, sizeof(st[k]));
			if (rc == 0 && step < m->s[k].steps) {
				ready[k] = 0;
				slot[k] = batch_take(&m->p[k], step, &rc, &ready[k]);
				if (!ready[k])
					ready[k] = timer_now_ns();
				any = true;
			}
		}
		t_ready = timer_now_ns();
		for (int k = 0; k < K && rc == 0; k++)
			if (slot[k])
				rc = run->compute_ops->step(run->compute, slot[k]->buf,
							    slot[k]->bytes, 0, &st[k]);
		if (rc == 0 && any) {
			secs = compute_step_seconds(cfg->train.computation_time,
						    cfg->train.computation_time_stdev, &e->rng);
			rc = run->compute_ops->step(run->compute, NULL, 0, secs, &sc);
		}
		t_done = timer_now_ns();
		for (int k = 0; k < K; k++)
			if (slot[k])
				batch_release(&m->p[k], step);
		if (rc == 0 && run->stop && *run->stop)
			rc = run_fail(run, -FB_EINTR, "interrupted by a signal");
		if (rc < 0)
			agree_notify_failure(run);
		if (cfg->train.step_barrier && step < min_steps)
			rc = step_barrier(run, rc, &post_ns);
		else if (rc == 0 && agree_peer_failed(run))
			rc = run_fail(run, -FB_EPEER, "stopped because another rank failed");
		t_end = timer_now_ns();
		double copy_all = 0;
		for (int k = 0; k < K; k++)
			copy_all += timer_ns_to_s(st[k].copy_ns);
		if (any) {
			tl_add(e->res->timeline, &e->res->ntimeline, TIMELINE_MAX, 0, TL_WAIT,
			       m->p[0].time_base + timer_ns_to_s(prev - t0),
			       m->p[0].time_base + timer_ns_to_s(t_ready - t0));
			tl_add(e->res->timeline, &e->res->ntimeline, TIMELINE_MAX, 0, TL_COMPUTE,
			       m->p[0].time_base + timer_ns_to_s(t_ready - t0),
			       m->p[0].time_base + timer_ns_to_s(t_done - t0));
			er->steps++;
		}
		for (int k = 0; k < K; k++) {
			struct epoch_rank *a = &acc[k];
			if (!slot[k])
				continue;
			a->steps++;
			if (step < (uint64_t)cfg->train.exclude_start_steps)
				continue;
			double copy_k = timer_ns_to_s(st[k].copy_ns);
			a->compute_s += timer_ns_to_s(sc.busy_ns);
			a->conf_s += secs;
			a->step_s += timer_ns_to_s(t_end - prev);
			a->copy_s += copy_k;
			a->copy_bytes += st[k].copy_bytes;
			/* waiting for the other accelerators' batches and copies: lock-step */
			a->barrier_s +=
			    timer_ns_to_s(post_ns + (t_ready - ready[k])) + copy_all - copy_k;
			hist_add(&a->wait, ready[k] - prev);
		}
		prev = t_end;
		watchdog_kick_at(run, t_end);
		if (total)
			progress_update(&pg, (double)(step + 1) / (double)total, NULL);
	}
	if (rc < 0)
		agree_notify_failure(run);
	for (int k = 0; k < K; k++)
		pool_stop(&m->p[k]);
	free(slot);
	free(ready);
	free(st);
	uint64_t t1 = timer_now_ns();
	getrusage(RUSAGE_SELF, &ru1);
	progress_end(&pg);
	er->wall_s = timer_ns_to_s(t1 - t0);
	er->cpu_user_s = timeval_diff_s(&ru0.ru_utime, &ru1.ru_utime);
	er->cpu_sys_s = timeval_diff_s(&ru0.ru_stime, &ru1.ru_stime);
	/* The rank's figures: its loaders' reads summed, its accelerators' times averaged (they
	 * share the step timeline), every accelerator's data waits in one histogram. */
	for (int k = 0; k < K; k++) {
		struct epoch_rank *a = &acc[k];
		a->wall_s = er->wall_s;
		for (unsigned i = 0; i < m->p[k].nworkers; i++)
			io_stats_merge(&a->io, &m->p[k].workers[i].stats);
		io_stats_merge(&er->io, &a->io);
		er->compute_s += a->compute_s / K;
		er->conf_s += a->conf_s / K;
		er->step_s += a->step_s / K;
		er->barrier_s += a->barrier_s / K;
		er->copy_s += a->copy_s / K;
		er->copy_bytes += a->copy_bytes;
		hist_merge(&er->wait, &a->wait);
		m->p[k].time_base += er->wall_s;
	}
	epoch_line(&pg, what, er, er->io.bytes);
	if (rc == 0 && run->err.code)
		rc = run->err.code;
	return agree(run, rc);
}

static int train_run_multi(struct run *run, struct train_result *res)
{
	const struct config *cfg = &run->cfg;
	struct multi m = {.k = (int)cfg->train.accelerators_per_rank};
	int rc = 0;
	uint64_t t0 = timer_now_ns();

	memset(res, 0, sizeof(*res));
	res->epochs = (int)cfg->train.epochs;
	res->naccel = m.k;
	res->per_epoch = calloc((size_t)res->epochs, sizeof(*res->per_epoch));
	res->accel = calloc((size_t)res->epochs * (size_t)m.k, sizeof(*res->accel));
	res->timeline = calloc(TIMELINE_MAX, sizeof(*res->timeline));
	m.s = calloc((size_t)m.k, sizeof(*m.s));
	m.p = calloc((size_t)m.k, sizeof(*m.p));
	if (!res->per_epoch || !res->accel || !res->timeline || !m.s || !m.p)
		rc = run_fail(run, -ENOMEM, "out of memory");
	else if (strcmp(run->compute_ops->name, "cpu") != 0)
		rc = run_fail(run, -FB_ECONFIG,
			      "%s: accelerators_per_rank = %d needs the CPU emulation; accelerator "
			      "%s emulates one device per rank (set accelerator = cpu)",
			      cfg->source, m.k, run->compute_ops->name);
	for (int k = 0; rc == 0 && k < m.k; k++)
		if ((rc = sampler_init(&m.s[k], run)) == 0)
			m.nsampler++;
	if (rc == 0)
		rc = index_files(run);
	if ((rc = agree(run, rc)) == 0)
		rc = agree(run, open_shared(run));
	for (int k = 0; rc == 0 && k < m.k; k++) {
		struct train_result scratch = {0};
		rc = pool_init(run, &m.p[k], &scratch);
		m.npool++;
		res->buffer_bytes += scratch.buffer_bytes;
		if (k == 0)
			res->binding = scratch.binding;
		else
			json_decref(scratch.binding);
		m.p[k].s = &m.s[k];
		rc = agree(run, rc);
	}
	res->setup_s = timer_ns_to_s(timer_now_ns() - t0);
	if (rc == 0 && run->rank == 0)
		run_warn(
		    run,
		    "accelerators_per_rank = %d: %d loaders of %u reader threads each, %u reader "
		    "threads and one trainer per rank (summary.json \"binding\" counts one "
		    "loader's threads)",
		    m.k, m.k, m.p[0].nworkers, (unsigned)m.k * m.p[0].nworkers);
	if (rc == 0) {
		struct epoch_ctx e = {run,
				      &m.p[0],
				      &m.s[0],
				      res,
				      (uint64_t)cfg->dataset.seed * 31 + 7 + (uint64_t)run->rank,
				      0,
				      false};
		for (int ep = 0; ep < res->epochs && rc == 0; ep++)
			rc = multi_epoch(&e, &m, ep, &res->per_epoch[ep],
					 &res->accel[(size_t)ep * (size_t)m.k]);
	}
	for (int k = 0; k < m.npool; k++) {
		if (k == 0)
			timeline_collect(&m.p[k], res);
		pool_free(run, &m.p[k]);
	}
	for (int k = 0; k < m.nsampler; k++)
		sampler_free(&m.s[k]);
	free(m.s);
	free(m.p);
	int crc = close_shared(run);
	return agree(run, rc ? rc : crc);
}

/* summary.json "binding": whether the trainer reads a batch no reader has started, and how many
 * it read (all ranks, training and evaluation). Collective. */
static void binding_trainer_reads(struct run *run, struct train_result *res, bool on,
				  unsigned long long batches)
{
	unsigned long long all = 0;

	MPI_Reduce(&batches, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, run->comm);
	if (!res->binding)
		return;
	json_object_set_new(res->binding, "trainer_reads", json_boolean(on));
	json_object_set_new(res->binding, "trainer_read_batches", json_integer((json_int_t)all));
}

int train_run(struct run *run, struct train_result *res)
{
	const struct config *cfg = &run->cfg;
	struct sampler s;
	struct pool p;
	struct eval_state ev;
	int rc = 0;
	uint64_t t0 = timer_now_ns();

	if (cfg->train.accelerators_per_rank > 1)
		return train_run_multi(run, res);
	memset(res, 0, sizeof(*res));
	memset(&ev, 0, sizeof(ev));
	res->epochs = (int)cfg->train.epochs;
	res->per_epoch = calloc((size_t)res->epochs, sizeof(*res->per_epoch));
	res->timeline = calloc(TIMELINE_MAX, sizeof(*res->timeline));
	if (!res->per_epoch || !res->timeline)
		rc = run_fail(run, -ENOMEM, "out of memory");
	if (rc == 0)
		rc = sampler_init(&s, run);
	if (rc == 0)
		rc = index_files(run);
	if ((rc = agree(run, rc)) < 0)
		return rc;
	rc = open_shared(run);
	if ((rc = agree(run, rc)) < 0) {
		close_shared(run);
		return rc;
	}
	rc = pool_init(run, &p, res);
	if ((rc = agree(run, rc)) == 0)
		rc = eval_setup(run, &ev, res);
	res->setup_s = timer_ns_to_s(timer_now_ns() - t0);
	if (rc == 0) {
		struct epoch_ctx e = {
		    run, &p,   &s, res, (uint64_t)cfg->dataset.seed * 31 + 7 + (uint64_t)run->rank,
		    0,	 false};
		p.s = &s;
		for (int ep = 0; ep < res->epochs && rc == 0; ep++) {
			struct epoch_rank *er = &res->per_epoch[ep];
			double b = 0;
			rc = epoch_run(&e, ep, er);
			e.gstep0 += s.min_steps;
			/* Between epochs every rank agreed: the checkpoint's collectives match. Its
			 * blocked time counts in the epoch's wall time and its last step's time. */
			if (rc == 0)
				rc = checkpoint_train_epoch(run, ep, er->wall_s, er->steps, &b);
			er->wall_s += b;
			er->step_s += b;
			/* The evaluation pass is timed apart: training's figures leave it out. */
			if (rc == 0 && eval_due(cfg, ep))
				rc = eval_pass(&e, &ev, ep);
		}
		timeline_collect(&p, res);
	}
	/* Async checkpoints: the last one is made durable before the run ends. */
	rc = checkpoint_train_end(run, rc);
	unsigned long long tb = p.trainer_batches + (ev.pool_made ? ev.p.trainer_batches : 0);
	bool treads = p.trainer_reads;
	eval_teardown(run, &ev, res);
	pool_free(run, &p);
	sampler_free(&s);
	int crc = close_shared(run);
	if ((rc = agree(run, rc ? rc : crc)) == 0)
		binding_trainer_reads(run, res, treads, tb);
	return rc;
}

void train_result_free(struct train_result *res)
{
	json_decref(res->binding);
	free(res->per_epoch);
	free(res->eval);
	free(res->eval_epoch);
	free(res->accel);
	free(res->timeline);
	memset(res, 0, sizeof(*res));
}
