/* Config parsing on top of libinih, driven by the key table of config_keys.c. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>
#include <mpi.h>
#include <nettle/sha2.h>

#include "../formats/format.h"

/* libinih as packaged splits lines longer than this silently; we refuse them first. */

static void *cfg_field(const struct config *cfg, const struct cfg_key *k)
{
	return (char *)cfg + k->offset;
}

static size_t cfg_key_index(const struct cfg_key *k)
{
	return (size_t)(k - cfg_keys);
}

const struct cfg_key *cfg_find(const char *section, const char *name)
{
	for (size_t i = 0; i < cfg_nkeys; i++)
		if (strcmp(cfg_keys[i].section, section) == 0 &&
		    strcmp(cfg_keys[i].name, name) == 0)
			return &cfg_keys[i];
	return NULL;
}

const struct cfg_key *cfg_find_dotted(const char *dotted)
{
	const char *dot = strrchr(dotted, '.');
	char section[CFG_NAME_MAX];

	if (!dot || (size_t)(dot - dotted) >= sizeof(section))
		return NULL;
	memcpy(section, dotted, (size_t)(dot - dotted));
	section[dot - dotted] = '\0';
	return cfg_find(section, dot + 1);
}

static bool cfg_section_known(const char *section)
{
	for (size_t i = 0; i < cfg_nkeys; i++)
		if (strcmp(cfg_keys[i].section, section) == 0)
			return true;
	return false;
}

size_t cfg_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[64], cur[64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) !=
						    tolower((unsigned char)b[j - 1]));
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, sizeof(size_t) * (lb + 1));
	}
	return prev[lb];
}

const struct cfg_key *cfg_suggest(const char *section, const char *name)
{
	const struct cfg_key *best = NULL;
	size_t best_d = 99;

	/* DLIO's name for a key (record_length, data_folder, ...): feedbench's. */
	for (size_t i = 0; cfg_dlio_aliases[i].dlio; i++) {
		const char *dot = strrchr(cfg_dlio_aliases[i].dlio, '.');

		if (dot && strcmp(dot + 1, name) == 0)
			return cfg_find_dotted(cfg_dlio_aliases[i].key);
	}

	for (size_t i = 0; i < cfg_nkeys; i++) {
		size_t d = cfg_edit_distance(name, cfg_keys[i].name);

		/* A key of the same section wins a tie. */
		if (strcmp(cfg_keys[i].section, section) != 0)
			d += 1;
		if (d < best_d) {
			best_d = d;
			best = &cfg_keys[i];
		}
	}
	size_t len = strlen(name);
	size_t limit = len <= 4 ? 1 : (len <= 8 ? 2 : 3);
	return best_d <= limit ? best : NULL;
}

/* ---- value parsers ------------------------------------------------------------------- */

static const char *skip_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

int cfg_parse_int(const char *text, int64_t *out, char *why, size_t whylen)
{
	const char *s = skip_space(text);
	char *end;

	if (*s == '\0') {
		snprintf(why, whylen, "expected an integer, got nothing");
		return -FB_ECONFIG;
	}
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno == ERANGE) {
		snprintf(why, whylen, "'%s' does not fit in 64 bits", text);
		return -FB_ECONFIG;
	}
	end = (char *)skip_space(end);
	if (end == s || *end != '\0') {
		snprintf(why, whylen, "expected an integer, got '%s'", text);
		return -FB_ECONFIG;
	}
	*out = v;
	return 0;
}

int cfg_parse_bool(const char *text, bool *out, char *why, size_t whylen)
{
	static const char *const yes[] = {"true", "yes", "on", "1"};
	static const char *const no[] = {"false", "no", "off", "0"};

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(text, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(text, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	snprintf(why, whylen, "expected true or false, got '%s'", text);
	return -FB_ECONFIG;
}

/* Parses a non-negative decimal number with an optional fraction into a long double and
 * returns the unit suffix. */
static int parse_number(const char *text, long double *v, const char **unit, char *why,
			size_t whylen, const char *what)
{
	const char *s = skip_space(text);
	const char *p = s;
	long double val = 0, scale = 1;
	bool digits = false;

	if (*p == '-') {
		snprintf(why, whylen, "%s cannot be negative: '%s'", what, text);
		return -FB_ECONFIG;
	}
	if (*p == '+')
		p++;
	while (isdigit((unsigned char)*p)) {
		val = val * 10 + (*p++ - '0');
		digits = true;
	}
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			scale /= 10;
			val += (*p++ - '0') * scale;
			digits = true;
		}
	}
	if (!digits) {
		snprintf(why, whylen, "expected a %s, got '%s'", what, text);
		return -FB_ECONFIG;
	}
	*v = val;
	*unit = skip_space(p);
	return 0;
}

