#!/usr/bin/env python3
"""check_view.py SRDC EXAMPLES_DIR — srdc view: the page it writes, loaded in headless chromium
(Debian's, software WebGL, the network blocked), draws a known scene where the camera's
projection puts it, draws examples whole (the model's pixels fill the box the page says its
points project to, inside the window), scrubs to the last frame (#frame=last), keeps every
k-th frame of a long run, holds no network reference, and bad requests get clear errors."""
import html
import math
import os
import re
import shutil
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
import png  # noqa: E402
import tap  # noqa: E402
from tap import check  # noqa: E402

srdc, examples = sys.argv[1], sys.argv[2]
profile = tap.scratch("chromium_")


def srd(*args):
    return subprocess.run([srdc, *args], capture_output=True, text=True)


def chromium(page, fragment, size, screenshot=None, budget=8000):
    """Loads page#fragment in a window of size (w, h); the DOM after it ran (or the screenshot's
    path). Software WebGL (SwiftShader); every host name fails to resolve, so a page that
    needed the network would show it."""
    args = ["chromium", "--headless", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
            "--user-data-dir=" + profile, "--host-resolver-rules=MAP * ~NOTFOUND", "--hide-scrollbars",
            "--window-size=%d,%d" % size, "--virtual-time-budget=%d" % budget]
    args += ["--screenshot=" + screenshot] if screenshot else ["--dump-dom"]
    r = subprocess.run(args + ["file://%s#%s" % (page, fragment)], capture_output=True, text=True, timeout=180)
    return r.stdout


def status(dom):
    """The status line's text and the box (x0, y0, x1, y1, pad) it carries."""
    m = re.search(r'<div id="status"(?: data-box="([^"]*)")?>([^<]*)<', dom)
    if not m:
        return "", None
    box = [float(v) for v in m.group(1).split()] if m.group(1) else None
    return html.unescape(m.group(2)), box


def background(rows):
    counts = {}
    for row in rows[::7]:
        for p in row[::7]:
            counts[p[:3]] = counts.get(p[:3], 0) + 1
    return max(counts, key=counts.get)


def drawn_box(rows, test):
    """(count, x0, y0, x1, y1) of the pixels that pass test."""
    xs, ys = [], []
    for y, row in enumerate(rows):
        for x, p in enumerate(row):
            if test(p):
                xs.append(x)
                ys.append(y)
    return (len(xs), min(xs), min(ys), max(xs) + 1, max(ys) + 1) if xs else (0, 0, 0, 0, 0)


def model(p):
    """A pixel of the model: its colours are saturated; the ground grid and the controls grey."""
    return max(p[:3]) - min(p[:3]) > 40


def frames_of(out, series):
    with open(os.path.join(out, series + ".pvd")) as f:
        return f.read().count("<DataSet")


if not shutil.which("chromium"):
    check(False, "chromium is installed (scripts/setup.sh installs Debian's)")
    tap.finish()

# 1. A known scene: the rod along x (0 to 10 cm, radius 2 mm) of check_render.py, seen from the
# front in a 400 x 300 window. The page fits the camera as srdc render does: its 30 degree
# field of view holds the box's bounding sphere (R the half diagonal of the box grown by the
# radius) from 1.08 R / sin(15 deg), so the rod spans x = 200 -+ (0.05 + r) f / d pixels and
# is 2 r f / d thick, f = 150 / tan(15 deg). Checked to 3 pixels (antialiasing, shading).
out = tap.scratch("rod_")
p = srd("run", os.path.join(here, "rod_x.srd"), "--out", out, "--quiet")
page = os.path.join(out, "rod.html")
q = srd("view", out, "-o", page)
check(p.returncode == 0 and q.returncode == 0 and os.path.exists(page) and "1 of the series' 1 frames" in q.stdout,
      "the rod's page is written (%s%s%s)" % (q.stdout.strip(), p.stderr.strip(), q.stderr.strip()))
