/* test_geom.c — unit tests of the path and mesh generators (geom.c) and the mesh importers (meshio.c). */
#include "geom.h"
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const double PI = 3.14159265358979323846;

#include "tap.h"

static bool close_rel(double a, double b, double rel) { return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)); }

static double dist3(const double *a, const double *b)
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* ------------------------------------------------------------------------------------------ */
/* mesh analysis                                                                               */

typedef struct MeshReport {
    bool   indices_ok;     /* every index in range */
    bool   planar_ccw;     /* every triangle counter-clockwise seen from +z, in the plane z = z0 */
    double min_area, area; /* smallest and total triangle area */
    bool   conforming;     /* each undirected edge used once or twice, twice with opposite directions */
    int    n_edges, n_boundary_edges;
    double boundary_length;
    double min_node_gap;   /* smallest distance between two distinct nodes (up to max_edge) */
    double min_angle_deg, max_edge, min_edge;
} MeshReport;

typedef struct Edge {
    int lo, hi, forward;
} Edge;

static int edge_order(const void *pa, const void *pb)
{
    const Edge *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return (a->hi > b->hi) - (a->hi < b->hi);
}

static double tri_area_z(const double *a, const double *b, const double *c)
{
    return 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]));
}

static double angle_deg(const double *at, const double *p, const double *q)
{
    double u[2] = {p[0] - at[0], p[1] - at[1]}, v[2] = {q[0] - at[0], q[1] - at[1]};
    double c = (u[0] * v[0] + u[1] * v[1]) / (hypot(u[0], u[1]) * hypot(v[0], v[1]));
    return acos(fmax(-1, fmin(1, c))) * 180 / PI;
}

/* Edges as a sorted list, so that shared edges sit next to each other. */
static Edge *sorted_edges(const GeomMesh *m)
{
    Edge *e = malloc(sizeof *e * 3 * (size_t)m->n_tris);
    for (int t = 0; t < m->n_tris; t++) {
        for (int k = 0; k < 3; k++) {
            int a = m->tri[3 * t + k], b = m->tri[3 * t + (k + 1) % 3];
            e[3 * t + k] = (Edge){a < b ? a : b, a < b ? b : a, a < b};
        }
    }
    qsort(e, 3 * (size_t)m->n_tris, sizeof *e, edge_order);
    return e;
}

static void analyse_edges(const GeomMesh *m, MeshReport *r)
{
    Edge *e = sorted_edges(m);
    int   n = 3 * m->n_tris;
    r->conforming = true;
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && e[j].lo == e[i].lo && e[j].hi == e[i].hi)
            j++;
        r->n_edges++;
        if (j - i == 1) {
            r->n_boundary_edges++;
            r->boundary_length += dist3(m->x + 3 * e[i].lo, m->x + 3 * e[i].hi);
        } else if (j - i != 2 || e[i].forward == e[i + 1].forward) {
            r->conforming = false;
        }
        i = j;
    }
    free(e);
}

static int by_x(const void *pa, const void *pb)
{
    const double *a = *(const double *const *)pa, *b = *(const double *const *)pb;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

/* Smallest distance between two nodes, searched only below `limit` (a sweep along sorted x). */
static double min_node_gap(const GeomMesh *m, double limit)
{
    const double **p = malloc(sizeof *p * (size_t)m->n_nodes);
    for (int i = 0; i < m->n_nodes; i++)
        p[i] = m->x + 3 * i;
    qsort(p, (size_t)m->n_nodes, sizeof *p, by_x);
    double best = limit;
    for (int i = 0; i < m->n_nodes; i++)
        for (int j = i + 1; j < m->n_nodes && p[j][0] - p[i][0] < best; j++)
            best = fmin(best, dist3(p[i], p[j]));
    free(p);
    return best;
}

static MeshReport analyse_mesh(const GeomMesh *m, double z0)
{
    MeshReport r = {.indices_ok = true, .planar_ccw = true, .min_area = INFINITY, .min_angle_deg = 180,
                    .min_edge = INFINITY};
    for (int k = 0; k < 3 * m->n_tris; k++)
        if (m->tri[k] < 0 || m->tri[k] >= m->n_nodes)
            r.indices_ok = false;
    if (!r.indices_ok)
        return r;
    for (int i = 0; i < m->n_nodes; i++)
        if (m->x[3 * i + 2] != z0)
            r.planar_ccw = false;
    for (int t = 0; t < m->n_tris; t++) {
        const double *p[3];
        for (int k = 0; k < 3; k++)
            p[k] = m->x + 3 * m->tri[3 * t + k];
        double a = tri_area_z(p[0], p[1], p[2]);
        if (!(a > 0))
            r.planar_ccw = false;
        r.min_area = fmin(r.min_area, a);
        r.area += a;
        for (int k = 0; k < 3; k++) {
            r.min_angle_deg = fmin(r.min_angle_deg, angle_deg(p[k], p[(k + 1) % 3], p[(k + 2) % 3]));
            double len = dist3(p[k], p[(k + 1) % 3]);
            r.max_edge = fmax(r.max_edge, len);
            r.min_edge = fmin(r.min_edge, len);
        }
    }
    analyse_edges(m, &r);
    r.min_node_gap = min_node_gap(m, r.max_edge);
    return r;
}

/* The properties every generated mesh must have, for a region shaped like a disc (V - E + F = 1). */
static void check_mesh_basics(Tally *t, const char *name, const GeomMesh *m, double z0, double spacing)
{
    MeshReport r = analyse_mesh(m, z0);
    check(t, r.indices_ok, "%s: triangle indices in range", name);
    if (!r.indices_ok)
        return;
    check(t, r.planar_ccw, "%s: every triangle counter-clockwise from +z (min area %g)", name, r.min_area);
    check(t, r.min_area > 1e-3 * spacing * spacing, "%s: no sliver triangle (min area %g)", name, r.min_area);
    check(t, r.conforming, "%s: conforming (interior edges shared by two triangles, consistently oriented)", name);
    check(t, m->n_nodes - r.n_edges + m->n_tris == 1, "%s: Euler characteristic V - E + F = 1 (%d - %d + %d)", name,
          m->n_nodes, r.n_edges, m->n_tris);
    check(t, r.min_node_gap > 0.1 * spacing, "%s: no duplicate nodes (closest pair %g apart)", name, r.min_node_gap);
}

/* ------------------------------------------------------------------------------------------ */
/* rectangles                                                                                  */

static bool on_side(const double *p, const double o[3], double len, double wid, int side)
{
    switch (side) {
    case 0: return p[0] == o[0];
    case 1: return p[0] == o[0] + len;
    case 2: return p[1] == o[1];
    default: return p[1] == o[1] + wid;
    }
}

/* Every boundary edge lies on one of the four sides exactly, and nothing is outside. */
static bool rectangle_boundary_straight(const GeomMesh *m, const double o[3], double len, double wid)
{
    for (int i = 0; i < m->n_nodes; i++) {
        const double *p = m->x + 3 * i;
        if (p[0] < o[0] || p[0] > o[0] + len || p[1] < o[1] || p[1] > o[1] + wid)
            return false;
    }
    Edge *e = sorted_edges(m);
    int   n = 3 * m->n_tris;
    bool  ok = true;
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && e[j].lo == e[i].lo && e[j].hi == e[i].hi)
            j++;
        if (j - i == 1) {
            bool found = false;
            for (int side = 0; side < 4; side++)
                found |= on_side(m->x + 3 * e[i].lo, o, len, wid, side) && on_side(m->x + 3 * e[i].hi, o, len, wid, side);
            ok &= found;
        }
        i = j;
    }
    free(e);
    return ok;
}

