/* Training's results: every rank's figures reduced to rank 0 (epochs, ranks, nodes, evaluation
 * passes, emulated accelerators), the metrics of docs/results.md, summary.json; the run
 * folder is bench/results.c's, table.md and the CSVs train_tables.c's. */
#include "train_results.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../bench/agree.h"
#include "../bench/compute/compute.h"
#include "../bench/mlperf.h"
#include "../bench/live.h"
#include "../bench/outputs.h"
#include "../bench/storage/storage.h"
#include "../bench/timer.h"
#include "../formats/format.h"
#include "checkpoint.h"
#include "dataset.h"

#define TIMELINE_RANKS 64 /* ranks whose timeline is gathered into timeline.csv */
static void epoch_vector(const struct epoch_rank *er, double *v)
{
	v[R_WALL] = er->wall_s;
	v[R_COMPUTE] = er->compute_s;
	v[R_STEP] = er->step_s;
	v[R_BARRIER] = er->barrier_s;
	v[R_COPY] = er->copy_s;
	v[R_COPYB] = (double)er->copy_bytes;
	v[R_STEPS] = (double)er->steps;
	v[R_BYTES] = (double)er->io.bytes;
	v[R_OPS] = (double)er->io.ops;
	v[R_OPENS] = (double)er->io.opens;
	v[R_OPEN_NS] = (double)er->io.open_ns;
	v[R_SAMPLES] = (double)er->io.samples;
	v[R_RETRIES] = (double)er->io.retries;
	v[R_INFLIGHT] = (double)er->io.inflight_max;
	v[R_CPU_USER] = er->cpu_user_s;
	v[R_CPU_SYS] = er->cpu_sys_s;
	v[R_CONF] = er->conf_s;
	v[R_WAIT] = (double)er->wait.sum_ns / 1e9;
	v[R_DECODES] = (double)er->io.decodes;
	v[R_DECODE_NS] = (double)er->io.decode_ns;
	v[R_DECODE_CPU_NS] = (double)er->io.decode_cpu_ns;
}

/* Decoding figures of one epoch or of the run; nothing when no sample was decoded. */
static void decode_json(json_t *o, const struct epoch_total *ep, int n,
			const struct lost_time *lost, const char *prefix)
{
	struct decode_figures df;
	char k[64];

	decode_figures_of(ep, n, lost, &df);
	if (df.samples == 0)
		return;
	snprintf(k, sizeof(k), "%sdecoded_samples", prefix);
	json_object_set_new(o, k, json_integer((json_int_t)df.samples));
	snprintf(k, sizeof(k), "%sdecode_seconds", prefix);
	json_object_set_new(o, k, json_real(df.seconds));
	snprintf(k, sizeof(k), "%sdecode_seconds_per_sample", prefix);
	json_object_set_new(o, k, json_num(df.per_sample));
	snprintf(k, sizeof(k), "%sdecode_cpu_seconds_per_sample", prefix);
	json_object_set_new(o, k, json_num(df.cpu_per_sample));
	snprintf(k, sizeof(k), "%sdecode_share_of_reading", prefix);
	json_object_set_new(o, k, json_num(df.share));
	snprintf(k, sizeof(k), "%sdecode_lost_fraction", prefix);
	json_object_set_new(o, k, json_num(df.lost));
}

static struct step_totals step_totals_of(const double *w)
{
	return (struct step_totals){.busy = w[R_COMPUTE],
				    .conf = w[R_CONF],
				    .step = w[R_STEP],
				    .wait = w[R_WAIT],
				    .copy = w[R_COPY],
				    .barrier = w[R_BARRIER]};
}

static struct step_totals rank_step_totals(const struct rank_total *t)
{
	return (struct step_totals){.busy = t->compute,
				    .conf = t->conf,
				    .step = t->step,
				    .wait = t->wait,
				    .copy = t->copy,
				    .barrier = t->barrier};
}

static void hist_reduce(struct run *run, const struct hist *in, struct hist *out)
{
	MPI_Reduce(in->bucket, out->bucket, HIST_BUCKETS, MPI_UINT64_T, MPI_SUM, 0, run->comm);
	MPI_Reduce(&in->count, &out->count, 1, MPI_UINT64_T, MPI_SUM, 0, run->comm);
	MPI_Reduce(&in->sum_ns, &out->sum_ns, 1, MPI_UINT64_T, MPI_SUM, 0, run->comm);
	MPI_Reduce(&in->max_ns, &out->max_ns, 1, MPI_UINT64_T, MPI_MAX, 0, run->comm);
}

static json_t *latency_json(const struct hist *h)
{
	json_t *o = json_object();

	json_object_set_new(o, "p50", json_num(hist_quantile(h, 0.50)));
	json_object_set_new(o, "p90", json_num(hist_quantile(h, 0.90)));
	json_object_set_new(o, "p99", json_num(hist_quantile(h, 0.99)));
	json_object_set_new(o, "p999", json_num(hist_quantile(h, 0.999)));
	json_object_set_new(o, "max", json_num((double)h->max_ns / 1e9));
	json_object_set_new(o, "count", json_integer((json_int_t)h->count));
	return o;
}

static json_t *wait_json(const struct hist *h)
{
	json_t *o = json_object();

	json_object_set_new(o, "p50", json_num(hist_quantile(h, 0.50)));
	json_object_set_new(o, "p99", json_num(hist_quantile(h, 0.99)));
	json_object_set_new(o, "max", json_num((double)h->max_ns / 1e9));
	return o;
}

/* Lost time as fractions of step time (docs/results.md: summary.json "lost_time"). */
static json_t *lost_json(const struct lost_time *l)
{
	json_t *o = json_object();

	json_object_set_new(o, "data_wait", json_real(l->data_wait));
	json_object_set_new(o, "copy", json_real(l->copy));
	json_object_set_new(o, "barrier", json_real(l->barrier));
	json_object_set_new(o, "other", json_real(l->other));
	return o;
}

static json_t *stat_json(const double *v, int n)
{
	struct summary_stat s = stat_summarise(v, n);
	json_t *o = json_object();

	json_object_set_new(o, "n", json_integer(s.n));
	json_object_set_new(o, "mean", s.n ? json_real(s.mean) : json_null());
	json_object_set_new(o, "stddev", s.n > 1 ? json_real(s.stddev) : json_null());
	json_object_set_new(o, "min", s.n ? json_real(s.min) : json_null());
	json_object_set_new(o, "max", s.n ? json_real(s.max) : json_null());
	return o;
}

/* Ranks by node: summary.json's "nodes", "hosts", "ranks_per_node", per-node bandwidth
 * spread, and each rank's node index. */
