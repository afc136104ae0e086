#!/bin/bash
# Sweep tests: real `feedbench sweep` runs of configs/sweeps/*-small.ini at 2 ranks in a
# temporary folder, the resume logic, the errors a user sees, and `feedbench plot` over the
# fixtures in tests/sweep/fixtures (every gnuplot script renders one of them).
#
# usage: sweep.sh CASE   (environment from tests/CMakeLists.txt: FEEDBENCH, MPIEXEC,
#                         FEEDBENCH_SOURCE_DIR)
set -u

CASE=$1
: "${FEEDBENCH_SOURCE_DIR:?FEEDBENCH_SOURCE_DIR not set}"
SRC=$FEEDBENCH_SOURCE_DIR
HERE=$SRC/tests/sweep
. "$SRC/tests/lib.sh"
lib_init sweep /tmp
cd "$T" || exit 1

sweep_dir() {
	local d
	d=$(ls -d "$T"/results/*-sweep-* 2>/dev/null | head -1)
	[ -n "$d" ] || fail "no sweep folder under $T/results"
	echo "$d"
}

mtime() {
	stat -c %Y.%y "$1"
}

case $CASE in
dry_run)
	fb_mpi 2 sweep "$SRC/configs/sweeps/loader-small.ini" --dry-run --output "$T/results"
	expect_rc 0
	expect_out "4 points x 2 repetitions at 2 ranks"
	expect_out "1 dataset generated"
	expect_out "read_threads=2 prefetch_size=2"
	expect_out "Nothing was run"
	# The data folder as the run will find it: file system, striping, existence, cache.
	expect_out "data folder: data/loader-small (does not exist: created in '$T', which is writable)"
	grep -qE '^file system: [a-z0-9_.-]+ at /.*: (cannot stripe|can stripe)' "$T/out" ||
		fail "the dry run does not name the data folder's file system"
	grep -qE '^1 +generate +[0-9.]+ +resident ' "$T/out" ||
		fail "the dry run does not say that a 2 MiB dataset is cache-resident"
	expect_out "4 of 4 points read a cache-resident dataset"
	[ ! -e "$T/results" ] || fail "--dry-run created $T/results"
	[ ! -e "$T/data" ] || fail "--dry-run touched the data folder"
	;;
checks)
	# validate, sweep --dry-run and the sweep itself refuse, through the run's own checks and
	# before any file is touched, every point the run would refuse: exit 2, the point named,
	# no results folder, no dataset.
	CFG=$T/stripe-batch.ini
	{ cat "$SRC/configs/sweeps/stripe-small.ini"; echo "reader.batch_size = 4, 32"; } >"$CFG"
	# refused WHAT MESSAGE RANKS COMMANDS ARGS...: each of COMMANDS (validate, dry, sweep)
	# refuses with MESSAGE (1 rank: no launcher, seconds saved).
	refused() {
		local what=$1 msg=$2 n=$3 cmds=$4 cmd
		shift 4
		for cmd in $cmds; do
			local args=(sweep "$CFG" --output "$T/results" "$@")
			[ "$cmd" = validate ] && args=(validate "$CFG" "$@")
			[ "$cmd" = dry ] && args+=(--dry-run)
			if [ "$n" -gt 1 ]; then
				fb_mpi "$n" "${args[@]}"
			else
				"$FEEDBENCH" "${args[@]}" >"$T/out" 2>"$T/err"
				RC=$?
			fi
			FAIL_WHAT="$what ($cmd)" expect_rc 2
			FAIL_WHAT="$what ($cmd)" expect_err "$msg"
			[ ! -e "$T/results" ] || fail "$what: $cmd created $T/results"
			[ ! -e "$T/data" ] || fail "$what: $cmd touched the data folder"
		done
	}
	# 8 files x 16 samples on 1 rank: 32 steps of 4, 4 steps of 32 (point 2, the first with
	# batch_size = 32 in run order).
	refused "warm-up" "sweep point 2 (stripe_count=1 file_access=per_rank batch_size=32): $CFG: exclude_start_steps (4) leaves no step to measure: rank 0 has 4 steps per epoch" \
		1 "validate dry sweep" --set train.exclude_start_steps=4
	refused "no manifest" "'data/stripe-small' has no manifest" 1 "validate sweep" \
		--set dataset.generate=never
	refused "raw, never" "format raw cannot read existing files" 1 dry \
		--set dataset.generate=never --set dataset.verify=false
	# Without the point of 4 steps it passes: validate prints the effective config.
	"$FEEDBENCH" validate "$SRC/configs/sweeps/stripe-small.ini" \
		--set train.exclude_start_steps=4 >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_out "exclude_start_steps = 4"
	;;
stripe | formats | loader)
	declare -A npoints=([stripe]=4 [formats]=6 [loader]=4)
	extra=""
	[ "$CASE" = loader ] && extra=--reuse
	# Here (ext4 or tmpfs) nothing stripes: no output recommends a stripe count.
	[ "$CASE" = stripe ] && extra="--no-stripe-gain $T/out"
	fb_mpi 2 sweep "$SRC/configs/sweeps/$CASE-small.ini" --output "$T/results"
	expect_rc 0
	expect_out "recommendation"
	expect_out "sweep folder: "
	python3 "$HERE/check_sweep.py" "$(sweep_dir)" "${npoints[$CASE]}" --plots $extra ||
		fail "check_sweep.py"
	;;
shipped)
	# The shipped stripe and format grids measure the storage: no emulated compute, 3 or more
	# repetitions, and every point leaves steps to measure at the rank count each is meant
	# for (its header's mpiexec -n), checked by validate (the run's own checks).
	for name in stripe stripe-large stripe-small formats formats-small; do
		cfg=$SRC/configs/sweeps/$name.ini
		n=$(sed -n 's/^;.*mpiexec -n \([0-9]*\) .*/\1/p' "$cfg" | tail -1)
		[ -n "$n" ] || fail "$name.ini names no rank count (mpiexec -n N)"
		("$MPIEXEC" --oversubscribe -n "$n" "$FEEDBENCH" validate "$cfg" \
			--set "dataset.data_dir=$T/data/$name" >"$T/$name.out" 2>"$T/$name.err"
		echo $? >"$T/$name.rc") &
	done
	wait
	for name in stripe stripe-large stripe-small formats formats-small; do
		[ "$(cat "$T/$name.rc")" = 0 ] || fail "$name.ini does not validate: $(head -3 "$T/$name.err")"
		grep -qx 'computation_time = 0' "$T/$name.out" ||
			fail "$name.ini: $(grep '^computation_time' "$T/$name.out"): the grid measures the compute"
		reps=$(sed -n 's/^repetitions = //p' "$T/$name.out")
		[ "$reps" -ge 3 ] || fail "$name.ini runs $reps repetitions"
	done
	;;
interrupted)
	# Ctrl-C after 4 of 5 epochs: exit 130, what was measured kept in <run>.unfinished
	# (summary.json with the 4 finished epochs and "interrupted": true), nothing under the
	# final name; compare and history refuse it unless --allow-unfinished.
	cat >"$T/intr.ini" <<-EOF
	[workload]
	name = intr
	[dataset]
	data_dir = $T/data
	format = raw
	num_files_train = 2
	num_samples_per_file = 8
	record_length_bytes = 4KiB
	[reader]
	batch_size = 2
	read_threads = 1
	[train]
	epochs = 5
	computation_time = 150ms
	[output]
	dir = $T/results
	plots = false
	EOF
	"$FEEDBENCH" run "$T/intr.ini" >"$T/out" 2>"$T/err" &
	pid=$!
	for _ in $(seq 600); do
		grep -q "epoch 4/5 done" "$T/err" && break
		sleep 0.05
	done
	kill -INT "$pid"
	wait "$pid"
	RC=$?
	expect_rc 130
	expect_err "the epochs it finished are kept in '$T/results/intr-"
	U=$(ls -d "$T"/results/intr-*.unfinished)
	[ "$(ls "$T/results")" = "$(basename "$U")" ] || fail "more than the .unfinished folder: $(ls "$T/results")"
	python3 - "$U/summary.json" <<-'PY' || fail "summary.json of the interrupted run"
	import json, sys
	s = json.load(open(sys.argv[1]))
	assert s.get("interrupted") is True, s.get("interrupted")
	assert [e["epoch"] for e in s["epochs"]] == [1, 2, 3, 4], [e["epoch"] for e in s["epochs"]]
	assert s["metric"]["train_bytes_read"] == 4 * 16 * 4096, s["metric"]["train_bytes_read"]
	PY
	"$FEEDBENCH" compare "$U" "$U" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 3
	expect_err "is an interrupted run"
	"$FEEDBENCH" compare "$U" "$U" --allow-unfinished >"$T/out" 2>"$T/err"
	RC=$?
	! grep -q "interrupted run" "$T/err" || fail "--allow-unfinished did not compare it"
	"$FEEDBENCH" history "$T/results" --no-plot >"$T/out" 2>"$T/err"
	expect_err "is an interrupted run"
	"$FEEDBENCH" history "$T/results" --no-plot --allow-unfinished >"$T/out" 2>"$T/err"
	! grep -q "interrupted run" "$T/err" || fail "history --allow-unfinished skipped it"
	;;
stripe_2reps | stripe_shared)
	# Two more stripe sweeps where nothing stripes, which once reported a stripe gain:
	# stripe-small.ini at 2 repetitions ("+29.8 % over stripe_count=1" from noise), and
	# stripe_count 1, 2, 4 over one shared dataset at 3 repetitions ("+86.4 %" from the page
	# cache). Neither may recommend a stripe count in any output.
	CFG=$SRC/configs/sweeps/stripe-small.ini
	if [ "$CASE" = stripe_2reps ]; then
		fb_mpi 2 sweep "$CFG" --output "$T/results" --set output.repetitions=2 \
			--set output.plots=false
		n=4
	else
		sed -e 's/^storage.stripe_count = .*/storage.stripe_count = 1, 2, 4/' \
			-e '/^dataset.file_access = /d' -e 's/^file_access = per_rank/file_access = shared/' \
			-e 's/^plots = true/plots = false/' "$CFG" >"$T/shared.ini"
		fb_mpi 2 sweep "$T/shared.ini" --output "$T/results"
		n=3
	fi
	expect_rc 0
	python3 "$HERE/check_sweep.py" "$(sweep_dir)" $n --no-stripe-gain "$T/out" ||
		fail "check_sweep.py"
	;;
