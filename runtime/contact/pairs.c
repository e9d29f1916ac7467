/* pairs.c — contact between the model's own parts: which pairs of edges, and of nodes and shell
 * triangles, are close enough to act on each other this step, as instances of the dynamic
 * element sets edge_contact, node_triangle_contact and their friction (std.contact), and the
 * checks that keep any pair from being missed.
 *
 * The parts ("primitives") are the edges of the rods and shells in contact, and, with shells, the
 * nodes of those objects and the shells' triangles: edge against edge and node against
 * triangle cover every way two of them come close.
 *
 * Reach: a pair's penalty acts while the gap between the parts' surfaces, |gap| - h (h the sum
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
#include "distance.h"
#include "sim.h"

/* One part in one of the broad phase's grid cells. */
typedef struct cell_entry {
    uint64_t key;
    int32_t  cell[3];
    int32_t  prim;
} cell_entry;

/* Node pairs already in a sparse Jacobian's pattern: an open-addressing set of 64-bit keys. */
typedef struct key_set {
    uint64_t *slot;  /* 0: empty (keys are never 0: node + 1 in both halves) */
    size_t    cap, n;
} key_set;

/* The kinds of parts; a pair is edge-edge or node-triangle (node first). */
enum { PRIM_EDGE, PRIM_NODE, PRIM_TRI };

struct srd_pairs {
    const srd_model *m;
    int     n_prims;
    int    *kind;             /* PRIM_* */
    int    *node;             /* 3 per part: its nodes (an edge's two, a node's one) */
    int    *label;            /* the model edge or triangle, or the node: for messages */
    double *radius;           /* their contact radii */
    double  kc, delta, mu, slip_velocity;
    int     set, friction_set, tri_set, tri_friction_set;
    int     n_edge_pairs;     /* the edge-edge pairs come first in `pair`, then node-triangle */
    double  margin_floor, boost, margin; /* the margin: max(floor, 3 v dt, 2 last_move, boost) */
    double  last_move;        /* the largest node displacement of the last accepted solve */
    double *q_ref;            /* the configuration the candidates were found at (n_dofs) */
    int     n_pairs, cap_pairs;
    int    *pair;             /* 2 per candidate: parts, first < second for edges, node first */
    double *lo, *hi;          /* 3 per part: its box at q_ref, grown by its reach */
    cell_entry *cells, *sorted; /* the parts' cells; the same grouped by bucket */
    size_t  cap_cells, cap_sorted;
    size_t *start;            /* per bucket: its first entry in `sorted` (and one past the last) */
    size_t  cap_start;
    key_set coupled;
    int    *filled;           /* the pairs the batches hold (2 per pair) */
    int     n_filled;
    long long filled_layout;  /* the pattern's size they were mapped for */
    bool    filled_valid;
    double  seconds;
    /* statistics of accepted states */
    int     active_now, active_max;
    double  active_max_t, active_sum, samples, deepest, deepest_t;
    int     overlapped;       /* the first overlap beyond h / 2 below */
    double  overlap_t, overlap_depth, overlap_h;
    int     overlap_prim[2];
    long    redone, crossed;  /* solves repeated with a wider margin; steps cut for a crossing */
};

/* ---- the parts ---- */

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static const double *node_x(const srd_pairs *p, const double *q, int node) { return q + p->m->node_dof[node]; }

static int prim_size(const srd_pairs *p, int k) { return p->kind[k] == PRIM_EDGE ? 2 : p->kind[k] == PRIM_TRI ? 3 : 1; }

static const double *corner(const srd_pairs *p, const double *q, int k, int i) { return node_x(p, q, p->node[3 * k + i]); }

/* Distance between parts a and b (an edge pair, or a node a and a triangle b) at q. */
static double pair_distance(const srd_pairs *p, const double *q, int a, int b)
{
    if (p->kind[a] == PRIM_EDGE)
        return srd_segment_distance(corner(p, q, a, 0), corner(p, q, a, 1), corner(p, q, b, 0), corner(p, q, b, 1));
    return srd_point_triangle_distance(corner(p, q, a, 0), corner(p, q, b, 0), corner(p, q, b, 1), corner(p, q, b, 2));
}

