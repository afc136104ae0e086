#!/bin/bash
# Per-operation traces ([output] trace, bench/trace.c; docs/trace.md): real mpiexec runs at 2
# ranks of the tiny MPI workload (tests/mpi/tiny.ini) with 1 ms of compute per step, checking
# what a user sees: trace.pfw in the run folder, every line a valid Chrome trace event
# (check_trace.py) whose reads, bytes, opens and steps are those of summary.json; io_uring reads
# (backend = uring, io_depth 8) traced as such; no trace and no staging file left with trace off.
# import: the round trip of `feedbench import-trace`: a small training job (job.py: PyTorch's
# DataLoader with 2 worker processes where Debian's python3-torch is installed, else Python
# threads) reads 64 npy files traced in dftracer's format; the imported config validates, says
# what the job did (npy, 64 files, batch 8, 2 readers, shuffled, 2 epochs, compute and preprocess
# at least what the job slept and spun), and feedbench run with it on the same files reads the
# same bytes, read calls and samples per epoch; bad traces exit 2 naming file and line.
#
# usage: trace.sh run|import
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
	# The timeline plot draws the trace's events (where gnuplot is installed).
	if [ "$1 $2" = "--cat POSIX" ] && command -v gnuplot >/dev/null; then
		"$FEEDBENCH" plot "$run" >"$T/out" 2>"$T/err" || fail "feedbench plot exited $?"
		grep -q 'every repetition (trace.pfw)' "$run/timeline.svg" ||
			fail "timeline.svg is not drawn from trace.pfw"
		[ ! -e "$run/.timeline-trace.csv" ] || fail "the plot left .timeline-trace.csv"
	fi
	rm -rf "$T/results"
}

# The python that runs the job: Debian's, where its torch is, else the first python3.
job_python() {
	if /usr/bin/python3 -c 'import torch' >/dev/null 2>&1; then
		echo /usr/bin/python3
	else
		echo python3
	fi
}

