#!/bin/bash
# feedbench's `[workload] type = ior` against fio, and against IOR where IOR is available, on the
# same pattern: every rank writes its block sequentially in transfer-size calls, fsyncs at the
# end of the write (IOR -e), then reads back the block of the next rank (IOR -C task reordering;
# one node, so rank r reads rank r+1's data). One file per process (IOR -F) or one shared file
# (rank r's block at offset r x block), buffered or O_DIRECT (IOR -B).
#
#   tests/perf/ior_vs_feedbench.sh [--ranks 2] [--block 64m] [--xfer 1m,64k]
#       [--access fpp,shared] [--io buffered,direct] [--rounds 3] [--dir FOLDER]
#       [--feedbench PATH]
#
# Every case runs --rounds (>= 3) alternating rounds: odd rounds fio first, even rounds feedbench
# first (IOR last in each round when present), so drift of the machine lands on both sides. A
# row shows the median over rounds of each tool's write and read bandwidth (MiB/s = 2^20 B/s,
# bytes of all ranks over the slowest rank's phase time) and the ratios feedbench / fio (and
# feedbench / IOR). The load average before and after is printed with the table.
#
# fio stands in for IOR when IOR is absent (IOR is not a Debian package; this machine has no
# IOR): fio runs one job per rank (psync, fallocate=none, end_fsync=1 for the write phase,
# direct=1 for O_DIRECT) on the same files, offsets and sizes; its group bandwidth is total
# bytes over the longest job's run time, as IOR's is over the slowest rank's. fio has no start
# barrier across jobs (they start within milliseconds of each other). With the page cache
# (buffered) the read-back is answered from memory by both tools: feedbench's ior does not
# drop the cache on one node either (another rank's data is still this node's cache); the
# O_DIRECT rows measure the device. feedbench runs with [ior] verify = false (IOR and fio do
# not check the bytes) and plots off. IOR path: IOR_BIN (an ior binary) or IOR_SOURCE (a
# checkout of https://github.com/hpc/ior, built once there: ./bootstrap && ./configure &&
# make); IOR then runs as `ior -a POSIX -w -r -C -e -b BLOCK -t XFER -s 1 [-F] [-B]`.
# Not a ctest: timings do not belong in tests.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
FEEDBENCH=${FEEDBENCH:-$SRC/build/feedbench}
MPIEXEC=${MPIEXEC:-mpiexec}
RANKS=2 BLOCK=64m XFERS=1m,64k ACCESS=fpp,shared IOS=buffered,direct ROUNDS=3 DIR=
while [ $# -gt 0 ]; do
	case $1 in
	--ranks) RANKS=$2; shift ;;
	--block) BLOCK=$2; shift ;;
	--xfer) XFERS=$2; shift ;;
	--access) ACCESS=$2; shift ;;
	--io) IOS=$2; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	--fpp) ACCESS=fpp ;; # the options of the first version of this script
	--segments) [ "$2" = 1 ] || { echo "only --segments 1 (one block per rank)" >&2; exit 2; }; shift ;;
	--dir) DIR=$2; shift ;;
	--feedbench) FEEDBENCH=$2; shift ;;
	-h | --help) sed -n '2,31p' "$0"; exit 0 ;;
	*) echo "ior_vs_feedbench.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
[ "$ROUNDS" -ge 3 ] || { echo "ior_vs_feedbench.sh: --rounds must be 3 or more (medians)" >&2; exit 2; }
[ -x "$FEEDBENCH" ] || { echo "ior_vs_feedbench.sh: no feedbench at $FEEDBENCH (build first)" >&2; exit 2; }
command -v fio >/dev/null || { echo "ior_vs_feedbench.sh: fio is not installed (apt-get install fio)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

IOR=${IOR_BIN:-}
if [ -z "$IOR" ] && [ -n "${IOR_SOURCE:-}" ]; then
	if [ ! -x "$IOR_SOURCE/src/ior" ]; then
		(cd "$IOR_SOURCE" && { [ -x configure ] || ./bootstrap; } && ./configure --quiet &&
			make -j"$(nproc)" --quiet) >&2
	fi
	IOR=$IOR_SOURCE/src/ior
fi
if [ -n "$IOR" ]; then
	echo "IOR: $IOR; fio is shown beside it"
else
	echo "IOR is not installed (set IOR_SOURCE to a checkout of hpc/ior or IOR_BIN to an ior binary):"
	echo "fio stands in for IOR on the same pattern (see the head of this script)"
fi

T=${DIR:-$(mktemp -d "${TMPDIR:-/tmp}/fb_ior_vs_XXXXXX")}
mkdir -p "$T"
[ -n "$DIR" ] || trap 'rm -rf "$T"' EXIT
to_bytes() { numfmt --from=iec "$(tr 'a-z' 'A-Z' <<<"$1")"; }
B=$(to_bytes "$BLOCK")
RES=$T/results.tsv
: >"$RES"

# fio_phase ACCESS XFER_BYTES DIRECT(0|1) PHASE(write|read): prints the group bandwidth, MiB/s.
fio_phase() {
	local access=$1 xfer=$2 direct=$3 phase=$4 args=() r owner
	args=(--output-format=json --group_reporting --ioengine=psync --bs="$xfer" --direct="$direct"
		--fallocate=none --invalidate=0 --size="$B" --rw="$phase")
	[ "$phase" = write ] && args+=(--end_fsync=1)
	for ((r = 0; r < RANKS; r++)); do
		owner=$r
		[ "$phase" = read ] && owner=$(((r + 1) % RANKS))
		if [ "$access" = fpp ]; then
			args+=(--name="rank$r" --filename="$T/fio/file.$owner")
		else
			args+=(--name="rank$r" --filename="$T/fio/shared" --offset=$((owner * B)))
		fi
	done
	fio "${args[@]}" >"$T/fio.json"
	python3 - "$T/fio.json" "$phase" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0][sys.argv[2]]
print(j["io_bytes"] / (j["runtime"] / 1000.0) / 2**20, j["runtime"])
PY
}

