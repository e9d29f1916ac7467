/* rigid.c — rigid bodies and joints in elaboration: a body's mass properties from its shape
 * (or given), its principal axes, and `joint` blocks checked and recorded for finalize. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "elab.h"
#include "elab_internal.h"
#include "elab_tangent.h"
#include "srd_model.h"
#include "vec3.h"
#include "alloc.h"
#include "batch.h"
#include <stdlib.h>
#include <lapacke.h>
#include "geom.h"

#define PI 3.14159265358979323846

/* ---- rigid bodies ---- */

static double shape_volume(int shape, const double *size)
{
    double r = size[0], l = size[1];
    switch (shape) {
    case SRD_SHAPE_BOX: return size[0] * size[1] * size[2];
    case SRD_SHAPE_SPHERE: return 4.0 / 3.0 * PI * r * r * r;
    case SRD_SHAPE_CYLINDER: return PI * r * r * l;
    case SRD_SHAPE_CAPSULE: return PI * r * r * l + 4.0 / 3.0 * PI * r * r * r;
    }
    return 0;
}

/* Principal moments of a uniform shape of mass m about its centre, along the body's x, y, z
 * (cylinder and capsule axes along z). The capsule: a cylinder of length l and two hemispheres
 * whose centres of mass sit 3 r / 8 beyond its ends. */
static void shape_inertia(int shape, const double *size, double m, double *Jm)
{
    double r = size[0], l = size[1];
    if (shape == SRD_SHAPE_BOX) {
        double a = size[0], b = size[1], c = size[2];
        Jm[0] = m * (b * b + c * c) / 12;
        Jm[1] = m * (a * a + c * c) / 12;
        Jm[2] = m * (a * a + b * b) / 12;
    } else if (shape == SRD_SHAPE_SPHERE) {
        Jm[0] = Jm[1] = Jm[2] = 0.4 * m * r * r;
    } else if (shape == SRD_SHAPE_CYLINDER) {
        Jm[0] = Jm[1] = m * (3 * r * r + l * l) / 12;
        Jm[2] = 0.5 * m * r * r;
    } else if (shape == SRD_SHAPE_CAPSULE) {
        double vc = PI * r * r * l, vs = 4.0 / 3.0 * PI * r * r * r;
        double mc = m * vc / (vc + vs), ms = m - mc;
        Jm[0] = Jm[1] = mc * (l * l / 12 + r * r / 4) + ms * (0.4 * r * r + l * l / 4 + 3 * l * r / 8);
        Jm[2] = 0.5 * mc * r * r + 0.4 * ms * r * r;
    }
}

static int shape_of(const PropValues *pv)
{
    const Value *v = prop_get(pv, "shape");
    if (!v)
        return SRD_SHAPE_NONE;
    static const char *names[] = { "box", "sphere", "cylinder", "capsule", "mesh" };
    for (int k = 0; k < 5; k++)
        if (!strcmp(v->str, names[k]))
            return SRD_SHAPE_BOX + k;
    return SRD_SHAPE_NONE;
}

/* The dimensions a shape needs, into size (box: edges; others: radius, length). */
static bool shape_size(const PropValues *pv, int shape, double *size, SrcLoc loc, const char *name)
{
    static const char *need[] = { [SRD_SHAPE_BOX] = "size", [SRD_SHAPE_SPHERE] = "radius",
                                  [SRD_SHAPE_CYLINDER] = "radius and length", [SRD_SHAPE_CAPSULE] = "radius and length" };
    bool ok = shape == SRD_SHAPE_BOX ? prop_get(pv, "size") != NULL
            : prop_get(pv, "radius") && (shape == SRD_SHAPE_SPHERE || prop_get(pv, "length"));
    if (!ok) {
        Diag *d = diag_error(prop_loc(pv, "shape", loc), "the %s of body `%s` needs its %s", prop_get(pv, "shape")->str,
                             name, need[shape]);
        diag_hint(d, "for example `size = (0.2, 0.1, 0.05) m;` for a box, `radius = 2 cm; length = 0.1 m;` for a cylinder");
        return false;
    }
    if (shape == SRD_SHAPE_BOX)
        memcpy(size, prop_get(pv, "size")->v, 3 * sizeof(double));
    else {
        size[0] = prop_num(pv, "radius", 0);
        size[1] = prop_num(pv, "length", 0);
        size[2] = 0;
    }
    for (int c = 0; c < (shape == SRD_SHAPE_BOX ? 3 : shape == SRD_SHAPE_SPHERE ? 1 : 2); c++)
        if (!(size[c] > 0)) {
            diag_error(prop_loc(pv, shape == SRD_SHAPE_BOX ? "size" : c ? "length" : "radius", loc),
                       "the dimensions of body `%s` must be positive", name);
            return false;
        }
    return true;
}

/* ---- closed triangle meshes ---- */

static int cmp_pair(const void *a, const void *b)
{
    const int *p = a, *q = b;
    return p[0] != q[0] ? (p[0] > q[0]) - (p[0] < q[0]) : (p[1] > q[1]) - (p[1] < q[1]);
}

/* Every edge in exactly two triangles: a closed surface, which bounds a volume. */
static bool mesh_closed(const GeomMesh *g)
{
    int n = 3 * g->n_tris, *e = srd_xcalloc((size_t)n * 2 + 2, sizeof(int));
    for (int t = 0; t < g->n_tris; t++)
        for (int k = 0; k < 3; k++) {
            int a = g->tri[3 * t + k], b = g->tri[3 * t + (k + 1) % 3], i = 3 * t + k;
            e[2 * i] = a < b ? a : b;
            e[2 * i + 1] = a < b ? b : a;
        }
    qsort(e, (size_t)n, 2 * sizeof(int), cmp_pair);
    bool ok = n > 0;
    for (int i = 0; i < n && ok; i += 2)
        ok = i + 1 < n && !cmp_pair(&e[2 * i], &e[2 * i + 2]) && (i + 2 >= n || cmp_pair(&e[2 * i], &e[2 * i + 4]));
    free(e);
    return ok;
}

/* Volume, first and second moments of the solid a closed mesh bounds (the tetrahedra from the
 * origin to each triangle, signed): V, S = int x dV, C = int x x^T dV (row-major). */
static void mesh_moments(const GeomMesh *g, double *V, double *S, double *C)
{
    *V = 0;
    memset(S, 0, 3 * sizeof(double));
    memset(C, 0, 9 * sizeof(double));
    for (int t = 0; t < g->n_tris; t++) {
        const double *a = &g->x[3 * g->tri[3 * t]], *b = &g->x[3 * g->tri[3 * t + 1]], *c = &g->x[3 * g->tri[3 * t + 2]];
        double bc[3], sum[3];
        srd_cross3(b, c, bc);
        double d = srd_dot3(a, bc);
        *V += d / 6;
        for (int i = 0; i < 3; i++) {
            sum[i] = a[i] + b[i] + c[i];
            S[i] += d / 24 * sum[i];
        }
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                C[3 * i + j] += d / 120 * (a[i] * a[j] + b[i] * b[j] + c[i] * c[j] + sum[i] * sum[j]);
    }
    if (*V < 0) { /* triangles wound inward */
        *V = -*V;
        for (int i = 0; i < 9; i++)
            C[i] = -C[i];
        for (int i = 0; i < 3; i++)
            S[i] = -S[i];
    }
}

