/* finalize.c — turns what the statements collected into the flat srd_model: merges joined
 * nodes, lists every element instance with its stencil (stretch, bend-twist including
 * junctions and rod-shell joints, hinge, mid-edge, user elements), numbers the DOFs in a
 * bandwidth-reducing order, lumps masses and applies boundary conditions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elab_internal.h"
#include "elab_tangent.h"
#include "alloc.h"
#include "order.h"
#include "vec3.h"

#define SQRT3 1.7320508075688772

typedef struct Fin {
    Elab      *e;
    srd_model *m;
    int        n0;        /* nodes before merging */
    int       *map;       /* pre-merge node -> model node */
    int       *hinge_inst;/* hinge -> instance in the hinge set, or -1 */
    int       *frame_rod; /* per edge: the rod whose section a frame edge takes, or -1 */
    int        set_stretch, set_bend, set_hinge, set_mid, set_wall, set_spring;
    int       *spring_edge; /* per lattice_spring instance: its model edge */
    const PendingAct **act_src; /* per model actuation: the statement it came from */
    unsigned char *clamped;   /* per model node: 1 when a `clamp` statement selected it */
    int       *slide_of;  /* per model node: its slide, SLIDE_NONE, or SLIDE_HELD (held in full instead) */
} Fin;

enum { SLIDE_NONE = -1, SLIDE_HELD = -2 };

/* ---- joins ---- */

