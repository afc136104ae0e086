/* Progress on long work: one updating line on a terminal, plain periodic lines otherwise.
 * Rank 0 only; never on stdout (tables go there). */
#ifndef FEEDBENCH_PROGRESS_H
#define FEEDBENCH_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
	const char *what; /* "generating", "epoch 2/3" */
	uint64_t start_ns;
	uint64_t last_ns;
	bool tty;
	bool active; /* false on ranks other than 0, or when quiet */
	bool printed;
};

void progress_begin(struct progress *p, const char *what, bool active);
/* True when progress_update() would print now: callers skip formatting otherwise. */
bool progress_due(const struct progress *p);
/* fraction in [0,1]; extra: short text such as "412 MiB/s". Rate-limited internally. */
void progress_update(struct progress *p, double fraction, const char *extra);
void progress_end(struct progress *p);

#endif
