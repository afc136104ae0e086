/* The subset of Apache Parquet feedbench writes and reads, shared by the parquet format's files:
 * parquet_meta.c (Thrift compact protocol, FileMetaData, PageHeader), parquet_pages.c (pages:
 * compression, RLE / bit-packed levels, PLAIN and dictionary values) and parquet.c (the format
 * plug-in).
 *
 * A file is "PAR1", column chunks of row groups (pages, each a Thrift PageHeader then its
 * bytes), the Thrift FileMetaData, its 4-byte length and "PAR1". Every byte read from a file is
 * bounds-checked: a malformed file is refused with a message naming the file, the column and
 * the offset, never a crash.
 *
 * A sample is a row: the bytes of each column read, in schema order, concatenated. A value is
 * stored in the sample with its logical width (int8/uint8: 1 byte, int16: 2, float16: 2, int32
 * and float: 4, ...), a byte array with its own length; a null value or an empty list adds no
 * bytes.
 */
#ifndef FEEDBENCH_PARQUET_H
#define FEEDBENCH_PARQUET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PQ_MAGIC "PAR1"
/* Limits on what a file may declare: beyond them it is refused, not allocated. */
#define PQ_FOOTER_MAX	(64u << 20)  /* FileMetaData bytes */
#define PQ_PAGE_MAX	(512u << 20) /* one page, uncompressed */
#define PQ_DECODED_MAX	(1ull << 32) /* one column chunk's decoded values */
#define PQ_FLBA_MAX	(1u << 20)   /* FIXED_LEN_BYTE_ARRAY width */
#define PQ_THRIFT_DEPTH 16	     /* nesting of Thrift structs and lists */
#define PQ_NAME_MAX	128

/* Physical types (parquet.thrift Type). */
enum pq_type {
	PQ_BOOLEAN = 0,
	PQ_INT32 = 1,
	PQ_INT64 = 2,
	PQ_INT96 = 3,
	PQ_FLOAT = 4,
	PQ_DOUBLE = 5,
	PQ_BYTE_ARRAY = 6,
	PQ_FLBA = 7,
};

/* Encodings and codecs feedbench handles; the others are refused by name. */
enum {
	PQ_ENC_PLAIN = 0,
	PQ_ENC_PLAIN_DICTIONARY = 2,
	PQ_ENC_RLE = 3,
	PQ_ENC_BIT_PACKED = 4,
	PQ_ENC_RLE_DICTIONARY = 8,
};
enum { PQ_CODEC_NONE = 0, PQ_CODEC_SNAPPY = 1, PQ_CODEC_GZIP = 2, PQ_CODEC_ZSTD = 6 };
enum { PQ_PAGE_DATA = 0, PQ_PAGE_INDEX = 1, PQ_PAGE_DICT = 2, PQ_PAGE_DATA_V2 = 3 };
enum { PQ_REQUIRED = 0, PQ_OPTIONAL = 1, PQ_REPEATED = 2 };

const char *pq_encoding_name(int enc);
const char *pq_codec_name(int codec);
const char *pq_type_name(int type);

/* ---- Thrift compact protocol ----------------------------------------------------------- */

/* A bounds-checked cursor over bytes of a file that start at file offset `base`. */
struct pq_rd {
	const uint8_t *p, *start, *end;
	uint64_t base;	 /* file offset of start */
	unsigned depth;	 /* struct / list nesting */
	const char *why; /* first error, NULL while fine */
};

void pq_rd_init(struct pq_rd *r, const void *buf, size_t len, uint64_t base);
/* File offset of the cursor (of the error, once one is set). */
uint64_t pq_rd_offset(const struct pq_rd *r);

/* A growable output buffer; err is set (and writes dropped) when memory runs out. */
struct pq_buf {
	uint8_t *p;
	size_t len, cap;
	bool err;
};

void pq_buf_put(struct pq_buf *b, const void *data, size_t len);
void pq_buf_free(struct pq_buf *b);
uint8_t *pq_buf_reserve(struct pq_buf *b, size_t len); /* NULL on failure (err set) */

/* ---- metadata ---------------------------------------------------------------------------- */

/* One column of the file: a top-level field with exactly one leaf (a primitive, or a LIST of
 * primitives). */
struct pq_column {
	char name[PQ_NAME_MAX];
	int type;	 /* enum pq_type of the leaf */
	int type_length; /* FIXED_LEN_BYTE_ARRAY width */
	int width;	 /* bytes per value in a sample; 0: byte arrays, each its own length */
	int max_def, max_rep;
	bool is_signed;	  /* INT32 of 8 or 16 bits: how the generator extends the value */
	int logical_bits; /* INT(8|16|32|64) of the leaf, 0 when none */
	bool float16;
};

