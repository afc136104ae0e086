/* The batches one reader thread has started and not yet handed to the trainer, when it queues
 * reads (io_depth > 1): it keeps io_depth reads in flight across its batches instead of
 * draining the queue at the end of each one, the way fio keeps its queue full.
 *
 * The thread's loop asks bwin_next() what to do, given what it sees now, in this order:
 * 1. publish the oldest batch once all its samples are queued and their reads completed
 *    (batches are handed over in step order, and only whole);
 * 2. with room in the queue: queue the next sample of the newest batch; or, when that batch is
 *    whole, start the thread's next step, if its ring slot is free now (never waiting for a
 *    slot while reads are in flight); with nothing started, wait for the slot;
 * 3. otherwise wait for a completion.
 * So the reads of step N+1 are queued while the last reads of step N complete, whenever the
 * slot of step N+1 is free: a slot is filled only when free, so the ring's memory bound holds.
 */
#ifndef FEEDBENCH_BATCH_WINDOW_H
#define FEEDBENCH_BATCH_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

struct bwin_batch {
	uint64_t step;
	uint64_t first, count; /* its samples in the sampler's order (sampler_batch) */
	uint64_t queued;       /* samples queued so far */
	uint64_t bytes;	       /* their sample bytes (format extents), counted when queued */
	uint64_t mark;	       /* io_queue_mark() after its last sample was queued */
	uint64_t t0;	       /* ns: when it started (timeline) */
};

struct bwin {
	struct bwin_batch *b; /* ring of cap batches, oldest at head */
	unsigned cap, head, n;
};

enum bwin_action {
	BWIN_PUBLISH,	/* the oldest batch is complete: hand it to the trainer */
	BWIN_QUEUE,	/* queue the next sample of the newest batch */
	BWIN_START,	/* start the next step (its slot is free) */
	BWIN_WAIT_SLOT, /* nothing started: wait until the next step's slot is free, then start */
	BWIN_REAP,	/* wait for at least one read to complete */
	BWIN_DONE,	/* every step of this thread was published */
};

/* What the thread sees when it asks. */
struct bwin_view {
	bool oldest_done; /* every read queued for the oldest batch completed */
	bool room;	  /* fewer than io_depth reads in flight */
	bool inflight;	  /* at least one read in flight */
	bool more_steps;  /* the thread has a step not yet started */
	bool next_free;	  /* that step's ring slot is free now */
};

/* cap: the most batches in the window (the ring's slot count). 0 or -ENOMEM. */
int bwin_init(struct bwin *w, unsigned cap);
void bwin_free(struct bwin *w);
void bwin_reset(struct bwin *w);
enum bwin_action bwin_next(const struct bwin *w, const struct bwin_view *v);
/* The oldest and newest batches started, NULL when none. */
struct bwin_batch *bwin_oldest(const struct bwin *w);
struct bwin_batch *bwin_newest(const struct bwin *w);
/* Starts a batch (the window is not full: bwin_next said START or WAIT_SLOT); drops the
 * oldest. */
struct bwin_batch *bwin_push(struct bwin *w);
void bwin_pop(struct bwin *w);

#endif
