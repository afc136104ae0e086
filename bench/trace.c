/* Per-operation traces: Chrome trace events in JSON lines, dftracer's format (trace.h says how
 * they are written and gathered; docs/trace.md what a line holds). */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agree.h"
#include "run.h"
#include "safefile.h"
#include "storage/storage.h"
#include "timer.h"
#include "util.h"

#define TRACE_BUF   (64 * 1024) /* bytes of events a thread holds before writing them */
#define TRACE_LINE  (8 * 1024)	/* room kept for one line: a path escaped to 6 x 1024 bytes */
#define TRACE_CHUNK (1 << 20)	/* bytes per message when rank 0 gathers the files */
#define TRACE_PATH  1024	/* bytes of a file name kept (longer names are cut) */

/* The hot path records events as they are, in binary, and formats nothing: a record per event
 * in the thread's buffer, a path record when the thread names another file. The staging file
 * holds the buffers as written, each behind a chunk header; trace_finish formats them into
 * JSON lines once the run has ended (outside the epochs, whose CPU time is the measurement). */
enum { REC_IO = 1, REC_IO_NOPATH, REC_STEP, REC_PATH };

struct trace_rec { /* 32 bytes: what the staging file's writes cost is bytes (performance.md) */
	uint8_t kind;
	uint8_t name, cat; /* indexes of the trace's names[] */
	uint8_t wide;	   /* 1: the duration is the uint64_t after the record, not dur */
	uint32_t dur;	   /* ns; REC_PATH: bytes of the name that follow (padded to 8) */
	uint64_t t0, a, b; /* REC_IO: offset, size; REC_STEP: step */
};

#define TRACE_NAMES 256 /* distinct event names and categories (string literals: a few) */

struct chunk_head {
	int64_t tid;
	uint64_t len;
};

/* One thread's events not yet written. */
struct trace_buf {
	struct trace_buf *next;
	long tid;
	size_t len;
	char path[TRACE_PATH + 1]; /* the file of its last event in this buffer */
	const char *name, *cat;	   /* the name and category of its last event (name_id) */
	int name_i, cat_i;	   /* and their indexes */
	_Alignas(8) char data[TRACE_BUF];
};

struct trace {
	uint64_t gen; /* tells a thread's buffer of this trace from one of an earlier run */
	uint64_t t0;  /* ns: ts 0 of this rank, taken after a barrier of all ranks */
	int rank, fd; /* the staging file (binary records) */
	int jfd;      /* the same formatted as JSON lines (trace_finish) */
	int err;      /* first failure to write it (negative errno) */
	atomic_int done;
	pthread_mutex_t lock; /* bufs and writes to fd */
	struct trace_buf *bufs;
	char cat[32];
	/* names and categories of events (literals or cat: valid until the end), by index */
	const char *names[TRACE_NAMES];
	atomic_int nnames;
	char host[256];
	char path[4200];   /* this rank's staging file */
	char jpath[4210];  /* its JSON lines */
	char merged[4200]; /* rank 0: every rank's events, until trace_place */
};

static atomic_uint_fast64_t trace_gens;
static _Thread_local struct trace_buf *tls_buf;
static _Thread_local uint64_t tls_gen;

const char *trace_cat(const struct trace *t)
{
	return t->cat;
}

/* Under t->lock: the buffer's records go to the staging file behind their chunk header. */
static void buf_write(struct trace *t, struct trace_buf *b)
{
	struct chunk_head h = {.tid = b->tid, .len = b->len};
	int rc = b->len ? safe_write_all(t->fd, &h, sizeof(h)) : 0;

	if (rc == 0 && b->len)
		rc = safe_write_all(t->fd, b->data, b->len);
	if (rc < 0 && t->err == 0)
		t->err = rc;
	b->len = 0;
	b->path[0] = '\0'; /* each chunk names its files again: it is formatted on its own */
}

/* This thread's buffer for t, made on its first event. NULL when out of memory (the event is
 * lost, and trace_finish says so). */
