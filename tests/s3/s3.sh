#!/bin/bash
# The S3 back-end (bench/storage/s3.c) against moto's S3 server on 127.0.0.1 (the fixture of
# tests/s3/tests.cmake; port in BUILD/s3-moto/port): real mpiexec runs at 2 ranks of the tiny
# workload (tests/mpi/tiny.ini: 8 files x 8 samples x 4 KiB, two epochs, verify = true), each
# case in a bucket of its own, checking what a user sees: exit status, every sample verified,
# exact counts in summary.json, the objects as boto3 lists them, and the secret key nowhere in
# what the run printed or wrote.
#
# usage: s3.sh CASE [ARGS]
#   train FORMAT:ACCESS...   generated and verified on S3 (raw:per_rank read again from its
#                            manifest object, not regenerated)
#   workloads                checkpoint (multipart, restore verified, keep_last's DELETEs),
#                            ior (object per rank; one shared object of parts from both ranks,
#                            byte for byte posix's file; a geometry S3 parts cannot hold) and
#                            metadata (create, stat, read, remove)
#   interop                  boto3 reads feedbench's objects (one a multipart upload) byte for
#                            byte as posix wrote the same files; a dataset boto3 uploaded is
#                            read and verified by feedbench (generate = never), and without
#                            its manifest found by listing 2 keys a page
#   auth                     moto checking signatures (a user made through its IAM API): the
#                            right keys work (SigV4 as libcurl signs it), a wrong secret is 403
#   transport                AWS_SESSION_TOKEN sent as x-amz-security-token and virtual-host
#                            addressing (bucket.host, seen by fault_proxy.py as the client's
#                            http_proxy), neither token nor secret in any output; a self-signed
#                            TLS server refused by default (exit 1 naming the endpoint), read
#                            with verify_tls = false (recorded in summary.json)
#   faults                   through tests/s3/fault_proxy.py: 503 SlowDown absorbed by retries,
#                            a 503 storm, a short body, a server that stops answering, an
#                            object deleted once listed (404), a refused multipart part of a
#                            checkpoint and of a shared IOR object (upload aborted, nothing
#                            left), no server
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

lib_need_backend s3
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
	fb_mpi 2 "$cmd" "$MPI/tiny.ini" --set "dataset.data_dir=s3://$BUCKET/${PREFIX:-tiny}" \
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
	local fmt access run objs chk pair
	for pair in "$@"; do
		fmt=${pair%:*} access=${pair#*:}
		PREFIX=$fmt-$access
		# raw shared: 8 GETs in flight per reader thread (the multi interface)
		local deep=()
		[ "$fmt $access" = "raw shared" ] && deep=(--set storage.io_depth=8 --set reader.batch_size=8)
		fb run --set "dataset.format=$fmt" --set "dataset.file_access=$access" "${deep[@]}"
		expect_rc 0
		run=$(find "$T/results" -mindepth 1 -maxdepth 1 -type d)
		[ ${#deep[@]} -eq 0 ] || json_check "$run/summary.json" \
			'max(e["io_inflight_max"] for e in s["epochs"]) == 8'
		chk=(--ranks 2 --epochs 2 --samples 128)
		[ "$fmt" = raw ] && chk+=(--bytes $((64 * REC * 2)) --ops 128)
		python3 "$MPI/check_summary.py" "$run" "${chk[@]}" 2>>"$T/err" ||
			fail "$fmt $access: summary.json is inconsistent"
		json_check "$run/summary.json" 's["storage"]["backend"] == "s3"' \
			's["storage"]["fs_type"] == "s3"' 's["storage"]["cache_resident"] is False' \
			's["storage"]["dataset_regenerated"] is True' \
			's["config"]["dataset"]["verify"] is True' \
			's["config"]["storage.s3"]["verify_tls"] is True' \
			'all(e["ttfb_seconds"]["count"] == e["read_ops"] > 0 for e in s["epochs"])' \
			'all(0 < e["ttfb_seconds"][q] <= e["latency_seconds"][q] for e in s["epochs"] for q in ("p50", "p90", "p99", "p999", "max"))' \
			'0 < m["train_ttfb_seconds"]["p99"] <= m["train_latency_seconds"]["p99"]'
		# the objects as boto3 sees them: the dataset's files and the manifest
		s3ctl ls "$BUCKET" "$PREFIX/" >"$T/ls" 2>>"$T/err" || fail "boto3 cannot list $BUCKET"
		objs=$(grep -c . "$T/ls")
		case $fmt in
		raw) [ "$objs" -eq 9 ] || fail "$objs objects, expected 8 files and the manifest" ;;
		npy) [ "$objs" -eq 65 ] || fail "$objs objects, expected 64 files and the manifest" ;;
		tfrecord) [ "$objs" -eq 17 ] || fail "$objs objects, expected 8 files, 8 indexes, the manifest" ;;
		wds) [ "$objs" -eq 9 ] || fail "$objs objects, expected 8 shards and the manifest" ;;
		esac
		grep -q "^$PREFIX/feedbench-manifest.json " "$T/ls" || fail "no manifest object"
		rm -rf "$T/results"
		[ "$fmt $access" = "raw per_rank" ] || continue
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

