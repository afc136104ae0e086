/* Storage plug-ins and the wrappers that measure them.
 *
 * A plug-in moves bytes; it never times, retries or prints. The wrappers (io_*) own the
 * short-I/O and EINTR loops, transfer_size splitting, latency histograms and error context,
 * so every plug-in and every format is measured the same way.
 *
 * Contracts for plug-in functions:
 * - pread/pwrite return the bytes moved (possibly fewer than asked: a short transfer),
 *   0 at end of file for pread, or a negative errno. -EINTR is retried by the wrapper.
 * - open of a file with STORAGE_O_SHARED is collective over run->file_comm (mpiio); posix
 *   ignores the flag.
 * - close and sync failures are real failures (a buffered write error shows up there).
 * - Queued reads (optional, io_uring): a queue belongs to one thread and holds up to `depth`
 *   reads on any files the back-end opened. queue_read() only queues (nothing reaches the kernel
 *   yet); queue_reap() sends what is queued and waits until at least `min` reads completed,
 *   storing up to `max` completions. A completion's res is what pread would have returned
 *   (bytes, 0 at end of file, -errno). The wrappers (io_queue_*) own timing, short reads,
 *   EINTR and error context for queued reads too.
 */
#ifndef FEEDBENCH_STORAGE_H
#define FEEDBENCH_STORAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../stats.h"

struct run;
struct io;
struct storage_stat;

#define STORAGE_O_READ	  0x01
#define STORAGE_O_WRITE	  0x02 /* create + truncate unless STORAGE_O_NOTRUNC */
#define STORAGE_O_DIRECT  0x04 /* O_DIRECT: buffers, offsets and lengths aligned */
#define STORAGE_O_SHARED  0x08 /* opened by every rank of the sharing communicator */
#define STORAGE_O_NOTRUNC 0x10

#define STORAGE_CAP_DIRECT     0x1
#define STORAGE_CAP_COLLECTIVE 0x2
#define STORAGE_CAP_SHARED     0x4
/* Objects, not files (s3): paths name objects of the back-end's own namespace, not local
 * files; the page cache, O_DIRECT and file-system layouts do not apply. */
#define STORAGE_CAP_OBJECT 0x8
/* No data (null): reads return without filling the buffer, so nothing read can be verified. */
#define STORAGE_CAP_NO_DATA 0x10

#define STORAGE_OPS_VERSION 1

/* One entry of a folder listing (storage_ops.list_dir, io_list_dir): 0 goes on, anything
 * else stops the listing and is returned by it. */
typedef int (*storage_dir_fn)(const char *name, void *arg);

struct config;
struct sfile;	 /* plug-in private; begins with struct sfile_base */
struct io_queue; /* plug-in private: one thread's queue of reads (io_uring ring) */

/* One byte range of a file (storage_ops.pread_extents_all, io_pread_extents_all). */
struct storage_extent {
	uint64_t off;
	uint64_t len;
};

struct io_completion {
	uint64_t tag; /* as given to queue_read */
	int64_t res;  /* bytes read, 0 at end of file, or -errno */
	/* Time to first byte of the request that returned data, when the back-end knows it
	 * (S3: curl's start-transfer time); 0 otherwise. io.c zeroes it before queue_reap. */
	uint64_t ttfb_ns;
};

struct sfile_base {
	const struct storage_ops *ops;
	char path[1024];
	int flags;
};

