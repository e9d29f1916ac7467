/* tetgen_shapes.c — generated tetrahedral meshes: boxes (cubes cut into six tetrahedra about
 * their main diagonal, optionally with a box-shaped cavity) and cylinders (an extruded disc
 * triangulation, prisms cut into three tetrahedra), plus the orientation and quality checks
 * every mesh goes through. */
#include "mesh/tetmesh.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "geom.h"

/* A mesh larger than this is refused: 4 million nodes is the model's own limit. */
enum { MAX_MESH_NODES = 4000000 };

void tetmesh_free(TetMesh *m)
{
    free(m->x);
    free(m->tet);
    free(m->region);
    free(m->line);
    free(m->file);
    memset(m, 0, sizeof *m);
}

static void sub3(const double *a, const double *b, double *out)
{
    for (int c = 0; c < 3; c++)
        out[c] = a[c] - b[c];
}

static double triple(const double *u, const double *v, const double *w)
{
    return u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) + u[2] * (v[0] * w[1] - v[1] * w[0]);
}

double tetmesh_volume(const TetMesh *m, int t)
{
    const int *v = &m->tet[4 * t];
    double e[3][3];
    for (int k = 0; k < 3; k++)
        sub3(&m->x[3 * v[k + 1]], &m->x[3 * v[0]], e[k]);
    return triple(e[0], e[1], e[2]) / 6;
}

/* The longest of the six edges of tetrahedron t. */
static double longest_edge(const TetMesh *m, int t)
{
    const int *v = &m->tet[4 * t];
    double l = 0;
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) {
            double d[3];
            sub3(&m->x[3 * v[i]], &m->x[3 * v[j]], d);
            l = fmax(l, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
        }
    return l;
}

int tetmesh_first_bad(const TetMesh *m, double ratio)
{
    for (int t = 0; t < m->n_tets; t++) {
        double l = longest_edge(m, t);
        if (!(tetmesh_volume(m, t) > ratio * l * l * l))
            return t;
    }
    return -1;
}

/* Room for n nodes and t tetrahedra. */
static const char *mesh_alloc(TetMesh *out, long n, long t)
{
    memset(out, 0, sizeof *out);
    if (n > MAX_MESH_NODES || t > 6L * MAX_MESH_NODES)
        return "the mesh would have too many nodes (more than 4 million): make the spacing larger";
    out->x = calloc((size_t)n * 3, sizeof(double));
    out->tet = calloc((size_t)t * 4 + 1, sizeof(int));
    out->region = calloc((size_t)t + 1, sizeof(int));
    out->line = calloc((size_t)t + 1, sizeof(long));
    return NULL;
}

/* Appends tetrahedron (a, b, c, d), swapping two corners if it is negatively oriented. */
static void add_tet(TetMesh *m, int a, int b, int c, int d)
{
    int *v = &m->tet[4 * m->n_tets];
    v[0] = a, v[1] = b, v[2] = c, v[3] = d;
    if (tetmesh_volume(m, m->n_tets) < 0)
        v[2] = d, v[3] = c;
    m->n_tets++;
}

/* ---- box ---- */

typedef struct BoxGrid {
    int    n[3];       /* cubes per axis */
    double o[3], h[3]; /* origin, cell size */
    int    lo[3], hi[3]; /* the cavity's cubes [lo, hi), or empty */
} BoxGrid;

static int box_node(const BoxGrid *g, int i, int j, int k) { return (k * (g->n[1] + 1) + j) * (g->n[0] + 1) + i; }

static bool in_cavity(const BoxGrid *g, int i, int j, int k)
{
    return i >= g->lo[0] && i < g->hi[0] && j >= g->lo[1] && j < g->hi[1] && k >= g->lo[2] && k < g->hi[2];
}

