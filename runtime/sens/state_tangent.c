/* state_tangent.c — derivatives of the step-start state update (see state_tangent.h). The
 * update of each instance follows srd_batch_advance_state operation by operation on dual
 * numbers: a value and its derivatives along up to MAX_SEEDS directions at once (vector forward
 * mode), so the result is the exact derivative of what the runtime computes. The forward
 * derivative takes one direction (the given tangents); the transpose takes one direction per
 * value an instance's update reads (its directors before the step and its edges' end nodes at
 * the step's start and end) and pulls the adjoint back along each. */
#include "sens/state_tangent.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "vec3.h"

enum { MAX_SEEDS = 48 };

typedef struct Dual {
    double v, d[MAX_SEEDS];
} Dual;

typedef struct Dual3 {
    double v[3], d[3][MAX_SEEDS];
} Dual3;

/* What the update of one set reads: the model, the set, the kernel's state layout; the
 * configurations; and the directions: one tangent (dq0, dq1, dS0), or seeds (a unit change of
 * one value each: state slot `slot`, or DOF `dof` of q0 (which 0) or q1 (which 1)). */
typedef struct Update {
    const srd_model       *m;
    const srd_elemset     *set;
    const srd_kernel_info *info;
    const double          *q0, *q1, *dq0, *dq1, *dS0;
    int                    n;  /* directions */
    int                    seed_slot[MAX_SEEDS], seed_dof[MAX_SEEDS], seed_which[MAX_SEEDS];
    int                    rank[64];
    int                    d1[64][3], d2[64][3], t[64][3], ref[64], tau[64][3];
    int                   *edge_tris;  /* with tau0: the (at most 2) triangles on each edge, or -1 */
} Update;

static Dual d_dot(const Update *u, const Dual3 *a, const Dual3 *b)
{
    Dual r;
    r.v = srd_dot3(a->v, b->v);
    for (int s = 0; s < u->n; s++)
        r.d[s] = a->d[0][s] * b->v[0] + a->d[1][s] * b->v[1] + a->d[2][s] * b->v[2] + a->v[0] * b->d[0][s] +
                 a->v[1] * b->d[1][s] + a->v[2] * b->d[2][s];
    return r;
}

static void d_cross(const Update *u, const Dual3 *a, const Dual3 *b, Dual3 *r)
{
    Dual3 c;
    srd_cross3(a->v, b->v, c.v);
    for (int s = 0; s < u->n; s++)
        for (int i = 0; i < 3; i++) {
            int j = (i + 1) % 3, k = (i + 2) % 3;
            c.d[i][s] = a->d[j][s] * b->v[k] + a->v[j] * b->d[k][s] - a->d[k][s] * b->v[j] - a->v[k] * b->d[j][s];
        }
    *r = c;
}

/* r = x a + b (r may be b). */
static void d_axpy(const Update *u, const Dual *x, const Dual3 *a, const Dual3 *b, Dual3 *r)
{
    for (int i = 0; i < 3; i++) {
        for (int s = 0; s < u->n; s++)
            r->d[i][s] = x->d[s] * a->v[i] + x->v * a->d[i][s] + b->d[i][s];
        r->v[i] = x->v * a->v[i] + b->v[i];
    }
}

static void d_normalize(const Update *u, Dual3 *a)
{
    double n = sqrt(srd_dot3(a->v, a->v));
    if (!(n > 0))
        return;
    for (int i = 0; i < 3; i++)
        a->v[i] /= n;
    for (int s = 0; s < u->n; s++) {
        double along = a->v[0] * a->d[0][s] + a->v[1] * a->d[1][s] + a->v[2] * a->d[2][s];
        for (int i = 0; i < 3; i++)
            a->d[i][s] = (a->d[i][s] - along * a->v[i]) / n;
    }
}

