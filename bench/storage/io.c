/* The wrappers every read and write goes through: transfer splitting, short-I/O and EINTR
 * loops, latency histograms and error context live here once, so every back-end and every
 * format is measured the same way.
 */
#include "storage.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "../run.h"
#include "../timer.h"
#include "../dsfile.h"

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

/* One call of the back-end, retried on EINTR. */
static ssize_t io_call_read(struct io *io, struct sfile *f, void *buf, size_t len, uint64_t off)
{
	const struct sfile_base *b = (const struct sfile_base *)f;
	ssize_t n;

	for (;;) {
		n = b->ops->pread(f, buf, len, off);
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
		unsigned calls = 0; /* calls that returned data */
		uint64_t t0 = timer_now_ns();

		/* Loop over short reads until the transfer is complete or the file ends. A short
		 * read is a retry only when another call brings more data; the call that finds
		 * the end of the file is not one. */
		while (pdone < piece) {
			ssize_t n = io_call_read(io, f, (char *)buf + done + pdone, piece - pdone,
						 off + done + pdone);
			if (n < 0)
				return run_fail(
				    io->run, (int)n, "cannot read '%s' at offset %" PRIu64 ": %s",
				    io_path(f), off + done + pdone, fb_strerror((int)n));
			if (n == 0)
				break;
			calls++;
			pdone += (size_t)n;
		}
		if (io->stats) {
			if (calls > 1)
				io->stats->retries += calls - 1;
			io->stats->bytes += pdone;
			io->stats->ops++;
			hist_add(&io->stats->latency, timer_now_ns() - t0);
		}
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
		done += (size_t)n;
	}
	return 0;
}

int io_sync(struct io *io, struct sfile *f)
{
	const struct sfile_base *b = (const struct sfile_base *)f;
	int rc = b->ops->sync ? b->ops->sync(f) : 0;

	if (rc < 0)
		return run_fail(io->run, rc, "cannot fsync '%s': %s", io_path(f), fb_strerror(rc));
	return 0;
}

int io_close(struct io *io, struct sfile *f)
{
	const struct sfile_base *b = (const struct sfile_base *)f;
	char path[sizeof(b->path)];
	int rc;

	if (!f)
		return 0;
	snprintf(path, sizeof(path), "%s", b->path);
	rc = b->ops->close(f);
	if (rc < 0)
		return run_fail(io->run, rc, "cannot close '%s': %s", path, fb_strerror(rc));
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
