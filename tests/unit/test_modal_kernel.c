/* test_modal_kernel.c — the modal kernels of compiler/sens/modal.c (the directional derivative
 * of phi^T H phi, H an element's Jacobian, along tangents of the configuration, the data and
 * the params) against central differences of phi^T J phi from the element's full kernel with
 * its inputs moved, for every element kind of the FD list (kernel_models.h), every data column
 * kept as a kernel input (as a param would keep it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "batch.h"
#include "elab.h"
#include "kernels.h"
#include "parse.h"
#include "sens/modal.h"
#include "solve.h"

#include "kernel_models.h"
#include "tap.h"

static Tally tally;

static double uniform(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return ((*seed >> 8) & 0xFFFFFF) / (double)0x1000000 * 2 - 1;
}

/* The point the checks run at (the reference moved by up to 2 mm, multipliers near 1), a mode
 * phi (zero on fixed DOFs) and tangents of the inputs the modal kernel reads. */
typedef struct Point {
    const srd_model *m;
    srd_system       sys;
    srd_batch_owner  batch;
    double          *q, *q0, *v0, *phi, params[8]; /* q0, v0: the step start, held */
    double          *dq, *ddata, dparams[8];
} Point;

static double *random_vector(size_t n, double scale, unsigned *seed)
{
    double *v = calloc(n + 1, sizeof(double));
    for (size_t i = 0; i < n; i++)
        v[i] = scale * uniform(seed);
    return v;
}

static int point_open(Point *p, const srd_model *m, const KernelSet *ks, int set, unsigned seed)
{
    memset(p, 0, sizeof *p);
    p->m = m;
    srd_system_init(&p->sys, m, SRD_JAC_DENSE);
    int built = srd_batch_build(&p->batch, m, set, &ks->info, &p->sys);
    size_t n = (size_t)m->n_dofs, nc = (size_t)p->batch.b.n * (size_t)p->batch.b.n_data;
    p->q = random_vector(n, 2e-3, &seed);
    p->q0 = calloc(n + 1, sizeof(double));
    p->v0 = random_vector(n, 1e-2, &seed);
    p->phi = random_vector(n, 1, &seed);
    p->dq = random_vector(n, 1e-3, &seed);
    p->ddata = random_vector(nc, 1, &seed);
    for (size_t d = 0; d < n; d++) {
        int kind = m->dof_kind[d];
        p->q0[d] = kind <= SRD_DOF_NODE_Z ? m->x0[3 * m->dof_owner[d] + kind] : kind == SRD_DOF_LAMBDA ? 1 : 0;
        p->q[d] += p->q0[d];
        p->phi[d] *= p->sys.free_index[d] >= 0;
    }
    for (size_t i = 0; i < nc; i++) /* scaled like the values */
        p->ddata[i] *= p->batch.b.data[i] != 0 ? fabs(p->batch.b.data[i]) : 1e-3;
    for (int k = 0; k < m->n_params && k < 8; k++) {
        p->params[k] = m->params[k].value;
        p->dparams[k] = (p->params[k] != 0 ? fabs(p->params[k]) : 1e-3) * uniform(&seed);
    }
    return built;
}

static void point_close(Point *p)
{
    free(p->q), free(p->q0), free(p->v0), free(p->phi), free(p->dq), free(p->ddata);
    srd_batch_free(&p->batch);
    srd_system_free(&p->sys);
}

/* phi^T J phi over the free rows, J from the element's full kernel. */
static double curvature(Point *p, const KernelSet *ks)
{
    int n = p->sys.n_free;
    double *jac = calloc((size_t)srd_system_storage(&p->sys) + SRD_SCRATCH, sizeof(double));
    double *g = calloc(srd_system_grad_len(&p->sys), sizeof(double)), energy = 0;
    double *phi = calloc((size_t)n + 1, sizeof(double)), *y = calloc((size_t)n + 1, sizeof(double));
    srd_eval_ctx ctx = { p->q, p->q0, p->v0, p->params, 0.1, 1e-3, &energy, g, jac };
    ks->fn(&ctx, &p->batch.b);
    for (int d = 0; d < p->m->n_dofs; d++)
        if (p->sys.free_index[d] >= 0)
            phi[p->sys.free_index[d]] = p->phi[d];
    srd_system_multiply(&p->sys, jac, phi, y);
    double s = 0;
    for (int i = 0; i < n; i++)
        s += phi[i] * y[i];
    free(jac), free(g), free(phi), free(y);
    return s;
}

