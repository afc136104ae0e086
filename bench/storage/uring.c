/* io_uring back-end: a reader thread keeps [storage] io_depth reads in flight on one ring
 * without more threads, the way fio's io_uring engine measures deep-queue storage. Each reader
 * thread has its own ring (read_threads x io_depth reads in flight per rank); the batch buffers
 * are registered with the ring where the kernel lets us pin them (READ_FIXED: no page pinning
 * per read, which is what O_DIRECT pays otherwise). Files are opened with open(2), O_DIRECT when
 * asked, so the file and the page cache are the same as posix's: the file calls are posix's
 * own (fdfile.c).
 *
 * Queued reads come through the io_queue_* wrappers (bench/storage/io.c), which time each read
 * from its submission (the io_uring_enter that sends it) to its completion. Reads made outside a
 * ring (indexing files before the epochs) and writes (generation) are plain pread/pwrite calls:
 * they are not what the back-end measures. Registered files are not used: a reader thread's files
 * change as its cache of open files turns over, and each registration would cost a syscall where it
 * saves an fget per read.
 */
#include "fdfile.h"

#include "build_config.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>

extern const struct storage_ops uring_storage;

#if FEEDBENCH_HAVE_URING
#include <liburing.h>

struct io_queue {
	struct io_uring ring;
	struct iovec *regs; /* registered buffers, or NULL */
	unsigned nregs;
};

static int uring_open(struct sfile **out, const char *path, int flags, struct run *run)
{
	(void)run;
	return fd_file_open(out, path, flags, &uring_storage);
}

static int uring_queue_open(struct io_queue **out, unsigned depth, struct run *run)
{
	struct io_queue *q = calloc(1, sizeof(*q));
	int rc;

	(void)run;
	if (!q)
		return -ENOMEM;
	/* Completions are reaped by the thread that submits: no inter-processor interrupt is
	 * needed to run them (kernels before 5.19 refuse the flag; then without it). */
	struct io_uring_params p = {.flags = IORING_SETUP_COOP_TASKRUN};
	rc = io_uring_queue_init_params(depth, &q->ring, &p);
	if (rc == -EINVAL)
		rc = io_uring_queue_init(depth, &q->ring, 0);
	if (rc < 0) {
		free(q);
		return rc;
	}
	*out = q;
	return 0;
}

static int uring_queue_register(struct io_queue *q, void *const *bufs, size_t len, unsigned n)
{
	struct iovec *iov = calloc(n, sizeof(*iov));
	int rc;

	if (!iov)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		iov[i] = (struct iovec){.iov_base = bufs[i], .iov_len = len};
	rc = io_uring_register_buffers(&q->ring, iov, n);
	if (rc < 0) {
		free(iov);
		return rc;
	}
	q->regs = iov;
	q->nregs = n;
	return 0;
}

/* The registered buffer holding [buf, buf + len), or -1. */
static int uring_fixed(const struct io_queue *q, const void *buf, size_t len)
{
	const char *b = buf;

	for (unsigned i = 0; i < q->nregs; i++) {
		const char *base = q->regs[i].iov_base;
		if (b >= base && b + len <= base + q->regs[i].iov_len)
			return (int)i;
	}
	return -1;
}

static int uring_queue_read(struct io_queue *q, struct sfile *sf, void *buf, size_t len,
			    uint64_t off, uint64_t tag)
{
	int fd = fd_file_fd(sf);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
	int fixed;

	if (!sqe) { /* the submission queue is full: send it on */
		int rc = io_uring_submit(&q->ring);
		if (rc < 0)
			return rc;
		sqe = io_uring_get_sqe(&q->ring);
		if (!sqe)
			return -EBUSY;
	}
	if (len > UINT32_MAX)
		len = UINT32_MAX; /* a short read: the wrapper sends the rest */
	fixed = uring_fixed(q, buf, len);
	if (fixed >= 0)
		io_uring_prep_read_fixed(sqe, fd, buf, (unsigned)len, off, fixed);
	else
		io_uring_prep_read(sqe, fd, buf, (unsigned)len, off);
	io_uring_sqe_set_data64(sqe, tag);
	return 0;
}

static int uring_queue_reap(struct io_queue *q, struct io_completion *c, unsigned max, unsigned min)
{
	struct io_uring_cqe *cqe;
	unsigned n = 0, head;
	int rc = io_uring_submit_and_wait(&q->ring, min);

	if (rc < 0)
		return rc;
	io_uring_for_each_cqe(&q->ring, head, cqe)
	{
		if (n == max)
			break;
		c[n].tag = io_uring_cqe_get_data64(cqe);
		c[n].res = cqe->res;
		n++;
	}
	io_uring_cq_advance(&q->ring, n);
	return (int)n;
}

static void uring_queue_close(struct io_queue *q)
{
	io_uring_queue_exit(&q->ring);
	free(q->regs);
	free(q);
}

const struct storage_ops uring_storage = {
    .version = STORAGE_OPS_VERSION,
    .name = "uring",
    .caps = STORAGE_CAP_DIRECT | STORAGE_CAP_SHARED,
    .open = uring_open,
    .pread = fd_file_pread,
    .pwrite = fd_file_pwrite,
    .sync = fd_file_sync,
    .close = fd_file_close,
    .size = fd_file_size,
    .evict = fd_file_evict,
    .queue_open = uring_queue_open,
    .queue_register = uring_queue_register,
    .queue_read = uring_queue_read,
    .queue_reap = uring_queue_reap,
    .queue_close = uring_queue_close,
};

#else

const struct storage_ops uring_storage = {
    .version = STORAGE_OPS_VERSION,
    .name = "uring",
    .not_built = "liburing not found",
};

#endif
