/* zarr: each dataset file is a Zarr array (a folder "zarr-0-of-8.zarr"), uint8 of shape
 * (samples, record_length_bytes), chunked along the sample axis: [format.zarr] chunk_samples
 * samples a chunk, each chunk one file (v2 "i.0", v3 "c/i/0": the metadata-heavy case, one
 * open per chunk), or with version 3 and shard_chunks > 0 the sharding codec: that many chunks
 * in one file, its index at the end. Codecs: none, blosc, zstd, gzip (Debian's libblosc, libzstd,
 * zlib), and for version 3 crc32c.
 *
 * Reading a sample reads its chunk (open, size, one read, close; sharded: the shard's index once
 * while the thread stays in that shard, then one read of the inner chunk), decodes it and keeps
 * it while the thread's samples fall in it, as zarr-python's chunk reads do.
 */
#include "format.h"
#include "sample.h"
#include "zarr.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "build_config.h"

static const char *const zarr_globs[] = {".zarr", NULL};

#if FEEDBENCH_HAVE_ZARR
#include <blosc.h>
#include <zlib.h>
#include <zstd.h>

#define ZARR_PATH (CFG_PATH_MAX + 96)

/* ---- codecs ----------------------------------------------------------------------------- */

static int zarr_gzip(const struct zarr_meta *m, const uint8_t *src, size_t n, uint8_t *dst,
		     size_t *cap)
{
	z_stream z = {0};
	int zr;

	if (deflateInit2(&z, m->clevel ? m->clevel : 5, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	z.next_in = (Bytef *)src;
	z.avail_in = (uInt)n;
	z.next_out = dst;
	z.avail_out = (uInt)*cap;
	zr = deflate(&z, Z_FINISH);
	*cap = z.total_out;
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : -1;
}

/* Encodes n bytes into dst (capacity *cap, at least zarr_bound(n)); *cap gets the length. */
static int zarr_encode(const struct zarr_meta *m, const uint8_t *src, size_t n, uint8_t *dst,
		       size_t *cap)
{
	size_t out = *cap;
	int rc = 0;

	switch (m->codec) {
	case ZARR_NONE:
		memcpy(dst, src, n);
		out = n;
		break;
	case ZARR_BLOSC: {
		int r =
		    blosc_compress_ctx(m->clevel, m->shuffle, 1, n, src, dst, out, m->cname, 0, 1);

		rc = r > 0 ? 0 : -1;
		out = r > 0 ? (size_t)r : 0;
		break;
	}
	case ZARR_ZSTD:
		out = ZSTD_compress(dst, out, src, n, m->clevel);
		rc = ZSTD_isError(out) ? -1 : 0;
		break;
	case ZARR_GZIP:
		rc = zarr_gzip(m, src, n, dst, &out);
		break;
	}
	if (rc == 0 && m->crc32c) {
		uint32_t c = crc32c(dst, out);

		memcpy(dst + out, &c, 4); /* little endian hosts, as the sample header */
		out += 4;
	}
	*cap = out;
	return rc;
}

static size_t zarr_bound(size_t n)
{
	return ZSTD_compressBound(n) + n / 8 + BLOSC_MAX_OVERHEAD + 1024;
}

static int zarr_gunzip(const uint8_t *src, size_t n, uint8_t *dst, size_t want)
{
	z_stream z = {0};
	int zr;

	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return -1;
	z.next_in = (Bytef *)src;
	z.avail_in = (uInt)n;
	z.next_out = dst;
	z.avail_out = (uInt)want;
	zr = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	return zr == Z_STREAM_END && z.total_out == want ? 0 : -1;
}

/* Decodes n bytes into exactly want bytes at dst; why names what failed. */
static int zarr_decode(const struct zarr_meta *m, const uint8_t *src, size_t n, uint8_t *dst,
		       size_t want, const char **why)
{
	size_t got = 0;

	if (m->crc32c) {
		uint32_t c;

		if (n < 4)
			return *why = "chunk shorter than its CRC32C", -1;
		n -= 4;
		memcpy(&c, src + n, 4);
		if (crc32c(src, n) != c)
			return *why = "chunk CRC32C mismatch", -1;
	}
	switch (m->codec) {
	case ZARR_NONE:
		if (n != want)
			return *why = "uncompressed chunk of another size than the chunk shape", -1;
		memcpy(dst, src, n);
		return 0;
	case ZARR_BLOSC:
		if (blosc_cbuffer_validate(src, n, &got) != 0 || got != want ||
		    blosc_decompress_ctx(src, dst, want, 1) != (int)want)
			return *why = "corrupt blosc chunk", -1;
		return 0;
	case ZARR_ZSTD:
		got = ZSTD_decompress(dst, want, src, n);
		if (ZSTD_isError(got) || got != want)
			return *why = "corrupt zstd chunk", -1;
		return 0;
	default:
		return zarr_gunzip(src, n, dst, want) < 0 ? (*why = "corrupt gzip chunk", -1) : 0;
	}
}

/* ---- files ----------------------------------------------------------------------------- */

static const char *zarr_meta_name(int version)
{
	return version == 2 ? ".zarray" : "zarr.json";
}

static int zarr_write_file(struct io *io, const char *path, const void *buf, size_t len)
{
	struct sfile *sf;
	int rc = io_open(io, &sf, path, STORAGE_O_WRITE), crc;

	if (rc < 0)
		return rc;
	rc = io_pwrite(io, sf, buf, len, 0);
	if (rc == 0)
		rc = io_sync(io, sf);
	crc = io_close(io, sf);
	return rc ? rc : crc;
}

/* Reads a whole file (at most max bytes) into a malloc'd buffer. */
static int zarr_read_file(struct run *run, struct io *io, const char *path, uint64_t max,
			  uint8_t **out, size_t *len)
{
	struct sfile *sf;
	uint64_t size = 0;
	int rc = io_open(io, &sf, path, STORAGE_O_READ), crc;

	if (rc < 0)
		return rc;
	rc = io_size(io, sf, &size);
	if (rc == 0 && size > max)
		rc = run_fail(run, -FB_EFORMAT,
			      "bad zarr file '%s': %" PRIu64 " bytes, more than the %" PRIu64
			      " it may hold",
			      path, size, max);
	if (rc == 0 && !(*out = malloc(size ? size : 1)))
		rc = run_fail(run, -ENOMEM, "out of memory reading '%s'", path);
	if (rc == 0 && (rc = io_pread(io, sf, *out, size, 0)) < 0)
		free(*out);
	crc = io_close(io, sf);
	if (rc == 0 && crc < 0)
		free(*out);
	*len = (size_t)size;
	return rc ? rc : crc;
}

/* The array's metadata: zarr.json, else .zarray (want 0: whichever is there). */
static int zarr_meta_load(struct run *run, const char *path, int want, struct zarr_meta *m)
{
	struct io io = {.run = run};
	struct storage_stat st;
	char p[ZARR_PATH], why[300];
	uint8_t *text = NULL;
	size_t len = 0;
	int version = want, rc;

	if (!version) {
		snprintf(p, sizeof(p), "%s/zarr.json", path);
		version = io_stat(&io, p, &st) == 0 ? 3 : 2;
	}
	snprintf(p, sizeof(p), "%s/%s", path, zarr_meta_name(version));
	rc = zarr_read_file(run, &io, p, ZARR_META_MAX, &text, &len);
	if (rc < 0)
		return rc;
	if (zarr_meta_parse((const char *)text, len, version, m, why, sizeof(why)) < 0)
		rc = run_fail(run, -FB_EFORMAT, "bad zarr metadata '%s': %s", p, why);
	free(text);
	return rc;
}

/* ---- generation ------------------------------------------------------------------------ */

struct zarr_gen {
	struct run *run;
	struct ds_file *file;
	struct io io;
	struct zarr_meta m;
	uint8_t *chunk, *enc; /* samples of the chunk being gathered; one encoded chunk */
	uint64_t nchunk, chunks_done;
	size_t chunk_bytes, enc_cap;
	uint8_t *shard; /* encoded chunks of the shard being gathered, then its index */
	size_t shard_len, shard_cap;
	uint64_t *idx; /* offset, length pairs */
	uint64_t in_shard;
};

static void zarr_gen_free(struct zarr_gen *g)
{
	free(g->chunk);
	free(g->enc);
	free(g->shard);
	free(g->idx);
	free(g);
}

static void zarr_config_meta(const struct run *run, const struct ds_file *file, struct zarr_meta *m)
{
	static const int levels[] = {0, 5, 3, 5};

	memset(m, 0, sizeof(*m));
	m->version = run->cfg.zarr.version;
	m->nsamples = file->nsamples;
	m->sample_bytes = run->ds.rec_mean;
	m->itemsize = 1;
	m->chunk = (uint64_t)run->cfg.zarr.chunk_samples;
	m->shard = m->version == 3 ? (uint64_t)run->cfg.zarr.shard_chunks : 0;
	m->codec = run->cfg.zarr.codec;
	m->clevel = levels[m->codec];
	snprintf(m->cname, sizeof(m->cname), "lz4");
	m->shuffle = 1;
	m->crc32c = m->version == 3 && run->cfg.zarr.crc32c;
	m->index_crc32c = true;
	m->ndims = 2;
	m->sep = m->version == 2 ? '.' : '/';
	m->dot_keys = m->version == 2;
	m->v3_default_keys = true;
	m->fill_zero = true;
}

/* The folder of chunk (or shard) key i exists: v3's "c/i/" folders, made as zarr-python does. */
static int zarr_key_path(struct zarr_gen *g, uint64_t i, char *p, size_t len, bool mk)
{
	char key[64];
	int rc = 0;

	zarr_chunk_key(&g->m, i, key, sizeof(key));
	snprintf(p, len, "%s/%s", g->file->path, key);
	if (mk && g->m.version == 3) {
		char *slash = strrchr(p, '/');

		*slash = '\0';
		rc = io_mkdir(&g->io, p, 0777);
		*slash = '/';
	}
	return rc;
}

static int zarr_config_check(struct run *run)
{
	const struct config *c = &run->cfg;

	if (run->ds.rec_stdev)
		return run_fail(run, -FB_ECONFIG,
				"zarr: an array's samples have one size: set "
				"record_length_bytes_stdev = 0");
	if (c->zarr.version == 2 && (c->zarr.crc32c || c->zarr.shard_chunks))
		return run_fail(run, -FB_ECONFIG,
				"[format.zarr] %s needs version = 3 (Zarr v2 has neither)",
				c->zarr.crc32c ? "crc32c" : "shard_chunks");
	if (c->storage.page_cache == PAGE_CACHE_EVICT || !c->dataset.keep_files)
		return run_fail(run, -FB_ECONFIG,
				"zarr: %s acts on files, and an array is a folder of chunk files: "
				"use %s",
				c->dataset.keep_files ? "page_cache = evict" : "keep_files = false",
				c->dataset.keep_files ? "page_cache = drop" : "keep_files = true");
	return 0;
}

static int zarr_create(struct fgen **out, struct run *run, struct ds_file *file, unsigned flags)
{
	struct zarr_gen *g = calloc(1, sizeof(*g));
	char p[ZARR_PATH], *text = NULL;
	int rc;

	if (!g)
		return run_fail(run, -ENOMEM, "out of memory");
	g->run = run;
	g->file = file;
	g->io = (struct io){.run = run};
	zarr_config_meta(run, file, &g->m);
	g->chunk_bytes = g->m.chunk * g->m.sample_bytes;
	g->enc_cap = zarr_bound(g->chunk_bytes) + 4;
	g->chunk = calloc(1, g->chunk_bytes);
	g->enc = malloc(g->enc_cap);
	g->idx = calloc(2 * (g->m.shard + 1), sizeof(*g->idx));
	rc = zarr_config_check(run);
	if (rc == 0 && (!g->chunk || !g->enc || !g->idx || !(text = zarr_meta_write(&g->m))))
		rc = run_fail(run, -ENOMEM, "out of memory");
	if (rc == 0)
		rc = io_mkdir(&g->io, file->path, 0777);
	snprintf(p, sizeof(p), "%s/c", file->path);
	if (rc == 0 && g->m.version == 3)
		rc = io_mkdir(&g->io, p, 0777);
	snprintf(p, sizeof(p), "%s/%s", file->path, zarr_meta_name(g->m.version));
	if (rc == 0)
		rc = zarr_write_file(&g->io, p, text, strlen(text));
	free(text);
	if (rc < 0) {
		zarr_gen_free(g);
		return rc;
	}
	*out = (struct fgen *)g;
	return 0;
}

static int zarr_shard_flush(struct zarr_gen *g)
{
	size_t ib = zarr_shard_index_bytes(&g->m);
	char p[ZARR_PATH];
	uint8_t *s;
	int rc;

	for (uint64_t i = g->in_shard; i < g->m.shard; i++)
		g->idx[2 * i] = g->idx[2 * i + 1] = UINT64_MAX; /* past the array's end */
	s = realloc(g->shard, g->shard_len + ib);
	if (!s)
		return run_fail(g->run, -ENOMEM, "out of memory writing '%s'", g->file->path);
	g->shard = s;
	memcpy(s + g->shard_len, g->idx, 16 * g->m.shard);
	uint32_t c = crc32c(s + g->shard_len, 16 * g->m.shard);

	memcpy(s + g->shard_len + 16 * g->m.shard, &c, 4);
	rc = zarr_key_path(g, (g->chunks_done - 1) / g->m.shard, p, sizeof(p), true);
	if (rc == 0)
		rc = zarr_write_file(&g->io, p, s, g->shard_len + ib);
	g->shard_len = 0;
	g->in_shard = 0;
	return rc;
}

/* The gathered chunk (padded with zeros, as zarr stores edge chunks whole), encoded and written
 * as its own file or added to the shard. */
static int zarr_chunk_flush(struct zarr_gen *g)
{
	size_t n = g->enc_cap;
	char p[ZARR_PATH];
	int rc;

	memset(g->chunk + g->nchunk * g->m.sample_bytes, 0,
	       g->chunk_bytes - g->nchunk * g->m.sample_bytes);
	if (zarr_encode(&g->m, g->chunk, g->chunk_bytes, g->enc, &n) < 0)
		return run_fail(g->run, -FB_EINTERNAL, "zarr: cannot encode a chunk of '%s'",
				g->file->path);
	g->nchunk = 0;
	g->chunks_done++;
	if (!g->m.shard) {
		rc = zarr_key_path(g, g->chunks_done - 1, p, sizeof(p), true);
		return rc ? rc : zarr_write_file(&g->io, p, g->enc, n);
	}
	if (g->shard_len + n > g->shard_cap) {
		size_t cap = 2 * (g->shard_len + n);
		uint8_t *s = realloc(g->shard, cap);

		if (!s)
			return run_fail(g->run, -ENOMEM, "out of memory writing '%s'",
					g->file->path);
		g->shard = s;
		g->shard_cap = cap;
	}
	g->idx[2 * g->in_shard] = g->shard_len;
	g->idx[2 * g->in_shard + 1] = n;
	memcpy(g->shard + g->shard_len, g->enc, n);
	g->shard_len += n;
	return ++g->in_shard == g->m.shard ? zarr_shard_flush(g) : 0;
}

static int zarr_append(struct fgen *fg, uint64_t index, const void *sample, size_t len)
{
	struct zarr_gen *g = (struct zarr_gen *)fg;

	if (len != g->m.sample_bytes)
		return run_fail(g->run, -FB_EINTERNAL, "zarr: sample %" PRIu64 " of %zu bytes",
				index, len);
	memcpy(g->chunk + g->nchunk * len, sample, len);
	return ++g->nchunk == g->m.chunk ? zarr_chunk_flush(g) : 0;
}

static int zarr_finish(struct fgen *fg)
{
	struct zarr_gen *g = (struct zarr_gen *)fg;
	int rc = g->nchunk ? zarr_chunk_flush(g) : 0;

	if (rc == 0 && g->in_shard)
		rc = zarr_shard_flush(g);
	zarr_gen_free(g);
	return rc;
}

/* ---- reading ------------------------------------------------------------------------------ */

static int zarr_index(struct run *run, struct ds_file *file)
{
	struct zarr_meta *m = calloc(1, sizeof(*m));
	int rc;

	if (!m)
		return run_fail(run, -ENOMEM, "out of memory");
	rc = run->ds.generated ? zarr_config_check(run) : 0;
	if (rc == 0)
		rc = zarr_meta_load(run, file->path, run->ds.generated ? run->cfg.zarr.version : 0,
				    m);
	if (rc == 0 && m->nsamples != file->nsamples)
		rc = run_fail(run, -FB_EDATASET,
			      "zarr: '%s' holds %" PRIu64 " samples, expected %" PRIu64, file->path,
			      m->nsamples, file->nsamples);
	if (rc == 0 && m->chunk * m->sample_bytes > (4ull << 30))
		rc = run_fail(run, -FB_EFORMAT, "zarr: chunks of '%s' exceed 4 GiB", file->path);
	if (rc < 0) {
		free(m);
		return rc;
	}
	file->meta = m;
	return 0;
}

static void zarr_unindex(struct ds_file *file)
{
	free(file->meta);
	file->meta = NULL;
}

struct zarr_reader {
	struct run *run;
	struct ds_file *file;
	struct io *io;
	const struct zarr_meta *m;
	int64_t chunk;	    /* decoded chunk, -1 none */
	uint8_t *dec, *raw; /* decoded chunk; chunk bytes as read */
	size_t raw_cap;
	int64_t shard;	  /* shard whose index is loaded, -1 none */
	struct sfile *sf; /* that shard, open */
	uint64_t shard_size;
	uint64_t *off, *lens; /* its index */
};

static int zarr_open(struct freader **out, struct run *run, struct ds_file *file, struct io *io)
{
	struct zarr_reader *r = calloc(1, sizeof(*r));
	const struct zarr_meta *m = file->meta;

	if (!r || !m || !(r->dec = malloc(m->chunk * m->sample_bytes + 1)) ||
	    !(r->off = calloc(2 * (m->shard + 1), sizeof(*r->off)))) {
		if (r)
			free(r->dec);
		free(r);
		return run_fail(run, m ? -ENOMEM : -FB_EINTERNAL, "zarr: cannot open '%s'",
				file->path);
	}
	r->run = run;
	r->file = file;
	r->io = io;
	r->m = m;
	r->lens = r->off + m->shard + 1;
	r->chunk = r->shard = -1;
	*out = (struct freader *)r;
	return 0;
}

static int zarr_raw_grow(struct zarr_reader *r, uint64_t n)
{
	uint8_t *p;

	if (n <= r->raw_cap)
		return 0;
	if (n > 2 * zarr_bound(r->m->chunk * r->m->sample_bytes) + (1u << 20) ||
	    !(p = realloc(r->raw, n)))
		return run_fail(r->run, -FB_EFORMAT,
				"bad zarr file in '%s': a chunk of %" PRIu64
				" bytes, more than its shape can encode to",
				r->file->path, n);
	r->raw = p;
	r->raw_cap = n;
	return 0;
}

static int zarr_shard_close(struct zarr_reader *r)
{
	int rc = r->sf ? io_close(r->io, r->sf) : 0;

	r->sf = NULL;
	r->shard = -1;
	return rc;
}

/* Opens shard s and reads its index. */
static int zarr_shard_load(struct zarr_reader *r, uint64_t s, char *p, size_t plen)
{
	const struct zarr_meta *m = r->m;
	size_t ib = zarr_shard_index_bytes(m);
	char key[64], why[256];
	int rc = zarr_shard_close(r);

	zarr_chunk_key(m, s, key, sizeof(key));
	snprintf(p, plen, "%s/%s", r->file->path, key);
	if (rc == 0)
		rc = io_open(r->io, &r->sf, p, STORAGE_O_READ);
	if (rc == 0)
		rc = io_size(r->io, r->sf, &r->shard_size);
	if (rc == 0 && r->shard_size < ib)
		return run_fail(r->run, -FB_EFORMAT,
				"bad zarr shard '%s': %" PRIu64 " bytes, shorter than its index of "
				"%zu at offset 0",
				p, r->shard_size, ib);
	if (rc == 0 && (rc = zarr_raw_grow(r, ib)) == 0)
		rc = io_pread(r->io, r->sf, r->raw, ib, r->shard_size - ib);
	if (rc == 0 && zarr_shard_index_parse(m, r->raw, ib, r->shard_size, r->off, r->lens, why,
					      sizeof(why)) < 0)
		return run_fail(r->run, -FB_EFORMAT, "bad zarr shard '%s': %s at offset %" PRIu64,
				p, why, r->shard_size - ib);
	if (rc == 0)
		r->shard = (int64_t)s;
	return rc;
}

/* Chunk c's encoded bytes into r->raw: *n bytes, at *at in file p; 1 when the chunk is not
 * stored (read as fill value zero). */
static int zarr_chunk_read(struct zarr_reader *r, uint64_t c, char *p, size_t plen, size_t *n,
			   uint64_t *at)
{
	const struct zarr_meta *m = r->m;
	struct storage_stat st;
	struct sfile *sf;
	uint64_t size = 0;
	char key[64];
	int rc, crc;

	*at = 0;
	if (m->shard) {
		uint64_t s = c / m->shard, k = c % m->shard;

		if ((int64_t)s != r->shard && (rc = zarr_shard_load(r, s, p, plen)) < 0)
			return rc;
		zarr_chunk_key(m, s, key, sizeof(key));
		snprintf(p, plen, "%s/%s", r->file->path, key);
		if (r->off[k] == UINT64_MAX)
			return 1;
		*n = (size_t)r->lens[k];
		*at = r->off[k];
		rc = zarr_raw_grow(r, *n);
		return rc ? rc : io_pread(r->io, r->sf, r->raw, *n, *at);
	}
	zarr_chunk_key(m, c, key, sizeof(key));
	snprintf(p, plen, "%s/%s", r->file->path, key);
	if (m->fill_zero && !r->run->ds.generated && io_stat(r->io, p, &st) == -ENOENT)
		return 1; /* zarr-python leaves chunks of fill values unwritten */
	rc = io_open(r->io, &sf, p, STORAGE_O_READ);
	if (rc < 0)
		return rc;
	rc = io_size(r->io, sf, &size);
	if (rc == 0 && (rc = zarr_raw_grow(r, size)) == 0)
		rc = io_pread(r->io, sf, r->raw, size, 0);
	*n = (size_t)size;
	crc = io_close(r->io, sf);
	return rc ? rc : crc;
}

static int zarr_chunk_load(struct zarr_reader *r, uint64_t c)
{
	const struct zarr_meta *m = r->m;
	size_t want = m->chunk * m->sample_bytes, n = 0;
	char p[ZARR_PATH];
	const char *why = NULL;
	uint64_t at = 0;
	int rc;

	r->chunk = -1;
	rc = zarr_chunk_read(r, c, p, sizeof(p), &n, &at);
	if (rc == 1) {
		if (!m->fill_zero)
			return run_fail(r->run, -FB_EFORMAT,
					"zarr: chunk %" PRIu64 " of '%s' is missing and the fill "
					"value is not zero",
					c, r->file->path);
		memset(r->dec, 0, want);
	} else if (rc < 0) {
		return rc;
	} else if (zarr_decode(m, r->raw, n, r->dec, want, &why) < 0) {
		return run_fail(r->run, -FB_EFORMAT, "bad zarr chunk '%s': %s at offset %" PRIu64,
				p, why, at);
	}
	r->chunk = (int64_t)c;
	return 0;
}

static int zarr_read_sample(struct freader *fr, uint64_t index, void *buf, size_t cap, size_t *len)
{
	struct zarr_reader *r = (struct zarr_reader *)fr;
	const struct zarr_meta *m = r->m;
	uint64_t c = index / m->chunk;
	int rc;

	if (index >= m->nsamples || m->sample_bytes > cap)
		return run_fail(r->run, -FB_EINTERNAL, "zarr: no sample %" PRIu64 " in '%s'", index,
				r->file->path);
	if ((int64_t)c != r->chunk && (rc = zarr_chunk_load(r, c)) < 0)
		return rc;
	memcpy(buf, r->dec + (index % m->chunk) * m->sample_bytes, m->sample_bytes);
	*len = m->sample_bytes;
	return 0;
}

static int zarr_close(struct freader *fr)
{
	struct zarr_reader *r = (struct zarr_reader *)fr;
	int rc = zarr_shard_close(r);

	free(r->dec);
	free(r->raw);
	free(r->off);
	free(r);
	return rc;
}

static int zarr_probe(struct run *run, const char *path, struct probe_info *info)
{
	static const char *const codecs[] = {"uncompressed", "blosc", "zstd", "gzip"};
	struct zarr_meta m;
	int rc = zarr_meta_load(run, path, 0, &m);

	if (rc < 0)
		return rc;
	memset(info, 0, sizeof(*info));
	info->nsamples = m.nsamples;
	info->max_sample = m.sample_bytes;
	info->data_bytes = m.nsamples * m.sample_bytes;
	snprintf(info->detail, sizeof(info->detail),
		 "zarr v%d: %" PRIu64 " samples of %" PRIu64 " bytes, chunks of %" PRIu64
		 " samples%s%.0" PRIu64 "%s, %s%s",
		 m.version, m.nsamples, m.sample_bytes, m.chunk, m.shard ? ", shards of " : "",
		 m.shard, m.shard ? " chunks" : "", codecs[m.codec], m.crc32c ? ", crc32c" : "");
	return 0;
}

const struct format_ops zarr_format = {
    .version = FORMAT_OPS_VERSION,
    .name = "zarr",
    .ext = ".zarr",
    .globs = zarr_globs,
    .caps = FORMAT_CAP_SHARED | FORMAT_CAP_RENAMES | FORMAT_CAP_FOLDER,
    .create = zarr_create,
    .append = zarr_append,
    .finish = zarr_finish,
    .index = zarr_index,
    .unindex = zarr_unindex,
    .open = zarr_open,
    .read_sample = zarr_read_sample,
    .close = zarr_close,
    .probe = zarr_probe,
};

#else

/* Listed as not built: format_find() skips it, and the config check says why. */
const struct format_ops zarr_format = {
    .version = FORMAT_OPS_VERSION,
    .name = "zarr",
    .ext = ".zarr",
    .globs = zarr_globs,
    .not_built = FEEDBENCH_ZARR_WHY,
};

#endif