static int uf_find(int *parent, int i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

static double dist3(const double *a, const double *b)
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

static bool merge_nodes(Fin *f)
{
    Elab *e = f->e;
    int n0 = f->n0;
    int *parent = srd_xcalloc((size_t)n0, sizeof(int));
    for (int i = 0; i < n0; i++)
        parent[i] = i;
    bool ok = true;
    for (int k = 0; k < e->joins.n / 2; k++) {
        int a = e->joins.a[2 * k], b = e->joins.a[2 * k + 1];
        double d = dist3(&e->x0.a[3 * a], &e->x0.a[3 * b]);
        double scale = fmax(1e-3, fmax(fabs(e->x0.a[3 * a]), fabs(e->x0.a[3 * a + 2])));
        if (d > 1e-9 * scale + 1e-12) {
            Diag *dg = diag_error(e->join_locs.a[k], "joined nodes must be at the same place, but these are %.4g m apart", d);
            diag_hint(dg, "`join` shares one node between objects; make their geometry meet there");
            ok = false;
            continue;
        }
        int ra = uf_find(parent, a), rb = uf_find(parent, b);
        if (ra != rb) {
            if (ra < rb)
                parent[rb] = ra;
            else
                parent[ra] = rb;
        }
    }
    f->map = srd_xcalloc((size_t)n0, sizeof(int));
    int n = 0;
    for (int i = 0; i < n0; i++)
        if (uf_find(parent, i) == i)
            f->map[i] = n++;
    for (int i = 0; i < n0; i++)
        f->map[i] = f->map[uf_find(parent, i)];
    free(parent);
    srd_model *m = f->m;
    m->n_nodes = n;
    m->x0 = srd_xcalloc((size_t)n * 3, sizeof(double));
    m->node_mass = srd_xcalloc((size_t)n, sizeof(double));
    m->node_object = srd_xcalloc((size_t)n, sizeof(int));
    m->node_local = srd_xcalloc((size_t)n, sizeof(int));
    for (int i = n0 - 1; i >= 0; i--) {
        int j = f->map[i];
        memcpy(&m->x0[3 * j], &e->x0.a[3 * i], 3 * sizeof(double));
        m->node_object[j] = e->node_obj.a[i];
        m->node_local[j] = e->node_local.a[i];
    }
    return ok;
}

/* ---- objects, edges, triangles ---- */

static void copy_objects(Fin *f)
{
    Elab *e = f->e;
    for (int i = 0; i < e->objs.n; i++) {
        const ElabObj *o = &e->objs.a[i];
        srd_object so;
        memset(&so, 0, sizeof so);
        so.name = (char *)o->name;
        so.kind = o->kind;
        so.n_nodes = o->n_nodes;
        so.first_edge = o->first_edge;
        so.n_edges = o->n_edges;
        so.first_tri = o->first_tri;
        so.n_tris = o->n_tris;
        so.closed = o->closed;
        so.bending = o->bending;
        so.E = o->E.v;
        so.nu = o->nu.v;
        so.G = o->G.v;
        so.rho = o->rho.v;
        so.area = o->area.v;
        so.I1 = o->I1.v;
        so.I2 = o->I2.v;
        so.J = o->J.v;
        so.radius = o->radius.v;
        so.thickness = o->thickness.v;
        so.length = o->length;
        so.mass = o->mass.v;
        int k = srd_model_add_object(f->m, &so);
        srd_object *mo = &f->m->objects[k];
        mo->nodes = srd_xcalloc((size_t)o->n_nodes, sizeof(int));
        for (int j = 0; j < o->n_nodes; j++)
            mo->nodes[j] = f->map[o->first_node + j];
    }
}

static bool copy_edges(Fin *f)
{
    Elab *e = f->e;
    srd_model *m = f->m;
    int ne = e->edge_obj.n;
    m->n_edges = ne;
    m->edge_nodes = srd_xcalloc((size_t)ne * 2, sizeof(int));
    m->edge_object = srd_xcalloc((size_t)ne, sizeof(int));
    m->edge_rest = srd_xcalloc((size_t)ne, sizeof(double));
    m->edge_twist = srd_xcalloc((size_t)ne, sizeof(int));
    m->edge_xi = srd_xcalloc((size_t)ne, sizeof(int));
    m->edge_is_rod = srd_xcalloc((size_t)ne, sizeof(int));
    bool ok = true;
    for (int i = 0; i < ne; i++) {
        int a = f->map[e->edge_nodes.a[2 * i]], b = f->map[e->edge_nodes.a[2 * i + 1]];
        const ElabObj *o = &e->objs.a[e->edge_obj.a[i]];
        m->edge_nodes[2 * i] = a;
        m->edge_nodes[2 * i + 1] = b;
        m->edge_object[i] = e->edge_obj.a[i];
        m->edge_rest[i] = dist3(&m->x0[3 * a], &m->x0[3 * b]);
        m->edge_is_rod[i] = o->kind == SRD_OBJ_ROD;
        m->edge_twist[i] = m->edge_xi[i] = -1;
        if (a == b || !(m->edge_rest[i] > 0)) {
            Diag *d = diag_error(o->loc, "%s `%s` has an edge of zero length (edge %d)",
                                 o->kind == SRD_OBJ_ROD ? "rod" : o->kind == SRD_OBJ_SHELL ? "shell" : "lattice", o->name,
                                 i - o->first_edge);
            diag_hint(d, "a `join` may have merged both ends of an edge, or the path has repeated points");
            ok = false;
        }
    }
    int nt = e->tri_obj.n;
    m->n_tris = nt;
    m->tri_nodes = srd_xcalloc((size_t)nt * 3, sizeof(int));
    m->tri_edges = srd_xcalloc((size_t)nt * 3, sizeof(int));
    m->tri_edge_sign = srd_xcalloc((size_t)nt * 3, 1);
    m->tri_object = srd_xcalloc((size_t)nt, sizeof(int));
    for (int t = 0; t < nt; t++) {
        m->tri_object[t] = e->tri_obj.a[t];
        for (int k = 0; k < 3; k++) {
            m->tri_nodes[3 * t + k] = f->map[e->tri_nodes.a[3 * t + k]];
            int edge = e->tri_edge.a[3 * t + k];
            m->tri_edges[3 * t + k] = edge;
            /* +1 when the edge runs from corner k+1 to corner k+2, as the triangle turns. */
            m->tri_edge_sign[3 * t + k] = e->edge_nodes.a[2 * edge] == e->tri_nodes.a[3 * t + (k + 1) % 3] ? 1 : -1;
        }
    }
    return ok;
}

/* Area of triangle t in the reference configuration. */
static double rest_area(const srd_model *m, int t)
{
    const int *v = &m->tri_nodes[3 * t];
    double a[3], b[3], n[3];
    srd_sub3(&m->x0[3 * v[1]], &m->x0[3 * v[0]], a);
    srd_sub3(&m->x0[3 * v[2]], &m->x0[3 * v[0]], b);
    srd_cross3(a, b, n);
    return 0.5 * sqrt(srd_dot3(n, n));
}

/* ---- elements ---- */

/* `span_fraction`: the rest length over the length of rod the spring stands for (1/2 next to a
 * clamp, else 1), for the runtime's strain check; the kernel does not read it. */
static const char *stretch_data[] = { "rest_length", "ks", "span_fraction" };
/* `natural_from_reference` = 1: the natural curvature, twist or angle is that of the
 * reference configuration (stress-free), computed by the runtime from x0; 0: the values
 * given in the file (absolute). Junctions are always stress-free in the reference. */
static const char *bend_data[] = { "voronoi_length", "EI1", "EI2", "GJ", "kappa1_bar", "kappa2_bar", "tau_bar",
                                   "natural_from_reference" };
static const char *hinge_data[] = { "kb", "phi_bar", "natural_from_reference" };
static const char *mid_data[] = { "kb", "nu", "rest_area" };
static const char *wall_data[] = { "kb", "nx", "ny", "nz" };

static int other_end(const srd_model *m, int edge, int node)
{
    return m->edge_nodes[2 * edge] == node ? m->edge_nodes[2 * edge + 1] : m->edge_nodes[2 * edge];
}


/* The length of rod a stretching spring stands for beyond its own. A clamped rod end's next
 * node slides along the end edge, which stretches like any other: nothing. Where something else
 * holds that node in full, the end edge cannot stretch although it stands for the first
 * edge-length of rod, and the next edge of the rod reaches back to the wall and stands for both
 * (DER's clamp makes the first edge rigid: an O(l) error in every clamped rod's stretch). */
static double stretch_extension(const Fin *f, int edge)
{
    const srd_model *m = f->m;
    const ElabObj *o = &f->e->objs.a[m->edge_object[edge]];
    if (o->kind != SRD_OBJ_ROD || o->n_edges < 2)
        return 0;
    double ext = 0;
    int ends[2] = { o->first_edge, o->first_edge + o->n_edges - 1 };
    for (int k = 0; k < 2; k++) {
        int w = ends[k];
        unsigned char bits = f->e->edge_fix.a[w];
        if (w == edge || !(bits & (EDGE_WALL_AT_FIRST | EDGE_WALL_AT_SECOND)))
            continue;
        int inner = other_end(m, w, m->edge_nodes[2 * w + ((bits & EDGE_WALL_AT_SECOND) ? 1 : 0)]);
        if (f->slide_of[inner] < 0 && (inner == m->edge_nodes[2 * edge] || inner == m->edge_nodes[2 * edge + 1]))
            ext += m->edge_rest[w];
    }
    return ext;
}

/* A shell edge's ks (energy 1/2 ks eps^2 l). The lattice value makes a triangular spring lattice
 * of equilateral cells as stiff in-plane as a membrane of stiffness E h; MAT-DiSMech's code
 * gives hinge shells the same, and mid-edge shells 2 E h l / (1 - nu^2) (stretching = dismech_midedge
 * reproduces its runs). */
static Dual shell_ks(const ElabObj *o, double l)
{
    if (o->stretching == SHELL_STRETCH_DISMECH_MIDEDGE) /* 2 * E * h * l / (1 - nu * nu) */
        return dual_div(dual_scale(l, dual_mul(dual_scale(2, o->E), o->thickness)),
                        dual_sub(dual_const(1), dual_mul(o->nu, o->nu)));
    return dual_scale(l, dual_mul(dual_scale(SQRT3 / 2, o->E), o->thickness)); /* SQRT3 / 2 * E * h * l */
}

static void add_stretch(Fin *f)
{
    srd_model *m = f->m;
    Elab *e = f->e;
    if (!m->n_edges)
        return;
    f->spring_edge = srd_xcalloc((size_t)m->n_edges + 1, sizeof(int));
    f->set_spring = lattice_add_springs(e, m, f->spring_edge);
    for (int i = 0; i < m->n_edges; i++) {
        const ElabObj *o = &e->objs.a[m->edge_object[i]];
        if (o->kind == SRD_OBJ_LATTICE)
            continue;
        if (f->set_stretch < 0)
            f->set_stretch = srd_model_elemset(m, "stretch", 2, 1, 3, stretch_data);
        double l = m->edge_rest[i];
        Dual ks = o->kind == SRD_OBJ_ROD ? o->EA : shell_ks(o, l);
        /* Spread over the length it stands for: the energy 1/2 ks eps^2 l then has the
         * compliance of that length, EA / (l + extension) per unit elongation. */
        double fraction = l / (l + stretch_extension(f, i));
        Dual data[3] = { dual_const(l), dual_scale(fraction, ks), dual_const(fraction) };
        elab_add_row(e, m, f->set_stretch, &m->edge_nodes[2 * i], &i, NULL, data, m->edge_object[i]);
    }
}

typedef struct Incidence {
    int *start; /* per node */
    int *edges;
} Incidence;

/* Edges that carry a material frame: rod edges, and (MAT-DiSMech 3.4) every edge of a shell
 * triangle that touches a rod-shell joint node. Listed per node they touch. */
static Incidence frame_edges(Fin *f, unsigned char *frame)
{
    srd_model *m = f->m;
    int n = m->n_nodes;
    /* rod_at[node]: a rod with an edge at the node, plus one (0: none). */
    int *rod_at = srd_xcalloc((size_t)n + 1, sizeof(int));
    f->frame_rod = srd_xcalloc((size_t)m->n_edges + 1, sizeof(int));
    for (int i = 0; i < m->n_edges; i++) {
        f->frame_rod[i] = -1;
        if (m->edge_is_rod[i]) {
            frame[i] = 1;
            f->frame_rod[i] = m->edge_object[i];
            rod_at[m->edge_nodes[2 * i]] = rod_at[m->edge_nodes[2 * i + 1]] = m->edge_object[i] + 1;
        }
    }
    /* Shell edges at a joint take the joined rod's cross-section for their bend-twist springs. */
    for (int t = 0; t < m->n_tris; t++) {
        const int *nd = &m->tri_nodes[3 * t];
        int rod = rod_at[nd[0]] ? rod_at[nd[0]] : rod_at[nd[1]] ? rod_at[nd[1]] : rod_at[nd[2]];
        if (!rod)
            continue;
        for (int k = 0; k < 3; k++) {
            int edge = m->tri_edges[3 * t + k];
            frame[edge] = 1;
            if (f->frame_rod[edge] < 0)
                f->frame_rod[edge] = rod - 1;
        }
    }
    Incidence inc;
    inc.start = srd_xcalloc((size_t)n + 1, sizeof(int));
    for (int i = 0; i < m->n_edges; i++)
        if (frame[i])
            for (int k = 0; k < 2; k++)
                inc.start[m->edge_nodes[2 * i + k] + 1]++;
    for (int i = 0; i < n; i++)
        inc.start[i + 1] += inc.start[i];
    inc.edges = srd_xcalloc((size_t)inc.start[n] + 1, sizeof(int));
    int *fill = srd_xcalloc((size_t)n + 1, sizeof(int));
    for (int i = 0; i < m->n_edges; i++)
        if (frame[i])
            for (int k = 0; k < 2; k++) {
                int node = m->edge_nodes[2 * i + k];
                inc.edges[inc.start[node] + fill[node]++] = i;
            }
    free(fill);
    free(rod_at);
    return inc;
}

/* The fixed components of every model node (the union over the nodes merged into it). */
static unsigned char *model_node_fix(const Fin *f)
{
    unsigned char *bits = srd_xcalloc((size_t)f->m->n_nodes + 1, 1);
    for (int i = 0; i < f->n0; i++)
        bits[f->map[i]] |= f->e->node_fix.a[i];
    return bits;
}

static bool parallel_axes(const double *a, const double *b) { return fabs(srd_dot3(a, b)) > 1 - 1e-12; }

/* The line a clamped rod end's edge `w` holds its inner node on: the wall node and the unit
 * direction from it. Returns the inner node. */
static int wall_line(const Fin *f, int w, int *anchor, double *axis)
{
    const srd_model *m = f->m;
    *anchor = m->edge_nodes[2 * w + ((f->e->edge_fix.a[w] & EDGE_WALL_AT_SECOND) ? 1 : 0)];
    int inner = other_end(m, w, *anchor);
    srd_sub3(&m->x0[3 * inner], &m->x0[3 * *anchor], axis);
    double n = sqrt(srd_dot3(axis, axis));
    for (int c = 0; c < 3; c++)
        axis[c] /= n;
    return inner;
}

/* Records a slide of `inner`, unless it is held another way: then it is held in full (a node
 * that `fix` holds in some directions, two clamps along different lines, a line out of a
 * planar model's plane). */
static void add_slide(Fin *f, const unsigned char *fix, int inner, int anchor, const double *axis)
{
    srd_model *m = f->m;
    if (f->clamped[inner] || fix[inner] == 7 || f->slide_of[inner] == SLIDE_HELD)
        return;
    int k = f->slide_of[inner];
    if (k >= 0 && parallel_axes(axis, &m->slide_axis[3 * k]))
        return;
    if (k >= 0 || fix[inner] || (m->planar && fabs(axis[1]) > 1e-12)) {
        f->slide_of[inner] = SLIDE_HELD;
        return;
    }
    k = m->n_slides++;
    m->slide_node[k] = inner;
    m->slide_anchor[k] = anchor;
    memcpy(&m->slide_axis[3 * k], axis, 3 * sizeof(double));
    f->slide_of[inner] = k;
}

/* Every clamped rod end's next node slides along the end edge. A node held in full instead
 * loses its slide (it stays in the list with its node set to -1, dropped by drop_held_slides). */
static void plan_slides(Fin *f)
{
    srd_model *m = f->m;
    unsigned char *fix = model_node_fix(f);
    f->slide_of = srd_xcalloc((size_t)m->n_nodes + 1, sizeof(int));
    for (int i = 0; i < m->n_nodes; i++)
        f->slide_of[i] = SLIDE_NONE;
    m->slide_node = srd_xcalloc((size_t)m->n_edges + 1, sizeof(int));
    m->slide_anchor = srd_xcalloc((size_t)m->n_edges + 1, sizeof(int));
    m->slide_axis = srd_xcalloc(3 * (size_t)m->n_edges + 1, sizeof(double));
    for (int w = 0; w < m->n_edges; w++) {
        if (!(f->e->edge_fix.a[w] & (EDGE_WALL_AT_FIRST | EDGE_WALL_AT_SECOND)))
            continue;
        int anchor;
        double axis[3];
        int inner = wall_line(f, w, &anchor, axis);
        add_slide(f, fix, inner, anchor, axis);
    }
    free(fix);
}

/* Removes the slides of nodes that ended up held in full, keeping the order of the rest. */
static void drop_held_slides(Fin *f)
{
    srd_model *m = f->m;
    int n = 0;
    for (int k = 0; k < m->n_slides; k++) {
        int node = m->slide_node[k];
        if (f->slide_of[node] == SLIDE_HELD)
            continue;
        m->slide_node[n] = node;
        m->slide_anchor[n] = m->slide_anchor[k];
        memmove(&m->slide_axis[3 * n], &m->slide_axis[3 * k], 3 * sizeof(double));
        f->slide_of[node] = n++;
    }
    m->n_slides = n;
}

/* Marks every model node a `clamp` statement selected. */
static void mark_clamped_nodes(Fin *f)
{
    Elab *e = f->e;
    f->clamped = srd_xcalloc((size_t)f->m->n_nodes + 1, 1);
    for (int c = 0; c < e->clamps.n; c++) {
        const Sel *s = e->clamps.a[c].nodes;
        for (int i = 0; i < s->n; i++)
            f->clamped[f->map[s->items[i]]] = 1;
    }
}

/* How a clamped edge at a bending spring moves the wall, in units of the edge's length: a
 * clamped rod end's edge stands for the tangent at its end node, so the spring at the edge's
 * other node reaches the wall half an edge further (+1/2), and a spring at the wall node
 * itself (a junction there) covers none of the edge (-1/2); an edge inside a clamped region
 * is rigid, so the wall is at the region's last node, half an edge nearer (-1/2). 0: not
 * clamped. */
static double wall_shift(const Fin *f, int edge, int c)
{
    const srd_model *m = f->m;
    const unsigned char *clamped = f->clamped;
    unsigned char bits = f->e->edge_fix.a[edge];
    if (bits & (EDGE_WALL_AT_FIRST | EDGE_WALL_AT_SECOND)) {
        int wall = m->edge_nodes[2 * edge + ((bits & EDGE_WALL_AT_SECOND) ? 1 : 0)];
        return wall == c ? -0.5 : 0.5;
    }
    bool rigid = m->edge_is_rod[edge] && clamped[m->edge_nodes[2 * edge]] && clamped[m->edge_nodes[2 * edge + 1]];
    return rigid ? -0.5 : 0;
}

/* The length of rod a bending spring stands for: its Voronoi length, (l1 + l2) / 2, carried
 * to the wall where one of its edges is clamped (DER's clamp would leave the wall in the
 * middle of the clamped edge, an O(l) error in every clamped beam). Its stiffness EI / length
 * and its natural bend and twist, integrated over it, both follow. Springs whose two edges
 * are clamped hold no free DOF and keep the Voronoi length. */
static double spring_length(const Fin *f, int c, int e1, int e2)
{
    const srd_model *m = f->m;
    double s1 = wall_shift(f, e1, c), s2 = wall_shift(f, e2, c);
    double l = 0.5 * (m->edge_rest[e1] + m->edge_rest[e2]);
    if (s1 != 0 && s2 != 0)
        return l;
    return l + s1 * m->edge_rest[e1] + s2 * m->edge_rest[e2];
}

/* One bend-twist spring through node c between edges e1 and e2. Within a rod the stencil
 * follows the rod's direction; at junctions the signs record each edge's orientation. */
static void add_bend_pair(Fin *f, int c, int e1, int e2)
{
    srd_model *m = f->m;
    Elab *e = f->e;
    bool same_rod = m->edge_object[e1] == m->edge_object[e2] && m->edge_is_rod[e1];
    if (same_rod && m->edge_nodes[2 * e1] == c && m->edge_nodes[2 * e2 + 1] == c) {
        int t = e1;
        e1 = e2;
        e2 = t;
    }
    int a = other_end(m, e1, c), b = other_end(m, e2, c);
    int nodes[3] = { a, c, b };
    int edges[2] = { e1, e2 };
    signed char signs[2] = { (signed char)(m->edge_nodes[2 * e1 + 1] == c ? 1 : -1),
                             (signed char)(m->edge_nodes[2 * e2] == c ? 1 : -1) };
    const ElabObj *rod = &e->objs.a[f->frame_rod[e1]];
    const ElabObj *other = &e->objs.a[f->frame_rod[e2]];
    Dual data[8];
    data[0] = dual_const(spring_length(f, c, e1, e2));
    /* Across a junction of two rods the spring takes the mean of their stiffnesses. */
    data[1] = dual_scale(0.5, dual_add(rod->EI1, other->EI1));
    data[2] = dual_scale(0.5, dual_add(rod->EI2, other->EI2));
    data[3] = dual_scale(0.5, dual_add(rod->GJ, other->GJ));
    data[4] = same_rod ? rod->kappa_bar[0] : dual_const(0);
    data[5] = same_rod ? rod->kappa_bar[1] : dual_const(0);
    data[6] = same_rod ? rod->tau_bar : dual_const(0);
    data[7] = dual_const(same_rod && rod->natural_given ? 0 : 1);
    elab_add_row(e, m, f->set_bend, nodes, edges, signs, data, same_rod ? m->edge_object[e1] : -1);
}

static void add_bend_twist(Fin *f, unsigned char *needs_twist)
{
    srd_model *m = f->m;
    Incidence inc = frame_edges(f, needs_twist);
    bool any = false;
    for (int c = 0; c < m->n_nodes && !any; c++)
        any = inc.start[c + 1] - inc.start[c] >= 2;
    if (any)
        f->set_bend = srd_model_elemset(m, "bend_twist", 3, 2, 8, bend_data);
    /* Every pair of frame edges meeting at a node gets a bend-twist spring. */
    for (int c = 0; c < m->n_nodes; c++)
        for (int i = inc.start[c]; i < inc.start[c + 1]; i++)
            for (int j = i + 1; j < inc.start[c + 1]; j++)
                add_bend_pair(f, c, inc.edges[i], inc.edges[j]);
    free(inc.start);
    free(inc.edges);
}

/* Triangles on each edge (1: a boundary edge). */
static int *triangles_per_edge(const srd_model *m)
{
    int *count = srd_xcalloc((size_t)m->n_edges + 1, sizeof(int));
    for (int t = 0; t < 3 * m->n_tris; t++)
        count[m->tri_edges[t]]++;
    return count;
}

/* kb = (2/sqrt(3)) E h^3 / 12: the hinge stiffness that matches the plate's bending rigidity
 * on an equilateral mesh. */
static Dual hinge_stiffness(const ElabObj *o)
{
    return dual_divc(dual_mul(dual_scale(2.0 / SQRT3, o->E), dual_powi(o->thickness, 3)), 12);
}

/* A wall hinge at corner k of triangle t: its edge (opposite corner k) lies on the boundary with
 * both nodes clamped, its apex is free. */
static void add_wall_hinge(Fin *f, int t, int k, Dual kb)
{
    srd_model *m = f->m;
    const int *v = &m->tri_nodes[3 * t];
    int nodes[3] = { v[(k + 1) % 3], v[(k + 2) % 3], v[k] };
    double e[3], g[3], n[3];
    srd_sub3(&m->x0[3 * nodes[1]], &m->x0[3 * nodes[0]], e);
    srd_sub3(&m->x0[3 * nodes[2]], &m->x0[3 * nodes[0]], g);
    srd_cross3(e, g, n);
    double len = sqrt(srd_dot3(n, n));
    Dual data[4] = { dual_scale(2, kb), dual_const(n[0] / len), dual_const(n[1] / len), dual_const(n[2] / len) };
    if (f->set_wall < 0)
        f->set_wall = srd_model_elemset(m, "hinge_wall", 3, 1, 4, wall_data);
    elab_add_row(f->e, m, f->set_wall, nodes, &m->tri_edges[3 * t + k], NULL, data, m->tri_object[t]);
}

/* Hinges act across interior edges only, so a clamp that holds a boundary line of a hinge shell
 * (`clamp s.nodes where x <= 0`) would pin it, not clamp it: each clamped boundary edge gets a
 * wall hinge that holds its triangle's plane. */
static void add_wall_hinges(Fin *f)
{
    srd_model *m = f->m;
    int *count = triangles_per_edge(m);
    for (int t = 0; t < m->n_tris; t++) {
        const ElabObj *o = &f->e->objs.a[m->tri_object[t]];
        if (o->bending != SRD_BEND_HINGE)
            continue;
        const int *v = &m->tri_nodes[3 * t];
        for (int k = 0; k < 3; k++)
            if (count[m->tri_edges[3 * t + k]] == 1 && f->clamped[v[(k + 1) % 3]] && f->clamped[v[(k + 2) % 3]] &&
                !f->clamped[v[k]])
                add_wall_hinge(f, t, k, hinge_stiffness(o));
    }
    free(count);
}

static void add_shell_bending(Fin *f, unsigned char *needs_xi)
{
    srd_model *m = f->m;
    Elab *e = f->e;
    f->hinge_inst = srd_xcalloc((size_t)e->hinge_edge.n + 1, sizeof(int));
    for (int h = 0; h < e->hinge_edge.n; h++) {
        f->hinge_inst[h] = -1;
        int edge = e->hinge_edge.a[h];
        const ElabObj *o = &e->objs.a[m->edge_object[edge]];
        if (o->bending != SRD_BEND_HINGE)
            continue;
        if (f->set_hinge < 0)
            f->set_hinge = srd_model_elemset(m, "hinge", 4, 1, 3, hinge_data);
        int nodes[4];
        for (int k = 0; k < 4; k++)
            nodes[k] = f->map[e->hinge_nodes.a[4 * h + k]];
        Dual data[3] = { hinge_stiffness(o), o->phi_bar, dual_const(o->natural_given ? 0 : 1) };
        f->hinge_inst[h] = elab_add_row(e, m, f->set_hinge, nodes, &edge, NULL, data, m->edge_object[edge]);
    }
    for (int t = 0; t < m->n_tris; t++) {
        const ElabObj *o = &e->objs.a[m->tri_object[t]];
        if (o->bending != SRD_BEND_MIDEDGE)
            continue;
        if (f->set_mid < 0)
            f->set_mid = srd_model_elemset(m, "midedge", 3, 3, 3, mid_data);
        const int *nd = &m->tri_nodes[3 * t];
        Dual one_nu2 = dual_sub(dual_const(1), dual_mul(o->nu, o->nu));
        Dual data[3] = { dual_div(dual_mul(o->E, dual_powi(o->thickness, 3)), dual_scale(24, one_nu2)), o->nu,
                         dual_const(rest_area(m, t)) };
        elab_add_row(e, m, f->set_mid, nd, &m->tri_edges[3 * t], &m->tri_edge_sign[3 * t], data, m->tri_object[t]);
        for (int k = 0; k < 3; k++)
            needs_xi[m->tri_edges[3 * t + k]] = 1;
    }
}

/* A ground plane acts on every node through std.contact's penalty energy and, with friction,
 * its smooth Coulomb force. (An uneven ground, z = f(x, y), is kept as an expression.) */
/* A contact element on every node, and a friction element too when `friction` is positive:
 * the friction element's data are the contact's (kc, delta) followed by mu, slip velocity and
 * the rest of the contact's data. */
static void add_contact_everywhere(Fin *f, const char *contact_kind, const char *friction_kind, const char **names,
                                   const Dual *values, int n_values, Dual friction, Dual slip_velocity)
{
    srd_model *m = f->m;
    const char *fnames[24] = { names[0], names[1], "mu", "slip_velocity" };
    Dual fvalues[24] = { values[0], values[1], friction, slip_velocity };
    for (int k = 2; k < n_values && k < 22; k++) {
        fnames[k + 2] = names[k];
        fvalues[k + 2] = values[k];
    }
    int cs = srd_model_elemset(m, contact_kind, 1, 0, n_values, names);
    int fs = friction.v > 0 ? srd_model_elemset(m, friction_kind, 1, 0, n_values + 2, fnames) : -1;
    for (int i = 0; i < m->n_nodes; i++) {
        if (m->node_body[i] >= 0)
            continue; /* a rigid body touches with its shape (rigid_add_ground) */
        elab_add_row(f->e, m, cs, &i, NULL, NULL, values, m->node_object[i]);
        if (fs >= 0)
            elab_add_row(f->e, m, fs, &i, NULL, NULL, fvalues, m->node_object[i]);
    }
}

/* The Dual of an obstacle's column `name` (its numbers a param may set), else its value. A
 * step-start copy (a trailing 0) is the same number before the run. */
static Dual obstacle_column(const ElabObstacle *d, const char *name, double value)
{
    static const char *const names[] = { "kc", "delta", "radius", "hx", "hy", "hz", "half_length", "cx", "cy", "cz",
                                         "px", "py", "pz", "angle", "spin", "ux", "uy", "uz", "kx", "ky", "kz",
                                         "nx", "ny", "nz", "obstacle_radius", "mu", "slip_velocity" };
    const Dual *duals[] = { &d->stiffness, &d->delta, &d->radius, &d->size[0], &d->size[1], &d->size[2], &d->length,
                            &d->center[0], &d->center[1], &d->center[2], &d->center[0], &d->center[1], &d->center[2],
                            &d->angle, &d->spin, &d->axis[0], &d->axis[1], &d->axis[2], &d->axis[0], &d->axis[1],
                            &d->axis[2], &d->axis[0], &d->axis[1], &d->axis[2], &d->radius, &d->friction,
                            &d->slip_velocity };
    size_t len = strlen(name) - (name[0] && name[strlen(name) - 1] == '0');
    for (int k = 0; k < (int)(sizeof names / sizeof names[0]); k++) {
        if (strlen(names[k]) != len || strncmp(name, names[k], len))
            continue;
        Dual x = k >= 3 && k <= 6 ? dual_scale(0.5, *duals[k]) : *duals[k];
        return x.v == value ? x : dual_const(value); /* half_length of an endless cylinder */
    }
    return dual_const(value);
}

static void obstacle_row(const ElabObstacle *d, const char *const *names, const double *v, int n, Dual *out)
{
    for (int k = 0; k < n; k++)
        out[k] = obstacle_column(d, names[k], v[k]);
}

/* An uneven ground z = h(x, y): its height enters the kernels of surface_contact and
 * surface_friction, which std.contact writes against ground_height and ground_slope. */
static void add_uneven_ground(Fin *f)
{
    const ElabEnv *env = &f->e->env;
    static const char *names[] = { "kc", "delta" };
    Dual values[2] = { env->ground_stiffness, env->ground_delta };
    add_contact_everywhere(f, "surface_contact", "surface_friction", names, values, 2, env->ground_friction,
                           env->ground_slip_velocity);
}

/* Each set's instance count, before rigid bodies' contact rows are added (record_body_contact). */
static int *set_counts(const srd_model *m)
{
    int *n = srd_xcalloc((size_t)m->n_sets + 1, sizeof(int));
    for (int k = 0; k < m->n_sets; k++)
        n[k] = m->sets[k].n;
    return n;
}

/* A contact column's Dual: x where it is the column's value; else (a number elaboration made
 * otherwise) the column's value, x marked as carrying no derivative there. */
static Dual column_dual(Elab *e, Dual x, double value)
{
    if (x.v == value)
        return x;
    elab_dual_only(e, x);
    return dual_const(value);
}

static Dual ground_column(Elab *e, const char *name, double value)
{
    const ElabEnv *env = &e->env;
    static const char *const names[] = { "kc", "delta", "mu", "slip_velocity", "pz", "nx", "ny", "nz" };
    const Dual *duals[] = { &env->ground_stiffness, &env->ground_delta, &env->ground_friction, &env->ground_slip_velocity,
                            &env->ground_level, &env->ground_normal[0], &env->ground_normal[1], &env->ground_normal[2] };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (!strcmp(name, names[k]))
            return column_dual(e, *duals[k], value);
    return dual_const(value);
}

static Dual obstacle_column(const ElabObstacle *d, const char *name, double value);

/* Column `name` (value `value`) of a rigid body's contact with the ground (obstacle NULL) or an
 * obstacle: the body's own touch point and radius are its shape's, which no param sets. */
static Dual body_contact_column(Elab *e, const ElabObstacle *obstacle, const char *name, double value)
{
    static const char *const own[] = { "rx", "ry", "rz", "radius", "which" };
    for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
        if (!strcmp(name, own[k]))
            return dual_const(value);
    return obstacle ? obstacle_column(obstacle, name, value) : ground_column(e, name, value);
}

/* The rows rigid_add_ground or rigid_add_obstacles added after the counts `before` (n_before
 * sets then), with their derivatives: an obstacle's rows name it in their `which` column. */
static void record_body_contact(Fin *f, const int *before, int n_before)
{
    srd_model *m = f->m;
    for (int k = 0; k < m->n_sets; k++) {
        const srd_elemset *set = &m->sets[k];
        int which = -1, w = set->n_data;
        for (int c = 0; c < w; c++)
            which = !strcmp(set->data_names[c], "which") ? c : which;
        Dual *row = srd_xcalloc((size_t)w + 1, sizeof(Dual));
        for (int i = k < n_before ? before[k] : 0; i < set->n; i++) {
            const double *v = &set->data[(size_t)i * w];
            const ElabObstacle *o = which >= 0 ? &f->e->obstacles.a[(int)v[which]] : NULL;
            for (int c = 0; c < w; c++)
                row[c] = body_contact_column(f->e, o, set->data_names[c], v[c]);
            elab_record_row(f->e, m, k, i, row);
        }
        free(row);
    }
}

static void add_ground(Fin *f)
{
    srd_model *m = f->m;
    if (!m->has_ground)
        return;
    if (m->ground_height_expr >= 0) {
        add_uneven_ground(f);
        return;
    }
    static const char *names[] = { "kc", "delta", "px", "py", "pz", "nx", "ny", "nz" };
    const ElabEnv *env = &f->e->env;
    const double *p = m->ground_point;
    Dual values[8] = { env->ground_stiffness, env->ground_delta, dual_const(p[0]), dual_const(p[1]), env->ground_level,
                       env->ground_normal[0], env->ground_normal[1], env->ground_normal[2] };
    add_contact_everywhere(f, "ground_contact", "ground_friction", names, values, 8, env->ground_friction,
                           env->ground_slip_velocity);
    int n_before = m->n_sets, *before = set_counts(m);
    rigid_add_ground(m);
    record_body_contact(f, before, n_before);
    free(before);
}

/* A pose column group (cx cy cz, ux uy uz, angle, spin, ...) of a moving obstacle or a plane,
 * with its step-start copy (the names with a trailing 0) when `prev` is set. */
static void pose_put(PoseColumns *p, const char *const *names, const double *v, int n, bool prev)
{
    for (int k = 0; k < n; k++) {
        p->names[p->n] = names[k];
        p->values[p->n++] = v[k];
    }
    for (int k = 0; prev && k < n; k++) {
        p->names[p->n] = names[k + n];
        p->values[p->n++] = v[k];
    }
}

void elab_moving_columns(const srd_obstacle *o, const char *radius_name, PoseColumns *p)
{
    static const char *c[] = { "cx", "cy", "cz", "cx0", "cy0", "cz0" };
    static const char *u[] = { "ux", "uy", "uz", "ux0", "uy0", "uz0" };
    static const char *pt[] = { "px", "py", "pz", "px0", "py0", "pz0" };
    static const char *n[] = { "nx", "ny", "nz", "nx0", "ny0", "nz0" };
    static const char *h[] = { "hx", "hy", "hz" }, *k[] = { "kx", "ky", "kz" }, *angle[] = { "angle", "angle0" };
    const char *radius[] = { radius_name };
    static const char *half[] = { "half_length" }, *spin[] = { "spin" };
    bool plane = !strcmp(o->shape, "plane");
    pose_put(p, plane ? pt : c, o->center, 3, true);
    if (plane) {
        pose_put(p, n, o->axis, 3, true);
    } else if (!strcmp(o->shape, "sphere")) {
        pose_put(p, radius, &o->radius, 1, false);
    } else if (!strcmp(o->shape, "box")) {
        double hs[3] = { o->size[0] / 2, o->size[1] / 2, o->size[2] / 2 };
        pose_put(p, h, hs, 3, false);
        pose_put(p, k, o->axis, 3, false);
        pose_put(p, angle, &o->angle, 1, true);
    } else {
        double hl = o->length > 0 ? o->length / 2 : 1e30;
        pose_put(p, u, o->axis, 3, true);
        pose_put(p, radius, &o->radius, 1, false);
        pose_put(p, half, &hl, 1, false);
        pose_put(p, spin, &o->spin, 1, false);
    }
}

/* Schedules of the pose properties that change with time: one actuation per property and set,
 * writing the columns of the obstacle's instances [lo, hi). */
static void push_pose_actuations(Fin *f, const srd_obstacle *o, int set, int lo, int hi)
{
    static const char *targets[SRD_OBSTACLE_N_EXPR] = { "obstacle_center", "obstacle_axis", "obstacle_angle",
                                                        "obstacle_spin" };
    srd_model *m = f->m;
    bool plane = !strcmp(o->shape, "plane");
    for (int j = 0; j < SRD_OBSTACLE_N_EXPR && hi > lo; j++) {
        if (o->expr[j] < 0)
            continue;
        m->actuations = srd_xrealloc(m->actuations, sizeof *m->actuations * (size_t)(m->n_actuations + 1));
        f->act_src = srd_xrealloc(f->act_src, sizeof *f->act_src * (size_t)(m->n_actuations + 1));
        f->act_src[m->n_actuations] = NULL; /* not a statement's: never reported as one */
        srd_actuation *a = &m->actuations[m->n_actuations++];
        memset(a, 0, sizeof *a);
        a->target = srd_xstrdup(plane && j == SRD_OBSTACLE_CENTER ? "obstacle_point"
                                : plane && j == SRD_OBSTACLE_AXIS ? "obstacle_normal" : targets[j]);
        a->set = set;
        a->n = hi - lo;
        a->instances = srd_xcalloc((size_t)a->n + 1, sizeof(int));
        for (int i = 0; i < a->n; i++)
            a->instances[i] = lo + i;
        a->expr = o->expr[j];
    }
}

/* The schedules of a moving obstacle's pose in the rigid bodies' sets (body_moving_* and
 * body_plane_*), whose instances for obstacle k are those with `which` = k, one run of them. */
static void push_body_pose_actuations(Fin *f, const srd_obstacle *o, int k)
{
    const srd_model *m = f->m;
    for (int j = 0; j < m->n_sets; j++) {
        const srd_elemset *s = &m->sets[j];
        int which = srd_elemset_column(s, "which");
        if (which < 0 || (strncmp(s->kind, "body_moving_", 12) && strncmp(s->kind, "body_plane_", 11)))
            continue;
        int lo = 0, n = s->n;
        while (lo < n && s->data[lo * s->n_data + which] != k)
            lo++;
        int hi = lo;
        while (hi < n && s->data[hi * s->n_data + which] == k)
            hi++;
        if (hi > lo)
            push_pose_actuations(f, o, j, lo, hi);
    }
}

/* The instances a set of this kind holds so far (0 when there is none). */
static int set_size(const srd_model *m, const char *kind)
{
    for (int i = 0; i < m->n_sets; i++)
        if (!strcmp(m->sets[i].kind, kind))
            return m->sets[i].n;
    return 0;
}

/* A moving (or turned) sphere, box or cylinder, or a plane: std.contact's moving_ kinds (and
 * plane_ kinds) on every node, with the schedules that move them. */
static void add_moving_obstacle(Fin *f, const srd_obstacle *o, const ElabObstacle *d)
{
    srd_model *m = f->m;
    char contact[64], friction[64];
    const char *prefix = !strcmp(o->shape, "plane") ? "" : "moving_";
    snprintf(contact, sizeof contact, "%s%s_contact", prefix, o->shape);
    snprintf(friction, sizeof friction, "%s%s_friction", prefix, o->shape);
    PoseColumns p = { { "kc", "delta" }, { o->stiffness, o->delta }, 2 };
    elab_moving_columns(o, "radius", &p);
    int lo = set_size(m, contact), flo = set_size(m, friction);
    Dual values[24];
    obstacle_row(d, p.names, p.values, p.n, values);
    add_contact_everywhere(f, contact, friction, p.names, values, p.n, d->friction, d->slip_velocity);
    int cs = srd_model_elemset(m, contact, 1, 0, p.n, p.names);
    push_pose_actuations(f, o, cs, lo, m->sets[cs].n);
    if (o->friction > 0) {
        int fs = srd_model_elemset(m, friction, 1, 0, 0, NULL);
        push_pose_actuations(f, o, fs, flo, m->sets[fs].n);
    }
}

static void add_fixed_obstacle(Fin *f, int k, const char *shape, const char **names, const double *v, int n)
{
    const ElabObstacle *d = &f->e->obstacles.a[k];
    char contact[64], friction[64];
    snprintf(contact, sizeof contact, "%s_contact", shape);
    snprintf(friction, sizeof friction, "%s_friction", shape);
    Dual values[24];
    obstacle_row(d, names, v, n, values);
    add_contact_everywhere(f, contact, friction, names, values, n, d->friction, d->slip_velocity);
}

/* Rigid spheres, boxes and cylinders: contact, and friction when given, on every node. An
 * endless cylinder gets a half length far beyond any model. */
static void add_obstacles(Fin *f)
{
    srd_model *m = f->m;
    static const char *sphere[] = { "kc", "delta", "cx", "cy", "cz", "radius" };
    static const char *box[] = { "kc", "delta", "cx", "cy", "cz", "hx", "hy", "hz" };
    static const char *cylinder[] = { "kc", "delta", "cx", "cy", "cz", "ux", "uy", "uz", "radius", "half_length" };
    for (int k = 0; k < m->n_obstacles; k++) {
        const srd_obstacle *o = &m->obstacles[k];
        const double *c = o->center;
        if (o->moving || !strcmp(o->shape, "plane")) {
            add_moving_obstacle(f, o, &f->e->obstacles.a[k]);
        } else if (!strcmp(o->shape, "sphere")) {
            double values[6] = { o->stiffness, o->delta, c[0], c[1], c[2], o->radius };
            add_fixed_obstacle(f, k, "sphere", sphere, values, 6);
        } else if (!strcmp(o->shape, "box")) {
            double values[8] = { o->stiffness, o->delta, c[0], c[1], c[2], o->size[0] / 2, o->size[1] / 2,
                                 o->size[2] / 2 };
            add_fixed_obstacle(f, k, "box", box, values, 8);
        } else {
            double values[10] = { o->stiffness, o->delta, c[0], c[1], c[2], o->axis[0], o->axis[1], o->axis[2],
                                  o->radius, o->length > 0 ? o->length / 2 : 1e30 };
            add_fixed_obstacle(f, k, "cylinder", cylinder, values, 10);
        }
    }
    int n_before = m->n_sets, *before = set_counts(m);
    rigid_add_obstacles(m);
    record_body_contact(f, before, n_before);
    free(before);
    for (int k = 0; k < m->n_obstacles; k++)
        push_body_pose_actuations(f, &m->obstacles[k], k);
}

/* Viscous drag (eq. 27) on every node of a rod, with the node's Voronoi length. */
static void add_viscous(Fin *f)
{
    srd_model *m = f->m;
    if (!(m->viscous_eta > 0))
        return;
    double *dl = srd_xcalloc((size_t)m->n_nodes + 1, sizeof(double));
    for (int e = 0; e < m->n_edges; e++)
        if (m->edge_is_rod[e])
            for (int k = 0; k < 2; k++)
                dl[m->edge_nodes[2 * e + k]] += 0.5 * m->edge_rest[e];
    static const char *data[] = { "c" };
    int set = -1;
    for (int i = 0; i < m->n_nodes; i++) {
        if (!(dl[i] > 0))
            continue;
        if (set < 0)
            set = srd_model_elemset(m, "viscous_drag", 1, 0, 1, data);
        Dual c = dual_scale(dl[i], f->e->env.viscous_eta);
        elab_add_row(f->e, m, set, &i, NULL, NULL, &c, m->node_object[i]);
    }
    free(dl);
}

/* Resistive force theory: for every rod edge, its share of the drag on each of its ends. */
static void add_rft(Fin *f)
{
    srd_model *m = f->m;
    if (!m->has_rft)
        return;
    static const char *data[] = { "ct", "cn", "half_length" };
    int set = -1;
    for (int e = 0; e < m->n_edges; e++) {
        if (!m->edge_is_rod[e])
            continue;
        if (set < 0)
            set = srd_model_elemset(m, "rft_drag", 2, 0, 3, data);
        Dual values[3] = { f->e->env.rft_ct, f->e->env.rft_cn, dual_const(0.5 * m->edge_rest[e]) };
        for (int k = 0; k < 2; k++) {
            int nodes[2] = { m->edge_nodes[2 * e + k], m->edge_nodes[2 * e + 1 - k] };
            elab_add_row(f->e, m, set, nodes, NULL, NULL, values, m->node_object[nodes[0]]);
        }
    }
}

/* Aerodynamic drag: for every shell triangle, its share of the drag on each corner. */
static void add_aero_drag(Fin *f)
{
    srd_model *m = f->m;
    if (!m->has_drag)
        return;
    static const char *data[] = { "k" };
    int set = -1;
    for (int t = 0; t < m->n_tris; t++) {
        const int *v = &m->tri_nodes[3 * t];
        Dual k = dual_divc(dual_scale(rest_area(m, t), dual_mul(f->e->env.drag_density, f->e->env.drag_cd)), 6);
        if (set < 0)
            set = srd_model_elemset(m, "aero_drag", 3, 0, 1, data);
        for (int r = 0; r < 3; r++) {
            int nodes[3] = { v[r], v[(r + 1) % 3], v[(r + 2) % 3] };
            elab_add_row(f->e, m, set, nodes, NULL, NULL, &k, m->node_object[nodes[0]]);
        }
    }
}

/* A user element applied over triangles: once per triangle with its corners in the node
 * arguments tri_node.. +2; a force acts on its first node, so it goes on every corner, the
 * corners turned (keeping their order around the triangle) to put each one first. */
static void add_over_triangles(Elab *e, srd_model *m, int set, const PendingApply *pa, int *nodes, bool force)
{
    for (int i = 0; i < pa->tris->n; i++) {
        int t = pa->tris->items[i];
        const int *v = &m->tri_nodes[3 * t];
        for (int r = 0; r < (force ? 3 : 1); r++) {
            for (int k = 0; k < 3; k++)
                nodes[pa->tri_node + k] = v[(r + k) % 3];
            elab_add_row(e, m, set, nodes, pa->edges, NULL, pa->data, m->tri_object[t]);
        }
    }
}

static bool add_user_elements(Fin *f, unsigned char *needs_twist)
{
    Elab *e = f->e;
    srd_model *m = f->m;
    bool ok = true;
    for (int i = 0; i < e->applies.n; i++) {
        const PendingApply *pa = &e->applies.a[i];
        const Stmt *def = pa->def;
        int nn = 0, ne = 0;
        for (int k = 0; k < def->n_stencil; k++)
            if (!strcmp(def->stencil[k].kind, "node") || !strcmp(def->stencil[k].kind, "body"))
                nn++;
            else
                ne++;
        for (int k = 0, node = 0; k < def->n_stencil; k++) {
            bool body = !strcmp(def->stencil[k].kind, "body");
            bool in_tris = pa->tris && node >= pa->tri_node && node < pa->tri_node + 3;
            if (body && (in_tris || m->node_body[f->map[pa->nodes[node]]] < 0)) {
                Diag *d = diag_error(pa->loc, "stencil argument `%s` of `%s` must be a rigid body", def->stencil[k].name,
                                     def->name);
                diag_hint(d, "a rigid body has a shape or an inertia; a point-mass body is a node");
                ok = false;
            }
            node += body || !strcmp(def->stencil[k].kind, "node");
        }
        const char *names[32];
        for (int k = 0; k < def->n_params && k < 32; k++)
            names[k] = def->params[k].name;
        int set = srd_model_elemset(m, def->name, nn, ne, def->n_params, names);
        m->sets[set].n_lambda = pa->n_lambda;
        int nodes[64];
        for (int k = 0; k < nn && k < 64; k++) /* triangle corners are filled per instance */
            nodes[k] = pa->tris && k >= pa->tri_node && k < pa->tri_node + 3 ? -1 : f->map[pa->nodes[k]];
        for (int k = 0; k < ne; k++) {
            if (!m->edge_is_rod[pa->edges[k]] && !needs_twist[pa->edges[k]]) {
                diag_error(pa->loc, "edge stencil arguments must be rod edges (they carry a twist angle)");
                ok = false;
            } else if (m->planar) {
                Diag *d = diag_error(pa->loc, "a planar model has no twist angles, so elements cannot act on edges");
                diag_hint(d, "remove `planar;` or write the element over nodes");
                ok = false;
            }
            needs_twist[pa->edges[k]] = 1;
        }
        if (pa->tris)
            add_over_triangles(e, m, set, pa, nodes, def->kind == ST_FORCE);
        else
            elab_add_row(e, m, set, nodes, pa->edges, NULL, pa->data, -1);
    }
    return ok;
}

/* ---- DOFs ---- */

typedef struct Groups {
    int  n;
    int *size;      /* DOFs per group: 3 for a node (6 for a rigid body's), 1 for a twist or xi,
                       a constraint's multipliers */
    int  twist0;    /* first twist group */
    int  xi0;       /* first xi group */
    int  lambda0;   /* first multiplier group: one per constraint instance */
    int *twist_group, *xi_group; /* per edge, or -1 */
} Groups;

static Groups make_groups(srd_model *m, const unsigned char *needs_twist, const unsigned char *needs_xi)
{
    Groups g;
    g.twist_group = srd_xcalloc((size_t)m->n_edges + 1, sizeof(int));
    g.xi_group = srd_xcalloc((size_t)m->n_edges + 1, sizeof(int));
    int n = m->n_nodes;
    g.twist0 = n;
    for (int i = 0; i < m->n_edges; i++)
        g.twist_group[i] = needs_twist[i] && !m->planar ? n++ : -1;
    g.xi0 = n;
    for (int i = 0; i < m->n_edges; i++)
        g.xi_group[i] = needs_xi[i] ? n++ : -1;
    g.lambda0 = n;
    for (int s = 0; s < m->n_sets; s++)
        n += m->sets[s].n_lambda ? m->sets[s].n : 0;
    g.n = n;
    g.size = srd_xcalloc((size_t)n, sizeof(int));
    for (int i = 0; i < g.lambda0; i++) /* a rigid body's node carries its rotation too */
        g.size[i] = i >= m->n_nodes ? 1 : m->node_body && m->node_body[i] >= 0 ? 6 : 3;
    for (int s = 0, v = g.lambda0; s < m->n_sets; s++)
        for (int i = 0; m->sets[s].n_lambda && i < m->sets[s].n; i++)
            g.size[v++] = m->sets[s].n_lambda;
    return g;
}

/* Each element instance couples the groups of its stencil. */
static void element_cliques(const srd_model *m, const Groups *g, int **cstart, int **members, int *n_cliques)
{
    int total = 0, count = 0;
    for (int s = 0; s < m->n_sets; s++) {
        total += m->sets[s].n * (m->sets[s].n_node + m->sets[s].n_edge);
        count += m->sets[s].n;
    }
    total += count; /* a constraint's multipliers */
    *cstart = srd_xcalloc((size_t)count + 1, sizeof(int));
    *members = srd_xcalloc((size_t)total + 1, sizeof(int));
    int c = 0, k = 0, lambda_group = g->lambda0;
    for (int s = 0; s < m->n_sets; s++) {
        const srd_elemset *set = &m->sets[s];
        bool xi = !strcmp(set->kind, "midedge");
        bool is_stretch = !strcmp(set->kind, "stretch") || !strcmp(set->kind, "hinge");
        for (int i = 0; i < set->n; i++) {
            (*cstart)[c++] = k;
            for (int j = 0; j < set->n_node; j++)
                (*members)[k++] = set->nodes[i * set->n_node + j];
            if (set->n_lambda)
                (*members)[k++] = lambda_group++;
            if (is_stretch)
                continue; /* their edge is only a label */
            for (int j = 0; j < set->n_edge; j++) {
                int edge = set->edges[i * set->n_edge + j];
                int grp = xi ? g->xi_group[edge] : g->twist_group[edge];
                if (grp >= 0)
                    (*members)[k++] = grp;
            }
        }
    }
    (*cstart)[c] = k;
    *n_cliques = c;
}

/* Half-bandwidth in DOFs when group v starts at DOF first[v]. */
static int dof_bandwidth(const Groups *g, const int *first, int n_cliques, const int *cstart, const int *members)
{
    int bw = 0;
    for (int c = 0; c < n_cliques; c++) {
        int lo = 1 << 30, hi = -1;
        for (int k = cstart[c]; k < cstart[c + 1]; k++) {
            int v = members[k];
            if (first[v] < lo)
                lo = first[v];
            if (first[v] + g->size[v] - 1 > hi)
                hi = first[v] + g->size[v] - 1;
        }
        if (hi >= 0 && hi - lo > bw)
            bw = hi - lo;
    }
    return bw;
}

/* Renumbers the groups (first[v]: first DOF of group v) in reverse Cuthill-McKee order, unless
 * that order gives a wider band than the declaration order (it can on some shell meshes, whose
 * generators already number nodes row by row); returns the half-bandwidth of the kept order. */
static int order_groups(const Groups *g, int *first, int n_cliques, const int *cstart, const int *members,
                        int natural)
{
    srd_graph graph = srd_graph_from_cliques(g->n, n_cliques, cstart, members);
    int *perm = srd_xcalloc((size_t)g->n + 1, sizeof(int));
    int *saved = srd_xcalloc((size_t)g->n + 1, sizeof(int));
    memcpy(saved, first, sizeof(int) * (size_t)g->n);
    srd_rcm(&graph, perm);
    for (int k = 0, dof = 0; k < g->n; k++) {
        first[perm[k]] = dof;
        dof += g->size[perm[k]];
    }
    int bw = dof_bandwidth(g, first, n_cliques, cstart, members);
    if (bw > natural) {
        memcpy(first, saved, sizeof(int) * (size_t)g->n);
        bw = natural;
    }
    srd_graph_free(&graph);
    free(perm);
    free(saved);
    return bw;
}

static void number_dofs(Fin *f, const unsigned char *needs_twist, const unsigned char *needs_xi)
{
    srd_model *m = f->m;
    Groups g = make_groups(m, needs_twist, needs_xi);
    int *cstart, *members, nc;
    element_cliques(m, &g, &cstart, &members, &nc);
    int *first = srd_xcalloc((size_t)g.n + 1, sizeof(int));
    int dof = 0;
    for (int v = 0; v < g.n; v++) {
        first[v] = dof;
        dof += g.size[v];
    }
    m->n_dofs = dof;
    m->bandwidth_natural = dof_bandwidth(&g, first, nc, cstart, members);
    m->bandwidth = order_groups(&g, first, nc, cstart, members, m->bandwidth_natural);
    m->node_dof = srd_xcalloc((size_t)m->n_nodes + 1, sizeof(int));
    m->dof_kind = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(int));
    m->dof_owner = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(int));
    m->dof_mass = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    m->dof_fixed = srd_xcalloc((size_t)m->n_dofs + 1, 1);
    for (int i = 0; i < m->n_nodes; i++) {
        m->node_dof[i] = first[i];
        for (int c = 0; c < 3; c++) {
            m->dof_kind[first[i] + c] = SRD_DOF_NODE_X + c;
            m->dof_owner[first[i] + c] = i;
        }
        for (int c = 3; c < g.size[i]; c++) {
            m->dof_kind[first[i] + c] = SRD_DOF_ROT;
            m->dof_owner[first[i] + c] = m->node_body[i];
        }
    }
    for (int s = 0, v = g.lambda0; s < m->n_sets; s++)
        for (int i = 0; m->sets[s].n_lambda && i < m->sets[s].n; i++, v++) {
            m->sets[s].lambda_dof[i] = first[v];
            for (int c = 0; c < m->sets[s].n_lambda; c++) {
                m->dof_kind[first[v] + c] = SRD_DOF_LAMBDA;
                m->dof_owner[first[v] + c] = s;
            }
        }
    for (int i = 0; i < m->n_edges; i++) {
        m->edge_twist[i] = g.twist_group[i] >= 0 ? first[g.twist_group[i]] : -1;
        m->edge_xi[i] = g.xi_group[i] >= 0 ? first[g.xi_group[i]] : -1;
        if (m->edge_twist[i] >= 0) {
            m->dof_kind[m->edge_twist[i]] = SRD_DOF_TWIST;
            m->dof_owner[m->edge_twist[i]] = i;
        }
        if (m->edge_xi[i] >= 0) {
            m->dof_kind[m->edge_xi[i]] = SRD_DOF_XI;
            m->dof_owner[m->edge_xi[i]] = i;
        }
    }
    free(first);
    free(cstart);
    free(members);
    free(g.size);
    free(g.twist_group);
    free(g.xi_group);
}

