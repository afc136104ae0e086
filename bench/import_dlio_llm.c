/* import-dlio's checkpoint-only workflows (import_dlio.h, struct imp_llm): the model section of
 * mlcommons/storage's llama3_*.yaml and the checkpoint.* keys DLIO reads when it does not
 * train, kept until import_dlio.c knows the workflow; and DLIO's parameter count of a Llama
 * (its checkpointing module, get_num_parameters): untied embedding and LM head, per layer the
 * input norm, Q and the grouped K and V, the output projection, the post-attention norm and the
 * gated MLP (3 matrices of hidden x ffn), and the final norm. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_dlio.h"

void imp_llm_init(struct imp_llm *l)
{
	memset(l, 0, sizeof(*l));
	l->layers = l->vocab = l->hidden = l->ffn = l->heads = l->kv_heads = -1;
	l->tp = l->pp = l->zero = l->nwrite = l->nread = -1;
	l->shift = -1;
}

static bool imp_llm_bool(const char *v, int *out)
{
	if (!strcmp(v, "True") || !strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1"))
		*out = 1;
	else if (!strcmp(v, "False") || !strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0"))
		*out = 0;
	else
		return false;
	return true;
}

bool imp_llm_key(struct imp_llm *l, const char *dk, const char *v, int line)
{
	static const char *const nums[] = {"model.num_layers",
					   "model.transformer.vocab_size",
					   "model.transformer.hidden_size",
					   "model.transformer.ffn_hidden_size",
					   "model.transformer.num_attention_heads",
					   "model.transformer.num_kv_heads",
					   "model.parallelism.tensor",
					   "model.parallelism.pipeline",
					   "model.parallelism.zero_stage",
					   "checkpoint.num_checkpoints_write",
					   "checkpoint.num_checkpoints_read"};
	double *dst[] = {&l->layers, &l->vocab, &l->hidden, &l->ffn,	&l->heads, &l->kv_heads,
			 &l->tp,     &l->pp,	&l->zero,   &l->nwrite, &l->nread};
	bool ok = false;
	char *end;

	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]) && !ok; i++)
		if (strcmp(dk, nums[i]) == 0) {
			double d = strtod(v, &end);
			if (end == v || *end || !isfinite(d) || d != floor(d) || d < 0 || d > 1e15)
				return false;
			*dst[i] = d;
			ok = true;
		}
	if (!ok &&
	    (!strcmp(dk, "model.model_datatype") || !strcmp(dk, "model.optimizer_datatype"))) {
		if (!imp_dtype_bytes(v))
			return false;
		snprintf(dk[6] == 'm' ? l->model_dtype : l->opt_dtype, sizeof(l->model_dtype), "%s",
			 v);
		ok = true;
	}
	ok = ok || !strcmp(dk, "model.type"); /* transformer: the count below */
	if (!ok && !strcmp(dk, "checkpoint.recovery_rank_shift"))
		ok = imp_llm_bool(v, &l->shift);
	if (!ok || l->nkeys == IMP_LLM_KEYS)
		return ok;
	struct imp_skip *s = &l->keys[l->nkeys++];
	snprintf(s->dlio, sizeof(s->dlio), "%s", dk);
	snprintf(s->value, sizeof(s->value), "%s", v);
	s->line = line;
	return true;
}

int imp_dtype_bytes(const char *d)
{
	static const struct {
		const char *name;
		int bytes;
	} t[] = {{"int8", 1}, {"uint8", 1}, {"fp16", 2}, {"bf16", 2}, {"fp32", 4}, {"fp64", 8}};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(d, t[i].name) == 0)
			return t[i].bytes;
	return 0;
}

double imp_llm_params(const struct imp_llm *l)
{
	double h = l->hidden, kv, per_layer;

	if (l->layers <= 0 || h <= 0 || l->vocab < 0 || l->ffn < 0 || l->heads <= 0 ||
	    l->kv_heads < 0)
		return 0;
	kv = floor(h / l->heads) * l->kv_heads; /* columns of K and of V */
	per_layer = h + h * (h + 2 * kv) + h * h + h + 3 * l->ffn * h;
	return 2 * l->vocab * h + l->layers * per_layer + h;
}

/* One key of the plan: its value and where it comes from. */
static void imp_llm_put(struct imp_set *out, int *n, int max, const char *key, const char *v,
			const char *from)
{
	if (*n == max)
		return;
	snprintf(out[*n].key, sizeof(out[*n].key), "%s", key);
	snprintf(out[*n].value, sizeof(out[*n].value), "%s", v);
	snprintf(out[*n].from, sizeof(out[*n].from), "%s", from);
	(*n)++;
}

/* A whole number v; fmt says where it comes from, with one %.0f for from. */
static void imp_llm_num(struct imp_set *out, int *n, int max, const char *key, double v,
			const char *fmt, double from) __attribute__((format(printf, 6, 0)));
static void imp_llm_num(struct imp_set *out, int *n, int max, const char *key, double v,
			const char *fmt, double from)
{
	char val[64], note[256];

	snprintf(val, sizeof(val), "%.0f", v);
	snprintf(note, sizeof(note), fmt, from);
	imp_llm_put(out, n, max, key, val, note);
}

int imp_llm_plan(const struct imp_llm *l, struct imp_set *out, int max)
{
	int md = imp_dtype_bytes(l->model_dtype[0] ? l->model_dtype : "fp16");
	int od = imp_dtype_bytes(l->opt_dtype[0] ? l->opt_dtype : "fp32"), n = 0;

	imp_llm_num(out, &n, max, "checkpoint.num_parameters", imp_llm_params(l),
		    "DLIO's count (model.type transformer) from model.num_layers (%.0f) and "
		    "model.transformer: embedding, layers and LM head",
		    l->layers);
	imp_llm_num(out, &n, max, "checkpoint.bytes_per_param_model", md,
		    "model.model_datatype (%.0f bytes)", md);
	imp_llm_num(out, &n, max, "checkpoint.bytes_per_param_optimizer", 3 * od,
		    "model.optimizer_datatype: 3 tensors of %.0f bytes per parameter (DLIO's "
		    "optimizer groups)",
		    od);
	imp_llm_num(out, &n, max, "checkpoint.tensor_parallelism", l->tp < 1 ? 1 : l->tp,
		    "model.parallelism.tensor: %.0f", l->tp);
	imp_llm_num(out, &n, max, "checkpoint.pipeline_parallelism", l->pp < 1 ? 1 : l->pp,
		    "model.parallelism.pipeline: %.0f", l->pp);
	imp_llm_num(out, &n, max, "checkpoint.zero_stage", l->zero < 0 ? 0 : l->zero,
		    "model.parallelism.zero_stage: %.0f", l->zero);
	if (l->nwrite >= 0 || l->nread >= 0) {
		imp_llm_num(out, &n, max, "checkpoint.num_checkpoints_write",
			    l->nwrite < 0 ? 0 : l->nwrite, "checkpoint.num_checkpoints_write: %.0f",
			    l->nwrite);
		imp_llm_num(out, &n, max, "checkpoint.num_checkpoints_read",
			    l->nread < 0 ? 0 : l->nread, "checkpoint.num_checkpoints_read: %.0f",
			    l->nread);
	}
	if (l->shift >= 0)
		imp_llm_put(out, &n, max, "checkpoint.recovery_rank_shift",
			    l->shift ? "true" : "false", "checkpoint.recovery_rank_shift");
	imp_llm_put(out, &n, max, "checkpoint.layout", "dcp",
		    "one shard per writing rank plus .metadata");
	return n;
}
