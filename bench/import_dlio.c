/* `feedbench import-dlio FILE.yaml [-o OUT.ini]`: a DLIO workload YAML to the equivalent INI.
 *
 * feedbench's configs stay INI; YAML is read only here, through libyaml's document API. Each
 * DLIO key becomes the feedbench key of the same section and name, or of its row in
 * cfg_dlio_aliases (config_keys.c), or one of the few keys handled below (format, data
 * folder, workflow, DLIO's checkpoint section); every other key is listed, with the reason, as a
 * comment at the end of the INI and on stderr. Keys DLIO leaves out get DLIO's defaults where they
 * differ from feedbench's, so the imported workload is DLIO's. docs/dlio.md explains every key this
 * file does not map.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "cli.h"
#include "config.h"
#include "errors.h"
#include "import_dlio.h"
#include "mlperf.h"
#include "safefile.h"

/* DLIO keys (or prefixes ending in '.') that have no feedbench equivalent, and why. The same
 * words are in docs/dlio.md. */
static const struct {
	const char *dlio;
	const char *why;
} imp_reasons[] = {
    {"framework", "feedbench's reader threads emulate either framework's loader"},
    {"model.parallelism.data",
     "mlpstorage sets the data-parallel degree from the process count: feedbench takes ranks / "
     "(tensor x pipeline), or [checkpoint] data_parallelism for a subset of the geometry"},
    {"checkpoint.fsync", "feedbench fsyncs every checkpoint file, .metadata and the folders "
			 "(always on)"},
    {"checkpoint.time_between_checkpoints",
     "DLIO sleeps between the checkpoints of a checkpoint-only workflow (no I/O); feedbench "
     "writes them back to back"},
    {"checkpoint.mode", "DLIO's subset mode: feedbench runs a subset when the ranks are fewer "
			"than [checkpoint] data_parallelism x tensor x pipeline"},
    {"checkpoint.rank_sync", "feedbench starts every checkpoint and read at a barrier of all "
			     "ranks and times from it (always on)"},
    {"checkpoint.randomize_tensor", "feedbench writes a seeded pattern per step and rank, "
				    "verified when read back"},
    {"model.", "DLIO 2.0.0 reads model only as a name; only model.name is used (workload name)"},
    {"reader.data_loader", "feedbench's reader threads are the loader (read_threads of them)"},
    {"reader.data_loader_classname", "no plug-in loaders: feedbench's reader threads"},
    {"reader.data_loader_sampler", "feedbench's sampler deals samples to ranks itself"},
    {"reader.reader_classname", "no plug-in readers: the format plug-in reads"},
    {"reader.multiprocessing_context", "reader threads, not processes"},
    {"reader.computation_threads", "decode threads (no I/O); compute is one emulated step"},
    {"reader.shuffle_size", "feedbench shuffles the whole sample order (no shuffle buffer)"},
    {"reader.dont_use_mmap", "feedbench always reads with pread (or MPI-IO), never mmap"},
    {"reader.read_type", "feedbench always reads on demand"},
    {"reader.preprocess_time_stdev", "preprocess_time is the same for every sample"},
    {"reader.transfer_size", "TensorFlow's read-ahead buffer, not a read size: feedbench reads a "
			     "record per call ([storage] transfer_size splits reads)"},
    {"reader.pin_memory", "DLIO 2.0.0 does not read it (its PyTorch loader always pins "
			  "memory): see [train] pin_memory (CUDA staging buffers)"},
    {"dataset.record_length_resize", "a resize after reading: no I/O"},
    {"dataset.record_length_bytes_resize", "a resize after reading: no I/O"},
    {"dataset.num_subfolders_train", "feedbench reads the files of one folder"},
    {"dataset.num_subfolders_eval", "feedbench reads the evaluation files of one folder"},
    {"dataset.enable_chunking", "HDF5 chunks are set in samples: [format.hdf5] chunking"},
    {"dataset.chunk_size", "HDF5 chunks are set in samples: [format.hdf5] chunking"},
    {"dataset.compression", "feedbench writes uncompressed files"},
    {"dataset.compression_level", "feedbench writes uncompressed files"},
    {"dataset.file_prefix", "feedbench names the files it writes; it reads any name"},
    {"dataset.generation_buffer_size", "generation writes through the format plug-in"},
    {"dataset.parquet", "not a key of the MLCommons fork's parquet section feedbench knows"},
    {"train.total_training_steps",
     "feedbench runs whole epochs: size num_files_train x num_samples_per_file to the steps"},
    {"train.total_eval_steps",
     "DLIO 2.0 does not read it; an evaluation pass reads the whole evaluation set"},
    {"train.seed_change_epoch", "feedbench reshuffles every epoch from the seed"},
    {"evaluation.steps_between_evals",
     "DLIO 2.0 does not read it; evaluations follow whole epochs (epochs_between_evals)"},
    {"checkpoint.checkpoint_mechanism_classname",
     "no plug-in checkpointing: feedbench writes DCP shards ([checkpoint] layout)"},
    {"workflow.do_eval", "DLIO 2.0 reads workflow.evaluation, not do_eval: without it DLIO does "
			 "not evaluate, and neither does the INI"},
    {"workflow.profiling", "no built-in profiler: run Darshan or strace beside feedbench"},
    {"workflow.debug", "no debug mode"},
    {"profiling.", "no built-in profiler: run Darshan or strace beside feedbench"},
    {"output.log_file", "feedbench prints to stderr and writes summary.json"},
    {"storage.storage_type", "only local file systems (posix or MPI-IO); S3 is not emulated"},
    {"metric.", "only metric.au is used (train.au_threshold)"},
    {"hydra.", "Hydra's own settings"},
};

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: feedbench import-dlio FILE.yaml [-o OUT.ini]\n"
	       "\n"
	       "Reads a DLIO workload YAML (configs/workload/*.yaml of dlio_benchmark) and writes\n"
	       "the equivalent feedbench INI to OUT.ini (default: stdout). Each key names the\n"
	       "DLIO key it comes from; DLIO keys without an equivalent are listed, with the\n"
	       "reason, as comments at the end and on stderr (docs/dlio.md explains each).\n"
	       "Keys DLIO leaves out get DLIO's defaults. DLIO reads data_folder/train/: with\n"
	       "generate_data False the INI reads DLIO's files there (generate = never).\n"
	       "With workflow.checkpoint True, DLIO's checkpoints become [checkpoint] keys (the\n"
	       "bytes rank 0 writes, after which epochs or steps); step_barrier is always true.\n"
	       "Exit status: 0 written, 1 cannot write OUT.ini, 2 usage or YAML error.\n");
}

static const char *imp_reason(const char *dlio)
{
	for (size_t i = 0; i < sizeof(imp_reasons) / sizeof(imp_reasons[0]); i++) {
		const char *r = imp_reasons[i].dlio;
		size_t n = strlen(r);

		if (r[n - 1] == '.' ? strncmp(dlio, r, n) == 0 : strcmp(dlio, r) == 0)
			return imp_reasons[i].why;
	}
	return NULL;
}

