#!/bin/bash
# `feedbench mlperf check` of checkpointing submissions (docs/mlperf.md): real 2-rank runs of a
# small model, 10 writes and 10 reads, in one invocation and in two (write, then read); the
# scaled-down folder is INVALID by 4.3.3 (not a Llama 3 model at full size), and from these
# folders tests/mlperf/ckpt_rules.py edits a passing and a failing case per rule.
# Environment from tests/CMakeLists.txt: FEEDBENCH, MPIEXEC, FEEDBENCH_SOURCE_DIR.
set -u
: "${FEEDBENCH_SOURCE_DIR:?FEEDBENCH_SOURCE_DIR not set}"
. "$FEEDBENCH_SOURCE_DIR/tests/lib.sh"
FAIL_WHAT=mlperf.checkpoint
lib_init mlperfck /tmp
cd "$T" || exit 1

cat >"$T/c.ini" <<INI
[workload]
name = ck
type = checkpoint
[dataset]
data_dir = $T/data
[output]
dir = $T/results
plots = false
[checkpoint]
num_parameters = 100003
transfer_size = 256KiB
zero_stage = 3
num_checkpoints_write = 10
num_checkpoints_read = 10
recovery_rank_shift = true
INI
one() { # one invocation into $T/$1
	fb_mpi 2 run "$T/c.ini" --quiet --output "$T/$1" "${@:2}"
	[ "$RC" -eq 0 ] || fail "the $1 invocation exited $RC"
	dirname "$(find "$T/$1" -name summary.json | head -1)"
}
both=$(one both)
write=$(one write --set checkpoint.num_checkpoints_read=0 --set dataset.data_dir="$T/data2")
read=$(one read --set checkpoint.num_checkpoints_write=0 --set dataset.data_dir="$T/data2")
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
