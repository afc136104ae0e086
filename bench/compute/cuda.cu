/* CUDA compute plug-in: what a training step costs on a real GPU.
 *
 * Each step copies the batch from its host staging buffer to device memory (cudaMemcpyAsync on
 * the plug-in's stream; pinned staging buffers when [train] pin_memory = true, pageable ones
 * otherwise), then runs one kernel that reads the whole copied batch (a checksum, so the copy
 * is real work that the device depends on) and keeps every multiprocessor busy until the step's
 * compute time has passed.
 *
 * step() is synchronous: it returns when the copy and the kernel have finished, as compute.h
 * asks. That is also what PyTorch's default does on the device: the copy and the model run on
 * one stream, so a step's copy waits for the previous step's kernels and the device timeline
 * is copy, compute, copy, compute. The overlap of I/O and compute comes from the reader
 * threads, which keep filling batches while the kernel runs. AU stays exact: busy_ns is the
 * kernel time measured by CUDA events, copy_ns the copy time, both inside the step's wall
 * time; the device is never busy outside a step. The two device buffers alternate, so a
 * pipelined variant could copy one batch while the kernel reads the other.
 *
 * The busy phase is a deadline on %globaltimer (the GPU's nanosecond clock), not a count of
 * instructions: a step lasts computation_time whatever the SM clock does (boost, power
 * capping), and ranks that share a GPU (time-sliced by the driver) still end each kernel at
 * its deadline, give or take one time slice.
 * Calibration at init measures the launch overhead against CUDA events and subtracts it, and
 * records the busy loop's time per iteration and the error at 1, 10 and 100 ms.
 *
 * The binary must run on machines without a GPU or driver: nothing touches CUDA until
 * available() or init() is called, and a failing cudaGetDeviceCount counts as no device.
 */
#include <cuda_runtime.h>

/* mpi.h and jansson.h first, outside extern "C": they carry their own C++ guards. */
#include <mpi.h>
#include <jansson.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "run.h"
}
#include "compute/cuda_compute.h"

#define CUDA_THREADS	       256 /* per block; one block per multiprocessor */
#define CUDA_CAL_OVERHEAD_RUNS 7   /* launches measured for the overhead (median) */
#define CUDA_NS_PER_S	       1e9

/* Error at these step lengths is measured at init and recorded in summary.json. */
static const double cuda_cal_points_s[] = {0.001, 0.010, 0.100};
static const char *const cuda_cal_names[] = {"1ms", "10ms", "100ms"};
#define CUDA_CAL_POINTS (sizeof(cuda_cal_points_s) / sizeof(cuda_cal_points_s[0]))

struct compute {
	struct run *run;
	int device, ndevices, sharing; /* device used, devices visible, local ranks on it */
	char name[256];		       /* "NVIDIA H200" */
	char pci[32];		       /* "0000:19:00.0" */
	int cc_major, cc_minor, sms;
	size_t device_mem;
	int driver_version, runtime_version;

	cudaStream_t stream;
	cudaEvent_t ev[4]; /* copy start, copy end, kernel start, kernel end */
	void *dbuf[2];	   /* device buffers, alternating per step */
	size_t dbuf_bytes;
	unsigned long long *dsum; /* [0..1]: checksums per buffer, [2]: calibration iterations */
	int next;		  /* buffer of the next step */
	int last;		  /* buffer of the last step, -1 before the first */

	bool pin_requested; /* [train] pin_memory */
	unsigned long pinned_allocs, pageable_allocs;
	bool pin_failed_warned;

	uint64_t overhead_ns;	 /* event-measured kernel time minus its deadline */
	double ns_per_iteration; /* one poll of %globaltimer, from calibration */
	double cal_error_pct[CUDA_CAL_POINTS];
	bool cal_done;

	uint64_t steps, copy_bytes, copy_ns, busy_ns;
	bool slow_warned;
};

/* ---- device code ------------------------------------------------------------------------ */

