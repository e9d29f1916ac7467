/* batch.c — index tables that let generated kernels gather DOFs and scatter their residual
 * and Jacobian entries without knowing how the system is stored. */
#include "batch.h"
#include "vec3.h"
#include "alloc.h"
#include "natural.h"
#include "pattern.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest distance below and above the diagonal among the free DOFs of any element. */
static void measure_band(srd_system *s, const srd_model *m)
{
    s->kl = s->ku = 0;
    int dofs[SRD_STENCIL_MAX];
    for (int k = 0; k < m->n_sets; k++)
        for (int i = 0; i < m->sets[k].n; i++) {
            int n = srd_instance_free_dofs(s, m, k, i, dofs), lo = 1 << 30, hi = -1;
            for (int j = 0; j < n; j++) {
                lo = dofs[j] < lo ? dofs[j] : lo;
                hi = dofs[j] > hi ? dofs[j] : hi;
            }
            if (hi >= 0 && hi - lo > s->kl)
                s->kl = s->ku = hi - lo;
        }
}

void srd_system_init(srd_system *s, const srd_model *m, srd_jac_layout layout)
{
    srd_system_init_fixed(s, m, m->dof_fixed, layout);
}

void srd_system_init_fixed(srd_system *s, const srd_model *m, const unsigned char *fixed, srd_jac_layout layout)
{
    memset(s, 0, sizeof *s);
    s->layout = layout;
    s->free_index = srd_xcalloc((size_t)m->n_dofs, sizeof(int));
    for (int d = 0; d < m->n_dofs; d++)
        s->free_index[d] = fixed[d] ? -1 : s->n_free++;
    measure_band(s, m);
    switch (layout) {
    case SRD_JAC_DENSE: s->ldab = s->n_free; break;
    case SRD_JAC_BAND: s->ldab = 2LL * s->kl + s->ku + 1; break;
    case SRD_JAC_BAND_SYM: s->ldab = s->ku + 1LL; break;
    case SRD_JAC_CSC: srd_pattern_build(s, m); break;
    }
}

void srd_system_free(srd_system *s)
{
    free(s->free_index);
    free(s->col_start);
    free(s->row_index);
    memset(s, 0, sizeof *s);
}

long long srd_system_position(const srd_system *s, int row, int col)
{
    if (row < 0 || col < 0)
        return -1;
    switch (s->layout) {
    case SRD_JAC_DENSE: return (long long)col * s->n_free + row;
    case SRD_JAC_BAND:
        if (row - col > s->kl || col - row > s->ku)
            return -1;
        return (long long)col * s->ldab + s->kl + s->ku + row - col;
    case SRD_JAC_BAND_SYM:
        if (row > col || col - row > s->ku)
            return -1; /* the lower triangle is implied */
        return (long long)col * s->ldab + s->ku + row - col;
    case SRD_JAC_CSC: return srd_pattern_find(s, row, col);
    }
    return -1;
}

long long srd_system_storage(const srd_system *s)
{
    return s->layout == SRD_JAC_CSC ? s->nnz : (long long)s->n_free * s->ldab;
}

size_t srd_system_grad_len(const srd_system *s) { return (size_t)s->n_free + SRD_SCRATCH; }

size_t srd_system_jac_len(const srd_system *s) { return (size_t)srd_system_storage(s) + SRD_SCRATCH; }

/* Model DOF of stencil DOF k of instance i, or -1 (an edge without that DOF). */
static int stencil_model_dof(const srd_model *m, const srd_elemset *set, const srd_kernel_info *info, int i, int k,
                             const int *rank)
{
    int p = info->dof_param[k], comp = info->dof_comp[k];
    if (comp >= SRD_COMP_LAMBDA)
        return set->n_lambda ? set->lambda_dof[i] + comp - SRD_COMP_LAMBDA : -1;
    if (info->param_is_node[p] && comp >= SRD_COMP_ROT) {
        int node = set->nodes[i * set->n_node + rank[p]];
        return m->node_body && m->node_body[node] >= 0 ? m->node_dof[node] + 3 + comp - SRD_COMP_ROT : -1;
    }
    if (info->param_is_node[p])
        return m->node_dof[set->nodes[i * set->n_node + rank[p]]] + comp;
    int e = set->edges[i * set->n_edge + rank[p]];
    return comp == SRD_COMP_TWIST ? m->edge_twist[e] : m->edge_xi[e];
}