static void nodes_summary(json_t *s, const struct report_data *d)
{
	json_t *hosts = json_array(), *ranks = json_object_get(s, "ranks");
	int rmin = d->nnodes ? d->run->nranks : 0, rmax = 0;
	double bmin, bmean, bmax;

	for (int k = 0; k < d->nnodes; k++) {
		json_array_append_new(hosts, json_string(d->nodes[k].host));
		rmin = d->nodes[k].nranks < rmin ? d->nodes[k].nranks : rmin;
		rmax = d->nodes[k].nranks > rmax ? d->nodes[k].nranks : rmax;
	}
	for (int r = 0; r < d->run->nranks; r++)
		for (int k = 0; k < d->nnodes; k++)
			if (d->nodes[k].leader == d->node_of[r].leader)
				json_object_set_new(json_array_get(ranks, (size_t)r), "node",
						    json_integer(k));
	nodes_spread(d->nodes, d->nnodes, &bmin, &bmean, &bmax);
	json_object_set_new(s, "hosts", hosts);
	json_object_set_new(s, "ranks_per_node", json_pack("{s:i, s:i}", "min", rmin, "max", rmax));
	json_object_set_new(s, "node_bandwidth_MiB_per_second",
			    json_pack("{s:f, s:f, s:f}", "min", bmin, "mean", bmean, "max", bmax));
	json_object_set_new(s, "nodes",
			    nodes_json(d->nodes, d->nnodes, d->node_of, d->run->nranks));
}

/* ---- reduction --------------------------------------------------------------------------- */

static int gather_timeline(struct run *run, const struct train_result *res,
			   struct timeline_event **all, int *counts, int *displs)
{
	/* The first TIMELINE_RANKS ranks only: enough for the picture, bounded on rank 0 (and
	 * well inside MPI's int counts) at any scale. */
	int n = run->rank < TIMELINE_RANKS ? res->ntimeline : 0, total = 0;
	int bytes = n * (int)sizeof(struct timeline_event);
	int *bcounts = NULL, *bdispls = NULL;

	MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, run->comm);
	if (run->rank == 0) {
		bcounts = calloc((size_t)run->nranks, sizeof(int));
		bdispls = calloc((size_t)run->nranks, sizeof(int));
		for (int r = 0; r < run->nranks; r++) {
			displs[r] = total;
			bcounts[r] = counts[r] * (int)sizeof(struct timeline_event);
			bdispls[r] = total * (int)sizeof(struct timeline_event);
			total += counts[r];
		}
		*all = calloc((size_t)(total ? total : 1), sizeof(**all));
	}
	MPI_Gatherv(res->timeline, bytes, MPI_BYTE, run->rank == 0 ? *all : NULL, bcounts, bdispls,
		    MPI_BYTE, 0, run->comm);
	free(bcounts);
	free(bdispls);
	return 0;
}

/* Headline AU (mean over ranks of each rank's own AU), the lost-time split, the verdict and
 * why, and the DLIO-comparable figures (means over epochs, as DLIO reports them). Rank 0. */
static void verdict_figures(struct report_data *d)
{
	const struct run *run = d->run;
	struct step_totals *st = calloc((size_t)run->nranks, sizeof(*st));
	double dau = 0, dsps = 0;

	for (int r = 0; st && r < run->nranks; r++)
		st[r] = rank_step_totals(&d->ranks[r]);
	if (st)
		verdict_mean(st, run->nranks, &d->au_mean, &d->lost, &d->au_min, &d->au_max, NULL);
	free(st);
	for (int i = 0; i < d->nep; i++) {
		dau += d->ep[i].conf_au;
		dsps += d->ep[i].dlio_sps;
	}
	d->dlio_au = d->nep ? dau / d->nep : 0;
	d->dlio_sps = d->nep ? dsps / d->nep : 0;
	d->verdict = verdict_classify(d->au_mean, run->cfg.train.au_threshold * 100, &d->lost,
				      d->verdict_why, sizeof(d->verdict_why));
}

/* The MLPerf Storage rules (verdict.h): each one broken is a warning (the dataset rule only
 * when the cache-resident warning does not already say it) and a reason in
 * summary.json "mlperf_rules_broken"; --strict turns them into a failed run. Rank 0. */
static json_t *mlperf_rules(struct run *run, const struct report_data *d)
{
	const struct config *cfg = &run->cfg;
	json_t *rules = json_array();
	char why[512];
	bool bypassed = cfg->storage.direct || cfg->storage.page_cache != PAGE_CACHE_KEEP;

	if (!verdict_rule_dataset((double)run->ds.data_bytes, d->host_mem, run->nnodes, bypassed,
				  why, sizeof(why))) {
		json_array_append_new(rules, json_string(why));
		if (!d->cache_resident)
			run_warn(run, "%s", why);
	}
	/* whole epochs; an epoch cut short by time_limit or steady_state only when none ran whole
	 */
	double steps = isfinite(d->min_steps)	    ? d->min_steps
		       : isfinite(d->min_steps_cut) ? d->min_steps_cut
						    : 0;
	if (!verdict_rule_steps(steps, (double)cfg->reader.prefetch_size, why, sizeof(why))) {
		json_array_append_new(rules, json_string(why));
		run_warn(run, "%s", why);
	}
	if (!verdict_rule_threshold(cfg->workload.name, cfg->train.au_threshold, why,
				    sizeof(why))) {
		json_array_append_new(rules, json_string(why));
		run_warn(run, "%s", why);
	}
	run->rules_broken = (int)json_array_size(rules);
	return rules;
}

static void add_cpu_metrics(json_t *m, const struct report_data *d)
{
	double cpu = d->tot_cpu_user + d->tot_cpu_sys;

	json_object_set_new(m, "train_cpu_user_seconds", json_real(d->tot_cpu_user));
	json_object_set_new(m, "train_cpu_system_seconds", json_real(d->tot_cpu_sys));
	json_object_set_new(m, "train_cpu_seconds_per_GiB",
			    json_num(cpu_per_gib(cpu, d->tot_bytes)));
	json_object_set_new(m, "train_cores_busy_per_accelerator",
			    json_num(d->tot_wall > 0 ? cpu / (d->tot_wall * d->run->nranks) : NAN));
	decode_json(m, d->ep, d->nep, &d->lost, "train_");
}

