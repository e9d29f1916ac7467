#!/usr/bin/env python3
"""check_grad.py SRDC DIR — `srdc grad` against central differences of whole static runs: for
every param of DIR/arm.srd (material, density, load, actuation, section) and every probe (and
the reaction and contact-force probes of react.srd and press.srd, the geometry params of
shaped.srd), the
derivative printed agrees with (probe(p + h) - probe(p - h)) / 2h from `srdc run -p`, h = 1e-4
of the value, to 1e-6 of the probe's largest derivative (the differences carry about 1e-8 of
truncation and of the CSV's 12 digits). Then its refusals: no static block, no probe."""
import csv
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import tap  # noqa: E402
from tap import check  # noqa: E402
from grad_output import derivatives  # noqa: E402

srdc, here = sys.argv[1], sys.argv[2]
model = os.path.join(here, "arm.srd")
UNITS = {"E": "Pa", "rho": "kg/m^3", "F": "N", "kappa0": "/m", "r": "m"}


def grad():
    """{param: {probe: [values]}} from `srdc grad`."""
    p = subprocess.run([srdc, "grad", model], capture_output=True, text=True)
    check(p.returncode == 0, "srdc grad runs (%s)" % (p.stderr.strip() or "ok"))
    return derivatives(p.stdout)


def probes_at(name, value, more=()):
    out = tap.scratch("grad_")
    extra = [a for spec in more for a in ("-p", spec)]
    p = subprocess.run([srdc, "run", model, "--out", out, "--quiet", "-p", "%s=%.17g %s" % (name, value, UNITS[name]),
                        *extra], capture_output=True, text=True)
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

# `srdc grad --objective EXPR` at the static equilibrium: the chain rule over the probes'
# derivatives printed above, J = (tip.z / 1 cm)^2 + mid_z / 1 mm.
p = subprocess.run([srdc, "grad", model, "--objective", "(tip.z / 1 cm)^2 + mid_z / 1 mm"], capture_output=True,
                   text=True)
_, at = probes_at("E", 3e6)
printed = dict(re.findall(r"  d\(objective\)/d\((\w+)\) = (\S+) per", p.stdout))
for name in defaults:
    expected = 2 * at["tip"][2] / 1e-4 * derived[name]["tip"][2] + derived[name]["mid_z"][0] / 1e-3
    got = float(printed.get(name, "nan"))
    check(p.returncode == 0 and abs(got / expected - 1) < 1e-8,
          "srdc grad --objective: d(objective)/d(%s) = %.9e, the chain rule over the probes' derivatives %.9e "
          "(tol 1e-8: the probes' values come from the CSV's 12 digits)" % (name, got, expected))
p = subprocess.run([srdc, "grad", model, "--objective", "(tipz / 1 cm)^2"], capture_output=True, text=True)
check(p.returncode == 1 and "unknown name `tipz`" in p.stderr and "did you mean `tip`" in p.stderr,
      "a bad --objective is reported with the name it lacks and a hint: %s" % p.stderr.strip().splitlines()[0])

# A load of max(F, c): at F = c its value has a kink in both params, which are named as not
# smooth there; a little away from it F is derived and c's derivative is zero.
kink = os.path.join(tap.scratch("grad_"), "kink.srd")
with open(kink, "w") as f:
    f.write("param F = 4 mN in -1 N..1 N;\nparam c = 2 mN in 0 N..1 N;\n"
            "material silicone { E = 3 MPa; nu = 0.45; rho = 1100 kg/m^3; }\n"
            "rod arm { path = line((0, 0, 0) m, (0.12, 0, 0) m); nodes = 12; radius = 2 mm; material = silicone; }\n"
            "clamp arm.start;\nload arm.end = (0 N, 0 N, -max(F, c));\n"
            "static { load_steps = 2; probe tip = arm.end; }\n")
