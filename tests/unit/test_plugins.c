/* One list per plug-in kind: the registries (formats, storage back-ends, accelerators, workloads),
 * the enums of config.h, the choices of their keys, `feedbench keys` and the config parser agree.
 *
 * Each kind's names are compared in order: the registry's names against the key's choices (for
 * [train] accelerator after "auto"), the enum value of each name against its registry index, the
 * choices cell of `feedbench keys`, and what the parser accepts: every registered name, stored
 * as its index, and nothing else (an unknown name is refused, the message listing exactly the
 * registered names). tests/configs/cli.sh checks that `feedbench list` shows the same names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench/compute/compute.h"
#include "bench/config.h"
#include "bench/storage/storage.h"
#include "formats/format.h"
#include "workloads/workload.h"

#define MAX_NAMES 64

/* One kind: its key, its registered names (in registry order) and the first choice that is a
 * plug-in (1 for [train] accelerator, whose choice 0 is "auto"). */
struct kind {
	const char *section, *key;
	const char *names[MAX_NAMES];
	size_t n;
	size_t first;
};

static void kind_names(struct kind *k, size_t which)
{
	k->n = 0;
	switch (which) {
	case 0:
		*k = (struct kind){"dataset", "format", {0}, 0, 0};
		for (size_t i = 0; format_registry[i]; i++)
			k->names[k->n++] = format_registry[i]->name;
		break;
	case 1:
		*k = (struct kind){"storage", "backend", {0}, 0, 0};
		for (size_t i = 0; storage_registry[i]; i++)
			k->names[k->n++] = storage_registry[i]->name;
		break;
	case 2:
		*k = (struct kind){"train", "accelerator", {0}, 0, 1};
		for (size_t i = 0; compute_registry[i].name; i++)
			k->names[k->n++] = compute_registry[i].name;
		break;
	default:
		*k = (struct kind){"workload", "type", {0}, 0, 0};
		for (size_t i = 0; workload_registry[i]; i++)
			k->names[k->n++] = workload_registry[i]->name;
		break;
	}
}
#define NKINDS 4

/* "a, b, c": the names as the parser's message and `feedbench keys` list them. */
static void joined(const struct kind *k, const char *lead, char *buf, size_t len)
{
	size_t at = (size_t)snprintf(buf, len, "%s", lead);

	for (size_t i = 0; i < k->n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "", k->names[i]);
}

/* The key's choices are the registered names, in order, and no more. */
static void test_choices_are_the_registry(void **state)
{
	(void)state;
	for (size_t w = 0; w < NKINDS; w++) {
		struct kind k;
		kind_names(&k, w);
		const struct cfg_key *key = cfg_find(k.section, k.key);
		assert_non_null(key);
		assert_non_null(key->choices);
		size_t n = 0;
		while (key->choices[n])
			n++;
		if (n != k.first + k.n)
			fail_msg("[%s] %s has %zu choices, the registry %zu plug-ins (+%zu)",
				 k.section, k.key, n, k.n, k.first);
		for (size_t i = 0; i < k.n; i++)
			if (strcmp(key->choices[k.first + i], k.names[i]) != 0)
				fail_msg("[%s] %s: choice %zu is '%s', registry entry %zu is '%s'",
					 k.section, k.key, k.first + i, key->choices[k.first + i],
					 i, k.names[i]);
	}
}

/* BACKEND_<NAME> and ACCEL_<NAME> name the plug-in of that name. */
static void test_enums_are_the_registry(void **state)
{
	static const struct {
		int value;
		const char *name;
	} backends[] =
	    {
#define BACKEND_ROW(name, NAME) {BACKEND_##NAME, #name},
		FEEDBENCH_BACKENDS(BACKEND_ROW)
#undef BACKEND_ROW
	    },
	  accels[] = {
#define ACCEL_ROW(name, NAME) {ACCEL_##NAME, #name},
	      FEEDBENCH_ACCELERATORS(ACCEL_ROW)
#undef ACCEL_ROW
	  };
	size_t nb = sizeof(backends) / sizeof(backends[0]), na = sizeof(accels) / sizeof(accels[0]);

	(void)state;
	assert_int_equal(BACKEND_COUNT, nb);
	assert_null(storage_registry[nb]);
	for (size_t i = 0; i < nb; i++) {
		assert_non_null(storage_registry[backends[i].value]);
		assert_string_equal(storage_registry[backends[i].value]->name, backends[i].name);
		assert_string_equal(cfg_choice_name("storage", "backend", backends[i].value),
				    backends[i].name);
	}
	assert_int_equal(ACCEL_AUTO, 0);
	assert_int_equal(ACCEL_COUNT, na + 1);
	assert_null(compute_registry[na].name);
	for (size_t i = 0; i < na; i++) {
		assert_string_equal(compute_registry[accels[i].value - 1].name, accels[i].name);
		assert_string_equal(cfg_choice_name("train", "accelerator", accels[i].value),
				    accels[i].name);
		/* Built, or listed with the reason it is not (feedbench list shows it). */
		if (!compute_registry[accels[i].value - 1].ops) {
			const char *why = compute_registry[accels[i].value - 1].not_built;
			assert_true(why && why[0]);
		}
	}
}

