/* lattice.c — volumetric mass–spring lattices: fills a box, a cylinder or a sphere with nodes on a
 * cubic, body-centred or face-centred grid, joins each node to its neighbours up to a chosen
 * shell with springs of one stiffness k = E a / beta (beta from the lattice's elastic constants,
 * so that its Young's modulus along the grid axes is E), and lumps rho over the part of each
 * node's Voronoi cell that lies inside the body. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elab_internal.h"
#include "elab_tangent.h"
#include "geom.h"
#include "mesh/tetmesh.h"

#define PI 3.14159265358979323846

enum { SHAPE_BOX, SHAPE_CYLINDER, SHAPE_SPHERE, SHAPE_SURFACE };
enum { MAX_OFFSETS = 128, SAMPLES = 8 };
/* The index grid of a lattice (half-spacing points, 4 bytes each) and its springs must fit in
 * memory: 256 MB of grid, and 20 million springs (about 1 GB of model and kernel data). */
#define MAX_GRID_CELLS 64000000.0
#define MAX_SPRINGS 20000000.0

typedef struct Shape {
    int    kind;
    GeomMesh surface;   /* SHAPE_SURFACE: a closed triangulated surface (filled("x.stl")) */
    double lo[3], hi[3];/* its bounds */
    double volume;
    double anchor[3];   /* a lattice point: box corner, cylinder base centre, sphere centre */
    double size[3];     /* box */
    double axis[3];     /* cylinder: unit axis */
    double radius, length;
    SrcLoc loc;
} Shape;

/* Neighbour offsets in half-spacings, both signs, and their squared lengths. */
typedef struct Offsets {
    int    n;
    int    v[MAX_OFFSETS][3];
    int    len2[MAX_OFFSETS];
} Offsets;

/* ---- the grid ---- */

/* Basis points of the cubic cell in half-spacings; returns their count. */
static int lattice_basis(int grid, int b[4][3])
{
    static const int cubic[1][3] = { { 0, 0, 0 } };
    static const int bcc[2][3] = { { 0, 0, 0 }, { 1, 1, 1 } };
    static const int fcc[4][3] = { { 0, 0, 0 }, { 1, 1, 0 }, { 1, 0, 1 }, { 0, 1, 1 } };
    const int(*src)[3] = grid == LATTICE_CUBIC ? cubic : grid == LATTICE_BCC ? bcc : fcc;
    int n = grid == LATTICE_CUBIC ? 1 : grid == LATTICE_BCC ? 2 : 4;
    memcpy(b, src, sizeof(int) * 3 * (size_t)n);
    return n;
}

/* True when c (half-spacings) is a point of the lattice. */
static bool on_lattice(int grid, const int c[3])
{
    int b[4][3];
    int nb = lattice_basis(grid, b);
    for (int k = 0; k < nb; k++)
        if (!((c[0] - b[k][0]) & 1) && !((c[1] - b[k][1]) & 1) && !((c[2] - b[k][2]) & 1))
            return true;
    return false;
}

/* The lattice vectors of the first `shells` distances from a point. */
static void neighbour_offsets(int grid, int shells, Offsets *o)
{
    int dist[13], n_dist = 0;
    for (int pass = 0; pass < 2; pass++) {
        o->n = 0;
        for (int i = -4; i <= 4; i++)
            for (int j = -4; j <= 4; j++)
                for (int k = -4; k <= 4; k++) {
                    int c[3] = { i, j, k }, d2 = i * i + j * j + k * k;
                    /* the third shell is at most (2, 2, 2) away, d2 = 12, in every grid here */
                    if (!d2 || d2 > 12 || !on_lattice(grid, c))
                        continue;
                    if (pass == 0) {
                        int p = 0;
                        while (p < n_dist && dist[p] != d2)
                            p++;
                        if (p == n_dist)
                            dist[n_dist++] = d2;
                        continue;
                    }
                    int rank = 0;
                    for (int p = 0; p < n_dist; p++)
                        rank += dist[p] < d2;
                    if (rank >= shells || o->n >= MAX_OFFSETS)
                        continue;
                    memcpy(o->v[o->n], c, sizeof c);
                    o->len2[o->n++] = d2;
                }
    }
}

/* Cubic elastic constants of the lattice with unit springs and unit spacing:
 * C_ijkl = (1 / V) sum over the node's bonds (each once) of k l^2 n_i n_j n_k n_l, V the volume
 * per node; central springs give C44 = C12 (Cauchy). */
