/* feedbench configuration: the config struct and the one declarative key table.
 *
 * Every key is one row of cfg_keys[] (config.c): section, name, type, offset into struct
 * config, default written like user input, range or choices, help. The same table drives
 * parsing, defaults, validation, `feedbench keys`, `--set`, the effective config echoed into
 * results, and the config hash.
 */
#ifndef FEEDBENCH_CONFIG_H
#define FEEDBENCH_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../formats/registry.h"
#include "compute/registry.h"
#include "errors.h"
#include "storage/registry.h"

#define CFG_PATH_MAX  1024
#define CFG_NAME_MAX  128
#define CFG_MAX_HINTS 64
#define CFG_MAX_SWEEP 16
#define CFG_HINT_MAX  256

enum cfg_type {
	CFG_BOOL,     /* true/false/yes/no/on/off/1/0 */
	CFG_INT,      /* int64_t, plain integer */
	CFG_SIZE,     /* uint64_t bytes: 4k, 256KiB, 1.5GiB, 1MB (=10^6) */
	CFG_DURATION, /* double seconds: 850us, 2ms, 0.5s, 1m */
	CFG_DOUBLE,   /* double */
	CFG_STRING,   /* char[] (size from the field); choices, when given, restrict it */
	CFG_CHOICE,   /* int index into the row's choices */
	CFG_CHUNK,    /* int64_t: "none" = 0, "sample" = -1, N > 0 samples per chunk */
};

/* Row flags. */
#define CFG_F_DATASET 0x1 /* changes the files on disk: part of the dataset identity */
#define CFG_F_NOHASH  0x2 /* excluded from config_hash (output settings) */
#define CFG_F_AUTO    0x4 /* CFG_INT: "auto" is accepted and stored as 0 (resolved at run time) */

enum { FILE_ACCESS_PER_RANK, FILE_ACCESS_SHARED };
enum { GENERATE_AUTO, GENERATE_ALWAYS, GENERATE_NEVER };
enum { SHUFFLE_OFF, SHUFFLE_SEED, SHUFFLE_RANDOM };
/* [storage] backend: BACKEND_<NAME>, one per back-end of the list in storage/registry.h. */
#define BACKEND_ENUM(name, NAME) BACKEND_##NAME,
enum { FEEDBENCH_BACKENDS(BACKEND_ENUM) BACKEND_COUNT };
#undef BACKEND_ENUM
enum { S3_ADDR_PATH, S3_ADDR_VIRTUAL };
enum { PAGE_CACHE_KEEP, PAGE_CACHE_EVICT, PAGE_CACHE_DROP };
/* [train] accelerator: auto, then ACCEL_<NAME> per plug-in of the list in compute/registry.h. */
#define ACCEL_ENUM(name, NAME) ACCEL_##NAME,
enum { ACCEL_AUTO, FEEDBENCH_ACCELERATORS(ACCEL_ENUM) ACCEL_COUNT };
#undef ACCEL_ENUM
enum { HDF5_TRANSFER_INDEPENDENT, HDF5_TRANSFER_COLLECTIVE };
enum { NPZ_READ_SAMPLE, NPZ_READ_WHOLE };
enum { CKPT_LAYOUT_DCP, CKPT_LAYOUT_SINGLE };
enum { CKPT_MODE_BLOCKING, CKPT_MODE_ASYNC };

struct cfg_hint {
	char key[CFG_NAME_MAX];
	char value[CFG_HINT_MAX];
	int line;
};

struct cfg_sweep_key {
	char key[CFG_NAME_MAX]; /* "section.key" */
	char values[CFG_HINT_MAX * 4];
	int line;
};

/* Rows of the key table (cfg_keys) a config records a line for. */
#define CFG_MAX_KEYS 256

