#!/usr/bin/env python3
"""plot_csv.py FILE.csv -x COLUMN -y COLUMN[,COLUMN...] [-o OUT.svg] [--title TEXT]

Plots columns of a CSV file written by srd (probes.csv, energy.csv, a sweep's summary.csv)
as lines with markers in an SVG file that any browser shows. Needs nothing beyond Python 3.
Rows whose values are empty or not numbers (failed sweep runs) are left out.
"""
import argparse
import csv
import math
import sys

W, H, LEFT, RIGHT, TOP, BOTTOM = 640, 420, 80, 150, 40, 60
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def nice_ticks(lo, hi, count=5):
    if hi <= lo:
        lo, hi = lo - 1, hi + 1
    raw = (hi - lo) / count
    step = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * step:
            step *= m
            break
    first = math.ceil(lo / step) * step
    ticks, k = [], 0
    while first + k * step <= hi + 1e-9 * step:
        ticks.append(first + k * step)
        k += 1
    return ticks


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[2])
    ap.add_argument("file")
    ap.add_argument("-x", required=True)
    ap.add_argument("-y", required=True)
    ap.add_argument("-o", default="plot.svg")
    ap.add_argument("--title", default=None)
    a = ap.parse_args()
    with open(a.file, newline="") as f:
        rows = list(csv.DictReader(f))
    ys = a.y.split(",")
    for column in [a.x] + ys:
        if not rows or column not in rows[0]:
            sys.exit("plot_csv.py: error: %s has no column `%s` (columns: %s)" %
                     (a.file, column, ", ".join(rows[0].keys()) if rows else "none"))
    series = []
    for column in ys:
        points = [(number(r[a.x]), number(r[column])) for r in rows]
        series.append((column, [(x, y) for x, y in points if x is not None and y is not None]))
    everything = [p for _, pts in series for p in pts]
    if not everything:
        sys.exit("plot_csv.py: error: no numeric rows to plot")
    x0, x1 = min(p[0] for p in everything), max(p[0] for p in everything)
    y0, y1 = min(p[1] for p in everything), max(p[1] for p in everything)
    xt, yt = nice_ticks(x0, x1), nice_ticks(y0, y1)
    x0, x1 = min(x0, xt[0]), max(x1, xt[-1])
    y0, y1 = min(y0, yt[0]), max(y1, yt[-1])

    def sx(x):
        return LEFT + (x - x0) / ((x1 - x0) or 1) * (W - LEFT - RIGHT)

    def sy(y):
        return H - BOTTOM - (y - y0) / ((y1 - y0) or 1) * (H - TOP - BOTTOM)

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="12">' % (W, H), '<rect width="100%" height="100%" fill="white"/>']
    for x in xt:
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (sx(x), TOP, sx(x), H - BOTTOM))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>' % (sx(x), H - BOTTOM + 18, x))
    for y in yt:
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (LEFT, sy(y), W - RIGHT, sy(y)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (LEFT - 6, sy(y) + 4, y))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>' %
               (LEFT, TOP, W - LEFT - RIGHT, H - TOP - BOTTOM))
    out.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % ((LEFT + W - RIGHT) // 2, H - 15, a.x))
    if a.title:
        out.append('<text x="%d" y="24" text-anchor="middle" font-size="14">%s</text>' % (W // 2, a.title))
    for k, (name, pts) in enumerate(series):
        colour = COLOURS[k % len(COLOURS)]
        pts.sort()
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' %
                   (colour, " ".join("%.1f,%.1f" % (sx(x), sy(y)) for x, y in pts)))
        out += ['<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (sx(x), sy(y), colour) for x, y in pts]
        out.append('<text x="%d" y="%d" fill="%s">%s</text>' % (W - RIGHT + 12, TOP + 16 + 18 * k, colour, name))
    out.append("</svg>")
    with open(a.o, "w") as f:
        f.write("\n".join(out) + "\n")
    print("wrote %s (%d series, %d points)" % (a.o, len(series), len(everything)))


if __name__ == "__main__":
    main()
