/* parquet: samples as rows of named columns, the layout of the MLCommons DLIO fork's parquet
 * generator (a list of columns, each a dtype and a count of values per sample; a count above 1
 * is a LIST column, as pyarrow writes a fixed-size list), num_samples_per_file rows per file in
 * row groups of [format.parquet] row_group_size rows.
 *
 * A generated sample (header + payload) is cut into the columns in order: column k holds the
 * next size_k x width_k bytes of it (a binary column takes whatever the fixed columns leave,
 * so sizes may vary). Reading a row concatenates the columns read, which gives the sample back.
 *
 * Reading, as pyarrow's ParquetFile.read_row_group under DLIO's reader: start-up reads each
 * file's footer once per rank; the first sample asked of a row group reads that row group's
 * column chunks (only the columns in [format.parquet] read_columns) and decodes them; the
 * thread keeps that one decoded row group while its samples are asked for. Bytes counted are
 * the footer and the column chunks actually read.
 */
#include "format.h"
#include "parquet.h"
#include "sample.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "build_config.h"

static const char *const pq_globs[] = {".parquet", NULL};

#if FEEDBENCH_HAVE_PARQUET

#define PQ_WRITE_BUFFER (1u << 20)

/* file->meta: the footer and the columns read. */
struct pq_file {
	struct pq_meta m;
	uint32_t nsel;
	uint32_t *sel; /* column indices read, in schema order */
};

static int pq_codec_of(const struct run *run)
{
	static const int codecs[] = {PQ_CODEC_NONE, PQ_CODEC_SNAPPY, PQ_CODEC_ZSTD, PQ_CODEC_GZIP};

	return codecs[run->cfg.parquet.compression];
}

/* The generator's columns: [format.parquet] columns, else DLIO's default of one `data`
 * column (uint8 values, a sample's worth; binary when sizes vary). */
static int pq_columns(struct run *run, struct pq_wcol **cols, uint32_t *n)
{
	char spec[64], why[256];
	const char *s = run->cfg.parquet.columns;

	if (!*s) {
		if (run->ds.rec_stdev)
			snprintf(spec, sizeof(spec), "data:binary");
		else
			snprintf(spec, sizeof(spec), "data:uint8:%" PRIu64, run->ds.rec_mean);
		s = spec;
	}
	if (pq_wcols_parse(s, cols, n, why, sizeof(why)) < 0)
		return run_fail(run, -FB_ECONFIG, "[format.parquet] columns: %s", why);
	return 0;
}

/* ---- generation ------------------------------------------------------------------------- */

struct pq_gen {
	struct run *run;
	struct ds_file *file;
	struct io io;
	struct sfile *sf;
	struct pq_wcol *cols;
	uint32_t ncols, nbinary;
	uint64_t fixed; /* bytes of a row in the fixed-size columns */
	int codec;
	struct pq_buf rows; /* samples of the row group being gathered */
	uint64_t *lens;	    /* their lengths */
	uint64_t nrows, rg_rows;
	struct pq_wcol *chunks; /* per row group written: ncols entries each */
	uint64_t *rg_sizes;
	uint32_t nrg;
	struct pq_buf out, page, comp; /* bytes not yet written; one page; compressed */
	uint64_t off;		       /* file offset of out.p[0] */
};

static void pq_gen_free(struct pq_gen *g)
{
	pq_buf_free(&g->rows);
	pq_buf_free(&g->out);
	pq_buf_free(&g->page);
	pq_buf_free(&g->comp);
	free(g->lens);
	free(g->cols);
	free(g->chunks);
	free(g->rg_sizes);
	free(g);
}

static int pq_gen_flush(struct pq_gen *g)
{
	int rc = 0;

	if (g->out.len)
		rc = io_pwrite(&g->io, g->sf, g->out.p, g->out.len, g->off);
	g->off += g->out.len;
	g->out.len = 0;
	return rc;
}

