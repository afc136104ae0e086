/* Sweeps: [sweep] expanded into points, run one after another under one MPI job, resumable.
 *
 * A sweep folder <output>/<name>-sweep-<UTC>/ holds sweep.json (hash, points), sweep.ini (the
 * config text it started from), one run folder per point (point-001-...), and at the end the
 * tables, the recommendation, report.md and the plots (bench/report.c, bench/plot.c).
 */
#include "sweep.h"

#include <ctype.h>
#include <signal.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include <jansson.h>
#include <nettle/sha2.h>

#include "build_config.h"
#include "preflight.h"
#include "report.h"
#include "runner.h"
#include "timer.h"
#include "safefile.h"
#include "stop.h"
#include "util.h"

/* ---- command line -------------------------------------------------------------------- */

struct sweep_args {
	const char *config;
	const char *sets[RUNNER_MAX_SETS];
	int nsets;
	const char *output;
	const char *resume;
	bool dry_run;
	bool quiet; /* no progress and no table on the terminal (the files are written) */
};

static void sweep_usage(FILE *out)
{
	fprintf(out,
		"usage: feedbench sweep CONFIG [--set section.key=value]... [--output DIR]\n"
		"                       [--resume SWEEP_DIR] [--dry-run] [--quiet]\n"
		"       feedbench sweep --resume SWEEP_DIR   (uses the config the sweep started "
		"with)\n\n"
		"Runs every point of the config's [sweep] section (the cartesian product of its\n"
		"keys) one after another, then writes sweep.md, sweep.csv, sweep_results.json,\n"
		"report.md and plots into the sweep folder.\n");
}

static int sweep_parse_args(int argc, char **argv, struct sweep_args *a, char *why, size_t len)
{
	memset(a, 0, sizeof(*a));
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *val = NULL;
		bool takes = strcmp(arg, "--set") == 0 || strcmp(arg, "-s") == 0 ||
			     strcmp(arg, "--output") == 0 || strcmp(arg, "-o") == 0 ||
			     strcmp(arg, "--resume") == 0;

		if (strncmp(arg, "--set=", 6) == 0 || strncmp(arg, "--output=", 9) == 0 ||
		    strncmp(arg, "--resume=", 9) == 0) {
			val = strchr(arg, '=') + 1;
			takes = true;
		} else if (takes) {
			if (i + 1 >= argc) {
				snprintf(why, len, "%s needs a value", arg);
				return -FB_EUSAGE;
			}
			val = argv[++i];
		}
		if (takes && (strncmp(arg, "--set", 5) == 0 || strcmp(arg, "-s") == 0)) {
			if (a->nsets >= RUNNER_MAX_SETS - CFG_MAX_SWEEP) {
				snprintf(why, len, "too many --set options");
				return -FB_EUSAGE;
			}
			a->sets[a->nsets++] = val;
		} else if (takes && (strncmp(arg, "--output", 8) == 0 || strcmp(arg, "-o") == 0)) {
			a->output = val;
		} else if (takes) {
			a->resume = val;
		} else if (strcmp(arg, "--dry-run") == 0 || strcmp(arg, "-n") == 0) {
			a->dry_run = true;
		} else if (strcmp(arg, "--quiet") == 0 || strcmp(arg, "-q") == 0) {
			a->quiet = true;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			return 1;
		} else if (arg[0] == '-') {
			snprintf(why, len, "unknown option '%s'", arg);
			return -FB_EUSAGE;
		} else if (!a->config) {
			a->config = arg;
		} else {
			snprintf(why, len, "unexpected argument '%s' (one config only)", arg);
			return -FB_EUSAGE;
		}
	}
	if (!a->config && !a->resume) {
		snprintf(why, len, "a config file (or --resume SWEEP_DIR) is needed");
		return -FB_EUSAGE;
	}
	return 0;
}

/* ---- sweep.json ---------------------------------------------------------------------- */