struct config {
	struct {
		char name[CFG_NAME_MAX];
		char description[CFG_PATH_MAX];
		int type; /* index into workload_registry[] (workloads/registry.c) */
	} workload;
	struct {
		char data_dir[CFG_PATH_MAX];
		char format[32];
		int64_t num_files_train;
		int64_t num_samples_per_file;
		int64_t num_files_eval;		   /* evaluation set (DLIO's valid/); 0: none */
		int64_t num_samples_per_file_eval; /* 0: num_samples_per_file */
		uint64_t record_length_bytes;
		uint64_t record_length_bytes_stdev;
		int file_access;
		int generate;
		bool verify;
		bool keep_files;
		int64_t seed;
	} dataset;
	struct {
		int64_t chunking; /* CFG_CHUNK */
		int transfer;
	} hdf5;
	struct {
		bool index;
		char index_dir[CFG_PATH_MAX];
	} tfrecord;
	struct {
		int read;
	} npz;
	struct {
		int64_t shuffle_buffer;
	} wds;
	struct {
		char columns[256]; /* "name:dtype[:size], ..." written; empty: DLIO's default */
		char read_columns[256]; /* names read; empty: all */
		int64_t row_group_size; /* rows */
		uint64_t page_size;	/* bytes of values per data page written */
		int compression;	/* none, snappy, zstd, gzip */
	} parquet;
	struct {
		bool decode;	 /* jpeg, png: decode every sample (DLIO's PIL reader) */
		int64_t quality; /* jpeg: encoding quality of generated images */
	} image;
	struct {
		int64_t version;       /* 2 or 3 */
		int64_t chunk_samples; /* samples a chunk */
		int64_t shard_chunks;  /* chunks a shard file (v3), 0: no sharding */
		int codec;	       /* none, blosc, zstd, gzip */
		bool crc32c;	       /* v3 crc32c codec */
	} zarr;
	struct {
		int backend;
		bool direct;
		int page_cache;
		uint64_t transfer_size;
		int64_t io_depth; /* reads in flight per reader thread (uring) */
		int64_t stripe_count;
		uint64_t stripe_size;
		int64_t stripe_offset;
		uint64_t object_size;	 /* CephFS layouts */
		char stripe_layout[256]; /* Lustre composite: "2GiB:1, 4GiB:4, eof:16" */
	} storage;
	struct {
		bool collective;
		int nhints;
		struct cfg_hint hints[CFG_MAX_HINTS]; /* every other key of [storage.mpiio] */
	} mpiio;
	struct {
		char fail_op[16];     /* faulty backend: read, write, fsync, close, open */
		int64_t fail_rank;    /* -1 = every rank */
		int64_t fail_nth;     /* fail the Nth call of fail_op (1-based); 0 = never */
		char fail_errno[16];  /* EIO, ENOSPC, ... */
		bool short_reads;     /* return at most half of each request */
		bool eintr;	      /* return EINTR once every other call */
		char inner[16];	      /* posix */
		double read_slowdown; /* reads deliver this fraction less (0.2: 1.25x the time) */
		double read_latency;  /* s: every read takes at least this long (emulated device) */
		bool shared_device;   /* read_latency serialised over the ranks of a node */
		double write_latency; /* s: every write takes at least this long */
		double latency_halving; /* s: read_latency halves every this long; 0: fixed */
		int64_t slow_rank;	/* this rank's latencies are twice the others'; -1: none */
	} faulty;
	struct {
		char endpoint[256]; /* http(s)://host[:port]; empty: AWS's for the region */
		char region[64];    /* empty: AWS_REGION, the profile's, us-east-1 */
		char bucket[64];    /* empty: data_dir = s3://bucket/prefix */
		int addressing;	    /* path, virtual */
		bool verify_tls;
		int64_t connections;	/* per reader thread (queued reads) */
		double request_timeout; /* s: connect, and without a byte */
		int64_t retries;	/* on 429, 500, 502, 503, 504 */
		uint64_t part_size;	/* multipart part; one PUT below it */
		int64_t list_page_size; /* keys per ListObjectsV2 page (max-keys) */
		char profile[64];	/* empty: AWS_PROFILE or default */
	} s3;
	struct {
		uint64_t block_size;	/* bytes each rank writes per segment */
		uint64_t transfer_size; /* bytes per write or read call */
		int64_t segments;
		bool file_per_process;
		bool random;  /* transfers of a block in a seeded random order */
		bool reorder; /* read back what another rank wrote (IOR -C) */
		bool fsync;   /* fsync before close after writing (IOR -e) */
		bool write, read;
		bool verify;		 /* check every byte read against the pattern written */
		bool keep_files;	 /* leave the test files in data_dir */
		double stonewall;	 /* s: the write phase stops after this long; 0: never */
		bool stonewall_wear_out; /* then every rank writes as much as the one that wrote
					    most */
	} ior;
	struct {
		int64_t files_per_rank;
		uint64_t file_size; /* bytes written at create, read back by open-read-close */
		bool shared_dir;    /* one folder for all ranks instead of one per rank */
		bool keep_files;
	} metadata;
	struct {
		int64_t batch_size;
		int64_t batch_size_eval; /* 0: batch_size */
		int64_t read_threads;	 /* 0: auto (from the rank's CPUs, bench/cpus.h) */
		int64_t prefetch_size;
		uint64_t prefetch_bytes; /* ring of batch buffers by bytes; 0: threads x prefetch */
		int file_shuffle;
		int sample_shuffle;
		bool drop_last;
		double preprocess_time; /* s of CPU per sample after its read (DLIO's) */
		int64_t shuffle_seed;	/* seed of the shuffles; 0: [dataset] seed */
	} reader;
	struct {
		int64_t epochs;
		double computation_time;
		double computation_time_stdev;
		double host_time; /* s of trainer CPU per step before compute, lost time */
		int accelerator;
		bool pin_memory;
		bool emulate_copy;
		bool step_barrier;
		int64_t exclude_start_steps;
		int64_t accelerators_per_rank; /* emulated accelerators (loaders) per rank */
		double au_threshold;
		double watchdog;
		int model;	      /* MLPerf Storage workload (MLPERF_MODELS), 0: none */
		int accelerator_type; /* emulated accelerator (MLPERF_ACCELERATORS), 0: none */
		double time_limit;    /* seconds; 0: none (bench/live.h) */
		bool steady_state;    /* stop once the last K intervals agree */
		int64_t steady_state_intervals; /* K */
		double steady_state_percent;	/* within this % of their mean */
	} train;
	struct {
		double eval_time; /* emulated compute per evaluation step */
		double eval_time_stdev;
		int64_t eval_after_epoch;     /* first evaluation after this epoch (1-based) */
		int64_t epochs_between_evals; /* then after every N-th epoch */
	} evaluation;
	struct {
		uint64_t model_size_bytes; /* whole checkpoint; 0: from num_parameters */
		int64_t num_parameters;
		double bytes_per_param_model;	  /* weights (bf16: 2) */
		double bytes_per_param_optimizer; /* Adam: fp32 master, momentum, variance: 12 */
		double bytes_per_param_gradients; /* usually not saved: 0 */
		double scale;			  /* fraction of the size written (scaled down) */
		int64_t tensor_parallelism;
		int64_t pipeline_parallelism;
		int64_t zero_stage; /* 0: replicas write nothing; 1-3: ZeRO sharding */
		int layout;	    /* CKPT_LAYOUT_* */
		char folder[CFG_PATH_MAX];
		int64_t count;		/* checkpoints per repetition (type = checkpoint) */
		uint64_t transfer_size; /* bytes per write and read call */
		bool save;		/* false: restore checkpoints already on disk */
		bool restore;		/* read back after each checkpoint */
		bool verify;		/* compare what is read back byte for byte */
		int64_t keep_last;	/* checkpoints kept on disk; 0: all */
		int64_t every_epochs;	/* inside training (type = train): 0 never */
		int64_t after_epoch;	/* the first checkpoint epoch (1-based); 0: every_epochs */
		int64_t every_steps;	/* inside training, every N global steps: 0 never */
		int mode;		/* CKPT_MODE_* (inside training) */
		/* MLPerf Storage's write and read phases (docs/checkpoint.md): -1 both: off */
		int64_t num_write;	  /* checkpoints written first; 0: a read-only invocation */
		int64_t num_read;	  /* then read back after a flush; 0: write-only */
		bool recovery_rank_shift; /* rank r reads the shard of r + ranks per host */
		int64_t data_parallelism; /* subset: the full geometry's replicas; 0: ranks/mp */
		uint64_t client_memory_bytes; /* the flush rule's RAM per host; 0: MemTotal */
	} checkpoint;
	struct {
		char dir[CFG_PATH_MAX];
		char name[CFG_NAME_MAX];
		int64_t repetitions;
		bool plots;
		bool trace;	      /* per-operation trace.pfw (bench/trace.h) */
		double live_interval; /* seconds between live lines; 0: off (bench/live.h) */
	} output;
	struct {
		int nkeys;
		struct cfg_sweep_key keys[CFG_MAX_SWEEP];
		int optimise; /* SWEEP_OPT_* */
		char zip[CFG_HINT_MAX *
			 2]; /* swept keys walked together: "format, num_files_train" */
	} sweep;

