#!/bin/bash
# A benchmark of the regression gate, not a test: how often `feedbench compare` cries wolf
# over identical runs of configs/ci.ini, and how small a slowdown of the read path it catches.
#
#   tests/perf/compare_gate.sh [FEEDBENCH] [DIR] [RANKS]
#   FEEDBENCH  default build/feedbench
#   DIR        default /tmp/feedbench-gate (data and runs; emptied first)
#   RANKS      default 2
# Environment: N (identical runs, default 10), REPS (output.repetitions of every run, default
# 3), SLOWDOWNS (default "0.05 0.10 0.15 0.20 0.30"), CONFIG (default configs/ci.ini),
# MPIEXEC (default mpiexec), COMPARE_ARGS (extra `feedbench compare` options, e.g.
# "--tolerance 5 --alpha 0.01 --run-noise 5"), DATA (the data folder, default DIR/data: the
# storage under test), LATENCY (e.g. 1ms: every run reads through the faulty back-end's
# emulated device, [storage.faulty] read_latency, so the gate is measured without the
# storage's own drift; with DATA=/dev/shm/x the runs never touch a disk).
#
# Every run reads through the faulty back-end (a pass-through when nothing is injected), so all
# runs share one config hash and any of them can serve as a baseline.
#
# 1. False alarms: N runs of CONFIG, every pair (N(N-1)/2) compared with the default options;
#    a pair that exits 1 is a false alarm. Printed: the count, and the metric rows judged
#    "noise" (beyond the tolerance, not significant). Then a baseline of the first half of
#    the runs (run means: the run-to-run noise measured) against each run of the second half.
# 2. Sensitivity: for each slowdown S, a baseline run with storage.backend = faulty
#    (read_slowdown 0) and a run with storage.faulty.read_slowdown = S (the rank's reads pause
#    so that its storage is busy 1/(1-S) as long), REPS repetitions each, made one after the
#    other; compared; the slowed run is also compared with the baseline of several runs.
#    Printed per
#    S: the measured bandwidth change, its p-value and confidence interval, the verdict; then
#    the smallest S detected ("regressed").
# Exit 1 when there was a false alarm or a slowdown of 0.20 or more went undetected (what the
# ctest cases compare.false_alarms and compare.slowed expect), else 0.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
fb=${1:-$SRC/build/feedbench}
dir=${2:-/tmp/feedbench-gate}
ranks=${3:-2}
n=${N:-10}
reps=${REPS:-3}
slowdowns=${SLOWDOWNS:-0.05 0.10 0.15 0.20 0.30}
cfg=${CONFIG:-$SRC/configs/ci.ini}
mpiexec=${MPIEXEC:-mpiexec}
read -r -a cargs <<<"${COMPARE_ARGS:-}"
data=${DATA:-$dir/data}
latency=${LATENCY:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1

rm -rf "$dir"
mkdir -p "$dir"

# run OUT [section.key=value ...]: one run of the config; prints its run folder.
run() {
	local out=$1 last
	shift
	local sets=(--set "dataset.data_dir=$data" --set "output.repetitions=$reps"
		--set storage.backend=faulty)
	[ -z "$latency" ] ||
		sets+=(--set "storage.faulty.read_latency=$latency")
	for s in "$@"; do sets+=(--set "$s"); done
	last=$("$mpiexec" --oversubscribe -n "$ranks" "$fb" run "$cfg" "${sets[@]}" \
		--output "$dir/$out" 2>"$dir/$out.err" | tail -n 1)
	case $last in
	"results: "*) echo "${last#results: }" ;;
	*)
		echo "compare_gate: the run $out failed:" >&2
		cat "$dir/$out.err" >&2
		exit 1
		;;
	esac
}

# judge BASE CUR: compares; prints "EXIT VERDICT CHANGE_PCT P CI_LOW CI_HIGH NOISE_ROWS" for
# the bandwidth row.
judge() {
	local rc=0
	"$fb" compare "$1" "$2" "${cargs[@]}" --json "$dir/cmp.json" >"$dir/cmp.out" \
		2>"$dir/cmp.err" || rc=$?
	if [ "$rc" -gt 1 ]; then
		echo "compare_gate: compare $1 $2 exited $rc:" >&2
		cat "$dir/cmp.err" >&2
		exit 1
	fi
	python3 - "$dir/cmp.json" "$rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = [c for c in d["comparisons"] if c["metric"] == "bandwidth"][0]
f = lambda fmt, x: "nan" if x is None else fmt % x
noise = sum(1 for c in d["comparisons"] if c["verdict"] == "noise")
print(sys.argv[2], r["verdict"], f("%+.1f", r["change_pct"]), f("%.2g", r["p_value"]),
      f("%+.1f", r["ci_low_pct"]), f("%+.1f", r["ci_high_pct"]), noise)
PY
}

