/* Training emulation, the epoch loop: per epoch, the sampler deals samples to ranks, the reader
 * pool (train_pool.h: reader threads, DataLoader workers, fill a bounded ring of batch buffers;
 * collective mode: the trainer reads each batch) delivers each batch, and the trainer hands it
 * to the compute plug-in, optionally joins a step barrier, and records timings. Also the
 * evaluation passes, accelerators_per_rank = K loaders per rank, set-up and tear-down.
 */
#include "train_pool.h"

#include "checkpoint.h"
#include "evict.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../bench/agree.h"
#include "../bench/cpus.h"
#include "../bench/progress.h"
#include "../bench/run.h"
#include "../bench/timer.h"
#include "../formats/sample.h"
#include "batch_window.h"
#include "sampler.h"

/* ---- epochs ---------------------------------------------------------------------------- */

static double timeval_diff_s(const struct timeval *a, const struct timeval *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_usec - a->tv_usec) / 1e6;
}

struct epoch_ctx {
	struct run *run;
	struct pool *pool;
	struct sampler *s;
	struct train_result *res;
	uint64_t rng;	 /* compute-time variates */
	uint64_t gstep0; /* checkpoint_every_steps: steps every rank had in earlier epochs */
	bool eval;	 /* an evaluation pass (eval_enter): no checkpoints inside it */
};

/* Step barrier: the allreduce a data-parallel step ends with; it also carries failure. */
static int step_barrier(struct run *run, int rc, uint64_t *ns)
{
	int in = rc < 0 ? 1 : 0, out = 0;
	uint64_t t0 = timer_now_ns();

	agree_allreduce(run, &in, &out, 1, MPI_INT, MPI_MAX);
	*ns = timer_now_ns() - t0;
	if (rc == 0 && out)
		return run_fail(run, -FB_EPEER, "stopped because another rank failed");
	return rc;
}

/* Records one step's timings (only steps this rank has; warm-up steps are left out of AU and
 * data wait). pre_ns: the agreement before a collective read, which is neither wait nor
 * compute. */
static void step_account(struct epoch_ctx *e, struct epoch_rank *er, uint64_t step, uint64_t t0,
			 uint64_t prev, uint64_t pre_ns, uint64_t t_ready, uint64_t t_done,
			 uint64_t t_end, uint64_t post_ns, double secs, const struct step_times *st)
{
	struct timeline_event *tl = e->res->timeline;
	int *n = &e->res->ntimeline;
	double tb = e->pool->time_base;

	if (pre_ns)
		tl_add(tl, n, TIMELINE_MAX, 0, TL_BARRIER, tb + timer_ns_to_s(prev - t0),
		       tb + timer_ns_to_s(prev + pre_ns - t0));
	tl_add(tl, n, TIMELINE_MAX, 0, TL_WAIT, tb + timer_ns_to_s(prev + pre_ns - t0),
	       tb + timer_ns_to_s(t_ready - t0));
	tl_add(tl, n, TIMELINE_MAX, 0, TL_COMPUTE, tb + timer_ns_to_s(t_ready - t0),
	       tb + timer_ns_to_s(t_done - t0));
	if (post_ns)
		tl_add(tl, n, TIMELINE_MAX, 0, TL_BARRIER, tb + timer_ns_to_s(t_done - t0),
		       tb + timer_ns_to_s(t_end - t0));
	er->steps++;
	if (step < (uint64_t)e->run->cfg.train.exclude_start_steps)
		return;
	er->compute_s += timer_ns_to_s(st->busy_ns);
	er->conf_s += secs;
	er->step_s += timer_ns_to_s(t_end - prev);
	er->barrier_s += timer_ns_to_s(pre_ns + post_ns);
	er->copy_s += timer_ns_to_s(st->copy_ns);
	er->copy_bytes += st->copy_bytes;
	hist_add(&er->wait, t_ready - prev - pre_ns);
}

