#!/usr/bin/env python3
"""check_render.py SRDC EXAMPLES_DIR — srdc render: a known scene lands where the camera's
projection puts it, every example's last frame is drawn whole (not blank, not clipped), a
series renders frame by frame, and bad requests get clear errors."""
import math
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
import png  # noqa: E402
import tap  # noqa: E402
from tap import check  # noqa: E402

srdc, examples = sys.argv[1], sys.argv[2]
BACKGROUND = (247, 247, 245)  # 0.97, 0.97, 0.96 of 255


def drawn(pixel):
    return max(abs(a - b) for a, b in zip(pixel, BACKGROUND)) > 30


def model(pixel):
    """A pixel of the model: its colours are saturated, the ground grid and the labels grey."""
    return max(pixel) - min(pixel) > 40


def srd(*args):
    return subprocess.run([srdc, *args], capture_output=True, text=True)


def drawn_box(rows, test=drawn):
    """(count, x0, y0, x1, y1) of the pixels that pass test."""
    xs, ys, count = [], [], 0
    for y, row in enumerate(rows):
        for x, p in enumerate(row):
            if test(p):
                count += 1
                xs.append(x)
                ys.append(y)
    return (count, min(xs), min(ys), max(xs), max(ys)) if count else (0, 0, 0, 0, 0)


# 1. A known scene: a rod along x (0 to 10 cm, radius 2 mm) seen from the front (along +y, z
# up) at 400 x 300 pixels. The camera fits the bounding box grown by the radius: it looks at
# its centre from 1.08 R / sin(15 deg) away (R the box's half diagonal, a 30 degree field of
# view), so the rod spans x = 200 -+ 0.052 f / d pixels and is 2 r f / d thick, f = 150 /
# tan(15 deg). Checked to 2 pixels (antialiasing, the tube's shaded edge).
out = tap.scratch("rod_")
p = srd("run", os.path.join(here, "rod_x.srd"), "--out", out, "--quiet")
picture = os.path.join(out, "rod.png")
q = srd("render", out, "--view", "front", "--size", "400x300", "-o", picture)
check(p.returncode == 0 and q.returncode == 0 and os.path.exists(picture),
      "the rod renders (%s%s)" % (p.stderr.strip(), q.stderr.strip()))
if os.path.exists(picture):
    w, h, rows = png.read(picture)
    r = 0.002
    half_diag = 0.5 * math.sqrt((0.1 + 2 * r) ** 2 + 2 * (2 * r) ** 2)
    dist = 1.08 * half_diag / math.sin(math.radians(15))
    f = 150 / math.tan(math.radians(15))
    scale = f / dist
    row = [x for x in range(w) if drawn(rows[150][x])]
    col = [y for y in range(h) if drawn(rows[y][200])]
    want_x = (200 - (0.05 + r) * scale, 200 + (0.05 + r) * scale)
    want_y = (150 - r * scale, 150 + r * scale)
    got_x = (row[0], row[-1] + 1) if row else (0, 0)
    got_y = (col[0], col[-1] + 1) if col else (0, 0)
    check(w == 400 and h == 300 and all(abs(a - b) <= 2 for a, b in zip(got_x + got_y, want_x + want_y)),
          "known scene: the rod spans x %.1f..%.1f px (projection %.1f..%.1f) and y %.1f..%.1f px (%.1f..%.1f); "
          "tol 2 px" % (got_x + want_x + got_y + want_y))
    count, x0, y0, x1, y1 = drawn_box(rows)
    check(count and y0 >= want_y[0] - 2 and y1 <= want_y[1] + 2 or count and y0 < 30,  # the time label is drawn too
          "known scene: nothing but the rod and the time label drawn")

# 1b. The same rod in an orthographic front view (--fov 0): the picture's height spans 2.16 R
# (R the box's half diagonal), so the rod is 0.104 m * 300 / (2.16 R) pixels long; tol 2 px.
out1 = os.path.dirname(picture)
ortho = os.path.join(out1, "ortho.png")
q = srd("render", out1, "--view", "front", "--fov", "0", "--size", "400x300", "-o", ortho)
if q.returncode == 0:
    w, h, rows = png.read(ortho)
    row = [x for x in range(w) if drawn(rows[150][x])]
    half_diag = 0.5 * math.sqrt(0.104 ** 2 + 2 * 0.004 ** 2)
    want = 0.104 * 300 / (2.16 * half_diag)
    check(row and abs((row[-1] + 1 - row[0]) - want) <= 2 and abs((row[0] + row[-1] + 1) / 2 - 200) <= 1,
          "orthographic: the rod is %d px long (expected %.1f) and centred at x = %.1f px (200); tol 2 and 1 px"
          % (row[-1] + 1 - row[0] if row else 0, want, (row[0] + row[-1] + 1) / 2 if row else 0))
