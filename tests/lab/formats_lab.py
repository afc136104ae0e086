#!/usr/bin/env python3
"""Every format, shared and per-rank, on the lab's CephFS from two emulated hosts.

Tiny verified runs (2 ranks, one per host, each host through its own ceph-fuse client) with
`[storage] stripe_count = 2, stripe_size = 64KiB`: feedbench applies the layout (per file, or
on the folder for formats whose library creates the file), every data file must carry it when
asked with getfattr's xattr, summary.json must record it with the OSDs spanned, and every
byte must verify. hdf5 collective and raw over collective MPI-IO run too: Open MPI
has no CephFS driver, so they go through ROMIO's/OMPIO's UFS driver on the mount.
"""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import time

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
[storage]
stripe_count = 2
stripe_size = 64KiB
object_size = 64KiB
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
    a.launcher = "mpirun"  # stripe_lab.Lab.mpirun: by mpirun, as the other lab cases
    lab = stripe_lab.Lab(a)
    failures = []

    def one(case):
        """Runs one case; returns (line to print, failure or None)."""
        name, fmt, access, extra = case
        rel = f"{a.tag}/{name}"
        local = os.path.join(lab.local, rel)
        os.makedirs(local, exist_ok=True)
        cfg = merge(CONFIG.format(name=name, data=os.path.join(lab.common, rel), fmt=fmt,
                                  access=access, out=os.path.join(a.work, "results"),
                                  extra=extra))
        t0 = time.monotonic()
        try:
            s = lab.run(cfg, name, 2)
        except SystemExit as e:
            return f"FAIL {name}: {e}", f"{name}: {e}"
        # data files; a TFRecord index (.idx) is feedbench's own sidecar, not the dataset
        files = [f for f in stripe_lab.data_files(local) if not f.endswith(".idx")]
        lays = {f: stripe_lab.layout(f) for f in files}
        bad = {os.path.basename(f): l for f, l in lays.items() if l["stripe_count"] != 2
               or l["stripe_unit"] != 65536}
        eff = s["storage"].get("stripe_effective")
        eff_ok = (isinstance(eff, dict) and eff.get("count") == 2 and eff.get("size") == 65536
                  and not eff.get("files_differing")
                  and isinstance(eff.get("servers_spanned"), int) and eff["servers_spanned"] >= 1)
        hosts = sorted({r["host"] for r in s["ranks"]})
        samples = s["metric"]["train_samples"]
        ok = bool(not bad and eff_ok and hosts == ["labh1", "labh2"] and samples == 32 and files)
        short = ({k: eff.get(k) for k in ("count", "size", "servers_spanned", "set_by")}
                 if isinstance(eff, dict) else eff)
        shutil.rmtree(local, ignore_errors=True)
        line = (f"{'ok  ' if ok else 'FAIL'} {name} ({time.monotonic() - t0:.1f} s): "
                f"{len(files)} files, stripe_effective {short}, ranks on {hosts}, {samples} "
                f"samples verified, {s['metric']['train_bandwidth_MiB_per_second']:.1f} MiB/s")
        why = None if ok else (f"{name}: files {len(files)}, layouts off {bad}, "
                               f"stripe_effective {eff}, hosts {hosts}, samples {samples} "
                               "(expected 32)")
        return line, why

    # Three at a time: each run mostly waits (launch, ceph CLI, the network), so the lab's
    # two cores stay far from full and the tiny runs measure nothing timing-sensitive.
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        for line, why in pool.map(one, CASES):
            print(line)
            if why:
                failures.append(why)
    shutil.rmtree(os.path.join(lab.local, a.tag), ignore_errors=True)
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
