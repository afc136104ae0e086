/* npy: one sample per file, a 1-D uint8 array of the sample's bytes (numpy.save layout).
 *
 * The "millions of small files" case: every sample read is an open (timed by the core as
 * metadata), a read of the header, a read of the data range and a close. Files written by
 * numpy (any dtype, any shape, versions 1.0 to 3.0) are read too: the sample is then the raw
 * data bytes of the array.
 */
#include "npy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "../bench/errors.h"
#include "../bench/run.h"

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* ---- header parsing ------------------------------------------------------------------- */

/* A cursor over the header dict; errors name the absolute offset. */
struct npy_lex {
	const char *start, *p, *end;
	uint64_t base; /* file offset of start */
	char *why;
	size_t whylen;
	int depth;
};

static int npy_lex_fail(struct npy_lex *l, const char *what)
{
	snprintf(l->why, l->whylen, "%s at offset %" PRIu64, what,
		 l->base + (uint64_t)(l->p - l->start));
	return -1;
}

static void npy_lex_space(struct npy_lex *l)
{
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r'))
		l->p++;
}

/* Skips white space and consumes c when it comes next. */
static bool npy_lex_accept(struct npy_lex *l, char c)
{
	npy_lex_space(l);
	if (l->p < l->end && *l->p == c) {
		l->p++;
		return true;
	}
	return false;
}

static int npy_lex_expect(struct npy_lex *l, char c)
{
	char what[32];

	if (npy_lex_accept(l, c))
		return 0;
	snprintf(what, sizeof(what), "expected '%c'", c);
	return npy_lex_fail(l, what);
}

/* A Python string literal in single or double quotes (escapes kept as written). */
static int npy_lex_string(struct npy_lex *l, char *out, size_t cap)
{
	size_t n = 0;
	char q;

	npy_lex_space(l);
	if (l->p >= l->end || (*l->p != '\'' && *l->p != '"'))
		return npy_lex_fail(l, "expected a string");
	q = *l->p++;
	while (l->p < l->end && *l->p != q) {
		if (*l->p == '\\' && l->p + 1 < l->end)
			l->p++;
		if (n + 1 < cap)
			out[n++] = *l->p;
		l->p++;
	}
	if (l->p >= l->end)
		return npy_lex_fail(l, "unterminated string");
	l->p++;
	out[n] = '\0';
	return 0;
}

static int npy_lex_uint(struct npy_lex *l, uint64_t *v)
{
	uint64_t x = 0;
	const char *s;

	npy_lex_space(l);
	s = l->p;
	while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
		if (__builtin_mul_overflow(x, 10, &x) ||
		    __builtin_add_overflow(x, (uint64_t)(*l->p - '0'), &x))
			return npy_lex_fail(l, "dimension overflows 64 bits");
		l->p++;
	}
	if (l->p == s)
		return npy_lex_fail(l, "expected a non-negative integer");
	if (l->p < l->end && *l->p == 'L') /* Python 2 long */
		l->p++;
	*v = x;
	return 0;
}

/* A shape tuple: "()", "(5,)", "(3, 4)". Stores up to max dimensions. */
static int npy_lex_shape(struct npy_lex *l, uint64_t *shape, int max, int *ndim)
{
	int n = 0;

	if (npy_lex_expect(l, '('))
		return -1;
	while (!npy_lex_accept(l, ')')) {
		if (n == max)
			return npy_lex_fail(l, "too many dimensions");
		if (npy_lex_uint(l, &shape[n]))
			return -1;
		n++;
		if (!npy_lex_accept(l, ',')) {
			if (npy_lex_expect(l, ')'))
				return -1;
			break;
		}
	}
	*ndim = n;
	return 0;
}

/* Bytes per element of a type string: "<f4", "|u1", "<U10" (4 bytes a character),
 * "<M8[ns]", "|b1", "|V16". Objects cannot be read without unpickling: refused. */
