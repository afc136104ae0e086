/* Checkpoints inside a training run (checkpoint.h): blocking, or async through a writer thread;
 * their totals in the training summary.json. */
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
#include "../bench/results.h"
#include "../bench/rng.h"
#include "../bench/run.h"
#include "../bench/safefile.h"
#include "../bench/timer.h"
#include "../bench/storage/fs.h"
#include "evict.h"
#include "workload.h"

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