/* batch.c's transport: c u + b x u + (b.u / (1 + c)) b with b = t0 x t1, c = t0 . t1. */
static void d_transport(const Update *u, const Dual3 *x, const Dual3 *t0, const Dual3 *t1, Dual3 *r)
{
    Dual3 b, bx;
    d_cross(u, t0, t1, &b);
    Dual c = d_dot(u, t0, t1), bu = d_dot(u, &b, x), k;
    memset(&k, 0, sizeof k);
    if (c.v > -1 + 1e-12) {
        k.v = bu.v / (1 + c.v);
        for (int s = 0; s < u->n; s++)
            k.d[s] = bu.d[s] / (1 + c.v) - bu.v * c.d[s] / ((1 + c.v) * (1 + c.v));
    }
    d_cross(u, &b, x, &bx);
    d_axpy(u, &c, x, &bx, &bx);
    d_axpy(u, &k, &b, &bx, r);
}

static Dual d_atan2(const Update *u, const Dual *y, const Dual *x)
{
    Dual r;
    double r2 = x->v * x->v + y->v * y->v;
    r.v = atan2(y->v, x->v);
    for (int s = 0; s < u->n; s++)
        r.d[s] = r2 > 0 ? (x->v * y->d[s] - y->v * x->d[s]) / r2 : 0;
    return r;
}

static int state_slot(const srd_kernel_info *info, int kind, int param, int comp)
{
    for (int k = 0; k < info->n_state; k++)
        if (info->state_kind[k] == kind && info->state_param[k] == param && info->state_comp[k] == comp)
            return k;
    return -1;
}

/* The triangles on each edge, in the order batch.c's edge_taus meets them. */
static int *edge_triangles(const srd_model *m)
{
    int *tris = srd_xcalloc(2 * (size_t)m->n_edges + 1, sizeof(int));
    for (int e = 0; e < 2 * m->n_edges; e++)
        tris[e] = -1;
    for (int t = 0; t < m->n_tris; t++)
        for (int k = 0; k < 3; k++) {
            int e = m->tri_edges[3 * t + k];
            tris[2 * e + (tris[2 * e] >= 0)] = t;
        }
    return tris;
}

static void update_init(Update *u, const srd_model *m, int k, const srd_kernel_info *info)
{
    memset(u, 0, sizeof *u);
    u->m = m;
    u->set = &m->sets[k];
    u->info = info;
    int edges = 0;
    for (int p = 0; p < info->n_params && p < 64; p++) {
        u->rank[p] = info->param_is_node[p] ? -1 : edges++;
        for (int c = 0; c < 3; c++) {
            u->d1[p][c] = state_slot(info, SRD_STATE_D1, p, c);
            u->d2[p][c] = state_slot(info, SRD_STATE_D2, p, c);
            u->t[p][c] = state_slot(info, SRD_STATE_TANGENT, p, c);
        }
        u->ref[p] = state_slot(info, SRD_STATE_REF_TWIST, p, 0);
        for (int c = 0; c < 3; c++)
            u->tau[p][c] = state_slot(info, SRD_STATE_TAU0, p, c);
        if (u->tau[p][0] >= 0 && !u->edge_tris)
            u->edge_tris = edge_triangles(m);
    }
}

/* Node `node` of configuration `which` (0: the step's start, 1: its end) and its derivatives. */
static void node_position(const Update *u, int which, int node, Dual3 *x)
{
    int d = u->m->node_dof[node];
    const double *q = which ? u->q1 : u->q0, *dq = which ? u->dq1 : u->dq0;
    for (int c = 0; c < 3; c++) {
        x->v[c] = q[d + c];
        for (int s = 0; s < u->n; s++)
            x->d[c][s] = dq ? dq[d + c] : u->seed_which[s] == which && u->seed_dof[s] == d + c;
    }
}

static void edge_tangent(const Update *u, int which, int e, Dual3 *t)
{
    Dual3 a;
    node_position(u, which, u->m->edge_nodes[2 * e], &a);
    node_position(u, which, u->m->edge_nodes[2 * e + 1], t);
    for (int c = 0; c < 3; c++) {
        t->v[c] -= a.v[c];
        for (int s = 0; s < u->n; s++)
            t->d[c][s] -= a.d[c][s];
    }
    d_normalize(u, t);
}

static int edge_of(const Update *u, int i, int p) { return u->set->edges[i * u->set->n_edge + u->rank[p]]; }

/* A director before the step and its derivatives (the tangent's, or the seeds of its slots). */
static void read_director(const Update *u, const int *slot, const double *st, const double *dst, Dual3 *r)
{
    for (int c = 0; c < 3; c++) {
        r->v[c] = st[slot[c]];
        for (int s = 0; s < u->n; s++)
            r->d[c][s] = dst ? dst[slot[c]] : u->seed_slot[s] == slot[c];
    }
}