static void add_metrics(json_t *summary, struct report_data *d)
{
	const struct run *run = d->run;
	json_t *m = json_object(), *au = json_array(), *tp = json_array();
	double *auv = calloc((size_t)d->nep + 1, sizeof(double));
	double *iov = calloc((size_t)d->nep + 1, sizeof(double));
	double *spv = calloc((size_t)d->nep + 1, sizeof(double));

	for (int i = 0; i < d->nep; i++) {
		json_array_append_new(au, json_real(d->ep[i].au));
		json_array_append_new(tp, json_real(d->ep[i].sps));
		auv[i] = d->ep[i].au;
		iov[i] = d->ep[i].bw;
		spv[i] = d->ep[i].sps;
	}
	struct summary_stat sa = stat_summarise(auv, d->nep), si = stat_summarise(iov, d->nep),
			    ss = stat_summarise(spv, d->nep);
	json_object_set_new(m, "train_au_percentage", au);
	/* The headline: mean over ranks of each rank's AU over all its included steps. */
	json_object_set_new(m, "train_au_mean_percentage", json_real(d->au_mean));
	json_object_set_new(m, "train_au_stdev_percentage", json_real(sa.stddev));
	json_object_set_new(m, "train_au_rank_min_percentage", json_real(d->au_min));
	json_object_set_new(m, "train_au_rank_max_percentage", json_real(d->au_max));
	json_object_set_new(
	    m, "train_au_meet_expectation",
	    json_string(d->au_mean >= run->cfg.train.au_threshold * 100 ? "success" : "fail"));
	json_t *dl = json_object();
	json_object_set_new(dl, "train_au_mean_percentage", json_real(d->dlio_au));
	json_object_set_new(dl, "train_throughput_mean_samples_per_second", json_real(d->dlio_sps));
	json_object_set_new(
	    dl, "definition",
	    json_string("as DLIO computes them: AU = configured computation time "
			"/ step time per epoch (mean over ranks), mean over epochs; "
			"throughput = samples / epoch time with the start-up before "
			"the first read counted in the first epoch, mean over epochs"));
	json_object_set_new(m, "dlio_comparable", dl);
	json_object_set_new(m, "train_throughput_samples_per_second", tp);
	json_object_set_new(m, "train_throughput_mean_samples_per_second", json_real(ss.mean));
	json_object_set_new(m, "train_throughput_stdev_samples_per_second", json_real(ss.stddev));
	json_object_set_new(m, "train_io_mean_MB_per_second", json_real(si.mean));
	json_object_set_new(m, "train_io_stdev_MB_per_second", json_real(si.stddev));
	json_object_set_new(m, "train_bandwidth_MiB_per_second", json_real(d->bw));
	json_object_set_new(m, "train_iops", json_real(d->iops));
	json_object_set_new(m, "train_samples_per_second", json_real(d->sps));
	json_object_set_new(m, "train_bytes_read", json_integer((json_int_t)d->tot_bytes));
	json_object_set_new(m, "train_read_ops", json_integer((json_int_t)d->tot_ops));
	json_object_set_new(m, "train_samples", json_integer((json_int_t)d->tot_samples));
	json_object_set_new(m, "train_wall_seconds", json_real(d->tot_wall));
	add_cpu_metrics(m, d);
	json_object_set_new(m, "train_latency_seconds", latency_json(&d->lat));
	if (d->ttfb.count)
		json_object_set_new(m, "train_ttfb_seconds", latency_json(&d->ttfb));
	json_object_set_new(m, "train_data_wait_seconds", wait_json(&d->wait));
	json_object_set_new(summary, "metric", m);
	free(auv);
	free(iov);
	free(spv);
}

static void add_repetitions(json_t *summary, const struct report_data *d, int nreps)
{
	double *bw = calloc((size_t)nreps, sizeof(double)),
	       *io = calloc((size_t)nreps, sizeof(double));
	double *sp = calloc((size_t)nreps, sizeof(double)),
	       *au = calloc((size_t)nreps, sizeof(double));
	double *w99 = calloc((size_t)nreps, sizeof(double)),
	       *l99 = calloc((size_t)nreps, sizeof(double));
	json_t *reps = json_array();

	for (int r = 0; r < nreps; r++) {
		double bytes = 0, wall = 0, ops = 0, samples = 0, ausum = 0;
		int n = 0;
		struct hist lat, wait;
		hist_reset(&lat);
		hist_reset(&wait);
		for (int i = 0; i < d->nep; i++) {
			if (d->ep[i].rep != r)
				continue;
			bytes += d->ep[i].bytes;
			wall += d->ep[i].wall;
			ops += d->ep[i].ops;
			samples += d->ep[i].samples;
			ausum += d->ep[i].au;
			hist_merge(&lat, &d->ep[i].lat);
			hist_merge(&wait, &d->ep[i].wait);
			n++;
		}
		bw[r] = wall > 0 ? bytes / MIB / wall : 0;
		io[r] = wall > 0 ? ops / wall : 0;
		sp[r] = wall > 0 ? samples / wall : 0;
		au[r] = n ? ausum / n : 0;
		/* The same AU as the headline: mean over ranks of each rank's AU in this
		 * repetition. */
		struct lost_time lt = {0};
		if (d->rep_rank)
			verdict_mean(d->rep_rank + (size_t)r * (size_t)d->run->nranks,
				     d->run->nranks, &au[r], &lt, NULL, NULL, NULL);
		w99[r] = hist_quantile(&wait, 0.99);
		l99[r] = hist_quantile(&lat, 0.99);
		json_t *o = json_object();
		json_object_set_new(o, "repetition", json_integer(r + 1));
		json_object_set_new(o, "bandwidth_MiB_per_second", json_real(bw[r]));
		json_object_set_new(o, "iops", json_real(io[r]));
		json_object_set_new(o, "samples_per_second", json_real(sp[r]));
		json_object_set_new(o, "au_percentage", json_real(au[r]));
		json_object_set_new(o, "lost_time", lost_json(&lt));
		json_object_set_new(o, "data_wait_p99_seconds", json_real(w99[r]));
		json_object_set_new(o, "latency_p99_seconds", json_real(l99[r]));
		json_object_set_new(o, "latency_seconds", latency_json(&lat));
		json_object_set_new(o, "data_wait_seconds", wait_json(&wait));
		json_object_set_new(o, "bytes_read", json_integer((json_int_t)bytes));
		json_object_set_new(o, "wall_seconds", json_real(wall));
		json_array_append_new(reps, o);
	}
	json_t *st = json_object();
	json_object_set_new(st, "bandwidth_MiB_per_second", stat_json(bw, nreps));
	json_object_set_new(st, "iops", stat_json(io, nreps));
	json_object_set_new(st, "samples_per_second", stat_json(sp, nreps));
	json_object_set_new(st, "au_percentage", stat_json(au, nreps));
	json_object_set_new(st, "data_wait_p99_seconds", stat_json(w99, nreps));
	json_object_set_new(st, "latency_p99_seconds", stat_json(l99, nreps));
	json_object_set_new(summary, "repetitions", reps);
	json_object_set_new(summary, "repetition_stats", st);
	free(bw);
	free(io);
	free(sp);
	free(au);
	free(w99);
	free(l99);
}

/* summary.json "epochs": one object per epoch of every repetition. */
static json_t *epochs_json(const struct report_data *d)
{
	json_t *eps = json_array();

	for (int i = 0; i < d->nep; i++) {
		const struct epoch_total *e = &d->ep[i];
		json_t *o = json_object();
		json_object_set_new(o, "repetition", json_integer(e->rep + 1));
		json_object_set_new(o, "epoch", json_integer(e->epoch + 1));
		json_object_set_new(o, "wall_seconds", json_real(e->wall));
		json_object_set_new(o, "bytes_read", json_integer((json_int_t)e->bytes));
		json_object_set_new(o, "read_ops", json_integer((json_int_t)e->ops));
		json_object_set_new(o, "samples", json_integer((json_int_t)e->samples));
		json_object_set_new(o, "opens", json_integer((json_int_t)e->opens));
		json_object_set_new(o, "open_seconds", json_real(e->open_s));
		json_object_set_new(o, "io_retries", json_integer((json_int_t)e->retries));
		json_object_set_new(o, "io_inflight_max",
				    json_integer((json_int_t)e->inflight_max));
		json_object_set_new(o, "bandwidth_MiB_per_second", json_real(e->bw));
		json_object_set_new(o, "iops", json_real(e->iops));
		json_object_set_new(o, "samples_per_second", json_real(e->sps));
		json_object_set_new(o, "au_percentage", json_real(e->au));
		json_object_set_new(o, "lost_time", lost_json(&e->lost));
		json_object_set_new(o, "dlio_au_percentage", json_real(e->conf_au));
		json_object_set_new(o, "dlio_samples_per_second", json_real(e->dlio_sps));
		json_object_set_new(o, "step_barrier_seconds", json_real(e->barrier_s));
		json_object_set_new(o, "copy_seconds", json_real(e->copy_s));
		json_object_set_new(o, "copy_bytes", json_integer((json_int_t)e->copy_bytes));
		json_object_set_new(o, "cpu_user_seconds", json_real(e->cpu_user));
		json_object_set_new(o, "cpu_system_seconds", json_real(e->cpu_sys));
		json_object_set_new(o, "cpu_seconds_per_GiB",
				    json_num(cpu_per_gib(e->cpu_user + e->cpu_sys, e->bytes)));
		json_object_set_new(o, "latency_seconds", latency_json(&e->lat));
		if (e->ttfb.count)
			json_object_set_new(o, "ttfb_seconds", latency_json(&e->ttfb));
		json_object_set_new(o, "data_wait_seconds", wait_json(&e->wait));
		decode_json(o, e, 1, &e->lost, "");
		json_array_append_new(eps, o);
	}
	return eps;
}

