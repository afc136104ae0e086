/* Combinations of keys that cannot be honoured: refused before any file is touched. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "safefile.h"
#include "../formats/format.h"
#include "storage/fs.h"
#include "../workloads/workload.h"

#define DIO_ALIGN 4096

/* Objects (s3) have no page cache, no O_DIRECT, no file-system layout and no MPI-IO: keys
 * asking for them are refused with the reason rather than ignored. */
static int cfg_check_object(const struct config *cfg, struct fb_errbuf *err)
{
	const char *src = cfg->source, *why = NULL, *key = NULL;

	if (!storage_is_object(cfg))
		return 0;
	if (cfg->storage.direct) {
		key = "[storage] direct = true";
		why = "O_DIRECT bypasses a local page cache, and objects are read over the network "
		      "without one";
	} else if (cfg->storage.page_cache != PAGE_CACHE_KEEP) {
		key = "[storage] page_cache = evict or drop";
		why = "no object is in the local page cache: every read is a request to the server";
	} else if (cfg->storage.stripe_count || cfg->storage.stripe_size ||
		   cfg->storage.stripe_offset >= 0 || cfg->storage.object_size ||
		   cfg->storage.stripe_layout[0]) {
		key = "[storage] stripe_count, stripe_size, stripe_offset, object_size or "
		      "stripe_layout";
		why = "an object's placement is the server's (radosgw cuts objects into 4 MiB "
		      "RADOS pieces itself)";
	} else if (cfg->mpiio.collective) {
		key = "[storage.mpiio] collective = true";
		why = "MPI-IO reads files, not objects";
	} else if (cfg->checkpoint.layout == CKPT_LAYOUT_SINGLE) {
		key = "[checkpoint] layout = single";
		why = "every rank would write its share of one object at its own offset, and an "
		      "object is written front to back by one writer: use layout = dcp (one object "
		      "per rank and .metadata, PyTorch DCP's layout)";
	}
	if (!key)
		return 0;
	return fb_fail(err, -FB_ECONFIG, "%s: %s cannot apply to backend = %s: %s", src, key,
		       cfg_choice_name("storage", "backend", cfg->storage.backend), why);
}

/* What every workload needs: names that make a results folder, folders, a back-end. */
static int cfg_validate_common(const struct config *cfg, int nranks, struct fb_errbuf *err)
{
	const char *src = cfg->source;
	const struct storage_ops *st =
	    storage_find(cfg_choice_name("storage", "backend", cfg->storage.backend));
	char why[128];

	if (!cfg->dataset.data_dir[0])
		return fb_fail(err, -FB_ECONFIG, "%s: [dataset] data_dir is empty: name a folder",
			       src);
	/* Both become a folder name under [output] dir or --output: one path component. */
	if (safe_name_check(cfg->workload.name, why, sizeof(why)) < 0)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [workload] name '%s' cannot name a results folder: %s", src,
			       cfg->workload.name, why);
	if (cfg->output.name[0] && safe_name_check(cfg->output.name, why, sizeof(why)) < 0)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [output] name '%s' cannot name a results folder: %s", src,
			       cfg->output.name, why);
	if (!cfg->output.dir[0])
		return fb_fail(err, -FB_ECONFIG, "%s: [output] dir is empty: name a folder", src);
	if (!st || st->not_built)
		return fb_fail(err, -FB_ECONFIG, "%s: storage back-end '%s' is not built%s%s%s",
			       src, cfg_choice_name("storage", "backend", cfg->storage.backend),
			       st ? " (" : "", st ? st->not_built : "", st ? ")" : "");
	if (cfg_check_object(cfg, err) < 0)
		return err->code;
	if (cfg->storage.stripe_layout[0]) {
		struct stripe_comp c[STRIPE_MAX_COMPS];
		char bad[256];

		if (stripe_layout_parse(cfg->storage.stripe_layout, c, STRIPE_MAX_COMPS, bad,
					sizeof(bad)) < 0)
			return fb_fail(err, -FB_ECONFIG, "%s: [storage] stripe_layout = \"%s\": %s",
				       src, cfg->storage.stripe_layout, bad);
		if (cfg->storage.stripe_count != 0 || cfg->storage.stripe_offset >= 0)
			return fb_fail(
			    err, -FB_ECONFIG,
			    "%s: [storage] stripe_layout gives each component its stripe "
			    "count: leave stripe_count and stripe_offset unset with it",
			    src);
	}
	if (cfg->storage.stripe_size % 65536)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: stripe_size must be a multiple of 64 KiB (Lustre); %llu is not",
			       src, (unsigned long long)cfg->storage.stripe_size);
	if (nranks < 1)
		return fb_fail(err, -FB_EINTERNAL, "no ranks");
	return 0;
}