/* ---- masses ---- */

static void lump_masses(Fin *f)
{
    srd_model *m = f->m;
    Elab *e = f->e;
    Dual *mass = srd_xcalloc((size_t)m->n_nodes + 1, sizeof *mass);
    Dual *dof = e->dof_mass = srd_xcalloc((size_t)m->n_dofs + 1, sizeof *dof);
    for (int i = 0; i < m->n_edges; i++) {
        const ElabObj *o = &e->objs.a[m->edge_object[i]];
        if (o->kind != SRD_OBJ_ROD)
            continue;
        double l = m->edge_rest[i];
        Dual half = dual_scale(l, dual_mul(dual_scale(0.5, o->rho), o->area)); /* 0.5 * rho * area * l */
        for (int k = 0; k < 2; k++)
            mass[m->edge_nodes[2 * i + k]] = dual_add(mass[m->edge_nodes[2 * i + k]], half);
        /* The twist angle carries the edge's rotational inertia about its axis. */
        if (m->edge_twist[i] >= 0) {
            dof[m->edge_twist[i]] = dual_scale(l, dual_mul(o->rho, dual_add(o->I1, o->I2)));
            m->dof_mass[m->edge_twist[i]] = dof[m->edge_twist[i]].v;
        }
    }
    for (int t = 0; t < m->n_tris; t++) {
        const ElabObj *o = &e->objs.a[m->tri_object[t]];
        const int *nd = &m->tri_nodes[3 * t];
        Dual third = dual_divc(dual_scale(rest_area(m, t), dual_mul(o->rho, o->thickness)), 3);
        for (int k = 0; k < 3; k++)
            mass[nd[k]] = dual_add(mass[nd[k]], third);
    }
    for (int i = 0; i < f->n0; i++)
        mass[f->map[i]] = dual_add(mass[f->map[i]], e->body_mass.a[i]);
    for (int i = 0; i < m->n_nodes; i++) {
        m->node_mass[i] += mass[i].v;
        for (int c = 0; c < 3; c++) {
            m->dof_mass[m->node_dof[i] + c] = m->node_mass[i];
            dof[m->node_dof[i] + c] = mass[i];
        }
    }
    free(mass);
}

