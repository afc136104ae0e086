/* Training's reader pool: the hand-offs between reader threads and the trainer, reading one
 * sample, the trainer's side (train_pool.h). The reader threads themselves are
 * train_readers.c's. */
#include "train_pool.h"

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
#include "../formats/format.h"
#include "../bench/timer.h"
#include "../formats/sample.h"
#include "checkpoint.h"
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
 * of the bare loop and fio; 200 us, 0.78-1.05). SPIN_NS, SPIN_MIN, SPIN_PROBE: train_pool.h. */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

void pool_futex_wait(_Atomic uint32_t *word, uint32_t val)
{
	/* EAGAIN (the word moved on) and EINTR both mean: look again. */
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

void pool_futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* The turn at which step's slot is free (filled: + 1). */
uint32_t pool_step_turn(const struct pool *p, uint64_t step)
{
	return (uint32_t)(step / p->nslots * 2) & TURN_MASK;
}

/* Waits until slot's turn is want or later (later: the trainer read the batch itself, see
 * trainer_reads). False when the pool aborted first. */
bool pool_slot_wait(const struct pool *p, struct spinner *sp, struct slot *slot, uint32_t want)
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
			pool_futex_wait(&slot->turn, t);
		atomic_fetch_sub(&slot->waiters, 1);
		t = atomic_load_explicit(&slot->turn, memory_order_acquire);
	}
	return (t & TURN_MASK) >= want;
}

/* Trainer reads: the reader of step's batch and the trainer both may claim it once its slot is
 * free; the first wins, the other moves on. Claims of one slot only grow (its steps are a
 * round apart, and a round starts when the previous one was consumed). */
bool pool_slot_claim(struct slot *slot, uint64_t step)
{
	uint64_t c = atomic_load(&slot->claim);

	while (c <= step)
		if (atomic_compare_exchange_weak(&slot->claim, &c, step + 1))
			return true;
	return false;
}

/* Hands the slot on (filled to the trainer, or free to its reader); a futex call only when
 * someone sleeps on it. */
void pool_slot_publish(struct slot *slot)
{
	atomic_fetch_add(&slot->turn, 1);
	if (atomic_load(&slot->waiters))
		pool_futex_wake(&slot->turn);
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
 * pending wakes before it waits, and pool_abort wakes every slot). LAZY_MAX: train_pool.h. */

/* Hands the slot on without a wake-up; the caller flushes it later. */
void pool_slot_publish_quiet(struct slot *slot)
{
	atomic_fetch_add(&slot->turn, 1);
}

static void slot_wake(struct slot *slot)
{
	if (atomic_load(&slot->waiters))
		pool_futex_wake(&slot->turn);
}

/* Trainer reads (see trainer_read) this epoch. */
bool pool_trainer_reads_now(const struct pool *p)
{
	return p->trainer_reads && !p->s->owner; /* a stream's shards belong to one reader */
}

/* Stops every wait of this epoch: readers leave, the trainer sees the failure. */
void pool_abort(struct pool *p)
{
	atomic_store(&p->abort, 1);
	for (unsigned i = 0; i < p->nslots; i++) {
		atomic_fetch_or(&p->slots[i].turn, TURN_ABORT);
		pool_futex_wake(&p->slots[i].turn);
	}
}

/* ---- reading one sample -------------------------------------------------------------- */

int pool_reader_get(struct worker *w, struct ds_file *file, struct freader **out)
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

int pool_reader_close_all(struct worker *w)
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

int pool_verify_sample(struct run *run, struct ds_file *file, uint64_t index, const void *buf,
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
	rc = pool_reader_get(w, file, &r);
	if (rc < 0)
		return rc;
	rc = run->format->read_sample(r, index, dst, p->sample_cap, &len);
	if (rc == 0)
		rc = reader_release(w, file);
	if (rc < 0)
		return rc;
	w->stats.samples++;
	*bytes += len;
	rc = verify ? pool_verify_sample(run, file, index, dst, len) : 0;
	/* Busy, as decoding is, until the thread has had preprocess_time of CPU: a fixed amount
	 * of work, which takes longer when the thread waits for a CPU (spinning on the wall
	 * clock did less work the more the machine was loaded). */
	if (rc == 0)
		pool_cpu_busy(run->cfg.reader.preprocess_time);
	return rc;
}

void pool_cpu_busy(double secs)
{
	if (secs <= 0)
		return;
	uint64_t end = timer_thread_cpu_ns() + (uint64_t)(secs * 1e9);
	while (timer_thread_cpu_ns() < end)
		cpu_relax();
}

