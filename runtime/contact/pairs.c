/* pairs.c — contact between the model's own parts: which pairs of edges are close enough to act
 * on each other this step, as instances of the dynamic element sets edge_contact and
 * edge_friction (std.contact), and the checks that keep any pair from being missed.
 *
 * Reach: a pair's penalty acts while the gap between the edges' surfaces, |gap| - h (h the sum
 * of their contact radii), is below delta; beyond it the energy is under 1e-13 of its value at
 * contact. Candidates are the pairs whose distance at the step's start is below h + delta plus
 * a margin m. A pair left out was then at least h + delta + m apart, and its distance shrinks
 * by at most the sum of its two largest node displacements, so while no node moves more than
 * m / 2 over the step it stays out of reach all the way: the check after each solve enforces
 * that, finding the pairs again with a wider margin when a node moved farther. Candidates are
 * checked for passing through each other along the straight path from the start to the end
 * of the step by conservative advancement (the distance between two segments changes no
 * faster than the sum of their nodes' largest displacements); a crossing cuts the step. */
#include "pairs.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "clock.h"
#include "sim.h"

/* One edge of the broad phase's grid cells. */
typedef struct cell_entry {
    uint64_t key;
    int32_t  cell[3];
    int32_t  edge;
} cell_entry;

/* Node pairs already in a sparse Jacobian's pattern: an open-addressing set of 64-bit keys. */
typedef struct key_set {
    uint64_t *slot;  /* 0: empty (keys are never 0: node + 1 in both halves) */
    size_t    cap, n;
} key_set;

struct srd_pairs {
    const srd_model *m;
    int     n_edges;          /* contact edges */
    int    *edge;             /* their model edges */
    double *radius;           /* their contact radii */
    double  kc, delta, mu, slip_velocity;
    int     set, friction_set;
    double  margin_floor, boost, margin; /* the margin: max(floor, 3 v dt, boost) */
    double *q_ref;            /* the configuration the candidates were found at (n_dofs) */
    int     n_pairs, cap_pairs;
    int    *pair;             /* 2 per candidate: contact edge indices, first < second */
    /* The candidates of the last update, whose Jacobian positions a new update copies instead of
     * looking them up again in a sparse pattern (n_old < 0: none valid, the pattern is new). */
    int     n_old, cap_old;
    int    *old_pair;
    double *lo, *hi;          /* 3 per edge: its box at q_ref, grown by its reach */
    cell_entry *cells;
    size_t  cap_cells;
    key_set coupled;
    double  seconds;
    /* statistics of accepted states */
    int     active_now, active_max;
    double  active_max_t, active_sum, samples, deepest, deepest_t;
    int     overlapped;       /* the first overlap beyond h / 2 below */
    double  overlap_t, overlap_depth, overlap_h;
    int     overlap_edge[2];
    long    redone, crossed;  /* solves repeated with a wider margin; steps cut for a crossing */
};

/* ---- geometry ---- */

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static double clamp01(double x) { return x < 0 ? 0 : x > 1 ? 1 : x; }

/* The distance between segments a0-a1 and b0-b1, by the closest-point cases of std.contact's
 * segment_params. */
static double segment_distance(const double *a0, const double *a1, const double *b0, const double *b1)
{
    double d1[3], d2[3], r[3];
    for (int c = 0; c < 3; c++) {
        d1[c] = a1[c] - a0[c];
        d2[c] = b1[c] - b0[c];
        r[c] = a0[c] - b0[c];
    }
    double aa = dot3(d1, d1), ee = dot3(d2, d2), bb = dot3(d1, d2), cc = dot3(d1, r), ff = dot3(d2, r);
    double den = aa * ee - bb * bb;
    double s = den > 1e-12 * aa * ee ? clamp01((bb * ff - cc * ee) / den) : 0;
    double t = ee > 0 ? (bb * s + ff) / ee : 0;
    if (t < 0)
        s = aa > 0 ? clamp01(-cc / aa) : 0;
    else if (t > 1)
        s = aa > 0 ? clamp01((bb - cc) / aa) : 0;
    t = clamp01(t);
    double g[3];
    for (int c = 0; c < 3; c++)
        g[c] = r[c] + s * d1[c] - t * d2[c];
    return sqrt(dot3(g, g));
}

