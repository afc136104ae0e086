#!/bin/bash
# Live statistics and early stops: real 2-rank runs on a temporary folder, checking what a user
# sees: the live lines on stderr (plain lines, no control characters: stderr is a file here),
# live.csv and the per-interval rows of ranks.csv against summary.json, summary.json's
# stopped_early, and the ior workload's stonewall (every rank wrote the same bytes, all read
# back and verified).
#
# usage: live.sh CASE   (environment from tests/CMakeLists.txt)
set -u
CASE=$1
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
lib_init live

# fb NRANKS CONFIG [--set ...]
fb() {
	local n=$1 ini=$2
	shift 2
	fb_mpi "$n" run "$ini" --set "dataset.data_dir=$T/data" --set "output.dir=$T/results" "$@"
}
run_dir() { dirname "$(ls "$T"/results/*/summary.json | head -1)"; }

# stopped REASON|none EPOCHS_MAX: summary.json's stopped_early and the epochs it kept
stopped() {
	python3 - "$(run_dir)" "$1" "$2" <<'PY' || fail "stopped_early"
import json, sys
d, want, most = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = json.load(open(d + "/summary.json"))
st = s.get("stopped_early")
assert "interrupted" not in s and not d.endswith(".unfinished"), "an early stop is no interruption"
if want == "none":
    assert st is None, st
    assert len(s["epochs"]) == most, len(s["epochs"])
else:
    assert st and st[0]["reason"] == want, st
    assert len(s["epochs"]) == st[0]["epochs"] <= most, (len(s["epochs"]), st)
    assert 0 < st[0]["after_seconds"] <= sum(e["wall_seconds"] for e in s["epochs"]) + 1, st
PY
}

# plant_and_run link|fifo HOLD_US: one run with strace holding each mkdir of rank 0's main thread
# HOLD_US, while a planter puts a link to $T/outside or a FIFO at live.csv in the temporary
# folder the moment it appears; RC the run's exit status, $T/plant "planted" or why not.
plant_and_run() {
	local planter
	rm -rf "$T/results"
	mkdir -p "$T/results"
	python3 - "$T" "$1" >"$T/plant" <<'PY' &
import os, sys, time
t, what = sys.argv[1:3]
end = time.monotonic() + 60
while time.monotonic() < end:
    for d in os.listdir(t + "/results"):
        if ".tmp-" in d:
            p = f"{t}/results/{d}/live.csv"
            try:
                os.symlink(t + "/outside", p) if what == "link" else os.mkfifo(p)
                print("planted")
            except OSError as e:
                print(f"late: {e}")
            sys.exit(0)
    time.sleep(0.0005)
PY
	planter=$!
	timeout 60 strace -qq -o /dev/null -e trace=mkdir -e "inject=mkdir:delay_exit=$2" \
		"$FEEDBENCH" run "$HERE/live.ini" --set "dataset.data_dir=$T/data" \
		--set "output.dir=$T/results" --set train.epochs=1 --set train.computation_time=0 \
		--set output.live_interval=0.05s >"$T/out" 2>"$T/err"
	RC=$?
	wait "$planter"
}

case $CASE in
mpiexec)
	# The live lines, live.csv and ranks.csv's per-interval rows, then live_interval = 0.
	# stderr read as it arrives (check_live.py stamp): the lines must come during the run
	python3 "$HERE/check_live.py" stamp "$T/err" -- "$MPIEXEC" --oversubscribe -n 2 \
		"$FEEDBENCH" run "$HERE/live.ini" --set "dataset.data_dir=$T/data" \
		--set "output.dir=$T/results" --set output.live_interval=0.1s >"$T/out"
	RC=$?
	expect_rc 0
	python3 "$FEEDBENCH_SOURCE_DIR/tests/mpi/check_summary.py" "$(run_dir)" --ranks 2 --epochs 2 \
		--bytes $((2 * 4 * 40 * 4096)) || fail "check_summary (ranks.csv's per-interval rows)"
	python3 "$HERE/check_live.py" check "$(run_dir)" "$T/err" --interval 0.1 --epochs 2 ||
		fail "live lines, live.csv or ranks.csv"
	grep -q 'Slowest rank: \*\*rank [01]\*\* on host `.*`, [0-9.]* % of the time' "$(run_dir)/report.md" ||
		fail "report.md does not name the slowest rank"
	python3 "$FEEDBENCH_SOURCE_DIR/tests/report/check_folder.py" "$(run_dir)" || fail "report.md"
	rm -rf "$T/results"
	fb 2 "$HERE/live.ini" --set output.live_interval=0
	expect_rc 0
	! grep -q '^live ' "$T/err" || fail "live lines with live_interval = 0"
	[ ! -e "$(run_dir)/live.csv" ] || fail "live.csv with live_interval = 0"
	;;
