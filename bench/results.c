/* Results: reduce, compute the metrics of docs/results.md, write the run folder atomically. */
#include "results.h"
#include "nodes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_config.h"
#include "agree.h"
#include "report.h"
#include "run.h"
#include "safefile.h"
#include "../workloads/workload.h"
#include "util.h"
#include "../workloads/checkpoint.h"
#include "verdict.h"

#define MIB	       1048576.0
#define TIMELINE_RANKS 64 /* ranks whose timeline is gathered into timeline.csv */

enum {
	R_WALL,
	R_COMPUTE,
	R_STEP,
	R_BARRIER,
	R_COPY,
	R_COPYB,
	R_STEPS,
	R_BYTES,
	R_OPS,
	R_OPENS,
	R_OPEN_NS,
	R_SAMPLES,
	R_RETRIES,
	R_CPU_USER,
	R_CPU_SYS,
	R_CONF,
	R_WAIT,
	R_NF
};

/* One epoch reduced over ranks (rank 0). */
struct epoch_total {
	int rep, epoch;
	double wall, bytes, ops, samples, opens, open_s, retries;
	double bw, iops, sps, au, barrier_s, copy_s, copy_bytes;
	double cpu_user, cpu_sys; /* CPU seconds, summed over ranks */
	double conf_au;		  /* DLIO's AU: configured compute / step time, mean over ranks */
	double dlio_sps;	  /* samples / (wall + start-up in the first epoch), DLIO's way */
	struct lost_time lost;	  /* mean over ranks of each rank's split */
	struct hist lat, wait;
};

struct rank_total {
	double wall, bytes, ops, samples, compute, step, barrier;
	double conf, wait, copy; /* configured compute, data wait, H2D copy: included steps */
	double wait_p99, lat_p99;
	double peak_rss;    /* bytes: the rank's peak resident set (getrusage ru_maxrss) */
	double table_bytes; /* bytes: the rank's file tables (dataset_table_bytes) */
	double cpu_user, cpu_sys;
	char host[64];
	int node_leader, local_rank; /* which node (its local rank 0's world rank), rank on it */
};

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
	v[R_CPU_USER] = er->cpu_user_s;
	v[R_CPU_SYS] = er->cpu_sys_s;
	v[R_CONF] = er->conf_s;
	v[R_WAIT] = (double)er->wait.sum_ns / 1e9;
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

/* CPU per GiB: CPU seconds (user + system, every thread of every rank) over GiB read; cores
 * busy per accelerator: CPU seconds over (ranks x wall time). Null when nothing was read. */
static double cpu_per_gib(double cpu_s, double bytes)
{
	return bytes > 0 ? cpu_s / (bytes / (MIB * 1024)) : NAN;
}

static json_t *json_num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
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

static json_t *config_json(const struct config *cfg)
{
	json_t *root = json_object();
	char val[CFG_PATH_MAX];

	for (size_t i = 0; i < cfg_nkeys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		json_t *sec = json_object_get(root, k->section);
		if (!sec) {
			sec = json_object();
			json_object_set_new(root, k->section, sec);
		}
		cfg_format_value(cfg, k, val, sizeof(val));
		switch (k->type) {
		case CFG_BOOL:
			json_object_set_new(sec, k->name, json_boolean(strcmp(val, "true") == 0));
			break;
		case CFG_INT:
		case CFG_SIZE:
			if (strcmp(val, "auto") == 0) /* CFG_F_AUTO: resolved at run time */
				json_object_set_new(sec, k->name, json_string(val));
			else
				json_object_set_new(sec, k->name,
						    json_integer(strtoll(val, NULL, 10)));
			break;
		case CFG_DURATION:
		case CFG_DOUBLE:
			json_object_set_new(sec, k->name, json_real(strtod(val, NULL)));
			break;
		default:
			json_object_set_new(sec, k->name, json_string(val));
		}
	}
	json_t *mp = json_object_get(root, "storage.mpiio");
	for (int h = 0; mp && h < cfg->mpiio.nhints; h++)
		json_object_set_new(mp, cfg->mpiio.hints[h].key,
				    json_string(cfg->mpiio.hints[h].value));
	if (cfg->sweep.nkeys) {
		json_t *sw = json_object_get(root, "sweep");
		for (int s = 0; sw && s < cfg->sweep.nkeys; s++)
			json_object_set_new(sw, cfg->sweep.keys[s].key,
					    json_string(cfg->sweep.keys[s].values));
	}
	return root;
}