static const double *node_x(const srd_pairs *p, const double *q, int node) { return q + p->m->node_dof[node]; }

static int edge_node(const srd_pairs *p, int e, int k) { return p->m->edge_nodes[2 * p->edge[e] + k]; }

/* Distance between contact edges a and b at configuration q. */
static double pair_distance(const srd_pairs *p, const double *q, int a, int b)
{
    return segment_distance(node_x(p, q, edge_node(p, a, 0)), node_x(p, q, edge_node(p, a, 1)),
                            node_x(p, q, edge_node(p, b, 0)), node_x(p, q, edge_node(p, b, 1)));
}

static bool share_node(const srd_pairs *p, int a, int b)
{
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            if (edge_node(p, a, i) == edge_node(p, b, j))
                return true;
    return false;
}

/* ---- set-up ---- */

static void add_object_edges(srd_pairs *p, int o)
{
    const srd_object *ob = &p->m->objects[o];
    double r = srd_contact_radius(p->m, o);
    for (int k = 0; k < ob->n_edges; k++) {
        p->edge[p->n_edges] = ob->first_edge + k;
        p->radius[p->n_edges++] = r;
    }
}

srd_pairs *srd_pairs_new(const srd_sim *s)
{
    const srd_model *m = s->m;
    const srd_self_contact *c = &m->self_contact;
    if (!c->present || c->edge_set < 0)
        return NULL;
    srd_pairs *p = srd_xcalloc(1, sizeof *p);
    p->m = m;
    p->edge = srd_xcalloc((size_t)m->n_edges + 1, sizeof(int));
    p->radius = srd_xcalloc((size_t)m->n_edges + 1, sizeof(double));
    for (int k = 0; k < c->n_objects; k++)
        add_object_edges(p, c->objects[k]);
    p->kc = c->stiffness;
    p->delta = c->delta;
    p->mu = c->friction;
    p->slip_velocity = c->slip_velocity;
    p->set = c->edge_set;
    p->friction_set = c->friction_set;
    double r_min = INFINITY;
    for (int e = 0; e < p->n_edges; e++)
        r_min = fmin(r_min, p->radius[e]);
    p->margin_floor = fmax(p->delta, 0.5 * r_min);
    p->q_ref = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    p->lo = srd_xcalloc(3 * (size_t)p->n_edges + 1, sizeof(double));
    p->hi = srd_xcalloc(3 * (size_t)p->n_edges + 1, sizeof(double));
    p->n_old = -1;
    return p;
}

void srd_pairs_free(srd_pairs *p)
{
    if (!p)
        return;
    free(p->edge);
    free(p->radius);
    free(p->q_ref);
    free(p->pair);
    free(p->old_pair);
    free(p->lo);
    free(p->hi);
    free(p->cells);
    free(p->coupled.slot);
    free(p);
}

/* ---- broad phase: a spatial hash of the edges' boxes ---- */

/* Each edge's box at q, grown by its radius and half of delta and the margin: two boxes
 * overlap when the edges may be within h + delta + margin of each other. */
static double edge_boxes(srd_pairs *p, const double *q)
{
    double extent = 0;
    for (int e = 0; e < p->n_edges; e++) {
        const double *x0 = node_x(p, q, edge_node(p, e, 0)), *x1 = node_x(p, q, edge_node(p, e, 1));
        double grow = p->radius[e] + 0.5 * (p->delta + p->margin), side = 0;
        for (int c = 0; c < 3; c++) {
            p->lo[3 * e + c] = fmin(x0[c], x1[c]) - grow;
            p->hi[3 * e + c] = fmax(x0[c], x1[c]) + grow;
            side = fmax(side, p->hi[3 * e + c] - p->lo[3 * e + c]);
        }
        extent += side;
    }
    return p->n_edges ? extent / p->n_edges : 1;
}

static uint64_t cell_key(const int32_t *c)
{
    uint64_t h = (uint64_t)(uint32_t)c[0] * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)(uint32_t)c[1] * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
    h ^= (uint64_t)(uint32_t)c[2] * 0x165667B19E3779F9ull + (h << 6) + (h >> 2);
    return h;
}

static int32_t cell_of(double x, double size) { return (int32_t)floor(x / size); }

