/* The wrappers every read and write goes through: transfer splitting, short-I/O and EINTR
 * loops, latency histograms and error context live here once, so every back-end and every
 * format is measured the same way.
 */
#include "storage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../run.h"
#include "../safefile.h"
#include "../timer.h"
#include "../trace.h"
#include "../dsfile.h"
#include "fs.h"

const char *io_path(const struct sfile *f)
{
	return ((const struct sfile_base *)f)->path;
}

int io_open(struct io *io, struct sfile **f, const char *path, int flags)
{
	struct run *run = io->run;
	uint64_t t0 = timer_now_ns();
	int rc;

	if (io->direct && (flags & STORAGE_O_READ))
		flags |= STORAGE_O_DIRECT;
	rc = run->storage->open(f, path, flags, run);
	if (rc < 0)
		return run_fail(run, rc, "cannot open '%s': %s", path, fb_strerror(rc));
	if (io->stats && (flags & STORAGE_O_READ)) {
		io->stats->opens++;
		io->stats->open_ns += timer_now_ns() - t0;
	}
	if (run->trace)
		trace_io(run->trace, "open", trace_cat(run->trace), t0, timer_now_ns(), path, 0, 0);
	return 0;
}

int io_open_file(struct io *io, struct ds_file *file, struct sfile **f)
{
	if (file->shared) {
		*f = file->shared;
		return 0;
	}
	return io_open(io, f, file->path, STORAGE_O_READ);
}

int io_close_file(struct io *io, struct ds_file *file, struct sfile *f)
{
	return f == file->shared ? 0 : io_close(io, f);
}

#define IO_TAG_SYNC UINT64_MAX /* the one read of io_call_read through a queue */

/* One read through the thread's queue, waited for: what pread would have returned; *ttfb_ns
 * the back-end's time to first byte of it when it reports one. */
static ssize_t io_queue_call(struct io *io, struct sfile *f, void *buf, size_t len, uint64_t off,
			     uint64_t *ttfb_ns)
{
	const struct storage_ops *ops = io->run->storage;
	struct io_completion c = {0};
	int rc = ops->queue_read(io->queue, f, buf, len, off, IO_TAG_SYNC);

	if (rc < 0)
		return rc;
	if (io->stats && io->stats->inflight_max < 1) /* one read in flight on the ring */
		io->stats->inflight_max = 1;
	do
		rc = ops->queue_reap(io->queue, &c, 1, 1);
	while (rc == -EINTR);
	if (rc < 0)
		return rc;
	/* Only this read is in flight on a queue used one read at a time: another tag would be
	 * another request's result, which must not pass for this one's. */
	if (rc != 1 || c.tag != IO_TAG_SYNC)
		return run_fail(io->run, -EIO,
				"internal error: a read of '%s' at offset %" PRIu64
				" through the %s queue was answered by %s",
				io_path(f), off, ops->name,
				rc != 1 ? "no completion" : "another request's completion");
	*ttfb_ns = c.ttfb_ns;
	return (ssize_t)c.res;
}

/* One call of the back-end, retried on EINTR; *ttfb_ns as io_queue_call's (0 without a queue). */
static ssize_t io_call_read(struct io *io, struct sfile *f, void *buf, size_t len, uint64_t off,
			    uint64_t *ttfb_ns)
{
	const struct sfile_base *b = (const struct sfile_base *)f;
	ssize_t n;

	for (;;) {
		n = io->queue ? io_queue_call(io, f, buf, len, off, ttfb_ns)
			      : b->ops->pread(f, buf, len, off);
		if (!io->queue && n > 0 && b->ops->pread_ttfb_ns)
			*ttfb_ns = b->ops->pread_ttfb_ns();
		if (n != -EINTR)
			return n;
		if (io->stats)
			io->stats->retries++;
	}
}

