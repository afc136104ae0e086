#!/usr/bin/env python3
"""Size limits of the C sources (bench/, workloads/, formats/, their subfolders): prints the
files over 800 and 1 200 lines and the functions over 80 and 100 lines, and fails when a file is
over 1 200 lines, a function over 100, or more than 15 functions over 80.

A function's length counts from the first line of its definition (return type) to its closing
brace, inclusive: the lines a reader has to hold at once. Definitions are found as .clang-format
writes them: the body's opening and closing braces alone on a line in column 0.

usage: counts.py [ROOT] [--max-file N] [--max-func N] [--warn-func N] [--max-warn N]
                 [--allow-files N] [--allow-funcs N]

--allow-files and --allow-funcs let that many files and functions stay over the limits, and
--max-warn may be raised, while code is brought under them: a ratchet that fails on any new
one. tests/style/tests.cmake passes none: the sources are within the limits.
"""
import argparse
import os
import re
import sys

FOLDERS = ("bench", "workloads", "formats")


def sources(root):
    for top in FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith((".c", ".h")):
                    yield os.path.join(dirpath, name)


SIGNATURE = re.compile(r"^[A-Za-z_][^;=]*\b([A-Za-z_]\w*)\s*\(")


def functions(lines):
    """(name, first line, length) of every function definition in a file."""
    out = []
    i = 0
    while i < len(lines):
        if lines[i].rstrip() != "{":
            i += 1
            continue
        # The signature: back from the brace to the line in column 0 that opens it.
        j = i - 1
        while j >= 0 and not SIGNATURE.match(lines[j]) and lines[j][:1] in ("\t", " ", ""):
            j -= 1
        m = SIGNATURE.match(lines[j]) if j >= 0 else None
        k = i + 1
        while k < len(lines) and not lines[k].startswith("}"):
            k += 1
        if m and not lines[j].startswith(("struct", "enum", "union", "typedef")):
            out.append((m.group(1), j + 1, k - j + 1))
        elif m and "(" in lines[j] and lines[j].startswith(("struct", "enum", "union")):
            out.append((m.group(1), j + 1, k - j + 1))  # a function returning a struct
        i = k + 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?", default=".")
    ap.add_argument("--max-file", type=int, default=1200)
    ap.add_argument("--warn-file", type=int, default=800)
    ap.add_argument("--max-func", type=int, default=100)
    ap.add_argument("--warn-func", type=int, default=80)
    ap.add_argument("--max-warn", type=int, default=15)
    ap.add_argument("--allow-files", type=int, default=0)
    ap.add_argument("--allow-funcs", type=int, default=0)
    a = ap.parse_args()

    big_files, long_funcs = [], []
    for path in sources(a.root):
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        rel = os.path.relpath(path, a.root)
        if len(lines) > a.warn_file:
            big_files.append((len(lines), rel))
        for name, first, n in functions(lines):
            if n > a.warn_func:
                long_funcs.append((n, "%s:%d %s()" % (rel, first, name)))
    big_files.sort(reverse=True)
    long_funcs.sort(reverse=True)

    over_file = [f for f in big_files if f[0] > a.max_file]
    over_func = [f for f in long_funcs if f[0] > a.max_func]
    print("files over %d lines: %d (over %d: %d)" %
          (a.warn_file, len(big_files), a.max_file, len(over_file)))
    for n, rel in big_files:
        print("  %5d  %s%s" % (n, rel, "  <- over %d" % a.max_file if n > a.max_file else ""))
    print("functions over %d lines: %d (at most %d; over %d: %d)" %
          (a.warn_func, len(long_funcs), a.max_warn, a.max_func, len(over_func)))
    for n, where in long_funcs:
        print("  %5d  %s%s" % (n, where, "  <- over %d" % a.max_func if n > a.max_func else ""))

    failed = []
    if len(over_file) > a.allow_files:
        failed.append("%d file(s) over %d lines, more than %d" %
                      (len(over_file), a.max_file, a.allow_files))
    if len(over_func) > a.allow_funcs:
        failed.append("%d function(s) over %d lines, more than %d" %
                      (len(over_func), a.max_func, a.allow_funcs))
    if len(long_funcs) > a.max_warn:
        failed.append("%d functions over %d lines, more than %d" %
                      (len(long_funcs), a.warn_func, a.max_warn))
    if failed:
        print("counts: FAILED: " + "; ".join(failed))
        return 1
    if over_file or over_func or len(long_funcs) > 15:
        print("counts: ok within the ratchet (targets: no file over %d lines, no function over "
              "%d, at most 15 over %d)" % (a.max_file, a.max_func, a.warn_func))
    else:
        print("counts: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