/* ---- boundary conditions ---- */

static void fix_dof(srd_model *m, int dof)
{
    if (dof >= 0 && !m->dof_fixed[dof]) {
        m->dof_fixed[dof] = 1;
        m->n_fixed++;
    }
}

static bool apply_fixes(Fin *f)
{
    srd_model *m = f->m;
    Elab *e = f->e;
    bool ok = true;
    for (int i = 0; i < f->n0; i++)
        for (int c = 0; c < 3; c++)
            if (e->node_fix.a[i] & (1 << c))
                fix_dof(m, m->node_dof[f->map[i]] + c);
    for (int i = 0; i < m->n_edges; i++) {
        if (!e->edge_fix.a[i])
            continue;
        if (m->edge_twist[i] < 0 && m->edge_xi[i] < 0 && !(m->planar && m->edge_is_rod[i])) {
            const ElabObj *o = &e->objs.a[m->edge_object[i]];
            Diag *d = diag_error(o->loc, "edge %d of shell `%s` has no rotational DOF to fix", i - o->first_edge, o->name);
            diag_hint(d, "only rod edges (twist) and edges of mid-edge shells (xi) have one");
            ok = false;
            continue;
        }
        fix_dof(m, m->edge_twist[i]);
        fix_dof(m, m->edge_xi[i]);
    }
    /* A clamp also stops the rotation of every edge lying inside the clamped set. */
    const unsigned char *in = f->clamped;
    for (int i = 0; i < m->n_edges; i++)
        if (in[m->edge_nodes[2 * i]] && in[m->edge_nodes[2 * i + 1]]) {
            fix_dof(m, m->edge_twist[i]);
            fix_dof(m, m->edge_xi[i]);
        }
    if (m->planar)
        for (int i = 0; i < m->n_nodes; i++)
            fix_dof(m, m->node_dof[i] + 1);
    for (int i = 0; i < m->n_nodes; i++)
        if (f->slide_of[i] == SLIDE_HELD)
            for (int c = 0; c < 3; c++)
                fix_dof(m, m->node_dof[i] + c);
    return ok;
}