/* ---- reference frames ---- */

static void normalize3(double *v)
{
    double n = sqrt(srd_dot3(v, v));
    if (n > 0)
        for (int c = 0; c < 3; c++)
            v[c] /= n;
}

static void edge_tangent(const srd_model *m, int e, double *t)
{
    srd_sub3(&m->x0[3 * m->edge_nodes[2 * e + 1]], &m->x0[3 * m->edge_nodes[2 * e]], t);
    normalize3(t);
}

/* Parallel transport of u from unit tangent t0 to unit tangent t1 (rotation about t0 x t1). */
static void transport(const double *u, const double *t0, const double *t1, double *r)
{
    double b[3], bu[3];
    srd_cross3(t0, t1, b);
    double c = srd_dot3(t0, t1);
    srd_cross3(b, u, bu);
    double k = c > -1 + 1e-12 ? srd_dot3(b, u) / (1 + c) : 0;
    for (int i = 0; i < 3; i++)
        r[i] = c * u[i] + bu[i] + k * b[i];
}

/* The first material director of a rod's first edge: +z projected on the plane normal to t
 * (+x when the edge is nearly vertical). So for a rod along x, d1 = z and d2 = t x d1 = -y:
 * curvature component 1 bends in the x-z plane, and a planar model's frames stay in it. */
static void some_normal(const double *t, double *d)
{
    double up[3] = { 0, 0, 1 };
    if (fabs(t[2]) > 0.99) {
        up[0] = 1;
        up[2] = 0;
    }
    double along = srd_dot3(up, t);
    for (int c = 0; c < 3; c++)
        d[c] = up[c] - along * t[c];
    normalize3(d);
}

/* In a planar model: t turned a quarter turn in the x-z plane, from +x toward +z. Positive
 * curvature component 1 then turns every rod the same way, from +x toward +z, whichever way
 * it is drawn. */
static void planar_normal(const double *t, double *d)
{
    d[0] = -t[2];
    d[1] = 0;
    d[2] = t[0];
    normalize3(d);
}

/* Reference director d1 of every edge (in its own orientation) at the reference
 * configuration: along each rod, space-parallel transported from its first edge, so the
 * reference twist vanishes along an untwisted rod. Other frame edges get any normal. */
static double *initial_directors(const srd_model *m)
{
    double *d1 = srd_xcalloc((size_t)m->n_edges * 3 + 1, sizeof(double));
    for (int e = 0; e < m->n_edges; e++) {
        double t[3];
        edge_tangent(m, e, t);
        (m->planar ? planar_normal : some_normal)(t, &d1[3 * e]);
    }
    for (int o = 0; o < m->n_objects; o++) {
        const srd_object *ob = &m->objects[o];
        if (ob->kind != SRD_OBJ_ROD)
            continue;
        for (int k = 1; k < ob->n_edges; k++) {
            int prev = ob->first_edge + k - 1, e = ob->first_edge + k;
            double tp[3], t[3];
            edge_tangent(m, prev, tp);
            edge_tangent(m, e, t);
            transport(&d1[3 * prev], tp, t, &d1[3 * e]);
            /* keep it exactly normal and unit despite rounding */
            double along = srd_dot3(&d1[3 * e], t);
            for (int c = 0; c < 3; c++)
                d1[3 * e + c] -= along * t[c];
            normalize3(&d1[3 * e]);
        }
    }
    return d1;
}

/* Signed angle from u to v about the unit axis t. */
static double signed_angle(const double *u, const double *v, const double *t)
{
    double w[3];
    srd_cross3(u, v, w);
    return atan2(srd_dot3(w, t), srd_dot3(u, v));
}

/* Reference twist between the previous stencil edge (rank r-1) and edge param p, in the
 * stencil's orientation, at the reference configuration. */
