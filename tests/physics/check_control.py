#!/usr/bin/env python3
"""check_control.py SRDC PHYSICS_DIR EXAMPLES_DIR — inputs and the `control` block (issue 21):

1. a PD controller on a point mass on a spring, sampled every 5th step, gives the probes of the
   same discrete system written out here as a recurrence (implicit Euler, and symplectic Euler
   on the general explicit path), zero-order hold between samples, to 1e-9 relative;
2. a run stopped between samples and resumed writes the same bytes as one never interrupted
   (the controller's vars, its next sample and the inputs it set are in the checkpoint); so does
   one stopped at a sample whose controller reads a bending rod's reaction (the last step's own
   forces are in the checkpoint), and one whose reaction carries contact between parts (the
   pairs held are in the checkpoint);
3. a simulator built by `srdc build` writes the same probes as `srdc run`, and its --help lists
   the inputs apart from the params;
4. a static analysis holds an input at its default or its -p value: the controller does not run;
5. examples/arm_pd.srd: after 1.5 s the tip follows its moving target to 1.5 mm, where without
   the controller's gains it hangs more than 10 mm away;
6. examples/snake_steer.srd: steered, the snake passes within 2 cm of its goal; without gain,
   more than 9 cm from it."""
import csv
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tap  # noqa: E402
from tap import check  # noqa: E402

srdc, here, examples = sys.argv[1], os.path.join(sys.argv[2], "control"), sys.argv[3]
work = tap.scratch("control_")


def srd(*args, program=None):
    return subprocess.run([program or srdc, *args], capture_output=True, text=True)


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def same_bytes(a, b, name):
    pa, pb = os.path.join(a, name), os.path.join(b, name)
    return os.path.exists(pa) and os.path.exists(pb) and open(pa, "rb").read() == open(pb, "rb").read()


def pd_model(method):
    text = open(os.path.join(here, "pd_mass.srd")).read().replace("METHOD", method)
    path = os.path.join(work, "pd_%s.srd" % method)
    with open(path, "w") as f:
        f.write(text)
    return path


def recurrence(method, steps=1000, dt=1e-3, every=5, m=0.5, k=20.0, l0=0.1, kp=30.0, kd=2.0, target=0.15):
    """x at every step of pd_mass.srd: the controller at steps 0, 5, 10, ... before the step."""
    x, v, last, force = 0.12, 0.0, 0.12, 0.0
    out = [x]
    for n in range(steps):
        if n % every == 0:
            force = -kp * (x - target) - kd * (x - last) / (every * dt)
            last = x
        if method == "implicit_euler":  # m (x' - x - dt v) / dt^2 = F - k (x' - l0)
            x_new = (x + dt * v + dt * dt / m * (force + k * l0)) / (1 + dt * dt * k / m)
            v, x = (x_new - x) / dt, x_new
        else:  # symplectic Euler: the velocity first, from the force at x
            v += dt / m * (force - k * (x - l0))
            x += dt * v
        out.append(x)
    return out


# 1. The discrete closed loop, step by step.
for method in ("implicit_euler", "euler"):
    out = os.path.join(work, "pd_" + method)
    p = srd("run", pd_model(method), "--out", out, "--quiet")
    got = [float(r["pos"]) for r in rows(os.path.join(out, "probes.csv"))] if p.returncode == 0 else []
    want = recurrence(method)
    err = max(abs(a / b - 1) for a, b in zip(got, want)) if len(got) == len(want) else math.inf
    check(err <= 1e-9, "%s: PD control every 5 steps matches the recurrence at all %d steps to %.2g "
          "(tol 1e-9) %s" % (method, len(want) - 1, err, p.stderr.strip()))

# 2. Resumed between two samples (at 0.5375 s: the last sample was at 0.535 s).
model = pd_model("implicit_euler")
full, part = os.path.join(work, "full"), os.path.join(work, "part")
a = srd("run", model, "--out", full, "--quiet")
b = srd("run", model, "--out", part, "--quiet", "--duration", "0.5375")
c = srd("run", model, "--resume", part, "--quiet")
check(a.returncode == b.returncode == c.returncode == 0 and same_bytes(full, part, "probes.csv")
      and same_bytes(full, part, "energy.csv"), "stopped at 0.5375 s and resumed: the same probes.csv and "
      "energy.csv bytes %s" % (a.stderr + b.stderr + c.stderr).strip())

# 2b. A controller reading a bending rod's clamp reaction, with the tip dragged on the ground with
# friction, resumed at a sample (0.064 s): the reaction read before the first step after the resume
# is the last step's own (its frames at its start, its friction velocity), as in the run never
# interrupted.
def resumed_at(label, name, stop):
    """Runs tests/physics/control/NAME whole and stopped at `stop` seconds then resumed; checks
    that both write the same probes.csv bytes. Returns the whole run's directory, or None."""
    model, full, part = os.path.join(here, name), os.path.join(work, name + "_full"), os.path.join(work, name + "_part")
    a = srd("run", model, "--out", full, "--quiet")
    b = srd("run", model, "--out", part, "--quiet", "--duration", stop)
    c = srd("run", model, "--resume", part, "--quiet")
    check(a.returncode == b.returncode == c.returncode == 0 and same_bytes(full, part, "probes.csv"),
          "%s stopped at a sample (%s s) and resumed: the same probes.csv bytes %s"
          % (label, stop, (a.stderr + b.stderr + c.stderr).strip()))
    return full if a.returncode == 0 else None


