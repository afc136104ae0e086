#!/bin/bash
# The S3 back-end (bench/storage/s3.c) against moto's S3 server on 127.0.0.1 (the fixture of
# tests/s3/tests.cmake; port in BUILD/s3-moto/port): real mpiexec runs at 2 ranks of the tiny
# workload (tests/mpi/tiny.ini: 8 files x 8 samples x 4 KiB, two epochs, verify = true), each
# case in a bucket of its own, checking what a user sees: exit status, every sample verified,
# exact counts in summary.json, the objects as boto3 lists them, and the secret key nowhere in
# what the run printed or wrote.
#
# usage: s3.sh CASE [ARGS]
#   train FORMAT ACCESS...   generated and verified on S3, then read again without generating
# Exit status 77 means "skipped" (s3 not built).
set -u

CASE=$1
shift
HERE=$(cd "$(dirname "$0")" && pwd)
MPI=$HERE/../mpi
. "$HERE/../lib.sh"
FAIL_WHAT="s3 $CASE"
lib_init s3
REC=4096
BUILD=${FEEDBENCH_BUILD_DIR:?}
PY=$BUILD/venv-s3/bin/python

if ! "$FEEDBENCH" list | grep -qE '^ +s3 +built'; then
	echo "skipped: $("$FEEDBENCH" list | grep -E '^ +s3' | sed 's/^ *//')"
	exit 77
fi
PORT=$(cat "$BUILD/s3-moto/port" 2>/dev/null) || fail "no moto server (fixture s3.moto_start)"
EP=http://127.0.0.1:$PORT
export AWS_ACCESS_KEY_ID=AKIAFEEDBENCHTEST AWS_SECRET_ACCESS_KEY=fbS3cretNeverWrittenAnywhere7
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_REGION AWS_DEFAULT_REGION
export AWS_SHARED_CREDENTIALS_FILE=$T/no-credentials AWS_CONFIG_FILE=$T/no-config
BUCKET=fb-$(echo "$CASE" | tr -c 'a-z0-9\n' '-')-$$
s3ctl() { "$PY" "$HERE/s3ctl.py" "$EP" "$@"; }
s3ctl mb "$BUCKET" 2>>"$T/err" || fail "cannot make bucket $BUCKET on $EP"

fb() { # fb COMMAND [--set ...]: 2 ranks on tiny.ini through s3; sets RC
	local cmd=$1
	shift
	fb_mpi 2 "$cmd" "$MPI/tiny.ini" --set "dataset.data_dir=s3://$BUCKET/tiny" \
		--set "output.dir=$T/results" --set storage.backend=s3 \
		--set "storage.s3.endpoint=$EP" --set storage.s3.request_timeout=10s "$@" </dev/null
}

# no_secret: the secret key is in nothing the runs printed or wrote.
no_secret() {
	if grep -rlF "$AWS_SECRET_ACCESS_KEY" "$T" 2>/dev/null | grep -v '/no-' >"$T/leak"; then
		MSG="the secret key was written to $(head -1 "$T/leak")"
		fail "$MSG"
	fi
}

case_train() {
	local fmt=$1 access run objs chk
	shift
	for access in "$@"; do
		fb run --set "dataset.format=$fmt" --set "dataset.file_access=$access"
		expect_rc 0
		run=$(find "$T/results" -mindepth 1 -maxdepth 1 -type d)
		chk=(--ranks 2 --epochs 2 --samples 128)
		[ "$fmt" = raw ] && chk+=(--bytes $((64 * REC * 2)) --ops 128)
		python3 "$MPI/check_summary.py" "$run" "${chk[@]}" 2>>"$T/err" ||
			fail "$fmt $access: summary.json is inconsistent"
		json_check "$run/summary.json" 's["storage"]["backend"] == "s3"' \
			's["storage"]["fs_type"] == "s3"' 's["storage"]["cache_resident"] is False' \
			's["storage"]["dataset_regenerated"] is True' \
			's["config"]["dataset"]["verify"] is True' \
			's["config"]["storage.s3"]["verify_tls"] is True'
		# the objects as boto3 sees them: the dataset's files and the manifest
		s3ctl ls "$BUCKET" tiny/ >"$T/ls" 2>>"$T/err" || fail "boto3 cannot list $BUCKET"
		objs=$(grep -c . "$T/ls")
		case $fmt in
		raw) [ "$objs" -eq 9 ] || fail "$objs objects, expected 8 files and the manifest" ;;
		npy) [ "$objs" -eq 65 ] || fail "$objs objects, expected 64 files and the manifest" ;;
		tfrecord) [ "$objs" -eq 17 ] || fail "$objs objects, expected 8 files, 8 indexes, the manifest" ;;
		esac
		grep -q '^tiny/feedbench-manifest.json ' "$T/ls" || fail "no manifest object"
		rm -rf "$T/results"
		# the same dataset again: the manifest read back from S3, nothing regenerated
		fb run --set "dataset.format=$fmt" --set "dataset.file_access=$access"
		expect_rc 0
		run=$(find "$T/results" -mindepth 1 -maxdepth 1 -type d)
		json_check "$run/summary.json" 's["storage"]["dataset_regenerated"] is False'
		python3 "$MPI/check_summary.py" "$run" "${chk[@]}" 2>>"$T/err" ||
			fail "$fmt $access (reused): summary.json is inconsistent"
		rm -rf "$T/results"
	done
	no_secret
}

case "$CASE" in
train) case_train "$@" ;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
echo "ok: s3 $CASE $*"
