#!/usr/bin/env python3
"""check_contact_examples.py SRDC EXAMPLES_DIR CASES_DIR — the examples of contact between a
model's rods (issue 18) against physical criteria.

Each example runs in full (a few seconds of computing each) and writes its node positions as a CSV
frame every time step. For every example:

(i) No crossing. Between two frames every node moves on the straight line from one position to
    the next (what the implicit step assumes). The distance between two edges changes along
    that path by at most the sum of the largest displacements of a node of each (the triangle
    inequality), so a pair that is d apart at the start of an interval and whose nodes move u_a
    and u_b cannot meet while d > u_a + u_b; otherwise the interval is halved (conservative
    advancement, as the runtime does) down to 1/1024 of it. Every pair of edges that do not share
    a node must keep its centre lines apart (distance > 0) over the whole run, and in every frame
    the deepest overlap h - d (h the sum of the radii) must stay below h / 2, the depth at which
    the runtime warns. The deepest overlap found is printed.
(ii) The example's own outcome (each criterion and tolerance is given where it is checked):
    knot: the pulling force rises as the ends separate, and follows F = 2 pi^2 EI / Delta^2 (the
      loop a circle of length Delta, the end-to-end shortening) within a factor; the shortening is
      taken up by the loop (Delta minus the loop's circumference constant as the knot tightens);
    rope_coil: the rope coils (a ring of mean radius 1 / kappa wound L kappa / 2 pi times, turns
      touching) and comes to rest on the ground;
    ply: the strands wind round each other as often as their ends were turned, touching along
      the ply; and its first second with sparse storage equals dense storage's;
    finger_press: at equilibrium the wall's force along x equals the force the finger transmits
      (its clamp's reaction), the finger itself keeping off the wall.
And parallel_edges.srd (CASES_DIR): exactly parallel edges within reach from the first step run
(they gave NaN before the fix of segment_params) and stay apart.
"""
import csv
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from tap import check, finish, scratch  # noqa: E402
from distances import segment_distance  # noqa: E402


# ---------------------------------------------------------------------------------------------
# runs and frames


def run(srdc, path, extra=()):
    """`srdc run`, into a new scratch directory; the process result and the directory."""
    out = scratch(os.path.splitext(os.path.basename(path))[0] + "_")
    r = subprocess.run([srdc, "run", path, "--out", out] + list(extra), capture_output=True, text=True,
                       timeout=600)
    return r, out


def dump(srdc, path):
    return json.loads(subprocess.run([srdc, "dump", "--json", path], capture_output=True, text=True,
                                     check=True).stdout)


def frames(path):
    """(t, [(x, y, z) per node]) per row of an `output csv` table."""
    out = []
    with open(path) as f:
        rows = csv.reader(f)
        next(rows)
        for row in rows:
            v = [float(c) for c in row]
            out.append((v[0], [tuple(v[i:i + 3]) for i in range(1, len(v), 3)]))
    return out


def probes(path):
    with open(path) as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def rod_edges(model):
    """(edges as node pairs, radius of each edge, first node of each rod) from `dump --json`."""
    edges, radius, first, node = [], [], {}, 0
    for ob in model["objects"]:
        if ob["kind"] != "rod":
            node += ob["nodes"]
            continue
        first[ob["name"]] = node
        r = math.sqrt(ob["area"] / math.pi)
        closed = ob["edges"] == ob["nodes"]
        for k in range(ob["edges"]):
            edges.append((node + k, node + (k + 1) % ob["nodes"] if closed else node + k + 1))
            radius.append(r)
        node += ob["nodes"]
    return edges, radius, first


# ---------------------------------------------------------------------------------------------
# geometry


def near_pairs(edges, x, reach):
    """Pairs of edges without a shared node whose boxes come within `reach`: a uniform grid."""
    cell = max(reach, 1e-9)
    grid = {}
    boxes = []
    for k, (i, j) in enumerate(edges):
        lo = [min(x[i][c], x[j][c]) - reach / 2 for c in range(3)]
        hi = [max(x[i][c], x[j][c]) + reach / 2 for c in range(3)]
        boxes.append((lo, hi))
        for cx in range(math.floor(lo[0] / cell), math.floor(hi[0] / cell) + 1):
            for cy in range(math.floor(lo[1] / cell), math.floor(hi[1] / cell) + 1):
                for cz in range(math.floor(lo[2] / cell), math.floor(hi[2] / cell) + 1):
                    grid.setdefault((cx, cy, cz), []).append(k)
    pairs = set()
    for members in grid.values():
        for u in range(len(members)):
            for v in range(u + 1, len(members)):
                a, b = members[u], members[v]
                if set(edges[a]) & set(edges[b]):
                    continue
                (la, ha), (lb, hb) = boxes[a], boxes[b]
                if all(la[c] <= hb[c] and lb[c] <= ha[c] for c in range(3)):
                    pairs.add((min(a, b), max(a, b)))
    return pairs