static void copy_loads(Fin *f)
{
    Elab *e = f->e;
    srd_model *m = f->m;
    m->n_loads = e->loads.n;
    m->loads = srd_xcalloc((size_t)m->n_loads + 1, sizeof *m->loads);
    for (int i = 0; i < e->loads.n; i++) {
        m->loads[i].node = f->map[e->loads.a[i].node];
        for (int c = 0; c < 3; c++)
            m->loads[i].f[c] = e->loads.a[i].f[c].v;
        m->loads[i].expr = e->loads.a[i].expr;
    }
}

/* ---- actuation ---- */

/* An earlier actuation of the same target that reaches one of these instances (both lists
 * ascend), or -1: two would write the same data, and the later one would silently win. */
static int overlapping_actuation(const srd_model *m, const char *target, int set, const int *inst, int n)
{
    for (int j = 0; j < m->n_actuations; j++) {
        const srd_actuation *a = &m->actuations[j];
        if (a->set != set || strcmp(a->target, target))
            continue;
        for (int p = 0, q = 0; p < a->n && q < n;) {
            if (a->instances[p] == inst[q])
                return j;
            if (a->instances[p] < inst[q])
                p++;
            else
                q++;
        }
    }
    return -1;
}

/* Adds the model actuation of statement pa on instances inst of set, and remembers pa. */
static void push_act(Fin *f, const PendingAct *pa, int set, int *inst, double *s, int n)
{
    srd_model *m = f->m;
    m->actuations = srd_xrealloc(m->actuations, sizeof *m->actuations * (size_t)(m->n_actuations + 1));
    f->act_src = srd_xrealloc(f->act_src, sizeof *f->act_src * (size_t)(m->n_actuations + 1));
    f->act_src[m->n_actuations] = pa;
    srd_actuation *a = &m->actuations[m->n_actuations++];
    a->target = srd_xstrdup(pa->target);
    a->set = set;
    a->n = n;
    a->instances = inst;
    a->s = s;
    a->expr = pa->expr;
}

