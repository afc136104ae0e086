#!/bin/bash
# The checkpoint workload ([workload] type = checkpoint) under mpiexec on 2 ranks, in a temporary
# folder: exact bytes in summary.json, the files on disk (DCP folder per step, .metadata last),
# durability (a failing fsync is never reported durable), restore verification (a flipped byte
# is exit 1 naming rank, file and offset), ENOSPC mid-checkpoint (the previous checkpoint stays
# intact and restorable), and a rank killed mid-checkpoint (no checkpoint looks complete that
# is not).
#
# usage: checkpoint.sh CASE   (environment from tests/CMakeLists.txt: FEEDBENCH, MPIEXEC)
set -u
CASE=$1
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
FAIL_WHAT="checkpoint $CASE"
# A run started in the background (case killed) never outlives the test (the EXIT trap of
# lib.sh): a check that fails while it runs would otherwise leave it writing checkpoints into
# a removed folder.
lib_init ckpt /tmp
# Files made immutable (case remove_first) are made removable again before the folder goes.
IMMUTABLE=()
unpin() { [ ${#IMMUTABLE[@]} -eq 0 ] || chattr -i "${IMMUTABLE[@]}" 2>/dev/null; }
lib_on_exit unpin
CK=$T/data/checkpoints

# config NAME [INI text]: 1 000 003 parameters x (2 + 12) bytes = 14 000 042 bytes per
# checkpoint, 256 KiB transfers; the text is appended (later keys of a section win nothing:
# give each key once).
config() { ckpt_ini "$@"; }

run() { # run NRANKS NAME [--set ...]
	local n=$1 name=$2
	shift 2
	fb_mpi "$n" run "$T/$name.ini" --quiet "$@"
}

summary() { find "$T/results" -name summary.json 2>/dev/null | sort | tail -1; }

# check PYTHON: runs the checks with s = summary.json (or None), ck = checkpoint folder.
check() {
	python3 "$HERE/check_checkpoint.py" "$(summary)" "$CK" "$1" >>"$T/err" 2>&1 ||
		fail "check failed: $1"
}


# newest_complete: the highest N with $CK/step-N/.metadata (0 when there is none).
newest_complete() {
	local m n max=0
	for m in "$CK"/step-*/.metadata; do
		[ -e "$m" ] || continue
		n=${m%/.metadata}
		n=${n##*/step-}
		[ "$n" -gt "$max" ] && max=$n
	done
	echo "$max"
}

# train_config NAME [more INI]: a training run (raw, 13 files x 5 samples of 64 KiB, batch 4,
# 2 epochs, 2 ms steps) with the checkpoint above, zero_stage 3; the text is appended to
# [checkpoint].
train_config() {
	local name=$1
	shift
	cat >"$T/$name.ini" <<INI
[workload]
name = $name
type = train
[dataset]
data_dir = $T/data
format = raw
num_files_train = 13
num_samples_per_file = 5
record_length_bytes = 64KiB
[reader]
batch_size = 4
read_threads = 2
[train]
epochs = 2
computation_time = 2ms
[output]
dir = $T/results
plots = false
[checkpoint]
num_parameters = 1000003
transfer_size = 256KiB
zero_stage = 3
$*
INI
}

CKPT="[checkpoint]
num_parameters = 1000003
transfer_size = 256KiB"

case $CASE in
dcp)
	# tensor 2 x data 1: both ranks write a shard of every part; two checkpoints.
	config dcp "$CKPT
tensor_parallelism = 2
count = 2"
	t0=$(date +%s.%N)
	run 2 dcp
	t1=$(date +%s.%N)
	expect_rc 0
	check "dcp_ok(s, ck, steps=[1, 2], total=14000042, writers=[0, 1], count=2)"
	check "timing_ok(s, wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'))"
	# each restore starts from an evicted file, measured with mincore: both ranks' files, ~0 %
	check "[(m['step'], m['when'], m['files_examined'], m['files_failed']) for m in s['storage']['checkpoint_restore_cache_measured']] == [(1, 'before', 2, 0), (2, 'before', 2, 0)]"
	check "all(m['examined_bytes'] > 0 and m['resident_percent'] <= 10 for m in s['storage']['checkpoint_restore_cache_measured'])"
	grep -q "^| namespace (rank 0) | 6 calls (stat, mkdir, unlink, list, rmdir, rename) in [0-9.]* s; 4 folder fsyncs in " \
		"$(dirname "$(summary)")/table.md" || fail "table.md has no namespace row"
	grep -q "^| restore (read) | .* slowest rank, files evicted (fadvise), verified byte for byte |" \
		"$(dirname "$(summary)")/table.md" || fail "table.md does not say the files were evicted"
	# zero_stage 0, data 2: the replica (rank 1) writes nothing; zero_stage 3 shards all.
	rm -rf "$T/results" "$T/data"
	run 2 dcp --set checkpoint.tensor_parallelism=1 --set checkpoint.count=1
	expect_rc 0
	check "dcp_ok(s, ck, steps=[1], total=14000042, writers=[0], count=1)"
	rm -rf "$T/results" "$T/data"
	run 2 dcp --set checkpoint.tensor_parallelism=1 --set checkpoint.count=1 \
		--set checkpoint.zero_stage=3
	expect_rc 0
	check "dcp_ok(s, ck, steps=[1], total=14000042, writers=[0, 1], count=1)"
	check "s['checkpoint']['bytes_per_rank'] == [7000021, 7000021]"
	;;
single)
	# One shared file, posix pwrite at offsets, then MPI-IO; the 70B-style zero_stage 1 split.
	for backend in posix mpiio; do
		rm -rf "$T/results" "$T/data"
		config single "$CKPT
layout = single
zero_stage = 1
[storage]
backend = $backend"
		run 2 single
		expect_rc 0
		check "single_ok(s, ck, total=14000042)"
		check "s['storage']['backend'] == '$backend'"
	done
	;;
keep_last)
	config keep "$CKPT
count = 3
keep_last = 1"
	run 2 keep
	expect_rc 0
	check "sorted(os.listdir(ck)) == ['step-3']"
	check "s['metric']['checkpoint_count'] == 3 and s['metric']['checkpoint_bytes_written'] == 3 * 14000042"
	# through the io_* wrappers (zero_stage 0: rank 0 writes the one shard): per checkpoint a
	# stat, a mkdir and .metadata's rename, the step folder's and the checkpoint folder's
	# fsyncs after it; per removal (steps 1 and 2) a stat, .metadata's unlink, a list, the
	# shard's unlink and a rmdir, the step folder's and the checkpoint folder's fsyncs
	check "namespace_ok(s, ops=3 * 3 + 2 * 5, folder_fsyncs=3 * 2 + 2 * 2, creates=3)"
	check "[c.get('delete_seconds', 0) > 0 for c in s['checkpoints']] == [False, True, True]"
	;;
fsync_fail)
	# Rank 1's fsync fails: the checkpoint is never durable: exit 1 naming rank 1, its file
	# and fsync; no .metadata; no results.
	config fsync "$CKPT
