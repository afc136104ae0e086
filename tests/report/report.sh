#!/bin/bash
# report.md of run folders whose summary.json is older or damaged, rewritten by `feedbench plot`
# (no MPI, gnuplot left out so only report.md is at stake): it is written, shows no section or row
# for a field summary.json lacks, and never nan, inf or (null). tests/report/check_report.py
# compares report.md with summary.json (the eval and accelerators_per_rank tests run it on new
# runs).
#
# usage: report.sh CASE   (environment from tests/CMakeLists.txt: FEEDBENCH, FEEDBENCH_SOURCE_DIR)
set -u
CASE=$1
: "${FEEDBENCH_SOURCE_DIR:?FEEDBENCH_SOURCE_DIR not set}"
HERE=$FEEDBENCH_SOURCE_DIR/tests/report
. "$HERE/../lib.sh"
lib_init report

# plot DIR: feedbench plot without gnuplot: exit 1 (plots skipped), report.md rewritten
plot() {
	rm -f "$1/report.md"
	FEEDBENCH_GNUPLOT=/nonexistent/gnuplot "$FEEDBENCH" plot "$1" >"$T/out" 2>"$T/err"
	RC=$?
	[ "$RC" -eq 1 ] || fail "feedbench plot $1 exited $RC, want 1 (plots skipped)"
	grep -qF "plots skipped" "$T/err" || fail "no 'plots skipped' warning"
	[ -s "$1/report.md" ] || fail "no report.md in $1"
}

# edit DIR PYTHON: change DIR/summary.json (s) with a Python statement
edit() {
	python3 - "$1/summary.json" "$2" <<'PY' || fail "cannot edit $1/summary.json"
import json, sys
p = sys.argv[1]
s = json.load(open(p))
exec(sys.argv[2])
json.dump(s, open(p, "w"))
PY
}

# run_workload NAME INI: runs INI on 2 ranks into $T/res/NAME; RUN is its run folder.
run_workload() {
	printf '%s\n' "$2" >"$T/$1.ini"
	fb_mpi 2 run "$T/$1.ini" --quiet --set "dataset.data_dir=$T/data/$1" \
		--set "output.dir=$T/res/$1" --set output.plots=false
	[ "$RC" -eq 0 ] || fail "the $1 run exited $RC: $(tail -3 "$T/err")"
	RUN=$(dirname "$(find "$T/res/$1" -name summary.json)")
}

# check_workload NAME GREP...: the report of the run of NAME passes check_folder.py, says each
# GREP (fixed strings), and `feedbench plot` rewrites it byte for byte.
check_workload() {
	local name=$1 want
	shift
	python3 "$HERE/check_folder.py" "$RUN" 2>"$T/err" ||
		fail "$name: check_folder.py: $(head -3 "$T/err")"
	for want in "$@"; do
		grep -qF -- "$want" "$RUN/report.md" || fail "$name: report.md does not say: $want"
	done
	cp "$RUN/report.md" "$T/$name.report.md"
	plot "$RUN"
	cmp -s "$RUN/report.md" "$T/$name.report.md" ||
		fail "$name: feedbench plot wrote another report.md: $(diff "$T/$name.report.md" "$RUN/report.md" | head -5)"
}

# must_fail DIR WHAT: check_folder.py finds WHAT in DIR (a control: the checker can fail).
must_fail() {
	python3 "$HERE/check_folder.py" "$1" 2>"$T/err" && fail "check_folder.py missed: $2"
	grep -qF -- "$2" "$T/err" || fail "check_folder.py did not say '$2': $(cat "$T/err")"
}

R=$T/run
cp -r "$FEEDBENCH_SOURCE_DIR/tests/sweep/fixtures/run" "$R"
case $CASE in
workloads)
	# Every workload's run folder: report.md and table.md of its own, no '?' or nan, only
	# files the folder has, the same report.md from `feedbench plot`.
	run_workload train "[workload]
name = t
type = train
[dataset]
format = raw
num_files_train = 4
num_samples_per_file = 4
record_length_bytes = 4KiB
[reader]
batch_size = 2
read_threads = 1
[train]
epochs = 1
computation_time = 1ms"
	check_workload train "Verdict: **" "| trainer reads |" "### Per epoch"
	run_workload checkpoint "[workload]
name = c
type = checkpoint
[checkpoint]
num_parameters = 1000003
transfer_size = 256KiB
scale = 0.5
count = 2
checkpoint_every_steps = 100
[train]
computation_time = 2s"
	check_workload checkpoint "| time to durable |" "| restore (read) |" "| per-rank write time |" \
		"at this rate:" "% of training time" "too small to stand for the full one"
	run_workload ior "[workload]
