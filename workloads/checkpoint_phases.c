/* MLPerf Storage's checkpointing phases (`[checkpoint] num_checkpoints_write` and
 * `num_checkpoints_read`, docs/checkpoint.md): the write phase saves W checkpoints to durable,
 * then, with recovery_rank_shift, every rank measures how long until it can read the shard a
 * rank on another host wrote (DLIO's recovery_rank_shift: rank r reads rank (r + ranks per host)
 * mod ranks), then the page cache is flushed on every host (the flush rule and each host's
 * outcome recorded), then the read phase restores the first R checkpoints. W = 0 is a read-only
 * invocation of checkpoints an earlier write-only one (R = 0) left, with that invocation's
 * measured visibility read from <folder>/recovery.json.
 *
 * Figures as MLPerf Storage reports them: a checkpoint's duration is the longest rank's, its
 * throughput the checkpoint's bytes over that duration (DLIO gives every rank the whole
 * checkpoint's size over its own duration; the minimum over ranks is this); recovery adds the
 * time until another host could read the checkpoint to the read duration.
 */
#include "checkpoint_store.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../bench/agree.h"
#include "../bench/results.h"
#include "../bench/run.h"
#include "../bench/safefile.h"
#include "../bench/storage/storage.h"
#include "../bench/timer.h"
#include "../bench/util.h"

#define GIB		 1073741824.0
#define FLUSH_RAM_FACTOR 3.0  /* a host's checkpoint share below 3 x its RAM: flush */
#define VISIBLE_WAIT_S	 60.0 /* how long a reader waits for another host's shard */
#define RECOVERY_FILE	 "recovery.json"

/* One host's flush before the read phase, as its first rank saw it. */
struct ckpt_flush {
	int leader, ranks;
	char host[64];
	uint64_t share, memory, files_evicted;
	int required;
	char outcome[16]; /* dropped, not permitted, failed (then evicted), evicted */
	char reason[160];
};

struct ckpt_phases {
	int ppn, ppn_max;	  /* ranks per host: fewest, most */
	bool other_host;	  /* every restored shard was written on another host */
	double visible_s;	  /* the time until another host could read it; < 0: unknown */
	const char *visible_from; /* "measured", "write invocation", or NULL */
	struct ckpt_flush *flush; /* rank 0: one per host (of the last flush) */
	int nflush;
	int *read_from;		  /* rank 0: the writer each rank's last read named (-1) */
	char (*writer_hosts)[64]; /* read-only invocation: the write invocation's hosts */
};

int ckpt_phases_check(const struct config *cfg, int nranks, struct fb_errbuf *err)
{
	int64_t w = cfg->checkpoint.num_write, r = cfg->checkpoint.num_read;
	const char *src = cfg->source;

	(void)nranks;
	if (!ckpt_phased(cfg))
		return cfg->checkpoint.recovery_rank_shift
			   ? fb_fail(err, -FB_ECONFIG,
				     "%s: [checkpoint] recovery_rank_shift needs the phases: set "
				     "num_checkpoints_write and num_checkpoints_read",
				     src)
			   : 0;
	if (w < 0 || r < 0)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [checkpoint] set both num_checkpoints_write and "
			       "num_checkpoints_read (MLPerf Storage: 10 and 10 in one invocation, "
			       "or 10 and 0 then 0 and 10)",
			       src);
	if (w == 0 && r == 0)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [checkpoint] num_checkpoints_write = num_checkpoints_read = 0: "
			       "nothing to do",
			       src);
	if (w > 0 && r > w)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [checkpoint] num_checkpoints_read = %" PRId64 " > "
			       "num_checkpoints_write = %" PRId64 ": the read phase reads the "
			       "checkpoints this invocation wrote",
			       src, r, w);
	if (w > 0 && r > 0 && cfg->checkpoint.keep_last && cfg->checkpoint.keep_last < w)
		return fb_fail(
		    err, -FB_ECONFIG,
		    "%s: [checkpoint] keep_last = %" PRId64 " deletes checkpoints the "
		    "read phase reads (set 0, or at least num_checkpoints_write = %" PRId64 ")",
		    src, cfg->checkpoint.keep_last, w);
	return 0;
}

