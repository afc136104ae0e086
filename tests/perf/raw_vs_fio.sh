#!/bin/bash
# Harness overhead benchmark (the targets of docs/performance.md): feedbench's raw reader
# against fio and against a bare pread loop, reading the same files with the same block size.
#
#   tests/perf/raw_vs_fio.sh [--feedbench PATH] [--dir DATA_FOLDER] [--mib 512] [--passes 20]
#                            [--direct-passes 3]
#
# Rows (1 rank; feedbench: computation_time 0, verify false, emulate_copy false, no shuffle,
# so it reads each file front to back like fio's sequential read):
#   cached   256 KiB x 1 thread   feedbench read_threads 1, batch 1, prefetch 1 vs fio
#                                 numjobs 1 (same buffer footprint)               target >= 0.95
#                                 (and batch 16 x prefetch 4: the DataLoader shape, for reference)
#   cached   256 KiB x 2 threads  feedbench read_threads 2 vs fio numjobs 2      target >= 0.95
#                                 (feedbench's trainer thread is a third thread: on a 2-core
#                                 machine it shares the cores with the two readers)
#   O_DIRECT 256 KiB x 1 thread   feedbench direct = true vs fio direct=1        target 0.97-1.03
#   cached   4 KiB   x 1 thread   feedbench samples/s vs a C pread loop          target >= 0.90
#                                 (and vs fio bs=4k, for reference)
# "cached": the files are read once before timing and fio runs with invalidate=0, so every
# contender reads from the page cache; O_DIRECT bypasses it. Each figure is the aggregate of
# --passes passes (--direct-passes for O_DIRECT): total bytes / total time, over epochs for
# feedbench (train_bandwidth_MiB_per_second, train_samples_per_second), loops for fio and the
# pread loop. A cached pass takes tens of milliseconds, too short to time alone.
# Not a ctest: timings do not belong in tests.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
FEEDBENCH=${FEEDBENCH:-}
DATA=
MIB=512
PASSES=20
DIRECT_PASSES=3
while [ $# -gt 0 ]; do
	case $1 in
	--feedbench) FEEDBENCH=$2; shift 2 ;;
	--dir) DATA=$2; shift 2 ;;
	--mib) MIB=$2; shift 2 ;;
	--passes) PASSES=$2; shift 2 ;;
	--direct-passes) DIRECT_PASSES=$2; shift 2 ;;
	-h | --help) sed -n '2,24p' "$0"; exit 0 ;;
	*) echo "raw_vs_fio.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
if [ -z "$FEEDBENCH" ]; then
	for b in "$SRC"/build/feedbench "$SRC"/build-*/feedbench; do
		[ -x "$b" ] && FEEDBENCH=$b && break
	done
fi
[ -x "${FEEDBENCH:-}" ] || { echo "raw_vs_fio.sh: no feedbench binary (use --feedbench)" >&2; exit 2; }
command -v fio >/dev/null || { echo "raw_vs_fio.sh: fio is not installed" >&2; exit 2; }
command -v python3 >/dev/null || { echo "raw_vs_fio.sh: python3 is needed" >&2; exit 2; }
CC=${CC:-cc}

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
W=$(mktemp -d "${TMPDIR:-/tmp}/fb_perf_XXXXXX")
[ -n "$DATA" ] || DATA=$W/data
mkdir -p "$DATA"
trap 'rm -rf "$W"' EXIT

