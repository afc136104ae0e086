/* The batches a reader thread has in flight with queued reads (batch_window.h). */
#include "batch_window.h"

#include <errno.h>
#include <stdlib.h>

int bwin_init(struct bwin *w, unsigned cap)
{
	w->b = calloc(cap ? cap : 1, sizeof(*w->b));
	w->cap = cap ? cap : 1;
	w->head = w->n = 0;
	return w->b ? 0 : -ENOMEM;
}

void bwin_free(struct bwin *w)
{
	free(w->b);
	w->b = NULL;
	w->cap = w->head = w->n = 0;
}

void bwin_reset(struct bwin *w)
{
	w->head = w->n = 0;
}

struct bwin_batch *bwin_oldest(const struct bwin *w)
{
	return w->n ? &w->b[w->head] : NULL;
}

struct bwin_batch *bwin_newest(const struct bwin *w)
{
	return w->n ? &w->b[(w->head + w->n - 1) % w->cap] : NULL;
}

struct bwin_batch *bwin_push(struct bwin *w)
{
	struct bwin_batch *b = &w->b[(w->head + w->n) % w->cap];

	w->n++;
	*b = (struct bwin_batch){0};
	return b;
}

void bwin_pop(struct bwin *w)
{
	w->head = (w->head + 1) % w->cap;
	w->n--;
}

enum bwin_action bwin_next(const struct bwin *w, const struct bwin_view *v)
{
	const struct bwin_batch *old = bwin_oldest(w), *last = bwin_newest(w);

	if (old && old->queued == old->count && v->oldest_done)
		return BWIN_PUBLISH;
	if (v->room) {
		if (last && last->queued < last->count)
			return BWIN_QUEUE;
		if (v->more_steps && w->n == 0)
			return BWIN_WAIT_SLOT;
		if (v->more_steps && v->next_free && w->n < w->cap)
			return BWIN_START;
	}
	if (v->inflight)
		return BWIN_REAP;
	/* Nothing in flight: every queued read completed, so a started batch was either
	 * published above or still has samples to queue (with room, as nothing is in flight). */
	return BWIN_DONE;
}
