/* Agreement across ranks, failure notices and the watchdog. */
#include "agree.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "run.h"
#include "timer.h"

#define NOTIFY_TAG 7301

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

	watchdog_kick(run);
	int failed = code != 0 && code != -FB_EPEER, nfailed = 0;

	MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, run->comm);
	watchdog_kick(run);
	if (out.badness == 2)
		return 0;
	MPI_Allreduce(&failed, &nfailed, 1, MPI_INT, MPI_SUM, run->comm);
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
	int flag = 1, buf;

	if (run->nranks == 1)
		return;
	while (flag) {
		MPI_Status st;
		MPI_Iprobe(MPI_ANY_SOURCE, NOTIFY_TAG, run->notify_comm, &flag, &st);
		if (flag)
			MPI_Recv(&buf, 1, MPI_INT, st.MPI_SOURCE, NOTIFY_TAG, run->notify_comm,
				 MPI_STATUS_IGNORE);
	}
}

void watchdog_kick(struct run *run)
{
	__atomic_store_n(&run->progress_ns, timer_now_ns(), __ATOMIC_RELAXED);
}

static void *watchdog_main(void *arg)
{
	struct run *run = arg;

	while (__atomic_load_n(&run->watchdog_on, __ATOMIC_RELAXED)) {
		uint64_t last = __atomic_load_n(&run->progress_ns, __ATOMIC_RELAXED);
		double idle = timer_ns_to_s(timer_now_ns() - last);
		if (idle > run->watchdog_s) {
			fprintf(
			    stderr,
			    "feedbench: rank %d: no progress for %.0f s ([train] watchdog): a peer "
			    "rank may have died; ending the job\n",
			    run->rank, idle);
			fflush(stderr);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		usleep(200000);
	}
	return NULL;
}

int watchdog_start(struct run *run, double seconds)
{
	if (seconds <= 0 || run->watchdog_on)
		return 0;
	run->watchdog_s = seconds;
	watchdog_kick(run);
	run->watchdog_on = 1;
	if (pthread_create(&run->watchdog, NULL, watchdog_main, run) != 0) {
		run->watchdog_on = 0;
		return -1;
	}
	return 0;
}

void watchdog_stop(struct run *run)
{
	if (!run->watchdog_on)
		return;
	__atomic_store_n(&run->watchdog_on, 0, __ATOMIC_RELAXED);
	pthread_join(run->watchdog, NULL);
}
