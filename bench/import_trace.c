/* `feedbench import-trace TRACE... [-o OUT.ini]`: a training job's I/O trace to a config that
 * reproduces it (docs/trace.md, "A workload from a traced job").
 *
 * Reads Chrome trace events in JSON lines (dftracer's .pfw, feedbench's own trace.pfw, a small
 * tracer's) and the text darshan-dxt-parser prints, one event at a time: memory grows with the
 * files and threads the trace names, never with its length. What is kept: per file its opens,
 * reads, bytes and extent; per reading thread its reads and how often a read went back in the
 * file order; the read sizes; the compute steps; per-sample events (__getitem__) and the I/O
 * inside them. From those come the files and sizes, samples per file, order, threads, batch,
 * compute per step, preprocess time per sample and epochs, each written with a comment saying
 * where it came from, or why it could not be derived.
 */
#include "import_trace.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "config.h"
#include "safefile.h"

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

/* ---- events ---------------------------------------------------------------------------- */

/* One read of size bytes at off of path by thread (pid, tid) over [ts, ts + dur] µs. */
int it_read(struct it *t, int64_t pid, int64_t tid, const char *path, uint64_t off, uint64_t size,
	    double ts, double dur)
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
	th->io_us += dur;
	t->reads++;
	t->bytes += size;
	it_size_add(t, size);
	if (t->t_first < 0 || ts < t->t_first)
		t->t_first = ts;
	if (ts + dur > t->t_last)
		t->t_last = ts + dur;
	return 0;
}

int it_open(struct it *t, int64_t pid, int64_t tid, const char *path, double dur)
{
	struct it_file *f = it_file_get(t, path);
	struct it_thread *th = it_thread_get(t, pid, tid);

	if (!f || !th)
		return -ENOSPC;
	f->opens++;
	th->io_us += dur;
	return 0;
}

