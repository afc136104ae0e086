#!/usr/bin/env python3
"""Checks a finished sweep folder the way a user would read it.

usage: check_sweep.py SWEEP_DIR POINTS [--plots] [--reuse] [--no-stripe-gain STDOUT]

- sweep.csv has one row per point, every point done, and its numbers are the mean and sample
  standard deviation of the per-repetition figures in that point's summary.json;
- sweep_results.json agrees with sweep.csv; sweep.md and report.md exist and carry the table;
- --plots: the sweep pictures and every point's pictures exist as PNG and SVG;
- --reuse: only the first point generated the dataset (no swept key changes it);
- --no-stripe-gain STDOUT: the points ran where nothing stripes, and no output (sweep.md,
  report.md, sweep_results.json, the sweep's stdout) recommends a stripe setting or gives it a
  gain: every group says "not applicable on <fs>".
"""
import csv
import re
import json
import math
import os
import statistics
import sys

METRICS = {  # sweep.csv column stem -> field of summary.json repetitions[]
    "bandwidth_MiB_per_second": "bandwidth_MiB_per_second",
    "iops": "iops",
    "samples_per_second": "samples_per_second",
    "au_percentage": "au_percentage",
    "data_wait_p99_seconds": "data_wait_p99_seconds",
    "latency_p99_seconds": "latency_p99_seconds",
}


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12)


def picture(path):
    for ext, magic in ((".png", b"\x89PNG"), (".svg", b"<svg")):
        p = path + ext
        if not os.path.isfile(p):
            fail("missing picture " + p)
        with open(p, "rb") as f:
            head = f.read(4096)
        if magic not in head:
            fail("%s is not a %s file" % (p, ext))


def no_stripe_gain(d, res, stdout_path):
    """Nothing stripes here: the stripe recommendation is 'not applicable' everywhere."""
    fss = set()
    for p in res["points"]:
        with open(os.path.join(d, p["dir"], "summary.json")) as f:
            st = json.load(f)["storage"]
        if not str(st.get("stripe_effective", "")).startswith("unsupported"):
            fail("point %s striped (%r): not a file system without striping"
                 % (p["point"], st.get("stripe_effective")))
        fss.add(st["fs_type"])
        if p.get("vs_best") is not None:
            fail("point %s was judged against a best (%r)" % (p["point"], p["vs_best"]))
    if len(fss) != 1:
        fail("points on several file systems: %r" % fss)
    fs = fss.pop()
    na = "stripe_count: not applicable on %s" % fs
    rec = res["recommendation"]
    for g in rec["groups"]:
        if g["kind"] != "not_applicable" or g["not_applicable_on"] != fs:
            fail("group %r: kind %r, not applicable on %r" % (g["group"], g["kind"],
                                                               g["not_applicable_on"]))
        for k in ("recommended", "recommended_vs_best", "gain_over_default",
                  "gain_over_fs_default", "gain_percentage"):
            if g.get(k) is not None:
                fail("group %r: %s is %r on %s" % (g["group"], k, g[k], fs))
    with open(os.path.join(d, "sweep.md")) as f:
        md = f.read()
    with open(os.path.join(d, "report.md")) as f:
        rep = f.read()
    with open(stdout_path) as f:
        out = f.read()
    texts = {"sweep_results.json": rec["text"],
             "sweep.md": md.split("## Recommendation", 1)[1].split("## Warnings")[0].splitlines(),
             "report.md": rep.split("## Recommendation", 1)[1].split("## Warnings")[0]
             .splitlines(),
             "stdout": out.split("\nrecommendation (", 1)[1].split("\nwarning:")[0]
             .splitlines()[1:]}
    for where, lines in texts.items():
        lines = [l for l in lines if l.strip() and not l.startswith("Optimising")]
        if len(lines) != len(rec["groups"]) + 1:
            fail("%s: %d recommendation lines for %d groups and the overall line"
                 % (where, len(lines), len(rec["groups"])))
        for l in lines:
            if re.search(r"stripe_\w+=", l):
                fail("%s recommends a stripe setting on %s: %s" % (where, fs, l.strip()))
            if na not in l:
                fail("%s: %r does not say %r" % (where, l.strip(), na))
    print("ok: no stripe recommendation on %s in sweep.md, report.md, sweep_results.json, "
          "stdout" % fs)