zero_stage = 3
[storage]
backend = faulty
[storage.faulty]
fail_op = fsync
fail_rank = 1
fail_nth = 1
fail_errno = EIO"
	run 2 fsync
	expect_rc 1
	grep -q "rank 1: cannot fsync '$CK/step-1/__1_0.distcp': Input/output error" "$T/err" ||
		fail "the message does not name rank 1, its file and the fsync"
	[ ! -e "$CK/step-1/.metadata" ] || fail "a checkpoint whose fsync failed has .metadata"
	[ -z "$(summary)" ] || fail "results were written"
	;;
corrupt)
	# Written without restore, one byte of rank 1's shard flipped, restored (save = false).
	config corrupt "$CKPT
zero_stage = 3"
	run 2 corrupt --set checkpoint.restore=false --set checkpoint.verify=false
	expect_rc 0
	run 2 corrupt --set checkpoint.save=false
	expect_rc 0 # intact: restores and verifies
	python3 - "$CK/step-1/__1_0.distcp" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(5000001)
    b = f.read(1)
    f.seek(5000001)
    f.write(bytes([b[0] ^ 0x10]))
PY
	rm -rf "$T/results"
	run 2 corrupt --set checkpoint.save=false
	expect_rc 1
	grep -q "rank 1: checkpoint verification failed: '$CK/step-1/__1_0.distcp' at offset 5000001: expected 0x" "$T/err" ||
		fail "the message does not name rank 1, the file and offset 5000001"
	[ -z "$(summary)" ] || fail "results were written"
	# A checkpoint without .metadata is not restored.
	rm "$CK/step-1/.metadata"
	run 2 corrupt --set checkpoint.save=false
	expect_rc 1
	grep -q "checkpoint '$CK/step-1' cannot be restored: .metadata is missing" "$T/err" ||
		fail "an incomplete checkpoint was not refused"
	;;