/* Parts that share a node never act on each other (edges of one rod in a row, a triangle and
 * its own corner). */
static bool share_node(const srd_pairs *p, int a, int b)
{
    for (int i = 0; i < prim_size(p, a); i++)
        for (int j = 0; j < prim_size(p, b); j++)
            if (p->node[3 * a + i] == p->node[3 * b + j])
                return true;
    return false;
}

/* Edge-edge and node-triangle pairs act; the other kinds of meeting are covered by those. */
static bool pair_kinds(const srd_pairs *p, int a, int b)
{
    return (p->kind[a] == PRIM_EDGE && p->kind[b] == PRIM_EDGE) ||
           (p->kind[a] == PRIM_NODE && p->kind[b] == PRIM_TRI) || (p->kind[a] == PRIM_TRI && p->kind[b] == PRIM_NODE);
}

/* ---- set-up ---- */

static void add_prim(srd_pairs *p, int kind, const int *nodes, int label, double r)
{
    int k = p->n_prims++;
    p->kind[k] = kind;
    for (int i = 0; i < 3; i++)
        p->node[3 * k + i] = i < (kind == PRIM_EDGE ? 2 : kind == PRIM_TRI ? 3 : 1) ? nodes[i] : -1;
    p->label[k] = label;
    p->radius[k] = r;
}

/* An object's edges; a shell's triangles too, and, when shells take part, every node. */
static void add_object(srd_pairs *p, int o, bool nodes)
{
    const srd_model *m = p->m;
    const srd_object *ob = &m->objects[o];
    double r = srd_contact_radius(m, o);
    for (int k = 0; k < ob->n_edges; k++)
        add_prim(p, PRIM_EDGE, &m->edge_nodes[2 * (ob->first_edge + k)], ob->first_edge + k, r);
    for (int k = 0; ob->kind == SRD_OBJ_SHELL && k < ob->n_tris; k++)
        add_prim(p, PRIM_TRI, &m->tri_nodes[3 * (ob->first_tri + k)], ob->first_tri + k, r);
    for (int k = 0; nodes && k < ob->n_nodes; k++)
        if (m->node_object[ob->nodes[k]] == o) /* a node two objects share counts once */
            add_prim(p, PRIM_NODE, &ob->nodes[k], ob->nodes[k], r);
}

static size_t prim_capacity(const srd_model *m, const srd_self_contact *c)
{
    size_t n = 0;
    for (int k = 0; k < c->n_objects; k++) {
        const srd_object *ob = &m->objects[c->objects[k]];
        n += (size_t)ob->n_edges + (size_t)ob->n_tris + (size_t)ob->n_nodes;
    }
    return n + 1;
}

static void find_parts(srd_pairs *p, const srd_self_contact *c)
{
    size_t cap = prim_capacity(p->m, c);
    p->kind = srd_xcalloc(cap, sizeof(int));
    p->node = srd_xcalloc(3 * cap, sizeof(int));
    p->label = srd_xcalloc(cap, sizeof(int));
    p->radius = srd_xcalloc(cap, sizeof(double));
    for (int k = 0; k < c->n_objects; k++)
        add_object(p, c->objects[k], c->tri_set >= 0);
}