int cfg_parse_size(const char *text, uint64_t *out, char *why, size_t whylen)
{
	static const struct {
		const char *suffix;
		long double mult;
	} units[] = {
	    {"", 1},
	    {"b", 1},
	    {"k", 1024.0L},
	    {"kib", 1024.0L},
	    {"kb", 1e3L},
	    {"m", 1048576.0L},
	    {"mib", 1048576.0L},
	    {"mb", 1e6L},
	    {"g", 1073741824.0L},
	    {"gib", 1073741824.0L},
	    {"gb", 1e9L},
	    {"t", 1099511627776.0L},
	    {"tib", 1099511627776.0L},
	    {"tb", 1e12L},
	};
	long double v;
	const char *unit;
	char u[8];
	size_t n;

	if (parse_number(text, &v, &unit, why, whylen, "size") < 0)
		return -FB_ECONFIG;
	for (n = 0; unit[n] && n < sizeof(u) - 1 && !isspace((unsigned char)unit[n]); n++)
		u[n] = (char)tolower((unsigned char)unit[n]);
	u[n] = '\0';
	if (*skip_space(unit + n) != '\0' || strlen(unit) > 7)
		goto bad_unit;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(u, units[i].suffix) != 0)
			continue;
		/* KB/MB/GB are decimal only when written in upper case or with "B" spelled;
		 * a lower-case "kb" is still 10^3: units are case-insensitive, the i makes
		 * the binary ones. */
		long double bytes = v * units[i].mult;
		if (bytes >= 18446744073709551615.0L) {
			snprintf(why, whylen, "'%s' does not fit in 64 bits", text);
			return -FB_ECONFIG;
		}
		if (bytes != floorl(bytes)) {
			snprintf(why, whylen, "'%s' is not a whole number of bytes", text);
			return -FB_ECONFIG;
		}
		*out = (uint64_t)bytes;
		return 0;
	}
bad_unit:
	snprintf(why, whylen,
		 "bad size unit in '%s': expected B, k/KiB, M/MiB, G/GiB, T/TiB (powers of 2) or "
		 "KB, MB, GB, TB (powers of 10)",
		 text);
	return -FB_ECONFIG;
}

int cfg_parse_duration(const char *text, double *out, char *why, size_t whylen)
{
	static const struct {
		const char *suffix;
		double mult;
	} units[] = {{"", 1},	   {"s", 1},	 {"sec", 1}, {"ms", 1e-3}, {"us", 1e-6},
		     {"µs", 1e-6}, {"ns", 1e-9}, {"m", 60},  {"min", 60},  {"h", 3600}};
	long double v;
	const char *unit;
	char u[8];
	size_t n;

	if (parse_number(text, &v, &unit, why, whylen, "duration") < 0)
		return -FB_ECONFIG;
	for (n = 0; unit[n] && n < sizeof(u) - 1 && !isspace((unsigned char)unit[n]); n++)
		u[n] = (char)tolower((unsigned char)unit[n]);
	u[n] = '\0';
	if (*skip_space(unit + n) == '\0' && strlen(unit) <= 7) {
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			if (strcmp(u, units[i].suffix) == 0) {
				double d = (double)(v * units[i].mult);
				if (!isfinite(d)) {
					snprintf(why, whylen, "'%s' is not a finite duration",
						 text);
					return -FB_ECONFIG;
				}
				if (d > 0 && d < 1e-9) { /* every duration is timed in ns */
					snprintf(why, whylen,
						 "'%s' is below the 1 ns resolution of every "
						 "duration: use 0 or at least 1ns",
						 text);
					return -FB_ECONFIG;
				}
				*out = d;
				return 0;
			}
		}
	}
	snprintf(why, whylen, "bad duration unit in '%s': expected ns, us, ms, s, m or h", text);
	return -FB_ECONFIG;
}

static int parse_double(const char *text, double *out, char *why, size_t whylen)
{
	const char *s = skip_space(text);
	char *end;

	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *skip_space(end) != '\0' || !isfinite(v) || errno == ERANGE) {
		snprintf(why, whylen, "expected a finite number, got '%s'", text);
		return -FB_ECONFIG;
	}
	*out = v;
	return 0;
}

