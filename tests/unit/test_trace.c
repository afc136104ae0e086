/* The per-operation trace's records (bench/trace.c), on one rank: what trace_io and trace_step
 * record comes out of trace_finish as JSON lines with its name, category, file, offset, size,
 * step and duration to the nanosecond, also a duration over 4.29 s (a record's 32-bit duration
 * does not hold it: it follows the record); more event names than the trace keeps fail the
 * trace with a message saying so, never a line with another event's name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <mpi.h>

#include "bench/run.h"
#include "bench/trace.h"

static char tmpdir[] = "/tmp/fb-test-trace-XXXXXX";

static struct run *run_new(void)
{
	struct run *run = calloc(1, sizeof(*run));

	assert_non_null(run);
	fb_errbuf_init(&run->err);
	run->comm = MPI_COMM_SELF;
	run->nranks = 1;
	snprintf(run->hostname, sizeof(run->hostname), "host");
	run->cfg.output.trace = true;
	assert_int_equal(trace_open(run, tmpdir), 0);
	assert_non_null(run->trace);
	return run;
}

/* The trace's lines after trace_finish, in a string to free. */
static char *finish(struct run *run)
{
	char path[256], *text = calloc(1, 1 << 16);
	FILE *f;

	assert_int_equal(trace_finish(run), 0);
	assert_int_equal(trace_place(run, tmpdir), 0);
	snprintf(path, sizeof(path), "%s/%s", tmpdir, TRACE_FILE);
	assert_non_null(f = fopen(path, "r"));
	fread(text, 1, (1 << 16) - 1, f);
	fclose(f);
	unlink(path);
	return text;
}

static void test_events(void **state)
{
	struct run *run = run_new();
	uint64_t t0 = 1000000000000ull;
	char *text;

	(void)state;
	trace_io(run->trace, "read", "POSIX", t0, t0 + 1234, "/data/a", 8192, 4096);
	trace_io(run->trace, "fsync", "POSIX", t0, t0 + 5000000001ull, NULL, 0, 0);
	trace_step(run->trace, "compute", t0, t0 + 4294967296ull, 7);
	trace_io(run->trace, "read", "io_uring", t0, t0 + 999, "/data/b", 0, 512);
	text = finish(run);
	if (!strstr(text, "{\"name\":\"read\",\"cat\":\"POSIX\"") ||
	    !strstr(text, "\"dur\":1.234,\"ph\":\"X\",\"args\":{\"fname\":\"/data/a\","
			  "\"offset\":8192,\"size\":4096}}") ||
	    !strstr(text, "{\"name\":\"fsync\",\"cat\":\"POSIX\"") ||
	    !strstr(text, "\"dur\":5000000.001,\"ph\":\"X\",\"args\":{\"size\":0}}") ||
	    !strstr(text, "{\"name\":\"compute\",\"cat\":\"train\"") ||
	    !strstr(text, "\"dur\":4294967.296,\"ph\":\"X\",\"args\":{\"step\":7}}") ||
	    !strstr(text, "{\"name\":\"read\",\"cat\":\"io_uring\"") ||
	    !strstr(text, "\"dur\":0.999,\"ph\":\"X\",\"args\":{\"fname\":\"/data/b\","
			  "\"offset\":0,\"size\":512}}"))
		fail_msg("trace:\n%s", text);
	free(text);
	trace_close(run);
	free(run);
}

static void test_too_many_names(void **state)
{
	static char names[300][8];
	struct run *run = run_new();

	(void)state;
	for (int i = 0; i < 300; i++) {
		snprintf(names[i], sizeof(names[i]), "n%d", i);
		trace_step(run->trace, names[i], 1, 2, (uint64_t)i);
	}
	assert_int_not_equal(trace_finish(run), 0);
	if (!strstr(run->err.msg, "lost events: more than 256 event names"))
		fail_msg("message: %s", run->err.msg);
	trace_close(run);
	free(run);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_events),
	    cmocka_unit_test(test_too_many_names),
	};
	int rc;

	MPI_Init(&argc, &argv);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(tmpdir);
	MPI_Finalize();
	return rc;
}
