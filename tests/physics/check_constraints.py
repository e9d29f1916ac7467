#!/usr/bin/env python3
"""check_constraints.py SRDC DIR — reactions, contact forces and prescribed motion (the one
constraint mechanism) against balances and closed forms. DIR is tests/physics/constraints.
Each check states its tolerance and why it holds."""
import csv
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import check, finish  # noqa: E402
from vtk_frame import binary_arrays, frame_arrays, frame_points  # noqa: E402

srdc, here = sys.argv[1], sys.argv[2]
scratch = tempfile.mkdtemp(prefix="srd_constraints_")


def run(model, text=None):
    """Runs MODEL of DIR (or, with `text`, that text saved under MODEL's name); returns (exit
    code, probe rows, energy rows, output dir)."""
    path = os.path.join(here, model)
    if text is not None:
        path = os.path.join(scratch, model)
        with open(path, "w") as f:
            f.write(text)
    out = os.path.join(scratch, "out_" + model)
    p = subprocess.run([srdc, "run", path, "--out", out, "--quiet"], capture_output=True, text=True)
    if p.returncode:
        print(p.stdout + p.stderr)

    def rows(name):
        file = os.path.join(out, name)
        return list(csv.DictReader(open(file))) if os.path.exists(file) else []
    # a simulation's probes, or else the static equilibrium's
    return p.returncode, rows("probes.csv") or rows("static_probes.csv"), rows("energy.csv"), out


def cross(u, v):
    return [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]


def rotate(axis, angle, x):
    """Rodrigues: x turned by angle about the unit axis."""
    c, s, d = math.cos(angle), math.sin(angle), sum(a * b for a, b in zip(axis, x))
    ax = cross(axis, x)
    return [c * x[k] + s * ax[k] + (1 - c) * d * axis[k] for k in range(3)]


RHO, R_ROD, G = 1000.0, 2e-3, 9.81
AREA = math.pi * R_ROD ** 2

