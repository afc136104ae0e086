/* Children feedbench starts to keep what it cannot trust away from the run: a library call on
 * a foreign file made in a forked child first (child_call), so that a crash in the library ends
 * the child and is reported; an external program (gnuplot) read and waited for under a time
 * limit (child_collect), so that one that never ends cannot hold the run. */
#ifndef FEEDBENCH_CHILD_H
#define FEEDBENCH_CHILD_H

#include <stddef.h>
#include <sys/types.h>

/* child_call's answer when the child died: killed by a signal, or ended another way than by
 * returning from fn (a sanitizer's report). */
#define CHILD_CRASHED 1

/* Runs fn(arg) in a forked child in which the signals of a crash (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGABRT) have their default action, so that no handler of the parent (a sanitizer's,
 * the fuzzer's) reports them. The child ends with _exit (no stdio buffer of the parent is
 * flushed twice) and never calls MPI. Returns 0 when fn returned (whatever it returned: an
 * error there is met again, and reported, by the caller's own call), CHILD_CRASHED with how it
 * ended ("signal 11", "exit status 1") in why, -ETIMEDOUT when it ran past timeout_ms (it is
 * killed), or -errno when no child could be started. */
int child_call(int (*fn)(void *), void *arg, unsigned timeout_ms, char *why, size_t len);

/* One forked child that makes calls for the parent, one request at a time, so that a whole
 * folder of foreign files costs one fork, not one each (a fork of a process with MPI and CUDA
 * mapped took about 10 ms here). Same rules as child_call for the child. */
struct child_worker {
	pid_t pid; /* 0: not started */
	int fd;	   /* the parent's end of the socket pair */
};

/* Sends request (a NUL-terminated string) to the worker, starting it first when needed; the
 * worker runs fn(request, arg). Returns as child_call does: 0 when fn returned, CHILD_CRASHED
 * with how the worker ended in why (it is started again for the next request), -ETIMEDOUT
 * past timeout_ms (it is killed), or -errno. */
int child_worker_call(struct child_worker *w, int (*fn)(const char *, void *), void *arg,
		      const char *request, unsigned timeout_ms, char *why, size_t len);

/* Ends the worker (its request pipe closed, then reaped); nothing when none runs. */
void child_worker_stop(struct child_worker *w);

/* Reads fd (a pipe from child pid) into buf until its end, keeping the last cap - 1 bytes,
 * NUL-terminated, then reaps pid into *status. At timeout_ms after the call (0: no limit) the
 * child is killed (SIGKILL) and reaped, and -ETIMEDOUT returned. fd is not closed. 0 or a
 * negative errno. */
int child_collect(pid_t pid, int fd, char *buf, size_t cap, unsigned timeout_ms, int *status);

#endif