static json_t *sweep_plan_json(const struct sweep_plan *p, const struct sweep_args *a,
			       const struct config *cfg, int nranks, const char *created)
{
	json_t *root = json_object(), *keys = json_array(), *points = json_array();
	json_t *sets = json_array();
	char buf[512];

	json_object_set_new(root, "schema", json_integer(1));
	json_object_set_new(root, "feedbench_version", json_string(FEEDBENCH_VERSION));
	json_object_set_new(root, "workload", json_string(cfg->workload.name));
	json_object_set_new(root, "config", json_string(cfg->source));
	json_object_set_new(root, "config_hash", json_string(p->hash));
	json_object_set_new(root, "created", json_string(created));
	json_object_set_new(root, "num_ranks", json_integer(nranks));
	json_object_set_new(root, "repetitions", json_integer(p->repetitions));
	json_object_set_new(root, "optimise",
			    json_string(cfg_choice_name("sweep", "optimise", p->optimise)));
	for (int i = 0; i < a->nsets; i++)
		json_array_append_new(sets, json_string(a->sets[i]));
	json_object_set_new(root, "sets", sets);
	for (int o = 0; o < p->naxes; o++) {
		const struct sweep_axis *ax = &p->axes[sweep_axis_at(p, o)];
		json_t *k = json_object(), *vals = json_array();

		json_object_set_new(k, "key", json_string(ax->key));
		for (int v = 0; v < ax->nvalues; v++)
			json_array_append_new(vals, json_string(ax->values[v]));
		json_object_set_new(k, "values", vals);
		json_object_set_new(k, "default", json_string(ax->def));
		json_object_set_new(k, "dataset", json_boolean(ax->dataset));
		json_object_set_new(k, "numeric", json_boolean(ax->numeric));
		json_object_set_new(k, "zipped", json_boolean(ax->zipped));
		json_array_append_new(keys, k);
	}
	json_object_set_new(root, "keys", keys);
	for (long i = 0; i < p->npoints; i++) {
		json_t *pt = json_object(), *pset = json_array();

		json_object_set_new(pt, "index", json_integer(i + 1));
		sweep_point_dir(p, i, buf, sizeof(buf));
		json_object_set_new(pt, "dir", json_string(buf));
		sweep_point_label(p, i, -1, buf, sizeof(buf));
		json_object_set_new(pt, "label", json_string(buf));
		for (int ax = 0; ax < p->naxes; ax++) {
			sweep_point_set(p, i, ax, buf, sizeof(buf));
			json_array_append_new(pset, json_string(buf));
		}
		json_object_set_new(pt, "sets", pset);
		json_object_set_new(pt, "new_dataset", json_boolean(sweep_point_new_dataset(p, i)));
		json_array_append_new(points, pt);
	}
	json_object_set_new(root, "points", points);
	return root;
}

static json_t *sweep_folder_json(const struct fs_dir_layout *f)
{
	json_t *o = json_object();

	json_object_set_new(o, "known", json_boolean(f->known));
	json_object_set_new(o, "fs", json_string(f->fs));
	json_object_set_new(o, "can_stripe", json_boolean(f->can_stripe));
	json_object_set_new(o, "stripe_count",
			    f->stripe_count > 0 ? json_integer(f->stripe_count) : json_null());
	json_object_set_new(o, "text", json_string(f->text));
	return o;
}

static void sweep_folder_from_json(json_t *o, struct fs_dir_layout *f)
{
	memset(f, 0, sizeof(*f));
	if (!json_is_object(o))
		return; /* a sweep started by an older feedbench: unknown */
	f->known = json_is_true(json_object_get(o, "known"));
	f->can_stripe = json_is_true(json_object_get(o, "can_stripe"));
	snprintf(f->fs, sizeof(f->fs), "%s", summary_str(o, "fs", ""));
	snprintf(f->text, sizeof(f->text), "%s", summary_str(o, "text", ""));
	json_t *c = json_object_get(o, "stripe_count");
	f->stripe_count = json_is_integer(c) ? (int64_t)json_integer_value(c) : 0;
}

