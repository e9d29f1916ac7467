/* test_schedule_tangents.c — the exact tangents of the schedules along a param
 * (sens/schedule_tangent.h) against fourth-order central differences of what the runtime writes
 * (srd_schedules_apply, srd_motion_impose) in sims of the model elaborated again at p +- h,
 * p +- 2h (h = 1e-3 p, as `srdc grad` samples): a curvature actuation (sin, exp, pow, products
 * of params), an E actuation of a param that is also the material's E (the product rule with
 * the base's and e0's static tangents), time-dependent loads with a max and a periodic wrap, a
 * move, a rotation and a moving obstacle's pose with its step-start copy. Then the switch test:
 * a max(F, c) within the stencil's reach of its switch is named for F and for c, not for a param
 * it does not read, and not when the switch is far; periodic(t, P) at its wrap likewise for P. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "diag.h"
#include "driver.h"
#include "elab.h"
#include "kernels.h"
#include "parse.h"
#include "schedule.h"
#include "sens/schedule_tangent.h"
#include "sim.h"

#include "tap.h"

static Tally tally;

/* %s: c's value, then P's. */
static const char *const MODEL =
    "use std.schedules;\n"
    "param a = 2 /m in 0.1 /m..10 /m;\n"
    "param w = 3 Hz in 1 Hz..10 Hz;\n"
    "param F = 4 mN in -1 N..1 N;\n"
    "param Em = 3 MPa in 1 MPa..10 MPa;\n"
    "param c = %s in -1 N..1 N;\n"
    "param P = %s in 1 ms..1 s;\n"
    "material silicone { E = Em; nu = 0.45; rho = 1100 kg/m^3; }\n"
    "rod arm { path = line((0, 0, 0) m, (0.12, 0, 0) m); nodes = 6; radius = 2 mm; material = silicone; }\n"
    "rod leg { path = line((0, 0.05, 0) m, (0.12, 0.05, 0) m); nodes = 5; radius = 2 mm; material = silicone; }\n"
    "rod tail { path = line((0, 0.1, 0) m, (0.12, 0.1, 0) m); nodes = 5; radius = 2 mm; material = silicone; }\n"
    "clamp arm.start;\nclamp leg.start;\nclamp tail.start;\n"
    "actuate arm.curvature = (a * sin(2 * pi * w * t), a * a * 1 cm * exp(-w * t) * pow(1 + w * t, 1.5));\n"
    "actuate leg.E = Em * (1 + 0.3 * sin(2 * pi * w * t)) + 1 MPa * w * 1 s;\n"
    "load arm.end = (F * cos(2 * pi * w * t), max(F, c), F * F / 1 N * w * 1 s);\n"
    "load leg.nodes[2] = (0 N, F * periodic(t, P) / 1 s, 0 N);\n"
    "move leg.end = (a * 1 cm^2 * sin(2 * pi * w * t), a * a * 1 cm^3 * w * t, 0 m);\n"
    "rotate tail.nodes[3..5] about (0, 0, 1) = a * 1 cm * sin(2 * pi * w * t) + w * t * 0.1;\n"
    "obstacle sphere ball { center = (0.05 m, 0 m, 2 cm + a * 1 cm^2 * sin(2 * pi * w * t)); radius = 5 mm;\n"
    "  stiffness = 100 N/m; delta = 1 mm; }\n"
    "simulate { method = implicit_euler; dt = 1 ms; duration = 10 ms; }\n";

enum { N_PARAMS = 6 };
static const double T = 0.037, DT = 1e-3, H = 0.5e-3;
/* Fourth-order differences at h = 1e-3 p: truncation ~ h^4 f^(5) / 30 and rounding ~ 1e-16
 * |f| / h, both far below 1e-8 of the derivative's scale for these smooth values. */
#define TOL 1e-8

/* A model elaborated (with one override, or none) and a sim of it with the base's kernels. */
typedef struct Sample {
    Arena      arena;
    Program    prog;
    srd_model *m;
    srd_sim    s;
    bool       ok;
} Sample;

/* The params' tangents along param k alone. */
static double *unit_seed(const srd_model *m, int k)
{
    double *dp = srd_xcalloc((size_t)m->n_params + 1, sizeof(double));
    dp[k] = 1;
    return dp;
}