static int count_nodes_where(const GeomMesh *m, const double o[3], double len, double wid, int side)
{
    int n = 0;
    for (int i = 0; i < m->n_nodes; i++)
        n += on_side(m->x + 3 * i, o, len, wid, side);
    return n;
}

static const char *pattern_name(MeshPattern p)
{
    static const char *const names[] = {"equilateral", "equilateral-aligned", "right-isosceles", "random",
                                        "nonuniform"};
    return names[p];
}

static void expected_rect_counts(MeshPattern p, double len, double wid, double s, int *nodes, int *tris)
{
    long along_x = lround(len / s), along_y = lround(wid / s);
    long nx = (along_x < 1 ? 1 : along_x) + 1, ny = (along_y < 1 ? 1 : along_y) + 1;
    if (p == MESH_EQUILATERAL || p == MESH_EQUILATERAL_ALIGNED) {
        long n_along = p == MESH_EQUILATERAL ? nx : ny;
        long rows = lround((p == MESH_EQUILATERAL ? wid : len) / (s * sqrt(3) / 2));
        rows = (rows < 1 ? 1 : rows) + 1;
        *nodes = (int)(rows * n_along + rows / 2);
        *tris = (int)((rows - 1) * (2 * n_along - 1));
    } else {
        *nodes = (int)(nx * ny);
        *tris = (int)(2 * (nx - 1) * (ny - 1));
    }
}

static void test_rectangle_case(Tally *t, MeshPattern p, const double o[3], double len, double wid, double s)
{
    char name[160];
    snprintf(name, sizeof name, "rectangle %s %gx%g spacing %g", pattern_name(p), len, wid, s);
    GeomMesh    m;
    const char *e = geom_rectangle(o, len, wid, s, p, 7, &m);
    check(t, e == NULL, "%s: generated (%s)", name, e ? e : "no error");
    if (e)
        return;
    int nodes, tris;
    expected_rect_counts(p, len, wid, s, &nodes, &tris);
    check(t, m.n_nodes == nodes && m.n_tris == tris, "%s: %d nodes, %d triangles (expected %d, %d)", name, m.n_nodes,
          m.n_tris, nodes, tris);
    check_mesh_basics(t, name, &m, o[2], fmin(s, fmin(len, wid)));
    MeshReport r = analyse_mesh(&m, o[2]);
    check(t, close_rel(r.area, len * wid, 1e-12), "%s: area %.15g = L*W", name, r.area);
    check(t, close_rel(r.boundary_length, 2 * (len + wid), 1e-12), "%s: boundary length = perimeter", name);
    check(t, rectangle_boundary_straight(&m, o, len, wid), "%s: boundary edges lie exactly on the sides", name);
    if (p == MESH_EQUILATERAL || p == MESH_EQUILATERAL_ALIGNED)
        check(t, r.min_angle_deg > 25 && r.max_edge < 1.6 * s, "%s: well shaped (min angle %.1f, max edge %.3g)",
              name, r.min_angle_deg, r.max_edge / s);
    geom_mesh_free(&m);
}

static void test_rectangles(Tally *t)
{
    const double o[3] = {0.25, -1.5, 0.125};
    const double dims[][3] = {{1.0, 0.5, 0.1}, {0.3, 0.7, 0.05}, {0.01, 0.01, 1.0}, {2.0, 1.0, 0.3333}};
    for (int p = MESH_EQUILATERAL; p <= MESH_NONUNIFORM; p++)
        for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++)
            test_rectangle_case(t, (MeshPattern)p, o, dims[k][0], dims[k][1], dims[k][2]);
}

static void test_rectangle_details(Tally *t)
{
    const double o[3] = {1, 2, 3};
    GeomMesh     m;

    /* Equilateral: even rows have round(L/s)+1 nodes, odd rows one more (the half-width ends). */
    geom_rectangle(o, 1.0, 0.5, 0.1, MESH_EQUILATERAL, 0, &m);
    int left = count_nodes_where(&m, o, 1.0, 0.5, 0), bottom = count_nodes_where(&m, o, 1.0, 0.5, 2);
    int rows = (int)lround(0.5 / (0.1 * sqrt(3) / 2)) + 1;
    check(t, bottom == 11 && left == rows, "equilateral: bottom row has 11 nodes, every row touches x=ox (%d, %d)",
          bottom, left);
    check(t, count_nodes_where(&m, o, 1.0, 0.5, 3) == (rows % 2 ? 11 : 12), "equilateral: top row node count");
    geom_mesh_free(&m);

    geom_rectangle(o, 1.0, 0.5, 0.1, MESH_EQUILATERAL_ALIGNED, 0, &m);
    bottom = count_nodes_where(&m, o, 1.0, 0.5, 2);
    left = count_nodes_where(&m, o, 1.0, 0.5, 0);
    rows = (int)lround(1.0 / (0.1 * sqrt(3) / 2)) + 1;
    check(t, left == 6 && bottom == rows, "equilateral-aligned: columns along y, every column touches y=oy (%d, %d)",
          left, bottom);
    geom_mesh_free(&m);

    /* Right isosceles on square cells: all triangles are right isosceles with legs = spacing. */
    geom_rectangle(o, 1.0, 0.5, 0.1, MESH_RIGHT_ISOSCELES, 0, &m);
    MeshReport r = analyse_mesh(&m, o[2]);
    check(t, fabs(r.min_angle_deg - 45) < 1e-6 && fabs(r.min_edge - 0.1) < 1e-9, "right isosceles: 45-degree angles");
    geom_mesh_free(&m);

    /* Nonuniform: bottom row x graded, last interval 3x the first. */
    geom_rectangle(o, 1.0, 0.5, 0.1, MESH_NONUNIFORM, 0, &m);
    double first = m.x[3 * 1] - m.x[0], last = m.x[3 * 10] - m.x[3 * 9];
    check(t, close_rel(last / first, 3, 1e-9), "nonuniform: last x spacing / first = %.12g", last / first);
    double ratio = (m.x[3 * 2] - m.x[3 * 1]) / first, ratio2 = (m.x[3 * 6] - m.x[3 * 5]) / (m.x[3 * 5] - m.x[3 * 4]);
    check(t, close_rel(ratio, ratio2, 1e-9), "nonuniform: geometric grading");
    check(t, m.x[3 * 11 + 1] - m.x[1] == m.x[3 * 22 + 1] - m.x[3 * 11 + 1] || close_rel(m.x[3 * 11 + 1] - m.x[1], 0.1, 1e-12),
          "nonuniform: y uniform");
    geom_mesh_free(&m);

    /* Random: deterministic per seed, corners fixed, jitter bounded, different seeds differ. */
    GeomMesh a, b, c, grid;
    geom_rectangle(o, 1.0, 0.5, 0.1, MESH_RANDOM, 42, &a);
    geom_rectangle(o, 1.0, 0.5, 0.1, MESH_RANDOM, 42, &b);
    geom_rectangle(o, 1.0, 0.5, 0.1, MESH_RANDOM, 43, &c);
    geom_rectangle(o, 1.0, 0.5, 0.1, MESH_RIGHT_ISOSCELES, 0, &grid);
    bool same = memcmp(a.x, b.x, sizeof(double) * 3 * (size_t)a.n_nodes) == 0 &&
                memcmp(a.tri, b.tri, sizeof(int) * 3 * (size_t)a.n_tris) == 0;
    check(t, same, "random: same seed gives the same mesh");
    check(t, memcmp(a.x, c.x, sizeof(double) * 3 * (size_t)a.n_nodes) != 0 &&
                 memcmp(a.tri, c.tri, sizeof(int) * 3 * (size_t)a.n_tris) != 0,
          "random: another seed gives other nodes and diagonals");
    double max_move = 0;
    int    moved = 0;
    for (int i = 0; i < a.n_nodes; i++) {
        double d = dist3(a.x + 3 * i, grid.x + 3 * i);
        max_move = fmax(max_move, d);
        moved += d > 0;
    }
    check(t, max_move <= 0.2 * 0.1 * (1 + 1e-12) && moved > a.n_nodes / 2, "random: jitter %.4g <= 0.2 spacing",
          max_move);
    int corners[4] = {0, 10, 5 * 11, 5 * 11 + 10};
    bool fixed = true;
    for (int k = 0; k < 4; k++)
        fixed &= dist3(a.x + 3 * corners[k], grid.x + 3 * corners[k]) == 0;
    check(t, fixed, "random: corners fixed");
    geom_mesh_free(&a);
    geom_mesh_free(&b);
    geom_mesh_free(&c);
    geom_mesh_free(&grid);

    /* Many seeds and a non-square cell: still valid. */
    bool all_ok = true;
    for (unsigned seed = 0; seed < 200; seed++) {
        geom_rectangle(o, 0.37, 0.23, 0.031, MESH_RANDOM, seed, &m);
        MeshReport q = analyse_mesh(&m, o[2]);
        all_ok &= q.planar_ccw && q.conforming && close_rel(q.area, 0.37 * 0.23, 1e-12) &&
                  rectangle_boundary_straight(&m, o, 0.37, 0.23);
        geom_mesh_free(&m);
    }
    check(t, all_ok, "random: 200 seeds all valid, exact area, straight sides");
}

