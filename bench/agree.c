/* Agreement across ranks, failure notices and the watchdog. */
#include "agree.h"

#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "run.h"
#include "timer.h"

#define NOTIFY_TAG    7301
#define HEARTBEAT_TAG 7302

int agree_allreduce(struct run *run, const void *in, void *out, int count, MPI_Datatype type,
		    MPI_Op op)
{
	MPI_Request req;
	uint64_t t0 = timer_now_ns();
	int done = 0, rc;

	rc = MPI_Iallreduce(in, out, count, type, op, run->comm, &req);
	if (rc != MPI_SUCCESS)
		return rc;
	/* Spin for 2 ms (a step barrier is usually that short), then poll every 100 us. */
	while (!done) {
		rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS)
			return rc;
		if (!done && timer_now_ns() - t0 > 2000000ull) {
			struct timespec ts = {0, 100000};
			nanosleep(&ts, NULL);
		}
		watchdog_kick(run);
	}
	return MPI_SUCCESS;
}

int agree(struct run *run, int rc)
{
	/* Lowest "badness" wins: a real failure (0) before a rank that only stopped because a
	 * peer failed (1) before success (2); MINLOC picks the lowest rank among equals. */
	int code = rc ? (run->err.code ? run->err.code : rc) : 0;
	struct {
		int badness;
		int rank;
	} in = {code == 0 ? 2 : (code == -FB_EPEER ? 1 : 0), run->rank}, out;
	char msg[sizeof(run->err.msg) - 32];

	int failed = code != 0 && code != -FB_EPEER, nfailed = 0;

	agree_allreduce(run, &in, &out, 1, MPI_2INT, MPI_MINLOC);
	if (out.badness == 2)
		return 0;
	agree_allreduce(run, &failed, &nfailed, 1, MPI_INT, MPI_SUM);
	if (run->rank == out.rank)
		snprintf(msg, sizeof(msg), "%.990s",
			 run->err.msg[0] ? run->err.msg : fb_strerror(code));
	MPI_Bcast(&code, 1, MPI_INT, out.rank, run->comm);
	MPI_Bcast(msg, (int)sizeof(msg), MPI_CHAR, out.rank, run->comm);
	pthread_mutex_lock(&run->err.lock);
	run->err.code = code;
	/* Name the rank when the failure is its own; an error every rank hit (a config
	 * error) reads better without one. */
	if (nfailed < run->nranks && strncmp(msg, "rank ", 5) != 0)
		snprintf(run->err.msg, sizeof(run->err.msg), "rank %d: %s", out.rank, msg);
	else
		snprintf(run->err.msg, sizeof(run->err.msg), "%s", msg);
	pthread_mutex_unlock(&run->err.lock);
	return code;
}

void agree_notify_failure(struct run *run)
{
	if (run->notified || run->nranks == 1)
		return;
	run->notified = 1;
	run->notify_buf = run->rank;
	for (int r = 0; r < run->nranks; r++) {
		MPI_Request req;
		if (r == run->rank)
			continue;
		if (MPI_Isend(&run->notify_buf, 1, MPI_INT, r, NOTIFY_TAG, run->notify_comm,
			      &req) == MPI_SUCCESS)
			MPI_Request_free(&req);
	}
}

int agree_peer_failed(struct run *run)
{
	int flag = 0;

	if (run->nranks == 1)
		return 0;
	MPI_Iprobe(MPI_ANY_SOURCE, NOTIFY_TAG, run->notify_comm, &flag, MPI_STATUS_IGNORE);
	return flag;
}

void agree_drain(struct run *run)
{
	static const int tags[] = {NOTIFY_TAG, HEARTBEAT_TAG};
	int buf;

	if (run->nranks == 1)
		return;
	for (int t = 0; t < 2; t++) {
		for (int flag = 1; flag;) {
			MPI_Status st;
			MPI_Iprobe(MPI_ANY_SOURCE, tags[t], run->notify_comm, &flag, &st);
			if (flag)
				MPI_Recv(&buf, 1, MPI_INT, st.MPI_SOURCE, tags[t], run->notify_comm,
					 MPI_STATUS_IGNORE);
		}
	}
}

void watchdog_kick(struct run *run)
{
	watchdog_kick_at(run, timer_now_ns());
}

void watchdog_kick_at(struct run *run, uint64_t now_ns)
{
	__atomic_store_n(&run->progress_ns, now_ns, __ATOMIC_RELAXED);
}

/* The watchdog thread watches two things:
 * - this rank's own progress (steps, generation, agreement waits kick it): a rank stuck in an
 *   I/O call or a collective read for longer than [train] watchdog ends the job;
 * - its left neighbour's heartbeat: every rank sends one to its right neighbour four times
 *   per watchdog period, so a rank that died is noticed even while the others wait for it in
 *   an agreement (the launcher usually notices first; this is for those that do not). */
