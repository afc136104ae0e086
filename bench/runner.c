/* One run from config text to run folder: the flow of docs/results.md. */
#include "runner.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agree.h"
#include "live.h"
#include "preflight.h"
#include "mlperf.h"
#include "report.h"
#include "results.h"
#include "run.h"
#include "storage/storage.h"
#include "../formats/format.h"
#include "compute/compute.h"
#include "stop.h"
#include "timer.h"
#include "trace.h"
#include "util.h"
#include "verdict.h"
#include "storage/fs.h"
#include "../workloads/workload.h"

int runner_load_config(struct config *cfg, const struct runner_opts *o, MPI_Comm comm,
		       struct fb_errbuf *err)
{
	int rank, rc = 0;
	char *text = NULL;
	size_t len = 0;
	long long blen;

	MPI_Comm_rank(comm, &rank);
	if (rank == 0) {
		if (o->config_text) {
			text = strdup(o->config_text);
			len = strlen(text);
		} else {
			rc = cfg_read_file(o->config_path, &text, &len, err);
		}
	}
	/* A file only rank 0 could read is still everyone's error. */
	MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
	if (rc < 0) {
		MPI_Bcast(err->msg, (int)sizeof(err->msg), MPI_CHAR, 0, comm);
		err->code = rc;
		free(text);
		return rc;
	}
	blen = (long long)len;
	MPI_Bcast(&blen, 1, MPI_LONG_LONG, 0, comm);
	if (rank != 0) {
		text = malloc((size_t)blen + 1);
		if (!text)
			return fb_fail(err, -ENOMEM, "out of memory");
		text[blen] = '\0';
	}
	MPI_Bcast(text, (int)blen, MPI_CHAR, 0, comm);
	len = (size_t)blen;

	/* Every rank parses the same text with the same table: same config, same errors. */
	cfg_defaults(cfg);
	rc = cfg_parse_text(cfg, text, len, o->config_path ? o->config_path : "config", err);
	free(text);
	for (int i = 0; rc == 0 && i < o->nsets; i++)
		rc = cfg_set(cfg, o->sets[i], err);
	if (rc == 0)
		rc = mlperf_preset_apply(cfg, err);
	if (rc == 0) {
		int nranks;
		MPI_Comm_size(comm, &nranks);
		rc = cfg_validate(cfg, nranks, err);
	}
	return rc;
}

static int run_init(struct run *run, MPI_Comm comm)
{
	int local0;

	MPI_Comm_dup(comm, &run->comm);
	MPI_Comm_dup(comm, &run->notify_comm);
	MPI_Comm_rank(run->comm, &run->rank);
	MPI_Comm_size(run->comm, &run->nranks);
	MPI_Comm_split_type(run->comm, MPI_COMM_TYPE_SHARED, run->rank, MPI_INFO_NULL,
			    &run->node_comm);
	MPI_Comm_rank(run->node_comm, &run->local_rank);
	MPI_Comm_size(run->node_comm, &run->local_size);
	local0 = run->local_rank == 0;
	MPI_Allreduce(&local0, &run->nnodes, 1, MPI_INT, MPI_SUM, run->comm);
	gethostname(run->hostname, sizeof(run->hostname) - 1);
	run->node_leader = run->rank;
	MPI_Bcast(&run->node_leader, 1, MPI_INT, 0, run->node_comm);
	run->rank_hosts = calloc((size_t)run->nranks, sizeof(*run->rank_hosts));
	run->rank_leaders = calloc((size_t)run->nranks, sizeof(*run->rank_leaders));
	if (run->rank_leaders)
		MPI_Allgather(&run->node_leader, 1, MPI_INT, run->rank_leaders, 1, MPI_INT,
			      run->comm);
	if (run->rank_hosts) {
		char mine[64];

		snprintf(mine, sizeof(mine), "%s", run->hostname);
		MPI_Allgather(mine, sizeof(mine), MPI_CHAR, run->rank_hosts, sizeof(mine), MPI_CHAR,
			      run->comm);
	}
	run->info_storage = json_object();
	run->info_format = json_object();
	run->info_accel = json_object();
	run->warnings = json_array();
	run->stop = &feedbench_stop;
	return 0;
}

