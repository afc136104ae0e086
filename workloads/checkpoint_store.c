/* Checkpoints on storage: sizing (the plan), content, paths, writing to durable, restoring and
 * verifying, keep_last removal, set-up and tear-down; used by the checkpoint workload and by
 * checkpoints inside training (checkpoint_store.h). */
#include "checkpoint_store.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "../bench/agree.h"
#include "../bench/cachestate.h"
#include "../bench/results.h"
#include "../bench/rng.h"
#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "../bench/safefile.h"
#include "../bench/timer.h"
#include "../bench/storage/fs.h"
#include "evict.h"
#include "workload.h"

/* ---- sizing ----------------------------------------------------------------------------- */

/* Part i of n of `total`, the parts differing by at most one byte and adding up exactly. */
static uint64_t piece(uint64_t total, uint64_t i, uint64_t n)
{
	unsigned __int128 a = (unsigned __int128)total * i / n;
	unsigned __int128 b = (unsigned __int128)total * (i + 1) / n;

	return (uint64_t)(b - a);
}

static double ckpt_bpp(const struct config *cfg)
{
	return cfg->checkpoint.bytes_per_param_model + cfg->checkpoint.bytes_per_param_optimizer +
	       cfg->checkpoint.bytes_per_param_gradients;
}

/* The parts of the checkpoint: from num_parameters, or model_size_bytes split in the same
 * ratio (the rest, after rounding, goes to the weights). */
static void ckpt_parts(const struct config *cfg, struct ckpt_plan *p)
{
	const double bm = cfg->checkpoint.bytes_per_param_model;
	const double bo = cfg->checkpoint.bytes_per_param_optimizer;
	const double bg = cfg->checkpoint.bytes_per_param_gradients;
	const double n = (double)cfg->checkpoint.num_parameters;

	if (cfg->checkpoint.model_size_bytes) {
		double bpp = ckpt_bpp(cfg);
		p->total = cfg->checkpoint.model_size_bytes;
		p->optimizer = (uint64_t)floor((double)p->total * bo / bpp);
		p->grads = (uint64_t)floor((double)p->total * bg / bpp);
		p->model = p->total - p->optimizer - p->grads;
	} else {
		p->model = (uint64_t)llround(n * bm);
		p->optimizer = (uint64_t)llround(n * bo);
		p->grads = (uint64_t)llround(n * bg);
		p->total = p->model + p->optimizer + p->grads;
	}
	p->full = p->total;
	if (cfg->checkpoint.scale < 1) {
		const double f = cfg->checkpoint.scale;
		p->model = (uint64_t)llround((double)p->model * f);
		p->optimizer = (uint64_t)llround((double)p->optimizer * f);
		p->grads = (uint64_t)llround((double)p->grads * f);
		p->total = p->model + p->optimizer + p->grads;
	}
}

/* This rank's bytes of one part: its model-parallel shard, then either the data-parallel
 * replica 0 writes it all (not sharded) or every replica writes a piece (sharded). */
static uint64_t ckpt_share(uint64_t part, const struct ckpt_plan *p, int mp_rank, int dp_rank,
			   bool sharded)
{
	uint64_t mp = piece(part, (uint64_t)mp_rank, (uint64_t)p->tp * (uint64_t)p->pp);

	if (sharded)
		return piece(mp, (uint64_t)dp_rank, (uint64_t)p->dp);
	return dp_rank == 0 ? mp : 0;
}

uint64_t ckpt_bytes_of(const struct config *cfg, const struct ckpt_plan *p, int rank)
{
	int mpn = p->tp * p->pp, mp_rank = rank % mpn, dp_rank = rank / mpn;
	int64_t z = cfg->checkpoint.zero_stage;

	return ckpt_share(p->model, p, mp_rank, dp_rank, z >= 3) +
	       ckpt_share(p->optimizer, p, mp_rank, dp_rank, z >= 1) +
	       ckpt_share(p->grads, p, mp_rank, dp_rank, z >= 2);
}