static void watchdog_fire(struct run *run, const char *why, double idle)
{
	fprintf(stderr,
		"feedbench: rank %d on %s: %s for %.0f s ([train] watchdog); ending the job\n",
		run->rank, run->hostname, why, idle);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Time the process spent stopped (SIGSTOP/SIGTSTP: a suspended batch job, a debugger) is no
 * lack of progress. CLOCK_MONOTONIC keeps running while stopped, so a pause shows as a poll
 * of this thread that came far later than its 200 ms sleep; the lateness beyond
 * WATCHDOG_LATE_NS is counted as stopped time and taken out of every idle span it fell in
 * (a busy machine that delays this thread by more than that only delays a verdict). */
#define WATCHDOG_POLL_NS 200000000ull
#define WATCHDOG_LATE_NS 800000000ull

static void *watchdog_main(void *arg)
{
	struct run *run = arg;
	int left = (run->rank + run->nranks - 1) % run->nranks;
	int right = (run->rank + 1) % run->nranks;
	uint64_t heard = timer_now_ns(), sent = 0, prev = heard;
	uint64_t period = (uint64_t)(run->watchdog_s * 1e9 / 4);
	/* stopped: total stopped time; *_stopped: its value when `last` and `heard` were seen
	 * to change, so an idle span is (now - since) - (stopped - stopped then). */
	uint64_t stopped = 0, seen_last = 0, last_stopped = 0, heard_stopped = 0;

	while (__atomic_load_n(&run->watchdog_on, __ATOMIC_RELAXED)) {
		uint64_t now = timer_now_ns();
		uint64_t last = __atomic_load_n(&run->progress_ns, __ATOMIC_RELAXED);

		/* A kick seen now may be from before the pause: snapshot before adding it. */
		if (last != seen_last) {
			seen_last = last;
			last_stopped = stopped;
		}
		if (now - prev > WATCHDOG_POLL_NS + WATCHDOG_LATE_NS) {
			stopped += now - prev - WATCHDOG_POLL_NS;
			__atomic_store_n(&run->stopped_ns, stopped, __ATOMIC_RELAXED);
		}
		prev = now;
		/* `last` may be newer than `now`: the main thread kicks concurrently. */
		uint64_t idle = last < now ? now - last : 0;
		idle = idle > stopped - last_stopped ? idle - (stopped - last_stopped) : 0;
		if (timer_ns_to_s(idle) > run->watchdog_s)
			watchdog_fire(run, "no progress", timer_ns_to_s(idle));
		if (run->nranks > 1) {
			int flag = 1, buf;
			if (now - sent >= period) {
				MPI_Request req;
				run->heartbeat_buf = run->rank;
				if (MPI_Isend(&run->heartbeat_buf, 1, MPI_INT, right, HEARTBEAT_TAG,
					      run->notify_comm, &req) == MPI_SUCCESS)
					MPI_Request_free(&req);
				sent = now;
			}
			while (flag) {
				MPI_Iprobe(left, HEARTBEAT_TAG, run->notify_comm, &flag,
					   MPI_STATUS_IGNORE);
				if (flag) {
					MPI_Recv(&buf, 1, MPI_INT, left, HEARTBEAT_TAG,
						 run->notify_comm, MPI_STATUS_IGNORE);
					heard = now;
					heard_stopped = stopped;
				}
			}
			uint64_t quiet = now - heard;
			quiet =
			    quiet > stopped - heard_stopped ? quiet - (stopped - heard_stopped) : 0;
			if (timer_ns_to_s(quiet) > run->watchdog_s) {
				char why[160];
				/* Name the host: when a node dies, its ranks go silent together,
				 * and the host is what the user has to look at. */
				snprintf(
				    why, sizeof(why),
				    "no heartbeat from rank %d on host %s (the rank or its host "
				    "may have died)",
				    left, run->rank_hosts ? run->rank_hosts[left] : "?");
				watchdog_fire(run, why, timer_ns_to_s(quiet));
			}
		}
		/* Sleep 200 ms, or until watchdog_stop() writes the eventfd: the run's end is not
		 * delayed by a sleeping watchdog. */
		struct pollfd pfd = {.fd = run->watchdog_wake, .events = POLLIN};
		if (poll(&pfd, 1, 200) > 0)
			break;
	}
	return NULL;
}

int watchdog_start(struct run *run, double seconds)
{
	if (seconds <= 0 || run->watchdog_on)
		return 0;
	run->watchdog_s = seconds;
	watchdog_kick(run);
	run->watchdog_wake = eventfd(0, EFD_CLOEXEC);
	if (run->watchdog_wake < 0)
		return -1;
	run->watchdog_on = 1;
	if (pthread_create(&run->watchdog, NULL, watchdog_main, run) != 0) {
		run->watchdog_on = 0;
		close(run->watchdog_wake);
		return -1;
	}
	return 0;
}

void watchdog_stop(struct run *run)
{
	if (!run->watchdog_on)
		return;
	uint64_t one = 1;

	__atomic_store_n(&run->watchdog_on, 0, __ATOMIC_RELAXED);
	if (write(run->watchdog_wake, &one, sizeof(one)) != sizeof(one))
		perror("feedbench: watchdog eventfd"); /* the thread still ends within 200 ms */
	pthread_join(run->watchdog, NULL);
	close(run->watchdog_wake);
}
