/* Generation: ranks write the dataset's files in parallel through the format plug-in; the
 * manifest is written last, atomically, after every rank agreed that it succeeded, so an
 * interrupted or failed generation never leaves a dataset that looks complete.
 */
#include "workloads.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_config.h"
#include "../bench/agree.h"
#include "../bench/progress.h"
#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "../formats/format.h"
#include "../bench/storage/fs.h"
#include "../bench/safefile.h"
#include "../bench/util.h"
#include "../formats/sample.h"

#define MANIFEST_NAME "feedbench-manifest.json"

static void manifest_path(const struct run *run, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", run->cfg.dataset.data_dir, MANIFEST_NAME);
}

struct foreign_count {
	uint64_t entries, indexes;
};

static int foreign_entry(const char *name, void *arg)
{
	struct foreign_count *fc = arg;
	size_t n = strlen(name);

	if (name[0] == '.')
		return 0;
	fc->entries++;
	if (n > 4 && strcmp(name + n - 4, ".idx") == 0)
		fc->indexes++;
	return 0;
}

/* Files in the data folder that are not part of the dataset are left alone, with a warning:
 * everything but the dataset's files, their index files and the manifest. */
static void manifest_foreign_files(struct run *run)
{
	struct foreign_count fc = {0};
	struct io io = {.run = run};

	if (io_list_dir(&io, run->cfg.dataset.data_dir, foreign_entry, &fc) < 0)
		return;
	uint64_t entries = fc.entries, indexes = fc.indexes;
	uint64_t foreign = entries - indexes - 1 - run->ds.nfiles;
	if (entries > indexes + 1 + run->ds.nfiles)
		run_warn(run, "ignored %" PRIu64 " files in '%s' that are not part of the dataset",
			 foreign, run->cfg.dataset.data_dir);
}

/* The manifest of a dataset of objects (s3), through the back-end: read whole (NULL when
 * there is none or it cannot be read: the dataset is then regenerated), written as one
 * object (it appears whole or not at all). */
static json_t *manifest_load_object(struct run *run, const char *path, json_error_t *jerr)
{
	struct io io = {.run = run};
	struct storage_stat st;
	struct sfile *f = NULL;
	char *text = NULL;
	json_t *m = NULL;

	if (io_stat(&io, path, &st) < 0 || !st.is_reg || st.size > (64u << 20))
		return NULL;
	text = malloc(st.size + 1);
	if (text && io_open(&io, &f, path, STORAGE_O_READ) == 0) {
		if (io_pread(&io, f, text, st.size, 0) == 0)
			m = json_loadb(text, st.size, 0, jerr);
		io_close(&io, f);
	}
	free(text);
	return m;
}

static int manifest_store_object(struct run *run, const char *path, const char *text)
{
	struct io io = {.run = run};
	struct sfile *f;
	int rc = io_create(&io, &f, path, 0);

	if (rc < 0)
		return rc;
	rc = io_pwrite(&io, f, text, strlen(text), 0);
	int crc = io_close(&io, f);
	return rc < 0 ? rc : crc;
}

/* Rank 0: 0 when the manifest exists and was written for this config; 1 with a reason when
 * not. *sizes receives a copy of its file sizes (one per file; NULL in older manifests). */
static int manifest_read(struct run *run, char *why, size_t len, uint64_t **sizes)
{
	char path[CFG_PATH_MAX + 64], hash[65];
	json_error_t jerr;
	json_t *m;

	*sizes = NULL;
	manifest_path(run, path, sizeof(path));
	m = storage_is_object(&run->cfg) ? manifest_load_object(run, path, &jerr)
					 : safe_json_load(path, 0, &jerr);
	if (!m) {
		snprintf(why, len, "no dataset manifest in '%s'", run->cfg.dataset.data_dir);
		return 1;
	}
	cfg_dataset_hash(&run->cfg, hash);
	const char *have = json_string_value(json_object_get(m, "dataset_hash"));
	if (!have || strcmp(have, hash) != 0) {
		snprintf(why, len,
			 "the dataset in '%s' was generated from another config (format, sizes, "
			 "seed, files or striping differ)",
			 run->cfg.dataset.data_dir);
		json_decref(m);
		return 1;
	}
	json_t *a = json_object_get(m, "file_bytes"); /* absent in older manifests */
	if (json_array_size(a) == run->ds.nfiles && run->ds.nfiles > 0 &&
	    (*sizes = malloc(run->ds.nfiles * sizeof(**sizes))) != NULL)
		for (uint32_t i = 0; i < run->ds.nfiles; i++) {
			json_t *v = json_array_get(a, i);
			(*sizes)[i] =
			    json_is_integer(v) ? (uint64_t)json_integer_value(v) : UINT64_MAX;
		}
	json_decref(m);
	return 0;
}

