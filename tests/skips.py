#!/usr/bin/env python3
"""Summary of the tests ctest skipped, and a failure for each skip this machine did not need.

usage: skips.py SOURCE_DIR JUNIT_XML...   (ctest --output-junit files; environment: FEEDBENCH,
FEEDBENCH_BUILD_DIR for the conditions)

A test skips itself (exit 77, ctest's SKIP_RETURN_CODE) when it cannot run here: no GPU, not
root, the lab cannot start. tests/expected_skips.txt lists those cases, each with a shell
condition that is true when the machine really cannot run the test. Every skipped test is
printed with the reason it gave (its output's last line) and whether the list expects it; a
skip that no rule expects, or whose rule's condition is false here (the machine could have run
it), fails: exit 1. A test whose DISABLED property is set counts as an unexpected skip too.
"""
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET


def rules(path):
    out = []
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        first = line.split(" | ", 1)
        parts = [first[0]] + (first[1].rsplit(" | ", 1) if len(first) == 2 else [])
        parts = [p.strip() for p in parts]
        if len(parts) != 3:
            sys.exit(f"{path}:{n}: expected 'pattern | condition | why', got: {line}")
        out.append((re.compile(parts[0]), parts[1], parts[2]))
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src = sys.argv[1]
    table = rules(os.path.join(src, "tests", "expected_skips.txt"))
    cond_cache = {}
    skipped, ran = [], 0
    for f in sys.argv[2:]:
        if not os.path.exists(f):
            print(f"skips: {f} not written (that phase did not run its tests)")
            continue
        for case in ET.parse(f).getroot().iter("testcase"):
            name = case.get("name")
            sk = case.find("skipped")
            if sk is None and case.get("status") != "disabled":
                ran += 1
                continue
            text = (case.findtext("system-out") or "").strip().splitlines()
            reason = text[-1] if text else (sk.get("message") if sk is not None else "disabled")
            skipped.append((name, reason))
    bad = 0
    print(f"skipped tests: {len(skipped)} of {len(skipped) + ran}")
    for name, reason in skipped:
        verdict = "UNEXPECTED: no rule in tests/expected_skips.txt expects this skip"
        for pat, cond, why in table:
            if not pat.search(name):
                continue
            if cond not in cond_cache:
                cond_cache[cond] = subprocess.run(["bash", "-c", cond], cwd=src,
                                                  stdout=subprocess.DEVNULL,
                                                  stderr=subprocess.DEVNULL).returncode == 0
            if cond_cache[cond]:
                verdict = "expected: " + why
            else:
                verdict = f"UNEXPECTED: this machine can run it (false here: {cond})"
            break
        if verdict.startswith("UNEXPECTED"):
            bad += 1
        print(f"  {name}: {reason}\n      {verdict}")
    if bad:
        print(f"FAILED: {bad} test(s) skipped that this machine can run")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
