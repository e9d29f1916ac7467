/* dynamic_explicit.c — the sensitivities of explicit steps: symplectic Euler, Verlet and RK4 as
 * sim.c's explicit_step takes them. A record's step is replayed from its start through the
 * runtime's own accelerations (srd_sim_acceleration), which gives the points its forces were read
 * at. A tangent goes through the same stages, each acceleration's change from
 * dyn_acceleration_tangent; the adjoint goes back through them with the transposes. The DOFs
 * prescribed motion drives take the motion's tangents wherever the runtime imposes it. */
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "sens/dynamic_run.h"
#include "sens/state_tangent.h"

enum { MAX_STAGES = 4 };

/* A method's stages as linear maps, in units of dt: stage i (and, as row n, the step's end) is
 * q = q0 + sum_j<i (P[i][j] dt v_j + Q[i][j] dt^2 a_j), v = v0 + sum_j<i R[i][j] dt a_j, with v_j
 * and a_j stage j's velocity and acceleration, at time t0 + c[i] dt. */
typedef struct Scheme {
    int    n;
    double c[MAX_STAGES];
    double P[MAX_STAGES + 1][MAX_STAGES], Q[MAX_STAGES + 1][MAX_STAGES], R[MAX_STAGES + 1][MAX_STAGES];
} Scheme;

static Scheme scheme_of(srd_method method)
{
    Scheme s = { 0 };
    if (method == SRD_SYMPLECTIC_EULER) { /* v1 = v0 + dt a0, q1 = q0 + dt v1 */
        s.n = 1;
        s.P[1][0] = s.Q[1][0] = s.R[1][0] = 1;
    } else if (method == SRD_VERLET) { /* half kick, drift, force at the end, half kick */
        s.n = 2;
        s.c[1] = 1;
        for (int i = 1; i <= 2; i++)
            s.P[i][0] = 1, s.Q[i][0] = 0.5, s.R[i][0] = 0.5;
        s.R[2][1] = 0.5;
    } else { /* classical RK4 on (q, v) */
        static const double c[4] = { 0, 0.5, 0.5, 1 }, w[4] = { 1, 2, 2, 1 };
        s.n = 4;
        for (int i = 0; i < 4; i++) {
            s.c[i] = c[i];
            if (i > 0)
                s.P[i][i - 1] = s.R[i][i - 1] = c[i];
            s.P[4][i] = s.R[4][i] = w[i] / 6;
        }
    }
    return s;
}

/* The values at a step's stages (replayed), or their tangents or adjoints. */
typedef struct Stages {
    double *q[MAX_STAGES], *v[MAX_STAGES], *a[MAX_STAGES], t[MAX_STAGES];
} Stages;

static Stages stages_new(const DynamicRun *r)
{
    Stages st;
    for (int i = 0; i < MAX_STAGES; i++) {
        st.q[i] = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
        st.v[i] = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
        st.a[i] = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
        st.t[i] = 0;
    }
    return st;
}

static void stages_free(Stages *st)
{
    for (int i = 0; i < MAX_STAGES; i++)
        free(st->q[i]), free(st->v[i]), free(st->a[i]);
}

bool dyn_explicit(const DynamicRun *r) { return r->method >= SRD_SYMPLECTIC_EULER; }

/* Row i of scheme sc over a step dt from (q0, v0) and the stages before it: into q, v. */
static void combine(const Scheme *sc, int i, double dt, const double *q0, const double *v0, const Stages *st,
                    int n, double *q, double *v)
{
    for (int d = 0; d < n; d++) {
        double qd = q0[d], vd = v0[d];
        for (int j = 0; j < i && j < sc->n; j++) {
            qd += sc->P[i][j] * dt * st->v[j][d] + sc->Q[i][j] * dt * dt * st->a[j][d];
            vd += sc->R[i][j] * dt * st->a[j][d];
        }
        q[d] = qd, v[d] = vd;
    }
}

/* The sim at record x's start, and the step's stages as the runtime took them. */
static void replay(DynamicRun *r, const Record *x, const Scheme *sc, Stages *st)
{
    srd_sim *s = &r->b->s;
    dyn_put_record(r, x);
    for (int i = 0; i < sc->n; i++) {
        st->t[i] = x->t - x->dt + sc->c[i] * x->dt;
        combine(sc, i, x->dt, x->q0, x->v0, st, r->n_dofs, st->q[i], st->v[i]);
        srd_motion_impose(s, st->t[i], 1, st->q[i], st->v[i]);
        srd_sim_acceleration(s, st->t[i], st->q[i], st->v[i], st->a[i]);
    }
}

