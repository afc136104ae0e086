#!/bin/bash
# tests/lib.sh itself: a test that fails while an mpiexec run is in the background leaves no
# rank behind (the EXIT trap kills mpiexec and its ranks and reaps them), its exit status and
# FAIL line survive the trap, lib_on_exit hooks run, the temporary folder goes; json_check
# passes a true condition and fails a false one, naming it.
#
# usage: lib_test.sh CASE   (environment from tests/CMakeLists.txt: FEEDBENCH, MPIEXEC)
set -u
CASE=$1
LIB=$(cd "$(dirname "$0")/.." && pwd)/lib.sh
. "$LIB"
lib_init harness

# inner SCRIPT-BODY: runs a script that sources lib.sh and does SCRIPT-BODY; its stdout in
# $T/out, stderr in $T/err, exit status in RC.
inner() {
	cat >"$T/inner.sh" <<SH
set -u
CASE=inner
. "$LIB"
lib_init inner "$T"
echo "\$T" >"$T/inner_dir"
$1
SH
	bash "$T/inner.sh" >"$T/out" 2>"$T/err"
	RC=$?
}

# gone PID...: true when none of the processes is alive (gone, or a zombie: dead, unreaped by
# its new parent).
gone() {
	local p st
	for p in "$@"; do
		st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) || continue
		[ -z "$st" ] || [ "$st" = Z ] || return 1
	done
}

case $CASE in
stops_jobs)
	# A run of 30 epochs of 1 s steps, in the background; the inner test fails once both ranks
	# are up.
	inner '
cat >"$T/long.ini" <<INI
[workload]
name = long
[dataset]
data_dir = $T/data
num_files_train = 2
num_samples_per_file = 4
record_length_bytes = 4096
[reader]
batch_size = 2
[train]
epochs = 30
computation_time = 1s
[output]
dir = $T/results
INI
lib_on_exit "touch '"$T"'/hook_ran"
fb_mpi_bg 2 run "$T/long.ini"
for _ in $(seq 300); do
	[ "$(ps -o pid= --ppid "$MPIPID" | wc -l)" -ge 2 ] && break
	sleep 0.1
done
echo "$MPIPID $(ps -o pid= --ppid "$MPIPID" | tr "\n" " ")" >'"$T"'/pids
fail "a check failed while the run went on"'
	expect_rc 1
	expect_err "FAIL (inner): a check failed while the run went on"
	read -r -a pids <"$T/pids"
	[ "${#pids[@]}" -ge 3 ] || fail "the ranks never started: ${pids[*]}"
	# The trap kills before it returns; a little time for the kernel to finish the job.
	for _ in $(seq 50); do
		gone "${pids[@]}" && break
		sleep 0.1
	done
	gone "${pids[@]}" || fail "processes left running: $(ps -o pid=,cmd= -p "$(
		IFS=,
		echo "${pids[*]}"
	)")"
	[ -e "$T/hook_ran" ] || fail "the lib_on_exit hook did not run"
	[ ! -e "$(cat "$T/inner_dir")" ] || fail "the temporary folder was left"
	;;
json_check)
	inner '
echo "{\"metric\": {\"a\": 1}, \"b\": [1, 2]}" >"$T/s.json"
json_check "$T/s.json" "m[\"a\"] == 1" "len(s[\"b\"]) == 2"
[ "$(json_get "$T/s.json" "s[\"b\"][1]")" = 2 ] || fail "json_get"
echo passed
JSON_SHOW="s[\"b\"]" json_check "$T/s.json" "m[\"a\"] == 1" "m[\"a\"] == 2"
echo "not reached"'
	expect_rc 1
	expect_out "passed"
	grep -q "not reached" "$T/out" && fail "json_check did not stop at a false condition"
	expect_err "not true: m[\"a\"] == 2"
	expect_err "[1, 2]"
	;;
*)
	fail "unknown case"
	;;
esac
echo "PASS (harness $CASE)"
