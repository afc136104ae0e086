/* Training's reader threads: each one's epoch (batches one by one, or queued reads), the
 * threads' lives, the pool's set-up and tear-down (train_pool.h). */
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
#include "../bench/compute/compute.h"
#include "../bench/storage/storage.h"
#include "../bench/timer.h"
#include "../formats/sample.h"
#include "checkpoint.h"
static void reader_epoch(struct worker *w)
{
	struct pool *p = w->pool;
	uint64_t t1 = 0;

	if (w->win.b) {
		pool_worker_epoch_queued(w);
		if (pool_reader_close_all(w) < 0)
			pool_abort(p);
		return;
	}

	for (uint64_t step = pool_worker_next(w, UINT64_MAX); step < p->nsteps;
	     step = pool_worker_next(w, step)) {
		struct slot *slot = &p->slots[step % p->nslots];
		uint32_t want = pool_step_turn(p, step);
		/* A slot already free: the batch starts when the last one ended, no clock read. */
		bool free_now =
		    (atomic_load_explicit(&slot->turn, memory_order_acquire) & TURN_MASK) == want;

		if (!free_now)
			pool_reader_flush(w);
		if (atomic_load_explicit(&p->abort, memory_order_relaxed) ||
		    (!free_now && !pool_slot_wait(p, &w->spin, slot, want)))
			break;
		if (pool_trainer_reads_now(p) && !pool_slot_claim(slot, step)) {
			pool_reader_flush(
			    w); /* the trainer read it: pending steps stay contiguous */
			t1 = 0;
			continue;
		}
		uint64_t t0 = free_now && t1 ? t1 : timer_now_ns();
		int rc = pool_fill_batch(w, slot, step);
		t1 = timer_now_ns();
		pool_worker_tl_read(w, t0, t1);
		slot->rc = rc;
		if (p->lazy_wake && rc == 0) {
			pool_slot_publish_quiet(slot);
			if (w->npend++ == 0)
				w->pend_step = step;
			if (w->npend >= LAZY_MAX)
				pool_reader_flush(w);
		} else {
			pool_slot_publish(slot);
		}
		if (rc < 0) {
			pool_abort(p);
			break;
		}
	}
	pool_reader_flush(w);
	if (pool_reader_close_all(w) < 0)
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
			pool_futex_wait(&p->epoch_seq, seen);
		seen = e;
		if (p->quit)
			return NULL;
		reader_epoch(w);
		if (atomic_fetch_sub(&p->running, 1) == 1)
			pool_futex_wake(&p->running);
	}
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

/* The ring's batch buffers (the compute plug-in's host memory), faulted in now, not during
 * the first epoch. 0 or the failure, reported. */
static int ring_alloc(struct run *run, struct pool *p, size_t batch_bytes)
{
	for (unsigned i = 0; i < p->nslots; i++) {
		p->slots[i].buf = run->compute_ops->alloc_host(run->compute, batch_bytes);
		if (p->slots[i].buf)
			memset(p->slots[i].buf, 0, batch_bytes);
		if (!p->slots[i].buf)
			return run_fail(
			    run, -ENOMEM,
			    "cannot allocate batch buffers: %u x %zu bytes (read_threads "
			    "x prefetch_size, or prefetch_bytes, x batch)",
			    p->nslots, batch_bytes);
	}
	return 0;
}

/* Collective mode's per-step scratch: batch_size entries, one bit per file. */
static int coll_scratch_init(struct run *run, struct coll_scratch *c)
{
	size_t b = (size_t)run->cfg.reader.batch_size;

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
	return 0;
}

int pool_init(struct run *run, struct pool *p, struct train_result *res)
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
	int arc = ring_alloc(run, p, batch_bytes);
	if (arc < 0)
		return arc;
	res->buffer_bytes = (double)nslots * (double)batch_bytes;
	if (coll && (arc = coll_scratch_init(run, &p->coll)) < 0)
		return arc;
	for (unsigned i = 0; i < threads; i++) {
		struct worker *w = &p->workers[i];
		int rc = worker_init(run, p, w, (int)i + 1, threads);
		if (rc == 0 && !coll)
			rc = pool_queue_init(run, p, w, batch_bytes);
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

void pool_free(struct run *run, struct pool *p)
{
	if (p->nstarted) {
		p->quit = true;
		atomic_fetch_add_explicit(&p->epoch_seq, 1, memory_order_release);
		pool_futex_wake(&p->epoch_seq);
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
void pool_timeline_collect(struct pool *p, struct train_result *res)
{
	for (unsigned i = 0; i < p->nall; i++)
		for (int k = 0; k < p->workers[i].ntl && res->ntimeline < TIMELINE_MAX; k++)
			res->timeline[res->ntimeline++] = p->workers[i].tl[k];
}
