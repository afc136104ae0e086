#!/usr/bin/env python3
"""The same S3 objects read by feedbench, by a boto3 thread pool and (where it is installed)
by s3torchconnector, on the lab's radosgw, from emulated host labh1 (tests/perf/s3_vs_boto3.sh).

Each client runs in its own process in labh1's network namespace and reports the bytes it
read, the wall time of its reads and the CPU time (user + system, getrusage of its own
process) they cost, both taken around the reads only: imports and start-up are left out for
every client alike (feedbench's own figures: train_bandwidth_MiBps and
train_cpu_seconds_per_GiB of summary.json). The OSD links are unshaped while it measures,
so the server is as fast as this machine allows; they are shaped again afterwards. With --pin
SERVER:CLIENT (CPU lists, e.g. 0:1) radosgw (every thread) runs on SERVER's CPUs and each
client on CLIENT's (taskset) while it measures, so that a client's CPU s/GiB is its own and
the server is not slowed by the client it serves; radosgw's CPUs are given back afterwards.

  s3_clients.py [--feedbench BIN] --work DIR [--count N --size-mib S --concurrency C --reps R]
                [--pin SERVER:CLIENT]
  s3_clients.py boto3-read|s3tc-read --keys FILE --concurrency C   (inside the namespace)
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import s3_lab  # noqa: E402
import s3_train_lab  # noqa: E402

MIB = 1 << 20


def cpu_now():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def read_report(nbytes, t0, c0):
    json.dump({"bytes": nbytes, "seconds": time.monotonic() - t0, "cpu": cpu_now() - c0},
              sys.stdout)


def boto3_read(args):
    """Every key read whole by a thread pool of concurrency threads, one boto3 client shared
    (clients are thread-safe), a connection pool as large as the pool."""
    import concurrent.futures

    import boto3
    import botocore.config

    keys = open(args.keys).read().split()
    s3 = boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"],
                      region_name=os.environ["S3_REGION"],
                      config=botocore.config.Config(max_pool_connections=args.concurrency,
                                                    s3={"addressing_style": "path"}))
    bucket = os.environ["S3_BUCKET"]

    def one(key):
        return len(s3.get_object(Bucket=bucket, Key=key)["Body"].read())

    one(keys[0])  # the connection and the client's lazy set-up, as feedbench's before its clock
    t0, c0 = time.monotonic(), cpu_now()
    with concurrent.futures.ThreadPoolExecutor(args.concurrency) as ex:
        n = sum(ex.map(one, keys))
    read_report(n, t0, c0)


def s3tc_read(args):
    """Every key read whole through s3torchconnector's S3Reader, concurrency threads."""
    import concurrent.futures

    from s3torchconnector._s3client import S3Client, S3ClientConfig

    keys = open(args.keys).read().split()
    client = S3Client(os.environ["S3_REGION"], endpoint=os.environ["S3_ENDPOINT"],
                      s3client_config=S3ClientConfig(force_path_style=True))
    bucket = os.environ["S3_BUCKET"]

    def one(key):
        return len(client.get_object(bucket, key).read())

    one(keys[0])
    t0, c0 = time.monotonic(), cpu_now()
    with concurrent.futures.ThreadPoolExecutor(args.concurrency) as ex:
        n = sum(ex.map(one, keys))
    read_report(n, t0, c0)


CLIENT_CPUS = []  # ["taskset", "-c", LIST] with --pin: where every client runs


def in_host(lab_, argv, env=None):
    """argv run in labh1's network namespace with the lab's S3 settings: its stdout."""
    e = dict(os.environ, **{k: v for k, v in lab_.env.items()
                           if k.startswith(("S3_", "AWS_"))}, **(env or {}))
    r = subprocess.run(["ip", "netns", "exec", f"{lab_.ns}-h1", *CLIENT_CPUS, *argv], env=e,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{os.path.basename(argv[0])} {' '.join(argv[1:3])}: exit "
                           f"{r.returncode}: {r.stderr.strip()[-600:]}")
    return r.stdout


