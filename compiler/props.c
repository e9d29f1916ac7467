/* props.c — the table of block properties: one line per property drives checking, hints and docs. */
#include "props.h"
#include <string.h>

#define NUM(b, name, n, l, m, t, req, rt, doc) { b, name, P_NUM, n, l, m, t, 0, req, rt, NULL, doc, false, false }
#define TEMP(b, name, req, rt, doc) { b, name, P_NUM, 1, 0, 0, 0, 1, req, rt, NULL, doc, false, false }
#define WORD(b, name, words, doc) { b, name, P_WORD, 1, 0, 0, 0, 0, false, false, words, doc, false, false }
#define OTHER(b, name, shape, req, doc) { b, name, shape, 1, 0, 0, 0, 0, req, false, NULL, doc, false, false }
/* Properties of the discretisation: a param may set them (a mesh-convergence sweep). */
#define DISCRETE(b, name, shape, l, req, words, doc) { b, name, shape, 1, l, 0, 0, 0, req, false, words, doc, true, false }
/* A number that may change with time t (a moving obstacle's pose): kept as a run-time expression. */
#define TIMED(b, name, n, l, m, t, req, doc) { b, name, P_NUM, n, l, m, t, 0, req, true, NULL, doc, false, true }

static const PropSpec props[] = {
    NUM(BK_MATERIAL, "E", 1, -1, 1, -2, true, true, "Young's modulus"),
    NUM(BK_MATERIAL, "nu", 1, 0, 0, 0, false, true, "Poisson's ratio (default 0.5)"),
    NUM(BK_MATERIAL, "rho", 1, -3, 1, 0, true, true, "density"),
    NUM(BK_MATERIAL, "G", 1, -1, 1, -2, false, true, "shear modulus (default E / (2 (1 + nu)))"),

    OTHER(BK_ROD, "path", P_PATH, true, "centreline: line, polyline, arc, circle or helix"),
    DISCRETE(BK_ROD, "nodes", P_INT, 0, false, NULL, "number of nodes (or give spacing)"),
    DISCRETE(BK_ROD, "spacing", P_NUM, 1, false, NULL, "target edge length (or give nodes)"),
    OTHER(BK_ROD, "material", P_MATERIAL, true, "material name"),
    NUM(BK_ROD, "radius", 1, 1, 0, 0, false, true, "radius of a circular cross-section"),
    OTHER(BK_ROD, "section", P_SECTION, false, "cross-section: circular(r), elliptic(a, b), rectangular(w, h)"),
    NUM(BK_ROD, "curvature", 2, -1, 0, 0, false, true, "natural curvature (kappa1, kappa2)"),
    NUM(BK_ROD, "twist", 1, -1, 0, 0, false, true, "natural twist per length"),
    NUM(BK_ROD, "EA", 1, 1, 1, -2, false, true, "stretching stiffness (default E A)"),
    NUM(BK_ROD, "EI", 1, 3, 1, -2, false, true, "bending stiffness (default E I)"),
    NUM(BK_ROD, "GJ", 1, 3, 1, -2, false, true, "twisting stiffness (default G J)"),

    DISCRETE(BK_SHELL, "mesh", P_MESH, 0, true, NULL, "rectangle, hexagon, disc, sphere, obj or dismech"),
    NUM(BK_SHELL, "thickness", 1, 1, 0, 0, true, true, "shell thickness"),
    OTHER(BK_SHELL, "material", P_MATERIAL, true, "material name"),
    DISCRETE(BK_SHELL, "bending", P_WORD, 0, false, "hinge midedge", "bending model (default hinge)"),
    WORD(BK_SHELL, "stretching", "lattice dismech_midedge",
         "edge stretching stiffness: lattice, (sqrt(3)/2) E h l (default), or dismech_midedge, 2 E h l / (1 - nu^2)"),
    NUM(BK_SHELL, "angle", 1, 0, 0, 0, false, true, "natural hinge angle (default 0: flat)"),

    NUM(BK_BODY, "position", 3, 1, 0, 0, true, false, "position of the point mass, or a rigid body's centre of mass"),
    NUM(BK_BODY, "mass", 1, 0, 1, 0, false, true, "mass (a rigid body: or give density and shape)"),
    WORD(BK_BODY, "shape", "box sphere cylinder capsule mesh", "rigid body: box, sphere, cylinder, capsule (axis: the body's z) or mesh"),
    OTHER(BK_BODY, "mesh", P_MESH, false, "shape = mesh: a closed triangle mesh, obj(\"file.obj\"), placed at `position`"),
    NUM(BK_BODY, "size", 3, 1, 0, 0, false, false, "box: edge lengths along the body's x, y, z"),
    NUM(BK_BODY, "radius", 1, 1, 0, 0, false, false, "sphere, cylinder, capsule: radius"),
    NUM(BK_BODY, "length", 1, 1, 0, 0, false, false, "cylinder: length; capsule: length of its cylindrical part"),
    NUM(BK_BODY, "density", 1, -3, 1, 0, false, false, "density: the mass and inertia follow from the shape"),
    NUM(BK_BODY, "inertia", 3, 2, 1, 0, false, false, "principal moments of inertia about the body's x, y, z (a rigid body)"),
    NUM(BK_BODY, "axis", 3, 0, 0, 0, false, false, "the body's z axis in the world (default (0, 0, 1))"),
    NUM(BK_BODY, "x_axis", 3, 0, 0, 0, false, false, "the body's x axis in the world (default: world x, or y, made normal to z)"),
    NUM(BK_BODY, "velocity", 3, 1, 0, -1, false, false, "initial velocity of the centre of mass"),
    NUM(BK_BODY, "angular_velocity", 3, 0, 0, -1, false, false, "initial angular velocity (world axes)"),

    OTHER(BK_RFEM, "path", P_PATH, true, "the rod's axis: a line"),
    DISCRETE(BK_RFEM, "elements", P_INT, 0, true, NULL, "spring-damping elements n (n + 1 rigid elements, the end ones half as long)"),
    NUM(BK_RFEM, "radius", 1, 1, 0, 0, true, false, "radius of the circular section"),
    OTHER(BK_RFEM, "material", P_MATERIAL, true, "material name (E, nu, rho)"),
    NUM(BK_RFEM, "damping", 1, 0, 0, 1, false, false, "damping of each element as a time: d = damping * k (default 0)"),

    WORD(BK_JOINT, "type", "fixed revolute prismatic spherical universal", "fixed, revolute, prismatic, spherical or universal"),
    OTHER(BK_JOINT, "a", P_REF, true, "first end: a rigid body, a node (finger.start) or world"),
    OTHER(BK_JOINT, "b", P_REF, true, "second end: a rigid body, a node or world"),
    NUM(BK_JOINT, "at", 3, 1, 0, 0, false, false, "the joint's point at the reference (default: b's position, or a's)"),
    NUM(BK_JOINT, "axis", 3, 0, 0, 0, false, false, "hinge or slider axis; universal: its axis on a (default (0, 0, 1))"),
    NUM(BK_JOINT, "axis2", 3, 0, 0, 0, false, false, "universal: its axis on b, normal to axis"),
    NUM(BK_JOINT, "stiffness", 1, 2, 1, -2, false, true, "revolute: rotational spring, N*m per radian"),
    NUM(BK_JOINT, "damping", 1, 2, 1, -1, false, true, "revolute: rotational damper, N*m*s per radian"),
    NUM(BK_JOINT, "angle0", 1, 0, 0, 0, false, true, "revolute: the spring's natural angle (default 0)"),
    NUM(BK_JOINT, "linear_stiffness", 1, 0, 1, -2, false, true, "prismatic: spring along the axis, N/m"),
    NUM(BK_JOINT, "linear_damping", 1, 0, 1, -1, false, true, "prismatic: damper along the axis, N*s/m"),
    NUM(BK_JOINT, "offset0", 1, 1, 0, 0, false, true, "prismatic: the spring's natural offset (default 0)"),
    NUM(BK_JOINT, "limits", 2, 0, 0, 0, false, true, "revolute: lowest and highest angle"),
    NUM(BK_JOINT, "limit_stiffness", 1, 2, 1, -2, false, true, "revolute: stiffness of the limits, N*m per radian"),
    NUM(BK_JOINT, "limit_width", 1, 0, 0, 0, false, true, "revolute: the limits' smoothing (default a hundredth of their range)"),
    NUM(BK_JOINT, "linear_limits", 2, 1, 0, 0, false, true, "prismatic: lowest and highest offset"),
    NUM(BK_JOINT, "linear_limit_width", 1, 1, 0, 0, false, true, "prismatic: the limits' smoothing (default a hundredth of their range)"),
    NUM(BK_JOINT, "linear_limit_stiffness", 1, 0, 1, -2, false, true, "prismatic: stiffness of the limits, N/m"),
    WORD(BK_JOINT, "motor", "angle velocity torque position force", "revolute: angle, velocity or torque; prismatic: position, velocity or force"),
    OTHER(BK_JOINT, "target", P_TIMED, false, "the motor's angle, velocity, torque, position or force: an expression of t"),

    DISCRETE(BK_LATTICE, "shape", P_SOLID, 0, true, NULL, "the body it fills: box, cylinder, sphere or filled(\"closed.stl\")"),
    DISCRETE(BK_LATTICE, "spacing", P_NUM, 1, true, NULL, "edge of the grid's cubic cell"),
    DISCRETE(BK_LATTICE, "grid", P_WORD, 0, false, "cubic bcc fcc", "grid: cubic (default), bcc or fcc"),
    DISCRETE(BK_LATTICE, "neighbours", P_INT, 0, false, NULL, "shells of neighbours joined by springs (default 2)"),
    OTHER(BK_LATTICE, "material", P_MATERIAL, true, "material name (E along the grid axes, rho)"),

    DISCRETE(BK_SOLID, "mesh", P_TETMESH, 0, true, NULL, "its tetrahedra: box, cylinder, gmsh(\"f.msh\"), tetgen(\"f\") or filled(\"f.stl\")"),
    DISCRETE(BK_SOLID, "spacing", P_NUM, 1, false, NULL, "longest cell edge of a generated mesh (box, cylinder, filled)"),
    DISCRETE(BK_SOLID, "cavity", P_SOLID, 0, false, NULL, "a box left hollow inside a box mesh"),
    DISCRETE(BK_SOLID, "model", P_WORD, 0, false, "neo_hookean stvk linear", "neo_hookean (default), stvk or linear"),
    OTHER(BK_SOLID, "material", P_MATERIAL, true, "material name (E, nu, rho), or a condition on x, y, z, region"),

    NUM(BK_MEDIUM, "density", 1, -3, 1, 0, true, true, "density of the surrounding fluid (buoyancy)"),
    NUM(BK_VISCOUS, "eta", 1, -1, 1, -1, true, true, "viscous drag per length and velocity"),
    NUM(BK_DAMPING, "alpha", 1, 0, 0, -1, false, true, "mass-proportional Rayleigh coefficient"),
    NUM(BK_DAMPING, "beta", 1, 0, 0, 1, false, true, "stiffness-proportional Rayleigh coefficient"),
    NUM(BK_RFT, "ct", 1, -1, 1, -1, true, true, "tangential drag coefficient"),
    NUM(BK_RFT, "cn", 1, -1, 1, -1, true, true, "normal drag coefficient"),
    NUM(BK_DRAG, "cd", 1, 0, 0, 0, true, true, "drag coefficient"),
    NUM(BK_DRAG, "density", 1, -3, 1, 0, true, true, "fluid density"),

    NUM(BK_VIEW, "eye", 3, 1, 0, 0, false, false, "where the camera of pictures is"),
    NUM(BK_VIEW, "target", 3, 1, 0, 0, false, false, "the point it looks at"),
    NUM(BK_VIEW, "up", 3, 0, 0, 0, false, false, "the direction that is up in the picture (default (0, 0, 1))"),
    NUM(BK_VIEW, "fov", 1, 0, 0, 0, false, false, "vertical field of view (default 30 deg; 0: orthographic)"),
    WORD(BK_VIEW, "from", "front side top iso", "look from a side at the whole run: front, side, top or iso"),

    NUM(BK_GROUND, "normal", 3, 0, 0, 0, false, true, "plane normal (default (0, 0, 1))"),
    NUM(BK_GROUND, "level", 1, 1, 0, 0, false, true, "height of the plane at the origin (default 0)"),
    NUM(BK_GROUND, "incline", 1, 0, 0, 0, false, true, "tilt of the plane about the y axis"),
    OTHER(BK_GROUND, "height", P_HEIGHT, false, "uneven ground: z as an expression of x and y"),
    NUM(BK_GROUND, "stiffness", 1, 0, 1, -2, true, true, "contact stiffness"),
    NUM(BK_GROUND, "delta", 1, 1, 0, 0, true, true, "contact distance where the penalty starts"),
    NUM(BK_GROUND, "friction", 1, 0, 0, 0, false, true, "Coulomb friction coefficient (default 0)"),
    NUM(BK_GROUND, "slip_velocity", 1, 1, 0, -1, false, true, "stick-slip smoothing velocity (default 10 um/s)"),

    TIMED(BK_OBSTACLE, "center", 3, 1, 0, 0, false, "centre, may change with time t (sphere, box, cylinder)"),
    NUM(BK_OBSTACLE, "radius", 1, 1, 0, 0, false, true, "radius (sphere, cylinder)"),
    NUM(BK_OBSTACLE, "size", 3, 1, 0, 0, false, true, "edge lengths (box)"),
    TIMED(BK_OBSTACLE, "axis", 3, 0, 0, 0, false,
          "cylinder: its axis, may change with t (default (0, 0, 1)); box: the constant axis `angle` turns it about"),
    NUM(BK_OBSTACLE, "length", 1, 1, 0, 0, false, true, "length (cylinder)"),
    TIMED(BK_OBSTACLE, "angle", 1, 0, 0, 0, false, "box: its turn about `axis`, may change with t (default 0)"),
    TIMED(BK_OBSTACLE, "spin", 1, 0, 0, -1, false, "cylinder: angular velocity about its own axis, for friction (default 0)"),
    TIMED(BK_OBSTACLE, "point", 3, 1, 0, 0, false, "plane: a point of it, may change with t"),
    TIMED(BK_OBSTACLE, "normal", 3, 0, 0, 0, false, "plane: its normal, towards the free side; may change with t"),
    NUM(BK_OBSTACLE, "stiffness", 1, 0, 1, -2, true, true, "contact stiffness"),
    NUM(BK_OBSTACLE, "delta", 1, 1, 0, 0, true, true, "contact distance"),
    NUM(BK_OBSTACLE, "friction", 1, 0, 0, 0, false, true, "Coulomb friction coefficient (default 0)"),
    NUM(BK_OBSTACLE, "slip_velocity", 1, 1, 0, -1, false, true, "stick-slip smoothing velocity (default 10 um/s)"),

    NUM(BK_CONTACT, "stiffness", 1, 0, 1, -2, true, true, "contact stiffness"),
    NUM(BK_CONTACT, "delta", 1, 1, 0, 0, true, true, "contact distance"),
    NUM(BK_CONTACT, "friction", 1, 0, 0, 0, false, true, "Coulomb friction coefficient (default 0)"),
    NUM(BK_CONTACT, "slip_velocity", 1, 1, 0, -1, false, true, "stick-slip smoothing velocity (default 10 um/s)"),
    NUM(BK_CONTACT, "radius", 1, 1, 0, 0, false, true,
        "contact radius of every part (default: a rod's radius, half a shell's thickness)"),

    WORD(BK_SIMULATE, "method", "implicit_euler implicit_midpoint newmark euler verlet rk4", "time integrator"),
    NUM(BK_SIMULATE, "dt", 1, 0, 0, 1, true, false, "time step"),
    NUM(BK_SIMULATE, "duration", 1, 0, 0, 1, true, false, "simulated time"),
    NUM(BK_SIMULATE, "tolerance", 1, 0, 0, 0, false, false, "Newton tolerance, relative to the characteristic force (default 1e-6)"),
    OTHER(BK_SIMULATE, "max_iterations", P_INT, false, "Newton iteration cap per step (default 25)"),
    WORD(BK_SIMULATE, "line_search", "on off", "backtracking line search (default on)"),
    WORD(BK_SIMULATE, "solver", "auto dense banded sparse", "linear solver (default auto)"),
    WORD(BK_SIMULATE, "start", "reference equilibrium", "initial state: the reference, or the static equilibrium (default reference)"),

    NUM(BK_STATIC, "tolerance", 1, 0, 0, 0, false, false, "Newton tolerance (default 1e-8)"),
    OTHER(BK_STATIC, "max_iterations", P_INT, false, "Newton iteration cap per load step (default 50)"),
    OTHER(BK_STATIC, "load_steps", P_INT, false, "load increments (default 1)"),
    WORD(BK_STATIC, "line_search", "on off", "backtracking line search (default on)"),
    WORD(BK_STATIC, "solver", "auto dense banded sparse", "linear solver (default auto)"),

    OTHER(BK_MODES, "count", P_INT, true, "number of modes"),
    WORD(BK_MODES, "at", "reference equilibrium", "configuration to linearise about: the reference, or the static equilibrium (default reference)"),
};

const PropSpec *props_find(BlockKind b, const char *name)
{
    for (size_t i = 0; i < sizeof props / sizeof props[0]; i++)
        if (props[i].block == b && !strcmp(props[i].name, name))
            return &props[i];
    return NULL;
}

int props_list(BlockKind b, const PropSpec **out, int max)
{
    int n = 0;
    for (size_t i = 0; i < sizeof props / sizeof props[0] && n < max; i++)
        if (props[i].block == b)
            out[n++] = &props[i];
    return n;
}

Dims props_dims(const PropSpec *p) { return dims_of(p->l, p->m, p->t, p->k); }