echo "feedbench compare gate: $(basename "$cfg"), $ranks ranks, $reps repetitions per run," \
	"data in $data${latency:+, emulated device of $latency per read}"
# The dataset first, on the storage: a run that generated it would compete with its writeback.
"$mpiexec" --oversubscribe -n "$ranks" "$fb" generate "$cfg" --set "dataset.data_dir=$data" \
	>"$dir/generate.out" 2>&1 || {
	cat "$dir/generate.out" >&2
	exit 1
}
sync
echo
echo "== false alarms: $n identical runs"
runs=()
for i in $(seq 1 "$n"); do
	r=$(run "same-$i")
	runs+=("$r")
done
pairs=0
alarms=0
noise=0
for ((i = 0; i < n; i++)); do
	for ((j = i + 1; j < n; j++)); do
		read -r rc verdict change p _ _ nn < <(judge "${runs[i]}" "${runs[j]}")
		pairs=$((pairs + 1))
		noise=$((noise + nn))
		if [ "$rc" -eq 1 ]; then
			alarms=$((alarms + 1))
			echo "  false alarm: run $((i + 1)) vs $((j + 1)): bandwidth $change % ($verdict, p $p)"
			grep -i regressed "$dir/cmp.out" | sed 's/^/    /' || true
		fi
	done
done
echo "false alarms: $alarms of $pairs pairs ($noise metric rows judged noise)"
half=$((n / 2))
mkdir -p "$dir/baseline-runs"
for ((i = 0; i < half; i++)); do
	cp -r "${runs[i]}" "$dir/baseline-runs/$i"
done
multi_alarms=0
for ((j = half; j < n; j++)); do
	read -r rc verdict change p _ _ _ < <(judge "$dir/baseline-runs" "${runs[j]}")
	if [ "$rc" -eq 1 ]; then
		multi_alarms=$((multi_alarms + 1))
		echo "  false alarm: $half-run baseline vs run $((j + 1)): bandwidth $change % ($verdict)"
		grep -i regressed "$dir/cmp.out" | sed 's/^/    /' || true
	fi
done
echo "false alarms against a baseline of $half runs: $multi_alarms of $((n - half)) runs"
echo
echo "== sensitivity: faulty back-end, read_slowdown S against 0"
printf '%-9s %9s %10s %8s %18s  %-10s  %s\n' slowdown expected bandwidth p-value "95% CI" verdict \
	"vs $half-run baseline"
smallest=""
missed_large=0
for s in $slowdowns; do
	base=$(run "base-$s" storage.faulty.read_slowdown=0)
	slow=$(run "slow-$s" "storage.faulty.read_slowdown=$s")
	read -r _ mverdict mchange _ _ _ _ < <(judge "$dir/baseline-runs" "$slow")
	read -r rc verdict change p lo hi _ < <(judge "$base" "$slow")
	expected=$(awk -v s="$s" 'BEGIN { printf "%+.1f %%", -s * 100 }')
	printf '%-9s %9s %8s %% %8s %18s  %-10s  %s\n' "$s" "$expected" "$change" "$p" \
		"[$lo, $hi] %" "$verdict" "$mchange % $mverdict"
	[ "$mverdict" != regressed ] || [ -n "${msmallest:-}" ] || msmallest=$s
	if [ "$verdict" = regressed ]; then
		if [ -z "$smallest" ]; then
			smallest=$s
			smallest_change=$change
		fi
	elif awk -v s="$s" 'BEGIN { exit !(s >= 0.2) }'; then
		missed_large=1
	fi
done
if [ -n "$smallest" ]; then
	echo "smallest slowdown detected: $smallest (bandwidth change $smallest_change %)"
else
	echo "smallest slowdown detected: none"
fi
echo "smallest slowdown detected against the $half-run baseline: ${msmallest:-none}"
[ "$alarms" -eq 0 ] && [ "$multi_alarms" -eq 0 ] && [ "$missed_large" -eq 0 ]
