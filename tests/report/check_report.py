#!/usr/bin/env python3
"""report.md of a training run folder against its summary.json, as a reader compares them.

usage: check_report.py RUN_DIR [--passes N] [--accelerators N]

What it checks, member by member of summary.json (docs/architecture.md lists them, and a member
listed there without a check in CHECKED below fails this script); a member summary.json lacks
gives no section and no row:
- eval: a '## Evaluation' section saying the number of passes, one row per pass (repetition,
  after epoch, samples, bytes exact; samples/s and AU as rounded) and the AU row matching
  metric.eval_au_mean_percentage;
- accelerators[]: a '### Per accelerator' row per element (accelerator, rank, loader, samples,
  bytes exact; samples/s, MiB/s, AU as rounded), the section giving num_accelerators and
  accelerators_per_rank, and the What ran row "accelerator | KIND, N emulated (K per rank)";
- binding: the row "| binding |" with cpus_per_rank, cpu_list, ranks_sharing_cpus,
  threads_per_rank and readers_share_trainer_core; "| read threads |" with read_threads and
  read_threads_choice; "| trainer reads |" with trainer_reads and trainer_read_batches.
  binding's other members (cpus_online, affinity_cpus, cgroup_cpu_quota and its file,
  cpus_per_rank_min and _max, ranks[]) are in summary.json only and not checked;
- file_table_max_bytes and ranks[].file_table_bytes (the first 8 ranks): the file table row;
- mlperf: the row "| MLPerf dataset size |" with the model, accelerator_type and rule 3.1.2's
  result, files, minimum files, hosts, RAM per host and accelerators (mlperf.datasize);
- live: a '### Stragglers' section naming slowest_rank, slowest_host and slowest_lost_share
  (as rounded); stopped_early[]: one line per element with its repetition, reason and epochs;
- the whole report, through check_folder.py: no '?' as a value, no nan, inf or (null), no file
  named that the folder lacks, a title and '## What ran'.
--passes / --accelerators: the row counts wanted.
"""
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_folder  # noqa: E402


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


def check_binding(s, md):
    """The binding, read threads and trainer reads rows (binding members named in the doc)."""
    b = s.get("binding") if isinstance(s.get("binding"), dict) else {}
    choice = b.get("read_threads_choice")
    if isinstance(choice, str):
        if "| read threads | %s (%s) |" % (b["read_threads"], choice) not in md:
            fail("no read threads row saying '%s'" % choice)
    elif "| read threads |" in md:
        fail("a read threads row without binding.read_threads_choice")
    if isinstance(b.get("cpus_per_rank"), (int, float)):
        c, n = b["cpus_per_rank"], b.get("ranks_sharing_cpus")
        want = ("| binding | %.3g CPU%s per rank (rank 0: CPU list %s, used by %s rank%s of the "
                "node), %s threads per rank: %s |") % (
            c, "" if c == 1 else "s", b.get("cpu_list"), n, "" if n == 1 else "s",
            b.get("threads_per_rank"),
            "readers share the trainer's CPUs" if b.get("readers_share_trainer_core") is True
            else "each has a CPU of its own")
        if want not in md:
            fail("no binding row %r" % want)
    elif "| binding |" in md:
        fail("a binding row without binding.cpus_per_rank")
    tr = b.get("trainer_reads")
    if isinstance(tr, bool):
        want = "| trainer reads | %s: %s batches read by the trainer itself" % (
            "yes" if tr else "no", b.get("trainer_read_batches"))
        if want not in md:
            fail("no trainer reads row %r" % want)
    elif "| trainer reads |" in md:
        fail("a trainer reads row without binding.trainer_reads")