tiny_vs_shards)
	# One sweep, four points walked by [sweep] zip: the same 256 samples of 4 KiB as 256 raw
	# or npy files and as 4 wds or tfrecord shards. Same bytes at every point; a tiny file is
	# one open per sample, a shard one open per reader thread; the table shows samples/s and
	# opens/s side by side.
	fb_mpi 2 sweep "$SRC/configs/sweeps/tiny-files-vs-shards-small.ini" --output "$T/results"
	expect_rc 0
	grep -qE '^point +format +num_files_train +num_samples_per_file .* samples/s +opens/s ' \
		"$T/out" || fail "the table does not show samples/s and opens/s side by side"
	D=$(sweep_dir)
	python3 "$HERE/check_sweep.py" "$D" 4 --plots || fail "check_sweep.py"
	# No line against a zipped key: it would join points of different formats.
	[ ! -e "$D/sweep_bandwidth_num_files_train.png" ] || fail "a chart against a zipped key"
	# A format is one point here: no "best" to pick among values that move with it.
	grep -qF -- "- format=wds: one point (num_files_train=4 num_samples_per_file=64): " \
		"$D/sweep.md" || fail "sweep.md does not say that the wds group is one point"
	python3 - "$D" <<'PY' || fail "tiny files against shards"
import json, os, sys
d = sys.argv[1]
res = json.load(open(os.path.join(d, "sweep_results.json")))
zipped = [k["name"] for k in res["keys"] if k.get("zipped")]
assert zipped == ["format", "num_files_train", "num_samples_per_file"], zipped
want = {"raw": (256, 256), "npy": (256, 256), "wds": (4, 0), "tfrecord": (4, 0)}
seen = []
for p in res["points"]:
    fmt = p["values"]["dataset.format"]
    s = json.load(open(os.path.join(d, p["dir"], "summary.json")))
    files, opens_exact = want[fmt]
    ep = s["epochs"]
    samples = sum(e["samples"] for e in ep)
    opens = sum(e["opens"] for e in ep)
    read = sum(e["bytes_read"] for e in ep)
    # The same bytes: 256 samples of 4 KiB on disk and delivered, whatever the layout.
    assert s["storage"]["dataset_bytes"] == 256 * 4096, (fmt, s["storage"]["dataset_bytes"])
    assert samples == 256, (fmt, samples)
    assert read >= 256 * 4096, (fmt, read)
    assert s["config"]["dataset"]["num_files_train"] == files, (fmt, s["config"]["dataset"])
    if opens_exact:
        assert opens == opens_exact, "%s: %d opens for %d tiny files" % (fmt, opens, files)
    else:  # each reader thread of each rank opens a shard at most once
        assert 1 <= opens <= files * 2 * 2, "%s: %d opens of %d shards" % (fmt, opens, files)
    m = p["metrics"]
    for col in ("samples_per_second", "opens_per_second"):
        assert m[col]["n"] == 1 and m[col]["mean"] > 0, (fmt, col, m[col])
    seen.append(fmt)
    print("%-8s files %3d opens %3d samples %d bytes read %d samples/s %.0f opens/s %.0f" % (
        fmt, files, opens, samples, read, m["samples_per_second"]["mean"],
        m["opens_per_second"]["mean"]))