/* Writes the derivatives of x into out (n_state values per direction, direction-major). */
static void write3(const Update *u, const int *slot, const Dual3 *x, double *out)
{
    if (slot[0] >= 0)
        for (int s = 0; s < u->n; s++)
            for (int c = 0; c < 3; c++)
                out[(size_t)s * u->info->n_state + slot[c]] = x->d[c][s];
}

/* batch.c's tau0 of edge e at the step's end: n_avg x e^, n_avg the unit mean of the unit
 * normals of the triangles on it. */
static void edge_tau(const Update *u, int e, Dual3 *tau)
{
    Dual3 n, x[3], a, b, tn;
    memset(&n, 0, sizeof n);
    int count = 0;
    for (int j = 0; j < 2; j++) {
        int t = u->edge_tris[2 * e + j];
        if (t < 0)
            continue;
        for (int k = 0; k < 3; k++)
            node_position(u, 1, u->m->tri_nodes[3 * t + k], &x[k]);
        for (int c = 0; c < 3; c++) {
            a.v[c] = x[1].v[c] - x[0].v[c], b.v[c] = x[2].v[c] - x[1].v[c];
            for (int s = 0; s < u->n; s++)
                a.d[c][s] = x[1].d[c][s] - x[0].d[c][s], b.d[c][s] = x[2].d[c][s] - x[1].d[c][s];
        }
        d_cross(u, &a, &b, &tn);
        d_normalize(u, &tn);
        Dual one = { 1, { 0 } };
        d_axpy(u, &one, &tn, &n, &n);
        count++;
    }
    for (int c = 0; c < 3; c++) {
        n.v[c] /= count > 0 ? count : 1;
        for (int s = 0; s < u->n; s++)
            n.d[c][s] /= count > 0 ? count : 1;
    }
    d_normalize(u, &n);
    Dual3 along;
    edge_tangent(u, 1, e, &along);
    d_cross(u, &n, &along, tau);
}

/* An edge's director carried to its new tangent, made normal to it and unit (batch.c). */
static void carried_director(const Update *u, const Dual3 *d, const Dual3 *told, const Dual3 *tnew, Dual3 *r)
{
    d_transport(u, d, told, tnew, r);
    Dual along = d_dot(u, r, tnew);
    along.v = -along.v;
    for (int s = 0; s < u->n; s++)
        along.d[s] = -along.d[s];
    d_axpy(u, &along, tnew, r, r);
    d_normalize(u, r);
}

/* The reference twist of edge param p against the stencil edge q before it, at the end. */
static Dual ref_twist(const Update *u, int i, int q, int p, const Dual3 *a0, const Dual3 *a1)
{
    double s0 = u->set->signs[i * u->set->n_edge + u->rank[q]], s1 = u->set->signs[i * u->set->n_edge + u->rank[p]];
    Dual3 t0, t1, v, w;
    edge_tangent(u, 1, edge_of(u, i, q), &t0);
    edge_tangent(u, 1, edge_of(u, i, p), &t1);
    for (int c = 0; c < 3; c++) {
        t0.v[c] *= s0, t1.v[c] *= s1;
        for (int s = 0; s < u->n; s++)
            t0.d[c][s] *= s0, t1.d[c][s] *= s1;
    }
    d_transport(u, a0, &t0, &t1, &v);
    d_cross(u, &v, a1, &w);
    Dual y = d_dot(u, &w, &t1), x = d_dot(u, &v, a1);
    return d_atan2(u, &y, &x);
}

/* The edge param before p in the stencil whose reference twist p's update measures, or -1. */
static int twist_partner(const Update *u, int p)
{
    int q = p - 1;
    while (q >= 0 && u->rank[q] < 0)
        q--;
    if (u->ref[p] < 0 || u->rank[p] <= 0 || q < 0 || u->d1[q][0] < 0 || u->d1[p][0] < 0)
        return -1;
    return q;
}

/* Edge param p's new values (director, second director, tangent, tau0) and their derivatives into
 * out; its new director in *d1 (zero when it has none). */
