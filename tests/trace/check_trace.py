#!/usr/bin/env python3
"""Validates a run folder's trace.pfw against the Chrome trace event format and its run.

The file must be what dftracer writes and its readers take: a "[" line, one JSON object per
line, a "]" line. Each event is checked against the schema below (the Trace Event Format's
complete events "X" and metadata events "M"); then the trace must say what summary.json says:
as many read events as read calls, their sizes summing to the bytes read, opens as counted, one
compute event and one data_wait event per step, every rank (pid) and the reader threads present.

usage: check_trace.py RUN_DIR --batch B [--cat CAT] [--compute-us US]
       check_trace.py RUN_DIR --metadata
    --cat: the category every read must carry (POSIX, io_uring)
    --compute-us: each compute event lasts at least this long (the configured compute time)
    --metadata: a metadata workload's run: the namespace calls on its files (open, stat,
      unlink) and their writes and reads as many as summary.json's operations of each phase,
      and a mkdir event for each rank's folder
Exit 0 when everything holds; otherwise prints every failed check and exits 1.
"""
import argparse
import json
import sys

# The Chrome trace event schema for the events feedbench writes: member -> accepted types.
SCHEMA_X = {"name": str, "cat": str, "ph": str, "pid": int, "tid": int, "ts": (int, float),
            "dur": (int, float), "args": dict}
SCHEMA_M = {"name": str, "ph": str, "pid": int, "tid": int, "args": dict}
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def event_ok(ev, where):
    if not check(isinstance(ev, dict), f"{where}: not an object"):
        return False
    ph = ev.get("ph")
    if not check(ph in ("X", "M"), f"{where}: ph {ph!r} is not X or M"):
        return False
    schema = SCHEMA_X if ph == "X" else SCHEMA_M
    ok = True
    for key, typ in schema.items():
        val = ev.get(key)
        ok &= check(isinstance(val, typ) and not isinstance(val, bool),
                    f"{where}: {key} is {val!r}, not {typ}")
    if ok and ph == "X":
        ok &= check(ev["ts"] >= 0 and ev["dur"] >= 0, f"{where}: negative ts or dur")
    return ok


def load(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    check(lines[0] == "[", "the first line is not '['")
    check(lines[-2:] == ["]", ""], "the last line is not ']'")
    events = []
    for n, line in enumerate(lines[1:-2], start=2):
        try:
            ev = json.loads(line)
        except ValueError as e:
            check(False, f"line {n}: not JSON ({e})")
            continue
        if event_ok(ev, f"line {n}"):
            events.append(ev)
    return events


def metadata(run, s, events):
    """The metadata workload: every file's namespace calls traced, counted per phase."""
    ops = {}
    for r in s["metadata"]["results"]:
        ops[r["phase"]] = ops.get(r["phase"], 0) + r["operations"]
    on_files = {}
    for e in events:
        f = e["args"].get("fname", "") if e["ph"] == "X" else ""
        if "/mdtest." in f and "/file." in f:
            on_files[e["name"]] = on_files.get(e["name"], 0) + 1
    want = {"open": ops["create"] + ops["read"], "close": ops["create"] + ops["read"],
            "write": ops["create"], "read": ops["read"], "stat": ops["stat"],
            "unlink": ops["remove"]}
    for name, n in want.items():
        check(on_files.get(name, 0) == n,
              f"{on_files.get(name, 0)} {name} events on the files, summary.json's phases say {n}")
    mk = {e["args"]["fname"] for e in events if e["ph"] == "X" and e["name"] == "mkdir"}
    for rank in range(s["num_ranks"]):
        check(any(f.endswith(f"/mdtest.{rank}") for f in mk), f"no mkdir of mdtest.{rank}: {mk}")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)
    print("trace ok (metadata): " + ", ".join(f"{k} {v}" for k, v in sorted(on_files.items())))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--metadata", action="store_true")
    ap.add_argument("--batch", type=int)
    ap.add_argument("--cat", default="POSIX")
    ap.add_argument("--compute-us", type=float, default=0)
    a = ap.parse_args()
    s = json.load(open(f"{a.run}/summary.json"))
    events = load(f"{a.run}/trace.pfw")
    if a.metadata:
        return metadata(a.run, s, events)
    x = [e for e in events if e["ph"] == "X"]
    reads = [e for e in x if e["name"] == "read"]
    m = s["metric"]
    check(len(reads) == m["train_read_ops"],
          f"{len(reads)} read events, summary.json says {m['train_read_ops']} read calls")
    got = sum(e["args"]["size"] for e in reads)
    check(got == m["train_bytes_read"],
          f"read events sum to {got} bytes, summary.json says {m['train_bytes_read']}")
    cats = {e["cat"] for e in reads}
    check(cats == {a.cat}, f"reads of categories {sorted(cats)}, expected {a.cat}")
    check(all(e["args"]["fname"].startswith("/") for e in reads), "a read names no file")
    opens = sum(ep["opens"] for ep in s["epochs"])
    nopen = sum(1 for e in x if e["name"] == "open")
    check(nopen == opens, f"{nopen} open events, summary.json says {opens} opens")
    nclose = sum(1 for e in x if e["name"] == "close")
    check(nclose == nopen, f"{nclose} close events for {nopen} opens")
    steps = sum(r["samples"] // a.batch for r in s["ranks"])
    for name in ("compute", "data_wait"):
        n = sum(1 for e in x if e["name"] == name)
        check(n == steps, f"{n} {name} events for {steps} steps")
    short = [e for e in x if e["name"] == "compute" and e["dur"] < a.compute_us]
    check(not short, f"{len(short)} compute events shorter than {a.compute_us} us")
    pids = {e["pid"] for e in x}
    check(pids == set(range(s["num_ranks"])), f"ranks (pid) {sorted(pids)}")
    for pid in pids:
        readers = {e["tid"] for e in reads if e["pid"] == pid}
        trainer = {e["tid"] for e in x if e["pid"] == pid and e["name"] == "compute"}
        check(len(trainer) == 1, f"rank {pid}: compute on threads {trainer}")
        check(len(readers) >= 1, f"rank {pid}: no read events")
    names = sum(1 for e in events if e["ph"] == "M" and e["name"] == "process_name")
    check(names == s["num_ranks"], f"{names} process_name events")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)
    print(f"trace ok: {len(events)} events, {len(reads)} reads, {steps} steps")


if __name__ == "__main__":
    main()
