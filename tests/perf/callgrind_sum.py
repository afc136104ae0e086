"""Instruction counts from a callgrind output file, for the tests/perf/ scripts that compare
runs by instructions (trace_cost.sh, live_cost.sh MODE=instructions):

    python3 callgrind_sum.py CALLGRIND_OUT FUNCTION...

prints the program's total and each function's inclusive count (its callees' included, every
thread's calls summed; 0 when it never ran) on one line, separated by spaces. A FUNCTION is
matched as "file.c:name" (e.g. trace.c:trace_finish)."""
import re
import subprocess
import sys


def main():
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", sys.argv[1]],
                         check=True, capture_output=True, text=True).stdout
    want = sys.argv[2:]
    got = dict.fromkeys(["PROGRAM TOTALS"] + want, 0)
    for line in out.splitlines():
        m = re.match(r"\s*([0-9,]+) .*?(PROGRAM TOTALS|[\w.]+\.c:\w+) ", line + " ")
        if not m:
            continue
        name = m.group(2)
        if name in got and not got[name]:  # the first (summary) line of each
            got[name] = int(m.group(1).replace(",", ""))
    print(" ".join(str(got[k]) for k in got))


main()
