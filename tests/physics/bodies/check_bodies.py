#!/usr/bin/env python3
"""check_bodies.py SRDC — rigid bodies and joints against conservation laws and closed forms.
Each check states its tolerance and why it holds."""
import csv
import math
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from tap import check, finish  # noqa: E402

srdc = sys.argv[1]
scratch = tempfile.mkdtemp(prefix="srd_bodies_")
G = 9.81


def run(name, text, *extra):
    """Runs the model text; returns (exit code, probe rows, energy rows, stderr)."""
    path = os.path.join(scratch, name + ".srd")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(scratch, "out_" + name)
    p = subprocess.run([srdc, "run", path, "--out", out, "--quiet", *extra], capture_output=True, text=True)
    if p.returncode:
        print("# " + (p.stdout + p.stderr).replace("\n", "\n# "))

    def rows(file):
        file = os.path.join(out, file)
        return list(csv.DictReader(open(file))) if os.path.exists(file) else []
    return p.returncode, rows("probes.csv") or rows("static_probes.csv"), rows("energy.csv"), p.stderr


def vec(row, name):
    return [float(row[name + "." + c]) for c in "xyz"]


def norm(v):
    return math.sqrt(sum(x * x for x in v))


def ellip_k(k):
    """Complete elliptic integral of the first kind K(k), by the arithmetic-geometric mean."""
    a, b = 1.0, math.sqrt(1 - k * k)
    for _ in range(40):  # quadratic convergence: a handful of rounds reach rounding error
        a, b = (a + b) / 2, math.sqrt(a * b)
    return math.pi / (2 * a)


def crossings(ts, xs, rising=None):
    """Times where xs changes sign, by linear interpolation between samples."""
    out = []
    for i in range(1, len(xs)):
        if xs[i - 1] == 0 or xs[i - 1] * xs[i] >= 0:
            continue
        if rising is not None and (xs[i] > xs[i - 1]) != rising:
            continue
        out.append(ts[i - 1] + (ts[i] - ts[i - 1]) * xs[i - 1] / (xs[i - 1] - xs[i]))
    return out


# 1. A free body spinning about no principal axis: the discrete Euler equations of implicit
# Euler, midpoint and Newmark move its angular momentum by a rotation of the body frame
# (Pi1 = cay(theta)^T Pi0), and Verlet's free turn is the midpoint rule: the world angular
# momentum is conserved to the Newton tolerance, 1e-10 relative. Midpoint (and Verlet's turn)
# conserve the energy 1/2 Pi.J^-1 Pi too (a quadratic invariant), to 1e-10.
SPIN = """body brick {{ position = (0, 0, 0) m; shape = box; size = (0.3, 0.2, 0.1) m; density = 1000 kg/m^3;
  axis = (0.1, 0.2, 1); angular_velocity = (1, 5, 2) /s; velocity = (0.1, 0, 0) m/s; }}
simulate {{ method = {m}; dt = 2 ms; duration = 2 s; tolerance = 1e-12;
  probe L = angular_momentum(brick) every 20 ms; probe c = brick.node every 20 ms; }}
"""
# RK4 (in the rotation's chart) is fourth order: (w dt)^5 ~ 1e-10 per step, so its momentum and
# energy stay within 1e-7 over the 1,000 steps (measured 5e-11).
for method in ("implicit_euler", "implicit_midpoint", "newmark", "verlet", "rk4"):
    code, rows, energy, _ = run("spin_" + method, SPIN.format(m=method))
    if code or not rows:
        check(False, f"free body under {method} runs")
        continue
    L0 = vec(rows[0], "L")
    drift = max(norm([a - b for a, b in zip(vec(r, "L"), L0)]) for r in rows) / norm(L0)
    tol = 1e-7 if method == "rk4" else 1e-10
    check(drift < tol, f"free body, {method}: world angular momentum conserved to {drift:.2e} (tol {tol:g})")
    end = vec(rows[-1], "c")
    check(abs(end[0] - 0.2) < 1e-9, f"free body, {method}: its centre moves uniformly (x = {end[0]:.12f} m, 0.2)")
    if method in ("implicit_midpoint", "verlet", "rk4"):
        e = [float(r["kinetic"]) for r in energy]
        de = max(abs(x - e[0]) for x in e) / e[0]
        tol = 1e-7 if method == "rk4" else 1e-10
        check(de < tol, f"free body, {method}: kinetic energy conserved to {de:.2e} (tol {tol:g})")

# 1b. A body shaped by a closed triangle mesh (a 0.3 x 0.2 x 0.1 m box's 12 triangles, placed
# off its centre and turned 30 degrees about z): the mesh's volume integrals give the box's
# mass, centre and principal moments, so it spins exactly as `shape = box` turned the same way
# (axes, momentum: 1e-9 relative after 1 s).
C30, S30 = math.cos(math.pi / 6), math.sin(math.pi / 6)
corners = []
for k in range(8):
    x, y, z = [(0.5 if k >> c & 1 else -0.5) * d for c, d in enumerate((0.3, 0.2, 0.1))]
    corners.append((0.1 + C30 * x - S30 * y, 0.05 + S30 * x + C30 * y, 0.02 + z))
