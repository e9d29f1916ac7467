/* geom.c — samples rod centrelines (paths) and triangulates flat shells (meshes) from shape parameters. */
#include "geom.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Caps every generated path and mesh, so that a tiny spacing is reported instead of exhausting memory. */
enum { MAX_NODES = 2000000 };
#define TOO_MANY_NODES(what) what " would have more than 2000000 nodes: the spacing is too small"

static const double PI = 3.14159265358979323846;

/* An arc is rejected when it comes this close to a full turn, because its end nodes would
 * (nearly) coincide; a closed ring is what geom_circle is for. */
static const double FULL_TURN_MARGIN = 1e-9;

/* Every edge must be longer than this times the largest coordinate magnitude, so that rounding
 * coordinates (relative error 1.1e-16) moves nodes by at most about 1e-9 of an edge. */
static const double MIN_EDGE_PER_COORD = 1e-7;

/* ------------------------------------------------------------------------------------------ */
/* small vector helpers                                                                        */

static bool vec_finite(const double a[3]) { return isfinite(a[0]) && isfinite(a[1]) && isfinite(a[2]); }

static double vec_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static double vec_dist(const double a[3], const double b[3])
{
    double d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    return sqrt(vec_dot(d, d));
}

/* NaN or infinity when any coordinate is not finite. */
static double max_abs_coordinate(const double *x, int n_nodes)
{
    double big = 0;
    for (int i = 0; i < 3 * n_nodes; i++)
        big = isfinite(x[i]) ? fmax(big, fabs(x[i])) : INFINITY;
    return big;
}

