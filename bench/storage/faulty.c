/* faulty back-end, for tests: wraps a real back-end ([storage.faulty] inner, posix) and injects
 * the failures feedbench must survive (docs/failures.md 14-16): the Nth call of one operation fails
 * with a chosen errno on a chosen rank, reads come back short, or EINTR arrives every other
 * call. Modelled on SQLite's test_vfs: the fault sits below the wrappers, so the wrappers'
 * loops and the run's error handling are what gets tested.
 *
 * read_slowdown = s makes the rank's storage a known fraction slower, the slowdown that proves
 * `feedbench compare` detects regressions. Stretching each call would not do it: with several
 * reads in flight, a stretched call leaves the device less loaded and the others finish sooner.
 * Instead the rank keeps the time its reads were busy (at least one in flight) and, whenever it
 * owes more than a millisecond, stops starting reads, lets those in flight finish and pauses
 * until the pauses add up to busy x s / (1 - s). The reads themselves run as they would, at the
 * same concurrency, and a storage-bound run delivers the fraction s less.
 *
 * read_latency = L makes every read call last at least L (the inner read, then a sleep): an
 * emulated device with a fixed service time. Over a memory-backed folder that gives a
 * storage-bound run whose speed does not drift with a shared machine's disk, which is what the
 * tests of `feedbench compare` need to prove its verdicts. latency_halving = D halves it every
 * D seconds from the rank's first read (a device warming up, never steady); write_latency
 * makes every write last at least that long (the ior workload's stonewall); slow_rank = r doubles
 * both on rank r (a straggler).
 *
 * Calls are counted per rank, per operation, over all files and threads (atomic counters in
 * shared_device = true (with read_latency) makes the ranks of a node share one emulated device:
 * every read takes an exclusive flock(2) on "<data_dir>.faulty-device" (beside the dataset
 * folder, one open per read so threads queue too) for the inner read and read_latency. The
 * node then serves at most 1/read_latency reads/s whatever the rank count, so the largest
 * rank count that keeps AU above a threshold is known in advance (tests of feedbench search).
 *
 * run->storage_priv), so "fail the 3rd read on rank 1" is deterministic whatever the threads do.
 *
 * Queued reads (io_depth, inner = uring) go through the inner back-end's queue; a read chosen
 * to fail is not sent and completes with the errno at the next reap, among the others in
 * flight. read_slowdown, read_latency, short_reads and eintr apply to plain reads only.
 *
 * Collective transfers (inner = mpiio, [storage.mpiio] collective = true) count as reads and
 * writes; the namespace calls (mkdir, unlink, rmdir, sync_dir, list_dir, rename) are fault points
 * of their own and otherwise go to the inner back-end, or to the POSIX calls.
 */
#include "storage.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "../run.h"
#include "../safefile.h"
#include "../timer.h"

extern const struct storage_ops faulty_storage;

enum {
	FAULT_OPEN,
	FAULT_READ,
	FAULT_WRITE,
	FAULT_FSYNC,
	FAULT_CLOSE,
	FAULT_MKDIR,
	FAULT_UNLINK,
	FAULT_RMDIR,
	FAULT_SYNC_DIR,
	FAULT_LIST_DIR,
	FAULT_RENAME,
	FAULT_NOPS
};

static const char *const faulty_op_names[FAULT_NOPS] = {"open",	    "read",	"write",  "fsync",
							"close",    "mkdir",	"unlink", "rmdir",
							"sync_dir", "list_dir", "rename"};

struct faulty_errno {
	const char *name;
	int value;
};

static const struct faulty_errno faulty_errnos[] = {
    {"EIO", EIO},	{"ENOSPC", ENOSPC},	  {"EDQUOT", EDQUOT},	{"EROFS", EROFS},
    {"EACCES", EACCES}, {"EPERM", EPERM},	  {"ENOENT", ENOENT},	{"ENOMEM", ENOMEM},
    {"EBADF", EBADF},	{"EAGAIN", EAGAIN},	  {"ESTALE", ESTALE},	{"ETIMEDOUT", ETIMEDOUT},
    {"EFBIG", EFBIG},	{"EINTR", EINTR},	  {"ENODEV", ENODEV},	{"ENXIO", ENXIO},
    {"EBUSY", EBUSY},	{"ENOTEMPTY", ENOTEMPTY}, {"ENOTDIR", ENOTDIR},
};

