#!/usr/bin/env python3
"""make_knot.py — the centre line of examples/knot.srd: a loose open overhand knot.

An overhand knot is a trefoil cut open. The trefoil is the (2, 3) torus knot
    p(u) = ((R + a cos 3u) cos 2u, (R + a cos 3u) sin 2u, a sin 3u),  u in [0, 2 pi),
on a torus of radii R (centre line) and a (tube). It is cut at u = 0, its outermost point, by
leaving out u in (-c, c). The cut ends point at each other; straight tails of length `tail`
leave them along the y axis, each toward the other's side, and cross there 2 a sin 3c apart
(the ends' heights differ by that). The curve is symmetric under the half turn (x, y, z) -> (x, -y, -z), which maps one
tail onto the other, so the tips lie on a line through the x axis: the points are turned and
moved so that this line is the x axis and the tips sit at x = -d/2 and x = +d/2. The knot is
then sampled at equal arc length, about `spacing` apart (every sample a node of the rod).

    python3 examples/data/make_knot.py            # rewrites the path in examples/knot.srd
    python3 examples/data/make_knot.py --print    # prints the points (metres), one per line

tests/examples/check_models.py imports `points()` to count the nodes and weigh the rod.
"""
import math
import os
import sys

R = 0.012          # torus centre-line radius (m)
A = 0.006          # torus tube radius (m)
CUT = 0.25         # half the parameter interval cut out at u = 0
TAIL = 0.04        # tail length (m)
SPACING = 0.003    # target node spacing (m)


def _trefoil(u):
    w = R + A * math.cos(3 * u)
    return (w * math.cos(2 * u), w * math.sin(2 * u), A * math.sin(3 * u))


def _dense():
    """The curve, finely sampled: tail, cut trefoil, tail."""
    n = 20000
    knot = [_trefoil(CUT + (2 * math.pi - 2 * CUT) * k / n) for k in range(n + 1)]
    m = 400
    head = [(knot[0][0], knot[0][1] - TAIL * (m - k) / m, knot[0][2]) for k in range(m)]
    tail = [(knot[-1][0], knot[-1][1] + TAIL * k / m, knot[-1][2]) for k in range(1, m + 1)]
    return head + knot + tail


def _frame(pts):
    """Turns and moves the points so that the tips lie on the x axis, symmetric about 0."""
    a, b = pts[0], pts[-1]
    ex = [q - p for p, q in zip(a, b)]
    d = math.sqrt(sum(c * c for c in ex))
    ex = [c / d for c in ex]
    mid = [(p + q) / 2 for p, q in zip(a, b)]
    ez = [0.0, 0.0, 1.0]
    dz = sum(x * y for x, y in zip(ex, ez))
    ez = [z - dz * x for z, x in zip(ez, ex)]
    nz = math.sqrt(sum(c * c for c in ez))
    ez = [c / nz for c in ez]
    ey = [ez[1] * ex[2] - ez[2] * ex[1], ez[2] * ex[0] - ez[0] * ex[2], ez[0] * ex[1] - ez[1] * ex[0]]
    out = []
    for p in pts:
        r = [p[c] - mid[c] for c in range(3)]
        out.append(tuple(sum(r[c] * e[c] for c in range(3)) for e in (ex, ey, ez)))
    return out


def points():
    """The rod's nodes: the knot sampled at equal arc length."""
    dense = _frame(_dense())
    s = [0.0]
    for p, q in zip(dense, dense[1:]):
        s.append(s[-1] + math.dist(p, q))
    n_edges = round(s[-1] / SPACING)
    out, j = [], 0
    for k in range(n_edges + 1):
        target = s[-1] * k / n_edges
        while j + 1 < len(s) - 1 and s[j + 1] < target:
            j += 1
        f = (target - s[j]) / (s[j + 1] - s[j])
        out.append(tuple(dense[j][c] + f * (dense[j + 1][c] - dense[j][c]) for c in range(3)))
    return out


def closest_strands(pts, skip):
    """The smallest distance between two nodes more than `skip` nodes apart along the rod."""
    best = math.inf
    for i in range(len(pts)):
        for j in range(i + skip + 1, len(pts)):
            best = min(best, math.dist(pts[i], pts[j]))
    return best


def polyline(pts):
    rows = ["(%.6f, %.6f, %.6f) mm" % tuple(1e3 * c for c in p) for p in pts]
    lines = ["  path = polyline("]
    for k in range(0, len(rows), 4):
        lines.append("    " + ", ".join(rows[k:k + 4]) + ("," if k + 4 < len(rows) else ""))
    lines.append("  );")
    return "\n".join(lines)


def main():
    pts = points()
    if "--print" in sys.argv:
        for p in pts:
            print("%.9f %.9f %.9f" % p)
        return
    srd = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "knot.srd")
    text = open(srd).read()
    begin, end = "  // begin make_knot.py\n", "  // end make_knot.py\n"
    i, j = text.index(begin) + len(begin), text.index(end)
    open(srd, "w").write(text[:i] + polyline(pts) + "\n" + text[j:])
    length = sum(math.dist(p, q) for p, q in zip(pts, pts[1:]))
    print("%d nodes, length %.4f m, tips %.4f m apart, closest strands %.4f m" %
          (len(pts), length, math.dist(pts[0], pts[-1]), closest_strands(pts, 4)))


if __name__ == "__main__":
    main()