static bool sample_open(Sample *x, const char *text, const srd_kernel_table *kt, const char *override)
{
    memset(x, 0, sizeof *x);
    arena_init(&x->arena);
    const char *specs[1] = { override };
    if (parse_program_text(&x->arena, "fixture.srd", text, strlen(text), parse_stdlib_dir(), &x->prog))
        x->m = elab_program_with(&x->prog, &x->arena, "fixture.srd", specs, override ? 1 : 0);
    diag_flush(stdout);
    char err[512];
    x->ok = x->m && (!kt || srd_sim_for_analysis(&x->s, x->m, kt, &x->m->simulate, NULL, DT, err, sizeof err) == 0);
    if (x->m && kt && !x->ok)
        printf("# sim: %s\n", err);
    return x->ok;
}

static void sample_close(Sample *x)
{
    if (x->s.m)
        srd_sim_free(&x->s);
    if (x->m)
        srd_model_free(x->m);
    arena_free(&x->arena);
}

/* The base: a model with its kernels, its sim and the schedules' tangents. */
typedef struct Base {
    Sample            x;
    ModelKernels      mk;
    KernelTable       kt;
    ScheduleTangents *T;
    bool              lowered, ok;
} Base;

static bool base_open(Base *b, const char *text)
{
    memset(b, 0, sizeof *b);
    char err[512] = "";
    bool ok = sample_open(&b->x, text, NULL, NULL);
    b->lowered = ok && kernels_lower(&b->mk, &b->x.prog, b->x.m, false, err, sizeof err);
    ok = b->lowered && kernels_jit(&b->mk, JIT_CHUNK_OPS, err, sizeof err);
    if (ok) {
        kernels_table_fill(&b->kt, &b->mk);
        ok = srd_sim_for_analysis(&b->x.s, b->x.m, &b->kt.table, &b->x.m->simulate, NULL, DT, err, sizeof err) == 0;
    }
    b->T = ok ? schedule_tangents_build(&b->mk, b->x.m, err, sizeof err) : NULL;
    b->ok = b->T != NULL;
    check(&tally, b->ok, "the model lowers, compiles and its schedule tangents build (%s; %d switches)",
          b->ok ? "ok" : err, schedule_tangents_switches(b->T));
    return b->ok;
}

static void base_close(Base *b)
{
    schedule_tangents_free(b->T);
    if (b->ok || b->kt.fns)
        kernels_table_free(&b->kt);
    sample_close(&b->x);
    if (b->lowered)
        kernels_free(&b->mk);
}

/* What the runtime gives at T in sample x: every set's data and fext after the schedules, and
 * the held DOFs' motion. */
typedef struct Values {
    double **data, *fext, *q, *v, *a, **elab;
} Values;

static Values values_at(Sample *x)
{
    srd_sim *s = &x->s;
    const srd_model *m = x->m;
    Values y;
    size_t n = (size_t)m->n_dofs + 1;
    y.data = srd_xcalloc((size_t)m->n_sets + 1, sizeof *y.data);
    y.elab = srd_xcalloc((size_t)m->n_sets + 1, sizeof *y.elab);
    s->dt = H;
    srd_sim_apply_schedules(s, T);
    for (int k = 0; k < m->n_sets; k++) {
        size_t len = (size_t)m->sets[k].n * (size_t)m->sets[k].n_data;
        y.data[k] = srd_xcalloc(len + 1, sizeof(double));
        y.elab[k] = srd_xcalloc(len + 1, sizeof(double));
        memcpy(y.data[k], s->kernels[k].batch.b.data, len * sizeof(double));
        memcpy(y.elab[k], m->sets[k].data, len * sizeof(double));
    }
    y.fext = srd_xcalloc(n, sizeof(double)), y.q = srd_xcalloc(n, sizeof(double));
    y.v = srd_xcalloc(n, sizeof(double)), y.a = srd_xcalloc(n, sizeof(double));
    memcpy(y.fext, s->fext, (n - 1) * sizeof(double));
    srd_motion_impose(s, T, 1, y.q, y.v);
    memcpy(y.a, s->prescribed_acc, (n - 1) * sizeof(double));
    return y;
}

static void values_free(Values *y, int n_sets)
{
    for (int k = 0; k < n_sets; k++)
        free(y->data[k]), free(y->elab[k]);
    free(y->data), free(y->elab), free(y->fext), free(y->q), free(y->v), free(y->a);
}

/* sum_i w_i f_i */
static void combine(const double *w, double *const *f, size_t n, double *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = w[0] * f[0][i] + w[1] * f[1][i] + w[2] * f[2][i] + w[3] * f[3][i];
}