# ---- the bare pread loop --------------------------------------------------------------------
cat >"$W/pread_loop.c" <<'C'
/* Reads every file front to back in BS-byte preads, PASSES times; prints the totals as
 * "<bytes> <reads> <seconds>". The floor for any reader of the same files. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	size_t bs = strtoul(argv[1], NULL, 10);
	int passes = atoi(argv[2]);
	char *buf = aligned_alloc(4096, bs);
	unsigned long long b = 0, r = 0;
	double t0 = now();

	for (int p = 0; p < passes; p++) {
		for (int i = 3; i < argc; i++) {
			int fd = open(argv[i], O_RDONLY);
			ssize_t n;
			off_t off = 0;
			if (fd < 0) {
				perror(argv[i]);
				return 1;
			}
			while ((n = pread(fd, buf, bs, off)) > 0) {
				off += n;
				b += (unsigned long long)n;
				r++;
			}
			close(fd);
		}
	}
	printf("%llu %llu %.9f\n", b, r, now() - t0);
	return 0;
}
C
"$CC" -O2 -o "$W/pread_loop" "$W/pread_loop.c"

# ---- datasets ---------------------------------------------------------------------------------
# write_config NAME RECORD FILES SAMPLES_PER_FILE [KEY=VALUE...]: the feedbench side of a row.
write_config() {
	local name=$1 rec=$2 files=$3 spf=$4
	shift 4
	{
		cat <<INI
[workload]
name = $name
[dataset]
data_dir = $DATA/$name
format = raw
num_files_train = $files
num_samples_per_file = $spf
record_length_bytes = $rec
file_access = per_rank
verify = false
[reader]
batch_size = 16
read_threads = 1
prefetch_size = 4
file_shuffle = off
sample_shuffle = off
[train]
epochs = $PASSES
computation_time = 0
emulate_copy = false
exclude_start_steps = 0
[output]
dir = $W/results
plots = false
INI
	} >"$W/$name.ini"
}

# feedbench_rate CONFIG EPOCHS [--set ...]: "<MiB/s> <samples/s>" over all epochs.
feedbench_rate() {
	local ini=$1 epochs=$2
	shift 2
	rm -rf "$W/results"
	"$FEEDBENCH" run "$ini" --quiet --set "train.epochs=$epochs" "$@" >"$W/fb.out" \
		2>"$W/fb.err" || {
		cat "$W/fb.err" >&2
		exit 1
	}
	python3 - "$W"/results/*/summary.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["metric"]
print(m["train_bandwidth_MiB_per_second"], m["train_samples_per_second"])
PY
}