/* summary.json "ranks": one object per rank; *peak_rss and *table_max: the largest. */
static json_t *ranks_json(const struct report_data *d, double *peak_rss, double *table_max)
{
	json_t *ranks = json_array();

	for (int r = 0; r < d->run->nranks; r++) {
		const struct rank_total *t = &d->ranks[r];
		json_t *o = json_object();
		json_object_set_new(o, "rank", json_integer(r));
		json_object_set_new(o, "host", json_string(t->host));
		json_object_set_new(o, "local_rank", json_integer(t->local_rank));
		json_object_set_new(o, "bytes_read", json_integer((json_int_t)t->bytes));
		json_object_set_new(o, "read_ops", json_integer((json_int_t)t->ops));
		json_object_set_new(o, "samples", json_integer((json_int_t)t->samples));
		json_object_set_new(o, "wall_seconds", json_real(t->wall));
		json_object_set_new(o, "bandwidth_MiB_per_second",
				    json_real(t->wall > 0 ? t->bytes / MIB / t->wall : 0));
		json_object_set_new(o, "au_percentage",
				    json_real(t->step > 0 ? 100 * t->compute / t->step : 0));
		json_object_set_new(o, "compute_seconds", json_real(t->compute));
		json_object_set_new(o, "step_seconds", json_real(t->step));
		json_object_set_new(o, "step_barrier_seconds", json_real(t->barrier));
		struct step_totals rst = rank_step_totals(t);
		struct lost_time lt;
		verdict_rank_lost(&rst, &lt);
		json_object_set_new(o, "lost_time", lost_json(&lt));
		json_object_set_new(o, "data_wait_p99_seconds", json_real(t->wait_p99));
		json_object_set_new(o, "latency_p99_seconds", json_real(t->lat_p99));
		json_object_set_new(o, "peak_rss_bytes", json_integer((json_int_t)t->peak_rss));
		json_object_set_new(o, "file_table_bytes",
				    json_integer((json_int_t)t->table_bytes));
		json_object_set_new(o, "cpu_user_seconds", json_real(t->cpu_user));
		json_object_set_new(o, "cpu_system_seconds", json_real(t->cpu_sys));
		json_object_set_new(
		    o, "cores_busy",
		    json_num(t->wall > 0 ? (t->cpu_user + t->cpu_sys) / t->wall : NAN));
		json_array_append_new(ranks, o);
		*peak_rss = fmax(*peak_rss, t->peak_rss);
		*table_max = fmax(*table_max, t->table_bytes);
	}
	return ranks;
}

static json_t *summary_build(struct report_data *d, const struct results_ctx *ctx, int nreps,
			     const struct train_result *reps)
{
	struct run *run = d->run;
	const struct config *cfg = &run->cfg;
	json_t *s = json_object(), *st, *acc;

	results_summary_head(run, ctx, s);
	st = json_object();
	json_object_set_new(st, "backend", json_string(run->storage->name));
	json_object_set_new(st, "fs_type", json_string(run->fs.type));
	json_object_set_new(st, "mount", json_string(run->fs.mount));
	json_object_set_new(st, "fs_block_size", json_integer((json_int_t)run->fs.block_size));
	json_object_set_new(st, "fs_free_bytes", json_integer((json_int_t)run->fs.free_bytes));
	json_object_set_new(st, "direct", json_boolean(cfg->storage.direct));
	json_object_set_new(
	    st, "page_cache",
	    json_string(cfg_choice_name("storage", "page_cache", cfg->storage.page_cache)));
	json_object_set_new(st, "transfer_size_bytes",
			    json_integer((json_int_t)cfg->storage.transfer_size));
	json_object_set_new(st, "dataset_bytes", json_integer((json_int_t)run->ds.data_bytes));
	json_object_set_new(st, "host_memory_bytes", json_integer((json_int_t)d->host_mem));
	json_object_set_new(st, "cache_resident", json_boolean(d->cache_resident));
	json_object_set_new(st, "dataset_regenerated", json_boolean(run->dataset_regenerated));
	json_object_set_new(st, "generation_seconds", json_real(ctx->gen_s));
	json_object_set_new(st, "setup_seconds", json_real(reps[0].setup_s));
	json_object_set_new(st, "buffer_bytes", json_real(reps[0].buffer_bytes));
	json_object_update(st, run->info_storage);
	if (!json_object_get(st, "stripe_requested")) {
		json_t *rq = json_object();
		json_object_set_new(rq, "count", json_integer(cfg->storage.stripe_count));
		json_object_set_new(rq, "size", json_integer((json_int_t)cfg->storage.stripe_size));
		json_object_set_new(rq, "offset", json_integer(cfg->storage.stripe_offset));
		json_object_set_new(st, "stripe_requested", rq);
	}
	json_object_set_new(s, "storage", st);

	json_t *fmt = json_object();
	json_object_set_new(fmt, "name", json_string(run->format->name));
	json_object_set_new(fmt, "files", json_integer(run->ds.nfiles));
	json_object_set_new(fmt, "samples", json_integer((json_int_t)run->ds.nsamples));
	json_object_set_new(fmt, "largest_sample_bytes",
			    json_integer((json_int_t)run->ds.max_sample));
	json_object_set_new(fmt, "generated", json_boolean(run->ds.generated));
	json_object_update(fmt, run->info_format);
	json_object_set_new(s, "format", fmt);

	acc = json_object();
	json_object_set_new(acc, "kind", json_string(run->compute_ops->name));
	json_object_set_new(acc, "choice", json_string(run->accel_why));
	json_object_update(acc, run->info_accel);
	json_object_set_new(s, "accelerator", acc);
	if (reps[0].binding)
		json_object_set(s, "binding", reps[0].binding);

	add_metrics(s, d);
	checkpoint_train_json(run, s); /* checkpoints inside training, when configured */
	add_repetitions(s, d, nreps);

	json_object_set_new(s, "epochs", epochs_json(d));

	double peak_rss = 0, table_max = 0;
	json_object_set_new(s, "ranks", ranks_json(d, &peak_rss, &table_max));
	nodes_summary(s, d);
	json_object_set_new(s, "peak_rss_max_bytes", json_integer((json_int_t)peak_rss));
	json_object_set_new(s, "file_table_max_bytes", json_integer((json_int_t)table_max));
	json_object_set_new(s, "verdict", json_string(d->verdict));
	json_object_set_new(s, "verdict_reason", json_string(d->verdict_why));
	json_object_set_new(s, "lost_time", lost_json(&d->lost));
	json_object_set(s, "mlperf_rules_broken", d->rules);
	json_object_set_new(s, "warnings", json_deep_copy(run->warnings));
	return s;
}

