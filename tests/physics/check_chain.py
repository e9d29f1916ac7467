#!/usr/bin/env python3
"""check_chain.py SRDC DIR — analyses that chain (issue 15, items 1, 2 and 16): a simulation
that starts from the static equilibrium, a run resumed from its checkpoint (bit for bit the
same bytes as a run never interrupted, with `srdc run` and with a built simulator), checkpoints
of another model or other params refused, each block's probes in its own file, the run summary
naming every file, and `output csv` (node positions per frame); and from item 17 the progress
bar's ETA and the whole self-contact refusal."""
import csv
import math
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tap  # noqa: E402
from tap import check  # noqa: E402

srdc, here = sys.argv[1], os.path.join(sys.argv[2], "chain")
work = tempfile.mkdtemp(prefix="srd_chain_")


def srd(*args):
    return subprocess.run([srdc, *args], capture_output=True, text=True)


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def model(name, **replace):
    """tests/physics/chain/NAME with METHOD, DT, ... replaced, written under the work dir."""
    text = open(os.path.join(here, name)).read()
    for key, value in replace.items():
        assert key in text, key
        text = text.replace(key, value)
    path = os.path.join(work, "%s_%s.srd" % (name[:-4], "_".join(replace.values()).replace(" ", "")))
    with open(path, "w") as f:
        f.write(text)
    return path


def same_bytes(a, b, name):
    pa, pb = os.path.join(a, name), os.path.join(b, name)
    return os.path.exists(pa) and os.path.exists(pb) and open(pa, "rb").read() == open(pb, "rb").read()


# 1. A tentacle hanging under gravity, started from the static equilibrium, stays put: Newton's
# first residual is already below the tolerance, so every step keeps the state; the tip moves
# less than 1e-12 m (a drift above rounding would mean the step does not start where the static
# solve ended). From the reference configuration it drops and swings: more than 5 mm.
tentacle = os.path.join(here, "hanging_tentacle.srd")
out = os.path.join(work, "tentacle")
p = srd("run", tentacle, "--out", out)
check(p.returncode == 0, "hanging tentacle from equilibrium runs: %s" % p.stderr.strip())
if p.returncode == 0:
    eq = rows(os.path.join(out, "static_probes.csv"))[-1]
    tip0 = [float(eq["tip." + c]) for c in "xyz"]
    series = rows(os.path.join(out, "probes.csv"))
    drift = max(math.dist(tip0, [float(r["tip." + c]) for c in "xyz"]) for r in series)
    check(len(series) == 101 and drift < 1e-12,
          "from equilibrium the tip stays put: largest move %.3g m over %d samples (tol 1e-12 m)" % (drift, len(series)))
    check(tip0[2] < -0.0905, "the static sag is real: tip z = %.5f m (drawn at -0.08 m)" % tip0[2])
    listed = p.stdout.splitlines()[-1] if p.stdout else ""
    check(listed == "wrote %s/: units.csv, static_probes.csv, shape.csv, probes.csv, energy.csv, checkpoint.bin" % out,
          "the run summary lists every file written: %r" % listed)
    # output csv: a header t,x0,y0,z0,... and one row per 20 ms frame; the last node's columns
    # are the tip probe's values, to the same 12 digits.
    shape = rows(os.path.join(out, "shape.csv"))
    last = shape[-1]
    check(len(shape) == 11 and list(shape[0].keys())[:4] == ["t", "x0", "y0", "z0"] and "z20" in last
          and all(last["%s20" % c] == series[-1]["tip." + c] for c in "xyz"),
          "output csv: %d frames of t,x0,y0,z0,...; node 20's columns are the tip probe's" % len(shape))
    # Resumed from a checkpoint, a run that started from equilibrium skips the static block (the
    # checkpoint holds the state) and continues with the same bytes.
    part = os.path.join(work, "tentacle_part")
    a = srd("run", tentacle, "--out", part, "--quiet", "--duration", "0.1")
    b = srd("run", tentacle, "--resume", part)
    check(a.returncode == 0 and b.returncode == 0 and "static equilibrium" not in b.stdout
          and all(same_bytes(out, part, f) for f in ("probes.csv", "energy.csv", "shape.csv", "static_probes.csv")),
          "start = equilibrium, interrupted at 0.1 s and resumed: static skipped, identical files (%s)"
          % (a.stderr + b.stderr).strip())
