/* parts.c — the parts of contact between a model's parts (parts.h): the list of edges, nodes,
 * triangles and bodies of the objects in `contact`, and their geometry at a configuration. */
#include "parts.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "alloc.h"
#include "body.h"
#include "distance.h"

static void add_part(srd_parts *ps, int kind, const int *nodes, int size, int label, double r)
{
    int k = ps->n++;
    ps->kind[k] = kind;
    for (int i = 0; i < 3; i++)
        ps->node[3 * k + i] = i < size ? nodes[i] : -1;
    ps->label[k] = label;
    ps->radius[k] = r;
}

/* The radius of the sphere about a body's centre that holds its shape. */
static double body_bound(const srd_body *b)
{
    const double *s = b->size;
    switch (b->shape) {
    case SRD_SHAPE_BOX: return 0.5 * sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    case SRD_SHAPE_SPHERE: return s[0];
    case SRD_SHAPE_CAPSULE: return s[0] + 0.5 * s[1];
    default: return sqrt(s[0] * s[0] + 0.25 * s[1] * s[1]); /* a cylinder */
    }
}

static void add_body(srd_parts *ps, int o)
{
    const srd_model *m = ps->m;
    int b = srd_model_body_of(m, o);
    if (b < 0)
        return;
    add_part(ps, SRD_PART_BODY, &m->bodies[b].node, 1, b, 0);
    ps->bound[ps->n - 1] = body_bound(&m->bodies[b]);
}

/* An object's edges; a shell's triangles too; and, when shells or bodies take part, every node. */
static void add_object(srd_parts *ps, int o, bool nodes)
{
    const srd_model *m = ps->m;
    const srd_object *ob = &m->objects[o];
    if (ob->kind == SRD_OBJ_BODY) {
        add_body(ps, o);
        return;
    }
    double r = srd_contact_radius(m, o);
    for (int k = 0; k < ob->n_edges; k++)
        add_part(ps, SRD_PART_EDGE, &m->edge_nodes[2 * (ob->first_edge + k)], 2, ob->first_edge + k, r);
    for (int k = 0; ob->kind == SRD_OBJ_SHELL && k < ob->n_tris; k++)
        add_part(ps, SRD_PART_TRI, &m->tri_nodes[3 * (ob->first_tri + k)], 3, ob->first_tri + k, r);
    for (int k = 0; nodes && k < ob->n_nodes; k++)
        if (m->node_object[ob->nodes[k]] == o) /* a node two objects share counts once */
            add_part(ps, SRD_PART_NODE, &ob->nodes[k], 1, ob->nodes[k], r);
}

void srd_parts_init(srd_parts *ps, const srd_model *m, const double *axes)
{
    const srd_self_contact *c = &m->self_contact;
    size_t cap = 1;
    for (int k = 0; k < c->n_objects; k++) {
        const srd_object *ob = &m->objects[c->objects[k]];
        cap += (size_t)ob->n_edges + (size_t)ob->n_tris + (size_t)ob->n_nodes + 1;
    }
    ps->m = m;
    ps->axes = axes;
    ps->n = 0;
    ps->kind = srd_xcalloc(cap, sizeof(int));
    ps->node = srd_xcalloc(3 * cap, sizeof(int));
    ps->label = srd_xcalloc(cap, sizeof(int));
    ps->radius = srd_xcalloc(cap, sizeof(double));
    ps->bound = srd_xcalloc(cap, sizeof(double));
    bool nodes = c->set[SRD_PAIR_TRI] >= 0 || c->set[SRD_PAIR_BODY] >= 0;
    for (int k = 0; k < c->n_objects; k++)
        add_object(ps, c->objects[k], nodes);
}

void srd_parts_free(srd_parts *ps)
{
    free(ps->kind);
    free(ps->node);
    free(ps->label);
    free(ps->radius);
    free(ps->bound);
}

int srd_parts_size(const srd_parts *ps, int k)
{
    return ps->kind[k] == SRD_PART_EDGE ? 2 : ps->kind[k] == SRD_PART_TRI ? 3 : 1;
}

