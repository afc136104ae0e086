/* The checkpoint workload (`[workload] type = checkpoint`): every rank writes its part of a
 * model checkpoint the way PyTorch Distributed Checkpoint lays it out, makes it durable, and
 * reads it back after evicting it from the page cache, verified byte for byte.
 *
 * Sizing follows DLIO / MLPerf Storage (docs/checkpoint.md): model weights, optimizer state and
 * gradients, in bytes per parameter, split over tensor x pipeline ranks; data-parallel replicas
 * write nothing unless ZeRO-style sharding (zero_stage) gives each a shard.
 *
 * Layouts:
 *   dcp     <folder>/step-<N>/__<rank>_0.distcp, one per writing rank, then .metadata
 *   single  <folder>/step-<N>/checkpoint.bin, each rank its range (MPI-IO with backend =
 *           mpiio, pwrite at offsets otherwise), then .metadata
 * `.metadata` is written by rank 0 only after every rank agreed that its bytes are durable
 * (written, fsync'ed, closed), under a temporary name, fsync'ed, renamed, and the step folder
 * and its parent fsync'ed: a checkpoint without .metadata is incomplete, whatever happened to
 * the job. "Time to durable" ends there.
 *
 * Content: a seeded pattern of transfer_size bytes per (seed, step, rank); each transfer starts
 * with a 32-byte header (magic, step, rank, file offset), so a misplaced or stale block is found
 * as surely as a flipped byte, and the data costs nothing to produce while writing.
 */
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
#include "../bench/results.h"
#include "../bench/rng.h"
#include "../bench/run.h"
#include "../bench/safefile.h"
#include "../bench/timer.h"
#include "../bench/storage/fs.h"
#include "checkpoint.h"
#include "evict.h"
#include "workload.h"

#define MIB	    1048576.0
#define CKPT_HDR    32
#define CKPT_MAGIC  0x31305450434b4246ull /* "FBCKPT01" little-endian */
#define CKPT_SINGLE "checkpoint.bin"
#define CKPT_META   ".metadata"

/* What this rank writes: its share of each part of the model state. */
struct ckpt_plan {
	uint64_t total;			  /* bytes of the whole checkpoint (all ranks) */
	uint64_t model, optimizer, grads; /* the parts of total */
	uint64_t mine;			  /* this rank's bytes */
	uint64_t offset;		  /* layout single: where this rank's range starts */
	int tp, pp, dp;			  /* parallel degrees */
	int mp_rank, dp_rank;		  /* model-parallel and data-parallel coordinates */
	int writers;			  /* ranks with bytes to write */
	uint64_t *bytes_of;		  /* rank 0: every rank's bytes */
};

/* One checkpoint as one rank saw it. */
struct ckpt_one {
	int64_t step;
	double write_s;	    /* start barrier (async: the writer's start) -> this rank's bytes
			     * durable (fsync, close); the staging copy is not in it */
	double staging_s;   /* async: copying this rank's bytes to the staging buffer */
	double durable_s;   /* rank 0: start barrier -> .metadata renamed, folders fsync'ed */
	double meta_s;	    /* rank 0: agreement that all bytes are durable -> the same end */
	double read_s;	    /* restore: start barrier -> this rank's bytes read (verify time out) */
	uint64_t verify_ns; /* restore: time spent comparing what was read (as ior leaves out) */
	double delete_s;    /* rank 0: removing the checkpoint keep_last pushed out */
	uint64_t wbytes, wcalls, rbytes, rcalls;
	uint64_t files; /* files this rank created */
};

struct ckpt_rep {
	int n;
	struct ckpt_one *c;
};

struct ckpt_state {
	struct ckpt_plan plan;
	char folder[CFG_PATH_MAX + 32];
	unsigned char *pattern; /* transfer_size bytes of this rank's seeded data */
	unsigned char *rbuf;	/* restore buffer */
	int64_t step;		/* last checkpoint number written */
	bool stripe_read;	/* the layout of a checkpoint file was read back */
	/* In training (checkpoint_train_*): rank 0's totals. */
	int ntrain;		  /* checkpoints saved */
	double train_block_s;	  /* training stopped: barrier to durable, summed */
	double train_write_max_s; /* slowest rank's write, summed */
	double train_steps_lost;  /* blocked time / mean step time, summed */
	uint64_t train_bytes;	  /* bytes written, all ranks */
	double train_delete_s;
	double train_durable_s; /* barrier to durable, summed */
	double train_end_s;	/* async: waiting for the last checkpoint at the end */
	int nsaves;		/* checkpoints started */
	double train_staging_s; /* async: copying the state to the staging buffer, summed */
	double train_wait_s;	/* async: waiting for the previous checkpoint, summed */
	/* async: the checkpoint in flight (at most one), written by a writer thread. */
	unsigned char *staging; /* this rank's bytes, headers included */
	pthread_t writer;
	bool inflight;
	int writer_rc;
	uint64_t inflight_t0; /* ns: its start (the barrier before the staging copy) */
	struct ckpt_one pending;
	struct run *run;
	/* The writer's copy of the run: its own error buffer, read by the trainer only after
	 * joining the writer (the trainer's run->err is read without a lock elsewhere). */
	struct run *wrun;
	struct io_stats *wst; /* this rank's checkpoint writes (all checkpoints of the run) */
	struct io_stats *rst; /* and restores */
	/* Rank 0's namespace calls of the checkpoints (step folders made and removed, stats,
	 * folder fsyncs, the shared file's creation); the checkpoint folder's creation at the
	 * start is not in it (set-up, as mdtest leaves its folders out). */
	struct io_stats *nst;
};

static struct ckpt_state *ckpt_of(struct run *run)
{
	return (struct ckpt_state *)run->workload_priv;
}

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

static uint64_t ckpt_bytes_of(const struct config *cfg, const struct ckpt_plan *p, int rank)
{
	int mpn = p->tp * p->pp, mp_rank = rank % mpn, dp_rank = rank / mpn;
	int64_t z = cfg->checkpoint.zero_stage;

	return ckpt_share(p->model, p, mp_rank, dp_rank, z >= 3) +
	       ckpt_share(p->optimizer, p, mp_rank, dp_rank, z >= 1) +
	       ckpt_share(p->grads, p, mp_rank, dp_rank, z >= 2);
}