static void push_cell(srd_pairs *p, size_t *n, const int32_t *c, int e)
{
    if (*n == p->cap_cells) {
        p->cap_cells = p->cap_cells ? 2 * p->cap_cells : 1024;
        p->cells = srd_xrealloc(p->cells, p->cap_cells * sizeof *p->cells);
    }
    cell_entry *ce = &p->cells[(*n)++];
    memcpy(ce->cell, c, sizeof ce->cell);
    ce->key = cell_key(c);
    ce->edge = e;
}

static size_t fill_cells(srd_pairs *p, double size)
{
    size_t n = 0;
    for (int e = 0; e < p->n_edges; e++) {
        int32_t lo[3], hi[3], c[3];
        for (int k = 0; k < 3; k++) {
            lo[k] = cell_of(p->lo[3 * e + k], size);
            hi[k] = cell_of(p->hi[3 * e + k], size);
        }
        for (c[0] = lo[0]; c[0] <= hi[0]; c[0]++)
            for (c[1] = lo[1]; c[1] <= hi[1]; c[1]++)
                for (c[2] = lo[2]; c[2] <= hi[2]; c[2]++)
                    push_cell(p, &n, c, e);
    }
    return n;
}

static int by_key(const void *a, const void *b)
{
    const cell_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->edge - y->edge;
}

static bool boxes_overlap(const srd_pairs *p, int a, int b)
{
    for (int c = 0; c < 3; c++)
        if (p->lo[3 * a + c] > p->hi[3 * b + c] || p->lo[3 * b + c] > p->hi[3 * a + c])
            return false;
    return true;
}

/* A pair meets in every cell its boxes' overlap covers; it is taken in the one that holds the
 * overlap's lowest corner, so once. */
static bool pair_cell_here(const srd_pairs *p, int a, int b, const int32_t *cell, double size)
{
    for (int c = 0; c < 3; c++)
        if (cell_of(fmax(p->lo[3 * a + c], p->lo[3 * b + c]), size) != cell[c])
            return false;
    return true;
}

static void push_pair(srd_pairs *p, int a, int b)
{
    if (p->n_pairs == p->cap_pairs) {
        p->cap_pairs = p->cap_pairs ? 2 * p->cap_pairs : 256;
        p->pair = srd_xrealloc(p->pair, 2 * (size_t)p->cap_pairs * sizeof(int));
    }
    p->pair[2 * p->n_pairs] = a < b ? a : b;
    p->pair[2 * p->n_pairs + 1] = a < b ? b : a;
    p->n_pairs++;
}

static void consider(srd_pairs *p, const double *q, const cell_entry *x, const cell_entry *y, double size)
{
    int a = x->edge, b = y->edge;
    if (a == b || !boxes_overlap(p, a, b) || share_node(p, a, b) || !pair_cell_here(p, a, b, x->cell, size))
        return;
    if (pair_distance(p, q, a, b) < p->radius[a] + p->radius[b] + p->delta + p->margin)
        push_pair(p, a, b);
}

/* Entries [i, j) share a key: the same cell (or, rarely, another cell with the same hash,
 * which pair_cell_here tells apart). */
static void pairs_in_group(srd_pairs *p, const double *q, size_t i, size_t j, double size)
{
    for (size_t u = i; u < j; u++)
        for (size_t v = u + 1; v < j; v++)
            if (!memcmp(p->cells[u].cell, p->cells[v].cell, sizeof p->cells[u].cell))
                consider(p, q, &p->cells[u], &p->cells[v], size);
}

static int by_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] > y[1]) - (x[1] < y[1]);
}

static void broad_phase(srd_pairs *p, const double *q)
{
    p->n_pairs = 0;
    double size = edge_boxes(p, q);
    size_t n = fill_cells(p, size);
    qsort(p->cells, n, sizeof *p->cells, by_key);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && p->cells[j].key == p->cells[i].key; j++)
            ;
        pairs_in_group(p, q, i, j, size);
    }
    qsort(p->pair, (size_t)p->n_pairs, 2 * sizeof(int), by_pair); /* the same order on every run */
}

/* ---- the element sets' batches ---- */

