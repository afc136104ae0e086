/* `feedbench sweep --dry-run`: the checks of every point, the data folder as the run will find
 * it, the points in run order and an estimate of the time (docs/sweeps.md). */
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "preflight.h"

/* The dry-run estimate assumes this aggregate bandwidth for reads and for generation: a
 * plain guess, printed with the estimate, since nothing has been measured yet. */
#define SWEEP_ASSUMED_MIB_S 500.0

/* Seconds one point should take: per epoch the slower of compute and reading at the assumed
 * bandwidth, plus generation when the point starts a new dataset. */
static double sweep_estimate(const struct config *c, int nranks, bool new_dataset, double *bytes)
{
	double samples =
	    (double)c->dataset.num_files_train * (double)c->dataset.num_samples_per_file;
	double data = samples * (double)c->dataset.record_length_bytes;
	double steps = ceil(samples / nranks / (double)c->reader.batch_size);
	double compute = steps * c->train.computation_time;
	double io = data / (SWEEP_ASSUMED_MIB_S * 1048576.0);
	double epoch = compute > io ? compute : io;

	*bytes = data;
	return (double)c->output.repetitions * (double)c->train.epochs * epoch +
	       (new_dataset ? io : 0.0);
}

/* What the run will find in the data folder: file system, striping, existence, cache. */
static void sweep_dry_run_folder(const struct config *cfg, const struct sweep_plan *p)
{
	struct preflight pf;
	struct fb_errbuf e;
	bool stripe_swept = false;

	fb_errbuf_init(&e);
	preflight_data_dir(cfg, &pf, &e);
	for (int a = 0; a < p->naxes; a++)
		stripe_swept |= strncmp(p->axes[a].key, "storage.stripe_", 15) == 0 ||
				strcmp(p->axes[a].key, "storage.object_size") == 0;
	if (pf.exists)
		printf("data folder: %s (exists, %s%s)\n", cfg->dataset.data_dir,
		       pf.writable ? "writable" : "NOT writable",
		       pf.manifest ? ", holds a feedbench dataset" : "");
	else
		printf("data folder: %s (does not exist: created in '%s', which is %s)\n",
		       cfg->dataset.data_dir, pf.parent, pf.writable ? "writable" : "NOT writable");
	if (!pf.fs_known)
		printf("file system: unknown (cannot inspect '%s')\n", pf.parent);
	else if (pf.fs.can_stripe)
		printf("file system: %s at %s: can stripe (%s)\n", pf.fs.type, pf.fs.mount,
		       pf.fs.striper == FS_STRIPER_CEPH ? "CephFS layouts" : "Lustre layouts");
	else
		printf("file system: %s at %s: cannot stripe%s\n", pf.fs.type, pf.fs.mount,
		       stripe_swept ? " (the swept stripe settings have no effect here: no stripe "
				      "recommendation will be made)"
				    : "");
	printf("host memory: %.1f GiB; a dataset smaller than that with the page cache kept is "
	       "cache-resident (column cache)\n\n",
	       pf.host_memory / 1073741824.0);
}

int sweep_dry_run(const struct sweep_plan *p, const struct config *cfg, int nranks)
{
	struct config *c = malloc(sizeof(*c));
	char label[512], dir[256], t[32];
	double total = 0, bytes;
	struct fb_errbuf e;
	long ndatasets = 0, ncached = 0;

	if (!c)
		return -ENOMEM;
	printf("sweep of %s: %ld points x %d repetition%s at %d rank%s, dataset keys vary "
	       "slowest\n",
	       cfg->source, p->npoints, p->repetitions, p->repetitions == 1 ? "" : "s", nranks,
	       nranks == 1 ? "" : "s");
	printf("every point passed the checks the run makes before it starts\n");
	sweep_dry_run_folder(cfg, p);
	printf("%-6s %-10s %12s %-8s %10s  %s\n", "point", "dataset", "data (MiB)", "cache",
	       "estimate", "values");
	for (long i = 0; i < p->npoints; i++) {
		bool fresh = sweep_point_new_dataset(p, i);
		struct preflight pf;

		fb_errbuf_init(&e);
		memcpy(c, cfg, sizeof(*c));
		sweep_apply_point(p, i, c, &e);
		preflight_data_dir(c, &pf, &e);
		double s = sweep_estimate(c, nranks, fresh, &bytes);
		total += s;
		ndatasets += fresh;
		ncached += pf.cache_resident;
		sweep_point_label(p, i, -1, label, sizeof(label));
		sweep_point_dir(p, i, dir, sizeof(dir));
		sweep_fmt_duration(s, t, sizeof(t));
		printf("%-6ld %-10s %12.1f %-8s %10s  %s\n", i + 1, fresh ? "generate" : "reuse",
		       bytes / 1048576.0, pf.cache_resident ? "resident" : "no", t, label);
	}
	if (ncached)
		printf(
		    "\nwarning: %ld of %ld points read a cache-resident dataset: they will "
		    "measure the page cache, not the storage (set [storage] page_cache = evict or "
		    "direct = true, or a dataset larger than RAM)\n",
		    ncached, p->npoints);
	sweep_fmt_duration(total, t, sizeof(t));
	printf("\n%ld points, %ld dataset%s generated (when not on disk already), estimated %s.\n"
	       "The estimate assumes %.0f MiB/s for reads and writes across all ranks, takes the\n"
	       "slower of reading and computation_time per epoch, and ignores start-up: real\n"
	       "times depend on the storage. Nothing was run.\n",
	       p->npoints, ndatasets, ndatasets == 1 ? "" : "s", t, SWEEP_ASSUMED_MIB_S);
	free(c);
	return 0;
}