at_kink = subprocess.run([srdc, "grad", kink, "-p", "F=2mN"], capture_output=True, text=True)
away = subprocess.run([srdc, "grad", kink], capture_output=True, text=True)
check(at_kink.returncode == 0 and "F: the model's values are not smooth in it near this value" in at_kink.stdout and
      "c: the model's values are not smooth" in at_kink.stdout and "d(tip)/d(F) =" in away.stdout and
      "not smooth" not in away.stdout, "a load max(F, c) at F = c: both params named as not smooth there, F derived "
      "away from it")

# A param that moves a prescribed motion (the rod's end pushed down by `squeeze`): the held DOFs'
# motion enters as a tangent of the configuration; against fourth-order differences of static runs
# at 1e-3 of the value (the run's response is smooth), to 1e-6 of the largest derivative.
moved = os.path.join(tap.scratch("grad_"), "moved.srd")
with open(moved, "w") as f:
    f.write("param squeeze = 2 mm in 0 mm..5 mm;\nparam E = 3 MPa in 1 MPa..10 MPa;\n"
            "material silicone { E = E; nu = 0.45; rho = 1100 kg/m^3; }\n"
            "rod arm { path = line((0, 0, 0) m, (0.12, 0, 0) m); nodes = 12; radius = 2 mm; material = silicone; }\n"
            "clamp arm.start;\nmove arm.end = (0 m, 0 m, -squeeze);\n"
            "static { load_steps = 2; tolerance = 1e-12; probe mid = arm.node(6); }\n")
p = subprocess.run([srdc, "grad", moved], capture_output=True, text=True)
exact = derivatives(p.stdout).get("squeeze", {}).get("mid", [])


def mid_at(value):
    out = tap.scratch("grad_")
    subprocess.run([srdc, "run", moved, "--out", out, "--quiet", "-p", "squeeze=%.17g m" % value], capture_output=True)
    row = list(csv.DictReader(open(os.path.join(out, "static_probes.csv"))))[-1]
    return [float(row["mid." + c]) for c in "xyz"]


h = 2e-6
runs = [mid_at(2e-3 + k * h) for k in (-2, -1, 1, 2)]
fd = [(runs[0][c] - 8 * runs[1][c] + 8 * runs[2][c] - runs[3][c]) / (12 * h) for c in range(3)]
scale = max(abs(v) for v in exact) if exact else 0
err = max(abs(a - b) for a, b in zip(fd, exact)) / scale if scale else float("nan")
check(p.returncode == 0 and scale > 0 and err < 1e-6,
      "a param moving a prescribed motion: d(mid)/d(squeeze) = %s against differences of static runs %s: relative "
      "%.2e (tol 1e-6)" % (exact, ["%.9e" % v for v in fd], err))

with open(model) as f:
    text = f.read()

# A param that turns the rod's reference is derived (shaped.srd checks such params against
# differences), for the modes too: their frequencies about the reference do not change with a
# rigid turn of the clamped rod (their derivatives vanish to 1e-9 of f per radian, though the
# clamped end's sliding line, the modes' basis, turns); a node count sets the discretisation.
shaped = os.path.join(tap.scratch("grad_"), "shaped.srd")
with open(shaped, "w") as f:
    f.write(text.replace("path = line((0, 0, 0) m, (0.12, 0, 0) m); nodes = 25;",
                         "path = line((0, 0, 0) m, (0.12 m * cos(tilt), 0 m, 0.12 m * sin(tilt))); nodes = n;")
            .replace("param E =", "param tilt = 0.3 in 0..1;\nparam n = 25 in 10..40;\nparam E =") +
            "modes { count = 2; }\n")
p = subprocess.run([srdc, "grad", shaped], capture_output=True, text=True)
turned = [(float(d), float(f)) for d, f in re.findall(r"d\(f\d\)/d\(tilt\) = (\S+) Hz  \(f\d = (\S+) Hz\)", p.stdout)]
check(p.returncode == 0 and "d(tip)/d(tilt) =" in p.stdout and len(turned) == 2 and
      all(abs(d) < 1e-9 * f for d, f in turned) and "n: sets the discretisation, no derivative" in p.stdout and
      "d(tip)/d(E) =" in p.stdout,
      "a param turning the rod's reference is derived at rest and for the modes (%s), a node count as the "
      "discretisation, and E is still derived (%s)" % (turned, p.stderr.strip() or "ok"))

