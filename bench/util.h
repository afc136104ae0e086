/* Small file-system helpers shared by results, manifest and sweeps. */
#ifndef FEEDBENCH_UTIL_H
#define FEEDBENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Drops this node's page cache (sync, then 3 > /proc/sys/vm/drop_caches). 0: dropped;
 * -EACCES / -EPERM / -EROFS: not permitted (root only); another -errno: failed. why says what
 * was done or why not. */
int util_drop_caches(char *why, size_t len);
/* mkdir -p; 0 or -errno. */
int util_mkdirs(const char *path, unsigned mode);
/* rm -r; 0 or -errno. */
int util_remove_tree(const char *path);
/* Current UTC time as ISO-8601 ("2026-11-30T10:41:07Z") and compact ("20261130T104107Z"). */
void util_utc_iso(char *buf, size_t len);
void util_utc_compact(char *buf, size_t len);

/* Calls fn(ctx, path) for every file called name below dir, down to max_depth folders;
 * hidden entries (a result being written, a baseline being saved) are skipped. Stops at the
 * first non-zero return of fn and returns it; 0 otherwise. An unreadable folder is skipped. */
int util_walk_files(const char *dir, const char *name, int max_depth,
		    int (*fn)(void *ctx, const char *path), void *ctx);

/* Reads a whole file (NUL-terminated, malloc'd); len may be NULL. A FIFO, folder or device is
 * refused without blocking (-FB_ENOTREG). 0 or -errno. Files are written with
 * safe_write_atomic (safefile.h). */
int util_read_file(const char *path, char **text, size_t *len);

/* Writes one CSV field: as it is, or quoted (quotes doubled) when it holds a comma, a quote or
 * a newline. */
void util_csv_field(FILE *f, const char *s);

/* What a result says about the machine it ran on (summary.json "host", baseline fingerprints). */
struct util_host {
	char hostname[256];
	char cpu_model[160]; /* /proc/cpuinfo "model name" (or "Processor", "cpu"); "unknown" */
	int cpus;	     /* online */
	uint64_t memory_bytes;
	char kernel[160]; /* uname: "Linux 6.1.0-26-amd64 x86_64" */
};
void util_host_describe(struct util_host *h);

/* The git commit the run belongs to: $FEEDBENCH_GIT_COMMIT, else the commit CI systems export
 * ($GITHUB_SHA, $CI_COMMIT_SHA, $GIT_COMMIT, $BUILDKITE_COMMIT), else HEAD of the git
 * checkout holding the current folder (read from .git, no git process). Returns 0 and fills
 * commit (hex) and source (the variable's name, or ".git"); -ENOENT when none is known. */
int util_git_commit(char *commit, size_t len, char *source, size_t slen);

#endif
