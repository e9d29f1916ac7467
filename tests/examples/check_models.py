#!/usr/bin/env python3
"""check_models.py SRDC EXAMPLES_DIR — checks the elaborated model of every example.

For each examples/*.srd it runs `SRDC dump --json FILE` and compares the counts of nodes,
edges, triangles and DOFs (by kind), the element instances by kind, the fixed DOFs and the
total mass with values this script derives on its own from the example's geometry. The
geometry is written out again here (lengths, node counts, mesh lattices, joins, clamps), not
read back from srdc, so a change in an example or in elaboration shows up as a mismatch.

Conventions (those of the brief the examples were written to):
  * stretch: one per edge, rod and shell;
  * bend_twist: at every node, one per pair of frame edges meeting there. Rod edges carry
    frames, and so does every edge of a shell triangle that touches a rod-shell joint (a node
    with rod edges and triangles), as in MAT-DiSMech section 3.4 and docs/language.md;
  * hinge: one per interior edge of a hinge shell; midedge: one per triangle of a mid-edge shell;
  * DOFs: 3 per node, 1 twist per frame edge (none in planar models), 1 xi per edge of a
    mid-edge shell;
  * fixed: 3 per clamped node; a clamped rod end also clamps the next node; the twist and xi of
    an edge with both nodes clamped; in planar models the y of every node;
  * mass: rho A (sum of edge lengths) per rod, rho h (sum of triangle areas) per shell, plus
    point masses; rho V per lattice;
  * lattice (cubic grid in a box, edges and face diagonals): one lattice_spring per pair of grid
    points at distance a or a sqrt(2), counted here cell face by cell face.

Prints one `ok - ...` / `not ok - ...` line per check; exits 1 if any check fails.
"""
import glob
import json
import math
import os
import subprocess
import sys

MASS_RTOL = 1e-12


# ---------------------------------------------------------------------------------------------
# an independent little elaborator: nodes, rods, shells, bodies, joins, clamps


