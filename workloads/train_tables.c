/* Training's table.md and CSVs, rendered on rank 0 from the figures train_results.c reduced. */
#include "train_results.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "build_config.h"

#include "../bench/storage/storage.h"
#include "../formats/format.h"

static void table_eval(FILE *f, json_t *ev);

void decode_figures_of(const struct epoch_total *ep, int n, const struct lost_time *lost,
		       struct decode_figures *out)
{
	double reading = 0, cpu = 0;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < n; i++) {
		out->samples += ep[i].decodes;
		out->seconds += ep[i].decode_s;
		cpu += ep[i].decode_cpu_s;
		reading += (double)ep[i].lat.sum_ns / 1e9 + ep[i].open_s;
	}
	out->per_sample = out->samples > 0 ? out->seconds / out->samples : NAN;
	out->cpu_per_sample = out->samples > 0 ? cpu / out->samples : NAN;
	out->share = out->seconds + reading > 0 ? out->seconds / (out->seconds + reading) : NAN;
	out->lost = lost ? lost->data_wait * out->share : NAN;
}

/* The device behind the AU figure: name, count, versions, copy bandwidth (CUDA). */
static void table_accelerator(FILE *f, json_t *acc)
{
	json_t *name = json_object_get(acc, "device_name");
	json_t *h2d = json_object_get(acc, "h2d_GiB_per_second");

	if (!name)
		return;
	fprintf(f,
		"- device: %s (%lld of %lld on this node), driver %s, runtime %s, H2D %.2f GiB/s "
		"(%s host memory)\n\n",
		json_string_value(name),
		(long long)json_integer_value(json_object_get(acc, "device_index")),
		(long long)json_integer_value(json_object_get(acc, "device_count")),
		json_string_value(json_object_get(acc, "driver_version")),
		json_string_value(json_object_get(acc, "runtime_version")),
		json_is_number(h2d) ? json_number_value(h2d) : 0.0,
		json_string_value(json_object_get(acc, "host_memory")));
}

/* MPI-IO hints: each requested one with the value in effect, so ignored hints show. */
static void table_hints(FILE *f, json_t *hints)
{
	json_t *req = json_object_get(hints, "requested"),
	       *eff = json_object_get(hints, "effective");
	const char *key;
	json_t *val;

	if (!hints)
		return;
	fprintf(f, "- MPI-IO hints: ");
	if (json_object_size(req) == 0)
		fprintf(f, "none requested");
	json_object_foreach(req, key, val)
	{
		json_t *e = json_object_get(eff, key);
		fprintf(f, "%s=%s (in effect: %s); ", key, json_string_value(val),
			e ? json_string_value(e) : "not reported");
	}
	fprintf(f, "%zu hints in effect (summary.json storage.mpiio_hints)\n",
		json_object_size(eff));
}

/* "requested count 4, effective count 4 size 1048576, servers spanned 4 (0 1 2 3)": OST or OSD ids.
 */
static void stripe_table_text(const struct config *cfg, json_t *eff, char *buf, size_t len)
{
	json_t *ss = json_object_get(eff, "servers_spanned"), *sv = json_object_get(eff, "servers");
	int n = snprintf(buf, len, "requested count %" PRId64 ", effective count %lld size %lld",
			 cfg->storage.stripe_count,
			 (long long)json_integer_value(json_object_get(eff, "count")),
			 (long long)json_integer_value(json_object_get(eff, "size")));

	if (json_integer_value(json_object_get(eff, "object_size")) && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " object_size %lld",
			      (long long)json_integer_value(json_object_get(eff, "object_size")));
	if (json_is_integer(ss) && n > 0 && (size_t)n < len) {
		size_t i;

		n += snprintf(buf + n, len - (size_t)n, ", servers spanned %lld (",
			      (long long)json_integer_value(ss));
		for (i = 0; i < json_array_size(sv) && n > 0 && (size_t)n < len; i++)
			n += snprintf(buf + n, len - (size_t)n, "%s%lld", i ? " " : "",
				      (long long)json_integer_value(json_array_get(sv, i)));
		if (n > 0 && (size_t)n < len)
			snprintf(buf + n, len - (size_t)n, ")");
	} else if (json_is_string(sv) && n > 0 && (size_t)n < len) {
		snprintf(buf + n, len - (size_t)n, ", servers %s", json_string_value(sv));
	}
}

