/* Saved baselines: `feedbench baseline save RESULT --name NAME` keeps the summaries of a run or
 * sweep with the fingerprint of the host they ran on under results/baselines/NAME/, where
 * `feedbench compare --baseline NAME` finds them. results/baselines/ is meant to be committed:
 * a baseline is a few small JSON files.
 *
 * A baseline is written into a temporary folder beside its final place and renamed into it;
 * replacing one (--force) exchanges the two names in one step (renameat2 RENAME_EXCHANGE), so
 * an interrupted save leaves either the old baseline or the new one, never a mixture. Where
 * the file system cannot exchange, the old one is moved aside first and a crash between the
 * two renames leaves it whole under a hidden name.
 */
#include "compare.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "build_config.h"
#include "errors.h"
#include "safefile.h"
#include "util.h"

int baseline_path(const char *dir, const char *name, char *out, size_t len)
{
	if (!name[0] || name[0] == '.' || strlen(name) > 128)
		return -EINVAL;
	for (const char *s = name; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
			return -EINVAL;
	snprintf(out, len, "%s/%s", dir, name);
	return 0;
}

/* ---- fingerprints ---------------------------------------------------------------------------- */

/* The fingerprint of the host a result ran on, from its summary.json ("host", written since
 * feedbench 0.2); what an older summary lacks is left out. */
static json_t *bl_fingerprint_of(const struct cmp_point *p)
{
	json_t *root = p->root, *host = json_object_get(root, "host"), *st;
	json_t *o = json_object();

	st = json_object_get(root, "storage");
	json_object_set_new(o, "hostname", json_string(summary_str(root, "hostname", "")));
	if (host) {
		json_object_set(o, "cpu_model", json_object_get(host, "cpu_model"));
		json_object_set(o, "cpus", json_object_get(host, "cpus"));
		json_object_set(o, "memory_bytes", json_object_get(host, "memory_bytes"));
		json_object_set(o, "kernel", json_object_get(host, "kernel"));
	} else if (json_object_get(st, "host_memory_bytes")) {
		json_object_set(o, "memory_bytes", json_object_get(st, "host_memory_bytes"));
	}
	json_object_set_new(o, "fs_type", json_string(p->fs_type));
	json_object_set_new(o, "mount", json_string(summary_str(st, "mount", "")));
	json_object_set_new(o, "feedbench_version",
			    json_string(summary_str(root, "feedbench_version", "")));
	return o;
}

int baseline_fingerprint_diff(json_t *fingerprint, const struct cmp_point *cur, char *out,
			      size_t len)
{
	/* What decides performance; the hostname and kernel are recorded, not compared. */
	static const char *const keys[] = {"cpu_model", "cpus", "memory_bytes", "fs_type",
					   "feedbench_version"};
	json_t *now = bl_fingerprint_of(cur);
	size_t used = 0;
	int n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *a = json_object_get(fingerprint, keys[i]),
		       *b = json_object_get(now, keys[i]);
		char *ta, *tb;

		if (!a || !b || json_is_null(a) || json_is_null(b) || json_equal(a, b))
			continue;
		ta = json_dumps(a, JSON_ENCODE_ANY);
		tb = json_dumps(b, JSON_ENCODE_ANY);
		if (used < len)
			used +=
			    (size_t)snprintf(out + used, len - used, "%s%s %s (baseline) vs %s",
					     n ? "; " : "", keys[i], ta ? ta : "?", tb ? tb : "?");
		free(ta);
		free(tb);
		n++;
	}
	json_decref(now);
	return n;
}

/* ---- save ------------------------------------------------------------------------------------ */

#define BL_MAX_RESULTS 64

struct bl_save {
	const char *results[BL_MAX_RESULTS];
	int nresults;
	const char *result; /* the first */
	const char *name, *dir;
	bool force;
};

