#!/usr/bin/env python3
"""Writes manta_ray.txt, the body of examples/manta_ray.srd, in MAT-DiSMech's text format.

The body is a rhombus made of two equilateral triangles of side 1 m that share the centre
line x = 0, from the trailing tip (0, -0.5) to the leading tip (0, 0.5); the wing tips are at
(+-sqrt(3)/2, 0). This is the outline of the authors' stingray mesh (dismech-matlab,
experiments/stingRay, stingray_n10_python.txt): 10 divisions per side, so 121 nodes, 200
equilateral triangles of side 0.1 m and 11 nodes on the centre line.

Usage: python3 make_manta_mesh.py [DIVISIONS] > manta_ray.txt
"""
import math
import sys


def rhombus(n, side=1.0):
    """Nodes and counter-clockwise triangles (0-based) of the rhombus cut into 2 n^2 triangles.

    A node is a + b steps from the trailing tip: a along the centre line (+y), b along
    (+-sqrt(3)/2, 1/2) into the right (b > 0) or left (b < 0) wing.
    """
    h = side / n
    index = {}
    nodes = []
    for a in range(n + 1):
        for b in range(-(n - a), n - a + 1):
            index[(a, b)] = len(nodes)
            nodes.append((math.sqrt(3) / 2 * h * b, -side / 2 + h * a + h * abs(b) / 2, 0.0))
    tris = []
    for a, b in index:
        wing = 1 if b >= 0 else -1           # the wing this lattice cell opens into
        for t in (((a, b), (a, b + wing), (a + 1, b)), ((a + 1, b), (a, b + wing), (a + 1, b + wing))):
            if all(p in index for p in t):
                tris.append(tuple(index[p] for p in t))
        if b == 0:                           # the left wing's cells on the centre line
            for t in (((a, 0), (a, -1), (a + 1, 0)), ((a + 1, 0), (a, -1), (a + 1, -1))):
                if all(p in index for p in t):
                    tris.append(tuple(index[p] for p in t))
    # wind every triangle counter-clockwise seen from +z
    wound = []
    for t in tris:
        (x0, y0, _), (x1, y1, _), (x2, y2, _) = (nodes[k] for k in t)
        wound.append(t if (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0) > 0 else (t[0], t[2], t[1]))
    return nodes, wound


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    nodes, tris = rhombus(n)
    out = sys.stdout
    out.write("# Manta-ray body: two equilateral triangles of side 1 m sharing the centre line x = 0.\n")
    out.write(f"# Written by make_manta_mesh.py {n}: {len(nodes)} nodes, {len(tris)} triangles.\n")
    out.write("*Nodes\n")
    for x, y, z in nodes:
        out.write(f"{x!r}, {y!r}, {z!r}\n")
    out.write("*Triangles\n")
    for t in tris:
        out.write("{}, {}, {}\n".format(*(k + 1 for k in t)))


if __name__ == "__main__":
    main()
