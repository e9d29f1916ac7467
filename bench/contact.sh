#!/bin/sh
# contact.sh — the cost of contact between a model's rods (issue 18).
#
# 1. A pile: a rope of N edges wound as a close coil (helix of radius 2 cm, pitch 2.1 mm, rope
#    radius 1 mm, 3 mm edges, contact delta 0.3 mm: every turn within reach of the next, about three
#    candidate pairs per edge), implicit Euler at 1 ms, friction 0.3. For N = 1,000 to 30,000 edges
#    (and 100,000 when asked: `sh bench/contact.sh 100000`), run 5 and 25 steps with contact and
#    without it; the differences give the steady per-step figures (the first step, which grows the
#    sparse pattern and JIT-compiles, cancels): time per step with and without contact, the time
#    spent finding pairs (broad phase, batches, crossing checks), the candidate pairs, and the
#    linear solves' share of a step (Newton iterations times the measured time per iteration).
# 2. The knot of examples/knot.srd scaled up (the same rope, the knot and its tails k times as
#    long: 85 to 680 nodes), the relaxation and the first 0.5 s of the pull: time per step, Newton
#    iterations and the time finding pairs.
# Prints the figures; asserts nothing.
set -e
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
SRDC=${SRDC:-./build/srdc}
SIZES=${1:-"1000 3000 10000 30000"}
[ "$SIZES" = knot ] && SIZES=""             # `sh bench/contact.sh knot`: the knot only
${SRD_PYTHON:-python3} - "$SRDC" "$out" $SIZES <<'PY'
import math, os, re, subprocess, sys
srdc, out, sizes = sys.argv[1], sys.argv[2], [int(a) for a in sys.argv[3:]]

solve_ms = 0.0


def summary(path, extra=()):
    r = subprocess.run([srdc, "run", path, "--out", os.path.join(out, "o")] + list(extra),
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(r.stderr)
    s = r.stdout
    steps = int(re.search(r"in (\d+) steps", s).group(1))
    ms = float(re.search(r"([\d.]+) ms per step", s).group(1))
    its = float(re.search(r"([\d.]+) Newton iterations per step", s).group(1))
    m = re.search(r"(\d+) candidate pairs now; finding pairs took ([\d.e+-]+) s", s)
    solver = re.search(r"linear solver: (\w+)|$", s).group(1) or "none"  # none: no Newton iteration
    per_it = re.search(r"measured ([\d.e+-]+) ms per Newton iteration", s)
    global solve_ms
    solve_ms = its * float(per_it.group(1)) if per_it else 0.0
    return steps, ms * steps, its, (int(m.group(1)), float(m.group(2))) if m else (0, 0.0), solver

if sizes:
    print("== pile: a close coil of N edges (3 mm edges, 1 mm radius), implicit Euler, 1 ms")
    print("%8s %10s %10s %11s %14s %14s %14s %14s" % ("edges", "candidates", "ms/step", "no contact",
                                                       "contact share", "finding pairs", "per candidate",
                                                       "linear solves"))
for n in sizes:
    turns = n * 0.003 / (2 * math.pi * 0.02)
    rows = {}
    for contact in (True, False):
        for d in (5, 25):
            path = os.path.join(out, "pile.srd")
            with open(path, "w") as f:
                f.write("material rubber { E = 1 MPa; nu = 0.5; rho = 1100 kg/m^3; }\n"
                        "rod rope { path = helix((0, 0, 0) m, 2 cm, 2.1 mm, %.6f); spacing = 3 mm; radius = 1 mm; "
                        "material = rubber; }\n" % turns)
                if contact:
                    f.write("contact self { stiffness = 100 N/m; delta = 0.3 mm; friction = 0.3; "
                            "slip_velocity = 1 mm/s; }\n")
                f.write("simulate { method = implicit_euler; dt = 1 ms; duration = %d ms; }\n" % d)
            rows[contact, d] = summary(path)[:4] + (solve_ms,)
    per = lambda c: (rows[c, 25][1] - rows[c, 5][1]) / 20
    pairs = (rows[True, 25][3][1] - rows[True, 5][3][1]) / 20 * 1e3
    cand = rows[True, 25][3][0]
    print("%8d %10d %10.1f %11.1f %13.0f%% %11.1f ms %11.2f us %11.1f ms" % (
        n, cand, per(True), per(False), 100 * (per(True) - per(False)) / per(True), pairs,
        1e3 * pairs / max(cand, 1), rows[True, 25][4]))
    sys.stdout.flush()

print("\n== knot: examples/knot.srd scaled k times (relaxation, then 0.5 s of the pull), implicit Euler, 10 ms")
sys.path.insert(0, "examples/data")
import make_knot
base = open("examples/knot.srd").read()
R, A, TAIL = make_knot.R, make_knot.A, make_knot.TAIL
print("%6s %6s %8s %10s %12s %14s %16s" % ("k", "nodes", "solver", "ms/step", "Newton/step", "finding pairs",
                                          "candidates (end)"))
for k in (1, 2, 4, 8):
    make_knot.R, make_knot.A, make_knot.TAIL = k * R, k * A, k * TAIL
    pts = make_knot.points()
    i = base.index("  // begin make_knot.py\n"); j = base.index("  // end make_knot.py\n")
    text = base[:i] + make_knot.polyline(pts) + "\n" + base[j:]
    text = re.sub(r"nodes = \d+;", "nodes = %d;" % len(pts), text)
    text = text.replace('output csv "knot" every 10 ms;', "")
    path = os.path.join(out, "knot.srd")
    open(path, "w").write(text)
    steps, total, its, (cand, pairs), solver = summary(path, ["--duration", "1.5"])
    print("%6d %6d %8s %10.2f %12.2f %13.2f ms %16d" % (k, len(pts), solver, total / steps, its, 1e3 * pairs / steps,
                                                        cand))
    sys.stdout.flush()
PY