void ckpt_plan_make(const struct config *cfg, int rank, int nranks, struct ckpt_plan *p)
{
	memset(p, 0, sizeof(*p));
	ckpt_parts(cfg, p);
	p->tp = (int)cfg->checkpoint.tensor_parallelism;
	p->pp = (int)cfg->checkpoint.pipeline_parallelism;
	p->dp = cfg->checkpoint.data_parallelism ? (int)cfg->checkpoint.data_parallelism
						 : nranks / (p->tp * p->pp);
	p->mp_rank = rank % (p->tp * p->pp);
	p->dp_rank = rank / (p->tp * p->pp);
	uint64_t sum = 0;
	for (int r = 0; r < nranks; r++) {
		uint64_t b = ckpt_bytes_of(cfg, p, r);
		if (r < rank)
			p->offset += b;
		if (r == rank)
			p->mine = b;
		p->writers += b > 0;
		sum += b;
	}
	/* A subset (fewer ranks than the geometry): the checkpoint is what its ranks write, the
	 * full size in the projection the same share of the full model. */
	p->geometry_total = p->total;
	if (sum != p->total && p->total > 0) {
		p->full = (uint64_t)((double)p->full * ((double)sum / (double)p->total));
		p->total = sum;
	}
}

int checkpoint_check(const struct config *cfg, int nranks, struct fb_errbuf *err)
{
	const char *src = cfg->source;
	int64_t mpn = cfg->checkpoint.tensor_parallelism * cfg->checkpoint.pipeline_parallelism;
	struct ckpt_plan p;

	if (!cfg->checkpoint.model_size_bytes && !cfg->checkpoint.num_parameters)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [checkpoint] needs model_size_bytes or num_parameters (how "
			       "large the checkpoint is)",
			       src);
	if (ckpt_bpp(cfg) <= 0)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [checkpoint] bytes_per_param_model + _optimizer + _gradients "
			       "is 0: nothing to save",
			       src);
	int64_t dpk = cfg->checkpoint.data_parallelism;
	if (dpk && nranks > mpn * dpk)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [checkpoint] data_parallelism = %" PRId64 " with tensor x "
			       "pipeline = %" PRId64 " is a geometry of %" PRId64
			       " ranks: %d ranks do not fit (a subset has at most that many)",
			       src, dpk, mpn, mpn * dpk, nranks);
	if (!dpk && (mpn > nranks || nranks % mpn != 0))
		return fb_fail(
		    err, -FB_ECONFIG,
		    "%s: [checkpoint] tensor_parallelism x pipeline_parallelism = %" PRId64
		    " must divide the %d ranks (the data-parallel degree is ranks / "
		    "(tensor x pipeline))",
		    src, mpn, nranks);
	if (cfg->storage.backend == BACKEND_NULL)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [storage] backend = null keeps no files, and a checkpoint is "
			       "complete only when its .metadata is renamed into place: use posix, "
			       "mpiio or uring",
			       src);
	if (cfg->storage.direct)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [storage] direct = true is not supported by the checkpoint "
			       "workload (its shards are not block-aligned)",
			       src);
	if (!ckpt_saves(cfg) && !ckpt_restores(cfg))
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [checkpoint] save = false and restore = false: nothing to do",
			       src);
	if (!ckpt_phased(cfg) && cfg->checkpoint.verify && !cfg->checkpoint.restore)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [checkpoint] verify = true needs restore = true (verification "
			       "checks what the restore reads)",
			       src);
	ckpt_plan_make(cfg, 0, nranks, &p);
	if (p.total == 0)
		return fb_fail(err, -FB_ECONFIG, "%s: [checkpoint] the checkpoint has 0 bytes",
			       src);
	return 0;
}

/* ---- content ---------------------------------------------------------------------------- */

void ckpt_pattern(const struct config *cfg, int64_t step, int rank, unsigned char *buf, size_t len)
{
	uint64_t s =
	    rng_mix3((uint64_t)cfg->dataset.seed ^ 0x636b7074ull, (uint64_t)step, (uint64_t)rank);
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t v = splitmix64(&s);
		memcpy(buf + i, &v, 8);
	}
	for (uint64_t v = splitmix64(&s); i < len; i++, v >>= 8)
		buf[i] = (unsigned char)v;
}

/* The header of the transfer at file offset off, over the first bytes of buf. */
void ckpt_header(unsigned char *buf, size_t len, int64_t step, int rank, uint64_t off)
{
	uint64_t h[4] = {CKPT_MAGIC, (uint64_t)step, (uint64_t)rank, off};

	memcpy(buf, h, len < CKPT_HDR ? len : CKPT_HDR);
}

int ckpt_header_rank(const unsigned char *buf, size_t len)
{
	uint64_t h[4];

	if (len < sizeof(h))
		return -1;
	memcpy(h, buf, sizeof(h));
	return h[0] == CKPT_MAGIC && h[2] < (uint64_t)INT32_MAX ? (int)h[2] : -1;
}