struct storage_ops {
	unsigned version; /* STORAGE_OPS_VERSION */
	const char *name;
	unsigned caps;
	int (*open)(struct sfile **f, const char *path, int flags, struct run *run);
	ssize_t (*pread)(struct sfile *f, void *buf, size_t len, uint64_t off);
	ssize_t (*pwrite)(struct sfile *f, const void *buf, size_t len, uint64_t off);
	int (*sync)(struct sfile *f);
	int (*close)(struct sfile *f);
	int (*size)(struct sfile *f, uint64_t *size);
	/* Drops the file's cached pages (posix_fadvise DONTNEED); optional. */
	int (*evict)(struct sfile *f);
	/* Set when the plug-in was not built: why ("liburing not found"); nothing else is. */
	const char *not_built;
	/* Optional queued reads (see the contract above). queue_register pins buffers the reads
	 * will land in (registered buffers), best effort: a failure leaves reads unregistered. */
	int (*queue_open)(struct io_queue **q, unsigned depth, struct run *run);
	int (*queue_register)(struct io_queue *q, void *const *bufs, size_t len, unsigned n);
	int (*queue_read)(struct io_queue *q, struct sfile *f, void *buf, size_t len, uint64_t off,
			  uint64_t tag);
	int (*queue_reap)(struct io_queue *q, struct io_completion *c, unsigned max, unsigned min);
	void (*queue_close)(struct io_queue *q);
	/* Optional: the time to first byte (ns) of this thread's last pread that returned data,
	 * 0 when unknown (S3: curl's start-transfer time of the GET). Queued reads carry theirs in
	 * io_completion.ttfb_ns. */
	uint64_t (*pread_ttfb_ns)(void);

	/* Optional: creates path for writing (truncated) with the layout the run asks for, when
	 * the back-end sets layouts itself (MPI-IO striping hints at creation). NULL: io_create()
	 * sets the layout through the file system (stripe_create_file of bench/storage/fs.h), then
	 * opens with open(). */
	int (*create)(struct sfile **f, const char *path, int flags, struct run *run);
	/* Optional namespace calls; NULL means the POSIX call on the path (every back-end here
	 * shares the POSIX namespace). 0 or a negative errno, like the calls themselves. */
	int (*mkdir)(const char *path, unsigned mode, struct run *run);
	int (*unlink)(const char *path, struct run *run);
	int (*stat)(const char *path, struct storage_stat *st, struct run *run);
	int (*rmdir)(const char *path, struct run *run);
	/* Calls fn(name, arg) for every entry of folder path except "." and ".." (in the file
	 * system's order) and stops at the first non-zero return of fn, which it returns; else 0,
	 * or a negative errno when the folder cannot be opened or read. */
	int (*list_dir)(const char *path, storage_dir_fn fn, void *arg, struct run *run);
	/* Optional: makes the entries of folder path durable (fsync of the folder). */
	int (*sync_dir)(const char *path, struct run *run);
	/* Optional: renames from to to, replacing to, atomically as rename(2) does. */
	int (*rename)(const char *from, const char *to, struct run *run);
	/* Optional state per run (after the back-end is chosen, before any file is touched;
	 * teardown at the end of the run) and per thread that does I/O (io_thread_setup). */
	int (*run_setup)(struct run *run);
	void (*run_teardown)(struct run *run);
	int (*thread_setup)(struct io *io);
	void (*thread_teardown)(struct io *io);
	/* Optional collective transfers ([storage.mpiio] collective = true is refused for a
	 * back-end without them). Called on a handle opened with STORAGE_O_SHARED by every rank of
	 * its communicator, the same number of times in the same order; a rank with nothing to
	 * move joins with len 0. Any len (beyond INT_MAX too) is one call here and one collective
	 * call of the library. Return the bytes moved (fewer than len only at the end of the file
	 * for pread_all) or a negative errno. */
	ssize_t (*pread_all)(struct sfile *f, void *buf, size_t len, uint64_t off);
	ssize_t (*pwrite_all)(struct sfile *f, const void *buf, size_t len, uint64_t off);
	/* Optional, with pread_all: one collective read of n byte ranges of the file into buf, one
	 * after another (the sum of their lengths). The ranges come in increasing order of offset
	 * and do not overlap (they become one MPI file view). Same rules as pread_all: every rank,
	 * the same calls in the same order, a rank with nothing to read joins with n 0; any
	 * lengths, any sum. Returns the bytes moved (fewer only at the end of the file) or a
	 * negative errno. */
	ssize_t (*pread_extents_all)(struct sfile *f, void *buf, const struct storage_extent *ext,
				     size_t n);
	/* Optional, for a back-end that moves bytes through another one (faulty): the name of the
	 * back-end it wraps under this configuration, so that checks made before the run (does
	 * the back-end offer collective transfers?) look at the one that will move the bytes. */
	const char *(*wraps)(const struct config *cfg);
};

