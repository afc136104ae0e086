/* Zarr metadata: .zarray (v2) and zarr.json (v3) read through jansson and written, chunk keys,
 * and the index at the end of a shard file (v3 sharding_indexed codec).
 */
#include "zarr.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample.h" /* crc32c() */

#define ZARR_FAIL(...) (snprintf(why, whylen, __VA_ARGS__), -1)

/* shape / chunk shape: a list of positive integers (chunk shape: zeros refused too). */
static int zarr_dims(const json_t *a, uint64_t *d, int *n, const char *what, char *why,
		     size_t whylen)
{
	size_t i;
	json_t *v;

	if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > ZARR_MAX_DIMS)
		return ZARR_FAIL("%s is not a list of 1 to %d sizes", what, ZARR_MAX_DIMS);
	json_array_foreach(a, i, v)
	{
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return ZARR_FAIL("%s holds something else than sizes", what);
		d[i] = (uint64_t)json_integer_value(v);
	}
	*n = (int)json_array_size(a);
	return 0;
}

/* The first axis is the samples; the rest make one sample, unchunked. */
static int zarr_geometry(struct zarr_meta *m, const json_t *shape, const json_t *chunks, char *why,
			 size_t whylen)
{
	uint64_t s[ZARR_MAX_DIMS], c[ZARR_MAX_DIMS];
	int ns = 0, nc = 0;

	if (zarr_dims(shape, s, &ns, "shape", why, whylen) < 0 ||
	    zarr_dims(chunks, c, &nc, "chunk shape", why, whylen) < 0)
		return -1;
	if (ns != nc)
		return ZARR_FAIL("shape has %d dimensions, the chunks %d", ns, nc);
	m->ndims = ns;
	m->nsamples = s[0];
	m->chunk = c[0];
	if (m->chunk == 0)
		return ZARR_FAIL("chunks of 0 samples");
	m->sample_bytes = m->itemsize;
	for (int i = 1; i < ns; i++) {
		if (c[i] != s[i])
			return ZARR_FAIL("chunked along axis %d (%" PRIu64 " of %" PRIu64
					 "): only chunks along the sample axis are read",
					 i, c[i], s[i]);
		if (s[i] && m->sample_bytes > (UINT64_MAX >> 20) / s[i])
			return ZARR_FAIL("samples too large");
		m->sample_bytes *= s[i];
	}
	if (m->sample_bytes > (4ull << 30))
		return ZARR_FAIL("samples of more than 4 GiB");
	return 0;
}

/* numpy's typestr of v2: byte order, kind, size ("<f4", "|u1", "<U8": 4 bytes a character). */
static int zarr_dtype_v2(struct zarr_meta *m, const json_t *d, char *why, size_t whylen)
{
	const char *s = json_string_value(d);
	char *end;
	unsigned long n;

	if (!s || strlen(s) < 3 || !strchr("<>|=", s[0]) || !strchr("uifcbSVU", s[1]))
		return ZARR_FAIL("dtype %s not handled (structured, object or unknown)",
				 s ? s : "that is not a string");
	n = strtoul(s + 2, &end, 10);
	if (*end || n == 0 || n > 65536)
		return ZARR_FAIL("dtype '%s' not handled", s);
	m->itemsize = s[1] == 'U' ? 4 * n : n;
	return 0;
}

static int zarr_dtype_v3(struct zarr_meta *m, const json_t *d, char *why, size_t whylen)
{
	static const struct {
		const char *name;
		unsigned size;
	} types[] = {{"bool", 1},      {"int8", 1},	  {"uint8", 1},	  {"int16", 2},
		     {"uint16", 2},    {"int32", 4},	  {"uint32", 4},  {"int64", 8},
		     {"uint64", 8},    {"float16", 2},	  {"float32", 4}, {"float64", 8},
		     {"complex64", 8}, {"complex128", 16}};
	const char *s = json_string_value(d);

	for (size_t i = 0; s && i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(s, types[i].name) == 0) {
			m->itemsize = types[i].size;
			return 0;
		}
	return ZARR_FAIL("data_type %s not handled", s ? s : "that is not a name");
}

static bool zarr_fill_zero(const json_t *f)
{
	return !f || json_is_null(f) || (json_is_number(f) && json_number_value(f) == 0) ||
	       json_is_false(f);
}

static void zarr_blosc_conf(struct zarr_meta *m, const json_t *c)
{
	const char *cname = json_string_value(json_object_get(c, "cname"));
	const json_t *sh = json_object_get(c, "shuffle");

	snprintf(m->cname, sizeof(m->cname), "%s", cname ? cname : "lz4");
	m->clevel = (int)json_integer_value(json_object_get(c, "clevel"));
	if (json_is_integer(sh))
		m->shuffle = (int)json_integer_value(sh);
	else if (json_is_string(sh))
		m->shuffle = strcmp(json_string_value(sh), "shuffle") == 0	? 1
			     : strcmp(json_string_value(sh), "bitshuffle") == 0 ? 2
										: 0;
}

