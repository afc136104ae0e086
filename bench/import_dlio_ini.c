/* `feedbench import-dlio`: the INI it writes (import_dlio.c reads the YAML and maps its keys):
 * each key under its section with the DLIO key it came from as a comment, the DLIO keys with
 * no equivalent listed at the end, written atomically. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "import_dlio.h"
#include "safefile.h"

/* A comment, wrapped at 100 columns: the INI parser refuses lines of 200 characters. */
static void imp_comment(FILE *out, const char *first, const char *raw)
{
	const char *lead = first;
	size_t width = 100 - 2 - strlen(first);
	char clean[1024], *text = clean;

	/* A YAML value quoted here (a key not mapped) may hold line breaks: never a new line of
	 * the INI. */
	snprintf(clean, sizeof(clean), "%s", raw);
	for (char *c = clean; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';

	while (strlen(text) > width) {
		size_t cut = width;

		while (cut > 0 && text[cut] != ' ')
			cut--;
		if (cut == 0)
			cut = width;
		fprintf(out, "; %s%.*s\n", lead, (int)cut, text);
		text += cut + (text[cut] == ' ');
		lead = "    ";
		width = 100 - 2 - strlen(lead);
	}
	fprintf(out, "; %s%s\n", lead, text);
}

static void imp_write(const struct imp *im, FILE *out)
{
	char buf[1024];

	static const char *const sections[] = {
	    "workload", "dataset", "format.tfrecord", "format.parquet", "storage",
	    "reader",	"train",   "evaluation",      "checkpoint",	"output"};
	const char *base = strrchr(im->path, '/');

	fprintf(out,
		"; imported by `feedbench import-dlio` from the DLIO workload %s\n"
		"; Each key says which DLIO key it comes from; DLIO keys feedbench has no "
		"equivalent for\n; are listed at the end (docs/dlio.md).\n",
		base ? base + 1 : im->path);
	for (size_t s = 0; s < sizeof(sections) / sizeof(sections[0]); s++) {
		size_t sl = strlen(sections[s]);
		bool header = false;

		for (int i = 0; i < im->nsets; i++) {
			const struct imp_set *e = &im->sets[i];
			const char *dot = strrchr(e->key, '.');

			if ((size_t)(dot - e->key) != sl || strncmp(e->key, sections[s], sl))
				continue;
			if (!header)
				fprintf(out, "\n[%s]\n", sections[s]);
			header = true;
			if (e->line > 0)
				snprintf(buf, sizeof(buf), "line %d: %s", e->line, e->from);
			else
				snprintf(buf, sizeof(buf), "%s", e->from);
			imp_comment(out, "", buf);
			fprintf(out, "%s = %s\n", dot + 1, e->value);
		}
	}
	if (im->nskips)
		fprintf(out, "\n; DLIO keys with no feedbench equivalent (docs/dlio.md):\n");
	for (int i = 0; i < im->nskips; i++) {
		snprintf(buf, sizeof(buf), "%s: %s (line %d): %s", im->skips[i].dlio,
			 im->skips[i].value, im->skips[i].line, im->skips[i].why);
		imp_comment(out, "  ", buf);
	}
}

/* Writes OUT atomically (safe_write_atomic: an unguessable temporary beside it, fsynced,
 * renamed, the folder fsynced): never half an INI under that name. */
int imp_output(const struct imp *im, const char *out_path)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!out_path) {
		imp_write(im, stdout);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	f = open_memstream(&text, &len);
	if (!f) {
		fprintf(stderr, "feedbench: import-dlio: out of memory\n");
		return 1;
	}
	imp_write(im, f);
	int err = ferror(f);
	if (fclose(f) != 0 || err) {
		free(text);
		fprintf(stderr, "feedbench: import-dlio: out of memory\n");
		return 1;
	}
	int rc = safe_write_atomic(out_path, text, len);
	free(text);
	if (rc < 0) {
		fprintf(stderr, "feedbench: import-dlio: cannot create '%s': %s\n", out_path,
			fb_strerror(rc));
		return 1;
	}
	return 0;
}