static void edge_update(const Update *u, int i, int p, const double *st, const double *dst, double *out, Dual3 *d1)
{
    int e = edge_of(u, i, p);
    Dual3 told, tnew, d, d2;
    edge_tangent(u, 0, e, &told);
    edge_tangent(u, 1, e, &tnew);
    if (u->d1[p][0] < 0) { /* no director: the second one is t x 0 */
        memset(d1->v, 0, sizeof d1->v);
        for (int c = 0; c < 3; c++)
            memset(d1->d[c], 0, sizeof(double) * (size_t)u->n);
    } else {
        read_director(u, u->d1[p], st, dst, &d);
        carried_director(u, &d, &told, &tnew, d1);
    }
    write3(u, u->d1[p], d1, out);
    d_cross(u, &tnew, d1, &d2);
    write3(u, u->d2[p], &d2, out);
    write3(u, u->t[p], &tnew, out);
    if (u->tau[p][0] >= 0 && u->edge_tris[2 * e] >= 0) { /* an edge of no triangle keeps its tau0 */
        Dual3 tau;
        edge_tau(u, e, &tau);
        write3(u, u->tau[p], &tau, out);
    }
}

/* The derivatives of instance i's new state along the u->n directions, into out (direction-
 * major); values the update leaves as they are take their own derivative (dst, or the seeds). */
static void instance_derivative(const Update *u, int i, const double *st, const double *dst, double *out)
{
    int ns = u->info->n_state;
    for (int s = 0; s < u->n; s++)
        for (int j = 0; j < ns; j++)
            out[(size_t)s * ns + j] = dst ? dst[j] : u->seed_slot[s] == j;
    Dual3 *d1 = srd_xrealloc(NULL, sizeof *d1 * (size_t)(u->info->n_params + 1)); /* only edges' are set */
    for (int p = 0; p < u->info->n_params && p < 64; p++)
        if (u->rank[p] >= 0)
            edge_update(u, i, p, st, dst, out, &d1[p]);
    for (int p = 0; p < u->info->n_params && p < 64; p++) {
        int q = twist_partner(u, p);
        if (q < 0)
            continue;
        Dual a = ref_twist(u, i, q, p, &d1[q], &d1[p]); /* wrap() is flat: d(new) = d(angle) */
        for (int s = 0; s < u->n; s++)
            out[(size_t)s * ns + u->ref[p]] = a.d[s];
    }
    free(d1);
}

bool srd_state_tangent_supported(const srd_kernel_info *info)
{
    return info->n_params <= 64;
}

void srd_state_tangent(const srd_model *m, int k, const srd_kernel_info *info, const double *S0, const double *q0,
                       const double *q1, const double *dS0, const double *dq0, const double *dq1, double *dS1)
{
    Update u;
    update_init(&u, m, k, info);
    u.q0 = q0, u.q1 = q1, u.dq0 = dq0, u.dq1 = dq1, u.n = 1;
    size_t ns = (size_t)info->n_state;
    for (int i = 0; i < u.set->n; i++)
        instance_derivative(&u, i, &S0[i * ns], &dS0[i * ns], &dS1[i * ns]);
    free(u.edge_tris);
}

/* Seeds for a node's DOFs at the start and at the end, unless they are among seeds[first, n). */
static int add_node_seeds(const Update *u, int node, int first, int n, int *slot, int *dof, int *which)
{
    for (int c = 0; c < 3; c++) {
        int d = u->m->node_dof[node] + c, seen = 0;
        for (int j = first; j < n; j += 2)
            seen |= dof[j] == d;
        for (int w = 0; w < 2 && !seen; w++)
            slot[n] = -1, dof[n] = d, which[n++] = w;
    }
    return n;
}

/* The values instance i's update reads, as seeds: its directors' slots, then the DOFs of its
 * edges' end nodes at the start and at the end; returns their count. */