static int pq_create(struct fgen **out, struct run *run, struct ds_file *file, unsigned flags)
{
	struct pq_gen *g = calloc(1, sizeof(*g));
	int rc;

	if (!g)
		return run_fail(run, -ENOMEM, "out of memory");
	g->run = run;
	g->file = file;
	g->io = (struct io){.run = run};
	g->codec = pq_codec_of(run);
	g->rg_rows = (uint64_t)run->cfg.parquet.row_group_size;
	rc = pq_columns(run, &g->cols, &g->ncols);
	for (uint32_t c = 0; rc == 0 && c < g->ncols; c++) {
		g->nbinary += g->cols[c].type == PQ_BYTE_ARRAY;
		g->fixed += g->cols[c].size * (uint64_t)g->cols[c].width;
	}
	if (rc == 0 && g->nbinary > 1)
		rc = run_fail(run, -FB_ECONFIG,
			      "[format.parquet] columns: at most one binary column (it takes the "
			      "bytes the others leave)");
	if (rc == 0 && !(g->lens = malloc(g->rg_rows * sizeof(*g->lens))))
		rc = run_fail(run, -ENOMEM, "out of memory");
	if (rc == 0)
		rc = io_open(&g->io, &g->sf, file->path, STORAGE_O_WRITE);
	if (rc < 0) {
		pq_gen_free(g);
		return rc;
	}
	pq_buf_put(&g->out, PQ_MAGIC, 4);
	*out = (struct fgen *)g;
	return 0;
}

/* One value of column c from the sample bytes at p, PLAIN-encoded into b. */
static void pq_put_values(struct pq_buf *b, const struct pq_wcol *c, const uint8_t *p, uint64_t n)
{
	if (c->type != PQ_INT32 || c->width == 4) {
		pq_buf_put(b, p, n * (uint64_t)c->width);
		return;
	}
	uint8_t *d = pq_buf_reserve(b, n * 4);

	if (!d)
		return;
	for (uint64_t i = 0; i < n; i++) {
		int32_t v;

		if (c->width == 1)
			v = c->is_signed ? (int8_t)p[i] : p[i];
		else
			v = c->is_signed ? (int16_t)(p[2 * i] | p[2 * i + 1] << 8)
					 : (p[2 * i] | p[2 * i + 1] << 8);
		memcpy(d + 4 * i, &v, 4); /* little endian hosts only (as the sample header) */
	}
	b->len += n * 4;
}

/* Where column c's bytes lie in row r of the gathered rows. */
static const uint8_t *pq_row_col(const struct pq_gen *g, uint64_t r, const uint64_t *starts,
				 uint32_t c, uint64_t *len)
{
	uint64_t at = starts[r];

	for (uint32_t k = 0; k < c; k++)
		at += g->cols[k].type == PQ_BYTE_ARRAY
			  ? g->lens[r] - g->fixed
			  : g->cols[k].size * (uint64_t)g->cols[k].width;
	*len = g->cols[c].type == PQ_BYTE_ARRAY ? g->lens[r] - g->fixed
						: g->cols[c].size * (uint64_t)g->cols[c].width;
	return g->rows.p + at;
}

