#!/bin/bash
# `feedbench import-dlio` on DLIO's own workload YAMLs (tests/data/dlio/, pinned copies of DLIO
# 2.0.0's and one of MLPerf Storage's) and on broken ones.
#
# usage: import.sh CASE   (environment from tests/CMakeLists.txt: FEEDBENCH, FEEDBENCH_SOURCE_DIR)
set -u
: "${FEEDBENCH:?FEEDBENCH not set}"
: "${FEEDBENCH_SOURCE_DIR:?FEEDBENCH_SOURCE_DIR not set}"
CASE=$1
DATA=$FEEDBENCH_SOURCE_DIR/tests/data/dlio
DOC=$FEEDBENCH_SOURCE_DIR/docs/dlio.md
T=$(mktemp -d "${FEEDBENCH_BUILD_DIR:-/tmp}/fb_dlio_XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
	echo "FAIL ($CASE): $*" >&2
	for f in out err; do
		echo "---- $f" >&2
		head -40 "$T/$f" >&2 2>/dev/null
	done
	exit 1
}

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
		# validate waits on MPI's start-up more than it computes: all of them at once
		("$FEEDBENCH" validate "$T/$name.ini" >"$T/$name.vout" 2>"$T/$name.verr" ||
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
	r=$T/resnet50_a100.ini
	expect_value "$r" dataset record_length_bytes 114660 # 114660.07, rounded
	expect_value "$r" reader read_threads 8
	expect_value "$r" reader prefetch_size 2	 # DLIO's default, not feedbench's
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
