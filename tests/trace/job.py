#!/usr/bin/env python3
"""A small training job whose I/O `feedbench import-trace` reproduces (tests/trace/trace.sh).

It reads a folder of .npy files (one sample each) through PyTorch's DataLoader (worker
processes) when torch imports, else through a pool of Python threads doing the same, and
traces itself the way dftracer does: every open, read and close, every sample (__getitem__,
with a preprocessing step inside: a fixed amount of CPU work, as decoding is) and every compute
step (a sleep, as a GPU computes while the host waits) and every wait for a batch (a "fetch"
around next()), as Chrome trace events in JSON lines, each with its thread's CPU time over it
(Chrome's "tdur"); and each process's CPU time (all its threads) as a counter event
("ph":"C", args.cpu_us) when a worker's batch is complete (its collate_fn) and after each step
in the trainer, which time what no event does (collating, pickling a batch to the trainer,
unpickling it, the loop's own Python). Each process writes its own file; the main process joins
them into TRACE at the end.

usage: job.py make DIR FILES BYTES        write FILES .npy files of BYTES uint8 each
       job.py run DIR TRACE [--epochs E] [--batch B] [--workers W] [--compute-ms C]
                  [--preprocess-ms P] [--shuffle] [--loader auto|torch|threads]
`run` prints one JSON line: the loader used, samples, epochs, read calls, bytes read and
samples per second over the epochs' wall time.
"""
import argparse
import glob
import json
import os
import random
import re
import sys
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor

HEADER = 128  # numpy's header of a small 1-D array


def make(folder, files, nbytes):
    os.makedirs(folder, exist_ok=True)
    d = "{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }" % nbytes
    head = b"\x93NUMPY\x01\x00" + (HEADER - 10).to_bytes(2, "little")
    head += (d + " " * (HEADER - 10 - len(d) - 1) + "\n").encode()
    for i in range(files):
        with open(os.path.join(folder, "img_%05d.npy" % i), "wb") as f:
            f.write(head + os.urandom(nbytes))


class Tracer:
    """One trace file per process (workers are forked), written line by line."""

    def __init__(self, path):
        self.path, self.pid, self.f = path, None, None
        self.lock = threading.Lock()

    def out(self):
        """This process's file, opened by its first event (loader threads race to it)."""
        if self.pid != os.getpid():
            with self.lock:
                if self.pid != os.getpid():
                    self.f = open("%s.%d" % (self.path, os.getpid()), "a", buffering=1)
                    self.pid = os.getpid()
        return self.f

    def event(self, name, cat, t0, c0, **args):
        """An event from (t0, c0) (monotonic and thread CPU clock, ns) to now."""
        t1, c1 = now(), cpu()
        self.out().write(json.dumps({"name": name, "cat": cat, "pid": self.pid,
                                 "tid": threading.get_native_id(),
                                 "ts": t0 / 1e3, "dur": (t1 - t0) / 1e3,
                                 "tdur": (c1 - c0) / 1e3, "ph": "X",
                                 "args": args}, separators=(",", ":")) + "\n")

    def counter(self):
        """A Chrome counter event: this process's CPU time so far (all its threads, µs)."""
        self.out().write(json.dumps({"name": "process_cpu", "ph": "C", "pid": self.pid,
                                 "ts": now() / 1e3,
                                 "args": {"cpu_us": time.process_time_ns() / 1e3}},
                                separators=(",", ":")) + "\n")

    def join(self):
        with open(self.path, "w") as out:
            out.write("[\n")
            for part in sorted(glob.glob(self.path + ".*")):
                with open(part) as f:
                    out.write(f.read())
                os.unlink(part)
            out.write("]\n")


now = time.monotonic_ns
cpu = time.thread_time_ns