static void test_rectangle_errors(Tally *t)
{
    const double o[3] = {0, 0, 0}, bad_o[3] = {0, NAN, 0};
    GeomMesh     m = {5, (double *)1, 5, (int *)1};
    struct {
        const char  *expect;
        const double *o;
        double       len, wid, s;
        int          pattern;
    } cases[] = {
        {"rectangle length must be positive", o, 0, 1, 0.1, MESH_EQUILATERAL},
        {"rectangle length must be positive", o, -1, 1, 0.1, MESH_RANDOM},
        {"rectangle width must be positive", o, 1, -2, 0.1, MESH_RANDOM},
        {"rectangle length must be finite", o, NAN, 1, 0.1, MESH_RANDOM},
        {"rectangle width must be finite", o, 1, INFINITY, 0.1, MESH_RANDOM},
        {"spacing must be positive", o, 1, 1, 0, MESH_RANDOM},
        {"spacing must be finite", o, 1, 1, NAN, MESH_RANDOM},
        {"spacing is too small", o, 1, 1, 1e-300, MESH_RIGHT_ISOSCELES},
        {"spacing is too small", o, 1, 1, 1e-4, MESH_EQUILATERAL},
        {"spacing is too small", o, 1e300, 1e300, 1, MESH_NONUNIFORM},
        {"origin must be finite", bad_o, 1, 1, 0.1, MESH_RANDOM},
        {"unknown mesh pattern", o, 1, 1, 0.1, 99},
        {"unknown mesh pattern", o, 1, 1, 0.1, -1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *e =
            geom_rectangle(cases[k].o, cases[k].len, cases[k].wid, cases[k].s, (MeshPattern)cases[k].pattern, 0, &m);
        check(t, e && strstr(e, cases[k].expect) && m.n_nodes == 0 && m.x == NULL,
              "rectangle error %zu: \"%s\" (got \"%s\")", k, cases[k].expect, e ? e : "none");
    }
    const double far[3] = {1e10, 0, 0};
    const char  *far_e = geom_rectangle(far, 1e-4, 1e-4, 1e-5, MESH_RIGHT_ISOSCELES, 0, &m);
    check(t, far_e && strstr(far_e, "distance from the origin") && m.x == NULL,
          "rectangle too small for its distance from the origin refused (%s)", far_e ? far_e : "none");
    const double huge[3] = {1e308, 0, 0};
    far_e = geom_rectangle(huge, 1e308, 1, 1e308, MESH_RIGHT_ISOSCELES, 0, &m);
    check(t, far_e && strstr(far_e, "overflow") && m.x == NULL, "rectangle overflowing coordinates refused");
    /* Just under the cap still works. */
    const char *e = geom_rectangle(o, 1, 1, 1.0 / 1000, MESH_RIGHT_ISOSCELES, 0, &m);
    check(t, e == NULL && m.n_nodes == 1001 * 1001, "rectangle of a million nodes is allowed");
    geom_mesh_free(&m);
    geom_mesh_free(&m); /* freeing twice is harmless */
}

/* ------------------------------------------------------------------------------------------ */
/* hexagon and disc                                                                            */

static void test_hexagon(Tally *t)
{
    const double c[3] = {0.5, -0.25, 2};
    for (int k = 0; k < 4; k++) {
        double   r = (double[]){1.0, 0.3, 2.0, 0.01}[k], s = (double[]){0.1, 0.1, 0.07, 1.0}[k];
        GeomMesh m;
        char     name[96];
        snprintf(name, sizeof name, "hexagon r=%g spacing %g", r, s);
        const char *e = geom_hexagon(c, r, s, &m);
        check(t, e == NULL, "%s: generated", name);
        if (e)
            continue;
        long rings = lround(r / s);
        rings = rings < 1 ? 1 : rings;
        check(t, m.n_nodes == 3 * rings * (rings + 1) + 1 && m.n_tris == 6 * rings * rings,
              "%s: %d nodes, %d triangles for %ld rings", name, m.n_nodes, m.n_tris, rings);
        check_mesh_basics(t, name, &m, c[2], r / (double)rings);
        MeshReport q = analyse_mesh(&m, c[2]);
        check(t, close_rel(q.area, 3 * sqrt(3) / 2 * r * r, 1e-12), "%s: area = 3 sqrt(3)/2 r^2", name);
        check(t, close_rel(q.min_edge, q.max_edge, 1e-9) && fabs(q.min_angle_deg - 60) < 1e-6,
              "%s: equilateral triangles", name);
        int corners = 0;
        for (int i = 0; i < m.n_nodes; i++)
            for (int j = 0; j < 6; j++) {
                double want[3] = {c[0] + r * cos(j * PI / 3), c[1] + r * sin(j * PI / 3), c[2]};
                corners += dist3(m.x + 3 * i, want) < 1e-12 * r;
            }
        check(t, corners == 6, "%s: corners at 0, 60, ... degrees", name);
        geom_mesh_free(&m);
    }
}

static void test_disc(Tally *t)
{
    const double c[3] = {-1, 3, 0};
    for (int k = 0; k < 4; k++) {
        double   r = (double[]){1.0, 0.3, 2.0, 0.01}[k], s = (double[]){0.1, 0.1, 0.05, 1.0}[k];
        GeomMesh m;
        char     name[96];
        snprintf(name, sizeof name, "disc r=%g spacing %g", r, s);
        const char *e = geom_disc(c, r, s, &m);
        check(t, e == NULL, "%s: generated", name);
        if (e)
            continue;
        long rings = lround(r / s);
        rings = rings < 1 ? 1 : rings;
        check(t, m.n_nodes == 3 * rings * (rings + 1) + 1 && m.n_tris == 6 * rings * rings,
              "%s: %d nodes, %d triangles for %ld rings", name, m.n_nodes, m.n_tris, rings);
        check_mesh_basics(t, name, &m, c[2], r / (double)rings);
        MeshReport q = analyse_mesh(&m, c[2]);
        double     polygon = 3 * rings * r * r * sin(PI / (3.0 * rings));
        check(t, close_rel(q.area, polygon, 1e-12), "%s: area %.15g = inscribed %ld-gon", name, q.area, 6 * rings);
        check(t, close_rel(q.boundary_length, 6 * rings * 2 * r * sin(PI / (6.0 * rings)), 1e-12),
              "%s: rim is the inscribed polygon", name);
        int on_rim = 0;
        for (int i = 0; i < m.n_nodes; i++)
            on_rim += fabs(hypot(m.x[3 * i] - c[0], m.x[3 * i + 1] - c[1]) - r) < 1e-12 * r;
        check(t, on_rim == 6 * rings, "%s: outer ring has 6m nodes on the circle", name);
        check(t, q.min_angle_deg > 25, "%s: min angle %.1f degrees", name, q.min_angle_deg);
        geom_mesh_free(&m);
    }
}

/* Edges of a closed mesh: each must be used once in each direction (closed, consistently
 * turned); returns the number of edges, or -1. */
static long closed_edges(const GeomMesh *m)
{
    long n = 3L * m->n_tris, found = 0;
    for (long a = 0; a < n; a++) {
        int p = m->tri[a], q = m->tri[a / 3 * 3 + (a + 1) % 3], back = 0;
        for (long b = 0; b < n; b++)
            back += m->tri[b] == q && m->tri[b / 3 * 3 + (b + 1) % 3] == p;
        if (back != 1)
            return -1;
        found++;
    }
    return found / 2;
}

/* The geodesic sphere: 10 n^2 + 2 nodes on the sphere, 20 n^2 triangles turning outward, a
 * closed surface (every edge used once each way, V - E + F = 2) whose area approaches 4 pi r^2. */
static void test_sphere(Tally *t)
{
    const double c[3] = {0.5, -1, 2};
    for (int k = 0; k < 3; k++) {
        double r = (double[]){1.0, 0.05, 2.0}[k], s = (double[]){2.0, 0.01, 0.5}[k];
        GeomMesh m;
        const char *e = geom_sphere(c, r, s, &m);
        check(t, e == NULL, "sphere r=%g spacing %g: generated", r, s);
        if (e)
            continue;
        long n = lround(r / sin(2 * PI / 5) / s);
        n = n < 1 ? 1 : n;
        check(t, m.n_nodes == 10 * n * n + 2 && m.n_tris == 20 * n * n, "sphere r=%g: %d nodes, %d triangles (n = %ld)", r,
              m.n_nodes, m.n_tris, n);
        double worst = 0, area = 0;
        int inward = 0;
        for (int i = 0; i < m.n_nodes; i++)
            worst = fmax(worst, fabs(hypot(hypot(m.x[3 * i] - c[0], m.x[3 * i + 1] - c[1]), m.x[3 * i + 2] - c[2]) - r));
        for (int f = 0; f < m.n_tris; f++) {
            const double *a = &m.x[3 * m.tri[3 * f]], *b = &m.x[3 * m.tri[3 * f + 1]], *d = &m.x[3 * m.tri[3 * f + 2]];
            double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {d[0] - a[0], d[1] - a[1], d[2] - a[2]};
            double nrm[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
            area += 0.5 * sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
            inward += nrm[0] * (a[0] - c[0]) + nrm[1] * (a[1] - c[1]) + nrm[2] * (a[2] - c[2]) <= 0;
        }
        check(t, worst < 1e-12 * r, "sphere r=%g: every node on the sphere (worst %.1e)", r, worst);
        check(t, inward == 0, "sphere r=%g: every triangle faces outward (%d inward)", r, inward);
        long edges = m.n_nodes <= 1000 ? closed_edges(&m) : 30 * n * n;
        check(t, edges == 30 * n * n && m.n_nodes - edges + m.n_tris == 2,
              "sphere r=%g: closed, consistently turned, V - E + F = 2 (%ld edges)", r, edges);
        /* inscribed polyhedra fall short of the sphere's area by O(h^2) */
        check(t, area < 4 * PI * r * r && area > 4 * PI * r * r * (1 - 0.7 / (double)(n * n)),
              "sphere r=%g: area %.6g below 4 pi r^2 = %.6g by %.2e relative", r, area, 4 * PI * r * r,
              1 - area / (4 * PI * r * r));
        geom_mesh_free(&m);
    }
    GeomMesh m;
    check(t, geom_sphere(c, -1, 0.1, &m) != NULL && m.x == NULL, "sphere of negative radius rejected");
    check(t, geom_sphere(c, 1, 1e-300, &m) != NULL && m.x == NULL, "sphere with tiny spacing rejected");
}

static void test_round_errors(Tally *t)
{
    const double c[3] = {0, 0, 0}, bad[3] = {INFINITY, 0, 0};
    GeomMesh     m;
    const char  *e;
    e = geom_hexagon(c, 0, 0.1, &m);
    check(t, e && strstr(e, "hexagon radius must be positive"), "hexagon r = 0 rejected (%s)", e ? e : "none");
    e = geom_hexagon(c, 1, -0.1, &m);
    check(t, e && strstr(e, "spacing must be positive"), "hexagon negative spacing rejected");
    e = geom_hexagon(bad, 1, 0.1, &m);
    check(t, e && strstr(e, "centre must be finite"), "hexagon infinite centre rejected");
    e = geom_hexagon(c, 1, 1e-9, &m);
    check(t, e && strstr(e, "2000000"), "hexagon with tiny spacing rejected (%s)", e ? e : "none");
    e = geom_disc(c, NAN, 0.1, &m);
    check(t, e && strstr(e, "disc radius must be finite"), "disc NaN radius rejected");
    e = geom_disc(c, 1, 1e-300, &m);
    check(t, e && strstr(e, "spacing is too small") && m.x == NULL, "disc with tiny spacing rejected");
    e = geom_disc(c, 1e308, 1e-308, &m);
    check(t, e != NULL, "disc with overflowing ring count rejected");
}

/* Random shapes over many magnitudes: each call either fails with a message or gives a mesh with
 * all the promised properties (checked fully on the smaller ones). */
static double log_uniform(uint64_t *s, double lo_exp, double hi_exp);

static bool mesh_sound(const GeomMesh *m, double z0, double exact_area, double rel)
{
    MeshReport r = analyse_mesh(m, z0);
    return r.indices_ok && r.planar_ccw && r.conforming && m->n_nodes - r.n_edges + m->n_tris == 1 &&
           r.min_node_gap > 0.01 * r.min_edge && close_rel(r.area, exact_area, rel);
}

static void test_generator_sweep(Tally *t)
{
    uint64_t s = 0x2545F4914F6CDD1Du;
    int      made = 0, refused = 0, bad = 0;
    for (int iter = 0; iter < 400; iter++) {
        double o[3] = {log_uniform(&s, -3, 3), -log_uniform(&s, -3, 3), log_uniform(&s, -3, 3)};
        double len = log_uniform(&s, -4, 2), wid = log_uniform(&s, -4, 2);
        double sp = fmax(len, wid) * log_uniform(&s, -2.3, 0.3);
        if (iter % 50 == 0)
            o[0] = 1e12; /* far from the origin: may be refused, must not be degenerate */
        GeomMesh    m;
        MeshPattern p = (MeshPattern)(iter % 5);
        const char *e = geom_rectangle(o, len, wid, sp, p, (unsigned)iter, &m);
        if (e) {
            refused++;
            bad += m.x != NULL;
            continue;
        }
        made++;
        /* The exact area is that of the representable rectangle: ox + length rounds. */
        double area = ((o[0] + len) - o[0]) * ((o[1] + wid) - o[1]);
        if (m.n_nodes <= 5000 && !mesh_sound(&m, o[2], area, 1e-12)) {
            bad++;
            printf("# unsound: %s origin %g length %g width %g spacing %g\n", pattern_name(p), o[0], len, wid, sp);
        }
        geom_mesh_free(&m);
        double r = sp * log_uniform(&s, -1, 1.5);
        e = geom_hexagon(o, r, sp, &m);
        if (!e && m.n_nodes <= 5000 && !mesh_sound(&m, o[2], 3 * sqrt(3) / 2 * r * r, 1e-9))
            bad++;
        geom_mesh_free(&m);
        e = geom_disc(o, r, sp, &m);
        if (!e && m.n_nodes <= 5000 && !mesh_sound(&m, o[2], 0, 2)) /* area checked elsewhere */
            bad++;
        geom_mesh_free(&m);
    }
    check(t, bad == 0, "sweep: 400 random rectangles (%d made, %d refused), hexagons and discs all sound", made,
          refused);
}

static double log_uniform(uint64_t *s, double lo_exp, double hi_exp)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return pow(10, lo_exp + (hi_exp - lo_exp) * (double)(*s >> 11) / 9007199254740992.0);
}

/* ------------------------------------------------------------------------------------------ */
/* paths                                                                                       */

static double sampled_length(const GeomPath *p)
{
    double len = 0;
    for (int k = 0; k + 1 < p->n_nodes; k++)
        len += dist3(p->x + 3 * k, p->x + 3 * k + 3);
    return len;
}

static void test_line_polyline(Tally *t)
{
    const double a[3] = {0.1, 0.2, 0.3}, b[3] = {1.7, -0.4, 2.9};
    GeomPath     p;
    const char  *e = geom_line(a, b, 7, &p);
    check(t, e == NULL && p.n_nodes == 7 && !p.closed, "line: 7 nodes");
    check(t, memcmp(p.x, a, sizeof a) == 0 && memcmp(p.x + 18, b, sizeof b) == 0, "line: endpoints exact");
    check(t, close_rel(p.length, dist3(a, b), 1e-14), "line: length = |b - a|");
    bool even = true;
    for (int k = 0; k + 1 < 7; k++)
        even &= close_rel(dist3(p.x + 3 * k, p.x + 3 * k + 3), dist3(a, b) / 6, 1e-12);
    check(t, even, "line: equal spacing");
    geom_path_free(&p);
    check(t, geom_line(a, a, 5, &p) != NULL, "line: coincident endpoints rejected");
    check(t, geom_line(a, b, 1, &p) != NULL, "line: one node rejected");
    check(t, geom_line(a, b, 2000001, &p) != NULL, "line: too many nodes rejected");
    const double far_a[3] = {1e12, 0, 0}, far_b[3] = {1e12 + 1e-3, 0, 0};
    e = geom_line(far_a, far_b, 1000, &p);
    check(t, e && strstr(e, "distance from the origin") && p.x == NULL, "line: nodes rounding together refused (%s)",
          e ? e : "none");

    /* Segments of lengths 1, 3, 0.01 share 9 edges: 2, 6, 1 (largest remainder, minimum one). */
    const double pts[] = {0, 0, 0, 1, 0, 0, 1, 3, 0, 1, 3, 0.01};
    e = geom_polyline(pts, 4, 10, &p);
    check(t, e == NULL && p.n_nodes == 10, "polyline: 10 nodes (%s)", e ? e : "ok");
    bool kept = memcmp(p.x + 3 * 2, pts + 3, 3 * sizeof(double)) == 0 &&
                memcmp(p.x + 3 * 8, pts + 6, 3 * sizeof(double)) == 0 &&
                memcmp(p.x + 3 * 9, pts + 9, 3 * sizeof(double)) == 0 && memcmp(p.x, pts, 3 * sizeof(double)) == 0;
    check(t, kept, "polyline: vertices kept as nodes at the expected places (edges 2, 6, 1)");
    check(t, close_rel(p.length, geom_polyline_length(pts, 4), 1e-14) && close_rel(p.length, 4.01, 1e-14),
          "polyline: length %.15g = 4.01", p.length);
    geom_path_free(&p);
    e = geom_polyline(pts, 4, 3, &p);
    check(t, e != NULL, "polyline: fewer nodes than points rejected");
    e = geom_polyline(pts, 4, 4, &p);
    check(t, e == NULL && p.n_nodes == 4 && memcmp(p.x, pts, sizeof pts) == 0, "polyline: n = points keeps points");
    geom_path_free(&p);
    const double dup[] = {0, 0, 0, 1, 1, 1, 1, 1, 1};
    e = geom_polyline(dup, 3, 10, &p);
    check(t, e && strstr(e, "coincide"), "polyline: repeated point rejected");
    const double nan_pts[] = {0, 0, 0, NAN, 1, 1};
    check(t, geom_polyline(nan_pts, 2, 10, &p) != NULL, "polyline: NaN point rejected");
    check(t, geom_polyline(pts, 1, 10, &p) != NULL, "polyline: a single point rejected");
    check(t, geom_polyline_length(pts, 1) == 0, "polyline_length of one point is 0");

    /* Edge shares add up for many awkward inputs. */
    double many[3 * 50];
    for (int k = 0; k < 50; k++) {
        many[3 * k] = k;
        many[3 * k + 1] = (k % 7) * 0.37;
        many[3 * k + 2] = (k % 3) * 1e-3;
    }
    bool sums = true;
    for (int n = 50; n < 400; n += 7) {
        e = geom_polyline(many, 50, n, &p);
        sums &= e == NULL && p.n_nodes == n;
        for (int k = 0; sums && k < n; k++)
            sums &= isfinite(p.x[3 * k]);
        geom_path_free(&p);
    }
    check(t, sums, "polyline: node counts exact over many n");
}

static void test_curves(Tally *t)
{
    const double c[3] = {1, 2, 3}, z[3] = {0, 0, 2}, minus_z[3] = {0, 0, -1}, xaxis[3] = {5, 0, 0};
    GeomPath     p;
    const char  *e = geom_circle(c, 0.5, z, 0, 24, &p);
    check(t, e == NULL && p.closed && p.n_nodes == 24, "circle: 24 nodes, closed");
    check(t, close_rel(p.length, 24 * 2 * 0.5 * sin(PI / 24), 1e-13), "circle: length = polygon perimeter %.15g",
          p.length);
    check(t, close_rel(p.length, sampled_length(&p) + dist3(p.x + 3 * 23, p.x), 1e-13),
          "circle: length includes the closing edge");
    check(t, fabs(p.x[0] - 1.5) < 1e-15 && p.x[1] == 2 && p.x[2] == 3, "circle: node 0 at c + r x");
    check(t, fabs(p.x[3 * 6] - 1) < 1e-15 && fabs(p.x[3 * 6 + 1] - 2.5) < 1e-15, "circle: counter-clockwise about +z");
    geom_path_free(&p);
    check(t, geom_circle(c, 0.5, z, 0, 2, &p) != NULL, "circle: 2 nodes rejected");
    e = geom_circle(c, 0.5, z, PI / 2, 24, &p);
    check(t, e == NULL && fabs(p.x[0] - 1) < 1e-15 && fabs(p.x[1] - 2.5) < 1e-15 && fabs(p.x[3 * 6] - 0.5) < 1e-15,
          "circle: start = 90 deg puts node 0 at c + r y and turns the rest with it");
    geom_path_free(&p);
    check(t, geom_circle(c, -1, z, 0, 8, &p) != NULL, "circle: negative radius rejected");
    const double zero[3] = {0, 0, 0};
    e = geom_circle(c, 1, zero, 0, 8, &p);
    check(t, e && strstr(e, "axis"), "circle: zero axis rejected");
    const double huge_axis[3] = {0, 0, 1e300}, tiny_axis[3] = {0, 0, 1e-300};
    GeomPath     q;
    e = geom_circle(c, 0.5, huge_axis, 0, 24, &p);
    const char *e2 = geom_circle(c, 0.5, tiny_axis, 0, 24, &q);
    check(t, !e && !e2 && memcmp(p.x, q.x, sizeof(double) * 72) == 0, "circle: axis magnitude does not matter");
    geom_path_free(&p);
    geom_path_free(&q);
    e = geom_circle(c, 1e308, z, 0, 8, &p);
    check(t, e && strstr(e, "overflow"), "circle: overflowing coordinates rejected (%s)", e ? e : "none");

    e = geom_arc(c, 2, 0, PI / 2, minus_z, 5, &p);
    check(t, e == NULL && !p.closed, "arc: generated");
    check(t, fabs(p.x[3 * 4] - 1) < 1e-15 && fabs(p.x[3 * 4 + 1] - 0) < 1e-15,
          "arc: about -z turns clockwise seen from +z");
    check(t, close_rel(p.length, 4 * 2 * 2 * sin(PI / 16), 1e-13), "arc: length = chord sum");
    geom_path_free(&p);
    e = geom_arc(c, 1, 0, PI / 2, xaxis, 3, &p);
    check(t, e == NULL && fabs(p.x[0] - 1) < 1e-15 && fabs(p.x[1] - 3) < 1e-15 && fabs(p.x[3 * 2 + 2] - 4) < 1e-15,
          "arc: axis along x uses u = +y, v = +z");
    geom_path_free(&p);
    e = geom_arc(c, 1, 0, 2 * PI, z, 9, &p);
    check(t, e && strstr(e, "full turn"), "arc: full turn rejected (%s)", e ? e : "none");
    check(t, geom_arc(c, 1, 1, 1, z, 9, &p) != NULL, "arc: zero span rejected");
    check(t, geom_arc(c, 1, 0, INFINITY, z, 9, &p) != NULL, "arc: infinite angle rejected");

    const double tilted[3] = {1, 1, 1};
    e = geom_helix(c, 0.3, 0.2, 2.5, tilted, 101, &p);
    check(t, e == NULL && p.n_nodes == 101, "helix: generated");
    double w[3] = {1 / sqrt(3), 1 / sqrt(3), 1 / sqrt(3)};
    double rise_end = 0, max_radius_err = 0;
    for (int k = 0; k < p.n_nodes; k++) {
        double d[3] = {p.x[3 * k] - c[0], p.x[3 * k + 1] - c[1], p.x[3 * k + 2] - c[2]};
        double along = d[0] * w[0] + d[1] * w[1] + d[2] * w[2];
        double radial = sqrt(fmax(0, d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - along * along));
        max_radius_err = fmax(max_radius_err, fabs(radial - 0.3));
        if (k == p.n_nodes - 1)
            rise_end = along;
    }
    check(t, fabs(rise_end - 0.2 * 2.5) < 1e-14, "helix: rises pitch * turns (%.15g)", rise_end);
    check(t, max_radius_err < 1e-14, "helix: every node at radius r from the axis");
    check(t, close_rel(p.length, sampled_length(&p), 1e-14), "helix: length is the sampled polyline's");
    double ideal = 2.5 * hypot(2 * PI * 0.3, 0.2);
    check(t, p.length < ideal && p.length > 0.99 * ideal, "helix: length just under the ideal curve");
    geom_path_free(&p);
    check(t, geom_helix(c, 0.3, 0, 2, z, 50, &p) != NULL, "helix: zero pitch rejected");
    check(t, geom_helix(c, 0.3, 0.1, -1, z, 50, &p) != NULL, "helix: negative turns rejected");
    e = geom_helix(c, 0.3, -0.1, 1, z, 50, &p);
    check(t, e == NULL && fabs(p.x[3 * 49 + 2] - (3 - 0.1)) < 1e-15, "helix: negative pitch descends");
    geom_path_free(&p);
}

/* ------------------------------------------------------------------------------------------ */
/* importers                                                                                   */

typedef struct TempDir {
    char path[512];
    char file[600];
} TempDir;

static const char *write_file(TempDir *d, const char *name, const char *text, size_t len)
{
    snprintf(d->file, sizeof d->file, "%s/%s", d->path, name);
    FILE *f = fopen(d->file, "wb");
    if (!f)
        return d->file;
    fwrite(text, 1, len, f);
    fclose(f);
    return d->file;
}

static const char *write_text(TempDir *d, const char *name, const char *text)
{
    return write_file(d, name, text, strlen(text));
}

static double mesh_area_3d(const GeomMesh *m)
{
    double area = 0;
    for (int t = 0; t < m->n_tris; t++) {
        const double *a = m->x + 3 * m->tri[3 * t], *b = m->x + 3 * m->tri[3 * t + 1], *c = m->x + 3 * m->tri[3 * t + 2];
        double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
        area += 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    }
    return area;
}

static void test_obj_good(Tally *t, TempDir *d)
{
    const char *path = write_text(d, "good.obj",
                                  "# unit square as a quad, then a triangle with negative indices\r\n"
                                  "mtllib x.mtl\n"
                                  "o square\n"
                                  "v 0 0 0\n"
                                  "v 1.0 0 0 1.0\n"
                                  "v\t1 1 0\n"
                                  "v 0 1e0 0   # trailing comment\n"
                                  "vt 0 0\nvn 0 0 1\ns off\nusemtl red\n"
                                  "f 1/1/1 2/1/1 3/1/1 4/1/1\n"
                                  "\n"
                                  "v 2 0 0\n"
                                  "f -4//1 -1//1 -3//1\n"
                                  "l 1 2\n");
    GeomMesh m;
    char     err[256] = "";
    bool     ok = geom_read_obj(path, 2.0, &m, err, sizeof err);
    check(t, ok, "obj: good file read (%s)", err);
    if (!ok)
        return;
    check(t, m.n_nodes == 5 && m.n_tris == 3, "obj: quad fanned into 2 triangles plus 1 (%d nodes, %d triangles)",
          m.n_nodes, m.n_tris);
    int want[9] = {0, 1, 2, 0, 2, 3, 1, 4, 2};
    check(t, memcmp(m.tri, want, sizeof want) == 0, "obj: 0-based indices, negative ones resolved");
    check(t, m.x[3 * 4] == 4.0 && m.x[3 * 2 + 1] == 2.0, "obj: coordinates scaled");
    check(t, close_rel(mesh_area_3d(&m), 6.0, 1e-15), "obj: area 6 after scaling by 2");
    MeshReport r = analyse_mesh(&m, 0);
    check(t, r.planar_ccw && r.conforming, "obj: winding kept");
    geom_mesh_free(&m);
}

static void expect_obj_error(Tally *t, TempDir *d, const char *text, size_t len, const char *expect)
{
    const char *path = write_file(d, "bad.obj", text, len);
    GeomMesh    m = {0};
    char        err[256] = "";
    bool        ok = geom_read_obj(path, 1.0, &m, err, sizeof err);
    check(t, !ok && strstr(err, expect) && m.x == NULL && m.tri == NULL, "obj error \"%s\" (got \"%s\")", expect, err);
    geom_mesh_free(&m);
}

static void test_obj_bad(Tally *t, TempDir *d)
{
    const char *tri3 = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";
    char        buf[512];
#define BAD(body, expect)                                                                                             \
    do {                                                                                                              \
        snprintf(buf, sizeof buf, "%s%s", tri3, body);                                                                \
        expect_obj_error(t, d, buf, strlen(buf), expect);                                                             \
    } while (0)
    BAD("f 1 2 9\n", "line 4: face index 9 is out of range (the file has 3 vertices)");
    BAD("v 1 1 0\nv 2 2 0\nv 3 3 0\nv 4 4 0\nv 5 5 0\n\nf 1 2 3\nf 1 2 9\n",
        "line 11: face index 9 is out of range (the file has 8 vertices)");
    BAD("f 0 1 2\n", "line 4: face index 0 is invalid");
    BAD("f -4 1 2\n", "line 4: face index -4 is out of range");
    BAD("f 1 2\n", "line 4: a face needs at least 3 vertices, found 2");
    BAD("f\n", "found 0");
    BAD("f 1 2 x\n", "line 4: 'x' is not a vertex index");
    BAD("f 1 2 3.5\n", "'3.5' is not a vertex index");
    BAD("f 1 2 99999999999999999999\n", "is not a vertex index");
    BAD("f 1 2 /3\n", "is not a vertex index");
    BAD("v 0 abc 0\n", "line 4: 'abc' is not a finite number");
    BAD("v 0 nan 0\n", "'nan' is not a finite number");
    BAD("v 0 1e999 0\n", "'1e999' is not a finite number");
    BAD("v 0 1\n", "line 4: a vertex needs 3 coordinates, found 2");
    BAD("f 1 1 2\n", "line 4: triangle 1 1 2 has zero area");
    BAD("v 2 0 0\nf 1 2 4\n", "line 5: triangle 1 2 4 has zero area");
    BAD("", "no triangles");
#undef BAD
    expect_obj_error(t, d, "", 0, "no triangles");
    expect_obj_error(t, d, "v 0 0 0\nv 1 0 0\nv 0 1\0 0\nf 1 2 3\n", 32, "line 3: '1?' is not a finite number");

    /* A huge number token is shown shortened. */
    size_t big = 200000;
    char  *huge = malloc(big + 64);
    memcpy(huge, "v 0 0 ", 6);
    memset(huge + 6, '7', big);
    memcpy(huge + 6 + big, "\nf 1 1 1\n", 10);
    expect_obj_error(t, d, huge, strlen(huge), "line 1: '7777");
    free(huge);

    GeomMesh m;
    char     err[256];
    snprintf(d->file, sizeof d->file, "%s/missing.obj", d->path);
    bool ok = geom_read_obj(d->file, 1.0, &m, err, sizeof err);
    check(t, !ok && strstr(err, "cannot open") && strstr(err, "missing.obj"), "obj: missing file (%s)", err);
    ok = geom_read_obj(d->file, 1.0, &m, NULL, 0);
    check(t, !ok, "obj: error without an error buffer is fine");
    const char *path = write_text(d, "ok.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    ok = geom_read_obj(path, -1.0, &m, err, sizeof err);
    check(t, !ok && strstr(err, "scale"), "obj: negative scale rejected");
    ok = geom_read_obj(path, 1e308, &m, err, sizeof err);
    check(t, ok, "obj: large scale fine when coordinates stay finite");
    geom_mesh_free(&m);
    path = write_text(d, "ok.obj", "v 0 0 0\nv 1e10 0 0\nv 0 1 0\nf 1 2 3\n");
    ok = geom_read_obj(path, 1e300, &m, err, sizeof err);
    check(t, !ok && strstr(err, "line 2: coordinate is too large"), "obj: overflow on scaling reported (%s)", err);
    ok = geom_read_obj(path, 1e300, &m, err, 8);
    check(t, !ok && strcmp(err, "line 2:") == 0, "obj: message truncated to a small buffer (\"%s\")", err);
}

static void test_obj_long_lines(Tally *t, TempDir *d)
{
    size_t pad = 1 << 20;
    size_t cap = pad + 256;
    char  *text = malloc(cap);
    size_t n = 0;
    n += (size_t)snprintf(text + n, cap - n, "v 0 0 0\nv 1 0 0 #");
    memset(text + n, 'c', pad);
    n += pad;
    n += (size_t)snprintf(text + n, cap - n, "\nv 0 1 0\nf 1 2 3");
    const char *path = write_file(d, "long.obj", text, n);
    free(text);
    GeomMesh m;
    char     err[256] = "";
    bool     ok = geom_read_obj(path, 1.0, &m, err, sizeof err);
    check(t, ok && m.n_tris == 1, "obj: megabyte-long comment line and no final newline (%s)", err);
    if (ok)
        geom_mesh_free(&m);
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static const char *const FUZZ_BITS[] = {"v ", "f ", "1", "2", "3", "-1", "-9", "0", " ", "\n", "/", "//", ".",
                                        "e9", "#", "\r", "nan", "\0", "\t", "99999999999", "*Nodes\n",
                                        "*Triangles\n", ",", "*Edges\n", "x", "-2147483648", "1e-320"};

/* Appends a random fragment; returns its length. */
static size_t fuzz_fragment(uint64_t *s, char *out)
{
    const char *b = FUZZ_BITS[xorshift(s) % (sizeof FUZZ_BITS / sizeof FUZZ_BITS[0])];
    size_t      len = b[0] ? strlen(b) : 1;
    memcpy(out, b, len);
    return len;
}

/* Either fragments strung together or a valid file with a few bytes replaced by fragments:
 * the importers must fail or succeed, never crash or leak (ASan checks). */
static size_t fuzz_file(uint64_t *s, char *buf, size_t cap)
{
    static const char *const seeds[] = {
        "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\nf -4 -3 -1\n",
        "*Nodes\n0, 0, 0\n1, 0, 0\n1, 1, 0\n0, 1, 0\n*Edges\n1, 2\n*Triangles\n1, 2, 3\n1, 3, 4\n",
    };
    size_t n = 0;
    if (xorshift(s) % 3 == 0) {
        while (n < cap - 32)
            n += fuzz_fragment(s, buf + n);
        return n;
    }
    const char *seed = seeds[xorshift(s) % 2];
    size_t      len = strlen(seed);
    int         edits = 1 + (int)(xorshift(s) % 3);
    for (size_t k = 0; k < len && n < cap - 32; k++) {
        if (edits > 0 && xorshift(s) % (len / 3) == 0) {
            edits--;
            n += fuzz_fragment(s, buf + n);
            if (xorshift(s) % 2)
                continue; /* replace rather than insert */
        }
        buf[n++] = seed[k];
    }
    return n;
}

static void test_obj_fuzz(Tally *t, TempDir *d)
{
    uint64_t s = 88172645463325252u;
    char     buf[600];
    int      accepted = 0;
    for (int iter = 0; iter < 5000; iter++) {
        size_t      n = fuzz_file(&s, buf, sizeof buf);
        const char *path = write_file(d, "fuzz.txt", buf, n);
        GeomMesh    m;
        char        err[128];
        if (geom_read_obj(path, 1.0, &m, err, sizeof err)) {
            accepted++;
            geom_mesh_free(&m);
        }
        if (geom_read_dismech(path, 1.0, &m, err, sizeof err)) {
            accepted++;
            geom_mesh_free(&m);
        }
    }
    check(t, accepted > 0, "importers survive 5000 fuzzed files (%d accepted)", accepted);
}

static void test_dismech(Tally *t, TempDir *d)
{
    const char *path = write_text(d, "square.txt",
                                  "\xEF\xBB\xBF# a unit square in two triangles (after a byte-order mark)\n"
                                  "*Nodes\n"
                                  "0.0, 0.0, 0.0\n"
                                  "1.0, 0.0, 0.0   # comment\n"
                                  "1 1 0\n"
                                  "  0,1,0,\n"
                                  "\n"
                                  "*Edges\n"
                                  "1, 2\n"
                                  "2, 3\n"
                                  "*triangles\n"
                                  "1, 2, 3\n"
                                  "1, 3, 4\n");
    GeomMesh m;
    char     err[256] = "";
    bool     ok = geom_read_dismech(path, 0.5, &m, err, sizeof err);
    check(t, ok && m.n_nodes == 4 && m.n_tris == 2, "dismech: good file read (%s)", err);
    if (ok) {
        int want[6] = {0, 1, 2, 0, 2, 3};
        check(t, memcmp(m.tri, want, sizeof want) == 0, "dismech: 1-based indices made 0-based");
        check(t, close_rel(mesh_area_3d(&m), 0.25, 1e-15), "dismech: area after scaling by 0.5");
        geom_mesh_free(&m);
    }
    struct {
        const char *text, *expect;
    } bad[] = {
        {"0 0 0\n", "line 1: data before any section"},
        {"*Nodes\n0 0 0\n1 0 0\n0 1 0\n*Triangles\n1 2 5\n", "line 6: triangle index 5 is out of range (the file has 3 nodes)"},
        {"*Nodes\n0 0 0\n1 0 0\n0 1 0\n*Triangles\n1 2 0\n", "line 6: triangle index 0 is invalid"},
        {"*Nodes\n0 0 0\n1 0 0\n0 1 0\n*Triangles\n1 2 3 4\n", "line 6: a triangle needs 3 node indices, found 4"},
        {"*Nodes\n0 0 0\n1 0\n", "line 3: a node needs 3 coordinates (x, y, z), found 2"},
        {"*Nodes\n0 0 0\n1 0 q\n", "line 3: 'q' is not a finite number"},
        {"*Nodes\n0 0 0\n1 0 0\n0 1 0\n*Shells\n", "line 5: unknown section '*Shells'"},
        {"*\n", "line 1: a section name must follow"},
        {"*Nodes\n0 0 0\n", "no triangles"},
        {"*Nodes\n0 0 0\n1 0 0\n2 0 0\n*Triangles\n1 2 3\n", "line 6: triangle 1 2 3 has zero area"},
        {"*Triangles\n1 2 3\n*Nodes\n0 0 0\n1 0 0\n", "line 2: triangle index 3 is out of range (the file has 2 nodes)"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        path = write_text(d, "bad.txt", bad[k].text);
        memset(&m, 0, sizeof m);
        ok = geom_read_dismech(path, 1.0, &m, err, sizeof err);
        check(t, !ok && strstr(err, bad[k].expect) && m.x == NULL, "dismech error \"%s\" (got \"%s\")", bad[k].expect,
              err);
    }
    snprintf(d->file, sizeof d->file, "%s/nothing.txt", d->path);
    ok = geom_read_dismech(d->file, 1.0, &m, err, sizeof err);
    check(t, !ok && strstr(err, "cannot open"), "dismech: missing file (%s)", err);
}

static void remove_temp_dir(TempDir *d)
{
    const char *names[] = {"good.obj", "bad.obj", "ok.obj", "long.obj", "fuzz.txt", "square.txt", "bad.txt"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        snprintf(d->file, sizeof d->file, "%s/%s", d->path, names[k]);
        remove(d->file);
    }
    rmdir(d->path);
}

static void test_importers(Tally *t)
{
    TempDir d;
    if (!tap_mkdtemp(d.path, sizeof d.path, "srd_test_geom_")) {
        check(t, false, "create a temporary directory");
        return;
    }
    test_obj_good(t, &d);
    test_obj_bad(t, &d);
    test_obj_long_lines(t, &d);
    test_dismech(t, &d);
    test_obj_fuzz(t, &d);
    remove_temp_dir(&d);
}

int main(void)
{
    Tally t = {0, 0};
    test_rectangles(&t);
    test_rectangle_details(&t);
    test_rectangle_errors(&t);
    test_hexagon(&t);
    test_disc(&t);
    test_sphere(&t);
    test_round_errors(&t);
    test_generator_sweep(&t);
    test_line_polyline(&t);
    test_curves(&t);
    test_importers(&t);
    printf("# %d checks, %d failed\n", t.run, t.failed);
    return t.failed ? 1 : 0;
}
