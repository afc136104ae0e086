"""Checks of tests/checkpoint/checkpoint.sh: evaluates one Python expression with
s = summary.json (None when there is none), ck = the checkpoint folder, and the helpers below.

usage: check_checkpoint.py SUMMARY|'' CHECKPOINT_FOLDER EXPRESSION
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
from check_summary import timing_failures  # noqa: E402


def meta(ck, step):
    with open(os.path.join(ck, "step-%d" % step, ".metadata")) as f:
        return json.load(f)


def shards_before_metadata(d):
    """.metadata is written last: its change time is not before any shard's."""
    m = os.stat(os.path.join(d, ".metadata")).st_ctime_ns
    for name in os.listdir(d):
        if name != ".metadata":
            assert os.stat(os.path.join(d, name)).st_mtime_ns <= m, (name, "after .metadata")
    return True


def namespace_ok(s, ops, folder_fsyncs, creates=None):
    """The checkpoints' namespace calls went through the io_* wrappers: counted exactly, and
    timed (each call takes some time, and all of them together less than the run)."""
    x = s["metric"]
    assert x["checkpoint_namespace_ops"] == ops, (x["checkpoint_namespace_ops"], ops)
    assert x["checkpoint_folder_fsync_calls"] == folder_fsyncs, (
        x["checkpoint_folder_fsync_calls"], folder_fsyncs)
    assert x["checkpoint_namespace_seconds"] > 0, x
    assert x["checkpoint_folder_fsync_seconds"] > 0, x
    if creates is not None:
        assert x["checkpoint_create_calls"] == creates, (x["checkpoint_create_calls"], creates)
        assert x["checkpoint_create_seconds"] > 0, x
    return True


def timing_ok(s, wall):
    """summary.json "timing" as check_summary.py checks it; the start-up ends at the first
    write, so it and every checkpoint's slowest write and read fit in mpiexec's wall time."""
    own = sum(c.get("write_seconds", 0) + c.get("read_seconds", 0) for c in s["checkpoints"])
    bad = timing_failures(s, own, wall)
    assert not bad, bad
    return True