name = i
type = ior
[ior]
block_size = 64KiB
transfer_size = 16KiB
segments = 2"
	check_workload ior "| write |" "| read  |" "### Per phase and iteration"
	run_workload metadata "[workload]
name = m
type = metadata
[metadata]
files_per_rank = 8"
	check_workload metadata "| create |" "| remove |"
	# The checker fails where a report has what this test guards against.
	C=$T/control
	cp -r "$RUN" "$C"
	rm "$C/table.md"
	must_fail "$C" "no table.md"
	cp -r "$RUN/table.md" "$C/"
	sed -i 's/^| create | /| create | ? /' "$C/report.md"
	must_fail "$C" "'?' as a value"
	cp "$RUN/report.md" "$C/report.md"
	sed -i 's/^| stat | .*/| stat | nan ops\/s |/' "$C/report.md"
	must_fail "$C" "shows 'nan'"
	cp "$RUN/report.md" "$C/report.md"
	sed -i 's/`table.md`/`table.md`, `latency.csv`/' "$C/report.md"
	must_fail "$C" "names latency.csv, which the folder lacks"
	python3 "$HERE/check_folder.py" "$RUN" || fail "check_folder.py on the untouched folder"
	;;
old_summary)
	# A summary.json from before the evaluation phase, accelerators_per_rank, binding and the
	# file table: report.md as before, none of their sections or rows.
	python3 -c "import json,sys; s=json.load(open(sys.argv[1])); sys.exit(any(k in s for k in
		('eval','accelerators','binding','file_table_max_bytes')))" "$R/summary.json" ||
		fail "the fixture is not an older summary.json"
	plot "$R"
	python3 "$HERE/check_report.py" "$R" 2>"$T/err" || fail "check_report.py"
	grep -qF "### Per epoch" "$R/report.md" || fail "no per-epoch table"
	# the checker fails where report.md lacks what summary.json has
	edit "$R" "s['file_table_max_bytes'] = 4096"
	python3 "$HERE/check_report.py" "$R" 2>"$T/err" && fail "check_report.py missed a file table"
	# ... and where report.md lacks the binding rows: written by plot, they pass
	edit "$R" "s.pop('file_table_max_bytes'); s['binding'] = {'trainer_reads': True,
		'trainer_read_batches': 3, 'cpus_per_rank': 2, 'cpu_list': '0-1',
		'ranks_sharing_cpus': 1, 'threads_per_rank': 3, 'readers_share_trainer_core': False}"
	python3 "$HERE/check_report.py" "$R" 2>"$T/err" && fail "check_report.py missed the binding"
	plot "$R"
	python3 "$HERE/check_report.py" "$R" 2>"$T/err" || fail "check_report.py: $(cat "$T/err")"
	grep -qF "| trainer reads | yes: 3 batches read by the trainer itself" "$R/report.md" ||
		fail "no trainer reads row"
	edit "$R" "s['binding']['trainer_read_batches'] = 4"
	python3 "$HERE/check_report.py" "$R" 2>"$T/err" && fail "check_report.py missed trainer_read_batches"
	;;
malformed)
	# The fields present with missing or wrongly typed members: rows say n/a or ?, no crash.
	edit "$R" "
s['eval'] = {'files': 'x', 'passes': [{}, 'x', {'repetition': 1, 'after_epoch': 2,
             'samples': 3, 'bytes_read': 12, 'samples_per_second': 'fast'}]}
s['accelerators'] = [{}, 7]
s['binding'] = {'read_threads_choice': 5, 'cpus_per_rank': 2}
s['file_table_max_bytes'] = 'big'
s['ranks'] = [{'file_table_bytes': None}]
s['num_accelerators'] = None"
	plot "$R"
	python3 - "$R/report.md" <<'PY' 2>"$T/err" || fail "report.md of a damaged summary.json"
import re, sys
md = open(sys.argv[1]).read()
for bad in ("nan", "inf", "(null)"):
    assert not re.search(r"(?<![\w.])" + re.escape(bad) + r"(?![\w.])", md, re.I), bad
assert "3 passes" in md, "pass count"
assert "| 1 | 2 | 3 | 12 | n/a |" in md, "the one complete pass row"
assert md.count("| n/a | n/a | n/a | n/a |") >= 3, "rows of missing members"
assert "### Per accelerator" in md and "n/a emulated accelerators" in md, "accelerators"
assert "| read threads |" not in md and "| file table" not in md, "rows of wrong types"
assert "| binding | 2 CPUs per rank" in md, "binding row"
PY
	;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
exit 0