static int instance_seeds(const Update *u, int i, int *slot, int *dof, int *which)
{
    int n = 0;
    for (int j = 0; j < u->info->n_state; j++)
        if (u->info->state_kind[j] == SRD_STATE_D1)
            slot[n] = j, dof[n] = -1, which[n++] = -1;
    int first = n;
    for (int p = 0; p < u->info->n_params && p < 64; p++) {
        if (u->rank[p] < 0)
            continue;
        int e = edge_of(u, i, p), nodes[8], m = 0;
        nodes[m++] = u->m->edge_nodes[2 * e], nodes[m++] = u->m->edge_nodes[2 * e + 1];
        for (int j = 0; j < 2 && u->tau[p][0] >= 0; j++) /* tau0 reads the triangles on the edge */
            for (int k = 0; k < 3 && u->edge_tris[2 * e + j] >= 0; k++)
                nodes[m++] = u->m->tri_nodes[3 * u->edge_tris[2 * e + j] + k];
        for (int v = 0; v < m; v++)
            n = add_node_seeds(u, nodes[v], first, n, slot, dof, which);
    }
    return n;
}

/* Pulls lS1 (instance i's) back along seeds [from, from + u->n): adds into lS0_i, lq0, lq1. */
static void pull_seeds(Update *u, int i, const double *st, const double *lS1, const int *slot, const int *dof,
                       const int *which, int from, double *lS0, double *lq0, double *lq1, double *out)
{
    int ns = u->info->n_state;
    for (int s = 0; s < u->n; s++)
        u->seed_slot[s] = slot[from + s], u->seed_dof[s] = dof[from + s], u->seed_which[s] = which[from + s];
    instance_derivative(u, i, st, NULL, out);
    for (int s = 0; s < u->n; s++) {
        double sum = 0;
        for (int r = 0; r < ns; r++)
            sum += lS1[r] * out[(size_t)s * ns + r];
        int j = from + s;
        if (slot[j] >= 0)
            lS0[slot[j]] += sum;
        else
            (which[j] ? lq1 : lq0)[dof[j]] += sum;
    }
}

/* The values the update keeps as they were (not directors, not rewritten from the positions:
 * tangents, second directors and measured reference twists) pass their adjoint through. */
static void pass_kept(const Update *u, int i, const double *lS1, double *lS0)
{
    int ns = u->info->n_state;
    unsigned char *rewritten = srd_xcalloc((size_t)ns + 1, 1);
    for (int p = 0; p < u->info->n_params && p < 64; p++)
        for (int c = 0; c < 3 && u->rank[p] >= 0; c++) {
            for (int k = 0; k < 4; k++) {
                const int *slot = k == 0 ? u->d1[p] : k == 1 ? u->d2[p] : k == 2 ? u->t[p] : u->tau[p];
                if (slot[c] >= 0 && (k < 3 || u->edge_tris[2 * edge_of(u, i, p)] >= 0))
                    rewritten[slot[c]] = 1;
            }
            if (c == 0 && twist_partner(u, p) >= 0)
                rewritten[u->ref[p]] = 1;
        }
    for (int j = 0; j < ns; j++)
        if (!rewritten[j])
            lS0[j] += lS1[j];
    free(rewritten);
}

void srd_state_adjoint(const srd_model *m, int k, const srd_kernel_info *info, const double *S0, const double *q0,
                       const double *q1, const double *lS1, double *lS0, double *lq0, double *lq1)
{
    Update u;
    update_init(&u, m, k, info);
    u.q0 = q0, u.q1 = q1;
    int ns = info->n_state, cap = ns + 8 * 3 * 64 * 2 + 1;
    int *slot = srd_xcalloc((size_t)cap, sizeof(int)), *dof = srd_xcalloc((size_t)cap, sizeof(int));
    int *which = srd_xcalloc((size_t)cap, sizeof(int));
    double *out = srd_xcalloc((size_t)MAX_SEEDS * (size_t)ns + 1, sizeof(double));
    for (int i = 0; i < u.set->n; i++) {
        const double *st = &S0[(size_t)i * ns], *l = &lS1[(size_t)i * ns];
        pass_kept(&u, i, l, &lS0[(size_t)i * ns]);
        int n = instance_seeds(&u, i, slot, dof, which);
        for (int from = 0; from < n; from += MAX_SEEDS) {
            u.n = n - from < MAX_SEEDS ? n - from : MAX_SEEDS;
            pull_seeds(&u, i, st, l, slot, dof, which, from, &lS0[(size_t)i * ns], lq0, lq1, out);
        }
    }
    free(slot), free(dof), free(which), free(out), free(u.edge_tris);
}