static void lattice_moduli(int grid, int shells, double *c11, double *c12)
{
    int b[4][3];
    double volume = 1.0 / lattice_basis(grid, b);
    Offsets o;
    neighbour_offsets(grid, shells, &o);
    *c11 = *c12 = 0;
    for (int i = 0; i < o.n; i++) {
        double x = 0.5 * o.v[i][0], y = 0.5 * o.v[i][1], l2 = 0.25 * o.len2[i];
        *c11 += 0.5 * x * x * x * x / l2 / volume;
        *c12 += 0.5 * x * x * y * y / l2 / volume;
    }
}

bool lattice_relation(int grid, int shells, double *beta, double *nu)
{
    double c11, c12;
    lattice_moduli(grid, shells, &c11, &c12);
    if (!(c11 - c12 > 1e-12 && c12 > 1e-12))
        return false;
    *beta = (c11 - c12) * (c11 + 2 * c12) / (c11 + c12);
    *nu = c12 / (c11 + c12);
    return true;
}

/* ---- shapes ---- */

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* ---- closed surfaces ---- */

static void sub3(const double *a, const double *b, double *r)
{
    for (int c = 0; c < 3; c++)
        r[c] = a[c] - b[c];
}

static void cross3(const double *a, const double *b, double *r)
{
    r[0] = a[1] * b[2] - a[2] * b[1];
    r[1] = a[2] * b[0] - a[0] * b[2];
    r[2] = a[0] * b[1] - a[1] * b[0];
}

/* Squared distance from p to triangle (a, b, c): the closest point by the triangle's Voronoi
 * regions (vertices, edges, face). */
static double triangle_distance2(const double *p, const double *a, const double *b, const double *c)
{
    double ab[3], ac[3], ap[3], q[3];
    sub3(b, a, ab);
    sub3(c, a, ac);
    sub3(p, a, ap);
    double d1 = dot3(ab, ap), d2 = dot3(ac, ap), d00 = dot3(ab, ab), d01 = dot3(ab, ac), d11 = dot3(ac, ac);
    double den = d00 * d11 - d01 * d01;
    double v = (d11 * d1 - d01 * d2) / den, w = (d00 * d2 - d01 * d1) / den;
    if (v >= 0 && w >= 0 && v + w <= 1) { /* over the face */
        for (int k = 0; k < 3; k++)
            q[k] = a[k] + v * ab[k] + w * ac[k] - p[k];
        return dot3(q, q);
    }
    const double *e[3][2] = { { a, b }, { b, c }, { c, a } };
    double best = INFINITY;
    for (int i = 0; i < 3; i++) { /* else the nearest of its edges (or their ends) */
        double u[3], r[3];
        sub3(e[i][1], e[i][0], u);
        sub3(p, e[i][0], r);
        double t = fmin(fmax(dot3(u, r) / dot3(u, u), 0), 1);
        for (int k = 0; k < 3; k++)
            q[k] = e[i][0][k] + t * u[k] - p[k];
        best = fmin(best, dot3(q, q));
    }
    return best;
}

/* Inside a closed surface: its winding number about x (the sum of the triangles' solid angles,
 * Van Oosterom and Strackee) is 1 inside and 0 outside, whichever way it is wound; points within
 * tol of the surface count as inside. */
static bool surface_inside(const Shape *sh, const double x[3], double tol)
{
    for (int c = 0; c < 3; c++)
        if (x[c] < sh->lo[c] - tol || x[c] > sh->hi[c] + tol)
            return false;
    const GeomMesh *g = &sh->surface;
    double omega = 0, near = INFINITY;
    for (int t = 0; t < g->n_tris; t++) {
        const double *p[3];
        double r[3][3], n[3], bc[3];
        for (int k = 0; k < 3; k++) {
            p[k] = &g->x[3 * g->tri[3 * t + k]];
            sub3(p[k], x, r[k]);
            n[k] = sqrt(dot3(r[k], r[k]));
        }
        cross3(r[1], r[2], bc);
        double num = dot3(r[0], bc);
        double den = n[0] * n[1] * n[2] + dot3(r[0], r[1]) * n[2] + dot3(r[0], r[2]) * n[1] + dot3(r[1], r[2]) * n[0];
        omega += 2 * atan2(num, den);
        if (tol > 0)
            near = fmin(near, triangle_distance2(x, p[0], p[1], p[2]));
    }
    return fabs(omega) > 2 * PI || near <= tol * tol;
}

