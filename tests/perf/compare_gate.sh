#!/bin/bash
# A benchmark of the regression gate, not a test: how often `feedbench compare` (default
# settings) reports a change between identical runs of configs/ci.ini, and how often it finds a
# 10 % and a 20 % slowdown of the read path, on this machine, with a CPU hog beside it.
#
#   tests/perf/compare_gate.sh [FEEDBENCH] [DIR] [RANKS]
#   FEEDBENCH  default build/feedbench
#   DIR        default /tmp/feedbench-gate (data and runs; emptied first)
#   RANKS      default 2
# Environment: N (identical runs, default 10: 45 pairs), REPS (output.repetitions of every run,
# default 5), K (slowed runs per slowdown, default 5), SLOWDOWNS (default "0.10 0.20"),
# CONFIG (default configs/ci.ini), MPIEXEC (default mpiexec), COMPARE_ARGS (extra
# `feedbench compare` options; default none: the defaults are what is measured), DATA (the data
# folder, default DIR/data: the storage under test), LATENCY (e.g. 2ms: every read goes
# through the faulty back-end's emulated device, [storage.faulty] read_latency, as the ctest
# cases do; with DATA=/dev/shm/x the runs never touch a disk), HOG (1, default: a busy loop
# on one core for the whole measurement, as a loaded CI runner has; 0: none).
#
# Every run reads through the faulty back-end (a pass-through when nothing is injected), so all
# runs share one config hash.
#
# 1. False findings: N runs, every pair compared both ways round once (N(N-1)/2 pairs x the six
#    default metrics); a "regressed" or "improved" row is a false finding, "inconclusive" is
#    counted apart. Target: at most 1 in 100 comparisons.
# 2. Detection: K runs with storage.faulty.read_slowdown = S (the rank's storage busy 1/(1-S)
#    as long) for each S, each compared with each identical run (N x K single-run
#    comparisons): the share whose bandwidth row is "regressed". Target: 95 %. Then the K
#    slowed runs as one side against the N identical runs as the other (run means).
# 3. What it takes: from the spread of the identical runs' bandwidth means, the runs a side at
#    which a 10 % and a 20 % drop are found with 95 % power, and the repetitions the gate asked
#    for when it said inconclusive.
# Prints the load average before and after. Exit 1 when a target is missed, else 0.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
fb=${1:-$SRC/build/feedbench}
dir=${2:-/tmp/feedbench-gate}
ranks=${3:-2}
n=${N:-10}
reps=${REPS:-5}
k=${K:-5}
slowdowns=${SLOWDOWNS:-0.10 0.20}
cfg=${CONFIG:-$SRC/configs/ci.ini}
mpiexec=${MPIEXEC:-mpiexec}
read -r -a cargs <<<"${COMPARE_ARGS:-}"
data=${DATA:-$dir/data}
latency=${LATENCY:-}
hog=${HOG:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1

rm -rf "$dir"
mkdir -p "$dir"
hog_pid=
stop_hog() {
	[ -z "$hog_pid" ] || kill "$hog_pid" 2>/dev/null || true
}
trap stop_hog EXIT
if [ "$hog" = 1 ]; then
	timeout 7200 sh -c 'while :; do :; done' &
	hog_pid=$!
fi

# run OUT [section.key=value ...]: one run of the config; prints its run folder.
run() {
	local out=$1 last
	shift
	local sets=(--set "dataset.data_dir=$data" --set "output.repetitions=$reps"
		--set storage.backend=faulty --set dataset.verify=false)
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

# judge BASE CUR: compares with the defaults (and COMPARE_ARGS); appends the JSON's rows to
# $dir/rows.jsonl with a tag.
judge() {
	local tag=$1 rc=0
	"$fb" compare "$2" "$3" "${cargs[@]}" --json "$dir/cmp.json" >"$dir/cmp.out" \
		2>"$dir/cmp.err" || rc=$?
	if [ "$rc" -eq 2 ] || [ "$rc" -eq 3 ]; then
		echo "compare_gate: compare $2 $3 exited $rc:" >&2
		cat "$dir/cmp.err" >&2
		exit 1
	fi
	python3 - "$dir/cmp.json" "$tag" "$rc" >>"$dir/rows.jsonl" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["comparisons"]:
    print(json.dumps({"tag": sys.argv[2], "rc": int(sys.argv[3]), "metric": c["metric"],
                      "verdict": c["verdict"], "change": c["change"], "mde": c["mde"],
                      "reps_needed": c["repetitions_needed"], "mean": c["current"]["mean"]}))
PY
}

echo "feedbench compare gate: $(basename "$cfg"), $ranks ranks, $reps repetitions per run," \
	"data in $data${latency:+, emulated device of $latency per read}," \
	"$([ "$hog" = 1 ] && echo "a CPU hog on one core" || echo "no CPU hog")"
echo "commit $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)," \
	"$(date -u +%Y-%m-%dT%H:%MZ), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$mpiexec" --oversubscribe -n "$ranks" "$fb" generate "$cfg" --set "dataset.data_dir=$data" \
	>"$dir/generate.out" 2>&1 || {
	cat "$dir/generate.out" >&2
	exit 1
}
sync
same=()
for i in $(seq 1 "$n"); do
	same+=("$(run "same-$i")")
done
mkdir -p "$dir/same-all"
for i in $(seq 1 "$n"); do cp -r "${same[i - 1]}" "$dir/same-all/$i"; done
for ((i = 0; i < n; i++)); do
	for ((j = i + 1; j < n; j++)); do
		judge same "${same[i]}" "${same[j]}"
	done
done
for s in $slowdowns; do
	mkdir -p "$dir/slow-all-$s"
	for j in $(seq 1 "$k"); do
		r=$(run "slow-$s-$j" "storage.faulty.read_slowdown=$s")
		cp -r "$r" "$dir/slow-all-$s/$j"
		for ((i = 0; i < n; i++)); do
			judge "slow-$s" "${same[i]}" "$r"
		done
	done
	judge "runs-$s" "$dir/same-all" "$dir/slow-all-$s"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$dir/rows.jsonl" "$slowdowns" "$n" "$k" "$reps" <<'PY'
import json, math, statistics as st, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
slowdowns, n, k, reps = sys.argv[2].split(), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
ok = True
same = [r for r in rows if r["tag"] == "same"]
found = [r for r in same if r["verdict"] in ("regressed", "improved")]
inc = [r for r in same if r["verdict"] == "inconclusive"]
pairs = len(same) // 6
print("\n== false findings: %d identical runs, %d pairs, all six default metrics" % (n, pairs))
print("false findings: %d of %d comparisons (%.2f per 100; target <= 1); pairs exiting 1: %d of %d"
      % (len(found), len(same), 100.0 * len(found) / max(1, len(same)),
         sum(1 for i in range(0, len(same), 6) if same[i]["rc"] == 1), pairs))
for m in ("bandwidth", "samples", "au", "iops", "latency_p99", "wait_p99"):
    rm = [r for r in same if r["metric"] == m]
    mdes = sorted(r["mde"] for r in rm if r["mde"] is not None)
    print("  %-12s found %d, inconclusive %d of %d; detects (median) %s" % (
        m, sum(r["verdict"] in ("regressed", "improved") for r in rm),
        sum(r["verdict"] == "inconclusive" for r in rm), len(rm),
        "%.1f %s" % (st.median(mdes), "pt" if m == "au" else "%") if mdes else "-"))
ok &= len(found) <= len(same) / 100
print("\n== detection: bandwidth, %d slowed runs x %d identical runs per slowdown, %d + %d repetitions"
      % (k, n, reps, reps))
for s in slowdowns:
    rb = [r for r in rows if r["tag"] == "slow-" + s and r["metric"] == "bandwidth"]
    det = sum(r["verdict"] == "regressed" for r in rb)
    incs = [r for r in rb if r["verdict"] == "inconclusive"]
    need = sorted(r["reps_needed"] for r in incs if r["reps_needed"])
    ch = [r["change"] for r in rb]
    print("read_slowdown %s: found %d of %d (%.0f %%; target 95 %%), inconclusive %d, measured change %+.1f %% (median)"
          % (s, det, len(rb), 100.0 * det / max(1, len(rb)), len(incs), st.median(ch)))
    if need:
        print("  repetitions a side asked for when inconclusive: median %d%s" % (
            st.median(need), " (some: more repetitions cannot tell; several runs a side)" if -1 in need else ""))
    rr = [r for r in rows if r["tag"] == "runs-" + s and r["metric"] == "bandwidth"]
    for r in rr:
        print("  %d slowed runs against the %d identical runs (run means): %s, change %+.1f %%, detects %.1f %%"
              % (k, n, r["verdict"], r["change"], r["mde"] or float("nan")))
    ok &= det >= 0.95 * len(rb) if float(s) >= 0.2 else True
bw = [r["mean"] for r in same if r["metric"] == "bandwidth"]
means = sorted(set(round(x, 6) for x in bw))
if len(means) >= 3:
    cv = st.stdev(means) / st.mean(means)
    print("\n== what it takes: identical runs' bandwidth means spread by %.1f %% (run to run)" % (100 * cv))
    for drop in (0.10, 0.20):
        # runs a side for 95 % power at alpha 0.05: 2 ((z_0.975 + z_0.95) cv / drop)^2
        runs = math.ceil(2 * ((1.959964 + 1.644854) * cv / drop) ** 2)
        print("  a %d %% drop: found with 95 %% power with %d run%s a side (run means; each run %d repetitions)"
              % (100 * drop, max(2, runs), "s" if max(2, runs) > 1 else "", reps))
sys.exit(0 if ok else 1)
PY