static void choices_list(const char *const *choices, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; choices[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", choices[i]);
}

static int find_choice(const char *const *choices, const char *text)
{
	for (int i = 0; choices[i]; i++)
		if (strcasecmp(choices[i], text) == 0)
			return i;
	return -1;
}

static bool out_of_range(const struct cfg_key *k, double v)
{
	return k->min <= k->max && (v < k->min || v > k->max);
}

static int not_a_choice(const struct cfg_key *k, const char *text, char *why, size_t whylen)
{
	char list[256];

	choices_list(k->choices, list, sizeof(list));
	snprintf(why, whylen, "'%s' is not one of: %s", text, list);
	return -FB_ECONFIG;
}

static int assign_int(const struct cfg_key *k, const char *text, int64_t *dst, char *why,
		      size_t whylen)
{
	bool can_auto = k->flags & CFG_F_AUTO;
	int64_t v;
	int rc;

	if (can_auto && strcasecmp(text, "auto") == 0) {
		*dst = 0;
		return 0;
	}
	if ((rc = cfg_parse_int(text, &v, why, whylen)) < 0) {
		if (can_auto && strncmp(why, "expected an integer", 19) == 0)
			snprintf(why, whylen, "expected auto or an integer, got '%s'", text);
		return rc;
	}
	if (out_of_range(k, (double)v)) {
		snprintf(why, whylen, "%" PRId64 " is out of range: expected %s%.0f to %.0f", v,
			 can_auto ? "auto or " : "", k->min, k->max);
		return -FB_ECONFIG;
	}
	*dst = v;
	return 0;
}

static int assign_size(const struct cfg_key *k, const char *text, uint64_t *dst, char *why,
		       size_t whylen)
{
	uint64_t v;
	int rc;

	if ((rc = cfg_parse_size(text, &v, why, whylen)) < 0)
		return rc;
	if (out_of_range(k, (double)v)) {
		snprintf(why, whylen,
			 "%" PRIu64 " bytes is out of range: expected %.0f to %.0f bytes", v,
			 k->min, k->max);
		return -FB_ECONFIG;
	}
	*dst = v;
	return 0;
}

/* CFG_DOUBLE and CFG_DURATION (a number with a unit of time, in seconds). */
static int assign_double(const struct cfg_key *k, const char *text, double *dst, char *why,
			 size_t whylen)
{
	double v;
	int rc = k->type == CFG_DURATION ? cfg_parse_duration(text, &v, why, whylen)
					 : parse_double(text, &v, why, whylen);

	if (rc < 0)
		return rc;
	if (out_of_range(k, v)) {
		snprintf(why, whylen, "%g is out of range: expected %g to %g%s", v, k->min, k->max,
			 k->type == CFG_DURATION ? " seconds" : "");
		return -FB_ECONFIG;
	}
	*dst = v;
	return 0;
}

/* A string, or one of the key's choices in its canonical spelling. */
static int assign_string(const struct cfg_key *k, const char *text, char *dst, char *why,
			 size_t whylen)
{
	if (k->choices && find_choice(k->choices, text) < 0)
		return not_a_choice(k, text, why, whylen);
	if (strlen(text) >= k->size) {
		snprintf(why, whylen, "value longer than %zu characters", k->size - 1);
		return -FB_ECONFIG;
	}
	strcpy(dst, text);
	if (k->choices) /* canonical spelling */
		strcpy(dst, k->choices[find_choice(k->choices, text)]);
	return 0;
}

/* Samples per chunk: none or contiguous (0), sample (-1), or a number >= 1. */
static int assign_chunk(const char *text, int64_t *dst, char *why, size_t whylen)
{
	int64_t v;

	if (strcasecmp(text, "none") == 0 || strcasecmp(text, "contiguous") == 0) {
		*dst = 0;
		return 0;
	}
	if (strcasecmp(text, "sample") == 0) {
		*dst = -1;
		return 0;
	}
	if (cfg_parse_int(text, &v, why, whylen) < 0 || v < 1) {
		snprintf(why, whylen,
			 "expected none, sample or a number of samples per chunk >= 1, got '%s'",
			 text);
		return -FB_ECONFIG;
	}
	*dst = v;
	return 0;
}

/* Parses text into the key's field. why receives the reason on failure. */
static int cfg_assign(struct config *cfg, const struct cfg_key *k, const char *text, char *why,
		      size_t whylen)
{
	void *dst = cfg_field(cfg, k);

	switch (k->type) {
	case CFG_BOOL:
		return cfg_parse_bool(text, dst, why, whylen);
	case CFG_INT:
		return assign_int(k, text, dst, why, whylen);
	case CFG_SIZE:
		return assign_size(k, text, dst, why, whylen);
	case CFG_DURATION:
	case CFG_DOUBLE:
		return assign_double(k, text, dst, why, whylen);
	case CFG_STRING:
		return assign_string(k, text, dst, why, whylen);
	case CFG_CHOICE: {
		int c = find_choice(k->choices, text);
		if (c < 0)
			return not_a_choice(k, text, why, whylen);
		*(int *)dst = c;
		return 0;
	}
	case CFG_CHUNK:
		return assign_chunk(text, dst, why, whylen);
	}
	snprintf(why, whylen, "internal: unknown key type");
	return -FB_EINTERNAL;
}

void cfg_defaults(struct config *cfg)
{
	char why[256];

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < cfg_nkeys; i++)
		cfg_assign(cfg, &cfg_keys[i], cfg_keys[i].def, why, sizeof(why));
}

/* ---- INI parsing ----------------------------------------------------------------------- */

struct parse_state {
	struct config *cfg;
	struct fb_errbuf *err;
	const char *source;
	int *key_lines; /* line of the n-th handler call, from the pre-scan */
	int nkey_lines;
	char (*sections)[CFG_NAME_MAX]; /* section header text per line */
	int *section_lines;
	int nsections;
	int call;	    /* handler calls so far */
	int seen_line[256]; /* per key row: line it was set on in this file */
	int hint_lines[CFG_MAX_HINTS];
	int rc;
};

