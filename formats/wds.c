/* wds: WebDataset shards, tar files (ustar, written through libarchive) in which a sample is
 * the run of consecutive members sharing a key: KEY.bin holds the sample's bytes and KEY.cls
 * its label as ASCII digits.
 *
 * Reading streams a shard front to back as WebDataset does: tar headers are parsed here, from
 * reads of the storage's transfer size (1 MiB when transfer_size = 0) through io_pread, and a
 * sample's members are read in stream order. With a shuffle buffer the trainer asks for samples
 * out of stream order: as WebDataset does, every byte is still read once, in stream order, and
 * the data of samples streamed past before they are asked for is held in memory (the shuffle
 * buffer, at most [format.wds] shuffle_buffer samples) until they are. Shards written by other
 * tools (Python's tarfile, webdataset's TarWriter) are read too: PAX ('x', 'g') and GNU ('L', 'K')
 * headers are understood. The sample returned is the .bin member when the key has one, else all its
 * members' data concatenated in tar order; every member of a sample is read (the label is part of a
 * sample).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "format.h"
#include "../bench/errors.h"
#include "../bench/run.h"
#include "../bench/storage/storage.h"

#define WDS_BLOCK	512
#define WDS_CHUNK	(1u << 20)  /* stream read size when transfer_size = 0 */
#define WDS_PROBE_CHUNK (64u << 10) /* probe reads headers, not data */
#define WDS_META_MAX	(1u << 20)  /* PAX header or GNU long name larger than this: refused */
#define WDS_MTIME	1700000000  /* fixed member time: the same config gives the same bytes */

/* ---- generation ----------------------------------------------------------------------- */

struct fgen {
	struct run *run;
	struct ds_file *file;
	struct io io;
	struct sfile *f;
	struct archive *a;
	struct archive_entry *e;
	uint64_t off; /* bytes written so far */
	int io_rc;    /* first write error (already recorded by the io wrapper) */
};

static la_ssize_t wds_write_cb(struct archive *a, void *ud, const void *buf, size_t len)
{
	struct fgen *g = ud;
	int rc;

	rc = io_pwrite(&g->io, g->f, buf, len, g->off);
	if (rc) {
		g->io_rc = rc;
		archive_set_error(a, rc < 0 && rc > -4000 ? -rc : EIO, "write failed");
		return -1;
	}
	g->off += len;
	return (la_ssize_t)len;
}

/* The error of a failed libarchive call: the io wrapper's when it recorded one. */
static int wds_gen_fail(struct fgen *g, const char *what)
{
	if (g->io_rc)
		return g->io_rc;
	return run_fail(g->run, -EIO, "cannot %s '%s': %s", what, g->file->path,
			archive_error_string(g->a) ? archive_error_string(g->a)
						   : "libarchive error");
}

static int wds_create(struct fgen **gp, struct run *run, struct ds_file *file, unsigned flags)
{
	struct fgen *g;
	int rc;

	g = calloc(1, sizeof(*g));
	if (!g)
		return run_fail(run, -ENOMEM, "cannot allocate wds writer for '%s'", file->path);
	g->run = run;
	g->file = file;
	g->io = (struct io){.run = run};
	g->a = archive_write_new();
	g->e = archive_entry_new();
	if (!g->a || !g->e) {
		rc = run_fail(run, -ENOMEM, "cannot allocate wds writer for '%s'", file->path);
		goto out_free;
	}
	rc = io_open(&g->io, &g->f, file->path, STORAGE_O_WRITE);
	if (rc)
		goto out_free;
	if (archive_write_set_format_ustar(g->a) != ARCHIVE_OK ||
	    archive_write_open(g->a, g, NULL, wds_write_cb, NULL) != ARCHIVE_OK) {
		rc = wds_gen_fail(g, "create");
		io_close(&g->io, g->f);
		goto out_free;
	}
	*gp = g;
	return 0;
out_free:
	if (g->e)
		archive_entry_free(g->e);
	if (g->a)
		archive_write_free(g->a);
	free(g);
	return rc;
}