shot = os.path.join(out, "rod.png")
chromium(page, "frame=last", (400, 300), shot)
if os.path.exists(shot):
    w, h, rows = png.read(shot)
    bg = background(rows)
    drawn = lambda px: max(abs(a - b) for a, b in zip(px[:3], bg)) > 30  # noqa: E731
    r = 0.002
    half_diag = 0.5 * math.sqrt((0.1 + 2 * r) ** 2 + 2 * (2 * r) ** 2)
    scale = (150 / math.tan(math.radians(15))) / (1.08 * half_diag / math.sin(math.radians(15)))
    row = [x for x in range(w) if drawn(rows[150][x])]
    col = [y for y in range(60, 240) if drawn(rows[y][200])]  # between the panels at the top and bottom
    want = (200 - (0.05 + r) * scale, 200 + (0.05 + r) * scale, 150 - r * scale, 150 + r * scale)
    got = (row[0], row[-1] + 1, col[0], col[-1] + 1) if row and col else (0, 0, 0, 0)
    check((w, h) == (400, 300) and all(abs(a - b) <= 3 for a, b in zip(got, want)),
          "known scene: the rod spans x %.1f..%.1f px (projection %.1f..%.1f) and y %.1f..%.1f px (%.1f..%.1f) in "
          "a %d x %d screenshot; tol 3 px" % (got[0], got[1], want[0], want[1], got[2], got[3], want[2], want[3], w, h))
else:
    check(False, "known scene: chromium took a screenshot of the rod's page")

# 2. No network: no script or stylesheet from elsewhere, no import of a URL; the libraries are
# inside the page.
text = open(page, encoding="utf-8").read() if os.path.exists(page) else ""
tags = re.findall(r"<(?:script|link|img|iframe)\b[^>]*>", text, re.I)
remote = [t for t in tags if re.search(r"\b(?:src|href)\s*=", t, re.I)]
imports = re.findall(r"""(?:\bfrom\s*|\bimport\s*\(?\s*)["'](?:https?:)?//""", text)
check(text and len(tags) >= 4 and not remote and not imports and "<link" not in text,
      "the page loads nothing from the network: %d tags, %d with src/href (%s), %d URL imports"
      % (len(tags), len(remote), remote[:2], len(imports)))

# 3. Examples drawn whole, by object: the model's (saturated) pixels span the box the page says
# the frame's points project to, to the drawn radius (pad) and 3 pixels, and that box lies in
# the window (not clipped). The page draws at a fixed size (#size=640x480): headless chromium
# shows the DOM in a smaller viewport than the screenshot of the same window. The parachute has shells, rods and a point body; the star roller
# rods; rod_drop a ground grid.
sizes = {}
for name, duration in (("parachute", "0.1"), ("star_roller", "0.1"), ("rod_drop", "0.15")):
    out = tap.scratch(name + "_")
    p = srd("run", os.path.join(examples, name + ".srd"), "--out", out, "--quiet", "--duration", duration)
    page = os.path.join(out, name + ".html")
    q = srd("view", out)  # the default page: DIR/SERIES.html
    if p.returncode != 0 or q.returncode != 0 or not os.path.exists(page):
        check(False, "%s: the page is written: %s %s" % (name, p.stderr.strip()[-300:], q.stderr.strip()))
        continue
    sizes[name] = os.path.getsize(page)
    n = frames_of(out, name)
    size = (640, 480)
    said, box = status(chromium(page, "frame=last&size=640x480", size))
    check(said == "frame %d of %d drawn" % (n, n) and box is not None,
          "%s: scrubbed to the last frame: the page says \"%s\" (%d frames)" % (name, said, n))
    shot = os.path.join(out, "last.png")
    chromium(page, "frame=last&size=640x480", size, shot)
    if not box or not os.path.exists(shot):
        check(False, "%s: a screenshot and the page's box" % name)
        continue
    w, h, rows = png.read(shot)
    count, x0, y0, x1, y1 = drawn_box(rows, model)
    tol = box[4] + 3
    inside = box[0] >= 0 and box[1] >= 0 and box[2] <= w and box[3] <= h
    fits = all(abs(a - b) <= tol for a, b in zip((x0, y0, x1, y1), box[:4]))
    check(count > 0.002 * w * h and inside and fits,
          "%s: %d model pixels within (%d, %d)..(%d, %d); the points project to (%.0f, %.0f)..(%.0f, %.0f), "
          "tol %.1f px, in a %d x %d window" % ((name, count, x0, y0, x1, y1) + tuple(box[:4]) + (tol, w, h)))