static int section_line(const struct parse_state *st, const char *section)
{
	for (int i = 0; i < st->nsections; i++)
		if (strcmp(st->sections[i], section) == 0)
			return st->section_lines[i];
	return 0;
}

static int cfg_add_hint(struct parse_state *st, const char *name, const char *value, int line)
{
	struct config *cfg = st->cfg;

	for (int i = 0; i < cfg->mpiio.nhints; i++) {
		if (strcmp(cfg->mpiio.hints[i].key, name) == 0) {
			if (cfg->mpiio.hints[i].line > 0 && line > 0)
				return fb_fail(st->err, -FB_ECONFIG,
					       "%s:%d: duplicate key '%s' in [storage.mpiio] "
					       "(first set on line %d)",
					       st->source, line, name, cfg->mpiio.hints[i].line);
			snprintf(cfg->mpiio.hints[i].value, CFG_HINT_MAX, "%s", value);
			cfg->mpiio.hints[i].line = line;
			return 0;
		}
	}
	if (cfg->mpiio.nhints >= CFG_MAX_HINTS)
		return fb_fail(st->err, -FB_ECONFIG, "%s:%d: more than %d MPI-IO hints", st->source,
			       line, CFG_MAX_HINTS);
	/* MPI_Info_set aborts the job (MPI_ERRORS_ARE_FATAL) on a key or value it refuses. */
	if (!*name && line > 0)
		return fb_fail(st->err, -FB_ECONFIG,
			       "%s:%d: [storage.mpiio] has a hint with no name ('= %s'): write "
			       "name = value",
			       st->source, line, value);
	if (!*name)
		return fb_fail(st->err, -FB_EUSAGE,
			       "--set storage.mpiio.=%s: an MPI-IO hint needs a name "
			       "(storage.mpiio.NAME=value)",
			       value);
	/* config.ini writes "name = value": a ':', '=', ';' or blank in the name would read back
	 * as another key. Hint names are words (romio_cb_read, cb_buffer_size). */
	size_t ok =
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.");
	if (name[ok] && line > 0)
		return fb_fail(st->err, -FB_ECONFIG,
			       "%s:%d: MPI-IO hint name '%s' holds '%c': hint names are letters, "
			       "digits, '_', '-' and '.'",
			       st->source, line, name, name[ok]);
	if (name[ok])
		return fb_fail(st->err, -FB_EUSAGE,
			       "--set storage.mpiio.%s: the hint name holds '%c': hint names are "
			       "letters, digits, '_', '-' and '.'",
			       name, name[ok]);
	if (strlen(name) >= CFG_NAME_MAX || strlen(name) >= MPI_MAX_INFO_KEY ||
	    strlen(value) >= CFG_HINT_MAX || strlen(value) >= MPI_MAX_INFO_VAL)
		return fb_fail(st->err, -FB_ECONFIG,
			       "%s:%d: MPI-IO hint '%s' is too long (names up to %d bytes, values "
			       "up to %d)",
			       st->source, line, name, MPI_MAX_INFO_KEY - 1,
			       (CFG_HINT_MAX < MPI_MAX_INFO_VAL ? CFG_HINT_MAX : MPI_MAX_INFO_VAL) -
				   1);
	struct cfg_hint *h = &cfg->mpiio.hints[cfg->mpiio.nhints++];
	snprintf(h->key, sizeof(h->key), "%s", name);
	snprintf(h->value, sizeof(h->value), "%s", value);
	h->line = line;
	return 0;
}

static int cfg_add_sweep(struct parse_state *st, const char *name, const char *value, int line)
{
	struct config *cfg = st->cfg;

	if (!cfg_find_dotted(name)) {
		const char *dot = strrchr(name, '.');
		const struct cfg_key *s = NULL;
		if (dot) {
			char sec[CFG_NAME_MAX];
			snprintf(sec, sizeof(sec), "%.*s", (int)(dot - name), name);
			s = cfg_suggest(sec, dot + 1);
		}
		if (s)
			return fb_fail(
			    st->err, -FB_ECONFIG,
			    "%s:%d: [sweep] names unknown key '%s' (did you mean '%s.%s'?)",
			    st->source, line, name, s->section, s->name);
		return fb_fail(st->err, -FB_ECONFIG,
			       "%s:%d: [sweep] names unknown key '%s' (expected section.key)",
			       st->source, line, name);
	}
	for (int i = 0; i < cfg->sweep.nkeys; i++)
		if (strcmp(cfg->sweep.keys[i].key, name) == 0)
			return fb_fail(
			    st->err, -FB_ECONFIG,
			    "%s:%d: duplicate key '%s' in [sweep] (first set on line %d)",
			    st->source, line, name, cfg->sweep.keys[i].line);
	if (cfg->sweep.nkeys >= CFG_MAX_SWEEP)
		return fb_fail(st->err, -FB_ECONFIG, "%s:%d: more than %d swept keys", st->source,
			       line, CFG_MAX_SWEEP);
	struct cfg_sweep_key *k = &cfg->sweep.keys[cfg->sweep.nkeys++];
	snprintf(k->key, sizeof(k->key), "%s", name);
	snprintf(k->values, sizeof(k->values), "%s", value);
	k->line = line;
	return 0;
}

