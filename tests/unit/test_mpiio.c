/* The mpiio back-end's collective transfers (bench/storage/mpiio.c) and their wrappers
 * (io_pread_all, io_pwrite_all in bench/storage/io.c), on one rank:
 * - mpiio_bytes_type describes any length as one MPI call whose count fits in an int: plain
 *   bytes up to the piece size, else one element of a derived type exactly len bytes long
 *   (5 GiB checked without allocating it);
 * - a collective write and read through such a type (small pieces, so the derived type is the
 *   one used) move every byte in order, and a read past the end reports the bytes it moved;
 * - the back-end's pwrite_all/pread_all through the wrappers: counted as one call each, a short
 *   collective read is an end-of-file error naming the file and offset, and a back-end without
 *   collective transfers is refused with its name;
 * - mpiio_extents_type describes a list of ranges as one file view whose blocks fit in an int
 *   (5 GiB checked without allocating it), and io_pread_extents_all reads them in one counted
 *   call.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <mpi.h>

#include "bench/run.h"
#include "bench/storage/storage.h"
#include "bench/storage/mpiio.h"

#define PIECE 4096

static char tmpdir[] = "/tmp/fb-test-mpiio-XXXXXX";

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 131 + (i >> 8) + 7);
}

/* The type's bytes: its size and its extent, both exactly len, starting at 0. */
static void assert_type(size_t len, size_t piece)
{
	MPI_Datatype type;
	MPI_Count size = -1, lb = -1, extent = -1;
	int count = -1;

	assert_int_equal(mpiio_bytes_type(len, piece, &type, &count), MPI_SUCCESS);
	if (len <= piece) {
		assert_true(type == MPI_BYTE);
		assert_int_equal(count, (int)len);
	} else {
		assert_true(type != MPI_BYTE);
		assert_int_equal(count, 1);
		assert_int_equal(MPI_Type_size_x(type, &size), MPI_SUCCESS);
		assert_int_equal(MPI_Type_get_true_extent_x(type, &lb, &extent), MPI_SUCCESS);
		if ((size_t)size != len || lb != 0 || (size_t)extent != len)
			fail_msg("len %zu piece %zu: size %lld, lb %lld, extent %lld", len, piece,
				 (long long)size, (long long)lb, (long long)extent);
	}
	mpiio_bytes_type_free(&type);
	assert_true(type == MPI_BYTE);
}

static void test_type_sizes(void **state)
{
	const size_t lens[] = {0,	  1,	     PIECE - 1,	    PIECE,
			       PIECE + 1, 3 * PIECE, 3 * PIECE + 7, 1000 * PIECE + 4095};
	MPI_Datatype type;
	int count;

	(void)state;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		assert_type(lens[i], PIECE);
	/* The production piece (1 GiB) at sizes an int count cannot hold. */
	assert_type((size_t)INT_MAX + 1, (size_t)1 << 30);
	assert_type(((size_t)5 << 30) + 3, (size_t)1 << 30);
	assert_type((size_t)4 << 30, (size_t)1 << 30);
	/* Pieces an int cannot count are refused, leaving plain bytes and no count. */
	assert_int_equal(mpiio_bytes_type(10, 0, &type, &count), MPI_ERR_COUNT);
	assert_true(type == MPI_BYTE && count == 0);
	assert_int_equal(mpiio_bytes_type(10, (size_t)INT_MAX + 1, &type, &count), MPI_ERR_COUNT);
	assert_true(type == MPI_BYTE && count == 0);
}

/* A write and a read of 3 pieces and 7 bytes, each one collective call with one element of
 * the derived type; then a read that runs 10 bytes into the end of the file. */
