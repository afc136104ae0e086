/* `feedbench mlperf check FOLDER...`: the MLPerf Storage v3.0 rules that apply to what
 * feedbench emulates, over a submission folder (`feedbench mlperf run`) or run folders given
 * in order. Every finding names its rule (Rules.md's number and name; "feedbench" where the
 * rules give none) and says PASS, NOTE (no effect on the verdict), OPEN or INVALID and why;
 * the verdict is the worst, with every reason (docs/mlperf.md). Reads summary.json only. */
#include "mlperf.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlperf_check.h"
#include "safefile.h"

static int add_run(struct mck *c, const char *dir, json_t *drops, int warmup)
{
	char path[4200];
	json_error_t je;
	struct mck_run *r;

	if (c->n == MCK_MAX_RUNS) {
		fprintf(stderr, "feedbench: mlperf check: more than %d runs\n", MCK_MAX_RUNS);
		return -FB_EUSAGE;
	}
	r = &c->runs[c->n];
	snprintf(path, sizeof(path), "%s/summary.json", dir);
	r->s = safe_json_load(path, 0, &je);
	if (!r->s) {
		fprintf(stderr, "feedbench: mlperf check: cannot read '%s': %s\n", path, je.text);
		return -FB_EFORMAT;
	}
	snprintf(r->dir, sizeof(r->dir), "%s", dir);
	r->drops = drops ? json_incref(drops) : NULL;
	r->warmup = warmup;
	c->n++;
	return 0;
}

/* A submission folder: its runs in the order of mlperf_run.json's phases. */
static int add_submission(struct mck *c, const char *dir, json_t *top)
{
	json_t *ph = json_object_get(top, "phases"), *p;
	size_t i;
	int rc = 0;

	if (!json_is_array(ph)) {
		fprintf(stderr, "feedbench: mlperf check: %s/mlperf_run.json has no phases[]\n",
			dir);
		return -FB_EFORMAT;
	}
	json_array_foreach(ph, i, p)
	{
		char sub[4200];

		snprintf(sub, sizeof(sub), "%s/%s", dir, mck_str(p, "folder", NULL, NULL));
		rc = add_run(c, sub, json_object_get(p, "cache_drop"),
			     json_is_true(json_object_get(p, "warmup")));
		if (rc < 0)
			break;
	}
	return rc;
}

static int load_args(struct mck *c, int argc, char **argv)
{
	int rc = 0;

	for (int i = 2; rc == 0 && i < argc; i++) {
		char path[4200];
		json_t *top;

		snprintf(path, sizeof(path), "%s/mlperf_run.json", argv[i]);
		top = safe_json_load(path, 0, NULL);
		if (top) {
			rc = add_submission(c, argv[i], top);
			json_decref(top);
		} else {
			rc = add_run(c, argv[i], NULL, c->n == 0 ? -1 : 0);
		}
	}
	return rc;
}

/* 2.1.17 runTimestamps: a warm-up and then 5 runs. */
static void rule_run_count(struct mck *c)
{
	const char *r = "2.1.17 runTimestamps";

	if (c->n != 6)
		mck_finding(c, MCK_INVALID, r, "%d run%s: a submission is a warm-up and 5 runs (6)",
			    c->n, c->n == 1 ? "" : "s");
	else if (c->runs[0].warmup == 0)
		mck_finding(c, MCK_INVALID, r, "%s is not marked as the warm-up run",
			    mck_base(c->runs[0].dir));
	else
		mck_finding(c, MCK_PASS, r, "6 runs, the first (%s) the warm-up%s",
			    mck_base(c->runs[0].dir),
			    c->runs[0].warmup < 0 ? " (the first folder given)" : "");
	for (int i = 1; i < c->n; i++)
		if (c->runs[i].warmup == 1)
			mck_finding(c, MCK_INVALID, r, "%s is a second warm-up run",
				    mck_base(c->runs[i].dir));
}

/* A run's duration from its summary.json (whole seconds); NAN when unreadable. */
static double run_seconds(json_t *s, double *start)
{
	double end = mck_iso_seconds(mck_str(s, "end", NULL, NULL));

	*start = mck_iso_seconds(mck_str(s, "start", NULL, NULL));
	return end - *start;
}

/* 2.1.18 runTimestampGap: no gap between consecutive runs as long as a run. The times have
 * whole seconds, so 2 s are allowed for the rounding at both ends. */