ff_full = resumed_at("force feedback", "force_feedback.srd", "0.064")
drag = [r for r in rows(os.path.join(ff_full, "probes.csv")) if float(r["t"]) >= 0.01] if ff_full else []
check(drag and all(float(r["G.fz"]) > 0 for r in drag) and abs(float(drag[-1]["tip.y"])) > 0.03,
      "the tip stays on the ground from 10 ms on and drags more than 3 cm sideways (y = %s m)"
      % (drag[-1]["tip.y"] if drag else "?"))

# 2c. The same with a bar dropped across the arm over its clamped edge (contact between parts):
# resumed at a sample (48 ms) after the bar landed, the reaction read right after the resume holds
# the bar's contact force, from the pairs the checkpoint keeps.
cf_full = resumed_at("contact feedback", "contact_feedback.srd", "0.048")
landed = [r for r in rows(os.path.join(cf_full, "probes.csv")) if abs(float(r["t"]) - 0.048) < 1e-9] if cf_full else []
arm_weight = 1100 * 3.141592653589793 * 0.002 ** 2 * 0.1 * 9.81
check(landed and float(landed[0]["R.fz"]) > 1.2 * arm_weight,
      "at 48 ms the bar rests on the clamped edge: the reaction %s N exceeds the arm's weight %.4g N by 20 %%"
      % (landed[0]["R.fz"] if landed else "?", arm_weight))

# 3. A built simulator samples in the runtime's step too.
sim = os.path.join(work, "pd_sim")
p = srd("build", model, "-o", sim)
q = srd("--out", os.path.join(work, "built"), "--quiet", program=sim) if p.returncode == 0 else p
check(q.returncode == 0 and same_bytes(full, os.path.join(work, "built"), "probes.csv"),
      "srdc build: the simulator's probes.csv is the bytes of srdc run's %s" % (p.stderr + q.stderr).strip())
h = srd("--help", program=sim) if p.returncode == 0 else p
check("inputs, set while the model runs" in h.stdout and h.stdout.index("kp ") < h.stdout.index("inputs")
      and "  F " in h.stdout[h.stdout.index("inputs"):], "the simulator's --help lists input F apart from the "
      "params: %r" % h.stdout[-400:])

# 4. Static analysis: the input at its default (1 N) and at -p F=3N.
for spec, force in ((None, 1.0), ("F=3N", 3.0)):
    out = os.path.join(work, "static_%g" % force)
    p = srd("run", os.path.join(here, "input_static.srd"), "--out", out, "--quiet", *(["-p", spec] if spec else []))
    x = float(rows(os.path.join(out, "static_probes.csv"))[-1]["pos"]) if p.returncode == 0 else math.nan
    check(abs(x - (0.1 + force / 20)) <= 1e-9, "static with F = %g N (%s): x = %.12g m vs 0.1 m + F/k = %.12g m; "
          "the controller does not run %s" % (force, spec or "default", x, 0.1 + force / 20, p.stderr.strip()))

# 5. The arm example tracks its target; without gains it does not.
def tracking_error(*args):
    out = os.path.join(work, "arm" + "_".join(args).replace("/", "").replace("=", ""))
    p = srd("run", os.path.join(examples, "arm_pd.srd"), "--out", out, "--quiet", "--duration", "3", *args)
    if p.returncode != 0:
        return math.inf, p.stderr.strip()
    target = lambda t: 0.01 * math.sin(2 * math.pi * 0.5 * t)  # noqa: E731
    errors = [abs(float(r["tip.z"]) - target(float(r["t"]))) for r in rows(os.path.join(out, "probes.csv"))
              if float(r["t"]) > 1.5]
    return max(errors), ""


err, msg = tracking_error()
check(err < 1.5e-3, "arm_pd: after 1.5 s the tip is within %.3f mm of its moving target (tol 1.5 mm) %s"
      % (1e3 * err, msg))
err, msg = tracking_error("-p", "kp=0/m^2", "-p", "ki=0/m^2/s", "-p", "kd=0s/m^2")
check(err > 10e-3, "arm_pd without gains: the tip is %.1f mm from the target at worst (> 10 mm) %s"
      % (1e3 * err, msg))

# 6. The steered snake passes near its goal; without gain it swims straight past.
def closest_approach(*args):
    out = os.path.join(work, "snake" + "_".join(args).replace("/", "").replace("=", ""))
    p = srd("run", os.path.join(examples, "snake_steer.srd"), "--out", out, "--quiet", *args)
    if p.returncode != 0:
        return math.inf, p.stderr.strip()
    return min(math.hypot(float(r["middle.x"]) - 0.15, float(r["middle.y"]) - 0.1)
               for r in rows(os.path.join(out, "probes.csv"))), ""


near, msg = closest_approach()
far, msg0 = closest_approach("-p", "gain=0/m")
check(near < 0.02 and far > 0.09, "snake_steer: the middle node passes %.1f mm from the goal (< 20 mm); "
      "without gain %.1f mm (> 90 mm) %s" % (1e3 * near, 1e3 * far, msg + msg0))

# 7. A controller reading a rigid body's probe (its angular velocity, a 3-vector): the pushing force
# it sets, 2 N, moves the body as implicit Euler's closed form says (tolerance 1e-12 m: the probe
# file's 12 digits of 2 cm).
out = os.path.join(work, "body_feedback")
p = srd("run", os.path.join(here, "body_feedback.srd"), "--out", out, "--quiet")
last = rows(os.path.join(out, "probes.csv"))[-1] if p.returncode == 0 else {}
expected = 2.0 / 0.5 * 1e-6 * 100 * 101 / 2
check(p.returncode == 0 and abs(float(last.get("p.x", "nan")) - expected) < 1e-12,
      "a controller reading a body's angular velocity: x(0.1 s) = %s m, closed form %.12g m %s"
      % (last.get("p.x"), expected, p.stderr.strip()))

tap.finish()
