/* The config (bench/config.h): the key table, the INI parser on top of it, --set, validation of
 * combinations, the effective config and its hashes.
 *
 * Every error of docs/failures.md 1-6 and 24 is a row: the INI text, the error code and a fragment
 * of the message, which always names the file and line (first the file, then the failure).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "build_config.h"

#include "bench/config.h"
#include "formats/format.h"

struct parse_case {
	const char *name;
	const char *text;
	int code;	 /* 0 or -FB_ECONFIG */
	const char *msg; /* fragments that must all appear, separated by '|' */
};

static const struct parse_case parse_cases[] = {
    {"minimal", "[reader]\nbatch_size = 8\n", 0, NULL},
    {"comments and blanks", "; c\n# c\n\n[reader]\n  ; indented comment\nbatch_size=8\n", 0, NULL},
    {"unknown key, did you mean", "[reader]\nbatch_size = 8\nread_thread = 4\n", -FB_ECONFIG,
     "t.ini:3: unknown key 'read_thread' in [reader] (did you mean 'read_threads'?)"},
    {"unknown key in another section", "[train]\nbatch_size = 4\n", -FB_ECONFIG,
     "t.ini:2: unknown key 'batch_size' in [train]|did you mean 'batch_size' in [reader]"},
    {"unknown key, nothing close", "[reader]\nzzzzqqqq = 1\n", -FB_ECONFIG,
     "t.ini:2: unknown key 'zzzzqqqq' in [reader]|feedbench keys"},
    {"unknown section", "[reader]\nbatch_size = 1\n\n[readers]\nbatch_size = 2\n", -FB_ECONFIG,
     "t.ini:4: unknown section [readers]"},
    {"key before any section", "batch_size = 8\n", -FB_ECONFIG, "t.ini:1:"},
    {"bad unit", "[dataset]\nrecord_length_bytes = 4x\n", -FB_ECONFIG,
     "t.ini:2: [dataset] record_length_bytes: bad size unit in '4x'"},
    {"not a number", "[reader]\nbatch_size = eight\n", -FB_ECONFIG,
     "t.ini:2: [reader] batch_size: expected an integer, got 'eight'"},
    {"trailing garbage", "[reader]\nbatch_size = 8 samples\n", -FB_ECONFIG,
     "t.ini:2: [reader] batch_size: expected an integer"},
    {"fraction for an integer", "[train]\nepochs = 1.5\n", -FB_ECONFIG,
     "t.ini:2: [train] epochs: expected an integer"},
    {"overflow", "[dataset]\nseed = 99999999999999999999\n", -FB_ECONFIG,
     "t.ini:2: [dataset] seed:|does not fit in 64 bits"},
    {"size overflow", "[storage]\ntransfer_size = 100000000000000000000\n", -FB_ECONFIG,
     "t.ini:2: [storage] transfer_size:|does not fit in 64 bits"},
    {"out of range", "[reader]\nread_threads = 5000\n", -FB_ECONFIG,
     "t.ini:2: [reader] read_threads: 5000 is out of range: expected auto or 1 to 1024"},
    {"auto or a count", "[reader]\nread_threads = two\n", -FB_ECONFIG,
     "t.ini:2: [reader] read_threads: expected auto or an integer, got 'two'"},
    {"zero threads", "[reader]\nread_threads = 0\n", -FB_ECONFIG,
     "t.ini:2: [reader] read_threads: 0 is out of range: expected auto or 1 to 1024"},
    {"zero where zero is meaningless", "[reader]\nbatch_size = 0\n", -FB_ECONFIG,
     "t.ini:2: [reader] batch_size: 0 is out of range: expected 1 to"},
    {"negative count", "[dataset]\nnum_files_train = -3\n", -FB_ECONFIG,
     "t.ini:2: [dataset] num_files_train: -3 is out of range: expected 1 to"},
    {"negative size", "[dataset]\nrecord_length_bytes = -4096\n", -FB_ECONFIG,
     "t.ini:2: [dataset] record_length_bytes: size cannot be negative"},
    {"record smaller than a header", "[dataset]\nrecord_length_bytes = 32\n", -FB_ECONFIG,
     "t.ini:2: [dataset] record_length_bytes: 32 bytes is out of range: expected 64 to"},
    {"bad choice", "[dataset]\nfile_access = everyone\n", -FB_ECONFIG,
     "t.ini:2: [dataset] file_access: 'everyone' is not one of: per_rank, shared"},
    {"bad format", "[dataset]\nformat = orc\n", -FB_ECONFIG,
     "'orc' is not one of: raw, npy, npz, hdf5, tfrecord, wds"},
    {"bad bool", "[dataset]\nverify = maybe\n", -FB_ECONFIG,
     "t.ini:2: [dataset] verify: expected true or false, got 'maybe'"},
    {"duplicate key", "[reader]\nbatch_size = 8\nread_threads = 2\nbatch_size = 16\n", -FB_ECONFIG,
     "t.ini:4: duplicate key 'batch_size' in [reader] (first set on line 2)"},
    {"duplicate key across repeated sections",
     "[reader]\nbatch_size = 8\n[train]\nepochs = 2\n[reader]\nbatch_size = 16\n", -FB_ECONFIG,
     "t.ini:6: duplicate key 'batch_size' in [reader] (first set on line 2)"},
    {"duplicate MPI-IO hint", "[storage.mpiio]\ncb_nodes = 2\ncb_nodes = 4\n", -FB_ECONFIG,
     "t.ini:3: duplicate key 'cb_nodes' in [storage.mpiio] (first set on line 2)"},
    {"hint name that reads back as another key", "[storage.mpiio]\ncb nodes = 2\n", -FB_ECONFIG,
     "t.ini:2: MPI-IO hint name 'cb nodes' holds ' '"},
    {"value read as a comment once written back", "[workload]\nname =;x\n", -FB_ECONFIG,
     "t.ini:2: the value of 'name' begins with ';'"},
    {"empty file", "", -FB_ECONFIG, "t.ini: the config file is empty"},
    {"only comments", "; nothing\n\n# here\n", -FB_ECONFIG, "t.ini: the config file is empty"},
    {"only a section", "[reader]\n", -FB_ECONFIG, "t.ini: the config file is empty"},
    {"line without =", "[reader]\nbatch_size = 8\nread_threads 2\n", -FB_ECONFIG,
     "t.ini:3: cannot parse this line"},

    {"computation time negative", "[train]\ncomputation_time = -1ms\n", -FB_ECONFIG,
     "t.ini:2: [train] computation_time: duration cannot be negative"},
    {"computation time NaN", "[train]\ncomputation_time = nan\n", -FB_ECONFIG,
     "t.ini:2: [train] computation_time: expected a duration"},
    {"computation time below a nanosecond", "[train]\ncomputation_time = 0.5ns\n", -FB_ECONFIG,
     "t.ini:2: [train] computation_time: '0.5ns' is below the 1 ns resolution of every duration: "
     "use 0 or at least 1ns"},
    {"computation time absurd", "[train]\ncomputation_time = 2h\n", -FB_ECONFIG,
     "t.ini:2: [train] computation_time: 7200 is out of range: expected 0 to 3600 seconds"},
    {"au threshold as a percentage", "[train]\nau_threshold = 90\n", -FB_ECONFIG,
     "t.ini:2: [train] au_threshold: 90 is out of range: expected 0 to 1"},
    {"au threshold NaN", "[train]\nau_threshold = nan\n", -FB_ECONFIG,
     "t.ini:2: [train] au_threshold: expected a finite number"},
    {"sweep of an unknown key", "[sweep]\nreader.read_thread = 1, 2\n", -FB_ECONFIG,
     "t.ini:2: [sweep] names unknown key 'reader.read_thread' (did you mean "
     "'reader.read_threads'?)"},
    {"line numbers count CRLF lines", "[reader]\r\nbatch_size = 8\r\nread_thread = 4\r\n",
     -FB_ECONFIG, "t.ini:3: unknown key 'read_thread'"},
    {"section header without ]", "[reader\nbatch_size = 8\n", -FB_ECONFIG, "t.ini:1:"},
    /* Not "the config file is empty": the line is there, it is malformed. */
    {"only line without =", "[reader]\nbatch_size 8\n", -FB_ECONFIG,
     "t.ini:2: cannot parse this line"},
};

