/* POSIX back-end: plain open/pread/pwrite/fsync/close, so tools like Darshan see every call.
 * The calls themselves are those of a descriptor file (fdfile.c), shared with uring. */
#include "fdfile.h"

const struct storage_ops posix_storage;

static int posix_open(struct sfile **out, const char *path, int flags, struct run *run)
{
	(void)run;
	return fd_file_open(out, path, flags, &posix_storage);
}

const struct storage_ops posix_storage = {
    .version = STORAGE_OPS_VERSION,
    .name = "posix",
    .caps = STORAGE_CAP_DIRECT | STORAGE_CAP_SHARED,
    .open = posix_open,
    .pread = fd_file_pread,
    .pwrite = fd_file_pwrite,
    .sync = fd_file_sync,
    .close = fd_file_close,
    .size = fd_file_size,
    .evict = fd_file_evict,
};