srd_pairs *srd_pairs_new(const srd_sim *s)
{
    const srd_model *m = s->m;
    const srd_self_contact *c = &m->self_contact;
    if (!c->present || c->edge_set < 0)
        return NULL;
    srd_pairs *p = srd_xcalloc(1, sizeof *p);
    p->m = m;
    find_parts(p, c);
    p->kc = c->stiffness;
    p->delta = c->delta;
    p->mu = c->friction;
    p->slip_velocity = c->slip_velocity;
    p->set = c->edge_set;
    p->friction_set = c->friction_set;
    p->tri_set = c->tri_set;
    p->tri_friction_set = c->tri_friction_set;
    double r_min = INFINITY;
    for (int k = 0; k < p->n_prims; k++)
        r_min = fmin(r_min, p->radius[k]);
    p->margin_floor = fmax(p->delta, 0.5 * r_min);
    p->q_ref = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    p->cap_pairs = 256; /* never NULL, so that an empty list still sorts and compares */
    p->pair = srd_xcalloc(2 * (size_t)p->cap_pairs, sizeof(int));
    p->filled = srd_xcalloc(2, sizeof(int));
    p->lo = srd_xcalloc(3 * (size_t)p->n_prims + 1, sizeof(double));
    p->hi = srd_xcalloc(3 * (size_t)p->n_prims + 1, sizeof(double));
    return p;
}

void srd_pairs_free(srd_pairs *p)
{
    if (!p)
        return;
    free(p->kind);
    free(p->node);
    free(p->label);
    free(p->radius);
    free(p->q_ref);
    free(p->pair);
    free(p->lo);
    free(p->hi);
    free(p->cells);
    free(p->sorted);
    free(p->start);
    free(p->coupled.slot);
    free(p->filled);
    free(p);
}

/* ---- broad phase: a spatial hash of the parts' boxes ---- */

/* Each part's box at q, grown by its radius and half of delta and the margin: two boxes
 * overlap when the parts may be within h + delta + margin of each other. Returns the mean side
 * of the boxes of edges and triangles: the grid's cell. */
static double part_boxes(srd_pairs *p, const double *q)
{
    double extent = 0;
    int counted = 0;
    for (int k = 0; k < p->n_prims; k++) {
        double grow = p->radius[k] + 0.5 * (p->delta + p->margin), side = 0;
        for (int c = 0; c < 3; c++) {
            double lo = INFINITY, hi = -INFINITY;
            for (int i = 0; i < prim_size(p, k); i++) {
                lo = fmin(lo, corner(p, q, k, i)[c]);
                hi = fmax(hi, corner(p, q, k, i)[c]);
            }
            p->lo[3 * k + c] = lo - grow;
            p->hi[3 * k + c] = hi + grow;
            side = fmax(side, p->hi[3 * k + c] - p->lo[3 * k + c]);
        }
        if (p->kind[k] != PRIM_NODE) {
            extent += side;
            counted++;
        }
    }
    return counted ? extent / counted : 1;
}

static uint64_t cell_key(const int32_t *c)
{
    uint64_t h = (uint64_t)(uint32_t)c[0] * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)(uint32_t)c[1] * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
    h ^= (uint64_t)(uint32_t)c[2] * 0x165667B19E3779F9ull + (h << 6) + (h >> 2);
    h ^= h >> 31; /* mix the high bits down: buckets take the low ones */
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 29);
}

static int32_t cell_of(double x, double size) { return (int32_t)floor(x / size); }

static void push_cell(srd_pairs *p, size_t *n, const int32_t *c, int k)
{
    if (*n == p->cap_cells) {
        p->cap_cells = p->cap_cells ? 2 * p->cap_cells : 1024;
        p->cells = srd_xrealloc(p->cells, p->cap_cells * sizeof *p->cells);
    }
    cell_entry *ce = &p->cells[(*n)++];
    memcpy(ce->cell, c, sizeof ce->cell);
    ce->key = cell_key(c);
    ce->prim = k;
}

static size_t fill_cells(srd_pairs *p, double size)
{
    size_t n = 0;
    for (int k = 0; k < p->n_prims; k++) {
        int32_t lo[3], hi[3], c[3];
        for (int i = 0; i < 3; i++) {
            lo[i] = cell_of(p->lo[3 * k + i], size);
            hi[i] = cell_of(p->hi[3 * k + i], size);
        }
        for (c[0] = lo[0]; c[0] <= hi[0]; c[0]++)
            for (c[1] = lo[1]; c[1] <= hi[1]; c[1]++)
                for (c[2] = lo[2]; c[2] <= hi[2]; c[2]++)
                    push_cell(p, &n, c, k);
    }
    return n;
}

