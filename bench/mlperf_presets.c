/* The accelerator presets of MLPerf Storage (MLPERF_PRESETS in mlperf.h, one list): the table,
 * the choices of [train] model and accelerator_type, and filling a config from its preset. */
#include "mlperf.h"

#include <string.h>

#define PRESET_ROW(m, a, ct, bs, rt, au, st) {#m, #a, ct, bs, rt, au, st},
const struct mlperf_preset mlperf_presets[] = {MLPERF_PRESETS(PRESET_ROW)};
const size_t mlperf_npresets = sizeof(mlperf_presets) / sizeof(mlperf_presets[0]);

const struct mlperf_ckpt_model mlperf_ckpt_models[] = {{"llama3-8b", 8030261248.0, 8},
						       {"llama3-70b", 69882617856.0, 64},
						       {"llama3-405b", 405853388800.0, 512},
						       {"llama3-1t", 1183035102480.0, 1024}};
const size_t mlperf_nckpt_models = sizeof(mlperf_ckpt_models) / sizeof(mlperf_ckpt_models[0]);

const struct mlperf_ckpt_model *mlperf_ckpt_model_of(double parameters)
{
	for (size_t i = 0; i < mlperf_nckpt_models; i++)
		if (parameters == mlperf_ckpt_models[i].parameters)
			return &mlperf_ckpt_models[i];
	return NULL;
}

static const char *const model_names[] = {"none", MLPERF_MODELS(MLPERF_NAME) NULL};
static const char *const accel_names[] = {"none", MLPERF_ACCELERATORS(MLPERF_NAME) NULL};

const char *mlperf_model_name(const struct config *cfg)
{
	return model_names[cfg->train.model];
}

const char *mlperf_accel_name(const struct config *cfg)
{
	return accel_names[cfg->train.accelerator_type];
}

const struct mlperf_preset *mlperf_preset_of(const struct config *cfg)
{
	const char *m = mlperf_model_name(cfg);
	const char *a = mlperf_accel_name(cfg);

	for (size_t i = 0; i < mlperf_npresets; i++)
		if (strcmp(mlperf_presets[i].model, m) == 0 &&
		    strcmp(mlperf_presets[i].accelerator, a) == 0)
			return &mlperf_presets[i];
	return NULL;
}

/* The row of section.name in the key table, for its lines[] entry. */
static int key_row(const char *section, const char *name)
{
	const struct cfg_key *k = cfg_find(section, name);

	return k ? (int)(k - cfg_keys) : -1;
}

static bool left_default(const struct config *cfg, const char *section, const char *name)
{
	int row = key_row(section, name);

	return row >= 0 && cfg->lines[row] == 0;
}

int mlperf_preset_apply(struct config *cfg, struct fb_errbuf *err)
{
	const struct mlperf_preset *p;

	if (cfg->train.accelerator_type == 0)
		return 0;
	if (cfg->train.model == 0)
		return fb_fail(err, -FB_ECONFIG,
			       "%s: [train] accelerator_type = %s needs [train] model (unet3d or "
			       "retinanet): the preset is per workload and accelerator",
			       cfg->source, mlperf_accel_name(cfg));
	p = mlperf_preset_of(cfg);
	if (!p)
		return fb_fail(
		    err, -FB_ECONFIG,
		    "%s: [train] model = %s with accelerator_type = %s: mlcommons/storage "
		    "defines no such workload (v3.0 training is unet3d on b200 and "
		    "retinanet on b200 and mi355; `feedbench list` shows the presets)",
		    cfg->source, mlperf_model_name(cfg), mlperf_accel_name(cfg));
	if (left_default(cfg, "train", "computation_time"))
		cfg->train.computation_time = p->computation_time;
	if (left_default(cfg, "reader", "batch_size"))
		cfg->reader.batch_size = p->batch_size;
	if (left_default(cfg, "reader", "read_threads"))
		cfg->reader.read_threads = p->read_threads;
	if (left_default(cfg, "train", "au_threshold"))
		cfg->train.au_threshold = p->au_threshold;
	return 0;
}

void mlperf_presets_print(FILE *f, bool markdown)
{
	if (markdown)
		fprintf(f,
			"\n## MLPerf Storage presets\n\n[train] model and accelerator_type select "
			"a row (docs/mlperf.md).\n\n| model | accelerator_type | "
			"computation_time (s) | batch_size | read_threads | au_threshold | "
			"status |\n|---|---|---|---|---|---|---|\n");
	else
		fprintf(f,
			"MLPerf Storage presets ([train] model + accelerator_type, "
			"docs/mlperf.md):\n    %-10s %-6s %14s %6s %8s %5s  %s\n",
			"model", "accel", "compute s/step", "batch", "threads", "AU", "status");
	for (size_t i = 0; i < mlperf_npresets; i++) {
		const struct mlperf_preset *p = &mlperf_presets[i];

		fprintf(f,
			markdown ? "| %s | %s | %g | %lld | %lld | %.2f | %s |\n"
				 : "    %-10s %-6s %14g %6lld %8lld %5.2f  %s\n",
			p->model, p->accelerator, p->computation_time, (long long)p->batch_size,
			(long long)p->read_threads, p->au_threshold, p->status);
	}
}