static void baseline_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: feedbench baseline save RESULT... --name NAME [--baselines DIR] [--force]\n"
	    "       feedbench baseline list [--baselines DIR]\n"
	    "\n"
	    "save keeps the summaries of RESULT (a run folder, a sweep folder, a summary.json\n"
	    "or a folder of runs) with the fingerprint of the host they ran on (CPU model,\n"
	    "memory, file system, feedbench version) as DIR/NAME (default DIR %s), for\n"
	    "`feedbench compare --baseline NAME CURRENT`. Several runs of one config (several\n"
	    "RESULTs, or a folder of them) make a baseline from which compare measures the\n"
	    "run-to-run noise. An existing NAME is replaced only with --force. list prints the\n"
	    "saved baselines.\n",
	    CMP_BASELINES_DIR);
}

/* Copies src to dst (whole file, fsynced, renamed into place). A missing optional file is
 * not an error. */
static int bl_copy(const char *src, const char *dst, bool optional)
{
	char *text = NULL;
	size_t len = 0;
	int rc = util_read_file(src, &text, &len);

	if (rc == -ENOENT && optional)
		return 0;
	if (rc < 0)
		return rc;
	rc = safe_write_atomic(dst, text, len);
	free(text);
	return rc;
}

static int bl_copy_point(const char *from_dir, const char *to_dir, const char *summary)
{
	static const char *const extra[] = {"config.ini", "table.md"};
	char src[PATH_MAX + 64], dst[PATH_MAX + 64];
	int rc = util_mkdirs(to_dir, 0755);

	if (rc < 0)
		return rc;
	snprintf(dst, sizeof(dst), "%s/summary.json", to_dir);
	rc = bl_copy(summary, dst, false);
	for (size_t i = 0; rc == 0 && from_dir && i < sizeof(extra) / sizeof(extra[0]); i++) {
		snprintf(src, sizeof(src), "%s/%s", from_dir, extra[i]);
		snprintf(dst, sizeof(dst), "%s/%s", to_dir, extra[i]);
		rc = bl_copy(src, dst, true);
	}
	return rc;
}

static void bl_dirname(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (slash)
		snprintf(out, len, "%.*s", (int)(slash - path), path);
	else
		snprintf(out, len, ".");
}

/* Copies what compare reads: the run's summary (and its config and table), or the sweep's
 * sweep_results.json and each finished point's summary in its own folder. */
/* Several runs: each in tmp/runs/NNN/ (numbered over all the sides); a run given twice (a
 * copy of it in another folder) is kept once. */
static int bl_copy_runs(const struct cmp_side *sides, int k, const char *tmp, int *next)
{
	const struct cmp_side *s = &sides[k];
	char from[PATH_MAX], to[PATH_MAX + 64];
	int rc = 0;

	for (int i = 0; rc == 0 && i < s->npoints; i++) {
		const struct cmp_point *p = &s->points[i];
		bool dup = false;
		for (int j = 0; j < k && !dup; j++)
			for (int q = 0; q < sides[j].npoints && !dup; q++)
				dup = cmp_same_run(&sides[j].points[q], p);
		if (dup)
			continue;
		bl_dirname(p->path, from, sizeof(from));
		snprintf(to, sizeof(to), "%s/runs/%03d", tmp, ++*next);
		rc = bl_copy_point(strcmp(s->kind, "summary") == 0 ? NULL : from, to, p->path);
	}
	return rc;
}

static int bl_copy_side(const struct cmp_side *s, const char *tmp)
{
	char from[PATH_MAX], to[PATH_MAX + 300], src[PATH_MAX + 64], dst[PATH_MAX + 400];
	int rc = 0;

	if (!s->sweep) {
		bl_dirname(s->points[0].path, from, sizeof(from));
		return bl_copy_point(strcmp(s->kind, "run") == 0 ? from : NULL, tmp,
				     s->points[0].path);
	}
	bl_dirname(s->points[0].path, from, sizeof(from));
	bl_dirname(from, src, sizeof(src)); /* the sweep folder */
	static const char *const files[] = {"sweep_results.json", "sweep.md", "sweep.csv"};
	for (size_t i = 0; rc == 0 && i < sizeof(files) / sizeof(files[0]); i++) {
		char f[PATH_MAX + 64];
		snprintf(f, sizeof(f), "%s/%s", src, files[i]);
		snprintf(dst, sizeof(dst), "%s/%s", tmp, files[i]);
		rc = bl_copy(f, dst, i > 0);
	}
	for (int i = 0; rc == 0 && i < s->npoints; i++) {
		const char *sub;
		bl_dirname(s->points[i].path, from, sizeof(from));
		sub = strrchr(from, '/');
		snprintf(to, sizeof(to), "%s/%s", tmp, sub ? sub + 1 : from);
		rc = bl_copy_point(from, to, s->points[i].path);
	}
	return rc;
}

