#!/usr/bin/env python3
"""Checks that the history picture shows what history.csv holds (gnuplot's SVG, and the PNG).

usage: check_history_plot.py HISTORY.CSV PICTURE_WITHOUT_EXTENSION METRIC

The SVG is read as gnuplot writes it: the title names the metric and the run count, one plot
group per series titled with the series' name (in series_id order), one point marker per run of
the series (plus the key's sample) at x rising with the run's start, and at the height of the
run's mean on the y axis (read from the y tics, within 1 % of the axis). The PNG is a PNG of the
size plot/history.gp asks for. Exit 0, or 1 with every difference found.
"""
import csv
import re
import struct
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def series_of(rows):
    """{series_id: (name, [(start, mean)])} in series_id order."""
    out = {}
    for r in rows:
        name, runs = out.setdefault(int(r["series_id"]), (r["series"], []))
        check(name == r["series"], f"series_id {r['series_id']} names {name} and {r['series']}")
        runs.append((r["start"], float(r["mean"])))
    return dict(sorted(out.items()))


def y_axis(svg):
    """The y tics as (pixel y, value), from the tic mark and the label that follows it."""
    tics = re.findall(r"d='M([\d.]+),([\d.]+) L[\d.]+,\2 M([\d.]+),\2 L[\d.]+,\2\s*'/>\s*"
                      r"<g transform=\"translate\([\d.]+,[\d.]+\)\"[^>]*text-anchor=\"end\">\s*"
                      r"<text>\s*(-?[\d.]+)</text>", svg)
    return [(float(y), float(v)) for _, y, _, v in tics], (
        max(float(r) for _, _, r, _ in tics) if tics else None)


def main():
    csv_path, picture, metric = sys.argv[1:4]
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    check(rows, "history.csv has no rows")
    series = series_of(rows)
    with open(picture + ".svg") as f:
        svg = f.read()

    want = f"feedbench history: {metric}, {len(rows)} runs"
    check(f"<text>{want}</text>" in svg, f"the SVG's title is not '{want}'")
    tics, right = y_axis(svg)
    if not check(len(tics) >= 2, f"the SVG has {len(tics)} y tics, want 2 or more"):
        return report()
    (y0, v0), (y1, v1) = tics[0], tics[-1]
    span = abs(v1 - v0)
    check(span > 0 and y0 != y1, f"y tics {tics}")

    groups = re.split(r'<g id="gnuplot_plot_(\d+)" ><title>([^<]*)</title>', svg)[1:]
    got = [(int(groups[i]), groups[i + 1], groups[i + 2]) for i in range(0, len(groups), 3)]
    check([t for _, t, _ in got] == [n for n, _ in series.values()],
          f"plotted series {[t for _, t, _ in got]}, history.csv's {[n for n, _ in series.values()]}")
    for (k, title, body), (sid, (name, runs)) in zip(got, series.items()):
        marks = [(float(x), float(y)) for x, y in
                 re.findall(r"<use xlink:href='#gpPt\d+' transform='translate\(([\d.]+),([\d.]+)\)",
                            body)]
        data = [m for m in marks if m[0] <= right + 0.5]  # the key's sample is right of the axes
        if not check(len(data) == len(runs),
                     f"series {name}: {len(data)} points plotted, history.csv has {len(runs)} runs"):
            continue
        xs = [x for x, _ in data]
        check(xs == sorted(xs) and len(set(xs)) == len(xs) or len(xs) < 2,
              f"series {name}: points not in time order: x = {xs}")
        for (x, y), (start, mean) in zip(data, runs):
            shown = v0 + (y - y0) * (v1 - v0) / (y1 - y0)
            check(abs(shown - mean) <= 0.01 * span,
                  f"series {name}, run of {start}: plotted at {shown:.1f}, its mean is {mean:.1f}")

    with open(picture + ".png", "rb") as f:
        head = f.read(24)
    if check(head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR",
             f"{picture}.png is not a PNG"):
        w, h = struct.unpack(">II", head[16:24])
        check((w, h) == (1100, 600), f"{picture}.png is {w}x{h}, plot/history.gp draws 1100x600")
    return report()


def report():
    for f in failures:
        print("history plot:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