time_limit)
	# epochs of 25 steps (0.625 s): the second is cut short at 1 s, and the steps rule
	# (20 a rank and epoch) counts whole epochs only
	fb 2 "$HERE/live.ini" --set train.epochs=40 --set train.time_limit=1s \
		--set dataset.num_samples_per_file=50
	expect_rc 0
	expect_err "time_limit 1.0 s reached"
	! grep -q "measured steps per epoch" "$T/err" ||
		fail "the epoch cut short was counted by the steps rule: $(grep -m1 'measured steps' "$T/err")"
	stopped time_limit 39
	grep -q "^Repetition 1 stopped early (time_limit) after" "$(run_dir)/report.md" ||
		fail "report.md does not say the run stopped early"
	python3 "$FEEDBENCH_SOURCE_DIR/tests/report/check_folder.py" "$(run_dir)" || fail "report.md"
	;;
steady | ramp)
	# An emulated device: every read takes 2 ms (steady: up to 8 epochs of about 0.6 s), or
	# 40 ms halving every 0.5 s from the first read (ramp, a device warming up: one epoch of
	# 60 reads a rank in about 1.1 s, each interval reading about 40 % more than the one
	# before; the reads only get faster, so a loaded machine cannot stretch it much, and at
	# 9 ms or more a read they stay the device's, not the CPU's).
	if [ "$CASE" = steady ]; then set -- --set train.epochs=8 --set storage.faulty.read_latency=2ms \
		--set dataset.num_samples_per_file=150; else
		set -- --set train.epochs=1 --set storage.faulty.read_latency=40ms \
			--set storage.faulty.latency_halving=0.5s --set dataset.num_samples_per_file=30 \
			--set reader.batch_size=1; fi
	fb 2 "$HERE/live.ini" --set train.computation_time=0 --set storage.backend=faulty \
		--set train.steady_state=true --set train.steady_state_intervals=3 \
		--set train.steady_state_percent=20 "$@"
	expect_rc 0
	if [ "$CASE" = steady ]; then
		expect_err "steady state: the last 3 intervals within 20.0 %"
		stopped steady_state 7
	else
		! grep -q "steady state" "$T/err" || fail "a device warming up was taken for steady"
		stopped none 1
	fi
	;;
steady_short)
	# Epochs shorter than an interval (60 reads of 2 ms a rank: about 0.15 s, a line every
	# 0.5 s): every interval's rate runs from the last deciding gather, across the epochs' ends,
	# so the steady device still stops the run, within 30 % (a loaded machine's sleeps are not
	# steady to 20 %), with 60 epochs of chances (it ran all 30 of a run when each rate ran from
	# the epoch's end before it: too short a stretch to count)
	fb 2 "$HERE/live.ini" --set train.computation_time=0 --set storage.backend=faulty \
		--set storage.faulty.read_latency=2ms --set dataset.num_samples_per_file=30 \
		--set train.epochs=60 --set output.live_interval=0.5s --set train.steady_state=true \
		--set train.steady_state_intervals=3 --set train.steady_state_percent=30
	expect_rc 0
	expect_err "steady state: the last 3 intervals within 30.0 %"
	stopped steady_state 59
	;;
stonewall)
	# Every write takes 4 ms, 8 ms on rank 1: at the stonewall rank 0 has made about twice
	# the transfers; with wear-out both end with as many, and the read phase verifies them.
	cat >"$T/ior.ini" <<'INI'