static int wds_add_member(struct fgen *g, const char *name, const void *data, size_t len)
{
	archive_entry_clear(g->e);
	archive_entry_set_pathname(g->e, name);
	archive_entry_set_size(g->e, (la_int64_t)len);
	archive_entry_set_filetype(g->e, AE_IFREG);
	archive_entry_set_perm(g->e, 0644);
	archive_entry_set_mtime(g->e, WDS_MTIME, 0);
	if (archive_write_header(g->a, g->e) != ARCHIVE_OK)
		return wds_gen_fail(g, "write");
	if (archive_write_data(g->a, data, len) != (la_ssize_t)len)
		return wds_gen_fail(g, "write");
	return 0;
}

static int wds_append(struct fgen *g, uint64_t index, const void *sample, size_t len)
{
	uint64_t global = g->file->first + index;
	char name[64], label[32];
	int rc, n;

	snprintf(name, sizeof(name), "sample%08" PRIu64 ".bin", global);
	rc = wds_add_member(g, name, sample, len);
	if (rc)
		return rc;
	snprintf(name, sizeof(name), "sample%08" PRIu64 ".cls", global);
	n = snprintf(label, sizeof(label), "%" PRIu64, global % 1000);
	return wds_add_member(g, name, label, (size_t)n);
}

/* Writes the end of the archive (two zero blocks, padding to libarchive's record size),
 * then fsync and close: their failures are fatal. */
static int wds_finish(struct fgen *g)
{
	int rc = 0, rc2;

	if (archive_write_close(g->a) != ARCHIVE_OK)
		rc = wds_gen_fail(g, "write");
	archive_write_free(g->a);
	archive_entry_free(g->e);
	rc2 = io_sync(&g->io, g->f);
	rc = rc ? rc : rc2;
	rc2 = io_close(&g->io, g->f);
	rc = rc ? rc : rc2;
	free(g);
	return rc;
}

/* ---- reading: a streaming tar parser -------------------------------------------------- */

struct wds_member {
	uint64_t off, size;  /* data */
	bool bin;	     /* the KEY.bin member */
	unsigned char *held; /* its data, read while streaming past before it was asked for */
};

struct wds_sample {
	uint64_t first; /* index of its first member */
	uint32_t count; /* members */
	int32_t bin;	/* member (relative to first) returned as the sample, -1: all */
	uint64_t bytes; /* bytes returned */
};

struct freader {
	struct run *run;
	struct io *io;
	const char *path;
	struct sfile *f;
	struct ds_file *file; /* reading: the dataset file (NULL when probing) */
	uint64_t size;	      /* file size */

	unsigned char *buf; /* the stream: bytes [buf_off, buf_off + buf_len) of the file */
	size_t chunk;
	uint64_t buf_off;
	size_t buf_len;

	uint64_t scan;	    /* offset of the next header */
	bool end;	    /* end of archive reached */
	char *pending_name; /* from a GNU 'L' or PAX 'x' header, for the next member */
	bool pending_size;
	uint64_t pax_size;
	char *key; /* key of the sample being collected (open), NULL: none */
	uint64_t open_first;

	struct wds_member *members;
	size_t nmembers, members_cap;
	struct wds_sample *samples; /* complete samples, in stream order */
	size_t nsamples, samples_cap;

	/* The sample read_sample() wants, filled while its members stream past. */
	bool want_active, want_done, want_bin, want_over;
	uint64_t want;
	unsigned char *want_buf;
	size_t want_cap, want_off;

	bool hold;     /* keep the data of members streamed past (reading, not probing) */
	char exts[96]; /* member extensions seen (probe detail) */
	uint64_t npax;
};

/* Copies file bytes [off, off + len) into dst (NULL: read them and drop them), from the
 * stream buffer when they are in it. Bytes ahead are read in chunks into the buffer, or
 * straight into dst when there are at least a chunk of them; bytes behind the buffer (a
 * sample from the shuffle window) are read again where they lie. */
