"""Helpers for the interop tests: run feedbench on a config written by the test and read its
summary.json. Environment (set by ctest): FEEDBENCH, MPIEXEC."""
import glob
import json
import os
import subprocess

import pytest


class Run:
    def __init__(self, proc, out):
        self.rc = proc.returncode
        self.output = proc.stdout
        found = glob.glob(os.path.join(out, "*", "summary.json"))
        self.summary = None
        if found:
            with open(found[0]) as f:
                self.summary = json.load(f)

    @property
    def metric(self):
        return self.summary["metric"]

    @property
    def discovered(self):
        return self.summary["format"]["discovered"]


def ini(sections):
    """{"dataset": {"format": "npy"}} -> INI text."""
    lines = []
    for name, keys in sections.items():
        lines.append("[%s]" % name)
        lines += ["%s = %s" % (k, v) for k, v in keys.items()]
    return "\n".join(lines) + "\n"


@pytest.fixture
def feedbench(tmp_path):
    """feedbench(sections, ranks=1, cmd="run") -> Run. Quiet, small, one reader thread,
    no shuffle, no compute: byte counts are exact. ranks > 1 under mpiexec."""
    exe = os.environ["FEEDBENCH"]
    mpiexec = os.environ.get("MPIEXEC") or "mpiexec"
    count = [0]

    def run(sections, ranks=1, cmd="run"):
        count[0] += 1
        base = {
            "workload": {"name": "interop"},
            "reader": {"batch_size": 1, "read_threads": 1, "prefetch_size": 1},
            "train": {"epochs": 1, "computation_time": 0, "exclude_start_steps": 0},
        }
        for name, keys in sections.items():
            base.setdefault(name, {}).update(keys)
        cfg = tmp_path / ("config%d.ini" % count[0])
        cfg.write_text(ini(base))
        out = tmp_path / ("out%d" % count[0])
        # One rank runs without a launcher (a singleton MPI process, as `feedbench run` typed
        # alone): the same code, without mpiexec's teardown of a job that exited non-zero
        # (about 2 s for each run that fails on purpose here).
        args = [exe, cmd, str(cfg)]
        if ranks > 1:
            args = [mpiexec, "--oversubscribe", "-n", str(ranks)] + args
        if cmd == "run":
            args += ["--output", str(out), "--quiet"]
        proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=240)
        print(proc.stdout)
        return Run(proc, str(out))

    return run


def header_fields(sample):
    """(magic, length, index) of feedbench's 40-byte sample header."""
    return sample[0:4], int.from_bytes(sample[28:32], "little"), \
        int.from_bytes(sample[32:40], "little")