static struct trace_buf *buf_get(struct trace *t)
{
	struct trace_buf *b;

	if (tls_buf && tls_gen == t->gen)
		return tls_buf;
	if (!(b = malloc(sizeof(*b)))) {
		pthread_mutex_lock(&t->lock);
		if (t->err == 0)
			t->err = -ENOMEM;
		pthread_mutex_unlock(&t->lock);
		return NULL;
	}
	b->len = 0;
	b->name = b->cat = NULL;
	b->tid = (long)syscall(SYS_gettid);
	b->path[0] = '\0';
	pthread_mutex_lock(&t->lock);
	b->next = t->bufs;
	t->bufs = b;
	pthread_mutex_unlock(&t->lock);
	tls_buf = b;
	tls_gen = t->gen;
	return b;
}

/* The index of an event's name or category: a few pointers compared, a new one added under
 * the lock. -1 when TRACE_NAMES are taken (the event is lost and trace_finish says so). */
static int name_id(struct trace *t, const char *s)
{
	int n = atomic_load_explicit(&t->nnames, memory_order_acquire);

	for (int i = 0; i < n; i++)
		if (t->names[i] == s)
			return i;
	pthread_mutex_lock(&t->lock);
	n = atomic_load_explicit(&t->nnames, memory_order_relaxed);
	for (int i = 0; i < n; i++)
		if (t->names[i] == s) {
			pthread_mutex_unlock(&t->lock);
			return i;
		}
	if (n < TRACE_NAMES) {
		t->names[n] = s;
		atomic_store_explicit(&t->nnames, n + 1, memory_order_release);
	} else if (t->err == 0) {
		t->err = -E2BIG;
	}
	pthread_mutex_unlock(&t->lock);
	return n < TRACE_NAMES ? n : -1;
}

/* A record of an event at the end of b: its duration in it, or after it when over 4 s. */
static inline struct trace_rec *rec_put(struct trace_buf *b, uint8_t kind, int name, int cat,
					uint64_t t0, uint64_t t1)
{
	struct trace_rec *r = (struct trace_rec *)(void *)(b->data + b->len);
	uint64_t dur = t1 > t0 ? t1 - t0 : 0;

	*r = (struct trace_rec){.kind = kind,
				.name = (uint8_t)name,
				.cat = (uint8_t)cat,
				.wide = dur > UINT32_MAX,
				.dur = dur > UINT32_MAX ? 0 : (uint32_t)dur,
				.t0 = t0};
	b->len += sizeof(*r);
	if (r->wide) {
		memcpy(b->data + b->len, &dur, sizeof(dur));
		b->len += sizeof(dur);
	}
	return r;
}

/* Room for one more record (and a path): the buffer written when it might not fit. */
static struct trace_rec *rec_next(struct trace *t, struct trace_buf *b)
{
	if (b->len > TRACE_BUF - sizeof(struct trace_rec) * 2 - TRACE_PATH - 16) {
		pthread_mutex_lock(&t->lock);
		buf_write(t, b);
		pthread_mutex_unlock(&t->lock);
	}
	return (struct trace_rec *)(void *)(b->data + b->len);
}

/* A path record when the thread names another file than its last in this buffer. */
static void rec_path(struct trace_buf *b, const char *path)
{
	struct trace_rec *r = (struct trace_rec *)(void *)(b->data + b->len);
	size_t n = strnlen(path, TRACE_PATH);

	if (strncmp(path, b->path, TRACE_PATH) == 0)
		return;
	memcpy(b->path, path, n);
	b->path[n] = '\0';
	r->kind = REC_PATH;
	r->dur = (uint32_t)n;
	memcpy(r + 1, path, n);
	b->len += sizeof(*r) + ((n + 7) & ~(size_t)7);
}

