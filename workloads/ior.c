/* IOR-style write then read phases ([workload] type = ior), so feedbench's numbers sit beside
 * IOR's on the same pattern.
 *
 * Pattern (IOR's): [ior] segments, each holding one block_size block of every rank, moved in
 * transfer_size calls. One shared file (offset of rank r's block in segment s:
 * (s * nranks + r) * block_size) or one file per rank (file_per_process: s * block_size).
 * random: the transfers of each block in a seeded random order (IOR -z). The write phase
 * creates the files (the requested layout applied at creation), writes, fsyncs when asked (IOR
 * -e, inside the timed write) and closes; the read phase reopens and reads back what the rank
 * `shift` places over wrote (IOR -C: shift = ranks per node, so another node's data; on one
 * node the next rank's). Every byte read is checked against the seeded pattern (verify; ior_stamp),
 * the time of the check taken out of the phase. With [storage.mpiio] collective = true (shared file
 * only; a back-end with collective transfers, mpiio) every transfer is one io_pwrite_all /
 * io_pread_all that all ranks join (mpiio: MPI_File_write_at_all / read_at_all of any size,
 * IOR -a MPIIO -c), so the MPI library may aggregate them. On objects (s3) the shared file is
 * one object every rank creates together (io_create with STORAGE_O_SHARED: one multipart
 * upload, each block whole parts of [storage.s3] part_size; ior_check_object refuses other
 * geometries).
 *
 * Timing as IOR's (ior.c, ReduceIterResults): per phase and rank, from a start barrier
 * (CLOCK_MONOTONIC), the open, the transfers (wr/rd; -e's fsync at their end, inside them, as
 * IOR's WriteOrRead does) and the close; each column is the earliest start to the latest stop
 * over ranks, total the first open to the last close. bw = bytes of all ranks / total; IOPS =
 * calls / wr/rd; latency = the mean time of one call (IOR's own, a rank's wr/rd time over its
 * calls, least over ranks: ior_latency_seconds). The slowest rank's own times are kept too
 * (slowest_rank_*_seconds). Columns as IOR prints them.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <mpi.h>

#include "../bench/agree.h"
#include "../bench/outputs.h"
#include "../bench/results.h"
#include "../bench/rng.h"
#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "../bench/timer.h"
#include "workload.h"

#define MIB	    1048576.0
#define IOR_ALIGN   4096
#define IOR_FILE    "ior_testfile"
#define IOR_NPHASES 2

enum { IOR_WRITE, IOR_READ };
static const char *const ior_phase_names[IOR_NPHASES] = {"write", "read"};

/* IOR's timers of one phase, from the phase's start barrier, verification time taken out:
 * open, transfers (the fsync of -e at their end, as IOR's WriteOrRead does it), close. */
enum { T_OPEN0, T_OPEN1, T_XFER0, T_XFER1, T_CLOSE0, T_CLOSE1, T_N };

/* One phase of one rank. */
struct ior_phase {
	bool done;
	double open_s, xfer_s, close_s, total_s;
	double stamp[T_N];
	struct io_stats io;
	uint64_t pairs; /* transfers this rank made (write: what every rank holds after it) */
	/* [ior] stonewall (write phase): this rank's transfers at the stonewall, the fewest and
	 * the most of any rank, and when it stopped (s from the phase's start) */
	uint64_t pairs_stop, pairs_stop_min, pairs_stop_max;
	double stonewall_s;
};

struct ior_rep {
	struct ior_phase ph[IOR_NPHASES];
};

/* One shared object (S3): a multipart upload whose part n holds bytes [(n-1) * part_size,
 * n * part_size), each part written whole by one rank. A geometry whose blocks are not whole
 * parts, that needs more than S3's 10 000 parts, or that a stonewall cuts short (a hole) is
 * refused. */
static int ior_check_object(const struct config *cfg, int nranks, struct fb_errbuf *err)
{
	const char *src = cfg->source;
	uint64_t b = cfg->ior.block_size, ps = cfg->s3.part_size;
	uint64_t parts = b / ps * (uint64_t)cfg->ior.segments * (uint64_t)nranks;

	if (!storage_is_object(cfg))
		return 0;
	/* An object of its own is one PUT (or an in-order multipart upload) sent front to back;
	 * only the shared object's parts, each kept whole until sent, take transfers in any
	 * order. */
	if (cfg->ior.file_per_process && cfg->ior.random && cfg->ior.write)
		return fb_fail(
		    err, -FB_ECONFIG,
		    "%s: [ior] random = true writes each block's transfers out of order, "
		    "and an object of its own (file_per_process = true) is written front "
		    "to back: set random = false, or file_per_process = false (the shared "
		    "object's parts take transfers in any order)",
		    src);
	if (cfg->ior.file_per_process)
		return 0;
	if (b % ps)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: one shared object is written as a multipart upload whose parts "
			       "of [storage.s3] part_size (%" PRIu64 " bytes) are each written by "
			       "one rank, and S3 parts are at least 5 MiB but the last: [ior] "
			       "block_size (%" PRIu64 ") must be a multiple of part_size (or set "
			       "file_per_process = true)",
			       src, ps, b);
	if (parts > 10000)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: the shared object would be %" PRIu64 " parts of %" PRIu64
			       " bytes; S3 allows at most 10000: raise [storage.s3] part_size",
			       src, parts, ps);
	if (cfg->ior.stonewall > 0)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [ior] stonewall stops ranks inside their parts of the shared "
			       "object, which would leave holes in it: set file_per_process = true",
			       src);
	return 0;
}

