#!/usr/bin/env python3
"""Which source file calls into which, read from the object files (nm): an arrow A -> B when A's
object uses a symbol B's object defines. Fails on a loop (files that call into each other, in a
circle) and on an arrow docs/architecture.md forbids (its ```deps block).

A registry's references to its plug-ins' ops tables (data, not functions) are not arrows: the
registry lists the plug-ins, it does not call them.

usage: deps.py OBJDIR SRCROOT [--rules docs/architecture.md] [--print]
  OBJDIR   the core library's object files (build/CMakeFiles/feedbench_core.dir)
  SRCROOT  the repository (object paths are mapped back to source paths under it)
"""
import argparse
import fnmatch
import os
import re
import subprocess
import sys

DATA_TYPES = set("DdRrBbGgSsVv")
DEFINED_TYPES = set("TtWDRBGSVCiu") | DATA_TYPES


def objects(objdir):
    for dirpath, dirnames, filenames in os.walk(objdir):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".c.o") or name.endswith(".cu.o"):
                path = os.path.join(dirpath, name)
                yield os.path.relpath(path, objdir)[: -len(".o")], path


def nm(path):
    """Global symbols defined (name -> type) and undefined (set) by one object."""
    out = subprocess.run(["nm", "-P", path], check=True, capture_output=True, text=True).stdout
    defined, undefined = {}, set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind.isupper() and kind in DEFINED_TYPES:
            defined[name] = kind
    return defined, undefined


def graph(objdir):
    """{file: {file: [symbols]}} and every file."""
    defs, undefs = {}, {}
    for src, path in objects(objdir):
        if "/proto/" in src or src.startswith("proto"):
            continue  # generated protobuf code: a library, not ours
        defs[src], undefs[src] = nm(path)
    owner = {}
    for src, d in defs.items():
        for name in d:
            owner.setdefault(name, src)
    edges = {src: {} for src in defs}
    for src, u in undefs.items():
        for name in sorted(u):
            dst = owner.get(name)
            if not dst or dst == src:
                continue
            if os.path.basename(src) == "registry.c" and defs[dst][name] in DATA_TYPES:
                continue  # a registry lists its plug-ins' ops tables
            edges[src].setdefault(dst, []).append(name)
    return edges


def loops(edges):
    """Strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def rules(path):
    """forbid FROM[, FROM...] -> TO[, TO...] [except PATTERN ...] lines of the ```deps block of
    path: an arrow from a file matching a FROM to one matching a TO and no PATTERN fails."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"```deps\n(.*?)```", text, re.S)
    if not m:
        sys.exit("deps: no ```deps block in %s" % path)
    out = []
    for line in m.group(1).splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        r = re.match(r"forbid\s+(.+?)\s*->\s*(.+?)(?:\s+except\s+(.*))?$", line)
        if not r:
            sys.exit("deps: cannot read rule '%s' in %s" % (line, path))
        frm = [x.strip() for x in r.group(1).split(",") if x.strip()]
        to = [x.strip() for x in r.group(2).split(",") if x.strip()]
        out.append((frm, to, (r.group(3) or "").split(), line))
    return out


def match(path, patterns):
    """fnmatch, '*' crossing folders too: "bench/*" is every file under bench/."""
    return any(fnmatch.fnmatchcase(path, p) for p in patterns)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("objdir")
    ap.add_argument("srcroot")
    ap.add_argument("--rules", default="docs/architecture.md")
    ap.add_argument("--print", action="store_true", help="print every arrow")
    a = ap.parse_args()

    edges = graph(a.objdir)
    if not edges:
        sys.exit("deps: no object files under %s" % a.objdir)
    narrows = sum(len(v) for v in edges.values())
    print("deps: %d files, %d arrows" % (len(edges), narrows))
    if a.print:
        for src in sorted(edges):
            for dst in sorted(edges[src]):
                print("  %s -> %s (%s)" % (src, dst, ", ".join(edges[src][dst][:4])))

    failed = 0
    for comp in loops(edges):
        failed += 1
        print("deps: loop between %s:" % ", ".join(comp))
        for src in comp:
            for dst in comp:
                if dst in edges[src]:
                    print("  %s -> %s (%s)" % (src, dst, ", ".join(edges[src][dst][:4])))

    rulefile = os.path.join(a.srcroot, a.rules)
    for frm, to, exc, text in rules(rulefile):
        for src in sorted(edges):
            if not match(src, frm):
                continue
            for dst in sorted(edges[src]):
                if not match(dst, to) or match(dst, exc):
                    continue
                failed += 1
                print("deps: forbidden arrow %s -> %s (%s), by '%s' in %s" %
                      (src, dst, ", ".join(edges[src][dst][:4]), text, a.rules))
    if failed:
        print("deps: FAILED: %d loop(s) or forbidden arrow(s)" % failed)
        return 1
    print("deps: ok, no loop, no forbidden arrow")
    return 0


if __name__ == "__main__":
    sys.exit(main())
