/* Bytes the code under test allocates, for unit tests that measure memory (per-rank memory,
 * docs/performance.md). A test that includes this header is linked with alloc_count.c and with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free (tests/CMakeLists.txt), so every
 * allocation made by feedbench's code and by the test passes through these counters; memory
 * allocated inside other libraries (libc, MPI) is not seen.
 *
 * Both counters are in usable bytes (malloc_usable_size). A test takes alloc_live as its base,
 * sets alloc_peak = alloc_live before the code it measures and reads alloc_peak - base after.
 * Not thread-safe: measure single-threaded code.
 */
#ifndef FEEDBENCH_TESTS_ALLOC_COUNT_H
#define FEEDBENCH_TESTS_ALLOC_COUNT_H

#include <stdint.h>

extern int64_t alloc_live; /* bytes allocated and not freed */
extern int64_t alloc_peak; /* the highest alloc_live since the test last set it */

#endif