static void ckpt_plan_make(const struct config *cfg, int rank, int nranks, struct ckpt_plan *p)
{
	memset(p, 0, sizeof(*p));
	ckpt_parts(cfg, p);
	p->tp = (int)cfg->checkpoint.tensor_parallelism;
	p->pp = (int)cfg->checkpoint.pipeline_parallelism;
	p->dp = nranks / (p->tp * p->pp);
	p->mp_rank = rank % (p->tp * p->pp);
	p->dp_rank = rank / (p->tp * p->pp);
	for (int r = 0; r < nranks; r++) {
		uint64_t b = ckpt_bytes_of(cfg, p, r);
		if (r < rank)
			p->offset += b;
		if (r == rank)
			p->mine = b;
		p->writers += b > 0;
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
	if (mpn > nranks || nranks % mpn != 0)
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
	if (!cfg->checkpoint.save && !cfg->checkpoint.restore)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [checkpoint] save = false and restore = false: nothing to do",
			       src);
	if (cfg->checkpoint.verify && !cfg->checkpoint.restore)
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

static void ckpt_pattern(const struct config *cfg, int64_t step, int rank, unsigned char *buf,
			 size_t len)
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
static void ckpt_header(unsigned char *buf, size_t len, int64_t step, int rank, uint64_t off)
{
	uint64_t h[4] = {CKPT_MAGIC, (uint64_t)step, (uint64_t)rank, off};

	memcpy(buf, h, len < CKPT_HDR ? len : CKPT_HDR);
}

/* ---- paths ------------------------------------------------------------------------------ */

static void ckpt_step_dir(const struct ckpt_state *st, int64_t step, char *buf, size_t len)
{
	snprintf(buf, len, "%s/step-%" PRId64, st->folder, step);
}

static void ckpt_file(const struct run *run, const struct ckpt_state *st, int64_t step, int rank,
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
static int ckpt_write_range(struct run *run, struct ckpt_state *st, struct ckpt_one *c,
			    const char *path, uint64_t base, uint64_t len,
			    const unsigned char *staged)
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
static int ckpt_put_atomic(struct run *run, struct ckpt_state *st, const char *dir,
			   const char *path, const char *text, size_t len)
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
static int ckpt_write_metadata(struct run *run, struct ckpt_state *st, int64_t step)
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
 * is not removed, and is the error). Through the back-end's namespace calls, counted. */
static int ckpt_remove_step(struct run *run, struct ckpt_state *st, const char *dir)
{
	struct io io = {.run = run, .stats = st->nst};
	char path[CFG_PATH_MAX + 320];
	struct ckpt_names nm = {0};
	int rc;

	snprintf(path, sizeof(path), "%s/" CKPT_META, dir);
	if ((rc = io_unlink(&io, path, true)) < 0 || (rc = io_sync_dir(&io, dir)) < 0)
		return rc;
	rc = io_list_dir(&io, dir, ckpt_collect, &nm);
	if (rc < 0)
		rc = run_fail(run, rc, "cannot list the old checkpoint '%s': %s", dir,
			      fb_strerror(rc));
	for (size_t i = 0; rc == 0 && i < nm.n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, nm.v[i]);
		rc = io_unlink(&io, path, true);
	}
	for (size_t i = 0; i < nm.n; i++)
		free(nm.v[i]);
	free(nm.v);
	return rc ? rc : io_rmdir(&io, dir, true);
}

/* Rank 0: 1 when a checkpoint folder is at dir, 0 when not, or a recorded failure. */
static int ckpt_step_exists(struct run *run, struct io *io, const char *dir)
{
	struct storage_stat sst;
	int rc = io_stat(io, dir, &sst);

	if (rc == -ENOENT || (rc == 0 && !sst.is_dir))
		return 0; /* not there, or not a folder: io_mkdir says what is in the way */
	if (rc < 0)
		return run_fail(run, rc, "cannot stat '%s': %s", dir, fb_strerror(rc));
	return 1;
}

/* Rank 0, before the start: the step folder (an earlier run's is removed first: a checkpoint
 * is never a mix of two runs), and the shared file of layout single, created with its stripe
 * layout (io_create). */
static int ckpt_make_step(struct run *run, struct ckpt_state *st, int64_t step)
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

static int ckpt_save(struct run *run, struct ckpt_state *st, struct ckpt_one *c)
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
static double ckpt_durable(const struct ckpt_one *c, double wmax)
{
	return fmax(c->durable_s, wmax + c->meta_s);
}

/* ---- restore ---------------------------------------------------------------------------- */

/* Compares one transfer with what was written; the first differing byte is the error. */
static int ckpt_verify(struct run *run, struct ckpt_state *st, const char *path, int64_t step,
		       uint64_t off, size_t n)
{
	ckpt_header(st->pattern, n, step, run->rank, off);
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
		if (rc == 0 && run->cfg.checkpoint.verify) {
			uint64_t v0 = timer_now_ns();
			rc = ckpt_verify(run, st, path, c->step, base + done, n);
			c->verify_ns += timer_now_ns() - v0;
		}
	}
	int crc = io_close(&io, f);
	return rc ? rc : crc;
}

static int ckpt_restore(struct run *run, struct ckpt_state *st, struct ckpt_one *c)
{
	const struct ckpt_plan *p = &st->plan;
	bool single = run->cfg.checkpoint.layout == CKPT_LAYOUT_SINGLE;
	char path[CFG_PATH_MAX + 96];
	int rc = 0;

	ckpt_file(run, st, c->step, run->rank, path, sizeof(path));
	/* The page cache must not answer the restore: this rank's file is evicted through the
	 * back-end (after the fsync its pages are clean), or page_cache = drop drops the whole
	 * cache (root, the first rank of each node, whether or not it has bytes). */
	if (run->cfg.storage.page_cache == PAGE_CACHE_DROP) {
		rc = evict_drop_all(run);
	} else if (p->mine) {
		struct io io = {.run = run}; /* not part of the timed restore */
		rc = io_evict(&io, path);
	}
	if ((rc = agree(run, rc)) < 0)
		return rc;
	if (run->cfg.checkpoint.verify) /* the pattern, headers aside, as written */
		ckpt_pattern(&run->cfg, c->step, run->rank, st->pattern,
			     run->cfg.checkpoint.transfer_size);
	MPI_Barrier(run->comm);
	uint64_t t0 = timer_now_ns();
	rc = ckpt_read_range(run, st, c, path, single ? p->offset : 0, p->mine);
	/* The read bandwidth is of the storage: the byte comparison is not in it. */
	c->read_s = timer_ns_to_s(timer_now_ns() - t0 - c->verify_ns);
	watchdog_kick(run);
	return agree(run, rc);
}