def lerp(p, q, tau):
    return (p[0] + tau * (q[0] - p[0]), p[1] + tau * (q[1] - p[1]), p[2] + tau * (q[2] - p[2]))


def pair_meets(ea, eb, x0, x1, depth=0, lo=0.0, hi=1.0):
    """Whether the centre lines of edges ea, eb meet while the nodes move from x0 to x1 (both
    straight-line paths, over the fraction lo..hi): conservative advancement by halving."""
    p = [lerp(x0[n], x1[n], lo) for n in ea + eb]
    q = [lerp(x0[n], x1[n], hi) for n in ea + eb]
    d = segment_distance(*p)
    if d <= 0:
        return True
    move = lambda k: math.dist(p[k], q[k])
    if d > max(move(0), move(1)) + max(move(2), move(3)):
        return False
    if depth >= 10:
        return True  # still within the bound after 1/1024 of the interval: call it a crossing
    mid = 0.5 * (lo + hi)
    return pair_meets(ea, eb, x0, x1, depth + 1, lo, mid) or pair_meets(ea, eb, x0, x1, depth + 1, mid, hi)


def no_crossing(name, edges, radius, fr, delta):
    """Criterion (i) over every interval between frames; returns the deepest overlap."""
    deepest, deepest_t, crossed, worst_ratio = 0.0, 0.0, None, 0.0
    h_max = 2 * max(radius)
    for k in range(len(fr)):
        t, x = fr[k]
        move = 0.0
        if k + 1 < len(fr):
            move = max(math.dist(p, q) for p, q in zip(x, fr[k + 1][1]))
        for a, b in near_pairs(edges, x, h_max + delta + 2 * move):
            h = radius[a] + radius[b]
            d = segment_distance(x[edges[a][0]], x[edges[a][1]], x[edges[b][0]], x[edges[b][1]])
            if h - d > deepest:
                deepest, deepest_t = h - d, t
            worst_ratio = max(worst_ratio, (h - d) / h)
            if k + 1 < len(fr) and crossed is None and pair_meets(edges[a], edges[b], x, fr[k + 1][1]):
                crossed = (t, a, b)
    where = "" if crossed is None else ": edges %d and %d near t = %g s" % (crossed[1], crossed[2], crossed[0])
    check(crossed is None, "%s: no two edges' centre lines meet over the run (%d frames, every step; "
          "conservative advancement between frames)%s" % (name, len(fr), where))
    check(worst_ratio < 0.5, "%s: deepest overlap h - d = %.4g mm (t = %.3g s) below h / 2 = %.3g mm" %
          (name, 1e3 * deepest, deepest_t, 1e3 * h_max / 2))
    return deepest


def pairs_within(edges, radius, x, delta, among=None):
    """Pairs of edges (no shared node) whose surfaces are within delta: in contact."""
    out = []
    for a, b in near_pairs(edges, x, 2 * max(radius) + delta):
        if among and not among(a, b):
            continue
        d = segment_distance(x[edges[a][0]], x[edges[a][1]], x[edges[b][0]], x[edges[b][1]])
        if d < radius[a] + radius[b] + delta:
            out.append((a, b, d))
    return out


# ---------------------------------------------------------------------------------------------
# the examples


def run_example(srdc, examples, name):
    """Runs examples/NAME.srd; (its rod edges, their radii, each rod's first edge, the output
    directory), or None when it failed (reported)."""
    path = os.path.join(examples, name + ".srd")
    model = dump(srdc, path)
    r, out = run(srdc, path)
    check(r.returncode == 0, "%s: runs (%s)" % (name, r.stderr.strip()[-300:] or "ok"))
    if r.returncode:
        return None
    return rod_edges(model) + (out,)