faces = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
with open(os.path.join(scratch, "brick.obj"), "w") as f:
    f.write("".join(f"v {p[0]:.17g} {p[1]:.17g} {p[2]:.17g}\n" for p in corners))
    f.write("".join(f"f {a + 1} {b + 1} {c + 1}\nf {a + 1} {c + 1} {d + 1}\n" for a, b, c, d in faces))
MESHED = """body brick {{ position = {pos}; {shape} density = 1000 kg/m^3; angular_velocity = (1, 5, 2) /s; }}
simulate {{ method = implicit_midpoint; dt = 2 ms; duration = 1 s; tolerance = 1e-12;
  probe c = brick.node every 0.5 s; probe L = angular_momentum(brick) every 0.5 s; probe e = axis(brick, 3) every 0.5 s; }}
"""
_, rows_m, _, _ = run("meshed", MESHED.format(pos="(0, 0, 0) m", shape='shape = mesh; mesh = obj("brick.obj");'))
_, rows_b, _, _ = run("boxed", MESHED.format(pos="(0.1, 0.05, 0.02) m", shape=f"shape = box; size = (0.3, 0.2, 0.1) m; "
                                             f"x_axis = ({C30}, {S30}, 0);"))
if rows_m and rows_b:
    diff = max(max(abs(a - b) for a, b in zip(vec(rm, q), vec(rb, q))) / max(1e-12, norm(vec(rb, q)))
               for rm, rb in zip(rows_m, rows_b) for q in ("c", "L"))
    e_m, e_b = vec(rows_m[-1], "e"), vec(rows_b[-1], "e")
    same_axis = abs(abs(sum(a * b for a, b in zip(e_m, e_b))) - 1) < 1e-9
    check(diff < 1e-9 and same_axis, f"a closed mesh of a box spins as the box: centre and momentum agree to "
          f"{diff:.1e}, its short axis too")
else:
    check(False, "mesh-shaped body runs")

# 2. The Dzhanibekov effect: spun near its intermediate axis (I1 < I2 < I3), a body flips that
# axis over and back. With L^2 > 2 E I2 the body-axis rate about it is proportional to
# sn(lambda t, k) (Landau & Lifshitz, Mechanics §37): it changes sign every 2 K(k) / lambda,
# lambda = sqrt((I3 - I2)(L^2 - 2 E I1) / (I1 I2 I3)), k^2 = (I2 - I1)(2 E I3 - L^2) /
# ((I3 - I2)(L^2 - 2 E I1)). Midpoint at dt = 0.5 ms errs by O((w dt)^2) ~ 1e-6 in the rates,
# which the flip's sensitivity near the separatrix (K grows like log(1/(1-k))) amplifies:
# 1e-3 relative on the flip interval.
I1, I2, I3 = 0.01, 0.02, 0.03
w0 = (0.05, 4.0, 0.3)
DZ = f"""body top {{ position = (0, 0, 0) m; inertia = ({I1}, {I2}, {I3}) kg*m^2; mass = 1 kg;
  angular_velocity = ({w0[0]}, {w0[1]}, {w0[2]}) /s; }}
simulate {{ method = implicit_midpoint; dt = 0.5 ms; duration = 12 s; tolerance = 1e-12;
  probe w = angular_velocity(top) every 0.5 ms; probe e2 = axis(top, 2) every 0.5 ms; }}
"""
code, rows, _, _ = run("dzhanibekov", DZ)
L2 = sum((I * w) ** 2 for I, w in zip((I1, I2, I3), w0))
E2 = sum(I * w * w for I, w in zip((I1, I2, I3), w0))
lam = math.sqrt((I3 - I2) * (L2 - E2 * I1) / (I1 * I2 * I3))
k = math.sqrt((I2 - I1) * (E2 * I3 - L2) / ((I3 - I2) * (L2 - E2 * I1)))
half = 2 * ellip_k(k) / lam
if code or not rows:
    check(False, "Dzhanibekov model runs")
else:
    ts = [float(r["t"]) for r in rows]
    w2 = [sum(a * b for a, b in zip(vec(r, "w"), vec(r, "e2"))) for r in rows]
    z = crossings(ts, w2)
    gaps = [b - a for a, b in zip(z, z[1:])]
    worst = max(abs(g / half - 1) for g in gaps) if gaps else 1
    check(len(gaps) >= 3 and worst < 1e-3,
          f"Dzhanibekov flip every {half:.5f} s (closed form, k = {k:.4f}): {len(gaps)} intervals, worst error "
          f"{worst:.2e} (tol 1e-3)")