# Optimisation with a known answer: arm.srd's probes computed at E = 2.5 MPa and kappa0 = 7 /m
# are the target, and `srdc optimize` starting from the defaults (3 MPa, 5 /m) recovers both
# to 1e-8 relative, with L-BFGS on the exact gradients and with BOBYQA (no gradients) to 1e-6.
code, target = probes_at("E", 2.5e6, ["kappa0=7/m"])
objective = " + ".join("((%s - %.12g m) / 1 mm)^2" % (name, value) for name, value in
                       (("tip.x", target["tip"][0]), ("tip.y", target["tip"][1]), ("tip.z", target["tip"][2]),
                        ("mid_z", target["mid_z"][0])))
for method, tol in (("lbfgs", 1e-8), ("bobyqa", 1e-6)):
    fit = os.path.join(tap.scratch("grad_"), "fit.srd")
    with open(fit, "w") as f:
        f.write(text + "optimize {\n  minimize = %s;\n  vary E, kappa0;\n  method = %s;\n  tolerance = 1e-14;\n"
                "  max_evaluations = 400;\n}\n" % (objective, method))
    out = tap.scratch("grad_")
    p = subprocess.run([srdc, "optimize", fit, "--out", out], capture_output=True, text=True)
    args = open(os.path.join(out, "optimum.args")).read().split() if p.returncode == 0 else []
    found = dict(a.split("=") for a in args if "=" in a)
    e = float(found.get("E", "nan").replace("Pa", ""))
    k = float(found.get("kappa0", "nan").replace("/m", ""))
    check(p.returncode == 0 and abs(e / 2.5e6 - 1) < tol and abs(k / 7 - 1) < tol,
          "optimize (%s) fits E and kappa0 to probes computed with 2.5 MPa and 7 /m: %.12g Pa, %.12g /m (tol %g) "
          "after %d evaluations %s" % (method, e, k, tol, p.stdout.count("evaluation "), p.stderr.strip()))

# The example: finger_reach.srd's optimum puts the tip on its target, and `srdc run` with the
# optimum's -p values reproduces it.
reach = os.path.join(here, "..", "..", "..", "examples", "finger_reach.srd")
out = tap.scratch("grad_")
p = subprocess.run([srdc, "optimize", reach, "--out", out], capture_output=True, text=True)
args = open(os.path.join(out, "optimum.args")).read().split() if p.returncode == 0 else []
run_out = tap.scratch("grad_")
r = subprocess.run([srdc, "run", reach, "--out", run_out, "--quiet", *args], capture_output=True, text=True)
rows = list(csv.DictReader(open(os.path.join(run_out, "static_probes.csv")))) if r.returncode == 0 else []
tip = (float(rows[-1]["tip.x"]), float(rows[-1]["tip.z"])) if rows else (math.nan, math.nan)
check(p.returncode == 0 and r.returncode == 0 and math.hypot(tip[0] - 0.045, tip[1] - 0.07) < 1e-6,
      "finger_reach: the optimum's tip (%.7f, %.7f) m is within 1 um of the target (0.045, 0.07) m, run again with "
      "its -p values %s" % (tip[0], tip[1], " ".join(args)))

# A simulation's objective: the snake's swim in 4 s against its wave's amplitude. BOBYQA finds an
# interior optimum (not an end of 5..100 /m), and the swims 2 /m to either side are shorter.
gait = os.path.join(here, "snake_gait.srd")
out = tap.scratch("grad_")
p = subprocess.run([srdc, "optimize", gait, "--out", out], capture_output=True, text=True)
args = open(os.path.join(out, "optimum.args")).read().split() if p.returncode == 0 else []
best = float(args[1].split("=")[1].replace("/m", "")) if len(args) == 2 else math.nan


