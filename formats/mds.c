/* mds: MosaicML Streaming's MDS shards (format version 2), one shard per dataset file.
 *
 * A shard (as Streaming's MDSWriter lays it out): uint32 sample count n, n + 1 uint32 absolute
 * offsets, the shard's config as JSON (column_names, column_encodings, column_sizes, ...), then
 * the samples; a sample is the uint32 sizes of its variable-size columns followed by each
 * column's bytes, columns sorted by name. The 32-bit offsets cap a shard below 4 GiB.
 *
 * feedbench writes two columns: `data` (bytes: the whole sample, header included) and `label`
 * (int: the sample's global number, int64), and an index.json beside the shards listing them
 * (written by the rank that generates the first shard: every shard's size follows from the
 * config). A read is one pread of the sample's byte range (offsets read once per shard and rank
 * at start-up); the sample returned is the first `bytes` column, else every column's bytes in
 * order. Samples are byte ranges within a shard: ranks may share shards.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "format.h"
#include "sample.h"
#include "../bench/errors.h"
#include "../bench/run.h"
#include "../bench/storage/storage.h"

#define MDS_MAX_COLS	256
#define MDS_SIZE_LIMIT	(1u << 26) /* MDSWriter's default size_limit, recorded in the config */
#define MDS_HEAD_READ	65536
#define MDS_LABEL_BYTES 8

static const char mds_config[] =
    "{\"column_encodings\": [\"bytes\", \"int\"], \"column_names\": [\"data\", \"label\"], "
    "\"column_sizes\": [null, 8], \"compression\": null, \"format\": \"mds\", \"hashes\": [], "
    "\"size_limit\": 67108864, \"version\": 2}";

/* A shard's header: offsets and columns. */
struct mds_meta {
	uint32_t n;
	uint32_t *off; /* n + 1 */
	int ncols;
	int64_t size[MDS_MAX_COLS]; /* bytes of a fixed-size column; -1: variable */
	int nvar;
	int data_col; /* the first `bytes` column, or -1 */
};

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* ---- header --------------------------------------------------------------------------- */

static int mds_columns(struct run *run, const char *path, const char *cfg, size_t len,
		       struct mds_meta *m, uint64_t at)
{
	json_error_t jerr;
	json_t *root = json_loadb(cfg, len, 0, &jerr), *enc, *sizes;
	int rc = 0;

	enc = json_object_get(root, "column_encodings");
	sizes = json_object_get(root, "column_sizes");
	if (!root || !json_is_array(enc) || !json_is_array(sizes) ||
	    json_array_size(enc) != json_array_size(sizes) || json_array_size(enc) == 0 ||
	    json_array_size(enc) > MDS_MAX_COLS) {
		rc = run_fail(
		    run, -FB_EFORMAT,
		    "bad mds shard '%s': its config at offset %" PRIu64
		    " is not JSON with column_encodings and column_sizes of one length (%s)",
		    path, at, root ? "columns" : jerr.text);
		goto out;
	}
	m->ncols = (int)json_array_size(enc);
	m->nvar = 0;
	m->data_col = -1;
	for (int i = 0; i < m->ncols; i++) {
		json_t *s = json_array_get(sizes, (size_t)i);
		const char *e = json_string_value(json_array_get(enc, (size_t)i));
		if (json_is_integer(s) && json_integer_value(s) >= 0) {
			m->size[i] = json_integer_value(s);
		} else {
			m->size[i] = -1;
			m->nvar++;
		}
		if (m->data_col < 0 && e && strcmp(e, "bytes") == 0 && m->size[i] < 0)
			m->data_col = i;
	}
out:
	json_decref(root);
	return rc;
}

/* Reads and checks a shard's header through io. */
static int mds_header(struct run *run, struct io *io, struct sfile *f, const char *path,
		      struct mds_meta *m, uint64_t *max_row, uint64_t *rows)
{
	unsigned char *h = NULL;
	uint64_t size, hlen;
	size_t got = 0;
	int rc = io_size(io, f, &size);

