/* pairs.c — contact between the model's own parts: which pairs of parts (parts.h: rod and shell
 * edges, nodes, shell triangles, rigid bodies) are close enough to act on each other this step,
 * as instances of the dynamic element sets of std.contact (srd_self_contact.set), and the checks
 * that keep any pair from being missed.
 *
 * The pairs that act: edge against edge, node against triangle, node against body, edge
 * against a capsule or sphere. The closest points of two triangles (or of a segment and a
 * triangle) are a corner and a face or two edges, so the first two cover rods and shells.
 *
 * Reach: a pair's penalty acts while the gap between the parts' surfaces (their distance less h,
 * the sum of their contact radii; a body's surface is its shape) is below delta; beyond it the
 * energy is under 1e-13 of its value at contact. Candidates are the pairs whose distance at the
 * step's start is below h + delta plus a margin m. A pair left out was then at least that far
 * apart, and its distance shrinks by at most the sum of the farthest its two parts' points move,
 * so while no part moves more than m / 2 over the step it stays out of reach all the way: the
 * check after each solve enforces that, finding the pairs again with a wider margin when a
 * part moved farther. Candidates are checked for passing through each other along the straight
 * path from the start to the end of the step by conservative advancement (their distance changes
 * no faster than the sum of their largest moves); a crossing cuts the step. */
#include "pairs.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "clock.h"
#include "parts.h"
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