/* Restore only (save = false): rank 0 checks that the checkpoint is complete (.metadata) and
 * was written by this config (same size, ranks and layout). */
static int ckpt_check_existing(struct run *run, struct ckpt_state *st, int64_t step)
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

static int ckpt_prune(struct run *run, struct ckpt_state *st, struct ckpt_one *c)
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

/* ---- workload hooks --------------------------------------------------------------------- */

/* The layout the file system gave a checkpoint file, recorded like a dataset's (first
 * checkpoint only): the checkpoint's files stand in for the dataset's while it is read. */
static int ckpt_stripe_readback(struct run *run, struct ckpt_state *st, int64_t step)
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
		rc = stripe_readback_dataset(run);
		run->ds = saved;
	}
	for (uint32_t i = 0; i < n; i++)
		free(files[i].path);
	free(files);
	return rc;
}

/* State, plan, buffers and the checkpoint folder. Collective. */
static int ckpt_setup(struct run *run)
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
	if (rc == 0 && run->rank == 0) {
		struct io io = {.run = run}; /* set-up: not counted */
		rc = io_mkdirs(&io, st->folder, 0755);
	}
	return agree(run, rc);
}

static int ckpt_prepare(struct run *run, struct results_ctx *ctx)
{
	int rc;

	(void)ctx;
	if ((rc = ckpt_setup(run)) < 0)
		return rc;
	/* The requested layout: recorded, applied to the data folder where files inherit it,
	 * to each file at creation otherwise (bench/storage/stripe.c). */
	return agree(run, stripe_prepare(run));
}

static int ckpt_rep(struct run *run, int repetition, void **out)
{
	const struct config *cfg = &run->cfg;
	struct ckpt_state *st = ckpt_of(run);
	struct ckpt_rep *rep = calloc(1, sizeof(*rep));
	int rc = 0;

	if (rep)
		rep->c = calloc((size_t)cfg->checkpoint.count, sizeof(*rep->c));
	if (!rep || !rep->c) {
		free(rep);
		return agree(run, run_fail(run, -ENOMEM, "out of memory"));
	}
	*out = rep;
	for (int64_t k = 0; k < cfg->checkpoint.count && rc == 0; k++) {
		struct ckpt_one *c = &rep->c[rep->n++];

		c->step = (int64_t)repetition * cfg->checkpoint.count + k + 1;
		if (!cfg->checkpoint.save) {
			if ((rc = agree(run, ckpt_check_existing(run, st, c->step))) < 0 ||
			    (rc = ckpt_restore(run, st, c)) < 0)
				break;
			continue;
		}
		if ((rc = ckpt_save(run, st, c)) < 0)
			break;
		if ((rc = agree(run, ckpt_stripe_readback(run, st, c->step))) < 0)
			break;
		if (cfg->checkpoint.restore && (rc = ckpt_restore(run, st, c)) < 0)
			break;
		rc = ckpt_prune(run, st, c);
		if (rc == 0 && run->stop && *run->stop)
			rc = run_fail(run, -FB_EINTR, "interrupted by a signal");
		rc = agree(run, rc);
	}
	return rc;
}

/* ---- results ---------------------------------------------------------------------------- */

/* Per checkpoint and rank, gathered to rank 0. */
enum { V_WRITE, V_READ, V_WBYTES, V_RBYTES, V_WCALLS, V_RCALLS, V_FILES, V_NF };

static json_t *ckpt_skew(const double *v, int n)
{
	double lo = INFINITY, hi = 0, sum = 0;

	for (int i = 0; i < n; i++) {
		lo = fmin(lo, v[i]);
		hi = fmax(hi, v[i]);
		sum += v[i];
	}
	return json_pack("{s:f, s:f, s:f}", "min", n ? lo : 0.0, "mean", n ? sum / n : 0.0, "max",
			 hi);
}

/* Latencies per call of every rank, merged exactly on rank 0. */
static void ckpt_hist_reduce(struct run *run, const struct hist *in, struct hist *out)
{
	hist_reset(out);
	MPI_Reduce(in->bucket, out->bucket, HIST_BUCKETS, MPI_UINT64_T, MPI_SUM, 0, run->comm);
	MPI_Reduce(&in->count, &out->count, 1, MPI_UINT64_T, MPI_SUM, 0, run->comm);
	MPI_Reduce(&in->sum_ns, &out->sum_ns, 1, MPI_UINT64_T, MPI_SUM, 0, run->comm);
	MPI_Reduce(&in->max_ns, &out->max_ns, 1, MPI_UINT64_T, MPI_MAX, 0, run->comm);
}

static json_t *ckpt_latency_json(const struct hist *h)
{
	return json_pack("{s:I, s:f, s:f, s:f, s:f}", "calls", (json_int_t)h->count, "p50",
			 hist_quantile(h, 0.50), "p99", hist_quantile(h, 0.99), "p999",
			 hist_quantile(h, 0.999), "max", h->max_ns / 1e9);
}

/* The checkpoints' namespace calls through the io_* wrappers (rank 0's: it keeps the folders). */
static void ckpt_namespace_json(json_t *m, uint64_t ops, uint64_t ops_ns, uint64_t dsyncs,
				uint64_t dsync_ns)
{
	json_object_set_new(m, "checkpoint_namespace_ops", json_integer((json_int_t)ops));
	json_object_set_new(m, "checkpoint_namespace_seconds", json_real(timer_ns_to_s(ops_ns)));
	json_object_set_new(m, "checkpoint_folder_fsync_calls", json_integer((json_int_t)dsyncs));
	json_object_set_new(m, "checkpoint_folder_fsync_seconds",
			    json_real(timer_ns_to_s(dsync_ns)));
}