def swim(amplitude):
    run_out = tap.scratch("grad_")
    subprocess.run([srdc, "run", gait, "--out", run_out, "--quiet", "-p", "amplitude=%.17g/m" % amplitude],
                   capture_output=True, text=True)
    rows = list(csv.DictReader(open(os.path.join(run_out, "probes.csv"))))
    return float(rows[-1]["head.x"])


ok = p.returncode == 0 and 10 < best < 95
around = [swim(best - 2), swim(best), swim(best + 2)] if ok else []
check(ok and around[1] > around[0] and around[1] > around[2],
      "optimize (bobyqa) on a simulation: the longest swim at amplitude %.4g /m (%s m; 2 /m either side: %s)"
      % (best, around[1:2], around[0::2]))
with open(gait) as f:
    gait_text = f.read()
lbfgs = os.path.join(tap.scratch("grad_"), "gait_lbfgs.srd")
with open(lbfgs, "w") as f:
    f.write(gait_text.replace("method = bobyqa", "method = lbfgs"))
out = tap.scratch("grad_")
p = subprocess.run([srdc, "optimize", lbfgs, "--out", out], capture_output=True, text=True)
args = open(os.path.join(out, "optimum.args")).read().split() if p.returncode == 0 else []
found = float(args[1].split("=")[1].replace("/m", "")) if len(args) == 2 else math.nan
check(p.returncode == 0 and abs(found / best - 1) < 1e-3,
      "L-BFGS on the simulation's objective (gradients by the adjoint) finds BOBYQA's optimum: %.6g /m against %.6g "
      "/m (tol 1e-3 relative: BOBYQA stops at its own tolerance), %d evaluations %s"
      % (found, best, p.stdout.count("evaluation "), p.stderr.strip()))

# A reaction probe: its force and moment (about the clamped node, where it is at the
# equilibrium) derived, against central differences of static runs; tolerance 1e-6 of the larger
# of the part's derivative and its value per unit of the param (E leaves the reaction force
# unchanged: the rod is statically determinate, so that part is zero up to rounding).
react = os.path.join(here, "react.srd")
p = subprocess.run([srdc, "grad", react], capture_output=True, text=True)
printed = {}
for m in re.finditer(r"  d\(R\)/d\((\w+)\) = \(([^)]*)\) \S+, moment \(([^)]*)\)", p.stdout):
    printed[m.group(1)] = [float(v) for v in (m.group(2) + "," + m.group(3)).split(",")]
check(p.returncode == 0 and len(printed) == 3, "srdc grad derives the reaction probe for E, F and rho (%s)"
      % (p.stderr.strip() or "ok"))


def static_row(path, name, value, unit):
    """The static probes' row of `srdc run path -p name=value unit`."""
    out = tap.scratch("grad_")
    subprocess.run([srdc, "run", path, "--out", out, "--quiet", "-p", "%s=%.17g %s" % (name, value, unit)],
                   capture_output=True, text=True)
    with open(os.path.join(out, "static_probes.csv")) as f:
        return list(csv.DictReader(f))[-1]


def reaction_at(name, value, unit):
    row = static_row(react, name, value, unit)
    return [float(row["R." + c]) for c in ("fx", "fy", "fz", "mx", "my", "mz")]


for name, value, unit in (("E", 1e6, "Pa"), ("F", 2e-3, "N"), ("rho", 1000, "kg/m^3")):
    h = 1e-4 * value
    up, down, at = reaction_at(name, value + h, unit), reaction_at(name, value - h, unit), reaction_at(name, value, unit)
    fd = [(a - b) / (2 * h) for a, b in zip(up, down)]
    exact = printed.get(name, [math.nan] * 6)
    for part, lo in (("force", 0), ("moment", 3)):
        scale = max(max(abs(v) for v in exact[lo:lo + 3]), max(abs(v) for v in at[lo:lo + 3]) / value)
        err = max(abs(a - b) for a, b in zip(fd[lo:lo + 3], exact[lo:lo + 3])) / scale
        check(err < 1e-6, "d(R)/d(%s), %s: %s against central differences of static runs %s: relative %.2e "
              "(tol 1e-6)" % (name, part, exact[lo:lo + 3], ["%.9e" % v for v in fd[lo:lo + 3]], err))

