#include "progress.h"

#include <stdio.h>
#include <unistd.h>

#include "timer.h"

void progress_begin(struct progress *p, const char *what, bool active)
{
	p->what = what;
	p->start_ns = p->last_ns = timer_now_ns();
	p->tty = isatty(STDERR_FILENO);
	p->active = active;
	p->printed = false;
}

/* A terminal line updates 5 times a second; a log gets a line every 10 s. */
static uint64_t progress_every(const struct progress *p)
{
	return p->tty ? 200000000ull : 10000000000ull;
}

bool progress_due(const struct progress *p)
{
	return p->active && timer_now_ns() - p->last_ns >= progress_every(p);
}

void progress_update(struct progress *p, double fraction, const char *extra)
{
	uint64_t now = timer_now_ns();

	if (!p->active || now - p->last_ns < progress_every(p))
		return;
	p->last_ns = now;
	double el = timer_ns_to_s(now - p->start_ns);
	double eta = fraction > 0.001 ? el / fraction - el : -1;
	char etas[32] = "?";
	if (eta >= 0)
		snprintf(etas, sizeof(etas), "%.0f s", eta);
	fprintf(stderr, "%s%s: %5.1f%%%s%s, ETA %s%s", p->tty ? "\r\033[K" : "", p->what,
		fraction * 100, extra ? ", " : "", extra ? extra : "", etas, p->tty ? "" : "\n");
	fflush(stderr);
	p->printed = true;
}

void progress_end(struct progress *p)
{
	if (p->active && p->printed && p->tty) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
	}
}