/* The shard rank r restores: its own, or the one written ppn ranks further on. */
static void ckpt_source(struct run *run, struct ckpt_state *st, int ppn)
{
	const uint64_t *b = st->plan.bytes_of;

	st->src = (run->rank + ppn) % run->nranks;
	st->src_bytes = b[st->src];
	st->src_off = 0;
	for (int r = 0; r < st->src; r++)
		st->src_off += b[r];
}

int ckpt_phases_prepare(struct run *run)
{
	struct ckpt_state *st = ckpt_of(run);
	struct ckpt_phases *ph = calloc(1, sizeof(*ph));
	int mn = run->local_size, mx = run->local_size, rc = 0;

	if (!ph)
		return agree(run, run_fail(run, -ENOMEM, "out of memory"));
	st->phases = ph;
	ph->visible_s = -1;
	if (run->rank == 0 && !(ph->read_from = calloc((size_t)run->nranks, sizeof(int))))
		return agree(run, run_fail(run, -ENOMEM, "out of memory"));
	for (int r = 0; ph->read_from && r < run->nranks; r++)
		ph->read_from[r] = -1;
	MPI_Allreduce(&run->local_size, &mn, 1, MPI_INT, MPI_MIN, run->comm);
	MPI_Allreduce(&run->local_size, &mx, 1, MPI_INT, MPI_MAX, run->comm);
	ph->ppn = mn;
	ph->ppn_max = mx;
	if (!run->cfg.checkpoint.recovery_rank_shift)
		return agree(run, 0);
	if (mn != mx)
		rc = run_fail(run, -FB_ECONFIG,
			      "recovery_rank_shift needs the same number of ranks on every host "
			      "(%d to %d here): rank r reads the shard of rank r + ranks per host",
			      mn, mx);
	ckpt_source(run, st, mn);
	int other =
	    !st->src_bytes || !run->rank_leaders || run->rank_leaders[st->src] != run->node_leader;
	MPI_Allreduce(MPI_IN_PLACE, &other, 1, MPI_INT, MPI_LAND, run->comm);
	ph->other_host = other && run->nnodes > 1;
	if (run->rank == 0 && run->nnodes < 2)
		run_warn(run, "this run is on one host: recovery_rank_shift reads each shard on "
			      "the host that wrote it (the recovery is not on another host)");
	return agree(run, rc);
}

/* Whether buf holds the header of the first transfer rank src wrote at off for step. */
static bool ckpt_header_ok(const unsigned char *buf, int64_t step, int src, uint64_t off)
{
	uint64_t h[4];

	memcpy(h, buf, sizeof(h));
	return h[0] == CKPT_MAGIC && h[1] == (uint64_t)step && h[2] == (uint64_t)src && h[3] == off;
}

/* One try: this rank reads the first header of its source shard; 1 when it is there. */
static int ckpt_probe_once(struct run *run, struct ckpt_state *st, const char *path, int64_t step,
			   uint64_t off)
{
	struct io io = {.run = run}; /* not a measured read */
	unsigned char hdr[CKPT_HDR];
	struct sfile *f = NULL;
	size_t got = 0;
	int rc;

	if ((rc = io_open(&io, &f, path, STORAGE_O_READ)) < 0) {
		if (rc != -ENOENT)
			return rc;
		fb_errbuf_clear(&run->err); /* not there yet: tried again */
		return 0;
	}
	rc = io_pread_upto(&io, f, hdr, sizeof(hdr), off, &got);
	int crc = io_close(&io, f);
	if (rc < 0 || crc < 0)
		return rc < 0 ? rc : crc;
	return got == sizeof(hdr) && ckpt_header_ok(hdr, step, st->src, off);
}

/* Collective, after the last write is durable: each rank waits until it can read the first
 * transfer of its source shard (another host's with the shift), timed from the barrier that
 * follows the agreement that the checkpoint is durable; rank 0 keeps the longest wait. */