/* Checks that every '|'-separated fragment of want is in msg. */
static void expect_fragments(const char *name, const char *msg, const char *want)
{
	char buf[1024], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", want);
	for (char *f = strtok_r(buf, "|", &save); f; f = strtok_r(NULL, "|", &save))
		if (!strstr(msg, f))
			fail_msg("%s: message '%s' does not say '%s'", name, msg, f);
}

static int parse(struct config *cfg, const char *text, size_t len, struct fb_errbuf *err)
{
	fb_errbuf_init(err);
	cfg_defaults(cfg);
	return cfg_parse_text(cfg, text, len, "t.ini", err);
}

/* Runs every row and reports every wrong one, not just the first. */
static void run_parse_table(const struct parse_case *cases, size_t n)
{
	struct config *cfg = malloc(sizeof(*cfg));
	struct fb_errbuf err;
	int bad = 0;

	assert_non_null(cfg);
	for (size_t i = 0; i < n; i++) {
		const struct parse_case *c = &cases[i];
		int rc = parse(cfg, c->text, strlen(c->text), &err);
		char buf[1024], *save = NULL;

		if (rc != c->code) {
			print_error("%s: rc %d, want %d (%s)\n", c->name, rc, c->code, err.msg);
			bad++;
			continue;
		}
		if (!c->msg)
			continue;
		snprintf(buf, sizeof(buf), "%s", c->msg);
		for (char *f = strtok_r(buf, "|", &save); f; f = strtok_r(NULL, "|", &save)) {
			if (!strstr(err.msg, f)) {
				print_error("%s: message '%s' does not say '%s'\n", c->name,
					    err.msg, f);
				bad++;
			}
		}
		/* The message says the failure once, never "error: error:". */
		if (strstr(err.msg, "error:")) {
			print_error("%s: message '%s' repeats 'error:'\n", c->name, err.msg);
			bad++;
		}
	}
	free(cfg);
	if (bad)
		fail_msg("%d wrong rows", bad);
}