# fio_rate BS DIRECT NUMJOBS LOOPS FILES...: "<MiB/s> <IOPS>" over LOOPS passes; with NUMJOBS 2
# the files are split between the jobs, so both sides read the same bytes in total.
fio_rate() {
	local bs=$1 direct=$2 jobs=$3 loops=$4
	shift 4
	local files=("$@")
	local n=${#files[@]} args=()
	if [ "$jobs" -eq 1 ]; then
		args=(--name=r0 "--filename=$(IFS=:; echo "${files[*]}")")
	else
		local half=$((n / 2))
		args=(--name=r0 "--filename=$(IFS=:; echo "${files[*]:0:half}")"
		      --name=r1 "--filename=$(IFS=:; echo "${files[*]:half}")")
	fi
	fio --output-format=json --rw=read --bs="$bs" --direct="$direct" --invalidate=0 \
		--ioengine=psync --file_service_type=sequential --group_reporting --loops="$loops" \
		--thread "${args[@]}" >"$W/fio.json"
	python3 - "$W/fio.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
print(r["bw_bytes"] / 1048576.0, r["iops"])
PY
}

files_of() { ls "$DATA/$1"/raw-*; }
warm() { cat "$@" >/dev/null; }
ratio() { python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.3f}')" "$1" "$2"; }

# 256 KiB records: MIB MiB in 8 files.
big_spf=$((MIB * 4 / 8))
write_config big 256KiB 8 "$big_spf"
"$FEEDBENCH" generate "$W/big.ini" --quiet >/dev/null 2>"$W/gen.err" || { cat "$W/gen.err"; exit 1; }
# 4 KiB records: MIB/2 MiB in 4 files.
small_spf=$((MIB * 256 / 2 / 4))
write_config small 4KiB 4 "$small_spf"
"$FEEDBENCH" generate "$W/small.ini" --quiet >/dev/null 2>"$W/gen.err" || { cat "$W/gen.err"; exit 1; }
mapfile -t BIG < <(files_of big)
mapfile -t SMALL < <(files_of small)

printf 'feedbench %s vs %s on %s (%s); %d passes cached, %d O_DIRECT\n' \
	"$("$FEEDBENCH" --version | awk '{print $2}')" "$(fio --version)" \
	"$(df -T "$DATA" | awk 'NR == 2 {print $2}')" "$DATA" "$PASSES" "$DIRECT_PASSES"
printf 'dataset: %d x %d x 256 KiB (%d MiB); %d x %d x 4 KiB (%d MiB); %d cores\n\n' \
	8 "$big_spf" "$MIB" 4 "$small_spf" $((MIB / 2)) "$(nproc)"
printf '%-34s %14s %14s %8s %s\n' "row" "feedbench" "reference" "ratio" "target"

warm "${BIG[@]}"
# Like for like: one batch of one sample in flight, so feedbench's destination buffer is one
# 256 KiB block, as fio's is: the difference is the harness.
read -r fb_bw _ < <(feedbench_rate "$W/big.ini" "$PASSES" --set reader.batch_size=1 \
	--set reader.prefetch_size=1)
read -r fio_bw _ < <(fio_rate 256k 0 1 "$PASSES" "${BIG[@]}")
printf '%-34s %9.1f MiB/s %9.1f MiB/s %8s %s\n' "cached 256KiB 1 thread vs fio" \
	"$fb_bw" "$fio_bw" "$(ratio "$fb_bw" "$fio_bw")" ">= 0.95"
# DataLoader-shaped: batch 16 x prefetch 4 = 16 MiB of batch buffers, which the reads fill
# cache-cold; the cost a real loader with that prefetch depth pays too (not a harness cost).
read -r fb_bw _ < <(feedbench_rate "$W/big.ini" "$PASSES")
printf '%-34s %9.1f MiB/s %9.1f MiB/s %8s %s\n' "  same, batch 16 x prefetch 4" \
	"$fb_bw" "$fio_bw" "$(ratio "$fb_bw" "$fio_bw")" "(reference)"

read -r fb_bw _ < <(feedbench_rate "$W/big.ini" "$PASSES" --set reader.read_threads=2)
read -r fio_bw _ < <(fio_rate 256k 0 2 "$PASSES" "${BIG[@]}")
printf '%-34s %9.1f MiB/s %9.1f MiB/s %8s %s\n' "cached 256KiB 2 threads vs fio" \
	"$fb_bw" "$fio_bw" "$(ratio "$fb_bw" "$fio_bw")" ">= 0.95"

read -r fb_bw _ < <(feedbench_rate "$W/big.ini" "$DIRECT_PASSES" --set storage.direct=true)
read -r fio_bw _ < <(fio_rate 256k 1 1 "$DIRECT_PASSES" "${BIG[@]}")
printf '%-34s %9.1f MiB/s %9.1f MiB/s %8s %s\n' "O_DIRECT 256KiB 1 thread vs fio" \
	"$fb_bw" "$fio_bw" "$(ratio "$fb_bw" "$fio_bw")" "0.97 - 1.03"

warm "${SMALL[@]}"
read -r _ fb_sps < <(feedbench_rate "$W/small.ini" "$PASSES")
read -r _ reads secs < <("$W/pread_loop" 4096 "$PASSES" "${SMALL[@]}")
loop_sps=$(python3 -c "import sys; print(int(sys.argv[1]) / float(sys.argv[2]))" "$reads" "$secs")
printf '%-34s %10.0f /s   %10.0f /s   %8s %s\n' "cached 4KiB samples vs pread loop" \
	"$fb_sps" "$loop_sps" "$(ratio "$fb_sps" "$loop_sps")" ">= 0.90"
read -r _ fio_iops < <(fio_rate 4k 0 1 "$PASSES" "${SMALL[@]}")
printf '%-34s %10.0f /s   %10.0f /s   %8s %s\n' "cached 4KiB samples vs fio" \
	"$fb_sps" "$fio_iops" "$(ratio "$fb_sps" "$fio_iops")" "(reference)"