/* The volume a closed surface bounds, and its bounds. */
static void surface_extent(Shape *sh)
{
    const GeomMesh *g = &sh->surface;
    double v = 0;
    for (int c = 0; c < 3; c++) {
        sh->lo[c] = INFINITY;
        sh->hi[c] = -INFINITY;
    }
    for (int i = 0; i < g->n_nodes; i++)
        for (int c = 0; c < 3; c++) {
            sh->lo[c] = fmin(sh->lo[c], g->x[3 * i + c]);
            sh->hi[c] = fmax(sh->hi[c], g->x[3 * i + c]);
        }
    for (int t = 0; t < g->n_tris; t++) {
        double bc[3];
        cross3(&g->x[3 * g->tri[3 * t + 1]], &g->x[3 * g->tri[3 * t + 2]], bc);
        v += dot3(&g->x[3 * g->tri[3 * t]], bc) / 6;
    }
    sh->volume = fabs(v);
    memcpy(sh->anchor, sh->lo, sizeof sh->anchor); /* the grid starts at the lowest corner */
}

/* x inside the closed body; tol widens it, so that grid points on a face count as inside. */
static bool shape_inside(const Shape *sh, const double x[3], double tol)
{
    if (sh->kind == SHAPE_SURFACE)
        return surface_inside(sh, x, tol);
    double d[3] = { x[0] - sh->anchor[0], x[1] - sh->anchor[1], x[2] - sh->anchor[2] };
    if (sh->kind == SHAPE_BOX) {
        for (int c = 0; c < 3; c++)
            if (d[c] < -tol || d[c] > sh->size[c] + tol)
                return false;
        return true;
    }
    if (sh->kind == SHAPE_SPHERE)
        return sqrt(dot3(d, d)) <= sh->radius + tol;
    double h = dot3(d, sh->axis);
    double r2 = dot3(d, d) - h * h;
    return h >= -tol && h <= sh->length + tol && sqrt(fmax(r2, 0)) <= sh->radius + tol;
}

/* The exact volume, which a curved body's lattice is made to weigh rho times. */
static double shape_volume(const Shape *sh)
{
    if (sh->kind == SHAPE_SURFACE)
        return sh->volume;
    if (sh->kind == SHAPE_BOX)
        return sh->size[0] * sh->size[1] * sh->size[2];
    if (sh->kind == SHAPE_SPHERE)
        return 4.0 / 3.0 * PI * pow(sh->radius, 3);
    return PI * sh->radius * sh->radius * sh->length;
}

/* An axis-aligned box holding the body: the range of the grid to search. */
static void shape_bounds(const Shape *sh, double lo[3], double hi[3])
{
    if (sh->kind == SHAPE_SURFACE) {
        memcpy(lo, sh->lo, 3 * sizeof(double));
        memcpy(hi, sh->hi, 3 * sizeof(double));
        return;
    }
    for (int c = 0; c < 3; c++) {
        if (sh->kind == SHAPE_BOX) {
            lo[c] = sh->anchor[c];
            hi[c] = sh->anchor[c] + sh->size[c];
        } else if (sh->kind == SHAPE_SPHERE) {
            lo[c] = sh->anchor[c] - sh->radius;
            hi[c] = sh->anchor[c] + sh->radius;
        } else {
            double end = sh->anchor[c] + sh->length * sh->axis[c];
            lo[c] = fmin(sh->anchor[c], end) - sh->radius;
            hi[c] = fmax(sh->anchor[c], end) + sh->radius;
        }
    }
}

/* The body's smallest extent, for the spacing check. */
static double shape_extent(const Shape *sh)
{
    if (sh->kind == SHAPE_SURFACE) /* its bounding box's thinnest side */
        return fmin(sh->hi[0] - sh->lo[0], fmin(sh->hi[1] - sh->lo[1], sh->hi[2] - sh->lo[2]));
    if (sh->kind == SHAPE_BOX)
        return fmin(sh->size[0], fmin(sh->size[1], sh->size[2]));
    if (sh->kind == SHAPE_SPHERE)
        return 2 * sh->radius;
    return fmin(2 * sh->radius, sh->length);
}

