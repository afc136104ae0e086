# tests/lib.sh: what every shell test of feedbench starts with, sourced (never run) after
# `set -u` as
#
#   . "$(dirname "$0")/../lib.sh"
#   lib_init NAME [PARENT]
#
# It checks the environment tests/CMakeLists.txt gives (FEEDBENCH; MPIEXEC defaults to
# mpiexec), makes the test's temporary folder T (PARENT/fb_NAME_XXXXXX, PARENT defaulting to
# the build folder or /tmp) and installs the one EXIT trap: background jobs still running
# (mpiexec and its ranks, anything started with &) are killed with every process under them
# and reaped, the hooks given to lib_on_exit run, and T is removed (kept with KEEP=1). A test
# that fails an assertion while a job runs never leaves ranks behind.
#
# Assertions read the files the runs write: $T/out (stdout), $T/err (stderr) and RC (exit
# status). fail names the case (FAIL_WHAT, default $CASE) and shows the end of $T/out and the
# start of $T/err. Everything here is a shell function: sourcing it costs no process.

: "${FEEDBENCH:?FEEDBENCH not set}"
: "${MPIEXEC:=mpiexec}"
LIB_HOOKS=()

# lib_init NAME [PARENT]: T=PARENT/fb_NAME_XXXXXX and the EXIT trap. SIGTERM and SIGINT to
# the test end it through the trap too (bash runs no EXIT trap when a signal kills it).
lib_init() {
	T=$(mktemp -d "${2:-${FEEDBENCH_BUILD_DIR:-/tmp}}/fb_$1_XXXXXX") || exit 1
	trap lib_exit EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT
}

# lib_need_backend NAME: exit 77 (skipped) with feedbench list's reason when storage back-end
# NAME is not built.
lib_need_backend() {
	"$FEEDBENCH" list | grep -qE "^ +$1 +built" && return 0
	echo "skipped: $("$FEEDBENCH" list | grep -E "^ +$1 " | sed 's/^ *//')"
	exit 77
}

# lib_on_exit COMMAND: run COMMAND (eval) at exit, after the jobs are stopped, before T goes.
lib_on_exit() { LIB_HOOKS+=("$1"); }

# lib_kill_tree PID: PID and every process under it, SIGKILL. PID is stopped first so that it
# starts nothing new while its children are looked up.
lib_kill_tree() {
	local child
	kill -STOP "$1" 2>/dev/null || return 0
	for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		lib_kill_tree "$child"
	done
	kill -KILL "$1" 2>/dev/null
}

# lib_stop_jobs: kills the background jobs of this shell not waited for yet (their pids stay
# theirs until reaped, so no other process is hit) with their process trees, and reaps them.
lib_stop_jobs() {
	local pid
	for pid in $(jobs -p); do
		lib_kill_tree "$pid"
	done
	{ wait; } 2>/dev/null
}

lib_exit() {
	local hook
	lib_stop_jobs
	for hook in "${LIB_HOOKS[@]}"; do
		eval "$hook"
	done
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}

fail() {
	echo "FAIL (${FAIL_WHAT-${CASE:-$(basename "$0" .sh)}}): $*" >&2
	echo "---- stdout (last 60 lines)" >&2
	tail -60 "$T/out" >&2 2>/dev/null
	echo "---- stderr" >&2
	head -200 "$T/err" >&2 2>/dev/null
	exit 1
}

expect_rc() { [ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1"; }
expect_err() { grep -qF -- "$1" "$T/err" || fail "stderr does not say: $1"; }
expect_out() { grep -qF -- "$1" "$T/out" || fail "stdout does not say: $1"; }

# fb_mpi NRANKS ARGS...: feedbench ARGS under mpiexec --oversubscribe; stdout in $T/out, stderr
# in $T/err, the exit status in RC.
fb_mpi() {
	local n=$1
	shift
	"$MPIEXEC" --oversubscribe -n "$n" "$FEEDBENCH" "$@" >"$T/out" 2>"$T/err"
	RC=$?
}

# fb_mpi_bg NRANKS ARGS...: the same in the background; MPIPID is mpiexec's pid (wait for it to
# get the exit status; the EXIT trap stops it and its ranks if the test ends first).
fb_mpi_bg() {
	local n=$1
	shift
	"$MPIEXEC" --oversubscribe -n "$n" "$FEEDBENCH" "$@" >"$T/out" 2>"$T/err" &
	MPIPID=$!
}

# ckpt_ini NAME [INI text]: $T/NAME.ini, a checkpoint workload named NAME with its data in
# $T/data and its results in $T/results (no plots), then the text (give each key once).
ckpt_ini() {
	local name=$1
	shift
	cat >"$T/$name.ini" <<INI
[workload]
name = $name
type = checkpoint
[dataset]
data_dir = $T/data
[output]
dir = $T/results
plots = false
$*
INI
}

# json_check FILE CONDITION...: each CONDITION, a Python expression over s (the JSON document
# of FILE) and m (its "metric" object, or {}), must be true; the first that is not is named in
# $T/err and fails the test. JSON_LET, when set, is Python run first (more names); JSON_SHOW,
# a Python expression whose value is shown with a condition that is not true.
json_check() {
	local f=$1
	shift
	python3 - "$f" "${JSON_LET:-}" "${JSON_SHOW:-''}" "$@" <<'PY' 2>>"$T/err" ||
import json, sys
s = json.load(open(sys.argv[1]))
m = s.get("metric", {}) if isinstance(s, dict) else {}
exec(sys.argv[2])
for cond in sys.argv[4:]:
    if not eval(cond):
        sys.exit("not true: %s\n  %s" % (cond, eval(sys.argv[3])))
PY
		fail "$f: a check failed"
}

# json_get FILE EXPRESSION: prints the Python expression over s (FILE's JSON) and m.
json_get() {
	python3 - "$1" "$2" <<'PY' 2>>"$T/err" || fail "$1: cannot read $2"
import json, sys
s = json.load(open(sys.argv[1]))
m = s.get("metric", {}) if isinstance(s, dict) else {}
print(eval(sys.argv[2]))
PY
}
