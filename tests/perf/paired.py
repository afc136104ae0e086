"""Paired rounds of two tools, for the tests/perf/ scripts that alternate them: the median of
the per-round ratios, their range and the 95 % interval of the median (order statistics,
distribution-free)."""
import math
import statistics


def ci(v):
    """95 % interval of the median: order statistics k and n+1-k with P(Bin(n, 1/2) < k) <= 2.5 %;
    "n/a" with fewer than 6 values."""
    n, v, k, cum = len(v), sorted(v), 0, 0.0
    while cum + math.comb(n, k) / 2 ** n <= 0.025:
        cum += math.comb(n, k) / 2 ** n
        k += 1
    return "n/a" if k == 0 else "%.3f-%.3f" % (v[k - 1], v[n - k])


def ratio_cells(rs):
    """The median, the range and the interval of paired ratios, as three table cells."""
    if not rs:
        return "%7s %13s %13s" % ("-", "-", "-")
    return "%7.3f %13s %13s" % (statistics.median(rs), "%.3f-%.3f" % (min(rs), max(rs)), ci(rs))