struct ckpt_totals {
	double wbw_sum, rbw_sum, durable_sum, delete_sum, wbytes, rbytes;
	int n, nread;
	double wbw_min, wbw_max, rbw_min, rbw_max;
};

/* One checkpoint's record: bandwidth over the slowest rank (IOR), skew over ranks. */
static json_t *ckpt_record(struct run *run, const struct ckpt_one *c0, const double *v, int rep,
			   struct ckpt_totals *t)
{
	int n = run->nranks;
	double *w = calloc((size_t)n, sizeof(double)), *r = calloc((size_t)n, sizeof(double));
	double wb = 0, rb = 0, wmax = 0, rmax = 0, files = 0, wcalls = 0, rcalls = 0;
	json_t *o;

	for (int q = 0; q < n && w && r; q++) {
		const double *x = v + (size_t)q * V_NF;
		w[q] = x[V_WRITE];
		r[q] = x[V_READ];
		wb += x[V_WBYTES];
		rb += x[V_RBYTES];
		wcalls += x[V_WCALLS];
		rcalls += x[V_RCALLS];
		files += x[V_FILES];
		wmax = fmax(wmax, x[V_WRITE]);
		rmax = fmax(rmax, x[V_READ]);
	}
	if (run->cfg.checkpoint.layout == CKPT_LAYOUT_SINGLE)
		files = 1;
	files += 1; /* .metadata */
	double wbw = wmax > 0 ? wb / MIB / wmax : 0, rbw = rmax > 0 ? rb / MIB / rmax : 0;
	o = json_object();
	json_object_set_new(o, "repetition", json_integer(rep + 1));
	json_object_set_new(o, "step", json_integer(c0->step));
	json_object_set_new(o, "files", json_integer((json_int_t)files));
	if (run->cfg.checkpoint.save) {
		json_object_set_new(o, "bytes_written", json_integer((json_int_t)wb));
		json_object_set_new(o, "write_calls", json_integer((json_int_t)wcalls));
		json_object_set_new(o, "write_seconds", json_real(wmax));
		json_object_set_new(o, "write_bandwidth_MiB_per_second", json_real(wbw));
		json_object_set_new(o, "time_to_durable_seconds",
				    json_real(ckpt_durable(c0, wmax)));
		json_object_set_new(o, "write_seconds_per_rank", w ? ckpt_skew(w, n) : json_null());
	}
	if (run->cfg.checkpoint.restore) {
		json_object_set_new(o, "bytes_read", json_integer((json_int_t)rb));
		json_object_set_new(o, "read_calls", json_integer((json_int_t)rcalls));
		json_object_set_new(o, "read_seconds", json_real(rmax));
		json_object_set_new(o, "read_bandwidth_MiB_per_second", json_real(rbw));
		json_object_set_new(o, "read_seconds_per_rank", r ? ckpt_skew(r, n) : json_null());
		t->rbw_sum += rbw;
		t->rbw_min = t->nread ? fmin(t->rbw_min, rbw) : rbw;
		t->rbw_max = fmax(t->rbw_max, rbw);
		t->nread++;
	}
	json_object_set_new(o, "delete_seconds", json_real(c0->delete_s));
	t->wbw_sum += wbw;
	t->wbw_min = t->n ? fmin(t->wbw_min, wbw) : wbw;
	t->wbw_max = fmax(t->wbw_max, wbw);
	t->durable_sum += ckpt_durable(c0, wmax);
	t->delete_sum += c0->delete_s;
	t->wbytes += wb;
	t->rbytes += rb;
	t->n++;
	free(w);
	free(r);
	return o;
}

/* One repetition in the columns of the metric table (bench/metrics.h) that sweep, compare and
 * history read: bandwidth is the checkpoint write bandwidth (what stripe settings are chosen
 * for), the restore's beside it under its own name. */
static json_t *ckpt_rep_json(const struct run *run, int r, const struct ckpt_totals *a,
			     const struct ckpt_totals *b)
{
	int n = b->n - a->n, nr = b->nread - a->nread;
	json_t *o = json_object();

	json_object_set_new(o, "repetition", json_integer(r + 1));
	json_object_set_new(o, "checkpoints", json_integer(n));
	if (run->cfg.checkpoint.save && n > 0)
		json_object_set_new(o, "bandwidth_MiB_per_second",
				    json_real((b->wbw_sum - a->wbw_sum) / n));
	else if (nr > 0)
		json_object_set_new(o, "bandwidth_MiB_per_second",
				    json_real((b->rbw_sum - a->rbw_sum) / nr));
	if (nr > 0)
		json_object_set_new(o, "read_bandwidth_MiB_per_second",
				    json_real((b->rbw_sum - a->rbw_sum) / nr));
	if (n > 0)
		json_object_set_new(o, "time_to_durable_seconds",
				    json_real((b->durable_sum - a->durable_sum) / n));
	return o;
}