static void run_fini(struct run *run)
{
	watchdog_stop(run);
	live_free(run);
	if (run->compute)
		run->compute_ops->fini(run->compute);
	storage_run_teardown(run);
	json_decref(run->info_storage);
	json_decref(run->info_format);
	json_decref(run->info_accel);
	json_decref(run->warnings);
	free(run->storage_priv);
	agree_drain(run);
	MPI_Barrier(run->comm);
	agree_drain(run);
	MPI_Comm_free(&run->node_comm);
	free(run->rank_hosts);
	free(run->rank_leaders);
	MPI_Comm_free(&run->notify_comm);
	MPI_Comm_free(&run->comm);
}

static int runner_plugins(struct run *run)
{
	const struct config *cfg = &run->cfg;
	int rc = 0;

	run->workload = workload_of(cfg);
	run->format = format_find(cfg->dataset.format);
	run->storage = storage_find(cfg_choice_name("storage", "backend", cfg->storage.backend));
	if (!run->workload || !run->format || !run->storage)
		rc = run_fail(run, -FB_ECONFIG, "workload, format or back-end not built");
	if (rc == 0)
		rc = storage_run_setup(run);
	if (rc == 0 && (run->workload->caps & WORKLOAD_CAP_COMPUTE))
		rc = compute_choose(run, &run->compute_ops, run->accel_why, sizeof(run->accel_why));
	return agree(run, rc);
}

static void run_folder(struct run *run, const struct runner_opts *o, char *dir, size_t len,
		       char *run_id, size_t idlen)
{
	char stamp[32];
	const struct config *cfg = &run->cfg;

	util_utc_compact(stamp, sizeof(stamp));
	snprintf(run_id, idlen, "%s-%s", *cfg->output.name ? cfg->output.name : cfg->workload.name,
		 stamp);
	if (o->run_dir) {
		snprintf(dir, len, "%s", o->run_dir);
	} else {
		const char *parent = o->output_dir ? o->output_dir : cfg->output.dir;
		/* Never an earlier run's folder: a name taken by another run (started in the
		 * same second) becomes -2, -3 ... when the folder is renamed into place. */
		snprintf(dir, len, "%s/%s", parent, run_id);
	}
	MPI_Bcast(dir, (int)len, MPI_CHAR, 0, run->comm);
	MPI_Bcast(run_id, (int)idlen, MPI_CHAR, 0, run->comm);
}

/* The folder results will go to, made and checked before the first epoch: a typo in --output
 * or a read-only target must not cost the whole run. Collective. */
static void output_parent(const struct run *run, const struct runner_opts *o, char *parent,
			  size_t len)
{
	if (o->run_dir) {
		snprintf(parent, len, "%s", o->run_dir);
		char *slash = strrchr(parent, '/');
		if (slash)
			*slash = '\0';
		else
			snprintf(parent, len, ".");
	} else {
		snprintf(parent, len, "%s", o->output_dir ? o->output_dir : run->cfg.output.dir);
	}
}

static int check_output(struct run *run, const struct runner_opts *o)
{
	char parent[4096];
	int rc = 0;

	if (run->rank == 0) {
		output_parent(run, o, parent, sizeof(parent));
		struct stat st;
		rc = util_mkdirs(parent, 0755);
		/* mkdir -p accepts an existing regular file of that name. */
		if (rc == 0 && stat(parent, &st) == 0 && !S_ISDIR(st.st_mode))
			rc = -ENOTDIR;
		if (rc == 0 && access(parent, W_OK) < 0)
			rc = -errno;
		if (rc < 0)
			rc = run_fail(run, rc,
				      "cannot write results into '%s': %s (checked before "
				      "the run; nothing was measured)",
				      parent, strerror(-rc));
	}
	return agree(run, rc);
}

