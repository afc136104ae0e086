#!/bin/sh
# The GPU check, in one go, on a machine with an NVIDIA GPU, the CUDA toolkit, cmake and the
# Debian -dev packages (`make deps` installs what is missing where apt works):
#   1. configure and build with `cmake --preset cuda` (build-cuda/)
#   2. ctest -L 'gpu|accel': calibration, checksum, pinned, pageable, auto picks cuda, quickstart,
#      and the no-device fallback (device hidden)
#   3. the GPU quickstart: mpiexec -n 2 build-cuda/feedbench run configs/quickstart.ini
#      --set train.accelerator=cuda
#   4. prints the calibration error at 1, 10 and 100 ms, the H2D bandwidth pinned and pageable,
#      and the quickstart's AU.
# Logs go to $OUT when it is set, else <build>/gpu-logs. Exit 0 only when all of it passed.
# FEEDBENCH_GPU_BUILD names another binary folder than the preset's build-cuda.
# Takes 1-3 minutes (most of it the build).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
cd "$root" || exit 1
build=${FEEDBENCH_GPU_BUILD:-build-cuda}
log=${OUT:-$root/$build/gpu-logs}
mkdir -p "$log" || exit 1
jobs=$(nproc 2>/dev/null || echo 4)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
status=0

say() {
	printf '%s\n' "$*" | tee -a "$log/summary.txt"
}

# stage NAME CMD...: runs CMD with its output in $log/NAME.log; stops the script on failure.
stage() {
	name=$1
	shift
	start=$(date +%s)
	if "$@" >"$log/$name.log" 2>&1; then
		say "ok    $name ($(($(date +%s) - start)) s)"
	else
		say "FAIL  $name ($(($(date +%s) - start)) s): last lines of $log/$name.log:"
		tail -n 40 "$log/$name.log"
		exit 1
	fi
}

: >"$log/summary.txt"
say "feedbench GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -n)"
if command -v nvidia-smi >/dev/null; then
	nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader \
		2>&1 | sed 's/^/      gpu: /' | tee -a "$log/summary.txt"
fi
# Installs missing Debian packages where apt works. Without a network (or apt) the build below
# says what is really missing, so a failure here does not stop the check.
if command -v dpkg-query >/dev/null && command -v apt-get >/dev/null; then
	if make deps >"$log/deps.log" 2>&1; then
		say "ok    make deps"
	else
		say "warn  make deps failed (see $log/deps.log); building with what is installed"
	fi
fi
stage configure cmake --preset cuda -B "$build"
grep -q 'CUDA plug-in: built' "$log/configure.log" ||
	{ say "FAIL  the CUDA plug-in was not built (see $log/configure.log)"; exit 1; }
stage build cmake --build "$build" -j "$jobs"

start=$(date +%s)
(cd "$build" && ctest -L 'gpu|accel' -V --timeout 180) >"$log/ctest.log" 2>&1
rc=$?
skipped=$(grep -c '\*\*\*Skipped\|Not Run' "$log/ctest.log")
if [ "$rc" = 0 ] && [ "$skipped" = 0 ]; then
	say "ok    ctest -L 'gpu|accel' ($(($(date +%s) - start)) s)"
else
	say "FAIL  ctest -L 'gpu|accel' (exit $rc, $skipped skipped): see $log/ctest.log"
	grep -E 'Test +#|tests passed|FAIL' "$log/ctest.log" | tail -n 30
	status=1
fi
grep -o 'result: .*' "$log/ctest.log" | sort -u | sed 's/^result: /      /' |
	tee -a "$log/summary.txt"

tmp=$(mktemp -d) || exit 1
start=$(date +%s)
mpiexec --oversubscribe -n 2 "$build/feedbench" run configs/quickstart.ini \
	--set train.accelerator=cuda --set "output.dir=$tmp/results" >"$log/quickstart.log" 2>&1
rc=$?
summary=$(find "$tmp/results" -name summary.json 2>/dev/null | head -n 1)
if [ "$rc" = 0 ] && [ -n "$summary" ]; then
	say "ok    quickstart on 2 ranks, accelerator = cuda ($(($(date +%s) - start)) s)"
	cp "$summary" "$log/quickstart-summary.json"
	python3 - "$summary" <<'EOF' | tee -a "$log/summary.txt"
import json, sys
s = json.load(open(sys.argv[1]))
a, m = s.get("accelerator", {}), s.get("metric", {})
cal = a.get("calibration", {}).get("error_percentage", {})
print("      device %s (cc %s), driver %s, runtime %s, %s rank(s) per GPU" % (
    a.get("device_name"), a.get("compute_capability"), a.get("driver_version"),
    a.get("runtime_version"), a.get("ranks_sharing_device")))
print("      init calibration error: " + ", ".join(
    "%s %+.3f %%" % (k, v) for k, v in cal.items() if v is not None))
print("      quickstart AU %s %% (%s), H2D %s GiB/s (%s memory)" % (
    m.get("train_au_mean_percentage"), s.get("verdict"), a.get("h2d_GiB_per_second"),
    a.get("host_memory")))
EOF
else
	say "FAIL  quickstart (exit $rc): last lines of $log/quickstart.log:"
	tail -n 30 "$log/quickstart.log"
	status=1
fi
rm -rf "$tmp"
say "$([ "$status" = 0 ] && echo PASS || echo FAIL): logs in $log"
exit "$status"
