/* Plots: gnuplot scripts (plot/NAME.gp, one per picture) run over the CSVs of a run or sweep
 * folder, each rendered to PNG and SVG.
 *
 * gnuplot is started with posix_spawn (fork/exec without a shell, safe beside MPI) and gets
 * its inputs as `-e` variables; paths are quoted as gnuplot strings, never as shell words.
 * The scripts are found through $FEEDBENCH_PLOT_DIR, then the source tree this binary was
 * built from (FEEDBENCH_SOURCE_DIR/plot), then beside the executable (plot/, ../plot,
 * ../share/feedbench/plot). A missing gnuplot is a warning: results stand without pictures.
 */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "build_config.h"
#include "child.h"
#include "config.h"
#include "errors.h"
#include "plot_trace.h"
#include "safefile.h"
#include "sweep.h"

extern char **environ;

#define PLOT_MAX_SERIES	   16	  /* more lines than this are unreadable */
#define PLOT_TIMELINE_ROWS 200000 /* rows of timeline.csv drawn at most */

struct plot_env {
	char gnuplot[PATH_MAX];
	char scripts[PATH_MAX];
	int rendered; /* pictures written */
	int failed;
	char why[512]; /* first failure */
	char bad[512]; /* why the results cannot be plotted (a malformed input, a write) */
};

/* ---- finding gnuplot and the scripts ----------------------------------------------------- */

static bool plot_executable(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

/* $FEEDBENCH_GNUPLOT names the program (tests point it at nothing to check the warning);
 * otherwise "gnuplot" along $PATH. */
static bool plot_find_gnuplot(char *out, size_t len)
{
	const char *env = getenv("FEEDBENCH_GNUPLOT"), *path = getenv("PATH");

	if (env && *env) {
		snprintf(out, len, "%s", env);
		return plot_executable(out);
	}
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);

		snprintf(out, len, "%.*s/gnuplot", (int)n, n ? path : ".");
		if (plot_executable(out))
			return true;
		path += n + (colon ? 1 : 0);
	}
	return false;
}

static bool plot_scripts_in(const char *dir, char *out, size_t len)
{
	char probe[PATH_MAX + 16];

	snprintf(probe, sizeof(probe), "%s/au.gp", dir);
	if (access(probe, R_OK) != 0)
		return false;
	snprintf(out, len, "%s", dir);
	return true;
}

static bool plot_find_scripts(char *out, size_t len)
{
	static const char *const rel[] = {"plot", "../plot", "../share/feedbench/plot"};
	const char *env = getenv("FEEDBENCH_PLOT_DIR");
	char exe[PATH_MAX], dir[PATH_MAX + 64];
	ssize_t n;

	if (env && *env)
		return plot_scripts_in(env, out, len);
	snprintf(dir, sizeof(dir), "%s/plot", FEEDBENCH_SOURCE_DIR);
	if (plot_scripts_in(dir, out, len))
		return true;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/%s", exe, rel[i]);
		if (plot_scripts_in(dir, out, len))
			return true;
	}
	return false;
}

/* ---- running one script -------------------------------------------------------------------- */

/* A gnuplot single-quoted string: only the quote itself needs doubling. */
static void plot_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

void plot_var(FILE *f, const char *name, const char *value)
{
	fprintf(f, "%s = ", name);
	plot_quote(f, value);
	fprintf(f, "; ");
}