static void imp_skip(struct imp *im, const char *dlio, const char *value, int line, const char *why)
{
	struct imp_skip *s;

	if (im->nskips == IMP_MAX)
		return;
	s = &im->skips[im->nskips++];
	snprintf(s->dlio, sizeof(s->dlio), "%s", dlio);
	snprintf(s->value, sizeof(s->value), "%s", value);
	s->why = why;
	s->line = line;
}

static struct imp_set *imp_find(struct imp *im, const char *key)
{
	for (int i = 0; i < im->nsets; i++)
		if (strcmp(im->sets[i].key, key) == 0)
			return &im->sets[i];
	return NULL;
}

/* The width of the INI line "leaf = value" for key section.leaf and a value of n bytes. */
static size_t imp_line_width(const char *key, size_t n)
{
	const char *leaf = strrchr(key, '.');

	return strlen(leaf ? leaf + 1 : key) + 3 + n;
}

/* The INI must read back to exactly the values reported: a value --set would refuse
 * (cfg_value_check), one with blanks at either end (the INI drops them) or one longer than
 * IMP_VALUE is the import's error (the first one is kept), never written. */
static void imp_value_check(struct imp *im, const struct imp_set *s, const char *value)
{
	char why[256] = "";
	size_t n = strlen(value);

	if (im->bad[0])
		return;
	if (n >= sizeof(s->value))
		snprintf(why, sizeof(why), "it is longer than %zu bytes", sizeof(s->value) - 1);
	else if (n && (isspace((unsigned char)value[0]) || isspace((unsigned char)value[n - 1])))
		snprintf(why, sizeof(why), "a value cannot begin or end with a blank");
	else if (cfg_value_check(value, why, sizeof(why)) < 0)
		;
	else if (imp_line_width(s->key, n) > CFG_LINE_MAX)
		snprintf(why, sizeof(why),
			 "as a config line it is %zu characters; config files hold at most %d",
			 imp_line_width(s->key, n), CFG_LINE_MAX);
	else
		return;
	if (s->line > 0)
		snprintf(im->bad, sizeof(im->bad), "%s:%d: %s cannot be written to the INI: %s",
			 im->path, s->line, s->key, why);
	else
		snprintf(im->bad, sizeof(im->bad), "%s: %s cannot be written to the INI: %s",
			 im->path, s->key, why);
}

/* Sets a feedbench key; line: of the YAML key, -1 for a value derived from several keys, 0 for
 * a DLIO default, which never overrides what the YAML set. */
static void imp_set(struct imp *im, const char *key, const char *value, int line, const char *fmt,
		    ...) __attribute__((format(printf, 5, 6)));
static void imp_set(struct imp *im, const char *key, const char *value, int line, const char *fmt,
		    ...)
{
	struct imp_set *s = imp_find(im, key);
	va_list ap;

	if (s && line == 0)
		return;
	if (!s) {
		if (im->nsets == IMP_MAX)
			return;
		s = &im->sets[im->nsets++];
	}
	snprintf(s->key, sizeof(s->key), "%s", key);
	snprintf(s->value, sizeof(s->value), "%s", value);
	s->line = line;
	imp_value_check(im, s, value);
	va_start(ap, fmt);
	vsnprintf(s->from, sizeof(s->from), fmt, ap);
	va_end(ap);
}

static bool yaml_bool(const char *v, bool *out)
{
	static const char *const t[] = {"true", "True", "TRUE", "yes", "Yes", "on", "1"};
	static const char *const f[] = {"false", "False", "FALSE", "no", "No", "off", "0"};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (strcmp(v, t[i]) == 0)
			return (*out = true);
		if (strcmp(v, f[i]) == 0)
			return !(*out = false);
	}
	return false;
}

/* A DLIO value for a feedbench key of the table: converted to the key's type (whole numbers
 * rounded, ranges clamped, with a note), or NULL and a reason when it cannot be. */
static const char *imp_convert(const struct cfg_key *k, const char *v, char *out, size_t len,
			       char *note, size_t nlen)
{
	char *end;
	double d;
	bool b;

	note[0] = '\0';
	switch (k->type) {
	case CFG_BOOL:
		if (!yaml_bool(v, &b))
			return "not a boolean";
		snprintf(out, len, "%s", b ? "true" : "false");
		return NULL;
	case CFG_INT:
	case CFG_SIZE:
		d = strtod(v, &end);
		if (end == v || *end || !isfinite(d))
			return "not a number";
		if (d != floor(d))
			snprintf(note, nlen, " (rounded to whole %s)",
				 k->type == CFG_SIZE ? "bytes" : "units");
		d = floor(d + 0.5);
		if (k->min <= k->max && (d < k->min || d > k->max)) {
			snprintf(note, nlen, " (outside feedbench's range %.0f..%.0f: clamped)",
				 k->min, k->max);
			d = d < k->min ? k->min : k->max;
		}
		snprintf(out, len, "%.0f", d);
		return NULL;
	case CFG_DURATION:
	case CFG_DOUBLE:
		d = strtod(v, &end);
		if (end == v || *end || !isfinite(d))
			return "not a number";
		snprintf(out, len, "%s", v);
		return NULL;
	case CFG_CHOICE:
		for (size_t i = 0; k->choices && k->choices[i]; i++)
			if (strcasecmp(v, k->choices[i]) == 0) {
				snprintf(out, len, "%s", k->choices[i]);
				return NULL;
			}
		return "not one of feedbench's choices";
	default:
		snprintf(out, len, "%s", v);
		return NULL;
	}
}

