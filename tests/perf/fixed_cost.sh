#!/bin/bash
# Is there a fixed cost inside a training epoch's clock? feedbench's training workload against
# fio on the same O_DIRECT 1 MiB sequential reads, at several sizes per rank: a cost paid once
# per epoch (threads woken, files opened or closed, an agreement) shows as a ratio
# feedbench / fio that rises with the size, and as a positive "fixed" time (below).
#
#   tests/perf/fixed_cost.sh [--ranks 2] [--sizes 64m,256m,1g] [--rounds 5] [--dir FOLDER]
#       [--feedbench PATH]
#
# Each rank reads one raw file of SIZE front to back in 1 MiB samples (batch 1, one reader
# thread, prefetch 1: one read in flight per rank, as fio's psync job keeps; computation_time 0,
# emulate_copy false, verify false, direct = true, one epoch). fio runs one psync job per rank
# on the same files (rw=read, bs=1m, direct=1) with group reporting: all jobs' bytes over the
# longest job's time, as feedbench's train_bandwidth is all ranks' bytes over the epoch. Every
# size runs --rounds alternating rounds (odd rounds fio first). Per size it prints each tool's
# median MiB/s, the median of the paired ratios, their range and the 95 % interval of the
# median (order statistics; 6 rounds or more), and the median of the per-round difference
# bytes / fb - bytes / fio in seconds (the time feedbench's epoch spends beyond fio's reads:
# constant across sizes if it is a fixed cost). Then the fixed cost itself: 40 epochs of one
# 4 KiB page-cached read per rank, live statistics on (their default), the first epoch's wall
# time and the median of the others, over the same rounds. The load average before and after
# is printed.
# Not a ctest: timings do not belong in tests.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
FEEDBENCH=${FEEDBENCH:-$SRC/build/feedbench}
MPIEXEC=${MPIEXEC:-mpiexec}
RANKS=2 SIZES=64m,256m,1g ROUNDS=5 DIR=
while [ $# -gt 0 ]; do
	case $1 in
	--ranks) RANKS=$2; shift ;;
	--sizes) SIZES=$2; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	--dir) DIR=$2; shift ;;
	--feedbench) FEEDBENCH=$2; shift ;;
	-h | --help) sed -n '2,20p' "$0"; exit 0 ;;
	*) echo "fixed_cost.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
