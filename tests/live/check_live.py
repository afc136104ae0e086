#!/usr/bin/env python3
"""Live statistics as a user sees them (tests/live/live.sh, tests/lab/labtest.sh srun).

usage: check_live.py stamp ERR -- COMMAND...
           runs COMMAND with its stderr read line by line as it arrives: ERR gets the bytes,
           ERR.t each line's arrival (seconds on the monotonic clock) and the line; exits with
           COMMAND's status (stdout is left as it is).
       check_live.py check RUN_DIR ERR --interval S [--epochs N]
           checks the live lines in ERR (and their arrival, from ERR.t when it exists) against
           live.csv, ranks.csv and summary.json in RUN_DIR. Exit 1 with the failed check.

What must hold: plain lines (no carriage return, no escape sequence: stderr is not a terminal),
each a whole `live ...` line; as many lines as the intervals gathered less the few that came
too soon after the one before (at most one line per half interval); the lines arriving while
the run goes on, one by one (check_arrival); live.csv's rows numbered in order on a rising clock, their bytes adding up
to the epochs' bytes in summary.json, each epoch's last row 100 % done; ranks.csv one row per
rank and interval; summary.json's slowest rank.
"""
import csv
import math
import json
import re
import subprocess
import sys
import time

LINE = re.compile(r"^live (epoch \d+/\d+) ([0-9.]+) s: [0-9.]+ MiB/s [0-9]+ IOPS \(so far "
                  r"[0-9.]+ MiB/s [0-9]+ IOPS\), AU (?:[0-9.]+ %|n/a), slowest rank \d+ "
                  r"\(.*, \d+ % done\), ETA .+$")


def stamp(err, argv):
    p = subprocess.Popen(argv, stderr=subprocess.PIPE)
    with open(err, "wb") as raw, open(err + ".t", "w") as t:
        for line in p.stderr:
            raw.write(line)
            raw.flush()
            t.write("%.6f\t%s\n" % (time.monotonic(), line.decode(errors="replace").rstrip("\n")))
    return p.wait()


def fail(msg):
    print("check_live: " + msg, file=sys.stderr)
    sys.exit(1)


def check_lines(err, interval, rows):
    data = open(err, "rb").read()
    if b"\r" in data or b"\x1b" in data:
        fail("control characters on stderr, which is not a terminal")
    lines = [ln for ln in data.decode(errors="replace").splitlines() if "live epoch" in ln]
    if not lines:
        fail(f"no live line on stderr ({err})")
    bad = [ln for ln in lines if not LINE.match(ln)]
    if bad:
        fail(f"not a whole live line: {bad[0]!r}")
    el = [float(LINE.match(ln).group(2)) for ln in lines]
    if el != sorted(el):
        fail(f"the live lines' elapsed seconds do not rise: {el}")
    # one line per interval: a gather taken from an epoch's end (a tail) gets one only when a
    # whole interval passed since the last line; the others when half of one did
    whole = [r for r in rows if float(r["interval_seconds"]) >= 0.5 * interval]
    if not len(whole) // 2 <= len(lines) <= len(rows):
        fail(f"{len(lines)} live lines for {len(rows)} gathered intervals "
             f"({len(whole)} of them at least half an interval long)")
    return lines, el


def check_arrival(err, interval):
    """Consecutive lines are printed at least half an interval apart; arriving as they are
    printed, at least half the pairs come a quarter of an interval apart or more. Buffered, they
    come in bursts (one per flush: at an epoch's end, or at exit) microseconds apart."""
    try:
        stamped = [ln.split("\t", 1) for ln in open(err + ".t")]
    except FileNotFoundError:
        return None
    at = [float(t) for t, ln in stamped if LINE.match(ln.rstrip("\n"))]
    if len(at) < 4:
        fail(f"too short a run to see the lines arrive: {len(at)} lines")
    apart = sum(b - a >= 0.25 * interval for a, b in zip(at, at[1:]))
    if 2 * apart < len(at) - 1:
        fail(f"only {apart} of {len(at) - 1} consecutive live lines arrived "
             f"{0.25 * interval:.3f} s apart or more (gaps "
             + ", ".join(f"{b - a:.4f}" for a, b in zip(at, at[1:]))
             + " s): stderr is buffered, or the lines come at the end")
    return apart, len(at) - 1


