/* import-trace's state (import_trace.h): per-file and per-thread counts fed by the readers
 * (import_trace_read.c), and what they say about the traced job (it_derive). */
#include "import_trace.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the state: files, threads, sizes -------------------------------------------------- */

static uint64_t it_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The open-addressed table of files, doubled when half full. -1: out of memory or too many. */
static int it_grow(struct it *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	int *slots = malloc(cap * sizeof(*slots));
	struct it_file *files = realloc(t->files, cap / 2 * sizeof(*files));

	if (!slots || !files) {
		free(slots);
		if (files)
			t->files = files;
		return -1;
	}
	t->files = files;
	for (size_t i = 0; i < cap; i++)
		slots[i] = -1;
	for (size_t i = 0; i < t->nfiles; i++) {
		size_t k = t->files[i].hash & (cap - 1);
		while (slots[k] >= 0)
			k = (k + 1) & (cap - 1);
		slots[k] = (int)i;
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

/* The file named path (added when new); NULL when the trace names too many files. */
struct it_file *it_file_get(struct it *t, const char *path)
{
	uint64_t h = it_hash(path);
	size_t k;

	if (t->nfiles >= IT_MAX_FILES || (t->nfiles * 2 >= t->cap && it_grow(t) < 0))
		return NULL;
	for (k = h & (t->cap - 1); t->slots[k] >= 0; k = (k + 1) & (t->cap - 1)) {
		struct it_file *f = &t->files[t->slots[k]];
		if (f->hash == h && strcmp(f->path, path) == 0)
			return f;
	}
	struct it_file *f = &t->files[t->nfiles];
	memset(f, 0, sizeof(*f));
	if (!(f->path = strdup(path)))
		return NULL;
	f->hash = h;
	t->slots[k] = (int)t->nfiles++;
	return f;
}

/* The thread (pid, tid), added when new; NULL when there are too many. */
static struct it_thread *it_thread_get(struct it *t, int64_t pid, int64_t tid)
{
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].pid == pid && t->threads[i].tid == tid)
			return &t->threads[i];
	if (t->nthreads >= IT_MAX_THREADS)
		return NULL;
	struct it_thread *th = &t->threads[t->nthreads++];
	memset(th, 0, sizeof(*th));
	th->pid = pid;
	th->tid = tid;
	th->last = -1;
	return th;
}

static void it_size_add(struct it *t, uint64_t size)
{
	for (int i = 0; i < t->nsizes; i++)
		if (t->sizes[i].size == size) {
			t->sizes[i].count++;
			return;
		}
	if (t->nsizes < IT_MAX_SIZES)
		t->sizes[t->nsizes++] = (struct it_size){size, 1};
	else
		t->sizes_other++;
}

void it_free(struct it *t)
{
	for (size_t i = 0; i < t->nfiles; i++)
		free(t->files[i].path);
	free(t->files);
	free(t->slots);
	free(t->threads);
	for (size_t i = 0; i < t->nfh; i++)
		free(t->fh[i].path);
	free(t->fh);
}

/* The process pid's totals (added when new); NULL past IT_MAX_PROCS processes, whose CPU
 * counters are then left out. */