/* Where the runtime imposes the prescribed motion (a stage after the first, the end): the held
 * DOFs' tangents are the motion's (track t at that time). */
static void hold(const DynamicRun *r, const Track *t, double *dq, double *dv)
{
    for (int d = 0; d < r->n_dofs; d++)
        if (r->b->s.solver.sys.free_index[d] < 0)
            dq[d] = t->dmq[d], dv[d] = t->dmv[d];
}

/* Track k at time `at`; a param it finds underived (a moving clamp's line) leaves the pass. */
static Track *track_at(DynamicRun *r, int k, double at, double h, int *status)
{
    Track *t = &r->tracks[k];
    dyn_track_at(r, t, at, h);
    if (status[k] == STATIC_DERIVED && t->status != STATIC_DERIVED)
        status[k] = t->status;
    return t;
}

/* ---- forward ---- */

/* Param k's tangent at stage i of the step (the earlier stages' in d): its inputs and acceleration. */
static void stage_tangent(DynamicRun *r, const Scheme *sc, const Stages *st, int i, int k, const Record *x,
                          Tan *in, Stages *d, int *status, double *g)
{
    Track *t = track_at(r, k, st->t[i], x->dt, status);
    combine(sc, i, x->dt, in->q, in->v, d, r->n_dofs, d->q[i], d->v[i]);
    if (i > 0)
        hold(r, t, d->q[i], d->v[i]);
    Tan at = { d->q[i], d->v[i], d->a[i], in->S, NULL };
    AccelPoint e = { st->q[i], st->v[i], st->a[i], st->t[i] };
    dyn_acceleration_tangent(r, &e, t, in->q, &at, g);
}

/* Param k's tangent at the step's end from its stages' (d), into out, then swapped into in. */
static void end_tangent(DynamicRun *r, const Scheme *sc, const Record *x, int k, Tan *in, const Stages *d,
                        Tan *out, int *status)
{
    srd_sim *s = &r->b->s;
    const Track *t = track_at(r, k, x->t, x->dt, status);
    combine(sc, sc->n, x->dt, in->q, in->v, d, r->n_dofs, out->q, out->v);
    hold(r, t, out->q, out->v);
    for (int j = 0; j < r->n_sets; j++)
        srd_state_tangent(s->m, j, &s->kernels[j].info, x->S0[j], x->q0, x->q1, in->S[j], in->q, out->q, out->S[j]);
    dyn_tan_swap(in, out);
}

void dyn_explicit_forward(DynamicRun *r, const Record *x, Tan *tans, int *status)
{
    srd_sim *s = &r->b->s;
    Scheme sc = scheme_of(r->method);
    Stages st = stages_new(r), *d = srd_xcalloc((size_t)r->n_params + 1, sizeof *d);
    replay(r, x, &sc, &st); /* first: a release done by then frees more rows */
    double *g = srd_xcalloc(srd_system_grad_len(&s->solver.sys) + 1, sizeof(double));
    for (int k = 0; k < r->n_params; k++)
        if (status[k] == STATIC_DERIVED)
            d[k] = stages_new(r);
    for (int i = 0; i < sc.n; i++) {
        srd_sim_apply_schedules(s, st.t[i]); /* the data stage i read */
        for (int k = 0; k < r->n_params; k++)
            if (status[k] == STATIC_DERIVED)
                stage_tangent(r, &sc, &st, i, k, x, &tans[k], &d[k], status, g);
    }
    Tan out = dyn_tan_new(r);
    for (int k = 0; k < r->n_params; k++)
        if (d[k].q[0]) {
            if (status[k] == STATIC_DERIVED)
                end_tangent(r, &sc, x, k, &tans[k], &d[k], &out, status);
            stages_free(&d[k]);
        }
    dyn_tan_free(r, &out);
    stages_free(&st);
    free(d), free(g);
}

/* ---- adjoint ---- */

/* The held DOFs' adjoints of (q, v) where the runtime imposes the motion: into the pull's, and
 * cleared. Whether any was nonzero. */
static bool release_held(const DynamicRun *r, double *lq, double *lv, Pull *p)
{
    bool any = false;
    for (int d = 0; d < r->n_dofs; d++)
        if (r->b->s.solver.sys.free_index[d] < 0) {
            p->lmq[d] += lq[d], p->lmv[d] += lv[d];
            any |= lq[d] != 0 || lv[d] != 0;
            lq[d] = lv[d] = 0;
        }
    return any;
}

