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

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "safefile.h"

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

/* The per-sample events' tdur figure that the CPU counters replaced, for the comment. */
static const char *pre_tdur(const struct it_workload *d)
{
	static char buf[64];

	if (d->preprocess_tdur_s < 0)
		return "not in every event";
	snprintf(buf, sizeof(buf), "%.6f s", d->preprocess_tdur_s);
	return buf;
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
	if (d->loader_samples)
		fprintf(
		    o,
		    "; the loader processes' CPU counters: %" PRIu64 " process(es) with "
		    "per-sample events and no compute spent this CPU time per sample less their "
		    "I/O's, over %" PRIu64 " samples: the sample's work and what no event times "
		    "(collating, passing batches to the trainer); the per-sample events' own "
		    "thread CPU time (tdur) was %s\npreprocess_time = %.6f\n\n",
		    d->loader_procs, d->loader_samples, pre_tdur(d), d->preprocess_s);
	else if (t->samples && d->preprocess_cpu)
		fprintf(
		    o,
		    "; per-sample events (__getitem__): the loader's CPU time per sample, their "
		    "thread CPU time (tdur) less the I/O's inside, over %" PRIu64 " samples (their "
		    "mean time less I/O, %.6f s, also counts waits for the CPU)\n"
		    "preprocess_time = %.6f\n\n",
		    t->samples, d->preprocess_wall_mean_s, d->preprocess_s);
	else if (t->samples)
		fprintf(
		    o,
		    "; per-sample events (__getitem__) without thread CPU time (tdur): the 10th "
		    "percentile of their time less the I/O inside, over %" PRIu64 " samples (the "
		    "mean, %.6f s, also counts the samples the scheduler held up)\n"
		    "preprocess_time = %.6f\n\n",
		    t->samples, d->preprocess_wall_mean_s, d->preprocess_s);
	else
		fprintf(o, "; not derived: no per-sample events (__getitem__) in the trace\n"
			   "preprocess_time = 0\n\n");
}

/* host_time: the trainer's CPU per step outside compute, and what the trainer waited. */
static void ini_host(FILE *o, const struct it *t, const struct it_workload *d)
{
	char wait[256] = "";

	if (t->fetches)
		snprintf(wait, sizeof(wait),
			 "; its fetch events waited %.6f s per step beyond their CPU time: the "
			 "wait for data, which feedbench measures, not replays\n",
			 d->fetch_wait_s);
	if (d->host_steps)
		fprintf(o,
			"; the trainer's CPU counters: %" PRIu64 " process(es) with compute events "
			"spent this CPU time per step outside compute (and outside per-sample "
			"events), over %" PRIu64 " steps\n%shost_time = %.6f\n",
			d->host_procs, d->host_steps, wait, d->host_s);
	else if (d->host_from_fetch)
		fprintf(
		    o,
		    "; no CPU counters in the trainer: the thread CPU time (tdur) of its %" PRIu64
		    " fetch events (taking each batch from the loader), a part of its host time "
		    "per "
		    "step\n%shost_time = %.6f\n",
		    t->fetches, wait, d->host_s);
	else
		fprintf(o, "; not derived: no CPU counters (args.cpu_us) in the processes that "
			   "computed and no fetch events with tdur\nhost_time = 0\n");
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
	ini_host(o, t, d);
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
