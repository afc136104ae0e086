/* Children under a time limit: see child.h. */
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "timer.h"

/* Milliseconds left before deadline_ns (timer_now_ns clock); -1 for no deadline. */
static int child_left_ms(uint64_t deadline_ns)
{
	uint64_t now = timer_now_ns();

	if (!deadline_ns)
		return -1;
	return now >= deadline_ns ? 0 : (int)((deadline_ns - now + 999999) / 1000000);
}

/* Reaps pid by deadline_ns (0: none), polling with a growing pause (0.1 ms up to 10 ms: a
 * child that ends at once costs little); past it, SIGKILL and -ETIMEDOUT. */
static int child_reap(pid_t pid, uint64_t deadline_ns, int *status)
{
	long pause_ns = 100000;

	for (;;) {
		pid_t r = waitpid(pid, status, deadline_ns ? WNOHANG : 0);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r == 0 && child_left_ms(deadline_ns) == 0) {
			kill(pid, SIGKILL);
			while (waitpid(pid, status, 0) < 0 && errno == EINTR)
				;
			return -ETIMEDOUT;
		}
		if (r == 0) {
			struct timespec ts = {0, pause_ns};
			nanosleep(&ts, NULL);
			pause_ns = pause_ns < 10000000 ? pause_ns * 2 : pause_ns;
		}
	}
}

static uint64_t child_deadline(unsigned timeout_ms)
{
	return timeout_ms ? timer_now_ns() + (uint64_t)timeout_ms * 1000000u : 0;
}

int child_call(int (*fn)(void *), void *arg, unsigned timeout_ms, char *why, size_t len)
{
	static const int crash[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
	int status = 0, rc;
	pid_t pid;

	int done[2];
	char sink[16];

	/* The child holds the write end of a pipe: its end (however it ends) wakes the parent at
	 * once, with no polling of waitpid. */
	if (pipe2(done, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		close(done[0]);
		close(done[1]);
		return rc;
	}
	if (pid == 0) {
		close(done[0]);
		for (size_t i = 0; i < sizeof(crash) / sizeof(crash[0]); i++)
			signal(crash[i], SIG_DFL);
		fn(arg);
		_exit(0);
	}
	close(done[1]);
	rc = child_collect(pid, done[0], sink, sizeof(sink), timeout_ms, &status);
	close(done[0]);
	if (rc < 0)
		return rc;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status))
		snprintf(why, len, "signal %d", WTERMSIG(status));
	else
		snprintf(why, len, "exit status %d", WEXITSTATUS(status));
	return CHILD_CRASHED;
}

int child_collect(pid_t pid, int fd, char *buf, size_t cap, unsigned timeout_ms, int *status)
{
	uint64_t deadline = child_deadline(timeout_ms);
	size_t got = 0;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int left = child_left_ms(deadline);
		if (left == 0)
			break;
		int n = poll(&p, 1, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (n == 0)
			continue; /* the deadline: child_left_ms says 0 next */
		ssize_t r = read(fd, buf + got, cap - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got == cap - 1)
			got = 0; /* keep the tail: a message is at the end */
	}
	buf[got] = '\0';
	return child_reap(pid, deadline, status);
}

/* The worker's loop: a request is a 4-byte length and the bytes; the answer one byte. */
static void child_worker_loop(int fd, int (*fn)(const char *, void *), void *arg)
{
	char req[4200], ok = 0;
	uint32_t n;

	while (read(fd, &n, sizeof(n)) == (ssize_t)sizeof(n) && n < sizeof(req)) {
		size_t got = 0;
		while (got < n) {
			ssize_t r = read(fd, req + got, n - got);
			if (r <= 0)
				_exit(0);
			got += (size_t)r;
		}
		req[n] = '\0';
		fn(req, arg);
		if (write(fd, &ok, 1) != 1)
			break;
	}
	_exit(0);
}

static int child_worker_start(struct child_worker *w, int (*fn)(const char *, void *), void *arg)
{
	static const int crash[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
	int sv[2], rc = 0;

	/* A socket pair, not pipes: a request sent to a worker that died is EPIPE with
	 * MSG_NOSIGNAL, never a SIGPIPE that would end the run. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	fflush(NULL);
	w->pid = fork();
	if (w->pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		/* Nothing of the parent's output is held open by the worker. */
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		for (size_t i = 0; i < sizeof(crash) / sizeof(crash[0]); i++)
			signal(crash[i], SIG_DFL);
		close(sv[0]);
		child_worker_loop(sv[1], fn, arg);
	}
	if (w->pid < 0) {
		rc = -errno;
		w->pid = 0;
		close(sv[0]);
	}
	close(sv[1]);
	w->fd = sv[0];
	return rc;
}

/* Closes the worker's socket and reaps it; *status its end. */
static int child_worker_end(struct child_worker *w, int *status)
{
	int rc;

	close(w->fd);
	rc = child_reap(w->pid, child_deadline(5000), status);
	w->pid = 0;
	return rc;
}

void child_worker_stop(struct child_worker *w)
{
	int status;

	if (w->pid)
		child_worker_end(w, &status);
}

int child_worker_call(struct child_worker *w, int (*fn)(const char *, void *), void *arg,
		      const char *request, unsigned timeout_ms, char *why, size_t len)
{
	uint32_t n = (uint32_t)strlen(request);
	int left = timeout_ms ? (int)timeout_ms : -1, rc, status = 0;
	struct pollfd p;
	char ok;

	if (!w->pid && (rc = child_worker_start(w, fn, arg)) < 0)
		return rc;
	/* A worker that died already answers nothing: its end is read below. */
	if (send(w->fd, &n, sizeof(n), MSG_NOSIGNAL) == (ssize_t)sizeof(n))
		send(w->fd, request, n, MSG_NOSIGNAL);
	p = (struct pollfd){.fd = w->fd, .events = POLLIN};
	while ((rc = poll(&p, 1, left)) < 0 && errno == EINTR)
		;
	if (rc == 0) {
		kill(w->pid, SIGKILL);
		child_worker_end(w, &status);
		return -ETIMEDOUT;
	}
	if (read(w->fd, &ok, 1) == 1)
		return 0;
	/* The worker ended while on this request: how. */
	if ((rc = child_worker_end(w, &status)) < 0)
		return rc;
	if (WIFSIGNALED(status))
		snprintf(why, len, "signal %d", WTERMSIG(status));
	else
		snprintf(why, len, "exit status %d", WEXITSTATUS(status));
	return CHILD_CRASHED;
}
