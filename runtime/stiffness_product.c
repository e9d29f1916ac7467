/* stiffness_product.c — K(q) x over every DOF, held ones included. The solver's Jacobian keeps
 * the free DOFs' rows and columns only; stiffness-proportional damping also needs the columns of
 * held DOFs that prescribed motion moves (their velocity damps the free DOFs next to them). Each
 * element's Hessian is evaluated into a block of its own and multiplied there. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "batch.h"
#include "sim.h"

enum { CHUNK = 128 }; /* instances evaluated at once: their blocks fit in cache for most kinds */

/* Per chunk: every stencil entry (k, l) of instance i goes to i nd^2 + k nd + l. */
typedef struct Blocks {
    int64_t *pos;
    double  *h;
} Blocks;

static void blocks_positions(Blocks *b, int nd)
{
    size_t n = (size_t)CHUNK * (size_t)nd * (size_t)nd;
    b->pos = srd_xcalloc(n + 1, sizeof(int64_t));
    b->h = srd_xcalloc(n + SRD_SCRATCH, sizeof(double));
    for (size_t i = 0; i < n; i++)
        b->pos[i] = (int64_t)i;
}

static void blocks_free(Blocks *b)
{
    free(b->pos), free(b->h);
    b->pos = NULL, b->h = NULL;
}

/* y += H x for instances [lo, hi) of set k (hi - lo <= CHUNK). */
static void chunk_times(const srd_sim *s, const srd_eval_ctx *base, int k, int lo, int hi, Blocks *b,
                        const double *x, double *y)
{
    const srd_sim_kernel *sk = &s->kernels[k];
    srd_elem_batch part = srd_batch_every_dof(&sk->batch.b, lo, hi);
    int nd = part.n_dofs;
    part.jac_pos = b->pos;
    memset(b->h, 0, sizeof(double) * ((size_t)part.n * (size_t)nd * (size_t)nd + SRD_SCRATCH));
    srd_eval_ctx ctx = *base;
    ctx.jac = b->h;
    sk->fn(&ctx, &part);
    for (int i = 0; i < part.n; i++) {
        const int32_t *dofs = &part.dofs[(size_t)i * (size_t)nd];
        const double  *h = &b->h[(size_t)i * (size_t)nd * (size_t)nd];
        for (int r = 0; r < nd; r++)
            for (int c = 0; c < nd; c++)
                y[dofs[r]] += h[r * nd + c] * x[dofs[c]];
    }
}

void srd_sim_stiffness_times(srd_sim *s, const double *q, const double *x, double *y)
{
    const srd_model *m = s->m;
    double energy = 0;
    double *g = srd_xcalloc((size_t)m->n_dofs + SRD_SCRATCH, sizeof(double)); /* the gradient, unread */
    srd_eval_ctx base = { q, s->q0, s->v0, s->params, s->t, s->dt, &energy, g, NULL };
    memset(y, 0, sizeof(double) * (size_t)m->n_dofs);
    for (int k = 0; k < m->n_sets; k++) {
        const srd_sim_kernel *sk = &s->kernels[k];
        if (sk->info.needs_time_step || !sk->batch.b.n) /* as the damping's K0: the static stiffness */
            continue;
        Blocks b;
        blocks_positions(&b, sk->batch.b.n_dofs);
        for (int lo = 0; lo < sk->batch.b.n; lo += CHUNK)
            chunk_times(s, &base, k, lo, lo + CHUNK < sk->batch.b.n ? lo + CHUNK : sk->batch.b.n, &b, x, y);
        blocks_free(&b);
    }
    free(g);
}
