#!/usr/bin/env python3
"""Checks that a run folder is consistent with itself and with what the config asked for.

summary.json is a contract (docs/results.md): bytes are bytes actually read, summed over ranks;
bandwidth is bytes / 2^20 / wall time; epochs.csv and ranks.csv say the same as summary.json;
AU lies in [0, 100] and the verdict follows from it and au_threshold.

usage: check_summary.py RUN_DIR [--ranks N] [--epochs E] [--reps R] [--bytes B]
                        [--samples S] [--ops O] [--rank-samples a,b,c] [--direct] [--page-cache M]
                        [--wall SECONDS]
    --bytes, --samples, --ops: totals over all epochs and repetitions.
    --rank-samples: samples each rank read over the whole run.
    --wall: mpiexec's wall time around the run (start-up and epochs fit inside it).
Exit 0 when everything holds; otherwise prints every failed check and exits 1. Every member a
check reads must be there: a missing one fails (KeyError), it never defaults.
"""
import argparse
import csv
import json
import math
import os
import sys

MIB = 1048576.0
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def close(a, b, rel=1e-6, abs_tol=1e-9):
    return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=abs_tol)


def walk_numbers(obj, path="summary"):
    """Every number in the summary is finite (JSON has no NaN; jansson would write null)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            walk_numbers(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            walk_numbers(v, f"{path}[{i}]")
    elif isinstance(obj, float):
        check(math.isfinite(obj), f"{path} is not finite: {obj}")


def timing_failures(s, own=0.0, wall=None):
    """summary.json "timing" (docs/results.md) of a run started by `feedbench run` under
    mpiexec: start-up counted from the process's start, MPI_Init inside it, the reductions
    measured; each a positive time (a clock that ran), and the start-up plus the workload's own
    time (own) inside mpiexec's wall time. Returns what fails."""
    bad = []
    t = s["timing"]
    up, init, red = t["startup_seconds"], t["mpi_init_seconds"], t["reduce_seconds"]
    for k, v in (("startup_seconds", up), ("mpi_init_seconds", init),
                 ("reduce_seconds", red)):
        if not (isinstance(v, float) and math.isfinite(v) and v > 0):
            bad.append(f"timing.{k} is {v!r}, not a positive time")
    if bad:
        return bad
    if t["startup_from"] != "process":
        bad.append(f"timing.startup_from {t['startup_from']!r}, want 'process'")
    if init > up:
        bad.append(f"MPI_Init ({init} s) is longer than the start-up it is part of ({up} s)")
    if wall is not None and up + own > wall:
        bad.append(f"start-up {up} s + the workload's {own} s > mpiexec's wall time {wall} s")
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir")
    ap.add_argument("--ranks", type=int)
    ap.add_argument("--epochs", type=int)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--bytes", type=int)
    ap.add_argument("--samples", type=int)
    ap.add_argument("--ops", type=int)
    ap.add_argument("--rank-samples")
    ap.add_argument("--direct", action="store_true")
    ap.add_argument("--page-cache")
    ap.add_argument("--nodes", type=int, help="num_nodes, and len(nodes)")
    ap.add_argument("--evictions", type=int, help="page_cache_evictions_per_epoch")
    ap.add_argument("--wall", type=float, help="mpiexec's wall time around the run")
    a = ap.parse_args()

    with open(os.path.join(a.run_dir, "summary.json")) as f:
        s = json.load(f)
    m = s["metric"]
    eps = s["epochs"]
    ranks = s["ranks"]
    walk_numbers(s)

    check(s["schema"] == 1, f"schema {s['schema']}")
    for k in ("feedbench_version", "workload", "run_id", "start", "end", "hostname",
              "config", "config_hash", "storage", "accelerator", "verdict", "warnings"):
        check(k in s, f"summary.json lacks '{k}'")
    if a.ranks is not None:
        check(s["num_ranks"] == a.ranks, f"num_ranks {s['num_ranks']} != {a.ranks}")
        check(len(ranks) == a.ranks, f"{len(ranks)} rank rows, want {a.ranks}")
    if a.epochs is not None:
        check(len(eps) == a.epochs * a.reps,
              f"{len(eps)} epoch rows, want {a.epochs} x {a.reps}")
        check(len(m["train_au_percentage"]) == a.epochs * a.reps, "train_au_percentage length")

    # Bytes, samples, ops: totals == sum over epochs == sum over ranks == what the config implies.
    for key, ekey in (("train_bytes_read", "bytes_read"), ("train_read_ops", "read_ops"),
                      ("train_samples", "samples")):
        tot = m[key]
        check(tot == sum(e[ekey] for e in eps), f"{key} {tot} != sum over epochs")
        check(tot == sum(r[ekey] for r in ranks), f"{key} {tot} != sum over ranks "
              f"{[r[ekey] for r in ranks]}")
    if a.bytes is not None:
        check(m["train_bytes_read"] == a.bytes,
              f"train_bytes_read {m['train_bytes_read']}, want {a.bytes}")
    if a.samples is not None:
        check(m["train_samples"] == a.samples,
              f"train_samples {m['train_samples']}, want {a.samples}")
    if a.ops is not None:
        check(m["train_read_ops"] == a.ops, f"train_read_ops {m['train_read_ops']}, want {a.ops}")
    if a.rank_samples:
        want = [int(x) for x in a.rank_samples.split(",")]
        got = [r["samples"] for r in ranks]
        check(got == want, f"samples per rank {got}, want {want}")
    check(m["train_bytes_read"] > 0, "nothing was read")

    # Rates: bytes / 2^20 / the sum of epoch wall times, within 1e-6.
    wall = sum(e["wall_seconds"] for e in eps)
    check(wall > 0, "zero wall time")
    # Start-up ends at the first epoch, which starts after the set-up of its repetition.
    for f in timing_failures(s, m["train_wall_seconds"], a.wall):
        check(False, f)
    check(s["timing"]["startup_seconds"] >= s["storage"]["setup_seconds"],
          f"start-up {s['timing']['startup_seconds']} s < the set-up inside it "
          f"{s['storage']['setup_seconds']} s")
    check(close(m["train_bandwidth_MiB_per_second"], m["train_bytes_read"] / MIB / wall),
          f"train_bandwidth_MiB_per_second {m['train_bandwidth_MiB_per_second']} != "
          f"{m['train_bytes_read'] / MIB / wall}")
    check(close(m["train_iops"], m["train_read_ops"] / wall), "train_iops != ops / wall")
    check(close(m["train_samples_per_second"], m["train_samples"] / wall),
          "train_samples_per_second != samples / wall")
    check(close(m["train_wall_seconds"], wall), "train_wall_seconds != sum of epochs")
    for e in eps:
        tag = f"epoch {e['repetition']}.{e['epoch']}"
        check(e["wall_seconds"] > 0, f"{tag}: zero wall time")
        check(close(e["bandwidth_MiB_per_second"], e["bytes_read"] / MIB / e["wall_seconds"]),
              f"{tag}: bandwidth != bytes / wall")
        check(close(e["iops"], e["read_ops"] / e["wall_seconds"]), f"{tag}: iops != ops / wall")
        check(close(e["samples_per_second"], e["samples"] / e["wall_seconds"]),
              f"{tag}: samples/s != samples / wall")
        check(0 <= e["au_percentage"] <= 100, f"{tag}: AU {e['au_percentage']} outside [0, 100]")
        lat = e["latency_seconds"]
        check(0 <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p999"] <= lat["max"],
              f"{tag}: latency quantiles out of order {lat}")
        check(lat["count"] == e["read_ops"],
              f"{tag}: latency count {lat['count']} != read_ops {e['read_ops']}")
    # DLIO-style per-epoch lists follow the epochs.
    check([round(x, 6) for x in m["train_au_percentage"]] ==
          [round(e["au_percentage"], 6) for e in eps], "train_au_percentage != epochs")
    check(all(close(x, e["samples_per_second"]) for x, e in
              zip(m["train_throughput_samples_per_second"], eps)),
          "train_throughput_samples_per_second != epochs")
    # The headline is the mean over ranks of each rank's own AU: it lies within their range.
    raus = [r["au_percentage"] for r in ranks]
    check(min(raus) - 1e-6 <= m["train_au_mean_percentage"] <= max(raus) + 1e-6,
          f"headline AU {m['train_au_mean_percentage']} outside the per-rank range {raus}")
    if a.reps == 1:
        check(close(s["repetitions"][0]["au_percentage"], m["train_au_mean_percentage"]),
              "repetition AU != headline AU")
    check(close(m["train_au_rank_min_percentage"], min(raus)) and
          close(m["train_au_rank_max_percentage"], max(raus)), "per-rank AU range fields")
    check(0 <= m["train_au_mean_percentage"] <= 100, "AU mean outside [0, 100]")
    bws = [e["bandwidth_MiB_per_second"] for e in eps]
    check(close(m["train_io_mean_MB_per_second"], sum(bws) / len(bws)),
          "train_io_mean_MB_per_second != mean of epoch bandwidths")
    lat = m["train_latency_seconds"]
    check(0 <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p999"] <= lat["max"],
          f"latency quantiles out of order {lat}")
    check(m["train_data_wait_seconds"]["p50"] <= m["train_data_wait_seconds"]["p99"],
          "data wait p50 > p99")

    # Verdict from AU and the threshold.
    thr = s["config"]["train"]["au_threshold"] * 100
    ok = m["train_au_mean_percentage"] >= thr
    check(m["train_au_meet_expectation"] == ("success" if ok else "fail"),
          f"train_au_meet_expectation {m['train_au_meet_expectation']} with AU "
          f"{m['train_au_mean_percentage']} and threshold {thr}")
    # Lost time: fractions of step time that add up with AU to the whole step.
    lost = s["lost_time"]
    check(set(lost) == {"data_wait", "copy", "barrier", "other"}, f"lost_time keys {lost}")
    check(all(0 <= v <= 1 for v in lost.values()), f"lost_time outside [0, 1]: {lost}")
    if any(r["au_percentage"] > 0 for r in ranks):
        check(abs(sum(lost.values()) + m["train_au_mean_percentage"] / 100 - 1) < 1e-3,
              f"AU {m['train_au_mean_percentage']} + lost time {lost} != 100 %")
    for e in eps:
        check(set(e["lost_time"]) == set(lost), f"epoch {e['epoch']}: lost_time keys")
    main_loss = max(lost, key=lost.get)
    want = ("compute-bound" if ok else "storage-bound" if main_loss == "data_wait" and
            lost["data_wait"] > 0 else "below threshold, not storage-bound")
    check(s["verdict"] == want,
          f"verdict {s['verdict']} with AU {m['train_au_mean_percentage']}, threshold {thr} "
          f"and lost time {lost}")
    check(f"{m['train_au_mean_percentage']:.2f} %" in s["verdict_reason"],
          f"verdict_reason does not give the AU: {s['verdict_reason']}")
    dl = m["dlio_comparable"]
    check(0 <= dl["train_au_mean_percentage"] <= 100 and
          dl["train_throughput_mean_samples_per_second"] >= 0, f"dlio_comparable {dl}")
    for r in ranks:
        check(0 <= r["au_percentage"] <= 100, f"rank {r['rank']}: AU {r['au_percentage']}")
        if r["wall_seconds"] > 0:
            check(close(r["bandwidth_MiB_per_second"], r["bytes_read"] / MIB / r["wall_seconds"]),
                  f"rank {r['rank']}: bandwidth != bytes / wall")
    check([r["rank"] for r in ranks] == list(range(len(ranks))), "ranks out of order")
    # Peak RSS per rank (getrusage): a real process holds MiBs, never more than the host has.
    host_mem = s["storage"]["host_memory_bytes"]
    for r in ranks:
        rss = r["peak_rss_bytes"]
        check(isinstance(rss, int) and (1 << 20) < rss and (not host_mem or rss < host_mem),
              f"rank {r['rank']}: peak_rss_bytes {rss}")
    check(s["peak_rss_max_bytes"] == max(r["peak_rss_bytes"] for r in ranks),
          f"peak_rss_max_bytes {s['peak_rss_max_bytes']} is not the ranks' largest")

    # Nodes: every rank on exactly one node, listed under it with its host; the nodes' bytes
    # add up to the total; local ranks 0..n-1 on each node; the spread is over the nodes.
    nodes = s["nodes"]
    check(s["num_nodes"] == len(nodes), f"num_nodes {s['num_nodes']} != {len(nodes)} nodes")
    if a.nodes is not None:
        check(len(nodes) == a.nodes, f"{len(nodes)} nodes, want {a.nodes}")
    listed = sorted(r for n in nodes for r in n["ranks"])
    check(listed == list(range(len(ranks))), f"ranks listed under nodes: {listed}")
    check(s["hosts"] == [n["host"] for n in nodes], f"hosts {s['hosts']}")
    for k, n in enumerate(nodes):
        check(n["node"] == k, f"node {k} numbered {n['node']}")
        mine = [ranks[r] for r in n["ranks"]]
        check(all(r["node"] == k and r["host"] == n["host"] for r in mine),
              f"node {k}: ranks {n['ranks']} say another node or host")
        check(sorted(r["local_rank"] for r in mine) == list(range(len(mine))),
              f"node {k}: local ranks {[r['local_rank'] for r in mine]}")
        check(n["bytes_read"] == sum(r["bytes_read"] for r in mine), f"node {k}: bytes_read")
        check(close(n["wall_seconds"], max(r["wall_seconds"] for r in mine)),
              f"node {k}: wall is not its ranks' longest")
        if n["wall_seconds"] > 0:
            check(close(n["bandwidth_MiB_per_second"], n["bytes_read"] / MIB / n["wall_seconds"]),
                  f"node {k}: bandwidth != bytes / wall")
    if nodes:
        check(sum(n["bytes_read"] for n in nodes) == m["train_bytes_read"],
              "the nodes' bytes do not add up to train_bytes_read")
        per = [len(n["ranks"]) for n in nodes]
        check(s["ranks_per_node"] == {"min": min(per), "max": max(per)},
              f"ranks_per_node {s['ranks_per_node']}, nodes hold {per}")
        bw = [n["bandwidth_MiB_per_second"] for n in nodes]
        nb = s["node_bandwidth_MiB_per_second"]
        check(close(nb["min"], min(bw)) and close(nb["max"], max(bw)) and
              close(nb["mean"], sum(bw) / len(bw)),
              f"node_bandwidth_MiB_per_second {nb} over {bw}")
    if a.evictions is not None:
        got = s["storage"]["page_cache_evictions_per_epoch"]
        check(got == a.evictions, f"page_cache_evictions_per_epoch {got}, want {a.evictions}")

    # Repetitions: n, and never NaN for a repetition that did not run.
    rs = s["repetition_stats"]
    if check(rs is not None, "repetition_stats is null"):
        for k, st in rs.items():
            check(st["n"] == a.reps, f"repetition_stats.{k}.n = {st['n']}, want {a.reps}")
            if a.reps > 1:
                check(st["stddev"] is not None and st["stddev"] >= 0,
                      f"repetition_stats.{k}.stddev {st['stddev']}")
                check(st["min"] <= st["mean"] <= st["max"], f"repetition_stats.{k} min/mean/max")
        check(len(s["repetitions"]) == a.reps, "repetitions array length")
        if a.reps >= 1:
            rb = sum(r["bytes_read"] for r in s["repetitions"])
            check(rb == m["train_bytes_read"], "repetitions' bytes do not add up")

    # CPU cost: user + system seconds of every rank's process over its timed epochs; totals
    # add up over epochs and ranks, per GiB and cores busy follow from them.
    cpu = m["train_cpu_user_seconds"] + m["train_cpu_system_seconds"]
    check(cpu > 0, f"no CPU time recorded: {cpu}")
    check(close(cpu, sum(e["cpu_user_seconds"] + e["cpu_system_seconds"] for e in eps),
                rel=1e-6, abs_tol=1e-6), "CPU seconds != sum over epochs")
    check(close(cpu, sum(r["cpu_user_seconds"] + r["cpu_system_seconds"] for r in ranks),
                rel=1e-6, abs_tol=1e-6), "CPU seconds != sum over ranks")
    check(close(m["train_cpu_seconds_per_GiB"], cpu / (m["train_bytes_read"] / MIB / 1024)),
          f"train_cpu_seconds_per_GiB {m['train_cpu_seconds_per_GiB']} != CPU s / GiB")
    check(close(m["train_cores_busy_per_accelerator"], cpu / (wall * s["num_ranks"])),
          "train_cores_busy_per_accelerator != CPU s / (ranks x wall)")

    # The file table each rank holds: positive, and the maximum is the largest rank's.
    tb = [r["file_table_bytes"] for r in s["ranks"]]
    check(min(tb) > 0 and s["file_table_max_bytes"] == max(tb),
          f"file_table_bytes {tb}, max {s.get('file_table_max_bytes')}")
    if s["config"]["dataset"]["file_access"] == "per_rank" and s["num_ranks"] > 1 \
            and s["config"]["dataset"]["num_files_train"] >= s["num_ranks"]:
        check(max(tb) < s["ranks"][0]["file_table_bytes"] * s["num_ranks"],
              f"per_rank file tables {tb} are not a share of the files")

    # Binding: CPUs per rank from the affinity mask and the cgroup limit, every rank listed,
    # and the warning exactly when the reader threads outnumber the rank's CPUs.
    b = s["binding"]
    if check(b is not None, "binding is null"):
        check(len(b["ranks"]) == s["num_ranks"], "binding.ranks length")
        check(0 < b["cpus_per_rank"] <= b["affinity_cpus"] <= b["cpus_online"],
              f"binding CPUs {b['cpus_per_rank']} / {b['affinity_cpus']} / {b['cpus_online']}")
        check(b["cpus_per_rank_min"] <= b["cpus_per_rank"] <= b["cpus_per_rank_max"],
              "binding min/max")
        check(b["readers_share_trainer_core"] == (b["cpus_per_rank"] < b["threads_per_rank"]),
              "readers_share_trainer_core does not follow from CPUs and threads")
        rt = b["read_threads"]  # read_threads = auto resolved (the config may say "auto")
        cfg_rt = s["config"]["reader"]["read_threads"]
        check(cfg_rt == "auto" or cfg_rt == rt, f"binding.read_threads {rt}, config {cfg_rt}")
        if b["threads_per_rank"] > 1:
            check(b["threads_per_rank"] == rt + 1, f"threads_per_rank {b['threads_per_rank']}")
        warned = any(w.startswith("read_threads = ") or ": read_threads = " in w
                     for w in s["warnings"])
        over = b["threads_per_rank"] > 1 and rt > min(r["cpus"] for r in b["ranks"])
        check(warned == over, f"read_threads warning {warned}, read_threads {rt} on "
              f"{[r['cpus'] for r in b['ranks']]} CPUs")

    # Storage and cache state.
    st = s["storage"]
    check(st["direct"] == a.direct, f"storage.direct {st['direct']}, want {a.direct}")
    if a.page_cache:
        check(st["page_cache"] == a.page_cache,
              f"storage.page_cache {st['page_cache']}, want {a.page_cache}")
    if a.direct or st["page_cache"] != "keep":
        check(st["cache_resident"] is False, "cache_resident with direct I/O or eviction")

    # epochs.csv and ranks.csv say what summary.json says.
    with open(os.path.join(a.run_dir, "epochs.csv")) as f:
        rows = list(csv.DictReader(f))
    if check(len(rows) == len(eps), f"epochs.csv has {len(rows)} rows, summary {len(eps)}"):
        for row, e in zip(rows, eps):
            tag = f"epochs.csv {row['repetition']}.{row['epoch']}"
            check(int(row["repetition"]) == e["repetition"] and int(row["epoch"]) == e["epoch"],
                  f"{tag}: order")
            for c, k in (("bytes_read", "bytes_read"), ("read_ops", "read_ops"),
                         ("samples", "samples")):
                check(int(row[c]) == e[k], f"{tag}: {c} {row[c]} != {e[k]}")
            for c, k in (("wall_seconds", "wall_seconds"),
                         ("bandwidth_MiB_per_second", "bandwidth_MiB_per_second"),
                         ("iops", "iops"), ("samples_per_second", "samples_per_second"),
                         ("au_percentage", "au_percentage")):
                check(close(row[c], e[k], rel=1e-5, abs_tol=1e-5), f"{tag}: {c} {row[c]} != {e[k]}")
    # ranks.csv: one whole-run row per rank (interval empty), then with live statistics one
    # row per rank and interval (docs/results.md), whose bytes add up to the rank's.
    with open(os.path.join(a.run_dir, "ranks.csv")) as f:
        every = list(csv.DictReader(f))
    rows = [row for row in every if not row.get("interval")]
    for r in ranks:
        live = [row for row in every if row.get("interval") and int(row["rank"]) == r["rank"]]
        if live and "eval" not in s:
            got = sum(int(row["bytes_read"]) for row in live)
            check(got == r["bytes_read"],
                  f"ranks.csv rank {r['rank']}: per-interval bytes add up to {got}, "
                  f"not {r['bytes_read']}")
    if check(len(rows) == len(ranks), f"ranks.csv has {len(rows)} rows"):
        for row, r in zip(rows, ranks):
            tag = f"ranks.csv rank {row['rank']}"
            check(int(row["rank"]) == r["rank"], f"{tag}: order")
            for c in ("bytes_read", "read_ops", "samples"):
                check(int(row[c]) == r[c], f"{tag}: {c} {row[c]} != {r[c]}")
            check(close(row["au_percentage"], r["au_percentage"], rel=1e-5, abs_tol=1e-5),
                  f"{tag}: AU")
    # timeline.csv (first repetition): known kinds, one epoch mark per epoch on every rank,
    # barrier intervals on the trainer's lane when step barriers are on.
    with open(os.path.join(a.run_dir, "timeline.csv")) as f:
        tl = list(csv.DictReader(f))
    kinds = {row["kind"] for row in tl}
    check(kinds <= {"read", "wait", "compute", "barrier", "epoch"}, f"timeline kinds {kinds}")
    if a.epochs:
        for q in range(len(ranks)):
            marks = [row for row in tl if row["kind"] == "epoch" and int(row["rank"]) == q]
            check(len(marks) == a.epochs and all(row["thread"] == "0" for row in marks),
                  f"timeline.csv: rank {q} has {len(marks)} epoch marks, want {a.epochs}")
    if s["config"]["train"]["step_barrier"] and len(ranks) > 1:
        check(any(row["kind"] == "barrier" and row["thread"] == "0" for row in tl),
              "timeline.csv: no barrier interval on the trainer's lane")
    for name in ("config.ini", "table.md", "latency.csv"):
        check(os.path.exists(os.path.join(a.run_dir, name)), f"{name} missing")
    # latency.csv is the run's merged histogram: upper edges rising, counts adding up to every
    # read call of the run (all repetitions and epochs), the cumulative fraction ending at 1.
    if os.path.exists(os.path.join(a.run_dir, "latency.csv")):
        with open(os.path.join(a.run_dir, "latency.csv")) as f:
            lrows = list(csv.DictReader(f))
        check(lrows and list(lrows[0]) == ["bucket_upper_seconds", "count", "cumulative_fraction"],
              f"latency.csv columns {list(lrows[0]) if lrows else None}")
        if lrows and list(lrows[0]) == ["bucket_upper_seconds", "count", "cumulative_fraction"]:
            edges = [float(x["bucket_upper_seconds"]) for x in lrows]
            counts = [int(x["count"]) for x in lrows]
            check(edges == sorted(edges) and len(set(edges)) == len(edges),
                  "latency.csv: bucket edges not rising")
            ops = sum(e["read_ops"] for e in eps)
            check(sum(counts) == ops, f"latency.csv counts {sum(counts)} != {ops} read calls")
            check(close(float(lrows[-1]["cumulative_fraction"]), 1.0),
                  "latency.csv: cumulative fraction does not end at 1")

    if failures:
        for f in failures:
            print("summary check failed:", f, file=sys.stderr)
        return 1
    return 0


def run():
    """A member the checks read and summary.json lacks fails the check (never a default)."""
    try:
        return main()
    except KeyError as e:
        for f in failures:
            print("summary check failed:", f, file=sys.stderr)
        print(f"summary check failed: a member is missing: {e} (summary.json, epochs.csv, "
              "ranks.csv, timeline.csv or latency.csv)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(run())
