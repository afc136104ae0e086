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
#include "../bench/cachestate.h"
#include "../bench/cpus.h"
#include "../bench/live.h"
#include "../bench/progress.h"
#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "../formats/format.h"
#include "../bench/compute/compute.h"
#include "../bench/timer.h"
#include "../bench/trace.h"
#include "../formats/sample.h"
#include "batch_window.h"
#include "sampler.h"

/* ---- epochs ---------------------------------------------------------------------------- */

static double timeval_diff_s(const struct timeval *a, const struct timeval *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_usec - a->tv_usec) / 1e6;
}

#define LOADERS_MAX 256 /* accelerators_per_rank's range */

/* The trainer of one rank and its loaders: one (sampler, reader pool) per emulated accelerator,
 * k = accelerators_per_rank, usually 1. With k > 1, accelerator a = j x ranks + rank reads the
 * share of the samples of a out of ranks x k through loader j (so a rank's accelerators read
 * only the files the rank holds, i % ranks == rank). They step together: each step takes every
 * loader's batch, copies each, and computes once for all (the k devices compute in parallel;
 * the CPU emulation waits computation_time once). An accelerator whose batch came early waits
 * for the others: that wait counts as barrier time, as it would at the gradient allreduce. */
struct epoch_ctx {
	struct run *run;
	struct pool *pool; /* [k] */
	struct sampler *s; /* [k] */
	int k;
	struct train_result *res;
	uint64_t rng;	 /* compute-time variates */
	uint64_t gstep0; /* checkpoint_every_steps: steps every rank had in earlier epochs */
	bool eval;	 /* an evaluation pass (eval_enter): no checkpoints inside it */
	/* The epoch so far, for the live thread (bench/live.h): steps, compute and step time. */
	_Atomic uint64_t live_steps, live_compute_ns, live_step_ns;
	uint64_t live_total; /* this rank's steps in the epoch */
};

/* One step of every loader: the batches, when each was ready, the times of the compute. */
struct step_state {
	struct slot *slot[LOADERS_MAX];
	uint64_t ready[LOADERS_MAX];	   /* ns: loader j's batch was in memory */
	struct step_times st[LOADERS_MAX]; /* loader j's copy (k = 1: the whole step) */
	bool mine[LOADERS_MAX];		   /* loader j has this step */
	uint64_t busy_ns;		   /* the compute every batch of the step shared */
	uint64_t prev, pre_ns, post_ns;	   /* previous step's end; agreements before, after */
	uint64_t t_ready, t_done, t_end;   /* every batch ready, compute done, step ended */
	uint64_t t_host;		   /* the trainer's host_time done: compute begins */
	double secs;			   /* configured compute of the step */
	bool any;			   /* some loader has this step */
	bool stop;			   /* every rank ends the epoch here (bench/live.h) */
};

/* Step barrier: the allreduce a data-parallel step ends with; it also carries failure, and an
 * early stop (time_limit, steady_state) so that every rank ends the epoch at the same step. */
static int step_barrier(struct run *run, int rc, uint64_t *ns, bool *stop)
{
	int in = rc < 0 ? 2 : live_stopping(run) != LIVE_RUN, out = 0;
	uint64_t t0 = timer_now_ns();

	agree_allreduce(run, &in, &out, 1, MPI_INT, MPI_MAX);
	*ns = timer_now_ns() - t0;
	*stop = out == 1;
	if (rc == 0 && out == 2)
		return run_fail(run, -FB_EPEER, "stopped because another rank failed");
	return rc;
}

/* Takes step's batch from every loader that has it (collective mode: reads it, every rank,
 * whatever its steps, after agreeing that all are healthy: a failed rank never leaves the
 * others waiting inside a collective read). */
static int step_take(struct epoch_ctx *e, bool coll, uint64_t step, struct step_state *ss, int rc)
{
	ss->any = false;
	for (int j = 0; j < e->k; j++) {
		ss->slot[j] = NULL;
		ss->ready[j] = 0;
		memset(&ss->st[j], 0, sizeof(ss->st[j]));
		ss->mine[j] = step < e->s[j].steps;
		ss->any |= ss->mine[j];
	}
	ss->pre_ns = ss->post_ns = ss->busy_ns = 0;
	ss->secs = 0;
	if (coll) {
		if ((rc = step_barrier(e->run, rc, &ss->pre_ns, &ss->stop)) < 0 || ss->stop)
			return rc;
		ss->slot[0] = &e->pool[0].slots[0];
		rc = collective_batch(&e->pool[0], &e->pool[0].workers[0], ss->slot[0], step);
	} else {
		for (int j = 0; j < e->k && rc == 0; j++)
			if (ss->mine[j])
				ss->slot[j] =
				    pool_batch_take(&e->pool[j], step, &rc, &ss->ready[j]);
	}
	for (int j = 0; j < e->k; j++)
		if (!ss->ready[j])
			ss->ready[j] = timer_now_ns();
	ss->t_ready = e->k == 1 ? ss->ready[0] : timer_now_ns();
	return rc;
}

