/* Format plug-ins: how a dataset is laid out in files, written and read.
 *
 * One file per format (formats/<name>.c) defining `const struct format_ops <name>_format`,
 * plus one line in formats/registry.c. Formats do their I/O through the io_* wrappers of
 * bench/storage/storage.h (so every format is measured the same way), except formats with
 * FORMAT_CAP_OWNS_IO (HDF5), which call io_account() for each read they issue themselves.
 *
 * Samples are opaque bytes to a format: the core hands append() the whole sample (the 40-byte
 * sample header + payload of formats/sample.h) and expects read_sample() to return exactly
 * those bytes.
 *
 * Threading: index()/unindex() run once per file per rank on the main thread; open(),
 * read_sample(), close() run on reader threads, one freader per thread per file.
 */
#ifndef FEEDBENCH_FORMAT_H
#define FEEDBENCH_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bench/storage/storage.h"
#include "../bench/dsfile.h"

struct run;
struct fgen;	/* format private: one file being generated */
struct freader; /* format private: one file open for reading on one thread */

/* What a reader of one dataset file opened through the io wrappers holds; formats that read
 * that way (raw, tfrecord) make it the first member of their reader. */
struct freader_file {
	struct run *run;
	struct ds_file *file;
	struct io *io;
	struct sfile *sf;
};

/* Allocates a zeroed reader of size bytes (a struct starting with struct freader_file) and
 * opens file through io_open_file(). 0 and *out, or a negative code (recorded in run). */
int freader_file_open(size_t size, struct run *run, struct ds_file *file, struct io *io,
		      void **out);
/* Closes the file with io_close_file(); the caller frees its reader. */
int freader_file_close(struct freader_file *b);

/* The writer of a file that holds one sample (npy, jpeg, png). Such a format defines
 * `struct fgen { struct fgen_one one; };`, makes it with fgen_one_create(), checks each
 * append with fgen_one_check(), sets written once its bytes are written, and uses
 * fgen_one_finish() as its finish. */
struct fgen_one {
	struct run *run;
	struct ds_file *file;
	struct io io;
	struct sfile *f;
	const char *fmt; /* the format's name, for messages */
	bool written;
};
/* Allocates the writer and opens file for writing through the io wrappers. */
int fgen_one_create(struct fgen **gp, struct run *run, struct ds_file *file, const char *fmt);
/* 0 when index is the file's first and only sample, else an internal failure naming it. */
int fgen_one_check(const struct fgen_one *g, uint64_t index);
/* Syncs and closes the file (a failure when its sample was never written); frees g. */
int fgen_one_finish(struct fgen *g);

#define FORMAT_OPS_VERSION 1

#define FORMAT_CAP_SHARED	   0x01 /* ranks may read disjoint samples of the same files */
#define FORMAT_CAP_OWNS_IO	   0x02 /* does its own I/O (HDF5); storage back-end mapped */
#define FORMAT_CAP_FILE_PER_SAMPLE 0x04 /* one sample per file (npy) */
#define FORMAT_CAP_STREAM	   0x08 /* read sequentially per file (wds): shards are dealt */
#define FORMAT_CAP_PARALLEL_WRITE  0x10 /* all ranks may write disjoint samples of one file */
#define FORMAT_CAP_DIRECT	   0x20 /* O_DIRECT supported */
#define FORMAT_CAP_MPIIO	   0x40 /* readable through the mpiio back-end */
/* Its library writes another file and renames it (libzip): a layout set on the file at its
 * creation is lost, so striping goes on the folder. */
#define FORMAT_CAP_RENAMES 0x80
/* A sample is exactly the byte range extent() gives (no parse), and open() returns a reader
 * beginning with struct freader_file: the core may queue a batch's reads itself (io_depth). */
#define FORMAT_CAP_BYTE_RANGES 0x100
/* Samples are decoded on read (jpeg, png): [format.image] decode applies, and verification
 * checks the decoded pixels, so verify = true needs decode = true. */
#define FORMAT_CAP_DECODES 0x200
/* Each dataset file is a folder of the format's own files (a zarr array): the dataset's
 * checks accept a folder there, and the format opens what is inside. */
#define FORMAT_CAP_FOLDER 0x400
/* Generation writes each file through a library that opens it by path (libzip: npz), not
 * through the io_* wrappers: local files only, so back-ends of objects (s3) refuse it. */
#define FORMAT_CAP_WRITES_BY_PATH 0x800

/* Generation flags. */
#define FGEN_COLLECTIVE 0x1 /* every rank of run->comm calls create/append/finish for this file */

/* What probe() found in an existing file. */
struct probe_info {
	uint64_t nsamples;
	uint64_t max_sample; /* bytes */
	uint64_t data_bytes; /* sum of sample sizes */
	char detail[256];    /* "npy v2 uint8 (3, 224, 224)", recorded in summary.json */
};

struct format_ops {
	unsigned version; /* FORMAT_OPS_VERSION */
	const char *name; /* "tfrecord" */
	const char *ext;  /* ".tfrecord" */
	const char *const
	    *globs; /* extensions recognised when discovering: {".h5", ".hdf5", NULL} */
	unsigned caps;
	const char *shared_note; /* why shared access is refused, when it is */
	/* Set when the plug-in was not built: why ("libsnappy not found"). `feedbench list` shows
	 * it as not built and format_find() skips it, so a config naming it is refused. */
	const char *not_built;

	/* Generation: create a file, append its samples in index order (with FGEN_COLLECTIVE,
	 * each rank appends its own indices, still increasing), finish: flush, fsync, close.
	 * A failure of finish is fatal (ENOSPC/EIO). */
	int (*create)(struct fgen **g, struct run *run, struct ds_file *file, unsigned flags);
	int (*append)(struct fgen *g, uint64_t index, const void *sample, size_t len);
	int (*finish)(struct fgen *g);

	/* Optional: per-file metadata (offsets, member positions) computed once per rank. */
	int (*index)(struct run *run, struct ds_file *file);
	void (*unindex)(struct ds_file *file);

	/* Reading. read_sample() stores the sample's bytes in buf (cap >= file->max_sample) and
	 * their count in *len. Format-level corruption is -FB_EFORMAT with the format's own
	 * message, the file and the offset recorded through fb_fail(). */
	int (*open)(struct freader **r, struct run *run, struct ds_file *file, struct io *io);
	int (*read_sample)(struct freader *r, uint64_t index, void *buf, size_t cap, size_t *len);
	int (*close)(struct freader *r);

	/* Bring your own data: count samples and sizes of an existing file. */
	int (*probe)(struct run *run, const char *path, struct probe_info *info);

	/* Optional, for collective MPI-IO reads: the byte range of sample `index` in the file
	 * and how to turn those raw bytes into the sample (NULL parse: the range is the sample). */
	int (*extent)(struct run *run, struct ds_file *file, uint64_t index, uint64_t *off,
		      uint64_t *len);
	int (*parse)(struct run *run, struct ds_file *file, uint64_t index, const void *raw,
		     size_t rawlen, void *out, size_t cap, size_t *len);

	/* Optional, collective over run->comm (formats that own their I/O, e.g. HDF5 with
	 * transfer = collective): every rank reads its n samples of `file` (n may be 0) in one
	 * collective call. Same contract as collective_read() in workloads/workloads.h. */
	int (*read_collective)(struct run *run, struct ds_file *file, const uint64_t *idx,
			       uint64_t n, void *const *out, uint64_t cap, uint64_t *lens,
			       struct io *io);
};

extern const struct format_ops *const format_registry[];
const struct format_ops *format_find(const char *name);

#endif