class NpyDataset:
    def __init__(self, files, tracer, preprocess_s):
        self.files, self.tr, self.pre = files, tracer, preprocess_s

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        tr, path, t0, c0 = self.tr, self.files[i], now(), cpu()
        a, c = now(), cpu()
        fd = os.open(path, os.O_RDONLY)
        tr.event("open", "POSIX", a, c, fname=path)
        a, c = now(), cpu()
        head = os.pread(fd, HEADER, 0)
        tr.event("read", "POSIX", a, c, fname=path, offset=0, size=len(head))
        size = int(re.search(rb"'shape': \((\d+),", head).group(1))
        a, c = now(), cpu()
        data = os.pread(fd, size, HEADER)
        tr.event("read", "POSIX", a, c, fname=path, offset=HEADER, size=len(data))
        a, c = now(), cpu()
        os.close(fd)
        tr.event("close", "POSIX", a, c, fname=path)
        # decoding, augmentation: a fixed amount of CPU work (longer when the thread waits
        # for a CPU, as real decoding is)
        end = cpu() + int(self.pre * 1e9)
        while cpu() < end:
            pass
        tr.event("__getitem__", "torch", t0, c0, index=i)
        return data

    def collate(self, batch):
        """A worker's batch is complete: its process's CPU time so far, as a counter."""
        self.tr.counter()
        return batch


def torch_batches(ds, a, epoch):
    import torch
    from torch.utils.data import DataLoader
    g = torch.Generator()
    g.manual_seed(epoch)
    if not hasattr(ds, "loader"):
        ds.loader = DataLoader(ds, batch_size=a.batch, shuffle=a.shuffle, num_workers=a.workers,
                               persistent_workers=a.workers > 0, collate_fn=ds.collate,
                               generator=g, prefetch_factor=2 if a.workers else None)
    return iter(ds.loader)


def thread_batches(ds, a, epoch):
    order = list(range(len(ds)))
    if a.shuffle:
        random.Random(epoch).shuffle(order)
    chunks = [order[k:k + a.batch] for k in range(0, len(order), a.batch)]
    if not hasattr(ds, "pool"):
        ds.pool = ThreadPoolExecutor(max(a.workers, 1))
    pending = deque()
    for c in chunks:
        pending.append(ds.pool.submit(lambda c=c: [ds[i] for i in c]))
        if len(pending) > 2 * max(a.workers, 1):
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def run(a):
    files = sorted(glob.glob(os.path.join(a.dir, "*.npy")))
    tr = Tracer(a.trace)
    ds = NpyDataset(files, tr, a.preprocess_ms / 1e3)
    loader = a.loader
    if loader == "auto":
        try:
            import torch  # noqa: F401
            loader = "torch"
        except ImportError:
            loader = "threads"
    batches = torch_batches if loader == "torch" else thread_batches
    samples, wall = 0, 0.0
    for epoch in range(a.epochs):
        t0 = now()
        it, step = batches(ds, a, epoch), 0
        while True:
            f, fc = now(), cpu()
            batch = next(it, None)
            if batch is None:
                break
            tr.event("fetch", "train", f, fc, step=step)
            c, cc = now(), cpu()
            time.sleep(a.compute_ms / 1e3)
            tr.event("compute", "train", c, cc, step=step)
            tr.counter()
            samples += len(batch)
            step += 1
        wall += (now() - t0) / 1e9
    if loader == "torch" and a.workers:
        del ds.loader  # ends the worker processes, which close their trace files
    tr.join()
    reads = nbytes = 0
    with open(a.trace) as f:
        for line in f:
            if line.startswith("{"):
                ev = json.loads(line)
                if ev["name"] == "read":
                    reads += 1
                    nbytes += ev["args"]["size"]
    print(json.dumps({"loader": loader, "samples": samples, "epochs": a.epochs,
                      "read_calls": reads, "bytes_read": nbytes,
                      "samples_per_second": samples / wall}))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["run"])
    ap.add_argument("dir")
    ap.add_argument("trace")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--compute-ms", type=float, default=5)
    ap.add_argument("--preprocess-ms", type=float, default=1)
    ap.add_argument("--shuffle", action="store_true")
    ap.add_argument("--loader", default="auto", choices=["auto", "torch", "threads"])
    run(ap.parse_args())


if __name__ == "__main__":
    main()
