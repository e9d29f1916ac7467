#!/usr/bin/env python3
"""check_rods.py SRDC DIR — runs the rod models of DIR/rods (DIR is tests/physics) with
`srdc run` and compares them with beam theory, the elastica and closed forms of the discrete
model (issue 5). Each check states its tolerance and why it holds. docs/validation.md gives
the figures and explains the clamp.

The clamp. `clamp r.start` fixes the first two nodes and the first edge's twist; the first
edge's direction stands for the tangent at the wall, x = 0. The bending spring at node 1
(between edge 0 and edge 1) therefore stands for the rod from the wall to the middle of
edge 1, a length 3l/2 (l the edge length), where an interior spring stands for l: its
stiffness is EI / (3l/2) and its natural bend that of 3l/2 of rod. Every remaining error is
DER's O(l^2), against the beam of the drawn length L. (With the plain Voronoi length l the
wall would sit in the middle of the clamped edge, an O(l) error: -1.0025% at 200 nodes.)"""
import csv
import glob
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tap  # noqa: E402
from discrete_rod import chain_tip, natural_polygon, spring_length, weights  # noqa: E402
from vtk_frame import frame_arrays, frame_points  # noqa: E402
from tap import check  # noqa: E402

srdc, here = sys.argv[1], sys.argv[2]
rods = os.path.join(here, "rods")
work = tap.scratch("rods_")  # every run's files; removed at exit (SRD_KEEP_TEMP=1 keeps them)


def note(text):
    print("# " + text)


def run(model, *args, replace=()):
    """Runs DIR/rods/MODEL (after the text replacements `replace`, pairs old -> new, each of
    which must occur) and returns (exit status, probe rows, output directory, stdout)."""
    path = os.path.join(rods, model)
    if replace:
        text = open(path).read()
        for old, new in replace:
            assert old in text, "%s has no `%s`" % (model, old)
            text = text.replace(old, new)
        path = os.path.join(tempfile.mkdtemp(prefix="model_", dir=work), model)
        with open(path, "w") as f:
            f.write(text)
    out = tempfile.mkdtemp(prefix="out_", dir=work)
    p = subprocess.run([srdc, "run", path, "--out", out, "--quiet", *args], capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout + p.stderr)
    rows = []
    for name in ("probes.csv", "static_probes.csv"):  # the simulation's, else the equilibrium's
        if not rows and os.path.exists(os.path.join(out, name)):
            with open(os.path.join(out, name)) as f:
                rows = list(csv.DictReader(f))
    return p.returncode, rows, out, p.stdout


def last(rows, name):
    return [float(rows[-1][name + "." + c]) for c in "xyz"]


def modes(out):
    path = os.path.join(out, "modes.csv")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [float(r["frequency_hz"]) for r in csv.DictReader(f)]


def rk4(f, y, s0, s1, steps):
    h = (s1 - s0) / steps
    s = s0
    for _ in range(steps):
        a = f(s, y)
        b = f(s + h / 2, [yi + h / 2 * ai for yi, ai in zip(y, a)])
        c = f(s + h / 2, [yi + h / 2 * bi for yi, bi in zip(y, b)])
        d = f(s + h, [yi + h * ci for yi, ci in zip(y, c)])
        y = [yi + h / 6 * (ai + 2 * bi + 2 * ci + di) for yi, ai, bi, ci, di in zip(y, a, b, c, d)]
        s += h
    return y


def elastica(L, q_EI=0.0, P_EI=0.0, EA_EI=None, steps=2000):
    """Tip (x, z) of a cantilever of length L clamped horizontally at the origin under dead
    downward loads: q per length (its weight) and P at the tip, given over EI; with EA_EI
    (= EA / EI) the rod also stretches by the axial force N = -(q (L - s) + P) sin(theta).
    theta(s) is the tangent's angle, s the reference arc length: the moment of the loads
    beyond s gives EI theta'' = (q (L - s) + P) (1 + eps) cos(theta), theta(0) = 0,
    theta'(L) = 0 (free end), x' = (1 + eps) cos(theta), z' = (1 + eps) sin(theta). Solved by
    shooting on theta'(0) (secant method) with RK4 in 2000 steps (truncation error below 1e-12
    of the tip position)."""
    def rhs(s, y):
        th, k = y[0], y[1]
        shear = q_EI * (L - s) + P_EI
        eps = -shear * math.sin(th) / EA_EI if EA_EI else 0.0
        return [k, shear * (1 + eps) * math.cos(th), (1 + eps) * math.cos(th), (1 + eps) * math.sin(th)]

    def end(c):
        return rk4(rhs, [0.0, c, 0.0, 0.0], 0.0, L, steps)

    c0 = -(q_EI * L * L / 2 + P_EI * L)  # the linear-theory root curvature
    c1 = 0.9 * c0
    f0, f1 = end(c0)[1], end(c1)[1]
    for _ in range(50):
        if f1 == f0 or abs(f1) <= 1e-14 * abs(c1):
            break
        c0, f0, c1 = c1, f1, c1 - f1 * (c1 - c0) / (f1 - f0)
        f1 = end(c1)[1]
    y = end(c1)
    return y[2], y[3]


