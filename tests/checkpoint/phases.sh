#!/bin/bash
# MLPerf Storage's checkpointing phases (num_checkpoints_write / _read, recovery_rank_shift,
# the flush between the phases, data_parallelism subsets) on 2 local ranks, as a user sees them:
# exit statuses, messages, summary.json's checkpoint.phases and the per-checkpoint figures,
# recovery.json between a write-only and a read-only invocation. The read on another host is
# tests/checkpoint/phases_lab.sh (run by lab.nodes, label lab).
#
# usage: phases.sh CASE   (environment from tests/CMakeLists.txt: FEEDBENCH, MPIEXEC)
set -u
CASE=$1
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
FAIL_WHAT="checkpoint $CASE"
lib_init ckph /tmp
CK=$T/data/checkpoints
SIZE=14000042 # 1 000 003 parameters x (2 + 12) bytes

ckpt_ini phases "[checkpoint]
num_parameters = 1000003
transfer_size = 256KiB
zero_stage = 3
num_checkpoints_write = 3
num_checkpoints_read = 3
recovery_rank_shift = true"

run() { fb_mpi 2 run "$T/phases.ini" --quiet "$@"; }
newest() { find "$T/results" -name summary.json | head -1; }
stamp() { rm -rf "$T/results"; } # one run folder at a time

# The figures every phased summary.json holds, whatever the invocation (Python over s, m).
FIGURES="
ph = s['checkpoint']['phases']
cks = s['checkpoints']
def close(a, b): return abs(a - b) <= 1e-9 * max(1.0, abs(b))
def figures_ok():
    for c in cks:
        if 'write_duration_seconds' in c:
            assert c['bytes_written'] == $SIZE and c['write_duration_seconds'] == c['write_seconds']
            assert close(c['write_throughput_GiB_per_second'], $SIZE / 2**30 / c['write_seconds']), c
        if 'read_duration_seconds' in c:
            assert c['bytes_read'] == $SIZE and c['read_duration_seconds'] == c['read_seconds']
            assert close(c['read_throughput_GiB_per_second'], $SIZE / 2**30 / c['read_seconds']), c
            if ph['visible_after_seconds'] is not None:
                assert close(c['recovery_seconds'], c['read_seconds'] + ph['visible_after_seconds']), c
                assert close(c['recovery_throughput_GiB_per_second'], $SIZE / 2**30 / c['recovery_seconds']), c
    return True
"

case $CASE in
phases_both)
	# One invocation: 3 writes, the flush, 3 reads of the shards ranks_per_host further on
	# (on one host: their own, with the warning), every figure from the ones beside it.
	stamp
	run
	expect_rc 0
	JSON_LET="$FIGURES" json_check "$(newest)" \
		"any('this run is on one host: recovery_rank_shift reads each shard on the host that wrote it' in w for w in s['warnings'])" \
		"ph['invocation'] == 'both' and ph['num_checkpoints_write'] == 3 and ph['num_checkpoints_read'] == 3" \
		"ph['fsync'] is True and ph['hosts'] == 1 and ph['ranks_per_host'] == 2" \
		"ph['recovery_rank_shift'] is True and ph['shift_ranks'] == 2 and ph['read_on_other_host'] is False" \
		"ph['reads'] == [{'rank': r, 'host': s['hostname'], 'shard_rank': r, 'shard_host': s['hostname']} for r in (0, 1)]" \
		"ph['visible_after_from'] == 'measured' and ph['visible_after_seconds'] >= 0" \
		"m['checkpoint_visible_after_seconds'] == ph['visible_after_seconds']" \
		"m['checkpoint_count'] == 3 and m['checkpoint_bytes_written'] == 3 * $SIZE and m['checkpoint_bytes_read'] == 3 * $SIZE" \
		"[c['step'] for c in cks] == [1, 2, 3] and all('recovery_seconds' in c for c in cks)" \
		"figures_ok()" \
		"close(m['checkpoint_write_duration_seconds'], sum(c['write_seconds'] for c in cks) / 3)" \
		"close(m['checkpoint_recovery_seconds'], sum(c['recovery_seconds'] for c in cks) / 3)" \
		"ph['flush']['required'] is True and len(ph['flush']['nodes']) == 1" \
		"ph['flush']['nodes'][0]['checkpoint_share_bytes'] == $SIZE and ph['flush']['nodes'][0]['ranks'] == 2" \
		"ph['flush']['nodes'][0]['outcome'] == 'evicted' and ph['flush']['nodes'][0]['files_evicted'] == 6" \
		"m['checkpoint_restore_verified'] is True"
	# The rule on each host's share: 3 x 1 KiB of RAM is less than the share: no flush needed
	# (it is still done: a restore never reads from the page cache).
	rm -rf "$T/data"
	stamp
	run --set checkpoint.client_memory_bytes=1KiB
	expect_rc 0
	JSON_LET="$FIGURES" json_check "$(newest)" \
		"ph['flush']['required'] is False and ph['flush']['nodes'][0]['memory_bytes'] == 1024" \
		"ph['flush']['nodes'][0]['required'] is False and ph['flush']['nodes'][0]['outcome'] == 'evicted'"
	;;