static void epoch_progress(struct epoch_ctx *e, struct progress *pg, uint64_t step, uint64_t total,
			   uint64_t t0)
{
	struct pool *p = e->pool;
	uint64_t bytes = 0;
	char extra[64];

	if (!progress_due(pg))
		return;
	for (unsigned i = 0; i < p->nall; i++)
		bytes += atomic_load_explicit(&p->workers[i].progress_bytes, memory_order_relaxed);
	snprintf(extra, sizeof(extra), "%.0f MiB/s (rank 0)",
		 (double)bytes / 1048576.0 / timer_ns_to_s(timer_now_ns() - t0 + 1));
	progress_update(pg, (double)(step + 1) / (double)total, extra);
}

/* In a log (not a terminal), one line per epoch, rank 0 only, flushed as it ends, so a long run
 * under mpiexec shows where it is; a terminal has the bar instead. Rank 0's own figures: no
 * collective is added for it. */
static void epoch_line(const struct progress *pg, const char *what, const struct epoch_rank *er,
		       uint64_t bytes)
{
	if (!pg->active || pg->tty)
		return;
	fprintf(stderr, "feedbench: %s done in %.2f s: %.1f MiB/s, AU %.1f %% (rank 0)\n", what,
		er->wall_s, er->wall_s > 0 ? (double)bytes / 1048576.0 / er->wall_s : 0,
		er->step_s > 0 ? 100 * er->compute_s / er->step_s : 0);
	fflush(stderr);
}

/* One epoch. With reader threads, a failed rank tells the others (agree_notify_failure) and
 * they stop at their next step; with step barriers or collective reads, the failure travels
 * in the agreement every rank makes at the same step, so all leave the loop together and no
 * collective call is left unmatched. */