/* Train's own files: the CSVs and table.md. */
struct train_files {
	const struct run *run;
	struct report_data *d;
	json_t *summary;
	const struct timeline_event *tl;
	const int *tlc, *tld;
};

static int train_fill(const char *tmp, void *arg)
{
	struct train_files *t = arg;
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int rc = outputs_write_csvs(&train_outputs, t->summary, tmp);

	if (rc == 0)
		rc = live_write(t->run, tmp);

	if (rc == 0)
		rc = train_write_csvs(tmp, t->d, t->tl, t->tlc, t->tld);
	if (rc < 0)
		return rc;
	m = open_memstream(&buf, &len);
	if (!m)
		return -ENOMEM;
	train_table_write(m, t->d, t->summary);
	return results_write_stream(tmp, "table.md", &buf, m);
}

/* ---- the evaluation phase ([dataset] num_files_eval) ----------------------------------- */

/* One evaluation pass reduced over ranks (collective; the object on rank 0, NULL elsewhere):
 * bytes, reads and samples summed, the wall time of the slowest rank, AU as training's (mean
 * over ranks of compute over step time, warm-up steps left out). */
static json_t *eval_pass_reduce(struct run *run, const struct epoch_rank *er, int rep, int after,
				double *vall)
{
	double v[R_NF];
	struct hist lat, wait;

	epoch_vector(er, v);
	MPI_Gather(v, R_NF, MPI_DOUBLE, vall, R_NF, MPI_DOUBLE, 0, run->comm);
	hist_reduce(run, &er->io.latency, &lat);
	hist_reduce(run, &er->wait, &wait);
	if (run->rank != 0)
		return NULL;
	struct step_totals *stt = calloc((size_t)run->nranks, sizeof(*stt));
	double wall = 0, bytes = 0, ops = 0, samples = 0, steps = 0, au = 0, conf_au = 0;
	struct lost_time lost = {0};
	for (int q = 0; q < run->nranks; q++) {
		const double *w = vall + (size_t)q * R_NF;
		wall = fmax(wall, w[R_WALL]);
		bytes += w[R_BYTES];
		ops += w[R_OPS];
		samples += w[R_SAMPLES];
		steps += w[R_STEPS];
		if (stt)
			stt[q] = step_totals_of(w);
	}
	if (stt)
		verdict_mean(stt, run->nranks, &au, &lost, NULL, NULL, &conf_au);
	free(stt);
	json_t *o = json_object();
	json_object_set_new(o, "repetition", json_integer(rep + 1));
	json_object_set_new(o, "after_epoch", json_integer(after + 1));
	json_object_set_new(o, "wall_seconds", json_real(wall));
	json_object_set_new(o, "bytes_read", json_integer((json_int_t)bytes));
	json_object_set_new(o, "read_ops", json_integer((json_int_t)ops));
	json_object_set_new(o, "samples", json_integer((json_int_t)samples));
	json_object_set_new(o, "steps", json_integer((json_int_t)steps));
	json_object_set_new(o, "bandwidth_MiB_per_second",
			    json_real(wall > 0 ? bytes / MIB / wall : 0));
	json_object_set_new(o, "iops", json_real(wall > 0 ? ops / wall : 0));
	json_object_set_new(o, "samples_per_second", json_real(wall > 0 ? samples / wall : 0));
	json_object_set_new(o, "au_percentage", json_real(au));
	json_object_set_new(o, "dlio_au_percentage", json_real(conf_au));
	json_object_set_new(o, "lost_time", lost_json(&lost));
	json_object_set_new(o, "latency_seconds", latency_json(&lat));
	json_object_set_new(o, "data_wait_seconds", wait_json(&wait));
	return o;
}

/* Every pass of every repetition (collective). Rank 0 gets {"passes": [...]} and the set's
 * shape; NULL when no evaluation was configured. */
static json_t *eval_reduce(struct run *run, const struct train_result *reps, int nreps)
{
	const struct config *cfg = &run->cfg;
	double *vall;
	json_t *passes, *o;

	if (cfg->dataset.num_files_eval == 0)
		return NULL;
	vall = run->rank == 0 ? calloc((size_t)run->nranks * R_NF, sizeof(double)) : NULL;
	passes = run->rank == 0 ? json_array() : NULL;
	for (int r = 0; r < nreps; r++)
		for (int k = 0; k < reps[r].nevals; k++) {
			json_t *p =
			    eval_pass_reduce(run, &reps[r].eval[k], r, reps[r].eval_epoch[k], vall);
			if (p)
				json_array_append_new(passes, p);
		}
	free(vall);
	if (run->rank != 0)
		return NULL;
	o = json_object();
	json_object_set_new(o, "files", json_integer(run->eval_ds.nfiles));
	json_object_set_new(o, "samples", json_integer((json_int_t)run->eval_ds.nsamples));
	json_object_set_new(o, "data_bytes", json_integer((json_int_t)run->eval_ds.data_bytes));
	json_object_set_new(o, "batch_size",
			    json_integer(cfg->reader.batch_size_eval ? cfg->reader.batch_size_eval
								     : cfg->reader.batch_size));
	json_object_set_new(o, "eval_time", json_real(cfg->evaluation.eval_time));
	json_object_set_new(o, "eval_after_epoch", json_integer(cfg->evaluation.eval_after_epoch));
	json_object_set_new(o, "epochs_between_evals",
			    json_integer(cfg->evaluation.epochs_between_evals));
	json_object_set_new(o, "generated", json_boolean(run->eval_ds.generated));
	json_object_set_new(o, "passes", passes);
	return o;
}

/* Per repetition, what the metric table's eval rows read: the evaluation passes' bandwidth,
 * samples/s, AU (mean of its passes) and bytes, in each repetitions[] entry with a pass. */
static void eval_repetitions(json_t *passes, json_t *reps, int nreps)
{
	json_t *p;
	size_t i;

	for (int r = 0; r < nreps; r++) {
		double rb = 0, rw = 0, rs = 0, ra = 0;
		int k = 0;
		json_array_foreach(passes, i, p)
		{
			if ((int)pass_num(p, "repetition") != r + 1)
				continue;
			rb += pass_num(p, "bytes_read");
			rw += pass_num(p, "wall_seconds");
			rs += pass_num(p, "samples");
			ra += pass_num(p, "au_percentage");
			k++;
		}
		json_t *o = json_array_get(reps, (size_t)r);
		if (!o || !k)
			continue;
		json_object_set_new(o, "eval_bandwidth_MiB_per_second",
				    json_real(rw > 0 ? rb / MIB / rw : 0));
		json_object_set_new(o, "eval_samples_per_second", json_real(rw > 0 ? rs / rw : 0));
		json_object_set_new(o, "eval_au_percentage", json_real(ra / k));
		json_object_set_new(o, "eval_bytes_read", json_integer((json_int_t)rb));
	}
}

/* The evaluation beside training's figures: each pass under the epoch it followed
 * (epochs[].eval), totals under "eval", DLIO's eval_* names under "metric" (AU and throughput
 * per pass, their mean and deviation), and per repetition the columns of the metric table.
 * Training's figures never include evaluation time. */