/* Principal moments and axes (columns, right-handed) of the inertia about the centre of mass. */
static bool principal_axes(const double *C, double V, const double *com, double rho, ElabRigid *r)
{
    double Cc[9], Jm[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            Cc[3 * i + j] = rho * (C[3 * i + j] - V * com[i] * com[j]);
    double tr = Cc[0] + Cc[4] + Cc[8];
    for (int k = 0; k < 9; k++)
        Jm[k] = (k % 4 == 0) * tr - Cc[k];
    if (LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'U', 3, Jm, 3, r->inertia) != 0)
        return false;
    memcpy(r->axes, Jm, sizeof r->axes); /* column k: eigenvector k */
    double z[3];
    srd_cross3(&r->axes[0], &r->axes[3], z);
    if (srd_dot3(z, &r->axes[6]) < 0)
        for (int c = 0; c < 3; c++)
            r->axes[6 + c] = -r->axes[6 + c];
    return true;
}

static bool mesh_body(Elab *e, const PropValues *pv, ElabRigid *r, double *mass, SrcLoc loc, const char *name)
{
    const Value *mv = prop_get(pv, "mesh");
    GeomMesh g;
    memset(&g, 0, sizeof g);
    if (!mv) {
        Diag *d = diag_error(prop_loc(pv, "shape", loc), "body `%s` has `shape = mesh` but no mesh", name);
        diag_hint(d, "give the closed surface: `mesh = obj(\"part.obj\", scale = 1 mm);`");
        return false;
    }
    if (!elab_build_mesh(e, mv->geom, &g))
        return false;
    double V, S[3], C[9], com[3];
    bool ok = mesh_closed(&g);
    if (!ok) {
        Diag *d = diag_error(prop_loc(pv, "mesh", loc), "the mesh of body `%s` is not a closed surface", name);
        diag_hint(d, "a rigid body's mesh must enclose its volume: every edge shared by exactly two triangles");
    }
    mesh_moments(&g, &V, S, C);
    if (ok && !(V > 0)) {
        diag_error(prop_loc(pv, "mesh", loc), "the mesh of body `%s` encloses no volume", name);
        ok = false;
    }
    double rho = prop_get(pv, "mass") ? prop_num(pv, "mass", 0) / V : prop_num(pv, "density", 0);
    for (int c = 0; c < 3 && ok; c++)
        com[c] = r->offset[c] = S[c] / V;
    if (ok && !(principal_axes(C, V, com, rho, r) && rho > 0))
        ok = false;
    *mass = rho * V;
    if (ok && !(*mass > 0)) {
        diag_error(prop_loc(pv, prop_get(pv, "mass") ? "mass" : "density", loc), "the mass of body `%s` must be positive",
                   name);
        ok = false;
    }
    r->n_points = ok ? g.n_nodes : 0;
    r->points = ok ? srd_xcalloc((size_t)g.n_nodes * 3 + 1, sizeof(double)) : NULL;
    for (int i = 0; i < r->n_points; i++)
        for (int k = 0; k < 3; k++) {
            double d[3];
            srd_sub3(&g.x[3 * i], com, d);
            r->points[3 * i + k] = srd_dot3(d, &r->axes[3 * k]);
        }
    geom_mesh_free(&g);
    return ok;
}

/* Mass and principal moments from the shape, density, mass and inertia given. */
static bool mass_properties(const PropValues *pv, ElabRigid *r, double *mass, SrcLoc loc, const char *name)
{
    bool has_mass = prop_get(pv, "mass") != NULL, has_rho = prop_get(pv, "density") != NULL;
    if (r->shape != SRD_SHAPE_NONE && r->shape != SRD_SHAPE_MESH && !shape_size(pv, r->shape, r->size, loc, name))
        return false;
    if (has_mass && has_rho) {
        Diag *d = diag_error(prop_loc(pv, "density", loc), "body `%s` has both a mass and a density", name);
        diag_hint(d, "give one: the other follows from the shape");
        return false;
    }
    if (has_rho && r->shape == SRD_SHAPE_NONE) {
        Diag *d = diag_error(prop_loc(pv, "density", loc), "body `%s` has a density but no shape", name);
        diag_hint(d, "give `shape = box;` (or sphere, cylinder, capsule) with its dimensions, or a `mass`");
        return false;
    }
    r->mass = has_mass ? prop_dual(pv, "mass", dual_const(0))
                       : dual_const(prop_num(pv, "density", 0) * shape_volume(r->shape, r->size));
    *mass = r->mass.v;
    if (r->shape == SRD_SHAPE_MESH && (has_mass || has_rho))
        return true; /* the mesh's volume gives the rest (mesh_body) */
    if (!has_mass && !has_rho) {
        Diag *d = diag_error(loc, "body `%s` needs a mass, or a density and a shape", name);
        diag_hint(d, "for example `mass = 0.5 kg;` or `shape = box; size = (0.1, 0.1, 0.1) m; density = 1000 kg/m^3;`");
        return false;
    }
    if (!(*mass > 0)) {
        diag_error(prop_loc(pv, has_mass ? "mass" : "density", loc), "the mass of body `%s` must be positive", name);
        return false;
    }
    r->inertia_given = prop_get(pv, "inertia") != NULL;
    if (r->inertia_given)
        memcpy(r->inertia, prop_get(pv, "inertia")->v, sizeof r->inertia);
    else if (r->shape != SRD_SHAPE_NONE && r->shape != SRD_SHAPE_MESH)
        shape_inertia(r->shape, r->size, *mass, r->inertia);
    return true;
}

/* Principal moments must be positive and meet the triangle inequality (any real mass
 * distribution does: I1 + I2 >= I3 and its turns). */
static bool check_inertia(const PropValues *pv, const double *Jm, SrcLoc loc, const char *name)
{
    SrcLoc at = prop_loc(pv, "inertia", loc);
    if (!(Jm[0] > 0 && Jm[1] > 0 && Jm[2] > 0)) {
        Diag *d = diag_error(at, "the inertia of body `%s` is not positive definite: (%g, %g, %g) kg*m^2", name, Jm[0],
                             Jm[1], Jm[2]);
        diag_hint(d, "give its principal moments, all positive, about the body's x, y and z axes");
        return false;
    }
    for (int k = 0; k < 3; k++)
        if (Jm[k] + Jm[(k + 1) % 3] < Jm[(k + 2) % 3] * (1 - 1e-12)) {
            Diag *d = diag_error(at, "no body has the principal moments (%g, %g, %g) kg*m^2 of `%s`", Jm[0], Jm[1], Jm[2],
                                 name);
            diag_hint(d, "each moment must be at most the sum of the other two");
            return false;
        }
    return true;
}

/* Orthonormal principal axes from `axis` (z) and `x_axis`, as the columns of R. */
static bool body_axes(const PropValues *pv, double *R, SrcLoc loc, const char *name)
{
    double z[3] = { 0, 0, 1 }, x[3] = { 1, 0, 0 }, y[3];
    if (prop_get(pv, "axis"))
        memcpy(z, prop_get(pv, "axis")->v, sizeof z);
    double nz = sqrt(srd_dot3(z, z));
    if (!(nz > 0)) {
        diag_error(prop_loc(pv, "axis", loc), "the axis of body `%s` has zero length", name);
        return false;
    }
    for (int c = 0; c < 3; c++)
        z[c] /= nz;
    if (prop_get(pv, "x_axis"))
        memcpy(x, prop_get(pv, "x_axis")->v, sizeof x);
    else if (fabs(z[0]) > 0.9)
        x[0] = 0, x[1] = 1;
    double along = srd_dot3(x, z);
    for (int c = 0; c < 3; c++)
        x[c] -= along * z[c];
    double nx = sqrt(srd_dot3(x, x));
    if (!(nx > 1e-9)) {
        diag_error(prop_loc(pv, "x_axis", loc), "the x_axis of body `%s` is along its axis (or zero)", name);
        return false;
    }
    for (int c = 0; c < 3; c++)
        x[c] /= nx;
    srd_cross3(z, x, y);
    for (int c = 0; c < 3; c++) {
        R[c] = x[c];
        R[3 + c] = y[c];
        R[6 + c] = z[c];
    }
    return true;
}

