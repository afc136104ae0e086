/* CPU emulation of the accelerator: the reference the CUDA plug-in is compared with.
 * A step copies the batch into a device-sized buffer (emulate_copy, standing for the
 * host-to-device copy) and then waits precisely for the step's compute time.
 */
#include "compute.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../run.h"
#include "../timer.h"

struct cpu_compute {
	struct run *run;
	void *device; /* emulated device memory */
	size_t capacity;
	bool copy;
	double copy_s; /* totals for describe() */
	uint64_t copy_bytes;
};

static int cpu_available(char *why, size_t len)
{
	(void)why;
	(void)len;
	return 0;
}

static int cpu_init(struct compute **out, struct run *run, size_t max_batch_bytes)
{
	struct cpu_compute *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->run = run;
	c->copy = run->cfg.train.emulate_copy;
	if (c->copy && max_batch_bytes) {
		c->device = malloc(max_batch_bytes);
		if (!c->device) {
			free(c);
			return run_fail(run, -ENOMEM,
					"cannot allocate %zu bytes of emulated device "
					"memory",
					max_batch_bytes);
		}
		memset(c->device, 0, max_batch_bytes); /* fault the pages in before timing */
		c->capacity = max_batch_bytes;
	}
	*out = (struct compute *)c;
	return 0;
}

static void *cpu_alloc_host(struct compute *cc, size_t bytes)
{
	void *p = NULL;

	(void)cc;
	/* 4 KiB aligned so O_DIRECT can read into it. */
	if (posix_memalign(&p, 4096, bytes ? bytes : 4096) != 0)
		return NULL;
	return p;
}

static void cpu_free_host(struct compute *cc, void *p)
{
	(void)cc;
	free(p);
}

static int cpu_step(struct compute *cc, const void *batch, size_t bytes, double seconds,
		    struct step_times *t)
{
	struct cpu_compute *c = (struct cpu_compute *)cc;
	uint64_t t0 = timer_now_ns(), t1;

	memset(t, 0, sizeof(*t));
	if (c->copy && bytes) {
		memcpy(c->device, batch, bytes < c->capacity ? bytes : c->capacity);
		t1 = timer_now_ns();
		t->copy_ns = t1 - t0;
		t->copy_bytes = bytes;
		c->copy_s += timer_ns_to_s(t->copy_ns);
		c->copy_bytes += bytes;
		t0 = t1;
	}
	if (seconds > 0)
		compute_wait_until_stop(t0 + (uint64_t)(seconds * 1e9), c->run->stop);
	t->busy_ns = timer_now_ns() - t0;
	return 0;
}

static void cpu_describe(struct compute *cc, void *obj)
{
	struct cpu_compute *c = (struct cpu_compute *)cc;
	json_t *o = obj;

	json_object_set_new(o, "emulate_copy", json_boolean(c->copy));
	json_object_set_new(o, "copy_bytes", json_integer((json_int_t)c->copy_bytes));
	json_object_set_new(o, "copy_GiB_per_second",
			    c->copy_s > 0
				? json_real((double)c->copy_bytes / c->copy_s / 1073741824.0)
				: json_null());
	json_object_set_new(o, "timing", json_string("nanosleep, then spin for the last 200 us"));
}

static int cpu_fini(struct compute *cc)
{
	struct cpu_compute *c = (struct cpu_compute *)cc;

	if (c) {
		free(c->device);
		free(c);
	}
	return 0;
}

const struct compute_ops cpu_compute = {
    .version = COMPUTE_OPS_VERSION,
    .name = "cpu",
    .available = cpu_available,
    .init = cpu_init,
    .alloc_host = cpu_alloc_host,
    .free_host = cpu_free_host,
    .step = cpu_step,
    .describe = cpu_describe,
    .fini = cpu_fini,
};