assert seen == ["raw", "npy", "wds", "tfrecord"], seen
PY
	;;
zip_errors)
	# [sweep] zip lists of different lengths: exit 2 before anything runs, the message naming
	# the config line (names that are not swept, a zip of one key: unit.test_sweep).
	CFG=$SRC/configs/sweeps/tiny-files-vs-shards-small.ini
	sed 's/^dataset.num_files_train = .*/dataset.num_files_train = 256, 256, 4/' "$CFG" \
		>"$T/short.ini"
	line=$(grep -n '^zip' "$T/short.ini" | cut -d: -f1)
	fb_mpi 2 sweep "$T/short.ini" --output "$T/results"
	expect_rc 2
	expect_err "short.ini:$line: [sweep] zip: dataset.format has 4 values"
	expect_err "but dataset.num_files_train has 3"
	# Without zip the same lists multiply, and the repeated values are refused.
	sed '/^zip = /d' "$CFG" >"$T/nozip.ini"
	fb_mpi 2 sweep "$T/nozip.ini" --output "$T/results"
	expect_rc 2
	expect_err "value '256' is listed twice"
	[ ! -e "$T/results" ] || fail "a refused sweep created $T/results"
	;;
resume)
	CFG=$SRC/configs/sweeps/loader-small.ini
	fb_mpi 2 sweep "$CFG" --output "$T/results" --quiet
	expect_rc 0
	D=$(sweep_dir)
	P1=$(ls -d "$D"/point-001-*)
	P2=$(ls -d "$D"/point-002-*)
	# An interrupted sweep: points 3 and 4 never finished, no tables yet.
	rm -rf "$D"/point-003-* "$D"/point-004-* "$D"/sweep.csv "$D"/sweep.md \
		"$D"/sweep_results.json "$D"/report.md
	touch "$P1/marker"
	m1=$(mtime "$P1/summary.json")
	m2=$(mtime "$P2/summary.json")
	sleep 1
	fb_mpi 2 sweep "$CFG" --resume "$D"
	expect_rc 0
	[ "$(grep -c 'done before, skipped' "$T/err")" -eq 2 ] || fail "expected 2 skipped points"
	[ -e "$P1/marker" ] || fail "point 1 was redone (its folder was replaced)"
	[ "$(mtime "$P1/summary.json")" = "$m1" ] || fail "point 1 summary.json was rewritten"
	[ "$(mtime "$P2/summary.json")" = "$m2" ] || fail "point 2 summary.json was rewritten"
	ls "$D"/point-003-*/summary.json "$D"/point-004-*/summary.json >/dev/null ||
		fail "points 3 and 4 were not run"
	python3 "$HERE/check_sweep.py" "$D" 4 --plots || fail "check_sweep.py after resume"
	# Without CONFIG: the config and --set options the sweep started with; all done.
	fb_mpi 2 sweep --resume "$D"
	expect_rc 0
	[ "$(grep -c 'done before, skipped' "$T/err")" -eq 4 ] || fail "expected 4 skipped points"
	# Another config: refused, exit 2, nothing run.
	fb_mpi 2 sweep "$CFG" --resume "$D" --set train.epochs=3
	expect_rc 2
	expect_err "cannot resume"
	expect_err "differs from the one the sweep started with"
	# Another [sweep]: refused too.
	sed 's/^reader.prefetch_size = 1, 2/reader.prefetch_size = 1, 4/' "$CFG" >"$T/other.ini"
	fb_mpi 2 sweep "$T/other.ini" --resume "$D"
	expect_rc 2
	expect_err "differs from the one the sweep started with"
	# Another rank count: refused.
	fb_mpi 1 sweep "$CFG" --resume "$D"
	expect_rc 2
	expect_err "the sweep ran with 2 ranks, this job has 1"
	[ -e "$P1/marker" ] || fail "a refused resume touched point 1"
	;;
