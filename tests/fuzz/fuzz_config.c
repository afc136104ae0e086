/* The INI parser with `--set` overrides, as `feedbench run/validate CONFIG --set ...` reads a
 * config: runner_load_config() (read the file, parse, apply the sets in order, validate for one
 * rank), then the checks for other rank counts, the [sweep] expansion of every point, and the
 * effective config written back as INI, which must parse to the same config hash.
 *
 * Input: the config file; lines after a line ";@set" are the --set assignments, one a line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz_common.h"
#include "runner.h"
#include "sweep.h"

#define FUZZ_SET_MARK ";@set\n"

static char fuzz_sets[RUNNER_MAX_SETS][1024];

/* Splits the input into the file and the --set lines; returns the length of the file part. */
static size_t fuzz_split(const uint8_t *data, size_t size, struct runner_opts *o)
{
	size_t mlen = strlen(FUZZ_SET_MARK), file = size, at;

	for (size_t i = 0; i + mlen <= size; i++)
		if ((i == 0 || data[i - 1] == '\n') && memcmp(data + i, FUZZ_SET_MARK, mlen) == 0) {
			file = i;
			break;
		}
	at = file == size ? size : file + mlen;
	while (at < size && o->nsets < RUNNER_MAX_SETS) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t n = nl ? (size_t)(nl - (data + at)) : size - at;
		char *s = fuzz_sets[o->nsets];

		snprintf(s, sizeof(fuzz_sets[0]), "%.*s", (int)n, (const char *)data + at);
		if (strlen(s) == n) /* a NUL byte cannot reach a command line */
			o->sets[o->nsets++] = s;
		at += n + 1;
	}
	return file;
}

/* The effective config, written as INI and parsed again, is the same config. */
static void fuzz_round_trip(const struct config *cfg)
{
	static struct config again;
	struct fb_errbuf err;
	char h1[65], h2[65], d1[65], d2[65];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return;
	cfg_write_ini(cfg, f);
	fclose(f);
	fb_errbuf_init(&err);
	cfg_defaults(&again);
	int prc = cfg_parse_text(&again, text, len, "effective.ini", &err);
	FUZZ_EXPECT(prc >= 0, "the effective config does not parse: %s\n%s", err.msg, text);
	cfg_hash(cfg, h1);
	cfg_hash(&again, h2);
	cfg_dataset_hash(cfg, d1);
	cfg_dataset_hash(&again, d2);
	FUZZ_EXPECT(strcmp(h1, h2) == 0 && strcmp(d1, d2) == 0,
		    "the effective config parses to another config:\n%s", text);
	pthread_mutex_destroy(&err.lock);
	free(text);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_mpi_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config cfg;
	struct runner_opts o = {0};
	struct fb_errbuf err;
	char path[4096];
	size_t file;

	file = fuzz_split(data, size, &o);
	fuzz_write("", "config.ini", data, file);
	o.config_path = fuzz_path(path, sizeof(path), "", "config.ini");
	fb_errbuf_init(&err);
	if (runner_load_config(&cfg, &o, MPI_COMM_SELF, &err) == 0) {
		static const int nranks[] = {2, 3, 4, 13};
		struct sweep_plan plan;

		for (size_t i = 0; i < sizeof(nranks) / sizeof(nranks[0]); i++) {
			fb_errbuf_clear(&err);
			cfg_validate(&cfg, nranks[i], &err);
		}
		fb_errbuf_clear(&err);
		if (cfg.sweep.nkeys > 0) {
			memset(&plan, 0, sizeof(plan));
			sweep_plan_build(&plan, &cfg, 1, false, &err);
			sweep_plan_free(&plan);
		}
		fuzz_round_trip(&cfg);
	}
	pthread_mutex_destroy(&err.lock);
	return 0;
}