# Every member that docs/architecture.md's table "Members of a training run's summary.json"
# lists, and where this script checks it. A member added to that table without a check here
# fails every run of this script, so "report.md shows each of them" stays checked, not said.
CHECKED = {
    "num_accelerators": "the accelerator row with K > 1; with K = 1 it must equal num_ranks",
    "accelerators_per_rank": "the accelerator row and the Per accelerator section",
    "accelerators[]": "one Per accelerator row each",
    "binding": "the binding row",
    "binding.read_threads_choice": "the read threads row",
    "binding.trainer_reads": "the trainer reads row",
    "binding.trainer_read_batches": "the trainer reads row",
    "ranks[].file_table_bytes": "the file table row",
    "file_table_max_bytes": "the file table row",
    "eval": "the Evaluation section",
    "live": "the Stragglers section",
    "stopped_early[]": "one 'stopped early' line each",
    "mlperf": "the MLPerf dataset size row",
}


def documented_members():
    """The members named in the first cell of docs/architecture.md's members table."""
    src = os.environ.get("FEEDBENCH_SOURCE_DIR",
                         os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    doc = open(os.path.join(src, "docs", "architecture.md"), encoding="utf-8").read()
    part = doc.split("### Members of a training run's summary.json", 1)
    if len(part) != 2:
        fail("docs/architecture.md has no 'Members of a training run's summary.json' table")
    names = []
    for line in part[1].split("\n"):
        if line.startswith("| `"):
            names += re.findall(r"`([^`]+)`", line.split("|")[1])
    if not names:
        fail("docs/architecture.md's members table lists no member")
    return names


def check_live(s, md):
    lv = s.get("live") if isinstance(s.get("live"), dict) else None
    sec = section(md, "### Stragglers")
    if lv is None:
        if sec is not None:
            fail("a Stragglers section without live in summary.json")
    else:
        want = "Slowest rank: **rank %d** on host `%s`, %.1f %% of the time" % (
            lv["slowest_rank"], lv["slowest_host"], 100 * lv["slowest_lost_share"])
        if sec is None or want not in "\n".join(sec):
            fail("no Stragglers section saying: " + want)
    for st in s.get("stopped_early", []):
        want = "Repetition %d stopped early (%s) after %.1f s: %d epochs kept" % (
            st["repetition"], st["reason"], st["after_seconds"], st["epochs"])
        if want not in md:
            fail("no line saying: " + want)


def check_mlperf(s, md):
    m = s.get("mlperf") if isinstance(s.get("mlperf"), dict) else None
    d = m.get("datasize") if m and isinstance(m.get("datasize"), dict) else None
    if d is None:
        if "| MLPerf dataset size |" in md:
            fail("an MLPerf dataset size row without mlperf.datasize in summary.json")
        return
    want = ("| MLPerf dataset size | %s, %s: rule %s %s: %d training files, at least %d needed "
            "(%d hosts of %.1f GiB RAM, %d accelerators) |") % (
        m["model"], m["accelerator_type"], d["rule"],
        "holds" if d["holds"] else "does not hold", d["num_files_train"], d["min_files"],
        d["hosts"], d["client_memory_bytes"] / 2**30, d["accelerators"])
    if want not in md:
        fail("no MLPerf dataset size row %r" % want)


def main():
    for name in documented_members():
        if name not in CHECKED:
            fail("summary.json member %s is in docs/architecture.md's table, but "
                 "check_report.py has no check for it" % name)
    d = sys.argv[1]
    opts = dict(zip(sys.argv[2::2], sys.argv[3::2]))
    s = json.load(open(os.path.join(d, "summary.json")))
    md = open(os.path.join(d, "report.md")).read()
    found = check_folder.check_text(d, "report.md", md)
    if found:
        fail("; ".join(found))
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
        if not re.search(r"^\| accelerator \| \S+, %s emulated \(%s per rank\) \|$" % (
                s.get("num_accelerators"), s.get("accelerators_per_rank")), md, re.M):
            fail("no accelerator row giving num_accelerators and accelerators_per_rank")

    if not acc and "num_accelerators" in s and s["num_accelerators"] != s.get("num_ranks"):
        fail("num_accelerators %s with one accelerator per rank, but %s ranks" % (
            s["num_accelerators"], s.get("num_ranks")))
    check_binding(s, md)
    check_live(s, md)
    check_mlperf(s, md)
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
