/* The queued-read wrappers (bench/storage/io.c, io_queue_*), over a scripted in-memory back-end
 * whose queue completes reads out of order and can answer short, interrupted, failed or past
 * the end of the file:
 * - every byte lands where it was asked for, whatever the order of completions;
 * - never more than io_depth reads in flight, and the depth is used;
 * - one read counted (ops, bytes, latency) per transfer_size piece, short reads and EINTR as
 *   retries, the rest sent on;
 * - an error or an end of file names the file and the offset, and nothing is left in flight
 *   when io_queue_wait() returns;
 * - io_pread() through a queue reads one call at a time and is counted the same way;
 * - folder listing and removal go through the back-end's list_dir and rmdir when it has them
 *   (POSIX otherwise), each counted as one namespace call, failures naming the folder;
 * - eviction (io_evict) and folder fsync (io_sync_dir) go through the back-end's evict and
 *   sync_dir, failures naming the path;
 * - reads kept in flight across batches: a mark is done once every read queued before it
 *   completed, whatever later reads do, and io_queue_wait_file() leaves other files' reads in
 *   flight.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bench/run.h"
#include "bench/storage/storage.h"

#define FSIZE 100000 /* bytes in the fake file */
#define QMAX  64

enum { ANSWER_FULL, ANSWER_SHORT, ANSWER_EINTR, ANSWER_EIO };

struct fake_file {
	struct sfile_base base;
};

struct fake_req {
	char *buf;
	size_t len;
	uint64_t off, tag;
};

/* The queue: reads queued, not yet completed; the answers scripted per call. */
struct io_queue {
	struct fake_req req[QMAX];
	unsigned n, max_seen, depth;
	unsigned calls;	   /* reads queued so far */
	int answer;	   /* for every call ... */
	unsigned fail_nth; /* ... except the nth (1-based), which fails with EIO */
	int odd;	   /* ANSWER_EINTR / ANSWER_SHORT on odd calls only */
	unsigned reap_max; /* 0: every read in flight completes at each reap; else at most this */
	int fifo;	   /* complete the oldest reads first (else the newest) */
	int wrong_tag;	   /* answer with a tag no read was queued with */
};

static struct io_queue *the_queue; /* the test's view of the one queue */

static uint8_t pattern(uint64_t off)
{
	return (uint8_t)(off * 131 + (off >> 8));
}

static int fake_open(struct sfile **f, const char *path, int flags, struct run *run);
static int fake_close(struct sfile *f)
{
	free(f);
	return 0;
}
static ssize_t fake_pread(struct sfile *f, void *buf, size_t len, uint64_t off)
{
	(void)f;
	(void)buf;
	(void)len;
	(void)off;
	return -ENOSYS; /* with a queue, the wrappers never call it */
}

static int fake_queue_open(struct io_queue **q, unsigned depth, struct run *run)
{
	(void)run;
	*q = calloc(1, sizeof(**q));
	if (!*q)
		return -ENOMEM;
	(*q)->depth = depth;
	the_queue = *q;
	return 0;
}

static int fake_queue_read(struct io_queue *q, struct sfile *f, void *buf, size_t len, uint64_t off,
			   uint64_t tag)
{
	(void)f;
	assert_true(q->n < QMAX);
	q->req[q->n++] = (struct fake_req){buf, len, off, tag};
	if (q->n > q->max_seen)
		q->max_seen = q->n;
	return 0;
}