static int bl_write_fingerprint(const struct bl_save *o, const struct cmp_side *sides, int nsides,
				int nruns, const char *tmp)
{
	const struct cmp_side *s = &sides[0];
	json_t *fp = bl_fingerprint_of(&s->points[0]), *hashes = json_array(), *srcs = json_array();
	char path[PATH_MAX + 64], src[PATH_MAX], now[40];
	char *text;
	int rc, reps = 0;

	util_utc_iso(now, sizeof(now));
	for (int k = 0; k < nsides; k++) {
		if (!realpath(o->results[k], src))
			snprintf(src, sizeof(src), "%s", o->results[k]);
		json_array_append_new(srcs, json_string(src));
		for (int i = 0; i < sides[k].npoints; i++) {
			const struct cmp_point *p = &sides[k].points[i];
			bool seen = false;
			for (size_t h = 0; h < json_array_size(hashes); h++)
				seen |= strcmp(json_string_value(json_array_get(hashes, h)),
					       p->config_hash) == 0;
			if (!seen)
				json_array_append_new(hashes, json_string(p->config_hash));
			reps = p->nreps > reps ? p->nreps : reps;
		}
	}
	json_object_set_new(fp, "name", json_string(o->name));
	json_object_set_new(fp, "saved", json_string(now));
	json_object_set_new(fp, "saved_by", json_string(FEEDBENCH_VERSION));
	json_object_set(fp, "source", json_array_get(srcs, 0));
	json_object_set_new(fp, "sources", srcs);
	json_object_set_new(fp, "kind",
			    json_string(s->sweep    ? "sweep"
					: nruns > 1 ? "runs"
						    : "run"));
	json_object_set_new(fp, "runs", json_integer(s->sweep ? 1 : nruns));
	json_object_set_new(fp, "workload", json_string(s->points[0].workload));
	json_object_set_new(fp, "run_start", json_string(s->points[0].start));
	json_object_set_new(fp, "git_commit",
			    s->points[0].git_commit[0] ? json_string(s->points[0].git_commit)
						       : json_null());
	json_object_set_new(fp, "num_ranks", json_integer(s->points[0].num_ranks));
	json_object_set_new(fp, "num_nodes", json_integer(s->points[0].num_nodes));
	json_object_set_new(fp, "repetitions", json_integer(reps));
	json_object_set_new(fp, "config_hashes", hashes);
	text = json_dumps(fp, JSON_INDENT(1));
	json_decref(fp);
	if (!text)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/fingerprint.json", tmp);
	rc = safe_write_atomic(path, text, strlen(text));
	free(text);
	return rc;
}

/* Renames tmp to final; an existing final (allowed by --force) is exchanged with it, then
 * removed. */
static int bl_install(const char *tmp, const char *final, const char *dir, const char *name)
{
	char old[PATH_MAX + 64];
	struct stat sb;
	int rc;

	if (stat(final, &sb) == 0) {
		/* One atomic step where the kernel offers it: the new baseline takes the name,
		 * the old one the temporary name, then goes. */
		if (renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_EXCHANGE) == 0) {
			util_remove_tree(tmp);
			return safe_sync_dir(dir);
		}
		if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
			return -errno;
		/* Without RENAME_EXCHANGE: aside, in, remove; a crash between the two renames
		 * leaves the old baseline whole under .NAME.old-PID. */
		snprintf(old, sizeof(old), "%s/.%s.old-%ld", dir, name, (long)getpid());
		if (rename(final, old) < 0)
			return -errno;
		if (rename(tmp, final) < 0) {
			rc = -errno;
			if (rename(old, final) < 0)
				fprintf(
				    stderr,
				    "feedbench baseline: the old baseline is kept as '%s': %s\n",
				    old, strerror(errno));
			return rc;
		}
		util_remove_tree(old);
	} else {
		/* Another save of the same name since the check: never replaced. */
		return safe_rename_noreplace(tmp, final);
	}
	return safe_sync_dir(dir);
}

