#!/usr/bin/env python3
"""plot_csv.py FILE.csv -x COLUMN -y COLUMN[,COLUMN...] [-o OUT.svg|OUT.png] [--title TEXT]

Plots columns of a CSV file written by srd (probes.csv, energy.csv, a sweep's summary.csv) as
lines with markers, with matplotlib (Debian's python3-matplotlib); the file type follows the
name of OUT. Rows whose values are empty or not numbers (failed sweep runs) are left out.
`srdc plot DIR` plots a whole run, with units on the axes.
"""
import argparse
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


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
    fig, ax = plt.subplots(figsize=(7, 4.2))
    count = 0
    for column in ys:
        points = sorted((number(r[a.x]), number(r[column])) for r in rows
                        if number(r[a.x]) is not None and number(r[column]) is not None)
        count += len(points)
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=column, gid="series_" + column)
    if not count:
        sys.exit("plot_csv.py: error: no numeric rows to plot")
    ax.set_xlabel(a.x)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best")
    if a.title:
        ax.set_title(a.title)
    fig.tight_layout()
    fig.savefig(a.o)
    print("wrote %s (%d series, %d points)" % (a.o, len(ys), count))


if __name__ == "__main__":
    main()
