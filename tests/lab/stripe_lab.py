#!/usr/bin/env python3
"""Stripe sweep on the lab's CephFS: predicted against measured read bandwidth.

The lab's OSDs each send at most L MiB/s (tc on their links), so a read whose data sits on a
set of OSDs lasts at least max over OSDs (bytes on that OSD) / L. For a file striped evenly
over k OSDs that is k x L; when CRUSH puts two objects of one stripe on the same OSD, the busiest
OSD sets the pace. The prediction is therefore

    predicted = min(L x bytes / max bytes on one OSD, C)

where C is the client's own limit, measured on the lab with the links unshaped. "servers
spanned" counts the OSDs holding the file's objects (from `ceph osd map` of every object);
for an even spread the prediction is min(spanned x L, C).

Used by the lab tests (tests/lab/labtest.sh: --assert) and by tests/perf/stripe_lab.sh (the
benchmark: larger files, more record sizes, prints the table).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LAB_SH = os.path.join(HERE, "lab.sh")
MIB = 1 << 20
# tc shapes whole frames; a full TCP segment carries 1448 payload bytes in a 1514-byte frame
# (MTU 1500 + Ethernet header; TCP timestamps on), so the payload rate is this fraction of it.
PAYLOAD_FRACTION = 1448 / 1514


def lab(*args, capture=True):
    r = subprocess.run([LAB_SH, *args], capture_output=capture, text=True)
    if r.returncode != 0:
        raise SystemExit(f"lab.sh {' '.join(args)} failed ({r.returncode}): {r.stderr.strip()}")
    return r.stdout


def lab_env():
    env = {}
    for line in lab("env").splitlines():
        k, _, v = line.partition("=")
        env[k] = v
    return env


def layout(path):
    def x(name):
        return int(os.getxattr(path, "ceph.file.layout." + name))

    return {"stripe_count": x("stripe_count"), "stripe_unit": x("stripe_unit"),
            "object_size": x("object_size")}


def object_bytes(size, lay):
    """Bytes of the file in each RADOS object index (CephFS file striping)."""
    su, sc, osz = lay["stripe_unit"], lay["stripe_count"], lay["object_size"]
    per_obj = osz // su
    out = {}
    off = 0
    while off < size:
        block = off // su
        obj = (block // (sc * per_obj)) * sc + block % sc
        n = min(su, size - off)
        out[obj] = out.get(obj, 0) + n
        off += n
    return out


def osd_of(obj):
    j = json.loads(lab("ceph", "osd", "map", "cephfs_data", obj, "-f", "json"))
    return int(j["acting_primary"])


def placement(paths):
    """Per OSD bytes over the files, the layout of each file, objects and their OSDs."""
    per_osd = {}
    objs = []
    lays = []
    for p in paths:
        st = os.stat(p)
        lay = layout(p)
        lays.append(lay)
        for idx, n in sorted(object_bytes(st.st_size, lay).items()):
            name = "%x.%08x" % (st.st_ino, idx)
            osd = osd_of(name)
            objs.append((name, osd, n))
            per_osd[osd] = per_osd.get(osd, 0) + n
    return per_osd, lays, objs


def data_files(d):
    return sorted(os.path.join(d, f) for f in os.listdir(d)
                  if not f.startswith("feedbench-") and not f.startswith("."))


def set_dir_layout(d, count, unit, osize):
    os.makedirs(d, exist_ok=True)
    os.setxattr(d, "ceph.dir.layout",
                f"stripe_unit={unit} stripe_count={count} object_size={osize}".encode())


CONFIG = """[workload]
name = {name}
description = lab stripe sweep point
[dataset]
data_dir = {data}
format = {fmt}
num_files_train = {nfiles}
num_samples_per_file = {nsamples}
record_length_bytes = {record}
file_access = {access}
verify = true
[storage]
backend = posix
page_cache = evict
[reader]
batch_size = 1
read_threads = {threads}
prefetch_size = 2
[train]
epochs = {epochs}
computation_time = 0
[output]
dir = {out}
plots = false
"""


class Lab:
    def __init__(self, args):
        self.args = args
        env = lab_env()
        self.dir = env["FEEDBENCH_LAB_DIR"]
        self.osds = int(env["OSDS"])
        self.rate = int(env["OSD_MIBS"])
        self.L = self.rate * PAYLOAD_FRACTION
        self.common = os.path.join(self.dir, "cephfs")  # what ranks see
        self.local = os.path.join(self.dir, "mnt", "h1")  # the same tree, from here
        self.work = args.work

    def hosts_arg(self, hosts):
        per = self.args.ranks_per_host
        return ",".join(f"labh{i + 1}:{per}" for i in range(hosts)), per * hosts

    def run(self, cfg_text, name, hosts, cmd="run", extra=()):
        os.makedirs(self.work, exist_ok=True)
        cfg = os.path.join(self.work, name + ".ini")
        with open(cfg, "w") as f:
            f.write(cfg_text)
        hl, n = self.hosts_arg(hosts)
        argv = [LAB_SH, "mpirun", "-H", hl, "-n", str(n),
                "-x", "OMPI_MCA_btl_vader_single_copy_mechanism=none",
                self.args.feedbench, cmd, cfg, "--quiet", *extra]
        t0 = time.monotonic()
        r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise SystemExit(f"feedbench {cmd} {name} failed ({r.returncode}):\n"
                             f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
        if cmd != "run":
            return None
        out = os.path.join(self.work, "results")
        runs = sorted((os.path.join(out, d) for d in os.listdir(out) if d.startswith(name + "-")),
                      key=os.path.getmtime)
        with open(os.path.join(runs[-1], "summary.json")) as f:
            s = json.load(f)
        s["_folder"] = runs[-1]
        s["_seconds"] = time.monotonic() - t0
        return s

    def shape(self, mibs):
        lab("shape", str(mibs))

    def point(self, tag, count, record, file_bytes, hosts, nfiles=1, access="shared",
              unit=MIB, osize=None, fmt="raw", epochs=1, redraw=0):
        """Generate, check placement (redraw a lopsided one up to `redraw` times), read."""
        nsamples = max(1, file_bytes // record)
        osize = osize or max(unit, file_bytes // count // unit * unit)
        for attempt in range(redraw + 1):
            rel = f"{tag}/c{count}-r{record}-a{attempt}"
            d_local = os.path.join(self.local, rel)
            set_dir_layout(d_local, count, unit, osize)
            cfg = CONFIG.format(name=tag.replace("/", "-"), data=os.path.join(self.common, rel),
                                fmt=fmt, nfiles=nfiles, nsamples=nsamples, record=record,
                                access=access, threads=self.args.threads, epochs=epochs,
                                out=os.path.join(self.work, "results"))
            self.run(cfg, tag.replace("/", "-"), hosts, cmd="generate")
            files = data_files(d_local)
            per_osd, lays, objs = (placement(files) if nfiles <= 4 else ({}, [layout(p) for p in files], []))
            total = sum(os.path.getsize(p) for p in files)
            eff = total / max(per_osd.values()) if per_osd else None
            if eff is None or count == 1 or eff >= min(count, 2) or attempt == redraw:
                break
            print(f"  placement of {rel} is lopsided (object, OSD, bytes: {objs}); the test is "
                  "about striping, not CRUSH's luck: generating it again (another inode)",
                  file=sys.stderr)
        s = self.run(cfg, tag.replace("/", "-"), hosts)
        shutil.rmtree(os.path.dirname(d_local))  # memstore keeps data in RAM: free it now
        return {"draws": attempt + 1, "count": count, "record": record, "hosts": hosts, "files": files,
                "layouts": lays, "objects": objs, "per_osd": per_osd, "bytes": total,
                "spanned": len(per_osd), "eff_servers": eff, "summary": s,
                "measured": s["metric"]["train_bandwidth_MiB_per_second"]}

    def client_limit(self, file_bytes, hosts):
        """The client's own limit: the same read with every link unshaped (4 OSDs)."""
        self.shape(0)
        try:
            p = self.point("client", self.osds, MIB, file_bytes, hosts, redraw=0)
        finally:
            self.shape(self.rate)
        return p["measured"]