	memset(m, 0, sizeof(*m));
	if (rc)
		return rc;
	if (size < 8)
		return run_fail(run, -FB_EFORMAT,
				"bad mds shard '%s': %" PRIu64 " bytes, too short for a header at "
				"offset 0",
				path, size);
	h = malloc(MDS_HEAD_READ);
	if (!h)
		return run_fail(run, -ENOMEM, "out of memory reading '%s'", path);
	rc = io_pread_upto(io, f, h, MDS_HEAD_READ, 0, &got);
	if (rc)
		goto out;
	m->n = get32(h);
	hlen = 4 + 4 * ((uint64_t)m->n + 1);
	if (hlen > size) {
		rc = run_fail(run, -FB_EFORMAT,
			      "bad mds shard '%s': %" PRIu32 " samples need %" PRIu64
			      " bytes of offsets, the file has %" PRIu64 " (at offset 0)",
			      path, m->n, hlen, size);
		goto out;
	}
	m->off = malloc(4 * ((size_t)m->n + 1));
	if (!m->off) {
		rc = run_fail(run, -ENOMEM, "out of memory reading '%s'", path);
		goto out;
	}
	if (hlen <= got)
		memcpy(m->off, h + 4, hlen - 4);
	else
		rc = io_pread(io, f, m->off, hlen - 4, 4);
	if (rc)
		goto out;
	*max_row = *rows = 0;
	for (uint32_t i = 0; i <= m->n; i++) {
		uint32_t o = m->off[i];
		if (o < hlen || o > size || (i > 0 && o < m->off[i - 1])) {
			rc = run_fail(run, -FB_EFORMAT,
				      "bad mds shard '%s': offset %" PRIu32 " of sample %" PRIu32
				      " (at offset %" PRIu64 ") is outside [%" PRIu64 ", %" PRIu64
				      "] or before the previous one",
				      path, o, i, 4 + 4 * (uint64_t)i, hlen, size);
			goto out;
		}
		if (i > 0 && o - m->off[i - 1] > *max_row)
			*max_row = o - m->off[i - 1];
	}
	*rows = m->off[m->n] - m->off[0];
	/* the config: from the end of the offsets to the first sample */
	{
		size_t clen = m->off[0] - hlen;
		char *cfg = malloc(clen ? clen : 1);
		if (!cfg) {
			rc = run_fail(run, -ENOMEM, "out of memory reading '%s'", path);
			goto out;
		}
		rc = io_pread(io, f, cfg, clen, hlen);
		if (rc == 0)
			rc = mds_columns(run, path, cfg, clen, m, hlen);
		free(cfg);
	}
out:
	free(h);
	if (rc) {
		free(m->off);
		m->off = NULL;
	}
	return rc;
}

static int mds_index(struct run *run, struct ds_file *file)
{
	struct io io = {.run = run};
	struct mds_meta *m = calloc(1, sizeof(*m));
	struct sfile *f;
	uint64_t max_row, rows;
	int rc, rc2;

	if (!m)
		return run_fail(run, -ENOMEM, "out of memory indexing '%s'", file->path);
	rc = io_open(&io, &f, file->path, STORAGE_O_READ);
	if (rc) {
		free(m);
		return rc;
	}
	rc = mds_header(run, &io, f, file->path, m, &max_row, &rows);
	rc2 = io_close(&io, f);
	if (rc == 0 && m->n != file->nsamples)
		rc = run_fail(run, -FB_EFORMAT,
			      "bad mds shard '%s': %" PRIu32
			      " samples in its header, expected %" PRIu64,
			      file->path, m->n, file->nsamples);
	if (rc || rc2) {
		free(m->off);
		free(m);
		return rc ? rc : rc2;
	}
	file->meta = m;
	return 0;
}