phases_split)
	# Two invocations: write-only (recovery.json keeps its visibility), then read-only after
	# the flush, whose recovery time adds what the write invocation measured.
	stamp
	run --set checkpoint.num_checkpoints_read=0
	expect_rc 0
	W=$(newest)
	[ -f "$CK/recovery.json" ] || fail "the write-only invocation left no recovery.json"
	JSON_LET="$FIGURES" json_check "$W" \
		"ph['invocation'] == 'write' and ph['flush'] is None and m['checkpoint_bytes_read'] == 0" \
		"m['checkpoint_bytes_written'] == 3 * $SIZE and 'checkpoint_read_duration_seconds' not in m" \
		"figures_ok() and all('read_seconds' not in c for c in cks)" \
		"json.load(open('$CK/recovery.json'))['visible_after_seconds'] == ph['visible_after_seconds']"
	VIS=$(json_get "$W" "s['checkpoint']['phases']['visible_after_seconds']")
	stamp
	run --set checkpoint.num_checkpoints_write=0
	expect_rc 0
	JSON_LET="$FIGURES" json_check "$(newest)" \
		"ph['invocation'] == 'read' and ph['visible_after_from'] == 'write invocation'" \
		"ph['visible_after_seconds'] == $VIS and m['checkpoint_bytes_written'] == 0" \
		"json.load(open('$CK/recovery.json'))['hosts'] == [s['hostname']] * 2" \
		"[(e['shard_rank'], e['shard_host']) for e in ph['reads']] == [(0, s['hostname']), (1, s['hostname'])]" \
		"m['checkpoint_bytes_read'] == 3 * $SIZE and figures_ok()" \
		"ph['flush']['nodes'][0]['outcome'] == 'evicted' and ph['flush']['nodes'][0]['files_evicted'] == 6" \
		"'checkpoint_time_to_durable_seconds' not in m"
	# Without recovery.json: the warning that recovery lacks the visibility, no recovery
	# figures (null, never 0).
	rm -f "$CK/recovery.json"
	stamp
	run --set checkpoint.num_checkpoints_write=0
	expect_rc 0
	JSON_LET="$FIGURES" json_check "$(newest)" \
		"ph['visible_after_seconds'] is None and ph['visible_after_from'] is None" \
		"[(e['shard_rank'], e['shard_host']) for e in ph['reads']] == [(0, None), (1, None)]" \
		"m['checkpoint_recovery_seconds'] is None and all(c['recovery_seconds'] is None for c in cks)" \
		"any('no $CK/recovery.json from a write invocation with 2 ranks and this shift' in w for w in s['warnings'])"
	# A read-only invocation of more checkpoints than were written: exit 1 naming the one
	# missing, before any is read.
	run --set checkpoint.num_checkpoints_write=0 --set checkpoint.num_checkpoints_read=4
	expect_rc 1
	expect_err "checkpoint '$CK/step-4' cannot be restored: .metadata is missing"
	;;
