#!/usr/bin/env python3
"""check_modal.py SRDC DIR — `srdc grad`'s derivatives of natural frequencies (modal
sensitivities) against central differences of whole modal analyses: for every param of each
model and every mode, d(f)/d(p) printed agrees with (f(p + h) - f(p - h)) / 2h from the
modes.csv of `srdc run -p`, h = 1e-4 of the value, to 1e-6 of f / p (the natural scale of the
derivative: f ~ p^(+-1/2) gives f / 2p; the differences carry about 1e-8 of truncation and
5e-9 of the CSV's 12 digits, more for the low modes of stiff models). Models: a planar
cantilever (E, density, radius; and the closed form d(f)/d(E) = f / 2E to 1e-8), a cantilever
bent by gravity and a load with its modes at the static equilibrium (E, density, load, radius:
the equilibrium moves with each), a shell strip at its equilibrium under gravity (E, thickness,
density), a lattice beam (E, density), a beam lying on a crossing bar (contact between parts: the
contact's stiffness, reach and radius too); for a solid's Lanczos modes the closed form alone. A
symmetric rod's repeated bending pairs are named as having no derivative, and a follower
force's unsymmetric stiffness as not derived."""
import csv
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import tap  # noqa: E402
from tap import check  # noqa: E402

srdc, here = sys.argv[1], sys.argv[2]


def grad(model):
    """{param: {mode: derivative}} and {param: {mode: message}} from `srdc grad`."""
    p = subprocess.run([srdc, "grad", model], capture_output=True, text=True)
    check(p.returncode == 0, "srdc grad %s runs (%s)" % (os.path.basename(model), p.stderr.strip() or "ok"))
    out, none, param = {}, {}, None
    for line in p.stdout.splitlines():
        head = re.match(r"(\w+) = \S+ .*:$", line)
        if head:
            param = head.group(1)
            out[param], none[param] = {}, {}
        term = re.match(r"  d\(f(\d+)\)/d\((\w+)\) = (\S+) \S+  \(f\d+ = \S+ Hz\)$", line)
        if term:
            out[term.group(2)][int(term.group(1))] = float(term.group(3))
        refused = re.match(r"  d\(f(\d+)\)/d\((\w+)\): (no derivative: .*)$", line)
        if refused:
            none[refused.group(2)][int(refused.group(1))] = refused.group(3)
    return out, none, p.stdout