static struct it_proc *it_proc_get(struct it *t, int64_t pid)
{
	for (int i = 0; i < t->nprocs; i++)
		if (t->procs[i].pid == pid)
			return &t->procs[i];
	if (t->nprocs >= IT_MAX_PROCS)
		return NULL;
	struct it_proc *p = &t->procs[t->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

/* One event's thread CPU time (tdur < 0: none) into a process's total *sum. */
static void it_tally(struct it *t, int64_t pid, size_t sum, double tdur)
{
	struct it_proc *p = it_proc_get(t, pid);

	if (!p)
		return;
	if (tdur >= 0)
		*(double *)((char *)&p->now + sum) += tdur;
	else
		p->now.untimed++;
}

/* ---- events ---------------------------------------------------------------------------- */

/* One read of size bytes at off of path by thread (pid, tid) over [ts, ts + dur] µs. */
/* A thread's I/O: its time, and its thread CPU time where the event has it. */
static void io_time(struct it_thread *th, double dur, double tdur)
{
	th->io_us += dur;
	if (tdur >= 0)
		th->io_cpu_us += tdur;
	else
		th->io_untimed++;
}

int it_read(struct it *t, int64_t pid, int64_t tid, const char *path, uint64_t off, uint64_t size,
	    double ts, double dur, double tdur)
{
	struct it_file *f = it_file_get(t, path);
	struct it_thread *th = it_thread_get(t, pid, tid);

	if (!f || !th)
		return -ENOSPC;
	int id = (int)(f - t->files);
	f->reads++;
	f->bytes += size;
	if (off == 0)
		f->head_reads++;
	if (off + size > f->end)
		f->end = off + size;
	/* A read that goes back in the order of file names, or within a file: shuffled order. */
	if (th->last >= 0 && th->last != id) {
		th->pairs++;
		th->back += strverscmp(t->files[th->last].path, path) > 0;
	} else if (th->last == id && off != th->last_off) {
		th->pairs++;
		th->back += off < th->last_off;
	}
	th->last = id;
	th->last_off = off;
	th->reads++;
	io_time(th, dur, tdur);
	it_tally(t, pid, offsetof(struct it_tally, io_cpu), tdur);
	t->reads++;
	t->bytes += size;
	it_size_add(t, size);
	if (t->t_first < 0 || ts < t->t_first)
		t->t_first = ts;
	if (ts + dur > t->t_last)
		t->t_last = ts + dur;
	return 0;
}

int it_open(struct it *t, int64_t pid, int64_t tid, const char *path, double dur, double tdur)
{
	struct it_file *f = it_file_get(t, path);
	struct it_thread *th = it_thread_get(t, pid, tid);

	if (!f || !th)
		return -ENOSPC;
	f->opens++;
	io_time(th, dur, tdur);
	it_tally(t, pid, offsetof(struct it_tally, io_cpu), tdur);
	return 0;
}

void it_compute(struct it *t, int64_t pid, double dur_us, double tdur_us, int64_t step)
{
	struct it_proc *p = it_proc_get(t, pid);
	int i;

	if (p)
		p->now.steps++;
	it_tally(t, pid, offsetof(struct it_tally, compute_cpu), tdur_us);
	t->computes++;
	t->step0 += step == 0;
	t->compute_sum += dur_us;
	t->compute_sq += dur_us * dur_us;
	for (i = 0; i < t->nranks && t->ranks[i] != pid; i++)
		;
	if (i == t->nranks && t->nranks < IT_MAX_RANKS)
		t->ranks[t->nranks++] = pid;
}

/* A per-sample event of thread (pid, tid): its time less the I/O its thread did inside it
 * (events are written as they end, so those came before it), and the same in thread CPU time
 * where the event and every I/O inside carry tdur. The time counts what the thread waited for
 * the CPU (preemption, the other loaders); the CPU time does not. */
int it_sample(struct it *t, int64_t pid, int64_t tid, double dur_us, double tdur_us)
{
	struct it_thread *th = it_thread_get(t, pid, tid);

	if (!th)
		return -ENOSPC;
	struct it_proc *p = it_proc_get(t, pid);
	if (p)
		p->now.samples++;
	it_tally(t, pid, offsetof(struct it_tally, sample_cpu), tdur_us);
	double io = th->io_us - th->io_mark, io_cpu = th->io_cpu_us - th->cpu_mark;
	bool timed = tdur_us >= 0 && th->io_untimed == th->untimed_mark;
	th->io_mark = th->io_us;
	th->cpu_mark = th->io_cpu_us;
	th->untimed_mark = th->io_untimed;
	t->samples++;
	double gap = dur_us > io ? dur_us - io : 0;
	t->sample_wall_us += gap;
	int bin = gap > 1 ? (int)(log(gap) / log(1.01)) : 0;
	t->gap_hist[bin < IT_GAP_BINS ? bin : IT_GAP_BINS - 1]++;
	if (timed) {
		t->samples_tdur++;
		t->sample_tdur_us += tdur_us > io_cpu ? tdur_us - io_cpu : 0;
	}
	return 0;
}

void it_fetch(struct it *t, double dur_us, double tdur_us)
{
	t->fetches++;
	t->fetch_us += dur_us;
	if (tdur_us >= 0) {
		t->fetches_tdur++;
		t->fetch_cpu_us += tdur_us;
	}
}

void it_counter(struct it *t, int64_t pid, double cpu_us)
{
	struct it_proc *p = it_proc_get(t, pid);

	if (!p)
		return;
	if (p->counters++ == 0) {
		p->first = p->now;
		p->cpu_first = cpu_us;
	}
	p->last = p->now;
	p->cpu_last = cpu_us;
}

/* The 10th percentile of per-sample time less I/O (µs, the bin's lower edge). */
static double gap_p10(const struct it *t)
{
	uint64_t want = (t->samples + 9) / 10, n = 0;

	for (int i = 0; i < IT_GAP_BINS; i++)
		if ((n += t->gap_hist[i]) >= want && n > 0)
			return i ? pow(1.01, i) : 0;
	return 0;
}

/* ---- what the trace says ------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of one per-file count (field at byte offset off of struct it_file). */
static uint64_t file_median(const struct it *t, size_t off)
{
	uint64_t *v = malloc(t->nread * sizeof(*v)), m;
	size_t n = 0;

	if (!v)
		return 0;
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i].reads)
			v[n++] = *(const uint64_t *)((const char *)&t->files[i] + off);
	qsort(v, n, sizeof(*v), cmp_u64);
	m = n ? v[n / 2] : 0;
	free(v);
	return m;
}

