/* test_tangents.c — the tangent kernels of compiler/sens (the derivative of an element's
 * residual along a change of every input but the configuration solved for: the evaluation
 * point, the step start, the state, the data, the params) against central differences of the
 * element's gradient kernel with its inputs moved, and their transposes (the adjoint kernels)
 * against them, for every element kind of the FD list (kernel_models.h), every data column kept
 * as a kernel input (as a param would keep it). */
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

/* Random tangents of every input a tangent kernel reads, scaled like the values. */
typedef struct Tangents {
    double *dq, *dq0, *dv0, *dstate, *ddata, dparams[8];
} Tangents;

static double *random_like(const double *v, size_t n, double floor, unsigned *seed)
{
    double *t = calloc(n + 1, sizeof(double));
    for (size_t i = 0; i < n; i++)
        t[i] = (v && v[i] != 0 ? fabs(v[i]) : floor) * uniform(seed);
    return t;
}

static Tangents tangents_random(const Point *p, unsigned *seed)
{
    const srd_elem_batch *b = &p->batch.b;
    Tangents t;
    size_t nd = (size_t)p->m->n_dofs;
    t.dq = random_like(NULL, nd, 1e-3, seed);
    t.dq0 = random_like(NULL, nd, 1e-3, seed);
    t.dv0 = random_like(NULL, nd, 1e-2, seed);
    t.dstate = random_like(b->state, (size_t)b->n * (size_t)b->n_state, 1e-3, seed);
    t.ddata = random_like(b->data, (size_t)b->n * (size_t)b->n_data, 1e-3, seed);
    for (int k = 0; k < 8; k++)
        t.dparams[k] = (p->params[k] != 0 ? fabs(p->params[k]) : 1e-3) * uniform(seed);
    return t;
}

static void tangents_free(Tangents *t)
{
    free(t->dq), free(t->dq0), free(t->dv0), free(t->dstate), free(t->ddata);
}

static void axpy(double *y, const double *base, const double *x, double h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = base[i] + h * x[i];
}

/* Every input moved by h along the tangents (base copies of the values at h = 0). */
static void move_inputs(Point *p, const Point *base, const Tangents *t, double h)
{
    srd_elem_batch *b = &p->batch.b;
    size_t nd = (size_t)p->m->n_dofs;
    axpy(p->q, base->q, t->dq, h, nd);
    axpy(p->q0, base->q0, t->dq0, h, nd);
    axpy(p->v0, base->v0, t->dv0, h, nd);
    axpy(p->batch.state, base->batch.state, t->dstate, h, (size_t)b->n * (size_t)b->n_state);
    axpy(p->batch.data, base->batch.data, t->ddata, h, (size_t)b->n * (size_t)b->n_data);
    axpy(p->params, base->params, t->dparams, h, 8);
}

static Point point_copy(const Point *p)
{
    const srd_elem_batch *b = &p->batch.b;
    Point c = *p;
    size_t nd = (size_t)p->m->n_dofs, ns = (size_t)b->n * (size_t)b->n_state, nc = (size_t)b->n * (size_t)b->n_data;
    c.q = calloc(nd + 1, sizeof(double)), c.q0 = calloc(nd + 1, sizeof(double)), c.v0 = calloc(nd + 1, sizeof(double));
    memcpy(c.q, p->q, nd * sizeof(double)), memcpy(c.q0, p->q0, nd * sizeof(double)), memcpy(c.v0, p->v0, nd * sizeof(double));
    c.batch.state = calloc(ns + 1, sizeof(double)), c.batch.data = calloc(nc + 1, sizeof(double));
    memcpy(c.batch.state, p->batch.state, ns * sizeof(double)), memcpy(c.batch.data, p->batch.data, nc * sizeof(double));
    return c;
}

/* The residual's change along t by the tangent kernel, against central differences of the
 * gradient kernel with every input moved (steps 1e-5 to 1e-7 of the tangents; the best). */