static int ior_check(const struct config *cfg, int nranks, struct fb_errbuf *err)
{
	const char *src = cfg->source;
	uint64_t b = cfg->ior.block_size, t = cfg->ior.transfer_size;
	int rc;

	if (t > b || b % t)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [ior] transfer_size (%" PRIu64
			       ") must divide block_size (%" PRIu64 ")",
			       src, t, b);
	if (!cfg->ior.write && !cfg->ior.read)
		return fb_fail(err, -FB_ECONFIG, "%s: [ior] write and read are both false", src);
	if (!cfg->ior.write && !cfg->ior.keep_files)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [ior] read without write reads the files of an earlier run "
			       "with keep_files = true; set keep_files = true here too",
			       src);
	if (cfg->storage.direct && (t % IOR_ALIGN || b % IOR_ALIGN))
		return fb_fail(err, -FB_ECONFIG,
			       "%s: direct = true needs [ior] block_size and transfer_size to be "
			       "multiples of %d",
			       src, IOR_ALIGN);
	rc = cfg_check_collective(cfg, err);
	if (rc < 0)
		return rc;
	if (cfg->mpiio.collective && cfg->ior.file_per_process)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [storage.mpiio] collective = true moves the transfers of one "
			       "shared file; set [ior] file_per_process = false",
			       src);
	if (cfg->ior.stonewall > 0 && cfg->mpiio.collective)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [ior] stonewall stops each rank on its own clock; collective "
			       "transfers need every rank in every call: set [storage.mpiio] "
			       "collective = false",
			       src);
	if ((rc = ior_check_object(cfg, nranks, err)) < 0)
		return rc;
	if (cfg->storage.backend == BACKEND_NULL && cfg->ior.verify && cfg->ior.read)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: backend = null stores nothing: set [ior] verify = false", src);
	return 0;
}

static void ior_path(const struct run *run, int owner, char *buf, size_t len)
{
	if (run->cfg.ior.file_per_process)
		snprintf(buf, len, "%s/%s.%08d", run->cfg.dataset.data_dir, IOR_FILE, owner);
	else
		snprintf(buf, len, "%s/%s", run->cfg.dataset.data_dir, IOR_FILE);
}

/* Offset of transfer k of segment s of rank owner's data. */
static uint64_t ior_offset(const struct run *run, int owner, int64_t s, uint64_t k)
{
	const struct config *cfg = &run->cfg;
	uint64_t b = cfg->ior.block_size, t = cfg->ior.transfer_size;
	uint64_t blk = cfg->ior.file_per_process
			   ? (uint64_t)s
			   : (uint64_t)s * (uint64_t)run->nranks + (uint64_t)owner;

	return blk * b + k * t;
}

/* The rank whose data this rank reads back (IOR -C). */
static int ior_partner(const struct run *run)
{
	int shift = run->nnodes > 1 ? run->local_size : 1;

	if (!run->cfg.ior.reorder || run->nranks == 1)
		return run->rank;
	return (run->rank + shift) % run->nranks;
}

/* Owner's data, byte o of its file(s): the first 8 bytes of every IOR_PAGE-aligned page are a
 * stamp, a word seeded by owner and the page's number; every other byte is byte o % IOR_PAGE
 * of a page of words seeded by owner. The page pattern is made once per phase (ior_pattern);
 * a transfer then only stamps its pages (ior_stamp), a store per 4 KiB, as IOR's -l o stamps
 * a word per 4 KiB: no per-byte work between the transfers, whose gaps would let the other
 * ranks' I/O run uncontended. A misplaced page shows in its stamp, another rank's data or a
 * hole anywhere. */
#define IOR_PAGE 4096

/* The owner's page pattern repeated over len bytes (len a multiple of IOR_PAGE). */
static void ior_pattern(const struct run *run, int owner, unsigned char *pat, size_t len)
{
	uint64_t seed = (uint64_t)run->cfg.dataset.seed;

	for (size_t i = 0; i < IOR_PAGE; i += 8) {
		uint64_t w = rng_mix3(seed, (uint64_t)owner, i / 8);
		memcpy(pat + i, &w, 8);
	}
	for (size_t i = IOR_PAGE; i < len; i += IOR_PAGE)
		memcpy(pat + i, pat, IOR_PAGE);
}

/* The bytes of [off, off + len) at p = pat + off % IOR_PAGE: stamps the pages that start
 * inside the range (on), or puts the page pattern back there (off). */