static int wds_fetch(struct freader *r, uint64_t off, uint64_t len, unsigned char *dst)
{
	uint64_t n;
	size_t got;
	int rc;

	while (len) {
		if (off >= r->buf_off && off < r->buf_off + r->buf_len) {
			n = r->buf_off + r->buf_len - off;
			n = n < len ? n : len;
			if (dst) {
				memcpy(dst, r->buf + (off - r->buf_off), n);
				dst += n;
			}
			off += n;
			len -= n;
			continue;
		}
		if (dst && (len >= r->chunk || off < r->buf_off)) {
			n = off < r->buf_off && off + len > r->buf_off && r->buf_len
				? r->buf_off - off
				: len;
			rc = io_pread(r->io, r->f, dst, n, off);
			if (rc)
				return rc;
			dst += n;
			off += n;
			len -= n;
			continue;
		}
		rc = io_pread_upto(r->io, r->f, r->buf, r->chunk, off, &got);
		if (rc)
			return rc;
		r->buf_off = off;
		r->buf_len = got;
		if (!got)
			return run_fail(r->run, -FB_EEOF,
					"unexpected end of file in '%s' at offset %" PRIu64,
					r->path, off);
	}
	return 0;
}

static void wds_note_ext(struct freader *r, const char *ext)
{
	size_t n = strlen(r->exts);
	char item[24];

	snprintf(item, sizeof(item), "%s.%.16s", n ? " " : "", ext);
	if (strstr(r->exts, item + (n ? 1 : 0)) || n + strlen(item) + 4 >= sizeof(r->exts))
		return;
	snprintf(r->exts + n, sizeof(r->exts) - n, "%s", item);
}

/* Ends the sample being collected: it becomes readable. */
static int wds_close_sample(struct freader *r)
{
	struct wds_sample *s;
	void *p;

	if (!r->key)
		return 0;
	free(r->key);
	r->key = NULL;
	if (r->nsamples == r->samples_cap) {
		r->samples_cap = r->samples_cap ? 2 * r->samples_cap : 64;
		p = realloc(r->samples, r->samples_cap * sizeof(*r->samples));
		if (!p)
			return run_fail(r->run, -ENOMEM, "out of memory indexing '%s'", r->path);
		r->samples = p;
	}
	s = &r->samples[r->nsamples];
	*s = (struct wds_sample){
	    .first = r->open_first, .count = (uint32_t)(r->nmembers - r->open_first), .bin = -1};
	for (uint32_t i = 0; i < s->count; i++) {
		if (r->members[s->first + i].bin && s->bin < 0) {
			s->bin = (int32_t)i;
			s->bytes = r->members[s->first + i].size;
		}
	}
	if (s->bin < 0)
		for (uint32_t i = 0; i < s->count; i++)
			s->bytes += r->members[s->first + i].size;
	if (r->want_active && r->nsamples == r->want) {
		r->want_active = false;
		r->want_done = true;
	}
	r->nsamples++;
	return 0;
}

/* Reads a member of the wanted sample as it streams past: the .bin into the caller's buffer,
 * other members after each other until a .bin shows up (then they are only read). */
/* Copies the held data of a member that streamed past into dst (NULL: drop it). */
static int wds_take_held(struct wds_member *m, unsigned char *dst)
{
	if (dst)
		memcpy(dst, m->held, m->size);
	free(m->held);
	m->held = NULL;
	return 0;
}

/* Reads a member of the wanted sample as it streams past: the .bin into the caller's buffer,
 * other members after each other until a .bin shows up (then they are only read). A member
 * already held (it streamed past before the request) is copied, not read again. */
