#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "safefile.h"

int util_mkdirs(const char *path, unsigned mode)
{
	char buf[4096];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int util_remove_tree(const char *path)
{
	if (nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

void util_utc_iso(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void util_utc_compact(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y%m%dT%H%M%SZ", &tm);
}

static int util_walk(const char *dir, const char *name, int depth,
		     int (*fn)(void *ctx, const char *path), void *ctx)
{
	struct dirent *e;
	DIR *d;
	int rc = 0;

	if (depth < 0 || !(d = opendir(dir)))
		return 0;
	while (rc == 0 && (e = readdir(d))) {
		char path[4096];
		struct stat sb;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &sb) < 0)
			continue;
		if (S_ISDIR(sb.st_mode))
			rc = util_walk(path, name, depth - 1, fn, ctx);
		else if (strcmp(e->d_name, name) == 0)
			rc = fn(ctx, path);
	}
	closedir(d);
	return rc;
}

int util_walk_files(const char *dir, const char *name, int max_depth,
		    int (*fn)(void *ctx, const char *path), void *ctx)
{
	return util_walk(dir, name, max_depth, fn, ctx);
}

int util_read_file(const char *path, char **text, size_t *len)
{
	int fd = safe_open_read(path, 0, false);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (fd < 0)
		return fd;
	if (!f) {
		int e = -errno;
		close(fd);
		return e;
	}
	for (;;) {
		if (cap - n < 4096) {
			char *nb = realloc(buf, cap ? cap * 2 : 8192);
			if (!nb) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = nb;
			cap = cap ? cap * 2 : 8192;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		int e = errno ? -errno : -EIO;
		free(buf);
		fclose(f);
		return e;
	}
	fclose(f);
	buf[n] = '\0';
	*text = buf;
	if (len)
		*len = n;
	return 0;
}

void util_csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* ---- the host ------------------------------------------------------------------------- */

static void util_trim(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

void util_host_describe(struct util_host *h)
{
	static const char *const keys[] = {"model name", "Processor", "cpu model", "cpu"};
	char line[512];
	struct utsname u;
	FILE *f;
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

	memset(h, 0, sizeof(*h));
	if (gethostname(h->hostname, sizeof(h->hostname) - 1) < 0 || !h->hostname[0])
		snprintf(h->hostname, sizeof(h->hostname), "unknown");
	snprintf(h->cpu_model, sizeof(h->cpu_model), "unknown");
	f = fopen("/proc/cpuinfo", "r");
	for (size_t k = 0; f && k < sizeof(keys) / sizeof(keys[0]); k++) {
		size_t kl = strlen(keys[k]);
		bool found = false;

		rewind(f);
		while (!found && fgets(line, sizeof(line), f)) {
			char *colon = strchr(line, ':');
			if (strncmp(line, keys[k], kl) != 0 || !colon ||
			    (line[kl] != ' ' && line[kl] != '\t' && line[kl] != ':'))
				continue;
			colon++;
			while (*colon == ' ')
				colon++;
			util_trim(colon);
			snprintf(h->cpu_model, sizeof(h->cpu_model), "%s", colon);
			found = true;
		}
		if (found)
			break;
	}
	if (f)
		fclose(f);
	h->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	h->memory_bytes = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
	if (uname(&u) == 0)
		snprintf(h->kernel, sizeof(h->kernel), "%s %s %s", u.sysname, u.release, u.machine);
}

/* ---- the git commit --------------------------------------------------------------------- */

static bool util_is_hex_commit(const char *s)
{
	size_t n = strlen(s);

	if (n != 40 && n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static int util_read_line(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	int rc = -ENOENT;

	if (!f)
		return -errno;
	if (fgets(out, (int)len, f)) {
		util_trim(out);
		rc = 0;
	}
	fclose(f);
	return rc;
}

/* The folder of the repository's metadata: DIR/.git, or the gitdir a .git file names
 * (worktrees, submodules). */
static int util_git_dir(char *out, size_t len)
{
	char dir[4096], path[4200], line[4200];
	struct stat sb;

	if (!getcwd(dir, sizeof(dir)))
		return -errno;
	for (;;) {
		snprintf(path, sizeof(path), "%s/.git", dir);
		if (stat(path, &sb) == 0) {
			if (S_ISDIR(sb.st_mode)) {
				snprintf(out, len, "%s", path);
				return 0;
			}
			if (util_read_line(path, line, sizeof(line)) == 0 &&
			    strncmp(line, "gitdir: ", 8) == 0) {
				if (line[8] == '/')
					snprintf(out, len, "%s", line + 8);
				else
					snprintf(out, len, "%s/%s", dir, line + 8);
				return 0;
			}
			return -ENOENT;
		}
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return -ENOENT;
		*slash = '\0';
	}
}

/* HEAD: a commit (detached), or "ref: refs/heads/x" found loose or in packed-refs. */
static int util_git_head(const char *gitdir, char *commit, size_t len)
{
	char path[4200], line[4200], ref[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/HEAD", gitdir);
	if (util_read_line(path, line, sizeof(line)) < 0)
		return -ENOENT;
	if (strncmp(line, "ref: ", 5) != 0) {
		if (!util_is_hex_commit(line))
			return -ENOENT;
		snprintf(commit, len, "%s", line);
		return 0;
	}
	snprintf(ref, sizeof(ref), "%s", line + 5);
	snprintf(path, sizeof(path), "%s/%s", gitdir, ref);
	if (util_read_line(path, line, sizeof(line)) == 0 && util_is_hex_commit(line)) {
		snprintf(commit, len, "%s", line);
		return 0;
	}
	/* A worktree keeps its refs in the common folder. */
	snprintf(path, sizeof(path), "%s/commondir", gitdir);
	char common[4200] = "";
	if (util_read_line(path, line, sizeof(line)) == 0)
		snprintf(common, sizeof(common), "%s%s%s", line[0] == '/' ? "" : gitdir,
			 line[0] == '/' ? "" : "/", line);
	for (int pass = 0; pass < 2; pass++) {
		const char *g = pass ? common : gitdir;
		if (!g[0])
			continue;
		snprintf(path, sizeof(path), "%s/%s", g, ref);
		if (pass && util_read_line(path, line, sizeof(line)) == 0 &&
		    util_is_hex_commit(line)) {
			snprintf(commit, len, "%s", line);
			return 0;
		}
		snprintf(path, sizeof(path), "%s/packed-refs", g);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f)) {
			char *sp = strchr(line, ' ');
			util_trim(line);
			if (!sp || strcmp(sp + 1, ref) != 0)
				continue;
			*sp = '\0';
			if (util_is_hex_commit(line)) {
				snprintf(commit, len, "%s", line);
				fclose(f);
				return 0;
			}
		}
		if (f)
			fclose(f);
	}
	return -ENOENT;
}

int util_git_commit(char *commit, size_t len, char *source, size_t slen)
{
	static const char *const vars[] = {"FEEDBENCH_GIT_COMMIT", "GITHUB_SHA", "CI_COMMIT_SHA",
					   "GIT_COMMIT", "BUILDKITE_COMMIT"};
	char gitdir[4200];

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);
		if (v && *v) {
			snprintf(commit, len, "%s", v);
			snprintf(source, slen, "%s", vars[i]);
			return 0;
		}
	}
	if (util_git_dir(gitdir, sizeof(gitdir)) == 0 && util_git_head(gitdir, commit, len) == 0) {
		snprintf(source, slen, ".git");
		return 0;
	}
	return -ENOENT;
}

int util_drop_caches(char *why, size_t len)
{
	int fd, err = 0;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "3\n", 2) != 2)
		err = errno ? errno : EIO;
	if (fd >= 0)
		close(fd);
	if (err)
		snprintf(why, len, "cannot write /proc/sys/vm/drop_caches: %s", strerror(err));
	else
		snprintf(why, len, "synced, then 3 written to /proc/sys/vm/drop_caches");
	return -err;
}
