#!/bin/bash
# accelerators_per_rank, run as a user runs it: mpiexec -n 2 on tests/mpi/tiny.ini (8 files x 8
# samples x 4 KiB, verified reads, 2 epochs), checking the exit status, the messages and the
# numbers in summary.json: accelerator a = loader x ranks + rank reads exactly the samples of
# rank a of ranks x K, every sample once per epoch.
#
# usage: accel.sh CASE   (environment from tests/CMakeLists.txt: FEEDBENCH, MPIEXEC)
set -u
CASE=$1
: "${FEEDBENCH_SOURCE_DIR:?FEEDBENCH_SOURCE_DIR not set}"
. "$FEEDBENCH_SOURCE_DIR/tests/lib.sh"
BASE=$FEEDBENCH_SOURCE_DIR/tests/mpi/tiny.ini
lib_init accel
REC=4096

fb() { # fb [--set ...]: 2 ranks on tiny.ini; sets RC
	rm -rf "$T/results"
	fb_mpi 2 run "$BASE" --set "dataset.data_dir=$T/data" --set "output.dir=$T/results" \
		--set train.accelerator=cpu "$@"
}

fb1() { # fb1 [--set ...]: one rank, no mpiexec (config refusals); sets RC
	"$FEEDBENCH" run "$BASE" --set "dataset.data_dir=$T/data" --set "output.dir=$T/results" \
		"$@" >"$T/out" 2>"$T/err"
	RC=$?
}

# check SAMPLES_PER_ACCELERATOR PY_CONDITIONS...: samples of accelerator 0, 1, ... over the run
check() {
	local f
	f=$(find "$T/results" -name summary.json | head -1)
	[ -n "$f" ] || fail "no summary.json"
	python3 - "$f" "$REC" "$@" <<'PY' 2>>"$T/err" || fail "summary.json: a check failed"
import json, sys
s = json.load(open(sys.argv[1]))
rec = int(sys.argv[2])
want = [int(x) for x in sys.argv[3].split(",")]
acc = s.get("accelerators", [])
got = [a["samples"] for a in acc]
m = s["metric"]
assert s["num_accelerators"] == len(want), (s["num_accelerators"], len(want))
assert got == want, ("samples per accelerator", got, want)
assert [a["bytes_read"] for a in acc] == [n * rec for n in want], [a["bytes_read"] for a in acc]
assert [a["rank"] for a in acc] == [i % 2 for i in range(len(want))]
assert all(a["au_percentage"] > 0 for a in acc), [a["au_percentage"] for a in acc]
assert m["train_samples"] == sum(want) == 128, m["train_samples"]
assert m["train_bytes_read"] == 128 * rec, m["train_bytes_read"]
assert [r["bytes_read"] for r in s["ranks"]] == [sum(want[0::2]) * rec, sum(want[1::2]) * rec]
for cond in sys.argv[4:]:
    assert eval(cond), cond
PY
}

# report N: report.md shows the N accelerators' rows as summary.json has them (tests/report)
report() {
	python3 "$FEEDBENCH_SOURCE_DIR/tests/report/check_report.py" \
		"$(dirname "$(find "$T/results" -name summary.json | head -1)")" --accelerators "$1" \
		2>>"$T/err" || fail "report.md does not match summary.json"
}

case $CASE in
per_rank | shared)
	# K = 2: 4 accelerators, 16 samples each per epoch
	fb --set "dataset.file_access=$CASE" --set train.accelerators_per_rank=2 \
		--set train.computation_time=1ms
	[ "$RC" -eq 0 ] || fail "exit $RC"
	check 32,32,32,32 "s['accelerators_per_rank'] == 2" \
		"'Emulated accelerators' in open(sys.argv[1].replace('summary.json', 'table.md')).read()"
	report 4
	;;
uneven_barrier)
	# K = 3: 6 accelerators over 8 files, accelerator a reads files i % 6 == a: 2, 2, 1, 1,
	# 1, 1 files per epoch; the step barrier joins the steps every accelerator has.
	# read_threads = auto: report.md says how many and why (binding.read_threads_choice).
	fb --set train.accelerators_per_rank=3 --set train.computation_time=1ms \
		--set train.step_barrier=true --set reader.read_threads=auto
	[ "$RC" -eq 0 ] || fail "exit $RC"
	check 32,32,16,16,16,16 "s['binding']['read_threads_choice'].startswith('auto')" \
		"s['config']['train']['step_barrier'] is True"
	# The step barrier ran: on each rank's trainer lane of timeline.csv, barrier intervals that
	# start where a step's compute ends (the K accelerators' own waits come before compute).
	python3 - "$(dirname "$(find "$T/results" -name summary.json | head -1)")/timeline.csv" <<'PY' 2>>"$T/err" ||
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["thread"] == "0"]
for rank in ("0", "1"):
    ends = {r["end_seconds"] for r in rows if r["rank"] == rank and r["kind"] == "compute"}
    post = [r for r in rows if r["rank"] == rank and r["kind"] == "barrier" and r["start_seconds"] in ends]
    if not post:
        sys.exit(f"rank {rank}: no step barrier after any step's compute in timeline.csv")
    print(f"rank {rank}: {len(post)} step barriers")
PY
		fail "no step barrier in timeline.csv"
	report 6
	;;
refused)
	fb1 --set train.accelerators_per_rank=2 --set dataset.format=wds
	[ "$RC" -ne 0 ] || fail "wds with accelerators_per_rank = 2 ran"
	grep -qF "accelerators_per_rank = 2 is not supported with stream formats" "$T/err" ||
		fail "no message naming stream formats"
	fb1 --set train.accelerators_per_rank=2 --set dataset.num_files_eval=2
	[ "$RC" -ne 0 ] || fail "evaluation with accelerators_per_rank = 2 ran"
	grep -qF "is not supported with the evaluation phase" "$T/err" || fail "no message naming evaluation"
	fb1 --set train.accelerators_per_rank=2 --set storage.backend=mpiio \
		--set dataset.file_access=shared --set storage.mpiio.collective=true
	[ "$RC" -ne 0 ] || fail "collective reads with accelerators_per_rank = 2 ran"
	grep -qF "is not supported with [storage.mpiio] collective = true" "$T/err" ||
		fail "no message naming collective reads"
	fb1 --set train.accelerators_per_rank=2 --set train.accelerator=cuda
	[ "$RC" -ne 0 ] || fail "accelerator = cuda with accelerators_per_rank = 2 ran"
	grep -qF "is not supported with accelerator = cuda" "$T/err" || fail "no message naming cuda"
	fb --set train.accelerators_per_rank=8
	[ "$RC" -ne 0 ] || fail "16 accelerators over 8 files ran"
	grep -qF "2 ranks x accelerators_per_rank 8 = 16 accelerators, and the last reads 0 samples" "$T/err" ||
		fail "no message naming the accelerator count"
	[ ! -e "$T/results" ] || [ -z "$(ls -A "$T/results")" ] || fail "a refused run left results"
	;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
exit 0
