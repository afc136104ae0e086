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
# (default 300 of 128 MiB, a few seconds a run at 4 KiB cached reads, so that every run makes
# several gathers); FILES (default 16 files of 8 MiB a dataset: FILES=160 EPOCHS=30 reads as
# much in epochs ten times longer, which tells a cost per epoch, c / epoch time, from a cost
# per read); MPIEXEC.
#
# No compute, no verification: 2 ranks x 1 reader thread reading 4 KiB samples from the page
# cache. Prints each pair's samples/s and, for the run with live statistics on, the live
# threads' own CPU time (summary.json live.thread_cpu_seconds: CLOCK_THREAD_CPUTIME_ID, summed
# over ranks) and its share of their processes' CPU over the same spans (live.cpu_seconds); then the
# median ratio on/off with its range and the 95 % interval of the median (order statistics,
# tests/perf/paired.py), the median and highest thread-CPU share, and the load average before
# and after. The thread-CPU share is the direct figure: the readers' path is the same with live
# statistics off (their per-batch counters also feed the progress line), so what live
# statistics add is the thread, and on CPUs the readers keep busy its CPU time is at most what
# they lose. Exit 0 always: the figures are measurements, not verdicts.
# MODE=instructions instead runs one rank under valgrind's callgrind (EPOCHS default 2 there),
# live statistics off and on (INTERVAL), and prints the reader threads' instructions per read
# both ways (the same code: they should match) and the live thread's instructions per gather
# (exit 0 without valgrind).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
fb=${1:-$SRC/build/feedbench}
dir=${2:-/tmp/feedbench-live-cost}
mpi=(${MPIEXEC:-mpiexec} --oversubscribe --allow-run-as-root -n 2)

if [ "${MODE:-pairs}" = instructions ] && ! command -v valgrind >/dev/null; then
	echo "live_cost: MODE=instructions needs valgrind (apt-get install valgrind)"
	exit 0
fi
rm -rf "$dir"
mkdir -p "$dir"
printf '%s\n' "[workload]" "name = live_cost" "[dataset]" "data_dir = $dir/data" "format = raw" \
	"num_files_train = ${FILES:-16}" "num_samples_per_file = 2048" "record_length_bytes = 4KiB" \
	"verify = false" "[reader]" "batch_size = 64" "read_threads = 1" "[train]" \
	"epochs = ${EPOCHS:-$([ "${MODE:-pairs}" = instructions ] && echo 2 || echo 300)}" "computation_time = 0" "exclude_start_steps = 0" "[output]" \
	"dir = $dir/results" "plots = false" >"$dir/cost.ini"
echo "load before: $(uptime)"
"${mpi[@]}" "$fb" generate "$dir/cost.ini" >/dev/null
cat "$dir"/data/* >/dev/null # cached before the first run

if [ "${MODE:-pairs}" = instructions ]; then
	irs() { # irs INTERVAL: reads, live rows, readers' and live thread's instructions
		rm -rf "$dir/results"
		valgrind --tool=callgrind --callgrind-out-file="$dir/cg" "$fb" run "$dir/cost.ini" \
			--set output.live_interval="$1" >/dev/null 2>&1
		local run
		run=$(dirname "$(find "$dir/results" -name summary.json)")
		echo "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metric"]["train_samples"])' \
			"$run/summary.json" 2>/dev/null || echo 0)" \
			"$(($([ -f "$run/live.csv" ] && wc -l <"$run/live.csv" || echo 1) - 1))" \
			"$(python3 "$HERE/callgrind_sum.py" "$dir/cg" train_readers.c:worker_main live.c:live_main)"
	}
	python3 - "$(irs 0)" "$(irs "${INTERVAL:-1s}")" <<'PY'
import sys
off, on = ([int(x) for x in a.split()] for a in sys.argv[1:3])
(n0, _, _, w0, _), (n1, rows, _, w1, lv) = off, on
print(f"one rank under callgrind, {n1} reads: the reader threads' instructions per read "
      f"{w0 / n0:.1f} with live statistics off, {w1 / n1:.1f} on; the live thread "
      f"{lv / max(rows, 1):.0f} instructions per gather ({rows} gathers)")
PY
	echo "load after: $(uptime)"
	exit 0
fi

rate() { # rate INTERVAL: samples/s over all epochs, live threads' CPU s, processes' CPU s
	rm -rf "$dir/results"
	"${mpi[@]}" "$fb" run "$dir/cost.ini" --set output.live_interval="$1" >/dev/null 2>"$dir/err"
	grep -c '^live ' "$dir/err" >"$dir/lines" || true
	python3 -c 'import json,sys
s = json.load(open(sys.argv[1])); lv = s.get("live", {})
print(s["metric"]["train_samples_per_second"], lv.get("thread_cpu_seconds", 0), lv.get("cpu_seconds", 0),
      sum(e["wall_seconds"] for e in s["epochs"]))' "$(find "$dir/results" -name summary.json)"
}

: >"$dir/pairs"
for i in $(seq 1 "${PAIRS:-7}"); do
	read -r off _ _ _ <<<"$(rate 0)"
	read -r on tcpu cpu wall <<<"$(rate "${INTERVAL:-1s}")"
	echo "$off $on $tcpu $cpu $wall" >>"$dir/pairs"
	python3 -c 'import sys; off, on, t, c, w = map(float, sys.argv[1:6])
print("pair %s: off %.0f samples/s, on %.0f samples/s (%s live lines), on/off %.4f; "
      "live threads %.4f CPU s of %.3f (%.3f %%), %.3f ms per rank-second"
      % (sys.argv[6], off, on, sys.argv[7], on / off, t, c, 100 * t / c, 1e3 * t / (2 * w)))' \
		"$off" "$on" "$tcpu" "$cpu" "$wall" "$i" "$(cat "$dir/lines")"
done
python3 - "$dir/pairs" "$HERE" <<'PY'
import statistics, sys
sys.path.insert(0, sys.argv[2])
from paired import ci
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
r = [on / off for off, on, *_ in rows]
share = [100 * t / c for _, _, t, c, _ in rows]
m = statistics.median(r)
print(f"on/off samples/s: median {m:.4f} (range {min(r):.3f}-{max(r):.3f}, 95 % interval of the "
      f"median {ci(r)}): {100 * (1 - m):.1f} % of read throughput")
print(f"live threads' CPU share of their processes' CPU: median {statistics.median(share):.3f} %, "
      f"highest {max(share):.3f} % (target < 1 %)")
PY
echo "load after: $(uptime)"