enospc)
	# 14000042 / 2 bytes per rank in 256 KiB transfers: 27 writes per checkpoint; the 30th
	# write of rank 1 (its third in checkpoint 2, offset 2 x 256 KiB) fails with ENOSPC.
	config enospc "$CKPT
zero_stage = 3
count = 2
[storage]
backend = faulty
[storage.faulty]
fail_op = write
fail_rank = 1
fail_nth = 30
fail_errno = ENOSPC"
	run 2 enospc
	expect_rc 1
	grep -q "rank 1: cannot write '$CK/step-2/__1_0.distcp' at offset 524288: No space left on device" "$T/err" ||
		fail "the message does not name rank 1, its file and the offset"
	[ -z "$(summary)" ] || fail "results were written"
	[ -e "$CK/step-1/.metadata" ] || fail "the previous checkpoint lost its .metadata"
	[ ! -e "$CK/step-2/.metadata" ] && [ -z "$(ls -A "$CK/step-2" | grep '^\.')" ] ||
		fail "the failed checkpoint looks complete"
	# The previous checkpoint is intact: it restores and verifies.
	run 2 enospc --set checkpoint.save=false --set checkpoint.count=1 --set storage.backend=posix
	expect_rc 0
	check "s['metric']['checkpoint_bytes_read'] == 14000042"
	;;
remove_first)
	# An earlier run's checkpoint folder is removed before the step is written again (and
	# keep_last removes old ones the same way): .metadata goes first, so a removal that
	# stops half way (here no shard can be unlinked: chattr +i) leaves an incomplete
	# checkpoint, never one that looks complete with files missing.
	config rf "$CKPT
zero_stage = 3
restore = false
verify = false"
	run 2 rf
	expect_rc 0
	IMMUTABLE=("$CK/step-1/__0_0.distcp" "$CK/step-1/__1_0.distcp")
	chattr +i "${IMMUTABLE[@]}" 2>/dev/null || {
		IMMUTABLE=()
		echo "SKIP: chattr +i is not supported here (root and a file system that has it)"
		exit 77
	}
	rm -rf "$T/results"
	run 2 rf
	expect_rc 1
	grep -q "rank 0: cannot remove '$CK/step-1/__[01]_0.distcp': Operation not permitted" "$T/err" ||
		fail "the message does not name the file and the error"
	[ ! -e "$CK/step-1/.metadata" ] || fail "a checkpoint removed half way still has .metadata"
	[ -z "$(summary)" ] || fail "results were written"
	;;
