"""Checks Python expressions against a summary.json: check_summary.py FILE EXPR...

Each EXPR sees the parsed document as `s` and must be true. A failing one is printed with
the values it looked at, so a test failure says what the run recorded.
"""
import json
import sys


def main():
    path = sys.argv[1]
    with open(path) as f:
        s = json.load(f)
    bad = 0
    for expr in sys.argv[2:]:
        try:
            ok = eval(expr, {}, {"s": s})
        except Exception as e:  # a missing key is a failed check, not a crash
            print(f"check failed: {expr}: {type(e).__name__}: {e}")
            bad += 1
            continue
        if not ok:
            print(f"check failed: {expr}")
            bad += 1
    if bad:
        print(json.dumps({k: s.get(k) for k in ("storage", "metric", "warnings")}, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
