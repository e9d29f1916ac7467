/* objects.c — materials, rods, shells and bodies: reads their blocks, runs the path and mesh
 * generators, and appends nodes, edges, triangles and hinges to the model under construction. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elab_internal.h"
#include "geom.h"

#define PI 3.14159265358979323846

/* Every model must fit in memory on a workstation; fuzzed loops must not exhaust it. */
enum { MAX_MODEL_NODES = 4000000 };

/* ---- geometry call arguments ---- */

typedef enum { A_POINT, A_LENGTH, A_ANGLE, A_NUMBER, A_DIRECTION, A_WORD, A_STRING } ArgKind;

typedef struct ArgSpec {
    const char *name;
    ArgKind     kind;
    bool        required;
} ArgSpec;

typedef struct GeomSig {
    const char *fn;
    const char *usage;
    ArgSpec     args[6];
    int         n;
    bool        variadic_points; /* polyline */
} GeomSig;

static const GeomSig sigs[] = {
    { "line", "line(from, to)", { { "from", A_POINT, true }, { "to", A_POINT, true } }, 2, false },
    { "polyline", "polyline(p1, p2, ...)", { { 0 } }, 0, true },
    { "arc", "arc(center, radius, from, to, axis = (0, 0, 1))",
      { { "center", A_POINT, true }, { "radius", A_LENGTH, true }, { "from", A_ANGLE, true }, { "to", A_ANGLE, true },
        { "axis", A_DIRECTION, false } }, 5, false },
    { "circle", "circle(center, radius, axis = (0, 0, 1), start = 0 deg)",
      { { "center", A_POINT, true }, { "radius", A_LENGTH, true }, { "axis", A_DIRECTION, false },
        { "start", A_ANGLE, false } }, 4, false },
    { "helix", "helix(center, radius, pitch, turns, axis = (0, 0, 1))",
      { { "center", A_POINT, true }, { "radius", A_LENGTH, true }, { "pitch", A_LENGTH, true },
        { "turns", A_NUMBER, true }, { "axis", A_DIRECTION, false } }, 5, false },
    { "rectangle", "rectangle(length, width, spacing, pattern = equilateral, origin = (0, 0, 0) m, seed = 1)",
      { { "length", A_LENGTH, true }, { "width", A_LENGTH, true }, { "spacing", A_LENGTH, true },
        { "pattern", A_WORD, false }, { "origin", A_POINT, false }, { "seed", A_NUMBER, false } }, 6, false },
    { "hexagon", "hexagon(radius, spacing, center = (0, 0, 0) m)",
      { { "radius", A_LENGTH, true }, { "spacing", A_LENGTH, true }, { "center", A_POINT, false } }, 3, false },
    { "disc", "disc(radius, spacing, center = (0, 0, 0) m)",
      { { "radius", A_LENGTH, true }, { "spacing", A_LENGTH, true }, { "center", A_POINT, false } }, 3, false },
    { "sphere", "sphere(radius, spacing, center = (0, 0, 0) m); a lattice's sphere(radius, center = (0, 0, 0) m)",
      { { "radius", A_LENGTH, true }, { "spacing", A_LENGTH, false }, { "center", A_POINT, false } }, 3, false },
    { "box", "box(size, origin = (0, 0, 0) m)", { { "size", A_POINT, true }, { "origin", A_POINT, false } }, 2, false },
    { "cylinder", "cylinder(radius, length, base = (0, 0, 0) m, axis = (0, 0, 1))",
      { { "radius", A_LENGTH, true }, { "length", A_LENGTH, true }, { "base", A_POINT, false },
        { "axis", A_DIRECTION, false } }, 4, false },
    { "gmsh", "gmsh(\"file.msh\", scale = 1 m)", { { "file", A_STRING, true }, { "scale", A_LENGTH, false } }, 2, false },
    { "tetgen", "tetgen(\"file\", scale = 1 m)  (file.node and file.ele)",
      { { "file", A_STRING, true }, { "scale", A_LENGTH, false } }, 2, false },
    { "filled", "filled(\"surface.stl\", scale = 1 m)  (or .obj)",
      { { "file", A_STRING, true }, { "scale", A_LENGTH, false } }, 2, false },
    { "obj", "obj(\"file.obj\", scale = 1 m)", { { "file", A_STRING, true }, { "scale", A_LENGTH, false } }, 2, false },
    { "dismech", "dismech(\"file.txt\", scale = 1 m)", { { "file", A_STRING, true }, { "scale", A_LENGTH, false } }, 2, false },
    { "circular", "circular(radius)", { { "radius", A_LENGTH, true } }, 1, false },
    { "elliptic", "elliptic(a, b)", { { "a", A_LENGTH, true }, { "b", A_LENGTH, true } }, 2, false },
    { "rectangular", "rectangular(width, height)", { { "width", A_LENGTH, true }, { "height", A_LENGTH, true } }, 2, false },
};

