/* state_tangent.c — derivatives of the step-start state update (see state_tangent.h). The
 * forward derivative follows srd_batch_advance_state operation by operation on dual numbers
 * (a value and its derivative along one tangent), so it is the exact derivative of what the
 * runtime computes; the transpose is assembled per instance from forward derivatives along the
 * unit directions of the few values an instance's update reads. */
#include "sens/state_tangent.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "vec3.h"

typedef struct Dual {
    double v, d;
} Dual;

typedef struct Dual3 {
    double v[3], d[3];
} Dual3;

static Dual d_dot(Dual3 a, Dual3 b)
{
    return (Dual){ srd_dot3(a.v, b.v), srd_dot3(a.d, b.v) + srd_dot3(a.v, b.d) };
}

static Dual3 d_cross(Dual3 a, Dual3 b)
{
    Dual3 r;
    double x[3], y[3];
    srd_cross3(a.v, b.v, r.v);
    srd_cross3(a.d, b.v, x);
    srd_cross3(a.v, b.d, y);
    for (int c = 0; c < 3; c++)
        r.d[c] = x[c] + y[c];
    return r;
}

/* s a + b */
static Dual3 d_axpy(Dual s, Dual3 a, Dual3 b)
{
    Dual3 r;
    for (int c = 0; c < 3; c++) {
        r.v[c] = s.v * a.v[c] + b.v[c];
        r.d[c] = s.d * a.v[c] + s.v * a.d[c] + b.d[c];
    }
    return r;
}

static Dual3 d_normalize(Dual3 a)
{
    double n = sqrt(srd_dot3(a.v, a.v));
    if (!(n > 0))
        return a;
    Dual3 r;
    for (int c = 0; c < 3; c++)
        r.v[c] = a.v[c] / n;
    double along = srd_dot3(r.v, a.d);
    for (int c = 0; c < 3; c++)
        r.d[c] = (a.d[c] - along * r.v[c]) / n;
    return r;
}

/* batch.c's transport: c u + b x u + (b.u / (1 + c)) b with b = t0 x t1, c = t0 . t1. */
static Dual3 d_transport(Dual3 u, Dual3 t0, Dual3 t1)
{
    Dual3 b = d_cross(t0, t1);
    Dual c = d_dot(t0, t1), bu = d_dot(b, u);
    Dual k = { 0, 0 };
    if (c.v > -1 + 1e-12)
        k = (Dual){ bu.v / (1 + c.v), bu.d / (1 + c.v) - bu.v * c.d / ((1 + c.v) * (1 + c.v)) };
    Dual3 r = d_cross(b, u);
    r = d_axpy(c, u, r);
    return d_axpy(k, b, r);
}

static Dual d_atan2(Dual y, Dual x)
{
    double r2 = x.v * x.v + y.v * y.v;
    return (Dual){ atan2(y.v, x.v), r2 > 0 ? (x.v * y.d - y.v * x.d) / r2 : 0 };
}

/* What the update of one set reads: the model, the set, the kernel's state layout. */
typedef struct Update {
    const srd_model       *m;
    const srd_elemset     *set;
    const srd_kernel_info *info;
    const double          *q0, *q1, *dq0, *dq1;
    int                    rank[64];
    int                    d1[64][3], d2[64][3], t[64][3], ref[64];
} Update;

static int state_slot(const srd_kernel_info *info, int kind, int param, int comp)
{
    for (int k = 0; k < info->n_state; k++)
        if (info->state_kind[k] == kind && info->state_param[k] == param && info->state_comp[k] == comp)
            return k;
    return -1;
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
    }
}

static Dual3 node_position(const Update *u, const double *q, const double *dq, int node)
{
    Dual3 x;
    int d = u->m->node_dof[node];
    for (int c = 0; c < 3; c++) {
        x.v[c] = q[d + c];
        x.d[c] = dq[d + c];
    }
    return x;
}