# An objective of the reaction's force, J = (R.y / 1 mN)^2 + R.z / 1 mN: by the chain rule over
# the reaction's derivatives printed above (tolerance 1e-8: the values come from the CSV's 12
# digits); E, which leaves the force unchanged, gets zero up to rounding (1e-9 of J / E).
p = subprocess.run([srdc, "grad", react, "--objective", "(R.y / 1 mN)^2 + R.z / 1 mN"], capture_output=True, text=True)
got = dict((k, float(v)) for k, v in re.findall(r"  d\(objective\)/d\((\w+)\) = (\S+) per", p.stdout))
R0 = reaction_at("E", 1e6, "Pa")
J = (R0[1] / 1e-3) ** 2 + R0[2] / 1e-3
for name in ("F", "rho"):
    expected = 2 * R0[1] / 1e-6 * printed[name][1] + printed[name][2] / 1e-3
    check(abs(got.get(name, math.nan) / expected - 1) < 1e-8, "srdc grad --objective of a reaction's force: "
          "d(objective)/d(%s) = %s, the chain rule %.9e" % (name, got.get(name), expected))
check(abs(got.get("E", math.nan)) < 1e-9 * J / 1e6, "srdc grad --objective of a reaction's force: d/d(E) = %s, zero up "
      "to rounding" % got.get("E"))

# An objective of the reaction's moment and force by their members, J = (R.mz / 1 uN*m)^2 +
# R.my / 1 uN*m + R.fx / 1 mN: by the chain rule over the derivatives printed above (moment: the
# last three), tolerance 1e-8 as above.
p = subprocess.run([srdc, "grad", react, "--objective", "(R.mz / (1 uN*m))^2 + R.my / (1 uN*m) + R.fx / 1 mN"],
                   capture_output=True, text=True)
got = dict((k, float(v)) for k, v in re.findall(r"  d\(objective\)/d\((\w+)\) = (\S+) per", p.stdout))
value = re.search(r"objective \(--objective\) = (\S+);", p.stdout)
J = (R0[5] / 1e-6) ** 2 + R0[4] / 1e-6 + R0[0] / 1e-3
check(value is not None and abs(float(value.group(1)) / J - 1) < 1e-9, "the objective of R.mz, R.my, R.fx is %s, "
      "from the probe file's columns %.9e (tol 1e-9 relative)" % (value and value.group(1), J))
for name in ("E", "F", "rho"):
    d = printed.get(name, [math.nan] * 6)
    expected = 2 * R0[5] / 1e-12 * d[5] + d[4] / 1e-6 + d[0] / 1e-3
    check(abs(got.get(name, math.nan) / expected - 1) < 1e-8, "srdc grad --objective of a reaction's moment "
          "(R.mz, R.my, R.fx): d(objective)/d(%s) = %s, the chain rule %.9e" % (name, got.get(name), expected))

# Contact probes: the forces the ground and a sphere exert on a rod sagging onto both, derived
# with respect to their stiffnesses, the sphere's radius (its centre moves with it) and the rod's
# density, against fourth-order central differences of static runs; tolerance 1e-5 of the
# probe's largest derivative. The steps balance the differences' truncation (the penalty's
# curvature: the radius's needs h <= 0.25%) against the CSV's 12 digits of a force of 0.02 N
# (1e-13 N, which a stiffness's small derivative needs h >= 1% to rise above).
press = os.path.join(here, "press.srd")
p = subprocess.run([srdc, "grad", press], capture_output=True, text=True)
contact = {}
for m in re.finditer(r"  d\(([GS])\)/d\((\w+)\) = \(([^)]*)\) ", p.stdout):
    contact[(m.group(1), m.group(2))] = [float(v) for v in m.group(3).split(",")]
