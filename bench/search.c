/* feedbench search: how many accelerators can this storage feed (MLPerf Storage's question)?
 *
 * Launched once with the largest rank count P, it runs the configured training workload on the
 * first n ranks (MPI_Comm_split; the other ranks wait at a barrier of the whole job) and looks
 * for the largest n whose mean AU over [output] repetitions is at or above [train]
 * au_threshold: n = P first; when it fails, bisection over [1, P] assuming AU falls as n grows.
 * runner_run() works on the communicator it is given (run->comm is a duplicate of it), so a
 * trial is an ordinary run of n ranks with its own run folder.
 *
 * The search folder "<output>/<name>-search-<stamp>" is built under a hidden temporary name and
 * renamed into place at the end (safefile.h): trial-NNN/ (each trial's run folder),
 * search_results.json and report.md. The noise margin of the answer is the AU standard
 * deviation over its repetitions divided by its distance to the threshold (below 1: the answer
 * is clear of the noise). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "decide.h"
#include "errors.h"
#include "runner.h"
#include "safefile.h"
#include "sweep.h"
#include "util.h"
#include "../workloads/workload.h"

struct search_trial {
	int n;
	int ok; /* run succeeded */
	double au_mean, au_sd, bw_mean, bw_sd;
	int reps;
	bool pass;
	/* AU against the threshold (decide_against): reliably above, below, or inconclusive */
	const char *vs; /* "above", "below", "inconclusive", "n/a" */
	char why[384];
};

/* The barrier the idle ranks wait at while a trial runs: polled with 5 ms sleeps, so ranks
 * that wait take no CPU from those that measure (MPI's blocking wait spins). */
static void search_wait(MPI_Comm comm)
{
	struct timespec ts = {0, 5000000};
	MPI_Request req;
	int done = 0;

	MPI_Ibarrier(comm, &req);
	MPI_Test(&req, &done, MPI_STATUS_IGNORE);
	while (!done) {
		nanosleep(&ts, NULL);
		MPI_Test(&req, &done, MPI_STATUS_IGNORE);
	}
}

static int search_trial_run(const struct runner_opts *base, const char *dir, int n, int rank,
			    struct search_trial *t)
{
	struct runner_opts o = *base;
	char tdir[4096 + 32], why[256];
	MPI_Comm sub;
	int rc = 0;

	snprintf(tdir, sizeof(tdir), "%s/trial-%03d", dir, n);
	o.run_dir = tdir;
	o.quiet = true;
	o.no_plots = true;
	o.output_dir = NULL;
	MPI_Comm_split(MPI_COMM_WORLD, rank < n ? 0 : MPI_UNDEFINED, rank, &sub);
	if (sub != MPI_COMM_NULL) {
		rc = runner_run(&o, sub, NULL, 0);
		MPI_Comm_free(&sub);
	}
	search_wait(MPI_COMM_WORLD);
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD); /* did the trial run? */
	memset(t, 0, sizeof(*t));
	t->n = n;
	if (rc < 0)
		return rc;
	if (rank == 0) {
		struct sweep_result r;
		char path[sizeof(tdir) + 16];

		snprintf(path, sizeof(path), "%s/summary.json", tdir);
		if (sweep_read_summary(path, &r, why, sizeof(why)) == 0 && r.m[SWM_AU].n > 0) {
			t->ok = 1;
			t->reps = r.m[SWM_AU].n;
			t->au_mean = r.m[SWM_AU].mean;
			t->au_sd = r.m[SWM_AU].stddev;
			t->bw_mean = r.m[SWM_BANDWIDTH].mean;
			t->bw_sd = r.m[SWM_BANDWIDTH].stddev;
		} else {
			fprintf(stderr, "feedbench: search: trial with %d ranks: %s\n", n, why);
		}
	}
	MPI_Bcast(t, (int)sizeof(*t), MPI_BYTE, 0, MPI_COMM_WORLD);
	return t->ok ? 0 : -FB_EFORMAT;
}

/* Is the trial's AU reliably above or below the threshold, or within its repetitions' noise?
 * Welch's test against a fixed value, in percentage points, over the repetitions (the trials of
 * one job share its conditions); the answer's pass/fail stays the mean's, this says how sure. */
static void search_judge(struct search_trial *t, double thr)
{
	struct summary_stat au = {t->reps, t->au_mean, t->au_sd, t->au_mean, t->au_mean};
	struct decide_spec s = {.higher_better = true, .scale = DECIDE_POINTS};
	struct decide_result r;

	t->vs = "n/a";
	t->why[0] = '\0';
	if (decide_against(&au, thr, &s, &r) < 0)
		return;
	t->vs = r.outcome == DECIDE_BETTER    ? "above"
		: r.outcome == DECIDE_WORSE   ? "below"
		: r.outcome == DECIDE_MISSING ? "n/a"
					      : "inconclusive";
	snprintf(t->why, sizeof(t->why), "%s", r.why);
}