static void rule_run_gap(struct mck *c)
{
	const char *r = "2.1.18 runTimestampGap";
	int bad = 0;

	for (int i = 1; i < c->n; i++) {
		double st0, st, d0 = run_seconds(c->runs[i - 1].s, &st0);
		double d = run_seconds(c->runs[i].s, &st), gap = st - (st0 + d0);

		if (!isfinite(gap) || !isfinite(d)) {
			mck_finding(c, MCK_INVALID, r, "%s or %s has no readable start and end",
				    mck_base(c->runs[i - 1].dir), mck_base(c->runs[i].dir));
			bad++;
		} else if (gap < -2 || gap > fmax(d0, d) + 2) {
			mck_finding(
			    c, MCK_INVALID, r,
			    "%s starts %.0f s after %s ended, and they ran %.0f s and %.0f s: "
			    "the runs must follow each other (a gap at most a run's duration, "
			    "+ 2 s for whole-second times)",
			    mck_base(c->runs[i].dir), gap, mck_base(c->runs[i - 1].dir), d0, d);
			bad++;
		}
	}
	if (!bad && c->n > 1)
		mck_finding(c, MCK_PASS, r,
			    "each run began within a run's duration of the previous "
			    "one's end");
}

/* feedbench: each run its own shuffle seed (DLIO reads in a new order each run only when
 * told to; feedbench's run gives every run its own). */
static void rule_seeds(struct mck *c)
{
	const char *r = "feedbench seedsDiffer";

	for (int i = 0; i < c->n; i++)
		for (int j = 0; j < i; j++) {
			double a = mck_num(c->runs[i].s, "config", "reader", "shuffle_seed");
			double b = mck_num(c->runs[j].s, "config", "reader", "shuffle_seed");

			if (!isfinite(a) || a == 0)
				a = mck_num(c->runs[i].s, "config", "dataset", "seed");
			if (!isfinite(b) || b == 0)
				b = mck_num(c->runs[j].s, "config", "dataset", "seed");
			if (a == b) {
				mck_finding(
				    c, MCK_OPEN, r,
				    "%s and %s read with the same shuffle seed %.0f: the runs "
				    "repeat one order",
				    mck_base(c->runs[j].dir), mck_base(c->runs[i].dir), a);
				return;
			}
		}
	mck_finding(c, MCK_PASS, r, "every run has its own shuffle seed");
}

/* 2.1.9 identicalSystemConfig: the same config (but the seed) and the same dataset. */
static void rule_same_config(struct mck *c)
{
	const char *r = "2.1.9 identicalSystemConfig";

	for (int i = 1; i < c->n; i++) {
		const char *k[] = {"config_hash", "dataset_hash", "workload"};

		for (int j = 0; j < 3; j++)
			if (strcmp(mck_str(c->runs[i].s, k[j], NULL, NULL),
				   mck_str(c->runs[0].s, k[j], NULL, NULL)) != 0) {
				mck_finding(c, MCK_INVALID, r,
					    "%s has another %s than %s: every run of a submission "
					    "runs the same config on the same dataset",
					    mck_base(c->runs[i].dir), k[j],
					    mck_base(c->runs[0].dir));
				return;
			}
	}
	mck_finding(c, MCK_PASS, r, "one config hash and one dataset hash over the %d runs", c->n);
}

/* The rule's inputs as run i recorded them: its hosts and their RAM (summary.json
 * host.memory_bytes), accelerators, batch and record size. False when one is missing. */
static bool datasize_of_run(json_t *s, struct mlperf_datasize *d)
{
	*d = (struct mlperf_datasize){
	    .hosts = (int64_t)mck_num(s, "num_nodes", NULL, NULL),
	    .accelerators = (int64_t)mck_num(s, "num_accelerators", NULL, NULL),
	    .batch_size = (int64_t)mck_num(s, "config", "reader", "batch_size"),
	    .samples_per_file = (int64_t)mck_num(s, "config", "dataset", "num_samples_per_file"),
	    .num_files_train = (int64_t)mck_num(s, "config", "dataset", "num_files_train"),
	    .client_memory_bytes = mck_num(s, "host", "memory_bytes", NULL),
	    .record_length_bytes = mck_num(s, "config", "dataset", "record_length_bytes"),
	};
	mlperf_datasize_compute(d);
	return d->hosts > 0 && d->accelerators > 0 && d->batch_size > 0 &&
	       d->client_memory_bytes > 0 && d->record_length_bytes > 0;
}

/* 3.1.2 trainingRecalculateDatasetSize, recalculated from each run's own figures; the first
 * run that breaks it is shown, with how many more do. */
