/* The key table: one row per config key. Adding a key means adding one row here and one field
 * in struct config; parsing, defaults, validation, `feedbench keys`, --set and the effective
 * config all follow from the row.
 */
#include "config.h"

#include <float.h>

#include "mlperf.h"		   /* MLPERF_MODELS, MLPERF_ACCELERATORS */
#include "../workloads/workload.h" /* workload_choices: one per registered workload */

/* Rows give .size only for strings; the other rows leave it zero on purpose. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define OFF(field) offsetof(struct config, field)
#define NOLIM	   1, 0 /* min > max: unchecked */
#define SZ(field)  .size = sizeof(((struct config *)0)->field)

static const char *const file_access_choices[] = {"per_rank", "shared", NULL};
static const char *const generate_choices[] = {"auto", "always", "never", NULL};
static const char *const shuffle_choices[] = {"off", "seed", "random", NULL};
/* The plug-in choices come from the registries' lists (storage/registry.h, compute/registry.h,
 * formats/registry.h), like the workload choices: one list per kind. */
#define PLUGIN_NAME(name, ...) #name,
static const char *const backend_choices[] = {FEEDBENCH_BACKENDS(PLUGIN_NAME) NULL};
static const char *const s3_addressing_choices[] = {"path", "virtual", NULL};
static const char *const page_cache_choices[] = {"keep", "evict", "drop", NULL};
static const char *const accel_choices[] = {"auto", FEEDBENCH_ACCELERATORS(PLUGIN_NAME) NULL};
static const char *const transfer_choices[] = {"independent", "collective", NULL};
static const char *const npz_read_choices[] = {"sample", "whole", NULL};
static const char *const optimise_choices[] = {"bandwidth", "au", "samples_per_s", NULL};
static const char *const ckpt_layout_choices[] = {"dcp", "single", NULL};
static const char *const ckpt_mode_choices[] = {"blocking", "async", NULL};
static const char *const format_choices[] = {FEEDBENCH_FORMATS(PLUGIN_NAME) NULL};
#undef PLUGIN_NAME
static const char *const zarr_codec_choices[] = {"none", "blosc", "zstd", "gzip", NULL};
static const char *const parquet_codec_choices[] = {"none", "snappy", "zstd", "gzip", NULL};
static const char *const mlperf_model_choices[] = {"none", MLPERF_MODELS(MLPERF_NAME) NULL};
static const char *const mlperf_accel_choices[] = {"none", MLPERF_ACCELERATORS(MLPERF_NAME) NULL};

#define D CFG_F_DATASET
#define N CFG_F_NOHASH