static int sweep_write_json(const char *path, json_t *root)
{
	char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	int rc;

	if (!text)
		return -ENOMEM;
	size_t n = strlen(text);
	text[n] = '\n';
	rc = safe_write_atomic(path, text, n + 1);
	free(text);
	return rc;
}

/* ---- rank 0 set-up: the folder, or the checks of a resume ----------------------------- */

struct sweep_state {
	struct sweep_args args;
	struct config *cfg;
	struct sweep_plan plan;
	char *text; /* config text, identical on every rank */
	size_t text_len;
	char dir[CFG_PATH_MAX];	      /* where the points are written: <final>.partial until done */
	char final_dir[CFG_PATH_MAX]; /* the name the sweep takes once every file is written */
	int rank, nranks;
	MPI_Comm comm;
	struct fb_errbuf err;
	bool tty;
	struct fs_dir_layout folder; /* the data folder's own layout, before the first point */
};

/* A resume reads the points' folders as the sweep's own: a link or anything but a folder
 * at a point's name, or anything but a regular file at its summary.json, is refused before a
 * point runs (a link would count another folder's results as this sweep's, and a point run
 * would be written through it). */
static int sweep_check_points(struct sweep_state *s)
{
	char name[256], path[CFG_PATH_MAX + 300];
	const char *what;

	for (long i = 0; i < s->plan.npoints; i++) {
		sweep_point_dir(&s->plan, i, name, sizeof(name));
		snprintf(path, sizeof(path), "%s/%s", s->dir, name);
		int rc = safe_own_dir_check(path, &what);
		if (rc == 0) {
			snprintf(path, sizeof(path), "%s/%s/summary.json", s->dir, name);
			rc = safe_check_owned(path, &what);
		}
		if (rc == -FB_ENOTREG)
			return fb_fail(&s->err, -FB_EUSAGE,
				       "cannot resume '%s': '%s' is %s, not a file or folder of "
				       "this sweep's own",
				       s->dir, path, what);
		if (rc < 0)
			return fb_fail(&s->err, rc, "cannot resume '%s': '%s': %s", s->dir, path,
				       fb_strerror(rc));
	}
	return 0;
}

static int sweep_check_resume(struct sweep_state *s)
{
	char path[CFG_PATH_MAX + 32], *text = NULL;
	json_error_t jerr;
	json_t *root;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/sweep.json", s->dir);
	if ((rc = util_read_file(path, &text, NULL)) < 0)
		return fb_fail(&s->err, -FB_EUSAGE,
			       "cannot resume '%s': cannot read sweep.json: %s", s->dir,
			       strerror(-rc));
	root = json_loads(text, 0, &jerr);
	free(text);
	if (!json_is_object(root)) {
		json_decref(root);
		return fb_fail(&s->err, -FB_EUSAGE,
			       "cannot resume '%s': sweep.json is not valid: %s", s->dir,
			       jerr.text);
	}
	const char *hash = json_string_value(json_object_get(root, "config_hash"));
	json_int_t ranks = json_integer_value(json_object_get(root, "num_ranks"));

	sweep_folder_from_json(json_object_get(root, "folder_layout"), &s->folder);

	if (!hash || strcmp(hash, s->plan.hash) != 0)
		rc = fb_fail(
		    &s->err, -FB_ECONFIG,
		    "cannot resume '%s': the config or its [sweep] differs from the one the "
		    "sweep started with (hash %.12s, now %.12s); start a new sweep instead",
		    s->dir, hash ? hash : "missing", s->plan.hash);
	else if (ranks != s->nranks)
		rc = fb_fail(&s->err, -FB_ECONFIG,
			     "cannot resume '%s': the sweep ran with %lld ranks, this job has %d; "
			     "points would not be comparable",
			     s->dir, (long long)ranks, s->nranks);
	json_decref(root);
	return rc ? rc : sweep_check_points(s);
}

/* True when nothing holds path: not a folder, a file, nor a link (dangling or not). */
static bool sweep_name_free(const char *path)
{
	struct stat st;

	return lstat(path, &st) < 0 && errno == ENOENT;
}