/* ---- pressure ---- */

/* True when every edge of the triangles is shared by exactly two of them: a closed surface,
 * whose pressure work -p V is an energy. */
static bool closed_surface(const srd_model *m, const Sel *tris)
{
    int *count = srd_xcalloc((size_t)m->n_edges + 1, sizeof(int));
    for (int i = 0; i < tris->n; i++)
        for (int k = 0; k < 3; k++)
            count[m->tri_edges[3 * tris->items[i] + k]]++;
    bool closed = true;
    for (int i = 0; i < tris->n && closed; i++)
        for (int k = 0; k < 3; k++)
            closed &= count[m->tri_edges[3 * tris->items[i] + k]] == 2;
    free(count);
    return closed;
}

/* The mean of the triangles' reference corners: the volume energy's fixed point. */
static void corner_mean(const srd_model *m, const Sel *tris, double o[3])
{
    o[0] = o[1] = o[2] = 0;
    for (int i = 0; i < tris->n; i++)
        for (int k = 0; k < 3; k++)
            for (int c = 0; c < 3; c++)
                o[c] += m->x0[3 * m->tri_nodes[3 * tris->items[i] + k] + c] / (3.0 * tris->n);
}

/* The cavities of a solid: closed by construction; their triangles' corners as model nodes, and
 * their mean as the volume energy's fixed point. */