static int cfg_ini_handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse_state *st = user;
	int line = st->call < st->nkey_lines ? st->key_lines[st->call] : 0;
	const struct cfg_key *k;
	char why[512];

	st->call++;
	if (st->rc)
		return 0;
	/* "key =;x" holds ";x", which config.ini (written "key = ;x") would read as a comment. */
	if (value[0] == ';') {
		st->rc = fb_fail(st->err, -FB_ECONFIG,
				 "%s:%d: the value of '%s' begins with ';', which INI reads as a "
				 "comment",
				 st->source, line, name);
		return 0;
	}
	if (!cfg_section_known(section) && strcmp(section, "sweep") != 0) {
		int sl = section_line(st, section);
		st->rc = fb_fail(st->err, -FB_ECONFIG,
				 "%s:%d: unknown section [%s] (sections: workload, dataset, "
				 "format.hdf5, format.tfrecord, format.npz, format.wds, storage, "
				 "storage.mpiio, reader, train, evaluation, output, sweep)",
				 st->source, sl ? sl : line, section);
		return 0;
	}
	k = cfg_find(section, name);
	if (!k && strcmp(section, "storage.mpiio") == 0) {
		st->rc = cfg_add_hint(st, name, value, line);
		return st->rc == 0;
	}
	if (!k && strcmp(section, "sweep") == 0 && strchr(name, '.')) {
		st->rc = cfg_add_sweep(st, name, value, line);
		return st->rc == 0;
	}
	if (!k) {
		const struct cfg_key *s = cfg_suggest(section, name);
		if (s && strcmp(s->section, section) == 0)
			st->rc = fb_fail(st->err, -FB_ECONFIG,
					 "%s:%d: unknown key '%s' in [%s] (did you mean '%s'?)",
					 st->source, line, name, section, s->name);
		else if (s)
			st->rc =
			    fb_fail(st->err, -FB_ECONFIG,
				    "%s:%d: unknown key '%s' in [%s] (did you mean '%s' in [%s]?)",
				    st->source, line, name, section, s->name, s->section);
		else
			st->rc = fb_fail(st->err, -FB_ECONFIG,
					 "%s:%d: unknown key '%s' in [%s] (see `feedbench keys`)",
					 st->source, line, name, section);
		return 0;
	}
	size_t idx = cfg_key_index(k);
	if (st->seen_line[idx]) {
		st->rc = fb_fail(st->err, -FB_ECONFIG,
				 "%s:%d: duplicate key '%s' in [%s] (first set on line %d)",
				 st->source, line, name, section, st->seen_line[idx]);
		return 0;
	}
	st->seen_line[idx] = line ? line : -1;
	if (cfg_assign(st->cfg, k, value, why, sizeof(why)) < 0) {
		st->rc = fb_fail(st->err, -FB_ECONFIG, "%s:%d: [%s] %s: %s", st->source, line,
				 section, name, why);
		return 0;
	}
	st->cfg->lines[idx] = line;
	return 1;
}

/* Mirrors inih's line classification to learn the line of each key (inih does not report
 * it), and refuses what inih would silently mangle: long lines, NUL bytes. */
static int prescan(struct parse_state *st, const char *text, size_t len)
{
	int line = 0, cap = 64, scap = 16;
	bool prev_key = false;
	size_t i = 0;

	st->key_lines = malloc(sizeof(int) * (size_t)cap);
	st->sections = malloc(sizeof(*st->sections) * (size_t)scap);
	st->section_lines = malloc(sizeof(int) * (size_t)scap);
	if (!st->key_lines || !st->sections || !st->section_lines)
		return fb_fail(st->err, -ENOMEM, "out of memory parsing %s", st->source);
	while (i < len) {
		size_t start = i, end;
		line++;
		while (i < len && text[i] != '\n')
			i++;
		end = i;
		if (i < len)
			i++;
		if (memchr(text + start, '\0', end - start))
			return fb_fail(st->err, -FB_ECONFIG, "%s:%d: NUL byte in the config file",
				       st->source, line);
		if (end > start && text[end - 1] == '\r')
			end--;
		if (end - start > CFG_LINE_MAX)
			return fb_fail(st->err, -FB_ECONFIG,
				       "%s:%d: line is %zu characters long; the INI parser accepts "
				       "at most %d",
				       st->source, line, end - start, CFG_LINE_MAX);
		const char *p = text + start;
		while (p < text + end && isspace((unsigned char)*p))
			p++;
		if (p == text + end || *p == ';' || *p == '#')
			continue;
		if (*p == '[') {
			const char *close = memchr(p, ']', (size_t)(text + end - p));
			if (st->nsections == scap) {
				scap *= 2;
				st->sections =
				    realloc(st->sections, sizeof(*st->sections) * (size_t)scap);
				st->section_lines =
				    realloc(st->section_lines, sizeof(int) * (size_t)scap);
				if (!st->sections || !st->section_lines)
					return fb_fail(st->err, -ENOMEM, "out of memory");
			}
			if (!close)
				return fb_fail(st->err, -FB_ECONFIG,
					       "%s:%d: section header without a closing ']'",
					       st->source, line);
			snprintf(st->sections[st->nsections], CFG_NAME_MAX, "%.*s",
				 (int)(close - p - 1), p + 1);
			st->section_lines[st->nsections++] = line;
			prev_key = false;
			continue;
		}
		bool continuation = prev_key && p > text + start;
		if (!continuation && !memchr(p, '=', (size_t)(text + end - p)) &&
		    !memchr(p, ':', (size_t)(text + end - p)))
			return fb_fail(st->err, -FB_ECONFIG,
				       "%s:%d: cannot parse this line (expected [section] or key = "
				       "value)",
				       st->source, line);
		if (st->nkey_lines == cap) {
			cap *= 2;
			st->key_lines = realloc(st->key_lines, sizeof(int) * (size_t)cap);
			if (!st->key_lines)
				return fb_fail(st->err, -ENOMEM, "out of memory");
		}
		st->key_lines[st->nkey_lines++] = line;
		prev_key = true;
	}
	return 0;
}