/* The trainer's host_time, then the compute plug-in's step: one call with the batch (k = 1), or
 * a copy of each loader's batch and one compute for all. */
static int step_compute(struct epoch_ctx *e, struct step_state *ss, int rc)
{
	struct run *run = e->run;
	const struct config *cfg = &run->cfg;
	struct step_times sc = {0};

	/* the framework's own work on the step first (host_time): lost time, not compute */
	ss->t_host = ss->t_ready;
	if (rc == 0 && ss->any && cfg->train.host_time > 0) {
		pool_cpu_busy(cfg->train.host_time);
		ss->t_host = timer_now_ns();
	}
	if (e->k == 1) {
		if (rc == 0 && ss->mine[0]) {
			ss->secs = compute_step_seconds(cfg->train.computation_time,
							cfg->train.computation_time_stdev, &e->rng);
			rc = run->compute_ops->step(run->compute, ss->slot[0]->buf,
						    ss->slot[0]->bytes, ss->secs, &ss->st[0]);
		}
		ss->busy_ns = ss->st[0].busy_ns;
		return rc;
	}
	for (int j = 0; j < e->k && rc == 0; j++)
		if (ss->slot[j])
			rc = run->compute_ops->step(run->compute, ss->slot[j]->buf,
						    ss->slot[j]->bytes, 0, &ss->st[j]);
	if (rc == 0 && ss->any) {
		ss->secs = compute_step_seconds(cfg->train.computation_time,
						cfg->train.computation_time_stdev, &e->rng);
		rc = run->compute_ops->step(run->compute, NULL, 0, ss->secs, &sc);
	}
	ss->busy_ns = sc.busy_ns;
	return rc;
}

/* Records one step's timings (only the loaders that have the step; warm-up steps are left out
 * of AU and data wait): on the timeline, and in acc[j] (k = 1: er itself). pre_ns: the
 * agreement before a collective read, which is neither wait nor compute. */
static void step_account(struct epoch_ctx *e, struct epoch_rank *er, struct epoch_rank *acc,
			 uint64_t step, uint64_t t0, const struct step_state *ss)
{
	struct timeline_event *tl = e->res->timeline;
	int *n = &e->res->ntimeline;
	double tb = e->pool[0].time_base, copy_all = 0;

	if (!ss->any)
		return;
	if (ss->pre_ns)
		tl_add(tl, n, TIMELINE_MAX, 0, TL_BARRIER, tb + timer_ns_to_s(ss->prev - t0),
		       tb + timer_ns_to_s(ss->prev + ss->pre_ns - t0));
	tl_add(tl, n, TIMELINE_MAX, 0, TL_WAIT, tb + timer_ns_to_s(ss->prev + ss->pre_ns - t0),
	       tb + timer_ns_to_s(ss->t_ready - t0));
	tl_add(tl, n, TIMELINE_MAX, 0, TL_COMPUTE, tb + timer_ns_to_s(ss->t_host - t0),
	       tb + timer_ns_to_s(ss->t_done - t0));
	if (e->run->trace) {
		trace_step(e->run->trace, "data_wait", ss->prev + ss->pre_ns, ss->t_ready, step);
		if (ss->t_host > ss->t_ready)
			trace_step(e->run->trace, "host", ss->t_ready, ss->t_host, step);
		trace_step(e->run->trace, "compute", ss->t_host, ss->t_done, step);
	}
	if (ss->post_ns)
		tl_add(tl, n, TIMELINE_MAX, 0, TL_BARRIER, tb + timer_ns_to_s(ss->t_done - t0),
		       tb + timer_ns_to_s(ss->t_end - t0));
	if (e->k > 1)
		er->steps++;
	for (int j = 0; j < e->k; j++)
		copy_all += timer_ns_to_s(ss->st[j].copy_ns);
	for (int j = 0; j < e->k; j++) {
		struct epoch_rank *a = e->k == 1 ? er : &acc[j];
		double copy_j = timer_ns_to_s(ss->st[j].copy_ns);
		if (!ss->mine[j] || (e->k > 1 && !ss->slot[j]))
			continue;
		a->steps++;
		if (step < (uint64_t)e->run->cfg.train.exclude_start_steps)
			continue;
		a->compute_s += timer_ns_to_s(ss->busy_ns);
		a->conf_s += ss->secs;
		a->step_s += timer_ns_to_s(ss->t_end - ss->prev);
		/* k > 1: waiting for the other loaders' batches and copies (lock-step) */
		a->barrier_s +=
		    timer_ns_to_s(ss->pre_ns + ss->post_ns + (ss->t_ready - ss->ready[j])) +
		    (copy_all - copy_j);
		a->copy_s += copy_j;
		a->copy_bytes += ss->st[j].copy_bytes;
		hist_add(&a->wait, ss->ready[j] - ss->prev - ss->pre_ns);
	}
}