static void ckpt_table(FILE *f, struct run *run, const json_t *m, const struct ckpt_plan *p)
{
	const struct config *cfg = &run->cfg;

	fprintf(f, "# %s: checkpoint (%s layout, %s back-end, %d ranks)\n\n", cfg->workload.name,
		cfg_choice_name("checkpoint", "layout", cfg->checkpoint.layout), run->storage->name,
		run->nranks);
	fprintf(f, "| metric | value |\n|---|---|\n");
	fprintf(f,
		"| checkpoint size | %.3f GiB (%" PRIu64 " bytes; model %" PRIu64
		", optimizer %" PRIu64 ", gradients %" PRIu64 ") |\n",
		(double)p->total / (MIB * 1024), p->total, p->model, p->optimizer, p->grads);
	fprintf(f,
		"| parallelism | tensor %d x pipeline %d x data %d, zero_stage %" PRId64
		", %d writing ranks |\n",
		p->tp, p->pp, p->dp, cfg->checkpoint.zero_stage, p->writers);
	fprintf(f, "| files per checkpoint | %.0f (.metadata included) |\n",
		json_number_value(json_object_get(m, "checkpoint_files")));
	if (cfg->checkpoint.save) {
		fprintf(f, "| write | %.1f MiB/s (%.3f GiB/s), slowest rank |\n",
			json_number_value(
			    json_object_get(m, "checkpoint_write_bandwidth_MiB_per_second")),
			json_number_value(
			    json_object_get(m, "checkpoint_write_bandwidth_MiB_per_second")) /
			    1024);
		fprintf(
		    f, "| time to durable | %.4f s |\n",
		    json_number_value(json_object_get(m, "checkpoint_time_to_durable_seconds")));
	}
	if (cfg->checkpoint.restore)
		fprintf(f, "| restore (read) | %.1f MiB/s (%.3f GiB/s), slowest rank, %s%s |\n",
			json_number_value(
			    json_object_get(m, "checkpoint_read_bandwidth_MiB_per_second")),
			json_number_value(
			    json_object_get(m, "checkpoint_read_bandwidth_MiB_per_second")) /
			    1024,
			cfg->storage.page_cache == PAGE_CACHE_DROP ? "page cache dropped"
								   : "files evicted (fadvise)",
			cfg->checkpoint.verify ? ", verified byte for byte" : ", not verified");
	fprintf(f,
		"| namespace (rank 0) | %.0f calls (stat, mkdir, unlink, list, rmdir, rename) in "
		"%.4f s; "
		"%.0f folder fsyncs in %.4f s |\n",
		json_number_value(json_object_get(m, "checkpoint_namespace_ops")),
		json_number_value(json_object_get(m, "checkpoint_namespace_seconds")),
		json_number_value(json_object_get(m, "checkpoint_folder_fsync_calls")),
		json_number_value(json_object_get(m, "checkpoint_folder_fsync_seconds")));
	fprintf(f, "| stripe | %s |\n",
		run->fs.can_stripe ? "see summary.json storage.stripe_*"
				   : "unsupported on this file system");
	fprintf(f, "\nfolder: %s\n", ckpt_of(run)->folder);
}

static int ckpt_write(struct run *run, void *const *reps, int nreps, const struct results_ctx *ctx,
		      const char *final_dir, bool quiet)
{
	struct ckpt_state *st = ckpt_of(run);
	const struct ckpt_plan *p = &st->plan;
	struct ckpt_totals t = {0};
	json_t *s = NULL, *list = NULL, *m;
	double mine[V_NF], *all = NULL;
	char *table = NULL;
	size_t tlen = 0;
	int rc = 0;

	if (run->rank == 0) {
		all = calloc((size_t)run->nranks * V_NF, sizeof(double));
		s = json_object();
		list = json_array();
		if (!all)
			rc = run_fail(run, -ENOMEM, "out of memory");
	}
	if ((rc = agree(run, rc)) < 0) {
		json_decref(s);
		json_decref(list);
		return rc;
	}
	json_t *rj = run->rank == 0 ? json_array() : NULL;
	for (int r = 0; r < nreps; r++) {
		const struct ckpt_rep *rep = reps[r];
		struct ckpt_totals before = t;
		for (int k = 0; k < rep->n; k++) {
			const struct ckpt_one *c = &rep->c[k];
			mine[V_WRITE] = c->write_s;
			mine[V_READ] = c->read_s;
			mine[V_WBYTES] = (double)c->wbytes;
			mine[V_RBYTES] = (double)c->rbytes;
			mine[V_WCALLS] = (double)c->wcalls;
			mine[V_RCALLS] = (double)c->rcalls;
			mine[V_FILES] = (double)c->files;
			MPI_Gather(mine, V_NF, MPI_DOUBLE, all, V_NF, MPI_DOUBLE, 0, run->comm);
			if (run->rank == 0)
				json_array_append_new(list, ckpt_record(run, c, all, r, &t));
		}
		if (run->rank == 0)
			json_array_append_new(rj, ckpt_rep_json(run, r, &before, &t));
	}
	struct hist wl, rl;
	/* file fsyncs; namespace calls and folder fsyncs (rank 0's); files created (all) */
	uint64_t sync_in[8] = {st->wst->syncs,
			       st->wst->sync_ns,
			       st->nst->meta_ops,
			       st->nst->meta_ns,
			       st->nst->syncs,
			       st->nst->sync_ns,
			       st->wst->creates + st->nst->creates,
			       st->wst->create_ns + st->nst->create_ns},
		 sync[8] = {0};
	ckpt_hist_reduce(run, &st->wst->wlatency, &wl);
	ckpt_hist_reduce(run, &st->rst->latency, &rl);
	MPI_Reduce(sync_in, sync, 8, MPI_UINT64_T, MPI_SUM, 0, run->comm);
	if (run->rank != 0)
		return results_write_folder(run, NULL, ctx, final_dir, NULL, 0, quiet);
	json_t *first = json_array_get(list, 0);
	results_summary_head(run, ctx, s);
	json_object_set_new(s, "storage", results_storage_json(run));
	m = json_object();
	json_object_set_new(m, "checkpoint_count", json_integer(t.n));
	json_object_set_new(m, "checkpoint_size_bytes", json_integer((json_int_t)p->total));
	json_object_set_new(m, "checkpoint_bytes_written", json_integer((json_int_t)t.wbytes));
	json_object_set_new(m, "checkpoint_bytes_read", json_integer((json_int_t)t.rbytes));
	json_object_set_new(m, "checkpoint_files", json_incref(json_object_get(first, "files")));
	json_object_set_new(m, "checkpoint_writing_ranks", json_integer(p->writers));
	if (run->cfg.checkpoint.save) {
		json_object_set_new(m, "checkpoint_write_bandwidth_MiB_per_second",
				    json_real(t.n ? t.wbw_sum / t.n : 0));
		json_object_set_new(m, "checkpoint_write_bandwidth_min_MiB_per_second",
				    json_real(t.wbw_min));
		json_object_set_new(m, "checkpoint_write_bandwidth_max_MiB_per_second",
				    json_real(t.wbw_max));
		json_object_set_new(m, "checkpoint_time_to_durable_seconds",
				    json_real(t.n ? t.durable_sum / t.n : 0));
		json_object_set_new(m, "checkpoint_write_seconds_per_rank",
				    json_incref(json_object_get(first, "write_seconds_per_rank")));
	}
	if (t.nread) {
		json_object_set_new(m, "checkpoint_read_bandwidth_MiB_per_second",
				    json_real(t.rbw_sum / t.nread));
		json_object_set_new(m, "checkpoint_read_bandwidth_min_MiB_per_second",
				    json_real(t.rbw_min));
		json_object_set_new(m, "checkpoint_read_bandwidth_max_MiB_per_second",
				    json_real(t.rbw_max));
		json_object_set_new(m, "checkpoint_read_seconds_per_rank",
				    json_incref(json_object_get(first, "read_seconds_per_rank")));
		json_object_set_new(m, "checkpoint_restore_verified",
				    json_boolean(run->cfg.checkpoint.verify));
	}
	json_object_set_new(m, "checkpoint_delete_seconds", json_real(t.delete_sum));
	if (run->cfg.checkpoint.save) {
		json_object_set_new(m, "checkpoint_write_latency_seconds", ckpt_latency_json(&wl));
		json_object_set_new(m, "checkpoint_fsync_calls", json_integer((json_int_t)sync[0]));
		json_object_set_new(m, "checkpoint_fsync_seconds",
				    json_real(timer_ns_to_s(sync[1])));
		json_object_set_new(m, "checkpoint_create_calls",
				    json_integer((json_int_t)sync[6]));
		json_object_set_new(m, "checkpoint_create_seconds",
				    json_real(timer_ns_to_s(sync[7])));
	}
	ckpt_namespace_json(m, sync[2], sync[3], sync[4], sync[5]);
	if (t.nread)
		json_object_set_new(m, "checkpoint_read_latency_seconds", ckpt_latency_json(&rl));
	json_object_set(s, "metric", m);
	json_object_set_new(s, "checkpoints", list);
	json_object_set_new(s, "repetitions", rj);

	json_t *plan = json_object(), *bytes = json_array();
	for (int r = 0; r < run->nranks; r++)
		json_array_append_new(bytes, json_integer((json_int_t)p->bytes_of[r]));
	json_object_set_new(plan, "total_bytes", json_integer((json_int_t)p->total));
	json_object_set_new(plan, "model_bytes", json_integer((json_int_t)p->model));
	json_object_set_new(plan, "optimizer_bytes", json_integer((json_int_t)p->optimizer));
	json_object_set_new(plan, "gradient_bytes", json_integer((json_int_t)p->grads));
	json_object_set_new(plan, "scale", json_real(run->cfg.checkpoint.scale));
	json_object_set_new(plan, "tensor_parallelism", json_integer(p->tp));
	json_object_set_new(plan, "pipeline_parallelism", json_integer(p->pp));
	json_object_set_new(plan, "data_parallelism", json_integer(p->dp));
	json_object_set_new(plan, "zero_stage", json_integer(run->cfg.checkpoint.zero_stage));
	json_object_set_new(plan, "bytes_per_rank", bytes);
	json_object_set_new(plan, "folder", json_string(st->folder));
	json_object_set_new(s, "checkpoint", plan);

	FILE *f = open_memstream(&table, &tlen);
	if (f) {
		ckpt_table(f, run, m, p);
		fclose(f);
	}
	json_decref(m);
	free(all);
	struct results_file files[] = {{"table.md", table}};
	rc = results_write_folder(run, s, ctx, final_dir, files, 1, quiet);
	json_decref(s);
	free(table);
	return rc;
}

