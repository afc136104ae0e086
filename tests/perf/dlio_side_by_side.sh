#!/bin/bash
# A benchmark, not a test: DLIO (dlio_benchmark 2.0.0 from PyPI, installed into build/venv)
# and feedbench on the same small workload and the same files, alternating, printing both
# tools' AU, samples/s and MiB/s side by side with what explains the difference.
#
#   tests/perf/dlio_side_by_side.sh [FEEDBENCH] [WORK_DIR]
#   FEEDBENCH  default build/feedbench;  WORK_DIR default /tmp/feedbench-dlio-sbs (kept)
# Environment: RANKS (2), ROUNDS (3: DLIO, feedbench, DLIO, feedbench ...), FILES (32),
# RECORD (262144 bytes), BATCH (4), COMPUTE (0.01 s per step), EPOCHS (3), THREADS (2),
# VENV (build/venv), MPIEXEC (mpiexec), NO_INSTALL=1 (never run pip; DLIO must be there).
#
# The workload is DLIO's own format (npz, one sample per file, data_folder/train/): DLIO
# generates it, feedbench reads the same files through the INI that `feedbench import-dlio`
# writes from the same YAML. The difference to expect, and why:
#  - AU: DLIO counts the configured computation time over the step time per epoch, mean over
#    epochs; feedbench's headline counts measured busy time, mean over ranks of each rank's
#    AU. feedbench also reports DLIO's definition (metric.dlio_comparable), the column to
#    compare with DLIO's AU; what remains is DLIO's Python cost per step (loader hand-off,
#    collation), which feedbench does not have.
#  - samples/s: DLIO's epoch time includes its loader start-up (worker processes each
#    epoch); feedbench's dlio_comparable throughput counts the start-up in the first epoch.
#  - MiB/s: DLIO computes it from the nominal record length x samples; feedbench from the
#    bytes read calls returned (npz headers included).
set -uo pipefail

fb=${1:-build/feedbench}
work=${2:-/tmp/feedbench-dlio-sbs}
ranks=${RANKS:-2}
rounds=${ROUNDS:-3}
files=${FILES:-32}
record=${RECORD:-262144}
batch=${BATCH:-4}
compute=${COMPUTE:-0.01}
epochs=${EPOCHS:-3}
threads=${THREADS:-2}
venv=${VENV:-build/venv}
mpiexec=${MPIEXEC:-mpiexec}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$work"

# DLIO 2.0.0 from PyPI. Its wheel requires tensorflow, torch, torchvision, torchaudio and
# nvidia-dali-cuda110 (several GiB) besides mpi4py (built against this machine's Open MPI),
# hydra-core, pandas, h5py and pydftracer: the first install takes long and needs the room.
if ! "$venv/bin/python" -c 'import dlio_benchmark' 2>/dev/null; then
	if [ -n "${NO_INSTALL:-}" ]; then
		echo "DLIO is not installed in $venv and NO_INSTALL is set: cannot run DLIO" >&2
		exit 77
	fi
	[ -x "$venv/bin/python" ] || python3 -m venv "$venv" || {
		echo "cannot create the venv $venv (python3 -m venv failed)" >&2
		exit 77
	}
	echo "installing dlio-benchmark==2.0.0 into $venv (tensorflow, torch, DALI: GiBs) ..." >&2
	if ! "$venv/bin/pip" install -q dlio-benchmark==2.0.0 >"$work/pip.log" 2>&1; then
		echo "DLIO could not be installed; pip said (last lines of $work/pip.log):" >&2
		tail -15 "$work/pip.log" >&2
		exit 77
	fi
fi
dlio=$venv/bin/dlio_benchmark

# The workload, written as a DLIO YAML (read by DLIO through hydra, and by import-dlio).
mkdir -p "$work/conf/workload"
cat >"$work/conf/workload/sbs.yaml" <<YAML
model: sbs
framework: pytorch
workflow:
  generate_data: False
  train: True
dataset:
  data_folder: $work/data
  format: npz
  num_files_train: $files
  num_samples_per_file: 1
  record_length: $record
reader:
  data_loader: pytorch
  batch_size: $batch
  read_threads: $threads
  file_shuffle: seed
  sample_shuffle: seed
train:
  epochs: $epochs
  computation_time: $compute
YAML
if [ ! -e "$work/data/.generated-$files-$record" ]; then
	rm -rf "$work/data"
	"$mpiexec" --oversubscribe -n "$ranks" "$dlio" --config-dir "$work/conf" workload=sbs \
		++workload.workflow.generate_data=True ++workload.workflow.train=False \
		hydra.run.dir="$work/gen" >"$work/gen.log" 2>&1 ||
		{ echo "DLIO could not generate the dataset: see $work/gen.log" >&2; exit 1; }
	touch "$work/data/.generated-$files-$record"
fi
"$fb" import-dlio "$work/conf/workload/sbs.yaml" -o "$work/sbs.ini" 2>"$work/import.log" ||
	{ cat "$work/import.log" >&2; exit 1; }

: >"$work/rows"
for r in $(seq "$rounds"); do
	out=$work/dlio-$r
	rm -rf "$out"
	"$mpiexec" --oversubscribe -n "$ranks" "$dlio" --config-dir "$work/conf" workload=sbs \
		hydra.run.dir="$out" >"$work/dlio-$r.log" 2>&1 ||
		{ echo "DLIO run $r failed: see $work/dlio-$r.log" >&2; exit 1; }
	"$venv/bin/python" - "$out" dlio "$r" >>"$work/rows" <<'PY'
import glob, json, sys
s = json.load(open(glob.glob(sys.argv[1] + "/**/summary.json", recursive=True)[0]))
m = s["metric"]
print(sys.argv[2], sys.argv[3], m["train_au_mean_percentage"], "-",
      m["train_throughput_mean_samples_per_second"], "-", m["train_io_mean_MB_per_second"])
PY
	"$mpiexec" --oversubscribe -n "$ranks" "$fb" run "$work/sbs.ini" -q \
		--set output.dir="$work/fb" --set output.plots=false >"$work/fb-$r.log" 2>&1 ||
		{ echo "feedbench run $r failed: see $work/fb-$r.log" >&2; exit 1; }
	python3 - "$(ls -d "$work"/fb/*/ | tail -1)" feedbench "$r" >>"$work/rows" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "summary.json"))
m = s["metric"]; d = m["dlio_comparable"]
print(sys.argv[2], sys.argv[3], d["train_au_mean_percentage"], m["train_au_mean_percentage"],
      d["train_throughput_mean_samples_per_second"], m["train_samples_per_second"],
      m["train_bandwidth_MiB_per_second"])
PY
done

echo "| tool | round | AU % (DLIO's definition) | AU % (feedbench headline) | samples/s (start-up incl.) | samples/s (feedbench) | MiB/s |"
echo "|---|---|---|---|---|---|---|"
while read -r tool r au au2 sps sps2 mib; do
	printf '| %s | %s | %.2f | %s | %.1f | %s | %.1f |\n' "$tool" "$r" "$au" "$au2" "$sps" \
		"$sps2" "$mib"
done <"$work/rows"