/* Every component of a size or radius is positive; else an error at its argument. */
static bool positive(const Value *v, SrcLoc loc, const char *what)
{
    for (int c = 0; c < v->n; c++)
        if (!(v->v[c] > 0)) {
            diag_error(loc, "the %s of a lattice's shape must be positive", what);
            return false;
        }
    return true;
}

/* A box's sides must hold a whole number of cells, so that its faces carry nodes. */
static bool box_fits(const Shape *sh, double a)
{
    for (int c = 0; c < 3; c++) {
        double cells = sh->size[c] / a;
        if (cells >= 1 && fabs(cells - round(cells)) > 1e-6 * fmax(1, cells)) {
            Diag *d = diag_error(sh->loc, "the box's %c side, %g m, is not a whole number of spacings (%g m)",
                                 "xyz"[c], sh->size[c], a);
            diag_hint(d, "a spacing of %g m would give %g cells", sh->size[c] / round(cells), round(cells));
            return false;
        }
    }
    return true;
}

static bool read_shape(Elab *e, const Geom *g, Shape *sh)
{
    Value a[6];
    SrcLoc locs[6];
    memset(sh, 0, sizeof *sh);
    sh->loc = g->loc;
    if (!elab_geom_args(g, a, locs))
        return false;
    if (!strcmp(g->fn, "filled")) {
        char err[768];
        sh->kind = SHAPE_SURFACE;
        if (!tetmesh_read_surface(elab_relative_path(e, a[0].str, locs[0]), a[1].kind == V_NUM ? a[1].v[0] : 1.0,
                                  &sh->surface, err, sizeof err)) {
            Diag *d = diag_error(locs[0], "%s", err);
            diag_hint(d, "a lattice fills a watertight surface: every edge shared by exactly two triangles");
            return false;
        }
        surface_extent(sh);
        return true;
    }
    if (!strcmp(g->fn, "box")) {
        sh->kind = SHAPE_BOX;
        memcpy(sh->size, a[0].v, sizeof sh->size);
        if (a[1].kind == V_NUM)
            memcpy(sh->anchor, a[1].v, sizeof sh->anchor);
        return positive(&a[0], locs[0], "size");
    }
    if (!strcmp(g->fn, "sphere")) {
        if (a[1].kind != V_ERR) {
            Diag *d = diag_error(locs[1], "a lattice's sphere takes no spacing: the lattice's `spacing` sets it");
            diag_hint(d, "write `shape = sphere(radius, center = ...);` and `spacing = ...;`");
            return false;
        }
        sh->kind = SHAPE_SPHERE;
        sh->radius = a[0].v[0];
        if (a[2].kind == V_NUM)
            memcpy(sh->anchor, a[2].v, sizeof sh->anchor);
        return positive(&a[0], locs[0], "radius");
    }
    sh->kind = SHAPE_CYLINDER;
    sh->radius = a[0].v[0];
    sh->length = a[1].v[0];
    if (a[2].kind == V_NUM)
        memcpy(sh->anchor, a[2].v, sizeof sh->anchor);
    double axis[3] = { 0, 0, 1 };
    if (a[3].kind == V_NUM)
        memcpy(axis, a[3].v, sizeof axis);
    double n = sqrt(dot3(axis, axis));
    if (!(n > 0)) {
        diag_error(locs[3], "the cylinder's axis must not be zero");
        return false;
    }
    for (int c = 0; c < 3; c++)
        sh->axis[c] = axis[c] / n;
    return positive(&a[0], locs[0], "radius") && positive(&a[1], locs[1], "length");
}

/* ---- materials by region ---- */

/* The lattice's material expression and, when it depends on the position, where it is chosen. */
typedef struct Materials {
    Expr *expr;          /* the `material` value */
    int   uniform;       /* its material when it does not depend on the position, else -1 */
} Materials;

/* The material at p: the expression evaluated with x, y, z there; -1 after an error. */
static int material_at(Elab *e, const Materials *mt, const double p[3])
{
    if (mt->uniform >= 0)
        return mt->uniform;
    static const char *axes[3] = { "x", "y", "z" };
    Binding *saved = e->scope;
    for (int c = 0; c < 3; c++)
        scope_bind(e, axes[c], value_num(p[c], dims_of(1, 0, 0, 0)), mt->expr->loc, BIND_BUILTIN);
    Value v = eval_expr(e, mt->expr);
    e->scope = saved;
    if (v.kind == V_MATERIAL && v.known)
        return v.index;
    if (v.kind != V_ERR)
        diag_error(mt->expr->loc, "the material here must be chosen by a condition on x, y and z");
    return -1;
}

