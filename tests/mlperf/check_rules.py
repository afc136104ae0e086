"""Each rule of `feedbench mlperf check` with a passing and a failing folder.

From a real `feedbench mlperf run` folder (argv[1]) it writes folders under argv[2] that hold
only what the check reads (mlperf_run.json and each run's summary.json), edited per case: a
CLOSED base (the dataset rule made to hold: 7000 files, clients of 1 MiB), then one edit per
rule that breaks it. Each case asserts the exit status, the verdict and the finding line of its
rule. The real folder (this machine's RAM) is the dataset rule's failing case (mlperf.sh).
"""
import copy
import json
import os
import subprocess
import sys

SRC, OUT = sys.argv[1], sys.argv[2]
FB = os.environ["FEEDBENCH"]
top0 = json.load(open(f"{SRC}/mlperf_run.json"))
runs0 = {p["folder"]: json.load(open(f"{SRC}/{p['folder']}/summary.json"))
         for p in top0["phases"]}


def closed_base():
    top, runs = copy.deepcopy(top0), copy.deepcopy(runs0)
    for s in runs.values():
        s["host"]["memory_bytes"] = 1 << 20
        s["config"]["dataset"]["num_files_train"] = 7000
    return top, runs


def write(name, top, runs, as_list=False):
    d = f"{OUT}/{name}"
    for f, s in runs.items():
        os.makedirs(f"{d}/{f}", exist_ok=True)
        json.dump(s, open(f"{d}/{f}/summary.json", "w"))
    if as_list:
        return [f"{d}/{p['folder']}" for p in top["phases"]]
    json.dump(top, open(f"{d}/mlperf_run.json", "w"))
    return [d]


def check(name, top, runs, rc, verdict, line, as_list=False):
    args = write(name, top, runs, as_list)
    r = subprocess.run([FB, "mlperf", "check", *args], capture_output=True, text=True)
    out = r.stdout
    problems = []
    if r.returncode != rc:
        problems.append(f"exit {r.returncode}, expected {rc}")
    if not any(l.startswith("verdict: " + verdict) for l in out.splitlines()):
        problems.append(f"verdict is not {verdict}")
    if not any(l.startswith(line) for l in out.splitlines()):
        problems.append(f"no line starting {line!r}")
    if problems:
        sys.exit(f"case {name}: {'; '.join(problems)}\n{out}{r.stderr}")


def edit(fn):
    top, runs = closed_base()
    fn(top, runs)
    return top, runs


def drop_run5(top, runs):
    top["phases"] = top["phases"][:5]
    del runs["run-5"]


def late_run3(top, runs):
    # run-3 began an hour after run-2 ended (its own duration is under a minute)
    for k in ("start", "end"):
        h = int(runs["run-3"][k][11:13])
        runs["run-3"][k] = runs["run-3"][k][:11] + f"{(h + 1) % 24:02d}" + runs["run-3"][k][13:]


def for_all(fn):
    """The edit fn(summary) made to every run."""
    return lambda top, runs: [fn(s) for s in runs.values()]


# (case, edit of the CLOSED base, exit status, verdict, the finding line that starts so)
CASES = [
    ("five-runs", drop_run5, 1, "INVALID", "INVALID 2.1.17 runTimestamps: 5 runs"),
    ("gap", late_run3, 1, "INVALID", "INVALID 2.1.18 runTimestampGap: run-3 starts 3"),
    ("seeds", lambda top, runs: runs["run-2"]["config"]["reader"].update(
        shuffle_seed=runs["run-1"]["config"]["reader"]["shuffle_seed"]), 1, "OPEN",
     "OPEN    feedbench seedsDiffer: run-1 and run-2 read with the same shuffle seed"),
    ("config", lambda top, runs: runs["run-4"].update(config_hash="0" * 64), 1, "INVALID",
     "INVALID 2.1.9 identicalSystemConfig: run-4 has another config_hash"),
    ("au", lambda top, runs: runs["run-2"]["metric"].update(train_au_mean_percentage=50.0),
     1, "INVALID",
     "INVALID 3.3.2 trainingAcceleratorUtilizationCheck: run-2: AU 50.00 % below the threshold 90 %"),
    ("hosts", lambda top, runs: runs["run-1"].update(ranks_per_node={"min": 1, "max": 2}),
     1, "INVALID", "INVALID 3.3.6 trainingIdenticalAcceleratorsPerNode: run-1: 1 to 2 ranks per host"),
    ("compute", for_all(lambda s: s["config"]["train"].update(computation_time=0.2)), 1, "INVALID",
     "INVALID 3.6.2 trainingClosedSubmissionParameters: [train] computation_time = 0.2, the preset's is 0.162"),
    ("whatif", for_all(lambda s: s["mlperf"]["preset"].update(status="whatif")), 1, "INVALID",
     "INVALID 3.6.2 trainingClosedSubmissionParameters: unet3d on b200 is a whatif preset"),
    ("no-preset", for_all(lambda s: s["mlperf"].pop("preset")), 1, "INVALID",
     "INVALID 3.6.2 trainingClosedSubmissionParameters: no MLPerf Storage preset"),
    ("format", for_all(lambda s: s["config"]["dataset"].update(format="raw")), 1, "OPEN",
     "OPEN    3.6.3 trainingOpenSubmissionParameters: format raw"),
    ("not-dropped", lambda top, runs: [p["cache_drop"][0].update(outcome="not permitted")
                                       for p in top["phases"]], 0, "CLOSED",
     "NOTE    feedbench cacheDropped: before warmup, host "),
]


top, runs = closed_base()
check("closed", top, runs, 0, "CLOSED", "PASS    2.1.17 runTimestamps: 6 runs")
for rule in ("2.1.18 runTimestampGap", "feedbench seedsDiffer", "2.1.9 identicalSystemConfig",
             "3.1.2 trainingRecalculateDatasetSize", "3.3.2 trainingAcceleratorUtilizationCheck",
             "3.3.6 trainingIdenticalAcceleratorsPerNode",
             "3.6.2 trainingClosedSubmissionParameters", "feedbench cacheDropped"):
    check("closed-" + rule.split()[1], top, runs, 0, "CLOSED", "PASS    " + rule)
check("listed", top, runs, 0, "CLOSED",
      "NOTE    feedbench cacheDropped: not recorded", as_list=True)
for name, fn, rc, verdict, line in CASES:
    check(name, *edit(fn), rc, verdict, line)
