"""Each checkpointing rule of `feedbench mlperf check` with a passing and a failing folder.

argv[1]: a real one-invocation run folder (10 writes, the flush, 10 reads); argv[2] and
argv[3]: a real write invocation and the read invocation after it; argv[4]: where to write the
cases. A case holds only each invocation's summary.json, edited: a CLOSED base (Llama 3 8B at
full size on 8 processes, 4 per host on 2 hosts, read on the other host), then one edit per
rule that breaks it. Each case asserts the exit status, the verdict and its rule's line.
"""
import copy
import json
import os
import subprocess
import sys

FB = os.environ["FEEDBENCH"]
BOTH, WRITE, READ, OUT = sys.argv[1:5]
load = lambda d: json.load(open(f"{d}/summary.json"))
real = {"both": [load(BOTH)], "split": [load(WRITE), load(READ)]}


def closed(kind):
    runs = copy.deepcopy(real[kind])
    for s in runs:
        s["config"]["checkpoint"]["num_parameters"] = 8030261248
        s["checkpoint"]["scale"] = 1
        s["num_ranks"] = 8
        ph = s["checkpoint"]["phases"]
        ph["hosts"], ph["ranks_per_host"], ph["ranks_per_host_max"] = 2, 4, 4
        if ph["num_checkpoints_read"]:
            ph["read_on_other_host"] = True
            ph["visible_after_seconds"] = 0.25
            # each rank of h1 read the shard of a rank of h2, and the other way round
            ph["reads"] = [{"rank": r, "host": "h%d" % (1 + r // 4), "shard_rank": (r + 4) % 8,
                            "shard_host": "h%d" % (2 - r // 4)} for r in range(8)]
    return runs


def check(name, runs, rc, verdict, line):
    dirs = []
    for i, s in enumerate(runs):
        d = f"{OUT}/{name}/inv-{i}"
        os.makedirs(d, exist_ok=True)
        json.dump(s, open(f"{d}/summary.json", "w"))
        dirs.append(d)
    r = subprocess.run([FB, "mlperf", "check", *dirs], capture_output=True, text=True)
    lines = r.stdout.splitlines()
    bad = []
    if r.returncode != rc:
        bad.append(f"exit {r.returncode}, expected {rc}")
    if not any(l.startswith("verdict: " + verdict) for l in lines):
        bad.append(f"verdict is not {verdict}")
    if not any(l.startswith(line) for l in lines):
        bad.append(f"no line starting {line!r}")
    if bad:
        sys.exit(f"case {name}: {'; '.join(bad)}\n{r.stdout}{r.stderr}")


def edited(kind, fn):
    runs = closed(kind)
    fn(runs)
    return runs


def ph(s):
    return s["checkpoint"]["phases"]


def shift_end(runs, seconds):
    # the write invocation ended `seconds` before the read invocation started
    import datetime as dt
    st = dt.datetime.strptime(runs[1]["start"], "%Y-%m-%dT%H:%M:%SZ")
    runs[0]["end"] = (st - dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def no_flush(runs):
    for n in ph(runs[-1])["flush"]["nodes"]:
        n.update(required=True, outcome="failed", reason="cannot write", files_evicted=0)


def subset70(runs):
    for s in runs:
        s["config"]["checkpoint"]["num_parameters"] = 69882617856
        s["checkpoint"]["subset"] = {"ranks": 8}


check("both", closed("both"), 0, "CLOSED", "PASS    2.1.23 checkpointingTimestamps: one invocation")
for rule in ("4.6.3 checkpointClosedCheckpointParameters", "4.3.2 checkpointFsyncVerification",
             "4.3.1 checkpointDataSizeRatio", "4.7.1 checkpointCacheFlushValidation",
             "4.3.3 checkpointModelConfigurationReq", "4.6.1 checkpointClosedMpiProcesses",
             "4.6.2 checkpointClosedAcceleratorsPerHost", "4.7.2 checkpointTotalTestDuration"):
    check("both-" + rule.split()[1], closed("both"), 0, "CLOSED", "PASS    " + rule)
check("split", closed("split"), 0, "CLOSED",
      "PASS    2.1.23 checkpointingTimestamps: a write invocation, then a read invocation")
check("split-gap", closed("split"), 0, "CLOSED",
      "PASS    4.7.1 checkpointCacheFlushValidation: the read invocation started")
check("three", closed("both") + closed("both"), 1, "INVALID",
      "INVALID 2.1.23 checkpointingTimestamps: 2 invocations (both, both)")
check("reversed", closed("split")[::-1], 1, "INVALID",
      "INVALID 2.1.23 checkpointingTimestamps: 2 invocations (read, write)")
check("counts", edited("both", lambda r: ph(r[0]).update(num_checkpoints_write=3,
                                                         num_checkpoints_read=3)),
      1, "OPEN", "OPEN    4.6.3 checkpointClosedCheckpointParameters: 3 writes and 3 reads")
check("fsync", edited("both", lambda r: ph(r[0]).update(fsync=False)), 1, "INVALID",
      "INVALID 4.3.2 checkpointFsyncVerification")
check("flush", edited("both", no_flush), 1, "INVALID",
      "INVALID 4.3.1 checkpointDataSizeRatio: host ")
check("late", edited("split", lambda r: shift_end(r, 60)), 1, "INVALID",
      "INVALID 4.7.1 checkpointCacheFlushValidation: the read invocation started 60 s after")
check("skew", edited("split", lambda r: shift_end(r, -5)), 0, "CLOSED",
      "NOTE    4.7.1 checkpointCacheFlushValidation: the read invocation started 5 s before")
check("model", edited("both", lambda r: r[0]["config"]["checkpoint"].update(num_parameters=1000003)),
      1, "INVALID", "INVALID 4.3.3 checkpointModelConfigurationReq: 1000003 parameters")
check("scale", edited("both", lambda r: r[0]["checkpoint"].update(scale=0.001)), 1, "INVALID",
      "INVALID 4.3.3 checkpointModelConfigurationReq: 8030261248 parameters written at scale 0.001")
check("processes", edited("both", lambda r: r[0].update(num_ranks=16)), 1, "INVALID",
      "INVALID 4.6.1 checkpointClosedMpiProcesses: llama3-8b on 16 processes")
check("subset", edited("both", subset70), 1, "INVALID",
      "INVALID 4.3.5 checkpointSubsetRunValidation: a subset run of llama3-70b")
check("per-host", edited("both", lambda r: ph(r[0]).update(ranks_per_host=2)), 1, "INVALID",
      "INVALID 4.6.2 checkpointClosedAcceleratorsPerHost: inv-0: 2 processes on a host")
check("same-host-read", edited("both", lambda r: ph(r[0])["reads"][5].update(shard_host="h2")),
      0, "CLOSED", "NOTE    4.7.1 checkpointCacheFlushValidation: rank 5 on h2 read the shard "
      "of rank 1, written on the same host")
check("same-host", edited("both", lambda r: ph(r[0]).update(read_on_other_host=False)), 0,
      "CLOSED", "NOTE    4.7.1 checkpointCacheFlushValidation: the reads ran on the hosts that wrote")