static int imp_line(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

/* The DLIO formats feedbench writes and reads as they are; others map to raw. */
static bool imp_native_format(const char *f)
{
	return strcmp(f, "npz") == 0 || strcmp(f, "tfrecord") == 0 || strcmp(f, "hdf5") == 0 ||
	       strcmp(f, "npy") == 0 || strcmp(f, "parquet") == 0 || strcmp(f, "jpeg") == 0 ||
	       strcmp(f, "png") == 0;
}

/* The checkpoint.* keys DLIO 2.0.0 reads (utils/config.py LoadConfig): kept for imp_ckpt,
 * which maps them once the workflow and epochs are known. False: not one of them. */
static bool imp_ckpt_key(struct imp *im, const char *k, const char *v, int line)
{
	static const char *const nums[] = {"checkpoint_after_epoch",
					   "epochs_between_checkpoints",
					   "steps_between_checkpoints",
					   "model_size",
					   "num_layers",
					   "tensor_parallelism",
					   "pipeline_parallelism"};
	double *dst[] = {&im->ck.after_epoch, &im->ck.epochs_between, &im->ck.steps_between,
			 &im->ck.model_size,  &im->ck.num_layers,     &im->ck.tp,
			 &im->ck.pp};
	bool known = strcmp(k, "checkpoint_folder") == 0 || strcmp(k, "type") == 0;
	char *end;

	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]) && !known; i++)
		if (strcmp(k, nums[i]) == 0) {
			double d = strtod(v, &end);
			if (end == v || *end || !isfinite(d) || d != floor(d)) {
				char dk[CFG_NAME_MAX];
				snprintf(dk, sizeof(dk), "checkpoint.%s", k);
				imp_skip(im, dk, v, line, "not a whole number");
				return true;
			}
			*dst[i] = d;
			known = true;
		}
	if (!known)
		return false;
	if (strcmp(k, "checkpoint_folder") == 0)
		snprintf(im->ck.folder, sizeof(im->ck.folder), "%s", v);
	else if (strcmp(k, "type") == 0)
		snprintf(im->ck.type, sizeof(im->ck.type), "%s", v);
	if (im->ck.nkeys < (int)(sizeof(im->ck.keys) / sizeof(im->ck.keys[0]))) {
		struct imp_skip *s = &im->ck.keys[im->ck.nkeys++];
		snprintf(s->dlio, sizeof(s->dlio), "checkpoint.%s", k);
		snprintf(s->value, sizeof(s->value), "%s", v);
		s->line = line;
	}
	return true;
}

/* checkpoint.optimization_groups and layer_parameters: YAML lists of whole numbers. */
static bool imp_ckpt_list(struct imp *im, yaml_document_t *doc, const char *dk, yaml_node_t *n)
{
	bool opt = strcmp(dk, "checkpoint.optimization_groups") == 0;
	double *dst = opt ? im->ck.opt : im->ck.layers;
	int *cnt = opt ? &im->ck.nopt : &im->ck.nlayers, k = 0;
	char *end;

	if (!opt && strcmp(dk, "checkpoint.layer_parameters") != 0)
		return false;
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *e = yaml_document_get_node(doc, *it);
		double d;

		if (!e || e->type != YAML_SCALAR_NODE || k == IMP_LIST)
			return false;
		d = strtod((const char *)e->data.scalar.value, &end);
		if (end == (const char *)e->data.scalar.value || *end || !isfinite(d) ||
		    d != floor(d))
			return false;
		dst[k++] = d;
	}
	*cnt = k;
	if (im->ck.nkeys < (int)(sizeof(im->ck.keys) / sizeof(im->ck.keys[0]))) {
		struct imp_skip *s = &im->ck.keys[im->ck.nkeys++];
		snprintf(s->dlio, sizeof(s->dlio), "%s", dk);
		snprintf(s->value, sizeof(s->value), "[list of %d]", k);
		s->line = imp_line(n);
	}
	return true;
}

/* Keys with their own rule; true when handled. */
static bool imp_special(struct imp *im, const char *dk, const char *v, int line)
{
	bool b;

	if (strcmp(dk, "framework") == 0)
		snprintf(im->framework, sizeof(im->framework), "%s", v); /* and listed below */
	if ((strncmp(dk, "model.", 6) == 0 || strncmp(dk, "checkpoint.", 11) == 0) &&
	    imp_llm_key(&im->llm, dk, v, line))
		return true; /* mapped or listed once the workflow is known (imp_finish) */
	if (strncmp(dk, "checkpoint.", 11) == 0 && imp_ckpt_key(im, dk + 11, v, line)) {
		return true;
	} else if (strcmp(dk, "workflow.checkpoint") == 0 && yaml_bool(v, &b)) {
		im->ck.enabled = b;
		im->ck.enabled_line = line;
	} else if (strcmp(dk, "model") == 0 || strcmp(dk, "model.name") == 0) {
		imp_set(im, "workload.name", v, line, "%s: %s", dk, v);
	} else if (strcmp(dk, "dataset.format") == 0) {
		snprintf(im->format, sizeof(im->format), "%s", v);
		im->format_line = line;
	} else if (strcmp(dk, "dataset.compression") == 0) {
		snprintf(im->compression, sizeof(im->compression), "%s", v);
		im->compression_line = line;
	} else if (strcmp(dk, "dataset.data_folder") == 0) {
		snprintf(im->data_folder, sizeof(im->data_folder), "%s", v);
	} else if (strcmp(dk, "storage.storage_root") == 0) {
		snprintf(im->storage_root, sizeof(im->storage_root), "%s", v);
	} else if (strcmp(dk, "storage.storage_type") == 0 && strcmp(v, "local_fs") == 0) {
		imp_set(im, "storage.backend", "posix", line, "%s: %s", dk, v);
	} else if (strcmp(dk, "workflow.generate_data") == 0 && yaml_bool(v, &b)) {
		im->generate_data = b;
	} else if (strcmp(dk, "workflow.evaluation") == 0 && yaml_bool(v, &b)) {
		im->evaluation = b;
	} else if (strcmp(dk, "workflow.train") == 0 && yaml_bool(v, &b)) {
		im->train = b;
		im->train_line = line;
	} else if (strcmp(dk, "reader.file_access") == 0) {
		imp_set(im, "dataset.file_access", strcmp(v, "multi") == 0 ? "per_rank" : "shared",
			line, "%s: %s%s", dk, v,
			strcmp(v, "collective") == 0
			    ? " (collective reads: [storage] backend = mpiio, "
			      "[storage.mpiio] collective = true)"
			    : "");
	} else {
		return false;
	}
	return true;
}

/* One DLIO key ("section.key") with a scalar value. */
static void imp_scalar(struct imp *im, const char *dk, const char *v, int line)
{
	const struct cfg_key *k = NULL;
	char out[IMP_VALUE], note[128], sec[CFG_NAME_MAX];
	const char *dot = strchr(dk, '.'), *why;

	if (imp_special(im, dk, v, line))
		return;
	for (size_t i = 0; cfg_dlio_aliases[i].dlio && !k; i++)
		if (!(cfg_dlio_aliases[i].flags & CFG_ALIAS_HINT) &&
		    strcmp(cfg_dlio_aliases[i].dlio, dk) == 0)
			k = cfg_find_dotted(cfg_dlio_aliases[i].key);
	if (!k && dot && !imp_reason(dk)) {
		snprintf(sec, sizeof(sec), "%.*s", (int)(dot - dk), dk);
		if (strcmp(sec, "dataset") == 0 || strcmp(sec, "reader") == 0 ||
		    strcmp(sec, "train") == 0 || strcmp(sec, "evaluation") == 0)
			k = cfg_find(sec, dot + 1);
	}
	if (!k) {
		why = imp_reason(dk);
		imp_skip(im, dk, v, line,
			 why ? why : "not a DLIO workload key feedbench knows (see docs/dlio.md)");
		return;
	}
	why = imp_convert(k, v, out, sizeof(out), note, sizeof(note));
	if (why) {
		imp_skip(im, dk, v, line, why);
		return;
	}
	snprintf(sec, sizeof(sec), "%s.%s", k->section, k->name);
	imp_set(im, sec, out, line, "%s: %s%s", dk, v, note);
	if (strstr(note, "clamped"))
		fprintf(stderr, "feedbench: import-dlio: %s:%d: %s: %s%s\n", im->path, line, dk, v,
			note);
}