void it_compute(struct it *t, int64_t pid, double dur_us, int64_t step)
{
	int i;

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
 * (events are written as they end, so those came before it). */
int it_sample(struct it *t, int64_t pid, int64_t tid, double dur_us)
{
	struct it_thread *th = it_thread_get(t, pid, tid);

	if (!th)
		return -ENOSPC;
	double io = th->io_us - th->io_mark;
	th->io_mark = th->io_us;
	t->samples++;
	t->sample_cpu_us += dur_us > io ? dur_us - io : 0;
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
	if (t->samples)
		d->preprocess_s = t->sample_cpu_us / (double)t->samples / 1e6;
	d->wall_s = t->t_last > t->t_first ? (t->t_last - t->t_first) / 1e6 : 0;
}

/* ---- the config ------------------------------------------------------------------------ */

static void ini_dataset(FILE *o, const struct it *t, const struct it_workload *d)
{
	fprintf(o, "[dataset]\n; the folder of the %" PRIu64 " files the trace reads\n", d->files);
	fprintf(o, "data_dir = %s\n", d->dir);
	if (d->npy) {
		fprintf(o, "; every file read is *.npy: numpy arrays, one sample per file\n"
			   "format = npy\n"
			   "; the job's own files, read as they are (feedbench checks no sample "
			   "header in them)\ngenerate = never\nverify = false\n");
	} else {
		fprintf(
		    o,
		    "; not numpy files: feedbench writes raw files of the same sizes (it cannot "
		    "read another tool's raw files as samples); point data_dir elsewhere to keep "
		    "the job's files apart\nformat = raw\n");
	}
	fprintf(o, "; %" PRIu64 " files read\nnum_files_train = %" PRIu64 "\n", d->files, d->files);
	if (d->npy)
		fprintf(o, "; numpy: one sample per file\n");
	else
		fprintf(o, "; bytes read per file per epoch / record size\n");
	fprintf(o, "num_samples_per_file = %" PRIu64 "\n",
		d->samples_per_file ? d->samples_per_file : 1);
	if (d->npy)
		fprintf(o,
			"; the mean file size %" PRIu64
			" less numpy's %d-byte header (files of %" PRIu64 " to %" PRIu64
			" bytes; the header's length is assumed, not in the trace)\n",
			d->file_mean, IT_NPY_HEADER, d->file_min, d->file_max);
	else
		fprintf(o,
			"; the most common read size: %" PRIu64 " of %" PRIu64
			" reads%s (files of %" PRIu64 " to %" PRIu64 " bytes)\n",
			d->read_size_count, t->reads,
			t->sizes_other ? ", more than 64 sizes seen" : "", d->file_min,
			d->file_max);
	fprintf(o, "record_length_bytes = %" PRIu64 "\n", d->record ? d->record : 1);
	fprintf(o, "; each rank reads its own share of the files\nfile_access = per_rank\n\n");
}

static void ini_reader(FILE *o, const struct it *t, const struct it_workload *d)
{
	fprintf(o, "[reader]\n");
	if (d->batch)
		fprintf(o,
			"; %" PRIu64 " samples per epoch per rank over %" PRIu64
			" compute steps per epoch per rank (the last batch may be smaller)\n"
			"batch_size = %" PRIu64 "\n",
			d->samples_per_epoch / d->ranks, d->steps_per_epoch, d->batch);
	else
		fprintf(o, "; not derived: the trace has no compute events, one per training step "
			   "(names containing \"compute\"); feedbench's default batch\n");
	fprintf(o,
		"; %" PRIu64 " threads or processes read (pid, tid), over %" PRIu64
		" rank(s)%s\nread_threads = %" PRIu64 "\n",
		d->readers, d->ranks, t->dxt_inputs ? "; DXT names ranks, not threads" : "",
		d->threads);
	fprintf(o,
		"; %" PRIu64 " of %" PRIu64 " consecutive reads of a thread went back in file-name "
		"or offset order: %s\nsample_shuffle = %s\n",
		d->back, d->pairs, d->shuffled ? "shuffled (more than 1 in 10)" : "in order",
		d->shuffled ? "seed" : "off");
	if (t->samples)
		fprintf(o,
			"; per-sample events (__getitem__): their mean time less the I/O inside, "
			"over %" PRIu64 " samples\npreprocess_time = %.6f\n\n",
			t->samples, d->preprocess_s);
	else
		fprintf(o, "; not derived: no per-sample events (__getitem__) in the trace\n"
			   "preprocess_time = 0\n\n");
}

static void ini_train(FILE *o, const struct it *t, const struct it_workload *d)
{
	fprintf(o, "[train]\n");
	if (d->epochs_from_steps)
		fprintf(o,
			"; the compute steps began again from step 0 %" PRIu64 " times per rank\n",
			d->epochs);
	else if (d->npy)
		fprintf(o, "; each file's header was read %" PRIu64 " times (median over files)\n",
			d->epochs);
	else
		fprintf(o, "; each file was opened %" PRIu64 " times (median over files)%s\n",
			d->epochs, t->dxt_inputs ? "; DXT records no opens: 1 epoch assumed" : "");
	fprintf(o, "epochs = %" PRIu64 "\n", d->epochs);
	if (t->computes)
		fprintf(o,
			"; mean and standard deviation of %" PRIu64 " compute events\n"
			"computation_time = %.6f\ncomputation_time_stdev = %.6f\n",
			t->computes, d->compute_s, d->compute_stdev_s);
	else
		fprintf(o, "; not derived: no compute events in the trace\ncomputation_time = 0\n");
	fprintf(o, "; every step counts, as the traced job's did\nexclude_start_steps = 0\n");
}

static void ini_write(FILE *o, const struct it *t, const struct it_workload *d, int n,
		      char **inputs)
{
	fprintf(o, "; derived by feedbench import-trace from");
	for (int i = 0; i < n; i++)
		fprintf(o, " %s", inputs[i]);
	fprintf(o,
		"\n; %" PRIu64 " events: %" PRIu64 " reads of %" PRIu64 " bytes, %" PRIu64
		" compute steps, %" PRIu64 " per-sample events; the traced reads took %.3f s\n",
		t->events, t->reads, t->bytes, t->computes, t->samples, d->wall_s);
	if (t->writes)
		fprintf(
		    o, "; not reproduced: %" PRIu64 " writes of %" PRIu64 " bytes (checkpoints?)\n",
		    t->writes, t->write_bytes);
	if (t->unnamed)
		fprintf(o, "; left out: %" PRIu64 " reads or opens that name no file\n",
			t->unnamed);
	if (d->ranks > 1)
		fprintf(o, "; %" PRIu64 " processes computed: run with mpiexec -n %" PRIu64 "\n",
			d->ranks, d->ranks);
	fprintf(o, "[workload]\nname = imported\n\n");
	ini_dataset(o, t, d);
	ini_reader(o, t, d);
	ini_train(o, t, d);
}

/* The INI as the config parser reads it (CFG_LINE_MAX): comments wrapped at spaces (a word
 * longer than a line is cut), a longer key = value line refused (2, message printed). */
static int ini_fit(const char *text, size_t len, FILE *o)
{
	const size_t width = CFG_LINE_MAX - 4;

	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - text - pos) : len - pos;
		const char *l = text + pos;
		pos += n + 1;
		if (n <= CFG_LINE_MAX) {
			fprintf(o, "%.*s\n", (int)n, l);
			continue;
		}
		if (l[0] != ';') {
			fprintf(stderr,
				"feedbench: import-trace: '%.60s...' would be a line of %zu "
				"characters; the config parser reads at most %d\n",
				l, n, CFG_LINE_MAX);
			return 2;
		}
		for (l += 2, n -= 2; n > 0;) { /* "; " then the words */
			size_t k = n <= width ? n : width;
			while (k < n && k > width / 2 && l[k] != ' ')
				k--;
			if (k < n && l[k] != ' ')
				k = width;
			fprintf(o, "; %.*s\n", (int)k, l);
			l += k;
			n -= k;
			while (n > 0 && *l == ' ')
				l++, n--;
		}
	}
	return 0;
}