int io_pread_upto(struct io *io, struct sfile *f, void *buf, size_t len, uint64_t off, size_t *got)
{
	size_t piece_max = io->transfer ? io->transfer : len;
	size_t done = 0;

	*got = 0;
	while (done < len) {
		size_t piece = len - done < piece_max ? len - done : piece_max;
		size_t pdone = 0;
		unsigned calls = 0;   /* calls that returned data */
		uint64_t ttfb_ns = 0; /* the first call's time to first byte, when reported */
		uint64_t t0 = timer_now_ns();

		/* Loop over short reads until the transfer is complete or the file ends. A short
		 * read is a retry only when another call brings more data; the call that finds
		 * the end of the file is not one. */
		while (pdone < piece) {
			uint64_t call_ttfb = 0;
			ssize_t n = io_call_read(io, f, (char *)buf + done + pdone, piece - pdone,
						 off + done + pdone, &call_ttfb);
			if (n < 0)
				return run_fail(
				    io->run, (int)n, "cannot read '%s' at offset %" PRIu64 ": %s",
				    io_path(f), off + done + pdone, fb_strerror((int)n));
			if (n == 0)
				break;
			if (!calls++)
				ttfb_ns = call_ttfb;
			pdone += (size_t)n;
		}
		uint64_t t1 = timer_now_ns();
		if (io->stats) {
			if (calls > 1)
				io->stats->retries += calls - 1;
			io->stats->bytes += pdone;
			io->stats->ops++;
			hist_add(&io->stats->latency, t1 - t0);
			if (ttfb_ns)
				hist_add(&io->stats->ttfb, ttfb_ns);
		}
		if (io->run->trace)
			trace_io(io->run->trace, "read",
				 io->queue ? "io_uring" : trace_cat(io->run->trace), t0, t1,
				 io_path(f), off + done, pdone);
		done += pdone;
		if (pdone < piece)
			break; /* end of file */
	}
	*got = done;
	return 0;
}

int io_pread(struct io *io, struct sfile *f, void *buf, size_t len, uint64_t off)
{
	size_t got;
	int rc = io_pread_upto(io, f, buf, len, off, &got);

	if (rc < 0)
		return rc;
	if (got < len)
		return run_fail(io->run, -FB_EEOF,
				"unexpected end of file in '%s' at offset %" PRIu64
				" (wanted %zu more bytes)",
				io_path(f), off + got, len - got);
	return 0;
}

int io_pwrite(struct io *io, struct sfile *f, const void *buf, size_t len, uint64_t off)
{
	const struct sfile_base *b = (const struct sfile_base *)f;
	size_t done = 0;

	while (done < len) {
		uint64_t t0 = timer_now_ns();
		ssize_t n = b->ops->pwrite(f, (const char *)buf + done, len - done, off + done);
		if (n == -EINTR)
			continue;
		if (n < 0)
			return run_fail(io->run, (int)n,
					"cannot write '%s' at offset %" PRIu64 ": %s", io_path(f),
					off + done, fb_strerror((int)n));
		if (n == 0)
			return run_fail(io->run, -EIO,
					"cannot write '%s' at offset %" PRIu64 ": no progress",
					io_path(f), off + done);
		uint64_t t1 = timer_now_ns();
		if (io->stats) {
			io->stats->wbytes += (uint64_t)n;
			io->stats->wops++;
			hist_add(&io->stats->wlatency, t1 - t0);
		}
		if (io->run->trace)
			trace_io(io->run->trace, "write", trace_cat(io->run->trace), t0, t1,
				 io_path(f), off + done, (uint64_t)n);
		done += (size_t)n;
	}
	return 0;
}

int io_sync(struct io *io, struct sfile *f)
{
	const struct sfile_base *b = (const struct sfile_base *)f;
	uint64_t t0 = timer_now_ns();
	int rc = b->ops->sync ? b->ops->sync(f) : 0;

	if (rc < 0)
		return run_fail(io->run, rc, "cannot fsync '%s': %s", io_path(f), fb_strerror(rc));
	if (io->stats) {
		io->stats->syncs++;
		io->stats->sync_ns += timer_now_ns() - t0;
	}
	if (io->run->trace)
		trace_io(io->run->trace, "fsync", trace_cat(io->run->trace), t0, timer_now_ns(),
			 io_path(f), 0, 0);
	return 0;
}