static void ior_stamp(const struct run *run, int owner, unsigned char *pat, uint64_t off,
		      size_t len, bool on)
{
	uint64_t seed = (uint64_t)run->cfg.dataset.seed ^ 0x5374616d70ull;
	unsigned char *p = pat + off % IOR_PAGE;
	uint64_t a = (off + IOR_PAGE - 1) / IOR_PAGE * IOR_PAGE;

	for (; a < off + len; a += IOR_PAGE) {
		uint64_t w = rng_mix3(seed, (uint64_t)owner, a / IOR_PAGE);
		size_t n = off + len - a < 8 ? (size_t)(off + len - a) : 8;
		memcpy(p + (a - off), on ? (const void *)&w : (const void *)pat, n);
	}
}

static int ior_verify(struct run *run, const char *path, int owner, uint64_t off,
		      const unsigned char *buf, unsigned char *pat, size_t len)
{
	const unsigned char *want = pat + off % IOR_PAGE;
	size_t i = 0;

	ior_stamp(run, owner, pat, off, len, true);
	if (memcmp(buf, want, len) != 0) {
		while (i < len && buf[i] == want[i])
			i++;
	} else {
		i = len;
	}
	unsigned char w = i < len ? want[i] : 0;
	ior_stamp(run, owner, pat, off, len, false);
	if (i == len)
		return 0;
	return run_fail(run, -FB_EVERIFY,
			"'%s' byte at offset %" PRIu64 " is 0x%02x, rank %d wrote 0x%02x there",
			path, off + i, buf[i], owner, w);
}

/* Transfer order of a block: in order, or a seeded permutation (Fisher-Yates). */
static void ior_order(const struct run *run, int owner, int64_t s, uint64_t *ord, uint64_t n)
{
	for (uint64_t k = 0; k < n; k++)
		ord[k] = k;
	if (!run->cfg.ior.random)
		return;
	uint64_t st =
	    rng_mix3((uint64_t)run->cfg.dataset.seed ^ 0x10f, (uint64_t)owner, (uint64_t)s);
	for (uint64_t k = n - 1; k > 0; k--) {
		uint64_t j = rng_below(&st, k + 1), x = ord[k];
		ord[k] = ord[j];
		ord[j] = x;
	}
}

/* Opens the file of a phase. A shared file is created by rank 0 (or by every rank together
 * through a back-end that opens shared files collectively) before the others open it. */
static int ior_open(struct run *run, struct io *io, int phase, const char *path, struct sfile **f)
{
	bool shared = !run->cfg.ior.file_per_process;
	/* Only a back-end that opens shared files collectively (MPI-IO, or one wrapping it for
	 * collective transfers) may create the file on every rank; STORAGE_CAP_SHARED says a file
	 * can be shared, not how it is opened. With posix every rank creating it would truncate
	 * what a faster rank already wrote. */
	bool collective =
	    shared && ((run->storage->caps & STORAGE_CAP_COLLECTIVE) || run->cfg.mpiio.collective);
	/* One object is created by every rank together too (s3: rank 0 starts the multipart
	 * upload the ranks send their parts to); it is read like a file. */
	bool object = shared && (run->storage->caps & STORAGE_CAP_OBJECT);
	int rc = 0;

	if (phase == IOR_READ)
		return io_open(io, f, path, STORAGE_O_READ | (collective ? STORAGE_O_SHARED : 0));
	if (!shared || collective || object)
		return io_create(io, f, path, collective || object ? STORAGE_O_SHARED : 0);
	if (run->rank == 0)
		rc = io_create(io, f, path, 0);
	if ((rc = agree(run, rc)) < 0)
		return rc;
	if (run->rank != 0)
		rc = io_open(io, f, path, STORAGE_O_WRITE | STORAGE_O_NOTRUNC);
	return rc;
}

/* One transfer of a phase: collective (io_pwrite_all / io_pread_all, which every rank joins)
 * or independent. */
static int ior_xfer(struct io *io, struct sfile *f, int phase, bool coll, void *buf, size_t len,
		    uint64_t off)
{
	if (phase == IOR_WRITE)
		return coll ? io_pwrite_all(io, f, buf, len, off) : io_pwrite(io, f, buf, len, off);
	return coll ? io_pread_all(io, f, buf, len, off) : io_pread(io, f, buf, len, off);
}

/* One phase's transfers in IOR's order: pair p is transfer p % n of segment p / n. */
struct ior_moves {
	struct run *run;
	struct io *io;
	struct sfile *f;
	int phase, owner;
	bool coll;
	const char *path;
	unsigned char *buf, *pat; /* read buffer; owner's pattern (ior_pattern) */
	uint64_t *ord, n, t;
	int64_t seg;	    /* the segment ord holds (-1: none yet) */
	uint64_t verify_ns; /* checking read data: taken out of the phase's time */
	uint64_t pairs;	    /* transfers made */
};

/* Moves pairs up to `to`; with a deadline (ns, 0: none) stops after the first transfer that ends
 * past it (IOR's stonewall). */