/* Pressure rows: p with its derivative, then a reference point (geometry). */
static void add_pressure_row(Fin *f, int set, const int *nodes, const PendingPressure *pp, const double *data, int obj)
{
    Dual row[4] = { pp->p, dual_const(data[1]), dual_const(data[2]), dual_const(data[3]) };
    elab_add_row(f->e, f->m, set, nodes, NULL, NULL, row, obj);
}

static void cavity_pressure(Fin *f, const PendingPressure *pp, int set, double *data)
{
    srd_model *m = f->m;
    const ElabObj *o = &f->e->objs.a[pp->solid];
    data[1] = data[2] = data[3] = 0;
    for (int i = 0; i < 3 * o->n_cavity; i++)
        for (int c = 0; c < 3; c++)
            data[1 + c] += m->x0[3 * f->map[o->cavity[i]] + c] / (3.0 * o->n_cavity);
    for (int i = 0; i < o->n_cavity; i++) {
        int nodes[3] = { f->map[o->cavity[3 * i]], f->map[o->cavity[3 * i + 1]], f->map[o->cavity[3 * i + 2]] };
        add_pressure_row(f, set, nodes, pp, data, pp->solid);
    }
}

/* One `pressure` statement: the energy -p V on a closed surface (one instance per triangle),
 * else the follower force on every corner of every triangle; a pressure that changes with
 * time drives the instances' p column as an actuation. */
static void add_pressure(Fin *f, const PendingPressure *pp)
{
    static const char *force_data[] = { "p" };
    static const char *volume_data[] = { "p", "ox", "oy", "oz" };
    srd_model *m = f->m;
    bool closed = pp->solid >= 0 || closed_surface(m, pp->tris);
    int set = closed ? srd_model_elemset(m, "pressure_volume", 3, 0, 4, volume_data)
                     : srd_model_elemset(m, "pressure_force", 3, 0, 1, force_data);
    double data[4] = { pp->p.v, 0, 0, 0 };
    int first = m->sets[set].n;
    if (pp->solid >= 0) {
        cavity_pressure(f, pp, set, data);
    } else {
        corner_mean(m, pp->tris, &data[1]);
        for (int i = 0; i < pp->tris->n; i++) {
            int t = pp->tris->items[i];
            const int *v = &m->tri_nodes[3 * t];
            for (int r = 0; r < (closed ? 1 : 3); r++) {
                int nodes[3] = { v[r], v[(r + 1) % 3], v[(r + 2) % 3] };
                add_pressure_row(f, set, nodes, pp, data, m->tri_object[t]);
            }
        }
    }
    if (pp->expr < 0)
        return;
    int n = m->sets[set].n - first;
    int *inst = srd_xcalloc((size_t)n + 1, sizeof(int));
    for (int i = 0; i < n; i++)
        inst[i] = first + i;
    PendingAct *pa = arena_alloc(f->e->arena, sizeof *pa);
    *pa = (PendingAct){ "pressure", pp->solid >= 0 ? pp->solid : m->tri_object[pp->tris->items[0]], NULL, pp->expr,
                        pp->loc };
    push_act(f, pa, set, inst, srd_xcalloc((size_t)n + 1, sizeof(double)), n);
}

static bool resolve_actuation(Fin *f, const PendingAct *pa)
{
    Elab *e = f->e;
    srd_model *m = f->m;
    const ElabObj *o = &e->objs.a[pa->obj];
    int sets[5];
    int n_sets = 0;
    if (!strcmp(pa->target, "E")) {
        sets[n_sets++] = f->set_stretch;
        sets[n_sets++] = f->set_bend;
        sets[n_sets++] = f->set_hinge;
        sets[n_sets++] = f->set_mid;
        sets[n_sets++] = f->set_wall;
    } else if (!strcmp(pa->target, "rest_length")) {
        sets[n_sets++] = f->set_stretch;
    } else if (!strcmp(pa->target, "springs")) {
        sets[n_sets++] = f->set_spring;
    } else if (!strcmp(pa->target, "angle")) {
        sets[n_sets++] = f->set_hinge;
    } else {
        sets[n_sets++] = f->set_bend;
    }
    /* Arc-length fraction of each model node of this rod. */
    double *s_node = srd_xcalloc((size_t)m->n_nodes + 1, sizeof(double));
    if (o->kind == SRD_OBJ_ROD)
        for (int j = 0; j < o->n_nodes; j++)
            s_node[f->map[o->first_node + j]] = o->s[j];
    unsigned char *hinst = srd_xcalloc((size_t)(f->set_hinge >= 0 ? m->sets[f->set_hinge].n : 0) + 1, 1);
    unsigned char *mark = srd_xcalloc((size_t)m->n_nodes + 1, 1);
    unsigned char *emark = srd_xcalloc((size_t)m->n_edges + 1, 1);
    if (pa->sel && pa->sel->kind == SEL_HINGE) {
        for (int i = 0; i < pa->sel->n; i++)
            if (f->hinge_inst[pa->sel->items[i]] >= 0)
                hinst[f->hinge_inst[pa->sel->items[i]]] = 1;
    } else if (pa->sel && pa->sel->kind == SEL_EDGE) {
        for (int i = 0; i < pa->sel->n; i++)
            emark[pa->sel->items[i]] = 1;
        for (int i = 0; i < pa->sel->n; i++)
            for (int k = 0; k < 2; k++)
                mark[m->edge_nodes[2 * pa->sel->items[i] + k]] = 1;
    } else if (pa->sel) {
        Sel *nodes = select_nodes(e, pa->sel);
        for (int i = 0; i < nodes->n; i++)
            mark[f->map[nodes->items[i]]] = 1;
        for (int i = 0; i < m->n_edges; i++)
            emark[i] = mark[m->edge_nodes[2 * i]] && mark[m->edge_nodes[2 * i + 1]];
    }
    int total = 0;
    bool overlap = false;
    for (int k = 0; k < n_sets; k++) {
        if (sets[k] < 0)
            continue;
        const srd_elemset *set = &m->sets[sets[k]];
        int *inst = srd_xcalloc((size_t)set->n + 1, sizeof(int));
        double *s = srd_xcalloc((size_t)set->n + 1, sizeof(double));
        int n = 0;
        for (int i = 0; i < set->n; i++) {
            if (set->object[i] != pa->obj)
                continue;
            bool take = !pa->sel;
            if (!take && sets[k] == f->set_bend)
                take = mark[set->nodes[3 * i + 1]];
            else if (!take && sets[k] == f->set_stretch)
                take = emark[set->edges[i]];
            else if (!take && sets[k] == f->set_hinge)
                take = hinst[i];
            else if (!take && sets[k] == f->set_spring)
                take = emark[f->spring_edge[i]];
            if (!take)
                continue;
            inst[n] = i;
            if (o->kind == SRD_OBJ_ROD) {
                if (sets[k] == f->set_bend)
                    s[n] = s_node[set->nodes[3 * i + 1]];
                else if (sets[k] == f->set_stretch)
                    s[n] = 0.5 * (s_node[set->nodes[2 * i]] + s_node[set->nodes[2 * i + 1]]);
            }
            n++;
        }
        if (n == 0) {
            free(inst);
            free(s);
            continue;
        }
        total += n;
        int earlier = overlapping_actuation(m, pa->target, sets[k], inst, n);
        if (earlier >= 0) {
            Diag *d = diag_error(pa->loc, "this actuation drives `%s` of elements that the actuation on line %d "
                                          "already drives", pa->target, f->act_src[earlier]->loc.line);
            diag_hint(d, "give each element one actuation: narrow the selections (`over s in a..b`, `where`), or "
                         "combine the values into one expression");
            free(inst);
            free(s);
            overlap = true;
            break;
        }
        push_act(f, pa, sets[k], inst, s, n);
    }
    free(mark);
    free(hinst);
    free(emark);
    free(s_node);
    if (overlap)
        return false;
    if (total == 0) {
        Diag *d = diag_error(pa->loc, "this actuation reaches no element of `%s`", o->name);
        diag_hint(d, "curvature and twist act at interior rod nodes, rest_length on edges, angle on hinges, "
                     "springs on a lattice's springs");
        return false;
    }
    return true;
}

/* ---- constrained regions: prescribed motion and reactions ---- */

static bool node_held(const srd_model *m, int node)
{
    const unsigned char *fx = &m->dof_fixed[m->node_dof[node]];
    return fx[0] && fx[1] && fx[2];
}

/* The region a constraint statement acts on: the seed nodes (model indices), every node
 * joined to them through edges whose two ends are held in full, and the sliding nodes of
 * clamped rod ends among them. So a clamped rod end's region takes its next node along, and a
 * clamp along a line is one region. Returns the node count;
 * *out (ascending) is the caller's. */
static int constrained_region(const srd_model *m, const int *seeds, int n_seeds, int **out)
{
    unsigned char *in = srd_xcalloc((size_t)m->n_nodes + 1, 1);
    int *list = srd_xcalloc((size_t)m->n_nodes + 1, sizeof(int)), n = 0;
    for (int i = 0; i < n_seeds; i++)
        if (!in[seeds[i]]) {
            in[seeds[i]] = 1;
            list[n++] = seeds[i];
        }
    for (bool grew = true; grew;) {
        grew = false;
        for (int e = 0; e < m->n_edges; e++) {
            int a = m->edge_nodes[2 * e], b = m->edge_nodes[2 * e + 1];
            if (in[a] == in[b] || !node_held(m, a) || !node_held(m, b))
                continue;
            int add = in[a] ? b : a;
            in[add] = 1;
            list[n++] = add;
            grew = true;
        }
    }
    for (int k = 0; k < m->n_slides; k++) /* a clamp's sliding node moves with it */
        in[m->slide_node[k]] |= in[m->slide_anchor[k]];
    n = 0;
    for (int i = 0; i < m->n_nodes; i++)
        if (in[i])
            list[n++] = i;
    free(in);
    *out = list;
    return n;
}