ref = model("hanging_tentacle.srd", **{"start = equilibrium": "start = reference"})
out_ref = os.path.join(work, "tentacle_ref")
p = srd("run", ref, "--out", out_ref, "--quiet")
if p.returncode == 0 and os.path.exists(os.path.join(out, "static_probes.csv")):
    series = rows(os.path.join(out_ref, "probes.csv"))
    drop = max(math.dist(tip0, [float(r["tip." + c]) for c in "xyz"]) for r in series)
    check(drop > 5e-3, "from the reference the tip drops: it is %.1f mm from the equilibrium at its farthest (> 5 mm)"
          % (1e3 * drop))
else:
    check(False, "hanging tentacle from the reference runs: %s" % p.stderr.strip())

# 2. Resume: a run stopped at 0.075 s (between frames: its checkpoint is at 0.07 s, and its
# files carry rows up to 0.075 s) and resumed to the full 0.12 s writes the same bytes as a run
# that was never interrupted: probes, energies, frames (the .pvd and the last .vtu, or the CSV
# table). Three implicit methods and an explicit one (at its stable step); 3D rod with twist,
# natural curvature, a time-dependent load and ground contact.
FILES = ["probes.csv", "energy.csv"]
for method, dt, output in (("implicit_euler", "1 ms", "vtk"), ("implicit_midpoint", "1 ms", "csv"),
                           ("newmark", "1 ms", "vtk"), ("verlet", "0.05 ms", "csv")):
    path = model("swinging_twist.srd", METHOD=method, DT=dt, OUTPUT=output)
    full, part = os.path.join(work, method + "_full"), os.path.join(work, method + "_part")
    a = srd("run", path, "--out", full, "--quiet")
    b = srd("run", path, "--out", part, "--quiet", "--duration", "75ms")
    c = srd("run", path, "--resume", part, "--quiet")
    ok = a.returncode == 0 and b.returncode == 0 and c.returncode == 0
    frames = FILES + (["swing.pvd", "swing_000012.vtu"] if output == "vtk" else ["swing.csv"])
    same = [f for f in frames if ok and same_bytes(full, part, f)]
    check(ok and len(same) == len(frames), "%s: interrupted at 75 ms and resumed, %s identical to the bytes "
          "(%s)" % (method, ", ".join(frames), (a.stderr + b.stderr + c.stderr).strip() or "runs ok"))

# A rigid body's turn and momentum are state the DOFs do not carry: a box turning freely,
# interrupted and resumed, writes the same bytes too (its checkpoint keeps them).
box = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "api", "spinning_box.srd")
full, part = os.path.join(work, "box_full"), os.path.join(work, "box_part")
a = srd("run", box, "--out", full, "--quiet", "--duration", "0.4")
b = srd("run", box, "--out", part, "--quiet", "--duration", "0.2")
c = srd("run", box, "--resume", part, "--quiet", "--duration", "0.4")
ok = a.returncode == 0 and b.returncode == 0 and c.returncode == 0
check(ok and all(same_bytes(full, part, f) for f in FILES),
      "a turning rigid body interrupted at 0.2 s and resumed: probes and energies identical to the bytes (%s)"
      % ((a.stderr + b.stderr + c.stderr).strip() or "runs ok"))

# 3. A built simulator resumes what `srdc run` began (the same checkpoint, the same bytes), and
# a checkpoint is refused, with a message naming the difference, for other params or another
# model.
path = model("swinging_twist.srd", METHOD="newmark", DT="1 ms", OUTPUT="vtk")
full = os.path.join(work, "newmark_full")
part = os.path.join(work, "built_part")
sim = os.path.join(work, "swing_sim")
b = srd("build", path, "-o", sim, "--quiet")
check(b.returncode == 0, "the swinging rod builds: %s" % b.stderr.strip())
if b.returncode == 0:
    srd("run", path, "--out", part, "--quiet", "--duration", "75ms")
    c = subprocess.run([sim, "--resume", part, "--quiet"], capture_output=True, text=True)
    check(c.returncode == 0 and all(same_bytes(full, part, f) for f in FILES),
          "a built simulator resumes a run of `srdc run`: identical probes and energies (%s)" % c.stderr.strip())