#define NONE UINT64_MAX

/* What one rank found when it statted its block of the dataset's files. */
struct stat_finding {
	uint64_t missing;	/* files that are not there */
	uint64_t first_missing; /* the lowest of them (NONE: none) */
	uint64_t odd;		/* lowest file that is not a regular file (NONE: none) */
	uint64_t odd_mode;	/* its st_mode */
	uint64_t resized;	/* files whose size is not the manifest's */
	uint64_t first_resized, size, want; /* the lowest of them, its size and the manifest's */
};

/* Rank r's block of n files: [n r / P, n (r + 1) / P). */
static uint32_t block_start(uint32_t n, int r, int nranks)
{
	return (uint32_t)((uint64_t)n * (uint64_t)r / (uint64_t)nranks);
}

/* Stats files [lo, hi) against the manifest's sizes (want, indexed from lo; NONE: unknown). */
static void stat_block(struct run *run, uint32_t lo, uint32_t hi, const uint64_t *want,
		       struct stat_finding *f)
{
	struct io io = {.run = run};

	*f = (struct stat_finding){.first_missing = NONE, .odd = NONE, .first_resized = NONE};
	for (uint32_t i = lo; i < hi; i++) {
		struct storage_stat st;
		char buf[CFG_PATH_MAX + 64];
		const char *fpath = dataset_path(&run->ds, i, buf, sizeof(buf));
		if (!fpath || io_stat(&io, fpath, &st) < 0) {
			if (f->missing++ == 0)
				f->first_missing = i;
		} else if (st.is_dir && (run->format->caps & FORMAT_CAP_FOLDER)) {
			continue; /* a folder of its own files (zarr): their sizes are its own */
		} else if (!st.is_reg) {
			/* Reading a FIFO would block; a device is not a dataset. */
			f->odd = i;
			f->odd_mode = st.mode;
			return;
		} else if (want && want[i - lo] != NONE && st.size != want[i - lo]) {
			if (f->resized++ == 0) {
				f->first_resized = i;
				f->size = st.size;
				f->want = want[i - lo];
			}
		}
	}
}

/* Rank 0: the verdict from every rank's findings, in file order (the lowest file first). */
static int stat_verdict(struct run *run, const struct stat_finding *all, char *why, size_t len)
{
	char buf[CFG_PATH_MAX + 64];
	uint64_t missing = 0, resized = 0;
	int first = -1;

	for (int r = 0; r < run->nranks; r++)
		if (all[r].odd != NONE) {
			const char *p =
			    dataset_path(&run->ds, (uint32_t)all[r].odd, buf, sizeof(buf));
			snprintf(why, len, "'%s' is %s, not a regular file (found by rank %d)",
				 p ? p : "?", safe_kind((mode_t)all[r].odd_mode), r);
			return 1;
		}
	for (int r = 0; r < run->nranks; r++) {
		missing += all[r].missing;
		resized += all[r].resized;
		if (first < 0 && all[r].missing)
			first = r;
	}
	if (missing) {
		const char *p =
		    dataset_path(&run->ds, (uint32_t)all[first].first_missing, buf, sizeof(buf));
		snprintf(why, len,
			 "data folder '%s' has %" PRIu64 " of the %u files the manifest lists "
			 "(the first missing: '%s', found by rank %d)",
			 run->cfg.dataset.data_dir, run->ds.nfiles - missing, run->ds.nfiles,
			 p ? p : "?", first);
		return 1;
	}
	/* Not a reason to regenerate: another tool may have rewritten a file (numpy, h5py), and
	 * a truncated file fails with its own message, naming the offset. Said before the run,
	 * so a failure mid-epoch is no surprise: each rank's first such file, then a count. */
	for (int r = 0; r < run->nranks; r++)
		if (all[r].resized) {
			const char *p = dataset_path(&run->ds, (uint32_t)all[r].first_resized, buf,
						     sizeof(buf));
			run_warn(run,
				 "'%s' is %llu bytes, the manifest says %llu: changed since it was "
				 "generated; read as it is",
				 p ? p : "?", (unsigned long long)all[r].size,
				 (unsigned long long)all[r].want);
		}
	uint64_t named = 0;
	for (int r = 0; r < run->nranks; r++)
		named += all[r].resized ? 1 : 0;
	if (resized > named)
		run_warn(run,
			 "%" PRIu64 " more files differ in size from the manifest (%" PRIu64
			 " in all)",
			 resized - named, resized);
	return 0;
}