/* search_results.json: the answer and every trial in the order run. */
static void search_write_json(const char *dir, const struct config *cfg, int P,
			      const struct search_trial *tr, int ntr, int answer, double margin)
{
	double thr = cfg->train.au_threshold * 100.0;
	int K = (int)cfg->train.accelerators_per_rank; /* a trial of n ranks emulates n x K */
	json_t *root = json_object(), *arr = json_array();
	char path[4096 + 32], *text;

	json_object_set_new(root, "workload", json_string(cfg->workload.name));
	json_object_set_new(root, "max_ranks", json_integer(P));
	json_object_set_new(root, "au_threshold_pct", json_real(thr));
	json_object_set_new(root, "answer_accelerators", json_integer((json_int_t)answer * K));
	json_object_set_new(root, "answer_ranks", json_integer(answer));
	json_object_set_new(root, "noise_margin",
			    isfinite(margin) ? json_real(margin) : json_null());
	json_object_set_new(root, "accelerators_per_rank", json_integer(K));
	for (int i = 0; i < ntr; i++) {
		json_t *o = json_object();
		char name[32];

		snprintf(name, sizeof(name), "trial-%03d", tr[i].n);
		json_object_set_new(o, "accelerators", json_integer((json_int_t)tr[i].n * K));
		json_object_set_new(o, "ranks", json_integer(tr[i].n));
		json_object_set_new(o, "run_dir", json_string(name));
		json_object_set_new(o, "repetitions", json_integer(tr[i].reps));
		json_object_set_new(o, "au_pct_mean", json_real(tr[i].au_mean));
		json_object_set_new(o, "au_pct_stddev", json_real(tr[i].au_sd));
		json_object_set_new(o, "bandwidth_mib_s_mean", json_real(tr[i].bw_mean));
		json_object_set_new(o, "bandwidth_mib_s_stddev", json_real(tr[i].bw_sd));
		json_object_set_new(o, "pass", json_boolean(tr[i].pass));
		json_object_set_new(o, "au_vs_threshold", json_string(tr[i].vs ? tr[i].vs : "n/a"));
		json_object_set_new(o, "au_vs_threshold_why", json_string(tr[i].why));
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "trials", arr);
	text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
	json_decref(root);
	snprintf(path, sizeof(path), "%s/search_results.json", dir);
	if (text)
		safe_write_atomic(path, text, strlen(text));
	free(text);
}

/* report.md (and the terminal, when term): the trials as a table and the answer. */
static void search_write_report(const char *dir, const struct config *cfg, int P,
				const struct search_trial *tr, int ntr, int answer, double margin,
				FILE *term)
{
	double thr = cfg->train.au_threshold * 100.0;
	int K = (int)cfg->train.accelerators_per_rank;
	char path[4096 + 32], *text;
	size_t cap = 4096 + (size_t)ntr * 256, len = 0;

	text = malloc(cap);
	if (!text)
		return;
	len +=
	    (size_t)snprintf(text + len, cap - len,
			     "# Accelerator-count search: %s\n\nAU threshold %.1f %%, up to %d "
			     "ranks, %d emulated accelerator%s per rank (accelerators_per_rank). "
			     "Trials in the order run (n = %d ranks first, then bisection over "
			     "ranks).\n\n"
			     "| accelerators | AU %% (mean +- sd) | bandwidth MiB/s (mean +- sd) | "
			     "reps | pass | AU vs threshold |\n|---:|---:|---:|---:|:---|:---|\n",
			     cfg->workload.name, thr, P, K, K == 1 ? "" : "s", P);
	for (int i = 0; i < ntr && len < cap; i++)
		len += (size_t)snprintf(
		    text + len, cap - len, "| %d | %.2f +- %.2f | %.1f +- %.1f | %d | %s | %s |\n",
		    tr[i].n * K, tr[i].au_mean, tr[i].au_sd, tr[i].bw_mean, tr[i].bw_sd, tr[i].reps,
		    tr[i].pass ? "yes" : "no", tr[i].vs ? tr[i].vs : "n/a");
	if (len < cap) {
		if (answer > 0)
			len += (size_t)snprintf(
			    text + len, cap - len,
			    "\n**Answer: %d accelerator%s** keep AU >= %.1f %%. Noise margin %.2f "
			    "(AU stddev / distance to the threshold; below 1 the answer is clear "
			    "of "
			    "the noise).\n",
			    answer * K, answer * K == 1 ? "" : "s", thr, margin);
		else
			len += (size_t)snprintf(text + len, cap - len,
						"\n**Answer: 0**: even one accelerator stays below "
						"AU %.1f %%.\n",
						thr);
	}
	snprintf(path, sizeof(path), "%s/report.md", dir);
	safe_write_atomic(path, text, len < cap ? len : cap - 1);
	if (term)
		fputs(text, term);
	free(text);
}