static int ckpt_probe(struct run *run, struct ckpt_state *st, int64_t step)
{
	bool single = run->cfg.checkpoint.layout == CKPT_LAYOUT_SINGLE;
	uint64_t off = single ? st->src_off : 0;
	char path[CFG_PATH_MAX + 96];
	double t = 0, tmax = 0;
	int rc = 0;

	ckpt_file(run, st, step, st->src, path, sizeof(path));
	MPI_Barrier(run->comm);
	uint64_t t0 = timer_now_ns();
	while (st->src_bytes && (rc = ckpt_probe_once(run, st, path, step, off)) == 0) {
		if ((t = timer_ns_to_s(timer_now_ns() - t0)) > VISIBLE_WAIT_S) {
			rc = run_fail(run, -FB_EDATASET,
				      "checkpoint shard '%s' of rank %d is not readable from host "
				      "%s %.0f s after it was durable",
				      path, st->src, run->hostname, VISIBLE_WAIT_S);
			break;
		}
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	t = timer_ns_to_s(timer_now_ns() - t0);
	rc = rc > 0 ? 0 : rc;
	MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, run->comm);
	st->phases->visible_s = tmax;
	st->phases->visible_from = "measured";
	return agree(run, rc);
}

/* This rank's part of the flush by eviction: the files of the shards it will read. */
static int ckpt_evict_sources(struct run *run, struct ckpt_state *st, int64_t base, int64_t n,
			      uint64_t *files)
{
	char path[CFG_PATH_MAX + 96];
	struct io io = {.run = run}; /* not part of a measured phase */
	int rc = 0;

	for (int64_t k = 0; k < n && rc == 0 && st->src_bytes; k++) {
		ckpt_file(run, st, base + k + 1, st->src, path, sizeof(path));
		if ((rc = io_evict(&io, path)) == 0)
			(*files)++;
	}
	return rc;
}

/* The host's first rank: the flush rule and what was done, in fl. */
static void ckpt_flush_record(struct run *run, struct ckpt_state *st, int drop_rc, const char *why,
			      uint64_t files, struct ckpt_flush *fl)
{
	int page_cache = run->cfg.storage.page_cache;

	fl->leader = run->rank;
	fl->ranks = run->local_size;
	snprintf(fl->host, sizeof(fl->host), "%s", run->hostname);
	for (int r = 0; r < run->nranks; r++)
		if (!run->rank_leaders || run->rank_leaders[r] == run->node_leader)
			fl->share += st->plan.bytes_of[r];
	fl->memory = run->cfg.checkpoint.client_memory_bytes
			 ? run->cfg.checkpoint.client_memory_bytes
			 : results_host_memory();
	fl->required = (double)fl->share < FLUSH_RAM_FACTOR * (double)fl->memory;
	fl->files_evicted = files;
	if (page_cache == PAGE_CACHE_DROP && drop_rc == 0) {
		snprintf(fl->outcome, sizeof(fl->outcome), "dropped");
		snprintf(fl->reason, sizeof(fl->reason), "%s", why);
	} else if (page_cache == PAGE_CACHE_DROP) {
		bool perm = drop_rc == -EACCES || drop_rc == -EPERM || drop_rc == -EROFS;
		snprintf(fl->outcome, sizeof(fl->outcome), "%s", perm ? "not permitted" : "failed");
		snprintf(fl->reason, sizeof(fl->reason),
			 "%s; the %" PRIu64 " files its ranks read were evicted instead", why,
			 files);
	} else {
		snprintf(fl->outcome, sizeof(fl->outcome), "evicted");
		snprintf(fl->reason, sizeof(fl->reason),
			 "the %" PRIu64 " files its ranks read, through the back-end", files);
	}
}

/* Rank 0: keeps the hosts' records (the first rank of each). */
static void ckpt_flush_keep(struct run *run, struct ckpt_phases *ph, struct ckpt_flush *all)
{
	int n = 0;

	for (int r = 0; r < run->nranks; r++)
		if (all[r].leader == r)
			all[n++] = all[r];
	free(ph->flush);
	ph->flush = all;
	ph->nflush = n;
}