/* A compressor by name (v2 "id", v3 "name") and its configuration. */
static int zarr_compressor(struct zarr_meta *m, const char *name, const json_t *conf, char *why,
			   size_t whylen)
{
	const json_t *lvl = json_object_get(conf, "level");

	if (m->codec != ZARR_NONE)
		return ZARR_FAIL("two compressors (%s after another) not handled", name);
	m->clevel = json_is_integer(lvl) ? (int)json_integer_value(lvl) : 0;
	if (strcmp(name, "blosc") == 0) {
		m->codec = ZARR_BLOSC;
		zarr_blosc_conf(m, conf);
	} else if (strcmp(name, "zstd") == 0) {
		m->codec = ZARR_ZSTD;
	} else if (strcmp(name, "gzip") == 0) {
		m->codec = ZARR_GZIP;
	} else {
		return ZARR_FAIL("codec '%s' not handled (blosc, zstd, gzip, crc32c are)", name);
	}
	return 0;
}

static int zarr_parse_v2(struct zarr_meta *m, const json_t *root, char *why, size_t whylen)
{
	const json_t *comp = json_object_get(root, "compressor");
	const json_t *filt = json_object_get(root, "filters");
	const char *order = json_string_value(json_object_get(root, "order"));
	const char *sep = json_string_value(json_object_get(root, "dimension_separator"));

	if (json_integer_value(json_object_get(root, "zarr_format")) != 2)
		return ZARR_FAIL(".zarray does not say zarr_format 2");
	if (zarr_dtype_v2(m, json_object_get(root, "dtype"), why, whylen) < 0 ||
	    zarr_geometry(m, json_object_get(root, "shape"), json_object_get(root, "chunks"), why,
			  whylen) < 0)
		return -1;
	if (order && strcmp(order, "C") != 0)
		return ZARR_FAIL("order '%s' not handled (C is)", order);
	if (filt && !json_is_null(filt) && json_array_size(filt) > 0)
		return ZARR_FAIL("filters not handled");
	if (comp && !json_is_null(comp)) {
		const char *id = json_string_value(json_object_get(comp, "id"));

		if (!id || zarr_compressor(m, id, comp, why, whylen) < 0)
			return id ? -1 : ZARR_FAIL("compressor without an id");
	}
	m->sep = sep && strcmp(sep, "/") == 0 ? '/' : '.';
	m->dot_keys = m->sep == '.';
	m->fill_zero = zarr_fill_zero(json_object_get(root, "fill_value"));
	return 0;
}

/* A v3 codec list (bytes first, then at most one compressor, then crc32c); with sharding the
 * outer list is [sharding_indexed] and this is called again for its inner codecs. */
static int zarr_codecs_v3(struct zarr_meta *m, const json_t *codecs, const json_t *chunk_grid,
			  bool inner, char *why, size_t whylen);

static int zarr_sharding(struct zarr_meta *m, const json_t *conf, char *why, size_t whylen)
{
	const json_t *ic = json_object_get(conf, "index_codecs");
	const char *loc = json_string_value(json_object_get(conf, "index_location"));
	uint64_t outer = m->chunk;
	size_t i;
	json_t *c;

	if (loc && strcmp(loc, "end") != 0)
		return ZARR_FAIL("sharding index at the %s not handled (at the end is)", loc);
	json_array_foreach(ic, i, c)
	{
		const char *n = json_string_value(json_object_get(c, "name"));

		if (n && strcmp(n, "crc32c") == 0)
			m->index_crc32c = true;
		else if (!n || strcmp(n, "bytes") != 0)
			return ZARR_FAIL("sharding index codec %s not handled", n ? n : "?");
	}
	if (zarr_codecs_v3(m, json_object_get(conf, "codecs"), conf, true, why, whylen) < 0)
		return -1;
	if (outer % m->chunk)
		return ZARR_FAIL("shards of %" PRIu64
				 " samples do not hold whole chunks of %" PRIu64,
				 outer, m->chunk);
	m->shard = outer / m->chunk;
	return 0;
}

