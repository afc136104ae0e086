/* The findings and summary.json readers shared by the rule checker's files
 * (bench/mlperf_check.h). */
#include "mlperf_check.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void mck_finding(struct mck *c, enum mck_level lv, const char *rule, const char *fmt, ...)
{
	static const char *const names[] = {"PASS", "NOTE", "OPEN", "INVALID"};
	char why[1024];
	va_list ap;
	size_t used = strlen(c->reasons);

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	printf("%-7s %s: %s\n", names[lv], rule, why);
	if ((int)lv > c->worst)
		c->worst = lv;
	if (lv >= MCK_OPEN && used < sizeof(c->reasons))
		snprintf(c->reasons + used, sizeof(c->reasons) - used, "%s%s %s (%s)",
			 used ? "; " : "", names[lv], rule, why);
}

double mck_num(json_t *s, const char *a, const char *b, const char *k)
{
	json_t *v = json_object_get(s, a);

	if (b)
		v = json_object_get(v, b);
	if (k)
		v = json_object_get(v, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *mck_str(json_t *s, const char *a, const char *b, const char *k)
{
	json_t *v = json_object_get(s, a);

	if (b)
		v = json_object_get(v, b);
	if (k)
		v = json_object_get(v, k);
	return json_is_string(v) ? json_string_value(v) : "";
}

const char *mck_base(const char *dir)
{
	const char *p = strrchr(dir, '/');

	return p && p[1] ? p + 1 : dir;
}

/* ISO-8601 UTC "2026-12-02T12:42:58Z" to seconds; NAN when unreadable. */
double mck_iso_seconds(const char *t)
{
	struct tm tm = {0};
	const char *end = strptime(t, "%Y-%m-%dT%H:%M:%SZ", &tm);

	return end && !*end ? (double)timegm(&tm) : NAN;
}