static void test_parse_table(void **state)
{
	(void)state;
	run_parse_table(parse_cases, sizeof(parse_cases) / sizeof(parse_cases[0]));
}

/* A line longer than inih's buffer is refused, never split into a bogus second key. */
static void test_long_line(void **state)
{
	struct config *cfg = malloc(sizeof(*cfg));
	struct fb_errbuf err;
	char text[1024];
	size_t n;

	(void)state;
	n = (size_t)snprintf(text, sizeof(text), "[workload]\nname = x\ndescription = ");
	memset(text + n, 'a', 400);
	n += 400;
	n += (size_t)snprintf(text + n, sizeof(text) - n, "\n");
	assert_int_equal(parse(cfg, text, n, &err), -FB_ECONFIG);
	expect_fragments("long line", err.msg, "t.ini:3: line is|characters long|at most");

	/* The longest accepted line still parses whole. */
	n = (size_t)snprintf(text, sizeof(text), "[workload]\ndescription = ");
	size_t fill = 199 - strlen("description = ");
	memset(text + n, 'b', fill);
	n += fill;
	text[n++] = '\n';
	text[n] = '\0';
	assert_int_equal(parse(cfg, text, n, &err), 0);
	assert_int_equal(strlen(cfg->workload.description), fill);
	free(cfg);
}

static void test_nul_byte(void **state)
{
	struct config *cfg = malloc(sizeof(*cfg));
	struct fb_errbuf err;
	static const char text[] = "[reader]\nbatch_size = 8\nread_threads = 2\0junk\n";

	(void)state;
	assert_int_equal(parse(cfg, text, sizeof(text) - 1, &err), -FB_ECONFIG);
	expect_fragments("NUL", err.msg, "t.ini:3: NUL byte");
	free(cfg);
}