static const GeomSig *find_sig(const char *fn)
{
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (!strcmp(sigs[i].fn, fn))
            return &sigs[i];
    return NULL;
}

static bool arg_fits(ArgKind k, const Value *v)
{
    Dims L = dims_of(1, 0, 0, 0);
    switch (k) {
    case A_POINT: return v->kind == V_NUM && v->n == 3 && (v->any_dims || dims_eq(v->dims, L));
    case A_LENGTH: return v->kind == V_NUM && v->n == 1 && (v->any_dims || dims_eq(v->dims, L));
    case A_ANGLE:
    case A_NUMBER: return v->kind == V_NUM && v->n == 1 && (v->any_dims || dims_is_dimless(v->dims));
    case A_DIRECTION: return v->kind == V_NUM && v->n == 3 && (v->any_dims || dims_is_dimless(v->dims));
    case A_WORD: return v->kind == V_WORD;
    case A_STRING: return v->kind == V_STR;
    }
    return false;
}

static const char *arg_kind_text(ArgKind k)
{
    static const char *t[] = { "a point (3-vector of lengths)", "a length", "an angle", "a number",
                               "a direction (dimensionless 3-vector)", "a word", "a file name string" };
    return t[k];
}

/* Matches positional and named arguments to the signature; out[k] is V_ERR when absent. */
static bool bind_args(const Geom *g, const GeomSig *sig, Value *out, SrcLoc *locs)
{
    for (int k = 0; k < sig->n; k++) {
        out[k] = value_error();
        locs[k] = g->loc;
    }
    bool ok = true, named_seen = false;
    int pos = 0;
    for (int i = 0; i < g->n_args; i++) {
        int k;
        if (g->names[i]) {
            named_seen = true;
            for (k = 0; k < sig->n && strcmp(sig->args[k].name, g->names[i]); k++) {}
            if (k == sig->n) {
                Diag *d = diag_error(g->locs[i], "`%s` has no argument `%s`", g->fn, g->names[i]);
                diag_hint(d, "usage: %s", sig->usage);
                ok = false;
                continue;
            }
        } else {
            if (named_seen) {
                diag_error(g->locs[i], "positional arguments must come before named ones");
                ok = false;
                continue;
            }
            k = pos++;
            if (k >= sig->n) {
                Diag *d = diag_error(g->locs[i], "too many arguments to `%s`", g->fn);
                diag_hint(d, "usage: %s", sig->usage);
                ok = false;
                continue;
            }
        }
        if (out[k].kind != V_ERR) {
            diag_error(g->locs[i], "argument `%s` of `%s` is given twice", sig->args[k].name, g->fn);
            ok = false;
            continue;
        }
        if (!arg_fits(sig->args[k].kind, &g->args[i])) {
            char have[128];
            value_describe(&g->args[i], have, sizeof have);
            Diag *d = diag_error(g->locs[i], "argument `%s` of `%s` must be %s, but this is %s", sig->args[k].name, g->fn,
                                 arg_kind_text(sig->args[k].kind), have);
            diag_hint(d, "usage: %s", sig->usage);
            ok = false;
            continue;
        }
        if (!g->args[i].known) {
            diag_error(g->locs[i], "geometry must be known when the model is built, but this depends on `%s`",
                       g->args[i].param);
            ok = false;
            continue;
        }
        out[k] = g->args[i];
        locs[k] = g->locs[i];
    }
    for (int k = 0; k < sig->n && ok; k++)
        if (sig->args[k].required && out[k].kind == V_ERR) {
            Diag *d = diag_error(g->loc, "`%s` is missing its argument `%s`", g->fn, sig->args[k].name);
            diag_hint(d, "usage: %s", sig->usage);
            ok = false;
        }
    return ok;
}

static const double *vec_or(const Value *v, const double *dflt) { return v->kind == V_NUM ? v->v : dflt; }

/* Resolves a file name relative to the .srd file that mentions it. */
static const char *relative_path(Elab *e, const char *name, SrcLoc loc)
{
    const char *src = src_path(loc.file);
    const char *slash = strrchr(src, '/');
    if (name[0] == '/' || !slash)
        return name;
    return arena_printf(e->arena, "%.*s/%s", (int)(slash - src), src, name);
}

/* ---- rods ---- */

