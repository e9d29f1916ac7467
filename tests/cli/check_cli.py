#!/usr/bin/env python3
"""check_cli.py SRDC DIR — command-line mistakes and failure reports of `srdc run`, `srdc sweep`
and built simulators: a param given twice, and what a numerical failure prints."""
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import check, finish  # noqa: E402

srdc, here = os.path.abspath(sys.argv[1]), sys.argv[2]
work = tempfile.mkdtemp(prefix="srd_cli_")

# A bob on a spring (w = 6.3 rad/s): the methods and periods below are what the tests vary.
OSCILLATOR = """use std.springs;
param k = 20 N/m in 1 N/m .. 100 N/m;
body anchor { position = (0, 0, 0) m; mass = 1 g; }
body bob { position = (0.12, 0, 0) m; mass = 0.5 kg; }
fix anchor.node;
fix bob.node.y;
fix bob.node.z;
apply spring(anchor.node, bob.node; k = k, l0 = 0.1 m);
"""


def model(name, text):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, cwd=work)


def check_run(ok, what, p):
    """check, with the run's messages when it fails."""
    check(ok, what)
    if not ok:
        print(p.stderr)


def twice_reported(p, program):
    return (p.returncode == 1 and "%s: error: param `k` is given twice (`-p k=2 N/m` and `-p k=3 N/m`)" % program
            in p.stderr and "no param" not in p.stderr)


# 1. A param given twice: srdc run, srdc sweep and a built simulator share the argument code;
# the second value used to be reported as "the model has no param".
osc = model("osc.srd", OSCILLATOR + "simulate { dt = 10 ms; duration = 0.1 s; }\n")
p = run(srdc, "run", osc, "--quiet", "-p", "k=2 N/m", "-pk=3 N/m")
check_run(twice_reported(p, "srdc"), "srdc run: a param given twice is named as such", p)
p = run(srdc, "sweep", osc, "-p", "k=2 N/m", "-p", "k=3 N/m", "--out", os.path.join(work, "sweep"))
check_run(twice_reported(p, "srdc"), "srdc sweep: a param given twice is named as such", p)
exe = os.path.join(work, "osc_sim")
b = run(srdc, "build", osc, "-o", exe)
p = run(exe, "-p", "k=2 N/m", "-p", "k=3 N/m", "--quiet") if b.returncode == 0 else b
check_run(twice_reported(p, "osc_sim"), "built simulator: a param given twice is named as such", p)

# 2. An explicit method past its stable time step (rk4 at w dt = 12.6, beyond 2.8) blows up:
# the report gives the step and time, the DOF that went non-finite and the stable-step advice,
# and no (empty) Newton history, since explicit methods have none.
blow = model("blow.srd", OSCILLATOR + "simulate { method = rk4; dt = 2 s; duration = 2000 s; }\n")
p = run(srdc, "run", blow, "--quiet", "--out", os.path.join(work, "blow"))
check(p.returncode == 2, "explicit blow-up: exit status 2 (got %d)" % p.returncode)
check_run(re.search(r"NaN or infinite in step \d+ \(t = ", p.stderr) is not None and "body bob, x" in p.stderr
          and "stable time step" in p.stderr, "explicit blow-up: step, time, DOF and stable time step reported", p)
check_run("Newton" not in p.stderr and "load_steps" not in p.stderr,
          "explicit blow-up: no Newton history or load_steps advice", p)

# 3. Newton stopped after two iterations: the largest residual listed is the infinity norm of
# the last iterate in the history (both are the same iterate), and a static failure advises
# load_steps.
chain = open(os.path.join(here, "..", "physics", "sagging_chain.srd")).read()
chain = chain.replace("line_search = off;", "line_search = off; max_iterations = 2;")
p = run(srdc, "run", model("chain.srd", chain), "--quiet", "--out", os.path.join(work, "chain"))
hist = re.search(r"Newton residuals \(N\):((?: \S+)+)", p.stderr)
worst = re.search(r"largest residuals.*\n\s+.*residual (\S+)", p.stderr)
last = float(hist.group(1).split()[-1]) if hist else -1
top = abs(float(worst.group(1))) if worst else -2
check_run(p.returncode == 2 and hist and len(hist.group(1).split()) == 3,
          "Newton failure: the history has the 3 iterates evaluated", p)
check(abs(last - top) <= 0.006 * top, "Newton failure: largest residual %.3e is the last history entry %.2e" % (top, last))
check("load_steps" in p.stderr, "Newton failure in a static solve: load_steps advised")

# 4. A -p value without its unit: the hint gives the default in the unit the param was declared
# with (not `freq=11/s`, which reads as the number 11), Hz for a frequency declared in SI, and
# `/m` glued for a unit per metre.
hints = model("hints.srd", "param freq = 2 Hz;\nparam E0 = 15 MPa;\nlet f = 3 /s;\nparam rate = f;\n"
              "param k = 3 /m * 2;\n")
