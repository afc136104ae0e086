/* Files and folders in places others can write to (shared scratch folders, results folders,
 * data folders): nothing feedbench writes may follow a link someone planted, reuse a name
 * someone else holds, or block on a FIFO.
 *
 * Contract for every writer:
 * - a file is written under a fresh hidden temporary name beside its final one, created with
 *   O_CREAT|O_EXCL|O_NOFOLLOW (a link or anything else already there is never opened),
 *   fsynced, renamed, and its folder fsynced;
 * - a folder is claimed with mkdir, which fails when anything holds the name; a temporary
 *   folder is a fresh mkdtemp name, never an existing folder;
 * - a folder takes its final name with a rename that never replaces anything.
 * Contract for readers: a path is opened without blocking (O_NONBLOCK), with O_NOFOLLOW where
 * the path is one feedbench made, and anything but a regular file is refused (-FB_ENOTREG)
 * before a byte is read.
 * Names that come from configs and JSON inputs and become part of a path are single path
 * components, checked once with safe_name_check().
 */
#ifndef FEEDBENCH_SAFEFILE_H
#define FEEDBENCH_SAFEFILE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* 0 when name can be one path component of something feedbench writes: not empty, not "."
 * or "..", no '/', no leading '.' (hidden names are feedbench's unfinished files), no control
 * characters, at most 200 bytes. Otherwise -FB_ECONFIG and why (a phrase) in why. */
int safe_name_check(const char *name, char *why, size_t len);

/* Writes data to path, by one rule for every name feedbench writes: nothing or a regular
 * file at path is replaced atomically (see the contract above: either the old file or the
 * complete new one exists afterwards); a character device or a FIFO is written into, never
 * replaced (a FIFO without a reader is -FB_ENOREADER at once, not a hang); a folder, symbolic
 * link, socket or block device is refused (-FB_ENOTREG). 0 or a negative code (fb_strerror). */
int safe_write_atomic(const char *path, const void *data, size_t len);

/* The check of a path the user names for an output (import-dlio -o, compare --json, ...),
 * made before any work: 0 when safe_write_atomic may write there (nothing, a regular file, a
 * character device or a FIFO); otherwise -FB_EUSAGE with the message ("cannot write 'X': it
 * is a folder ...") in why. */
int safe_output_check(const char *path, char *why, size_t len);

/* Makes a fresh folder "<parent>/.<base>.tmp-XXXXXX" (mkdtemp) and writes its path to out.
 * 0 or -errno. */
int safe_tmpdir(const char *parent, const char *base, char *out, size_t len);

/* Claims path with mkdir: -EEXIST when anything holds the name. 0 or -errno. */
int safe_claim_dir(const char *path, unsigned mode);

/* The one folder fsync: fsync(2) of dir, opened O_DIRECTORY (after a rename or a create in
 * it). A file system that cannot fsync a folder (EINVAL) makes its entries durable otherwise
 * (or never): no error, as fsync(2) documents. 0 or -errno. */
int safe_sync_dir(const char *dir);

/* The one full-write loop: write(2) until all of data is written, a short write continued and
 * EINTR retried; a write of 0 bytes is -EIO. 0 or -errno. */
int safe_write_all(int fd, const void *data, size_t len);

/* Renames from to to, never replacing what holds the name to (-EEXIST), then fsyncs the
 * folder of to. Works for files and folders. 0 or -errno. */
int safe_rename_noreplace(const char *from, const char *to);

/* Renames folder from to "<base>", or "<base>-2" ... "<base>-999" when taken, never replacing
 * anything; the name taken is written to out. 0 or -errno (-EEXIST after 999 tries). */
int safe_rename_unique(const char *from, const char *base, char *out, size_t len);

/* Opens path for reading (flags added to O_RDONLY|O_CLOEXEC|O_NONBLOCK; O_NONBLOCK is cleared
 * again once the file is known to be regular). nofollow: a symbolic link in the last
 * component is refused. Returns the descriptor, -FB_ENOTREG for anything but a regular file,
 * or -errno. */
int safe_open_read(const char *path, int flags, bool nofollow);

/* Opens path for writing a file feedbench owns (a dataset file): created when missing, never
 * through a symbolic link, refused when it is not a regular file or has other hard links;
 * truncated only after those checks when truncate is set. extra is added to the open flags
 * (O_DIRECT). Returns the descriptor, -FB_ENOTREG or -errno. */
int safe_open_write(const char *path, int extra, bool truncate);

/* 0 when path is missing or a regular file with one link (lstat: a link is not followed);
 * -FB_ENOTREG otherwise. What it is goes to what ("a symbolic link", "a FIFO", ...). */
int safe_check_owned(const char *path, const char **what);

/* The check of a folder feedbench makes and uses as its own (a rank's folder, a checkpoint's
 * step folder, a sweep's point): 0 when nothing holds path or it is a folder, as opened with
 * O_NOFOLLOW | O_DIRECTORY (a link there is never followed); -FB_ENOTREG when something else
 * holds the name (what it is goes to what: "a symbolic link", ...); -errno on other failures. */
int safe_own_dir_check(const char *path, const char **what);

/* "a symbolic link", "a FIFO", "a folder", "a socket", "a device", "a regular file". */
const char *safe_kind(unsigned mode);

/* json_load_file through safe_open_read (links followed: input paths are the user's). The
 * file is read whole with a few read() calls (not one per byte) and parsed with json_loadb;
 * files over 256 MiB are refused. NULL with err filled on any failure; a FIFO or folder is
 * refused without blocking. */
json_t *safe_json_load(const char *path, size_t flags, json_error_t *err);

/* The check of a sweep point's folder (points[i].dir of a sweep_results.json) shared by plot,
 * compare and history: one name inside the sweep folder (safe_name_check). 0, or
 * -FB_EFORMAT with the reason naming the point in why. */
int safe_point_dir_check(const char *dir, size_t i, char *why, size_t len);

/* safe_json_load, with nofollow: a symbolic link in the last component is refused (files
 * inside our own run, sweep and baseline folders). */
json_t *safe_json_load_at(const char *path, size_t flags, bool nofollow, json_error_t *err);

#endif
