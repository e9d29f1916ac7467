#!/usr/bin/env python3
"""check_moving.py SRDC DIR EXAMPLES — moving obstacles (obstacles whose pose is an expression of
t): runs the models of tests/physics/moving and examples/plate_press.srd with `srdc run` and
compares them with closed forms. Each check states its tolerance and why it holds."""
import csv
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import tap  # noqa: E402
from tap import check  # noqa: E402

srdc, here, examples = sys.argv[1], sys.argv[2], sys.argv[3]
G = 9.81


def run(path, *args, out=None):
    """Runs PATH quietly with extra arguments (writing into `out`, or a new scratch directory);
    returns (exit code, probe rows as dicts of floats)."""
    out = out or tap.scratch("moving_")
    p = subprocess.run([srdc, "run", path, "--out", out, "--quiet", *args], capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout + p.stderr)
    rows = []
    probes = os.path.join(out, "probes.csv")
    if os.path.exists(probes):
        with open(probes) as f:
            rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
    return p.returncode, rows


def tip_stiffness(E, r, L):
    """3 E I / L^3 of a cantilever of circular section (I = pi r^4 / 4) under an end load."""
    return 3 * E * math.pi * r ** 4 / 4 / L ** 3


# 1. A plate (a box narrower than the node spacing, so that it meets the tip node only) comes
# down at 1 mm/s onto a clamped cantilever's tip (E = 1 GPa, r = 1 mm, L = 10 cm, k = 2.356 N/m);
# the press is quasi-static (the rod's first period is 1/25 s). The plate's force on the rod,
# contact_force(plate), is the tip stiffness times the deflection. The discrete rod's tip is
# stiffer by its discretisation error, measured 0.63 % at 21 nodes, 0.18 % at 41 and 0.06 % at 81
# (about 1/n^2): tolerance 1 % at 21 nodes, 0.2 % at 81. The geometric nonlinearity at w/L =
# 1.5 % is of order (w/L)^2, below 1e-3.
k_tip = tip_stiffness(1e9, 1e-3, 0.1)
for n, tol in ((21, 1e-2), (81, 2e-3)):
    code, rows = run(os.path.join(here, "plate_press.srd"), "-p", "n=%d" % n)
    check(code == 0 and rows, "plate press (%d nodes): runs" % n)
    if not rows:
        continue
    pressed = [r for r in rows if -r["tip"] > 2e-4]
    ratios = [r["F.fz"] / r["tip"] for r in pressed]
    check(len(pressed) > 10 and all(abs(q / k_tip - 1) <= tol for q in ratios),
          "plate press (%d nodes): force / tip deflection = %.5f..%.5f N/m vs 3 E I / L^3 = %.5f N/m on %d samples "
          "(tol %g relative)" % (n, min(ratios, default=0), max(ratios, default=0), k_tip, len(pressed), tol))
    # The tip follows the plate's lower face (1.5 mm - 1 mm - v t) once it touches, inside the
    # contact distance (0.1 mm): the penalty takes up 2.4 mN at the 2 kc = 2000 N/m of its depth.
    last = rows[-1]
    face = 0.5e-3 - 1e-3 * last["t"]
    check(abs(last["tip"] - face) <= 1e-4,
          "plate press (%d nodes): the tip at %.4f mm follows the plate's face at %.4f mm (tol delta = 0.1 mm)"
          % (n, 1e3 * last["tip"], 1e3 * face))
    before = [r for r in rows if r["t"] <= 0.3]
    check(all(r["F.fz"] == 0 or abs(r["F.fz"]) < 1e-9 for r in before),
          "plate press (%d nodes): no force before the plate reaches the rod (t <= 0.3 s, gap 0.2 mm > delta)" % n)