static void mds_unindex(struct ds_file *file)
{
	struct mds_meta *m = file->meta;

	if (m)
		free(m->off);
	free(m);
	file->meta = NULL;
}

static int mds_probe(struct run *run, const char *path, struct probe_info *info)
{
	struct io io = {.run = run};
	struct mds_meta m;
	struct sfile *f;
	uint64_t max_row = 0, rows = 0;
	int rc, rc2;

	rc = io_open(&io, &f, path, STORAGE_O_READ);
	if (rc)
		return rc;
	rc = mds_header(run, &io, f, path, &m, &max_row, &rows);
	rc2 = io_close(&io, f);
	if (rc || rc2)
		return rc ? rc : rc2;
	free(m.off);
	info->nsamples = m.n;
	info->max_sample = max_row; /* a sample is at most its row */
	info->data_bytes = rows;
	snprintf(info->detail, sizeof(info->detail), "mds v2, %" PRIu32 " samples, %d columns%s",
		 m.n, m.ncols, m.data_col >= 0 ? "" : " (no bytes column: all columns returned)");
	return 0;
}

/* ---- reading -------------------------------------------------------------------------- */

struct freader {
	struct freader_file b;
	unsigned char *row;
	size_t cap;
};

static int mds_open(struct freader **rp, struct run *run, struct ds_file *file, struct io *io)
{
	return freader_file_open(sizeof(struct freader), run, file, io, (void **)rp);
}

/* The sample of one row: the data column, or every column's bytes in order. */
static int mds_unpack(struct freader *r, uint64_t index, size_t rlen, void *buf, size_t cap,
		      size_t *len)
{
	const struct mds_meta *m = r->b.file->meta;
	const unsigned char *p = r->row;
	uint64_t pos = 4 * (uint64_t)m->nvar, out = 0;
	int v = 0;

	if (pos > rlen)
		goto bad;
	for (int c = 0; c < m->ncols; c++) {
		uint64_t n = m->size[c] >= 0 ? (uint64_t)m->size[c] : get32(p + 4 * v++);
		if (n > rlen - pos)
			goto bad;
		if (m->data_col < 0 || c == m->data_col) {
			if (n > cap - out)
				return run_fail(r->b.run, -FB_EDATASET,
						"mds sample %" PRIu64
						" of '%s' exceeds the %zu-byte "
						"sample buffer",
						index, r->b.file->path, cap);
			memcpy((char *)buf + out, p + pos, n);
			out += n;
		}
		pos += n;
	}
	*len = out;
	return 0;
bad:
	return run_fail(r->b.run, -FB_EFORMAT,
			"bad mds shard '%s': sample %" PRIu64 " at offset %" PRIu32
			": its column sizes run past its %zu bytes",
			r->b.file->path, index, m->off[index], rlen);
}

static int mds_read_sample(struct freader *r, uint64_t index, void *buf, size_t cap, size_t *len)
{
	const struct mds_meta *m = r->b.file->meta;
	size_t rlen;
	int rc;

	if (!m || index >= m->n)
		return run_fail(r->b.run, -FB_EINTERNAL,
				"mds sample %" PRIu64 " of '%s' not indexed", index,
				r->b.file->path);
	rlen = m->off[index + 1] - m->off[index];
	if (rlen > r->cap) {
		unsigned char *p = realloc(r->row, rlen);
		if (!p)
			return run_fail(r->b.run, -ENOMEM, "out of memory reading '%s'",
					r->b.file->path);
		r->row = p;
		r->cap = rlen;
	}
	rc = io_pread(r->b.io, r->b.sf, r->row, rlen, m->off[index]);
	if (rc)
		return rc;
	return mds_unpack(r, index, rlen, buf, cap, len);
}

static int mds_close(struct freader *r)
{
	int rc = freader_file_close(&r->b);

	free(r->row);
	free(r);
	return rc;
}