static void size_batch(srd_batch_owner *bo, int n, int nd, int n_data, int n_state)
{
    size_t un = (size_t)(n ? n : 1);
    bo->dofs = srd_xrealloc(bo->dofs, un * (size_t)nd * sizeof(int32_t));
    bo->res = srd_xrealloc(bo->res, un * (size_t)nd * sizeof(int32_t));
    bo->jac_pos = srd_xrealloc(bo->jac_pos, un * (size_t)nd * (size_t)nd * sizeof(int64_t));
    bo->data = srd_xrealloc(bo->data, un * (size_t)(n_data ? n_data : 1) * sizeof(double));
    bo->state = srd_xrealloc(bo->state, un * (size_t)(n_state ? n_state : 1) * sizeof(double));
    bo->b = (srd_elem_batch){ .n = n, .n_dofs = nd, .n_data = n_data, .n_state = n_state, .dofs = bo->dofs,
                              .res = bo->res, .jac_pos = bo->jac_pos, .data = bo->data, .state = bo->state };
}

/* Instance i of a set whose stencil is the nodes `nodes` (its parameters in order), with the
 * data `data`; a step-start position is the only state these kernels may read. */
static void put_instance(srd_sim_kernel *sk, const srd_model *m, const double *q0, int i, const int *nodes,
                         const double *data)
{
    const srd_kernel_info *in = &sk->info;
    srd_batch_owner *bo = &sk->batch;
    for (int k = 0; k < in->nd; k++)
        bo->dofs[(size_t)i * in->nd + k] = m->node_dof[nodes[in->dof_param[k]]] + in->dof_comp[k];
    for (int k = 0; k < in->n_state; k++)
        bo->state[(size_t)i * in->n_state + k] = q0[m->node_dof[nodes[in->state_param[k]]] + in->state_comp[k]];
    memcpy(bo->data + (size_t)i * bo->b.n_data, data, sizeof(double) * (size_t)bo->b.n_data);
}

/* The pair's nodes a0, a1, b0, b1 and its data. */
static void pair_stencil(const srd_pairs *p, int k, int nodes[4], double data[6])
{
    int a = p->pair[2 * k], b = p->pair[2 * k + 1];
    nodes[0] = edge_node(p, a, 0);
    nodes[1] = edge_node(p, a, 1);
    nodes[2] = edge_node(p, b, 0);
    nodes[3] = edge_node(p, b, 1);
    double h = p->radius[a] + p->radius[b];
    double d[6] = { p->kc, p->delta, h, p->mu, p->slip_velocity, 0 };
    memcpy(data, d, sizeof d);
}

/* Moves `count` instances' residual rows and Jacobian positions from instance `from` of the old
 * arrays to instance `to` of the batch. */
static void copy_positions(srd_batch_owner *bo, const int32_t *old_res, const int64_t *old_jac, int from, int to,
                           int count)
{
    size_t nd = (size_t)bo->b.n_dofs;
    memcpy(bo->res + (size_t)to * nd, old_res + (size_t)from * nd, sizeof(int32_t) * nd * (size_t)count);
    memcpy(bo->jac_pos + (size_t)to * nd * nd, old_jac + (size_t)from * nd * nd, sizeof(int64_t) * nd * nd * (size_t)count);
}

/* The residual rows and Jacobian positions of the new candidates: copied for the pairs that were
 * candidates at the last update (both lists are sorted), looked up for the others. A lookup in a
 * sparse pattern is a binary search per entry, 1,044 per pair with friction, which made finding
 * pairs cost more than the rest of a step. */
static void position_batches(srd_sim *s, srd_pairs *p, srd_batch_owner *bs, srd_batch_owner *bf, int32_t *res[2],
                             int64_t *jac[2])
{
    int j = 0;
    for (int k = 0; k < p->n_pairs; k++) {
        while (j < p->n_old && by_pair(&p->old_pair[2 * j], &p->pair[2 * k]) < 0)
            j++;
        bool kept = j < p->n_old && by_pair(&p->old_pair[2 * j], &p->pair[2 * k]) == 0;
        if (kept) {
            copy_positions(bs, res[0], jac[0], j, k, 1);
            if (bf)
                copy_positions(bf, res[1], jac[1], 4 * j, 4 * k, 4);
        } else {
            srd_batch_remap_range(bs, &s->solver.sys, k, 1);
            if (bf)
                srd_batch_remap_range(bf, &s->solver.sys, 4 * k, 4);
        }
    }
    if (p->cap_old < p->cap_pairs) {
        p->cap_old = p->cap_pairs;
        p->old_pair = srd_xrealloc(p->old_pair, 2 * (size_t)p->cap_old * sizeof(int));
    }
    if (p->n_pairs)
        memcpy(p->old_pair, p->pair, 2 * (size_t)p->n_pairs * sizeof(int));
    p->n_old = p->n_pairs;
}