static double initial_ref_twist(const srd_model *m, const srd_elemset *set, int i, int r, const double *d1)
{
    if (r <= 0)
        return 0;
    int e0 = set->edges[i * set->n_edge + r - 1], e1 = set->edges[i * set->n_edge + r];
    double s0 = set->signs[i * set->n_edge + r - 1], s1 = set->signs[i * set->n_edge + r];
    double t0[3], t1[3], u[3];
    edge_tangent(m, e0, t0);
    edge_tangent(m, e1, t1);
    for (int c = 0; c < 3; c++) {
        t0[c] *= s0;
        t1[c] *= s1;
    }
    transport(&d1[3 * e0], t0, t1, u);
    return signed_angle(u, &d1[3 * e1], t1);
}

/* tau = n_avg x e^ of every edge at the configuration x (MAT-DiSMech §3.3.2, Fig. 2f): n_avg
 * the unit vector along the mean of the unit normals of the triangles on the edge (one on a
 * boundary), e^ the unit edge in its own direction. Zero for edges of no triangle. */
static double *edge_taus(const srd_model *m, const double *x)
{
    double *navg = srd_xcalloc((size_t)m->n_edges * 3 + 1, sizeof(double));
    double *tau = srd_xcalloc((size_t)m->n_edges * 3 + 1, sizeof(double));
    int *count = srd_xcalloc((size_t)m->n_edges + 1, sizeof(int));
    for (int t = 0; t < m->n_tris; t++) {
        const int *v = &m->tri_nodes[3 * t];
        double a[3], b[3], n[3];
        srd_sub3(&x[3 * v[1]], &x[3 * v[0]], a);
        srd_sub3(&x[3 * v[2]], &x[3 * v[1]], b);
        srd_cross3(a, b, n);
        normalize3(n);
        for (int k = 0; k < 3; k++) {
            int e = m->tri_edges[3 * t + k];
            for (int c = 0; c < 3; c++)
                navg[3 * e + c] += n[c];
            count[e]++;
        }
    }
    for (int e = 0; e < m->n_edges; e++) {
        if (!count[e])
            continue;
        double *n = &navg[3 * e], u[3];
        for (int c = 0; c < 3; c++)
            n[c] /= count[e];
        normalize3(n);
        srd_sub3(&x[3 * m->edge_nodes[2 * e + 1]], &x[3 * m->edge_nodes[2 * e]], u);
        normalize3(u);
        srd_cross3(n, u, &tau[3 * e]);
    }
    free(navg);
    free(count);
    return tau;
}

static double state_value(const srd_model *m, const srd_elemset *set, const srd_kernel_info *info, int i, int k,
                          const int *rank, const double *d1, const double *tau)
{
    int p = info->state_param[k], c = info->state_comp[k];
    int node = info->param_is_node[p] ? set->nodes[i * set->n_node + rank[p]] : -1;
    int edge = info->param_is_node[p] ? -1 : set->edges[i * set->n_edge + rank[p]];
    double t[3], d2[3];
    switch (info->state_kind[k]) {
    case SRD_STATE_X0: return node >= 0 ? m->x0[3 * node + c] : 0;
    case SRD_STATE_MASS: return node >= 0 ? m->node_mass[node] : 0;
    case SRD_STATE_REST: return edge >= 0 ? m->edge_rest[edge] : 0;
    case SRD_STATE_D1: return edge >= 0 ? d1[3 * edge + c] : 0;
    case SRD_STATE_D2:
        if (edge < 0)
            return 0;
        edge_tangent(m, edge, t);
        srd_cross3(t, &d1[3 * edge], d2);
        return d2[c];
    case SRD_STATE_TANGENT:
        if (edge < 0)
            return 0;
        edge_tangent(m, edge, t);
        return t[c];
    case SRD_STATE_SIGN: return edge >= 0 ? set->signs[i * set->n_edge + rank[p]] : 1;
    case SRD_STATE_REF_TWIST: return edge >= 0 ? initial_ref_twist(m, set, i, rank[p], d1) : 0;
    /* tau0 is that of the step start; the first step starts at the reference configuration. */
    case SRD_STATE_TAU0:
    case SRD_STATE_TAU_REF: return edge >= 0 ? tau[3 * edge + c] : 0;
    case SRD_STATE_FRAME: return node >= 0 && m->node_body[node] >= 0 ? m->bodies[m->node_body[node]].axes[c] : 0;
    }
    return 0;
}

