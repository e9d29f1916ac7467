/* kernel_models.h — the model of every element kind that the kernel tests check against
 * finite differences (test_kernels: residuals and Jacobians; test_tangents: derivatives along
 * the elements' data). */
#ifndef SRD_TEST_KERNEL_MODELS_H
#define SRD_TEST_KERNEL_MODELS_H
#include <stdlib.h>
#include <string.h>
#include "diag.h"
#include "elab.h"
#include "jit.h"
#include "kernels.h"
#include "parse.h"

/* The FD list. Every kind of element the kernel compiler must handle, in one model with no
 * fixed DOFs: each element set of this model is checked against central differences, and
 * every `energy` and `force` of stdlib/ must be among them (check_stdlib_coverage fails the
 * suite otherwise). To check a new stdlib element, add one `apply` line for it below, on nodes
 * where it acts (a contact within delta of its surface); elements that elaboration creates
 * (stretch, bend_twist, hinge, midedge, ground contact) come with the objects and blocks here.
 * Kinds with a planar variant (those reading an edge's twist) are checked in planar_text too. */
static const char *model_text __attribute__((unused)) =
    "use std.springs;\n"
    "use std.shells;\n"
    "use std.contact;\n"
    "use std.fluids;\n"
    "use std.loads;\n"
    "use std.shells;\n"
    "param stiff = 3 N/m;\n"
    "param tilt = 5 deg;\n"
    "let w = 2 Hz;\n"
    "material m { E = 2 MPa; rho = 1200 kg/m^3; nu = 0.4; }\n"
    "rod arm { path = polyline((0, 0, 0) m, (0.05, 0.01, 0) m, (0.1, 0, 0.02) m); nodes = 7; radius = 1 mm; material = m; }\n"
    "shell plate { mesh = rectangle(3 cm, 2 cm, 1 cm, pattern = random, seed = 3, origin = (0, 0.1, 0) m);\n"
    "              thickness = 1 mm; material = m; }\n"
    "shell sheet { mesh = rectangle(3 cm, 2 cm, 1 cm, pattern = random, seed = 5, origin = (0, 0.2, 0) m);\n"
    "              thickness = 1 mm; material = m; bending = midedge; }\n"
    "shell ball { mesh = sphere(10 cm, 6 cm, center = (0, 0.5, 0) m); thickness = 1 mm; material = m; }\n"
    /* pressure: -p V on the closed sphere, the follower force (whose p a schedule drives) on the
     * open plate, and the follower force applied by hand over a selection of triangles */
    /* std.solids: one solid per energy (a cube of six tetrahedra each, +-2 mm perturbations of
     * 3 cm cells invert none), and a box with a cavity whose pressure is -p V on its walls */
    "solid nh { mesh = box((3, 3, 3) cm, origin = (0, 0.8, 0) m); spacing = 3 cm; material = m; }\n"
    "solid sv { mesh = box((3, 3, 3) cm, origin = (0.1, 0.8, 0) m); spacing = 3 cm; material = m; model = stvk; }\n"
    "solid li { mesh = box((3, 3, 3) cm, origin = (0.2, 0.8, 0) m); spacing = 3 cm; material = m; model = linear; }\n"
    "pressure ball = 2 kPa;\n"
    "pressure plate = 1 kPa * (1 + 0.5 * sin(2 * pi * w * t));\n"
    "apply pressure_force(sheet.triangles where x < 1 cm; p = 500 Pa);\n"
    "fn soft(u) = u / (1 + abs(u));\n"
    "energy piecewise(node a, node b; k, l0) {\n"
    "  let d = norm(b.x - a.x);\n"
    "  let stretch = max(d - l0, 0 m);\n"
    "  let squeeze = min(d - l0, 0 m);\n"
    "  return 0.5 * k * stretch^2 + (d < l0 ? 2 : 1) * k * squeeze^2 + k * l0 * abs(a.x.z - b.x.z);\n"
    "}\n"
    "energy trig(node a, node b, node c; k) {\n"
    "  let u = a.x - b.x;\n"
    "  let v = c.x - b.x;\n"
    "  let th = atan2(norm(cross(u, v)), dot(u, v));\n"
    "  return k * (sin(th)^2 + cos(2 * th) * exp(-norm(u) / 1 cm) + tanh(soft(norm(v) / 1 cm)) + sqrt(dot(u, u)) / 1 m);\n"
    "}\n"
    "energy twister(node a, edge e, node b; k) {\n"
    "  return 0.5 * k * (e.theta - 0.1)^2 * (1 + dot(b.x - a.x, b.x - a.x) / (1 cm)^2) + 0.5 * stiff * norm(b.x - a.x)^2;\n"
    "}\n"
    "force drag_like(node a, node b; c) = c * cross(b.x - a.x, (0, 0, 1)) / 1 m * (1 + sin(2*pi*w*t));\n"
    "force pull(node a; c) = c * (1, 2, 3) * norm(a.x - prev(a.x)) / 1 mm;\n"
    "apply spring(arm.node(1), plate.node(4); k = stiff, l0 = 5 cm);\n"
    "apply spring(arm.node(2), plate.node(5); k = 7 N/m, l0 = 4 cm);\n"
    "apply angle_spring(arm.node(2), arm.node(3), arm.node(4); k = 1e-3 N*m, theta0 = 0.3);\n"
    "apply lattice_spring(arm.node(3), plate.node(6); k = 40 N/m, rest_length = 3 cm, rest_factor = 1.1);\n"
    "apply piecewise(arm.node(0), arm.node(5); k = 20 N/m, l0 = 6 cm);\n"
    "apply piecewise(plate.node(0), plate.node(7); k = 10 N/m, l0 = 2 cm);\n"
    "apply trig(plate.node(1), plate.node(2), plate.node(6); k = 1e-4 N*m);\n"
    "apply hinge_wall(plate.node(0), plate.node(1), plate.node(4); kb = 1e-4 N*m, nx = 0, ny = 0.6, nz = 0.8);\n"
    "apply twister(arm.node(2), arm.edge(2), arm.node(3); k = 1e-4 N*m);\n"
    "apply ground_contact(arm.node(4); kc = 100 N/m, delta = 5 mm, px = 0 m, py = 0 m, pz = 0.018 m, nx = 0, ny = 0, nz = 1);\n"
    /* node 4 at (66.7, 6.7, 6.7) mm lies 0.5 mm above this tilted plane: within delta (5 mm) for
     * every +-2 mm perturbation; velocities of +-2 m/s per component span the stick-slip transition */
    "apply ground_friction(arm.node(4); kc = 100 N/m, delta = 5 mm, mu = 0.4, slip_velocity = 10 m/s,\n"
    "                      px = 0 m, py = 0 m, pz = 11 mm, nx = 0, ny = 0.6, nz = 0.8);\n"
    "apply drag_like(arm.node(5), arm.node(6); c = 0.1 N);\n"
    "apply pull(plate.node(3); c = 1e-3 N);\n"
    /* an uneven ground (surface_contact and surface_friction on every node): a tilted wave
     * that passes within delta of the rod's nodes */
    "ground { height = 3 mm * sin(2 * pi * x / 5 cm) * cos(2 * pi * y / 7 cm) + x * tan(tilt) - 2 mm;\n"
    "         stiffness = 100 N/m; delta = 5 mm; friction = 0.4; slip_velocity = 10 m/s; }\n"
    "apply viscous_drag(arm.node(3); c = 1e-3 N*s/m);\n"
    "apply rft_drag(arm.node(2), arm.node(3); ct = 0.01 Pa*s, cn = 0.1 Pa*s, half_length = 8 mm);\n"
    "apply aero_drag(plate.node(1), plate.node(2), plate.node(6); k = 1e-4 kg/m);\n"
    "apply tangent_follower(arm.end, arm.node(5); f = 0.1 N);\n"
    "apply normal_follower(arm.end, arm.node(5); f = 0.1 N, ax = 0.6, ay = 0, az = -0.8);\n"
    /* node 5 at (83.3, 3.3, 3.3) mm sits 0.5 mm inside this sphere's surface */
    "apply sphere_contact(arm.node(5); kc = 100 N/m, delta = 5 mm, cx = 83.3 mm, cy = 3.3 mm, cz = 23.8 mm,\n"
    "                     radius = 21 mm);\n"
    "apply sphere_friction(arm.node(5); kc = 100 N/m, delta = 5 mm, mu = 0.4, slip_velocity = 10 m/s,\n"
    "                      cx = 83.3 mm, cy = 3.3 mm, cz = 23.8 mm, radius = 21 mm);\n"
    /* node 1 at (16.7, 3.3, 0) mm lies 0.87 mm off a box corner (every +-2 mm perturbation
     * mixes the corner, edge, face and inside regions); node 2 at (33.3, 6.7, 0) mm 0.5 mm
     * inside the top face of another */
    "apply box_contact(arm.node(1); kc = 100 N/m, delta = 5 mm, cx = 22.17 mm, cy = 8.83 mm, cz = 5.5 mm,\n"
    "                  hx = 5 mm, hy = 5 mm, hz = 5 mm);\n"
    "apply box_contact(arm.node(2); kc = 100 N/m, delta = 5 mm, cx = 33.33 mm, cy = 6.67 mm, cz = -4.5 mm,\n"
    "                  hx = 10 mm, hy = 10 mm, hz = 5 mm);\n"
    "apply box_friction(arm.node(1); kc = 100 N/m, delta = 5 mm, mu = 0.4, slip_velocity = 10 m/s,\n"
    "                   cx = 22.17 mm, cy = 8.83 mm, cz = 5.5 mm, hx = 5 mm, hy = 5 mm, hz = 5 mm);\n"
    "apply box_friction(arm.node(2); kc = 100 N/m, delta = 5 mm, mu = 0.4, slip_velocity = 10 m/s,\n"
    "                   cx = 33.33 mm, cy = 6.67 mm, cz = -4.5 mm, hx = 10 mm, hy = 10 mm, hz = 5 mm);\n"
    /* node 3 at (50, 10, 0) mm lies 0.3 mm beyond the cap of a tilted cylinder, 0.2 mm inside
     * its rim; node 6 at (100, 0, 20) mm 0.5 mm inside the side of a long one */
    "apply cylinder_contact(arm.node(3); kc = 100 N/m, delta = 5 mm, cx = 42.2 mm, cy = 7.42 mm, cz = -3.44 mm,\n"
    "                       ux = 0, uy = 0.6, uz = 0.8, radius = 8 mm, half_length = 4 mm);\n"
    "apply cylinder_contact(arm.node(6); kc = 100 N/m, delta = 5 mm, cx = 100 mm, cy = 0 mm, cz = 10.5 mm,\n"
    "                       ux = 1, uy = 0, uz = 0, radius = 10 mm, half_length = 1 m);\n"
    "apply cylinder_friction(arm.node(3); kc = 100 N/m, delta = 5 mm, mu = 0.4, slip_velocity = 10 m/s,\n"
    "                        cx = 42.2 mm, cy = 7.42 mm, cz = -3.44 mm, ux = 0, uy = 0.6, uz = 0.8, radius = 8 mm,\n"
    "                        half_length = 4 mm);\n"
    "apply cylinder_friction(arm.node(6); kc = 100 N/m, delta = 5 mm, mu = 0.4, slip_velocity = 10 m/s,\n"
    "                        cx = 100 mm, cy = 0 mm, cz = 10.5 mm, ux = 1, uy = 0, uz = 0, radius = 10 mm,\n"
    "                        half_length = 1 m);\n"
    /* moving obstacles: the same places, each with a step-start pose that differs (moved, turned,
     * a drum's spin), so that friction's relative velocity has every term */
    "apply moving_sphere_contact(arm.node(5); kc = 100 N/m, delta = 5 mm, cx = 83.3 mm, cy = 3.3 mm, cz = 23.8 mm,\n"
    "                            radius = 21 mm);\n"
    "apply moving_sphere_friction(arm.node(5); kc = 100 N/m, delta = 5 mm, mu = 0.4, slip_velocity = 10 m/s,\n"
    "                             cx = 83.3 mm, cy = 3.3 mm, cz = 23.8 mm, cx0 = 84.3 mm, cy0 = 1.3 mm, cz0 = 24.3 mm,\n"
    "                             radius = 21 mm);\n"
    "apply moving_box_contact(arm.node(2); kc = 100 N/m, delta = 5 mm, cx = 33.33 mm, cy = 6.67 mm, cz = -4.5 mm,\n"
    "                         hx = 10 mm, hy = 10 mm, hz = 5 mm, kx = 0, ky = 0, kz = 1, angle = 0.3);\n"
    "apply moving_box_friction(arm.node(2); kc = 100 N/m, delta = 5 mm, mu = 0.4, slip_velocity = 10 m/s,\n"
    "                          cx = 33.33 mm, cy = 6.67 mm, cz = -4.5 mm, cx0 = 32.33 mm, cy0 = 6.17 mm, cz0 = -4.6 mm,\n"
    "                          hx = 10 mm, hy = 10 mm, hz = 5 mm, kx = 0, ky = 0, kz = 1, angle = 0.3, angle0 = 0.25);\n"
    "apply moving_cylinder_contact(arm.node(6); kc = 100 N/m, delta = 5 mm, cx = 100 mm, cy = 0 mm, cz = 10.5 mm,\n"
    "                              ux = 1, uy = 0, uz = 0, radius = 10 mm, half_length = 1 m);\n"
    "apply moving_cylinder_friction(arm.node(6); kc = 100 N/m, delta = 5 mm, mu = 0.4, slip_velocity = 10 m/s,\n"
    "                               cx = 100 mm, cy = 0 mm, cz = 10.5 mm, cx0 = 99 mm, cy0 = 0.5 mm, cz0 = 10.4 mm,\n"
    "                               ux = 1, uy = 0, uz = 0, ux0 = 0.98, uy0 = 0.199, uz0 = 0, radius = 10 mm,\n"
    "                               half_length = 1 m, spin = 2 /s);\n"
    /* node 3 at (50, 10, 0) mm lies 0.49 mm on the inner side of a tilted plane */
    "apply plane_contact(arm.node(3); kc = 100 N/m, delta = 5 mm, px = 50 mm, py = 10 mm, pz = 0.5 mm, nx = 0.1,\n"
    "                    ny = 0.2, nz = 1);\n"
    "apply plane_friction(arm.node(3); kc = 100 N/m, delta = 5 mm, mu = 0.4, slip_velocity = 10 m/s, px = 50 mm,\n"
    "                     py = 10 mm, pz = 0.5 mm, px0 = 49 mm, py0 = 10 mm, pz0 = 0.5 mm, nx = 0.1, ny = 0.2, nz = 1,\n"
    "                     nx0 = 0, ny0 = 0.25, nz0 = 1);\n";