/* Collective, before the read phase: every host flushes its page cache, whatever the rule
 * says (a restore never reads from the cache): page_cache = drop, its first rank drops the
 * whole cache, falling back to evicting the files where that is not permitted; otherwise each
 * rank evicts the files it will read. The host's first rank records the rule and the outcome. */
static int ckpt_flush(struct run *run, struct ckpt_state *st, int64_t base, int64_t n)
{
	int page_cache = run->cfg.storage.page_cache, drop_rc = 0, rc = 0;
	char why[192] = "";
	struct ckpt_flush mine = {.leader = -1}, *all = NULL;
	uint64_t files = 0, node_files = 0;

	if (page_cache == PAGE_CACHE_DROP) {
		if (run->local_rank == 0)
			drop_rc = util_drop_caches(why, sizeof(why));
		MPI_Bcast(&drop_rc, 1, MPI_INT, 0, run->node_comm);
	}
	if (page_cache != PAGE_CACHE_DROP || drop_rc)
		rc = ckpt_evict_sources(run, st, base, n, &files);
	MPI_Reduce(&files, &node_files, 1, MPI_UINT64_T, MPI_SUM, 0, run->node_comm);
	if (run->local_rank == 0)
		ckpt_flush_record(run, st, drop_rc, why, node_files, &mine);
	if (run->rank == 0 && !(all = calloc((size_t)run->nranks, sizeof(*all))))
		rc = run_fail(run, -ENOMEM, "out of memory");
	if ((rc = agree(run, rc)) < 0) {
		free(all);
		return rc;
	}
	MPI_Gather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE, 0,
		   run->comm);
	if (run->rank == 0)
		ckpt_flush_keep(run, st->phases, all);
	st->flushed = true;
	return 0;
}

/* Rank 0, write-only invocation: the visibility measured here, for the read-only invocation
 * that follows (its recovery time adds it). Not a namespace call of the checkpoints. */
static int ckpt_recovery_save(struct run *run, struct ckpt_state *st, int64_t last)
{
	char path[CFG_PATH_MAX + 64];
	struct io_stats *keep = st->nst, *scratch = calloc(1, sizeof(*scratch));
	json_t *hosts = json_array();
	for (int r = 0; hosts && r < run->nranks; r++)
		json_array_append_new(hosts,
				      json_string(run->rank_hosts ? run->rank_hosts[r] : ""));
	json_t *o = json_pack("{s:f, s:I, s:i, s:i, s:o}", "visible_after_seconds",
			      st->phases->visible_s, "last_step", (json_int_t)last, "ranks",
			      run->nranks, "shift_ranks", st->phases->ppn, "hosts", hosts);
	char *text = o ? json_dumps(o, JSON_INDENT(1)) : NULL;
	int rc;

	json_decref(o);
	if (!scratch || !text) {
		free(scratch);
		free(text);
		return run_fail(run, -ENOMEM, "out of memory");
	}
	snprintf(path, sizeof(path), "%s/" RECOVERY_FILE, st->folder);
	st->nst = scratch;
	rc = ckpt_put_atomic(run, st, st->folder, path, text, strlen(text));
	st->nst = keep;
	free(scratch);
	free(text);
	return rc;
}

/* Rank 0, read-only invocation: the host of every writing rank, as recovery.json recorded
 * them (left unknown when the list is not one per rank). */
static void ckpt_writer_hosts(struct run *run, struct ckpt_phases *ph, json_t *hosts)
{
	if (json_array_size(hosts) != (size_t)run->nranks ||
	    !(ph->writer_hosts = calloc((size_t)run->nranks, sizeof(*ph->writer_hosts))))
		return;
	for (int r = 0; r < run->nranks; r++)
		snprintf(ph->writer_hosts[r], sizeof(ph->writer_hosts[r]), "%s",
			 json_string_value(json_array_get(hosts, (size_t)r)) ?: "");
}

