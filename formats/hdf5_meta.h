/* The HDF5 format's shared part (formats/hdf5.c is the plug-in): the process-wide lock every
 * HDF5 call holds, error text, file access property lists, and a file's dataset as index()
 * opens it and probe() finds it in files written by other tools (formats/hdf5_meta.c). */
#ifndef FEEDBENCH_HDF5_META_H
#define FEEDBENCH_HDF5_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hdf5.h>

struct run;
struct ds_file;
struct probe_info;

#define HDF5_RECORDS "records"
#define HDF5_LABELS  "labels"
#define HDF5_LENGTHS "lengths"

/* file->meta: the file open once per rank (shared by the reader threads) and its geometry. */
struct hdf5_meta {
	hid_t fid, dset, dxpl;
	hid_t mtype; /* native type the rows are read as */
	int ndims;
	hsize_t dims[H5S_MAX_RANK];
	uint64_t row_elems; /* elements per sample (product of dims[1..]) */
	size_t elem;	    /* bytes per element */
	int64_t *lengths;   /* bytes of each sample when `lengths` exists, else NULL */
	bool mpio, collective;
	char name[256];	  /* dataset read */
	uint8_t *scratch; /* collective reads land here, then are scattered */
	size_t scratch_cap;
	uint64_t mode_count[5]; /* collective reads by actual I/O mode */
};

/* Every HDF5 call is made between hdf5_enter() and hdf5_leave() (the library is not
 * thread-safe); hdf5_enter() also turns off HDF5's own error printing. */
void hdf5_enter(void);
void hdf5_leave(void);
/* The most specific text on HDF5's error stack ("truncated file: eof = ..."), then clears it. */
const char *hdf5_why(char *buf, size_t len);
/* Closes id without losing the error stack of an earlier failure. */
void hdf5_quiet_close(herr_t (*close)(hid_t), hid_t id);
/* File access: sec2 for a file of one rank, MPI-IO on run->comm for a file every rank opens;
 * collective metadata operations when coll_meta. Negative on failure. */
hid_t hdf5_fapl(struct run *run, bool mpio, bool coll_meta);

static inline uint64_t hdf5_sample_bytes(const struct hdf5_meta *m, uint64_t index)
{
	return m->lengths ? (uint64_t)m->lengths[index] : m->row_elems * m->elem;
}

/* The format's index, unindex and probe (struct format_ops, formats/format.h). */
int hdf5_index(struct run *run, struct ds_file *file);
void hdf5_unindex(struct ds_file *file);
int hdf5_probe(struct run *run, const char *path, struct probe_info *info);

#endif