static void test_collective_roundtrip(void **state)
{
	const size_t len = 3 * PIECE + 7, off = 100;
	char path[64];
	char *out = malloc(len), *in = malloc(len);
	MPI_File fh;
	MPI_Status st;
	MPI_Datatype type;
	MPI_Count n = -1;
	int count;

	(void)state;
	assert_non_null(out);
	assert_non_null(in);
	for (size_t i = 0; i < len; i++)
		out[i] = (char)pattern(i);
	memset(in, 0xee, len);
	snprintf(path, sizeof(path), "%s/roundtrip", tmpdir);
	assert_int_equal(
	    MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
	    MPI_SUCCESS);
	assert_int_equal(mpiio_bytes_type(len, PIECE, &type, &count), MPI_SUCCESS);
	assert_int_equal(count, 1);
	assert_int_equal(MPI_File_write_at_all(fh, off, out, count, type, &st), MPI_SUCCESS);
	assert_int_equal(MPI_Get_elements_x(&st, MPI_BYTE, &n), MPI_SUCCESS);
	assert_int_equal(n, len);
	assert_int_equal(MPI_File_read_at_all(fh, off, in, count, type, &st), MPI_SUCCESS);
	assert_int_equal(MPI_Get_elements_x(&st, MPI_BYTE, &n), MPI_SUCCESS);
	assert_int_equal(n, len);
	assert_memory_equal(in, out, len);
	/* Past the end: 10 bytes are there, the status says so (a partial element). */
	memset(in, 0xee, len);
	assert_int_equal(MPI_File_read_at_all(fh, off + len - 10, in, count, type, &st),
			 MPI_SUCCESS);
	assert_int_equal(MPI_Get_elements_x(&st, MPI_BYTE, &n), MPI_SUCCESS);
	assert_int_equal(n, 10);
	assert_memory_equal(in, out + len - 10, 10);
	mpiio_bytes_type_free(&type);
	assert_int_equal(MPI_File_close(&fh), MPI_SUCCESS);
	unlink(path);
	free(out);
	free(in);
}

/* The file type of a list of ranges: its size is their total, it starts at the first offset and
 * ends at the last range's end, with a block per piece (a range beyond piece bytes is split). */
static void assert_extents(const struct storage_extent *ext, size_t n, size_t piece,
			   int want_blocks)
{
	MPI_Datatype type;
	MPI_Count size = -1, lb = -1, extent = -1;
	int ni = -1, na = -1, nd = -1, comb = -1;
	size_t total = 0, sum = 0;

	for (size_t k = 0; k < n; k++)
		sum += ext[k].len;
	assert_int_equal(mpiio_extents_type(ext, n, piece, &type, &total), MPI_SUCCESS);
	assert_int_equal(total, sum);
	assert_int_equal(MPI_Type_size_x(type, &size), MPI_SUCCESS);
	assert_int_equal(MPI_Type_get_true_extent_x(type, &lb, &extent), MPI_SUCCESS);
	if ((size_t)size != sum || (uint64_t)lb != ext[0].off ||
	    (uint64_t)(lb + extent) != ext[n - 1].off + ext[n - 1].len)
		fail_msg("size %lld lb %lld extent %lld", (long long)size, (long long)lb,
			 (long long)extent);
	assert_int_equal(MPI_Type_get_envelope(type, &ni, &na, &nd, &comb), MPI_SUCCESS);
	assert_int_equal(comb, MPI_COMBINER_HINDEXED);
	assert_int_equal(ni - 1, want_blocks); /* integers: the count, then a length per block */
	mpiio_bytes_type_free(&type);
}

static void test_extents_type(void **state)
{
	const struct storage_extent small[] = {
	    {100, 3 * PIECE + 7}, {5 * PIECE, 10}, {6 * PIECE, 0}, {6 * PIECE, PIECE}};
	const struct storage_extent big[] = {{7, ((size_t)5 << 30) + 3}, {(size_t)6 << 30, 1}};
	const struct storage_extent bad_order[] = {{PIECE, 10}, {0, 10}};
	const struct storage_extent overlap[] = {{0, 10}, {9, 10}};
	MPI_Datatype type;
	size_t total = 1;

	(void)state;
	assert_extents(small, 4, PIECE, 4 + 1 + 0 + 1);
	/* Production piece: 5 GiB + 3 bytes in one range, six blocks, no int overflowed. */
	assert_extents(big, 2, (size_t)1 << 30, 6 + 1);
	/* Nothing to read: a plain byte view. */
	assert_int_equal(mpiio_extents_type(NULL, 0, PIECE, &type, &total), MPI_SUCCESS);
	assert_true(type == MPI_BYTE && total == 0);
	/* Ranges MPI cannot take as a file view, and pieces an int cannot count. */
	assert_int_equal(mpiio_extents_type(bad_order, 2, PIECE, &type, &total), MPI_ERR_ARG);
	assert_true(type == MPI_DATATYPE_NULL);
	assert_int_equal(mpiio_extents_type(overlap, 2, PIECE, &type, &total), MPI_ERR_ARG);
	assert_int_equal(mpiio_extents_type(small, 4, (size_t)INT_MAX + 1, &type, &total),
			 MPI_ERR_COUNT);
	assert_true(type == MPI_DATATYPE_NULL);
}

