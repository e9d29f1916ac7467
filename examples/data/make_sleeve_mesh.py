#!/usr/bin/env python3
"""Writes sleeve.obj, the fabric sleeve of examples/sleeve_pendulum.srd: an open tube of radius
4 cm along x from x = 0.2 m to x = 0.4 m (over the pendulum's elbow at x = 0.3 m), cut into 24
nodes around and 9 rings along, each quad split into two triangles along alternating diagonals.

Usage: python3 make_sleeve_mesh.py > sleeve.obj
"""
import math

AROUND, RINGS, RADIUS, X0, X1 = 24, 9, 0.04, 0.2, 0.4


def main():
    print("# fabric sleeve: open tube, radius 4 cm, x from 0.2 m to 0.4 m (make_sleeve_mesh.py)")
    for r in range(RINGS):
        x = X0 + (X1 - X0) * r / (RINGS - 1)
        for k in range(AROUND):
            a = 2 * math.pi * k / AROUND
            print(f"v {x:.6f} {RADIUS * math.cos(a):.6f} {RADIUS * math.sin(a):.6f}")
    for r in range(RINGS - 1):
        for k in range(AROUND):
            p, q = r * AROUND + k + 1, r * AROUND + (k + 1) % AROUND + 1
            s, t = p + AROUND, q + AROUND
            if (r + k) % 2:
                print(f"f {p} {q} {t}\nf {p} {t} {s}")
            else:
                print(f"f {p} {q} {s}\nf {q} {t} {s}")


if __name__ == "__main__":
    main()