# 2. A mass at rest on top of a drum spinning at 20 rad/s (surface speed 1 m/s at r = 5 cm,
# 1000 times the slip velocity): friction slips at its full value, tangential force = mu times
# the normal force (the smooth law's tanh(7.5 |u| / v_slip) is 1 to 1e-300), along the
# surface's motion (+x at the top, for a spin about +y). Tolerance 1e-6.
code, rows = run(os.path.join(here, "drum.srd"), "--duration", "0.04")
check(code == 0 and rows, "drum, 20 rad/s: runs")
worst, along = 0.0, True
for r in rows:
    x, z = r["p.x"], r["p.z"] + 0.0501
    d = math.hypot(x, z)
    n = (x / d, z / d)
    fn = r["F.fx"] * n[0] + r["F.fz"] * n[1]
    ft = r["F.fx"] * n[1] - r["F.fz"] * n[0]  # along (n_z, -n_x): the surface's motion
    if fn > 1e-6:
        worst = max(worst, abs(ft / fn - 0.5))
        along &= ft > 0
check(rows and worst <= 1e-6 and along,
      "drum, 20 rad/s: slipping friction / normal force = mu = 0.5 (worst difference %.1e, tol 1e-6), "
      "along the surface's motion" % worst)

# 3. The same drum at 1 rad/s (surface 5 cm/s): the mass sticks and rides, its angle from the
# top growing at the drum's rate, until the slope's tangent reaches mu (atan 0.5 = 0.464 rad).
# While held it creeps at (2 v_slip / 15) atanh(tan(phi) / mu) along the surface (MAT-DiSMech's
# smooth friction; 0.06 mm/s at phi = 0.2), 0.2 % of the surface speed: tolerance 0.5 % on the
# rate over 0.1..0.3 s (after the first landing's bounce).
code, rows = run(os.path.join(here, "drum.srd"), "-p", "spin=1/s")
check(code == 0 and rows, "drum, 1 rad/s: runs")
if rows:
    angle = {round(r["t"], 6): math.atan2(r["p.x"], r["p.z"] + 0.0501) for r in rows}
    rate = (angle[0.3] - angle[0.1]) / 0.2
    check(abs(rate - 1) <= 5e-3, "drum, 1 rad/s: the mass rides at %.5f rad/s (drum 1 rad/s, tol 0.5 %%)" % rate)
    times = sorted(angle)
    slip = next((t for a, b, t in zip(times, times[1:], times[1:]) if (angle[b] - angle[a]) / (b - a) > 1.05
                 and t > 0.1), None)
    phi = angle.get(round(slip, 6)) if slip else None
    check(phi is not None and abs(phi - math.atan(0.5)) <= 0.05,
          "drum, 1 rad/s: it slips off at %s rad from the top vs atan(mu) = %.4f rad (tol 0.05 rad: the "
          "smooth law's creep grows near the limit)" % ("%.4f" % phi if phi else "no angle", math.atan(0.5)))

# 4. A mass dropped at rest on a belt (a plane moving along x at 0.2 m/s): while it slips,
# friction = mu times the normal force (tol 1e-6), and it is carried until it rides at the belt's
# speed. Riding, its velocity relative to the belt is exactly 0 (friction reads the plane's
# material point), so the speed matches to round-off: tolerance 1e-9 relative. Driven at mu g =
# 4.9 m/s^2 it reaches 0.2 m/s after 40.8 ms: tolerance 10 % (it lands on the penalty at half
# its weight and bounces for a few ms). And contact_force(belt) is the force that moves it:
# implicit Euler's velocity is the sum of dt F / m of the step ends, so m v_x equals dt times the
# sum of F.fx (every step probed) to round-off: tol 1e-9 relative.
code, rows = run(os.path.join(here, "conveyor.srd"))
check(code == 0 and len(rows) > 100, "conveyor: runs")
if rows:
    v = [(b["p.x"] - a["p.x"]) / (b["t"] - a["t"]) for a, b in zip(rows, rows[1:])]
    slipping = [r for r, u in zip(rows[1:], v) if u < 0.18 and r["F.fz"] > 1e-6]
    worst = max((abs(r["F.fx"] / r["F.fz"] - 0.5) for r in slipping), default=1)
    check(len(slipping) > 10 and worst <= 1e-6,
          "conveyor: slipping friction / normal force = mu (worst difference %.1e on %d samples, tol 1e-6)"
          % (worst, len(slipping)))
    check(abs(v[-1] - 0.2) <= 1e-9 * 0.2, "conveyor: it rides at %.12f m/s, the belt's 0.2 m/s (tol 1e-9 relative)" % v[-1])
    reach = next((r["t"] for r, u in zip(rows[1:], v) if u >= 0.2 * (1 - 1e-6)), None)
    want = 0.2 / (0.5 * G)
    check(reach is not None and abs(reach - want) <= 0.1 * want,
          "conveyor: it reaches the belt's speed at %s s vs v / (mu g) = %.4f s (tol 10 %%)" % (reach, want))
    k = 30
    impulse = sum(r["F.fx"] for r in rows[1:k + 1]) * 1e-3
    check(abs(0.01 * v[k - 1] - impulse) <= 1e-9 * impulse,
          "conveyor: m v_x = %.9e N s equals the belt's impulse %.9e N s from contact_force (tol 1e-9 relative)"
          % (0.01 * v[k - 1], impulse))

