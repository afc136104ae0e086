/* Tests of the CUDA compute plug-in, driven through its compute_ops like the trainer drives it.
 *
 *   test_gpu_cuda probe        exit 0 when a device answers, 77 (ctest: skipped) when not
 *   test_gpu_cuda calibration  kernel time within 1 % of 1, 10 and 100 ms steps
 *   test_gpu_cuda checksum     the device's checksum of each copied batch equals the host's
 *   test_gpu_cuda pinned       pin_memory = true: page-locked staging buffers, copies verified
 *   test_gpu_cuda pageable     pin_memory = false: malloc'd staging buffers, copies verified
 *   test_gpu_cuda nodevice     run with no visible device: available() and init() fail with
 *                              -FB_ENODEV and CUDA's text (runs everywhere, GPU or not)
 *
 * Every mode but nodevice exits 77 where no device answers, so ctest reports it skipped.
 * Lines starting "result:" are read by tests/gpu/run.sh.
 */
#include <cuda_runtime.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "compute/cuda_compute.h"

#define SKIP 77
#define MIB  (1024u * 1024u)

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* The sum documented in cuda_compute.h, written independently of the kernel. */
static uint64_t host_checksum(const unsigned char *p, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i * 8 < n; i++) {
		uint64_t w = 0;

		for (size_t b = 0; b < 8 && i * 8 + b < n; b++)
			w |= (uint64_t)p[i * 8 + b] << (8 * b);
		sum += w * (2 * (uint64_t)i + 1);
	}
	return sum;
}

static void fill(unsigned char *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)(x >> 24);
	}
}

static void run_setup(struct run *run, bool pin)
{
	memset(run, 0, sizeof(*run));
	cfg_defaults(&run->cfg);
	run->cfg.train.pin_memory = pin;
	run->comm = MPI_COMM_SELF;
	run->local_rank = 0;
	run->local_size = 1;
	fb_errbuf_init(&run->err);
	run->warnings = json_array();
}

static void run_teardown(struct run *run)
{
	size_t i;
	json_t *w;

	json_array_foreach(run->warnings, i, w) printf("warning: %s\n", json_string_value(w));
	json_decref(run->warnings);
}

/* 0 when a device answers; prints why not otherwise. */
static int probe(void)
{
	char why[256];
	int rc = cuda_compute.available(why, sizeof(why));

	printf("%s\n", why);
	return rc;
}