def dcp_ok(s, ck, steps, total, writers, count):
    assert sorted(os.listdir(ck)) == ["step-%d" % n for n in steps], os.listdir(ck)
    per_rank = s["checkpoint"]["bytes_per_rank"]
    assert sum(per_rank) == total, per_rank
    assert [r for r, b in enumerate(per_rank) if b] == writers, per_rank
    for n in steps:
        d = os.path.join(ck, "step-%d" % n)
        want = sorted(["__%d_0.distcp" % r for r in writers] + [".metadata"])
        assert sorted(os.listdir(d)) == want, (sorted(os.listdir(d)), want)
        for r in writers:
            size = os.path.getsize(os.path.join(d, "__%d_0.distcp" % r))
            assert size == per_rank[r], (r, size, per_rank[r])
        m = meta(ck, n)
        assert m["step"] == n and m["total_bytes"] == total and m["layout"] == "dcp", m
        assert [f["rank"] for f in m["files"]] == writers, m["files"]
        assert sum(f["bytes"] for f in m["files"]) == total
        shards_before_metadata(d)
    x = s["metric"]
    assert x["checkpoint_count"] == count, x
    assert x["checkpoint_size_bytes"] == total, x
    assert x["checkpoint_bytes_written"] == count * total, x
    assert x["checkpoint_bytes_read"] == count * total, x
    assert x["checkpoint_files"] == len(writers) + 1, x
    assert x["checkpoint_writing_ranks"] == len(writers), x
    assert x["checkpoint_restore_verified"] is True
    assert x["checkpoint_write_bandwidth_MiB_per_second"] > 0
    assert x["checkpoint_read_bandwidth_MiB_per_second"] > 0
    calls = count * sum(-(-per_rank[r] // 262144) for r in writers)  # 256 KiB transfers
    assert x["checkpoint_write_latency_seconds"]["calls"] == calls, (x, calls)
    assert x["checkpoint_read_latency_seconds"]["calls"] == calls, (x, calls)
    assert x["checkpoint_fsync_calls"] == count * len(writers), x
    # fresh folders: per checkpoint a stat (no old step folder), a mkdir and .metadata's
    # rename; the step folder's and the checkpoint folder's fsyncs
    namespace_ok(s, ops=3 * count, folder_fsyncs=2 * count, creates=count * len(writers))
    sk = x["checkpoint_write_seconds_per_rank"]
    assert 0 <= sk["min"] <= sk["mean"] <= sk["max"], sk
    # durable after every rank's bytes: not before the slowest rank's write ended
    for c in s["checkpoints"]:
        assert c["time_to_durable_seconds"] >= c["write_seconds"], c
    return True


def single_ok(s, ck, total):
    d = os.path.join(ck, "step-1")
    assert sorted(os.listdir(d)) == [".metadata", "checkpoint.bin"], os.listdir(d)
    assert os.path.getsize(os.path.join(d, "checkpoint.bin")) == total
    m = meta(ck, 1)
    assert m["layout"] == "single"
    offs = [(f["offset"], f["bytes"]) for f in m["files"]]
    pos = 0
    for off, n in offs:
        assert off == pos, offs
        pos += n
    assert pos == total, offs
    shards_before_metadata(d)
    x = s["metric"]
    assert x["checkpoint_bytes_written"] == total and x["checkpoint_bytes_read"] == total, x
    assert x["checkpoint_files"] == 2, x
    # rank 0 creates the shared file (with its layout); the others open it
    namespace_ok(s, ops=3, folder_fsyncs=2, creates=1)
    return True


def killed_ok(ck, total):
    steps = sorted(os.listdir(ck))
    assert steps, "no checkpoint at all"
    complete = 0
    for name in steps:
        d = os.path.join(ck, name)
        files = os.listdir(d)
        if ".metadata" not in files:
            continue
        m = json.load(open(os.path.join(d, ".metadata")))
        for f in m["files"]:
            p = os.path.join(d, f["file"])
            assert os.path.getsize(p) == f["bytes"], (p, os.path.getsize(p), f["bytes"])
        assert sum(f["bytes"] for f in m["files"]) == total
        complete += 1
    assert complete >= 1, steps
    return True


def train_ok(s, ck, count, kept, total, mode):
    """Checkpoints inside training: count saved and durable, the last `kept` on disk and
    complete, the blocked time in the epochs' wall time, the fields consistent."""
    x = s["metric"]
    assert s["checkpoint"]["mode"] == mode, s["checkpoint"]
    assert x["checkpoint_count"] == count and s["checkpoint"]["saves"] == count, x
    assert x["checkpoint_bytes_written"] == count * total, x
    assert sorted(os.listdir(ck)) == ["step-%d" % n for n in kept], os.listdir(ck)
    for n in kept:
        d = os.path.join(ck, "step-%d" % n)
        assert sorted(os.listdir(d)) == [".metadata", "__0_0.distcp", "__1_0.distcp"], d
        m = meta(ck, n)
        assert m["step"] == n and m["total_bytes"] == total, m
        for f in m["files"]:
            assert os.path.getsize(os.path.join(d, f["file"])) == f["bytes"], f
        shards_before_metadata(d)
    # keep_last = 2: checkpoints 1 to 3 removed (6 calls and 2 folder fsyncs each)
    removed = max(0, count - len(kept))
    namespace_ok(s, ops=3 * count + 6 * removed, folder_fsyncs=2 * count + 2 * removed)
    # the write bandwidth is the bytes over the slowest ranks' writes (async: the writer's
    # own time, without the staging copy)
    w = x["checkpoint_write_seconds"]
    bw = x["checkpoint_write_bandwidth_MiB_per_second"]
    assert w > 0 and abs(bw * w * 1048576 - x["checkpoint_bytes_written"]) <= 1e-6 * x[
        "checkpoint_bytes_written"], (bw, w)
    b = x["checkpoint_blocked_seconds"]
    assert b > 0 and x["checkpoint_training_steps_lost"] > 0, x
    assert x["checkpoint_time_to_durable_seconds"] > 0, x
    # the time training stood still is inside the epochs' wall time (rank 0's, the blocked
    # time's): the checkpoints here cost more than the steps' computation
    walls = sum(e["wall_seconds"] for e in s["epochs"])
    if mode == "async":
        st, w, end = (x["checkpoint_staging_seconds"], x["checkpoint_wait_seconds"],
                      x["checkpoint_end_wait_seconds"])
        assert 0 < st < b and 0 <= w < b and 0 <= end <= b, x
        assert st + w + end <= b, x
        assert walls >= b - end, (walls, b, end)
    else:
        assert walls >= b, (walls, b)
    return True


def main():
    path, ck, expr = sys.argv[1], sys.argv[2], sys.argv[3]
    s = json.load(open(path)) if path else None
    env = dict(globals(), s=s, ck=ck, os=os)
    if not eval(expr, env):
        print("false: %s" % expr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
