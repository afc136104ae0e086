#!/bin/bash
# MLPerf Storage v3.0 submissions (docs/mlperf.md), as a user meets them:
#   presets   `feedbench list` shows the preset table; [train] model + accelerator_type fill
#             computation_time, batch_size, read_threads and au_threshold (a value the config
#             sets stays); unet3d on mi355 is refused (exit 2, naming the pair); the shipped
#             configs validate and configs/workloads/retinanet_*.ini agree with the table
#   datasize  `feedbench mlperf datasize` prints the files rule 3.1.2 asks for (computed here)
#             and the config line; every training run records the rule in summary.json
#   run       `feedbench mlperf run` at 2 ranks: warmup/ + run-1..5, one shuffle seed each, the
#             cache drop per node recorded, results.json/.csv equal to the runs' summaries,
#             system.yaml, no hidden folder left
#   check     the real folder is INVALID by 3.1.2 only (this machine's RAM); from it, folders
#             edited per rule: each rule's passing and failing folder, the verdict and exit
# Environment from tests/CMakeLists.txt: FEEDBENCH, MPIEXEC, FEEDBENCH_SOURCE_DIR.
set -u
: "${FEEDBENCH_SOURCE_DIR:?FEEDBENCH_SOURCE_DIR not set}"
. "$FEEDBENCH_SOURCE_DIR/tests/lib.sh"
FAIL_WHAT=mlperf
SRC=$FEEDBENCH_SOURCE_DIR
lib_init mlperf /tmp
cd "$T" || exit 1
fb() { "$FEEDBENCH" "$@" >"$T/out" 2>"$T/err"; RC=$?; }

# --- presets -------------------------------------------------------------------------------
fb list
[ "$RC" -eq 0 ] || fail "feedbench list exited $RC"
grep -Eq '^    retinanet +mi355 +0.0634 +32 +8 +0.85  v3.0$' "$T/out" ||
	fail "feedbench list lacks the retinanet mi355 preset row"
cat > u.ini <<EOF
[workload]
name = unet3d_b200
[dataset]
data_dir = $T/data
format = npz
num_files_train = 28
num_samples_per_file = 1
record_length_bytes = 64KiB
[reader]
read_threads = 1
[train]
model = unet3d
accelerator_type = b200
epochs = 1
[output]
dir = $T/res
EOF
fb validate u.ini
for want in "computation_time = 0.162" "batch_size = 7" "read_threads = 1" "au_threshold = 0.9"; do
	grep -qx "$want" "$T/out" || fail "validate: the preset gave no '$want'"
done
fb validate u.ini --set train.accelerator_type=mi355
[ "$RC" -eq 2 ] || fail "unet3d on mi355 exited $RC, not 2"
grep -q "model = unet3d with accelerator_type = mi355: mlcommons/storage defines no such" \
	"$T/err" || fail "unet3d on mi355: no message naming the pair"