/* ---- generation ----------------------------------------------------------------------- */

struct fgen {
	struct run *run;
	struct ds_file *file;
	struct io io;
	struct sfile *f;
	unsigned char *buf; /* rows gathered into writes of up to 1 MiB */
	size_t used, cap;
	uint64_t at, next; /* file offset of buf, next sample expected */
};

/* Bytes of shard i of the generated dataset; its header length in *hlen. */
static uint64_t mds_shard_bytes(const struct run *run, uint32_t i, uint64_t *hlen)
{
	uint64_t n = dataset_file_samples(&run->ds, i), total;

	*hlen = 4 + 4 * (n + 1) + (sizeof(mds_config) - 1);
	total = *hlen;
	for (uint64_t k = 0; k < n; k++)
		total += 4 + dataset_sample_size(&run->ds, i, k) + MDS_LABEL_BYTES;
	return total;
}

static int mds_flush(struct fgen *g)
{
	int rc = g->used ? io_pwrite(&g->io, g->f, g->buf, g->used, g->at) : 0;

	g->at += g->used;
	g->used = 0;
	return rc;
}

static int mds_put(struct fgen *g, const void *p, size_t n)
{
	int rc = 0;

	if (g->used + n > g->cap)
		rc = mds_flush(g);
	if (rc == 0 && n >= g->cap) {
		rc = io_pwrite(&g->io, g->f, p, n, g->at);
		g->at += n;
		return rc;
	}
	if (rc == 0) {
		memcpy(g->buf + g->used, p, n);
		g->used += n;
	}
	return rc;
}

/* index.json beside the shards, as MDSWriter writes it: every shard's columns, sizes and
 * sample count. Written by the rank generating shard 0. */
static int mds_write_index(struct run *run, const char *shard0)
{
	json_t *root = json_object(), *shards = json_array();
	char path[4096], name[4096], *text = NULL;
	const char *slash = strrchr(shard0, '/');
	struct io io = {.run = run};
	struct sfile *f;
	int rc;

	for (uint32_t i = 0; i < run->ds.nfiles; i++) {
		json_t *s = json_loads(mds_config, 0, NULL), *raw = json_object();
		uint64_t hlen;
		const char *p = dataset_path(&run->ds, i, name, sizeof(name)), *b;
		if (!s || !p) {
			json_decref(s);
			json_decref(raw);
			json_decref(root);
			json_decref(shards);
			return run_fail(run, -FB_EINTERNAL, "mds index: shard %" PRIu32 " unknown",
					i);
		}
		b = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
		json_object_set_new(raw, "basename", json_string(b));
		json_object_set_new(raw, "bytes",
				    json_integer((json_int_t)mds_shard_bytes(run, i, &hlen)));
		json_object_set_new(raw, "hashes", json_object());
		json_object_set_new(s, "raw_data", raw);
		json_object_set_new(s, "samples",
				    json_integer((json_int_t)dataset_file_samples(&run->ds, i)));
		json_object_set_new(s, "zip_data", json_null());
		json_array_append_new(shards, s);
	}
	json_object_set_new(root, "shards", shards);
	json_object_set_new(root, "version", json_integer(2));
	text = json_dumps(root, JSON_SORT_KEYS);
	json_decref(root);
	if (!text)
		return run_fail(run, -ENOMEM, "out of memory writing the mds index");
	snprintf(path, sizeof(path), "%.*s/index.json", slash ? (int)(slash - shard0) : 1,
		 slash ? shard0 : ".");
	rc = io_open(&io, &f, path, STORAGE_O_WRITE);
	if (rc == 0) {
		rc = io_pwrite(&io, f, text, strlen(text), 0);
		int rc2 = io_sync(&io, f), rc3 = io_close(&io, f);
		rc = rc ? rc : rc2 ? rc2 : rc3;
	}
	free(text);
	return rc;
}