const struct cfg_key cfg_keys[] = {
    {"workload", "name", CFG_STRING, OFF(workload.name), "feedbench", NOLIM, NULL, 0,
     "Name of the workload; names the run folder.", SZ(workload.name)},
    {"workload", "description", CFG_STRING, OFF(workload.description), "", NOLIM, NULL, N,
     "Free text recorded in summary.json.", SZ(workload.description)},
    {"workload", "type", CFG_CHOICE, OFF(workload.type), "train", NOLIM, workload_choices, 0,
     "What the run does: train (training reads, DLIO-like); the other types are listed by "
     "`feedbench list`."},

    {"dataset", "data_dir", CFG_STRING, OFF(dataset.data_dir), "data/feedbench", NOLIM, NULL, 0,
     "Folder holding the dataset (created when generating).", SZ(dataset.data_dir)},
    {"dataset", "format", CFG_STRING, OFF(dataset.format), "raw", NOLIM, format_choices, D,
     "File format of the dataset.", SZ(dataset.format)},
    {"dataset", "num_files_train", CFG_INT, OFF(dataset.num_files_train), "8", 1, 1e9, NULL, D,
     "Number of files (for npy: files = num_files_train x num_samples_per_file)."},
    {"dataset", "num_samples_per_file", CFG_INT, OFF(dataset.num_samples_per_file), "64", 1, 4e9,
     NULL, D, "Samples in each file."},
    {"dataset", "num_files_eval", CFG_INT, OFF(dataset.num_files_eval), "0", 0, 1e9, NULL, 0,
     "Files of the evaluation set, read after training epochs as [evaluation] says (beside a "
     "data_dir named train/: in valid/, as DLIO keeps them; else in <data_dir>-valid/). 0: no "
     "evaluation."},
    {"dataset", "num_samples_per_file_eval", CFG_INT, OFF(dataset.num_samples_per_file_eval), "0",
     0, 4e9, NULL, 0, "Samples in each evaluation file; 0: num_samples_per_file."},
    {"dataset", "record_length_bytes", CFG_SIZE, OFF(dataset.record_length_bytes), "256KiB", 64,
     4294967295.0, NULL, D, "Mean sample size (sample header included; at least 64 bytes)."},
    {"dataset", "record_length_bytes_stdev", CFG_SIZE, OFF(dataset.record_length_bytes_stdev), "0",
     0, 4294967295.0, NULL, D,
     "Standard deviation of sample sizes (deterministic per sample from the seed)."},
    {"dataset", "file_access", CFG_CHOICE, OFF(dataset.file_access), "per_rank", NOLIM,
     file_access_choices, D,
     "per_rank: each rank owns whole files; shared: ranks read disjoint samples of the same "
     "files."},
    {"dataset", "generate", CFG_CHOICE, OFF(dataset.generate), "auto", NOLIM, generate_choices, 0,
     "auto: generate when the manifest is missing or does not match; never: use what is there."},
    {"dataset", "verify", CFG_BOOL, OFF(dataset.verify), "true", NOLIM, NULL, 0,
     "Poison each read buffer, then check sample headers and CRC32C after reading."},
    {"dataset", "keep_files", CFG_BOOL, OFF(dataset.keep_files), "true", NOLIM, NULL, 0,
     "Keep the dataset after the run (false: delete it at the end)."},
    {"dataset", "seed", CFG_INT, OFF(dataset.seed), "42", 0, 9.2e18, NULL, D,
     "Seed for sizes, payloads and shuffles."},

    {"format.hdf5", "chunking", CFG_CHUNK, OFF(hdf5.chunking), "none", NOLIM, NULL, D,
     "none (contiguous), sample (one sample per chunk) or N samples per chunk."},
    {"format.hdf5", "transfer", CFG_CHOICE, OFF(hdf5.transfer), "independent", NOLIM,
     transfer_choices, 0, "MPI-IO transfer mode for shared HDF5 files."},
    {"format.tfrecord", "index", CFG_BOOL, OFF(tfrecord.index), "true", NOLIM, NULL, D,
     "Write and use a DALI-style index file per TFRecord (false: scan sequentially)."},
    {"format.tfrecord", "index_dir", CFG_STRING, OFF(tfrecord.index_dir), "", NOLIM, NULL, 0,
     "Folder of the index files (<name>.idx); empty: beside each file, or where DLIO keeps "
     "them (<data_dir>/../index/<data_dir's name>/).",
     SZ(tfrecord.index_dir)},
    {"format.npz", "read", CFG_CHOICE, OFF(npz.read), "sample", NOLIM, npz_read_choices, 0,
     "sample: read each sample's byte range; whole: read the whole file per access (numpy.load)."},
    {"format.image", "decode", CFG_BOOL, OFF(image.decode), "true", NOLIM, NULL, 0,
     "jpeg, png: decode every sample on the reader threads, as DLIO's PIL reader does (the "
     "decode time is reported apart from the read); false: read the file's bytes only."},
    {"format.image", "quality", CFG_INT, OFF(image.quality), "75", 1, 100, NULL, D,
     "jpeg: the quality generated images are encoded at (75: PIL's default, which DLIO "
     "uses)."},
    {"format.wds", "shuffle_buffer", CFG_INT, OFF(wds.shuffle_buffer), "64", 1, 1e9, NULL, 0,
     "Samples held in the shuffle buffer when sample_shuffle is on."},
    {"format.parquet", "columns", CFG_STRING, OFF(parquet.columns), "", NOLIM, NULL, D,
     "Columns written, as DLIO's parquet.columns: \"name:dtype:size, ...\" (dtype uint8 ... "
     "int64, float16, float32, float64: size values per sample, a LIST when above 1; binary: the "
     "bytes the other columns leave). They must add up to record_length_bytes. Empty: one "
     "column data:uint8:<record_length_bytes> (data:binary when sizes vary), DLIO's default.",
     SZ(parquet.columns)},
    {"format.parquet", "read_columns", CFG_STRING, OFF(parquet.read_columns), "", NOLIM, NULL, 0,
     "Names of the columns read (comma separated); the others are not read. Empty: all. A "
     "subset cannot be verified.",
     SZ(parquet.read_columns)},
    {"format.parquet", "row_group_size", CFG_INT, OFF(parquet.row_group_size), "1024", 1, 1e9, NULL,
     D, "Rows (samples) per row group written (DLIO's parquet.row_group_size)."},
    {"format.parquet", "page_size", CFG_SIZE, OFF(parquet.page_size), "1MiB", 1, 1073741824.0, NULL,
     D, "Bytes of values per data page written (pyarrow's data_page_size)."},
    {"format.parquet", "compression", CFG_CHOICE, OFF(parquet.compression), "none", NOLIM,
     parquet_codec_choices, D,
     "Compression of the pages written: none (DLIO's default), snappy (pyarrow's), zstd, gzip."},
    {"format.zarr", "version", CFG_INT, OFF(zarr.version), "3", 2, 3, NULL, D,
     "Zarr format version written: 2 (.zarray, chunks i.0) or 3 (zarr.json, chunks c/i/0)."},
    {"format.zarr", "chunk_samples", CFG_INT, OFF(zarr.chunk_samples), "1", 1, 1e9, NULL, D,
     "Samples in a chunk (the chunk shape along the sample axis)."},
    {"format.zarr", "shard_chunks", CFG_INT, OFF(zarr.shard_chunks), "0", 0, 1e9, NULL, D,
     "Version 3: chunks in one shard file (sharding_indexed codec); 0: one file per chunk."},
    {"format.zarr", "codec", CFG_CHOICE, OFF(zarr.codec), "none", NOLIM, zarr_codec_choices, D,
     "Compressor of each chunk: none, blosc (lz4, byte shuffle), zstd, gzip."},
    {"format.zarr", "crc32c", CFG_BOOL, OFF(zarr.crc32c), "false", NOLIM, NULL, D,
     "Version 3: a CRC32C after each chunk (crc32c codec), checked on every read."},

    {"storage", "backend", CFG_CHOICE, OFF(storage.backend), "posix", NOLIM, backend_choices, 0,
     "I/O back-end: posix, mpiio (MPI-IO), null (no I/O, tests the harness), faulty (tests), "
     "uring (io_uring: io_depth reads in flight per reader thread), s3 (object storage: "
     "[storage.s3])."},
    {"storage", "direct", CFG_BOOL, OFF(storage.direct), "false", NOLIM, NULL, 0,
     "O_DIRECT reads (aligned buffers; bypasses the page cache)."},
    {"storage", "page_cache", CFG_CHOICE, OFF(storage.page_cache), "keep", NOLIM,
     page_cache_choices, 0,
     "keep; evict: posix_fadvise(DONTNEED) on every file before each epoch; drop: "
     "/proc/sys/vm/drop_caches before each epoch (root)."},
    {"storage", "transfer_size", CFG_SIZE, OFF(storage.transfer_size), "0", 0, 1099511627776.0,
     NULL, 0, "Bytes per read call (0: a whole sample per call)."},
    {"storage", "io_depth", CFG_INT, OFF(storage.io_depth), "1", 1, 4096, NULL, 0,
     "Reads each reader thread keeps in flight (backend = uring; raw format: a batch's samples "
     "are queued together; other formats read one at a time)."},
    {"storage", "stripe_count", CFG_INT, OFF(storage.stripe_count), "0", -1, 65535, NULL, D,
     "Stripe count (Lustre OSTs, CephFS objects): 0 file-system default, -1 all targets "
     "(Lustre), N."},
    {"storage", "stripe_size", CFG_SIZE, OFF(storage.stripe_size), "0", 0, 4294967296.0, NULL, D,
     "Stripe size, CephFS stripe_unit (multiple of 64 KiB; 0 default)."},
    {"storage", "stripe_offset", CFG_INT, OFF(storage.stripe_offset), "-1", -1, 65535, NULL, D,
     "First Lustre target (-1: any)."},
    {"storage", "object_size", CFG_SIZE, OFF(storage.object_size), "0", 0, 1099511627776.0, NULL, D,
     "CephFS object size (multiple of stripe_size and of 64 KiB; 0 default). Ignored "
     "elsewhere."},
    {"storage", "stripe_layout", CFG_STRING, OFF(storage.stripe_layout), "", NOLIM, NULL, D,
     "Lustre composite (progressive) layout, components END:COUNT[:SIZE] in increasing "
     "order, the last ending at eof: \"2GiB:1, 4GiB:4, eof:16\". Empty: none.",
     SZ(storage.stripe_layout)},

    {"storage.mpiio", "collective", CFG_BOOL, OFF(mpiio.collective), "false", NOLIM, NULL, 0,
     "Collective reads (MPI_File_read_all per batch, on the main thread). Every other key of "
     "[storage.mpiio] is passed verbatim as an MPI-IO hint."},

    {"storage.faulty", "fail_op", CFG_STRING, OFF(faulty.fail_op), "read", NOLIM, NULL, N,
     "Tests: operation to fail (open, read, write, fsync, close, mkdir, unlink, rmdir, "
     "sync_dir, list_dir, rename).",
     SZ(faulty.fail_op)},
    {"storage.faulty", "fail_rank", CFG_INT, OFF(faulty.fail_rank), "-1", -1, 1e9, NULL, N,
     "Tests: rank that fails (-1 every rank)."},
    {"storage.faulty", "fail_nth", CFG_INT, OFF(faulty.fail_nth), "0", 0, 1e15, NULL, N,
     "Tests: fail the Nth call of fail_op (0 never)."},
    {"storage.faulty", "fail_errno", CFG_STRING, OFF(faulty.fail_errno), "EIO", NOLIM, NULL, N,
     "Tests: error returned (EIO, ENOSPC, ...).", SZ(faulty.fail_errno)},
    {"storage.faulty", "short_reads", CFG_BOOL, OFF(faulty.short_reads), "false", NOLIM, NULL, N,
     "Tests: every read returns at most half of what was asked."},
    {"storage.faulty", "eintr", CFG_BOOL, OFF(faulty.eintr), "false", NOLIM, NULL, N,
     "Tests: every other call fails with EINTR."},
    {"storage.faulty", "inner", CFG_STRING, OFF(faulty.inner), "posix", NOLIM, NULL, N,
     "Tests: back-end wrapped by the faulty one.", SZ(faulty.inner)},
    {"storage.faulty", "read_slowdown", CFG_DOUBLE, OFF(faulty.read_slowdown), "0", 0, 0.95, NULL,
     N,
     "Tests: the rank's reads pause so that its storage is this fraction slower (0.2: busy "
     "time x 1.25); proves that compare detects a known slowdown."},
    {"storage.faulty", "read_latency", CFG_DURATION, OFF(faulty.read_latency), "0", 0, 10, NULL, N,
     "Tests: every read call takes at least this long, an emulated device's service time: runs "
     "on memory-backed folders become storage-bound and steady."},
    {"storage.faulty", "shared_device", CFG_BOOL, OFF(faulty.shared_device), "false", NOLIM, NULL,
     N,
     "Tests: the reads of all ranks of a node queue for one emulated device (a lock file beside "
     "data_dir), each holding it read_latency: a fixed capacity of 1/read_latency reads/s per "
     "node, what feedbench search needs to find a known answer."},
    {"storage.faulty", "write_latency", CFG_DURATION, OFF(faulty.write_latency), "0", 0, 10, NULL,
     N, "Tests: every write call takes at least this long (an emulated device's service time)."},
    {"storage.faulty", "latency_halving", CFG_DURATION, OFF(faulty.latency_halving), "0", 0, 3600,
     NULL, N,
     "Tests: read_latency halves every this long from the rank's first read (a device warming "
     "up: a run that never reaches a steady state). 0: fixed."},
    {"storage.faulty", "slow_rank", CFG_INT, OFF(faulty.slow_rank), "-1", -1, 1e9, NULL, N,
     "Tests: this rank's read_latency and write_latency are twice the others' (a straggler). "
     "-1: none."},

    {"storage.s3", "endpoint", CFG_STRING, OFF(s3.endpoint), "", NOLIM, NULL, 0,
     "S3 endpoint, http(s)://host[:port] (radosgw, MinIO, moto); empty: "
     "https://s3.REGION.amazonaws.com.",
     SZ(s3.endpoint)},
    {"storage.s3", "region", CFG_STRING, OFF(s3.region), "", NOLIM, NULL, 0,
     "Region signed into every request; empty: AWS_REGION, AWS_DEFAULT_REGION, the profile's "
     "region, us-east-1.",
     SZ(s3.region)},
    {"storage.s3", "bucket", CFG_STRING, OFF(s3.bucket), "", NOLIM, NULL, 0,
     "Bucket of paths that do not name one; empty: data_dir names it (s3://bucket/prefix).",
     SZ(s3.bucket)},
    {"storage.s3", "addressing", CFG_CHOICE, OFF(s3.addressing), "path", NOLIM,
     s3_addressing_choices, 0,
     "path: ENDPOINT/bucket/key (radosgw, MinIO, moto); virtual: bucket.HOST/key (AWS)."},
    {"storage.s3", "verify_tls", CFG_BOOL, OFF(s3.verify_tls), "true", NOLIM, NULL, 0,
     "Check the server's TLS certificate and name; false only for a test server (recorded in "
     "summary.json)."},
    {"storage.s3", "connections", CFG_INT, OFF(s3.connections), "8", 1, 1024, NULL, 0,
     "Connections each reader thread keeps open to the endpoint for queued reads (io_depth "
     "GETs in flight share them)."},
    {"storage.s3", "request_timeout", CFG_DURATION, OFF(s3.request_timeout), "30", 0.1, 3600, NULL,
     0, "A request that cannot connect, or receives no byte, for this long fails (no hang)."},
    {"storage.s3", "retries", CFG_INT, OFF(s3.retries), "4", 0, 100, NULL, 0,
     "Retries of a request answered 429, 500, 502, 503 (SlowDown) or 504, or whose connection "
     "failed, after an exponential backoff (or the server's Retry-After)."},
    {"storage.s3", "part_size", CFG_SIZE, OFF(s3.part_size), "8MiB", 5242880.0, 5368709120.0, NULL,
     0,
     "Objects written above this size go up as a multipart upload of parts this size; below "
     "it, one PUT."},
    {"storage.s3", "list_page_size", CFG_INT, OFF(s3.list_page_size), "1000", 1, 1000, NULL, 0,
     "Keys asked for per ListObjectsV2 page (max-keys): a folder of more keys is listed over "
     "several pages, each asking for the next with the last page's continuation token."},
    {"storage.s3", "profile", CFG_STRING, OFF(s3.profile), "", NOLIM, NULL, 0,
     "Profile of the AWS shared credentials and config files; empty: AWS_PROFILE, default.",
     SZ(s3.profile)},

    {"ior", "block_size", CFG_SIZE, OFF(ior.block_size), "1MiB", 1, 1099511627776.0, NULL, 0,
     "[workload] type = ior: bytes each rank writes per segment (IOR -b)."},
    {"ior", "transfer_size", CFG_SIZE, OFF(ior.transfer_size), "256KiB", 1, 4294967296.0, NULL, 0,
     "type = ior: bytes per write or read call (IOR -t); divides block_size."},
    {"ior", "segments", CFG_INT, OFF(ior.segments), "1", 1, 1e9, NULL, 0,
     "type = ior: segments (IOR -s): each holds one block of every rank."},
    {"ior", "file_per_process", CFG_BOOL, OFF(ior.file_per_process), "false", NOLIM, NULL, 0,
     "type = ior: one file per rank (IOR -F) instead of one shared file."},
    {"ior", "random", CFG_BOOL, OFF(ior.random), "false", NOLIM, NULL, 0,
     "type = ior: the transfers of each block in a seeded random order (IOR -z)."},
    {"ior", "reorder", CFG_BOOL, OFF(ior.reorder), "true", NOLIM, NULL, 0,
     "type = ior: read back what the rank one node over wrote (IOR -C), so its own page "
     "cache cannot answer; on one node, the next rank's."},
    {"ior", "fsync", CFG_BOOL, OFF(ior.fsync), "true", NOLIM, NULL, 0,
     "type = ior: fsync each file after writing, inside the timed write (IOR -e)."},
    {"ior", "write", CFG_BOOL, OFF(ior.write), "true", NOLIM, NULL, 0,
     "type = ior: write phase (IOR -w)."},
    {"ior", "read", CFG_BOOL, OFF(ior.read), "true", NOLIM, NULL, 0,
     "type = ior: read phase (IOR -r), of the files the write phase made."},
    {"ior", "verify", CFG_BOOL, OFF(ior.verify), "true", NOLIM, NULL, 0,
     "type = ior: check every byte read against the pattern written (after the timing)."},
    {"ior", "keep_files", CFG_BOOL, OFF(ior.keep_files), "false", NOLIM, NULL, N,
     "type = ior: keep the test files in data_dir after the run (IOR -k)."},
    {"ior", "stonewall", CFG_DURATION, OFF(ior.stonewall), "0", 0, 1e9, NULL, 0,
     "Each rank stops writing after this long in the write phase (IOR -D, IO500's 300 s), and "
     "the read phase reads back what was written. 0: write everything."},
    {"ior", "stonewall_wear_out", CFG_BOOL, OFF(ior.stonewall_wear_out), "true", NOLIM, NULL, 0,
     "After the stonewall the ranks agree on the most transfers any rank made and every rank "
     "writes up to that many (IOR -O stoneWallingWearOut=1), so every rank wrote the same bytes; "
     "false: each keeps what it wrote by the stonewall and reads back the fewest any rank "
     "wrote."},
    {"metadata", "files_per_rank", CFG_INT, OFF(metadata.files_per_rank), "1000", 1, 1e9, NULL, 0,
     "[workload] type = metadata: files each rank creates, stats, reads and removes (mdtest "
     "-n)."},
    {"metadata", "file_size", CFG_SIZE, OFF(metadata.file_size), "0", 0, 1073741824.0, NULL, 0,
     "type = metadata: bytes written into each file at creation and read back (mdtest -w/-e)."},
    {"metadata", "shared_dir", CFG_BOOL, OFF(metadata.shared_dir), "false", NOLIM, NULL, 0,
     "type = metadata: every rank in one shared folder (false: one folder per rank, mdtest -u)."},
    {"metadata", "keep_files", CFG_BOOL, OFF(metadata.keep_files), "false", NOLIM, NULL, N,
     "type = metadata: skip the remove phase and leave the files."},

    {"reader", "batch_size", CFG_INT, OFF(reader.batch_size), "4", 1, 1e9, NULL, 0,
     "Samples per batch (per rank)."},
    {"reader", "batch_size_eval", CFG_INT, OFF(reader.batch_size_eval), "0", 0, 1e9, NULL, 0,
     "Samples per evaluation batch (per rank); 0: batch_size."},
    {"reader", "read_threads", CFG_INT, OFF(reader.read_threads), "auto", 1, 1024, NULL, CFG_F_AUTO,
     "Reader threads per rank (DataLoader workers). auto: from the CPUs the rank may use "
     "(affinity mask shared with the ranks on it, cgroup limit): one CPU is kept for the "
     "trainer, so CPUs - 1 (split over accelerators_per_rank loaders), at least 1; the count "
     "and why are in summary.json \"binding\"."},
    {"reader", "prefetch_size", CFG_INT, OFF(reader.prefetch_size), "2", 1, 1024, NULL, 0,
     "Batches prefetched per reader thread (queue holds read_threads x prefetch_size)."},
    {"reader", "prefetch_bytes", CFG_SIZE, OFF(reader.prefetch_bytes), "0", 0, 1099511627776.0,
     NULL, 0,
     "Bytes of batch buffers per rank (the ring the readers fill ahead of the trainer), instead "
     "of read_threads x prefetch_size batches: as many whole batches as fit, the same number "
     "for every reader thread, at least one each. Small batches hand over less often. 0: "
     "read_threads x prefetch_size (DLIO's prefetch per loader)."},
    {"reader", "file_shuffle", CFG_CHOICE, OFF(reader.file_shuffle), "off", NOLIM, shuffle_choices,
     0, "Shuffle file order every epoch: off, seed (repeatable), random."},
    {"reader", "sample_shuffle", CFG_CHOICE, OFF(reader.sample_shuffle), "off", NOLIM,
     shuffle_choices, 0, "Shuffle sample order every epoch: off, seed (repeatable), random."},
    {"reader", "drop_last", CFG_BOOL, OFF(reader.drop_last), "false", NOLIM, NULL, 0,
     "Drop a rank's last partial batch."},
    {"reader", "preprocess_time", CFG_DURATION, OFF(reader.preprocess_time), "0", 0, 3600, NULL, 0,
     "CPU time a reader thread spends on each sample after reading it, busy on its CPU (DLIO's "
     "preprocess_time: decoding, augmentation). Samples read one at a time; not queued "
     "(io_depth > 1) or collective reads."},
    {"reader", "shuffle_seed", CFG_INT, OFF(reader.shuffle_seed), "0", 0, 9.2e18, NULL, N,
     "Seed of the file and sample shuffles; 0: [dataset] seed. Changing it reorders the reads "
     "without regenerating the dataset (`feedbench mlperf run` gives each run its own)."},

    {"train", "epochs", CFG_INT, OFF(train.epochs), "1", 1, 1e6, NULL, 0, "Epochs per repetition."},
    {"train", "computation_time", CFG_DURATION, OFF(train.computation_time), "0", 0, 3600, NULL, 0,
     "Emulated compute per step."},
    {"train", "computation_time_stdev", CFG_DURATION, OFF(train.computation_time_stdev), "0", 0,
     3600, NULL, 0, "Standard deviation of compute per step."},
    {"train", "host_time", CFG_DURATION, OFF(train.host_time), "0", 0, 3600, NULL, 0,
     "CPU time the trainer spends per step outside compute and outside the wait for data (a "
     "framework's host work: taking the batch from its loader processes, unpickling, the "
     "training loop's own code), busy on its CPU before each step's compute; counted as lost "
     "time (other), never as compute (feedbench import-trace derives it)."},
    {"train", "accelerator", CFG_CHOICE, OFF(train.accelerator), "auto", NOLIM, accel_choices, 0,
     "auto: CUDA when built and a GPU answers, else the CPU emulation."},
    {"train", "pin_memory", CFG_BOOL, OFF(train.pin_memory), "true", NOLIM, NULL, 0,
     "Pinned host staging buffers for host-to-device copies (CUDA)."},
    {"train", "emulate_copy", CFG_BOOL, OFF(train.emulate_copy), "true", NOLIM, NULL, 0,
     "CPU emulation: copy each batch into a device-sized buffer, as the H2D copy would."},
    {"train", "step_barrier", CFG_BOOL, OFF(train.step_barrier), "false", NOLIM, NULL, 0,
     "Join all ranks after each step (emulates the gradient allreduce); timed separately."},
    {"train", "exclude_start_steps", CFG_INT, OFF(train.exclude_start_steps), "1", 0, 1e9, NULL, 0,
     "Steps at the start of each epoch left out of AU (warm-up)."},
    {"train", "accelerators_per_rank", CFG_INT, OFF(train.accelerators_per_rank), "1", 1, 256, NULL,
     0,
     "Emulated accelerators per rank (MPI ranks x this = accelerators): each has its own loader "
     "(read_threads, prefetch) and share of the samples, as if it were a rank of its own; "
     "they step together. CPU emulation, per-thread reads (no collective or stream formats), "
     "no checkpoints or evaluation inside training."},
    {"train", "au_threshold", CFG_DOUBLE, OFF(train.au_threshold), "0.90", 0, 1, NULL, 0,
     "AU at or above which the storage keeps up (DLIO: 0.90)."},
    {"train", "watchdog", CFG_DURATION, OFF(train.watchdog), "300s", 0, 86400, NULL, N,
     "End the job when a rank makes no progress for this long (a peer died); 0 disables."},
    {"train", "model", CFG_CHOICE, OFF(train.model), "none", NOLIM, mlperf_model_choices, 0,
     "MLPerf Storage workload this config emulates (DLIO's model.name); with accelerator_type "
     "it selects a preset (docs/mlperf.md)."},
    {"train", "accelerator_type", CFG_CHOICE, OFF(train.accelerator_type), "none", NOLIM,
     mlperf_accel_choices, 0,
     "Emulated accelerator of MLPerf Storage: fills computation_time, batch_size, read_threads "
     "and au_threshold from the preset of [train] model and this accelerator where the config "
     "leaves them at their defaults (`feedbench list` shows the presets)."},
    {"train", "time_limit", CFG_DURATION, OFF(train.time_limit), "0", 0, 1e9, NULL, 0,
     "Stop the training of a repetition after this long (checked every live_interval, 1 s when "
     "that is 0): every rank ends its epoch at its next step and the later epochs are left "
     "out; summary.json says so (stopped_early). 0: no limit."},
    {"train", "steady_state", CFG_BOOL, OFF(train.steady_state), "false", NOLIM, NULL, 0,
     "Stop the training once the bandwidth of the last steady_state_intervals live intervals "
     "is within steady_state_percent of their mean (as warp's autoterm); summary.json says "
     "so and after how long (stopped_early)."},
    {"train", "steady_state_intervals", CFG_INT, OFF(train.steady_state_intervals), "7", 2, 1000,
     NULL, 0, "Live intervals steady_state compares."},
    {"train", "steady_state_percent", CFG_DOUBLE, OFF(train.steady_state_percent), "7.5", 0.01, 100,
     NULL, 0, "How far from their mean (%) each of those intervals may be."},

    {"evaluation", "eval_time", CFG_DURATION, OFF(evaluation.eval_time), "0", 0, 3600, NULL, 0,
     "Emulated compute per evaluation step (DLIO's evaluation.eval_time); needs "
     "[dataset] num_files_eval."},
    {"evaluation", "eval_time_stdev", CFG_DURATION, OFF(evaluation.eval_time_stdev), "0", 0, 3600,
     NULL, 0, "Standard deviation of compute per evaluation step."},
    {"evaluation", "eval_after_epoch", CFG_INT, OFF(evaluation.eval_after_epoch), "1", 1, 1e6, NULL,
     0, "The first evaluation follows this training epoch (1: the first)."},
    {"evaluation", "epochs_between_evals", CFG_INT, OFF(evaluation.epochs_between_evals), "1", 1,
     1e6, NULL, 0,
     "Then one evaluation after every N-th epoch (epochs eval_after_epoch, "
     "eval_after_epoch + N, ...)."},

    {"checkpoint", "model_size_bytes", CFG_SIZE, OFF(checkpoint.model_size_bytes), "0", 0, 1.8e19,
     NULL, 0,
     "Bytes of one whole checkpoint (over all ranks); 0: num_parameters x the bytes per "
     "parameter below (docs/checkpoint.md)."},
    {"checkpoint", "num_parameters", CFG_INT, OFF(checkpoint.num_parameters), "0", 0, 1e15, NULL, 0,
     "Model parameters (llama3 8B: 8030261248); used when model_size_bytes = 0."},
    {"checkpoint", "bytes_per_param_model", CFG_DOUBLE, OFF(checkpoint.bytes_per_param_model), "2",
     0, 64, NULL, 0, "Bytes per parameter of the model weights (bf16/fp16: 2)."},
    {"checkpoint", "bytes_per_param_optimizer", CFG_DOUBLE,
     OFF(checkpoint.bytes_per_param_optimizer), "12", 0, 64, NULL, 0,
     "Bytes per parameter of the optimizer state (Adam in fp32: master weights, momentum, "
     "variance = 12)."},
    {"checkpoint", "bytes_per_param_gradients", CFG_DOUBLE,
     OFF(checkpoint.bytes_per_param_gradients), "0", 0, 64, NULL, 0,
     "Bytes per parameter of saved gradients (usually 0: not saved)."},
    {"checkpoint", "scale", CFG_DOUBLE, OFF(checkpoint.scale), "1", 1e-12, 1, NULL, 0,
     "Fraction of the checkpoint written, each part scaled alike (a full-size config run "
     "small: --set checkpoint.scale=0.001)."},
    {"checkpoint", "tensor_parallelism", CFG_INT, OFF(checkpoint.tensor_parallelism), "1", 1, 1e6,
     NULL, 0, "Tensor-parallel degree: model state split over this many ranks."},
    {"checkpoint", "pipeline_parallelism", CFG_INT, OFF(checkpoint.pipeline_parallelism), "1", 1,
     1e6, NULL, 0,
     "Pipeline-parallel degree; ranks / (tensor x pipeline) is the data-parallel degree."},
    {"checkpoint", "zero_stage", CFG_INT, OFF(checkpoint.zero_stage), "0", 0, 3, NULL, 0,
     "0: data-parallel replicas write nothing (replica 0 writes the model-parallel shards); "
     "1: optimizer state sharded over the replicas; 2: and gradients; 3: and weights (ZeRO "
     "stages, every rank writes a shard)."},
    {"checkpoint", "layout", CFG_CHOICE, OFF(checkpoint.layout), "dcp", NOLIM, ckpt_layout_choices,
     0,
     "dcp: one file per writing rank plus .metadata (rank 0, last) in step-<N>/ (PyTorch "
     "Distributed Checkpoint); single: one shared file, each rank its range (MPI-IO with "
     "backend = mpiio)."},
    {"checkpoint", "folder", CFG_STRING, OFF(checkpoint.folder), "", NOLIM, NULL, 0,
     "Folder of the checkpoints (empty: <data_dir>/checkpoints).", SZ(checkpoint.folder)},
    {"checkpoint", "count", CFG_INT, OFF(checkpoint.count), "1", 1, 1e6, NULL, 0,
     "Checkpoints written (and restored) per repetition of type = checkpoint."},
    {"checkpoint", "transfer_size", CFG_SIZE, OFF(checkpoint.transfer_size), "16MiB", 4096,
     1073741824.0, NULL, 0, "Bytes per write and read call of checkpoint files."},
    {"checkpoint", "save", CFG_BOOL, OFF(checkpoint.save), "true", NOLIM, NULL, 0,
     "Write the checkpoints (false: only restore the ones already in the folder, written "
     "by the same config: their .metadata must be there and agree)."},
    {"checkpoint", "restore", CFG_BOOL, OFF(checkpoint.restore), "true", NOLIM, NULL, 0,
     "Read each checkpoint back after evicting it from the page cache ([storage] page_cache "
     "= drop drops the whole cache)."},
    {"checkpoint", "verify", CFG_BOOL, OFF(checkpoint.verify), "true", NOLIM, NULL, 0,
     "Compare what the restore reads with what was written, byte for byte."},
    {"checkpoint", "keep_last", CFG_INT, OFF(checkpoint.keep_last), "0", 0, 1e6, NULL, 0,
     "Checkpoints kept on disk; older ones are deleted (timed). 0: keep all."},
    {"checkpoint", "checkpoint_every_epochs", CFG_INT, OFF(checkpoint.every_epochs), "0", 0, 1e6,
     NULL, 0,
     "type = train: save a checkpoint after every N epochs (summary.json says the steps it "
     "cost). 0: never."},
    {"checkpoint", "checkpoint_after_epoch", CFG_INT, OFF(checkpoint.after_epoch), "0", 0, 1e6,
     NULL, 0,
     "type = train: the first checkpoint follows this epoch (1-based), then every "
     "checkpoint_every_epochs-th (DLIO's checkpoint_after_epoch). 0: checkpoint_every_epochs."},
    {"checkpoint", "checkpoint_every_steps", CFG_INT, OFF(checkpoint.every_steps), "0", 0, 1e12,
     NULL, 0,
     "type = train: save a checkpoint after every N training steps, counted over the steps "
     "every rank has (all epochs), once every rank agreed it is healthy. 0: never."},
    {"checkpoint", "mode", CFG_CHOICE, OFF(checkpoint.mode), "blocking", NOLIM, ckpt_mode_choices,
     0,
     "type = train: blocking (training waits until the checkpoint is durable) or async (the "
     "state is copied to a staging buffer, a writer thread writes it while training goes on, "
     "as DCP async_save; one checkpoint in flight)."},

    {"checkpoint", "num_checkpoints_write", CFG_INT, OFF(checkpoint.num_write), "-1", -1, 1e6, NULL,
     0,
     "MLPerf Storage's phases (DLIO's name): write this many checkpoints first, then flush the "
     "page cache and read num_checkpoints_read of them back; 0: a read-only invocation of "
     "checkpoints already written. -1 (with num_checkpoints_read = -1): count, save and "
     "restore as above."},
    {"checkpoint", "num_checkpoints_read", CFG_INT, OFF(checkpoint.num_read), "-1", -1, 1e6, NULL,
     0,
     "Checkpoints read back after the write phase and the flush (the first ones written); 0: "
     "a write-only invocation."},
    {"checkpoint", "recovery_rank_shift", CFG_BOOL, OFF(checkpoint.recovery_rank_shift), "false",
     NOLIM, NULL, 0,
     "Phases: rank r reads the shard written by rank (r + ranks per host) mod ranks, so "
     "another host recovers it (DLIO's recovery_rank_shift); the time until it is readable "
     "there is measured and added to the recovery time."},
    {"checkpoint", "data_parallelism", CFG_INT, OFF(checkpoint.data_parallelism), "0", 0, 1e6, NULL,
     0,
     "Data-parallel degree of the full geometry; 0: ranks / (tensor x pipeline). Larger: a "
     "subset run, the ranks write the shares of the first ranks of that geometry (MLPerf "
     "Storage's 8-process subset)."},
    {"checkpoint", "client_memory_bytes", CFG_SIZE, OFF(checkpoint.client_memory_bytes), "0", 0,
     1.8e19, NULL, 0,
     "Phases: RAM per host for the flush rule (a host's share of a checkpoint below 3 x its "
     "RAM needs the page cache flushed before the reads); 0: the host's MemTotal."},

    {"output", "dir", CFG_STRING, OFF(output.dir), "results", NOLIM, NULL, N,
     "Folder that receives run folders.", SZ(output.dir)},
    {"output", "name", CFG_STRING, OFF(output.name), "", NOLIM, NULL, N,
     "Run folder name prefix (default: the workload name).", SZ(output.name)},
    {"output", "repetitions", CFG_INT, OFF(output.repetitions), "1", 1, 1000, NULL, N,
     "Times the whole training is repeated; mean, stddev, min and max are reported."},
    {"output", "plots", CFG_BOOL, OFF(output.plots), "true", NOLIM, NULL, N,
     "Render gnuplot plots into the run folder when gnuplot is installed."},
    {"output", "trace", CFG_BOOL, OFF(output.trace), "false", NOLIM, NULL, N,
     "Write every open, read, write, fsync, close, compute step and data wait of every rank and "
     "thread into trace.pfw (Chrome trace events in JSON lines, dftracer's format; "
     "docs/trace.md)."},
    {"output", "live_interval", CFG_DURATION, OFF(output.live_interval), "1s", 0, 86400, NULL, N,
     "type = train: every interval rank 0 prints one line (MiB/s, IOPS, AU, slowest rank, ETA) "
     "on stderr and keeps a row for live.csv and per-rank rows for ranks.csv (docs/results.md). "
     "0: off."},

    {"sweep", "optimise", CFG_CHOICE, OFF(sweep.optimise), "bandwidth", NOLIM, optimise_choices, N,
     "Metric the sweep recommendation maximises. Other [sweep] keys are section.key = "
     "v1, v2, ... (ranges: 1..16*2)."},
    {"sweep", "zip", CFG_STRING, OFF(sweep.zip), "", NOLIM, NULL, N,
     "Swept keys whose value lists are walked together (the i-th values form one point) instead "
     "of multiplied: `zip = format, num_files_train`. Names are section.key or the key alone; the "
     "lists need as many values each.",
     SZ(sweep.zip)},
};