# 4b. The same belt under RK4 (the explicit fast path, dt = 20 us within its stability limit for
# the friction's stick-slip stiffness): the pose schedules run at each stage's time; the mass
# rides at the belt's speed (tol 1e-9 relative), and contact_force reports friction = mu N while
# it slips and none while it rides (tol 1e-9 N against the 0.05 N weight's half).
with open(os.path.join(here, "conveyor.srd")) as f:
    text = f.read().replace("method = implicit_euler; dt = 1 ms; duration = 0.2 s", "method = rk4; dt = 20 us; duration = 0.1 s")
rk4 = os.path.join(tap.scratch("conveyor_rk4_"), "conveyor_rk4.srd")
with open(rk4, "w") as f:
    f.write(text)
code, rows = run(rk4)
check(code == 0 and len(rows) > 50 and "rk4" in text, "conveyor under RK4: runs")
if rows:
    v = [(b["p.x"] - a["p.x"]) / (b["t"] - a["t"]) for a, b in zip(rows, rows[1:])]
    slipping = [r for r, u in zip(rows[1:], v) if u < 0.18 and r["F.fz"] > 1e-6]
    worst = max((abs(r["F.fx"] / r["F.fz"] - 0.5) for r in slipping), default=1)
    riding = [r for r, u in zip(rows[1:], v) if r["t"] > 0.06]
    check(abs(v[-1] - 0.2) <= 1e-9 * 0.2 and worst <= 1e-6 and max(abs(r["F.fx"]) for r in riding) <= 1e-9,
          "conveyor under RK4: rides at %.12f m/s; slipping friction / normal force - mu %.1e (tol 1e-6); riding "
          "friction %.1e N (tol 1e-9)" % (v[-1], worst, max(abs(r["F.fx"]) for r in riding)))

# 5. A turntable: a box turning at 1 rad/s about the vertical axis through its centre (`angle =
# rate * t`) carries a mass 5 cm off the axis round with it (centripetal need 0.05 m/s^2, far
# below mu g). Riding, the mass's angle grows at exactly the table's rate (tol 1e-6 rad/s) and
# its distance from the axis stays 5 cm (tol 1e-5 relative: implicit Euler's chords).
code, rows = run(os.path.join(here, "turntable.srd"))
check(code == 0 and rows, "turntable: runs")
if rows:
    ang = {round(r["t"], 6): math.atan2(r["p.y"], r["p.x"]) for r in rows}
    rate = (ang[1.0] - ang[0.2]) / 0.8
    check(abs(rate - 1) <= 1e-6, "turntable: the mass turns at %.9f rad/s with the table's 1 rad/s (tol 1e-6)" % rate)
    worst = max(abs(math.hypot(r["p.x"], r["p.y"]) / 0.05 - 1) for r in rows)
    check(worst <= 1e-5, "turntable: its distance from the axis stays 5 cm (worst %.1e relative, tol 1e-5)" % worst)