/* ---- masses: each node's Voronoi cell, sampled ---- */

/* Sample offsets (in spacings) of one Voronoi cell, with weights: a sample as near to another
 * lattice point as to the cell's own counts for both. The cell of every lattice here lies in
 * the cube of side a around its point; the midpoint grid is symmetric about it. */
typedef struct Cell {
    int    n;
    double x[SAMPLES * SAMPLES * SAMPLES][3];
    double w[SAMPLES * SAMPLES * SAMPLES];
    double total;
} Cell;

static double sample_weight(const Offsets *o, const double p[3])
{
    double own = dot3(p, p);
    int ties = 0;
    for (int i = 0; i < o->n; i++) {
        double q[3] = { p[0] - 0.5 * o->v[i][0], p[1] - 0.5 * o->v[i][1], p[2] - 0.5 * o->v[i][2] };
        double d = dot3(q, q);
        if (d < own - 1e-12)
            return 0;
        ties += d <= own + 1e-12;
    }
    return 1.0 / (1 + ties);
}

static void voronoi_cell(int grid, Cell *cell)
{
    Offsets o;
    neighbour_offsets(grid, 3, &o);
    cell->n = 0;
    cell->total = 0;
    for (int i = 0; i < SAMPLES; i++)
        for (int j = 0; j < SAMPLES; j++)
            for (int k = 0; k < SAMPLES; k++) {
                double p[3] = { (i + 0.5) / SAMPLES - 0.5, (j + 0.5) / SAMPLES - 0.5, (k + 0.5) / SAMPLES - 0.5 };
                double w = sample_weight(&o, p);
                if (w <= 0)
                    continue;
                memcpy(cell->x[cell->n], p, sizeof p);
                cell->w[cell->n++] = w;
                cell->total += w;
            }
}

/* The fraction of the node's cell inside the body. */
static double inside_fraction(const Shape *sh, const Cell *cell, const double x[3], double a)
{
    double in = 0;
    for (int s = 0; s < cell->n; s++) {
        double p[3] = { x[0] + a * cell->x[s][0], x[1] + a * cell->x[s][1], x[2] + a * cell->x[s][2] };
        if (shape_inside(sh, p, 0))
            in += cell->w[s];
    }
    return in / cell->total;
}

/* ---- building ---- */

typedef struct Grid {
    int  lo[3], dim[3];  /* half-spacing coordinates of slot 0, extent per axis */
    int *slot;           /* local node index per half-spacing point, or -1 */
} Grid;

/* The slot of half-spacing point c, or -1 outside the grid (neighbours beyond its edge). */
static long grid_index(const Grid *g, const int c[3])
{
    for (int k = 0; k < 3; k++)
        if (c[k] < g->lo[k] || c[k] >= g->lo[k] + g->dim[k])
            return -1;
    return ((long)(c[2] - g->lo[2]) * g->dim[1] + (c[1] - g->lo[1])) * g->dim[0] + (c[0] - g->lo[0]);
}

/* The index grid over the body's bounds, with a margin of a cell on every side, all slots
 * empty; refused when it would not fit in memory. */
static bool grid_init(Grid *g, const Shape *sh, double a)
{
    double lo[3], hi[3], cells = 1;
    shape_bounds(sh, lo, hi);
    for (int c = 0; c < 3; c++) {
        g->lo[c] = 2 * (int)floor((lo[c] - sh->anchor[c]) / a) - 2;
        g->dim[c] = 2 * (int)ceil((hi[c] - sh->anchor[c]) / a) + 3 - g->lo[c];
        cells *= g->dim[c];
    }
    if (cells > MAX_GRID_CELLS) {
        diag_error(sh->loc, "a lattice of this spacing would have too many nodes");
        return false;
    }
    g->slot = malloc(sizeof(int) * (size_t)cells);
    for (long i = 0; i < (long)cells; i++)
        g->slot[i] = -1;
    return true;
}