bool elab_is_rigid(const PropValues *pv)
{
    return prop_given(pv, "shape") || prop_given(pv, "inertia") || prop_given(pv, "density") ||
           prop_given(pv, "angular_velocity") || prop_given(pv, "axis") || prop_given(pv, "x_axis");
}

bool elab_rigid_body(Elab *e, const PropValues *pv, int obj, double *mass, SrcLoc loc, const char *name)
{
    ElabRigid r;
    memset(&r, 0, sizeof r);
    r.obj = obj;
    r.shape = shape_of(pv);
    if (!mass_properties(pv, &r, mass, loc, name))
        return false;
    bool mesh = r.shape == SRD_SHAPE_MESH;
    if (mesh && !mesh_body(e, pv, &r, mass, loc, name)) {
        free(r.points);
        return false;
    }
    if (r.shape == SRD_SHAPE_NONE && !prop_get(pv, "inertia")) {
        Diag *d = diag_error(loc, "rigid body `%s` needs a shape or its inertia", name);
        diag_hint(d, "give `shape = box; size = ...;` (or sphere, cylinder, capsule), or `inertia = (Ixx, Iyy, Izz) kg*m^2;`");
        return false;
    }
    if (!check_inertia(pv, r.inertia, loc, name) || (!mesh && !body_axes(pv, r.axes, loc, name))) {
        free(r.points);
        return false;
    }
    if (prop_get(pv, "velocity"))
        memcpy(r.v0, prop_get(pv, "velocity")->v, sizeof r.v0);
    if (prop_get(pv, "angular_velocity"))
        memcpy(r.w0, prop_get(pv, "angular_velocity")->v, sizeof r.w0);
    if (e->model->planar) {
        Diag *d = diag_error(loc, "rigid body `%s` in a planar model", name);
        diag_hint(d, "rigid bodies turn in three dimensions: remove `planar;`");
        return false;
    }
    DPUSH(e->rigids, r);
    return true;
}

/* A body object whose one node is the next one made. */
static ElabObj body_object(const Elab *e, const char *name, SrcLoc loc)
{
    ElabObj o;
    memset(&o, 0, sizeof o);
    o.name = name;
    o.kind = SRD_OBJ_BODY;
    o.loc = loc;
    o.first_node = e->node_obj.n;
    o.n_nodes = 1;
    o.first_edge = e->edge_obj.n;
    o.first_tri = e->tri_obj.n;
    o.first_hinge = e->hinge_edge.n;
    return o;
}

bool elab_add_rigid(Elab *e, const char *name, SrcLoc loc, const double *center, int shape, double radius,
                    double length, Dual rho, const double *axis)
{
    ElabObj o = body_object(e, name, loc);
    ElabRigid r;
    memset(&r, 0, sizeof r);
    r.obj = e->objs.n;
    r.shape = shape;
    r.size[0] = radius;
    r.size[1] = length;
    o.mass = dual_scale(shape_volume(shape, r.size), rho);
    r.mass = o.mass; /* the moments follow it (elab_tangent.c's finish_masses) */
    shape_inertia(shape, r.size, o.mass.v, r.inertia);
    double x[3] = { 1, 0, 0 }, y[3];
    if (fabs(axis[0]) > 0.9)
        x[0] = 0, x[1] = 1;
    double along = srd_dot3(x, axis);
    for (int c = 0; c < 3; c++)
        x[c] -= along * axis[c];
    double n = sqrt(srd_dot3(x, x));
    for (int c = 0; c < 3; c++)
        x[c] /= n;
    srd_cross3(axis, x, y);
    for (int c = 0; c < 3; c++) {
        r.axes[c] = x[c];
        r.axes[3 + c] = y[c];
        r.axes[6 + c] = axis[c];
    }
    int node = elab_add_node(e, center, e->objs.n, 0);
    e->body_mass.a[node] = o.mass;
    DPUSH(e->objs, o);
    DPUSH(e->rigids, r);
    return o.mass.v > 0;
}

int elab_rigid_of(const Elab *e, int obj)
{
    for (int k = 0; k < e->rigids.n; k++)
        if (e->rigids.a[k].obj == obj)
            return k;
    return -1;
}

/* ---- joints ---- */

static void elab_joint_worlds(Elab *e, PendingJoint *j);

static int joint_type(const char *w)
{
    static const char *names[] = { "fixed", "revolute", "prismatic", "spherical", "universal" };
    for (int k = 0; k < 5; k++)
        if (!strcmp(w, names[k]))
            return k;
    return -1;
}

/* One end of a joint from its property value. */
static void joint_end(Elab *e, const Value *v, int *kind, int *index, int *rod_obj, int *rod_end)
{
    *rod_obj = v->kind == V_SEL && v->sel->rod_end ? v->sel->obj : -1;
    *rod_end = *rod_obj >= 0 ? v->sel->rod_end : 0;
    if (v->kind == V_WORD) {
        *kind = END_WORLD;
        *index = -1;
    } else if (v->kind == V_OBJ && elab_rigid_of(e, v->index) >= 0) {
        *kind = END_BODY;
        *index = elab_rigid_of(e, v->index);
    } else {
        *kind = END_NODE;
        *index = v->kind == V_OBJ ? e->objs.a[v->index].first_node : select_nodes(e, v->sel)->items[0];
    }
}

static const char *end_name(const Elab *e, const PendingJoint *j, int s)
{
    if (j->end_kind[s] == END_WORLD)
        return "the world";
    if (j->end_kind[s] == END_BODY)
        return e->objs.a[e->rigids.a[j->end[s]].obj].name;
    return "a node";
}

static bool check_ends(Elab *e, const PendingJoint *j)
{
    const char *what = NULL, *hint = NULL;
    if (j->end_kind[0] == j->end_kind[1] && j->end[0] == j->end[1])
        what = j->end_kind[0] == END_WORLD ? "joins the world to itself" : "joins %s to itself",
        hint = "a joint joins two different bodies (or a body and `world`, or a node and a body)";
    else if (j->end_kind[0] == END_NODE && j->end_kind[1] == END_NODE)
        what = "joins two nodes", hint = "nodes are joined by `join a, b;`";
    else if ((j->end_kind[0] == END_NODE || j->end_kind[1] == END_NODE) && j->type != JOINT_SPHERICAL &&
             !(j->type == JOINT_FIXED && (j->rod_end[0] || j->rod_end[1])))
        what = "holds a node, which has no orientation, with a joint that is neither spherical nor a rod end's",
        hint = "a node is pinned to a body by `type = spherical;`; a rod's .start or .end is clamped into one by "
               "`type = fixed;`";
    else if (j->end_kind[0] == END_NODE && j->end_kind[1] == END_WORLD)
        what = "holds a node to the world", hint = "hold nodes with `fix` or `clamp`";
    if (!what)
        return true;
    char msg[256];
    snprintf(msg, sizeof msg, what, end_name(e, j, 0));
    Diag *d = diag_error(j->loc, "joint `%s` %s", j->name, msg);
    diag_hint(d, "%s", hint);
    return false;
}

static bool unit_axis(const PropValues *pv, const char *key, double *u, const double *dflt, SrcLoc loc,
                      const char *name)
{
    const Value *v = prop_get(pv, key);
    memcpy(u, v ? v->v : dflt, 3 * sizeof(double));
    double n = sqrt(srd_dot3(u, u));
    if (!(n > 0)) {
        diag_error(prop_loc(pv, key, loc), "the %s of joint `%s` has zero length", key, name);
        return false;
    }
    for (int c = 0; c < 3; c++)
        u[c] /= n;
    return true;
}

