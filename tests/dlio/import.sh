#!/bin/bash
# `feedbench import-dlio` on DLIO's own workload YAMLs (tests/data/dlio/, pinned copies of DLIO
# 2.0.0's and one of MLPerf Storage's) and on broken ones.
#
# usage: import.sh CASE   (environment from tests/CMakeLists.txt: FEEDBENCH, FEEDBENCH_SOURCE_DIR)
set -u
: "${FEEDBENCH_SOURCE_DIR:?FEEDBENCH_SOURCE_DIR not set}"
CASE=$1
. "$(dirname "$0")/../lib.sh"
DATA=$FEEDBENCH_SOURCE_DIR/tests/data/dlio
DOC=$FEEDBENCH_SOURCE_DIR/docs/dlio.md
lib_init dlio

fb() {
	"$FEEDBENCH" "$@" >"$T/out" 2>"$T/err"
	RC=$?
}

value() { # value INI SECTION KEY: the key's value in the INI
	awk -v s="[$2]" -v k="$3" '$0 == s { in_s = 1; next } /^\[/ { in_s = 0 }
		in_s && $1 == k && $2 == "=" { sub(/^[^=]*= /, ""); print; exit }' "$1"
}

expect_value() { # expect_value INI SECTION KEY VALUE
	local got
	got=$(value "$1" "$2" "$3")
	[ "$got" = "$4" ] || fail "$(basename "$1"): [$2] $3 = '$got', want '$4'"
}

