/* Saved baselines: `feedbench baseline save RESULT --name NAME` keeps the summaries of a run or
 * sweep with the fingerprint of the host they ran on under results/baselines/NAME/, where
 * `feedbench compare --baseline NAME` finds them. results/baselines/ is meant to be committed:
 * a baseline is a few small JSON files.
 *
 * A baseline is written into a temporary folder beside its final place and renamed into it;
 * replacing one (--force) moves the old one aside first, so an interrupted save leaves either
 * the old baseline or the new one, never a mixture.
 */
#include "compare.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "build_config.h"
#include "errors.h"
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

static const char *bl_str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* The fingerprint of the host a result ran on, from its summary.json ("host", written since
 * feedbench 0.2); what an older summary lacks is left out. */
static json_t *bl_fingerprint_of(const struct cmp_point *p)
{
	json_t *root = p->root, *host = json_object_get(root, "host"), *st;
	json_t *o = json_object();

	st = json_object_get(root, "storage");
	json_object_set_new(o, "hostname", json_string(bl_str(root, "hostname")));
	if (host) {
		json_object_set(o, "cpu_model", json_object_get(host, "cpu_model"));
		json_object_set(o, "cpus", json_object_get(host, "cpus"));
		json_object_set(o, "memory_bytes", json_object_get(host, "memory_bytes"));
		json_object_set(o, "kernel", json_object_get(host, "kernel"));
	} else if (json_object_get(st, "host_memory_bytes")) {
		json_object_set(o, "memory_bytes", json_object_get(st, "host_memory_bytes"));
	}
	json_object_set_new(o, "fs_type", json_string(p->fs_type));
	json_object_set_new(o, "mount", json_string(bl_str(st, "mount")));
	json_object_set_new(o, "feedbench_version", json_string(bl_str(root, "feedbench_version")));
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

struct bl_save {
	const char *result, *name, *dir;
	bool force;
};

static void baseline_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: feedbench baseline save RESULT --name NAME [--baselines DIR] [--force]\n"
	    "       feedbench baseline list [--baselines DIR]\n"
	    "\n"
	    "save keeps the summaries of RESULT (a run folder, a sweep folder or a summary.json)\n"
	    "with the fingerprint of the host they ran on (CPU model, memory, file system,\n"
	    "feedbench version) as DIR/NAME (default DIR %s), for\n"
	    "`feedbench compare --baseline NAME CURRENT`. An existing NAME is replaced only with\n"
	    "--force. list prints the saved baselines.\n",
	    CMP_BASELINES_DIR);
}

/* Copies src to dst (whole file, fsynced, renamed into place). A missing optional file is
 * not an error. */
