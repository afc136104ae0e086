/* MLPerf Storage v3.0 submissions (docs/mlperf.md): the accelerator presets, the dataset size
 * rule, the submission run (warm-up + 5), the rule checker and the results in the
 * submission's form. One file per job: mlperf_presets.c, mlperf_datasize.c, mlperf_run.c,
 * mlperf_check.c, mlperf_results.c; mlperf.c dispatches `feedbench mlperf SUBCOMMAND`.
 */
#ifndef FEEDBENCH_MLPERF_H
#define FEEDBENCH_MLPERF_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"

/* The one preset list: per workload (model) and emulated accelerator, the values of
 * mlcommons/storage's configs/dlio/workload/<model>_<accelerator>.yaml. status "v3.0": CLOSED
 * and OPEN submittable; "whatif": planning only (training/README.md's combination table).
 * X(model, accelerator, computation_time s, batch_size, read_threads, au_threshold, status) */
#define MLPERF_PRESETS(X)                                                                          \
	X(unet3d, a100, 0.636, 7, 4, 0.90, "whatif")                                               \
	X(unet3d, h100, 0.323, 7, 4, 0.90, "whatif")                                               \
	X(unet3d, b200, 0.162, 7, 4, 0.90, "v3.0")                                                 \
	X(retinanet, a100, 0.210, 16, 8, 0.85, "whatif")                                           \
	X(retinanet, h100, 0.180, 16, 8, 0.85, "whatif")                                           \
	X(retinanet, b200, 0.04755, 24, 8, 0.85, "v3.0")                                           \
	X(retinanet, mi355, 0.0634, 32, 8, 0.85, "v3.0")

struct mlperf_preset {
	const char *model, *accelerator;
	double computation_time;
	int64_t batch_size, read_threads;
	double au_threshold;
	const char *status;
};

/* The names of [train] model and [train] accelerator_type, in the order of their choices
 * after "none" (config_keys.c expands them into the choices; no symbol crosses). */
#define MLPERF_MODELS(X)       X(unet3d) X(retinanet)
#define MLPERF_ACCELERATORS(X) X(a100) X(h100) X(b200) X(mi355)
#define MLPERF_NAME(n)	       #n,

extern const struct mlperf_preset mlperf_presets[];
extern const size_t mlperf_npresets;
/* The name of the config's [train] model and accelerator_type ("none" when unset). */
const char *mlperf_model_name(const struct config *cfg);
const char *mlperf_accel_name(const struct config *cfg);

/* The preset of the config's [train] model and accelerator_type; NULL when either is none or
 * the pair has no preset. */
const struct mlperf_preset *mlperf_preset_of(const struct config *cfg);
/* Fills computation_time, batch_size, read_threads and au_threshold from the preset where the
 * config left them at their defaults (a value set in the file or by --set stays). 0, or
 * -FB_ECONFIG when accelerator_type names a pair mlcommons/storage defines no workload for. */
int mlperf_preset_apply(struct config *cfg, struct fb_errbuf *err);
/* The table, as `feedbench list` (text) and `feedbench keys` (Markdown) print it. */
void mlperf_presets_print(FILE *f, bool markdown);

/* MLPerf Storage rule 3.1.2 (trainingRecalculateDatasetSize): at least 500 steps per epoch
 * over every accelerator and at least 5 x the clients' RAM. */
#define MLPERF_MIN_STEPS       500
#define MLPERF_MEMORY_MULTIPLE 5
#define MLPERF_RULE_DATASIZE   "3.1.2 trainingRecalculateDatasetSize"

struct mlperf_datasize {
	/* inputs */
	int64_t hosts, accelerators, batch_size, samples_per_file, num_files_train;
	double client_memory_bytes; /* per host */
	double record_length_bytes;
	/* outputs */
	double min_samples_steps, min_samples_memory, min_samples;
	int64_t min_files; /* rounded up */
	double min_bytes;
	bool holds; /* num_files_train >= min_files */
};

/* Computes the rule's figures from the inputs already in d. */
void mlperf_datasize_compute(struct mlperf_datasize *d);
/* summary.json's "mlperf" member of a training run: the preset (when one is selected) and the
 * dataset rule over this run's hosts and their RAM. */
json_t *mlperf_run_json(const struct config *cfg, int64_t hosts, int64_t accelerators,
			double memory_per_host);

/* MLPerf Storage's checkpointing models (rule 4.3.3, Table 2) by DLIO's parameter counts, and
 * the processes CLOSED runs them on (4.6.1). */
struct mlperf_ckpt_model {
	const char *name;
	double parameters;
	int processes;
};
extern const struct mlperf_ckpt_model mlperf_ckpt_models[];
extern const size_t mlperf_nckpt_models;
/* The model of that many parameters, or NULL. */
const struct mlperf_ckpt_model *mlperf_ckpt_model_of(double parameters);

/* `feedbench mlperf SUBCOMMAND ...`: argv[0] is "mlperf". */
int mlperf_main(int argc, char **argv);
bool mlperf_needs_mpi(int argc, char **argv);
int mlperf_datasize_main(int argc, char **argv);
int mlperf_run_main(int argc, char **argv);
int mlperf_check_main(int argc, char **argv);
/* results.json, results.csv and system.yaml in the submission folder dir (rank 0), from the
 * run folders it holds. 0 or a negative errno with the message printed. */
int mlperf_results_write(const char *dir);
/* The checkpointing results (bench/mlperf_results_ckpt.c): runs[] holds {folder, s} per
 * invocation in order; results.json, results.csv and checkpoints.csv in dir. */
int mlperf_results_ckpt(const char *dir, json_t *runs);
/* The results writers' shared pieces (bench/mlperf_write.c): one CSV cell of a JSON value
 * (a string quoted as needed, a number, a boolean; nothing for null or absent); text written
 * to dir/name by safe_write_atomic, then freed (NULL text: -ENOMEM; a path too long:
 * -ENAMETOOLONG, never a truncated name); the same for an open_memstream's text, written once
 * the stream is closed (-ENOMEM when it failed). */
void mlperf_csv_cell(FILE *f, json_t *v);
int mlperf_write_text(const char *dir, const char *name, char *text, size_t len);
int mlperf_write_stream(const char *dir, const char *name, FILE *f, char **text, size_t *len);

#endif
