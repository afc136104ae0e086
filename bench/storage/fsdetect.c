/* File-system detection: what holds the data folder, how big it is and whether it can stripe.
 *
 * statfs gives the truth about the type (its magic) and the sizes; /proc/self/mounts gives the
 * mount point, the device and a finer label (ext4 rather than the ext2/3/4 magic, nfs4,
 * fuse.sshfs). Nothing is created: a data folder that does not exist yet is looked up through
 * its first existing parent, which is where its files will land.
 */
#include "fs.h"
#include "fs_sys.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "../run.h"

struct fs_magic {
	uint32_t magic;
	const char *name;
};

/* statfs f_type values (linux/magic.h and the file systems' own sources). */
static const struct fs_magic fs_magics[] = {
    {0x0BD00BD0, "lustre"},    {0x47504653, "gpfs"},	{0x19830326, "beegfs"},
    {0x00006969, "nfs"},       {0x58465342, "xfs"},	{0x0000EF53, "ext4"},
    {0x01021994, "tmpfs"},     {0x794C7630, "overlay"}, {0x65735546, "fuse"},
    {0x00C36400, "ceph"},      {0x9123683E, "btrfs"},	{0x2FC12FC1, "zfs"},
    {0xF2F52010, "f2fs"},      {0xFF534D42, "cifs"},	{0xFE534D42, "smb2"},
    {0x73717368, "squashfs"},  {0x858458F6, "ramfs"},	{0x01021997, "9p"},
    {0x20030528, "orangefs"},  {0xAAD7AAEA, "panfs"},	{0x00004D44, "vfat"},
    {0x2011BAB0, "exfat"},     {0x01161970, "gfs2"},	{0x7461636F, "ocfs2"},
    {0xCA451A4E, "bcachefs"},  {0x00009FA0, "proc"},	{0x62656572, "sysfs"},
    {0x958458F6, "hugetlbfs"}, {0x5346414F, "afs"},
};

const char *fs_magic_name(uint64_t magic)
{
	for (size_t i = 0; i < sizeof(fs_magics) / sizeof(fs_magics[0]); i++)
		if (fs_magics[i].magic == (uint32_t)magic)
			return fs_magics[i].name;
	return NULL;
}

/* ---- the real calls ------------------------------------------------------------------------ */

static int fs_real_open(const char *path, int flags, mode_t mode)
{
	return open(path, flags, mode);
}

static int fs_real_ioctl(int fd, unsigned long request, void *arg)
{
	return ioctl(fd, request, arg);
}

static char *fs_real_read_mounts(void)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	char *text = NULL;
	size_t len = 0, cap = 0;
	char chunk[4096];
	size_t got;

	if (!f)
		return NULL;
	/* A proc file has no size: read until the end. */
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (len + got + 1 > cap) {
			size_t ncap = cap ? cap * 2 : 16384;
			char *n;

			while (ncap < len + got + 1)
				ncap *= 2;
			n = realloc(text, ncap);
			if (!n)
				goto out_free;
			text = n;
			cap = ncap;
		}
		memcpy(text + len, chunk, got);
		len += got;
	}
	if (!text)
		text = calloc(1, 1);
	else
		text[len] = '\0';
	fclose(f);
	return text;

out_free:
	free(text);
	fclose(f);
	return NULL;
}

static int fs_real_stat(const char *path, struct stat *st)
{
	return stat(path, st);
}

/* A growing output buffer of run_cmd. */
struct fs_outbuf {
	char *text;
	size_t len, cap;
};

static int fs_outbuf_read(int fd, struct fs_outbuf *b)
{
	char chunk[4096];
	ssize_t got = read(fd, chunk, sizeof(chunk));

	if (got <= 0)
		return got == 0 || errno != EINTR ? (int)got : 1;
	if (b->len + (size_t)got + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 8192;
		char *n;

		while (ncap < b->len + (size_t)got + 1)
			ncap *= 2;
		n = realloc(b->text, ncap);
		if (!n)
			return -1;
		b->text = n;
		b->cap = ncap;
	}
	memcpy(b->text + b->len, chunk, (size_t)got);
	b->len += (size_t)got;
	b->text[b->len] = '\0';
	return 1;
}

