/* How the mpiio back-end's calls describe transfers of any size (tested in
 * tests/unit/test_mpiio.c), and the MPI_File behind one of its handles. */
#ifndef FEEDBENCH_MPIIO_H
#define FEEDBENCH_MPIIO_H

#include <mpi.h>

#include "storage.h"

extern const struct storage_ops mpiio_storage;

/* The MPI_File of an mpiio handle; -EINVAL when f was not opened by the mpiio back-end. */
int mpiio_file_handle(struct sfile *f, MPI_File *fh);

/* Converts an MPI return code into a negative code (an errno when the MPI error class has an
 * exact one, such as MPI_ERR_NO_SPACE -> -ENOSPC, else -FB_EMPI) and writes the library's
 * MPI_Error_string text into msg. */
int mpiio_error_code(int mpirc, char *msg, size_t len);

/* The memory side of one MPI call moving len bytes, for counts that are int: len bytes of
 * MPI_BYTE when len <= piece (count = len), else one element (count = 1) of a committed
 * derived type of len / piece contiguous pieces of piece bytes followed by the remainder.
 * Every rank thus makes one call whatever its len, and no call's count exceeds piece
 * (<= INT_MAX). Returns MPI_SUCCESS or an MPI error code (piece 0 or beyond INT_MAX:
 * MPI_ERR_COUNT), leaving MPI_BYTE with count 0. Free with mpiio_bytes_type_free(). */
int mpiio_bytes_type(size_t len, size_t piece, MPI_Datatype *type, int *count);
void mpiio_bytes_type_free(MPI_Datatype *type);

/* The file side of one collective read of n byte ranges (increasing offsets, no overlap): a
 * committed hindexed type of MPI_BYTE whose displacements are the offsets, each range one block
 * or, beyond piece bytes (piece <= INT_MAX), several blocks of at most piece bytes, so no block
 * length overflows an int. *total gets the sum of the lengths. Returns MPI_SUCCESS or an MPI
 * error code (piece 0 or beyond INT_MAX, more than INT_MAX blocks, ranges out of order:
 * MPI_ERR_COUNT or MPI_ERR_ARG), with *type MPI_DATATYPE_NULL; n 0 gives MPI_BYTE (a plain
 * byte view). Free with mpiio_bytes_type_free(). */
int mpiio_extents_type(const struct storage_extent *ext, size_t n, size_t piece, MPI_Datatype *type,
		       size_t *total);

#endif