/* Rank 0, read-only invocation: the visibility the write invocation measured, when it ran
 * with the same ranks and shift. */
static void ckpt_recovery_load(struct run *run, struct ckpt_state *st)
{
	char path[CFG_PATH_MAX + 64];
	json_error_t jerr;
	json_t *o;

	snprintf(path, sizeof(path), "%s/" RECOVERY_FILE, st->folder);
	o = safe_json_load_at(path, 0, true, &jerr); /* never through a link, never a FIFO */
	json_t *v = json_object_get(o, "visible_after_seconds");
	if (o && json_is_number(v) &&
	    json_integer_value(json_object_get(o, "ranks")) == run->nranks &&
	    json_integer_value(json_object_get(o, "shift_ranks")) == st->phases->ppn) {
		st->phases->visible_s = json_number_value(v);
		st->phases->visible_from = "write invocation";
		ckpt_writer_hosts(run, st->phases, json_object_get(o, "hosts"));
	} else {
		run_warn(
		    run,
		    "no %s from a write invocation with %d ranks and this shift: the time "
		    "until another host could read the checkpoints is not in the recovery time",
		    path, run->nranks);
	}
	json_decref(o);
}

/* The write phase: W checkpoints saved to durable, the first one's layout read back. */
static int ckpt_write_phase(struct run *run, struct ckpt_state *st, struct ckpt_rep *rep,
			    int64_t base)
{
	int rc = 0;

	for (int64_t k = 0; k < run->cfg.checkpoint.num_write && rc == 0; k++) {
		struct ckpt_one *c = &rep->c[k];

		rep->n = (int)k + 1 > rep->n ? (int)k + 1 : rep->n;
		c->step = base + k + 1;
		c->wrote = true;
		rc = ckpt_save_step(run, st, c, false);
	}
	return rc;
}

/* The read phase: the first R checkpoints, each rank its source shard. */
static int ckpt_read_phase(struct run *run, struct ckpt_state *st, struct ckpt_rep *rep,
			   int64_t base)
{
	int rc = 0;

	for (int64_t k = 0; k < run->cfg.checkpoint.num_read && rc == 0; k++) {
		struct ckpt_one *c = &rep->c[k];

		rep->n = (int)k + 1 > rep->n ? (int)k + 1 : rep->n;
		c->step = base + k + 1;
		c->read = true;
		if ((rc = ckpt_restore(run, st, c)) < 0)
			break;
		if (run->stop && *run->stop)
			rc = run_fail(run, -FB_EINTR, "interrupted by a signal");
		rc = agree(run, rc);
	}
	return rc;
}

int ckpt_phases_run(struct run *run, int repetition, struct ckpt_rep *rep)
{
	const struct config *cfg = &run->cfg;
	struct ckpt_state *st = ckpt_of(run);
	int64_t w = cfg->checkpoint.num_write, r = cfg->checkpoint.num_read;
	int64_t base = (int64_t)repetition * (w > 0 ? w : r);
	bool shift = cfg->checkpoint.recovery_rank_shift;
	int rc;

	if ((rc = ckpt_write_phase(run, st, rep, base)) < 0)
		return rc;
	if (w > 0 && shift && (rc = ckpt_probe(run, st, base + w)) < 0)
		return rc;
	if (w > 0 && r == 0 && shift) {
		if (run->rank == 0)
			rc = ckpt_recovery_save(run, st, base + w);
		if ((rc = agree(run, rc)) < 0)
			return rc;
	}
	if (r == 0)
		return 0;
	/* A read-only invocation: every checkpoint it reads is complete and of this config. */
	for (int64_t k = 0; w == 0 && k < r; k++)
		if ((rc = agree(run, ckpt_check_existing(run, st, base + k + 1))) < 0)
			return rc;
	if (w == 0 && shift && run->rank == 0 && repetition == 0)
		ckpt_recovery_load(run, st);
	if ((rc = ckpt_flush(run, st, base, r)) < 0)
		return rc;
	if ((rc = ckpt_read_phase(run, st, rep, base)) < 0)
		return rc;
	/* which rank's shard each rank read, as the headers of what it read say */
	MPI_Gather(&st->read_writer, 1, MPI_INT, st->phases->read_from, 1, MPI_INT, 0, run->comm);
	return 0;
}