struct srd_pairs {
    const srd_model *m;
    srd_parts parts;
    double  kc, delta, mu, slip_velocity;
    const int *set;           /* the element sets, by SRD_PAIR_* (the model's) */
    double  margin_floor, boost, margin; /* the margin: max(floor, 3 v dt, 2 last_move, boost) */
    double  last_move;        /* the largest move of the last accepted solve */
    double *q_ref;            /* the configuration the candidates were found at (n_dofs) */
    double *q_guess;          /* the solve's first guess, where a repeated solve starts again */
    int     n_pairs, cap_pairs;
    int    *pair;             /* 2 per candidate, the first-named part first; grouped by class */
    int     group[SRD_CLASSES + 1]; /* class c's pairs are [group[c], group[c + 1]) */
    double *lo, *hi;          /* 3 per part: its box at q_ref, grown by its reach */
    cell_entry *cells, *sorted; /* the parts' cells; the same grouped by bucket */
    size_t  cap_cells, cap_sorted;
    size_t *start;            /* per bucket: its first entry in `sorted` (and one past the last) */
    size_t  cap_start;
    key_set coupled;
    int    *filled;           /* the pairs the batches hold (2 per pair), grouped as `pair` */
    int     filled_group[SRD_CLASSES + 1];
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

/* ---- set-up ---- */

srd_pairs *srd_pairs_new(const srd_sim *s)
{
    const srd_model *m = s->m;
    const srd_self_contact *c = &m->self_contact;
    if (!c->present)
        return NULL;
    srd_pairs *p = srd_xcalloc(1, sizeof *p);
    p->m = m;
    srd_parts_init(&p->parts, m, s->bodies.axes);
    p->kc = c->stiffness;
    p->delta = c->delta;
    p->mu = c->friction;
    p->slip_velocity = c->slip_velocity;
    p->set = c->set;
    double r_min = INFINITY;
    for (int k = 0; k < p->parts.n; k++)
        if (p->parts.kind[k] != SRD_PART_BODY)
            r_min = fmin(r_min, p->parts.radius[k]);
    p->margin_floor = fmax(p->delta, 0.5 * r_min);
    p->q_ref = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    p->q_guess = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    p->cap_pairs = 256; /* never NULL, so that an empty list still sorts and compares */
    p->pair = srd_xcalloc(2 * (size_t)p->cap_pairs, sizeof(int));
    p->filled = srd_xcalloc(2, sizeof(int));
    p->lo = srd_xcalloc(3 * (size_t)p->parts.n + 1, sizeof(double));
    p->hi = srd_xcalloc(3 * (size_t)p->parts.n + 1, sizeof(double));
    return p;
}

void srd_pairs_free(srd_pairs *p)
{
    if (!p)
        return;
    srd_parts_free(&p->parts);
    free(p->q_ref);
    free(p->q_guess);
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

/* The pair's class with either part named first, and the order that names the first first. */
static int class_of(const srd_pairs *p, int *a, int *b)
{
    int c = srd_parts_class(&p->parts, *a, *b);
    if (c != SRD_CLASS_NONE)
        return c;
    c = srd_parts_class(&p->parts, *b, *a);
    if (c != SRD_CLASS_NONE) {
        int t = *a;
        *a = *b;
        *b = t;
    }
    return c;
}

/* Each part's box at q, grown by its radius and half of delta and the margin: two boxes
 * overlap when the parts may be within h + delta + margin of each other. Returns the mean side
 * of the boxes of edges and triangles: the grid's cell. */
static double part_boxes(srd_pairs *p, const double *q)
{
    double extent = 0;
    int counted = 0;
    for (int k = 0; k < p->parts.n; k++) {
        double grow = p->parts.radius[k] + 0.5 * (p->delta + p->margin), side = 0;
        srd_parts_box(&p->parts, q, k, grow, &p->lo[3 * k], &p->hi[3 * k]);
        for (int c = 0; c < 3; c++)
            side = fmax(side, p->hi[3 * k + c] - p->lo[3 * k + c]);
        if (p->parts.kind[k] == SRD_PART_EDGE || p->parts.kind[k] == SRD_PART_TRI) {
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
    for (int k = 0; k < p->parts.n; k++) {
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
        p->cap_pairs *= 2;
        p->pair = srd_xrealloc(p->pair, 2 * (size_t)p->cap_pairs * sizeof(int));
    }
    p->pair[2 * p->n_pairs] = a;
    p->pair[2 * p->n_pairs + 1] = b;
    p->n_pairs++;
}

/* Parts a and b meet in a cell: a pair when they act on each other and are within reach. */
static void consider(srd_pairs *p, const double *q, const cell_entry *x, const cell_entry *y, double size)
{
    int a = x->prim, b = y->prim;
    if (class_of(p, &a, &b) == SRD_CLASS_NONE || !boxes_overlap(p, a, b) || srd_parts_share_node(&p->parts, a, b) ||
        !pair_cell_here(p, a, b, x->cell, size))
        return;
    if (p->parts.kind[a] == SRD_PART_EDGE && p->parts.kind[b] == SRD_PART_EDGE && a > b) { /* edges in order */
        int t = a;
        a = b;
        b = t;
    }
    double reach = p->parts.radius[a] + p->parts.radius[b] + p->delta + p->margin;
    if (srd_parts_distance(&p->parts, q, a, b) < reach)
        push_pair(p, a, b);
}

/* Sorted entries [i, j) share a bucket: the same cell, or another cell whose key falls in the
 * same bucket, which the comparison of cells tells apart. */
static void pairs_in_group(srd_pairs *p, const double *q, size_t i, size_t j, double size)
{
    const cell_entry *e = p->sorted;
    for (size_t u = i; u < j; u++)
        for (size_t v = u + 1; v < j; v++)
            if (p->parts.kind[e[u].prim] + p->parts.kind[e[v].prim] != 2 * SRD_PART_NODE &&
                !memcmp(e[u].cell, e[v].cell, sizeof e[u].cell))
                consider(p, q, &e[u], &e[v], size);
}

static int by_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* Where each class's pairs begin in a list grouped by class (and one past the last). */
static void class_starts(const srd_pairs *p, int count[SRD_CLASSES + 1])
{
    memset(count, 0, sizeof(int) * (SRD_CLASSES + 1));
    for (int k = 0; k < p->n_pairs; k++)
        count[srd_parts_class(&p->parts, p->pair[2 * k], p->pair[2 * k + 1]) + 1]++;
    for (int c = 0; c < SRD_CLASSES; c++)
        count[c + 1] += count[c];
}

/* The pairs grouped by class, each group in the order of its parts: the same on every run. */
static void order_pairs(srd_pairs *p)
{
    int count[SRD_CLASSES + 1], *sorted = srd_xcalloc(2 * (size_t)p->n_pairs + 1, sizeof(int));
    class_starts(p, count);
    memcpy(p->group, count, sizeof p->group);
    for (int k = 0; k < p->n_pairs; k++) {
        int c = srd_parts_class(&p->parts, p->pair[2 * k], p->pair[2 * k + 1]);
        memcpy(&sorted[2 * count[c]++], &p->pair[2 * k], 2 * sizeof(int));
    }
    memcpy(p->pair, sorted, 2 * sizeof(int) * (size_t)p->n_pairs);
    free(sorted);
    for (int c = 0; c < SRD_CLASSES; c++)
        qsort(p->pair + 2 * p->group[c], (size_t)(p->group[c + 1] - p->group[c]), 2 * sizeof(int), by_pair);
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

/* Step-start state value k of a stencil whose parameters are the nodes `nodes`: a body's axes,
 * a node's reference position or mass. */
static double state_of(const srd_sim *s, const srd_kernel_info *in, const int *nodes, int k)
{
    const srd_model *m = s->m;
    int node = nodes[in->state_param[k]], c = in->state_comp[k], b = m->node_body ? m->node_body[node] : -1;
    switch (in->state_kind[k]) {
    case SRD_STATE_FRAME: return b >= 0 ? s->bodies.axes[9 * b + c] : 0;
    case SRD_STATE_X0: return m->x0[3 * node + c];
    case SRD_STATE_MASS: return m->node_mass[node];
    default: return 0;
    }
}

/* Instance i of set `set`, whose stencil is the nodes (and bodies) `nodes` in its parameters'
 * order, with the data `data`. */
static void put_instance(srd_sim *s, int set, int i, const int *nodes, const double *data)
{
    srd_sim_kernel *sk = &s->kernels[set];
    const srd_kernel_info *in = &sk->info;
    srd_batch_owner *bo = &sk->batch;
    for (int k = 0; k < in->nd; k++) {
        int comp = in->dof_comp[k], base = s->m->node_dof[nodes[in->dof_param[k]]];
        bo->dofs[(size_t)i * in->nd + k] = comp >= SRD_COMP_ROT ? base + 3 + comp - SRD_COMP_ROT : base + comp;
    }
    for (int k = 0; k < in->n_state; k++)
        bo->state[(size_t)i * in->n_state + k] = state_of(s, in, nodes, k);
    memcpy(bo->data + (size_t)i * bo->b.n_data, data, sizeof(double) * (size_t)bo->b.n_data);
}

/* A body's shape as std.contact's shape_gap reads it: shape, r, l, hx, hy, hz. */
static void shape_data(const srd_body *b, double *out)
{
    bool box = b->shape == SRD_SHAPE_BOX, sphere = b->shape == SRD_SHAPE_SPHERE;
    out[0] = box ? 1 : b->shape == SRD_SHAPE_CYLINDER ? 2 : 0;
    out[1] = box ? 0 : b->size[0];
    out[2] = box || sphere ? 0 : b->size[1];
    for (int c = 0; c < 3; c++)
        out[3 + c] = box ? 0.5 * b->size[c] : 0;
}

/* Pair k's stencil nodes (the first part's, then the second's) and its data: kc, delta, h, mu,
 * slip_velocity, then a body's shape (shape_data). */
static int pair_nodes(const srd_pairs *p, int k, int *nodes, double *data)
{
    int a = p->pair[2 * k], b = p->pair[2 * k + 1], n = 0;
    for (int i = 0; i < srd_parts_size(&p->parts, a); i++)
        nodes[n++] = p->parts.node[3 * a + i];
    for (int i = 0; i < srd_parts_size(&p->parts, b); i++)
        nodes[n++] = p->parts.node[3 * b + i];
    double d[5] = { p->kc, p->delta, p->parts.radius[a] + p->parts.radius[b], p->mu, p->slip_velocity };
    memcpy(data, d, sizeof d);
    if (p->parts.kind[b] == SRD_PART_BODY)
        shape_data(&p->m->bodies[p->parts.label[b]], data + 5);
    return n;
}

/* Sizes set k's batch for `pairs` pairs of `per` instances each (none when the set is absent). */
static bool size_set(srd_sim *s, const srd_pairs *p, int k, int pairs, int per)
{
    if (p->set[k] < 0)
        return false;
    srd_sim_kernel *sk = &s->kernels[p->set[k]];
    size_batch(&sk->batch, per * pairs, sk->info.nd, s->m->sets[p->set[k]].n_data, sk->info.n_state);
    return true;
}

/* The sets each class of pair fills, and how many instances a pair has in each. */
typedef struct class_set {
    int set, per;
} class_set;

static int class_sets(int cls, class_set out[3])
{
    static const class_set sets[SRD_CLASSES][3] = {
        [SRD_CLASS_EDGE_EDGE] = { { SRD_PAIR_EDGE, 1 }, { SRD_PAIR_EDGE_FRICTION, 4 }, { -1, 0 } },
        [SRD_CLASS_NODE_TRI] = { { SRD_PAIR_TRI, 1 }, { SRD_PAIR_TRI_FRICTION, 4 }, { -1, 0 } },
        [SRD_CLASS_NODE_BODY] = { { SRD_PAIR_BODY, 1 }, { SRD_PAIR_BODY_FRICTION, 1 },
                                  { SRD_PAIR_BODY_FRICTION_BODY, 1 } },
        [SRD_CLASS_EDGE_BODY] = { { SRD_PAIR_EDGE_BODY, 1 }, { SRD_PAIR_EDGE_BODY_FRICTION, 2 },
                                  { SRD_PAIR_EDGE_BODY_FRICTION_BODY, 1 } },
    };
    int n = 0;
    for (int k = 0; k < 3 && sets[cls][k].set >= 0; k++)
        out[n++] = sets[cls][k];
    return n;
}

/* Sizes every set of class cls for `pairs` pairs; whether the class has friction here. */
static bool size_class(srd_sim *s, const srd_pairs *p, int cls, int pairs)
{
    class_set cs[3];
    int n = class_sets(cls, cs);
    bool rub = false;
    for (int i = 0; i < n; i++)
        rub |= size_set(s, p, cs[i].set, pairs, cs[i].per) && i > 0;
    return rub;
}

/* Edge-edge or node-triangle pairs [lo, hi): contact on (a0, a1, b0, b1), friction on
 * (p, a0, a1, b0, b1) for each of the four nodes p (which = 0..3). */
static void fill_four(srd_sim *s, const srd_pairs *p, int cls, int lo, int hi)
{
    class_set cs[3];
    class_sets(cls, cs);
    int set = cs[0].set, friction = cs[1].set;
    bool rub = size_class(s, p, cls, hi - lo);
    for (int k = lo; k < hi; k++) {
        int nodes[5];
        double d[11], data[6];
        pair_nodes(p, k, nodes + 1, d);
        double contact[3] = { d[0], d[1], d[2] };
        put_instance(s, p->set[set], k - lo, nodes + 1, contact);
        memcpy(data, d, 5 * sizeof(double));
        for (int w = 0; rub && w < 4; w++) {
            nodes[0] = nodes[1 + w];
            data[5] = w;
            put_instance(s, p->set[friction], 4 * (k - lo) + w, nodes, data);
        }
    }
}

/* Node-body pairs [lo, hi): contact and the node's friction on (node, body), the body's on
 * (body, node). */
static void fill_node_body(srd_sim *s, const srd_pairs *p, int lo, int hi)
{
    bool rub = size_class(s, p, SRD_CLASS_NODE_BODY, hi - lo);
    for (int k = lo; k < hi; k++) {
        int nodes[2], swapped[2];
        double d[11], contact[9] = { 0 };
        pair_nodes(p, k, nodes, d);
        memcpy(contact, d, 3 * sizeof(double));
        memcpy(contact + 3, d + 5, 6 * sizeof(double));
        put_instance(s, p->set[SRD_PAIR_BODY], k - lo, nodes, contact);
        if (!rub)
            continue;
        swapped[0] = nodes[1];
        swapped[1] = nodes[0];
        put_instance(s, p->set[SRD_PAIR_BODY_FRICTION], k - lo, nodes, d);
        put_instance(s, p->set[SRD_PAIR_BODY_FRICTION_BODY], k - lo, swapped, d);
    }
}

/* Edge-body pairs [lo, hi) (capsules and spheres): contact on (a0, a1, body), the edge's
 * friction on (p, a0, a1, body) for p = a0, a1, the body's on (body, a0, a1). */
static void fill_edge_body(srd_sim *s, const srd_pairs *p, int lo, int hi)
{
    bool rub = size_class(s, p, SRD_CLASS_EDGE_BODY, hi - lo);
    for (int k = lo; k < hi; k++) {
        int nodes[4], turned[3];
        double d[11];
        pair_nodes(p, k, nodes + 1, d);
        /* d: kc delta h mu slip shape r l ...: contact (kc delta h r l), friction (+ mu slip, which) */
        double contact[5] = { d[0], d[1], d[2], d[6], d[7] };
        double rub_data[8] = { d[0], d[1], d[2], d[3], d[4], d[6], d[7], 0 };
        put_instance(s, p->set[SRD_PAIR_EDGE_BODY], k - lo, nodes + 1, contact);
        if (!rub)
            continue;
        for (int w = 0; w < 2; w++) {
            nodes[0] = nodes[1 + w];
            rub_data[7] = w;
            put_instance(s, p->set[SRD_PAIR_EDGE_BODY_FRICTION], 2 * (k - lo) + w, nodes, rub_data);
        }
        turned[0] = nodes[3];
        turned[1] = nodes[1];
        turned[2] = nodes[2];
        put_instance(s, p->set[SRD_PAIR_EDGE_BODY_FRICTION_BODY], k - lo, turned, rub_data);
    }
}

/* Moves `count` instances' residual rows and Jacobian positions from instance `from` of the old
 * arrays to instance `to` of the batch. */
static void copy_positions(srd_batch_owner *bo, const int32_t *old_res, const int64_t *old_jac, int from, int to,
                           int count)
{
    size_t nd = (size_t)bo->b.n_dofs;
    memcpy(bo->res + (size_t)to * nd, old_res + (size_t)from * nd, sizeof(int32_t) * nd * (size_t)count);
    memcpy(bo->jac_pos + (size_t)to * nd * nd, old_jac + (size_t)from * nd * nd,
           sizeof(int64_t) * nd * nd * (size_t)count);
}

/* The residual rows and Jacobian positions of class cls's candidates: copied for the pairs that
 * were candidates at the last fill (both lists are sorted within a class), looked up for the
 * others. A lookup in a sparse pattern is a binary search per entry (over a thousand per pair
 * with friction), which made finding pairs cost more than the rest of a step. */
static void position_class(srd_sim *s, const srd_pairs *p, int cls, int32_t **res, int64_t **jac)
{
    class_set cs[3];
    int n = class_sets(cls, cs), first = p->filled_valid ? p->filled_group[cls] : 0, j = first;
    int old_end = p->filled_valid ? p->filled_group[cls + 1] : 0;
    for (int k = p->group[cls]; k < p->group[cls + 1]; k++) {
        while (j < old_end && by_pair(&p->filled[2 * j], &p->pair[2 * k]) < 0)
            j++;
        bool kept = j < old_end && by_pair(&p->filled[2 * j], &p->pair[2 * k]) == 0;
        for (int i = 0; i < n; i++) {
            int set = p->set[cs[i].set], per = cs[i].per, at = k - p->group[cls];
            if (set < 0)
                continue;
            if (kept)
                copy_positions(&s->kernels[set].batch, res[cs[i].set], jac[cs[i].set], per * (j - first), per * at,
                               per);
            else
                srd_batch_remap_range(&s->kernels[set].batch, &s->solver.sys, per * at, per);
        }
    }
}

/* Fills every set's instances; the positions of pairs that stay are copied from the last fill
 * (its arrays are set aside while the batches are sized anew). */
static void fill_batches(srd_sim *s, const srd_pairs *p)
{
    int32_t *res[SRD_PAIR_SETS] = { 0 };
    int64_t *jac[SRD_PAIR_SETS] = { 0 };
    for (int k = 0; k < SRD_PAIR_SETS; k++)
        if (p->set[k] >= 0) {
            srd_batch_owner *bo = &s->kernels[p->set[k]].batch;
            res[k] = bo->res;
            jac[k] = bo->jac_pos;
            bo->res = NULL;
            bo->jac_pos = NULL;
        }
    const int *g = p->group;
    fill_four(s, p, SRD_CLASS_EDGE_EDGE, g[SRD_CLASS_EDGE_EDGE], g[SRD_CLASS_EDGE_EDGE + 1]);
    fill_four(s, p, SRD_CLASS_NODE_TRI, g[SRD_CLASS_NODE_TRI], g[SRD_CLASS_NODE_TRI + 1]);
    fill_node_body(s, p, g[SRD_CLASS_NODE_BODY], g[SRD_CLASS_NODE_BODY + 1]);
    fill_edge_body(s, p, g[SRD_CLASS_EDGE_BODY], g[SRD_CLASS_EDGE_BODY + 1]);
    for (int c = 0; c < SRD_CLASSES; c++)
        position_class(s, p, c, res, jac);
    for (int k = 0; k < SRD_PAIR_SETS; k++) {
        free(res[k]);
        free(jac[k]);
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

/* The free-DOF couplings of nodes u and v (a body's node has its rotation DOFs too), appended
 * to out; returns how many. */
static int node_dofs(const srd_model *m, int u) { return m->node_body && m->node_body[u] >= 0 ? 6 : 3; }

static int node_couplings(const srd_sim *s, int u, int v, int *out)
{
    const int *fi = s->solver.sys.free_index;
    int n = 0, du = s->m->node_dof[u], dv = s->m->node_dof[v];
    for (int i = 0; i < node_dofs(s->m, u); i++)
        for (int j = 0; j < node_dofs(s->m, v); j++)
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
    int *dofs = srd_xcalloc(9 * 36 * (size_t)p->n_pairs + 1, 2 * sizeof(int)), n = 0;
    for (int k = 0; k < p->n_pairs; k++) {
        int a = p->pair[2 * k], b = p->pair[2 * k + 1];
        for (int i = 0; i < srd_parts_size(&p->parts, a); i++)
            for (int j = 0; j < srd_parts_size(&p->parts, b); j++) {
                int u = p->parts.node[3 * a + i], v = p->parts.node[3 * b + j];
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

/* The farthest any part moves from x0 to x (x0 NULL: the largest speed, x velocities). */
static double largest_move(const srd_pairs *p, const double *x0, const double *x)
{
    double most = 0;
    for (int k = 0; k < p->parts.n; k++)
        most = fmax(most, srd_parts_move(&p->parts, x0, x, k));
    return most;
}

/* The batches hold the same pairs as the last fill, in the same solver layout, and no state:
 * nothing to fill (resting contact keeps its pairs from step to step). */
static bool same_as_before(const srd_sim *s, const srd_pairs *p)
{
    for (int k = 0; k < SRD_PAIR_SETS; k++)
        if (p->set[k] >= 0 && s->kernels[p->set[k]].info.n_state)
            return false;
    return p->filled_valid && p->n_filled == p->n_pairs && p->filled_layout == s->solver.sys.nnz &&
           !memcmp(p->filled, p->pair, 2 * sizeof(int) * (size_t)p->n_pairs);
}

static void remember_pairs(srd_sim *s, srd_pairs *p)
{
    p->filled = srd_xrealloc(p->filled, (2 * (size_t)p->n_pairs + 1) * sizeof(int));
    memcpy(p->filled, p->pair, 2 * sizeof(int) * (size_t)p->n_pairs);
    p->n_filled = p->n_pairs;
    memcpy(p->filled_group, p->group, sizeof p->group);
    p->filled_valid = true;
    p->filled_layout = s->solver.sys.nnz;
}

/* The candidates in p->pair into the batches, unless they hold them already. */
static void fill_candidates(srd_sim *s, srd_pairs *p)
{
    if (same_as_before(s, p))
        return;
    fill_batches(s, p);
    add_couplings(s, p); /* when the pattern grows, every batch is remapped, these included */
    remember_pairs(s, p);
}

/* The candidates at q_ref with the current margin, into the batches. */
static void update(srd_sim *s, srd_pairs *p, double dt)
{
    double t0 = srd_seconds();
    double motion = dt > 0 ? 3 * largest_move(p, NULL, s->v0) * dt : 0;
    p->margin = fmax(fmax(p->margin_floor, 2 * p->last_move), fmax(p->boost, motion));
    broad_phase(p, p->q_ref);
    fill_candidates(s, p);
    p->seconds += srd_seconds() - t0;
}

int srd_pairs_held(const srd_pairs *p, const int **pairs)
{
    *pairs = p->filled;
    return p->filled_valid ? p->n_filled : 0;
}

void srd_pairs_hold(srd_sim *s, const int *pairs, int n)
{
    srd_pairs *p = s->pairs;
    while (p->cap_pairs < n)
        p->cap_pairs *= 2;
    p->pair = srd_xrealloc(p->pair, 2 * (size_t)p->cap_pairs * sizeof(int));
    p->n_pairs = n;
    if (n)
        memcpy(p->pair, pairs, 2 * sizeof(int) * (size_t)n);
    class_starts(p, p->group); /* the list came grouped by class (srd_pairs_held) */
    fill_candidates(s, p);
}

/* The object a part belongs to (-1: a rigid body). */
static int part_object(const srd_parts *ps, int k)
{
    const srd_model *m = ps->m;
    int l = ps->label[k];
    switch (ps->kind[k]) {
    case SRD_PART_EDGE: return m->edge_object[l];
    case SRD_PART_TRI: return m->tri_object[l];
    case SRD_PART_NODE: return m->node_object[l];
    default: return -1;
    }
}

bool srd_pairs_instance_objects(const srd_pairs *p, int kind, int i, int *a, int *b)
{
    for (int cls = 0; p->filled_valid && cls < SRD_CLASSES; cls++) {
        class_set cs[3];
        int n = class_sets(cls, cs);
        for (int j = 0; j < n; j++) {
            int k = cs[j].set == kind ? p->filled_group[cls] + i / cs[j].per : -1;
            if (k < 0 || k >= p->filled_group[cls + 1])
                continue;
            *a = part_object(&p->parts, p->filled[2 * k]);
            *b = part_object(&p->parts, p->filled[2 * k + 1]);
            return true;
        }
    }
    return false;
}

/* ---- checkpoints ---- */

/* The pairs the batches hold (the forces read after a step are the step's pairs') and the
 * margin's memory of the last steps (the next step's candidates). */
bool srd_pairs_save(const srd_pairs *p, FILE *f)
{
    int64_t n = p->filled_valid ? p->n_filled : 0;
    double margin[3] = { p->margin, p->boost, p->last_move };
    return fwrite(&n, sizeof n, 1, f) == 1 && fwrite(p->filled, 2 * sizeof(int), (size_t)n, f) == (size_t)n &&
           fwrite(margin, sizeof margin, 1, f) == 1;
}

/* Whether every part index of n pairs names one of the model's parts. */
static bool pairs_in_range(const srd_pairs *p, const int *pairs, int64_t n)
{
    for (int64_t k = 0; k < 2 * n; k++)
        if (pairs[k] < 0 || pairs[k] >= p->parts.n)
            return false;
    return true;
}

bool srd_pairs_load(srd_sim *s, FILE *f)
{
    srd_pairs *p = s->pairs;
    int64_t n;
    double margin[3];
    if (fread(&n, sizeof n, 1, f) != 1 || n < 0 || n > (int64_t)p->parts.n * p->parts.n)
        return false;
    int *pairs = srd_xcalloc(2 * (size_t)n + 1, sizeof(int));
    bool ok = fread(pairs, 2 * sizeof(int), (size_t)n, f) == (size_t)n && fread(margin, sizeof margin, 1, f) == 1 &&
              pairs_in_range(p, pairs, n);
    if (ok) {
        srd_pairs_hold(s, pairs, (int)n);
        p->margin = margin[0];
        p->boost = margin[1];
        p->last_move = margin[2];
    }
    free(pairs);
    return ok;
}

void srd_pairs_begin(srd_sim *s, const double *q_start, double dt)
{
    srd_pairs *p = s->pairs;
    size_t bytes = sizeof(double) * (size_t)s->m->n_dofs;
    memcpy(p->q_ref, q_start, bytes);
    memcpy(p->q_guess, s->q, bytes);
    update(s, p, dt);
}

void srd_pairs_retry(srd_sim *s, double dt)
{
    srd_pairs *p = s->pairs;
    memcpy(s->q, p->q_guess, sizeof(double) * (size_t)s->m->n_dofs);
    update(s, p, dt);
}

/* Whether candidate k's parts come within 1e-3 h of each other (or, with a body, of its
 * surface) on the straight path: conservative advancement, each advance as far as the
 * distance left allows. */
static bool pair_crosses(const srd_pairs *p, const double *q, int k)
{
    int a = p->pair[2 * k], b = p->pair[2 * k + 1];
    const srd_parts *ps = &p->parts;
    double speed = srd_parts_move(ps, p->q_ref, q, a) + srd_parts_move(ps, p->q_ref, q, b);
    double h = ps->radius[a] + ps->radius[b], floor_d = 1e-3 * h, tau = 0;
    for (int it = 0; it < 1000; it++) {
        double d = srd_parts_path_distance(ps, p->q_ref, q, a, b, tau);
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
    double moved = largest_move(p, p->q_ref, q);
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
        double h = p->parts.radius[a] + p->parts.radius[b], depth = h - srd_parts_distance(&p->parts, q, a, b);
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
    srd_parts_describe(&p->parts, p->overlap_prim[0], a, sizeof a);
    srd_parts_describe(&p->parts, p->overlap_prim[1], b, sizeof b);
    snprintf(buf, n,
             "at t = %.6g s %s and %s overlap by %.3g mm, more than half their contact thickness (%.3g mm)\n"
             "  hint: raise the contact `stiffness`, or shorten `dt` so that contact builds up over several steps",
             p->overlap_t, a, b, 1e3 * p->overlap_depth, 1e3 * p->overlap_h);
}

