"""results.json, results.csv and checkpoints.csv of `feedbench mlperf run` of a checkpoint config
(docs/mlperf.md), against the invocations' own summary.json.

argv[1]: a one-invocation submission folder (run/); argv[2]: a --split one (write/, read/).
Each row's columns equal the figures of its invocation (DLIO's names: save_/load_checkpoint_*
are the mean write/read throughput in GiB/s and duration over the checkpoints); the
submission's row is rule 4.3.6's: the write columns from the invocations that wrote, the read
columns from those that read, the checkpoint counts summed; checkpoints.csv has one row per
checkpoint and invocation with the figures of summary.json's checkpoints[].
"""
import csv
import json
import sys

COLS = ["run", "invocation", "model", "scale", "num_processes", "num_hosts", "processes_per_host",
        "checkpoint_size_GiB", "num_checkpoints_write", "num_checkpoints_read",
        "save_checkpoint_io_mean_GB_per_second", "save_checkpoint_duration_mean_seconds",
        "load_checkpoint_io_mean_GB_per_second", "load_checkpoint_duration_mean_seconds",
        "recovery_duration_mean_seconds", "visible_after_seconds", "read_on_other_host"]
METRIC = {"save_checkpoint_io_mean_GB_per_second": "checkpoint_write_throughput_GiB_per_second",
          "save_checkpoint_duration_mean_seconds": "checkpoint_write_duration_seconds",
          "load_checkpoint_io_mean_GB_per_second": "checkpoint_read_throughput_GiB_per_second",
          "load_checkpoint_duration_mean_seconds": "checkpoint_read_duration_seconds",
          "recovery_duration_mean_seconds": "checkpoint_recovery_seconds",
          "visible_after_seconds": "checkpoint_visible_after_seconds"}
TABLE = ["write_duration_seconds", "write_throughput_GiB_per_second", "read_duration_seconds",
         "read_throughput_GiB_per_second", "recovery_seconds"]


def close(a, b):
    return abs(float(a) - float(b)) <= 1e-5 * max(1e-12, abs(float(b)))


def check(sub, folders):
    s = {f: json.load(open(f"{sub}/{f}/summary.json")) for f in folders}
    res = json.load(open(f"{sub}/results.json"))
    rows = list(csv.DictReader(open(f"{sub}/results.csv")))
    assert list(rows[0].keys()) == COLS, list(rows[0].keys())
    assert [r["run"] for r in rows] == folders + ["submission"], [r["run"] for r in rows]
    assert res["benchmark"] == "checkpointing" and [r["run"] for r in res["runs"]] == folders
    for r, j in zip(rows, res["runs"]):
        x = s[r["run"]]
        ph, m = x["checkpoint"]["phases"], x["metric"]
        assert r["invocation"] == j["invocation"] == ph["invocation"], r
        assert r["model"] == "none" and int(r["num_processes"]) == x["num_ranks"] == 2, r
        assert int(r["num_hosts"]) == ph["hosts"] and int(r["processes_per_host"]) == 2, r
        assert close(r["checkpoint_size_GiB"], m["checkpoint_size_bytes"] / 2**30), r
        for k, mk in METRIC.items():
            if m.get(mk) is None:  # not this invocation's phase: blank, never 0
                assert r[k] == "" and j[k] is None, (k, r[k], j[k])
            else:
                assert close(r[k], m[mk]) and j[k] == m[mk], (k, r[k], j[k], m[mk])
    su = rows[-1]
    wr = [r for r in rows[:-1] if int(r["num_checkpoints_write"]) > 0]
    rd = [r for r in rows[:-1] if int(r["num_checkpoints_read"]) > 0]
    assert su["num_checkpoints_write"] == "10" and su["num_checkpoints_read"] == "10", su
    for k in ("save_checkpoint_io_mean_GB_per_second", "save_checkpoint_duration_mean_seconds"):
        assert su[k] == wr[0][k] and res["submission"][k] == res["runs"][rows.index(wr[0])][k], k
    for k in ("load_checkpoint_io_mean_GB_per_second", "load_checkpoint_duration_mean_seconds"):
        assert su[k] == rd[0][k], (k, su[k], rd[0][k])
    pub = res["published"]
    assert pub["Write B/W (GiB/s)"] == res["submission"]["save_checkpoint_io_mean_GB_per_second"]
    assert pub["Read Duration (secs)"] == res["submission"]["load_checkpoint_duration_mean_seconds"]
    table = list(csv.DictReader(open(f"{sub}/checkpoints.csv")))
    want = [(f, c) for f in folders for c in s[f]["checkpoints"]]
    assert len(table) == len(want) == len(res["checkpoints"]) == 10 * len(folders), len(table)
    for t, (f, c) in zip(table, want):
        assert t["run"] == f and int(t["step"]) == c["step"], (t, f, c["step"])
        for k in TABLE:
            assert (t[k] == "") if c.get(k) is None else close(t[k], c[k]), (k, t[k], c.get(k))


check(sys.argv[1], ["run"])
check(sys.argv[2], ["write", "read"])