check(p.returncode == 0 and len(contact) == 8, "srdc grad derives the contact probes for every param (%s)"
      % (p.stderr.strip() or "ok"))


def contact_at(name, value, unit):
    row = static_row(press, name, value, unit)
    return {probe: [float(row[probe + ".f" + c]) for c in "xyz"] for probe in "GS"}


for name, value, unit, step in (("kg", 200, "N/m", 1e-2), ("ks", 300, "N/m", 1e-2), ("R", 0.01, "m", 2.5e-3),
                                ("rho", 1000, "kg/m^3", 5e-3)):
    h = step * value
    f = [contact_at(name, value + i * h, unit) for i in (-2, -1, 1, 2)]
    for probe in "GS":
        fd = [((a - d) + 8 * (c - b)) / (12 * h) for a, b, c, d in zip(*(x[probe] for x in f))]
        exact = contact.get((probe, name), [math.nan] * 3)
        err = max(abs(a - b) for a, b in zip(fd, exact)) / max(abs(v) for v in exact)
        check(err < 1e-5, "d(%s)/d(%s): %s against central differences of static runs %s: relative %.2e (tol 1e-5)"
              % (probe, name, exact, ["%.9e" % v for v in fd], err))

# Params in the reference geometry (shaped.srd): an arc's radius, a line's angle, a plate's
# length and width, against fourth-order central differences of static runs at 1e-3 of the
# value; tolerance 1e-6 of the probe's largest derivative (the clamp's reaction: of each part).
# A param moves only its own part: the others' derivatives stay below 1e-9 (the samples'
# rounding is about 1e-13).
shaped = os.path.join(here, "shaped.srd")
p = subprocess.run([srdc, "grad", shaped, "--static"], capture_output=True, text=True)
moved = derivatives(p.stdout)
check(p.returncode == 0 and set(moved) == {"R", "a", "L", "W"}, "srdc grad derives every geometry param of shaped.srd "
      "(%s)" % (p.stderr.strip() or "ok"))
reaction = {}
for m in re.finditer(r"  d\(root\)/d\((\w+)\) = \(([^)]*)\) \S+, moment \(([^)]*)\)", p.stdout):
    reaction[m.group(1)] = [float(v) for v in (m.group(2) + "," + m.group(3)).split(",")]
OWN = {"R": ("hook_tip", "root"), "a": ("arm_tip",), "L": ("plate_tip",), "W": ("plate_tip",)}
for name, value, unit in (("R", 0.05, "m"), ("a", 0.3, ""), ("L", 0.04, "m"), ("W", 0.02, "m")):
    h = 1e-3 * value
    rows = [static_row(shaped, name, value + i * h, unit) for i in (-2, -1, 1, 2)]

    def fd(key):
        v = [float(r[key]) for r in rows]
        return (v[0] - 8 * v[1] + 8 * v[2] - v[3]) / (12 * h)
    for probe in OWN[name]:
        if probe == "root":
            parts = [("force", [fd("root.f" + c) for c in "xyz"], reaction.get(name, [math.nan] * 6)[:3]),
                     ("moment", [fd("root.m" + c) for c in "xyz"], reaction.get(name, [math.nan] * 6)[3:])]
        else:
            keys = [k for k in rows[0] if k == probe or k.startswith(probe + ".")]
            parts = [("", [fd(k) for k in keys], moved.get(name, {}).get(probe, [math.nan] * len(keys)))]
        for part, diff, exact in parts:
            err = max(abs(a - b) for a, b in zip(diff, exact)) / max(abs(v) for v in exact)
            check(err < 1e-6, "d(%s%s)/d(%s) (geometry): %s against central differences of static runs %s: relative "
                  "%.2e (tol 1e-6)" % (probe, " " + part if part else "", name, exact, ["%.9e" % v for v in diff], err))
    others = [abs(v) for probe, vals in moved.get(name, {}).items() if probe not in OWN[name] for v in vals]
    check(others and max(others) < 1e-9, "d(other parts)/d(%s) (geometry) vanish: at most %.1e (tol 1e-9)"
          % (name, max(others or [math.nan])))

