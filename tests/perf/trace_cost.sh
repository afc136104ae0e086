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
# One rank, no compute, no verification: the reads themselves are what is measured. MODE picks
# the measurement (the load average is printed before and after each; exit 0 always: the
# figures are measurements, not verdicts):
#   pairs (default)  each pair's read samples/s and CPU seconds per GiB read (user + system of
#                    the run), the median ratios on/off and the trace's size. On this VM pairs
#                    move by 10-35 %, more than the trace costs.
#   loop             build/trace_loop: 4 KiB cached preads timed with and without recording
#                    each in the trace, alternated in one process (ROUNDS blocks of READS reads,
#                    default 100 x 11700: ten of a thread's buffers a block), CPU time of the
#                    thread (user + system: the staging file's writes included); the added CPU
#                    ns per read with the 95 % interval of the median, against the bare pread and
#                    against feedbench's own untraced read (RUNS untraced runs of the config
#                    above, default 3: wall time per read of its one reader, the cycle the
#                    trace's CPU lengthens, and CPU per read): the cost in percent.
#   instructions     valgrind's callgrind of one feedbench run per setting, trace off and on, 1
#                    and 1+EPOCHS epochs (FILES x SAMPLES reads an epoch, default 4 x 1024):
#                    the user-space instructions the trace adds per read in the epochs and
#                    per event after them (trace_finish formats the records into JSON lines),
#                    from the difference of the runs (start-up cancels), and the bytes per
#                    read the staging file takes. Deterministic to about 0.1 %. Skips (exit 0)
#                    without valgrind.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
fb=${1:-$SRC/build/feedbench}
dir=${2:-/tmp/feedbench-trace-cost}
pairs=${PAIRS:-5}
mode=${MODE:-pairs}
case $mode in
pairs | loop) ;;
instructions)
	command -v valgrind >/dev/null || {
		echo "trace_cost: MODE=instructions needs valgrind (apt-get install valgrind)"
		exit 0
	}
	FILES=${FILES:-4} SAMPLES=${SAMPLES:-1024}
	;;
*)
	echo "trace_cost: MODE is pairs, loop or instructions, not '$mode'" >&2
	exit 2
	;;
esac
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

if [ "$mode" = loop ]; then
	loop=$(dirname "$fb")/trace_loop
	: >"$dir/cpu"
	for i in $(seq 1 "${RUNS:-3}"); do # feedbench's untraced read: wall and CPU ns per read
		rm -rf "$dir/results"
		"$fb" run "$dir/cost.ini" --set output.trace=false >/dev/null 2>&1
		python3 -c 'import json,sys; m = json.load(open(sys.argv[1]))["metric"]; print(1e9 / m["train_samples_per_second"], m["train_cpu_seconds_per_GiB"] / 2**18 * 1e9)' \
			"$(find "$dir/results" -name summary.json)" >>"$dir/cpu"
	done
	"$loop" "$(ls "$dir"/data/raw-* | head -1)" "$dir/staging" "${READS:-11700}" "${ROUNDS:-100}" >"$dir/loop"
	python3 - "$dir/loop" "$dir/cpu" "$HERE" <<'PY'
import statistics, sys
sys.path.insert(0, sys.argv[3])
from paired import ci
rows = [list(map(float, l.split()[1:])) for l in open(sys.argv[1]) if not l.startswith("staging")]
staging, events = map(int, open(sys.argv[1]).read().split("staging")[1].split())
runs = [list(map(float, l.split())) for l in open(sys.argv[2])]
fbread = statistics.median(w for w, _ in runs)
fbcpu = statistics.median(c for _, c in runs)
d = [on - off for _, _, off, on in rows]
bare = statistics.median(off for _, _, off, _ in rows)
m = statistics.median(d)
print(f"trace_loop, {len(rows)} rounds: a 4 KiB cached pread {bare:.0f} CPU ns (median), the trace "
      f"adds {m:.1f} CPU ns per read (95 % interval {ci(d)}), {staging / events:.1f} staging bytes "
      f"an event: {100 * m / bare:.1f} % of a bare pread")
print(f"feedbench's untraced read (median of {len(runs)} runs): {fbread:.0f} ns of wall time a "
      f"read (its one reader thread's whole cycle: 1 / samples per second), {fbcpu:.0f} ns of CPU "
      f"(every thread's, the trainer's waits included): the trace adds {100 * m / fbread:.1f} % "
      f"to the reader's cycle (target < 5 %), {100 * m / fbcpu:.1f} % to the CPU")
PY
	echo "load after: $(uptime)"
	exit 0
fi

if [ "$mode" = instructions ]; then
	irs() { # irs on|off EPOCHS: instructions of the program, under trace_finish, in the readers
		rm -rf "$dir/results"
		valgrind --tool=callgrind --callgrind-out-file="$dir/cg" "$fb" run "$dir/cost.ini" \
			--set output.trace="$([ "$1" = on ] && echo true || echo false)" \
			--set train.epochs="$2" --set output.live_interval=0 >/dev/null 2>&1
		python3 "$HERE/callgrind_sum.py" "$dir/cg" trace.c:trace_finish train_readers.c:worker_main
	}
	e=$((1 + ${EPOCHS:-3}))
	python3 - "$((FILES * SAMPLES * (e - 1)))" "$(irs off 1)" "$(irs off "$e")" "$(irs on 1)" \
		"$(irs on "$e")" <<'PY'
import sys
reads = int(sys.argv[1])
off1, offn, on1, onn = ([int(x) for x in a.split()] for a in sys.argv[2:6])
per = lambda a, b, i: (b[i] - a[i]) / reads  # instructions per read of the epochs added
off = per(off1, offn, 0)
fmt = per(on1, onn, 1)
run = per(on1, onn, 0) - fmt - off
readers = per(on1, onn, 2) - per(off1, offn, 2)
print(f"instructions per 4 KiB read ({reads} reads, callgrind, user space): untraced {off:.0f} "
      f"(valgrind counts each byte of a rep movsb copy as one: not a time); the trace adds "
      f"{run:.0f} in the epochs ({readers:.0f} of them in the reader threads: trace_io and its "
      f"call) and {fmt:.0f} after them (formatting the JSON lines)")
PY
	echo "load after: $(uptime)"
	exit 0
fi

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