# 3. A pendulum released horizontally (amplitude 90 degrees) on a revolute joint: its period
# is 4 sqrt(Ip / (m g l)) K(sin(45 deg)) with Ip = m l^2 + 2/5 m r^2 (a solid sphere). Midpoint
# at dt = 1 ms errs by O((w dt)^2) ~ 1e-6: 1e-4 relative. The joint holds the bob's centre at
# l from the pivot to 1e-9 m over the run.
L, R = 1.0, 0.02
PEND = f"""body bob {{ position = ({L}, 0, 0) m; shape = sphere; radius = {R} m; density = 1000 kg/m^3; }}
joint pivot {{ type = revolute; a = world; b = bob; at = (0, 0, 0) m; axis = (0, 1, 0); }}
gravity = (0, 0, -{G}) m/s^2;
simulate {{ method = {{m}}; dt = 1 ms; duration = 5 s; tolerance = 1e-10;
  probe x = bob.node every 1 ms; }}
"""
Ip = L * L + 0.4 * R * R
T = 4 * math.sqrt(Ip / (G * L)) * ellip_k(math.sin(math.pi / 4))
for method in ("implicit_midpoint", "implicit_euler", "newmark"):
    code, rows, energy, _ = run("pendulum_" + method, PEND.replace("{m}", method))
    if code or not rows:
        check(False, f"pendulum under {method} runs")
        continue
    ts = [float(r["t"]) for r in rows]
    xs = [float(r["x.x"]) for r in rows]
    off = max(abs(norm(vec(r, "x")) - L) for r in rows)
    check(off < 1e-9, f"pendulum, {method}: the revolute joint holds the bob at l to {off:.1e} m (tol 1e-9)")
    if method != "implicit_midpoint":
        continue
    z = crossings(ts, xs, rising=False)
    period = z[1] - z[0] if len(z) >= 2 else 0
    check(abs(period / T - 1) < 1e-4,
          f"pendulum of 90 degrees: period {period:.6f} s against the elliptic closed form {T:.6f} s "
          f"(error {abs(period / T - 1):.1e}, tol 1e-4)")

# 4. A double pendulum of two rigid links on revolute joints, chaotic at 90 degrees: implicit
# midpoint keeps its energy to O(dt^2) without drift; over 1,000 steps of 0.1 ms the total
# moves by less than 1e-6 of the kinetic energy it reaches.
DOUBLE = """gravity = (0, 0, -9.81) m/s^2;
body l1 { position = (0.1, 0, 0) m; shape = box; size = (0.2, 0.02, 0.02) m; density = 1000 kg/m^3; }
body l2 { position = (0.3, 0, 0) m; shape = box; size = (0.2, 0.02, 0.02) m; density = 1000 kg/m^3; }
joint top { type = revolute; a = world; b = l1; at = (0, 0, 0) m; axis = (0, 1, 0); }
joint knee { type = revolute; a = l1; b = l2; at = (0.2, 0, 0) m; axis = (0, 1, 0); }
simulate { method = implicit_midpoint; dt = 0.1 ms; duration = 0.1 s; }
"""
code, _, energy, _ = run("double", DOUBLE)
if code or not energy:
    check(False, "double pendulum runs")
else:
    tot = [float(r["total"]) for r in energy]
    kmax = max(float(r["kinetic"]) for r in energy)
    drift = max(abs(x - tot[0]) for x in tot) / kmax
    check(drift < 1e-6, f"double pendulum, midpoint, 1,000 steps: energy moves by {drift:.1e} of the kinetic energy "
          "(tol 1e-6)")

# 5. Reactions. A body hanging at rest from a revolute joint: the joint carries its weight,
# force (0, 0, m g) on the body, to 1e-9 relative (the body stays at rest, and each step's
# residual is below 1e-12 of the weight).
# A motor holding a horizontal arm (a box of length l pinned at its end) carries the moment
# m g l / 2 about the hinge; the joint carries the weight.
HANG = f"""gravity = (0, 0, -{G}) m/s^2;
body b {{ position = (0, 0, -0.5) m; shape = cylinder; radius = 2 cm; length = 0.4 m; density = 1000 kg/m^3; }}
body arm {{ position = (0.25, 0.3, 0) m; shape = box; size = (0.5, 0.04, 0.02) m; density = 2000 kg/m^3; }}
joint hook {{ type = revolute; a = world; b = b; at = (0, 0, 0) m; axis = (1, 0, 0); }}
joint shoulder {{ type = revolute; a = world; b = arm; at = (0, 0.3, 0) m; axis = (0, 1, 0); motor = angle; target = 0; }}
simulate {{ method = implicit_euler; dt = 1 ms; duration = 10 ms; tolerance = 1e-12;
  probe F = joint_force(hook); probe Fa = joint_force(shoulder); probe M = motor_effort(shoulder); }}
"""
code, rows, _, _ = run("hang", HANG)
mb = 1000 * math.pi * 0.02 ** 2 * 0.4
ma = 2000 * 0.5 * 0.04 * 0.02
if code or not rows:
    check(False, "hanging body and held arm run")
else:
    F = vec(rows[-1], "F")
    err = norm([F[0], F[1], F[2] - mb * G]) / (mb * G)
    check(err < 1e-9, f"hanging body: the joint carries its weight {mb * G:.6f} N (error {err:.1e}, tol 1e-9)")
    M = float(rows[-1]["M"])
    want = -ma * G * 0.25
    check(abs(M / want - 1) < 1e-9, f"held arm: motor torque {M:.9f} N m against -m g l / 2 = {want:.9f} (tol 1e-9)")
    Fa = vec(rows[-1], "Fa")
    err = norm([Fa[0], Fa[1], Fa[2] - ma * G]) / (ma * G)
    check(err < 1e-9, f"held arm: the hinge carries its weight (error {err:.1e}, tol 1e-9)")