static Dual3 edge_tangent(const Update *u, const double *q, const double *dq, int e)
{
    Dual3 a = node_position(u, q, dq, u->m->edge_nodes[2 * e]), b = node_position(u, q, dq, u->m->edge_nodes[2 * e + 1]);
    Dual3 r;
    for (int c = 0; c < 3; c++) {
        r.v[c] = b.v[c] - a.v[c];
        r.d[c] = b.d[c] - a.d[c];
    }
    return d_normalize(r);
}

static int edge_of(const Update *u, int i, int p) { return u->set->edges[i * u->set->n_edge + u->rank[p]]; }

static Dual3 read3(const int *slot, const double *st, const double *dst)
{
    Dual3 r = { { 0, 0, 0 }, { 0, 0, 0 } };
    if (slot[0] >= 0)
        for (int c = 0; c < 3; c++) {
            r.v[c] = st[slot[c]];
            r.d[c] = dst[slot[c]];
        }
    return r;
}

static void write3(const int *slot, Dual3 x, double *dst)
{
    if (slot[0] >= 0)
        for (int c = 0; c < 3; c++)
            dst[slot[c]] = x.d[c];
}

/* An edge's director carried to its new tangent, made normal to it and unit (batch.c). */
static Dual3 carried_director(Dual3 d, Dual3 told, Dual3 tnew)
{
    Dual3 r = d_transport(d, told, tnew);
    Dual along = d_dot(r, tnew);
    return d_normalize(d_axpy((Dual){ -along.v, -along.d }, tnew, r));
}

/* The reference twist of edge param p against the stencil edge q before it, at the end. */
static Dual ref_twist(const Update *u, int i, int q, int p, Dual3 a0, Dual3 a1)
{
    int r0 = u->rank[q], r1 = u->rank[p];
    double s0 = u->set->signs[i * u->set->n_edge + r0], s1 = u->set->signs[i * u->set->n_edge + r1];
    Dual3 t0 = edge_tangent(u, u->q1, u->dq1, edge_of(u, i, q)), t1 = edge_tangent(u, u->q1, u->dq1, edge_of(u, i, p));
    for (int c = 0; c < 3; c++) {
        t0.v[c] *= s0;
        t0.d[c] *= s0;
        t1.v[c] *= s1;
        t1.d[c] *= s1;
    }
    Dual3 v = d_transport(a0, t0, t1);
    return d_atan2(d_dot(d_cross(v, a1), t1), d_dot(v, a1));
}

/* dst1 of instance i: the frames' update, then the reference twists from the new directors. */
static void instance_tangent(const Update *u, int i, const double *st, const double *dst, double *dst1)
{
    int ns = u->info->n_state;
    memcpy(dst1, dst, sizeof(double) * (size_t)ns); /* values the update leaves as they are */
    Dual3 d1[64];
    for (int p = 0; p < u->info->n_params && p < 64; p++) {
        if (u->rank[p] < 0)
            continue;
        int e = edge_of(u, i, p);
        Dual3 told = edge_tangent(u, u->q0, u->dq0, e), tnew = edge_tangent(u, u->q1, u->dq1, e);
        d1[p] = (Dual3){ { 0, 0, 0 }, { 0, 0, 0 } };
        if (u->d1[p][0] >= 0)
            d1[p] = carried_director(read3(u->d1[p], st, dst), told, tnew);
        write3(u->d1[p], d1[p], dst1);
        write3(u->d2[p], d_cross(tnew, d1[p]), dst1);
        write3(u->t[p], tnew, dst1);
    }
    for (int p = 0; p < u->info->n_params && p < 64; p++) {
        int q = p - 1;
        while (q >= 0 && u->rank[q] < 0)
            q--;
        if (u->ref[p] < 0 || u->rank[p] <= 0 || q < 0 || u->d1[q][0] < 0 || u->d1[p][0] < 0)
            continue;
        dst1[u->ref[p]] = ref_twist(u, i, q, p, d1[q], d1[p]).d; /* wrap() is flat: d(new) = d(angle) */
    }
}