int io_create(struct io *io, struct sfile **f, const char *path, int flags)
{
	struct run *run = io->run;
	const struct storage_ops *ops = run->storage;
	uint64_t t0 = timer_now_ns();
	int rc;

	flags |= STORAGE_O_WRITE | (io->direct ? STORAGE_O_DIRECT : 0);
	if (ops->create) {
		rc = ops->create(f, path, flags, run);
	} else {
		/* The layout must be set before the first byte: on an empty new file. */
		rc = run->fs.can_stripe ? stripe_create_file(run, path) : 0;
		if (rc < 0)
			return rc; /* recorded by stripe_create_file */
		rc = ops->open(f, path, flags, run);
	}
	if (rc < 0)
		return run_fail(run, rc, "cannot create '%s': %s", path, fb_strerror(rc));
	if (io->stats) {
		io->stats->creates++;
		io->stats->create_ns += timer_now_ns() - t0;
	}
	if (run->trace)
		trace_io(run->trace, "open", trace_cat(run->trace), t0, timer_now_ns(), path, 0, 0);
	return 0;
}

/* A namespace call ended: counted, and traced as name (mkdir, unlink, stat, rmdir, rename,
 * readdir; on S3 unlink is a DELETE, stat a HEAD (then a LIST for a prefix), readdir a LIST,
 * rename a copy and a DELETE, mkdir and rmdir no request) on path. */
static void io_meta_done(struct io *io, uint64_t t0, const char *name, const char *path)
{
	uint64_t t1 = timer_now_ns();

	if (io->stats) {
		io->stats->meta_ops++;
		io->stats->meta_ns += t1 - t0;
	}
	if (io->run->trace)
		trace_io(io->run->trace, name, trace_cat(io->run->trace), t0, t1, path, 0, 0);
}

/* ---- namespace calls ------------------------------------------------------------------ */

int storage_call_mkdir(const struct storage_ops *ops, const char *path, unsigned mode,
		       struct run *run)
{
	if (ops->mkdir)
		return ops->mkdir(path, mode, run);
	return mkdir(path, (mode_t)mode) < 0 ? -errno : 0;
}

int storage_call_unlink(const struct storage_ops *ops, const char *path, struct run *run)
{
	if (ops->unlink)
		return ops->unlink(path, run);
	return unlink(path) < 0 ? -errno : 0;
}

int storage_call_rmdir(const struct storage_ops *ops, const char *path, struct run *run)
{
	if (ops->rmdir)
		return ops->rmdir(path, run);
	return rmdir(path) < 0 ? -errno : 0;
}

int storage_call_rename(const struct storage_ops *ops, const char *from, const char *to,
			struct run *run)
{
	if (ops->rename)
		return ops->rename(from, to, run);
	return rename(from, to) < 0 ? -errno : 0;
}

/* POSIX: the folder fsync of safefile.h (EINVAL, a file system that cannot, is no error). */
int storage_call_sync_dir(const struct storage_ops *ops, const char *path, struct run *run)
{
	if (ops->sync_dir)
		return ops->sync_dir(path, run);
	return safe_sync_dir(path);
}

int io_mkdir(struct io *io, const char *path, unsigned mode)
{
	uint64_t t0 = timer_now_ns();
	int rc = storage_call_mkdir(io->run->storage, path, mode, io->run);

	io_meta_done(io, t0, "mkdir", path);
	if (rc == -EEXIST) {
		struct storage_stat st;
		if (io_stat(io, path, &st) == 0 && st.is_dir)
			return 0;
		return run_fail(io->run, -EEXIST, "cannot create folder '%s': %s", path,
				"a file of that name is in the way");
	}
	if (rc < 0)
		return run_fail(io->run, rc, "cannot create folder '%s': %s", path,
				fb_strerror(rc));
	return 0;
}

int io_mkdirs(struct io *io, const char *path, unsigned mode)
{
	char buf[4096];
	size_t n = strlen(path);
	int rc;

	if (n == 0 || n >= sizeof(buf))
		return run_fail(io->run, -ENAMETOOLONG, "cannot create folder '%s': %s", path,
				strerror(ENAMETOOLONG));
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		if (buf[i - 1] == '/')
			continue;
		char c = buf[i];
		buf[i] = '\0';
		rc = io_mkdir(io, buf, mode);
		buf[i] = c;
		if (rc < 0)
			return rc;
	}
	return 0;
}