/* The joint's point: `at`, or the position of its node end, else of b's body, else a's. */
static bool joint_point(Elab *e, const PropValues *pv, PendingJoint *j)
{
    int node_side = j->end_kind[0] == END_NODE ? 0 : j->end_kind[1] == END_NODE ? 1 : -1;
    if (node_side >= 0) {
        memcpy(j->at, &e->x0.a[3 * j->end[node_side]], sizeof j->at);
        const Value *at = prop_get(pv, "at");
        if (at && sqrt(pow(at->v[0] - j->at[0], 2) + pow(at->v[1] - j->at[1], 2) + pow(at->v[2] - j->at[2], 2)) > 1e-12) {
            Diag *d = diag_error(prop_loc(pv, "at", j->loc), "joint `%s` is at its node, not at `at`", j->name);
            diag_hint(d, "leave `at` out: a node is pinned where it is");
            return false;
        }
        return true;
    }
    if (prop_get(pv, "at"))
        memcpy(j->at, prop_get(pv, "at")->v, sizeof j->at);
    else {
        int s = j->end_kind[1] == END_BODY ? 1 : 0;
        memcpy(j->at, &e->x0.a[3 * e->objs.a[e->rigids.a[j->end[s]].obj].first_node], sizeof j->at);
    }
    return true;
}

/* motor = angle | velocity | torque (revolute), position | velocity | force (prismatic). */
static bool joint_motor(Elab *e, const PropValues *pv, const Stmt *s, PendingJoint *j)
{
    const Value *m = prop_get(pv, "motor");
    bool has_target = prop_given(pv, "target");
    j->motor = MOTOR_NONE;
    j->target_expr = -1;
    if (!m && !has_target)
        return true;
    if (!m) {
        Diag *d = diag_error(prop_loc(pv, "target", s->loc), "joint `%s` has a target but no motor", j->name);
        diag_hint(d, "say what the target is: `motor = angle;` (or velocity, torque)");
        return false;
    }
    if (j->type != JOINT_REVOLUTE && j->type != JOINT_PRISMATIC) {
        Diag *d = diag_error(prop_loc(pv, "motor", s->loc), "a motor on joint `%s`, which has no free coordinate to drive",
                             j->name);
        diag_hint(d, "motors drive revolute (angle, velocity, torque) and prismatic (position, velocity, force) joints");
        return false;
    }
    const char *w = m->str;
    bool rev = j->type == JOINT_REVOLUTE;
    j->motor = !strcmp(w, "velocity") ? MOTOR_VELOCITY
             : !strcmp(w, rev ? "angle" : "position") ? MOTOR_POSITION
             : !strcmp(w, rev ? "torque" : "force") ? MOTOR_EFFORT : MOTOR_NONE;
    if (j->motor == MOTOR_NONE) {
        Diag *d = diag_error(prop_loc(pv, "motor", s->loc), "a %s joint has no `%s` motor", rev ? "revolute" : "prismatic", w);
        diag_hint(d, rev ? "revolute motors: angle, velocity, torque" : "prismatic motors: position, velocity, force");
        return false;
    }
    if (!has_target) {
        Diag *d = diag_error(prop_loc(pv, "motor", s->loc), "the motor of joint `%s` has no target", j->name);
        diag_hint(d, "give it as a number or an expression of t: `target = 30 deg * sin(2 * pi * 1 Hz * t);`");
        return false;
    }
    const Value *t = prop_get(pv, "target");
    if (!t)
        return false;
    /* the target's dimension: rad (1), rad/s, N*m; m, m/s, N */
    static const signed char dims[2][3][3] = { { { 0, 0, 0 }, { 0, 0, -1 }, { 2, 1, -2 } },
                                               { { 1, 0, 0 }, { 1, 0, -1 }, { 1, 1, -2 } } };
    const signed char *want = dims[rev ? 0 : 1][j->motor - 1];
    Dims d = dims_of(want[0], want[1], want[2], 0);
    if (!t->any_dims && !dims_eq(t->dims, d)) {
        char have[128];
        value_describe(t, have, sizeof have);
        diag_error(prop_loc(pv, "target", s->loc), "the target of a %s motor must be %s, but this is %s", w,
                   rev ? (j->motor == MOTOR_POSITION ? "an angle" : j->motor == MOTOR_VELOCITY ? "an angular velocity (1/s)"
                                                                                             : "a torque (N*m)")
                       : (j->motor == MOTOR_POSITION ? "a length" : j->motor == MOTOR_VELOCITY ? "a velocity" : "a force"),
                   have);
        return false;
    }
    if (t->known) {
        j->d[JOINT_TARGET] = value_dual(t, 0);
        j->target = t->v[0];
    } else {
        const Stmt *p = NULL;
        for (int i = 0; i < s->n_body && !p; i++)
            if (s->body[i]->kind == ST_PROP && !strcmp(s->body[i]->name, "target"))
                p = s->body[i];
        j->target_expr = elab_remember_expr(e, p->value);
    }
    return true;
}

/* Spring, damper, natural value and limits, in the joint's coordinate (rad or m). */
static bool joint_elements(const PropValues *pv, const Stmt *s, PendingJoint *j)
{
    bool rev = j->type == JOINT_REVOLUTE, pri = j->type == JOINT_PRISMATIC;
    static const char *rot[] = { "stiffness", "damping", "angle0", "limits", "limit_stiffness" };
    static const char *lin[] = { "linear_stiffness", "linear_damping", "offset0", "linear_limits", "linear_limit_stiffness" };
    for (int k = 0; k < 5; k++)
        for (int side = 0; side < 2; side++) {
            const char *key = side ? lin[k] : rot[k];
            if (prop_given(pv, key) && (side ? !pri : !rev)) {
                Diag *d = diag_error(prop_loc(pv, key, s->loc), "`%s` belongs to a %s joint, and `%s` is not one", key,
                                     side ? "prismatic" : "revolute", j->name);
                diag_hint(d, "revolute joints take stiffness, damping, angle0, limits; prismatic ones the linear_ forms");
                return false;
            }
        }
    const char *const *keys = pri ? lin : rot;
    j->k = prop_kept(pv, keys[0], dual_const(0), &j->d[JOINT_K]);
    j->c = prop_kept(pv, keys[1], dual_const(0), &j->d[JOINT_C]);
    j->rest = prop_kept(pv, keys[2], dual_const(0), &j->d[JOINT_REST]);
    j->has_lim = prop_get(pv, keys[3]) != NULL;
    if (j->has_lim) {
        for (int c = 0; c < 2; c++) {
            j->d[JOINT_LO + c] = value_dual(prop_get(pv, keys[3]), c);
            j->lim[c] = j->d[JOINT_LO + c].v;
        }
        j->k_lim = prop_kept(pv, keys[4], dual_const(0), &j->d[JOINT_K_LIM]);
        /* the stop's smoothing: given, or a hundredth of the range */
        Dual width = dual_divc(dual_sub(j->d[JOINT_HI], j->d[JOINT_LO]), 100);
        j->lim_width = prop_kept(pv, pri ? "linear_limit_width" : "limit_width", width, &j->d[JOINT_LIM_WIDTH]);
        if (!(j->lim[0] < j->lim[1]) || !(j->k_lim > 0)) {
            Diag *d = diag_error(prop_loc(pv, keys[3], s->loc), "the limits of joint `%s` need low < high and a positive %s",
                                 j->name, keys[4]);
            diag_hint(d, "for example `limits = (-45 deg, 45 deg); limit_stiffness = 10 N*m;`");
            return false;
        }
    }
    if (j->k < 0 || j->c < 0) {
        diag_error(s->loc, "the spring and damper of joint `%s` must not be negative", j->name);
        return false;
    }
    return true;
}

