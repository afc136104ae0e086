/* The order a reader thread works in when it queues reads (workloads/batch_window.c):
 * - each decision of bwin_next() for the situations a reader meets (table);
 * - a simulated reader over a FIFO queue of depth D and a ring of slots: batches are handed
 *   over in step order, each once, only whole and after all its reads completed; a slot is
 *   filled only when free; and once started, the queue holds D reads at every wait until the
 *   last batch is queued, also when a batch is smaller than D (draining per batch could not
 *   exceed one batch in flight).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "workloads/batch_window.h"

struct decision {
	const char *what;
	unsigned n;		/* batches started */
	uint64_t queued, count; /* of the newest batch (the oldest has all queued when n > 1) */
	struct bwin_view v;
	enum bwin_action want;
};

static void test_decisions(void **state)
{
	static const struct decision table[] = {
	    {"nothing started: wait for the slot",
	     0,
	     0,
	     0,
	     {.room = 1, .more_steps = 1},
	     BWIN_WAIT_SLOT},
	    {"nothing started, nothing left", 0, 0, 0, {.room = 1}, BWIN_DONE},
	    {"batch N queued, in flight, slot of N+1 free: start N+1 before N is handed over",
	     1,
	     4,
	     4,
	     {.room = 1, .inflight = 1, .more_steps = 1, .next_free = 1},
	     BWIN_START},
	    {"batch N queued, slot of N+1 not free: wait for a read",
	     1,
	     4,
	     4,
	     {.room = 1, .inflight = 1, .more_steps = 1},
	     BWIN_REAP},
	    {"batch N complete: hand it over first",
	     1,
	     4,
	     4,
	     {.oldest_done = 1, .room = 1, .more_steps = 1, .next_free = 1},
	     BWIN_PUBLISH},
	    {"newest batch not all queued, room: queue",
	     2,
	     1,
	     4,
	     {.room = 1, .inflight = 1, .more_steps = 1, .next_free = 1},
	     BWIN_QUEUE},
	    {"queue full: wait for a read",
	     2,
	     1,
	     4,
	     {.inflight = 1, .more_steps = 1, .next_free = 1},
	     BWIN_REAP},
	    {"window full (every slot started): wait for a read",
	     3,
	     4,
	     4,
	     {.room = 1, .inflight = 1, .more_steps = 1, .next_free = 1},
	     BWIN_REAP},
	    {"last reads in flight, no step left: wait for a read",
	     1,
	     4,
	     4,
	     {.room = 1, .inflight = 1},
	     BWIN_REAP},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct decision *d = &table[i];
		struct bwin w;
		assert_int_equal(bwin_init(&w, 3), 0);
		for (unsigned k = 0; k < d->n; k++) {
			struct bwin_batch *b = bwin_push(&w);
			b->step = k;
			b->count = k + 1 == d->n ? d->count : 4;
			b->queued = k + 1 == d->n ? d->queued : 4;
		}
		enum bwin_action got = bwin_next(&w, &d->v);
		if (got != d->want)
			fail_msg("%s: action %d, want %d", d->what, (int)got, (int)d->want);
		bwin_free(&w);
	}
}

/* ---- a simulated reader ------------------------------------------------------------------ */

#define MAXQ 64

struct sim {
	unsigned depth, batch, slots, steps;
	uint64_t q[MAXQ]; /* reads in flight (FIFO): the step each belongs to */
	unsigned nq;
	uint64_t queued_total, done_total;
	uint64_t published;   /* steps handed over (in order) */
	unsigned min_at_reap; /* fewest reads in flight at a wait, while more were to be queued */
	unsigned max_started; /* most batches started and not handed over */
};

static void sim_run(struct sim *s)
{
	struct bwin w;
	uint64_t next = 0, total = (uint64_t)s->steps * s->batch;
	int guard = 0;

	assert_int_equal(bwin_init(&w, s->slots), 0);
	s->min_at_reap = UINT32_MAX;
	for (;;) {
		struct bwin_batch *old = bwin_oldest(&w);
		bool old_done = old && old->queued == old->count;
		for (unsigned i = 0; old_done && i < s->nq; i++)
			old_done = s->q[i] != old->step;
		/* The trainer takes every batch at once: a slot is free again when the step that
		 * used it before was handed over. */
		struct bwin_view v = {.oldest_done = old_done,
				      .room = s->nq<s->depth, .inflight = s->nq> 0,
				      .more_steps = next < s->steps,
				      .next_free =
					  next < s->steps && next < s->published + s->slots};
		assert_true(++guard < 100000);
		switch (bwin_next(&w, &v)) {
		case BWIN_PUBLISH:
			assert_int_equal(old->step, s->published); /* in order, once */
			s->published++;
			bwin_pop(&w);
			break;
		case BWIN_QUEUE: {
			struct bwin_batch *b = bwin_newest(&w);
			assert_true(s->nq < s->depth);
			s->q[s->nq++] = b->step;
			b->queued++;
			s->queued_total++;
			break;
		}
		case BWIN_WAIT_SLOT:
			assert_int_equal(w.n, 0);
			/* fall through: the slot is free, every batch before was handed over */
		case BWIN_START: {
			assert_true(next <
				    s->published + s->slots); /* only a free slot is filled */
			struct bwin_batch *b = bwin_push(&w);
			b->step = next++;
			b->count = s->batch;
			if (w.n > s->max_started)
				s->max_started = w.n;
			break;
		}
		case BWIN_REAP:
			assert_true(s->nq > 0);
			if (s->queued_total < total && s->nq < s->min_at_reap)
				s->min_at_reap = s->nq;
			memmove(&s->q[0], &s->q[1], (s->nq - 1) * sizeof(s->q[0]));
			s->nq--;
			s->done_total++;
			break;
		case BWIN_DONE:
			assert_int_equal(s->published, s->steps);
			assert_int_equal(s->done_total, total);
			assert_int_equal(s->nq, 0);
			bwin_free(&w);
			return;
		}
	}
}

static void test_simulated_reader(void **state)
{
	static const struct {
		unsigned depth, batch, slots;
		unsigned want_min; /* reads in flight at every wait before the last is queued */
	} cases[] = {
	    {8, 4, 4, 8},  /* batch smaller than the depth: two or more batches in flight */
	    {8, 16, 2, 8}, /* larger: the next batch's reads fill in as this one's complete */
	    {8, 3, 8, 8},  /* depth not a multiple of the batch */
	    {32, 32, 2, 32},
	    {1, 4, 2, 1},
	    /* The ring holds only 4 samples: the memory bound wins over the depth (a slot frees
	     * only when its whole batch was handed over: 3 at the wait after a batch's first
	     * read). */
	    {8, 2, 2, 3},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sim s = {.depth = cases[i].depth,
				.batch = cases[i].batch,
				.slots = cases[i].slots,
				.steps = 25};
		sim_run(&s);
		if (s.min_at_reap != cases[i].want_min)
			fail_msg(
			    "depth %u batch %u slots %u: %u reads in flight at a wait, want %u",
			    s.depth, s.batch, s.slots, s.min_at_reap, cases[i].want_min);
		assert_true(s.max_started <= s.slots);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_decisions),
	    cmocka_unit_test(test_simulated_reader),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
