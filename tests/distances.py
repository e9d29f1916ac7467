"""distances.py — closed-form distances between contact parts for the checks, written
independently of the runtime's (runtime/contact/distance.c)."""
import math


def sub(a, b):
    return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def segment_distance(a0, a1, b0, b1):
    """Distance between two segments: the minimiser over the unit square of |a(s) - b(t)|, found
    as the smallest over its interior stationary point and its four sides (each a clamped
    projection). A segment may be a point."""
    d1, d2, r = sub(a1, a0), sub(b1, b0), sub(a0, b0)

    def at(s, t):
        g = [r[c] + s * d1[c] - t * d2[c] for c in range(3)]
        return math.sqrt(dot(g, g))
    clamp = lambda x: min(1.0, max(0.0, x))
    aa, ee, bb = dot(d1, d1), dot(d2, d2), dot(d1, d2)
    cands = []
    den = aa * ee - bb * bb
    if den > 1e-14 * aa * ee:
        s = (bb * dot(d2, r) - ee * dot(d1, r)) / den
        t = (aa * dot(d2, r) - bb * dot(d1, r)) / den
        if 0 <= s <= 1 and 0 <= t <= 1:
            cands.append(at(s, t))
    for s in (0.0, 1.0):  # a side s = const: t minimises |r + s d1 - t d2|
        cands.append(at(s, clamp(dot(d2, [r[c] + s * d1[c] for c in range(3)]) / ee) if ee > 0 else 0.0))
    for t in (0.0, 1.0):
        cands.append(at(clamp(-dot(d1, [r[c] - t * d2[c] for c in range(3)]) / aa) if aa > 0 else 0.0, t))
    return min(cands)


def point_triangle_distance(p, a, b, c):
    """Distance from p to triangle abc: to its plane when the projection falls inside, else to
    the nearest side."""
    ab, ac, ap = sub(b, a), sub(c, a), sub(p, a)
    n = [ab[1] * ac[2] - ab[2] * ac[1], ab[2] * ac[0] - ab[0] * ac[2], ab[0] * ac[1] - ab[1] * ac[0]]
    nn = dot(n, n)
    h = dot(ap, n) / nn
    foot = [p[k] - h * n[k] for k in range(3)]
    inside = True
    for u, v in ((a, b), (b, c), (c, a)):
        e, w = sub(v, u), sub(foot, u)
        cr = [e[1] * w[2] - e[2] * w[1], e[2] * w[0] - e[0] * w[2], e[0] * w[1] - e[1] * w[0]]
        inside &= dot(cr, n) >= 0
    if inside:
        return abs(h) * math.sqrt(nn)
    return min(segment_distance(p, p, u, v) for u, v in ((a, b), (b, c), (c, a)))