static double forward_gap(Point *p, const KernelSet *ks, const KernelTangent *kt, const Tangents *t, double *exact)
{
    size_t len = srd_system_grad_len(&p->sys);
    int rows = p->sys.n_free;
    double energy = 0;
    memset(exact, 0, len * sizeof(double));
    srd_eval_ctx ctx = { p->q, p->q0, p->v0, p->params, 0.1, 1e-3, &energy, exact, NULL };
    InputTangents w = { t->dq, t->dq0, t->dv0, t->dstate, t->ddata, t->dparams };
    kernel_tangent_forward(kt, &ctx, &p->batch.b, &w);
    Point base = point_copy(p);
    double *plus = calloc(len, sizeof(double)), *minus = calloc(len, sizeof(double)), *fd = calloc(len, sizeof(double));
    double best = INFINITY;
    for (double h = 1e-5; h >= 1e-7; h /= 10) {
        move_inputs(p, &base, t, h);
        gradient_at(p, ks->gradient ? ks->gradient : ks->fn, &p->batch.b, plus);
        move_inputs(p, &base, t, -h);
        gradient_at(p, ks->gradient ? ks->gradient : ks->fn, &p->batch.b, minus);
        for (int r = 0; r < rows; r++)
            fd[r] = (plus[r] - minus[r]) / (2 * h);
        best = fmin(best, relative_gap(fd, exact, rows));
    }
    move_inputs(p, &base, t, 0);
    free(base.q), free(base.q0), free(base.v0), free(base.batch.state), free(base.batch.data);
    free(plus), free(minus), free(fd);
    return best;
}

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; a && b && i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* lambda . (J w) against (J^T lambda) . w: the adjoint kernel is the forward one's transpose. */
static double adjoint_gap(Point *p, const KernelTangent *kt, const Tangents *t, const double *jw, unsigned *seed)
{
    const srd_elem_batch *b = &p->batch.b;
    size_t len = srd_system_grad_len(&p->sys), nd = (size_t)p->m->n_dofs;
    size_t ns = (size_t)b->n * (size_t)b->n_state, nc = (size_t)b->n * (size_t)b->n_data;
    double *lambda = calloc(len, sizeof(double));
    for (int r = 0; r < p->sys.n_free; r++)
        lambda[r] = uniform(seed);
    InputAdjoints l = { calloc(nd + 1, 8), calloc(nd + 1, 8), calloc(nd + 1, 8), calloc(ns + 1, 8), calloc(nc + 1, 8),
                        calloc(9, 8) };
    srd_eval_ctx ctx = { p->q, p->q0, p->v0, p->params, 0.1, 1e-3, NULL, NULL, NULL };
    kernel_tangent_adjoint(kt, &ctx, b, lambda, p->m->n_dofs, &l);
    double forward = dot(lambda, jw, (size_t)p->sys.n_free);
    double reverse = dot(l.lq, t->dq, nd) + dot(l.lq0, t->dq0, nd) + dot(l.lv0, t->dv0, nd) + dot(l.lstate, t->dstate, ns) +
                     dot(l.ldata, t->ddata, nc) + dot(l.lparams, t->dparams, (size_t)p->m->n_params);
    free(lambda), free(l.lq), free(l.lq0), free(l.lv0), free(l.lstate), free(l.ldata), free(l.lparams);
    return fabs(forward - reverse) / fmax(fabs(forward), 1e-300);
}

static void check_set(const srd_model *m, KernelSet *ks, int s, unsigned seed)
{
    const srd_elemset *set = &m->sets[s];
    KernelTangent kt;
    char err[256] = "";
    bool built = kernel_tangent_build(&ks->lowered, set, m->n_params, TANGENT_ALL, &kt, err, sizeof err);
    check(&tally, built, "%s: tangent kernels build (%s)", set->kind, built ? "ok" : err);
    Point p;
    if (!built || point_open(&p, m, ks, s, seed) != 0) {
        kernel_tangent_free(&kt);
        return;
    }
    Tangents t = tangents_random(&p, &seed);
    double *jw = calloc(srd_system_grad_len(&p.sys), sizeof(double));
    double gap = forward_gap(&p, ks, &kt, &t, jw), largest = 0;
    for (int r = 0; r < p.sys.n_free; r++)
        largest = fmax(largest, fabs(jw[r]));
    check(&tally, gap < 1e-6 && largest > 0,
          "%s: d(residual)/d(inputs) along random tangents of its %d inputs (configuration, step start, state, "
          "data, params) matches central differences (relative %.2e, tol 1e-6; largest entry %.2e)",
          set->kind, kt.n_slots, gap, largest);
    double agree = adjoint_gap(&p, &kt, &t, jw, &seed);
    check(&tally, agree < 1e-12, "%s: the adjoint kernel is the tangent kernel's transpose (lambda.(J w) against "
                                 "(J^T lambda).w: relative %.2e, tol 1e-12)", set->kind, agree);
    free(jw);
    tangents_free(&t);
    point_close(&p);
    kernel_tangent_free(&kt);
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
            check_set(m, &l.mk.sets[s], s, 0x5eed + 977u * (unsigned)s);
    fd_list_close(&l);
    printf("%d passed, %d failed\n", tally.run - tally.failed, tally.failed);
    return tally.failed ? 1 : 0;
}