int cfg_parse_text(struct config *cfg, const char *text, size_t len, const char *source,
		   struct fb_errbuf *err)
{
	struct parse_state st = {.cfg = cfg, .err = err, .source = source};
	char *copy = NULL;
	int rc, line;

	snprintf(cfg->source, sizeof(cfg->source), "%s", source);
	/* A UTF-8 byte order mark (Windows editors write one) is no part of line 1. */
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
		text += 3;
		len -= 3;
	}
	rc = prescan(&st, text, len);
	if (rc < 0)
		goto out;
	if (st.nkey_lines == 0) {
		rc = fb_fail(err, -FB_ECONFIG,
			     "%s: the config file is empty (no key = value lines)", source);
		goto out;
	}
	/* CRLF: drop the carriage returns so values never end in '\r'. */
	copy = malloc(len + 1);
	if (!copy) {
		rc = fb_fail(err, -ENOMEM, "out of memory parsing %s", source);
		goto out;
	}
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		if (!(text[i] == '\r' && (i + 1 == len || text[i + 1] == '\n')))
			copy[n++] = text[i];
	copy[n] = '\0';
	line = ini_parse_string(copy, cfg_ini_handler, &st);
	if (st.rc) {
		rc = st.rc;
	} else if (line > 0) {
		rc = fb_fail(err, -FB_ECONFIG,
			     "%s:%d: cannot parse this line (expected [section] or key = value)",
			     source, line);
	} else if (line < 0) {
		rc = fb_fail(err, -FB_ECONFIG, "%s: cannot parse the config", source);
	}
out:
	free(copy);
	free(st.key_lines);
	free(st.sections);
	free(st.section_lines);
	return rc;
}

int cfg_value_check(const char *value, char *why, size_t len)
{
	const char *v = value;

	if (!strpbrk(v, "\r\n") && *v != ';' && !strstr(v, " ;") && !strstr(v, "\t;"))
		return 0;
	snprintf(why, len,
		 "a value cannot hold a line break, begin with ';' or hold ' ;' (an INI comment)");
	return -FB_EUSAGE;
}

int cfg_set(struct config *cfg, const char *assignment, struct fb_errbuf *err)
{
	const char *eq = strchr(assignment, '=');
	char dotted[CFG_NAME_MAX * 2], why[512], value[CFG_PATH_MAX];
	const struct cfg_key *k;

	if (!eq || eq == assignment)
		return fb_fail(err, -FB_EUSAGE, "--set %s: expected section.key=value", assignment);
	snprintf(dotted, sizeof(dotted), "%.*s", (int)(eq - assignment), assignment);
	snprintf(value, sizeof(value), "%s", eq + 1);
	/* trim */
	for (char *e = dotted + strlen(dotted); e > dotted && isspace((unsigned char)e[-1]);)
		*--e = '\0';
	const char *v = skip_space(value);
	/* A value is read as in a file (trailing blanks and a CR dropped); one a file cannot hold
	 * is refused, so that config.ini, the effective config, parses back to the config run. */
	for (char *e = value + strlen(value); e > v && isspace((unsigned char)e[-1]);)
		*--e = '\0';
	if (cfg_value_check(v, why, sizeof(why)) < 0)
		return fb_fail(err, -FB_EUSAGE, "--set %s: %s", dotted, why);
	const char *leaf = strrchr(dotted, '.');
	size_t width = strlen(leaf ? leaf + 1 : dotted) + 3 + strlen(v);
	if (width > CFG_LINE_MAX)
		return fb_fail(err, -FB_EUSAGE,
			       "--set %s: as a config line ('%s = ...') this is %zu characters; "
			       "config files hold at most %d, so config.ini could not be read back",
			       dotted, leaf ? leaf + 1 : dotted, width, CFG_LINE_MAX);
	k = cfg_find_dotted(dotted);
	if (!k) {
		const char *dot = strrchr(dotted, '.');
		if (dot && strncmp(dotted, "storage.mpiio.", 14) == 0 && dot == dotted + 13) {
			struct parse_state st = {.cfg = cfg, .err = err, .source = "--set"};
			return cfg_add_hint(&st, dot + 1, v, -1);
		}
		if (dot) {
			char sec[CFG_NAME_MAX];
			snprintf(sec, sizeof(sec), "%.*s", (int)(dot - dotted), dotted);
			const struct cfg_key *s = cfg_suggest(sec, dot + 1);
			if (s)
				return fb_fail(err, -FB_EUSAGE,
					       "--set %s: unknown key (did you mean '%s.%s'?)",
					       dotted, s->section, s->name);
		}
		return fb_fail(err, -FB_EUSAGE, "--set %s: unknown key (see `feedbench keys`)",
			       dotted);
	}
	if (cfg_assign(cfg, k, v, why, sizeof(why)) < 0)
		return fb_fail(err, -FB_ECONFIG, "--set %s: %s", dotted, why);
	cfg->lines[cfg_key_index(k)] = -1;
	return 0;
}

