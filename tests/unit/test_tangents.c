/* test_tangents.c — the tangent kernels of compiler/sens (the derivative of an element's
 * residual along a change of its data) against central differences of the element's gradient
 * kernel with its data moved, for every element kind of the FD list (kernel_models.h), every
 * data column kept as a kernel input (as a param would keep it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "batch.h"
#include "elab.h"
#include "kernels.h"
#include "parse.h"
#include "sens/tangent.h"

#include "kernel_models.h"
#include "tap.h"

static Tally tally;

static double uniform(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return ((*seed >> 8) & 0xFFFFFF) / (double)0x1000000 * 2 - 1;
}

/* The state the checks run at: the reference moved by up to 2 mm (multipliers near 1). */
typedef struct Point {
    const srd_model *m;
    srd_system       sys;
    srd_batch_owner  batch;
    double          *q, *q0, *v0, params[8];
} Point;

static int point_open(Point *p, const srd_model *m, const KernelSet *ks, int set, unsigned seed)
{
    memset(p, 0, sizeof *p);
    p->m = m;
    srd_system_init(&p->sys, m, SRD_JAC_DENSE);
    int built = srd_batch_build(&p->batch, m, set, &ks->info, &p->sys);
    p->q = calloc((size_t)m->n_dofs + 1, sizeof(double));
    p->q0 = calloc((size_t)m->n_dofs + 1, sizeof(double));
    p->v0 = calloc((size_t)m->n_dofs + 1, sizeof(double));
    for (int d = 0; d < m->n_dofs; d++) {
        int kind = m->dof_kind[d];
        double ref = kind <= SRD_DOF_NODE_Z ? m->x0[3 * m->dof_owner[d] + kind] : kind == SRD_DOF_LAMBDA ? 1 : 0;
        p->q0[d] = ref;
        p->q[d] = ref + 2e-3 * uniform(&seed);
        p->v0[d] = 0.01 * uniform(&seed);
    }
    for (int k = 0; k < m->n_params && k < 8; k++)
        p->params[k] = m->params[k].value;
    return built;
}

static void point_close(Point *p)
{
    free(p->q);
    free(p->q0);
    free(p->v0);
    srd_batch_free(&p->batch);
    srd_system_free(&p->sys);
}

static void gradient_at(Point *p, srd_kernel_fn fn, const srd_elem_batch *b, double *g)
{
    memset(g, 0, sizeof(double) * srd_system_grad_len(&p->sys));
    double energy = 0;
    srd_eval_ctx ctx = { p->q, p->q0, p->v0, p->params, 0.1, 1e-3, &energy, g, NULL };
    fn(&ctx, b);
}

/* Largest |a - b| over the free rows, relative to the largest |a|. */
static double relative_gap(const double *a, const double *b, int n)
{
    double gap = 0, scale = 1e-300;
    for (int i = 0; i < n; i++) {
        gap = fmax(gap, fabs(a[i] - b[i]));
        scale = fmax(scale, fabs(a[i]));
    }
    return gap / scale;
}

/* The residual moved along data tangents t, by the tangent kernel and by central differences
 * of the gradient kernel (steps of 1e-5 to 1e-7 of the data, the best agreement). */
static void check_set(const srd_model *m, KernelSet *ks, int s, unsigned seed)
{
    const srd_elemset *set = &m->sets[s];
    DataTangent tan;
    char err[256] = "";
    bool built = data_tangent_build(&ks->lowered, set, &tan, err, sizeof err);
    check(&tally, built, "%s: tangent kernel builds (%s)", set->kind, built ? "ok" : err);
    Point p;
    if (!built || point_open(&p, m, ks, s, seed) != 0 || tan.n_cols == 0) {
        check(&tally, built && tan.n_cols == 0 && set->n_data == 0, "%s: reads its data (%d of %d columns)", set->kind,
              tan.n_cols, set->n_data);
        data_tangent_free(&tan);
        return;
    }
    int n = set->n, nd = set->n_data, rows = p.sys.n_free;
    size_t len = srd_system_grad_len(&p.sys);
    double *data = p.batch.data, *both = calloc((size_t)n * 2 * nd + 1, sizeof(double));
    for (int i = 0; i < n; i++)
        for (int c = 0; c < nd; c++) {
            double d = data[i * nd + c];
            both[(size_t)i * 2 * nd + c] = d;
            both[(size_t)i * 2 * nd + nd + c] = (d != 0 ? d : 1e-3) * uniform(&seed);
        }
    srd_elem_batch b2 = p.batch.b;
    b2.n_data = 2 * nd;
    b2.data = both;
    double *exact = calloc(len, sizeof(double)), *plus = calloc(len, sizeof(double)),
           *minus = calloc(len, sizeof(double)), *fd = calloc(len, sizeof(double));
    double energy = 0;
    srd_eval_ctx ctx = { p.q, p.q0, p.v0, p.params, 0.1, 1e-3, &energy, exact, NULL };
    data_tangent_run(&tan, &ctx, &b2);
    double best = INFINITY;
    for (double h = 1e-5; h >= 1e-7; h /= 10) {
        for (int i = 0; i < n; i++)
            for (int c = 0; c < nd; c++)
                data[i * nd + c] = both[(size_t)i * 2 * nd + c] + h * both[(size_t)i * 2 * nd + nd + c];
        gradient_at(&p, ks->gradient ? ks->gradient : ks->fn, &p.batch.b, plus);
        for (int i = 0; i < n; i++)
            for (int c = 0; c < nd; c++)
                data[i * nd + c] = both[(size_t)i * 2 * nd + c] - h * both[(size_t)i * 2 * nd + nd + c];
        gradient_at(&p, ks->gradient ? ks->gradient : ks->fn, &p.batch.b, minus);
        for (int r = 0; r < rows; r++)
            fd[r] = (plus[r] - minus[r]) / (2 * h);
        best = fmin(best, relative_gap(fd, exact, rows));
    }
    double largest = 0;
    for (int r = 0; r < rows; r++)
        largest = fmax(largest, fabs(exact[r]));
    check(&tally, best < 1e-6 && largest > 0,
          "%s: d(residual)/d(data) along random tangents of its %d data columns matches central differences "
          "(relative %.2e, tol 1e-6; largest entry %.2e)", set->kind, tan.n_cols, best, largest);
    free(both);
    free(exact);
    free(plus);
    free(minus);
    free(fd);
    point_close(&p);
    data_tangent_free(&tan);
}

int main(void)
{
    Arena arena;
    arena_init(&arena);
    Program prog = { 0 };
    srd_model *m = fd_list_model(&arena, &prog);
    check(&tally, m != NULL, "the FD list elaborates");
    if (!m)
        return 1;
    keep_every_column(m);
    ModelKernels mk;
    char err[512] = "";
    bool ok = kernels_lower(&mk, &prog, m, true, err, sizeof err) && kernels_jit(&mk, JIT_CHUNK_OPS, err, sizeof err);
    check(&tally, ok, "its kernels compile with every data column an input (%s)", ok ? "ok" : err);
    for (int s = 0; ok && s < mk.n; s++)
        if (mk.sets[s].fn && m->sets[s].n > 0)
            check_set(m, &mk.sets[s], s, 0x5eed + 977u * (unsigned)s);
    if (ok)
        kernels_free(&mk);
    srd_model_free(m);
    arena_free(&arena);
    diag_reset();
    printf("%d passed, %d failed\n", tally.run - tally.failed, tally.failed);
    return tally.failed ? 1 : 0;
}
