#!/usr/bin/env python3
"""plot_run.py DIR — PNG plots of a run's CSV outputs with matplotlib: DIR/probes.png (the
simulation's probes against time), DIR/energy.png, DIR/static_probes.png (the load steps, when
there are several), DIR/modes.png (the natural frequencies). Columns are grouped by their unit
(DIR/units.csv, which srdc run writes) into one panel per unit, with the unit on the axis.
`srdc plot DIR` runs this."""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402


def read_units(run):
    units = {}
    path = os.path.join(run, "units.csv")
    if os.path.exists(path):
        with open(path) as f:
            for r in csv.DictReader(f):
                units[(r["file"], r["column"])] = r["unit"]
    return units


def read_columns(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    if len(rows) < 2:
        return None, None
    header, data = rows[0], rows[1:]
    columns = {}
    for j, name in enumerate(header):
        try:
            columns[name] = [float(r[j]) for r in data]
        except (ValueError, IndexError):
            continue  # labels (a mode's kind) are not plotted
    return header, columns


def label(name, unit):
    return name if unit in (None, "", "1") else "%s (%s)" % (name, unit)


def plot_file(run, name, units):
    """One figure for DIR/NAME: a panel per unit, every column against the first. Returns the
    picture's path, or None when the file has too little to plot."""
    header, columns = read_columns(os.path.join(run, name))
    if not header or len(columns.get(header[0], [])) < 2:
        return None
    x = header[0]
    groups = {}
    for col in header[1:]:
        if col in columns:
            groups.setdefault(units.get((name, col), "?"), []).append(col)
    if not groups:
        return None
    fig, axes = plt.subplots(len(groups), 1, figsize=(7, 2.6 * len(groups) + 0.6), sharex=True, squeeze=False)
    for ax, (unit, cols) in zip(axes[:, 0], sorted(groups.items())):
        for col in cols:
            ax.plot(columns[x], columns[col], label=col, marker="o" if len(columns[x]) < 30 else None)
        ax.set_ylabel(unit if unit not in ("?", "1") else "value")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
    axes[-1, 0].set_xlabel(label(x, units.get((name, x))))
    axes[0, 0].set_title("%s: %s" % (os.path.basename(os.path.abspath(run)), name))
    fig.tight_layout()
    out = os.path.join(run, name[:-4] + ".png")
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: plot_run.py DIR (a directory srdc run wrote)", file=sys.stderr)
        return 1
    run = sys.argv[1]
    units = read_units(run)
    names = ("probes.csv", "static_probes.csv", "modes_probes.csv", "energy.csv", "modes.csv")
    made = [plot_file(run, n, units) for n in names if os.path.exists(os.path.join(run, n))]
    made = [p for p in made if p]
    if not made:
        print("srdc: error: %s has no probes, energies or frequencies to plot (probes.csv, energy.csv, modes.csv ... with "
              "two rows or more)" % run, file=sys.stderr)
        return 1
    for p in made:
        print("wrote " + p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