/* The transpose of row i of the scheme (combine) with the adjoints lq, lv of its (q, v): into the
 * start's and the earlier stages'. */
static void combine_adjoint(const Scheme *sc, int i, double dt, const double *lq, const double *lv, Tan *start,
                            Stages *l, int n)
{
    for (int d = 0; d < n; d++) {
        start->q[d] += lq[d], start->v[d] += lv[d];
        for (int j = 0; j < i && j < sc->n; j++) {
            l->v[j][d] += sc->P[i][j] * dt * lq[d];
            l->a[j][d] += sc->Q[i][j] * dt * dt * lq[d] + sc->R[i][j] * dt * lv[d];
        }
    }
}

/* Stage i's transpose: its acceleration's adjoint l->a[i] into its (q, v)'s and the step start's
 * (q0, the state), the params' reads at its time into grad; then its (q, v)'s into the earlier
 * stages' and the start's. */
static void stage_adjoint(DynamicRun *r, const Scheme *sc, const Stages *st, int i, const Record *x, Stages *l,
                          Tan *start, Pull *p, double *lres, double *grad, int *status)
{
    srd_sim *s = &r->b->s;
    if (i < sc->n - 1) /* the replay left the last stage's data */
        srd_sim_apply_schedules(s, st->t[i]);
    dyn_pull_clear(r, p);
    AccelPoint e = { st->q[i], st->v[i], st->a[i], st->t[i] };
    Tan at = { l->q[i], l->v[i], NULL, start->S, NULL };
    dyn_acceleration_adjoint(r, &e, l->a[i], lres, &at, p);
    dyn_residual_adjoint(r, &e, lres, &at, start->q, p);
    if (i > 0)
        release_held(r, l->q[i], l->v[i], p);
    dyn_pull_params(r, p, st->t[i], x->dt, grad, status);
    combine_adjoint(sc, i, x->dt, l->q[i], l->v[i], start, l, r->n_dofs);
}

/* The adjoint `end` of record x's end (its q and state; then its v) to the step's start and
 * stages: the state's transpose, the motion the end holds, the end's row of the scheme. */
static void end_adjoint(DynamicRun *r, const Scheme *sc, const Record *x, Tan *end, Tan *start, Stages *l, Pull *p,
                        double *grad, int *status)
{
    srd_sim *s = &r->b->s;
    size_t n = (size_t)r->n_dofs;
    double *lq1 = dyn_dup(end->q, n), *lv1 = dyn_dup(end->v, n);
    for (int j = 0; j < r->n_sets; j++)
        srd_state_adjoint(s->m, j, &s->kernels[j].info, x->S0[j], x->q0, x->q1, end->S[j], start->S[j], start->q, lq1);
    dyn_pull_clear(r, p);
    if (release_held(r, lq1, lv1, p)) /* the motion's reads: nothing else is pulled here */
        dyn_pull_params(r, p, x->t, x->dt, grad, status);
    combine_adjoint(sc, sc->n, x->dt, lq1, lv1, start, l, r->n_dofs);
    free(lq1), free(lv1);
}

static void tan_clear(const DynamicRun *r, Tan *t)
{
    size_t n = sizeof(double) * (size_t)r->n_dofs;
    memset(t->q, 0, n), memset(t->v, 0, n), memset(t->a, 0, n);
    for (int k = 0; k < r->n_sets; k++)
        memset(t->S[k], 0, sizeof(double) * dyn_set_state_len(&r->b->s, k));
}

void dyn_explicit_adjoint(DynamicRun *r, const Record *x, Tan *end, Tan *start, Pull *p, double *grad, int *status)
{
    srd_sim *s = &r->b->s;
    Scheme sc = scheme_of(r->method);
    Stages st = stages_new(r), l = stages_new(r);
    replay(r, x, &sc, &st); /* first: a release done by then frees more rows */
    double *lres = srd_xcalloc(srd_system_grad_len(&s->solver.sys) + 1, sizeof(double));
    tan_clear(r, start);
    end_adjoint(r, &sc, x, end, start, &l, p, grad, status);
    for (int i = sc.n - 1; i >= 0; i--)
        stage_adjoint(r, &sc, &st, i, x, &l, start, p, lres, grad, status);
    stages_free(&st), stages_free(&l);
    free(lres);
    dyn_tan_swap(end, start);
}