static int sweep_create_dir(struct sweep_state *s, char *created, size_t clen)
{
	const struct config *cfg = s->cfg;
	const char *parent = s->args.output ? s->args.output : cfg->output.dir;
	const char *name = cfg->output.name[0] ? cfg->output.name : cfg->workload.name;
	char stamp[32], path[CFG_PATH_MAX + 32];
	int rc;

	util_utc_compact(stamp, sizeof(stamp));
	util_utc_iso(created, clen);
	if ((rc = util_mkdirs(parent, 0755)) < 0)
		return fb_fail(&s->err, rc, "cannot create '%s': %s", parent, strerror(-rc));
	/* Two sweeps started in the same second get -2, -3: never share a folder. */
	/* The sweep works in <name>.partial and takes its final name only when every point,
	 * table, report and picture was written: a folder under a final name is a finished
	 * sweep. The .partial name is claimed with mkdir (safe_claim_dir), which fails for
	 * anything holding it (a folder, a file, a link, even a dangling one) and never follows
	 * a link; a final name already held by anything (an earlier sweep) gives the claim back
	 * and moves on. The rename at the end never replaces a folder that appeared meanwhile. */
	for (int n = 1;; n++) {
		if (n == 1)
			snprintf(s->final_dir, sizeof(s->final_dir), "%s/%s-sweep-%s", parent, name,
				 stamp);
		else
			snprintf(s->final_dir, sizeof(s->final_dir), "%s/%s-sweep-%s-%d", parent,
				 name, stamp, n);
		if ((size_t)snprintf(s->dir, sizeof(s->dir), "%s.partial", s->final_dir) >=
		    sizeof(s->dir))
			return fb_fail(&s->err, -ENAMETOOLONG, "cannot create '%s': %s",
				       s->final_dir, strerror(ENAMETOOLONG));
		rc = safe_claim_dir(s->dir, 0755);
		if (rc == 0 && sweep_name_free(s->final_dir))
			break;
		if (rc == 0)
			rmdir(s->dir);
		else if (rc != -EEXIST || n == 99)
			return fb_fail(&s->err, rc, "cannot create '%s': %s", s->dir,
				       strerror(-rc));
		if (n == 99)
			return fb_fail(&s->err, -EEXIST, "cannot create '%s': %s", s->final_dir,
				       strerror(EEXIST));
	}
	snprintf(path, sizeof(path), "%s/sweep.ini", s->dir);
	if ((rc = safe_write_atomic(path, s->text, s->text_len)) < 0)
		return fb_fail(&s->err, rc, "cannot write '%s': %s", path, strerror(-rc));
	return 0;
}

static int sweep_setup_rank0(struct sweep_state *s)
{
	char created[32] = "", path[CFG_PATH_MAX + 32];
	json_t *root;
	int rc;

	if (s->args.resume) {
		snprintf(s->dir, sizeof(s->dir), "%s", s->args.resume);
		/* Trailing slashes would double in point paths. */
		for (size_t n = strlen(s->dir); n > 1 && s->dir[n - 1] == '/'; n--)
			s->dir[n - 1] = '\0';
		/* An unfinished sweep (<name>.partial) takes its final name when it completes;
		 * a finished one keeps its name. */
		snprintf(s->final_dir, sizeof(s->final_dir), "%s", s->dir);
		size_t fl = strlen(s->final_dir), sl = strlen(".partial");
		if (fl > sl && strcmp(s->final_dir + fl - sl, ".partial") == 0)
			s->final_dir[fl - sl] = '\0';
		return sweep_check_resume(s);
	}
	/* What a file in the data folder would get without feedbench: read before the first
	 * point sets a layout there (a resume reads it from sweep.json). */
	fs_dir_layout(s->cfg->dataset.data_dir, &s->folder);
	if ((rc = sweep_create_dir(s, created, sizeof(created))) < 0)
		return rc;
	root = sweep_plan_json(&s->plan, &s->args, s->cfg, s->nranks, created);
	json_object_set_new(root, "folder_layout", sweep_folder_json(&s->folder));
	snprintf(path, sizeof(path), "%s/sweep.json", s->dir);
	rc = sweep_write_json(path, root);
	json_decref(root);
	if (rc < 0)
		return fb_fail(&s->err, rc, "cannot write '%s': %s", path, strerror(-rc));
	return 0;
}