def knot(srdc, examples):
    started = run_example(srdc, examples, "knot")
    if not started:
        return
    edges, radius, _, out = started
    fr = frames(os.path.join(out, "knot.csv"))
    # the drawn knot starts clear of contact: every pair of edges that share no node is farther
    # apart than the contact thickness h + delta
    x0 = fr[0][1]
    start = min(segment_distance(x0[edges[a][0]], x0[edges[a][1]], x0[edges[b][0]], x0[edges[b][1]])
                for a in range(len(edges)) for b in range(a + 2, len(edges)))
    check(start > 2 * radius[0] + 0.3e-3, "knot: the drawn strands are %.2f mm apart at the closest, beyond the "
          "contact thickness %.1f mm" % (1e3 * start, 1e3 * (2 * radius[0] + 0.3e-3)))
    no_crossing("knot", edges, radius, fr, delta=0.3e-3)
    # the example's values: E = 10 MPa, r = 1 mm; the pull starts at 1 s and lasts 3 s
    EI = 10e6 * math.pi * radius[0] ** 4 / 4
    L = sum(math.dist(x0[i], x0[j]) for i, j in edges)
    rows = [p for p in probes(os.path.join(out, "probes.csv")) if p["t"] >= 1.3]
    # the force, averaged over windows of 0.25 s (the strands slide over each other edge by edge,
    # which ripples the force by about 10 %), rises from window to window
    windows = []
    for w0 in [1.3 + 0.25 * k for k in range(11)]:
        sel = [p for p in rows if w0 <= p["t"] < w0 + 0.25]
        if sel:
            F = sum(p["F.fx"] for p in sel) / len(sel)
            delta = sum(L - (p["b.x"] - p["a.x"]) for p in sel) / len(sel)
            windows.append((w0, F, delta))
    rises = all(b[1] > a[1] for a, b in zip(windows, windows[1:]))
    check(rises and windows[-1][1] > 5 * windows[0][1],
          "knot: the pulling force rises in every 0.25 s window of the pull, %s N (%.1f times as the shortening "
          "goes from %.3f to %.3f m)" % (", ".join("%.3g" % w[1] for w in windows), windows[-1][1] / windows[0][1],
                                        windows[0][2], windows[-1][2]))
    # loose-knot limit: the loop, of length Delta, bent into a circle: E = 2 pi^2 EI / Delta and
    # F = -dE/dD = 2 pi^2 EI / Delta^2. The braid and the loop's departure from a circle add to it
    # (the circle has the least bending energy of closed curves of its length); accepted: 1 to 2
    # times the estimate in every window.
    ratios = [w[1] * w[2] ** 2 / EI / (2 * math.pi ** 2) for w in windows]
    check(all(1.0 <= c <= 2.0 for c in ratios),
          "knot: F Delta^2 / (2 pi^2 EI) within 1..2 in every window (%s)" % ", ".join("%.2f" % c for c in ratios))
    # the shortening goes into the loop: the loop's diameter is the largest distance of a node from
    # the pull axis (the x axis, through both ends); over the pull Delta and pi * diameter fall by
    # the same amount (slope of Delta against the circumference 1 within 0.15): what the braid
    # takes stays the same
    pts = []
    for t, x in fr:
        if t >= 1.3:
            D = math.dist(x[0], x[-1])
            Lt = sum(math.dist(x[i], x[j]) for i, j in edges)
            pts.append((math.pi * max(math.hypot(p[1], p[2]) for p in x), Lt - D))
    n = len(pts)
    mx, my = sum(p[0] for p in pts) / n, sum(p[1] for p in pts) / n
    slope = sum((p[0] - mx) * (p[1] - my) for p in pts) / sum((p[0] - mx) ** 2 for p in pts)
    check(abs(slope - 1) <= 0.15, "knot: the shortening is taken up by the loop: d(Delta) / d(pi diameter) = %.3f "
          "(1 within 0.15; Delta - pi diameter = %.1f mm on average)" % (slope, 1e3 * (my - mx)))


