/* Live statistics and early stops (live.h). */
#include "live.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "agree.h"
#include "run.h"
#include "safefile.h"
#include "timer.h"

/* What each rank sends at each interval: its counters since the run's first phase. */
enum { F_T, F_BYTES, F_OPS, F_STEPS, F_COMPUTE, F_STEP, F_DONE, F_TAIL, NF };

#define STEADY_MAX 1000 /* steady_state_intervals' upper bound (config_keys.c) */

struct live {
	MPI_Comm comm; /* of its own: the thread's gathers never meet the run's collectives */
	pthread_t thread;
	bool thread_on;	   /* one thread for the repetition's phases: live_close joins it */
	bool thread_fails; /* it could not start: every gather is made from live_end */
	/* Held by the thread while it tests, consumes and posts, and by live_begin and live_end
	 * while they hand it a phase or take it back. */
	pthread_mutex_t mu;
	bool active; /* between live_begin and live_end: the same on every rank (the config's) */
	int wake;    /* eventfd: live_close wakes the sleeping thread at once */
	_Atomic int quit;    /* the repetition's training ended: the thread returns */
	_Atomic int stop;    /* enum live_stop every rank agreed on */
	double stop_after_s; /* elapsed seconds (rank 0's clock) at the interval that decided */
	uint64_t period_ns;  /* how often the thread gathers */
	bool print;	     /* live_interval > 0: rank 0 prints and keeps rows */
	bool tty;
	uint64_t t_base; /* ns: the first phase of the repetition began */
	char what[64];
	int phase, nphases;
	live_sampler fn;
	void *arg;
	double base[NF];	       /* counters of the earlier phases */
	double send[NF], *recv, *prev; /* recv: [nranks][NF]; prev: the last gather's */
	bool have_prev;
	MPI_Request req;
	bool pending;
	long posted;		 /* gathers this rank posted in this phase */
	long rows;		 /* intervals gathered over the run */
	double line_was[NF + 1]; /* rank 0: the totals at its last line ([NF]: their time) */
	double rates[STEADY_MAX];
	int nrates;
	struct {
		double t, bytes;
	} decided; /* the totals at the last gather that decided (the thread's, on its grid) */
	FILE *csv, *rcsv;	/* rank 0: live.csv's rows, ranks.csv's per-interval rows */
	uint64_t thread_cpu_ns; /* the thread's own CPU time over the run (all its phases) */
	double proc_cpu_s;	/* the process's CPU while the thread ran (the same phases) */
	double proc_cpu0;	/* the process's CPU when the thread started */
	double *lost;		/* rank 0, [nranks]: seconds each rank spent not computing */
};

static const char *const stop_names[] = {"", "time_limit", "steady_state"};

const char *live_stop_name(enum live_stop why)
{
	return stop_names[why];
}

enum live_stop live_stopping(const struct run *run)
{
	return run->live ? (enum live_stop)atomic_load(&run->live->stop) : LIVE_RUN;
}

enum live_stop live_stopped(const struct run *run, double *after_s)
{
	enum live_stop why = live_stopping(run);

	*after_s = why ? run->live->stop_after_s : 0;
	return why;
}

/* ---- one gathered interval ------------------------------------------------------------- */

/* tail: posted by live_end (the phase ended on this rank), not by the thread. */
static void sample(struct live *lv, double t_s, bool tail)
{
	struct live_sample s = {0};

	lv->fn(lv->arg, &s);
	lv->send[F_T] = t_s;
	lv->send[F_BYTES] = lv->base[F_BYTES] + s.bytes;
	lv->send[F_OPS] = lv->base[F_OPS] + s.ops;
	lv->send[F_STEPS] = lv->base[F_STEPS] + s.steps;
	lv->send[F_COMPUTE] = lv->base[F_COMPUTE] + s.compute_s;
	lv->send[F_STEP] = lv->base[F_STEP] + s.step_s;
	lv->send[F_DONE] = s.done;
	lv->send[F_TAIL] = tail;
}

static int post(struct run *run)
{
	struct live *lv = run->live;
	int rc =
	    MPI_Iallgather(lv->send, NF, MPI_DOUBLE, lv->recv, NF, MPI_DOUBLE, lv->comm, &lv->req);

	lv->pending = rc == MPI_SUCCESS;
	lv->posted += lv->pending;
	return rc;
}

