/* null back-end: no storage at all. Reads return the bytes asked for without touching them
 * and writes succeed, so a run measures the harness itself (queues, threads, timers), like
 * fio's null engine and IOR's DUMMY back-end. Data read through it is whatever the buffer held:
 * verification fails by design.
 */
#include "storage.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

extern const struct storage_ops null_storage;

struct null_file {
	struct sfile_base base;
};

static int null_open(struct sfile **out, const char *path, int flags, struct run *run)
{
	struct null_file *f = calloc(1, sizeof(*f));

	(void)run;
	if (!f)
		return -ENOMEM;
	f->base.ops = &null_storage;
	f->base.flags = flags & ~STORAGE_O_SHARED; /* nothing to share: each rank its own */
	snprintf(f->base.path, sizeof(f->base.path), "%s", path);
	*out = (struct sfile *)f;
	return 0;
}

static ssize_t null_pread(struct sfile *f, void *buf, size_t len, uint64_t off)
{
	(void)f;
	(void)buf;
	(void)off;
	return (ssize_t)len;
}

static ssize_t null_pwrite(struct sfile *f, const void *buf, size_t len, uint64_t off)
{
	(void)f;
	(void)buf;
	(void)off;
	return (ssize_t)len;
}

static int null_sync(struct sfile *f)
{
	(void)f;
	return 0;
}

static int null_close(struct sfile *f)
{
	free(f);
	return 0;
}

/* The size of a real file of that name when there is one (bring-your-own data), else a size
 * no read reaches: the null back-end has no end of file. */
static int null_size(struct sfile *f, uint64_t *size)
{
	struct stat st;

	if (stat(((struct sfile_base *)f)->path, &st) == 0)
		*size = (uint64_t)st.st_size;
	else
		*size = (uint64_t)INT64_MAX;
	return 0;
}

const struct storage_ops null_storage = {
    .version = STORAGE_OPS_VERSION,
    .name = "null",
    .caps = STORAGE_CAP_DIRECT | STORAGE_CAP_SHARED | STORAGE_CAP_NO_DATA,
    .open = null_open,
    .pread = null_pread,
    .pwrite = null_pwrite,
    .sync = null_sync,
    .close = null_close,
    .size = null_size,
};