def rope_coil(srdc, examples):
    started = run_example(srdc, examples, "rope_coil")
    if not started:
        return
    edges, radius, _, out = started
    fr = frames(os.path.join(out, "rope_coil.csv"))
    no_crossing("rope_coil", edges, radius, fr, delta=0.3e-3)
    # the example's values: natural curvature 1 / 1.5 cm, rope length 20 cm, ground level = r
    kappa, L, level = 1 / 0.015, 0.2, radius[0]
    x = fr[-1][1]
    cx, cy = sum(p[0] for p in x) / len(x), sum(p[1] for p in x) / len(x)
    mean_r = sum(math.hypot(p[0] - cx, p[1] - cy) for p in x) / len(x)
    check(abs(mean_r * kappa - 1) <= 0.1, "rope_coil: the coil's mean radius %.2f mm is 1 / kappa = %.2f mm within "
          "10 %% (%+.1f %%)" % (1e3 * mean_r, 1e3 / kappa, 100 * (mean_r * kappa - 1)))
    turn = 0.0
    for p, q in zip(x, x[1:]):
        d = math.atan2(q[1] - cy, q[0] - cx) - math.atan2(p[1] - cy, p[0] - cx)
        turn += (d + math.pi) % (2 * math.pi) - math.pi
    want = L * kappa / (2 * math.pi)
    check(abs(abs(turn) / (2 * math.pi) - want) <= 0.15,
          "rope_coil: it winds %.2f times round its centre, L kappa / 2 pi = %.2f within 0.15" %
          (abs(turn) / (2 * math.pi), want))
    touching = pairs_within(edges, radius, x, 0.3e-3, among=lambda a, b: abs(a - b) > 3)
    check(len(touching) >= 10, "rope_coil: neighbouring turns touch: %d pairs of edges (more than 3 apart along "
          "the rope) within the contact distance at the end" % len(touching))
    top = max(p[2] for p in x) - level
    check(top <= 2 * radius[0], "rope_coil: it lies on the ground: every node within a rope diameter of the ground "
          "(highest %.3f mm above it; diameter %.1f mm)" % (1e3 * top, 2e3 * radius[0]))
    energy = probes(os.path.join(out, "energy.csv"))
    released = energy[0]["potential"] - energy[-1]["potential"]
    check(energy[-1]["kinetic"] <= 1e-6 * released, "rope_coil: at rest: kinetic energy %.3g J, below 1e-6 of the "
          "%.3g J released" % (energy[-1]["kinetic"], released))