/* Rows [r0, r1) of column c as one v1 data page: levels (RLE), PLAIN values, compressed. */
static int pq_write_page(struct pq_gen *g, struct pq_wcol *c, uint32_t ci, const uint64_t *starts,
			 uint64_t r0, uint64_t r1)
{
	struct pq_page pg = {.type = PQ_PAGE_DATA,
			     .encoding = PQ_ENC_PLAIN,
			     .def_enc = PQ_ENC_RLE,
			     .rep_enc = PQ_ENC_RLE};
	uint64_t per_row = c->list ? c->size : 1, nv = (r1 - r0) * per_row, at, hdr;
	uint32_t len;

	g->page.len = 0;
	if (c->list) { /* repetition: 0 starts a row, 1 continues its list */
		pq_buf_put(&g->page, "\0\0\0\0", 4);
		at = g->page.len;
		for (uint64_t r = r0; r < r1; r++) {
			pq_rle_put_run(&g->page, 1, 0, 1);
			pq_rle_put_run(&g->page, (uint32_t)(c->size - 1), 1, 1);
		}
		len = (uint32_t)(g->page.len - at);
		if (!g->page.err)
			memcpy(g->page.p + at - 4, &len, 4);
	}
	pq_buf_put(&g->page, "\0\0\0\0", 4); /* definition: every value present */
	at = g->page.len;
	pq_rle_put_run(&g->page, (uint32_t)nv, c->list ? 3 : 1, pq_bit_width(c->list ? 3 : 1));
	len = (uint32_t)(g->page.len - at);
	if (!g->page.err)
		memcpy(g->page.p + at - 4, &len, 4);
	for (uint64_t r = r0; r < r1; r++) {
		uint64_t n;
		const uint8_t *p = pq_row_col(g, r, starts, ci, &n);

		if (c->type == PQ_BYTE_ARRAY) {
			uint32_t l = (uint32_t)n;

			pq_buf_put(&g->page, &l, 4);
			pq_buf_put(&g->page, p, n);
		} else {
			pq_put_values(&g->page, c, p, c->size);
		}
	}
	g->comp.len = 0;
	if (g->page.err || g->page.len > INT32_MAX ||
	    pq_compress(g->codec, 0, g->page.p, g->page.len, &g->comp) < 0 ||
	    g->comp.len > INT32_MAX || nv > INT32_MAX)
		return run_fail(g->run, -ENOMEM,
				"parquet: cannot encode a page of column '%s' in '%s' (over 2 GiB "
				"or out of memory)",
				c->name, g->file->path);
	pg.usize = (uint32_t)g->page.len;
	pg.csize = (uint32_t)g->comp.len;
	pg.num_values = (uint32_t)nv;
	hdr = g->out.len;
	pq_write_page_header(&g->out, &pg);
	hdr = g->out.len - hdr;
	pq_buf_put(&g->out, g->comp.p, g->comp.len);
	c->usize += hdr + g->page.len;
	c->csize += hdr + g->comp.len;
	c->num_values += nv;
	if (g->out.err)
		return run_fail(g->run, -ENOMEM, "out of memory writing '%s'", g->file->path);
	return g->out.len >= PQ_WRITE_BUFFER ? pq_gen_flush(g) : 0;
}

/* The gathered rows as one row group: each column's pages of about page_size bytes. */
static int pq_write_row_group(struct pq_gen *g)
{
	uint64_t page = g->run->cfg.parquet.page_size, *starts;
	struct pq_wcol *ck;
	int rc = 0;

	ck = realloc(g->chunks, (uint64_t)(g->nrg + 1) * g->ncols * sizeof(*ck));
	uint64_t *sizes = realloc(g->rg_sizes, (g->nrg + 1) * sizeof(*sizes));

	if (ck)
		g->chunks = ck;
	if (sizes)
		g->rg_sizes = sizes;
	starts = malloc((g->nrows + 1) * sizeof(*starts));
	if (!ck || !sizes || !starts) {
		free(starts);
		return run_fail(g->run, -ENOMEM, "out of memory writing '%s'", g->file->path);
	}
	starts[0] = 0;
	for (uint64_t r = 0; r < g->nrows; r++)
		starts[r + 1] = starts[r] + g->lens[r];
	ck = &g->chunks[(uint64_t)g->nrg * g->ncols];
	for (uint32_t c = 0; c < g->ncols && rc == 0; c++) {
		uint64_t r0 = 0, bytes = 0;

		ck[c] = g->cols[c];
		ck[c].start = g->off + g->out.len;
		ck[c].usize = ck[c].csize = ck[c].num_values = 0;
		for (uint64_t r = 0; r < g->nrows && rc == 0; r++) {
			uint64_t n;

			pq_row_col(g, r, starts, c, &n);
			bytes += n;
			if (bytes >= page || r + 1 == g->nrows) {
				rc = pq_write_page(g, &ck[c], c, starts, r0, r + 1);
				r0 = r + 1;
				bytes = 0;
			}
		}
	}
	free(starts);
	g->rg_sizes[g->nrg++] = g->nrows;
	g->nrows = 0;
	g->rows.len = 0;
	return rc;
}