static int ior_move(struct ior_moves *m, uint64_t to, uint64_t deadline, int rc)
{
	const struct config *cfg = &m->run->cfg;

	for (; (rc == 0 || m->coll) && m->pairs < to; m->pairs++) {
		int64_t s = (int64_t)(m->pairs / m->n);
		if (s != m->seg)
			ior_order(m->run, m->owner, m->seg = s, m->ord, m->n);
		uint64_t off = ior_offset(m->run, m->owner, s, m->ord[m->pairs % m->n]);
		/* Collective transfers: every rank makes the same calls, so a rank that already
		 * failed keeps joining with nothing to move until the phase ends and the failure
		 * is agreed. */
		if (m->coll && rc != 0) {
			(void)ior_xfer(m->io, m->f, m->phase, m->coll, m->buf, 0, off);
			continue;
		}
		if (m->phase == IOR_WRITE) { /* the stamps are inside the clock, as IOR's refill */
			ior_stamp(m->run, m->owner, m->pat, off, m->t, true);
			rc = ior_xfer(m->io, m->f, m->phase, m->coll, m->pat + off % IOR_PAGE, m->t,
				      off);
			ior_stamp(m->run, m->owner, m->pat, off, m->t, false);
		} else {
			rc = ior_xfer(m->io, m->f, m->phase, m->coll, m->buf, m->t, off);
		}
		if (m->phase == IOR_READ && rc == 0 && cfg->ior.verify) {
			uint64_t v0 = timer_now_ns();
			rc = ior_verify(m->run, m->path, m->owner, off, m->buf, m->pat, m->t);
			m->verify_ns += timer_now_ns() - v0;
		}
		if (deadline && rc == 0 && timer_now_ns() >= deadline) {
			m->pairs++;
			break;
		}
	}
	return rc;
}

/* The write phase with a stonewall: each rank stops at the deadline; then they agree on the
 * fewest and the most transfers any rank made (every rank, even after a failure: a
 * collective), and with wear-out every rank writes up to the most. out->pairs: what every
 * rank then holds (wear-out: the most; else the fewest, what the read phase reads back). */
static int ior_stonewall(struct ior_moves *m, uint64_t t0, struct ior_phase *out, int rc)
{
	const struct config *cfg = &m->run->cfg;
	uint64_t all = m->n * (uint64_t)cfg->ior.segments;
	struct {
		long long neg_min, max, failed;
	} in, got;

	rc = ior_move(m, all, t0 + (uint64_t)(cfg->ior.stonewall * 1e9), rc);
	out->stonewall_s = timer_ns_to_s(timer_now_ns() - t0);
	in.neg_min = -(long long)m->pairs;
	in.max = (long long)m->pairs;
	in.failed = rc < 0;
	agree_allreduce(m->run, &in, &got, 3, MPI_LONG_LONG, MPI_MAX);
	out->pairs_stop = m->pairs;
	out->pairs_stop_min = (uint64_t)-got.neg_min;
	out->pairs_stop_max = (uint64_t)got.max;
	if (got.failed)
		return rc < 0 ? rc
			      : run_fail(m->run, -FB_EPEER, "stopped because another rank failed");
	if (cfg->ior.stonewall_wear_out)
		rc = ior_move(m, out->pairs_stop_max, 0, rc);
	out->pairs = cfg->ior.stonewall_wear_out ? out->pairs_stop_max : out->pairs_stop_min;
	return rc;
}