case $CASE in
shipped)
	n=0
	for yaml in "$DATA"/*.yaml; do
		name=$(basename "$yaml" .yaml)
		fb import-dlio "$yaml" -o "$T/$name.ini"
		[ "$RC" -eq 0 ] || fail "import-dlio $name.yaml exits $RC"
		grep -q "error" "$T/err" && fail "$name.yaml: an error on stderr"
		# validate waits on MPI's start-up more than it computes: all of them at once. It
		# also makes the run's checks of the data folder, which DLIO's generate_data False
		# (generate = never) reads: an empty one stands for DLIO's, in $T.
		dir=$(sed -n 's/^data_dir = //p' "$T/$name.ini")
		mkdir -p "$T/$name.run/$dir"
		(cd "$T/$name.run" &&
			"$FEEDBENCH" validate "$T/$name.ini" >"$T/$name.vout" 2>"$T/$name.verr" ||
			echo "$name" >>"$T/invalid") &
		cp "$T/err" "$T/$name.stderr"
		n=$((n + 1))
	done
	wait
	# Every unmapped key: on stderr, in the INI, and explained in docs/dlio.md.
	python3 - "$DOC" "$T" <<'PY' || fail "unmapped keys"
import glob, os, re, sys
doc = open(sys.argv[1]).read()
bad = []
for err in sorted(glob.glob(os.path.join(sys.argv[2], "*.stderr"))):
    ini = open(err[:-len(".stderr")] + ".ini").read()
    for m in re.finditer(r"^feedbench: import-dlio: \S+:\d+: (\S+) not mapped: ", open(err).read(), re.M):
        key = m.group(1)
        if ";   %s: " % key not in ini:
            bad.append("%s: %s is not listed in the INI" % (err, key))
        if "| `%s`" % key not in doc and "| `%s.*`" % key.split(".")[0] not in doc:
            bad.append("%s: '%s' is not mapped and docs/dlio.md does not explain it" % (err, key))
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
	[ ! -s "$T/invalid" ] || fail "INIs that do not validate: $(cat "$T/invalid"): $(cat "$T/$(head -1 "$T/invalid").verr")"
	[ "$n" -ge 15 ] || fail "only $n YAML files converted"
	# The values of a few, against the YAML they came from.
	r=$T/mlperf_storage_retinanet_b200.ini
	if [ -e "$FEEDBENCH_SOURCE_DIR/formats/jpeg.c" ]; then
		# jpeg is read as jpeg (decoded on every read), DLIO's files where they are
		expect_value "$r" dataset format jpeg
		expect_value "$r" dataset num_files_train 1170301
		expect_value "$r" dataset num_samples_per_file 1
		expect_value "$r" dataset record_length_bytes 322957
		expect_value "$r" dataset generate never
		expect_value "$r" reader batch_size 24
	fi
	u=$T/unet3d_a100.ini
	expect_value "$u" workload name unet3d
	expect_value "$u" dataset format npz
	expect_value "$u" dataset num_files_train 168
	expect_value "$u" dataset record_length_bytes 146600628
	expect_value "$u" dataset record_length_bytes_stdev 68341808
	expect_value "$u" dataset data_dir data/unet3d/train
	expect_value "$u" dataset generate never
	expect_value "$u" dataset verify false
	expect_value "$u" reader batch_size 7
	expect_value "$u" reader read_threads 4
	expect_value "$u" reader sample_shuffle seed
	expect_value "$u" train computation_time 0.636
	expect_value "$u" train au_threshold 0.90
	expect_value "$u" train step_barrier true # DLIO's comm.barrier() after every step
	grep -qF "; line 15: dataset.record_length: 146600628" "$u" || fail "no source comment"
	# DLIO's checkpoints (workflow.checkpoint True): after epoch 5, then every 2nd; rank 0
	# writes the model (499153191 int8) and one layer file of DLIO's default layer_parameters
	# (17371 + 24740228): 523910790 bytes
	expect_value "$u" checkpoint folder checkpoints/unet3d
	expect_value "$u" checkpoint model_size_bytes 523910790
	expect_value "$u" checkpoint zero_stage 0
	expect_value "$u" checkpoint mode blocking
	expect_value "$u" checkpoint checkpoint_every_epochs 2
	expect_value "$u" checkpoint checkpoint_after_epoch 5
	[ -z "$(value "$u" checkpoint checkpoint_every_steps)" ] || fail "unet3d: step checkpoints"
	grep -q "checkpoint\..* not mapped" "$T/unet3d_a100.stderr" && fail "unet3d: a checkpoint key not mapped"
	# Megatron: steps_between_checkpoints 1000; 30102 + 3 x (1009254400 + 865075200 + 793600)
	# + 44 layer files x (129761280 + 20971520) = 12257642902 bytes per rank; type all_ranks
	# (every rank a full copy) is listed as not mapped
	m=$T/megatron_deepspeed.ini
	expect_value "$m" checkpoint model_size_bytes 12257642902
	expect_value "$m" checkpoint checkpoint_every_steps 1000
	[ -z "$(value "$m" checkpoint checkpoint_every_epochs)" ] || fail "megatron: epoch checkpoints"
	grep -qF "megatron_deepspeed.yaml:33: checkpoint.type not mapped: all_ranks: every rank writes a full copy" \
		"$T/megatron_deepspeed.stderr" || fail "megatron: all_ranks not reported"
	[ "$(grep -c "checkpoint\..* not mapped" "$T/megatron_deepspeed.stderr")" -eq 1 ] ||
		fail "megatron: checkpoint keys other than type not mapped"
	# BERT (framework tensorflow: int32 tensors of n / 4 elements): 4034713312 + 17368 + 24740228
	expect_value "$T/bert_v100.ini" checkpoint model_size_bytes 4059470908
	expect_value "$T/bert_v100.ini" checkpoint checkpoint_every_steps 250
	# MLPerf Storage's b200 YAML has a checkpoint section but workflow.checkpoint False
	[ -z "$(value "$T/mlperf_storage_unet3d_b200.ini" checkpoint model_size_bytes)" ] ||
		fail "b200: checkpoints although workflow.checkpoint is False"
	grep -qF "checkpoint.checkpoint_after_epoch not mapped: workflow.checkpoint is not True" \
		"$T/mlperf_storage_unet3d_b200.stderr" || fail "b200: the unused checkpoint keys are not said"
	for f in "$T"/*.ini; do
		[ "$(value "$f" train step_barrier)" = true ] || fail "$(basename "$f"): no step_barrier = true"
	done
	r=$T/resnet50_a100.ini
	expect_value "$r" dataset record_length_bytes 114660 # 114660.07, rounded
	expect_value "$r" reader read_threads 8
	# DLIO's default prefetch_size 2 is per rank: its PyTorch loader gives each of the 8
	# workers ceil(2 / 8) = 1 batch, as feedbench's prefetch_size 1 per reader thread does
	expect_value "$r" reader prefetch_size 1
	c=$T/cosmoflow_h100.ini
	expect_value "$c" train computation_time 0.00350
	expect_value "$c" train au_threshold 0.70
	d=$T/dlrm.ini
	expect_value "$d" dataset format raw
	expect_value "$d" dataset file_access shared
	expect_value "$d" dataset data_dir data/dlrm/feedbench
	expect_value "$d" dataset generate auto
	expect_value "$d" dataset num_samples_per_file 4000000000 # clamped, and said so
	"$FEEDBENCH" import-dlio "$DATA/dlrm.yaml" 2>&1 >/dev/null | grep -q "4195198976 (outside feedbench's range" ||
		fail "the clamped sample count is not said on stderr"
	b=$T/mlperf_storage_unet3d_b200.ini
	expect_value "$b" workload name unet3d
	expect_value "$b" dataset num_files_train 7200
	expect_value "$b" dataset record_length_bytes 146600628
	expect_value "$b" train computation_time 0.162
	awk 'length > 199 { exit 1 }' "$T"/*.ini || fail "an INI line the parser would refuse"
	echo "converted $n YAML files"
	;;
checkpoint)
	# The imported unet3d_a100.yaml, scaled down (5 epochs of 2 steps per rank, 64 KiB
	# checkpoints) on 2 ranks: one checkpoint, after epoch 5 (DLIO's checkpoint_after_epoch 5,
	# epochs_between_checkpoints 2), written by rank 0 alone
	fb import-dlio "$DATA/unet3d_a100.yaml" -o "$T/u.ini"
	[ "$RC" -eq 0 ] || fail "exit $RC"
	"${MPIEXEC:-mpiexec}" --oversubscribe -n 2 "$FEEDBENCH" run "$T/u.ini" \
		--set "dataset.data_dir=$T/d/train" --set dataset.generate=auto \
		--set dataset.num_files_train=28 --set dataset.record_length_bytes=4KiB \
		--set dataset.record_length_bytes_stdev=0 --set train.computation_time=0 \
		--set checkpoint.model_size_bytes=64KiB --set "checkpoint.folder=$T/ck" \
		--set "output.dir=$T/r" --set output.plots=false --quiet >"$T/out" 2>"$T/err"
	[ $? -eq 0 ] || fail "the imported unet3d_a100.yaml does not run"
	python3 - "$T/r" "$T/ck" <<'PY' || fail "not one checkpoint of 64 KiB by rank 0"
import glob, json, os, sys
s = json.load(open(glob.glob(sys.argv[1] + "/*/summary.json")[0]))
m = s["metric"]
assert s["config"]["train"]["epochs"] == 5 and s["config"]["train"]["step_barrier"] is True
assert m["checkpoint_count"] == 1 and m["checkpoint_bytes_written"] == 65536, m
assert m["checkpoint_writing_ranks"] == 1, m
assert s["checkpoint"]["mode"] == "blocking" and s["checkpoint"]["every_epochs"] == 2
assert sorted(os.listdir(sys.argv[2])) == ["step-1"], os.listdir(sys.argv[2])
assert sorted(os.listdir(sys.argv[2] + "/step-1")) == [".metadata", "__0_0.distcp"]
PY
	;;
