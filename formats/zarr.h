/* The subset of Zarr (v2 and v3) feedbench writes and reads, shared by formats/zarr_meta.c
 * (array metadata, chunk keys, the sharding index) and formats/zarr.c (the format plug-in and
 * its codecs).
 *
 * An array of samples: shape (samples, ...), chunked along the sample axis only (a chunk holds
 * `chunk` samples; the other axes whole), C order. A sample is one index of the first axis: the
 * bytes of the rest of the array at that index. Each chunk is one file (v2 key "i.0", v3
 * "c/i/0"), or with the v3 sharding codec `shard` chunks share one file ("c/s/0") whose end
 * holds an index of (offset, length) pairs of 8 bytes each and its CRC32C.
 */
#ifndef FEEDBENCH_ZARR_H
#define FEEDBENCH_ZARR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZARR_MAX_DIMS 32
#define ZARR_META_MAX (1u << 20) /* bytes of .zarray / zarr.json read */

enum zarr_codec { ZARR_NONE = 0, ZARR_BLOSC, ZARR_ZSTD, ZARR_GZIP };

struct zarr_meta {
	int version;	       /* 2 or 3 */
	uint64_t nsamples;     /* shape[0] */
	uint64_t sample_bytes; /* product of shape[1:] x itemsize */
	uint64_t itemsize;
	uint64_t chunk;	      /* samples per chunk (shape of the chunk's first axis) */
	uint64_t shard;	      /* chunks per shard file (v3 sharding), 0 none */
	int codec;	      /* enum zarr_codec: the bytes-to-bytes compressor */
	bool crc32c;	      /* v3 crc32c codec after the compressor */
	bool index_crc32c;    /* sharding index followed by its CRC32C */
	bool dot_keys;	      /* v2 "i.0" (dimension_separator "."), else "i/0" */
	bool v3_default_keys; /* v3 "c/i/0" (default encoding), else "i/0" (v2 encoding) */
	char sep;	      /* separator of chunk keys */
	int ndims;
	bool fill_zero; /* missing chunks read as zeros (fill_value 0 or null) */
	int clevel;
	char cname[16]; /* blosc compressor */
	int shuffle;	/* blosc: 0 none, 1 byte, 2 bit */
};

/* Parses .zarray (version 2) or zarr.json (version 3) text. 0, or -1 with why. */
int zarr_meta_parse(const char *text, size_t len, int version, struct zarr_meta *m, char *why,
		    size_t whylen);

/* The metadata feedbench writes for m (a uint8 array of shape (nsamples, sample_bytes)); a
 * malloc'd string. */
char *zarr_meta_write(const struct zarr_meta *m);

/* The key of chunk (or shard) i: "i.0", "i/0", "c/i/0" (as many trailing zeros as dims - 1). */
void zarr_chunk_key(const struct zarr_meta *m, uint64_t i, char *buf, size_t len);

/* Parses the sharding index at the end of a shard file of file_size bytes (buf holds the
 * index: n entries of 16 bytes, then 4 bytes of CRC32C when m->index_crc32c), checking every
 * (offset, length) against the bytes before the index. off/len get the entries; a missing
 * chunk is UINT64_MAX in both. 0, or -1 with why. */
int zarr_shard_index_parse(const struct zarr_meta *m, const uint8_t *buf, size_t len,
			   uint64_t file_size, uint64_t *off, uint64_t *lens, char *why,
			   size_t whylen);
size_t zarr_shard_index_bytes(const struct zarr_meta *m);

#endif
