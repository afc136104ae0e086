#!/bin/bash
# feedbench's `[workload] type = ior` against fio, and against IOR where IOR is available, on the
# same pattern: every rank writes its block sequentially in transfer-size calls, fsyncs at the
# end of the write (IOR -e), then reads back with IOR -C task reordering, which on one node
# reads each rank's own block: IOR moves the reader by the ranks per node (it finds the ranks
# mapped to nodes in blocks), which on one node is all ranks and wraps to the writer itself
# (strace: rank 0 opens ior.00000000 for both phases). feedbench's ior reads the next rank's
# data on one node ([ior] reorder), so the script runs it with reorder = false and fio reads
# each job's own range: the same bytes by the same rank for all three. One file per process (IOR -F) or one shared file
# (rank r's block at offset r x block), buffered or O_DIRECT (IOR -B).
#
#   tests/perf/ior_vs_feedbench.sh [--ranks 2] [--block 64m] [--xfer 1m,64k]
#       [--access fpp,shared] [--io buffered,direct] [--order seq,random] [--rounds 5] [--discard 0]
#       [--dir FOLDER] [--feedbench PATH] [--feedbench2 PATH] [--no-fio]
#   tests/perf/ior_vs_feedbench.sh --mdtest FILES [--unique yes,no] [--ranks 2] [--rounds 5]
#       [--discard 0]
#
# Every case runs --rounds (>= 3) rounds, the tools (fio, IOR, IOR without refill, feedbench2,
# feedbench) in an order rotated by one each round: over n rounds of n tools every tool runs
# once in every position (two tools: they alternate), so neither drift of the machine nor the
# place after another tool's clean-up favours one side. --no-fio leaves fio out (a long series against IOR alone).
# --feedbench2 PATH runs a second feedbench build (another commit) as one more tool in the same
# rounds, so a change shows beside IOR under the same conditions (ratios fb/fb2 and fb2/IOR).
# --discard N runs N more rounds first and leaves them out of the table (the first run after
# other work has been seen to create files up to 12 x faster than every later one). A
# row shows the median over rounds of each tool's write and read bandwidth (MiB/s = 2^20 B/s,
# bytes of all ranks over the slowest rank's phase time) and, per peer, the ratio feedbench /
# peer of each round (the tools of one round are a pair): its median, its range and the 95 %
# interval of the median (order statistics of the paired ratios, distribution-free; it needs 6
# rounds or more, "n/a" below). A second table sets IOR's columns beside feedbench's, per case
# and phase: the median over rounds of each of bw(MiB/s), IOPS, Latency(s), open(s), wr/rd(s),
# close(s) and total(s) (IOR's per-iteration result line; feedbench's summary.json
# ior.results row, Latency its ior_latency_seconds, IOR's definition; fio: bandwidth and run
# time only) and the median [range] of the paired ratios feedbench / IOR, so the column where
# the two differ shows. IOR's hard pattern is `--access shared --xfer 47008`;
# `--order random` is IOR -z (feedbench [ior] random, fio randwrite/randread). The load
# average before and after is printed with the table.
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
# make), or else the source tarball in ../shared/peers/ beside the repository when it is
# there (built once under build/peers/; a clone without it skips IOR with a message); IOR then
# runs as `ior -a POSIX -w -r -C -Q 1 -g -e -b BLOCK -t XFER -s 1 [-F] [--posix.odirect] [-z]`.
# IOR_NOFILL=1 adds a third tool, "IOR without refill": a copy of that IOR source tree (under
# build/peers/ior-nofill, never the tarball's folder) where update_write_memory_pattern, the
# refill of the transfer buffer before every write inside IOR's timed loop (WriteOrReadSingle),
# returns at once; its columns show what that refill costs (with IOR's default data packet
# type, timestamp, the refill already returns at once: the two IOR columns should agree).
#
# --mdtest FILES compares mdtest (built with IOR; MDTEST_BIN names another binary) with the
# metadata workload instead: `mdtest -n FILES -w 4096 -e 4096 -F [-u]` against
# configs/workloads/mdtest.ini with files_per_rank = FILES (shared_dir = true without -u), in
# --rounds alternating rounds (odd rounds mdtest first), printing per phase (create, stat,
# read, remove) each tool's median rate (all ranks' operations over the slowest rank's time,
# as both define it), the median ratio feedbench / mdtest, its range and the 95 % interval,
# and feedbench's slowest and fastest ranks' own times. Without mdtest it says so and exits 0.
# Not a ctest: timings do not belong in tests.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
FEEDBENCH=${FEEDBENCH:-$SRC/build/feedbench}
MPIEXEC=${MPIEXEC:-mpiexec}
RANKS=2 BLOCK=64m XFERS=1m,64k ACCESS=fpp,shared IOS=buffered,direct ORDERS=seq ROUNDS=5 DISCARD=0 DIR=
MD_FILES= MD_UNIQUE=yes,no NO_FIO=0 FEEDBENCH2=
while [ $# -gt 0 ]; do
	case $1 in
	--ranks) RANKS=$2; shift ;;
	--block) BLOCK=$2; shift ;;
	--xfer) XFERS=$2; shift ;;
	--access) ACCESS=$2; shift ;;
	--io) IOS=$2; shift ;;
	--order) ORDERS=$2; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	--discard) DISCARD=$2; shift ;;
	--fpp) ACCESS=fpp ;; # the options of the first version of this script
	--segments) [ "$2" = 1 ] || { echo "only --segments 1 (one block per rank)" >&2; exit 2; }; shift ;;
	--dir) DIR=$2; shift ;;
	--mdtest) MD_FILES=$2; shift ;;
	--unique) MD_UNIQUE=$2; shift ;;
	--feedbench) FEEDBENCH=$2; shift ;;
	--feedbench2) FEEDBENCH2=$2; shift ;;
	--no-fio) NO_FIO=1 ;;
	-h | --help) sed -n '2,65p' "$0"; exit 0 ;;
	*) echo "ior_vs_feedbench.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