# 5b. A joint limit: an arm (0.5 m, 0.8 kg) on a damped hinge limited to +-0.1 rad with a stop
# of 100 N m/rad (smoothed over 0.01 rad) falls onto the stop and comes to rest where the
# stop's torque k (theta - 0.1) balances m g (L / 2) cos(theta): to 1e-3 of the overshoot (the
# smoothing shifts it by about (w / overshoot)^2, w = 0.01 / 15). (A static solve cannot start
# inside the limits: the free range has no stiffness.)
LIMIT = f"""gravity = (0, 0, -{G}) m/s^2;
body arm {{ position = (0.25, 0, 0) m; shape = box; size = (0.5, 0.04, 0.02) m; density = 2000 kg/m^3; }}
joint stop {{ type = revolute; a = world; b = arm; at = (0, 0, 0) m; axis = (0, 1, 0);
  limits = (-0.1, 0.1); limit_stiffness = 100 N*m; limit_width = 0.01; damping = 1 N*m*s; }}
simulate {{ method = implicit_euler; dt = 5 ms; duration = 3 s; tolerance = 1e-12; probe e1 = axis(arm, 1) every 0.5 s; }}
"""
code, rows, _, _ = run("limit", LIMIT)
if code or not rows:
    check(False, "arm against a joint limit runs")
else:
    th = math.asin(-vec(rows[-1], "e1")[2])
    tau = 0.8 * G * 0.25
    want = 0.1
    for _ in range(50):
        want = 0.1 + tau * math.cos(want) / 100
    check(abs((th - 0.1) / (want - 0.1) - 1) < 1e-3, f"arm against its hinge's stop: rests at {th:.6f} rad "
          f"against {want:.6f} (0.1 + m g L cos / (2 k))")

# 6. A slider on a frictionless prismatic joint along a 30-degree incline, released at rest:
# s = g sin(30 deg) t^2 / 2 along the axis, which midpoint integrates exactly (constant force):
# 1e-9 relative after 1 s; the body neither turns nor leaves the line (1e-9).
SLIDE = f"""gravity = (0, 0, -{G}) m/s^2;
body slab {{ position = (0, 0, 0) m; shape = box; size = (0.1, 0.1, 0.1) m; density = 500 kg/m^3; }}
joint rail {{ type = prismatic; a = world; b = slab; axis = (-0.8660254037844386, 0, -0.5); }}
simulate {{ method = implicit_midpoint; dt = 10 ms; duration = 1 s; tolerance = 1e-12;
  probe x = slab.node every 0.1 s; probe e1 = axis(slab, 1) every 0.1 s; }}
"""
code, rows, _, _ = run("slider", SLIDE)
if code or not rows:
    check(False, "slider runs")
else:
    x = vec(rows[-1], "x")
    s_want = 0.5 * G * 0.5 * 1.0
    s_got = -x[0] * 0.8660254037844386 - x[2] * 0.5
    off = abs(x[0] * 0.5 - x[2] * 0.8660254037844386) + abs(x[1])
    check(abs(s_got / s_want - 1) < 1e-9, f"slider: travels {s_got:.9f} m against g sin(30) t^2 / 2 = {s_want:.9f} m")
    e1 = vec(rows[-1], "e1")
    check(off < 1e-9 and abs(e1[0] - 1) < 1e-9, f"slider: stays on its line ({off:.1e} m) without turning")

# 7. A rod clamped into a hub spun up smoothly to 20 rad/s by a velocity motor: at a steady spin
# it carries the centrifugal stretch rho w^2 / (2 E) [R^2 (R - r0) - (R^3 - r0^3) / 3] at its tip
# (r0, R: its ends' radii). Implicit Euler at dt = 0.5 ms and 41 nodes: within 1 %.
SPUN = """material rubber { E = 1 MPa; rho = 1000 kg/m^3; }
body hub { position = (0, 0, 0) m; shape = cylinder; radius = 2 cm; length = 1 cm; density = 1000 kg/m^3; }
rod arm { path = line((0.02, 0, 0) m, (0.12, 0, 0) m); nodes = 41; radius = 5 mm; material = rubber; }
joint root { type = fixed; a = arm.start; b = hub; }
joint axle { type = revolute; a = world; b = hub; axis = (0, 0, 1); motor = velocity;
  target = 20 /s * (t < 2 s ? 3 * (t / 2 s)^2 - 2 * (t / 2 s)^3 : 1); }
simulate { method = implicit_euler; dt = 0.5 ms; duration = 3 s; probe tip = arm.end every 0.1 s; }
"""
code, rows, _, _ = run("spun_rod", SPUN)
if code or not rows:
    check(False, "rod on a spinning hub runs")
else:
    R0, R1, W = 0.02, 0.12, 20.0
    want = 1000 * W * W / (2 * 1e6) * (R1 * R1 * (R1 - R0) - (R1 ** 3 - R0 ** 3) / 3)
    got = norm(vec(rows[-1], "tip")) - R1
    check(abs(got / want - 1) < 0.01, f"rod clamped into a spinning hub: centrifugal stretch {got * 1e6:.2f} um "
          f"against {want * 1e6:.2f} um (error {abs(got / want - 1) * 100:.2f} %, tol 1 %)")