/* ---- agreement helpers: rank 0 decides, every rank learns the outcome ------------------ */

static int sweep_bcast_rc(struct sweep_state *s, int rc)
{
	int len;

	MPI_Bcast(&rc, 1, MPI_INT, 0, s->comm);
	if (rc < 0) {
		len = s->rank == 0 ? (int)strlen(s->err.msg) + 1 : 0;
		MPI_Bcast(&len, 1, MPI_INT, 0, s->comm);
		if (s->rank != 0)
			memset(s->err.msg, 0, sizeof(s->err.msg));
		MPI_Bcast(s->err.msg, len, MPI_CHAR, 0, s->comm);
		s->err.code = rc;
	}
	return rc;
}

/* The config text: from CONFIG, or from the sweep folder when resuming without one. */
static int sweep_load_text(struct sweep_state *s)
{
	unsigned long long len = 0;
	int rc = 0;

	if (s->rank == 0) {
		char path[CFG_PATH_MAX + 32];
		const char *from = s->args.config;

		if (!from) {
			snprintf(path, sizeof(path), "%s/sweep.ini", s->args.resume);
			from = path;
		}
		rc = cfg_read_file(from, &s->text, &s->text_len, &s->err);
		len = s->text_len;
	}
	if ((rc = sweep_bcast_rc(s, rc)) < 0)
		return rc;
	MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, s->comm);
	if (s->rank != 0) {
		s->text = malloc(len + 1);
		if (!s->text)
			MPI_Abort(s->comm, 1); /* the collective below cannot be left half done */
		s->text_len = len;
	}
	MPI_Bcast(s->text, (int)len + 1, MPI_CHAR, 0, s->comm);
	return 0;
}

/* Sets stored in sweep.json: a resume without CONFIG repeats the original --set options. */
static int sweep_load_stored_sets(struct sweep_state *s, char **store, size_t len)
{
	char path[CFG_PATH_MAX + 32], *text = NULL;
	int n = 0;

	if (s->args.config || s->rank != 0)
		return 0;
	snprintf(path, sizeof(path), "%s/sweep.json", s->args.resume);
	if (util_read_file(path, &text, NULL) < 0)
		return 0; /* the resume check names the problem */
	json_t *root = json_loads(text, 0, NULL), *v;
	size_t i;

	free(text);
	json_array_foreach(json_object_get(root, "sets"), i, v)
	{
		if (!json_is_string(v) || s->args.nsets >= RUNNER_MAX_SETS - CFG_MAX_SWEEP)
			continue;
		snprintf(store[s->args.nsets], len, "%s", json_string_value(v));
		s->args.sets[s->args.nsets] = store[s->args.nsets];
		s->args.nsets++;
		n++;
	}
	json_decref(root);
	return n;
}

static void sweep_bcast_sets(struct sweep_state *s, char **store, size_t len)
{
	int n = s->rank == 0 ? s->args.nsets : 0;

	MPI_Bcast(&n, 1, MPI_INT, 0, s->comm);
	for (int i = 0; i < n; i++) {
		if (s->rank == 0 && s->args.sets[i] != store[i])
			snprintf(store[i], len, "%s", s->args.sets[i]);
		MPI_Bcast(store[i], (int)len, MPI_CHAR, 0, s->comm);
		s->args.sets[i] = store[i];
	}
	s->args.nsets = n;
}

/* ---- the loop -------------------------------------------------------------------------- */

static bool sweep_point_done(const char *dir, struct sweep_result *r)
{
	char path[CFG_PATH_MAX + 300], why[256];

	snprintf(path, sizeof(path), "%s/summary.json", dir);
	return sweep_read_summary(path, r, why, sizeof(why)) == 0;
}

