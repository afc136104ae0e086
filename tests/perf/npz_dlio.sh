#!/bin/bash
# A benchmark, not a test: DLIO's npz files (numpy.savez, x uint8 (dim1, dim2, 1) in C order,
# one sample per file) against feedbench's own npz (x in Fortran order) of the same sizes,
# both read from the page cache with verify = false and no emulated compute. The two should
# deliver the same samples/s: a sample of either is one contiguous byte range.
#
#   tests/perf/npz_dlio.sh [FEEDBENCH] [DATA_DIR] [PYTHON]
#   FEEDBENCH  default build/feedbench
#   DATA_DIR   default /tmp/feedbench-npz-dlio (kept between runs)
#   PYTHON     a python with numpy, default build/venv/bin/python (tests/interop/setup_venv.sh)
# Environment: FILES (default 64), SIDE (dim1 = dim2, default 1024: 1 MiB samples), EPOCHS
# (default 5), THREADS (default 2), RANKS (default 1), MPIEXEC (default mpiexec).
set -euo pipefail

fb=${1:-build/feedbench}
dir=${2:-/tmp/feedbench-npz-dlio}
py=${3:-build/venv/bin/python}
files=${FILES:-64}
side=${SIDE:-1024}
epochs=${EPOCHS:-5}
threads=${THREADS:-2}
ranks=${RANKS:-1}
mpiexec=${MPIEXEC:-mpiexec}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1

mkdir -p "$dir/dlio" "$dir/own"
if [ ! -e "$dir/dlio/.done-$files-$side" ]; then
	rm -f "$dir/dlio/"*.npz
	"$py" - "$dir/dlio" "$files" "$side" <<'PY'
import sys
import numpy as np
out, files, side = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(10)
for i in range(files):
    x = rng.integers(0, 255, size=(side, side, 1), dtype=np.uint8)  # C order, as DLIO
    np.savez("%s/img_%03d_of_%03d.npz" % (out, i + 1, files), x=x, y=[0])
PY
	touch "$dir/dlio/.done-$files-$side"
fi

common=(--set reader.read_threads="$threads" --set reader.batch_size=1 --set train.epochs="$epochs"
	--set train.computation_time=0 --set train.exclude_start_steps=0 --set dataset.verify=false
	--set output.plots=false --set dataset.num_samples_per_file=1 --quiet)
cat >"$dir/bench.ini" <<INI
[workload]
name = npz-dlio
[dataset]
format = npz
INI

measure() { # measure LABEL DATA_DIR [--set ...]
	local label=$1 data=$2
	shift 2
	rm -rf "$dir/out"
	"$mpiexec" -n "$ranks" "$fb" run "$dir/bench.ini" "${common[@]}" --set dataset.data_dir="$data" \
		--output "$dir/out" "$@" >/dev/null
	"$py" - "$label" "$dir"/out/*/summary.json <<'PY'
import json, sys
m = json.load(open(sys.argv[2]))["metric"]
print("%-22s %10.1f samples/s %10.1f MiB/s" % (sys.argv[1],
      m["train_throughput_mean_samples_per_second"], m["train_bandwidth_MiB_per_second"]))
PY
}

# feedbench's own files of the same size; generated once (generate = auto keeps them).
"$mpiexec" -n "$ranks" "$fb" generate "$dir/bench.ini" "${common[@]}" \
	--set dataset.data_dir="$dir/own" --set dataset.num_files_train="$files" \
	--set dataset.record_length_bytes=$((side * side)) >/dev/null
warm() { cat "$dir"/dlio/*.npz "$dir"/own/*.npz >/dev/null; }
warm
for rep in 1 2; do
	measure "feedbench npz (F)" "$dir/own" --set dataset.num_files_train="$files" \
		--set dataset.record_length_bytes=$((side * side))
	measure "DLIO npz (C)" "$dir/dlio" --set dataset.generate=never
done