static double path_length_estimate(const Geom *g, const Value *a)
{
    const char *fn = g->fn;
    if (!strcmp(fn, "line")) {
        double d2 = 0;
        for (int c = 0; c < 3; c++)
            d2 += (a[1].v[c] - a[0].v[c]) * (a[1].v[c] - a[0].v[c]);
        return sqrt(d2);
    }
    if (!strcmp(fn, "arc"))
        return a[1].v[0] * fabs(a[3].v[0] - a[2].v[0]);
    if (!strcmp(fn, "circle"))
        return 2 * PI * a[1].v[0];
    if (!strcmp(fn, "helix")) {
        double turn = hypot(2 * PI * a[1].v[0], a[2].v[0]);
        return turn * a[3].v[0];
    }
    return 0;
}

static bool polyline_points(Elab *e, const Geom *g, double **pts, int *n)
{
    if (g->n_args < 2) {
        diag_error(g->loc, "`polyline` needs at least two points");
        return false;
    }
    *pts = arena_alloc(e->arena, sizeof(double) * 3 * (size_t)g->n_args);
    for (int i = 0; i < g->n_args; i++) {
        if (g->names[i] || !arg_fits(A_POINT, &g->args[i])) {
            char have[128];
            value_describe(&g->args[i], have, sizeof have);
            diag_error(g->locs[i], "`polyline` takes points (3-vectors of lengths), but this is %s", have);
            return false;
        }
        memcpy(*pts + 3 * i, g->args[i].v, 3 * sizeof(double));
    }
    *n = g->n_args;
    return true;
}

/* Samples the rod's path; the node count comes from `nodes` or from `spacing`. */
static bool build_path(Elab *e, const Geom *g, const PropValues *pv, const Stmt *s, GeomPath *path)
{
    static const double z_axis[3] = { 0, 0, 1 };
    const GeomSig *sig = find_sig(g->fn);
    Value a[6];
    SrcLoc locs[6];
    double *pts = NULL;
    int n_pts = 0;
    if (sig->variadic_points) {
        if (!polyline_points(e, g, &pts, &n_pts))
            return false;
    } else if (!bind_args(g, sig, a, locs)) {
        return false;
    }
    bool has_nodes = prop_given(pv, "nodes"), has_spacing = prop_given(pv, "spacing");
    if (has_nodes == has_spacing && !pv->n_unknown) {
        Diag *d = diag_error(s->loc, has_nodes ? "give either `nodes` or `spacing`, not both"
                                               : "a rod needs `nodes` or `spacing` to be discretised");
        diag_hint(d, "for example `nodes = 51;` or `spacing = 2 mm;`");
        return false;
    }
    if (has_nodes == has_spacing)
        return false;
    int n;
    if (has_nodes) {
        const Value *v = prop_get(pv, "nodes");
        if (!v)
            return false;
        if (v->v[0] > MAX_MODEL_NODES) {
            diag_error(s->loc, "a rod of %g nodes is too large", v->v[0]);
            return false;
        }
        n = (int)v->v[0];
    } else {
        const Value *v = prop_get(pv, "spacing");
        if (!v)
            return false;
        double len = pts ? geom_polyline_length(pts, n_pts) : path_length_estimate(g, a);
        if (!(v->v[0] > 0)) {
            diag_error(prop_loc(pv, "spacing", s->loc), "`spacing` must be positive");
            return false;
        }
        double count = round(len / v->v[0]);
        if (count > MAX_MODEL_NODES) {
            diag_error(s->loc, "a spacing of %g m gives too many nodes", v->v[0]);
            return false;
        }
        n = (int)count + (strcmp(g->fn, "circle") ? 1 : 0);
        if (n < 2)
            n = 2;
    }
    const char *err;
    if (!strcmp(g->fn, "line"))
        err = geom_line(a[0].v, a[1].v, n, path);
    else if (!strcmp(g->fn, "polyline"))
        err = geom_polyline(pts, n_pts, n, path);
    else if (!strcmp(g->fn, "arc"))
        err = geom_arc(a[0].v, a[1].v[0], a[2].v[0], a[3].v[0], vec_or(&a[4], z_axis), n, path);
    else if (!strcmp(g->fn, "circle"))
        err = geom_circle(a[0].v, a[1].v[0], vec_or(&a[2], z_axis), a[3].kind == V_NUM ? a[3].v[0] : 0, n, path);
    else
        err = geom_helix(a[0].v, a[1].v[0], a[2].v[0], a[3].v[0], vec_or(&a[4], z_axis), n, path);
    if (err) {
        /* A count problem belongs to `nodes`/`spacing`; the rest to the path. */
        SrcLoc at = prop_loc(pv, "path", s->loc);
        if (strstr(err, "node"))
            at = prop_loc(pv, has_nodes ? "nodes" : "spacing", at);
        diag_error(at, "%s", err);
        return false;
    }
    return true;
}