static int epoch_run(struct epoch_ctx *e, int epoch, struct epoch_rank *er)
{
	struct run *run = e->run;
	struct pool *p = e->pool;
	struct sampler *s = e->s;
	const struct config *cfg = &run->cfg;
	bool coll = collective_mode(run);
	struct worker *tw = &p->workers[0]; /* collective mode reads on the trainer */
	struct progress pg;
	uint64_t total, step = 0;
	double ck_s = 0; /* checkpoints inside this epoch: blocked time */
	bool ck_agreed = false;
	char what[64];
	int rc;

	memset(er, 0, sizeof(*er));
	rc = sampler_epoch(s, run, epoch, run->rank, run->nranks);
	/* every rank evicts (a collective count), whatever its sampler said */
	int erc = evict_dataset(run, !e->eval);
	if (rc == 0)
		rc = erc;
	if ((rc = agree(run, rc)) < 0)
		return rc;
	total = coll ? s->max_steps : s->steps;
	for (unsigned i = 0; i < p->nall; i++) {
		io_stats_reset(&p->workers[i].stats);
		atomic_store(&p->workers[i].progress_bytes, 0);
	}

	if (e->eval)
		snprintf(what, sizeof(what), "evaluation after epoch %d", epoch + 1);
	else
		snprintf(what, sizeof(what), "epoch %d/%" PRId64, epoch + 1, cfg->train.epochs);
	progress_begin(&pg, what, run->rank == 0 && run->verbose >= 0);
	MPI_Barrier(run->comm);
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	uint64_t t0 = timer_now_ns(), prev = t0;
	p->epoch_t0 = p->step_end = t0;
	tl_add(e->res->timeline, &e->res->ntimeline, TIMELINE_MAX, 0, TL_EPOCH, p->time_base,
	       p->time_base);
	if (!coll)
		pool_start(p, s->steps);
	for (; step < total && (coll || rc == 0); step++) {
		struct slot *slot = NULL;
		struct step_times st = {0};
		uint64_t pre_ns = 0, post_ns = 0, t_ready = 0, t_done;
		bool mine = step < s->steps;
		double secs = 0;

		if (coll) {
			/* Agree before each collective batch: a failed rank never leaves the
			 * others waiting inside a collective read. */
			if ((rc = step_barrier(run, rc, &pre_ns)) < 0)
				break;
			slot = &p->slots[0];
			rc = collective_batch(p, tw, slot, step);
		} else {
			slot = pool_batch_take(p, step, &rc, &t_ready);
		}
		if (!t_ready)
			t_ready = timer_now_ns();
		if (rc == 0 && mine) {
			secs = compute_step_seconds(cfg->train.computation_time,
						    cfg->train.computation_time_stdev, &e->rng);
			rc =
			    run->compute_ops->step(run->compute, slot->buf, slot->bytes, secs, &st);
		}
		t_done = timer_now_ns();
		if (!coll && slot)
			pool_batch_release(p, step);
		if (rc == 0 && run->stop && *run->stop)
			rc = run_fail(run, -FB_EINTR, "interrupted by a signal");
		if (rc < 0 && !coll)
			agree_notify_failure(run);
		if (cfg->train.step_barrier && step < s->min_steps) {
			/* Every rank has this step: the allreduce of data-parallel training. */
			rc = step_barrier(run, rc, &post_ns);
			if (rc < 0 && coll) {
				step++;
				break;
			}
		} else if (rc == 0 && !coll && agree_peer_failed(run)) {
			rc = run_fail(run, -FB_EPEER, "stopped because another rank failed");
		}
		if (!e->eval && step < s->min_steps &&
		    checkpoint_train_due_step(run, e->gstep0 + step + 1)) {
			/* A step every rank has: all agree they are healthy, then save; the step's
			 * time includes the checkpoint (AU's denominator, the epoch's wall). */
			double b,
			    mean = (timer_ns_to_s(timer_now_ns() - t0) - ck_s) / (double)(step + 1);
			rc = checkpoint_train_step(run, rc, mean, &b);
			ck_s += b;
			ck_agreed = rc < 0;
			if (rc < 0 && coll) {
				step++;
				break;
			}
		}
		uint64_t t_end = timer_now_ns();
		if (mine)
			step_account(e, er, step, t0, prev, pre_ns, t_ready, t_done, t_end, post_ns,
				     secs, &st);
		prev = p->step_end = t_end;
		watchdog_kick_at(run, t_end);
		if (s->steps)
			epoch_progress(e, &pg, step, total, t0);
	}
	/* Collective mode: a failure in the last step still needs its matching agreement. */
	if (coll && step == total) {
		uint64_t ns;
		rc = step_barrier(run, rc, &ns);
	}
	if (rc < 0 && !coll)
		agree_notify_failure(run);
	if (rc < 0 && !coll && !ck_agreed) /* the others may wait at a checkpoint's agreement */
		rc = checkpoint_train_catchup(run, rc, e->gstep0 + step, e->gstep0 + s->min_steps);
	if (!coll)
		pool_stop(p);
	if (p->trainer_reads) {
		int crc = pool_reader_close_all(&p->workers[p->nworkers]);
		if (rc == 0 && crc < 0)
			rc = crc;
	}
	uint64_t t1 = timer_now_ns();
	getrusage(RUSAGE_SELF, &ru1);
	progress_end(&pg);
	er->wall_s = timer_ns_to_s(t1 - t0);
	uint64_t line_bytes = 0;
	for (unsigned i = 0; i < p->nall; i++)
		line_bytes += p->workers[i].stats.bytes;
	epoch_line(&pg, what, er, line_bytes);
	er->cpu_user_s = timeval_diff_s(&ru0.ru_utime, &ru1.ru_utime);
	er->cpu_sys_s = timeval_diff_s(&ru0.ru_stime, &ru1.ru_stime);
	p->time_base += er->wall_s;
	for (unsigned i = 0; i < p->nall; i++)
		io_stats_merge(&er->io, &p->workers[i].stats);
	if (rc == 0 && run->err.code && !coll)
		rc = run->err.code; /* a reader failed while closing its files */
	return agree(run, rc);
}

/* ---- set-up ---------------------------------------------------------------------------- */