def python_client(lab_, work, kind, keys, conc, python):
    path = os.path.join(work, "keys")
    with open(path, "w") as f:
        f.write("\n".join(keys))
    out = json.loads(in_host(lab_, [python, os.path.abspath(__file__), kind, "--keys", path,
                                    "--concurrency", str(conc)]))
    return out["bytes"], out["bytes"] / out["seconds"], out["cpu"]


FB_CONFIG = """[workload]
name = s3_vs_boto3
[dataset]
data_dir = s3://{bucket}/{prefix}
format = raw
num_files_train = {count}
num_samples_per_file = 1
record_length_bytes = {size}
file_access = per_rank
verify = false
seed = 11
[reader]
batch_size = 1
read_threads = {conc}
prefetch_size = {prefetch}
[train]
epochs = 1
computation_time = 0
[storage]
backend = s3
{s3}
[output]
dir = {out}
plots = false
"""


def feedbench_dataset(lab_, work, args):
    """feedbench generates the dataset (one object per sample, verify on) and reads it once:
    the keys of its objects, for the other clients to read the same."""
    cfg = os.path.join(work, "fb.ini")
    with open(cfg, "w") as f:
        f.write(FB_CONFIG.format(bucket=lab_.bucket, prefix=args.tag, count=args.count,
                                 size=args.size_mib * MIB, prefetch=2 * args.concurrency,
                                 conc=args.concurrency, s3=lab_.s3_keys(),
                                 out=os.path.join(work, "fb")))
    in_host(lab_, [args.feedbench, "run", cfg, "--set", "dataset.verify=true", "--quiet"])
    keys = [k for k in s3_train_lab.listing(lab_, args.tag + "/")
            if not os.path.basename(k).startswith("feedbench-")]
    if len(keys) != args.count:
        raise SystemExit(f"feedbench generated {len(keys)} objects, expected {args.count}")
    return cfg, sorted(keys)


def feedbench_client(lab_, work, cfg, fb):
    """One feedbench run (1 rank, as many reader threads as the others have GETs in flight,
    batches of one sample, so one GET at a time each): bytes, bytes/s and CPU seconds from
    its summary.json."""
    out = os.path.join(work, "fb")
    before = set(os.listdir(out))
    in_host(lab_, [fb, "run", cfg, "--set", "dataset.generate=never", "--quiet"])
    run = (set(os.listdir(out)) - before).pop()
    with open(os.path.join(out, run, "summary.json")) as f:
        m = json.load(f)["metric"]
    return (m["train_bytes_read"], m["train_bandwidth_MiB_per_second"] * MIB,
            m["train_cpu_user_seconds"] + m["train_cpu_system_seconds"])


def feedbench_has_s3(fb):
    r = subprocess.run([fb, "list"], capture_output=True, text=True)
    return any(line.split()[:2] == ["s3", "built"] for line in r.stdout.splitlines())


def pin_rgw(lab_, cpus):
    """Every thread of the lab's radosgw onto CPU list cpus; returns the list it had."""
    with open(os.path.join(lab_.dir, "run", "client.rgw.lab.pid")) as f:
        pid = f.read().strip()
    was = subprocess.run(["taskset", "-p", "-c", pid], check=True, capture_output=True,
                         text=True).stdout.rsplit(":", 1)[-1].strip()
    subprocess.run(["taskset", "-a", "-p", "-c", cpus, pid], check=True, capture_output=True)
    return was


