/* MLPerf Storage's dataset size rule (3.1.2, trainingRecalculateDatasetSize): the files a
 * training dataset needs for the accelerators and clients it is read by, as `feedbench mlperf
 * datasize` prints it and as every training run records it in summary.json ("mlperf"). */
#include "mlperf.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results.h"

void mlperf_datasize_compute(struct mlperf_datasize *d)
{
	double spf = d->samples_per_file > 0 ? (double)d->samples_per_file : 1;

	/* 500 steps of batch_size on every accelerator (the rule's floor of steps per epoch). */
	d->min_samples_steps =
	    (double)MLPERF_MIN_STEPS * (double)d->batch_size * (double)d->accelerators;
	/* 5 x the RAM of every client, in samples of the mean record length. */
	d->min_samples_memory = d->record_length_bytes > 0
				    ? (double)d->hosts * d->client_memory_bytes *
					  MLPERF_MEMORY_MULTIPLE / d->record_length_bytes
				    : 0;
	d->min_samples = fmax(d->min_samples_steps, d->min_samples_memory);
	d->min_files = (int64_t)ceil(d->min_samples / spf);
	d->min_bytes = (double)d->min_files * spf * d->record_length_bytes;
	d->holds = d->num_files_train >= d->min_files;
}

static struct mlperf_datasize datasize_of(const struct config *cfg, int64_t hosts,
					  int64_t accelerators, double memory_per_host)
{
	struct mlperf_datasize d = {
	    .hosts = hosts,
	    .accelerators = accelerators,
	    .batch_size = cfg->reader.batch_size,
	    .samples_per_file = cfg->dataset.num_samples_per_file,
	    .num_files_train = cfg->dataset.num_files_train,
	    .client_memory_bytes = memory_per_host,
	    .record_length_bytes = (double)cfg->dataset.record_length_bytes,
	};

	mlperf_datasize_compute(&d);
	return d;
}

json_t *mlperf_run_json(const struct config *cfg, int64_t hosts, int64_t accelerators,
			double memory_per_host)
{
	struct mlperf_datasize d = datasize_of(cfg, hosts, accelerators, memory_per_host);
	const struct mlperf_preset *p = mlperf_preset_of(cfg);
	json_t *m = json_object(), *ds;

	json_object_set_new(m, "model", json_string(mlperf_model_name(cfg)));
	json_object_set_new(m, "accelerator_type", json_string(mlperf_accel_name(cfg)));
	if (p)
		json_object_set_new(m, "preset",
				    json_pack("{s:f, s:I, s:I, s:f, s:s}", "computation_time",
					      p->computation_time, "batch_size",
					      (json_int_t)p->batch_size, "read_threads",
					      (json_int_t)p->read_threads, "au_threshold",
					      p->au_threshold, "status", p->status));
	ds = json_pack("{s:s, s:I, s:f, s:I, s:I, s:f, s:I, s:f, s:f, s:I, s:f, s:I, s:b}", "rule",
		       MLPERF_RULE_DATASIZE, "hosts", (json_int_t)d.hosts, "client_memory_bytes",
		       d.client_memory_bytes, "accelerators", (json_int_t)d.accelerators,
		       "batch_size", (json_int_t)d.batch_size, "record_length_bytes",
		       d.record_length_bytes, "num_samples_per_file",
		       (json_int_t)d.samples_per_file, "min_samples_steps", d.min_samples_steps,
		       "min_samples_memory", d.min_samples_memory, "min_files",
		       (json_int_t)d.min_files, "min_bytes", d.min_bytes, "num_files_train",
		       (json_int_t)d.num_files_train, "holds", d.holds);
	json_object_set_new(m, "datasize", ds);
	return m;
}

