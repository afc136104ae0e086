/* The registry of formats, generated from the one list in registry.h (FEEDBENCH_FORMATS), as are
 * the choices of [dataset] format: a format is added there, nowhere else. */
#include "format.h"
#include "registry.h"

#include <errno.h>
#include <inttypes.h>
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

int fgen_one_create(struct fgen **gp, struct run *run, struct ds_file *file, const char *fmt)
{
	struct fgen_one *g = calloc(1, sizeof(*g));
	int rc;

	if (!g)
		return run_fail(run, -ENOMEM, "cannot allocate %s writer for '%s'", fmt,
				file->path);
	*g = (struct fgen_one){.run = run, .file = file, .fmt = fmt};
	g->io = (struct io){.run = run, .transfer = run->cfg.storage.transfer_size};
	rc = io_open(&g->io, &g->f, file->path, STORAGE_O_WRITE);
	if (rc) {
		free(g);
		return rc;
	}
	*gp = (struct fgen *)(void *)g;
	return 0;
}

int fgen_one_check(const struct fgen_one *g, uint64_t index)
{
	if (g->written || index != 0)
		return run_fail(g->run, -FB_EINTERNAL,
				"%s file '%s' holds one sample; asked to append sample %" PRIu64,
				g->fmt, g->file->path, index);
	return 0;
}

int fgen_one_finish(struct fgen *fg)
{
	struct fgen_one *g = (struct fgen_one *)(void *)fg;
	int rc = io_sync(&g->io, g->f), rc2 = io_close(&g->io, g->f);

	if (!rc)
		rc = rc2;
	if (!rc && !g->written)
		rc = run_fail(g->run, -FB_EINTERNAL, "%s file '%s' finished without its sample",
			      g->fmt, g->file->path);
	free(g);
	return rc;
}