/* The epoch ended early (a failure) or the run was interrupted. */
bool pool_reader_stopped(const struct pool *p)
{
	return atomic_load_explicit(&p->abort, memory_order_relaxed) ||
	       (p->run->stop && __atomic_load_n(p->run->stop, __ATOMIC_RELAXED));
}

int pool_fill_batch(struct worker *w, struct slot *slot, uint64_t step)
{
	struct pool *p = w->pool;
	uint64_t first, count;
	int rc = 0;

	sampler_batch(p->s, step, &first, &count);
	slot->bytes = 0;
	for (uint64_t j = 0; j < count && rc == 0; j++) {
		if (pool_reader_stopped(p))
			return -FB_EINTR;
		rc = read_one(w, sampler_sample(p->s, first + j),
			      (char *)slot->buf + j * p->sample_cap, &slot->bytes);
	}
	return rc;
}

/* This thread's next step after `step` (UINT64_MAX: the first): every read_threads-th step,
 * or the next batch of its own shards (stream formats). */
uint64_t pool_worker_next(const struct worker *w, uint64_t step)
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
void pool_worker_tl_read(struct worker *w, uint64_t t0, uint64_t t1)
{
	const struct pool *p = w->pool;

	atomic_store_explicit(&w->progress_bytes, w->stats.bytes, memory_order_relaxed);
	atomic_store_explicit(&w->progress_ops, w->stats.ops, memory_order_relaxed);
	tl_add(w->tl, &w->ntl, w->tlcap, w->id, TL_READ,
	       p->time_base + timer_ns_to_s(t0 - p->epoch_t0),
	       p->time_base + timer_ns_to_s(t1 - p->epoch_t0));
}

/* A reader's pending wake-ups: its batches from pend_step on, npend of them. */
void pool_reader_flush(struct worker *w)
{
	uint64_t step = w->pend_step;

	for (unsigned i = 0; i < w->npend; i++, step = pool_worker_next(w, step))
		slot_wake(&w->pool->slots[step % w->pool->nslots]);
	w->npend = 0;
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
	int rc = pool_fill_batch(tw, slot, step);

	*t_ready = timer_now_ns(); /* the read started when the trainer's last step ended */
	pool_worker_tl_read(tw, p->step_end, *t_ready);
	slot->rc = rc;
	atomic_fetch_add_explicit(&slot->turn, 1, memory_order_release); /* filled */
	p->trainer_batches++;
	return rc;
}

/* Trainer side: waits for step's batch (or reads it, see trainer_read, and then sets *t_ready).
 * Returns the slot or NULL with *rc set. */
struct slot *pool_batch_take(struct pool *p, uint64_t step, int *rc, uint64_t *t_ready)
{
	struct slot *slot = &p->slots[step % p->nslots];
	uint32_t want = pool_step_turn(p, step);

	if (pool_trainer_reads_now(p)) {
		uint32_t t = atomic_load_explicit(&slot->turn, memory_order_acquire);
		if (t & TURN_ABORT) /* a reader failed: pool_slot_wait returns its error */
			t = want + 1;
		if (t == want && pool_slot_claim(slot, step)) {
			*rc = trainer_read(p, slot, step, t_ready);
			return *rc < 0 ? NULL : slot;
		}
		if (t <= want) /* a reader is at it: the trainer waits, so no wake stays pending */
			trainer_flush(p);
	}
	if (pool_slot_wait(p, &p->trainer_spin, slot, want + 1)) {
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
void pool_batch_release(struct pool *p, uint64_t step)
{
	struct slot *slot = &p->slots[step % p->nslots];

	if (!p->lazy_wake) {
		pool_slot_publish(slot);
		return;
	}
	pool_slot_publish_quiet(slot);
	if (p->tnpend++ == 0)
		p->tpend_step = step;
	if (pool_trainer_reads_now(p))
		return; /* pool_batch_take flushes before it waits */
	struct slot *next = &p->slots[(step + 1) % p->nslots];
	bool ready = step + 1 < p->nsteps &&
		     (atomic_load_explicit(&next->turn, memory_order_acquire) & TURN_MASK) ==
			 pool_step_turn(p, step + 1) + 1;
	if (!ready || p->tnpend >= LAZY_MAX)
		trainer_flush(p);
}

/* Sets the epoch's steps and wakes the readers. */
void pool_start(struct pool *p, uint64_t nsteps)
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
	pool_futex_wake(&p->epoch_seq);
}

/* Ends the epoch: readers still waiting leave (a failure stopped it early), and the trainer
 * waits until every reader is back between epochs. */
void pool_stop(struct pool *p)
{
	uint32_t r;

	p->tnpend = 0; /* pool_abort wakes every slot */
	pool_abort(p);
	while ((r = atomic_load_explicit(&p->running, memory_order_acquire)) != 0)
		pool_futex_wait(&p->running, r);
}
