#!/usr/bin/env python3
"""check_rods.py SRDC DIR — runs the rod models of DIR/rods (DIR is tests/physics) with
`srdc run` and compares them with beam theory, the elastica and closed forms of the discrete
model (issue 5). Each check states its tolerance and why it holds. docs/validation.md gives
the figures and explains the clamp.

The clamp. `clamp r.start` fixes the first two nodes and the first edge's twist. The first
bending element sits at node 1 and stands for the rod from l/2 to 3l/2 (l the edge length),
so the free beam starts half an edge into the rod: its length is L_eff = L - l/2, and the
wall is at x = l/2. Compared with a beam of the drawn length L this is an O(l) error (for the
self-weight cantilever exactly w_N = w_EB(L) (1 - l/L)^2 in linear theory); compared with the
beam of length L_eff what is left is DER's O(l^2) error. The checks below use L_eff except
where they measure that O(l) error on purpose."""
import csv
import glob
import math
import os
import shutil
import subprocess
import sys
import tempfile

import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tap  # noqa: E402
from tap import check  # noqa: E402

srdc, here = sys.argv[1], sys.argv[2]
rods = os.path.join(here, "rods")
work = tempfile.mkdtemp(prefix="srd_rods_")  # every run's files; removed when all checks pass


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
    if os.path.exists(os.path.join(out, "probes.csv")):
        with open(os.path.join(out, "probes.csv")) as f:
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
# the drawn length L. The error is the clamp's O(l): in linear theory the discrete tip is
# exactly w_EB(L) (1 - l/L)^2 (the rod is a chain of rigid edges with rotational springs EI/l
# at nodes 1..N-2; summing the moments of the lumped weights gives it); the rest is geometric
# nonlinearity, of order (w/L)^2 ~ 1e-7, so this is checked to 1e-6.
E = 20e9
theory = euler_bernoulli(E, L)
tips = {}
for n in (50, 100, 200):
    tip = gravity_tip("20 GPa", n)
    if tip is None:
        check(False, "cantilever under gravity, 20 GPa, %d nodes: static solve succeeds" % n)
        continue
    tips[n] = -tip[2]
    l = L / (n - 1)
    discrete = theory * (1 - l / L) ** 2
    check(abs(tips[n] - discrete) <= 1e-6 * discrete,
          "cantilever under gravity, 20 GPa, %d nodes: tip %.6e m = w_EB(L) (1 - l/L)^2 = %.6e m of the clamp's "
          "discrete model (rel. diff. %.1e, tol 1e-6); error vs w_EB(L) = %.6e m: %+.4f%%"
          % (n, tips[n], discrete, tips[n] / discrete - 1, theory, 100 * (tips[n] / theory - 1)))
if len(tips) == 3:
    h = {n: L / (n - 1) for n in tips}
    err = {n: theory - tips[n] for n in tips}
    orders = [math.log(err[a] / err[b]) / math.log(h[a] / h[b]) for a, b in ((50, 100), (100, 200))]
    orders_n = [math.log(err[a] / err[b]) / math.log(b / a) for a, b in ((50, 100), (100, 200))]
    # The observed order: the error is O(l) (the clamp); 0.9..1.1 holds for any leading
    # coefficient once the l^2 term is below a tenth of the l term (l/L < 0.04 here).
    check(all(0.9 <= p <= 1.1 for p in orders),
          "cantilever under gravity: observed convergence order against w_EB(L) %.3f (50->100 nodes), %.3f "
          "(100->200) in the edge length (%.3f, %.3f in N); expected 1 (tol 0.9..1.1)"
          % (orders[0], orders[1], orders_n[0], orders_n[1]))
    # Richardson extrapolation with the order estimated from the three solutions alone (not
    # from the theory): solve (w100 - w50) / (w200 - w100) = (h50^p - h100^p) / (h100^p - h200^p)
    # for p by bisection, then w = w200 + (w200 - w100) / ((h100/h200)^p - 1). The O(l^2)
    # remainder at these sizes is ~1e-4 relative: checked to 0.1% (the tolerance).
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
    check(abs(rich - theory) <= 1e-3 * theory,
          "cantilever under gravity: Richardson extrapolation from 100 and 200 nodes with the three-level order "
          "p = %.4f gives %.6e m vs w_EB = %.6e m (%+.2e relative, tol 1e-3)" % (p, rich, theory, rich / theory - 1))