def elastica_elliptic(alpha):
    """Tip (x/L, z/L) of an inextensible cantilever under a vertical tip load with
    alpha = P L^2 / EI, from the elliptic-integral solution (Bisshopp and Drucker 1945):
    sqrt(alpha) = K(k) - F(phi1, k) with k^2 = (1 + sin theta0) / 2, sin phi1 = 1 / (sqrt(2) k),
    theta0 the tip angle (found by bisection); x/L = sqrt(2 sin theta0 / alpha),
    z/L = -(1 - 2 (E(k) - E(phi1, k)) / sqrt(alpha)). The integrals by Simpson's rule, 2000
    intervals (smooth integrands: k^2 < 0.95 here)."""
    def simpson(f, a, b, n=2000):
        h = (b - a) / n
        return h / 3 * (f(a) + f(b) + sum((4 if i % 2 else 2) * f(a + i * h) for i in range(1, n)))

    def F(phi, k):
        return simpson(lambda t: 1 / math.sqrt(1 - (k * math.sin(t)) ** 2), 0, phi)

    def E(phi, k):
        return simpson(lambda t: math.sqrt(1 - (k * math.sin(t)) ** 2), 0, phi)

    def parts(th0):
        k = math.sqrt((1 + math.sin(th0)) / 2)
        return k, math.asin(1 / (math.sqrt(2) * k))

    lo, hi = 1e-9, math.pi / 2 - 1e-9
    for _ in range(50):
        mid = (lo + hi) / 2
        k, phi1 = parts(mid)
        if F(math.pi / 2, k) - F(phi1, k) > math.sqrt(alpha):
            hi = mid
        else:
            lo = mid
    th0 = (lo + hi) / 2
    k, phi1 = parts(th0)
    return math.sqrt(2 * math.sin(th0) / alpha), -(1 - 2 * (E(math.pi / 2, k) - E(phi1, k)) / math.sqrt(alpha))


# ---------------------------------------------------------------------------------------------
# 1. Cantilever under gravity (MAT-DiSMech Fig. 11): L = 0.1 m, r = 1 mm, rho = 1200 kg/m^3.
L, r, rho, g = 0.1, 1e-3, 1200.0, 9.81
A, I = math.pi * r * r, math.pi * r ** 4 / 4
moduli = [("20 GPa", 20e9), ("2 GPa", 2e9), ("200 MPa", 200e6), ("20 MPa", 20e6)]


_gravity = {}


def gravity_tip(E_text, nodes):
    """Tip of cantilever_gravity.srd with the modulus and node count written in (runs once)."""
    if (E_text, nodes) in _gravity:
        return _gravity[E_text, nodes]
    code, rows, _, _ = run("cantilever_gravity.srd",
                           replace=[("param youngs = 20 GPa", "param youngs = " + E_text),
                                    ("nodes = 200;", "nodes = %d;" % nodes)])
    _gravity[E_text, nodes] = last(rows, "tip") if code == 0 and rows else None
    return _gravity[E_text, nodes]


def euler_bernoulli(E, length):
    return rho * A * g * length ** 4 / (8 * E * I)


# 1a. Convergence at 20 GPa (deflection 3e-4 of L: linear theory) against Euler-Bernoulli at
# the drawn length L. In linear theory the discrete tip is chain_tip() of the lumped weights
# exactly; the rest is geometric nonlinearity, of order (w/L)^2 ~ 1e-7 (measured -6.9e-8 at
# every size), so this is checked to 1.5e-7 (about twice it). The issue asks for 1% at 200
# nodes; docs/validation.md quotes -0.0126%, which the discrete model fixes (chain_tip, held to
# 1.5e-7 just before): checked to 0.015% (1.2 times it).
E = 20e9
theory = euler_bernoulli(E, L)
tips = {}
for n in (50, 100, 200):
    tip = gravity_tip("20 GPa", n)
    if tip is None:
        check(False, "cantilever under gravity, 20 GPa, %d nodes: static solve succeeds" % n)
        continue
    tips[n] = -tip[2]
    discrete = chain_tip(n, L, weights(n, L, rho * A * g), E * I)
    check(abs(tips[n] - discrete) <= 1.5e-7 * discrete,
          "cantilever under gravity, 20 GPa, %d nodes: tip %.6e m = %.6e m of the discrete model in linear theory "
          "(rel. diff. %.1e, tol 1.5e-7); error vs w_EB(L) = %.6e m: %+.4f%%"
          % (n, tips[n], discrete, tips[n] / discrete - 1, theory, 100 * (tips[n] / theory - 1)))
    if n == 200:
        check(abs(tips[n] / theory - 1) <= 1.5e-4,
              "cantilever under gravity, 20 GPa, 200 nodes: tip deflection vs Euler-Bernoulli %+.4f%% (tol 0.015%%)"
              % (100 * (tips[n] / theory - 1)))
if len(tips) == 3:
    h = {n: L / (n - 1) for n in tips}
    err = {n: theory - tips[n] for n in tips}
    orders = [math.log(err[a] / err[b]) / math.log(h[a] / h[b]) for a, b in ((50, 100), (100, 200))]
    orders_n = [math.log(err[a] / err[b]) / math.log(b / a) for a, b in ((50, 100), (100, 200))]
    # The observed order: DER's error is O(l^2); 1.9..2.1 holds once the l^3 term is below a
    # tenth of the l^2 term (l/L < 0.04 here).
    check(all(1.9 <= p <= 2.1 for p in orders),
          "cantilever under gravity: observed convergence order against w_EB(L) %.3f (50->100 nodes), %.3f "
          "(100->200) in the edge length (%.3f, %.3f in N); expected 2 (tol 1.9..2.1)"
          % (orders[0], orders[1], orders_n[0], orders_n[1]))
    # Richardson extrapolation with the order estimated from the three solutions alone (not
    # from the theory): solve (w100 - w50) / (w200 - w100) = (h50^p - h100^p) / (h100^p - h200^p)
    # for p by bisection, then w = w200 + (w200 - w100) / ((h100/h200)^p - 1). The O(l^3)
    # remainder at these sizes is ~1e-5 relative; measured +1.3e-6 (docs/validation.md), checked
    # to 4e-6 (three times it; the issue asked for 0.1%).
    ratio = (tips[100] - tips[50]) / (tips[200] - tips[100])
    lo, hi = 0.2, 4.0
    for _ in range(100):
        p = (lo + hi) / 2
        if (h[50] ** p - h[100] ** p) / (h[100] ** p - h[200] ** p) > ratio:
            hi = p
        else:
            lo = p
    p = (lo + hi) / 2
    rich = tips[200] + (tips[200] - tips[100]) / ((h[100] / h[200]) ** p - 1)
    check(abs(rich - theory) <= 4e-6 * theory,
          "cantilever under gravity: Richardson extrapolation from 100 and 200 nodes with the three-level order "
          "p = %.4f gives %.6e m vs w_EB = %.6e m (%+.2e relative, tol 4e-6)" % (p, rich, theory, rich / theory - 1))