/* Completes the newest reads first (out of order), at least min, at most max. */
static int fake_queue_reap(struct io_queue *q, struct io_completion *c, unsigned max, unsigned min)
{
	unsigned k = 0;

	assert_true(min <= q->n);
	if (q->reap_max && max > (min > q->reap_max ? min : q->reap_max))
		max = min > q->reap_max ? min : q->reap_max;
	while (k < max && q->n > 0) {
		struct fake_req one = q->req[q->fifo ? 0 : q->n - 1], *r = &one;
		if (q->fifo)
			memmove(&q->req[0], &q->req[1], (q->n - 1) * sizeof(q->req[0]));
		q->n--;
		uint64_t call = ++q->calls;
		int answer = q->odd && call % 2 == 0 ? ANSWER_FULL : q->answer;
		size_t len = r->len;

		c[k].tag = q->wrong_tag ? r->tag ^ 0x5a : r->tag;
		if (call == q->fail_nth) {
			c[k++].res = -EIO;
			continue;
		}
		if (answer == ANSWER_EINTR) {
			c[k++].res = -EINTR;
			continue;
		}
		if (answer == ANSWER_SHORT && len > 1)
			len /= 2;
		if (r->off >= FSIZE)
			len = 0;
		else if (r->off + len > FSIZE)
			len = FSIZE - r->off;
		for (size_t i = 0; i < len; i++)
			r->buf[i] = (char)pattern(r->off + i);
		c[k++].res = (int64_t)len;
	}
	return (int)k;
}

static void fake_queue_close(struct io_queue *q)
{
	the_queue = NULL;
	free(q);
}

static const struct storage_ops fake_storage = {
    .version = STORAGE_OPS_VERSION,
    .name = "fake",
    .open = fake_open,
    .pread = fake_pread,
    .close = fake_close,
    .queue_open = fake_queue_open,
    .queue_read = fake_queue_read,
    .queue_reap = fake_queue_reap,
    .queue_close = fake_queue_close,
};

static int fake_open(struct sfile **out, const char *path, int flags, struct run *run)
{
	struct fake_file *f = calloc(1, sizeof(*f));

	(void)run;
	if (!f)
		return -ENOMEM;
	f->base.ops = &fake_storage;
	f->base.flags = flags;
	snprintf(f->base.path, sizeof(f->base.path), "%s", path);
	*out = (struct sfile *)f;
	return 0;
}

struct rig {
	struct run run;
	struct io_stats stats;
	struct io io;
	struct sfile *f;
	char *buf;
};

static struct rig *rig_new(unsigned depth, uint64_t transfer)
{
	struct rig *g = calloc(1, sizeof(*g));

	assert_non_null(g);
	fb_errbuf_init(&g->run.err);
	g->run.storage = &fake_storage;
	io_stats_reset(&g->stats);
	g->io = (struct io){.run = &g->run, .stats = &g->stats, .transfer = transfer};
	assert_int_equal(io_queue_open(&g->io, depth), 0);
	assert_non_null(g->io.queue);
	assert_int_equal(io_open(&g->io, &g->f, "fake.bin", STORAGE_O_READ), 0);
	g->buf = malloc(FSIZE);
	assert_non_null(g->buf);
	memset(g->buf, 0xee, FSIZE);
	return g;
}

static void rig_free(struct rig *g)
{
	assert_int_equal(io_close(&g->io, g->f), 0);
	io_queue_close(&g->io);
	free(g->buf);
	free(g);
}

/* Reads n pieces of len bytes at stride: the whole batch queued, then waited for. */
static int rig_batch(struct rig *g, unsigned n, size_t len)
{
	int rc = 0;

	for (unsigned i = 0; i < n && rc == 0; i++)
		rc = io_queue_read(&g->io, g->f, g->buf + (size_t)i * len, len, (uint64_t)i * len);
	int wrc = io_queue_wait(&g->io);
	assert_int_equal(g->io.inflight, 0);
	assert_int_equal(the_queue->n, 0); /* nothing left in the back-end either */
	return rc ? rc : wrc;
}

static void assert_data(const struct rig *g, size_t bytes)
{
	for (size_t i = 0; i < bytes; i++)
		if ((uint8_t)g->buf[i] != pattern(i))
			fail_msg("byte %zu is 0x%02x, want 0x%02x", i, (uint8_t)g->buf[i],
				 pattern(i));
}

