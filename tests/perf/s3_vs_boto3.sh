#!/bin/bash
# Benchmark (not a test): the same S3 objects read by feedbench and by a boto3 thread pool
# (and by s3torchconnector where it installs from PyPI) on the same server, the lab's radosgw,
# from emulated host labh1, with the OSD links unshaped so that the server is as fast as this
# machine allows. Prints MiB/s of each, the ratios to feedbench, and the CPU seconds per GiB
# each client spent (getrusage of the client process and its children: user + system). With 2
# CPUs or more, radosgw runs on CPU 0 and each client on CPU 1 (taskset, PIN=SERVER:CLIENT;
# PIN= for none), so that neither takes the other's CPU and a client's CPU s/GiB is its own.
#
# usage (root): tests/perf/s3_vs_boto3.sh [BUILD_DIR]
#   COUNT=64 SIZE_MIB=4 CONC=8 REPS=3 OUT=/tmp/fb-s3-boto3 PIN=0:1
# Starts the lab when it is not up and stops it afterwards (leaves a running lab running).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-$SRC/build}
LAB_SH=$SRC/tests/lab/lab.sh
OUT=${OUT:-/tmp/fb-s3-boto3-$$}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -x "$BUILD/feedbench" ] || {
	echo "no $BUILD/feedbench: build first (make build)" >&2
	exit 2
}
# a Python with boto3: the S3 tests' venv (tests/interop/setup_venv_s3.sh BUILD), else the one
# on PATH
PY=python3
[ -x "$BUILD/venv-s3/bin/python" ] && "$BUILD/venv-s3/bin/python" -c 'import boto3' 2>/dev/null &&
	PY=$BUILD/venv-s3/bin/python
"$PY" -c 'import boto3' 2>/dev/null || {
	echo "boto3 is not installed for $PY (pip install boto3, or tests/interop/setup_venv_s3.sh $BUILD)" >&2
	exit 2
}
# s3torchconnector from PyPI (it and its client, without dependencies) in a venv over Debian's
# python3-torch (make dlio-deps): pip's torch would be gigabytes for one benchmark
S3TC=$BUILD/s3tc-venv
s3tc=()
if [ ! -x "$S3TC/bin/python" ] && /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	/usr/bin/python3 -m venv --system-site-packages "$S3TC" &&
		"$S3TC/bin/pip" install --quiet --no-deps s3torchconnector s3torchconnectorclient ||
		rm -rf "$S3TC"
fi
if [ -x "$S3TC/bin/python" ] && "$S3TC/bin/python" -c 'import s3torchconnector' 2>/dev/null; then
	s3tc=(--s3tc-python "$S3TC/bin/python")
elif /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	s3tc=(--s3tc-why "pip install --no-deps s3torchconnector s3torchconnectorclient into $S3TC failed")
else
	s3tc=(--s3tc-why "it needs torch: Debian's python3-torch is not installed (make dlio-deps)")
fi
if ! "$LAB_SH" status >/dev/null 2>&1; then
	"$LAB_SH" up || exit $?
	trap '"$LAB_SH" down' EXIT
fi
mkdir -p "$OUT"
pin=()
[ "$(nproc)" -ge 2 ] && pin=(--pin "${PIN-0:1}")
[ -n "${PIN-0:1}" ] || pin=()
"$PY" "$SRC/tests/lab/s3_clients.py" --feedbench "$BUILD/feedbench" --work "$OUT" \
	--count "${COUNT:-64}" --size-mib "${SIZE_MIB:-4}" --concurrency "${CONC:-8}" \
	--reps "${REPS:-3}" "${s3tc[@]}" "${pin[@]}"