/* max |a - b| / max(max |b|, noise / TOL), noise the differences' rounding error: 100 ulps of
 * the values (of largest magnitude `size`) times the weights' sum 1.5 / h. So a tangent passes
 * when it is within TOL of the differences' scale or within their rounding (a zero derivative
 * the differences give as round-off). */
static double rel_error(const double *a, const double *b, size_t n, double size, double h, double *scale)
{
    double e = 0, s = 0, noise = 100 * DBL_EPSILON * size * 1.5 / h;
    for (size_t i = 0; i < n; i++)
        e = fmax(e, fabs(a[i] - b[i])), s = fmax(s, fabs(b[i]));
    *scale = s;
    return e / fmax(s, fmax(noise / TOL, 1e-300));
}

static double largest(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s = fmax(s, fabs(v[i]));
    return s;
}

/* Fourth-order differences of the four samples' values along param k. */
typedef struct Diffs {
    double **data, **elab, *fext, *q, *v, *a, *dE;
    double  *size_data, size_fext, size_q, size_v, size_a, h; /* the values' magnitudes, the step */
} Diffs;

static Diffs differences(const srd_model *m, Values *y, Sample *x, const double *w, double h)
{
    Diffs d;
    d.h = h;
    size_t n = (size_t)m->n_dofs;
    d.data = srd_xcalloc((size_t)m->n_sets + 1, sizeof *d.data);
    d.size_data = srd_xcalloc((size_t)m->n_sets + 1, sizeof(double));
    d.elab = srd_xcalloc((size_t)m->n_sets + 1, sizeof *d.elab);
    for (int k = 0; k < m->n_sets; k++) {
        size_t len = (size_t)m->sets[k].n * (size_t)m->sets[k].n_data;
        double *f[4] = { y[0].data[k], y[1].data[k], y[2].data[k], y[3].data[k] };
        double *e[4] = { y[0].elab[k], y[1].elab[k], y[2].elab[k], y[3].elab[k] };
        d.data[k] = srd_xcalloc(len + 1, sizeof(double)), d.elab[k] = srd_xcalloc(len + 1, sizeof(double));
        combine(w, f, len, d.data[k]);
        combine(w, e, len, d.elab[k]);
        d.size_data[k] = largest(f[2], len);
    }
    d.size_fext = largest(y[2].fext, n), d.size_q = largest(y[2].q, n), d.size_v = largest(y[2].v, n);
    d.size_a = largest(y[2].a, n);
    double *f[4];
    d.fext = srd_xcalloc(n + 1, sizeof(double)), d.q = srd_xcalloc(n + 1, sizeof(double));
    d.v = srd_xcalloc(n + 1, sizeof(double)), d.a = srd_xcalloc(n + 1, sizeof(double));
    for (int i = 0; i < 4; i++) f[i] = y[i].fext;
    combine(w, f, n, d.fext);
    for (int i = 0; i < 4; i++) f[i] = y[i].q;
    combine(w, f, n, d.q);
    for (int i = 0; i < 4; i++) f[i] = y[i].v;
    combine(w, f, n, d.v);
    for (int i = 0; i < 4; i++) f[i] = y[i].a;
    combine(w, f, n, d.a);
    d.dE = srd_xcalloc((size_t)m->n_objects + 1, sizeof(double));
    for (int o = 0; o < m->n_objects; o++)
        for (int i = 0; i < 4; i++)
            d.dE[o] += w[i] * x[i].m->objects[o].E;
    return d;
}

static void diffs_free(Diffs *d, int n_sets)
{
    for (int k = 0; k < n_sets; k++)
        free(d->data[k]), free(d->elab[k]);
    free(d->data), free(d->elab), free(d->fext), free(d->q), free(d->v), free(d->a), free(d->dE), free(d->size_data);
}

/* The held DOFs' entries of v (others zero), as the dynamic derivative takes them. */
static void held_only(const srd_sim *s, double *v)
{
    for (int d = 0; d < s->m->n_dofs; d++)
        if (s->solver.sys.free_index[d] >= 0)
            v[d] = 0;
}

