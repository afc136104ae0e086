#!/bin/bash
# How close feedbench sits to the limits of this machine (the targets of
# docs/performance.md). A benchmark, not a test: it prints a table and never fails on a number.
#
#   tests/perf/limits.sh            (environment below; about 5 minutes on 2 cores)
#
# Every contender is launched the way the README launches feedbench, `mpiexec -n N CMD` (Open
# MPI's default binding: one core per rank at N <= 2), and again unbound (`--bind-to none`), so
# fio, the bare pread loop and feedbench always run under the same binding. Rounds alternate
# the order of the two contenders of a row (feedbench first in odd rounds); each round gives one
# ratio feedbench / reference, and the table prints the median and the range over rounds.
#
# Rows (cached = files read once beforehand, fio with invalidate=0; 1 rank):
#   cached 4 KiB          feedbench samples/s vs the bare pread loop (reads/s)   target >= 0.90
#   cached 128 KiB, 1 MiB feedbench MiB/s vs fio psync, read_threads 1 and 2    target >= 0.95
#                         (fio numjobs 1 and 2, the files split between jobs)
#   O_DIRECT 128 KiB      feedbench direct, 1 thread vs fio psync direct=1      0.97 - 1.03
#   io_uring O_DIRECT     backend = uring, io_depth D vs fio io_uring iodepth D  0.97 - 1.03
#                         random order on both sides (4 KiB and 128 KiB, D in URING_DEPTHS),
#                         and in file order at 4 KiB, QD8 (adjacent reads sent together merge
#                         in the block layer: /proc/diskstats shows it); fio with fixedbufs, as
#                         feedbench registers its batch buffers; feedbench batch max(D, 16) x
#                         prefetch FB_PREFETCH, 1 reader thread, so the ring holds >= 2 D reads
#   io_uring cached       the same in file order, buffered on page-cached files, QD 8
#   start-up + teardown   a tiny run (mpiexec -n 2) vs a bare MPI program       <= 50 ms more
#                         (plots = false; results fsynced as always; bare = MPI_Init + MPI_Finalize)
#   memory at 10 M samples  peak RSS per rank, shared, null back-end (mpiexec -n 2), against the
#                         same config at 1000 samples
#   IOR (POSIX, 1 MiB)    only with IOR_SRC=<IOR source folder>; else "skipped: no IOR source"
# CPU s/GiB: user + system CPU of the contender's whole process (pread_loop time: getrusage of
# the child), start-up included, over the bytes it read. feedbench's batch shape for the fio rows
# is FB_BATCH x FB_PREFETCH (default 4 x 2); the 4 KiB rows use batch FB_BATCH_4K (16, the shape
# the issue measured) and, for comparison, FB_BATCH: on one shared core every hand-off between
# the reader and the trainer is a context switch, so small batches cost feedbench more.
#
# Environment: FEEDBENCH (default build/feedbench), BUILD (build), ROUNDS (3), MIB (cached set,
# 256), EPOCHS (passes over the cached set, 3), DIRECT_MIB (256), DIRECT4K_MIB (O_DIRECT 4 KiB
# set, 64), URING_DEPTHS ("1 8 32"), FB_BATCH (4), FB_PREFETCH (2), WORK (scratch folder on a
# disk file system, default BUILD/limits-work), IOR_SRC, MPIEXEC (mpiexec), ROWS (all, or
# uring: only the io_uring rows), BINDINGS ("bound unbound"), FIO_URING_BATCH (empty: fio's
# defaults, one read per submission; same: all queued reads in one submission and up to the
# depth reaped at once, as feedbench does). The machine's load average is printed with the table: on a shared
# machine the spread over rounds says how much to trust a median.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
BUILD=${BUILD:-$SRC/build}
FEEDBENCH=${FEEDBENCH:-$BUILD/feedbench}
HELPER=$BUILD/pread_loop
BARE=$BUILD/bare_mpi
MPIEXEC=${MPIEXEC:-mpiexec}
ROUNDS=${ROUNDS:-3}
MIB=${MIB:-256}
EPOCHS=${EPOCHS:-3}
DIRECT_MIB=${DIRECT_MIB:-256}
DIRECT4K_MIB=${DIRECT4K_MIB:-64}
URING_DEPTHS=${URING_DEPTHS:-1 8 32}
ROWS=${ROWS:-all}
BINDINGS=${BINDINGS:-bound unbound}
FB_BATCH=${FB_BATCH:-4}
FB_BATCH_4K=${FB_BATCH_4K:-16}
FB_PREFETCH=${FB_PREFETCH:-2}
W=${WORK:-$BUILD/limits-work}