static void rule_datasize(struct mck *c)
{
	struct mlperf_datasize d, first = {0};
	int bad = 0, missing = -1, at = -1;

	for (int i = 0; i < c->n; i++) {
		if (!datasize_of_run(c->runs[i].s, &d)) {
			missing = missing < 0 ? i : missing;
			bad++;
		} else if (!d.holds) {
			if (at < 0)
				first = d, at = i;
			bad++;
		}
	}
	if (missing >= 0)
		mck_finding(c, MCK_INVALID, MLPERF_RULE_DATASIZE,
			    "%s: summary.json lacks the hosts, accelerators, batch, RAM or record "
			    "length the rule needs",
			    mck_base(c->runs[missing].dir));
	else if (at >= 0)
		mck_finding(c, MCK_INVALID, MLPERF_RULE_DATASIZE,
			    "%s (and %d more run%s): %lld files, fewer than the %lld needed (%lld "
			    "host%s x %.2f GiB RAM "
			    "x %d = %.0f samples; %d steps x batch %lld x %lld accelerators = %.0f "
			    "samples)",
			    mck_base(c->runs[at].dir), bad - 1, bad == 2 ? "" : "s",
			    (long long)first.num_files_train, (long long)first.min_files,
			    (long long)first.hosts, first.hosts == 1 ? "" : "s",
			    first.client_memory_bytes / 1073741824.0, MLPERF_MEMORY_MULTIPLE,
			    first.min_samples_memory, MLPERF_MIN_STEPS, (long long)first.batch_size,
			    (long long)first.accelerators, first.min_samples_steps);
	else
		mck_finding(c, MCK_PASS, MLPERF_RULE_DATASIZE,
			    "every run read at least %d x its clients' RAM and %d steps on every "
			    "accelerator",
			    MLPERF_MEMORY_MULTIPLE, MLPERF_MIN_STEPS);
}

/* The AU threshold of the run: the preset's when one is selected, else the config's. */
static double au_threshold_of(json_t *s)
{
	double p = mck_num(s, "mlperf", "preset", "au_threshold");

	return isfinite(p) ? p : mck_num(s, "config", "train", "au_threshold");
}

/* 3.3.2 trainingAcceleratorUtilizationCheck: every measured run at or above the threshold. */
static void rule_au(struct mck *c)
{
	const char *r = "3.3.2 trainingAcceleratorUtilizationCheck";
	int bad = 0;

	for (int i = 0; i < c->n; i++) {
		json_t *s = c->runs[i].s;
		double au = mck_num(s, "metric", "train_au_mean_percentage", NULL);
		double thr = 100 * au_threshold_of(s);

		if (i == 0 && c->runs[i].warmup != 0)
			continue; /* the warm-up is not reported */
		if (!isfinite(au) || !isfinite(thr)) {
			mck_finding(c, MCK_INVALID, r, "%s: no AU or threshold in summary.json",
				    mck_base(c->runs[i].dir));
			bad++;
		} else if (au < thr) {
			mck_finding(c, MCK_INVALID, r, "%s: AU %.2f %% below the threshold %.0f %%",
				    mck_base(c->runs[i].dir), au, thr);
			bad++;
		}
	}
	if (!bad)
		mck_finding(c, MCK_PASS, r, "every measured run at or above its AU threshold");
}

/* 3.3.6 trainingIdenticalAcceleratorsPerNode: as many ranks (accelerators) on every host. */
static void rule_per_node(struct mck *c)
{
	const char *r = "3.3.6 trainingIdenticalAcceleratorsPerNode";

	for (int i = 0; i < c->n; i++) {
		double lo = mck_num(c->runs[i].s, "ranks_per_node", "min", NULL);
		double hi = mck_num(c->runs[i].s, "ranks_per_node", "max", NULL);

		if (!isfinite(lo) || lo != hi) {
			mck_finding(
			    c, MCK_INVALID, r,
			    "%s: %.0f to %.0f ranks per host: every host must emulate as many "
			    "accelerators",
			    mck_base(c->runs[i].dir), lo, hi);
			return;
		}
	}
	mck_finding(c, MCK_PASS, r, "as many ranks on every host in every run");
}

/* feedbench: the page cache of every node dropped before each run (mlperf run records it). */
static void rule_cache_drops(struct mck *c)
{
	const char *r = "feedbench cacheDropped";
	int known = 0;

	for (int i = 0; i < c->n; i++) {
		json_t *d = c->runs[i].drops, *e;
		size_t k;

		if (!d)
			continue;
		known++;
		for (k = 0; k < json_array_size(d); k++) {
			e = json_array_get(d, k);
			if (strcmp(mck_str(e, "outcome", NULL, NULL), "dropped") == 0)
				continue;
			mck_finding(c, MCK_NOTE, r, "before %s, host %s: %s (%s)",
				    mck_base(c->runs[i].dir), mck_str(e, "host", NULL, NULL),
				    mck_str(e, "outcome", NULL, NULL),
				    mck_str(e, "why", NULL, NULL));
			return;
		}
	}
	if (known)
		mck_finding(c, MCK_PASS, r, "every node's page cache dropped before each run");
	else
		mck_finding(c, MCK_NOTE, r,
			    "not recorded (run folders given, not a `feedbench "
			    "mlperf run` folder)");
}