static int zarr_codecs_v3(struct zarr_meta *m, const json_t *codecs, const json_t *grid, bool inner,
			  char *why, size_t whylen)
{
	bool bytes = false;
	size_t i;
	json_t *c;

	if (inner) {
		uint64_t s[ZARR_MAX_DIMS];
		int n = 0;

		if (zarr_dims(json_object_get(grid, "chunk_shape"), s, &n, "inner chunk shape", why,
			      whylen) < 0 ||
		    n != m->ndims || s[0] == 0)
			return ZARR_FAIL("inner chunk shape does not match the array");
		m->chunk = s[0];
	}
	if (!json_is_array(codecs) || json_array_size(codecs) == 0)
		return ZARR_FAIL("codecs is not a list");
	json_array_foreach(codecs, i, c)
	{
		const char *n = json_string_value(json_object_get(c, "name"));
		const json_t *conf = json_object_get(c, "configuration");

		if (!n)
			return ZARR_FAIL("a codec without a name");
		if (m->crc32c)
			return ZARR_FAIL("codec '%s' after crc32c not handled", n);
		if (!bytes && strcmp(n, "bytes") == 0)
			bytes = true;
		else if (!bytes && !inner && i == 0 && strcmp(n, "sharding_indexed") == 0)
			return json_array_size(codecs) == 1 ? zarr_sharding(m, conf, why, whylen)
							    : ZARR_FAIL("codecs after sharding");
		else if (!bytes)
			return ZARR_FAIL("codec '%s' before bytes not handled", n);
		else if (strcmp(n, "crc32c") == 0)
			m->crc32c = true;
		else if (zarr_compressor(m, n, conf, why, whylen) < 0)
			return -1;
	}
	return 0;
}

static int zarr_parse_v3(struct zarr_meta *m, const json_t *root, char *why, size_t whylen)
{
	const json_t *grid = json_object_get(root, "chunk_grid");
	const json_t *keys = json_object_get(root, "chunk_key_encoding");
	const char *kname = json_string_value(json_object_get(keys, "name"));
	const char *sep =
	    json_string_value(json_object_get(json_object_get(keys, "configuration"), "separator"));
	const char *gname = json_string_value(json_object_get(grid, "name"));

	if (json_integer_value(json_object_get(root, "zarr_format")) != 3)
		return ZARR_FAIL("zarr.json does not say zarr_format 3");
	if (!json_is_string(json_object_get(root, "node_type")) ||
	    strcmp(json_string_value(json_object_get(root, "node_type")), "array") != 0)
		return ZARR_FAIL("zarr.json is not an array's (node_type)");
	if (!gname || strcmp(gname, "regular") != 0)
		return ZARR_FAIL("chunk grid %s not handled (regular is)", gname ? gname : "?");
	if (zarr_dtype_v3(m, json_object_get(root, "data_type"), why, whylen) < 0 ||
	    zarr_geometry(m, json_object_get(root, "shape"),
			  json_object_get(json_object_get(grid, "configuration"), "chunk_shape"),
			  why, whylen) < 0)
		return -1;
	m->v3_default_keys = !kname || strcmp(kname, "v2") != 0;
	m->sep = sep ? sep[0] : m->v3_default_keys ? '/' : '.';
	if (m->sep != '/' && m->sep != '.')
		return ZARR_FAIL("chunk key separator '%c' not handled", m->sep);
	m->fill_zero = zarr_fill_zero(json_object_get(root, "fill_value"));
	return zarr_codecs_v3(m, json_object_get(root, "codecs"), NULL, false, why, whylen);
}

int zarr_meta_parse(const char *text, size_t len, int version, struct zarr_meta *m, char *why,
		    size_t whylen)
{
	json_error_t err;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
	int rc;

	memset(m, 0, sizeof(*m));
	m->version = version;
	if (!root || !json_is_object(root)) {
		json_decref(root);
		return ZARR_FAIL("not a JSON object (line %d: %s)", err.line, err.text);
	}
	rc = version == 2 ? zarr_parse_v2(m, root, why, whylen)
			  : zarr_parse_v3(m, root, why, whylen);
	json_decref(root);
	return rc;
}

static json_t *zarr_codec_json(const struct zarr_meta *m, bool v2)
{
	json_t *c;

	switch (m->codec) {
	case ZARR_BLOSC:
		c = v2 ? json_pack("{s:s, s:s, s:i, s:i, s:i}", "id", "blosc", "cname", m->cname,
				   "clevel", m->clevel, "shuffle", m->shuffle, "blocksize", 0)
		       : json_pack("{s:s, s:{s:s, s:i, s:s, s:i, s:i}}", "name", "blosc",
				   "configuration", "cname", m->cname, "clevel", m->clevel,
				   "shuffle", m->shuffle ? "shuffle" : "noshuffle", "typesize", 1,
				   "blocksize", 0);
		return c;
	case ZARR_ZSTD:
		return v2 ? json_pack("{s:s, s:i}", "id", "zstd", "level", m->clevel)
			  : json_pack("{s:s, s:{s:i, s:b}}", "name", "zstd", "configuration",
				      "level", m->clevel, "checksum", 0);
	case ZARR_GZIP:
		return v2 ? json_pack("{s:s, s:i}", "id", "gzip", "level", m->clevel)
			  : json_pack("{s:s, s:{s:i}}", "name", "gzip", "configuration", "level",
				      m->clevel);
	default:
		return json_null();
	}
}