static void ckpt_free_rep(void *rep)
{
	struct ckpt_rep *r = rep;

	if (r)
		free(r->c);
	free(r);
}

static void ckpt_finish(struct run *run, int rc)
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

/* ---- inside training -------------------------------------------------------------------- */

bool checkpoint_in_training(const struct config *cfg)
{
	return cfg->checkpoint.every_epochs > 0 || cfg->checkpoint.every_steps > 0;
}

int checkpoint_train_check(const struct config *cfg, int nranks, struct fb_errbuf *err)
{
	int rc = checkpoint_check(cfg, nranks, err);

	if (rc == 0 && cfg->checkpoint.mode == CKPT_MODE_ASYNC &&
	    cfg->storage.backend == BACKEND_MPIIO)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [checkpoint] mode = async writes from a writer thread with "
			       "plain I/O calls: use [storage] backend = posix (MPI-IO handles "
			       "are shared with the training's collective calls)",
			       cfg->source);
	if (rc == 0 && cfg->checkpoint.every_epochs > 0 &&
	    cfg->checkpoint.after_epoch > cfg->train.epochs)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [checkpoint] checkpoint_after_epoch = %" PRId64
			       " but training runs %" PRId64 " epochs: no checkpoint would follow "
			       "an epoch",
			       cfg->source, cfg->checkpoint.after_epoch, cfg->train.epochs);
	return rc;
}

int checkpoint_train_prepare(struct run *run)
{
	int rc;

	if (!checkpoint_in_training(&run->cfg))
		return 0;
	if ((rc = ckpt_setup(run)) < 0)
		return rc;
	struct ckpt_state *st = ckpt_of(run);
	st->run = run;
	if (run->cfg.checkpoint.mode == CKPT_MODE_ASYNC) {
		st->wrun = malloc(sizeof(*st->wrun));
		st->staging = malloc(st->plan.mine ? st->plan.mine : 1);
		if (!st->wrun)
			rc = run_fail(run, -ENOMEM, "out of memory");
		else if (!st->staging)
			rc = run_fail(run, -ENOMEM,
				      "mode = async needs a staging buffer of %" PRIu64
				      " bytes (this rank's part of the checkpoint): out of memory",
				      st->plan.mine);
		else /* fault the pages in now, not during the first copy */
			memset(st->staging, 0, st->plan.mine);
	}
	return agree(run, rc);
}