/* Section constants of a circle of radius R (each in the order of operations of its plain
 * formula, dual.h). */
static void circular_section(ElabObj *o, Dual R)
{
    Dual R4 = dual_powi(R, 4);
    o->radius = R;
    o->area = dual_mul(dual_scale(PI, R), R);
    o->I1 = o->I2 = dual_divc(dual_scale(PI, R4), 4);
    o->J = dual_divc(dual_scale(PI, R4), 2);
}

/* PI p^i q^j, its factors multiplied left to right: PI * p * ... * q * ... */
static Dual pi_product(Dual p, int i, Dual q, int j)
{
    Dual x = dual_const(PI);
    for (int k = 0; k < i; k++)
        x = dual_mul(x, p);
    for (int k = 0; k < j; k++)
        x = dual_mul(x, q);
    return x;
}

/* Semi-axes a along the second material director d2 and b along the first, d1. */
static void elliptic_section(ElabObj *o, Dual a, Dual b)
{
    o->area = pi_product(a, 1, b, 1);
    o->I1 = dual_divc(pi_product(a, 1, b, 3), 4);
    o->I2 = dual_divc(pi_product(a, 3, b, 1), 4);
    o->J = dual_div(pi_product(a, 3, b, 3), dual_add(dual_mul(a, a), dual_mul(b, b)));
    o->radius = dual_sqrt(dual_mul(a, b));
}

/* p q^3 as p * q * q * q */
static Dual cube_product(Dual p, Dual q) { return dual_mul(dual_mul(dual_mul(p, q), q), q); }

/* Width p along d2, height q along d1 (vertical for a rod along x); Saint-Venant torsion
 * constant series in the short side h over the long side w. */
static void rectangular_section(ElabObj *o, Dual p, Dual q)
{
    Dual w = p.v >= q.v ? p : q, h = p.v >= q.v ? q : p;
    Dual r = dual_div(h, w);
    Dual series = dual_sub(dual_const(1.0 / 3),
                           dual_mul(dual_scale(0.21, r), dual_sub(dual_const(1), dual_divc(dual_powi(r, 4), 12))));
    o->area = dual_mul(p, q);
    o->I1 = dual_divc(cube_product(p, q), 12);
    o->I2 = dual_divc(cube_product(q, p), 12);
    o->J = dual_mul(cube_product(w, h), series);
    o->radius = dual_sqrt(dual_divc(dual_mul(p, q), PI));
}


/* Area, area moments and torsion constant of the rod's cross-section. */
static bool rod_section(Elab *e, const PropValues *pv, const Stmt *s, ElabObj *o)
{
    (void)e;
    const Value *r = prop_get(pv, "radius");
    const Value *sec = prop_get(pv, "section");
    if (prop_given(pv, "radius") == prop_given(pv, "section")) {
        if (pv->n_unknown)
            return false; /* a misspelled `radius` was reported already */
        Diag *d = diag_error(s->loc, prop_given(pv, "radius") ? "give either `radius` or `section`, not both"
                                                              : "rod `%s` is missing its cross-section", o->name);
        diag_hint(d, "add `radius = 1 mm;` or `section = rectangular(20 mm, 1 mm);`");
        return false;
    }
    if (r) {
        Dual R = value_dual(r, 0);
        if (!(R.v > 0)) {
            diag_error(prop_loc(pv, "radius", s->loc), "the radius of rod `%s` must be positive", o->name);
            return false;
        }
        circular_section(o, R);
        return true;
    }
    if (!sec)
        return false;
    const GeomSig *sig = find_sig(sec->geom->fn);
    Value a[6];
    SrcLoc locs[6];
    if (!bind_args(sec->geom, sig, a, locs))
        return false;
    Dual p = value_dual(&a[0], 0), q = sig->n > 1 ? value_dual(&a[1], 0) : p;
    if (!(p.v > 0) || !(q.v > 0)) {
        diag_error(sec->geom->loc, "cross-section dimensions must be positive");
        return false;
    }
    if (!strcmp(sig->fn, "circular"))
        circular_section(o, p);
    else if (!strcmp(sig->fn, "elliptic"))
        elliptic_section(o, p, q);
    else
        rectangular_section(o, p, q);
    return true;
}

static ElabMaterial *rod_material(Elab *e, const PropValues *pv)
{
    const Value *m = prop_get(pv, "material");
    return m ? &e->mats.a[m->index] : NULL;
}