static int mds_create(struct fgen **gp, struct run *run, struct ds_file *file, unsigned flags)
{
	uint64_t hlen, total = mds_shard_bytes(run, file->index, &hlen), off;
	struct fgen *g;
	unsigned char *h;
	int rc;

	if (total > UINT32_MAX)
		return run_fail(
		    run, -FB_ECONFIG,
		    "mds shard '%s' would be %" PRIu64
		    " bytes: MDS addresses a shard with 32-bit offsets (at most 4 GiB - 1); "
		    "use fewer num_samples_per_file or smaller samples",
		    file->path, total);
	if (file->index == 0 && (rc = mds_write_index(run, file->path)))
		return rc;
	g = calloc(1, sizeof(*g));
	h = malloc(hlen);
	if (!g || !h) {
		free(g);
		free(h);
		return run_fail(run, -ENOMEM, "cannot allocate mds writer for '%s'", file->path);
	}
	g->run = run;
	g->file = file;
	g->cap = 1 << 20;
	g->buf = malloc(g->cap);
	g->io = (struct io){.run = run, .transfer = run->cfg.storage.transfer_size};
	put32(h, (uint32_t)file->nsamples);
	off = hlen;
	for (uint64_t k = 0; k <= file->nsamples; k++) {
		put32(h + 4 + 4 * k, (uint32_t)off);
		if (k < file->nsamples)
			off += 4 + dataset_sample_size(&run->ds, file->index, k) + MDS_LABEL_BYTES;
	}
	memcpy(h + 4 + 4 * (file->nsamples + 1), mds_config, sizeof(mds_config) - 1);
	rc = g->buf ? io_open(&g->io, &g->f, file->path, STORAGE_O_WRITE) : -ENOMEM;
	if (rc == 0)
		rc = mds_put(g, h, hlen);
	free(h);
	if (rc) {
		if (g->f)
			io_close(&g->io, g->f);
		free(g->buf);
		free(g);
		return rc == -ENOMEM ? run_fail(run, rc, "out of memory writing '%s'", file->path)
				     : rc;
	}
	*gp = g;
	return 0;
}

static int mds_append(struct fgen *g, uint64_t index, const void *sample, size_t len)
{
	unsigned char size[4];
	int64_t label = (int64_t)(g->file->first + index);
	int rc;

	if (index != g->next || len > UINT32_MAX)
		return run_fail(g->run, -FB_EINTERNAL,
				"mds shard '%s': sample %" PRIu64 " out of order", g->file->path,
				index);
	g->next++;
	put32(size, (uint32_t)len);
	rc = mds_put(g, size, 4);
	if (rc == 0)
		rc = mds_put(g, sample, len);
	if (rc == 0)
		rc = mds_put(g, &label, MDS_LABEL_BYTES);
	return rc;
}

static int mds_finish(struct fgen *g)
{
	int rc = mds_flush(g), rc2, rc3;

	if (rc == 0 && g->next != g->file->nsamples)
		rc =
		    run_fail(g->run, -FB_EINTERNAL,
			     "mds shard '%s' finished after %" PRIu64 " of its %" PRIu64 " samples",
			     g->file->path, g->next, g->file->nsamples);
	rc2 = io_sync(&g->io, g->f);
	rc3 = io_close(&g->io, g->f);
	free(g->buf);
	free(g);
	return rc ? rc : rc2 ? rc2 : rc3;
}

static const char *const mds_globs[] = {".mds", NULL};

const struct format_ops mds_format = {
    .version = FORMAT_OPS_VERSION,
    .name = "mds",
    .ext = ".mds",
    .globs = mds_globs,
    .caps = FORMAT_CAP_SHARED,
    .create = mds_create,
    .append = mds_append,
    .finish = mds_finish,
    .index = mds_index,
    .unindex = mds_unindex,
    .open = mds_open,
    .read_sample = mds_read_sample,
    .close = mds_close,
    .probe = mds_probe,
};