static void fill_batches(srd_sim *s, srd_pairs *p)
{
    srd_sim_kernel *ks = &s->kernels[p->set], *kf = p->friction_set >= 0 ? &s->kernels[p->friction_set] : NULL;
    /* The same candidates as at the last update (a pile at rest, most steps of a slow motion):
     * their positions are where they were; otherwise the last update's positions are kept aside
     * while the batches are sized again, and copied (8 kB per pair with friction). */
    bool same = p->n_old == p->n_pairs &&
                (p->n_pairs == 0 || !memcmp(p->old_pair, p->pair, 2 * (size_t)p->n_pairs * sizeof(int)));
    int32_t *res[2] = { ks->batch.res, kf ? kf->batch.res : NULL };
    int64_t *jac[2] = { ks->batch.jac_pos, kf ? kf->batch.jac_pos : NULL };
    if (!same) {
        ks->batch.res = NULL;
        ks->batch.jac_pos = NULL;
        if (kf) {
            kf->batch.res = NULL;
            kf->batch.jac_pos = NULL;
        }
    }
    size_batch(&ks->batch, p->n_pairs, ks->info.nd, 3, ks->info.n_state);
    if (kf)
        size_batch(&kf->batch, 4 * p->n_pairs, kf->info.nd, 6, kf->info.n_state);
    for (int k = 0; k < p->n_pairs; k++) {
        int nodes[5];
        double data[6];
        pair_stencil(p, k, nodes + 1, data);
        put_instance(ks, s->m, p->q_ref, k, nodes + 1, data);
        for (int w = 0; kf && w < 4; w++) {
            nodes[0] = nodes[1 + w];
            data[5] = w;
            put_instance(kf, s->m, p->q_ref, 4 * k + w, nodes, data);
        }
    }
    if (same)
        return;
    if (p->n_old < 0)
        p->n_old = 0; /* nothing valid to copy */
    position_batches(s, p, &ks->batch, kf ? &kf->batch : NULL, res, jac);
    for (int i = 0; i < 2; i++) {
        free(res[i]);
        free(jac[i]);
    }
}

/* ---- couplings in a sparse pattern ---- */

static size_t key_slot(const key_set *ks, uint64_t key)
{
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (ks->cap - 1);
    while (ks->slot[i] && ks->slot[i] != key)
        i = (i + 1) & (ks->cap - 1);
    return i;
}

static void key_grow(key_set *ks)
{
    key_set bigger = { srd_xcalloc(ks->cap ? 2 * ks->cap : 1024, sizeof(uint64_t)), ks->cap ? 2 * ks->cap : 1024, 0 };
    for (size_t i = 0; i < ks->cap; i++)
        if (ks->slot[i]) {
            bigger.slot[key_slot(&bigger, ks->slot[i])] = ks->slot[i];
            bigger.n++;
        }
    free(ks->slot);
    *ks = bigger;
}

/* Adds key; true when it was not there. */
static bool key_add(key_set *ks, uint64_t key)
{
    if (2 * (ks->n + 1) > ks->cap)
        key_grow(ks);
    size_t i = key_slot(ks, key);
    if (ks->slot[i])
        return false;
    ks->slot[i] = key;
    ks->n++;
    return true;
}

void srd_pairs_forget_couplings(srd_pairs *p)
{
    if (!p)
        return;
    free(p->coupled.slot);
    memset(&p->coupled, 0, sizeof p->coupled);
    p->n_old = -1; /* the pattern is new: positions found before do not hold */
}

/* The 9 free-DOF couplings of nodes u and v, appended to out; returns how many. */
static int node_couplings(const srd_sim *s, int u, int v, int *out)
{
    const int *fi = s->solver.sys.free_index;
    int n = 0, du = s->m->node_dof[u], dv = s->m->node_dof[v];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (fi[du + i] >= 0 && fi[dv + j] >= 0) {
                out[2 * n] = fi[du + i];
                out[2 * n + 1] = fi[dv + j];
                n++;
            }
    return n;
}

