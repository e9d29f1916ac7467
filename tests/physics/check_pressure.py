#!/usr/bin/env python3
"""check_pressure.py SRDC PHYSICS_DIR EXAMPLES_DIR — pressure on shells against closed forms.

1. A closed sphere under internal pressure (pressure_sphere.srd: the energy -p V, a
   pressure_volume element per triangle): mean radial strain against thin-walled theory,
   p R (1 - nu) / (2 E h), within 1 %. The same sphere loaded by the follower force
   (`apply pressure_force(ball.triangles; ...)`, non-symmetric Jacobian) reaches the same
   equilibrium: on a closed surface both are p times the gradient of the volume.
2. A clamped circular plate (pressure_plate.srd, mid-edge bending, disc mesh): centre deflection
   against Timoshenko, w0 = p a^4 / (64 D), within 1 % on 20 rings; second-order convergence
   from 10 to 20 rings, and the Richardson extrapolation within 0.2 %. The pressure is an
   expression of time and a param: -p p0 doubled doubles the deflection (linear theory).
3. The balloon example inflates under a pressure ramped in time (simulate): at the end its mean
   radial strain is the thin-walled value within 1 %.

Prints one `ok - ...` / `not ok - ...` line per check; exits 1 on a failure.
"""
import csv
import math
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import check, finish, scratch  # noqa: E402
from vtk_frame import frame_points  # noqa: E402


def run(srdc, path, out, *args):
    """`srdc run`: the process and its probe rows, of the simulation or else of the static
    equilibrium (None when it failed)."""
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([srdc, "run", path, "--out", out, "--quiet", *args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    probes = os.path.join(out, "probes.csv")
    if not os.path.exists(probes):
        probes = os.path.join(out, "static_probes.csv")
    rows = list(csv.DictReader(open(probes))) if r.returncode == 0 and os.path.exists(probes) else None
    if r.returncode != 0:
        print("# " + r.stderr.strip().replace("\n", "\n# "))
    return r, rows


def last_frame(out):
    frames = sorted(f for f in os.listdir(out) if f.endswith(".vtu")) if os.path.isdir(out) else []
    return frame_points(os.path.join(out, frames[-1])) if frames else None


def radial_strains(points, radius):
    return [math.sqrt(sum(c * c for c in p)) / radius - 1 for p in points]


def sphere_checks(srdc, physics, work):
    R, h, E, nu, p = 0.05, 1e-3, 1e6, 1 / 3, 10.0
    theory = p * R * (1 - nu) / (2 * E * h)
    source = os.path.join(physics, "pressure_sphere.srd")
    r, _ = run(srdc, source, os.path.join(work, "energy"))
    energy = last_frame(os.path.join(work, "energy")) if r.returncode == 0 else None
    check(energy is not None, "pressure_sphere runs")
    if energy is None:
        return
    eps = radial_strains(energy, R)
    mean = sum(eps) / len(eps)
    err = mean / theory - 1
    print("# sphere: %d nodes, mean radial strain %.6e, theory %.6e, error %+.3f %%; nodes from %.4e to %.4e"
          % (len(eps), mean, theory, 100 * err, min(eps), max(eps)))
    check(abs(err) < 0.01, "sphere: mean radial strain %.4e vs p R (1 - nu) / (2 E h) = %.4e (%+.2f %%, tol 1 %%)"
          % (mean, theory, 100 * err, ))
    text = open(source).read().replace("pressure ball = p0;", "apply pressure_force(ball.triangles; p = 10 Pa);")
    follower = os.path.join(work, "follower.srd")
    with open(follower, "w") as f:
        f.write("use std.shells;\n" + text)
    r, _ = run(srdc, follower, os.path.join(work, "follower"))
    other = last_frame(os.path.join(work, "follower")) if r.returncode == 0 else None
    check(other is not None and len(other) == len(energy), "sphere with the follower force runs")
    if other is None or len(other) != len(energy):
        return
    worst = max(math.dist(a, b) for a, b in zip(energy, other))
    check(worst < 1e-6 * theory * R, "sphere: follower force and -p V reach the same nodes (worst %.1e m, "
          "tol 1e-6 of the inflation %.1e m)" % (worst, theory * R))


def timoshenko(p, a=0.05, h=1e-3, E=10e6, nu=0.3):
    return p * a ** 4 / (64 * E * h ** 3 / (12 * (1 - nu ** 2)))


def plate_checks(srdc, physics, work):
    source = os.path.join(physics, "pressure_plate.srd")
    out = os.path.join(work, "plate")
    w = {}
    for rings, spacing in ((10, "5 mm"), (20, "2.5 mm")):
        path = os.path.join(work, "plate%d.srd" % rings)
        with open(path, "w") as f:
            f.write(open(source).read().replace("disc(5 cm, 2.5 mm)", "disc(5 cm, %s)" % spacing))
        _, rows = run(srdc, path, out)
        w[rings] = float(rows[-1]["w"]) if rows else None
    check(None not in w.values(), "pressure_plate runs on 10 and 20 rings")
    if None in w.values():
        return
    w0 = timoshenko(0.1)
    e10, e20 = w[10] / w0 - 1, w[20] / w0 - 1
    print("# clamped plate: w0 = %.6e m; 10 rings %.6e (%+.3f %%), 20 rings %.6e (%+.3f %%)"
          % (w0, w[10], 100 * e10, w[20], 100 * e20))
    check(abs(e20) < 0.01, "clamped plate, 20 rings: centre deflection %.5e m vs p a^4 / (64 D) = %.5e m "
          "(%+.2f %%, tol 1 %%)" % (w[20], w0, 100 * e20))
    order = math.log(e10 / e20) / math.log(2)
    check(1.8 < order < 2.3, "clamped plate: observed order %.2f from 10 to 20 rings (tol 1.8-2.3)" % order)
    rich = w[20] + (w[20] - w[10]) / 3
    check(abs(rich / w0 - 1) < 0.002, "clamped plate: Richardson extrapolation %.5e m, %+.3f %% (tol 0.2 %%)"
          % (rich, 100 * (rich / w0 - 1)))
    _, rows = run(srdc, os.path.join(work, "plate20.srd"), out, "-p", "p0=0.2Pa")
    doubled = float(rows[-1]["w"]) if rows else float("nan")
    check(abs(doubled / (2 * w[20]) - 1) < 1e-3, "clamped plate: -p p0=0.2Pa doubles the deflection "
          "(%.5e m, ratio %.5f, tol 1e-3: membrane stretching)" % (doubled, doubled / w[20]))


def balloon_checks(srdc, examples, work):
    out = os.path.join(work, "balloon")
    r, _ = run(srdc, os.path.join(examples, "balloon.srd"), out)
    points = last_frame(out) if r.returncode == 0 else None
    check(points is not None, "balloon example runs")
    if points is None:
        return
    R, h, E, nu, p = 0.05, 0.5e-3, 1e6, 1 / 3, 50.0
    theory = p * R * (1 - nu) / (2 * E * h)
    eps = radial_strains(points, R)
    mean = sum(eps) / len(eps)
    check(abs(mean / theory - 1) < 0.01, "balloon example: mean radial strain at the end %.4e vs thin-walled "
          "%.4e (%+.2f %%, tol 1 %%)" % (mean, theory, 100 * (mean / theory - 1)))


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        sys.exit(2)
    srdc, physics, examples = argv[1:]
    work = scratch("pressure_")  # removed when the script ends, however it ends
    sphere_checks(srdc, physics, work)
    plate_checks(srdc, physics, work)
    balloon_checks(srdc, examples, work)
    finish()


if __name__ == "__main__":
    main(sys.argv)