/* CRLF files parse like LF files: no value ends in '\r'. */
static void test_crlf(void **state)
{
	struct config *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct fb_errbuf err;
	static const char lf[] = "[workload]\nname = crlf\n[dataset]\nformat = raw\n"
				 "record_length_bytes = 4KiB\nverify = false\n[train]\n"
				 "computation_time = 2ms\n";
	static const char crlf[] = "[workload]\r\nname = crlf\r\n[dataset]\r\nformat = raw\r\n"
				   "record_length_bytes = 4KiB\r\nverify = false\r\n[train]\r\n"
				   "computation_time = 2ms\r\n";
	char h1[65], h2[65];

	(void)state;
	assert_int_equal(parse(a, lf, strlen(lf), &err), 0);
	assert_int_equal(parse(b, crlf, strlen(crlf), &err), 0);
	assert_string_equal(b->workload.name, "crlf");
	assert_int_equal(b->dataset.record_length_bytes, 4096);
	assert_false(b->dataset.verify);
	assert_true(b->train.computation_time == 0.002);
	cfg_hash(a, h1);
	cfg_hash(b, h2);
	assert_string_equal(h1, h2);
	free(a);
	free(b);
}

/* Values set in the file are where the file says; the rest keep their defaults. */
static void test_values_and_lines(void **state)
{
	struct config *cfg = malloc(sizeof(*cfg));
	struct fb_errbuf err;
	static const char text[] = "[dataset]\nrecord_length_bytes = 1.5MiB\nfile_access = Shared\n"
				   "[reader]\nbatch_size = 8\n[train]\ncomputation_time = 850us\n"
				   "[format.hdf5]\nchunking = sample\n[storage.mpiio]\n"
				   "romio_cb_read = enable\n";

	(void)state;
	assert_int_equal(parse(cfg, text, strlen(text), &err), 0);
	assert_int_equal(cfg->dataset.record_length_bytes, 1572864);
	assert_int_equal(cfg->dataset.file_access, FILE_ACCESS_SHARED);
	assert_int_equal(cfg->reader.batch_size, 8);
	assert_true(fabs(cfg->train.computation_time - 850e-6) < 1e-15);
	assert_int_equal(cfg->hdf5.chunking, -1);
	assert_int_equal(cfg->mpiio.nhints, 1);
	assert_string_equal(cfg->mpiio.hints[0].key, "romio_cb_read");
	assert_string_equal(cfg->mpiio.hints[0].value, "enable");
	assert_int_equal(cfg->mpiio.hints[0].line, 11);
	const struct cfg_key *k = cfg_find("reader", "batch_size");
	assert_non_null(k);
	assert_int_equal(cfg->lines[k - cfg_keys], 5);
	k = cfg_find("reader", "read_threads");
	assert_int_equal(cfg->lines[k - cfg_keys], 0);
	assert_int_equal(cfg->reader.read_threads, 0); /* default: auto */
	free(cfg);
}

/* Every default in the table parses as user input and survives a round trip. */
static void test_defaults(void **state)
{
	struct config *cfg = malloc(sizeof(*cfg)), *again = malloc(sizeof(*again));
	struct fb_errbuf err;
	char val[CFG_PATH_MAX], assign[CFG_PATH_MAX + 256];

	(void)state;
	cfg_defaults(cfg);
	cfg_defaults(again);
	for (size_t i = 0; i < cfg_nkeys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		assert_non_null(k->help);
		assert_true(strlen(k->help) > 0);
		snprintf(assign, sizeof(assign), "%s.%s=%s", k->section, k->name, k->def);
		fb_errbuf_init(&err);
		if (cfg_set(again, assign, &err) < 0)
			fail_msg("default of %s.%s does not parse: %s", k->section, k->name,
				 err.msg);
		/* The formatted value parses back to the same value. */
		cfg_format_value(cfg, k, val, sizeof(val));
		snprintf(assign, sizeof(assign), "%s.%s=%s", k->section, k->name, val);
		fb_errbuf_init(&err);
		if (cfg_set(again, assign, &err) < 0)
			fail_msg("formatted %s.%s = '%s' does not parse: %s", k->section, k->name,
				 val, err.msg);
		/* No two rows share a name in one section. */
		for (size_t j = i + 1; j < cfg_nkeys; j++)
			if (strcmp(k->section, cfg_keys[j].section) == 0 &&
			    strcmp(k->name, cfg_keys[j].name) == 0)
				fail_msg("key %s.%s appears twice in the table", k->section,
					 k->name);
	}
	char h1[65], h2[65];
	cfg_hash(cfg, h1);
	cfg_hash(again, h2);
	assert_string_equal(h1, h2);
	free(cfg);
	free(again);
}

