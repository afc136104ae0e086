/* mdtest-like metadata rates ([workload] type = metadata): every rank creates
 * [metadata] files_per_rank files (writing file_size bytes into each), stats them, opens, reads
 * and closes them, then removes them, in its own folder (data_dir/mdtest.RANK) or one shared
 * folder (shared_dir: data_dir/mdtest.shared). Each phase is timed as mdtest times it: from a
 * barrier to the end of a closing barrier, the slowest rank's time; its rate is all ranks'
 * operations over that time. The slowest and fastest ranks' own times before the closing
 * barrier are kept beside it (the ranks' imbalance), and every operation is timed into a
 * histogram merged over ranks (p50, p90, p99, max). One operation of the read phase is
 * open + read + close, as the small-file reader of a training job pays it.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <mpi.h>

#include "../bench/agree.h"
#include "../bench/outputs.h"
#include "../bench/results.h"
#include "../bench/rng.h"
#include "../bench/safefile.h"
#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "../bench/timer.h"
#include "workload.h"

enum { MD_CREATE, MD_STAT, MD_READ, MD_REMOVE, MD_NPHASES };
static const char *const md_names[MD_NPHASES] = {"create", "stat", "read", "remove"};

struct md_phase {
	bool done;
	double seconds; /* this rank, from the start barrier to the end of the closing one */
	double own;	/* this rank, from the start barrier to its last operation's end */
	uint64_t ops, bytes;
	struct hist lat;
};

struct md_rep {
	struct md_phase ph[MD_NPHASES];
};

static int md_check(const struct config *cfg, int nranks, struct fb_errbuf *err)
{
	if (cfg->storage.direct)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [workload] type = metadata reads tiny files: direct = true is "
			       "not supported",
			       cfg->source);
	(void)nranks;
	return 0;
}

static void md_dir(const struct run *run, char *buf, size_t len)
{
	if (run->cfg.metadata.shared_dir)
		snprintf(buf, len, "%s/mdtest.shared", run->cfg.dataset.data_dir);
	else
		snprintf(buf, len, "%s/mdtest.%d", run->cfg.dataset.data_dir, run->rank);
}

static void md_file(const struct run *run, int64_t i, char *buf, size_t len)
{
	char dir[CFG_PATH_MAX + 32];

	md_dir(run, dir, sizeof(dir));
	snprintf(buf, len, "%s/file.%d.%" PRId64, dir, run->rank, i);
}

/* One operation of a phase on file i; what it moved in *bytes. The remove phase unlinks
 * relative to dfd, the rank's folder opened without following a link (md_phase_run). */
static int md_op(struct run *run, struct io *io, int dfd, int phase, int64_t i, unsigned char *buf,
		 uint64_t *bytes)
{
	uint64_t size = run->cfg.metadata.file_size;
	char path[CFG_PATH_MAX + 64];
	struct storage_stat st;
	struct sfile *f = NULL;
	int rc;

	md_file(run, i, path, sizeof(path));
	switch (phase) {
	case MD_CREATE:
		rc = io_create(io, &f, path, 0);
		if (rc == 0 && size)
			rc = io_pwrite(io, f, buf, size, 0);
		if (f) {
			int crc = io_close(io, f);
			rc = rc ? rc : crc;
		}
		*bytes = rc == 0 ? size : 0;
		return rc;
	case MD_STAT:
		rc = io_stat(io, path, &st);
		if (rc < 0)
			return run_fail(run, rc, "cannot stat '%s': %s", path, fb_strerror(rc));
		if (st.size != size)
			return run_fail(run, -FB_EVERIFY,
					"'%s' is %" PRIu64 " bytes, %" PRIu64 " were written", path,
					st.size, size);
		return 0;
	case MD_READ:
		rc = io_open(io, &f, path, STORAGE_O_READ);
		if (rc == 0 && size)
			rc = io_pread(io, f, buf, size, 0);
		if (f) {
			int crc = io_close(io, f);
			rc = rc ? rc : crc;
		}
		*bytes = rc == 0 ? size : 0;
		return rc;
	default: {
		char dir[CFG_PATH_MAX + 32];
		const char *name = strrchr(path, '/') + 1;

		md_dir(run, dir, sizeof(dir));
		return io_unlink_at(io, dfd, dir, name, false);
	}
	}
}

