/* A file held by a plain descriptor: what the back-ends that use open(2) and pread(2) on the
 * path share (posix, uring). A neutral file, not a plug-in: each back-end keeps its own ops
 * table in its own file and points its file operations here, so the POSIX calls Darshan and
 * strace see are written once.
 *
 * fd_file_open() opens path for the back-end `ops` (never through a planted link, never a FIFO
 * or device: safefile.h), O_DIRECT when STORAGE_O_DIRECT is asked; every rank has its own
 * descriptor (STORAGE_O_SHARED is dropped). The other calls follow storage.h's contracts.
 */
#ifndef FEEDBENCH_FDFILE_H
#define FEEDBENCH_FDFILE_H

#include "storage.h"

struct fd_file {
	struct sfile_base base;
	int fd;
};

int fd_file_open(struct sfile **out, const char *path, int flags, const struct storage_ops *ops);
ssize_t fd_file_pread(struct sfile *f, void *buf, size_t len, uint64_t off);
ssize_t fd_file_pwrite(struct sfile *f, const void *buf, size_t len, uint64_t off);
int fd_file_sync(struct sfile *f);
int fd_file_close(struct sfile *f);
int fd_file_size(struct sfile *f, uint64_t *size);
/* Drops the file's cached pages (posix_fadvise DONTNEED). */
int fd_file_evict(struct sfile *f);

/* The descriptor of a file fd_file_open() opened. */
static inline int fd_file_fd(const struct sfile *f)
{
	return ((const struct fd_file *)f)->fd;
}

#endif