# expect_s3_failure WHAT...: exit 1, one message naming the object, rank and each WHAT, no
# summary.json.
expect_s3_failure() {
	expect_rc 1
	expect_err "s3 GET of '$BUCKET/tiny/raw-"
	expect_err "failed on rank "
	for w in "$@"; do expect_err "$w"; done
	[ "$(grep -c 'feedbench: error:' "$T/err")" -eq 1 ] || fail "not one error message"
	[ -z "$(find "$T/results" -name summary.json 2>/dev/null)" ] || fail "a failed run wrote summary.json"
}

case_workloads() {
	local run
	fb run --set workload.type=checkpoint --set checkpoint.model_size_bytes=12MiB \
		--set checkpoint.count=3 --set checkpoint.keep_last=1 \
		--set storage.s3.part_size=5MiB
	expect_rc 0
	run=$(find "$T/results" -mindepth 1 -maxdepth 1 -type d)
	json_check "$run/summary.json" 'm["checkpoint_restore_verified"] is True' \
		'm["checkpoint_bytes_written"] == 3 * 12 * 1048576' \
		'm["checkpoint_bytes_read"] == 3 * 12 * 1048576' 'm["checkpoint_count"] == 3' \
		's["checkpoint"]["restore_cache"] == "nothing evicted: the s3 back-end has no page cache"'
	grep -q "slowest rank, nothing evicted: the s3 back-end has no page cache, verified" \
		"$run/table.md" || fail "table.md does not say that nothing was evicted from objects"
	s3ctl ls "$BUCKET" tiny/ >"$T/ls" 2>>"$T/err" || fail "boto3 cannot list $BUCKET"
	# keep_last = 1: one step's objects remain, .metadata among them, no upload left open
	[ "$(sed 's|/[^/]*$||' "$T/ls" | sort -u | wc -l)" -eq 1 ] || fail "not one checkpoint left: $(cat "$T/ls")"
	grep -q '/.metadata ' "$T/ls" || fail "no .metadata object: $(cat "$T/ls")"
	[ -z "$(s3ctl uploads "$BUCKET")" ] || fail "multipart uploads left open"
	rm -rf "$T/results"
	fb run --set workload.type=ior --set ior.file_per_process=true --set ior.block_size=256KiB \
		--set ior.transfer_size=64KiB --set ior.segments=2
	expect_rc 0
	run=$(find "$T/results" -mindepth 1 -maxdepth 1 -type d)
	json_check "$run/summary.json" 'm["ior_bytes_written"] == 2 * 2 * 262144' \
		'm["ior_bytes_read"] == 2 * 2 * 262144'
	rm -rf "$T/results"
	# one shared object: each rank's 10 MiB block is 2 parts of 5 MiB sent in random order,
	# completed by rank 0; boto3 reads what posix wrote to a file with the same pattern
	local ior=(--set workload.type=ior --set ior.file_per_process=false --set ior.segments=1
		--set ior.block_size=10MiB --set ior.transfer_size=1MiB --set ior.random=true
		--set ior.keep_files=true --set storage.s3.part_size=5MiB)
	PREFIX=shared fb run "${ior[@]}"
	expect_rc 0
	run=$(find "$T/results" -mindepth 1 -maxdepth 1 -type d)
	json_check "$run/summary.json" 'm["ior_bytes_written"] == 2 * 10485760' \
		'm["ior_bytes_read"] == 2 * 10485760' 's["ior"]["files"] == 1'
	fb_mpi 2 run "$MPI/tiny.ini" "${ior[@]}" --set "dataset.data_dir=$T/local" \
		--set "output.dir=$T/results" </dev/null
	expect_rc 0
	s3ctl get "$BUCKET" shared/ior_testfile "$T/ior.s3" 2>>"$T/err" || fail "boto3 cannot get the shared object"
	cmp "$T/ior.s3" "$T/local/ior_testfile" || fail "the shared object differs from posix's file"
	[ -z "$(s3ctl uploads "$BUCKET")" ] || fail "multipart uploads left open"
	rm -rf "$T/results" "$T/local" "$T/ior.s3"
	# 1 MiB blocks cannot be parts of at least 5 MiB: refused before any request
	fb run --set workload.type=ior --set ior.file_per_process=false
	expect_rc 2
	expect_err "block_size (1048576) must be a multiple of part_size"
	fb run --set workload.type=metadata --set metadata.files_per_rank=6
	expect_rc 0
	run=$(find "$T/results" -mindepth 1 -maxdepth 1 -type d)
	json_check "$run/summary.json" \
		'[(r["phase"], r["operations"]) for r in s["metadata"]["results"]] == [("create", 12), ("stat", 12), ("read", 12), ("remove", 12)]' \
		's["storage"]["backend"] == "s3"'
	s3ctl ls "$BUCKET" tiny/mdtest >"$T/ls" 2>>"$T/err"
	[ ! -s "$T/ls" ] || fail "metadata left objects: $(head -3 "$T/ls")"
	no_secret
}

