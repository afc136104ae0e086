/* The checkpoint workload's results: per checkpoint and rank, reduced on rank 0 into
 * summary.json; table.md and report.md are rendered from it as checkpoint_outputs.c describes
 * them, and written with the run folder (bench/outputs.h, bench/results.h). */
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
#include "../bench/outputs.h"
#include "../bench/results.h"
#include "../bench/rng.h"
#include "../bench/run.h"
#include "../bench/safefile.h"
#include "../bench/timer.h"
#include "../bench/storage/fs.h"
#include "../bench/storage/storage.h"
#include "checkpoint_outputs.h"
#include "evict.h"
#include "workload.h"

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

struct ckpt_totals {
	double wbw_sum, rbw_sum, durable_sum, delete_sum, wbytes, rbytes;
	int n, nread, nwrite;
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
	if (c0->wrote) {
		json_object_set_new(o, "bytes_written", json_integer((json_int_t)wb));
		json_object_set_new(o, "write_calls", json_integer((json_int_t)wcalls));
		json_object_set_new(o, "write_seconds", json_real(wmax));
		json_object_set_new(o, "write_bandwidth_MiB_per_second", json_real(wbw));
		json_object_set_new(o, "time_to_durable_seconds",
				    json_real(ckpt_durable(c0, wmax)));
		json_object_set_new(o, "write_seconds_per_rank", w ? ckpt_skew(w, n) : json_null());
	}
	if (c0->read) {
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
	if (ckpt_phased(&run->cfg))
		ckpt_phases_record(run, c0, wmax, rmax, o);
	if (c0->wrote) {
		t->wbw_sum += wbw;
		t->wbw_min = t->nwrite ? fmin(t->wbw_min, wbw) : wbw;
		t->wbw_max = fmax(t->wbw_max, wbw);
		t->nwrite++;
	}
	t->durable_sum += c0->wrote ? ckpt_durable(c0, wmax) : 0;
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
	int n = b->nwrite - a->nwrite, nr = b->nread - a->nread;
	json_t *o = json_object();

	json_object_set_new(o, "repetition", json_integer(r + 1));
	json_object_set_new(o, "checkpoints", json_integer(b->n - a->n));
	if (n > 0)
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

/* Every checkpoint of every repetition gathered to rank 0: its record in list, each
 * repetition's columns in rj, the sums in t. Collective; all, list and rj are rank 0's. */
static void ckpt_gather(struct run *run, void *const *reps, int nreps, double *all, json_t *list,
			json_t *rj, struct ckpt_totals *t)
{
	double mine[V_NF];

	for (int r = 0; r < nreps; r++) {
		const struct ckpt_rep *rep = reps[r];
		struct ckpt_totals before = *t;
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
				json_array_append_new(list, ckpt_record(run, c, all, r, t));
		}
		if (run->rank == 0)
			json_array_append_new(rj, ckpt_rep_json(run, r, &before, t));
	}
}

/* The calls around the transfers, merged on rank 0: write and read latencies; file fsyncs;
 * namespace calls and folder fsyncs (rank 0's); files created (all ranks'). */
enum { C_FSYNC, C_FSYNC_NS, C_META, C_META_NS, C_DSYNC, C_DSYNC_NS, C_CREATE, C_CREATE_NS, C_N };
struct ckpt_calls {
	struct hist wl, rl;
	uint64_t sum[C_N];
};

static void ckpt_calls_reduce(struct run *run, const struct ckpt_state *st, struct ckpt_calls *c)
{
	uint64_t in[C_N] = {
	    [C_FSYNC] = st->wst->syncs,
	    [C_FSYNC_NS] = st->wst->sync_ns,
	    [C_META] = st->nst->meta_ops,
	    [C_META_NS] = st->nst->meta_ns,
	    [C_DSYNC] = st->nst->syncs,
	    [C_DSYNC_NS] = st->nst->sync_ns,
	    [C_CREATE] = st->wst->creates + st->nst->creates,
	    [C_CREATE_NS] = st->wst->create_ns + st->nst->create_ns,
	};

	memset(c->sum, 0, sizeof(c->sum));
	ckpt_hist_reduce(run, &st->wst->wlatency, &c->wl);
	ckpt_hist_reduce(run, &st->rst->latency, &c->rl);
	MPI_Reduce(in, c->sum, C_N, MPI_UINT64_T, MPI_SUM, 0, run->comm);
}

/* summary.json's metric: the members the metric table, compare and sweep read. first is the
 * first checkpoint's record (files and per-rank seconds). */
static json_t *ckpt_metric_json(const struct run *run, const struct ckpt_plan *p,
				const struct ckpt_totals *t, json_t *first,
				const struct ckpt_calls *c)
{
	json_t *m = json_object();

	json_object_set_new(m, "checkpoint_count", json_integer(t->n));
	json_object_set_new(m, "checkpoint_size_bytes", json_integer((json_int_t)p->total));
	json_object_set_new(m, "checkpoint_bytes_written", json_integer((json_int_t)t->wbytes));
	json_object_set_new(m, "checkpoint_bytes_read", json_integer((json_int_t)t->rbytes));
	json_object_set_new(m, "checkpoint_files", json_incref(json_object_get(first, "files")));
	json_object_set_new(m, "checkpoint_writing_ranks", json_integer(p->writers));
	if (t->nwrite) {
		json_object_set_new(m, "checkpoint_write_bandwidth_MiB_per_second",
				    json_real(t->wbw_sum / t->nwrite));
		json_object_set_new(m, "checkpoint_write_bandwidth_min_MiB_per_second",
				    json_real(t->wbw_min));
		json_object_set_new(m, "checkpoint_write_bandwidth_max_MiB_per_second",
				    json_real(t->wbw_max));
		json_object_set_new(m, "checkpoint_time_to_durable_seconds",
				    json_real(t->durable_sum / t->nwrite));
		json_object_set_new(m, "checkpoint_write_seconds_per_rank",
				    json_incref(json_object_get(first, "write_seconds_per_rank")));
	}
	if (t->nread) {
		json_object_set_new(m, "checkpoint_read_bandwidth_MiB_per_second",
				    json_real(t->rbw_sum / t->nread));
		json_object_set_new(m, "checkpoint_read_bandwidth_min_MiB_per_second",
				    json_real(t->rbw_min));
		json_object_set_new(m, "checkpoint_read_bandwidth_max_MiB_per_second",
				    json_real(t->rbw_max));
		json_object_set_new(m, "checkpoint_read_seconds_per_rank",
				    json_incref(json_object_get(first, "read_seconds_per_rank")));
		json_object_set_new(m, "checkpoint_restore_verified",
				    json_boolean(run->cfg.checkpoint.verify));
	}
	json_object_set_new(m, "checkpoint_delete_seconds", json_real(t->delete_sum));
	if (t->nwrite) {
		json_object_set_new(m, "checkpoint_write_latency_seconds",
				    ckpt_latency_json(&c->wl));
		json_object_set_new(m, "checkpoint_fsync_calls",
				    json_integer((json_int_t)c->sum[C_FSYNC]));
		json_object_set_new(m, "checkpoint_fsync_seconds",
				    json_real(timer_ns_to_s(c->sum[C_FSYNC_NS])));
		json_object_set_new(m, "checkpoint_create_calls",
				    json_integer((json_int_t)c->sum[C_CREATE]));
		json_object_set_new(m, "checkpoint_create_seconds",
				    json_real(timer_ns_to_s(c->sum[C_CREATE_NS])));
	}
	ckpt_namespace_json(m, c->sum[C_META], c->sum[C_META_NS], c->sum[C_DSYNC],
			    c->sum[C_DSYNC_NS]);
	if (t->nread)
		json_object_set_new(m, "checkpoint_read_latency_seconds",
				    ckpt_latency_json(&c->rl));
	return m;
}

/* What was done so that the restore does not read from the page cache: a back-end without
 * one (objects) evicts nothing, and says so. */
static json_t *ckpt_restore_cache_json(const struct run *run)
{
	char text[128];

	if (!run->storage->evict)
		snprintf(text, sizeof(text), "nothing evicted: the %s back-end has no page cache",
			 run->storage->name);
	else
		snprintf(text, sizeof(text), "%s",
			 run->cfg.storage.page_cache == PAGE_CACHE_DROP
			     ? "page cache dropped"
			     : "files evicted (fadvise)");
	return json_string(text);
}

/* summary.json's checkpoint: the plan, its parallelism and each rank's bytes. */
static json_t *ckpt_plan_json(const struct run *run, const struct ckpt_state *st)
{
	const struct ckpt_plan *p = &st->plan;
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
	if (p->geometry_total != p->total)
		json_object_set_new(plan, "subset",
				    json_pack("{s:I, s:I, s:I, s:I}", "ranks",
					      (json_int_t)run->nranks, "geometry_ranks",
					      (json_int_t)p->tp * p->pp * p->dp, "bytes",
					      (json_int_t)p->total, "geometry_bytes",
					      (json_int_t)p->geometry_total));
	if (ckpt_phased(&run->cfg))
		json_object_set_new(plan, "phases", ckpt_phases_json(run));
	if (ckpt_restores(&run->cfg))
		json_object_set_new(plan, "restore_cache", ckpt_restore_cache_json(run));
	return plan;
}

int checkpoint_results_write(struct run *run, void *const *reps, int nreps,
			     const struct results_ctx *ctx, const char *final_dir, bool quiet)
{
	struct ckpt_state *st = ckpt_of(run);
	struct ckpt_totals t = {0};
	struct ckpt_calls calls;
	json_t *s = NULL, *list = NULL, *rj = NULL;
	double *all = NULL;
	int rc = 0;
	/* The reductions below, on every rank: summary.json timing.reduce_seconds. */
	uint64_t reduce0 = timer_now_ns();

	if (run->rank == 0) {
		all = calloc((size_t)run->nranks * V_NF, sizeof(double));
		s = json_object();
		list = json_array();
		rj = json_array();
		if (!all)
			rc = run_fail(run, -ENOMEM, "out of memory");
	}
	if ((rc = agree(run, rc)) < 0) {
		json_decref(s);
		json_decref(list);
		json_decref(rj);
		free(all);
		return rc;
	}
	ckpt_gather(run, reps, nreps, all, list, rj, &t);
	free(all);
	ckpt_calls_reduce(run, st, &calls);
	results_reduce_time(run, reduce0);
	if (run->rank != 0)
		return outputs_write_folder(run, NULL, ctx, final_dir, quiet);
	results_summary_head(run, ctx, s);
	json_object_set_new(s, "storage", results_storage_json(run));
	json_t *m = ckpt_metric_json(run, &st->plan, &t, json_array_get(list, 0), &calls);
	if (ckpt_phased(&run->cfg))
		ckpt_phases_metric(run, list, m);
	json_object_set_new(s, "metric", m);
	json_object_set_new(s, "checkpoints", list);
	json_object_set_new(s, "repetitions", rj);
	json_object_set_new(s, "checkpoint", ckpt_plan_json(run, st));
	checkpoint_project(run, s, st->plan.full);
	rc = outputs_write_folder(run, s, ctx, final_dir, quiet);
	json_decref(s);
	return rc;
}