else:
    check(False, "orthographic render: %s" % q.stderr.strip())

# 1c. A `view` block in the model: its camera is the one the pictures take, the same as the
# command line's --eye/--target/--fov (byte for byte), and not the fitted one.
viewed = open(os.path.join(here, "rod_x.srd")).read().replace(
    "clamp beam.start;", "clamp beam.start;\nview { eye = (0.05, -0.3, 0.05) m; target = (0.05, 0, 0) m; fov = 20 deg; }")
out2 = tap.scratch("view_")
with open(os.path.join(out2, "viewed.srd"), "w") as f:
    f.write(viewed)
p = srd("run", os.path.join(out2, "viewed.srd"), "--out", out2, "--quiet")
pictures = [os.path.join(out2, n) for n in ("block.png", "options.png", "fitted.png")]
q1 = srd("render", out2, "--size", "400x300", "-o", pictures[0])
q2 = srd("render", out2, "--size", "400x300", "-o", pictures[1], "--eye", "0.05,-0.3,0.05", "--target", "0.05,0,0",
         "--fov", "20")
q3 = srd("render", os.path.dirname(picture), "--size", "400x300", "-o", pictures[2])
same = all(os.path.exists(x) for x in pictures) and open(pictures[0], "rb").read() == open(pictures[1], "rb").read()
differs = same and png.read(pictures[0])[2] != png.read(pictures[2])[2]
check(p.returncode == 0 and q1.returncode == 0 and q2.returncode == 0 and q3.returncode == 0 and same and differs,
      "a view block's camera: the pictures equal those of the same camera given on the command line, and differ from "
      "the fitted one%s" % (p.stderr + q1.stderr + q2.stderr))

# 2. Every example that writes frames: its last frame (a 0.1 s run) is drawn and fits the
# picture: the model's pixels (saturated colours; the ground grid may run off the picture)
# are more than 0.2% of it, span more than a quarter of its width or height (the camera fits
# the run, not an empty space) and stay off its edges (the whole run fits).
for name in sorted(os.listdir(examples)):
    path = os.path.join(examples, name)
    if not name.endswith(".srd") or "output vtk" not in open(path).read():
        continue
    out = tap.scratch(name[:-4] + "_")
    p = srd("run", path, "--out", out, "--quiet", "--duration", "0.1")
    picture = os.path.join(out, "last.png")
    q = srd("render", out, "--size", "320x240", "-o", picture)
    if p.returncode != 0 or q.returncode != 0 or not os.path.exists(picture):
        check(False, "%s renders: %s %s" % (name, p.stderr.strip()[-300:], q.stderr.strip()))
        continue
    w, h, rows = png.read(picture)
    count, x0, y0, x1, y1 = drawn_box(rows, model)
    check(count > 0.002 * w * h and max((x1 - x0) / w, (y1 - y0) / h) > 0.25 and x0 > 0 and x1 < w - 1 and y0 > 0 and
          y1 < h - 1,
          "%s: %d pixels drawn (%.1f%%), within (%d, %d)..(%d, %d) of %d x %d" %
          (name, count, 100 * count / (w * h), x0, y0, x1, y1, w, h))

# 3. A series frame by frame, coloured by a field: one picture per frame.
out = tap.scratch("series_")
p = srd("run", os.path.join(examples, "jumper.srd"), "--out", out, "--quiet", "--duration", "0.1")
frames = sorted(f for f in os.listdir(out) if f.endswith(".vtu") and f.startswith("jumper"))
q = srd("render", out, "--frame", "all", "--color", "velocity", "--size", "160x120", "-o", os.path.join(out, "f"))
made = sorted(f for f in os.listdir(out) if f.startswith("f_") and f.endswith(".png"))
check(q.returncode == 0 and len(frames) > 1 and len(made) == len(frames),
      "--frame all: %d pictures for %d frames" % (len(made), len(frames)))

