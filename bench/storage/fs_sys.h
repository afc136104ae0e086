/* The system calls behind file-system detection and Lustre striping, made replaceable.
 *
 * Lustre cannot be reached from CI machines, so fsdetect.c and stripe.c never call statfs,
 * open, ioctl or dlopen directly: they go through a struct fs_sys. fs_sys_default holds the
 * real calls; tests set run->fs_sys to a fake that answers statfs with the Lustre magic and
 * captures the layout calls a real Lustre client would receive.
 *
 * The Lustre user structures and ioctl numbers are defined here because no Lustre headers
 * exist on build machines. They follow lustre/include/uapi/linux/lustre/lustre_user.h
 * (stable since Lustre 2.x; the v1 layout is what `lfs setstripe` sends for a plain file).
 */
#ifndef FEEDBENCH_FS_SYS_H
#define FEEDBENCH_FS_SYS_H

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>

struct run;
struct fs_info;

struct fs_sys {
	int (*statfs)(const char *path, struct statfs *st);
	char *(*realpath)(const char *path, char *resolved); /* resolved: PATH_MAX bytes */
	/* Returns /proc/self/mounts as a malloc'ed NUL-terminated string, or NULL. */
	char *(*read_mounts)(void);
	int (*open)(const char *path, int flags, mode_t mode);
	int (*ioctl)(int fd, unsigned long request, void *arg);
	int (*close)(int fd);
	int (*unlink)(const char *path);
	int (*mkdir)(const char *path, mode_t mode);
	void *(*dlopen)(const char *file, int mode);
	void *(*dlsym)(void *handle, const char *name);
	int (*dlclose)(void *handle);
	/* CephFS: layouts are virtual xattrs, object placement comes from the ceph CLI. */
	int (*stat)(const char *path, struct stat *st);
	ssize_t (*getxattr)(const char *path, const char *name, void *value, size_t size);
	int (*setxattr)(const char *path, const char *name, const void *value, size_t size,
			int flags);
	/* Runs argv (argv[0] searched in PATH) with `input` on its stdin and waits at most
	 * timeout_s. Returns the exit status (127: could not be started), or -errno; *out and
	 * *err receive its stdout and stderr (malloc'ed, NUL-terminated; may be NULL). */
	int (*run_cmd)(char *const argv[], const char *input, double timeout_s, char **out,
		       char **err);
	/* The configuration file and client name a ceph-fuse process serving the mount with
	 * device number dev was started with (-c/--conf, -n/--name/--id/-i on its command line;
	 * "" when it gave none). Returns 0 when such a process was found, -ENOENT otherwise. */
	int (*ceph_fuse_args)(dev_t dev, char *conf, size_t conflen, char *name, size_t namelen);
};

/* The real system calls. */
extern const struct fs_sys fs_sys_default;

/* run->fs_sys, or fs_sys_default when NULL. */
const struct fs_sys *fs_sys_of(const struct run *run);
/* Creates the directories of dir that are missing (mkdir -p) through sys. 0 or -errno. */
int fs_sys_mkdir_p(const struct fs_sys *sys, const char *dir);

/* fs_detect() through the given calls (tests pass a fake). */
int fs_detect_with(const struct fs_sys *sys, const char *dir, struct fs_info *fs);

/* Name of a statfs magic ("lustre", "ext4", ...), NULL when not in the table. */
const char *fs_magic_name(uint64_t magic);

/* Finds the mount holding `path` (an absolute, resolved path) in /proc/self/mounts text:
 * the longest mount point that is a prefix of path at a '/' boundary; the last such line wins
 * (later mounts hide earlier ones). Octal escapes (\040) are decoded. Returns true when found. */
bool fs_mounts_match(const char *mounts, const char *path, char *mount, size_t mountlen,
		     char *device, size_t devicelen, char *type, size_t typelen);

/* ---- CephFS ------------------------------------------------------------------------------- */

#define CEPH_SUPER_MAGIC     0x00C36400u /* kernel client */
#define FUSE_SUPER_MAGIC     0x65735546u /* ceph-fuse reports this (fuse or fuseblk) */
#define CEPH_MIN_STRIPE_UNIT 65536u	 /* stripe_unit and object_size granularity */

/* ---- Lustre user interface (lustre_user.h) ------------------------------------------------ */

#define LUSTRE_SUPER_MAGIC 0x0BD00BD0u