unfinished)
	# A sweep that cannot write its pictures fails (exit 1) and never takes its final name:
	# its points stay in <name>.partial, which --resume finishes and renames.
	printf '#!/bin/sh\nexit 1\n' >"$T/gnuplot-fails"
	chmod +x "$T/gnuplot-fails"
	CFG=$SRC/configs/sweeps/loader-small.ini
	FEEDBENCH_GNUPLOT="$T/gnuplot-fails" fb_mpi 2 sweep "$CFG" --output "$T/results" --quiet
	expect_rc 1
	expect_err "cannot draw the plots"
	D=$(sweep_dir)
	case $D in *.partial) ;; *) fail "a failed sweep took a final name: $D" ;; esac
	[ "$(ls -d "$T"/results/*-sweep-* | wc -l)" -eq 1 ] || fail "more than one sweep folder"
	ls "$D"/point-00[1-4]-*/summary.json >/dev/null || fail "the measured points were not kept"
	fb_mpi 2 sweep --resume "$D"
	expect_rc 0
	[ "$(grep -c 'done before, skipped' "$T/err")" -eq 4 ] || fail "expected 4 skipped points"
	[ ! -e "$D" ] || fail "the finished sweep kept its .partial name"
	F=${D%.partial}
	expect_out "sweep folder: $F"
	python3 "$HERE/check_sweep.py" "$F" 4 --plots || fail "check_sweep.py after the resume"
	;;