import_case() {
	local py run
	py=$(job_python)
	python3 "$HERE/job.py" make "$T/data" 64 32768 || fail "cannot make the npy files"
	"$py" "$HERE/job.py" run "$T/data" "$T/job.pfw" --epochs 2 --batch 8 --workers 2 \
		--compute-ms 5 --preprocess-ms 1 --shuffle >"$T/job.json" 2>>"$T/err" ||
		fail "the traced job failed"
	"$FEEDBENCH" import-trace "$T/job.pfw" -o "$T/job.ini" >"$T/out" 2>"$T/err" ||
		fail "import-trace exited $?"
	"$FEEDBENCH" validate "$T/job.ini" >"$T/out" 2>"$T/err" || fail "the imported config is invalid"
	fb_mpi 1 run "$T/job.ini" --set "output.dir=$T/results" --set output.plots=false \
		--set output.trace=true </dev/null
	[ "$RC" -eq 0 ] || fail "feedbench run of the imported config exited $RC"
	run=$(find "$T/results" -mindepth 1 -maxdepth 1 -type d)
	python3 "$HERE/check_import.py" "$T/job.ini" "$T/job.json" "$run" 2>>"$T/err" ||
		fail "the imported config does not reproduce the job"
	# Bad input: exit 2, one message naming the file and line; no config written.
	printf '[\n{"name":"read","ph":"X","ts":1,"dur":1,"args":{"fname":"/a","size":4}}\n{"name":\n' \
		>"$T/bad.pfw"
	bad "$T/bad.pfw" "'$T/bad.pfw' line 3: not a JSON event"
	printf '[\n{"name":"read","ph":"X","ts":"soon","dur":1}\n' >"$T/bad.pfw"
	bad "$T/bad.pfw" "line 2: event 'read' has no number ts"
	head -c 70000 /dev/zero | tr '\0' x >"$T/bad.pfw"
	bad "$T/bad.pfw" "line 1: longer than 65536 bytes"
	printf '# DXT, file_id: 1, file_name: /d/f\n X_POSIX 0 read 0 zero 4 0.1 0.2\n' >"$T/bad.pfw"
	bad "$T/bad.pfw" "line 2: not a darshan-dxt-parser segment line"
	printf '[\n]\n' >"$T/bad.pfw"
	bad "$T/bad.pfw" "no read naming a file"
	printf '[\n{"name":"read","ph":"X","ts":1,"dur":1,"tdur":-2,"args":{"fname":"/a","size":4}}\n' \
		>"$T/bad.pfw"
	bad "$T/bad.pfw" "line 2: event 'read': tdur is not a number >= 0"
	printf '[\n{"name":"read","ph":"X","ts":1,"dur":1,"tdur":"nan","args":{"fname":"/a","size":4}}\n' \
		>"$T/bad.pfw"
	bad "$T/bad.pfw" "line 2: event 'read': tdur is not a number >= 0"
	# preprocess_time: the mean thread CPU time (tdur) where every sample and read has it,
	# else the 10th percentile of time less I/O (1 ms of 1-10 ms: 0.998 ms, its 1 % bin)
	python3 - "$T/pre" <<'PY'
import json, sys
for name, tdur in (("cpu", 500), ("wall", None)):
    with open(f"{sys.argv[1]}-{name}.pfw", "w") as f:
        for i in range(10):
            for ev, d in (("read", 100), ("__getitem__", 1000 * (i + 1) + 100)):
                e = {"name": ev, "ph": "X", "pid": 1, "tid": 1, "ts": 20000 * i, "dur": d,
                     "args": {"fname": f"/d/{i}.bin", "size": 4096} if ev == "read" else {}}
                if tdur:
                    e["tdur"] = 50 if ev == "read" else tdur + 50
                f.write(json.dumps(e) + "\n")
# CPU counters (process 2 loads: 9 ms of CPU over 10 samples whose reads took 0.5 ms of it;
# process 1 trains: 2 ms over 5 steps whose compute took 0.5 ms) and fetch events
with open(f"{sys.argv[1]}-ctr.pfw", "w") as f:
    w = lambda **e: f.write(json.dumps(dict(ph="X", tid=1, ts=1, **e)) + "\n")
    c = lambda pid, us: f.write(json.dumps({"name": "process_cpu", "ph": "C", "pid": pid,
                                            "ts": 1, "args": {"cpu_us": us}}) + "\n")
    c(2, 1000)
    for i in range(10):
        w(name="read", pid=2, dur=80, tdur=50, args={"fname": f"/d/{i}.bin", "size": 4096})
        w(name="__getitem__", pid=2, dur=900, tdur=600)
    c(2, 10000)
    c(1, 0)
    for i in range(5):
        w(name="fetch", pid=1, dur=3000, tdur=200)
        w(name="compute", pid=1, dur=5000, tdur=100, args={"step": i})
        c(1, 400 * (i + 1))
PY
	"$FEEDBENCH" import-trace "$T/pre-cpu.pfw" >"$T/out" 2>"$T/err" || fail "import-trace exited $?"
	grep -qx "preprocess_time = 0.000500" "$T/out" || fail "preprocess_time is not the mean tdur"
	"$FEEDBENCH" import-trace "$T/pre-wall.pfw" >"$T/out" 2>"$T/err" || fail "import-trace exited $?"
	grep -qx "preprocess_time = 0.000998" "$T/out" ||
		fail "preprocess_time is not the 10th percentile of time less I/O"
	grep -qx "host_time = 0" "$T/out" || fail "host_time derived from a trace without counters"
	# with CPU counters: the loader's CPU per sample less its reads' (preprocess_time), the
	# trainer's CPU per step less its compute's (host_time); the fetches' wait beyond their CPU
	"$FEEDBENCH" import-trace "$T/pre-ctr.pfw" >"$T/out" 2>"$T/err" || fail "import-trace exited $?"
	grep -qx "preprocess_time = 0.000850" "$T/out" ||
		fail "preprocess_time is not the loader process's CPU per sample less its reads'"
	grep -qx "host_time = 0.000300" "$T/out" ||
		fail "host_time is not the trainer's CPU per step less its compute's"
	grep -q "waited 0.002800 s per step beyond their CPU time" "$T/out" ||
		fail "the fetch events' wait is not in the comment"
	printf '[\n{"name":"process_cpu","ph":"C","ts":1,"args":{"cpu_us":"x"}}\n' >"$T/bad.pfw"
	bad "$T/bad.pfw" "line 2: counter 'process_cpu': args.cpu_us is not a number >= 0"
	# a FIFO given as a trace: refused at once (no writer would ever come), not waited on
	mkfifo "$T/fifo.pfw"
	timeout 20 "$FEEDBENCH" import-trace "$T/fifo.pfw" -o "$T/bad.ini" >"$T/out" 2>"$T/err"
	RC=$?
	[ "$RC" -ne 124 ] || fail "import-trace waited on a FIFO given as a trace"
	[ "$RC" -eq 2 ] || fail "import-trace of a FIFO exited $RC, not 2"
	grep -q "cannot read '$T/fifo.pfw': not a regular file" "$T/err" ||
		fail "the message does not name the FIFO: $(cat "$T/err")"
	[ ! -e "$T/bad.ini" ] || fail "a config was written from a FIFO"
	printf '# DXT, file_id: 1, file_name: /d/f.bin\n# DXT, rank: 0, hostname: h\n X_POSIX 0 read 0 0 4096 0.1 0.2\n X_POSIX 0 read 1 4096 4096 0.2 0.3\n' >"$T/dxt.txt"
	"$FEEDBENCH" import-trace "$T/dxt.txt" >"$T/out" 2>"$T/err" || fail "a DXT trace exited $?"
	grep -qx "record_length_bytes = 4096" "$T/out" || fail "DXT: record_length_bytes is not 4096"
	grep -qx "num_samples_per_file = 2" "$T/out" || fail "DXT: num_samples_per_file is not 2"
}

