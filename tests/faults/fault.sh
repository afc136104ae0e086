#!/bin/bash
# Fault tests (FAILURES.md 9, 14-18, 20-22): each case runs feedbench under mpiexec on a tiny
# dataset in a temporary folder and checks what a user would see: the exit status, the one
# message, and that nothing partial is left (no manifest, no summary.json, no run folder).
#
# usage: fault.sh CASE [ARGS]   (environment from tests/CMakeLists.txt: FEEDBENCH, MPIEXEC)
set -u

CASE=$1
shift
: "${FEEDBENCH:?FEEDBENCH not set}"
: "${MPIEXEC:=mpiexec}"
T=$(mktemp -d /tmp/fb_fault_XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
HERE=$(cd "$(dirname "$0")" && pwd)

fail() {
	echo "FAIL ($CASE): $*" >&2
	echo "---- stdout" >&2
	cat "$T/out" >&2 2>/dev/null
	echo "---- stderr" >&2
	cat "$T/err" >&2 2>/dev/null
	exit 1
}

# config NAME [extra INI text]: writes $T/NAME.ini, a tiny dataset of 4 files x 8 samples of
# 4 KiB (131072 bytes), verified reads; FORMAT, ACCESS, EPOCHS, CTIME and WATCHDOG change it.
config() {
	local name=$1
	shift
	cat >"$T/$name.ini" <<INI
[workload]
name = $name
[dataset]
data_dir = $T/data
format = ${FORMAT:-raw}
num_files_train = 4
num_samples_per_file = 8
record_length_bytes = 4096
file_access = ${ACCESS:-per_rank}
verify = true
[reader]
batch_size = 4
read_threads = 2
prefetch_size = 2
[train]
epochs = ${EPOCHS:-1}
computation_time = ${CTIME:-0}
watchdog = ${WATCHDOG:-20s}
[output]
dir = $T/results
plots = false
$*
INI
}

# run NRANKS NAME: runs the config in the foreground; sets RC and SECONDS_TAKEN.
run() {
	local start=$SECONDS
	"$MPIEXEC" --oversubscribe -n "$1" "$FEEDBENCH" run "$T/$2.ini" >"$T/out" 2>"$T/err"
	RC=$?
	SECONDS_TAKEN=$((SECONDS - start))
}

summaries() {
	find "$T/results" -name summary.json 2>/dev/null
}

expect_no_results() {
	[ -z "$(summaries)" ] || fail "a summary.json was written: $(summaries)"
	# Not even a hidden temporary run folder may remain.
	if [ -d "$T/results" ] && [ -n "$(ls -A "$T/results")" ]; then
		fail "the results folder is not empty: $(ls -A "$T/results")"
	fi
}

expect_no_manifest() {
	if [ -d "$T/data" ] && ls -A "$T/data" | grep -qi manifest; then
		fail "a manifest was written: $(ls -A "$T/data")"
	fi
}

# expect_once TEXT [FILE]: the message appears exactly once in stdout + stderr together (or in
# FILE: err or out).
expect_once() {
	local n
	if [ $# -gt 1 ]; then
		n=$(grep -c -- "$1" "$T/$2")
	else
		n=$(cat "$T/out" "$T/err" | grep -c -- "$1")
	fi
	[ "$n" -eq 1 ] || fail "expected '$1' once, found it $n times"
}

expect_rc() {
	[ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1"
}

# check_summary PYTHON-EXPRESSION...: each expression, with s = summary.json, must be true.
check_summary() {
	local f
	f=$(summaries)
	[ "$(echo "$f" | grep -c .)" -eq 1 ] || fail "expected one summary.json, found: $f"
	python3 "$HERE/check_summary.py" "$f" "$@" >>"$T/err" 2>&1 || fail "summary.json check failed"
}

# start NRANKS NAME: runs in the background; MPIPID is mpiexec's pid.
start() {
	"$MPIEXEC" --oversubscribe -n "$1" "$FEEDBENCH" run "$T/$2.ini" >"$T/out" 2>"$T/err" &
	MPIPID=$!
}

# rank_pid N: the pid of rank N among mpiexec's children (waits up to 20 s for it).
rank_pid() {
	local i pid
	for i in $(seq 1 200); do
		for pid in $(ps -o pid= --ppid "$MPIPID" 2>/dev/null); do
			if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null |
				grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
				echo "$pid"
				return 0
			fi
		done
		sleep 0.1
	done
	return 1
}

# finish LIMIT: waits for the background mpiexec; fails when it takes longer than LIMIT s.
finish() {
	local start=$SECONDS
	while kill -0 "$MPIPID" 2>/dev/null; do
		if [ $((SECONDS - start)) -gt "$1" ]; then
			kill -KILL "$MPIPID" 2>/dev/null
			fail "still running after $1 s: a hang"
		fi
		sleep 0.2
	done
	wait "$MPIPID"
	RC=$?
}

# wait_for_training: until the dataset's manifest exists and a little of the first epoch ran.
wait_for_training() {
	local i
	for i in $(seq 1 300); do
		if ls -A "$T/data" 2>/dev/null | grep -qi manifest; then
			sleep "${1:-2}"
			return 0
		fi
		sleep 0.1
	done
	fail "the dataset was never generated"
}

case $CASE in
enospc_generate)
	# FAILURES 15: ENOSPC while generating -> all ranks exit 1, one message, no manifest,
	# no read phase (no results at all).
	config enospc "[storage]
backend = faulty
[storage.faulty]
fail_op = write
fail_nth = 3
fail_errno = ENOSPC"
	run 2 enospc
	expect_rc 1
	expect_once "No space left on device"
	expect_no_manifest
	expect_no_results
	;;
fsync_generate | close_generate)
	# FAILURES 15: a failing fsync or close is a failed write.
	op=${CASE%_generate}
	[ "$op" = fsync ] || op=close
	config "$op" "[storage]
backend = faulty
[storage.faulty]
fail_op = $op
fail_nth = 1
fail_rank = 1
fail_errno = EIO"
	run 2 "$op"
	expect_rc 1
	expect_once "Input/output error"
	grep -qi -- "$op" "$T/err" "$T/out" || fail "the message does not say '$op'"
	expect_no_manifest
	expect_no_results
	;;
eio_read_rank1)
	# FAILURES 16: EIO on one rank mid-epoch -> every rank stops within seconds, exit 1, no
	# summary.json. The dataset is generated by a clean run first.
	config clean "[storage]