/* A joint whose end is several nodes (a shell's edge, a rod's nodes) pins each to the body: one
 * spherical joint per node, named NAME[k]; otherwise the joint itself. */
static void glue_nodes(Elab *e, const PropValues *pv, PendingJoint *j)
{
    int side = -1;
    Sel *nodes = NULL;
    for (int s = 0; s < 2; s++) {
        const Value *v = prop_get(pv, s ? "b" : "a");
        if (v->kind == V_SEL && (v->sel->kind != SEL_NODE || v->sel->n > 1)) {
            side = s;
            nodes = select_nodes(e, v->sel);
        }
    }
    if (side < 0 || nodes->n == 1) {
        DPUSH(e->joints, *j);
        return;
    }
    if (j->type != JOINT_SPHERICAL) {
        Diag *d = diag_error(j->end_loc[side], "joint `%s` holds %d nodes: only a spherical joint glues several",
                             j->name, nodes->n);
        diag_hint(d, "`type = spherical;` pins each node to the body at its place");
        return;
    }
    for (int k = 0; k < nodes->n; k++) {
        PendingJoint g = *j;
        g.name = arena_printf(e->arena, "%s[%d]", j->name, k);
        g.end[side] = nodes->items[k];
        memcpy(g.at, &e->x0.a[3 * nodes->items[k]], sizeof g.at);
        DPUSH(e->joints, g);
    }
}

void elab_joint(Elab *e, Stmt *s, const char *name)
{
    PropValues pv;
    char owner[160];
    snprintf(owner, sizeof owner, "joint `%s`", name);
    props_read(e, s, &pv, owner);
    if (!props_complete(s, &pv, owner) || !prop_get(&pv, "type") || !prop_get(&pv, "a") || !prop_get(&pv, "b"))
        return;
    PendingJoint j;
    memset(&j, 0, sizeof j);
    j.name = name;
    j.loc = s->name_loc;
    j.type = joint_type(prop_get(&pv, "type")->str);
    joint_end(e, prop_get(&pv, "a"), &j.end_kind[0], &j.end[0], &j.rod_obj[0], &j.rod_end[0]);
    joint_end(e, prop_get(&pv, "b"), &j.end_kind[1], &j.end[1], &j.rod_obj[1], &j.rod_end[1]);
    j.end_loc[0] = prop_loc(&pv, "a", s->loc);
    j.end_loc[1] = prop_loc(&pv, "b", s->loc);
    static const double z[3] = { 0, 0, 1 };
    double x[3] = { 1, 0, 0 };
    if (!check_ends(e, &j) || !joint_point(e, &pv, &j) || !unit_axis(&pv, "axis", j.axis, z, s->loc, name))
        return;
    if (fabs(j.axis[0]) > 0.9)
        x[0] = 0, x[1] = 1;
    double along = srd_dot3(x, j.axis), x2[3];
    for (int c = 0; c < 3; c++)
        x2[c] = x[c] - along * j.axis[c];
    if (!unit_axis(&pv, "axis2", j.axis2, x2, s->loc, name))
        return;
    if (j.type == JOINT_UNIVERSAL && fabs(srd_dot3(j.axis, j.axis2)) > 1e-9) {
        Diag *d = diag_error(prop_loc(&pv, "axis2", s->loc), "the two axes of universal joint `%s` are not normal", name);
        diag_hint(d, "a universal joint's cross has axes at right angles");
        return;
    }
    if (!joint_elements(&pv, s, &j) || !joint_motor(e, &pv, s, &j))
        return;
    for (int k = 0; k < e->joints.n; k++)
        if (!strcmp(e->joints.a[k].name, name)) {
            Diag *d = diag_error(s->name_loc, "joint `%s` is already declared", name);
            diag_note(d, e->joints.a[k].loc, "the first declaration is here");
            return;
        }
    elab_joint_worlds(e, &j);
    glue_nodes(e, &pv, &j);
}

/* ---- the world ---- */

/* The world as a body: a node at the origin with the world's axes, held in full, so that every
 * joint joins two bodies. Made once, the first time a joint names `world`. */
static int world_rigid(Elab *e)
{
    for (int k = 0; k < e->rigids.n; k++)
        if (e->rigids.a[k].world)
            return k;
    ElabObj o = body_object(e, "world", NO_LOC);
    static const double origin[3] = { 0, 0, 0 };
    int node = elab_add_node(e, origin, e->objs.n, 0);
    e->node_fix.a[node] = 7;
    DPUSH(e->objs, o);
    ElabRigid r;
    memset(&r, 0, sizeof r);
    r.obj = e->objs.n - 1;
    r.world = true;
    for (int c = 0; c < 3; c++) {
        r.inertia[c] = 1;
        r.axes[4 * c] = 1;
    }
    DPUSH(e->rigids, r);
    return e->rigids.n - 1;
}

static void elab_joint_worlds(Elab *e, PendingJoint *j)
{
    for (int s = 0; s < 2; s++)
        if (j->end_kind[s] == END_WORLD) {
            j->end_kind[s] = END_BODY;
            j->end[s] = world_rigid(e);
        }
}

/* ---- finalize ---- */

bool rigid_add_bodies(Elab *e, srd_model *m, const int *map)
{
    m->node_body = srd_xcalloc((size_t)m->n_nodes + 1, sizeof(int));
    for (int i = 0; i < m->n_nodes; i++)
        m->node_body[i] = -1;
    m->n_bodies = e->rigids.n;
    m->bodies = srd_xcalloc((size_t)m->n_bodies + 1, sizeof(srd_body));
    bool ok = true;
    for (int k = 0; k < e->rigids.n; k++) {
        const ElabRigid *r = &e->rigids.a[k];
        srd_body *b = &m->bodies[k];
        b->object = r->obj;
        b->node = map[e->objs.a[r->obj].first_node];
        b->mass = e->objs.a[r->obj].mass.v;
        memcpy(b->inertia, r->inertia, sizeof b->inertia);
        memcpy(b->axes, r->axes, sizeof b->axes);
        memcpy(b->omega0, r->w0, sizeof b->omega0);
        memcpy(b->velocity0, r->v0, sizeof b->velocity0);
        b->shape = r->shape;
        b->world = r->world;
        memcpy(b->size, r->size, sizeof b->size);
        b->n_points = r->n_points;
        b->points = r->n_points ? srd_xcalloc((size_t)r->n_points * 3, sizeof(double)) : NULL;
        if (r->n_points)
            memcpy(b->points, r->points, sizeof(double) * 3 * (size_t)r->n_points);
        if (m->node_body[b->node] >= 0) {
            diag_error(e->objs.a[r->obj].loc, "rigid body `%s` shares its centre with another body (a `join`)",
                       e->objs.a[r->obj].name);
            ok = false;
        }
        m->node_body[b->node] = k;
    }
    return ok;
}

/* A world vector in body k's principal axes. */
static void in_body(const srd_model *m, int k, const double *w, double *out)
{
    const double *R = m->bodies[k].axes;
    for (int c = 0; c < 3; c++)
        out[c] = R[3 * c] * w[0] + R[3 * c + 1] * w[1] + R[3 * c + 2] * w[2];
}

/* The joint point in body k's axes, relative to its centre. */
static void point_in_body(const srd_model *m, int k, const double *at, double *out)
{
    double d[3];
    srd_sub3(at, &m->x0[3 * m->bodies[k].node], d);
    in_body(m, k, d, out);
}