/* Edge a's nodes against edge b's, for the pairs new to the pattern. */
static void add_couplings(srd_sim *s, srd_pairs *p)
{
    if (s->solver.sys.layout != SRD_JAC_CSC)
        return; /* dense storage holds every entry (banded storage is refused at start) */
    int *dofs = srd_xcalloc(36 * (size_t)p->n_pairs + 1, 2 * sizeof(int)), n = 0;
    for (int k = 0; k < p->n_pairs; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                int u = edge_node(p, p->pair[2 * k], i), v = edge_node(p, p->pair[2 * k + 1], j);
                uint64_t key = ((uint64_t)(u < v ? u : v) + 1) << 32 | (uint64_t)((u < v ? v : u) + 1);
                if (key_add(&p->coupled, key))
                    n += node_couplings(s, u, v, dofs + 2 * n);
            }
    if (n)
        srd_sim_add_couplings(s, n, dofs);
    free(dofs);
}

/* ---- per step ---- */

static double largest_speed(const srd_sim *s, const srd_pairs *p)
{
    double v2 = 0;
    for (int e = 0; e < p->n_edges; e++)
        for (int k = 0; k < 2; k++) {
            const double *v = s->v0 + s->m->node_dof[edge_node(p, e, k)];
            v2 = fmax(v2, dot3(v, v));
        }
    return sqrt(v2);
}

void srd_pairs_update(srd_sim *s, const double *q, double dt)
{
    srd_pairs *p = s->pairs;
    double t0 = srd_seconds();
    if (q)
        memcpy(p->q_ref, q, sizeof(double) * (size_t)s->m->n_dofs);
    p->margin = fmax(p->margin_floor, fmax(p->boost, dt > 0 ? 3 * largest_speed(s, p) * dt : 0));
    broad_phase(p, p->q_ref);
    fill_batches(s, p);
    add_couplings(s, p); /* when the pattern grows, every batch is remapped, these included */
    p->seconds += srd_seconds() - t0;
}

/* The largest displacement of a contact node from q_ref to q. */
static double largest_move(const srd_pairs *p, const double *q)
{
    double d2 = 0;
    for (int e = 0; e < p->n_edges; e++)
        for (int k = 0; k < 2; k++) {
            int d = p->m->node_dof[edge_node(p, e, k)];
            double u[3] = { q[d] - p->q_ref[d], q[d + 1] - p->q_ref[d + 1], q[d + 2] - p->q_ref[d + 2] };
            d2 = fmax(d2, dot3(u, u));
        }
    return sqrt(d2);
}

/* A node of the path from q_ref to q at fraction tau. */
static void path_point(const srd_pairs *p, const double *q, int node, double tau, double *x)
{
    int d = p->m->node_dof[node];
    for (int c = 0; c < 3; c++)
        x[c] = p->q_ref[d + c] + tau * (q[d + c] - p->q_ref[d + c]);
}

static double node_move(const srd_pairs *p, const double *q, int node)
{
    int d = p->m->node_dof[node];
    double u[3] = { q[d] - p->q_ref[d], q[d + 1] - p->q_ref[d + 1], q[d + 2] - p->q_ref[d + 2] };
    return sqrt(dot3(u, u));
}

/* Whether candidate k's centre lines come within 1e-3 h of each other on the straight path:
 * conservative advancement, each advance as far as the distance left allows. */
static bool pair_crosses(const srd_pairs *p, const double *q, int k)
{
    int a = p->pair[2 * k], b = p->pair[2 * k + 1], n[4];
    for (int i = 0; i < 4; i++)
        n[i] = edge_node(p, i < 2 ? a : b, i % 2);
    double speed = fmax(node_move(p, q, n[0]), node_move(p, q, n[1])) + fmax(node_move(p, q, n[2]), node_move(p, q, n[3]));
    double floor_d = 1e-3 * (p->radius[a] + p->radius[b]), tau = 0;
    for (int it = 0; it < 1000; it++) {
        double x[4][3];
        for (int i = 0; i < 4; i++)
            path_point(p, q, n[i], tau, x[i]);
        double d = segment_distance(x[0], x[1], x[2], x[3]);
        if (d <= floor_d)
            return true;
        if (!(speed > 0) || tau + (d - floor_d) / speed >= 1)
            return false;
        tau += (d - floor_d) / speed;
    }
    return true; /* grazing for a thousand advances: treat as a crossing and cut the step */
}