backend = posix"
	run 2 clean
	expect_rc 0
	rm -rf "$T/results"
	EPOCHS=3 config eio "[storage]
backend = faulty
[storage.faulty]
fail_op = read
fail_nth = 5
fail_rank = 1
fail_errno = EIO"
	run 2 eio
	expect_rc 1
	expect_once "Input/output error"
	grep -q "rank 1" "$T/err" "$T/out" || fail "the message does not name rank 1"
	[ "$SECONDS_TAKEN" -lt 60 ] || fail "took $SECONDS_TAKEN s to stop"
	expect_no_results
	;;
sigkill_rank)
	# FAILURES 17: a rank killed -> the job ends non-zero within the watchdog time.
	CTIME=1s EPOCHS=20 WATCHDOG=10s config kill "[storage]
backend = posix"
	start 2 kill
	wait_for_training 2
	pid=$(rank_pid 1) || fail "rank 1 not found among mpiexec's children"
	kill -KILL "$pid"
	finish 60
	[ "$RC" -ne 0 ] || fail "mpiexec exited 0 after a rank was killed"
	expect_no_results
	;;
sigint)
	# FAILURES 18: SIGINT to mpiexec -> the run stops, writes nothing partial, says so.
	CTIME=1s EPOCHS=20 config int "[storage]
backend = posix"
	start 2 int
	wait_for_training 2
	kill -INT "$MPIPID"
	finish 60
	[ "$RC" -ne 0 ] || fail "exit status 0 after SIGINT"
	grep -qi "interrupted" "$T/err" "$T/out" || fail "it does not say it was interrupted"
	expect_no_results
	;;
short_eintr)
	# FAILURES 14: short reads and EINTR are retried; the run succeeds and verify passes.
	config short "[storage]
backend = faulty
[storage.faulty]
short_reads = true
eintr = true"
	run 2 short
	expect_rc 0
	check_summary "s['metric']['train_bytes_read'] == 131072" \
		"s['storage']['backend'] == 'faulty'"
	;;
matrix)
	# posix, mpiio independent and mpiio collective on shared files of a format, at N ranks:
	# every run succeeds, verifies every sample and reads every byte once.
	fmt=$1 mode=$2 n=$3
	case $mode in
	posix) st="backend = posix" coll=false ;;
	mpiio) st="backend = mpiio" coll=false ;;
	collective) st="backend = mpiio" coll=true ;;
	esac
	# HDF5 does its own MPI-IO (mpio driver): its collective switch is [format.hdf5] transfer.
	h5=
	[ "$fmt" = hdf5 ] && [ "$coll" = true ] && h5="[format.hdf5]
transfer = collective" && coll=false
	FORMAT=$fmt ACCESS=shared config m "[storage]
$st
[storage.mpiio]
collective = $coll
romio_cb_read = enable
$h5"
	run "$n" m
	expect_rc 0
	expr="s['metric']['train_bytes_read'] >= 131072"
	[ "$fmt" = raw ] && expr="s['metric']['train_bytes_read'] == 131072"
	if [ "$mode" = posix ] || [ "$fmt" = hdf5 ]; then
		check_summary "$expr" "s['storage']['backend'] == '${st#backend = }'"
	else
		check_summary "$expr" "s['storage']['backend'] == 'mpiio'" \
			"s['storage']['mpiio_hints']['requested']['romio_cb_read'] == 'enable'" \
			"'effective' in s['storage']['mpiio_hints']" \
			"str(s['config']['storage.mpiio']['collective']).lower() == '$coll'"
	fi
	;;
