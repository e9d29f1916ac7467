#!/usr/bin/env python3
"""check_physics.py SRDC DIR — runs the models of tests/physics with `srdc run` and compares
their results with closed forms. Each check states its tolerance and why it holds."""
import csv
import glob
import math
import xml.etree.ElementTree as ET
import os
import subprocess
import sys
import tempfile

srdc, here = sys.argv[1], sys.argv[2]
failures = 0
checks = 0


def check(ok, what):
    global failures, checks
    checks += 1
    failures += not ok
    print(("ok - " if ok else "not ok - ") + what)


def run(model, *args):
    out = tempfile.mkdtemp(prefix="srd_phys_")
    p = subprocess.run([srdc, "run", os.path.join(here, model), "--out", out, "--quiet", *args],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout + p.stderr)
    rows = []
    path = os.path.join(out, "probes.csv")
    if os.path.exists(path):
        with open(path) as f:
            rows = list(csv.DictReader(f))
    return p.returncode, rows, out


# 1. Static stretch of a spring under a hanging weight: z = -l0 - m g / k. Newton converges to
# 1e-10 of the characteristic force, so 1e-9 relative is safe.
code, rows, _ = run("hanging_spring.srd")
check(code == 0 and rows, "hanging spring: static solve succeeds")
if rows:
    z = float(rows[-1]["z"])
    expected = -0.1 - 0.2 * 9.81 / 50
    check(abs(z - expected) <= 1e-9 * abs(expected),
          "hanging spring: z = %.12f m vs -l0 - m g / k = %.12f m (tol 1e-9 relative)" % (z, expected))

# 2. Free oscillation, implicit Euler: the period of the discrete solution is
# 2 pi dt / atan(w dt) and the amplitude shrinks by (1 + (w dt)^2)^(-1/2) per step. With
# w dt = 3.2e-3 the period differs from 2 pi / w by 3.4e-6 relative; upward crossings located
# by linear interpolation are accurate to (w dt)^2 / 8 of a step, so the period is checked to
# 1e-5 relative against the discrete prediction, and the decay over one period to 1e-4.
code, rows, _ = run("oscillator.srd")
check(code == 0 and len(rows) > 100, "oscillator: simulation runs")
if rows:
    m, k, dt, l0 = 0.5, 20.0, 0.5e-3, 0.1
    w = math.sqrt(k / m)
    t = [float(r["t"]) for r in rows]
    x = [float(r["x"]) - l0 for r in rows]
    ups = [t[i] - x[i] * (t[i + 1] - t[i]) / (x[i + 1] - x[i]) for i in range(len(x) - 1) if x[i] < 0 <= x[i + 1]]
    if len(ups) >= 2:
        period = ups[1] - ups[0]
        discrete = 2 * math.pi * dt / math.atan(w * dt)
        check(abs(period - discrete) <= 1e-5 * discrete,
              "oscillator: period %.7f s vs implicit Euler's %.7f s (exact %.7f s; tol 1e-5 relative)"
              % (period, discrete, 2 * math.pi / w))
        peaks = [max(x[i:i + int(discrete / dt)]) for i in (0, int(discrete / dt))]
        decay = peaks[1] / peaks[0]
        predicted = (1 + (w * dt) ** 2) ** (-0.5 * discrete / dt)
        check(abs(decay - predicted) <= 1e-4, "oscillator: amplitude ratio over a period %.6f vs (1 + (w dt)^2)^(-T/2dt) = %.6f "
              "(tol 1e-4)" % (decay, predicted))
    else:
        check(False, "oscillator: at least two upward crossings")

# 3. Cantilever under its own weight, E = 20 GPa (deflection 3e-4 of the length: linear
# theory holds). A clamp fixes the first edge, so the free beam starts at the middle of that
# edge's Voronoi cell: L_eff = L - l/2 with l = L / (N - 1). DER converges as O(l^2); with
# N = 101 the difference from Euler-Bernoulli at L_eff is checked to 0.5%.
code, rows, _ = run("cantilever_static.srd")
check(code == 0 and rows, "cantilever: static solve succeeds")
if rows:
    L, n, r, rho, E, g = 0.1, 101, 1e-3, 1200, 20e9, 9.81
    A, I = math.pi * r * r, math.pi * r ** 4 / 4
    leff = L - 0.5 * L / (n - 1)
    theory = rho * A * g * leff ** 4 / (8 * E * I)
    tip = -float(rows[-1]["tip"])
    check(abs(tip - theory) <= 5e-3 * theory,
          "cantilever: tip deflection %.6e m vs rho A g L_eff^4 / 8EI = %.6e m (tol 0.5%%)" % (tip, theory))

# 4. The VTK output is well-formed XML that ParaView reads: the series lists every frame, and
# each frame's arrays have as many values as its points and cells declare.
code, rows, out = run("cantilever_static.srd")
pvd = glob.glob(os.path.join(out, "*.pvd"))
check(len(pvd) == 1, "VTK: one .pvd series written")
if pvd:
    frames = [d.get("file") for d in ET.parse(pvd[0]).getroot().iter("DataSet")]
    check(len(frames) >= 1 and all(os.path.exists(os.path.join(out, f)) for f in frames),
          "VTK: the series names %d frame(s) that exist" % len(frames))
    for f in frames:
        piece = ET.parse(os.path.join(out, f)).getroot().find("UnstructuredGrid/Piece")
        npts, ncells = int(piece.get("NumberOfPoints")), int(piece.get("NumberOfCells"))
        sizes = {}
        for arr in piece.iter("DataArray"):
            comps = int(arr.get("NumberOfComponents", "1"))
            sizes[arr.get("Name") or "points"] = len(arr.text.split()) // comps
        ok = (sizes.get("points") == npts and sizes.get("velocity") == npts and sizes.get("offsets") == ncells
              and sizes.get("types") == ncells and sizes.get("radius") == ncells and npts == 101 and ncells == 100)
        check(ok, "VTK: %s has 101 points and 100 line cells with matching arrays (%s)" % (f, sizes))

print("%d passed, %d failed" % (checks - failures, failures))
sys.exit(1 if failures else 0)