/* limit: the transfers to read back (the write phase's pairs; all without a stonewall). */
static int ior_phase(struct run *run, int phase, uint64_t limit, struct ior_phase *out)
{
	const struct config *cfg = &run->cfg;
	uint64_t t = cfg->ior.transfer_size, n = cfg->ior.block_size / t;
	int owner = phase == IOR_READ ? ior_partner(run) : run->rank;
	struct io io = {.run = run, .stats = &out->io, .direct = cfg->storage.direct};
	unsigned char *buf = NULL, *pat = NULL;
	size_t patlen = (t + 2 * IOR_PAGE - 1) / IOR_PAGE * IOR_PAGE; /* t from any page offset */
	uint64_t *ord = calloc(n, sizeof(*ord));
	char path[CFG_PATH_MAX + 64];
	struct sfile *f = NULL;
	int rc = 0;

	io_stats_reset(&out->io);
	if (!ord || posix_memalign((void **)&buf, IOR_ALIGN, t) ||
	    posix_memalign((void **)&pat, IOR_ALIGN, patlen))
		rc = run_fail(run, -ENOMEM, "out of memory for a %" PRIu64 "-byte transfer", t);
	else
		ior_pattern(run, owner, pat, patlen);
	/* The phase starts together (IOR's barrier), and a rank that could not allocate stops
	 * every rank there rather than leaving them in a barrier it never reaches. */
	if ((rc = agree(run, rc)) < 0)
		goto out_free;
	ior_path(run, owner, path, sizeof(path));
	uint64_t t0 = timer_now_ns();
	run_phase_began(run, t0);
	rc = ior_open(run, &io, phase, path, &f);
	uint64_t t1 = timer_now_ns();
	/* Collective transfers: every rank joins every call; a failed open fails all alike
	 * (the shared open is collective), so the loop runs on every rank or on none. */
	struct ior_moves m = {run,  &io, f,   phase, owner, cfg->mpiio.collective && f,
			      path, buf, pat, ord,   n,	    t,
			      -1,   0,	 0};
	if (phase == IOR_WRITE && cfg->ior.stonewall > 0)
		rc = ior_stonewall(&m, t0, out, rc);
	else
		rc = ior_move(&m, limit, 0, rc);
	if (!(phase == IOR_WRITE && cfg->ior.stonewall > 0))
		out->pairs = m.pairs;
	/* The sync of a handle shared collectively (MPI-IO) is a collective call: a rank that
	 * failed still makes it, or the others would wait in it forever. */
	bool shared_handle = f && (((struct sfile_base *)f)->flags & STORAGE_O_SHARED);
	if (phase == IOR_WRITE && cfg->ior.fsync && f && (rc == 0 || shared_handle)) {
		int src = io_sync(&io, f);
		rc = rc ? rc : src;
	}
	uint64_t t2 = timer_now_ns();
	int crc = f ? io_close(&io, f) : 0;
	rc = rc ? rc : crc;
	uint64_t t3 = timer_now_ns();
	out->open_s = timer_ns_to_s(t1 - t0);
	out->xfer_s = timer_ns_to_s(t2 - t1 - m.verify_ns);
	out->close_s = timer_ns_to_s(t3 - t2);
	out->total_s = timer_ns_to_s(t3 - t0 - m.verify_ns);
	double st[T_N] = {0,
			  out->open_s,
			  out->open_s,
			  out->open_s + out->xfer_s,
			  out->open_s + out->xfer_s,
			  out->total_s};
	memcpy(out->stamp, st, sizeof(st));
	out->done = rc == 0;
	rc = agree(run, rc);
out_free:
	free(ord);
	free(buf);
	free(pat);
	return rc;
}

static int ior_rep(struct run *run, int repetition, void **out)
{
	struct ior_rep *rep = calloc(1, sizeof(*rep));
	int rc = 0;

	if (!rep)
		return agree(run, run_fail(run, -ENOMEM, "out of memory"));
	*out = rep;
	if (run->rank == 0 && repetition == 0) {
		struct io io = {.run = run};
		rc = io_mkdirs(&io, run->cfg.dataset.data_dir, 0755);
	}
	if ((rc = agree(run, rc)) < 0)
		return rc;
	uint64_t all =
	    run->cfg.ior.block_size / run->cfg.ior.transfer_size * (uint64_t)run->cfg.ior.segments;
	if (run->cfg.ior.write && (rc = ior_phase(run, IOR_WRITE, all, &rep->ph[IOR_WRITE])) < 0)
		return rc;
	/* The read phase reads back what every rank holds (a stonewall may have cut it short). */
	uint64_t back = run->cfg.ior.write ? rep->ph[IOR_WRITE].pairs : all;
	if (run->cfg.ior.read && (rc = ior_phase(run, IOR_READ, back, &rep->ph[IOR_READ])) < 0)
		return rc;
	return 0;
}

/* ---- results ------------------------------------------------------------------------------ */

/* One phase of one repetition over all ranks (rank 0's view). */
struct ior_total {
	double open_s, xfer_s, close_s, total_s; /* IOR's: first start to last stop over ranks */
	double slow[4];				 /* the slowest rank's open, wr/rd, close, total */
	double ior_lat_s; /* IOR's latency: a rank's wr/rd time over its calls, the least */
	double bytes, calls, lat_sum_s; /* summed over ranks */
	struct hist lat;
};

/* IOR's ReduceIterResults: each timer's earliest start and latest stop over ranks. */
static void ior_spans(struct run *run, const struct ior_phase *p, struct ior_total *t)
{
	double start[T_N / 2], stop[T_N / 2], rstart[T_N / 2], rstop[T_N / 2];
	double lat =
	    p->io.wops + p->io.ops ? p->xfer_s / (double)(p->io.wops + p->io.ops) : INFINITY;

	for (int i = 0; i < T_N / 2; i++) {
		start[i] = p->stamp[2 * i];
		stop[i] = p->stamp[2 * i + 1];
	}
	MPI_Reduce(start, rstart, T_N / 2, MPI_DOUBLE, MPI_MIN, 0, run->comm);
	MPI_Reduce(stop, rstop, T_N / 2, MPI_DOUBLE, MPI_MAX, 0, run->comm);
	MPI_Reduce(&lat, &t->ior_lat_s, 1, MPI_DOUBLE, MPI_MIN, 0, run->comm);
	t->open_s = rstop[0] - rstart[0];
	t->xfer_s = rstop[1] - rstart[1];
	t->close_s = rstop[2] - rstart[2];
	t->total_s = rstop[2] - rstart[0];
}