stripe_unsupported)
	# FAILURES 21: stripe settings where the file system cannot stripe: one warning, the run
	# goes on, requested and effective both recorded.
	config stripe "[storage]
backend = posix
stripe_count = 4
stripe_size = 1MiB"
	run 2 stripe
	expect_rc 0
	# once on stderr as it happens; the table on stdout lists the run's warnings again
	expect_once "striping is not supported on" err
	check_summary "s['storage']['stripe_requested']['count'] == 4" \
		"s['storage']['stripe_requested']['size'] == 1048576" \
		"s['storage']['stripe_effective'] == 'unsupported (%s)' % s['storage']['fs_type']" \
		"sum('striping is not supported' in w for w in s['warnings']) == 1"
	;;
cache_resident)
	# FAILURES 20: a dataset that fits in RAM, read without direct I/O or eviction, is flagged
	# cache-resident in the table, in one warning and in summary.json.
	config cached "[storage]
page_cache = keep"
	run 1 cached
	expect_rc 0
	grep -q -- "-> \*\*cache-resident\*\*" "$T/out" || fail "the table does not say cache-resident"
	expect_once "warning: cache-resident: the dataset" err
	check_summary "s['storage']['cache_resident'] is True" \
		"s['storage']['direct'] is False" "s['storage']['page_cache'] == 'keep'"
	;;
data_missing | data_fewer_files | data_foreign_files | data_resized)
	# FAILURES 9: under generate = never, a missing data folder or one with fewer files than
	# the manifest lists fails on every rank before timing starts, naming the folder and the
	# count, and writes nothing; files that are not part of the dataset are ignored with one
	# warning.
	config data
	never=(--set dataset.generate=never)
	if [ "$CASE" != data_missing ]; then
		"$MPIEXEC" --oversubscribe -n 2 "$FEEDBENCH" generate "$T/data.ini" >"$T/out" 2>"$T/err" ||
			fail "generate failed"
	fi
	case $CASE in
	data_missing)
		# verified reads need feedbench's manifest: a configuration error
		"$MPIEXEC" --oversubscribe -n 2 "$FEEDBENCH" run "$T/data.ini" "${never[@]}" \
			>"$T/out" 2>"$T/err"
		RC=$?
		expect_rc 2
		expect_once "'$T/data' has no manifest"
		expect_no_results
		# files of other tools (no manifest, a format that can say what it holds)
		"$MPIEXEC" --oversubscribe -n 2 "$FEEDBENCH" run "$T/data.ini" "${never[@]}" \
			--set dataset.verify=false --set dataset.format=tfrecord >"$T/out" 2>"$T/err"
		RC=$?
		expect_rc 1
		expect_once "cannot open data folder '$T/data'"
		;;
	data_fewer_files)
		rm "$T/data/raw-3-of-4.bin" || fail "the dataset has no raw-3-of-4.bin"
		"$MPIEXEC" --oversubscribe -n 2 "$FEEDBENCH" run "$T/data.ini" "${never[@]}" \
			>"$T/out" 2>"$T/err"
		RC=$?
		expect_rc 1
		expect_once "data folder '$T/data' has 3 of the 4 files the manifest lists"
		# Each rank stats its block of the files (2 of 4 here): rank 1 found it.
		expect_once "(the first missing: '$T/data/raw-3-of-4.bin', found by rank 1)"
		;;
	data_resized)
		# Files another tool grew since generation are read as they are, with a warning
		# before the run: each rank's first such file by name (both are rank 1's here, of
		# 4 files on 2 ranks), then how many more.
		printf 'tail' >>"$T/data/raw-2-of-4.bin"
		printf 'tail' >>"$T/data/raw-3-of-4.bin"
		"$MPIEXEC" --oversubscribe -n 2 "$FEEDBENCH" run "$T/data.ini" "${never[@]}" \
			>"$T/out" 2>"$T/err"
		RC=$?
		expect_rc 0
		expect_once "'$T/data/raw-2-of-4.bin' is [0-9]* bytes, the manifest says [0-9]*: changed since it was generated" err
		expect_once "1 more files differ in size from the manifest (2 in all)" err
		;;
	data_foreign_files)
		touch "$T/data/notes.txt" "$T/data/other.bin"
		"$MPIEXEC" --oversubscribe -n 2 "$FEEDBENCH" run "$T/data.ini" "${never[@]}" \
			>"$T/out" 2>"$T/err"
		RC=$?
		expect_rc 0
		expect_once "ignored 2 files in '$T/data'" err
		check_summary "sum('ignored 2 files' in w for w in s['warnings']) == 1"
		;;
	esac
	[ "$CASE" = data_foreign_files ] || [ "$CASE" = data_resized ] || expect_no_results
	;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
echo "ok ($CASE)"