/* ---- paths ------------------------------------------------------------------------------ */

void ckpt_step_dir(const struct ckpt_state *st, int64_t step, char *buf, size_t len)
{
	snprintf(buf, len, "%s/step-%" PRId64, st->folder, step);
}

void ckpt_file(const struct run *run, const struct ckpt_state *st, int64_t step, int rank,
	       char *buf, size_t len)
{
	if (run->cfg.checkpoint.layout == CKPT_LAYOUT_SINGLE)
		snprintf(buf, len, "%s/step-%" PRId64 "/" CKPT_SINGLE, st->folder, step);
	else
		snprintf(buf, len, "%s/step-%" PRId64 "/__%d_0.distcp", st->folder, step, rank);
}

/* ---- write ------------------------------------------------------------------------------ */

/* Opens this rank's file for writing. dcp: created (with the requested layout where the file
 * system stripes); single: created by rank 0 before the start, opened by the others. */
static int ckpt_open_write(struct run *run, struct io *io, const char *path, struct sfile **f)
{
	if (run->cfg.checkpoint.layout == CKPT_LAYOUT_SINGLE)
		return io_open(io, f, path, STORAGE_O_WRITE | STORAGE_O_NOTRUNC | STORAGE_O_SHARED);
	/* A new file with the requested layout where the file system stripes (io_create). */
	return io_create(io, f, path, 0);
}

/* Writes this rank's bytes at [base, base + len) of path: transfers of transfer_size, each
 * with its header, then fsync and close. */
int ckpt_write_range(struct run *run, struct ckpt_state *st, struct ckpt_one *c, const char *path,
		     uint64_t base, uint64_t len, const unsigned char *staged)
{
	const uint64_t xfer = run->cfg.checkpoint.transfer_size;
	bool shared = run->cfg.checkpoint.layout == CKPT_LAYOUT_SINGLE &&
		      (run->storage->caps & STORAGE_CAP_COLLECTIVE);
	struct io io = {.run = run, .stats = st->wst};
	struct sfile *f = NULL;
	int rc;

	if (len == 0 && !shared)
		return 0;
	if ((rc = ckpt_open_write(run, &io, path, &f)) < 0)
		return rc;
	c->files += run->cfg.checkpoint.layout == CKPT_LAYOUT_DCP;
	for (uint64_t done = 0; done < len && rc == 0; done += xfer) {
		size_t n = (size_t)(len - done < xfer ? len - done : xfer);
		const unsigned char *src = staged ? staged + done : st->pattern;
		if (!staged)
			ckpt_header(st->pattern, n, c->step, run->rank, base + done);
		rc = io_pwrite(&io, f, src, n, base + done);
		c->wbytes += rc == 0 ? n : 0;
		c->wcalls += rc == 0;
	}
	/* A shared MPI-IO handle's sync and close are collective: every rank makes them, also
	 * after a failed write, so no rank is left waiting. */
	int src = (rc == 0 || shared) ? io_sync(&io, f) : 0;
	int crc = io_close(&io, f);
	return rc ? rc : src ? src : crc;
}

/* Writes path (in the step folder dir) atomically through the back-end: a hidden temporary
 * with an unguessable name beside it (the back-end's open for writing never follows a link
 * nor opens a FIFO or a file with other links), written, fsynced, closed, renamed over path,
 * then the step folder and the checkpoint folder fsynced. The file's own calls are not
 * counted (its time is in meta_s); the rename and the folder fsyncs are namespace calls. A
 * failure leaves no temporary, and no path when only a folder fsync failed: not known to be
 * durable, the checkpoint must not look complete (best effort). */
int ckpt_put_atomic(struct run *run, struct ckpt_state *st, const char *dir, const char *path,
		    const char *text, size_t len)
{
	struct io io = {.run = run}, nio = {.run = run, .stats = st->nst};
	char tmp[CFG_PATH_MAX + 160];
	struct sfile *f = NULL;
	uint64_t r = 0;
	int rc;

	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r = timer_now_ns() ^ ((uint64_t)getpid() << 40);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp-%016" PRIx64, dir, strrchr(path, '/') + 1, r);
	if ((rc = io_open(&io, &f, tmp, STORAGE_O_WRITE)) < 0)
		return rc;
	rc = io_pwrite(&io, f, text, len, 0);
	if (rc == 0)
		rc = io_sync(&io, f);
	int crc = io_close(&io, f);
	if ((rc = rc ? rc : crc) == 0)
		rc = io_rename(&nio, tmp, path);
	if (rc < 0) {
		(void)io_unlink(&nio, tmp, true);
		return rc;
	}
	if ((rc = io_sync_dir(&nio, dir)) < 0 || (rc = io_sync_dir(&nio, st->folder)) < 0) {
		(void)io_unlink(&nio, path, true);
		return rc;
	}
	return 0;
}

