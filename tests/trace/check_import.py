#!/usr/bin/env python3
"""Checks that an imported config reproduces the traced job (tests/trace/trace.sh import).

usage: check_import.py JOB.ini JOB.json RUN_DIR
JOB.json is job.py's line: what the job did, counted from its own trace. The config must say
what the job was (npy, 64 files, batch 8, 2 readers, shuffled, 2 epochs; compute and preprocess
at least the 5 ms and 1 ms the job slept and spun: lower bounds only, no timing threshold), and
feedbench's run of it (RUN_DIR/summary.json) must read the same bytes, with the same read calls,
and the same samples per epoch. Exit 1 with every failed check printed.
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
check(float(c.get("reader", "preprocess_time")) >= 0.001, "preprocess_time under the 1 ms spun")
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
print(f"import ok ({j['loader']} loader): {j['bytes_read']} bytes, {j['read_calls']} read calls, "
      f"{fb_epoch} samples per epoch; samples/s job {j['samples_per_second']:.0f}, "
      f"feedbench {m['train_samples_per_second']:.0f}")
