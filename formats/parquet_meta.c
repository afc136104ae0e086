/* Parquet metadata: the Thrift compact protocol (written by hand: a few hundred lines, where
 * Debian's Thrift library would bring C++ and code generation for the dozen structs used),
 * FileMetaData and PageHeader parsed from files and written for generated ones.
 *
 * Compact protocol as used here: a field header byte holds the field id delta (high nibble;
 * 0: a zigzag varint id follows) and the type (low nibble); integers are zigzag varints,
 * binaries a varint length and the bytes, lists a header byte with the size (high nibble, 15:
 * a varint follows) and the element type; booleans as fields live in the type nibble.
 */
#include "parquet.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	T_STOP = 0,
	T_TRUE = 1,
	T_FALSE = 2,
	T_BYTE = 3,
	T_I16 = 4,
	T_I32 = 5,
	T_I64 = 6,
	T_DOUBLE = 7,
	T_BINARY = 8,
	T_LIST = 9,
	T_SET = 10,
	T_MAP = 11,
	T_STRUCT = 12,
};

const char *pq_encoding_name(int enc)
{
	static const char *const names[] = {
	    "PLAIN",	      "GROUP_VAR_INT",	     "PLAIN_DICTIONARY",	"RLE",
	    "BIT_PACKED",     "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
	    "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};

	return enc >= 0 && enc < 10 ? names[enc] : "unknown";
}

const char *pq_codec_name(int codec)
{
	static const char *const names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
					    "BROTLI",	    "LZ4",    "ZSTD", "LZ4_RAW"};

	return codec >= 0 && codec < 8 ? names[codec] : "unknown";
}