static void plot_fail(struct plot_env *env, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void plot_fail(struct plot_env *env, const char *fmt, ...)
{
	va_list ap;

	env->failed++;
	if (env->failed > 1)
		return;
	va_start(ap, fmt);
	vsnprintf(env->why, sizeof(env->why), fmt, ap);
	va_end(ap);
}

/* Last non-empty line of gnuplot's stderr: gnuplot ends an error with "line N: message". */
static void plot_last_line(char *text, char *out, size_t len)
{
	char *end = text + strlen(text);

	while (end > text && (end[-1] == '\n' || end[-1] == ' '))
		*--end = '\0';
	char *start = strrchr(text, '\n');
	snprintf(out, len, "%s", start ? start + 1 : text);
}

/* Seconds one gnuplot script may take: FEEDBENCH_GNUPLOT_TIMEOUT, default PLOT_TIME_LIMIT
 * (a sweep's largest picture takes about a second). */
#define PLOT_TIME_LIMIT 120u

static unsigned plot_time_limit(void)
{
	const char *env = getenv("FEEDBENCH_GNUPLOT_TIMEOUT");
	char *end;
	unsigned long v = env ? strtoul(env, &end, 10) : 0;

	return env && *env && !*end && v > 0 && v <= 86400 ? (unsigned)v : PLOT_TIME_LIMIT;
}

/* Runs gnuplot -e ASSIGN SCRIPT under a time limit; stdout is dropped, stderr kept for the
 * message. */
static int plot_exec(struct plot_env *env, const char *script, const char *assign)
{
	char path[PATH_MAX + 64], err[8192], line[512];
	char *argv[] = {"gnuplot", "-e", (char *)assign, path, NULL};
	posix_spawn_file_actions_t fa;
	int pipefd[2], status = 0, rc;
	unsigned limit;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", env->scripts, script);
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		plot_fail(env, "cannot run gnuplot: pipe: %s", strerror(errno));
		return -errno;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
	rc = posix_spawn(&pid, env->gnuplot, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (rc != 0) {
		close(pipefd[0]);
		plot_fail(env, "cannot run '%s': %s", env->gnuplot, strerror(rc));
		return -rc;
	}
	limit = plot_time_limit();
	rc = child_collect(pid, pipefd[0], err, sizeof(err), limit * 1000u, &status);
	close(pipefd[0]);
	if (rc == -ETIMEDOUT) {
		plot_fail(env,
			  "gnuplot %s did not finish within %u s and was stopped (set "
			  "FEEDBENCH_GNUPLOT_TIMEOUT to allow more seconds)",
			  script, limit);
		return rc;
	}
	if (rc < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		plot_last_line(err, line, sizeof(line));
		plot_fail(env, "gnuplot %s failed: %s", script, line[0] ? line : "no message");
		return -FB_EINTERNAL;
	}
	env->rendered++;
	return 0;
}

/* gnuplot exits 0 after a write failed (a full disk leaves an empty file): each picture is
 * checked to be whole, a PNG by its signature, an SVG by its closing tag, and synced. */
static int plot_check_output(struct plot_env *env, const char *script, const char *out)
{
	static const struct {
		const char *ext, *head, *tail;
	} kinds[] = {{"png", "\x89PNG\r\n\x1a\n", NULL}, {"svg", NULL, "</svg>"}};
	char path[PATH_MAX + 64], buf[64];

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct stat st;
		const char *want = kinds[k].head ? kinds[k].head : kinds[k].tail;
		size_t n = strlen(want);
		bool ok = false;
		int fd;

		snprintf(path, sizeof(path), "%s.%s", out, kinds[k].ext);
		fd = safe_open_read(path, 0, true);
		if (fd >= 0 && fstat(fd, &st) == 0 && (size_t)st.st_size > n + 8) {
			off_t at = kinds[k].head ? 0 : st.st_size - (off_t)sizeof(buf);
			ssize_t got = pread(fd, buf, sizeof(buf) - 1, at < 0 ? 0 : at);
			buf[got > 0 ? got : 0] = '\0';
			ok = got > 0 && (kinds[k].head ? memcmp(buf, want, n) == 0
						       : memmem(buf, (size_t)got, want, n) != NULL);
			/* Synced like every file of a results folder before it is renamed. */
			ok = ok && fsync(fd) == 0;
		}
		if (fd >= 0)
			close(fd);
		if (!ok) {
			plot_fail(env, "gnuplot %s wrote no complete '%s' (disk full?)", script,
				  path);
			env->rendered--;
			return -EIO;
		}
	}
	return 0;
}

/* Runs a script with the variables written by fill (memstream text); out is the picture's
 * path without extension. */
static int plot_run_script(struct plot_env *env, const char *script, char *vars, const char *out)
{
	int rc = vars ? plot_exec(env, script, vars) : -ENOMEM;

	free(vars);
	if (rc == 0)
		rc = plot_check_output(env, script, out);
	return rc;
}

/* ---- run folders ------------------------------------------------------------------------ */

/* "quickstart: raw per_rank, 4 ranks" from summary.json. */
static void plot_run_subject(json_t *s, char *buf, size_t len)
{
	json_t *ds = json_object_get(json_object_get(s, "config"), "dataset");

	snprintf(buf, len, "%s: %s, %s, %lld rank%s", summary_str(s, "workload", "?"),
		 summary_str(ds, "format", "?"), summary_str(ds, "file_access", "?"),
		 (long long)json_integer_value(json_object_get(s, "num_ranks")),
		 json_integer_value(json_object_get(s, "num_ranks")) == 1 ? "" : "s");
}

static bool plot_has_rows(const char *path)
{
	FILE *f = fopen(path, "r");
	int lines = 0, c;

	if (!f)
		return false;
	while (lines < 2 && (c = fgetc(f)) != EOF)
		lines += c == '\n';
	fclose(f);
	return lines >= 2;
}

static void plot_run_folder(struct plot_env *env, const char *dir, json_t *s)
{
	char path[PATH_MAX + 64], subject[512], title[768], *vars;
	double thr = summary_num(s, "config.train.au_threshold");
	size_t len;
	FILE *f;

	plot_run_subject(s, subject, sizeof(subject));

	snprintf(path, sizeof(path), "%s/epochs.csv", dir);
	if (plot_has_rows(path)) {
		f = open_memstream(&vars, &len);
		plot_var(f, "csv", path);
		snprintf(path, sizeof(path), "%s/au", dir);
		plot_var(f, "out", path);
		snprintf(title, sizeof(title), "Accelerator utilisation per epoch (%s): %s",
			 summary_str(s, "verdict", "?"), subject);
		plot_var(f, "title_text", title);
		fprintf(f, "threshold = %g", isnan(thr) ? 90.0 : thr * 100);
		fclose(f);
		plot_run_script(env, "au.gp", vars, path);
	}

	snprintf(path, sizeof(path), "%s/latency.csv", dir);
	if (plot_has_rows(path)) {
		f = open_memstream(&vars, &len);
		plot_var(f, "csv", path);
		snprintf(path, sizeof(path), "%s/latency", dir);
		plot_var(f, "out", path);
		snprintf(title, sizeof(title), "Read latency CDF, all epochs and ranks: %s",
			 subject);
		plot_var(f, "title_text", title);
		fclose(f);
		plot_run_script(env, "latency.gp", vars, path);
	}

	/* Every event from trace.pfw when the run was traced, else timeline.csv's sample. */
	char trace[PATH_MAX + 64], csv[PATH_MAX + 64];
	snprintf(trace, sizeof(trace), "%s/trace.pfw", dir);
	snprintf(csv, sizeof(csv), "%s/.timeline-trace.csv", dir);
	bool traced = plot_trace_timeline(trace, csv, PLOT_TIMELINE_ROWS) == 1;
	snprintf(path, sizeof(path), "%s", traced ? csv : "");
	if (!traced)
		snprintf(path, sizeof(path), "%s/timeline.csv", dir);
	if (plot_has_rows(path)) {
		f = open_memstream(&vars, &len);
		plot_var(f, "csv", path);
		snprintf(path, sizeof(path), "%s/timeline", dir);
		plot_var(f, "out", path);
		snprintf(title, sizeof(title), "Timeline of %s: %s",
			 traced ? "every repetition (trace.pfw)" : "the first repetition", subject);
		plot_var(f, "title_text", title);
		fprintf(f, "maxrows = %d", PLOT_TIMELINE_ROWS);
		fclose(f);
		plot_run_script(env, "timeline.gp", vars, path);
	}
	if (traced)
		unlink(csv);
}

static int plot_run_dir(struct plot_env *env, const char *dir)
{
	char path[PATH_MAX + 64];
	json_t *s;

	snprintf(path, sizeof(path), "%s/summary.json", dir);
	s = safe_json_load(path, 0, NULL);
	if (!json_is_object(s)) {
		json_decref(s);
		return -FB_EFORMAT;
	}
	plot_run_folder(env, dir, s);
	json_decref(s);
	return 0;
}

/* ---- sweep folders ------------------------------------------------------------------------ */

static bool plot_zipped(json_t *keys, int k)
{
	return k >= 0 && json_is_true(json_object_get(json_array_get(keys, (size_t)k), "zipped"));
}

static int plot_nvalues(json_t *keys, int k)
{
	return (int)json_array_size(json_object_get(json_array_get(keys, (size_t)k), "canonical"));
}

/* Series = the cartesian product of the values of every key except `skip` (-1: none) and
 * `skip2`, where the keys of [sweep] zip count as one key (their i-th values go together) and
 * are all left out when skip or skip2 is one of them. Writes `nseries = N; sel(i) = ...;
 * stitle(i) = ...;` for the scripts. Returns N, or 0 when there would be more than
 * PLOT_MAX_SERIES lines. */
/* The next combination of the dimensions' value indexes, the last dimension fastest. */
static void plot_next_combination(json_t *keys, int nk, const int *dim, int ndims, int *idx)
{
	for (int d = ndims - 1; d >= 0; d--) {
		int nv = 0;
		for (int k = 0; k < nk && !nv; k++)
			if (dim[k] == d)
				nv = plot_nvalues(keys, k);
		if (++idx[d] < nv)
			break;
		idx[d] = 0;
	}
}

static int plot_series(FILE *f, json_t *keys, int skip, int skip2)
{
	int nk = (int)json_array_size(keys), n = 1, idx[CFG_MAX_SWEEP] = {0};
	int dim[CFG_MAX_SWEEP], ndims = 0, zip_dim = -1;
	bool zip_out = plot_zipped(keys, skip) || plot_zipped(keys, skip2);
	char *sel = NULL, *tit = NULL;
	size_t sl = 0, tl = 0;
	FILE *fs, *ft;

	if (nk > CFG_MAX_SWEEP)
		return 0;
	/* The dimensions: one per key, one for all zipped keys; -1 for the keys left out. */
	for (int k = 0; k < nk; k++) {
		dim[k] = -1;
		if (k == skip || k == skip2 || (zip_out && plot_zipped(keys, k)))
			continue;
		if (plot_zipped(keys, k) && zip_dim >= 0) {
			dim[k] = zip_dim;
			continue;
		}
		dim[k] = ndims++;
		if (plot_zipped(keys, k))
			zip_dim = dim[k];
		if (n <= PLOT_MAX_SERIES)
			n *= plot_nvalues(keys, k);
	}
	if (n > PLOT_MAX_SERIES || n < 1)
		return 0;
	fs = open_memstream(&sel, &sl);
	ft = open_memstream(&tit, &tl);
	fprintf(fs, "sel(i) = ");
	fprintf(ft, "stitle(i) = ");
	for (int s = 0; s < n; s++) {
		bool any = false;

		fprintf(fs, "i == %d ? (", s + 1);
		fprintf(ft, "i == %d ? ", s + 1);
		/* Titles are built as one string; labels say key=value for each key. */
		char label[512] = "";
		size_t used = 0;
		for (int k = 0; k < nk; k++) {
			json_t *key = json_array_get(keys, (size_t)k);
			if (dim[k] < 0)
				continue;
			fprintf(fs, "%sstrcol(", any ? " && " : "");
			plot_quote(fs, summary_str(key, "key", "?"));
			fprintf(fs, ") eq ");
			plot_quote(
			    fs, json_string_value(json_array_get(json_object_get(key, "canonical"),
								 (size_t)idx[dim[k]])));
			int w = snprintf(label + used, sizeof(label) - used, "%s%s=%s",
					 used ? " " : "", summary_str(key, "name", "?"),
					 json_string_value(json_array_get(
					     json_object_get(key, "values"), (size_t)idx[dim[k]])));
			if (w > 0 && (size_t)w < sizeof(label) - used)
				used += (size_t)w;
			any = true;
		}
		fprintf(fs, "%s) : ", any ? "" : "1");
		plot_quote(ft, any ? label : "all points");
		fprintf(ft, " : ");
		plot_next_combination(keys, nk, dim, ndims, idx);
	}
	fprintf(fs, "0");
	fprintf(ft, "''");
	fclose(fs);
	fclose(ft);
	fprintf(f, "nseries = %d; %s; %s; ", n, sel, tit);
	free(sel);
	free(tit);
	return n;
}

static const char *plot_unit(const char *key)
{
	const struct cfg_key *k = cfg_find_dotted(key);

	if (k && k->type == CFG_SIZE)
		return " (bytes)";
	if (k && k->type == CFG_DURATION)
		return " (s)";
	return "";
}

/* Log x axis when the values are positive and span a factor of 8 or more (powers of two). */
static bool plot_logx(json_t *canon)
{
	double lo = INFINITY, hi = 0;
	size_t i;
	json_t *v;

	json_array_foreach(canon, i, v)
	{
		double x = strtod(json_string_value(v), NULL);
		if (x <= 0)
			return false;
		lo = fmin(lo, x);
		hi = fmax(hi, x);
	}
	return hi / lo >= 8;
}

static void plot_sweep_charts(struct plot_env *env, const char *dir, json_t *res, json_t *sw,
			      double threshold)
{
	json_t *keys = json_object_get(res, "keys");
	char csv[PATH_MAX + 64], path[PATH_MAX + 128], title[1024], subject[512], *vars;
	int nk = (int)json_array_size(keys), cat = -1;
	size_t len;
	FILE *f;

	snprintf(csv, sizeof(csv), "%s/sweep.csv", dir);
	snprintf(subject, sizeof(subject), "%s, %lld ranks, %lld repetition%s per point",
		 summary_str(res, "workload", "?"),
		 (long long)json_integer_value(json_object_get(sw, "num_ranks")),
		 (long long)json_integer_value(json_object_get(res, "repetitions")),
		 json_integer_value(json_object_get(res, "repetitions")) == 1 ? "" : "s");

	/* Bandwidth against each numeric key, one line per combination of the others. */
	for (int k = 0; k < nk; k++) {
		json_t *key = json_array_get(keys, (size_t)k);
		json_t *canon = json_object_get(key, "canonical");

		/* A zipped key moves with others: a line against it would mix their values. */
		if (!json_is_true(json_object_get(key, "numeric")) || json_array_size(canon) < 2 ||
		    plot_zipped(keys, k))
			continue;
		f = open_memstream(&vars, &len);
		plot_var(f, "csv", csv);
		snprintf(path, sizeof(path), "%s/sweep_bandwidth_%s", dir,
			 summary_str(key, "name", "?"));
		plot_var(f, "out", path);
		snprintf(title, sizeof(title), "Read bandwidth against %s: %s",
			 summary_str(key, "name", "?"), subject);
		plot_var(f, "title_text", title);
		plot_var(f, "xcol", summary_str(key, "key", "?"));
		snprintf(title, sizeof(title), "%s%s", summary_str(key, "key", "?"),
			 plot_unit(summary_str(key, "key", "?")));
		plot_var(f, "xlabel_text", title);
		fprintf(f, "xlog = %d; ", plot_logx(canon));
		int n = plot_series(f, keys, k, -1);
		fclose(f);
		if (n > 0)
			plot_run_script(env, "sweep_bandwidth.gp", vars, path);
		else
			free(vars);
	}

	/* Clustered bars: clusters by the first categorical key, bars by the other keys. */
	for (int k = 0; k < nk && cat < 0; k++) {
		json_t *key = json_array_get(keys, (size_t)k);
		if (!json_is_true(json_object_get(key, "numeric")) &&
		    json_array_size(json_object_get(key, "canonical")) >= 2)
			cat = k;
	}
	f = open_memstream(&vars, &len);
	plot_var(f, "csv", csv);
	snprintf(path, sizeof(path), "%s/sweep_bars", dir);
	plot_var(f, "out", path);
	snprintf(title, sizeof(title), "Sweep points compared: %s", subject);
	plot_var(f, "title_text", title);
	fprintf(f, "threshold = %g; ", threshold);
	int n = cat >= 0 ? plot_series(f, keys, cat, -1) : 0;
	if (n > 0) {
		plot_var(f, "catcol", summary_str(json_array_get(keys, (size_t)cat), "key", "?"));
	} else {
		plot_var(f, "catcol", "label");
		fprintf(f, "nseries = 1; sel(i) = 1; stitle(i) = 'mean ± stddev'; ");
	}
	fclose(f);
	plot_run_script(env, "sweep_bars.gp", vars, path);

	f = open_memstream(&vars, &len);
	plot_var(f, "csv", csv);
	snprintf(path, sizeof(path), "%s/sweep_latency", dir);
	plot_var(f, "out", path);
	snprintf(title, sizeof(title), "Read latency percentiles per point: %s", subject);
	plot_var(f, "title_text", title);
	fclose(f);
	plot_run_script(env, "sweep_latency.gp", vars, path);
}

/* sweep_results.json is input: its shape is checked once, here, so the chart code can trust
 * it (keys with a key, a name and as many canonical as shown values, each a string; at most
 * CFG_MAX_SWEEP keys; points whose dir is one folder inside the sweep). */
static int plot_check_sweep(json_t *res, char *why, size_t len)
{
	json_t *keys = json_object_get(res, "keys"), *points = json_object_get(res, "points");
	json_t *k, *p;
	size_t i, j;
	char bad[160];

	if (!json_is_array(keys) || !json_is_array(points)) {
		snprintf(why, len, "no keys or points arrays");
		return -FB_EFORMAT;
	}
	if (json_array_size(keys) > CFG_MAX_SWEEP) {
		snprintf(why, len, "%zu keys (a sweep has at most %d)", json_array_size(keys),
			 CFG_MAX_SWEEP);
		return -FB_EFORMAT;
	}
	json_array_foreach(keys, i, k)
	{
		json_t *canon = json_object_get(k, "canonical"),
		       *vals = json_object_get(k, "values");
		const char *name = json_string_value(json_object_get(k, "name"));

		if (!json_is_string(json_object_get(k, "key")) || !name || !json_is_array(canon) ||
		    !json_is_array(vals) || json_array_size(canon) != json_array_size(vals) ||
		    json_array_size(vals) == 0) {
			snprintf(
			    why, len,
			    "keys[%zu] needs key, name, and canonical and values arrays of one "
			    "length",
			    i);
			return -FB_EFORMAT;
		}
		if (safe_name_check(name, bad, sizeof(bad)) < 0) {
			snprintf(why, len, "keys[%zu].name '%.80s' cannot name a picture: %s", i,
				 name, bad);
			return -FB_EFORMAT;
		}
		for (j = 0; j < json_array_size(vals); j++)
			if (!json_is_string(json_array_get(canon, j)) ||
			    !json_is_string(json_array_get(vals, j))) {
				snprintf(why, len, "keys[%zu] has a value that is not a string", i);
				return -FB_EFORMAT;
			}
	}
	int zipped_len = -1;
	json_array_foreach(keys, i, k)
	{
		int nv = (int)json_array_size(json_object_get(k, "values"));

		if (!json_is_true(json_object_get(k, "zipped")))
			continue;
		if (zipped_len >= 0 && nv != zipped_len) {
			snprintf(why, len, "keys[%zu] is zipped with %d values, another with %d", i,
				 nv, zipped_len);
			return -FB_EFORMAT;
		}
		zipped_len = nv;
	}
	json_array_foreach(points, i, p)
	{
		int rc =
		    safe_point_dir_check(json_string_value(json_object_get(p, "dir")), i, why, len);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int plot_sweep_dir(struct plot_env *env, const char *dir)
{
	char path[PATH_MAX + 64], point[PATH_MAX + 300];
	double threshold = NAN;
	json_t *res, *sw, *v;
	size_t i;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/sweep_results.json", dir);
	res = safe_json_load(path, 0, NULL);
	snprintf(path, sizeof(path), "%s/sweep.json", dir);
	sw = safe_json_load(path, 0, NULL);
	if (!json_is_object(res) || !json_is_object(sw)) {
		json_decref(res);
		json_decref(sw);
		return -FB_EFORMAT;
	}
	char why[400];
	if (plot_check_sweep(res, why, sizeof(why)) < 0) {
		snprintf(env->bad, sizeof(env->bad), "'%s/sweep_results.json': %s", dir, why);
		json_decref(res);
		json_decref(sw);
		return -FB_EFORMAT;
	}
	/* Each point's own pictures (runs inside a sweep skip plotting), and the threshold. */
	json_array_foreach(json_object_get(res, "points"), i, v)
	{
		json_t *s;

		struct stat st;
		int prc;

		snprintf(point, sizeof(point), "%s/%s", dir, summary_str(v, "dir", "?"));
		/* A point is a real folder of the sweep, never a link to one elsewhere. */
		if (lstat(point, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		snprintf(path, sizeof(path), "%s/summary.json", point);
		s = safe_json_load(path, 0, NULL);
		if (!json_is_object(s)) {
			json_decref(s);
			continue;
		}
		if (isnan(threshold))
			threshold = summary_num(s, "config.train.au_threshold") * 100;
		json_decref(s);
		if ((prc = plot_run_dir(env, point)) < 0 && rc == 0)
			rc = prc;
	}
	plot_sweep_charts(env, dir, res, sw, isnan(threshold) ? 90.0 : threshold);
	json_decref(res);
	json_decref(sw);
	return rc;
}

/* ---- entry points -------------------------------------------------------------------------- */

static bool plot_exists(const char *dir, const char *file)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return access(path, R_OK) == 0;
}

int plot_script(const char *script, const char *vars, char *why, size_t len)
{
	struct plot_env env = {0};

	if (!plot_find_gnuplot(env.gnuplot, sizeof(env.gnuplot))) {
		snprintf(why, len, "gnuplot not found (install gnuplot-nox)");
		return 1;
	}
	if (!plot_find_scripts(env.scripts, sizeof(env.scripts))) {
		snprintf(why, len,
			 "the gnuplot scripts (plot/NAME.gp) were not found: set "
			 "FEEDBENCH_PLOT_DIR to the plot/ folder of the feedbench sources");
		return 1;
	}
	if (plot_exec(&env, script, vars) < 0) {
		snprintf(why, len, "%s", env.why);
		return -FB_EINTERNAL;
	}
	return 0;
}

int plot_render(const char *dir, char *why, size_t len)
{
	struct plot_env env = {0};
	bool sweep = plot_exists(dir, "sweep.json");
	int rc;

	if (sweep && !plot_exists(dir, "sweep_results.json")) {
		snprintf(why, len, "'%s' is a sweep that has not finished (no sweep_results.json)",
			 dir);
		return -FB_EUSAGE;
	}
	if (!sweep && !plot_exists(dir, "summary.json")) {
		snprintf(why, len,
			 "'%s' is neither a run folder (summary.json) nor a sweep folder "
			 "(sweep.json)",
			 dir);
		return -FB_EUSAGE;
	}
	if (!plot_find_gnuplot(env.gnuplot, sizeof(env.gnuplot))) {
		snprintf(why, len,
			 "gnuplot not found%s%s (install gnuplot-nox); the tables and CSVs are "
			 "complete",
			 getenv("FEEDBENCH_GNUPLOT") ? " at " : " in PATH",
			 getenv("FEEDBENCH_GNUPLOT") ? getenv("FEEDBENCH_GNUPLOT") : "");
		return 1;
	}
	if (!plot_find_scripts(env.scripts, sizeof(env.scripts))) {
		snprintf(
		    why, len,
		    "the gnuplot scripts (plot/NAME.gp) were not found: set FEEDBENCH_PLOT_DIR "
		    "to the plot/ folder of the feedbench sources");
		return 1;
	}
	rc = sweep ? plot_sweep_dir(&env, dir) : plot_run_dir(&env, dir);
	if (rc < 0) {
		if (env.bad[0])
			snprintf(why, len, "%s", env.bad);
		else
			snprintf(why, len, "cannot read the results in '%s': %s", dir,
				 fb_strerror(rc));
		return rc;
	}
	if (env.failed) {
		snprintf(why, len, "%d of %d pictures failed; first: %s", env.failed,
			 env.failed + env.rendered, env.why);
		return -FB_EINTERNAL;
	}
	snprintf(why, len, "%d picture%s (PNG and SVG)", env.rendered,
		 env.rendered == 1 ? "" : "s");
	return 0;
}

static void plot_usage(FILE *out)
{
	fprintf(out,
		"usage: feedbench plot RESULT_FOLDER...\n\n"
		"Renders the plots (PNG and SVG, gnuplot) of run or sweep folders and "
		"rewrites their report.md.\nScripts: $FEEDBENCH_PLOT_DIR, else the plot/ "
		"folder of the sources (%s/plot).\n",
		FEEDBENCH_SOURCE_DIR);
}

int plot_main(int argc, char **argv)
{
	char why[1024];
	int status = 0, ndirs = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			plot_usage(stdout);
			return 0;
		}
		if (argv[i][0] == '-') {
			fprintf(stderr, "feedbench plot: unknown option '%s'\n", argv[i]);
			plot_usage(stderr);
			return 2;
		}
		ndirs++;
	}
	if (ndirs == 0) {
		fprintf(stderr, "feedbench plot: a result folder is needed\n");
		plot_usage(stderr);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		int rc = plot_render(argv[i], why, sizeof(why));

		/* report.md embeds the pictures that exist: rewrite it now that they are drawn,
		 * also when gnuplot is missing or a picture failed (not when the folder itself
		 * was refused). */
		if (rc >= 0 || rc == -FB_EINTERNAL) {
			char rwhy[1024];
			int wrc = report_write(argv[i], rwhy, sizeof(rwhy));

			if (wrc < 0) {
				fprintf(stderr, "feedbench: error: %s\n", rwhy);
				status =
				    fb_exit_status(wrc) > status ? fb_exit_status(wrc) : status;
			}
		}
		if (rc == 0) {
			printf("%s: %s\n", argv[i], why);
		} else if (rc > 0) {
			fprintf(stderr, "feedbench: warning: plots skipped: %s\n", why);
			status = status ? status : 1;
		} else {
			fprintf(stderr, "feedbench: error: %s\n", why);
			status = fb_exit_status(rc) > status ? fb_exit_status(rc) : status;
		}
	}
	return status;
}
