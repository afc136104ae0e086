/* import-trace's readers: Chrome trace events in JSON lines (dftracer, feedbench, any tracer
 * writing complete "X" events) and darshan-dxt-parser's text, line by line, with bounded lines.
 * Every event that matters goes to import_trace.c's it_* calls; a bad line stops the import
 * with its file and line number (t->err). */
#include "import_trace.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <unistd.h>

#include "errors.h"
#include "safefile.h"
#include "util.h"

/* Where the reader is: the file, its line, and its kind once known. */
struct it_src {
	const char *name;
	long line;
	int kind; /* 0: not known yet, 1: JSON lines, 2: DXT */
	char dxt_file[4096];
	int64_t dxt_rank;
};

static int it_bad(struct it *t, const struct it_src *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int it_bad(struct it *t, const struct it_src *s, const char *fmt, ...)
{
	char what[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(t->err, sizeof(t->err), "'%s' line %ld: %s", s->name, s->line, what);
	return -1;
}

/* ---- Chrome trace events ------------------------------------------------------------- */

/* A number member (integer, real, or a string of digits as some tracers write). */
static bool num_of(json_t *obj, const char *key, double *v)
{
	json_t *j = json_object_get(obj, key);
	char *end;

	if (json_is_number(j)) {
		*v = json_number_value(j);
		return true;
	}
	if (json_is_string(j)) {
		*v = strtod(json_string_value(j), &end);
		return end != json_string_value(j) && *end == '\0';
	}
	return false;
}

static const char *fh_name(const struct it *t, const char *hash)
{
	for (size_t i = 0; i < t->nfh; i++)
		if (strcmp(t->fh[i].hash, hash) == 0)
			return t->fh[i].path;
	return NULL;
}

/* dftracer's {"name":"FH","ph":"M","args":{"name":PATH,"value":HASH}}. */
static int fh_add(struct it *t, json_t *args)
{
	const char *path = json_string_value(json_object_get(args, "name"));
	json_t *v = json_object_get(args, "value");
	char hash[40];

	if (!path)
		return 0;
	if (json_is_string(v))
		snprintf(hash, sizeof(hash), "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(hash, sizeof(hash), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else
		return 0;
	if (t->nfh == t->fhcap) {
		size_t cap = t->fhcap ? t->fhcap * 2 : 256;
		struct it_fh *fh = cap <= IT_MAX_FILES ? realloc(t->fh, cap * sizeof(*fh)) : NULL;
		if (!fh)
			return -ENOSPC;
		t->fh = fh;
		t->fhcap = cap;
	}
	if (!(t->fh[t->nfh].path = strdup(path)))
		return -ENOMEM;
	memcpy(t->fh[t->nfh++].hash, hash, sizeof(hash));
	return 0;
}

/* The file an event names: args.fname, or args.fhash through the FH events. */
static const char *event_file(const struct it *t, json_t *args)
{
	const char *p = json_string_value(json_object_get(args, "fname"));
	json_t *h = json_object_get(args, "fhash");
	char hash[40];

	if (p || !h)
		return p;
	if (json_is_integer(h))
		snprintf(hash, sizeof(hash), "%" JSON_INTEGER_FORMAT, json_integer_value(h));
	else if (json_is_string(h))
		snprintf(hash, sizeof(hash), "%s", json_string_value(h));
	else
		return NULL;
	return fh_name(t, hash);
}

static bool name_is(const char *base, const char *const *names)
{
	for (; *names; names++)
		if (strcasecmp(base, *names) == 0)
			return true;
	return false;
}

static const char *const it_reads[] = {"read",	  "pread", "pread64", "preadv",
				       "preadv2", "readv", "fread",   NULL};
static const char *const it_opens[] = {"open", "open64", "openat", "fopen", "fopen64", NULL};
static const char *const it_writes[] = {"write",  "pwrite", "pwrite64", "pwritev",
					"writev", "fwrite", NULL};

/* A read or open naming a file: counted; offsets missing (read()) follow a per-file cursor. */
static int io_event(struct it *t, const struct it_src *s, json_t *args, const char *base,
		    int64_t pid, int64_t tid, double ts, double dur, double tdur)
{
	const char *path = event_file(t, args);
	double off, size;
	int rc;

	if (!path) {
		t->unnamed++;
		return 0;
	}
	if (name_is(base, it_opens)) {
		rc = it_open(t, pid, tid, path, dur, tdur);
		struct it_file *f = rc == 0 ? it_file_get(t, path) : NULL;
		if (f)
			f->cursor = 0;
	} else {
		if (!(num_of(args, "ret", &size) && size >= 0) && !num_of(args, "size", &size))
			return it_bad(t, s, "a %s event without a size (args.ret or args.size)",
				      base);
		struct it_file *f = it_file_get(t, path);
		if (!f)
			return it_bad(t, s, "more than %d files", IT_MAX_FILES);
		if (!num_of(args, "offset", &off))
			off = (double)f->cursor;
		if (size < 0 || off < 0 || size > 1e18 || off > 1e18)
			return it_bad(t, s, "a %s of %.0f bytes at offset %.0f", base, size, off);
		f->cursor = (uint64_t)off + (uint64_t)size;
		rc = it_read(t, pid, tid, path, (uint64_t)off, (uint64_t)size, ts, dur, tdur);
	}
	return rc < 0
		   ? it_bad(t, s, "more than %d files or %d threads", IT_MAX_FILES, IT_MAX_THREADS)
		   : 0;
}

/* One complete event ("ph":"X"). */
static int x_event(struct it *t, const struct it_src *s, json_t *ev, const char *name)
{
	json_t *args = json_object_get(ev, "args");
	const char *dot = strrchr(name, '.'), *base = dot ? dot + 1 : name;
	double ts, dur, pid = 0, tid = 0, tdur = -1;

	if (!num_of(ev, "ts", &ts) || !num_of(ev, "dur", &dur) || !(dur >= 0 && dur <= 1e15) ||
	    !isfinite(ts))
		return it_bad(t, s, "event '%.100s' has no number ts and dur >= 0", name);
	/* Chrome's thread duration: the thread's CPU time over the event (µs) */
	if (json_object_get(ev, "tdur") &&
	    (!num_of(ev, "tdur", &tdur) || !(tdur >= 0 && tdur <= 1e15)))
		return it_bad(t, s, "event '%.100s': tdur is not a number >= 0", name);
	if ((json_object_get(ev, "pid") && !num_of(ev, "pid", &pid)) ||
	    (json_object_get(ev, "tid") && !num_of(ev, "tid", &tid)) || !(fabs(pid) <= 9e18) ||
	    !(fabs(tid) <= 9e18))
		return it_bad(t, s, "event '%.100s': pid or tid is not a number", name);
	if (name_is(base, it_reads) || name_is(base, it_opens))
		return io_event(t, s, args, base, (int64_t)pid, (int64_t)tid, ts, dur, tdur);
	if (name_is(base, it_writes)) {
		double size = 0;
		t->writes++;
		if (num_of(args, "size", &size) && size > 0 && size < 1e18)
			t->write_bytes += (uint64_t)size;
	} else if (strcasestr(base, "compute")) {
		double step = -1;
		if (!num_of(args, "step", &step) || !(fabs(step) < 9e18))
			step = -1;
		it_compute(t, (int64_t)pid, dur, tdur, (int64_t)step);
	} else if (strcasestr(base, "fetch") || strcasecmp(base, "data_wait") == 0) {
		it_fetch(t, dur, tdur); /* the trainer's wait for its next batch */
	} else if (strcmp(base, "__getitem__") == 0 || strcasecmp(base, "getitem") == 0) {
		if (it_sample(t, (int64_t)pid, (int64_t)tid, dur, tdur) < 0)
			return it_bad(t, s, "more than %d threads", IT_MAX_THREADS);
	} else {
		t->skipped++;
	}
	return 0;
}

/* A CPU counter: {"ph":"C","pid":P,"args":{"cpu_us":N}}, process P's CPU time so far (µs,
 * every thread), as a tracer samples it (Python's time.process_time, /proc/PID/stat). */
static int cpu_counter(struct it *t, const struct it_src *s, json_t *ev, const char *name)
{
	double pid = 0, cpu;

	if (!num_of(json_object_get(ev, "args"), "cpu_us", &cpu) || !(cpu >= 0 && cpu <= 1e15))
		return it_bad(t, s, "counter '%.100s': args.cpu_us is not a number >= 0", name);
	if (json_object_get(ev, "pid") && (!num_of(ev, "pid", &pid) || !(fabs(pid) <= 9e18)))
		return it_bad(t, s, "counter '%.100s': pid is not a number", name);
	it_counter(t, (int64_t)pid, cpu);
	return 0;
}

static int json_line(struct it *t, struct it_src *s, char *line, size_t len)
{
	json_error_t jerr;
	json_t *ev;
	int rc = 0;

	while (len > 0 && (isspace((unsigned char)line[len - 1]) || line[len - 1] == ','))
		line[--len] = '\0'; /* dftracer's lines stand alone; a JSON array's have commas */
	if (len == 0 || strcmp(line, "[") == 0 || strcmp(line, "]") == 0)
		return 0;
	if (!(ev = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr)))
		return it_bad(t, s, "not a JSON event: %s (column %d)", jerr.text, jerr.column);
	const char *name = json_string_value(json_object_get(ev, "name"));
	const char *ph = json_string_value(json_object_get(ev, "ph"));
	if (!json_is_object(ev) || !name || !ph)
		rc = it_bad(t, s, "not a trace event (an object with string name and ph)");
	else if (strcmp(ph, "M") == 0 && strcmp(name, "FH") == 0)
		rc = fh_add(t, json_object_get(ev, "args")) < 0
			 ? it_bad(t, s, "more than %d file names", IT_MAX_FILES)
			 : 0;
	else if (strcmp(ph, "X") == 0)
		rc = x_event(t, s, ev, name);
	else if (strcmp(ph, "C") == 0 && json_object_get(json_object_get(ev, "args"), "cpu_us"))
		rc = cpu_counter(t, s, ev, name);
	else
		t->skipped++;
	t->events++;
	json_decref(ev);
	return rc;
}

/* ---- darshan-dxt-parser ---------------------------------------------------------------- */

/* "# DXT, file_id: N, file_name: PATH" and "# DXT, rank: R, hostname: H" set the context. */
static void dxt_comment(struct it_src *s, const char *line)
{
	const char *p;
	long long r;

	if ((p = strstr(line, "file_name: ")))
		snprintf(s->dxt_file, sizeof(s->dxt_file), "%s", p + strlen("file_name: "));
	else if ((p = strstr(line, "# DXT, rank: ")) && sscanf(p, "# DXT, rank: %lld", &r) == 1)
		s->dxt_rank = r;
}

/* " X_POSIX  RANK  read|write  SEGMENT  OFFSET  LENGTH  START  END ..." (seconds). */
static int dxt_line(struct it *t, struct it_src *s, char *line, size_t len)
{
	char module[32], rw[16];
	long long rank, seg;
	unsigned long long off, size;
	double start, end;

	while (len > 0 && isspace((unsigned char)line[len - 1]))
		line[--len] = '\0';
	if (len == 0)
		return 0;
	if (line[0] == '#') {
		dxt_comment(s, line);
		return 0;
	}
	if (sscanf(line, " %31s %lld %15s %lld %llu %llu %lf %lf", module, &rank, rw, &seg, &off,
		   &size, &start, &end) != 8 ||
	    strncmp(module, "X_", 2) != 0 || end < start || size > (1ull << 60) ||
	    off > (1ull << 60))
		return it_bad(t, s, "not a darshan-dxt-parser segment line");
	t->events++;
	if (strcmp(module, "X_POSIX") != 0) { /* MPI-IO segments are the POSIX reads below them */
		t->skipped++;
		return 0;
	}
	if (!s->dxt_file[0])
		return it_bad(t, s, "a segment before any '# DXT, file_name:' line");
	if (strcmp(rw, "write") == 0) {
		t->writes++;
		t->write_bytes += size;
		return 0;
	}
	if (it_read(t, rank, 0, s->dxt_file, off, size, start * 1e6, (end - start) * 1e6, -1) < 0)
		return it_bad(t, s, "more than %d files", IT_MAX_FILES);
	return 0;
}

/* ---- one input ------------------------------------------------------------------------- */

static int it_line(struct it *t, struct it_src *s, char *line, size_t len)
{
	if (s->kind == 0) {
		size_t i = 0;
		while (i < len && isspace((unsigned char)line[i]))
			i++;
		if (i == len)
			return 0;
		if (line[i] == '#')
			s->kind = 2;
		else if (line[i] == '[' || line[i] == '{')
			s->kind = 1;
		else
			return it_bad(t, s,
				      "neither Chrome trace events (JSON lines) nor "
				      "darshan-dxt-parser output");
		if (s->kind == 2)
			t->dxt_inputs++;
		else
			t->json_inputs++;
	}
	return s->kind == 1 ? json_line(t, s, line, len) : dxt_line(t, s, line, len);
}

int it_read_buffer(struct it *t, const char *name, const char *data, size_t len)
{
	struct it_src s = {.name = name};
	char *line = malloc(IT_MAX_LINE + 1);
	size_t pos = 0;
	int rc = 0;

	if (!line)
		return -1;
	while (pos < len && rc == 0) {
		const char *nl = memchr(data + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - data - pos) : len - pos;
		s.line++;
		if (n > IT_MAX_LINE) {
			rc = it_bad(t, &s, "longer than %d bytes", IT_MAX_LINE);
			break;
		}
		if (memchr(data + pos, '\0', n)) {
			rc = it_bad(t, &s, "a NUL byte");
			break;
		}
		memcpy(line, data + pos, n);
		line[n] = '\0';
		rc = it_line(t, &s, line, n);
		pos += n + 1;
	}
	free(line);
	return rc;
}

int it_read_file(struct it *t, const char *path)
{
	struct it_src s = {.name = path};
	char *line = malloc(IT_MAX_LINE + 2);
	/* without blocking: a FIFO, a device or a folder given as a trace is refused, not read */
	int fd = safe_open_read(path, 0, false);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	int rc = fd < 0 ? fd : f ? 0 : -errno;

	if (rc < 0 || !line) {
		snprintf(t->err, sizeof(t->err), "cannot read '%s': %s", path,
			 rc == -FB_ENOTREG ? "not a regular file (a FIFO, device or folder)"
			 : rc < 0	   ? fb_strerror(rc)
					   : strerror(ENOMEM));
		if (f)
			fclose(f);
		else if (fd >= 0)
			close(fd);
		free(line);
		return -1;
	}
	while (rc == 0 && fgets(line, IT_MAX_LINE + 2, f)) {
		size_t n = strlen(line);
		s.line++;
		if (n > IT_MAX_LINE && line[n - 1] != '\n')
			rc = it_bad(t, &s, "longer than %d bytes", IT_MAX_LINE);
		else if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (rc == 0)
			rc = it_line(t, &s, line, n);
	}
	if (rc == 0 && ferror(f))
		rc = it_bad(t, &s, "read error: %s", strerror(errno));
	fclose(f);
	free(line);
	return rc;
}