static int init_or_report(struct run *run, struct compute **c, size_t max_batch)
{
	int rc = cuda_compute.init(c, run, max_batch);

	if (rc)
		fprintf(stderr, "FAIL: init: %s (%d)\n", run->err.msg, rc);
	return rc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of 3 steps per length (a single step can lose a time slice to another process)
 * must be within 1 % of the requested time, with a real 1 MiB batch copied each time. */
static void test_calibration(void)
{
	static const double points[] = {0.001, 0.010, 0.100};
	struct run run;
	struct compute *c = NULL;
	unsigned char *batch;
	char *text;
	json_t *d;

	run_setup(&run, true);
	if (init_or_report(&run, &c, MIB)) {
		failures++;
		return;
	}
	batch = cuda_compute.alloc_host(c, MIB);
	fill(batch, MIB, 1);
	for (size_t p = 0; p < sizeof(points) / sizeof(points[0]); p++) {
		uint64_t busy[3];
		double want = points[p] * 1e9, err;

		for (int i = 0; i < 3; i++) {
			struct step_times t = {0};

			CHECK(cuda_compute.step(c, batch, MIB, points[p], &t) == 0, "step: %s",
			      run.err.msg);
			busy[i] = t.busy_ns;
			CHECK(t.copy_bytes == MIB, "copy_bytes %" PRIu64, t.copy_bytes);
			CHECK(t.copy_ns > 0, "copy_ns is 0");
		}
		qsort(busy, 3, sizeof(busy[0]), cmp_u64);
		err = ((double)busy[1] - want) / want * 100.0;
		printf("result: calibration %g ms -> kernel %.4f ms (%+.3f %%)\n", points[p] * 1e3,
		       (double)busy[1] / 1e6, err);
		CHECK(fabs(err) <= 1.0,
		      "kernel time %.4f ms for a %g ms step: %+.3f %% is over 1 %%",
		      (double)busy[1] / 1e6, points[p] * 1e3, err);
	}
	d = json_object();
	cuda_compute.describe(c, d);
	text = json_dumps(json_object_get(d, "calibration"), JSON_COMPACT);
	printf("result: init calibration %s\n", text ? text : "?");
	free(text);
	CHECK(json_real_value(
		  json_object_get(json_object_get(d, "calibration"), "ns_per_iteration")) > 0,
	      "ns_per_iteration not recorded");
	json_decref(d);
	cuda_compute.free_host(c, batch);
	CHECK(cuda_compute.fini(c) == 0, "fini: %s", run.err.msg);
	run_teardown(&run);
}

/* Batches of awkward sizes, alternating device buffers: each checksum must match. */
static void test_checksum(void)
{
	static const size_t sizes[] = {3 * MIB + 5, 1, 8, 4099, 0, 3 * MIB + 5};
	size_t max = 3 * MIB + 5;
	struct run run;
	struct compute *c = NULL;
	unsigned char *batch;

	run_setup(&run, true);
	if (init_or_report(&run, &c, max)) {
		failures++;
		return;
	}
	batch = cuda_compute.alloc_host(c, max);
	CHECK(cuda_compute_last_checksum(c) == 0, "checksum before the first step");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct step_times t = {0};
		uint64_t want, got;

		fill(batch, sizes[i], 100 + i);
		want = host_checksum(batch, sizes[i]);
		CHECK(cuda_compute.step(c, batch, sizes[i], 0.001, &t) == 0, "step: %s",
		      run.err.msg);
		got = cuda_compute_last_checksum(c);
		printf("result: checksum %zu bytes host %016" PRIx64 " device %016" PRIx64 "\n",
		       sizes[i], want, got);
		CHECK(got == want,
		      "device checksum %016" PRIx64 " != host %016" PRIx64 " for %zu bytes", got,
		      want, sizes[i]);
		CHECK(t.copy_bytes == sizes[i], "copy_bytes %" PRIu64 " for %zu", t.copy_bytes,
		      sizes[i]);
	}
	/* The sum sees a flipped byte and two swapped words, so a match above means something. */
	fill(batch, 64, 7);
	{
		uint64_t a = host_checksum(batch, 64), b;
		unsigned char tmp[8];

		memcpy(tmp, batch, 8);
		memcpy(batch, batch + 8, 8);
		memcpy(batch + 8, tmp, 8);
		b = host_checksum(batch, 64);
		CHECK(a != b, "checksum blind to swapped words");
		batch[9] ^= 1;
		CHECK(host_checksum(batch, 64) != b, "checksum blind to a flipped bit");
	}
	/* A batch larger than the buffers init was given is refused, not overrun. */
	{
		struct step_times t = {0};
		int rc = cuda_compute.step(c, batch, max + 1, 0.001, &t);

		CHECK(rc == -FB_EINTERNAL, "oversized batch: rc %d", rc);
		CHECK(strstr(run.err.msg, "larger than") != NULL, "oversized batch: '%s'",
		      run.err.msg);
	}
	cuda_compute.free_host(c, batch);
	CHECK(cuda_compute.fini(c) == 0, "fini");
	run_teardown(&run);
}

