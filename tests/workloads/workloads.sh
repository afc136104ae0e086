#!/bin/bash
# The shipped DLIO / MLPerf Storage workloads (configs/workloads/*.ini): each validates at full
# size on 2 ranks, with each accelerator's documented --set line too, and runs scaled down by
# --set on 2 ranks (same format, batch size, readers and shuffles; fewer and smaller samples).
#
# usage: workloads.sh NAME   (environment from tests/CMakeLists.txt: FEEDBENCH, MPIEXEC,
#                              FEEDBENCH_SOURCE_DIR)
set -u
: "${FEEDBENCH_SOURCE_DIR:?FEEDBENCH_SOURCE_DIR not set}"
. "$(dirname "$0")/../lib.sh"
NAME=$1
FAIL_WHAT="workload $NAME"
INI=$FEEDBENCH_SOURCE_DIR/configs/workloads/$NAME.ini
lib_init workload

fb2() { # fb2 ARGS...: feedbench on 2 ranks; its exit status
	fb_mpi 2 "$@"
	return "$RC"
}

[ -f "$INI" ] || fail "no $INI"
# Checkpoint configs have their own checks (no DLIO workload YAML of their own); the DLIO
# workloads with DLIO's checkpoints (unet3d, bert, megatron) are checked here.
if grep -qE '^\[checkpoint\]' "$INI" && ! grep -q "dlio-benchmark 2.0.0" "$INI"; then
	rm -rf "$T" # exec runs no EXIT trap
	exec bash "$FEEDBENCH_SOURCE_DIR/tests/checkpoint/configs.sh" "$NAME"
fi
# Every number cites its source: each key = value line follows a comment or sits in a file
# whose header names the DLIO workload YAML it comes from.
grep -qE "dlio-benchmark 2.0.0|mlcommons/storage configs/dlio/workload/" "$INI" ||
	fail "the header does not name the DLIO version or the mlcommons/storage workload"

fb2 validate "$INI" || fail "the full-size config does not validate on 2 ranks"
# The accelerator lines of the header: ";   H100:  --set train.computation_time=0.323 ..."
n=0
while IFS= read -r line; do
	read -ra sets <<<"$(sed -E 's/^;[^:]+:[ ]+//; s/\(.*//' <<<"$line")"
	"$FEEDBENCH" validate "$INI" "${sets[@]}" >"$T/out" 2>"$T/err" || fail "'$line' does not validate"
	n=$((n + 1))
done < <(grep -E '^; +[A-Z][0-9]+: +--set ' "$INI")
# megatron's DLIO checkpoint type all_ranks, every rank a copy: ";   ALL_RANKS: --set ..."
while IFS= read -r line; do
	read -ra sets <<<"$(sed -E 's/^;[^:]+:[ ]+//' <<<"$line")"
	fb2 validate "$INI" "${sets[@]}" || fail "'$line' does not validate on 2 ranks"
	n=$((n + 1))
done < <(grep -E '^; +ALL_RANKS: +--set ' "$INI")

# Scaled down: at least 2 steps per rank (the first is warm-up), tiny files; DLIO's checkpoints
# of 64 KiB, as many as checks.checkpoints says (not a key: read by the check below).
case $NAME in
unet3d) scale=(dataset.num_files_train=28 dataset.record_length_bytes=32KiB
	dataset.record_length_bytes_stdev=8KiB train.epochs=3 checkpoint.checkpoint_after_epoch=1
	checkpoint.model_size_bytes=64KiB checks.checkpoints=2) ;; # after epochs 1 and 3
resnet50) scale=(dataset.num_files_train=2 dataset.num_samples_per_file=800
	dataset.record_length_bytes=1KiB train.epochs=1) ;;
cosmoflow) scale=(dataset.num_files_train=16 dataset.record_length_bytes=32KiB
	dataset.record_length_bytes_stdev=2KiB train.epochs=1) ;;
bert) scale=(dataset.num_files_train=2 dataset.num_samples_per_file=192 train.epochs=1
	checkpoint.checkpoint_every_steps=2 checkpoint.model_size_bytes=64KiB
	checks.checkpoints=2) ;; # 4 steps per rank
dlrm) scale=(dataset.num_samples_per_file=8192 dataset.record_length_bytes=1KiB train.epochs=1
	dataset.num_samples_per_file_eval=2048 reader.batch_size_eval=512 evaluation.eval_time=2ms) ;;
megatron) scale=(dataset.num_samples_per_file=4096 train.epochs=1
	checkpoint.checkpoint_every_steps=1 checkpoint.model_size_bytes=64KiB
	checks.checkpoints=2) ;; # 2 steps per rank
flux_b200) cols="t5_encodings:float32:256, clip_encodings:float32:16, mean:float32:32"
	scale=(dataset.num_files_train=2 dataset.num_samples_per_file=96
	dataset.record_length_bytes=1372 train.epochs=1
	"format.parquet.columns=$cols, logvar:float32:32, timestamp:float32:7") ;;