/* After a failure of repetition done - 1: how many repetitions to write. A signal (every rank
 * stopped by it) keeps the repetitions before it and the epochs the last one finished, when
 * there is at least one (written as <run>.unfinished, "interrupted": true); anything else
 * keeps nothing. Collective. */
static int runner_kept(struct run *run, void **reps, int done, int rc)
{
	const struct workload_ops *w = run->workload;
	int keep = 0, last = 0;

	if (rc == -FB_EINTR && feedbench_stop && done > 0) {
		last = w->kept_epochs && reps[done - 1] ? w->kept_epochs(reps[done - 1]) : 0;
		keep = done - 1 + (last > 0);
	}
	MPI_Allreduce(MPI_IN_PLACE, &keep, 1, MPI_INT, MPI_MIN, run->comm);
	return keep;
}

/* The repetitions of the workload and its run folder. */
static int runner_workload(struct run *run, const struct runner_opts *o, struct results_ctx *ctx,
			   char *dir_out, size_t dir_len)
{
	const struct workload_ops *w = run->workload;
	const struct config *cfg = &run->cfg;
	int nreps = (int)cfg->output.repetitions, rc = 0, done = 0;
	void **reps = calloc((size_t)nreps, sizeof(*reps));
	char dir[4096];

	if (!reps)
		return agree(run, run_fail(run, -ENOMEM, "out of memory"));
	output_parent(run, o, dir, sizeof(dir));
	if ((rc = check_output(run, o)) < 0 || (rc = trace_open(run, dir)) < 0)
		goto out;
	uint64_t reps0 = timer_now_ns();
	for (int r = 0; r < nreps && rc == 0; r++, done++)
		rc = w->run(run, r, &reps[r]);
	int nkeep = rc == 0 ? nreps : runner_kept(run, reps, done, rc);
	if (nkeep == 0)
		goto out;
	int trc = trace_finish(run);
	if (trc < 0) { /* a trace asked for and not written fails the run */
		rc = trc;
		goto out;
	}
	if (run->compute && run->compute_ops->describe)
		run->compute_ops->describe(run->compute, run->info_accel);
	results_timing_reduce(run, reps0);
	util_utc_iso(ctx->end_iso, sizeof(ctx->end_iso));
	run_folder(run, o, dir, sizeof(dir), ctx->run_id, sizeof(ctx->run_id));
	ctx->plots = cfg->output.plots && !o->no_plots && rc == 0;
	ctx->unique = !o->run_dir;
	ctx->interrupted = rc < 0;
	if (rc < 0) { /* the signal's message gives way to the one naming the kept folder */
		run->err.code = 0;
		run->err.msg[0] = '\0';
	}
	rc = w->write(run, reps, nkeep, ctx, dir, o->quiet);
	if (rc == 0 && run->rank == 0 && run->results_dir[0]) /* "-2" when the name was taken */
		snprintf(dir, sizeof(dir), "%s", run->results_dir);
	if (rc == 0 && run->rank == 0) {
		snprintf(dir_out, dir_len, "%s", dir);
		if (!o->quiet)
			printf("\nresults: %s\n", dir);
	}
	if (rc == 0 && o->strict && run->rules_broken) {
		fflush(stdout);
		rc = agree(run, run_fail(run, -FB_ESTRICT,
					 "--strict: %d MLPerf Storage rule%s broken (the warnings "
					 "say which; the results are in the run folder)",
					 run->rules_broken, run->rules_broken == 1 ? "" : "s"));
	}
out:
	for (int r = 0; r < done; r++)
		if (reps[r])
			w->free_rep(reps[r]);
	free(reps);
	trace_close(run);
	return rc;
}

/* --strict: what can be known before reading is refused before reading (exit 2): a training
 * dataset under 5 x RAM with the page cache kept. The other rules need the run's steps. */