static int pq_append(struct fgen *fg, uint64_t index, const void *sample, size_t len)
{
	struct pq_gen *g = (struct pq_gen *)fg;

	if (g->nbinary ? len < g->fixed : len != g->fixed)
		return run_fail(g->run, -FB_ECONFIG,
				"parquet: sample %" PRIu64 " of '%s' is %zu bytes but the columns "
				"hold %s%" PRIu64 " a row ([format.parquet] columns: make them add "
				"up to record_length_bytes, or add a binary column)",
				index, g->file->path, len, g->nbinary ? "at least " : "", g->fixed);
	g->lens[g->nrows++] = len;
	pq_buf_put(&g->rows, sample, len);
	if (g->rows.err)
		return run_fail(g->run, -ENOMEM, "out of memory writing '%s'", g->file->path);
	return g->nrows == g->rg_rows ? pq_write_row_group(g) : 0;
}

static int pq_finish(struct fgen *fg)
{
	struct pq_gen *g = (struct pq_gen *)fg;
	char by[64];
	uint32_t flen;
	int rc = 0, crc;

	if (g->nrows)
		rc = pq_write_row_group(g);
	if (rc == 0) {
		uint64_t at = g->out.len;

		snprintf(by, sizeof(by), "feedbench version %s", FEEDBENCH_VERSION);
		pq_write_footer(&g->out, g->cols, g->ncols, g->rg_sizes, g->nrg, g->chunks,
				g->codec, by);
		flen = (uint32_t)(g->out.len - at);
		pq_buf_put(&g->out, &flen, 4);
		pq_buf_put(&g->out, PQ_MAGIC, 4);
		rc = g->out.err ? run_fail(g->run, -ENOMEM, "out of memory") : pq_gen_flush(g);
	}
	if (rc == 0)
		rc = io_sync(&g->io, g->sf);
	crc = io_close(&g->io, g->sf);
	if (rc == 0)
		rc = crc;
	pq_gen_free(g);
	return rc;
}

/* ---- the footer --------------------------------------------------------------------------- */

static int pq_bad(struct run *run, const char *path, uint64_t off, const char *why)
{
	return run_fail(run, -FB_EFORMAT, "bad parquet file '%s': %s at offset %" PRIu64, path, why,
			off);
}

/* Reads and parses the footer of an open file of `size` bytes. */
static int pq_footer_read(struct run *run, struct io *io, struct sfile *sf, const char *path,
			  uint64_t size, struct pq_meta *m)
{
	uint8_t tail[8], head[4];
	uint8_t *buf;
	uint64_t flen, bad = 0;
	char why[300];
	int rc;

	if (size < 12)
		return pq_bad(run, path, 0, "shorter than the 12 bytes of an empty file");
	rc = io_pread(io, sf, head, 4, 0);
	if (rc == 0)
		rc = io_pread(io, sf, tail, 8, size - 8);
	if (rc < 0)
		return rc;
	if (memcmp(head, PQ_MAGIC, 4) != 0)
		return pq_bad(run, path, 0, "no PAR1 magic at the start");
	if (memcmp(tail + 4, PQ_MAGIC, 4) != 0)
		return pq_bad(run, path, size - 4, "no PAR1 magic at the end (truncated file?)");
	flen = (uint64_t)tail[0] | (uint64_t)tail[1] << 8 | (uint64_t)tail[2] << 16 |
	       (uint64_t)tail[3] << 24;
	if (flen > size - 12 || flen > PQ_FOOTER_MAX)
		return pq_bad(run, path, size - 8, "footer length beyond the file");
	buf = malloc(flen ? flen : 1);
	if (!buf)
		return run_fail(run, -ENOMEM, "out of memory reading '%s'", path);
	rc = io_pread(io, sf, buf, flen, size - 8 - flen);
	if (rc == 0 && pq_meta_parse(buf, flen, size - 8 - flen, size - 8 - flen, m, why,
				     sizeof(why), &bad) < 0)
		rc = pq_bad(run, path, bad, why);
	free(buf);
	return rc;
}

