#!/bin/bash
# A benchmark, not a test: what live statistics cost ([output] live_interval, default 1 s,
# against 0 = off) at 4 KiB cached reads on 2 ranks, where the per-batch counters and the live
# thread's gathers weigh most against the reads (docs/performance.md, target < 1 %).
#
#   tests/perf/live_cost.sh [FEEDBENCH] [DIR]
#   FEEDBENCH  default build/feedbench
#   DIR        default /tmp/feedbench-live-cost (data and runs; emptied first)
# Environment: PAIRS (default 7): runs off and on, alternated so that a change of load hits
# both; INTERVAL (default 1s; 0.1s shows the cost at ten times the default rate); EPOCHS
# (default 8, a few seconds a run so that every run makes several gathers); MPIEXEC.
#
# No compute, no verification: 2 ranks x 1 reader thread reading 4 KiB samples from the page
# cache. Prints each pair's samples/s, the median ratio on/off, the live lines a run printed and
# the load average before and after. Exit 0 always: the ratio is a measurement, not a verdict.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
fb=${1:-$SRC/build/feedbench}
dir=${2:-/tmp/feedbench-live-cost}
mpi=(${MPIEXEC:-mpiexec} --oversubscribe --allow-run-as-root -n 2)

rm -rf "$dir"
mkdir -p "$dir"
printf '%s\n' "[workload]" "name = live_cost" "[dataset]" "data_dir = $dir/data" "format = raw" \
	"num_files_train = 16" "num_samples_per_file = 2048" "record_length_bytes = 4KiB" \
	"verify = false" "[reader]" "batch_size = 64" "read_threads = 1" "[train]" \
	"epochs = ${EPOCHS:-8}" "computation_time = 0" "exclude_start_steps = 0" "[output]" \
	"dir = $dir/results" "plots = false" >"$dir/cost.ini"
echo "load before: $(uptime)"
"${mpi[@]}" "$fb" generate "$dir/cost.ini" >/dev/null
cat "$dir"/data/* >/dev/null # cached before the first run

rate() { # rate INTERVAL: the run's read samples/s over all epochs
	rm -rf "$dir/results"
	"${mpi[@]}" "$fb" run "$dir/cost.ini" --set output.live_interval="$1" >/dev/null 2>"$dir/err"
	grep -c '^live ' "$dir/err" >"$dir/lines" || true
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metric"]["train_samples_per_second"])' \
		"$(find "$dir/results" -name summary.json)"
}

ratios=()
for i in $(seq 1 "${PAIRS:-7}"); do
	off=$(rate 0)
	on=$(rate "${INTERVAL:-1s}")
	ratios+=("$(python3 -c "print(f'{$on / $off:.4f}')")")
	printf 'pair %d: off %.0f samples/s, on %.0f samples/s (%s live lines), on/off %s\n' \
		"$i" "$off" "$on" "$(cat "$dir/lines")" "${ratios[-1]}"
done
python3 -c '
import statistics, sys
m = statistics.median(float(r) for r in sys.argv[1:])
print(f"median on/off {m:.4f}: live statistics cost {100 * (1 - m):.1f} % of read throughput (target < 1 %)")
' "${ratios[@]}"
echo "load after: $(uptime)"
