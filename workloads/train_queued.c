/* Training's queued reads across batches (io_depth > 1, samples that are byte ranges): a reader
 * thread keeps io_depth reads in flight over its batches (train_pool.h). */
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
#include "../bench/storage/storage.h"
#include "../formats/format.h"
#include "../bench/timer.h"
#include "../formats/sample.h"

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

	if (pool_reader_stopped(p))
		return -FB_EINTR;
	if (r)
		rc = io_queue_wait_file(&w->io, ((struct freader_file *)r)->sf);
	if (rc == 0)
		rc = pool_reader_get(w, file, &r);
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
			rc = pool_verify_sample(run, file, index,
						(char *)slot->buf + j * p->sample_cap, len);
	}
	if (rc < 0)
		return rc;
	/* The batches of one thread overlap in time; the timeline shows each from when the
	 * previous one was handed over (or its own start, if later), so the bars tile. */
	uint64_t t1 = timer_now_ns();
	pool_worker_tl_read(w, b->t0 > *t_last ? b->t0 : *t_last, t1);
	*t_last = t1;
	slot->rc = 0;
	pool_slot_publish(slot);
	return 0;
}

/* One epoch of a thread with queued reads: io_depth reads in flight across its batches
 * (batch_window.h says in which order it works). On a failure the reads in flight land first,
 * then the oldest batch not handed over carries the failure to the trainer. */
void pool_worker_epoch_queued(struct worker *w)
{
	struct pool *p = w->pool;
	struct bwin *win = &w->win;
	uint64_t next = pool_worker_next(w, UINT64_MAX), t_last = 0;
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
					TURN_MASK) == pool_step_turn(p, next)};

		switch (bwin_next(win, &v)) {
		case BWIN_PUBLISH:
			if ((rc = batch_finish(w, old, &t_last)) == 0)
				bwin_pop(win);
			break;
		case BWIN_QUEUE:
			rc = queue_sample(w, bwin_newest(win));
			break;
		case BWIN_WAIT_SLOT:
			if (pool_reader_stopped(p) ||
			    !pool_slot_wait(p, &w->spin, ns, pool_step_turn(p, next))) {
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
			next = pool_worker_next(w, next);
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
			pool_slot_publish(slot);
		}
		pool_abort(p);
	}
}

/* Queued reads (backend = uring): one queue per reader thread, the batch buffers registered
 * with it where the kernel allows. Formats whose samples are not plain byte ranges read one
 * sample at a time through the queue: said once. */
int pool_queue_init(struct run *run, struct pool *p, struct worker *w, size_t batch_bytes)
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