def main():
    d, npoints = sys.argv[1], int(sys.argv[2])
    plots, reuse = "--plots" in sys.argv, "--reuse" in sys.argv
    nsg = sys.argv[sys.argv.index("--no-stripe-gain") + 1] if "--no-stripe-gain" in sys.argv \
        else None
    with open(os.path.join(d, "sweep.csv")) as f:
        rows = list(csv.DictReader(f))
    if len(rows) != npoints:
        fail("sweep.csv has %d rows, expected %d" % (len(rows), npoints))
    with open(os.path.join(d, "sweep_results.json")) as f:
        res = json.load(f)
    unstriped = False
    for i, row in enumerate(rows):
        if row["done"] != "1":
            fail("point %s not done" % row["point"])
        with open(os.path.join(d, row["dir"], "summary.json")) as f:
            s = json.load(f)
        reps = s["repetitions"]
        if int(row["repetitions"]) != len(reps):
            fail("point %s: %s repetitions in sweep.csv, %d in summary.json"
                 % (row["point"], row["repetitions"], len(reps)))
        for col, field in METRICS.items():
            vals = [r[field] for r in reps]
            mean = statistics.mean(vals)
            sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
            if not close(float(row[col + "_mean"]), mean):
                fail("point %s %s_mean: %s in sweep.csv, %r from summary.json"
                     % (row["point"], col, row[col + "_mean"], mean))
            if not close(float(row[col + "_stddev"]), sd):
                fail("point %s %s_stddev: %s in sweep.csv, %r from summary.json"
                     % (row["point"], col, row[col + "_stddev"], sd))
            js = res["points"][i]["metrics"][col]
            if not close(js["mean"], mean):
                fail("point %s %s: sweep_results.json says %r" % (row["point"], col, js["mean"]))
        # The swept values reached the run: the effective config holds them.
        for key in res["keys"]:
            section, name = key["key"].rsplit(".", 1)
            have = s["config"][section][name]
            if str(have).lower() != row[key["key"]].lower():
                fail("point %s: %s is %r in summary.json, %r in sweep.csv"
                     % (row["point"], key["key"], have, row[key["key"]]))
        if reuse and i > 0 and s["storage"].get("dataset_regenerated"):
            fail("point %s regenerated the dataset although no dataset key changed" % row["point"])
        unstriped |= str(s["storage"].get("stripe_effective", "")).startswith("unsupported")
        if plots:
            for p in ("au", "latency", "timeline"):
                picture(os.path.join(d, row["dir"], p))
    with open(os.path.join(d, "sweep.md")) as f:
        md = f.read()
    for want in ("| point |", "bandwidth (MiB/s)", "## Recommendation", "best overall by"):
        if want not in md:
            fail("sweep.md lacks %r" % want)
    if unstriped and any(k["key"].startswith("storage.stripe_") for k in res["keys"]):
        if "striping is unsupported" not in md:
            fail("sweep.md does not warn that striping is unsupported")
    with open(os.path.join(d, "report.md")) as f:
        rep = f.read()
    if "## Recommendation" not in rep or "## Points" not in rep:
        fail("report.md lacks the recommendation or the points")
    if plots:
        for k in res["keys"]:
            if k["numeric"] and len(k["values"]) > 1 and not k.get("zipped"):
                picture(os.path.join(d, "sweep_bandwidth_" + k["name"]))
                if "sweep_bandwidth_%s.png" % k["name"] not in rep:
                    fail("report.md does not embed sweep_bandwidth_%s.png" % k["name"])
        picture(os.path.join(d, "sweep_bars"))
        picture(os.path.join(d, "sweep_latency"))
    if nsg:
        no_stripe_gain(d, res, nsg)
    print("ok: %d points" % npoints)


main()