/* The position of half-spacing point c: the anchor is a lattice point. */
static void grid_point(const Shape *sh, double a, const int c[3], double x[3])
{
    for (int k = 0; k < 3; k++)
        x[k] = sh->anchor[k] + 0.5 * a * c[k];
}

/* Lattice points inside the body, in grid order; their positions go to *xs. */
static int place_nodes(Grid *g, const Shape *sh, int grid, double a, double **xs)
{
    int n = 0, cap = 1024;
    *xs = malloc(sizeof(double) * 3 * (size_t)cap);
    for (int k = g->lo[2]; k < g->lo[2] + g->dim[2]; k++)
        for (int j = g->lo[1]; j < g->lo[1] + g->dim[1]; j++)
            for (int i = g->lo[0]; i < g->lo[0] + g->dim[0]; i++) {
                int c[3] = { i, j, k };
                double x[3];
                grid_point(sh, a, c, x);
                if (!on_lattice(grid, c) || !shape_inside(sh, x, 1e-9 * a))
                    continue;
                if (n == cap) {
                    cap *= 2;
                    *xs = realloc(*xs, sizeof(double) * 3 * (size_t)cap);
                }
                memcpy(*xs + 3 * n, x, sizeof x);
                g->slot[grid_index(g, c)] = n++;
            }
    return n;
}

/* One spring per pair of lattice neighbours (each offset taken in one direction). */
static void connect(Elab *e, const Grid *g, const Offsets *o, int first, int oi)
{
    for (int k = g->lo[2]; k < g->lo[2] + g->dim[2]; k++)
        for (int j = g->lo[1]; j < g->lo[1] + g->dim[1]; j++)
            for (int i = g->lo[0]; i < g->lo[0] + g->dim[0]; i++) {
                int c[3] = { i, j, k };
                long at = grid_index(g, c);
                if (g->slot[at] < 0)
                    continue;
                for (int q = 0; q < o->n; q++) {
                    const int *v = o->v[q];
                    if (v[0] < 0 || (v[0] == 0 && (v[1] < 0 || (v[1] == 0 && v[2] < 0))))
                        continue;
                    int d[3] = { i + v[0], j + v[1], k + v[2] };
                    long to = grid_index(g, d);
                    if (to >= 0 && g->slot[to] >= 0)
                        elab_add_edge(e, first + g->slot[at], first + g->slot[to], oi);
                }
            }
}

/* LATTICE_* of the `grid` property (cubic when absent). */
static int grid_kind(const PropValues *pv)
{
    const Value *v = prop_get(pv, "grid");
    if (!v || !strcmp(v->str, "cubic"))
        return LATTICE_CUBIC;
    return !strcmp(v->str, "bcc") ? LATTICE_BCC : LATTICE_FCC;
}

/* Grid, spacing and neighbour shells, and the relation's beta for them. */
static bool read_layout(const Stmt *s, const PropValues *pv, ElabObj *o, double *beta)
{
    static const char *names[] = { "cubic", "bcc", "fcc" };
    o->grid = grid_kind(pv);
    o->spacing = prop_num(pv, "spacing", 0);
    o->neighbours = prop_given(pv, "neighbours") ? (int)prop_num(pv, "neighbours", 2) : 2;
    if (!(o->spacing > 0)) {
        diag_error(prop_loc(pv, "spacing", s->loc), "the spacing of lattice `%s` must be positive", o->name);
        return false;
    }
    if (o->neighbours < 1 || o->neighbours > 3) {
        Diag *d = diag_error(prop_loc(pv, "neighbours", s->loc), "`neighbours` is %d: a lattice joins 1, 2 or 3 "
                                                                   "shells of neighbours", o->neighbours);
        diag_hint(d, "2 joins a cubic grid's edges and face diagonals");
        return false;
    }
    double nu = 0;
    bool related = lattice_relation(o->grid, o->neighbours, beta, &nu);
    o->nu = dual_const(nu);
    if (!related) {
        Diag *d = diag_error(prop_loc(pv, "neighbours", s->loc), "a %s lattice with %d shell of neighbours has no "
                                                                   "shear stiffness", names[o->grid], o->neighbours);
        diag_hint(d, "join a second shell: `neighbours = 2;`");
        return false;
    }
    return true;
}

/* Node masses: rho times the part of the node's cell inside the body, scaled so that the
 * lattice weighs rho V (the cell's sampling is exact for a box, whose faces cut cells in halves,
 * quarters and eighths; for curved bodies it is within a sample's volume per node). */