/* The binding line: CPUs per rank and whether the readers share the trainer's core. */
static void table_binding(FILE *f, json_t *b)
{
	json_t *quota = json_object_get(b, "cgroup_cpu_quota");
	char q[64] = "no cgroup CPU limit";

	if (!b)
		return;
	if (json_is_number(quota))
		snprintf(q, sizeof(q), "cgroup limit %.3g CPUs", json_number_value(quota));
	fprintf(f,
		"- binding: CPUs per rank %.3g (rank 0: CPU list %s, used by %lld rank%s of the "
		"node; %s), %lld threads per rank: %s\n",
		json_number_value(json_object_get(b, "cpus_per_rank")),
		json_string_value(json_object_get(b, "cpu_list")),
		(long long)json_integer_value(json_object_get(b, "ranks_sharing_cpus")),
		json_integer_value(json_object_get(b, "ranks_sharing_cpus")) == 1 ? "" : "s", q,
		(long long)json_integer_value(json_object_get(b, "threads_per_rank")),
		json_is_true(json_object_get(b, "readers_share_trainer_core"))
		    ? "readers share the trainer's CPUs"
		    : "each has a CPU of its own");
}

/* Decoding on the reader threads (jpeg, png): apart from the reads, so a run shows when the
 * decoder, not the storage, keeps the accelerator waiting. */
static void table_decode(FILE *f, const struct report_data *d)
{
	struct decode_figures df;

	decode_figures_of(d->ep, d->nep, &d->lost, &df);
	if (df.samples == 0)
		return;
	fprintf(
	    f,
	    "| decode (reader threads) | %.3f ms per sample (%.3f ms of CPU; %.0f samples, %.3f "
	    "s): %.1f %% of the readers' time; about %.1f %% of step time lost waiting on "
	    "decoding | |\n",
	    df.per_sample * 1e3, df.cpu_per_sample * 1e3, df.samples, df.seconds, 100 * df.share,
	    100 * df.lost);
}

static void table_cpu(FILE *f, const struct report_data *d)
{
	const struct run *run = d->run;
	double cpu = d->tot_cpu_user + d->tot_cpu_sys, lo = INFINITY, hi = 0, sum = 0;

	for (int r = 0; r < run->nranks; r++) {
		const struct rank_total *t = &d->ranks[r];
		double busy = t->wall > 0 ? (t->cpu_user + t->cpu_sys) / t->wall : 0;
		lo = fmin(lo, busy);
		hi = fmax(hi, busy);
		sum += busy;
	}
	fprintf(f,
		"| CPU user + system | %.3f + %.3f s: %.3f s/GiB, %.2f cores busy per "
		"accelerator | %.2f / %.2f / %.2f cores |\n",
		d->tot_cpu_user, d->tot_cpu_sys, cpu_per_gib(cpu, d->tot_bytes),
		d->tot_wall > 0 ? cpu / (d->tot_wall * run->nranks) : NAN, lo, sum / run->nranks,
		hi);
}

/* "| bandwidth per node | 2 nodes: labh1 (2 ranks), labh2 (2 ranks) | min / mean / max |" */
static void table_nodes(FILE *f, const struct report_data *d)
{
	double bmin, bmean, bmax;

	nodes_spread(d->nodes, d->nnodes, &bmin, &bmean, &bmax);
	fprintf(f, "| bandwidth per node | %d node%s:", d->nnodes, d->nnodes == 1 ? "" : "s");
	for (int k = 0; k < d->nnodes && k < 8; k++)
		fprintf(f, "%s %s (%d rank%s, %.1f MiB/s)", k ? "," : "", d->nodes[k].host,
			d->nodes[k].nranks, d->nodes[k].nranks == 1 ? "" : "s", d->nodes[k].bw);
	fprintf(f, "%s | %.1f / %.1f / %.1f MiB/s |\n", d->nnodes > 8 ? ", ..." : "", bmin, bmean,
		bmax);
}