struct sweep_progress {
	uint64_t start_ns;
	double run_seconds; /* points run by this job */
	long nrun, nskipped;
	double best_mib;
	long best;
};

static void sweep_progress_line(struct sweep_state *s, struct sweep_progress *pr, long i,
				const char *label, const char *what, double mib)
{
	if (s->args.quiet)
		return;
	double elapsed = timer_ns_to_s(timer_now_ns() - pr->start_ns);
	long left = s->plan.npoints - i - (strcmp(what, "running") == 0 ? 0 : 1);
	char el[32], eta[32] = "?", bw[64] = "";

	sweep_fmt_duration(elapsed, el, sizeof(el));
	if (pr->nrun > 0)
		sweep_fmt_duration(pr->run_seconds / pr->nrun * left, eta, sizeof(eta));
	if (mib >= 0)
		snprintf(bw, sizeof(bw), " %.1f MiB/s (best %.1f, point %ld)", mib, pr->best_mib,
			 pr->best + 1);
	/* Progress goes to stderr: stdout carries the table at the end. */
	if (s->tty) {
		fprintf(stderr, "\r\033[Ksweep [%ld/%ld] %s %s:%s%s elapsed %s, ETA %s", i + 1,
			s->plan.npoints, what, label, bw, mib >= 0 ? "," : "", el, eta);
		if (i + 1 == s->plan.npoints && strcmp(what, "running") != 0)
			fprintf(stderr, "\n");
	} else {
		fprintf(stderr, "sweep: point %ld/%ld %s (%s)%s%s, elapsed %s, ETA %s\n", i + 1,
			s->plan.npoints, what, label, mib >= 0 ? ":" : "", bw, el, eta);
	}
	fflush(stderr);
}

static int sweep_run_points(struct sweep_state *s, struct sweep_result *res)
{
	char dir[CFG_PATH_MAX + 300], name[256], label[512];
	char setbuf[CFG_MAX_SWEEP][CFG_NAME_MAX + SWEEP_VALUE_MAX + 2];
	struct sweep_progress pr = {.start_ns = timer_now_ns(), .best = -1};
	struct runner_opts o;
	bool said = false; /* the accelerator choice, said by the first point run */
	int rc = 0;

	for (long i = 0; i < s->plan.npoints; i++) {
		int done = 0;

		sweep_point_dir(&s->plan, i, name, sizeof(name));
		sweep_point_label(&s->plan, i, -1, label, sizeof(label));
		snprintf(dir, sizeof(dir), "%s/%s", s->dir, name);
		if (s->rank == 0)
			done = sweep_point_done(dir, &res[i]);
		MPI_Bcast(&done, 1, MPI_INT, 0, s->comm);
		if (done) {
			pr.nskipped++;
			if (s->rank == 0)
				sweep_progress_line(s, &pr, i, label, "done before, skipped", -1);
			continue;
		}
		/* A signal between points stops here, before the next dataset is touched. */
		int stop = feedbench_stop != 0;
		MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_MAX, s->comm);
		if (stop) {
			if (s->rank == 0)
				fprintf(
				    stderr,
				    "%sfeedbench: interrupted before point %ld/%ld; continue with "
				    "`feedbench sweep --resume %s`\n",
				    s->tty ? "\n" : "", i + 1, s->plan.npoints, s->dir);
			return -FB_EINTR;
		}
		memset(&o, 0, sizeof(o));
		o.config_path = s->args.config ? s->args.config : s->cfg->source;
		o.config_text = s->text;
		for (int k = 0; k < s->args.nsets; k++)
			o.sets[o.nsets++] = s->args.sets[k];
		for (int a = 0; a < s->plan.naxes; a++) {
			sweep_point_set(&s->plan, i, a, setbuf[a], sizeof(setbuf[a]));
			o.sets[o.nsets++] = setbuf[a];
		}
		o.run_dir = dir;
		o.quiet = true;
		o.no_plots = true;
		o.say_accelerator = !said && !s->args.quiet;
		said = true;
		if (s->rank == 0 && s->tty)
			sweep_progress_line(s, &pr, i, label, "running", -1);
		else if (s->rank == 0)
			sweep_progress_line(s, &pr, i, label, "starting", -1);
		uint64_t t0 = timer_now_ns();
		rc = runner_run(&o, s->comm, NULL, 0);
		if (rc < 0) {
			if (s->rank == 0) {
				if (s->tty)
					fprintf(stderr, "\n");
				fprintf(stderr,
					"feedbench: sweep point %ld/%ld (%s) %s; the points "
					"before it are kept: continue with `feedbench sweep "
					"--resume %s`\n",
					i + 1, s->plan.npoints, label,
					rc == -FB_EINTR ? "was interrupted" : "failed", s->dir);
			}
			return rc;
		}
		pr.run_seconds += timer_ns_to_s(timer_now_ns() - t0);
		pr.nrun++;
		double mib = -1;
		if (s->rank == 0 && sweep_point_done(dir, &res[i])) {
			mib = res[i].m[SWM_BANDWIDTH].mean;
			if (pr.best < 0 || mib > pr.best_mib) {
				pr.best_mib = mib;
				pr.best = i;
			}
		}
		if (s->rank == 0)
			sweep_progress_line(s, &pr, i, label, "done", mib);
	}
	return rc;
}

