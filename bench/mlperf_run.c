/* `feedbench mlperf run`: an MLPerf Storage training submission in one folder. A warm-up run
 * and then 5 runs (rule 2.1.17, runTimestamps), each an ordinary run folder with its own
 * [reader] shuffle_seed; before each, the page cache of every node is dropped and the outcome
 * per node recorded (dropped / not permitted / failed, with the reason). The folder is built
 * under a hidden name and renamed into place once mlperf_run.json, results.json, results.csv
 * and system.yaml are written (docs/mlperf.md). */
#include "mlperf.h"

#include <errno.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"
#include "safefile.h"
#include "util.h"
#include "../workloads/workload.h"

#define MLPERF_RUNS 5

struct node_drop {
	int leader; /* 1 on the first rank of a node */
	int rc;
	char host[64];
	char why[192];
};

/* Collective: the first rank of every node drops its node's cache; rank 0 gets one entry per
 * node, as a JSON array. */
static json_t *drop_all_nodes(void)
{
	struct node_drop mine = {0}, *all = NULL;
	MPI_Comm node;
	int rank, size, local;
	json_t *out = NULL;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &local);
	MPI_Comm_free(&node);
	if (local == 0) {
		mine.leader = 1;
		gethostname(mine.host, sizeof(mine.host) - 1);
		mine.rc = util_drop_caches(mine.why, sizeof(mine.why));
	}
	if (rank == 0)
		all = calloc((size_t)size, sizeof(*all));
	MPI_Gather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE, 0,
		   MPI_COMM_WORLD);
	if (rank != 0)
		return NULL;
	out = json_array();
	for (int r = 0; all && r < size; r++) {
		int e = -all[r].rc;

		if (!all[r].leader)
			continue;
		json_array_append_new(out, json_pack("{s:s, s:i, s:s, s:s}", "host", all[r].host,
						     "rank", r, "outcome",
						     e == 0 ? "dropped"
						     : e == EACCES || e == EPERM || e == EROFS
							 ? "not permitted"
							 : "failed",
						     "why", all[r].why));
	}
	free(all);
	return out;
}

struct mlperf_run_args {
	struct runner_opts o;
	int runs;
	long long seed;
	bool runs_set; /* --runs or --seed given (training only) */
	bool split;    /* checkpointing: a write invocation, then a read invocation */
	bool ckpt;     /* a checkpointing submission */
};

static int run_args(int argc, char **argv, struct mlperf_run_args *a)
{
	char why[128];
	int64_t v;

	memset(a, 0, sizeof(*a));
	a->runs = MLPERF_RUNS;
	a->seed = 1;
	for (int i = 2; i < argc; i++) {
		const char *s = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;

		if ((strcmp(s, "--set") == 0 || strcmp(s, "-s") == 0) && next &&
		    a->o.nsets < RUNNER_MAX_SETS - 1) {
			a->o.sets[a->o.nsets++] = argv[++i];
		} else if ((strcmp(s, "--output") == 0 || strcmp(s, "-o") == 0) && next) {
			a->o.output_dir = argv[++i];
		} else if ((strcmp(s, "--runs") == 0 || strcmp(s, "--seed") == 0) && next) {
			if (cfg_parse_int(argv[++i], &v, why, sizeof(why)) < 0 || v < 1) {
				fprintf(stderr,
					"feedbench: mlperf run: %s '%s': a number of at "
					"least 1\n",
					s, argv[i]);
				return -FB_EUSAGE;
			}
			if (s[2] == 'r')
				a->runs = (int)(v > 99 ? 99 : v);
			else
				a->seed = (long long)v;
			a->runs_set = true;
		} else if (strcmp(s, "--split") == 0) {
			a->split = true;
		} else if (strcmp(s, "--quiet") == 0 || strcmp(s, "-q") == 0) {
			a->o.quiet = true;
		} else if (s[0] != '-' && !a->o.config_path) {
			a->o.config_path = s;
		} else {
			fprintf(stderr,
				"feedbench: mlperf run: unexpected argument '%s' (see "
				"feedbench mlperf --help)\n",
				s);
			return -FB_EUSAGE;
		}
	}
	if (!a->o.config_path) {
		fprintf(stderr, "feedbench: mlperf run needs a CONFIG file (see feedbench mlperf "
				"--help)\n");
		return -FB_EUSAGE;
	}
	return 0;
}

/* Rank 0 makes the hidden folder; every rank gets its path. */
static int make_folder(const struct config *cfg, const struct runner_opts *o, char *tmp, char *base,
		       size_t len)
{
	int rank, rc = 0;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		const char *parent = o->output_dir ? o->output_dir : cfg->output.dir;
		char stamp[32];

		util_utc_compact(stamp, sizeof(stamp));
		snprintf(base, len, "%s/%s-mlperf-%s", parent,
			 cfg->output.name[0] ? cfg->output.name : cfg->workload.name, stamp);
		rc = util_mkdirs(parent, 0755);
		if (rc == 0)
			rc = safe_tmpdir(parent, "mlperf", tmp, len);
		if (rc < 0)
			fprintf(stderr,
				"feedbench: error: cannot make the submission folder in "
				"'%s': %s\n",
				parent, strerror(-rc));
	}
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Bcast(tmp, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
	return rc;
}

/* Checkpointing (rule 2.1.23): one invocation that writes and reads (`run`), or with --split a
 * write invocation (`write`, no reads) then a read invocation (`read`, no writes). */
static void ckpt_phase(const struct mlperf_run_args *a, int i, char *name, size_t len,
		       struct runner_opts *o)
{
	snprintf(name, len, "%s", !a->split ? "run" : i == 0 ? "write" : "read");
	if (a->split)
		o->sets[o->nsets++] = i == 0 ? "checkpoint.num_checkpoints_read=0"
					     : "checkpoint.num_checkpoints_write=0";
}