/* The configuration, the data and the params moved by h along the tangents from `base`. */
static void move(Point *p, const double *q, const double *data, const double *params, double h)
{
    const srd_elem_batch *b = &p->batch.b;
    for (int d = 0; d < p->m->n_dofs; d++)
        p->q[d] = q[d] + h * p->dq[d];
    for (long long i = 0; i < (long long)b->n * b->n_data; i++)
        p->batch.data[i] = data[i] + h * p->ddata[i];
    for (int k = 0; k < 8; k++)
        p->params[k] = params[k] + h * p->dparams[k];
}

static double *copy(const double *v, size_t n)
{
    double *c = calloc(n + 1, sizeof(double));
    memcpy(c, v, n * sizeof(double));
    return c;
}

/* Central differences of phi^T J phi along the tangents: the closest of steps 1e-4 to 1e-7
 * to `exact`, and its relative gap. */
static double difference_gap(Point *p, const KernelSet *ks, double exact)
{
    const srd_elem_batch *b = &p->batch.b;
    double *q = copy(p->q, (size_t)p->m->n_dofs), *data = copy(p->batch.data, (size_t)b->n * (size_t)b->n_data);
    double params[8], best = INFINITY;
    memcpy(params, p->params, sizeof params);
    for (double h = 1e-4; h >= 1e-7; h /= 10) {
        move(p, q, data, params, h);
        double plus = curvature(p, ks);
        move(p, q, data, params, -h);
        double fd = (plus - curvature(p, ks)) / (2 * h);
        best = fmin(best, fabs(fd - exact) / fmax(fabs(exact), 1e-300));
    }
    move(p, q, data, params, 0);
    free(q), free(data);
    return best;
}

static void check_set(const srd_model *m, KernelSet *ks, int s, unsigned seed)
{
    const srd_elemset *set = &m->sets[s];
    ModalKernel mk;
    char err[256] = "";
    bool built = modal_kernel_build(&ks->lowered, set, &mk, err, sizeof err);
    check(&tally, built, "%s: modal kernel builds (%s)", set->kind, built ? "ok" : err);
    Point p;
    if (!built || point_open(&p, m, ks, s, seed) != 0) {
        modal_kernel_free(&mk);
        return;
    }
    srd_eval_ctx ctx = { p.q, p.q0, p.v0, p.params, 0.1, 1e-3, NULL, NULL, NULL };
    InputTangents w = { .dq = p.dq, .ddata = p.ddata, .dparams = p.dparams };
    double exact = modal_kernel_run(&mk, &ctx, &p.batch.b, p.phi, &w);
    double gap = difference_gap(&p, ks, exact);
    check(&tally, gap < 1e-6 && exact != 0, "%s: d(phi^T H phi) along random tangents of its %d inputs "
          "(configuration, data, params) = %.6e matches central differences of the Jacobian (relative %.2e, "
          "tol 1e-6)", set->kind, mk.n_slots, exact, gap);
    point_close(&p);
    modal_kernel_free(&mk);
}

int main(void)
{
    FdList l;
    bool ok = fd_list_open(&l, true, true);
    srd_model *m = l.m;
    check(&tally, m != NULL, "the FD list elaborates");
    if (!m)
        return 1;
    check(&tally, ok, "its kernels compile with every data column an input (%s)", ok ? "ok" : l.err);
    for (int s = 0; ok && s < l.mk.n; s++)
        if (l.mk.sets[s].fn && m->sets[s].n > 0)
            check_set(m, &l.mk.sets[s], s, 0x40da1 + 977u * (unsigned)s);
    fd_list_close(&l);
    printf("%d passed, %d failed\n", tally.run - tally.failed, tally.failed);
    return tally.failed ? 1 : 0;
}