static bool reads_file(const struct run *run, uint32_t i)
{
	return run->cfg.dataset.file_access == FILE_ACCESS_SHARED ||
	       (int)(i % (uint32_t)run->nranks) == run->rank;
}

static int open_shared(struct run *run)
{
	bool want = run->cfg.dataset.file_access == FILE_ACCESS_SHARED &&
		    run->cfg.storage.backend == BACKEND_MPIIO &&
		    !(run->format->caps & FORMAT_CAP_OWNS_IO);
	struct io io = {.run = run}; /* not measured: the epochs' opens are not these */
	int rc = 0;

	if (!want)
		return 0;
	/* Collective opens, in the same order on every rank; every rank opens every file even
	 * after a failure, so that none is left waiting in a collective open. */
	for (uint32_t k = 0; k < run->ds.nheld; k++) { /* shared: every file held */
		struct sfile *sf = NULL;
		int orc =
		    io_open(&io, &sf, run->ds.files[k].path, STORAGE_O_READ | STORAGE_O_SHARED);
		if (orc < 0 && rc == 0)
			rc = orc;
		run->ds.files[k].shared = orc < 0 ? NULL : sf;
	}
	return rc;
}

static int close_shared(struct run *run)
{
	struct io io = {.run = run};
	int rc = 0;

	for (uint32_t k = 0; k < run->ds.nheld; k++) {
		int crc = io_close(&io, run->ds.files[k].shared);
		if (crc < 0 && rc == 0)
			rc = crc;
		run->ds.files[k].shared = NULL;
	}
	return rc;
}

/* Per-file indexes (offsets, members) of the files this rank reads, before the first timed
 * read. */
static int index_files(struct run *run)
{
	int rc = 0;

	for (uint32_t k = 0; rc == 0 && run->format->index && k < run->ds.nheld; k++)
		if (reads_file(run, run->ds.files[k].index) && !run->ds.files[k].meta)
			rc = run->format->index(run, &run->ds.files[k]);
	return rc;
}

/* The evaluation pass's own sampler, reader threads and batch buffers (sized for its batch and
 * samples), made with the evaluation set in place; its threads wait while training runs. */
struct eval_state {
	bool on;
	struct sampler s;
	struct pool p;
	bool pool_made, sampler_made;
};

static int eval_setup(struct run *run, struct eval_state *ev, struct train_result *res)
{
	struct train_result scratch = {0};
	struct eval_swap sw;
	int rc;

	memset(ev, 0, sizeof(*ev));
	if (!eval_enabled(&run->cfg))
		return 0;
	ev->on = true;
	res->eval = calloc((size_t)res->epochs, sizeof(*res->eval));
	res->eval_epoch = calloc((size_t)res->epochs, sizeof(*res->eval_epoch));
	eval_enter(run, &sw);
	rc = !res->eval || !res->eval_epoch ? run_fail(run, -ENOMEM, "out of memory") : 0;
	if (rc == 0 && (rc = sampler_init(&ev->s, run)) == 0)
		ev->sampler_made = true;
	if (rc == 0)
		rc = index_files(run);
	if ((rc = agree(run, rc)) == 0)
		rc = agree(run, open_shared(run));
	if (rc == 0) {
		rc = pool_init(run, &ev->p, &scratch);
		ev->pool_made = true;
		res->buffer_bytes += scratch.buffer_bytes;
		json_decref(scratch.binding);
		rc = agree(run, rc);
	}
	eval_leave(run, &sw);
	return rc;
}

static void eval_teardown(struct run *run, struct eval_state *ev, struct train_result *res)
{
	struct eval_swap sw;

	if (!ev->on)
		return;
	eval_enter(run, &sw);
	if (ev->pool_made) {
		pool_timeline_collect(&ev->p, res);
		pool_free(run, &ev->p);
	}
	if (ev->sampler_made)
		sampler_free(&ev->s);
	int crc = close_shared(run);
	eval_leave(run, &sw);
	if (crc < 0 && run->err.code == 0)
		run_fail(run, crc, "cannot close the evaluation files");
}