# 1b. The E sweep at 200 nodes against Euler-Bernoulli and the heavy elastica (the exact
# large-deflection solution under self-weight, with the rod's axial stretching: 3e-5 at
# 20 MPa). DER's remaining error is O(l^2): -1.25e-4 in linear theory at 200 nodes
# (chain_tip against w_EB); the elastica is checked to 2e-4 in z (measured -1.3e-4 at every
# E) and 2e-5 in x (measured 6.8e-6 at 20 MPa, quoted 7e-6: three times it). At low E the tip
# falls short of Euler-Bernoulli by geometric nonlinearity (the rod turns, the load's lever
# arm shortens): the elastica says by 6.2% at 20 MPa (deflection 28% of L); the check is that
# srd follows it.
n = 200
for E_text, E in moduli:
    full = gravity_tip(E_text, n)
    if full is None:
        check(False, "E sweep, %s: static solve succeeds" % E_text)
        continue
    x, z = full[0], full[2]
    eb = euler_bernoulli(E, L)
    xe, ze = elastica(L, q_EI=rho * A * g / (E * I), EA_EI=A / I)
    note("E = %-7s 200 nodes: tip z %.6e m; vs w_EB(L) %+.3f%%; elastica/w_EB(L) - 1 = %+.3f%%"
         % (E_text, z, 100 * (-z / eb - 1), 100 * (-ze / eb - 1)))
    check(abs(z / ze - 1) <= 2e-4 and abs(x / xe - 1) <= 2e-5,
          "E sweep, %s, 200 nodes: tip (%.6e, %.6e) m vs heavy elastica (%.6e, %.6e) m: z %+.1e, x %+.1e relative "
          "(tol 2e-4 in z, 2e-5 in x)" % (E_text, x, z, xe, ze, z / ze - 1, x / xe - 1))
    if E_text == "20 MPa":
        check(-z / eb - 1 < -0.05,
              "E sweep, 20 MPa: the tip falls %.2f%% short of Euler-Bernoulli (the elastica: %.2f%%; geometric "
              "nonlinearity, expected more than 5%%)" % (-100 * (-z / eb - 1), -100 * (-ze / eb - 1)))

# 1c. `-p youngs=...` must give the same model as writing the modulus in the file (the sweep
# above substitutes the text; the docs say params override material values at run time).
code, rows, _, _ = run("cantilever_gravity.srd", "-p", "youngs=20MPa", replace=[("nodes = 200;", "nodes = 50;")])
overridden = last(rows, "tip")[2] if code == 0 and rows else None
written = gravity_tip("20 MPa", 50)
check(overridden is not None and written is not None and abs(overridden - written[2]) <= 1e-9 * abs(written[2]),
      "-p youngs=20MPa: tip z %s m vs %s m with E = 20 MPa written in the file (tol 1e-9 relative)"
      % (overridden, written and written[2]))

# ---------------------------------------------------------------------------------------------
# 2. Large deflection under a tip load P = 3 EI / L^2 (the tip turns by 56 degrees). The
# reference: the elastica with the rod's axial stretching (EA = E A: the axial force
# stretches it by 7e-6). The ODE reference is first checked against the elliptic-integral
# solution (inextensible) to 1e-9. The issue asks for tip x and z to 1%; DER's O(l^2) error
# at 51 nodes is +3.7e-4 in x and -1.25e-3 in z (docs/validation.md): checked to 1e-3 and
# 2.5e-3 (2-3 times them).
alpha = 3.0
xa, za = elastica(1.0, P_EI=alpha)
xb, zb = elastica_elliptic(alpha)
check(abs(xa - xb) <= 1e-9 and abs(za - zb) <= 1e-9,
      "elastica reference: ODE shooting tip (%.10f, %.10f) L vs elliptic integrals (%.10f, %.10f) L (tol 1e-9)"
      % (xa, za, xb, zb))
code, rows, _, _ = run("cantilever_tip_load.srd")
if code == 0 and rows:
    x, _, z = last(rows, "tip")
    xe, ze = elastica(L, P_EI=alpha / L ** 2, EA_EI=A / I)
    check(abs(x / xe - 1) <= 1e-3 and abs(z / ze - 1) <= 2.5e-3,
          "tip load, 51 nodes: tip (%.6f, %.6f) m vs the elastica (%.6f, %.6f) m: x %+.2e, z %+.2e relative (tol 1e-3 "
          "in x, 2.5e-3 in z)"
          % (x, z, xe, ze, x / xe - 1, z / ze - 1))
else:
    check(False, "tip load: static solve succeeds")