int srd_pairs_check(srd_sim *s, const double *q)
{
    srd_pairs *p = s->pairs;
    double t0 = srd_seconds();
    double moved = largest_move(p, q);
    int verdict = SRD_PAIRS_OK;
    if (moved > 0.5 * p->margin) {
        p->boost = 2.5 * moved;
        p->redone++;
        verdict = SRD_PAIRS_MISSED;
    }
    for (int k = 0; k < p->n_pairs && verdict == SRD_PAIRS_OK; k++)
        if (pair_crosses(p, q, k)) {
            p->crossed++;
            verdict = SRD_PAIRS_CROSSED;
        }
    if (verdict == SRD_PAIRS_OK)
        p->boost = 0;
    p->seconds += srd_seconds() - t0;
    return verdict;
}

/* ---- statistics ---- */

static void note_overlap(srd_pairs *p, int k, double depth, double h, double t)
{
    if (p->overlapped || depth <= 0.5 * h)
        return;
    p->overlapped = 1;
    p->overlap_t = t;
    p->overlap_depth = depth;
    p->overlap_h = h;
    p->overlap_edge[0] = p->edge[p->pair[2 * k]];
    p->overlap_edge[1] = p->edge[p->pair[2 * k + 1]];
}

void srd_pairs_sample(srd_pairs *p, const double *q, double t)
{
    if (!p)
        return;
    int active = 0;
    for (int k = 0; k < p->n_pairs; k++) {
        int a = p->pair[2 * k], b = p->pair[2 * k + 1];
        double h = p->radius[a] + p->radius[b], depth = h - pair_distance(p, q, a, b);
        if (depth <= -p->delta)
            continue; /* out of the penalty's reach */
        active++;
        if (depth <= 0)
            continue;
        if (depth > p->deepest) {
            p->deepest = depth;
            p->deepest_t = t;
        }
        note_overlap(p, k, depth, h, t);
    }
    p->active_now = active;
    if (active > p->active_max) {
        p->active_max = active;
        p->active_max_t = t;
    }
    p->active_sum += active;
    p->samples++;
}

/* "rod `rope`, edge 12". */
static void describe_edge(const srd_model *m, int e, char *buf, size_t n)
{
    const srd_object *ob = &m->objects[m->edge_object[e]];
    snprintf(buf, n, "`%s` edge %d", ob->name, e - ob->first_edge);
}

void srd_pairs_print_summary(const srd_pairs *p, FILE *out)
{
    if (!p || !p->samples)
        return;
    fprintf(out, "self contact: %.1f pairs of edges within the contact distance on average, at most %d (t = %.4g s); deepest overlap "
                 "%.3g mm (t = %.4g s); %d candidate pairs now; finding pairs took %.3g s",
            p->active_sum / p->samples, p->active_max, p->active_max_t, 1e3 * p->deepest, p->deepest_t, p->n_pairs,
            p->seconds);
    if (p->redone || p->crossed)
        fprintf(out, "; %ld solves repeated for pairs out of reach, %ld steps cut for edges passing through",
                p->redone, p->crossed);
    fputc('\n', out);
}

void srd_pairs_overlap_warning(const srd_pairs *p, char *buf, size_t n)
{
    buf[0] = 0;
    if (!p || !p->overlapped)
        return;
    char a[128], b[128];
    describe_edge(p->m, p->overlap_edge[0], a, sizeof a);
    describe_edge(p->m, p->overlap_edge[1], b, sizeof b);
    snprintf(buf, n,
             "at t = %.6g s %s and %s overlap by %.3g mm, more than half their contact thickness (%.3g mm)\n"
             "  hint: raise the contact `stiffness`, or shorten `dt` so that contact builds up over several steps",
             p->overlap_t, a, b, 1e3 * p->overlap_depth, 1e3 * p->overlap_h);
}

int    srd_pairs_count(const srd_pairs *p) { return p ? p->n_pairs : 0; }
double srd_pairs_seconds(const srd_pairs *p) { return p ? p->seconds : 0; }