for f in "$SRC"/configs/mlperf/*.ini; do
	fb validate "$f"
	[ "$RC" -eq 0 ] || fail "$f does not validate"
done
python3 - "$SRC" <<'PY' || fail "configs/workloads/retinanet_*.ini disagree with the presets"
import configparser, subprocess, sys, os
rows = {}
out = subprocess.run([os.environ["FEEDBENCH"], "list"], capture_output=True, text=True).stdout
for line in out.splitlines():
    f = line.split()
    if len(f) == 7 and f[0] in ("unet3d", "retinanet"):
        rows[(f[0], f[1])] = (float(f[2]), int(f[3]), int(f[4]), float(f[5]))
for acc in ("a100", "h100", "b200", "mi355"):
    c = configparser.ConfigParser(inline_comment_prefixes=(";",))
    c.read(f"{sys.argv[1]}/configs/workloads/retinanet_{acc}.ini")
    got = (float(c["train"]["computation_time"]), int(c["reader"]["batch_size"]),
           int(c["reader"]["read_threads"]), float(c["train"]["au_threshold"]))
    if rows[("retinanet", acc)] != got:
        sys.exit(f"retinanet_{acc}.ini {got} != preset {rows[('retinanet', acc)]}")
PY

# import-dlio of v3.0 YAMLs (written here from mlcommons/storage's values) selects the preset.
for pair in "unet3d b200 npz 7 4 0.162 5 0.90" "retinanet mi355 jpeg 32 8 0.0634 8 0.85" \
	"retinanet b200 jpeg 24 8 0.04755 8 0.85"; do
	set -- $pair
	printf '%s\n' "model:" "  name: $1" "  type: cnn" "framework: pytorch" "workflow:" \
		"  generate_data: False" "  train: True" "  checkpoint: False" "dataset:" \
		"  data_folder: data/$1/" "  format: $3" "  num_files_train: 7200" \
		"  num_samples_per_file: 1" "  record_length_bytes: 322957" "reader:" \
		"  data_loader: pytorch" "  batch_size: $4" "  read_threads: $5" \
		"  file_shuffle: seed" "  sample_shuffle: seed" "train:" "  epochs: $7" \
		"  computation_time: $6" "metric:" "  au: $8" >"$1_$2.yaml"
	fb import-dlio "$1_$2.yaml" -o "$1_$2.ini"
	[ "$RC" -eq 0 ] || fail "import-dlio $1_$2.yaml exited $RC"
	grep -qx "model = $1" "$1_$2.ini" && grep -qx "accelerator_type = $2" "$1_$2.ini" ||
		fail "import-dlio $1_$2.yaml selects no $1 $2 preset"
	fb validate "$1_$2.ini" --set dataset.generate=auto
	[ "$RC" -eq 0 ] || fail "the imported $1_$2.ini does not validate"
done
# A compute time of no preset selects none.
sed -i 's/computation_time: 0.04755/computation_time: 0.05/' retinanet_b200.yaml
fb import-dlio retinanet_b200.yaml -o other.ini
[ "$RC" -eq 0 ] || fail "import-dlio of the edited YAML exited $RC"
grep -q "^accelerator_type" other.ini && fail "import-dlio chose a preset for a compute time of none"

# --- datasize ------------------------------------------------------------------------------
fb mlperf datasize u.ini --accelerators-per-host 4 --hosts 2 --client-memory 1GiB
[ "$RC" -eq 0 ] || fail "mlperf datasize exited $RC"
# 2 hosts x 1 GiB x 5 / 64 KiB = 163840 samples > 500 x 7 x 8 = 28000.
grep -qx "  at least 163840 files, 10.00 GiB" "$T/out" || fail "datasize: wrong minimum"
grep -qx "num_files_train = 163840" "$T/out" || fail "datasize: no config line"
fb mlperf datasize u.ini --accelerators-per-host 4 --hosts 2 --client-memory 1MiB
grep -qx "num_files_train = 28000" "$T/out" || fail "datasize: the 500-step floor is not used"
fb mlperf datasize u.ini
[ "$RC" -eq 2 ] || fail "datasize without --accelerators-per-host exited $RC, not 2"

# --- run -----------------------------------------------------------------------------------
fb_mpi 2 mlperf run u.ini --quiet
[ "$RC" -eq 0 ] || fail "mlperf run exited $RC"
sub=$(ls -d "$T"/res/unet3d_b200-mlperf-* 2>/dev/null | head -1)
[ -n "$sub" ] || fail "no submission folder under $T/res"
[ -z "$(ls -A "$T/res" | grep '^\.')" ] || fail "a hidden folder was left in $T/res"
python3 - "$sub" <<'PY' || fail "the submission folder is wrong"
import csv, json, os, sys
d = sys.argv[1]
top = json.load(open(f"{d}/mlperf_run.json"))
names = [p["folder"] for p in top["phases"]]
assert names == ["warmup"] + [f"run-{i}" for i in range(1, 6)], names
assert [p["warmup"] for p in top["phases"]] == [True] + [False] * 5
seeds = [p["shuffle_seed"] for p in top["phases"]]
assert len(set(seeds)) == 6, seeds
for p in top["phases"]:
    drops = p["cache_drop"]
    assert len(drops) == 1 and drops[0]["host"], drops  # one node
    want = "dropped" if os.geteuid() == 0 else "not permitted"
    assert drops[0]["outcome"] == want, drops
rows = list(csv.DictReader(open(f"{d}/results.csv")))
assert [r["run"] for r in rows] == [f"run-{i}" for i in range(1, 6)] + ["mean"], rows
res = json.load(open(f"{d}/results.json"))
aus = []
for i, r in enumerate(rows[:5], 1):
    s = json.load(open(f"{d}/run-{i}/summary.json"))
    m = s["metric"]
    assert s["config"]["reader"]["shuffle_seed"] == seeds[i]
    assert s["mlperf"]["datasize"]["rule"] == "3.1.2 trainingRecalculateDatasetSize"
    assert s["mlperf"]["datasize"]["holds"] is False  # 28 files on this machine's RAM
    gib = m["train_bytes_read"] / m["train_wall_seconds"] / 2**30
    j = res["runs"][i - 1]
    assert abs(j["train_io_throughput_GiB_per_second"] - gib) <= 1e-9 * gib, (j, gib)
    assert abs(float(r["train_au_mean_percentage"]) - m["train_au_mean_percentage"]) < 1e-3
    assert j["samples_per_second_per_accelerator"] == \
        m["train_throughput_mean_samples_per_second"] / s["num_accelerators"]
    aus.append(m["train_au_mean_percentage"])
assert abs(res["mean"]["train_au_mean_percentage"] - sum(aus) / 5) < 1e-9
y = open(f"{d}/system.yaml").read()
assert "simultaneous_read_support: FILL" in y and "memory_bytes: " in y, y
PY

# --- check ---------------------------------------------------------------------------------
fb mlperf check "$sub"
[ "$RC" -eq 1 ] || fail "check of the scaled-down folder exited $RC, not 1"
grep -q "^verdict: INVALID: INVALID 3.1.2 trainingRecalculateDatasetSize (warmup (and 5 more runs): 28 files" \
	"$T/out" || fail "check: the scaled-down folder is not INVALID by 3.1.2 alone"
[ "$(grep -c '^INVALID\|^OPEN' "$T/out")" -eq 1 ] || fail "check: more than rule 3.1.2 broken"
python3 "$SRC/tests/mlperf/check_rules.py" "$sub" "$T/cases" ||
	fail "a rule's passing or failing folder got the wrong finding"
exit 0
