#!/usr/bin/env python3
"""check_shells.py SRDC EXAMPLES_DIR PHYSICS_DIR — discrete shells against theory.

1. The cantilever strip of MAT-DiSMech Fig. 11 (examples/cantilever_shell_{hinge,midedge}.srd:
   L = 0.09 m free, w = 0.02 m, h = 1 mm, rho = 1200 kg/m^3, nu = 0.5) under gravity, for
   E = 20 GPa, 2 GPa, 200 MPa and 20 MPa with both bending models, against Euler-Bernoulli,
   w = 3 rho g L^4 / (2 E h^2).
2. Mesh dependence (Fig. 12, E = 2 GPa) on the five mesh patterns: mid-edge bending stays within
   a few percent on all; hinge bending is markedly worse on right-isosceles and non-uniform meshes.
3. A flat strip with natural hinge angles relaxes to the cylinder they describe
   (tests/physics/curled_plate.srd).
4. A rod joined to a shell's edge carries a bending moment across the joint: the deflections
   of a clamped strip-and-rod cantilever match beam theory for the two segments in series
   (tests/physics/rod_shell_joint.srd).
5. `stretching` sets a shell edge's ks: the lattice value or MAT-DiSMech's mid-edge one
   (tests/physics/stretched_strip.srd).

Prints the tables and one `ok - ...` / `not ok - ...` line per check; exits 1 on a failure.
"""
import csv
import glob
import math
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import check, finish  # noqa: E402
from vtk_frame import frame_points  # noqa: E402

RHO, G, L, H = 1200.0, 9.81, 0.09, 1e-3


def euler_bernoulli(E):
    return -3 * RHO * G * L ** 4 / (2 * E * H ** 2)