/* The MLCommons fork's dataset.parquet: columns (a list of {name, dtype, size, read}) to
 * [format.parquet] columns and read_columns (when some say read: false), row_group_size. */
static bool imp_parquet(struct imp *im, yaml_document_t *doc, yaml_node_t *n)
{
	char cols[IMP_VALUE] = "", rd[IMP_VALUE] = "";
	bool skipped = false;

	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		const char *key =
		    k && k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
		char dk[CFG_NAME_MAX];

		snprintf(dk, sizeof(dk), "dataset.parquet.%s", key);
		if (v && v->type == YAML_SCALAR_NODE && strcmp(key, "row_group_size") == 0) {
			imp_set(im, "format.parquet.row_group_size",
				(const char *)v->data.scalar.value, imp_line(v), "%s: %s", dk,
				(const char *)v->data.scalar.value);
			continue;
		}
		if (!v || v->type != YAML_SEQUENCE_NODE || strcmp(key, "columns") != 0) {
			imp_skip(im, dk,
				 v && v->type == YAML_SCALAR_NODE
				     ? (const char *)v->data.scalar.value
				     : "{...}",
				 v ? imp_line(v) : 0,
				 "generation batching and read modes of DLIO's fork: no I/O of "
				 "their own");
			continue;
		}
		for (yaml_node_item_t *it = v->data.sequence.items.start;
		     it < v->data.sequence.items.top; it++) {
			yaml_node_t *c = yaml_document_get_node(doc, *it);
			const char *f[4] = {"data", "float32", "1",
					    "true"}; /* name dtype size read */
			static const char *const names[4] = {"name", "dtype", "size", "read"};
			size_t at = strlen(cols);

			for (yaml_node_pair_t *q = c && c->type == YAML_MAPPING_NODE
						       ? c->data.mapping.pairs.start
						       : NULL;
			     q && q < c->data.mapping.pairs.top; q++) {
				yaml_node_t *ck = yaml_document_get_node(doc, q->key);
				yaml_node_t *cv = yaml_document_get_node(doc, q->value);

				for (int j = 0; j < 4 && ck && cv && cv->type == YAML_SCALAR_NODE;
				     j++)
					if (strcmp((const char *)ck->data.scalar.value, names[j]) ==
					    0)
						f[j] = (const char *)cv->data.scalar.value;
			}
			bool binary = strcmp(f[1], "binary") == 0, read = true;

			if (!yaml_bool(f[3], &read))
				read = true;

			snprintf(cols + at, sizeof(cols) - at, "%s%s:%s%s%s", at ? ", " : "", f[0],
				 f[1], binary ? "" : ":", binary ? "" : f[2]);
			if (read) {
				at = strlen(rd);
				snprintf(rd + at, sizeof(rd) - at, "%s%s", at ? ", " : "", f[0]);
			}
			skipped |= !read;
		}
		imp_set(im, "format.parquet.columns", cols, imp_line(v),
			"dataset.parquet.columns: %s", cols);
		if (skipped)
			imp_set(im, "format.parquet.read_columns", rd, imp_line(v),
				"dataset.parquet.columns: the columns with read: true");
	}
	return true;
}

/* Walks one section's mapping: scalars are keys; anything deeper is one unmapped key. */
static void imp_node(struct imp *im, yaml_document_t *doc, const char *prefix, yaml_node_t *n)
{
	const char *why;

	if (n->type == YAML_SCALAR_NODE) {
		imp_scalar(im, prefix, (const char *)n->data.scalar.value, imp_line(n));
		return;
	}
	if (n->type == YAML_MAPPING_NODE &&
	    (!strchr(prefix, '.') || !strcmp(prefix, "model.parallelism") ||
	     !strcmp(prefix, "model.transformer"))) {
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(doc, p->key);
			yaml_node_t *v = yaml_document_get_node(doc, p->value);
			char dk[CFG_NAME_MAX];

			if (!k || !v || k->type != YAML_SCALAR_NODE)
				continue;
			/* DLIO reads `data_reader` as `reader`. */
			snprintf(dk, sizeof(dk), "%s%s%s",
				 strcmp(prefix, "data_reader") == 0 ? "reader" : prefix,
				 *prefix ? "." : "", (const char *)k->data.scalar.value);
			imp_node(im, doc, dk, v);
		}
		return;
	}
	if (n->type == YAML_SEQUENCE_NODE && imp_ckpt_list(im, doc, prefix, n))
		return;
	if (n->type == YAML_MAPPING_NODE && strcmp(prefix, "dataset.parquet") == 0 &&
	    imp_parquet(im, doc, n))
		return;
	why = imp_reason(prefix);
	imp_skip(im, prefix, n->type == YAML_SEQUENCE_NODE ? "[list]" : "{mapping}", imp_line(n),
		 why ? why : "not a DLIO workload key feedbench knows (see docs/dlio.md)");
}

/* Reads FILE.yaml whole: a regular file only (a FIFO or a device is refused without
 * blocking, safe_open_read), of at most IMP_MAX_BYTES. */