# 4. Scrubbing moves the model (the dropped rod falls), a frame by number, colouring by a field
# shows its colour bar with the unit.
out = os.path.dirname(page)
_, first = status(chromium(page, "frame=first", (640, 480)))
said, second = status(chromium(page, "frame=2", (640, 480)))
dom = chromium(page, "frame=last&field=velocity", (640, 480))
_, last = status(dom)
check(first and last and second and said.startswith("frame 2 of ") and first[3] < last[3] - 5,
      "rod_drop: frame 2 drawn (\"%s\"), the rod's lowest point falls on the screen from y = %.0f to %.0f px"
      % (said, first[3] if first else 0, last[3] if last else 0))
check('<div id="unit">velocity (m/s), magnitude</div>' in dom and "display: block" in dom,
      "#field=velocity: the colour bar shows velocity (m/s)")

# 4b. Without a frame in the address the run plays (in the run's own time, here under chromium's
# virtual time, which the page's timers follow) from the first frame to the last, where it stops.
dom = chromium(page, "size=640x480", (640, 480))
said, _ = status(dom)
n = frames_of(out, "rod_drop")
check(said == "frame %d of %d drawn" % (n, n) and '<button id="play">play</button>' in dom,
      "rod_drop plays to its last frame and stops: \"%s\" (%d frames)" % (said, n))

# 5. Long runs keep every k-th frame and the last: 31 frames at --max-frames 10 keep every 4th
# (0, 4, ..., 28) and 30, 9 in all.
q = srd("view", out, "--max-frames", "10", "-o", os.path.join(out, "ten.html"))
said, _ = status(chromium(os.path.join(out, "ten.html"), "frame=last", (320, 240)))
time = re.search(r'<div id="time">([^<]*)<', chromium(os.path.join(out, "ten.html"), "frame=last", (320, 240)))
check(q.returncode == 0 and "9 of the series' 31 frames" in q.stdout and said == "frame 9 of 9 drawn" and time and
      "frame 30 of the series" in time.group(1),
      "--max-frames 10 of 31 frames: %s; the page: \"%s\", %s" % (q.stdout.strip(), said,
                                                               time.group(1) if time else "no time"))

# 6. Size: three.js (about 0.73 MB) and the frames; these short runs stay under 1.2 MB.
for name, size in sorted(sizes.items()):
    print("# %s.html: %.2f MB" % (name, size / 1e6))
check(sizes and all(s < 1.2e6 for s in sizes.values()), "the pages are small: %s"
      % ", ".join("%s %.2f MB" % kv for kv in ((k, v / 1e6) for k, v in sorted(sizes.items()))))

# 7. Bad requests: exit 1 with the reason.
empty = tap.scratch("empty_")
cases = [(("view", os.path.join(empty, "missing")), "cannot open the run directory"),
         (("view", empty), "holds no VTK series"),
         (("view", out, "--series", "nothing"), "has no series `nothing`"),
         (("view", out, "--max-frames", "1"), "2 or more"),
         (("view", out, "--colour"), "unknown option `--colour`"),
         (("view", out, "-o", os.path.join(empty, "no", "such", "dir.html")), "cannot write"),
         (("view",), "which run?")]
for args, message in cases:
    r = srd(*args)
    check(r.returncode == 1 and message in r.stderr and "srdc: error:" in r.stderr,
          "`srdc %s`: exit 1 and says \"%s\" (got %d: %s)" % (" ".join(args), message, r.returncode, r.stderr.strip()))
tap.finish()
