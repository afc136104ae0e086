/* NPY headers, shared by the npy and npz formats: building them for generation and parsing
 * the ones numpy writes (versions 1.0, 2.0 and 3.0).
 *
 * A header is the magic "\x93NUMPY", major and minor version, the header length (2 bytes
 * little endian in v1, 4 in v2 and v3) and a Python dict literal with the keys descr,
 * fortran_order and shape, padded with spaces and a newline so the data starts at a multiple
 * of 64 bytes.
 */
#ifndef FEEDBENCH_NPY_H
#define FEEDBENCH_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NPY_MAX_DIMS 64
#define NPY_ALIGN    64
/* numpy's usual preamble + header length: one read of this size gets the whole header of an
 * array of up to a few dimensions. */
#define NPY_PREFIX_BYTES 128
/* Longer headers are refused: numpy itself refuses headers over 10 000 bytes unless told. */
#define NPY_HEADER_MAX (1u << 20)

struct npy_header {
	unsigned major, minor;
	uint64_t data_off; /* preamble + header: where the data begins */
	uint64_t itemsize; /* bytes per element of descr */
	uint64_t nelem;	   /* product of shape (1 for shape ()) */
	uint64_t nbytes;   /* nelem * itemsize */
	bool fortran;	   /* fortran_order */
	int ndim;
	uint64_t shape[NPY_MAX_DIMS];
	char descr[64]; /* descr as written ("<f4"), "[...]" abbreviated for structured dtypes */
};

/* From the first bytes of a file (len >= 12, or fewer when the file is shorter): the version
 * and the data offset, so the caller knows how much to read before npy_parse(). `base` is
 * the offset of buf in the file, used in the reason written to why. Returns 0 or -1. */
int npy_preamble(const void *buf, size_t len, uint64_t base, struct npy_header *h, char *why,
		 size_t whylen);

/* Parses the whole header (buf holds at least h->data_off bytes, as npy_preamble() said).
 * Returns 0 or -1 with the reason, naming the offset, in why. */
int npy_parse(const void *buf, size_t len, uint64_t base, struct npy_header *h, char *why,
	      size_t whylen);

/* Writes a header for an array with the given descr ("|u1"), order and shape into buf;
 * returns its length (the data offset, a multiple of 64) or 0 when cap is too small.
 * Version 1.0 when the header fits in 65535 bytes, else 2.0. */
size_t npy_build(char *buf, size_t cap, const char *descr, bool fortran, const uint64_t *shape,
		 int ndim);

/* "(3, 224, 224)", "(5,)" or "()" as numpy prints a shape. */
void npy_shape_str(const struct npy_header *h, char *buf, size_t len);

#endif
