#!/usr/bin/env python3
"""Writes quadruped.obj, the body of examples/quadruped_walker.srd: a quadruped's outline (a
body 20 mm long between two 8 mm-wide cross bars whose ends are the legs, 36 x 36 mm in all),
extruded 6 mm into a closed prism, wound outward, for a lattice to fill.

Usage: python3 make_quadruped_mesh.py > quadruped.obj
"""
H = 0.006
# the outline (x, y) in m, counter-clockwise seen from +z
P = [(0, -0.018), (0.008, -0.018), (0.008, -0.006), (0.028, -0.006), (0.028, -0.018), (0.036, -0.018),
     (0.036, 0.018), (0.028, 0.018), (0.028, 0.006), (0.008, 0.006), (0.008, 0.018), (0, 0.018)]
# the outline cut into triangles, counter-clockwise: the two bars as fans, the body between them
CAP = [(0, 1, 2), (0, 2, 9), (0, 9, 10), (0, 10, 11), (5, 6, 7), (5, 7, 8), (5, 8, 3), (5, 3, 4), (2, 3, 8), (2, 8, 9)]


def main():
    n = len(P)
    print("# quadruped: H-shaped prism 36 x 36 x 6 mm (make_quadruped_mesh.py)")
    for z in (0.0, H):
        for x, y in P:
            print(f"v {x:.6f} {y:.6f} {z:.6f}")
    for a, b, c in CAP:
        print(f"f {a + 1} {c + 1} {b + 1}")              # bottom, facing -z
        print(f"f {a + 1 + n} {b + 1 + n} {c + 1 + n}")  # top, facing +z
    for i in range(n):
        j = (i + 1) % n
        print(f"f {i + 1} {j + 1} {j + 1 + n}\nf {i + 1} {j + 1 + n} {i + 1 + n}")


if __name__ == "__main__":
    main()