static void eval_attach(json_t *s, json_t *ev, int nreps, double threshold)
{
	json_t *passes = json_object_get(ev, "passes"), *p, *m = json_object_get(s, "metric");
	json_t *eps = json_object_get(s, "epochs"), *reps = json_object_get(s, "repetitions");
	size_t n = json_array_size(passes), i;
	double *au = calloc(n ? n : 1, sizeof(double)), *sps = calloc(n ? n : 1, sizeof(double)),
	       *bw = calloc(n ? n : 1, sizeof(double));
	double bytes = 0, wall = 0, samples = 0, ops = 0, steps = 0;
	json_t *aul = json_array(), *spl = json_array();

	json_array_foreach(passes, i, p)
	{
		if (au && sps && bw) {
			au[i] = pass_num(p, "au_percentage");
			sps[i] = pass_num(p, "samples_per_second");
			bw[i] = pass_num(p, "bandwidth_MiB_per_second");
		}
		json_array_append_new(aul, json_real(pass_num(p, "au_percentage")));
		json_array_append_new(spl, json_real(pass_num(p, "samples_per_second")));
		bytes += pass_num(p, "bytes_read");
		wall += pass_num(p, "wall_seconds");
		samples += pass_num(p, "samples");
		ops += pass_num(p, "read_ops");
		steps += pass_num(p, "steps");
		size_t j;
		json_t *e;
		json_array_foreach(eps, j, e)
		{
			if (pass_num(e, "repetition") == pass_num(p, "repetition") &&
			    pass_num(e, "epoch") == pass_num(p, "after_epoch"))
				json_object_set(e, "eval", p);
		}
	}
	json_t *st_au = stat_json(au, (int)n), *st_sps = stat_json(sps, (int)n),
	       *st_bw = stat_json(bw, (int)n);
	double au_mean = pass_num(st_au, "mean");
	json_object_set_new(m, "eval_au_percentage", aul);
	json_object_set(m, "eval_au_mean_percentage", json_object_get(st_au, "mean"));
	json_object_set(m, "eval_au_stdev_percentage", json_object_get(st_au, "stddev"));
	json_object_set_new(m, "eval_au_meet_expectation",
			    json_string(n && au_mean >= threshold * 100 ? "success" : "fail"));
	json_object_set_new(m, "eval_throughput_samples_per_second", spl);
	json_object_set(m, "eval_throughput_mean_samples_per_second",
			json_object_get(st_sps, "mean"));
	json_object_set(m, "eval_throughput_stdev_samples_per_second",
			json_object_get(st_sps, "stddev"));
	json_object_set(m, "eval_io_mean_MB_per_second", json_object_get(st_bw, "mean"));
	json_object_set(m, "eval_io_stdev_MB_per_second", json_object_get(st_bw, "stddev"));
	json_object_set_new(m, "eval_bandwidth_MiB_per_second",
			    json_real(wall > 0 ? bytes / MIB / wall : 0));
	json_object_set_new(m, "eval_bytes_read", json_integer((json_int_t)bytes));
	json_object_set_new(m, "eval_read_ops", json_integer((json_int_t)ops));
	json_object_set_new(m, "eval_samples", json_integer((json_int_t)samples));
	json_object_set_new(m, "eval_steps", json_integer((json_int_t)steps));
	json_object_set_new(m, "eval_wall_seconds", json_real(wall));
	json_object_set_new(m, "eval_passes", json_integer((json_int_t)n));
	json_decref(st_au);
	json_decref(st_sps);
	json_decref(st_bw);
	eval_repetitions(passes, reps, nreps);
	free(au);
	free(sps);
	free(bw);
	json_object_set(s, "eval", ev);
}

/* accelerators_per_rank = K > 1 (collective): every emulated accelerator's figures over all
 * epochs and repetitions, accelerator a = k x ranks + rank (its loader k on that rank): samples
 * and bytes its loader read, samples/s over the epochs' wall time, AU (compute over step time of
 * included steps), data wait p99. Rank 0 gets the array; NULL elsewhere or with K = 1. */
enum { A_SAMPLES, A_BYTES, A_COMPUTE, A_STEP, A_WALL, A_WAIT99, A_NF };

static json_t *accel_reduce(struct run *run, const struct train_result *reps, int nreps)
{
	int K = (int)run->cfg.train.accelerators_per_rank, P = run->nranks;
	double mine[256 * A_NF] = {0}, *all = NULL; /* K <= 256 (the key's range) */
	json_t *arr = NULL;

	if (K <= 1 || K > 256)
		return NULL;
	if (run->rank == 0)
		all = calloc((size_t)K * A_NF * (size_t)P, sizeof(double));
	for (int k = 0; k < K; k++) {
		double *v = mine + (size_t)k * A_NF;
		struct hist w;
		hist_reset(&w);
		for (int r = 0; r < nreps; r++)
			for (int e = 0; reps[r].accel && e < reps[r].epochs; e++) {
				const struct epoch_rank *a =
				    &reps[r].accel[(size_t)e * (size_t)reps[r].naccel + (size_t)k];
				v[A_SAMPLES] += (double)a->io.samples;
				v[A_BYTES] += (double)a->io.bytes;
				v[A_COMPUTE] += a->compute_s;
				v[A_STEP] += a->step_s;
				v[A_WALL] += a->wall_s;
				hist_merge(&w, &a->wait);
			}
		v[A_WAIT99] = hist_quantile(&w, 0.99);
	}
	MPI_Gather(mine, K * A_NF, MPI_DOUBLE, all, K * A_NF, MPI_DOUBLE, 0, run->comm);
	if (run->rank != 0 || !all)
		return NULL;
	arr = json_array();
	for (int a = 0; a < P * K; a++) {
		int r = a % P, k = a / P;
		const double *v = all + ((size_t)r * (size_t)K + (size_t)k) * A_NF;
		json_t *o = json_object();
		json_object_set_new(o, "accelerator", json_integer(a));
		json_object_set_new(o, "rank", json_integer(r));
		json_object_set_new(o, "loader", json_integer(k));
		json_object_set_new(o, "samples", json_integer((json_int_t)v[A_SAMPLES]));
		json_object_set_new(o, "bytes_read", json_integer((json_int_t)v[A_BYTES]));
		json_object_set_new(o, "samples_per_second",
				    json_real(v[A_WALL] > 0 ? v[A_SAMPLES] / v[A_WALL] : 0));
		json_object_set_new(o, "bandwidth_MiB_per_second",
				    json_real(v[A_WALL] > 0 ? v[A_BYTES] / MIB / v[A_WALL] : 0));
		json_object_set_new(o, "au_percentage",
				    json_real(v[A_STEP] > 0 ? 100 * v[A_COMPUTE] / v[A_STEP] : 0));
		json_object_set_new(o, "data_wait_p99_seconds", json_num(v[A_WAIT99]));
		json_array_append_new(arr, o);
	}
	free(all);
	return arr;
}

/* One epoch of this rank added to its totals. */
static void rank_total_add(struct rank_total *mine, const struct epoch_rank *er)
{
	mine->wall += er->wall_s;
	mine->bytes += (double)er->io.bytes;
	mine->ops += (double)er->io.ops;
	mine->samples += (double)er->io.samples;
	mine->compute += er->compute_s;
	mine->step += er->step_s;
	mine->barrier += er->barrier_s;
	mine->conf += er->conf_s;
	mine->wait += (double)er->wait.sum_ns / 1e9;
	mine->copy += er->copy_s;
	mine->cpu_user += er->cpu_user_s;
	mine->cpu_sys += er->cpu_sys_s;
}