static bool round_body(const srd_parts *ps, int k)
{
    int shape = ps->m->bodies[ps->label[k]].shape;
    return shape == SRD_SHAPE_SPHERE || shape == SRD_SHAPE_CAPSULE;
}

int srd_parts_class(const srd_parts *ps, int a, int b)
{
    int ka = ps->kind[a], kb = ps->kind[b];
    if (ka == SRD_PART_EDGE && kb == SRD_PART_EDGE)
        return SRD_CLASS_EDGE_EDGE;
    if (ka == SRD_PART_NODE && kb == SRD_PART_TRI)
        return SRD_CLASS_NODE_TRI;
    if (ka == SRD_PART_NODE && kb == SRD_PART_BODY)
        return SRD_CLASS_NODE_BODY;
    if (ka == SRD_PART_EDGE && kb == SRD_PART_BODY && round_body(ps, b))
        return SRD_CLASS_EDGE_BODY;
    return SRD_CLASS_NONE;
}

bool srd_parts_share_node(const srd_parts *ps, int a, int b)
{
    for (int i = 0; i < srd_parts_size(ps, a); i++)
        for (int j = 0; j < srd_parts_size(ps, b); j++)
            if (ps->node[3 * a + i] == ps->node[3 * b + j])
                return true;
    return false;
}

static const double *node_x(const srd_parts *ps, const double *q, int node) { return q + ps->m->node_dof[node]; }

void srd_parts_box(const srd_parts *ps, const double *q, int k, double grow, double *lo, double *hi)
{
    grow += ps->bound[k]; /* a body turns inside its bounding sphere */
    for (int c = 0; c < 3; c++) {
        lo[c] = INFINITY;
        hi[c] = -INFINITY;
        for (int i = 0; i < srd_parts_size(ps, k); i++) {
            lo[c] = fmin(lo[c], node_x(ps, q, ps->node[3 * k + i])[c]);
            hi[c] = fmax(hi[c], node_x(ps, q, ps->node[3 * k + i])[c]);
        }
        lo[c] -= grow;
        hi[c] += grow;
    }
}

/* ---- bodies' poses ---- */

/* Body part k at fraction tau of the path from q0 to q1 (q0 NULL: at q1): its centre and axes
 * (column j of R, R[3 j + i], is axis j), R = R0 cay(theta). */
static void body_pose(const srd_parts *ps, const double *q0, const double *q1, double tau, int k, double *c,
                      double *R)
{
    int b = ps->label[k], d = ps->m->node_dof[ps->node[3 * k]];
    double theta[3], C[9];
    for (int i = 0; i < 3; i++) {
        c[i] = q0 ? q0[d + i] + tau * (q1[d + i] - q0[d + i]) : q1[d + i];
        theta[i] = q0 ? q0[d + 3 + i] + tau * (q1[d + 3 + i] - q0[d + 3 + i]) : q1[d + 3 + i];
    }
    srd_cayley(theta, C);
    const double *R0 = ps->axes + 9 * b;
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) {
            R[3 * j + i] = 0;
            for (int l = 0; l < 3; l++)
                R[3 * j + i] += R0[3 * l + i] * C[3 * l + j];
        }
}

/* Node x against body part k posed at (c, R): the gap to the shape's surface. */
static double node_body_gap(const srd_parts *ps, int k, const double *x, const double *c, const double *R)
{
    const srd_body *b = &ps->m->bodies[ps->label[k]];
    double local[3];
    for (int j = 0; j < 3; j++)
        local[j] = (x[0] - c[0]) * R[3 * j] + (x[1] - c[1]) * R[3 * j + 1] + (x[2] - c[2]) * R[3 * j + 2];
    return srd_shape_gap(local, b->shape, b->size);
}

