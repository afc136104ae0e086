#!/bin/sh
# feedbench runs of configs/quickstart.ini that check the accelerator choice, as a user sees it.
#
#   accel.sh fallback    no usable GPU (hidden with CUDA_VISIBLE_DEVICES=-1, or CUDA not built):
#                        accelerator = auto runs on the CPU emulation and says why;
#                        accelerator = cuda exits 2 with the reason. Runs everywhere.
#   accel.sh auto        with a GPU: accelerator = auto picks cuda (exit 77 without one)
#   accel.sh quickstart  with a GPU: 2 ranks, accelerator = cuda; prints the AU (exit 77 without)
#
# Environment (set by ctest): FEEDBENCH, FEEDBENCH_SOURCE_DIR, MPIEXEC, FEEDBENCH_HAVE_CUDA,
# TEST_GPU_CUDA (the probe: exits 77 when no device answers).
set -u
mode=${1:?usage: accel.sh fallback|auto|quickstart}
: "${FEEDBENCH:?}" "${FEEDBENCH_SOURCE_DIR:?}"
MPIEXEC=${MPIEXEC:-mpiexec}
config=$FEEDBENCH_SOURCE_DIR/configs/quickstart.ini
tmp=$(mktemp -d "${TMPDIR:-/tmp}/feedbench-accel.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# run NP ACCELERATOR [--set k=v]...: runs the quickstart in $tmp; output in $tmp/out, exit
# status in $rc.
run() {
	np=$1
	accel=$2
	shift 2
	rm -rf "$tmp/results"
	"$MPIEXEC" --oversubscribe -n "$np" "$FEEDBENCH" run "$config" \
		--set "train.accelerator=$accel" --set "dataset.data_dir=$tmp/data" \
		--set "output.dir=$tmp/results" --set output.plots=false "$@" >"$tmp/out" 2>&1
	rc=$?
	sed 's/^/    | /' "$tmp/out"
}

# The quickstart cut to one epoch over 2 files, where only the accelerator choice matters.
small="--set train.epochs=1 --set dataset.num_files_train=2"

# field PATH.TO.KEY: prints a value of the run's summary.json ("" when missing).
field() {
	summary=$(find "$tmp/results" -name summary.json 2>/dev/null | head -n 1)
	[ -n "$summary" ] || fail "no summary.json under $tmp/results"
	python3 - "$summary" "$1" <<'EOF'
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v.get(k) if isinstance(v, dict) else None
print("" if v is None else v)
EOF
}

need_gpu() {
	"${TEST_GPU_CUDA:?}" probe || exit 77
}

case $mode in
fallback)
	echo "== accelerator = auto, no usable GPU"
	# shellcheck disable=SC2086
	run 1 auto $small
	[ "$rc" = 0 ] || fail "accelerator = auto without a GPU exited $rc"
	grep -q "cpu emulation (accelerator = auto: " "$tmp/out" ||
		fail "the output does not say it fell back to the CPU emulation"
	[ "$(field accelerator.kind)" = cpu ] || fail "summary.json accelerator.kind is not cpu"
	echo "== accelerator = cuda, no usable GPU"
	# shellcheck disable=SC2086
	run 1 cuda $small
	[ "$rc" = 2 ] || fail "accelerator = cuda without a GPU exited $rc, not 2"
	if [ "${FEEDBENCH_HAVE_CUDA:-0}" = 1 ]; then
		want="accelerator = cuda, but cuda: no usable device: cudaGetDeviceCount: "
	else
		want="accelerator = cuda, but the CUDA plug-in was not built"
	fi
	grep -qF "$want" "$tmp/out" || fail "the output does not say '$want'"
	[ "$(grep -cF "$want" "$tmp/out")" = 1 ] || fail "the message is printed more than once"
	;;
auto)
	need_gpu
	# shellcheck disable=SC2086
	run 1 auto $small
	[ "$rc" = 0 ] || fail "accelerator = auto with a GPU exited $rc"
	grep -q "cuda (accelerator = auto found a GPU)" "$tmp/out" ||
		fail "the output does not say it picked cuda"
	[ "$(field accelerator.kind)" = cuda ] || fail "summary.json accelerator.kind is not cuda"
	[ -n "$(field accelerator.device_name)" ] || fail "no accelerator.device_name"
	;;
quickstart)
	need_gpu
	run 2 cuda
	[ "$rc" = 0 ] || fail "quickstart with accelerator = cuda exited $rc"
	[ "$(field accelerator.kind)" = cuda ] || fail "summary.json accelerator.kind is not cuda"
	au=$(field metric.train_au_mean_percentage)
	[ -n "$au" ] || fail "no metric.train_au_mean_percentage"
	python3 -c "import sys; sys.exit(0 if 0 < float(sys.argv[1]) <= 100.5 else 1)" "$au" ||
		fail "AU $au is not in (0, 100]"
	echo "result: quickstart AU $au % on $(field accelerator.device_name)," \
		"H2D $(field accelerator.h2d_GiB_per_second) GiB/s," \
		"$(field accelerator.ranks_sharing_device) rank(s) per GPU"
	;;
*)
	fail "unknown mode '$mode'"
	;;
esac
echo "ok"