bad_value)
	sed 's/^reader.read_threads = .*/reader.read_threads = 1, two/' \
		"$SRC/configs/sweeps/loader-small.ini" >"$T/bad.ini"
	line=$(grep -n '^reader.read_threads = 1, two' "$T/bad.ini" | cut -d: -f1)
	fb_mpi 2 sweep "$T/bad.ini" --output "$T/results"
	expect_rc 2
	expect_err "bad.ini:$line: [sweep] reader.read_threads"
	expect_err "two"
	[ ! -e "$T/results" ] || fail "a bad config created $T/results"
	fb_mpi 2 sweep "$SRC/configs/sweeps/loader-small.ini" --bogus
	expect_rc 2
	expect_err "unknown option '--bogus'"
	;;
no_gnuplot)
	# docs/failures.md 25: results and tables written, a warning that plots were skipped.
	# The output folder is not empty: for every second the sweep may start in, its first
	# name is an earlier sweep's folder, its second name's .partial a link to a folder outside
	# and its third name a dangling link. The sweep takes the fourth name and touches none.
	mkdir -p "$T/results" "$T/outside"
	echo keep >"$T/outside/file"
	now=$(date +%s)
	for i in $(seq -2 60); do
		stamp=$(date -u -d "@$((now + i))" +%Y%m%dT%H%M%SZ)
		mkdir "$T/results/loader-small-sweep-$stamp"
		echo earlier >"$T/results/loader-small-sweep-$stamp/sweep.json"
		ln -s "$T/outside" "$T/results/loader-small-sweep-$stamp-2.partial"
		ln -s "$T/outside/none" "$T/results/loader-small-sweep-$stamp-3"
	done
	# An output that is a file, or a link to nowhere: exit 1 naming the path, before any
	# dataset; the file unchanged, nothing made behind the link.
	echo keep >"$T/resfile"
	ln -s "$T/outside/none/deeper" "$T/dangling"
	for o in resfile dangling; do
		fb_mpi 2 sweep "$SRC/configs/sweeps/loader-small.ini" --output "$T/$o" --quiet
		expect_rc 1
		expect_err "cannot create '$T/$o/loader-small-sweep-"
	done
	[ "$(cat "$T/resfile")" = keep ] || fail "the output file was changed"
	[ ! -e "$T/outside/none" ] || fail "a folder was made behind the dangling link"
	[ ! -e "$T/data" ] || fail "a refused sweep generated its dataset"
	FEEDBENCH_GNUPLOT=/nonexistent/gnuplot fb_mpi 2 sweep \
		"$SRC/configs/sweeps/loader-small.ini" --output "$T/results" --quiet
	expect_rc 0
	expect_err "plots skipped: gnuplot not found"
	D=$(ls -d "$T"/results/loader-small-sweep-*-4 2>/dev/null)
	[ -n "$D" ] && [ -d "$D" ] && [ ! -L "$D" ] ||
		fail "the sweep did not take the first free name: $(ls "$T/results" | grep -- '-4')"
	[ "$(ls -A "$T/outside")" = file ] && [ "$(cat "$T/outside/file")" = keep ] ||
		fail "the folder behind a planted link was touched: $(ls -A "$T/outside")"
	[ "$(cat "$T"/results/loader-small-sweep-*Z/sweep.json | sort -u)" = earlier ] ||
		fail "an earlier sweep's folder was written into"
	[ "$(find "$T/results" -maxdepth 1 -type l | wc -l)" -eq 126 ] ||
		fail "a planted link was removed or replaced"
	[ "$(find "$T/results" -maxdepth 1 -name '*.partial' ! -type l | wc -l)" -eq 0 ] ||
		fail "a .partial folder was left: $(ls "$T/results" | grep partial | grep -v -- -2.partial)"
	python3 "$HERE/check_sweep.py" "$D" 4 || fail "check_sweep.py without gnuplot"
	[ -z "$(find "$D" -name '*.png')" ] || fail "pictures appeared without gnuplot"
	cp -r "$HERE/fixtures/run" "$T/run"
	FEEDBENCH_GNUPLOT=/nonexistent/gnuplot "$FEEDBENCH" plot "$T/run" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 1
	expect_err "plots skipped: gnuplot not found"
	;;