# 1b. The E sweep at 200 nodes against Euler-Bernoulli and the heavy elastica (the exact
# large-deflection solution under self-weight, with the rod's axial stretching: 3e-5 at
# 20 MPa), both for the beam of length L_eff = L - l/2 that the clamp models, starting at
# x = l/2. DER's remaining error is O(l^2): -l^2/(2 L^2) = -1.3e-5 in linear theory; the
# elastica is checked to 1e-4 in z and x. Against
# Euler-Bernoulli the issue asks for 1% at 20 GPa. At low E the tip falls short of
# Euler-Bernoulli by geometric nonlinearity (the rod turns, the load's lever arm shortens):
# the elastica says by 6.2% at 20 MPa (deflection 28% of L); the check is that srd follows it.
n = 200
l = L / (n - 1)
leff = L - l / 2
for E_text, E in moduli:
    full = gravity_tip(E_text, n)
    if full is None:
        check(False, "E sweep, %s: static solve succeeds" % E_text)
        continue
    x, z = full[0], full[2]
    eb_eff, eb = euler_bernoulli(E, leff), euler_bernoulli(E, L)
    xe, ze = elastica(leff, q_EI=rho * A * g / (E * I), EA_EI=A / I)
    xL, zL = elastica(L, q_EI=rho * A * g / (E * I))
    note("E = %-7s 200 nodes: tip z %.6e m; vs w_EB(L) %+.3f%%, vs w_EB(L_eff) %+.3f%%; elastica(L)/w_EB(L) - 1 = "
         "%+.3f%%" % (E_text, z, 100 * (-z / eb - 1), 100 * (-z / eb_eff - 1), 100 * (-zL / eb - 1)))
    check(abs(z / ze - 1) <= 1e-4 and abs((x - l / 2) / xe - 1) <= 1e-4,
          "E sweep, %s, 200 nodes: tip (%.6e, %.6e) m vs heavy elastica of length L_eff from x = l/2 "
          "(%.6e, %.6e) m: z %+.1e, x %+.1e relative (tol 1e-4)"
          % (E_text, x, z, xe + l / 2, ze, z / ze - 1, (x - l / 2) / xe - 1))
    if E_text == "20 GPa":
        check(abs(-z / eb_eff - 1) <= 1e-2,
              "E sweep, 20 GPa, 200 nodes: tip deflection vs Euler-Bernoulli at L_eff %+.2e relative (tol 1%%; "
              "vs the drawn length L: %+.4f%%, the clamp's (1 - l/L)^2 - 1)" % (-z / eb_eff - 1, 100 * (-z / eb - 1)))
    if E_text == "20 MPa":
        check(-z / eb_eff - 1 < -0.05,
              "E sweep, 20 MPa: the tip falls %.2f%% short of Euler-Bernoulli at L_eff (the elastica: %.2f%%; "
              "geometric nonlinearity, expected more than 5%%)" % (-100 * (-z / eb_eff - 1), -100 * (-ze / eb_eff - 1)))

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
# reference: the elastica of length L_eff = L - l/2 from x = l/2, with the rod's axial
# stretching (EA = E A: the axial force stretches it by 7e-6; without it the discrete error
# stops falling as l^2 at 1e-5). The ODE reference is first checked against the
# elliptic-integral solution (inextensible, length L) to 1e-9. The issue asks for tip x and z
# to 1% (DER's O(l^2) error is 3e-4 at 51 nodes).
alpha = 3.0
xa, za = elastica(1.0, P_EI=alpha)
xb, zb = elastica_elliptic(alpha)
check(abs(xa - xb) <= 1e-9 and abs(za - zb) <= 1e-9,
      "elastica reference: ODE shooting tip (%.10f, %.10f) L vs elliptic integrals (%.10f, %.10f) L (tol 1e-9)"
      % (xa, za, xb, zb))
