/* Choice of the accelerator plug-in and the precise wait shared by the emulations. */
#include "compute.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../run.h"
#include "../timer.h"
#include "../rng.h"

#define SPIN_NS 200000ull /* spin for the last 200 us: nanosleep overshoots by ~50-100 us */

#define SLICE_NS 50000000ull /* a signal ends a long step within this much */

void compute_wait_until(uint64_t deadline_ns)
{
	compute_wait_until_stop(deadline_ns, NULL);
}

void compute_wait_until_stop(uint64_t deadline_ns, volatile sig_atomic_t *stop)
{
	for (;;) {
		uint64_t now = timer_now_ns();
		if (now >= deadline_ns)
			return;
		if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED))
			return;
		if (deadline_ns - now > SPIN_NS) {
			uint64_t sleep_ns = deadline_ns - now - SPIN_NS;
			if (stop && sleep_ns > SLICE_NS)
				sleep_ns = SLICE_NS;
			struct timespec ts = {(time_t)(sleep_ns / 1000000000ull),
					      (long)(sleep_ns % 1000000000ull)};
			nanosleep(&ts, NULL);
		}
	}
}

double compute_step_seconds(double mean, double stdev, uint64_t *rng)
{
	if (stdev <= 0)
		return mean;
	double v = mean + stdev * rng_normal(rng);
	return v < 0 ? 0 : v;
}

static const struct compute_entry *compute_entry_named(const char *name)
{
	for (size_t i = 0; compute_registry[i].name; i++)
		if (strcmp(compute_registry[i].name, name) == 0)
			return &compute_registry[i];
	return NULL;
}

int compute_choose(struct run *run, const struct compute_ops **ops, char *why, size_t len)
{
	const struct compute_entry *cuda = compute_entry_named("cuda");
	const struct compute_entry *cpu = compute_entry_named("cpu");
	char reason[512] = "";
	int rc;

	switch (run->cfg.train.accelerator) {
	case ACCEL_CPU:
		*ops = cpu->ops;
		snprintf(why, len, "cpu emulation (accelerator = cpu)");
		return 0;
	case ACCEL_CUDA:
		if (!cuda || !cuda->ops)
			return run_fail(
			    run, -FB_ENODEV,
			    "accelerator = cuda, but the CUDA plug-in was not built (%s)",
			    cuda ? cuda->not_built : "unknown");
		rc = cuda->ops->available(reason, sizeof(reason));
		if (rc < 0)
			return run_fail(run, -FB_ENODEV, "accelerator = cuda, but %s", reason);
		*ops = cuda->ops;
		snprintf(why, len, "cuda (accelerator = cuda)");
		return 0;
	default:
		if (cuda && cuda->ops && cuda->ops->available(reason, sizeof(reason)) == 0) {
			*ops = cuda->ops;
			snprintf(why, len, "cuda (accelerator = auto found a GPU)");
			return 0;
		}
		*ops = cpu->ops;
		if (!cuda || !cuda->ops)
			snprintf(
			    why, len,
			    "cpu emulation (accelerator = auto: the CUDA plug-in was not built: "
			    "%s)",
			    cuda ? cuda->not_built : "unknown");
		else
			snprintf(why, len, "cpu emulation (accelerator = auto: %s)", reason);
		return 0;
	}
}