namespace_faults)
	# The checkpoint's namespace calls go through the storage back-end: the faulty one fails
	# them. Each failure: exit 1 with a message naming the path, no results, and no
	# checkpoint that looks complete and is not.
	nsrun() { # nsrun OP NTH [more INI]
		rm -rf "$T/results" "$T/data"
		config ns "$CKPT
zero_stage = 3
restore = false
verify = false
count = 2
keep_last = 1
[storage]
backend = faulty
[storage.faulty]
fail_op = $1
fail_rank = 0
fail_nth = $2
fail_errno = EIO"
		run 2 ns
		expect_rc 1
		[ -z "$(summary)" ] || fail "$1: results were written"
	}
	# keep_last removes step 1 after step 2: .metadata goes (unlink 1), then a shard's
	# unlink (2) fails: step 1 is left incomplete, step 2 complete.
	nsrun unlink 2
	grep -q "rank 0: cannot remove '$CK/step-1/__[01]_0.distcp': Input/output error" "$T/err" ||
		fail "unlink: the message does not name rank 0 and the file"
	[ ! -e "$CK/step-1/.metadata" ] || fail "unlink: a half-removed checkpoint has .metadata"
	[ -e "$CK/step-2/.metadata" ] || fail "unlink: the newest checkpoint lost its .metadata"
	# .metadata is renamed into place (1st and 2nd folder fsyncs: the step folder, the
	# checkpoint folder); either fsync failing leaves it not durable: .metadata is taken back.
	for nth in 1 2; do
		nsrun sync_dir $nth
		folder=$CK/step-1
		[ $nth -eq 2 ] && folder=$CK
		grep -q "rank 0: cannot fsync folder '$folder': Input/output error" "$T/err" ||
			fail "sync_dir $nth: the message does not name rank 0 and the folder"
		[ -d "$CK/step-1" ] && [ -z "$(ls -A "$CK/step-1" | grep '^\.')" ] ||
			fail "sync_dir $nth: .metadata or its temporary left: $(ls -A "$CK/step-1")"
		[ ! -e "$CK/step-2" ] || fail "sync_dir $nth: the run went on after the failure"
	done
	# .metadata's rename fails: no .metadata, no temporary left
	nsrun rename 1
	grep -q "rank 0: cannot rename '$CK/step-1/\.\.metadata\.tmp-[0-9a-f]*' to '$CK/step-1/\.metadata': Input/output error" "$T/err" ||
		fail "rename: the message does not name rank 0 and both paths"
	[ -d "$CK/step-1" ] && [ -z "$(ls -A "$CK/step-1" | grep '^\.')" ] ||
		fail "rename: .metadata or its temporary left: $(ls -A "$CK/step-1")"
	# mkdir: the set-up makes every level of the checkpoint folder (mkdir -p: one call per
	# '/' in $CK), the next mkdir is step 1's folder.
	levels=$(tr -cd / <<<"$CK" | wc -c)
	nsrun mkdir $((levels + 1))
	grep -q "rank 0: cannot create folder '$CK/step-1': Input/output error" "$T/err" ||
		fail "mkdir: the message does not name rank 0 and the folder"
	[ -d "$CK" ] && [ -z "$(ls -A "$CK")" ] || fail "mkdir: something was written: $(ls -A "$CK")"
	# The null back-end keeps no files: no .metadata could be renamed into place. Refused.
	config null "$CKPT
[storage]
backend = null"
	"$FEEDBENCH" validate "$T/null.ini" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 2
	grep -qF "[storage] backend = null keeps no files" "$T/err" || fail "null: not refused"
	;;
killed)
	# Rank 1 killed at some point of a stream of checkpoints (keep_last = 2): every step
	# folder with .metadata is complete (all files, full sizes); the in-flight one has none.
	config killed "$CKPT
zero_stage = 3
count = 100000
keep_last = 2
restore = false
verify = false
[train]
watchdog = 10s"
	fb_mpi_bg 2 run "$T/killed.ini" --quiet
	# Waits until a checkpoint numbered 3 or later is complete. Not for step-3 itself:
	# keep_last = 2 removes it as soon as step 5 is durable, a few tens of milliseconds
	# later, and a look that comes later than that (a busy machine) would never see it. The
	# newest complete checkpoint's number only grows. A wait, not a time limit (60 s); a run
	# that ended by itself is a failure at once, with its messages.
	for _ in $(seq 1 1200); do
		[ "$(newest_complete)" -ge 3 ] && break
		kill -0 "$MPIPID" 2>/dev/null || fail "the run ended before its third checkpoint"
		sleep 0.05
	done
	[ "$(newest_complete)" -ge 3 ] ||
		fail "no third checkpoint after 60 s (newest complete: $(newest_complete))"
	pid=""
	for p in $(ps -o pid= --ppid "$MPIPID"); do
		tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1" && pid=$p
	done
	[ -n "$pid" ] || fail "rank 1 not found"
	kill -KILL "$pid"
	start=$SECONDS
	while kill -0 "$MPIPID" 2>/dev/null; do
		[ $((SECONDS - start)) -lt 30 ] || fail "still running 30 s after rank 1 was killed"
		sleep 0.1
	done
	wait "$MPIPID"
	RC=$?
	[ "$RC" -ne 0 ] || fail "exit status 0 after a rank was killed"
	check "killed_ok(ck, total=14000042)"
	[ -z "$(summary)" ] || fail "results were written"
	;;