void trace_io(struct trace *t, const char *name, const char *cat, uint64_t t0, uint64_t t1,
	      const char *path, uint64_t off, uint64_t size)
{
	struct trace_buf *b;
	struct trace_rec *r;
	int ni, ci;

	if (atomic_load_explicit(&t->done, memory_order_relaxed) || !(b = buf_get(t)))
		return;
	if (name != b->name) /* most events name what the thread's last one did */
		b->name_i = name_id(t, b->name = name);
	if (cat != b->cat)
		b->cat_i = name_id(t, b->cat = cat);
	if ((ni = b->name_i) < 0 || (ci = b->cat_i) < 0)
		return;
	rec_next(t, b);
	if (path)
		rec_path(b, path);
	r = rec_put(b, path ? REC_IO : REC_IO_NOPATH, ni, ci, t0, t1);
	r->a = off;
	r->b = size;
}

void trace_step(struct trace *t, const char *name, uint64_t t0, uint64_t t1, uint64_t step)
{
	struct trace_buf *b;
	int ni, ci;

	if (atomic_load_explicit(&t->done, memory_order_relaxed) || !(b = buf_get(t)) ||
	    (ni = name_id(t, name)) < 0 || (ci = name_id(t, "train")) < 0)
		return;
	rec_next(t, b);
	rec_put(b, REC_STEP, ni, ci, t0, t1)->a = step;
}

/* ---- one line, without printf (a 4 KiB cached read takes about a microsecond) ---------- */

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* Decimal digits, two per division. */
static char *put_u64(char *p, uint64_t v)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930"
				    "31323334353637383940414243444546474849505152535455565758596061"
				    "62636465666768697071727374757677787980818283848586878889909192"
				    "93949596979899";
	char tmp[24], *q = tmp + sizeof(tmp);
	size_t n;

	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;
		v /= 100;
		*--q = pairs[d + 1];
		*--q = pairs[d];
	}
	if (v >= 10) {
		*--q = pairs[v * 2 + 1];
		*--q = pairs[v * 2];
	} else {
		*--q = (char)('0' + v);
	}
	n = (size_t)(tmp + sizeof(tmp) - q);
	memcpy(p, q, n);
	return p + n;
}

/* Microseconds with three decimals (nanoseconds). */
static char *put_us(char *p, uint64_t ns)
{
	uint64_t frac = ns % 1000;

	p = put_u64(p, ns / 1000);
	*p++ = '.';
	*p++ = (char)('0' + frac / 100);
	*p++ = (char)('0' + frac / 10 % 10);
	*p++ = (char)('0' + frac % 10);
	return p;
}

/* A JSON string: quotes, backslashes and control characters escaped; at most 1024 bytes of s. */
static char *put_json(char *p, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	*p++ = '"';
	for (size_t i = 0; i < 1024 && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (c < 0x20) {
			p = put_str(p, "\\u00");
			*p++ = hex[c >> 4];
			*p++ = hex[c & 15];
		} else {
			*p++ = (char)c;
		}
	}
	*p++ = '"';
	return p;
}

/* The common head of an event: name, cat, pid (the rank), tid, ts, dur, ph. */
static char *put_head(char *p, const struct trace *t, const char *ids, size_t nids,
		      const struct trace_rec *r, uint64_t dur)
{
	p = put_str(p, "{\"name\":\"");
	p = put_str(p, t->names[r->name]);
	p = put_str(p, "\",\"cat\":\"");
	p = put_str(p, t->names[r->cat]);
	memcpy(p, ids, nids);
	p = put_us(p + nids, r->t0 > t->t0 ? r->t0 - t->t0 : 0);
	p = put_str(p, ",\"dur\":");
	p = put_us(p, dur);
	return put_str(p, ",\"ph\":\"X\",\"args\":{");
}

