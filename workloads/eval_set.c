/* The evaluation set ([dataset] num_files_eval, workloads.h): when a pass is due, where its
 * files live, and putting it in place of the training set (eval_enter) and back (eval_leave),
 * for the training workload's set-up and its epoch loop. */
#include "workloads.h"

#include <stdio.h>
#include <string.h>

#include "../bench/run.h"

bool eval_enabled(const struct config *cfg)
{
	return cfg->dataset.num_files_eval > 0;
}

bool eval_due(const struct config *cfg, int epoch)
{
	int64_t e = epoch + 1, first = cfg->evaluation.eval_after_epoch;

	return eval_enabled(cfg) && e >= first &&
	       (e - first) % cfg->evaluation.epochs_between_evals == 0;
}

void eval_folder(const struct config *cfg, char *buf, size_t len)
{
	char dir[CFG_PATH_MAX];
	size_t n;

	snprintf(dir, sizeof(dir), "%s", cfg->dataset.data_dir);
	for (n = strlen(dir); n > 1 && dir[n - 1] == '/';)
		dir[--n] = '\0';
	const char *base = strrchr(dir, '/');
	if (strcmp(base ? base + 1 : dir, "train") == 0)
		snprintf(buf, len, "%.*svalid", base ? (int)(base - dir) + 1 : 0, dir);
	else
		snprintf(buf, len, "%s-valid", dir);
}

/* A seed of its own: the evaluation samples are not the training samples (their headers carry
 * another dataset id, so reading a training file instead fails verification), and its
 * manifest's hash differs even when the counts are the same. */
#define EVAL_SEED_KEY 0x6576616cLL /* "eval" */

void eval_enter(struct run *run, struct eval_swap *sw)
{
	struct config *cfg = &run->cfg;
	const struct cfg_key *k = cfg_find("dataset", "num_files_train");
	struct dataset tmp = run->ds;

	memcpy(sw->data_dir, cfg->dataset.data_dir, sizeof(sw->data_dir));
	sw->nfiles = cfg->dataset.num_files_train;
	sw->spf = cfg->dataset.num_samples_per_file;
	sw->batch = cfg->reader.batch_size;
	sw->seed = cfg->dataset.seed;
	sw->ct = cfg->train.computation_time;
	sw->ct_stdev = cfg->train.computation_time_stdev;
	sw->nfiles_line = cfg->lines[k - cfg_keys];
	eval_folder(cfg, cfg->dataset.data_dir, sizeof(cfg->dataset.data_dir));
	cfg->dataset.num_files_train = cfg->dataset.num_files_eval;
	if (cfg->dataset.num_samples_per_file_eval)
		cfg->dataset.num_samples_per_file = cfg->dataset.num_samples_per_file_eval;
	if (cfg->reader.batch_size_eval)
		cfg->reader.batch_size = cfg->reader.batch_size_eval;
	cfg->dataset.seed = sw->seed ^ EVAL_SEED_KEY;
	cfg->train.computation_time = cfg->evaluation.eval_time;
	cfg->train.computation_time_stdev = cfg->evaluation.eval_time_stdev;
	/* a discovered evaluation set reads exactly num_files_eval files, more is an error */
	cfg->lines[k - cfg_keys] = sw->nfiles_line ? sw->nfiles_line : -1;
	run->ds = run->eval_ds;
	run->eval_ds = tmp;
}

void eval_leave(struct run *run, struct eval_swap *sw)
{
	struct config *cfg = &run->cfg;
	const struct cfg_key *k = cfg_find("dataset", "num_files_train");
	struct dataset tmp = run->ds;

	memcpy(cfg->dataset.data_dir, sw->data_dir, sizeof(sw->data_dir));
	cfg->dataset.num_files_train = sw->nfiles;
	cfg->dataset.num_samples_per_file = sw->spf;
	cfg->reader.batch_size = sw->batch;
	cfg->dataset.seed = sw->seed;
	cfg->train.computation_time = sw->ct;
	cfg->train.computation_time_stdev = sw->ct_stdev;
	cfg->lines[k - cfg_keys] = sw->nfiles_line;
	run->ds = run->eval_ds;
	run->eval_ds = tmp;
}
