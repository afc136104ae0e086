/* The only place that knows which formats exist. One line per format. */
#include "format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/run.h"
#include "../bench/storage/storage.h"

extern const struct format_ops raw_format;
extern const struct format_ops npy_format;
extern const struct format_ops npz_format;
extern const struct format_ops wds_format;
extern const struct format_ops hdf5_format;
extern const struct format_ops tfrecord_format;
extern const struct format_ops parquet_format;
extern const struct format_ops jpeg_format;
extern const struct format_ops png_format;
extern const struct format_ops zarr_format;
extern const struct format_ops mds_format;

const struct format_ops *const format_registry[] = {
    &raw_format,     &npy_format,  &npz_format,	 &wds_format, &hdf5_format, &tfrecord_format,
    &parquet_format, &zarr_format, &jpeg_format, &png_format, &mds_format,  NULL,
};

const struct format_ops *format_find(const char *name)
{
	for (size_t i = 0; format_registry[i]; i++)
		if (strcmp(format_registry[i]->name, name) == 0)
			return format_registry[i]->not_built ? NULL : format_registry[i];
	return NULL;
}

int freader_file_open(size_t size, struct run *run, struct ds_file *file, struct io *io, void **out)
{
	struct freader_file *b = calloc(1, size);
	int rc;

	if (!b)
		return run_fail(run, -ENOMEM, "out of memory opening '%s'", file->path);
	b->run = run;
	b->file = file;
	b->io = io;
	rc = io_open_file(io, file, &b->sf);
	if (rc < 0) {
		free(b);
		return rc;
	}
	*out = b;
	return 0;
}

int freader_file_close(struct freader_file *b)
{
	return io_close_file(b->io, b->file, b->sf);
}
