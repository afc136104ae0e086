/* Sample headers, seeded payloads and verification. */
#include "sample.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l.h>

uint32_t crc32c_extend(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint32_t raw = ~crc;

	/* ISA-L takes an int length: feed at most 1 GiB at a time. */
	while (len > 0) {
		size_t n = len > (1u << 30) ? (1u << 30) : len;
		raw = crc32_iscsi((unsigned char *)p, (int)n, raw);
		p += n;
		len -= n;
	}
	return ~raw;
}

uint32_t crc32c(const void *buf, size_t len)
{
	return crc32c_extend(0, buf, len);
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4); /* little endian hosts only (x86-64, aarch64) */
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

void sample_fill(void *buf, size_t len, uint64_t seed, uint64_t dataset_id, uint32_t file,
		 uint64_t index)
{
	unsigned char *p = buf;
	uint64_t s = rng_mix3(seed, file, index);
	size_t i = SAMPLE_HEADER_BYTES;

	for (; i + 8 <= len; i += 8) {
		uint64_t r = splitmix64(&s);
		memcpy(p + i, &r, 8);
	}
	if (i < len) {
		uint64_t r = splitmix64(&s);
		memcpy(p + i, &r, len - i);
	}
	put32(p + 0, SAMPLE_MAGIC);
	put64(p + 8, seed);
	put64(p + 16, dataset_id);
	put32(p + 24, file);
	put32(p + 28, (uint32_t)len);
	put64(p + 32, index);
	put32(p + 4, crc32c(p + SAMPLE_HEADER_BYTES, len - SAMPLE_HEADER_BYTES));
}

void sample_header_decode(const void *buf, struct sample_header *h)
{
	const unsigned char *p = buf;

	memcpy(&h->magic, p + 0, 4);
	memcpy(&h->crc, p + 4, 4);
	memcpy(&h->seed, p + 8, 8);
	memcpy(&h->dataset_id, p + 16, 8);
	memcpy(&h->file, p + 24, 4);
	memcpy(&h->length, p + 28, 4);
	memcpy(&h->index, p + 32, 8);
}

bool sample_check(const void *buf, size_t len, uint64_t seed, uint64_t dataset_id, uint32_t file,
		  uint64_t index, char *why, size_t whylen, uint64_t *bad_off)
{
	struct sample_header h;

	*bad_off = 0;
	if (len < SAMPLE_HEADER_BYTES) {
		snprintf(why, whylen, "sample of %zu bytes is shorter than its %d-byte header", len,
			 SAMPLE_HEADER_BYTES);
		return false;
	}
	sample_header_decode(buf, &h);
	if (h.magic != SAMPLE_MAGIC) {
		snprintf(why, whylen, "bad sample magic: expected 0x%08x, actual 0x%08x%s",
			 SAMPLE_MAGIC, h.magic,
			 h.magic == (SAMPLE_POISON * 0x01010101u)
			     ? " (the read left the buffer unfilled)"
			     : "");
		return false;
	}
	if (h.seed != seed) {
		*bad_off = 8;
		snprintf(why, whylen,
			 "sample written with seed %" PRIu64 ", expected seed %" PRIu64
			 " (a dataset left from another run: regenerate it)",
			 h.seed, seed);
		return false;
	}
	if (h.dataset_id != dataset_id) {
		*bad_off = 16;
		snprintf(why, whylen,
			 "dataset id expected %016" PRIx64 ", actual %016" PRIx64
			 " (a dataset generated from another config: regenerate it)",
			 dataset_id, h.dataset_id);
		return false;
	}
	if (h.file != file || h.index != index) {
		*bad_off = 24;
		snprintf(why, whylen,
			 "expected file %u sample %" PRIu64 ", actual file %u sample %" PRIu64,
			 file, index, h.file, h.index);
		return false;
	}
	if (h.length != len) {
		*bad_off = 28;
		snprintf(why, whylen, "expected length %u, actual %zu bytes read", h.length, len);
		return false;
	}
	uint32_t crc =
	    crc32c((const unsigned char *)buf + SAMPLE_HEADER_BYTES, len - SAMPLE_HEADER_BYTES);
	if (crc != h.crc) {
		/* Regenerate the payload to name the first wrong byte. */
		unsigned char *ref = malloc(len);
		*bad_off = SAMPLE_HEADER_BYTES;
		if (ref) {
			sample_fill(ref, len, seed, dataset_id, file, index);
			const unsigned char *got = buf;
			for (size_t i = SAMPLE_HEADER_BYTES; i < len; i++) {
				if (got[i] != ref[i]) {
					*bad_off = i;
					snprintf(why, whylen,
						 "payload CRC32C expected 0x%08x, actual 0x%08x; "
						 "first wrong byte at sample offset %zu: expected "
						 "0x%02x, actual 0x%02x",
						 h.crc, crc, i, ref[i], got[i]);
					free(ref);
					return false;
				}
			}
			free(ref);
			/* The payload is intact: the stored CRC itself was damaged. */
			*bad_off = 4;
			snprintf(why, whylen,
				 "header CRC field damaged: payload CRC32C is 0x%08x, header says "
				 "0x%08x",
				 crc, h.crc);
			return false;
		}
		snprintf(why, whylen, "payload CRC32C expected 0x%08x, actual 0x%08x", h.crc, crc);
		return false;
	}
	return true;
}
_Static_assert(SAMPLE_MIN_BYTES == 64, "bench/dsfile.c clamps sample sizes to 64 bytes");
