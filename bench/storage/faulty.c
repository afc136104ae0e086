/* faulty back-end, for tests: wraps a real back-end ([storage.faulty] inner, posix) and injects
 * the failures feedbench must survive (FAILURES.md 14-16): the Nth call of one operation fails
 * with a chosen errno on a chosen rank, reads come back short, or EINTR arrives every other
 * call. Modelled on SQLite's test_vfs: the fault sits below the wrappers, so the wrappers'
 * loops and the run's error handling are what gets tested.
 *
 * read_slowdown stretches every read call by a known factor (the time the inner read took x
 * s / (1 - s)), so a run delivers the fraction s less through the read path: the known
 * slowdown that proves `feedbench compare` detects regressions.
 *
 * Calls are counted per rank, per operation, over all files and threads (atomic counters in
 * run->storage_priv), so "fail the 3rd read on rank 1" is deterministic whatever the threads do.
 */
#include "storage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../run.h"
#include "../timer.h"

extern const struct storage_ops faulty_storage;

enum { FAULT_OPEN, FAULT_READ, FAULT_WRITE, FAULT_FSYNC, FAULT_CLOSE, FAULT_NOPS };

static const char *const faulty_op_names[FAULT_NOPS] = {"open", "read", "write", "fsync", "close"};

struct faulty_errno {
	const char *name;
	int value;
};

static const struct faulty_errno faulty_errnos[] = {
    {"EIO", EIO},	{"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT}, {"EROFS", EROFS},
    {"EACCES", EACCES}, {"EPERM", EPERM},   {"ENOENT", ENOENT}, {"ENOMEM", ENOMEM},
    {"EBADF", EBADF},	{"EAGAIN", EAGAIN}, {"ESTALE", ESTALE}, {"ETIMEDOUT", ETIMEDOUT},
    {"EFBIG", EFBIG},	{"EINTR", EINTR},   {"ENODEV", ENODEV}, {"ENXIO", ENXIO},
};

/* Per run (per rank): call counters. */
struct faulty_state {
	uint64_t calls[FAULT_NOPS];
	uint64_t eintr_calls;
};

struct faulty_file {
	struct sfile_base base;
	struct sfile *inner;
	const struct storage_ops *inner_ops;
	struct run *run;
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
	if (!__atomic_compare_exchange_n(slot, &expected, s, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
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
				"fsync, close",
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
	if (!*inner || *inner == &faulty_storage)
		return run_fail(run, -FB_ECONFIG,
				"[storage.faulty] inner = '%s' is not a back-end faulty can wrap",
				cfg->faulty.inner);
	return 0;
}

/* Counts a call of op on this rank; returns the injected -errno when it is the one to fail. */
static int faulty_hit(struct run *run, int op)
{
	const struct config *cfg = &run->cfg;
	struct faulty_state *s = faulty_state_of(run);
	uint64_t n;
	int fop, err;
	const struct storage_ops *inner;

	if (!s || faulty_config(run, &fop, &err, &inner))
		return -FB_ECONFIG;
	n = __atomic_add_fetch(&s->calls[op], 1, __ATOMIC_RELAXED);
	if (op != fop || cfg->faulty.fail_nth <= 0 || (uint64_t)cfg->faulty.fail_nth != n)
		return 0;
	if (cfg->faulty.fail_rank >= 0 && cfg->faulty.fail_rank != run->rank)
		return 0;
	return -err;
}

static int faulty_open(struct sfile **out, const char *path, int flags, struct run *run)
{
	const struct storage_ops *inner;
	struct faulty_file *f;
	int op, err, rc;

	rc = faulty_config(run, &op, &err, &inner);
	if (rc)
		return rc;
	rc = faulty_hit(run, FAULT_OPEN);
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
	*out = (struct sfile *)f;
	return 0;
}

/* The inner read, then a wait of its own duration x s / (1 - s): sleep for all but the last
 * 100 us, spin for those (nanosleep alone overshoots by tens of microseconds). */
static ssize_t faulty_slow_pread(struct faulty_file *f, void *buf, size_t len, uint64_t off,
				 double s)
{
	uint64_t t0 = timer_now_ns(), end;
	ssize_t n = f->inner_ops->pread(f->inner, buf, len, off);
	uint64_t took = timer_now_ns() - t0;

	end = t0 + took + (uint64_t)((double)took * s / (1.0 - s));
	for (;;) {
		uint64_t now = timer_now_ns();
		if (now >= end)
			break;
		if (end - now > 150000) {
			uint64_t ns = end - now - 100000;
			struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
					      .tv_nsec = (long)(ns % 1000000000u)};
			nanosleep(&ts, NULL);
		}
	}
	return n;
}

static ssize_t faulty_pread(struct sfile *sf, void *buf, size_t len, uint64_t off)
{
	struct faulty_file *f = (struct faulty_file *)sf;
	const struct config *cfg = &f->run->cfg;
	int rc = faulty_hit(f->run, FAULT_READ);

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
	if (cfg->faulty.read_slowdown > 0)
		return faulty_slow_pread(f, buf, len, off, cfg->faulty.read_slowdown);
	return f->inner_ops->pread(f->inner, buf, len, off);
}

static ssize_t faulty_pwrite(struct sfile *sf, const void *buf, size_t len, uint64_t off)
{
	struct faulty_file *f = (struct faulty_file *)sf;
	int rc = faulty_hit(f->run, FAULT_WRITE);

	if (rc)
		return rc;
	return f->inner_ops->pwrite(f->inner, buf, len, off);
}

static int faulty_sync(struct sfile *sf)
{
	struct faulty_file *f = (struct faulty_file *)sf;
	int rc = faulty_hit(f->run, FAULT_FSYNC);

	if (rc)
		return rc;
	return f->inner_ops->sync ? f->inner_ops->sync(f->inner) : 0;
}

/* The inner file is closed even when the close is made to fail: no descriptor leaks. */
static int faulty_close(struct sfile *sf)
{
	struct faulty_file *f = (struct faulty_file *)sf;
	int fault = faulty_hit(f->run, FAULT_CLOSE);
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
};