static void ior_reduce(struct run *run, const struct ior_phase *p, struct ior_total *t)
{
	double mx[4] = {p->open_s, p->xfer_s, p->close_s, p->total_s}, rmx[4];
	const struct hist *h = p->io.wops ? &p->io.wlatency : &p->io.latency;
	double sum[3] = {(double)(p->io.wbytes + p->io.bytes), (double)(p->io.wops + p->io.ops),
			 h->sum_ns / 1e9},
	       rsum[3];

	MPI_Reduce(mx, rmx, 4, MPI_DOUBLE, MPI_MAX, 0, run->comm);
	MPI_Reduce(sum, rsum, 3, MPI_DOUBLE, MPI_SUM, 0, run->comm);
	hist_reset(&t->lat);
	MPI_Reduce(h->bucket, t->lat.bucket, HIST_BUCKETS, MPI_UINT64_T, MPI_SUM, 0, run->comm);
	MPI_Reduce(&h->count, &t->lat.count, 1, MPI_UINT64_T, MPI_SUM, 0, run->comm);
	MPI_Reduce(&h->sum_ns, &t->lat.sum_ns, 1, MPI_UINT64_T, MPI_SUM, 0, run->comm);
	MPI_Reduce(&h->max_ns, &t->lat.max_ns, 1, MPI_UINT64_T, MPI_MAX, 0, run->comm);
	memcpy(t->slow, rmx, sizeof(t->slow));
	ior_spans(run, p, t);
	t->bytes = rsum[0];
	t->calls = rsum[1];
	t->lat_sum_s = rsum[2];
}

static json_t *ior_row(const struct config *cfg, const char *access, int iter,
		       const struct ior_total *t)
{
	json_t *o = json_object();
	double bw = t->total_s > 0 ? t->bytes / MIB / t->total_s : NAN;

	json_object_set_new(o, "access", json_string(access));
	json_object_set_new(o, "iteration", json_integer(iter));
	json_object_set_new(o, "bw_MiB_per_second", json_real(bw));
	json_object_set_new(o, "iops", json_real(t->xfer_s > 0 ? t->calls / t->xfer_s : NAN));
	json_object_set_new(o, "latency_seconds",
			    json_real(t->calls > 0 ? t->lat_sum_s / t->calls : NAN));
	json_object_set_new(o, "block_KiB", json_real((double)cfg->ior.block_size / 1024));
	json_object_set_new(o, "xfer_KiB", json_real((double)cfg->ior.transfer_size / 1024));
	json_object_set_new(o, "open_seconds", json_real(t->open_s));
	json_object_set_new(o, "wr_rd_seconds", json_real(t->xfer_s));
	json_object_set_new(o, "close_seconds", json_real(t->close_s));
	json_object_set_new(o, "total_seconds", json_real(t->total_s));
	static const char *const slow[4] = {"open", "wr_rd", "close", "total"};
	for (int i = 0; i < 4; i++) {
		char key[48];
		snprintf(key, sizeof(key), "slowest_rank_%s_seconds", slow[i]);
		json_object_set_new(o, key, json_real(t->slow[i]));
	}
	json_object_set_new(o, "ior_latency_seconds",
			    json_real(isfinite(t->ior_lat_s) ? t->ior_lat_s : NAN));
	json_object_set_new(o, "bytes", json_integer((json_int_t)t->bytes));
	json_object_set_new(o, "calls", json_integer((json_int_t)t->calls));
	json_object_set_new(o, "latency_p50_seconds", json_real(hist_quantile(&t->lat, 0.50)));
	json_object_set_new(o, "latency_p99_seconds", json_real(hist_quantile(&t->lat, 0.99)));
	return o;
}

/* A write phase cut by [ior] stonewall: when each rank stopped and what it then wrote, bytes
 * written by every rank (gathered: every rank calls this). NULL on ranks other than 0. */
static json_t *ior_stonewall_json(struct run *run, const struct ior_phase *p)
{
	const struct config *cfg = &run->cfg;
	double mine[2] = {(double)p->io.wbytes, p->stonewall_s}, *all = NULL;
	json_t *o = NULL, *bytes, *secs;

	if (run->rank == 0)
		all = calloc((size_t)run->nranks * 2, sizeof(double));
	MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, run->comm);
	if (!all)
		return NULL;
	bytes = json_array();
	secs = json_array();
	for (int r = 0; r < run->nranks; r++) {
		json_array_append_new(bytes, json_integer((json_int_t)all[2 * r]));
		json_array_append_new(secs, json_real(all[2 * r + 1]));
	}
	o = json_pack("{s:f, s:b, s:I, s:I, s:I, s:I, s:o, s:o}", "seconds", cfg->ior.stonewall,
		      "wear_out", cfg->ior.stonewall_wear_out, "transfers_at_stop_min",
		      (json_int_t)p->pairs_stop_min, "transfers_at_stop_max",
		      (json_int_t)p->pairs_stop_max, "transfers_per_rank", (json_int_t)p->pairs,
		      "bytes_per_rank", (json_int_t)(p->pairs * cfg->ior.transfer_size),
		      "rank_bytes_written", bytes, "rank_stop_seconds", secs);
	free(all);
	return o;
}