/* What stat() tells about a path. */
struct storage_stat {
	uint64_t size;
	unsigned mode; /* st_mode: type and permissions */
	bool is_dir;
	bool is_reg;
};

/* Registry: the only place that knows which back-ends exist. */
const struct storage_ops *storage_find(const char *name);
extern const struct storage_ops *const storage_registry[];

struct io_pending; /* a queued read in flight (io.c) */

/* One thread's view of the storage: the run (for config and errors) and its counters. */
struct io {
	struct run *run;
	struct io_stats *stats; /* NULL: not measured (generation) */
	uint64_t transfer;	/* bytes per read call; 0 = whole request */
	bool direct;
	/* Queued reads (io_queue_open): NULL queue when the back-end has none. */
	struct io_queue *queue;
	struct io_pending *pending; /* depth slots */
	unsigned depth;		    /* reads kept in flight ([storage] io_depth) */
	unsigned inflight;	    /* reads in flight now */
	uint64_t qseq;		    /* io_queue_read() calls so far (io_queue_mark) */
	unsigned unsent;	    /* reads queued, not yet sent to the kernel (not timed yet) */
	int qerr;		    /* first failure of a queued read (recorded in run) */
};

/* Opens through the run's back-end; errors recorded with the path. Counts opens. */
int io_open(struct io *io, struct sfile **f, const char *path, int flags);
/* Opens a file of the dataset for reading on this thread, or hands back the handle opened
 * collectively for it (shared MPI-IO access, ds_file.shared); io_close_file() closes only what
 * io_open_file() opened. */
struct ds_file;
int io_open_file(struct io *io, struct ds_file *file, struct sfile **f);
int io_close_file(struct io *io, struct ds_file *file, struct sfile *f);
/* Reads exactly len bytes at off, in pieces of io->transfer, looping over short reads and
 * EINTR; end of file before len is -FB_EEOF naming the file and offset. */
int io_pread(struct io *io, struct sfile *f, void *buf, size_t len, uint64_t off);
/* Like io_pread but a clean end of file is not an error: *got says how much was read. */
int io_pread_upto(struct io *io, struct sfile *f, void *buf, size_t len, uint64_t off, size_t *got);
/* Writes exactly len bytes at off, looping over short writes and EINTR; each call is counted
 * (wbytes, wops) and timed (wlatency). */
int io_pwrite(struct io *io, struct sfile *f, const void *buf, size_t len, uint64_t off);
/* fsync; counted and timed (syncs, sync_ns). */
int io_sync(struct io *io, struct sfile *f);
/* Creates path for writing (truncating an existing file) with the run's requested layout
 * (storage_ops.create, else the file system's per-file layout, then open). Counted and timed
 * as a create. flags: STORAGE_O_* besides STORAGE_O_WRITE (DIRECT, SHARED). */
int io_create(struct io *io, struct sfile **f, const char *path, int flags);
/* Namespace calls through the back-end (POSIX when it has none); counted and timed as
 * meta_ops. io_mkdir: an existing folder is no error. io_unlink: a missing file is an error
 * unless missing_ok. Errors are recorded with the path. */
int io_mkdir(struct io *io, const char *path, unsigned mode);
/* io_mkdir of every missing folder of path (mkdir -p). */
int io_mkdirs(struct io *io, const char *path, unsigned mode);
int io_unlink(struct io *io, const char *path, bool missing_ok);
/* stat is often a question whose answer may be "not there": its failure is returned as a
 * negative errno and NOT recorded; the caller records what it means. */
int io_stat(struct io *io, const char *path, struct storage_stat *st);
/* Removes an empty folder; a missing one is an error unless missing_ok. Recorded with the
 * path. */
int io_rmdir(struct io *io, const char *path, bool missing_ok);
/* Renames from to to (replacing to): the atomic step of writing a file under its final name.
 * Counted as a namespace call; errors recorded with both paths. */
int io_rename(struct io *io, const char *from, const char *to);
/* Lists folder path (storage_ops.list_dir): fn gets every name but "." and ".."; counted and
 * timed as one namespace call. A folder that cannot be listed is returned as a negative errno
 * and NOT recorded (the caller knows what the folder is); fn's own non-zero return is passed
 * back as it is. */
