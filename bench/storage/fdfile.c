/* Files held by a plain descriptor, shared by the posix and uring back-ends (fdfile.h). */
#include "fdfile.h"

#include "../safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int fd_file_open(struct sfile **out, const char *path, int flags, const struct storage_ops *ops)
{
	struct fd_file *f = calloc(1, sizeof(*f));
	int extra = (flags & STORAGE_O_DIRECT) ? O_DIRECT : 0;

	if (!f)
		return -ENOMEM;
	/* Never through a planted link, never a FIFO or device (safefile.h). */
	if (flags & STORAGE_O_WRITE)
		f->fd = safe_open_write(path, extra, !(flags & STORAGE_O_NOTRUNC));
	else
		f->fd = safe_open_read(path, extra, false);
	if (f->fd < 0) {
		int err = f->fd;
		free(f);
		return err;
	}
	f->base.ops = ops;
	f->base.flags = flags & ~STORAGE_O_SHARED; /* every rank has its own descriptor */
	snprintf(f->base.path, sizeof(f->base.path), "%s", path);
	*out = (struct sfile *)f;
	return 0;
}

ssize_t fd_file_pread(struct sfile *sf, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(fd_file_fd(sf), buf, len, (off_t)off);

	return n < 0 ? -errno : n;
}

ssize_t fd_file_pwrite(struct sfile *sf, const void *buf, size_t len, uint64_t off)
{
	ssize_t n = pwrite(fd_file_fd(sf), buf, len, (off_t)off);

	return n < 0 ? -errno : n;
}

int fd_file_sync(struct sfile *sf)
{
	return fsync(fd_file_fd(sf)) < 0 ? -errno : 0;
}

int fd_file_close(struct sfile *sf)
{
	int rc = close(fd_file_fd(sf)) < 0 ? -errno : 0;

	free(sf);
	return rc;
}

int fd_file_size(struct sfile *sf, uint64_t *size)
{
	struct stat st;

	if (fstat(fd_file_fd(sf), &st) < 0)
		return -errno;
	*size = (uint64_t)st.st_size;
	return 0;
}

int fd_file_evict(struct sfile *sf)
{
	return -posix_fadvise(fd_file_fd(sf), 0, 0, POSIX_FADV_DONTNEED);
}