/* One evaluation pass after training epoch ep: every rank reads its share of the evaluation
 * set once, with eval_time of compute per batch, as an epoch of its own. Training's reader
 * threads are idle between epochs while the evaluation set is in run->ds. */
static int eval_pass(struct epoch_ctx *train, struct eval_state *ev, int ep)
{
	struct run *run = train->run;
	struct train_result *res = train->res;
	struct eval_swap sw;
	struct epoch_ctx e = {run, &ev->p, &ev->s, res, train->rng ^ 0x6576616cULL, 0, true};
	int rc;

	ev->p.s = &ev->s;
	ev->p.time_base = train->pool->time_base;
	eval_enter(run, &sw);
	rc = epoch_run(&e, ep, &res->eval[res->nevals]);
	eval_leave(run, &sw);
	train->pool->time_base = ev->p.time_base;
	train->rng = e.rng ^ 0x6576616cULL;
	res->eval_epoch[res->nevals++] = ep;
	return rc;
}

/* ---- accelerators_per_rank = K > 1 ------------------------------------------------------ */

/* K emulated accelerators on this rank, each with its own loader (sampler, reader threads, batch
 * ring) and the share of the samples of accelerator a = k x ranks + rank out of ranks x K (so a
 * rank's accelerators read only the files the rank holds, i % ranks == rank). They step
 * together: each step takes every accelerator's batch, copies each, and computes once for all
 * (the K devices compute in parallel; the CPU emulation waits computation_time once). An
 * accelerator whose batch came early waits for the others: that wait counts as barrier time,
 * as it would at the gradient allreduce. */
struct multi {
	int k;
	struct sampler *s; /* [k] */
	struct pool *p;	   /* [k] */
	int nsampler, npool;
};

static int multi_epoch(struct epoch_ctx *e, struct multi *m, int epoch, struct epoch_rank *er,
		       struct epoch_rank *acc)
{
	struct run *run = e->run;
	const struct config *cfg = &run->cfg;
	int K = m->k, P = run->nranks, rc = 0;
	uint64_t total = 0, min_steps, step = 0;
	struct progress pg;
	char what[64];