case_interop() {
	local f run
	# the same dataset through posix (local files) and s3 (objects), 6 MiB files: multipart
	local big=(--set dataset.num_files_train=2 --set dataset.num_samples_per_file=6
		--set dataset.record_length_bytes=1MiB --set dataset.file_access=per_rank
		--set storage.s3.part_size=5MiB)
	fb_mpi 2 generate "$MPI/tiny.ini" --set "dataset.data_dir=$T/local" "${big[@]}" </dev/null
	expect_rc 0
	fb generate "${big[@]}"
	expect_rc 0
	for f in raw-0-of-2.bin raw-1-of-2.bin; do
		s3ctl get "$BUCKET" "tiny/$f" "$T/$f" 2>>"$T/err" || fail "boto3 cannot get tiny/$f"
		cmp "$T/$f" "$T/local/$f" || fail "tiny/$f read by boto3 differs from posix's file"
	done
	# a dataset uploaded by boto3 (files and manifest as posix wrote them), read by feedbench
	rm -rf "$T/local"
	fb_mpi 2 generate "$MPI/tiny.ini" --set "dataset.data_dir=$T/local" </dev/null
	expect_rc 0
	s3ctl putdir "$BUCKET" up "$T/local" 2>>"$T/err" || fail "boto3 cannot upload"
	fb_mpi 2 run "$MPI/tiny.ini" --set "dataset.data_dir=s3://$BUCKET/up" \
		--set "output.dir=$T/results" --set storage.backend=s3 --set "storage.s3.endpoint=$EP" \
		--set dataset.generate=never </dev/null
	expect_rc 0
	run=$(find "$T/results" -mindepth 1 -maxdepth 1 -type d)
	python3 "$MPI/check_summary.py" "$run" --ranks 2 --epochs 2 --samples 128 \
		--bytes $((64 * REC * 2)) 2>>"$T/err" || fail "boto3's upload: summary.json is inconsistent"
	rm -rf "$T/results"
	# tfrecord files and their indexes without a manifest (16 keys): found by listing 2 keys
	# a page (8 pages linked by continuation tokens), probed, read
	rm -rf "$T/local"
	fb_mpi 2 generate "$MPI/tiny.ini" --set "dataset.data_dir=$T/local" \
		--set dataset.format=tfrecord </dev/null
	expect_rc 0
	rm "$T/local/feedbench-manifest.json"
	s3ctl putdir "$BUCKET" bare "$T/local" 2>>"$T/err" || fail "boto3 cannot upload"
	fb_mpi 2 run "$MPI/tiny.ini" --set "dataset.data_dir=s3://$BUCKET/bare" \
		--set "output.dir=$T/results" --set storage.backend=s3 --set "storage.s3.endpoint=$EP" \
		--set dataset.format=tfrecord --set dataset.generate=never --set dataset.verify=false \
		--set storage.s3.list_page_size=2 </dev/null
	expect_rc 0
	run=$(find "$T/results" -mindepth 1 -maxdepth 1 -type d)
	python3 "$MPI/check_summary.py" "$run" --ranks 2 --epochs 2 --samples 128 2>>"$T/err" ||
		fail "listed dataset: summary.json is inconsistent"
	no_secret
}

