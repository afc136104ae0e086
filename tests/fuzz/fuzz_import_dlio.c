/* `feedbench import-dlio FILE.yaml -o OUT.ini` on hostile YAML (bench/import_dlio.c): the
 * bounds on size, nesting and values, libyaml's parser and document, the mapping of every key.
 *
 * Input: the YAML file. Invariants on every input: import-dlio ends with 0 or 2; the INI it
 * writes holds only blank lines, comments, one header per known section and `key = value`
 * lines of that section (a value never opens a line of its own), and parses as INI text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "errors.h"
#include "fuzz_common.h"
#include "util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* Every line of the INI is blank, a comment, a section header seen once, or key = value. */
static void fuzz_check_lines(char *text)
{
	char seen[16][64];
	int nseen = 0, line = 0;

	for (char *s = text, *nl; s && *s; s = nl ? nl + 1 : NULL) {
		nl = strchr(s, '\n');
		if (nl)
			*nl = '\0';
		line++;
		if (!*s || *s == ';')
			continue;
		if (*s == '[') {
			FUZZ_EXPECT(strchr(s, ']') && nseen < 16, "line %d: a bad header: %s", line,
				    s);
			for (int i = 0; i < nseen; i++)
				FUZZ_EXPECT(strcmp(seen[i], s) != 0, "line %d: %s twice", line, s);
			snprintf(seen[nseen++], sizeof(seen[0]), "%s", s);
			continue;
		}
		const char *eq = strstr(s, " = ");
		FUZZ_EXPECT(eq && eq > s, "line %d: not key = value: %s", line, s);
		for (const char *k = s; k < eq; k++)
			FUZZ_EXPECT(*k == '_' || (*k >= 'a' && *k <= 'z') ||
					(*k >= '0' && *k <= '9'),
				    "line %d: not a key name: %s", line, s);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char yaml[4096], ini[4096], *text = NULL;
	size_t len = 0;
	int rc;

	fuzz_clean();
	fuzz_write("", "input.yaml", data, size);
	fuzz_path(yaml, sizeof(yaml), "", "input.yaml");
	fuzz_path(ini, sizeof(ini), "", "out.ini");
	rc = fuzz_main(import_dlio_main, "import-dlio", yaml, "-o", ini, NULL);
	FUZZ_EXPECT(rc == 0 || rc == 2, "import-dlio exited %d", rc);
	if (rc != 0)
		return 0;
	FUZZ_EXPECT(util_read_file(ini, &text, &len) == 0, "no INI written after exit 0");
	static struct config cfg;
	struct fb_errbuf err;
	fb_errbuf_init(&err);
	cfg_defaults(&cfg);
	/* Parsed as text: a value out of range is the config check's business, not this one. */
	cfg_parse_text(&cfg, text, len, ini, &err);
	FUZZ_EXPECT(!strstr(err.msg, "cannot parse this line") &&
			!strstr(err.msg, "duplicate key") && !strstr(err.msg, "NUL byte") &&
			!strstr(err.msg, "characters long"),
		    "the INI does not read back: %s", err.msg);
	fuzz_check_lines(text);
	free(text);
	return 0;
}