# 1. Cantilever under its weight and a tip load: the clamp's reaction (force, and moment
# about the clamped node) balances gravity on every node and the load. The residual of the
# free rows is below 1e-12 of the largest force, so the balance holds to 1e-9 relative.
code, rows, _, out = run("cantilever_reaction.srd")
check(code == 0 and rows, "cantilever reaction: static solve succeeds")
if rows:
    r = rows[-1]
    pts = frame_points(os.path.join(out, "sag_000000.vtu"))
    n = len(pts)
    seg = RHO * AREA * 0.1 / (n - 1)
    load = [1e-3, 2e-3, -3e-3]
    force, moment = [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
    for i, p in enumerate(pts):
        f = [0.0, 0.0, -G * seg * (0.5 if i in (0, n - 1) else 1)]
        if i == n - 1:
            f = [f[k] + load[k] for k in range(3)]
        arm = [p[k] - pts[0][k] for k in range(3)]
        force = [force[k] + f[k] for k in range(3)]
        moment = [moment[k] + c for k, c in enumerate(cross(arm, f))]
    R = [float(r["R.f" + c]) for c in "xyz"]
    M = [float(r["R.m" + c]) for c in "xyz"]
    scale_f, scale_m = max(map(abs, force)), max(map(abs, moment))
    err_f = max(abs(R[k] + force[k]) for k in range(3)) / scale_f
    err_m = max(abs(M[k] + moment[k]) for k in range(3)) / scale_m
    check(err_f <= 1e-9, "cantilever: clamp force + weight + load = 0 to %.2e of the weight plus load (tol 1e-9)" % err_f)
    check(err_m <= 1e-9, "cantilever: clamp moment balances the loads' moment to %.2e (tol 1e-9)" % err_m)
    field = dict(frame_arrays(os.path.join(out, "sag_000000.vtu")))["reaction"]
    total = [sum(field[k::3]) for k in range(3)]
    # The field is written with 9 significant digits, and node reactions of 0.1 N cancel to
    # 0.015 N: 1e-7 of the total.
    check(max(abs(total[k] - R[k]) for k in range(3)) <= 1e-7 * scale_f,
          "cantilever: the VTK `reaction` field sums to the probe's force")

# 1b. The same frame written `binary` (appended raw arrays): every array, read back through its
# offset and 64-bit size header, equals the text frame's to its 9 (points: 12) digits.
text = open(os.path.join(here, "cantilever_reaction.srd")).read().replace('output vtk "sag"', 'output vtk "sag" binary')
code, _, _, bout = run("cantilever_binary.srd", text)
check(code == 0, "cantilever, binary frames: runs")
if code == 0 and rows:
    ascii_frame = frame_arrays(os.path.join(out, "sag_000000.vtu"))
    binary_frame = binary_arrays(os.path.join(bout, "sag_000000.vtu"))
    same = [a[0] for a in ascii_frame] == [b[0] for b in binary_frame] and all(
        len(a[1]) == len(b[1]) and all(abs(x - y) <= 1e-8 * max(1.0, abs(x)) for x, y in zip(a[1], b[1]))
        for a, b in zip(ascii_frame, binary_frame))
    check(same, "binary frame holds the text frame's %d arrays" % len(ascii_frame))

# 2. Contact forces at rest: the ground carries a rod's weight and a named sphere a body's
# (x and y fixed, so contact alone holds them up). Each of the 11 rod nodes has a free-row
# residual below the Newton tolerance 1e-8 times the largest weight (0.049 N), so the ground's
# total can differ from the rod's weight by 11 x 4.9e-10 N = 4.4e-7 of it: tolerance 5e-7.
code, rows, _, out = run("resting_contact.srd")
check(code == 0 and rows, "resting contact: static solve succeeds")
if rows:
    rod_weight, pebble_weight = RHO * AREA * 0.1 * G, 5e-3 * G
    g = float(rows[-1]["G.fz"])
    b = float(rows[-1]["B.fz"])
    check(abs(g - rod_weight) <= 5e-7 * rod_weight,
          "ground's contact force %.10g N = rod weight %.10g N (%.1e, tol 5e-7)" % (g, rod_weight, g / rod_weight - 1))
    check(abs(b - pebble_weight) <= 5e-7 * pebble_weight,
          "sphere's contact force %.10g N = body weight %.10g N (tol 5e-7)" % (b, pebble_weight))
    check(abs(float(rows[-1]["G.fx"])) + abs(float(rows[-1]["B.fx"])) <= 1e-12, "contact forces are normal (flat ground)")
    field = dict(frame_arrays(os.path.join(out, "rest_000000.vtu")))["contact_force"]
    check(abs(sum(field[2::3]) - g - b) <= 1e-9 * (g + b), "the VTK `contact_force` field sums to both probes")

# 3. An anchor moved harmonically drives a damped oscillator (anchor_driven.srd): the bob's
# steady state against the closed form, and the anchor's reaction against the spring force
# plus the anchor's inertia and its mass-proportional damping alpha m u (exact: the reaction is
# the residual of the anchor's rows; u is the velocity the step damped, anchor_damped_velocity).
# Tolerances by method: the transient (0.1 m e^{-t/2} at t >= 25 s) is 2.3e-7 of X; implicit
# Euler damps numerically (order w dt = 0.013: 1e-2); symplectic Euler and Verlet evaluate
# the damping at the step's start velocity (first order: 3e-3); midpoint, Newmark and RK4
# are second order or better ((W dt)^2 = 6.4e-5: 5e-5). The anchor follows A sin(W t) to
# round-off in every method.
template = open(os.path.join(here, "anchor_driven.srd")).read()
k_s, mass, c_d, amp, w_f = 20.0, 0.5, 0.5, 0.01, 4.0
X = k_s * amp / math.sqrt((k_s - mass * w_f ** 2) ** 2 + (c_d * w_f) ** 2)
phi = math.atan2(c_d * w_f, k_s - mass * w_f ** 2)
tolerances = {"implicit_euler": 1e-2, "implicit_midpoint": 5e-5, "newmark": 5e-5, "euler": 3e-3, "verlet": 3e-3,
              "rk4": 5e-5}


def anchor_damped_velocity(method, t, dt=2e-3):
    """The anchor's velocity the damping of the step ending at t took: an implicit step's
    c1 (x1 - x0) + c0 v0, an explicit one's end velocity (and the start's own at t = 0)."""
    x, v = (lambda s: amp * math.sin(w_f * s)), (lambda s: amp * w_f * math.cos(w_f * s))
    if t == 0 or method in ("euler", "verlet", "rk4"):
        return v(t)
    if method == "newmark":
        return 2 * (x(t) - x(t - dt)) / dt - v(t - dt)
    return (x(t) - x(t - dt)) / dt


for method, tol in tolerances.items():
    code, rows, _, _ = run("anchor_%s.srd" % method, template.replace("implicit_midpoint", method))
    check(code == 0 and rows, "%s: driven anchor runs" % method)
    if not rows:
        continue
    steady = [r for r in rows if float(r["t"]) >= 25]
    err = max(abs(float(r["x"]) - 0.1 - X * math.sin(w_f * float(r["t"]) - phi)) for r in steady) / X
    check(err <= tol, "%s: bob follows the forced response X = %.6f m to %.2e of X (tol %g)" % (method, X, err, tol))
    anchor = max(abs(float(r["xa"]) - amp * math.sin(w_f * float(r["t"]))) for r in rows)
    # Exact but for the time itself, a sum of 15,000 steps (A W 30 s 1e-15 = 1e-15 m per ulp):
    # 1e-12 m.
    check(anchor <= 1e-12, "%s: the anchor is at A sin(W t) to %.1e m (prescribed, not penalised)" % (method, anchor))
    rerr = 0.0
    for r in rows:
        t, xa, xb = float(r["t"]), float(r["xa"]), float(r["x"])
        expected = -k_s * (xb - xa - 0.1) + 1e-3 * (-amp * w_f ** 2 * math.sin(w_f * t))
        expected += 1.0 * 1e-3 * anchor_damped_velocity(method, t)  # alpha m u, about 4e-5 N
        rerr = max(rerr, abs(float(r["R.fx"]) - expected))
    check(rerr <= 1e-9, "%s: anchor reaction = spring force + anchor inertia and damping to %.1e N (tol 1e-9 N: "
          "Newton)" % (method, rerr))

# 4. A rod pulled slowly at one end (2 Hz against a first axial mode near 160 Hz): the fixed
# end's reaction is the quasi-static tension EA u / L. The rod's own inertia and the mode
# excited at the start are of order (f / f1)^2 = 1.6e-4: tolerance 1e-3 of EA u0 / L.
code, rows, _, _ = run("axial_move.srd")
check(code == 0 and rows, "axial move: runs")
if rows:
    ea, length, u0 = 1e6 * AREA, 0.1, 0.5e-3
    err = max(abs(float(r["R0.fx"]) + ea * (float(r["u"]) - length) / length) for r in rows) / (ea * u0 / length)
    check(err <= 1e-3, "axial move: support reaction = -EA u / L to %.2e of EA u0 / L (tol 1e-3)" % err)
    peak = max(float(r["u"]) - length for r in rows)
    check(abs(peak - u0) <= 1e-12, "axial move: the end reaches u0 = 0.5 mm exactly")

# 4b. A propped cantilever whose prop is moved slowly across it (bent_slowly.srd): the prop's
# reaction is the quasi-static 3 EI w / L^3 over the second half of the run (w >= d / 2).
# Tolerance 0.5%: DER's clamped beam at 41 nodes is +0.22% off Euler-Bernoulli in a static
# solve, and the rod's inertia at 0.05 Hz shifts it by -0.04% (it scales as f^2: -0.6% at
# 0.2 Hz).
code, rows, _, _ = run("bent_slowly.srd")
check(code == 0 and rows, "slowly bent: runs")
if rows:
    ei, length = 1e6 * math.pi * R_ROD ** 4 / 4, 0.1
    late = [r for r in rows if float(r["t"]) >= 5]
    err = max(abs(float(r["R.fz"]) / (3 * ei * float(r["w"]) / length ** 3) - 1) for r in late)
    check(err <= 5e-3, "slowly bent: prop reaction = 3 EI w / L^3 to %.2e (tol 5e-3)" % err)

# 5. A clamped end turned 30 degrees about a skew axis, no loads: the rigidly rotated rod,
# every node at R x0 and every edge with the same twist, to round-off (1e-12 m, 1e-12 rad),
# strain below 1e-12, and no reaction (1e-12 N).
code, rows, _, out = run("rotated_clamp.srd")
check(code == 0 and rows, "rotated clamp: static solve succeeds")
if rows:
    axis = [1 / math.sqrt(3)] * 3
    frame = os.path.join(out, "turned_000000.vtu")
    pts = frame_points(frame)
    err = max(abs(p[k] - rotate(axis, math.radians(30), [0.01 * i, 0, 0])[k]) for i, p in enumerate(pts) for k in range(3))
    arrays = dict(frame_arrays(frame))
    twist = arrays["twist"][:len(pts) - 1]
    check(err <= 1e-12, "rotated clamp: nodes at R x0 to %.1e m (tol 1e-12)" % err)
    check(max(twist) - min(twist) <= 1e-12 and abs(twist[0]) > 0.1,
          "rotated clamp: uniform twist %.6f rad (the end frame turned with the nodes)" % twist[0])
    check(max(map(abs, arrays["strain"])) <= 1e-12, "rotated clamp: zero strain")
    check(max(abs(float(rows[-1][c])) for c in ("R.fx", "R.fy", "R.fz", "R.mx", "R.my", "R.mz")) <= 1e-12,
          "rotated clamp: no reaction")

# 6. A whole rod spun about a skew axis with a smooth angle 2 (1 - cos 2 pi t): it stays rigid
# step after step (potential energy below 1e-20 J: frames and twists follow the rotation), the
# tip is where the rotation puts it (1e-12 m) and the clamp's reaction is the inertia of the
# lumped masses, sum m_i (alpha x r_i + omega x (omega x r_i)), to 1e-10 of its largest value.
code, rows, energy, _ = run("spun_rod.srd")
check(code == 0 and rows and energy, "spun rod: runs")
if rows:
    axis = [1 / math.sqrt(3)] * 3
    check(max(abs(float(e["potential"])) for e in energy) <= 1e-20, "spun rod: stays rigid (potential energy 0)")
    seg = RHO * AREA * 0.01
    ferr = fmax = perr = 0.0
    for r in rows:
        t = float(r["t"])
        th, om, al = 2 * (1 - math.cos(2 * math.pi * t)), 4 * math.pi * math.sin(2 * math.pi * t), \
            8 * math.pi ** 2 * math.cos(2 * math.pi * t)
        f = [0.0, 0.0, 0.0]
        for i in range(11):
            ri = rotate(axis, th, [0.01 * i, 0, 0])
            ar = cross(axis, ri)
            aar = cross(axis, ar)
            for k in range(3):
                f[k] += seg * (0.5 if i in (0, 10) else 1) * (al * ar[k] + om * om * aar[k])
        ferr = max(ferr, max(abs(float(r["R.f" + c]) - f[k]) for k, c in enumerate("xyz")))
        fmax = max(fmax, max(map(abs, f)))
        tip = rotate(axis, th, [0.1, 0, 0])
        perr = max(perr, max(abs(float(r["tip." + c]) - tip[k]) for k, c in enumerate("xyz")))
    check(perr <= 1e-12, "spun rod: tip on the prescribed rotation to %.1e m" % perr)
    check(ferr <= 1e-10 * fmax, "spun rod: reaction = sum m a to %.1e of %.3g N" % (ferr / fmax, fmax))

# 7. Releases at T = 0.1 s (released.srd): a fixed body and a clamped cantilever fall from
# then on. Implicit midpoint integrates a constant force exactly, so the body is at
# -g (t - T)^2 / 2 to round-off (1e-12 m); the internal forces of the rod cancel in the sum
# over its nodes, so its centre of mass has acceleration -g: the second differences of the
# frames from T on give g to 1e-9 (Newton's tolerance over h^2). The supports carry the
# body's weight until T and nothing after.
code, rows, _, out = run("released.srd")
check(code == 0 and rows, "release: runs")
if rows:
    T, g = 0.1, G
    after = [r for r in rows if float(r["t"]) > T + 1e-9]
    err = max(abs(float(r["z"]) + g * (float(r["t"]) - T) ** 2 / 2) for r in after)
    check(err <= 1e-12, "release: the body falls as -g (t - T)^2 / 2 to %.1e m (tol 1e-12)" % err)
    held = all(abs(float(r["Rp.fz"]) - 5e-3 * g) <= 1e-12 for r in rows if float(r["t"]) <= T + 1e-9)
    check(held, "release: the body's support carries its weight until T")
    free_ = max(abs(float(r[c])) for r in after for c in ("Rp.fz", "Ra.fx", "Ra.fz", "Ra.my"))
    check(free_ == 0, "release: no reaction after T")
    n_nodes, seg = 11, RHO * AREA * 0.01
    masses = [seg * (0.5 if i in (0, n_nodes - 1) else 1) for i in range(n_nodes)]
    cm = []
    for k in range(10, 21):  # frames every 10 ms: frame 10 is T
        pts = frame_points(os.path.join(out, "fall_%06d.vtu" % k))[:n_nodes]
        cm.append([sum(m * p[c] for m, p in zip(masses, pts)) / sum(masses) for c in range(3)])
    h = 0.01
    acc = [[(cm[j + 1][c] - 2 * cm[j][c] + cm[j - 1][c]) / h ** 2 for c in range(3)] for j in range(1, len(cm) - 1)]
    err = max(max(abs(a[0]), abs(a[1]), abs(a[2] + g)) for a in acc) / g
    check(err <= 1e-9, "release: the rod's centre of mass accelerates at -g to %.1e (tol 1e-9)" % err)

# 7b. A cantilever released under gravity with Rayleigh damping (damped_reaction.srd): summed over
# the rod, the clamp's reaction closes each step's momentum balance over the free DOFs (node 1
# slides along the clamp's axis: free in x), R = sum m a + alpha sum m u + M |g| (vertical). beta
# K u sums to zero over the rod, so its share on the free nodes is the clamp's; without it (and
# the held nodes' alpha m u) the balance missed by 4 % of the weight. Implicit Euler: a =
# (x1 - 2 x0 + x-1)/dt^2, u = (x1 - x0)/dt. Newmark's trapezoidal rule, x1 - x0 = dt (v0 + v1)/2,
# turns the mean of its balances at three step ends into (R1 + 2 R0 + R-1)/4 against
# (x1 - 2 x0 + x-1)/dt^2 and u = (x1 - x-1)/(2 dt). (Midpoint evaluates the elastic forces at the
# step's middle but reactions at its end: no exact balance.) Tolerance 1e-9 N (7e-8 of the
# weight): the frames' 12 digits put 1e-13 m in a position, 1e-7 m/s^2 in a second difference at
# dt = 1 ms, 1e-10 N over the rod.
def damped_balance(method):
    text = open(os.path.join(here, "damped_reaction.srd")).read().replace("implicit_euler", method)
    code, rows, _, out = run("damped_%s.srd" % method, text)
    frames = os.path.join(out, "shape.csv")
    if code or not rows or not os.path.exists(frames):
        return None
    n, dt, alpha, m_total = 11, 1e-3, 2.0, 1100.0 * math.pi * 2e-3 ** 2 * 0.1
    mass = [m_total / (n - 1) * (0.5 if i in (0, n - 1) else 1.0) for i in range(n)]
    x = [[float(v) for v in list(r.values())[1:]] for r in csv.DictReader(open(frames))]
    reaction = [[float(r["R.f" + c]) for c in "xyz"] for r in rows]
    newmark, worst = method == "newmark", 0.0
    for k in range(2, len(x)):
        for c in range(3):
            nodes = range(1, n) if c == 0 else range(2, n)
            a = sum(mass[i] * (x[k][3 * i + c] - 2 * x[k - 1][3 * i + c] + x[k - 2][3 * i + c]) for i in nodes) / dt ** 2
            back = k - 2 if newmark else k - 1
            u = sum(mass[i] * (x[k][3 * i + c] - x[back][3 * i + c]) for i in nodes) / ((k - back) * dt)
            got = (reaction[k][c] + 2 * reaction[k - 1][c] + reaction[k - 2][c]) / 4 if newmark else reaction[k][c]
            worst = max(worst, abs(got - a - alpha * u - (m_total * 9.81 if c == 2 else 0)))
    return worst


for method in ("implicit_euler", "newmark"):
    worst = damped_balance(method)
    check(worst is not None and worst <= 1e-9, "%s: a damped cantilever's clamp reaction closes the momentum "
          "balance to %s N (tol 1e-9 N)" % (method, "%.1e" % worst if worst is not None else "?"))

# 8. A built simulator gives the same numbers as `srdc run` for prescribed motion and
# reactions (the motion's schedule kernel, with its time derivatives, is compiled ahead).
sim = os.path.join(scratch, "anchor_sim")
p = subprocess.run([srdc, "build", os.path.join(here, "anchor_driven.srd"), "-o", sim], capture_output=True, text=True)
check(p.returncode == 0, "built simulator of anchor_driven.srd: builds")
if p.returncode == 0:
    outs = [os.path.join(scratch, "built_%d" % k) for k in range(2)]
    subprocess.run([sim, "--out", outs[0], "--quiet", "--duration", "1"], capture_output=True)
    subprocess.run([srdc, "run", os.path.join(here, "anchor_driven.srd"), "--out", outs[1], "--quiet", "--duration", "1"],
                   capture_output=True)
    texts = [open(os.path.join(o, "probes.csv")).read() if os.path.exists(os.path.join(o, "probes.csv")) else None
             for o in outs]
    check(texts[0] is not None and texts[0] == texts[1], "built simulator: probes identical to srdc run")

shutil.rmtree(scratch)
finish()