static bool room_for(Elab *e, int n, SrcLoc loc)
{
    if ((long)e->node_obj.n + n <= MAX_MODEL_NODES)
        return true;
    diag_error(loc, "the model would have more than %d nodes", MAX_MODEL_NODES);
    return false;
}

static int add_node(Elab *e, const double x[3], int obj, int local)
{
    for (int c = 0; c < 3; c++)
        DPUSH(e->x0, x[c]);
    DPUSH(e->node_obj, obj);
    DPUSH(e->node_local, local);
    DPUSH(e->node_fix, (unsigned char)0);
    DPUSH(e->body_mass, dual_const(0));
    return e->node_obj.n - 1;
}

static int add_edge(Elab *e, int a, int b, int obj)
{
    DPUSH(e->edge_nodes, a);
    DPUSH(e->edge_nodes, b);
    DPUSH(e->edge_obj, obj);
    DPUSH(e->edge_fix, (unsigned char)0);
    return e->edge_obj.n - 1;
}

/* The first run-time param any of the properties depends on, or NULL. */
static const char *first_param(const PropValues *pv, const char *const *names)
{
    for (int k = 0; names[k]; k++) {
        const Value *v = prop_get(pv, names[k]);
        if (v && v->param)
            return v->param;
    }
    return NULL;
}

void elab_material(Elab *e, Stmt *s, const char *name)
{
    PropValues pv;
    char owner[160];
    snprintf(owner, sizeof owner, "material `%s`", name);
    props_read(e, s, &pv, owner);
    bool ok = props_complete(s, &pv, owner);
    ElabMaterial m;
    memset(&m, 0, sizeof m);
    m.name = name;
    m.loc = s->name_loc;
    m.E = prop_dual(&pv, "E", dual_const(NAN));
    m.rho = prop_dual(&pv, "rho", dual_const(NAN));
    m.nu = prop_dual(&pv, "nu", dual_const(0.5));
    m.has_nu = prop_given(&pv, "nu");
    m.runtime_param = first_param(&pv, (const char *const[]){ "E", "rho", "nu", NULL });
    if (ok && !(m.E.v > 0)) {
        diag_error(prop_loc(&pv, "E", s->loc), "Young's modulus of `%s` must be positive", name);
        ok = false;
    }
    if (ok && !(m.rho.v > 0)) {
        diag_error(prop_loc(&pv, "rho", s->loc), "the density of `%s` must be positive", name);
        ok = false;
    }
    if (ok && !(m.nu.v > -1 && m.nu.v <= 0.5)) {
        Diag *d = diag_error(prop_loc(&pv, "nu", s->loc), "Poisson's ratio of `%s` is %g, outside (-1, 0.5]", name, m.nu.v);
        diag_hint(d, "rubber-like materials are close to 0.5");
        ok = false;
    }
    /* A bad material is still declared, so that its uses do not pile up further errors. */
    DPUSH(e->mats, m);
}

static Dual shear_modulus(const ElabMaterial *m)
{
    return dual_div(m->E, dual_scale(2, dual_add(dual_const(1), m->nu)));
}

void elab_rod(Elab *e, Stmt *s, const char *name)
{
    PropValues pv;
    char owner[160];
    snprintf(owner, sizeof owner, "rod `%s`", name);
    props_read(e, s, &pv, owner);
    if (!props_complete(s, &pv, owner))
        return;
    ElabObj o;
    memset(&o, 0, sizeof o);
    o.name = name;
    o.kind = SRD_OBJ_ROD;
    o.loc = s->name_loc;
    ElabMaterial *mat = rod_material(e, &pv);
    if (!mat || !rod_section(e, &pv, s, &o))
        return;
    GeomPath path;
    memset(&path, 0, sizeof path);
    if (!build_path(e, prop_get(&pv, "path")->geom, &pv, s, &path) || !room_for(e, path.n_nodes, s->loc)) {
        geom_path_free(&path);
        return;
    }
    o.E = mat->E;
    o.nu = mat->nu;
    o.rho = mat->rho;
    o.G = shear_modulus(mat);
    const Value *k = prop_get(&pv, "curvature");
    if (k) {
        o.kappa_bar[0] = value_dual(k, 0);
        o.kappa_bar[1] = value_dual(k, 1);
    }
    o.tau_bar = prop_dual(&pv, "twist", dual_const(0));
    o.natural_given = prop_given(&pv, "curvature") || prop_given(&pv, "twist");
    o.closed = path.closed;
    int oi = e->objs.n;
    o.first_node = e->node_obj.n;
    o.n_nodes = path.n_nodes;
    o.first_edge = e->edge_obj.n;
    o.n_edges = path.closed ? path.n_nodes : path.n_nodes - 1;
    o.s = malloc(sizeof(double) * (size_t)path.n_nodes);
    for (int i = 0; i < path.n_nodes; i++)
        add_node(e, path.x + 3 * i, oi, i);
    double total = 0;
    for (int i = 0; i < o.n_edges; i++) {
        int a = i, b = (i + 1) % path.n_nodes;
        add_edge(e, o.first_node + a, o.first_node + b, oi);
        o.s[i] = total;
        total += sqrt(pow(path.x[3 * b] - path.x[3 * a], 2) + pow(path.x[3 * b + 1] - path.x[3 * a + 1], 2) +
                      pow(path.x[3 * b + 2] - path.x[3 * a + 2], 2));
    }
    if (!path.closed)
        o.s[path.n_nodes - 1] = total;
    for (int i = 0; i < path.n_nodes; i++)
        o.s[i] /= total;
    o.length = total;
    o.mass = dual_scale(total, dual_mul(o.rho, o.area));
    o.EA = prop_dual(&pv, "EA", dual_mul(o.E, o.area));
    o.EI1 = prop_dual(&pv, "EI", dual_mul(o.E, o.I1));
    o.EI2 = prop_dual(&pv, "EI", dual_mul(o.E, o.I2));
    o.GJ = prop_dual(&pv, "GJ", dual_mul(o.G, o.J));
    geom_path_free(&path);
    DPUSH(e->objs, o);
}