static json_t *zarr_codec_list(const struct zarr_meta *m)
{
	json_t *l = json_array();

	json_array_append_new(
	    l, json_pack("{s:s, s:{s:s}}", "name", "bytes", "configuration", "endian", "little"));
	if (m->codec != ZARR_NONE)
		json_array_append_new(l, zarr_codec_json(m, false));
	if (m->crc32c)
		json_array_append_new(l, json_pack("{s:s}", "name", "crc32c"));
	return l;
}

char *zarr_meta_write(const struct zarr_meta *m)
{
	json_t *root;
	char *s;

	if (m->version == 2) {
		root = json_pack("{s:i, s:[I, I], s:[I, I], s:s, s:o, s:i, s:s, s:n, s:s}",
				 "zarr_format", 2, "shape", (json_int_t)m->nsamples,
				 (json_int_t)m->sample_bytes, "chunks", (json_int_t)m->chunk,
				 (json_int_t)m->sample_bytes, "dtype", "|u1", "compressor",
				 zarr_codec_json(m, true), "fill_value", 0, "order", "C", "filters",
				 "dimension_separator", ".");
	} else {
		uint64_t outer = m->shard ? m->shard * m->chunk : m->chunk;
		json_t *codecs = zarr_codec_list(m);

		if (m->shard)
			codecs = json_pack(
			    "[{s:s, s:{s:[I, I], s:o, s:[{s:s, s:{s:s}}, {s:s}], s:s}}]", "name",
			    "sharding_indexed", "configuration", "chunk_shape",
			    (json_int_t)m->chunk, (json_int_t)m->sample_bytes, "codecs", codecs,
			    "index_codecs", "name", "bytes", "configuration", "endian", "little",
			    "name", "crc32c", "index_location", "end");
		root =
		    json_pack("{s:i, s:s, s:[I, I], s:s, s:{s:s, s:{s:[I, I]}}, s:{s:s, s:{s:s}}, "
			      "s:i, s:o, s:{}}",
			      "zarr_format", 3, "node_type", "array", "shape",
			      (json_int_t)m->nsamples, (json_int_t)m->sample_bytes, "data_type",
			      "uint8", "chunk_grid", "name", "regular", "configuration",
			      "chunk_shape", (json_int_t)outer, (json_int_t)m->sample_bytes,
			      "chunk_key_encoding", "name", "default", "configuration", "separator",
			      "/", "fill_value", 0, "codecs", codecs, "attributes");
	}
	if (!root)
		return NULL;
	s = json_dumps(root, JSON_INDENT(2));
	json_decref(root);
	return s;
}

void zarr_chunk_key(const struct zarr_meta *m, uint64_t i, char *buf, size_t len)
{
	size_t at = (size_t)snprintf(
	    buf, len, "%s%" PRIu64,
	    m->version == 3 && m->v3_default_keys ? (m->sep == '/' ? "c/" : "c.") : "", i);

	for (int d = 1; d < m->ndims && at + 2 < len; d++)
		at += (size_t)snprintf(buf + at, len - at, "%c0", m->sep);
}

size_t zarr_shard_index_bytes(const struct zarr_meta *m)
{
	return (size_t)m->shard * 16 + (m->index_crc32c ? 4 : 0);
}

static uint64_t zarr_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

int zarr_shard_index_parse(const struct zarr_meta *m, const uint8_t *buf, size_t len,
			   uint64_t file_size, uint64_t *off, uint64_t *lens, char *why,
			   size_t whylen)
{
	size_t n = (size_t)m->shard, ib = zarr_shard_index_bytes(m);

	if (len != ib || file_size < ib)
		return ZARR_FAIL("shard of %" PRIu64 " bytes is shorter than its index of %zu",
				 file_size, ib);
	if (m->index_crc32c) {
		uint32_t want = (uint32_t)buf[16 * n] | (uint32_t)buf[16 * n + 1] << 8 |
				(uint32_t)buf[16 * n + 2] << 16 | (uint32_t)buf[16 * n + 3] << 24;

		if (crc32c(buf, 16 * n) != want)
			return ZARR_FAIL("shard index CRC32C mismatch");
	}
	for (size_t i = 0; i < n; i++) {
		off[i] = zarr_le64(buf + 16 * i);
		lens[i] = zarr_le64(buf + 16 * i + 8);
		if (off[i] == UINT64_MAX && lens[i] == UINT64_MAX)
			continue;
		if (off[i] > file_size - ib || lens[i] > file_size - ib - off[i])
			return ZARR_FAIL("shard index entry %zu (offset %" PRIu64 ", %" PRIu64
					 " bytes) lies outside the shard's %" PRIu64 " data bytes",
					 i, off[i], lens[i], file_size - ib);
	}
	return 0;
}
