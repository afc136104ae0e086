/* Accelerator emulation plug-ins: what a training step costs on the device.
 *
 * A step receives one batch in a host staging buffer (allocated through alloc_host, so the
 * CUDA plug-in can pin it), emulates the host-to-device copy, then keeps the device busy for
 * `seconds`. step() returns when the batch buffer may be reused and the step's compute is done;
 * the reader threads keep filling other buffers meanwhile, which is the overlap of I/O and
 * compute that a DataLoader gives.
 */
#ifndef FEEDBENCH_COMPUTE_H
#define FEEDBENCH_COMPUTE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

struct run;
struct compute; /* plug-in private */

#define COMPUTE_OPS_VERSION 1

struct step_times {
	uint64_t busy_ns;    /* device busy computing (CPU: emulated compute; CUDA: kernel time) */
	uint64_t copy_ns;    /* host-to-device copy (CPU: memcpy when emulate_copy) */
	uint64_t copy_bytes; /* bytes copied */
};

struct compute_ops {
	unsigned version; /* COMPUTE_OPS_VERSION */
	const char *name; /* "cpu", "cuda" */
	/* Can this plug-in run here? 0, or -FB_ENODEV with the reason (CUDA's error text). */
	int (*available)(char *why, size_t len);
	int (*init)(struct compute **c, struct run *run, size_t max_batch_bytes);
	void *(*alloc_host)(struct compute *c, size_t bytes);
	void (*free_host)(struct compute *c, void *p);
	int (*step)(struct compute *c, const void *batch, size_t bytes, double seconds,
		    struct step_times *t);
	/* Adds what summary.json should record (device, calibration, copy bandwidth). The
	 * argument is a jansson json_t object. */
	void (*describe)(struct compute *c, void *json_object);
	int (*fini)(struct compute *c);
};

struct compute_entry {
	const struct compute_ops *ops; /* NULL when not built */
	const char *name;
	const char *not_built; /* reason, when ops is NULL */
};
extern const struct compute_entry compute_registry[];

/* Chooses the plug-in for [train] accelerator (auto: CUDA when built and a device answers).
 * *why receives a sentence saying which and why ("CUDA not built; using the CPU emulation"). */
int compute_choose(struct run *run, const struct compute_ops **ops, char *why, size_t len);

/* Sleeps precisely until `deadline_ns` (monotonic): nanosleep for the bulk, spin for the last
 * 200 microseconds. Shared by the CPU emulation and tests. */
void compute_wait_until(uint64_t deadline_ns);
/* The same, returning early once *stop is set (SIGINT/SIGTERM): a launcher that kills the job
 * a second after forwarding the signal must not find a rank inside a long step. */
void compute_wait_until_stop(uint64_t deadline_ns, volatile sig_atomic_t *stop);

/* Per-step compute time: seconds ± stdev, a seeded normal variate, never negative. */
double compute_step_seconds(double mean, double stdev, uint64_t *rng);

#endif