int io_unlink(struct io *io, const char *path, bool missing_ok)
{
	uint64_t t0 = timer_now_ns();
	int rc = storage_call_unlink(io->run->storage, path, io->run);

	io_meta_done(io, t0, "unlink", path);
	if (rc == -ENOENT && missing_ok)
		return 0;
	if (rc < 0)
		return run_fail(io->run, rc, "cannot remove '%s': %s", path, fb_strerror(rc));
	return 0;
}

int io_stat(struct io *io, const char *path, struct storage_stat *st)
{
	const struct storage_ops *ops = io->run->storage;
	uint64_t t0 = timer_now_ns();
	int rc;

	memset(st, 0, sizeof(*st));
	if (ops->stat) {
		rc = ops->stat(path, st, io->run);
	} else {
		struct stat sb;
		rc = stat(path, &sb) < 0 ? -errno : 0;
		if (rc == 0) {
			st->size = (uint64_t)sb.st_size;
			st->mode = (unsigned)sb.st_mode;
			st->is_dir = S_ISDIR(sb.st_mode);
			st->is_reg = S_ISREG(sb.st_mode);
		}
	}
	io_meta_done(io, t0, "stat", path);
	return rc;
}

int io_rmdir(struct io *io, const char *path, bool missing_ok)
{
	uint64_t t0 = timer_now_ns();
	int rc = storage_call_rmdir(io->run->storage, path, io->run);

	io_meta_done(io, t0, "rmdir", path);
	if (rc == -ENOENT && missing_ok)
		return 0;
	if (rc < 0)
		return run_fail(io->run, rc, "cannot remove folder '%s': %s", path,
				fb_strerror(rc));
	return 0;
}

int io_rename(struct io *io, const char *from, const char *to)
{
	uint64_t t0 = timer_now_ns();
	int rc = storage_call_rename(io->run->storage, from, to, io->run);

	io_meta_done(io, t0, "rename", from);
	if (rc < 0)
		return run_fail(io->run, rc, "cannot rename '%s' to '%s': %s", from, to,
				fb_strerror(rc));
	return 0;
}

static int io_fd_list_dir(int dfd, storage_dir_fn fn, void *arg);

/* The POSIX listing: the folder opened, then listed as an open folder (io_fd_list_dir). */
static int io_posix_list_dir(const char *path, storage_dir_fn fn, void *arg)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	rc = io_fd_list_dir(fd, fn, arg);
	close(fd);
	return rc;
}

int storage_call_list_dir(const struct storage_ops *ops, const char *path, storage_dir_fn fn,
			  void *arg, struct run *run)
{
	if (ops->list_dir)
		return ops->list_dir(path, fn, arg, run);
	return io_posix_list_dir(path, fn, arg);
}

int io_list_dir(struct io *io, const char *path, storage_dir_fn fn, void *arg)
{
	uint64_t t0 = timer_now_ns();
	int rc = storage_call_list_dir(io->run->storage, path, fn, arg, io->run);

	io_meta_done(io, t0, "readdir", path);
	return rc;
}

