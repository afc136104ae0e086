#!/usr/bin/env python3
"""Checks a JUnit file written by `feedbench compare --junit FILE`.

usage: check_junit.py FILE XSD [--json COMPARE_JSON] [--failures M1,M2,...] [--incomparable]

  FILE            the JUnit XML
  XSD             tests/compare/junit.xsd (validated with lxml)
  --json F        the --json file of the same comparison: every regressed metric has a
                  <failure type="regression"> whose message and text hold the baseline mean,
                  the current mean and the change in %; every other metric passes
  --failures L    metrics that must fail (comma-separated; others may fail too, as the
                  --json file says); "" for none at all
  --incomparable  the comparison was refused: one testcase with <error type="incomparable">

Besides the schema: each suite's tests, failures and errors attributes count its testcases,
<failure> and <error> elements. Exit 0 when all holds, 1 otherwise (with the reasons).
"""
import argparse
import json
import re
import sys

from lxml import etree

NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def numbers(text):
    return [float(x) for x in NUMBER.findall(text or "")]


def holds(nums, want, rel=0.01, absolute=0.05):
    """A number in nums equal to want as printed (a few significant digits), in the same
    unit or a thousand / million times smaller (seconds shown as ms or us)."""
    for scale in (1.0, 1e3, 1e6):
        w = want * scale
        if any(abs(x - w) <= rel * abs(w) + absolute * (scale == 1.0) for x in nums):
            return True
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("xsd")
    ap.add_argument("--json")
    ap.add_argument("--failures")
    ap.add_argument("--incomparable", action="store_true")
    a = ap.parse_args()
    errors = []

    schema = etree.XMLSchema(etree.parse(a.xsd))
    doc = etree.parse(a.file)
    if not schema.validate(doc):
        for e in schema.error_log:
            errors.append("schema: line %d: %s" % (e.line, e.message))
    root = doc.getroot()

    suites = root.findall("testsuite")
    failing = {}
    skipped = set()
    for s in suites:
        cases = s.findall("testcase")
        nfail = sum(1 for c in cases if c.find("failure") is not None)
        nerr = sum(1 for c in cases if c.find("error") is not None)
        nskip = sum(1 for c in cases if c.find("skipped") is not None)
        skipped |= set(c.get("name") for c in cases if c.find("skipped") is not None)
        for attr, n in (("tests", len(cases)), ("failures", nfail), ("errors", nerr),
                        ("skipped", nskip)):
            if attr == "skipped" and s.get(attr) is None:
                continue  # optional in the schema
            if s.get(attr) != str(n):
                errors.append("suite %r: %s=%s but %d found" % (s.get("name"), attr, s.get(attr), n))
        for c in cases:
            f = c.find("failure")
            if f is not None:
                failing.setdefault(c.get("name"), []).append(f)
                if f.get("type") not in ("regression", "inconclusive"):
                    errors.append("testcase %s: failure type %r, not 'regression'" %
                                  (c.get("name"), f.get("type")))

    if a.incomparable:
        cases = root.findall("testsuite/testcase")
        if len(cases) != 1:
            errors.append("incomparable: %d testcases, expected 1" % len(cases))
        errs = root.findall("testsuite/testcase/error")
        if len(errs) != 1 or errs[0].get("type") != "incomparable":
            errors.append("incomparable: no <error type=\"incomparable\">")
        elif not (errs[0].get("message") or "").strip():
            errors.append("incomparable: the <error> has no message")
        if failing:
            errors.append("incomparable: failures %s" % sorted(failing))

    if a.failures is not None:
        want = set(m for m in a.failures.split(",") if m)
        if not want and failing:
            errors.append("failing testcases %s, expected none" % sorted(failing))
        elif not want <= set(failing):
            errors.append("failing testcases %s, expected at least %s" %
                          (sorted(failing), sorted(want)))

    if a.json:
        d = json.load(open(a.json))
        points = sorted(set(c["point"] for c in d["comparisons"]))
        if len(suites) != len(points):
            errors.append("%d testsuites for %d compared points" % (len(suites), len(points)))
        ntests = sum(int(s.get("tests") or 0) for s in suites)
        if ntests != len(d["comparisons"]):
            errors.append("%d testcases for %d comparisons" % (ntests, len(d["comparisons"])))
        regressed = set(c["metric"] for c in d["comparisons"] if c["verdict"] == "regressed")
        inconclusive = set(c["metric"] for c in d["comparisons"] if c["verdict"] == "inconclusive")
        policy = d.get("inconclusive_exit", "status 4")
        if policy == "fail":
            regressed |= inconclusive
        elif policy == "status 4" and inconclusive != skipped:
            errors.append("skipped testcases %s, --json inconclusive %s" %
                          (sorted(skipped), sorted(inconclusive)))
        if regressed != set(failing):
            errors.append("failing testcases %s, --json regressed %s" % (sorted(failing), sorted(regressed)))
        for c in d["comparisons"]:
            if c["verdict"] != "regressed" or c["metric"] not in failing:
                continue
            for f in failing[c["metric"]]:
                for where, text in (("message", f.get("message")), ("text", f.text)):
                    nums = numbers(text)
                    for what, want in (("baseline", c["baseline"]["mean"]),
                                       ("current", c["current"]["mean"])):
                        if not holds(nums, want):
                            errors.append("%s failure %s: no %s number %g in %r" %
                                          (c["metric"], where, what, want, text))
                    if not any(abs(abs(x) - abs(c["change_pct"])) <= 0.15 for x in nums) or \
                            "%" not in (text or ""):
                        errors.append("%s failure %s: no change %.2f %% in %r" %
                                      (c["metric"], where, c["change_pct"], text))

    if errors:
        for e in errors:
            print("check_junit: " + e, file=sys.stderr)
        return 1
    print("check_junit: %s valid: %d suites, %d testcases, failing: %s" %
          (a.file, len(suites), len(root.findall("testsuite/testcase")),
           ",".join(sorted(failing)) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
