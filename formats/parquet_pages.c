/* Parquet pages: compression (snappy, gzip, zstd through Debian's libsnappy, zlib, libzstd),
 * the RLE / bit-packed hybrid of levels and dictionary indices, PLAIN values, dictionaries,
 * and the decoding of a whole column chunk into rows (one decoded buffer per column, with the
 * byte offset of each row).
 */
#include "parquet.h"

#include "build_config.h"

#if FEEDBENCH_HAVE_PARQUET
#include <inttypes.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

/* ---- compression ---------------------------------------------------------------------- */

static int gunzip(const void *src, size_t slen, void *dst, size_t dlen, const char **why)
{
	z_stream z = {0};
	int zr;

	if (slen > UINT32_MAX || dlen > UINT32_MAX || inflateInit2(&z, 15 + 32) != Z_OK) {
		*why = "gzip page cannot be inflated";
		return -1;
	}
	z.next_in = (Bytef *)src;
	z.avail_in = (uInt)slen;
	z.next_out = dst;
	z.avail_out = (uInt)dlen;
	zr = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	if (zr != Z_STREAM_END || z.total_out != dlen) {
		*why = zr == Z_STREAM_END
			   ? "gzip page inflates to another size than its header says"
			   : "corrupt gzip page";
		return -1;
	}
	return 0;
}

int pq_decompress(int codec, const void *src, size_t slen, void *dst, size_t dlen, const char **why)
{
	size_t n = 0;

	switch (codec) {
	case PQ_CODEC_NONE:
		if (slen != dlen) {
			*why = "uncompressed page whose two sizes differ";
			return -1;
		}
		if (dlen)
			memcpy(dst, src, dlen);
		return 0;
	case PQ_CODEC_SNAPPY:
		if (snappy_uncompressed_length(src, slen, &n) != SNAPPY_OK || n != dlen ||
		    snappy_uncompress(src, slen, dst, &n) != SNAPPY_OK || n != dlen) {
			*why = "corrupt snappy page";
			return -1;
		}
		return 0;
	case PQ_CODEC_GZIP:
		return gunzip(src, slen, dst, dlen, why);
	case PQ_CODEC_ZSTD:
		n = ZSTD_decompress(dst, dlen, src, slen);
		if (ZSTD_isError(n) || n != dlen) {
			*why = "corrupt zstd page";
			return -1;
		}
		return 0;
	default:
		*why = "compression codec not handled";
		return -1;
	}
}

