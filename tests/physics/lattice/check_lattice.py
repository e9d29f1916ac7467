#!/usr/bin/env python3
"""check_lattice.py SRDC DIR EXAMPLES — mass-spring lattices (issue 19, items 1-2): the stiffness relation
k = E a / beta against a bar's modulus and Poisson ratio, a cantilever's first bending frequency
against Euler-Bernoulli as the spacing shrinks, an undamped Verlet run's energy, lumped masses,
and volumetric actuation (a free block expanding, a slab's halves in antiphase, the thermal
bimorph example curling)."""
import csv
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import tap  # noqa: E402
from tap import check  # noqa: E402

srdc, here, examples = sys.argv[1], sys.argv[2], sys.argv[3]


def srd(*args, env=None):
    return subprocess.run([srdc, *args], capture_output=True, text=True,
                          env=None if env is None else dict(os.environ, **env))


def variant(name, **replace):
    """DIR/NAME with the given words replaced, written to a scratch directory."""
    text = open(os.path.join(here, name)).read()
    for key, value in replace.items():
        assert key in text, key
        text = text.replace(key, value)
    path = os.path.join(tap.scratch("model_"), name)
    with open(path, "w") as f:
        f.write(text)
    return path


def variant_of(path, replace):
    """The model at path with words replaced, written to a scratch directory."""
    text = open(path).read()
    for key, value in replace.items():
        assert key in text, key
        text = text.replace(key, value)
    out = os.path.join(tap.scratch("model_"), os.path.basename(path))
    with open(out, "w") as f:
        f.write(text)
    return out


def last_frame(path):
    """Node positions of the last row of an `output csv` table."""
    with open(path) as f:
        row = list(csv.DictReader(f))[-1]
    n = (len(row) - 1) // 3
    return [[float(row["%s%d" % (c, i)]) for c in "xyz"] for i in range(n)]


def run(path, env=None):
    out = tap.scratch()
    p = srd("run", path, "--out", out, "--quiet", env=env)
    check(p.returncode == 0, "%s runs: %s" % (os.path.basename(path), p.stderr.strip()[:300]))
    return out if p.returncode == 0 else None


def frames(path):
    """Every row of an `output csv` table, as lists of numbers."""
    with open(path) as f:
        return [[float(v) for v in row] for row in list(csv.reader(f))[1:]]


# 1. A cubic lattice bar under a uniform end traction sigma = 1 Pa (E = 1 MPa). Each spring's
# stiffness is shared out like a finite element mesh's cells (a face spring has half the bulk's,
# an edge spring a quarter), so a uniform strain is the exact equilibrium of the box, at any
# spacing: every node sits on the affine field u = eps (x, -nu y, -nu z) with eps = sigma / E and
# the lattice's nu (1/4 with face diagonals, 7/20 with body diagonals too). What is left is the
# springs' geometric nonlinearity (a spring's force is linear in its length, and its direction
# turns by O(eps^2) = 1e-12 under this strain) and the solver's tolerance (1e-12): measured 2e-11,
# tolerance 1e-8 relative.
for shells, nu_lattice in ((2, 0.25), (3, 0.35)):
    out = run(variant("bar_tension.srd", **{"material = gel; }": "material = gel; neighbours = %d; }" % shells}))
    if not out:
        continue
    pos = last_frame(os.path.join(out, "bar.csv"))
    ref = [[round(v / 2.5e-3) * 2.5e-3 for v in p] for p in pos]
    ex = [(p[0] - q[0]) / q[0] for p, q in zip(pos, ref) if q[0] > 0]
    lat = [-(p[c] - q[c]) / q[c] for p, q in zip(pos, ref) for c in (1, 2) if q[c] > 0]
    e_eff = 1.0 / (sum(ex) / len(ex))  # sigma / eps in units of E = 1 MPa, sigma = 1 Pa
    spread = (max(ex) - min(ex)) / max(ex)
    nu = [v / ex[0] for v in lat]
    check(abs(e_eff * 1e-6 - 1) < 1e-8 and spread < 1e-8,
          "cubic bar, %d shells: E_eff / E - 1 = %.1e (tol 1e-8), strain uniform over the nodes to %.1e (tol 1e-8)"
          % (shells, e_eff * 1e-6 - 1, spread))
    check(max(abs(v - nu_lattice) for v in nu) < 1e-8,
          "cubic bar, %d shells: Poisson ratio - the relation's %g: %.1e (tol 1e-8)"
          % (shells, nu_lattice, max(abs(v - nu_lattice) for v in nu)))