train_steps | train_async)
	# Training (13 files x 5 samples of 64 KiB, batch 4, 2 epochs): rank 0 has 9 steps per
	# epoch, rank 1 has 8; a checkpoint every 3 steps counts the 8 steps both have: after
	# global steps 3, 6, 9, 12, 15: 5 checkpoints, the last 2 kept, all durable.
	mode=blocking
	[ "$CASE" = train_async ] && mode=async
	train_config tr "checkpoint_every_steps = 3
keep_last = 2
mode = $mode"
	run 2 tr
	expect_rc 0
	check "train_ok(s, ck, count=5, kept=[4, 5], total=14000042, mode='$mode')"
	;;
train_steps_fail)
	# Rank 1 reads 30 samples per epoch; its 40th read fails (sample 10 of epoch 2: global
	# step 11, not a checkpoint step) while rank 0, which does not wait for it between
	# steps, may already wait at the checkpoint after global step 12: rank 1 makes that
	# agreement too, both leave together (no hang), exit 1 naming rank 1; only complete
	# checkpoints are on disk: after steps 3 and 6 (epoch 1), and after step 9 unless the
	# reader threads, reading ahead, met the failure before the trainer reached step 9.
	train_config gen ""
	run 2 gen
	expect_rc 0
	train_config trf "checkpoint_every_steps = 3
[storage]
backend = faulty
[storage.faulty]
fail_op = read
fail_rank = 1
fail_nth = 40
fail_errno = EIO"
	rm -rf "$CK" "$T/results"
	run 2 trf
	expect_rc 1
	grep -q "rank 1: .*Input/output error" "$T/err" || fail "the message does not name rank 1"
	check "sorted(os.listdir(ck)) in (['step-1', 'step-2'], ['step-1', 'step-2', 'step-3']) and killed_ok(ck, total=14000042) and all(os.path.exists(os.path.join(ck, d, '.metadata')) for d in os.listdir(ck))"
	[ -z "$(summary)" ] || fail "results were written"
	;;
train_async_fail)
	# Async: rank 1's writer thread fails (ENOSPC) writing checkpoint 2 while training goes
	# on: reported at the next agreement point, exit 1 naming rank 1 and its file; checkpoint
	# 1 stays complete, checkpoint 2 has no .metadata.
	train_config gen ""
	run 2 gen
	expect_rc 0
	train_config taf "checkpoint_every_steps = 3
mode = async
[storage]
backend = faulty
[storage.faulty]
fail_op = write
fail_rank = 1
fail_nth = 30
fail_errno = ENOSPC"
	rm -rf "$CK" "$T/results"
	run 2 taf
	expect_rc 1
	grep -q "rank 1: cannot write '$CK/step-2/__1_0.distcp' at offset 524288: No space left on device" "$T/err" ||
		fail "the message does not name rank 1, its file and the offset"
	[ -e "$CK/step-1/.metadata" ] || fail "the previous checkpoint lost its .metadata"
	[ ! -e "$CK/step-2/.metadata" ] || fail "the failed checkpoint looks complete"
	[ -z "$(summary)" ] || fail "results were written"
	;;