static void test_depth_and_counts(void **state)
{
	static const unsigned depths[] = {1, 2, 4, 8, 32};

	(void)state;
	for (size_t d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
		struct rig *g = rig_new(depths[d], 0);
		assert_int_equal(rig_batch(g, 20, 1000), 0);
		assert_data(g, 20000);
		if (the_queue->max_seen != (depths[d] < 20 ? depths[d] : 20))
			fail_msg("depth %u: at most %u reads in flight", depths[d],
				 the_queue->max_seen);
		assert_int_equal(g->stats.ops, 20);
		assert_int_equal(g->stats.bytes, 20000);
		assert_int_equal(g->stats.retries, 0);
		assert_int_equal(g->stats.latency.count, 20);
		rig_free(g);
	}
}

/* transfer_size pieces: one counted read per piece. */
static void test_transfer_pieces(void **state)
{
	struct rig *g = rig_new(8, 300);

	(void)state;
	assert_int_equal(rig_batch(g, 20, 1000), 0);
	assert_data(g, 20000);
	assert_int_equal(g->stats.ops, 80); /* 300 + 300 + 300 + 100 per read */
	assert_int_equal(g->stats.bytes, 20000);
	assert_true(the_queue->max_seen <= 8);
	rig_free(g);
}

/* Short reads and EINTR: the rest is sent on, counted as retries, the data still whole. */
static void test_short_and_eintr(void **state)
{
	static const int answers[] = {ANSWER_SHORT, ANSWER_EINTR};

	(void)state;
	for (int odd = 0; odd < 2; odd++) {
		for (size_t a = 0; a < 2; a++) {
			struct rig *g = rig_new(4, 0);
			g->io.queue->answer = answers[a];
			g->io.queue->odd = odd || answers[a] == ANSWER_EINTR;
			assert_int_equal(rig_batch(g, 20, 1000), 0);
			assert_data(g, 20000);
			assert_int_equal(g->stats.ops, 20);
			assert_int_equal(g->stats.bytes, 20000);
			assert_true(g->stats.retries >= 10);
			assert_true(the_queue->max_seen <= 4);
			rig_free(g);
		}
	}
}

/* The 7th completion fails: the error names file and offset, everything in flight is
 * reaped before the wait returns, and further reads are refused with the same error. */
static void test_error(void **state)
{
	struct rig *g = rig_new(4, 0);

	(void)state;
	g->io.queue->fail_nth = 7;
	assert_int_equal(rig_batch(g, 20, 1000), -EIO);
	assert_non_null(strstr(g->run.err.msg, "cannot read 'fake.bin' at offset "));
	assert_non_null(strstr(g->run.err.msg, strerror(EIO)));
	uint64_t off = strtoull(strstr(g->run.err.msg, "offset ") + 7, NULL, 10);
	assert_true(off % 1000 == 0 && off < 20000);
	/* The queue is usable again once the failure was handed back. */
	assert_int_equal(rig_batch(g, 5, 1000), 0);
	rig_free(g);
}

/* Reads past the end: unexpected end of file, naming the file and the offset. */
static void test_eof(void **state)
{
	struct rig *g = rig_new(4, 0);
	int rc = 0;

	(void)state;
	for (unsigned i = 0; i < 3 && rc == 0; i++)
		rc = io_queue_read(&g->io, g->f, g->buf + i * 1000, 1000, FSIZE - 1500 + i * 1000);
	int wrc = io_queue_wait(&g->io);
	assert_int_equal(rc ? rc : wrc, -FB_EEOF);
	assert_int_equal(g->io.inflight, 0);
	/* Completions come out of order: the read that ran past the end, or the one that began
	 * beyond it, reports first; either names where it found the end. */
	if (!strstr(g->run.err.msg, "unexpected end of file in 'fake.bin' at offset 100000 ") &&
	    !strstr(g->run.err.msg, "unexpected end of file in 'fake.bin' at offset 100500 "))
		fail_msg("message: %s", g->run.err.msg);
	rig_free(g);
}