/* The exact tangents along param k against the differences d. */
static void compare(Base *b, int k, Diffs *d)
{
    const srd_model *m = b->x.m;
    srd_sim *s = &b->x.s;
    const srd_param *p = &m->params[k];
    size_t n = (size_t)m->n_dofs;
    /* The static tangent as dynamic.c takes it: the sims' data (after schedules), with the E
     * schedules' bases from the elaborated data. */
    double **dd = srd_xcalloc((size_t)m->n_sets + 1, sizeof *dd);
    for (int j = 0; j < m->n_sets; j++) {
        size_t len = (size_t)m->sets[j].n * (size_t)m->sets[j].n_data;
        dd[j] = srd_xcalloc(len + 1, sizeof(double));
        memcpy(dd[j], d->data[j], len * sizeof(double));
        for (size_t i = 0; i < len; i++)
            dd[j][i] += 1e3 * (i + 1); /* garbage where the schedules write: must be overwritten */
    }
    /* ... but the columns no schedule writes keep the differences: put them back. */
    for (int j = 0; j < m->n_sets; j++) {
        size_t len = (size_t)m->sets[j].n * (size_t)m->sets[j].n_data;
        for (size_t i = 0; i < len; i++)
            if (d->data[j][i] == d->elab[j][i])
                dd[j][i] = d->data[j][i];
    }
    schedule_tangents_static_base(&s->schedules, m, (const double *const *)d->elab, dd);
    double *dfext = srd_xcalloc(n + 1, sizeof(double)), *dq = srd_xcalloc(n + 1, sizeof(double));
    double *dv = srd_xcalloc(n + 1, sizeof(double)), *da = srd_xcalloc(n + 1, sizeof(double));
    /* dfext starts at the constant forces' tangent: zero (no gravity, every load moves in time) */
    double hk = schedule_switch_step(p), *dp = unit_seed(m, k);
    bool kink = schedule_tangents_apply(b->T, &s->schedules, m, s->params, dp, hk, T, DT, H, d->dE, dd, dfext);
    kink |= schedule_tangents_motion(b->T, &s->schedules, m, s->params, dp, hk, T, DT, s->fixed, dq, dv, da);
    free(dp);
    double worst = 0, scale;
    for (int j = 0; j < m->n_sets; j++) {
        size_t len = (size_t)m->sets[j].n * (size_t)m->sets[j].n_data;
        double e = rel_error(dd[j], d->data[j], len, d->size_data[j], d->h, &scale);
        if (scale > 0 || e > 0)
            printf("#   %s: set %s: relative %.2e of %.3e\n", p->name, m->sets[j].kind, e, scale);
        worst = fmax(worst, e);
    }
    check(&tally, worst <= TOL, "d(element data)/d(%s) at t = %g s against differences: relative %.2e (tol %.0e)",
          p->name, T, worst, TOL);
    double e = rel_error(dfext, d->fext, n, d->size_fext, d->h, &scale);
    check(&tally, e <= TOL, "d(fext)/d(%s) against differences: relative %.2e of %.3e (tol %.0e)", p->name, e, scale,
          TOL);
    held_only(s, d->q), held_only(s, d->v), held_only(s, d->a), held_only(s, dq), held_only(s, dv), held_only(s, da);
    for (int d0 = 0; d0 < m->n_dofs; d0++) /* twists of rotated edges: not derived */
        if (m->dof_kind[d0] > 2)
            d->q[d0] = d->v[d0] = d->a[d0] = dq[d0] = dv[d0] = da[d0] = 0;
    int moved = 0; /* the rotation's moved node (tail's last) and the move's (leg's end) */
    for (int i = 0; i < m->n_nodes; i++)
        moved += m->dof_fixed[m->node_dof[i]] && fabs(dq[m->node_dof[i]]) + fabs(dq[m->node_dof[i] + 1]) > 0;
    if (k <= 1)
        check(&tally, moved == 2, "along %s, the move and the rotation move their nodes (%d moved)", p->name, moved);
    double eq = rel_error(dq, d->q, n, d->size_q, d->h, &scale), ev = rel_error(dv, d->v, n, d->size_v, d->h, &scale);
    double ea = rel_error(da, d->a, n, d->size_a, d->h, &scale);
    check(&tally, eq <= TOL && ev <= TOL && ea <= TOL,
          "d(held q, v, a)/d(%s) (a move and a rotation) against differences: relative %.2e, %.2e, %.2e (tol %.0e)",
          p->name, eq, ev, ea, TOL);
    check(&tally, !kink, "no switch within reach along %s (max(F, c) is %g N from its switch)", p->name,
          m->params[4].value - m->params[2].value);
    for (int j = 0; j < m->n_sets; j++)
        free(dd[j]);
    free(dd), free(dfext), free(dq), free(dv), free(da);
}