static int wds_want_member(struct freader *r, struct wds_member *m)
{
	unsigned char *dst = NULL;

	if (m->bin && !r->want_bin) {
		r->want_bin = true;
		if (m->size > r->want_cap)
			r->want_over = true;
		else
			dst = r->want_buf;
	} else if (r->want_bin || r->want_off + m->size > r->want_cap) {
		r->want_over = r->want_over || !r->want_bin;
	} else {
		r->want_off += m->size;
		dst = r->want_buf + r->want_off - m->size;
	}
	if (m->held)
		return wds_take_held(m, dst);
	return wds_fetch(r, m->off, m->size, dst);
}

/* A regular member named `name` with data at off: joins the sample of its key. Names
 * without an extension are not part of any sample (WebDataset skips them too). */
static int wds_add(struct freader *r, const char *name, uint64_t off, uint64_t size)
{
	const char *base = strrchr(name, '/'), *dot;
	struct wds_member *m;
	size_t klen;
	void *p;
	int rc;

	base = base ? base + 1 : name;
	dot = strchr(base, '.');
	if (!dot || dot == base)
		return 0;
	klen = (size_t)(dot - name);
	if (r->key && (strlen(r->key) != klen || strncmp(r->key, name, klen) != 0)) {
		rc = wds_close_sample(r);
		if (rc)
			return rc;
	}
	if (!r->key) {
		r->key = strndup(name, klen);
		if (!r->key)
			return run_fail(r->run, -ENOMEM, "out of memory indexing '%s'", r->path);
		r->open_first = r->nmembers;
	}
	if (r->nmembers == r->members_cap) {
		r->members_cap = r->members_cap ? 2 * r->members_cap : 128;
		p = realloc(r->members, r->members_cap * sizeof(*r->members));
		if (!p)
			return run_fail(r->run, -ENOMEM, "out of memory indexing '%s'", r->path);
		r->members = p;
	}
	m = &r->members[r->nmembers++];
	*m = (struct wds_member){.off = off, .size = size, .bin = strcmp(dot + 1, "bin") == 0};
	wds_note_ext(r, dot + 1);
	if (r->want_active && r->nsamples == r->want)
		return wds_want_member(r, m);
	if (!r->hold)
		return 0;
	/* Streamed past before it is asked for: read it now, in stream order, and keep it. */
	m->held = malloc(m->size ? m->size : 1);
	if (!m->held)
		return run_fail(r->run, -ENOMEM,
				"out of memory holding a %" PRIu64 "-byte member of '%s' (shuffle "
				"buffer)",
				m->size, r->path);
	return wds_fetch(r, m->off, m->size, m->held);
}

/* Octal (NUL or space terminated, leading spaces allowed) or GNU base-256. */
static int wds_number(const unsigned char *p, size_t len, uint64_t *v)
{
	size_t i = 0;

	*v = 0;
	if (p[0] & 0x80) {
		if (p[0] & 0x40)
			return -1; /* negative */
		*v = p[0] & 0x3f;
		for (i = 1; i < len; i++) {
			if (*v >> 56)
				return -1;
			*v = *v << 8 | p[i];
		}
		return 0;
	}
	while (i < len && p[i] == ' ')
		i++;
	for (; i < len && p[i] >= '0' && p[i] <= '7'; i++) {
		if (*v >> 61)
			return -1;
		*v = *v << 3 | (uint64_t)(p[i] - '0');
	}
	return i == len || p[i] == ' ' || p[i] == '\0' ? 0 : -1;
}

/* The header checksum: byte sum with the checksum field read as spaces (some old writers
 * summed signed chars: accepted too). */
static bool wds_checksum_ok(const unsigned char *h)
{
	uint64_t want;
	int64_t sum_s = 0;
	uint64_t sum_u = 0;

	if (wds_number(h + 148, 8, &want))
		return false;
	for (int i = 0; i < WDS_BLOCK; i++) {
		unsigned char c = i >= 148 && i < 156 ? ' ' : h[i];

		sum_u += c;
		sum_s += (signed char)c;
	}
	return want == sum_u || (int64_t)want == sum_s;
}