static void vec_cross(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* ------------------------------------------------------------------------------------------ */
/* paths                                                                                       */

void geom_path_free(GeomPath *p)
{
    if (!p)
        return;
    free(p->x);
    memset(p, 0, sizeof *p);
}

static const char *check_node_count(int n, int minimum)
{
    if (n < minimum)
        return minimum == 3 ? "a circle needs at least 3 nodes" : "a path needs at least 2 nodes";
    if (n > MAX_NODES)
        return "a path may have at most 2000000 nodes";
    return NULL;
}

static const char *path_alloc(GeomPath *out, int n, bool closed)
{
    out->x = malloc(sizeof(double) * 3 * (size_t)n);
    if (!out->x)
        return "out of memory";
    out->n_nodes = n;
    out->closed = closed;
    return NULL;
}

/* Guarantees what callers rely on: finite nodes, and consecutive nodes far enough apart compared
 * with the coordinates that rounding cannot distort the edges (see MIN_EDGE_PER_COORD). The
 * stored length is that of the polyline actually sampled, so that rest lengths derived from it
 * agree with the nodes rather than with the ideal curve. */
static const char *path_finish(GeomPath *p)
{
    double big = max_abs_coordinate(p->x, p->n_nodes);
    if (!isfinite(big)) {
        geom_path_free(p);
        return "path coordinates overflow: the path is too large";
    }
    double len = 0;
    int    n_edges = p->closed ? p->n_nodes : p->n_nodes - 1;
    for (int k = 0; k < n_edges; k++) {
        double edge = vec_dist(p->x + 3 * k, p->x + 3 * ((k + 1) % p->n_nodes));
        if (!isfinite(edge)) {
            geom_path_free(p);
            return "path coordinates overflow: the path is too large";
        }
        if (!(edge > MIN_EDGE_PER_COORD * big)) {
            geom_path_free(p);
            return "the path's nodes are too close for its distance from the origin (coordinates would lose precision)";
        }
        len += edge;
    }
    p->length = len;
    return NULL;
}

/* Exact at both ends, so segment ends land on the given vertices, and constant along any axis
 * where a and b agree, so an axis-aligned segment stays exactly axis-aligned. */
static void lerp_point(const double a[3], const double b[3], double t, double *out)
{
    for (int d = 0; d < 3; d++)
        out[d] = t == 1 ? b[d] : a[d] + t * (b[d] - a[d]);
}

const char *geom_line(const double a[3], const double b[3], int n, GeomPath *out)
{
    if (!out)
        return "no output path given";
    memset(out, 0, sizeof *out);
    if (!a || !b || !vec_finite(a) || !vec_finite(b))
        return "line endpoints must be finite";
    const char *e = check_node_count(n, 2);
    if (e)
        return e;
    if (!(vec_dist(a, b) > 0))
        return "line endpoints coincide";
    if ((e = path_alloc(out, n, false)))
        return e;
    for (int k = 0; k < n; k++)
        lerp_point(a, b, (double)k / (n - 1), out->x + 3 * k);
    return path_finish(out);
}

double geom_polyline_length(const double *pts, int n_pts)
{
    if (!pts || n_pts < 2)
        return 0;
    double len = 0;
    for (int k = 0; k + 1 < n_pts; k++)
        len += vec_dist(pts + 3 * k, pts + 3 * (k + 1));
    return len;
}

typedef struct SegmentShare {
    int    seg;
    double remainder; /* exact quota minus edges given so far */
} SegmentShare;

static int by_remainder_desc(const void *pa, const void *pb)
{
    const SegmentShare *a = pa, *b = pb;
    if (a->remainder != b->remainder)
        return a->remainder > b->remainder ? -1 : 1;
    return a->seg - b->seg; /* deterministic ties: earlier segment first */
}

/* Largest remainder: floor of each quota (at least 1), then the leftover edges go to the
 * largest remainders; edges taken back (when minimum-1 segments overshoot) come from the
 * smallest remainders among segments that can spare one. */
static const char *share_edges(const double *seg_len, int n_seg, int n_edges, int *edges)
{
    double total = 0;
    for (int s = 0; s < n_seg; s++)
        total += seg_len[s];
    SegmentShare *order = malloc(sizeof *order * (size_t)n_seg);
    if (!order)
        return "out of memory";
    long given = 0;
    for (int s = 0; s < n_seg; s++) {
        double quota = n_edges * (seg_len[s] / total);
        edges[s] = quota < 1 ? 1 : (int)floor(quota);
        given += edges[s];
        order[s] = (SegmentShare){s, quota - edges[s]};
    }
    qsort(order, (size_t)n_seg, sizeof *order, by_remainder_desc);
    for (int k = 0; given < n_edges; k = (k + 1) % n_seg) {
        edges[order[k].seg]++;
        given++;
    }
    /* n_edges >= n_seg guarantees some segment holds two or more edges while given > n_edges. */
    for (int k = n_seg - 1; given > n_edges; k = (k + n_seg - 1) % n_seg) {
        if (edges[order[k].seg] > 1) {
            edges[order[k].seg]--;
            given--;
        }
    }
    free(order);
    return NULL;
}

static const char *check_polyline_points(const double *pts, int n_pts, double *seg_len)
{
    for (int k = 0; k < n_pts; k++)
        if (!vec_finite(pts + 3 * k))
            return "polyline points must be finite";
    for (int s = 0; s + 1 < n_pts; s++) {
        seg_len[s] = vec_dist(pts + 3 * s, pts + 3 * (s + 1));
        if (!(seg_len[s] > 0))
            return "polyline has two consecutive points that coincide";
        if (!isfinite(seg_len[s]))
            return "polyline coordinates are too large";
    }
    return NULL;
}

const char *geom_polyline(const double *pts, int n_pts, int n, GeomPath *out)
{
    if (!out)
        return "no output path given";
    memset(out, 0, sizeof *out);
    if (!pts || n_pts < 2)
        return "a polyline needs at least 2 points";
    if (n_pts > MAX_NODES)
        return "a polyline may have at most 2000000 points";
    const char *e = check_node_count(n, 2);
    if (e)
        return e;
    if (n < n_pts)
        return "a polyline needs at least as many nodes as it has points";
    int     n_seg = n_pts - 1;
    double *seg_len = malloc(sizeof(double) * (size_t)n_seg);
    int    *edges = malloc(sizeof(int) * (size_t)n_seg);
    if (!seg_len || !edges)
        e = "out of memory";
    if (!e)
        e = check_polyline_points(pts, n_pts, seg_len);
    if (!e)
        e = share_edges(seg_len, n_seg, n - 1, edges);
    if (!e)
        e = path_alloc(out, n, false);
    if (!e) {
        int node = 0;
        for (int s = 0; s < n_seg; s++)
            for (int k = 0; k < edges[s]; k++)
                lerp_point(pts + 3 * s, pts + 3 * (s + 1), (double)k / edges[s], out->x + 3 * node++);
        memcpy(out->x + 3 * node, pts + 3 * n_seg, sizeof(double) * 3);
        e = path_finish(out);
    }
    free(seg_len);
    free(edges);
    return e;
}

/* The frame documented in geom.h: u x v = axis/|axis|, u = +x projected on the plane, or +y
 * when the axis is (numerically) along x. */
static const char *plane_frame(const double axis[3], double u[3], double v[3], double w[3])
{
    if (!axis || !vec_finite(axis))
        return "axis must be finite";
    double big = fmax(fabs(axis[0]), fmax(fabs(axis[1]), fabs(axis[2])));
    if (!(big > 0))
        return "axis must be a nonzero vector";
    for (int d = 0; d < 3; d++) /* scaled first so that huge or tiny axes neither overflow nor underflow */
        w[d] = axis[d] / big;
    double len = sqrt(vec_dot(w, w));
    for (int d = 0; d < 3; d++)
        w[d] /= len;
    double ref[3] = {1, 0, 0};
    for (int attempt = 0; attempt < 2; attempt++) {
        double along = vec_dot(ref, w);
        for (int d = 0; d < 3; d++)
            u[d] = ref[d] - along * w[d];
        double ulen = sqrt(vec_dot(u, u));
        if (ulen > 1e-9) {
            for (int d = 0; d < 3; d++)
                u[d] /= ulen;
            vec_cross(w, u, v);
            return NULL;
        }
        ref[0] = 0;
        ref[1] = 1;
    }
    return "axis must be a nonzero vector"; /* unreachable: +x and +y cannot both be along w */
}

typedef struct CurveFrame {
    double c[3], u[3], v[3], w[3];
    double r;
} CurveFrame;

typedef enum { CURVE_ARC, CURVE_CIRCLE, CURVE_HELIX } CurveKind;

static const char *curve_frame(CurveKind kind, const double c[3], double r, const double axis[3], CurveFrame *f)
{
    static const char *const centre_msg[] = {"arc centre must be finite", "circle centre must be finite",
                                             "helix centre must be finite"};
    static const char *const finite_msg[] = {"arc radius must be finite", "circle radius must be finite",
                                             "helix radius must be finite"};
    static const char *const positive_msg[] = {"arc radius must be positive", "circle radius must be positive",
                                               "helix radius must be positive"};
    if (!c || !vec_finite(c))
        return centre_msg[kind];
    if (!isfinite(r))
        return finite_msg[kind];
    if (!(r > 0))
        return positive_msg[kind];
    memcpy(f->c, c, sizeof f->c);
    f->r = r;
    return plane_frame(axis, f->u, f->v, f->w);
}

/* Point at angle a, lifted by `rise` along the axis. */
static void curve_point(const CurveFrame *f, double a, double rise, double *out)
{
    double ca = cos(a), sa = sin(a);
    for (int d = 0; d < 3; d++)
        out[d] = f->c[d] + f->r * (ca * f->u[d] + sa * f->v[d]) + rise * f->w[d];
}

const char *geom_arc(const double c[3], double r, double a0, double a1, const double axis[3], int n, GeomPath *out)
{
    if (!out)
        return "no output path given";
    memset(out, 0, sizeof *out);
    CurveFrame f;
    const char *e = curve_frame(CURVE_ARC, c, r, axis, &f);
    if (e)
        return e;
    if (!isfinite(a0) || !isfinite(a1))
        return "arc angles must be finite";
    if (a0 == a1)
        return "arc start and end angles are equal";
    if (fabs(a1 - a0) >= 2 * PI * (1 - FULL_TURN_MARGIN))
        return "an arc must span less than a full turn (use a circle for a closed ring)";
    if ((e = check_node_count(n, 2)))
        return e;
    if ((e = path_alloc(out, n, false)))
        return e;
    for (int k = 0; k < n; k++) {
        double t = (double)k / (n - 1);
        curve_point(&f, (1 - t) * a0 + t * a1, 0, out->x + 3 * k);
    }
    return path_finish(out);
}

const char *geom_circle(const double c[3], double r, const double axis[3], double a0, int n, GeomPath *out)
{
    if (!out)
        return "no output path given";
    memset(out, 0, sizeof *out);
    CurveFrame f;
    const char *e = curve_frame(CURVE_CIRCLE, c, r, axis, &f);
    if (e)
        return e;
    if (!isfinite(a0))
        return "circle start angle must be finite";
    if ((e = check_node_count(n, 3)))
        return e;
    if ((e = path_alloc(out, n, true)))
        return e;
    for (int k = 0; k < n; k++)
        curve_point(&f, a0 + 2 * PI * k / n, 0, out->x + 3 * k);
    return path_finish(out);
}

/* A negative pitch is accepted and gives a left-handed helix (descending along the axis). */
const char *geom_helix(const double c[3], double r, double pitch, double turns, const double axis[3], int n,
                       GeomPath *out)
{
    if (!out)
        return "no output path given";
    memset(out, 0, sizeof *out);
    CurveFrame f;
    const char *e = curve_frame(CURVE_HELIX, c, r, axis, &f);
    if (e)
        return e;
    if (!isfinite(pitch))
        return "helix pitch must be finite";
    if (pitch == 0)
        return "helix pitch must be nonzero (its turns would overlap)";
    if (!isfinite(turns))
        return "helix turns must be finite";
    if (!(turns > 0))
        return "helix turns must be positive";
    if ((e = check_node_count(n, 2)))
        return e;
    if ((e = path_alloc(out, n, false)))
        return e;
    for (int k = 0; k < n; k++) {
        double t = turns * k / (n - 1); /* turns completed at node k */
        curve_point(&f, 2 * PI * t, pitch * t, out->x + 3 * k);
    }
    return path_finish(out);
}

/* ------------------------------------------------------------------------------------------ */
/* meshes                                                                                      */

void geom_mesh_free(GeomMesh *m)
{
    if (!m)
        return;
    free(m->x);
    free(m->tri);
    memset(m, 0, sizeof *m);
}

static const char *mesh_alloc(GeomMesh *m, long n_nodes, long n_tris)
{
    m->x = malloc(sizeof(double) * 3 * (size_t)n_nodes);
    m->tri = malloc(sizeof(int) * 3 * (size_t)n_tris);
    if (!m->x || !m->tri) {
        geom_mesh_free(m);
        return "out of memory";
    }
    m->n_nodes = (int)n_nodes;
    m->n_tris = (int)n_tris;
    return NULL;
}

/* Guarantees the documented postconditions whatever the magnitudes: finite nodes, every triangle
 * of positive area (counter-clockwise from +z), and edges long enough compared with the
 * coordinates that rounding them moves nodes by at most ~1e-9 of an edge, which keeps lengths
 * and areas accurate. A shape tiny compared with its distance from the origin is refused. */
static const char *mesh_finish(GeomMesh *m, const char *error)
{
    if (error)
        return error;
    double big = max_abs_coordinate(m->x, m->n_nodes);
    if (!isfinite(big)) {
        geom_mesh_free(m);
        return "mesh coordinates overflow: the shape is too large";
    }
    double min_edge = MIN_EDGE_PER_COORD * big;
    for (int t = 0; t < m->n_tris; t++) {
        const int *v = m->tri + 3 * t;
        bool       sound = true;
        for (int k = 0; k < 3; k++) { /* max-norm edge length: cannot overflow */
            const double *a = m->x + 3 * v[k], *b = m->x + 3 * v[(k + 1) % 3];
            sound &= fmax(fabs(b[0] - a[0]), fabs(b[1] - a[1])) > min_edge;
        }
        const double *a = m->x + 3 * v[0], *b = m->x + 3 * v[1], *c = m->x + 3 * v[2];
        double        twice_area = (b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]);
        if (!isfinite(twice_area)) {
            geom_mesh_free(m);
            return "mesh coordinates overflow: the shape is too large";
        }
        if (!sound || !(twice_area > 0)) {
            geom_mesh_free(m);
            return "the mesh is too fine for its distance from the origin (coordinates would lose precision)";
        }
    }
    return NULL;
}