# ---------------------------------------------------------------------------------------------
# 3. Natural frequencies of the clamped-free rod with 50 nodes, E = 20 GPa:
# f_k = (beta_k L)^2 / (2 pi L^2) sqrt(EI / (rho A)). DER with lumped masses is O(l^2) off:
# 7.8e-4, 2.0e-3 and 2.3e-3 high for the first three (docs/validation.md): each checked to
# twice its figure (the issue asked for 1%).
beta = [1.8751040687, 4.6940911330, 7.8547574382]
n = 50
E = 20e9
c = math.sqrt(E * I / (rho * A))
code, rows, out, _ = run("cantilever_vibration.srd")
freq = modes(out)
if len(freq) == 6:
    mode_tol = (1.6e-3, 4e-3, 4.6e-3)
    for k in range(3):
        fy, fz = freq[2 * k], freq[2 * k + 1]
        exact = beta[k] ** 2 / (2 * math.pi * L ** 2) * c
        # the two bending planes of a round rod: equal to the eigensolver's precision
        tol = mode_tol[k]
        check(abs(fy - exact) <= tol * exact and abs(fz - exact) <= tol * exact and abs(fy - fz) <= 1e-6 * fz,
              "modes, 50 nodes: bending mode %d at %.3f Hz (both planes) vs beam theory %.3f Hz: %+.1e (tol %.1e)"
              % (k + 1, fz, exact, fz / exact - 1, tol))
else:
    check(False, "modes: 6 frequencies written (got %d)" % len(freq))

# Free vibration: the straight rod released with gravity on swings about its sagged
# equilibrium (amplitude = the static sag), mostly in mode 1. The period is measured from the
# crossings of the mid level (max + min) / 2 over about 10 periods, averaged over upward and
# downward crossings. Mode 2 (a few % of the tip amplitude, 6.3 times faster) moves single
# crossings by up to 0.3% of a period; over 10 periods the mean is within 0.1%. Implicit
# midpoint lengthens the period by (w dt)^2 / 12 = 1e-4 at dt = 0.05 ms. Measured (and quoted
# in docs/validation.md): -4.7e-5 from the modal frequency, +7.3e-4 from beam theory, the mid
# level 0.12% above the static sag (higher modes shift the extremes). This run is
# deterministic, so each is checked to about three times its figure: 1.5e-4, 1.5e-3
# and 0.3%. The sag is chain_tip's.
if rows:
    t = [float(rw["t"]) for rw in rows]
    zt = [float(rw["tip"]) for rw in rows]
    mid = (max(zt) + min(zt)) / 2
    up = [t[i] - (zt[i] - mid) * (t[i + 1] - t[i]) / (zt[i + 1] - zt[i]) for i in range(len(zt) - 1) if zt[i] < mid <= zt[i + 1]]
    dn = [t[i] - (zt[i] - mid) * (t[i + 1] - t[i]) / (zt[i + 1] - zt[i]) for i in range(len(zt) - 1) if zt[i] > mid >= zt[i + 1]]
    if len(up) >= 5 and len(dn) >= 5:
        f_sim = ((len(up) - 1) / (up[-1] - up[0]) + (len(dn) - 1) / (dn[-1] - dn[0])) / 2
        f_mode = freq[0] if freq else float("nan")
        exact = beta[0] ** 2 / (2 * math.pi * L ** 2) * c
        sag = chain_tip(n, L, weights(n, L, rho * A * g), E * I)
        check(abs(f_sim - f_mode) <= 1.5e-4 * f_mode and abs(f_sim - exact) <= 1.5e-3 * exact,
              "free vibration, 50 nodes: tip period gives %.3f Hz over %d periods vs modal %.3f Hz (%+.1e, tol 1.5e-4) "
              "and beam theory %.3f Hz (%+.1e, tol 1.5e-3)"
              % (f_sim, len(up) - 1, f_mode, f_sim / f_mode - 1, exact, f_sim / exact - 1))
        check(abs(-mid - sag) <= 3e-3 * sag,
              "free vibration: the tip oscillates about %.4e m vs the static sag %.4e m (%+.2f%%, tol 0.3%%)"
              % (mid, -sag, 100 * (-mid / sag - 1)))
    else:
        check(False, "free vibration: the tip oscillates (%d upward crossings)" % len(up))
else:
    check(False, "free vibration: simulation runs")

# ---------------------------------------------------------------------------------------------
# 4. Torsion. G = E / (2 (1 + nu)) = E / 3, J = pi r^4 / 2 = I1 + I2.
G, J = 20e9 / 3, math.pi * r ** 4 / 2
n = 50
l = L / (n - 1)
# 4a. A torque T on the end edge (a user energy -T theta: the language has no torque load and
# cannot prescribe a twist other than 0). Twist springs sit at nodes 1..N-2 between
# consecutive edges, GJ / (3l/2) at node 1 (it reaches the wall) and GJ / l beyond, so the end
# edge turns by T (L - l/2) / GJ exactly: an edge's twist angle is that of its centre, and the
# last edge's centre is L - l/2 from the wall. So GJ phi / (L - l/2) = T, and the twist
# extrapolated to the free end, phi_L = phi L / (L - l/2), gives GJ phi_L / L = T: the
# continuum's relation. The centreline stays straight, where the twist energy is exactly
# quadratic: the relation holds to Newton's tolerance (1e-12); checked to 1e-9 (probes carry
# 12 digits).
code, rows, _, _ = run("torsion_static.srd")
if code == 0 and rows:
    T = 0.1
    phi = float(rows[-1]["phi"])
    torque = G * J * phi / (L - l / 2)
    tip = last(rows, "tip")
    check(abs(torque - T) <= 1e-9 * T and max(abs(a - b) for a, b in zip(tip, (L, 0, 0))) <= 1e-12,
          "torsion: end edge twist %.9f rad, GJ phi / (L - l/2) = %.12f N m vs T = %.1f N m (%+.1e, tol 1e-9); the "
          "rod stays straight" % (phi, torque, T, torque / T - 1))
else:
    check(False, "torsion: static solve succeeds")