def bench_main(args):
    lab_ = s3_lab.Lab()
    work = tempfile.mkdtemp(prefix="fb_s3clients_", dir=args.work)
    size = args.size_mib * MIB
    fb = args.feedbench and feedbench_has_s3(args.feedbench)
    if fb:
        cfg, keys = feedbench_dataset(lab_, work, args)
    else:
        keys = [f"{args.tag}/obj{i:05d}" for i in range(args.count)]
        path = s3_lab.make_files(work, {"obj": size})["obj"]
        lab_.put({k: path for k in keys})
    clients = [("boto3", lambda: python_client(lab_, work, "boto3-read", keys,
                                               args.concurrency, sys.executable))]
    if args.s3tc_python:
        clients.append(("s3torchconnector", lambda: python_client(
            lab_, work, "s3tc-read", keys, args.concurrency, args.s3tc_python)))
    if fb:
        clients.insert(0, ("feedbench", lambda: feedbench_client(lab_, work, cfg, args.feedbench)))
    else:
        print(f"feedbench: {args.feedbench or '(none given)'} has no s3 back-end built "
              "(feedbench list): not measured")
    if not args.s3tc_python:
        print(f"s3torchconnector: not measured ({args.s3tc_why or 'no Python with it'})")
    got = {name: [] for name, _ in clients}
    s3_lab.lab("shape", "0")
    rgw_cpus = None
    try:
        if args.pin:
            rgw_cpus = pin_rgw(lab_, args.pin.split(":")[0])
            CLIENT_CPUS[:] = ["taskset", "-c", args.pin.split(":")[1]]
        for _ in range(args.reps):
            for name, fn in clients:
                got[name].append(fn())
    finally:
        if rgw_cpus:
            pin_rgw(lab_, rgw_cpus)
        s3_lab.lab("shape", lab_.env["OSD_MIBS"])
        lab_.delete(list(s3_train_lab.listing(lab_, args.tag + "/")))
        lab_.gc()
    return print_table(args, got, size)


def print_table(args, got, size):
    ref = "feedbench" if "feedbench" in got else "boto3"
    mean = {n: sum(r[1] for r in v) / len(v) for n, v in got.items()}
    print(f"{args.count} objects x {args.size_mib} MiB, {args.concurrency} in flight, from "
          f"labh1, links unshaped, {args.reps} runs each (load {os.getloadavg()[0]:.1f})")
    if args.pin:
        print(f"radosgw on CPU {args.pin.split(':')[0]}, each client on CPU "
              f"{args.pin.split(':')[1]} (taskset; the OSDs and the monitor unpinned)")
    print(f"{'client':18} {'MiB/s':>8} {'(min-max)':>13} {'vs ' + ref:>12} {'CPU s/GiB':>10}")
    bad = 0
    for n, v in got.items():
        bws = [r[1] / MIB for r in v]
        cpu = sum(r[2] for r in v) / (sum(r[0] for r in v) / (1 << 30))
        if any(r[0] != args.count * size for r in v):
            print(f"{n}: read {[r[0] for r in v]} bytes, expected {args.count * size}")
            bad = 1
        print(f"{n:18} {mean[n] / MIB:8.1f} ({min(bws):5.1f}-{max(bws):5.1f}) "
              f"{mean[n] / mean[ref]:12.2f} {cpu:10.3f}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", nargs="?", default="bench", choices=["bench", "boto3-read",
                                                                  "s3tc-read"])
    ap.add_argument("--keys")
    ap.add_argument("--feedbench")
    ap.add_argument("--work")
    ap.add_argument("--tag", default=f"fb-s3clients-{os.getpid()}")
    ap.add_argument("--count", type=int, default=64)
    ap.add_argument("--size-mib", type=int, default=4)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--s3tc-python", help="a Python with s3torchconnector")
    ap.add_argument("--s3tc-why", help="why there is none")
    ap.add_argument("--pin", help="SERVER:CLIENT CPU lists: radosgw on one, the clients on "
                    "the other (taskset)")
    args = ap.parse_args()
    if args.mode == "boto3-read":
        return boto3_read(args)
    if args.mode == "s3tc-read":
        return s3tc_read(args)
    return bench_main(args)


if __name__ == "__main__":
    sys.exit(main())
