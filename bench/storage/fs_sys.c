/* Helpers over the replaceable system calls of fs_sys.h, shared by striping's plug-ins
 * (stripe.c, stripe_pfl.c, stripe_ceph.c). */
#include "fs_sys.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

/* Creates the directories of `dir` that are missing (mkdir -p) through sys. 0 or -errno. */
int fs_sys_mkdir_p(const struct fs_sys *sys, const char *dir)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);

	if (n >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		path[i] = '\0';
		if (sys->mkdir(path, 0755) != 0 && errno != EEXIST)
			return -errno;
		path[i] = dir[i];
	}
	return 0;
}