# 2. The cantilever's first bending frequency against Euler-Bernoulli, f1 = 1.8751^2 / (2 pi)
# sqrt(E I / (rho A L^4)) = 5.108 Hz for 100 x 10 x 10 mm, E = 1 MPa, rho = 1000 kg/m^3, with 1,
# 2 and 3 cells across the height. The error must fall at least as fast as (a / H)^1.5 (it falls
# nearly as (a / H)^2: 34 %, 10.6 %, 4.8 %) and be under 6 % at 3 cells; L / H = 10 leaves Timoshenko's
# shear correction near 1 %, below the finest error here.
EI = 1e6 * 0.01 ** 4 / 12
f_eb = 1.8751040687 ** 2 / (2 * math.pi) * math.sqrt(EI / (1000 * 1e-4 * 0.1 ** 4))
errors = []
for cells in (1, 2, 3):
    out = run(variant("cantilever.srd", **{"CELLS = 2": "CELLS = %d" % cells}))
    if not out:
        continue
    with open(os.path.join(out, "modes.csv")) as f:
        f1 = float(list(csv.DictReader(f))[0]["frequency_hz"])
    errors.append(f1 / f_eb - 1)
    print("# cantilever, %d cells across: f1 = %.4f Hz, Euler-Bernoulli %.4f Hz, error %+.2f %%"
          % (cells, f1, f_eb, 100 * errors[-1]))
if len(errors) == 3:
    rates = [math.log(errors[i] / errors[i + 1]) / math.log((i + 2) / (i + 1)) for i in range(2)]
    check(all(e > 0 for e in errors) and min(rates) > 1.5 and errors[2] < 0.06,
          "cantilever frequency converges to Euler-Bernoulli: errors %s, observed orders %s (tol: order > 1.5, "
          "< 6 %% at 3 cells)" % (", ".join("%.2f %%" % (100 * e) for e in errors),
                                  ", ".join("%.2f" % r for r in rates)))

# 3. An undamped Verlet run of the cantilever released under gravity: the total energy only
# oscillates, by O((w dt)^2) of the kinetic energy. At dt = 0.1 ms its spread is 4.3e-6 of the
# largest kinetic energy (tol 2e-5), and a quarter of it at dt = 0.05 ms (ratio 3-5: second order).
spreads = []
for dt in ("0.1 ms", "0.05 ms"):
    out = run(variant("swing.srd", **{"dt = 0.1 ms": "dt = " + dt}))
    if not out:
        continue
    with open(os.path.join(out, "energy.csv")) as f:
        rows = list(csv.DictReader(f))
    total = [float(r["total"]) for r in rows]
    kinetic = max(float(r["kinetic"]) for r in rows)
    spreads.append((max(total) - min(total)) / kinetic)
if len(spreads) == 2:
    check(spreads[0] < 2e-5 and 3 < spreads[0] / spreads[1] < 5,
          "Verlet energy: spread %.2e of the largest kinetic energy at dt = 0.1 ms (tol 2e-5), %.2e at 0.05 ms "
          "(ratio %.2f, tol 3-5)" % (spreads[0], spreads[1], spreads[0] / spreads[1]))

# 4. Lumped masses: rho times each node's Voronoi cell inside the body. A box's faces cut the
# cells of a cubic, bcc or fcc grid in exact halves, so its lattice weighs rho V to rounding
# (1e-12); curved bodies are scaled to rho V.
for grid in ("cubic", "bcc", "fcc"):
    model = variant("bar_tension.srd", **{"material = gel; }": "material = gel; grid = %s; }" % grid})
    p = srd("dump", model, "--json")
    mass = json.loads(p.stdout)["total_mass"] if p.returncode == 0 else float("nan")
    check(abs(mass / (1000 * 0.04 * 0.01 * 0.01) - 1) < 1e-12,
          "%s box lattice weighs rho V: %.15g kg (tol 1e-12 relative)" % (grid, mass))