uint64_t results_host_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

/* The machine rank 0 ran on, for baseline fingerprints (CPU model, memory, kernel). */
static json_t *host_json(void)
{
	struct util_host h;
	json_t *o = json_object();

	util_host_describe(&h);
	json_object_set_new(o, "cpu_model", json_string(h.cpu_model));
	json_object_set_new(o, "cpus", json_integer(h.cpus));
	json_object_set_new(o, "memory_bytes", json_integer((json_int_t)h.memory_bytes));
	json_object_set_new(o, "kernel", json_string(h.kernel));
	return o;
}

/* ---- writing files --------------------------------------------------------------------- */

/* Writes one file of the run folder. dir is the fresh temporary folder (safe_tmpdir) that takes
 * the run's name only once everything in it is on disk, so a file needs no temporary name and
 * rename of its own, and no fsync yet: sync_folder() syncs them all at the end, when one journal
 * commit carries them together (17 fsyncs cost 0.1-0.3 s per run on a busy disk). */
static int write_text(const char *dir, const char *name, const char *text)
{
	char path[4096];
	size_t len = strlen(text), done = 0;
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)n;
	}
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* Every regular file of the folder, then the folder itself, to disk. 0 or -errno. */
static int sync_folder(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return -errno;
	while (rc == 0 && (e = readdir(d))) {
		int fd =
		    openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		struct stat st;
		if (fd < 0)
			continue; /* "." and ".." open fine; a name gone or refused holds no data */
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fsync(fd) < 0)
			rc = -errno;
		close(fd);
	}
	if (rc == 0 && fsync(dirfd(d)) < 0)
		rc = -errno;
	closedir(d);
	return rc;
}

/* Closes an open_memstream (which only then publishes its buffer) and writes it out. */
static int write_stream(const char *dir, const char *name, char **buf, FILE *mem)
{
	int rc;

	if (fclose(mem) != 0) {
		free(*buf);
		*buf = NULL;
		return -ENOMEM;
	}
	rc = write_text(dir, name, *buf ? *buf : "");
	free(*buf);
	*buf = NULL;
	return rc;
}

struct report_data {
	struct run *run;
	struct node_total *nodes; /* per node (bench/nodes.c) */
	struct node_rank *node_of;
	int nnodes;
	struct epoch_total *ep;
	int nep;
	struct rank_total *ranks;
	struct hist lat, wait;
	double tot_bytes, tot_ops, tot_samples, tot_wall, tot_cpu_user, tot_cpu_sys;
	double bw, iops, sps, au_mean, au_sd, io_mean, io_sd, sps_sd;
	double au_min, au_max;	      /* per-rank AU range (ranks with included steps) */
	double dlio_au, dlio_sps;     /* DLIO-comparable: mean over epochs, as DLIO computes them */
	struct lost_time lost;	      /* run level: mean over ranks */
	double min_steps;	      /* measured steps of an epoch on the rank with the fewest */
	json_t *rules;		      /* MLPerf Storage rules broken: their reasons */
	struct step_totals *rep_rank; /* [repetition][rank]: step totals, for per-repetition AU */
	bool cache_resident;
	const char *verdict;
	char verdict_why[512];
	double host_mem;
	json_t *eval;  /* the evaluation passes reduced (eval_reduce), or NULL */
	json_t *accel; /* accelerators_per_rank > 1: per emulated accelerator (accel_reduce) */
};

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

static void table_eval(FILE *f, json_t *ev);

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

static void table_write(FILE *f, const struct report_data *d, const json_t *summary)
{
	const struct run *run = d->run;
	const struct config *cfg = &run->cfg;
	json_t *storage = json_object_get(summary, "storage");
	json_t *eff = json_object_get(storage, "stripe_effective");
	char stripe[768];

	if (json_is_string(eff))
		snprintf(stripe, sizeof(stripe), "requested count %" PRId64 ", effective %s",
			 cfg->storage.stripe_count, json_string_value(eff));
	else if (json_is_object(eff))
		stripe_table_text(cfg, eff, stripe, sizeof(stripe));
	else if (cfg->storage.stripe_count == 0 && cfg->storage.stripe_size == 0)
		snprintf(stripe, sizeof(stripe), "not requested (file-system default layout)");
	else
		snprintf(stripe, sizeof(stripe), "requested count %" PRId64 " (not read back)",
			 cfg->storage.stripe_count);

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

	double rmin_bw = INFINITY, rmax_bw = 0, rsum_bw = 0;
	for (int r = 0; r < run->nranks; r++) {
		double bw = d->ranks[r].wall > 0 ? d->ranks[r].bytes / MIB / d->ranks[r].wall : 0;
		rmin_bw = fmin(rmin_bw, bw);
		rmax_bw = fmax(rmax_bw, bw);
		rsum_bw += bw;
	}
	table_accelerator(f, json_object_get(summary, "accelerator"));
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
	table_eval(f, d->eval);
	table_accel(f, d->accel);
	json_t *warnings = json_object_get(summary, "warnings");
	if (json_array_size(warnings)) {
		fprintf(f, "\nWarnings:\n");
		for (size_t i = 0; i < json_array_size(warnings); i++)
			fprintf(f, "- %s\n", json_string_value(json_array_get(warnings, i)));
	}
}