typedef struct JointFrame {
    int    a, b;          /* bodies (a < 0: node_a is a node end) */
    int    node_a;
    int    clamp_edge, clamp_next; /* a clamped rod end: its end edge and that edge's other node */
    double ra[3], rb[3];  /* the point in a's and b's axes */
    double u_a[3], v_a[3], w_a[3], v_b[3], w_b[3];
} JointFrame;

/* One instance of element `kind` on (nodes[0], nodes[1]): its set and instance. */
static srd_part add_part(srd_model *m, const char *kind, int n_lambda, const int *nodes, const char *const *names,
                         const double *data, int n_data)
{
    srd_part p;
    p.set = srd_model_elemset(m, kind, 2, 0, n_data, names);
    m->sets[p.set].n_lambda = n_lambda;
    p.instance = srd_elemset_add(&m->sets[p.set], nodes, NULL, NULL, data, -1);
    return p;
}

static void copy3(double *dst, const double *src) { memcpy(dst, src, 3 * sizeof(double)); }

/* A rod end clamped into body b: its end edge keeps its direction in the body (normal to the
 * reference director d1 and to t x d1) and its material frame turns with it. */
static void add_rod_clamp(srd_model *m, const JointFrame *f, srd_joint *j)
{
    double *d1 = srd_initial_directors(m), t[3], q[3], d[6];
    int e = f->clamp_edge, a = f->node_a, b = f->clamp_next;
    srd_sub3(&m->x0[3 * b], &m->x0[3 * a], t);
    double n = sqrt(srd_dot3(t, t));
    for (int c = 0; c < 3; c++)
        t[c] /= n;
    srd_cross3(t, &d1[3 * e], q);
    in_body(m, f->b, &d1[3 * e], d);
    in_body(m, f->b, q, d + 3);
    free(d1);
    static const char *dn[] = { "p1", "p2", "p3", "q1", "q2", "q3" }, *tn[] = { "q1", "q2", "q3" };
    int nodes[3] = { a, b, m->bodies[f->b].node };
    srd_part p;
    p.set = srd_model_elemset(m, "rod_clamp", 3, 0, 6, dn);
    m->sets[p.set].n_lambda = 2;
    p.instance = srd_elemset_add(&m->sets[p.set], nodes, NULL, NULL, d, -1);
    j->part[j->n_parts++] = p;
    signed char sign = m->edge_nodes[2 * e] == a ? 1 : -1;
    p.set = srd_model_elemset(m, "rod_clamp_twist", 3, 1, 3, tn);
    m->sets[p.set].n_lambda = 1;
    p.instance = srd_elemset_add(&m->sets[p.set], nodes, &e, &sign, d + 3, -1);
    j->part[j->n_parts++] = p;
}

/* The parts that hold the joint's ends together; returns how many it recorded in j. */
static void add_holding_parts(srd_model *m, const PendingJoint *pj, const JointFrame *f, srd_joint *j)
{
    int nodes[2] = { f->a >= 0 ? m->bodies[f->a].node : f->node_a, m->bodies[f->b].node };
    double d[24];
    if (f->a < 0) {
        static const char *n[] = { "bx", "by", "bz" };
        j->part[j->n_parts++] = add_part(m, "node_point", 3, nodes, n, f->rb, 3);
        if (f->clamp_edge >= 0)
            add_rod_clamp(m, f, j);
        return;
    }
    if (pj->type != JOINT_PRISMATIC) {
        static const char *n[] = { "ax", "ay", "az", "bx", "by", "bz" };
        copy3(d, f->ra);
        copy3(d + 3, f->rb);
        j->part[j->n_parts++] = add_part(m, "joint_point", 3, nodes, n, d, 6);
    }
    if (pj->type == JOINT_REVOLUTE) {
        static const char *n[] = { "u1", "u2", "u3", "v1", "v2", "v3", "w1", "w2", "w3" };
        copy3(d, f->u_a);
        copy3(d + 3, f->v_b);
        copy3(d + 6, f->w_b);
        j->part[j->n_parts++] = add_part(m, "joint_hinge_axis", 2, nodes, n, d, 9);
    } else if (pj->type == JOINT_UNIVERSAL) {
        static const char *n[] = { "u1", "u2", "u3", "v1", "v2", "v3" };
        copy3(d, f->u_a);
        copy3(d + 3, f->v_b);
        j->part[j->n_parts++] = add_part(m, "joint_cross", 1, nodes, n, d, 6);
    } else if (pj->type == JOINT_FIXED || pj->type == JOINT_PRISMATIC) {
        static const char *n[] = { "ua1", "ua2", "ua3", "va1", "va2", "va3", "ub2_1", "ub2_2", "ub2_3", "ub3_1", "ub3_2",
                                   "ub3_3" };
        copy3(d, f->u_a);
        copy3(d + 3, f->v_a);
        copy3(d + 6, f->v_b);
        copy3(d + 9, f->w_b);
        j->part[j->n_parts++] = add_part(m, "joint_lock", 3, nodes, n, d, 12);
    }
    if (pj->type == JOINT_PRISMATIC) {
        static const char *n[] = { "ax", "ay", "az", "bx", "by", "bz", "v1", "v2", "v3", "w1", "w2", "w3" };
        copy3(d, f->ra);
        copy3(d + 3, f->rb);
        copy3(d + 6, f->v_a);
        copy3(d + 9, f->w_a);
        j->part[j->n_parts++] = add_part(m, "joint_slide_line", 2, nodes, n, d, 12);
    }
}

/* A revolute or prismatic joint's coordinate element (spring, damper, limits, motor) with its
 * frame columns followed by `extra` values named `extra_names`. */
static srd_part add_coordinate_part(Elab *e, srd_model *m, const PendingJoint *pj, const JointFrame *f, const char *kind,
                                    int n_lambda, const char *const *extra_names, const Dual *extra, int n_extra)
{
    int nodes[2] = { m->bodies[f->a].node, m->bodies[f->b].node };
    static const char *rev[] = { "u1", "u2", "u3", "v1", "v2", "v3", "vb1", "vb2", "vb3" };
    static const char *pri[] = { "ax", "ay", "az", "bx", "by", "bz", "u1", "u2", "u3" };
    const char *names[16];
    double d[16];
    bool r = pj->type == JOINT_REVOLUTE;
    for (int k = 0; k < 9; k++)
        names[k] = r ? rev[k] : pri[k];
    copy3(d, r ? f->u_a : f->ra);
    copy3(d + 3, r ? f->v_a : f->rb);
    copy3(d + 6, r ? f->v_b : f->u_a);
    for (int k = 0; k < n_extra; k++) {
        names[9 + k] = extra_names[k];
        d[9 + k] = extra[k].v;
    }
    srd_part p = add_part(m, kind, n_lambda, nodes, names, d, 9 + n_extra);
    Dual row[16];
    for (int k = 0; k < 9 + n_extra; k++)
        row[k] = k < 9 ? dual_const(d[k]) : extra[k - 9];
    elab_record_row(e, m, p.set, p.instance, row);
    return p;
}