bool checkpoint_train_due_step(const struct run *run, uint64_t global_step)
{
	int64_t n = run->cfg.checkpoint.every_steps;

	return ckpt_of((struct run *)run) && n > 0 && global_step > 0 &&
	       global_step % (uint64_t)n == 0;
}

/* Rank 0's totals for one durable checkpoint (collective: the reductions). */
static void ckpt_train_count(struct run *run, struct ckpt_state *st, const struct ckpt_one *c)
{
	double in[2] = {c->write_s, c->staging_s + c->write_s}, max[2] = {0, 0}, bytes = 0;
	double wbytes = (double)c->wbytes;

	MPI_Reduce(in, max, 2, MPI_DOUBLE, MPI_MAX, 0, run->comm);
	MPI_Reduce(&wbytes, &bytes, 1, MPI_DOUBLE, MPI_SUM, 0, run->comm);
	if (run->rank == 0) {
		st->ntrain++;
		st->train_write_max_s += max[0]; /* the storage's: no staging copy in it */
		st->train_bytes += (uint64_t)bytes;
		st->train_delete_s += c->delete_s;
		/* durable from the staging copy's start: the slowest copy + write path */
		st->train_durable_s += ckpt_durable(c, max[1]);
	}
}

/* The writer thread of mode = async: this rank's staged bytes to its file, fsync, close. No
 * MPI: the agreement and .metadata wait for the trainer's next agreement point. The write
 * time is the writer's own (create to close), so the write bandwidth is the storage's: the
 * staging copy before it is timed apart (staging_s). */
static void *ckpt_writer_main(void *arg)
{
	struct ckpt_state *st = arg;
	struct run *run = st->wrun;
	struct ckpt_one *c = &st->pending;
	bool single = run->cfg.checkpoint.layout == CKPT_LAYOUT_SINGLE;
	char path[CFG_PATH_MAX + 96];
	uint64_t t0 = timer_now_ns();

	ckpt_file(run, st, c->step, run->rank, path, sizeof(path));
	st->writer_rc = ckpt_write_range(run, st, c, path, single ? st->plan.offset : 0,
					 st->plan.mine, st->staging);
	c->write_s = timer_ns_to_s(timer_now_ns() - t0);
	return NULL;
}

/* Collective: waits for the checkpoint in flight (that wait is blocked time), agrees on its
 * write (a failed write is reported here, naming the rank and its file), and rank 0 makes it
 * durable (.metadata last), then keep_last. */