/* One event's line at p (at most TRACE_LINE bytes); esc: the current file, escaped. */
static char *put_event(char *p, const struct trace *t, const char *ids, size_t nids,
		       const struct trace_rec *r, uint64_t dur, const char *esc, size_t nesc)
{
	p = put_head(p, t, ids, nids, r, dur);
	if (r->kind == REC_STEP) {
		p = put_str(p, "\"step\":");
		p = put_u64(p, r->a);
	} else {
		if (r->kind == REC_IO) {
			p = put_str(p, "\"fname\":");
			memcpy(p, esc, nesc);
			p = put_str(p + nesc, ",\"offset\":");
			p = put_u64(p, r->a);
			p = put_str(p, ",\"size\":");
		} else {
			p = put_str(p, "\"size\":");
		}
		p = put_u64(p, r->b);
	}
	return put_str(p, "}}\n");
}

/* One chunk of one thread's records as JSON lines, written to t->jfd through out (TRACE_BUF
 * bytes of room). */
static int format_chunk(struct trace *t, int64_t tid, const char *data, size_t len, char *out)
{
	char ids[64], path[TRACE_PATH + 1], esc[6 * TRACE_PATH + 3];
	size_t nids = (size_t)snprintf(ids, sizeof(ids),
				       "\",\"pid\":%d,\"tid\":%" PRId64 ",\"ts\":", t->rank, tid),
	       nesc = 2, n = 0;
	int rc = 0;

	memcpy(esc, "\"\"", 2);
	for (size_t off = 0; off + sizeof(struct trace_rec) <= len && rc == 0;) {
		const struct trace_rec *r = (const struct trace_rec *)(const void *)(data + off);
		uint64_t dur = r->dur;
		off += sizeof(*r);
		if (r->kind == REC_PATH) {
			size_t pn = r->dur < TRACE_PATH ? r->dur : TRACE_PATH;
			memcpy(path, r + 1, pn);
			path[pn] = '\0';
			nesc = (size_t)(put_json(esc, path) - esc);
			off += (r->dur + 7) & ~(size_t)7;
			continue;
		}
		if (r->wide) {
			if (off + sizeof(dur) > len)
				break;
			memcpy(&dur, data + off, sizeof(dur));
			off += sizeof(dur);
		}
		n = (size_t)(put_event(out + n, t, ids, nids, r, dur, esc, nesc) - out);
		if (n > TRACE_BUF - TRACE_LINE) {
			rc = safe_write_all(t->jfd, out, n);
			n = 0;
		}
	}
	return rc == 0 && n ? safe_write_all(t->jfd, out, n) : rc;
}

/* The staging file's chunks formatted into the JSON lines file (after the process name). */
static int format_all(struct trace *t, char *chunk, char *out)
{
	struct chunk_head h;
	uint64_t off = 0;
	int rc = 0;

	for (;;) {
		ssize_t n = pread(t->fd, &h, sizeof(h), (off_t)off);
		if (n == 0)
			return rc;
		if (n != (ssize_t)sizeof(h) || h.len > TRACE_BUF)
			return n < 0 ? -errno : -EIO;
		n = pread(t->fd, chunk, h.len, (off_t)(off + sizeof(h)));
		if (n != (ssize_t)h.len)
			return n < 0 ? -errno : -EIO;
		off += sizeof(h) + h.len;
		if ((rc = format_chunk(t, h.tid, chunk, h.len, out)) < 0)
			return rc;
	}
}

/* ---- open, gather, place, close ------------------------------------------------------------ */

/* The metadata lines Perfetto names processes by: "rank R (host)". */
static int put_process_name(struct trace *t)
{
	char line[512];
	int n = snprintf(line, sizeof(line),
			 "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{"
			 "\"name\":\"rank %d (%.200s)\"}}\n",
			 t->rank, t->rank, t->host);

	return n > 0 && (size_t)n < sizeof(line) ? safe_write_all(t->jfd, line, (size_t)n) : 0;
}

