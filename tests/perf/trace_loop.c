/* A benchmark of tests/perf/trace_cost.sh (MODE=loop), not a test: what recording one read in
 * the per-operation trace (bench/trace.c, trace_io) costs against the 4 KiB page-cached pread
 * it records, measured side by side in one process so that a change of load hits both.
 *
 *   trace_loop FILE DIR [READS [ROUNDS]]
 *
 * Each round times READS (default 10000) preads of 4 KiB from FILE (front to back, wrapping;
 * it should be in the page cache) with the two clock reads io.c makes around each, once
 * without and once with trace_io after each read (the staging file in DIR, written whenever a
 * thread's buffer fills, as during a run), in alternating order, ROUNDS (default 100) times.
 * Prints one line per round: "<round> <ns per read off> <ns per read on> <CPU ns per read off>
 * <CPU ns per read on>" (CLOCK_MONOTONIC; CPU: CLOCK_THREAD_CPUTIME_ID, user + system of this
 * thread, the staging writes included), then "staging <bytes> <events>": the bytes the trace
 * wrote for its events. The JSON lines formatted after a run are not part of it (trace.md).
 * Exits 1 when the trace staged fewer bytes than its reads' records take (it recorded nothing
 * the cost could be of), 2 on bad arguments.
 */
#include <dirent.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "run.h"
#include "timer.h"
#include "trace.h"

#define BS	       4096
#define TRACE_LOOP_BUF (64 * 1024) /* a thread's trace buffer (TRACE_BUF, bench/trace.c) */

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One block of n reads from *off on; traced when t is not NULL. Wall and CPU ns of it. */
static int block(int fd, const char *path, off_t size, off_t *off, char *buf, long n,
		 struct trace *t, uint64_t out[2])
{
	uint64_t w0 = timer_now_ns(), c0 = cpu_ns(), bytes = 0;

	for (long i = 0; i < n; i++) {
		uint64_t t0 = timer_now_ns();
		ssize_t got = pread(fd, buf, BS, *off);
		uint64_t t1 = timer_now_ns();
		if (got != BS) {
			fprintf(stderr, "trace_loop: cannot read 4 KiB of '%s' at offset %lld\n",
				path, (long long)*off);
			return -1;
		}
		bytes += (uint64_t)got;
		if (t)
			trace_io(t, "read", trace_cat(t), t0, t1, path, (uint64_t)*off, BS);
		*off = *off + 2 * BS > size ? 0 : *off + BS;
	}
	out[0] = timer_now_ns() - w0;
	out[1] = cpu_ns() - c0;
	return bytes == (uint64_t)n * BS ? 0 : -1;
}

/* The size of this rank's staging file in dir (removed by trace_close). */
static long long staging_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	long long n = -1;
	char p[4352];
	struct stat st;

	while (d && (e = readdir(d)))
		if (strncmp(e->d_name, ".feedbench-trace-", 17) == 0 &&
		    strstr(e->d_name, ".rank0") && !strstr(e->d_name, ".json")) {
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			if (stat(p, &st) == 0)
				n = (long long)st.st_size;
		}
	if (d)
		closedir(d);
	return n;
}

static int measure(struct run *run, const char *path, long reads, int rounds)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	char *buf = aligned_alloc(BS, BS);
	off_t off = 0;
	int rc = 0;

	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 2 * BS || !buf) {
		fprintf(stderr, "trace_loop: '%s' is not a readable file of 8 KiB or more\n", path);
		free(buf);
		return 1;
	}
	for (int r = 0; r < rounds && rc == 0; r++) {
		uint64_t a[2], b[2]; /* a: off, b: on */
		if (r % 2 == 0)
			rc = block(fd, path, st.st_size, &off, buf, reads, NULL, a) ||
			     block(fd, path, st.st_size, &off, buf, reads, run->trace, b);
		else
			rc = block(fd, path, st.st_size, &off, buf, reads, run->trace, b) ||
			     block(fd, path, st.st_size, &off, buf, reads, NULL, a);
		printf("%d %.2f %.2f %.2f %.2f\n", r + 1, (double)a[0] / (double)reads,
		       (double)b[0] / (double)reads, (double)a[1] / (double)reads,
		       (double)b[1] / (double)reads);
	}
	close(fd);
	free(buf);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	int provided, rc;
	struct run *run = calloc(1, sizeof(*run));

	if (argc < 3 || !run) {
		fprintf(stderr, "usage: trace_loop FILE DIR [READS [ROUNDS]]\n");
		return 2;
	}
	long reads = argc > 3 ? atol(argv[3]) : 10000;
	int rounds = argc > 4 ? atoi(argv[4]) : 100;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	run->comm = MPI_COMM_WORLD;
	MPI_Comm_rank(run->comm, &run->rank);
	MPI_Comm_size(run->comm, &run->nranks);
	pthread_mutex_init(&run->err.lock, NULL);
	snprintf(run->hostname, sizeof(run->hostname), "localhost");
	run->cfg.output.trace = true;
	rc = reads > 0 && rounds > 0 && trace_open(run, argv[2]) == 0 && run->trace
		 ? measure(run, argv[1], reads, rounds)
		 : 2;
	if (rc == 0) {
		/* A figure is only worth printing for a trace that recorded the reads: every record
		 * is at least 16 bytes, and at most one thread buffer may still be unwritten. */
		long long staged = staging_bytes(argv[2]), events = (long long)reads * rounds;
		printf("staging %lld %lld\n", staged, events);
		if (staged < events * 16 - TRACE_LOOP_BUF) {
			fprintf(
			    stderr,
			    "trace_loop: the trace staged %lld bytes for %lld reads: it did not "
			    "record them, so the cost above measures nothing\n",
			    staged, events);
			rc = 1;
		}
	}
	if (run->trace)
		trace_close(run);
	free(run);
	MPI_Finalize();
	return rc;
}