/* Where a key's value came from, for a message: "file:line", "file (--set section.key)", or
 * the file alone (a default). */
static void cfg_key_where(const struct config *cfg, const char *section, const char *name,
			  char *buf, size_t len)
{
	const struct cfg_key *k = cfg_find(section, name);
	int line = k ? cfg->lines[k - cfg_keys] : 0;

	if (line > 0)
		snprintf(buf, len, "%s:%d", cfg->source, line);
	else if (line < 0)
		snprintf(buf, len, "%s (--set %s.%s)", cfg->source, section, name);
	else
		snprintf(buf, len, "%s", cfg->source);
}

int cfg_check_collective(const struct config *cfg, struct fb_errbuf *err)
{
	const char *name = cfg_choice_name("storage", "backend", cfg->storage.backend);
	const struct storage_ops *st = storage_find(name), *eff;
	char where[CFG_PATH_MAX + 64], with[128];

	if (!cfg->mpiio.collective || !st)
		return 0;
	eff = storage_effective(st, cfg);
	if (eff && !eff->not_built && storage_has_collective(eff))
		return 0;
	cfg_key_where(cfg, "storage.mpiio", "collective", where, sizeof(where));
	storage_collective_names(with, sizeof(with));
	if (!with[0])
		snprintf(with, sizeof(with), "(none built)");
	if (eff == st)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [storage.mpiio] collective = true needs [storage] backend = %s "
			       "(backend = %s has no collective transfers)",
			       where, with, name);
	/* A back-end that wraps another (faulty) moves its bytes through that one. */
	return fb_fail(err, -FB_ECONFIG,
		       "%s: [storage.mpiio] collective = true needs a back-end with collective "
		       "transfers (%s): backend = %s moves its bytes through back-end '%s'%s",
		       where, with, name, st->wraps(cfg),
		       !eff		? ", which is not a back-end"
		       : eff->not_built ? ", which is not built"
					: ", which has none");
}

/* A format the registry lists but this build lacks: say what was missing. */
static int check_format_built(const struct config *cfg, struct fb_errbuf *err)
{
	const char *why = NULL;

	for (size_t i = 0; format_registry[i]; i++)
		if (strcmp(format_registry[i]->name, cfg->dataset.format) == 0)
			why = format_registry[i]->not_built;
	return fb_fail(err, -FB_ECONFIG, "%s: format '%s' is not built into this feedbench%s%s%s",
		       cfg->source, cfg->dataset.format, why ? " (" : "", why ? why : "",
		       why ? ")" : "");
}

/* dataset.verify over a back-end that reads no data (null, or faulty wrapping it): every
 * sample would fail its check mid-run, so the configuration is refused before it starts. */
static int check_no_data(const struct config *cfg, const struct storage_ops *st,
			 const struct storage_ops *eff, struct fb_errbuf *err)
{
	char where[CFG_PATH_MAX + 64];

	cfg_key_where(cfg, "dataset", "verify", where, sizeof(where));
	return fb_fail(err, -FB_ECONFIG,
		       "%s: [dataset] verify = true cannot pass with [storage] backend = %s: "
		       "back-end %s reads no data (its reads leave the buffers as they were), so "
		       "every sample would fail its check; set verify = false",
		       where, st->name, eff->name);
}