def run(srdc, path, out, *args):
    """`srdc run PATH --out OUT --quiet ARGS`: (the finished process, probe rows or None)."""
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([srdc, "run", path, "--out", out, "--quiet", *args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    probes = os.path.join(out, "static_probes.csv")
    rows = list(csv.DictReader(open(probes))) if r.returncode == 0 and os.path.exists(probes) else None
    return r, rows


_tips = {}


def tip_deflection(srdc, work, source, pattern, youngs):
    """The strip's tip, from one run per (model, mesh, modulus): the sweep and the mesh study
    share the equilateral 2 GPa runs."""
    if (source, pattern, youngs) not in _tips:
        text = open(source).read().replace("pattern = equilateral", "pattern = " + pattern)
        path = os.path.join(work, "strip.srd")
        with open(path, "w") as f:
            f.write(text)
        r, rows = run(srdc, path, os.path.join(work, "out"), "-p", "youngs=" + youngs)
        _tips[source, pattern, youngs] = float(rows[-1]["tip"]) if rows else None
    return _tips[source, pattern, youngs]


def modulus_sweep(srdc, examples, work):
    print("# cantilever strip, tip deflection against Euler-Bernoulli (equilateral mesh, 5 mm edges)")
    print("# %-8s %-10s %14s %14s %9s" % ("model", "E", "srd (m)", "EB (m)", "error"))
    err = {}
    for model in ("hinge", "midedge"):
        source = os.path.join(examples, "cantilever_shell_%s.srd" % model)
        for label, E in (("20GPa", 20e9), ("2GPa", 2e9), ("200MPa", 2e8), ("20MPa", 2e7)):
            tip = tip_deflection(srdc, work, source, "equilateral", label)
            if tip is None:
                check(False, "%s strip at E = %s runs" % (model, label))
                continue
            err[model, label] = tip / euler_bernoulli(E) - 1
            print("# %-8s %-10s %14.6e %14.6e %8.2f%%" % (model, label, tip, euler_bernoulli(E),
                                                          100 * err[model, label]))
    if len(err) < 8:
        return
    # Small deflections (tip / L below 0.7 % at 2 GPa and above): the discretisation error.
    for label in ("20GPa", "2GPa"):
        check(abs(err["midedge", label]) < 0.01, "mid-edge strip at E = %s: %.2f %% from Euler-Bernoulli "
              "(tol 1 %%)" % (label, 100 * err["midedge", label]))
        check(0 < err["hinge", label] < 0.06, "hinge strip at E = %s: %.2f %% stiffer-than-beam error, "
              "positive and below 6 %% (the hinge model's known mesh bias)" % (label, 100 * err["hinge", label]))
    # At 20 MPa the tip falls 4.6 cm on a 9 cm strip: the strip swings inward and the vertical
    # deflection falls short of the linear theory, as in the paper's Fig. 11.
    for model in ("hinge", "midedge"):
        check(err[model, "20MPa"] < -0.1, "%s strip at E = 20 MPa falls short of the linear theory by %.1f %% "
              "(geometric nonlinearity: over 10 %%)" % (model, -100 * err[model, "20MPa"]))
        check(abs(err[model, "200MPa"] - err[model, "2GPa"]) < 0.02,
              "%s strip at 200 MPa (tip / L = 6 %%) is still within 2 %% of its 2 GPa error" % model)


def mesh_dependence(srdc, examples, work):
    patterns = ("equilateral", "equilateral_aligned", "right_isosceles", "random", "nonuniform")
    print("# mesh dependence at E = 2 GPa: tip deflection error against Euler-Bernoulli")
    print("# %-22s %10s %10s" % ("pattern", "hinge", "midedge"))
    err = {}
    for pattern in patterns:
        for model in ("hinge", "midedge"):
            source = os.path.join(examples, "cantilever_shell_%s.srd" % model)
            tip = tip_deflection(srdc, work, source, pattern, "2GPa")
            if tip is not None:
                err[model, pattern] = tip / euler_bernoulli(2e9) - 1
        if ("hinge", pattern) in err and ("midedge", pattern) in err:
            print("# %-22s %9.2f%% %9.2f%%" % (pattern, 100 * err["hinge", pattern], 100 * err["midedge", pattern]))
    check(len(err) == 10, "all ten strips (five meshes, two models) solve")
    if len(err) < 10:
        return
    worst_mid = max(abs(err["midedge", p]) for p in patterns)
    check(worst_mid < 0.05, "mid-edge bending is within 5 %% of Euler-Bernoulli on every mesh (worst %.2f %%)" %
          (100 * worst_mid))
    for pattern in ("right_isosceles", "nonuniform"):
        check(err["hinge", pattern] > 0.2 and err["hinge", pattern] > 4 * abs(err["midedge", pattern]) and
              err["hinge", pattern] > 4 * err["hinge", "equilateral"],
              "hinge bending is markedly worse on the %s mesh: %.1f %% against %.1f %% (mid-edge) and %.1f %% "
              "(hinge, equilateral)" % (pattern, 100 * err["hinge", pattern], 100 * err["midedge", pattern],
                                        100 * err["hinge", "equilateral"]))


def fit_circle(points):
    """Least-squares circle x^2 + z^2 + D x + E z + F = 0 through (x, z): centre and radius."""
    S = [[0.0] * 3 for _ in range(3)]
    r = [0.0] * 3
    for x, z in points:
        row, b = (x, z, 1.0), -(x * x + z * z)
        for i in range(3):
            r[i] += row[i] * b
            for j in range(3):
                S[i][j] += row[i] * row[j]
    M = [S[i] + [r[i]] for i in range(3)]
    for c in range(3):
        p = max(range(c, 3), key=lambda i: abs(M[i][c]))
        M[c], M[p] = M[p], M[c]
        for i in range(3):
            if i != c:
                f = M[i][c] / M[c][c]
                M[i] = [M[i][j] - f * M[c][j] for j in range(4)]
    D, E, F = (M[i][3] / M[i][i] for i in range(3))
    xc, zc = -D / 2, -E / 2
    return xc, zc, math.sqrt(xc * xc + zc * zc - F)


def curled_plate(srdc, physics, work):
    out = os.path.join(work, "curl")
    kappa, a = 10.0, 0.005
    r, _ = run(srdc, os.path.join(physics, "curled_plate.srd"), out)
    if r.returncode != 0:
        check(False, "curled plate runs: " + r.stderr[:300])
        return
    pts = frame_points(sorted(glob.glob(os.path.join(out, "*.vtu")))[-1])
    # The free part and the clamp's last column (x = 1 cm) are the polygon's vertices.
    arc = [(p[0], p[2]) for p in pts if p[0] >= 0.01 - 1e-9 or p[2] < -1e-12]
    xc, zc, R = fit_circle(arc)
    want = (a / 2) / math.sin(kappa * a / 2)   # circumradius of the chord polygon; 1 / kappa as a -> 0
    dev = max(abs(math.hypot(x - xc, z - zc) - R) for x, z in arc)
    ydrift = max(abs(p[1] - round(p[1] / a) * a) for p in pts)
    print("# curled plate: radius %.9f m (polygon %.9f m, 1/kappa %.3f m), nodes off the circle by %.2e m, "
          "y drift %.2e m" % (R, want, 1 / kappa, dev, ydrift))
    check(abs(R / want - 1) < 1e-6 and dev < 1e-9 and ydrift < 1e-9,
          "a flat strip with natural hinge angles kappa a relaxes to the cylinder of radius (a/2)/sin(kappa a/2) "
          "= %.6f m: %.6f m (tol 1e-6 relative), every node on it (tol 1e-9 m), none moved along y" % (want, R))
    check(len(arc) > 0.8 * len(pts), "the arc holds the free part of the strip (%d of %d nodes)" % (len(arc), len(pts)))


def rod_shell_joint(srdc, physics, work):
    r, rows = run(srdc, os.path.join(physics, "rod_shell_joint.srd"), os.path.join(work, "joint"))
    if r.returncode != 0:
        check(False, "rod-shell joint model runs: " + r.stderr[:300])
        return
    row = rows[-1]
    E, w, h, radius, P = 1e9, 0.01, 1e-3, 1e-3, 1e-3
    L1, L2 = 0.045, 0.05                      # free strip, rod
    EI1, EI2 = E * w * h ** 3 / 12, E * math.pi * radius ** 4 / 4
    joint = P * L1 ** 3 / (3 * EI1) + P * L2 * L1 ** 2 / (2 * EI1)
    slope = P * L1 ** 2 / (2 * EI1) + P * L2 * L1 / EI1
    tip = joint + slope * L2 + P * L2 ** 3 / (3 * EI2)
    got_joint, got_tip = -float(row["junction"]), -float(row["tip"])
    print("# rod-shell joint: joint %.4e m (beam %.4e), tip %.4e m (beam %.4e)" % (got_joint, joint, got_tip, tip))
    check(abs(got_joint / joint - 1) < 0.02 and abs(got_tip / tip - 1) < 0.02,
          "a rod joined to a clamped strip's edge: joint deflection %.2f %% and tip deflection %.2f %% from beam "
          "theory for the two segments in series (tol 2 %%): the joint carries the moment"
          % (100 * (got_joint / joint - 1), 100 * (got_tip / tip - 1)))


def shell_stretching(srdc, physics, work):
    """5. `stretching` chooses a shell edge's ks: (sqrt(3)/2) E h l (lattice, the default) or
    2 E h l / (1 - nu^2) (MAT-DiSMech's code for mid-edge shells). Every stretch element of the
    dump carries it to 1e-5 relative (6 printed digits), and a strip pulled in its plane
    stretches in the inverse ratio of the two, (2 / (1 - nu^2)) / (sqrt(3) / 2) = 2.5375 for
    nu = 0.3 (to 1e-4: strains of 5e-5 keep the response linear to that, and bending does not enter)."""
    text = open(os.path.join(physics, "stretched_strip.srd")).read()
    E, h, nu = 2e6, 1e-3, 0.3
    factor = {"lattice": math.sqrt(3) / 2, "dismech_midedge": 2 / (1 - nu * nu)}
    stretch = {}
    for choice in factor:
        path = os.path.join(work, "strip_%s.srd" % choice)
        with open(path, "w") as f:
            f.write(text.replace("STRETCH", choice))
        dump = subprocess.run([srdc, "dump", "--elements", path], capture_output=True, text=True).stdout
        lines = dump.split("\nstretch:", 1)[-1].splitlines()[1:]
        lines = lines[:next((k for k, l in enumerate(lines) if not l.startswith(" ")), len(lines))]
        # data columns: rest_length ks span_fraction (1 on a shell's edges)
        ratios = [float(l.split()[-2]) / (E * h * float(l.split()[-3])) for l in lines if float(l.split()[-1]) == 1]
        check(ratios and all(abs(r / factor[choice] - 1) < 1e-5 for r in ratios),
              "stretching = %s: ks / (E h l) = %.6f on all %d shell edges (want %.6f, tol 1e-5)"
              % (choice, ratios[0] if ratios else float("nan"), len(ratios), factor[choice]))
        r, rows = run(srdc, path, os.path.join(work, "strip_" + choice))
        stretch[choice] = float(rows[-1]["end"]) - 0.04 if rows else float("nan")
    want = factor["dismech_midedge"] / factor["lattice"]
    got = stretch["lattice"] / stretch["dismech_midedge"]
    check(abs(got / want - 1) < 1e-4, "a pulled strip stretches %.4f times more with the lattice ks than with "
          "MAT-DiSMech's mid-edge ks (want %.4f, tol 1e-4)" % (got, want))


def square_plate(srdc, physics, work):
    """Issue 15 item 8: the square plate clamped along its edge x = 0 (square_plate.srd, nu = 0)
    against Kirchhoff's cylindrical bending, w = q L^4 / (8 D), on the default mesh. The rectangle
    generators put a row of nodes on every side, so `clamp ... where x <= 0` holds a straight line
    of nodes at x = 0: the wall is where the file says. Mid-edge bending fixes the clamped edges'
    xi, which holds the plate's slope there; hinges act only across interior edges, so each
    clamped boundary edge of a hinge shell carries a wall hinge (before, such a plate was pinned
    and the static solve failed)."""
    E, h, L = 2e9, 1e-3, 0.1
    kirchhoff = -RHO * G * h * L ** 4 / (8 * E * h ** 3 / 12)
    source = open(os.path.join(physics, "square_plate.srd")).read()
    err = {}
    for bending, pattern in (("midedge", "equilateral"), ("midedge", "equilateral_aligned"), ("hinge", "equilateral"),
                             ("hinge", "equilateral_aligned")):
        text = source.replace("bending = midedge", "bending = " + bending)
        text = text.replace("5 mm)", "5 mm, pattern = %s)" % pattern)
        path = os.path.join(work, "square_plate.srd")
        with open(path, "w") as f:
            f.write(text)
        r, rows = run(srdc, path, os.path.join(work, "square"))
        if not rows:
            check(False, "square plate, %s bending, %s mesh: static solve succeeds: %s" % (bending, pattern,
                                                                                         r.stderr[:300]))
            continue
        err[bending, pattern] = float(rows[-1]["tip"]) / kirchhoff - 1
        print("# square plate, %s, %s: tip %.6e m vs Kirchhoff %.6e m (%+.2f %%)" % (
            bending, pattern, float(rows[-1]["tip"]), kirchhoff, 100 * err[bending, pattern]))
    for pattern in ("equilateral", "equilateral_aligned"):
        if ("midedge", pattern) in err:
            check(abs(err["midedge", pattern]) <= 0.01, "square plate clamped at x <= 0, mid-edge, %s mesh: %+.2f %% "
                  "from Kirchhoff's q L^4 / 8D (tol 1 %%)" % (pattern, 100 * err["midedge", pattern]))
    # Regression values (+10.9 % and +2.3 % at the corner): the hinge model's mesh bias, which
    # does not vanish with the mesh (the edge's mean is still +5 % and +2 % at 1.25 mm).
    for pattern, lo, hi in (("equilateral", 0.105, 0.113), ("equilateral_aligned", 0.02, 0.026)):
        if ("hinge", pattern) in err:
            check(lo <= err["hinge", pattern] <= hi, "square plate, hinge, %s mesh: the clamped edge holds (wall "
                  "hinges), tip %+.2f %% from Kirchhoff (regression value, %g-%g %%: the hinge model's mesh bias)"
                  % (pattern, 100 * err["hinge", pattern], 100 * lo, 100 * hi))


def main():
    srdc, examples, physics = (os.path.abspath(p) for p in sys.argv[1:4])
    work = tempfile.mkdtemp(prefix="srd_shells_")
    try:
        modulus_sweep(srdc, examples, work)
        mesh_dependence(srdc, examples, work)
        curled_plate(srdc, physics, work)
        rod_shell_joint(srdc, physics, work)
        shell_stretching(srdc, physics, work)
        square_plate(srdc, physics, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
