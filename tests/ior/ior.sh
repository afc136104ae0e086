#!/bin/bash
# [workload] type = ior: real mpiexec runs on a temporary folder, checking the files on disk,
# the exact bytes and calls in summary.json, and the failure a user sees.
#
# usage: ior.sh CASE   (environment from tests/CMakeLists.txt: FEEDBENCH, MPIEXEC,
#                       FEEDBENCH_SOURCE_DIR)
set -u
CASE=$1
. "$(dirname "$0")/../lib.sh"
lib_init ior
cat >"$T/ior.ini" <<'INI'
[workload]
name = ior-test
type = ior
[ior]
block_size = 256KiB
transfer_size = 64KiB
segments = 3
INI

# fb NRANKS [--set ...]
fb() {
	local n=$1
	shift
	fb_mpi "$n" run "$T/ior.ini" --set "dataset.data_dir=$T/data" \
		--set "output.dir=$T/results" "$@"
}

# check NRANKS FILES: bytes and calls of both phases, files listed in summary.json
check() {
	python3 - "$T" "$1" "$2" <<'PY' || fail "summary.json does not match"
import glob, json, sys
t, n, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = json.load(open(glob.glob(t + "/results/*/summary.json")[0]))
want = n * 3 * 256 * 1024
assert s["workload_type"] == "ior", s["workload_type"]
assert s["metric"]["ior_bytes_written"] == want, s["metric"]
assert s["metric"]["ior_bytes_read"] == want, s["metric"]
rows = s["ior"]["results"]
assert [r["access"] for r in rows] == ["write", "read"], rows
for r in rows:
    assert r["bytes"] == want and r["calls"] == want // 65536, r
    assert r["total_seconds"] >= r["wr_rd_seconds"] > 0, r
    assert abs(r["bw_MiB_per_second"] - want / 1048576 / r["total_seconds"]) < 1e-6 * r["bw_MiB_per_second"], r
    # IOR's columns (ReduceIterResults): first start to last stop over ranks, all from the start
    # barrier; so total is the slowest rank's, each part at least the slowest rank's own;
    # IOPS over wr/rd, not total
    eq = lambda a, b: abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-9)
    assert eq(r["total_seconds"], r["slowest_rank_total_seconds"]), r
    assert eq(r["open_seconds"], r["slowest_rank_open_seconds"]), r
    for c in ("wr_rd", "close"):
        assert r[c + "_seconds"] >= r["slowest_rank_" + c + "_seconds"] * (1 - 1e-9), (c, r)
    assert r["open_seconds"] + r["wr_rd_seconds"] + r["close_seconds"] >= r["total_seconds"] * (1 - 1e-9), r
    assert eq(r["iops"], r["calls"] / r["wr_rd_seconds"]), r
    assert 0 < r["ior_latency_seconds"] <= r["slowest_rank_wr_rd_seconds"] / (r["calls"] / n) * (1 + 1e-9), r
