#!/usr/bin/env python3
"""feedbench on the lab's radosgw from the two emulated hosts (the lab test lab.s3_train).

4 ranks, 2 on each host (labh1, labh2), with `backend = s3` and `data_dir =
s3://fblab/<tag>/...` on the lab's endpoint, the keys in the ranks' environment only:
  1. training reads, raw format, generated into the bucket and verified, shared files;
  2. the same dataset read again per rank: nothing generated, every sample verified;
  3. two checkpoints (DCP layout, 4 x 24 MiB objects: multipart uploads) written, restored
     and verified.
Each run is checked as a user sees it: exit status 0, summary.json's backend, hosts, samples
and bytes, the objects the bucket lists (ListObjectsV2, read with curl), and the secret key
in nothing the runs printed or wrote. Every object is deleted afterwards and rgw's garbage
collection run.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import s3_lab  # noqa: E402

KIB = 1024
FILES, SAMPLES, RECORD = 8, 16, 256 * KIB  # 32 MiB: 8 files of 16 samples of 256 KiB
CONFIG = """[workload]
name = s3_lab
[dataset]
data_dir = unused
format = raw
num_files_train = {files}
num_samples_per_file = {samples}
record_length_bytes = {record}
file_access = shared
verify = true
seed = 7
[reader]
batch_size = 4
read_threads = 2
prefetch_size = 2
[train]
epochs = 1
computation_time = 0
watchdog = 120s
[storage]
backend = s3
{s3}
request_timeout = 30s
[output]
dir = {out}
plots = false
"""
CKPT_MIB = 96  # 4 ranks x 24 MiB: each rank's object goes up as a multipart upload (8 MiB parts)
CHECKPOINT = """[workload]
name = s3_lab_checkpoint
type = checkpoint
[dataset]
data_dir = unused
seed = 7
[checkpoint]
model_size_bytes = {ckpt}MiB
zero_stage = 3
layout = dcp
count = 2
restore = true
verify = true
keep_last = 1
[storage]
backend = s3
{s3}
request_timeout = 30s
[output]
dir = {out}
plots = false
"""


def listing(lab_, prefix):
    """Keys and sizes under prefix (ListObjectsV2, every page)."""
    out, token = {}, None
    while True:
        q = {"list-type": "2", "prefix": prefix}
        if token:
            q["continuation-token"] = token
        query = "&".join(f"{k}={urllib.parse.quote(v, safe='')}" for k, v in sorted(q.items()))
        r = subprocess.run(["ip", "netns", "exec", f"{lab_.ns}-head", "curl", "-sS", "-f", "-K",
                            lab_.curl_conf, f"{lab_.endpoint}/{lab_.bucket}?{query}"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"ListObjectsV2 {prefix}: {r.stderr.strip()}")
        for key, size in re.findall(r"<Key>([^<]*)</Key>.*?<Size>(\d+)</Size>", r.stdout):
            out[key] = int(size)
        m = re.search(r"<NextContinuationToken>([^<]*)<", r.stdout)
        if "<IsTruncated>true" not in r.stdout or not m:
            return out
        token = m.group(1)


class Runs:
    def __init__(self, args):
        self.args = args
        self.lab = s3_lab.Lab()
        self.fails = []
        self.n = 0
        self.secret = self.lab.env["AWS_SECRET_ACCESS_KEY"]

    def fail(self, msg):
        print("FAIL: " + msg, file=sys.stderr)
        self.fails.append(msg)

    def run(self, what, sets, template=CONFIG):
        """feedbench run on 2 ranks x 2 hosts: (exit status, summary.json or None)."""
        self.n += 1
        cfg = os.path.join(self.args.work, f"s3_{self.n}.ini")
        out = os.path.join(self.args.work, f"results-{self.n}")
        with open(cfg, "w") as f:
            f.write(template.format(files=FILES, samples=SAMPLES, record=RECORD, ckpt=CKPT_MIB,
                                    s3=self.lab.s3_keys(), out=out))
        argv = [s3_lab.LAB_SH, "mpirun", "-H", "labh1:2,labh2:2", "-n", "4",
                "-x", "AWS_ACCESS_KEY_ID", "-x", "AWS_SECRET_ACCESS_KEY",
                self.args.feedbench, "run", cfg]
        for s in sets:
            argv += ["--set", s]
        r = subprocess.run(argv, env=self.lab.fb_env(), capture_output=True, text=True)
        log = os.path.join(self.args.work, f"run-{self.n}.log")
        with open(log, "w") as f:
            f.write(r.stdout + r.stderr)
        print(f"{what}: exit {r.returncode}")
        if r.returncode != 0:
            self.fail(f"{what}: exit {r.returncode}: {(r.stdout + r.stderr).strip()[-1500:]}")
            return r.returncode, None
        runs = [d for d in os.listdir(out)] if os.path.isdir(out) else []
        if len(runs) != 1:
            self.fail(f"{what}: {len(runs)} run folders in {out}")
            return r.returncode, None
        with open(os.path.join(out, runs[0], "summary.json")) as f:
            return 0, json.load(f)

    def expect(self, what, s, **want):
        """Checks summary.json members (dotted paths) against wanted values."""
        for path, v in want.items():
            cur = s
            for part in path.split("__"):
                cur = cur.get(part) if isinstance(cur, dict) else None
            if cur != v:
                self.fail(f"{what}: summary.json {path.replace('__', '.')} = {cur!r}, "
                          f"expected {v!r}")

    def no_secret(self):
        for root, _, files in os.walk(self.args.work):
            for name in files:
                p = os.path.join(root, name)
                with open(p, "rb") as f:
                    if self.secret.encode() in f.read():
                        self.fail(f"the secret key is written in {p}")


def check_objects(runs, prefix, files, size):
    objs = listing(runs.lab, prefix)
    data = {k: v for k, v in objs.items() if not os.path.basename(k).startswith("feedbench-")}
    if len(data) != files or any(v != size for v in data.values()):
        runs.fail(f"{prefix}: the bucket lists {len(data)} data objects "
                  f"({sorted(set(data.values()))} bytes), expected {files} of {size}")
    if not any(os.path.basename(k).startswith("feedbench-manifest") for k in objs):
        runs.fail(f"{prefix}: no manifest object ({sorted(objs)[:5]})")


def train_cases(runs, tag):
    data = f"dataset.data_dir=s3://{runs.lab.bucket}/{tag}/train"
    want = {"storage__backend": "s3", "hosts": ["labh1", "labh2"],
            "metric__train_samples": FILES * SAMPLES,
            "metric__train_bytes_read": FILES * SAMPLES * RECORD}
    rc, s = runs.run("training reads from 2 hosts x 2 ranks, shared files, generated", [data])
    if s:
        runs.expect("generated", s, storage__dataset_regenerated=True, **want)
        check_objects(runs, f"{tag}/train/", FILES, SAMPLES * RECORD)
    rc, s = runs.run("the same dataset read again (generate = never)",
                     [data, "dataset.generate=never"])
    if s:
        runs.expect("read again", s, storage__dataset_regenerated=False, **want)


def checkpoint_case(runs, tag):
    """Two DCP checkpoints of 96 MiB from 4 ranks on 2 hosts, written (multipart) and restored
    with verification; the step's objects (one per rank and .metadata) as the bucket lists
    them."""
    folder = f"{tag}/ckpt"
    rc, s = runs.run("checkpoint: 2 x 96 MiB (DCP), 4 ranks on 2 hosts, restored and verified",
                     [f"dataset.data_dir=s3://{runs.lab.bucket}/{tag}/data",
                      f"checkpoint.folder=s3://{runs.lab.bucket}/{folder}"], CHECKPOINT)
    if not s:
        return
    size = s["metric"]["checkpoint_size_bytes"]
    runs.expect("checkpoint", s, storage__backend="s3", num_nodes=2, num_ranks=4,
                metric__checkpoint_count=2, metric__checkpoint_restore_verified=True,
                metric__checkpoint_bytes_written=2 * size)
    objs = listing(runs.lab, folder + "/")
    last = {k: v for k, v in objs.items() if k.startswith(f"{folder}/step-2/")}
    if set(objs) != set(last):  # keep_last = 1: step-1's objects deleted
        runs.fail(f"checkpoint: keep_last = 1 left {sorted(set(objs) - set(last))[:5]}")
    shards = [k for k in last if k.endswith(".distcp")]
    if len(shards) != 4 or f"{folder}/step-2/.metadata" not in last or \
            sum(last[k] for k in shards) != size:
        runs.fail(f"checkpoint step-2: {sorted(last)} ({sum(last[k] for k in shards)} bytes "
                  f"in shards), expected 4 .distcp objects of {size} bytes in all and .metadata")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--feedbench", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--tag", default=f"fb-s3train-{os.getpid()}")
    args = ap.parse_args()
    runs = Runs(args)
    try:
        train_cases(runs, args.tag)
        checkpoint_case(runs, args.tag)
    finally:
        keys = list(listing(runs.lab, args.tag + "/"))
        runs.lab.delete(keys)
        runs.lab.gc()
    runs.no_secret()
    print(f"{len(runs.fails)} failures" if runs.fails else "ok: feedbench on radosgw")
    return 1 if runs.fails else 0


if __name__ == "__main__":
    sys.exit(main())