/* Groups the entries by bucket (their key's low bits) in linear time, a counting sort into
 * p->sorted; start[b] .. start[b + 1] are bucket b's entries. A bucket may hold several cells:
 * the comparison of cells tells them apart. */
static size_t bucket_sort(srd_pairs *p, size_t n)
{
    size_t buckets = 1024;
    while (buckets < 2 * n)
        buckets *= 2;
    if (buckets + 1 > p->cap_start) {
        p->cap_start = buckets + 1;
        p->start = srd_xrealloc(p->start, p->cap_start * sizeof *p->start);
    }
    if (n > p->cap_sorted) {
        p->cap_sorted = p->cap_cells;
        p->sorted = srd_xrealloc(p->sorted, p->cap_sorted * sizeof *p->sorted);
    }
    memset(p->start, 0, (buckets + 1) * sizeof *p->start);
    for (size_t i = 0; i < n; i++)
        p->start[(p->cells[i].key & (buckets - 1)) + 1]++;
    for (size_t b = 0; b < buckets; b++)
        p->start[b + 1] += p->start[b];
    for (size_t i = 0; i < n; i++) /* in entry order, so each bucket lists its parts in order */
        p->sorted[p->start[p->cells[i].key & (buckets - 1)]++] = p->cells[i];
    memmove(p->start + 1, p->start, buckets * sizeof *p->start);
    p->start[0] = 0;
    return buckets;
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
    bool swap = p->kind[a] == PRIM_EDGE ? a > b : p->kind[a] == PRIM_TRI; /* edges in order, node first */
    p->pair[2 * p->n_pairs] = swap ? b : a;
    p->pair[2 * p->n_pairs + 1] = swap ? a : b;
    p->n_pairs++;
}

static void consider(srd_pairs *p, const double *q, const cell_entry *x, const cell_entry *y, double size)
{
    int a = x->prim, b = y->prim;
    if (a == b || !boxes_overlap(p, a, b) || share_node(p, a, b) ||
        !pair_cell_here(p, a, b, x->cell, size))
        return;
    int u = p->kind[a] == PRIM_TRI ? b : a, v = u == a ? b : a;
    if (pair_distance(p, q, u, v) < p->radius[a] + p->radius[b] + p->delta + p->margin)
        push_pair(p, a, b);
}

/* Sorted entries [i, j) share a bucket: the same cell, or another cell whose key falls in the
 * same bucket, which the comparison of cells tells apart. */
static void pairs_in_group(srd_pairs *p, const double *q, size_t i, size_t j, double size)
{
    const cell_entry *e = p->sorted;
    for (size_t u = i; u < j; u++)
        for (size_t v = u + 1; v < j; v++)
            if (pair_kinds(p, e[u].prim, e[v].prim) && !memcmp(e[u].cell, e[v].cell, sizeof e[u].cell))
                consider(p, q, &e[u], &e[v], size);
}

static int by_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* Edge pairs first, then node-triangle pairs; each kind in the order of its parts, the same on
 * every run. */
static void order_pairs(srd_pairs *p)
{
    int edges = 0;
    for (int k = 0; k < p->n_pairs; k++)
        if (p->kind[p->pair[2 * k]] == PRIM_EDGE) {
            int t0 = p->pair[2 * edges], t1 = p->pair[2 * edges + 1];
            p->pair[2 * edges] = p->pair[2 * k];
            p->pair[2 * edges + 1] = p->pair[2 * k + 1];
            p->pair[2 * k] = t0;
            p->pair[2 * k + 1] = t1;
            edges++;
        }
    qsort(p->pair, (size_t)edges, 2 * sizeof(int), by_pair);
    qsort(p->pair + 2 * edges, (size_t)(p->n_pairs - edges), 2 * sizeof(int), by_pair);
    p->n_edge_pairs = edges;
}