# Contact between parts at rest (cross.srd made static: the beam lies on the crossing bar, pushed
# sideways): the pairs' data move with the contact block's values, the reference with the bar's
# height and the beam's length; friction, which acts over a
# step only, leaves the equilibrium alone (its derivative is exactly zero). Against fourth-order
# differences of static runs; steps at 1e-3, kc's and delta's at 1e-2 (at 1e-3 the probes' 12
# digits leave 1e-6 of the tip's small x and y derivatives).
with open(os.path.join(here, "cross.srd")) as f:
    cross_text = f.read()
cross = os.path.join(tap.scratch("grad_"), "cross_static.srd")
with open(cross, "w") as f:
    f.write(cross_text[:cross_text.index("simulate {")] +
            "static { load_steps = 4; tolerance = 1e-12; probe tip = beam.end; probe cross = beam.node(7); }\n")
p = subprocess.run([srdc, "grad", cross], capture_output=True, text=True)
parts = derivatives(p.stdout)
check(p.returncode == 0 and len(parts) == 9 and all(v == 0 for vals in parts.get("mu", {"": [1]}).values() for v in vals),
      "contact between parts at rest: every param derived, friction's exactly zero (%s)" % (p.stderr.strip() or "ok"))
for name, value, unit, step in (("E", 5e7, "Pa", 1e-3), ("rho", 1100, "kg/m^3", 1e-3), ("F", 5e-4, "N", 1e-3),
                                ("kc", 200, "N/m", 1e-2), ("delta", 2e-4, "m", 1e-2), ("r", 1e-3, "m", 1e-3),
                                ("zb", -2.4e-3, "m", 1e-3), ("L", 0.1, "m", 1e-3)):
    h = step * value
    rows = [static_row(cross, name, value + i * h, unit) for i in (-2, -1, 1, 2)]
    for probe, exact in parts.get(name, {"tip": [math.nan] * 3}).items():
        v = [[float(r[probe + "." + c]) for c in "xyz"] for r in rows]
        fd = [(a - 8 * b + 8 * c - d) / (12 * h) for a, b, c, d in zip(*v)]
        err = max(abs(a - b) for a, b in zip(fd, exact)) / max(abs(x) for x in exact)
        check(err < 1e-6, "contact between parts at rest: d(%s)/d(%s) = %s against central differences of static "
              "runs %s: relative %.2e (tol 1e-6)" % (probe, name, exact, ["%.9e" % x for x in fd], err))
# Without a radius in `contact` the pairs take the rods' own: a param setting a rod's radius moves
# each pair's contact thickness by the two parts' objects' radii (here the beam's alone: the bar
# keeps its own), against differences of static runs.
with open(cross, "w") as f:
    f.write(cross_text[:cross_text.index("simulate {")].replace(" radius = r; }", " }")
            .replace("radius = 1 mm; material = beam_stuff;", "radius = r; material = beam_stuff;") +
            "static { load_steps = 4; tolerance = 1e-12; probe tip = beam.end; }\n")
p = subprocess.run([srdc, "grad", cross], capture_output=True, text=True)
parts = derivatives(p.stdout)
check(p.returncode == 0 and "r" in parts and "kc" in parts, "a rod's radius the pairs take is derived, and kc: %s"
      % (p.stderr.strip() or sorted(parts)))