	/* Where each value came from, by row of cfg_keys: line in the file (0 = default, -1 =
	 * --set). config_keys.c checks at compile time that every row has one. */
	int lines[CFG_MAX_KEYS];
	char source[CFG_PATH_MAX]; /* file name for messages */
};

enum { SWEEP_OPT_BANDWIDTH, SWEEP_OPT_AU, SWEEP_OPT_SAMPLES };

struct cfg_key {
	const char *section;
	const char *name;
	enum cfg_type type;
	size_t offset;
	const char *def;
	double min, max;	    /* inclusive range for numbers (min > max: unchecked) */
	const char *const *choices; /* NULL-terminated for CFG_CHOICE */
	unsigned flags;
	const char *help;
	size_t size; /* CFG_STRING: capacity of the field */
};

extern const struct cfg_key cfg_keys[];
extern const size_t cfg_nkeys;

/* DLIO's name for a feedbench key where the two differ ("dataset.record_length" for
 * "dataset.record_length_bytes"); keys of the same section and name are the same concept and
 * are not listed. `feedbench import-dlio` maps with it; a DLIO name typed into an INI config
 * gets feedbench's as its "did you mean". CFG_ALIAS_HINT rows only suggest (the concept is
 * close, the value does not carry over). */
#define CFG_ALIAS_HINT 0x1
struct cfg_alias {
	const char *dlio; /* "section.key" as DLIO's workload YAML spells it */
	const char *key;  /* "section.key" of the key table */
	unsigned flags;
};
extern const struct cfg_alias cfg_dlio_aliases[]; /* ends with a NULL dlio */