/* The residual rows and Jacobian positions of every stencil DOF in the system's numbering
 * (scratch slots for constrained DOFs and entries outside the stored band). */
static void remap_range(srd_batch_owner *out, const srd_system *sys, int first, int n, int nd)
{
    long long scratch = srd_system_storage(sys);
    for (int i = first; i < first + n; i++) {
        int free_idx[64];
        for (int k = 0; k < nd; k++) {
            free_idx[k] = sys->free_index[out->dofs[i * nd + k]];
            out->res[i * nd + k] = free_idx[k] >= 0 ? free_idx[k] : sys->n_free + k % SRD_SCRATCH;
        }
        for (int k = 0; k < nd; k++)
            for (int l = 0; l < nd; l++) {
                long long pos = srd_system_position(sys, free_idx[k], free_idx[l]);
                out->jac_pos[((long long)i * nd + k) * nd + l] = pos >= 0 ? pos : scratch + (k * nd + l) % SRD_SCRATCH;
            }
    }
}

static void remap(srd_batch_owner *out, const srd_system *sys, int n, int nd) { remap_range(out, sys, 0, n, nd); }

void srd_batch_remap(srd_batch_owner *bo, const srd_system *sys) { remap(bo, sys, bo->b.n, bo->b.n_dofs); }

void srd_batch_remap_range(srd_batch_owner *bo, const srd_system *sys, int first, int n)
{
    remap_range(bo, sys, first, n, bo->b.n_dofs);
}

int srd_batch_frame_body(const srd_model *m, int set_index, const srd_kernel_info *info, int i, int k)
{
    const srd_elemset *set = &m->sets[set_index];
    int rank = 0;
    for (int p = 0; p < info->state_param[k]; p++) /* the body's place among the instance's nodes */
        rank += info->param_is_node[p] != 0;
    return m->node_body[set->nodes[i * set->n_node + rank]];
}

void srd_batch_set_frames(srd_batch_owner *bo, const srd_model *m, int set_index, const srd_kernel_info *info,
                          const double *body_axes)
{
    for (int k = 0; k < info->n_state; k++)
        for (int i = 0; info->state_kind[k] == SRD_STATE_FRAME && i < m->sets[set_index].n; i++) {
            int b = srd_batch_frame_body(m, set_index, info, i, k);
            bo->state[i * info->n_state + k] = b >= 0 ? body_axes[9 * b + info->state_comp[k]] : 0;
        }
}