static int md_phase_run(struct run *run, int phase, unsigned char *buf, struct md_phase *out)
{
	struct io io = {.run = run};
	char dir[CFG_PATH_MAX + 32];
	int dfd = -1, rc = 0;

	hist_reset(&out->lat);
	if (phase == MD_REMOVE) {
		md_dir(run, dir, sizeof(dir));
		if ((dfd = io_own_dir_open(run, dir)) < 0)
			rc = run_fail(run, dfd == -ELOOP ? -FB_ENOTREG : dfd,
				      "refusing to remove files in '%s': %s (nothing removed)", dir,
				      dfd == -ELOOP ? "it is a symbolic link, not a folder of "
						      "feedbench's own"
						    : fb_strerror(dfd));
	}
	MPI_Barrier(run->comm);
	uint64_t t0 = timer_now_ns();
	run_phase_began(run, t0);
	for (int64_t i = 0; rc == 0 && i < run->cfg.metadata.files_per_rank; i++) {
		uint64_t a = timer_now_ns(), b = 0;
		rc = md_op(run, &io, dfd, phase, i, buf, &b);
		if (rc == 0) {
			hist_add(&out->lat, timer_now_ns() - a);
			out->ops++;
			out->bytes += b;
		}
	}
	out->own = timer_ns_to_s(timer_now_ns() - t0);
	MPI_Barrier(run->comm); /* mdtest's phase_end: its time runs to after this barrier */
	out->seconds = timer_ns_to_s(timer_now_ns() - t0);
	out->done = rc == 0;
	if (dfd >= 0)
		close(dfd);
	return agree(run, rc);
}

/* The rank's folder (or the shared one), made when missing. It is the workload's own: a link
 * or anything but a folder at its name is refused before a file is created, so nothing is
 * written or removed through it. */
static int md_own_dir(struct run *run, struct io *io, const char *dir)
{
	const char *what;
	int rc = io_mkdirs(io, dir, 0755);

	if (rc < 0)
		return rc; /* recorded with the folder */
	rc = safe_own_dir_check(dir, &what);
	if (rc == -FB_ENOTREG)
		return run_fail(run, rc,
				"refusing to use '%s': it is %s, not a folder of feedbench's own "
				"(nothing is written or removed through it)",
				dir, what);
	if (rc < 0)
		return run_fail(run, rc, "cannot open '%s': %s", dir, fb_strerror(rc));
	return 0;
}

static int md_rep_run(struct run *run, int repetition, void **out)
{
	struct md_rep *rep = calloc(1, sizeof(*rep));
	uint64_t size = run->cfg.metadata.file_size;
	unsigned char *buf = malloc(size ? size : 1);
	char dir[CFG_PATH_MAX + 32];
	int rc = 0;

	*out = rep;
	if (!rep || !buf) {
		free(buf);
		return agree(run, run_fail(run, -ENOMEM, "out of memory"));
	}
	uint64_t st = (uint64_t)run->cfg.dataset.seed;
	for (uint64_t i = 0; i < size; i++)
		buf[i] = (unsigned char)splitmix64(&st);
	/* Folders are made before the timed phases: mdtest times them apart. */
	if (!run->cfg.metadata.shared_dir || run->rank == 0) {
		struct io io = {.run = run};
		md_dir(run, dir, sizeof(dir));
		rc = md_own_dir(run, &io, dir);
	}
	if ((rc = agree(run, rc)) < 0)
		goto out;
	for (int ph = 0; ph < MD_NPHASES && rc == 0; ph++) {
		if (ph == MD_REMOVE && run->cfg.metadata.keep_files)
			break;
		rc = md_phase_run(run, ph, buf, &rep->ph[ph]);
	}
	(void)repetition;
out:
	free(buf);
	return rc;
}

struct md_total {
	double seconds, ops, bytes;
	double own_max, own_min; /* the slowest and fastest ranks' own times */
	struct hist lat;
};

static void md_reduce(struct run *run, const struct md_phase *p, struct md_total *t)
{
	double sum[2] = {(double)p->ops, (double)p->bytes}, rsum[2];

	MPI_Reduce(&p->seconds, &t->seconds, 1, MPI_DOUBLE, MPI_MAX, 0, run->comm);
	MPI_Reduce(&p->own, &t->own_max, 1, MPI_DOUBLE, MPI_MAX, 0, run->comm);
	MPI_Reduce(&p->own, &t->own_min, 1, MPI_DOUBLE, MPI_MIN, 0, run->comm);
	MPI_Reduce(sum, rsum, 2, MPI_DOUBLE, MPI_SUM, 0, run->comm);
	hist_reset(&t->lat);
	MPI_Reduce(p->lat.bucket, t->lat.bucket, HIST_BUCKETS, MPI_UINT64_T, MPI_SUM, 0, run->comm);
	MPI_Reduce(&p->lat.count, &t->lat.count, 1, MPI_UINT64_T, MPI_SUM, 0, run->comm);
	MPI_Reduce(&p->lat.sum_ns, &t->lat.sum_ns, 1, MPI_UINT64_T, MPI_SUM, 0, run->comm);
	MPI_Reduce(&p->lat.max_ns, &t->lat.max_ns, 1, MPI_UINT64_T, MPI_MAX, 0, run->comm);
	t->ops = rsum[0];
	t->bytes = rsum[1];
}

