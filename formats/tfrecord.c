/* TFRecord format: each sample is one record holding a tf.train.Example
 * {"image": bytes (the whole sample), "label": int64, "size": int64}, as DLIO and TensorFlow
 * write them. One file per rank when generating; any rank may read any record (shared).
 *
 * An index file beside each TFRecord, "<file>.idx", holds one "<offset> <framed size>\n" line
 * per record (the DALI / `tfrecord` package text format). With [format.tfrecord] index = true it
 * is written when generating and read when indexing; without it (or when it is absent) index()
 * walks the record headers from the start of the file. [format.tfrecord] index_dir puts the
 * index files in a folder of their own; when it is not set, an index missing beside its file is
 * looked for where DLIO keeps it (data_folder/index/train/ for data_folder/train/).
 *
 * Reading a sample reads its framed record in one call, checks both CRCs and decodes the
 * Example with protobuf-c: the decode is part of what a TensorFlow input pipeline pays for.
 */
#include "format.h"
#include "sample.h"
#include "tfrecord.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "example.pb-c.h"
#include "../bench/run.h"
#include "../bench/storage/storage.h"

/* ---- framing ------------------------------------------------------------------------------- */

uint32_t tfrecord_mask(uint32_t crc)
{
	return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

uint32_t tfrecord_masked_crc(const void *buf, size_t len)
{
	return tfrecord_mask(crc32c(buf, len));
}

static void tfrecord_put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void tfrecord_put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t tfrecord_get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint32_t tfrecord_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void tfrecord_put_header(uint8_t hdr[TFRECORD_HEADER_BYTES], uint64_t len)
{
	tfrecord_put_le64(hdr, len);
	tfrecord_put_le32(hdr + 8, tfrecord_masked_crc(hdr, 8));
}

void tfrecord_put_footer(uint8_t ftr[TFRECORD_FOOTER_BYTES], const void *data, size_t len)
{
	tfrecord_put_le32(ftr, tfrecord_masked_crc(data, len));
}

int tfrecord_check_header(const uint8_t hdr[TFRECORD_HEADER_BYTES], uint64_t *len)
{
	if (tfrecord_masked_crc(hdr, 8) != tfrecord_get_le32(hdr + 8))
		return -FB_EFORMAT;
	*len = tfrecord_get_le64(hdr);
	return 0;
}

int tfrecord_check_record(const void *rec, size_t reclen, uint64_t *len)
{
	const uint8_t *p = rec;
	uint64_t n;

	if (reclen < TFRECORD_FRAME_BYTES || tfrecord_check_header(p, &n) < 0)
		return -FB_EFORMAT;
	if (n != reclen - TFRECORD_FRAME_BYTES)
		return -FB_EFORMAT;
	if (tfrecord_masked_crc(p + TFRECORD_HEADER_BYTES, n) !=
	    tfrecord_get_le32(p + TFRECORD_HEADER_BYTES + n))
		return -FB_EFORMAT;
	*len = n;
	return 0;
}

/* ---- tf.train.Example ---------------------------------------------------------------------- */

/* The message tree of one Example as generated, built on the stack around borrowed bytes. */
struct tfrecord_msg {
	Tensorflow__Example example;
	Tensorflow__Features features;
	Tensorflow__Features__FeatureEntry entry[3];
	Tensorflow__Features__FeatureEntry *entries[3];
	Tensorflow__Feature feature[3];
	Tensorflow__BytesList bytes;
	Tensorflow__Int64List ints[2];
	ProtobufCBinaryData image;
	int64_t label, size;
};

static void tfrecord_msg_build(struct tfrecord_msg *m, const void *image, size_t len, int64_t label)
{
	static const char *const keys[3] = {"image", "label", "size"};

	tensorflow__example__init(&m->example);
	tensorflow__features__init(&m->features);
	tensorflow__bytes_list__init(&m->bytes);
	m->image.data = (uint8_t *)image; /* only read by pack */
	m->image.len = len;
	m->bytes.n_value = 1;
	m->bytes.value = &m->image;
	m->label = label;
	m->size = (int64_t)len;
	for (int i = 0; i < 2; i++) {
		tensorflow__int64_list__init(&m->ints[i]);
		m->ints[i].n_value = 1;
	}
	m->ints[0].value = &m->label;
	m->ints[1].value = &m->size;
	for (int i = 0; i < 3; i++) {
		tensorflow__feature__init(&m->feature[i]);
		tensorflow__features__feature_entry__init(&m->entry[i]);
		m->entry[i].key = (char *)keys[i];
		m->entry[i].value = &m->feature[i];
		m->entries[i] = &m->entry[i];
	}
	m->feature[0].kind_case = TENSORFLOW__FEATURE__KIND_BYTES_LIST;
	m->feature[0].bytes_list = &m->bytes;
	m->feature[1].kind_case = TENSORFLOW__FEATURE__KIND_INT64_LIST;
	m->feature[1].int64_list = &m->ints[0];
	m->feature[2].kind_case = TENSORFLOW__FEATURE__KIND_INT64_LIST;
	m->feature[2].int64_list = &m->ints[1];
	m->features.n_feature = 3;
	m->features.feature = m->entries;
	m->example.features = &m->features;
}

size_t tfrecord_example_size(size_t len, int64_t label)
{
	struct tfrecord_msg m;

	tfrecord_msg_build(&m, NULL, len, label);
	return tensorflow__example__get_packed_size(&m.example);
}

size_t tfrecord_example_encode(void *out, const void *image, size_t len, int64_t label)
{
	struct tfrecord_msg m;

	tfrecord_msg_build(&m, image, len, label);
	return tensorflow__example__pack(&m.example, out);
}

/* protobuf-c allocator over the arena: bump allocation, frees are no-ops; blocks that do not
 * fit (only for odd inputs, the arena is sized from the record) are malloc'd and remembered. */
static void *tfrecord_arena_alloc(void *data, size_t size)
{
	struct tfrecord_arena *a = data;
	size_t at = (a->used + 15) & ~(size_t)15;
	void *p;

	if (at <= a->cap && size <= a->cap - at) {
		a->used = at + size;
		return a->base + at;
	}
	if (a->nspill == a->spill_cap) {
		size_t n = a->spill_cap ? 2 * a->spill_cap : 16;
		void **s = realloc(a->spill, n * sizeof(*s));

		if (!s)
			return NULL;
		a->spill = s;
		a->spill_cap = n;
	}
	p = malloc(size ? size : 1);
	if (p)
		a->spill[a->nspill++] = p;
	return p;
}

static void tfrecord_arena_release(void *data, void *ptr)
{
	struct tfrecord_arena *a = data;

	if (!ptr || ((uint8_t *)ptr >= a->base && (uint8_t *)ptr < a->base + a->cap))
		return;
	for (size_t i = 0; i < a->nspill; i++) {
		if (a->spill[i] == ptr) {
			a->spill[i] = a->spill[--a->nspill];
			free(ptr);
			return;
		}
	}
}

static void tfrecord_arena_reset(struct tfrecord_arena *a)
{
	for (size_t i = 0; i < a->nspill; i++)
		free(a->spill[i]);
	a->nspill = 0;
	a->used = 0;
}

void tfrecord_arena_free(struct tfrecord_arena *a)
{
	tfrecord_arena_reset(a);
	free(a->spill);
	free(a->base);
	memset(a, 0, sizeof(*a));
}

/* The decoded tree holds a copy of every bytes field plus a few hundred bytes of structs. */
static int tfrecord_arena_reserve(struct tfrecord_arena *a, size_t len)
{
	size_t want = len + len / 8 + 4096;
	uint8_t *p;

	tfrecord_arena_reset(a);
	if (a->cap >= want)
		return 0;
	p = malloc(want);
	if (!p)
		return -ENOMEM;
	free(a->base);
	a->base = p;
	a->cap = want;
	return 0;
}

int tfrecord_example_decode(const void *data, size_t len, struct tfrecord_arena *a,
			    struct tfrecord_example *ex)
{
	ProtobufCAllocator alloc = {
	    .alloc = tfrecord_arena_alloc,
	    .free = tfrecord_arena_release,
	    .allocator_data = a,
	};
	Tensorflow__Example *msg;
	int err;

	memset(ex, 0, sizeof(*ex));
	err = tfrecord_arena_reserve(a, len);
	if (err < 0)
		return err;
	msg = tensorflow__example__unpack(&alloc, len, data);
	if (!msg)
		return -FB_EFORMAT;
	if (!msg->features)
		return 0;
	ex->nfeatures = (unsigned)msg->features->n_feature;
	for (size_t i = 0; i < msg->features->n_feature; i++) {
		const Tensorflow__Features__FeatureEntry *e = msg->features->feature[i];
		const Tensorflow__Feature *f = e->value;

		if (!f)
			continue;
		if (strcmp(e->key, "image") == 0 &&
		    f->kind_case == TENSORFLOW__FEATURE__KIND_BYTES_LIST &&
		    f->bytes_list->n_value > 0) {
			ex->has_image = true;
			ex->image = f->bytes_list->value[0].data;
			ex->image_len = f->bytes_list->value[0].len;
		} else if (strcmp(e->key, "label") == 0 &&
			   f->kind_case == TENSORFLOW__FEATURE__KIND_INT64_LIST &&
			   f->int64_list->n_value > 0) {
			ex->has_label = true;
			ex->label = f->int64_list->value[0];
		}
	}
	/* The tree lives in the arena (reset by the next decode); nothing to free here. */
	return 0;
}

/* ---- the format plug-in ---------------------------------------------------------------------- */

#define TFRECORD_WINDOW	    (1u << 20) /* sequential scans read this much at a time */
#define TFRECORD_GEN_BUFFER (1u << 20) /* records gathered per write when generating */

/* file->meta: where each record starts, plus the end of the last one (8 bytes per sample). */
struct tfrecord_meta {
	uint64_t n;
	uint64_t off[];
};

/* Where the index of the TFRecord at `path` is written: "<index_dir>/<name>.idx" when
 * [format.tfrecord] index_dir is set, else "<path>.idx" beside it. */
static void tfrecord_idx_path(const struct run *run, const char *path, char *buf, size_t len)
{
	const char *dir = run->cfg.tfrecord.index_dir;
	const char *base = strrchr(path, '/');

	if (*dir)
		snprintf(buf, len, "%s/%s.idx", dir, base ? base + 1 : path);
	else
		snprintf(buf, len, "%s.idx", path);
}

/* Where an existing index is: index_dir when set; else beside the file, then where DLIO
 * keeps them (data_folder/index/train/<name>.idx for data_folder/train/<name>, that is
 * "<data_dir>/../index/<data_dir's name>/"). false when there is none. */
static bool tfrecord_idx_find(const struct run *run, const char *path, char *buf, size_t len)
{
	const char *base = strrchr(path, '/');
	char folder[CFG_PATH_MAX];
	const char *leaf;
	size_t flen;

	tfrecord_idx_path(run, path, buf, len);
	if (access(buf, F_OK) == 0 || *run->cfg.tfrecord.index_dir || !base)
		return access(buf, F_OK) == 0;
	flen = (size_t)(base - path);
	if (flen >= sizeof(folder))
		return false;
	memcpy(folder, path, flen);
	folder[flen] = '\0';
	while (flen > 1 && folder[flen - 1] == '/')
		folder[--flen] = '\0';
	leaf = strrchr(folder, '/');
	if (leaf)
		snprintf(buf, len, "%.*s/index/%s/%s.idx", (int)(leaf - folder), folder, leaf + 1,
			 base + 1);
	else
		snprintf(buf, len, "index/%s/%s.idx", folder, base + 1);
	return access(buf, F_OK) == 0;
}

static int tfrecord_truncated(struct run *run, const char *path, uint64_t off)
{
	return run_fail(run, -FB_EFORMAT, "tfrecord: truncated record at %" PRIu64 " in '%s'", off,
			path);
}

static int tfrecord_corrupted(struct run *run, const char *path, uint64_t off, const char *why)
{
	return run_fail(run, -FB_EFORMAT, "tfrecord: corrupted record at %" PRIu64 " in '%s' (%s)",
			off, path, why);
}

/* Why a framed record failed tfrecord_check_record(), for the message. */
static const char *tfrecord_why(const uint8_t *rec, size_t reclen)
{
	uint64_t len;

	if (reclen < TFRECORD_FRAME_BYTES)
		return "shorter than a record frame";
	if (tfrecord_check_header(rec, &len) < 0)
		return "length CRC mismatch";
	if (len != reclen - TFRECORD_FRAME_BYTES)
		return "length field disagrees with the index";
	return "data CRC mismatch";
}

/* ---- generation ---- */

struct tfrecord_gen {
	struct run *run;
	struct ds_file *file;
	struct io io;
	struct sfile *sf, *idx;
	uint64_t off;	 /* end of the records written or gathered */
	uint64_t wstart; /* file offset of wbuf[0] */
	uint8_t *wbuf;
	size_t wlen, wcap;
	char *ibuf; /* index text not yet written */
	size_t ilen, icap;
	uint64_t ioff; /* bytes of the index file written */
};

static int tfrecord_grow(void **buf, size_t *cap, size_t want)
{
	size_t n = *cap ? *cap : 4096;
	void *p;

	if (want <= *cap)
		return 0;
	while (n < want && n <= SIZE_MAX / 2)
		n *= 2;
	if (n < want)
		n = want;
	p = realloc(*buf, n);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

static int tfrecord_gen_flush(struct tfrecord_gen *g)
{
	int rc = 0;

	if (g->wlen)
		rc = io_pwrite(&g->io, g->sf, g->wbuf, g->wlen, g->wstart);
	g->wstart += g->wlen;
	g->wlen = 0;
	if (rc == 0 && g->idx && g->ilen)
		rc = io_pwrite(&g->io, g->idx, g->ibuf, g->ilen, g->ioff);
	g->ioff += g->ilen;
	g->ilen = 0;
	return rc;
}

static void tfrecord_gen_free(struct tfrecord_gen *g)
{
	free(g->wbuf);
	free(g->ibuf);
	free(g);
}

static int tfrecord_create(struct fgen **out, struct run *run, struct ds_file *file, unsigned flags)
{
	struct tfrecord_gen *g = calloc(1, sizeof(*g));
	char ipath[CFG_PATH_MAX + 8];
	int rc;

	if (!g)
		return run_fail(run, -ENOMEM, "out of memory");
	g->run = run;
	g->file = file;
	g->io = (struct io){.run = run};
	rc = io_open(&g->io, &g->sf, file->path, STORAGE_O_WRITE);
	if (rc == 0 && run->cfg.tfrecord.index && *run->cfg.tfrecord.index_dir &&
	    mkdir(run->cfg.tfrecord.index_dir, 0777) != 0 && errno != EEXIST)
		rc = run_fail(run, -errno, "cannot create index folder '%s': %s",
			      run->cfg.tfrecord.index_dir, strerror(errno));
	if (rc == 0 && run->cfg.tfrecord.index) {
		tfrecord_idx_path(run, file->path, ipath, sizeof(ipath));
		rc = io_open(&g->io, &g->idx, ipath, STORAGE_O_WRITE);
		if (rc < 0)
			io_close(&g->io, g->sf);
	}
	if (rc < 0) {
		tfrecord_gen_free(g);
		return rc;
	}
	*out = (struct fgen *)g;
	return 0;
}

static int tfrecord_append(struct fgen *fg, uint64_t index, const void *sample, size_t len)
{
	struct tfrecord_gen *g = (struct tfrecord_gen *)fg;
	int64_t label = (int64_t)(g->file->first + index);
	size_t exlen = tfrecord_example_size(len, label);
	size_t framed = exlen + TFRECORD_FRAME_BYTES;
	uint8_t *rec;
	int rc;

	if (g->wlen && g->wlen + framed > TFRECORD_GEN_BUFFER && (rc = tfrecord_gen_flush(g)) < 0)
		return rc;
	if (tfrecord_grow((void **)&g->wbuf, &g->wcap, g->wlen + framed) < 0 ||
	    tfrecord_grow((void **)&g->ibuf, &g->icap, g->ilen + 48) < 0)
		return run_fail(g->run, -ENOMEM, "out of memory writing '%s'", g->file->path);
	rec = g->wbuf + g->wlen;
	tfrecord_put_header(rec, exlen);
	tfrecord_example_encode(rec + TFRECORD_HEADER_BYTES, sample, len, label);
	tfrecord_put_footer(rec + TFRECORD_HEADER_BYTES + exlen, rec + TFRECORD_HEADER_BYTES,
			    exlen);
	g->ilen += (size_t)snprintf(g->ibuf + g->ilen, g->icap - g->ilen, "%" PRIu64 " %zu\n",
				    g->off, framed);
	g->wlen += framed;
	g->off += framed;
	return 0;
}

static int tfrecord_finish(struct fgen *fg)
{
	struct tfrecord_gen *g = (struct tfrecord_gen *)fg;
	int rc = tfrecord_gen_flush(g), crc;

	/* Data first: an index is only worth having for complete data. */
	if (rc == 0)
		rc = io_sync(&g->io, g->sf);
	crc = io_close(&g->io, g->sf);
	if (rc == 0)
		rc = crc;
	if (g->idx) {
		if (rc == 0)
			rc = io_sync(&g->io, g->idx);
		crc = io_close(&g->io, g->idx);
		if (rc == 0)
			rc = crc;
	}
	tfrecord_gen_free(g);
	return rc;
}

/* ---- sequential scans (index without .idx, probe) ---- */

struct tfrecord_scan {
	struct run *run;
	struct io io;
	struct sfile *sf;
	const char *path;
	uint64_t size; /* file size */
	uint8_t *win;  /* window of the file at woff */
	size_t wlen, wcap;
	uint64_t woff;
};

static int tfrecord_scan_open(struct tfrecord_scan *s, struct run *run, const char *path)
{
	int rc;

	memset(s, 0, sizeof(*s));
	s->run = run;
	s->path = path;
	s->io = (struct io){.run = run};
	rc = io_open(&s->io, &s->sf, path, STORAGE_O_READ);
	if (rc == 0 && (rc = io_size(&s->io, s->sf, &s->size)) < 0)
		io_close(&s->io, s->sf);
	return rc;
}

static int tfrecord_scan_close(struct tfrecord_scan *s)
{
	int rc = io_close(&s->io, s->sf);

	free(s->win);
	return rc;
}

/* Makes bytes [off, off + len) of the file available at *p (len <= file size - off). */
static int tfrecord_scan_get(struct tfrecord_scan *s, uint64_t off, size_t len, const uint8_t **p)
{
	size_t want = len > TFRECORD_WINDOW ? len : TFRECORD_WINDOW, got;
	int rc;

	if (s->win && off >= s->woff && off + len <= s->woff + s->wlen) {
		*p = s->win + (off - s->woff);
		return 0;
	}
	if (want > s->size - off)
		want = (size_t)(s->size - off);
	if (tfrecord_grow((void **)&s->win, &s->wcap, want) < 0)
		return run_fail(s->run, -ENOMEM, "out of memory reading '%s'", s->path);
	rc = io_pread_upto(&s->io, s->sf, s->win, want, off, &got);
	if (rc < 0)
		return rc;
	s->woff = off;
	s->wlen = got;
	if (got < len) /* the file shrank under us */
		return tfrecord_truncated(s->run, s->path, off);
	*p = s->win;
	return 0;
}

/* The record at off: 1 at a clean end of file, 0 with its data length, or an error. */
static int tfrecord_scan_header(struct tfrecord_scan *s, uint64_t off, uint64_t *len)
{
	const uint8_t *h = NULL;
	int rc;

	if (off == s->size)
		return 1;
	if (s->size - off < TFRECORD_HEADER_BYTES)
		return tfrecord_truncated(s->run, s->path, off);
	rc = tfrecord_scan_get(s, off, TFRECORD_HEADER_BYTES, &h);
	if (rc < 0)
		return rc;
	if (tfrecord_check_header(h, len) < 0)
		return tfrecord_corrupted(s->run, s->path, off, "length CRC mismatch");
	if (*len > s->size - off - TFRECORD_HEADER_BYTES ||
	    s->size - off - TFRECORD_HEADER_BYTES - *len < TFRECORD_FOOTER_BYTES)
		return tfrecord_truncated(s->run, s->path, off);
	return 0;
}

/* ---- index ---- */

static struct tfrecord_meta *tfrecord_meta_alloc(uint64_t n)
{
	struct tfrecord_meta *m = malloc(sizeof(*m) + (n + 1) * sizeof(m->off[0]));

	if (m)
		m->n = n;
	return m;
}

static int tfrecord_index_scan(struct run *run, struct ds_file *file, struct tfrecord_meta *m)
{
	struct tfrecord_scan s;
	uint64_t off = 0, len = 0, i;
	int rc = tfrecord_scan_open(&s, run, file->path);

	if (rc < 0)
		return rc;
	for (i = 0;; i++) {
		rc = tfrecord_scan_header(&s, off, &len);
		if (rc != 0)
			break;
		if (i == m->n) {
			rc = run_fail(run, -FB_EDATASET,
				      "tfrecord: '%s' holds more than the %" PRIu64
				      " records expected",
				      file->path, m->n);
			break;
		}
		m->off[i] = off;
		off += len + TFRECORD_FRAME_BYTES;
	}
	if (rc == 1 && i != m->n)
		rc = run_fail(run, -FB_EDATASET,
			      "tfrecord: '%s' holds %" PRIu64 " records, expected %" PRIu64,
			      file->path, i, m->n);
	if (rc == 1) {
		m->off[m->n] = off;
		rc = 0;
	}
	if (rc == 0)
		rc = tfrecord_scan_close(&s);
	else
		tfrecord_scan_close(&s);
	file->bytes = s.size;
	return rc;
}

/* Reads "<offset> <framed size>\n" lines; 1 when the index file does not exist. */
static int tfrecord_index_load(struct run *run, struct ds_file *file, struct tfrecord_meta *m)
{
	char ipath[CFG_PATH_MAX + 8];
	struct io io = {.run = run};
	struct tfrecord_scan s;
	struct sfile *sf;
	uint64_t size, next = 0, i = 0, line = 1;
	char *text = NULL, *p, *end;
	int rc;

	if (!tfrecord_idx_find(run, file->path, ipath, sizeof(ipath)))
		return 1;
	rc = io_open(&io, &sf, ipath, STORAGE_O_READ);
	if (rc < 0)
		return rc;
	rc = io_size(&io, sf, &size);
	if (rc == 0 && !(text = malloc(size + 1)))
		rc = run_fail(run, -ENOMEM, "out of memory reading '%s'", ipath);
	if (rc == 0)
		rc = io_pread(&io, sf, text, size, 0);
	if (rc == 0)
		rc = io_close(&io, sf);
	else
		io_close(&io, sf);
	if (rc < 0)
		goto out_free;
	text[size] = '\0';
	for (p = text; *p && rc == 0; line++) {
		unsigned long long o, n;
		char *nl;

		o = strtoull(p, &end, 10);
		n = end > p ? strtoull(end, &nl, 10) : 0;
		if (end == p || nl == end || (*nl != '\n' && *nl != '\0') || o != next ||
		    n < TFRECORD_FRAME_BYTES || o > UINT64_MAX - n) {
			rc = run_fail(run, -FB_EFORMAT,
				      "tfrecord: index '%s' line %" PRIu64
				      " is not \"<offset> <size>\" of the next record",
				      ipath, line);
			break;
		}
		if (i == m->n) {
			rc = run_fail(run, -FB_EDATASET,
				      "tfrecord: index '%s' lists more than the %" PRIu64
				      " records expected",
				      ipath, m->n);
			break;
		}
		m->off[i++] = o;
		next = o + n;
		p = *nl ? nl + 1 : nl;
	}
	if (rc == 0 && i != m->n)
		rc = run_fail(run, -FB_EDATASET,
			      "tfrecord: index '%s' lists %" PRIu64 " records, expected %" PRIu64,
			      ipath, i, m->n);
	if (rc < 0)
		goto out_free;
	m->off[m->n] = next;
	/* A data file shorter than its index: say which record is cut, before any timing. */
	rc = tfrecord_scan_open(&s, run, file->path);
	if (rc < 0)
		goto out_free;
	file->bytes = s.size;
	if (s.size < next) {
		uint64_t k = 0;

		while (k + 1 < m->n && m->off[k + 1] + TFRECORD_HEADER_BYTES <= s.size)
			k++;
		rc = tfrecord_truncated(run, file->path, m->off[k]);
	}
	if (rc == 0)
		rc = tfrecord_scan_close(&s);
	else
		tfrecord_scan_close(&s);
out_free:
	free(text);
	return rc;
}

static int tfrecord_index(struct run *run, struct ds_file *file)
{
	struct tfrecord_meta *m = tfrecord_meta_alloc(file->nsamples);
	int rc = 1;

	if (!m)
		return run_fail(run, -ENOMEM, "out of memory indexing '%s'", file->path);
	if (run->cfg.tfrecord.index)
		rc = tfrecord_index_load(run, file, m);
	if (rc == 1)
		rc = tfrecord_index_scan(run, file, m);
	if (rc < 0) {
		free(m);
		return rc;
	}
	file->meta = m;
	return 0;
}

static void tfrecord_unindex(struct ds_file *file)
{
	free(file->meta);
	file->meta = NULL;
}

/* ---- reading ---- */

struct tfrecord_reader {
	struct freader_file b; /* first: freader_file_open() */
	uint8_t *buf;	       /* one framed record */
	size_t cap;
	struct tfrecord_arena arena;
};

static int tfrecord_open(struct freader **out, struct run *run, struct ds_file *file, struct io *io)
{
	struct tfrecord_reader *r;
	int rc;

	if (!file->meta)
		return run_fail(run, -FB_EINTERNAL, "tfrecord: '%s' read before it was indexed",
				file->path);
	rc = freader_file_open(sizeof(*r), run, file, io, (void **)&r);
	if (rc < 0)
		return rc;
	*out = (struct freader *)r;
	return 0;
}

static int tfrecord_extent(struct run *run, struct ds_file *file, uint64_t index, uint64_t *off,
			   uint64_t *len)
{
	const struct tfrecord_meta *m = file->meta;

	if (!m || index >= m->n)
		return run_fail(run, -FB_EINTERNAL, "tfrecord: no record %" PRIu64 " in '%s'",
				index, file->path);
	*off = m->off[index];
	*len = m->off[index + 1] - m->off[index];
	return 0;
}

/* Checks a framed record and decodes its Example into out: the `image` bytes, or the whole
 * Example when it has no `image` feature. */
static int tfrecord_decode(struct run *run, struct ds_file *file, uint64_t off, const void *raw,
			   size_t rawlen, struct tfrecord_arena *a, void *out, size_t cap,
			   size_t *len)
{
	const uint8_t *data = (const uint8_t *)raw + TFRECORD_HEADER_BYTES;
	struct tfrecord_example ex;
	uint64_t n;
	int rc;

	if (tfrecord_check_record(raw, rawlen, &n) < 0)
		return tfrecord_corrupted(run, file->path, off, tfrecord_why(raw, rawlen));
	rc = tfrecord_example_decode(data, n, a, &ex);
	if (rc == -ENOMEM)
		return run_fail(run, rc, "out of memory decoding '%s'", file->path);
	if (rc < 0)
		return run_fail(run, -FB_EFORMAT,
				"tfrecord: record at %" PRIu64 " in '%s' is not a tf.train.Example",
				off, file->path);
	if (!ex.has_image) {
		ex.image = data;
		ex.image_len = n;
	}
	if (ex.image_len > cap)
		return run_fail(run, -FB_EFORMAT,
				"tfrecord: record at %" PRIu64
				" in '%s' holds %zu bytes, more than "
				"the %zu expected",
				off, file->path, ex.image_len, cap);
	memcpy(out, ex.image, ex.image_len);
	*len = ex.image_len;
	return 0;
}

static int tfrecord_parse(struct run *run, struct ds_file *file, uint64_t index, const void *raw,
			  size_t rawlen, void *out, size_t cap, size_t *len)
{
	const struct tfrecord_meta *m = file->meta;
	struct tfrecord_arena a = {0};
	int rc;

	/* Main thread, collective path: a short-lived arena (no per-file state to keep). */
	rc = tfrecord_decode(run, file, m ? m->off[index] : 0, raw, rawlen, &a, out, cap, len);
	tfrecord_arena_free(&a);
	return rc;
}

static int tfrecord_read_sample(struct freader *fr, uint64_t index, void *buf, size_t cap,
				size_t *len)
{
	struct tfrecord_reader *r = (struct tfrecord_reader *)fr;
	uint64_t off = 0, n = 0;
	size_t got;
	int rc = tfrecord_extent(r->b.run, r->b.file, index, &off, &n);

	if (rc < 0)
		return rc;
	if (tfrecord_grow((void **)&r->buf, &r->cap, n) < 0)
		return run_fail(r->b.run, -ENOMEM, "out of memory reading '%s'", r->b.file->path);
	rc = io_pread_upto(r->b.io, r->b.sf, r->buf, n, off, &got);
	if (rc < 0)
		return rc;
	if (got < n)
		return tfrecord_truncated(r->b.run, r->b.file->path, off);
	return tfrecord_decode(r->b.run, r->b.file, off, r->buf, n, &r->arena, buf, cap, len);
}

static int tfrecord_close(struct freader *fr)
{
	struct tfrecord_reader *r = (struct tfrecord_reader *)fr;
	int rc = freader_file_close(&r->b);

	tfrecord_arena_free(&r->arena);
	free(r->buf);
	free(r);
	return rc;
}

/* ---- bring your own data ---- */

/* Reads every record once: sizes are those of the `image` feature, known only by decoding. */
static int tfrecord_probe(struct run *run, const char *path, struct probe_info *info)
{
	struct tfrecord_scan s;
	struct tfrecord_arena a = {0};
	struct tfrecord_example ex;
	struct ds_file file = {.path = (char *)path};
	uint64_t off = 0, len = 0, noimage = 0;
	char ipath[CFG_PATH_MAX + 8];
	unsigned nfeatures = 0;
	int rc = tfrecord_scan_open(&s, run, path);

	if (rc < 0)
		return rc;
	memset(info, 0, sizeof(*info));
	while ((rc = tfrecord_scan_header(&s, off, &len)) == 0) {
		const uint8_t *rec = NULL;
		uint64_t n, size;

		rc = tfrecord_scan_get(&s, off, len + TFRECORD_FRAME_BYTES, &rec);
		if (rc < 0)
			break;
		if (tfrecord_check_record(rec, len + TFRECORD_FRAME_BYTES, &n) < 0) {
			rc = tfrecord_corrupted(run, path, off,
						tfrecord_why(rec, len + TFRECORD_FRAME_BYTES));
			break;
		}
		rc = tfrecord_example_decode(rec + TFRECORD_HEADER_BYTES, n, &a, &ex);
		if (rc < 0) {
			rc = run_fail(run, rc == -ENOMEM ? rc : -FB_EFORMAT,
				      "tfrecord: record at %" PRIu64
				      " in '%s' is not a tf.train.Example",
				      off, file.path);
			break;
		}
		size = ex.has_image ? ex.image_len : n;
		noimage += !ex.has_image;
		if (ex.nfeatures > nfeatures)
			nfeatures = ex.nfeatures;
		info->nsamples++;
		info->data_bytes += size;
		if (size > info->max_sample)
			info->max_sample = size;
		off += len + TFRECORD_FRAME_BYTES;
	}
	tfrecord_arena_free(&a);
	if (rc < 0) {
		tfrecord_scan_close(&s);
		return rc;
	}
	bool indexed = tfrecord_idx_find(run, path, ipath, sizeof(ipath));
	snprintf(info->detail, sizeof(info->detail),
		 "tfrecord: %" PRIu64 " records, up to %u features, %s%s%.160s", info->nsamples,
		 nfeatures, noimage ? "whole Examples (no 'image' feature)" : "'image' bytes",
		 indexed ? ", with index " : "", indexed ? ipath : "");
	return tfrecord_scan_close(&s);
}

static const char *const tfrecord_globs[] = {".tfrecord", ".tfrecords", NULL};

const struct format_ops tfrecord_format = {
    .version = FORMAT_OPS_VERSION,
    .name = "tfrecord",
    .ext = ".tfrecord",
    .globs = tfrecord_globs,
    .caps = FORMAT_CAP_SHARED | FORMAT_CAP_MPIIO,
    .create = tfrecord_create,
    .append = tfrecord_append,
    .finish = tfrecord_finish,
    .index = tfrecord_index,
    .unindex = tfrecord_unindex,
    .open = tfrecord_open,
    .read_sample = tfrecord_read_sample,
    .close = tfrecord_close,
    .probe = tfrecord_probe,
    .extent = tfrecord_extent,
    .parse = tfrecord_parse,
};