code, rows, _, _ = run("cantilever_tip_load.srd")
if code == 0 and rows:
    n = 51
    l = L / (n - 1)
    x, _, z = last(rows, "tip")
    xe, ze = elastica(L - l / 2, P_EI=alpha / L ** 2, EA_EI=A / I)
    check(abs((x - l / 2) / xe - 1) <= 1e-2 and abs(z / ze - 1) <= 1e-2,
          "tip load, 51 nodes: tip (%.6f, %.6f) m vs elastica of length L_eff (%.6f, %.6f) m: x %+.1e, z %+.1e "
          "relative (tol 1%%; vs the elastica of length L: x %+.2f%%, z %+.2f%%)"
          % (x, z, xe + l / 2, ze, (x - l / 2) / xe - 1, z / ze - 1, 100 * (x / (xa * L) - 1), 100 * (z / (za * L) - 1)))
else:
    check(False, "tip load: static solve succeeds")

# ---------------------------------------------------------------------------------------------
# 3. Natural frequencies of the clamped-free rod with 50 nodes, E = 20 GPa:
# f_k = (beta_k L)^2 / (2 pi L^2) sqrt(EI / (rho A)). The clamp's beam has length L_eff
# (against the drawn L the frequencies are l/L = 2% high); DER with lumped masses is
# O(l^2) below it: 7e-5, 8e-4 and 2e-3 for the first three. The tolerance, 1%.
beta = [1.8751040687, 4.6940911330, 7.8547574382]
n = 50
l = L / (n - 1)
leff = L - l / 2
E = 20e9
c = math.sqrt(E * I / (rho * A))
code, rows, out, _ = run("cantilever_vibration.srd")
freq = modes(out)
if len(freq) == 6:
    for k in range(3):
        fy, fz = freq[2 * k], freq[2 * k + 1]
        exact, drawn = beta[k] ** 2 / (2 * math.pi * leff ** 2) * c, beta[k] ** 2 / (2 * math.pi * L ** 2) * c
        # the two bending planes of a round rod: equal to the eigensolver's precision
        check(abs(fy - exact) <= 1e-2 * exact and abs(fz - exact) <= 1e-2 * exact and abs(fy - fz) <= 1e-6 * fz,
              "modes, 50 nodes: bending mode %d at %.3f Hz (both planes) vs beam theory at L_eff %.3f Hz: %+.1e "
              "(tol 1%%; vs L: %.3f Hz, %+.2f%%)" % (k + 1, fz, exact, fz / exact - 1, drawn, 100 * (fz / drawn - 1)))
else:
    check(False, "modes: 6 frequencies written (got %d)" % len(freq))

# Free vibration: the straight rod released with gravity on swings about its sagged
# equilibrium (amplitude = the static sag), mostly in mode 1. The period is measured from the
# crossings of the mid level (max + min) / 2 over about 10 periods, averaged over upward and
# downward crossings. Mode 2 (a few % of the tip amplitude, 6.3 times faster) moves single
# crossings by up to 0.3% of a period; over 10 periods the mean is within 0.1%. Implicit
# midpoint lengthens the period by (w dt)^2 / 12 = 1e-4 at dt = 0.05 ms. So: within 0.5% of
# the modal frequency, 1% of beam theory at L_eff; the mid level within 5% of the static sag
# (higher modes shift the extremes by a few % of the amplitude).
if rows:
    t = [float(rw["t"]) for rw in rows]
    zt = [float(rw["tip"]) for rw in rows]
    mid = (max(zt) + min(zt)) / 2
    up = [t[i] - (zt[i] - mid) * (t[i + 1] - t[i]) / (zt[i + 1] - zt[i]) for i in range(len(zt) - 1) if zt[i] < mid <= zt[i + 1]]
    dn = [t[i] - (zt[i] - mid) * (t[i + 1] - t[i]) / (zt[i + 1] - zt[i]) for i in range(len(zt) - 1) if zt[i] > mid >= zt[i + 1]]
    if len(up) >= 5 and len(dn) >= 5:
        f_sim = ((len(up) - 1) / (up[-1] - up[0]) + (len(dn) - 1) / (dn[-1] - dn[0])) / 2
        f_mode = freq[0] if freq else float("nan")
        exact = beta[0] ** 2 / (2 * math.pi * leff ** 2) * c
        sag = euler_bernoulli(E, L) * (1 - l / L) ** 2
        check(abs(f_sim - f_mode) <= 5e-3 * f_mode and abs(f_sim - exact) <= 1e-2 * exact,
              "free vibration, 50 nodes: tip period gives %.3f Hz over %d periods vs modal %.3f Hz (%+.1e, tol 0.5%%) "
              "and beam theory at L_eff %.3f Hz (%+.1e, tol 1%%)"
              % (f_sim, len(up) - 1, f_mode, f_sim / f_mode - 1, exact, f_sim / exact - 1))
        check(abs(-mid - sag) <= 0.05 * sag,
              "free vibration: the tip oscillates about %.4e m vs the static sag %.4e m (tol 5%%)" % (mid, -sag))
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
# cannot prescribe a twist other than 0). Twist springs GJ/l sit at nodes 1..N-2 between
# consecutive edges, so theta_end = T (N - 2) l / GJ = T (L - l) / GJ exactly: the twist is
# measured between the centres of the clamped first edge and the last edge, L - l apart. The
# centreline stays straight, where the twist energy is exactly quadratic: the relation holds
# to Newton's tolerance (1e-12); checked to 1e-9 (probes carry 12 digits).
code, rows, _, _ = run("torsion_static.srd")
if code == 0 and rows:
    T = 0.1
    phi = float(rows[-1]["phi"])
    torque = G * J * phi / (L - l)
    tip = last(rows, "tip")
    check(abs(torque - T) <= 1e-9 * T and max(abs(a - b) for a, b in zip(tip, (L, 0, 0))) <= 1e-12,
          "torsion: end twist %.9f rad, GJ phi / (L - l) = %.12f N m vs T = %.1f N m (%+.1e, tol 1e-9); the rod stays "
          "straight (GJ phi / L = %.6f N m)" % (phi, torque, T, torque / T - 1, G * J * phi / L))