# 8. A box resting on a 20-degree incline (its eight corners touch the ground's penalty, each
# with smooth Coulomb friction at the corner's own velocity): with mu = 0.5 > tan(20 deg) it
# sticks (it creeps at the smooth law's (2 v_s / 15) atanh(tan a / mu), about 1 um/s: below
# 1e-5 m/s); with mu = 0.2 it slides at g (sin a - mu cos a), to 1e-3 (the penalty settles
# within the first tenth of a second; implicit Euler is exact for constant acceleration).
INCLINE = """let a = 20 deg;
gravity = (0, 0, -9.81) m/s^2;
ground {{ incline = a; stiffness = 1000 N/m; delta = 1 mm; friction = {mu}; }}
body brick {{ shape = box; size = (0.1, 0.1, 0.05) m; density = 1000 kg/m^3;
  position = (-0.0255 m * sin(a), 0, 0.0255 m * cos(a)); axis = (-sin(a), 0, cos(a)); x_axis = (cos(a), 0, sin(a)); }}
simulate {{ method = implicit_euler; dt = 1 ms; duration = 1 s; probe c = brick.node every 10 ms; }}
"""
A = math.radians(20)
for mu in (0.5, 0.2):
    code, rows, _, _ = run(f"incline_{mu}", INCLINE.format(mu=mu))
    if code or not rows:
        check(False, f"box on an incline with mu = {mu} runs")
        continue
    down = [-(float(r["c.x"]) * math.cos(A) + float(r["c.z"]) * math.sin(A)) for r in rows]

    def speed(i):
        return (down[i + 1] - down[i - 1]) / 0.02
    if mu == 0.5:
        check(abs(speed(len(rows) - 2)) < 1e-5, f"box on 20 degrees, mu = 0.5: sticks (creeps at "
              f"{abs(speed(len(rows) - 2)) * 1e6:.2f} um/s)")
    else:
        acc = (speed(99) - speed(50)) / 0.49
        want = G * (math.sin(A) - mu * math.cos(A))
        check(abs(acc / want - 1) < 1e-3, f"box on 20 degrees, mu = 0.2: slides at {acc:.5f} m/s^2 against "
              f"g (sin a - mu cos a) = {want:.5f} (tol 1e-3)")

# 8b. A ball launched sliding at 0.1 m/s on a box obstacle (friction 0.5) rolls: friction at
# its touching point slows it to 5/7 of that speed with w = v / r, then rolls on free of
# friction; the obstacle carries its weight. Checked at 1 s: 1e-3 (penalty and smooth friction).
ROLL = """gravity = (0, 0, -9.81) m/s^2;
obstacle box table { center = (0, 0, -0.05) m; size = (0.4, 0.4, 0.1) m; stiffness = 1000 N/m; delta = 1 mm;
                     friction = 0.5; }
body ball { position = (0, 0, 0.0205) m; shape = sphere; radius = 2 cm; density = 1000 kg/m^3; velocity = (0.1, 0, 0) m/s; }
simulate { method = implicit_euler; dt = 1 ms; duration = 1 s; probe c = ball.node every 0.1 s;
  probe w = angular_velocity(ball) every 0.1 s; probe F = contact_force(table) every 0.1 s; }
"""
code, rows, _, _ = run("rolling", ROLL)
if code or not rows:
    check(False, "ball rolling on a box obstacle runs")
else:
    v = (float(rows[-1]["c.x"]) - float(rows[-2]["c.x"])) / 0.1
    wy = vec(rows[-1], "w")[1]
    F = [float(rows[-1]["F.f" + c]) for c in "xyz"]
    mg = 1000 * 4 / 3 * math.pi * 0.02 ** 3 * G
    check(abs(v / (0.1 * 5 / 7) - 1) < 1e-3 and abs(wy * 0.02 / v - 1) < 1e-3 and abs(F[2] / mg - 1) < 1e-3 and
          abs(F[0]) < 1e-6 * mg, f"ball on a box obstacle: rolls at {v:.6f} m/s (5/7 of 0.1: {0.5 / 7:.6f}), "
          f"w r / v = {wy * 0.02 / v:.6f}, contact force {F[2]:.6f} N (m g {mg:.6f}), no friction once rolling")

# 9. Modes of a hinged chain: two uniform links (0.2 m x 2 cm x 2 cm) hanging from hinges, about
# their static equilibrium (the joints' tension gives the geometric stiffness). Small swings
# obey M q'' + K q = 0 with M11 = I + m l^2 / 4 + m l^2, M22 = I + m l^2 / 4, M12 = m l^2 / 2,
# K11 = 3 m g l / 2, K22 = m g l / 2 (I = m (l^2 + a^2) / 12): frequencies to 1e-6.
CHAIN = """gravity = (0, 0, -9.81) m/s^2;
body l1 { position = (0, 0, -0.1) m; shape = box; size = (0.02, 0.02, 0.2) m; density = 1000 kg/m^3; }
body l2 { position = (0, 0, -0.3) m; shape = box; size = (0.02, 0.02, 0.2) m; density = 1000 kg/m^3; }
joint a { type = revolute; a = world; b = l1; at = (0, 0, 0) m; axis = (0, 1, 0); }
joint b { type = revolute; a = l1; b = l2; at = (0, 0, -0.2) m; axis = (0, 1, 0); }
static { tolerance = 1e-12; probe F = joint_force(a); }
modes { count = 2; at = equilibrium; }
"""
path = os.path.join(scratch, "chain_modes.srd")
with open(path, "w") as f:
    f.write(CHAIN)