/* Per run (per rank): call counters, and the read pacing of read_slowdown. */
struct faulty_state {
	uint64_t calls[FAULT_NOPS];
	uint64_t eintr_calls;
	pthread_mutex_t pace_lock;
	pthread_cond_t pace_cond;
	int inflight;	     /* reads in the inner back-end now */
	bool pausing;	     /* a thread is paying the debt: no read starts */
	uint64_t busy_since; /* when inflight went from 0 to 1 */
	uint64_t busy_ns;    /* time with at least one read in flight */
	uint64_t paid_ns;    /* pauses inserted */
	uint64_t first_read; /* ns: latency_halving counts from here */
};

#define FAULTY_PACE_MIN_NS 1000000 /* pay the debt in pauses of at least 1 ms */

struct faulty_file {
	struct sfile_base base;
	struct sfile *inner;
	const struct storage_ops *inner_ops;
	struct run *run;
	int fail_op, fail_errno; /* resolved at open */
};

static struct faulty_state *faulty_state_of(struct run *run)
{
	struct faulty_state **slot = (struct faulty_state **)&run->storage_priv;
	struct faulty_state *s = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	struct faulty_state *expected = NULL;

	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	pthread_mutex_init(&s->pace_lock, NULL);
	pthread_cond_init(&s->pace_cond, NULL);
	if (!__atomic_compare_exchange_n(slot, &expected, s, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		pthread_mutex_destroy(&s->pace_lock);
		pthread_cond_destroy(&s->pace_cond);
		free(s); /* another thread was first */
		s = expected;
	}
	return s;
}

/* Checks [storage.faulty] once per open: the op and errno names, and the inner back-end. */
static int faulty_config(struct run *run, int *op, int *err, const struct storage_ops **inner)
{
	const struct config *cfg = &run->cfg;

	*op = -1;
	for (int i = 0; i < FAULT_NOPS; i++)
		if (strcmp(cfg->faulty.fail_op, faulty_op_names[i]) == 0)
			*op = i;
	if (*op < 0)
		return run_fail(run, -FB_ECONFIG,
				"[storage.faulty] fail_op = '%s' is not one of open, read, write, "
				"fsync, close, mkdir, unlink, rmdir, sync_dir, list_dir, rename",
				cfg->faulty.fail_op);
	*err = 0;
	for (size_t i = 0; i < sizeof(faulty_errnos) / sizeof(faulty_errnos[0]); i++)
		if (strcmp(cfg->faulty.fail_errno, faulty_errnos[i].name) == 0)
			*err = faulty_errnos[i].value;
	if (!*err)
		return run_fail(
		    run, -FB_ECONFIG,
		    "[storage.faulty] fail_errno = '%s' is not a known errno name (EIO, "
		    "ENOSPC, EDQUOT, EROFS, EACCES, ...)",
		    cfg->faulty.fail_errno);
	*inner = storage_find(cfg->faulty.inner);
	if (!*inner || *inner == &faulty_storage || (*inner)->not_built)
		return run_fail(run, -FB_ECONFIG,
				"[storage.faulty] inner = '%s' is not a back-end faulty can wrap",
				cfg->faulty.inner);
	return 0;
}

/* Counts a call of op on this rank; returns the injected -errno when it is the one to fail. */
/* fop and err: [storage.faulty] fail_op and fail_errno, resolved once at open (this runs
 * inside the timed read call). */
static int faulty_hit(struct run *run, int op, int fop, int err)
{
	const struct config *cfg = &run->cfg;
	struct faulty_state *s = faulty_state_of(run);
	uint64_t n;

	if (!s)
		return -ENOMEM;
	n = __atomic_add_fetch(&s->calls[op], 1, __ATOMIC_RELAXED);
	if (op != fop || cfg->faulty.fail_nth <= 0 || (uint64_t)cfg->faulty.fail_nth != n)
		return 0;
	if (cfg->faulty.fail_rank >= 0 && cfg->faulty.fail_rank != run->rank)
		return 0;
	return -err;
}

static int faulty_open(struct sfile **out, const char *path, int flags, struct run *run)
{
	const struct storage_ops *inner = NULL;
	struct faulty_file *f;
	int op = -1, err = 0, rc;

	rc = faulty_config(run, &op, &err, &inner);
	if (rc)
		return rc;
	rc = faulty_hit(run, FAULT_OPEN, op, err);
	if (rc)
		return rc;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	rc = inner->open(&f->inner, path, flags, run);
	if (rc) {
		free(f);
		return rc;
	}
	f->base.ops = &faulty_storage;
	/* The inner back-end decides whether the handle is shared (posix: never). */
	f->base.flags = ((struct sfile_base *)f->inner)->flags;
	snprintf(f->base.path, sizeof(f->base.path), "%s", path);
	f->inner_ops = inner;
	f->run = run;
	f->fail_op = op;
	f->fail_errno = err;
	*out = (struct sfile *)f;
	return 0;
}

/* Sleeps until the monotonic clock reaches end. No spinning: with several reader threads on
 * few cores a spin would take the CPU the other threads need; the wake-up latency (tens of
 * microseconds) is part of the emulated service time, and the pauses are counted as made. */
static void faulty_sleep_until(uint64_t end)
{
	struct timespec ts = {.tv_sec = (time_t)(end / 1000000000u),
			      .tv_nsec = (long)(end % 1000000000u)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* What the rank owes: busy x s / (1 - s) minus the pauses already made. Lock held. */
static int64_t faulty_debt(const struct faulty_state *st, double s, uint64_t now)
{
	uint64_t busy = st->busy_ns + (st->inflight ? now - st->busy_since : 0);

	return (int64_t)((double)busy * s / (1.0 - s)) - (int64_t)st->paid_ns;
}

/* Before a read: pays the rank's debt when it reached FAULTY_PACE_MIN_NS (no new read starts,
 * those in flight finish, then a pause), and counts the read in flight. */
static void faulty_pace_enter(struct faulty_state *st, double s)
{
	pthread_mutex_lock(&st->pace_lock);
	for (;;) {
		while (st->pausing)
			pthread_cond_wait(&st->pace_cond, &st->pace_lock);
		if (faulty_debt(st, s, timer_now_ns()) < FAULTY_PACE_MIN_NS)
			break;
		st->pausing = true;
		while (st->inflight > 0)
			pthread_cond_wait(&st->pace_cond, &st->pace_lock);
		uint64_t t0 = timer_now_ns();
		int64_t debt = faulty_debt(st, s, t0);
		pthread_mutex_unlock(&st->pace_lock);
		if (debt > 0)
			faulty_sleep_until(t0 + (uint64_t)debt);
		pthread_mutex_lock(&st->pace_lock);
		st->paid_ns += timer_now_ns() - t0;
		st->pausing = false;
		pthread_cond_broadcast(&st->pace_cond);
	}
	if (st->inflight++ == 0)
		st->busy_since = timer_now_ns();
	pthread_mutex_unlock(&st->pace_lock);
}

static void faulty_pace_exit(struct faulty_state *st)
{
	pthread_mutex_lock(&st->pace_lock);
	if (--st->inflight == 0) {
		st->busy_ns += timer_now_ns() - st->busy_since;
		pthread_cond_broadcast(&st->pace_cond);
	}
	pthread_mutex_unlock(&st->pace_lock);
}

/* An emulated device's service time: lat seconds, twice on slow_rank, halved every
 * latency_halving seconds since the rank's first read (reads only). */
static uint64_t faulty_latency_ns(const struct run *run, struct faulty_state *st, double lat,
				  uint64_t now)
{
	const struct config *cfg = &run->cfg;
	uint64_t zero = 0;

	if (run->rank == cfg->faulty.slow_rank)
		lat *= 2;
	if (st && cfg->faulty.latency_halving > 0) {
		__atomic_compare_exchange_n(&st->first_read, &zero, now, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
		lat *= pow(0.5,
			   timer_ns_to_s(now - __atomic_load_n(&st->first_read, __ATOMIC_RELAXED)) /
			       cfg->faulty.latency_halving);
	}
	return (uint64_t)(lat * 1e9);
}

/* The inner read, stretched to read_latency and paced by read_slowdown. */
static ssize_t faulty_slow_pread(struct faulty_file *f, void *buf, size_t len, uint64_t off)
{
	const struct config *cfg = &f->run->cfg;
	struct faulty_state *st = faulty_state_of(f->run);
	double s = cfg->faulty.read_slowdown;
	uint64_t t0;
	ssize_t n;

	if (!st)
		return -ENOMEM;
	if (s > 0)
		faulty_pace_enter(st, s);
	int lockfd = -1;
	if (cfg->faulty.shared_device && cfg->faulty.read_latency > 0) {
		char lpath[CFG_PATH_MAX + 32];

		/* The device's lock file beside the data folder: never through a link, never a
		 * FIFO or a device (safe_open_write), not truncated. */
		snprintf(lpath, sizeof(lpath), "%s.faulty-device", cfg->dataset.data_dir);
		lockfd = safe_open_write(lpath, 0, false);
		while (lockfd >= 0 && flock(lockfd, LOCK_EX) < 0)
			if (errno != EINTR) {
				int e = -errno;
				close(lockfd);
				lockfd = e;
			}
		if (lockfd < 0) {
			/* the read counted in flight ends here: a pause waits for none forever */
			if (s > 0)
				faulty_pace_exit(st);
			return lockfd;
		}
	}
	t0 = timer_now_ns();
	n = f->inner_ops->pread(f->inner, buf, len, off);
	if (cfg->faulty.read_latency > 0)
		faulty_sleep_until(t0 +
				   faulty_latency_ns(f->run, st, cfg->faulty.read_latency, t0));
	if (lockfd >= 0)
		close(lockfd); /* releases the device */
	if (s > 0)
		faulty_pace_exit(st);
	return n;
}

static ssize_t faulty_pread(struct sfile *sf, void *buf, size_t len, uint64_t off)
{
	struct faulty_file *f = (struct faulty_file *)sf;
	const struct config *cfg = &f->run->cfg;
	int rc = faulty_hit(f->run, FAULT_READ, f->fail_op, f->fail_errno);

	if (rc)
		return rc;
	if (cfg->faulty.eintr) {
		struct faulty_state *s = faulty_state_of(f->run);

		/* Odd calls are interrupted; the retry goes through. */
		if (__atomic_add_fetch(&s->eintr_calls, 1, __ATOMIC_RELAXED) % 2 == 1)
			return -EINTR;
	}
	if (cfg->faulty.short_reads && len > 1)
		len /= 2;
	if (cfg->faulty.read_slowdown > 0 || cfg->faulty.read_latency > 0)
		return faulty_slow_pread(f, buf, len, off);
	return f->inner_ops->pread(f->inner, buf, len, off);
}

static ssize_t faulty_pwrite(struct sfile *sf, const void *buf, size_t len, uint64_t off)
{
	struct faulty_file *f = (struct faulty_file *)sf;
	int rc = faulty_hit(f->run, FAULT_WRITE, f->fail_op, f->fail_errno);

	if (rc)
		return rc;
	if (f->run->cfg.faulty.write_latency > 0) {
		uint64_t t0 = timer_now_ns();
		ssize_t n = f->inner_ops->pwrite(f->inner, buf, len, off);
		faulty_sleep_until(
		    t0 + faulty_latency_ns(f->run, NULL, f->run->cfg.faulty.write_latency, t0));
		return n;
	}
	return f->inner_ops->pwrite(f->inner, buf, len, off);
}

static int faulty_sync(struct sfile *sf)
{
	struct faulty_file *f = (struct faulty_file *)sf;
	int rc = faulty_hit(f->run, FAULT_FSYNC, f->fail_op, f->fail_errno);

	if (rc)
		return rc;
	return f->inner_ops->sync ? f->inner_ops->sync(f->inner) : 0;
}

/* The inner file is closed even when the close is made to fail: no descriptor leaks. */
static int faulty_close(struct sfile *sf)
{
	struct faulty_file *f = (struct faulty_file *)sf;
	int fault = faulty_hit(f->run, FAULT_CLOSE, f->fail_op, f->fail_errno);
	int rc = f->inner_ops->close(f->inner);

	free(f);
	return fault ? fault : rc;
}

static int faulty_size(struct sfile *sf, uint64_t *size)
{
	struct faulty_file *f = (struct faulty_file *)sf;

	return f->inner_ops->size(f->inner, size);
}

static int faulty_evict(struct sfile *sf)
{
	struct faulty_file *f = (struct faulty_file *)sf;

	return f->inner_ops->evict ? f->inner_ops->evict(f->inner) : 0;
}

/* Namespace calls: counted like the others, then the inner back-end's (or POSIX's). */
static int faulty_ns_hit(struct run *run, int op, const struct storage_ops **inner)
{
	int fop, err, rc = faulty_config(run, &fop, &err, inner);

	return rc ? rc : faulty_hit(run, op, fop, err);
}

static int faulty_mkdir(const char *path, unsigned mode, struct run *run)
{
	const struct storage_ops *inner = NULL;
	int rc = faulty_ns_hit(run, FAULT_MKDIR, &inner);

	return rc ? rc : storage_call_mkdir(inner, path, mode, run);
}

static int faulty_unlink(const char *path, struct run *run)
{
	const struct storage_ops *inner = NULL;
	int rc = faulty_ns_hit(run, FAULT_UNLINK, &inner);

	return rc ? rc : storage_call_unlink(inner, path, run);
}

static int faulty_rmdir(const char *path, struct run *run)
{
	const struct storage_ops *inner = NULL;
	int rc = faulty_ns_hit(run, FAULT_RMDIR, &inner);

	return rc ? rc : storage_call_rmdir(inner, path, run);
}

static int faulty_sync_dir(const char *path, struct run *run)
{
	const struct storage_ops *inner = NULL;
	int rc = faulty_ns_hit(run, FAULT_SYNC_DIR, &inner);

	return rc ? rc : storage_call_sync_dir(inner, path, run);
}

static int faulty_list_dir(const char *path, storage_dir_fn fn, void *arg, struct run *run)
{
	const struct storage_ops *inner = NULL;
	int rc = faulty_ns_hit(run, FAULT_LIST_DIR, &inner);

	return rc ? rc : storage_call_list_dir(inner, path, fn, arg, run);
}

/* The config check refuses this combination before a run; the last guard where none ran. */
static int faulty_no_collective(const struct faulty_file *f)
{
	return run_fail(f->run, -ENOTSUP, "[storage.faulty] inner = %s has no collective transfers",
			f->inner_ops->name);
}

/* Collective transfers of the inner back-end (mpiio). A call chosen to fail still joins the
 * other ranks' collective call, with nothing to move, and then fails: a rank never goes
 * missing from a collective call the others wait in. */
static ssize_t faulty_xfer_all(struct sfile *sf, void *buf, size_t len, uint64_t off, bool write)
{
	struct faulty_file *f = (struct faulty_file *)sf;
	const struct storage_ops *in = f->inner_ops;
	int rc;
	ssize_t n;

	if (!storage_has_collective(in))
		return faulty_no_collective(f);
	rc = faulty_hit(f->run, write ? FAULT_WRITE : FAULT_READ, f->fail_op, f->fail_errno);
	n = write ? in->pwrite_all(f->inner, buf, rc ? 0 : len, off)
		  : in->pread_all(f->inner, buf, rc ? 0 : len, off);
	return rc ? rc : n;
}

/* One collective read of n ranges, a read fault point like pread_all: the call chosen to fail
 * joins with no range. */
static ssize_t faulty_pread_extents_all(struct sfile *sf, void *buf,
					const struct storage_extent *ext, size_t n)
{
	struct faulty_file *f = (struct faulty_file *)sf;
	const struct storage_ops *in = f->inner_ops;
	ssize_t got;
	int rc;

	if (!storage_has_collective(in))
		return faulty_no_collective(f);
	rc = faulty_hit(f->run, FAULT_READ, f->fail_op, f->fail_errno);
	got = in->pread_extents_all(f->inner, buf, ext, rc ? 0 : n);
	return rc ? rc : got;
}

/* Checks made before the run look at the back-end that moves the bytes. */
static const char *faulty_wraps(const struct config *cfg)
{
	return cfg->faulty.inner;
}

static ssize_t faulty_pread_all(struct sfile *sf, void *buf, size_t len, uint64_t off)
{
	return faulty_xfer_all(sf, buf, len, off, false);
}

static ssize_t faulty_pwrite_all(struct sfile *sf, const void *buf, size_t len, uint64_t off)
{
	return faulty_xfer_all(sf, (void *)buf, len, off, true);
}

static int faulty_rename(const char *from, const char *to, struct run *run)
{
	const struct storage_ops *inner = NULL;
	int rc = faulty_ns_hit(run, FAULT_RENAME, &inner);

	return rc ? rc : storage_call_rename(inner, from, to, run);
}

/* Queued reads: the inner back-end's queue, and the failures injected but not yet reaped. */
struct io_queue {
	struct io_queue *inner;
	const struct storage_ops *inner_ops;
	struct run *run;
	int fail_op, fail_errno;
	struct io_completion *failed; /* depth entries */
	unsigned nfailed;
};

static int faulty_queue_open(struct io_queue **out, unsigned depth, struct run *run)
{
	const struct storage_ops *inner = NULL;
	struct io_queue *q;
	int op, err, rc = faulty_config(run, &op, &err, &inner);

	*out = NULL;
	if (rc)
		return rc;
	if (!inner->queue_open)
		return 0; /* no queue: reads go one at a time, through faulty_pread */
	q = calloc(1, sizeof(*q));
	if (q)
		q->failed = calloc(depth ? depth : 1, sizeof(*q->failed));
	if (!q || !q->failed) {
		free(q);
		return -ENOMEM;
	}
	rc = inner->queue_open(&q->inner, depth, run);
	if (rc < 0) {
		free(q->failed);
		free(q);
		return rc;
	}
	q->inner_ops = inner;
	q->run = run;
	q->fail_op = op;
	q->fail_errno = err;
	*out = q;
	return 0;
}

static int faulty_queue_register(struct io_queue *q, void *const *bufs, size_t len, unsigned n)
{
	if (!q->inner_ops->queue_register)
		return -ENOTSUP;
	return q->inner_ops->queue_register(q->inner, bufs, len, n);
}

static int faulty_queue_read(struct io_queue *q, struct sfile *sf, void *buf, size_t len,
			     uint64_t off, uint64_t tag)
{
	struct faulty_file *f = (struct faulty_file *)sf;
	int rc = faulty_hit(q->run, FAULT_READ, q->fail_op, q->fail_errno);

	if (rc) { /* the wrappers never queue more than depth reads */
		q->failed[q->nfailed++] = (struct io_completion){.tag = tag, .res = rc};
		return 0;
	}
	return q->inner_ops->queue_read(q->inner, f->inner, buf, len, off, tag);
}

static int faulty_queue_reap(struct io_queue *q, struct io_completion *c, unsigned max,
			     unsigned min)
{
	unsigned n = 0;
	int rc;

	while (q->nfailed && n < max)
		c[n++] = q->failed[--q->nfailed];
	/* The inner queue still sends what is queued, and waits only for what is missing. */
	rc = q->inner_ops->queue_reap(q->inner, c + n, max - n, min > n ? min - n : 0);
	if (rc < 0)
		return n ? (int)n : rc;
	return (int)n + rc;
}

static void faulty_queue_close(struct io_queue *q)
{
	q->inner_ops->queue_close(q->inner);
	free(q->failed);
	free(q);
}

const struct storage_ops faulty_storage = {
    .version = STORAGE_OPS_VERSION,
    .name = "faulty",
    .caps = STORAGE_CAP_DIRECT | STORAGE_CAP_SHARED, /* those of posix, the inner default */
    .open = faulty_open,
    .pread = faulty_pread,
    .pwrite = faulty_pwrite,
    .sync = faulty_sync,
    .close = faulty_close,
    .size = faulty_size,
    .evict = faulty_evict,
    .mkdir = faulty_mkdir,
    .unlink = faulty_unlink,
    .rmdir = faulty_rmdir,
    .sync_dir = faulty_sync_dir,
    .rename = faulty_rename,
    .queue_open = faulty_queue_open,
    .queue_register = faulty_queue_register,
    .queue_read = faulty_queue_read,
    .queue_reap = faulty_queue_reap,
    .queue_close = faulty_queue_close,
    .list_dir = faulty_list_dir,
    .pread_all = faulty_pread_all,
    .pwrite_all = faulty_pwrite_all,
    .pread_extents_all = faulty_pread_extents_all,
    .wraps = faulty_wraps,
};