static int imp_read(const struct imp *im, char **out, size_t *outlen)
{
	int fd = safe_open_read(im->path, 0, false);
	size_t len = 0;
	struct stat st;
	char *buf;

	if (fd == -FB_ENOTREG && stat(im->path, &st) == 0) {
		fprintf(stderr,
			"feedbench: import-dlio: cannot read '%s': it is %s, not a regular file\n",
			im->path, safe_kind(st.st_mode));
		return -FB_EUSAGE;
	}
	if (fd < 0) {
		fprintf(stderr, "feedbench: import-dlio: cannot open '%s': %s\n", im->path,
			fb_strerror(fd));
		return -FB_EUSAGE;
	}
	buf = malloc(IMP_MAX_BYTES + 1);
	while (buf && len <= IMP_MAX_BYTES) {
		ssize_t n = read(fd, buf + len, IMP_MAX_BYTES + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!buf || len > IMP_MAX_BYTES) {
		fprintf(
		    stderr, "feedbench: import-dlio: cannot read '%s': %s\n", im->path,
		    buf ? "it is larger than 1 MiB, the most import-dlio reads (a DLIO workload "
			  "YAML is a few KiB)"
			: "out of memory");
		free(buf);
		return -FB_EUSAGE;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/* Walks the YAML's events once before the document is built: nesting deeper than
 * IMP_MAX_DEPTH (libyaml's scanner takes time quadratic in the depth of flow collections:
 * 100 000 '[' took a minute) and more than IMP_MAX_NODES values are refused. A YAML error is
 * left to the load to report. */
static int imp_depth_check(const struct imp *im, const char *buf, size_t len)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	int depth = 0, nodes = 0, rc = 0;
	bool end = false;

	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (!end && rc == 0 && yaml_parser_parse(&parser, &ev)) {
		if (ev.type == YAML_SCALAR_EVENT || ev.type == YAML_ALIAS_EVENT)
			nodes++;
		if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
			depth++;
			nodes++;
		} else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT)
			depth--;
		if (depth > IMP_MAX_DEPTH) {
			fprintf(stderr,
				"feedbench: import-dlio: %s:%zu:%zu: nested deeper than %d levels, "
				"the most import-dlio reads (a DLIO workload YAML has 3)\n",
				im->path, ev.start_mark.line + 1, ev.start_mark.column + 1,
				IMP_MAX_DEPTH);
			rc = -FB_EUSAGE;
		} else if (nodes > IMP_MAX_NODES) {
			fprintf(stderr,
				"feedbench: import-dlio: %s:%zu:%zu: more than %d values, the most "
				"import-dlio reads (a DLIO workload YAML has about 50)\n",
				im->path, ev.start_mark.line + 1, ev.start_mark.column + 1,
				IMP_MAX_NODES);
			rc = -FB_EUSAGE;
		}
		end = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return rc;
}

/* Loads FILE.yaml; a YAML error names file, line and column. */
static int imp_load(struct imp *im, yaml_document_t *doc)
{
	yaml_parser_t parser;
	yaml_node_t *root;
	size_t len = 0;
	char *buf = NULL;
	int rc = imp_read(im, &buf, &len);

	if (rc < 0)
		return rc;
	if ((rc = imp_depth_check(im, buf, len)) < 0) {
		free(buf);
		return rc;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, doc)) {
		fprintf(stderr, "feedbench: import-dlio: %s:%zu:%zu: %s%s%s\n", im->path,
			parser.problem_mark.line + 1, parser.problem_mark.column + 1,
			parser.problem ? parser.problem : "YAML error", parser.context ? " " : "",
			parser.context ? parser.context : "");
		rc = -FB_EUSAGE;
		goto out;
	}
	root = yaml_document_get_root_node(doc);
	if (!root || root->type != YAML_MAPPING_NODE) {
		fprintf(stderr,
			"feedbench: import-dlio: %s:%d:%d: expected a mapping of DLIO sections "
			"(dataset:, reader:, train:, ...) at the top\n",
			im->path, root ? imp_line(root) : 1,
			root ? (int)root->start_mark.column + 1 : 1);
		yaml_document_delete(doc);
		rc = -FB_EUSAGE;
	}
out:
	yaml_parser_delete(&parser);
	free(buf);
	return rc;
}

/* DLIO evaluates only with workflow.evaluation True (and num_files_eval > 0): then its
 * evaluation keys stay, with DLIO's batch_size_eval of 1 when absent; otherwise they are listed
 * as not mapped, since the INI does not evaluate either. */
static void imp_eval(struct imp *im)
{
	static const char *const keys[] = {
	    "dataset.num_files_eval",	      "dataset.num_samples_per_file_eval",
	    "reader.batch_size_eval",	      "evaluation.eval_time",
	    "evaluation.eval_time_stdev",     "evaluation.eval_after_epoch",
	    "evaluation.epochs_between_evals"};
	struct imp_set *n = imp_find(im, "dataset.num_files_eval");

	if (im->evaluation == 1 && n && strcmp(n->value, "0") != 0) {
		imp_set(im, "reader.batch_size_eval", "1", 0,
			"DLIO's default (reader.batch_size_eval absent)");
		return;
	}
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		struct imp_set *e = imp_find(im, keys[k]);
		if (!e)
			continue;
		/* "dataset.num_files_eval: 8" -> the DLIO key and its value */
		char dk[CFG_NAME_MAX], *colon;
		snprintf(dk, sizeof(dk), "%s", e->from);
		if ((colon = strchr(dk, ':')))
			*colon = '\0';
		imp_skip(im, dk, e->value, e->line,
			 im->evaluation == 1
			     ? "num_files_eval is 0 or absent: DLIO does not evaluate"
			     : "workflow.evaluation is not True: DLIO does not "
			       "evaluate (set it, and the INI evaluates too)");
		int i = (int)(e - im->sets);
		memmove(&im->sets[i], &im->sets[i + 1], (size_t)(im->nsets - i - 1) * sizeof(*e));
		im->nsets--;
	}
}

/* Bytes of one DLIO checkpoint tensor of n elements: PyTorch's is int8 (n bytes), TensorFlow's
 * int32 of n / 4 elements (checkpointing/pytorch_checkpointing.py, tf_checkpointing.py). */
static double imp_tensor(const struct imp *im, double n)
{
	bool tf = !im->framework[0] || strcasecmp(im->framework, "tensorflow") == 0;

	return n <= 0 ? 0 : tf ? floor(n / 4) * 4 : n;
}

/* Lists every checkpoint.* key seen as not mapped, for one reason. */
static void imp_ckpt_skip_all(struct imp *im, const char *why)
{
	for (int i = 0; i < im->ck.nkeys; i++)
		imp_skip(im, im->ck.keys[i].dlio, im->ck.keys[i].value, im->ck.keys[i].line, why);
}

static bool imp_ckpt_has(const struct imp *im, const char *dlio)
{
	for (int i = 0; i < im->ck.nkeys; i++)
		if (strcmp(im->ck.keys[i].dlio, dlio) == 0)
			return true;
	return false;
}

static void imp_ckpt_skip(struct imp *im, const char *dlio, const char *why)
{
	for (int i = 0; i < im->ck.nkeys; i++)
		if (strcmp(im->ck.keys[i].dlio, dlio) == 0)
			imp_skip(im, dlio, im->ck.keys[i].value, im->ck.keys[i].line, why);
}

/* DLIO 2.0.0's checkpoints (main.py _train, checkpointing/base_checkpointing.py): with
 * workflow.checkpoint True, after step steps_between_checkpoints, 2x, ... of every epoch when
 * steps_between_checkpoints >= 0, else after epoch checkpoint_after_epoch, then every
 * epochs_between_checkpoints-th; saved synchronously, never read back. Rank 0 (type rank_zero)
 * writes the model tensor, the optimizer state (two tensors per group and one of their sum)
 * and num_layers (+ tensor_parallelism when > 1) layer files of all layer_parameters, each a
 * file of its own; feedbench writes those bytes as one DCP shard of rank 0 (zero_stage 0,
 * tensor and pipeline 1) plus .metadata. */

/* What rank 0 writes per checkpoint, in bytes. */
struct imp_ckpt_bytes {
	double model, opt, osum, per_layer, files, total;
};