/* The folder every file read lies in (the longest common prefix ending at a '/'). */
static void common_dir(const struct it *t, char *dir, size_t len)
{
	size_t n = 0;
	const char *first = NULL;

	for (size_t i = 0; i < t->nfiles; i++) {
		const char *p = t->files[i].path;
		if (!t->files[i].reads)
			continue;
		if (!first) {
			first = p;
			n = strlen(p);
		}
		size_t k = 0;
		while (k < n && p[k] == first[k])
			k++;
		n = k;
	}
	while (first && n > 0 && first[n - 1] != '/')
		n--;
	if (!first || n <= 1)
		snprintf(dir, len, "%s", first && n == 1 ? "/" : ".");
	else
		snprintf(dir, len, "%.*s", (int)(n - 1), first);
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && strcmp(s + a - b, tail) == 0;
}

/* Derives the workload (d) from the events; d->why says what could not be. */
void it_derive(struct it *t, struct it_workload *d)
{
	uint64_t ext_min = UINT64_MAX, ext_max = 0, ext_sum = 0, dom = 0, domc = 0;
	size_t npy = 0;

	memset(d, 0, sizeof(*d));
	t->nread = 0;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct it_file *f = &t->files[i];
		if (!f->reads)
			continue;
		t->nread++;
		npy += ends_with(f->path, ".npy");
		ext_min = f->end < ext_min ? f->end : ext_min;
		ext_max = f->end > ext_max ? f->end : ext_max;
		ext_sum += f->end;
	}
	for (int i = 0; i < t->nsizes; i++)
		if (t->sizes[i].count > domc) {
			dom = t->sizes[i].size;
			domc = t->sizes[i].count;
		}
	d->files = t->nread;
	d->file_min = t->nread ? ext_min : 0;
	d->file_max = ext_max;
	d->file_mean = t->nread ? ext_sum / t->nread : 0;
	d->npy = t->nread && npy == t->nread;
	d->read_size = dom;
	d->read_size_count = domc;
	common_dir(t, d->dir, sizeof(d->dir));
	it_derive_loader(t, d);
}

