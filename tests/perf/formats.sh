#!/bin/bash
# A benchmark, not a test: every format reads the same dataset shape from the page cache and
# its throughput is printed relative to raw, so format overhead (headers, framing, parsing,
# streaming, small files) is visible apart from the storage.
#
#   tests/perf/formats.sh [FEEDBENCH] [DATA_DIR] [RANKS]
#   FEEDBENCH  default build/feedbench
#   DATA_DIR   default /tmp/feedbench-perf (one folder per row; kept between runs)
#   RANKS      default 2
# Environment: SAMPLES (per file, default 256), FILES (default 8), RECORD (default 128KiB),
# EPOCHS (default 3), THREADS (read_threads, default 2), MPIEXEC (default mpiexec).
#
# Each row is generated once (generate = auto reuses it), read once to warm the cache, then
# measured with verify = false and no emulated compute. Results: mean over epochs of
# train_bandwidth_MiB_per_second and samples/s from summary.json.
set -euo pipefail

fb=${1:-build/feedbench}
dir=${2:-/tmp/feedbench-perf}
ranks=${3:-2}
mpiexec=${MPIEXEC:-mpiexec}
samples=${SAMPLES:-256}
files=${FILES:-8}
record=${RECORD:-128KiB}
epochs=${EPOCHS:-3}
threads=${THREADS:-2}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1

# Rows: "label format [section.key=value ...]". npy stores one sample per file, so its row
# has files x samples files of one sample each (the same bytes as the others).
rows=(
	"raw raw"
	"npy npy"
	"npz npz"
	"npz-whole npz format.npz.read=whole"
	"npz-shared npz dataset.file_access=shared"
	"wds wds"
	"wds-shuffled wds reader.sample_shuffle=seed format.wds.shuffle_buffer=64"
	# hdf5 / tfrecord
	"hdf5 hdf5"
	"hdf5-chunk1 hdf5 format.hdf5.chunking=sample"
	"hdf5-chunk16 hdf5 format.hdf5.chunking=16"
	"hdf5-shared hdf5 dataset.file_access=shared"
	"hdf5-coll hdf5 dataset.file_access=shared format.hdf5.transfer=collective"
	"tfrecord tfrecord"
	"tfrecord-shared tfrecord dataset.file_access=shared"
)

mkdir -p "$dir"
cfg=$dir/perf.ini
cat >"$cfg" <<INI
[workload]
name = perf_formats
[dataset]
num_files_train = $files
num_samples_per_file = $samples
record_length_bytes = $record
verify = false
[reader]
batch_size = 16
read_threads = $threads
[train]
epochs = $epochs
computation_time = 0
exclude_start_steps = 0
INI

measure() { # label format sets... -> "MiB/s samples/s"
	local label=$1 fmt=$2
	shift 2
	local sets=(--set "dataset.format=$fmt" --set "dataset.data_dir=$dir/data-$label")
	for s in "$@"; do sets+=(--set "$s"); done
	"$mpiexec" -n "$ranks" "$fb" run "$cfg" "${sets[@]}" --set train.epochs=1 \
		--output "$dir/warm" --quiet >/dev/null
	rm -rf "$dir/out-$label"
	"$mpiexec" -n "$ranks" "$fb" run "$cfg" "${sets[@]}" --output "$dir/out-$label" \
		--quiet >/dev/null
	python3 - "$dir/out-$label" <<'PY'
import glob, json, sys
s = json.load(open(glob.glob(sys.argv[1] + "/*/summary.json")[0]))
e = s["epochs"]
print("%.1f %.1f" % (sum(x["bandwidth_MiB_per_second"] for x in e) / len(e),
                     sum(x["samples_per_second"] for x in e) / len(e)))
PY
}

printf '%-14s %12s %12s %10s %10s\n' format MiB/s samples/s "x raw" "samples x"
base_bw=0
base_sps=0
for row in "${rows[@]}"; do
	read -r -a f <<<"$row"
	read -r bw sps < <(measure "${f[@]}")
	if [ "$base_bw" = 0 ]; then
		base_bw=$bw
		base_sps=$sps
	fi
	awk -v l="${f[0]}" -v b="$bw" -v s="$sps" -v bb="$base_bw" -v bs="$base_sps" \
		'BEGIN { printf "%-14s %12.1f %12.1f %10.2f %10.2f\n", l, b, s, b / bb, s / bs }'
done
rm -rf "$dir/warm"