p = subprocess.run([srdc, "run", path, "--out", os.path.join(scratch, "out_chain"), "--quiet"], capture_output=True,
                   text=True)
freqs = [float(r["frequency_hz"]) for r in csv.DictReader(open(os.path.join(scratch, "out_chain", "modes.csv")))] \
    if p.returncode == 0 else []
m_, l_, a_ = 1000 * 0.02 * 0.02 * 0.2, 0.2, 0.02
I_ = m_ * (l_ * l_ + a_ * a_) / 12
M11, M22, M12 = I_ + m_ * l_ * l_ / 4 + m_ * l_ * l_, I_ + m_ * l_ * l_ / 4, m_ * l_ * l_ / 2
K11, K22 = 1.5 * m_ * G * l_, 0.5 * m_ * G * l_
# det(K - w2 M) = 0: (M11 M22 - M12^2) w2^2 - (K11 M22 + K22 M11) w2 + K11 K22 = 0
qa, qb, qc = M11 * M22 - M12 * M12, -(K11 * M22 + K22 * M11), K11 * K22
want = sorted(math.sqrt((-qb + sg * math.sqrt(qb * qb - 4 * qa * qc)) / (2 * qa)) / (2 * math.pi) for sg in (-1, 1))
ok = len(freqs) == 2 and all(abs(f / w - 1) < 1e-6 for f, w in zip(freqs, want))
check(ok, f"hinged chain modes {freqs} Hz against {[round(w, 7) for w in want]} (tol 1e-6)")
st = list(csv.DictReader(open(os.path.join(scratch, "out_chain", "static_probes.csv")))) if p.returncode == 0 else []
if st:
    F = vec(st[-1], "F")
    check(abs(F[2] / (2 * m_ * G) - 1) < 1e-9, f"hinged chain at rest: the top hinge carries both links' weight "
          f"({F[2]:.9f} N, tol 1e-9)")

# 10. RFEM chains converge to Euler-Bernoulli: a steel cantilever (1 m, r = 5 mm) of n spring-
# damping elements under its weight. Tip deflection q L^4 / (8 E I) and first frequency
# (1.8751^2 / 2 pi) sqrt(E I / (rho A L^4)): the errors fall as 1 / n^2 (the springs sit at the
# segments' centres, a midpoint rule), so the observed order between n = 5, 10, 20 is 2 +- 0.3.
# The same rod as a discrete elastic rod agrees with the n = 20 chain to 0.5 %.
RFEM = """material steel {{ E = 200 GPa; rho = 7800 kg/m^3; nu = 0.3; }}
gravity = (0, 0, -9.81) m/s^2;
rfem arm {{ path = line((0, 0, 0) m, (1, 0, 0) m); elements = {n}; radius = 5 mm; material = steel; }}
joint base {{ type = fixed; a = world; b = arm[0]; at = (0, 0, 0) m; }}
static {{ tolerance = 1e-12; probe tip = arm[{n}].node; probe e = axis(arm[{n}], 3); }}
modes {{ count = 1; at = equilibrium; }}
"""
E_, RHO_, R_, L_ = 200e9, 7800, 5e-3, 1.0
EI = E_ * math.pi * R_ ** 4 / 4
q_ = RHO_ * math.pi * R_ * R_ * G
d_eb = q_ * L_ ** 4 / (8 * EI)
f_eb = 1.8751040687 ** 2 / (2 * math.pi) * math.sqrt(EI / (RHO_ * math.pi * R_ * R_ * L_ ** 4))
errs = []
for n in (5, 10, 20):
    path = os.path.join(scratch, f"rfem{n}.srd")
    with open(path, "w") as f:
        f.write(RFEM.format(n=n))
    out = os.path.join(scratch, f"out_rfem{n}")
    p = subprocess.run([srdc, "run", path, "--out", out, "--quiet"], capture_output=True, text=True)
    if p.returncode:
        print("# " + p.stderr[:500])
        check(False, f"rfem chain of {n} elements runs")
        continue
    st = list(csv.DictReader(open(os.path.join(out, "static_probes.csv"))))[-1]
    tip = [a + 0.25 * L_ / n * b for a, b in zip(vec(st, "tip"), vec(st, "e"))]  # the last half element's far end
    f1 = float(list(csv.DictReader(open(os.path.join(out, "modes.csv"))))[0]["frequency_hz"])
    errs.append((n, -tip[2] / d_eb - 1, f1 / f_eb - 1))
    print(f"# rfem n = {n}: tip {-tip[2] * 1e3:.4f} mm (EB {d_eb * 1e3:.4f}), f1 {f1:.4f} Hz (EB {f_eb:.4f})")
if len(errs) == 3:
    od = [math.log(abs(errs[i][1] / errs[i + 1][1])) / math.log(2) for i in range(2)]
    of = [math.log(abs(errs[i][2] / errs[i + 1][2])) / math.log(2) for i in range(2)]
    check(all(abs(o - 2) < 0.3 for o in od + of) and abs(errs[2][1]) < 2e-3 and abs(errs[2][2]) < 1e-3,
          f"rfem converges to Euler-Bernoulli at order {od[1]:.2f} (tip) and {of[1]:.2f} (frequency); n = 20 errs "
          f"{errs[2][1] * 100:.3f} % and {errs[2][2] * 100:.3f} %")