/* The config of `mlperf datasize` (no MPI): the file, its --set lines and the preset. */
static int datasize_config(struct config *cfg, const char *path, const char **sets, int nsets,
			   struct fb_errbuf *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = cfg_read_file(path, &text, &len, err);

	if (rc < 0)
		return rc;
	cfg_defaults(cfg);
	rc = cfg_parse_text(cfg, text, len, path, err);
	free(text);
	for (int i = 0; rc == 0 && i < nsets; i++)
		rc = cfg_set(cfg, sets[i], err);
	return rc < 0 ? rc : mlperf_preset_apply(cfg, err);
}

static int parse_count(const char *opt, const char *v, int64_t *out)
{
	char why[128];

	if (cfg_parse_int(v, out, why, sizeof(why)) < 0 || *out < 1) {
		fprintf(stderr, "feedbench: mlperf datasize: %s '%s': a count of at least 1\n", opt,
			v);
		return -FB_EUSAGE;
	}
	return 0;
}

static void datasize_print(const struct config *cfg, const struct mlperf_datasize *d)
{
	printf("MLPerf Storage dataset size (rule %s)\n", MLPERF_RULE_DATASIZE);
	printf("  workload %s, accelerator %s: batch %lld, %lld samples per file of %.0f bytes\n",
	       mlperf_model_name(cfg), mlperf_accel_name(cfg), (long long)d->batch_size,
	       (long long)d->samples_per_file, d->record_length_bytes);
	printf("  %lld hosts x %.2f GiB of RAM, %lld accelerators in all\n", (long long)d->hosts,
	       d->client_memory_bytes / 1073741824.0, (long long)d->accelerators);
	printf("  samples for %d steps: %.0f; for %d x the RAM: %.0f\n", MLPERF_MIN_STEPS,
	       d->min_samples_steps, MLPERF_MEMORY_MULTIPLE, d->min_samples_memory);
	printf("  at least %lld files, %.2f GiB\n", (long long)d->min_files,
	       d->min_bytes / 1073741824.0);
	printf("  the config has %lld: %s\n", (long long)d->num_files_train,
	       d->holds ? "enough" : "too few");
	printf("\n[dataset]\nnum_files_train = %lld\n", (long long)d->min_files);
}

int mlperf_datasize_main(int argc, char **argv)
{
	const char *path = NULL, *sets[64];
	int64_t hosts = 1, per_host = 0;
	uint64_t mem = 0;
	int nsets = 0;
	struct fb_errbuf err;
	char why[128];

	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--hosts") == 0 && v) {
			if (parse_count(a, argv[++i], &hosts) < 0)
				return 2;
		} else if (strcmp(a, "--accelerators-per-host") == 0 && v) {
			if (parse_count(a, argv[++i], &per_host) < 0)
				return 2;
		} else if (strcmp(a, "--client-memory") == 0 && v) {
			if (cfg_parse_size(argv[++i], &mem, why, sizeof(why)) < 0 || mem == 0) {
				fprintf(stderr,
					"feedbench: mlperf datasize: --client-memory '%s': %s\n",
					argv[i], mem == 0 ? "must be above 0" : why);
				return 2;
			}
		} else if (strcmp(a, "--set") == 0 && v && nsets < 64) {
			sets[nsets++] = argv[++i];
		} else if (a[0] != '-' && !path) {
			path = a;
		} else {
			fprintf(stderr,
				"feedbench: mlperf datasize: unexpected argument '%s' (see "
				"feedbench mlperf --help)\n",
				a);
			return 2;
		}
	}
	if (!path || per_host == 0) {
		fprintf(stderr, "feedbench: mlperf datasize needs CONFIG and "
				"--accelerators-per-host N (see feedbench mlperf --help)\n");
		return 2;
	}
	struct config *cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return 1;
	fb_errbuf_init(&err);
	if (datasize_config(cfg, path, sets, nsets, &err) < 0) {
		fprintf(stderr, "feedbench: error: %s\n", err.msg);
		free(cfg);
		return 2;
	}
	if (!mem)
		mem = results_host_memory();
	struct mlperf_datasize d = datasize_of(cfg, hosts, hosts * per_host, (double)mem);
	datasize_print(cfg, &d);
	free(cfg);
	return 0;
}
