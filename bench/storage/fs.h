/* File-system detection and striping (bench/storage/fsdetect.c, stripe.c).
 *
 * Lustre cannot be reached from CI machines, so the calls that touch the file system go
 * through struct fs_sys, which tests replace with a fake (fake statfs answer, captured layout
 * calls). The real one is fs_sys_default.
 */
#ifndef FEEDBENCH_FS_H
#define FEEDBENCH_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct run;
struct fs_info;

struct stripe_layout {
	int64_t count;	      /* 0 = file-system default, -1 = all targets */
	uint64_t size;	      /* bytes; 0 = default (CephFS: stripe_unit) */
	int64_t offset;	      /* first target; -1 = any */
	uint64_t object_size; /* CephFS only; 0 = default */
	bool composite;	      /* [storage] stripe_layout is set (Lustre PFL) */
};

/* One component of a composite (progressive) layout: bytes [start, end) of a file. */
struct stripe_comp {
	uint64_t start, end; /* end: UINT64_MAX = end of file */
	int64_t count;	     /* stripes, >= 1 */
	uint64_t size;	     /* stripe size; 0 = [storage] stripe_size, or the default */
};
#define STRIPE_MAX_COMPS 16

/* Parses "2GiB:1, 4GiB:4, eof:16" (END:COUNT[:SIZE] per component): ends increasing and
 * multiples of 64 KiB, counts >= 1, the last component ending at eof. Returns the number of
 * components (0 for an empty text) or -1 with the reason in why. */
int stripe_layout_parse(const char *text, struct stripe_comp *c, int max, char *why, size_t whylen);

/* The layout a new file in a folder gets without feedbench (a sweep reads it before its first
 * point sets one there, and measures its recommendation against it). */
struct fs_dir_layout {
	bool known;	      /* read (or nothing stripes here) */
	bool can_stripe;      /* Lustre or CephFS */
	char fs[32];	      /* "ext4", "cephfs", "lustre" */
	int64_t stripe_count; /* the folder's default stripe count (0: unknown, -1: every target) */
	char text[384]; /* "ceph.dir.layout of /mnt/c/x: stripe_unit=... stripe_count=1 ..." */
};
/* Reads it for dir (its nearest existing parent when dir does not exist yet): Lustre's default
 * striping through liblustreapi (what `lfs getstripe -d` shows), CephFS's ceph.dir.layout
 * (inherited from the nearest folder up to the mount that has one, else the file system's
 * default: one object per stripe set, stripe_count 1), or "no striping here". Read-only. */
int fs_dir_layout(const char *dir, struct fs_dir_layout *out);
/* Detects the file system holding `dir` (statfs magic + /proc/self/mounts). */
int fs_detect(const char *dir, struct fs_info *fs);

/* Before generation: applies the requested layout to the data folder (per-rank files) or
 * records that shared files get it at creation; on file systems that cannot stripe, warns once
 * ("striping is not supported on ext4"). Adds "stripe_requested" to run->info_storage. */
int stripe_prepare(struct run *run);
/* Creates `path` with the requested layout when striping applies (shared files); 0 and no
 * action otherwise. Called before the format opens the file for writing. */
int stripe_create_file(struct run *run, const char *path);
/* After generation, rank 0: reads back the layout of the dataset (Lustre: its first file;
 * CephFS: every file, and the OSDs holding each file's objects) into "stripe_effective". */
int stripe_readback_dataset(struct run *run);
/* Reads back the layout of `path` and records "stripe_effective" (an object, or the string
 * "unsupported (ext4)"), with a warning when it differs from the request. */
int stripe_readback(struct run *run, const char *path);
/* Adds striping hints (both spellings) to an MPI_Info for shared files. */
void stripe_hints(struct run *run, void *mpi_info /* MPI_Info * */);

/* ---- between stripe.c and its CephFS half (stripe_ceph.c) ------------------------------- */

struct fs_sys;
/* True when files take the folder's layout (the format's library creates or renames them). */
bool ceph_uses_dir_layout(const struct run *run);
/* "stripe_unit=1048576 stripe_count=4 object_size=4194304": the fields asked for. */
void ceph_layout_value(const struct stripe_layout *l, char *buf, size_t len);
/* Number of RADOS objects of a file of `size` bytes (numbered 0 .. n-1). */
uint64_t ceph_object_count(uint64_t size, uint64_t stripe_unit, uint64_t stripe_count,
			   uint64_t object_size);
int ceph_prepare(struct run *run, const struct stripe_layout *l);
int ceph_create_file(struct run *run, const char *path, const struct stripe_layout *l);
int ceph_readback(struct run *run, const struct stripe_layout *want);

/* Composite layouts on Lustre (stripe_pfl.c), through liblustreapi's layout API. */
int pfl_prepare(struct run *run, const struct stripe_comp *c, int n);
int pfl_create_file(struct run *run, const char *path, const struct stripe_comp *c, int n);
/* Reads the components of a composite layout; false when the library lacks the calls or
 * the layout is not composite (then *rc is 0). */
bool pfl_readback(struct run *run, void *lib, const char *path, int *rc);
/* The components as summary.json records them: [{start, end, count, size}]. */
json_t *pfl_json(const struct stripe_comp *c, int n);

#endif