/* Rank 0, after every rank's bytes are durable: .metadata under a temporary name, fsync,
 * rename, fsync of the step folder and of the checkpoint folder. */
int ckpt_write_metadata(struct run *run, struct ckpt_state *st, int64_t step)
{
	const struct ckpt_plan *p = &st->plan;
	char dir[CFG_PATH_MAX + 64], path[CFG_PATH_MAX + 96];
	char file[CFG_PATH_MAX + 96];
	json_t *m = json_object(), *files = json_array();
	uint64_t off = 0;
	char *text;
	int rc = 0;

	ckpt_step_dir(st, step, dir, sizeof(dir));
	json_object_set_new(m, "feedbench_checkpoint", json_integer(1));
	json_object_set_new(m, "step", json_integer(step));
	json_object_set_new(
	    m, "layout",
	    json_string(cfg_choice_name("checkpoint", "layout", run->cfg.checkpoint.layout)));
	json_object_set_new(m, "total_bytes", json_integer((json_int_t)p->total));
	json_object_set_new(m, "seed", json_integer(run->cfg.dataset.seed));
	json_object_set_new(m, "ranks", json_integer(run->nranks));
	for (int r = 0; r < run->nranks; r++) {
		if (!p->bytes_of[r]) {
			continue;
		}
		ckpt_file(run, st, step, r, file, sizeof(file));
		json_array_append_new(files, json_pack("{s:s, s:i, s:I, s:I}", "file",
						       strrchr(file, '/') + 1, "rank", r, "offset",
						       (json_int_t)off, "bytes",
						       (json_int_t)p->bytes_of[r]));
		if (run->cfg.checkpoint.layout == CKPT_LAYOUT_SINGLE)
			off += p->bytes_of[r];
	}
	json_object_set_new(m, "files", files);
	text = json_dumps(m, JSON_INDENT(1));
	json_decref(m);
	if (!text)
		return run_fail(run, -ENOMEM, "out of memory");
	snprintf(path, sizeof(path), "%s/" CKPT_META, dir);
	rc = ckpt_put_atomic(run, st, dir, path, text, strlen(text));
	free(text);
	return rc;
}

/* The names in a folder (io_list_dir), collected before any is removed. */
struct ckpt_names {
	char **v;
	size_t n, cap;
};