[[ $DISCARD =~ ^[0-9]+$ ]] || { echo "ior_vs_feedbench.sh: --discard takes a count of rounds" >&2; exit 2; }
[ "$ROUNDS" -ge 3 ] || { echo "ior_vs_feedbench.sh: --rounds must be 3 or more (medians)" >&2; exit 2; }
[ -x "$FEEDBENCH" ] || { echo "ior_vs_feedbench.sh: no feedbench at $FEEDBENCH (build first)" >&2; exit 2; }
[ -z "$FEEDBENCH2" ] || [ -x "$FEEDBENCH2" ] || { echo "ior_vs_feedbench.sh: no feedbench at $FEEDBENCH2 (--feedbench2)" >&2; exit 2; }
command -v fio >/dev/null || { echo "ior_vs_feedbench.sh: fio is not installed (apt-get install fio)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

IOR=${IOR_BIN:-}
PEERS_TGZ=$(ls "$SRC"/../shared/peers/ior-*.tar.gz 2>/dev/null | head -1 || true)
if [ -z "$IOR" ] && [ -z "${IOR_SOURCE:-}" ] && [ -x "$SRC/build/peers/ior/src/ior" ]; then
	IOR_SOURCE=$SRC/build/peers/ior # built before
elif [ -z "$IOR" ] && [ -z "${IOR_SOURCE:-}" ] && [ -n "$PEERS_TGZ" ]; then
	IOR_SOURCE=$SRC/build/peers/ior
	if [ ! -x "$IOR_SOURCE/src/ior" ]; then
		echo "building IOR from $PEERS_TGZ in $SRC/build/peers (about a minute)" >&2
		rm -rf "$SRC/build/peers" && mkdir -p "$SRC/build/peers"
		tar xzf "$PEERS_TGZ" -C "$SRC/build/peers"
	fi
elif [ -z "$IOR" ] && [ -z "${IOR_SOURCE:-}" ]; then
	echo "skipping IOR: no ../shared/peers/ior-*.tar.gz beside the repository, no IOR_SOURCE or IOR_BIN" >&2
fi
if [ -z "$IOR" ] && [ -n "${IOR_SOURCE:-}" ]; then
	if [ ! -x "$IOR_SOURCE/src/ior" ]; then
		(cd "$IOR_SOURCE" && { [ -x configure ] || ./bootstrap; } && ./configure --quiet &&
			make -j"$(nproc)" --quiet) >&2
	fi
	IOR=$IOR_SOURCE/src/ior
fi
# IOR_NOFILL=1: the same IOR with its per-transfer refill made a no-op, built from a copy of the
# source tree (the tree IOR was built in is left as it is)
IOR_NF=
if [ "${IOR_NOFILL:-0}" = 1 ] && [ -z "$MD_FILES" ]; then
	if [ -z "${IOR_SOURCE:-}" ] || [ ! -f "$IOR_SOURCE/src/utilities.c" ]; then
		echo "ior_vs_feedbench.sh: IOR_NOFILL=1 needs IOR's source (IOR_SOURCE or ../shared/peers), not IOR_BIN" >&2
		exit 2
	fi
	NF=$SRC/build/peers/ior-nofill
	if [ ! -x "$NF/src/ior" ]; then
		echo "building IOR without refill in $NF" >&2
		rm -rf "$NF" && cp -a "$IOR_SOURCE" "$NF"
		sed -i '/^void update_write_memory_pattern(.*{$/a\
  return; /* ior_vs_feedbench.sh IOR_NOFILL: no refill before each write */' "$NF/src/utilities.c"
		grep -q 'IOR_NOFILL: no refill' "$NF/src/utilities.c" ||
			{ echo "ior_vs_feedbench.sh: could not patch $NF/src/utilities.c" >&2; exit 2; }
		rm -f "$NF/src/ior" && (cd "$NF" && make -j"$(nproc)" --quiet) >&2
	fi
	IOR_NF=$NF/src/ior
fi

# mdtest_run UNIQUE(yes|no): the rates of create, stat, read and remove (ops/s), mdtest's
# SUMMARY rate table (its Max column: one iteration)
run_mdtest() {
	local args=(-n "$MD_FILES" -w 4096 -e 4096 -F -d "$T/md")
	[ "$1" = yes ] && args+=(-u)
	rm -rf "$T/md" && mkdir -p "$T/md"
	"$MPIEXEC" --oversubscribe -n "$RANKS" "$MDTEST" "${args[@]}" >"$T/mdtest.out"
	awk '$1 == "File" && $2 == "creation" {c = $3} $1 == "File" && $2 == "stat" {s = $3}
		$1 == "File" && $2 == "read" {r = $3} $1 == "File" && $2 == "removal" {d = $3}
		END {print c, s, r, d, "- -"}' "$T/mdtest.out"
	rm -rf "$T/md"
}

# run_fbmeta UNIQUE: the same rates of the metadata workload, then its slowest and fastest
# ranks' own create times
run_fbmeta() {
	local shared=true
	[ "$1" = yes ] && shared=false
	rm -rf "$T/fbm" "$T/fbmres"
	"$MPIEXEC" --oversubscribe -n "$RANKS" "$FEEDBENCH" run "$SRC/configs/workloads/mdtest.ini" \
		--set "dataset.data_dir=$T/fbm" --set "output.dir=$T/fbmres" --set output.plots=false \
		--set "metadata.files_per_rank=$MD_FILES" --set metadata.file_size=4096 \
		--set "metadata.shared_dir=$shared" --quiet >/dev/null
	python3 - "$T"/fbmres/*/summary.json <<'PY'
import json, sys
rows = {r["phase"]: r for r in json.load(open(sys.argv[1]))["metadata"]["results"]}
ph = ("create", "stat", "read", "remove")
print(*[rows[p]["rate_per_second"] for p in ph], rows["create"]["slowest_rank_seconds"],
      rows["create"]["fastest_rank_seconds"])
PY
	rm -rf "$T/fbm" "$T/fbmres"
}

if [ -n "$MD_FILES" ]; then
	MDTEST=${MDTEST_BIN:-}
	[ -z "$MDTEST" ] && [ -n "$IOR" ] && MDTEST=$(dirname "$IOR")/mdtest
	if [ -z "$MDTEST" ] || [ ! -x "$MDTEST" ]; then
		echo "skipping mdtest: not built (no ../shared/peers/ior-*.tar.gz, IOR_SOURCE or MDTEST_BIN)"
		exit 0
	fi
	T=${DIR:-$(mktemp -d "${TMPDIR:-/tmp}/fb_md_vs_XXXXXX")}
	mkdir -p "$T"
	[ -n "$DIR" ] || trap 'rm -rf "$T"' EXIT
	: >"$T/md.tsv"
	LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
	IFS=, read -r -a uniques <<<"$MD_UNIQUE"
	for u in "${uniques[@]}"; do
		for ((round = 1 - DISCARD; round <= ROUNDS; round++)); do
			if ((round % 2)); then order="mdtest fbmeta"; else order="fbmeta mdtest"; fi
			for tool in $order; do
				read -r c st rd rm s f <<<"$(run_"$tool" "$u")" # waits for the tool to clean up
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$u" "$round" "$tool" "$c" \
					"$st" "$rd" "$rm" "$s" "$f" >>"$T/md$( ((round > 0)) || echo .discarded).tsv"
			done
		done
		echo "done: mdtest -u $u ($ROUNDS rounds)" >&2
	done
	LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
	python3 - "$T/md.tsv" "$HERE" <<'PY'
import collections, statistics, sys
sys.path.insert(0, sys.argv[2])
from paired import ratio_cells
d = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    u, rnd, tool, *v = l.split()
    d[(u, tool)][int(rnd)] = v
print("%-7s %-7s %11s %11s %7s %13s %13s   (ops/s, medians; ratios of paired rounds)" %
      ("-u", "phase", "feedbench", "mdtest", "fb/md", "range", "95% CI"))
for u in dict.fromkeys(k[0] for k in d):
    fb, md = d[(u, "fbmeta")], d[(u, "mdtest")]
    for i, ph in enumerate(("create", "stat", "read", "remove")):
        rs = [float(fb[r][i]) / float(md[r][i]) for r in fb if r in md and float(md[r][i]) > 0]
        print("%-7s %-7s %11.1f %11.1f %s" % (u, ph,
              statistics.median(float(v[i]) for v in fb.values()),
              statistics.median(float(v[i]) for v in md.values()), ratio_cells(rs)))
    print("%-7s feedbench create, slowest / fastest rank's own time (s, medians): %.4f / %.4f" % (u,
          statistics.median(float(v[4]) for v in fb.values()),
          statistics.median(float(v[5]) for v in fb.values())))
PY
	echo "($RANKS ranks, $MD_FILES files of 4096 bytes per rank; $ROUNDS alternating rounds after $DISCARD discarded; load"
	echo " average $LOAD_BEFORE before, $LOAD_AFTER after, on $(nproc) CPUs; files in $T on"
	echo " $(df -T "$T" | awk 'NR == 2 {print $2}'); $(grep -o "mdtest-[^ ]*" "$T/mdtest.out" | head -1))"
	exit 0
fi
if [ -n "$IOR" ]; then
	echo "IOR: $IOR$([ "$NO_FIO" = 1 ] || echo "; fio is shown beside it")"
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
	local access=$1 xfer=$2 direct=$3 phase=$4 rw=$4 args=() r owner
	[ "$ORDER" = random ] && rw=rand$phase
	args=(--output-format=json --group_reporting --ioengine=psync --bs="$xfer" --direct="$direct"
		--fallocate=none --invalidate=0 --size="$B" --rw="$rw" --norandommap --randrepeat=0)
	[ "$phase" = write ] && args+=(--end_fsync=1)
	for ((r = 0; r < RANKS; r++)); do
		owner=$r
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
	# fio's columns: its bandwidth and its run time (ms) as total(s); no others
	echo "$w $r $w,-,-,-,-,-,$(awk "BEGIN {print $wms / 1000}") $r,-,-,-,-,-,$(awk "BEGIN {print $rms / 1000}")"
}

run_feedbench() {
	local fpp=false direct=false
	[ "$1" = fpp ] && fpp=true
	[ "$3" = 1 ] && direct=true
	rm -rf "$T/fb" "$T/fbres"
	"$MPIEXEC" --oversubscribe -n "$RANKS" "$FEEDBENCH" run "$SRC/configs/workloads/ior.ini" \
		--set "dataset.data_dir=$T/fb" --set "output.dir=$T/fbres" --set output.plots=false \
		--set "ior.block_size=$B" --set "ior.transfer_size=$2" --set ior.segments=1 \
		--set "ior.file_per_process=$fpp" --set ior.verify=false --set ior.reorder=false \
		--set ior.fsync=true --set "storage.direct=$direct" \
		--set "ior.random=$([ "$ORDER" = random ] && echo true || echo false)" --quiet >/dev/null
	python3 - "$T"/fbres/*/summary.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
m = j["metric"]
rows = {r["access"]: r for r in j["ior"]["results"]}
keys = ("bw_MiB_per_second", "iops", "ior_latency_seconds", "open_seconds", "wr_rd_seconds",
        "close_seconds", "total_seconds")
print(m["ior_write_bandwidth_MiB_per_second"], m["ior_read_bandwidth_MiB_per_second"],
      *[",".join("%.9g" % rows[a][k] for k in keys) for a in ("write", "read")])
PY
	rm -rf "$T/fb" "$T/fbres"
}

run_iornf() { IOR=$IOR_NF run_ior "$@"; }
run_fb2() { FEEDBENCH=$FEEDBENCH2 run_feedbench "$@"; }

run_ior() {
	local args=(-a POSIX -w -r -C -Q 1 -g -e -b "$B" -t "$2" -s 1 -o "$T/ior/testfile")
	[ "$1" = fpp ] && args+=(-F)
	[ "$ORDER" = random ] && args+=(-z)
	[ "$3" = 1 ] && args+=(--posix.odirect) # IOR 4: -B is gone
	rm -rf "$T/ior" && mkdir -p "$T/ior"
	"$MPIEXEC" --oversubscribe -n "$RANKS" "$IOR" "${args[@]}" >"$T/ior.out"
	# IOR's summary lines: "write  <max> <min> <mean> ..." (MiB/s): the mean column; then its
	# per-iteration result lines (access bw IOPS Latency block xfer open wr/rd close total
	# iter, 11 fields) as the columns bw,IOPS,Latency,open,wr/rd,close,total
	awk '$1 == "write" && NF > 11 && $2 ~ /^[0-9.]+$/ {w = $4} $1 == "read" && NF > 11 &&
		$2 ~ /^[0-9.]+$/ {r = $4}
		NF == 11 && ($1 == "write" || $1 == "read") && $11 ~ /^[0-9]+$/ {
			c[$1] = $2 "," $3 "," $4 "," $7 "," $8 "," $9 "," $10 }
		END {print w, r, c["write"], c["read"]}' "$T/ior.out"
	rm -rf "$T/ior"
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
IFS=, read -r -a xfers <<<"$XFERS"
IFS=, read -r -a accesses <<<"$ACCESS"
IFS=, read -r -a ios <<<"$IOS"
IFS=, read -r -a orders <<<"$ORDERS"
for ORDER in "${orders[@]}"; do
for access in "${accesses[@]}"; do
	for io in "${ios[@]}"; do
		direct=0
		[ "$io" = direct ] && direct=1
		for x in "${xfers[@]}"; do
			xb=$(to_bytes "$x")
			for ((round = 1 - DISCARD; round <= ROUNDS; round++)); do
				peers=()
				[ "$NO_FIO" = 1 ] || peers+=(fio)
				[ -n "$IOR" ] && peers+=(ior)
				[ -n "$IOR_NF" ] && peers+=(iornf)
				[ -n "$FEEDBENCH2" ] && peers+=(fb2)
				# rotated: over n rounds every tool runs once in every position
				tools=("${peers[@]}" feedbench)
				nt=${#tools[@]}
				order=
				for ((i = 0; i < nt; i++)); do
					order="$order ${tools[((i + (round % nt + nt) % nt) % nt)]}"
				done
				for tool in $order; do
					read -r w r wcols rcols <<<"$(run_"$tool" "$access" "$xb" "$direct")" # waits for its rm
					printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$access/$ORDER" "$io" \
						"$x" "$round" "$tool" "$w" "$r" "${wcols:--}" "${rcols:--}" >>"$RES$( ((round > 0)) || echo .discarded)"
				done
			done
			echo "done: $access $ORDER $io xfer $x ($ROUNDS rounds)" >&2
		done
	done
done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$RES" "$HERE" <<'PY'
import collections, statistics, sys
sys.path.insert(0, sys.argv[2])
from paired import ratio_cells
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
cases = collections.OrderedDict()
for access, io, x, rnd, tool, w, r, wc, rc in rows:
    c = cases.setdefault((access, io, x), collections.defaultdict(dict))
    c[tool][int(rnd)] = (float(w), float(r), wc.split(","), rc.split(","))
names = {"fio": ("fio", "fb/fio"), "ior": ("IOR", "fb/IOR"), "iornf": ("IOR-nofill", "fb/nf"),
         "fb2": ("feedbench2", "fb/fb2")}
peers = [p for p in names if any(p in c for c in cases.values())]

def ratio(c, a, b, k):
    rs = [c[a][r][k] / c[b][r][k] for r in c[a] if r in c[b] and c[b][r][k] > 0]
    return ratio_cells(rs)

head = "%-14s %-9s %-6s %-5s %10s" % ("access/order", "io", "xfer", "phase", "feedbench")
for p in peers:
    head += " %10s %7s %13s %13s" % (names[p][0], names[p][1], "range", "95% CI")
if "ior" in peers and "iornf" in peers:
    head += " %7s %13s %13s" % ("IOR/nf", "range", "95% CI")
if "ior" in peers and "fb2" in peers:
    head += " %7s %13s %13s" % ("fb2/IOR", "range", "95% CI")
print(head + "   (medians, MiB/s; ratios of paired rounds)")
for (access, io, x), c in cases.items():
    for k, phase in enumerate(("write", "read")):
        med = lambda t: statistics.median(v[k] for v in c[t].values())
        line = "%-14s %-9s %-6s %-5s %10.1f" % (access, io, x, phase, med("feedbench"))
        for p in peers:
            line += " %10.1f %s" % (med(p), ratio(c, "feedbench", p, k))
        if "ior" in peers and "iornf" in peers:
            line += " %s" % ratio(c, "ior", "iornf", k)
        if "ior" in peers and "fb2" in peers:
            line += " %s" % ratio(c, "fb2", "ior", k)
        print(line)

# The columns of both tools side by side: per case and phase, each column's median over rounds
# (IOR's per-iteration line; feedbench's summary.json ior.results row, the same columns; fio:
# bandwidth and run time only) and the median of the paired ratios feedbench / IOR.
cols = ("bw(MiB/s)", "IOPS", "Latency(s)", "open(s)", "wr/rd(s)", "close(s)", "total(s)")
tools = ["feedbench"] + peers
def colmed(c, t, k, i):
    v = [float(x[2 + k][i]) for x in c[t].values() if x[2 + k][i] not in ("-", "")]
    return statistics.median(v) if v else None
def fmt(v):
    return "%12s" % "-" if v is None else "%12.6g" % v
print()
print("Columns, medians over rounds (Latency: IOR's, a rank's wr/rd over its calls, the least;")
print("feedbench's ior_latency_seconds); fb/IOR: median [range] of the paired ratios")
for (access, io, x), c in cases.items():
    for k, phase in enumerate(("write", "read")):
        print("%s %s xfer %s, %s:" % (access, io, x, phase))
        print("  %-11s" % "column" + "".join("%12s" % names.get(t, (t,))[0] for t in tools) +
              ("   fb/IOR median [range]" if "ior" in peers else ""))
        for i, col in enumerate(cols):
            line = "  %-11s" % col + "".join(fmt(colmed(c, t, k, i)) for t in tools)
            if "ior" in peers:
                rs = [float(c["feedbench"][r][2 + k][i]) / float(c["ior"][r][2 + k][i])
                      for r in c["feedbench"] if r in c["ior"]
                      and c["ior"][r][2 + k][i] not in ("-", "")
                      and float(c["ior"][r][2 + k][i]) > 0]
                if rs:
                    line += "   %7.3f [%.3f-%.3f]" % (statistics.median(rs), min(rs), max(rs))
            print(line)
PY
echo "($RANKS ranks, block $BLOCK per rank, one segment, fsync at the end of the write, read-back"
echo " of the rank's own block, as IOR -C on one node; $ROUNDS rotated rounds after $DISCARD discarded; load average $LOAD_BEFORE before,"
echo " $LOAD_AFTER after, on $(nproc) CPUs; files in $T on $(df -T "$T" | awk 'NR == 2 {print $2}'))"
echo "(fio times a phase to the millisecond: a phase of a few ms, such as a read-back from the"
echo " page cache, is not a measurement of storage)"
[ -n "$IOR" ] || echo "(no IOR here: fio stands in for IOR)"
[ -z "$FEEDBENCH2" ] || echo "(feedbench2: $FEEDBENCH2)"
[ -z "$IOR_NF" ] || echo "(IOR-nofill: $IOR_NF, IOR with update_write_memory_pattern returning at once)"
