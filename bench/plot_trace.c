/* The timeline plot from a run's trace.pfw (docs/trace.md): every read, compute step and data
 * wait of every rank and thread, where timeline.csv holds a sample of them. */
#include "plot_trace.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#define PT_LINE	   65536
#define PT_THREADS 4096 /* (rank, thread) pairs numbered; later ones are left out */

struct pt_lanes {
	long long pid[PT_THREADS], tid[PT_THREADS];
	int lane[PT_THREADS];
	int n;
	long long trainer_pid[PT_THREADS], trainer_tid[PT_THREADS];
	int ntrainers;
};

/* The lane of (pid, tid) in its rank's band: 0 for the thread that computes, then in order of
 * first appearance; -1 past PT_THREADS. */
static int pt_lane(struct pt_lanes *l, long long pid, long long tid)
{
	int next = 1;

	for (int i = 0; i < l->ntrainers; i++)
		if (l->trainer_pid[i] == pid && l->trainer_tid[i] == tid)
			return 0;
	for (int i = 0; i < l->n; i++) {
		if (l->pid[i] == pid && l->tid[i] == tid)
			return l->lane[i];
		next += l->pid[i] == pid;
	}
	if (l->n == PT_THREADS)
		return -1;
	l->pid[l->n] = pid;
	l->tid[l->n] = tid;
	l->lane[l->n] = next;
	return l->lane[l->n++];
}

/* One event of a trace line: name, pid, tid, ts, dur and args.step; false for anything else. */
static bool pt_event(char *line, char *name, size_t nlen, long long *pid, long long *tid,
		     double *ts, double *dur, long long *step)
{
	json_t *ev = json_loads(line, 0, NULL), *args;
	const char *n = json_string_value(json_object_get(ev, "name"));
	bool ok = n && json_is_number(json_object_get(ev, "ts")) &&
		  json_is_number(json_object_get(ev, "dur"));

	if (ok) {
		snprintf(name, nlen, "%s", n);
		*pid = json_integer_value(json_object_get(ev, "pid"));
		*tid = json_integer_value(json_object_get(ev, "tid"));
		*ts = json_number_value(json_object_get(ev, "ts"));
		*dur = json_number_value(json_object_get(ev, "dur"));
		args = json_object_get(ev, "args");
		*step = json_is_integer(json_object_get(args, "step"))
			    ? json_integer_value(json_object_get(args, "step"))
			    : -1;
	}
	json_decref(ev);
	return ok;
}

/* First pass: the threads that compute are lane 0 of their rank. */
static void pt_trainers(FILE *in, struct pt_lanes *l, char *line, int maxrows)
{
	char name[64];
	long long pid, tid, step;
	double ts, dur;

	for (int n = 0; n < maxrows && fgets(line, PT_LINE, in); n++)
		if (line[0] == '{' &&
		    pt_event(line, name, sizeof(name), &pid, &tid, &ts, &dur, &step) &&
		    strcmp(name, "compute") == 0 && l->ntrainers < PT_THREADS &&
		    (l->ntrainers == 0 || l->trainer_pid[l->ntrainers - 1] != pid)) {
			l->trainer_pid[l->ntrainers] = pid;
			l->trainer_tid[l->ntrainers++] = tid;
		}
}

int plot_trace_timeline(const char *trace, const char *csv, int maxrows)
{
	FILE *in = fopen(trace, "r"), *out;
	struct pt_lanes *l = calloc(1, sizeof(*l));
	char *line = malloc(PT_LINE), name[64];
	long long pid, tid, step;
	double ts, dur;
	int rows = 0, rc = 0;

	if (!in || !l || !line || !(out = fopen(csv, "w"))) {
		rc = in && l && line ? -errno : in ? -ENOMEM : 0; /* no trace: no plot from it */
		goto out;
	}
	pt_trainers(in, l, line, maxrows);
	rewind(in);
	fprintf(out, "rank,thread,kind,start_seconds,end_seconds\n");
	while (rows < maxrows && fgets(line, PT_LINE, in)) {
		if (line[0] != '{' ||
		    !pt_event(line, name, sizeof(name), &pid, &tid, &ts, &dur, &step))
			continue;
		const char *kind = strcmp(name, "read") == 0	    ? "read"
				   : strcmp(name, "compute") == 0   ? "compute"
				   : strcmp(name, "data_wait") == 0 ? "wait"
								    : NULL;
		int lane = kind ? pt_lane(l, pid, tid) : -1;
		if (lane < 0)
			continue;
		if (step == 0 && pid == 0 && strcmp(kind, "wait") == 0)
			fprintf(out, "0,0,epoch,%.9f,%.9f\n", ts / 1e6, ts / 1e6);
		fprintf(out, "%lld,%d,%s,%.9f,%.9f\n", pid, lane, kind, ts / 1e6, (ts + dur) / 1e6);
		rows++;
	}
	if (fclose(out) != 0 || rows == 0) {
		rc = rows ? -errno : 0;
		unlink(csv);
	} else {
		rc = 1;
	}
out:
	if (in)
		fclose(in);
	free(l);
	free(line);
	return rc;
}
