/* Shared helpers of the libFuzzer targets in tests/fuzz/ (one target per file, fuzz_<name>.c).
 *
 * Each target feeds its input to the project's own reader: directly when the parser takes a
 * buffer, otherwise through a file in a private scratch folder (on /dev/shm when it exists)
 * read by the real function, exactly as a user's file would be.
 */
#ifndef FEEDBENCH_FUZZ_COMMON_H
#define FEEDBENCH_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* An invariant of the code under test, checked on every input: when it does not hold, the
 * target says which one (file:line and why) and aborts, so libFuzzer keeps the input. The
 * sanitizers (address, undefined) are the other checks every target makes. */
#define FUZZ_EXPECT(cond, ...)                                                                     \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: expected %s: ", __FILE__, __LINE__, #cond);        \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* The scratch folder of this process, created on first use and removed at exit. */
const char *fuzz_dir(void);

/* Writes data to dir/name (dir relative to fuzz_dir(), "" for fuzz_dir() itself), creating
 * the folders. Aborts on an I/O error: the harness, not the code under test, failed. */
void fuzz_write(const char *dir, const char *name, const void *data, size_t len);

/* Path of dir/name under fuzz_dir() in buf. */
const char *fuzz_path(char *buf, size_t len, const char *dir, const char *name);

/* Removes everything below fuzz_dir() (between inputs). */
void fuzz_clean(void);

/* Copies tests/fuzz/<file> (a fixed, valid companion of the input such as sweep.json) into
 * folder dir under fuzz_dir(), keeping its name. */
void fuzz_copy(const char *file, const char *dir);

/* MPI_Init_thread once, for code that needs a communicator (MPI_COMM_SELF: one rank); call it
 * from LLVMFuzzerInitialize so that its allocations are not taken for a leak of an input. */
void fuzz_mpi_init(void);

/* Discovers the dataset in folder dir (one file) with format `format` as `generate = never`
 * does (dataset_discover: the format's probe), then indexes, opens and reads every sample of
 * it (at most a few hundred) through the format plug-in, as the reader threads do. */
void fuzz_read_dataset(const char *format, const char *dir);

/* Runs a command's main function (compare_main, ...) with a NULL-terminated argument list. */
int fuzz_main(int (*fn)(int, char **), ...);

#endif