/* The columns read: [format.parquet] read_columns (names), else all. */
static int pq_select(struct run *run, const char *path, struct pq_file *pf)
{
	const struct pq_meta *m = &pf->m;
	const char *want = run->cfg.parquet.read_columns;
	char *copy, *save = NULL, *tok;
	int rc = 0;

	pf->sel = calloc(m->ncols, sizeof(*pf->sel));
	if (!pf->sel)
		return run_fail(run, -ENOMEM, "out of memory");
	if (!*want) {
		for (uint32_t c = 0; c < m->ncols; c++)
			pf->sel[pf->nsel++] = c;
		return 0;
	}
	bool *on = calloc(m->ncols, sizeof(*on));

	copy = strdup(want);
	if (!on || !copy) {
		free(on);
		free(copy);
		return run_fail(run, -ENOMEM, "out of memory");
	}
	for (tok = strtok_r(copy, ", ", &save); tok && rc == 0; tok = strtok_r(NULL, ", ", &save)) {
		uint32_t c = 0;

		while (c < m->ncols && strcmp(m->cols[c].name, tok) != 0)
			c++;
		if (c == m->ncols)
			rc = run_fail(run, -FB_EDATASET,
				      "[format.parquet] read_columns: '%s' has no column '%s'",
				      path, tok);
		else
			on[c] = true;
	}
	for (uint32_t c = 0; c < m->ncols; c++)
		if (on[c])
			pf->sel[pf->nsel++] = c;
	free(on);
	free(copy);
	return rc;
}

static void pq_file_free(struct pq_file *pf)
{
	if (!pf)
		return;
	pq_meta_free(&pf->m);
	free(pf->sel);
	free(pf);
}

static int pq_file_load(struct run *run, const char *path, struct pq_file **out)
{
	struct pq_file *pf = calloc(1, sizeof(*pf));
	struct io io = {.run = run};
	struct sfile *sf;
	uint64_t size;
	int rc, crc;

	if (!pf)
		return run_fail(run, -ENOMEM, "out of memory");
	rc = io_open(&io, &sf, path, STORAGE_O_READ);
	if (rc < 0) {
		free(pf);
		return rc;
	}
	rc = io_size(&io, sf, &size);
	if (rc == 0)
		rc = pq_footer_read(run, &io, sf, path, size, &pf->m);
	crc = io_close(&io, sf);
	if (rc == 0)
		rc = crc;
	if (rc == 0)
		rc = pq_select(run, path, pf);
	if (rc < 0) {
		pq_file_free(pf);
		return rc;
	}
	*out = pf;
	return 0;
}

static int pq_index(struct run *run, struct ds_file *file)
{
	struct pq_file *pf;
	int rc = pq_file_load(run, file->path, &pf);

	if (rc < 0)
		return rc;
	if (pf->m.num_rows != file->nsamples)
		rc = run_fail(run, -FB_EDATASET,
			      "parquet: '%s' holds %" PRIu64 " rows, expected %" PRIu64, file->path,
			      pf->m.num_rows, file->nsamples);
	else if (run->ds.generated && run->cfg.dataset.verify && pf->nsel != pf->m.ncols)
		rc = run_fail(run, -FB_ECONFIG,
			      "[format.parquet] read_columns leaves columns of '%s' unread, so "
			      "samples cannot be verified: set [dataset] verify = false",
			      file->path);
	if (rc < 0) {
		pq_file_free(pf);
		return rc;
	}
	file->meta = pf;
	return 0;
}

static void pq_unindex(struct ds_file *file)
{
	pq_file_free(file->meta);
	file->meta = NULL;
}

/* ---- reading ---------------------------------------------------------------------------- */

struct pq_reader {
	struct freader_file b;	/* first: freader_file_open() */
	int64_t rg;		/* row group decoded, -1 none */
	struct pq_decoded *dec; /* one per column read */
	struct pq_buf chunk;	/* a column chunk as read */
};

