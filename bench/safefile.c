/* Safe files: see safefile.h for the contract every writer and reader follows. */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"

int safe_name_check(const char *name, char *why, size_t len)
{
	const char *reason = NULL;

	if (!name || !*name)
		reason = "it is empty";
	else if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		reason = "it names a folder ('.' or '..')";
	else if (strchr(name, '/'))
		reason = "it holds a '/' (it must be one name, not a path)";
	else if (name[0] == '.')
		reason = "it starts with '.' (hidden names are unfinished results)";
	else if (strlen(name) > 200)
		reason = "it is longer than 200 bytes";
	for (const unsigned char *p = (const unsigned char *)name; !reason && *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			reason = "it holds a control character";
	if (!reason)
		return 0;
	snprintf(why, len, "%s", reason);
	return -FB_ECONFIG;
}

const char *safe_kind(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFLNK:
		return "a symbolic link";
	case S_IFIFO:
		return "a FIFO";
	case S_IFDIR:
		return "a folder";
	case S_IFSOCK:
		return "a socket";
	default:
		return "a device";
	}
}

int safe_sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0 && errno != EINVAL)
		rc = -errno;
	close(fd);
	return rc;
}

/* The folder holding path, to disk (after a rename into it). */
static int fsync_parent(const char *path)
{
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s", path);
	return safe_sync_dir(dirname(dir));
}

/* Six random characters for a temporary name (from getrandom; the pid when it has none). */
static void random_suffix(char out[7])
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char r[6];

	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		unsigned v = (unsigned)getpid() ^ (unsigned)(size_t)out;
		for (int i = 0; i < 6; i++, v = v * 1103515245u + 12345u)
			r[i] = (unsigned char)(v >> 16);
	}
	for (int i = 0; i < 6; i++)
		out[i] = set[r[i] % (sizeof(set) - 1)];
	out[6] = '\0';
}