static int strict_before(struct run *run, const struct runner_opts *o)
{
	const struct config *cfg = &run->cfg;
	char why[512] = "";

	if (!o->strict || strcmp(run->workload->name, "train") != 0)
		return 0;
	/* Rank 0's node decides, so every rank gives the same answer and rank 0 the reason. */
	int ok = verdict_rule_dataset(
	    (double)run->ds.data_bytes, (double)results_host_memory(), run->nnodes,
	    cfg->storage.direct || cfg->storage.page_cache != PAGE_CACHE_KEEP, why, sizeof(why));
	MPI_Bcast(&ok, 1, MPI_INT, 0, run->comm);
	MPI_Bcast(why, sizeof(why), MPI_CHAR, 0, run->comm);
	if (ok)
		return 0;
	return agree(run, run_fail(run, -FB_ECONFIG, "--strict: %s", why));
}

int runner_run(const struct runner_opts *o, MPI_Comm comm, char *run_dir_out, size_t len)
{
	struct run *run = calloc(1, sizeof(*run));
	struct results_ctx ctx = {0};
	int rc;

	if (!run)
		return -ENOMEM;
	run->started_at_process = o->started_ns != 0;
	run->started_ns = o->started_ns ? o->started_ns : timer_now_ns();
	run->mpi_init_ns = o->mpi_init_ns;
	run->reduce_s = -1;
	fb_errbuf_init(&run->err);
	run_init(run, comm);
	util_utc_iso(ctx.start_iso, sizeof(ctx.start_iso));
	rc = runner_load_config(&run->cfg, o, run->comm, &run->err);
	if (rc < 0)
		goto out;
	if (o->quiet)
		run->verbose = -1;
	watchdog_start(run, run->cfg.train.watchdog);
	/* The data folder as validate and a sweep's start saw it (bench/preflight.h). */
	if (run->rank == 0) {
		struct preflight pf;

		rc = preflight_data_dir(&run->cfg, &pf, &run->err);
	}
	if ((rc = agree(run, rc)) < 0)
		goto out;
	if ((rc = runner_plugins(run)) < 0)
		goto out;
	/* Said once, where it matters: not by `generate`, which computes nothing. */
	if (run->rank == 0 && !o->generate_only && run->compute_ops &&
	    (run->verbose >= 0 || o->say_accelerator))
		fprintf(stderr, "feedbench: accelerator: %s\n", run->accel_why);
	rc = 0;
	if (storage_is_object(&run->cfg)) /* objects: no local file system under data_dir */
		snprintf(run->fs.type, sizeof(run->fs.type), "%s", run->storage->name);
	else
		rc = fs_detect(run->cfg.dataset.data_dir, &run->fs);
	if (rc < 0)
		rc = run_fail(run, rc, "cannot inspect the file system of '%s': %s",
			      run->cfg.dataset.data_dir, fb_strerror(rc));
	if ((rc = agree(run, rc)) < 0)
		goto out;
	if (run->workload->prepare && (rc = run->workload->prepare(run, &ctx)) < 0)
		goto out;
	if (o->generate_only)
		goto out;
	if ((rc = strict_before(run, o)) < 0)
		goto out;
	rc = runner_workload(run, o, &ctx, run_dir_out, len);
out:
	/* rc 1 tells finish that the run stopped after prepare on purpose (feedbench generate). */
	if (run->workload && run->workload->finish)
		run->workload->finish(run, rc == 0 && o->generate_only ? 1 : rc);
	if (rc < 0 && run->rank == 0) {
		if ((rc == -FB_EINTR || feedbench_stop) && strstr(run->err.msg, "kept in"))
			fprintf(stderr, "feedbench: interrupted: %s\n", run->err.msg);
		else if (rc == -FB_EINTR || feedbench_stop)
			fprintf(stderr, "feedbench: interrupted: the run stopped and wrote no "
					"results\n");
		else
			fprintf(stderr, "feedbench: error: %s\n",
				run->err.msg[0] ? run->err.msg : fb_strerror(rc));
		fflush(stderr);
	}
	run_fini(run);
	free(run);
	return rc;
}
