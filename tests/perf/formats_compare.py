#!/usr/bin/env python3
"""A benchmark, not a test: the formats comparison of configs/sweeps/formats.ini, one run per
format of its [sweep] list, at the same bytes per epoch and computation_time = 0, scaled down by
the options below. Prints the "choose by data shape" table of docs/formats.md: samples/s,
opens/s, bytes on disk per sample, CPU s/GiB (decode included), CPU ms per sample and the
decoder's share of the readers' time.

  tests/perf/formats_compare.py [--feedbench build/feedbench] [--dir /tmp/feedbench-formats]
      [--ranks 2] [--files 8] [--samples 32] [--record 256KiB] [--epochs 3] [--formats a,b]

Each format's dataset goes in its own folder under --dir (kept: generate = auto reuses it),
so its size on disk is measured; page_cache = evict (formats.ini) reads from the storage.
"""
import argparse
import configparser
import glob
import json
import os
import subprocess
import sys

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def disk_bytes(folder):
    total = 0
    for root, _, files in os.walk(folder):
        for f in files:
            if f != "feedbench-manifest.json":
                total += os.path.getsize(os.path.join(root, f))
    return total


def run_one(a, ini_text, fmt, extra=()):
    d = os.path.join(a.dir, fmt)
    os.makedirs(d, exist_ok=True)
    ini = os.path.join(d, "formats.ini")
    with open(ini, "w") as f:
        f.write(ini_text)
    out = os.path.join(d, "out")
    sets = ["dataset.format=" + fmt, "dataset.data_dir=" + os.path.join(d, "data"),
            "dataset.num_files_train=%d" % a.files, "dataset.num_samples_per_file=%d" % a.samples,
            "dataset.record_length_bytes=" + a.record, "train.epochs=%d" % a.epochs,
            "dataset.verify=false", "output.plots=false"] + list(extra)
    args = [os.environ.get("MPIEXEC", "mpiexec"), "--oversubscribe", "-n", str(a.ranks),
            a.feedbench, "run", ini]
    for s in sets:
        args += ["--set", s]
    args += ["--output", out, "--quiet"]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0 and "page_cache" in p.stdout and not extra:
        # a format that cannot evict (zarr: a dataset file is a folder) runs from the cache
        r = run_one(a, ini_text, fmt, ["storage.page_cache=keep"])
        r["format"] = fmt + " (page_cache = keep)"
        return r
    if p.returncode != 0:
        return {"format": fmt, "error": p.stdout.strip().splitlines()[-1:]}
    s = json.load(open(sorted(glob.glob(os.path.join(out, "*", "summary.json")))[-1]))
    m = s["metric"]
    wall = sum(e["wall_seconds"] for e in s["epochs"])
    samples = m["train_samples"]
    cpu = m["train_cpu_user_seconds"] + m["train_cpu_system_seconds"]
    return {"format": fmt, "samples_per_s": samples / wall,
            "opens_per_s": sum(e["opens"] for e in s["epochs"]) / wall,
            "disk_per_sample": disk_bytes(os.path.join(d, "data")) / s["format"]["samples"],
            "read_per_sample": m["train_bytes_read"] / samples,
            "cpu_s_per_gib": m["train_cpu_seconds_per_GiB"], "cpu_ms_per_sample": 1e3 * cpu / samples,
            "decode_share": m.get("train_decode_share_of_reading"),
            "decode_ms": (m.get("train_decode_seconds_per_sample") or 0) * 1e3 or None,
            "decode_cpu_ms": (m.get("train_decode_cpu_seconds_per_sample") or 0) * 1e3 or None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--feedbench", default=os.path.join(SRC, "build", "feedbench"))
    ap.add_argument("--dir", default="/tmp/feedbench-formats")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--samples", type=int, default=32)
    ap.add_argument("--record", default="256KiB")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--formats", default="")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    cp = configparser.ConfigParser(inline_comment_prefixes=None, interpolation=None)
    cp.read(os.path.join(SRC, "configs", "sweeps", "formats.ini"))
    formats = [f.strip() for f in (a.formats or cp["sweep"]["dataset.format"]).split(",")]
    cp.remove_section("sweep")
    cp["output"]["repetitions"] = "1"
    text = "".join("[%s]\n%s\n" % (sec, "".join("%s = %s\n" % kv for kv in cp[sec].items()))
                   for sec in cp.sections())
    rows = [run_one(a, text, f) for f in formats]
    print("| format | samples/s | opens/s | bytes on disk / sample | bytes read / sample | "
          "CPU s/GiB | CPU ms/sample | decode ms/sample (CPU ms) | decode share |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if "error" in r:
            print("| %s | failed: %s |" % (r["format"], " ".join(r["error"])))
            continue
        print("| %s | %.0f | %.0f | %.0f | %.0f | %.2f | %.3f | %s | %s |" % (
            r["format"], r["samples_per_s"], r["opens_per_s"], r["disk_per_sample"],
            r["read_per_sample"], r["cpu_s_per_gib"], r["cpu_ms_per_sample"],
            "%.3f (%.3f)" % (r["decode_ms"], r["decode_cpu_ms"]) if r["decode_ms"] else "-",
            "%.0f %%" % (100 * r["decode_share"]) if r["decode_share"] else "-"))
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