struct rig {
	struct run run;
	struct io_stats stats;
	struct io io;
};

static struct rig *rig_new(const struct storage_ops *ops)
{
	struct rig *g = calloc(1, sizeof(*g));

	assert_non_null(g);
	fb_errbuf_init(&g->run.err);
	g->run.comm = MPI_COMM_SELF;
	g->run.storage = ops;
	g->run.info_storage = json_object();
	io_stats_reset(&g->stats);
	g->io = (struct io){.run = &g->run, .stats = &g->stats};
	return g;
}

static void rig_free(struct rig *g)
{
	json_decref(g->run.info_storage);
	free(g);
}

/* Through the wrappers: one counted call each way; a short collective read is an error. */
static void test_wrappers(void **state)
{
	const size_t len = 2 * PIECE + 5;
	struct rig *g = rig_new(&mpiio_storage);
	char path[64], *out = malloc(len), *in = malloc(len);
	struct sfile *f = NULL;

	(void)state;
	assert_non_null(out);
	assert_non_null(in);
	for (size_t i = 0; i < len; i++)
		out[i] = (char)pattern(i + 3);
	snprintf(path, sizeof(path), "%s/wrappers", tmpdir);
	assert_true(storage_has_collective(&mpiio_storage));
	assert_int_equal(io_open(&g->io, &f, path, STORAGE_O_WRITE | STORAGE_O_READ), 0);
	assert_int_equal(io_pwrite_all(&g->io, f, out, len, 0), 0);
	assert_int_equal(io_pread_all(&g->io, f, in, len, 0), 0);
	assert_memory_equal(in, out, len);
	/* A rank with nothing to move joins and is not counted. */
	assert_int_equal(io_pread_all(&g->io, f, in, 0, 0), 0);
	assert_int_equal(g->stats.wbytes, len);
	assert_int_equal(g->stats.wops, 1);
	assert_int_equal(g->stats.wlatency.count, 1);
	assert_int_equal(g->stats.bytes, len);
	assert_int_equal(g->stats.ops, 1);
	assert_int_equal(g->stats.latency.count, 1);
	assert_int_equal(io_pread_all(&g->io, f, in, 100, len - 40), -FB_EEOF);
	if (!strstr(g->run.err.msg, "collective read of '") ||
	    !strstr(g->run.err.msg, "wrappers' at offset 8157 moved 40 of 100 bytes"))
		fail_msg("message: %s", g->run.err.msg);
	assert_int_equal(g->stats.ops, 1);
	assert_int_equal(io_close(&g->io, f), 0);
	unlink(path);
	free(out);
	free(in);
	rig_free(g);
}

/* Ranges of a file read in one collective call through the wrapper: the bytes of each range
 * one after another, one counted call; a rank joining with none is not counted; a range past
 * the end is an end-of-file error naming the file and the first offset. */
static void test_extents_wrapper(void **state)
{
	const size_t len = 4 * PIECE;
	const struct storage_extent ext[] = {{10, PIECE + 3}, {2 * PIECE, 5}, {3 * PIECE, 100}};
	const struct storage_extent past[] = {{0, 4}, {len - 6, 10}};
	struct rig *g = rig_new(&mpiio_storage);
	char path[64], *out = malloc(len), in[2 * PIECE];
	struct sfile *f = NULL;
	size_t at = 0;

	(void)state;
	assert_non_null(out);
	for (size_t i = 0; i < len; i++)
		out[i] = (char)pattern(i + 11);
	snprintf(path, sizeof(path), "%s/extents", tmpdir);
	assert_int_equal(io_open(&g->io, &f, path, STORAGE_O_WRITE | STORAGE_O_READ), 0);
	assert_int_equal(io_pwrite_all(&g->io, f, out, len, 0), 0);
	memset(in, 0xee, sizeof(in));
	assert_int_equal(io_pread_extents_all(&g->io, f, in, ext, 3), 0);
	for (size_t k = 0; k < 3; k++) {
		assert_memory_equal(in + at, out + ext[k].off, ext[k].len);
		at += ext[k].len;
	}
	assert_int_equal((unsigned char)in[at], 0xee);
	assert_int_equal(io_pread_extents_all(&g->io, f, in, NULL, 0), 0);
	assert_int_equal(g->stats.bytes, at);
	assert_int_equal(g->stats.ops, 1);
	assert_int_equal(g->stats.latency.count, 1);
	/* The file reads like any other afterwards: the view was reset. */
	assert_int_equal(io_pread_all(&g->io, f, in, 16, 0), 0);
	assert_memory_equal(in, out, 16);
	assert_int_equal(io_pread_extents_all(&g->io, f, in, past, 2), -FB_EEOF);
	if (!strstr(g->run.err.msg, "unexpected end of file in '") ||
	    !strstr(
		g->run.err.msg,
		"extents': a collective read of 2 ranges from offset 0 returned 10 of 14 bytes"))
		fail_msg("message: %s", g->run.err.msg);
	assert_int_equal(g->stats.ops, 2);
	assert_int_equal(io_close(&g->io, f), 0);
	unlink(path);
	free(out);
	rig_free(g);
}

