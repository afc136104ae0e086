#!/bin/bash
# The shipped checkpoint configs (configs/workloads/*_checkpoint.ini), called by
# tests/workloads/workloads.sh for configs of type = checkpoint: each validates at full size
# on the ranks its header names, and runs scaled down on 2 ranks with exact bytes in
# summary.json and the files on disk.
#
# usage: configs.sh NAME   (environment from tests/CMakeLists.txt)
set -u
: "${FEEDBENCH_SOURCE_DIR:?FEEDBENCH_SOURCE_DIR not set}"
. "$(dirname "$0")/../lib.sh"
NAME=$1
FAIL_WHAT="checkpoint config $NAME"
INI=$FEEDBENCH_SOURCE_DIR/configs/workloads/$NAME.ini
lib_init ckconf
# The MLPerf Storage configs run 2 writes and 2 reads scaled down (10 and 10 at full size).
PHASES=(--set checkpoint.num_checkpoints_write=2 --set checkpoint.num_checkpoints_read=2)
vranks= # ranks of the full-size validation (default: the header's)
case $NAME in
llama3_8b_checkpoint) full=8 params=8030261248 scale=0.001 extra=("${PHASES[@]}") ;;
llama3_70b_checkpoint) full=64 params=69882617856 scale=0.0001 extra=(--set checkpoint.tensor_parallelism=2 "${PHASES[@]}") ;;
# 512 and 1024 ranks are not started here: 405B validates as the 8-process subset and runs
# scaled down as a subset of 2 ranks; 1T (the same shape) validates as a subset of 2 ranks
llama3_405b_checkpoint) full=512 vranks=8 params=405853388800 scale=0.001 extra=("${PHASES[@]}") ;;
llama3_1t_checkpoint) full=1024 vranks=2 params=1183035102480 scale=0.001 extra=("${PHASES[@]}") ;;
train_with_checkpoints) full=2 params=8030261248 scale=0.0001 extra=(--set dataset.num_files_train=28
	--set dataset.record_length_bytes=64KiB --set train.epochs=3 --set train.computation_time=2ms) ;;
train_with_async_checkpoints) full=2 params=8030261248 scale=0.0001 extra=(--set dataset.num_files_train=28
	--set dataset.record_length_bytes=64KiB --set train.epochs=3 --set train.computation_time=2ms
	--set checkpoint.checkpoint_every_steps=2) ;;
*) fail "no scaled-down settings for $NAME" ;;
esac
# Full size, as shipped, on the ranks of the header's first command (8 for Llama 3 8B, 64 for
# 70B, 2 for the training configs), which must be the count named above; then on 2 ranks with
# the scaled-down settings (70B: tensor 2 instead of 8, which 2 ranks cannot hold).
hdr=$(grep -m1 -oE '^; +mpiexec -n [0-9]+' "$INI" | grep -oE '[0-9]+$')
[ "$hdr" = "$full" ] || fail "the header's first command runs ${hdr:-no} ranks, expected $full"
fb_mpi "${vranks:-$full}" validate "$INI"
[ "$RC" -eq 0 ] || fail "the full-size config does not validate on ${vranks:-$full} ranks"
if [ "$NAME" = llama3_70b_checkpoint ]; then
	fb_mpi 2 validate "$INI"
	[ "$RC" -ne 0 ] || fail "tensor_parallelism = 8 validated on 2 ranks"
	grep -q "must divide the 2 ranks" "$T/err" || fail "no reason given for tensor 8 on 2 ranks"
fi
fb_mpi 2 validate "$INI" "${extra[@]}"
[ "$RC" -eq 0 ] || fail "the full-size config does not validate on 2 ranks with ${extra[*]}"
if [ "$NAME" = llama3_1t_checkpoint ]; then # llama3_405b_checkpoint's run covers its shape
	# The 1024-process plan from 2 launched ranks (hosts of 16), every figure recomputed
	# here from the config; nothing written.
	fb_mpi 2 run "$INI" --dry-run --ranks-per-host 16 --set dataset.data_dir="$T/data"
	[ "$RC" -eq 0 ] || fail "run --dry-run failed"
	[ ! -e "$T/data" ] || fail "run --dry-run created the data folder"
	python3 - "$INI" "$T/out" <<'PY' || fail "the dry run's plan does not match the config"
import configparser, re, sys
c = configparser.ConfigParser(inline_comment_prefixes=(";",))
c.read(sys.argv[1])
k = c["checkpoint"]
got = {m[1]: int(m[2]) for m in re.finditer(r"^(\w+) = (\d+)", open(sys.argv[2]).read(), re.M)}
n, tp, pp, dp = (int(k[x]) for x in ("num_parameters", "tensor_parallelism",
                                     "pipeline_parallelism", "data_parallelism"))