/* ---- shells ---- */

static bool build_mesh(Elab *e, const Geom *g, GeomMesh *mesh)
{
    const GeomSig *sig = find_sig(g->fn);
    Value a[6];
    SrcLoc locs[6];
    if (!bind_args(g, sig, a, locs))
        return false;
    static const double origin0[3] = { 0, 0, 0 };
    const char *err = NULL;
    char ferr[512];
    if (!strcmp(g->fn, "rectangle")) {
        MeshPattern pat = MESH_EQUILATERAL;
        if (a[3].kind == V_WORD) {
            static const char *names[] = { "equilateral", "equilateral_aligned", "right_isosceles", "random", "nonuniform" };
            int k = 0;
            while (k < 5 && strcmp(names[k], a[3].str))
                k++;
            if (k == 5) {
                Diag *d = diag_error(locs[3], "unknown mesh pattern `%s`", a[3].str);
                const char *close = diag_closest(a[3].str, names, 5);
                diag_hint(d, close ? "did you mean `%s`?" : "patterns: equilateral, equilateral_aligned, right_isosceles, random, nonuniform",
                          close);
                return false;
            }
            pat = (MeshPattern)k;
        }
        unsigned seed = a[5].kind == V_NUM ? (unsigned)a[5].v[0] : 1u;
        err = geom_rectangle(vec_or(&a[4], origin0), a[0].v[0], a[1].v[0], a[2].v[0], pat, seed, mesh);
    } else if (!strcmp(g->fn, "hexagon")) {
        err = geom_hexagon(vec_or(&a[2], origin0), a[0].v[0], a[1].v[0], mesh);
    } else if (!strcmp(g->fn, "disc")) {
        err = geom_disc(vec_or(&a[2], origin0), a[0].v[0], a[1].v[0], mesh);
    } else if (!strcmp(g->fn, "sphere")) {
        if (a[1].kind != V_NUM) {
            Diag *d = diag_error(g->loc, "a sphere mesh needs its `spacing`");
            diag_hint(d, "usage: sphere(radius, spacing, center = (0, 0, 0) m)");
            return false;
        }
        err = geom_sphere(vec_or(&a[2], origin0), a[0].v[0], a[1].v[0], mesh);
    } else {
        const char *path = relative_path(e, a[0].str, g->loc);
        double scale = a[1].kind == V_NUM ? a[1].v[0] : 1.0;
        bool ok = !strcmp(g->fn, "obj") ? geom_read_obj(path, scale, mesh, ferr, sizeof ferr)
                                        : geom_read_dismech(path, scale, mesh, ferr, sizeof ferr);
        if (!ok) {
            /* The importer's message names the file itself unless it points at a line. */
            if (!strncmp(ferr, "line ", 5))
                diag_error(locs[0], "mesh file `%s`, %s", path, ferr);
            else
                diag_error(locs[0], "%s", ferr);
            return false;
        }
    }
    if (err) {
        diag_error(g->loc, "%s", err);
        return false;
    }
    return true;
}

typedef struct EdgeKey {
    int a, b;   /* a < b */
    int tri, k; /* first triangle using it and the local index of the opposite vertex */
} EdgeKey;