def ply(srdc, examples):
    started = run_example(srdc, examples, "ply")
    if not started:
        return
    edges, radius, first, out = started
    fr = frames(os.path.join(out, "ply.csv"))
    no_crossing("ply", edges, radius, fr, delta=0.2e-3)
    turns = 2  # the example's `turns`
    x = fr[-1][1]
    n = first["right"] - first["left"]
    a, b = x[:n], x[n:2 * n]
    # the line from a strand's node to the other's node of the same index, followed from bottom to
    # top: it turns as the ends were turned (the bottom held, the top carried round `turns` times)
    # unless the strands passed through each other somewhere (it would then jump)
    angle = [math.atan2(q[1] - p[1], q[0] - p[0]) for p, q in zip(a, b)]
    wind = sum((v - u + math.pi) % (2 * math.pi) - math.pi for u, v in zip(angle, angle[1:])) / (2 * math.pi)
    check(abs(wind - turns) <= 0.05, "ply: the strands wind round each other %.3f times (the ends turned %d times; "
          "within 0.05)" % (wind, turns))
    # touching along the ply: every edge of the middle half of one strand within the contact
    # distance of the other strand
    h, delta = radius[0] + radius[n], 0.2e-3
    gaps = []
    for k in range(n // 4, 3 * n // 4):
        gaps.append(min(segment_distance(a[k], a[k + 1], b[j], b[j + 1]) for j in range(n - 1)) - h)
    check(all(-h / 2 < g < delta for g in gaps), "ply: the strands touch along the middle half: surface gaps %.3f "
          "to %.3f mm, within (-h/2, delta = %.1f mm)" % (1e3 * min(gaps), 1e3 * max(gaps), 1e3 * delta))
    # The pairs' Jacobian positions in a sparse pattern (looked up for new pairs, copied for kept
    # ones, remapped when the pattern grows) against dense storage, which needs none: the first
    # second (100 steps: the strands meet, up to 11 pairs in contact, 20 candidates, the pattern
    # grows) agree to 1e-9 m. Later the runs part at a snap of the strands (t = 1.13 s), where
    # rounding decides a step's fate (the outcome above is the same for both).
    r2, out2 = run(srdc, os.path.join(examples, "ply.srd"), ["--solver", "sparse", "--duration", "1"])
    sparse = frames(os.path.join(out2, "ply.csv")) if r2.returncode == 0 else []
    worst = max((abs(u - v) for (t, x), (_, y) in zip(sparse, fr) for p, q in zip(x, y) for u, v in zip(p, q)),
                default=math.inf)
    check(r2.returncode == 0 and len(sparse) == 101 and "linear solver: sparse" in r2.stdout and worst <= 1e-9,
          "ply: sparse storage (%d frames) follows dense to %.2g m over the first second (1e-9 m)" %
          (len(sparse), worst))


def finger_press(srdc, examples):
    started = run_example(srdc, examples, "finger_press")
    if not started:
        return
    edges, radius, first, out = started
    fr = frames(os.path.join(out, "finger_press.csv"))
    no_crossing("finger_press", edges, radius, fr, delta=0.3e-3)
    last = probes(os.path.join(out, "probes.csv"))[-1]
    wall, finger = last["F.fx"], last["R.fx"]
    # Along x only three forces act on the model: the wall, the finger's clamp, and inertia and
    # damping (the cable's ends are free in x, gravity is vertical). At rest the wall's force
    # equals what the clamp puts through the finger, opposite: within 1 % of it.
    check(wall < 0 and abs(wall + finger) <= 0.01 * abs(wall),
          "finger_press: the wall's force %.4g N along x against the finger clamp's %.4g N: they balance within 1 %% "
          "(%.2g %%)" % (wall, finger, 100 * abs(wall + finger) / abs(wall)))
    # The finger presses through the cable: the finger's edges and the cable's touch, and no
    # finger node is within the wall's reach (the box of the example, centre (2.15, 0, 4) cm,
    # size (2, 10, 1.2) cm, delta 0.3 mm), so all of the wall's force passes through the cable.
    x = fr[-1][1]
    nf = first["cable"] - first["finger"]
    fingered = lambda a, b: (a < nf - 1) != (b < nf - 1)
    touching = pairs_within(edges, radius, x, 0.3e-3, among=fingered)
    check(len(touching) >= 1, "finger_press: finger and cable touch (%d pairs of edges within the contact distance)"
          % len(touching))
    lo, hi = (0.0115, -0.05, 0.034), (0.0315, 0.05, 0.046)
    gap = min(math.sqrt(sum(max(lo[c] - p[c], 0, p[c] - hi[c]) ** 2 for c in range(3))) for p in x[:nf])
    check(gap > 0.3e-3, "finger_press: the finger keeps off the wall (its nearest node %.2f mm from it, delta "
          "0.3 mm)" % (1e3 * gap))


def parallel_edges(srdc, cases):
    path = os.path.join(cases, "parallel_edges.srd")
    model = dump(srdc, path)
    r, out = run(srdc, path)
    check(r.returncode == 0, "parallel_edges: exactly parallel edges in reach run (%s)" %
          (r.stderr.strip()[-200:] or "ok"))
    if r.returncode:
        return
    edges, radius, _ = rod_edges(model)
    no_crossing("parallel_edges", edges, radius, frames(os.path.join(out, "parallel.csv")), delta=0.2e-3)


def bar_on_clamp(srdc, cases):
    path = os.path.join(cases, "bar_on_clamp.srd")
    r, out = run(srdc, path)
    check(r.returncode == 0, "bar_on_clamp: runs (%s)" % (r.stderr.strip()[-200:] or "ok"))
    if r.returncode:
        return
    # Both rods' weight, rho pi r^2 (L_arm + L_bar) g (radius 2 mm, 5 cm and 6 cm, 1100 kg/m^3),
    # reaches the clamp: the bar's through contact on the clamped edge's nodes, which the
    # reaction includes. At rest (damped for 1 s, Newton to 1e-12) within 1e-8 of it.
    weight = 1100 * math.pi * 0.002 ** 2 * (0.05 + 0.06) * 9.81
    last = probes(os.path.join(out, "probes.csv"))[-1]
    check(abs(last["R.fz"] - weight) <= 1e-8 * weight,
          "bar_on_clamp: the clamp carries both rods' weight: R.z = %.10g N against %.10g N (relative %.2g, "
          "tolerance 1e-8)" % (last["R.fz"], weight, abs(last["R.fz"] / weight - 1)))
    check(abs(last["B"] - 0.004) <= 0.3e-3, "bar_on_clamp: the bar rests on the arm (its middle at z = %.3f mm, the "
          "contact thickness 4 mm, delta 0.3 mm)" % (1e3 * last["B"]))


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        sys.exit(2)
    srdc, examples, cases = sys.argv[1], sys.argv[2], sys.argv[3]
    parallel_edges(srdc, cases)
    bar_on_clamp(srdc, cases)
    finger_press(srdc, examples)
    ply(srdc, examples)
    knot(srdc, examples)
    rope_coil(srdc, examples)
    finish()


if __name__ == "__main__":
    main()