static __device__ __forceinline__ unsigned long long cuda_globaltimer(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* Sums the batch (see cuda_compute.h) into *sum, then spins until budget_ns have passed since
 * the thread started. *iters (optional) receives thread 0's number of polls. The clock64 cap
 * (4 cycles per ns of budget: 1.3x the budget at 3 GHz, more at lower clocks) only guards
 * against a %globaltimer that does not advance, which would otherwise hang the GPU. */
static __global__ void cuda_step_kernel(const unsigned long long *__restrict__ words, size_t bytes,
					unsigned long long *sum, unsigned long long budget_ns,
					unsigned long long *iters)
{
	unsigned long long t0 = cuda_globaltimer();
	long long c0 = clock64();
	size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t nwords = bytes / 8;
	unsigned long long acc = 0, n = 0;

	for (size_t i = tid; i < nwords; i += stride)
		acc += words[i] * (2ull * i + 1);
	if (tid == 0 && (bytes & 7)) {
		const unsigned char *tail = (const unsigned char *)(words + nwords);
		unsigned long long w = 0;

		for (size_t b = 0; b < (bytes & 7); b++)
			w |= (unsigned long long)tail[b] << (8 * b);
		acc += w * (2ull * nwords + 1);
	}
	for (int off = 16; off > 0; off >>= 1)
		acc += __shfl_down_sync(0xffffffffu, acc, off);
	if ((threadIdx.x & 31) == 0 && acc != 0)
		atomicAdd(sum, acc);

	while (cuda_globaltimer() - t0 < budget_ns &&
	       (unsigned long long)(clock64() - c0) < 4 * budget_ns)
		n++;
	if (tid == 0 && iters != NULL)
		*iters = n;
}

/* ---- host helpers ----------------------------------------------------------------------- */

/* Records "cannot <what> on device N (name): <CUDA error>" once; returns code. */
static int cuda_fail(struct compute *c, cudaError_t e, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int cuda_fail(struct compute *c, cudaError_t e, int code, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return run_fail(c->run, code, "cuda: cannot %s on device %d (%s): %s", what, c->device,
			c->name[0] ? c->name : "?", cudaGetErrorString(e));
}

static void cuda_version_text(int v, char *buf, size_t len)
{
	snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

static unsigned long long cuda_budget_ns(const struct compute *c, double seconds)
{
	double ns = seconds * CUDA_NS_PER_S - (double)c->overhead_ns;

	return ns > 0 ? (unsigned long long)llround(ns) : 0;
}

/* One kernel on the stream between events ev[2] and ev[3]; returns its event-measured time.
 * ev[2] is recorded here, just before the launch, not after the copy: a pageable copy returns
 * to the host late, and the gap until the launch is neither copy nor compute. */
static int cuda_launch_timed(struct compute *c, const void *dev, size_t bytes, int buf,
			     unsigned long long budget_ns, bool count_iters, uint64_t *kernel_ns)
{
	cudaError_t e;
	float ms = 0;

	e = cudaEventRecord(c->ev[2], c->stream);
	if (e != cudaSuccess)
		return cuda_fail(c, e, -FB_ECUDA, "record an event");
	cuda_step_kernel<<<c->sms, CUDA_THREADS, 0, c->stream>>>((const unsigned long long *)dev,
								 bytes, c->dsum + buf, budget_ns,
								 count_iters ? c->dsum + 2 : NULL);
	e = cudaGetLastError();
	if (e != cudaSuccess)
		return cuda_fail(c, e, -FB_ECUDA, "launch the step kernel");
	e = cudaEventRecord(c->ev[3], c->stream);
	if (e == cudaSuccess)
		e = cudaEventSynchronize(c->ev[3]);
	if (e == cudaSuccess)
		e = cudaEventElapsedTime(&ms, c->ev[2], c->ev[3]);
	if (e != cudaSuccess)
		return cuda_fail(c, e, -FB_ECUDA, "run the step kernel");
	*kernel_ns = (uint64_t)llround((double)ms * 1e6);
	return 0;
}

/* A kernel alone (no copy). */
static int cuda_time_kernel(struct compute *c, unsigned long long budget_ns, bool count_iters,
			    uint64_t *kernel_ns)
{
	return cuda_launch_timed(c, c->dbuf[0], 0, 0, budget_ns, count_iters, kernel_ns);
}

static int cuda_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Measures what a launch adds to its deadline (median of a few 1 ms kernels), the busy loop's
 * time per iteration, and the remaining error at 1, 10 and 100 ms. About 0.15 s per rank. */
static int cuda_calibrate(struct compute *c)
{
	const unsigned long long probe_ns = 1000000;
	uint64_t t[CUDA_CAL_OVERHEAD_RUNS], k_ns, iters = 0;
	cudaError_t e;
	int err;

	err = cuda_time_kernel(c, 0, false, &k_ns); /* loads the module; not measured */
	if (err)
		return err;
	for (int i = 0; i < CUDA_CAL_OVERHEAD_RUNS; i++) {
		err = cuda_time_kernel(c, probe_ns, false, &t[i]);
		if (err)
			return err;
	}
	qsort(t, CUDA_CAL_OVERHEAD_RUNS, sizeof(t[0]), cuda_cmp_u64);
	c->overhead_ns =
	    t[CUDA_CAL_OVERHEAD_RUNS / 2] > probe_ns ? t[CUDA_CAL_OVERHEAD_RUNS / 2] - probe_ns : 0;

	for (size_t p = 0; p < CUDA_CAL_POINTS; p++) {
		double want = cuda_cal_points_s[p] * CUDA_NS_PER_S;

		err = cuda_time_kernel(c, cuda_budget_ns(c, cuda_cal_points_s[p]), true, &k_ns);
		if (err)
			return err;
		c->cal_error_pct[p] = ((double)k_ns - want) / want * 100.0;
		e = cudaMemcpy(&iters, c->dsum + 2, sizeof(iters), cudaMemcpyDeviceToHost);
		if (e != cudaSuccess)
			return cuda_fail(c, e, -FB_ECUDA, "read the calibration counter");
		if (iters > 0)
			c->ns_per_iteration =
			    (double)cuda_budget_ns(c, cuda_cal_points_s[p]) / (double)iters;
	}
	for (size_t p = 0; p < CUDA_CAL_POINTS; p++)
		if (fabs(c->cal_error_pct[p]) > 1.0)
			run_warn(c->run,
				 "cuda: calibration is off by %+.2f %% at %s on device %d (%s); "
				 "step times on this GPU are less precise than 1 %%",
				 c->cal_error_pct[p], cuda_cal_names[p], c->device, c->name);
	c->cal_done = true;
	return 0;
}

/* ---- compute_ops ------------------------------------------------------------------------ */

static int cuda_available(char *why, size_t len)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess || n < 1) {
		snprintf(why, len, "cuda: no usable device: cudaGetDeviceCount: %s",
			 e != cudaSuccess ? cudaGetErrorString(e) : "no device reported");
		cudaGetLastError(); /* clears the error so a later call starts clean */
		return -FB_ENODEV;
	}
	snprintf(why, len, "cuda: %d device%s", n, n == 1 ? "" : "s");
	return 0;
}

static int cuda_describe_device(struct compute *c)
{
	struct cudaDeviceProp prop;
	cudaError_t e;

	e = cudaGetDeviceProperties(&prop, c->device);
	if (e != cudaSuccess)
		return cuda_fail(c, e, -FB_ECUDA, "read the device properties");
	snprintf(c->name, sizeof(c->name), "%s", prop.name);
	c->cc_major = prop.major;
	c->cc_minor = prop.minor;
	c->sms = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
	c->device_mem = prop.totalGlobalMem;
	if (cudaDeviceGetPCIBusId(c->pci, sizeof(c->pci), c->device) != cudaSuccess)
		snprintf(c->pci, sizeof(c->pci), "unknown");
	if (cudaDriverGetVersion(&c->driver_version) != cudaSuccess)
		c->driver_version = 0;
	if (cudaRuntimeGetVersion(&c->runtime_version) != cudaSuccess)
		c->runtime_version = 0;
	return 0;
}

/* Local rank r uses device r % n; the ranks of this node that land on the same device. */
static int cuda_sharing(int local_rank, int local_size, int n)
{
	int dev = local_rank % n, count = 0;

	for (int r = 0; r < local_size; r++)
		count += (r % n == dev);
	return count > 0 ? count : 1;
}

static int cuda_setup(struct compute *c, size_t max_batch_bytes)
{
	cudaError_t e;

	e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
	if (e != cudaSuccess)
		return cuda_fail(c, e, -FB_ECUDA, "create a stream");
	for (int i = 0; i < 4; i++) {
		e = cudaEventCreate(&c->ev[i]);
		if (e != cudaSuccess)
			return cuda_fail(c, e, -FB_ECUDA, "create an event");
	}
	/* Plain device memory, never managed: the batch lives on the device like a real input. */
	c->dbuf_bytes = max_batch_bytes > 0 ? max_batch_bytes : 8;
	for (int i = 0; i < 2; i++) {
		e = cudaMalloc(&c->dbuf[i], c->dbuf_bytes);
		if (e != cudaSuccess)
			return cuda_fail(c, e, -FB_ECUDA,
					 "allocate 2 device buffers of %zu bytes (batch size)",
					 c->dbuf_bytes);
	}
	e = cudaMalloc((void **)&c->dsum, 3 * sizeof(*c->dsum));
	if (e == cudaSuccess) /* on the stream: it does not wait for the legacy default one */
		e = cudaMemsetAsync(c->dsum, 0, 3 * sizeof(*c->dsum), c->stream);
	if (e != cudaSuccess)
		return cuda_fail(c, e, -FB_ECUDA, "allocate the checksum words");
	return 0;
}

static void cuda_release(struct compute *c)
{
	if (c->stream)
		cudaStreamSynchronize(c->stream);
	for (int i = 0; i < 2; i++)
		if (c->dbuf[i])
			cudaFree(c->dbuf[i]);
	if (c->dsum)
		cudaFree(c->dsum);
	for (int i = 0; i < 4; i++)
		if (c->ev[i])
			cudaEventDestroy(c->ev[i]);
	if (c->stream)
		cudaStreamDestroy(c->stream);
	/* No cudaDeviceReset: pinned staging buffers may still be freed after fini. */
	free(c);
}

/* Picks this rank's device, creates the context and the buffers. */
static int cuda_open(struct compute *c, size_t max_batch_bytes)
{
	struct run *run = c->run;
	int local = run->local_rank > 0 ? run->local_rank : 0;
	cudaError_t e;
	int err;

	e = cudaGetDeviceCount(&c->ndevices);
	if (e != cudaSuccess || c->ndevices < 1)
		return run_fail(run, -FB_ENODEV, "cuda: no usable device: cudaGetDeviceCount: %s",
				e != cudaSuccess ? cudaGetErrorString(e) : "no device reported");
	c->device = local % c->ndevices;
	c->sharing = cuda_sharing(local, run->local_size > 0 ? run->local_size : 1, c->ndevices);
	e = cudaSetDevice(c->device);
	/* Creates the context now: a busy or prohibited device fails here, not in a step. */
	if (e == cudaSuccess)
		e = cudaFree(NULL);
	if (e != cudaSuccess)
		return cuda_fail(c, e, -FB_ENODEV,
				 "create a context (local rank %d, %d rank%s on it)",
				 run->local_rank, c->sharing, c->sharing == 1 ? "" : "s");
	err = cuda_describe_device(c);
	if (err)
		return err;
	return cuda_setup(c, max_batch_bytes);
}

/* Ranks that share a device calibrate one after the other: the driver time-slices kernels of
 * different processes, and each would measure the other's kernels as its own overhead. Round k
 * calibrates local ranks k*n .. k*n+n-1 (one per device). Every local rank joins every round,
 * also after a failure, so that none waits for ever; the rounds are local_size barriers, which
 * needs no agreement on the device count. */
static int cuda_calibrate_in_turn(struct compute *c, int err)
{
	struct run *run = c->run;
	bool shared = run->local_size > 1 && run->node_comm != MPI_COMM_NULL;
	int turn = c->ndevices > 0 ? run->local_rank / c->ndevices : -1;

	for (int k = 0; k < (shared ? run->local_size : 1); k++) {
		if (k == turn && err == 0)
			err = cuda_calibrate(c);
		if (shared)
			MPI_Barrier(run->node_comm);
	}
	return err;
}

static int cuda_init(struct compute **out, struct run *run, size_t max_batch_bytes)
{
	struct compute *c;
	int err;

	c = (struct compute *)calloc(1, sizeof(*c));
	if (!c)
		return run_fail(run, -ENOMEM, "cuda: cannot allocate the plug-in state");
	c->run = run;
	c->last = -1;
	c->pin_requested = run->cfg.train.pin_memory;

	err = cuda_open(c, max_batch_bytes);
	err = cuda_calibrate_in_turn(c, err);
	if (err) {
		cuda_release(c);
		return err;
	}
	if (c->sharing > 1)
		run_warn(run,
			 "cuda: %d local ranks share device %d (%s): the driver time-slices their "
			 "kernels, so steps can last longer than computation_time",
			 c->sharing, c->device, c->name);
	*out = c;
	return 0;
}

/* Pinned (page-locked) when pin_memory asks for it, like torch's DataLoader(pin_memory=True);
 * pageable otherwise, so the copy goes through the driver's staging buffer as it would. */
static void *cuda_alloc_host(struct compute *c, size_t bytes)
{
	void *p = NULL;

	if (bytes == 0)
		bytes = 1;
	if (c->pin_requested) {
		cudaError_t e = cudaHostAlloc(&p, bytes, cudaHostAllocDefault);

		if (e == cudaSuccess) {
			c->pinned_allocs++;
			return p;
		}
		cudaGetLastError();
		if (!c->pin_failed_warned) {
			run_warn(c->run,
				 "cuda: cannot pin %zu bytes of host memory (%s); using pageable "
				 "memory for those batches",
				 bytes, cudaGetErrorString(e));
			c->pin_failed_warned = true;
		}
	}
	p = malloc(bytes);
	if (p)
		c->pageable_allocs++;
	return p;
}

/* Asks the driver which kind the buffer is: c may already be gone (fini before free_host). */
static void cuda_free_host(struct compute *c, void *p)
{
	struct cudaPointerAttributes a;

	if (!p)
		return;
	if (cudaPointerGetAttributes(&a, p) == cudaSuccess && a.type == cudaMemoryTypeHost) {
		cudaFreeHost(p);
		return;
	}
	cudaGetLastError();
	free(p);
}

static int cuda_step(struct compute *c, const void *batch, size_t bytes, double seconds,
		     struct step_times *t)
{
	int buf = c->next;
	uint64_t copy_ns, kernel_ns;
	cudaError_t e;
	float ms = 0;
	int err;

	if (bytes > c->dbuf_bytes)
		return run_fail(
		    c->run, -FB_EINTERNAL,
		    "cuda: batch of %zu bytes is larger than the %zu-byte device buffers", bytes,
		    c->dbuf_bytes);
	e = cudaMemsetAsync(c->dsum + buf, 0, sizeof(*c->dsum), c->stream);
	if (e == cudaSuccess)
		e = cudaEventRecord(c->ev[0], c->stream);
	if (e == cudaSuccess && bytes > 0)
		e = cudaMemcpyAsync(c->dbuf[buf], batch, bytes, cudaMemcpyHostToDevice, c->stream);
	if (e == cudaSuccess)
		e = cudaEventRecord(c->ev[1], c->stream);
	if (e != cudaSuccess)
		return cuda_fail(c, e, -FB_ECUDA, "copy a batch of %zu bytes to the device", bytes);
	err = cuda_launch_timed(c, c->dbuf[buf], bytes, buf, cuda_budget_ns(c, seconds), false,
				&kernel_ns);
	if (err)
		return err;
	e = cudaEventElapsedTime(&ms, c->ev[0], c->ev[1]);
	if (e != cudaSuccess)
		return cuda_fail(c, e, -FB_ECUDA, "time the copy");
	copy_ns = (uint64_t)llround((double)ms * 1e6);

	/* A kernel well past its deadline: the batch takes longer to read than the step lasts, or
	 * another process holds the device. Honest either way (the kernel never skips the read),
	 * but said once. Ranks sharing a device were warned at init instead. */
	if (c->sharing == 1 && c->steps > 0 && !c->slow_warned && seconds >= 0.001 &&
	    (double)kernel_ns > seconds * CUDA_NS_PER_S * 1.05 + 20000) {
		run_warn(
		    c->run,
		    "cuda: a step took %.3f ms on device %d instead of computation_time %.3f ms: "
		    "reading its %zu-byte batch takes longer, or another process uses the GPU",
		    (double)kernel_ns / 1e6, c->device, seconds * 1e3, bytes);
		c->slow_warned = true;
	}

	c->last = buf;
	c->next = buf ^ 1;
	c->steps++;
	c->copy_bytes += bytes;
	c->copy_ns += copy_ns;
	c->busy_ns += kernel_ns;
	if (t) {
		t->busy_ns = kernel_ns;
		t->copy_ns = copy_ns;
		t->copy_bytes = bytes;
	}
	return 0;
}

static void cuda_describe(struct compute *c, void *obj)
{
	json_t *o = (json_t *)obj, *cal, *errs;
	char v[32];

	json_object_set_new(o, "kind", json_string("cuda"));
	json_object_set_new(o, "device_name", json_string(c->name));
	json_object_set_new(o, "device_count", json_integer(c->ndevices));
	json_object_set_new(o, "device_index", json_integer(c->device));
	json_object_set_new(o, "pci_bus_id", json_string(c->pci));
	snprintf(v, sizeof(v), "%d.%d", c->cc_major, c->cc_minor);
	json_object_set_new(o, "compute_capability", json_string(v));
	json_object_set_new(o, "multiprocessors", json_integer(c->sms));
	json_object_set_new(o, "device_memory_bytes", json_integer((json_int_t)c->device_mem));
	cuda_version_text(c->driver_version, v, sizeof(v));
	json_object_set_new(o, "driver_version", json_string(v));
	cuda_version_text(c->runtime_version, v, sizeof(v));
	json_object_set_new(o, "runtime_version", json_string(v));
	json_object_set_new(o, "local_rank", json_integer(c->run->local_rank));
	json_object_set_new(o, "ranks_sharing_device", json_integer(c->sharing));
	json_object_set_new(o, "step_mode", json_string("synchronous: copy then kernel"));
	json_object_set_new(o, "pin_memory", json_boolean(c->pin_requested));
	json_object_set_new(o, "host_memory",
			    json_string(c->pinned_allocs && c->pageable_allocs ? "mixed"
					: c->pinned_allocs		       ? "pinned"
									       : "pageable"));

	cal = json_object();
	json_object_set_new(cal, "method", json_string("%globaltimer deadline, CUDA events"));
	json_object_set_new(cal, "ns_per_iteration", json_real(c->ns_per_iteration));
	json_object_set_new(cal, "launch_overhead_ns", json_integer((json_int_t)c->overhead_ns));
	errs = json_object();
	for (size_t p = 0; p < CUDA_CAL_POINTS; p++)
		json_object_set_new(errs, cuda_cal_names[p],
				    c->cal_done ? json_real(c->cal_error_pct[p]) : json_null());
	json_object_set_new(cal, "error_percentage", errs);
	json_object_set_new(o, "calibration", cal);

	json_object_set_new(o, "steps", json_integer((json_int_t)c->steps));
	json_object_set_new(o, "h2d_bytes", json_integer((json_int_t)c->copy_bytes));
	json_object_set_new(o, "h2d_seconds", json_real((double)c->copy_ns / CUDA_NS_PER_S));
	json_object_set_new(o, "kernel_seconds", json_real((double)c->busy_ns / CUDA_NS_PER_S));
	json_object_set_new(o, "h2d_GiB_per_second",
			    c->copy_ns > 0 ? json_real((double)c->copy_bytes /
						       ((double)c->copy_ns / CUDA_NS_PER_S) /
						       (1024.0 * 1024.0 * 1024.0))
					   : json_null());
}

static int cuda_fini(struct compute *c)
{
	cudaError_t e;

	if (!c)
		return 0;
	e = cudaStreamSynchronize(c->stream);
	if (e != cudaSuccess) {
		int err = cuda_fail(c, e, -FB_ECUDA, "finish the last step");

		cuda_release(c);
		return err;
	}
	cuda_release(c);
	return 0;
}

uint64_t cuda_compute_last_checksum(struct compute *c)
{
	unsigned long long s = 0;

	if (c->last < 0 ||
	    cudaMemcpy(&s, c->dsum + c->last, sizeof(s), cudaMemcpyDeviceToHost) != cudaSuccess)
		return 0;
	return s;
}

/* Positional: designated initialisers are C++20. Order as in struct compute_ops. */
const struct compute_ops cuda_compute = {
    COMPUTE_OPS_VERSION, /* version */
    "cuda",		 /* name */
    cuda_available,	 /* available */
    cuda_init,		 /* init */
    cuda_alloc_host,	 /* alloc_host */
    cuda_free_host,	 /* free_host */
    cuda_step,		 /* step */
    cuda_describe,	 /* describe */
    cuda_fini,		 /* fini */
};