/* Short durations (below 0.1 ms, which "%g" writes with an exponent) are written as plain
 * decimals the duration parser reads back: the same config, no "e" in the line (fuzz.config
 * found "050us" written as "5e-05"). */
static void test_short_duration_round_trip(void **state)
{
	static const char *const values[] = {"50us",   "1ns", "3.5ns",	    "0.000123456789s",
					     "99.5us", "7us", "1234.5678ms"};
	struct config *cfg = malloc(sizeof(*cfg)), *back = malloc(sizeof(*back));
	struct fb_errbuf err;

	(void)state;
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		char text[128], *buf = NULL, h1[65], h2[65];
		size_t len = 0;
		snprintf(text, sizeof(text), "[train]\ncomputation_time = %s\n", values[i]);
		assert_int_equal(parse(cfg, text, strlen(text), &err), 0);
		FILE *m = open_memstream(&buf, &len);
		cfg_write_ini(cfg, m);
		fclose(m);
		const char *line = strstr(buf, "\ncomputation_time = ");
		assert_non_null(line);
		const char *val = line + strlen("\ncomputation_time = ");
		size_t vlen = strcspn(val, "\n");
		if (memchr(val, 'e', vlen))
			fail_msg("%s written with an exponent: %.*s", values[i], (int)vlen, val);
		if (parse(back, buf, len, &err) < 0)
			fail_msg("%s: the effective config does not parse: %s", values[i], err.msg);
		if (fabs(back->train.computation_time - cfg->train.computation_time) >
		    cfg->train.computation_time * 1e-8)
			fail_msg("%s read back as %.17g, was %.17g", values[i],
				 back->train.computation_time, cfg->train.computation_time);
		cfg_hash(cfg, h1);
		cfg_hash(back, h2);
		assert_string_equal(h1, h2);
		free(buf);
	}
	free(cfg);
	free(back);
}

/* The effective config (config.ini of every run) parses back to the same config. */
static void test_effective_round_trip(void **state)
{
	struct config *cfg = malloc(sizeof(*cfg)), *back = malloc(sizeof(*back));
	struct fb_errbuf err;
	static const char text[] = "[workload]\nname = rt\n[dataset]\nrecord_length_bytes = 3MB\n"
				   "record_length_bytes_stdev = 1KiB\n[train]\n"
				   "computation_time = 0.125s\n[storage.mpiio]\ncb_nodes = 4\n";
	char *buf = NULL, h1[65], h2[65];
	size_t len = 0;

	(void)state;
	assert_int_equal(parse(cfg, text, strlen(text), &err), 0);
	FILE *m = open_memstream(&buf, &len);
	cfg_write_ini(cfg, m);
	fclose(m);
	if (parse(back, buf, len, &err) < 0)
		fail_msg("the effective config does not parse: %s\n%s", err.msg, buf);
	cfg_hash(cfg, h1);
	cfg_hash(back, h2);
	assert_string_equal(h1, h2);
	cfg_dataset_hash(cfg, h1);
	cfg_dataset_hash(back, h2);
	assert_string_equal(h1, h2);
	assert_int_equal(back->mpiio.nhints, 1);
	/* Every key of the table is in it. */
	for (size_t i = 0; i < cfg_nkeys; i++) {
		char line[256];
		if (strcmp(cfg_keys[i].section, "sweep") == 0)
			continue;
		snprintf(line, sizeof(line), "\n%s = ", cfg_keys[i].name);
		if (!strstr(buf, line))
			fail_msg("effective config lacks %s.%s", cfg_keys[i].section,
				 cfg_keys[i].name);
	}
	free(buf);
	free(cfg);
	free(back);
}

/* The config hash ignores [output]; the dataset hash follows only keys that shape the files. */
static void test_hashes(void **state)
{
	struct config *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct fb_errbuf err;
	char ha[65], hb[65];

	(void)state;
	cfg_defaults(a);
	cfg_defaults(b);
	assert_int_equal(cfg_set(b, "output.dir=/elsewhere", &err), 0);
	assert_int_equal(cfg_set(b, "output.repetitions=5", &err), 0);
	cfg_hash(a, ha);
	cfg_hash(b, hb);
	assert_string_equal(ha, hb);
	assert_int_equal(strlen(ha), 64);

	assert_int_equal(cfg_set(b, "reader.batch_size=32", &err), 0);
	cfg_hash(b, hb);
	assert_string_not_equal(ha, hb);
	cfg_dataset_hash(a, ha);
	cfg_dataset_hash(b, hb);
	assert_string_equal(ha, hb); /* batch size does not change the files */
	assert_int_equal(cfg_dataset_id(a), cfg_dataset_id(b));

	assert_int_equal(cfg_set(b, "dataset.seed=43", &err), 0);
	cfg_dataset_hash(b, hb);
	assert_string_not_equal(ha, hb);
	assert_true(cfg_dataset_id(a) != cfg_dataset_id(b));
	free(a);
	free(b);
}