# Materials by region: `material = x < 20 mm ? stiff : soft` with rho 2000 and 1000 kg/m^3. Nodes
# take the material at their position: the planes x = 0..15 mm (cells reaching 17.5 mm) are
# stiff, the rest soft, so the bar weighs 2000 * 17.5 + 1000 * 22.5 mm * 100 mm^2 = 5.75 g (1e-12).
model = variant("bar_tension.srd", **{"material gel { E = 1 MPa; rho = 1000 kg/m^3; }":
                                      "material gel { E = 1 MPa; rho = 1000 kg/m^3; }\n"
                                      "material hard { E = 100 MPa; rho = 2000 kg/m^3; }",
                                      "material = gel; }": "material = x < 20 mm ? hard : gel; }"})
p = srd("dump", model, "--json")
mass = json.loads(p.stdout)["total_mass"] if p.returncode == 0 else float("nan")
check(abs(mass / 5.75e-3 - 1) < 1e-12, "a bar of two materials by region weighs %.15g kg, 5.75 g (tol 1e-12 relative)"
      % mass)
out = run(model)
if out:
    pos = last_frame(os.path.join(out, "bar.csv"))
    ref = [[round(v / 2.5e-3) * 2.5e-3 for v in q] for q in pos]
    hard = [(q[0] - r[0]) / r[0] for q, r in zip(pos, ref) if abs(r[0] - 0.015) < 1e-9]
    soft = [(q[0] - r[0]) for q, r in zip(pos, ref) if abs(r[0] - 0.04) < 1e-9]
    # the hard half (E 100 times the soft one's) stretches by about a hundredth as much per length
    ratio = (sum(hard) / len(hard)) / ((sum(soft) / len(soft) - 0.015 * sum(hard) / len(hard)) / 0.025)
    check(0.005 < ratio < 0.02, "the hard half's strain is %.4f of the soft half's (E ratio 0.01; tol 0.005-0.02)"
          % ratio)

# Connectivity: node and spring counts of a 3 x 2 x 2-cell box for every grid and shell count,
# against a brute-force enumeration here (every pair of grid points inside the box at one of the
# first n distances of the grid).
def brute_counts(grid, shells, cells=(3, 2, 2)):
    basis = {"cubic": [(0, 0, 0)], "bcc": [(0, 0, 0), (1, 1, 1)],
             "fcc": [(0, 0, 0), (1, 1, 0), (1, 0, 1), (0, 1, 1)]}[grid]
    pts = [(2 * i + b[0], 2 * j + b[1], 2 * k + b[2]) for i in range(cells[0] + 1) for j in range(cells[1] + 1)
           for k in range(cells[2] + 1) for b in basis]
    pts = [p for p in pts if all(0 <= p[c] <= 2 * cells[c] for c in range(3))]
    d2 = sorted({sum((p[c] - q[c]) ** 2 for c in range(3)) for p in pts for q in pts if p != q})[:shells]
    springs = sum(1 for i, p in enumerate(pts) for q in pts[i + 1:] if sum((p[c] - q[c]) ** 2 for c in range(3)) in d2)
    return len(pts), springs


wrong = []
for grid, shells in (("cubic", 2), ("cubic", 3), ("bcc", 2), ("bcc", 3), ("fcc", 1), ("fcc", 2), ("fcc", 3)):
    model = os.path.join(tap.scratch("model_"), "box.srd")
    with open(model, "w") as f:
        f.write("material gel { E = 1 MPa; rho = 1000 kg/m^3; }\n"
                "lattice box { shape = box((15 mm, 10 mm, 10 mm)); spacing = 5 mm; grid = %s; neighbours = %d; "
                "material = gel; }\n" % (grid, shells))
    p = srd("dump", model, "--json")
    got = (json.loads(p.stdout)["nodes"], json.loads(p.stdout)["edges"]) if p.returncode == 0 else None
    if got != brute_counts(grid, shells):
        wrong.append("%s/%d: %s, enumerated %s" % (grid, shells, got, brute_counts(grid, shells)))
check(not wrong, "node and spring counts of every grid and shell count match an enumeration%s"
      % (": " + "; ".join(wrong) if wrong else ""))