/* Collective: 0 when the manifest matches the config and every file is there, 1 when not (the
 * same on every rank; the reason on rank 0). Rank 0 reads the manifest; each rank stats its
 * block of the files, so start-up with 100 000 files does not wait for one rank's stats. */
int manifest_check(struct run *run, char *why, size_t len)
{
	struct stat_finding mine, *all = NULL;
	uint64_t *sizes = NULL, *want = NULL;
	int *counts = NULL, *displs = NULL;
	int status = 0, sized = 0, P = run->nranks, r = run->rank;
	uint32_t n = run->ds.nfiles, lo = block_start(n, r, P), hi = block_start(n, r + 1, P);

	if (r == 0)
		status = manifest_read(run, why, len, &sizes);
	sized = sizes != NULL;
	int pair[2] = {status, sized};
	MPI_Bcast(pair, 2, MPI_INT, 0, run->comm);
	status = pair[0];
	sized = pair[1];
	if (status)
		goto out;
	if (sized) { /* each rank gets the manifest's sizes of its block */
		want = malloc((hi > lo ? hi - lo : 1) * sizeof(*want));
		if (r == 0) {
			counts = malloc((size_t)P * sizeof(*counts));
			displs = malloc((size_t)P * sizeof(*displs));
		}
		int ok = want && (r != 0 || (counts && displs)), all_ok = 0;
		MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, run->comm);
		if (!all_ok) { /* no sizes to compare: the files are still checked */
			free(want);
			want = NULL;
		} else {
			for (int q = 0; r == 0 && q < P; q++) {
				displs[q] = (int)block_start(n, q, P);
				counts[q] = (int)(block_start(n, q + 1, P) - block_start(n, q, P));
			}
			MPI_Scatterv(sizes, counts, displs, MPI_UINT64_T, want, (int)(hi - lo),
				     MPI_UINT64_T, 0, run->comm);
		}
	}
	stat_block(run, lo, hi, want, &mine);
	if (r == 0)
		all = malloc((size_t)P * sizeof(*all));
	MPI_Gather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE, 0,
		   run->comm);
	if (r == 0) {
		if (all) {
			status = stat_verdict(run, all, why, len);
		} else {
			snprintf(why, len, "out of memory checking the files the manifest lists");
			status = 1;
		}
		if (status == 0)
			manifest_foreign_files(run);
	}
	MPI_Bcast(&status, 1, MPI_INT, 0, run->comm);
out:
	free(sizes);
	free(want);
	free(counts);
	free(displs);
	free(all);
	return status;
}

