#!/usr/bin/env python3
"""check_solids.py SRDC DIR EXAMPLES — tetrahedral solids (issue 19 item 4) against closed forms.

1. Uniaxial stress of a neo-Hookean cube (uniaxial.srd): the consistent nodal forces of a nominal
   traction P on one face, symmetry planes on three others. Linear tetrahedra reproduce a
   homogeneous deformation exactly, so the stretch lambda and lateral stretch mu the solve finds
   must satisfy the closed form, P = mu_s (lambda - 1/lambda) + lam_s ln(J) / lambda and
   0 = mu_s (mu - 1/mu) + lam_s ln(J) / mu with J = lambda mu^2, to 1e-8 (Newton tolerance
   1e-13); every node on the affine field to 1e-10 of the size; the frame's Cauchy stress
   sigma_xx = P / mu^2 in every tetrahedron to 1e-8. The same for the StVK energy, P = F S with
   S = 2 mu E + lambda tr(E) I.
2. Patch test (patch.srd): every surface node of an irregular cylinder mesh moved by one linear
   field, the interior free: each interior node lands on the field to 1e-10 of the size, for the
   linear energy and the neo-Hookean one (a homogeneous finite deformation).
3. Cantilever under its weight (cantilever.srd, 100 x 10 x 10 mm, nu = 0, linear energy), n = 4
   and 8 cells across: tip deflection against Euler-Bernoulli q L^4 / (8 E I), first bending
   frequency against 1.8751^2 / (2 pi L^2) sqrt(E I / (rho A)). Linear tetrahedra lock in
   bending: the raw errors at n = 8 are -4.3 % and +1.3 %; they fall about as h^2 (order > 1.5
   between n = 4 and 8), and the Richardson extrapolation (order 2) from n = 4 and 8 is within
   1 % of beam theory for both (-0.18 % and -0.56 %). Timoshenko's shear term would add 0.8 % to
   the beam's deflection at L / h = 10; it is printed, not used.
4. Imported meshes: the same cube as Gmsh 2.2, Gmsh 4.1 and TetGen files weighs rho V to 1e-12,
   and a two-region Gmsh mesh takes its materials by `region`; the cube's closed surface as OBJ,
   binary STL and ASCII STL, filled by the tetgen command, weighs rho V to 1e-12.
5. A box with a pressurised cavity, its base clamped: the pressure is self-equilibrated, so the
   base's reaction is zero to 1e-9 of p times the cavity's face area, and the cavity's roof
   rises.
7. The examples: silicone_press (the bonded block pushes back harder than a free-sliding one,
   between 1 and 2.5 times the closed-form neo-Hookean force, and bulges at mid-height) and
   pneunet_solid (curls toward +z, more than linearly in the pressure; pneunet.srd's rod with
   the solid's mid-length curvature lifts its tip within 15 % of the solid's).
6. `build` and `sweep`: the cavity model's built simulator writes run's probes, byte for byte; a
   sweep over its pressure and modulus scales as p / E.

Prints one `ok - ...` / `not ok - ...` line per check; exits 1 on a failure.
"""
import csv
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from tap import check, finish, scratch  # noqa: E402
from vtk_frame import frame_arrays, frame_points  # noqa: E402

srdc, here = sys.argv[1], os.path.abspath(sys.argv[2])
examples = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else os.path.join(here, "..", "..", "..", "examples")


def srd(*args):
    return subprocess.run([srdc, *args], capture_output=True, text=True)


def variant(name, replace=None, append=""):
    """DIR/NAME with words replaced and lines appended, in a scratch directory."""
    text = open(os.path.join(here, name)).read()
    for key, value in (replace or {}).items():
        assert key in text, key
        text = text.replace(key, value)
    path = os.path.join(scratch("model_"), name)
    with open(path, "w") as f:
        f.write(text + append)
    return path


def run(path, *args):
    out = scratch()
    p = srd("run", path, "--out", out, "--quiet", *args)
    check(p.returncode == 0, "%s runs: %s" % (os.path.basename(path), p.stderr.strip()[:400]))
    return out if p.returncode == 0 else None