int io_own_dir_open(const struct run *run, const char *dir)
{
	int fd;

	/* Objects: no folder and no link to follow; the namespace calls take the path. */
	if (run->storage && (run->storage->caps & STORAGE_CAP_OBJECT)) {
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int io_unlink_at(struct io *io, int dfd, const char *dir, const char *name, bool missing_ok)
{
	const struct storage_ops *ops = io->run->storage;
	char path[CFG_PATH_MAX + 320];
	uint64_t t0 = timer_now_ns();
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (ops->unlink)
		rc = ops->unlink(path, io->run);
	else
		rc = unlinkat(dfd, name, 0) < 0 ? -errno : 0;
	io_meta_done(io, t0, "unlink", path);
	if (rc == -ENOENT && missing_ok)
		return 0;
	if (rc < 0)
		return run_fail(io->run, rc, "cannot remove '%s': %s", path, fb_strerror(rc));
	return 0;
}

/* The listing of an open folder: a copy of the descriptor for fdopendir (closedir closes it),
 * read from its start. */
static int io_fd_list_dir(int dfd, storage_dir_fn fn, void *arg)
{
	int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	struct dirent *e;
	DIR *d;
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (!(d = fdopendir(fd))) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rewinddir(d);
	for (;;) {
		errno = 0;
		if (!(e = readdir(d))) {
			rc = errno ? -errno : 0;
			break;
		}
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if ((rc = fn(e->d_name, arg)) != 0)
			break;
	}
	closedir(d);
	return rc;
}

int io_list_dir_at(struct io *io, int dfd, const char *dir, storage_dir_fn fn, void *arg)
{
	const struct storage_ops *ops = io->run->storage;
	uint64_t t0 = timer_now_ns();
	int rc =
	    ops->list_dir ? ops->list_dir(dir, fn, arg, io->run) : io_fd_list_dir(dfd, fn, arg);

	io_meta_done(io, t0, "readdir", dir);
	return rc;
}

int io_sync_dir(struct io *io, const char *path)
{
	uint64_t t0 = timer_now_ns();
	int rc = storage_call_sync_dir(io->run->storage, path, io->run);

	if (rc < 0)
		return run_fail(io->run, rc, "cannot fsync folder '%s': %s", path, fb_strerror(rc));
	if (io->stats) {
		io->stats->syncs++;
		io->stats->sync_ns += timer_now_ns() - t0;
	}
	return 0;
}

int io_evict(struct io *io, const char *path)
{
	struct sfile *f = NULL;
	int rc = io_open(io, &f, path, STORAGE_O_READ);

	if (rc < 0)
		return rc;
	rc = io->run->storage->evict ? io->run->storage->evict(f) : 0;
	if (rc < 0)
		run_fail(io->run, rc, "cannot evict '%s' from the page cache: %s", path,
			 fb_strerror(rc));
	int crc = io_close(io, f);
	return rc ? rc : crc;
}

int io_thread_setup(struct io *io)
{
	const struct storage_ops *ops = io->run->storage;

	return ops->thread_setup ? ops->thread_setup(io) : 0;
}

void io_thread_teardown(struct io *io)
{
	const struct storage_ops *ops = io->run->storage;

	if (ops->thread_teardown)
		ops->thread_teardown(io);
}

int storage_run_setup(struct run *run)
{
	int rc = run->storage->run_setup ? run->storage->run_setup(run) : 0;

	if (rc < 0 && !run->err.msg[0])
		run_fail(run, rc, "storage back-end %s cannot start: %s", run->storage->name,
			 fb_strerror(rc));
	return rc;
}

void storage_run_teardown(struct run *run)
{
	if (run->storage && run->storage->run_teardown)
		run->storage->run_teardown(run);
}

int io_close(struct io *io, struct sfile *f)
{
	const struct sfile_base *b = (const struct sfile_base *)f;
	char path[sizeof(b->path)];
	int rc;

	if (!f)
		return 0;
	snprintf(path, sizeof(path), "%s", b->path);
	uint64_t t0 = timer_now_ns();
	rc = b->ops->close(f);
	if (rc < 0)
		return run_fail(io->run, rc, "cannot close '%s': %s", path, fb_strerror(rc));
	if (io->run->trace)
		trace_io(io->run->trace, "close", trace_cat(io->run->trace), t0, timer_now_ns(),
			 path, 0, 0);
	return 0;
}

int io_size(struct io *io, struct sfile *f, uint64_t *size)
{
	const struct sfile_base *b = (const struct sfile_base *)f;
	int rc = b->ops->size(f, size);

	if (rc < 0)
		return run_fail(io->run, rc, "cannot stat '%s': %s", io_path(f), fb_strerror(rc));
	return 0;
}

void io_account_calls(struct io *io, uint64_t bytes, uint64_t calls, uint64_t ns)
{
	if (!io->stats)
		return;
	io->stats->bytes += bytes;
	io->stats->ops += calls;
	/* No read call reached the storage (a library cache hit): no latency to record. */
	if (calls > 0)
		hist_add(&io->stats->latency, ns);
}

void io_account(struct io *io, uint64_t bytes, uint64_t ns)
{
	io_account_calls(io, bytes, 1, ns);
}

uint64_t io_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void io_account_decode(struct io *io, uint64_t out, uint64_t ns, uint64_t cpu_ns)
{
	if (!io->stats)
		return;
	io->stats->decodes++;
	io->stats->decode_ns += ns;
	io->stats->decode_cpu_ns += cpu_ns;
	io->stats->decode_bytes += out;
}

/* ---- queued reads ---------------------------------------------------------------------- */

struct io_pending {
	struct sfile *f;
	char *buf;
	size_t len, done;
	uint64_t off, t0;
	uint64_t seq;	  /* which io_queue_read() call queued it (io_queue_mark) */
	unsigned calls;	  /* calls that returned data (more than one: short reads) */
	uint64_t ttfb_ns; /* time to first byte of the first call that returned data, if known */
	bool used;
};

int io_queue_open(struct io *io, unsigned depth)
{
	const struct storage_ops *ops = io->run->storage;
	int rc;

	io->queue = NULL;
	io->inflight = 0;
	io->unsent = 0;
	io->qerr = 0;
	io->depth = depth ? depth : 1;
	if (!ops->queue_open)
		return 0;
	io->pending = calloc(io->depth, sizeof(*io->pending));
	if (!io->pending)
		return run_fail(io->run, -ENOMEM, "out of memory for %u queued reads", io->depth);
	rc = ops->queue_open(&io->queue, io->depth, io->run);
	if (rc < 0) {
		free(io->pending);
		io->pending = NULL;
		io->queue = NULL;
		return run_fail(io->run, rc, "cannot set up a %s queue of %u reads: %s", ops->name,
				io->depth, fb_strerror(rc));
	}
	return 0;
}

int io_queue_register(struct io *io, void *const *bufs, size_t len, unsigned n)
{
	const struct storage_ops *ops = io->run->storage;

	if (!io->queue || !ops->queue_register)
		return -ENOTSUP;
	return ops->queue_register(io->queue, bufs, len, n);
}

void io_queue_close(struct io *io)
{
	if (io->queue)
		io->run->storage->queue_close(io->queue);
	free(io->pending);
	io->queue = NULL;
	io->pending = NULL;
	io->inflight = 0;
	io->unsent = 0;
}

static int io_queue_fail(struct io *io, int rc)
{
	if (!io->qerr)
		io->qerr = rc;
	return rc;
}

/* Queues the rest of pending read k. */
static int io_queue_send(struct io *io, unsigned k)
{
	struct io_pending *p = &io->pending[k];
	int rc = io->run->storage->queue_read(io->queue, p->f, p->buf + p->done, p->len - p->done,
					      p->off + p->done, k);

	if (rc < 0) {
		p->used = false;
		io->inflight--;
		return io_queue_fail(
		    io,
		    run_fail(io->run, rc, "cannot queue a read of '%s' at offset %" PRIu64 ": %s",
			     io_path(p->f), p->off + p->done, fb_strerror(rc)));
	}
	return 0;
}

/* One completion: a read done (counted and timed), a short read sent on, or a failure. */
static void io_queue_complete(struct io *io, const struct io_completion *c, uint64_t now)
{
	struct io_pending *p = &io->pending[c->tag];

	if (c->res == -EINTR || c->res == -EAGAIN) {
		if (io->stats)
			io->stats->retries++;
		io_queue_send(io, (unsigned)c->tag);
		return;
	}
	if (c->res > 0) {
		p->done += (size_t)c->res;
		p->calls++;
		if (!p->ttfb_ns)
			p->ttfb_ns = c->ttfb_ns;
		if (p->done < p->len) {
			io_queue_send(io, (unsigned)c->tag);
			return;
		}
	}
	p->used = false;
	io->inflight--;
	if (c->res < 0) {
		io_queue_fail(
		    io, run_fail(io->run, (int)c->res, "cannot read '%s' at offset %" PRIu64 ": %s",
				 io_path(p->f), p->off + p->done, fb_strerror((int)c->res)));
		return;
	}
	if (c->res == 0) {
		io_queue_fail(io, run_fail(io->run, -FB_EEOF,
					   "unexpected end of file in '%s' at offset %" PRIu64
					   " (wanted %zu more bytes)",
					   io_path(p->f), p->off + p->done, p->len - p->done));
		return;
	}
	if (io->stats) {
		if (p->calls > 1)
			io->stats->retries += p->calls - 1;
		io->stats->bytes += p->len;
		io->stats->ops++;
		hist_add(&io->stats->latency, now - p->t0);
		if (p->ttfb_ns)
			hist_add(&io->stats->ttfb, p->ttfb_ns);
	}
	if (io->run->trace)
		trace_io(io->run->trace, "read", "io_uring", p->t0, now, io_path(p->f), p->off,
			 p->len);
}

/* Sends what is queued and handles the completions of at least `min` reads. A read's latency
 * runs from the call that sends it to the kernel (reads queued since the last call are stamped
 * here, one clock read for all) to the return of the call that reaps it. */
static int io_queue_reap(struct io *io, unsigned min)
{
	struct io_completion c[64];
	unsigned max = io->depth < 64 ? io->depth : 64;
	uint64_t now;
	int n;

	if (io->unsent) {
		now = timer_now_ns();
		for (unsigned k = 0; k < io->depth; k++)
			if (io->pending[k].used && !io->pending[k].t0)
				io->pending[k].t0 = now;
		io->unsent = 0;
	}
	for (unsigned i = 0; i < max; i++)
		c[i].ttfb_ns = 0;
	n = io->run->storage->queue_reap(io->queue, c, max, min < max ? min : max);
	if (n == -EINTR)
		return 0;
	if (n < 0)
		return run_fail(io->run, n, "cannot wait for queued reads: %s", fb_strerror(n));
	now = timer_now_ns();
	for (int i = 0; i < n; i++)
		io_queue_complete(io, &c[i], now);
	return 0;
}

int io_queue_read(struct io *io, struct sfile *f, void *buf, size_t len, uint64_t off)
{
	size_t piece_max = io->transfer ? io->transfer : len, done = 0;
	uint64_t seq = io->qseq++;

	while (done < len && !io->qerr) {
		size_t piece = len - done < piece_max ? len - done : piece_max;
		unsigned k = 0;
		int rc;

		while (io->inflight == io->depth && !io->qerr)
			if ((rc = io_queue_reap(io, 1)) < 0) {
				io_queue_fail(io, rc);
				/* The reads in flight still land in their buffers: wait for them.
				 */
				io_queue_wait(io);
				return rc;
			}
		if (io->qerr)
			break;
		while (io->pending[k].used)
			k++;
		io->pending[k] = (struct io_pending){.f = f,
						     .buf = (char *)buf + done,
						     .len = piece,
						     .off = off + done,
						     .seq = seq,
						     .used = true};
		io->inflight++;
		if (io->stats && io->inflight > io->stats->inflight_max)
			io->stats->inflight_max = io->inflight;
		io->unsent++;
		if ((rc = io_queue_send(io, k)) < 0)
			break;
		done += piece;
	}
	return io->qerr;
}

int io_queue_wait(struct io *io)
{
	int rc = 0;

	while (io->inflight > 0) {
		if ((rc = io_queue_reap(io, io->inflight)) < 0) {
			/* The queue itself failed: the reads' fate is unknown, give up on them. */
			io_queue_fail(io, rc);
			for (unsigned k = 0; k < io->depth; k++)
				io->pending[k].used = false;
			io->inflight = 0;
			io->unsent = 0;
			break;
		}
	}
	rc = io->qerr;
	io->qerr = 0;
	return rc;
}

uint64_t io_queue_mark(const struct io *io)
{
	return io->qseq;
}

bool io_queue_done(const struct io *io, uint64_t mark)
{
	for (unsigned k = 0; io->inflight && k < io->depth; k++)
		if (io->pending[k].used && io->pending[k].seq < mark)
			return false;
	return true;
}

int io_queue_poll(struct io *io)
{
	if (io->inflight > 0 && !io->qerr) {
		int rc = io_queue_reap(io, 1);
		if (rc < 0)
			return io_queue_fail(io, rc);
	}
	return io->qerr;
}

/* A read of f in flight, or -1. */
static int io_queue_find_file(const struct io *io, const struct sfile *f)
{
	for (unsigned k = 0; io->inflight && k < io->depth; k++)
		if (io->pending[k].used && io->pending[k].f == f)
			return (int)k;
	return -1;
}

int io_queue_wait_file(struct io *io, const struct sfile *f)
{
	while (!io->qerr && io_queue_find_file(io, f) >= 0)
		io_queue_poll(io);
	return io->qerr;
}

/* ---- collective transfers -------------------------------------------------------------- */

bool storage_has_collective(const struct storage_ops *ops)
{
	return ops && ops->pread_all && ops->pwrite_all && ops->pread_extents_all;
}

/* One collective call, checked and counted; write says which way. */
static int io_call_all(struct io *io, struct sfile *f, void *buf, size_t len, uint64_t off,
		       bool write)
{
	const struct storage_ops *ops = ((const struct sfile_base *)f)->ops;
	const char *what = write ? "write" : "read";
	uint64_t t0 = timer_now_ns();
	ssize_t n;

	if (!storage_has_collective(ops))
		return run_fail(io->run, -ENOTSUP,
				"cannot %s '%s' collectively: storage back-end %s has no "
				"collective transfers",
				what, io_path(f), ops->name);
	n = write ? ops->pwrite_all(f, buf, len, off) : ops->pread_all(f, buf, len, off);
	uint64_t ns = timer_now_ns() - t0;
	if (n < 0)
		return run_fail(io->run, (int)n,
				"cannot %s '%s' at offset %" PRIu64 " collectively: %s", what,
				io_path(f), off, fb_strerror((int)n));
	if ((size_t)n != len)
		return run_fail(io->run, write ? -EIO : -FB_EEOF,
				"collective %s of '%s' at offset %" PRIu64
				" moved %zd of %zu bytes",
				what, io_path(f), off, n, len);
	if (io->run->trace && len > 0)
		trace_io(io->run->trace, what, "MPIIO", t0, t0 + ns, io_path(f), off, len);
	if (!io->stats || len == 0)
		return 0;
	if (write) {
		io->stats->wbytes += len;
		io->stats->wops++;
		hist_add(&io->stats->wlatency, ns);
	} else {
		io_account(io, len, ns);
	}
	return 0;
}

int io_pread_all(struct io *io, struct sfile *f, void *buf, size_t len, uint64_t off)
{
	return io_call_all(io, f, buf, len, off, false);
}

int io_pwrite_all(struct io *io, struct sfile *f, const void *buf, size_t len, uint64_t off)
{
	return io_call_all(io, f, (void *)buf, len, off, true);
}

int io_pread_extents_all(struct io *io, struct sfile *f, void *buf,
			 const struct storage_extent *ext, size_t n)
{
	const struct storage_ops *ops = ((const struct sfile_base *)f)->ops;
	uint64_t off = n ? ext[0].off : 0, t0, ns;
	size_t len = 0;
	ssize_t got;

	if (!storage_has_collective(ops))
		return run_fail(io->run, -ENOTSUP,
				"cannot read '%s' collectively: storage back-end %s has no "
				"collective transfers",
				io_path(f), ops->name);
	for (size_t k = 0; k < n; k++)
		len += ext[k].len;
	t0 = timer_now_ns();
	got = ops->pread_extents_all(f, buf, ext, n);
	ns = timer_now_ns() - t0;
	if (got < 0)
		return run_fail(io->run, (int)got,
				"cannot read '%s' at offset %" PRIu64 " collectively: %s",
				io_path(f), off, fb_strerror((int)got));
	if ((size_t)got != len)
		return run_fail(io->run, -FB_EEOF,
				"unexpected end of file in '%s': a collective read of %zu "
				"ranges from offset %" PRIu64 " returned %zd of %zu bytes",
				io_path(f), n, off, got, len);
	if (io->stats && len > 0)
		io_account(io, len, ns);
	if (io->run->trace && len > 0)
		trace_io(io->run->trace, "read", "MPIIO", t0, t0 + ns, io_path(f), off, len);
	return 0;
}