static int trace_make(struct run *run, const char *dir, uint64_t tag)
{
	struct trace *t = calloc(1, sizeof(*run->trace));
	const char *be = run->storage ? run->storage->name : "posix";

	if (!t)
		return run_fail(run, -ENOMEM, "out of memory");
	run->trace = t;
	t->fd = t->jfd = -1;
	t->rank = run->rank;
	snprintf(t->host, sizeof(t->host), "%s", run->hostname);
	t->gen = atomic_fetch_add(&trace_gens, 1) + 1;
	pthread_mutex_init(&t->lock, NULL);
	snprintf(t->cat, sizeof(t->cat), "%s", strcmp(be, "posix") == 0 ? "POSIX" : be);
	snprintf(t->path, sizeof(t->path), "%s/.feedbench-trace-%" PRIx64 ".rank%d", dir, tag,
		 run->rank);
	snprintf(t->jpath, sizeof(t->jpath), "%s.json", t->path);
	if (run->rank == 0)
		snprintf(t->merged, sizeof(t->merged), "%s/.feedbench-trace-%" PRIx64 ".pfw", dir,
			 tag);
	int rc = util_mkdirs(dir, 0755);
	if (rc == 0 && (t->fd = open(t->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
		rc = -errno;
	if (rc == 0 && (t->jfd = open(t->jpath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
		rc = -errno;
	if (rc < 0)
		return run_fail(run, rc, "cannot write the trace '%s' (rank %d): %s",
				t->fd < 0 ? t->path : t->jpath, run->rank, strerror(-rc));
	return 0;
}

int trace_open(struct run *run, const char *dir)
{
	uint64_t tag = 0;
	int rc = 0;

	if (!run->cfg.output.trace)
		return 0;
	if (run->rank == 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		tag = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_sec * 1000000000ull ^
		      (uint64_t)ts.tv_nsec;
	}
	MPI_Bcast(&tag, 1, MPI_UINT64_T, 0, run->comm);
	rc = agree(run, trace_make(run, dir, tag));
	if (rc == 0) { /* one clock on rank 0's node; elsewhere the barrier's end lines them up */
		uint64_t t0;
		MPI_Barrier(run->comm);
		t0 = run->trace->t0 = timer_now_ns();
		MPI_Bcast(&t0, 1, MPI_UINT64_T, 0, run->comm);
		if (run->node_leader == 0)
			run->trace->t0 = t0;
	}
	return rc;
}

/* Rank r > 0: its file to rank 0, in chunks; a header before each (bytes, 0 at the end, or a
 * negative errno). */
static int send_file(struct trace *t, MPI_Comm comm, char *chunk)
{
	int64_t n;
	uint64_t off = 0;

	do {
		n = pread(t->jfd, chunk, TRACE_CHUNK, (off_t)off);
		if (n < 0)
			n = -errno;
		MPI_Send(&n, 1, MPI_INT64_T, 0, 71, comm);
		if (n > 0)
			MPI_Send(chunk, (int)n, MPI_CHAR, 0, 72, comm);
		off += n > 0 ? (uint64_t)n : 0;
	} while (n > 0);
	return n < 0 ? (int)n : 0;
}

/* Rank 0: appends rank r's events (its own file, or what rank r sends) to out. */
static int take_rank(struct trace *t, MPI_Comm comm, int r, int out, char *chunk)
{
	int64_t n;
	uint64_t off = 0;
	int rc = 0;

	do {
		if (r == 0) {
			n = pread(t->jfd, chunk, TRACE_CHUNK, (off_t)off);
			n = n < 0 ? -errno : n;
			off += n > 0 ? (uint64_t)n : 0;
		} else {
			MPI_Recv(&n, 1, MPI_INT64_T, r, 71, comm, MPI_STATUS_IGNORE);
			if (n > 0)
				MPI_Recv(chunk, (int)n, MPI_CHAR, r, 72, comm, MPI_STATUS_IGNORE);
		}
		if (n > 0 && rc == 0 && out >= 0)
			rc = safe_write_all(out, chunk, (size_t)n);
	} while (n > 0);
	return n < 0 ? (int)n : rc;
}

/* Rank 0: every rank's events into t->merged, between "[" and "]" lines as dftracer writes. */
static int gather(struct run *run, struct trace *t, char *chunk)
{
	int out = open(t->merged, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644), rc = 0;

	/* Without the file, every rank's events are still taken: the ranks wait to send them. */
	if (out < 0)
		rc = run_fail(run, -errno, "cannot write the trace '%s': %s", t->merged,
			      strerror(errno));
	else
		rc = safe_write_all(out, "[\n", 2);
	for (int r = 0; r < run->nranks; r++) {
		int rrc = take_rank(t, run->comm, r, out, chunk);
		if (rrc < 0 && rc == 0)
			rc = run_fail(run, rrc, "cannot gather the trace of rank %d into '%s': %s",
				      r, t->merged, strerror(-rrc));
	}
	if (rc == 0 && (rc = safe_write_all(out, "]\n", 2)) < 0)
		run_fail(run, rc, "cannot write the trace '%s': %s", t->merged, strerror(-rc));
	if (out >= 0 && close(out) < 0 && rc == 0)
		rc = run_fail(run, -errno, "cannot write the trace '%s': %s", t->merged,
			      strerror(errno));
	return rc;
}

int trace_finish(struct run *run)
{
	struct trace *t = run->trace;
	char *chunk;
	int rc;

	if (!t)
		return 0;
	atomic_store(&t->done, 1);
	pthread_mutex_lock(&t->lock);
	for (struct trace_buf *b = t->bufs; b; b = b->next)
		buf_write(t, b);
	rc = t->err;
	pthread_mutex_unlock(&t->lock);
	if (rc == -E2BIG)
		run_fail(run, rc, "the trace '%s' (rank %d) lost events: more than %d event names",
			 t->path, run->rank, TRACE_NAMES);
	else if (rc < 0)
		run_fail(run, rc, "cannot write the trace '%s' (rank %d): %s", t->path, run->rank,
			 strerror(-rc));
	if ((rc = agree(run, rc)) < 0)
		return rc;
	if (!(chunk = malloc(TRACE_CHUNK + TRACE_BUF)))
		rc = run_fail(run, -ENOMEM, "out of memory");
	/* the records formatted, now that the run is over: the JSON lines this rank sends */
	if (rc == 0 && ((rc = put_process_name(t)) < 0 ||
			(rc = format_all(t, chunk, chunk + TRACE_CHUNK)) < 0))
		run_fail(run, rc, "cannot format the trace '%s' into '%s' (rank %d): %s", t->path,
			 t->jpath, run->rank, strerror(-rc));
	if ((rc = agree(run, rc)) < 0) {
		free(chunk);
		return rc;
	}
	if (run->rank == 0)
		rc = gather(run, t, chunk);
	else if ((rc = send_file(t, run->comm, chunk)) < 0)
		run_fail(run, rc, "cannot read the trace '%s' (rank %d): %s", t->path, run->rank,
			 strerror(-rc));
	free(chunk);
	return agree(run, rc);
}

int trace_place(struct run *run, const char *tmp)
{
	struct trace *t = run->trace;
	char to[4200];

	if (!t || run->rank != 0 || !t->merged[0] || access(t->merged, F_OK) < 0)
		return 0;
	snprintf(to, sizeof(to), "%s/%s", tmp, TRACE_FILE);
	if (rename(t->merged, to) < 0)
		return run_fail(run, -errno, "cannot move the trace '%s' to '%s': %s", t->merged,
				to, strerror(errno));
	t->merged[0] = '\0';
	return 0;
}

void trace_close(struct run *run)
{
	struct trace *t = run->trace;

	if (!t)
		return;
	if (t->fd >= 0) {
		close(t->fd);
		unlink(t->path);
	}
	if (t->jfd >= 0) {
		close(t->jfd);
		unlink(t->jpath);
	}
	if (t->merged[0])
		unlink(t->merged);
	while (t->bufs) {
		struct trace_buf *b = t->bufs;
		t->bufs = b->next;
		free(b);
	}
	pthread_mutex_destroy(&t->lock);
	free(t);
	run->trace = NULL;
}