/* Staging buffers are pinned or pageable as asked; 64 MiB copies verified and measured. */
static void test_memory(bool pin)
{
	const size_t bytes = 64 * MIB;
	struct run run;
	struct compute *c = NULL;
	struct cudaPointerAttributes a;
	unsigned char *batch;
	const char *kind;
	json_t *d;
	double gibs;

	run_setup(&run, pin);
	if (init_or_report(&run, &c, bytes)) {
		failures++;
		return;
	}
	batch = cuda_compute.alloc_host(c, bytes);
	CHECK(batch != NULL, "alloc_host");
	CHECK(cudaPointerGetAttributes(&a, batch) == cudaSuccess, "cudaPointerGetAttributes");
	if (pin)
		CHECK(a.type == cudaMemoryTypeHost, "pin_memory = true: buffer type %d, not pinned",
		      (int)a.type);
	else
		CHECK(a.type == cudaMemoryTypeUnregistered,
		      "pin_memory = false: buffer type %d, not pageable", (int)a.type);
	fill(batch, bytes, pin ? 11 : 12);
	for (int i = 0; i < 8; i++) {
		struct step_times t = {0};

		batch[(size_t)i * 4096] ^= 0x5a; /* each batch differs */
		CHECK(cuda_compute.step(c, batch, bytes, 0.001, &t) == 0, "step: %s", run.err.msg);
		CHECK(cuda_compute_last_checksum(c) == host_checksum(batch, bytes),
		      "checksum of step %d", i);
	}
	d = json_object();
	cuda_compute.describe(c, d);
	kind = json_string_value(json_object_get(d, "host_memory"));
	gibs = json_real_value(json_object_get(d, "h2d_GiB_per_second"));
	printf("result: h2d %s %.2f GiB/s (%s, %s)\n", pin ? "pinned" : "pageable", gibs,
	       json_string_value(json_object_get(d, "device_name")),
	       json_string_value(json_object_get(d, "pci_bus_id")));
	CHECK(kind && strcmp(kind, pin ? "pinned" : "pageable") == 0, "host_memory '%s'",
	      kind ? kind : "(null)");
	CHECK(gibs > 0, "h2d_GiB_per_second %g", gibs);
	CHECK(json_integer_value(json_object_get(d, "h2d_bytes")) == (json_int_t)(8 * bytes),
	      "h2d_bytes");
	CHECK(json_integer_value(json_object_get(d, "ranks_sharing_device")) == 1,
	      "ranks_sharing_device");
	json_decref(d);
	cuda_compute.free_host(c, batch);
	CHECK(cuda_compute.fini(c) == 0, "fini");
	run_teardown(&run);
}

/* With no device visible (CUDA_VISIBLE_DEVICES=-1, or no driver at all) the plug-in says so
 * in CUDA's words, and init fails with the same code instead of crashing. */
static void test_nodevice(void)
{
	const char *prefix = "cuda: no usable device: cudaGetDeviceCount: ";
	char why[256] = "";
	struct run run;
	struct compute *c = NULL;
	int rc;

	rc = cuda_compute.available(why, sizeof(why));
	printf("available: %d '%s'\n", rc, why);
	CHECK(rc == -FB_ENODEV, "available() = %d with no device", rc);
	CHECK(strncmp(why, prefix, strlen(prefix)) == 0 && strlen(why) > strlen(prefix),
	      "why = '%s'", why);
	run_setup(&run, true);
	rc = cuda_compute.init(&c, &run, MIB);
	printf("init: %d '%s'\n", rc, run.err.msg);
	CHECK(rc == -FB_ENODEV, "init() = %d with no device", rc);
	CHECK(strcmp(run.err.msg, why) == 0, "init says '%s', available said '%s'", run.err.msg,
	      why);
	CHECK(fb_exit_status(rc) == 2, "exit status %d", fb_exit_status(rc));
	run_teardown(&run);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (strcmp(mode, "nodevice") == 0) {
		test_nodevice();
	} else if (probe() != 0) {
		return SKIP;
	} else if (strcmp(mode, "probe") == 0) {
		return 0;
	} else if (strcmp(mode, "calibration") == 0) {
		test_calibration();
	} else if (strcmp(mode, "checksum") == 0) {
		test_checksum();
	} else if (strcmp(mode, "pinned") == 0 || strcmp(mode, "pageable") == 0) {
		test_memory(strcmp(mode, "pinned") == 0);
	} else {
		fprintf(stderr, "usage: %s probe|calibration|checksum|pinned|pageable|nodevice\n",
			argv[0]);
		return 2;
	}
	if (failures)
		fprintf(stderr, "%d check%s failed\n", failures, failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