int io_list_dir(struct io *io, const char *path, storage_dir_fn fn, void *arg);
/* Removal inside a folder of feedbench's own (a checkpoint's step folder, the metadata
 * workload's rank folder): io_own_dir_open opens dir with O_NOFOLLOW | O_DIRECTORY, so a
 * symbolic link at its name is refused (-ELOOP or -ENOTDIR), never followed; the descriptor
 * then names the folder for every call below, whatever is renamed over its path later.
 * io_unlink_at removes name in it (unlinkat), io_list_dir_at lists it (fdopendir on a copy of
 * the descriptor): counted, timed and recorded like io_unlink and io_list_dir. A back-end with
 * its own namespace calls (storage_ops.unlink, list_dir: fault injection) is called with the
 * path instead, after the folder was opened this way. dir is for messages and those calls. On a
 * back-end of objects (STORAGE_CAP_OBJECT: no folders, no links) io_own_dir_open returns a
 * descriptor of /dev/null to close, and the calls below go to the back-end with the path. */
int io_own_dir_open(const struct run *run, const char *dir);
int io_unlink_at(struct io *io, int dfd, const char *dir, const char *name, bool missing_ok);
int io_list_dir_at(struct io *io, int dfd, const char *dir, storage_dir_fn fn, void *arg);
/* fsync of a folder: its new and removed entries become durable. Counted as a sync. A file
 * system that cannot fsync a folder (EINVAL) is no error. */
int io_sync_dir(struct io *io, const char *path);
/* Drops path's cached pages (storage_ops.evict: posix_fadvise DONTNEED on posix) so the next
 * read comes from the storage: opened for reading through the back-end, evicted, closed.
 * Back-ends without evict only open and close. Errors recorded with the path. The open is
 * counted as a read open when io->stats is set: give a stats-less io for eviction that is not
 * part of a measured phase. */
int io_evict(struct io *io, const char *path);
/* The namespace calls of a back-end, or the POSIX calls where it has none: no measurement and
 * no error recorded (0 or a negative errno). For the io_* wrappers above and for back-ends
 * that wrap another one (faulty). */
int storage_call_mkdir(const struct storage_ops *ops, const char *path, unsigned mode,
		       struct run *run);
int storage_call_unlink(const struct storage_ops *ops, const char *path, struct run *run);
int storage_call_rmdir(const struct storage_ops *ops, const char *path, struct run *run);
int storage_call_sync_dir(const struct storage_ops *ops, const char *path, struct run *run);
int storage_call_list_dir(const struct storage_ops *ops, const char *path, storage_dir_fn fn,
			  void *arg, struct run *run);
int storage_call_rename(const struct storage_ops *ops, const char *from, const char *to,
			struct run *run);
/* Per-thread back-end state: call once on each thread that does I/O, before its first call,
 * and io_thread_teardown() after its last. No-ops for back-ends without thread state. */
int io_thread_setup(struct io *io);
void io_thread_teardown(struct io *io);
/* Per-run back-end state (the runner calls these). */
int storage_run_setup(struct run *run);
void storage_run_teardown(struct run *run);
int io_close(struct io *io, struct sfile *f);
int io_size(struct io *io, struct sfile *f, uint64_t *size);
/* Queued reads, for back-ends with queue ops (others: io_queue_open does nothing and
 * io->queue stays NULL). With a queue, io_pread() and friends also go through it, one read at a
 * time. io_queue_read() queues exactly len bytes at off (in pieces of io->transfer), first
 * waiting for a slot when depth reads are in flight; each piece is timed from its submission to
 * the kernel to its completion, and counted like a read call. io_queue_wait() waits for every read
 * in flight and returns the first failure (recorded with file and offset); after a failure,
 * io_queue_read() queues nothing more and returns it. The buffers must stay valid until
 * io_queue_wait(). */
int io_queue_open(struct io *io, unsigned depth);
/* Registers the n buffers of len bytes that queued reads will land in; best effort (0: done,
 * negative: not registered, reads still work). */