/* accelerators_per_rank > 1: one row per emulated accelerator. */
static void table_accel(FILE *f, json_t *arr)
{
	json_t *o;
	size_t i;

	if (!arr)
		return;
	fprintf(f,
		"\nEmulated accelerators (accelerators_per_rank; accelerator = loader x ranks + "
		"rank):\n\n| accelerator | rank | loader | samples | samples/s | MiB/s | AU %% | "
		"wait p99 ms |\n|---|---|---|---|---|---|---|---|\n");
	json_array_foreach(arr, i, o)
	{
		fprintf(f, "| %d | %d | %d | %.0f | %.1f | %.1f | %.2f | %.3f |\n",
			(int)json_integer_value(json_object_get(o, "accelerator")),
			(int)json_integer_value(json_object_get(o, "rank")),
			(int)json_integer_value(json_object_get(o, "loader")),
			json_number_value(json_object_get(o, "samples")),
			json_number_value(json_object_get(o, "samples_per_second")),
			json_number_value(json_object_get(o, "bandwidth_MiB_per_second")),
			json_number_value(json_object_get(o, "au_percentage")),
			json_number_value(json_object_get(o, "data_wait_p99_seconds")) * 1e3);
	}
}

/* The stripe line: what was requested and what the file system reports. */
static void table_stripe_text(const struct config *cfg, json_t *storage, char *stripe, size_t n)
{
	json_t *eff = json_object_get(storage, "stripe_effective");

	if (json_is_string(eff))
		snprintf(stripe, n, "requested count %" PRId64 ", effective %s",
			 cfg->storage.stripe_count, json_string_value(eff));
	else if (json_is_object(eff))
		stripe_table_text(cfg, eff, stripe, n);
	else if (cfg->storage.stripe_count == 0 && cfg->storage.stripe_size == 0)
		snprintf(stripe, n, "not requested (file-system default layout)");
	else
		snprintf(stripe, n, "requested count %" PRId64 " (not read back)",
			 cfg->storage.stripe_count);
}

/* The run's set-up, a bullet each: ranks, dataset, storage, cache, stripe, binding, compute. */
static void table_setup(FILE *f, const struct report_data *d, const json_t *summary)
{
	const struct run *run = d->run;
	const struct config *cfg = &run->cfg;
	json_t *storage = json_object_get(summary, "storage");
	char stripe[768];

	table_stripe_text(cfg, storage, stripe, sizeof(stripe));
	fprintf(f, "## feedbench %s: %s\n\n", FEEDBENCH_VERSION, cfg->workload.name);
	fprintf(f,
		"- run: %d ranks on %d node%s (%s), %" PRId64 " epochs x %" PRId64 " repetitions\n",
		run->nranks, run->nnodes, run->nnodes == 1 ? "" : "s", run->hostname,
		cfg->train.epochs, cfg->output.repetitions);
	fprintf(f, "- dataset: %s, %s, %u files, %" PRIu64 " samples, %.1f MiB%s\n",
		run->format->name,
		cfg_choice_name("dataset", "file_access", cfg->dataset.file_access), run->ds.nfiles,
		run->ds.nsamples, (double)run->ds.data_bytes / MIB,
		run->ds.generated ? "" : " (existing files)");
	char transfer[64] = "whole samples per read call";
	if (cfg->storage.transfer_size)
		snprintf(transfer, sizeof(transfer), "%" PRIu64 " bytes per read call",
			 cfg->storage.transfer_size);
	fprintf(f, "- storage: %s back-end on %s (mount %s), %s\n", run->storage->name,
		run->fs.type, run->fs.mount, transfer);
	fprintf(f, "- cache: direct = %s, page_cache = %s, dataset %s RAM (%.1f GiB)%s\n",
		cfg->storage.direct ? "true" : "false",
		cfg_choice_name("storage", "page_cache", cfg->storage.page_cache),
		(double)run->ds.data_bytes < d->host_mem ? "fits in" : "exceeds",
		d->host_mem / (MIB * 1024),
		d->cache_resident ? " -> **cache-resident**: reads may come from memory" : "");
	fprintf(f, "- stripe: %s\n", stripe);
	table_hints(f, json_object_get(storage, "mpiio_hints"));
	table_binding(f, json_object_get(summary, "binding"));
	fprintf(f,
		"- accelerator: %s; computation_time %.6g s/step, batch %" PRId64
		", %u read threads (%s), prefetch %" PRId64 "\n\n",
		run->accel_why, cfg->train.computation_time, cfg->reader.batch_size,
		run->read_threads, run->read_threads_why, cfg->reader.prefetch_size);
}