/* io_pread through a queue: one read at a time, counted like any read. */
static void test_sync_path(void **state)
{
	struct rig *g = rig_new(8, 0);
	size_t got;

	(void)state;
	g->io.queue->answer = ANSWER_SHORT;
	assert_int_equal(io_pread(&g->io, g->f, g->buf, 5000, 0), 0);
	assert_data(g, 5000);
	assert_int_equal(g->stats.ops, 1);
	assert_int_equal(g->stats.bytes, 5000);
	assert_true(g->stats.retries >= 1);
	assert_int_equal(the_queue->max_seen, 1);
	assert_int_equal(io_pread_upto(&g->io, g->f, g->buf, 4000, FSIZE - 1000, &got), 0);
	assert_int_equal(got, 1000);
	assert_int_equal(io_pread(&g->io, g->f, g->buf, 4000, FSIZE - 1000), -FB_EEOF);
	rig_free(g);
}

/* io_pread through a queue whose completion carries another request's tag: an internal
 * error said as such, never that other request's result taken for this read's. */
static void test_sync_wrong_tag(void **state)
{
	struct rig *g = rig_new(8, 0);

	(void)state;
	g->io.queue->wrong_tag = 1;
	assert_int_equal(io_pread(&g->io, g->f, g->buf, 5000, 0), -EIO);
	if (!strstr(g->run.err.msg, "internal error: a read of 'fake.bin' at offset 0") ||
	    !strstr(g->run.err.msg, "another request's completion"))
		fail_msg("message: %s", g->run.err.msg);
	assert_int_equal(g->stats.ops, 0);
	assert_int_equal(g->stats.bytes, 0);
	rig_free(g);
}

/* A back-end with its own namespace: lists three names, refuses to remove anything. */
static unsigned ns_lists, ns_rmdirs;

static int ns_list_dir(const char *path, storage_dir_fn fn, void *arg, struct run *run)
{
	static const char *const names[] = {"a", "b", "c"};
	int rc = 0;

	(void)path;
	(void)run;
	ns_lists++;
	for (size_t i = 0; i < 3 && rc == 0; i++)
		rc = fn(names[i], arg);
	return rc;
}

static int ns_rmdir(const char *path, struct run *run)
{
	(void)path;
	(void)run;
	ns_rmdirs++;
	return -EBUSY;
}

static const struct storage_ops ns_storage = {
    .version = STORAGE_OPS_VERSION,
    .name = "ns",
    .open = fake_open,
    .pread = fake_pread,
    .close = fake_close,
    .list_dir = ns_list_dir,
    .rmdir = ns_rmdir,
};

struct names {
	char seen[8][16];
	int n, stop_at; /* stop_at: the callback returns 7 at this entry (1-based), 0: never */
};

static int collect(const char *name, void *arg)
{
	struct names *nm = arg;

	if (nm->n < 8)
		snprintf(nm->seen[nm->n], sizeof(nm->seen[0]), "%s", name);
	nm->n++;
	return nm->n == nm->stop_at ? 7 : 0;
}

static void test_namespace_backend(void **state)
{
	struct run run = {0};
	struct io_stats st;
	struct io io = {.run = &run, .stats = &st};
	struct names nm = {0};

	(void)state;
	fb_errbuf_init(&run.err);
	io_stats_reset(&st);
	run.storage = &ns_storage;
	assert_int_equal(io_list_dir(&io, "/nowhere", collect, &nm), 0);
	assert_int_equal(nm.n, 3);
	assert_string_equal(nm.seen[2], "c");
	nm = (struct names){.stop_at = 2};
	assert_int_equal(io_list_dir(&io, "/nowhere", collect, &nm), 7); /* fn's stop, as is */
	assert_int_equal(nm.n, 2);
	assert_int_equal(io_rmdir(&io, "/nowhere/d", true), -EBUSY);
	assert_non_null(strstr(run.err.msg, "cannot remove folder '/nowhere/d'"));
	assert_int_equal(ns_lists, 2);
	assert_int_equal(ns_rmdirs, 1);
	assert_int_equal(st.meta_ops, 3);
}