# 6. The same box standing still, tilted 20 deg about y (`angle` constant: a turned box), with mu =
# 0.2 < tan 20 deg: the mass slides down its top face at g (sin a - mu cos a) = 1.5115 m/s^2.
# Implicit Euler's positions under a constant force have an exact constant second difference,
# so the acceleration from the positions at 0.1, 0.2 and 0.3 s is the force's: tol 1e-3 relative
# (the landing's first milliseconds).
code, rows = run(os.path.join(here, "turntable.srd"), "-p", "tilt=20deg", "-p", "mu=0.2", "--duration", "0.3")
check(code == 0 and rows, "tilted box: runs")
if rows:
    a = math.radians(20)
    s = {round(r["t"], 6): (r["p.x"] - 0.05) * math.cos(a) - r["p.z"] * math.sin(a) for r in rows}
    acc = (s[0.3] - 2 * s[0.2] + s[0.1]) / 0.1 ** 2
    want = G * (math.sin(a) - 0.2 * math.cos(a))
    check(abs(acc / want - 1) <= 1e-3,
          "tilted box: the mass slides down its turned top face at %.5f m/s^2 vs g (sin a - mu cos a) = %.5f "
          "(tol 1e-3 relative)" % (acc, want))

# 6b. A plate tilting up about its hinge line at 0.5 rad/s (a plane whose normal is an expression
# of t, through a `let` of t) carries a mass resting 3 cm from the hinge: riding, it stays 3 cm
# along the plate (friction reads the plate's material point, which the turning normal swings),
# to within the smooth law's creep, (2 v_slip / 15) atanh(tan(a) / mu) <= 17 um/s up to a = 0.25
# rad: tol 10 um. It slides once tan(a) passes mu = 0.3: at atan(0.3) = 0.2915 rad, tol 0.05 rad.
code, rows = run(os.path.join(here, "tilting_plate.srd"))
check(code == 0 and rows, "tilting plate: runs")
if rows:
    def along(r):
        a = 0.5 * r["t"]
        return r["p.x"] * math.cos(a) + (r["p.z"] + 5e-5) * math.sin(a)
    held = [abs(along(r) - 0.03) for r in rows if 0.5 * r["t"] <= 0.25]
    check(max(held) <= 1e-5, "tilting plate: the mass rides 3 cm from the hinge (worst %.2f um off, tol 10 um)"
          % (1e6 * max(held)))
    slid = next((0.5 * r["t"] for r in rows if along(r) < 0.03 - 1e-4), None)
    check(slid is not None and abs(slid - math.atan(0.3)) <= 0.05,
          "tilting plate: it slides at a = %s rad vs atan(mu) = %.4f rad (tol 0.05 rad)"
          % ("%.3f" % slid if slid is not None else "never", math.atan(0.3)))

# 7. Rigid bodies: a 2 cm box set down on the belt slips at mu times the normal force (its corners'
# friction; tol 1e-6), then rides at the belt's speed (tol 1e-9 relative) and stops turning
# (|omega| below 1e-9 rad/s by 0.15 s: the rocking of the landing decays).
code, rows = run(os.path.join(here, "belt_box.srd"))
check(code == 0 and rows, "box on the belt: runs")
if rows:
    v = [(b["p.x"] - a["p.x"]) / (b["t"] - a["t"]) for a, b in zip(rows, rows[1:])]
    slipping = [r for r, u in zip(rows[1:], v) if u < 0.18 and r["F.fz"] > 1e-3]
    worst = max((abs(r["F.fx"] / r["F.fz"] - 0.5) for r in slipping), default=1)
    check(len(slipping) > 10 and worst <= 1e-6,
          "box on the belt: slipping friction / normal force = mu (worst difference %.1e on %d samples, tol 1e-6)"
          % (worst, len(slipping)))
    spin = max(abs(rows[-1][k]) for k in ("w.x", "w.y", "w.z"))
    check(abs(v[-1] - 0.2) <= 1e-9 * 0.2 and spin <= 1e-9,
          "box on the belt: it rides at %.12f m/s (belt 0.2 m/s, tol 1e-9 relative), turning at %.1e rad/s (tol 1e-9)"
          % (v[-1], spin))