static void it_usage(FILE *o)
{
	fprintf(
	    o,
	    "usage: feedbench import-trace TRACE... [-o OUT.ini]\n"
	    "\n"
	    "A config reproducing the I/O of a traced training job: Chrome trace events in JSON\n"
	    "lines (dftracer's .pfw, feedbench's trace.pfw) or darshan-dxt-parser's text. Files\n"
	    "and sizes, samples per file, order, threads, batch, compute per step, preprocess "
	    "time\n"
	    "and epochs, each with a comment saying where it came from (docs/trace.md).\n"
	    "Without -o the config goes to stdout.\n"
	    "Exit status: 0 written, 2 usage error or a trace that cannot be read (file and line\n"
	    "named) or that reads no file.\n");
}

/* The traces into t; 2 with the message printed when one cannot be read. */
static int it_load(struct it *t, int n, char **inputs)
{
	t->t_first = -1;
	if (!(t->threads = calloc(IT_MAX_THREADS, sizeof(*t->threads)))) {
		fprintf(stderr, "feedbench: import-trace: out of memory\n");
		return 2;
	}
	for (int i = 0; i < n; i++)
		if (it_read_file(t, inputs[i]) < 0) {
			fprintf(stderr, "feedbench: import-trace: %s\n", t->err);
			return 2;
		}
	if (t->reads == 0) {
		fprintf(stderr,
			"feedbench: import-trace: no read naming a file in %s%s: nothing to "
			"reproduce\n",
			inputs[0], n > 1 ? " and the other traces" : "");
		return 2;
	}
	return 0;
}

int import_trace_main(int argc, char **argv)
{
	const char *out = NULL;
	char *inputs[IT_MAX_INPUTS], why[PATH_MAX + 160], *text = NULL;
	int n = 0, rc;
	size_t len = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			it_usage(stdout);
			return 0;
		} else if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) &&
			   i + 1 < argc) {
			out = argv[++i];
		} else if (argv[i][0] != '-' && n < IT_MAX_INPUTS) {
			inputs[n++] = argv[i];
		} else {
			fprintf(stderr,
				"feedbench: import-trace: unexpected argument '%s' (see feedbench "
				"import-trace --help)\n",
				argv[i]);
			return 2;
		}
	}
	if (n == 0) {
		it_usage(stderr);
		return 2;
	}
	if (out && safe_output_check(out, why, sizeof(why)) < 0) {
		fprintf(stderr, "feedbench: import-trace: %s\n", why);
		return 2;
	}
	struct it *t = calloc(1, sizeof(*t));
	struct it_workload d;
	FILE *m = NULL;
	if (!t || (rc = it_load(t, n, inputs)) != 0) {
		rc = t ? rc : 2;
		goto done;
	}
	it_derive(t, &d);
	if (!(m = open_memstream(&text, &len))) {
		rc = 2;
		goto done;
	}
	ini_write(m, t, &d, n, inputs);
	fclose(m);
	char *fit = NULL;
	size_t flen = 0;
	if (!(m = open_memstream(&fit, &flen))) {
		rc = 2;
		goto done;
	}
	rc = ini_fit(text, len, m);
	fclose(m);
	free(text);
	text = fit;
	len = flen;
	if (rc != 0)
		goto done;
	rc = out ? safe_write_atomic(out, text, len)
		 : (fwrite(text, 1, len, stdout) == len ? 0 : -EIO);
	if (rc < 0)
		fprintf(stderr, "feedbench: import-trace: cannot write '%s': %s\n",
			out ? out : "stdout", strerror(-rc));
	rc = rc < 0 ? 1 : 0;
done:
	free(text);
	if (t)
		it_free(t);
	free(t);
	return rc;
}