# 4. Videos through ffmpeg: the series played in real time at 50 frames per second at most,
# every k-th frame (k the smallest that brings the rate down to 50): the frame count and the
# duration (count / rate, to ffprobe's millisecond) as ffprobe reads them back.
times = []
with open(os.path.join(out, "jumper.pvd")) as f:
    for line in f:
        if "timestep=" in line:
            times.append(float(line.split('timestep="')[1].split('"')[0]))
dt = (times[-1] - times[0]) / (len(times) - 1)
step = 1
while 1 / (step * dt) > 50:
    step += 1
count, rate = len(range(0, len(times), step)), 1 / (step * dt)
for ext in ("mp4", "gif"):
    video = os.path.join(out, "run." + ext)
    q = srd("render", out, "--size", "160x120", "-o", video)
    probe = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                            "stream=nb_read_frames,duration", "-of", "default=nw=1", video], capture_output=True,
                           text=True)
    got = dict(line.split("=", 1) for line in probe.stdout.split())
    frames_read, duration = int(got.get("nb_read_frames", -1)), float(got.get("duration", "nan"))
    check(q.returncode == 0 and frames_read == count and abs(duration - count / rate) <= 1e-3,
          "%s: %d frames (expected %d: %d frames every %d-th), %.3f s (expected %.3f s at %.4g per second)%s"
          % (ext, frames_read, count, len(times), step, duration, count / rate, rate, q.stderr.strip()))

# 4b. A built simulator draws its own output: `NAME render DIR` writes the same picture as
# `srdc render DIR`, byte for byte; one built with --static has no picture libraries and says so.
work = tap.scratch("built_")
tripod = os.path.abspath(os.path.join(examples, "tripod.srd"))
sim, sim_static = os.path.join(work, "tripod"), os.path.join(work, "tripod_static")
b1 = subprocess.run([os.path.abspath(srdc), "build", tripod, "-o", sim, "--quiet"], capture_output=True, text=True, cwd=work)
b2 = subprocess.run([os.path.abspath(srdc), "build", tripod, "-o", sim_static, "--static", "--quiet"], capture_output=True, text=True,
                    cwd=work)
ran = subprocess.run([sim, "--out", os.path.join(work, "o"), "--quiet"], capture_output=True, text=True) \
    if b1.returncode == 0 else b1
own = subprocess.run([sim, "render", os.path.join(work, "o"), "-o", os.path.join(work, "own.png")],
                     capture_output=True, text=True) if ran.returncode == 0 else ran
srdc_pic = srd("render", os.path.join(work, "o"), "-o", os.path.join(work, "srdc.png"))
same = own.returncode == 0 and srdc_pic.returncode == 0 and \
    open(os.path.join(work, "own.png"), "rb").read() == open(os.path.join(work, "srdc.png"), "rb").read()
check(same, "a built simulator's `render` draws what srdc render draws, byte for byte%s" % (own.stderr.strip()))
st = subprocess.run([sim_static, "render", os.path.join(work, "o")], capture_output=True, text=True) \
    if b2.returncode == 0 else b2
check(st.returncode == 1 and "linked statically, without the picture libraries" in st.stderr,
      "a static simulator's `render` refuses, naming why: %s" % st.stderr.strip())

# 5. Bad requests: exit 1 with the reason (and what would be right).
empty = tap.scratch("empty_")
cases = [(("render", os.path.join(empty, "missing")), "cannot open the run directory"),
         (("render", empty), "holds no VTK series"),
         (("render", out, "--color", "speed"), "no field `speed` in the frames; they have: displacement, velocity, force"),
         (("render", out, "--frame", "100000"), "the series has frames 0 to"),
         (("render", out, "--view", "below"), "unknown view `below`"),
         (("render", out, "--size", "10x10"), "WIDTHxHEIGHT"),
         (("render", out, "--eye", "0.05,0,0.5", "--target", "0.05,0,0"), "the camera looks along its up direction"),
         (("render", out, "--eye", "1,2"), "write a point or direction as x,y,z"),
         (("render", out, "--fov", "180"), "0 (orthographic) to under 170"),
         (("render",), "which run?")]
for args, message in cases:
    r = srd(*args)
    check(r.returncode == 1 and message in r.stderr and "srdc: error:" in r.stderr,
          "`srdc %s`: exit 1 and says \"%s\" (got %d: %s)" % (" ".join(args[1:]) or "render", message, r.returncode,
                                                             r.stderr.strip()))
tap.finish()