/* Rank 0: epoch e of repetition r reduced over ranks into t from every rank's vector (vall),
 * its histograms (lat, wait) and the repetition's start-up; the run's totals updated. */
static void epoch_total_fold(struct report_data *d, struct epoch_total *t, const double *vall,
			     int r, int e, double setup_r, const struct hist *lat,
			     const struct hist *wait)
{
	struct step_totals *stt = calloc((size_t)d->run->nranks, sizeof(*stt));
	t->rep = r;
	t->epoch = e;
	for (int q = 0; q < d->run->nranks; q++) {
		const double *w = vall + (size_t)q * R_NF;
		t->wall = fmax(t->wall, w[R_WALL]);
		t->bytes += w[R_BYTES];
		t->ops += w[R_OPS];
		t->samples += w[R_SAMPLES];
		t->opens += w[R_OPENS];
		t->open_s += w[R_OPEN_NS] / 1e9;
		t->decodes += w[R_DECODES];
		t->decode_s += w[R_DECODE_NS] / 1e9;
		t->decode_cpu_s += w[R_DECODE_CPU_NS] / 1e9;
		t->retries += w[R_RETRIES];
		t->inflight_max = fmax(t->inflight_max, w[R_INFLIGHT]);
		t->cpu_user += w[R_CPU_USER];
		t->cpu_sys += w[R_CPU_SYS];
		t->barrier_s += w[R_BARRIER];
		t->copy_s += w[R_COPY];
		t->copy_bytes += w[R_COPYB];
		if (stt)
			stt[q] = step_totals_of(w);
		if (d->rep_rank) {
			struct step_totals *a =
			    &d->rep_rank[(size_t)r * (size_t)d->run->nranks + (size_t)q];
			a->busy += w[R_COMPUTE];
			a->conf += w[R_CONF];
			a->step += w[R_STEP];
			a->wait += w[R_WAIT];
			a->copy += w[R_COPY];
			a->barrier += w[R_BARRIER];
		}
		d->min_steps =
		    fmin(d->min_steps,
			 fmax(0, w[R_STEPS] - (double)d->run->cfg.train.exclude_start_steps));
	}
	if (stt)
		verdict_mean(stt, d->run->nranks, &t->au, &t->lost, NULL, NULL, &t->conf_au);
	free(stt);
	t->bw = t->wall > 0 ? t->bytes / MIB / t->wall : 0;
	t->iops = t->wall > 0 ? t->ops / t->wall : 0;
	t->sps = t->wall > 0 ? t->samples / t->wall : 0;
	double wall_su = t->wall + (e == 0 ? setup_r : 0);
	t->dlio_sps = wall_su > 0 ? t->samples / wall_su : 0;
	t->lat = *lat;
	t->wait = *wait;
	hist_merge(&d->lat, lat);
	hist_merge(&d->wait, wait);
	d->tot_bytes += t->bytes;
	d->tot_ops += t->ops;
	d->tot_samples += t->samples;
	d->tot_wall += t->wall;
	d->tot_cpu_user += t->cpu_user;
	d->tot_cpu_sys += t->cpu_sys;
}

/* Collective: this rank's totals completed (percentiles, host, memory, file tables) and
 * gathered into ranks[] on rank 0. */
static void rank_totals_gather(struct run *run, struct rank_total *mine,
			       const struct hist *rank_wait, const struct hist *rank_lat,
			       struct rank_total *ranks)
{
	struct rusage ru;

	mine->wait_p99 = hist_quantile(rank_wait, 0.99);
	mine->lat_p99 = hist_quantile(rank_lat, 0.99);
	snprintf(mine->host, sizeof(mine->host), "%s", run->hostname);
	mine->node_leader = run->node_leader;
	mine->local_rank = run->local_rank;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		mine->peak_rss = (double)ru.ru_maxrss * 1024; /* Linux: KiB */
	mine->live_cpu = live_thread_cpu_s(run, &mine->live_proc_cpu);
	mine->table_bytes =
	    (double)(dataset_table_bytes(&run->ds) + dataset_table_bytes(&run->eval_ds));
	MPI_Gather(mine, (int)sizeof(*mine), MPI_BYTE, ranks, (int)sizeof(*mine), MPI_BYTE, 0,
		   run->comm);
}

/* summary.json "stopped_early" (repetitions ended by time_limit or steady_state) and "live"
 * (the live statistics' intervals and the slowest rank by lost time): bench/live.h. */
static void live_members(const struct report_data *d, json_t *s, int nreps,
			 const struct train_result *reps)
{
	const struct run *run = d->run;
	json_t *st = json_array(), *lv;
	double share, cpu = 0, proc = 0;
	int slow = live_slowest(run, &share);

	for (int r = 0; r < nreps; r++)
		if (reps[r].stopped_early)
			json_array_append_new(
			    st, json_pack("{s:i, s:s, s:f, s:i}", "repetition", r + 1, "reason",
					  live_stop_name(reps[r].stopped_early), "after_seconds",
					  reps[r].stopped_after, "epochs", reps[r].epochs));
	if (json_array_size(st))
		json_object_set(s, "stopped_early", st);
	json_decref(st);
	if (slow < 0)
		return;
	for (int r = 0; r < run->nranks; r++) {
		cpu += d->ranks[r].live_cpu;
		proc += d->ranks[r].live_proc_cpu;
	}
	/* its cost: the threads' CPU beside their processes' over the same spans, over ranks */
	lv = json_pack("{s:f, s:i, s:s, s:f, s:f, s:f}", "interval_seconds",
		       run->cfg.output.live_interval, "slowest_rank", slow, "slowest_host",
		       run->rank_hosts ? run->rank_hosts[slow] : "", "slowest_lost_share", share,
		       "thread_cpu_seconds", cpu, "cpu_seconds", proc);
	json_object_set_new(s, "live", lv);
}

/* Rank 0: the cache state and its warnings, ranks grouped by node, the verdict and the MLPerf
 * rules, summary.json, then the run folder (tf: what train_fill writes). 0 or the failure. */
