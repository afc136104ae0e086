/* File-system detection and striping (bench/storage/fsdetect.c, stripe.c).
 *
 * Lustre cannot be reached from CI machines, so the calls that touch the file system go
 * through struct fs_sys, which tests replace with a fake (fake statfs answer, captured layout
 * calls). The real one is fs_sys_default.
 */
#ifndef FEEDBENCH_FS_H
#define FEEDBENCH_FS_H

#include <stdint.h>
#include <jansson.h>

struct run;
struct fs_info;

struct stripe_layout {
	int64_t count;	/* 0 = file-system default, -1 = all targets */
	uint64_t size;	/* bytes; 0 = default */
	int64_t offset; /* first target; -1 = any */
};

/* Detects the file system holding `dir` (statfs magic + /proc/self/mounts). */
int fs_detect(const char *dir, struct fs_info *fs);

/* Before generation: applies the requested layout to the data folder (per-rank files) or
 * records that shared files get it at creation; on file systems that cannot stripe, warns once
 * ("striping is not supported on ext4"). Adds "stripe_requested" to run->info_storage. */
int stripe_prepare(struct run *run);
/* Creates `path` with the requested layout when striping applies (shared files); 0 and no
 * action otherwise. Called before the format opens the file for writing. */
int stripe_create_file(struct run *run, const char *path);
/* Reads back the layout of `path` and records "stripe_effective" (an object, or the string
 * "unsupported (ext4)"), with a warning when it differs from the request. */
int stripe_readback(struct run *run, const char *path);
/* Adds striping hints (both spellings) to an MPI_Info for shared files. */
void stripe_hints(struct run *run, void *mpi_info /* MPI_Info * */);

#endif