static void mesh_set_node(GeomMesh *m, int i, double x, double y, double z)
{
    m->x[3 * i] = x;
    m->x[3 * i + 1] = y;
    m->x[3 * i + 2] = z;
}

static void mesh_add_tri(GeomMesh *m, int *n_written, int a, int b, int c)
{
    int *t = m->tri + 3 * (*n_written)++;
    t[0] = a;
    t[1] = b;
    t[2] = c;
}

/* Intervals across `extent` for a target spacing: round(extent/spacing), at least 1. Done in
 * double and checked against the cap before any conversion to int can overflow. */
static bool interval_count(double extent, double spacing, long *count)
{
    double k = round(extent / spacing);
    if (!(k <= MAX_NODES))
        return false;
    *count = k < 1 ? 1 : (long)k;
    return true;
}

static const char *check_spacing(double spacing)
{
    if (!isfinite(spacing))
        return "mesh spacing must be finite";
    if (!(spacing > 0))
        return "mesh spacing must be positive";
    return NULL;
}

/* Small deterministic generator (xorshift64) so that MESH_RANDOM depends on `seed` only. */
typedef struct Xorshift {
    uint64_t state;
} Xorshift;

static Xorshift xorshift_seeded(unsigned seed)
{
    /* Mix the seed (splitmix64 finaliser) so that nearby seeds give unrelated meshes and seed 0
     * does not leave xorshift stuck at zero. */
    uint64_t z = (uint64_t)seed + 0x9E3779B97F4A7C15u;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    return (Xorshift){z ? z : 1};
}

