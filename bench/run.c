/* What every module may do with the run it is handed (bench/run.h). */
#include "run.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void run_warn(struct run *run, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&run->err.lock);
	for (size_t i = 0; i < json_array_size(run->warnings); i++)
		if (strcmp(json_string_value(json_array_get(run->warnings, i)), msg) == 0)
			goto out;
	json_array_append_new(run->warnings, json_string(msg));
	if (run->rank == 0 && run->verbose >= 0)
		fprintf(stderr, "feedbench: warning: %s\n", msg);
out:
	pthread_mutex_unlock(&run->err.lock);
}

void run_phase_began(struct run *run, uint64_t t0)
{
	if (!run->first_phase_ns)
		run->first_phase_ns = t0;
}
