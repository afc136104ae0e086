#!/bin/bash
# [workload] type = metadata: real mpiexec runs on a temporary folder, checking the files and
# folders on disk, the exact operation and byte counts in summary.json, and failures.
#
# usage: metadata.sh CASE   (environment from tests/CMakeLists.txt: FEEDBENCH, MPIEXEC,
#                            FEEDBENCH_SOURCE_DIR)
set -u
CASE=$1
. "$(dirname "$0")/../lib.sh"
lib_init md
INI=${FEEDBENCH_SOURCE_DIR:?}/configs/workloads/mdtest.ini

fb() {
	fb_mpi 2 run "$INI" --set "dataset.data_dir=$T/data" --set "output.dir=$T/results" \
		--set metadata.files_per_rank=40 --set metadata.file_size=3000 "$@"
}

# check PHASES: every phase moved 2 x 40 operations; create and read 3000 bytes each
check() {
	python3 - "$T" "$1" <<'PY' || fail "summary.json does not match"
import glob, json, sys
t, phases = sys.argv[1], sys.argv[2].split(",")
s = json.load(open(glob.glob(t + "/results/*/summary.json")[0]))
assert s["workload_type"] == "metadata"
rows = s["metadata"]["results"]
assert [r["phase"] for r in rows] == phases, rows
for r in rows:
    assert r["operations"] == 80, r
    assert r["bytes"] == (80 * 3000 if r["phase"] in ("create", "read") else 0), r
    assert abs(r["rate_per_second"] - 80 / r["seconds"]) <= 1e-6 * r["rate_per_second"], r
    l = r["latency_seconds"]
    assert 0 < l["p50"] <= l["p99"] and l["max"] > 0, r
assert s["metadata"]["files"] == 80
PY
	# its own report.md and table.md: no '?' or nan, no file the folder lacks (tests/report)
	python3 "$FEEDBENCH_SOURCE_DIR/tests/report/check_folder.py" "$(dirname "$(ls "$T"/results/*/summary.json | head -1)")" ||
		fail "report.md or table.md"
}

case $CASE in
per_rank)
	fb --set metadata.keep_files=true
	[ "$RC" -eq 0 ] || fail "exit status $RC"
	check create,stat,read
	for r in 0 1; do
		[ "$(ls "$T/data/mdtest.$r" | wc -l)" -eq 40 ] || fail "mdtest.$r has not 40 files"
	done
	[ "$(stat -c %s "$T/data/mdtest.1/file.1.39")" -eq 3000 ] || fail "file size"
	;;
shared_removed)
	fb --set metadata.shared_dir=true
	[ "$RC" -eq 0 ] || fail "exit status $RC"
	check create,stat,read,remove
	[ -z "$(ls "$T/data")" ] || fail "left $(ls -R "$T/data")"
	;;
slow_rank)
	# mdtest's time: the slowest rank's, to the closing barrier. Every write lasts 5 ms, 10 ms
	# on rank 1 (a straggler): its 40 creates take at least 0.4 s, rank 0's at least 0.2 s.
	fb --set storage.backend=faulty --set storage.faulty.write_latency=5ms \
		--set storage.faulty.slow_rank=1
	[ "$RC" -eq 0 ] || fail "exit status $RC"
	check create,stat,read,remove
	python3 - "$T" <<'PY' || fail "the create phase is not timed by its slowest rank"
import glob, json, sys
s = json.load(open(glob.glob(sys.argv[1] + "/results/*/summary.json")[0]))
c = s["metadata"]["results"][0]
assert c["phase"] == "create", c
assert c["slowest_rank_seconds"] >= 0.4, c
assert c["fastest_rank_seconds"] >= 0.2, c
assert c["seconds"] >= c["slowest_rank_seconds"] >= c["fastest_rank_seconds"], c
assert c["rate_per_second"] <= 80 / 0.4, c
PY
	;;
create_fails)
	fb --set storage.backend=faulty --set storage.faulty.fail_op=open \
		--set storage.faulty.fail_nth=7 --set storage.faulty.fail_rank=1
	[ "$RC" -eq 1 ] || fail "exit status $RC, want 1"
	grep -q "cannot create '.*mdtest.1/file.1.6'" "$T/err" || fail "message names no file"
	;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
echo "ok ($CASE)"