# 4b. Torsional modes with every node held: a fixed-free chain of M = N - 2 twist inertias
# m = rho J l joined by springs GJ / (3l/2) (to the wall) and GJ / l. Its frequencies are the
# roots of the chain's tridiagonal eigenproblem, found here by Sturm-sequence bisection to
# 1e-14; srd's eigensolver (LAPACK) reproduces them to 2.4e-12 (docs/validation.md): checked
# to 1e-11 (four times it). Its continuum limit is the fixed-free rod of length L:
# f_j = (2j - 1) / (4 L) sqrt(G / rho); the first two modes are -3.8e-5 and -3.4e-4 off it,
# checked to 1e-4 and 1e-3 (about three times them; the issue asked for 1%).
def chain_eigenvalues(diag, off, count):
    """The `count` smallest eigenvalues of the symmetric tridiagonal matrix (diag, off)."""
    def below(x):  # eigenvalues below x: sign changes of the Sturm sequence
        k, d = 0, 1.0
        for i, a in enumerate(diag):
            d = a - x - (off[i - 1] ** 2 / d if i else 0.0)
            if d == 0:
                d = 1e-300
            k += d < 0
        return k
    hi = max(abs(a) + 2 * max(map(abs, off)) for a in diag)
    roots = []
    for j in range(count):
        lo, up = 0.0, hi
        while up - lo > 1e-14 * up:
            mid = (lo + up) / 2
            lo, up = (mid, up) if below(mid) <= j else (lo, mid)
        roots.append((lo + up) / 2)
    return roots


code, _, out, _ = run("torsion_modes.srd")
freq = modes(out)
if len(freq) == 4:
    M = n - 2
    springs = [G * J / spring_length(k + 1, l) for k in range(M)]  # spring k ties inertia k to k - 1 (0: the wall)
    m_twist = rho * J * l
    diag = [(springs[k] + (springs[k + 1] if k + 1 < M else 0)) / m_twist for k in range(M)]
    off = [-springs[k] / m_twist for k in range(1, M)]
    chain = [math.sqrt(w2) / (2 * math.pi) for w2 in chain_eigenvalues(diag, off, 4)]
    worst = max(abs(a / b - 1) for a, b in zip(freq, chain))
    check(worst <= 1e-11, "torsional modes: 4 frequencies match the discrete chain's eigenvalues (worst %.1e, tol 1e-11)"
          % worst)
    cont = [(2 * j - 1) / (4 * L) * math.sqrt(G / rho) for j in (1, 2)]
    check(all(abs(a / b - 1) <= tol for a, b, tol in zip(freq, cont, (1e-4, 1e-3))),
          "torsional modes: %.1f Hz and %.1f Hz vs (2j - 1) sqrt(G/rho) / (4 L) = %.1f Hz and %.1f Hz "
          "(%+.1e, %+.1e; tol 1e-4, 1e-3)" % (freq[0], freq[1], cont[0], cont[1], freq[0] / cont[0] - 1, freq[1] / cont[1] - 1))
else:
    check(False, "torsional modes: 4 frequencies written (got %d)" % len(freq))

# ---------------------------------------------------------------------------------------------
# 4c. Mode labels and shapes (modes_labels.srd: clamped, 41 nodes, 4 x 2 mm rectangle, E = 20
# GPa, G = E / 3). Beam theory: bending f = (beta L)^2 / (2 pi L^2) sqrt(E I / (rho A)), beta L =
# 1.8751, 4.6941, 7.8548, 10.9955, 14.1372 (I1 = w h^3 / 12 in the x-z plane, I2 = h w^3 / 12 in
# the x-y plane); torsion sqrt(G J / (rho (I1 + I2))) / (4 L) (the twist inertia per length is
# rho (I1 + I2); J is Saint-Venant's); axial sqrt(E / rho) / (4 L). The eleven lowest, sorted,
# carry these labels; each frequency within 1% (the discrete rod's O(l^2) error: 0.32% at
# worst). The VTK frames draw each mode with one factor for every DOF: the
# torsion mode turns by 0.5 rad while its nodes stay within 1e-9 m (round-off, not amplified),
# bending modes move 1 cm (a tenth of the rod). Free-free (no clamp): six rigid modes (three
# translations, three rotations including the uniform twist), then bending with beta L = 4.7300
# in x-z and x-y.
E_m, rho_m, w_s, h_s = 20e9, 1200.0, 4e-3, 2e-3
A_s, I1_s, I2_s = w_s * h_s, w_s * h_s ** 3 / 12, h_s * w_s ** 3 / 12
J_s = w_s * h_s ** 3 * (1 / 3 - 0.21 * (h_s / w_s) * (1 - (h_s / w_s) ** 4 / 12))


def bending(beta_l, inertia):
    return beta_l ** 2 / (2 * math.pi * L ** 2) * math.sqrt(E_m * inertia / (rho_m * A_s))


theory = [(bending(b, I1_s), "bending x-z") for b in (1.8751, 4.6941, 7.8548, 10.9955, 14.1372)]
theory += [(bending(b, I2_s), "bending x-y") for b in (1.8751, 4.6941, 7.8548, 10.9955)]
theory += [(math.sqrt(E_m / 3 * J_s / (rho_m * (I1_s + I2_s))) / (4 * L), "torsion"),
           (math.sqrt(E_m / rho_m) / (4 * L), "axial")]
theory.sort()


def labelled_modes(out):
    with open(os.path.join(out, "modes.csv")) as f:
        return [(float(r["frequency_hz"]), r["label"]) for r in csv.DictReader(f)]


code, _, out, _ = run("modes_labels.srd")
got = labelled_modes(out) if code == 0 else []
worst = max((abs(g[0] / t[0] - 1) for g, t in zip(got, theory)), default=1)
check(len(got) == 11 and [g[1] for g in got] == [t[1] for t in theory] and worst <= 0.01,
      "clamped rod modes: labels %s match beam theory's; frequencies within %.2f%% (tol 1%%)"
      % (", ".join("%.0f Hz %s" % g for g in got), 100 * worst))