/* Whether DLIO writes a checkpoint at all; when not, every checkpoint key is skipped with why. */
static bool imp_ckpt_written(struct imp *im, double epochs)
{
	if (im->ck.enabled != 1 || !im->train) {
		imp_ckpt_skip_all(
		    im, im->ck.enabled != 1
			    ? "workflow.checkpoint is not True: DLIO writes no checkpoint "
			      "(set it, and the INI checkpoints too)"
			    : "a generate-only workflow writes no checkpoint");
		return false;
	}
	if (im->ck.steps_between == 0 ||
	    (im->ck.steps_between < 0 && (im->ck.after_epoch < 1 || im->ck.after_epoch > epochs))) {
		imp_ckpt_skip_all(
		    im, im->ck.steps_between == 0
			    ? "steps_between_checkpoints 0: DLIO writes no checkpoint (its first "
			      "checkpoint step, 0, never comes), and neither does the INI"
			    : "checkpoint_after_epoch outside 1..train.epochs: DLIO writes no "
			      "checkpoint, and neither does the INI");
		return false;
	}
	return true;
}

static struct imp_ckpt_bytes imp_ckpt_size(const struct imp *im)
{
	static const double dlio_layers[] = {17371, 24740228}; /* DLIO's default layer_parameters */
	const double *lp = im->ck.nlayers < 0 ? dlio_layers : im->ck.layers;
	int nlp = im->ck.nlayers < 0 ? 2 : im->ck.nlayers;
	struct imp_ckpt_bytes b = {.model = imp_tensor(im, im->ck.model_size)};

	for (int i = 0; i < (im->ck.nopt < 0 ? 0 : im->ck.nopt); i++)
		if (im->ck.opt[i] > 0) {
			b.opt += 2 * imp_tensor(im, im->ck.opt[i]);
			b.osum += im->ck.opt[i];
		}
	if (im->ck.nopt > 0)
		b.opt += imp_tensor(im, b.osum);
	for (int i = 0; i < nlp; i++)
		b.per_layer += imp_tensor(im, lp[i]);
	if (b.per_layer > 0 && im->ck.num_layers > 0)
		b.files = im->ck.num_layers + (im->ck.tp > 1 ? im->ck.tp : 0);
	b.total = b.model + b.opt + b.files * b.per_layer;
	return b;
}

/* checkpoint.checkpoint_folder (DLIO's default when absent) as [checkpoint] folder, in folder. */
static void imp_ckpt_folder(struct imp *im, char *folder, size_t len)
{
	size_t n;

	snprintf(folder, len, "%s", im->ck.folder[0] ? im->ck.folder : "./checkpoints");
	for (n = strlen(folder); n > 1 && folder[n - 1] == '/';)
		folder[--n] = '\0';
	imp_set(im, "checkpoint.folder", folder, -1, "checkpoint.checkpoint_folder: %s%s",
		im->ck.folder[0] ? im->ck.folder : "./checkpoints/",
		im->ck.folder[0] ? "" : " (DLIO's default)");
}

/* The folder, the bytes and who writes them, the layout and the mode. */
static void imp_ckpt_what(struct imp *im, const struct imp_ckpt_bytes *b)
{
	bool tf = !im->framework[0] || strcasecmp(im->framework, "tensorflow") == 0;
	char v[64], lay[96], folder[CFG_PATH_MAX];

	imp_ckpt_folder(im, folder, sizeof(folder));
	snprintf(v, sizeof(v), "%.0f", b->total);
	if (im->ck.tp > 1)
		snprintf(lay, sizeof(lay), "%.0f + tensor_parallelism %.0f", im->ck.num_layers,
			 im->ck.tp);
	else
		snprintf(lay, sizeof(lay), "%.0f", im->ck.num_layers);
	imp_set(
	    im, "checkpoint.model_size_bytes", v, -1,
	    "the bytes rank 0 writes per checkpoint: model %.0f (checkpoint.model_size%s) + "
	    "optimizer %.0f (optimization_groups: 2 tensors per group and one of their sum, "
	    "3 x %.0f) + %.0f layer files x %.0f (num_layers %s%s; each file holds all of "
	    "layer_parameters%s)%s. DLIO writes them as separate %s files; feedbench writes one "
	    "shard plus .metadata (DCP)",
	    b->model, imp_ckpt_has(im, "checkpoint.model_size") ? "" : ": DLIO's default", b->opt,
	    b->osum, b->files, b->per_layer, lay,
	    imp_ckpt_has(im, "checkpoint.num_layers") ? "" : ": DLIO's default",
	    im->ck.nlayers < 0 ? ": DLIO's default [17371, 24740228]" : "",
	    tf ? "; TensorFlow's tensors are int32 of n / 4 elements" : "",
	    tf ? "TensorFlow checkpoint" : "torch.save .pt");
	imp_set(im, "checkpoint.zero_stage", "0", -1,
		"%s: only rank 0 writes (zero_stage 0, tensor and pipeline parallelism 1)",
		strcmp(im->ck.type, "all_ranks") == 0
		    ? "checkpoint.type: all_ranks (not mapped, see the end)"
		: imp_ckpt_has(im, "checkpoint.type")
		    ? "checkpoint.type: rank_zero"
		    : "checkpoint.type: rank_zero (DLIO's default when absent)");
	imp_set(im, "checkpoint.layout", "dcp", -1, "one shard per writing rank plus .metadata");
	imp_set(im, "checkpoint.mode", "blocking", im->ck.enabled_line,
		"workflow.checkpoint: True: DLIO saves synchronously inside the training loop and "
		"never reads a checkpoint back (nor does feedbench inside training). DLIO's AU "
		"leaves checkpoints out, feedbench's counts the time training waits for them "
		"(docs/dlio.md)");
}

/* When: every steps_between_checkpoints steps, or from an epoch on every so many epochs. */
static void imp_ckpt_when(struct imp *im, double epochs)
{
	char v[64];

	if (im->ck.steps_between > 0) {
		snprintf(v, sizeof(v), "%.0f", im->ck.steps_between);
		imp_set(im, "checkpoint.checkpoint_every_steps", v, -1,
			"checkpoint.steps_between_checkpoints: %s. DLIO counts the steps of each "
			"epoch from 1; feedbench counts over all epochs: the same steps when it "
			"divides the steps per epoch",
			v);
		imp_ckpt_skip(im, "checkpoint.checkpoint_after_epoch",
			      "steps_between_checkpoints is set: DLIO makes no epoch checkpoints "
			      "(main.py _train)");
		imp_ckpt_skip(im, "checkpoint.epochs_between_checkpoints",
			      "steps_between_checkpoints is set: DLIO makes no epoch checkpoints "
			      "(main.py _train)");
		return;
	}
	/* epochs_between < 1: DLIO's next checkpoint epoch never moves on: one checkpoint */
	double every = im->ck.epochs_between >= 1 ? im->ck.epochs_between : epochs;
	snprintf(v, sizeof(v), "%.0f", every);
	imp_set(im, "checkpoint.checkpoint_every_epochs", v, -1,
		"checkpoint.epochs_between_checkpoints: %.0f%s%s", im->ck.epochs_between,
		imp_ckpt_has(im, "checkpoint.epochs_between_checkpoints")
		    ? ""
		    : " (DLIO's default when absent)",
		im->ck.epochs_between >= 1 ? "" : " (below 1: DLIO checkpoints once)");
	snprintf(v, sizeof(v), "%.0f", im->ck.after_epoch);
	imp_set(im, "checkpoint.checkpoint_after_epoch", v, -1,
		"checkpoint.checkpoint_after_epoch: %s%s", v,
		imp_ckpt_has(im, "checkpoint.checkpoint_after_epoch")
		    ? ""
		    : " (DLIO's default when absent)");
}