[ "$ROUNDS" -ge 3 ] || { echo "fixed_cost.sh: --rounds must be 3 or more (medians)" >&2; exit 2; }
[ -x "$FEEDBENCH" ] || { echo "fixed_cost.sh: no feedbench at $FEEDBENCH (build first)" >&2; exit 2; }
command -v fio >/dev/null || { echo "fixed_cost.sh: fio is not installed (apt-get install fio)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

T=${DIR:-$(mktemp -d "${TMPDIR:-/tmp}/fb_fixed_XXXXXX")}
mkdir -p "$T"
[ -n "$DIR" ] || trap 'rm -rf "$T"' EXIT
RES=$T/results.tsv
: >"$RES"

# config SIZE_MIB: one raw file of SIZE_MIB 1 MiB samples per rank
config() {
	cat >"$T/fixed.ini" <<INI
[workload]
name = fixed_cost
[dataset]
data_dir = $T/data/$1
format = raw
num_files_train = $RANKS
num_samples_per_file = $1
record_length_bytes = 1MiB
file_access = per_rank
verify = false
[reader]
batch_size = 1
read_threads = 1
prefetch_size = 1
file_shuffle = off
sample_shuffle = off
[storage]
direct = true
[train]
epochs = 1
computation_time = 0
emulate_copy = false
exclude_start_steps = 0
[output]
dir = $T/results
plots = false
INI
}

run_feedbench() {
	rm -rf "$T/results"
	"$MPIEXEC" --oversubscribe -n "$RANKS" "$FEEDBENCH" run "$T/fixed.ini" --quiet >/dev/null
	python3 - "$T"/results/*/summary.json <<'PY'
import json, sys
print(json.load(open(sys.argv[1]))["metric"]["train_bandwidth_MiB_per_second"])
PY
}

run_fio() {
	local args=() r=0 f
	for f in "${FILES[@]}"; do
		args+=(--name="rank$r" --filename="$f")
		r=$((r + 1))
	done
	fio --output-format=json --group_reporting --ioengine=psync --rw=read --bs=1m --direct=1 \
		--invalidate=0 "${args[@]}" >"$T/fio.json"
	python3 - "$T/fio.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
print(r["io_bytes"] / (r["runtime"] / 1000.0) / 2**20)
PY
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
IFS=, read -r -a sizes <<<"$SIZES"
for size in "${sizes[@]}"; do
	mib=$(($(numfmt --from=iec "$(tr 'a-z' 'A-Z' <<<"$size")") / 1048576))
	config "$mib"
	"$FEEDBENCH" generate "$T/fixed.ini" --quiet >/dev/null
	mapfile -t FILES < <(ls "$T/data/$mib"/raw-* | head -n "$RANKS")
	for ((round = 1; round <= ROUNDS; round++)); do
		if ((round % 2)); then order="fio feedbench"; else order="feedbench fio"; fi
		for tool in $order; do
			printf '%s\t%s\t%s\t%s\n' "$mib" "$round" "$tool" "$(run_"$tool")" >>"$RES"
		done
	done
	rm -rf "$T/data/$mib"
	echo "done: $size per rank ($ROUNDS rounds)" >&2
done
# An epoch of one read per rank: what the epoch's clock holds besides its I/O.
config 0
sed -i 's/^num_samples_per_file = 0$/num_samples_per_file = 1/; s/^record_length_bytes = 1MiB$/record_length_bytes = 4KiB/; s/^direct = true$/direct = false/; s/^epochs = 1$/epochs = 40/' "$T/fixed.ini"
"$FEEDBENCH" generate "$T/fixed.ini" --quiet >/dev/null
for ((round = 1; round <= ROUNDS; round++)); do
	rm -rf "$T/results"
	"$MPIEXEC" --oversubscribe -n "$RANKS" "$FEEDBENCH" run "$T/fixed.ini" --quiet >/dev/null
	python3 - "$T"/results/*/summary.json <<'PY' >>"$T/tiny.tsv"
import json, statistics, sys
w = [e["wall_seconds"] for e in json.load(open(sys.argv[1]))["epochs"]]
print(w[0], statistics.median(w[1:]))
PY
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$RES" "$RANKS" "$HERE" <<'PY'
import collections, statistics, sys
sys.path.insert(0, sys.argv[3])
from paired import ratio_cells
d = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    mib, rnd, tool, bw = l.split()
    d[int(mib)].setdefault(tool, {})[int(rnd)] = float(bw)
ranks = int(sys.argv[2])
print("%-9s %10s %10s %7s %13s %13s %10s   (MiB/s medians; paired rounds)" %
      ("per rank", "feedbench", "fio", "fb/fio", "range", "95% CI", "fixed (s)"))
for mib in sorted(d):
    fb, fio = d[mib]["feedbench"], d[mib]["fio"]
    rs = [fb[r] / fio[r] for r in fb if r in fio]
    total = mib * ranks
    extra = [total / fb[r] - total / fio[r] for r in fb if r in fio]
    print("%-9s %10.1f %10.1f %s %10.4f" % ("%d MiB" % mib, statistics.median(fb.values()),
          statistics.median(fio.values()), ratio_cells(rs), statistics.median(extra)))
PY
python3 - "$T/tiny.tsv" <<'PY'
import statistics, sys
v = [list(map(float, l.split())) for l in open(sys.argv[1])]
print("epoch of one 4 KiB cached read per rank: first epoch %.3f ms, later epochs %.3f ms "
      "(medians over rounds)" % (1e3 * statistics.median(x[0] for x in v),
                                 1e3 * statistics.median(x[1] for x in v)))
PY
echo "($RANKS ranks, O_DIRECT 1 MiB sequential reads of one file per rank; $ROUNDS alternating"
echo " rounds; load average $LOAD_BEFORE before, $LOAD_AFTER after, on $(nproc) CPUs; files in"
echo " $T on $(df -T "$T" | awk 'NR == 2 {print $2}'); $(fio --version))"