static int rank0_write(struct run *run, struct train_files *tf, const struct results_ctx *ctx,
		       int nreps, const struct train_result *reps, const char *final_dir,
		       bool quiet)
{
	struct report_data *d = tf->d;
	const struct config *cfg = &run->cfg;
	int rc;

	d->host_mem = (double)results_host_memory();
	d->cache_resident = !storage_is_object(cfg) && !cfg->storage.direct &&
			    cfg->storage.page_cache == PAGE_CACHE_KEEP &&
			    (double)run->ds.data_bytes < d->host_mem;
	if (d->cache_resident)
		run_warn(run,
			 "cache-resident: the dataset (%.1f MiB) fits in this node's RAM "
			 "(%.1f GiB) and neither direct I/O nor page-cache eviction is on; "
			 "reads may be served from memory",
			 (double)run->ds.data_bytes / MIB, d->host_mem / (MIB * 1024));
	if (cfg->train.computation_time == 0)
		run_warn(run, "computation_time = 0: no compute is emulated, so AU is 0 %% by "
			      "definition and the verdict only says so; read the bandwidth and "
			      "latency figures");
	d->node_of = calloc((size_t)run->nranks, sizeof(*d->node_of));
	for (int r = 0; d->node_of && r < run->nranks; r++)
		d->node_of[r] = (struct node_rank){d->ranks[r].node_leader, d->ranks[r].host,
						   d->ranks[r].bytes, d->ranks[r].wall};
	d->nnodes = d->node_of ? nodes_group(d->node_of, run->nranks, &d->nodes) : -ENOMEM;
	if (d->nnodes < 0)
		return run_fail(run, -ENOMEM, "out of memory grouping ranks by node");
	d->bw = d->tot_wall > 0 ? d->tot_bytes / MIB / d->tot_wall : 0;
	d->iops = d->tot_wall > 0 ? d->tot_ops / d->tot_wall : 0;
	d->sps = d->tot_wall > 0 ? d->tot_samples / d->tot_wall : 0;
	verdict_figures(d);
	d->rules = mlperf_rules(run, d);
	json_t *summary = summary_build(d, ctx, nreps, reps);
	json_object_set_new(summary, "mlperf",
			    mlperf_run_json(cfg, d->nnodes,
					    (int64_t)run->nranks * cfg->train.accelerators_per_rank,
					    d->host_mem));
	if (d->eval)
		eval_attach(summary, d->eval, nreps, run->cfg.train.au_threshold);
	if (d->accel)
		json_object_set(summary, "accelerators", d->accel);
	live_members(d, summary, nreps, reps);
	tf->summary = summary;
	rc = results_folder_write(run, summary, ctx, final_dir, train_fill, tf, quiet);
	json_decref(summary);
	json_decref(d->rules);
	return rc;
}

static void warn_if_stopped(struct run *run)
{
	uint64_t stopped = __atomic_load_n(&run->stopped_ns, __ATOMIC_RELAXED);

	if (stopped)
		run_warn(run,
			 "the job was stopped (SIGSTOP, a suspended batch job) or starved of CPU "
			 "for about %.1f s in all: the wall time of the epochs it fell in includes "
			 "the pause",
			 (double)stopped / 1e9);
}

/* Every epoch of every repetition, folded on rank 0 into d->ep with the slowest rank's
 * start-up of its repetition; this rank's own sums into mine, rank_wait and rank_lat.
 * Collective: every rank leaves together, with the agreed code. */
static int epochs_reduce(struct run *run, struct train_result *reps, int nreps,
			 struct report_data *d, struct rank_total *mine, struct hist *rank_wait,
			 struct hist *rank_lat)
{
	double *vall = run->rank == 0 ? calloc((size_t)run->nranks * R_NF, sizeof(double)) : NULL;
	/* Start-up before the first read (index files, shared handles): the slowest rank's, per
	 * repetition, for the DLIO-comparable throughput. */
	double *setup = calloc((size_t)nreps, sizeof(double)),
	       *setup_in = calloc((size_t)nreps, sizeof(double));
	int arc = agree(run, !setup || !setup_in ? run_fail(run, -ENOMEM, "out of memory") : 0);

	if (arc < 0) {
		free(setup);
		free(setup_in);
		free(vall);
		return arc;
	}
	for (int r = 0; r < nreps; r++)
		setup_in[r] = reps[r].setup_s;
	MPI_Reduce(setup_in, setup, nreps, MPI_DOUBLE, MPI_MAX, 0, run->comm);
	free(setup_in);
	hist_reset(rank_wait);
	hist_reset(rank_lat);
	hist_reset(&d->lat);
	hist_reset(&d->wait);
	hist_reset(&d->ttfb);
	int k = 0;
	for (int r = 0; r < nreps; r++) {
		for (int e = 0; e < reps[r].epochs; e++, k++) {
			const struct epoch_rank *er = &reps[r].per_epoch[e];
			double v[R_NF];
			epoch_vector(er, v);
			rank_total_add(mine, er);
			hist_merge(rank_wait, &er->wait);
			hist_merge(rank_lat, &er->io.latency);
			MPI_Gather(v, R_NF, MPI_DOUBLE, vall, R_NF, MPI_DOUBLE, 0, run->comm);
			struct hist lat, wait, ttfb;
			hist_reduce(run, &er->io.latency, &lat);
			hist_reduce(run, &er->wait, &wait);
			hist_reduce(run, &er->io.ttfb, &ttfb);
			if (run->rank != 0)
				continue;
			/* the last epoch of a repetition that stopped early is cut short: not an
			 * epoch's worth of steps for the steps rule */
			double whole = d->min_steps;
			epoch_total_fold(d, &d->ep[k], vall, r, e, setup[r], &lat, &wait);
			if (reps[r].stopped_early && e == reps[r].epochs - 1) {
				d->min_steps_cut = fmin(d->min_steps_cut, d->min_steps);
				d->min_steps = whole;
			}
			d->ep[k].ttfb = ttfb;
			hist_merge(&d->ttfb, &ttfb);
		}
	}
	free(vall);
	free(setup);
	return 0;
}

static void report_data_free(struct report_data *d)
{
	free(d->nodes);
	free(d->node_of);
	free(d->ep);
	free(d->ranks);
	free(d->rep_rank);
	json_decref(d->eval);
	json_decref(d->accel);
}

int train_results_write(struct run *run, struct train_result *reps, int nreps,
			const struct results_ctx *ctx, const char *final_dir, bool quiet)
{
	struct report_data d = {.run = run, .min_steps = INFINITY, .min_steps_cut = INFINITY};
	struct rank_total mine = {0};
	struct hist rank_wait, rank_lat;
	int rc = 0;
	/* The reductions below, on every rank: summary.json timing.reduce_seconds. */
	uint64_t reduce0 = timer_now_ns();

	warn_if_stopped(run);
	results_gather_warnings(run);
	for (int r = 0; r < nreps; r++)
		d.nep += reps[r].epochs;
	if (run->rank == 0) {
		d.ep = calloc((size_t)d.nep, sizeof(*d.ep));
		d.ranks = calloc((size_t)run->nranks, sizeof(*d.ranks));
		d.rep_rank = calloc((size_t)nreps * (size_t)run->nranks, sizeof(*d.rep_rank));
	}
	if ((rc = epochs_reduce(run, reps, nreps, &d, &mine, &rank_wait, &rank_lat)) < 0) {
		report_data_free(&d);
		return rc;
	}
	d.eval = eval_reduce(run, reps, nreps);
	d.accel = accel_reduce(run, reps, nreps);
	rank_totals_gather(run, &mine, &rank_wait, &rank_lat, d.ranks);

	struct timeline_event *tl = NULL;
	int *tlc = run->rank == 0 ? calloc((size_t)run->nranks, sizeof(int)) : NULL;
	int *tld = run->rank == 0 ? calloc((size_t)run->nranks, sizeof(int)) : NULL;
	gather_timeline(run, &reps[0], &tl, tlc, tld);
	results_reduce_time(run, reduce0);

	if (run->rank == 0) {
		struct train_files tf = {run, &d, NULL, tl, tlc, tld};
		rc = rank0_write(run, &tf, ctx, nreps, reps, final_dir, quiet);
	}
	/* every rank makes the broadcast, rank 0 also after a failure */
	MPI_Bcast(&run->rules_broken, 1, MPI_INT, 0, run->comm);
	free(tl);
	free(tlc);
	free(tld);
	report_data_free(&d);
	return agree(run, rc);
}
