#!/usr/bin/env python3
"""report.md of a run folder against its summary.json, as a reader compares them.

usage: check_report.py RUN_DIR [--passes N] [--accelerators N]

Every field summary.json has is in report.md with its value: the evaluation passes (one row per
pass: repetition, after epoch, samples, bytes exact), the per-accelerator rows (accelerator,
rank, loader, samples, bytes exact; samples/s, MiB/s, AU as rounded), how read_threads was chosen
and each rank's file table bytes. A field summary.json lacks gives no section and no row, and
report.md never shows nan, inf or (null). --passes / --accelerators: the row counts wanted.
"""
import json
import math
import os
import re
import sys


def fail(msg):
    sys.exit("report.md: " + msg)


def section(md, heading):
    """The lines under a heading, up to the next heading of any level."""
    lines = md.split("\n")
    if heading not in lines:
        return None
    out = []
    for line in lines[lines.index(heading) + 1:]:
        if line.startswith("#"):
            break
        out.append(line)
    return out


def tables(lines):
    """Each table in lines as a list of rows (lists of cells), header row first, rule dropped."""
    res, cur = [], None
    for line in lines + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cur is None:
                cur = []
                res.append(cur)
            if not all(re.fullmatch(r"-*:?-*:?", c) for c in cells):
                cur.append(cells)
        else:
            cur = None
    return res


def close(cell, want):
    """The cell is want as report_format_number (bench/report.c) writes it."""
    a = abs(want)
    if a >= 1000 or a == 0:
        text = "%.0f" % want
    elif a >= 10:
        text = "%.1f" % want
    elif a >= 0.1:
        text = "%.2f" % want
    else:
        text = "%.3g" % want
    return cell == text


def main():
    d = sys.argv[1]
    opts = dict(zip(sys.argv[2::2], sys.argv[3::2]))
    s = json.load(open(os.path.join(d, "summary.json")))
    md = open(os.path.join(d, "report.md")).read()
    for bad in ("nan", "inf", "(null)"):
        if re.search(r"(?<![\w.])" + re.escape(bad) + r"(?![\w.])", md, re.I):
            fail("shows %r" % bad)
    if not md.startswith("# feedbench run:") or "## What ran" not in md:
        fail("no title or no '## What ran'")

    ev = s.get("eval") if isinstance(s.get("eval"), dict) else None
    ev_sec = section(md, "## Evaluation")
    if ev is None:
        if ev_sec is not None:
            fail("an Evaluation section without eval in summary.json")
    else:
        passes = ev.get("passes") if isinstance(ev.get("passes"), list) else []
        if "--passes" in opts and len(passes) != int(opts["--passes"]):
            fail("summary.json has %d passes, want %s" % (len(passes), opts["--passes"]))
        if ev_sec is None:
            fail("no '## Evaluation' section")
        n = len(passes)
        if not re.search(r"\b%d pass%s\b" % (n, "" if n == 1 else "es"), "\n".join(ev_sec)):
            fail("the Evaluation section does not say %d pass(es)" % n)
        rows = [t for t in tables(ev_sec) if t[0][:2] == ["repetition", "after epoch"]]
        if n and len(rows) != 1:
            fail("no per-pass table under '## Evaluation'")
        rows = rows[0][1:] if rows else []
        if len(rows) != n:
            fail("%d pass rows, summary.json has %d passes" % (len(rows), n))
        for r, p in zip(rows, passes):
            want = [str(p[k]) for k in ("repetition", "after_epoch", "samples", "bytes_read")]
            if r[:4] != want:
                fail("pass row %s, summary.json says %s" % (r[:4], want))
            if not close(r[7], p["samples_per_second"]) or not close(r[8], p["au_percentage"]):
                fail("pass row %s: samples/s or AU do not match %s" % (r, p))
        m = s.get("metric", {})
        if "eval_au_mean_percentage" in m and n:
            au = [t for t in tables(ev_sec) if t[0][0] == "metric"]
            au = [x for x in au[0][1:] if x[0] == "AU"] if au else []
            if not au or not close(au[0][1], m["eval_au_mean_percentage"]):
                fail("no evaluation AU row matching metric.eval_au_mean_percentage")

    acc = s.get("accelerators") if isinstance(s.get("accelerators"), list) else []
    acc_sec = section(md, "### Per accelerator")
    if not acc:
        if acc_sec is not None:
            fail("a Per accelerator section without accelerators in summary.json")
    else:
        if "--accelerators" in opts and len(acc) != int(opts["--accelerators"]):
            fail("summary.json has %d accelerators, want %s" % (len(acc), opts["--accelerators"]))
        if acc_sec is None:
            fail("no '### Per accelerator' section")
        t = [t for t in tables(acc_sec) if t[0][0] == "accelerator"]
        rows = t[0][1:] if t else []
        if len(rows) != len(acc):
            fail("%d accelerator rows, summary.json has %d" % (len(rows), len(acc)))
        for r, a in zip(rows, acc):
            want = [str(a[k]) for k in ("accelerator", "rank", "loader", "samples", "bytes_read")]
            if r[:5] != want:
                fail("accelerator row %s, summary.json says %s" % (r[:5], want))
            for cell, k in zip(r[5:8], ("samples_per_second", "bandwidth_MiB_per_second",
                                       "au_percentage")):
                if not close(cell, a[k]):
                    fail("accelerator row %s: %s is %s in summary.json" % (r, k, a[k]))
        if "%d emulated accelerators, %d per rank" % (len(acc), s["accelerators_per_rank"]) \
                not in "\n".join(acc_sec):
            fail("the Per accelerator section does not give the counts")

    b = s.get("binding") if isinstance(s.get("binding"), dict) else {}
    choice = b.get("read_threads_choice")
    if isinstance(choice, str):
        if "| read threads | %s (%s) |" % (b["read_threads"], choice) not in md:
            fail("no read threads row saying '%s'" % choice)
    elif "| read threads |" in md:
        fail("a read threads row without binding.read_threads_choice")
    tmax = s.get("file_table_max_bytes")
    if isinstance(tmax, (int, float)):
        line = [x for x in md.split("\n") if x.startswith("| file table (memory) |")]
        if not line or "%d bytes on the largest rank" % tmax not in line[0]:
            fail("no file table row with %d bytes" % tmax)
        for i, r in enumerate(s.get("ranks", [])[:8]):
            if "rank %d %d" % (i, r["file_table_bytes"]) not in line[0]:
                fail("the file table row lacks rank %d's %d bytes" % (i, r["file_table_bytes"]))
    elif "| file table" in md:
        fail("a file table row without file_table_max_bytes")


if __name__ == "__main__":
    main()