static void check_param(Base *b, const char *text, int k)
{
    const srd_param *p = &b->x.m->params[k];
    double h = 1e-3 * fabs(p->value), w[4] = { 1 / (12 * h), -8 / (12 * h), 8 / (12 * h), -1 / (12 * h) };
    double at[4] = { p->value - 2 * h, p->value - h, p->value + h, p->value + 2 * h };
    Sample x[4];
    Values y[4];
    bool ok = true;
    for (int i = 0; i < 4; i++) {
        char spec[256];
        elab_format_override(spec, sizeof spec, p, at[i]);
        ok &= sample_open(&x[i], text, &b->kt.table, spec);
        if (x[i].ok)
            y[i] = values_at(&x[i]);
    }
    check(&tally, ok, "the model elaborates at %s +- h, +- 2h", p->name);
    if (ok) {
        Diffs d = differences(b->x.m, y, x, w, h);
        compare(b, k, &d);
        diffs_free(&d, b->x.m->n_sets);
    }
    for (int i = 0; i < 4; i++) {
        if (x[i].ok)
            values_free(&y[i], x[i].m->n_sets);
        sample_close(&x[i]);
    }
}

/* Whether the schedules are not smooth in param k at T (the data's static tangent: zero). */
static bool switches(Base *b, int k)
{
    const srd_model *m = b->x.m;
    srd_sim *s = &b->x.s;
    double **dd = srd_xcalloc((size_t)m->n_sets + 1, sizeof *dd);
    for (int j = 0; j < m->n_sets; j++)
        dd[j] = srd_xcalloc((size_t)m->sets[j].n * (size_t)m->sets[j].n_data + 1, sizeof(double));
    size_t n = (size_t)m->n_dofs + 1;
    double *dfext = srd_xcalloc(n, sizeof(double)), *dq = srd_xcalloc(n, sizeof(double));
    double *dv = srd_xcalloc(n, sizeof(double)), *da = srd_xcalloc(n, sizeof(double));
    double hk = schedule_switch_step(&m->params[k]), *dp = unit_seed(m, k);
    bool kink = schedule_tangents_apply(b->T, &s->schedules, m, s->params, dp, hk, T, DT, H, NULL, dd, dfext);
    kink |= schedule_tangents_motion(b->T, &s->schedules, m, s->params, dp, hk, T, DT, s->fixed, dq, dv, da);
    free(dp);
    for (int j = 0; j < m->n_sets; j++)
        free(dd[j]);
    free(dd), free(dfext), free(dq), free(dv), free(da);
    return kink;
}

/* max(F, c) with c 1 uN above F = 4 mN: within 2 h = 8 uN of F's stencil and c's; 10 uN above,
 * out of reach. periodic(t, P) wraps (floor) at t = P: at T itself, it is not smooth in P (but
 * in F, which only scales it); 3 ms later it is. */
static void check_switch(void)
{
    char text[4096];
    snprintf(text, sizeof text, MODEL, "4.001 mN", "50 ms");
    Base b;
    if (base_open(&b, text)) {
        check(&tally, switches(&b, 2), "max(F, c) 1 uN from its switch is not smooth in F (2 hk = 8 uN)");
        check(&tally, switches(&b, 4), "... nor in c");
        check(&tally, !switches(&b, 1), "... but smooth in w, which it does not read");
    }
    base_close(&b);
    snprintf(text, sizeof text, MODEL, "4.01 mN", "37 ms");
    if (base_open(&b, text)) {
        check(&tally, !switches(&b, 2), "max(F, c) 10 uN from its switch is smooth in F (2 hk = 8 uN)");
        check(&tally, switches(&b, 5), "periodic(t, P) at t = P is not smooth in P");
        check(&tally, !switches(&b, 2), "... but smooth in F");
    }
    base_close(&b);
    snprintf(text, sizeof text, MODEL, "4.01 mN", "40 ms");
    if (base_open(&b, text))
        check(&tally, !switches(&b, 5), "periodic(t, P) 3 ms before its wrap is smooth in P");
    base_close(&b);
}

int main(void)
{
    char text[4096];
    snprintf(text, sizeof text, MODEL, "5 mN", "30 ms");
    Base b;
    if (base_open(&b, text))
        for (int k = 0; k < N_PARAMS; k++)
            check_param(&b, text, k);
    base_close(&b);
    check_switch();
    diag_reset();
    printf("%d passed, %d failed\n", tally.run - tally.failed, tally.failed);
    return tally.failed != 0;
}