DER = """material steel { E = 200 GPa; rho = 7800 kg/m^3; nu = 0.3; }
gravity = (0, 0, -9.81) m/s^2;
rod arm { path = line((0, 0, 0) m, (1, 0, 0) m); nodes = 41; radius = 5 mm; material = steel; }
clamp arm.start;
static { tolerance = 1e-12; probe tip = arm.end; }
"""
code, rows, _, _ = run("der_cantilever", DER)
if rows and len(errs) == 3:
    d_der = -vec(rows[-1], "tip")[2]
    d_rfem = (1 + errs[2][1]) * d_eb
    check(abs(d_rfem / d_der - 1) < 5e-3, f"rfem (n = 20) against a discrete elastic rod on the same cantilever: "
          f"{d_rfem * 1e3:.4f} mm and {d_der * 1e3:.4f} mm")

# 11. A built simulator of a jointed model writes what `srdc run` writes, byte for byte.
built = os.path.join(scratch, "pendulum_sim")
p = subprocess.run([srdc, "build", os.path.join(scratch, "pendulum_implicit_midpoint.srd"), "-o", built],
                   capture_output=True, text=True)
if p.returncode == 0:
    q = subprocess.run([built, "--out", os.path.join(scratch, "built_out"), "--quiet"], capture_output=True, text=True)
    same = q.returncode == 0 and open(os.path.join(scratch, "built_out", "probes.csv")).read() == \
        open(os.path.join(scratch, "out_pendulum_implicit_midpoint", "probes.csv")).read()
    check(same, "a built pendulum simulator writes the probes srdc run writes, byte for byte")
else:
    check(False, "srdc build of the pendulum: " + p.stderr[:300])

# 12. A planar four-bar of hinges holds its out-of-plane motion twice: the run names a redundant
# constraint and says what to do.
LOOP = """gravity = (0, 0, -9.81) m/s^2;
body l1 { position = (0, 0, -0.1) m; shape = box; size = (0.02, 0.02, 0.2) m; density = 1000 kg/m^3; }
body l2 { position = (0.1, 0, -0.2) m; shape = box; size = (0.2, 0.02, 0.02) m; density = 1000 kg/m^3; }
body l3 { position = (0.2, 0, -0.1) m; shape = box; size = (0.02, 0.02, 0.2) m; density = 1000 kg/m^3; }
joint a { type = revolute; a = world; b = l1; at = (0, 0, 0) m; axis = (0, 1, 0); }
joint b { type = revolute; a = l1; b = l2; at = (0, 0, -0.2) m; axis = (0, 1, 0); }
joint c { type = revolute; a = l2; b = l3; at = (0.2, 0, -0.2) m; axis = (0, 1, 0); }
joint d { type = revolute; a = l3; b = world; at = (0.2, 0, 0) m; axis = (0, 1, 0); }
simulate { method = implicit_euler; dt = 1 ms; duration = 10 ms; }
"""
code, _, _, err = run("four_bar", LOOP)
check(code != 0 and "closed loop of joints" in err and "joint " in err and "multiplier" in err,
      f"an over-constrained four-bar: exit {code} (a numerical failure), the redundant constraint named, and a hint")

# 13. The examples with bodies and joints, and the outcomes examples/README.md states.
examples = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples")


def run_example(name, *extra):
    out = os.path.join(scratch, "ex_" + name)
    p = subprocess.run([srdc, "run", os.path.join(examples, name + ".srd"), "--out", out, "--quiet", *extra],
                       capture_output=True, text=True)
    if p.returncode:
        print("# " + p.stderr[:600].replace("\n", "\n# "))
    file = os.path.join(out, "probes.csv")
    return list(csv.DictReader(open(file))) if p.returncode == 0 and os.path.exists(file) else []


def at_time(rows, t):
    return min(rows, key=lambda r: abs(float(r["t"]) - t))


# rfem_pendulum: hangs still until 2.5 s, then follows the motor to 45 degrees (its tip within a
# degree of the straight line from the shaft by 5 s), and the motor carries the rod's moment
# m g (L / 2) sin(45 deg) (0.1 % at 5 s, the ringing damped).
rows = run_example("rfem_pendulum")
if rows:
    ang = lambda r: math.degrees(math.atan2(float(r["tip.x"]), -float(r["tip.z"])))
    m_rod = 2700 * math.pi * 0.004 ** 2 * 0.5
    want = m_rod * G * 0.25 * math.sin(math.pi / 4)
    tq = float(rows[-1]["torque"])
    check(abs(ang(at_time(rows, 2.4))) < 1e-6 and abs(ang(rows[-1]) + 45) < 1 and abs(tq / want - 1) < 1e-3,
          f"rfem_pendulum: still at 2.4 s, tip at {ang(rows[-1]):.2f} deg at 5 s (-45), motor torque {tq:.5f} N m "
          f"against m g L/2 sin 45 = {want:.5f}")
else:
    check(False, "rfem_pendulum runs")