static int bl_copy(const char *src, const char *dst, bool optional)
{
	char *text = NULL;
	size_t len = 0;
	int rc = sweep_slurp(src, &text, &len);

	if (rc == -ENOENT && optional)
		return 0;
	if (rc < 0)
		return rc;
	rc = util_write_atomic(dst, text, len);
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

static int bl_write_fingerprint(const struct bl_save *o, const struct cmp_side *s, const char *tmp)
{
	json_t *fp = bl_fingerprint_of(&s->points[0]), *hashes = json_array();
	char path[PATH_MAX + 64], src[PATH_MAX], now[40];
	char *text;
	int rc, reps = 0;

	util_utc_iso(now, sizeof(now));
	if (!realpath(o->result, src))
		snprintf(src, sizeof(src), "%s", o->result);
	for (int i = 0; i < s->npoints; i++) {
		json_array_append_new(hashes, json_string(s->points[i].config_hash));
		reps = s->points[i].nreps > reps ? s->points[i].nreps : reps;
	}
	json_object_set_new(fp, "name", json_string(o->name));
	json_object_set_new(fp, "saved", json_string(now));
	json_object_set_new(fp, "saved_by", json_string(FEEDBENCH_VERSION));
	json_object_set_new(fp, "source", json_string(src));
	json_object_set_new(fp, "kind", json_string(s->kind));
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
	rc = util_write_atomic(path, text, strlen(text));
	free(text);
	return rc;
}

/* Renames tmp to final; an existing final (allowed by --force) is moved aside first and
 * removed after. */
static int bl_install(const char *tmp, const char *final, const char *dir, const char *name)
{
	char old[PATH_MAX + 64];
	struct stat sb;
	int rc;

	if (stat(final, &sb) == 0) {
		snprintf(old, sizeof(old), "%s/.%s.old-%ld", dir, name, (long)getpid());
		if (rename(final, old) < 0)
			return -errno;
		if (rename(tmp, final) < 0) {
			rc = -errno;
			rename(old, final);
			return rc;
		}
		util_remove_tree(old);
	} else if (rename(tmp, final) < 0) {
		return -errno;
	}
	return util_fsync_dir(dir);
}

static int bl_save(const struct bl_save *o)
{
	char final[PATH_MAX], tmp[PATH_MAX + 64], why[CMP_REASON_LEN * 2];
	struct cmp_side side;
	struct stat sb;
	int rc;

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
	rc = cmp_side_load(&side, o->result, "result", why, sizeof(why));
	if (rc < 0) {
		fprintf(stderr, "feedbench baseline: cannot save: %s\n", why);
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp-%ld", o->dir, o->name, (long)getpid());
	rc = util_mkdirs(o->dir, 0755);
	if (rc == 0) {
		util_remove_tree(tmp);
		rc = util_mkdirs(tmp, 0755);
	}
	if (rc == 0)
		rc = bl_copy_side(&side, tmp);
	if (rc == 0)
		rc = bl_write_fingerprint(o, &side, tmp);
	if (rc == 0)
		rc = bl_install(tmp, final, o->dir, o->name);
	if (rc < 0) {
		fprintf(stderr, "feedbench baseline: cannot save '%s' as '%s': %s\n", o->result,
			final, fb_strerror(rc));
		util_remove_tree(tmp);
		cmp_side_free(&side);
		return 1;
	}
	printf("baseline '%s' saved: %s (%s of workload %s, %d point%s, %d repetition%s per "
	       "point)\n",
	       o->name, final, side.kind, side.points[0].workload, side.npoints,
	       side.npoints == 1 ? "" : "s", side.points[0].nreps,
	       side.points[0].nreps == 1 ? "" : "s");
	if (side.points[0].nreps < 2)
		printf(
		    "note: with one repetition, compare can only use the tolerance (low "
		    "confidence); [output] repetitions = 3 or more gives it a statistical test\n");
	for (int i = 0; i < side.npoints; i++)
		if (side.points[i].cache_resident) {
			printf(
			    "note: the result is cache-resident; compare refuses it unless given "
			    "--allow-cached\n");
			break;
		}
	cmp_side_free(&side);
	return 0;
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
		fp = json_load_file(path, 0, NULL);
		if (!fp)
			continue;
		if (n++ == 0)
			printf("%-20s %-21s %-16s %-6s %-5s %s\n", "name", "saved", "workload",
			       "ranks", "reps", "host");
		printf("%-20s %-21s %-16s %-6lld %-5lld %s, %s, %s\n", e->d_name,
		       bl_str(fp, "saved"), bl_str(fp, "workload"),
		       (long long)json_integer_value(json_object_get(fp, "num_ranks")),
		       (long long)json_integer_value(json_object_get(fp, "repetitions")),
		       bl_str(fp, "hostname"), bl_str(fp, "cpu_model"), bl_str(fp, "fs_type"));
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
		} else if (!o.result) {
			o.result = a;
		} else {
			fprintf(stderr, "feedbench baseline: unexpected argument '%s'\n", a);
			return 2;
		}
	}
	if (strcmp(verb, "list") == 0)
		return bl_list(o.dir);
	if (!o.result || !o.name) {
		fprintf(stderr, "feedbench baseline: save needs RESULT and --name NAME (see "
				"feedbench baseline --help)\n");
		return 2;
	}
	return bl_save(&o);
}