frames = sorted(glob.glob(os.path.join(out, "modes_*.vtu")))
if len(got) == 11 and len(frames) == 11:
    reference = [(L * i / 40, 0.0, 0.0) for i in range(41)]
    moves, twists = [], []
    for path in frames:
        moves.append(max(math.dist(p, q) for p, q in zip(frame_points(path), reference)))
        twists.append(max(abs(v) for v in dict(frame_arrays(path))["twist"]))
    k = [g[1] for g in got].index("torsion")
    others = [i for i in range(11) if i != k]
    check(abs(twists[k] - 0.5) <= 1e-9 and moves[k] <= 1e-9 and
          all(abs(moves[i] - 0.01) <= 1e-9 and twists[i] <= 1e-6 for i in others),
          "mode frames: torsion turns %.3g rad with its nodes within %.1e m; the others move %.3g m with twists below "
          "%.1e rad (tol: 0.5 rad, 1e-9 m; 1 cm, 1e-6 rad)" % (twists[k], moves[k], max(moves[i] for i in others),
                                                              max(twists[i] for i in others)))
else:
    check(False, "clamped rod modes: eleven labelled modes and frames")
code, _, out, _ = run("modes_labels.srd", replace=[("clamp beam.start;", ""), ("count = 11;", "count = 8;")])
got = labelled_modes(out) if code == 0 else []
free = sorted([(bending(4.7300, I1_s), "bending x-z"), (bending(4.7300, I2_s), "bending x-y")])
check(len(got) == 8 and all(g[1] == "rigid" for g in got[:6]) and [g[1] for g in got[6:]] == [f[1] for f in free] and
      all(abs(g[0] / f[0] - 1) <= 0.01 for g, f in zip(got[6:], free)),
      "free-free rod modes: %s (six rigid, then bending at %.1f and %.1f Hz, tol 1%%)"
      % (", ".join("%.3g Hz %s" % g for g in got), free[0][0], free[1][0]))

# ---------------------------------------------------------------------------------------------
# 5. A straight rod with natural curvature kappa (kappa L = pi), clamped, no load, relaxes to
# an arc. DER's natural bend of a spring standing for a length s of rod is 2 tan(asin(kappa
# s / 2)), the turning angle a = 2 asin(kappa l / 2) of chords l on a circle of radius
# R = 1 / kappa for interior springs (s = l) and b = 2 asin(3 kappa l / 4) at node 1 (s = 3l/2:
# from the wall tangent to the middle of edge 1). The equilibrium has zero energy: from the
# clamped chord (0, 0, 0)-(l, 0, 0), edge k >= 1 points at b + (k - 1) a above x
# (natural_polygon). Nodes 1..N-1
# lie on a circle of radius R; its centre is O(l^2) from the continuum's (0, 0, R) because the
# clamp holds node 1 on the wall tangent, kappa l^2 / 2 off the continuum's arc. Checked: the
# nodes to 1e-10 m of that polygon (Newton to 1e-10; the VTK frame carries 12 digits), every
# twist to 1e-10, and the centre to kappa l^2 of (0, 0, R).
code, rows, out, _ = run("natural_arc.srd")
frames = sorted(glob.glob(os.path.join(out, "arc_*.vtu")))
if code == 0 and frames:
    pts = frame_points(frames[-1])
    twist = [v for name, values in frame_arrays(frames[-1]) if name == "twist" for v in values]
    kappa = 31.4159
    R = 1 / kappa
    l = L / (len(pts) - 1)
    a, b = 2 * math.asin(kappa * l / 2), 2 * math.asin(3 * kappa * l / 4)
    polygon = [(x, 0.0, z) for x, z in natural_polygon(kappa, l, len(pts) - 1)]
    worst = max(math.dist(p, q) for p, q in zip(pts, polygon))
    centre = (l + l / 2 * math.cos(b) - R * math.cos(a / 2) * math.sin(b), 0.0,
              l / 2 * math.sin(b) + R * math.cos(a / 2) * math.cos(b))
    radial = max(abs(math.dist(p, centre) - R) for p in pts[1:])
    offset = math.dist(centre, (0.0, 0.0, R))
    check(len(pts) == 41 and worst <= 1e-10 and radial <= 1e-10 and twist and max(map(abs, twist)) <= 1e-10,
          "natural curvature: the 41 nodes sit on the zero-energy chord polygon (largest distance %.1e m), nodes 1..40 "
          "on a circle of radius 1/kappa = %.6f m (%.1e m; tol 1e-10 m); twist %.1e"
          % (worst, R, radial, max(map(abs, twist)) if twist else float("nan")))
    check(offset <= kappa * l * l,
          "natural curvature: the circle's centre is %.2e m from the continuum's (0, 0, 1/kappa) (tol kappa l^2 = "
          "%.2e m; O(l^2))" % (offset, kappa * l * l))
else:
    check(False, "natural curvature: static solve succeeds and writes a frame")

# ---------------------------------------------------------------------------------------------
# 6. Rod networks.
def rotate(p, angle):
    c, s = math.cos(angle), math.sin(angle)
    return (c * p[0] - s * p[1], s * p[0] + c * p[1], p[2])