static void add_coordinate_elements(Elab *e, srd_model *m, const PendingJoint *pj, const JointFrame *f, srd_joint *j)
{
    bool r = pj->type == JOINT_REVOLUTE;
    const Dual *d = pj->d;
    if (pj->k > 0) {
        static const char *rn[] = { "k", "angle0" }, *pn[] = { "k", "offset0" };
        Dual v[2] = { d[JOINT_K], d[JOINT_REST] };
        add_coordinate_part(e, m, pj, f, r ? "hinge_spring" : "slide_spring", 0, r ? rn : pn, v, 2);
    }
    if (pj->c > 0) {
        static const char *n[] = { "c" };
        add_coordinate_part(e, m, pj, f, r ? "hinge_damper" : "slide_damper", 0, n, &d[JOINT_C], 1);
    }
    if (pj->has_lim) {
        static const char *n[] = { "k", "lo", "hi", "width" };
        Dual v[4] = { d[JOINT_K_LIM], d[JOINT_LO], d[JOINT_HI], d[JOINT_LIM_WIDTH] };
        add_coordinate_part(e, m, pj, f, r ? "hinge_limits" : "slide_limits", 0, n, v, 4);
    }
    if (pj->motor != MOTOR_NONE) {
        static const char *rk[] = { "", "hinge_motor_angle", "hinge_motor_velocity", "hinge_motor_torque" };
        static const char *pk[] = { "", "slide_motor_position", "slide_motor_velocity", "slide_motor_force" };
        static const char *n[] = { "target" };
        j->motor = pj->motor;
        j->motor_part = add_coordinate_part(e, m, pj, f, (r ? rk : pk)[pj->motor], pj->motor == MOTOR_EFFORT ? 0 : 1, n,
                                            &d[JOINT_TARGET], 1);
    }
}

/* A ball joint's rotational springs and dampers (rfem): about u (the axis), v (axis2) and w, their
 * stiffnesses and dampings with their derivatives. */
static void add_rotation_springs(Elab *e, srd_model *m, const PendingJoint *pj, const JointFrame *f)
{
    static const char *n[] = { "u1", "u2", "u3", "v1", "v2", "v3", "ub1", "ub2", "ub3", "vb1", "vb2", "vb3",
                               "k1", "k2", "k3" };
    static const char *kinds[2] = { "joint_rotation_spring", "joint_rotation_damper" };
    static const char *kn[2][3] = { { "ku", "kv", "kw" }, { "cu", "cv", "cw" } };
    for (int which = 0; which < 2 && f->a >= 0; which++) {
        const Dual *k = which ? pj->c_rot : pj->k_rot;
        if (!(k[0].v > 0 || k[1].v > 0 || k[2].v > 0))
            continue;
        const char *names[15];
        double d[15], ub[3], vb[3];
        memcpy(names, n, sizeof names);
        for (int c = 0; c < 3; c++)
            names[12 + c] = kn[which][c];
        in_body(m, f->b, pj->axis, ub);
        memcpy(vb, f->v_b, sizeof vb);
        copy3(d, f->u_a);
        copy3(d + 3, f->v_a);
        copy3(d + 6, ub);
        copy3(d + 9, vb);
        Dual row[15];
        for (int c = 0; c < 15; c++)
            row[c] = c < 12 ? dual_const(d[c]) : k[c - 12];
        for (int c = 12; c < 15; c++)
            d[c] = k[c - 12].v;
        int nodes[2] = { m->bodies[f->a].node, m->bodies[f->b].node };
        srd_part p = add_part(m, kinds[which], 0, nodes, names, d, 15);
        elab_record_row(e, m, p.set, p.instance, row);
    }
}

/* The joint's frame in each body: its point, and axes u (the axis), v (axis2, normal to it), w. */
static void joint_frame(const Elab *e, const srd_model *m, const PendingJoint *pj, const int *map, JointFrame *f)
{
    int node_side = pj->end_kind[0] == END_NODE ? 0 : pj->end_kind[1] == END_NODE ? 1 : -1;
    f->a = node_side < 0 ? pj->end[0] : -1;
    f->b = node_side < 0 ? pj->end[1] : pj->end[1 - node_side];
    f->node_a = node_side < 0 ? -1 : map[pj->end[node_side]];
    f->clamp_edge = f->clamp_next = -1;
    if (node_side >= 0 && pj->type == JOINT_FIXED) {
        const ElabObj *o = &e->objs.a[pj->rod_obj[node_side]];
        bool start = pj->rod_end[node_side] == 1;
        f->clamp_edge = start ? o->first_edge : o->first_edge + o->n_edges - 1;
        f->clamp_next = map[start ? o->first_node + 1 : o->first_node + o->n_nodes - 2];
    }
    double u[3], v[3], w[3];
    copy3(u, pj->axis);
    double along = srd_dot3(pj->axis2, u);
    for (int c = 0; c < 3; c++)
        v[c] = pj->axis2[c] - (pj->type == JOINT_UNIVERSAL ? 0 : along * u[c]);
    double n = sqrt(srd_dot3(v, v));
    for (int c = 0; c < 3; c++)
        v[c] /= n;
    srd_cross3(u, v, w);
    if (f->a >= 0) {
        point_in_body(m, f->a, pj->at, f->ra);
        in_body(m, f->a, u, f->u_a);
        in_body(m, f->a, v, f->v_a);
        in_body(m, f->a, w, f->w_a);
    }
    point_in_body(m, f->b, pj->at, f->rb);
    in_body(m, f->b, v, f->v_b);
    in_body(m, f->b, w, f->w_b);
}

bool rigid_add_joints(Elab *e, srd_model *m, const int *map, unsigned char *needs_twist)
{
    m->n_joints = e->joints.n;
    m->joints = srd_xcalloc((size_t)m->n_joints + 1, sizeof(srd_joint));
    for (int k = 0; k < e->joints.n; k++) {
        const PendingJoint *pj = &e->joints.a[k];
        srd_joint *j = &m->joints[k];
        JointFrame f;
        memset(&f, 0, sizeof f);
        joint_frame(e, m, pj, map, &f);
        if (f.clamp_edge >= 0)
            needs_twist[f.clamp_edge] = 1;
        j->name = srd_xstrdup(pj->name);
        j->type = pj->type;
        j->body_a = f.a;
        j->body_b = f.b;
        copy3(j->at, pj->at);
        copy3(j->axis, pj->axis);
        j->motor_part.set = -1;
        add_holding_parts(m, pj, &f, j);
        add_rotation_springs(e, m, pj, &f);
        if (pj->type == JOINT_REVOLUTE || pj->type == JOINT_PRISMATIC)
            add_coordinate_elements(e, m, pj, &f, j);
    }
    return true;
}

/* Explicit methods integrate bodies but cannot hold joints, whose multipliers have no dynamics. */
static void check_method(Elab *e, const srd_model *m)
{
    const char *method = m->simulate.present && m->simulate.method ? m->simulate.method : "";
    bool explicit = !strcmp(method, "euler") || !strcmp(method, "verlet") || !strcmp(method, "rk4");
    if (explicit && e->joints.n) {
        Diag *d = diag_error(e->joints.a[0].loc, "joint `%s` needs an implicit method, but simulate uses %s",
                             e->joints.a[0].name, method);
        diag_hint(d, "joints hold exactly through multipliers solved with each step: use implicit_euler, "
                     "implicit_midpoint or newmark");
    }
}

void rigid_fix_world(Elab *e, srd_model *m)
{
    check_method(e, m);
    for (int k = 0; k < m->n_bodies; k++)
        if (m->bodies[k].world)
            for (int c = 3; c < 6; c++)
                if (!m->dof_fixed[m->node_dof[m->bodies[k].node] + c]) {
                    m->dof_fixed[m->node_dof[m->bodies[k].node] + c] = 1;
                    m->n_fixed++;
                }
}

