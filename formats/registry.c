/* The registry of formats, generated from the one list in registry.h (FEEDBENCH_FORMATS), as are
 * the choices of [dataset] format: a format is added there, nowhere else. */
#include "format.h"
#include "registry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/run.h"
#include "../bench/storage/storage.h"

#define FORMAT_DECLARE(name) extern const struct format_ops name##_format;
FEEDBENCH_FORMATS(FORMAT_DECLARE)
#undef FORMAT_DECLARE

#define FORMAT_ENTRY(name) &name##_format,
const struct format_ops *const format_registry[] = {FEEDBENCH_FORMATS(FORMAT_ENTRY) NULL};
#undef FORMAT_ENTRY

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
