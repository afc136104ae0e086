#!/bin/bash
# A benchmark, not a test: what [output] trace = true costs at 4 KiB cached reads, the case
# where a trace line weighs most against the read it records (docs/trace.md, target < 5 %).
#
#   tests/perf/trace_cost.sh [FEEDBENCH] [DIR]
#   FEEDBENCH  default build/feedbench
#   DIR        default /tmp/feedbench-trace-cost (data and runs; emptied first)
# Environment: PAIRS (default 5): runs with trace off and on, alternated so that a change of
# load hits both; FILES and SAMPLES (default 16 x 2048: 128 MiB of 4 KiB samples, read from the
# page cache), THREADS (read_threads, default 1), EPOCHS (default 3).
#
# One rank, no compute, no verification: the reads themselves are what is measured. Prints each
# pair's read samples/s and CPU seconds per GiB read (user + system of the run: steadier than
# throughput on a loaded machine), the median ratios on/off, the trace's size and the load
# average before and after. Exit 0 always: the ratios are measurements, not verdicts.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
fb=${1:-$SRC/build/feedbench}
dir=${2:-/tmp/feedbench-trace-cost}
pairs=${PAIRS:-5}

rm -rf "$dir"
mkdir -p "$dir"
cat >"$dir/cost.ini" <<INI
[workload]
name = trace_cost
[dataset]
data_dir = $dir/data
format = raw
num_files_train = ${FILES:-16}
num_samples_per_file = ${SAMPLES:-2048}
record_length_bytes = 4KiB
verify = false
[reader]
batch_size = 64
read_threads = ${THREADS:-1}
[train]
epochs = ${EPOCHS:-3}
computation_time = 0
exclude_start_steps = 0
[output]
dir = $dir/results
plots = false
INI
echo "load before: $(uptime)"
"$fb" generate "$dir/cost.ini" >/dev/null
cat "$dir"/data/* >/dev/null # cached before the first run

rate() { # rate on|off: the run's read samples/s and CPU s per GiB (all epochs)
	local t=$1 run
	rm -rf "$dir/results"
	"$fb" run "$dir/cost.ini" --set output.trace="$([ "$t" = on ] && echo true || echo false)" \
		>/dev/null 2>&1
	run=$(find "$dir/results" -mindepth 1 -maxdepth 1 -type d)
	[ "$t" = on ] && du -b "$run/trace.pfw" | cut -f1 >"$dir/size"
	python3 -c 'import json,sys; m = json.load(open(sys.argv[1]))["metric"]; print(m["train_samples_per_second"], m["train_cpu_seconds_per_GiB"])' \
		"$run/summary.json"
}

ratios=() cpus=()
for i in $(seq 1 "$pairs"); do
	read -r off offc <<<"$(rate off)"
	read -r on onc <<<"$(rate on)"
	r=$(python3 -c "print(f'{$on / $off:.4f}')")
	c=$(python3 -c "print(f'{$onc / $offc:.4f}')")
	ratios+=("$r")
	cpus+=("$c")
	printf 'pair %d: off %.0f samples/s %.3f CPU s/GiB, on %.0f samples/s %.3f CPU s/GiB, on/off %s and %s\n' \
		"$i" "$off" "$offc" "$on" "$onc" "$r" "$c"
done
python3 - "$(cat "$dir/size")" "${ratios[*]}" "${cpus[*]}" <<'PY'
import statistics, sys
size = int(sys.argv[1])
m = statistics.median(map(float, sys.argv[2].split()))
c = statistics.median(map(float, sys.argv[3].split()))
print(f"median on/off {m:.4f}: the trace costs {100 * (1 - m):.1f} % of read throughput "
      f"(target < 5 %); CPU per GiB on/off {c:.4f} ({100 * (c - 1):+.1f} %); "
      f"trace.pfw {size / 2**20:.1f} MiB")
PY
echo "load after: $(uptime)"