def check_csv(d, epochs):
    s = json.load(open(d + "/summary.json"))
    rows = list(csv.DictReader(open(d + "/live.csv")))
    assert len(rows) >= 2, len(rows)
    assert [int(r["interval"]) for r in rows] == list(range(1, len(rows) + 1))
    el = [float(r["elapsed_seconds"]) for r in rows]
    assert el == sorted(el), el
    total = sum(e["bytes_read"] for e in s["epochs"])
    assert sum(int(r["bytes"]) for r in rows) == total, "interval bytes do not add up"
    assert int(rows[-1]["bytes_so_far"]) == total, (rows[-1], total)
    assert int(rows[-1]["ops_so_far"]) == sum(e["read_ops"] for e in s["epochs"])
    # each epoch's last row is taken after its last step: every rank 100 % through it
    last = {r["phase"]: r for r in rows}
    want = [f"epoch {i}/{epochs}" for i in range(1, epochs + 1)]
    assert sorted(last) == want, (sorted(last), want)
    assert all(float(r["slowest_done_percentage"]) == 100 for r in last.values()), last
    nranks = len(s["ranks"])
    for r in rows:
        # bandwidth = bytes over the interval, whose seconds are written to 1 us: an epoch's
        # last gather can follow the one before by 0.1 ms, which that rounding moves by 1 %
        dt = float(r["interval_seconds"])
        bw = int(r["bytes"]) / 1048576 / dt if dt > 0 else 0
        assert dt == 0 or abs(float(r["bandwidth_MiB_per_second"]) - bw) <= 1e-3 + bw * 0.6e-6 / dt, r
        assert 0 <= int(r["slowest_rank"]) < nranks, r
        assert 0 <= float(r["au_so_far_percentage"]) <= 100, r
    ranks = list(csv.DictReader(open(d + "/ranks.csv")))
    per = [r for r in ranks if r["interval"]]
    assert {int(r["rank"]) for r in per} == set(range(nranks)), per[:4]
    assert len(per) == nranks * len(rows), (len(per), nranks, len(rows))
    assert 0 <= s["live"]["slowest_rank"] < nranks, s["live"]
    assert 0 <= s["live"]["slowest_lost_share"] <= 1, s["live"]
    # the live threads' own CPU: measured (a thread that ran used some), within the CPU of the
    # processes it is part of over the same spans, which hold the epochs (the metric's user +
    # system time is over the epochs alone)
    lv, m = s["live"], s["metric"]
    assert math.isfinite(lv["thread_cpu_seconds"]) and math.isfinite(lv["cpu_seconds"]), lv
    assert 0 < lv["thread_cpu_seconds"] <= lv["cpu_seconds"], lv
    cpu = m["train_cpu_user_seconds"] + m["train_cpu_system_seconds"]
    assert lv["cpu_seconds"] >= cpu - 1e-6, (lv, cpu)
    return rows


def main():
    if len(sys.argv) > 3 and sys.argv[1] == "stamp" and sys.argv[3] == "--":
        return stamp(sys.argv[2], sys.argv[4:])
    if len(sys.argv) < 4 or sys.argv[1] != "check":
        fail(__doc__.split("\n\n")[1])
    d, err = sys.argv[2], sys.argv[3]
    opts = dict(zip(sys.argv[4::2], sys.argv[5::2]))
    try:
        rows = check_csv(d, int(opts.get("--epochs", 2)))
    except AssertionError as e:
        fail(f"live.csv, ranks.csv or summary.json: {e}")
    lines, el = check_lines(err, float(opts["--interval"]), rows)
    arr = check_arrival(err, float(opts["--interval"]))
    print(f"live: {len(lines)} lines for {len(rows)} intervals"
          + (f", {arr[0]} of {arr[1]} consecutive lines arriving apart" if arr else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