const char *pq_type_name(int type)
{
	static const char *const names[] = {
	    "BOOLEAN", "INT32",	 "INT64",      "INT96",
	    "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};

	return type >= 0 && type < 8 ? names[type] : "unknown";
}

/* ---- buffers ---------------------------------------------------------------------------- */

uint8_t *pq_buf_reserve(struct pq_buf *b, size_t len)
{
	if (b->err)
		return NULL;
	if (len > SIZE_MAX - b->len) {
		b->err = true;
		return NULL;
	}
	if (b->len + len > b->cap || !b->p) { /* never NULL + 0: a real block even for 0 bytes */
		size_t n = b->cap ? b->cap : 256;
		uint8_t *p;

		while (n < b->len + len)
			n = n > SIZE_MAX / 2 ? b->len + len : 2 * n;
		p = realloc(b->p, n);
		if (!p) {
			b->err = true;
			return NULL;
		}
		b->p = p;
		b->cap = n;
	}
	return b->p + b->len;
}

void pq_buf_put(struct pq_buf *b, const void *data, size_t len)
{
	uint8_t *p = pq_buf_reserve(b, len);

	if (p && len) {
		memcpy(p, data, len);
		b->len += len;
	}
}

void pq_buf_free(struct pq_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- reading ---------------------------------------------------------------------------- */

void pq_rd_init(struct pq_rd *r, const void *buf, size_t len, uint64_t base)
{
	r->p = r->start = buf;
	r->end = r->p + len;
	r->base = base;
	r->depth = 0;
	r->why = NULL;
}

uint64_t pq_rd_offset(const struct pq_rd *r)
{
	return r->base + (uint64_t)(r->p - r->start);
}

static bool rd_fail(struct pq_rd *r, const char *why)
{
	if (!r->why)
		r->why = why;
	r->p = r->end; /* nothing more is read */
	return false;
}

static uint64_t rd_varint(struct pq_rd *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end) {
			rd_fail(r, "truncated varint");
			return 0;
		}
		uint8_t c = *r->p++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	rd_fail(r, "varint longer than 10 bytes");
	return 0;
}

static int64_t rd_zigzag(struct pq_rd *r)
{
	uint64_t v = rd_varint(r);

	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static int32_t rd_i32(struct pq_rd *r)
{
	int64_t v = rd_zigzag(r);

	if (v < INT32_MIN || v > INT32_MAX) {
		rd_fail(r, "i32 out of range");
		return 0;
	}
	return (int32_t)v;
}

static bool rd_binary(struct pq_rd *r, const uint8_t **p, size_t *len)
{
	uint64_t n = rd_varint(r);

	if (r->why)
		return false;
	if (n > (uint64_t)(r->end - r->p))
		return rd_fail(r, "string runs past the metadata");
	*p = r->p;
	*len = (size_t)n;
	r->p += n;
	return true;
}

/* A list header: element type and count (each element takes at least one byte, so a count
 * beyond the bytes left is refused). */
static bool rd_list(struct pq_rd *r, int *etype, uint64_t *n)
{
	if (r->p >= r->end)
		return rd_fail(r, "truncated list header");
	uint8_t h = *r->p++;

	*etype = h & 0x0f;
	*n = h >> 4;
	if (*n == 15)
		*n = rd_varint(r);
	if (r->why)
		return false;
	if (*n > (uint64_t)(r->end - r->p))
		return rd_fail(r, "list longer than the metadata");
	return true;
}

static bool rd_skip(struct pq_rd *r, int type);

static bool rd_skip_struct(struct pq_rd *r)
{
	int16_t last = 0;

	if (++r->depth > PQ_THRIFT_DEPTH)
		return rd_fail(r, "structs nested too deep");
	for (;;) {
		if (r->p >= r->end)
			return rd_fail(r, "truncated struct");
		uint8_t h = *r->p++;
		int type = h & 0x0f;

		if (h == T_STOP)
			break;
		if (h >> 4)
			last = (int16_t)(last + (h >> 4));
		else
			last = (int16_t)rd_zigzag(r);
		if (!rd_skip(r, type))
			return false;
	}
	r->depth--;
	return true;
}

static bool rd_skip(struct pq_rd *r, int type)
{
	const uint8_t *p;
	size_t len;
	uint64_t n;
	int et;

	switch (type) {
	case T_TRUE:
	case T_FALSE:
		return true;
	case T_BYTE:
		if (r->p >= r->end)
			return rd_fail(r, "truncated byte");
		r->p++;
		return true;
	case T_I16:
	case T_I32:
	case T_I64:
		rd_varint(r);
		return !r->why;
	case T_DOUBLE:
		if (r->end - r->p < 8)
			return rd_fail(r, "truncated double");
		r->p += 8;
		return true;
	case T_BINARY:
		return rd_binary(r, &p, &len);
	case T_LIST:
	case T_SET:
		if (!rd_list(r, &et, &n))
			return false;
		if (++r->depth > PQ_THRIFT_DEPTH)
			return rd_fail(r, "lists nested too deep");
		for (uint64_t i = 0; i < n; i++)
			if (!rd_skip(r, et == T_TRUE || et == T_FALSE ? T_BYTE : et))
				return false;
		r->depth--;
		return true;
	case T_MAP:
		n = rd_varint(r);
		if (r->why || n > (uint64_t)(r->end - r->p))
			return rd_fail(r, "bad map");
		if (n == 0)
			return true;
		et = *r->p++;
		for (uint64_t i = 0; i < n; i++)
			if (!rd_skip(r, et >> 4) || !rd_skip(r, et & 0x0f))
				return false;
		return true;
	case T_STRUCT:
		return rd_skip_struct(r);
	default:
		return rd_fail(r, "unknown Thrift type");
	}
}

struct fld {
	int16_t id, last;
	int type;
};

/* Next field of the struct being read: false at its end (STOP) or on an error. */
static bool rd_field(struct pq_rd *r, struct fld *f)
{
	if (r->p >= r->end)
		return rd_fail(r, "truncated struct");
	uint8_t h = *r->p++;

	if (h == T_STOP)
		return false;
	f->type = h & 0x0f;
	if (h >> 4)
		f->id = (int16_t)(f->last + (h >> 4));
	else
		f->id = (int16_t)rd_zigzag(r);
	f->last = f->id;
	return !r->why;
}

/* The field has the type expected: true; otherwise it is skipped (or an error recorded). */
static bool rd_is(struct pq_rd *r, const struct fld *f, int type)
{
	if (f->type == type)
		return true;
	if (type == T_TRUE && f->type == T_FALSE)
		return true;
	rd_fail(r, "field of an unexpected Thrift type");
	return false;
}

static bool rd_enter(struct pq_rd *r)
{
	if (++r->depth > PQ_THRIFT_DEPTH)
		return rd_fail(r, "structs nested too deep");
	return true;
}

/* ---- schema ------------------------------------------------------------------------------ */

struct pq_selem {
	int type, type_length, repetition, num_children, converted;
	int int_bits; /* LogicalType INTEGER bitWidth, 0 when none */
	bool int_signed, float16, is_list;
	const uint8_t *name;
	size_t name_len;
};

/* LogicalType union: INTEGER (10) {bitWidth, isSigned}, FLOAT16 (15), LIST (3). */
static void rd_logical(struct pq_rd *r, struct pq_selem *e)
{
	struct fld f = {0};

	if (!rd_enter(r))
		return;
	while (rd_field(r, &f)) {
		if (f.id == 10 && rd_is(r, &f, T_STRUCT)) {
			struct fld g = {0};

			if (!rd_enter(r))
				return;
			while (rd_field(r, &g)) {
				if (g.id == 1 && rd_is(r, &g, T_BYTE) && r->p < r->end)
					e->int_bits = (int8_t)*r->p++;
				else if (g.id == 2 && rd_is(r, &g, T_TRUE))
					e->int_signed = g.type == T_TRUE;
				else
					rd_skip(r, g.type);
			}
			r->depth--;
		} else {
			if (f.id == 15)
				e->float16 = true;
			if (f.id == 3)
				e->is_list = true;
			rd_skip(r, f.type);
		}
	}
	r->depth--;
}

static void rd_schema_elem(struct pq_rd *r, struct pq_selem *e)
{
	struct fld f = {0};

	memset(e, 0, sizeof(*e));
	e->type = -1;
	e->converted = -1;
	if (!rd_enter(r))
		return;
	while (rd_field(r, &f)) {
		if (f.id == 1 && rd_is(r, &f, T_I32))
			e->type = rd_i32(r);
		else if (f.id == 2 && rd_is(r, &f, T_I32))
			e->type_length = rd_i32(r);
		else if (f.id == 3 && rd_is(r, &f, T_I32))
			e->repetition = rd_i32(r);
		else if (f.id == 4 && rd_is(r, &f, T_BINARY))
			rd_binary(r, &e->name, &e->name_len);
		else if (f.id == 5 && rd_is(r, &f, T_I32))
			e->num_children = rd_i32(r);
		else if (f.id == 6 && rd_is(r, &f, T_I32))
			e->converted = rd_i32(r);
		else if (f.id == 10 && rd_is(r, &f, T_STRUCT))
			rd_logical(r, e);
		else
			rd_skip(r, f.type);
	}
	r->depth--;
}

/* Bytes a value of the leaf takes in a sample; 0 for byte arrays; -1 when not handled. */
static int leaf_width(const struct pq_selem *e, int *bits, bool *is_signed)
{
	int conv_bits[] = {8, 16, 32, 64, 8, 16, 32, 64}; /* UINT_8 (11) ... INT_64 (18) */

	*bits = e->int_bits;
	*is_signed = e->int_signed;
	if (!*bits && e->converted >= 11 && e->converted <= 18) {
		*bits = conv_bits[e->converted - 11];
		*is_signed = e->converted >= 15;
	}
	switch (e->type) {
	case PQ_INT32:
		return *bits == 8 || *bits == 16 ? *bits / 8 : 4;
	case PQ_INT64:
	case PQ_DOUBLE:
		return 8;
	case PQ_FLOAT:
		return 4;
	case PQ_BYTE_ARRAY:
		return 0;
	case PQ_FLBA:
		return e->type_length > 0 && e->type_length <= (int)PQ_FLBA_MAX ? e->type_length
										: -1;
	default:
		return -1;
	}
}

/* Walks the subtree of the top-level field at *i: exactly one leaf, at most one repeated
 * level. Fills col; -1 with why. */
static int schema_field(const struct pq_selem *el, uint64_t n, uint64_t *i, struct pq_column *c,
			char *why, size_t whylen)
{
	uint64_t pending = 1, leaves = 0;
	int def = 0, rep = 0;
	const struct pq_selem *top, *leaf = NULL;

	if (*i >= n) {
		snprintf(why, whylen, "schema ends before the last of its root's columns");
		return -1;
	}
	top = &el[*i];
	snprintf(c->name, sizeof(c->name), "%.*s",
		 (int)(top->name_len < PQ_NAME_MAX - 1 ? top->name_len : PQ_NAME_MAX - 1),
		 top->name ? (const char *)top->name : "");
	while (pending > 0) {
		const struct pq_selem *e;

		if (*i >= n) {
			snprintf(why, whylen, "schema of column '%s' ends early", c->name);
			return -1;
		}
		e = &el[(*i)++];
		pending--;
		def += e->repetition != PQ_REQUIRED;
		rep += e->repetition == PQ_REPEATED;
		if (e->num_children > 0) {
			if ((uint64_t)e->num_children > n) {
				snprintf(why, whylen, "schema of column '%s' has too many children",
					 c->name);
				return -1;
			}
			pending += (uint64_t)e->num_children;
			if (pending > 1) { /* only one path to a single leaf is handled */
				snprintf(why, whylen,
					 "column '%s' is a nested type with several fields "
					 "(not handled)",
					 c->name);
				return -1;
			}
			continue;
		}
		leaf = e;
		leaves++;
		c->max_def = def;
		c->max_rep = rep;
	}
	if (leaves != 1 || !leaf || rep > 1) {
		snprintf(why, whylen, "column '%s' is a nested type (%s) not handled", c->name,
			 rep > 1 ? "lists of lists" : "no leaf");
		return -1;
	}
	c->type = leaf->type;
	c->type_length = leaf->type_length;
	c->float16 = leaf->float16;
	c->width = leaf_width(leaf, &c->logical_bits, &c->is_signed);
	if (c->width < 0) {
		snprintf(why, whylen, "column '%s' has type %s%s, not handled", c->name,
			 pq_type_name(leaf->type), leaf->type == PQ_FLBA ? " of this width" : "");
		return -1;
	}
	return 0;
}

static int schema_build(struct pq_meta *m, const struct pq_selem *el, uint64_t n, char *why,
			size_t whylen)
{
	uint64_t i = 1;

	if (n < 2 || el[0].num_children <= 0 || (uint64_t)el[0].num_children >= n) {
		snprintf(why, whylen, "schema has no columns");
		return -1;
	}
	m->ncols = (uint32_t)el[0].num_children;
	m->cols = calloc(m->ncols, sizeof(*m->cols));
	if (!m->cols) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	for (uint32_t c = 0; c < m->ncols; c++)
		if (schema_field(el, n, &i, &m->cols[c], why, whylen) < 0)
			return -1;
	if (i != n) {
		snprintf(why, whylen, "schema lists %" PRIu64 " elements, its tree uses %" PRIu64,
			 n, i);
		return -1;
	}
	return 0;
}

static int rd_schema(struct pq_rd *r, struct pq_meta *m, char *why, size_t whylen)
{
	struct pq_selem *el;
	uint64_t n;
	int et, rc;

	if (!rd_list(r, &et, &n) || et != T_STRUCT) {
		rd_fail(r, "schema is not a list of structs");
		return -1;
	}
	el = calloc(n ? n : 1, sizeof(*el));
	if (!el) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	for (uint64_t i = 0; i < n && !r->why; i++)
		rd_schema_elem(r, &el[i]);
	rc = r->why ? -1 : schema_build(m, el, n, why, whylen);
	free(el);
	return rc;
}

/* ---- row groups ------------------------------------------------------------------------- */

struct ck_raw {
	int type, codec;
	int64_t num_values, csize, data_off, dict_off;
	bool have_meta;
};

static void rd_column_meta(struct pq_rd *r, struct ck_raw *k)
{
	struct fld f = {0};

	if (!rd_enter(r))
		return;
	k->have_meta = true;
	while (rd_field(r, &f)) {
		if (f.id == 1 && rd_is(r, &f, T_I32))
			k->type = rd_i32(r);
		else if (f.id == 4 && rd_is(r, &f, T_I32))
			k->codec = rd_i32(r);
		else if (f.id == 5 && rd_is(r, &f, T_I64))
			k->num_values = rd_zigzag(r);
		else if (f.id == 7 && rd_is(r, &f, T_I64))
			k->csize = rd_zigzag(r);
		else if (f.id == 9 && rd_is(r, &f, T_I64))
			k->data_off = rd_zigzag(r);
		else if (f.id == 11 && rd_is(r, &f, T_I64))
			k->dict_off = rd_zigzag(r);
		else
			rd_skip(r, f.type);
	}
	r->depth--;
}

static void rd_column_chunk(struct pq_rd *r, struct ck_raw *k)
{
	struct fld f = {0};

	memset(k, 0, sizeof(*k));
	k->dict_off = -1;
	if (!rd_enter(r))
		return;
	while (rd_field(r, &f)) {
		if (f.id == 1 && f.type == T_BINARY) {
			rd_fail(r, "column chunk in another file (file_path) not handled");
			return;
		}
		if (f.id == 3 && rd_is(r, &f, T_STRUCT))
			rd_column_meta(r, k);
		else
			rd_skip(r, f.type);
	}
	r->depth--;
}

static int chunk_check(struct pq_meta *m, uint32_t g, uint32_t c, const struct ck_raw *k,
		       uint64_t file_size, char *why, size_t whylen)
{
	struct pq_chunk *ck = &m->chunks[(uint64_t)g * m->ncols + c];
	int64_t start = k->dict_off > 0 && k->dict_off < k->data_off ? k->dict_off : k->data_off;

	if (!k->have_meta || k->csize <= 0 || start < 4 || k->num_values < 0 ||
	    (uint64_t)start > file_size || (uint64_t)k->csize > file_size - (uint64_t)start) {
		snprintf(why, whylen,
			 "column '%s' of row group %u: its chunk (offset %" PRId64 ", %" PRId64
			 " bytes) lies outside the file of %" PRIu64 " bytes",
			 m->cols[c].name, g, start, k->csize, file_size);
		return -1;
	}
	if (k->type != m->cols[c].type) {
		snprintf(why, whylen, "column '%s' of row group %u: type %s, the schema says %s",
			 m->cols[c].name, g, pq_type_name(k->type), pq_type_name(m->cols[c].type));
		return -1;
	}
	ck->start = (uint64_t)start;
	ck->size = (uint64_t)k->csize;
	ck->num_values = (uint64_t)k->num_values;
	ck->codec = k->codec;
	ck->type = k->type;
	return 0;
}

static int rd_row_group(struct pq_rd *r, struct pq_meta *m, uint32_t g, uint64_t file_size,
			char *why, size_t whylen)
{
	struct fld f = {0};
	int64_t rows = -1;
	uint32_t seen = 0;

	if (!rd_enter(r))
		return -1;
	while (rd_field(r, &f)) {
		if (f.id == 1 && rd_is(r, &f, T_LIST)) {
			uint64_t n;
			int et;

			if (!rd_list(r, &et, &n))
				return -1;
			if (n != m->ncols || et != T_STRUCT) {
				snprintf(why, whylen,
					 "row group %u has %" PRIu64 " column chunks, the schema "
					 "%u columns",
					 g, n, m->ncols);
				return -1;
			}
			for (uint32_t c = 0; c < m->ncols; c++) {
				struct ck_raw k;

				rd_column_chunk(r, &k);
				if (r->why)
					return -1;
				if (chunk_check(m, g, c, &k, file_size, why, whylen) < 0)
					return -1;
			}
			seen = m->ncols;
		} else if (f.id == 3 && rd_is(r, &f, T_I64)) {
			rows = rd_zigzag(r);
		} else {
			rd_skip(r, f.type);
		}
	}
	r->depth--;
	if (r->why)
		return -1;
	if (rows < 0 || seen != m->ncols) {
		snprintf(why, whylen, "row group %u lacks its %s", g,
			 rows < 0 ? "row count" : "column chunks");
		return -1;
	}
	m->rg_first[g + 1] = m->rg_first[g] + (uint64_t)rows;
	return 0;
}

static int rd_row_groups(struct pq_rd *r, struct pq_meta *m, uint64_t file_size, char *why,
			 size_t whylen)
{
	uint64_t n;
	int et;

	if (!m->cols) {
		snprintf(why, whylen, "row groups come before the schema");
		return -1;
	}
	if (!rd_list(r, &et, &n) || et != T_STRUCT || n > UINT32_MAX / 2)
		return rd_fail(r, "row groups are not a list of structs"), -1;
	m->nrg = (uint32_t)n;
	m->rg_first = calloc(n + 1, sizeof(*m->rg_first));
	m->chunks = calloc(n * m->ncols + 1, sizeof(*m->chunks));
	if (!m->rg_first || !m->chunks) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	for (uint32_t g = 0; g < m->nrg; g++)
		if (rd_row_group(r, m, g, file_size, why, whylen) < 0)
			return -1;
	return 0;
}

int pq_meta_parse(const void *buf, size_t len, uint64_t base, uint64_t file_size, struct pq_meta *m,
		  char *why, size_t whylen, uint64_t *bad_off)
{
	struct pq_rd r;
	struct fld f = {0};
	int64_t rows = -1;
	int rc = 0;

	memset(m, 0, sizeof(*m));
	*why = '\0';
	pq_rd_init(&r, buf, len, base);
	while (rc == 0 && rd_field(&r, &f)) {
		if (f.id == 1 && rd_is(&r, &f, T_I32))
			m->version = (uint32_t)rd_i32(&r);
		else if (f.id == 2 && rd_is(&r, &f, T_LIST))
			rc = rd_schema(&r, m, why, whylen);
		else if (f.id == 3 && rd_is(&r, &f, T_I64))
			rows = rd_zigzag(&r);
		else if (f.id == 4 && rd_is(&r, &f, T_LIST))
			rc = rd_row_groups(&r, m, file_size, why, whylen);
		else
			rd_skip(&r, f.type);
	}
	*bad_off = pq_rd_offset(&r);
	if (rc == 0 && r.why)
		rc = -1;
	if (rc == 0 && (!m->cols || !m->rg_first || rows < 0)) {
		snprintf(why, whylen, "footer lacks its %s",
			 !m->cols	? "schema"
			 : !m->rg_first ? "row groups"
					: "row count");
		rc = -1;
	}
	if (rc == 0 && m->rg_first[m->nrg] != (uint64_t)rows) {
		snprintf(why, whylen, "row groups hold %" PRIu64 " rows, the footer says %" PRId64,
			 m->rg_first[m->nrg], rows);
		rc = -1;
	}
	if (rc < 0) {
		if (!*why)
			snprintf(why, whylen, "bad Thrift metadata (%s)", r.why ? r.why : "?");
		pq_meta_free(m);
		return -1;
	}
	m->num_rows = (uint64_t)rows;
	return 0;
}

void pq_meta_free(struct pq_meta *m)
{
	free(m->cols);
	free(m->rg_first);
	free(m->chunks);
	memset(m, 0, sizeof(*m));
}

/* ---- page headers ---------------------------------------------------------------------- */

static void rd_data_page(struct pq_rd *r, struct pq_page *pg, bool v2)
{
	struct fld f = {0};

	if (!rd_enter(r))
		return;
	while (rd_field(r, &f)) {
		int32_t v = 0;

		if (f.type == T_I32)
			v = rd_i32(r);
		else if (v2 && f.id == 7 && rd_is(r, &f, T_TRUE))
			pg->compressed = f.type == T_TRUE;
		else
			rd_skip(r, f.type);
		if (f.type != T_I32)
			continue;
		if (f.id == 1)
			pg->num_values = (uint32_t)v;
		else if (!v2 && f.id == 2)
			pg->encoding = v;
		else if (!v2 && f.id == 3)
			pg->def_enc = v;
		else if (!v2 && f.id == 4)
			pg->rep_enc = v;
		else if (v2 && f.id == 4)
			pg->encoding = v;
		else if (v2 && f.id == 5)
			pg->def_len = (uint32_t)v;
		else if (v2 && f.id == 6)
			pg->rep_len = (uint32_t)v;
		if (v < 0)
			rd_fail(r, "negative count in a page header");
	}
	r->depth--;
}

int pq_page_parse(struct pq_rd *r, struct pq_page *pg)
{
	struct fld f = {0};
	int32_t us = -1, cs = -1;

	memset(pg, 0, sizeof(*pg));
	pg->type = -1;
	pg->compressed = true;
	while (rd_field(r, &f)) {
		if (f.id == 1 && rd_is(r, &f, T_I32))
			pg->type = rd_i32(r);
		else if (f.id == 2 && rd_is(r, &f, T_I32))
			us = rd_i32(r);
		else if (f.id == 3 && rd_is(r, &f, T_I32))
			cs = rd_i32(r);
		else if ((f.id == 5 || f.id == 7) && rd_is(r, &f, T_STRUCT))
			rd_data_page(r, pg, false); /* dictionary: num_values, encoding too */
		else if (f.id == 8 && rd_is(r, &f, T_STRUCT))
			rd_data_page(r, pg, true);
		else
			rd_skip(r, f.type);
	}
	if (r->why)
		return -1;
	if (us < 0 || cs < 0 || pg->type < 0) {
		rd_fail(r, "page header lacks its type or sizes");
		return -1;
	}
	pg->usize = (uint32_t)us;
	pg->csize = (uint32_t)cs;
	return 0;
}

/* ---- writing ---------------------------------------------------------------------------- */

static void w_varint(struct pq_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	while (v >= 0x80) {
		tmp[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (uint8_t)v;
	pq_buf_put(b, tmp, n);
}

static void w_zigzag(struct pq_buf *b, int64_t v)
{
	w_varint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void w_field(struct pq_buf *b, int16_t *last, int16_t id, int type)
{
	uint8_t h;

	if (id > *last && id - *last <= 15) {
		h = (uint8_t)(((id - *last) << 4) | type);
		pq_buf_put(b, &h, 1);
	} else {
		h = (uint8_t)type;
		pq_buf_put(b, &h, 1);
		w_zigzag(b, id);
	}
	*last = id;
}

static void w_i32(struct pq_buf *b, int16_t *last, int16_t id, int64_t v)
{
	w_field(b, last, id, T_I32);
	w_zigzag(b, v);
}

static void w_i64(struct pq_buf *b, int16_t *last, int16_t id, int64_t v)
{
	w_field(b, last, id, T_I64);
	w_zigzag(b, v);
}

static void w_str(struct pq_buf *b, const char *s)
{
	size_t n = strlen(s);

	w_varint(b, n);
	pq_buf_put(b, s, n);
}

static void w_list(struct pq_buf *b, int etype, uint64_t n)
{
	uint8_t h;

	if (n < 15) {
		h = (uint8_t)((n << 4) | (uint64_t)etype);
		pq_buf_put(b, &h, 1);
	} else {
		h = (uint8_t)(0xf0 | etype);
		pq_buf_put(b, &h, 1);
		w_varint(b, n);
	}
}

static void w_stop(struct pq_buf *b)
{
	uint8_t z = T_STOP;

	pq_buf_put(b, &z, 1);
}

void pq_write_page_header(struct pq_buf *b, const struct pq_page *pg)
{
	int16_t last = 0, in = 0;

	w_i32(b, &last, 1, pg->type);
	w_i32(b, &last, 2, pg->usize);
	w_i32(b, &last, 3, pg->csize);
	w_field(b, &last, 5, T_STRUCT); /* DataPageHeader */
	w_i32(b, &in, 1, pg->num_values);
	w_i32(b, &in, 2, pg->encoding);
	w_i32(b, &in, 3, pg->def_enc);
	w_i32(b, &in, 4, pg->rep_enc);
	w_stop(b);
	w_stop(b);
}

/* The leaf's annotations: INT(bits, signed) or FLOAT16, as both LogicalType and, for integers,
 * the legacy ConvertedType readers before LogicalType look at. */
static void w_leaf(struct pq_buf *b, const struct pq_wcol *c, const char *name, int repetition)
{
	int16_t last = 0, lt = 0, it = 0;

	w_i32(b, &last, 1, c->type);
	if (c->type == PQ_FLBA)
		w_i32(b, &last, 2, c->type_length);
	w_i32(b, &last, 3, repetition);
	w_field(b, &last, 4, T_BINARY);
	w_str(b, name);
	if (c->bits && c->bits < 64 && c->type == PQ_INT32 && !(c->bits == 32 && c->is_signed))
		w_i32(b, &last, 6,
		      (c->is_signed ? 15 : 11) + (c->bits == 8	  ? 0
						  : c->bits == 16 ? 1
								  : 2));
	else if (c->bits == 64 && !c->is_signed)
		w_i32(b, &last, 6, 14);
	if (c->bits || c->float16) {
		w_field(b, &last, 10, T_STRUCT);
		if (c->float16) {
			w_field(b, &lt, 15, T_STRUCT);
			w_stop(b);
		} else {
			uint8_t bw = (uint8_t)c->bits;

			w_field(b, &lt, 10, T_STRUCT);
			w_field(b, &it, 1, T_BYTE);
			pq_buf_put(b, &bw, 1);
			w_field(b, &it, 2, c->is_signed ? T_TRUE : T_FALSE);
			w_stop(b);
		}
		w_stop(b);
	}
	w_stop(b);
}

static void w_group(struct pq_buf *b, const char *name, int repetition, int children, bool list)
{
	int16_t last = 0, lt = 0;

	if (repetition >= 0)
		w_i32(b, &last, 3, repetition);
	w_field(b, &last, 4, T_BINARY);
	w_str(b, name);
	w_i32(b, &last, 5, children);
	if (list) {
		w_i32(b, &last, 6, 3); /* ConvertedType LIST */
		w_field(b, &last, 10, T_STRUCT);
		w_field(b, &lt, 3, T_STRUCT); /* LogicalType LIST */
		w_stop(b);
		w_stop(b);
	}
	w_stop(b);
}

static void w_schema(struct pq_buf *b, const struct pq_wcol *cols, uint32_t ncols)
{
	uint64_t n = 1;

	for (uint32_t i = 0; i < ncols; i++)
		n += cols[i].list ? 3 : 1;
	w_list(b, T_STRUCT, n);
	w_group(b, "schema", -1, (int)ncols, false);
	for (uint32_t i = 0; i < ncols; i++) {
		if (!cols[i].list) {
			w_leaf(b, &cols[i], cols[i].name, PQ_OPTIONAL);
			continue;
		}
		w_group(b, cols[i].name, PQ_OPTIONAL, 1, true);
		w_group(b, "list", PQ_REPEATED, 1, false);
		w_leaf(b, &cols[i], "element", PQ_OPTIONAL);
	}
}

static void w_column_chunk(struct pq_buf *b, const struct pq_wcol *c, int codec)
{
	int16_t last = 0, in = 0;

	w_i64(b, &last, 2, (int64_t)c->start);
	w_field(b, &last, 3, T_STRUCT);
	w_i32(b, &in, 1, c->type);
	w_field(b, &in, 2, T_LIST);
	w_list(b, T_I32, 2);
	w_zigzag(b, PQ_ENC_PLAIN);
	w_zigzag(b, PQ_ENC_RLE);
	w_field(b, &in, 3, T_LIST);
	w_list(b, T_BINARY, c->list ? 3 : 1);
	w_str(b, c->name);
	if (c->list) {
		w_str(b, "list");
		w_str(b, "element");
	}
	w_i32(b, &in, 4, codec);
	w_i64(b, &in, 5, (int64_t)c->num_values);
	w_i64(b, &in, 6, (int64_t)c->usize);
	w_i64(b, &in, 7, (int64_t)c->csize);
	w_i64(b, &in, 9, (int64_t)c->start);
	w_stop(b);
	w_stop(b);
}

void pq_write_footer(struct pq_buf *b, const struct pq_wcol *cols, uint32_t ncols,
		     const uint64_t *rg_rows, uint32_t nrg, const struct pq_wcol *chunks, int codec,
		     const char *created_by)
{
	int16_t last = 0;
	uint64_t rows = 0;

	for (uint32_t g = 0; g < nrg; g++)
		rows += rg_rows[g];
	w_i32(b, &last, 1, 1);
	w_field(b, &last, 2, T_LIST);
	w_schema(b, cols, ncols);
	w_i64(b, &last, 3, (int64_t)rows);
	w_field(b, &last, 4, T_LIST);
	w_list(b, T_STRUCT, nrg);
	for (uint32_t g = 0; g < nrg; g++) {
		const struct pq_wcol *ck = &chunks[(uint64_t)g * ncols];
		int16_t rl = 0;
		uint64_t usize = 0, csize = 0;

		w_field(b, &rl, 1, T_LIST);
		w_list(b, T_STRUCT, ncols);
		for (uint32_t c = 0; c < ncols; c++) {
			w_column_chunk(b, &ck[c], codec);
			usize += ck[c].usize;
			csize += ck[c].csize;
		}
		w_i64(b, &rl, 2, (int64_t)usize);
		w_i64(b, &rl, 3, (int64_t)rg_rows[g]);
		w_i64(b, &rl, 5, (int64_t)ck[0].start);
		w_i64(b, &rl, 6, (int64_t)csize);
		w_stop(b);
	}
	w_field(b, &last, 6, T_BINARY);
	w_str(b, created_by);
	w_stop(b);
}

/* ---- column specs ------------------------------------------------------------------------ */

struct pq_dtype {
	const char *name;
	int type, width, bits;
	bool is_signed, float16;
};

static const struct pq_dtype pq_dtypes[] = {
    {"uint8", PQ_INT32, 1, 8, false, false},	{"int8", PQ_INT32, 1, 8, true, false},
    {"uint16", PQ_INT32, 2, 16, false, false},	{"int16", PQ_INT32, 2, 16, true, false},
    {"uint32", PQ_INT32, 4, 32, false, false},	{"int32", PQ_INT32, 4, 32, true, false},
    {"uint64", PQ_INT64, 8, 64, false, false},	{"int64", PQ_INT64, 8, 64, true, false},
    {"float16", PQ_FLBA, 2, 0, false, true},	{"float32", PQ_FLOAT, 4, 0, false, false},
    {"float64", PQ_DOUBLE, 8, 0, false, false}, {"binary", PQ_BYTE_ARRAY, 0, 0, false, false},
};

static int wcol_fill(struct pq_wcol *c, char *item, char *why, size_t len)
{
	char *save = NULL, *end = NULL;
	char *name = strtok_r(item, ":", &save), *dtype = strtok_r(NULL, ":", &save);
	char *size = strtok_r(NULL, ":", &save);
	size_t k;

	if (!name || !dtype || strtok_r(NULL, ":", &save) || strlen(name) >= PQ_NAME_MAX) {
		snprintf(why, len, "'%s' is not name:dtype[:size]", item);
		return -1;
	}
	for (k = 0; k < sizeof(pq_dtypes) / sizeof(pq_dtypes[0]); k++)
		if (strcmp(pq_dtypes[k].name, dtype) == 0)
			break;
	if (k == sizeof(pq_dtypes) / sizeof(pq_dtypes[0])) {
		snprintf(
		    why, len,
		    "column '%s': dtype '%s' is not one of uint8, int8, uint16, int16, uint32, "
		    "int32, uint64, int64, float16, float32, float64, binary",
		    name, dtype);
		return -1;
	}
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->dtype, sizeof(c->dtype), "%s", dtype);
	c->size = size ? strtoull(size, &end, 10) : 1;
	if ((size && (*end || end == size)) || c->size == 0 || c->size > (1ull << 31) ||
	    (size && pq_dtypes[k].type == PQ_BYTE_ARRAY)) {
		snprintf(why, len, "column '%s': size %s is not a count of values from 1%s", name,
			 size ? size : "",
			 pq_dtypes[k].type == PQ_BYTE_ARRAY ? " (binary takes none)" : "");
		return -1;
	}
	c->type = pq_dtypes[k].type;
	c->width = pq_dtypes[k].width;
	c->bits = pq_dtypes[k].bits;
	c->is_signed = pq_dtypes[k].is_signed;
	c->float16 = pq_dtypes[k].float16;
	c->type_length = c->float16 ? 2 : 0;
	c->list = c->size > 1;
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

int pq_wcols_parse(const char *spec, struct pq_wcol **out, uint32_t *n, char *why, size_t len)
{
	char *copy = strdup(spec), *save = NULL, *item;
	struct pq_wcol *cols = NULL;
	uint32_t k = 0, cap = 0;
	int rc = 0;

	if (!copy)
		return snprintf(why, len, "out of memory"), -1;
	for (item = strtok_r(copy, ",", &save); item && rc == 0;
	     item = strtok_r(NULL, ",", &save)) {
		if (k == cap) {
			struct pq_wcol *p = realloc(cols, (cap = cap ? 2 * cap : 8) * sizeof(*p));

			if (!p) {
				rc = -1;
				snprintf(why, len, "out of memory");
				break;
			}
			cols = p;
		}
		memset(&cols[k], 0, sizeof(cols[k]));
		rc = wcol_fill(&cols[k], trim(item), why, len);
		for (uint32_t j = 0; rc == 0 && j < k; j++)
			if (strcmp(cols[j].name, cols[k].name) == 0) {
				snprintf(why, len, "column '%s' is listed twice", cols[k].name);
				rc = -1;
			}
		k++;
	}
	free(copy);
	if (rc == 0 && k == 0) {
		snprintf(why, len, "no columns");
		rc = -1;
	}
	if (rc < 0) {
		free(cols);
		return -1;
	}
	*out = cols;
	*n = k;
	return 0;
}