/* Reads a PAX or GNU long-name header's data. */
static int wds_meta(struct freader *r, uint64_t off, uint64_t size, char **out)
{
	char *p;
	int rc;

	if (size > WDS_META_MAX)
		return run_fail(r->run, -FB_EFORMAT,
				"bad tar header in '%s': %" PRIu64
				"-byte extended header at offset "
				"%" PRIu64,
				r->path, size, off - WDS_BLOCK);
	p = malloc(size + 1);
	if (!p)
		return run_fail(r->run, -ENOMEM, "out of memory reading '%s'", r->path);
	rc = wds_fetch(r, off, size, (unsigned char *)p);
	if (rc) {
		free(p);
		return rc;
	}
	p[size] = '\0';
	*out = p;
	return 0;
}

/* PAX records "LEN key=value\n": path and size apply to the next member. */
static int wds_pax(struct freader *r, uint64_t off, uint64_t size)
{
	char *data, *p, *end, *eq, *rec;
	unsigned long len;
	int rc;

	rc = wds_meta(r, off, size, &data);
	if (rc)
		return rc;
	p = data;
	end = data + size;
	while (p < end && *p) {
		rec = p;
		/* "<len> <key>=<value>\n": the length is plain digits (strtoul would also take
		 * spaces and a sign) and the record must hold more than its own length field. */
		if (!isdigit((unsigned char)*p))
			goto out_bad;
		len = strtoul(p, &p, 10);
		if (*p != ' ' || len == 0 || len > (unsigned long)(end - rec) ||
		    p + 1 >= rec + len || rec[len - 1] != '\n')
			goto out_bad;
		eq = memchr(p + 1, '=', (size_t)(rec + len - p - 1));
		if (!eq)
			goto out_bad;
		rec[len - 1] = '\0';
		if (eq - (p + 1) == 4 && strncmp(p + 1, "path", 4) == 0) {
			free(r->pending_name);
			r->pending_name = strdup(eq + 1);
			if (!r->pending_name) {
				rc = run_fail(r->run, -ENOMEM, "out of memory reading '%s'",
					      r->path);
				goto out_free;
			}
		} else if (eq - (p + 1) == 4 && strncmp(p + 1, "size", 4) == 0) {
			char *num_end;
			if (!isdigit((unsigned char)eq[1]))
				goto out_bad;
			r->pax_size = strtoull(eq + 1, &num_end, 10);
			if (*num_end != '\0')
				goto out_bad;
			r->pending_size = true;
		}
		p = rec + len;
	}
	r->npax++;
	goto out_free;
out_bad:
	rc = run_fail(r->run, -FB_EFORMAT, "bad PAX header in '%s' at offset %" PRIu64, r->path,
		      off + (uint64_t)(p - data));
out_free:
	free(data);
	return rc;
}