dlrm_parquet_h100) scale=(dataset.num_files_train=4 dataset.num_samples_per_file=8192
	dataset.record_length_bytes=64 format.parquet.row_group_size=8192 train.epochs=1) ;;
retinanet_b200) scale=(dataset.num_files_train=96 dataset.record_length_bytes=32KiB
	train.epochs=1) ;; # 2 steps of 24 decoded images per rank
retinanet_h100 | retinanet_a100 | retinanet_mi355)
	# retinanet_b200's run covers them (same format, readers, shuffles; other numbers)
	echo "PASS (workload $NAME: full size and $n accelerator lines validate)"
	exit 0 ;;
*) fail "no scaled-down settings for $NAME" ;;
esac
args=()
for s in "${scale[@]}" dataset.data_dir="$T/data" train.computation_time=2ms output.plots=false; do
	[[ $s == checks.* ]] || args+=(--set "$s")
done
grep -qE '^\[checkpoint\]' "$INI" && args+=(--set checkpoint.folder="$T/ck")
fb2 run "$INI" "${args[@]}" --output "$T/results" --quiet || fail "the scaled-down run failed"
summary=$(ls "$T"/results/*/summary.json 2>/dev/null | head -1)
[ -n "$summary" ] || fail "no summary.json"
python3 - "$INI" "$summary" "${scale[@]}" <<'PY' || fail "summary.json does not match the config"
import configparser, json, sys
ini = configparser.ConfigParser(inline_comment_prefixes=None)
ini.read(sys.argv[1])
s = json.load(open(sys.argv[2]))
over = dict(a.split("=", 1) for a in sys.argv[3:])
def get(sec, key):
    return over.get(sec + "." + key, ini[sec][key])
cfg = s["config"]
assert s["workload"] == ini["workload"]["name"], s["workload"]
assert cfg["dataset"]["format"] == ini["dataset"]["format"]
assert cfg["dataset"]["file_access"] == ini["dataset"]["file_access"]
assert int(cfg["reader"]["batch_size"]) == int(ini["reader"]["batch_size"])
assert int(cfg["reader"]["read_threads"]) == int(ini["reader"]["read_threads"])
assert float(cfg["train"]["au_threshold"]) == float(ini["train"]["au_threshold"])
# DLIO 2.0.0 joins all ranks after every step (main.py _train: comm.barrier())
assert cfg["train"]["step_barrier"] is True, cfg["train"]
files, spf = int(get("dataset", "num_files_train")), int(get("dataset", "num_samples_per_file"))
epochs = int(get("train", "epochs"))
assert s["metric"]["train_samples"] == files * spf * epochs, (s["metric"]["train_samples"],
                                                              files * spf * epochs)
assert s["num_ranks"] == 2
# the evaluation phase, where the workload has one: every evaluation sample read once per pass
nfe = int(get("dataset", "num_files_eval")) if ini.has_option("dataset", "num_files_eval") else 0
if nfe:
    spfe = int(get("dataset", "num_samples_per_file_eval"))
    passes = s["eval"]["passes"]
    assert len(passes) == epochs and s["metric"]["eval_passes"] == epochs, passes
    assert all(p["samples"] == nfe * spfe for p in passes), (passes, nfe * spfe)
else:
    assert "eval" not in s
# DLIO's checkpoints, where the workload has them: written by rank 0 alone (rank_zero)
if ini.has_section("checkpoint"):
    m, want = s["metric"], int(over["checks.checkpoints"])
    assert m["checkpoint_count"] == want and m["checkpoint_writing_ranks"] == 1, m
    assert m["checkpoint_bytes_written"] == want * 65536, m
    assert s["checkpoint"]["mode"] == "blocking", s["checkpoint"]
else:
    assert "checkpoint" not in s
# images decoded on the reader threads: every sample, its time reported apart from the reads
if cfg["dataset"]["format"] in ("jpeg", "png"):
    m = s["metric"]
    assert m["train_decoded_samples"] == m["train_samples"], m
    assert m["train_decode_seconds_per_sample"] > 0 and 0 < m["train_decode_share_of_reading"] <= 1, m
print("ok: %s, %d samples, AU %.1f %%" % (s["workload"], s["metric"]["train_samples"],
                                          s["metric"]["train_au_mean_percentage"]))
PY
python3 "$FEEDBENCH_SOURCE_DIR/tests/report/check_folder.py" "$(dirname "$summary")" || fail "report.md or table.md (tests/report/check_folder.py)"
if grep -qE '^format = (jpeg|png)$' "$INI"; then
	grep -q '^| decode (reader threads) | ' "$(dirname "$summary")/table.md" ||
		fail "table.md has no decode row"
	grep -q '^| decode per sample | ' "$(dirname "$summary")/report.md" ||
		fail "report.md has no decode row"
fi
echo "PASS (workload $NAME: full size and $n accelerator lines validate, scaled-down run)"
