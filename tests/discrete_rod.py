"""discrete_rod.py — closed forms of srd's discrete clamped rod that the physics checks compare
with. `clamp r.start` fixes the first two nodes and the first edge's twist, and the first
edge's direction stands for the tangent at the wall (x = 0): the bending spring at node 1
stands for 3l/2 of rod, from the wall to the middle of edge 1, and every other interior
spring for l (docs/validation.md, "How a clamp is modelled")."""
import math


def spring_length(i, l):
    """The length of rod the bending spring at node i (1 .. n-2) of a clamped rod stands for."""
    return 1.5 * l if i == 1 else l


def chain_tip(n, length, loads, EI):
    """Linear theory of the clamped rod of n nodes: rigid edges of length l joined by rotational
    springs EI / s_i at nodes 1 .. n-2. loads[i] is the transverse force on node i; the spring
    at node i turns by M_i s_i / EI under the moment M_i of the loads beyond it, which moves
    the tip by that angle times its lever arm L - x_i."""
    l = length / (n - 1)
    tip = 0.0
    for i in range(1, n - 1):
        moment = sum(loads[j] * (j - i) * l for j in range(i + 1, n))
        tip += moment * spring_length(i, l) / EI * (length - i * l)
    return tip


def weights(n, length, q):
    """A distributed load q lumped on n nodes: q l on interior nodes, q l / 2 on the ends."""
    l = length / (n - 1)
    return [q * l / 2] + [q * l] * (n - 2) + [q * l / 2]


def natural_polygon(kappa, l, edges):
    """The zero-energy shape of a clamped rod of natural curvature kappa (in the x-z plane,
    turning towards +z): node positions (x, z). The clamped edge 0 lies along x; a spring
    standing for a length s of rod bends by the chord angle 2 asin(kappa s / 2), so edge 1
    turns by 2 asin(3 kappa l / 4) and every later edge by 2 asin(kappa l / 2) more."""
    a, b = 2 * math.asin(kappa * l / 2), 2 * math.asin(3 * kappa * l / 4)
    points = [(0.0, 0.0), (l, 0.0)]
    for k in range(1, edges):
        angle = b + (k - 1) * a
        x, z = points[-1]
        points.append((x + l * math.cos(angle), z + l * math.sin(angle)))
    return points