int srd_batch_build(srd_batch_owner *out, const srd_model *m, int set_index, const srd_kernel_info *info,
                    const srd_system *sys)
{
    memset(out, 0, sizeof *out);
    const srd_elemset *set = &m->sets[set_index];
    int nd = info->nd, n = set->n;
    int rank[64], nodes = 0, edges = 0;
    if (info->n_params > 64 || info->nd > 64)
        return -1;
    for (int p = 0; p < info->n_params; p++)
        rank[p] = info->param_is_node[p] ? nodes++ : edges++;
    /* A set may carry more edges than the kernel reads (stretch keeps its edge as a label). */
    if (nodes != set->n_node || edges > set->n_edge)
        return -1;
    out->dofs = srd_xcalloc((size_t)n * (size_t)nd, sizeof(int32_t));
    out->res = srd_xcalloc((size_t)n * (size_t)nd, sizeof(int32_t));
    out->jac_pos = srd_xcalloc((size_t)n * (size_t)nd * (size_t)nd, sizeof(int64_t));
    out->data = srd_xcalloc((size_t)n * (size_t)(set->n_data ? set->n_data : 1), sizeof(double));
    out->state = srd_xcalloc((size_t)n * (size_t)(info->n_state ? info->n_state : 1), sizeof(double));
    if (n && set->n_data) /* a set may be empty (ground contact in a model of rigid bodies only) */
        memcpy(out->data, set->data, sizeof(double) * (size_t)n * (size_t)set->n_data);
    double *d1 = info->n_state ? initial_directors(m) : NULL;
    double *tau = NULL;
    for (int k = 0; k < info->n_state && !tau; k++)
        if (info->state_kind[k] == SRD_STATE_TAU0 || info->state_kind[k] == SRD_STATE_TAU_REF)
            tau = edge_taus(m, m->x0);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < nd; k++) {
            int dof = stencil_model_dof(m, set, info, i, k, rank);
            /* A DOF the model lacks (an edge without a twist angle) has no value to read. */
            if (dof < 0) {
                free(d1);
                free(tau);
                srd_batch_free(out);
                return -1;
            }
            out->dofs[i * nd + k] = dof;
        }
        for (int k = 0; k < info->n_state; k++)
            out->state[i * info->n_state + k] = state_value(m, set, info, i, k, rank, d1, tau);
    }
    /* Stress-free reference shapes: measured with the same initial frames as the state. */
    double *rt = srd_xcalloc((size_t)n + 1, sizeof(double));
    if (d1 && set->n_edge >= 2)
        for (int i = 0; i < n; i++)
            rt[i] = initial_ref_twist(m, set, i, 1, d1);
    srd_natural_shape(m, set, out->data, d1, rt);
    free(rt);
    free(d1);
    free(tau);
    remap(out, sys, n, nd);
    out->b.n = n;
    out->b.n_dofs = nd;
    out->b.n_data = set->n_data;
    out->b.n_state = info->n_state;
    out->b.dofs = out->dofs;
    out->b.res = out->res;
    out->b.jac_pos = out->jac_pos;
    out->b.data = out->data;
    out->b.state = out->state;
    return 0;
}

/* ---- state at the start of the next step ---- */

static double *positions(const srd_model *m, const double *q)
{
    double *x = srd_xcalloc((size_t)m->n_nodes * 3 + 1, sizeof(double));
    for (int i = 0; i < m->n_nodes; i++)
        memcpy(&x[3 * i], &q[m->node_dof[i]], 3 * sizeof(double));
    return x;
}

static void tangent_at(const srd_model *m, const double *x, int e, double *t)
{
    srd_sub3(&x[3 * m->edge_nodes[2 * e + 1]], &x[3 * m->edge_nodes[2 * e]], t);
    normalize3(t);
}

#define PI_VALUE 3.14159265358979323846
static double wrap_angle(double a) { return a - 2 * PI_VALUE * floor((a + PI_VALUE) / (2 * PI_VALUE)); }

/* Index of the state value (kind, param, comp), or -1. */
static int state_index(const srd_kernel_info *info, int kind, int param, int comp)
{
    for (int k = 0; k < info->n_state; k++)
        if (info->state_kind[k] == kind && info->state_param[k] == param && info->state_comp[k] == comp)
            return k;
    return -1;
}

srd_elem_batch srd_batch_every_dof(const srd_elem_batch *b, int lo, int hi)
{
    srd_elem_batch part = *b;
    part.n = hi - lo;
    part.dofs += (size_t)lo * part.n_dofs;
    part.res = part.dofs;
    part.data += (size_t)lo * part.n_data;
    part.state += (size_t)lo * part.n_state;
    return part;
}