static void broad_phase(srd_pairs *p, const double *q)
{
    p->n_pairs = 0;
    double size = part_boxes(p, q);
    size_t n = fill_cells(p, size), buckets = bucket_sort(p, n);
    for (size_t b = 0; b < buckets; b++)
        if (p->start[b + 1] - p->start[b] > 1)
            pairs_in_group(p, q, p->start[b], p->start[b + 1], size);
    order_pairs(p);
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

/* Pair k's four nodes (a0, a1, b0, b1, or x, a, b, c) and its data. */
static void pair_stencil(const srd_pairs *p, int k, int nodes[4], double data[6])
{
    int a = p->pair[2 * k], b = p->pair[2 * k + 1], n = 0;
    for (int i = 0; i < prim_size(p, a); i++)
        nodes[n++] = p->node[3 * a + i];
    for (int i = 0; i < prim_size(p, b); i++)
        nodes[n++] = p->node[3 * b + i];
    double d[6] = { p->kc, p->delta, p->radius[a] + p->radius[b], p->mu, p->slip_velocity, 0 };
    memcpy(data, d, sizeof d);
}

/* Pairs [lo, hi) into the contact set and, with friction, four friction instances each. */
static void fill_kind(srd_sim *s, const srd_pairs *p, int set, int friction_set, int lo, int hi)
{
    srd_sim_kernel *ks = &s->kernels[set], *kf = friction_set >= 0 ? &s->kernels[friction_set] : NULL;
    size_batch(&ks->batch, hi - lo, ks->info.nd, 3, ks->info.n_state);
    if (kf)
        size_batch(&kf->batch, 4 * (hi - lo), kf->info.nd, 6, kf->info.n_state);
    for (int k = lo; k < hi; k++) {
        int nodes[5];
        double data[6];
        pair_stencil(p, k, nodes + 1, data);
        put_instance(ks, s->m, p->q_ref, k - lo, nodes + 1, data);
        for (int w = 0; kf && w < 4; w++) {
            nodes[0] = nodes[1 + w];
            data[5] = w;
            put_instance(kf, s->m, p->q_ref, 4 * (k - lo) + w, nodes, data);
        }
    }
}

static void fill_batches(srd_sim *s, const srd_pairs *p)
{
    fill_kind(s, p, p->set, p->friction_set, 0, p->n_edge_pairs);
    if (p->tri_set >= 0)
        fill_kind(s, p, p->tri_set, p->tri_friction_set, p->n_edge_pairs, p->n_pairs);
}

static void remap_batches(srd_sim *s, const srd_pairs *p)
{
    int sets[4] = { p->set, p->friction_set, p->tri_set, p->tri_friction_set };
    for (int k = 0; k < 4; k++)
        if (sets[k] >= 0)
            srd_batch_remap(&s->kernels[sets[k]].batch, &s->solver.sys);
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
    size_t cap = ks->cap ? 2 * ks->cap : 1024;
    key_set bigger = { srd_xcalloc(cap, sizeof(uint64_t)), cap, 0 };
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
    p->filled_valid = false; /* the batches were remapped for the new system: fill them anew */
    free(p->coupled.slot);
    memset(&p->coupled, 0, sizeof p->coupled);
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

/* One part's nodes against the other's, for the pairs new to the pattern. */
static void add_couplings(srd_sim *s, srd_pairs *p)
{
    if (s->solver.sys.layout != SRD_JAC_CSC)
        return; /* dense storage holds every entry (banded storage is refused at start) */
    int *dofs = srd_xcalloc(27 * (size_t)p->n_pairs + 1, 2 * sizeof(int)), n = 0;
    for (int k = 0; k < p->n_pairs; k++) {
        int a = p->pair[2 * k], b = p->pair[2 * k + 1];
        for (int i = 0; i < prim_size(p, a); i++)
            for (int j = 0; j < prim_size(p, b); j++) {
                int u = p->node[3 * a + i], v = p->node[3 * b + j];
                uint64_t key = ((uint64_t)(u < v ? u : v) + 1) << 32 | (uint64_t)((u < v ? v : u) + 1);
                if (key_add(&p->coupled, key))
                    n += node_couplings(s, u, v, dofs + 2 * n);
            }
    }
    if (n)
        srd_sim_add_couplings(s, n, dofs);
    free(dofs);
}

/* ---- per step ---- */

/* The largest of |x[node] - y[node]| over the parts' nodes (y NULL: |x[node]|). */
static double largest_over_nodes(const srd_pairs *p, const double *x, const double *y)
{
    double d2 = 0;
    for (int k = 0; k < p->n_prims; k++)
        for (int i = 0; i < prim_size(p, k); i++) {
            int d = p->m->node_dof[p->node[3 * k + i]];
            double u[3];
            for (int c = 0; c < 3; c++)
                u[c] = x[d + c] - (y ? y[d + c] : 0);
            d2 = fmax(d2, dot3(u, u));
        }
    return sqrt(d2);
}

/* The batches hold the same pairs as the last fill, in the same solver layout, and no state:
 * nothing to fill (resting contact keeps its pairs from step to step). */
static bool same_as_before(const srd_sim *s, const srd_pairs *p)
{
    int sets[4] = { p->set, p->friction_set, p->tri_set, p->tri_friction_set };
    for (int k = 0; k < 4; k++)
        if (sets[k] >= 0 && s->kernels[sets[k]].info.n_state)
            return false;
    return p->filled_valid && p->n_filled == p->n_pairs && p->filled_layout == s->solver.sys.nnz &&
           !memcmp(p->filled, p->pair, 2 * sizeof(int) * (size_t)p->n_pairs);
}

static void remember_pairs(srd_pairs *p)
{
    p->filled = srd_xrealloc(p->filled, (2 * (size_t)p->n_pairs + 1) * sizeof(int));
    memcpy(p->filled, p->pair, 2 * sizeof(int) * (size_t)p->n_pairs);
    p->n_filled = p->n_pairs;
    p->filled_valid = true;
}

void srd_pairs_update(srd_sim *s, const double *q, double dt)
{
    srd_pairs *p = s->pairs;
    double t0 = srd_seconds();
    if (q)
        memcpy(p->q_ref, q, sizeof(double) * (size_t)s->m->n_dofs);
    double motion = dt > 0 ? 3 * largest_over_nodes(p, s->v0, NULL) * dt : 0;
    p->margin = fmax(fmax(p->margin_floor, 2 * p->last_move), fmax(p->boost, motion));
    broad_phase(p, p->q_ref);
    if (!same_as_before(s, p)) {
        fill_batches(s, p);
        add_couplings(s, p);
        remap_batches(s, p);
        remember_pairs(p);
        p->filled_layout = s->solver.sys.nnz;
    }
    p->seconds += srd_seconds() - t0;
}

/* A node of the path from q_ref to q at fraction tau. */
static void path_point(const srd_pairs *p, const double *q, int node, double tau, double *x)
{
    int d = p->m->node_dof[node];
    for (int c = 0; c < 3; c++)
        x[c] = p->q_ref[d + c] + tau * (q[d + c] - p->q_ref[d + c]);
}

/* How far part k's nodes move at most from q_ref to q. */
static double part_move(const srd_pairs *p, const double *q, int k)
{
    double most = 0;
    for (int i = 0; i < prim_size(p, k); i++) {
        int d = p->m->node_dof[p->node[3 * k + i]];
        double u[3] = { q[d] - p->q_ref[d], q[d + 1] - p->q_ref[d + 1], q[d + 2] - p->q_ref[d + 2] };
        most = fmax(most, sqrt(dot3(u, u)));
    }
    return most;
}

/* The distance of pair (a, b) at fraction tau of the path. */
static double path_distance(const srd_pairs *p, const double *q, int a, int b, double tau)
{
    double x[6][3];
    int n = 0;
    for (int i = 0; i < prim_size(p, a); i++)
        path_point(p, q, p->node[3 * a + i], tau, x[n++]);
    for (int i = 0; i < prim_size(p, b); i++)
        path_point(p, q, p->node[3 * b + i], tau, x[n++]);
    return p->kind[a] == PRIM_EDGE ? srd_segment_distance(x[0], x[1], x[2], x[3])
                                   : srd_point_triangle_distance(x[0], x[1], x[2], x[3]);
}

/* Whether candidate k's parts come within 1e-3 h of each other on the straight path:
 * conservative advancement, each advance as far as the distance left allows. */
static bool pair_crosses(const srd_pairs *p, const double *q, int k)
{
    int a = p->pair[2 * k], b = p->pair[2 * k + 1];
    double speed = part_move(p, q, a) + part_move(p, q, b);
    double floor_d = 1e-3 * (p->radius[a] + p->radius[b]), tau = 0;
    for (int it = 0; it < 1000; it++) {
        double d = path_distance(p, q, a, b, tau);
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
    double moved = largest_over_nodes(p, q, p->q_ref);
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
    if (verdict == SRD_PAIRS_OK) {
        p->boost = 0;
        p->last_move = moved; /* the next step or load step likely moves as far */
    }
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
    p->overlap_prim[0] = p->pair[2 * k];
    p->overlap_prim[1] = p->pair[2 * k + 1];
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
            continue;
        active++; /* within reach of the penalty: the pair carries load */
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

/* "`rope` edge 12", "`sheet` triangle 3", "`sheet` node 7". */
static void describe_part(const srd_pairs *p, int k, char *buf, size_t n)
{
    const srd_model *m = p->m;
    int label = p->label[k];
    if (p->kind[k] == PRIM_NODE) {
        snprintf(buf, n, "`%s` node %d", m->objects[m->node_object[label]].name, m->node_local[label]);
        return;
    }
    bool edge = p->kind[k] == PRIM_EDGE;
    const srd_object *ob = &m->objects[edge ? m->edge_object[label] : m->tri_object[label]];
    snprintf(buf, n, "`%s` %s %d", ob->name, edge ? "edge" : "triangle", label - (edge ? ob->first_edge : ob->first_tri));
}

void srd_pairs_print_summary(const srd_pairs *p, FILE *out)
{
    if (!p || !p->samples)
        return;
    fprintf(out, "self contact: %.1f pairs in contact on average, at most %d (t = %.4g s); deepest overlap %.3g mm "
                 "(t = %.4g s); %d candidate pairs now; finding pairs took %.3g s",
            p->active_sum / p->samples, p->active_max, p->active_max_t, 1e3 * p->deepest, p->deepest_t, p->n_pairs,
            p->seconds);
    if (p->redone || p->crossed)
        fprintf(out, "; %ld solves repeated for pairs out of reach, %ld steps cut for parts passing through",
                p->redone, p->crossed);
    fputc('\n', out);
}

void srd_pairs_overlap_warning(const srd_pairs *p, char *buf, size_t n)
{
    buf[0] = 0;
    if (!p || !p->overlapped)
        return;
    char a[128], b[128];
    describe_part(p, p->overlap_prim[0], a, sizeof a);
    describe_part(p, p->overlap_prim[1], b, sizeof b);
    snprintf(buf, n,
             "at t = %.6g s %s and %s overlap by %.3g mm, more than half their contact thickness (%.3g mm)\n"
             "  hint: raise the contact `stiffness`, or shorten `dt` so that contact builds up over several steps",
             p->overlap_t, a, b, 1e3 * p->overlap_depth, 1e3 * p->overlap_h);
}

int    srd_pairs_count(const srd_pairs *p) { return p ? p->n_pairs : 0; }
double srd_pairs_seconds(const srd_pairs *p) { return p ? p->seconds : 0; }
