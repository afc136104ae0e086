/* Every check a run makes before it touches a file, in one function: `feedbench validate`,
 * `feedbench sweep --dry-run` and the start of a sweep (for every point) call it, and so does
 * the run itself, so a config they accept is one the run accepts.
 */
#ifndef FEEDBENCH_PREFLIGHT_H
#define FEEDBENCH_PREFLIGHT_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "run.h"

/* What the checks found out about the data folder (filled as far as they got). */
struct preflight {
	struct fs_info fs;	   /* file system holding data_dir (or its nearest parent) */
	bool fs_known;		   /* fs was detected */
	bool exists;		   /* data_dir is a folder */
	bool writable;		   /* it, or the parent it would be created in, accepts files */
	char parent[CFG_PATH_MAX]; /* the nearest existing folder when data_dir does not exist */
	bool manifest;		   /* holds a feedbench dataset manifest */
	bool manifest_matches;	   /* ... written for this config's dataset (reused as it is) */
	bool writes;		   /* the run will write there (generation, checkpoints, ior) */
	double data_bytes;	   /* training dataset, bytes (0: the workload reads none) */
	double host_memory;	   /* this node's RAM, bytes */
	bool cache_resident;	   /* data_bytes fits in RAM and the page cache is kept */
};

/* The whole check for nranks ranks: cfg_validate() (keys, combinations, the steps every rank
 * gets), then the data folder, read-only: a path that is not a folder, one the run would write
 * into and cannot, and under generate = never a folder without the dataset the run would read.
 * No MPI, no file created or changed. Returns 0 or the code the run would fail with (message
 * in err); pf (optional) receives what was found. */
int run_preflight(const struct config *cfg, int nranks, struct preflight *pf,
		  struct fb_errbuf *err);

/* The data folder part alone (run_preflight after cfg_validate): the run calls it on rank 0. */
int preflight_data_dir(const struct config *cfg, struct preflight *pf, struct fb_errbuf *err);

#endif