struct pq_chunk {
	uint64_t start; /* first byte: dictionary page, else first data page */
	uint64_t size;	/* total_compressed_size */
	uint64_t num_values;
	int codec;
	int type;
};

struct pq_meta {
	uint32_t ncols;
	struct pq_column *cols;
	uint64_t num_rows;
	uint32_t nrg;
	uint64_t *rg_first;	 /* nrg + 1: first row of each row group, then num_rows */
	struct pq_chunk *chunks; /* nrg * ncols, row group major */
	uint32_t version;
};

/* Parses a FileMetaData of len bytes found at file offset base, checking every column chunk
 * against file_size. 0, or -1 with why and *bad_off (a file offset) set. */
int pq_meta_parse(const void *buf, size_t len, uint64_t base, uint64_t file_size, struct pq_meta *m,
		  char *why, size_t whylen, uint64_t *bad_off);
void pq_meta_free(struct pq_meta *m);

/* The page header at the cursor. */
struct pq_page {
	int type;
	uint32_t usize, csize; /* uncompressed and compressed page sizes */
	uint32_t num_values;
	int encoding;
	int def_enc, rep_enc;	   /* v1 */
	uint32_t def_len, rep_len; /* v2: level bytes, never compressed */
	bool compressed;	   /* v2 is_compressed (default true) */
};

int pq_page_parse(struct pq_rd *r, struct pq_page *pg);

/* ---- writing --------------------------------------------------------------------------- */

/* One column as the generator writes it. */
struct pq_wcol {
	char name[PQ_NAME_MAX];
	char dtype[16]; /* uint8 ... float64, binary */
	uint64_t size;	/* values per row (binary: ignored) */
	int type;	/* physical */
	int type_length;
	int width; /* bytes per value in the sample (0: binary) */
	int bits;  /* INT logical type width, 0 when none */
	bool is_signed, float16;
	bool list; /* size > 1: optional LIST of optional elements, as pyarrow writes */
	/* per row group, filled by the writer */
	uint64_t start, usize, csize, num_values;
};

/* Parses "name:dtype:size, ..." (dtype uint8|int8|uint16|int16|uint32|int32|uint64|int64|
 * float16|float32|float64|binary; size defaults to 1, binary takes none). 0 or -1 with why. */
int pq_wcols_parse(const char *spec, struct pq_wcol **out, uint32_t *n, char *why, size_t len);

void pq_write_page_header(struct pq_buf *b, const struct pq_page *pg);
/* FileMetaData of a file whose row groups hold rg_rows[i] rows, with cols[i + r * ncols]
 * describing column i in row group r. */
void pq_write_footer(struct pq_buf *b, const struct pq_wcol *cols, uint32_t ncols,
		     const uint64_t *rg_rows, uint32_t nrg, const struct pq_wcol *chunks, int codec,
		     const char *created_by);

/* ---- pages ---------------------------------------------------------------------------- */

/* Decompresses src into dst of exactly dlen bytes. 0 or -1 with why. */
int pq_decompress(int codec, const void *src, size_t slen, void *dst, size_t dlen,
		  const char **why);
/* Compresses src into b (appended). 0 or -1. */
int pq_compress(int codec, int level, const void *src, size_t slen, struct pq_buf *b);

/* Decoded values of one column chunk: row r is bytes [row_off[r], row_off[r + 1]) of vals. */
struct pq_decoded {
	struct pq_buf vals;
	uint64_t *row_off;
	uint64_t nrows, cap_rows;
	struct pq_buf dict; /* dictionary values */
	uint64_t *dict_off; /* byte arrays: ndict + 1 offsets into dict */
	uint64_t ndict;
	bool have_dict;
	struct pq_buf page, tmp; /* scratch: a decompressed page, per-page indexes */
};

void pq_decoded_reset(struct pq_decoded *d);
void pq_decoded_free(struct pq_decoded *d);

/* Decodes the pages of one column chunk (chunk bytes at file offset base) into d, expecting
 * nrows rows. 0, or -1 with why and *bad_off (file offset) set. */
int pq_chunk_decode(const struct pq_column *col, const struct pq_chunk *ck, const uint8_t *buf,
		    size_t len, uint64_t nrows, struct pq_decoded *d, char *why, size_t whylen,
		    uint64_t *bad_off);

/* Level and value encoding for the writer: levels as RLE runs (v1: with the 4-byte length),
 * values PLAIN. */
void pq_rle_put_run(struct pq_buf *b, uint32_t count, uint32_t value, int bit_width);
int pq_bit_width(uint32_t max_value);

#endif