/* One row of metadata.results: a phase of one iteration, reduced over the ranks. */
static json_t *md_row(int ph, int iteration, const struct md_total *t, double rate)
{
	json_t *o = json_object(), *l = json_object();

	json_object_set_new(o, "phase", json_string(md_names[ph]));
	json_object_set_new(o, "iteration", json_integer(iteration));
	json_object_set_new(o, "operations", json_integer((json_int_t)t->ops));
	json_object_set_new(o, "bytes", json_integer((json_int_t)t->bytes));
	json_object_set_new(o, "seconds", json_real(t->seconds));
	json_object_set_new(o, "slowest_rank_seconds", json_real(t->own_max));
	json_object_set_new(o, "fastest_rank_seconds", json_real(t->own_min));
	json_object_set_new(o, "rate_per_second", json_real(rate));
	json_object_set_new(l, "p50", json_real(hist_quantile(&t->lat, 0.5)));
	json_object_set_new(l, "p90", json_real(hist_quantile(&t->lat, 0.9)));
	json_object_set_new(l, "p99", json_real(hist_quantile(&t->lat, 0.99)));
	json_object_set_new(l, "max", json_real((double)t->lat.max_ns / 1e9));
	json_object_set_new(o, "latency_seconds", l);
	return o;
}

static int md_write(struct run *run, void *const *reps, int nreps, const struct results_ctx *ctx,
		    const char *final_dir, bool quiet)
{
	const struct config *cfg = &run->cfg;
	json_t *rows = json_array(), *rj = json_array(), *s = NULL;
	double ops_all[MD_NPHASES] = {0}, secs_all[MD_NPHASES] = {0};
	int rc;

	for (int r = 0; r < nreps; r++) {
		const struct md_rep *rep = reps[r];
		double ops = 0, secs = 0;
		struct hist all;
		hist_reset(&all);
		json_t *one = json_object();
		for (int ph = 0; ph < MD_NPHASES; ph++) {
			if (ph == MD_REMOVE && cfg->metadata.keep_files)
				continue;
			struct md_total t;
			md_reduce(run, &rep->ph[ph], &t);
			double rate = t.seconds > 0 ? t.ops / t.seconds : NAN;
			json_array_append_new(rows, md_row(ph, r, &t, rate));
			char key[64];
			snprintf(key, sizeof(key), "%s_per_second", md_names[ph]);
			json_object_set_new(one, key, json_real(rate));
			ops += t.ops;
			secs += t.seconds;
			ops_all[ph] += t.ops;
			secs_all[ph] += t.seconds;
			hist_merge(&all, &t.lat);
		}
		/* the metric table's columns: all operations over all phases */
		json_object_set_new(one, "repetition", json_integer(r + 1));
		json_object_set_new(one, "iops", json_real(secs > 0 ? ops / secs : NAN));
		json_object_set_new(one, "latency_p50_seconds",
				    json_real(hist_quantile(&all, 0.5)));
		json_object_set_new(one, "latency_p90_seconds",
				    json_real(hist_quantile(&all, 0.9)));
		json_object_set_new(one, "latency_p99_seconds",
				    json_real(hist_quantile(&all, 0.99)));
		json_array_append_new(rj, one);
	}
	if (run->rank != 0) {
		json_decref(rows);
		json_decref(rj);
		return outputs_write_folder(run, NULL, ctx, final_dir, quiet);
	}
	s = json_object();
	results_summary_head(run, ctx, s);
	json_object_set_new(s, "storage", results_storage_json(run));
	json_t *m = json_object(), *md = json_object();
	for (int ph = 0; ph < MD_NPHASES; ph++) {
		char key[64];
		if (secs_all[ph] <= 0)
			continue;
		snprintf(key, sizeof(key), "mdtest_%s_per_second", md_names[ph]);
		json_object_set_new(m, key, json_real(ops_all[ph] / secs_all[ph]));
	}
	json_object_set_new(s, "metric", m);
	json_object_set_new(md, "files", json_integer(cfg->metadata.files_per_rank * run->nranks));
	json_object_set_new(md, "file_size_bytes",
			    json_integer((json_int_t)cfg->metadata.file_size));
	json_object_set_new(md, "shared_dir", json_boolean(cfg->metadata.shared_dir));
	json_object_set_new(md, "folders",
			    json_integer(cfg->metadata.shared_dir ? 1 : run->nranks));
	json_object_set_new(md, "results", rows);
	json_object_set_new(s, "metadata", md);
	json_object_set_new(s, "repetitions", rj);
	json_object_set_new(s, "verdict", json_string("measured"));

	rc = outputs_write_folder(run, s, ctx, final_dir, quiet);
	json_decref(s);
	return rc;
}