train_after_epoch)
	# checkpoint_after_epoch (DLIO's checkpoint_after_epoch and epochs_between_checkpoints):
	# a checkpoint after 1-based epoch e when e >= after and (e - after) % every == 0. Small:
	# 8 raw files x 2 samples of 16 KiB, batch 4 (2 steps per rank and epoch), 64 KiB
	# checkpoints written by rank 0 (zero_stage 0). Which epochs had one: the count after 2, 3,
	# 4 and 5 epochs (1, 1, 2, 2: one after epoch 4, none after 3 or 5), and a read failing in
	# epoch 2 leaves no checkpoint (none after epoch 1): after epochs 2 and 4 only.
	ae_config() { # ae_config NAME EPOCHS AFTER EVERY [more INI]
		cat >"$T/$1.ini" <<INI
[workload]
name = $1
type = train
[dataset]
data_dir = $T/data
format = raw
num_files_train = 8
num_samples_per_file = 2
record_length_bytes = 16KiB
[reader]
batch_size = 4
read_threads = 1
[train]
epochs = $2
computation_time = 1ms
[output]
dir = $T/results
plots = false
[checkpoint]
model_size_bytes = 64KiB
transfer_size = 64KiB
checkpoint_after_epoch = $3
checkpoint_every_epochs = $4
${5-}
INI
	}
	for e in 2 3 4 5; do
		ae_config ae$e $e 2 2
		rm -rf "$CK" "$T/results"
		run 2 ae$e
		expect_rc 0
		want=$(((e - 2) / 2 + 1))
		check "s['metric']['checkpoint_count'] == $want and s['metric']['checkpoint_bytes_written'] == $want * 65536 and sorted(os.listdir(ck)) == ['step-%d' % (i + 1) for i in range($want)] and s['metric']['checkpoint_writing_ranks'] == 1 and s['config']['checkpoint']['checkpoint_after_epoch'] == 2"
	done
	# rank 1 reads 8 samples per epoch: its 11th read (epoch 2) fails
	ae_config aef 5 2 2 "[storage]
backend = faulty
[storage.faulty]
fail_op = read
fail_rank = 1
fail_nth = 11
fail_errno = EIO"
	rm -rf "$CK" "$T/results"
	run 2 aef
	expect_rc 1
	grep -q "rank 1: .*Input/output error" "$T/err" || fail "the read failure is not named"
	[ -z "$(ls "$CK" 2>/dev/null)" ] || fail "a checkpoint after epoch 1: $(ls "$CK")"
	# after 1, every 2 over 5 epochs: 1, 3, 5 (the old rule, every 2nd epoch, gives 2)
	ae_config ae1 5 1 2
	rm -rf "$CK" "$T/results"
	run 2 ae1
	expect_rc 0
	check "s['metric']['checkpoint_count'] == 3"
	# a first checkpoint beyond the last epoch is refused before anything runs
	ae_config ae6 5 6 2
	rm -rf "$CK" "$T/results"
	run 2 ae6
	expect_rc 2
	grep -qF "checkpoint_after_epoch = 6 but training runs 5 epochs: no checkpoint would follow an epoch" "$T/err" ||
		fail "the refusal does not say why"
	[ -z "$(summary)" ] && [ ! -e "$CK" ] || fail "a refused config wrote something"
	# without epoch checkpoints (checkpoint_every_epochs = 0) it is ignored: steps only
	ae_config ae0 5 6 0 "checkpoint_every_steps = 4"
	"$FEEDBENCH" validate "$T/ae0.ini" >"$T/out" 2>"$T/err" || fail "after 6 with every 0 refused"
	;;
sweep)
	# A stripe sweep over a checkpoint workload: every point records the requested layout and
	# the checkpoint's write bandwidth in the columns sweep reads (repetitions[]).
	config sweep "$CKPT
zero_stage = 3
[sweep]
storage.stripe_count = 1, 2"
	fb_mpi 2 sweep "$T/sweep.ini"
	expect_rc 0
	grep -qE "^ +2 +2 +[0-9.]+ " "$T/out" || fail "the sweep table has no bandwidth for point 2"
	for n in 1 2; do
		f=$(ls "$T"/results/*/point-00$n-*/summary.json 2>/dev/null)
		[ -n "$f" ] || fail "no summary.json for point $n"
		JSON_LET="r = s['repetitions'][0]" json_check "$f" \
			"s['storage']['stripe_requested']['count'] == $n" \
			"r['bandwidth_MiB_per_second'] > 0 and r['read_bandwidth_MiB_per_second'] > 0" \
			"m['checkpoint_bytes_written'] == 14000042" \
			"s['timing']['startup_from'] == 'run' and s['timing']['startup_seconds'] > 0" \
			"s['timing']['mpi_init_seconds'] is None and s['timing']['reduce_seconds'] > 0"
	done
	;;
*)
	fail "unknown case"
	;;
esac
echo "PASS (checkpoint $CASE)"