assert s["ior"]["files"] == files
assert s["repetitions"][0]["bandwidth_MiB_per_second"] == rows[1]["bw_MiB_per_second"]
PY
	# its own report.md and table.md: no '?' or nan, no file the folder lacks (tests/report)
	python3 "$FEEDBENCH_SOURCE_DIR/tests/report/check_folder.py" "$(dirname "$(ls "$T"/results/*/summary.json | head -1)")" ||
		fail "report.md or table.md"
}

case $CASE in
shared)
	fb 2 --set ior.keep_files=true
	[ "$RC" -eq 0 ] || fail "exit status $RC"
	check 2 1
	[ "$(stat -c %s "$T/data/ior_testfile")" -eq $((2 * 3 * 262144)) ] || fail "shared file size"
	grep -q "| write |" "$T/out" || fail "no IOR table printed"
	;;
fpp_random)
	fb 2 --set ior.file_per_process=true --set ior.random=true --set ior.keep_files=true
	[ "$RC" -eq 0 ] || fail "exit status $RC"
	check 2 2
	for r in 00000000 00000001; do
		[ "$(stat -c %s "$T/data/ior_testfile.$r")" -eq $((3 * 262144)) ] || fail "file $r size"
	done
	;;
removed)
	fb 2 --set ior.file_per_process=true
	[ "$RC" -eq 0 ] || fail "exit status $RC"
	[ -z "$(ls "$T/data")" ] || fail "keep_files = false left $(ls "$T/data")"
	;;
mpiio_shared)
	fb 2 --set storage.backend=mpiio --set ior.keep_files=true
	[ "$RC" -eq 0 ] || fail "exit status $RC"
	check 2 1
	;;
mpiio_collective)
	# collective transfers: exact bytes both ways, every byte read back checked (verify)
	fb 2 --set storage.backend=mpiio --set storage.mpiio.collective=true \
		--set ior.random=true --set ior.keep_files=true
	[ "$RC" -eq 0 ] || fail "exit status $RC"
	check 2 1
	python3 - "$T" <<'PY' || fail "summary.json does not say collective"
import glob, json, sys
s = json.load(open(glob.glob(sys.argv[1] + "/results/*/summary.json")[0]))
assert s["ior"]["transfers"] == "collective", s["ior"]
PY
	[ "$(stat -c %s "$T/data/ior_testfile")" -eq $((2 * 3 * 262144)) ] || fail "shared file size"
	grep -q "collective transfers" "$T/out" || fail "table does not say collective"
	# verify really checks: flip one byte of the file and read it back only
	printf '\xff' | dd of="$T/data/ior_testfile" bs=1 seek=300000 conv=notrunc status=none
	rm -rf "$T/results"
	fb 2 --set storage.backend=mpiio --set storage.mpiio.collective=true \
		--set ior.write=false --set ior.keep_files=true
	[ "$RC" -eq 1 ] || fail "corrupted byte: exit status $RC, want 1"
	grep -q "ior_testfile' byte at offset 300000" "$T/err" || fail "verify names no offset"
	;;
compare)
	# ior write/read bandwidths are rows of the metric table: compare reads them by name
	for d in a b; do
		fb 2 --set ior.file_per_process=true --set output.repetitions=2 \
			--set "output.dir=$T/$d"
		[ "$RC" -eq 0 ] || fail "run $d: exit status $RC"
	done
	"$FEEDBENCH" compare "$T"/a/* "$T"/b/* --metric write_bandwidth,read_bandwidth \
		--json "$T/cmp.json" >"$T/out" 2>"$T/err"
	RC=$?
	[ "$RC" -eq 0 ] || [ "$RC" -eq 1 ] || [ "$RC" -eq 4 ] || fail "compare exit status $RC"
	python3 - "$T" <<'PY' || fail "compare.json lacks the ior rows"
import glob, json, sys
t = sys.argv[1]
c = json.load(open(t + "/cmp.json"))
rows = {r["metric"]: r for r in c["comparisons"]}
assert set(rows) == {"write_bandwidth", "read_bandwidth"}, rows.keys()
for side in "ab":
    s = json.load(open(glob.glob(t + "/" + side + "/*/summary.json")[0]))
    got = rows["write_bandwidth"]["baseline" if side == "a" else "current"]["values"]
    want = [r["bw_MiB_per_second"] for r in s["ior"]["results"] if r["access"] == "write"]
    assert len(got) == 2 and all(abs(g - w) <= 1e-6 * w for g, w in zip(got, want)), (got, want)
PY
	grep -q "^write_bandwidth" "$T/out" || fail "compare table has no write_bandwidth row"
	;;
collective_posix)
	fb 1 --set storage.mpiio.collective=true
	[ "$RC" -eq 2 ] || fail "exit status $RC, want 2"
	grep -q "collective = true needs \[storage\] backend = mpiio" "$T/err" || fail "message"
	;;
enospc)
	fb 2 --set storage.backend=faulty --set storage.faulty.fail_op=write \
		--set storage.faulty.fail_nth=5 --set storage.faulty.fail_rank=1 \
		--set storage.faulty.fail_errno=ENOSPC
	[ "$RC" -eq 1 ] || fail "exit status $RC, want 1"
	grep -q "cannot write '.*ior_testfile' at offset" "$T/err" || fail "message names no file"
	[ -z "$(ls "$T/results" 2>/dev/null)" ] || fail "a failed run left results"
	;;