/* ---- output -------------------------------------------------------------------------- */

void cfg_format_value(const struct config *cfg, const struct cfg_key *k, char *buf, size_t len)
{
	const void *v = cfg_field(cfg, k);

	switch (k->type) {
	case CFG_BOOL:
		snprintf(buf, len, "%s", *(const bool *)v ? "true" : "false");
		break;
	case CFG_INT:
		if ((k->flags & CFG_F_AUTO) && *(const int64_t *)v == 0)
			snprintf(buf, len, "auto");
		else
			snprintf(buf, len, "%" PRId64, *(const int64_t *)v);
		break;
	case CFG_SIZE:
		snprintf(buf, len, "%" PRIu64, *(const uint64_t *)v);
		break;
	case CFG_DURATION: {
		/* 9 significant digits, as numbers are written, but never in exponent form: a
		 * duration is read back by cfg_parse_duration, which takes plain decimals only
		 * ("5e-05" would read as 5 with unit "e-05"). */
		double d = *(const double *)v;
		int n = snprintf(buf, len, "%.9g", d);
		if (n > 0 && strchr(buf, 'e')) {
			int dec = 8 - (int)floor(log10(d));
			snprintf(buf, len, "%.*f", dec < 0 ? 0 : dec, d);
			if (strchr(buf, '.')) { /* trailing zeros carry nothing */
				char *end = buf + strlen(buf) - 1;
				while (*end == '0')
					*end-- = '\0';
				if (*end == '.')
					*end = '\0';
			}
		}
		break;
	}
	case CFG_DOUBLE:
		snprintf(buf, len, "%.9g", *(const double *)v);
		break;
	case CFG_STRING:
		snprintf(buf, len, "%s", (const char *)v);
		break;
	case CFG_CHOICE:
		snprintf(buf, len, "%s", k->choices[*(const int *)v]);
		break;
	case CFG_CHUNK: {
		int64_t c = *(const int64_t *)v;
		if (c == 0)
			snprintf(buf, len, "none");
		else if (c < 0)
			snprintf(buf, len, "sample");
		else
			snprintf(buf, len, "%" PRId64, c);
		break;
	}
	}
}

const char *cfg_choice_name(const char *section, const char *name, int value)
{
	const struct cfg_key *k = cfg_find(section, name);

	if (!k || k->type != CFG_CHOICE || value < 0)
		return "?";
	for (int i = 0; k->choices[i]; i++)
		if (i == value)
			return k->choices[i];
	return "?";
}

/* Writes the keys selected by `want` (flags mask test) as INI. */
static void cfg_write_selected(const struct config *cfg, FILE *out, bool hashing, bool dataset)
{
	const char *section = "";
	char val[CFG_PATH_MAX];

	for (size_t i = 0; i < cfg_nkeys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		if (hashing && ((k->flags & CFG_F_NOHASH) || strcmp(k->section, "output") == 0 ||
				strcmp(k->section, "sweep") == 0))
			continue;
		if (dataset && !(k->flags & CFG_F_DATASET))
			continue;
		if (!hashing && !dataset && strcmp(k->section, "sweep") == 0 &&
		    cfg->sweep.nkeys == 0)
			continue;
		if (strcmp(section, k->section) != 0) {
			fprintf(out, "%s[%s]\n", *section ? "\n" : "", k->section);
			section = k->section;
		}
		cfg_format_value(cfg, k, val, sizeof(val));
		fprintf(out, "%s = %s\n", k->name, val);
		/* A section's free-form lines (MPI-IO hints, sweep axes) once, after its last row.
		 */
		if (i + 1 < cfg_nkeys && strcmp(cfg_keys[i + 1].section, k->section) == 0)
			continue;
		if (strcmp(k->section, "storage.mpiio") == 0 && !dataset)
			for (int h = 0; h < cfg->mpiio.nhints; h++)
				fprintf(out, "%s = %s\n", cfg->mpiio.hints[h].key,
					cfg->mpiio.hints[h].value);
		if (strcmp(k->section, "sweep") == 0 && !hashing && !dataset)
			for (int s = 0; s < cfg->sweep.nkeys; s++)
				fprintf(out, "%s = %s\n", cfg->sweep.keys[s].key,
					cfg->sweep.keys[s].values);
	}
}

