/* test_state_tangent.c — the derivative of the elements' step-start state update
 * (runtime/sens/state_tangent.c: rods' frames and reference twists carried by parallel
 * transport, mid-edge shells' tau0) against central differences of srd_batch_advance_state
 * itself with the state before the step and both configurations moved at once, and its
 * transpose against it (lambda.(J w) = (J^T lambda).w), for every element set of the FD list
 * (kernel_models.h) that carries such a state. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "batch.h"
#include "elab.h"
#include "kernels.h"
#include "parse.h"
#include "sens/state_tangent.h"

#include "kernel_models.h"
#include "tap.h"

static Tally tally;

static double uniform(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return ((*seed >> 8) & 0xFFFFFF) / (double)0x1000000 * 2 - 1;
}

static double *random_vector(size_t n, double scale, unsigned *seed)
{
    double *v = calloc(n + 1, sizeof(double));
    for (size_t i = 0; i < n; i++)
        v[i] = scale * uniform(seed);
    return v;
}

/* The set's state after a step from q0 to q1, starting from S0 (n * n_state values). */
static void advanced(srd_batch_owner *b, const srd_model *m, int k, const srd_kernel_info *info, const double *S0,
                     const double *q0, const double *q1, double *S1)
{
    size_t len = (size_t)b->b.n * (size_t)info->n_state;
    memcpy(b->state, S0, len * sizeof(double));
    srd_batch_advance_state(b, m, k, info, q0, q1);
    memcpy(S1, b->state, len * sizeof(double));
}

static void moved(const double *x, const double *dx, double h, size_t n, double *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = x[i] + h * dx[i];
}

typedef struct Case {
    const srd_model       *m;
    int                    k;
    const srd_kernel_info *info;
    srd_batch_owner        batch;
    size_t                 n_dofs, len;
    double                *q0, *q1, *S0, *dq0, *dq1, *dS0;
} Case;

/* Central differences of the update along (dS0, dq0, dq1), steps 1e-5 to 1e-7 (the best), and the
 * tangent; returns their relative gap and the tangent in dS1. */
static double forward_gap(Case *c, double *dS1)
{
    srd_state_tangent(c->m, c->k, c->info, c->S0, c->q0, c->q1, c->dS0, c->dq0, c->dq1, dS1);
    double *a = calloc(c->len + 1, 8), *b = calloc(c->len + 1, 8), *S = calloc(c->len + 1, 8);
    double *qa = calloc(c->n_dofs + 1, 8), *qb = calloc(c->n_dofs + 1, 8), best = INFINITY, scale = 1e-300;
    for (size_t i = 0; i < c->len; i++)
        scale = fmax(scale, fabs(dS1[i]));
    for (double h = 1e-5; h >= 1e-7; h /= 10) {
        double gap = 0;
        moved(c->S0, c->dS0, h, c->len, S), moved(c->q0, c->dq0, h, c->n_dofs, qa), moved(c->q1, c->dq1, h, c->n_dofs, qb);
        advanced(&c->batch, c->m, c->k, c->info, S, qa, qb, a);
        moved(c->S0, c->dS0, -h, c->len, S), moved(c->q0, c->dq0, -h, c->n_dofs, qa), moved(c->q1, c->dq1, -h, c->n_dofs, qb);
        advanced(&c->batch, c->m, c->k, c->info, S, qa, qb, b);
        for (size_t i = 0; i < c->len; i++)
            gap = fmax(gap, fabs((a[i] - b[i]) / (2 * h) - dS1[i]));
        best = fmin(best, gap / scale);
    }
    free(a), free(b), free(S), free(qa), free(qb);
    return best;
}

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

static double adjoint_gap(Case *c, const double *dS1, unsigned *seed)
{
    double *l = random_vector(c->len, 1, seed), *lS0 = calloc(c->len + 1, 8);
    double *lq0 = calloc(c->n_dofs + 1, 8), *lq1 = calloc(c->n_dofs + 1, 8);
    srd_state_adjoint(c->m, c->k, c->info, c->S0, c->q0, c->q1, l, lS0, lq0, lq1);
    double forward = dot(l, dS1, c->len);
    double reverse = dot(lS0, c->dS0, c->len) + dot(lq0, c->dq0, c->n_dofs) + dot(lq1, c->dq1, c->n_dofs);
    free(l), free(lS0), free(lq0), free(lq1);
    return fabs(forward - reverse) / fmax(fabs(forward), 1e-300);
}