case_auth() {
	local keys
	# moto checks signatures after its first 6 requests: the readiness probe, the bucket and
	# the IAM user (4 calls) are made before
	S3_VENV=$BUILD/venv-s3 bash "$HERE/moto.sh" start "$T" auth INITIAL_NO_AUTH_ACTION_COUNT=6 \
		>/dev/null 2>>"$T/err" || fail "moto with authentication did not start"
	lib_on_exit "bash '$HERE/moto.sh' stop '$T' auth"
	EP=http://127.0.0.1:$(cat "$T/s3-auth/port")
	s3ctl mb "$BUCKET" 2>>"$T/err" || fail "cannot make bucket $BUCKET"
	keys=$(s3ctl user feedbench 2>>"$T/err") || fail "cannot make an IAM user on moto"
	export AWS_ACCESS_KEY_ID=${keys% *} AWS_SECRET_ACCESS_KEY=${keys#* }
	fb run --set train.epochs=1
	expect_rc 0
	rm -rf "$T/results"
	no_secret
	AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}x fb run --set train.epochs=1 --set dataset.generate=never
	expect_rc 1
	expect_err "failed on rank 0: HTTP 403"
	expect_err "s3 HEAD of '$BUCKET/tiny/feedbench-manifest.json'"
	no_secret
}

# start_proxy MODE [N]: tests/s3/fault_proxy.py in front of moto; EP points at it.
start_proxy() {
	[ -n "${PROXY:-}" ] && { kill "$PROXY"; wait "$PROXY" 2>/dev/null; }
	: >"$T/proxy"
	"$PY" "$HERE/fault_proxy.py" "$PORT" "$@" >"$T/proxy" 2>>"$T/err" &
	PROXY=$!
	for _ in $(seq 100); do [ -s "$T/proxy" ] && break; sleep 0.1; done
	EP=http://127.0.0.1:$(cat "$T/proxy")
}

# nothing_left: after a failed upload (through the proxy), asked of moto itself: no multipart
# upload open, no object beside the dataset's.
nothing_left() {
	EP=http://127.0.0.1:$PORT
	[ -z "$(s3ctl uploads "$BUCKET")" ] || fail "multipart uploads left open: $(s3ctl uploads "$BUCKET")"
	s3ctl ls "$BUCKET" tiny/ >"$T/ls" 2>>"$T/err" || fail "boto3 cannot list $BUCKET"
	grep -v '/raw-\|/feedbench-manifest.json ' "$T/ls" >"$T/left" || true
	[ ! -s "$T/left" ] || fail "a failed upload left objects: $(head -3 "$T/left")"
	EP=http://127.0.0.1:$(cat "$T/proxy")
}

