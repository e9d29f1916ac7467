#!/usr/bin/env python3
"""check_plot.py SRDC EXAMPLES_DIR PHYSICS_DIR — srdc plot and units.csv: every column of a
run's CSV files has its unit; the plots of a simulation (probes, energies) and of a modal
analysis (frequencies) are written as pictures with something drawn; bad requests get clear
errors."""
import csv
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
import png  # noqa: E402
import tap  # noqa: E402
from tap import check  # noqa: E402

srdc, examples, physics = sys.argv[1], sys.argv[2], sys.argv[3]


def srd(*args):
    return subprocess.run([srdc, *args], capture_output=True, text=True)


def inked(path):
    """The share of a picture's pixels that are not white (axes, lines, labels)."""
    w, h, rows = png.read(path)
    return sum(1 for row in rows for p in row if min(p) < 200) / (w * h), w, h


# 1. units.csv names the unit of every column of every CSV file the run wrote with columns:
# the jumper's probes (t in s, the lead node's x and z in m) and its energies (J).
out = tap.scratch("jumper_")
p = srd("run", os.path.join(examples, "jumper.srd"), "--out", out, "--quiet", "--duration", "0.1")
units = {}
if os.path.exists(os.path.join(out, "units.csv")):
    with open(os.path.join(out, "units.csv")) as f:
        units = {(r["file"], r["column"]): r["unit"] for r in csv.DictReader(f)}
covered = True
for name in ("probes.csv", "energy.csv"):
    with open(os.path.join(out, name)) as f:
        covered &= all((name, c) in units for c in next(csv.reader(f)))
check(p.returncode == 0 and covered and units.get(("probes.csv", "lead_x")) == "m" and
      units.get(("energy.csv", "kinetic")) == "J" and units.get(("probes.csv", "t")) == "s",
      "units.csv covers every column of probes.csv and energy.csv (%d entries)" % len(units))

# 2. srdc plot: a picture per file, each with ink on at least 2% of it (axes, the curves).
q = srd("plot", out)
made = [n for n in ("probes.png", "energy.png") if os.path.exists(os.path.join(out, n))]
check(q.returncode == 0 and len(made) == 2, "srdc plot writes probes.png and energy.png (%s%s)" %
      (", ".join(made), q.stderr.strip()))
for name in made:
    share, w, h = inked(os.path.join(out, name))
    check(share > 0.02 and w >= 600, "%s: %d x %d, %.1f%% inked (more than 2%%)" % (name, w, h, 100 * share))

# 3. A modal analysis: the frequencies against the mode number, in Hz.
out = tap.scratch("modes_")
p = srd("run", os.path.join(physics, "rods", "modes_labels.srd"), "--out", out, "--quiet")
q = srd("plot", out)
path = os.path.join(out, "modes.png")
check(p.returncode == 0 and q.returncode == 0 and os.path.exists(path) and inked(path)[0] > 0.02,
      "srdc plot draws the modes' frequencies (%s)" % q.stderr.strip())

# 4. Bad requests: exit 1 with the reason.
empty = tap.scratch("empty_")
for args, message in ((("plot", os.path.join(empty, "missing")), "is not a run directory"),
                      (("plot", empty), "has no probes, energies or frequencies to plot"),
                      (("plot",), "which run?"),
                      (("plot", empty, "--bar"), "unknown option `--bar`")):
    r = srd(*args)
    check(r.returncode == 1 and message in r.stderr, "`srdc %s`: exit 1, says \"%s\" (%s)" %
          (" ".join(args), message, r.stderr.strip()))
tap.finish()