# Filling a closed surface: the 15 x 10 x 10 mm box as an OBJ of 12 triangles (wound one way,
# and the other) holds the same lattice as box(...): nodes, springs and mass rho V exactly (the
# winding number decides inside, and grid points on the surface, within 1e-9 of the spacing,
# count as inside, as on a box's faces). An open surface is refused.
def box_obj(path, flip):
    corners = [(15e-3 * (k & 1), 10e-3 * (k >> 1 & 1), 10e-3 * (k >> 2 & 1)) for k in range(8)]
    quads = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    with open(path, "w") as f:
        f.write("".join("v %.17g %.17g %.17g\n" % c for c in corners))
        for q in quads if not flip else [tuple(reversed(q)) for q in quads]:
            f.write("f %d %d %d\nf %d %d %d\n" % (q[0] + 1, q[1] + 1, q[2] + 1, q[0] + 1, q[2] + 1, q[3] + 1))


dumps = []
for shape in ("box((15 mm, 10 mm, 10 mm))", "filled(\"box.obj\")", "filled(\"box_flipped.obj\")"):
    folder = tap.scratch("model_")
    box_obj(os.path.join(folder, "box.obj"), False)
    box_obj(os.path.join(folder, "box_flipped.obj"), True)
    model = os.path.join(folder, "fill.srd")
    with open(model, "w") as f:
        f.write("material gel { E = 1 MPa; rho = 1000 kg/m^3; }\n"
                "lattice box { shape = %s; spacing = 2.5 mm; grid = bcc; material = gel; }\n" % shape)
    p = srd("dump", model, "--json")
    dumps.append(json.loads(p.stdout) if p.returncode == 0 else None)
same = all(d and (d["nodes"], d["edges"]) == (dumps[0]["nodes"], dumps[0]["edges"]) and
           abs(d["total_mass"] / (1000 * 15e-3 * 1e-4) - 1) < 1e-12 for d in dumps)
check(same, "a lattice filling a closed OBJ box (either winding) is the box's: %s" %
      [(d["nodes"], d["edges"], d["total_mass"]) if d else None for d in dumps])
folder = tap.scratch("model_")
with open(os.path.join(folder, "open.obj"), "w") as f:
    f.write("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\nf 1 3 4\n")
with open(os.path.join(folder, "open.srd"), "w") as f:
    f.write("material gel { E = 1 MPa; rho = 1000 kg/m^3; }\n"
            "lattice l { shape = filled(\"open.obj\", scale = 1 cm); spacing = 2 mm; material = gel; }\n")
p = srd("check", os.path.join(folder, "open.srd"))
check(p.returncode == 1 and "closed" in p.stderr and "open.srd:2:" in p.stderr,
      "a lattice filling an open surface is refused at the file name: %s" % p.stderr.strip()[:200])

# 5. Volumetric actuation: every spring of a free cylinder rests 2 % longer; the static
# equilibrium is the reference scaled by 1.02 about the held node, exactly (tol 1e-15 m).
out = run(os.path.join(here, "expand.srd"))
if out:
    pos = last_frame(os.path.join(out, "block.csv"))
    err = max(abs(p[c] - 1.02 * round(p[c] / 1.02 / 1e-3) * 1e-3) for p in pos for c in range(3))
    check(err < 1e-15, "an expanded free cylinder is the reference scaled by 1.02: largest deviation %.1e m "
                       "(tol 1e-15 m)" % err)

# 6. By region: at t = 50 ms the slab's front half (x < 20 mm) rests 5 % longer and its back
# half 5 % shorter. The slab's axial frequency (about 400 Hz) is far above the 5 Hz schedule, so
# each half is near its quasi-static length: within 1 % of +-5 %.
out = run(os.path.join(here, "walker.srd"))
if out:
    pos = last_frame(os.path.join(out, "slab.csv"))
    col = [i % 21 for i in range(len(pos))]  # grid order: x fastest, 21 nodes a row, 2 mm apart
    front = [p[0] for p, c in zip(pos, col) if c in (0, 9)]
    back = [p[0] for p, c in zip(pos, col) if c in (11, 20)]
    grow = (sum(front[1::2]) - sum(front[0::2])) / len(front[0::2]) / 18e-3 - 1
    shrink = (sum(back[1::2]) - sum(back[0::2])) / len(back[0::2]) / 18e-3 - 1
    check(abs(grow - 0.05) < 0.01 and abs(shrink + 0.05) < 0.01,
          "actuated halves in antiphase: front half %+.2f %%, back half %+.2f %% (tol: +-5 %% within 1 %%)"
          % (100 * grow, 100 * shrink))