void cfg_write_ini(const struct config *cfg, FILE *out)
{
	fprintf(out, "; effective feedbench configuration (every key, defaults included)\n");
	cfg_write_selected(cfg, out, false, false);
}

static void cfg_sha256(const struct config *cfg, bool dataset, char hex[65])
{
	struct sha256_ctx ctx;
	uint8_t digest[SHA256_DIGEST_SIZE];
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);

	if (mem) {
		cfg_write_selected(cfg, mem, true, dataset);
		fclose(mem);
	}
	sha256_init(&ctx);
	if (buf)
		sha256_update(&ctx, len, (const uint8_t *)buf);
	sha256_digest(&ctx, sizeof(digest), digest);
	free(buf);
	for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
}

void cfg_hash(const struct config *cfg, char hex[65])
{
	cfg_sha256(cfg, false, hex);
}

void cfg_dataset_hash(const struct config *cfg, char hex[65])
{
	cfg_sha256(cfg, true, hex);
}

uint64_t cfg_dataset_id(const struct config *cfg)
{
	char hex[65], part[17];

	cfg_dataset_hash(cfg, hex);
	memcpy(part, hex, 16);
	part[16] = '\0';
	return strtoull(part, NULL, 16);
}

static const char *type_name(enum cfg_type t)
{
	switch (t) {
	case CFG_BOOL:
		return "bool";
	case CFG_INT:
		return "integer";
	case CFG_SIZE:
		return "size";
	case CFG_DURATION:
		return "duration";
	case CFG_DOUBLE:
		return "number";
	case CFG_STRING:
		return "string";
	case CFG_CHOICE:
		return "choice";
	case CFG_CHUNK:
		return "none|sample|N";
	}
	return "?";
}

void cfg_write_keys_markdown(FILE *out)
{
	const char *section = "";
	char range[256];

	fprintf(out, "# feedbench configuration keys\n\n"
		     "Sizes take units: `4k` = `4KiB` = 4096, `1.5GiB`, `1MB` = 10^6 bytes. "
		     "Durations take units: `850us`, `2ms`, `0.5s`, `1m`. Booleans: true/false, "
		     "yes/no, on/off, 1/0.\nKeys marked *dataset* change the files on disk: "
		     "changing one regenerates the dataset under `generate = auto`.\n");
	for (size_t i = 0; i < cfg_nkeys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		if (strcmp(section, k->section) != 0) {
			fprintf(out,
				"\n## [%s]\n\n| key | type | default | range or choices | help |\n"
				"|---|---|---|---|---|\n",
				k->section);
			section = k->section;
		}
		range[0] = '\0';
		if (k->choices)
			choices_list(k->choices, range, sizeof(range));
		else if (k->min <= k->max)
			snprintf(range, sizeof(range), "%s%g to %g",
				 (k->flags & CFG_F_AUTO) ? "auto, " : "", k->min, k->max);
		fprintf(out, "| `%s` | %s%s | `%s` | %s | %s |\n", k->name, type_name(k->type),
			(k->flags & CFG_F_DATASET) ? ", *dataset*" : "", k->def, range, k->help);
	}
	fprintf(out,
		"\n`[storage.mpiio]`: every key other than `collective` is passed verbatim as "
		"an MPI-IO hint; the hints in effect are read back and recorded.\n"
		"`[sweep]`: `section.key = v1, v2, ...` or ranges `1..16*2` (powers of two), "
		"`1..8` (steps of one), `0..100+25`; the cartesian product of all lines, except "
		"the keys named by `zip`, whose lists are walked together.\n");
}

int cfg_read_file(const char *path, char **text, size_t *len, struct fb_errbuf *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf;
	size_t got = 0;

	if (fd < 0)
		return fb_fail(err, -FB_EUSAGE, "cannot open config '%s': %s", path,
			       strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fb_fail(err, -FB_EUSAGE, "cannot read config '%s': not a regular file",
			       path);
	}
	if (st.st_size > 16 * 1024 * 1024) {
		close(fd);
		return fb_fail(err, -FB_ECONFIG, "config '%s' is larger than 16 MiB", path);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return fb_fail(err, -ENOMEM, "out of memory reading '%s'", path);
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			close(fd);
			free(buf);
			return fb_fail(err, -FB_EUSAGE, "cannot read config '%s': %s", path,
				       strerror(e));
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return 0;
}