# appendage_base: the sensor swings with the base (+-30 deg at 1 Hz) and a little past it (the
# appendage bends), and stays clamped 7.25 mm beyond the rod's end (1e-9 m).
rows = run_example("appendage_base")
if rows:
    ang = [math.degrees(math.atan2(float(r["tip.y"]), -float(r["tip.z"]))) for r in rows]
    off = max(abs(norm([a - b for a, b in zip(vec(r, "tip"), vec(r, "end"))]) - 0.00725) for r in rows)
    amp = max(abs(a) for a in ang[len(ang) // 3:])
    check(30 < amp < 35 and off < 1e-9, f"appendage_base: the tip sensor swings +-{amp:.2f} deg (base +-30), "
          f"held at the rod's end to {off:.1e} m")
else:
    check(False, "appendage_base runs")

# rigid_gripper: the palm stops 2 cm lower; the fingertips close on the box's sides (|x| = 2 cm
# within 1 mm); the box stays put (1 mm); the slide carries the palm and fingers before contact.
rows = run_example("rigid_gripper")
if rows:
    end, early = rows[-1], at_time(rows, 0.3)
    tips = (abs(float(end["left_tip.x"])), abs(float(end["right_tip.x"])))
    box = vec(end, "box")
    w = (1200 * 0.08 * 0.02 * 0.01 + 2 * 1200 * math.pi * 0.0015 ** 2 * 0.08) * G
    check(abs(float(end["palm_z.z"]) - 0.1) < 1e-9 and all(abs(x - 0.02) < 1e-3 for x in tips) and
          norm([box[0], box[1], box[2] - 0.0205]) < 1e-3 and abs(float(early["lift"]) / w - 1) < 1e-3,
          f"rigid_gripper: fingertips at x = -{tips[0]:.4f} and {tips[1]:.4f} m on the box's faces (0.02), box at "
          f"{[round(v, 4) for v in box]}, slide force {float(early['lift']):.4f} N (weight {w:.4f})")
else:
    check(False, "rigid_gripper runs")

# sleeve_pendulum (first 0.6 s): the arm swings down through the vertical; the sleeve's middle
# stays over the elbow (within 6 cm of it: the sleeve's radius is 4 cm).
rows = run_example("sleeve_pendulum", "--duration", "0.6 s")
if rows:
    lowest = min(float(r["wrist.z"]) for r in rows)
    # the elbow is where the upper arm's axis ends: 0.15 m beyond its centre, away from the shoulder
    far = max(norm([m - 2 * e for m, e in zip(vec(r, "mid"), vec(r, "elbow_x"))]) for r in rows)
    check(lowest < -0.4 and far < 0.06, f"sleeve_pendulum: the wrist swings down to z = {lowest:.3f} m; the sleeve's "
          f"middle stays within {far * 100:.1f} cm of the elbow")
else:
    check(False, "sleeve_pendulum runs")

# 14. Bad input gets clear errors.
BAD = [
    ("self", "body b { position = (0,0,0) m; shape = sphere; radius = 1 cm; density = 1 kg/m^3; }\n"
             "joint j { type = revolute; a = b; b = b; }\n", "joins b to itself"),
    ("axis", "body b { position = (0,0,0) m; shape = sphere; radius = 1 cm; density = 1 kg/m^3; }\n"
             "joint j { type = revolute; a = world; b = b; axis = (0, 0, 0); }\n", "has zero length"),
    ("motor", "body b { position = (0,0,0) m; shape = sphere; radius = 1 cm; density = 1 kg/m^3; }\n"
              "joint j { type = fixed; a = world; b = b; motor = angle; target = 1; }\n", "no free coordinate"),
    ("mass", "body b { position = (0,0,0) m; shape = box; size = (1, 1, 1) m; mass = -1 kg; }\n", "must be positive"),
    ("inertia", "body b { position = (0,0,0) m; mass = 1 kg; inertia = (1, 1, 0) kg*m^2; }\n",
     "not positive definite"),
    ("triangle", "body b { position = (0,0,0) m; mass = 1 kg; inertia = (1, 1, 3) kg*m^2; }\n", "no body has"),
    ("open mesh", "body b { position = (0,0,0) m; shape = mesh; mesh = rectangle(1 cm, 1 cm, 5 mm); density = 1 kg/m^3; }\n",
     "not a closed surface"),
    ("verlet", "body b { position = (0,0,0) m; shape = sphere; radius = 1 cm; density = 1 kg/m^3; }\n"
               "joint j { type = spherical; a = world; b = b; }\n"
               "simulate { method = verlet; dt = 1 ms; duration = 1 ms; }\n", "needs an implicit method"),
]
for name, text, want in BAD:
    path = os.path.join(scratch, "bad_" + name + ".srd")
    with open(path, "w") as f:
        f.write(text + ("" if "simulate" in text else "simulate { method = implicit_euler; dt = 1 ms; duration = 1 ms; }\n"))
    p = subprocess.run([srdc, "check", path], capture_output=True, text=True)
    check(p.returncode == 1 and want in p.stderr and ":2:" in p.stderr or (p.returncode == 1 and want in p.stderr),
          f"bad input ({name}): exit 1 and `{want}`" + ("" if want in p.stderr else ": " + p.stderr[:300]))

shutil.rmtree(scratch)
finish()