/* A step of the set's instances: q0 the reference moved by up to 1 mm, q1 by up to 1 mm more,
 * the state before it the update's result from the reference to q0. */
static void case_open(Case *c, const srd_model *m, int k, const KernelSet *ks, srd_system *sys, unsigned *seed)
{
    memset(c, 0, sizeof *c);
    c->m = m, c->k = k, c->info = &ks->info;
    srd_batch_build(&c->batch, m, k, &ks->info, sys);
    c->n_dofs = (size_t)m->n_dofs;
    c->len = (size_t)c->batch.b.n * (size_t)ks->info.n_state;
    double *ref = calloc(c->n_dofs + 1, 8);
    for (int i = 0; i < m->n_nodes; i++)
        memcpy(&ref[m->node_dof[i]], &m->x0[3 * i], 3 * sizeof(double));
    double *d0 = random_vector(c->n_dofs, 1e-3, seed), *d1 = random_vector(c->n_dofs, 1e-3, seed);
    c->q0 = calloc(c->n_dofs + 1, 8), c->q1 = calloc(c->n_dofs + 1, 8), c->S0 = calloc(c->len + 1, 8);
    moved(ref, d0, 1, c->n_dofs, c->q0);
    moved(c->q0, d1, 1, c->n_dofs, c->q1);
    advanced(&c->batch, m, k, c->info, c->batch.state, ref, c->q0, c->S0);
    c->dq0 = random_vector(c->n_dofs, 1e-3, seed), c->dq1 = random_vector(c->n_dofs, 1e-3, seed);
    c->dS0 = random_vector(c->len, 1e-2, seed);
    free(ref), free(d0), free(d1);
}

static void case_close(Case *c)
{
    free(c->q0), free(c->q1), free(c->S0), free(c->dq0), free(c->dq1), free(c->dS0);
    srd_batch_free(&c->batch);
}

static bool carries_state(const srd_kernel_info *info)
{
    for (int j = 0; j < info->n_state; j++) {
        int kind = info->state_kind[j];
        if (kind == SRD_STATE_D1 || kind == SRD_STATE_TAU0 || kind == SRD_STATE_REF_TWIST)
            return true;
    }
    return false;
}

int main(void)
{
    FdList l;
    bool ok = fd_list_open(&l, false, false);
    srd_model *m = l.m;
    check(&tally, m != NULL, "the FD list elaborates");
    if (!m)
        return 1;
    check(&tally, ok, "its kernels lower (%s)", ok ? "ok" : l.err);
    srd_system sys;
    srd_system_init(&sys, m, SRD_JAC_DENSE);
    unsigned seed = 0x7a11;
    int checked = 0;
    for (int k = 0; ok && k < l.mk.n; k++) {
        if (!l.mk.sets[k].lowered.kind || !m->sets[k].n || !carries_state(&l.mk.sets[k].info) ||
            !srd_state_tangent_supported(&l.mk.sets[k].info))
            continue;
        Case c;
        case_open(&c, m, k, &l.mk.sets[k], &sys, &seed);
        double *dS1 = calloc(c.len + 1, 8);
        double gap = forward_gap(&c, dS1);
        check(&tally, gap < 1e-6, "%s: the state update's derivative along random tangents of the state and both "
              "configurations matches central differences (relative %.2e, tol 1e-6)", m->sets[k].kind, gap);
        double agree = adjoint_gap(&c, dS1, &seed);
        check(&tally, agree < 1e-12, "%s: its transpose agrees (lambda.(J w) against (J^T lambda).w: relative %.2e, "
              "tol 1e-12)", m->sets[k].kind, agree);
        free(dS1);
        case_close(&c);
        checked++;
    }
    check(&tally, checked >= 2, "element kinds with a step-start state checked: %d (rod bending, mid-edge shells)",
          checked);
    srd_system_free(&sys);
    fd_list_close(&l);
    printf("%d passed, %d failed\n", tally.run - tally.failed, tally.failed);
    return tally.failed ? 1 : 0;
}