collective_enospc)
	# a collective write failing on one rank (faulty over mpiio): that rank still joins the
	# others' collective calls (and the collective sync), so every rank leaves together
	# (exit 1, not a hang until the ctest timeout) with one message naming the file, the
	# offset and the errno, and no results
	fb 2 --set storage.backend=faulty --set storage.faulty.inner=mpiio \
		--set storage.mpiio.collective=true --set storage.faulty.fail_op=write \
		--set storage.faulty.fail_nth=3 --set storage.faulty.fail_rank=1 \
		--set storage.faulty.fail_errno=ENOSPC --set train.watchdog=0
	[ "$RC" -eq 1 ] || fail "exit status $RC, want 1"
	[ "$(grep -c "rank 1: cannot write '.*ior_testfile' at offset [0-9]* collectively: No space left on device" "$T/err")" -eq 1 ] ||
		fail "not one message naming file, offset and errno"
	[ -z "$(ls "$T/results" 2>/dev/null)" ] || fail "a failed run left results"
	# the same through faulty over posix, which has no collective transfers: refused before
	# the shared file is created (exit 2), naming where collective = true was set
	rm -rf "$T/data" "$T/results"
	fb 2 --set storage.backend=faulty --set storage.mpiio.collective=true
	[ "$RC" -eq 2 ] || fail "faulty over posix: exit status $RC, want 2"
	[ "$(grep -c "ior.ini (--set storage.mpiio.collective): \[storage.mpiio\] collective = true needs a back-end with collective transfers (mpiio): backend = faulty moves its bytes through back-end 'posix', which has none" "$T/err")" -eq 1 ] ||
		fail "faulty over posix: not one message naming the key and the back-ends"
	[ ! -e "$T/data" ] && [ ! -e "$T/results" ] || fail "faulty over posix: files were created"
	;;
shipped_config)
	# configs/workloads/ior.ini scaled down: same pattern, smaller blocks
	"$MPIEXEC" --oversubscribe -n 2 "$FEEDBENCH" run \
		"${FEEDBENCH_SOURCE_DIR:?}/configs/workloads/ior.ini" --set "dataset.data_dir=$T/data" \
		--set "output.dir=$T/results" --set ior.block_size=256KiB --set ior.transfer_size=64KiB \
		--set ior.segments=3 >"$T/out" 2>"$T/err"
	RC=$?
	[ "$RC" -eq 0 ] || fail "exit status $RC"
	check 2 1
	;;
shared_repeated)
	# One shared file on posix, three repetitions with verify, five times: every rank
	# creating the file truncated what a faster rank had already written (0x00 read back).
	for i in 1 2 3 4 5; do
		rm -rf "$T/results"
		"$MPIEXEC" --oversubscribe -n 2 "$FEEDBENCH" run \
			"${FEEDBENCH_SOURCE_DIR:?}/configs/workloads/ior.ini" \
			--set "dataset.data_dir=$T/data" --set "output.dir=$T/results" \
			--set ior.block_size=256KiB --set ior.transfer_size=64KiB --set ior.segments=3 \
			--set ior.verify=true --set output.repetitions=3 >"$T/out" 2>"$T/err"
		RC=$?
		[ "$RC" -eq 0 ] || fail "run $i: exit status $RC: $(grep error "$T/err" | head -1)"
	done
	;;
pattern)
	# The data on disk: every 4 KiB page starts with its own stamp and holds the rank's page
	# pattern after it; verify finds a page moved within the same rank's data by its stamp.
	# One rank without mpiexec (a singleton): mpiexec's teardown after a failed rank costs 2 s.
	fb1() {
		"$FEEDBENCH" run "$T/ior.ini" --set "dataset.data_dir=$T/data" \
			--set "output.dir=$T/results" "$@" >"$T/out" 2>"$T/err"
		RC=$?
	}
	fb1 --set ior.read=false --set ior.keep_files=true
	[ "$RC" -eq 0 ] || fail "write: exit status $RC"
	python3 - "$T/data/ior_testfile" <<'PY' || fail "pages are not stamp + page pattern"
import sys
d = open(sys.argv[1], "rb").read()
pages = [d[i:i + 4096] for i in range(0, len(d), 4096)]
assert len(pages) == 3 * 64, len(pages)
assert len({p[:8] for p in pages}) == len(pages), "stamps repeat"
assert len({p[8:] for p in pages}) == 1, "page patterns differ"
open(sys.argv[1], "r+b").write(pages[0] + pages[2] + pages[1])  # pages 1 and 2 swapped
PY
	fb1 --set ior.write=false --set ior.keep_files=true
	[ "$RC" -eq 1 ] || fail "swapped pages: exit status $RC, want 1"
	grep -Eq "ior_testfile' byte at offset (409[6-9]|410[0-3]) is 0x[0-9a-f]{2}, rank 0 wrote" "$T/err" ||
		fail "swapped pages: no message naming offset 4096-4103: $(cat "$T/err")"
	;;
bad_transfer)
	fb 1 --set ior.transfer_size=100KiB
	[ "$RC" -eq 2 ] || fail "exit status $RC, want 2"
	grep -q "transfer_size (102400) must divide block_size (262144)" "$T/err" || fail "message"
	;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
echo "ok ($CASE)"
