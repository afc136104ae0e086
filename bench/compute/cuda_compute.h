/* The CUDA compute plug-in (cuda.cu) beyond its compute_ops: the checksum its kernel computes,
 * for the tests in tests/gpu, and the C name of the ops table for the registry.
 *
 * The kernel reads every byte of the batch it was given and sums it as
 *   sum over i of word[i] * (2 i + 1)  (mod 2^64)
 * where word[i] is the i-th 8-byte little-endian word of the batch, the last one padded with
 * zero bytes. A test computes the same sum on the host: equal sums mean the bytes really
 * crossed to the device.
 */
#ifndef FEEDBENCH_CUDA_COMPUTE_H
#define FEEDBENCH_CUDA_COMPUTE_H

#include <stdint.h>

#include "compute.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const struct compute_ops cuda_compute;

/* The checksum of the batch of the last completed step(); 0 before the first. */
uint64_t cuda_compute_last_checksum(struct compute *c);

#ifdef __cplusplus
}
#endif

#endif
