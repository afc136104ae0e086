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

R=$T/run
cp -r "$FEEDBENCH_SOURCE_DIR/tests/sweep/fixtures/run" "$R"
case $CASE in
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