/* faulty over mpiio: a collective read of ranges is a read fault point like any read; the
 * call chosen to fail returns the injected errno (after joining with no range), recorded with
 * the file and offset, and is not counted. */
static void test_extents_faulty(void **state)
{
	extern const struct storage_ops faulty_storage;
	const struct storage_extent ext[] = {{0, 8}, {PIECE / 2, 8}};
	struct rig *g = rig_new(&faulty_storage);
	char path[64], buf[PIECE] = {0};
	struct sfile *f = NULL;

	(void)state;
	cfg_defaults(&g->run.cfg);
	snprintf(g->run.cfg.faulty.inner, sizeof(g->run.cfg.faulty.inner), "mpiio");
	snprintf(g->run.cfg.faulty.fail_op, sizeof(g->run.cfg.faulty.fail_op), "read");
	snprintf(g->run.cfg.faulty.fail_errno, sizeof(g->run.cfg.faulty.fail_errno), "EIO");
	g->run.cfg.faulty.fail_nth = 2;
	assert_true(storage_has_collective(&faulty_storage));
	assert_true(storage_effective(&faulty_storage, &g->run.cfg) == &mpiio_storage);
	snprintf(path, sizeof(path), "%s/faulty", tmpdir);
	assert_int_equal(io_open(&g->io, &f, path, STORAGE_O_WRITE | STORAGE_O_READ), 0);
	assert_int_equal(io_pwrite_all(&g->io, f, buf, sizeof(buf), 0), 0);
	assert_int_equal(io_pread_extents_all(&g->io, f, buf, ext, 2), 0);
	assert_int_equal(io_pread_extents_all(&g->io, f, buf, ext, 2), -EIO);
	if (!strstr(g->run.err.msg, "faulty' at offset 0 collectively: Input/output error"))
		fail_msg("message: %s", g->run.err.msg);
	assert_int_equal(g->stats.ops, 1);
	assert_int_equal(g->stats.bytes, 16);
	assert_int_equal(io_close(&g->io, f), 0);
	unlink(path);
	free(g->run.storage_priv);
	rig_free(g);
}

/* A back-end without collective transfers: refused with its name, nothing called. */
static void test_no_collective(void **state)
{
	extern const struct storage_ops posix_storage;
	struct rig *g = rig_new(&posix_storage);
	struct sfile *f = NULL;
	char path[64], buf[16] = {0};

	(void)state;
	assert_false(storage_has_collective(&posix_storage));
	snprintf(path, sizeof(path), "%s/posix", tmpdir);
	assert_int_equal(io_open(&g->io, &f, path, STORAGE_O_WRITE), 0);
	assert_int_equal(io_pwrite_all(&g->io, f, buf, sizeof(buf), 0), -ENOTSUP);
	if (!strstr(g->run.err.msg, "storage back-end posix has no collective transfers"))
		fail_msg("message: %s", g->run.err.msg);
	assert_int_equal(g->stats.wops, 0);
	assert_int_equal(io_close(&g->io, f), 0);
	unlink(path);
	rig_free(g);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_type_sizes),	    cmocka_unit_test(test_collective_roundtrip),
	    cmocka_unit_test(test_wrappers),	    cmocka_unit_test(test_extents_type),
	    cmocka_unit_test(test_extents_wrapper), cmocka_unit_test(test_extents_faulty),
	    cmocka_unit_test(test_no_collective),
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