[workload]
name = live-stonewall
type = ior
[storage]
backend = faulty
[storage.faulty]
write_latency = 4ms
slow_rank = 1
[ior]
block_size = 256KiB
transfer_size = 4KiB
segments = 4
stonewall = 0.4s
[output]
plots = false
INI
	fb 2 "$T/ior.ini"
	expect_rc 0
	python3 - "$(run_dir)" <<'PY' || fail "stonewall wear-out"
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
sw = s["repetitions"][0]["stonewall"]
assert sw["transfers_at_stop_min"] < sw["transfers_at_stop_max"] < 2 * 4 * 64, sw
assert sw["transfers_per_rank"] == sw["transfers_at_stop_max"], sw
per = sw["bytes_per_rank"]
assert per == sw["transfers_per_rank"] * 4096, sw
assert sw["rank_bytes_written"] == [per, per], sw
assert s["metric"]["ior_bytes_written"] == 2 * per == s["metric"]["ior_bytes_read"], s["metric"]
assert s["config"]["ior"]["verify"] is True
PY
	;;
threads)
	# One live thread per rank and repetition, not one per epoch (its start and join at every
	# epoch's edge cost about 3 % of 4 KiB cached reads in epochs of 15 ms: docs/performance.md):
	# 4 epochs x 2 repetitions make exactly 2 more clone calls than the same run with
	# live_interval = 0 (one rank, strace -f counts them), and each repetition's thread ran.
	command -v strace >/dev/null || fail "strace is not installed (make deps installs it)"
	for iv in 0 0.1s; do
		rm -rf "$T/results"
		timeout 60 strace -f -qq -o "$T/clone.$iv" -e trace=clone,clone3 "$FEEDBENCH" run \
			"$HERE/live.ini" --set "dataset.data_dir=$T/data" --set "output.dir=$T/results" \
			--set train.epochs=4 --set output.repetitions=2 --set train.computation_time=0 \
			--set output.live_interval="$iv" >"$T/out" 2>"$T/err"
		RC=$?
		expect_rc 0
	done
	off=$(grep -c '^[0-9]* *clone' "$T/clone.0") on=$(grep -c '^[0-9]* *clone' "$T/clone.0.1s")
	[ "$((on - off))" -eq 2 ] || fail "$((on - off)) threads more with live statistics, not 2 (one a repetition)"
	python3 - "$(run_dir)" <<'PY' || fail "summary.json live members of 2 repetitions"
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
lv = s["live"]
assert len(s["repetitions"]) == 2 and len(s["epochs"]) == 8, (len(s["repetitions"]), len(s["epochs"]))
assert 0 < lv["thread_cpu_seconds"] <= lv["cpu_seconds"], lv
PY
	;;
hostile)
	# Something planted at live.csv in the run's temporary folder before rank 0 writes it: a
	# link to a file outside the output, then a FIFO. strace holds every mkdir of rank 0's
	# main thread 50 ms (the temporary folder's among them), so the planter finds the folder
	# before anything is written into it. The run refuses (exit 1, "not a regular file", what
	# was measured kept in NAME.unfinished), the link's target is untouched, nothing hangs.
	command -v strace >/dev/null || fail "strace is not installed (make deps installs it)"
	echo precious >"$T/outside"
	for what in link fifo; do
		# 50 ms is plenty for the planter; a loaded machine that made it late gets 300 ms
		for hold in 50000 300000; do
			plant_and_run "$what" "$hold"
			[ "$(cat "$T/plant")" = planted ] && break
		done
		[ "$(cat "$T/plant")" = planted ] || fail "$what: not planted before the run wrote: $(cat "$T/plant")"
		[ "$RC" -ne 124 ] || fail "$what: the run hung on a $what at live.csv"
		[ "$RC" -eq 1 ] || fail "$what: the run exited $RC, not 1"
		[ "$(cat "$T/outside")" = precious ] || fail "$what: the file outside the output was written"
		grep -q "cannot write results into '$T/results/live-test-.*': not a regular file" "$T/err" ||
			fail "$what: no message saying why: $(tail -n 1 "$T/err")"
		ls "$T"/results/*.unfinished/summary.json >/dev/null || fail "$what: what was measured not kept"
	done
	;;
*)
	fail "unknown case"
	;;
esac
exit 0