static void test_namespace_posix(void **state)
{
	char dir[] = "/tmp/fb-test-io-XXXXXX", path[64];
	struct run run = {0};
	struct io_stats st;
	struct io io = {.run = &run, .stats = &st};
	struct names nm = {0};

	(void)state;
	fb_errbuf_init(&run.err);
	io_stats_reset(&st);
	run.storage = &fake_storage; /* no namespace ops: the POSIX calls */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sub", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(io_list_dir(&io, dir, collect, &nm), 0);
	assert_int_equal(nm.n, 1); /* "." and ".." are not entries */
	assert_string_equal(nm.seen[0], "sub");
	/* A folder that is not empty is not removed; the message names it. */
	assert_int_equal(io_rmdir(&io, dir, false), -ENOTEMPTY);
	assert_non_null(strstr(run.err.msg, dir));
	assert_int_equal(io_rmdir(&io, path, false), 0);
	assert_int_equal(io_rmdir(&io, path, true), 0); /* gone: fine when missing_ok */
	assert_int_equal(io_list_dir(&io, path, collect, &nm), -ENOENT);
	assert_int_equal(io_rmdir(&io, dir, false), 0);
	assert_int_equal(st.meta_ops, 6);
}

/* A back-end with its own eviction and folder fsync: evicts any file but "bad", fsyncs any
 * folder but "/ro". */
static unsigned ev_evicts, ev_syncs;

static int ev_evict(struct sfile *f)
{
	ev_evicts++;
	return strcmp(((struct sfile_base *)f)->path, "bad") == 0 ? -EIO : 0;
}

static int ev_sync_dir(const char *path, struct run *run)
{
	(void)run;
	ev_syncs++;
	return strcmp(path, "/ro") == 0 ? -EROFS : 0;
}

static int ev_rename(const char *from, const char *to, struct run *run)
{
	(void)to;
	(void)run;
	return strcmp(from, "far") == 0 ? -EXDEV : 0;
}

static const struct storage_ops ev_storage = {
    .version = STORAGE_OPS_VERSION,
    .name = "ev",
    .open = fake_open,
    .pread = fake_pread,
    .close = fake_close,
    .evict = ev_evict,
    .sync_dir = ev_sync_dir,
    .rename = ev_rename,
};

/* io_evict opens through the back-end, evicts, closes (the open counted only with stats);
 * io_sync_dir goes to the back-end's sync_dir, counted as a sync; io_rename to its rename,
 * counted as a namespace call; failures name the paths. */
static void test_evict_and_sync_dir(void **state)
{
	struct run run = {0};
	struct io_stats st;
	struct io io = {.run = &run, .stats = &st}, quiet = {.run = &run};

	(void)state;
	fb_errbuf_init(&run.err);
	io_stats_reset(&st);
	run.storage = &ev_storage;
	assert_int_equal(io_evict(&io, "good"), 0);
	assert_int_equal(io_evict(&quiet, "good"), 0);
	assert_int_equal(ev_evicts, 2);
	assert_int_equal(st.opens, 1);
	assert_int_equal(io_sync_dir(&io, "/d"), 0);
	assert_int_equal(st.syncs, 1);
	assert_int_equal(io_evict(&io, "bad"), -EIO);
	assert_non_null(strstr(run.err.msg, "cannot evict 'bad' from the page cache"));
	fb_errbuf_clear(&run.err);
	assert_int_equal(io_sync_dir(&io, "/ro"), -EROFS);
	assert_non_null(strstr(run.err.msg, "cannot fsync folder '/ro'"));
	assert_int_equal(ev_syncs, 2);
	assert_int_equal(st.syncs, 1); /* a failed fsync is not counted as made */
	fb_errbuf_clear(&run.err);
	assert_int_equal(io_rename(&io, "near", "b"), 0);
	assert_int_equal(io_rename(&io, "far", "b"), -EXDEV);
	assert_non_null(strstr(run.err.msg, "cannot rename 'far' to 'b'"));
	assert_int_equal(st.meta_ops, 2);
	/* Without the ops: the POSIX folder fsync; a back-end without evict opens and closes. */
	char dir[] = "/tmp/fb-test-io-XXXXXX";
	run.storage = &fake_storage;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(io_sync_dir(&io, dir), 0);
	assert_int_equal(st.syncs, 2);
	assert_int_equal(io_evict(&io, "any"), 0);
	char a[64], b[64];
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	FILE *fa = fopen(a, "w");
	assert_non_null(fa);
	fclose(fa);
	assert_int_equal(io_rename(&io, a, b), 0); /* POSIX rename(2) */
	assert_int_equal(access(a, F_OK), -1);
	assert_int_equal(unlink(b), 0);
	assert_int_equal(st.meta_ops, 3);
	assert_int_equal(rmdir(dir), 0);
}