/* Rank 0: a temporary folder for the trials beside the final name base (made at the end). */
static int search_folder(const struct runner_opts *opts, const struct config *cfg, char tmp[4096],
			 char base[4096])
{
	const char *parent = opts->output_dir ? opts->output_dir : cfg->output.dir;
	char stamp[32];
	int rc;

	util_utc_compact(stamp, sizeof(stamp));
	rc = util_mkdirs(parent, 0755);
	snprintf(base, 4096, "%s/%s-search-%s", parent,
		 cfg->output.name[0] ? cfg->output.name : cfg->workload.name, stamp);
	if (rc == 0)
		rc = safe_tmpdir(parent, "search", tmp, 4096);
	if (rc < 0)
		fprintf(stderr, "feedbench: error: cannot make the search folder in '%s': %s\n",
			parent, strerror(-rc));
	return rc;
}

/* Trials from P ranks down by bisection, until the largest count that passes (*answer, 0:
 * none) is next to the smallest that fails. Collective; 0 or the failed trial's code. */
static int search_bisect(const struct runner_opts *opts, const struct config *cfg, const char *tmp,
			 int P, int rank, struct search_trial *tr, int *ntr, int *answer)
{
	int rc = 0;

	/* lo: largest count known to pass (0: none); hi: smallest known to fail. */
	int lo = 0, hi = P + 1, n = P;
	while (rc == 0 && hi - lo > 1) {
		struct search_trial *t = &tr[*ntr];

		if (rank == 0 && !opts->quiet)
			fprintf(stderr, "search: trial %d: %d of %d ranks\n", *ntr + 1, n, P);
		rc = search_trial_run(opts, tmp, n, rank, t);
		if (rc < 0)
			break;
		t->pass = t->au_mean >= cfg->train.au_threshold * 100.0;
		search_judge(t, cfg->train.au_threshold * 100.0);
		if (rank == 0 && !opts->quiet)
			fprintf(stderr,
				"search: %d accelerators: AU %.2f %% +- %.2f, %.1f MiB/s: %s\n",
				n * (int)cfg->train.accelerators_per_rank, t->au_mean, t->au_sd,
				t->bw_mean, t->pass ? "pass" : "fail");
		if (t->pass)
			lo = n;
		else
			hi = n;
		(*ntr)++;
		n = (lo + hi) / 2;
		if (n <= lo)
			n = lo + 1;
	}
	*answer = lo;
	return rc;
}

int search_main(const struct cli *c)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	struct search_trial *tr = NULL;
	struct fb_errbuf err;
	char tmp[4096] = "", final[4096] = "", base[4096];
	int rank, P, rc, ntr = 0, answer = 0;
	double margin = NAN;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &P);
	fb_errbuf_init(&err);
	if (!cfg)
		return fb_exit_status(-ENOMEM);
	rc = runner_load_config(cfg, &c->opts, MPI_COMM_WORLD, &err);
	if (rc == 0 && (!workload_of(cfg) || strcmp(workload_of(cfg)->name, "train") != 0))
		rc = fb_fail(&err, -FB_ECONFIG,
			     "feedbench search needs [workload] type = train (it searches the AU "
			     "of emulated accelerators)");
	if (rc < 0) {
		if (rank == 0)
			fprintf(stderr, "feedbench: error: %s\n", err.msg);
		free(cfg);
		return fb_exit_status(rc);
	}
	tr = calloc((size_t)P + 2, sizeof(*tr));
	if (rank == 0)
		rc = search_folder(&c->opts, cfg, tmp, base);
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Bcast(tmp, sizeof(tmp), MPI_CHAR, 0, MPI_COMM_WORLD);
	if (rc < 0 || !tr)
		goto out;

	rc = search_bisect(&c->opts, cfg, tmp, P, rank, tr, &ntr, &answer);
	for (int i = 0; i < ntr; i++)
		if (tr[i].n == answer) {
			double dist = tr[i].au_mean - cfg->train.au_threshold * 100.0;
			margin = dist > 0 ? tr[i].au_sd / dist : INFINITY;
		}
	if (rc == 0 && rank == 0) {
		search_write_json(tmp, cfg, P, tr, ntr, answer, margin);
		search_write_report(tmp, cfg, P, tr, ntr, answer, margin,
				    c->opts.quiet ? NULL : stdout);
		rc = safe_rename_unique(tmp, base, final, sizeof(final));
		if (rc < 0)
			fprintf(stderr, "feedbench: error: cannot rename the search folder: %s\n",
				strerror(-rc));
		else if (!c->opts.quiet)
			printf("\nresults: %s\n", final);
	} else if (rc < 0 && rank == 0) {
		fprintf(stderr,
			"feedbench: search stopped: the trial with %d ranks failed; its partial "
			"folder is %s\n",
			ntr < P + 2 ? tr[ntr].n : 0, tmp);
	}
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
out:
	free(tr);
	free(cfg);
	return fb_exit_status(rc);
}