else:
    check(False, "torsion: static solve succeeds")
# 4b. Torsional modes with every node held: a fixed-free chain of M = N - 2 twist inertias
# m = rho J l joined by springs k = GJ / l, so w_j = 2 sqrt(k/m) sin((2j - 1) pi / (2 (2M + 1)))
# exactly (LAPACK: 1e-10). Its continuum limit is the rod of length L - l/2:
# f_j = (2j - 1) / (4 (L - l/2)) sqrt(G / rho), within 1% for the first two modes.
code, _, out, _ = run("torsion_modes.srd")
freq = modes(out)
if len(freq) == 4:
    M = n - 2
    chain = [2 * math.sqrt(G / rho) / l * math.sin((2 * j - 1) * math.pi / (2 * (2 * M + 1))) / (2 * math.pi)
             for j in range(1, 5)]
    worst = max(abs(a / b - 1) for a, b in zip(freq, chain))
    check(worst <= 1e-10, "torsional modes: 4 frequencies match the discrete chain's closed form (worst %.1e, tol 1e-10)"
          % worst)
    cont = [(2 * j - 1) / (4 * (L - l / 2)) * math.sqrt(G / rho) for j in (1, 2)]
    check(all(abs(a / b - 1) <= 1e-2 for a, b in zip(freq, cont)),
          "torsional modes: %.1f Hz and %.1f Hz vs (2j - 1) sqrt(G/rho) / (4 (L - l/2)) = %.1f Hz and %.1f Hz "
          "(%+.1e, %+.1e; tol 1%%)" % (freq[0], freq[1], cont[0], cont[1], freq[0] / cont[0] - 1, freq[1] / cont[1] - 1))
else:
    check(False, "torsional modes: 4 frequencies written (got %d)" % len(freq))

