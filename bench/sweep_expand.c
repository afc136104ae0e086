/* [sweep] value lists: "1, 2, 4", ranges "1..16*2", "1..4", "1..16+4", "64KiB..1MiB*4". */
#include "sweep.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static bool sweep_rangeable(const struct cfg_key *k)
{
	return k->type == CFG_INT || k->type == CFG_SIZE;
}

static int sweep_parse_num(const struct cfg_key *k, const char *text, int64_t *v, char *why,
			   size_t len)
{
	if (k->type == CFG_SIZE) {
		uint64_t u;
		int rc = cfg_parse_size(text, &u, why, len);

		if (rc < 0)
			return rc;
		if (u > INT64_MAX) {
			snprintf(why, len, "'%s' is too large for a range", text);
			return -FB_ECONFIG;
		}
		*v = (int64_t)u;
		return 0;
	}
	return cfg_parse_int(text, v, why, len);
}

/* Sizes print with the largest binary unit that divides them, the way people write them. */
static void sweep_format_num(const struct cfg_key *k, int64_t v, char *buf, size_t len)
{
	static const char *const units[] = {"GiB", "MiB", "KiB"};
	static const int shifts[] = {30, 20, 10};

	if (k->type == CFG_SIZE && v > 0)
		for (int i = 0; i < 3; i++)
			if (v % ((int64_t)1 << shifts[i]) == 0) {
				snprintf(buf, len, "%" PRId64 "%s", v >> shifts[i], units[i]);
				return;
			}
	snprintf(buf, len, "%" PRId64, v);
}

char *sweep_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int sweep_add(char (*out)[SWEEP_VALUE_MAX], int n, int max, const char *v, bool dups_ok,
		     char *why, size_t len)
{
	if (n >= max) {
		snprintf(why, len, "more than %d values", max);
		return -FB_ECONFIG;
	}
	if (strlen(v) >= SWEEP_VALUE_MAX) {
		snprintf(why, len, "value '%.32s...' is longer than %d characters", v,
			 SWEEP_VALUE_MAX - 1);
		return -FB_ECONFIG;
	}
	if (out) {
		for (int i = 0; i < n && !dups_ok; i++)
			if (strcmp(out[i], v) == 0) {
				snprintf(why, len, "value '%s' is listed twice", v);
				return -FB_ECONFIG;
			}
		snprintf(out[n], SWEEP_VALUE_MAX, "%s", v);
	}
	return n + 1;
}

/* "lo..hi", "lo..hi*f" (geometric), "lo..hi+s" (arithmetic). */
static int sweep_expand_range(char *item, const struct cfg_key *k, char (*out)[SWEEP_VALUE_MAX],
			      int n, int max, bool dups_ok, char *why, size_t len)
{
	char *dots = strstr(item, ".."), *hi_text = dots + 2, *op, vbuf[64];
	int64_t lo, hi, step = 1;
	bool geometric = false;
	char sub[256];
	int rc;

	if (!sweep_rangeable(k)) {
		snprintf(why, len, "range '%s' needs an integer or size key", item);
		return -FB_ECONFIG;
	}
	*dots = '\0';
	op = strpbrk(hi_text, "*+");
	if (op) {
		geometric = *op == '*';
		*op = '\0';
		if (geometric)
			rc = cfg_parse_int(op + 1, &step, sub, sizeof(sub));
		else
			rc = sweep_parse_num(k, op + 1, &step, sub, sizeof(sub));
		if (rc < 0) {
			snprintf(why, len, "range step: %s", sub);
			return rc;
		}
	}
	if ((rc = sweep_parse_num(k, item, &lo, sub, sizeof(sub))) < 0 ||
	    (rc = sweep_parse_num(k, hi_text, &hi, sub, sizeof(sub))) < 0) {
		snprintf(why, len, "range: %s", sub);
		return rc;
	}
	if (lo > hi) {
		snprintf(why, len, "range %s..%s runs backwards", sweep_trim(item),
			 sweep_trim(hi_text));
		return -FB_ECONFIG;
	}
	if (geometric && (step < 2 || lo < 1)) {
		snprintf(why, len, "a geometric range needs a start >= 1 and a factor >= 2");
		return -FB_ECONFIG;
	}
	if (!geometric && step < 1) {
		snprintf(why, len, "a range step must be at least 1");
		return -FB_ECONFIG;
	}
	for (int64_t v = lo; v <= hi;) {
		sweep_format_num(k, v, vbuf, sizeof(vbuf));
		if ((n = sweep_add(out, n, max, vbuf, dups_ok, why, len)) < 0)
			return n;
		if (geometric ? v > INT64_MAX / step : v > INT64_MAX - step)
			break;
		v = geometric ? v * step : v + step;
	}
	return n;
}

int sweep_expand_list(const char *text, const struct cfg_key *k, char (*out)[SWEEP_VALUE_MAX],
		      int max, bool dups_ok, char *why, size_t len)
{
	char *copy = strdup(text), *save = NULL, *item;
	int n = 0;

	if (!copy) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	/* strtok_r would skip empty items; "1,,2" is a typo worth naming. */
	for (item = copy;; item = save + 1) {
		save = strchr(item, ',');
		if (save)
			*save = '\0';
		char *v = sweep_trim(item);
		if (*v == '\0') {
			snprintf(why, len, "empty value in the list");
			n = -FB_ECONFIG;
			break;
		}
		if (strstr(v, ".."))
			n = sweep_expand_range(v, k, out, n, max, dups_ok, why, len);
		else
			n = sweep_add(out, n, max, v, dups_ok, why, len);
		if (n < 0 || !save)
			break;
	}
	free(copy);
	return n;
}

int sweep_expand(const char *text, const struct cfg_key *k, char (*out)[SWEEP_VALUE_MAX], int max,
		 char *why, size_t len)
{
	return sweep_expand_list(text, k, out, max, false, why, len);
}
