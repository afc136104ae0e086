#!/bin/bash
# Checkpointing submissions (docs/mlperf.md): `feedbench mlperf run` of a small model on 2
# ranks, 10 writes and 10 reads, in one invocation and with --split in two (write, then read):
# results.json, results.csv and checkpoints.csv against summary.json (ckpt_results.py), the
# refusals; `feedbench mlperf check` of them: the scaled-down folder is INVALID by 4.3.3 (not a
# Llama 3 model at full size), and from these folders tests/mlperf/ckpt_rules.py edits a
# passing and a failing case per rule.
# Environment from tests/CMakeLists.txt: FEEDBENCH, MPIEXEC, FEEDBENCH_SOURCE_DIR.
set -u
: "${FEEDBENCH_SOURCE_DIR:?FEEDBENCH_SOURCE_DIR not set}"
. "$FEEDBENCH_SOURCE_DIR/tests/lib.sh"
FAIL_WHAT=mlperf.checkpoint
lib_init mlperfck /tmp
cd "$T" || exit 1

ckpt_ini ck "[checkpoint]
num_parameters = 100003
transfer_size = 256KiB
zero_stage = 3
num_checkpoints_write = 10
num_checkpoints_read = 10
recovery_rank_shift = true"
sub() { # sub NAME ARGS...: `feedbench mlperf run` into $T/NAME, the submission folder printed
	fb_mpi 2 mlperf run "$T/ck.ini" --quiet --output "$T/$1" "${@:2}"
	[ "$RC" -eq 0 ] || fail "mlperf run $* exited $RC"
	find "$T/$1" -mindepth 1 -maxdepth 1 -name 'ck-mlperf-*' | head -1
}
one=$(sub one)
split=$(sub split --split --set dataset.data_dir="$T/data2")
both=$one/run write=$split/write read=$split/read
[ -f "$both/summary.json" ] && [ -f "$write/summary.json" ] && [ -f "$read/summary.json" ] ||
	fail "mlperf run left no run/, write/ and read/ invocation folders"
python3 "$FEEDBENCH_SOURCE_DIR/tests/mlperf/ckpt_results.py" "$one" "$split" 2>"$T/err" ||
	fail "results.json, results.csv or checkpoints.csv disagree with summary.json"
# A checkpointing submission writes and reads; --runs is training's.
fb_mpi 1 mlperf run "$T/ck.ini" --set checkpoint.num_checkpoints_read=0 --output "$T/no"
expect_rc 2
expect_err "a checkpointing submission writes and reads: set [checkpoint] num_checkpoints_write and num_checkpoints_read above 0"
fb_mpi 1 mlperf run "$T/ck.ini" --runs 3 --output "$T/no"
expect_rc 2
expect_err "--runs and --seed are for training"
[ ! -e "$T/no" ] || fail "a refused mlperf run made $T/no"
"$FEEDBENCH" mlperf check "$split" >"$T/out" 2>"$T/err"
grep -q "^PASS    2.1.23 checkpointingTimestamps: a write invocation, then a read invocation" "$T/out" ||
	fail "mlperf check of the --split submission folder does not see its two invocations"
"$FEEDBENCH" mlperf check "$both" >"$T/out" 2>"$T/err"
RC=$?
[ "$RC" -eq 1 ] || fail "check of the scaled-down invocation exited $RC, not 1"
grep -q "^INVALID 4.3.3 checkpointModelConfigurationReq: 100003 parameters" "$T/out" ||
	fail "the scaled-down invocation is not INVALID by 4.3.3"
grep -q "^PASS    2.1.23 checkpointingTimestamps: one invocation" "$T/out" ||
	fail "the real invocation's structure does not pass"
python3 "$FEEDBENCH_SOURCE_DIR/tests/mlperf/ckpt_rules.py" "$both" "$write" "$read" "$T/cases" ||
	fail "a checkpointing rule's passing or failing folder got the wrong finding"
exit 0