def last_vtu(out, name):
    files = sorted(f for f in os.listdir(out) if f.startswith(name) and f.endswith(".vtu"))
    return os.path.join(out, files[-1])


def array(path, name):
    return dict(frame_arrays(path))[name]


def tetrahedra(path):
    arrays = frame_arrays(path)
    conn = [int(v) for v in dict(arrays)["connectivity"]]
    types = [int(v) for v in dict(arrays)["types"]]
    offsets = [int(v) for v in dict(arrays)["offsets"]]
    tets, start = [], 0
    for t, end in zip(types, offsets):
        if t == 10:
            tets.append(conn[start:end])
        start = end
    return tets


# ---- 1. uniaxial stress ----

MU_S, LAM_S = 1e6 / (2 * 1.45), 1e6 * 0.45 / (1.45 * 0.1)  # Lame constants, E = 1 MPa, nu = 0.45
L, P = 10e-3, 0.3e6


def face_loads(ref_vtu):
    """Consistent nodal forces of the nominal traction P on the x = L face: a third of P times
    each boundary triangle's area on each of its corners."""
    pts = frame_points(ref_vtu)
    share = {}
    faces = {}
    for t in tetrahedra(ref_vtu):
        for k in range(4):
            f = tuple(sorted(t[:k] + t[k + 1:]))
            faces[f] = faces.get(f, 0) + 1
    for f, count in faces.items():
        if count == 1 and all(abs(pts[v][0] - L) < 1e-12 for v in f):
            a, b, c = (pts[v] for v in f)
            u = [b[i] - a[i] for i in range(3)]
            w = [c[i] - a[i] for i in range(3)]
            area = 0.5 * abs(u[1] * w[2] - u[2] * w[1])
            for v in f:
                share[v] = share.get(v, 0) + P * area / 3
    return "".join("load block.node(%d) = (%.17g, 0, 0) N;\n" % (v, fx) for v, fx in sorted(share.items()))


def nominal_stress(model, lam, mu):
    """P11 and P22 of the homogeneous stretch diag(lam, mu, mu) for each energy's closed form."""
    if model == "neo_hookean":
        J = lam * mu * mu
        return (MU_S * (lam - 1 / lam) + LAM_S * math.log(J) / lam, MU_S * (mu - 1 / mu) + LAM_S * math.log(J) / mu)
    e1, e2 = 0.5 * (lam * lam - 1), 0.5 * (mu * mu - 1)  # StVK: P = F S, S = 2 mu E + lambda tr(E) I
    tr = e1 + 2 * e2
    return lam * (2 * MU_S * e1 + LAM_S * tr), mu * (2 * MU_S * e2 + LAM_S * tr)


