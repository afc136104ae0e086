/* NPY headers (npy.h): parsing the ones numpy writes and building them, for the npy and npz
 * formats. A helper of both, not a format. */
#include "npy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