int io_queue_register(struct io *io, void *const *bufs, size_t len, unsigned n);
int io_queue_read(struct io *io, struct sfile *f, void *buf, size_t len, uint64_t off);
int io_queue_wait(struct io *io);
void io_queue_close(struct io *io);
/* Keeping reads in flight across several batches: io_queue_mark() is a mark after the reads
 * queued so far, and io_queue_done(mark) says whether every read queued before it has
 * completed (or failed), while later ones may still be in flight. io_queue_poll() sends what
 * is queued and handles at least one completion when any read is in flight (none: returns at
 * once); io_queue_wait_file() waits until no read of f is in flight (before f is closed). Both
 * return the first failure of a queued read, which stays until io_queue_wait() hands it back
 * (after the reads still in flight landed). */
uint64_t io_queue_mark(const struct io *io);
bool io_queue_done(const struct io *io, uint64_t mark);
int io_queue_poll(struct io *io);
int io_queue_wait_file(struct io *io, const struct sfile *f);

/* Records a read that a format did itself (HDF5): bytes and its duration. */
void io_account(struct io *io, uint64_t bytes, uint64_t ns);
const char *io_path(const struct sfile *f);
/* Records reads a library made itself: `bytes` over `calls` read calls, in `ns`. */
void io_account_calls(struct io *io, uint64_t bytes, uint64_t calls, uint64_t ns);
/* Records one sample decoded by a format (jpeg, png): `out` bytes produced in `ns` (monotonic
 * clock), `cpu_ns` of them on the thread's CPU clock (io_thread_cpu_ns). */
void io_account_decode(struct io *io, uint64_t out, uint64_t ns, uint64_t cpu_ns);
/* This thread's CPU time (CLOCK_THREAD_CPUTIME_ID) in ns. */
uint64_t io_thread_cpu_ns(void);

/* What this thread really read, from the kernel's per-thread counters (/proc/thread-self/io:
 * rchar, syscr), for libraries that do their own I/O (HDF5) so their bytes and read calls are
 * counted as actually read, not as asked for. The meter's own reads of that file are taken
 * out. One meter per thread; io_meter_read() returns -ENOSYS where procfs is missing. */
struct io_meter {
	int fd;
	uint64_t own_bytes, own_calls; /* the meter's own reads of the procfs file */
};
int io_meter_open(struct io_meter *m);
int io_meter_read(struct io_meter *m, uint64_t *bytes, uint64_t *calls);
void io_meter_close(struct io_meter *m);

/* Collective transfers (storage_ops.pread_all, pwrite_all; see their contract): exactly len
 * bytes at off or a failure recorded with the file and offset. A short collective transfer
 * cannot be completed by another call the other ranks do not make, so it is a failure
 * (-FB_EEOF for a read). Counted and timed as one read or write call; len 0 (a rank joining
 * with nothing to move) is not counted. */
int io_pread_all(struct io *io, struct sfile *f, void *buf, size_t len, uint64_t off);
int io_pwrite_all(struct io *io, struct sfile *f, const void *buf, size_t len, uint64_t off);
/* One collective read of n byte ranges (storage_ops.pread_extents_all; ranges in increasing
 * order of offset, not overlapping) into buf, one after another: exactly their total length or
 * a failure recorded with the file and the first range's offset (a short read is -FB_EEOF).
 * Counted and timed as one read call of all the bytes; n 0 (a rank joining with nothing to
 * read) is not counted. */
int io_pread_extents_all(struct io *io, struct sfile *f, void *buf,
			 const struct storage_extent *ext, size_t n);
/* Whether the back-end moves collective transfers (pread_all, pwrite_all and
 * pread_extents_all set). */
bool storage_has_collective(const struct storage_ops *ops);
/* The back-end that moves the bytes under cfg: ops itself, or the one it wraps
 * (storage_ops.wraps, followed to the end); NULL when a wrapped name is not a back-end. */
const struct storage_ops *storage_effective(const struct storage_ops *ops,
					    const struct config *cfg);
/* Whether cfg's back-end (or the one it wraps) keeps objects, not files (STORAGE_CAP_OBJECT):
 * data_dir is then no local path (no file-system detection, no local manifest). */
bool storage_is_object(const struct config *cfg);
/* Into buf: the built back-ends with collective transfers, "a or b" ("" when none). */
void storage_collective_names(char *buf, size_t len);

#endif