/* Parses the header at r->scan and moves past its member. */
static int wds_next(struct freader *r)
{
	unsigned char h[WDS_BLOCK];
	char name[256 + 2], *longname;
	uint64_t at = r->scan, size, data;
	bool zero = true;
	int rc;

	if (at == r->size) { /* no end-of-archive blocks: accepted at a member boundary */
		r->end = true;
		return wds_close_sample(r);
	}
	if (r->size - at < WDS_BLOCK)
		return run_fail(r->run, -FB_EFORMAT,
				"truncated tar header in '%s' at offset %" PRIu64, r->path, at);
	rc = wds_fetch(r, at, WDS_BLOCK, h);
	if (rc)
		return rc;
	for (int i = 0; i < WDS_BLOCK && zero; i++)
		zero = h[i] == 0;
	if (zero) {
		r->end = true;
		return wds_close_sample(r);
	}
	if (!wds_checksum_ok(h))
		return run_fail(r->run, -FB_EFORMAT,
				"bad tar header checksum in '%s' at offset %" PRIu64, r->path, at);
	if (wds_number(h + 124, 12, &size))
		return run_fail(r->run, -FB_EFORMAT,
				"bad tar header size field in '%s' at offset %" PRIu64, r->path,
				at + 124);
	if (r->pending_size && h[156] != 'x' && h[156] != 'g') {
		size = r->pax_size;
		r->pending_size = false;
	}
	data = at + WDS_BLOCK;
	if (size > r->size - data) {
		snprintf(name, sizeof(name), "%.100s", (const char *)h);
		return run_fail(r->run, -FB_EFORMAT,
				"truncated tar member '%s' in '%s': %" PRIu64
				" bytes at offset %" PRIu64
				" run past the end of the file (%" PRIu64 " bytes)",
				name, r->path, size, data, r->size);
	}
	r->scan = data + (size + WDS_BLOCK - 1) / WDS_BLOCK * WDS_BLOCK;
	switch (h[156]) {
	case 'x':
		return wds_pax(r, data, size);
	case 'L':
		rc = wds_meta(r, data, size, &longname);
		if (rc)
			return rc;
		free(r->pending_name);
		r->pending_name = longname;
		return 0;
	case '0':
	case '\0':
	case '7':
		if (r->pending_name) {
			rc = wds_add(r, r->pending_name, data, size);
		} else {
			if (memcmp(h + 257, "ustar\0", 6) == 0 && h[345])
				snprintf(name, sizeof(name), "%.155s/%.100s", (const char *)h + 345,
					 (const char *)h);
			else
				snprintf(name, sizeof(name), "%.100s", (const char *)h);
			rc = wds_add(r, name, data, size);
		}
		break;
	default: /* 'g' global PAX, 'K' long link name, directories, links: not members */
		rc = 0;
		break;
	}
	if (h[156] != 'g' && h[156] != 'K') {
		free(r->pending_name);
		r->pending_name = NULL;
	}
	return rc;
}

static int wds_reader_init(struct freader *r, struct run *run, struct io *io, const char *path,
			   size_t chunk)
{
	int rc;

	r->run = run;
	r->io = io;
	r->path = path;
	r->chunk = chunk < WDS_BLOCK ? WDS_BLOCK : chunk;
	r->buf = malloc(r->chunk);
	if (!r->buf)
		return run_fail(run, -ENOMEM, "cannot allocate a %zu-byte stream buffer for '%s'",
				r->chunk, path);
	rc = io_size(io, r->f, &r->size);
	return rc;
}

static void wds_reader_free(struct freader *r)
{
	for (size_t i = 0; i < r->nmembers; i++)
		free(r->members[i].held);
	free(r->buf);
	free(r->pending_name);
	free(r->key);
	free(r->members);
	free(r->samples);
	free(r);
}

static int wds_open(struct freader **rp, struct run *run, struct ds_file *file, struct io *io)
{
	struct freader *r;
	int rc;

	r = calloc(1, sizeof(*r));
	if (!r)
		return run_fail(run, -ENOMEM, "cannot allocate wds reader for '%s'", file->path);
	rc = io_open_file(io, file, &r->f);
	if (rc) {
		free(r);
		return rc;
	}
	r->file = file;
	r->hold = true;
	rc = wds_reader_init(r, run, io, file->path, io->transfer ? io->transfer : WDS_CHUNK);
	if (rc) {
		io_close_file(io, file, r->f);
		wds_reader_free(r);
		return rc;
	}
	*rp = r;
	return 0;
}

/* A sample already passed: its members are read where they lie. */
static int wds_read_passed(struct freader *r, const struct wds_sample *s, unsigned char *buf)
{
	uint64_t at = 0;
	int rc = 0;

	for (uint32_t i = 0; i < s->count && !rc; i++) {
		struct wds_member *m = &r->members[s->first + i];
		bool wanted = s->bin < 0 || (int32_t)i == s->bin;

		if (m->held) { /* from the shuffle buffer: already read once */
			if (wanted)
				memcpy(buf + at, m->held, m->size);
			free(m->held);
			m->held = NULL;
		} else {
			rc = wds_fetch(r, m->off, m->size, wanted ? buf + at : NULL);
		}
		if (wanted)
			at += m->size;
	}
	return rc;
}