/* Edge x0-x1 against a capsule or sphere posed at (c, R): the gap to its surface. */
static double edge_body_gap(const srd_parts *ps, int k, const double *x0, const double *x1, const double *c,
                            const double *R)
{
    const srd_body *b = &ps->m->bodies[ps->label[k]];
    double half = b->shape == SRD_SHAPE_CAPSULE ? 0.5 * b->size[1] : 0, e0[3], e1[3];
    for (int i = 0; i < 3; i++) {
        e0[i] = c[i] - half * R[6 + i];
        e1[i] = c[i] + half * R[6 + i];
    }
    return srd_segment_distance(x0, x1, e0, e1) - b->size[0];
}

/* The pair's distance with the first part's nodes at x and the body (if any) posed at (c, R). */
static double pair_gap(const srd_parts *ps, int a, int b, double x[5][3], const double *c, const double *R)
{
    switch (srd_parts_class(ps, a, b)) {
    case SRD_CLASS_EDGE_EDGE: return srd_segment_distance(x[0], x[1], x[2], x[3]);
    case SRD_CLASS_NODE_TRI: return srd_point_triangle_distance(x[0], x[1], x[2], x[3]);
    case SRD_CLASS_NODE_BODY: return node_body_gap(ps, b, x[0], c, R);
    default: return edge_body_gap(ps, b, x[0], x[1], c, R);
    }
}

double srd_parts_path_distance(const srd_parts *ps, const double *q0, const double *q1, int a, int b, double tau)
{
    double x[5][3], c[3] = { 0, 0, 0 }, R[9];
    int n = 0;
    for (int p = 0; p < 2; p++) {
        int k = p ? b : a;
        if (ps->kind[k] == SRD_PART_BODY) {
            body_pose(ps, q0, q1, tau, k, c, R);
            continue;
        }
        for (int i = 0; i < srd_parts_size(ps, k); i++, n++) {
            const double *y = node_x(ps, q1, ps->node[3 * k + i]), *y0 = q0 ? node_x(ps, q0, ps->node[3 * k + i]) : y;
            for (int j = 0; j < 3; j++)
                x[n][j] = y0[j] + tau * (y[j] - y0[j]);
        }
    }
    return pair_gap(ps, a, b, x, c, R);
}

double srd_parts_distance(const srd_parts *ps, const double *q, int a, int b)
{
    return srd_parts_path_distance(ps, NULL, q, a, b, 1);
}

double srd_parts_move(const srd_parts *ps, const double *q0, const double *q1, int k)
{
    double most = 0;
    for (int i = 0; i < srd_parts_size(ps, k); i++) {
        int d = ps->m->node_dof[ps->node[3 * k + i]];
        double u2 = 0, w2 = 0;
        for (int c = 0; c < 3; c++) {
            double u = q1[d + c] - (q0 ? q0[d + c] : 0);
            u2 += u * u;
        }
        /* a body's points move by its centre's motion and at most its turn's angle (under
         * |d theta|: the Cayley parameters' angle is 2 atan(|theta| / 2)) times its bound */
        for (int c = 0; ps->kind[k] == SRD_PART_BODY && c < 3; c++) {
            double w = q1[d + 3 + c] - (q0 ? q0[d + 3 + c] : 0);
            w2 += w * w;
        }
        most = fmax(most, sqrt(u2) + sqrt(w2) * ps->bound[k]);
    }
    return most;
}

void srd_parts_describe(const srd_parts *ps, int k, char *buf, size_t n)
{
    const srd_model *m = ps->m;
    int label = ps->label[k];
    switch (ps->kind[k]) {
    case SRD_PART_NODE:
        snprintf(buf, n, "`%s` node %d", m->objects[m->node_object[label]].name, m->node_local[label]);
        return;
    case SRD_PART_BODY:
        snprintf(buf, n, "body `%s`", m->objects[m->bodies[label].object].name);
        return;
    default: {
        bool edge = ps->kind[k] == SRD_PART_EDGE;
        const srd_object *ob = &m->objects[edge ? m->edge_object[label] : m->tri_object[label]];
        snprintf(buf, n, "`%s` %s %d", ob->name, edge ? "edge" : "triangle",
                 label - (edge ? ob->first_edge : ob->first_tri));
    }
    }
}
