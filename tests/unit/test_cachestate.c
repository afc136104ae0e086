/* The page-cache measurement's gather (bench/cachestate.c) when rank 0 cannot allocate the
 * buffer that receives every rank's counts: every rank returns the same -ENOMEM, agreed, with
 * rank 0's message (named "rank 0" when more than one rank runs), and nothing is recorded; no
 * rank is left waiting in the gather. ctest runs it alone (unit.test_cachestate) and on 2 ranks
 * (unit.test_cachestate_2ranks). The allocation is failed through the linker's --wrap=malloc.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <mpi.h>

#include "bench/cachestate.h"
#include "bench/run.h"

static int fail_next_malloc;

void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);

void *__wrap_malloc(size_t n)
{
	if (fail_next_malloc) {
		fail_next_malloc = 0;
		return NULL;
	}
	return __real_malloc(n);
}

static size_t records(struct run *run)
{
	return json_array_size(json_object_get(run->info_storage, "test_cache_measured"));
}

static void test_gather_without_memory(void **state)
{
	struct run *run = calloc(1, sizeof(*run));

	(void)state;
	assert_non_null(run);
	fb_errbuf_init(&run->err);
	cfg_defaults(&run->cfg);
	run->comm = MPI_COMM_WORLD;
	MPI_Comm_rank(run->comm, &run->rank);
	MPI_Comm_size(run->comm, &run->nranks);
	run->info_storage = json_object();

	/* A rank with no file counts nothing; rank 0 records one entry. */
	assert_int_equal(cachestate_record_path(run, NULL, "test_cache_measured", 1, "before"), 0);
	assert_int_equal(records(run), run->rank == 0 ? 1 : 0);

	/* The next allocation of rank 0 is the gather's buffer (no file to examine first). */
	fail_next_malloc = run->rank == 0;
	int rc = cachestate_record_path(run, NULL, "test_cache_measured", 2, "before");
	fail_next_malloc = 0;
	assert_int_equal(rc, -ENOMEM);
	assert_int_equal(run->err.code, -ENOMEM);
	assert_non_null(strstr(run->err.msg,
			       "page-cache measurement (storage.test_cache_measured): "
			       "cannot allocate"));
	if (run->nranks > 1)
		assert_int_equal(strncmp(run->err.msg, "rank 0: ", 8), 0);
	assert_int_equal(records(run), run->rank == 0 ? 1 : 0);
	json_decref(run->info_storage);
	free(run);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gather_without_memory),
	};
	int rc;

	MPI_Init(&argc, &argv);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	MPI_Finalize();
	return rc;
}