def frequencies(model, name, value, unit):
    out = tap.scratch("modal_")
    p = subprocess.run([srdc, "run", model, "--out", out, "--quiet", "-p", "%s=%.17g %s" % (name, value, unit)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return {}
    with open(os.path.join(out, "modes.csv")) as f:
        return {int(row["mode"]): float(row["frequency_hz"]) for row in csv.DictReader(f)}


def against_differences(file, params):
    """Every derivative of every mode of `file` against central differences of runs."""
    model = os.path.join(here, file)
    derived, _, _ = grad(model)
    name0, (value0, unit0) = next(iter(params.items()))
    base = frequencies(model, name0, value0, unit0)
    for name, (value, unit) in params.items():
        h = 1e-4 * value
        up, down = frequencies(model, name, value + h, unit), frequencies(model, name, value - h, unit)
        modes = derived.get(name, {})
        check(up and down and len(modes) == len(base), "%s, %s: the runs at +-h ran and every mode (%d) is derived"
              % (file, name, len(base)))
        for mode, exact in sorted(modes.items()):
            fd = (up[mode] - down[mode]) / (2 * h)
            err = abs(fd - exact) / (base[mode] / value)
            check(err < 1e-6, "%s: d(f%d)/d(%s) = %.9e against central differences %.9e: %.2e of f/p (tol 1e-6)"
                  % (file, mode, name, exact, fd, err))
    return derived, base


# A planar cantilever: differences, and the closed form for E (f ~ sqrt(E I / (rho A))).
derived, base = against_differences("rod.srd", {"E": (3e6, "Pa"), "rho": (1100, "kg/m^3"), "r": (2e-3, "m")})
for mode, exact in sorted(derived.get("E", {}).items()):
    err = abs(exact / (base[mode] / (2 * 3e6)) - 1)
    check(err < 1e-8, "rod.srd: d(f%d)/d(E) = %.12e against f / 2E = %.12e: relative %.2e (tol 1e-8)"
          % (mode, exact, base[mode] / 6e6, err))

# A solid's modes from Lanczos (sparse solver): the closed form alone.
solid, _, _ = grad(os.path.join(here, "solid.srd"))
freqs = frequencies(os.path.join(here, "solid.srd"), "E", 1e6, "Pa")
check(len(solid.get("E", {})) == 3, "solid.srd: three modes derived")
for mode, exact in sorted(solid.get("E", {}).items()):
    err = abs(exact / (freqs[mode] / 2e6) - 1)
    check(err < 1e-8, "solid.srd (Lanczos): d(f%d)/d(E) = %.12e against f / 2E = %.12e: relative %.2e (tol 1e-8)"
          % (mode, exact, freqs[mode] / 2e6, err))

# Modes about a static equilibrium that every param moves.
against_differences("sag.srd", {"E": (1e6, "Pa"), "rho": (1100, "kg/m^3"), "F": (2e-3, "N"), "r": (2e-3, "m")})

# A shell strip at its equilibrium under gravity (its thickness sets stiffness and mass) and a
# lattice beam.
against_differences("plate.srd", {"E": (2e6, "Pa"), "h": (1e-3, "m"), "rho": (1200, "kg/m^3")})
against_differences("lattice.srd", {"E": (1e6, "Pa"), "rho": (1000, "kg/m^3")})

# Parts in contact (../grad/cross.srd at rest: a beam lying on a crossing bar): the pairs at the
# equilibrium stiffen the modes, and the contact block's stiffness, reach and radius move them, as
# does the bar's height (the reference geometry; the beam's length needs a step the helper's 1e-4
# does not give: its differences' truncation is 9e-7 of f/p there, 1.8e-7 at 5e-5).
with open(os.path.join(here, "..", "grad", "cross.srd")) as f:
    cross_text = f.read()
touching = os.path.join(tap.scratch("modal_"), "touching.srd")
with open(touching, "w") as f:
    f.write(cross_text[:cross_text.index("simulate {")] +
            "static { load_steps = 4; tolerance = 1e-12; }\nmodes { count = 4; at = equilibrium; }\n")
against_differences(touching, {"E": (5e7, "Pa"), "rho": (1100, "kg/m^3"), "F": (5e-4, "N"), "kc": (200, "N/m"),
                               "delta": (2e-4, "m"), "r": (1e-3, "m"), "zb": (-2.4e-3, "m")})

# Params in the reference geometry (../grad/shaped.srd, its plate with hinges): an arc's radius and a
# plate's length and width move the reference, the elements' reference state and the masses; the
# modes at the reference (without the straight rod, whose round section repeats its frequencies
# there) and at the equilibrium under gravity, where the straight rod's line is tilted out of the
# horizontal by its angle a: that turns its clamped end's sliding line, the modes' basis there,
# whose share 2 (dT phi)^T (K - w^2 M) phi the derivative takes (0.14% of d(f2)/d(a)).
with open(os.path.join(here, "..", "grad", "shaped.srd")) as f:
    shaped_text = f.read()
shaped_text = shaped_text[:shaped_text.index("static {")].replace(" bending = midedge;", "")
no_arm = re.sub(r"rod arm \{[^}]*\}\n", "", shaped_text).replace("clamp arm.start;\n", "")
no_arm = re.sub(r"load arm\.end[^\n]*\n", "", no_arm)
shaped_ref = os.path.join(tap.scratch("modal_"), "shaped_reference.srd")
with open(shaped_ref, "w") as f:
    f.write(no_arm + "modes { count = 5; }\n")
tilted = shaped_text.replace("(0.1 m * cos(a), 0.1 m + 0.1 m * sin(a), 0 m)", "(0.1 m * cos(a), 0.1 m, 0.1 m * sin(a))")
shaped_eq = os.path.join(tap.scratch("modal_"), "shaped_equilibrium.srd")
with open(shaped_eq, "w") as f:
    f.write(tilted + "static { tolerance = 1e-12; }\nmodes { count = 6; at = equilibrium; }\n")
GEOMETRY = {"R": (0.05, "m"), "L": (0.04, "m"), "W": (0.02, "m")}
check(tilted != shaped_text, "the straight rod's line is tilted out of the horizontal")
against_differences(shaped_ref, GEOMETRY)
against_differences(shaped_eq, dict(GEOMETRY, a=(0.3, "")))

# A symmetric rod's two bending directions share each frequency: no derivative, said clearly.
with open(os.path.join(here, "rod.srd")) as f:
    text = f.read()
round_rod = os.path.join(tap.scratch("modal_"), "round.srd")
with open(round_rod, "w") as f:
    f.write(text.replace("planar;\n", ""))
_, none, stdout = grad(round_rod)
check(set(none.get("E", {})) == {1, 2, 3, 4, 5, 6} and "no derivative: f1 = f2 = " in none["E"][1] and
      "repeated frequency" in none["E"][1], "a round rod's repeated bending pairs have no derivative: %s"
      % none.get("E", {}).get(1))

# A follower force makes the stiffness unsymmetric: named as not derived, not given a number.
follower = os.path.join(tap.scratch("modal_"), "follower.srd")
with open(follower, "w") as f:
    f.write(text.replace("planar;\n", "planar;\nuse std.loads;\napply tangent_follower(arm.end, arm.node(11); f = 1 mN);\n"))
_, _, stdout = grad(follower)
check("no derivatives: its stiffness has a force whose Jacobian is not symmetric (`tangent_follower`)" in stdout
      and "Hz/Pa" not in stdout, "a follower force's unsymmetric stiffness is named, no derivative printed: %s"
      % stdout.strip())

tap.finish()