/* A fresh hidden file beside path: ".<name>.tmp-XXXXXX". */
static int create_temp(const char *path, char *tmp, size_t len)
{
	char copy[4096], dir[4096], sfx[7];
	const char *base;

	snprintf(copy, sizeof(copy), "%s", path);
	snprintf(dir, sizeof(dir), "%s", path);
	base = basename(copy);
	for (int tries = 0; tries < 100; tries++) {
		random_suffix(sfx);
		if ((size_t)snprintf(tmp, len, "%s/.%s.tmp-%s", dirname(dir), base, sfx) >= len)
			return -ENAMETOOLONG;
		snprintf(dir, sizeof(dir), "%s", path);
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

int safe_write_all(int fd, const void *data, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, (const char *)data + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

/* True for what an output is written into rather than replaced: a character device or a
 * FIFO. */
static bool is_stream(unsigned mode)
{
	return S_ISCHR(mode) || S_ISFIFO(mode);
}

/* A name for one of the process's own descriptors (/dev/stdout, /dev/stderr, /dev/fd/N,
 * /proc/self/fd/N): links the system made, written into whatever they lead to
 * (`--junit /dev/stdout > report.xml`). */
static bool is_fd_alias(const char *path)
{
	return strcmp(path, "/dev/stdout") == 0 || strcmp(path, "/dev/stderr") == 0 ||
	       strncmp(path, "/dev/fd/", 8) == 0 || strncmp(path, "/proc/self/fd/", 14) == 0;
}

/* How an output at path is written: 0 replaced (nothing or a regular file there), 1 written
 * into (a character device or a FIFO, also behind a link; anything behind a descriptor
 * alias), or -FB_ENOTREG (a folder, a socket, a block device, any other link) with what it is
 * in *what. -errno when path cannot be examined. */
static int output_kind(const char *path, const char **what)
{
	struct stat st, target;

	*what = NULL;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISREG(st.st_mode))
		return 0;
	if (is_stream(st.st_mode))
		return 1;
	if (S_ISLNK(st.st_mode) && stat(path, &target) == 0 &&
	    (is_stream(target.st_mode) || (is_fd_alias(path) && !S_ISDIR(target.st_mode))))
		return 1;
	*what = S_ISBLK(st.st_mode) ? "a block device" : safe_kind(st.st_mode);
	return -FB_ENOTREG;
}

int safe_output_check(const char *path, char *why, size_t len)
{
	const char *what;
	int rc = output_kind(path, &what);

	if (rc >= 0)
		return 0;
	if (rc == -FB_ENOTREG)
		snprintf(why, len,
			 "cannot write '%s': it is %s (an output replaces only a regular file, "
			 "and is written into a character device or a FIFO)",
			 path, what);
	else
		snprintf(why, len, "cannot write '%s': %s", path, strerror(-rc));
	return -FB_EUSAGE;
}

/* Writes into the character device or FIFO at path, or what a descriptor alias leads to
 * (never replaced nor truncated; appended to a regular file behind /dev/stdout). A FIFO is
 * opened without blocking: no process reading it is -FB_ENOREADER, not a hang. */
static int write_stream(const char *path, const void *data, size_t len)
{
	bool alias = is_fd_alias(path);
	struct stat st;
	int fd, rc;

	fflush(NULL); /* what was printed before comes first on a shared stdout */
	fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
			    (alias ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return errno == ENXIO ? -FB_ENOREADER : -errno;
	/* Swapped for something else since it was looked at: refused, never replaced. */
	if (fstat(fd, &st) < 0 || !(is_stream(st.st_mode) || (alias && S_ISREG(st.st_mode)))) {
		close(fd);
		return -FB_ENOTREG;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	rc = safe_write_all(fd, data, len);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

int safe_write_atomic(const char *path, const void *data, size_t len)
{
	const char *what;
	char tmp[4200];
	int fd, rc = output_kind(path, &what);

	/* One rule for every name written: a regular file (or nothing) is replaced, a device
	 * or FIFO written into, anything else (a folder, link, socket) refused. */
	if (rc != 0)
		return rc == 1 ? write_stream(path, data, len) : rc;
	fd = create_temp(path, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	rc = safe_write_all(fd, data, len);
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0) {
		unlink(tmp);
		return rc;
	}
	return fsync_parent(path);
}

int safe_tmpdir(const char *parent, const char *base, char *out, size_t len)
{
	if ((size_t)snprintf(out, len, "%s/.%s.tmp-XXXXXX", parent, base) >= len)
		return -ENAMETOOLONG;
	if (!mkdtemp(out))
		return -errno;
	chmod(out, 0755);
	return 0;
}

int safe_claim_dir(const char *path, unsigned mode)
{
	return mkdir(path, mode) < 0 ? -errno : 0;
}

int safe_rename_noreplace(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) < 0) {
		if (errno != EINVAL && errno != ENOSYS)
			return -errno;
		/* A file system without RENAME_NOREPLACE: claim the name with mkdir (a folder)
		 * or link (a file), then rename over the claim we hold. */
		struct stat st;
		if (lstat(from, &st) < 0)
			return -errno;
		if (S_ISDIR(st.st_mode)) {
			if (mkdir(to, 0700) < 0)
				return -errno;
			if (rename(from, to) < 0) {
				int err = -errno;
				rmdir(to);
				return err;
			}
		} else {
			if (link(from, to) < 0)
				return -errno;
			unlink(from);
		}
	}
	return fsync_parent(to);
}

int safe_rename_unique(const char *from, const char *base, char *out, size_t len)
{
	int rc = -EEXIST;

	for (int i = 1; i < 1000 && rc == -EEXIST; i++) {
		if (i == 1)
			snprintf(out, len, "%s", base);
		else
			snprintf(out, len, "%s-%d", base, i);
		rc = safe_rename_noreplace(from, out);
		/* ENOTEMPTY: rename(2) says so for a folder held by another folder. */
		if (rc == -ENOTEMPTY)
			rc = -EEXIST;
	}
	return rc;
}

int safe_open_read(const char *path, int flags, bool nofollow)
{
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags | (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0) {
		int err = -errno;
		if (err == -ELOOP && nofollow && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			return -FB_ENOTREG;
		return err;
	}
	if (fstat(fd, &st) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -FB_ENOTREG;
	}
	if (!(flags & O_NONBLOCK))
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int safe_open_write(const char *path, int extra, bool truncate)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | extra, 0644);

	if (fd < 0) {
		int err = -errno;
		/* ELOOP: a symbolic link; ENXIO: a FIFO without a reader. */
		if ((err == -ELOOP || err == -ENXIO) && lstat(path, &st) == 0 &&
		    !S_ISREG(st.st_mode))
			return -FB_ENOTREG;
		return err;
	}
	if (fstat(fd, &st) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode) || st.st_nlink > 1) {
		close(fd);
		return -FB_ENOTREG;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	if (truncate && st.st_size > 0 && ftruncate(fd, 0) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int safe_check_owned(const char *path, const char **what)
{
	struct stat st;

	*what = NULL;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISREG(st.st_mode) && st.st_nlink == 1)
		return 0;
	*what = S_ISREG(st.st_mode) ? "a file with other hard links" : safe_kind(st.st_mode);
	return -FB_ENOTREG;
}

int safe_own_dir_check(const char *path, const char **what)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	*what = NULL;
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == ENOENT)
		return 0;
	if (errno != ELOOP && errno != ENOTDIR)
		return -errno;
	if (lstat(path, &st) < 0)
		return -errno;
	*what = safe_kind(st.st_mode);
	return -FB_ENOTREG;
}

int safe_point_dir_check(const char *dir, size_t i, char *why, size_t len)
{
	char bad[160];

	if (!dir) {
		snprintf(why, len, "points[%zu] has no dir", i);
		return -FB_EFORMAT;
	}
	if (safe_name_check(dir, bad, sizeof(bad)) < 0) {
		snprintf(why, len, "points[%zu].dir '%.80s' is not a folder inside the sweep: %s",
			 i, dir, bad);
		return -FB_EFORMAT;
	}
	return 0;
}

/* Reads the whole regular file fd into a buffer: one read per chunk of the size fstat gives
 * (and one more to see the end), never more than SAFE_JSON_MAX bytes. */
#define SAFE_JSON_MAX ((size_t)256 << 20)

static int read_whole(int fd, char **out, size_t *outlen)
{
	struct stat st;
	size_t cap, len = 0;
	char *buf;

	if (fstat(fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size > SAFE_JSON_MAX)
		return -EFBIG;
	cap = (size_t)st.st_size + 1;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == cap) { /* the file grew while read */
			char *nb;
			if (cap > SAFE_JSON_MAX) {
				free(buf);
				return -EFBIG;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;
			free(buf);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

static void load_error(json_error_t *err, const char *path, const char *why)
{
	if (!err)
		return;
	memset(err, 0, sizeof(*err));
	snprintf(err->source, sizeof(err->source), "%s", path);
	snprintf(err->text, sizeof(err->text), "%s: %s", path, why);
}

json_t *safe_json_load(const char *path, size_t flags, json_error_t *err)
{
	return safe_json_load_at(path, flags, false, err);
}

json_t *safe_json_load_at(const char *path, size_t flags, bool nofollow, json_error_t *err)
{
	int fd = safe_open_read(path, 0, nofollow);
	size_t len = 0;
	char *buf = NULL;
	json_t *j;
	int rc;

	if (fd < 0) {
		load_error(err, path,
			   fd == -FB_ENOTREG
			       ? (nofollow ? "not a regular file (links are not followed)"
					   : "not a regular file")
			       : strerror(-fd));
		return NULL;
	}
	rc = read_whole(fd, &buf, &len);
	close(fd);
	if (rc < 0) {
		load_error(err, path,
			   rc == -EFBIG ? "larger than 256 MiB, not a feedbench JSON file"
					: strerror(-rc));
		return NULL;
	}
	j = json_loadb(buf, len, flags, err);
	if (!j && err)
		snprintf(err->source, sizeof(err->source), "%s", path);
	free(buf);
	return j;
}