run_fio() {
	rm -rf "$T/fio" && mkdir -p "$T/fio"
	local w r wms rms
	read -r w wms < <(fio_phase "$1" "$2" "$3" write)
	read -r r rms < <(fio_phase "$1" "$2" "$3" read)
	rm -rf "$T/fio"
	echo "$w $r $wms $rms"
}

run_feedbench() {
	local fpp=false direct=false
	[ "$1" = fpp ] && fpp=true
	[ "$3" = 1 ] && direct=true
	rm -rf "$T/fb" "$T/fbres"
	"$MPIEXEC" --oversubscribe -n "$RANKS" "$FEEDBENCH" run "$SRC/configs/workloads/ior.ini" \
		--set "dataset.data_dir=$T/fb" --set "output.dir=$T/fbres" --set output.plots=false \
		--set "ior.block_size=$B" --set "ior.transfer_size=$2" --set ior.segments=1 \
		--set "ior.file_per_process=$fpp" --set ior.verify=false --set ior.reorder=true \
		--set ior.fsync=true --set "storage.direct=$direct" --quiet >/dev/null
	python3 - "$T"/fbres/*/summary.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["metric"]
print(m["ior_write_bandwidth_MiB_per_second"], m["ior_read_bandwidth_MiB_per_second"])
PY
	rm -rf "$T/fb" "$T/fbres"
}

run_ior() {
	local args=(-a POSIX -w -r -C -e -b "$B" -t "$2" -s 1 -o "$T/ior/testfile")
	[ "$1" = fpp ] && args+=(-F)
	[ "$3" = 1 ] && args+=(-B)
	rm -rf "$T/ior" && mkdir -p "$T/ior"
	"$MPIEXEC" --oversubscribe -n "$RANKS" "$IOR" "${args[@]}" >"$T/ior.out"
	# IOR's summary lines: "write  <max> <min> <mean> ..." (MiB/s): the mean column
	awk '$1 == "write" && NF > 8 && $2 ~ /^[0-9.]+$/ {w = $4} $1 == "read" && NF > 8 &&
		$2 ~ /^[0-9.]+$/ {r = $4} END {print w, r}' "$T/ior.out"
	rm -rf "$T/ior"
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
IFS=, read -r -a xfers <<<"$XFERS"
IFS=, read -r -a accesses <<<"$ACCESS"
IFS=, read -r -a ios <<<"$IOS"
for access in "${accesses[@]}"; do
	for io in "${ios[@]}"; do
		direct=0
		[ "$io" = direct ] && direct=1
		for x in "${xfers[@]}"; do
			xb=$(to_bytes "$x")
			for ((round = 1; round <= ROUNDS; round++)); do
				if ((round % 2)); then order="fio feedbench"; else order="feedbench fio"; fi
				[ -n "$IOR" ] && order="$order ior"
				for tool in $order; do
					read -r w r wms rms < <(run_"$tool" "$access" "$xb" "$direct")
					printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$access" "$io" \
						"$x" "$round" "$tool" "$w" "$r" "${wms:--}" "${rms:--}" >>"$RES"
				done
			done
			echo "done: $access $io xfer $x ($ROUNDS rounds)" >&2
		done
	done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$RES" "$([ -n "$IOR" ] && echo ior || echo none)" <<'PY'
import collections, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
have_ior = sys.argv[2] == "ior"
cases = collections.OrderedDict()
for access, io, x, rnd, tool, w, r, wms, rms in rows:
    c = cases.setdefault((access, io, x), collections.defaultdict(lambda: ([], [], [], [])))
    c[tool][0].append(float(w))
    c[tool][1].append(float(r))
    if tool == "fio":
        c[tool][2].append(float(wms))
        c[tool][3].append(float(rms))
head = "%-7s %-9s %-5s %-5s %11s %11s %7s %7s" % ("access", "io", "xfer", "phase", "feedbench",
                                                "fio", "fb/fio", "fio ms")
if have_ior:
    head += " %11s %7s" % ("IOR", "fb/IOR")
print(head + "   (medians, MiB/s)")
for (access, io, x), c in cases.items():
    for k, phase in enumerate(("write", "read")):
        fb = statistics.median(c["feedbench"][k])
        fio = statistics.median(c["fio"][k])
        ms = statistics.median(c["fio"][k + 2])
        line = "%-7s %-9s %-5s %-5s %11.1f %11.1f %7.3f %7.0f" % (access, io, x, phase, fb, fio,
                                                              fb / fio, ms)
        if have_ior:
            ior = statistics.median(c["ior"][k])
            line += " %11.1f %7.3f" % (ior, fb / ior)
        print(line)
PY
echo "($RANKS ranks, block $BLOCK per rank, one segment, fsync at the end of the write, read-back"
echo " of the next rank's block; $ROUNDS alternating rounds; load average $LOAD_BEFORE before,"
echo " $LOAD_AFTER after, on $(nproc) CPUs; files in $T on $(df -T "$T" | awk 'NR == 2 {print $2}'))"
echo "(fio times a phase to the millisecond: 'fio ms' says how fine its figure is; a phase"
echo " of a few ms, such as a read-back from the page cache, is not a measurement of storage)"
[ -n "$IOR" ] || echo "(no IOR here: fio stands in for IOR)"