/* ---- results ---------------------------------------------------------------------------- */

static json_t *ckpt_flush_json(const struct ckpt_phases *ph)
{
	json_t *nodes = json_array();
	bool any = false;

	for (int i = 0; i < ph->nflush; i++) {
		const struct ckpt_flush *f = &ph->flush[i];
		any |= f->required != 0;
		json_array_append_new(
		    nodes, json_pack("{s:s, s:i, s:i, s:I, s:I, s:f, s:b, s:s, s:s, s:I}", "host",
				     f->host, "first_rank", f->leader, "ranks", f->ranks,
				     "checkpoint_share_bytes", (json_int_t)f->share, "memory_bytes",
				     (json_int_t)f->memory, "share_over_memory",
				     f->memory ? (double)f->share / (double)f->memory : 0.0,
				     "required", f->required, "outcome", f->outcome, "reason",
				     f->reason, "files_evicted", (json_int_t)f->files_evicted));
	}
	return json_pack("{s:s, s:b, s:o}", "rule",
			 "flush when a host's share of one checkpoint is below 3 x its RAM",
			 "required", any, "nodes", nodes);
}

/* The host that wrote rank w's shard: this invocation's (it wrote them), or the write
 * invocation's from recovery.json; NULL when unknown. */
static const char *ckpt_writer_host(const struct run *run, const struct ckpt_phases *ph, int w)
{
	if (w < 0 || w >= run->nranks)
		return NULL;
	if (run->cfg.checkpoint.num_write > 0)
		return run->rank_hosts ? run->rank_hosts[w] : NULL;
	return ph->writer_hosts ? ph->writer_hosts[w] : NULL;
}

/* Per rank: the shard it read (the writer its headers name) and the writer's host; *other
 * stays true only when every shard read was written on another host, as far as known. */
static json_t *ckpt_reads_json(const struct run *run, const struct ckpt_phases *ph, bool *other)
{
	json_t *a = json_array();

	for (int r = 0; ph->read_from && r < run->nranks; r++) {
		int w = ph->read_from[r];
		const char *h = run->rank_hosts ? run->rank_hosts[r] : "";
		const char *wh = ckpt_writer_host(run, ph, w);

		if (w >= 0 && wh && strcmp(wh, h) == 0)
			*other = false;
		json_array_append_new(
		    a, json_pack("{s:i, s:s, s:o, s:o}", "rank", r, "host", h, "shard_rank",
				 w >= 0 ? json_integer(w) : json_null(), "shard_host",
				 wh ? json_string(wh) : json_null()));
	}
	return a;
}

json_t *ckpt_phases_json(const struct run *run)
{
	const struct config *cfg = &run->cfg;
	const struct ckpt_phases *ph = ((const struct ckpt_state *)run->workload_priv)->phases;
	int64_t w = cfg->checkpoint.num_write, r = cfg->checkpoint.num_read;
	bool shift = cfg->checkpoint.recovery_rank_shift;
	json_t *o = json_object();

	json_object_set_new(o, "invocation", json_string(w && r ? "both" : w ? "write" : "read"));
	json_object_set_new(o, "num_checkpoints_write", json_integer(w));
	json_object_set_new(o, "num_checkpoints_read", json_integer(r));
	json_object_set_new(o, "fsync", json_true());
	json_object_set_new(o, "hosts", json_integer(run->nnodes));
	json_object_set_new(o, "ranks_per_host", json_integer(ph->ppn));
	json_object_set_new(o, "ranks_per_host_max", json_integer(ph->ppn_max));
	json_object_set_new(o, "recovery_rank_shift", json_boolean(shift));
	json_object_set_new(o, "shift_ranks", json_integer(shift ? ph->ppn : 0));
	bool other = r > 0 && shift && ph->other_host;
	json_t *reads = r > 0 ? ckpt_reads_json(run, ph, &other) : json_null();
	json_object_set_new(o, "read_on_other_host", json_boolean(other));
	json_object_set_new(o, "reads", reads);
	json_object_set_new(o, "visible_after_seconds",
			    ph->visible_s >= 0 ? json_real(ph->visible_s) : json_null());
	json_object_set_new(o, "visible_after_from",
			    ph->visible_from ? json_string(ph->visible_from) : json_null());
	json_object_set_new(o, "flush", r > 0 ? ckpt_flush_json(ph) : json_null());
	return o;
}