void srd_batch_advance_state(srd_batch_owner *bo, const srd_model *m, int set_index, const srd_kernel_info *info,
                             const double *q_start, const double *q_end)
{
    const srd_elemset *set = &m->sets[set_index];
    if (!info->n_state)
        return;
    double *x0 = positions(m, q_start), *x1 = positions(m, q_end);
    double *tau = NULL;
    for (int k = 0; k < info->n_state && !tau; k++)
        if (info->state_kind[k] == SRD_STATE_TAU0)
            tau = edge_taus(m, x1);
    int rank[64], edges = 0;
    for (int p = 0; p < info->n_params && p < 64; p++)
        rank[p] = info->param_is_node[p] ? -1 : edges++;
    /* Where each stencil edge's state values sit, found once for all instances. */
    enum { K_D1, K_D2, K_T, K_TAU0, K_REF, K_N };
    static const int kinds[K_N] = { SRD_STATE_D1, SRD_STATE_D2, SRD_STATE_TANGENT, SRD_STATE_TAU0,
                                    SRD_STATE_REF_TWIST };
    int slot[64][K_N][3];
    for (int p = 0; p < info->n_params && p < 64; p++)
        for (int k = 0; k < K_N; k++)
            for (int c = 0; c < 3; c++)
                slot[p][k][c] = state_index(info, kinds[k], p, c);
    for (int i = 0; i < set->n; i++) {
        double *st = &bo->state[i * info->n_state];
        /* Directors follow their edge by time-parallel transport: what the kernel used. */
        for (int p = 0; p < info->n_params && p < 64; p++) {
            if (rank[p] < 0)
                continue;
            int e = set->edges[i * set->n_edge + rank[p]];
            int k1 = slot[p][K_D1][0], k2 = slot[p][K_D2][0], kt = slot[p][K_T][0];
            double told[3], tnew[3], d[3] = { 0, 0, 0 };
            tangent_at(m, x0, e, told);
            tangent_at(m, x1, e, tnew);
            if (k1 >= 0) {
                for (int c = 0; c < 3; c++)
                    d[c] = st[slot[p][K_D1][c]];
                double dn[3];
                transport(d, told, tnew, dn);
                double along = srd_dot3(dn, tnew);
                for (int c = 0; c < 3; c++)
                    dn[c] -= along * tnew[c];
                normalize3(dn);
                memcpy(d, dn, sizeof d);
                for (int c = 0; c < 3; c++)
                    st[slot[p][K_D1][c]] = d[c];
            }
            if (k2 >= 0) {
                double d2[3];
                srd_cross3(tnew, d, d2);
                for (int c = 0; c < 3; c++)
                    st[slot[p][K_D2][c]] = d2[c];
            }
            if (kt >= 0)
                for (int c = 0; c < 3; c++)
                    st[slot[p][K_T][c]] = tnew[c];
            int kt0 = slot[p][K_TAU0][0];
            if (kt0 >= 0 && tau)
                for (int c = 0; c < 3; c++)
                    st[slot[p][K_TAU0][c]] = tau[3 * e + c];
        }
        /* Reference twist between consecutive stencil edges, continued without 2 pi jumps. */
        for (int p = 0; p < info->n_params && p < 64; p++) {
            int kr = slot[p][K_REF][0];
            if (kr < 0 || rank[p] <= 0)
                continue;
            int q = p - 1;
            while (q >= 0 && rank[q] < 0)
                q--;
            int ka = q >= 0 ? slot[q][K_D1][0] : -1, kb = slot[p][K_D1][0];
            if (ka < 0 || kb < 0)
                continue;
            int e0 = set->edges[i * set->n_edge + rank[q]], e1 = set->edges[i * set->n_edge + rank[p]];
            double s0 = set->signs[i * set->n_edge + rank[q]], s1 = set->signs[i * set->n_edge + rank[p]];
            double t0[3], t1[3], a0[3], a1[3], u[3];
            tangent_at(m, x1, e0, t0);
            tangent_at(m, x1, e1, t1);
            for (int c = 0; c < 3; c++) {
                t0[c] *= s0;
                t1[c] *= s1;
                a0[c] = st[slot[q][K_D1][c]];
                a1[c] = st[slot[p][K_D1][c]];
            }
            transport(a0, t0, t1, u);
            double angle = signed_angle(u, a1, t1);
            st[kr] += wrap_angle(angle - st[kr]);
        }
    }
    free(x0);
    free(x1);
    free(tau);
}

double *srd_initial_directors(const srd_model *m) { return initial_directors(m); }

void srd_transport_director(const double *d, const double *t0, const double *t1, double *out)
{
    transport(d, t0, t1, out);
    double along = srd_dot3(out, t1);
    for (int c = 0; c < 3; c++)
        out[c] -= along * t1[c];
    normalize3(out);
}

void srd_batch_free(srd_batch_owner *bo)
{
    free(bo->dofs);
    free(bo->res);
    free(bo->jac_pos);
    free(bo->data);
    free(bo->state);
    memset(bo, 0, sizeof *bo);
}
