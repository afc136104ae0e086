#!/usr/bin/env python3
"""The reports of run folders, as a reader sees them, whatever the workload.

usage: check_folder.py RUN_DIR...

For report.md and table.md of each folder (both must exist, with summary.json):
- no "?" standing as a value (a cell "| ? |", "**?**", "?" after a space or a colon): a
  question mark may only end a word;
- no "nan", "inf" or "(null)" as a word, in any case;
- every file the report names exists in the folder: a name in backticks that ends in .csv,
  .md, .json, .ini, .png or .svg (no folder in it), and the target of every Markdown link or
  picture that is not a URL;
- report.md starts with "# feedbench run: " and has a "## What ran" section.
Exits 1 with one line per finding (file, line number, what), 0 when there is none.
"""
import os
import re
import sys

FILE_RE = re.compile(r"`([\w.+-]+\.(?:csv|md|json|ini|png|svg))`")
LINK_RE = re.compile(r"\]\(([^)\s]+)\)")
VALUE_Q = re.compile(r"(?:^|[\s|*(,:=`])\?(?=$|[\s|*),.;`])")
BAD_WORD = re.compile(r"(?<![\w.])(nan|inf|\(null\))(?![\w.])", re.I)


def check_text(d, name, text):
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        where = "%s/%s:%d" % (d, name, n)
        if VALUE_Q.search(line):
            out.append("%s: '?' as a value: %s" % (where, line.strip()))
        m = BAD_WORD.search(line)
        if m:
            out.append("%s: shows %r: %s" % (where, m.group(1), line.strip()))
        for f in FILE_RE.findall(line):
            if not os.path.exists(os.path.join(d, f)):
                out.append("%s: names %s, which the folder lacks" % (where, f))
        for target in LINK_RE.findall(line):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            if not os.path.exists(os.path.join(d, target)):
                out.append("%s: links %s, which the folder lacks" % (where, target))
    return out


def check_folder(d):
    out = []
    for name in ("summary.json", "report.md", "table.md"):
        if not os.path.isfile(os.path.join(d, name)):
            out.append("%s: no %s" % (d, name))
    for name in ("report.md", "table.md"):
        p = os.path.join(d, name)
        if os.path.isfile(p):
            text = open(p, encoding="utf-8").read()
            out += check_text(d, name, text)
            if name == "report.md" and (not text.startswith("# feedbench run: ")
                                        or "\n## What ran\n" not in text):
                out.append("%s/report.md: no title or no '## What ran'" % d)
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    found = []
    for d in sys.argv[1:]:
        found += check_folder(d)
    for line in found:
        print(line, file=sys.stderr)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