static int manifest_write(struct run *run)
{
	char path[CFG_PATH_MAX + 64], hash[65], when[32];
	json_t *m = json_object();
	char *text;
	int rc;

	cfg_dataset_hash(&run->cfg, hash);
	util_utc_iso(when, sizeof(when));
	json_object_set_new(m, "dataset_hash", json_string(hash));
	json_object_set_new(m, "format", json_string(run->format->name));
	json_object_set_new(m, "files", json_integer(run->ds.nfiles));
	json_object_set_new(m, "samples", json_integer((json_int_t)run->ds.nsamples));
	json_object_set_new(m, "data_bytes", json_integer((json_int_t)run->ds.data_bytes));
	json_object_set_new(m, "seed", json_integer((json_int_t)run->ds.seed));
	json_object_set_new(m, "generated", json_string(when));
	json_object_set_new(m, "ranks", json_integer(run->nranks));
	json_object_set_new(m, "feedbench_version", json_string(FEEDBENCH_VERSION));
	/* The size of every file as written: a file truncated or changed later is reported
	 * before a run reads it. */
	json_t *sizes = json_array();
	struct io io = {.run = run};
	for (uint32_t i = 0; i < run->ds.nfiles; i++) {
		struct storage_stat st;
		char buf[CFG_PATH_MAX + 64];
		const char *fpath = dataset_path(&run->ds, i, buf, sizeof(buf));
		json_array_append_new(sizes, io_stat(&io, fpath, &st) == 0
						 ? json_integer((json_int_t)st.size)
						 : json_null());
	}
	json_object_set_new(m, "file_bytes", sizes);
	text = json_dumps(m, JSON_INDENT(2));
	json_decref(m);
	if (!text)
		return run_fail(run, -ENOMEM, "out of memory");
	manifest_path(run, path, sizeof(path));
	if (storage_is_object(&run->cfg)) {
		rc = manifest_store_object(run, path, text);
		free(text);
		return rc; /* recorded with the object */
	}
	rc = safe_write_atomic(path, text, strlen(text));
	free(text);
	if (rc < 0)
		return run_fail(run, rc, "cannot write manifest '%s': %s", path, strerror(-rc));
	return 0;
}

/* Writes samples [lo, hi) of one file through the format. Always calls finish so collective
 * back-ends stay matched across ranks even after a failure. */
static int generate_file(struct run *run, struct ds_file *file, unsigned flags, uint64_t lo,
			 uint64_t hi, void *buf, struct progress *pg, uint64_t *done,
			 uint64_t share)
{
	struct fgen *g = NULL;
	const char *what;
	int rc;

	/* A link, FIFO or device planted under a dataset file's name is never written through
	 * (the posix back-end also opens with O_NOFOLLOW; HDF5 and MPI-IO open by name). */
	if (!storage_is_object(&run->cfg) && safe_check_owned(file->path, &what) < 0)
		return run_fail(
		    run, -FB_ENOTREG,
		    "refusing to write '%s': it is %s, and feedbench writes only regular "
		    "files it creates (remove it or choose another data_dir)",
		    file->path, what);
	rc = run->format->create(&g, run, file, flags);
	if (rc < 0)
		return rc;
	for (uint64_t i = lo; i < hi && rc == 0; i++) {
		uint64_t sz = dataset_sample_size(&run->ds, file->index, i);
		sample_fill(buf, sz, run->ds.seed, run->ds.id, file->index, i);
		rc = run->format->append(g, i, buf, sz);
		*done += sz;
		if (run->stop && *run->stop)
			rc = run_fail(run, -FB_EINTR, "generation interrupted by a signal");
		if ((i & 63) == 0) {
			char extra[64];
			snprintf(extra, sizeof(extra), "%.0f MiB of %.0f MiB (rank 0)",
				 (double)*done / 1048576.0, (double)share / 1048576.0);
			progress_update(pg, share ? (double)*done / (double)share : 1, extra);
			watchdog_kick(run);
		}
	}
	int frc = run->format->finish(g);
	return rc < 0 ? rc : frc;
}

static bool file_collective(const struct run *run)
{
	/* Objects are written front to back by one writer: a shared object is written whole
	 * by one rank. */
	return run->cfg.dataset.file_access == FILE_ACCESS_SHARED &&
	       (run->format->caps & FORMAT_CAP_PARALLEL_WRITE) && !storage_is_object(&run->cfg);
}

