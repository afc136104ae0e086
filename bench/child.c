/* Children under a time limit: see child.h. */
#include "child.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
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
	uint64_t deadline = child_deadline(timeout_ms);
	int status = 0, rc;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		for (size_t i = 0; i < sizeof(crash) / sizeof(crash[0]); i++)
			signal(crash[i], SIG_DFL);
		fn(arg);
		_exit(0);
	}
	rc = child_reap(pid, deadline, &status);
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