static void bl_free_sides(struct cmp_side *sides, int n)
{
	for (int i = 0; i < n; i++)
		cmp_side_free(&sides[i]);
	free(sides);
}

/* Loads every RESULT; a sweep is saved alone. */
static int bl_load(const struct bl_save *o, struct cmp_side *sides, int *nruns)
{
	char why[CMP_REASON_LEN * 2];

	*nruns = 0;
	for (int i = 0; i < o->nresults; i++) {
		int rc = cmp_side_load(&sides[i], o->results[i], "result", why, sizeof(why));
		if (rc < 0) {
			/* an impossible result or unknown schema: 3, as compare refuses it */
			fprintf(stderr, "feedbench baseline: cannot save: %s\n", why);
			return rc == -FB_EIMPOSSIBLE ? 3 : 1;
		}
		if (sides[i].sweep && o->nresults > 1) {
			fprintf(
			    stderr,
			    "feedbench baseline: '%s' is a sweep: a sweep is saved as a baseline "
			    "of its own\n",
			    o->results[i]);
			return 2;
		}
		*nruns += sides[i].npoints;
	}
	return 0;
}

static void bl_report(const struct bl_save *o, const char *final, const struct cmp_side *sides,
		      int nruns)
{
	const struct cmp_point *p0 = &sides[0].points[0];

	if (sides[0].sweep)
		printf("baseline '%s' saved: %s (sweep of workload %s, %d points, %d repetitions "
		       "per point)\n",
		       o->name, final, p0->workload, sides[0].npoints, p0->nreps);
	else
		printf("baseline '%s' saved: %s (workload %s, %d run%s, %d repetition%s in the "
		       "first)\n",
		       o->name, final, p0->workload, nruns, nruns == 1 ? "" : "s", p0->nreps,
		       p0->nreps == 1 ? "" : "s");
	if (!sides[0].sweep && nruns == 1)
		printf("note: saved from several runs (baseline save RUN1 RUN2 ..., or a folder of "
		       "runs), a baseline lets compare measure the run-to-run noise instead of "
		       "assuming --run-noise\n");
	if (p0->nreps < 2 && nruns < 2)
		printf(
		    "note: with one repetition, compare can only use the tolerance (low "
		    "confidence); [output] repetitions = 3 or more gives it a statistical test\n");
	for (int k = 0; k < o->nresults; k++)
		for (int i = 0; i < sides[k].npoints; i++)
			if (sides[k].points[i].cache_resident) {
				printf(
				    "note: '%s' is cache-resident; compare refuses it unless given "
				    "--allow-cached\n",
				    sides[k].points[i].path);
				return;
			}
}

static int bl_save(const struct bl_save *o)
{
	char final[PATH_MAX], tmp[PATH_MAX + 64];
	struct cmp_side *sides;
	struct stat sb;
	int rc, nruns, next = 0;

	if (baseline_path(o->dir, o->name, final, sizeof(final)) < 0) {
		fprintf(stderr,
			"feedbench baseline: name '%s': use letters, digits, '.', '_' and '-' "
			"(not starting with '.')\n",
			o->name);
		return 2;
	}
	if (stat(final, &sb) == 0 && !o->force) {
		fprintf(stderr,
			"feedbench baseline: baseline '%s' exists ('%s'); --force replaces it\n",
			o->name, final);
		return 2;
	}
	sides = calloc((size_t)o->nresults, sizeof(*sides));
	if (!sides)
		return 1;
	rc = bl_load(o, sides, &nruns);
	if (rc) {
		bl_free_sides(sides, o->nresults);
		return rc;
	}
	/* A fresh temporary folder (mkdtemp), never one that was there. */
	tmp[0] = '\0';
	rc = util_mkdirs(o->dir, 0755);
	if (rc == 0)
		rc = safe_tmpdir(o->dir, o->name, tmp, sizeof(tmp));
	for (int i = 0; rc == 0 && i < o->nresults; i++)
		rc = sides[0].sweep || nruns == 1 ? bl_copy_side(&sides[i], tmp)
						  : bl_copy_runs(sides, i, tmp, &next);
	if (rc == 0 && next)
		nruns = next; /* copies of a run given twice left out */
	if (rc == 0)
		rc = bl_write_fingerprint(o, sides, o->nresults, nruns, tmp);
	if (rc == 0)
		rc = bl_install(tmp, final, o->dir, o->name);
	if (rc < 0) {
		fprintf(stderr, "feedbench baseline: cannot save '%s' as '%s': %s\n", o->result,
			final, fb_strerror(rc));
		if (tmp[0])
			util_remove_tree(tmp);
	} else {
		bl_report(o, final, sides, nruns);
	}
	bl_free_sides(sides, o->nresults);
	return rc < 0 ? 1 : 0;
}