struct set_case {
	const char *assign;
	int code;
	const char *msg;
};

static void test_set(void **state)
{
	static const struct set_case cases[] = {
	    {"reader.batch_size=16", 0, NULL},
	    {"reader.batch_size = 16", 0, NULL},
	    {"reader.read_threads=auto", 0, NULL},
	    {"reader.read_threads=AUTO", 0, NULL},
	    {"reader.batch_size=auto", -FB_ECONFIG, "expected an integer, got 'auto'"},
	    {"storage.mpiio.cb_buffer_size=16777216", 0, NULL},
	    {"reader.read_thread=4", -FB_EUSAGE,
	     "--set reader.read_thread: unknown key (did you mean 'reader.read_threads'?)"},
	    {"nosuchsection.key=1", -FB_EUSAGE, "unknown key"},
	    {"batch_size", -FB_EUSAGE, "expected section.key=value"},
	    {"=3", -FB_EUSAGE, "expected section.key=value"},
	    {"reader.batch_size=0", -FB_ECONFIG, "--set reader.batch_size: 0 is out of range"},
	    {"dataset.record_length_bytes=4x", -FB_ECONFIG, "bad size unit"},
	    {"train.computation_time=-1", -FB_ECONFIG, "cannot be negative"},
	    /* Values written to config.ini must read back the same (found by tests/fuzz). */
	    {"workload.name=x \r", 0, NULL},
	    {"storage.mpiio.romio_cb_read=enable\r", 0, NULL},
	    {"workload.name=a\nb", -FB_EUSAGE, "cannot hold a line break"},
	    {"workload.name=x ; y", -FB_EUSAGE, "' ;' (an INI comment)"},
	    {"workload.name=;x", -FB_EUSAGE, "begin with ';'"},
	    {"storage.mpiio.cb:nodes=2", -FB_EUSAGE, "the hint name holds ':'"},
	    {"dataset.data_dir=/scratch/a/very/long/path/that/does/not/fit/on/one/config/line/"
	     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
	     -FB_EUSAGE, "('data_dir = ...') this is 238 characters|at most 199"},
	};
	struct config *cfg = malloc(sizeof(*cfg));
	struct fb_errbuf err;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cfg_defaults(cfg);
		fb_errbuf_init(&err);
		int rc = cfg_set(cfg, cases[i].assign, &err);
		if (rc != cases[i].code)
			fail_msg("--set %s: rc %d want %d (%s)", cases[i].assign, rc, cases[i].code,
				 err.msg);
		if (cases[i].msg)
			expect_fragments(cases[i].assign, err.msg, cases[i].msg);
	}
	cfg_defaults(cfg);
	assert_int_equal(cfg_set(cfg, "workload.name= x \r", &err), 0);
	assert_string_equal(cfg->workload.name, "x");
	assert_int_equal(cfg_set(cfg, "storage.mpiio.romio_cb_read=enable\r", &err), 0);
	assert_string_equal(cfg->mpiio.hints[0].value, "enable");
	cfg_defaults(cfg);
	assert_int_equal(cfg_set(cfg, "reader.batch_size=16", &err), 0);
	assert_int_equal(cfg->reader.batch_size, 16);
	assert_int_equal(cfg->lines[cfg_find("reader", "batch_size") - cfg_keys], -1);
	free(cfg);
}

struct validate_case {
	const char *name;
	const char *sets[6];
	const char *msg; /* NULL: valid */
};