static void imp_ckpt(struct imp *im)
{
	const struct imp_set *ep = imp_find(im, "train.epochs");
	double epochs = ep ? strtod(ep->value, NULL) : 1;
	struct imp_ckpt_bytes b;

	if (!imp_ckpt_written(im, epochs))
		return;
	b = imp_ckpt_size(im);
	if (b.total <= 0) {
		imp_ckpt_skip_all(im, "the checkpoint has 0 bytes (model_size 0, no optimization "
				      "groups, no layers): nothing to write");
		return;
	}
	imp_ckpt_what(im, &b);
	imp_ckpt_when(im, epochs);
	if (strcmp(im->ck.type, "all_ranks") == 0)
		imp_ckpt_skip(
		    im, "checkpoint.type",
		    "all_ranks: every rank writes a full copy; feedbench splits one "
		    "checkpoint over the ranks: model_size_bytes is one copy, written by "
		    "rank 0; for N ranks set model_size_bytes = N x that and zero_stage = 3 "
		    "(each rank then writes one copy's bytes)");
}

/* The MLPerf Storage preset (mlperf.h) whose model, compute time, batch and AU threshold the
 * YAML's are: its [train] model and accelerator_type, so `feedbench mlperf check` knows the
 * workload (a YAML names no accelerator but in its file name). */
static void imp_preset(struct imp *im)
{
	struct imp_set *name = imp_find(im, "workload.name"),
		       *ct = imp_find(im, "train.computation_time"),
		       *bs = imp_find(im, "reader.batch_size"),
		       *au = imp_find(im, "train.au_threshold");

	if (!name || !ct || !bs || !au)
		return;
	for (size_t i = 0; i < mlperf_npresets; i++) {
		const struct mlperf_preset *p = &mlperf_presets[i];

		if (strcmp(name->value, p->model) != 0 ||
		    strtod(ct->value, NULL) != p->computation_time ||
		    strtoll(bs->value, NULL, 10) != p->batch_size ||
		    strtod(au->value, NULL) != p->au_threshold)
			continue;
		imp_set(im, "train.model", p->model, -1, "model.name: %s", p->model);
		imp_set(im, "train.accelerator_type", p->accelerator, -1,
			"computation_time %s, batch_size %s and metric.au %s are the %s preset's "
			"(mlcommons/storage %s_%s.yaml, docs/mlperf.md)",
			ct->value, bs->value, au->value, p->accelerator, p->model, p->accelerator);
		return;
	}
}

/* A checkpoint-only workflow (workflow.checkpoint True, train False: DLIO writes
 * num_checkpoints_write checkpoints of the model section's LLM, then reads num_checkpoints_read)
 * is feedbench's checkpoint workload with its phases (docs/checkpoint.md). */
static bool imp_ckpt_only(const struct imp *im)
{
	return im->ck.enabled == 1 && !im->train && im->generate_data != 1;
}

static void imp_llm_map(struct imp *im)
{
	const struct imp_llm *l = &im->llm;
	double p = imp_llm_params(l);
	char folder[CFG_PATH_MAX];

	imp_set(im, "workload.type", "checkpoint", im->ck.enabled_line,
		"workflow: checkpoint True, train False: a checkpoint-only workflow (writes, then "
		"reads: [checkpoint] num_checkpoints_write and num_checkpoints_read)");
	imp_ckpt_folder(im, folder, sizeof(folder));
	imp_set(im, "dataset.data_dir", folder, -1,
		"checkpoint.checkpoint_folder: a checkpoint-only workflow reads no dataset");
	for (int i = 0; i < im->ck.nkeys; i++)
		if (strcmp(im->ck.keys[i].dlio, "checkpoint.checkpoint_folder") != 0)
			imp_skip(im, im->ck.keys[i].dlio, im->ck.keys[i].value, im->ck.keys[i].line,
				 "a checkpoint-only workflow sizes its checkpoint from model.*");
	if (p <= 0) {
		imp_set(im, "checkpoint.num_parameters", "0", -1,
			"model.num_layers and model.transformer's sizes are missing: DLIO's "
			"checkpoint has no layers (set [checkpoint] num_parameters)");
		return;
	}
	struct imp_set *keys = calloc(IMP_LLM_SETS, sizeof(*keys));
	int n = keys ? imp_llm_plan(l, keys, IMP_LLM_SETS) : 0;

	for (int i = 0; i < n; i++)
		imp_set(im, keys[i].key, keys[i].value, -1, "%s", keys[i].from);
	free(keys);
}

/* Not a checkpoint-only workflow: the keys kept for one are listed, with why. */
static void imp_llm_skip(struct imp *im)
{
	for (int i = 0; i < im->llm.nkeys; i++) {
		const struct imp_skip *k = &im->llm.keys[i];
		const char *why = imp_reason(k->dlio);
		imp_skip(im, k->dlio, k->value, k->line,
			 strncmp(k->dlio, "model.", 6) == 0 && why
			     ? why
			     : "read by DLIO only in a checkpoint-only workflow (workflow.train "
			       "False, checkpoint True)");
	}
	if (!im->train && im->train_line)
		imp_skip(im, "workflow.train", "False", im->train_line,
			 "a generate-only workflow: run `feedbench generate` on the INI");
}

/* DLIO's prefetch_size is per rank, feedbench's per reader thread: DLIO's PyTorch loader gives
 * each worker ceil(prefetch_size / read_threads) batches (torch_data_loader.py), and so do we. */
static void imp_prefetch(struct imp *im)
{
	struct imp_set *p = imp_find(im, "reader.prefetch_size"),
		       *t = imp_find(im, "reader.read_threads");
	long pf = p ? strtol(p->value, NULL, 10) : 2, th = t ? strtol(t->value, NULL, 10) : 1;
	char v[32], from[sizeof(p->from)];

	if (!p || th <= 1)
		return;
	long per = pf > 0 ? (pf + th - 1) / th : 2; /* 0: DLIO's loader falls back to 2 */
	snprintf(from, sizeof(from), "%s", p->from);
	snprintf(v, sizeof(v), "%ld", per);
	imp_set(im, "reader.prefetch_size", v, p->line ? p->line : -1,
		"%s; ceil(%ld / read_threads %ld) per reader thread, %ld batches in flight", from,
		pf, th, per * th);
}