/* Sums over ranks of what the gather brought; the slowest rank is the one least far through
 * the phase (ties: the fewest bytes). */
struct totals {
	double t, v[NF];
	int slowest;
};

static void totals_of(const struct run *run, const double *recv, struct totals *o)
{
	memset(o, 0, sizeof(*o));
	o->t = recv[F_T]; /* rank 0's clock */
	for (int r = 0; r < run->nranks; r++) {
		const double *x = recv + (size_t)r * NF, *s = recv + (size_t)o->slowest * NF;
		for (int f = F_BYTES; f < F_TAIL; f++)
			o->v[f] += x[f];
		if (x[F_TAIL] > 0)
			o->v[F_TAIL] = 1;
		if (x[F_DONE] < s[F_DONE] || (x[F_DONE] == s[F_DONE] && x[F_BYTES] < s[F_BYTES]))
			o->slowest = r;
	}
}

/* Every rank: time_limit, and steady state over the rates of the last K whole intervals, each
 * from the last gather that decided to this one: the gathers at epochs' ends come between
 * (epochs shorter than an interval left only short stretches after them, and no rate). */
static void decide(struct run *run, const struct totals *now)
{
	struct live *lv = run->live;
	const struct config *cfg = &run->cfg;
	double dt = now->t - lv->decided.t, lim = cfg->train.time_limit;
	int k = (int)cfg->train.steady_state_intervals;
	enum live_stop why = LIVE_RUN;

	if (lim > 0 && now->t >= lim)
		why = LIVE_TIME_LIMIT;
	if (!why && cfg->train.steady_state && dt >= 0.5 * timer_ns_to_s(lv->period_ns)) {
		double mean = 0;
		bool steady = true;
		if (lv->nrates == STEADY_MAX)
			memmove(lv->rates, lv->rates + 1, sizeof(lv->rates[0]) * (STEADY_MAX - 1));
		lv->rates[lv->nrates < STEADY_MAX ? lv->nrates++ : STEADY_MAX - 1] =
		    (now->v[F_BYTES] - lv->decided.bytes) / dt;
		for (int i = lv->nrates - k; i >= 0 && i < lv->nrates; i++)
			mean += lv->rates[i] / k;
		for (int i = lv->nrates - k; i >= 0 && i < lv->nrates; i++)
			steady &= fabs(lv->rates[i] - mean) <=
				  mean * cfg->train.steady_state_percent / 100.0;
		if (lv->nrates >= k && mean > 0 && steady)
			why = LIVE_STEADY_STATE;
	}
	if (why && !atomic_load(&lv->stop)) {
		lv->stop_after_s = now->t;
		atomic_store(&lv->stop, why);
		if (run->rank == 0 && run->verbose >= 0) {
			if (why == LIVE_TIME_LIMIT)
				fprintf(stderr, "%sfeedbench: time_limit %.1f s reached",
					lv->tty ? "\r\033[K" : "", lim);
			else
				fprintf(stderr,
					"%sfeedbench: steady state: the last %d intervals "
					"within %.1f %% of their mean",
					lv->tty ? "\r\033[K" : "", k,
					cfg->train.steady_state_percent);
			fprintf(stderr,
				" after %.1f s: every rank stops at its next step "
				"(summary.json: stopped_early)\n",
				now->t);
			fflush(stderr);
		}
	}
}

static void fmt_eta(char *buf, size_t len, double eta)
{
	if (eta < 0 || !isfinite(eta))
		snprintf(buf, len, "?");
	else if (eta >= 3600)
		snprintf(buf, len, "%dh%02dm", (int)(eta / 3600), (int)fmod(eta / 60, 60));
	else
		snprintf(buf, len, "%.0f s", eta);
}

/* Seconds to the end of the run from how far the slowest rank is; or to time_limit. */
static double eta_of(const struct run *run, const struct totals *now)
{
	const struct live *lv = run->live;
	double done = lv->recv[(size_t)now->slowest * NF + F_DONE];
	double f = ((double)lv->phase + done) / (double)lv->nphases,
	       lim = run->cfg.train.time_limit;
	double eta = f > 0 ? now->t * (1 - f) / f : -1;

	if (lim > 0 && (eta < 0 || lim - now->t < eta))
		eta = lim > now->t ? lim - now->t : 0;
	return eta;
}

