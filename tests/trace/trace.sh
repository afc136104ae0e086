#!/bin/bash
# Per-operation traces ([output] trace, bench/trace.c; docs/trace.md): real mpiexec runs at 2
# ranks of the tiny MPI workload (tests/mpi/tiny.ini) with 1 ms of compute per step, checking
# what a user sees: trace.pfw in the run folder, every line a valid Chrome trace event
# (check_trace.py) whose reads, bytes, opens and steps are those of summary.json; io_uring reads
# (backend = uring, io_depth 8) traced as such; no trace and no staging file left with trace off.
#
# usage: trace.sh run
set -u

CASE=$1
HERE=$(cd "$(dirname "$0")" && pwd)
MPI=$HERE/../mpi
. "$HERE/../lib.sh"
FAIL_WHAT="trace $CASE"
lib_init trace

fb() { # fb [--set ...]: 2 ranks on tiny.ini; sets RC
	fb_mpi 2 run "$MPI/tiny.ini" --set "dataset.data_dir=$T/data" \
		--set "output.dir=$T/results" --set train.computation_time=1ms "$@" </dev/null
}

# check RUN_ARGS... -- CHECK_ARGS...: one traced run, validated, then removed.
check() {
	local args=() run
	while [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	fb --set output.trace=true "${args[@]}"
	[ "$RC" -eq 0 ] || fail "traced run exited $RC"
	run=$(find "$T/results" -mindepth 1 -maxdepth 1 -type d)
	[ -f "$run/trace.pfw" ] || fail "no trace.pfw in the run folder"
	python3 "$HERE/check_trace.py" "$run" --batch 4 --compute-us 1000 "$@" >>"$T/out" \
		2>>"$T/err" || fail "trace.pfw does not match the run"
	left=$(find "$T/results" -maxdepth 1 -name '.feedbench-trace*')
	[ -z "$left" ] || fail "staging files left: $left"
	rm -rf "$T/results"
}

case $CASE in
run)
	check -- --cat POSIX
	if "$FEEDBENCH" list | grep -qE '^ +uring +built'; then
		check --set storage.backend=uring --set storage.io_depth=8 -- --cat io_uring
	fi
	fb
	[ "$RC" -eq 0 ] || fail "untraced run exited $RC"
	[ -z "$(find "$T/results" -name 'trace.pfw' -o -name '.feedbench-trace*')" ] ||
		fail "a trace was written with trace off"
	;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
echo "trace $CASE: ok"