/* After the walk: format, data folder, generation, and DLIO's defaults where they differ. */
static void imp_finish(struct imp *im)
{
	static const struct {
		const char *key, *value, *dlio;
	} defaults[] = {
	    {"dataset.record_length_bytes", "65536", "dataset.record_length"},
	    {"dataset.num_files_train", "8", "dataset.num_files_train"},
	    {"dataset.num_samples_per_file", "1", "dataset.num_samples_per_file"},
	    {"dataset.seed", "123", "train.seed"},
	    {"reader.batch_size", "1", "reader.batch_size"},
	    {"reader.read_threads", "1", "reader.read_threads"},
	    {"reader.prefetch_size", "2", "reader.prefetch_size"},
	    {"reader.file_shuffle", "off", "reader.file_shuffle"},
	    {"reader.sample_shuffle", "off", "reader.sample_shuffle"},
	    {"train.epochs", "1", "train.epochs"},
	    {"train.computation_time", "0", "train.computation_time"},
	    {"train.au_threshold", "0.90", "metric.au"},
	};
	const char *fmt = im->format[0] ? im->format : "tfrecord";
	bool native = imp_native_format(fmt);
	char dir[CFG_PATH_MAX * 2 + 16], folder[CFG_PATH_MAX];
	size_t n;

	if (imp_ckpt_only(im)) {
		imp_llm_map(im);
		return;
	}
	imp_llm_skip(im);
	snprintf(folder, sizeof(folder), "%s", im->data_folder[0] ? im->data_folder : "./data/");
	for (n = strlen(folder); n > 1 && folder[n - 1] == '/';)
		folder[--n] = '\0';
	if (strcmp(fmt, "parquet") == 0 && im->compression[0] &&
	    (strcmp(im->compression, "none") == 0 || strcmp(im->compression, "snappy") == 0 ||
	     strcmp(im->compression, "zstd") == 0 || strcmp(im->compression, "gzip") == 0))
		imp_set(im, "format.parquet.compression", im->compression, im->compression_line,
			"dataset.compression: %s", im->compression);
	else if (im->compression[0])
		imp_skip(im, "dataset.compression", im->compression, im->compression_line,
			 "feedbench writes uncompressed files (parquet: none, snappy, zstd, gzip)");
	if (native) {
		imp_set(im, "dataset.format", fmt, im->format_line, "dataset.format: %s%s", fmt,
			im->format[0] ? "" : " (DLIO's default)");
	} else {
		imp_set(im, "dataset.format", "raw", im->format_line,
			"dataset.format: %s: not a feedbench format; raw is the closest (samples "
			"back to back, read by offset%s)",
			fmt,
			strstr(fmt, "indexed_binary") ? ", one file read shared by all ranks" : "");
		if (strstr(fmt, "indexed_binary"))
			imp_set(im, "dataset.file_access", "shared", im->format_line,
				"dataset.format: %s: one file read by every rank", fmt);
	}
	/* DLIO reads data_folder/train/; feedbench reads DLIO's files there when it can and DLIO
	 * does not generate them, and writes its own files beside them otherwise. */
	snprintf(dir, sizeof(dir), "%s%s%s/%s", im->storage_root, im->storage_root[0] ? "/" : "",
		 folder, native || im->generate_data == 1 ? "train" : "feedbench");
	imp_set(im, "dataset.data_dir", dir, -1, "dataset.data_folder: %s%s (DLIO reads %s/train/)",
		im->data_folder[0] ? im->data_folder : "./data/",
		im->data_folder[0] ? "" : " (DLIO's default)", folder);
	if (native && im->generate_data != 1)
		imp_set(im, "dataset.generate", "never", -1,
			"workflow.generate_data: %s: read DLIO's files (generate = auto: feedbench "
			"writes its own)",
			im->generate_data == 0 ? "False" : "absent");
	else
		imp_set(im, "dataset.generate", "auto", -1, "%s",
			native ? "workflow.generate_data: True"
			       : "feedbench writes its own files of the mapped format");
	imp_set(im, "dataset.verify", "false", -1,
		"DLIO does not check what it reads (and its files carry no feedbench headers)");
	imp_set(im, "train.step_barrier", "true", -1,
		"DLIO 2.0.0 joins all ranks after every training step (dlio_benchmark/main.py, "
		"_train: self.comm.barrier() after each step's compute)");
	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		imp_set(im, defaults[i].key, defaults[i].value, 0, "DLIO's default (%s absent)",
			defaults[i].dlio);
	imp_prefetch(im);
	imp_eval(im);
	imp_ckpt(im);
	imp_preset(im);
}

int import_dlio_main(int argc, char **argv)
{
	const char *out_path = NULL;
	char why[PATH_MAX + 160];
	struct imp *im;
	yaml_document_t doc;
	int rc;

	im = calloc(1, sizeof(*im));
	if (!im)
		return 1;
	im->generate_data = -1;
	im->evaluation = -1;
	im->train = true;
	/* DLIO 2.0.0's defaults (utils/config.py) */
	im->ck.enabled = -1;
	im->ck.after_epoch = 1;
	im->ck.epochs_between = 1;
	im->ck.steps_between = -1;
	im->ck.model_size = 10240;
	im->ck.num_layers = 1;
	im->ck.tp = 1;
	im->ck.pp = 1;
	im->ck.nopt = -1;
	im->ck.nlayers = -1;
	imp_llm_init(&im->llm);
	snprintf(im->ck.type, sizeof(im->ck.type), "rank_zero");
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			free(im);
			return 0;
		} else if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) &&
			   i + 1 < argc) {
			out_path = argv[++i];
		} else if (argv[i][0] != '-' && !im->path) {
			im->path = argv[i];
		} else {
			fprintf(stderr,
				"feedbench: import-dlio: unexpected argument '%s' (see feedbench "
				"import-dlio --help)\n",
				argv[i]);
			free(im);
			return 2;
		}
	}
	if (!im->path) {
		usage(stderr);
		free(im);
		return 2;
	}
	if (out_path && safe_output_check(out_path, why, sizeof(why)) < 0) {
		fprintf(stderr, "feedbench: import-dlio: %s\n", why);
		free(im);
		return 2;
	}
	if (imp_load(im, &doc) < 0) {
		free(im);
		return 2;
	}
	imp_node(im, &doc, "", yaml_document_get_root_node(&doc));
	yaml_document_delete(&doc);
	imp_finish(im);
	if (im->bad[0]) {
		fprintf(stderr, "feedbench: import-dlio: %s\n", im->bad);
		free(im);
		return 2;
	}
	for (int i = 0; i < im->nskips; i++)
		fprintf(stderr, "feedbench: import-dlio: %s:%d: %s not mapped: %s\n", im->path,
			im->skips[i].line, im->skips[i].dlio, im->skips[i].why);
	rc = imp_output(im, out_path);
	free(im);
	return rc;
}