static int generate_files(struct run *run)
{
	struct dataset *ds = &run->ds;
	bool collective = file_collective(run);
	uint64_t share = 0, done = 0;
	struct progress pg;
	void *buf = malloc(ds->max_sample ? ds->max_sample : 1);
	int rc = 0;

	if (!buf)
		return run_fail(run, -ENOMEM, "out of memory for a %" PRIu64 "-byte sample",
				ds->max_sample);
	/* What this rank writes, for the progress line. */
	share = collective ? ds->data_bytes / (uint64_t)run->nranks : 0;
	for (uint32_t i = (uint32_t)run->rank; !collective && i < ds->nfiles;
	     i += (uint32_t)run->nranks) {
		struct ds_file e;
		char path[CFG_PATH_MAX + 64];
		if (dataset_entry(ds, i, &e, path, sizeof(path)) == 0)
			share += e.data_bytes;
	}
	progress_begin(&pg, "generating", run->rank == 0);
	for (uint32_t i = 0; i < ds->nfiles; i++) {
		/* Entries of files written, made here: a rank holds only those it reads. */
		struct ds_file entry = {0}, *f = &entry;
		char path[CFG_PATH_MAX + 64];
		bool mine = collective || (int)(i % (uint32_t)run->nranks) == run->rank;
		if (mine && dataset_entry(ds, i, f, path, sizeof(path)) < 0 && rc == 0)
			rc = run_fail(run, -FB_EINTERNAL, "no name for file %" PRIu32, i);
		if (collective) {
			/* Rank 0 creates the file with its layout; then every rank writes its
			 * slice. */
			int crc = 0;
			if (run->rank == 0) {
				struct io io = {.run = run};
				crc = io_unlink(&io, f->path, true);
				if (crc == 0)
					crc = stripe_create_file(run, f->path);
			}
			if ((crc = agree(run, rc ? rc : crc)) < 0) {
				rc = crc;
				break;
			}
			uint64_t n = f->nsamples, p = (uint64_t)run->nranks;
			uint64_t lo = n * (uint64_t)run->rank / p,
				 hi = n * (uint64_t)(run->rank + 1) / p;
			int grc =
			    generate_file(run, f, FGEN_COLLECTIVE, lo, hi, buf, &pg, &done, share);
			if (rc == 0)
				rc = grc;
		} else if ((int)(i % (uint32_t)run->nranks) == run->rank && rc == 0) {
			/* the layout, where the file system takes it per file */
			rc = stripe_create_file(run, f->path);
			if (rc == 0)
				rc = generate_file(run, f, 0, 0, f->nsamples, buf, &pg, &done,
						   share);
		}
		if (rc < 0 && !collective)
			break;
	}
	progress_end(&pg);
	free(buf);
	return rc;
}

int generate_dataset(struct run *run, bool force)
{
	char why[1024] = "";
	int need = 0, rc = 0;

	if (force || run->cfg.dataset.generate == GENERATE_ALWAYS) {
		need = 1;
		snprintf(why, sizeof(why), "generate = always");
	} else {
		need = manifest_check(run, why, sizeof(why)); /* collective */
	}
	if (run->rank == 0 && need && run->cfg.dataset.generate == GENERATE_NEVER)
		rc = run_fail(run, -FB_EDATASET, "%s (generate = never)", why);
	if ((rc = agree(run, rc)) < 0)
		return rc;
	if (!need)
		return 0;

	/* Refuse up front when the dataset cannot fit. */
	uint64_t estimate = run->ds.data_bytes + (uint64_t)run->ds.nfiles * 8192;
	if (run->rank == 0) {
		struct io io = {.run = run};
		int mrc = io_mkdirs(&io, run->cfg.dataset.data_dir, 0755);
		if (mrc < 0)
			rc = mrc; /* recorded with the folder */
		else if (run->fs.free_bytes && estimate > run->fs.free_bytes)
			rc = run_fail(run, -ENOSPC,
				      "the dataset needs about %.1f MiB but '%s' has %.1f MiB free",
				      (double)estimate / 1048576.0, run->cfg.dataset.data_dir,
				      (double)run->fs.free_bytes / 1048576.0);
		else if (run->verbose >= 0)
			fprintf(stderr, "feedbench: generating %u %s files (%.1f MiB): %s\n",
				run->ds.nfiles, run->format->name,
				(double)run->ds.data_bytes / 1048576.0, why);
	}
	if ((rc = agree(run, rc)) < 0)
		return rc;
	rc = stripe_prepare(run);
	if ((rc = agree(run, rc)) < 0)
		return rc;
	if (run->rank == 0) {
		char path[CFG_PATH_MAX + 64];
		struct io io = {.run = run};
		manifest_path(run, path, sizeof(path));
		/* a half-regenerated dataset must not look complete */
		rc = io_unlink(&io, path, true);
	}
	if ((rc = agree(run, rc)) < 0)
		return rc;
	rc = generate_files(run);
	if ((rc = agree(run, rc)) < 0)
		return rc;
	if (run->rank == 0) {
		rc = manifest_write(run);
	}
	run->dataset_regenerated = true;
	return agree(run, rc);
}