static int pq_open(struct freader **out, struct run *run, struct ds_file *file, struct io *io)
{
	const struct pq_file *pf = file->meta;
	struct pq_reader *r;
	int rc;

	if (!pf)
		return run_fail(run, -FB_EINTERNAL, "parquet: '%s' read before it was indexed",
				file->path);
	rc = freader_file_open(sizeof(*r), run, file, io, (void **)&r);
	if (rc < 0)
		return rc;
	r->rg = -1;
	r->dec = calloc(pf->nsel ? pf->nsel : 1, sizeof(*r->dec));
	if (!r->dec) {
		freader_file_close(&r->b);
		free(r);
		return run_fail(run, -ENOMEM, "out of memory");
	}
	*out = (struct freader *)r;
	return 0;
}

static uint32_t pq_rg_of(const struct pq_meta *m, uint64_t row)
{
	uint32_t lo = 0, hi = m->nrg;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->rg_first[mid] <= row)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Reads and decodes one column chunk (through the reader's io: counted, timed). */
static int pq_chunk_load(struct run *run, struct io *io, struct sfile *sf, const char *path,
			 const struct pq_meta *m, uint32_t g, uint32_t c, struct pq_buf *chunk,
			 struct pq_decoded *d)
{
	const struct pq_chunk *ck = &m->chunks[(uint64_t)g * m->ncols + c];
	uint64_t bad = 0;
	char why[300];
	int rc;

	chunk->len = 0;
	if (!pq_buf_reserve(chunk, ck->size))
		return run_fail(run, -ENOMEM, "out of memory reading '%s'", path);
	rc = io_pread(io, sf, chunk->p, ck->size, ck->start);
	if (rc < 0)
		return rc;
	if (pq_chunk_decode(&m->cols[c], ck, chunk->p, ck->size,
			    m->rg_first[g + 1] - m->rg_first[g], d, why, sizeof(why), &bad) < 0)
		return run_fail(run, -FB_EFORMAT,
				"bad parquet file '%s': %s (column '%s', row group %u) at offset "
				"%" PRIu64,
				path, why, m->cols[c].name, g, bad);
	return 0;
}

static int pq_read_sample(struct freader *fr, uint64_t index, void *buf, size_t cap, size_t *len)
{
	struct pq_reader *r = (struct pq_reader *)fr;
	const struct pq_file *pf = r->b.file->meta;
	uint32_t g = pq_rg_of(&pf->m, index);
	uint64_t row = index - pf->m.rg_first[g], at = 0;
	int rc;

	if (index >= pf->m.num_rows)
		return run_fail(r->b.run, -FB_EINTERNAL, "parquet: no row %" PRIu64 " in '%s'",
				index, r->b.file->path);
	if (r->rg != (int64_t)g) {
		r->rg = -1;
		for (uint32_t k = 0; k < pf->nsel; k++) {
			rc = pq_chunk_load(r->b.run, r->b.io, r->b.sf, r->b.file->path, &pf->m, g,
					   pf->sel[k], &r->chunk, &r->dec[k]);
			if (rc < 0)
				return rc;
		}
		r->rg = g;
	}
	for (uint32_t k = 0; k < pf->nsel; k++) {
		const struct pq_decoded *d = &r->dec[k];
		uint64_t n = d->row_off[row + 1] - d->row_off[row];

		if (n > cap - at)
			return run_fail(r->b.run, -FB_EFORMAT,
					"parquet: row %" PRIu64 " of '%s' holds more than the %zu "
					"bytes expected",
					index, r->b.file->path, cap);
		memcpy((uint8_t *)buf + at, d->vals.p + d->row_off[row], n);
		at += n;
	}
	*len = at;
	return 0;
}

static int pq_close(struct freader *fr)
{
	struct pq_reader *r = (struct pq_reader *)fr;
	const struct pq_file *pf = r->b.file->meta;
	int rc = freader_file_close(&r->b);

	for (uint32_t k = 0; pf && k < pf->nsel; k++)
		pq_decoded_free(&r->dec[k]);
	free(r->dec);
	pq_buf_free(&r->chunk);
	free(r);
	return rc;
}

/* ---- bring your own data ------------------------------------------------------------------ */

/* Row sizes of one row group (the columns read, decoded) added to info. */
static int pq_probe_group(struct run *run, struct io *io, struct sfile *sf, const char *path,
			  const struct pq_file *pf, uint32_t g, struct pq_buf *chunk,
			  struct pq_decoded *d, uint64_t *sizes)
{
	uint64_t rows = pf->m.rg_first[g + 1] - pf->m.rg_first[g];

	memset(sizes, 0, rows * sizeof(*sizes));
	for (uint32_t k = 0; k < pf->nsel; k++) {
		int rc = pq_chunk_load(run, io, sf, path, &pf->m, g, pf->sel[k], chunk, d);

		if (rc < 0)
			return rc;
		for (uint64_t r = 0; r < rows; r++)
			sizes[r] += d->row_off[r + 1] - d->row_off[r];
	}
	return 0;
}

static int pq_probe_rows(struct run *run, const char *path, const struct pq_file *pf,
			 struct probe_info *info)
{
	struct io io = {.run = run};
	struct pq_decoded d = {0};
	struct pq_buf chunk = {0};
	struct sfile *sf = NULL;
	uint64_t most = 0, *sizes = NULL;
	int rc, crc;

	for (uint32_t g = 0; g < pf->m.nrg; g++)
		if (pf->m.rg_first[g + 1] - pf->m.rg_first[g] > most)
			most = pf->m.rg_first[g + 1] - pf->m.rg_first[g];
	if (most > PQ_DECODED_MAX / 8 || !(sizes = malloc((most ? most : 1) * sizeof(*sizes))))
		return run_fail(run, -ENOMEM, "out of memory probing '%s'", path);
	rc = io_open(&io, &sf, path, STORAGE_O_READ);
	for (uint32_t g = 0; rc == 0 && g < pf->m.nrg; g++) {
		rc = pq_probe_group(run, &io, sf, path, pf, g, &chunk, &d, sizes);
		for (uint64_t r = 0; rc == 0 && r < pf->m.rg_first[g + 1] - pf->m.rg_first[g];
		     r++) {
			info->data_bytes += sizes[r];
			if (sizes[r] > info->max_sample)
				info->max_sample = sizes[r];
		}
	}
	if (sf) {
		crc = io_close(&io, sf);
		if (rc == 0)
			rc = crc;
	}
	pq_decoded_free(&d);
	pq_buf_free(&chunk);
	free(sizes);
	return rc;
}

/* Reads the footer and decodes every row group once: a row's size depends on its lists and
 * byte arrays, known only from the data. */
static int pq_probe(struct run *run, const char *path, struct probe_info *info)
{
	struct pq_file *pf;
	int rc = pq_file_load(run, path, &pf);
	size_t at;

	if (rc < 0)
		return rc;
	memset(info, 0, sizeof(*info));
	info->nsamples = pf->m.num_rows;
	rc = pq_probe_rows(run, path, pf, info);
	if (rc == 0) {
		at = (size_t)snprintf(info->detail, sizeof(info->detail),
				      "parquet: %" PRIu64 " rows in %u row groups, columns",
				      pf->m.num_rows, pf->m.nrg);
		for (uint32_t k = 0; k < pf->nsel && at < sizeof(info->detail); k++)
			at += (size_t)snprintf(info->detail + at, sizeof(info->detail) - at, "%s%s",
					       k ? ", " : " ", pf->m.cols[pf->sel[k]].name);
	}
	pq_file_free(pf);
	return rc;
}

const struct format_ops parquet_format = {
    .version = FORMAT_OPS_VERSION,
    .name = "parquet",
    .ext = ".parquet",
    .globs = pq_globs,
    .caps = FORMAT_CAP_SHARED,
    .create = pq_create,
    .append = pq_append,
    .finish = pq_finish,
    .index = pq_index,
    .unindex = pq_unindex,
    .open = pq_open,
    .read_sample = pq_read_sample,
    .close = pq_close,
    .probe = pq_probe,
};

#else

/* Listed as not built: format_find() skips it, and the config check says why. */
const struct format_ops parquet_format = {
    .version = FORMAT_OPS_VERSION,
    .name = "parquet",
    .ext = ".parquet",
    .globs = pq_globs,
    .not_built = FEEDBENCH_PARQUET_WHY,
};

#endif