p = srd("run", path, "--resume", part, "--quiet", "-p", "youngs=2MPa")
check(p.returncode == 1 and "param `youngs` = 1000000" in p.stderr and "2000000" in p.stderr,
      "other params: refused with exit 1 naming the param: %r" % p.stderr.strip())
other = model("swinging_twist.srd", METHOD="newmark", DT="1 ms", OUTPUT="vtk", **{"nodes = 16": "nodes = 17"})
p = srd("run", other, "--resume", part, "--quiet")
check(p.returncode == 1 and "different model" in p.stderr, "another model: refused with exit 1: %r" % p.stderr.strip())
p = srd("run", path, "--resume", part, "--quiet", "--dt", "0.5ms")
check(p.returncode == 1 and "different model or different simulate settings" in p.stderr,
      "another time step: refused with exit 1: %r" % p.stderr.strip())
p = srd("run", path, "--resume", os.path.join(work, "nowhere"), "--quiet")
check(p.returncode == 1 and "checkpoint.bin" in p.stderr, "no checkpoint: refused with exit 1: %r" % p.stderr.strip())

# 4. Static, modes and simulate probes go to three files; modes_probes.csv has one row per mode
# (the probed component of the mass-normalised shape, nonzero for these bending modes);
# --quiet prints nothing on stdout.
out = os.path.join(work, "blocks")
p = srd("run", os.path.join(here, "three_blocks.srd"), "--out", out, "--quiet")
check(p.returncode == 0 and p.stdout == "", "three blocks run quietly: stdout %r, stderr %r" % (p.stdout, p.stderr))
if p.returncode == 0:
    st, mo, si = (rows(os.path.join(out, f)) for f in ("static_probes.csv", "modes_probes.csv", "probes.csv"))
    check(list(st[0].keys()) == ["t", "sag"] and len(st) == 1 and float(st[0]["sag"]) < 0,
          "static_probes.csv: the equilibrium's sag %s m" % st[0]["sag"])
    check(list(mo[0].keys()) == ["mode", "shape"] and [r["mode"] for r in mo] == ["1", "2", "3"]
          and all(abs(float(r["shape"])) > 0 for r in mo), "modes_probes.csv: one row per mode %s"
          % [r["shape"] for r in mo])
    check(list(si[0].keys()) == ["t", "tip", "x"] and len(si) == 6, "probes.csv: the time series, %d rows" % len(si))

# 5. On a terminal the progress bar shows the time left ("ETA 0s" on a model this small) and
# clears its line at the end.
master, slave = os.openpty()
p = subprocess.run([srdc, "run", os.path.join(here, "three_blocks.srd"), "--out", os.path.join(work, "tty")],
                   stdout=subprocess.PIPE, stderr=slave, text=True)
os.close(slave)
bar = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    bar += chunk
os.close(master)
check(p.returncode == 0 and b"ETA 0s" in bar and b"100.0%" in bar and bar.endswith(b"\r"),
      "progress bar on a terminal: %d bytes with an ETA, cleared at the end" % len(bar))

# 6. Contact between parts runs under implicit methods only: an explicit method is refused before
# anything runs, with the whole message and a hint.
path = os.path.join(work, "self_contact.srd")
with open(path, "w") as f:
    f.write(open(os.path.join(here, "three_blocks.srd")).read().replace("dt = 1 ms;", "method = verlet; dt = 1 ms;")
            + "contact self { stiffness = 10 N/m; delta = 0.2 mm; }\n")
p = srd("run", path, "--out", os.path.join(work, "self"))
check(p.returncode == 1 and "runs under implicit methods, not `verlet`" in p.stderr
      and "use method = implicit_euler" in p.stderr, "contact under verlet: refused with a whole message: %r"
      % p.stderr.strip())

shutil.rmtree(work)
tap.finish()