static int ckpt_async_finish(struct run *run, struct ckpt_state *st, int rc)
{
	struct ckpt_one *c = &st->pending;
	uint64_t t0 = timer_now_ns();
	bool had = st->inflight;
	int wrc = 0;

	if (had) {
		pthread_join(st->writer, NULL);
		st->inflight = false;
		wrc = st->writer_rc;
		if (wrc < 0) /* the writer's message, now the trainer's: agree() reports it */
			run_fail(run, wrc, "%s",
				 st->wrun->err.msg[0] ? st->wrun->err.msg : fb_strerror(wrc));
	}
	if (run->rank == 0)
		st->train_wait_s += timer_ns_to_s(timer_now_ns() - t0);
	watchdog_kick(run);
	if (rc == 0)
		rc = wrc;
	if (!had) /* nothing in flight (on every rank, or a failure that every rank agreed) */
		return agree(run, rc);
	if ((rc = agree(run, rc)) < 0) {
		if (run->rank == 0 && wrc) {
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
		c->durable_s = timer_ns_to_s(timer_now_ns() - st->inflight_t0);
	}
	st->step = c->step;
	if ((rc = agree(run, rc)) < 0)
		return rc;
	rc = ckpt_prune(run, st, c);
	ckpt_train_count(run, st, c);
	return rc;
}

/* Collective: async: wait for the previous checkpoint, copy this rank's state to the staging
 * buffer (the copy is blocked time, as DCP async_save's copy to CPU memory), start the writer. */
static int ckpt_async_start(struct run *run, struct ckpt_state *st)
{
	struct ckpt_one *c = &st->pending;
	const uint64_t xfer = run->cfg.checkpoint.transfer_size;
	const uint64_t base =
	    run->cfg.checkpoint.layout == CKPT_LAYOUT_SINGLE ? st->plan.offset : 0;
	int64_t step;
	int rc;

	if ((rc = ckpt_async_finish(run, st, 0)) < 0)
		return rc;
	step = st->step + 1;
	memset(c, 0, sizeof(*c));
	c->step = step;
	ckpt_pattern(&run->cfg, step, run->rank, st->pattern, xfer);
	if (run->rank == 0)
		rc = ckpt_make_step(run, st, step);
	if ((rc = agree(run, rc)) < 0)
		return rc;
	MPI_Barrier(run->comm);
	uint64_t t0 = timer_now_ns();
	for (uint64_t done = 0; done < st->plan.mine; done += xfer) {
		size_t n = (size_t)(st->plan.mine - done < xfer ? st->plan.mine - done : xfer);
		ckpt_header(st->pattern, n, step, run->rank, base + done);
		memcpy(st->staging + done, st->pattern, n);
	}
	c->staging_s = timer_ns_to_s(timer_now_ns() - t0);
	if (run->rank == 0)
		st->train_staging_s += c->staging_s;
	st->inflight_t0 = t0;
	st->writer_rc = 0;
	*st->wrun = *run;
	fb_errbuf_init(&st->wrun->err);
	int err = pthread_create(&st->writer, NULL, ckpt_writer_main, st);
	if (err)
		rc = run_fail(run, -err, "cannot start the checkpoint writer thread: %s",
			      strerror(err));
	st->inflight = err == 0;
	return agree(run, rc);
}

static int ckpt_blocking(struct run *run, struct ckpt_state *st)
{
	struct ckpt_one c = {0};
	int rc;

	c.step = st->step + 1;
	if ((rc = ckpt_save(run, st, &c)) < 0)
		return rc;
	rc = ckpt_prune(run, st, &c);
	ckpt_train_count(run, st, &c);
	return rc;
}

/* One checkpoint inside training, blocking or async; the time training stood still is counted
 * (rank 0) and returned in *blocked_s (every rank its own). */
static int ckpt_train_save(struct run *run, double mean_step_s, double *blocked_s)
{
	struct ckpt_state *st = ckpt_of(run);
	uint64_t t0 = timer_now_ns();
	int rc = run->cfg.checkpoint.mode == CKPT_MODE_ASYNC ? ckpt_async_start(run, st)
							     : ckpt_blocking(run, st);
	double b = timer_ns_to_s(timer_now_ns() - t0);

	watchdog_kick(run);
	if (blocked_s)
		*blocked_s = b;
	if (run->rank == 0) {
		st->train_block_s += b;
		st->nsaves++;
		if (mean_step_s > 0)
			st->train_steps_lost += b / mean_step_s;
	}
	return rc;
}

int checkpoint_train_step(struct run *run, int rc, double mean_step_s, double *blocked_s)
{
	if (blocked_s)
		*blocked_s = 0;
	/* Every rank healthy before any rank starts writing. */
	if ((rc = agree(run, rc)) < 0)
		return rc;
	return ckpt_train_save(run, mean_step_s, blocked_s);
}

int checkpoint_train_catchup(struct run *run, int rc, uint64_t global_next, uint64_t global_end)
{
	int64_t n = run->cfg.checkpoint.every_steps;

	if (!ckpt_of(run) || n <= 0)
		return rc;
	/* The next due step, 1-based: the first multiple of n at or after global_next + 1. */
	uint64_t due = (global_next / (uint64_t)n + 1) * (uint64_t)n;
	if (due > global_end)
		return rc;
	int arc = agree(run, rc);
	return rc ? rc : arc;
}

int checkpoint_train_epoch(struct run *run, int epoch, double epoch_s, uint64_t steps,
			   double *blocked_s)
{
	struct ckpt_state *st = ckpt_of(run);

	if (blocked_s)
		*blocked_s = 0;
	/* After 1-based epoch e >= after when (e - after) % every == 0 (DLIO's
	 * next_checkpoint_epoch: checkpoint_after_epoch, then every epochs_between_checkpoints);
	 * after 0: every. */
	int64_t every = run->cfg.checkpoint.every_epochs, e = epoch + 1;
	int64_t after = run->cfg.checkpoint.after_epoch ? run->cfg.checkpoint.after_epoch : every;
	if (!st || every <= 0 || e < after || (e - after) % every != 0)
		return 0;
	return ckpt_train_save(run, steps > 0 ? epoch_s / (double)steps : 0, blocked_s);
}

int checkpoint_train_end(struct run *run, int rc)
{
	struct ckpt_state *st = ckpt_of(run);

	if (!st || run->cfg.checkpoint.mode != CKPT_MODE_ASYNC)
		return rc;
	uint64_t t0 = timer_now_ns();
	int frc = ckpt_async_finish(run, st, rc);
	if (run->rank == 0) {
		double b = timer_ns_to_s(timer_now_ns() - t0);
		st->train_block_s += b;
		st->train_end_s = b;
	}
	return rc ? rc : frc;
}

void checkpoint_train_json(struct run *run, json_t *summary)
{
	struct ckpt_state *st = ckpt_of(run);
	json_t *m = json_object_get(summary, "metric");
	bool async = run->cfg.checkpoint.mode == CKPT_MODE_ASYNC;

	if (!st || !m || run->rank != 0)
		return;
	json_object_set_new(m, "checkpoint_count", json_integer(st->ntrain));
	json_object_set_new(m, "checkpoint_size_bytes", json_integer((json_int_t)st->plan.total));
	json_object_set_new(m, "checkpoint_bytes_written",
			    json_integer((json_int_t)st->train_bytes));
	json_object_set_new(m, "checkpoint_writing_ranks", json_integer(st->plan.writers));
	json_object_set_new(m, "checkpoint_write_bandwidth_MiB_per_second",
			    json_real(st->train_write_max_s > 0
					  ? (double)st->train_bytes / MIB / st->train_write_max_s
					  : 0));
	json_object_set_new(m, "checkpoint_write_seconds", json_real(st->train_write_max_s));
	json_object_set_new(m, "checkpoint_time_to_durable_seconds",
			    json_real(st->ntrain ? st->train_durable_s / st->ntrain : 0));
	ckpt_namespace_json(m, st->nst->meta_ops, st->nst->meta_ns, st->nst->syncs,
			    st->nst->sync_ns);
	json_object_set_new(m, "checkpoint_blocked_seconds", json_real(st->train_block_s));
	json_object_set_new(m, "checkpoint_training_steps_lost", json_real(st->train_steps_lost));
	json_object_set_new(m, "checkpoint_delete_seconds", json_real(st->train_delete_s));
	if (async) {
		json_object_set_new(m, "checkpoint_staging_seconds",
				    json_real(st->train_staging_s));
		json_object_set_new(m, "checkpoint_wait_seconds", json_real(st->train_wait_s));
		json_object_set_new(m, "checkpoint_end_wait_seconds", json_real(st->train_end_s));
	}
	json_object_set_new(summary, "checkpoint",
			    json_pack("{s:s, s:I, s:I, s:i, s:s, s:I, s:I}", "mode",
				      async ? "async" : "blocking", "every_epochs",
				      (json_int_t)run->cfg.checkpoint.every_epochs, "every_steps",
				      (json_int_t)run->cfg.checkpoint.every_steps, "writing_ranks",
				      st->plan.writers, "folder", st->folder, "total_bytes",
				      (json_int_t)st->plan.total, "saves", (json_int_t)st->nsaves));
}

void checkpoint_train_finish(struct run *run)
{
	ckpt_finish(run, 0);
}

const struct workload_ops checkpoint_workload = {
    .version = WORKLOAD_OPS_VERSION,
    .name = "checkpoint",
    .help = "model checkpoints (DCP or one shared file): write to durable, restore, verify; "
	    "MiB/s, time to durable, per-rank skew",
    .caps = 0,
    .check = checkpoint_check,
    .prepare = ckpt_prepare,
    .run = ckpt_rep,
    .write = ckpt_write,
    .free_rep = ckpt_free_rep,
    .finish = ckpt_finish,
};
