/* The DLIO importer's mapping, shared by its two files: import_dlio.c reads a DLIO workload YAML
 * into it, import_dlio_ini.c writes it as an INI. */
#ifndef FEEDBENCH_IMPORT_DLIO_H
#define FEEDBENCH_IMPORT_DLIO_H

#include <stdbool.h>

#include "config.h"

#define IMP_MAX	  256 /* keys of one YAML file */
#define IMP_VALUE 512
#define IMP_LIST  64 /* numbers of one YAML list (optimization_groups, layer_parameters) */
/* Bounds on the input (docs/dlio.md): DLIO's workload YAMLs are a few KiB, 3 levels deep. */
#define IMP_MAX_BYTES ((size_t)1 << 20)
#define IMP_MAX_DEPTH 32
#define IMP_MAX_NODES 20000 /* scalars, lists and mappings */

/* A value for one feedbench key, and where it came from. */
struct imp_set {
	char key[CFG_NAME_MAX]; /* "dataset.record_length_bytes" */
	char value[IMP_VALUE];
	char from[640]; /* "dataset.record_length: 146600628", or a note */
	int line;
};

/* A DLIO key with no feedbench equivalent. */
struct imp_skip {
	char dlio[CFG_NAME_MAX];
	char value[96];
	const char *why;
	int line;
};

#define IMP_LLM_KEYS 24

/* A checkpoint-only workflow's keys (DLIO's LLM checkpointing: workflow.train False,
 * workflow.checkpoint True; mlcommons/storage's llama3_*.yaml): the model's architecture,
 * parallelism and datatypes, and the checkpoint.* keys DLIO reads only without training. Kept
 * until the workflow is known (import_dlio_llm.c). */
struct imp_llm {
	double layers, vocab, hidden, ffn, heads, kv_heads; /* -1: absent */
	double tp, pp, zero, nwrite, nread;		    /* -1: absent */
	int shift;					    /* recovery_rank_shift: -1, 0, 1 */
	char model_dtype[16], opt_dtype[16];		    /* "": absent */
	struct imp_skip keys[IMP_LLM_KEYS];		    /* every key kept: value and line */
	int nkeys;
};

void imp_llm_init(struct imp_llm *l);
/* Keeps one of those keys (dk: "model.num_layers", "model.parallelism.tensor",
 * "checkpoint.num_checkpoints_write", ...); false when dk is not one, or its value is not
 * what DLIO reads there. */
bool imp_llm_key(struct imp_llm *l, const char *dk, const char *v, int line);
/* DLIO's parameter count of the transformer (embedding, layers, LM head); 0 without layers. */
double imp_llm_params(const struct imp_llm *l);
/* The [checkpoint] keys of a checkpoint-only workflow with a parameter count (num_parameters,
 * bytes per parameter, parallelism, phases, layout), each with where it comes from, into out
 * (at most max); returns how many. */
#define IMP_LLM_SETS 16
int imp_llm_plan(const struct imp_llm *l, struct imp_set *out, int max);
/* Bytes of a DLIO datatype (int8, fp16, bf16, fp32, fp64); 0 when unknown. */
int imp_dtype_bytes(const char *d);

struct imp {
	const char *path;
	struct imp_set sets[IMP_MAX];
	int nsets;
	struct imp_skip skips[IMP_MAX];
	int nskips;
	char data_folder[CFG_PATH_MAX];
	char storage_root[CFG_PATH_MAX];
	char format[64];
	int format_line;
	char compression[32]; /* dataset.compression: parquet pages; other formats ignore it */
	int compression_line;
	int generate_data; /* -1 absent, 0, 1 */
	int evaluation;	   /* workflow.evaluation: -1 absent, 0, 1 */
	bool train;	   /* workflow.train */
	char framework[32];
	char bad[768]; /* the first value the INI cannot hold (imp_value_check) */
	/* DLIO 2.0.0's checkpoint keys (utils/config.py), DLIO's defaults when absent. */
	struct {
		int enabled; /* workflow.checkpoint: -1 absent, 0, 1 */
		int enabled_line;
		char folder[CFG_PATH_MAX];
		double after_epoch, epochs_between, steps_between, model_size, num_layers, tp, pp;
		double opt[IMP_LIST], layers[IMP_LIST];
		int nopt, nlayers; /* -1: absent (DLIO's default list) */
		char type[32];
		struct imp_skip keys[32]; /* every checkpoint.* key seen: value and line */
		int nkeys;
	} ck;
	struct imp_llm llm;
	int train_line; /* workflow.train's line (0: absent) */
};

/* Writes the INI to out_path (atomically), or to stdout when NULL: 0, or 1 after saying why. */
int imp_output(const struct imp *im, const char *out_path);

#endif