static void epoch_progress(struct epoch_ctx *e, struct progress *pg, uint64_t step, uint64_t total,
			   uint64_t t0)
{
	uint64_t bytes = 0;
	char extra[64];

	if (!progress_due(pg))
		return;
	for (int j = 0; j < e->k; j++)
		for (unsigned i = 0; i < e->pool[j].nall; i++)
			bytes += atomic_load_explicit(&e->pool[j].workers[i].progress_bytes,
						      memory_order_relaxed);
	snprintf(extra, sizeof(extra), "%.0f MiB/s (rank 0)",
		 (double)bytes / 1048576.0 / timer_ns_to_s(timer_now_ns() - t0 + 1));
	progress_update(pg, (double)(step + 1) / (double)total, extra);
}

/* What this rank did so far in the epoch, for the live thread (bench/live.h): atomics only. */
static void epoch_live_sample(void *arg, struct live_sample *ls)
{
	struct epoch_ctx *e = arg;

	for (int j = 0; j < e->k; j++)
		for (unsigned i = 0; i < e->pool[j].nall; i++) {
			const struct worker *w = &e->pool[j].workers[i];
			ls->bytes +=
			    (double)atomic_load_explicit(&w->progress_bytes, memory_order_relaxed);
			ls->ops +=
			    (double)atomic_load_explicit(&w->progress_ops, memory_order_relaxed);
		}
	ls->steps = (double)atomic_load_explicit(&e->live_steps, memory_order_relaxed);
	ls->compute_s =
	    timer_ns_to_s(atomic_load_explicit(&e->live_compute_ns, memory_order_relaxed));
	ls->step_s = timer_ns_to_s(atomic_load_explicit(&e->live_step_ns, memory_order_relaxed));
	ls->done = e->live_total ? ls->steps / (double)e->live_total : 1;
}

/* Training epochs only: an evaluation pass is timed apart. A failure to start the thread is a
 * warning: the run goes on without live lines. */
static void epoch_live_begin(struct epoch_ctx *e, int epoch, const char *what)
{
	atomic_store(&e->live_steps, 0);
	atomic_store(&e->live_compute_ns, 0);
	atomic_store(&e->live_step_ns, 0);
	e->live_total = e->s[0].steps;
	if (!e->eval)
		live_begin(e->run, what, epoch, (int)e->run->cfg.train.epochs, epoch_live_sample,
			   e);
}

/* After each step: the live thread's counters; without a step barrier a rank stops at its next
 * step once the live thread says every rank agreed to (with one, the barrier carries it). */