def uniaxial(model="neo_hookean"):
    ref = run(variant("uniaxial.srd", {"load_steps = 4; ": ""}))
    if not ref:
        return
    edit = {} if model == "neo_hookean" else {"material = rubber; }": "material = rubber; model = %s; }" % model}
    out = run(variant("uniaxial.srd", edit, append=face_loads(last_vtu(ref, "uniaxial"))))
    if not out:
        return
    frame = last_vtu(out, "uniaxial")
    x0 = frame_points(last_vtu(ref, "uniaxial"))
    x = frame_points(frame)
    lam = max(p[0] for p in x) / L
    mu = max(p[1] for p in x) / L
    affine = max(abs(p[0] - lam * q[0]) + abs(p[1] - mu * q[1]) + abs(p[2] - mu * q[2]) for p, q in zip(x, x0))
    check(affine < 1e-10 * L, "uniaxial %s: every node on the affine field (worst %.2e of the size)"
          % (model, affine / L))
    p11, p22 = nominal_stress(model, lam, mu)
    print("# uniaxial %s: lambda %.12f, mu %.12f, P11 %.10g Pa (applied %.10g), P22 %.3g Pa" % (model, lam, mu, p11, P, p22))
    check(abs(p11 - P) < 1e-8 * P, "uniaxial %s: nominal stress against the closed form (error %.2e, tol 1e-8)"
          % (model, abs(p11 - P) / P))
    check(abs(p22) < 1e-8 * P, "uniaxial %s: no lateral stress (|P22| / P = %.2e, tol 1e-8)" % (model, abs(p22) / P))
    stress = array(frame, "stress")
    sxx = [stress[9 * k] for k in range(len(stress) // 9)]
    worst = max(abs(s - P / (mu * mu)) for s in sxx) / (P / (mu * mu))
    check(worst < 1e-8, "uniaxial %s: the frame's Cauchy stress sigma_xx = P / mu^2 in every tetrahedron (worst %.2e)"
          % (model, worst))


# ---- 2. patch test ----

A = ((0.02, -0.01, 0.03), (0.015, 0.01, -0.02), (-0.01, 0.025, 0.005))


def patch(model):
    out = run(variant("patch.srd", {"model = linear": "model = " + model}))
    if not out:
        return
    frame = last_vtu(out, "patch")
    x = frame_points(frame)
    u = array(frame, "displacement")
    worst, interior = 0.0, 0
    for i, p in enumerate(x):
        q = [p[c] - u[3 * i + c] for c in range(3)]
        r = math.hypot(q[0], q[1])
        if r > 9.99e-3 or q[2] <= 1e-15 or q[2] >= 20e-3 - 1e-15:
            continue
        interior += 1
        for c in range(3):
            want = q[c] + sum(A[c][k] * q[k] for k in range(3))
            worst = max(worst, abs(p[c] - want))
    check(interior > 10, "patch (%s): %d interior nodes are free" % (model, interior))
    check(worst < 1e-10 * 20e-3, "patch (%s): interior nodes on the linear field (worst %.2e of the size, tol 1e-10)"
          % (model, worst / 20e-3))


# ---- 3. cantilever ----

def cantilever():
    E, rho, g, h, Lb = 1e6, 1000.0, 9.81, 10e-3, 100e-3
    I, Ar, G = h ** 4 / 12, h * h, E / 2
    q = rho * g * Ar
    deflection = q * Lb ** 4 / (8 * E * I)
    shear = q * Lb ** 2 / (2 * 5 / 6 * G * Ar)  # Timoshenko's shear term, for the record: 0.8 %
    freq = 1.8751 ** 2 / (2 * math.pi * Lb ** 2) * math.sqrt(E * I / (rho * Ar))
    tips, freqs = {}, {}
    for n in (4, 8):
        out = run(os.path.join(here, "cantilever.srd"), "-p", "n=%d" % n)
        if not out:
            return
        with open(os.path.join(out, "static_probes.csv")) as f:
            tips[n] = -float(list(csv.DictReader(f))[-1]["tip"])
        with open(os.path.join(out, "modes.csv")) as f:
            freqs[n] = float(list(csv.DictReader(f))[0]["frequency_hz"])
        print("# cantilever n = %d (with Timoshenko's shear term the beam's tip is %.6g m): tip %.6g m (beam %.6g, %+.2f %%), f1 %.6g Hz (beam %.6g, %+.2f %%)"
              % (n, deflection + shear, tips[n], deflection, 100 * (tips[n] / deflection - 1), freqs[n], freq, 100 * (freqs[n] / freq - 1)))
    for what, v, ref in (("tip deflection", tips, deflection), ("first frequency", freqs, freq)):
        order = math.log(abs(v[4] - ref) / abs(v[8] - ref), 2)
        rich = v[8] + (v[8] - v[4]) / 3
        check(order > 1.5, "cantilever %s: error falls as h^%.2f from n = 4 to 8" % (what, order))
        check(abs(rich / ref - 1) < 0.01, "cantilever %s: Richardson extrapolation %+.2f %% of beam theory (tol 1 %%)"
              % (what, 100 * (rich / ref - 1)))


# ---- 4. imports ----

def imports():
    for mesh in ('gmsh("cube_v2.msh", scale = 1 cm)', 'gmsh("cube_v41.msh", scale = 1 cm)',
                 'tetgen("cube", scale = 1 cm)'):
        text = ('material gel { E = 1 MPa; nu = 0.3; rho = 1000 kg/m^3; }\n'
                'solid c { mesh = %s; material = gel; }\n' % mesh.replace('("', '("%s/' % here))
        path = os.path.join(scratch("model_"), "import.srd")
        with open(path, "w") as f:
            f.write(text)
        p = srd("dump", "--json", path)
        check(p.returncode == 0, "import %s: %s" % (mesh, p.stderr.strip()[:300]))
        if p.returncode:
            continue
        m = json.loads(p.stdout)
        mass = sum(o["mass"] for o in m["objects"])
        check(abs(mass - 1e-3) < 1e-15, "import %s: mass rho V = %.15g kg" % (mesh, mass))
    # by region: the core tetrahedron (region 1, a third of the cube) of a denser material
    for mesh in ('gmsh("cube_v2.msh", scale = 1 cm)', 'gmsh("cube_v41.msh", scale = 1 cm)',
                 'tetgen("cube", scale = 1 cm)'):
        text = ('material gel { E = 1 MPa; nu = 0.3; rho = 1000 kg/m^3; }\n'
                'material core { E = 2 MPa; nu = 0.3; rho = 4000 kg/m^3; }\n'
                'solid c { mesh = %s; material = region == 1 ? core : gel; }\n' % mesh.replace('("', '("%s/' % here))
        path = os.path.join(scratch("model_"), "regions.srd")
        with open(path, "w") as f:
            f.write(text)
        p = srd("dump", "--json", path)
        if p.returncode:
            check(False, "regions %s: %s" % (mesh, p.stderr.strip()[:300]))
            continue
        mass = sum(o["mass"] for o in json.loads(p.stdout)["objects"])
        want = 4000 * 1e-6 / 3 + 1000 * 2e-6 / 3
        check(abs(mass - want) < 1e-15, "regions %s: mass %.15g kg (core 4000 kg/m^3 on a third)" % (mesh, mass))


def stl_cube(path, binary):
    """The unit cube as 12 facets (corners repeated per facet, as STL does)."""
    obj = [l.split() for l in open(os.path.join(here, "cube.obj"))]
    v = [tuple(float(c) for c in w[1:]) for w in obj if w and w[0] == "v"]
    tris = []
    for w in obj:
        if w and w[0] == "f":
            q = [int(i) - 1 for i in w[1:]]
            tris += [(q[0], q[1], q[2]), (q[0], q[2], q[3])]
    if binary:
        import struct
        with open(path, "wb") as f:
            f.write(b"\0" * 80 + struct.pack("<I", len(tris)))
            for t in tris:
                f.write(struct.pack("<12fH", 0, 0, 0, *(c for i in t for c in v[i]), 0))
        return
    with open(path, "w") as f:
        f.write("solid cube\n")
        for t in tris:
            f.write(" facet normal 0 0 0\n  outer loop\n")
            f.write("".join("   vertex %g %g %g\n" % v[i] for i in t))
            f.write("  endloop\n endfacet\n")
        f.write("endsolid cube\n")


def filled():
    """A closed unit cube (OBJ, binary and ASCII STL) filled by tetgen: the boundary is kept, so
    the mass is rho V exactly, with interior nodes (a 3 mm volume bound in a 10 mm cube)."""
    work = scratch("surface_")
    stl_cube(os.path.join(work, "cube_bin.stl"), True)
    stl_cube(os.path.join(work, "cube_txt.stl"), False)
    for surface in (os.path.join(here, "cube.obj"), os.path.join(work, "cube_bin.stl"), os.path.join(work, "cube_txt.stl")):
        path = os.path.join(scratch("model_"), "filled.srd")
        with open(path, "w") as f:
            f.write('material gel { E = 1 MPa; nu = 0.3; rho = 1000 kg/m^3; }\n'
                    'solid c { mesh = filled("%s", scale = 1 cm); spacing = 3 mm; material = gel; }\n' % surface)
        p = srd("dump", "--json", path)
        name = os.path.basename(surface)
        check(p.returncode == 0, "filled %s: %s" % (name, p.stderr.strip()[:300]))
        if p.returncode:
            continue
        m = json.loads(p.stdout)
        mass = sum(o["mass"] for o in m["objects"])
        check(abs(mass - 1e-3) < 1e-15 and m["nodes"] > 27, "filled %s: mass rho V = %.15g kg, %d nodes"
              % (name, mass, m["nodes"]))


# ---- 5. cavity ----

def cavity():
    out = run(os.path.join(here, "cavity.srd"))
    if not out:
        return
    with open(os.path.join(out, "static_probes.csv")) as f:
        row = list(csv.DictReader(f))[-1]
    force = math.sqrt(sum(float(row["R.f" + c]) ** 2 for c in "xyz"))
    pa = 10e3 * 20e-3 * 20e-3
    check(force < 1e-9 * pa, "cavity: the base carries no net force (|R| = %.2e N, p A = %g N)" % (force, pa))
    png = os.path.join(out, "cavity.png")
    r = srd("render", out, "-o", png, "--color", "von_mises")
    check(r.returncode == 0 and os.path.getsize(png) > 1000, "cavity: srdc render draws the solid's surface (%s)"
          % r.stderr.strip()[:200])
    frame = last_vtu(out, "cavity")
    x, u = frame_points(frame), array(frame, "displacement")
    top = [u[3 * i + 2] for i, p in enumerate(x) if abs(p[0] - u[3 * i] - 15e-3) < 1e-9
           and abs(p[1] - u[3 * i + 1] - 15e-3) < 1e-9 and abs(p[2] - u[3 * i + 2] - 20e-3) < 1e-9]
    check(len(top) == 1 and top[0] > 1e-5, "cavity: the top's centre rises (%s m)" % top)


# ---- 6. build and sweep ----

def built():
    """The cavity model built into a simulator gives run's probes; a sweep of its pressure and
    modulus scales as the neo-Hookean energy does (p / E alone sets the shape)."""
    out = run(os.path.join(here, "cavity.srd"))
    work = scratch("built_")
    sim = os.path.join(work, "cavity")
    p = srd("build", os.path.join(here, "cavity.srd"), "-o", sim)
    check(p.returncode == 0, "cavity builds: %s" % p.stderr.strip()[:300])
    if p.returncode or not out:
        return
    q = subprocess.run([sim, "--out", os.path.join(work, "out"), "--quiet"], capture_output=True, text=True)
    check(q.returncode == 0, "the built cavity simulator runs: %s" % q.stderr.strip()[:300])
    same = open(os.path.join(out, "static_probes.csv")).read() == open(os.path.join(work, "out", "static_probes.csv")).read()
    check(same, "the built simulator's probes equal run's")
    model = variant("cavity.srd", {"pressure box1.cavity = 10 kPa;": "param p = 10 kPa;\npressure box1.cavity = p;",
                                   "material silicone { E = 1 MPa;": "param E = 1 MPa;\nmaterial silicone { E = E;",
                                   "output vtk \"cavity\";": "probe top = box1.node(220).z;"})
    sweep = os.path.join(scratch("sweep_"), "out")
    p = srd("sweep", model, "-p", "p=5kPa,10kPa", "-p", "E=1MPa,2MPa", "--out", sweep, "--quiet")
    check(p.returncode == 0, "a sweep of the cavity's pressure and modulus runs: %s" % p.stderr.strip()[:300])
    if p.returncode:
        return
    with open(os.path.join(sweep, "summary.csv")) as f:
        rows = {(r["p_Pa"], r["E_Pa"]): float(r["top"]) for r in csv.DictReader(f)}
    a, b = rows[("5000", "1000000")], rows[("10000", "2000000")]
    check(abs(a - b) < 1e-12 and rows[("10000", "1000000")] > a,
          "sweep: p / E alone sets the shape (%.12g, %.12g m), more pressure lifts the top more" % (a, b))


# ---- 7. examples ----

def silicone_press():
    out = run(os.path.join(examples, "silicone_press.srd"))
    if not out:
        return
    with open(os.path.join(out, "probes.csv")) as f:
        last = list(csv.DictReader(f))[-1]
    force = -float(last["plate.fz"])
    # free-sliding faces: uniaxial neo-Hookean stress at stretch 0.8, lateral stretch from P22 = 0
    E, nu, stretch = 1e5, 0.45, 0.8
    mu_s, lam_s = E / (2 * (1 + nu)), E * nu / ((1 + nu) * (1 - 2 * nu))
    m = 1.0
    for _ in range(60):
        f = mu_s * (m - 1 / m) + lam_s * math.log(stretch * m * m) / m
        df = mu_s * (1 + 1 / m ** 2) + lam_s * (2 - math.log(stretch * m * m)) / m ** 2
        m -= f / df
    free = -(mu_s * (stretch - 1 / stretch) + lam_s * math.log(stretch * m * m) / stretch) * 4e-4
    print("# silicone_press: plate force %.4g N, free-sliding block %.4g N (ratio %.3f)" % (force, free, force / free))
    check(1.0 < force / free < 2.5, "silicone_press: the bonded block pushes back harder than a free-sliding one "
          "(%.3g x)" % (force / free))
    side = float(last["side"])
    check(side > 20e-3 + 0.5e-3, "silicone_press: the side bulges out at mid-height (x = %.4g mm)" % (1e3 * side))


def base_curvature(frame, nx, ny):
    """Curvature in the x-z plane of the circle through the base line's nodes at 30, 50, 70 % of
    the length (the box mesh's nodes at y = 0, z = 0)."""
    x = frame_points(frame)
    a, b, c = (x[round(nx * f)] for f in (0.3, 0.5, 0.7))
    (ax, az), (bx, bz), (cx, cz) = (a[0], a[2]), (b[0], b[2]), (c[0], c[2])
    d = 2 * (ax * (bz - cz) + bx * (cz - az) + cx * (az - bz))
    ux = ((ax * ax + az * az) * (bz - cz) + (bx * bx + bz * bz) * (cz - az) + (cx * cx + cz * cz) * (az - bz)) / d
    uz = ((ax * ax + az * az) * (cx - bx) + (bx * bx + bz * bz) * (ax - cx) + (cx * cx + cz * cz) * (bx - ax)) / d
    return 1 / math.hypot(ax - ux, az - uz)


def pneunet_solid():
    tips = {}
    for p in ("5kPa", "10kPa"):
        out = run(os.path.join(examples, "pneunet_solid.srd"), "-p", "p=" + p)
        if not out:
            return
        with open(os.path.join(out, "static_probes.csv")) as f:
            tips[p] = float(list(csv.DictReader(f))[-1]["tip_z"])
        if p == "5kPa":
            kappa = base_curvature(last_vtu(out, "pneunet_solid"), 50, 5)
    check(tips["5kPa"] > 1e-3, "pneunet_solid: the finger curls toward +z (tip %.3g mm)" % (1e3 * tips["5kPa"]))
    check(tips["10kPa"] > 2 * tips["5kPa"], "pneunet_solid: twice the pressure lifts the tip more than twice "
          "(%.3g mm)" % (1e3 * tips["10kPa"]))
    print("# pneunet_solid: curvature of the base line along the middle at 5 kPa: %.4g /m" % kappa)
    out = run(os.path.join(examples, "pneunet.srd"), "-p", "kappa0=%.10g/m" % kappa, "-p", "tip_force=0")
    if not out:
        return
    with open(os.path.join(out, "static_probes.csv")) as f:
        rod = float(list(csv.DictReader(f))[-1]["tip_z"])
    check(abs(rod / tips["5kPa"] - 1) < 0.15, "pneunet_solid: pneunet.srd's rod with kappa0 = %.3g /m lifts its tip "
          "to %.3g mm, the solid's %.3g mm (%+.1f %%, tol 15 %%)" % (kappa, 1e3 * rod, 1e3 * tips["5kPa"],
                                                                   100 * (rod / tips["5kPa"] - 1)))


finish_after = [uniaxial, lambda: uniaxial("stvk"), lambda: patch("linear"), lambda: patch("neo_hookean"), cantilever, imports, filled, cavity, built, silicone_press,
                pneunet_solid]
for step in finish_after:
    step()
finish()