/* Rank 0: the line on stderr. */
static void report_line(struct run *run, const struct totals *now, const struct totals *was)
{
	struct live *lv = run->live;
	double dt = now->t - was->t, mib = 1048576.0;
	double dbytes = now->v[F_BYTES] - was->v[F_BYTES], dops = now->v[F_OPS] - was->v[F_OPS];
	double au = now->v[F_STEP] > 0 ? 100 * now->v[F_COMPUTE] / now->v[F_STEP] : NAN;
	int s = now->slowest;
	char etas[32], aus[16] = "n/a";

	fmt_eta(etas, sizeof(etas), eta_of(run, now));
	if (isfinite(au))
		snprintf(aus, sizeof(aus), "%.1f %%", au);
	fprintf(stderr,
		"%slive %s %.1f s: %.1f MiB/s %.0f IOPS (so far %.1f MiB/s %.0f IOPS), AU %s, "
		"slowest rank %d (%s, %.0f %% done), ETA %s%s",
		lv->tty ? "\r\033[K" : "", lv->what, now->t, dt > 0 ? dbytes / mib / dt : 0,
		dt > 0 ? dops / dt : 0, now->t > 0 ? now->v[F_BYTES] / mib / now->t : 0,
		now->t > 0 ? now->v[F_OPS] / now->t : 0, aus, s,
		run->rank_hosts ? run->rank_hosts[s] : "?", 100 * lv->recv[(size_t)s * NF + F_DONE],
		etas, lv->tty ? "" : "\n");
	fflush(stderr);
}

/* Rank 0: the row of live.csv (live_header). */
static void report_row(struct run *run, const struct totals *now, const struct totals *was)
{
	struct live *lv = run->live;
	double dt = now->t - was->t, mib = 1048576.0, eta = eta_of(run, now);
	double dbytes = now->v[F_BYTES] - was->v[F_BYTES], dops = now->v[F_OPS] - was->v[F_OPS];
	int s = now->slowest;

	if (!lv->csv)
		return;
	fprintf(lv->csv, "%ld,\"%s\",%.6f,%.6f,%.0f,%.0f,%.6f,%.6f,%.6f,%.6f,%.0f,%.0f,", lv->rows,
		lv->what, now->t, dt, dbytes, dops, dt > 0 ? dbytes / mib / dt : 0,
		dt > 0 ? dops / dt : 0, now->t > 0 ? now->v[F_BYTES] / mib / now->t : 0,
		now->t > 0 ? now->v[F_OPS] / now->t : 0, now->v[F_BYTES], now->v[F_OPS]);
	if (now->v[F_STEP] > 0)
		fprintf(lv->csv, "%.6f", 100 * now->v[F_COMPUTE] / now->v[F_STEP]);
	fprintf(lv->csv, ",%d,\"%s\",%.6f,", s, run->rank_hosts ? run->rank_hosts[s] : "",
		100 * lv->recv[(size_t)s * NF + F_DONE]);
	if (eta >= 0 && isfinite(eta))
		fprintf(lv->csv, "%.3f", eta);
	fprintf(lv->csv, "\n");
}

/* Rank 0: one row per rank for the interval, in ranks.csv's columns (train_outputs.c), and
 * each rank's time not computing (its lost time). */
static void report_ranks(struct run *run)
{
	struct live *lv = run->live;

	for (int r = 0; r < run->nranks && lv->rcsv; r++) {
		const double *x = lv->recv + (size_t)r * NF, *p = lv->prev + (size_t)r * NF;
		double dt = x[F_T] - p[F_T], db = x[F_BYTES] - p[F_BYTES];
		double dc = x[F_COMPUTE] - p[F_COMPUTE], ds = x[F_STEP] - p[F_STEP];
		fprintf(lv->rcsv, "%d,\"%s\",%.9f,%.0f,%.0f,,%.6f,", r,
			run->rank_hosts ? run->rank_hosts[r] : "", dt, db, x[F_OPS] - p[F_OPS],
			dt > 0 ? db / 1048576.0 / dt : 0);
		if (ds > 0)
			fprintf(lv->rcsv, "%.6f", 100 * dc / ds);
		fprintf(lv->rcsv, ",%.9f,%.9f,,,,%ld,%.6f\n", dc, ds, lv->rows, x[F_T]);
		lv->lost[r] += ds - dc;
	}
}