#define LOV_USER_MAGIC_V1      0x0BD10BD0u
#define LOV_USER_MAGIC_V3      0x0BD30BD0u
#define LOV_USER_MAGIC_COMP_V1 0x0BD60BD0u
#define LOV_PATTERN_RAID0      0x001u
#define LOV_MAXPOOLNAME	       15
#define LOV_MAX_STRIPE_COUNT   2000
#define LOV_ALL_STRIPES	       0xffff /* stripe_count -1: every OST */
#define LOV_OFFSET_DEFAULT     0xffff /* stripe_offset -1: the MDS chooses */

#define LL_IOC_LOV_SETSTRIPE _IOW('f', 154, long)
#define LL_IOC_LOV_GETSTRIPE _IOW('f', 155, long)

/* Lustre 2.4 and later: open() with these flags creates the inode without objects, so a layout
 * can still be set with LL_IOC_LOV_SETSTRIPE. */
#define O_LOV_DELAY_CREATE (O_NOCTTY | FASYNC)

struct lustre_ost_id {
	uint64_t oi_id;
	uint64_t oi_seq;
} __attribute__((packed));

struct lov_user_ost_data_v1 {
	struct lustre_ost_id l_ost_oi;
	uint32_t l_ost_gen;
	uint32_t l_ost_idx;
} __attribute__((packed));

struct lov_user_md_v1 {
	uint32_t lmm_magic;   /* LOV_USER_MAGIC_V1 */
	uint32_t lmm_pattern; /* LOV_PATTERN_RAID0 */
	struct lustre_ost_id lmm_oi;
	uint32_t lmm_stripe_size;
	uint16_t lmm_stripe_count;
	uint16_t lmm_stripe_offset; /* in replies: layout generation */
	struct lov_user_ost_data_v1 lmm_objects[];
} __attribute__((packed));

struct lov_user_md_v3 {
	uint32_t lmm_magic; /* LOV_USER_MAGIC_V3: v1 plus a pool name */
	uint32_t lmm_pattern;
	struct lustre_ost_id lmm_oi;
	uint32_t lmm_stripe_size;
	uint16_t lmm_stripe_count;
	uint16_t lmm_stripe_offset;
	char lmm_pool_name[LOV_MAXPOOLNAME + 1];
	struct lov_user_ost_data_v1 lmm_objects[];
} __attribute__((packed));

/* liblustreapi values for "file-system default" and "every OST" in the layout API. */
#define LLAPI_LAYOUT_INVALID 0x1000000000000001ULL
#define LLAPI_LAYOUT_DEFAULT (LLAPI_LAYOUT_INVALID + 1)
#define LLAPI_LAYOUT_WIDE    (LLAPI_LAYOUT_INVALID + 2)

/* The liblustreapi entry points stripe.c resolves with dlsym. */
typedef int (*llapi_file_create_fn)(const char *name, unsigned long long stripe_size,
				    int stripe_offset, int stripe_count, int stripe_pattern);
typedef void *(*llapi_layout_get_by_path_fn)(const char *path, uint32_t flags);
typedef int (*llapi_layout_get_u64_fn)(const void *layout, uint64_t *value);
typedef int (*llapi_layout_ost_index_get_fn)(const void *layout, int stripe_number,
					     uint64_t *index);
typedef void (*llapi_layout_free_fn)(void *layout);

/* Composite (PFL) layouts through the layout API (lustreapi.h, Lustre 2.10 and later). */
#define LUSTRE_EOF 0xFFFFFFFFFFFFFFFFULL /* a component that extends to the end of file */
enum {
	LLAPI_LAYOUT_COMP_USE_FIRST = 1,
	LLAPI_LAYOUT_COMP_USE_LAST = 2,
	LLAPI_LAYOUT_COMP_USE_NEXT = 3,
	LLAPI_LAYOUT_COMP_USE_PREV = 4,
};
typedef void *(*llapi_layout_alloc_fn)(void);
typedef int (*llapi_layout_comp_add_fn)(void *layout);
typedef int (*llapi_layout_comp_extent_set_fn)(void *layout, uint64_t start, uint64_t end);
typedef int (*llapi_layout_comp_extent_get_fn)(const void *layout, uint64_t *start, uint64_t *end);
typedef int (*llapi_layout_set_u64_fn)(void *layout, uint64_t value);
/* 0: moved; 1: no such component; < 0: error */
typedef int (*llapi_layout_comp_use_fn)(void *layout, uint32_t pos);
typedef int (*llapi_layout_file_create_fn)(const char *path, int open_flags, int mode,
					   const void *layout);
typedef int (*llapi_layout_file_open_fn)(const char *path, int open_flags, mode_t mode,
					 const void *layout);
typedef bool (*llapi_layout_is_composite_fn)(void *layout);

#define LUSTREAPI_SONAME "liblustreapi.so.1"

#endif