/* ---- list ------------------------------------------------------------------------------------ */

static int bl_list(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d) {
		if (errno == ENOENT) {
			printf("no baselines under %s\n", dir);
			return 0;
		}
		fprintf(stderr, "feedbench baseline: cannot list '%s': %s\n", dir, strerror(errno));
		return 1;
	}
	while ((e = readdir(d))) {
		char path[PATH_MAX + 300];
		json_t *fp;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/fingerprint.json", dir, e->d_name);
		fp = safe_json_load_at(path, 0, true, NULL);
		if (!fp)
			continue;
		if (n++ == 0)
			printf("%-20s %-21s %-16s %-6s %-5s %-5s %s\n", "name", "saved", "workload",
			       "ranks", "runs", "reps", "host");
		json_t *runs = json_object_get(fp, "runs");
		printf("%-20s %-21s %-16s %-6lld %-5lld %-5lld %s, %s, %s\n", e->d_name,
		       summary_str(fp, "saved", ""), summary_str(fp, "workload", ""),
		       (long long)json_integer_value(json_object_get(fp, "num_ranks")),
		       runs ? (long long)json_integer_value(runs) : 1LL,
		       (long long)json_integer_value(json_object_get(fp, "repetitions")),
		       summary_str(fp, "hostname", ""), summary_str(fp, "cpu_model", ""),
		       summary_str(fp, "fs_type", ""));
		json_decref(fp);
	}
	closedir(d);
	if (n == 0)
		printf("no baselines under %s\n", dir);
	return 0;
}

int baseline_main(int argc, char **argv)
{
	struct bl_save o = {.dir = CMP_BASELINES_DIR};
	const char *verb = argc > 1 ? argv[1] : NULL;

	if (!verb || strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0) {
		baseline_usage(verb ? stdout : stderr);
		return verb ? 0 : 2;
	}
	if (strcmp(verb, "save") != 0 && strcmp(verb, "list") != 0) {
		fprintf(stderr, "feedbench baseline: unknown action '%s' (save or list)\n", verb);
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--force") == 0) {
			o.force = true;
		} else if ((strcmp(a, "--name") == 0 || strcmp(a, "--baselines") == 0) && v) {
			*(a[2] == 'n' ? &o.name : &o.dir) = v;
			i++;
		} else if (a[0] == '-') {
			fprintf(stderr, "feedbench baseline: unknown or incomplete option '%s'\n",
				a);
			return 2;
		} else if (o.nresults < BL_MAX_RESULTS) {
			o.results[o.nresults++] = a;
		} else {
			fprintf(stderr, "feedbench baseline: more than %d results\n",
				BL_MAX_RESULTS);
			return 2;
		}
	}
	o.result = o.nresults ? o.results[0] : NULL;
	if (strcmp(verb, "list") == 0)
		return bl_list(o.dir);
	if (!o.result || !o.name) {
		fprintf(stderr, "feedbench baseline: save needs RESULT and --name NAME (see "
				"feedbench baseline --help)\n");
		return 2;
	}
	return bl_save(&o);
}