# 6a. A star of three arms joined and clamped at the hub, each tip loaded alike in its own
# frame, and a separate single arm with the same load. The arms are the same discrete problem
# turned by 120 degrees: their tips must map onto each other and onto the single arm (shifted
# by its 0.5 m offset) up to rounding and Newton's tolerance (1e-12 of the load): 1e-9 of the
# deflection. In linear theory each tip moves chain_tip() under the tip force, with EI1 down
# and EI2 = 4 EI1 sideways; the deflection is 1% of L, so nonlinearity is of order 1e-4:
# measured -9.3e-5 down and +3.5e-5 sideways (docs/validation.md), checked to 3e-4 (three
# times the larger). The beam's F L^3 / 3 EI is printed for comparison.
code, rows, _, _ = run("star_clamped_hub.srd")
if code == 0 and rows:
    arms = [last(rows, "t%d" % i) for i in range(3)]
    ref = last(rows, "ref")
    ref = (ref[0], ref[1] - 0.5, ref[2])
    scale = math.dist(ref, (L, 0, 0))
    sym = max(math.dist(rotate(arms[0], 2 * math.pi * i / 3), arms[i]) for i in (1, 2))
    single = math.dist(arms[0], ref)
    check(sym <= 1e-9 * scale and single <= 1e-9 * scale,
          "star clamped at the hub: the three tips map onto each other by 120-degree turns (worst %.1e m) and onto a "
          "single arm (%.1e m); tol 1e-9 of the %.3e m deflection" % (sym, single, scale))
    E, w, hh, nedges, F = 200e6, 2e-3, 1e-3, 40, 1e-4
    l = L / nedges
    I1, I2 = w * hh ** 3 / 12, hh * w ** 3 / 12
    tip_force = [0.0] * nedges + [F]
    down, side = chain_tip(nedges + 1, L, tip_force, E * I1), chain_tip(nedges + 1, L, tip_force, E * I2)
    check(abs(-arms[0][2] / down - 1) <= 3e-4 and abs(arms[0][1] / side - 1) <= 3e-4,
          "star: each tip drops %.6e m (linear discrete %.6e m, EI1, %+.1e; beam %.6e m) and moves %.6e m sideways "
          "(%.6e m, EI2, %+.1e); tol 3e-4" % (-arms[0][2], down, -arms[0][2] / down - 1, F * L ** 3 / (3 * E * I1),
                                              arms[0][1], side, arms[0][1] / side - 1))
else:
    check(False, "star clamped at the hub: static solve succeeds")

# 6b. A tripod: three arms joined at a free hub, clamped at their outer ends, a vertical load
# P on the hub. By symmetry the hub moves straight down (its x and y stay 0 up to rounding,
# ~1e-17 m on coordinates of 0.1 m: checked to 1e-9 of the 2.5e-6 m drop) and does not turn, so each arm is a fixed-guided beam under P/3:
# drop = (P/3) L^3 / (12 EI1). The junction (bend-twist elements between each pair of arms)
# must hold the arms' ends level for that. The junction makes the error O(l): its springs
# stand for the hub's neighbourhood with Voronoi lengths, and no wall tells them where the
# guided end is. Richardson extrapolation with order 1 from 81 and 161 nodes is checked to 0.1%.
drops = {}
for n in (81, 161):
    code, rows, _, _ = run("tripod.srd", replace=[("nodes = 81;", "nodes = %d;" % n)])
    if code == 0 and rows:
        hub = last(rows, "hub")
        drops[n] = -hub[2]
        check(math.hypot(hub[0], hub[1]) <= 1e-9 * drops[n],
              "tripod, %d nodes: the hub moves straight down %.6e m (sideways %.1e m; tol 1e-9 of the drop)"
              % (n, drops[n], math.hypot(hub[0], hub[1])))
    else:
        check(False, "tripod, %d nodes: static solve succeeds" % n)
if len(drops) == 2:
    guided = 3e-6 / 3 * L ** 3 / (12 * 200e6 * 2e-3 * 1e-3 ** 3 / 12)
    rich = 2 * drops[161] - drops[81]
    check(abs(rich / guided - 1) <= 1e-3,
          "tripod: drops %.6e m (81 nodes, %+.2f%%) and %.6e m (161, %+.2f%%); Richardson (order 1) %.6e m vs the "
          "fixed-guided beam (P/3) L^3 / 12 EI = %.6e m (%+.1e, tol 1e-3)"
          % (drops[81], 100 * (drops[81] / guided - 1), drops[161], 100 * (drops[161] / guided - 1), rich, guided,
             rich / guided - 1))

# ---------------------------------------------------------------------------------------------
# 6b. Axial stretch next to a clamp (hanging_rod.srd: a vertical rod under its own weight,
# E = 1 MPa). The continuum's tip drops by its stretch, rho g L^2 / (2 E). The clamp holds the
# end node and the first edge's direction; node 1 slides along it, so the first edge stretches
# like the others. Every edge carries the weight below its middle, which makes the lumped chain's
# stretch exact: the tip is rho g L^2 / (2 E) at any node count (with node 1 held, as before
# the slide, it was rho g (L^2/2 - l^2) / E, -0.125% at 41 nodes; with DER's rigid first edge
# (1 - l/L)^2 - 1, -4.94%). Checked to 1e-8 at 21, 41, 51 and 81 nodes (the solve is linear;
# the probe's 12 digits of z = -0.1 m resolve 1e-13 m, 2e-9 of the stretch).
reference = 1200 * 9.81 * L ** 2 / (2 * 1e6)
for n in (21, 41, 51, 81):
    code, rows, _, _ = run("hanging_rod.srd", replace=[("nodes = 41;", "nodes = %d;" % n)])
    if code != 0 or not rows:
        check(False, "hanging rod, %d nodes: static solve succeeds" % n)
        continue
    stretch = -float(rows[-1]["tip"]) - L
    check(abs(stretch / reference - 1) <= 1e-8,
          "hanging rod, %d nodes: tip stretch %.9e m = rho g L^2 / (2 E) = %.9e m (%+.1e, tol 1e-8)"
          % (n, stretch, reference, stretch / reference - 1))