/* Tables, report and plots from the points' summaries (rank 0). */
static int sweep_finish(struct sweep_state *s, struct sweep_result *res)
{
	char dir[CFG_PATH_MAX + 300], name[256], why[512];
	struct sweep_reco *reco = NULL;
	int ngroups, rc;

	for (long i = 0; i < s->plan.npoints; i++) {
		sweep_point_dir(&s->plan, i, name, sizeof(name));
		snprintf(dir, sizeof(dir), "%s/%s", s->dir, name);
		if (!res[i].done)
			sweep_point_done(dir, &res[i]);
	}
	ngroups = sweep_recommend(&s->plan, res, &s->folder, &reco);
	if (ngroups < 0)
		return fb_fail(&s->err, ngroups, "cannot build the recommendation: %s",
			       strerror(-ngroups));
	if (!s->args.quiet)
		printf("\n");
	rc = sweep_write_tables(s->dir, &s->plan, res, reco, ngroups, &s->folder,
				s->cfg->workload.name, s->args.quiet ? NULL : stdout, &s->err);
	free(reco);
	if (rc < 0)
		return rc;
	/* Every point's results are kept whatever happens here; a report or picture that
	 * cannot be written is still a failure of the sweep (exit 1, the reason). The pictures
	 * come first (the sweep's and every point's), then the reports that embed them, also
	 * when a picture failed. */
	int prc = s->cfg->output.plots ? plot_render(s->dir, why, sizeof(why)) : 0;
	char rwhy[1024];

	if (prc > 0)
		fprintf(stderr, "feedbench: warning: plots skipped: %s\n", why);
	if ((rc = report_write(s->dir, rwhy, sizeof(rwhy))) < 0)
		return fb_fail(&s->err, rc, "%s", rwhy);
	if (prc < 0)
		return fb_fail(&s->err, prc, "cannot draw the plots of '%s': %s", s->dir, why);
	if (strcmp(s->dir, s->final_dir) != 0) {
		if ((rc = safe_rename_noreplace(s->dir, s->final_dir)) < 0)
			return fb_fail(&s->err, rc,
				       "cannot rename the finished sweep '%s' to '%s': %s (its "
				       "points and report are complete under the first name)",
				       s->dir, s->final_dir, strerror(-rc));
		snprintf(s->dir, sizeof(s->dir), "%s", s->final_dir);
	}
	printf("\nsweep folder: %s\n", s->dir);
	return 0;
}