/* The format read through this back-end: queue depth, who does the I/O, sharing, decoding. */
static int check_format_backend(const struct config *cfg, const struct format_ops *fmt,
				const struct storage_ops *st, struct fb_errbuf *err)
{
	const char *src = cfg->source;
	const struct storage_ops *eff = storage_effective(st, cfg);

	if ((st->caps & STORAGE_CAP_OBJECT) && (fmt->caps & FORMAT_CAP_WRITES_BY_PATH) &&
	    cfg->dataset.generate != GENERATE_NEVER)
		return fb_fail(
		    err, -FB_ECONFIG,
		    "%s: format %s writes its files through a library that opens a local "
		    "path (libzip), which cannot write S3 objects; backend = %s reads a "
		    "%s dataset uploaded by another tool with generate = never",
		    src, fmt->name, st->name, fmt->name);
	if ((st->caps & STORAGE_CAP_OBJECT) && (fmt->caps & FORMAT_CAP_OWNS_IO))
		return fb_fail(err, -FB_ECONFIG,
			       "%s: format %s reads through its own library, which cannot read S3 "
			       "objects (no read-only S3 driver in this build); backend = %s needs "
			       "raw, npy, tfrecord, wds or another format read through feedbench",
			       src, fmt->name, st->name);
	if (cfg->dataset.verify && eff && (eff->caps & STORAGE_CAP_NO_DATA))
		return check_no_data(cfg, st, eff, err);
	if (cfg->storage.io_depth > 1 && !st->queue_open)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: io_depth = %lld needs backend = uring (%s reads one call at a "
			       "time per reader thread)",
			       src, (long long)cfg->storage.io_depth, st->name);
	if (st->queue_open && (fmt->caps & FORMAT_CAP_OWNS_IO))
		return fb_fail(err, -FB_ECONFIG,
			       "%s: format %s does its own I/O through its library; backend = %s "
			       "cannot carry it (use posix or mpiio)",
			       src, fmt->name, st->name);
	if (cfg->dataset.file_access == FILE_ACCESS_SHARED && !(fmt->caps & FORMAT_CAP_SHARED))
		return fb_fail(err, -FB_ECONFIG,
			       "%s: format %s cannot be read with file_access = shared: %s", src,
			       fmt->name, fmt->shared_note ? fmt->shared_note : "not supported");
	if ((fmt->caps & FORMAT_CAP_DECODES) && !cfg->image.decode && cfg->dataset.verify)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: verify = true checks the decoded pixels of format %s: set "
			       "[format.image] decode = true, or verify = false",
			       src, fmt->name);
	return 0;
}

/* direct = true: fixed, aligned records and transfers, and a format and back-end that can. */
static int check_direct(const struct config *cfg, const struct format_ops *fmt,
			const struct storage_ops *st, struct fb_errbuf *err)
{
	const char *src = cfg->source;

	if (!cfg->storage.direct)
		return 0;
	if (cfg->dataset.record_length_bytes_stdev > 0)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: direct = true needs fixed record sizes (O_DIRECT offsets must "
			       "stay aligned): set record_length_bytes_stdev = 0",
			       src);
	if (!(fmt->caps & FORMAT_CAP_DIRECT))
		return fb_fail(err, -FB_ECONFIG,
			       "%s: format %s cannot be read with direct = true: its sample "
			       "offsets are not aligned to %d bytes%s",
			       src, fmt->name, DIO_ALIGN,
			       (fmt->caps & FORMAT_CAP_OWNS_IO)
				   ? " and its library has no O_DIRECT driver"
				   : "");
	if (!(st->caps & STORAGE_CAP_DIRECT))
		return fb_fail(err, -FB_ECONFIG,
			       "%s: storage back-end %s cannot honour direct = true", src,
			       st->name);
	if (cfg->dataset.record_length_bytes % DIO_ALIGN)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: direct = true needs record_length_bytes to be a multiple "
			       "of %d (O_DIRECT alignment); %llu is not",
			       src, DIO_ALIGN,
			       (unsigned long long)cfg->dataset.record_length_bytes);
	if (cfg->storage.transfer_size % DIO_ALIGN)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: direct = true needs transfer_size to be a multiple of %d "
			       "(O_DIRECT alignment); %llu is not",
			       src, DIO_ALIGN, (unsigned long long)cfg->storage.transfer_size);
	return 0;
}

/* [storage.mpiio] collective = true: a format with byte ranges that does not do its own
 * MPI-IO, shared files, read through the MPI-IO back-end itself. */