/* The format and samples per file of the model's dataset (OPEN may change them: 3.6.3). */
static void model_dataset(const char *model, const char **format, double *spf)
{
	*format = strcmp(model, "retinanet") == 0 ? "jpeg" : "npz";
	*spf = 1;
}

/* 3.6.2 trainingClosedSubmissionParameters: a v3.0 preset, its values unchanged; 3.6.3
 * trainingOpenSubmissionParameters: the format and samples per file may change in OPEN. */
static void rule_parameters(struct mck *c)
{
	json_t *s = c->runs[0].s, *p = json_object_get(json_object_get(s, "mlperf"), "preset");
	const char *r = "3.6.2 trainingClosedSubmissionParameters", *fmt;
	const char *model = mck_str(s, "mlperf", "model", NULL);
	double spf;
	int bad = 0;

	if (!p) {
		mck_finding(
		    c, MCK_INVALID, r,
		    "no MLPerf Storage preset: set [train] model and accelerator_type (a run "
		    "without them emulates no v3.0 workload)");
		return;
	}
	if (strcmp(mck_str(p, "status", NULL, NULL), "v3.0") != 0)
		mck_finding(c, MCK_INVALID, r,
			    "%s on %s is a whatif preset: not submittable in v3.0", model,
			    mck_str(s, "mlperf", "accelerator_type", NULL)),
		    bad++;
	struct {
		const char *section, *key, *preset;
	} k[] = {{"train", "computation_time", "computation_time"},
		 {"reader", "batch_size", "batch_size"},
		 {"train", "au_threshold", "au_threshold"}};
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		double v = mck_num(s, "config", k[i].section, k[i].key);
		double want = mck_num(p, k[i].preset, NULL, NULL);

		if (!(fabs(v - want) <= 1e-9 * fmax(1, fabs(want))))
			mck_finding(c, MCK_INVALID, r,
				    "[%s] %s = %g, the preset's is %g: not a tunable parameter",
				    k[i].section, k[i].key, v, want),
			    bad++;
	}
	model_dataset(model, &fmt, &spf);
	if (strcmp(mck_str(s, "config", "dataset", "format"), fmt) != 0 ||
	    mck_num(s, "config", "dataset", "num_samples_per_file") != spf)
		mck_finding(c, MCK_OPEN, "3.6.3 trainingOpenSubmissionParameters",
			    "format %s with %.0f samples per file, the workload's is %s with %.0f: "
			    "allowed in OPEN only",
			    mck_str(s, "config", "dataset", "format"),
			    mck_num(s, "config", "dataset", "num_samples_per_file"), fmt, spf),
		    bad++;
	if (!bad)
		mck_finding(c, MCK_PASS, r,
			    "%s on %s with the preset's compute time, batch and AU "
			    "threshold",
			    model, mck_str(s, "mlperf", "accelerator_type", NULL));
}

static void check_training(struct mck *c)
{
	rule_run_count(c);
	rule_run_gap(c);
	rule_seeds(c);
	rule_same_config(c);
	rule_datasize(c);
	rule_au(c);
	rule_per_node(c);
	rule_parameters(c);
	rule_cache_drops(c);
}

int mlperf_check_main(int argc, char **argv)
{
	struct mck *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return 1;
	if (argc < 3) {
		fprintf(stderr, "feedbench: mlperf check needs FOLDER... (see feedbench mlperf "
				"--help)\n");
		free(c);
		return 2;
	}
	rc = load_args(c, argc, argv);
	if (rc == 0) {
		const char *type = mck_str(c->runs[0].s, "workload_type", NULL, NULL);

		printf("MLPerf Storage v3.0 check of %d run%s (%s)\n", c->n, c->n == 1 ? "" : "s",
		       type);
		if (strcmp(type, "train") == 0)
			check_training(c);
		else if (strcmp(type, "checkpoint") == 0)
			mck_checkpointing(c);
		else
			mck_finding(
			    c, MCK_INVALID, "2.1.10 workloadCategories",
			    "workload type '%s': feedbench checks training and checkpointing "
			    "submissions",
			    type);
		printf("verdict: %s%s%s\n",
		       c->worst >= MCK_INVALID ? "INVALID"
		       : c->worst >= MCK_OPEN  ? "OPEN"
					       : "CLOSED",
		       c->reasons[0] ? ": " : "", c->reasons);
	}
	for (int i = 0; i < c->n; i++) {
		json_decref(c->runs[i].s);
		json_decref(c->runs[i].drops);
	}
	rc = rc < 0 ? 2 : c->worst >= MCK_OPEN ? 1 : 0;
	free(c);
	return rc;
}
