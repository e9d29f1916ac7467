#!/usr/bin/env python3
"""check_grad.py SRDC DIR — `srdc grad` against central differences of whole static runs: for
every param of DIR/arm.srd (material, density, load, actuation, section) and every probe, the
derivative printed agrees with (probe(p + h) - probe(p - h)) / 2h from `srdc run -p`, h = 1e-4
of the value, to 1e-6 of the probe's largest derivative (the differences carry about 1e-8 of
truncation and of the CSV's 12 digits). Then its refusals: no static block, no probe."""
import csv
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import tap  # noqa: E402
from tap import check  # noqa: E402

srdc, here = sys.argv[1], sys.argv[2]
model = os.path.join(here, "arm.srd")
UNITS = {"E": "Pa", "rho": "kg/m^3", "F": "N", "kappa0": "/m", "r": "m"}


def grad():
    """{param: {probe: [values]}} from `srdc grad`."""
    p = subprocess.run([srdc, "grad", model], capture_output=True, text=True)
    check(p.returncode == 0, "srdc grad runs (%s)" % (p.stderr.strip() or "ok"))
    out, param = {}, None
    for line in p.stdout.splitlines():
        head = re.match(r"(\w+) = \S+ .*:$", line)
        if head:
            param = head.group(1)
            out[param] = {}
        term = re.match(r"  d\((\w+)\)/d\((\w+)\) = \(?([^)]*?)\)? \S+$", line)
        if term:
            out[term.group(2)][term.group(1)] = [float(v) for v in term.group(3).split(",")]
    return out


def probes_at(name, value):
    out = tap.scratch("grad_")
    p = subprocess.run([srdc, "run", model, "--out", out, "--quiet", "-p", "%s=%.17g %s" % (name, value, UNITS[name])],
                       capture_output=True, text=True)
    with open(os.path.join(out, "static_probes.csv")) as f:
        row = list(csv.DictReader(f))[-1]
    return p.returncode, {"tip": [float(row["tip." + c]) for c in "xyz"], "mid_z": [float(row["mid_z"])],
                          "tip_twist": [float(row["tip_twist"])]}


derived = grad()
defaults = {"E": 3e6, "rho": 1100, "F": 4e-3, "kappa0": 5, "r": 2e-3}
for name, value in defaults.items():
    h = 1e-4 * value
    (ok_up, up), (ok_down, down) = probes_at(name, value + h), probes_at(name, value - h)
    check(ok_up == 0 and ok_down == 0 and name in derived, "%s: grad derived it and the runs at +-h ran" % name)
    for probe, exact in derived.get(name, {}).items():
        fd = [(a - b) / (2 * h) for a, b in zip(up[probe], down[probe])]
        scale = max(abs(v) for v in exact)
        err = max(abs(a - b) for a, b in zip(fd, exact)) / scale
        check(scale > 0 and err < 1e-6, "d(%s)/d(%s): %s against central differences of static runs %s: "
              "relative %.2e (tol 1e-6)" % (probe, name, exact, ["%.9e" % v for v in fd], err))

# Params that move the reference geometry or set the discretisation are named, not derived.
shaped = os.path.join(tap.scratch("grad_"), "shaped.srd")
with open(model) as f:
    text = f.read()
with open(shaped, "w") as f:
    f.write(text.replace("path = line((0, 0, 0) m, (0.12, 0, 0) m); nodes = 25;",
                         "path = line((0, 0, 0) m, (0.12 m * cos(tilt), 0 m, 0.12 m * sin(tilt))); nodes = n;")
            .replace("param E =", "param tilt = 0.3 in 0..1;\nparam n = 25 in 10..40;\nparam E ="))
p = subprocess.run([srdc, "grad", shaped], capture_output=True, text=True)
check(p.returncode == 0 and "tilt: it moves the reference geometry" in p.stdout and
      "n: sets the discretisation, no derivative" in p.stdout and "d(tip)/d(E) =" in p.stdout,
      "a param turning the rod's reference is named as moving the reference geometry, a node count as the "
      "discretisation, and E is still derived (%s)" % (p.stderr.strip() or "ok"))

# Refusals, with a hint.
bare = os.path.join(tap.scratch("grad_"), "bare.srd")
with open(model) as f:
    text = f.read()
with open(bare, "w") as f:
    f.write(text[:text.index("static {")] + "simulate { method = implicit_euler; dt = 1 ms; duration = 10 ms; }\n")
p = subprocess.run([srdc, "grad", bare], capture_output=True, text=True)
check(p.returncode == 1 and "has no `static` block" in p.stderr and "hint:" in p.stderr,
      "a model without a static block is refused with a hint: %s" % p.stderr.strip().splitlines()[0])
with open(bare, "w") as f:
    f.write(text[:text.index("  probe tip")] + "}\n")
p = subprocess.run([srdc, "grad", bare], capture_output=True, text=True)
check(p.returncode == 1 and "no probe" in p.stderr, "a static block without probes is refused: %s" %
      p.stderr.strip().splitlines()[0])
tap.finish()