static void md_free_rep(void *rep)
{
	free(rep);
}

/* The per-rank folders go with the files (the remove phase emptied them). */
static void md_finish(struct run *run, int rc)
{
	char dir[CFG_PATH_MAX + 32];

	if (rc != 0 || run->cfg.metadata.keep_files)
		return;
	MPI_Barrier(run->comm);
	if (!run->cfg.metadata.shared_dir || run->rank == 0) {
		struct io io = {.run = run};
		md_dir(run, dir, sizeof(dir));
		/* The results stand when the folder stays, but the user is told it stayed. */
		int rrc = io_rmdir(&io, dir, true);
		if (rrc < 0)
			run_warn(run, "cannot remove folder '%s': %s; the results stand", dir,
				 fb_strerror(rrc));
	}
}

/* ---- outputs ---------------------------------------------------------------------------- */

/* mdtest's columns: operations, rate and latency percentiles per phase and iteration. */
static const struct out_col md_cols[] = {{"phase", "{phase:%-6s}", true},
					 {"ops", "{operations:%d}", false},
					 {"rate (ops/s)", "{rate_per_second:%.1f}", false},
					 {"p50 (µs)", "{latency_seconds.p50*1e6:%.1f}", false},
					 {"p99 (µs)", "{latency_seconds.p99*1e6:%.1f}", false},
					 {"max (µs)", "{latency_seconds.max*1e6:%.1f}", false},
					 {"iter", "{iteration:%d}", false},
					 {NULL, NULL, false}};

#define MD_LEAD                                                                                    \
	"{num_ranks} rank{num_ranks=1?|s} x {config.metadata.files_per_rank} files of "            \
	"{metadata.file_size_bytes} bytes, {metadata.shared_dir?one shared folder|one folder per " \
	"rank}"

static const struct out_block md_table[] = {{.text = "\nmdtest-like rates: " MD_LEAD "\n\n"},
					    {.rows = "metadata.results", .cols = md_cols},
					    {0}};

static const struct out_fact md_facts[] = {
    {"create", "{metric.mdtest_create_per_second:%.1f} ops/s", "metric.mdtest_create_per_second"},
    {"stat", "{metric.mdtest_stat_per_second:%.1f} ops/s", "metric.mdtest_stat_per_second"},
    {"read (open, read, close)", "{metric.mdtest_read_per_second:%.1f} ops/s",
     "metric.mdtest_read_per_second"},
    {"remove", "{metric.mdtest_remove_per_second:%.1f} ops/s", "metric.mdtest_remove_per_second"},
    {"files",
     "{metadata.files} in {metadata.folders} folder{metadata.folders=1?|s}, "
     "{metadata.file_size_bytes} bytes each",
     NULL},
    {NULL, NULL, NULL}};

static const struct out_block md_report[] = {
    {.text = "mdtest-like metadata rates: " MD_LEAD ". ", .files = true},
    {.text = "## What ran\n\n", .facts = outputs_what_ran},
    {.text = "\n## Results\n\nRates are all ranks' operations over the slowest rank's time per "
	     "phase, over all repetitions (mdtest's rates).\n\n",
     .facts = md_facts},
    {.text = "\n### Per phase and iteration\n\nLatency percentiles of single operations, every "
	     "rank's merged.\n\n",
     .rows = "metadata.results",
     .cols = md_cols},
    {.text = "\n"},
    {0}};

static const struct workload_outputs md_outputs = {md_table, md_report, NULL};

const struct workload_ops metadata_workload = {
    .version = WORKLOAD_OPS_VERSION,
    .name = "metadata",
    .help = "mdtest-like create, stat, open-read-close and remove rates with latency "
	    "percentiles",
    .caps = 0,
    .check = md_check,
    .run = md_rep_run,
    .write = md_write,
    .free_rep = md_free_rep,
    .finish = md_finish,
    .outputs = &md_outputs,
};