/* summary.json "ior": the pattern as run (the results rows are added by ior_write). */
static json_t *ior_info_json(const struct run *run)
{
	const struct config *cfg = &run->cfg;
	json_t *ior = json_object();

	json_object_set_new(ior, "segments", json_integer(cfg->ior.segments));
	json_object_set_new(ior, "block_size_bytes", json_integer((json_int_t)cfg->ior.block_size));
	json_object_set_new(ior, "transfer_size_bytes",
			    json_integer((json_int_t)cfg->ior.transfer_size));
	json_object_set_new(ior, "file_per_process", json_boolean(cfg->ior.file_per_process));
	json_object_set_new(ior, "files",
			    json_integer(cfg->ior.file_per_process ? run->nranks : 1));
	json_object_set_new(ior, "random", json_boolean(cfg->ior.random));
	json_object_set_new(ior, "reorder_shift",
			    json_integer(cfg->ior.reorder && run->nranks > 1
					     ? (run->nnodes > 1 ? run->local_size : 1)
					     : 0));
	json_object_set_new(ior, "fsync", json_boolean(cfg->ior.fsync));
	json_object_set_new(ior, "transfers",
			    json_string(cfg->mpiio.collective ? "collective" : "independent"));
	return ior;
}

static int ior_write(struct run *run, void *const *reps, int nreps, const struct results_ctx *ctx,
		     const char *final_dir, bool quiet)
{
	const struct config *cfg = &run->cfg;
	json_t *s = run->rank == 0 ? json_object() : NULL, *rows = json_array(), *rj = json_array();
	double wsum[IOR_NPHASES] = {0}, bytes[IOR_NPHASES] = {0};
	int rc;

	for (int r = 0; r < nreps; r++) {
		const struct ior_rep *rep = reps[r];
		json_t *one = json_object();
		for (int ph = 0; ph < IOR_NPHASES; ph++) {
			if (!(ph == IOR_WRITE ? cfg->ior.write : cfg->ior.read))
				continue;
			struct ior_total t;
			ior_reduce(run, &rep->ph[ph], &t);
			json_t *row = ior_row(cfg, ior_phase_names[ph], r, &t);
			bytes[ph] += t.bytes;
			wsum[ph] += t.total_s;
			/* the metric table's columns: the read phase's when there is one */
			if (ph == IOR_READ || !cfg->ior.read) {
				json_object_set(one, "bandwidth_MiB_per_second",
						json_object_get(row, "bw_MiB_per_second"));
				json_object_set(one, "iops", json_object_get(row, "iops"));
				json_object_set(one, "latency_p50_seconds",
						json_object_get(row, "latency_p50_seconds"));
				json_object_set(one, "latency_p99_seconds",
						json_object_get(row, "latency_p99_seconds"));
			}
			char key[64];
			snprintf(key, sizeof(key), "%s_bandwidth_MiB_per_second",
				 ior_phase_names[ph]);
			json_object_set(one, key, json_object_get(row, "bw_MiB_per_second"));
			json_array_append_new(rows, row);
		}
		if (cfg->ior.write && cfg->ior.stonewall > 0) {
			json_t *sw = ior_stonewall_json(run, &rep->ph[IOR_WRITE]);
			if (sw)
				json_object_set_new(one, "stonewall", sw);
		}
		json_object_set_new(one, "repetition", json_integer(r + 1));
		json_array_append_new(rj, one);
	}
	if (run->rank != 0) {
		json_decref(rows);
		json_decref(rj);
		return outputs_write_folder(run, NULL, ctx, final_dir, quiet);
	}
	results_summary_head(run, ctx, s);
	json_object_set_new(s, "storage", results_storage_json(run));
	json_t *m = json_object(), *ior = ior_info_json(run);
	for (int ph = 0; ph < IOR_NPHASES; ph++) {
		char key[80];
		if (wsum[ph] <= 0)
			continue;
		snprintf(key, sizeof(key), "ior_%s_bandwidth_MiB_per_second", ior_phase_names[ph]);
		json_object_set_new(m, key, json_real(bytes[ph] / MIB / wsum[ph]));
		snprintf(key, sizeof(key), "ior_bytes_%s", ph == IOR_WRITE ? "written" : "read");
		json_object_set_new(m, key, json_integer((json_int_t)bytes[ph]));
	}
	json_object_set_new(s, "metric", m);
	json_object_set_new(ior, "results", rows);
	json_object_set_new(s, "ior", ior);
	json_object_set_new(s, "repetitions", rj);
	json_object_set_new(s, "verdict", json_string("measured"));

	rc = outputs_write_folder(run, s, ctx, final_dir, quiet);
	json_decref(s);
	return rc;
}

static void ior_free_rep(void *rep)
{
	free(rep);
}

static void ior_finish(struct run *run, int rc)
{
	struct io io = {.run = run};
	char path[CFG_PATH_MAX + 64];

	if (rc != 0 || run->cfg.ior.keep_files || !run->cfg.ior.write)
		return;
	if (run->cfg.ior.file_per_process) {
		ior_path(run, run->rank, path, sizeof(path));
		io_unlink(&io, path, true);
	} else if (run->rank == 0) {
		ior_path(run, 0, path, sizeof(path));
		io_unlink(&io, path, true);
	}
}

