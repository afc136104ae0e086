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

/* One thread's events not yet written. */
struct trace_buf {
	struct trace_buf *next;
	long tid;
	size_t len;
	char ids[64]; /* ","pid":R,"tid":T,"ts":" written once */
	size_t nids;
	char path[1025]; /* the last file named, as given and as escaped (reads of one file) */
	char esc[6 * 1024 + 3];
	size_t nesc;
	char data[TRACE_BUF];
};

struct trace {
	uint64_t gen; /* tells a thread's buffer of this trace from one of an earlier run */
	uint64_t t0;  /* ns: ts 0 of this rank, taken after a barrier of all ranks */
	int rank, fd; /* the staging file */
	int err;      /* first failure to write it (negative errno) */
	atomic_int done;
	pthread_mutex_t lock; /* bufs and writes to fd */
	struct trace_buf *bufs;
	char cat[32];
	char path[4200];   /* this rank's staging file */
	char merged[4200]; /* rank 0: every rank's events, until trace_place */
};

static atomic_uint_fast64_t trace_gens;
static _Thread_local struct trace_buf *tls_buf;
static _Thread_local uint64_t tls_gen;

const char *trace_cat(const struct trace *t)
{
	return t->cat;
}

/* Under t->lock: the buffer's lines go to the staging file, whole. */
static void buf_write(struct trace *t, struct trace_buf *b)
{
	int rc = b->len ? safe_write_all(t->fd, b->data, b->len) : 0;

	if (rc < 0 && t->err == 0)
		t->err = rc;
	b->len = 0;
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
	b->tid = (long)syscall(SYS_gettid);
	b->path[0] = '\0';
	b->nesc = 0;
	b->nids = (size_t)snprintf(b->ids, sizeof(b->ids),
				   "\",\"pid\":%d,\"tid\":%ld,\"ts\":", t->rank, b->tid);
	pthread_mutex_lock(&t->lock);
	b->next = t->bufs;
	t->bufs = b;
	pthread_mutex_unlock(&t->lock);
	tls_buf = b;
	tls_gen = t->gen;
	return b;
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
static char *put_head(char *p, const struct trace *t, const struct trace_buf *b, const char *name,
		      const char *cat, uint64_t t0, uint64_t t1)
{
	p = put_str(p, "{\"name\":\"");
	p = put_str(p, name);
	p = put_str(p, "\",\"cat\":\"");
	p = put_str(p, cat);
	memcpy(p, b->ids, b->nids);
	p = put_us(p + b->nids, t0 > t->t0 ? t0 - t->t0 : 0);
	p = put_str(p, ",\"dur\":");
	p = put_us(p, t1 > t0 ? t1 - t0 : 0);
	return put_str(p, ",\"ph\":\"X\",\"args\":{");
}

/* Ends the line in b; writes the buffer when another line might not fit. */
static void line_end(struct trace *t, struct trace_buf *b, char *p)
{
	p = put_str(p, "}}\n");
	b->len = (size_t)(p - b->data);
	if (b->len > TRACE_BUF - TRACE_LINE) {
		pthread_mutex_lock(&t->lock);
		buf_write(t, b);
		pthread_mutex_unlock(&t->lock);
	}
}

void trace_io(struct trace *t, const char *name, const char *cat, uint64_t t0, uint64_t t1,
	      const char *path, uint64_t off, uint64_t size)
{
	struct trace_buf *b;
	char *p;

	if (atomic_load_explicit(&t->done, memory_order_relaxed) || !(b = buf_get(t)))
		return;
	p = put_head(b->data + b->len, t, b, name, cat, t0, t1);
	if (path) {
		p = put_str(p, "\"fname\":");
		if (strcmp(path, b->path) != 0) { /* escaped once per file, not per read */
			snprintf(b->path, sizeof(b->path), "%s", path);
			b->nesc = (size_t)(put_json(b->esc, b->path) - b->esc);
		}
		memcpy(p, b->esc, b->nesc);
		p += b->nesc;
		p = put_str(p, ",\"offset\":");
		p = put_u64(p, off);
		p = put_str(p, ",\"size\":");
	} else {
		p = put_str(p, "\"size\":");
	}
	p = put_u64(p, size);
	line_end(t, b, p);
}

void trace_step(struct trace *t, const char *name, uint64_t t0, uint64_t t1, uint64_t step)
{
	struct trace_buf *b;
	char *p;

	if (atomic_load_explicit(&t->done, memory_order_relaxed) || !(b = buf_get(t)))
		return;
	p = put_head(b->data + b->len, t, b, name, "train", t0, t1);
	p = put_str(p, "\"step\":");
	p = put_u64(p, step);
	line_end(t, b, p);
}

/* ---- open, gather, place, close ------------------------------------------------------------ */

/* The metadata lines Perfetto names processes by: "rank R (host)". */
static void put_process_name(struct trace *t, struct run *run)
{
	char line[512];
	int n = snprintf(line, sizeof(line),
			 "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{"
			 "\"name\":\"rank %d (%.200s)\"}}\n",
			 run->rank, run->rank, run->hostname);

	if (n > 0 && (size_t)n < sizeof(line))
		t->err = safe_write_all(t->fd, line, (size_t)n);
}

static int trace_make(struct run *run, const char *dir, uint64_t tag)
{
	struct trace *t = calloc(1, sizeof(*run->trace));
	const char *be = run->storage ? run->storage->name : "posix";

	if (!t)
		return run_fail(run, -ENOMEM, "out of memory");
	run->trace = t;
	t->fd = -1;
	t->rank = run->rank;
	t->gen = atomic_fetch_add(&trace_gens, 1) + 1;
	pthread_mutex_init(&t->lock, NULL);
	snprintf(t->cat, sizeof(t->cat), "%s", strcmp(be, "posix") == 0 ? "POSIX" : be);
	snprintf(t->path, sizeof(t->path), "%s/.feedbench-trace-%" PRIx64 ".rank%d", dir, tag,
		 run->rank);
	if (run->rank == 0)
		snprintf(t->merged, sizeof(t->merged), "%s/.feedbench-trace-%" PRIx64 ".pfw", dir,
			 tag);
	int rc = util_mkdirs(dir, 0755);
	if (rc == 0 && (t->fd = open(t->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
		rc = -errno;
	if (rc < 0)
		return run_fail(run, rc, "cannot write the trace '%s' (rank %d): %s", t->path,
				run->rank, strerror(-rc));
	put_process_name(t, run);
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
		n = pread(t->fd, chunk, TRACE_CHUNK, (off_t)off);
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
			n = pread(t->fd, chunk, TRACE_CHUNK, (off_t)off);
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
	if (rc < 0)
		run_fail(run, rc, "cannot write the trace '%s' (rank %d): %s", t->path, run->rank,
			 strerror(-rc));
	if ((rc = agree(run, rc)) < 0)
		return rc;
	if (!(chunk = malloc(TRACE_CHUNK)))
		rc = run_fail(run, -ENOMEM, "out of memory");
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