void ckpt_phases_record(struct run *run, const struct ckpt_one *c0, double wmax, double rmax,
			json_t *o)
{
	const struct ckpt_phases *ph = ckpt_of(run)->phases;

	if (c0->wrote) {
		double b = (double)json_integer_value(json_object_get(o, "bytes_written"));
		json_object_set_new(o, "write_duration_seconds", json_real(wmax));
		json_object_set_new(o, "write_throughput_GiB_per_second",
				    wmax > 0 ? json_real(b / GIB / wmax) : json_null());
	}
	if (!c0->read)
		return;
	double b = (double)json_integer_value(json_object_get(o, "bytes_read"));
	json_object_set_new(o, "read_duration_seconds", json_real(rmax));
	json_object_set_new(o, "read_throughput_GiB_per_second",
			    rmax > 0 ? json_real(b / GIB / rmax) : json_null());
	if (ph->visible_s < 0) {
		json_object_set_new(o, "recovery_seconds", json_null());
		json_object_set_new(o, "recovery_throughput_GiB_per_second", json_null());
		return;
	}
	double rs = rmax + ph->visible_s;
	json_object_set_new(o, "recovery_seconds", json_real(rs));
	json_object_set_new(o, "recovery_throughput_GiB_per_second",
			    rs > 0 ? json_real(b / GIB / rs) : json_null());
}

/* The mean of a member over the checkpoints that have it; NULL-free: null when none. */
static json_t *ckpt_mean(json_t *checkpoints, const char *key)
{
	double sum = 0;
	size_t i, n = 0;
	json_t *c;

	json_array_foreach(checkpoints, i, c)
	{
		json_t *v = json_object_get(c, key);
		if (json_is_number(v)) {
			sum += json_number_value(v);
			n++;
		}
	}
	return n ? json_real(sum / (double)n) : json_null();
}

void ckpt_phases_metric(struct run *run, json_t *checkpoints, json_t *metric)
{
	static const char *const keys[][2] = {
	    {"write_duration_seconds", "checkpoint_write_duration_seconds"},
	    {"write_throughput_GiB_per_second", "checkpoint_write_throughput_GiB_per_second"},
	    {"read_duration_seconds", "checkpoint_read_duration_seconds"},
	    {"read_throughput_GiB_per_second", "checkpoint_read_throughput_GiB_per_second"},
	    {"recovery_seconds", "checkpoint_recovery_seconds"},
	    {"recovery_throughput_GiB_per_second", "checkpoint_recovery_throughput_GiB_per_second"},
	};
	const struct config *cfg = &run->cfg;
	const struct ckpt_phases *ph = ckpt_of(run)->phases;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		bool w = keys[i][0][0] == 'w';
		if (w ? cfg->checkpoint.num_write > 0 : cfg->checkpoint.num_read > 0)
			json_object_set_new(metric, keys[i][1], ckpt_mean(checkpoints, keys[i][0]));
	}
	if (cfg->checkpoint.recovery_rank_shift)
		json_object_set_new(metric, "checkpoint_visible_after_seconds",
				    ph->visible_s >= 0 ? json_real(ph->visible_s) : json_null());
}

void ckpt_phases_free(struct ckpt_state *st)
{
	if (!st->phases)
		return;
	free(st->phases->flush);
	free(st->phases->read_from);
	free(st->phases->writer_hosts);
	free(st->phases);
	st->phases = NULL;
}