class Model:
    def __init__(self, planar=False):
        self.planar = planar
        self.x = []             # node positions, before joins
        self.rods = []          # (node list, closed, rho, area)
        self.shells = []        # (triangles as node triples, rho, thickness, bending)
        self.point_masses = []  # (node, mass)
        self.joins = []         # pairs of nodes
        self.clamped = set()    # nodes
        self.held_ends = set()  # (end node, next node) of clamped rod ends
        self.ground = None      # None, or whether a flat ground has friction
        self.fluid = set()      # "rft", "drag", "viscous" blocks
        self.spheres = []       # per sphere obstacle: whether it has friction
        self.boxes = []         # per box obstacle: whether it has friction
        self.moving = []        # per moving obstacle or plane: (element kind prefix, friction)
        self.surface = None     # None, or whether an uneven ground (height field) has friction
        self.fixed_components = []  # (node, component) held by `fix`
        self.pressure_volume = 0    # triangles of closed shells under `pressure`
        self.springs = 0            # lattice springs
        self.lattice_mass = 0.0
        self.tets = {}              # solid tetrahedra by element kind
        self.rigids = set()         # nodes that are rigid bodies' centres (3 rotation DOFs each)
        self.world_fixed = 0        # the world as a body: its 6 DOFs held
        self.multipliers = 0        # joints' constraint multipliers
        self.joint_elements = {}    # element kind -> instances the joints (and applies) add

    def add_nodes(self, points):
        first = len(self.x)
        self.x.extend(tuple(float(c) for c in p) for p in points)
        return list(range(first, len(self.x)))

    def rod(self, points, rho, area, closed=False):
        nodes = self.add_nodes(points)
        self.rods.append((nodes, closed, rho, area))
        return nodes

    def shell(self, points, triangles, rho, thickness, bending):
        nodes = self.add_nodes(points)
        tris = [tuple(nodes[k] for k in t) for t in triangles]
        self.shells.append((tris, rho, thickness, bending))
        return nodes

    def cubic_lattice(self, size, a, rho):
        """A box of the given size filled with a cubic grid of spacing a, springs to the edges
        and face diagonals of its cells."""
        n = [round(s / a) for s in size]
        self.add_nodes([(i * a, j * a, k * a) for k in range(n[2] + 1) for j in range(n[1] + 1)
                        for i in range(n[0] + 1)])
        points = [(n[0] + 1) * (n[1] + 1) * (n[2] + 1) // (n[c] + 1) for c in range(3)]
        axis = sum(n[c] * points[c] for c in range(3))
        # each axis-aligned unit square of the grid has 2 diagonals
        squares = sum(n[a1] * n[a2] * (n[3 - a1 - a2] + 1) for a1, a2 in ((0, 1), (0, 2), (1, 2)))
        self.springs += axis + 2 * squares
        self.lattice_mass += rho * size[0] * size[1] * size[2]

    def filled_lattice(self, inside, lo, n, a, rho, volume):
        """A cubic grid of spacing a from corner lo over n cells per axis, the points for which
        inside(x, y, z) holds, springs to the edges and face diagonals of its cells between
        them; it weighs rho times the enclosed volume."""
        pts = {(i, j, k) for i in range(n[0] + 1) for j in range(n[1] + 1) for k in range(n[2] + 1)
               if inside(lo[0] + i * a, lo[1] + j * a, lo[2] + k * a)}
        self.add_nodes([(lo[0] + i * a, lo[1] + j * a, lo[2] + k * a) for i, j, k in sorted(pts)])
        steps = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (1, -1, 0), (1, 0, 1), (1, 0, -1), (0, 1, 1), (0, 1, -1)]
        self.springs += sum(1 for p in pts for d in steps if (p[0] + d[0], p[1] + d[1], p[2] + d[2]) in pts)
        self.lattice_mass += rho * volume

    def box_solid(self, size, a, rho, kind="tet_neo_hookean", cavity=None):
        """A box cut into ceil(side / a) cubes per axis, six tetrahedra each; a cavity (origin,
        size) removes the cubes whose centres lie in it and the grid points inside it (no
        tetrahedron uses them); each cavity face is two pressure_volume triangles."""
        n = [math.ceil(s / a - 1e-9) for s in size]
        h = [size[c] / n[c] for c in range(3)]
        lo, hi = [0, 0, 0], [0, 0, 0]
        if cavity:
            lo = [round(cavity[0][c] / h[c]) for c in range(3)]
            hi = [round((cavity[0][c] + cavity[1][c]) / h[c]) for c in range(3)]
        inside = lambda i, j, k: all(lo[c] < v < hi[c] for c, v in enumerate((i, j, k)))
        nodes = [(i * h[0], j * h[1], k * h[2]) for k in range(n[2] + 1) for j in range(n[1] + 1)
                 for i in range(n[0] + 1) if not inside(i, j, k)]
        first = len(self.x)
        self.add_nodes(nodes)
        c = [hi[k] - lo[k] for k in range(3)]
        cells = n[0] * n[1] * n[2] - c[0] * c[1] * c[2]
        self.tets[kind] = self.tets.get(kind, 0) + 6 * cells
        self.lattice_mass += rho * cells * h[0] * h[1] * h[2]
        self.cavity_triangles = 4 * (c[0] * c[1] + c[0] * c[2] + c[1] * c[2])
        return list(range(first, len(self.x)))

    def body(self, position, mass):
        (node,) = self.add_nodes([position])
        self.point_masses.append((node, mass))
        return node

    def rigid(self, position, mass):
        node = self.body(position, mass)
        self.rigids.add(node)
        return node

    def world(self):
        # a joint to `world` joins a body made for it: a node at the origin, held in full
        node = self.rigid((0.0, 0.0, 0.0), 0.0)
        self.world_fixed = 6
        return node

    def parts(self, multipliers=0, **kinds):
        # joint parts: constraint multipliers and element instances by kind
        self.multipliers += multipliers
        for kind, count in kinds.items():
            self.joint_elements[kind] = self.joint_elements.get(kind, 0) + count

    def join(self, a, b):
        assert dist(self.x[a], self.x[b]) < 1e-9, "joined nodes of the expected model must coincide"
        self.joins.append((a, b))

    def flat_ground(self, friction):
        # a flat or inclined ground puts a contact element, and with friction a friction
        # element, on every node
        self.ground = friction

    def uneven_ground(self, friction):
        # a ground given by its height puts surface_contact, and with friction
        # surface_friction, on every node
        self.surface = friction

    def sphere(self, friction):
        # a sphere obstacle puts a contact element, and with friction a friction element, on
        # every node
        self.spheres.append(friction)

    def box(self, friction):
        # a box obstacle, likewise: box_contact, and with friction box_friction, on every node
        self.boxes.append(friction)

    def self_contact(self):
        # `contact self` / `contact a, b`: the edge pairs are found during the run, so the sets
        # edge_contact (and edge_friction) exist with no instances; nothing to count here
        pass
    def moving_obstacle(self, prefix, friction):
        # a moving (or turned) obstacle's elements are std.contact's moving_<shape>_contact (and
        # _friction), a plane's plane_contact (plane_friction): one each on every node
        self.moving.append((prefix, friction))

    def fluids(self, *kinds):
        # rft: one rft_drag element per rod edge end; drag: one aero_drag per triangle
        # corner; viscous: one viscous_drag per rod node
        self.fluid.update(kinds)

    def clamp(self, nodes):
        self.clamped.update(nodes)

    def clamp_rod_start(self, rod_nodes):
        # the end node, and the end edge's direction and twist: the next node slides along it
        self.clamped.add(rod_nodes[0])
        self.held_ends.add((rod_nodes[0], rod_nodes[1]))

    # -- derived quantities, in the merged numbering --

    def expected(self):
        parent = list(range(len(self.x)))

        def find(i):
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for a, b in self.joins:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
        roots = sorted({find(i) for i in range(len(self.x))})
        index = {r: k for k, r in enumerate(roots)}
        node = [index[find(i)] for i in range(len(self.x))]
        n_nodes = len(roots)

        rod_edges = []
        mass = 0.0
        for nodes, closed, rho, area in self.rods:
            pairs = list(zip(nodes, nodes[1:])) + ([(nodes[-1], nodes[0])] if closed else [])
            mass += rho * area * sum(dist(self.x[a], self.x[b]) for a, b in pairs)
            rod_edges += [(node[a], node[b]) for a, b in pairs]

        shell_edges = {}      # (merged a, merged b) -> shell index
        shell_tris = []       # merged corner triples
        hinges = midedges = xi = 0
        for k, (tris, rho, h, bending) in enumerate(self.shells):
            uses = {}
            for t in tris:
                mass += rho * h * triangle_area(self.x[t[0]], self.x[t[1]], self.x[t[2]])
                corners = tuple(node[i] for i in t)
                shell_tris.append(corners)
                for i in range(3):
                    e = tuple(sorted((corners[i], corners[(i + 1) % 3])))
                    uses[e] = uses.get(e, 0) + 1
            assert max(uses.values()) <= 2, "expected meshes are manifold"
            shell_edges.update((e, k) for e in uses)
            if bending == "hinge":
                hinges += sum(1 for u in uses.values() if u == 2)
            else:
                midedges += len(tris)
                xi += len(uses)
        mass += sum(m for _, m in self.point_masses) + self.lattice_mass

        # frame edges: rod edges, and the edges of every triangle touching a rod-shell joint
        has_rod = [False] * n_nodes
        for a, b in rod_edges:
            has_rod[a] = has_rod[b] = True
        frame_shell = set()
        for t in shell_tris:
            if any(has_rod[v] for v in t):
                frame_shell.update(tuple(sorted((t[i], t[(i + 1) % 3]))) for i in range(3))
        frame_deg = [0] * n_nodes
        for a, b in rod_edges + sorted(frame_shell):
            frame_deg[a] += 1
            frame_deg[b] += 1
        bend = sum(k * (k - 1) // 2 for k in frame_deg)
        twist = 0 if self.planar else len(rod_edges) + len(frame_shell)

        clamped = {node[i] for i in self.clamped}
        fixed = 3 * len(clamped) + (n_nodes - len(clamped) if self.planar else 0)
        fixed += len({(node[i], c) for i, c in self.fixed_components if node[i] not in clamped})
        inside = lambda e: e[0] in clamped and e[1] in clamped
        if not self.planar:
            fixed += sum(1 for e in rod_edges + sorted(frame_shell) if inside(e))
            # a clamped rod end's edge keeps its twist; its next node is free to slide
            fixed += len({frozenset((node[a], node[b])) for a, b in self.held_ends if node[b] not in clamped})
        sliding = len({node[b] for a, b in self.held_ends if node[b] not in clamped})
        fixed += sum(1 for e, k in shell_edges.items() if self.shells[k][3] == "midedge" and inside(e))

        elements = dict(self.joint_elements)
        rigid = len({node[i] for i in self.rigids})
        ground = n_nodes - rigid if self.ground is not None else 0  # a rigid body touches with its shape
        rod_nodes = {n for e in rod_edges for n in e}
        for kind, count in (("stretch", len(rod_edges) + len(shell_edges)), ("bend_twist", bend),
                            ("hinge", hinges), ("midedge", midedges), ("ground_contact", ground),
                            ("ground_friction", ground if self.ground else 0),
                            ("rft_drag", 2 * len(rod_edges) if "rft" in self.fluid else 0),
                            ("aero_drag", 3 * len(shell_tris) if "drag" in self.fluid else 0),
                            ("viscous_drag", len(rod_nodes) if "viscous" in self.fluid else 0),
                            ("surface_contact", n_nodes if self.surface is not None else 0),
                            ("surface_friction", n_nodes if self.surface else 0),
                            ("sphere_contact", n_nodes * len(self.spheres)),
                            ("sphere_friction", n_nodes * sum(1 for f in self.spheres if f)),
                            ("box_contact", n_nodes * len(self.boxes)),
                            ("box_friction", n_nodes * sum(1 for f in self.boxes if f)),
                            *((prefix + "_contact", n_nodes) for prefix, _ in self.moving),
                            *((prefix + "_friction", n_nodes) for prefix, f in self.moving if f),
                            ("pressure_volume", self.pressure_volume), ("lattice_spring", self.springs),
                            *self.tets.items()):
            if count:
                elements[kind] = elements.get(kind, 0) + count
        fixed += self.world_fixed
        return {
            "nodes": n_nodes,
            "edges": len(rod_edges) + len(shell_edges) + self.springs,
            "rod_edges": len(rod_edges),
            "triangles": len(shell_tris),
            "dofs": 3 * n_nodes + twist + xi + 3 * rigid + self.multipliers,
            "dofs_by_kind": {"node": 3 * n_nodes, "twist": twist, "midedge": xi, "rotation": 3 * rigid,
                             "multiplier": self.multipliers},
            "elements": elements,
            "fixed_dofs": fixed,
            "sliding_nodes": sliding,
            "planar": self.planar,
            "total_mass": mass,
        }


def dist(p, q):
    return math.sqrt(sum((a - b) ** 2 for a, b in zip(p, q)))


def triangle_area(p, q, r):
    u = [b - a for a, b in zip(p, q)]
    v = [b - a for a, b in zip(p, r)]
    c = (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
    return 0.5 * math.sqrt(sum(a * a for a in c))


def add(p, q, scale=1.0):
    return tuple(a + scale * b for a, b in zip(p, q))


# ---------------------------------------------------------------------------------------------
# geometry


def line(a, b, n):
    return [tuple(a[c] + (b[c] - a[c]) * k / (n - 1) for c in range(3)) for k in range(n)]


def walk(start, directions, step):
    """Points of a chain of equal edges along the given angles in the x-z plane."""
    points = [start]
    for a in directions:
        points.append(add(points[-1], (math.cos(a), 0.0, math.sin(a)), step))
    return points


def advance_lower(lo, hi, a, b):
    """Zipping two rows into triangles: advance along the row whose next node comes first; when
    both next nodes are at the same x (the rows' ends), the row lagging behind goes first."""
    if b + 1 == len(hi):
        return True
    if a + 1 == len(lo):
        return False
    if lo[a + 1] != hi[b + 1]:
        return lo[a + 1] < hi[b + 1]
    return lo[a] <= hi[b]


def equilateral_rectangle(length, width, spacing):
    """Staggered rows along x, rows sqrt(3)/2 spacing apart (rounded), covering the rectangle
    exactly; odd rows are shifted half a spacing and gain a node at each side."""
    n = max(1, round(length / spacing)) + 1
    rows = max(1, round(width / (spacing * math.sqrt(3) / 2))) + 1
    dx = length / (n - 1)
    row_x = []
    for j in range(rows):
        if j % 2 == 0:
            row_x.append([i * dx for i in range(n)])
        else:
            row_x.append([0.0] + [(i + 0.5) * dx for i in range(n - 1)] + [length])
    points, first = [], []
    for j, xs in enumerate(row_x):
        first.append(len(points))
        points += [(x, width * j / (rows - 1), 0.0) for x in xs]
    triangles = []
    for j in range(rows - 1):
        lo, hi = row_x[j], row_x[j + 1]
        a = b = 0
        while a + 1 < len(lo) or b + 1 < len(hi):
            if advance_lower(lo, hi, a, b):
                triangles.append((first[j] + a, first[j] + a + 1, first[j + 1] + b))
                a += 1
            else:
                triangles.append((first[j] + a, first[j + 1] + b + 1, first[j + 1] + b))
                b += 1
    return points, triangles


def lattice(origin, e1, e2, inside, lo, hi):
    """Points origin + a e1 + b e2 of a triangular lattice (|e1| = |e2|, 60 degrees apart) for
    integers lo <= a, b <= hi with inside(a, b), and every lattice triangle with its three
    corners inside (the triangulation of a convex lattice region)."""
    index, points = {}, []
    for b in range(lo, hi + 1):
        for a in range(lo, hi + 1):
            if inside(a, b):
                index[(a, b)] = len(points)
                points.append(tuple(origin[c] + a * e1[c] + b * e2[c] for c in range(3)))
    triangles = []
    for a, b in ((a, b) for b in range(lo - 1, hi + 1) for a in range(lo - 1, hi + 1)):
        for t in (((a, b), (a + 1, b), (a, b + 1)), ((a + 1, b), (a + 1, b + 1), (a, b + 1))):
            if all(p in index for p in t):
                triangles.append(tuple(index[p] for p in t))
    return points, triangles, index


def hexagon(radius, rings):
    h = radius / rings
    return lattice((0.0, 0.0, 0.0), (h, 0.0, 0.0), (h / 2, h * math.sqrt(3) / 2, 0.0),
                   lambda a, b: abs(a) <= rings and abs(b) <= rings and abs(a + b) <= rings, -rings, rings)


def geodesic_sphere(radius, frequency):
    """The icosahedron's 20 faces cut into frequency^2 triangles each, points projected onto the
    sphere; points shared by faces are merged by position (rounded to 1e-12 of the radius)."""
    phi = (1 + math.sqrt(5)) / 2
    pairs = [(s1, s2 * phi) for s1 in (-1.0, 1.0) for s2 in (-1.0, 1.0)]
    corners = [(a, b, 0.0) for a, b in pairs] + [(0.0, a, b) for a, b in pairs] + [(b, 0.0, a) for a, b in pairs]
    edge = 2.0
    faces = [(i, j, k) for i in range(12) for j in range(i + 1, 12) for k in range(j + 1, 12)
             if all(abs(dist(corners[p], corners[q]) - edge) < 1e-9 for p, q in ((i, j), (j, k), (i, k)))]
    n, index, points, triangles = frequency, {}, [], []

    def point(f, i, j):
        a, b, c = (corners[v] for v in f)
        p = [((n - i - j) * a[d] + i * b[d] + j * c[d]) / n for d in range(3)]
        length = math.sqrt(sum(x * x for x in p))
        q = tuple(radius * x / length for x in p)
        key = tuple(round(x / radius * 1e12) for x in q)
        if key not in index:
            index[key] = len(points)
            points.append(q)
        return index[key]

    for f in faces:
        for j in range(n):
            for i in range(n - j):
                triangles.append((point(f, i, j), point(f, i + 1, j), point(f, i, j + 1)))
                if i + j + 2 <= n:
                    triangles.append((point(f, i + 1, j), point(f, i + 1, j + 1), point(f, i, j + 1)))
    return points, triangles


# ---------------------------------------------------------------------------------------------
# the examples, one function each, with the numbers of the .srd files


def cantilever_rod():
    m = Model(planar=True)
    beam = m.rod(line((0, 0, 0), (0.1, 0, 0), 51), rho=1200, area=0.020 * 0.001)
    m.clamp([i for i in beam if m.x[i][0] <= 0.01 + 1e-12])
    return m


def arm_pd():
    m = Model(planar=True)
    arm = m.rod(line((0, 0, 0), (0.2, 0, 0), 21), rho=1100, area=math.pi * 0.005 ** 2)
    m.clamp_rod_start(arm)
    return m


def rod_fit():
    m = Model(planar=True)
    arm = m.rod(line((0, 0, 0), (0.1, 0, 0), 41), rho=1100, area=math.pi * 0.002 ** 2)
    m.clamp_rod_start(arm)
    return m


def plate_press():
    m = Model()
    beam = m.rod(line((0, 0, 0), (0.1, 0, 0), 21), rho=1200, area=math.pi * 0.001 ** 2)
    m.clamp_rod_start(beam)
    m.moving_obstacle("moving_box", friction=False)  # the plate: a box whose centre moves
    return m


def cantilever_shell(bending):
    m = Model()
    points, tris = equilateral_rectangle(0.1, 0.02, 0.005)
    strip = m.shell(points, tris, rho=1200, thickness=0.001, bending=bending)
    m.clamp([i for i in strip if m.x[i][0] <= 0.01 + 1e-12])
    return m


def straight_finger(planar, n=51, rho=1200, clamp=True):
    m = Model(planar=planar)
    finger = m.rod(line((0, 0, 0), (0.1, 0, 0), n), rho=rho, area=math.pi * 0.001 ** 2)
    if clamp:
        m.clamp_rod_start(finger)
    return m


def snake():
    m = straight_finger(planar=False, n=21, clamp=False)
    m.fluids("rft")
    return m


def earthworm():
    m = straight_finger(planar=True, n=3, clamp=False)
    m.flat_ground(friction=True)
    return m


def gripper():
    m = straight_finger(planar=True)
    m.sphere(friction=True)
    return m


def rod_drop():
    m = Model()
    m.rod(line((0, 0, 0), (0.05, 0.025, 0.05), 21), rho=1500, area=math.pi * 0.001 ** 2)
    m.flat_ground(friction=True)
    return m


def sheet_fold():
    # a 12 x 2 cm strip of spacing 1 cm (equilateral rows) lying 0.5 mm above the ground; its far
    # edge (one node per row, x = 12 cm) is driven by `move`: each of its DOFs a constraint
    m = Model()
    points, tris = equilateral_rectangle(0.12, 0.02, 0.01)
    strip = m.shell([(x, y - 0.01, z + 0.0005) for x, y, z in points], tris, rho=1100, thickness=0.001,
                    bending="hinge")
    m.fixed_components = [(v, c) for v in strip if m.x[v][0] >= 0.119 for c in range(3)]
    m.flat_ground(friction=True)
    m.self_contact()
    return m


def knot():
    # the centre line of make_knot.py, every sample a node; both ends clamped (and moved)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "data"))
    import make_knot
    m = Model()
    # as knot.srd holds them: in mm to 6 decimals
    points = [tuple(float("%.6f" % (1e3 * c)) * 1e-3 for c in p) for p in make_knot.points()]
    rope = m.rod(points, rho=1000, area=math.pi * 0.001 ** 2)
    m.clamp_rod_start(rope)
    m.clamp_rod_start(rope[::-1])
    m.self_contact()
    return m


def ply():
    # two strands 6 cm long, 3 mm apart, 21 nodes each, clamped at both ends
    m = Model()
    for x in (-0.0015, 0.0015):
        strand = m.rod(line((x, 0, 0), (x, 0, 0.06), 21), rho=1100, area=math.pi * 0.001 ** 2)
        m.clamp_rod_start(strand)
        m.clamp_rod_start(strand[::-1])
    m.self_contact()
    return m


def finger_press():
    # an upright finger clamped at its base; a cable whose ends are held in y and z; a box wall
    m = Model()
    finger = m.rod(line((0, 0, 0), (0, 0, 0.05), 11), rho=1100, area=math.pi * 0.0015 ** 2)
    m.clamp_rod_start(finger)
    cable = m.rod(line((0.01, -0.03, 0.045), (0.01, 0.03, 0.045), 13), rho=1100, area=math.pi * 0.001 ** 2)
    m.fixed_components += [(cable[0], 1), (cable[0], 2), (cable[-1], 1), (cable[-1], 2)]
    m.box(friction=True)
    m.self_contact()
    return m


def rope_coil():
    m = Model()
    m.rod(line((0, 0, 0.06), (0.2, 0, 0.06), 67), rho=1100, area=math.pi * 0.001 ** 2)
    m.flat_ground(friction=True)
    m.self_contact()
    return m


def manta_ray():
    # two equilateral triangles of side 1 m sharing the centre line x = 0 (y from -0.5 to 0.5),
    # 10 divisions per side: lattice steps h along the centre line and h toward +x at 60 degrees
    n, h = 10, 0.1
    right_wing = lambda a, b: b >= 0 and a >= 0 and a + b <= n
    left_wing = lambda a, b: b <= 0 and a + b >= 0 and a <= n
    points, tris, _ = lattice((0.0, -0.5, 0.0), (0.0, h, 0.0), (h * math.sqrt(3) / 2, h / 2, 0.0),
                              lambda a, b: right_wing(a, b) or left_wing(a, b), -n, n)
    m = Model()
    m.shell(points, tris, rho=1057, thickness=0.001, bending="hinge")
    m.fluids("drag")
    return m


def parachute():
    m = Model()
    points, tris, index = hexagon(1.0, 6)
    canopy = m.shell(points, tris, rho=1500, thickness=0.001, bending="midedge")
    payload = (0.0, 0.0, -0.2)
    body = m.body(payload, 0.13)
    corners = [(6, 0), (0, 6), (-6, 6), (-6, 0), (0, -6), (6, -6)]   # at 0, 60, ... 300 degrees
    for a, b in corners:
        corner = m.x[canopy[index[(a, b)]]]
        rope = m.rod(line(payload, corner, 12), rho=1500, area=math.pi * 0.001 ** 2)
        m.join(rope[0], body)
        m.join(rope[-1], canopy[index[(a, b)]])
    m.fluids("drag")
    return m


def star_roller():
    m = Model(planar=True)
    limbs, edges, straight = 7, 11, 3
    step = 0.030 / edges
    turn = 2 * math.atan(120 * step / 2)
    area_ = 0.018 * 0.0017
    centre = (0.0, 0.0, 0.0258)
    r = 0.009
    ring = [add(centre, (math.cos(2 * math.pi * k / limbs), 0, math.sin(2 * math.pi * k / limbs)), r)
            for k in range(limbs)]
    hub = m.rod(ring, rho=1912, area=area_, closed=True)
    for i in range(limbs):
        a = 2 * math.pi * i / limbs
        directions = [a + max(0, k - straight + 1) * turn for k in range(edges)]
        limb = m.rod(walk(ring[i], directions, step), rho=1912, area=area_)
        m.join(limb[0], hub[i])
    m.uneven_ground(friction=True)
    return m


def jumper():
    m = Model(planar=True)
    loop, tail, step = 12, 10, 0.0025
    turn = 2 * math.atan(200 * step / 2)
    # counter-clockwise loop reaching the foot heading +x, then the straight tail
    directions = [-(loop - k) * turn for k in range(loop)] + [0.0] * tail
    m.rod(walk((0.0, 0.0, 0.0), directions, step), rho=1912, area=0.018 * 0.0017)
    m.flat_ground(friction=True)
    return m


def balloon():
    # radius 5 cm, spacing 1 cm: frequency round(0.05 / sin(72 deg) / 0.01) = 5
    m = Model()
    points, tris = geodesic_sphere(0.05, 5)
    nodes = m.shell(points, tris, rho=1000, thickness=0.5e-3, bending="hinge")
    m.fixed_components = [(v, c) for v in nodes for c in range(3) if abs(m.x[v][c]) < 1e-6]
    m.pressure_volume = len(tris)
    return m


def tripod():
    m = Model()
    legs, n, h, spread = 3, 21, 0.06, 0.04
    hub = m.body((0.0, 0.0, h), 0.005)
    for i in range(legs):
        a = 2 * math.pi * i / legs
        leg = m.rod(line((spread * math.cos(a), spread * math.sin(a), 0.0), (0.0, 0.0, h), n),
                    rho=1100, area=math.pi * 0.002 ** 2)
        m.clamp_rod_start(leg)
        m.join(leg[-1], hub)
    return m


def thermal_bimorph():
    m = Model()
    m.cubic_lattice((0.06, 0.01, 0.004), 0.001, rho=1070)
    m.fixed_components = [(0 + 61 * (0 + 11 * 2), c) for c in range(3)]
    m.fixed_components += [(0 + 61 * (10 + 11 * 2), c) for c in (0, 2)] + [(1 + 61 * (0 + 11 * 2), 2)]
    return m


def silicone_press():
    m = Model()
    nodes = m.box_solid((0.02, 0.02, 0.01), 0.0025, rho=1070)
    m.clamp([i for i in nodes if abs(m.x[i][2]) < 1e-12 or abs(m.x[i][2] - 0.01) < 1e-12])  # table and plate
    return m


def pneunet_solid():
    m = Model()
    nodes = m.box_solid((0.1, 0.01, 0.01), 0.002, rho=1070, cavity=((0.004, 0.002, 0.002), (0.092, 0.006, 0.004)))
    m.clamp([i for i in nodes if abs(m.x[i][0]) < 1e-12])
    m.pressure_volume = m.cavity_triangles
    return m


def cylinder_mass(rho, r, length):
    return rho * math.pi * r * r * length


def rfem_pendulum():
    # rfem of 10 elements (11 cylinders: the end ones half long) hung from a shaft on a motor
    m = Model()
    n, length, r = 10, 0.5, 0.004
    m.world()
    for k in range(n + 1):
        seg = length / n / 2 if k in (0, n) else length / n
        m.rigid((0.0, 0.0, -seg), cylinder_mass(2700, r, seg))  # positions do not matter to the counts
    m.rigid((0.0, 0.0, 0.0), cylinder_mass(7800, 0.01, 0.02))   # the shaft
    # rfem: a ball joint and rotational springs and dampers per element; mount: fixed; motor:
    # revolute with an angle motor
    m.parts(3 * n + 3 + 3 + 3 + 2 + 1, joint_point=n + 2, joint_rotation_spring=n, joint_rotation_damper=n,
            joint_lock=1, joint_hinge_axis=1, hinge_motor_angle=1)
    return m


def appendage_base():
    m = Model()
    area = math.pi * 0.01166 ** 2
    m.rod(line((0.0, 0.0, 0.0), (0.0, 0.0, -0.05), 21), rho=1311, area=area)
    m.world()
    m.rigid((0.0, 0.0, 0.005), cylinder_mass(7800, 0.02, 0.01))  # base
    m.rigid((0.0, 0.0, -0.05725), 0.01347)                       # tip sensor
    # two rod ends clamped into bodies (pin, direction, twist), a revolute joint with a motor
    m.parts(2 * 6 + 6, node_point=2, rod_clamp=2, rod_clamp_twist=2, joint_point=1, joint_hinge_axis=1,
            hinge_motor_angle=1)
    return m


def rigid_gripper():
    m = Model()
    area = math.pi * 0.0015 ** 2
    for x in (-0.035, 0.035):
        m.rod(line((x, 0.0, 0.115), (x, 0.0, 0.035), 17), rho=1200, area=area)
    m.world()
    m.rigid((0.0, 0.0, 0.12), 1200 * 0.08 * 0.02 * 0.01)  # palm
    m.rigid((0.0, 0.0, 0.0205), 0.02)                     # the box
    m.flat_ground(friction=True)
    # 2 rod clamps, the slide (lock, line, position motor); each box's 8 corners on the ground;
    # the fingers' 34 nodes against the box, with friction both ways
    m.parts(2 * 6 + 3 + 2 + 1, node_point=2, rod_clamp=2, rod_clamp_twist=2, joint_lock=1, joint_slide_line=1,
            slide_motor_position=1, body_ground_contact=16, body_ground_friction=16, node_body_box_contact=34,
            node_body_box_friction=34, body_node_box_friction=34)
    return m


def sleeve_pendulum():
    m = Model()
    around, rings = 24, 9
    # data/sleeve.obj (make_sleeve_mesh.py): rings of radius 4 cm from x = 0.2 to 0.4 m, to 6 decimals
    points = [tuple(round(v, 6) for v in (0.2 + 0.2 * r / (rings - 1), 0.04 * math.cos(2 * math.pi * k / around),
                                          0.04 * math.sin(2 * math.pi * k / around)))
              for r in range(rings) for k in range(around)]
    tris = []
    for r in range(rings - 1):
        for k in range(around):
            p, q = r * around + k, r * around + (k + 1) % around
            s, t = p + around, q + around
            tris += [(p, q, t), (p, t, s)] if (r + k) % 2 else [(p, q, s), (q, t, s)]
    m.shell(points, tris, rho=300, thickness=0.001, bending="hinge")
    m.world()
    m.rigid((0.15, 0.0, 0.0), 1050 * 0.3 * 0.03 * 0.03)
    m.rigid((0.425, 0.0, 0.0), 1050 * 0.25 * 0.03 * 0.03)
    # two hinges (one damped); each cuff's 24 nodes pinned to a link
    m.parts(2 * 5 + 48 * 3, joint_point=2, joint_hinge_axis=2, hinge_damper=1, node_point=48)
    return m


def lattice_walker():
    m = Model()
    m.cubic_lattice((0.048, 0.012, 0.006), 0.003, rho=1070)
    m.flat_ground(friction=True)
    return m


def quadruped_walker():
    # data/quadruped.obj: legs as two 8 mm bars across x = 0..8 and 28..36 mm (y = -18..18 mm),
    # a 12 mm-wide body between them, 6 mm high; grid points on the surface count as inside
    eps = 1e-9

    def inside(x, y, z):
        bar = (-eps <= x <= 0.008 + eps or 0.028 - eps <= x <= 0.036 + eps) and abs(y) <= 0.018 + eps
        body = 0.008 - eps <= x <= 0.028 + eps and abs(y) <= 0.006 + eps
        return (bar or body) and -eps <= z <= 0.006 + eps
    m = Model()
    m.filled_lattice(inside, (0.0, -0.018, 0.0), (18, 18, 3), 0.002, rho=1070,
                     volume=(2 * 0.008 * 0.036 + 0.020 * 0.012) * 0.006)
    m.flat_ground(friction=True)
    return m


EXAMPLES = {
    "quadruped_walker": quadruped_walker,
    "rfem_pendulum": rfem_pendulum,
    "appendage_base": appendage_base,
    "rigid_gripper": rigid_gripper,
    "sleeve_pendulum": sleeve_pendulum,
    "cantilever_rod": cantilever_rod,
    "cantilever_shell_hinge": lambda: cantilever_shell("hinge"),
    "cantilever_shell_midedge": lambda: cantilever_shell("midedge"),
    "pneunet": lambda: straight_finger(planar=True),
    "finger_reach": lambda: straight_finger(planar=True),
    "earthworm": earthworm,
    "snake": snake,
    "snake_goal": snake,
    "manta_ray": manta_ray,
    "parachute": parachute,
    "rod_drop": rod_drop,
    "sheet_fold": sheet_fold,
    "gripper": gripper,
    "star_roller": star_roller,
    "jumper": jumper,
    "tripod": tripod,
    "balloon": balloon,
    "thermal_bimorph": thermal_bimorph,
    "lattice_walker": lattice_walker,
    "silicone_press": silicone_press,
    "plate_press": plate_press,
    "pneunet_solid": pneunet_solid,
    "knot": knot,
    "ply": ply,
    "finger_press": finger_press,
    "rope_coil": rope_coil,
    "arm_pd": arm_pd,
    "snake_steer": snake,
    "rod_fit": rod_fit,
    "snake_speed": snake,
    "star_roller_heating": star_roller,
}


# ---------------------------------------------------------------------------------------------
# the checks


class Report:
    def __init__(self):
        self.failures = 0

    def check(self, good, text):
        print(("ok - " if good else "not ok - ") + text)
        if not good:
            self.failures += 1


def dump(srdc, path):
    run = subprocess.run([srdc, "dump", "--json", path], capture_output=True, text=True)
    if run.returncode != 0:
        return None, (run.stderr.strip() or f"exit status {run.returncode}")
    try:
        return json.loads(run.stdout), None
    except json.JSONDecodeError as err:
        return None, f"dump --json is not JSON: {err}"


def check_example(report, srdc, path, expected):
    name = os.path.splitext(os.path.basename(path))[0]
    got, err = dump(srdc, path)
    report.check(got is not None, f"{name}: srdc dump --json succeeds" + ("" if got else f" ({err})"))
    if got is None:
        return
    for key in ("planar", "nodes", "edges", "rod_edges", "triangles", "dofs", "fixed_dofs", "sliding_nodes"):
        report.check(got.get(key) == expected[key], f"{name}: {key} = {expected[key]} (srdc: {got.get(key)})")
    for kind, count in expected["dofs_by_kind"].items():
        have = got.get("dofs_by_kind", {}).get(kind)
        report.check(have == count, f"{name}: {kind} DOFs = {count} (srdc: {have})")
    have = got.get("elements", {})
    for kind in sorted(set(expected["elements"]) | set(have)):
        want = expected["elements"].get(kind, 0)
        report.check(have.get(kind, 0) == want, f"{name}: {kind} elements = {want} (srdc: {have.get(kind, 0)})")
    mass, want = got.get("total_mass"), expected["total_mass"]
    good = isinstance(mass, (int, float)) and abs(mass - want) <= MASS_RTOL * want
    report.check(good, f"{name}: total mass = {want:.15g} kg (srdc: {mass}, relative tolerance {MASS_RTOL:g})")


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    srdc, examples_dir = argv[1], argv[2]
    report = Report()
    files = sorted(glob.glob(os.path.join(examples_dir, "*.srd")))
    names = [os.path.splitext(os.path.basename(f))[0] for f in files]
    for name in sorted(set(EXAMPLES) - set(names)):
        report.check(False, f"{name}: the example file exists in {examples_dir}")
    for path, name in zip(files, names):
        if name not in EXAMPLES:
            report.check(False, f"{name}: this script knows the example's expected model")
            continue
        check_example(report, srdc, path, EXAMPLES[name]().expected())
    print(f"# {report.failures} failed" if report.failures else "# all passed")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