# 7. examples/thermal_bimorph.srd: a strip whose lower half expands by 1 % curls with curvature
# 3 eps / (2 h) = 3.75 /m (bilayer of equal moduli). A circle fitted (least squares) to the
# deformed mid-plane's centre line: -10.3 % at 4 cells through the thickness, -30.5 % at 2;
# tolerance: within 12 % at 4 cells, and the error at least halves from 2 to 4 cells (order > 1).
def det3(m):
    return (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))


def circle_curvature(pts):
    """1 / R of the circle x^2 + z^2 + D x + E z + F = 0 fitted to pts by least squares."""
    rows = [(x, z, 1.0) for x, z in pts]
    rhs = [-(x * x + z * z) for x, z in pts]
    n = [[sum(r[i] * r[j] for r in rows) for j in range(3)] for i in range(3)]
    v = [sum(r[i] * b for r, b in zip(rows, rhs)) for i in range(3)]
    d, e, f = (det3([[v[i] if j == k else n[i][j] for j in range(3)] for i in range(3)]) / det3(n) for k in range(3))
    return 1 / math.sqrt(d * d / 4 + e * e / 4 - f)


bimorph_errors = []
for spacing, nx, ny, mid in ((2, 31, 6, 1), (1, 61, 11, 2)):
    path = os.path.join(examples, "thermal_bimorph.srd")
    if spacing == 2:
        path = variant_of(path, {"spacing = 1 mm": "spacing = 2 mm", "x == 1 mm": "x == 2 mm"})
    out = run(path)
    if not out:
        continue
    pos = last_frame(os.path.join(out, "bimorph.csv"))
    line = [(pos[i + nx * (ny // 2 + ny * mid)][0], pos[i + nx * (ny // 2 + ny * mid)][2]) for i in range(nx)]
    bimorph_errors.append(circle_curvature(line) / 3.75 - 1)
if len(bimorph_errors) == 2:
    check(abs(bimorph_errors[1]) < 0.12 and abs(bimorph_errors[0]) > 2 * abs(bimorph_errors[1]),
          "thermal bimorph curvature vs 3 eps / (2 h): %+.1f %% at 2 cells through the thickness, %+.1f %% at 4 "
          "(tol 12 %% at 4, error at least halved)" % (100 * bimorph_errors[0], 100 * bimorph_errors[1]))

# 8. The explicit fast path (runtime/explicit: structure-of-arrays state, a thread team over
# contiguous instance blocks) computes the same steps as the general path (SRD_EXPLICIT=general,
# the assembled residual of sim.c): the swinging cantilever with Verlet, with symplectic Euler
# under mass damping, with RK4, the walker's slab actuated by region, and the block sliding with
# friction (which reads the velocity through q0 = q - dt v on both paths) with Verlet and RK4;
# the fast path on 2 threads. The sums are taken in another order, so they agree to round-off: frames printed to
# 12 digits, positions within 1e-11 m (1e-10 of the 0.1 m beam; measured 1e-13 m).
swing_csv = {'output vtk "swing" every 20 ms': 'output csv "swing" every 20 ms'}
short_slide = {"duration = 0.2 s": "duration = 20 ms", "every 50 ms": "every 5 ms"}
cases = (("swing.srd", "swing.csv", dict(swing_csv)),
         ("swing.srd", "swing.csv", dict(swing_csv, **{"method = verlet": "method = euler",
                                                        "clamp beam": "damping { alpha = 20 /s; }\nclamp beam"})),
         ("swing.srd", "swing.csv", dict(swing_csv, **{"method = verlet": "method = rk4"})),
         ("walker.srd", "slab.csv", {"every 50 ms": "every 10 ms"}),
         ("slide.srd", "block.csv", dict(short_slide)),
         ("slide.srd", "block.csv", dict(short_slide, **{"method = verlet": "method = rk4"})))
for name, table, replace in cases:
    model = variant(name, **replace)
    fast, general = run(model, {"SRD_THREADS": "2"}), run(model, {"SRD_EXPLICIT": "general"})
    if not fast or not general:
        continue
    a, b = frames(os.path.join(fast, table)), frames(os.path.join(general, table))
    gap = max(abs(x - y) for r, q in zip(a, b) for x, y in zip(r, q)) if len(a) == len(b) else float("inf")
    method = [w for w in ("euler", "rk4", "verlet") if "method = " + w in open(model).read()][0]
    check(gap < 1e-11, "%s with %s: the fast path's frames are the general path's within %.1e m (tol 1e-11 m)"
          % (name, method, gap))

# 9. The stable time step is printed, and a dt above it refused at the file's dt with the
# estimate. swing.srd's estimate is 1.03e-4 s (2 / w_max by Gershgorin's bound); 0.2 ms is above.
p = srd("run", os.path.join(here, "swing.srd"), "--out", tap.scratch(), "--duration", "1 ms")
check(p.returncode == 0 and "stable time step 0.000103 s (dt = 0.0001 s)" in p.stdout,
      "the fast path prints the stable time step: %s" % p.stdout.strip().splitlines()[0] if p.stdout else p.stderr)
model = variant("swing.srd", **{"dt = 0.1 ms": "dt = 0.2 ms"})
line = [k for k, text in enumerate(open(model).read().splitlines(), 1) if "dt = 0.2 ms" in text][0]
col = open(model).read().splitlines()[line - 1].index("dt = 0.2 ms") + 1
p = srd("run", model, "--out", tap.scratch())
want = ("%s:%d:%d: error: dt = 0.0002 s is above the stable time step of `verlet` on this model, 0.000103 s"
        % (model, line, col))
lines = p.stderr.splitlines()
check(p.returncode == 1 and lines[:1] == [want] and len(lines) == 4 and lines[2] == "      |" + " " * col + "^"
      and lines[3].startswith("  hint: use dt <= 0.000103 s"),
      "a dt above the stable step is refused at the dt: %s" % p.stderr.strip())

# 10. Friction on every node on the fast path: a lattice block on a floor with Coulomb friction
# mu = 0.3 under gravity tilted by 25 deg slides with a = g (sin - mu cos) = 1.4786 m/s^2, from
# the mean node position at 0, 0.1 and 0.2 s (a = (s2 - 2 s1 + s0) / 0.01): within 1 % (the
# slip velocity, 1 cm/s, is far below the sliding speed; measured 0.01 %). The same on the top
# face of a box obstacle instead of the ground (measured 0.01 %).
box_floor = ("obstacle box floor { center = (0, 0, -50) mm; size = (1 m, 1 m, 100 mm); stiffness = 100 N/m; "
             "delta = 0.1 mm; friction = 0.3; slip_velocity = 1 cm/s; }")
for floor, model in (("the ground", os.path.join(here, "slide.srd")),
                     ("a box obstacle", variant("slide.srd", **{
                         "ground { stiffness = 100 N/m; delta = 0.1 mm; friction = 0.3; slip_velocity = 1 cm/s; }":
                         box_floor}))):
    out = run(model)
    if not out:
        continue
    rows = frames(os.path.join(out, "block.csv"))
    mean_x = {round(r[0], 6): sum(r[1::3]) / len(r[1::3]) for r in rows}
    a = -(mean_x[0.2] - 2 * mean_x[0.1] + mean_x[0.0]) / 0.01
    want = 9.81 * (math.sin(math.radians(25)) - 0.3 * math.cos(math.radians(25)))
    check(abs(a / want - 1) < 0.01, "lattice block slides with friction on %s at %.4f m/s^2, g (sin - mu cos) = "
          "%.4f m/s^2 (tol 1 %%)" % (floor, a, want))

# 11. Cronos's test on the fast path: the cantilever released under a small gravity (0.5 m/s^2,
# a 0.5 mm swing) rings at its first bending frequency, measured from the tip's crossings of its
# mean height over 0.5 s with Verlet at 0.9 of the stable step. Against the `modes` analysis of
# the same lattice (section 2): within 1.5 % (measured +0.07 %, +0.78 %, +0.03 % at 1, 2, 3 cells;
# the crossings also see the weak higher modes); against Euler-Bernoulli the error falls at an
# order above 1.5 as the spacing shrinks (+34.6 %, +11.5 %, +4.8 %).
def ring_frequency(path):
    rows = [(float(r["t"]), float(r["tip"])) for r in csv.DictReader(open(path))]
    mid = sum(v for _, v in rows) / len(rows)
    cross = [t0 + (mid - a) / (b - a) * (t1 - t0) for (t0, a), (t1, b) in zip(rows, rows[1:]) if (a - mid) * (b - mid) < 0]
    return (len(cross) - 1) / (2 * (cross[-1] - cross[0])) if len(cross) > 2 else float("nan")


ring_errors = []
for cells in (1, 2, 3):
    out = run(variant("ring.srd", **{"CELLS = 2": "CELLS = %d" % cells}))
    if not out:
        continue
    f = ring_frequency(os.path.join(out, "probes.csv"))
    ring_errors.append(f / f_eb - 1)
    if len(errors) == 3:
        f_modes = f_eb * (1 + errors[cells - 1])
        check(abs(f / f_modes - 1) < 0.015, "explicit cantilever, %d cells across: rings at %.4f Hz, modes %.4f Hz "
              "(%+.2f %%, tol 1.5 %%)" % (cells, f, f_modes, 100 * (f / f_modes - 1)))
if len(ring_errors) == 3:
    rates = [math.log(ring_errors[i] / ring_errors[i + 1]) / math.log((i + 2) / (i + 1)) for i in range(2)]
    check(all(e > 0 for e in ring_errors) and min(rates) > 1.5,
          "explicit cantilever frequency converges to Euler-Bernoulli: errors %s, observed orders %s (tol > 1.5)"
          % (", ".join("%.2f %%" % (100 * e) for e in ring_errors), ", ".join("%.2f" % r for r in rates)))

# 12. examples/lattice_walker.srd (issue 19 item 5, after Cronos's striped pneumatic walker): four
# chamber stripes firing in turn crawl the slab in -x on frictional ground, steadily: the mean
# node position advances by more than 0.4 mm in each quarter second after the pressure ramp
# (measured 0.60 and 0.61 mm; about 0.3 mm per 8 Hz cycle); on a frictionless floor it moves
# less than 0.05 mm in half a second (measured 0.015 mm, the settling onto the contact springs).
def mean_x(example, frames_csv, runs):
    """Per run (mu, duration) of the example: {mu: {t: mean node x}} of the runs that ran."""
    walked = {}
    for mu, duration in runs:
        out = tap.scratch()
        p = srd("run", os.path.join(examples, example + ".srd"), "--out", out, "--quiet", "-p", "mu=" + mu,
                "--duration", duration)
        check(p.returncode == 0, "%s runs with mu = %s: %s" % (example, mu, p.stderr.strip()[:300]))
        if p.returncode == 0:
            walked[mu] = {round(r[0], 3): sum(r[1::3]) / len(r[1::3]) for r in frames(os.path.join(out, frames_csv))}
    return walked


walked = mean_x("lattice_walker", "walker.csv", (("0.8", "0.75"), ("0", "0.5")))
if len(walked) == 2:
    steps = [walked["0.8"][a] - walked["0.8"][b] for a, b in ((0.25, 0.5), (0.5, 0.75))]
    drift = abs(walked["0"][0.5] - walked["0"][0.0])
    check(min(steps) > 0.4e-3 and drift < 0.05e-3,
          "lattice_walker crawls in -x with friction: %s mm per quarter second (tol > 0.4 mm); without it "
          "moves %.3f mm in 0.5 s (tol < 0.05 mm)" % (", ".join("%.2f" % (1e3 * v) for v in steps), 1e3 * drift))

# examples/quadruped_walker.srd: a lattice filling the quadruped's closed outline, its four leg
# chambers firing in turn, walks in -x on frictional ground: its mean node position moves more
# than 0.5 mm in the first 0.6 s (measured 0.75 mm); on a frictionless floor it moves less than
# 0.05 mm in 0.3 s.
walked = mean_x("quadruped_walker", "quadruped.csv", (("0.8", "0.6"), ("0", "0.3")))
moved = {mu: w[max(w)] - w[min(w)] for mu, w in walked.items()}
if len(moved) == 2:
    check(moved["0.8"] < -0.5e-3 and abs(moved["0"]) < 0.05e-3,
          "quadruped_walker walks in -x with friction (%.2f mm in 0.6 s, tol < -0.5 mm); without it moves %.3f mm "
          "in 0.3 s (tol < 0.05 mm)" % (1e3 * moved["0.8"], 1e3 * moved["0"]))

tap.finish()