static int wds_read_sample(struct freader *r, uint64_t index, void *buf, size_t cap, size_t *len)
{
	const struct wds_sample *s;
	int rc = 0;

	if (index < r->nsamples) {
		s = &r->samples[index];
		if (s->bytes > cap)
			goto out_big;
		rc = wds_read_passed(r, s, buf);
		if (rc)
			return rc;
		*len = s->bytes;
		return 0;
	}
	r->want = index;
	r->want_buf = buf;
	r->want_cap = cap;
	r->want_off = 0;
	r->want_done = r->want_bin = r->want_over = false;
	r->want_active = true;
	/* Members of the wanted sample seen before now (its first header ended the previous
	 * sample) are read first, in stream order. */
	if (r->key && r->nsamples == index)
		for (uint64_t i = r->open_first; i < r->nmembers && !rc; i++)
			rc = wds_want_member(r, &r->members[i]);
	while (!rc && !r->want_done) {
		if (r->end)
			rc = run_fail(r->run, -FB_EFORMAT,
				      "sample %" PRIu64
				      " not found in '%s': the shard ends after %zu "
				      "samples at offset %" PRIu64,
				      index, r->path, r->nsamples, r->scan);
		else
			rc = wds_next(r);
	}
	r->want_active = false;
	if (rc)
		return rc;
	s = &r->samples[index];
	if (r->want_over)
		goto out_big;
	*len = s->bytes;
	return 0;
out_big:
	return run_fail(r->run, -FB_EDATASET,
			"sample %" PRIu64 " in '%s' is larger than the %zu-byte sample buffer",
			index, r->path, cap);
}

static int wds_close(struct freader *r)
{
	int rc = r->file ? io_close_file(r->io, r->file, r->f) : 0;

	wds_reader_free(r);
	return rc;
}

/* Counts samples by scanning every header (data is skipped, not read). */
static int wds_probe(struct run *run, const char *path, struct probe_info *info)
{
	struct io io = {.run = run};
	struct freader *r;
	uint64_t total = 0, max = 0;
	int rc, rc2;

	r = calloc(1, sizeof(*r));
	if (!r)
		return run_fail(run, -ENOMEM, "cannot allocate wds reader for '%s'", path);
	rc = io_open(&io, &r->f, path, STORAGE_O_READ);
	if (rc) {
		free(r);
		return rc;
	}
	rc = wds_reader_init(r, run, &io, path, WDS_PROBE_CHUNK);
	while (!rc && !r->end)
		rc = wds_next(r);
	rc2 = io_close(&io, r->f);
	rc = rc ? rc : rc2;
	if (!rc) {
		for (size_t i = 0; i < r->nsamples; i++) {
			total += r->samples[i].bytes;
			max = r->samples[i].bytes > max ? r->samples[i].bytes : max;
		}
		info->nsamples = r->nsamples;
		info->max_sample = max;
		info->data_bytes = total;
		snprintf(info->detail, sizeof(info->detail),
			 "wds tar: %zu samples, %zu members (%s)%s", r->nsamples, r->nmembers,
			 r->exts, r->npax ? ", PAX headers" : "");
	}
	wds_reader_free(r);
	return rc;
}

static const char *const wds_globs[] = {".tar", NULL};

const struct format_ops wds_format = {
    .version = FORMAT_OPS_VERSION,
    .name = "wds",
    .ext = ".tar",
    .globs = wds_globs,
    .caps = FORMAT_CAP_SHARED | FORMAT_CAP_STREAM | FORMAT_CAP_MPIIO,
    .create = wds_create,
    .append = wds_append,
    .finish = wds_finish,
    .open = wds_open,
    .read_sample = wds_read_sample,
    .close = wds_close,
    .probe = wds_probe,
};