const size_t cfg_nkeys = sizeof(cfg_keys) / sizeof(cfg_keys[0]);

/* struct config records where each row's value came from in lines[], indexed by row. */
_Static_assert(sizeof(cfg_keys) / sizeof(cfg_keys[0]) <= CFG_MAX_KEYS,
	       "more rows in cfg_keys than struct config has lines[]: raise CFG_MAX_KEYS");

const struct cfg_alias cfg_dlio_aliases[] = {
    {"dataset.data_folder", "dataset.data_dir", 0},
    {"dataset.record_length", "dataset.record_length_bytes", 0},
    {"dataset.record_length_stdev", "dataset.record_length_bytes_stdev", 0},
    {"reader.file_access", "dataset.file_access", 0},
    {"train.seed", "dataset.seed", 0},
    {"metric.au", "train.au_threshold", 0},
    {"output.folder", "output.dir", 0},
    {"dataset.eval_num_samples_per_file", "dataset.num_samples_per_file_eval", 0},
    {"train.eval_time", "evaluation.eval_time", 0},
    {"storage.storage_root", "dataset.data_dir", CFG_ALIAS_HINT},
    {"reader.data_loader", "reader.read_threads", CFG_ALIAS_HINT},
    {"reader.computation_threads", "reader.read_threads", CFG_ALIAS_HINT},
    {NULL, NULL, 0},
};