static int check_collective_reads(const struct config *cfg, const struct format_ops *fmt,
				  const struct storage_ops *st, struct fb_errbuf *err)
{
	const char *src = cfg->source;
	char where[CFG_PATH_MAX + 64];
	int rc;

	if (fmt->caps & FORMAT_CAP_OWNS_IO)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: format %s does its own MPI-IO: use [format.%s] transfer = "
			       "collective instead of [storage.mpiio] collective = true",
			       src, fmt->name, fmt->name);
	if ((rc = cfg_check_collective(cfg, err)) < 0)
		return rc;
	/* The training workload opens its shared handles through the back-end named in
	 * [storage] backend (workloads/train.c open_shared), not through one it wraps. */
	if (st->wraps) {
		cfg_key_where(cfg, "storage.mpiio", "collective", where, sizeof(where));
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [storage.mpiio] collective = true: the training workload "
			       "reads collectively through backend = %s itself, not through "
			       "backend = %s over it (the ior workload can)",
			       where, st->wraps(cfg), st->name);
	}
	if (!fmt->extent)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: format %s cannot be read collectively (it has no byte "
			       "ranges to hand to MPI-IO)",
			       src, fmt->name);
	if (cfg->dataset.file_access != FILE_ACCESS_SHARED)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: collective reads need file_access = shared (ranks must "
			       "read the same files)",
			       src);
	return 0;
}

/* The emulated step: a spread needs a time, and a step must fit in the watchdog. */
static int check_step_time(const struct config *cfg, struct fb_errbuf *err)
{
	if (cfg->train.computation_time_stdev > 0 && cfg->train.computation_time == 0)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: computation_time_stdev is set but computation_time is 0",
			       cfg->source);
	if (cfg->train.watchdog > 0 &&
	    cfg->train.computation_time + 4 * cfg->train.computation_time_stdev >=
		cfg->train.watchdog)
		return fb_fail(
		    err, -FB_ECONFIG,
		    "%s: a step of computation_time (%g s) could outlast [train] watchdog "
		    "(%g s), which would end the run as hung: raise watchdog or set it to 0",
		    cfg->source, cfg->train.computation_time, cfg->train.watchdog);
	return 0;
}

int cfg_validate_dataset(const struct config *cfg, int nranks, struct fb_errbuf *err)
{
	const char *src = cfg->source;
	const struct format_ops *fmt = format_find(cfg->dataset.format);
	const struct storage_ops *st =
	    storage_find(cfg_choice_name("storage", "backend", cfg->storage.backend));
	bool shared = cfg->dataset.file_access == FILE_ACCESS_SHARED;
	int rc;

	if (!fmt)
		return check_format_built(cfg, err);
	if (!st)
		return fb_fail(err, -FB_EINTERNAL, "no storage back-end");
	if ((rc = check_format_backend(cfg, fmt, st, err)) < 0 ||
	    (rc = check_direct(cfg, fmt, st, err)) < 0)
		return rc;
	if (cfg->dataset.record_length_bytes_stdev == 0 &&
	    cfg->storage.transfer_size > cfg->dataset.record_length_bytes)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: transfer_size (%llu) is larger than a record (%llu bytes)", src,
			       (unsigned long long)cfg->storage.transfer_size,
			       (unsigned long long)cfg->dataset.record_length_bytes);
	if (cfg->mpiio.collective && (rc = check_collective_reads(cfg, fmt, st, err)) < 0)
		return rc;
	if (cfg->hdf5.transfer == HDF5_TRANSFER_COLLECTIVE && strcmp(fmt->name, "hdf5") == 0 &&
	    !shared)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [format.hdf5] transfer = collective needs file_access = shared",
			       src);
	if (cfg->storage.backend == BACKEND_MPIIO && !(fmt->caps & FORMAT_CAP_MPIIO) &&
	    !(fmt->caps & FORMAT_CAP_OWNS_IO))
		return fb_fail(err, -FB_ECONFIG,
			       "%s: format %s cannot be read through backend = mpiio", src,
			       fmt->name);
	return check_step_time(cfg, err);
}

int cfg_validate(const struct config *cfg, int nranks, struct fb_errbuf *err)
{
	const struct workload_ops *w = workload_of(cfg);
	int rc = cfg_validate_common(cfg, nranks, err);

	if (rc < 0)
		return rc;
	if (!w)
		return fb_fail(err, -FB_ECONFIG, "%s: [workload] type %d is not built", cfg->source,
			       cfg->workload.type);
	return w->check ? w->check(cfg, nranks, err) : 0;
}