	memset(er, 0, sizeof(*er));
	for (int k = 0; k < K; k++)
		memset(&acc[k], 0, sizeof(acc[k]));
	for (int k = 0; k < K && rc == 0; k++)
		rc = sampler_epoch(&m->s[k], run, epoch, k * P + run->rank, P * K);
	int erc = evict_dataset(run, true);
	if (rc == 0)
		rc = erc;
	if ((rc = agree(run, rc)) < 0)
		return rc;
	min_steps = m->s[0].min_steps;
	for (int k = 0; k < K; k++) {
		if (m->s[k].steps > total)
			total = m->s[k].steps;
		for (unsigned i = 0; i < m->p[k].nworkers; i++) {
			io_stats_reset(&m->p[k].workers[i].stats);
			atomic_store(&m->p[k].workers[i].progress_bytes, 0);
		}
	}
	snprintf(what, sizeof(what), "epoch %d/%" PRId64, epoch + 1, cfg->train.epochs);
	progress_begin(&pg, what, run->rank == 0 && run->verbose >= 0);
	MPI_Barrier(run->comm);
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	uint64_t t0 = timer_now_ns(), prev = t0;
	for (int k = 0; k < K; k++) {
		m->p[k].epoch_t0 = t0;
		pool_start(&m->p[k], m->s[k].steps);
	}
	struct slot **slot = calloc((size_t)K, sizeof(*slot));
	uint64_t *ready = calloc((size_t)K, sizeof(*ready));
	struct step_times *st = calloc((size_t)K, sizeof(*st));
	if (!slot || !ready || !st)
		rc = run_fail(run, -ENOMEM, "out of memory");
	for (; step < total && rc == 0; step++) {
		struct step_times sc = {0};
		uint64_t post_ns = 0, t_ready, t_done, t_end;
		double secs = 0;
		bool any = false;

		for (int k = 0; k < K; k++) {
			slot[k] = NULL;
			memset(&st[k], 0, sizeof(st[k]));
			if (rc == 0 && step < m->s[k].steps) {
				ready[k] = 0;
				slot[k] = pool_batch_take(&m->p[k], step, &rc, &ready[k]);
				if (!ready[k])
					ready[k] = timer_now_ns();
				any = true;
			}
		}
		t_ready = timer_now_ns();
		for (int k = 0; k < K && rc == 0; k++)
			if (slot[k])
				rc = run->compute_ops->step(run->compute, slot[k]->buf,
							    slot[k]->bytes, 0, &st[k]);
		if (rc == 0 && any) {
			secs = compute_step_seconds(cfg->train.computation_time,
						    cfg->train.computation_time_stdev, &e->rng);
			rc = run->compute_ops->step(run->compute, NULL, 0, secs, &sc);
		}
		t_done = timer_now_ns();
		for (int k = 0; k < K; k++)
			if (slot[k])
				pool_batch_release(&m->p[k], step);
		if (rc == 0 && run->stop && *run->stop)
			rc = run_fail(run, -FB_EINTR, "interrupted by a signal");
		if (rc < 0)
			agree_notify_failure(run);
		if (cfg->train.step_barrier && step < min_steps)
			rc = step_barrier(run, rc, &post_ns);
		else if (rc == 0 && agree_peer_failed(run))
			rc = run_fail(run, -FB_EPEER, "stopped because another rank failed");
		t_end = timer_now_ns();
		double copy_all = 0;
		for (int k = 0; k < K; k++)
			copy_all += timer_ns_to_s(st[k].copy_ns);
		if (any) {
			tl_add(e->res->timeline, &e->res->ntimeline, TIMELINE_MAX, 0, TL_WAIT,
			       m->p[0].time_base + timer_ns_to_s(prev - t0),
			       m->p[0].time_base + timer_ns_to_s(t_ready - t0));
			tl_add(e->res->timeline, &e->res->ntimeline, TIMELINE_MAX, 0, TL_COMPUTE,
			       m->p[0].time_base + timer_ns_to_s(t_ready - t0),
			       m->p[0].time_base + timer_ns_to_s(t_done - t0));
			er->steps++;
		}
		for (int k = 0; k < K; k++) {
			struct epoch_rank *a = &acc[k];
			if (!slot[k])
				continue;
			a->steps++;
			if (step < (uint64_t)cfg->train.exclude_start_steps)
				continue;
			double copy_k = timer_ns_to_s(st[k].copy_ns);
			a->compute_s += timer_ns_to_s(sc.busy_ns);
			a->conf_s += secs;
			a->step_s += timer_ns_to_s(t_end - prev);
			a->copy_s += copy_k;
			a->copy_bytes += st[k].copy_bytes;
			/* waiting for the other accelerators' batches and copies: lock-step */
			a->barrier_s +=
			    timer_ns_to_s(post_ns + (t_ready - ready[k])) + copy_all - copy_k;
			hist_add(&a->wait, ready[k] - prev);
		}
		prev = t_end;
		watchdog_kick_at(run, t_end);
		if (total)
			progress_update(&pg, (double)(step + 1) / (double)total, NULL);
	}
	if (rc < 0)
		agree_notify_failure(run);
	for (int k = 0; k < K; k++)
		pool_stop(&m->p[k]);
	free(slot);
	free(ready);
	free(st);
	uint64_t t1 = timer_now_ns();
	getrusage(RUSAGE_SELF, &ru1);
	progress_end(&pg);
	er->wall_s = timer_ns_to_s(t1 - t0);
	er->cpu_user_s = timeval_diff_s(&ru0.ru_utime, &ru1.ru_utime);
	er->cpu_sys_s = timeval_diff_s(&ru0.ru_stime, &ru1.ru_stime);
	/* The rank's figures: its loaders' reads summed, its accelerators' times averaged (they
	 * share the step timeline), every accelerator's data waits in one histogram. */
	for (int k = 0; k < K; k++) {
		struct epoch_rank *a = &acc[k];
		a->wall_s = er->wall_s;
		for (unsigned i = 0; i < m->p[k].nworkers; i++)
			io_stats_merge(&a->io, &m->p[k].workers[i].stats);
		io_stats_merge(&er->io, &a->io);
		er->compute_s += a->compute_s / K;
		er->conf_s += a->conf_s / K;
		er->step_s += a->step_s / K;
		er->barrier_s += a->barrier_s / K;
		er->copy_s += a->copy_s / K;
		er->copy_bytes += a->copy_bytes;
		hist_merge(&er->wait, &a->wait);
		m->p[k].time_base += er->wall_s;
	}
	epoch_line(&pg, what, er, er->io.bytes);
	if (rc == 0 && run->err.code)
		rc = run->err.code;
	return agree(run, rc);
}

