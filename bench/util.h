/* Small file-system helpers shared by results, manifest and sweeps. */
#ifndef FEEDBENCH_UTIL_H
#define FEEDBENCH_UTIL_H

#include <stddef.h>

/* mkdir -p; 0 or -errno. */
int util_mkdirs(const char *path, unsigned mode);
/* Writes data to path atomically: a temporary name beside it, fsync, rename, fsync of the
 * folder. Either the old file or the complete new one exists afterwards. 0 or -errno. */
int util_write_atomic(const char *path, const void *data, size_t len);
/* fsync a folder (after renames into it). */
int util_fsync_dir(const char *dir);
/* rm -r; 0 or -errno. */
int util_remove_tree(const char *path);
/* Current UTC time as ISO-8601 ("2026-11-30T10:41:07Z") and compact ("20261130T104107Z"). */
void util_utc_iso(char *buf, size_t len);
void util_utc_compact(char *buf, size_t len);

#endif