# 8. A rigid ball (r = 1 cm) on top of the drum spinning at 20 rad/s: friction slips at mu times
# the normal force (tol 1e-6), along the surface's motion (+x), and spins the ball the other way
# (omega_y < 0).
code, rows = run(os.path.join(here, "body_drum.srd"))
check(code == 0 and rows, "ball on the drum: runs")
worst, along = 1.0, False
if rows:
    worst, along = 0.0, True
    for r in rows:
        x, z = r["p.x"], r["p.z"] + 0.0501
        d = math.hypot(x, z)
        fn = (r["F.fx"] * x + r["F.fz"] * z) / d
        ft = (r["F.fx"] * z - r["F.fz"] * x) / d
        if fn > 1e-6:
            worst = max(worst, abs(ft / fn - 0.5))
            along &= ft > 0
check(worst <= 1e-6 and along and rows[-1]["w.y"] < 0,
      "ball on the drum: slipping friction / normal force = mu (worst difference %.1e, tol 1e-6), along the "
      "surface's motion, the ball spun the other way (omega_y = %.2f rad/s)" % (worst, rows[-1]["w.y"] if rows else 0))

# 9. examples/plate_press.srd: the plate comes down 2.5 mm onto the rod's end (0.5 mm above
# it), holds, and lifts off. The rod sags under gravity first: its end by rho A g L^4 / (8 E I)
# (tol 2 % at 21 nodes: the discrete rod, measured -1.2 %), taken at 0.3 s, before the plate
# arrives (at 0.45 s) and after implicit Euler has damped the ringing of gravity's onset (by
# 0.78 a step: 3e-7 left). At the hold the end is at the plate's face, 2 mm down (less the
# penalty's few um: tol 0.01 mm), and the force is the tip stiffness times the deflection from
# the sag (the problem is linear): tol 1 %, as in 1 at 21 nodes. After the plate lifts off the
# force is 0 and the end back at its sag (tol 1e-9 m).
press_out = tap.scratch("plate_press_")
code, rows = run(os.path.join(examples, "plate_press.srd"), out=press_out)
check(code == 0 and rows, "example plate_press: runs")
if rows:
    sag = next(r["tip"] for r in rows if r["t"] >= 0.3)
    hold = [r for r in rows if 1.1 <= r["t"] <= 1.4]
    end_at = sum(r["tip"] for r in hold) / len(hold)
    w = sag - end_at
    f = -sum(r["F.fz"] for r in hold) / len(hold)
    check(abs(end_at + 2e-3) <= 1e-5, "example plate_press: the end held %.4f mm down by the plate (2 mm, tol 0.01 mm)"
          % (-1e3 * end_at))
    want = 1200 * math.pi * 1e-6 * G * 0.1 ** 4 / (8 * 1e9 * math.pi * 1e-12 / 4)
    check(abs(-sag / want - 1) <= 2e-2, "example plate_press: its sag %.2f um vs rho A g L^4 / (8 E I) = %.2f um "
          "(tol 2 %%)" % (-1e6 * sag, 1e6 * want))
    check(abs(f / w / k_tip - 1) <= 1e-2,
          "example plate_press: the plate's force %.4f mN / deflection = %.4f N/m vs 3 E I / L^3 = %.4f N/m "
          "(tol 1 %%)" % (1e3 * f, f / w, k_tip))
    end = rows[-1]
    check(end["F.fz"] == 0 and abs(end["tip"] - sag) <= 1e-9,
          "example plate_press: lifted off, force %g N and the end %.2e m from its sag (tol 1e-9 m)"
          % (end["F.fz"], end["tip"] - sag))

# 10. Its pictures show the plate where it is: the VTK frame at 1 s (the 20th, every 50 ms) carries
# the obstacle row (shape, centre, ...) with the centre at 1.5 mm - 2.5 mm = -1 mm (exact: the
# smooth step is 1 from 1 s on).
frame = os.path.join(press_out, "plate_press_000020.vtu")
row = None
if os.path.exists(frame):
    text = open(frame).read()
    m = re.search(r'Name="obstacles"[^>]*>\s*([^<]+)<', text)
    row = [float(v) for v in m.group(1).split()] if m else None
check(row is not None and row[0] == 1 and abs(row[3] + 1e-3) <= 1e-12,
      "example plate_press: the frame at 1 s draws the plate's centre at z = %s m (-0.001 m, tol 1e-12)"
      % (row[3] if row else "nothing"))

tap.finish()
