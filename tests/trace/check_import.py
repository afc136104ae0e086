#!/usr/bin/env python3
"""Checks that an imported config reproduces the traced job (tests/trace/trace.sh import).

usage: check_import.py JOB.ini JOB.json RUN_DIR
JOB.json is job.py's line: what the job did, counted from its own trace. The config must say
what the job was (npy, 64 files, batch 8, 2 readers, shuffled, 2 epochs; compute at least the
5 ms the job slept; preprocess_time between the 1 ms of CPU work the job does per sample and
2.5 x that: from the worker processes' CPU counters (PyTorch's DataLoader: collating and passing
batches are in it) or else the per-sample events' thread CPU time (tdur); the tracer's own work
is in it, the waits for a CPU are not, however loaded the machine; with worker processes,
host_time from the trainer's CPU counters, within 0-5 ms per step, and in feedbench's traced run
a "host" event of at least host_time before each step's compute), and feedbench's run of it (RUN_DIR/summary.json) must
read the same bytes, with the same read calls, and the same samples per epoch. Prints the
comparison table (samples/s are shown, not checked: they are timings). Exit 1 with every failed
check printed.
"""
import configparser
import json
import sys

ini, job, run = sys.argv[1:4]
c = configparser.ConfigParser(inline_comment_prefixes=None, comment_prefixes=(";",))
c.read(ini)
j = json.loads(open(job).read().strip().splitlines()[-1])
s = json.load(open(f"{run}/summary.json"))
m = s["metric"]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


want = {("dataset", "format"): "npy", ("dataset", "num_files_train"): "64",
        ("dataset", "num_samples_per_file"): "1", ("dataset", "record_length_bytes"): "32768",
        ("dataset", "generate"): "never", ("reader", "batch_size"): "8",
        ("reader", "read_threads"): "2", ("reader", "sample_shuffle"): "seed",
        ("train", "epochs"): "2"}
for (sec, key), val in want.items():
    got = c.get(sec, key, fallback=None)
    check(got == val, f"[{sec}] {key} = {got}, the job had {val}")
check(float(c.get("train", "computation_time")) >= 0.005, "computation_time under the 5 ms slept")
pre = float(c.get("reader", "preprocess_time"))
check(0.001 <= pre <= 0.0025, f"preprocess_time {pre * 1e3:.3f} ms, not within 1-2.5 ms of the 1 "
      "ms of CPU work the job does per sample")
text = open(ini).read()
host = float(c.get("train", "host_time"))
if j["loader"] == "torch":
    # worker processes: preprocess_time and host_time from their and the trainer's CPU counters
    check("the loader processes' CPU counters: 2 process(es)" in text,
          "preprocess_time not from the 2 loader processes' CPU counters")
    check("the trainer's CPU counters: 1 process(es)" in text,
          "host_time not from the trainer's CPU counters")
    check(0 < host <= 0.005, f"host_time {host * 1e3:.3f} ms, not within 0-5 ms (the trainer's "
          "Python per step: taking the batch from the workers, the loop, its tracer)")
else:
    check("the loader's CPU time per sample, their thread CPU time (tdur)" in text,
          "preprocess_time not from the trace's thread CPU time (tdur)")
# host_time in feedbench's run (traced): a "host" event before each step's compute, lasting at
# least host_time (wall time >= the CPU time spun), the compute after it, never overlapping
steps = {}
for line in open(f"{run}/trace.pfw"):
    if line.startswith("{") and '"cat":"train"' in line:
        e = json.loads(line.rstrip().rstrip(","))
        steps.setdefault(e["args"]["step"], {})[e["name"]] = e
hosts = [v for v in steps.values() if "host" in v]
check(host == 0 or len(hosts) == len(steps) > 0,
      f"{len(hosts)} host events in {len(steps)} steps of feedbench's trace")
for v in hosts:
    h, cmp = v["host"], v.get("compute", {"ts": 0})
    check(h["dur"] >= host * 1e6 - 0.01, f"a host event of {h['dur']} us, host_time {host} s")
    check(cmp["ts"] >= h["ts"] + h["dur"] - 0.01, f"compute at {cmp['ts']} inside host {h}")
check(m["train_bytes_read"] == j["bytes_read"],
      f"feedbench read {m['train_bytes_read']} bytes, the job {j['bytes_read']}")
check(m["train_read_ops"] == j["read_calls"],
      f"feedbench made {m['train_read_ops']} read calls, the job {j['read_calls']}")
fb_epoch = m["train_samples"] // len(s["epochs"])
check(fb_epoch == j["samples"] // j["epochs"],
      f"feedbench read {fb_epoch} samples per epoch, the job {j['samples'] // j['epochs']}")
if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(1)
print(f"import ok ({j['loader']} loader, preprocess_time {pre * 1e3:.3f} ms, "
      f"host_time {host * 1e3:.3f} ms)\n"
      "| | bytes read | read calls | samples per epoch | samples/s |\n|---|---|---|---|---|\n"
      f"| job | {j['bytes_read']} | {j['read_calls']} | {j['samples'] // j['epochs']} | "
      f"{j['samples_per_second']:.1f} |\n"
      f"| feedbench | {m['train_bytes_read']} | {m['train_read_ops']} | {fb_epoch} | "
      f"{m['train_samples_per_second']:.1f} |\n"
      f"feedbench / job samples/s: {m['train_samples_per_second'] / j['samples_per_second']:.3f}")