/* Sets every key to its default. */
void cfg_defaults(struct config *cfg);

/* Parses INI text (from a file named `source`) on top of the current values.
 * Errors name source:line and return -FB_ECONFIG with the message in err. */
int cfg_parse_text(struct config *cfg, const char *text, size_t len, const char *source,
		   struct fb_errbuf *err);

/* Applies "section.key=value" (a --set). */
int cfg_set(struct config *cfg, const char *assignment, struct fb_errbuf *err);

/* 0 when value can be written as a config line's value and read back unchanged; otherwise
 * -FB_EUSAGE and why not (a phrase) in why: a line break, a leading ';', or ' ;' (an INI
 * comment). --set and import-dlio share this rule. */
/* The longest line a config file may hold (a longer one is refused when read). */
#define CFG_LINE_MAX 199
int cfg_value_check(const char *value, char *why, size_t len);

/* Checks combinations that cannot be honoured (batch larger than a rank's samples, ...).
 * nranks: the number of ranks the run will use. */
int cfg_validate(const struct config *cfg, int nranks, struct fb_errbuf *err);
/* The checks of a workload that reads a dataset ([dataset], [format.*], [reader], [train]):
 * for the check hooks of such workloads (workloads/workload.h). */
int cfg_validate_dataset(const struct config *cfg, int nranks, struct fb_errbuf *err);
/* [storage.mpiio] collective = true needs a back-end whose ops move collective transfers
 * (storage_has_collective), looking through a back-end that wraps another (faulty's inner):
 * refused naming the key's file and line and the back-ends that have them. */
int cfg_check_collective(const struct config *cfg, struct fb_errbuf *err);

/* Key lookup: "section.key" or section + name. NULL when unknown. */
const struct cfg_key *cfg_find(const char *section, const char *name);
const struct cfg_key *cfg_find_dotted(const char *dotted);

/* Case-insensitive Levenshtein distance (99 for names of 63 characters or more). */
size_t cfg_edit_distance(const char *a, const char *b);
/* Closest known key name for "did you mean" (NULL when nothing is close). */
const struct cfg_key *cfg_suggest(const char *section, const char *name);

/* Formats one key's current value into buf (like user input: sizes in bytes, durations in s). */
void cfg_format_value(const struct config *cfg, const struct cfg_key *k, char *buf, size_t len);

/* Writes the effective config as INI (every key; [storage.mpiio] hints; [sweep]). */
void cfg_write_ini(const struct config *cfg, FILE *out);

/* Writes `feedbench keys` Markdown. */
void cfg_write_keys_markdown(FILE *out);

/* sha256 hex of the effective config with [output] and [sweep] excluded. */
void cfg_hash(const struct config *cfg, char hex[65]);
/* sha256 hex of the keys flagged CFG_F_DATASET: the dataset identity. */
void cfg_dataset_hash(const struct config *cfg, char hex[65]);
/* First 8 bytes of cfg_dataset_hash as an integer, stored in sample headers. */
uint64_t cfg_dataset_id(const struct config *cfg);

/* Unit parsers (exposed for tests). Return 0 or -FB_ECONFIG with a reason in why. */
int cfg_parse_size(const char *text, uint64_t *out, char *why, size_t whylen);
int cfg_parse_duration(const char *text, double *out, char *why, size_t whylen);
int cfg_parse_int(const char *text, int64_t *out, char *why, size_t whylen);
int cfg_parse_bool(const char *text, bool *out, char *why, size_t whylen);

/* Reads a whole file into memory (NUL-terminated); for rank 0 before broadcasting. */
int cfg_read_file(const char *path, char **text, size_t *len, struct fb_errbuf *err);

/* Name of the current choice of a CFG_CHOICE key, e.g. cfg_choice_name("storage", "backend",
 * cfg->storage.backend) -> "posix". */
const char *cfg_choice_name(const char *section, const char *name, int value);

#endif