eval)
	# DLIO's default.yaml evaluates (workflow.evaluation True): its evaluation keys map to
	# the INI, and the INI evaluates; dlrm.yaml says do_eval, which DLIO 2.0 does not read:
	# its evaluation keys are listed as not mapped and the INI validates without them.
	fb import-dlio "$DATA/default.yaml" -o "$T/default.ini"
	[ "$RC" -eq 0 ] || fail "exit $RC"
	i=$T/default.ini
	expect_value "$i" dataset num_files_eval 8
	expect_value "$i" reader batch_size_eval 1
	expect_value "$i" evaluation eval_time 0.5
	expect_value "$i" evaluation epochs_between_evals 1
	grep -qF "; line 15: dataset.num_files_eval: 8" "$i" || fail "no source comment"
	grep -q "num_files_eval.*not mapped" "$T/err" && fail "num_files_eval reported as not mapped"
	fb import-dlio "$DATA/dlrm.yaml" -o "$T/dlrm.ini"
	[ "$RC" -eq 0 ] || fail "exit $RC"
	grep -qF "dataset.num_files_eval not mapped: workflow.evaluation is not True" "$T/err" ||
		fail "dlrm.yaml's evaluation keys are not reported as unused"
	[ -z "$(value "$T/dlrm.ini" dataset num_files_eval)" ] || fail "dlrm.ini evaluates"
	# the imported default.yaml, scaled down, runs its evaluation on 2 ranks (DLIO's
	# data_folder/valid/ beside train/)
	"${MPIEXEC:-mpiexec}" --oversubscribe -n 2 "$FEEDBENCH" run "$i" \
		--set "dataset.data_dir=$T/d/train" --set dataset.generate=auto \
		--set dataset.format=npy --set dataset.num_files_train=16 --set train.epochs=1 \
		--set train.computation_time=0 --set evaluation.eval_time=1ms \
		--set "output.dir=$T/r" --set output.plots=false >"$T/out" 2>"$T/err"
	[ $? -eq 0 ] || fail "the imported default.yaml does not run"
	python3 - "$T/r" <<'PY' || fail "no evaluation pass of 8 samples"