/* ---- outputs ---------------------------------------------------------------------------- */

/* IOR's own columns and number formats (ior -o ... prints the same table). */
static const struct out_col ior_cols[] = {{"access", "{access:%-5s}", true},
					  {"bw(MiB/s)", "{bw_MiB_per_second:%10.2f}", false},
					  {"IOPS", "{iops:%10.1f}", false},
					  {"Latency(s)", "{latency_seconds:%10.6f}", false},
					  {"block(KiB)", "{block_KiB:%10.2f}", false},
					  {"xfer(KiB)", "{xfer_KiB:%9.2f}", false},
					  {"open(s)", "{open_seconds:%8.5f}", false},
					  {"wr/rd(s)", "{wr_rd_seconds:%8.5f}", false},
					  {"close(s)", "{close_seconds:%8.5f}", false},
					  {"total(s)", "{total_seconds:%8.5f}", false},
					  {"iter", "{iteration:%4d}", false},
					  {NULL, NULL, false}};

static const struct out_col ior_csv_cols[] = {
    {"access", "{access}", true},
    {"bw_MiB_per_second", "{bw_MiB_per_second:%.6g}", false},
    {"iops", "{iops:%.6g}", false},
    {"latency_seconds", "{latency_seconds:%.6g}", false},
    {"block_KiB", "{block_KiB:%.6g}", false},
    {"xfer_KiB", "{xfer_KiB:%.6g}", false},
    {"open_seconds", "{open_seconds:%.6g}", false},
    {"wr_rd_seconds", "{wr_rd_seconds:%.6g}", false},
    {"close_seconds", "{close_seconds:%.6g}", false},
    {"total_seconds", "{total_seconds:%.6g}", false},
    {"iteration", "{iteration:%d}", false},
    {"bytes", "{bytes:%d}", false},
    {NULL, NULL, false}};

#define IOR_LEAD                                                                                   \
	"{num_ranks} rank{num_ranks=1?|s}, {ior.file_per_process?file per process|one shared "     \
	"file}, {storage.backend}, block {ior.block_size_bytes} bytes, transfer "                  \
	"{ior.transfer_size_bytes} bytes, {ior.segments} segment{ior.segments=1?|s}{ior.random?, " \
	"random offsets|}{ior.transfers=collective?, collective transfers|}"

static const struct out_block ior_table[] = {{.text = "\nIOR-style results: " IOR_LEAD "\n\n"},
					     {.rows = "ior.results", .cols = ior_cols},
					     {0}};

static const struct out_fact ior_facts[] = {
    {"write",
     "{metric.ior_write_bandwidth_MiB_per_second:%.2f} MiB/s, {metric.ior_bytes_written} bytes",
     "metric.ior_bytes_written"},
    {"read", "{metric.ior_read_bandwidth_MiB_per_second:%.2f} MiB/s, {metric.ior_bytes_read} bytes",
     "metric.ior_bytes_read"},
    {"files", "{ior.files} ({ior.file_per_process?file per process|one shared file})", NULL},
    {"access pattern",
     "{ior.segments} segment{ior.segments=1?|s} of a {ior.block_size_bytes}-byte block per rank, "
     "{ior.transfer_size_bytes}-byte transfers, {ior.random?random|sequential} offsets, "
     "{ior.transfers} transfers",
     NULL},
    {"read back", "each rank reads what the rank {ior.reorder_shift} places over wrote (IOR -C)",
     "ior.reorder_shift"},
    {"fsync", "{ior.fsync?after the write phase (inside its time)|none}", NULL},
    {NULL, NULL, NULL}};

static const struct out_block ior_report[] = {
    {.text = "IOR-style write and read phases: " IOR_LEAD ". ", .files = true},
    {.text = "## What ran\n\n", .facts = outputs_what_ran},
    {.text = "\n## Results\n\nBandwidth is the bytes of all ranks over the slowest rank's open "
	     "to close time (IOR's bw), over all repetitions; MiB = 2^20 bytes.\n\n",
     .facts = ior_facts},
    {.text = "\n### Per phase and iteration\n\nIOR's columns: bw and IOPS over total(s), Latency "
	     "the mean time per call, open, wr/rd and close the slowest rank's.\n\n",
     .rows = "ior.results",
     .cols = ior_cols},
    {.text = "\n"},
    {0}};

static const struct out_csv ior_csvs[] = {{"ior.csv", "ior.results", ior_csv_cols},
					  {NULL, NULL, NULL}};

static const struct workload_outputs ior_outputs = {ior_table, ior_report, ior_csvs};

const struct workload_ops ior_workload = {
    .version = WORKLOAD_OPS_VERSION,
    .name = "ior",
    .help = "IOR-style write then read phases: bw MiB/s, IOPS, latency, open/wr-rd/close times",
    .caps = 0,
    .check = ior_check,
    .run = ior_rep,
    .write = ior_write,
    .free_rep = ior_free_rep,
    .finish = ior_finish,
    .outputs = &ior_outputs,
};