case_faults() {
	local f=(--set train.epochs=1 --set dataset.generate=never --set storage.s3.retries=2)
	fb generate
	expect_rc 0
	start_proxy slowdown 2
	fb run "${f[@]}"
	expect_rc 0
	rm -rf "$T/results"
	start_proxy slowdown 1000000
	fb run "${f[@]}"
	expect_s3_failure "HTTP 503 SlowDown (after retries)"
	start_proxy short
	fb run "${f[@]}"
	expect_s3_failure "transfer closed with"
	start_proxy stall
	fb run "${f[@]}" --set storage.s3.request_timeout=2s
	expect_s3_failure "Operation too slow"
	# an object gone after the run listed it: its GET is a 404 naming it and the rank
	start_proxy gone
	fb run "${f[@]}"
	expect_s3_failure "HTTP 404" "tiny/raw-3-of-8.bin'"
	# a checkpoint part refused: exit 1 naming it, the upload aborted, no object under its key
	start_proxy part
	fb run --set workload.type=checkpoint --set checkpoint.model_size_bytes=12MiB \
		--set checkpoint.count=1 --set storage.s3.part_size=5MiB
	expect_rc 1
	expect_err "HTTP 400 InvalidPart"
	expect_err "failed on rank "
	nothing_left
	# a shared IOR object whose part 2 (rank 1's first block) is refused: rank 0 aborts
	# the upload that every rank sent parts to
	fb run --set workload.type=ior --set ior.file_per_process=false --set ior.segments=2 \
		--set ior.block_size=5MiB --set ior.transfer_size=1MiB --set storage.s3.part_size=5MiB
	expect_rc 1
	expect_err "s3 PUT of '$BUCKET/tiny/ior_testfile'"
	expect_err "HTTP 400 InvalidPart"
	nothing_left
	kill "$PROXY"
	wait "$PROXY" 2>/dev/null
	PROXY=
	EP=http://127.0.0.1:$(cat "$T/proxy") # nothing listens there now
	fb run "${f[@]}" --set storage.s3.retries=1
	expect_rc 1
	expect_err "failed on rank 0: Failed to connect"
	no_secret
}

# no_token: the session token is in nothing the runs printed or wrote (the proxy's log of what
# the server received aside).
no_token() {
	if grep -rlF "$TOKEN" "$T/results" "$T/out" "$T/err" 2>/dev/null >"$T/leak"; then
		fail "the session token was written to $(head -1 "$T/leak")"
	fi
}

case_transport() {
	local run n
	fb generate
	expect_rc 0
	# a session token and virtual-host addressing: the proxy (the client's http_proxy) sees
	# every request for BUCKET.s3.test with the token in x-amz-security-token
	TOKEN=fbSessionTokenNeverWritten42
	start_proxy vhost "$T/requests"
	AWS_SESSION_TOKEN=$TOKEN http_proxy=$EP no_proxy= NO_PROXY= fb run --set train.epochs=1 \
		--set dataset.generate=never --set storage.s3.addressing=virtual \
		--set storage.s3.endpoint=http://s3.test:7480
	expect_rc 0
	n=$(grep -c . "$T/requests")
	[ "$n" -gt 16 ] || fail "the proxy saw $n requests, expected the manifest's and every sample's"
	grep -v "^[A-Z]* $BUCKET\.s3\.test:7480 $TOKEN\$" "$T/requests" >"$T/bad" || true
	[ ! -s "$T/bad" ] || fail "a request not for $BUCKET.s3.test:7480 with the token: $(head -1 "$T/bad")"
	no_token
	rm -rf "$T/results"
	# TLS: a self-signed server is refused unless verify_tls = false, which summary.json records
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
		-subj /CN=127.0.0.1 -keyout "$T/key.pem" -out "$T/cert.pem" 2>>"$T/err" ||
		fail "openssl cannot make a certificate"
	start_proxy tls "$T/cert.pem" "$T/key.pem"
	EP=https://127.0.0.1:$(cat "$T/proxy")
	fb run --set train.epochs=1 --set dataset.generate=never --set storage.s3.retries=0
	expect_rc 1
	expect_err "at $EP failed on rank 0: SSL certificate problem"
	expect_err "verify_tls = false skips the check"
	[ "$(grep -c 'feedbench: error:' "$T/err")" -eq 1 ] || fail "not one error message"
	fb run --set train.epochs=1 --set dataset.generate=never --set storage.s3.verify_tls=false
	expect_rc 0
	run=$(find "$T/results" -mindepth 1 -maxdepth 1 -type d)
	json_check "$run/summary.json" 's["config"]["storage.s3"]["verify_tls"] is False' \
		'm["train_samples"] == 64'
	no_secret
}

case "$CASE" in
train) case_train "$@" ;;
transport) case_transport ;;
workloads) case_workloads ;;
interop) case_interop ;;
auth) case_auth ;;
faults) case_faults ;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
echo "ok: s3 $CASE $*"