/* A gather completed: decide, report, remember. A gather some rank posted from live_end (its
 * interval may be short) takes no part in the decisions: every rank sees the same figures, so
 * every rank decides the same at the same gather. */
static void consume(struct run *run)
{
	struct live *lv = run->live;
	struct totals now, was;
	size_t n = (size_t)run->nranks * NF;

	totals_of(run, lv->recv, &now);
	if (lv->have_prev)
		totals_of(run, lv->prev, &was);
	else
		memset(&was, 0, sizeof(was));
	if (!now.v[F_TAIL]) {
		decide(run, &now);
		lv->decided.t = now.t;
		lv->decided.bytes = now.v[F_BYTES];
	}
	lv->rows++;
	if (run->rank == 0 && lv->print) {
		/* A line per interval, over the time since the last line: a phase's last gather
		 * (rows at every epoch's end) gets one only when a whole interval has passed. */
		struct totals last = {.t = lv->line_was[NF]};
		double gap = now.t - last.t, every = timer_ns_to_s(lv->period_ns);
		memcpy(last.v, lv->line_was, sizeof(last.v));
		if (gap >= (now.v[F_TAIL] ? every : 0.5 * every)) {
			report_line(run, &now, &last);
			memcpy(lv->line_was, now.v, sizeof(now.v));
			lv->line_was[NF] = now.t;
		}
		report_row(run, &now, &was);
		report_ranks(run);
	}
	memcpy(lv->prev, lv->recv, n * sizeof(double));
	lv->have_prev = true;
}

/* ---- the thread ------------------------------------------------------------------------- */

/* The next point of the repetition's grid after now (ns), so that epochs shorter than an
 * interval still get lines. */
static uint64_t grid_next(const struct live *lv, uint64_t now)
{
	return lv->t_base + ((now - lv->t_base) / lv->period_ns + 1) * lv->period_ns;
}

/* One turn of the thread, under lv->mu: completes a gather in flight, posts the one due while
 * a phase is on (between phases it skips to the grid's next point). Returns the ns to wait. */