/* The metric table: whole-run figures with their spread over ranks, the verdict and why. */
static void table_metrics(FILE *f, const struct report_data *d)
{
	const struct run *run = d->run;
	const struct config *cfg = &run->cfg;
	double rmin_bw = INFINITY, rmax_bw = 0, rsum_bw = 0;
	for (int r = 0; r < run->nranks; r++) {
		double bw = d->ranks[r].wall > 0 ? d->ranks[r].bytes / MIB / d->ranks[r].wall : 0;
		rmin_bw = fmin(rmin_bw, bw);
		rmax_bw = fmax(rmax_bw, bw);
		rsum_bw += bw;
	}
	fprintf(f, "| metric | value | per rank min / mean / max |\n|---|---|---|\n");
	fprintf(f, "| bandwidth | %.1f MiB/s | %.1f / %.1f / %.1f MiB/s |\n", d->bw, rmin_bw,
		rsum_bw / run->nranks, rmax_bw);
	table_nodes(f, d);
	fprintf(f, "| bytes read | %.0f (%.1f MiB) | |\n", d->tot_bytes, d->tot_bytes / MIB);
	fprintf(f, "| IOPS | %.1f read calls/s | |\n", d->iops);
	fprintf(f, "| samples/s | %.1f | |\n", d->sps);
	double opens = 0, open_s = 0;
	for (int i = 0; i < d->nep; i++) {
		opens += d->ep[i].opens;
		open_s += d->ep[i].open_s;
	}
	fprintf(f, "| file opens (metadata) | %.0f opens, %.3f s in open() over all ranks | |\n",
		opens, open_s);
	table_cpu(f, d);
	table_decode(f, d);
	fprintf(f, "| AU | %.2f %% (threshold %.0f %%): %s | %.2f / %.2f / %.2f %% |\n", d->au_mean,
		cfg->train.au_threshold * 100, d->verdict, d->au_min, d->au_mean, d->au_max);
	fprintf(f,
		"| lost time (of step time) | data wait %.1f %%, H2D copy %.1f %%, step barrier "
		"%.1f %%, other %.1f %% | |\n",
		100 * d->lost.data_wait, 100 * d->lost.copy, 100 * d->lost.barrier,
		100 * d->lost.other);
	fprintf(f, "| verdict | %s: %s | |\n", d->verdict, d->verdict_why);
	fprintf(f,
		"| DLIO-comparable | AU %.2f %% (configured computation time / step time, mean "
		"over epochs), %.1f samples/s (start-up included) | |\n",
		d->dlio_au, d->dlio_sps);
	fprintf(f, "| data wait p50 / p99 | %.3f / %.3f ms | |\n",
		hist_quantile(&d->wait, 0.5) * 1e3, hist_quantile(&d->wait, 0.99) * 1e3);
	fprintf(f,
		"| read latency p50 / p90 / p99 / p99.9 / max | %.3f / %.3f / %.3f / %.3f / "
		"%.3f ms | |\n\n",
		hist_quantile(&d->lat, 0.5) * 1e3, hist_quantile(&d->lat, 0.9) * 1e3,
		hist_quantile(&d->lat, 0.99) * 1e3, hist_quantile(&d->lat, 0.999) * 1e3,
		(double)d->lat.max_ns / 1e6);
}

/* One row per epoch of every repetition. */
static void table_epochs(FILE *f, const struct report_data *d)
{
	fprintf(f, "| rep | epoch | wall s | MiB/s | IOPS | samples/s | AU %% | wait p99 ms | "
		   "lost: wait / copy / barrier / other %% |\n"
		   "|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < d->nep; i++) {
		const struct lost_time *l = &d->ep[i].lost;
		fprintf(
		    f,
		    "| %d | %d | %.3f | %.1f | %.1f | %.1f | %.2f | %.3f | %.1f / %.1f / %.1f / "
		    "%.1f |\n",
		    d->ep[i].rep + 1, d->ep[i].epoch + 1, d->ep[i].wall, d->ep[i].bw, d->ep[i].iops,
		    d->ep[i].sps, d->ep[i].au, hist_quantile(&d->ep[i].wait, 0.99) * 1e3,
		    100 * l->data_wait, 100 * l->copy, 100 * l->barrier, 100 * l->other);
	}
}