/* Two batches of four reads in flight at once, the oldest completing first: the first
 * batch's mark is done while the second's reads are still in flight; completions out of order
 * (newest first): a mark is not done while an older read is in flight. */
static void test_marks(void **state)
{
	(void)state;
	for (int fifo = 0; fifo < 2; fifo++) {
		struct rig *g = rig_new(8, 0);
		uint64_t m0 = io_queue_mark(&g->io), ma, mb;

		g->io.queue->reap_max = 1;
		g->io.queue->fifo = fifo;
		assert_true(io_queue_done(&g->io, m0));
		for (unsigned i = 0; i < 4; i++)
			assert_int_equal(
			    io_queue_read(&g->io, g->f, g->buf + i * 1000, 1000, i * 1000), 0);
		ma = io_queue_mark(&g->io);
		for (unsigned i = 4; i < 8; i++)
			assert_int_equal(
			    io_queue_read(&g->io, g->f, g->buf + i * 1000, 1000, i * 1000), 0);
		mb = io_queue_mark(&g->io);
		assert_false(io_queue_done(&g->io, ma));
		for (unsigned i = 0; i < 4; i++) {
			assert_int_equal(io_queue_poll(&g->io), 0);
			assert_int_equal(g->io.inflight, 7 - i);
		}
		/* fifo: the first batch landed, the second is in flight; else the reverse */
		assert_int_equal(io_queue_done(&g->io, ma), fifo);
		assert_false(io_queue_done(&g->io, mb));
		while (!io_queue_done(&g->io, mb))
			assert_int_equal(io_queue_poll(&g->io), 0);
		assert_int_equal(g->io.inflight, 0);
		assert_int_equal(io_queue_poll(&g->io), 0); /* nothing in flight: returns at once */
		assert_int_equal(io_queue_wait(&g->io), 0);
		assert_data(g, 8000);
		assert_int_equal(g->stats.ops, 8);
		assert_int_equal(g->stats.latency.count, 8);
		rig_free(g);
	}
}

/* Waiting for one file's reads (before the reader cache closes it) leaves the others' reads
 * in flight. */
static void test_wait_file(void **state)
{
	struct rig *g = rig_new(8, 0);
	struct sfile *f2;

	(void)state;
	assert_int_equal(io_open(&g->io, &f2, "other.bin", STORAGE_O_READ), 0);
	g->io.queue->reap_max = 1;
	g->io.queue->fifo = 1;
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(io_queue_read(&g->io, g->f, g->buf + i * 1000, 1000, i * 1000), 0);
	for (unsigned i = 2; i < 5; i++)
		assert_int_equal(io_queue_read(&g->io, f2, g->buf + i * 1000, 1000, i * 1000), 0);
	assert_int_equal(io_queue_wait_file(&g->io, g->f), 0);
	assert_int_equal(g->io.inflight, 3);
	assert_int_equal(io_queue_wait(&g->io), 0);
	assert_data(g, 5000);
	assert_int_equal(io_close(&g->io, f2), 0);
	rig_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_depth_and_counts),
	    cmocka_unit_test(test_transfer_pieces),
	    cmocka_unit_test(test_short_and_eintr),
	    cmocka_unit_test(test_error),
	    cmocka_unit_test(test_eof),
	    cmocka_unit_test(test_sync_path),
	    cmocka_unit_test(test_sync_wrong_tag),
	    cmocka_unit_test(test_namespace_backend),
	    cmocka_unit_test(test_namespace_posix),
	    cmocka_unit_test(test_evict_and_sync_dir),
	    cmocka_unit_test(test_marks),
	    cmocka_unit_test(test_wait_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