def fmt_mib(b):
    return f"{b // MIB} MiB" if b >= MIB else f"{b // 1024} KiB"


def table(points, C, L):
    rows = ["| hosts | stripe count requested | effective (count / unit / object) | "
            "record | servers spanned | OSD bytes (MiB) | predicted MiB/s | measured MiB/s | "
            "measured / predicted |", "|---|---|---|---|---|---|---|---|---|"]
    for p in points:
        lay = p["layouts"][0]
        pred = p.get("predicted")
        osd = ", ".join(f"{o}:{b / MIB:.0f}" for o, b in sorted(p["per_osd"].items())) or "-"
        rows.append(
            f"| {p['hosts']} | {p['count']} | {lay['stripe_count']} / {fmt_mib(lay['stripe_unit'])}"
            f" / {fmt_mib(lay['object_size'])} | {fmt_mib(p['record'])} | "
            f"{p['spanned'] or '-'} | {osd} | {pred:.1f} | {p['measured']:.1f} | "
            f"{p['measured'] / pred:.2f} |" if pred else
            f"| {p['hosts']} | {p['count']} | {lay['stripe_count']} / {fmt_mib(lay['stripe_unit'])}"
            f" / {fmt_mib(lay['object_size'])} | {fmt_mib(p['record'])} | - | {osd} | - | "
            f"{p['measured']:.1f} | - |")
    return "\n".join(rows)