def piece(total, i, n): return total * (i + 1) // n - total * i // n
model, opt, mp, g = n * 2, n * 12, tp * pp, tp * pp * dp
# ZeRO 1: replica 0 writes the weights' shard, every replica its half of the optimizer's
ranks = [piece(model, r % mp, mp) * (r < mp) + piece(piece(opt, r % mp, mp), r // mp, dp)
         for r in range(g)]
hosts = [sum(ranks[h:h + 16]) for h in range(0, g, 16)]
want = {"ranks": g, "hosts": g // 16, "checkpoint_bytes": model + opt, "writing_ranks": g,
        "checkpoints_written": 10, "checkpoints_read": 10,
        "bytes_per_rank_min": min(ranks), "bytes_per_rank_max": max(ranks),
        "files_per_rank_min": 1, "files_per_rank_max": 2,
        "bytes_per_host_min": min(hosts), "bytes_per_host_max": max(hosts),
        "files_per_host_min": 16, "files_per_host_max": 17,
        "memory_per_rank": 2 * 16 * 2**20 + 8 * g,
        "total_bytes_written": 10 * (model + opt), "total_bytes_read": 10 * (model + opt)}
assert got == want, {x: (got.get(x), want[x]) for x in want if got.get(x) != want[x]}
PY
	echo "PASS (checkpoint config $NAME: validates as a subset of 2 ranks, the 1024-rank plan)"
	exit 0
fi
fb_mpi 2 run "$INI" --set checkpoint.scale=$scale "${extra[@]}" \
	--set dataset.data_dir="$T/data" --output "$T/results" --quiet
[ "$RC" -eq 0 ] || fail "the scaled-down run failed"
summary=$(ls "$T"/results/*/summary.json 2>/dev/null | head -1)
[ -n "$summary" ] || fail "no summary.json"
python3 - "$summary" "$params" "$scale" "$T/data/checkpoints" <<'PY' || fail "summary.json or the files do not match"
import json, os, sys
s = json.load(open(sys.argv[1]))
params, scale, ck = int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
want = round(params * 2 * scale) + round(params * 12 * scale)
m = s["metric"]
assert s["num_ranks"] == 2
if s["workload_type"] == "train":
    # 3 epochs of 2 steps, a checkpoint after each epoch (blocking) or every 2 steps (async),
    # the last two kept
    assert s["checkpoint"]["mode"] == ("async" if "async" in s["workload"] else "blocking")
    assert m["checkpoint_count"] == 3 and m["checkpoint_size_bytes"] == want, m
    assert m["checkpoint_bytes_written"] == 3 * want, m
    assert m["checkpoint_training_steps_lost"] > 0 and m["train_samples"] == 28 * 3, m
    assert sorted(os.listdir(ck)) == ["step-2", "step-3"], os.listdir(ck)
    for d in ("step-2", "step-3"):
        assert sorted(os.listdir(os.path.join(ck, d))) == [".metadata", "__0_0.distcp", "__1_0.distcp"]
    print("ok: %s, 3 checkpoints of %d bytes, %.2f steps lost" % (
        s["workload"], want, m["checkpoint_training_steps_lost"]))
    sys.exit(0)
assert s["workload_type"] == "checkpoint"
plan = s["checkpoint"]
if "subset" in plan:
    # the first 2 ranks of tensor 8 x pipeline P x data 2, ZeRO 1: replica 0's shares of the
    # weights and of replica 0's half of the optimizer state
    def piece(total, i, n): return total * (i + 1) // n - total * i // n
    mp = plan["tensor_parallelism"] * plan["pipeline_parallelism"]
    model, opt = round(params * 2 * scale), round(params * 12 * scale)
    ranks = [piece(model, r, mp) + piece(piece(opt, r, mp), 0, 2) for r in (0, 1)]
    assert plan["bytes_per_rank"] == ranks, (plan["bytes_per_rank"], ranks)
    assert plan["subset"] == {"ranks": 2, "geometry_ranks": mp * 2, "bytes": sum(ranks),
                              "geometry_bytes": want}, plan["subset"]
    want = sum(ranks)
assert m["checkpoint_size_bytes"] == want, (m["checkpoint_size_bytes"], want)
n = plan["phases"]["num_checkpoints_write"] if "phases" in plan else 1
assert m["checkpoint_bytes_written"] == n * want and m["checkpoint_bytes_read"] == n * want, m
if "phases" in plan:
    assert plan["phases"]["invocation"] == "both" and plan["phases"]["recovery_rank_shift"] is True
    assert m["checkpoint_write_throughput_GiB_per_second"] > 0 and m["checkpoint_recovery_seconds"] > 0, m
assert m["checkpoint_restore_verified"] is True
files = sorted(os.listdir(os.path.join(ck, "step-1")))
assert files == [".metadata", "__0_0.distcp", "__1_0.distcp"], files
print("ok: %s, %d bytes, write %.0f MiB/s, read %.0f MiB/s" % (
    s["workload"], want, m["checkpoint_write_bandwidth_MiB_per_second"],
    m["checkpoint_read_bandwidth_MiB_per_second"]))
PY
# The report: its own, no '?' or nan, no missing file; a checkpoint run projects to the full
# model (params x 14 bytes) and warns that a scaled one this small does not stand for it.
python3 "$FEEDBENCH_SOURCE_DIR/tests/report/check_folder.py" "$(dirname "$summary")" || fail "report.md or table.md (tests/report/check_folder.py)"
if grep -q '"workload_type": "checkpoint"' "$summary"; then
	JSON_LET="p = s['checkpoint']['projection']; sub = 'subset' in s['checkpoint']" json_check "$summary" \
		"sub or p['full_size_bytes'] == $params * 14" "p['representative'] is False" \
		"p['seconds_to_durable'] > 0"
	grep -qF "GiB at this rate:" "$(dirname "$summary")/report.md" || fail "no projection"
	grep -qF "too small to stand for the full one" "$(dirname "$summary")/report.md" ||
		fail "no warning that the scaled checkpoint is too small"
fi
echo "PASS (checkpoint config $NAME)"