static int train_run_multi(struct run *run, struct train_result *res)
{
	const struct config *cfg = &run->cfg;
	struct multi m = {.k = (int)cfg->train.accelerators_per_rank};
	int rc = 0;
	uint64_t t0 = timer_now_ns();

	memset(res, 0, sizeof(*res));
	res->epochs = (int)cfg->train.epochs;
	res->naccel = m.k;
	res->per_epoch = calloc((size_t)res->epochs, sizeof(*res->per_epoch));
	res->accel = calloc((size_t)res->epochs * (size_t)m.k, sizeof(*res->accel));
	res->timeline = calloc(TIMELINE_MAX, sizeof(*res->timeline));
	m.s = calloc((size_t)m.k, sizeof(*m.s));
	m.p = calloc((size_t)m.k, sizeof(*m.p));
	if (!res->per_epoch || !res->accel || !res->timeline || !m.s || !m.p)
		rc = run_fail(run, -ENOMEM, "out of memory");
	else if (strcmp(run->compute_ops->name, "cpu") != 0)
		rc = run_fail(run, -FB_ECONFIG,
			      "%s: accelerators_per_rank = %d needs the CPU emulation; accelerator "
			      "%s emulates one device per rank (set accelerator = cpu)",
			      cfg->source, m.k, run->compute_ops->name);
	for (int k = 0; rc == 0 && k < m.k; k++)
		if ((rc = sampler_init(&m.s[k], run)) == 0)
			m.nsampler++;
	if (rc == 0)
		rc = index_files(run);
	if ((rc = agree(run, rc)) == 0)
		rc = agree(run, open_shared(run));
	for (int k = 0; rc == 0 && k < m.k; k++) {
		struct train_result scratch = {0};
		rc = pool_init(run, &m.p[k], &scratch);
		m.npool++;
		res->buffer_bytes += scratch.buffer_bytes;
		if (k == 0)
			res->binding = scratch.binding;
		else
			json_decref(scratch.binding);
		m.p[k].s = &m.s[k];
		rc = agree(run, rc);
	}
	res->setup_s = timer_ns_to_s(timer_now_ns() - t0);
	if (rc == 0 && run->rank == 0)
		run_warn(
		    run,
		    "accelerators_per_rank = %d: %d loaders of %u reader threads each, %u reader "
		    "threads and one trainer per rank (summary.json \"binding\" counts one "
		    "loader's threads)",
		    m.k, m.k, m.p[0].nworkers, (unsigned)m.k * m.p[0].nworkers);
	if (rc == 0) {
		struct epoch_ctx e = {run,
				      &m.p[0],
				      &m.s[0],
				      res,
				      (uint64_t)cfg->dataset.seed * 31 + 7 + (uint64_t)run->rank,
				      0,
				      false};
		for (int ep = 0; ep < res->epochs && rc == 0; ep++)
			rc = multi_epoch(&e, &m, ep, &res->per_epoch[ep],
					 &res->accel[(size_t)ep * (size_t)m.k]);
	}
	for (int k = 0; k < m.npool; k++) {
		if (k == 0)
			pool_timeline_collect(&m.p[k], res);
		pool_free(run, &m.p[k]);
	}
	for (int k = 0; k < m.nsampler; k++)
		sampler_free(&m.s[k]);
	free(m.s);
	free(m.p);
	int crc = close_shared(run);
	return agree(run, rc ? rc : crc);
}