plot)
	# Every script renders a fixture: au, latency, timeline (run); sweep_bandwidth,
	# sweep_bars, sweep_latency (sweep). `feedbench plot` needs no MPI launcher.
	cp -r "$HERE/fixtures/run" "$T/run"
	cp -r "$HERE/fixtures/sweep" "$T/sweep"
	"$FEEDBENCH" plot "$T/run" "$T/sweep" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_out "$T/run: 3 pictures (PNG and SVG)"
	expect_out "$T/sweep: 3 pictures (PNG and SVG)"
	python3 - "$T" <<'PY' || fail "pictures"
import os, sys
t = sys.argv[1]
for base in ("run/au", "run/latency", "run/timeline", "sweep/sweep_bandwidth_stripe_count",
             "sweep/sweep_bars", "sweep/sweep_latency"):
    for ext, magic in ((".png", b"\x89PNG"), (".svg", b"<svg")):
        p = os.path.join(t, base + ext)
        if not os.path.isfile(p) or magic not in open(p, "rb").read(4096):
            sys.exit("missing or not a picture: " + p)
PY
	grep -qF '![Accelerator utilisation per epoch](au.png)' "$T/run/report.md" ||
		fail "run report.md does not embed au.png"
	grep -qF '(sweep_bars.png)' "$T/sweep/report.md" ||
		fail "sweep report.md does not embed sweep_bars.png"
	# A broken script is a failure with gnuplot's own message, not a silent gap.
	mkdir "$T/gp"
	cp "$SRC"/plot/*.gp "$T/gp/"
	echo 'plot nosuchfunction(x)' >"$T/gp/au.gp"
	FEEDBENCH_PLOT_DIR=$T/gp "$FEEDBENCH" plot "$T/run" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 1
	expect_err "gnuplot au.gp failed"
	# Not a results folder: a usage error.
	mkdir "$T/empty"
	"$FEEDBENCH" plot "$T/empty" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 2
	expect_err "neither a run folder (summary.json) nor a sweep folder"
	;;
*)
	fail "unknown case"
	;;
esac
exit 0