static int gzip(int level, const void *src, size_t slen, struct pq_buf *b)
{
	z_stream z = {0};
	uint8_t *out;
	uLong bound;
	int zr;

	if (slen > UINT32_MAX || deflateInit2(&z, level ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED,
					      15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	bound = deflateBound(&z, (uLong)slen) + 32;
	out = pq_buf_reserve(b, bound);
	if (!out) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (Bytef *)src;
	z.avail_in = (uInt)slen;
	z.next_out = out;
	z.avail_out = (uInt)bound;
	zr = deflate(&z, Z_FINISH);
	if (zr == Z_STREAM_END)
		b->len += z.total_out;
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : -1;
}

int pq_compress(int codec, int level, const void *src, size_t slen, struct pq_buf *b)
{
	uint8_t *out;
	size_t n;

	switch (codec) {
	case PQ_CODEC_NONE:
		pq_buf_put(b, src, slen);
		return b->err ? -1 : 0;
	case PQ_CODEC_SNAPPY:
		n = snappy_max_compressed_length(slen);
		out = pq_buf_reserve(b, n);
		if (!out || snappy_compress(src, slen, (char *)out, &n) != SNAPPY_OK)
			return -1;
		b->len += n;
		return 0;
	case PQ_CODEC_GZIP:
		return gzip(level, src, slen, b);
	case PQ_CODEC_ZSTD:
		n = ZSTD_compressBound(slen);
		out = pq_buf_reserve(b, n);
		if (!out)
			return -1;
		n = ZSTD_compress(out, n, src, slen, level ? level : 1);
		if (ZSTD_isError(n))
			return -1;
		b->len += n;
		return 0;
	default:
		return -1;
	}
}

/* ---- RLE / bit-packed hybrid ----------------------------------------------------------- */

int pq_bit_width(uint32_t max_value)
{
	int w = 0;

	while (max_value) {
		w++;
		max_value >>= 1;
	}
	return w;
}

void pq_rle_put_run(struct pq_buf *b, uint32_t count, uint32_t value, int bit_width)
{
	uint8_t tmp[16];
	size_t n = 0;
	uint64_t h = (uint64_t)count << 1;

	while (h >= 0x80) {
		tmp[n++] = (uint8_t)(h | 0x80);
		h >>= 7;
	}
	tmp[n++] = (uint8_t)h;
	for (int k = 0; k < (bit_width + 7) / 8; k++)
		tmp[n++] = (uint8_t)(value >> (8 * k));
	pq_buf_put(b, tmp, n);
}

struct rle {
	const uint8_t *p, *end;
	int bw;
	uint64_t left;	      /* values left in the current run */
	bool packed;	      /* current run is bit-packed */
	uint32_t value;	      /* RLE run's value */
	const uint8_t *bits;  /* bit-packed run's bytes */
	uint64_t nbytes, pos; /* ... their count, and the bit position */
};

static void rle_init(struct rle *d, const uint8_t *p, size_t len, int bw)
{
	memset(d, 0, sizeof(*d));
	d->p = p;
	d->end = p + len;
	d->bw = bw;
}

/* The next run's header. On failure the decoder is left empty (no values left, nothing past
 * its end), so a later call fails the same way instead of reading a half-set run. */
static int rle_header(struct rle *d)
{
	uint64_t h = 0;
	unsigned shift = 0, nb = (unsigned)(d->bw + 7) / 8;

	d->left = 0;
	for (;;) {
		if (d->p >= d->end || shift > 35)
			return -1;
		uint8_t c = *d->p++;

		h |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
		if (!(c & 0x80))
			break;
	}
	d->packed = h & 1;
	if (d->packed) {
		if ((h >> 1) * (uint64_t)d->bw > (uint64_t)(d->end - d->p)) {
			d->p = d->end;
			return -1;
		}
		d->nbytes = (h >> 1) * (uint64_t)d->bw;
		d->bits = d->p;
		d->pos = 0;
		d->p += d->nbytes;
		d->left = (h >> 1) * 8;
		return 0;
	}
	if (nb > (size_t)(d->end - d->p)) {
		d->p = d->end;
		return -1;
	}
	d->value = 0;
	for (unsigned k = 0; k < nb; k++)
		d->value |= (uint32_t)d->p[k] << (8 * k);
	d->p += nb;
	d->left = h >> 1;
	return 0;
}

/* Next value; -1 when the encoded runs end first. */
static int rle_next(struct rle *d, uint32_t *v)
{
	while (d->left == 0)
		if (rle_header(d) < 0)
			return -1;
	d->left--;
	if (!d->packed) {
		*v = d->value;
		return 0;
	}
	uint64_t byte = d->pos >> 3, w = 0;
	unsigned sh = d->pos & 7;

	for (unsigned k = 0; k < 5 && byte + k < d->nbytes; k++)
		w |= (uint64_t)d->bits[byte + k] << (8 * k);
	*v = (uint32_t)((w >> sh) & ((1ull << d->bw) - 1));
	d->pos += (uint64_t)d->bw;
	return 0;
}

/* ---- values ---------------------------------------------------------------------------- */

static size_t phys_size(const struct pq_column *c)
{
	switch (c->type) {
	case PQ_INT32:
	case PQ_FLOAT:
		return 4;
	case PQ_INT64:
	case PQ_DOUBLE:
		return 8;
	case PQ_FLBA:
		return (size_t)c->type_length;
	default:
		return 0;
	}
}

/* n PLAIN values from p (len bytes) appended to out; byte arrays also append each value's
 * start offset (in out) to offs when it is not NULL. Returns the bytes consumed, or -1. */
static int64_t plain_decode(const struct pq_column *c, const uint8_t *p, size_t len, uint64_t n,
			    struct pq_buf *out, struct pq_buf *offs)
{
	size_t ps = phys_size(c), w = (size_t)c->width;
	uint8_t *dst;

	if (c->type == PQ_BYTE_ARRAY) {
		size_t at = 0;

		for (uint64_t i = 0; i < n; i++) {
			uint64_t start = out->len;

			if (len - at < 4)
				return -1;
			uint32_t l = (uint32_t)p[at] | (uint32_t)p[at + 1] << 8 |
				     (uint32_t)p[at + 2] << 16 | (uint32_t)p[at + 3] << 24;

			at += 4;
			if (l > len - at || out->len + l > PQ_DECODED_MAX)
				return -1;
			if (offs)
				pq_buf_put(offs, &start, sizeof(start));
			pq_buf_put(out, p + at, l);
			at += l;
		}
		return out->err || (offs && offs->err) ? -1 : (int64_t)at;
	}
	if (ps == 0 || n > len / ps || out->len + n * w > PQ_DECODED_MAX)
		return -1;
	dst = pq_buf_reserve(out, n * w);
	if (!dst)
		return -1;
	if (w == ps) {
		memcpy(dst, p, n * w);
	} else {
		for (uint64_t i = 0; i < n; i++)
			memcpy(dst + i * w, p + i * ps, w); /* the low bytes: little endian */
	}
	out->len += n * w;
	return (int64_t)(n * ps);
}

static int dict_load(const struct pq_column *c, const uint8_t *p, size_t len, uint64_t n,
		     struct pq_decoded *d)
{
	d->dict.len = 0;
	d->tmp.len = 0;
	if (plain_decode(c, p, len, n, &d->dict, c->type == PQ_BYTE_ARRAY ? &d->tmp : NULL) < 0)
		return -1;
	free(d->dict_off);
	d->dict_off = NULL;
	if (c->type == PQ_BYTE_ARRAY) {
		d->dict_off = malloc((n + 1) * sizeof(*d->dict_off));
		if (!d->dict_off)
			return -1;
		if (n)
			memcpy(d->dict_off, d->tmp.p, n * sizeof(*d->dict_off));
		d->dict_off[n] = d->dict.len;
	}
	d->ndict = n;
	d->have_dict = true;
	return 0;
}

/* n dictionary-encoded values (bit width byte, then RLE / bit-packed indices). */
static int dict_decode(const struct pq_column *c, const uint8_t *p, size_t len, uint64_t n,
		       struct pq_decoded *d, struct pq_buf *offs, const char **why)
{
	struct rle r;
	size_t w = (size_t)c->width;

	if (!d->have_dict)
		return *why = "dictionary-encoded page without a dictionary page", -1;
	if (len < 1 || p[0] > 32)
		return *why = "bad bit width of dictionary indices", -1;
	rle_init(&r, p + 1, len - 1, p[0]);
	for (uint64_t i = 0; i < n; i++) {
		uint32_t k;
		const uint8_t *src;
		size_t l = w;

		if (rle_next(&r, &k) < 0)
			return *why = "dictionary indices end early", -1;
		if (k >= d->ndict)
			return *why = "dictionary index out of range", -1;
		if (c->type == PQ_BYTE_ARRAY) {
			src = d->dict.p + d->dict_off[k];
			l = d->dict_off[k + 1] - d->dict_off[k];
			pq_buf_put(offs, &d->vals.len, sizeof(d->vals.len));
		} else {
			src = d->dict.p + (uint64_t)k * w;
		}
		if (d->vals.len + l > PQ_DECODED_MAX)
			return *why = "column chunk decodes to more than 4 GiB", -1;
		pq_buf_put(&d->vals, src, l);
	}
	if (d->vals.err || offs->err)
		return *why = "out of memory", -1;
	return 0;
}

/* ---- pages ------------------------------------------------------------------------------ */

struct levels {
	struct rle rep, def;
	bool has_rep, has_def;
};

/* v1 levels: a 4-byte length, then the runs. Advances *p / *len past them. */
static int levels_v1(struct rle *r, int enc, int max, const uint8_t **p, size_t *len,
		     const char **why)
{
	uint32_t n;

	if (enc != PQ_ENC_RLE)
		return *why = "levels not RLE-encoded (BIT_PACKED levels are not handled)", -1;
	if (*len < 4)
		return *why = "levels run past the page", -1;
	n = (uint32_t)(*p)[0] | (uint32_t)(*p)[1] << 8 | (uint32_t)(*p)[2] << 16 |
	    (uint32_t)(*p)[3] << 24;
	if (n > *len - 4)
		return *why = "levels run past the page", -1;
	rle_init(r, *p + 4, n, pq_bit_width((uint32_t)max));
	*p += 4 + n;
	*len -= 4 + (size_t)n;
	return 0;
}

/* Walks the levels of num_values entries: the value index where each row starting in this
 * page begins goes to d->tmp; *nvals is the count of values (entries defined at max_def). */
/* The current run of d when it is an RLE run: its value, and *n lowered to what is left of it
 * (levels are mostly long runs: a run is walked at once). false for a bit-packed run or an
 * error (the value-by-value path then reports it). NULL d: no levels, no limit. */
static bool level_run(struct rle *d, uint32_t *v, uint64_t *n)
{
	if (!d)
		return true;
	while (d->left == 0)
		if (rle_header(d) < 0)
			return false;
	if (d->packed)
		return false;
	*v = d->value;
	if (d->left < *n)
		*n = d->left;
	return true;
}

/* n entries of the same levels: rows begun (their first value index to d->tmp), values. */
static int levels_apply(const struct pq_column *c, struct pq_decoded *d, uint32_t rep, uint32_t def,
			uint64_t n, uint64_t *k, uint64_t *rows, const char **why)
{
	uint64_t defined = def == (uint32_t)c->max_def;

	if (rep > (uint32_t)c->max_rep || def > (uint32_t)c->max_def)
		return *why = "level above its maximum", -1;
	if (rep != 0) {
		if (d->nrows + *rows == 0)
			return *why = "first value continues a row that never began", -1;
		*k += defined * n;
		return 0;
	}
	uint64_t *p = (uint64_t *)pq_buf_reserve(&d->tmp, n * sizeof(*p));

	if (!p)
		return *why = "out of memory", -1;
	for (uint64_t j = 0; j < n; j++, *k += defined)
		p[j] = *k;
	d->tmp.len += n * sizeof(*p);
	*rows += n;
	return 0;
}

/* Walks the levels of num_values entries: the value index where each row starting in this
 * page begins goes to d->tmp; *nvals is the count of values (entries defined at max_def). */
static int walk_levels(const struct pq_column *c, struct levels *lv, uint32_t num_values,
		       struct pq_decoded *d, uint64_t *nvals, uint64_t *nrows, const char **why)
{
	uint64_t k = 0, rows = 0;

	d->tmp.len = 0;
	for (uint32_t i = 0; i < num_values;) {
		uint32_t rep = 0, def = (uint32_t)c->max_def;
		uint64_t n = num_values - i;

		if (level_run(lv->has_rep ? &lv->rep : NULL, &rep, &n) &&
		    level_run(lv->has_def ? &lv->def : NULL, &def, &n)) {
			lv->rep.left -= lv->has_rep ? n : 0;
			lv->def.left -= lv->has_def ? n : 0;
		} else {
			n = 1;
			if ((lv->has_rep && rle_next(&lv->rep, &rep) < 0) ||
			    (lv->has_def && rle_next(&lv->def, &def) < 0))
				return *why = "levels end before the page's values", -1;
		}
		if (levels_apply(c, d, rep, def, n, &k, &rows, why) < 0)
			return -1;
		i += (uint32_t)n;
	}
	*nvals = k;
	*nrows = rows;
	return 0;
}

static int rows_append(const struct pq_column *c, struct pq_decoded *d, uint64_t base,
		       uint64_t nrows, const struct pq_buf *offs, uint64_t nvals)
{
	const uint64_t *starts = (const uint64_t *)d->tmp.p;
	const uint64_t *voff = (const uint64_t *)offs->p;

	if (d->nrows + nrows + 1 > d->cap_rows) {
		uint64_t n = 2 * (d->nrows + nrows + 1);
		uint64_t *p = realloc(d->row_off, n * sizeof(*p));

		if (!p)
			return -1;
		d->row_off = p;
		d->cap_rows = n;
	}
	for (uint64_t r = 0; r < nrows; r++) {
		uint64_t k = starts[r];

		if (c->type == PQ_BYTE_ARRAY)
			d->row_off[d->nrows++] = k < nvals ? voff[k] : d->vals.len;
		else
			d->row_off[d->nrows++] = base + k * (uint64_t)c->width;
	}
	return 0;
}

/* Values of a data page (after its levels): PLAIN or dictionary indices. */
static int page_values(const struct pq_column *c, const struct pq_page *pg, const uint8_t *p,
		       size_t len, uint64_t nvals, struct pq_decoded *d, struct pq_buf *offs,
		       const char **why)
{
	switch (pg->encoding) {
	case PQ_ENC_PLAIN:
		if (plain_decode(c, p, len, nvals, &d->vals, offs) < 0)
			return *why = "PLAIN values run past the page", -1;
		return 0;
	case PQ_ENC_PLAIN_DICTIONARY:
	case PQ_ENC_RLE_DICTIONARY:
		return dict_decode(c, p, len, nvals, d, offs, why);
	default:
		return *why = "encoding not handled", -1;
	}
}

/* One data page (v1 or v2) whose bytes (compressed as stored) are p[0, pg->csize). */
static int data_page(const struct pq_column *c, int codec, const struct pq_page *pg,
		     const uint8_t *p, struct pq_decoded *d, const char **why)
{
	struct levels lv = {.has_rep = c->max_rep > 0, .has_def = c->max_def > 0};
	size_t len = pg->usize, lvl = 0;
	uint64_t nvals = 0, nrows = 0, base = d->vals.len;
	struct pq_buf offs = {0};
	int rc;

	if (pg->type == PQ_PAGE_DATA_V2) {
		lvl = (size_t)pg->rep_len + pg->def_len;
		if (lvl > pg->csize || lvl > pg->usize)
			return *why = "level bytes exceed the page", -1;
	}
	d->page.len = 0;
	if (!pq_buf_reserve(&d->page, len))
		return *why = "out of memory", -1;
	memcpy(d->page.p, p, lvl);
	if (pq_decompress(pg->type == PQ_PAGE_DATA_V2 && !pg->compressed ? PQ_CODEC_NONE : codec,
			  p + lvl, pg->csize - lvl, d->page.p + lvl, len - lvl, why) < 0)
		return -1;
	p = d->page.p;
	if (pg->type == PQ_PAGE_DATA_V2) {
		rle_init(&lv.rep, p, pg->rep_len, pq_bit_width((uint32_t)c->max_rep));
		rle_init(&lv.def, p + pg->rep_len, pg->def_len, pq_bit_width((uint32_t)c->max_def));
		p += lvl;
		len -= lvl;
	} else if ((lv.has_rep && levels_v1(&lv.rep, pg->rep_enc, c->max_rep, &p, &len, why) < 0) ||
		   (lv.has_def && levels_v1(&lv.def, pg->def_enc, c->max_def, &p, &len, why) < 0)) {
		return -1;
	}
	if (walk_levels(c, &lv, pg->num_values, d, &nvals, &nrows, why) < 0)
		return -1;
	rc = page_values(c, pg, p, len, nvals, d, &offs, why);
	if (rc == 0 && rows_append(c, d, base, nrows, &offs, nvals) < 0)
		rc = -1, *why = "out of memory";
	pq_buf_free(&offs);
	return rc;
}

static int dict_page(const struct pq_column *c, int codec, const struct pq_page *pg,
		     const uint8_t *p, struct pq_decoded *d, const char **why)
{
	if (pg->encoding != PQ_ENC_PLAIN && pg->encoding != PQ_ENC_PLAIN_DICTIONARY)
		return *why = "dictionary page encoding not handled", -1;
	d->page.len = 0;
	if (!pq_buf_reserve(&d->page, pg->usize))
		return *why = "out of memory", -1;
	if (pq_decompress(codec, p, pg->csize, d->page.p, pg->usize, why) < 0)
		return -1;
	if (dict_load(c, d->page.p, pg->usize, pg->num_values, d) < 0)
		return *why = "dictionary values run past the page", -1;
	return 0;
}

void pq_decoded_reset(struct pq_decoded *d)
{
	d->vals.len = 0;
	d->nrows = 0;
	d->have_dict = false;
	d->ndict = 0;
}

void pq_decoded_free(struct pq_decoded *d)
{
	pq_buf_free(&d->vals);
	pq_buf_free(&d->dict);
	pq_buf_free(&d->page);
	pq_buf_free(&d->tmp);
	free(d->row_off);
	free(d->dict_off);
	memset(d, 0, sizeof(*d));
}

/* Entries a page may declare: beyond this it is refused (a page of 1 MiB holds far fewer). */
static bool page_plausible(const struct pq_page *pg)
{
	uint64_t most = (uint64_t)pg->usize * 64 + (1u << 20);

	return pg->usize <= PQ_PAGE_MAX && pg->num_values <= most;
}

static int chunk_page(const struct pq_column *col, const struct pq_chunk *ck,
		      const struct pq_page *pg, const uint8_t *p, struct pq_decoded *d,
		      uint64_t *seen, const char **why)
{
	if (!page_plausible(pg))
		return *why = "page declares more than feedbench reads (512 MiB, 64 values a byte)",
		       -1;
	if ((pg->type == PQ_PAGE_DATA || pg->type == PQ_PAGE_DATA_V2) &&
	    pg->encoding != PQ_ENC_PLAIN && pg->encoding != PQ_ENC_PLAIN_DICTIONARY &&
	    pg->encoding != PQ_ENC_RLE_DICTIONARY)
		return *why = pq_encoding_name(pg->encoding), 1;
	switch (pg->type) {
	case PQ_PAGE_DICT:
		return dict_page(col, ck->codec, pg, p, d, why);
	case PQ_PAGE_DATA:
	case PQ_PAGE_DATA_V2:
		*seen += pg->num_values;
		return data_page(col, ck->codec, pg, p, d, why);
	default:
		return 0; /* index pages: skipped */
	}
}

int pq_chunk_decode(const struct pq_column *col, const struct pq_chunk *ck, const uint8_t *buf,
		    size_t len, uint64_t nrows, struct pq_decoded *d, char *why, size_t whylen,
		    uint64_t *bad_off)
{
	size_t pos = 0;
	uint64_t seen = 0;
	const char *w = NULL;

	pq_decoded_reset(d);
	if (ck->codec != PQ_CODEC_NONE && ck->codec != PQ_CODEC_SNAPPY &&
	    ck->codec != PQ_CODEC_GZIP && ck->codec != PQ_CODEC_ZSTD) {
		snprintf(why, whylen, "compression %s not handled (none, snappy, gzip, zstd are)",
			 pq_codec_name(ck->codec));
		*bad_off = ck->start;
		return -1;
	}
	while (seen < ck->num_values && pos < len) {
		struct pq_rd r;
		struct pq_page pg;
		int rc;

		pq_rd_init(&r, buf + pos, len - pos, ck->start + pos);
		*bad_off = ck->start + pos;
		if (pq_page_parse(&r, &pg) < 0) {
			snprintf(why, whylen, "bad page header (%s)", r.why);
			return -1;
		}
		pos += (size_t)(r.p - r.start);
		if (pg.csize > len - pos) {
			snprintf(why, whylen, "page of %u bytes runs past its column chunk",
				 pg.csize);
			return -1;
		}
		rc = chunk_page(col, ck, &pg, buf + pos, d, &seen, &w);
		if (rc == 1) {
			snprintf(why, whylen,
				 "encoding %s not handled (PLAIN, PLAIN_DICTIONARY, "
				 "RLE_DICTIONARY are)",
				 w);
			return -1;
		}
		if (rc < 0) {
			snprintf(why, whylen, "%s", w ? w : "bad page");
			return -1;
		}
		pos += pg.csize;
	}
	*bad_off = ck->start + pos;
	if (d->nrows != nrows || seen != ck->num_values) {
		snprintf(why, whylen,
			 "column chunk holds %" PRIu64 " rows and %" PRIu64
			 " values, its row group %" PRIu64 " rows and %" PRIu64 " values",
			 d->nrows, seen, nrows, ck->num_values);
		return -1;
	}
	if (!d->row_off) {
		d->row_off = malloc(sizeof(*d->row_off));
		if (!d->row_off)
			return snprintf(why, whylen, "out of memory"), -1;
		d->cap_rows = 1;
	}
	d->row_off[d->nrows] = d->vals.len;
	return 0;
}

#endif