static int edge_key_cmp(const void *p, const void *q)
{
    const EdgeKey *x = p, *y = q;
    if (x->a != y->a)
        return x->a < y->a ? -1 : 1;
    if (x->b != y->b)
        return x->b < y->b ? -1 : 1;
    return x->tri < y->tri ? -1 : x->tri > y->tri;
}

/* Derives the shell's unique edges and its hinges (edges shared by two triangles). */
static bool shell_topology(Elab *e, ElabObj *o, const GeomMesh *mesh, SrcLoc loc)
{
    int nt = mesh->n_tris;
    EdgeKey *keys = malloc(sizeof *keys * (size_t)(3 * nt + 1));
    for (int t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++) {
            int p = mesh->tri[3 * t + (k + 1) % 3], q = mesh->tri[3 * t + (k + 2) % 3];
            EdgeKey key = { p < q ? p : q, p < q ? q : p, t, k };
            keys[3 * t + k] = key;
        }
    qsort(keys, (size_t)(3 * nt), sizeof *keys, edge_key_cmp);
    int oi = e->objs.n;
    o->first_edge = e->edge_obj.n;
    o->first_hinge = e->hinge_edge.n;
    bool ok = true;
    for (int i = 0; i < 3 * nt;) {
        int j = i;
        while (j < 3 * nt && keys[j].a == keys[i].a && keys[j].b == keys[i].b)
            j++;
        if (j - i > 2) {
            Diag *d = diag_error(loc, "shell `%s` is not a manifold: the edge between nodes %d and %d belongs to %d triangles",
                                 o->name, keys[i].a, keys[i].b, j - i);
            diag_hint(d, "every edge of a shell mesh may belong to one or two triangles");
            ok = false;
            break;
        }
        int edge = add_edge(e, o->first_node + keys[i].a, o->first_node + keys[i].b, oi);
        for (int k = i; k < j; k++)
            e->tri_edge.a[3 * (o->first_tri + keys[k].tri) + keys[k].k] = edge;
        if (j - i == 2) {
            /* Hinge nodes follow the first triangle's winding: it runs x0 -> x1 -> x2, so
             * every hinge measures its angle with the same orientation of the sheet. */
            const int *t0 = &mesh->tri[3 * keys[i].tri], *t1 = &mesh->tri[3 * keys[i + 1].tri];
            int k0 = keys[i].k;
            DPUSH(e->hinge_edge, edge);
            DPUSH(e->hinge_nodes, o->first_node + t0[(k0 + 1) % 3]);
            DPUSH(e->hinge_nodes, o->first_node + t0[(k0 + 2) % 3]);
            DPUSH(e->hinge_nodes, o->first_node + t0[k0]);
            DPUSH(e->hinge_nodes, o->first_node + t1[keys[i + 1].k]);
        }
        i = j;
    }
    free(keys);
    o->n_edges = e->edge_obj.n - o->first_edge;
    o->n_hinges = e->hinge_edge.n - o->first_hinge;
    return ok;
}

static double triangle_area(const double *x, const int *t)
{
    double u[3], v[3];
    for (int c = 0; c < 3; c++) {
        u[c] = x[3 * t[1] + c] - x[3 * t[0] + c];
        v[c] = x[3 * t[2] + c] - x[3 * t[0] + c];
    }
    double n0 = u[1] * v[2] - u[2] * v[1], n1 = u[2] * v[0] - u[0] * v[2], n2 = u[0] * v[1] - u[1] * v[0];
    return 0.5 * sqrt(n0 * n0 + n1 * n1 + n2 * n2);
}