bool srd_state_tangent_supported(const srd_kernel_info *info)
{
    for (int k = 0; k < info->n_state; k++)
        if (info->state_kind[k] == SRD_STATE_TAU0 || info->state_kind[k] == SRD_STATE_FRAME)
            return false;
    return info->n_params <= 64;
}

void srd_state_tangent(const srd_model *m, int k, const srd_kernel_info *info, const double *S0, const double *q0,
                       const double *q1, const double *dS0, const double *dq0, const double *dq1, double *dS1)
{
    Update u;
    update_init(&u, m, k, info);
    u.q0 = q0, u.q1 = q1, u.dq0 = dq0, u.dq1 = dq1;
    size_t ns = (size_t)info->n_state;
    for (int i = 0; i < u.set->n; i++)
        instance_tangent(&u, i, &S0[i * ns], &dS0[i * ns], &dS1[i * ns]);
}

/* The DOFs instance i's update reads: its edges' end nodes' positions; returns their count. */
static int instance_dofs(const Update *u, int i, int *dofs)
{
    int n = 0;
    for (int p = 0; p < u->info->n_params && p < 64; p++) {
        if (u->rank[p] < 0)
            continue;
        int e = edge_of(u, i, p);
        for (int end = 0; end < 2; end++)
            for (int c = 0; c < 3; c++) {
                int d = u->m->node_dof[u->m->edge_nodes[2 * e + end]] + c, seen = 0;
                for (int j = 0; j < n; j++)
                    seen |= dofs[j] == d;
                if (!seen)
                    dofs[n++] = d;
            }
    }
    return n;
}

/* lS1_i . (the derivative along the seeded direction). */
static double pulled(const Update *u, int i, const double *st, const double *dst, const double *lS1, double *tmp)
{
    instance_tangent(u, i, st, dst, tmp);
    double s = 0;
    for (int r = 0; r < u->info->n_state; r++)
        s += lS1[r] * tmp[r];
    return s;
}

/* Seeds each DOF the instance reads, in q0 (which = 0) or q1 (which = 1), with a unit tangent. */
static void pull_dofs(Update *u, int i, const int *dofs, int n, const double *st, const double *zero_s,
                      const double *lS1, double *seed, double *tmp, double *lq0, double *lq1)
{
    for (int which = 0; which < 2; which++)
        for (int j = 0; j < n; j++) {
            seed[dofs[j]] = 1;
            u->dq0 = which == 0 ? seed : seed + u->m->n_dofs;
            u->dq1 = which == 1 ? seed : seed + u->m->n_dofs;
            double s = pulled(u, i, st, zero_s, lS1, tmp);
            seed[dofs[j]] = 0;
            (which == 0 ? lq0 : lq1)[dofs[j]] += s;
        }
}

void srd_state_adjoint(const srd_model *m, int k, const srd_kernel_info *info, const double *S0, const double *q0,
                       const double *q1, const double *lS1, double *lS0, double *lq0, double *lq1)
{
    Update u;
    update_init(&u, m, k, info);
    u.q0 = q0, u.q1 = q1;
    int ns = info->n_state;
    double *seed = srd_xcalloc(2 * (size_t)m->n_dofs + 1, sizeof(double)); /* a unit DOF, then zeros */
    double *dst = srd_xcalloc((size_t)ns + 1, sizeof(double)), *tmp = srd_xcalloc((size_t)ns + 1, sizeof(double));
    int *dofs = srd_xcalloc(6 * 64 + 1, sizeof(int));
    for (int i = 0; i < u.set->n; i++) {
        const double *st = &S0[(size_t)i * ns], *l = &lS1[(size_t)i * ns];
        u.dq0 = u.dq1 = seed + m->n_dofs;
        for (int j = 0; j < ns; j++) {
            dst[j] = 1;
            lS0[(size_t)i * ns + j] += pulled(&u, i, st, dst, l, tmp);
            dst[j] = 0;
        }
        int n = instance_dofs(&u, i, dofs);
        pull_dofs(&u, i, dofs, n, st, dst, l, seed, tmp, lq0, lq1);
    }
    free(seed);
    free(dst);
    free(tmp);
    free(dofs);
}