# bad TRACE MESSAGE: import-trace refuses TRACE with exit 2, MESSAGE once, no config.
bad() {
	rm -f "$T/bad.ini"
	"$FEEDBENCH" import-trace "$1" -o "$T/bad.ini" >"$T/out" 2>"$T/err"
	RC=$?
	[ "$RC" -eq 2 ] || fail "import-trace of a bad trace exited $RC, not 2"
	[ "$(grep -c -- "$2" "$T/err")" -eq 1 ] || fail "the message does not say '$2' once"
	[ ! -e "$T/bad.ini" ] || fail "a config was written from a bad trace"
}

case $CASE in
run)
	# 1 600 reads per reader thread: past a thread buffer (about 1 150 events), so the trace
	# is formatted from more than one chunk per thread
	check --set dataset.num_samples_per_file=400 --set train.computation_time=0 -- --cat POSIX \
		--compute-us 0
	if "$FEEDBENCH" list | grep -qE '^ +uring +built'; then
		check --set storage.backend=uring --set storage.io_depth=8 -- --cat io_uring
	fi
	# the metadata workload: its namespace calls (mkdir, open, stat, unlink) traced
	fb_mpi 2 run "$FEEDBENCH_SOURCE_DIR/configs/workloads/mdtest.ini" --set output.trace=true \
		--set "dataset.data_dir=$T/md" --set "output.dir=$T/results" \
		--set metadata.files_per_rank=20 --set metadata.file_size=1000 </dev/null
	[ "$RC" -eq 0 ] || fail "traced metadata run exited $RC"
	python3 "$HERE/check_trace.py" "$(find "$T/results" -mindepth 1 -maxdepth 1 -type d)" \
		--metadata >>"$T/out" 2>>"$T/err" || fail "the metadata run's trace.pfw"
	rm -rf "$T/results"
	fb
	[ "$RC" -eq 0 ] || fail "untraced run exited $RC"
	[ -z "$(find "$T/results" -name 'trace.pfw' -o -name '.feedbench-trace*')" ] ||
		fail "a trace was written with trace off"
	;;
import)
	import_case
	;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
echo "trace $CASE: ok"
