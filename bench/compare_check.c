/* What compare, baseline and history accept from a summary.json: a schema this feedbench knows,
 * and numbers that can be true (see compare.h, cmp_summary_check). A CI gate that passes
 * "bandwidth 1.7e308 MiB/s" or "AU 500 %" says nothing; such a file is refused, naming the
 * field, before any statistics.
 */
#include "compare.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "errors.h"

#define CHK_BW_MAX    1e9  /* MiB/s: about 1 PiB/s, beyond any storage system */
#define CHK_RATE_MAX  1e12 /* operations, samples, files per second */
#define CHK_NUM_MAX   2e19 /* any count (bytes are 64-bit counters: < 1.85e19) */
#define CHK_SLACK_REL 1e-3 /* stated figures against bytes / seconds (rounding) */

static const int chk_schemas[] = {1}; /* summary.json schemas this feedbench reads */

struct chk {
	const char *path;
	char *why;
	size_t len;
};

static int chk_fail(const struct chk *c, const char *field, const char *fmt, double v)
{
	char num[64];

	snprintf(num, sizeof(num), fmt, v);
	snprintf(c->why, c->len, "cannot compare '%s': %s = %s is impossible", c->path, field, num);
	return -FB_EIMPOSSIBLE;
}

static bool chk_ends(const char *key, const char *suffix)
{
	size_t k = strlen(key), s = strlen(suffix);

	return k >= s && strcmp(key + k - s, suffix) == 0;
}

/* Every number below a summary's measured figures: finite, not negative, a percentage at most
 * 100, a rate at most CHK_RATE_MAX (bandwidth CHK_BW_MAX), any figure at most CHK_NUM_MAX. */
static int chk_numbers(const struct chk *c, json_t *v, const char *field, const char *key)
{
	char sub[256];
	const char *k;
	size_t i;
	json_t *e;

	if (json_is_object(v)) {
		json_object_foreach(v, k, e)
		{
			snprintf(sub, sizeof(sub), "%s.%s", field, k);
			int rc = chk_numbers(c, e, sub, k);
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, e)
		{
			snprintf(sub, sizeof(sub), "%s[%zu]", field, i);
			int rc = chk_numbers(c, e, sub, key);
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	if (!json_is_number(v))
		return 0;
	double x = json_number_value(v);
	if (!isfinite(x) || x < 0 || x > CHK_NUM_MAX)
		return chk_fail(c, field, "%g", x);
	if (strstr(key, "percentage") && x > 100)
		return chk_fail(c, field, "%g %% (a percentage is 0-100)", x);
	if (strstr(key, "MiB_per_second") || strstr(key, "MB_per_second")) {
		if (x > CHK_BW_MAX)
			return chk_fail(c, field, "%g MiB/s", x);
	} else if ((chk_ends(key, "per_second") || strcmp(key, "iops") == 0) && x > CHK_RATE_MAX) {
		return chk_fail(c, field, "%g per second", x);
	}
	return 0;
}

/* A stated bandwidth (or IOPS) against the bytes (operations) and seconds it was computed
 * from, where the object holds all three. */
static int chk_consistent(const struct chk *c, json_t *o, const char *field, const char *rate,
			  const char *count, const char *secs, double unit)
{
	json_t *r = json_object_get(o, rate), *n = json_object_get(o, count),
	       *t = json_object_get(o, secs);
	char name[256];

	if (!json_is_number(r) || !json_is_number(n) || !json_is_number(t))
		return 0;
	double stated = json_number_value(r), wall = json_number_value(t);
	double want = wall > 0 ? json_number_value(n) / wall / unit : 0;
	if (fabs(stated - want) <= CHK_SLACK_REL * fmax(stated, want) + 1e-6)
		return 0;
	snprintf(name, sizeof(name), "%s.%s", field, rate);
	char what[160];
	snprintf(what, sizeof(what), "%%g (%s / %s say %g)", count, secs, want);
	return chk_fail(c, name, what, stated);
}

static int chk_schema(const struct chk *c, json_t *root)
{
	json_t *s = json_object_get(root, "schema");

	if (!s) {
		snprintf(c->why, c->len,
			 "cannot compare '%s': no \"schema\" (not a feedbench summary.json)",
			 c->path);
		return -FB_EIMPOSSIBLE;
	}
	if (!json_is_integer(s)) {
		snprintf(c->why, c->len, "cannot compare '%s': \"schema\" is not a whole number",
			 c->path);
		return -FB_EIMPOSSIBLE;
	}
	for (size_t i = 0; i < sizeof(chk_schemas) / sizeof(chk_schemas[0]); i++)
		if (json_integer_value(s) == chk_schemas[i])
			return 0;
	snprintf(c->why, c->len,
		 "cannot compare '%s': schema %lld is not one this feedbench reads (1); a newer "
		 "feedbench wrote it?",
		 c->path, (long long)json_integer_value(s));
	return -FB_EIMPOSSIBLE;
}

int cmp_summary_check(json_t *root, const char *path, char *why, size_t len)
{
	static const char *const measured[] = {"repetitions", "epochs", "metric", "ranks",
					       "repetition_stats"};
	struct chk c = {path, why, len};
	int rc = chk_schema(&c, root);

	for (size_t i = 0; rc == 0 && i < sizeof(measured) / sizeof(measured[0]); i++)
		rc = chk_numbers(&c, json_object_get(root, measured[i]), measured[i], measured[i]);
	for (size_t i = 0; rc == 0 && i < 2; i++) {
		json_t *a = json_object_get(root, measured[i]), *o;
		size_t k;
		char field[64];
		json_array_foreach(a, k, o)
		{
			snprintf(field, sizeof(field), "%s[%zu]", measured[i], k);
			rc = chk_consistent(&c, o, field, "bandwidth_MiB_per_second", "bytes_read",
					    "wall_seconds", 1048576.0);
			if (rc == 0)
				rc = chk_consistent(&c, o, field, "iops", "read_ops",
						    "wall_seconds", 1.0);
			if (rc < 0)
				break;
		}
	}
	if (rc == 0)
		rc = chk_consistent(&c, json_object_get(root, "metric"), "metric",
				    "train_bandwidth_MiB_per_second", "train_bytes_read",
				    "train_wall_seconds", 1048576.0);
	return rc;
}
