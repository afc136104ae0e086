#!/bin/bash
# Benchmark (not a test): the stripe sweep on the lab's CephFS, predicted against measured.
# The lab (tests/lab/lab.sh) has 4 OSDs, each sending at most OSD_MIBS MiB/s through its own
# tc-shaped link; one large shared file per point with object_size = file size, so stripe
# count 1 keeps the file on one OSD. For every stripe count x record size (1 and 2 emulated
# hosts) it prints: stripe requested, layout read back, servers spanned, the OSD of each
# object, predicted = min(L x bytes / bytes on the busiest OSD, client limit) and measured
# MiB/s; then many small files (no gain expected). Plots: the sweep folders it names.
#
# usage (root): tests/perf/stripe_lab.sh [BUILD_DIR]
#   FILE_MIB=128 RECORDS=1MiB,4MiB COUNTS=1,2,4 REPS=2 OUT=/tmp/fb-stripe-lab
# Starts the lab when it is not up and stops it afterwards (leaves a running lab running).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-$SRC/build}
LAB_SH=$SRC/tests/lab/lab.sh
OUT=${OUT:-/tmp/fb-stripe-lab-$$}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -x "$BUILD/feedbench" ] || {
	echo "no $BUILD/feedbench: build first (make build)" >&2
	exit 2
}
started=""
if ! "$LAB_SH" status >/dev/null 2>&1; then
	t0=$(date +%s.%N)
	"$LAB_SH" up || exit $?
	started=1
	echo "lab started in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
	trap '"$LAB_SH" down' EXIT
fi
mkdir -p "$OUT"
python3 "$SRC/tests/lab/stripe_lab.py" --feedbench "$BUILD/feedbench" --work "$OUT" \
	--case all --file-mib "${FILE_MIB:-128}" --records "${RECORDS:-1MiB,4MiB}" \
	--counts "${COUNTS:-1,2,4}" --repetitions "${REPS:-2}" --plots --json "$OUT/points.json"
rc=$?
echo "lab daemons' memory (RSS):"
ps -eo rss,comm,args | awk -v lab="$("$LAB_SH" env | sed -n 's/^FEEDBENCH_LAB_DIR=//p')/" \
	'index($0, lab) && $2 ~ /^(ceph-|slurm)/ { s += $1; printf "  %-10s %7.1f MiB\n", $2, $1 / 1024 }
	 END { printf "  total      %7.1f MiB\n", s / 1024 }'
echo "results: $OUT"
exit $rc
