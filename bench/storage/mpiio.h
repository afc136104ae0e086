/* What workloads/collective.c needs from the mpiio back-end: the MPI_File behind a handle. */
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

#endif
