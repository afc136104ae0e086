/* POSIX back-end: plain open/pread/pwrite/fsync/close, so tools like Darshan see every call. */
#include "storage.h"

#include "../safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

const struct storage_ops posix_storage;

struct posix_file {
	struct sfile_base base;
	int fd;
};

static int posix_open(struct sfile **out, const char *path, int flags, struct run *run)
{
	struct posix_file *f = calloc(1, sizeof(*f));
	int extra = (flags & STORAGE_O_DIRECT) ? O_DIRECT : 0;

	(void)run;
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
	f->base.ops = &posix_storage;
	f->base.flags = flags & ~STORAGE_O_SHARED; /* every rank has its own descriptor */
	snprintf(f->base.path, sizeof(f->base.path), "%s", path);
	*out = (struct sfile *)f;
	return 0;
}

static ssize_t posix_pread(struct sfile *sf, void *buf, size_t len, uint64_t off)
{
	struct posix_file *f = (struct posix_file *)sf;
	ssize_t n = pread(f->fd, buf, len, (off_t)off);

	return n < 0 ? -errno : n;
}

static ssize_t posix_pwrite(struct sfile *sf, const void *buf, size_t len, uint64_t off)
{
	struct posix_file *f = (struct posix_file *)sf;
	ssize_t n = pwrite(f->fd, buf, len, (off_t)off);

	return n < 0 ? -errno : n;
}

static int posix_sync(struct sfile *sf)
{
	struct posix_file *f = (struct posix_file *)sf;

	return fsync(f->fd) < 0 ? -errno : 0;
}

static int posix_close(struct sfile *sf)
{
	struct posix_file *f = (struct posix_file *)sf;
	int rc = close(f->fd) < 0 ? -errno : 0;

	free(f);
	return rc;
}

static int posix_size(struct sfile *sf, uint64_t *size)
{
	struct posix_file *f = (struct posix_file *)sf;
	struct stat st;

	if (fstat(f->fd, &st) < 0)
		return -errno;
	*size = (uint64_t)st.st_size;
	return 0;
}

static int posix_evict(struct sfile *sf)
{
	struct posix_file *f = (struct posix_file *)sf;
	int rc = posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED);

	return -rc;
}

const struct storage_ops posix_storage = {
    .version = STORAGE_OPS_VERSION,
    .name = "posix",
    .caps = STORAGE_CAP_DIRECT | STORAGE_CAP_SHARED,
    .open = posix_open,
    .pread = posix_pread,
    .pwrite = posix_pwrite,
    .sync = posix_sync,
    .close = posix_close,
    .size = posix_size,
    .evict = posix_evict,
};