static int sweep_run(struct sweep_state *s)
{
	static const size_t setlen = CFG_NAME_MAX + CFG_PATH_MAX;
	char *store[RUNNER_MAX_SETS] = {0}, ini[CFG_PATH_MAX + 16];
	struct sweep_result *res = NULL;
	struct runner_opts o;
	int rc;

	for (int i = 0; i < RUNNER_MAX_SETS; i++)
		if (!(store[i] = calloc(1, setlen)))
			MPI_Abort(s->comm, 1);
	if ((rc = sweep_load_text(s)) < 0)
		goto out_free;
	if (s->args.resume)
		sweep_load_stored_sets(s, store, setlen);
	sweep_bcast_sets(s, store, setlen);

	memset(&o, 0, sizeof(o));
	snprintf(ini, sizeof(ini), "%s/sweep.ini", s->args.resume ? s->args.resume : ".");
	o.config_path = s->args.config ? s->args.config : ini;
	o.config_text = s->text;
	for (int i = 0; i < s->args.nsets; i++)
		o.sets[o.nsets++] = s->args.sets[i];
	if ((rc = runner_load_config(s->cfg, &o, s->comm, &s->err)) < 0)
		goto out_free;
	/* Rank 0 looks at the data folder for every point; every rank learns the outcome. */
	rc = sweep_plan_build(&s->plan, s->cfg, s->nranks, s->rank == 0, &s->err);
	if ((rc = sweep_bcast_rc(s, rc)) < 0)
		goto out_free;
	if (s->args.dry_run) {
		if (s->rank == 0)
			rc = sweep_dry_run(&s->plan, s->cfg, s->nranks);
		goto out_free;
	}
	if (s->rank == 0)
		rc = sweep_setup_rank0(s);
	if ((rc = sweep_bcast_rc(s, rc)) < 0)
		goto out_free;
	MPI_Bcast(s->dir, sizeof(s->dir), MPI_CHAR, 0, s->comm);
	if (s->rank == 0 && !s->args.quiet)
		printf("sweep: %ld points x %d repetition%s into %s\n", s->plan.npoints,
		       s->plan.repetitions, s->plan.repetitions == 1 ? "" : "s", s->dir);
	res = calloc((size_t)s->plan.npoints, sizeof(*res));
	if (!res)
		MPI_Abort(s->comm, 1);
	rc = sweep_run_points(s, res);
	if (rc < 0) {
		s->err.code = rc; /* the runner has printed its message */
		s->err.msg[0] = '\0';
		goto out_free;
	}
	if (s->rank == 0)
		rc = sweep_finish(s, res);
	rc = sweep_bcast_rc(s, rc);
out_free:
	free(res);
	for (int i = 0; i < RUNNER_MAX_SETS; i++)
		free(store[i]);
	return rc;
}

int sweep_main(int argc, char **argv, void *mpi_comm)
{
	struct sweep_state *s = calloc(1, sizeof(*s));
	char why[512];
	int rc;

	if (!s)
		return 1;
	s->comm = *(MPI_Comm *)mpi_comm;
	MPI_Comm_rank(s->comm, &s->rank);
	MPI_Comm_size(s->comm, &s->nranks);
	fb_errbuf_init(&s->err);
	s->tty = isatty(STDERR_FILENO);
	rc = sweep_parse_args(argc, argv, &s->args, why, sizeof(why));
	if (rc != 0) {
		if (s->rank == 0) {
			if (rc < 0)
				fprintf(stderr, "feedbench sweep: %s\n", why);
			sweep_usage(rc < 0 ? stderr : stdout);
		}
		free(s);
		return rc < 0 ? fb_exit_status(rc) : 0;
	}
	s->cfg = calloc(1, sizeof(*s->cfg));
	if (!s->cfg) {
		free(s);
		return 1;
	}
	rc = sweep_run(s);
	if (rc < 0 && s->rank == 0 && s->err.msg[0])
		fprintf(stderr, "feedbench: error: %s\n", s->err.msg);
	sweep_plan_free(&s->plan);
	free(s->text);
	free(s->cfg);
	free(s);
	return rc < 0 ? fb_exit_status(rc) : 0;
}