for x in "$FEEDBENCH" "$HELPER" "$BARE"; do
	[ -x "$x" ] || { echo "limits.sh: $x not built (cmake --build --preset ci)" >&2; exit 2; }
done
command -v fio >/dev/null || { echo "limits.sh: fio is not installed" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
mkdir -p "$W"
RES=$W/rounds.tsv
: >"$RES"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
T0=$(date +%s)

# launch BIND N CMD...: as the README launches (bound) or with --bind-to none (unbound).
launch() {
	local bind=$1 n=$2
	shift 2
	if [ "$bind" = unbound ]; then
		"$MPIEXEC" --bind-to none -n "$n" "$@"
	else
		"$MPIEXEC" -n "$n" "$@"
	fi
}

# ---- datasets ------------------------------------------------------------------------------
# ini NAME RECORD FILES SAMPLES_PER_FILE [extra INI lines]: a raw, per_rank, unshuffled config.
ini() {
	local name=$1 rec=$2 files=$3 spf=$4
	shift 4
	cat >"$W/$name.ini" <<INI
[workload]
name = $name
[dataset]
data_dir = $W/data/$name
format = raw
num_files_train = $files
num_samples_per_file = $spf
record_length_bytes = $rec
file_access = per_rank
verify = false
[reader]
batch_size = $FB_BATCH
read_threads = 1
prefetch_size = $FB_PREFETCH
file_shuffle = off
sample_shuffle = off
[train]
epochs = $EPOCHS
computation_time = 0
emulate_copy = false
exclude_start_steps = 0
[output]
dir = $W/results
plots = false
$(printf '%s\n' "$@")
INI
	"$FEEDBENCH" generate "$W/$name.ini" --quiet >/dev/null 2>"$W/gen.err" ||
		{ cat "$W/gen.err" >&2; exit 1; }
}

ini small 4KiB 4 $((MIB * 256 / 2 / 4))        # MIB/2 MiB of 4 KiB samples
ini mid 128KiB 8 $((MIB * 8 / 8))               # MIB MiB of 128 KiB samples
ini dio 128KiB 4 $((DIRECT_MIB * 8 / 4))        # DIRECT_MIB MiB for O_DIRECT
ini dio4k 4KiB 4 $((DIRECT4K_MIB * 256 / 4))    # DIRECT4K_MIB MiB for O_DIRECT 4 KiB
mapfile -t SMALL < <(ls "$W"/data/small/raw-*)
mapfile -t MID < <(ls "$W"/data/mid/raw-*)
mapfile -t DIO < <(ls "$W"/data/dio/raw-*)
mapfile -t DIO4K < <(ls "$W"/data/dio4k/raw-*)
BIG=()
if [ "$ROWS" = all ]; then
	ini big 1MiB 8 $((MIB / 8)) # MIB MiB of 1 MiB samples
	ini tiny 4KiB 2 4
	sed -i "s/^batch_size = .*/batch_size = 2/" "$W/tiny.ini"
	mapfile -t BIG < <(ls "$W"/data/big/raw-*)
fi
cat "${SMALL[@]}" "${MID[@]}" "${BIG[@]}" >/dev/null # cached rows read from the page cache

# ---- contenders: each prints "<rate> <cpu seconds> <bytes>" ----------------------------------
# fb BIND INI UNIT [--set ...]: UNIT mib (MiB/s) or sps (samples/s), from summary.json.
fb() {
	local bind=$1 cfg=$2 unit=$3
	shift 3
	rm -rf "$W/results"
	launch "$bind" 1 "$HELPER" time "$W/cpu" "$FEEDBENCH" run "$W/$cfg.ini" --quiet "$@" \
		>"$W/fb.out" 2>"$W/fb.err" || { cat "$W/fb.err" >&2; exit 1; }
	python3 - "$W"/results/*/summary.json "$W/cpu" "$unit" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["metric"]
wall, usr, sys_, _ = map(float, open(sys.argv[2]).read().split())
rate = m["train_samples_per_second"] if sys.argv[3] == "sps" else m["train_bandwidth_MiB_per_second"]
print(rate, usr + sys_, m["train_bytes_read"])
PY
}

# fio_c BIND ENGINE BS DIRECT JOBS DEPTH LOOPS FILES...: MiB/s; with JOBS 2 the files are split
# between the jobs, so both sides read the same bytes.
fio_c() {
	local bind=$1 engine=$2 bs=$3 direct=$4 jobs=$5 depth=$6 loops=$7
	shift 7
	local files=("$@") n=$# args=() extra=()
	if [ "$jobs" -eq 1 ]; then
		args=(--name=r0 "--filename=$(IFS=:; echo "${files[*]}")")
	else
		local half=$((n / 2))
		args=(--name=r0 "--filename=$(IFS=:; echo "${files[*]:0:half}")"
		      --name=r1 "--filename=$(IFS=:; echo "${files[*]:half}")")
	fi
	[ "$engine" = io_uring ] && extra=(--fixedbufs=1)
	# FIO_URING_BATCH=same: fio submits and reaps as feedbench does (docs/storage.md)
	[ "$engine" = io_uring ] && [ "${FIO_URING_BATCH:-}" = same ] &&
		extra+=(--iodepth_batch_submit="$depth" --iodepth_batch_complete_min=1
			--iodepth_batch_complete_max="$depth")
	launch "$bind" 1 "$HELPER" time "$W/cpu" fio --output-format=json --rw="${FIO_RW:-read}" --bs="$bs" \
		--direct="$direct" --invalidate=0 --ioengine="$engine" --iodepth="$depth" \
		"${extra[@]}" --file_service_type="${FIO_FST:-sequential}" --group_reporting --loops="$loops" \
		--thread "${args[@]}" >"$W/fio.json" 2>"$W/fio.err" || { cat "$W/fio.err" >&2; exit 1; }
	python3 - "$W/fio.json" "$W/cpu" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
wall, usr, sys_, _ = map(float, open(sys.argv[2]).read().split())
print(r["bw_bytes"] / 1048576.0, usr + sys_, r["io_bytes"])
PY
}

# loop BIND BS PASSES FILES...: reads/s of the bare pread loop.
loop() {
	local bind=$1 bs=$2 passes=$3
	shift 3
	launch "$bind" 1 "$HELPER" pread "$bs" "$passes" "$@" >"$W/loop.out"
	read -r bytes reads secs cpu <"$W/loop.out"
	python3 -c "import sys; b,r,s,c=map(float,sys.argv[1:]); print(r/s, c, int(b))" \
		"$bytes" "$reads" "$secs" "$cpu"
}

# ---- one row: ROUNDS rounds per binding, alternating the order ------------------------------
# compare ROW FB_FUNC PEER_FUNC: the functions take BIND and print "<rate> <cpu> <bytes>".
compare() {
	local row=$1 fbf=$2 peerf=$3 bind r a b
	for bind in $BINDINGS; do
		for ((r = 1; r <= ROUNDS; r++)); do
			if ((r % 2)); then
				a=$($fbf "$bind")
				b=$($peerf "$bind")
			else
				b=$($peerf "$bind")
				a=$($fbf "$bind")
			fi
			printf '%s\t%s\t%d\t%s\t%s\n' "$row" "$bind" "$r" "${a// /$'\t'}" \
				"${b// /$'\t'}" >>"$RES"
		done
	done
}

# Rows. Passes are chosen so that each contender reads the same bytes.
fb_4k() { fb "$1" small sps --set "reader.batch_size=$FB_BATCH_4K"; }
fb_4k_small() { fb "$1" small sps; }
loop_4k() { loop "$1" 4096 "$EPOCHS" "${SMALL[@]}"; }
fb_128k_1() { fb "$1" mid mib; }
fio_128k_1() { fio_c "$1" psync 128k 0 1 1 "$EPOCHS" "${MID[@]}"; }
fb_128k_2() { fb "$1" mid mib --set reader.read_threads=2; }
fio_128k_2() { fio_c "$1" psync 128k 0 2 1 "$EPOCHS" "${MID[@]}"; }
fb_1m_1() { fb "$1" big mib; }
fio_1m_1() { fio_c "$1" psync 1m 0 1 1 "$EPOCHS" "${BIG[@]}"; }
fb_1m_2() { fb "$1" big mib --set reader.read_threads=2; }
fio_1m_2() { fio_c "$1" psync 1m 0 2 1 "$EPOCHS" "${BIG[@]}"; }
fb_dio() { fb "$1" dio mib --set storage.direct=true --set train.epochs=1; }
fio_dio() { fio_c "$1" psync 128k 1 1 1 1 "${DIO[@]}"; }
# io_uring at equal queue depth: uring_row ORDER DATASET DIRECT BS DEPTH LOOPS FILES... sets the
# two contenders of one row. ORDER rand: every sample once per pass in a random order on both
# sides (feedbench sample_shuffle and file_shuffle = seed; fio randread, a random file per read),
# so neither side's reads are adjacent; seq: in file order (feedbench unshuffled, fio read,
# file after file), where adjacent reads sent together may be merged by the block layer.
uring_row() {
	local order=$1 set=$2 direct=$3 bs=$4 depth=$5 loops=$6
	shift 6
	URING_ORDER=$order URING_SET=$set URING_DIRECT=$direct URING_BS=$bs URING_DEPTH=$depth
	URING_LOOPS=$loops URING_FILES=("$@")
}
fb_uring() {
	local dio=true shuf=off
	[ "$URING_DIRECT" = 1 ] || dio=false
	[ "$URING_ORDER" = rand ] && shuf=seed
	fb "$1" "$URING_SET" mib --set "storage.direct=$dio" --set "train.epochs=$URING_LOOPS" \
		--set storage.backend=uring --set "storage.io_depth=$URING_DEPTH" \
		--set "reader.batch_size=$((URING_DEPTH > 16 ? URING_DEPTH : 16))" \
		--set "reader.sample_shuffle=$shuf" --set "reader.file_shuffle=$shuf"
}
fio_uring() {
	local rw=read fst=sequential
	[ "$URING_ORDER" = rand ] && rw=randread fst=random
	FIO_RW=$rw FIO_FST=$fst fio_c "$1" io_uring "$URING_BS" "$URING_DIRECT" 1 "$URING_DEPTH" \
		"$URING_LOOPS" "${URING_FILES[@]}"
}

if [ "$ROWS" = all ]; then
	compare "cached 4 KiB, batch $FB_BATCH_4K vs pread loop" fb_4k loop_4k
	compare "cached 4 KiB, batch $FB_BATCH vs pread loop" fb_4k_small loop_4k
	compare "cached 128 KiB, 1 thread vs fio psync" fb_128k_1 fio_128k_1
	compare "cached 128 KiB, 2 threads vs fio psync x2" fb_128k_2 fio_128k_2
	compare "cached 1 MiB, 1 thread vs fio psync" fb_1m_1 fio_1m_1
	compare "cached 1 MiB, 2 threads vs fio psync x2" fb_1m_2 fio_1m_2
	compare "O_DIRECT 128 KiB, QD1 vs fio psync" fb_dio fio_dio
fi
if "$FEEDBENCH" list | grep -qE '^ +uring +built'; then
	for d in $URING_DEPTHS; do
		uring_row rand dio4k 1 4k "$d" 1 "${DIO4K[@]}"
		compare "io_uring O_DIRECT random 4 KiB, QD$d vs fio" fb_uring fio_uring
		uring_row rand dio 1 128k "$d" 1 "${DIO[@]}"
		compare "io_uring O_DIRECT random 128 KiB, QD$d vs fio" fb_uring fio_uring
	done
	uring_row seq dio4k 1 4k 8 1 "${DIO4K[@]}"
	compare "io_uring O_DIRECT in order 4 KiB, QD8 vs fio" fb_uring fio_uring
	uring_row seq small 0 4k 8 "$EPOCHS" "${SMALL[@]}"
	compare "io_uring cached 4 KiB, QD8 vs fio" fb_uring fio_uring
	uring_row seq mid 0 128k 8 "$EPOCHS" "${MID[@]}"
	compare "io_uring cached 128 KiB, QD8 vs fio" fb_uring fio_uring
else
	printf '%s\tskipped\t0\t%s\n' "io_uring vs fio io_uring" "uring back-end not built" >>"$RES"
fi
# ---- IOR: built from source when given --------------------------------------------------------
if [ "$ROWS" != all ]; then
	:
elif [ -n "${IOR_SRC:-}" ] && [ -d "$IOR_SRC" ]; then
	if [ ! -x "$W/ior/bin/ior" ]; then
		(cd "$IOR_SRC" && { [ -x configure ] || ./bootstrap; } &&
			./configure --prefix="$W/ior" >"$W/ior-build.log" 2>&1 &&
			make -j2 >>"$W/ior-build.log" 2>&1 && make install >>"$W/ior-build.log" 2>&1) ||
			{ echo "limits.sh: IOR did not build (see $W/ior-build.log)" >&2; exit 1; }
	fi
	"$W/ior/bin/ior" -a POSIX -w -k -t 1m -b "${MIB}m" -o "$W/ior.dat" >/dev/null
	ior_c() {
		launch "$1" 1 "$HELPER" time "$W/cpu" "$W/ior/bin/ior" -a POSIX -r -k -t 1m \
			-b "${MIB}m" -i "$EPOCHS" -o "$W/ior.dat" >"$W/ior.out" 2>&1
		python3 - "$W/ior.out" "$W/cpu" "$MIB" "$EPOCHS" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^read\s+([\d.]+)", text, re.M)  # IOR's summary: Mean MiB/s of the reads
wall, usr, sys_, _ = map(float, open(sys.argv[2]).read().split())
print(float(m.group(1)), usr + sys_, int(sys.argv[3]) * int(sys.argv[4]) * 1048576)
PY
	}
	compare "cached 1 MiB, 1 thread vs IOR POSIX" fb_1m_1 ior_c
else
	printf '%s\tskipped\t0\t%s\n' "cached 1 MiB vs IOR POSIX" "skipped: no IOR source (IOR_SRC)" \
		>>"$RES"
fi

# ---- start-up + teardown: a tiny run vs a bare MPI program, both as the README launches ----
# (ROWS=uring: only the io_uring rows; no start-up or memory rows)
for bind in bound unbound; do
	[ "$ROWS" = all ] || break
	for ((r = 1; r <= ROUNDS + 2; r++)); do
		s0=$(date +%s%N)
		rm -rf "$W/results"
		launch "$bind" 2 "$FEEDBENCH" run "$W/tiny.ini" --quiet --set train.epochs=1 \
			>/dev/null 2>"$W/fb.err" || { cat "$W/fb.err" >&2; exit 1; }
		s1=$(date +%s%N)
		launch "$bind" 2 "$BARE"
		s2=$(date +%s%N)
		printf 'start\t%s\t%d\t%s\t%s\n' "$bind" "$r" $(((s1 - s0) / 1000)) \
			$(((s2 - s1) / 1000)) >>"$RES"
	done
done

# ---- memory at 10 M samples: null back-end, shared, as the README launches (2 ranks) -------
# The same config at 10 M samples (10 000 files x 1000) and at 1000 samples (100 files x 10):
# the difference is what the dataset costs per rank (batch buffers and the rest are the same).
mem_run() { # mem_run NAME FILES SPF: peak RSS per rank, space separated
	ini "$1" 64 "$2" "$3" >/dev/null
	sed -i -e 's/^file_access = .*/file_access = shared/' -e 's/^epochs = .*/epochs = 1/' \
		-e 's/^batch_size = .*/batch_size = 64/' -e 's/^file_shuffle = .*/file_shuffle = seed/' \
		-e 's/^sample_shuffle = .*/sample_shuffle = seed/' "$W/$1.ini"
	printf '[storage]\nbackend = null\n' >>"$W/$1.ini"
	rm -rf "$W/results"
	launch bound 2 "$FEEDBENCH" run "$W/$1.ini" --quiet >/dev/null 2>"$W/fb.err" ||
		{ cat "$W/fb.err" >&2; exit 1; }
	python3 -c "import json,glob,sys; s=json.load(open(glob.glob(sys.argv[1])[0])); print(' '.join(str(r['peak_rss_bytes']) for r in s['ranks']))" "$W/results/*/summary.json"
}
if [ "$ROWS" = all ]; then
	mem_small=$(mem_run memsmall 100 10)
	mem_big=$(mem_run mem10m 10000 1000)
	printf 'memory\tbound\t1\t%s\t%s\n' "${mem_small// /,}" "${mem_big// /,}" >>"$RES"
fi

# ---- the table ---------------------------------------------------------------------------------
python3 - "$RES" "$LOAD0" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(($(date +%s) - T0))" \
	"$("$FEEDBENCH" --version)" "$(fio --version)" "$(nproc)" "$(uname -r)" "$ROUNDS" <<'PY'
import statistics, sys
from collections import OrderedDict
path, load0, load1, secs, fbv, fiov, ncpu, kern, rounds = sys.argv[1:]
rows = OrderedDict()
for line in open(path):
    f = line.rstrip("\n").split("\t")
    rows.setdefault(f[0], OrderedDict()).setdefault(f[1], []).append(f[2:])
GIB = float(1 << 30)
def med_range(v, fmt="{:.2f}"):
    if not v:
        return "-"
    return (fmt + " [" + fmt + "-" + fmt + "]").format(statistics.median(v), min(v), max(v))
targets = {"cached 4 KiB": ">= 0.90", "cached 128 KiB": ">= 0.95", "cached 1 MiB, 1 thread vs IOR": "(ref.)",
           "cached 1 MiB": ">= 0.95", "O_DIRECT": "0.97-1.03", "io_uring": "0.97-1.03"}
print(f"feedbench limits: {fbv}, {fiov}, {ncpu} cores, Linux {kern}; {rounds} rounds per binding")
print(f"load average {load0} at start, {load1} at the end ({secs} s): other jobs share this machine")
print()
hdr = f"{'row':46} {'binding':8} {'ratio fb/ref: median [range]':30} {'target':10} {'fb rate':>10} {'ref rate':>10} {'CPU s/GiB fb':>12} {'ref':>6}"
print(hdr)
print("-" * len(hdr))
for row, binds in rows.items():
    if row in ("start", "memory"):
        continue
    for bind, rs in binds.items():
        if bind == "skipped":
            print(f"{row:46} {rs[0][1]}")
            continue
        ratio = [float(r[1]) / float(r[4]) for r in rs]
        cfb = [float(r[2]) / (float(r[3]) / GIB) for r in rs]
        cref = [float(r[5]) / (float(r[6]) / GIB) for r in rs]
        tgt = next((t for k, t in targets.items() if row.startswith(k)), "")
        print(f"{row:46} {bind:8} {med_range(ratio):30} {tgt:10} "
              f"{statistics.median(float(r[1]) for r in rs):10.0f} "
              f"{statistics.median(float(r[4]) for r in rs):10.0f} "
              f"{statistics.median(cfb):12.3f} {statistics.median(cref):6.3f}")
print("  rates: MiB/s (the pread loop row: samples/s); CPU: user + system of the whole process, start-up included")
print()
for bind, rs in rows.get("start", {}).items():
    fbw = [int(r[1]) / 1000 for r in rs]
    bare = [int(r[2]) / 1000 for r in rs]
    over = [a - b for a, b in zip(fbw, bare)]
    print(f"{'start-up + teardown, tiny run vs bare MPI (-n 2)':46} {bind:8} "
          f"+{med_range(over, '{:.0f}')} ms over {statistics.median(bare):.0f} ms   target <= +50 ms")
for bind, rs in rows.get("memory", {}).items():
    small = [int(x) for x in rs[0][1].split(",")]; big = [int(x) for x in rs[0][2].split(",")]
    print(f"{'memory, 10 M samples shared, null back-end':46} {bind:8} peak RSS per rank "
          f"{', '.join(f'{m / 2**20:.1f}' for m in big)} MiB; at 1000 samples "
          f"{', '.join(f'{m / 2**20:.1f}' for m in small)} MiB: the dataset costs "
          f"+{(max(big) - max(small)) / 2**20:.1f} MiB per rank (10 000 files, 10 M samples)")
PY