# 6c. The sliding node of a clamp off the axes (oblique_axial.srd: a rod along (1, 2, 2)/3, also
# on the sparse solver with its Lanczos modes, and, planar, along (0.6, 0, 0.8); 41 nodes,
# E = 20 GPa, r = 1 mm, pulled by 100 N along itself).
# The clamp's node 1 moves along the first edge only, so the chain stretches as a whole: the tip
# moves by F L / (E A) along the rod (the springs' force E A eps is exact: to 1e-12 m), the clamp's
# reaction is -F (to 1e-9 relative), and the axial modes are the lumped chain's, fixed at one end
# with half a mass at the other: f_j = sqrt(k/m) sin((2j - 1) pi / (4 n)) / pi, n = 40 edges,
# k = E A / l, m = rho A l (to 1e-9 relative; with node 1 held they would be those of a chain one
# edge shorter, 2.5% higher).
def axial_chain(j, n=40):
    return math.sqrt(20e9 / 1200) / (L / n) * math.sin((2 * j - 1) * math.pi / (4 * n)) / math.pi


for label, direction, replace, args in (("(1, 2, 2)/3", (1 / 3, 2 / 3, 2 / 3), (), ()),
                                        ("(1, 2, 2)/3, sparse solver and Lanczos modes", (1 / 3, 2 / 3, 2 / 3), (),
                                         ("--solver", "sparse")),
                                        ("planar, (0.6, 0, 0.8)", (0.6, 0.0, 0.8),
                                         (("rod beam {", "planar;\nrod beam {"), ("(1, 2, 2) / 3", "(0.6, 0, 0.8)")),
                                         ())):
    code, rows, out, _ = run("oblique_axial.srd", *args, replace=replace)
    if code != 0 or not rows:
        check(False, "oblique clamp %s: runs" % label)
        continue
    with open(os.path.join(out, "static_probes.csv")) as f:
        eq = list(csv.DictReader(f))[-1]
    stretch = 1 + 100 / (20e9 * math.pi * 1e-6)
    tip_err = max(abs(float(eq["tip." + c]) - L * stretch * d) for c, d in zip("xyz", direction))
    pull_err = max(abs(float(eq["pull.f" + c]) + 100 * d) for c, d in zip("xyz", direction)) / 100
    axial = [f for f, name in labelled_modes(out) if name == "axial"]
    mode_err = max((abs(f / axial_chain(j + 1) - 1) for j, f in enumerate(axial)), default=1)
    check(tip_err <= 1e-12 and pull_err <= 1e-9 and axial and mode_err <= 1e-9,
          "oblique clamp %s: tip off F L / (E A) along the rod by %.1e m (tol 1e-12), reaction off -F by %.1e "
          "(tol 1e-9), %d axial modes (%s Hz) off the chain's by %.1e (tol 1e-9)"
          % (label, tip_err, pull_err, len(axial), ", ".join("%.1f" % f for f in axial), mode_err))

# ---------------------------------------------------------------------------------------------
# 7. Newton's method on a geometrically nonlinear rod: the 20 MPa cantilever (tip deflection
# 27% of L) in one load step, 50 nodes. Exact Hessians: once the iterates are near the
# solution (relative residual below 1e-2 from there on) the order estimated from consecutive
# residuals, p = log(r_{k+1} / r_k) / log(r_k / r_{k-1}), is at least 1.8 (2 when quadratic;
# 1 for a linearly convergent method). The first iterations are not quadratic: a Newton step
# that turns edges also stretches them, and the stiff axial terms (EA L^2 / EI = 4e4) make the
# residual jump until the iterate is near the solution; the energy line search keeps it going.
# The log is printed for the record, with r_{k+1} / r_k^2, which stays put when quadratic.
path = os.path.join(tempfile.mkdtemp(prefix="model_", dir=work), "newton.srd")
text = open(os.path.join(rods, "cantilever_gravity.srd")).read()
for old, new in (("param youngs = 20 GPa", "param youngs = 20 MPa"), ("nodes = 200;", "nodes = 50;"),
                 ("load_steps = 10; tolerance = 1e-10;", "load_steps = 1; tolerance = 1e-12;")):
    assert old in text
    text = text.replace(old, new)
with open(path, "w") as f:
    f.write(text)
p = subprocess.run([srdc, "run", path, "--out", tempfile.mkdtemp(prefix="out_", dir=work), "--verbose"],
                   capture_output=True, text=True)
res = [float(line.split("=")[-1].split()[0]) for line in p.stdout.splitlines() if "|residual|" in line]
print("# Newton residuals (N): " + " ".join("%.2e" % v for v in res))
rel = [v / res[0] for v in res] if res else []
# the iterates after the last one at or above 1e-2
start = max([i + 1 for i, e in enumerate(rel) if e >= 1e-2] or [0])
tail = res[start:]
orders = [math.log(c / b) / math.log(b / a) for a, b, c in zip(tail, tail[1:], tail[2:])]
print("# convergence orders: " + " ".join("%.2f" % o for o in orders))
print("# r_k+1 / r_k^2 (1/N): " + " ".join("%.3g" % (b / a ** 2) for a, b in zip(tail, tail[1:])))
check(p.returncode == 0 and len(orders) >= 1 and all(o >= 1.8 for o in orders),
      "Newton converges quadratically on the 20 MPa rod cantilever, one load step (%d iterations; orders %s, each >= 1.8)"
      % (len(res), ", ".join("%.2f" % o for o in orders)))

if tap.summary() and not os.environ.get("SRD_KEEP_TEMP"):
    print("# SRD_KEEP_TEMP=1 keeps the runs' files")
sys.exit(1 if tap.failures else 0)