/* `feedbench keys`: the choices cell of each plug-in key is the registry's names. */
static void test_keys_show_the_registry(void **state)
{
	char *buf = NULL, want[1024], row[1200];
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(m);
	cfg_write_keys_markdown(m);
	fclose(m);
	for (size_t w = 0; w < NKINDS; w++) {
		struct kind k;
		kind_names(&k, w);
		joined(&k, k.first ? "auto" : "", want, sizeof(want));
		snprintf(row, sizeof(row), "| %s |", want);
		char head[160];
		snprintf(head, sizeof(head), "\n| `%s` |", k.key);
		/* The key's own section: the first row of that name after its heading. */
		char sec[160];
		snprintf(sec, sizeof(sec), "\n## [%s]\n", k.section);
		const char *s = strstr(buf, sec);
		assert_non_null(s);
		const char *r = strstr(s, head);
		assert_non_null(r);
		const char *eol = strchr(r + 1, '\n');
		if (!strstr(r, row) || (eol && strstr(r, row) > eol))
			fail_msg("feedbench keys: [%s] %s does not list '%s': %.*s", k.section,
				 k.key, want, eol ? (int)(eol - r - 1) : 200, r + 1);
	}
	free(buf);
}

/* The parser takes every registered name (stored as its index or the name itself) and refuses
 * any other, listing exactly the registered names. */
static void test_config_accepts_exactly_the_registry(void **state)
{
	struct config *cfg = malloc(sizeof(*cfg));
	struct fb_errbuf err;
	char text[256], want[1024];

	(void)state;
	assert_non_null(cfg);
	for (size_t w = 0; w < NKINDS; w++) {
		struct kind k;
		kind_names(&k, w);
		const struct cfg_key *key = cfg_find(k.section, k.key);
		for (size_t i = 0; i < k.n; i++) {
			int n = snprintf(text, sizeof(text), "[%s]\n%s = %s\n", k.section, k.key,
					 k.names[i]);
			fb_errbuf_init(&err);
			cfg_defaults(cfg);
			if (cfg_parse_text(cfg, text, (size_t)n, "t.ini", &err) != 0)
				fail_msg("[%s] %s = %s refused: %s", k.section, k.key, k.names[i],
					 err.msg);
			const char *field = (const char *)cfg + key->offset;
			if (key->type == CFG_CHOICE)
				assert_int_equal(*(const int *)field, (int)(k.first + i));
			else
				assert_string_equal(field, k.names[i]);
		}
		int n = snprintf(text, sizeof(text), "[%s]\n%s = nosuchplugin\n", k.section, k.key);
		fb_errbuf_init(&err);
		cfg_defaults(cfg);
		assert_int_equal(cfg_parse_text(cfg, text, (size_t)n, "t.ini", &err), -FB_ECONFIG);
		joined(&k, k.first ? "auto" : "", want, sizeof(want));
		char tail[1100];
		snprintf(tail, sizeof(tail), "'nosuchplugin' is not one of: %s\n", want);
		snprintf(want, sizeof(want), "%s", err.msg);
		strncat(want, "\n", sizeof(want) - strlen(want) - 1);
		if (!strstr(want, tail))
			fail_msg("[%s] %s: message '%s' does not list exactly the registry ('%s')",
				 k.section, k.key, err.msg, tail);
	}
	free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_choices_are_the_registry),
	    cmocka_unit_test(test_enums_are_the_registry),
	    cmocka_unit_test(test_keys_show_the_registry),
	    cmocka_unit_test(test_config_accepts_exactly_the_registry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
