#!/usr/bin/env python3
"""Every format, shared and per-rank, on the lab's CephFS from two emulated hosts.

Tiny verified runs (2 ranks, one per host, each host through its own ceph-fuse client): the
dataset folder carries a CephFS layout (stripe_count 2, 64 KiB stripes), every data file
must read back that layout (also those a library creates and names itself, such as HDF5's),
and every byte must verify. hdf5 collective and raw over collective MPI-IO run too: Open MPI
has no CephFS driver, so they go through ROMIO's/OMPIO's UFS driver on the mount.
"""
import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stripe_lab  # noqa: E402

CASES = [
    # name, format, access, extra config lines
    ("raw-per_rank", "raw", "per_rank", ""),
    ("raw-shared", "raw", "shared", ""),
    ("raw-shared-mpiio-collective", "raw", "shared",
     "[storage]\nbackend = mpiio\n[storage.mpiio]\ncollective = true\n"),
    ("npy-per_rank", "npy", "per_rank", ""),
    ("npz-per_rank", "npz", "per_rank", ""),
    ("npz-shared", "npz", "shared", ""),
    ("wds-per_rank", "wds", "per_rank", ""),
    ("wds-shared", "wds", "shared", ""),
    ("tfrecord-per_rank", "tfrecord", "per_rank", ""),
    ("tfrecord-shared", "tfrecord", "shared", ""),
    ("hdf5-per_rank", "hdf5", "per_rank", ""),
    ("hdf5-shared", "hdf5", "shared", ""),
    ("hdf5-shared-collective", "hdf5", "shared", "[format.hdf5]\ntransfer = collective\n"),
]

CONFIG = """[workload]
name = {name}
[dataset]
data_dir = {data}
format = {fmt}
num_files_train = 4
num_samples_per_file = 8
record_length_bytes = 16KiB
file_access = {access}
verify = true
[reader]
batch_size = 2
read_threads = 2
[train]
epochs = 1
computation_time = 0
[output]
dir = {out}
plots = false
{extra}"""


def merge(text):
    """Later sections with the same name extend earlier ones (INI has one of each)."""
    sections, order = {}, []
    cur = None
    for line in text.splitlines():
        if line.startswith("["):
            cur = line.strip()
            if cur not in sections:
                sections[cur] = []
                order.append(cur)
        elif line.strip() and cur:
            sections[cur].append(line)
    return "".join(s + "\n" + "\n".join(sections[s]) + "\n" for s in order)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--feedbench", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--tag", default=f"fb-formats-{os.getpid()}")
    a = ap.parse_args()
    a.ranks_per_host = 1
    lab = stripe_lab.Lab(a)
    failures = []
    for name, fmt, access, extra in CASES:
        rel = f"{a.tag}/{name}"
        local = os.path.join(lab.local, rel)
        stripe_lab.set_dir_layout(local, 2, 65536, 65536)
        cfg = merge(CONFIG.format(name=name, data=os.path.join(lab.common, rel), fmt=fmt,
                                  access=access, out=os.path.join(a.work, "results"),
                                  extra=extra))
        try:
            s = lab.run(cfg, name, 2)
        except SystemExit as e:
            failures.append(f"{name}: {e}")
            print(f"FAIL {name}: {e}", file=sys.stderr)
            continue
        files = stripe_lab.data_files(local)
        lays = {f: stripe_lab.layout(f) for f in files}
        bad = {os.path.basename(f): l for f, l in lays.items() if l["stripe_count"] != 2
               or l["stripe_unit"] != 65536}
        hosts = sorted({r["host"] for r in s["ranks"]})
        samples = s["metric"]["train_samples"]
        ok = not bad and hosts == ["labh1", "labh2"] and samples == 32 and files
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {len(files)} files, layout "
              f"{next(iter(lays.values())) if lays else '-'}, ranks on {hosts}, "
              f"{samples} samples verified, {s['metric']['train_bandwidth_MiB_per_second']:.1f}"
              f" MiB/s")
        if not ok:
            failures.append(f"{name}: files {len(files)}, layouts off {bad}, hosts {hosts}, "
                            f"samples {samples} (expected 32)")
        shutil.rmtree(local, ignore_errors=True)
    shutil.rmtree(os.path.join(lab.local, a.tag), ignore_errors=True)
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