/* Combinations that cannot be honoured are refused before any file is touched. */
static void test_validate(void **state)
{
	static const struct validate_case cases[] = {
	    {"defaults", {NULL}, NULL},
	    {"direct with aligned sizes",
	     {"storage.direct=true", "dataset.record_length_bytes=8KiB", NULL},
	     NULL},
	    {"direct with an unaligned record",
	     {"storage.direct=true", "dataset.record_length_bytes=1000", NULL},
	     "direct = true needs record_length_bytes to be a multiple of 4096"},
	    {"direct with an unaligned transfer",
	     {"storage.direct=true", "dataset.record_length_bytes=64KiB",
	      "storage.transfer_size=1000", NULL},
	     "direct = true needs transfer_size to be a multiple of 4096"},
	    {"direct with variable sizes",
	     {"storage.direct=true", "dataset.record_length_bytes_stdev=4KiB", NULL},
	     "direct = true needs fixed record sizes"},
	    {"transfer larger than a record",
	     {"dataset.record_length_bytes=4KiB", "storage.transfer_size=8KiB", NULL},
	     "transfer_size (8192) is larger than a record (4096 bytes)"},
	    {"transfer pieces",
	     {"dataset.record_length_bytes=4KiB", "storage.transfer_size=1KiB", NULL},
	     NULL},
	    {"npy cannot be shared",
	     {"dataset.format=npy", "dataset.file_access=shared", NULL},
	     "format npy cannot be read with file_access = shared"},
	    {"stripe size not a multiple of 64 KiB",
	     {"storage.stripe_size=100000", NULL},
	     "stripe_size must be a multiple of 64 KiB"},
	    {"compute stdev without compute",
	     {"train.computation_time_stdev=1ms", NULL},
	     "computation_time_stdev is set but computation_time is 0"},
	    {"collective without mpiio",
	     {"storage.mpiio.collective=true", "dataset.file_access=shared", NULL},
	     "(--set storage.mpiio.collective): [storage.mpiio] collective = true needs [storage] "
	     "backend = mpiio (backend = posix has no collective transfers)"},
	    {"collective through faulty over posix",
	     {"storage.mpiio.collective=true", "dataset.file_access=shared",
	      "storage.backend=faulty", NULL},
	     "back-end with collective transfers (mpiio): backend = faulty moves its bytes through "
	     "back-end 'posix', which has none"},
	    {"collective through faulty over mpiio",
	     {"storage.mpiio.collective=true", "dataset.file_access=shared",
	      "storage.backend=faulty", "storage.faulty.inner=mpiio", NULL},
	     "the training workload reads collectively through backend = mpiio itself, not "
	     "through backend = faulty over it"},
	    {"collective per rank",
	     {"storage.mpiio.collective=true", "storage.backend=mpiio", NULL},
	     "collective reads need file_access = shared"},
	    {"io_depth without a queue",
	     {"storage.io_depth=8", NULL},
	     "io_depth = 8 needs backend = uring (posix reads one call at a time"},
	    {"hdf5 through uring",
	     {"dataset.format=hdf5", "storage.backend=uring", NULL},
	     FEEDBENCH_HAVE_URING ? "format hdf5 does its own I/O through its library; backend = "
				    "uring cannot carry it"
				  : "storage back-end 'uring' is not built (liburing not found)"},
	};
	struct config *cfg = malloc(sizeof(*cfg));
	struct fb_errbuf err;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct validate_case *c = &cases[i];
		cfg_defaults(cfg);
		snprintf(cfg->source, sizeof(cfg->source), "v.ini");
		for (size_t s = 0; c->sets[s]; s++) {
			fb_errbuf_init(&err);
			if (cfg_set(cfg, c->sets[s], &err) < 0)
				fail_msg("%s: --set %s: %s", c->name, c->sets[s], err.msg);
		}
		if (c->msg && strstr(c->name, "npy") && !format_find("npy")) {
			continue; /* the npy plug-in is not built yet */
		}
		fb_errbuf_init(&err);
		int rc = cfg_validate(cfg, 2, &err);
		if (!c->msg && rc != 0)
			fail_msg("%s: refused: %s", c->name, err.msg);
		if (c->msg) {
			if (rc != -FB_ECONFIG)
				fail_msg("%s: rc %d, want a config error with '%s'", c->name, rc,
					 c->msg);
			expect_fragments(c->name, err.msg, c->msg);
			assert_non_null(strstr(err.msg, "v.ini"));
		}
	}
	free(cfg);
}