static double fs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Writes input to the child's stdin (in[1]) while draining its stdout (o[0]) and stderr
 * (e[0]) until both close, each closed and set to -1 when done; kills the child past the
 * deadline. 0, -ETIMEDOUT or a negative errno of poll. */
static int fs_exchange(pid_t pid, const char *input, double deadline, int in[2], int o[2], int e[2],
		       struct fs_outbuf *ob, struct fs_outbuf *eb)
{
	size_t inlen = input ? strlen(input) : 0, inoff = 0;
	int rc = 0, open_fds;

	if (!inlen) {
		close(in[1]);
		in[1] = -1;
	}
	open_fds = 2;
	while (open_fds > 0) {
		struct pollfd p[3] = {{o[0], POLLIN, 0}, {e[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
		double left = deadline - fs_now();
		int n;

		if (left <= 0) {
			kill(pid, SIGKILL);
			rc = -ETIMEDOUT;
			break;
		}
		n = poll(p, in[1] >= 0 ? 3 : 2, (int)(left * 1000) + 1);
		if (n < 0 && errno != EINTR) {
			rc = -errno;
			kill(pid, SIGKILL);
			break;
		}
		for (int i = 0; i < 2 && n > 0; i++) {
			int *fd = i == 0 ? &o[0] : &e[0];

			if (*fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (fs_outbuf_read(*fd, i == 0 ? ob : eb) <= 0) {
				close(*fd);
				*fd = -1;
				p[i].fd = -1;
				open_fds--;
			}
		}
		if (in[1] >= 0 && n > 0 && (p[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t w = (p[2].revents & POLLOUT)
					? write(in[1], input + inoff, inlen - inoff)
					: -1;

			if (w > 0)
				inoff += (size_t)w;
			if (w < 0 || inoff == inlen) {
				close(in[1]);
				in[1] = -1;
			}
		}
	}
	return rc;
}

/* fork/exec through posix_spawnp with three pipes; input is written while the outputs are
 * drained (poll), so a large command list cannot dead-lock against a chatty child. */
static int fs_real_run_cmd(char *const argv[], const char *input, double timeout_s, char **out,
			   char **err)
{
	int in[2] = {-1, -1}, o[2] = {-1, -1}, e[2] = {-1, -1};
	struct fs_outbuf ob = {0}, eb = {0};
	posix_spawn_file_actions_t fa;
	double deadline = fs_now() + timeout_s;
	int rc = 0, status = 0;
	sigset_t pipe_set, old_set, pending;
	bool pipe_was_pending;
	pid_t pid;
	extern char **environ;

	*out = *err = NULL;
	/* A child that exits before reading all its input must not kill us with SIGPIPE: it is
	 * blocked in this thread while we write, and a SIGPIPE we caused is taken back after. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
	sigpending(&pending);
	pipe_was_pending = sigismember(&pending, SIGPIPE);
	if (pipe2(in, O_CLOEXEC) || pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC)) {
		rc = -errno;
		goto out_close;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, o[1], 1);
	posix_spawn_file_actions_adddup2(&fa, e[1], 2);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc) {
		rc = rc == ENOENT ? 127 : -rc;
		goto out_close;
	}
	close(in[0]);
	close(o[1]);
	close(e[1]);
	in[0] = o[1] = e[1] = -1;
	rc = fs_exchange(pid, input, deadline, in, o, e, &ob, &eb);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc == 0)
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
out_close:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (o[i] >= 0)
			close(o[i]);
		if (e[i] >= 0)
			close(e[i]);
	}
	sigpending(&pending);
	if (!pipe_was_pending && sigismember(&pending, SIGPIPE)) {
		struct timespec zero = {0, 0};

		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old_set, NULL);
	*out = ob.text;
	*err = eb.text;
	return rc;
}

/* Reads /proc/PID/cmdline into buf (arguments NUL-separated); returns its length. */
static size_t fs_read_cmdline(const char *pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n;
}

/* Scans /proc for a ceph-fuse whose mount point (an argument naming a folder on device dev)
 * serves the data folder, and returns the configuration it was started with. */
static int fs_real_ceph_fuse_args(dev_t dev, char *conf, size_t conflen, char *name, size_t namelen)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	char buf[8192];
	int rc = -ENOENT;

	if (!proc)
		return -errno;
	while (rc && (de = readdir(proc)) != NULL) {
		size_t n;
		char *argv[128];
		int argc = 0;
		bool mine = false;
		const char *base;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		n = fs_read_cmdline(de->d_name, buf, sizeof(buf));
		for (size_t off = 0; off < n && argc < 128; off += strlen(buf + off) + 1)
			argv[argc++] = buf + off;
		if (argc == 0)
			continue;
		base = strrchr(argv[0], '/');
		base = base ? base + 1 : argv[0];
		if (strcmp(base, "ceph-fuse") != 0)
			continue;
		conf[0] = name[0] = '\0';
		for (int i = 1; i < argc; i++) {
			const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
			struct stat st;

			if (strcmp(a, "-c") == 0 || strcmp(a, "--conf") == 0)
				snprintf(conf, conflen, "%s", v), i++;
			else if (strncmp(a, "--conf=", 7) == 0)
				snprintf(conf, conflen, "%s", a + 7);
			else if (strcmp(a, "-n") == 0 || strcmp(a, "--name") == 0)
				snprintf(name, namelen, "%s", v), i++;
			else if (strcmp(a, "-i") == 0 || strcmp(a, "--id") == 0)
				snprintf(name, namelen, "client.%s", v), i++;
			else if (strncmp(a, "--id=", 5) == 0)
				snprintf(name, namelen, "client.%s", a + 5);
			else if (a[0] == '/' && stat(a, &st) == 0 && S_ISDIR(st.st_mode) &&
				 st.st_dev == dev)
				mine = true;
		}
		if (mine)
			rc = 0;
	}
	closedir(proc);
	return rc;
}

const struct fs_sys fs_sys_default = {
    .statfs = statfs,
    .realpath = realpath,
    .read_mounts = fs_real_read_mounts,
    .open = fs_real_open,
    .ioctl = fs_real_ioctl,
    .close = close,
    .unlink = unlink,
    .mkdir = mkdir,
    .dlopen = dlopen,
    .dlsym = dlsym,
    .dlclose = dlclose,
    .stat = fs_real_stat,
    .getxattr = getxattr,
    .setxattr = setxattr,
    .run_cmd = fs_real_run_cmd,
    .ceph_fuse_args = fs_real_ceph_fuse_args,
};

const struct fs_sys *fs_sys_of(const struct run *run)
{
	return run && run->fs_sys ? run->fs_sys : &fs_sys_default;
}

/* ---- /proc/self/mounts ---------------------------------------------------------------------- */

/* Copies one space-separated field, decoding the kernel's octal escapes (\040 for a space). */
static const char *fs_mounts_field(const char *p, char *out, size_t outlen)
{
	size_t n = 0;

	while (*p == ' ' || *p == '\t')
		p++;
	while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
		char c = *p++;

		if (c == '\\' && p[0] >= '0' && p[0] <= '3' && p[1] >= '0' && p[1] <= '7' &&
		    p[2] >= '0' && p[2] <= '7') {
			c = (char)((p[0] - '0') * 64 + (p[1] - '0') * 8 + (p[2] - '0'));
			p += 3;
		}
		if (n + 1 < outlen)
			out[n++] = c;
	}
	if (outlen)
		out[n] = '\0';
	return p;
}

/* True when mount point m holds path p: equal, "/" or a prefix ending at a '/'. */
static bool fs_mount_holds(const char *m, const char *p)
{
	size_t n = strlen(m);

	if (strcmp(m, "/") == 0)
		return p[0] == '/';
	if (strncmp(m, p, n) != 0)
		return false;
	return p[n] == '\0' || p[n] == '/';
}

bool fs_mounts_match(const char *mounts, const char *path, char *mount, size_t mountlen,
		     char *device, size_t devicelen, char *type, size_t typelen)
{
	char dev[1024], mnt[1024], typ[256];
	size_t best = 0;
	bool found = false;
	const char *line = mounts;

	while (line && *line) {
		const char *next = strchr(line, '\n');
		const char *p = line;

		p = fs_mounts_field(p, dev, sizeof(dev));
		p = fs_mounts_field(p, mnt, sizeof(mnt));
		fs_mounts_field(p, typ, sizeof(typ));
		/* Later lines mount over earlier ones: >= lets the last one win. */
		if (dev[0] && mnt[0] && typ[0] && fs_mount_holds(mnt, path) &&
		    (!found || strlen(mnt) >= best)) {
			best = strlen(mnt);
			found = true;
			snprintf(mount, mountlen, "%s", mnt);
			snprintf(device, devicelen, "%s", dev);
			snprintf(type, typelen, "%s", typ);
		}
		line = next ? next + 1 : NULL;
	}
	return found;
}

/* Copies a string, truncating at len - 1 bytes. */
static void fs_copy(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* ---- detection ------------------------------------------------------------------------------ */

/* Resolves dir, or its first existing parent when dir does not exist yet. */
static int fs_existing_parent(const struct fs_sys *sys, const char *dir, char *out)
{
	char probe[PATH_MAX];

	if (snprintf(probe, sizeof(probe), "%s", dir[0] ? dir : ".") >= (int)sizeof(probe))
		return -ENAMETOOLONG;
	for (;;) {
		char *slash;

		if (sys->realpath(probe, out))
			return 0;
		if (errno != ENOENT && errno != ENOTDIR)
			return -errno;
		/* Strip trailing slashes, then the last component. */
		slash = probe + strlen(probe);
		while (slash > probe + 1 && slash[-1] == '/')
			*--slash = '\0';
		slash = strrchr(probe, '/');
		if (!slash)
			snprintf(probe, sizeof(probe), ".");
		else if (slash == probe)
			probe[1] = '\0';
		else
			*slash = '\0';
	}
}

/* The label: the magic's name, refined by the mount table within the same family
 * (ext2/3/4 share a magic; nfs4, fuse.sshfs say more), the mount type when the magic is not
 * known, else "unknown(0x...)". */
static void fs_label(struct fs_info *fs, const char *mtype)
{
	const char *name = fs_magic_name(fs->magic);

	if (name && mtype[0] &&
	    ((strcmp(name, "ext4") == 0 && strncmp(mtype, "ext", 3) == 0) ||
	     (strcmp(name, "nfs") == 0 && strncmp(mtype, "nfs", 3) == 0) ||
	     (strcmp(name, "fuse") == 0 && strncmp(mtype, "fuse", 4) == 0)))
		name = mtype;
	else if (!name && mtype[0])
		name = mtype;
	if (name)
		snprintf(fs->type, sizeof(fs->type), "%s", name);
	else
		snprintf(fs->type, sizeof(fs->type), "unknown(0x%llx)",
			 (unsigned long long)fs->magic);
}

/* CephFS through the kernel client has its own statfs magic; ceph-fuse reports FUSE's, so the
 * mount table (source "ceph-fuse", type fuse.ceph-fuse) or, failing that, a CephFS-only
 * virtual xattr on the folder tells it apart from other FUSE file systems. */
static void fs_ceph_detect(const struct fs_sys *sys, struct fs_info *fs, const char *path,
			   const char *mtype)
{
	char v[64];

	if (fs->magic == CEPH_SUPER_MAGIC) {
		snprintf(fs->client, sizeof(fs->client), "kernel");
		snprintf(fs->detected, sizeof(fs->detected), "statfs magic 0x00c36400");
	} else if (fs->magic == FUSE_SUPER_MAGIC &&
		   (strncmp(fs->device, "ceph-fuse", 9) == 0 ||
		    strcmp(mtype, "fuse.ceph-fuse") == 0 || strcmp(mtype, "fuse.ceph") == 0)) {
		snprintf(fs->client, sizeof(fs->client), "ceph-fuse");
		snprintf(fs->detected, sizeof(fs->detected), "mount table (%s, %s)", fs->device,
			 mtype);
	} else if (fs->magic == FUSE_SUPER_MAGIC && sys->getxattr &&
		   sys->getxattr(path, "ceph.dir.entries", v, sizeof(v)) >= 0) {
		snprintf(fs->client, sizeof(fs->client), "ceph-fuse");
		snprintf(fs->detected, sizeof(fs->detected), "ceph.dir.entries xattr");
	} else {
		return;
	}
	snprintf(fs->type, sizeof(fs->type), "cephfs");
	fs->striper = FS_STRIPER_CEPH;
}

int fs_detect_with(const struct fs_sys *sys, const char *dir, struct fs_info *fs)
{
	char path[PATH_MAX];
	char mtype[256] = "";
	struct statfs st;
	char *mounts;
	uint64_t frsize;
	int rc;

	memset(fs, 0, sizeof(*fs));
	rc = fs_existing_parent(sys, dir, path);
	if (rc)
		return rc;
	if (sys->statfs(path, &st) != 0)
		return -errno;

	/* f_type is a signed long: magics above 2^31 would be sign-extended. */
	fs->magic = (uint64_t)(uint32_t)st.f_type;
	fs->block_size = (uint64_t)st.f_bsize;
	frsize = st.f_frsize ? (uint64_t)st.f_frsize : (uint64_t)st.f_bsize;
	/* f_bavail: what an unprivileged user may still write (what generation can use). */
	fs->free_bytes = (uint64_t)st.f_bavail * frsize;
	fs->total_bytes = (uint64_t)st.f_blocks * frsize;

	mounts = sys->read_mounts();
	if (mounts) {
		fs_mounts_match(mounts, path, fs->mount, sizeof(fs->mount), fs->device,
				sizeof(fs->device), mtype, sizeof(mtype));
		free(mounts);
	}
	if (!fs->mount[0])
		fs_copy(fs->mount, sizeof(fs->mount), path);
	fs_label(fs, mtype);
	fs_ceph_detect(sys, fs, path, mtype);
	if (fs->magic == LUSTRE_SUPER_MAGIC)
		fs->striper = FS_STRIPER_LUSTRE;
	fs->can_stripe = fs->striper != FS_STRIPER_NONE;
	return 0;
}

int fs_detect(const char *dir, struct fs_info *fs)
{
	return fs_detect_with(&fs_sys_default, dir, fs);
}

/* ---- the folder's own layout ------------------------------------------------------------- */

/* CephFS: the nearest folder from path up to the mount with a ceph.dir.layout of its own. */
static void fs_dir_layout_ceph(const struct fs_sys *sys, const char *path, const char *mount,
			       struct fs_dir_layout *out)
{
	char probe[PATH_MAX], text[256];

	snprintf(probe, sizeof(probe), "%s", path);
	for (;;) {
		ssize_t n = sys->getxattr(probe, "ceph.dir.layout", text, sizeof(text) - 1);
		char *slash, *c;

		if (n > 0) {
			text[n] = '\0';
			c = strstr(text, "stripe_count=");
			out->stripe_count = c ? strtoll(c + 13, NULL, 10) : 0;
			out->known = out->stripe_count > 0;
			snprintf(out->text, sizeof(out->text), "ceph.dir.layout of %s: %s", probe,
				 text);
			return;
		}
		if (strcmp(probe, mount) == 0 || strcmp(probe, "/") == 0 ||
		    !(slash = strrchr(probe, '/')))
			break;
		if (slash == probe)
			probe[1] = '\0';
		else
			*slash = '\0';
	}
	/* No folder up to the mount sets one: files get the file system's default layout. */
	out->known = true;
	out->stripe_count = 1;
	snprintf(out->text, sizeof(out->text),
		 "no ceph.dir.layout from %s up to the mount %s: the file system's default, "
		 "stripe_count 1",
		 path, mount);
}

/* Lustre: the folder's default striping as liblustreapi reads it (lfs getstripe -d). */
static void fs_dir_layout_lustre(const struct fs_sys *sys, const char *path,
				 struct fs_dir_layout *out)
{
	void *lib = sys->dlopen(LUSTREAPI_SONAME, RTLD_NOW | RTLD_LOCAL), *layout;
	llapi_layout_get_by_path_fn get;
	llapi_layout_get_u64_fn count_get;
	llapi_layout_free_fn layout_free;
	uint64_t count = 0;

	if (!lib) {
		snprintf(out->text, sizeof(out->text),
			 "%s not found: see `lfs getstripe -d %s` for the folder's default",
			 LUSTREAPI_SONAME, path);
		return;
	}
	get = (llapi_layout_get_by_path_fn)sys->dlsym(lib, "llapi_layout_get_by_path");
	count_get = (llapi_layout_get_u64_fn)sys->dlsym(lib, "llapi_layout_stripe_count_get");
	layout_free = (llapi_layout_free_fn)sys->dlsym(lib, "llapi_layout_free");
	layout = get && count_get && layout_free ? get(path, 0) : NULL;
	if (layout && count_get(layout, &count) == 0) {
		out->known = true;
		if (count == LLAPI_LAYOUT_WIDE)
			out->stripe_count = -1;
		else if (count == LLAPI_LAYOUT_DEFAULT || count == 0)
			out->stripe_count = 1; /* the file system's default: one OST */
		else
			out->stripe_count = (int64_t)count;
		snprintf(out->text, sizeof(out->text), "lfs getstripe -d %s: stripe_count %lld%s",
			 path, (long long)out->stripe_count,
			 count == LLAPI_LAYOUT_DEFAULT ? " (the file system's default)" : "");
	} else {
		snprintf(out->text, sizeof(out->text),
			 "cannot read the default layout of %s: see `lfs getstripe -d`", path);
	}
	if (layout)
		layout_free(layout);
	sys->dlclose(lib);
}

int fs_dir_layout(const char *dir, struct fs_dir_layout *out)
{
	const struct fs_sys *sys = &fs_sys_default;
	char path[PATH_MAX];
	struct fs_info fs;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = fs_detect_with(sys, dir, &fs)) < 0 ||
	    (rc = fs_existing_parent(sys, dir, path)) < 0) {
		snprintf(out->text, sizeof(out->text), "cannot inspect '%s': %s", dir,
			 strerror(-rc));
		return rc;
	}
	snprintf(out->fs, sizeof(out->fs), "%s", fs.type);
	out->can_stripe = fs.can_stripe;
	if (fs.striper == FS_STRIPER_CEPH) {
		fs_dir_layout_ceph(sys, path, fs.mount, out);
	} else if (fs.striper == FS_STRIPER_LUSTRE) {
		fs_dir_layout_lustre(sys, path, out);
	} else {
		out->known = true;
		snprintf(out->text, sizeof(out->text), "no striping here (%s)", fs.type);
	}
	return 0;
}