static int npy_typestr_size(struct npy_lex *l, const char *t, uint64_t *size)
{
	const char *s = t;
	uint64_t n = 0;
	char kind;

	if (*s == '<' || *s == '>' || *s == '|' || *s == '=')
		s++;
	kind = *s++;
	if (kind == 'O')
		return npy_lex_fail(l,
				    "object arrays (descr 'O') need pickle and are not supported");
	if (!strchr("?bBhHiIlLqQuUfdgFDGcSaVmMe", kind) || kind == '\0')
		return npy_lex_fail(l, "unknown dtype in descr");
	if (kind == '?' && *s == '\0') {
		*size = 1;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return npy_lex_fail(l, "descr without an item size");
	while (*s >= '0' && *s <= '9') {
		if (__builtin_mul_overflow(n, 10, &n) ||
		    __builtin_add_overflow(n, (uint64_t)(*s - '0'), &n))
			return npy_lex_fail(l, "item size overflows");
		s++;
	}
	if (*s == '[') /* datetime unit */
		s = strchr(s, ']') ? strchr(s, ']') + 1 : s;
	if (*s != '\0')
		return npy_lex_fail(l, "unknown dtype in descr");
	if (kind == 'U' && __builtin_mul_overflow(n, 4, &n))
		return npy_lex_fail(l, "item size overflows");
	*size = n;
	return 0;
}

static int npy_lex_descr(struct npy_lex *l, uint64_t *size);

/* One field of a structured dtype: (name, descr) or (name, descr, shape); the name may be a
 * (title, name) pair. */
static int npy_lex_field(struct npy_lex *l, uint64_t *size)
{
	char name[256];
	uint64_t shape[NPY_MAX_DIMS], n;
	int ndim = 0;

	if (npy_lex_expect(l, '('))
		return -1;
	if (npy_lex_accept(l, '(')) {
		if (npy_lex_string(l, name, sizeof(name)) || npy_lex_expect(l, ',') ||
		    npy_lex_string(l, name, sizeof(name)) || npy_lex_expect(l, ')'))
			return -1;
	} else if (npy_lex_string(l, name, sizeof(name))) {
		return -1;
	}
	if (npy_lex_expect(l, ',') || npy_lex_descr(l, &n))
		return -1;
	if (npy_lex_accept(l, ',')) {
		if (npy_lex_shape(l, shape, NPY_MAX_DIMS, &ndim))
			return -1;
		for (int i = 0; i < ndim; i++)
			if (__builtin_mul_overflow(n, shape[i], &n))
				return npy_lex_fail(l, "field size overflows");
	}
	if (npy_lex_expect(l, ')'))
		return -1;
	*size = n;
	return 0;
}

/* descr: a type string, or a list of fields (structured dtype, possibly nested). */
static int npy_lex_descr(struct npy_lex *l, uint64_t *size)
{
	char t[64];
	uint64_t total = 0, f;
	int rc = 0;

	npy_lex_space(l);
	if (!npy_lex_accept(l, '[')) {
		if (npy_lex_string(l, t, sizeof(t)))
			return -1;
		return npy_typestr_size(l, t, size);
	}
	if (++l->depth > 16)
		return npy_lex_fail(l, "structured dtype nested too deeply");
	while (!npy_lex_accept(l, ']')) {
		if (npy_lex_field(l, &f))
			return -1;
		if (__builtin_add_overflow(total, f, &total))
			return npy_lex_fail(l, "structured dtype size overflows");
		if (!npy_lex_accept(l, ',')) {
			rc = npy_lex_expect(l, ']');
			break;
		}
	}
	l->depth--;
	*size = total;
	return rc;
}

int npy_preamble(const void *buf, size_t len, uint64_t base, struct npy_header *h, char *why,
		 size_t whylen)
{
	const unsigned char *b = buf;
	uint64_t hlen;

	memset(h, 0, sizeof(*h));
	if (len < 10 || memcmp(b, npy_magic, sizeof(npy_magic)) != 0) {
		snprintf(why, whylen, "no NPY magic at offset %" PRIu64, base);
		return -1;
	}
	h->major = b[6];
	h->minor = b[7];
	if (h->major == 1) {
		hlen = (uint64_t)b[8] | (uint64_t)b[9] << 8;
		h->data_off = 10 + hlen;
	} else if (h->major == 2 || h->major == 3) {
		if (len < 12) {
			snprintf(why, whylen, "header ends at offset %" PRIu64, base + len);
			return -1;
		}
		hlen = (uint64_t)b[8] | (uint64_t)b[9] << 8 | (uint64_t)b[10] << 16 |
		       (uint64_t)b[11] << 24;
		h->data_off = 12 + hlen;
	} else {
		snprintf(why, whylen, "unsupported version %u.%u at offset %" PRIu64, h->major,
			 h->minor, base + 6);
		return -1;
	}
	if (hlen > NPY_HEADER_MAX) {
		snprintf(why, whylen,
			 "header length %" PRIu64 " exceeds %u bytes at offset %" PRIu64, hlen,
			 NPY_HEADER_MAX, base + 8);
		return -1;
	}
	return 0;
}

int npy_parse(const void *buf, size_t len, uint64_t base, struct npy_header *h, char *why,
	      size_t whylen)
{
	size_t pre;
	struct npy_lex l;
	bool seen_descr = false, seen_order = false, seen_shape = false;
	char key[32], word[8];
	uint64_t n;

	if (npy_preamble(buf, len, base, h, why, whylen))
		return -1;
	pre = h->major == 1 ? 10 : 12;
	if (len < h->data_off) {
		snprintf(why, whylen,
			 "header of %" PRIu64 " bytes ends past %" PRIu64
			 " bytes read at offset %" PRIu64,
			 h->data_off, (uint64_t)len, base);
		return -1;
	}
	l = (struct npy_lex){.start = buf,
			     .p = (const char *)buf + pre,
			     .end = (const char *)buf + h->data_off,
			     .base = base,
			     .why = why,
			     .whylen = whylen};
	if (npy_lex_expect(&l, '{'))
		return -1;
	while (!npy_lex_accept(&l, '}')) {
		if (npy_lex_string(&l, key, sizeof(key)) || npy_lex_expect(&l, ':'))
			return -1;
		if (strcmp(key, "descr") == 0) {
			const char *d = (npy_lex_space(&l), l.p);

			if (npy_lex_descr(&l, &h->itemsize))
				return -1;
			if (*d == '[')
				snprintf(h->descr, sizeof(h->descr), "[structured]");
			else
				snprintf(h->descr, sizeof(h->descr), "%.*s", (int)(l.p - d - 2),
					 d + 1);
			seen_descr = true;
		} else if (strcmp(key, "fortran_order") == 0) {
			npy_lex_space(&l);
			snprintf(word, sizeof(word), "%.*s",
				 (int)(l.end - l.p < 5 ? l.end - l.p : 5), l.p);
			if (strncmp(word, "True", 4) == 0) {
				h->fortran = true;
				l.p += 4;
			} else if (strncmp(word, "False", 5) == 0) {
				h->fortran = false;
				l.p += 5;
			} else {
				return npy_lex_fail(&l, "fortran_order is not True or False");
			}
			seen_order = true;
		} else if (strcmp(key, "shape") == 0) {
			if (npy_lex_shape(&l, h->shape, NPY_MAX_DIMS, &h->ndim))
				return -1;
			seen_shape = true;
		} else {
			return npy_lex_fail(&l, "unexpected key in header dict");
		}
		if (!npy_lex_accept(&l, ',')) {
			if (npy_lex_expect(&l, '}'))
				return -1;
			break;
		}
	}
	if (!seen_descr || !seen_order || !seen_shape) {
		l.p = l.start + pre;
		return npy_lex_fail(&l, !seen_descr   ? "header dict has no 'descr'"
					: !seen_order ? "header dict has no 'fortran_order'"
						      : "header dict has no 'shape'");
	}
	n = 1;
	for (int i = 0; i < h->ndim; i++)
		if (__builtin_mul_overflow(n, h->shape[i], &n))
			return npy_lex_fail(&l, "shape overflows 64 bits");
	h->nelem = n;
	if (__builtin_mul_overflow(n, h->itemsize, &h->nbytes))
		return npy_lex_fail(&l, "array size overflows 64 bits");
	return 0;
}

size_t npy_build(char *buf, size_t cap, const char *descr, bool fortran, const uint64_t *shape,
		 int ndim)
{
	char dict[2048];
	size_t n, pre, total;
	int len;

	len = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': %s, 'shape': (", descr,
		       fortran ? "True" : "False");
	for (int i = 0; i < ndim && len > 0 && (size_t)len < sizeof(dict); i++)
		len +=
		    snprintf(dict + len, sizeof(dict) - len, "%s%" PRIu64, i ? ", " : "", shape[i]);
	if (len > 0 && (size_t)len < sizeof(dict))
		len += snprintf(dict + len, sizeof(dict) - len, "%s), }", ndim == 1 ? "," : "");
	if (len <= 0 || (size_t)len >= sizeof(dict))
		return 0;
	n = (size_t)len;
	/* Version 1.0 holds a 16-bit header length; 2.0 a 32-bit one. */
	pre = 10;
	total = (pre + n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
	if (total - pre > 65535) {
		pre = 12;
		total = (pre + n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
	}
	if (total > cap)
		return 0;
	memcpy(buf, npy_magic, sizeof(npy_magic));
	buf[6] = pre == 10 ? 1 : 2;
	buf[7] = 0;
	if (pre == 10) {
		buf[8] = (char)((total - pre) & 0xff);
		buf[9] = (char)((total - pre) >> 8);
	} else {
		for (int i = 0; i < 4; i++)
			buf[8 + i] = (char)(((total - pre) >> (8 * i)) & 0xff);
	}
	memcpy(buf + pre, dict, n);
	memset(buf + pre + n, ' ', total - pre - n - 1);
	buf[total - 1] = '\n';
	return total;
}

void npy_shape_str(const struct npy_header *h, char *buf, size_t len)
{
	size_t n = 0;

	n += snprintf(buf + n, len - n, "(");
	for (int i = 0; i < h->ndim && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%" PRIu64, i ? ", " : "", h->shape[i]);
	if (n < len)
		snprintf(buf + n, len - n, "%s)", h->ndim == 1 ? "," : "");
}

/* ---- generation ----------------------------------------------------------------------- */

struct fgen {
	struct run *run;
	struct ds_file *file;
	struct io io;
	struct sfile *f;
	bool written;
};

static int npy_create(struct fgen **gp, struct run *run, struct ds_file *file, unsigned flags)
{
	struct fgen *g;
	int rc;

	g = calloc(1, sizeof(*g));
	if (!g)
		return run_fail(run, -ENOMEM, "cannot allocate npy writer for '%s'", file->path);
	g->run = run;
	g->file = file;
	g->io = (struct io){.run = run, .transfer = run->cfg.storage.transfer_size};
	rc = io_open(&g->io, &g->f, file->path, STORAGE_O_WRITE);
	if (rc) {
		free(g);
		return rc;
	}
	*gp = g;
	return 0;
}

static int npy_append(struct fgen *g, uint64_t index, const void *sample, size_t len)
{
	char hdr[NPY_PREFIX_BYTES * 2];
	uint64_t shape = len;
	size_t hlen;
	int rc;

	if (g->written || index != 0)
		return run_fail(g->run, -FB_EINTERNAL,
				"npy file '%s' holds one sample; asked to append sample %" PRIu64,
				g->file->path, index);
	hlen = npy_build(hdr, sizeof(hdr), "|u1", false, &shape, 1);
	if (!hlen)
		return run_fail(g->run, -FB_EINTERNAL, "npy header for '%s' does not fit",
				g->file->path);
	rc = io_pwrite(&g->io, g->f, hdr, hlen, 0);
	if (!rc)
		rc = io_pwrite(&g->io, g->f, sample, len, hlen);
	g->written = rc == 0;
	return rc;
}

static int npy_finish(struct fgen *g)
{
	int rc, rc2;

	rc = io_sync(&g->io, g->f);
	rc2 = io_close(&g->io, g->f);
	if (!rc)
		rc = rc2;
	if (!rc && !g->written)
		rc = run_fail(g->run, -FB_EINTERNAL, "npy file '%s' finished without its sample",
			      g->file->path);
	free(g);
	return rc;
}

/* ---- reading -------------------------------------------------------------------------- */

struct freader {
	struct run *run;
	struct io *io;
	struct sfile *f;
	const char *path;
	struct npy_header h;
};

/* Reads and checks the header of an open file: one read of NPY_PREFIX_BYTES (numpy's usual
 * header size), a second only for longer headers. The data must fill the file exactly. */
static int npy_read_header(struct run *run, struct io *io, struct sfile *f, const char *path,
			   struct npy_header *h)
{
	char first[NPY_PREFIX_BYTES], why[256], shape[256];
	char *big = NULL;
	const char *hdr = first;
	uint64_t size;
	size_t got, more;
	int rc;

	rc = io_pread_upto(io, f, first, sizeof(first), 0, &got);
	if (rc)
		return rc;
	if (npy_preamble(first, got, 0, h, why, sizeof(why)))
		return run_fail(run, -FB_EFORMAT, "bad NPY header in '%s': %s", path, why);
	if (h->data_off > got) {
		big = malloc(h->data_off);
		if (!big)
			return run_fail(run, -ENOMEM, "cannot allocate NPY header of '%s'", path);
		memcpy(big, first, got);
		rc = io_pread_upto(io, f, big + got, h->data_off - got, got, &more);
		if (rc)
			goto out_free;
		got += more;
		hdr = big;
	}
	if (npy_parse(hdr, got, 0, h, why, sizeof(why))) {
		rc = run_fail(run, -FB_EFORMAT, "bad NPY header in '%s': %s", path, why);
		goto out_free;
	}
	rc = io_size(io, f, &size);
	if (rc)
		goto out_free;
	if (size < h->data_off || size - h->data_off != h->nbytes) {
		npy_shape_str(h, shape, sizeof(shape));
		rc = run_fail(run, -FB_EFORMAT,
			      "bad NPY header in '%s': shape %s × %" PRIu64
			      " bytes does not match %" PRIu64 " data bytes at offset %" PRIu64,
			      path, shape, h->itemsize, size > h->data_off ? size - h->data_off : 0,
			      h->data_off);
		goto out_free;
	}
out_free:
	free(big);
	return rc;
}

static int npy_open(struct freader **rp, struct run *run, struct ds_file *file, struct io *io)
{
	struct freader *r;
	int rc;

	r = calloc(1, sizeof(*r));
	if (!r)
		return run_fail(run, -ENOMEM, "cannot allocate npy reader for '%s'", file->path);
	r->run = run;
	r->io = io;
	r->path = file->path;
	rc = io_open(io, &r->f, file->path, STORAGE_O_READ);
	if (rc)
		goto out_free;
	rc = npy_read_header(run, io, r->f, file->path, &r->h);
	if (rc)
		goto out_close;
	*rp = r;
	return 0;
out_close:
	io_close(io, r->f);
out_free:
	free(r);
	return rc;
}

static int npy_read_sample(struct freader *r, uint64_t index, void *buf, size_t cap, size_t *len)
{
	int rc;

	if (index != 0)
		return run_fail(r->run, -FB_EINTERNAL,
				"npy file '%s' holds one sample; asked for sample %" PRIu64,
				r->path, index);
	if (r->h.nbytes > cap)
		return run_fail(r->run, -FB_EDATASET,
				"array of %" PRIu64
				" bytes in '%s' exceeds the %zu-byte sample buffer",
				r->h.nbytes, r->path, cap);
	rc = io_pread(r->io, r->f, buf, r->h.nbytes, r->h.data_off);
	if (rc)
		return rc;
	*len = r->h.nbytes;
	return 0;
}

static int npy_close(struct freader *r)
{
	int rc = io_close(r->io, r->f);

	free(r);
	return rc;
}

/* Where the sample lies in a file feedbench wrote (its header has a known length): for
 * collective reads and for naming the file offset of a verification failure. The data
 * offset of a file written by another tool is known only once its header is read:
 * -ENOTSUP. */
static int npy_extent(struct run *run, struct ds_file *file, uint64_t index, uint64_t *off,
		      uint64_t *len)
{
	char hdr[NPY_PREFIX_BYTES * 2];
	uint64_t n;

	/* No message: train.c asks for extents to name the offset of a verification failure. */
	if (!run->ds.generated || index != 0)
		return -ENOTSUP;
	n = dataset_sample_size(&run->ds, file->index, 0);
	*off = npy_build(hdr, sizeof(hdr), "|u1", false, &n, 1);
	*len = n;
	return 0;
}

static int npy_probe(struct run *run, const char *path, struct probe_info *info)
{
	struct io io = {.run = run};
	struct npy_header h;
	struct sfile *f;
	char shape[200];
	int rc, rc2;

	rc = io_open(&io, &f, path, STORAGE_O_READ);
	if (rc)
		return rc;
	rc = npy_read_header(run, &io, f, path, &h);
	rc2 = io_close(&io, f);
	if (rc || rc2)
		return rc ? rc : rc2;
	npy_shape_str(&h, shape, sizeof(shape));
	info->nsamples = 1;
	info->max_sample = h.nbytes;
	info->data_bytes = h.nbytes;
	snprintf(info->detail, sizeof(info->detail), "npy v%u.%u %.63s %.150s%s", h.major, h.minor,
		 h.descr, shape, h.fortran ? " fortran" : "");
	return 0;
}

static const char *const npy_globs[] = {".npy", NULL};

const struct format_ops npy_format = {
    .version = FORMAT_OPS_VERSION,
    .name = "npy",
    .ext = ".npy",
    .globs = npy_globs,
    .caps = FORMAT_CAP_FILE_PER_SAMPLE | FORMAT_CAP_MPIIO,
    .shared_note = "npy stores one sample per file, so ranks have nothing to share; use "
		   "file_access = per_rank, or npz for many samples per file",
    .create = npy_create,
    .append = npy_append,
    .finish = npy_finish,
    .open = npy_open,
    .read_sample = npy_read_sample,
    .close = npy_close,
    .probe = npy_probe,
    .extent = npy_extent,
};