struct suggest_case {
	const char *section, *name, *want_section, *want_name; /* want NULL: no suggestion */
};

static void test_suggest(void **state)
{
	static const struct suggest_case cases[] = {
	    {"reader", "read_thread", "reader", "read_threads"},
	    {"reader", "batchsize", "reader", "batch_size"},
	    {"reader", "Batch_Size", "reader", "batch_size"},
	    {"train", "epoch", "train", "epochs"},
	    {"dataset", "num_file_train", "dataset", "num_files_train"},
	    {"reader", "epochs", "train", "epochs"},
	    {"reader", "qqqqqqqqqq", NULL, NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct suggest_case *c = &cases[i];
		const struct cfg_key *k = cfg_suggest(c->section, c->name);
		if (!c->want_name) {
			if (k)
				fail_msg("'%s' suggests %s.%s", c->name, k->section, k->name);
			continue;
		}
		if (!k || strcmp(k->section, c->want_section) || strcmp(k->name, c->want_name))
			fail_msg("'%s' in [%s] suggests %s.%s, want %s.%s", c->name, c->section,
				 k ? k->section : "-", k ? k->name : "-", c->want_section,
				 c->want_name);
	}
	assert_non_null(cfg_find("reader", "batch_size"));
	assert_non_null(cfg_find_dotted("format.hdf5.chunking"));
	assert_null(cfg_find_dotted("reader"));
	assert_null(cfg_find("reader", "nope"));
	assert_string_equal(cfg_choice_name("storage", "backend", BACKEND_MPIIO), "mpiio");
	assert_string_equal(cfg_choice_name("storage", "backend", 99), "?");
}

/* `feedbench keys`: one Markdown table per section, one row per key of the table. */
static void test_keys_markdown(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	(void)state;
	cfg_write_keys_markdown(m);
	fclose(m);
	assert_non_null(strstr(buf, "# feedbench configuration keys"));
	for (size_t i = 0; i < cfg_nkeys; i++) {
		char head[160], row[160];
		snprintf(head, sizeof(head), "\n## [%s]\n", cfg_keys[i].section);
		snprintf(row, sizeof(row), "\n| `%s` |", cfg_keys[i].name);
		const char *sec = strstr(buf, head);
		if (!sec)
			fail_msg("keys lacks the section [%s]", cfg_keys[i].section);
		const char *next = strstr(sec + strlen(head), "\n## [");
		const char *r = strstr(sec, row);
		if (!r || (next && r > next))
			fail_msg("keys lacks %s.%s in its section", cfg_keys[i].section,
				 cfg_keys[i].name);
	}
	free(buf);
}

/* Reading config files: missing file, directory, real file. */
static void test_read_file(void **state)
{
	struct fb_errbuf err;
	char *text = NULL, path[] = "/tmp/fb_test_config_XXXXXX";
	size_t len = 0;
	int fd;

	(void)state;
	fb_errbuf_init(&err);
	assert_int_equal(cfg_read_file("/nonexistent/x.ini", &text, &len, &err), -FB_EUSAGE);
	expect_fragments("missing", err.msg, "cannot open config '/nonexistent/x.ini'");
	fb_errbuf_init(&err);
	assert_true(cfg_read_file("/tmp", &text, &len, &err) < 0);
	expect_fragments("directory", err.msg, "'/tmp'");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "[a]\nb=1\n", 8), 8);
	close(fd);
	fb_errbuf_init(&err);
	assert_int_equal(cfg_read_file(path, &text, &len, &err), 0);
	assert_int_equal(len, 8);
	assert_string_equal(text, "[a]\nb=1\n");
	free(text);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_table),
	    cmocka_unit_test(test_long_line),
	    cmocka_unit_test(test_nul_byte),
	    cmocka_unit_test(test_crlf),
	    cmocka_unit_test(test_values_and_lines),
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_effective_round_trip),
	    cmocka_unit_test(test_short_duration_round_trip),
	    cmocka_unit_test(test_hashes),
	    cmocka_unit_test(test_set),
	    cmocka_unit_test(test_validate),
	    cmocka_unit_test(test_suggest),
	    cmocka_unit_test(test_keys_markdown),
	    cmocka_unit_test(test_read_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