/* One phase: drop every node's cache, then one run in dir/<name>: training's with its seed,
 * or a checkpointing invocation. */
static int run_phase(const struct mlperf_run_args *a, const char *dir, int i, json_t *phases)
{
	struct runner_opts o = a->o;
	char rdir[4200], seed[64], name[32];
	json_t *drops = drop_all_nodes();
	int rc;

	if (a->ckpt) {
		ckpt_phase(a, i, name, sizeof(name), &o);
	} else {
		snprintf(name, sizeof(name), i == 0 ? "warmup" : "run-%d", i);
		snprintf(seed, sizeof(seed), "reader.shuffle_seed=%lld", a->seed + i);
		o.sets[o.nsets++] = seed;
	}
	snprintf(rdir, sizeof(rdir), "%s/%s", dir, name);
	o.run_dir = rdir;
	o.output_dir = NULL;
	o.quiet = true;
	o.no_plots = true;
	if (drops && !a->o.quiet && !a->ckpt)
		fprintf(stderr, "mlperf: %s (shuffle seed %lld)\n", name, a->seed + i);
	else if (drops && !a->o.quiet)
		fprintf(stderr, "mlperf: %s\n", name);
	rc = runner_run(&o, MPI_COMM_WORLD, NULL, 0);
	if (drops)
		json_array_append_new(phases,
				      json_pack("{s:s, s:b, s:o, s:o, s:i}", "folder", name,
						"warmup", !a->ckpt && i == 0, "shuffle_seed",
						a->ckpt ? json_null() : json_integer(a->seed + i),
						"cache_drop", drops, "status", rc < 0 ? 1 : 0));
	return rc;
}

/* Rank 0: mlperf_run.json, the results, then the folder under its final name. */
static int finish(const struct mlperf_run_args *a, const char *tmp, const char *base,
		  json_t *phases, bool quiet)
{
	json_t *top = json_pack(
	    "{s:i, s:s, s:s, s:i, s:O}", "schema", 1, "rules",
	    a->ckpt ? "MLPerf Storage v3.0 checkpointing" : "MLPerf Storage v3.0 training",
	    "config", a->o.config_path, "runs", a->ckpt ? 0 : a->runs, "phases", phases);
	char path[4300], final[4300];
	int rc;

	snprintf(path, sizeof(path), "%s/mlperf_run.json", tmp);
	rc = json_dump_file(top, path, JSON_INDENT(2)) == 0 ? 0 : -EIO;
	json_decref(top);
	if (rc == 0)
		rc = mlperf_results_write(tmp);
	if (rc == 0)
		rc = safe_rename_unique(tmp, base, final, sizeof(final));
	if (rc < 0)
		fprintf(stderr, "feedbench: error: the submission folder %s is incomplete: %s\n",
			tmp, strerror(-rc));
	else if (!quiet)
		printf("submission: %s\n", final);
	return rc;
}

/* A training config (warm-up and runs), or a checkpointing one with its phases set: both
 * num_checkpoints_write and _read above 0 (one invocation, or the two of --split). */
static int check_kind(const struct config *cfg, struct mlperf_run_args *a, struct fb_errbuf *err)
{
	const char *w = workload_of(cfg) ? workload_of(cfg)->name : "";

	a->ckpt = strcmp(w, "checkpoint") == 0;
	if (!a->ckpt && strcmp(w, "train") != 0)
		return fb_fail(err, -FB_ECONFIG,
			       "feedbench mlperf run needs [workload] type = train or checkpoint, "
			       "not %s",
			       w);
	if (!a->ckpt)
		return a->split ? fb_fail(err, -FB_ECONFIG,
					  "--split is for checkpointing: a training submission "
					  "is a warm-up and runs")
				: 0;
	if (a->runs_set)
		return fb_fail(err, -FB_ECONFIG,
			       "--runs and --seed are for training: a checkpointing submission is "
			       "one invocation, or two with --split (rule 2.1.23)");
	if (cfg->checkpoint.num_write <= 0 || cfg->checkpoint.num_read <= 0)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: a checkpointing submission writes and reads: set [checkpoint] "
			       "num_checkpoints_write and num_checkpoints_read above 0 (10 and 10; "
			       "--split runs them as two invocations)",
			       cfg->source);
	return 0;
}

int mlperf_run_main(int argc, char **argv)
{
	struct mlperf_run_args a;
	struct config *cfg = calloc(1, sizeof(*cfg));
	struct fb_errbuf err;
	char tmp[4096] = "", base[4096] = "";
	json_t *phases = json_array();
	int rank, rc;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	fb_errbuf_init(&err);
	rc = cfg ? run_args(argc, argv, &a) : -ENOMEM;
	if (rc == 0)
		rc = runner_load_config(cfg, &a.o, MPI_COMM_WORLD, &err);
	if (rc == 0)
		rc = check_kind(cfg, &a, &err);
	if (rc < 0 && rc != -FB_EUSAGE && rank == 0)
		fprintf(stderr, "feedbench: error: %s\n", err.msg);
	if (rc == 0)
		rc = make_folder(cfg, &a.o, tmp, base, sizeof(tmp));
	for (int i = 0; rc == 0 && i < (a.ckpt ? 1 + a.split : a.runs + 1); i++)
		rc = run_phase(&a, tmp, i, phases);
	if (rc == 0 && rank == 0)
		rc = finish(&a, tmp, base, phases, a.o.quiet);
	else if (rc < 0 && rank == 0 && tmp[0])
		fprintf(stderr,
			"feedbench: mlperf run stopped: a run failed; the partial "
			"folder is %s\n",
			tmp);
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	json_decref(phases);
	free(cfg);
	return fb_exit_status(rc);
}