def node_figures(s):
    """Per node: bytes and bandwidth (the node's bytes over the run's wall time)."""
    wall = s["metric"]["train_wall_seconds"]
    nodes = {}
    for r in s["ranks"]:
        nodes.setdefault(r["host"], 0)
        nodes[r["host"]] += r["bytes_read"]
    return {h: (b, b / MIB / wall) for h, b in nodes.items()}, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--feedbench", required=True)
    ap.add_argument("--work", required=True, help="configs and results go here")
    ap.add_argument("--case", choices=["stripe", "small", "hosts", "all"], default="stripe")
    ap.add_argument("--counts", default="1,2,4")
    ap.add_argument("--records", default="1MiB", help="record sizes (MiB or KiB suffix)")
    ap.add_argument("--file-mib", type=int, default=64)
    ap.add_argument("--ranks-per-host", type=int, default=2)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--assert", dest="check", action="store_true",
                    help="fail unless the physics holds (the lab tests)")
    ap.add_argument("--json", help="write the points here")
    ap.add_argument("--tag", default=f"fb-stripe-{os.getpid()}",
                    help="folder on the file system (removed at the end)")
    a = ap.parse_args()

    def size(t):
        t = t.strip()
        return int(t[:-3]) * (MIB if t.endswith("MiB") else 1024)

    counts = [int(c) for c in a.counts.split(",")]
    records = [size(r) for r in a.records.split(",")]
    labo = Lab(a)
    F = a.file_mib * MIB
    tag = a.tag
    failures = []
    points = []
    hosts_list = {"stripe": [1], "hosts": [2], "all": [1, 2], "small": []}[a.case]
    C = None
    if hosts_list:
        C = labo.client_limit(F, 1)
        print(f"per-OSD limit L = {labo.rate:g} MiB/s on the wire = {labo.L:.1f} MiB/s of "
              f"payload; client limit C = {C:.1f} MiB/s (links unshaped, {labo.osds} OSDs)")
    for hosts in hosts_list:
        for rec in records:
            for c in counts:
                p = labo.point(f"{tag}/h{hosts}", c, rec, F, hosts, redraw=3)
                p["predicted"] = min(labo.L * p["eff_servers"], C)
                points.append(p)
    if a.case in ("small", "all"):
        # Many small files, small records: CRUSH already spreads the files over every OSD,
        # and a file smaller than one stripe unit sits in one object whatever the count.
        for c in (1, max(counts)):
            p = labo.point(f"{tag}/small", c, 64 * 1024, 256 * 1024, 1, nfiles=128,
                           access="per_rank")
            points.append(p)
    shutil.rmtree(os.path.join(labo.local, tag), ignore_errors=True)
    print(table(points, C, labo.L))

    # --- what must hold
    def fail(msg):
        failures.append(msg)
        print("FAIL: " + msg, file=sys.stderr)

    for p in points:
        for lay in p["layouts"]:
            if lay["stripe_count"] != p["count"]:
                fail(f"layout read back {lay}, requested stripe_count {p['count']}")
        eff = p["summary"]["storage"].get("stripe_effective")
        if isinstance(eff, dict):  # feedbench's own record of the layout, when it has one
            if eff.get("count") != p["count"]:
                fail(f"summary.json stripe_effective {eff} != requested {p['count']}")
            if "servers_spanned" in eff and p["spanned"] and eff["servers_spanned"] != p["spanned"]:
                fail(f"summary.json servers_spanned {eff['servers_spanned']}, "
                     f"ceph osd map says {p['spanned']}")
        if p.get("predicted"):
            ratio = p["measured"] / p["predicted"]
            if abs(ratio - 1) > 0.20:
                fail(f"{p['hosts']} host(s), stripe_count {p['count']}, record "
                     f"{fmt_mib(p['record'])}: measured {p['measured']:.1f} MiB/s is not within "
                     f"20 % of predicted {p['predicted']:.1f}")
        if p["hosts"] > 1:
            nodes, _ = node_figures(p["summary"])
            tb = sum(b for b, _ in nodes.values())
            tbw = sum(bw for _, bw in nodes.values())
            total = p["summary"]["metric"]["train_bandwidth_MiB_per_second"]
            print(f"  {p['hosts']} hosts, stripe_count {p['count']}: per node "
                  + ", ".join(f"{h} {bw:.1f} MiB/s" for h, (b, bw) in sorted(nodes.items()))
                  + f"; sum {tbw:.1f}, total {total:.1f}")
            if len(nodes) != p["hosts"]:
                fail(f"ranks ran on {sorted(nodes)}, expected {p['hosts']} hosts")
            if tb != p["summary"]["metric"]["train_bytes_read"]:
                fail(f"node bytes add up to {tb}, total says "
                     f"{p['summary']['metric']['train_bytes_read']}")
            if abs(tbw - total) > 0.02 * total:
                fail(f"node bandwidths add up to {tbw:.1f} MiB/s, total {total:.1f}")
    for hosts in hosts_list:
        for rec in records:
            pts = {p["count"]: p for p in points if p["hosts"] == hosts and p["record"] == rec
                   and p["files"] and len(p["files"]) == 1}
            lo, hi = pts[min(counts)], pts[max(counts)]
            seq = [pts[c]["measured"] for c in sorted(pts)]
            if any(b < a_ * 0.95 for a_, b in zip(seq, seq[1:])):
                fail(f"bandwidth does not grow with the stripe count: {seq}")
            if hi["measured"] < 1.8 * lo["measured"]:
                fail(f"stripe_count {max(counts)} reads {hi['measured']:.1f} MiB/s, less than "
                     f"1.8 x stripe_count {min(counts)} ({lo['measured']:.1f})")
            if lo["spanned"] != 1:
                fail(f"stripe_count 1 spans {lo['spanned']} OSDs: object_size too small")
    small = [p for p in points if len(p["files"]) > 4]
    if len(small) == 2:
        r = small[1]["measured"] / small[0]["measured"]
        print(f"small files: stripe_count {small[1]['count']} / 1 = {r:.2f} (no gain expected)")
        if r > 1.25:
            fail(f"small files gained {r:.2f}x from striping")
    if a.json:
        with open(a.json, "w") as f:
            json.dump([{k: v for k, v in p.items() if k != "summary"} for p in points], f,
                      indent=1)
    if a.check and failures:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