/* summary.json "binding": whether the trainer reads a batch no reader has started, and how many
 * it read (all ranks, training and evaluation). Collective. */
static void binding_trainer_reads(struct run *run, struct train_result *res, bool on,
				  unsigned long long batches)
{
	unsigned long long all = 0;

	MPI_Reduce(&batches, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, run->comm);
	if (!res->binding)
		return;
	json_object_set_new(res->binding, "trainer_reads", json_boolean(on));
	json_object_set_new(res->binding, "trainer_read_batches", json_integer((json_int_t)all));
}

int train_run(struct run *run, struct train_result *res)
{
	const struct config *cfg = &run->cfg;
	struct sampler s;
	struct pool p;
	struct eval_state ev;
	int rc = 0;
	uint64_t t0 = timer_now_ns();

	if (cfg->train.accelerators_per_rank > 1)
		return train_run_multi(run, res);
	memset(res, 0, sizeof(*res));
	memset(&ev, 0, sizeof(ev));
	res->epochs = (int)cfg->train.epochs;
	res->per_epoch = calloc((size_t)res->epochs, sizeof(*res->per_epoch));
	res->timeline = calloc(TIMELINE_MAX, sizeof(*res->timeline));
	if (!res->per_epoch || !res->timeline)
		rc = run_fail(run, -ENOMEM, "out of memory");
	if (rc == 0)
		rc = sampler_init(&s, run);
	if (rc == 0)
		rc = index_files(run);
	if ((rc = agree(run, rc)) < 0)
		return rc;
	rc = open_shared(run);
	if ((rc = agree(run, rc)) < 0) {
		close_shared(run);
		return rc;
	}
	rc = pool_init(run, &p, res);
	if ((rc = agree(run, rc)) == 0)
		rc = eval_setup(run, &ev, res);
	res->setup_s = timer_ns_to_s(timer_now_ns() - t0);
	if (rc == 0) {
		struct epoch_ctx e = {
		    run, &p,   &s, res, (uint64_t)cfg->dataset.seed * 31 + 7 + (uint64_t)run->rank,
		    0,	 false};
		p.s = &s;
		for (int ep = 0; ep < res->epochs && rc == 0; ep++) {
			struct epoch_rank *er = &res->per_epoch[ep];
			double b = 0;
			rc = epoch_run(&e, ep, er);
			e.gstep0 += s.min_steps;
			/* Between epochs every rank agreed: the checkpoint's collectives match. Its
			 * blocked time counts in the epoch's wall time and its last step's time. */
			if (rc == 0)
				rc = checkpoint_train_epoch(run, ep, er->wall_s, er->steps, &b);
			er->wall_s += b;
			er->step_s += b;
			/* The evaluation pass is timed apart: training's figures leave it out. */
			if (rc == 0 && eval_due(cfg, ep))
				rc = eval_pass(&e, &ev, ep);
		}
		pool_timeline_collect(&p, res);
	}
	/* Async checkpoints: the last one is made durable before the run ends. */
	rc = checkpoint_train_end(run, rc);
	unsigned long long tb = p.trainer_batches + (ev.pool_made ? ev.p.trainer_batches : 0);
	bool treads = p.trainer_reads;
	eval_teardown(run, &ev, res);
	pool_free(run, &p);
	sampler_free(&s);
	int crc = close_shared(run);
	if ((rc = agree(run, rc ? rc : crc)) == 0)
		binding_trainer_reads(run, res, treads, tb);
	return rc;
}

void train_result_free(struct train_result *res)
{
	json_decref(res->binding);
	free(res->per_epoch);
	free(res->eval);
	free(res->eval_epoch);
	free(res->accel);
	free(res->timeline);
	memset(res, 0, sizeof(*res));
}