/* The six tetrahedra of cube (i, j, k): one per path 000 -> 111 along the three axes in turn. */
static void cube_tets(TetMesh *m, const BoxGrid *g, int i, int j, int k)
{
    static const int perm[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
    for (int p = 0; p < 6; p++) {
        int c[3] = { i, j, k }, v[4];
        v[0] = box_node(g, c[0], c[1], c[2]);
        for (int s = 0; s < 3; s++) {
            c[perm[p][s]]++;
            v[s + 1] = box_node(g, c[0], c[1], c[2]);
        }
        add_tet(m, v[0], v[1], v[2], v[3]);
    }
}

/* The cavity's cubes: those whose centres lie in it; an error when none does or when it
 * reaches the box's faces (it would not be closed). */
static const char *cavity_cells(BoxGrid *g, const double *co, const double *cs)
{
    for (int c = 0; c < 3; c++) {
        g->lo[c] = (int)ceil((co[c] - g->o[c]) / g->h[c] - 0.5 - 1e-9);
        g->hi[c] = (int)floor((co[c] + cs[c] - g->o[c]) / g->h[c] - 0.5 + 1e-9) + 1;
        if (g->hi[c] <= g->lo[c])
            return "the cavity holds no cell of the mesh: make it larger or the spacing smaller";
        if (g->lo[c] < 1 || g->hi[c] > g->n[c] - 1)
            return "the cavity reaches the box's surface: it must lie inside, with a cell of solid around it";
    }
    return NULL;
}

const char *tetmesh_box(const double origin[3], const double size[3], double spacing, const double *cavity_origin,
                        const double *cavity_size, TetMesh *out)
{
    BoxGrid g;
    memset(&g, 0, sizeof g);
    double cells = 1;
    for (int c = 0; c < 3; c++) {
        double n = ceil(size[c] / spacing - 1e-9);
        cells *= fmax(n, 1) + 1;
        if (cells > MAX_MESH_NODES)
            return "the mesh would have too many nodes (more than 4 million): make the spacing larger";
        g.n[c] = (int)fmax(n, 1);
        g.o[c] = origin[c];
        g.h[c] = size[c] / g.n[c];
    }
    const char *err = cavity_size ? cavity_cells(&g, cavity_origin, cavity_size) : NULL;
    if (err)
        return err;
    err = mesh_alloc(out, (long)cells, 6L * g.n[0] * g.n[1] * g.n[2]);
    if (err)
        return err;
    for (int k = 0; k <= g.n[2]; k++)
        for (int j = 0; j <= g.n[1]; j++)
            for (int i = 0; i <= g.n[0]; i++) {
                double *p = &out->x[3 * box_node(&g, i, j, k)];
                p[0] = g.o[0] + i * g.h[0], p[1] = g.o[1] + j * g.h[1], p[2] = g.o[2] + k * g.h[2];
            }
    out->n_nodes = (int)cells;
    for (int k = 0; k < g.n[2]; k++)
        for (int j = 0; j < g.n[1]; j++)
            for (int i = 0; i < g.n[0]; i++)
                if (!in_cavity(&g, i, j, k))
                    cube_tets(out, &g, i, j, k);
    return NULL;
}

/* ---- cylinder ---- */

/* Two unit vectors normal to the unit axis and to each other, (u, v, axis) right-handed. */
static void frame(const double *a, double *u, double *v)
{
    double t[3] = { 1, 0, 0 };
    if (fabs(a[0]) > 0.9)
        t[0] = 0, t[1] = 1;
    double d = t[0] * a[0] + t[1] * a[1] + t[2] * a[2];
    for (int c = 0; c < 3; c++)
        u[c] = t[c] - d * a[c];
    double n = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    for (int c = 0; c < 3; c++)
        u[c] /= n;
    v[0] = a[1] * u[2] - a[2] * u[1], v[1] = a[2] * u[0] - a[0] * u[2], v[2] = a[0] * u[1] - a[1] * u[0];
}

/* The three tetrahedra of the prism (a, b, c) below (a', b', c') (node n + layer size): each
 * quadrilateral side is cut along the diagonal from its corner of smallest index, which both
 * prisms sharing it choose alike. The tetrahedron holding the smallest corner and the opposite
 * triangle comes first; the rest is a pyramid cut the same way. */
static void prism_tets(TetMesh *m, int a, int b, int c, int up)
{
    int p[6] = { a, b, c, a + up, b + up, c + up };
    /* rotate so that the smallest index is p[0] or p[3] at position 0 of its triangle */
    int best = 0;
    for (int k = 1; k < 6; k++)
        if (p[k] < p[best])
            best = k;
    int r = best % 3, top = best / 3;
    int q[6];
    for (int k = 0; k < 3; k++) {
        q[k] = p[(top ? 3 : 0) + (k + r) % 3];
        q[k + 3] = p[(top ? 0 : 3) + (k + r) % 3];
    }
    /* q0 smallest; tet (q0, q4, q5, q3) cuts the far triangle with q0's column; pyramid q1 q2 q5 q4 */
    add_tet(m, q[0], q[3], q[4], q[5]);
    if ((q[1] < q[5] ? q[1] : q[5]) < (q[2] < q[4] ? q[2] : q[4])) {
        add_tet(m, q[0], q[1], q[2], q[5]);
        add_tet(m, q[0], q[1], q[5], q[4]);
    } else {
        add_tet(m, q[0], q[1], q[2], q[4]);
        add_tet(m, q[0], q[2], q[5], q[4]);
    }
}

const char *tetmesh_cylinder(const double base[3], const double axis[3], double radius, double length, double spacing,
                             TetMesh *out)
{
    GeomMesh disc;
    static const double zero[3] = { 0, 0, 0 };
    const char *err = geom_disc(zero, radius, spacing, &disc);
    if (err)
        return err;
    int layers = (int)fmax(1, ceil(length / spacing - 1e-9));
    long n = (long)disc.n_nodes * (layers + 1);
    err = (double)n > MAX_MESH_NODES ? "the mesh would have too many nodes (more than 4 million): make the spacing larger"
                                     : mesh_alloc(out, n, 3L * disc.n_tris * layers);
    if (err) {
        geom_mesh_free(&disc);
        return err;
    }
    double u[3], v[3];
    frame(axis, u, v);
    for (int l = 0; l <= layers; l++)
        for (int i = 0; i < disc.n_nodes; i++) {
            const double *d = &disc.x[3 * i];
            double h = length * l / layers;
            for (int c = 0; c < 3; c++)
                out->x[3 * ((long)l * disc.n_nodes + i) + c] = base[c] + d[0] * u[c] + d[1] * v[c] + h * axis[c];
        }
    out->n_nodes = (int)n;
    for (int l = 0; l < layers; l++)
        for (int t = 0; t < disc.n_tris; t++) {
            const int *c = &disc.tri[3 * t];
            int off = l * disc.n_nodes;
            prism_tets(out, c[0] + off, c[1] + off, c[2] + off, disc.n_nodes);
        }
    geom_mesh_free(&disc);
    return NULL;
}