phases_drop)
	# page_cache = drop where the drop cannot be made: as a user who may not write
	# /proc/sys/vm/drop_caches (setpriv to nobody), and where the write fails (a private mount
	# namespace with /dev/full bound over it: ENOSPC). Each host's outcome and reason in
	# summary.json, the files evicted instead, and mlperf check's note under rule 4.3.1.
	[ "$(id -u)" = 0 ] || {
		echo "SKIPPED: needs root to become another user and to bind over /proc/sys/vm/drop_caches"
		exit 77
	}
	chmod 755 "$T"
	drop() { # drop NAME LAUNCHER...: the 3 + 3 phases with page_cache = drop under LAUNCHER
		local name=$1
		shift
		mkdir -m 777 "$T/$name"
		"$@" "$MPIEXEC" --oversubscribe -n 2 "$FEEDBENCH" run "$T/phases.ini" --quiet \
			--set storage.page_cache=drop --set dataset.data_dir="$T/$name/data" \
			--output "$T/$name/results" >"$T/out" 2>"$T/err"
		RC=$?
		expect_rc 0
		dirname "$(find "$T/$name/results" -name summary.json | head -1)"
	}
	NP=$(drop np setpriv --reuid=nobody --regid=nogroup --clear-groups)
	json_check "$NP/summary.json" \
		"s['checkpoint']['phases']['flush']['nodes'][0]['outcome'] == 'not permitted'" \
		"'cannot write /proc/sys/vm/drop_caches: Permission denied; the 6 files its ranks read were evicted instead' in s['checkpoint']['phases']['flush']['nodes'][0]['reason']" \
		"s['checkpoint']['phases']['flush']['nodes'][0]['files_evicted'] == 6"
	FAILED=$(drop failed unshare -m sh -c 'mount --bind /dev/full /proc/sys/vm/drop_caches && exec "$@"' sh)
	json_check "$FAILED/summary.json" \
		"s['checkpoint']['phases']['flush']['nodes'][0]['outcome'] == 'failed'" \
		"'cannot write /proc/sys/vm/drop_caches: No space left on device; the 6 files' in s['checkpoint']['phases']['flush']['nodes'][0]['reason']" \
		"s['checkpoint']['phases']['flush']['nodes'][0]['files_evicted'] == 6"
	for d in "$NP" "$FAILED"; do
		"$FEEDBENCH" mlperf check "$d" >"$T/out" 2>"$T/err"
		grep -q "^PASS    4.3.1 checkpointDataSizeRatio" "$T/out" ||
			fail "mlperf check does not accept the files evicted after the drop ($d)"
	done
	grep -q "^NOTE    4.3.1 checkpointDataSizeRatio: host $(hostname): the page cache drop failed: cannot write /proc/sys/vm/drop_caches: No space left on device" "$T/out" ||
		fail "mlperf check does not note the failed drop under 4.3.1"
	"$FEEDBENCH" mlperf check "$NP" >"$T/out" 2>"$T/err"
	grep -q "^NOTE    4.3.1 checkpointDataSizeRatio: host $(hostname): the page cache drop was not permitted: cannot write" "$T/out" ||
		fail "mlperf check does not note the drop that was not permitted under 4.3.1"
	;;