import glob, json, sys
s = json.load(open(glob.glob(sys.argv[1] + "/*/summary.json")[0]))
p = s["eval"]["passes"]
sys.exit(0 if len(p) == 1 and p[0]["samples"] == 8 and s["metric"]["eval_samples"] == 8 else 1)
PY
	[ -d "$T/d/valid" ] || fail "no valid/ beside train/"
	;;
stdout_and_atomic)
	fb import-dlio "$DATA/bert_v100.yaml"
	[ "$RC" -eq 0 ] && grep -q '^batch_size = 48$' "$T/out" || fail "no INI on stdout"
	mkdir "$T/o"
	fb import-dlio "$DATA/bert_v100.yaml" -o "$T/o/bert.ini"
	[ "$RC" -eq 0 ] || fail "exit $RC"
	[ "$(ls "$T/o")" = "bert.ini" ] || fail "left behind: $(ls "$T/o")"
	fb import-dlio "$DATA/bert_v100.yaml" -o "$T/nodir/bert.ini"
	[ "$RC" -eq 1 ] && grep -q "cannot create" "$T/err" || fail "unwritable output: exit $RC"
	# prefetch_size by its meaning: batches in flight per rank, ceil(p / read_threads) per
	# reader thread, so that read_threads x prefetch_size is DLIO's count
	for tp in 3:8:3 1:5:5 4:2:1 2:7:4; do
		IFS=: read -r th pf want <<<"$tp"
		printf 'dataset:\n  format: npy\nreader:\n  read_threads: %s\n  prefetch_size: %s\n' \
			"$th" "$pf" >"$T/p.yaml"
		fb import-dlio "$T/p.yaml" -o "$T/p.ini"
		[ "$RC" -eq 0 ] || fail "prefetch $tp: exit $RC"
		expect_value "$T/p.ini" reader prefetch_size "$want"
	done
	grep -qF "prefetch_size: 7; ceil(7 / read_threads 2) per reader thread, 8 batches" "$T/p.ini" ||
		fail "the INI does not say how prefetch_size was mapped: $(grep -A1 prefetch "$T/p.ini")"
	;;
yaml_error)
	printf 'dataset:\n  format: npz\n  record_length: [1, 2\nreader:\n  batch_size: 4\n' >"$T/bad.yaml"
	fb import-dlio "$T/bad.yaml" -o "$T/bad.ini"
	[ "$RC" -eq 2 ] || fail "exit $RC, want 2"
	grep -qE "import-dlio: $T/bad.yaml:[0-9]+:[0-9]+: " "$T/err" || fail "no file:line:column"
	[ ! -e "$T/bad.ini" ] || fail "an INI was written"
	printf -- '- dataset\n- reader\n' >"$T/list.yaml"
	fb import-dlio "$T/list.yaml"
	[ "$RC" -eq 2 ] && grep -qF "$T/list.yaml:1:1: expected a mapping of DLIO sections" "$T/err" ||
		fail "a YAML list at the top: exit $RC"
	fb import-dlio "$T/missing.yaml"
	[ "$RC" -eq 2 ] && grep -qF "cannot open '$T/missing.yaml'" "$T/err" || fail "missing file"
	printf 'dataset:\n  record_lenght: 4096\n  num_files_train: two\n' >"$T/typo.yaml"
	fb import-dlio "$T/typo.yaml" -o "$T/typo.ini"
	[ "$RC" -eq 0 ] || fail "exit $RC"
	grep -qF "typo.yaml:2: dataset.record_lenght not mapped: not a DLIO workload key feedbench knows" "$T/err" ||
		fail "the unknown key is not reported"
	grep -qF "typo.yaml:3: dataset.num_files_train not mapped: not a number" "$T/err" ||
		fail "the bad value is not reported"
	;;
help)
	fb import-dlio --help
	[ "$RC" -eq 0 ] && grep -q "usage: feedbench import-dlio FILE.yaml" "$T/out" || fail "exit $RC"
	fb import-dlio
	[ "$RC" -eq 2 ] || fail "no file: exit $RC"
	;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
echo "PASS ($CASE)"