static void table_warnings(FILE *f, json_t *warnings)
{
	if (json_array_size(warnings)) {
		fprintf(f, "\nWarnings:\n");
		for (size_t i = 0; i < json_array_size(warnings); i++)
			fprintf(f, "- %s\n", json_string_value(json_array_get(warnings, i)));
	}
}

void train_table_write(FILE *f, const struct report_data *d, const json_t *summary)
{
	table_setup(f, d, summary);
	table_accelerator(f, json_object_get(summary, "accelerator"));
	table_metrics(f, d);
	table_epochs(f, d);
	table_eval(f, d->eval);
	table_accel(f, d->accel);
	table_warnings(f, json_object_get(summary, "warnings"));
}

int train_write_csvs(const char *dir, const struct report_data *d, const struct timeline_event *tl,
		     const int *tl_count, const int *tl_displ)
{
	const struct run *run = d->run;
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int rc;

	m = open_memstream(&buf, &len);
	if (!m)
		return -ENOMEM;
	fprintf(m, "bucket_upper_seconds,count,cumulative_fraction\n");
	uint64_t cum = 0;
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		if (!d->lat.bucket[b])
			continue;
		cum += d->lat.bucket[b];
		fprintf(m, "%.9f,%" PRIu64 ",%.9f\n", (double)hist_bucket_upper_ns(b) / 1e9,
			d->lat.bucket[b], (double)cum / (double)d->lat.count);
	}
	if ((rc = results_write_stream(dir, "latency.csv", &buf, m)) < 0)
		return rc;

	static const char *const kinds[] = {"read", "wait", "compute", "barrier", "epoch"};
	buf = NULL;
	m = open_memstream(&buf, &len);
	if (!m)
		return -ENOMEM;
	fprintf(m, "rank,thread,kind,start_seconds,end_seconds\n");
	for (int r = 0; r < run->nranks; r++)
		for (int k = 0; k < tl_count[r]; k++) {
			const struct timeline_event *e = &tl[tl_displ[r] + k];
			fprintf(m, "%d,%d,%s,%.9f,%.9f\n", r, e->thread,
				kinds[e->kind >= 0 && e->kind <= TL_EPOCH ? e->kind : 0], e->start,
				e->end);
		}
	return results_write_stream(dir, "timeline.csv", &buf, m);
}

/* table.md: one row per evaluation pass, under the epochs'. */
static void table_eval(FILE *f, json_t *ev)
{
	json_t *passes = json_object_get(ev, "passes"), *p;
	size_t i;

	if (!ev)
		return;
	fprintf(f,
		"\nEvaluation: %lld files, %lld samples, batch %lld, eval_time %.6g s, after epoch "
		"%lld and every %lld (not in training's figures above):\n\n",
		(long long)pass_num(ev, "files"), (long long)pass_num(ev, "samples"),
		(long long)pass_num(ev, "batch_size"), pass_num(ev, "eval_time"),
		(long long)pass_num(ev, "eval_after_epoch"),
		(long long)pass_num(ev, "epochs_between_evals"));
	fprintf(f, "| rep | after epoch | wall s | MiB/s | samples/s | samples | steps | AU %% | "
		   "wait p99 ms |\n|---|---|---|---|---|---|---|---|---|\n");
	json_array_foreach(passes, i, p)
	{
		fprintf(f, "| %d | %d | %.3f | %.1f | %.1f | %.0f | %.0f | %.2f | %.3f |\n",
			(int)pass_num(p, "repetition"), (int)pass_num(p, "after_epoch"),
			pass_num(p, "wall_seconds"), pass_num(p, "bandwidth_MiB_per_second"),
			pass_num(p, "samples_per_second"), pass_num(p, "samples"),
			pass_num(p, "steps"), pass_num(p, "au_percentage"),
			pass_num(json_object_get(p, "data_wait_seconds"), "p99") * 1e3);
	}
}
