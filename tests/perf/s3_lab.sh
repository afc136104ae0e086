#!/bin/bash
# Benchmark (not a test): S3 GET bandwidth on the lab's radosgw, predicted against measured,
# and CephFS against S3 on the same cluster for the same dataset.
# The lab (tests/lab/lab.sh) has 4 OSDs, each sending at most OSD_MIBS MiB/s through its own
# tc-shaped link; radosgw stores an object as a 4 MiB head and 4 MiB pieces placed by CRUSH.
# For every object size x request concurrency it PUTs TOTAL_MIB of objects, reads their pieces'
# OSDs back (data pool listing + ceph osd map), and prints the model (per-OSD FIFO at the
# limit, the head read alone, rgw's 16 MiB window per GET), C (the same GETs with the links
# unshaped), predicted = min(model, C), measured (REPS runs, by curl and, where its s3 back-end
# is built, by feedbench on objects it generated) and whether the point is judged (within
# 20 %); then the same dataset read from CephFS and from S3 (tests/lab/s3_lab.py compare: by
# Python threads and curl, and by feedbench on both). Exit 1 when a judged point is outside 20 %.
#
# usage (root): tests/perf/s3_lab.sh [BUILD_DIR]
#   SIZES=1,4,16,64 CONC=1,2,4,8 TOTAL_MIB=128 REPS=2 COUNT=32 OUT=/tmp/fb-s3-lab
# Starts the lab when it is not up and stops it afterwards (leaves a running lab running).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-$SRC/build}
LAB_SH=$SRC/tests/lab/lab.sh
OUT=${OUT:-/tmp/fb-s3-lab-$$}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
started=""
if ! "$LAB_SH" status >/dev/null 2>&1; then
	"$LAB_SH" up || exit $?
	started=1
	trap '"$LAB_SH" down' EXIT
fi
"$LAB_SH" status
mkdir -p "$OUT"
# feedbench measures too where its s3 back-end is built
fb=()
"$BUILD/feedbench" list 2>/dev/null | grep -qE '^ +s3 +built' && fb=(--feedbench "$BUILD/feedbench")
echo "== GET bandwidth: object size x concurrency (curl, one process, from host labh1)"
python3 "$SRC/tests/lab/s3_lab.py" sweep --work "$OUT" --sizes "${SIZES:-1,4,16,64}" \
	--concurrency "${CONC:-1,2,4,8}" --total-mib "${TOTAL_MIB:-128}" --reps "${REPS:-2}" \
	--json "$OUT/points.json" "${fb[@]}"
rc=$?
echo "== CephFS vs S3, the same dataset on the same OSDs"
python3 "$SRC/tests/lab/s3_lab.py" compare --work "$OUT" "${fb[@]}" --reps "${REPS:-2}" \
	--count "${COUNT:-32}" || rc=1
echo "radosgw after the reads: $("$LAB_SH" status | grep -o 'RSS [0-9a-z]* MiB')"
echo "results: $OUT"
exit $rc