static int ckpt_collect(const char *name, void *arg)
{
	struct ckpt_names *nm = arg;

	if (nm->n == nm->cap) {
		size_t cap = nm->cap ? 2 * nm->cap : 8;
		char **v = realloc(nm->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		nm->v = v;
		nm->cap = cap;
	}
	if (!(nm->v[nm->n] = strdup(name)))
		return -ENOMEM;
	nm->n++;
	return 0;
}

/* Rank 0: removes a checkpoint's folder, its .metadata first and durably (the step folder
 * fsync'ed) before any other file: a removal that stops half way (a failed unlink, a rank
 * killed, a crash) leaves an incomplete checkpoint, never one that looks complete with a file
 * missing. Then its files and the folder (a step folder holds files only: anything else in it
 * is not removed, and is the error). The folder is opened once without following a link
 * (io_own_dir_open) and every file is removed relative to it, so a link planted at the step's
 * name, or swapped in during the removal, never leads the unlinks elsewhere. Through the
 * back-end's namespace calls, counted. */
static int ckpt_remove_step(struct run *run, struct ckpt_state *st, const char *dir)
{
	struct io io = {.run = run, .stats = st->nst};
	struct ckpt_names nm = {0};
	int dfd = io_own_dir_open(run, dir);
	int rc;

	if (dfd == -ENOENT)
		return 0;
	if (dfd == -ELOOP || dfd == -ENOTDIR)
		return run_fail(run, -FB_ENOTREG,
				"refusing to remove the old checkpoint '%s': it is not a folder of "
				"feedbench's own (a symbolic link or a file); nothing removed",
				dir);
	if (dfd < 0)
		return run_fail(run, dfd, "cannot open the old checkpoint '%s': %s", dir,
				fb_strerror(dfd));
	if ((rc = io_unlink_at(&io, dfd, dir, CKPT_META, true)) < 0 ||
	    (rc = io_sync_dir(&io, dir)) < 0)
		goto out_close;
	rc = io_list_dir_at(&io, dfd, dir, ckpt_collect, &nm);
	if (rc < 0)
		rc = run_fail(run, rc, "cannot list the old checkpoint '%s': %s", dir,
			      fb_strerror(rc));
	for (size_t i = 0; rc == 0 && i < nm.n; i++)
		rc = io_unlink_at(&io, dfd, dir, nm.v[i], true);
	for (size_t i = 0; i < nm.n; i++)
		free(nm.v[i]);
	free(nm.v);
out_close:
	close(dfd);
	return rc ? rc : io_rmdir(&io, dir, true);
}

/* Rank 0: 1 when a checkpoint folder is at dir, 0 when not, or a recorded failure. A step
 * folder is the workload's own: a link at its name (opened with O_NOFOLLOW | O_DIRECTORY) is
 * refused, so nothing is removed or written through it. */
static int ckpt_step_exists(struct run *run, struct io *io, const char *dir)
{
	struct storage_stat sst;
	const char *what;
	int rc = safe_own_dir_check(dir, &what);

	if (rc == -FB_ENOTREG && strcmp(what, "a symbolic link") == 0)
		return run_fail(
		    run, rc,
		    "refusing to use the checkpoint folder '%s': it is a symbolic link, "
		    "not a folder of feedbench's own (nothing is removed or written "
		    "through it)",
		    dir);
	rc = io_stat(io, dir, &sst);

	if (rc == -ENOENT || (rc == 0 && !sst.is_dir))
		return 0; /* not there, or not a folder: io_mkdir says what is in the way */
	if (rc < 0)
		return run_fail(run, rc, "cannot stat '%s': %s", dir, fb_strerror(rc));
	return 1;
}

/* Rank 0, before the start: the step folder (an earlier run's is removed first: a checkpoint
 * is never a mix of two runs), and the shared file of layout single, created with its stripe
 * layout (io_create). */
int ckpt_make_step(struct run *run, struct ckpt_state *st, int64_t step)
{
	struct io io = {.run = run, .stats = st->nst};
	char dir[CFG_PATH_MAX + 64], path[CFG_PATH_MAX + 96];
	struct sfile *f = NULL;
	int rc;

	ckpt_step_dir(st, step, dir, sizeof(dir));
	if ((rc = ckpt_step_exists(run, &io, dir)) < 0)
		return rc;
	if (rc == 1 && (rc = ckpt_remove_step(run, st, dir)) < 0)
		return rc;
	/* The checkpoint folder exists (ckpt_setup): one level. */
	if ((rc = io_mkdir(&io, dir, 0755)) < 0)
		return rc;
	if (run->cfg.checkpoint.layout != CKPT_LAYOUT_SINGLE)
		return 0;
	ckpt_file(run, st, step, 0, path, sizeof(path));
	if ((rc = io_create(&io, &f, path, 0)) < 0)
		return rc;
	return io_close(&io, f);
}

int ckpt_save(struct run *run, struct ckpt_state *st, struct ckpt_one *c)
{
	const struct ckpt_plan *p = &st->plan;
	bool single = run->cfg.checkpoint.layout == CKPT_LAYOUT_SINGLE;
	char path[CFG_PATH_MAX + 96];
	int rc = 0;

	ckpt_pattern(&run->cfg, c->step, run->rank, st->pattern, run->cfg.checkpoint.transfer_size);
	if (run->rank == 0)
		rc = ckpt_make_step(run, st, c->step);
	if ((rc = agree(run, rc)) < 0)
		return rc;
	ckpt_file(run, st, c->step, run->rank, path, sizeof(path));
	MPI_Barrier(run->comm);
	uint64_t t0 = timer_now_ns();
	run_phase_began(run, t0);
	rc = ckpt_write_range(run, st, c, path, single ? p->offset : 0, p->mine, NULL);
	c->write_s = timer_ns_to_s(timer_now_ns() - t0);
	watchdog_kick(run);
	if ((rc = agree(run, rc)) < 0) {
		if (run->rank == 0) {
			char dir[CFG_PATH_MAX + 64];
			ckpt_step_dir(st, c->step, dir, sizeof(dir));
			run_warn(run, "checkpoint %s is incomplete (no " CKPT_META ")", dir);
		}
		return rc;
	}
	if (run->rank == 0) {
		uint64_t t1 = timer_now_ns();
		rc = ckpt_write_metadata(run, st, c->step);
		c->meta_s = timer_ns_to_s(timer_now_ns() - t1);
		c->durable_s = timer_ns_to_s(timer_now_ns() - t0);
	}
	st->step = c->step;
	return agree(run, rc);
}

/* Time to durable (rank 0), given the slowest rank's write time: every rank times from its own
 * exit of the start barrier, and those exits differ (a rank descheduled right after it), so
 * rank 0's own span can be shorter than a rank that left earlier took to write. The longer of
 * the two paths to .metadata counts: rank 0's own, and the slowest write followed by what
 * came after the agreement (.metadata, folder fsyncs): never less than the write time. */
double ckpt_durable(const struct ckpt_one *c, double wmax)
{
	return fmax(c->durable_s, wmax + c->meta_s);
}

/* ---- restore ---------------------------------------------------------------------------- */

/* Compares one transfer with what was written; the first differing byte is the error. */
static int ckpt_verify(struct run *run, struct ckpt_state *st, const char *path, int64_t step,
		       uint64_t off, size_t n)
{
	ckpt_header(st->pattern, n, step, st->src, off);
	if (memcmp(st->rbuf, st->pattern, n) == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (st->rbuf[i] != st->pattern[i])
			return run_fail(run, -FB_EVERIFY,
					"checkpoint verification failed: '%s' at offset %" PRIu64
					": expected 0x%02x, read 0x%02x",
					path, off + i, st->pattern[i], st->rbuf[i]);
	return 0;
}

static int ckpt_read_range(struct run *run, struct ckpt_state *st, struct ckpt_one *c,
			   const char *path, uint64_t base, uint64_t len)
{
	const uint64_t xfer = run->cfg.checkpoint.transfer_size;
	struct io io = {.run = run, .stats = st->rst};
	struct sfile *f = NULL;
	int rc;

	if (len == 0)
		return 0;
	/* Independent reads: a shared handle would make every rank open collectively. */
	if ((rc = io_open(&io, &f, path, STORAGE_O_READ)) < 0)
		return rc;
	for (uint64_t done = 0; done < len && rc == 0; done += xfer) {
		size_t n = (size_t)(len - done < xfer ? len - done : xfer);
		rc = io_pread(&io, f, st->rbuf, n, base + done);
		if (rc == 0) {
			c->rbytes += n;
			c->rcalls++;
		}
		if (rc == 0 && done == 0)
			st->read_writer = ckpt_header_rank(st->rbuf, n);
		if (rc == 0 && run->cfg.checkpoint.verify) {
			uint64_t v0 = timer_now_ns();
			rc = ckpt_verify(run, st, path, c->step, base + done, n);
			c->verify_ns += timer_now_ns() - v0;
		}
	}
	int crc = io_close(&io, f);
	return rc ? rc : crc;
}

int ckpt_restore(struct run *run, struct ckpt_state *st, struct ckpt_one *c)
{
	bool single = run->cfg.checkpoint.layout == CKPT_LAYOUT_SINGLE;
	char path[CFG_PATH_MAX + 96];
	int rc = 0;

	ckpt_file(run, st, c->step, st->src, path, sizeof(path));
	/* The page cache must not answer the restore: this rank's file is evicted through the
	 * back-end (after the fsync its pages are clean), or page_cache = drop drops the whole
	 * cache (root, the first rank of each node, whether or not it has bytes). Phases flush
	 * once, between the write and the read phase (checkpoint_phases.c). */
	if (st->flushed) {
		rc = 0;
	} else if (run->cfg.storage.page_cache == PAGE_CACHE_DROP) {
		rc = evict_drop_all(run);
	} else if (st->src_bytes) {
		struct io io = {.run = run}; /* not part of the timed restore */
		rc = io_evict(&io, path);
	}
	if ((rc = agree(run, rc)) < 0)
		return rc;
	/* measured after the eviction, outside the restore's clock; one shared file once a node */
	if ((rc = cachestate_record_path(
		 run, st->src_bytes && (!single || run->local_rank == 0) ? path : NULL,
		 "checkpoint_restore_cache_measured", c->step, "before")) < 0)
		return rc;
	if (run->cfg.checkpoint.verify) /* the pattern, headers aside, as written */
		ckpt_pattern(&run->cfg, c->step, st->src, st->pattern,
			     run->cfg.checkpoint.transfer_size);
	MPI_Barrier(run->comm);
	uint64_t t0 = timer_now_ns();
	run_phase_began(run, t0);
	rc = ckpt_read_range(run, st, c, path, single ? st->src_off : 0, st->src_bytes);
	/* The read bandwidth is of the storage: the byte comparison is not in it. */
	c->read_s = timer_ns_to_s(timer_now_ns() - t0 - c->verify_ns);
	watchdog_kick(run);
	return agree(run, rc);
}

/* Restore only (save = false): rank 0 checks that the checkpoint is complete (.metadata) and
 * was written by this config (same size, ranks and layout). */
int ckpt_check_existing(struct run *run, struct ckpt_state *st, int64_t step)
{
	char dir[CFG_PATH_MAX + 64], path[CFG_PATH_MAX + 96];
	struct io io = {.run = run, .stats = st->nst};
	struct storage_stat sst;
	json_error_t jerr;
	json_t *m;
	int rc = 0;

	if (run->rank != 0)
		return 0;
	ckpt_step_dir(st, step, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/" CKPT_META, dir);
	m = safe_json_load_at(path, 0, true, &jerr); /* never through a link, never a FIFO */
	if (!m)
		return run_fail(run, -FB_EDATASET,
				"checkpoint '%s' cannot be restored: %s is %s (save = false "
				"restores complete checkpoints only)",
				dir, CKPT_META,
				io_stat(&io, path, &sst) == 0 ? "unreadable" : "missing");
	const char *layout = json_string_value(json_object_get(m, "layout"));
	if ((uint64_t)json_integer_value(json_object_get(m, "total_bytes")) != st->plan.total ||
	    json_integer_value(json_object_get(m, "ranks")) != run->nranks ||
	    json_integer_value(json_object_get(m, "seed")) != run->cfg.dataset.seed || !layout ||
	    strcmp(layout, cfg_choice_name("checkpoint", "layout", run->cfg.checkpoint.layout)) !=
		0)
		rc = run_fail(
		    run, -FB_EDATASET,
		    "checkpoint '%s' was written by another config (%s: %" JSON_INTEGER_FORMAT
		    " bytes, %" JSON_INTEGER_FORMAT " ranks, layout %s; this one: %" PRIu64
		    " bytes, %d ranks, layout %s)",
		    dir, CKPT_META, json_integer_value(json_object_get(m, "total_bytes")),
		    json_integer_value(json_object_get(m, "ranks")), layout ? layout : "?",
		    st->plan.total, run->nranks,
		    cfg_choice_name("checkpoint", "layout", run->cfg.checkpoint.layout));
	json_decref(m);
	return rc;
}

/* ---- keep_last -------------------------------------------------------------------------- */

int ckpt_prune(struct run *run, struct ckpt_state *st, struct ckpt_one *c)
{
	int64_t keep = run->cfg.checkpoint.keep_last, old = c->step - keep;
	char dir[CFG_PATH_MAX + 64];
	int rc = 0;

	if (keep <= 0 || old < 1)
		return 0;
	if (run->rank == 0) {
		struct io io = {.run = run, .stats = st->nst};
		ckpt_step_dir(st, old, dir, sizeof(dir));
		uint64_t t0 = timer_now_ns();
		rc = ckpt_step_exists(run, &io, dir);
		if (rc == 1 && (rc = ckpt_remove_step(run, st, dir)) == 0)
			rc = io_sync_dir(&io, st->folder); /* the step folder's entry gone */
		c->delete_s = timer_ns_to_s(timer_now_ns() - t0);
	}
	return agree(run, rc);
}

int ckpt_save_step(struct run *run, struct ckpt_state *st, struct ckpt_one *c, bool restore)
{
	int rc;

	if ((rc = ckpt_save(run, st, c)) < 0)
		return rc;
	if ((rc = agree(run, ckpt_stripe_readback(run, st, c->step))) < 0)
		return rc;
	if (restore && (rc = ckpt_restore(run, st, c)) < 0)
		return rc;
	rc = ckpt_prune(run, st, c);
	if (rc == 0 && run->stop && *run->stop)
		rc = run_fail(run, -FB_EINTR, "interrupted by a signal");
	return agree(run, rc);
}

/* ---- workload hooks --------------------------------------------------------------------- */

/* The layout the file system gave a checkpoint file, recorded like a dataset's (first
 * checkpoint only): the checkpoint's files stand in for the dataset's while it is read. */
int ckpt_stripe_readback(struct run *run, struct ckpt_state *st, int64_t step)
{
	struct dataset saved = run->ds;
	struct ds_file *files;
	uint32_t n = 0;
	int rc = 0;

	if (run->rank != 0 || st->stripe_read)
		return 0;
	st->stripe_read = true;
	files = calloc((size_t)run->nranks, sizeof(*files));
	if (!files)
		return run_fail(run, -ENOMEM, "out of memory");
	for (int r = 0; r < run->nranks; r++) {
		if (!st->plan.bytes_of[r])
			continue;
		files[n].path = malloc(CFG_PATH_MAX + 96);
		if (!files[n].path) {
			rc = run_fail(run, -ENOMEM, "out of memory");
			break;
		}
		ckpt_file(run, st, step, r, files[n].path, CFG_PATH_MAX + 96);
		files[n].index = n;
		files[n].bytes = st->plan.bytes_of[r];
		n++;
		if (run->cfg.checkpoint.layout == CKPT_LAYOUT_SINGLE)
			break;
	}
	if (rc == 0 && n) {
		memset(&run->ds, 0, sizeof(run->ds));
		run->ds.files = files;
		run->ds.nfiles = n;
		run->ds.nheld = n; /* rank 0 holds them all: dataset_path() finds file 0 */
		rc = stripe_readback_dataset(run);
		run->ds = saved;
	}
	for (uint32_t i = 0; i < n; i++)
		free(files[i].path);
	free(files);
	return rc;
}

/* State, plan, buffers and the checkpoint folder. Collective. */
int ckpt_setup(struct run *run)
{
	const struct config *cfg = &run->cfg;
	struct ckpt_state *st = calloc(1, sizeof(*st));
	int rc = 0;

	if (!st)
		return agree(run, run_fail(run, -ENOMEM, "out of memory"));
	run->workload_priv = st;
	if (cfg->checkpoint.folder[0])
		snprintf(st->folder, sizeof(st->folder), "%s", cfg->checkpoint.folder);
	else
		snprintf(st->folder, sizeof(st->folder), "%s/checkpoints", cfg->dataset.data_dir);
	ckpt_plan_make(cfg, run->rank, run->nranks, &st->plan);
	st->plan.bytes_of = calloc((size_t)run->nranks, sizeof(uint64_t));
	st->pattern = malloc(cfg->checkpoint.transfer_size);
	st->rbuf = malloc(cfg->checkpoint.transfer_size);
	st->wst = calloc(1, sizeof(*st->wst));
	st->rst = calloc(1, sizeof(*st->rst));
	st->nst = calloc(1, sizeof(*st->nst));
	if (!st->plan.bytes_of || !st->pattern || !st->rbuf || !st->wst || !st->rst || !st->nst)
		rc = run_fail(run, -ENOMEM, "out of memory for two buffers of %" PRIu64 " bytes",
			      cfg->checkpoint.transfer_size);
	for (int r = 0; rc == 0 && r < run->nranks; r++)
		st->plan.bytes_of[r] = ckpt_bytes_of(cfg, &st->plan, r);
	st->src = run->rank;
	st->src_off = st->plan.offset;
	st->src_bytes = st->plan.mine;
	st->read_writer = -1;
	if (rc == 0 && run->rank == 0) {
		struct io io = {.run = run}; /* set-up: not counted */
		rc = io_mkdirs(&io, st->folder, 0755);
	}
	return agree(run, rc);
}

void ckpt_finish(struct run *run, int rc)
{
	struct ckpt_state *st = ckpt_of(run);

	(void)rc;
	if (!st)
		return;
	if (st->inflight) /* a run that failed before its last agreement */
		pthread_join(st->writer, NULL);
	free(st->staging);
	free(st->wrun);
	free(st->plan.bytes_of);
	free(st->pattern);
	free(st->rbuf);
	free(st->wst);
	free(st->rst);
	free(st->nst);
	free(st);
	run->workload_priv = NULL;
}

/* The checkpoints' namespace calls through the io_* wrappers (rank 0's: it keeps the folders). */
void ckpt_namespace_json(json_t *m, uint64_t ops, uint64_t ops_ns, uint64_t dsyncs,
			 uint64_t dsync_ns)
{
	json_object_set_new(m, "checkpoint_namespace_ops", json_integer((json_int_t)ops));
	json_object_set_new(m, "checkpoint_namespace_seconds", json_real(timer_ns_to_s(ops_ns)));
	json_object_set_new(m, "checkpoint_folder_fsync_calls", json_integer((json_int_t)dsyncs));
	json_object_set_new(m, "checkpoint_folder_fsync_seconds",
			    json_real(timer_ns_to_s(dsync_ns)));
}