static uint64_t live_turn(struct run *run, uint64_t *next)
{
	struct live *lv = run->live;
	uint64_t now = timer_now_ns();
	int done = 0;

	if (lv->pending && MPI_Test(&lv->req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done) {
		lv->pending = false;
		consume(run);
	}
	if (!lv->pending && now >= *next) {
		if (lv->active) {
			sample(lv, timer_ns_to_s(now - lv->t_base), false);
			post(run);
			*next = now + lv->period_ns;
		} else {
			*next = grid_next(lv, now);
		}
	}
	/* Pending: test every 2 ms (MPI progresses the gather inside the test); else sleep to
	 * the next interval. */
	uint64_t wait = lv->pending ? 2000000ull : *next - timer_now_ns();
	return wait > lv->period_ns ? 0 : wait;
}

static void *live_main(void *arg)
{
	struct run *run = arg;
	struct live *lv = run->live;
	uint64_t next = grid_next(lv, timer_now_ns());

	while (!atomic_load(&lv->quit)) {
		pthread_mutex_lock(&lv->mu);
		uint64_t wait = live_turn(run, &next);
		pthread_mutex_unlock(&lv->mu);
		/* until the next turn (rounded up to poll's milliseconds: the last one before a
		 * gather is no busy loop), or until live_close writes the eventfd */
		struct pollfd pfd = {.fd = lv->wake, .events = POLLIN};
		if (poll(&pfd, 1, (int)((wait + 999999ull) / 1000000ull)) > 0)
			break;
	}
	/* Its CPU time from its start, read by live_end after the join. */
	struct timespec cpu;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
		lv->thread_cpu_ns += (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec;
	return NULL;
}

/* ---- begin, end ------------------------------------------------------------------------ */

static void live_csv_open(struct run *run, struct live *lv)
{
	if (run->rank != 0 || !lv->print || lv->csv)
		return;
	lv->csv = tmpfile();
	lv->rcsv = tmpfile();
	lv->lost = calloc((size_t)run->nranks, sizeof(double));
	if (!lv->csv || !lv->rcsv || !lv->lost)
		run_warn(run,
			 "live statistics: cannot keep rows for live.csv (%s); the lines on "
			 "stderr go on",
			 strerror(errno));
}

static struct live *live_make(struct run *run)
{
	struct live *lv = calloc(1, sizeof(*lv));
	size_t n = (size_t)run->nranks * NF;

	if (!lv)
		return NULL;
	lv->recv = calloc(n, sizeof(double));
	lv->prev = calloc(n, sizeof(double));
	lv->wake = -1;
	if (!lv->recv || !lv->prev || pthread_mutex_init(&lv->mu, NULL) != 0) {
		free(lv->recv);
		free(lv->prev);
		free(lv);
		return NULL;
	}
	if (MPI_Comm_dup(run->comm, &lv->comm) != MPI_SUCCESS) {
		pthread_mutex_destroy(&lv->mu);
		free(lv->recv);
		free(lv->prev);
		free(lv);
		return NULL;
	}
	return lv;
}

/* User + system CPU seconds of the whole process so far (every thread's). */
static double proc_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* The repetition's thread, started at its first phase and joined by live_close: the phases
 * (epochs) are handed to it under lv->mu, so an epoch's edges cost no thread start and no join.
 * Without it this rank still makes every gather, from live_end. */
static void live_start(struct run *run, struct live *lv)
{
	if (lv->thread_on || lv->thread_fails)
		return;
	atomic_store(&lv->quit, 0);
	lv->proc_cpu0 = proc_cpu_s();
	lv->wake = eventfd(0, EFD_CLOEXEC);
	lv->thread_on = lv->wake >= 0 && pthread_create(&lv->thread, NULL, live_main, run) == 0;
	if (lv->thread_on)
		return;
	if (lv->wake >= 0)
		close(lv->wake);
	lv->wake = -1;
	lv->thread_fails = true;
	run_warn(run,
		 "rank %d: cannot start the live statistics thread; its figures reach the live "
		 "lines at each epoch's end",
		 run->rank);
}

/* A repetition begins: its own clock, counters and stop. */
static void live_reset(struct run *run, struct live *lv)
{
	memset(lv->base, 0, sizeof(lv->base));
	memset(lv->prev, 0, (size_t)run->nranks * NF * sizeof(double));
	memset(lv->line_was, 0, sizeof(lv->line_was));
	lv->have_prev = false;
	lv->nrates = 0;
	lv->decided.t = lv->decided.bytes = 0;
	atomic_store(&lv->stop, LIVE_RUN);
	lv->t_base = timer_now_ns();
}

int live_begin(struct run *run, const char *what, int phase, int nphases, live_sampler fn,
	       void *arg)
{
	const struct config *cfg = &run->cfg;
	double every = cfg->output.live_interval;
	bool stops = cfg->train.time_limit > 0 || cfg->train.steady_state;
	struct live *lv;

	if (every <= 0 && !stops)
		return 0;
	if (!run->live && !(run->live = live_make(run)))
		return run_fail(run, -ENOMEM, "out of memory (live statistics)");
	lv = run->live;
	if (phase == 0)
		live_close(run); /* the last repetition's thread, if it was left running */
	pthread_mutex_lock(&lv->mu);
	lv->print = every > 0 && run->verbose >= 0;
	lv->tty = isatty(STDERR_FILENO);
	lv->period_ns = (uint64_t)((every > 0 ? every : 1.0) * 1e9);
	if (phase == 0)
		live_reset(run, lv);
	live_csv_open(run, lv);
	snprintf(lv->what, sizeof(lv->what), "%s", what);
	lv->phase = phase;
	lv->nphases = nphases > 0 ? nphases : 1;
	lv->fn = fn;
	lv->arg = arg;
	lv->posted = 0;
	lv->active = true;
	pthread_mutex_unlock(&lv->mu);
	live_start(run, lv);
	return 0;
}

void live_end(struct run *run)
{
	struct live *lv = run->live;
	long most = 0;

	if (!lv || !lv->active)
		return;
	/* The thread posts no gather once it sees the phase inactive; it waits for the mutex
	 * while this makes the phase's last ones. */
	pthread_mutex_lock(&lv->mu);
	lv->active = false;
	/* Every rank makes as many gathers as the one that made the most, then the last (its
	 * totals are the phase's). */
	agree_allreduce(run, &lv->posted, &most, 1, MPI_LONG, MPI_MAX);
	if (lv->pending) {
		MPI_Wait(&lv->req, MPI_STATUS_IGNORE);
		lv->pending = false;
		consume(run);
	}
	while (lv->posted <= most) {
		sample(lv, timer_ns_to_s(timer_now_ns() - lv->t_base), true);
		if (post(run) != MPI_SUCCESS)
			break;
		MPI_Wait(&lv->req, MPI_STATUS_IGNORE);
		lv->pending = false;
		consume(run);
	}
	if (lv->tty && lv->print && run->rank == 0)
		fprintf(stderr, "\r\033[K");
	memcpy(lv->base, lv->send, sizeof(lv->base));
	lv->base[F_DONE] = lv->base[F_TAIL] = 0;
	pthread_mutex_unlock(&lv->mu);
}

void live_close(struct run *run)
{
	struct live *lv = run->live;
	uint64_t one = 1;

	if (!lv || !lv->thread_on)
		return;
	atomic_store(&lv->quit, 1);
	if (write(lv->wake, &one, sizeof(one)) != sizeof(one))
		perror("feedbench: live eventfd"); /* the thread ends within an interval */
	pthread_join(lv->thread, NULL);
	lv->thread_on = false;
	lv->proc_cpu_s += proc_cpu_s() - lv->proc_cpu0;
	close(lv->wake);
	lv->wake = -1;
}

/* ---- after the run ------------------------------------------------------------------------ */

static const char live_header[] =
    "interval,phase,elapsed_seconds,interval_seconds,bytes,ops,bandwidth_MiB_per_second,iops,"
    "bandwidth_so_far_MiB_per_second,iops_so_far,bytes_so_far,ops_so_far,au_so_far_percentage,"
    "slowest_rank,slowest_host,slowest_done_percentage,eta_seconds\n";

/* Appends what the temporary file holds to dir/name (the header first when it is new). */
static int copy_rows(FILE *from, const char *dir, const char *name, const char *header)
{
	char path[4200], buf[65536];
	size_t n;
	FILE *to;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* never through a link, never into a FIFO or device (the safe-file rules of every output)
	 */
	int fd = safe_open_write(path, header ? 0 : O_APPEND, header != NULL);
	if (fd < 0)
		return fd;
	if (!(to = fdopen(fd, header ? "w" : "a"))) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if (header)
		fputs(header, to);
	rewind(from);
	while ((n = fread(buf, 1, sizeof(buf), from)) > 0)
		if (fwrite(buf, 1, n, to) != n)
			rc = -EIO;
	if (ferror(from))
		rc = -EIO;
	if (fclose(to) != 0 && rc == 0)
		rc = -errno;
	fseek(from, 0, SEEK_END);
	return rc;
}

int live_write(const struct run *run, const char *dir)
{
	const struct live *lv = run->live;
	int rc;

	if (run->rank != 0 || !lv || !lv->csv || !lv->rcsv || lv->rows == 0)
		return 0;
	rc = copy_rows(lv->csv, dir, "live.csv", live_header);
	if (rc == 0)
		rc = copy_rows(lv->rcsv, dir, "ranks.csv", NULL);
	return rc;
}

double live_thread_cpu_s(const struct run *run, double *proc_s)
{
	*proc_s = run->live ? run->live->proc_cpu_s : 0;
	return run->live ? timer_ns_to_s(run->live->thread_cpu_ns) : 0;
}

int live_slowest(const struct run *run, double *share)
{
	const struct live *lv = run->live;
	double all = 0;
	int worst = -1;

	*share = 0;
	if (run->rank != 0 || !lv || !lv->lost || lv->rows == 0)
		return -1;
	for (int r = 0; r < run->nranks; r++) {
		all += lv->lost[r];
		if (worst < 0 || lv->lost[r] > lv->lost[worst])
			worst = r;
	}
	*share = all > 0 ? lv->lost[worst] / all : 0;
	return worst;
}

void live_free(struct run *run)
{
	struct live *lv = run->live;

	if (!lv)
		return;
	live_close(run);
	pthread_mutex_destroy(&lv->mu);
	if (lv->csv)
		fclose(lv->csv);
	if (lv->rcsv)
		fclose(lv->rcsv);
	MPI_Comm_free(&lv->comm);
	free(lv->recv);
	free(lv->prev);
	free(lv->lost);
	free(lv);
	run->live = NULL;
}
