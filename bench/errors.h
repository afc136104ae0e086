/* feedbench error codes.
 *
 * Functions that do things return 0 or a negative code: -errno, or -FB_E* from the list below.
 * The list is an X-macro so the enum, the names and fb_strerror() come from one place.
 * Context (file, offset, rank) is recorded once with fb_fail() where it is known; callers pass
 * the code up without printing it again.
 */
#ifndef FEEDBENCH_ERRORS_H
#define FEEDBENCH_ERRORS_H

#include <stdarg.h>
#include <pthread.h>

#define FB_ERRORS(X)                                                                               \
	X(FB_ECONFIG, 2, "configuration error")                                                    \
	X(FB_EUSAGE, 2, "usage error")                                                             \
	X(FB_ENODEV, 2, "accelerator unavailable")                                                 \
	X(FB_EVERIFY, 1, "verification failed")                                                    \
	X(FB_EFORMAT, 1, "corrupt or invalid file")                                                \
	X(FB_EEOF, 1, "unexpected end of file")                                                    \
	X(FB_EPEER, 1, "another rank failed")                                                      \
	X(FB_EINTR, 130, "interrupted by signal")                                                  \
	X(FB_EMPI, 1, "MPI error")                                                                 \
	X(FB_EHDF5, 1, "HDF5 error")                                                               \
	X(FB_EDATASET, 1, "dataset missing or does not match")                                     \
	X(FB_ECUDA, 1, "CUDA error")                                                               \
	X(FB_ENOTREG, 1, "not a regular file")                                                     \
	X(FB_EINTERNAL, 1, "internal error")                                                       \
	X(FB_ESTRICT, 1, "MLPerf Storage rule broken (--strict)")                                  \
	X(FB_ENOREADER, 1, "no process reads the FIFO")                                            \
	X(FB_EIMPOSSIBLE, 3, "impossible result or unknown schema")

enum fb_error {
	FB_EBASE = 4000,
#define FB_X_ENUM(name, exit, text) name,
	FB_ERRORS(FB_X_ENUM)
#undef FB_X_ENUM
	    FB_ELAST
};

/* Text for a code (negative or positive; errno values go through strerror). */
const char *fb_strerror(int err);

/* Process exit status for a code: 0 success, 2 usage/config/accelerator choice, 1 otherwise. */
int fb_exit_status(int err);

/* First error of a rank, with its context. Thread-safe: the first fb_fail() wins. */
struct fb_errbuf {
	pthread_mutex_t lock;
	int code;	/* 0 or the first negative code recorded */
	char msg[1024]; /* "cannot open 'x': No such file or directory" */
};

void fb_errbuf_init(struct fb_errbuf *e);
/* Records code and a formatted message unless one is already recorded; returns code. */
int fb_fail(struct fb_errbuf *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int fb_vfail(struct fb_errbuf *e, int code, const char *fmt, va_list ap);
/* Drops a recorded error (used when a retry succeeded or a probe may fail). */
void fb_errbuf_clear(struct fb_errbuf *e);

#endif