static uint64_t xorshift_next(Xorshift *g)
{
    uint64_t x = g->state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return g->state = x;
}

/* Uniform in [-1, 1). */
static double xorshift_signed_unit(Xorshift *g)
{
    return (double)(xorshift_next(g) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* ---- rectangle: structured grids (right isosceles, random, nonuniform) ---- */

typedef struct RectSpec {
    double ox, oy, oz, length, width, spacing;
    MeshPattern pattern;
    unsigned    seed;
} RectSpec;

typedef enum { DIAG_UP, DIAG_DOWN } Diagonal; /* up: lower-left to upper-right */

/* x of column i: uniform, or (MESH_NONUNIFORM) geometric with last interval = 3 x first. */
static double grid_column_x(const RectSpec *s, long i, long nx)
{
    if (i == nx - 1)
        return s->ox + s->length;
    if (s->pattern != MESH_NONUNIFORM || nx < 3)
        return s->ox + s->length * ((double)i / (double)(nx - 1));
    /* Intervals grow by q = 3^(1/(nx-2)); x_i = L (q^i - 1) / (q^(nx-1) - 1), with expm1 to keep
     * precision when q is close to 1. */
    double log_q = log(3.0) / (double)(nx - 2);
    return s->ox + s->length * (expm1(log_q * (double)i) / expm1(log_q * (double)(nx - 1)));
}

static double grid_row_y(const RectSpec *s, long j, long ny)
{
    return j == ny - 1 ? s->oy + s->width : s->oy + s->width * ((double)j / (double)(ny - 1));
}

/* Interior nodes move inside a disc of radius 0.2 x min(cell sides, spacing); boundary nodes
 * slide along their side by as much; corners stay. A jitter below 0.2 of the cell size per axis
 * keeps every cell strictly convex, so both diagonals give positive triangles. */
static void jitter_grid(GeomMesh *m, long nx, long ny, double dx, double dy, double spacing, Xorshift *g)
{
    double amp = 0.2 * fmin(fmin(dx, dy), spacing);
    for (long j = 0; j < ny; j++) {
        for (long i = 0; i < nx; i++) {
            bool    side_x = i == 0 || i == nx - 1, side_y = j == 0 || j == ny - 1;
            double *p = m->x + 3 * (j * nx + i);
            if (side_x && side_y)
                continue;
            if (side_x) {
                p[1] += amp * xorshift_signed_unit(g);
            } else if (side_y) {
                p[0] += amp * xorshift_signed_unit(g);
            } else {
                double ex, ey;
                do { /* rejection sampling: uniform in the disc */
                    ex = xorshift_signed_unit(g);
                    ey = xorshift_signed_unit(g);
                } while (ex * ex + ey * ey > 1);
                p[0] += amp * ex;
                p[1] += amp * ey;
            }
        }
    }
}

static Diagonal cell_diagonal(MeshPattern pattern, long i, long j, Xorshift *g)
{
    switch (pattern) {
    case MESH_RANDOM:
        return (xorshift_next(g) >> 32) & 1 ? DIAG_UP : DIAG_DOWN;
    case MESH_NONUNIFORM:
        return (i + j) % 2 ? DIAG_DOWN : DIAG_UP;
    default:
        return DIAG_UP;
    }
}

static const char *rect_grid(const RectSpec *s, GeomMesh *out)
{
    long nx, ny;
    if (!interval_count(s->length, s->spacing, &nx) || !interval_count(s->width, s->spacing, &ny))
        return TOO_MANY_NODES("the rectangle");
    nx++;
    ny++;
    if ((double)nx * (double)ny > MAX_NODES)
        return TOO_MANY_NODES("the rectangle");
    const char *e = mesh_alloc(out, nx * ny, 2 * (nx - 1) * (ny - 1));
    if (e)
        return e;
    for (long j = 0; j < ny; j++)
        for (long i = 0; i < nx; i++)
            mesh_set_node(out, (int)(j * nx + i), grid_column_x(s, i, nx), grid_row_y(s, j, ny), s->oz);
    Xorshift g = xorshift_seeded(s->seed);
    if (s->pattern == MESH_RANDOM)
        jitter_grid(out, nx, ny, s->length / (double)(nx - 1), s->width / (double)(ny - 1), s->spacing, &g);
    int written = 0;
    for (long j = 0; j + 1 < ny; j++) {
        for (long i = 0; i + 1 < nx; i++) {
            int sw = (int)(j * nx + i), se = sw + 1, nw = (int)(sw + nx), ne = nw + 1;
            if (cell_diagonal(s->pattern, i, j, &g) == DIAG_UP) {
                mesh_add_tri(out, &written, sw, se, ne);
                mesh_add_tri(out, &written, sw, ne, nw);
            } else {
                mesh_add_tri(out, &written, sw, se, nw);
                mesh_add_tri(out, &written, se, ne, nw);
            }
        }
    }
    return NULL;
}

/* ---- rectangle: staggered rows (equilateral patterns) ----
 * Worked in local coordinates (s along the rows, t across them). Even rows have n_along nodes
 * spaced d; odd rows are shifted by d/2 and get extra nodes on both sides, so the sides stay
 * straight lines and the rectangle is covered exactly (the end triangles are half-width). */

typedef struct Stagger {
    long   n_along, n_rows;
    double along, across; /* extents */
} Stagger;

static long row_size(const Stagger *st, long row) { return st->n_along + (row % 2); }

static long row_first(const Stagger *st, long row) { return row * st->n_along + row / 2; }

/* Position along the row in half-spacings, exact integers so the zipper never meets a float tie. */
static long half_steps(long row, long k, long n_along)
{
    if (row % 2 == 0)
        return 2 * k;
    if (k == 0)
        return 0;
    if (k == n_along)
        return 2 * (n_along - 1);
    return 2 * k - 1;
}

/* Triangulates the strip between rows `lo` and lo+1 by always advancing along the row whose next
 * node comes first; with both rows straight, every triangle has two nodes on one row and one on
 * the other, hence is non-degenerate and counter-clockwise in (s, t). At the shared last position
 * the row lagging behind advances first, which leaves the half-width triangle at the end rather
 * than a sliver. */
static bool advance_lower_row(const Stagger *st, long lo, long a, long na, long b, long nb)
{
    if (b + 1 == nb)
        return true;
    if (a + 1 == na)
        return false;
    long next_a = half_steps(lo, a + 1, st->n_along), next_b = half_steps(lo + 1, b + 1, st->n_along);
    if (next_a != next_b)
        return next_a < next_b;
    return half_steps(lo, a, st->n_along) <= half_steps(lo + 1, b, st->n_along);
}

static void zip_rows(const Stagger *st, long lo, int *tri, long *n_tri)
{
    long na = row_size(st, lo), nb = row_size(st, lo + 1);
    long fa = row_first(st, lo), fb = row_first(st, lo + 1);
    long a = 0, b = 0;
    while (a + 1 < na || b + 1 < nb) {
        int *t = tri + 3 * (*n_tri)++;
        t[0] = (int)(fa + a);
        if (advance_lower_row(st, lo, a, na, b, nb)) {
            t[1] = (int)(fa + a + 1);
            t[2] = (int)(fb + b);
            a++;
        } else {
            t[1] = (int)(fb + b + 1);
            t[2] = (int)(fb + b);
            b++;
        }
    }
}

static double stagger_s(const Stagger *st, long row, long k)
{
    long h = half_steps(row, k, st->n_along), last = 2 * (st->n_along - 1);
    return h == last ? st->along : st->along * ((double)h / (double)last);
}

static double stagger_t(const Stagger *st, long row)
{
    return row == st->n_rows - 1 ? st->across : st->across * ((double)row / (double)(st->n_rows - 1));
}

/* `rows_along_y` maps (s, t) to (y, x): a reflection, so each triangle's winding is swapped back. */
static const char *rect_staggered(const RectSpec *s, bool rows_along_y, GeomMesh *out)
{
    Stagger st;
    st.along = rows_along_y ? s->width : s->length;
    st.across = rows_along_y ? s->length : s->width;
    double row_pitch = s->spacing * sqrt(3.0) / 2; /* height of an equilateral triangle */
    if (!interval_count(st.along, s->spacing, &st.n_along) || !interval_count(st.across, row_pitch, &st.n_rows))
        return TOO_MANY_NODES("the rectangle");
    st.n_along++;
    st.n_rows++;
    double n_nodes = (double)st.n_rows * (double)st.n_along + (double)(st.n_rows / 2);
    if (n_nodes > MAX_NODES)
        return TOO_MANY_NODES("the rectangle");
    const char *e = mesh_alloc(out, (long)n_nodes, (st.n_rows - 1) * (2 * st.n_along - 1));
    if (e)
        return e;
    for (long row = 0; row < st.n_rows; row++) {
        for (long k = 0; k < row_size(&st, row); k++) {
            double ds = stagger_s(&st, row, k), dt = stagger_t(&st, row);
            double x = rows_along_y ? dt : ds, y = rows_along_y ? ds : dt;
            mesh_set_node(out, (int)(row_first(&st, row) + k), s->ox + x, s->oy + y, s->oz);
        }
    }
    long n_tri = 0;
    for (long row = 0; row + 1 < st.n_rows; row++)
        zip_rows(&st, row, out->tri, &n_tri);
    if (rows_along_y) {
        for (long t = 0; t < n_tri; t++) {
            int tmp = out->tri[3 * t + 1];
            out->tri[3 * t + 1] = out->tri[3 * t + 2];
            out->tri[3 * t + 2] = tmp;
        }
    }
    return NULL;
}

static const char *check_rectangle(const double origin[3], double length, double width, double spacing,
                                   MeshPattern pattern)
{
    if (!origin || !vec_finite(origin))
        return "rectangle origin must be finite";
    if (!isfinite(length))
        return "rectangle length must be finite";
    if (!(length > 0))
        return "rectangle length must be positive";
    if (!isfinite(width))
        return "rectangle width must be finite";
    if (!(width > 0))
        return "rectangle width must be positive";
    const char *e = check_spacing(spacing);
    if (e)
        return e;
    if ((int)pattern < (int)MESH_EQUILATERAL || (int)pattern > (int)MESH_NONUNIFORM)
        return "unknown mesh pattern";
    return NULL;
}

const char *geom_rectangle(const double origin[3], double length, double width, double spacing, MeshPattern pattern,
                           unsigned seed, GeomMesh *out)
{
    if (!out)
        return "no output mesh given";
    memset(out, 0, sizeof *out);
    const char *e = check_rectangle(origin, length, width, spacing, pattern);
    if (e)
        return e;
    RectSpec s = {origin[0], origin[1], origin[2], length, width, spacing, pattern, seed};
    switch (pattern) {
    case MESH_EQUILATERAL:
        return mesh_finish(out, rect_staggered(&s, false, out));
    case MESH_EQUILATERAL_ALIGNED:
        return mesh_finish(out, rect_staggered(&s, true, out));
    default:
        return mesh_finish(out, rect_grid(&s, out));
    }
}

/* ---- hexagon and disc ---- */

typedef enum { SHAPE_HEXAGON, SHAPE_DISC } RoundShape;

static const char *check_round_shape(RoundShape shape, const double c[3], double r, double spacing, long *rings)
{
    static const char *const centre_msg[] = {"hexagon centre must be finite", "disc centre must be finite"};
    static const char *const finite_msg[] = {"hexagon radius must be finite", "disc radius must be finite"};
    static const char *const positive_msg[] = {"hexagon radius must be positive", "disc radius must be positive"};
    if (!c || !vec_finite(c))
        return centre_msg[shape];
    if (!isfinite(r))
        return finite_msg[shape];
    if (!(r > 0))
        return positive_msg[shape];
    const char *e = check_spacing(spacing);
    if (e)
        return e;
    /* Both shapes have 3 m (m + 1) + 1 nodes for m rings. */
    if (!interval_count(r, spacing, rings) || 3.0 * (double)*rings * (double)(*rings + 1) + 1 > MAX_NODES)
        return TOO_MANY_NODES("the mesh");
    return NULL;
}

/* Triangular lattice p = a e1 + b e2 (e1 at 0 degrees, e2 at 60), clipped to |a|, |b|, |a+b| <= m:
 * the hexagon with corners at 0, 60, ... degrees, cut into 6 m^2 equilateral triangles. */
static bool in_hexagon(long a, long b, long m) { return labs(a) <= m && labs(b) <= m && labs(a + b) <= m; }

const char *geom_hexagon(const double c[3], double r, double spacing, GeomMesh *out)
{
    if (!out)
        return "no output mesh given";
    memset(out, 0, sizeof *out);
    long        m;
    const char *e = check_round_shape(SHAPE_HEXAGON, c, r, spacing, &m);
    if (e)
        return e;
    long side = 2 * m + 1;
    int *index = malloc(sizeof(int) * (size_t)(side * side)); /* lattice (a, b) -> node */
    if (!index)
        return "out of memory";
    if ((e = mesh_alloc(out, 3 * m * (m + 1) + 1, 6 * m * m))) {
        free(index);
        return e;
    }
    int    n = 0;
    double h = sqrt(3.0) / 2;
    for (long b = -m; b <= m; b++) {
        for (long a = -m; a <= m; a++) {
            index[(b + m) * side + (a + m)] = -1;
            if (!in_hexagon(a, b, m))
                continue;
            index[(b + m) * side + (a + m)] = n;
            mesh_set_node(out, n++, c[0] + r * ((double)a + 0.5 * (double)b) / (double)m,
                          c[1] + r * h * (double)b / (double)m, c[2]);
        }
    }
    int written = 0;
    for (long b = -m; b < m; b++) {
        for (long a = -m; a < m; a++) {
            /* the rhombus (a, b), (a+1, b), (a+1, b+1), (a, b+1) as two triangles */
            int p = index[(b + m) * side + (a + m)], pa = index[(b + m) * side + (a + 1 + m)];
            int pb = index[(b + 1 + m) * side + (a + m)], pab = index[(b + 1 + m) * side + (a + 1 + m)];
            if (p >= 0 && pa >= 0 && pb >= 0)
                mesh_add_tri(out, &written, p, pa, pb);
            if (pa >= 0 && pab >= 0 && pb >= 0)
                mesh_add_tri(out, &written, pa, pab, pb);
        }
    }
    free(index);
    return mesh_finish(out, NULL);
}

static int disc_ring_first(long k) { return k == 0 ? 0 : (int)(1 + 3 * k * (k - 1)); }

/* Fills the annulus between rings k-1 and k (k >= 2), advancing along whichever ring's next node
 * comes first in angle; integer cross-multiplication compares the angles a/(6(k-1)) and b/(6k)
 * exactly. */
static void zip_rings(GeomMesh *m, long k, int *written)
{
    long n_in = 6 * (k - 1), n_out = 6 * k;
    int  fi = disc_ring_first(k - 1), fo = disc_ring_first(k);
    long a = 0, b = 0;
    while (a < n_in || b < n_out) {
        bool advance_outer = a == n_in || (b < n_out && (b + 1) * (k - 1) <= (a + 1) * k);
        int  in_a = fi + (int)(a % n_in), out_b = fo + (int)(b % n_out);
        if (advance_outer) {
            mesh_add_tri(m, written, in_a, out_b, fo + (int)((b + 1) % n_out));
            b++;
        } else {
            mesh_add_tri(m, written, in_a, out_b, fi + (int)((a + 1) % n_in));
            a++;
        }
    }
}

/* The disc is approximated by the 6m-gon inscribed in its rim (m = rings): the triangles cover
 * exactly that polygon, so their total area is 3 m r^2 sin(pi / (3 m)), slightly less than
 * pi r^2. Ring k has 6k nodes at radius k r / m, the first at angle 0. */
const char *geom_disc(const double c[3], double r, double spacing, GeomMesh *out)
{
    if (!out)
        return "no output mesh given";
    memset(out, 0, sizeof *out);
    long        m;
    const char *e = check_round_shape(SHAPE_DISC, c, r, spacing, &m);
    if (e)
        return e;
    if ((e = mesh_alloc(out, 3 * m * (m + 1) + 1, 6 * m * m)))
        return e;
    mesh_set_node(out, 0, c[0], c[1], c[2]);
    for (long k = 1; k <= m; k++) {
        double radius = k == m ? r : r * (double)k / (double)m;
        for (long i = 0; i < 6 * k; i++) {
            double a = 2 * PI * (double)i / (double)(6 * k);
            mesh_set_node(out, disc_ring_first(k) + (int)i, c[0] + radius * cos(a), c[1] + radius * sin(a), c[2]);
        }
    }
    int written = 0;
    for (int i = 0; i < 6; i++)
        mesh_add_tri(out, &written, 0, 1 + i, 1 + (i + 1) % 6);
    for (long k = 2; k <= m; k++)
        zip_rings(out, k, &written);
    return mesh_finish(out, NULL);
}

/* ---- sphere ---- */

/* A geodesic sphere: the icosahedron's faces cut into n^2 triangles each (frequency n), every
 * node projected radially onto the sphere. Nodes: the 12 corners, then n-1 per icosahedron
 * edge, then (n-1)(n-2)/2 inside each face, so that neighbouring faces share their edge nodes. */
typedef struct Ico {
    double v[12][3];
    int    face[20][3];
    int    edge[12][12]; /* icosahedron edge between two corners, or -1 */
    long   n;
} Ico;

/* (signed volume of the tetrahedron (0, a, b, c)) * 6: positive when a, b, c turn
 * counter-clockwise seen from outside. */
static double triple(const double a[3], const double b[3], const double c[3])
{
    double n[3];
    vec_cross(b, c, n);
    return vec_dot(a, n);
}

static void ico_build(Ico *s, long n)
{
    static const int faces[20][3] = {
        { 0, 11, 5 }, { 0, 5, 1 }, { 0, 1, 7 }, { 0, 7, 10 }, { 0, 10, 11 }, { 1, 5, 9 }, { 5, 11, 4 },
        { 11, 10, 2 }, { 10, 7, 6 }, { 7, 1, 8 }, { 3, 9, 4 }, { 3, 4, 2 }, { 3, 2, 6 }, { 3, 6, 8 },
        { 3, 8, 9 }, { 4, 9, 5 }, { 2, 4, 11 }, { 6, 2, 10 }, { 8, 6, 7 }, { 9, 8, 1 },
    };
    double phi = (1 + sqrt(5.0)) / 2;
    const double raw[12][3] = { { -1, phi, 0 }, { 1, phi, 0 }, { -1, -phi, 0 }, { 1, -phi, 0 },
                                { 0, -1, phi }, { 0, 1, phi }, { 0, -1, -phi }, { 0, 1, -phi },
                                { phi, 0, -1 }, { phi, 0, 1 }, { -phi, 0, -1 }, { -phi, 0, 1 } };
    memcpy(s->v, raw, sizeof raw);
    memcpy(s->face, faces, sizeof faces);
    memset(s->edge, -1, sizeof s->edge);
    s->n = n;
    int e = 0;
    for (int f = 0; f < 20; f++) {
        if (triple(s->v[faces[f][0]], s->v[faces[f][1]], s->v[faces[f][2]]) < 0) { /* turn it outward */
            s->face[f][1] = faces[f][2];
            s->face[f][2] = faces[f][1];
        }
        for (int k = 0; k < 3; k++) {
            int u = faces[f][k], w = faces[f][(k + 1) % 3];
            if (s->edge[u][w] < 0)
                s->edge[u][w] = s->edge[w][u] = e++;
        }
    }
}

/* Node k/n of the way from corner u to corner w (0 < k < n). */
static int ico_edge_node(const Ico *s, int u, int w, long k)
{
    long j = u < w ? k : s->n - k;
    return (int)(12 + s->edge[u][w] * (s->n - 1) + j - 1);
}

/* The node of face f with barycentric weights (n - i - j, i, j) / n on its corners. */
static int ico_node(const Ico *s, int f, long i, long j)
{
    const int *t = s->face[f];
    long n = s->n;
    if (i == 0 && j == 0)
        return t[0];
    if (i == n)
        return t[1];
    if (j == n)
        return t[2];
    if (j == 0)
        return ico_edge_node(s, t[0], t[1], i);
    if (i == 0)
        return ico_edge_node(s, t[0], t[2], j);
    if (i + j == n)
        return ico_edge_node(s, t[1], t[2], j);
    long base = 12 + 30 * (n - 1) + f * (n - 1) * (n - 2) / 2;
    return (int)(base + (j - 1) * (n - 1) - (j - 1) * j / 2 + i - 1);
}

/* Places node `index` at the weights w of corners abc, projected onto the sphere (c, r). */
static void ico_place(GeomMesh *m, const Ico *s, int index, const int abc[3], const double w[3], const double c[3],
                      double r)
{
    double p[3] = { 0, 0, 0 };
    for (int k = 0; k < 3; k++)
        for (int d = 0; d < 3; d++)
            p[d] += w[k] * s->v[abc[k]][d];
    double len = sqrt(vec_dot(p, p));
    mesh_set_node(m, index, c[0] + r * p[0] / len, c[1] + r * p[1] / len, c[2] + r * p[2] / len);
}

/* Every node placed once: edge nodes from the edge's lower corner, so shared ones agree. */
static void ico_nodes(GeomMesh *m, const Ico *s, const double c[3], double r)
{
    long n = s->n;
    for (int k = 0; k < 12; k++) {
        int abc[3] = { k, k, k };
        double w[3] = { 1, 0, 0 };
        ico_place(m, s, k, abc, w, c, r);
    }
    for (int u = 0; u < 12; u++)
        for (int v = u + 1; v < 12; v++)
            for (long k = 1; s->edge[u][v] >= 0 && k < n; k++) {
                int abc[3] = { u, v, v };
                double w[3] = { (double)(n - k) / (double)n, (double)k / (double)n, 0 };
                ico_place(m, s, ico_edge_node(s, u, v, k), abc, w, c, r);
            }
    for (int f = 0; f < 20; f++)
        for (long j = 1; j < n; j++)
            for (long i = 1; i + j < n; i++) {
                double w[3] = { (double)(n - i - j) / (double)n, (double)i / (double)n, (double)j / (double)n };
                ico_place(m, s, ico_node(s, f, i, j), s->face[f], w, c, r);
            }
}

/* Each face's lattice triangles: "up" ones (i, j), (i+1, j), (i, j+1) and "down" ones, which
 * turn the same way as the face. */
static void ico_triangles(GeomMesh *m, const Ico *s)
{
    int written = 0;
    for (int f = 0; f < 20; f++)
        for (long j = 0; j < s->n; j++)
            for (long i = 0; i + j < s->n; i++) {
                int p = ico_node(s, f, i, j), pi = ico_node(s, f, i + 1, j), pj = ico_node(s, f, i, j + 1);
                mesh_add_tri(m, &written, p, pi, pj);
                if (i + j + 2 <= s->n)
                    mesh_add_tri(m, &written, pi, ico_node(s, f, i + 1, j + 1), pj);
            }
}

/* Every triangle of the sphere has positive area and faces outward (away from the centre). */
static const char *sphere_finish(GeomMesh *m, const double c[3])
{
    for (int t = 0; t < m->n_tris; t++) {
        double p[3][3];
        for (int k = 0; k < 3; k++)
            for (int d = 0; d < 3; d++)
                p[k][d] = m->x[3 * m->tri[3 * t + k] + d] - c[d];
        double out = triple(p[0], p[1], p[2]);
        if (!isfinite(out) || !(out > 0)) {
            geom_mesh_free(m);
            return "the sphere is too fine for its size (coordinates would lose precision)";
        }
    }
    return NULL;
}

static const char *check_sphere(const double c[3], double r, double spacing, long *n)
{
    if (!c || !vec_finite(c))
        return "sphere centre must be finite";
    if (!isfinite(r))
        return "sphere radius must be finite";
    if (!(r > 0))
        return "sphere radius must be positive";
    const char *e = check_spacing(spacing);
    if (e)
        return e;
    /* The icosahedron inscribed in the sphere has edges r / sin(72 deg). */
    if (!interval_count(r / sin(2 * PI / 5), spacing, n) || 10.0 * (double)*n * (double)*n + 2 > MAX_NODES)
        return TOO_MANY_NODES("the sphere");
    return NULL;
}

const char *geom_sphere(const double c[3], double r, double spacing, GeomMesh *out)
{
    if (!out)
        return "no output mesh given";
    memset(out, 0, sizeof *out);
    long n;
    const char *e = check_sphere(c, r, spacing, &n);
    if (e || (e = mesh_alloc(out, 10 * n * n + 2, 20 * n * n)))
        return e;
    Ico s;
    ico_build(&s, n);
    ico_nodes(out, &s, c, r);
    ico_triangles(out, &s);
    return sphere_finish(out, c);
}