void elab_shell(Elab *e, Stmt *s, const char *name)
{
    PropValues pv;
    char owner[160];
    snprintf(owner, sizeof owner, "shell `%s`", name);
    props_read(e, s, &pv, owner);
    if (!props_complete(s, &pv, owner))
        return;
    ElabMaterial *mat = rod_material(e, &pv);
    Dual h = prop_dual(&pv, "thickness", dual_const(0));
    if (!(h.v > 0)) {
        diag_error(prop_loc(&pv, "thickness", s->loc), "the thickness of shell `%s` must be positive", name);
        return;
    }
    GeomMesh mesh;
    memset(&mesh, 0, sizeof mesh);
    if (!mat || !build_mesh(e, prop_get(&pv, "mesh")->geom, &mesh) || !room_for(e, mesh.n_nodes, s->loc)) {
        geom_mesh_free(&mesh);
        return;
    }
    ElabObj o;
    memset(&o, 0, sizeof o);
    o.name = name;
    o.kind = SRD_OBJ_SHELL;
    o.loc = s->name_loc;
    o.E = mat->E;
    o.nu = mat->nu;
    o.rho = mat->rho;
    o.G = shear_modulus(mat);
    o.thickness = h;
    const Value *bend = prop_get(&pv, "bending");
    o.bending = bend && !strcmp(bend->str, "midedge") ? SRD_BEND_MIDEDGE : SRD_BEND_HINGE;
    const Value *stretch = prop_get(&pv, "stretching");
    o.stretching = stretch && !strcmp(stretch->str, "dismech_midedge") ? SHELL_STRETCH_DISMECH_MIDEDGE
                                                                       : SHELL_STRETCH_LATTICE;
    o.phi_bar = prop_dual(&pv, "angle", dual_const(0));
    o.natural_given = prop_given(&pv, "angle");
    int oi = e->objs.n;
    o.first_node = e->node_obj.n;
    o.n_nodes = mesh.n_nodes;
    for (int i = 0; i < mesh.n_nodes; i++)
        add_node(e, mesh.x + 3 * i, oi, i);
    o.first_tri = e->tri_obj.n;
    o.n_tris = mesh.n_tris;
    for (int t = 0; t < mesh.n_tris; t++) {
        for (int k = 0; k < 3; k++) {
            DPUSH(e->tri_nodes, o.first_node + mesh.tri[3 * t + k]);
            DPUSH(e->tri_edge, -1);
        }
        DPUSH(e->tri_obj, oi);
        o.area.v += triangle_area(mesh.x, &mesh.tri[3 * t]);
    }
    bool ok = shell_topology(e, &o, &mesh, s->loc);
    geom_mesh_free(&mesh);
    if (!ok)
        return;
    o.mass = dual_mul3(o.rho, h, o.area);
    DPUSH(e->objs, o);
}

/* ---- bodies ---- */

void elab_body(Elab *e, Stmt *s, const char *name)
{
    PropValues pv;
    char owner[160];
    snprintf(owner, sizeof owner, "body `%s`", name);
    props_read(e, s, &pv, owner);
    if (!props_complete(s, &pv, owner))
        return;
    bool rigid = elab_is_rigid(&pv);
    Dual mass = rigid ? dual_const(0) : prop_dual(&pv, "mass", dual_const(0));
    if (rigid && !elab_rigid_body(e, &pv, e->objs.n, &mass.v, s->name_loc, name))
        return;
    if (rigid) /* the same value; its derivative with it (a mesh's density follows the mass) */
        mass.d = e->rigids.a[e->rigids.n - 1].mass.d, mass.dep = e->rigids.a[e->rigids.n - 1].mass.dep;
    if (!rigid && !prop_given(&pv, "mass")) {
        Diag *d = diag_error(s->name_loc, "body `%s` needs a mass", name);
        diag_hint(d, "a point mass: `mass = 0.1 kg;`; a rigid body: a shape with its density or mass");
        return;
    }
    if (!(mass.v > 0)) {
        diag_error(prop_loc(&pv, "mass", s->loc), "the mass of body `%s` must be positive", name);
        return;
    }
    if (!room_for(e, 1, s->loc))
        return;
    ElabObj o;
    memset(&o, 0, sizeof o);
    o.name = name;
    o.kind = SRD_OBJ_BODY;
    o.loc = s->name_loc;
    o.mass = mass;
    o.first_node = e->node_obj.n;
    o.n_nodes = 1;
    o.first_edge = e->edge_obj.n;
    o.first_tri = e->tri_obj.n;
    o.first_hinge = e->hinge_edge.n;
    double at[3];
    memcpy(at, prop_get(&pv, "position")->v, sizeof at);
    if (rigid) /* a mesh's centre of mass lies off its origin */
        for (int c = 0; c < 3; c++)
            at[c] += e->rigids.a[e->rigids.n - 1].offset[c];
    int node = add_node(e, at, e->objs.n, 0);
    e->body_mass.a[node] = mass;
    DPUSH(e->objs, o);
}

/* ---- shared with lattice.c and rigid.c ---- */

bool elab_build_mesh(Elab *e, const Geom *g, GeomMesh *mesh) { return build_mesh(e, g, mesh); }

bool elab_geom_args(const Geom *g, Value *out, SrcLoc *locs)
{
    const GeomSig *sig = find_sig(g->fn);
    return sig && bind_args(g, sig, out, locs);
}

bool elab_room_for(Elab *e, int n, SrcLoc loc) { return room_for(e, n, loc); }
const char *elab_relative_path(Elab *e, const char *name, SrcLoc loc) { return relative_path(e, name, loc); }
int  elab_add_node(Elab *e, const double x[3], int obj, int local) { return add_node(e, x, obj, local); }
int  elab_add_edge(Elab *e, int a, int b, int obj) { return add_edge(e, a, b, obj); }