static int write_csvs(const char *dir, const struct report_data *d, const struct timeline_event *tl,
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
	fprintf(m, "repetition,epoch,wall_seconds,bytes_read,read_ops,samples,"
		   "bandwidth_MiB_per_second,iops,samples_per_second,au_percentage,"
		   "latency_p50_seconds,latency_p90_seconds,latency_p99_seconds,"
		   "latency_p999_seconds,latency_max_seconds,data_wait_p50_seconds,"
		   "data_wait_p99_seconds,au_threshold_percentage,lost_data_wait_fraction,"
		   "lost_copy_fraction,lost_barrier_fraction,lost_other_fraction\n");
	for (int i = 0; i < d->nep; i++) {
		const struct epoch_total *e = &d->ep[i];
		fprintf(m,
			"%d,%d,%.9f,%.0f,%.0f,%.0f,%.6f,%.6f,%.6f,%.6f,%.9f,%.9f,%.9f,%.9f,%.9f,"
			"%.9f,%.9f,%.2f,%.6f,%.6f,%.6f,%.6f\n",
			e->rep + 1, e->epoch + 1, e->wall, e->bytes, e->ops, e->samples, e->bw,
			e->iops, e->sps, e->au, hist_quantile(&e->lat, 0.5),
			hist_quantile(&e->lat, 0.9), hist_quantile(&e->lat, 0.99),
			hist_quantile(&e->lat, 0.999), (double)e->lat.max_ns / 1e9,
			hist_quantile(&e->wait, 0.5), hist_quantile(&e->wait, 0.99),
			run->cfg.train.au_threshold * 100, e->lost.data_wait, e->lost.copy,
			e->lost.barrier, e->lost.other);
	}
	if ((rc = write_stream(dir, "epochs.csv", &buf, m)) < 0)
		return rc;

	buf = NULL;
	m = open_memstream(&buf, &len);
	if (!m)
		return -ENOMEM;
	fprintf(m, "rank,host,wall_seconds,bytes_read,read_ops,samples,bandwidth_MiB_per_second,"
		   "au_percentage,compute_seconds,step_seconds,barrier_seconds,"
		   "data_wait_p99_seconds,latency_p99_seconds\n");
	for (int r = 0; r < run->nranks; r++) {
		const struct rank_total *t = &d->ranks[r];
		fprintf(m, "%d,%s,%.9f,%.0f,%.0f,%.0f,%.6f,%.6f,%.9f,%.9f,%.9f,%.9f,%.9f\n", r,
			t->host, t->wall, t->bytes, t->ops, t->samples,
			t->wall > 0 ? t->bytes / MIB / t->wall : 0,
			t->step > 0 ? 100 * t->compute / t->step : 0, t->compute, t->step,
			t->barrier, t->wait_p99, t->lat_p99);
	}
	if ((rc = write_stream(dir, "ranks.csv", &buf, m)) < 0)
		return rc;

	buf = NULL;
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
	if ((rc = write_stream(dir, "latency.csv", &buf, m)) < 0)
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
	return write_stream(dir, "timeline.csv", &buf, m);
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
	if (!verdict_rule_steps(isfinite(d->min_steps) ? d->min_steps : 0,
				(double)cfg->reader.prefetch_size, why, sizeof(why))) {
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

void results_summary_head(struct run *run, const struct results_ctx *ctx, json_t *s)
{
	const struct config *cfg = &run->cfg;
	char hash[65], commit[128], source[32];

	json_object_set_new(s, "schema", json_integer(1));
	json_object_set_new(s, "feedbench_version", json_string(FEEDBENCH_VERSION));
	json_object_set_new(s, "workload", json_string(cfg->workload.name));
	json_object_set_new(s, "workload_type", json_string(run->workload->name));
	json_object_set_new(s, "description", json_string(cfg->workload.description));
	json_object_set_new(s, "run_id", json_string(ctx->run_id));
	json_object_set_new(s, "start", json_string(ctx->start_iso));
	json_object_set_new(s, "end", json_string(ctx->end_iso));
	json_object_set_new(s, "hostname", json_string(run->hostname));
	json_object_set_new(s, "host", host_json());
	if (util_git_commit(commit, sizeof(commit), source, sizeof(source)) == 0) {
		json_object_set_new(s, "git_commit", json_string(commit));
		json_object_set_new(s, "git_commit_source", json_string(source));
	} else {
		json_object_set_new(s, "git_commit", json_null());
	}
	json_object_set_new(s, "num_ranks", json_integer(run->nranks));
	json_object_set_new(s, "num_nodes", json_integer(run->nnodes));
	json_object_set_new(s, "num_accelerators",
			    json_integer((json_int_t)run->nranks *
					 (json_int_t)run->cfg.train.accelerators_per_rank));
	json_object_set_new(s, "accelerators_per_rank",
			    json_integer((json_int_t)run->cfg.train.accelerators_per_rank));
	json_object_set_new(s, "config", config_json(cfg));
	cfg_hash(cfg, hash);
	json_object_set_new(s, "config_hash", json_string(hash));
	cfg_dataset_hash(cfg, hash);
	json_object_set_new(s, "dataset_hash", json_string(hash));
}

static json_t *summary_build(struct report_data *d, const struct results_ctx *ctx, int nreps,
			     const struct train_result *reps)
{
	struct run *run = d->run;
	const struct config *cfg = &run->cfg;
	json_t *s = json_object(), *st, *acc, *eps, *ranks;

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

	eps = json_array();
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
		json_object_set_new(o, "data_wait_seconds", wait_json(&e->wait));
		json_array_append_new(eps, o);
	}
	json_object_set_new(s, "epochs", eps);

	ranks = json_array();
	double peak_rss = 0, table_max = 0;
	for (int r = 0; r < run->nranks; r++) {
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
		peak_rss = fmax(peak_rss, t->peak_rss);
		table_max = fmax(table_max, t->table_bytes);
	}
	json_object_set_new(s, "ranks", ranks);
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

/* The plots, then report.md (which embeds the pictures that were drawn), in the temporary
 * folder: a folder that has its final name is complete, pictures included. A missing gnuplot is
 * a warning (the results stand without pictures); a picture or report.md that cannot be written
 * is a failure of the run, and report.md is written first either way. */
static int write_pictures(const char *tmp, bool plots, char *why, size_t len)
{
	int prc = plots ? plot_render(tmp, why, len) : 0, rc;

	if (prc > 0)
		fprintf(stderr, "feedbench: warning: plots skipped: %s\n", why);
	if ((rc = report_write_run(tmp)) < 0) {
		snprintf(why, len, "cannot write report.md: %s", fb_strerror(rc));
		return rc;
	}
	/* No folder fsync here: sync_folder() runs next and syncs every file and the folder
	 * (the pictures' names included) before the rename, in one journal commit. */
	return prc < 0 ? prc : 0;
}

/* A run whose results could not all be written keeps what it measured: the temporary
 * folder becomes "<final>.unfinished" (or -2 ...) when summary.json is in it. Returns whether
 * it was kept; where goes to kept. */
static bool keep_unfinished(const char *tmp, const char *final_dir, bool have_summary, char *kept,
			    size_t len)
{
	char base[4200];

	snprintf(base, sizeof(base), "%s.unfinished", final_dir);
	if (have_summary)
		sync_folder(tmp); /* best effort: what is kept is kept as far as it goes */
	if (have_summary && safe_rename_unique(tmp, base, kept, len) == 0)
		return true;
	util_remove_tree(tmp);
	return false;
}

/* Rank 0. The folder is a fresh temporary one beside the final name (mkdtemp), every file
 * is written and synced into it, and it takes the final name with a rename that never
 * replaces anything: with unique, "-2", "-3" ... when the name is taken (two runs in one
 * second), else the name taken is a failure. final_dir gets the name taken. */
/* Train's own files: the CSVs and table.md. */
struct train_files {
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
	int rc = write_csvs(tmp, t->d, t->tl, t->tlc, t->tld);

	if (rc < 0)
		return rc;
	m = open_memstream(&buf, &len);
	if (!m)
		return -ENOMEM;
	table_write(m, t->d, t->summary);
	return write_stream(tmp, "table.md", &buf, m);
}

/* The run folder: summary.json, config.ini and what fill writes, in a temporary folder that
 * takes its final name only when complete. */
static int write_folder(struct run *run, json_t *summary, char *final_dir, size_t final_len,
			bool unique, int (*fill)(const char *tmp, void *arg), void *arg, bool quiet,
			bool plots)
{
	char tmp[4096], parent[4096], want[4096], why[1024] = "", kept[4300], *buf = NULL;
	bool have_summary = false;
	size_t len = 0;
	FILE *m;
	int rc;

	snprintf(want, sizeof(want), "%s", final_dir);
	snprintf(parent, sizeof(parent), "%s", final_dir);
	char *slash = strrchr(parent, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(parent, sizeof(parent), ".");
	if ((rc = util_mkdirs(parent, 0755)) < 0 ||
	    (rc = safe_tmpdir(parent, slash ? slash + 1 : final_dir, tmp, sizeof(tmp))) < 0)
		return run_fail(run, rc, "cannot create a results folder in '%s': %s", parent,
				strerror(-rc));

	char *text = json_dumps(summary, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	rc = text ? write_text(tmp, "summary.json", text) : -ENOMEM;
	free(text);
	have_summary = rc == 0;
	if (rc == 0 && fill)
		rc = fill(tmp, arg);
	if (rc == 0) {
		m = open_memstream(&buf, &len);
		if (!m) {
			rc = -ENOMEM;
			goto out_written;
		}
		cfg_write_ini(&run->cfg, m);
		rc = write_stream(tmp, "config.ini", &buf, m);
	}
out_written:
	if (rc < 0)
		snprintf(why, sizeof(why), "%s", strerror(-rc));
	if (rc == 0)
		rc = write_pictures(tmp, plots, why, sizeof(why));
	if (rc == 0 && run->stop && *run->stop) {
		/* Interrupted while writing: the folder is not a finished run. */
		rc = -FB_EINTR;
		snprintf(why, sizeof(why), "interrupted by a signal");
	}
	if (rc == 0 && (rc = sync_folder(tmp)) < 0)
		snprintf(why, sizeof(why), "%s", strerror(-rc));
	if (rc == 0) {
		rc = unique ? safe_rename_unique(tmp, want, final_dir, final_len)
			    : safe_rename_noreplace(tmp, final_dir);
		if (rc < 0)
			snprintf(why, sizeof(why), "%s", strerror(-rc));
	}
	if (rc == 0 && !quiet) { /* the table is shown once its results are safely in place */
		char path[4200];
		snprintf(path, sizeof(path), "%s/table.md", final_dir);
		FILE *t = fopen(path, "r");
		char line[4096];
		while (t && fgets(line, sizeof(line), t))
			fputs(line, stdout);
		if (t)
			fclose(t);
		fflush(stdout);
	}
	if (rc < 0) {
		snprintf(final_dir, final_len, "%s", want);
		if (keep_unfinished(tmp, final_dir, have_summary, kept, sizeof(kept)))
			return run_fail(run, rc,
					"cannot write results into '%s': %s; what was measured "
					"is kept in '%s' (summary.json), earlier results are "
					"untouched",
					final_dir, why, kept);
		return run_fail(run, rc,
				"cannot write results into '%s': %s (earlier results are "
				"untouched)",
				final_dir, why);
	}
	return 0;
}

/* Collective: the warnings other ranks raised (a rank's own file system, nominal bytes on
 * that rank) join rank 0's list, each once, prefixed with the rank; rank 0 prints the new
 * ones as run_warn() printed its own. */
static void gather_warnings(struct run *run)
{
	char *text = json_dumps(run->warnings, JSON_COMPACT);
	int len = text ? (int)strlen(text) + 1 : 0, *lens = NULL, *displs = NULL, total = 0;
	char *all = NULL;

	if (run->rank == 0) {
		lens = calloc((size_t)run->nranks, sizeof(int));
		displs = calloc((size_t)run->nranks, sizeof(int));
	}
	MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, run->comm);
	if (run->rank == 0 && lens && displs) {
		for (int q = 0; q < run->nranks; q++) {
			displs[q] = total;
			total += lens[q];
		}
		all = malloc(total ? (size_t)total : 1);
	}
	MPI_Gatherv(text, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, run->comm);
	for (int q = 1; run->rank == 0 && all && q < run->nranks; q++) {
		json_t *list = lens[q] ? json_loads(all + displs[q], 0, NULL) : NULL;
		json_t *w;
		size_t i;

		json_array_foreach(list, i, w)
		{
			const char *msg = json_string_value(w);
			bool seen = false;
			for (size_t j = 0; msg && j < json_array_size(run->warnings); j++) {
				const char *have =
				    json_string_value(json_array_get(run->warnings, j));
				const char *tail = strstr(have, ": ");
				seen |=
				    strcmp(have, msg) == 0 || (strncmp(have, "rank ", 5) == 0 &&
							       tail && strcmp(tail + 2, msg) == 0);
			}
			if (msg && !seen) {
				char line[1100];
				snprintf(line, sizeof(line), "rank %d: %s", q, msg);
				json_array_append_new(run->warnings, json_string(line));
				if (run->verbose >= 0)
					fprintf(stderr, "feedbench: warning: %s\n", line);
			}
		}
		json_decref(list);
	}
	free(all);
	free(lens);
	free(displs);
	free(text);
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

static double pass_num(json_t *p, const char *key)
{
	return json_number_value(json_object_get(p, key));
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
	/* per repetition: what the metric table's eval rows read */
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
	free(au);
	free(sps);
	free(bw);
	json_object_set(s, "eval", ev);
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

int results_write(struct run *run, struct train_result *reps, int nreps,
		  const struct results_ctx *ctx, const char *final_dir, bool quiet)
{
	struct report_data d = {.run = run, .min_steps = INFINITY};
	int nep = 0, rc = 0;
	uint64_t stopped = __atomic_load_n(&run->stopped_ns, __ATOMIC_RELAXED);

	if (stopped)
		run_warn(run,
			 "the job was stopped (SIGSTOP, a suspended batch job) or starved of CPU "
			 "for about %.1f s in all: the wall time of the epochs it fell in includes "
			 "the pause",
			 (double)stopped / 1e9);
	gather_warnings(run);
	for (int r = 0; r < nreps; r++)
		nep += reps[r].epochs;
	d.nep = nep;
	if (run->rank == 0) {
		d.ep = calloc((size_t)nep, sizeof(*d.ep));
		d.ranks = calloc((size_t)run->nranks, sizeof(*d.ranks));
		d.rep_rank = calloc((size_t)nreps * (size_t)run->nranks, sizeof(*d.rep_rank));
	}
	double *vall = run->rank == 0 ? calloc((size_t)run->nranks * R_NF, sizeof(double)) : NULL;
	/* Start-up before the first read (index files, shared handles): the slowest rank's, per
	 * repetition, for the DLIO-comparable throughput. */
	double *setup = calloc((size_t)nreps, sizeof(double)),
	       *setup_in = calloc((size_t)nreps, sizeof(double));
	/* Every rank leaves together: the reductions below are collectives. */
	int arc = agree(run, !setup || !setup_in ? run_fail(run, -ENOMEM, "out of memory") : 0);
	if (arc < 0) {
		free(setup);
		free(setup_in);
		free(vall);
		free(d.ep);
		free(d.ranks);
		free(d.rep_rank);
		return arc;
	}
	for (int r = 0; r < nreps; r++)
		setup_in[r] = reps[r].setup_s;
	MPI_Reduce(setup_in, setup, nreps, MPI_DOUBLE, MPI_MAX, 0, run->comm);
	free(setup_in);
	struct rank_total mine = {0};
	struct hist rank_wait, rank_lat;
	hist_reset(&rank_wait);
	hist_reset(&rank_lat);
	hist_reset(&d.lat);
	hist_reset(&d.wait);

	int k = 0;
	for (int r = 0; r < nreps; r++) {
		for (int e = 0; e < reps[r].epochs; e++, k++) {
			const struct epoch_rank *er = &reps[r].per_epoch[e];
			double v[R_NF];
			epoch_vector(er, v);
			mine.wall += er->wall_s;
			mine.bytes += (double)er->io.bytes;
			mine.ops += (double)er->io.ops;
			mine.samples += (double)er->io.samples;
			mine.compute += er->compute_s;
			mine.step += er->step_s;
			mine.barrier += er->barrier_s;
			mine.conf += er->conf_s;
			mine.wait += (double)er->wait.sum_ns / 1e9;
			mine.copy += er->copy_s;
			mine.cpu_user += er->cpu_user_s;
			mine.cpu_sys += er->cpu_sys_s;
			hist_merge(&rank_wait, &er->wait);
			hist_merge(&rank_lat, &er->io.latency);
			MPI_Gather(v, R_NF, MPI_DOUBLE, vall, R_NF, MPI_DOUBLE, 0, run->comm);
			struct hist lat, wait;
			hist_reduce(run, &er->io.latency, &lat);
			hist_reduce(run, &er->wait, &wait);
			if (run->rank != 0)
				continue;
			struct epoch_total *t = &d.ep[k];
			struct step_totals *stt = calloc((size_t)run->nranks, sizeof(*stt));
			t->rep = r;
			t->epoch = e;
			for (int q = 0; q < run->nranks; q++) {
				const double *w = vall + (size_t)q * R_NF;
				t->wall = fmax(t->wall, w[R_WALL]);
				t->bytes += w[R_BYTES];
				t->ops += w[R_OPS];
				t->samples += w[R_SAMPLES];
				t->opens += w[R_OPENS];
				t->open_s += w[R_OPEN_NS] / 1e9;
				t->retries += w[R_RETRIES];
				t->cpu_user += w[R_CPU_USER];
				t->cpu_sys += w[R_CPU_SYS];
				t->barrier_s += w[R_BARRIER];
				t->copy_s += w[R_COPY];
				t->copy_bytes += w[R_COPYB];
				if (stt)
					stt[q] = step_totals_of(w);
				if (d.rep_rank) {
					struct step_totals *a =
					    &d.rep_rank[(size_t)r * (size_t)run->nranks +
							(size_t)q];
					a->busy += w[R_COMPUTE];
					a->conf += w[R_CONF];
					a->step += w[R_STEP];
					a->wait += w[R_WAIT];
					a->copy += w[R_COPY];
					a->barrier += w[R_BARRIER];
				}
				d.min_steps =
				    fmin(d.min_steps,
					 fmax(0, w[R_STEPS] -
						     (double)run->cfg.train.exclude_start_steps));
			}
			if (stt)
				verdict_mean(stt, run->nranks, &t->au, &t->lost, NULL, NULL,
					     &t->conf_au);
			free(stt);
			t->bw = t->wall > 0 ? t->bytes / MIB / t->wall : 0;
			t->iops = t->wall > 0 ? t->ops / t->wall : 0;
			t->sps = t->wall > 0 ? t->samples / t->wall : 0;
			double wall_su = t->wall + (e == 0 ? setup[r] : 0);
			t->dlio_sps = wall_su > 0 ? t->samples / wall_su : 0;
			t->lat = lat;
			t->wait = wait;
			hist_merge(&d.lat, &lat);
			hist_merge(&d.wait, &wait);
			d.tot_bytes += t->bytes;
			d.tot_ops += t->ops;
			d.tot_samples += t->samples;
			d.tot_wall += t->wall;
			d.tot_cpu_user += t->cpu_user;
			d.tot_cpu_sys += t->cpu_sys;
		}
	}
	free(vall);
	free(setup);
	d.eval = eval_reduce(run, reps, nreps);
	d.accel = accel_reduce(run, reps, nreps);
	/* Per-rank totals. */
	mine.wait_p99 = hist_quantile(&rank_wait, 0.99);
	mine.lat_p99 = hist_quantile(&rank_lat, 0.99);
	snprintf(mine.host, sizeof(mine.host), "%s", run->hostname);
	mine.node_leader = run->node_leader;
	mine.local_rank = run->local_rank;
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		mine.peak_rss = (double)ru.ru_maxrss * 1024; /* Linux: KiB */
	mine.table_bytes =
	    (double)(dataset_table_bytes(&run->ds) + dataset_table_bytes(&run->eval_ds));
	MPI_Gather(&mine, (int)sizeof(mine), MPI_BYTE, d.ranks, (int)sizeof(mine), MPI_BYTE, 0,
		   run->comm);

	struct timeline_event *tl = NULL;
	int *tlc = run->rank == 0 ? calloc((size_t)run->nranks, sizeof(int)) : NULL;
	int *tld = run->rank == 0 ? calloc((size_t)run->nranks, sizeof(int)) : NULL;
	gather_timeline(run, &reps[0], &tl, tlc, tld);

	if (run->rank == 0) {
		const struct config *cfg = &run->cfg;
		d.host_mem = (double)results_host_memory();
		d.cache_resident = !cfg->storage.direct &&
				   cfg->storage.page_cache == PAGE_CACHE_KEEP &&
				   (double)run->ds.data_bytes < d.host_mem;
		if (d.cache_resident)
			run_warn(run,
				 "cache-resident: the dataset (%.1f MiB) fits in this node's RAM "
				 "(%.1f GiB) and neither direct I/O nor page-cache eviction is on; "
				 "reads may be served from memory",
				 (double)run->ds.data_bytes / MIB, d.host_mem / (MIB * 1024));
		if (cfg->train.computation_time == 0)
			run_warn(run,
				 "computation_time = 0: no compute is emulated, so AU is 0 %% by "
				 "definition and the verdict only says so; read the bandwidth and "
				 "latency figures");
		d.node_of = calloc((size_t)run->nranks, sizeof(*d.node_of));
		for (int r = 0; d.node_of && r < run->nranks; r++)
			d.node_of[r] = (struct node_rank){d.ranks[r].node_leader, d.ranks[r].host,
							  d.ranks[r].bytes, d.ranks[r].wall};
		d.nnodes = d.node_of ? nodes_group(d.node_of, run->nranks, &d.nodes) : -ENOMEM;
		if (d.nnodes < 0) {
			rc = run_fail(run, -ENOMEM, "out of memory grouping ranks by node");
			goto out_nodes;
		}
		d.bw = d.tot_wall > 0 ? d.tot_bytes / MIB / d.tot_wall : 0;
		d.iops = d.tot_wall > 0 ? d.tot_ops / d.tot_wall : 0;
		d.sps = d.tot_wall > 0 ? d.tot_samples / d.tot_wall : 0;
		verdict_figures(&d);
		d.rules = mlperf_rules(run, &d);
		json_t *summary = summary_build(&d, ctx, nreps, reps);
		if (d.eval)
			eval_attach(summary, d.eval, nreps, run->cfg.train.au_threshold);
		if (d.accel)
			json_object_set(summary, "accelerators", d.accel);
		snprintf(run->results_dir, sizeof(run->results_dir), "%s", final_dir);
		struct train_files tf = {&d, summary, tl, tlc, tld};
		rc = write_folder(run, summary, run->results_dir, sizeof(run->results_dir),
				  ctx->unique, train_fill, &tf, quiet, ctx->plots);
		json_decref(summary);
		json_decref(d.rules);
	}
out_nodes: /* every rank makes the broadcast, rank 0 also after a failure */
	MPI_Bcast(&run->rules_broken, 1, MPI_INT, 0, run->comm);
	free(d.nodes);
	free(d.node_of);
	free(tl);
	free(tlc);
	free(tld);
	free(d.ep);
	free(d.ranks);
	free(d.rep_rank);
	json_decref(d.eval);
	json_decref(d.accel);
	return agree(run, rc);
}

json_t *results_storage_json(struct run *run)
{
	const struct config *cfg = &run->cfg;
	json_t *st = json_object();

	json_object_set_new(st, "backend", json_string(run->storage->name));
	json_object_set_new(st, "fs_type", json_string(run->fs.type));
	json_object_set_new(st, "mount", json_string(run->fs.mount));
	json_object_set_new(st, "direct", json_boolean(cfg->storage.direct));
	json_object_set_new(
	    st, "page_cache",
	    json_string(cfg_choice_name("storage", "page_cache", cfg->storage.page_cache)));
	json_object_update(st, run->info_storage);
	return st;
}

struct text_files {
	const struct results_file *files;
	int n;
};

static int text_fill(const char *tmp, void *arg)
{
	const struct text_files *t = arg;

	for (int i = 0; i < t->n; i++) {
		int rc = t->files[i].text ? write_text(tmp, t->files[i].name, t->files[i].text)
					  : -ENOMEM;
		if (rc < 0)
			return rc;
	}
	return 0;
}

int results_write_folder(struct run *run, json_t *summary, const struct results_ctx *ctx,
			 const char *final_dir, const struct results_file *files, int nfiles,
			 bool quiet)
{
	struct text_files t = {files, nfiles};
	int rc = 0;

	gather_warnings(run);
	if (run->rank == 0) {
		json_object_set_new(summary, "warnings", json_deep_copy(run->warnings));
		snprintf(run->results_dir, sizeof(run->results_dir), "%s", final_dir);
		rc = write_folder(run, summary, run->results_dir, sizeof(run->results_dir),
				  ctx->unique, text_fill, &t, quiet, ctx->plots);
	}
	return agree(run, rc);
}
