/* Sides of a comparison: run folders, sweep folders and summary.json files read into points,
 * and the pairing of baseline and current points with the checks that make a pair comparable.
 */
#include "compare.h"
#include "compare_report.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "config.h"
#include "errors.h"
#include "safefile.h"
#include "util.h"

static bool cmp_is_file(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* ---- one summary.json ---------------------------------------------------------------------- */

void cmp_point_free(struct cmp_point *p)
{
	free(p->v);
	json_decref(p->root);
	p->v = NULL;
	p->root = NULL;
}

/* Opens a JSON file: -ENOENT when it is not there, -FB_EFORMAT with the parser's line and
 * column when it is not JSON. */
static int cmp_load_json(const char *path, bool nofollow, json_t **out, char *why, size_t len)
{
	json_error_t jerr;
	struct stat sb;

	*out = safe_json_load_at(path, 0, nofollow, &jerr);
	if (*out)
		return 0;
	if (nofollow && lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
		snprintf(why, len,
			 "'%s' is a symbolic link, not a file this folder holds (not followed)",
			 path);
		return -FB_ENOTREG;
	}
	if (stat(path, &sb) < 0) {
		int rc = -errno;
		snprintf(why, len, "cannot read '%s': %s", path, strerror(errno));
		return rc;
	}
	snprintf(why, len, "'%s' is corrupt: line %d column %d: %s", path, jerr.line, jerr.column,
		 jerr.text);
	return -FB_EFORMAT;
}

/* A run stopped by a signal (<run>.unfinished, "interrupted": true) holds only the epochs it
 * finished: compare, baseline and history refuse it unless --allow-unfinished asks. */
static bool cmp_unfinished_ok;

void cmp_allow_unfinished(bool on)
{
	cmp_unfinished_ok = on;
}

static int cmp_point_load_at(struct cmp_point *p, const char *path, bool nofollow, char *why,
			     size_t len)
{
	static const char *const needed[] = {"config_hash", "num_ranks", "metric", "storage",
					     "config"};
	json_t *root, *st;
	int rc;

	memset(p, 0, sizeof(*p));
	rc = cmp_load_json(path, nofollow, &root, why, len);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (!json_object_get(root, needed[i])) {
			snprintf(why, len,
				 "'%s' is not a complete feedbench summary: no \"%s\" (an "
				 "interrupted write, or another file)",
				 path, needed[i]);
			json_decref(root);
			return -FB_EFORMAT;
		}
	if (json_is_true(json_object_get(root, "interrupted")) && !cmp_unfinished_ok) {
		snprintf(why, len,
			 "'%s' is an interrupted run (\"interrupted\": true): it holds only the "
			 "epochs finished before a signal; --allow-unfinished compares it anyway",
			 path);
		json_decref(root);
		return -FB_EIMPOSSIBLE;
	}
	rc = cmp_summary_check(root, path, why, len);
	if (rc < 0) {
		json_decref(root);
		return rc;
	}
	p->v = malloc(CMP_MAX_REPS * sizeof(*p->v));
	if (!p->v) {
		json_decref(root);
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	p->nreps = summary_repetition_values(root, p->v, CMP_MAX_REPS);
	p->root = root;
	snprintf(p->path, sizeof(p->path), "%s", path);
	snprintf(p->workload, sizeof(p->workload), "%s", summary_str(root, "workload", "?"));
	snprintf(p->run_id, sizeof(p->run_id), "%s", summary_str(root, "run_id", "?"));
	snprintf(p->start, sizeof(p->start), "%s", summary_str(root, "start", ""));
	snprintf(p->config_hash, sizeof(p->config_hash), "%s",
		 summary_str(root, "config_hash", ""));
	snprintf(p->git_commit, sizeof(p->git_commit), "%s", summary_str(root, "git_commit", ""));
	st = json_object_get(root, "storage");
	snprintf(p->fs_type, sizeof(p->fs_type), "%s", summary_str(st, "fs_type", "?"));
	p->cache_resident = json_is_true(json_object_get(st, "cache_resident"));
	p->has_direct = json_is_true(json_object_get(st, "direct"));
	snprintf(p->accel, sizeof(p->accel), "%s",
		 summary_str(json_object_get(root, "accelerator"), "kind", "?"));
	p->num_ranks = (int)json_integer_value(json_object_get(root, "num_ranks"));
	p->num_nodes = (int)json_integer_value(json_object_get(root, "num_nodes"));
	return 0;
}

int cmp_point_load(struct cmp_point *p, const char *path, char *why, size_t len)
{
	return cmp_point_load_at(p, path, false, why, len);
}

/* ---- a side ----------------------------------------------------------------------------- */

void cmp_side_free(struct cmp_side *s)
{
	for (int i = 0; i < s->npoints; i++)
		cmp_point_free(&s->points[i]);
	free(s->points);
	json_decref(s->fingerprint);
	s->points = NULL;
	s->npoints = 0;
	s->fingerprint = NULL;
}

/* nofollow: path is a file inside a folder we read (a sweep's point), not the user's. */
static int cmp_side_add(struct cmp_side *s, const char *path, bool nofollow, const char *label,
			char *why, size_t len)
{
	struct cmp_point *p = realloc(s->points, (size_t)(s->npoints + 1) * sizeof(*p));
	int rc;

	if (!p)
		return -ENOMEM;
	s->points = p;
	rc = cmp_point_load_at(&p[s->npoints], path, nofollow, why, len);
	if (rc < 0)
		return rc;
	snprintf(p[s->npoints].label, sizeof(p->label), "%s", label);
	s->npoints++;
	return 0;
}

/* A sweep folder: sweep_results.json lists the points; those not done are left out. */
static int cmp_side_sweep(struct cmp_side *s, const char *dir, const char *results, char *why,
			  size_t len)
{
	char path[PATH_MAX + 600];
	json_t *root, *points, *pt;
	size_t i;
	int rc;

	rc = cmp_load_json(results, false, &root, why, len);
	if (rc < 0)
		return rc;
	points = json_object_get(root, "points");
	if (!json_is_array(points)) {
		snprintf(why, len, "'%s' is corrupt: no \"points\" array", results);
		json_decref(root);
		return -FB_EFORMAT;
	}
	json_array_foreach(points, i, pt)
	{
		const char *sub = summary_str(pt, "dir", NULL),
			   *label = summary_str(pt, "label", "");
		char bad[CMP_REASON_LEN];
		if (safe_point_dir_check(sub, i, bad, sizeof(bad)) < 0) {
			snprintf(why, len, "'%s' is corrupt: %s", results, bad);
			rc = -FB_EFORMAT;
			break;
		}
		if (!json_is_true(json_object_get(pt, "done"))) {
			if (s->nwarnings < CMP_MAX_REASONS)
				snprintf(s->warnings[s->nwarnings++], CMP_REASON_LEN,
					 "%s: point %zu (%s) did not finish; left out", dir, i + 1,
					 label);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s/summary.json", dir, sub);
		rc = cmp_side_add(s, path, true, label, why, len);
		if (rc < 0)
			break;
	}
	json_decref(root);
	return rc;
}

#define CMP_MAX_DEPTH 4 /* folders below a folder of runs that are searched */

struct cmp_walk {
	struct cmp_side *s;
	char *why;
	size_t len;
};

static int cmp_side_walk_one(void *ctx, const char *path)
{
	struct cmp_walk *w = ctx;

	return cmp_side_add(w->s, path, true, "", w->why, w->len);
}

/* Every summary.json below dir. */
static int cmp_side_walk(struct cmp_side *s, const char *dir, char *why, size_t len)
{
	struct cmp_walk w = {s, why, len};

	return util_walk_files(dir, "summary.json", CMP_MAX_DEPTH, cmp_side_walk_one, &w);
}

static int cmp_by_start(const void *a, const void *b)
{
	const struct cmp_point *x = a, *y = b;
	int c = strcmp(x->start, y->start);

	return c ? c : strcmp(x->path, y->path);
}

bool cmp_same_run(const struct cmp_point *a, const struct cmp_point *b)
{
	return strcmp(a->run_id, b->run_id) == 0 && strcmp(a->start, b->start) == 0 &&
	       strcmp(a->config_hash, b->config_hash) == 0;
}

/* A copy of a run (a saved baseline below a results folder) counts once. */
static void cmp_side_dedupe(struct cmp_side *s)
{
	int n = 0;

	for (int i = 0; i < s->npoints; i++) {
		bool dup = false;
		for (int j = 0; j < n && !dup; j++)
			dup = cmp_same_run(&s->points[j], &s->points[i]);
		if (dup)
			cmp_point_free(&s->points[i]);
		else
			s->points[n++] = s->points[i];
	}
	s->npoints = n;
}

/* Runs of one config hash form a group led by the first of them (in start order). */
static void cmp_side_group(struct cmp_side *s)
{
	if (!s->sweep && s->npoints > 1)
		qsort(s->points, (size_t)s->npoints, sizeof(s->points[0]), cmp_by_start);
	for (int i = 0; i < s->npoints; i++) {
		struct cmp_point *p = &s->points[i];
		p->group = i;
		p->nruns = 0;
		for (int j = 0; j < i && !s->sweep; j++)
			if (s->points[j].group == j &&
			    strcmp(s->points[j].config_hash, p->config_hash) == 0) {
				p->group = j;
				break;
			}
		s->points[p->group].nruns++;
	}
}

int cmp_side_load(struct cmp_side *s, const char *path, const char *what, char *why, size_t len)
{
	char file[PATH_MAX + 32], msg[CMP_REASON_LEN + 64];
	struct stat sb;
	int rc;

	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s", path);
	if (stat(path, &sb) < 0) {
		rc = -errno;
		snprintf(why, len, "cannot read the %s '%s': %s", what, path, strerror(errno));
		return rc;
	}
	if (S_ISDIR(sb.st_mode)) {
		snprintf(file, sizeof(file), "%s/sweep_results.json", path);
		if (cmp_is_file(file)) {
			s->kind = "sweep";
			s->sweep = true;
			rc = cmp_side_sweep(s, path, file, msg, sizeof(msg));
		} else {
			snprintf(file, sizeof(file), "%s/summary.json", path);
			s->kind = "run";
			if (cmp_is_file(file)) {
				rc = cmp_side_add(s, file, true, "", msg, sizeof(msg));
			} else {
				/* A folder of runs: repeated runs, or a baseline saved from them.
				 */
				s->kind = "runs";
				rc = cmp_side_walk(s, path, msg, sizeof(msg));
				if (rc == 0 && s->npoints == 0) {
					snprintf(
					    msg, sizeof(msg),
					    "'%s' holds neither summary.json (a run) nor "
					    "sweep_results.json (a finished sweep), nor runs below "
					    "it",
					    path);
					rc = -ENOENT;
				}
			}
		}
		snprintf(file, sizeof(file), "%s/fingerprint.json", path);
		if (rc == 0 && cmp_is_file(file))
			rc = cmp_load_json(file, true, &s->fingerprint, msg, sizeof(msg));
	} else {
		const char *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		if (strcmp(base, "sweep_results.json") == 0) {
			char dir[PATH_MAX];
			snprintf(dir, sizeof(dir), "%.*s", (int)(base - path), path);
			if (!dir[0])
				snprintf(dir, sizeof(dir), ".");
			s->kind = "sweep";
			s->sweep = true;
			rc = cmp_side_sweep(s, dir, path, msg, sizeof(msg));
		} else {
			s->kind = "summary";
			rc = cmp_side_add(s, path, false, "", msg, sizeof(msg));
		}
	}
	if (rc == 0 && s->npoints == 0) {
		snprintf(msg, sizeof(msg), "'%s' has no finished point", path);
		rc = -FB_EFORMAT;
	}
	if (rc == 0 && !s->sweep)
		cmp_side_dedupe(s);
	if (rc == 0)
		cmp_side_group(s);
	if (rc < 0) {
		snprintf(why, len, "%s: %s", what, msg);
		cmp_side_free(s);
	}
	return rc;
}

/* ---- pairing and checks ------------------------------------------------------------------ */

void cmp_match_free(struct cmp_match *m)
{
	free(m->pairs);
	m->pairs = NULL;
	m->npairs = 0;
}

static void cmp_add(char (*list)[CMP_REASON_LEN], int *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Adds a line unless it is there already (a rank difference repeats on every sweep point). */
static void cmp_add(char (*list)[CMP_REASON_LEN], int *n, const char *fmt, ...)
{
	char line[CMP_REASON_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	for (int i = 0; i < *n; i++)
		if (strcmp(list[i], line) == 0)
			return;
	if (*n < CMP_MAX_REASONS)
		snprintf(list[(*n)++], CMP_REASON_LEN, "%s", line);
}

static void cmp_value_text(json_t *v, char *buf, size_t len)
{
	char *s;

	if (!v) {
		snprintf(buf, len, "(absent)");
		return;
	}
	if (json_is_string(v)) {
		snprintf(buf, len, "%s", json_string_value(v));
		return;
	}
	s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(12));
	snprintf(buf, len, "%s", s ? s : "?");
	free(s);
}

/* Keys of the effective configs that differ, as "train.epochs 2 vs 3, ...". hashed selects
 * the keys that make up config_hash (true) or those left out of it (false: output settings
 * and the faulty back-end's test knobs). */
static void cmp_config_diff(json_t *a, json_t *b, bool hashed, char *out, size_t len)
{
	const char *sec, *key;
	json_t *sa, *va;
	size_t used = 0;
	int n = 0;

	out[0] = '\0';
	for (int pass = 0; pass < 2; pass++) {
		json_t *x = pass ? b : a, *y = pass ? a : b;
		json_object_foreach(x, sec, sa)
		{
			if (strcmp(sec, "sweep") == 0 || !json_is_object(sa))
				continue;
			json_object_foreach(sa, key, va)
			{
				const struct cfg_key *k = cfg_find(sec, key);
				json_t *vb = json_object_get(json_object_get(y, sec), key);
				bool in_hash =
				    strcmp(sec, "output") != 0 && !(k && (k->flags & CFG_F_NOHASH));
				char ta[128], tb[128];

				if (in_hash != hashed || (vb && json_equal(va, vb)) ||
				    (pass && vb)) /* pass 2 only adds keys absent from a */
					continue;
				cmp_value_text(pass ? vb : va, ta, sizeof(ta));
				cmp_value_text(pass ? va : vb, tb, sizeof(tb));
				if (used < len)
					used += (size_t)snprintf(out + used, len - used,
								 "%s%s.%s %s vs %s", n ? ", " : "",
								 sec, key, ta, tb);
				n++;
			}
		}
	}
	if (hashed && n == 0)
		snprintf(out, len, "no key differs (another feedbench version hashes differently)");
}

static const char *cmp_point_name(const struct cmp_point *p, char *buf, size_t len)
{
	if (p->label[0])
		snprintf(buf, len, "point %s: ", p->label);
	else
		snprintf(buf, len, "run %s: ", p->run_id);
	return buf;
}

static void cmp_check_pair(const struct cmp_point *b, const struct cmp_point *c, bool sweep,
			   bool allow_cached, struct cmp_match *m)
{
	char diff[CMP_REASON_LEN - 96], who[600];

	if (sweep)
		cmp_point_name(c, who, sizeof(who));
	else
		who[0] = '\0';
	if (strcmp(b->config_hash, c->config_hash) != 0) {
		cmp_config_diff(json_object_get(b->root, "config"),
				json_object_get(c->root, "config"), true, diff, sizeof(diff));
		cmp_add(m->reasons, &m->nreasons,
			"%sconfig differs (config_hash %.12s vs %.12s): %s", who, b->config_hash,
			c->config_hash, diff);
	}
	cmp_config_diff(json_object_get(b->root, "config"), json_object_get(c->root, "config"),
			false, diff, sizeof(diff));
	if (diff[0])
		cmp_add(m->notes, &m->nnotes, "%snot in the config hash, yet different: %s", who,
			diff);
	if (b->num_ranks != c->num_ranks)
		cmp_add(m->reasons, &m->nreasons, "ranks differ: %d vs %d", b->num_ranks,
			c->num_ranks);
	if (b->num_nodes != c->num_nodes)
		cmp_add(m->reasons, &m->nreasons, "nodes differ: %d vs %d", b->num_nodes,
			c->num_nodes);
	if (strcmp(b->fs_type, c->fs_type) != 0)
		cmp_add(m->reasons, &m->nreasons, "file system differs: %s vs %s", b->fs_type,
			c->fs_type);
	if (strcmp(b->accel, c->accel) != 0)
		cmp_add(m->reasons, &m->nreasons, "accelerator differs: %s vs %s", b->accel,
			c->accel);
	for (int side = 0; side < 2; side++) {
		const struct cmp_point *p = side ? c : b;
		if (p->cache_resident && allow_cached)
			cmp_add(
			    m->notes, &m->nnotes,
			    "the %s is cache-resident (compared as --allow-cached asks): it may "
			    "measure memory, not storage",
			    side ? "current" : "baseline");
		else if (p->cache_resident)
			cmp_add(
			    m->reasons, &m->nreasons,
			    "cache-resident: the %s's dataset fits in RAM and neither direct I/O "
			    "nor page-cache eviction was on, so it may measure memory, not "
			    "storage ('%s'); --allow-cached compares it anyway",
			    side ? "current" : "baseline", p->path);
	}
}

static int cmp_pair_add(struct cmp_match *m, int b, int c)
{
	struct cmp_pair *p = realloc(m->pairs, (size_t)(m->npairs + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	m->pairs = p;
	p[m->npairs].b = b;
	p[m->npairs].c = c;
	m->npairs++;
	return 0;
}

static int cmp_ngroups(const struct cmp_side *s)
{
	int n = 0;

	for (int i = 0; i < s->npoints; i++)
		n += s->points[i].group == i;
	return n;
}

/* Index of the first run of a group of s whose label (by_label) or config hash equals that of p;
 * -1. */
static int cmp_find(const struct cmp_side *s, const struct cmp_point *p, bool by_label)
{
	for (int i = 0; i < s->npoints; i++)
		if (s->points[i].group == i &&
		    (by_label ? strcmp(s->points[i].label, p->label) == 0
			      : strcmp(s->points[i].config_hash, p->config_hash) == 0))
			return i;
	return -1;
}

int cmp_match_sides(const struct cmp_side *base, const struct cmp_side *cur, bool allow_cached,
		    struct cmp_match *m)
{
	bool by_label = base->sweep && cur->sweep;
	char who[600];

	memset(m, 0, sizeof(*m));
	if (!by_label && cmp_ngroups(base) == 1 && cmp_ngroups(cur) == 1) {
		/* Two runs: always a pair; whatever differs is a reason. */
		if (cmp_pair_add(m, 0, 0) < 0)
			return -ENOMEM;
	} else {
		for (int c = 0; c < cur->npoints; c++) {
			if (cur->points[c].group != c)
				continue;
			int b = cmp_find(base, &cur->points[c], by_label);
			if (b < 0) {
				cmp_add(m->notes, &m->nnotes, "%sonly in the current result",
					cmp_point_name(&cur->points[c], who, sizeof(who)));
				continue;
			}
			if (cmp_pair_add(m, b, c) < 0)
				return -ENOMEM;
		}
		for (int b = 0; b < base->npoints; b++)
			if (base->points[b].group == b &&
			    cmp_find(cur, &base->points[b], by_label) < 0)
				cmp_add(m->notes, &m->nnotes, "%sonly in the baseline",
					cmp_point_name(&base->points[b], who, sizeof(who)));
	}
	if (m->npairs == 0) {
		if (by_label)
			cmp_add(m->reasons, &m->nreasons,
				"no swept point is in both sweeps (their [sweep] values differ)");
		else
			cmp_add(m->reasons, &m->nreasons,
				"no point of one side has the config of the other (config_hash "
				"%.12s vs %.12s)",
				base->points[0].config_hash, cur->points[0].config_hash);
		return 0;
	}
	/* Every run of a group against the other side's first run: repeated runs share a config
	 * hash, yet may differ in ranks, file system or cache state. */
	for (int i = 0; i < m->npairs; i++) {
		int b0 = m->pairs[i].b, c0 = m->pairs[i].c;
		for (int b = b0; b < base->npoints; b++)
			if (base->points[b].group == b0)
				cmp_check_pair(&base->points[b], &cur->points[c0], by_label,
					       allow_cached, m);
		for (int c = c0 + 1; c < cur->npoints; c++)
			if (cur->points[c].group == c0)
				cmp_check_pair(&base->points[b0], &cur->points[c], by_label,
					       allow_cached, m);
	}
	return 0;
}

/* ---- the values a comparison tests -------------------------------------------------- */

/* The values a row tests on one side: the repetitions of its run, or with several runs of the
 * config on either side, the mean of each run (NAN repetitions left out). Returns the count. */
int cmp_side_values(const struct cmp_side *s, int first, enum sweep_metric m, bool by_runs,
		    double *out)
{
	const struct cmp_point *p0 = &s->points[first];
	int n = 0;

	if (!by_runs) {
		for (int i = 0; i < p0->nreps && n < CMP_MAX_REPS; i++)
			out[n++] = p0->v[i][m];
		return n;
	}
	for (int j = first; j < s->npoints && n < CMP_MAX_REPS; j++) {
		const struct cmp_point *p = &s->points[j];
		double sum = 0;
		int k = 0;

		if (p->group != first)
			continue;
		for (int i = 0; i < p->nreps; i++)
			if (!isnan(p->v[i][m])) {
				sum += p->v[i][m];
				k++;
			}
		out[n++] = k ? sum / k : NAN;
	}
	return n;
}

bool cmp_pair_by_runs(const struct cmp_report *r, int pair)
{
	return r->base.points[r->match.pairs[pair].b].nruns > 1 ||
	       r->cur.points[r->match.pairs[pair].c].nruns > 1;
}