for name, value, unit, step in (("r", 1e-3, "m", 1e-3), ("kc", 200, "N/m", 1e-2)):  # kc: as above
    h = step * value
    rows = [static_row(cross, name, value + i * h, unit) for i in (-2, -1, 1, 2)]
    exact = parts.get(name, {}).get("tip", [math.nan] * 3)
    v = [[float(r["tip." + c]) for c in "xyz"] for r in rows]
    fd = [(a - 8 * b + 8 * c - d) / (12 * h) for a, b, c, d in zip(*v)]
    err = max(abs(a - b) for a, b in zip(fd, exact)) / max(abs(x) for x in exact)
    check(err < 1e-6, "the rods' own contact radius: d(tip)/d(%s) = %s against central differences of static runs "
          "%s: relative %.2e (tol 1e-6)" % (name, exact, ["%.9e" % x for x in fd], err))

# Prescribed motion carrying a clamped rod end (clamp_moved.srd at rest): the clamp's sliding node
# follows its anchor across the line (it did not: the derivative said the node stayed put); against
# differences of static runs, by the seeded elaboration and by the samples. A rotation of the
# clamped end turns the line and the end edge's frame: named (it was derived as if nothing moved).
with open(os.path.join(here, "clamp_moved.srd")) as f:
    clamp_text = f.read()
clamp = os.path.join(tap.scratch("grad_"), "clamp_static.srd")
with open(clamp, "w") as f:
    f.write(clamp_text[:clamp_text.index("simulate {")].replace("squeeze * sin(2 * pi * w * t), squeeze * t / 0.1 s",
                                                                 "squeeze, squeeze") +
            "static { load_steps = 2; tolerance = 1e-12; probe tip = arm.end; probe n1 = arm.node(1); }\n")
p = subprocess.run([srdc, "grad", clamp], capture_output=True, text=True)
clamped = derivatives(p.stdout)
p = subprocess.run([srdc, "grad", clamp], capture_output=True, text=True,
                   env=dict(os.environ, SRD_GRAD_BY_DIFFERENCES="1"))
sampled = derivatives(p.stdout).get("squeeze", {})
worst = max([abs(a - b) for probe in ("tip", "n1") for a, b in zip(sampled.get(probe, [math.nan] * 3),
                                                                   clamped.get("squeeze", {}).get(probe, [0] * 3))])
check(worst < 1e-8, "a moved clamp at rest: the samples' route gives d/d(squeeze) too (%.1e m/m apart, tol 1e-8)" % worst)
for name, value, unit in (("squeeze", 2e-3, "m"), ("E", 3e6, "Pa")):
    h = 1e-3 * value
    rows = [static_row(clamp, name, value + i * h, unit) for i in (-2, -1, 1, 2)]
    for probe in ("tip", "n1"):
        exact = clamped.get(name, {}).get(probe, [math.nan] * 3)
        v = [[float(r[probe + "." + c]) for c in "xyz"] for r in rows]
        fd = [(a - 8 * b + 8 * c - d) / (12 * h) for a, b, c, d in zip(*v)]
        scale = max(max(abs(x) for x in exact), 1e-9 / value)  # E moves n1 by 1e-24 m/Pa: nothing
        err = max(abs(a - b) for a, b in zip(fd, exact)) / scale
        check(err < 1e-6, "a moved clamp at rest: d(%s)/d(%s) = %s against central differences of static runs %s: "
              "relative %.2e (tol 1e-6)" % (probe, name, exact, ["%.9e" % x for x in fd], err))
with open(clamp, "w") as f:
    f.write(clamp_text[:clamp_text.index("simulate {")].replace(
        "move arm.start = (0 m, squeeze * sin(2 * pi * w * t), squeeze * t / 0.1 s);",
        "rotate arm.start about (0, 0, 1) = squeeze / 1 mm * 0.1;") +
        "static { load_steps = 2; tolerance = 1e-12; probe tip = arm.end; }\n")
p = subprocess.run([srdc, "grad", clamp], capture_output=True, text=True)
check(p.returncode == 0 and "squeeze: it turns a clamped rod end by prescribed motion" in p.stdout and
      "d(tip)/d(E)" in p.stdout, "a rotated clamp at rest: its angle's param is named, E derived: %s"
      % [line for line in p.stdout.splitlines() if line.startswith("squeeze")])

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