/* Samples, epochs, batch, threads, order, compute and preprocess (after it_derive's files). */
void it_derive_loader(struct it *t, struct it_workload *d)
{
	uint64_t opens = file_median(t, offsetof(struct it_file, opens));
	uint64_t heads = file_median(t, offsetof(struct it_file, head_reads));
	uint64_t readers = 0, pairs = 0, back = 0;

	d->ranks = t->nranks ? t->nranks : 1;
	d->epochs_from_steps = t->step0 >= d->ranks;
	if (d->npy) {
		d->samples_per_file = 1;
		d->record = d->file_mean > IT_NPY_HEADER ? d->file_mean - IT_NPY_HEADER : 0;
		d->epochs = d->epochs_from_steps ? t->step0 / d->ranks : heads ? heads : 1;
		d->samples = 0;
		for (size_t i = 0; i < t->nfiles; i++)
			d->samples += t->files[i].head_reads;
	} else {
		d->record = d->read_size;
		d->epochs = d->epochs_from_steps ? t->step0 / d->ranks : opens ? opens : 1;
		d->samples = d->record ? t->bytes / d->record : 0;
		d->samples_per_file = d->files ? d->samples / d->epochs / d->files : 0;
	}
	d->samples_per_epoch = d->samples / d->epochs;
	for (size_t i = 0; i < t->nthreads; i++) {
		readers += t->threads[i].reads > 0;
		pairs += t->threads[i].pairs;
		back += t->threads[i].back;
	}
	d->threads = readers / d->ranks ? readers / d->ranks : 1;
	d->readers = readers;
	d->shuffled = pairs && back * 10 > pairs;
	d->back = back;
	d->pairs = pairs;
	d->steps_per_epoch = t->computes / d->epochs / d->ranks;
	if (d->steps_per_epoch) {
		uint64_t per_rank = d->samples_per_epoch / d->ranks;
		d->batch = (per_rank + d->steps_per_epoch - 1) / d->steps_per_epoch;
		d->compute_s = t->compute_sum / (double)t->computes / 1e6;
		double var = t->compute_sq / (double)t->computes -
			     pow(t->compute_sum / (double)t->computes, 2);
		d->compute_stdev_s = var > 0 ? sqrt(var) / 1e6 : 0;
	}
	if (t->samples) {
		/* The loader's CPU time per sample where the trace has it; else a low percentile
		 * of the time, which leaves out the samples the scheduler held up (their mean
		 * counted them: 1.75 x the CPU work of a traced job on a loaded machine). */
		d->preprocess_cpu = t->samples_tdur == t->samples;
		d->preprocess_s =
		    (d->preprocess_cpu ? t->sample_tdur_us / (double)t->samples : gap_p10(t)) / 1e6;
		d->preprocess_wall_mean_s = t->sample_wall_us / (double)t->samples / 1e6;
	}
	d->wall_s = t->t_last > t->t_first ? (t->t_last - t->t_first) / 1e6 : 0;
	it_derive_cpu(t, d);
}

/* What the CPU counters say, between each process's first and last counter (so the events
 * counted and the CPU time cover the same span; the events of one process come in order, as
 * it wrote them). A loader process (samples, no compute): its CPU per sample less its I/O's,
 * which holds what no per-sample event times (collating, passing batches to the trainer) and
 * replaces preprocess_time's tdur figure. A trainer process (compute events): its CPU per step
 * less its compute's and its samples' (a loader thread inside it), the host time per step. Only
 * where every event in the span has tdur. Without counters, the trainer's host time is the CPU
 * time of its fetch events (the wait for a batch): a part of it. */
void it_derive_cpu(struct it *t, struct it_workload *d)
{
	double loader = 0, host = 0;

	for (int i = 0; i < t->nprocs; i++) {
		const struct it_proc *p = &t->procs[i];
		const struct it_tally *a = &p->first, *b = &p->last;
		double cpu = p->cpu_last - p->cpu_first;
		if (p->counters < 2 || b->untimed != a->untimed || cpu < 0)
			continue;
		if (p->now.steps == 0 && b->samples > a->samples) {
			loader += cpu - (b->io_cpu - a->io_cpu);
			d->loader_samples += b->samples - a->samples;
			d->loader_procs++;
		} else if (b->steps > a->steps) {
			host += cpu - (b->compute_cpu - a->compute_cpu) -
				(b->sample_cpu - a->sample_cpu) -
				(b->samples == a->samples ? b->io_cpu - a->io_cpu : 0);
			d->host_steps += b->steps - a->steps;
			d->host_procs++;
		}
	}
	if (d->loader_samples) {
		d->preprocess_tdur_s = d->preprocess_cpu ? d->preprocess_s : -1;
		d->loader_cpu_s = fmax(0, loader) / (double)d->loader_samples / 1e6;
		d->preprocess_s = d->loader_cpu_s;
	}
	if (d->host_steps) {
		d->host_s = fmax(0, host) / (double)d->host_steps / 1e6;
	} else if (t->fetches && t->fetches_tdur == t->fetches) {
		d->host_s = t->fetch_cpu_us / (double)t->fetches / 1e6;
		d->host_from_fetch = true;
	}
	if (t->fetches)
		d->fetch_wait_s = t->fetches_tdur == t->fetches
				      ? (t->fetch_us - t->fetch_cpu_us) / (double)t->fetches / 1e6
				      : t->fetch_us / (double)t->fetches / 1e6;
}