static bool lump_lattice(Elab *e, ElabObj *o, const Shape *sh, const Materials *mt, const double *xs)
{
    Cell *cell = malloc(sizeof *cell);
    int b[4][3];
    voronoi_cell(o->grid, cell);
    double a = o->spacing, per_node = a * a * a / lattice_basis(o->grid, b), sum = 0;
    double *share = malloc(sizeof(double) * (size_t)o->n_nodes);
    for (int i = 0; i < o->n_nodes; i++)
        sum += share[i] = per_node * inside_fraction(sh, cell, xs + 3 * i, a);
    double scale = sum > 0 ? shape_volume(sh) / sum : 0;
    bool ok = true;
    o->mass = dual_const(0);
    for (int i = 0; i < o->n_nodes && ok; i++) {
        int k = material_at(e, mt, xs + 3 * i);
        ok = k >= 0;
        Dual m = ok ? dual_scale(scale, dual_scale(share[i], e->mats.a[k].rho)) : dual_const(0); /* rho * share * scale */
        e->body_mass.a[o->first_node + i] = m;
        o->mass = dual_add(o->mass, m);
    }
    free(share);
    free(cell);
    return ok;
}

/* The fraction of the cube of side a about c inside the body (convex: a cube whose corners are
 * inside is inside), sampled on a symmetric midpoint grid. */
static double cube_fraction(const Shape *sh, const double c[3], double a)
{
    bool all = true;
    for (int k = 0; k < 8 && all; k++) {
        double p[3] = { c[0] + (k & 1 ? 0.5 : -0.5) * a, c[1] + (k & 2 ? 0.5 : -0.5) * a, c[2] + (k & 4 ? 0.5 : -0.5) * a };
        all = shape_inside(sh, p, 1e-9 * a);
    }
    if (all)
        return 1;
    int in = 0;
    for (int i = 0; i < SAMPLES; i++)
        for (int j = 0; j < SAMPLES; j++)
            for (int k = 0; k < SAMPLES; k++) {
                double p[3] = { c[0] + ((i + 0.5) / SAMPLES - 0.5) * a, c[1] + ((j + 0.5) / SAMPLES - 0.5) * a,
                                c[2] + ((k + 0.5) / SAMPLES - 0.5) * a };
                in += shape_inside(sh, p, 0);
            }
    return (double)in / (SAMPLES * SAMPLES * SAMPLES);
}

/* Every spring's stiffness: k = E a / beta with E at its midpoint, times its share of the material
 * about it. A spring stands for the material about it: in the bulk all of it, on a face half,
 * along an edge of a box a quarter; the share is that of the cube of side a about its midpoint
 * inside the body. For a cubic grid in a box it counts the grid cells that hold the spring, as a
 * finite element mesh assembles its cells, so that a uniform strain has the bulk's energy density
 * everywhere and the box's faces are as stiff as its inside. */
static bool spring_stiffness(Elab *e, ElabObj *o, const Shape *sh, const Materials *mt, double beta)
{
    double a = o->spacing;
    o->spring_k = malloc(sizeof(Dual) * (size_t)(o->n_edges + 1));
    for (int i = 0; i < o->n_edges; i++) {
        int edge = o->first_edge + i;
        const double *p = &e->x0.a[3 * e->edge_nodes.a[2 * edge]], *q = &e->x0.a[3 * e->edge_nodes.a[2 * edge + 1]];
        double c[3] = { 0.5 * (p[0] + q[0]), 0.5 * (p[1] + q[1]), 0.5 * (p[2] + q[2]) };
        int k = material_at(e, mt, c);
        if (k < 0)
            return false;
        o->spring_k[i] = dual_scale(cube_fraction(sh, c, a), dual_divc(dual_scale(a, e->mats.a[k].E), beta));
    }
    return true;
}