/* The model nodes of a selection made before joins merged nodes. */
static int *mapped_nodes(const Fin *f, const Sel *sel)
{
    int *nodes = srd_xcalloc((size_t)sel->n + 1, sizeof(int));
    for (int i = 0; i < sel->n; i++)
        nodes[i] = f->map[sel->items[i]];
    return nodes;
}

/* Rod edges with both ends in the region (ascending node list): a rotation turns their frames,
 * so their twists are driven too. */
static int region_edges(Fin *f, const int *nodes, int n, int **out)
{
    srd_model *m = f->m;
    unsigned char *in = srd_xcalloc((size_t)m->n_nodes + 1, 1);
    for (int i = 0; i < n; i++)
        in[nodes[i]] = 1;
    int *edges = srd_xcalloc((size_t)m->n_edges + 1, sizeof(int)), k = 0;
    for (int e = 0; e < m->n_edges; e++)
        if (in[m->edge_nodes[2 * e]] && in[m->edge_nodes[2 * e + 1]] && m->edge_twist[e] >= 0) {
            fix_dof(m, m->edge_twist[e]);
            edges[k++] = e;
        }
    free(in);
    *out = edges;
    return k;
}

/* Prescribed motions: each drives the whole constrained region of its selection. A node can
 * follow one motion only. */
static bool copy_motions(Fin *f)
{
    Elab *e = f->e;
    srd_model *m = f->m;
    m->motions = srd_xcalloc((size_t)e->motions.n + 1, sizeof *m->motions);
    int *owner = srd_xcalloc((size_t)m->n_nodes + 1, sizeof(int));
    bool ok = true;
    for (int k = 0; k < e->motions.n && ok; k++) {
        const PendingMotion *pm = &e->motions.a[k];
        srd_motion *mo = &m->motions[m->n_motions++];
        int *seeds = mapped_nodes(f, pm->nodes);
        mo->kind = pm->kind;
        mo->expr = pm->expr;
        memcpy(mo->axis, pm->axis, sizeof mo->axis);
        memcpy(mo->center, &m->x0[3 * seeds[0]], sizeof mo->center);
        mo->n_nodes = constrained_region(m, seeds, pm->nodes->n, &mo->nodes);
        free(seeds);
        if (mo->kind == SRD_MOTION_ROTATE)
            mo->n_edges = region_edges(f, mo->nodes, mo->n_nodes, &mo->edges);
        for (int i = 0; i < mo->n_nodes && ok; i++) {
            if (owner[mo->nodes[i]]) {
                Diag *d = diag_error(pm->loc, "this motion drives a node that the motion on line %d already drives",
                                     e->motions.a[owner[mo->nodes[i]] - 1].loc.line);
                diag_hint(d, "a node follows one `move` or `rotate`; a clamped rod end moves with its next node");
                ok = false;
            }
            owner[mo->nodes[i]] = k + 1;
        }
    }
    free(owner);
    return ok;
}

/* The constrained DOFs of a region: its nodes' and the rotations of the edges inside it. */
static int region_constrained_dofs(const srd_model *m, const int *nodes, int n, int **out)
{
    unsigned char *in = srd_xcalloc((size_t)m->n_nodes + 1, 1);
    int *dofs = srd_xcalloc(3 * (size_t)n + 2 * (size_t)m->n_edges + 1, sizeof(int)), k = 0;
    for (int i = 0; i < n; i++) {
        in[nodes[i]] = 1;
        for (int c = 0; c < 3; c++)
            if (m->dof_fixed[m->node_dof[nodes[i]] + c])
                dofs[k++] = m->node_dof[nodes[i]] + c;
    }
    for (int e = 0; e < m->n_edges; e++) {
        int rot[2] = { m->edge_twist[e], m->edge_xi[e] };
        for (int j = 0; j < 2; j++)
            if (in[m->edge_nodes[2 * e]] && in[m->edge_nodes[2 * e + 1]] && rot[j] >= 0 && m->dof_fixed[rot[j]])
                dofs[k++] = rot[j];
    }
    free(in);
    *out = dofs;
    return k;
}

/* Releases: the constrained DOFs of each selection's region, freed at the given time. */
static bool copy_releases(Fin *f)
{
    Elab *e = f->e;
    srd_model *m = f->m;
    m->releases = srd_xcalloc((size_t)e->releases.n + 1, sizeof *m->releases);
    bool ok = true;
    for (int k = 0; k < e->releases.n; k++) {
        const PendingRelease *pr = &e->releases.a[k];
        int *seeds = mapped_nodes(f, pr->nodes), *region;
        int n = constrained_region(m, seeds, pr->nodes->n, &region);
        srd_release *r = &m->releases[m->n_releases++];
        r->time = pr->time;
        r->n_dofs = region_constrained_dofs(m, region, n, &r->dofs);
        free(seeds);
        free(region);
        if (!r->n_dofs) {
            Diag *d = diag_error(pr->loc, "this release frees nothing: no constraint holds these nodes");
            diag_hint(d, "`release` ends a `clamp`, `fix`, `move` or `rotate` of the same nodes");
            ok = false;
        }
    }
    return ok;
}

/* A reaction probe: the region of its selection, moments about its first node. A region that
 * no constraint holds has no reaction: asking for one is a mistake. */
static bool reaction_probe(Fin *f, srd_probe *p, SrcLoc loc)
{
    srd_model *m = f->m;
    int *seeds = srd_xcalloc((size_t)p->n_nodes + 1, sizeof(int));
    for (int i = 0; i < p->n_nodes; i++)
        seeds[i] = f->map[p->nodes[i]];
    free(p->nodes);
    p->node = seeds[0];
    p->n_nodes = constrained_region(m, seeds, p->n_nodes, &p->nodes);
    free(seeds);
    for (int i = 0; i < p->n_nodes; i++)
        for (int c = 0; c < 3; c++)
            if (m->dof_fixed[m->node_dof[p->nodes[i]] + c])
                return true;
    Diag *d = diag_error(loc, "probe `%s` asks for the reaction of nodes that no constraint holds", p->name);
    diag_hint(d, "`reaction(sel)` reads the force of a `clamp`, `fix`, `move` or `rotate` on sel");
    return false;
}

/* contact_force(ground) or contact_force(NAME) of a named obstacle. */
static bool contact_probe(const srd_model *m, srd_probe *p, SrcLoc loc)
{
    if (!strcmp(p->target_name, "ground")) {
        p->target = -1;
        if (m->has_ground)
            return true;
        Diag *d = diag_error(loc, "probe `%s` reads the ground's contact force, but the model has no ground", p->name);
        diag_hint(d, "add a `ground { ... }` block");
        return false;
    }
    const char *names[256];
    int n = 0;
    for (int k = 0; k < m->n_obstacles; k++) {
        if (m->obstacles[k].name && !strcmp(m->obstacles[k].name, p->target_name)) {
            p->target = k;
            return true;
        }
        if (m->obstacles[k].name && n < 256)
            names[n++] = m->obstacles[k].name;
    }
    Diag *d = diag_error(loc, "probe `%s`: no obstacle is called `%s`", p->name, p->target_name);
    const char *close = diag_closest(p->target_name, names, n);
    if (close)
        diag_hint(d, "did you mean `%s`?", close);
    else
        diag_hint(d, "`contact_force` takes `ground` or the name of an obstacle: `obstacle sphere ball { ... }`");
    return false;
}

static bool copy_probes(Fin *f, srd_analysis *a, const SrcLoc *locs)
{
    srd_model *m = f->m;
    bool ok = true;
    for (int i = 0; i < a->n_probes; i++) {
        srd_probe *p = &a->probes[i];
        SrcLoc loc = i < 256 ? locs[i] : NO_LOC;
        if (p->kind == SRD_PROBE_REACTION) {
            ok &= reaction_probe(f, p, loc);
        } else if (p->kind == SRD_PROBE_CONTACT) {
            ok &= contact_probe(m, p, loc);
        } else if (p->kind == SRD_PROBE_BODY || p->kind == SRD_PROBE_JOINT) {
            continue; /* bodies and joints keep their indices */
        } else if (p->node >= 0) {
            p->node = f->map[p->node];
            p->dof = p->component >= 0 && p->component < 3 ? m->node_dof[p->node] + p->component : -1;
        } else {
            int edge = -1 - p->node;
            p->node = -1;
            p->dof = m->edge_twist[edge] >= 0 ? m->edge_twist[edge] : m->edge_xi[edge];
            if (p->dof < 0) {
                Diag *d = diag_error(NO_LOC, "probe `%s` watches an edge without a rotational DOF", p->name);
                diag_hint(d, m->planar ? "a planar model has no twist angles" : "probe a rod edge's `.theta`");
                ok = false;
            }
        }
    }
    return ok;
}

void elab_finalize(Elab *e)
{
    Fin f;
    memset(&f, 0, sizeof f);
    f.e = e;
    f.m = e->model;
    f.n0 = e->node_obj.n;
    f.set_stretch = f.set_bend = f.set_hinge = f.set_mid = f.set_wall = f.set_spring = -1;
    bool ok = merge_nodes(&f);
    copy_objects(&f);
    ok &= copy_edges(&f);
    if (!ok) {
        free(f.map);
        return;
    }
    srd_model *m = f.m;
    unsigned char *needs_twist = srd_xcalloc((size_t)m->n_edges + 1, 1);
    unsigned char *needs_xi = srd_xcalloc((size_t)m->n_edges + 1, 1);
    mark_clamped_nodes(&f);
    plan_slides(&f);
    drop_held_slides(&f);
    add_stretch(&f);
    solid_add_tets(e, m, f.map);
    add_bend_twist(&f, needs_twist);
    add_shell_bending(&f, needs_xi);
    add_wall_hinges(&f);
    ok &= rigid_add_bodies(e, m, f.map);
    ok &= rigid_add_joints(e, m, f.map, needs_twist);
    ok &= add_user_elements(&f, needs_twist);
    for (int i = 0; i < e->pressures.n; i++)
        add_pressure(&f, &e->pressures.a[i]);
    add_ground(&f);
    add_obstacles(&f);
    ok &= contact_add_pairs(e, m);
    add_viscous(&f);
    add_rft(&f);
    add_aero_drag(&f);
    number_dofs(&f, needs_twist, needs_xi);
    lump_masses(&f);
    ok &= apply_fixes(&f);
    copy_loads(&f);
    ok &= copy_motions(&f);
    ok &= copy_releases(&f);
    for (int i = 0; i < e->acts.n; i++)
        ok &= resolve_actuation(&f, &e->acts.a[i]);
    ok &= copy_probes(&f, &m->simulate, e->probe_locs[0]);
    ok &= copy_probes(&f, &m->statics, e->probe_locs[1]);
    ok &= copy_probes(&f, &m->modes, e->probe_locs[2]);
    rigid_fix_world(e, m);
    rigid_add_motors(e, m);
    free(needs_twist);
    free(needs_xi);
    free(f.map);
    free(f.hinge_inst);
    free(f.frame_rod);
    free(f.act_src);
    free(f.clamped);
    free(f.slide_of);
    free(f.spring_edge);
}