/* A motor whose target changes with time: an actuation of its element's `target` column. */
void rigid_add_motors(Elab *e, srd_model *m)
{
    for (int k = 0; k < e->joints.n; k++) {
        const PendingJoint *pj = &e->joints.a[k];
        const srd_joint *j = &m->joints[k];
        if (j->motor_part.set < 0 || pj->target_expr < 0)
            continue;
        m->actuations = srd_xrealloc(m->actuations, sizeof *m->actuations * (size_t)(m->n_actuations + 1));
        srd_actuation *a = &m->actuations[m->n_actuations++];
        memset(a, 0, sizeof *a);
        a->target = srd_xstrdup("motor");
        a->set = j->motor_part.set;
        a->n = 1;
        a->instances = srd_xcalloc(1, sizeof(int));
        a->instances[0] = j->motor_part.instance;
        a->expr = pj->target_expr;
    }
}

/* ---- ground contact ---- */

enum { RIM_POINTS = 12, MAX_TOUCH = 512 }; /* a mesh touches by its first 512 vertices */

/* The points (and sphere radii about them) by which a shape touches a plane: a sphere's and a
 * capsule's centres, a box's corners, points on a cylinder's two rims. Returns the count. */
static int touch_points(const srd_body *b, double (*r)[4])
{
    double h = b->size[1] / 2, R = b->size[0];
    int n = 0;
    if (b->shape == SRD_SHAPE_SPHERE || b->shape == SRD_SHAPE_CAPSULE)
        for (int k = 0; k < (b->shape == SRD_SHAPE_SPHERE ? 1 : 2); k++) {
            double z = b->shape == SRD_SHAPE_SPHERE ? 0 : k ? h : -h;
            r[n][0] = r[n][1] = 0, r[n][2] = z, r[n++][3] = R;
        }
    else if (b->shape == SRD_SHAPE_BOX)
        for (int k = 0; k < 8; k++) {
            for (int c = 0; c < 3; c++)
                r[n][c] = (k >> c & 1 ? 0.5 : -0.5) * b->size[c];
            r[n++][3] = 0;
        }
    else if (b->shape == SRD_SHAPE_MESH)
        for (int k = 0; k < b->n_points && n < MAX_TOUCH; k++) {
            memcpy(r[n], &b->points[3 * k], 3 * sizeof(double));
            r[n++][3] = 0;
        }
    else if (b->shape == SRD_SHAPE_CYLINDER)
        for (int k = 0; k < 2 * RIM_POINTS; k++) {
            double a = 2 * PI * (k % RIM_POINTS) / RIM_POINTS;
            r[n][0] = R * cos(a), r[n][1] = R * sin(a), r[n][2] = k < RIM_POINTS ? -h : h, r[n++][3] = 0;
        }
    return n;
}

void rigid_add_ground(srd_model *m)
{
    static const char *cn[] = { "rx", "ry", "rz", "radius", "kc", "delta", "px", "py", "pz", "nx", "ny", "nz" };
    static const char *fn[] = { "rx", "ry", "rz", "radius", "kc", "delta", "mu", "slip_velocity",
                                "px", "py", "pz", "nx", "ny", "nz" };
    const double *p = m->ground_point, *n = m->ground_normal;
    for (int k = 0; k < m->n_bodies; k++) {
        const srd_body *b = &m->bodies[k];
        double r[MAX_TOUCH][4];
        int count = b->world ? 0 : touch_points(b, r);
        for (int i = 0; i < count; i++) {
            double c[12] = { r[i][0], r[i][1], r[i][2], r[i][3], m->ground_stiffness, m->ground_delta,
                             p[0], p[1], p[2], n[0], n[1], n[2] };
            double f[14] = { r[i][0], r[i][1], r[i][2], r[i][3], m->ground_stiffness, m->ground_delta,
                             m->ground_friction, m->ground_slip_velocity, p[0], p[1], p[2], n[0], n[1], n[2] };
            int cs = srd_model_elemset(m, "body_ground_contact", 1, 0, 12, cn);
            srd_elemset_add(&m->sets[cs], &b->node, NULL, NULL, c, b->object);
            if (m->ground_friction > 0) {
                int fs = srd_model_elemset(m, "body_ground_friction", 1, 0, 14, fn);
                srd_elemset_add(&m->sets[fs], &b->node, NULL, NULL, f, b->object);
            }
        }
    }
}

/* ---- obstacles ---- */

/* The obstacle's own values after (kc, delta[, mu, slip_velocity]): centre and shape sizes. */
static int obstacle_values(const srd_obstacle *o, const char **names, double *v)
{
    static const char *sphere[] = { "cx", "cy", "cz", "obstacle_radius" };
    static const char *box[] = { "cx", "cy", "cz", "hx", "hy", "hz" };
    static const char *cyl[] = { "cx", "cy", "cz", "ux", "uy", "uz", "obstacle_radius", "half_length" };
    bool s = !strcmp(o->shape, "sphere"), b = !strcmp(o->shape, "box");
    const char **src = s ? sphere : b ? box : cyl;
    int n = s ? 4 : b ? 6 : 8;
    double vals[8] = { o->center[0], o->center[1], o->center[2] };
    if (s)
        vals[3] = o->radius;
    else if (b)
        for (int c = 0; c < 3; c++)
            vals[3 + c] = o->size[c] / 2;
    else {
        memcpy(&vals[3], o->axis, 3 * sizeof(double));
        vals[6] = o->radius;
        vals[7] = o->length > 0 ? o->length / 2 : 1e30;
    }
    memcpy(names, src, sizeof(char *) * (size_t)n);
    memcpy(v, vals, sizeof(double) * (size_t)n);
    return n;
}

/* The columns of a moving obstacle or a plane after (kc, delta[, mu, slip_velocity]): its pose
 * and the step-start pose (std.contact's body_moving_* and body_plane_* kinds). */
static int moving_values(const srd_obstacle *o, const char **names, double *v)
{
    PoseColumns p = { { NULL }, { 0 }, 0 };
    elab_moving_columns(o, "obstacle_radius", &p);
    memcpy(names, p.names, sizeof(char *) * (size_t)p.n);
    memcpy(v, p.values, sizeof(double) * (size_t)p.n);
    return p.n;
}

/* One body point against obstacle k: its contact and (with friction) friction instance. */
static void add_obstacle_point(srd_model *m, int k, const srd_body *b, const double *r)
{
    const srd_obstacle *o = &m->obstacles[k];
    bool moving = o->moving || !strcmp(o->shape, "plane");
    const char *names[40] = { "rx", "ry", "rz", "radius", "kc", "delta" }, *shape_names[24];
    double v[40] = { r[0], r[1], r[2], r[3], o->stiffness, o->delta }, shape[24];
    int ns = moving ? moving_values(o, shape_names, shape) : obstacle_values(o, shape_names, shape);
    char kind[64];
    for (int f = 0; f < (o->friction > 0 ? 2 : 1); f++) {
        int n = 6;
        if (f) {
            names[n] = "mu", v[n++] = o->friction;
            names[n] = "slip_velocity", v[n++] = o->slip_velocity;
        }
        for (int i = 0; i < ns; i++)
            names[n] = shape_names[i], v[n++] = shape[i];
        names[n] = "which", v[n++] = k;
        snprintf(kind, sizeof kind, "body_%s%s_%s", o->moving ? "moving_" : "", o->shape, f ? "friction" : "contact");
        int set = srd_model_elemset(m, kind, 1, 0, n, names);
        srd_elemset_add(&m->sets[set], &b->node, NULL, NULL, v, b->object);
    }
}

void rigid_add_obstacles(srd_model *m)
{
    for (int k = 0; k < m->n_obstacles; k++)
        for (int i = 0; i < m->n_bodies; i++) {
            double r[MAX_TOUCH][4];
            int count = m->bodies[i].world ? 0 : touch_points(&m->bodies[i], r);
            for (int p = 0; p < count; p++)
                add_obstacle_point(m, k, &m->bodies[i], r[p]);
        }
}