phases_config)
	# Refusals, exit 2 with the reason, nothing written.
	bad() { # bad MESSAGE --set ...: on one rank (no mpiexec: the checks need none)
		local msg=$1
		shift
		"$FEEDBENCH" validate "$T/phases.ini" "$@" >"$T/out" 2>"$T/err"
		RC=$?
		expect_rc 2
		expect_err "$msg"
	}
	bad "num_checkpoints_read = 4 > num_checkpoints_write = 3: the read phase reads the checkpoints this invocation wrote" \
		--set checkpoint.num_checkpoints_read=4
	bad "set both num_checkpoints_write and num_checkpoints_read" --set checkpoint.num_checkpoints_read=-1
	bad "num_checkpoints_write = num_checkpoints_read = 0: nothing to do" \
		--set checkpoint.num_checkpoints_write=0 --set checkpoint.num_checkpoints_read=0
	bad "keep_last = 1 deletes checkpoints the read phase reads" --set checkpoint.keep_last=1
	bad "recovery_rank_shift needs the phases" --set checkpoint.num_checkpoints_write=-1 \
		--set checkpoint.num_checkpoints_read=-1
	fb_mpi 2 validate "$T/phases.ini" --set checkpoint.data_parallelism=1
	expect_rc 2
	expect_err "data_parallelism = 1 with tensor x pipeline = 1 is a geometry of 1 ranks: 2 ranks do not fit"
	[ ! -e "$T/data" ] || fail "validate wrote $T/data"
	# A subset: 2 ranks of a geometry of 8 replicas (ZeRO 3) write 2/8 of the checkpoint.
	stamp
	run --set checkpoint.data_parallelism=8 --set checkpoint.num_checkpoints_write=1 \
		--set checkpoint.num_checkpoints_read=1
	expect_rc 0
	json_check "$(newest)" \
		"s['checkpoint']['bytes_per_rank'] == [1750004, 1750006] and s['checkpoint']['data_parallelism'] == 8" \
		"s['checkpoint']['subset'] == {'ranks': 2, 'geometry_ranks': 8, 'bytes': 3500010, 'geometry_bytes': $SIZE}" \
		"m['checkpoint_size_bytes'] == 3500010 and m['checkpoint_bytes_read'] == 3500010"
	;;
import_llama)
	# MLPerf Storage's llama3_70b.yaml (a checkpoint-only workflow; a pinned copy of
	# configs/dlio/workload/llama3_70b.yaml of github.com/mlcommons/storage at commit
	# 4cfb98a4faa07ae4a43eacee7a4a9df0d5db7d97) imports as a checkpoint config with its phases,
	# every key it leaves unmapped explained in docs/dlio.md, and validates on 8 ranks.
	"$FEEDBENCH" import-dlio "$HERE/mlperf_storage_llama3_70b.yaml" -o "$T/l70.ini" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	python3 - "$T/l70.ini" "$T/err" "$FEEDBENCH_SOURCE_DIR/docs/dlio.md" <<'PY' || fail "the imported INI"
import configparser, re, sys
ini = configparser.ConfigParser(inline_comment_prefixes=None, comment_prefixes=(";",))
ini.read(sys.argv[1])
want = {("workload", "type"): "checkpoint", ("checkpoint", "num_parameters"): "69882617856",
        ("checkpoint", "bytes_per_param_model"): "2", ("checkpoint", "bytes_per_param_optimizer"): "12",
        ("checkpoint", "tensor_parallelism"): "8", ("checkpoint", "pipeline_parallelism"): "1",
        ("checkpoint", "zero_stage"): "3", ("checkpoint", "num_checkpoints_write"): "10",
        ("checkpoint", "num_checkpoints_read"): "10", ("checkpoint", "folder"): "checkpoints/llama_70b"}
for (sec, key), v in want.items():
    assert ini.get(sec, key, fallback=None) == v, (sec, key, ini.get(sec, key, fallback=None), v)
assert not ini.has_section("reader") and not ini.has_section("train"), ini.sections()
doc = open(sys.argv[3]).read()
keys = re.findall(r"^feedbench: import-dlio: \S+:\d+: (\S+) not mapped: ", open(sys.argv[2]).read(), re.M)
assert sorted(keys) == ["checkpoint.fsync", "checkpoint.time_between_checkpoints", "framework",
                        "model.parallelism.data"], keys
for k in keys:
    assert "`%s`" % k in doc, "%s is not explained in docs/dlio.md" % k
PY
	mkdir -p "$T/v" && cd "$T/v" || fail "no folder"
	fb_mpi 8 validate "$T/l70.ini"
	expect_rc 0
	;;
*) fail "unknown case" ;;
esac
echo "PASS ($FAIL_WHAT)"
