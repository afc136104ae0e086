/* The sample header every generated sample begins with, the seeded payload generator, and
 * verification. Formats store the whole sample (header + payload) as their record bytes, so
 * `verify = true` works for every format.
 *
 * Layout (little endian, 40 bytes):
 *   0  u32 magic 'FBS1'
 *   4  u32 CRC32C of bytes [40, length)
 *   8  u64 dataset seed
 *  16  u64 dataset id (first 8 bytes of the dataset hash: config that shapes the files)
 *  24  u32 file index
 *  28  u32 length of the whole sample in bytes (header included)
 *  32  u64 sample index within the file
 */
#ifndef FEEDBENCH_SAMPLE_H
#define FEEDBENCH_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bench/dsfile.h" /* sample_size() */
#include "../bench/rng.h"    /* splitmix64: the seeded generator of sizes and payloads */

#define SAMPLE_MAGIC	    0x31534246u /* "FBS1" */
#define SAMPLE_HEADER_BYTES 40
#define SAMPLE_MIN_BYTES    64
#define SAMPLE_POISON	    0xA5

struct sample_header {
	uint32_t magic;
	uint32_t crc;
	uint64_t seed;
	uint64_t dataset_id;
	uint32_t file;
	uint32_t length;
	uint64_t index;
};

/* CRC32C (Castagnoli) through ISA-L, standard form: crc32c("123456789") == 0xe3069283.
 * Handles lengths over 2 GiB. */
uint32_t crc32c(const void *buf, size_t len);
/* Continues a standard CRC32C over more data. */
uint32_t crc32c_extend(uint32_t crc, const void *buf, size_t len);

/* Fills buf (len bytes, >= SAMPLE_MIN_BYTES) with header + seeded payload. */
void sample_fill(void *buf, size_t len, uint64_t seed, uint64_t dataset_id, uint32_t file,
		 uint64_t index);

void sample_header_decode(const void *buf, struct sample_header *h);

/* Checks a sample read back: magic, seed, dataset id, file, index, length and CRC.
 * On mismatch writes "expected ..., actual ..." into why and returns false;
 * *bad_off is the offset within the sample of the first wrong field or byte. */
bool sample_check(const void *buf, size_t len, uint64_t seed, uint64_t dataset_id, uint32_t file,
		  uint64_t index, char *why, size_t whylen, uint64_t *bad_off);

#endif
