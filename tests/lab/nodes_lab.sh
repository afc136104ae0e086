#!/bin/bash
# Multi-host runs on the lab's two emulated hosts (labh1, labh2: their own hostnames, network
# namespaces and ceph-fuse clients), 2 ranks on each, launched by mpirun over TCP:
#  1. summary.json names the 2 nodes, their hosts and ranks (0,1 on labh1; 2,3 on labh2), the
#     local rank of each rank (GPU placement follows it), per-node bytes adding up to the total
#     and per-node bandwidth (tests/mpi/check_summary.py checks the arithmetic); table.md has
#     the per-node row; page_cache = evict evicts each shared file once per node (2 x files),
#     not once per rank;
#  2. MLPerf Storage checkpointing with the recovery on the other host, 1 rank on each
#     (tests/checkpoint/phases_lab.sh);
#  3. a host dying (every feedbench and orted process of labh2 killed mid-run) ends the job
#     non-zero, with a message naming labh2, well within the watchdog time.
# usage: nodes_lab.sh   (environment from tests/lab/tests.cmake: FEEDBENCH, FEEDBENCH_LAB_ID,
# FEEDBENCH_LAB_DIR). Exit 77 (SKIPPED) with the reason when the lab is not up.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_SH=$HERE/lab.sh
: "${FEEDBENCH:?FEEDBENCH not set}"
ID=${FEEDBENCH_LAB_ID:-main}
LAB=${FEEDBENCH_LAB_DIR:-/tmp/feedbench-lab-$ID}
export FEEDBENCH_LAB_ID=$ID FEEDBENCH_LAB_DIR=$LAB

fail() {
	echo "FAIL (nodes): $*" >&2
	exit 1
}

if ! st=$("$LAB_SH" status 2>&1); then
	if [ -f "$LAB/skip-reason" ]; then
		echo "SKIPPED: the lab cannot start here: $(cat "$LAB/skip-reason")"
		exit 77
	fi
	fail "the lab is not up: $st (did lab.up fail? see its output)"
fi

T=$(mktemp -d /tmp/fb_lab_nodes_XXXXXX)
D=fb-nodes-$$
trap '[ -n "${KEEP:-}" ] || rm -rf "$T" "$LAB/mnt/h1/$D"' EXIT

# config NAME EPOCHS COMPUTE: 8 shared raw files of 16 x 64 KiB on the lab's CephFS
config() {
	cat >"$T/$1.ini" <<EOF
[workload]
name = $1
[dataset]
data_dir = $LAB/cephfs/$D
format = raw
num_files_train = 8
num_samples_per_file = 16
record_length_bytes = 64KiB
file_access = shared
verify = true
[reader]
batch_size = 4
read_threads = 1
[storage]
page_cache = evict
[train]
epochs = $2
computation_time = $3
watchdog = 20s
[output]
dir = $T/results
plots = false
EOF
}

mpirun_lab() { # mpirun_lab CONFIG: 2 ranks on each emulated host
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		timeout 150 "$LAB_SH" mpirun -H labh1:2,labh2:2 -n 4 \
		-x OMPI_MCA_btl_vader_single_copy_mechanism=none \
		-x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM \
		"$FEEDBENCH" run "$1" --quiet
}

# 1. the run's nodes
config nodes 2 0
mpirun_lab "$T/nodes.ini" >"$T/out" 2>"$T/err" || {
	cat "$T/err" >&2
	fail "feedbench on 2 hosts exited $?"
}
run=$(find "$T/results" -mindepth 1 -maxdepth 1 -type d -name 'nodes-*' | head -1)
[ -n "$run" ] || fail "no run folder"
python3 "$HERE/../mpi/check_summary.py" "$run" --ranks 4 --nodes 2 --epochs 2 \
	--page-cache evict --evictions 16 || fail "summary.json is inconsistent ($run)"
python3 - "$run/summary.json" <<'EOF' || fail "hosts and ranks are not where mpirun put them"
import json, sys
s = json.load(open(sys.argv[1]))
want = [("labh1", [0, 1]), ("labh2", [2, 3])]
got = [(n["host"], n["ranks"]) for n in s["nodes"]]
assert got == want, f"nodes {got}, want {want}"
assert s["hosts"] == ["labh1", "labh2"], s["hosts"]
assert s["ranks_per_node"] == {"min": 2, "max": 2}, s["ranks_per_node"]
assert [r["local_rank"] for r in s["ranks"]] == [0, 1, 0, 1], [r["local_rank"] for r in s["ranks"]]
assert [r["host"] for r in s["ranks"]] == ["labh1", "labh1", "labh2", "labh2"]
EOF
grep -q '| bandwidth per node | 2 nodes: labh1 (2 ranks, ' "$run/table.md" ||
	fail "table.md has no per-node row for labh1 and labh2"

# MLPerf Storage checkpointing, each host reading the shards the other wrote
# (tests/checkpoint/phases_lab.sh: which shard each rank read, the time until the other host
# could, each host's flush, mlperf check).
bash "$HERE/../checkpoint/phases_lab.sh" "$T" || fail "checkpoint recovery on the other host"

# 3. labh2 dies mid-run: its ranks and its Open MPI daemon are killed (not its ceph-fuse,
# which later tests need); the job must end with a message naming the host.
config die 200 0.05
mpirun_lab "$T/die.ini" >"$T/out2" 2>"$T/err2" &
job=$!
for _ in $(seq 100); do
	# the run is under way once rank 0 has generated the dataset and started reading
	[ -f "$LAB/mnt/h1/$D/feedbench-manifest.json" ] && break
	sleep 0.2
done
sleep 2
killed=""
for p in $(ip netns pids "fblab-$ID-h2"); do
	case $(cat "/proc/$p/comm" 2>/dev/null) in
	feedbench | orted | prted) kill -KILL "$p" && killed="$killed $p" ;;
	esac
done
[ -n "$killed" ] || fail "no feedbench or orted process found on labh2"
t0=$(date +%s)
wait $job
rc=$?
t1=$(date +%s)
[ "$rc" -ne 0 ] || fail "the job went on after labh2 died (exit 0)"
[ $((t1 - t0)) -lt 60 ] || fail "the job took $((t1 - t0)) s to end after labh2 died"
grep -q "labh2" "$T/err2" "$T/out2" || {
	tail -20 "$T/err2" >&2
	fail "no message names the lost host labh2"
}
echo "labh2 killed (pids$killed): exit $rc after $((t1 - t0)) s; the message:"
grep -h "labh2" "$T/err2" "$T/out2" | head -3
exit 0