static void epoch_live_step(struct epoch_ctx *e, struct step_state *ss, uint64_t step, bool coll)
{
	const struct run *run = e->run;

	if (coll) { /* the trainer read the batch itself: its counts, published here */
		struct worker *w = &e->pool[0].workers[0];
		atomic_store_explicit(&w->progress_bytes, w->stats.bytes, memory_order_relaxed);
		atomic_store_explicit(&w->progress_ops, w->stats.ops, memory_order_relaxed);
	}
	atomic_store_explicit(&e->live_steps, step + 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->live_compute_ns, ss->busy_ns, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->live_step_ns, ss->t_end - ss->prev, memory_order_relaxed);
	if (!coll && !e->eval && !(run->cfg.train.step_barrier && step < e->s[0].min_steps))
		ss->stop |= live_stopping(run) != LIVE_RUN;
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

/* Deals the epoch's samples to every loader, evicts the dataset when asked (every rank: a
 * collective count) and clears the readers' counts. rc: a failure before it. The agreed code. */
static int epoch_begin(struct epoch_ctx *e, int epoch, struct epoch_rank *er,
		       struct epoch_rank *acc, int rc)
{
	struct run *run = e->run;
	int P = run->nranks;

	memset(er, 0, sizeof(*er));
	for (int j = 0; acc && j < e->k; j++)
		memset(&acc[j], 0, sizeof(acc[j]));
	for (int j = 0; j < e->k && rc == 0; j++)
		rc = sampler_epoch(&e->s[j], run, epoch, j * P + run->rank, P * e->k);
	int erc = evict_dataset(run, !e->eval);
	if (rc == 0)
		rc = erc;
	if ((rc = agree(run, rc)) < 0)
		return rc;
	if (!e->eval && /* outside the epoch's clock, like the eviction */
	    (rc = cachestate_record(run, epoch, "before")) < 0)
		return rc;
	for (int j = 0; j < e->k; j++)
		for (unsigned i = 0; i < e->pool[j].nall; i++) {
			io_stats_reset(&e->pool[j].workers[i].stats);
			atomic_store(&e->pool[j].workers[i].progress_bytes, 0);
			atomic_store(&e->pool[j].workers[i].progress_ops, 0);
		}
	return 0;
}

/* The epoch's reads, and with k > 1 the rank's figures from its accelerators': their loaders'
 * reads summed, their times averaged (they share the step timeline), every accelerator's data
 * waits in one histogram. Every pool's timeline moves past the epoch. */
static void epoch_fold(struct epoch_ctx *e, struct epoch_rank *er, struct epoch_rank *acc)
{
	int K = e->k;

	for (int j = 0; j < K; j++) {
		struct pool *p = &e->pool[j];
		struct epoch_rank *a = K == 1 ? er : &acc[j];
		if (K > 1)
			a->wall_s = er->wall_s;
		for (unsigned i = 0; i < p->nall; i++)
			io_stats_merge(&a->io, &p->workers[i].stats);
		p->time_base += er->wall_s;
		if (K == 1)
			continue;
		io_stats_merge(&er->io, &a->io);
		er->compute_s += a->compute_s / K;
		er->conf_s += a->conf_s / K;
		er->step_s += a->step_s / K;
		er->barrier_s += a->barrier_s / K;
		er->copy_s += a->copy_s / K;
		er->copy_bytes += a->copy_bytes;
		hist_merge(&er->wait, &a->wait);
	}
}

/* A step every rank has, when a checkpoint is due after it (training only): all agree they are
 * healthy, then save; the step's time includes the checkpoint (AU's denominator, the epoch's
 * wall). *agreed: this rank made the checkpoint's agreement with a failure. */
static int step_checkpoint(struct epoch_ctx *e, uint64_t step, uint64_t t0, double *ck_s,
			   bool *agreed, int rc)
{
	double b, mean;

	if (e->eval || step >= e->s[0].min_steps ||
	    !checkpoint_train_due_step(e->run, e->gstep0 + step + 1))
		return rc;
	mean = (timer_ns_to_s(timer_now_ns() - t0) - *ck_s) / (double)(step + 1);
	rc = checkpoint_train_step(e->run, rc, mean, &b);
	*ck_s += b;
	*agreed = rc < 0;
	return rc;
}

/* The epoch's progress line and live statistics (the epoch handed to their thread, which
 * the first epoch starts; live.csv opened before it: outside the clock), then every rank
 * starts together: the readers are woken (not in collective mode) and the clock starts.
 * Returns the start (ns); *ru0: the CPU used so far. */
static uint64_t epoch_start(struct epoch_ctx *e, int epoch, bool coll, struct progress *pg,
			    char *what, size_t len, struct rusage *ru0)
{
	struct run *run = e->run;
	uint64_t t0;

	if (e->eval)
		snprintf(what, len, "evaluation after epoch %d", epoch + 1);
	else
		snprintf(what, len, "epoch %d/%" PRId64, epoch + 1, run->cfg.train.epochs);
	progress_begin(pg, what, run->rank == 0 && run->verbose >= 0);
	epoch_live_begin(e, epoch, what);
	MPI_Barrier(run->comm);
	getrusage(RUSAGE_SELF, ru0);
	t0 = timer_now_ns();
	run_phase_began(run, t0);
	tl_add(e->res->timeline, &e->res->ntimeline, TIMELINE_MAX, 0, TL_EPOCH,
	       e->pool[0].time_base, e->pool[0].time_base);
	for (int j = 0; j < e->k; j++) {
		e->pool[j].epoch_t0 = e->pool[j].step_end = t0;
		if (!coll)
			pool_start(&e->pool[j], e->s[j].steps);
	}
	return t0;
}

/* Leaves the epoch's loop together: collective mode's last agreement, a failed rank's
 * catch-up with a checkpoint's agreement the others wait at, the readers stopped. */
static int epoch_stop(struct epoch_ctx *e, bool coll, uint64_t step, uint64_t total, bool ck_agreed,
		      int rc)
{
	struct run *run = e->run;

	/* Collective mode: a failure in the last step still needs its matching agreement. */
	if (coll && step == total) {
		uint64_t ns;
		bool stop;
		rc = step_barrier(run, rc, &ns, &stop);
	}
	if (rc < 0 && !coll)
		agree_notify_failure(run);
	if (rc < 0 && !coll && !ck_agreed) /* the others may wait at a checkpoint's agreement */
		rc = checkpoint_train_catchup(run, rc, e->gstep0 + step,
					      e->gstep0 + e->s[0].min_steps);
	for (int j = 0; j < e->k; j++) {
		struct pool *p = &e->pool[j];
		if (!coll)
			pool_stop(p);
		int crc = p->trainer_reads ? pool_reader_close_all(&p->workers[p->nworkers]) : 0;
		if (rc == 0 && crc < 0)
			rc = crc;
	}
	return rc;
}

/* One epoch of every loader. With reader threads, a failed rank tells the others
 * (agree_notify_failure) and they stop at their next step; with step barriers or collective
 * reads, the failure travels in the agreement every rank makes at the same step, so all leave
 * the loop together and no collective call is left unmatched. acc: k > 1, each accelerator's
 * figures. */
static int epoch_run(struct epoch_ctx *e, int epoch, struct epoch_rank *er, struct epoch_rank *acc)
{
	struct run *run = e->run;
	const struct config *cfg = &run->cfg;
	bool coll = collective_mode(run), ck_agreed = false;
	uint64_t total = 0, step = 0, min_steps = e->s[0].min_steps;
	double ck_s = 0; /* checkpoints inside this epoch: blocked time */
	struct step_state *ss = calloc(1, sizeof(*ss));
	struct progress pg;
	char what[64];
	int rc = epoch_begin(e, epoch, er, acc, ss ? 0 : run_fail(run, -ENOMEM, "out of memory"));

	if (rc < 0) {
		free(ss);
		return rc;
	}
	for (int j = 0; j < e->k; j++)
		total = coll ? e->s[j].max_steps : (e->s[j].steps > total ? e->s[j].steps : total);
	struct rusage ru0, ru1;
	uint64_t t0 = epoch_start(e, epoch, coll, &pg, what, sizeof(what), &ru0);
	ss->prev = t0;
	for (; step < total && (coll || rc == 0) && !ss->stop; step++) {
		if ((rc = step_take(e, coll, step, ss, rc)) < 0 && coll && !ss->slot[0])
			break; /* the agreement before the collective read failed */
		if (ss->stop)
			break; /* collective mode: every rank agreed to stop before reading */
		rc = step_compute(e, ss, rc);
		ss->t_done = timer_now_ns();
		for (int j = 0; !coll && j < e->k; j++)
			if (ss->slot[j])
				pool_batch_release(&e->pool[j], step);
		if (rc == 0 && run->stop && *run->stop)
			rc = run_fail(run, -FB_EINTR, "interrupted by a signal");
		if (rc < 0 && !coll)
			agree_notify_failure(run);
		if (cfg->train.step_barrier && step < min_steps) {
			/* Every rank has this step: the allreduce of data-parallel training. */
			rc = step_barrier(run, rc, &ss->post_ns, &ss->stop);
			if (rc < 0 && coll) {
				step++;
				break;
			}
		} else if (rc == 0 && !coll && agree_peer_failed(run)) {
			rc = run_fail(run, -FB_EPEER, "stopped because another rank failed");
		}
		rc = step_checkpoint(e, step, t0, &ck_s, &ck_agreed, rc);
		if (rc < 0 && coll && ck_agreed) { /* the checkpoint's agreement failed */
			step++;
			break;
		}
		ss->t_end = timer_now_ns();
		step_account(e, er, acc, step, t0, ss);
		epoch_live_step(e, ss, step, coll);
		ss->prev = e->pool[0].step_end = ss->t_end;
		watchdog_kick_at(run, ss->t_end);
		if (total && e->s[0].steps)
			epoch_progress(e, &pg, step, total, t0);
	}
	rc = epoch_stop(e, coll, step, total, ck_agreed, rc);
	free(ss);
	uint64_t t1 = timer_now_ns();
	getrusage(RUSAGE_SELF, &ru1);
	if (!e->eval) /* the live thread's end and its last gathers: outside the clock */
		live_end(run);
	progress_end(&pg);
	er->wall_s = timer_ns_to_s(t1 - t0);
	er->cpu_user_s = timeval_diff_s(&ru0.ru_utime, &ru1.ru_utime);
	er->cpu_sys_s = timeval_diff_s(&ru0.ru_stime, &ru1.ru_stime);
	epoch_fold(e, er, acc);
	if (rc != -FB_EINTR) /* a stopped epoch is not done, nor kept */
		epoch_line(&pg, what, er, er->io.bytes);
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
	struct epoch_ctx e = {.run = run,
			      .pool = &ev->p,
			      .s = &ev->s,
			      .k = 1,
			      .res = res,
			      .rng = train->rng ^ 0x6576616cULL,
			      .eval = true};
	int rc;

	ev->p.s = &ev->s;
	ev->p.time_base = train->pool->time_base;
	eval_enter(run, &sw);
	rc = epoch_run(&e, ep, &res->eval[res->nevals], NULL);
	eval_leave(run, &sw);
	train->pool->time_base = ev->p.time_base;
	train->rng = e.rng ^ 0x6576616cULL;
	res->eval_epoch[res->nevals++] = ep;
	return rc;
}

/* ---- the run ---------------------------------------------------------------------------- */

/* The rank's loaders: k samplers and reader pools (accelerators_per_rank, usually 1). */
struct loaders {
	int k;
	struct sampler *s; /* [k] */
	struct pool *p;	   /* [k] */
	int nsampler, npool;
};

/* Samplers, file indexes, shared handles and reader pools of every loader (collective). The
 * first pool's binding is the run's (summary.json "binding" counts one loader's threads). */
static int loaders_init(struct run *run, struct loaders *l, struct train_result *res, int rc)
{
	for (int j = 0; rc == 0 && j < l->k; j++)
		if ((rc = sampler_init(&l->s[j], run)) == 0)
			l->nsampler++;
	if (rc == 0)
		rc = index_files(run);
	if ((rc = agree(run, rc)) == 0)
		rc = agree(run, open_shared(run));
	for (int j = 0; rc == 0 && j < l->k; j++) {
		struct train_result scratch = {0};
		rc = pool_init(run, &l->p[j], &scratch);
		l->npool++;
		res->buffer_bytes += scratch.buffer_bytes;
		if (j == 0)
			res->binding = scratch.binding;
		else
			json_decref(scratch.binding);
		l->p[j].s = &l->s[j];
		rc = agree(run, rc);
	}
	if (rc == 0 && l->k > 1 && run->rank == 0)
		run_warn(
		    run,
		    "accelerators_per_rank = %d: %d loaders of %u reader threads each, %u reader "
		    "threads and one trainer per rank (summary.json \"binding\" counts one "
		    "loader's threads)",
		    l->k, l->k, l->p[0].nworkers, (unsigned)l->k * l->p[0].nworkers);
	return rc;
}

static void loaders_free(struct run *run, struct loaders *l, struct train_result *res)
{
	for (int j = 0; j < l->npool; j++) {
		if (j == 0)
			pool_timeline_collect(&l->p[j], res);
		pool_free(run, &l->p[j]);
	}
	for (int j = 0; j < l->nsampler; j++)
		sampler_free(&l->s[j]);
	free(l->s);
	free(l->p);
}

/* The results' arrays; accelerators_per_rank = k > 1 needs the CPU emulation. */
static int result_init(struct run *run, struct train_result *res, struct loaders *l)
{
	const struct config *cfg = &run->cfg;

	memset(res, 0, sizeof(*res));
	res->epochs = (int)cfg->train.epochs;
	res->per_epoch = calloc((size_t)res->epochs, sizeof(*res->per_epoch));
	res->timeline = calloc(TIMELINE_MAX, sizeof(*res->timeline));
	l->s = calloc((size_t)l->k, sizeof(*l->s));
	l->p = calloc((size_t)l->k, sizeof(*l->p));
	if (l->k > 1) {
		res->naccel = l->k;
		res->accel = calloc((size_t)res->epochs * (size_t)l->k, sizeof(*res->accel));
	}
	if (!res->per_epoch || !res->timeline || !l->s || !l->p || (l->k > 1 && !res->accel))
		return run_fail(run, -ENOMEM, "out of memory");
	if (l->k > 1 && strcmp(run->compute_ops->name, "cpu") != 0)
		return run_fail(run, -FB_ECONFIG,
				"%s: accelerators_per_rank = %d needs the CPU emulation; "
				"accelerator %s emulates one device per rank (set accelerator = "
				"cpu)",
				cfg->source, l->k, run->compute_ops->name);
	return 0;
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

/* The epochs: each followed by the checkpoint due after it and the evaluation pass due. */
static int train_epochs(struct epoch_ctx *e, struct eval_state *ev)
{
	struct run *run = e->run;
	struct train_result *res = e->res;
	int rc = 0;

	int finished = 0;

	for (int ep = 0; ep < res->epochs && rc == 0; ep++) {
		struct epoch_rank *er = &res->per_epoch[ep];
		double b = 0;
		rc = epoch_run(e, ep, er,
			       res->accel ? &res->accel[(size_t)ep * (size_t)e->k] : NULL);
		finished += rc == 0;
		if (rc == 0) /* agreed: every rank measures */
			rc = cachestate_record(run, ep, "after");
		e->gstep0 += e->s[0].min_steps;
		if (rc == 0 && live_stopped(run, &res->stopped_after)) {
			res->stopped_early = live_stopping(run);
			res->epochs = ep + 1; /* the later epochs are left out, not failed */
			break;
		}
		/* Between epochs every rank agreed: the checkpoint's collectives match. Its blocked
		 * time counts in the epoch's wall time and its last step's time. */
		if (rc == 0)
			rc = checkpoint_train_epoch(run, ep, er->wall_s, er->steps, &b);
		er->wall_s += b;
		er->step_s += b;
		/* The evaluation pass is timed apart: training's figures leave it out. */
		if (rc == 0 && eval_due(&run->cfg, ep))
			rc = eval_pass(e, ev, ep);
	}
	/* A signal: the repetition keeps the epochs every rank finished (the agreement at the
	 * end of each epoch makes that count the same on every rank). */
	if (rc == -FB_EINTR) {
		res->epochs = finished;
		res->interrupted = true;
	}
	return rc;
}

int train_run(struct run *run, struct train_result *res)
{
	const struct config *cfg = &run->cfg;
	struct loaders l = {.k = (int)cfg->train.accelerators_per_rank};
	struct eval_state ev;
	uint64_t t0 = timer_now_ns();
	int rc;

	memset(&ev, 0, sizeof(ev));
	if (l.k < 1)
		l.k = 1;
	rc = loaders_init(run, &l, res, result_init(run, res, &l));
	if (rc == 0)
		rc = eval_setup(run, &ev, res);
	res->setup_s = timer_ns_to_s(timer_now_ns() - t0);
	if (rc == 0) {
		struct epoch_ctx e = {.run = run,
				      .pool = l.p,
				      .s = l.s,
				      .k = l.k,
				      .res = res,
				      .rng = (uint64_t)cfg->dataset.seed * 31 + 7 +
					     (uint64_t)run->rank};
		rc = train_epochs(&e, &ev);
		live_close(run); /* the live thread, which sampled e, ends with the epochs */
		cachestate_warn(run);
	}
	/* Async checkpoints: the last one is made durable before the run ends. */
	rc = checkpoint_train_end(run, rc);
	unsigned long long tb = ev.pool_made ? ev.p.trainer_batches : 0;
	bool treads = l.npool && l.p[0].trainer_reads;
	for (int j = 0; j < l.npool; j++)
		tb += l.p[j].trainer_batches;
	eval_teardown(run, &ev, res);
	loaders_free(run, &l, res);
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