/* The FD list parsed and elaborated in arena (NULL after printing its diagnostics). */
static srd_model *fd_list_model(Arena *arena, Program *prog) __attribute__((unused));

static srd_model *fd_list_model(Arena *arena, Program *prog)
{
    bool parsed = parse_program_text(arena, "kernels.srd", model_text, strlen(model_text), parse_stdlib_dir(), prog);
    srd_model *m = parsed ? elab_program(prog, arena, "kernels.srd") : NULL;
    diag_flush(stdout);
    return m;
}

/* Every data column of every set stays a kernel input, as the columns a param moves do. */
static void keep_every_column(srd_model *m) __attribute__((unused));

static void keep_every_column(srd_model *m)
{
    for (int s = 0; s < m->n_sets; s++) {
        free(m->sets[s].param_column);
        m->sets[s].param_column = malloc((size_t)m->sets[s].n_data + 1);
        memset(m->sets[s].param_column, 1, (size_t)m->sets[s].n_data + 1);
    }
}

/* The FD list and its kernels, as the tests over every element kind take them. */
typedef struct FdList {
    Arena        arena;
    Program      prog;
    srd_model   *m;         /* NULL when the list did not elaborate */
    ModelKernels mk;
    bool         kernels;   /* mk is built (lowered, and compiled when asked) */
    char         err[512];  /* why it is not */
} FdList;

static bool fd_list_open(FdList *l, bool every_column, bool compiled) __attribute__((unused));
static void fd_list_close(FdList *l) __attribute__((unused));

/* Elaborates the list (every data column kept as an input when every_column) and lowers its
 * kernels (and compiles them when compiled); false when the kernels are not built (l->m says
 * whether the model is). */
static bool fd_list_open(FdList *l, bool every_column, bool compiled)
{
    memset(l, 0, sizeof *l);
    arena_init(&l->arena);
    l->m = fd_list_model(&l->arena, &l->prog);
    if (!l->m)
        return false;
    if (every_column)
        keep_every_column(l->m);
    l->kernels = kernels_lower(&l->mk, &l->prog, l->m, true, l->err, sizeof l->err) &&
                 (!compiled || kernels_jit(&l->mk, JIT_CHUNK_OPS, l->err, sizeof l->err));
    return l->kernels;
}

static void fd_list_close(FdList *l)
{
    if (l->kernels)
        kernels_free(&l->mk);
    srd_model_free(l->m);
    arena_free(&l->arena);
    diag_reset();
}

#endif