static bool build_lattice(Elab *e, const Stmt *s, ElabObj *o, const Shape *sh, const Materials *mt, double beta,
                          SrcLoc at)
{
    double a = o->spacing;
    if (a > shape_extent(sh) * (1 + 1e-9)) {
        Diag *d = diag_error(at, "the spacing of lattice `%s`, %g m, is larger than the body (%g m across at its "
                                 "thinnest)", o->name, a, shape_extent(sh));
        diag_hint(d, "a lattice needs at least two nodes across the body: make the spacing smaller");
        return false;
    }
    if (sh->kind == SHAPE_BOX && !box_fits(sh, a))
        return false;
    Grid g;
    double *xs = NULL;
    if (!grid_init(&g, sh, a))
        return false;
    int n = place_nodes(&g, sh, o->grid, a, &xs);
    Offsets off;
    neighbour_offsets(o->grid, o->neighbours, &off);
    bool ok = n >= 2 && elab_room_for(e, n, s->loc);
    if (ok && (double)n * off.n / 2 > MAX_SPRINGS) {
        diag_error(at, "lattice `%s` would have about %.3g springs, more than %g", o->name, (double)n * off.n / 2,
                   MAX_SPRINGS);
        ok = false;
    }
    if (ok) {
        int oi = e->objs.n;
        o->first_node = e->node_obj.n;
        o->n_nodes = n;
        for (int i = 0; i < n; i++)
            elab_add_node(e, xs + 3 * i, oi, i);
        o->first_edge = e->edge_obj.n;
        connect(e, &g, &off, o->first_node, oi);
        o->n_edges = e->edge_obj.n - o->first_edge;
        ok = spring_stiffness(e, o, sh, mt, beta) && lump_lattice(e, o, sh, mt, xs);
    } else if (n < 2) {
        diag_error(at, "lattice `%s` has %d node%s: its spacing is too large for the body", o->name, n,
                   n == 1 ? "" : "s");
    }
    free(xs);
    free(g.slot);
    return ok;
}

/* `lattice NAME { shape; spacing; grid; neighbours; material; }`: its nodes, springs, stiffnesses
 * and masses, appended to the model under construction. */
void elab_lattice(Elab *e, Stmt *s, const char *name)
{
    PropValues pv;
    char owner[160];
    snprintf(owner, sizeof owner, "lattice `%s`", name);
    props_read(e, s, &pv, owner);
    if (!props_complete(s, &pv, owner))
        return;
    const Value *m = prop_get(&pv, "material");
    const Value *shape = prop_get(&pv, "shape");
    if (!m || !shape)
        return;
    const ElabMaterial *mat = &e->mats.a[m->index];
    Materials mt = { NULL, m->known ? m->index : -1 };
    for (int i = 0; i < s->n_body; i++)
        if (s->body[i]->kind != ST_LET && s->body[i]->name && !strcmp(s->body[i]->name, "material"))
            mt.expr = s->body[i]->value;
    ElabObj o;
    memset(&o, 0, sizeof o);
    o.name = name;
    o.kind = SRD_OBJ_LATTICE;
    o.loc = s->name_loc;
    o.E = mat->E;
    o.rho = mat->rho;
    o.first_tri = e->tri_obj.n;
    o.first_hinge = e->hinge_edge.n;
    Shape sh;
    double beta;
    SrcLoc spacing_at = prop_loc(&pv, "spacing", s->loc);
    memset(&sh, 0, sizeof sh);
    if (!read_layout(s, &pv, &o, &beta) || !read_shape(e, shape->geom, &sh) ||
        !build_lattice(e, s, &o, &sh, &mt, beta, spacing_at)) {
        free(o.spring_k);
        geom_mesh_free(&sh.surface);
        return;
    }
    geom_mesh_free(&sh.surface);
    o.G = dual_div(o.E, dual_scale(2, dual_add(dual_const(1), o.nu)));
    DPUSH(e->objs, o);
}

/* ---- the flat model's springs ---- */

/* After joins: a lattice edge's rest length is measured between the merged nodes. */
int lattice_add_springs(Elab *e, srd_model *m, int *edge_of)
{
    static const char *data[] = { "k", "rest_length", "rest_factor" };
    int set = -1;
    for (int i = 0; i < m->n_edges; i++) {
        const ElabObj *o = &e->objs.a[m->edge_object[i]];
        if (o->kind != SRD_OBJ_LATTICE)
            continue;
        if (set < 0)
            set = srd_model_elemset(m, "lattice_spring", 2, 0, 3, data);
        Dual d[3] = { o->spring_k[i - o->first_edge], dual_const(m->edge_rest[i]), dual_const(1) };
        edge_of[m->sets[set].n] = i;
        elab_add_row(e, m, set, &m->edge_nodes[2 * i], NULL, NULL, d, m->edge_object[i]);
    }
    return set;
}