# ---------------------------------------------------------------------------------------------
# 5. A straight rod with natural curvature kappa (kappa L = pi), clamped, no load, relaxes to
# an arc. DER's natural curvature for a Voronoi length l is 2 tan(asin(kappa l / 2)), the
# turning angle 2 asin(kappa l / 2) of chords l on a circle of radius R = 1 / kappa: the
# equilibrium is the chord polygon inscribed in that circle (zero energy). The clamped first
# edge is the chord from (0, 0, 0) to (l, 0, 0), so the centre is (l/2, 0, R cos(a/2)) with
# a = 2 asin(l / 2R), and node i sits at angle (i - 1/2) a. Checked to 1e-10 m (Newton to
# 1e-10; the VTK frame carries 12 digits), and every twist angle to 1e-10.
code, rows, out, _ = run("natural_arc.srd")
frames = sorted(glob.glob(os.path.join(out, "arc_*.vtu")))
if code == 0 and frames:
    piece = ET.parse(frames[-1]).getroot().find("UnstructuredGrid/Piece")
    values = piece.find("Points/DataArray").text.split()
    pts = [tuple(map(float, values[i:i + 3])) for i in range(0, len(values), 3)]
    twist = [float(v) for arr in piece.iter("DataArray") if arr.get("Name") == "twist" for v in arr.text.split()]
    R = 1 / 31.4159
    l = L / (len(pts) - 1)
    a = 2 * math.asin(l / (2 * R))
    centre = (l / 2, 0.0, R * math.cos(a / 2))
    worst = max(math.dist(p, (centre[0] + R * math.sin((i - 0.5) * a), 0.0, centre[2] - R * math.cos((i - 0.5) * a)))
                for i, p in enumerate(pts))
    radial = max(abs(math.dist(p, centre) - R) for p in pts)
    check(len(pts) == 41 and worst <= 1e-10 and twist and max(map(abs, twist)) <= 1e-10,
          "natural curvature: the 41 nodes lie on the circle of radius 1/kappa = %.6f m (largest distance from their "
          "place on it %.1e m, from the circle %.1e m; tol 1e-10 m); twist %.1e"
          % (R, worst, radial, max(map(abs, twist)) if twist else float("nan")))
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
# deflection. In linear theory each tip moves F l^3 n (n - 1)(2n - 1) / (6 EI) (n edges: springs
# EI/l at nodes 1..n-1, moments F (L - x_i)), with EI1 down and EI2 = 4 EI1 sideways; the
# deflection is 1% of L, so nonlinearity is allowed 1e-3.
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
    s = l ** 3 * nedges * (nedges - 1) * (2 * nedges - 1) / 6
    down, side = F * s / (E * I1), F * s / (E * I2)
    check(abs(-arms[0][2] / down - 1) <= 1e-3 and abs(arms[0][1] / side - 1) <= 1e-3,
          "star: each tip drops %.6e m (linear discrete %.6e m, EI1) and moves %.6e m sideways (%.6e m, EI2); tol 1e-3"
          % (-arms[0][2], down, arms[0][1], side))
else:
    check(False, "star clamped at the hub: static solve succeeds")

# 6b. A tripod: three arms joined at a free hub, clamped at their outer ends, a vertical load
# P on the hub. By symmetry the hub moves straight down (its x and y stay 0 up to rounding,
# ~1e-17 m on coordinates of 0.1 m: checked to 1e-9 of the 2.5e-6 m drop) and does not turn, so each arm is a fixed-guided beam under P/3:
# drop = (P/3) L^3 / (12 EI1). The junction (bend-twist elements between each pair of arms)
# must hold the arms' ends level for that. The outer clamps (L_eff) and the junction make the
# error O(l); Richardson extrapolation with order 1 from 81 and 161 nodes is checked to 0.1%.
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
# 7. Newton's method on a geometrically nonlinear rod: the 20 MPa cantilever (tip deflection
# 27% of L) in one load step, 50 nodes. Exact Hessians: in the last iterations the relative
# residual e_k = |r_k| / |r_0| satisfies log e_{k+1} / log e_k >= 1.8 (2 when quadratic). The
# first iterations are not quadratic: a Newton step that turns edges also stretches them, and
# the stiff axial terms (EA L^2 / EI = 4e4) make the residual jump until the iterate is near
# the solution; the energy line search keeps it going. The log is printed for the record.
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
tail = rel[start:]
orders = [math.log10(b) / math.log10(a) for a, b in zip(tail, tail[1:])]
print("# convergence orders: " + " ".join("%.2f" % o for o in orders))
check(p.returncode == 0 and len(orders) >= 2 and all(o >= 1.8 for o in orders),
      "Newton converges quadratically on the 20 MPa rod cantilever, one load step (%d iterations; orders %s, each >= 1.8)"
      % (len(res), ", ".join("%.2f" % o for o in orders)))

if tap.summary():
    print("# the runs are kept in " + work)
else:
    shutil.rmtree(work, ignore_errors=True)
sys.exit(1 if tap.failures else 0)