p = run(srdc, "check", hints)
check_run(p.returncode == 0, "hint model checks", p)
p = run(srdc, "run", hints, "--quiet", "-p", "freq=2", "-p", "E0=3", "-p", "rate=1", "-p", "k=1")
for want in ("`-p freq=2Hz`", "`-p E0=15MPa`", "`-p rate=3Hz`", "`-p k=6/m`"):
    check_run(p.returncode == 1 and want in p.stderr, "-p without a unit: the hint gives %s" % want, p)

# 5. A mesh-convergence study is one sweep: `nodes` is a param, so srdc sweep runs `srdc run`
# per value (each elaborates its own model). The cantilever's tip under an end load converges
# to Euler-Bernoulli, P L^3 / (3 E I), at second order. A built simulator refuses a new value.
CANTILEVER = """param n = 11 in 2 .. 1000;
material steel { E = 200 GPa; rho = 7800 kg/m^3; }
rod beam { path = line((0, 0, 0) m, (0.5, 0, 0) m); nodes = n; radius = 5 mm; material = steel; }
clamp beam.start;
load beam.end = (0, 0, -1) N;
static { probe tip = beam.end.z; }
"""
cant = model("cant.srd", CANTILEVER)
sweep_dir = os.path.join(work, "mesh_sweep")
p = run(srdc, "sweep", cant, "-p", "n=11,21,41", "--out", sweep_dir, "-j", "2", "--quiet")
check_run(p.returncode == 0, "mesh sweep over nodes = 11, 21, 41 succeeds", p)
rows = []
if p.returncode == 0:
    with open(os.path.join(sweep_dir, "summary.csv")) as f:
        lines = [line.strip().split(",") for line in f if line.strip()]
    col = lines[0].index("tip")
    rows = [(int(float(r[1])), float(r[col])) for r in lines[1:]]
I = math.pi * 0.005 ** 4 / 4
exact = -1.0 * 0.5 ** 3 / (3 * 200e9 * I)
errors = [abs(tip - exact) / abs(exact) for _, tip in rows]
check(len(rows) == 3 and [n for n, _ in rows] == [11, 21, 41], "the summary has one row per node count: %s" % rows)
if len(errors) == 3:
    order = math.log(errors[1] / errors[2]) / math.log(2)
    check(errors[0] > errors[1] > errors[2] and errors[2] < 2e-3,
          "tips converge to Euler-Bernoulli: errors %.2e, %.2e, %.2e (41 nodes within 0.2 %%)" % tuple(errors))
    check(1.8 < order < 2.2, "observed order %.2f is 2" % order)
d = run(srdc, "dump", cant, "--json")
check_run(d.returncode == 0 and '"discretisation": true' in d.stdout, "dump --json marks `n` as a discretisation param", d)
exe = os.path.join(work, "cant_sim")
b = run(srdc, "build", cant, "-o", exe, "--quiet")
p = run(exe, "-p", "n=21", "--quiet", "--out", os.path.join(work, "cant_out")) if b.returncode == 0 else b
check_run(p.returncode == 1 and "param `n` sets the discretisation" in p.stderr and "srdc sweep" in p.stderr,
          "built simulator: a new node count is refused with a hint", p)

# 5. A singular Jacobian is reported by the DOFs that nothing holds, not by a solver code, with
# every solver: a body that nothing touches (its DOFs have empty columns), and an unclamped rod
# in a static solve (a free rigid motion: the zero pivot's DOF and the unheld rod are named).
SINGULAR_ROD = """material m { E = 2 MPa; rho = 1200 kg/m^3; nu = 0.4; }
rod r { path = line((0, 0, 0) m, (0.2, 0, 0) m); nodes = 5; radius = 1 mm; material = m; }
gravity = (0, 0, -9.8) m/s^2;
static { load_steps = 1; }
"""
loose_body = model("loose_body.srd", SINGULAR_ROD + "clamp r.start;\nbody b { position = (1, 0, 0) m; mass = 0.1 kg; }\n")
free_rod = model("free_rod.srd", SINGULAR_ROD)
for solver in ("sparse", "banded", "dense"):
    p = run(srdc, "run", loose_body, "--quiet", "--solver", solver, "--out", os.path.join(work, "loose"))
    check_run(p.returncode == 2 and "the Jacobian is singular" in p.stderr and
              "free DOFs that no element, mass or support acts on:\n  body b, x\n  body b, y\n  body b, z\n"
              in p.stderr and "info" not in p.stderr,
              "singular Jacobian, %s: the loose body's x, y and z are named" % solver, p)
    p = run(srdc, "run", free_rod, "--quiet", "--solver", solver, "--out", os.path.join(work, "free"))
    check_run(p.returncode == 2 and "the Jacobian is singular" in p.stderr and
              "nothing holds rod r: no clamp, fix or motion acts on any of its DOFs" in p.stderr and
              re.search(r"no stiffness left for .*\n  rod r, node \d, [xyz]\n", p.stderr) is not None,
              "singular Jacobian, %s: the unclamped rod and a DOF of its rigid motion are named" % solver, p)

shutil.rmtree(work, ignore_errors=True)
finish()
