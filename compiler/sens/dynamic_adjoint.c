/* dynamic_adjoint.c — the discrete adjoint of a recorded simulation (see dynamic.h): backward
 * through its steps, one transposed solve per step, with the transposes of the pieces the forward
 * pass carries (dynamic_forward.c), the force probes' seeds and the samples' transposes. */
#include "sens/dynamic_run.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "clock.h"
#include "sens/control_tangent.h"
#include "sens/static.h"
#include "sens/state_tangent.h"
#include "sens/body_tangent.h"
#include "probe.h"
#include "vec3.h"

/* ---- adjoint ---- */

static Pull pull_new(const DynamicRun *r)
{
    Pull p;
    p.lc = srd_xcalloc((size_t)r->n_sets + 1, sizeof *p.lc);
    for (int k = 0; k < r->n_sets; k++)
        p.lc[k] = srd_xcalloc((size_t)r->b->m->sets[k].n * (size_t)r->b->m->sets[k].n_data + 1, sizeof(double));
    p.lp = srd_xcalloc((size_t)r->n_params + 1, sizeof(double));
    p.lfext = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    p.lM = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    p.lalpha = p.lbeta = 0;
    p.lK = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    p.lq_eval = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    p.lq_end = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    p.lmq = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    p.lmv = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    p.lma = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    p.lJ = srd_xcalloc(3 * (size_t)r->b->m->n_bodies + 1, sizeof(double));
    return p;
}

/* Set k's data as the sim holds them now (a contact pairs' set: the step's pairs). */
static size_t data_len(const DynamicRun *r, int k)
{
    const srd_elem_batch *bt = &r->b->s.kernels[k].batch.b;
    return (size_t)bt->n * (size_t)bt->n_data;
}

/* Zeroes the pull, its data adjoints sized to the sets' instances now. */
void dyn_pull_clear(const DynamicRun *r, Pull *p)
{
    for (int k = 0; k < r->n_sets; k++) {
        p->lc[k] = srd_xrealloc(p->lc[k], sizeof(double) * (data_len(r, k) + 1));
        memset(p->lc[k], 0, sizeof(double) * data_len(r, k));
    }
    memset(p->lp, 0, sizeof(double) * (size_t)r->n_params);
    memset(p->lfext, 0, sizeof(double) * (size_t)r->n_dofs);
    memset(p->lq_eval, 0, sizeof(double) * (size_t)r->n_dofs);
    memset(p->lq_end, 0, sizeof(double) * (size_t)r->n_dofs);
    memset(p->lmq, 0, sizeof(double) * (size_t)r->n_dofs);
    memset(p->lmv, 0, sizeof(double) * (size_t)r->n_dofs);
    memset(p->lma, 0, sizeof(double) * (size_t)r->n_dofs);
}

static void pull_free(const DynamicRun *r, Pull *p)
{
    for (int k = 0; k < r->n_sets; k++)
        free(p->lc[k]);
    free(p->lc), free(p->lp), free(p->lfext), free(p->lM), free(p->lq_eval), free(p->lq_end);
    free(p->lmq), free(p->lmv), free(p->lma), free(p->lK), free(p->lJ);
}

/* The transpose of rates_tangent: from the adjoints of v1, a1 into those of q1 and the start. */
static void rates_adjoint(const DynamicRun *r, double dt, const Tan *end, double *lq1, Tan *start)
{
    const srd_system *sys = &r->b->s.solver.sys;
    for (int d = 0; d < r->n_dofs; d++) {
        double lv = end->v[d], la = end->a[d];
        if (sys->free_index[d] < 0) { /* the motion's rates (pull_params); a is kept but by Newmark */
            start->a[d] += r->method == SRD_NEWMARK ? 0 : la;
            continue;
        }
        if (r->method == SRD_IMPLICIT_EULER) {
            lq1[d] += lv / dt, start->q[d] -= lv / dt, start->a[d] += la;
        } else if (r->method == SRD_IMPLICIT_MIDPOINT) {
            lq1[d] += 2 * lv / dt, start->q[d] -= 2 * lv / dt, start->v[d] -= lv, start->a[d] += la;
        } else {
            double A = la + 0.5 * dt * lv; /* the adjoint of a1, through v1 too */
            lq1[d] += 4 * A / (dt * dt), start->q[d] -= 4 * A / (dt * dt);
            start->v[d] += lv - 4 * A / dt;
            start->a[d] += 0.5 * dt * lv - A;
        }
    }
}

/* The transpose of step_rhs with lambda lg (free rows): into the start's adjoints and p. */
/* Whether stiffness-proportional damping takes part: the model's, or a param's. */
static bool beta_moves(const DynamicRun *r)
{
    for (int k = 0; r->tracks && k < r->n_params; k++)
        if (r->tracks[k].dbeta != 0)
            return true;
    return r->b->m->damping_beta > 0;
}

/* The transpose of stiffness_tangent with lambda (free rows, or every DOF's): into lq (the
 * configuration's), lq0 (the step start's), lS (per set) and the pull's data and params. */
static void stiffness_adjoint(DynamicRun *r, const srd_eval_ctx *ctx, const double *u, const double *lambda,
                              bool every, double *lq, double *lq0, double **lS, Pull *p)
{
    srd_sim *s = &r->b->s;
    for (int k = 0; k < r->n_sets; k++) {
        if (!dyn_stiffness_set(s, k))
            continue;
        double *data, *ddata;
        srd_elem_batch e = dyn_with_direction(s, k, every, u, NULL, &data, &ddata);
        InputAdjoints out = { lq, lq0, NULL, lS[k], ddata, p->lp }; /* ddata: the wide data's adjoint */
        kernel_tangent_adjoint(&r->b->hessian_tangents[k], ctx, &e, lambda, r->n_dofs, &out);
        int nd0 = s->kernels[k].batch.b.n_data, w = e.n_data;
        for (int i = 0; i < e.n; i++)
            for (int c = 0; c < nd0; c++)
                p->lc[k][(size_t)i * nd0 + c] += ddata[(size_t)i * w + c];
        free(data), free(ddata);
    }
}

/* Adds K^T lambda (lambda by free row, or by DOF: every) into lq (by DOF). */
static void stiffness_transposed(DynamicRun *r, const srd_eval_ctx *ctx, const double *lambda, bool every, double *lq)
{
    srd_sim *s = &r->b->s;
    for (int k = 0; k < r->n_sets; k++) {
        InputAdjoints out = { .lq = lq };
        srd_elem_batch b = dyn_rows_batch(s, k, every);
        if (dyn_stiffness_set(s, k))
            kernel_tangent_adjoint(&r->b->tangents[k], ctx, &b, lambda, r->n_dofs, &out);
    }
}

/* lambda . (K u) for lambda by free row (or by DOF: every). */
static double along_stiffness(DynamicRun *r, const srd_eval_ctx *at, const double *u, const double *lambda, bool every)
{
    srd_sim *s = &r->b->s;
    double *ku = srd_xcalloc(dyn_rows_len(s, every), sizeof(double));
    srd_eval_ctx ctx = *at;
    ctx.grad = ku;
    dyn_stiffness_times(r, &ctx, u, every);
    double sum = dyn_dot(lambda, ku, every ? (size_t)r->n_dofs : (size_t)s->solver.sys.n_free);
    free(ku);
    return sum;
}

/* The transpose of beta_tangent with lambda (free rows, or every DOF's), K at configuration q with
 * step start q0: K^T lambda into lK (by DOF, overwritten: the caller scales it into its du's
 * sources), beta dK[u]'s into lq, lq0, lS and the pull, lambda . K u into lbeta. */
static void beta_pull(DynamicRun *r, const double *q, const double *q0, const double *u, const double *lambda,
                      bool every, double *lK, double *lq, double *lq0, double **lS, Pull *p)
{
    srd_sim *s = &r->b->s;
    double beta = s->m->damping_beta;
    size_t rows = every ? (size_t)r->n_dofs : (size_t)s->solver.sys.n_free;
    double *lb = srd_xcalloc(dyn_rows_len(s, every), sizeof(double)), *l = srd_xcalloc(dyn_rows_len(s, every), sizeof(double));
    memcpy(l, lambda, rows * sizeof(double));
    dyn_drop_multiplier_rows(r, l, every); /* the damping stiffness has none */
    for (size_t i = 0; i < rows; i++)
        lb[i] = beta * l[i];
    srd_eval_ctx ctx = dyn_stiffness_ctx(s, q, q0, NULL);
    memset(lK, 0, sizeof(double) * (size_t)r->n_dofs);
    stiffness_transposed(r, &ctx, l, every, lK);
    if (beta > 0)
        stiffness_adjoint(r, &ctx, u, lb, every, lq, lq0, lS, p);
    p->lbeta += along_stiffness(r, &ctx, u, l, every);
    free(lb), free(l);
}

/* The transpose of beta_rhs with lambda lg: K0^T lambda (kept in p->lK for the slides) into the
 * start's q and v, beta dK0[u]'s into the start's q (K0 reads q0 as both), state and the pull. */
static void beta_adjoint(DynamicRun *r, const Record *x, const double *lg, Tan *start, Pull *p)
{
    srd_sim *s = &r->b->s;
    double beta = s->m->damping_beta, c1, c0, *u = dyn_damped_velocities(r, x);
    dyn_damping_constants(r, x->dt, &c1, &c0);
    beta_pull(r, x->q0, x->q0, u, lg, false, p->lK, start->q, start->q, start->S, p);
    for (int d = 0; d < r->n_dofs; d++) /* a held DOF's end share goes to its motion (motion_adjoint) */
        if (dyn_damps(r, d))
            start->q[d] -= beta * c1 * p->lK[d], start->v[d] += beta * c0 * p->lK[d];
    free(u);
}

/* The transpose of split_set_tangent (dynamic_forward.c): the force rows' lambda at the evaluation
 * point into out, the constraints' at the end into out's other inputs and lq_end (the end's). */
static void split_set_adjoint(DynamicRun *r, int k, const srd_eval_ctx *ctx, const double *lg, InputAdjoints *out,
                              double *lq_end)
{
    srd_sim *s = &r->b->s;
    size_t len = srd_system_grad_len(&s->solver.sys);
    double *forces = dyn_dup(lg, len), *ends = srd_xcalloc(len, sizeof(double));
    dyn_drop_multiplier_rows(r, forces, false);
    for (int j = 0; j < s->n_lambda_rows; j++)
        ends[s->lambda_rows[j]] = lg[s->lambda_rows[j]];
    kernel_tangent_adjoint(&r->b->tangents[k], ctx, &s->kernels[k].batch.b, forces, r->n_dofs, out);
    srd_eval_ctx end = *ctx;
    end.q = s->q;
    InputAdjoints at_end = *out;
    at_end.lq = lq_end;
    kernel_tangent_adjoint(&r->b->tangents[k], &end, &s->kernels[k].batch.b, ends, r->n_dofs, &at_end);
    free(forces), free(ends);
}

static void rhs_adjoint(DynamicRun *r, const Record *x, const double *lg, Tan *start, Pull *p)
{
    srd_sim *s = &r->b->s;
    const srd_model *m = s->m;
    double b = s->stiffness_b, a = s->inertia_a, dt = x->dt, alpha = m->damping_alpha, c1, c0;
    dyn_damping_constants(r, dt, &c1, &c0);
    srd_eval_ctx ctx = dyn_step_ctx(s, NULL);
    dyn_pull_clear(r, p);
    for (int k = 0; k < r->n_sets; k++) {
        InputAdjoints out = { p->lq_eval, start->q, start->v, start->S[k], p->lc[k], p->lp };
        if (dyn_split_set(s, k))
            split_set_adjoint(r, k, &ctx, lg, &out, p->lq_end);
        else
            kernel_tangent_adjoint(&r->b->tangents[k], &ctx, &s->kernels[k].batch.b, lg, r->n_dofs, &out);
    }
    for (int d = 0; d < r->n_dofs; d++) {
        int f = s->solver.sys.free_index[d];
        start->q[d] += dyn_multiplier(m, d) ? 0 : (1 - b) * p->lq_eval[d];
        if (f < 0)
            continue;
        double M = m->dof_mass[d], l = lg[f];
        start->q[d] -= a * M * l, start->v[d] -= a * M * dt * l;
        if (r->method == SRD_NEWMARK)
            start->a[d] -= a * M * 0.25 * dt * dt * l;
        p->lM[d] += a * (x->q1[d] - s->qhat[d]) * l;
        p->lfext[d] = -s->load_factor * l;
        double v = dyn_damped_velocity(r, x, d);
        start->q[d] -= alpha * M * c1 * l, start->v[d] += alpha * M * c0 * l;
        p->lM[d] += alpha * v * l;
        p->lalpha += M * v * l;
    }
    if (beta_moves(r))
        beta_adjoint(r, x, lg, start, p);
    dyn_bodies_rows_adjoint(r, x, lg, start, p->lJ);
}

/* grad[k] += what the record's data, loads and params' own reads contribute (at time at). */
void dyn_pull_params(DynamicRun *r, const Pull *p, double at, double h, double *grad, int *status)
{
    for (int k = 0; k < r->n_params; k++) {
        Track *t = &r->tracks[k];
        if (status[k] != STATIC_DERIVED)
            continue;
        dyn_track_at(r, t, at, h);
        if (t->status != STATIC_DERIVED) {
            status[k] = t->status; /* a moving clamp's line, seen at this step */
            continue;
        }
        double sum = p->lp[k] + dyn_dot(p->lfext, t->dfext, (size_t)r->n_dofs) + dyn_dot(p->lmq, t->dmq, (size_t)r->n_dofs) +
                     dyn_dot(p->lmv, t->dmv, (size_t)r->n_dofs) + dyn_dot(p->lma, t->dma, (size_t)r->n_dofs);
        for (int j = 0; j < r->n_sets; j++)
            sum += dyn_dot(p->lc[j], t->dc[j], data_len(r, j));
        grad[k] += sum;
    }
}

/* The adjoints of the driven DOFs' end position (through the states, the rates, the objective and
 * the elements' evaluation point b q1 + (1 - b) q0), velocity and Newmark's acceleration. */
static void motion_adjoint(const DynamicRun *r, const Record *x, const Tan *end, const double *lq1, Pull *p)
{
    const srd_sim *s = &r->b->s;
    double c1, c0, beta = beta_moves(r) ? s->m->damping_beta : 0; /* p->lK is this step's only then */
    dyn_damping_constants(r, x->dt, &c1, &c0);
    for (int d = 0; d < r->n_dofs; d++) { /* held DOFs too: a moving geometry holds them at its reference */
        if (s->solver.sys.free_index[d] >= 0)
            continue;
        p->lmq[d] = lq1[d] + s->stiffness_b * p->lq_eval[d] + p->lq_end[d] + (dyn_damps(r, d) ? beta * c1 * p->lK[d] : 0);
        p->lmv[d] = end->v[d];
        p->lma[d] = r->method == SRD_NEWMARK ? end->a[d] : 0;
    }
}

/* The transpose of the sliding nodes' part in a moving geometry (dyn_slide_tangent): it moves their
 * end (lq1), the elements' evaluation point (b of it) and the inertia and damping of the step. */
static void slides_adjoint(DynamicRun *r, const Record *x, const double *lq1, const double *lg, const Pull *p,
                           double *grad, const int *status)
{
    const srd_sim *s = &r->b->s;
    double c1, c0, a = s->inertia_a, alpha = s->m->damping_alpha;
    dyn_damping_constants(r, x->dt, &c1, &c0);
    double *w = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    double *turn = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    for (int k = 0; k < r->n_params && s->m->n_slides; k++) {
        const Track *t = &r->tracks[k];
        if (status[k] != STATIC_DERIVED || !(t->geometry || t->moves_anchor))
            continue;
        dyn_slide_tangent(r, t, x->q1, w);
        if (t->geometry) { /* sens_slides_turn_rows' transpose: the row along a turning line */
            memset(turn, 0, sizeof(double) * (size_t)s->solver.sys.n_free);
            sens_slides_turn_rows(s, r->slide_res, t->daxis, turn);
            grad[k] += dyn_dot(lg, turn, (size_t)s->solver.sys.n_free);
        }
        for (int d = 0; d < r->n_dofs; d++) {
            int f = s->solver.sys.free_index[d];
            if (f >= 0 && w[d] != 0)
                grad[k] += w[d] * (lq1[d] + s->stiffness_b * p->lq_eval[d] + p->lq_end[d] + (a + alpha * c1) * s->m->dof_mass[d] * lg[f] +
                                   s->m->damping_beta * c1 * p->lK[d]);
        }
    }
    free(w), free(turn);
}

/* Carries the adjoint `end` (of the state after linearised record x) to the state before it. */
static int adjoint_record(DynamicRun *r, const Record *x, Tan *end, Tan *start, Pull *p, double *lg, double *grad,
                          int *status)
{
    srd_sim *s = &r->b->s;
    size_t n = (size_t)r->n_dofs, len = srd_system_grad_len(&s->solver.sys);
    double *lq1 = dyn_dup(end->q, n);
    memset(start->q, 0, n * sizeof(double)), memset(start->v, 0, n * sizeof(double)), memset(start->a, 0, n * sizeof(double));
    memset(start->B, 0, sizeof(double) * SRD_BODY_TAN * (size_t)s->m->n_bodies);
    for (int k = 0; k < r->n_sets; k++) {
        memset(start->S[k], 0, dyn_set_state_len(s, k) * sizeof(double));
        srd_state_adjoint(s->m, k, &s->kernels[k].info, x->S0[k], x->q0, x->q1, end->S[k], start->S[k], start->q, lq1);
    }
    dyn_bodies_finish_adjoint(r, x, end, lq1, start, p->lJ);
    dyn_slides_project_velocity_adjoint(r, x, end->v, grad, status); /* the runtime's last word on v */
    rates_adjoint(r, x->dt, end, lq1, start);
    memset(lg, 0, len * sizeof(double));
    for (size_t d = 0; d < n; d++)
        if (s->solver.sys.free_index[d] >= 0)
            lg[s->solver.sys.free_index[d]] = lq1[d];
    int code = dyn_solve_step(s, lg, true);
    for (int f = 0; f < s->solver.sys.n_free; f++)
        lg[f] = -lg[f]; /* dq1 = -K^-1 g: the adjoint of g is -K^-T lambda_q1 */
    if (code == 0) {
        rhs_adjoint(r, x, lg, start, p);
        motion_adjoint(r, x, end, lq1, p);
        dyn_pull_params(r, p, x->t, x->dt, grad, status);
        slides_adjoint(r, x, lq1, lg, p, grad, status);
    }
    dyn_bodies_frames_adjoint(r, x, start); /* the frames the step's elements read: the axes' turn */
    dyn_bodies_settle(s, start->q); /* the rotation DOFs start at zero (bodies_at_start) */
    free(lq1);
    if (code)
        return -1;
    dyn_tan_swap(end, start);
    return 0;
}

/* The transpose of dyn_acceleration_tangent at point e, in two parts. The first, from la (the
 * acceleration's adjoint by DOF, projected onto the sliding lines in place): the residual's
 * adjoint (free rows) into lres, the velocity's into adj->v, the loads' into the pull, the
 * masses' and alpha's (summed over the run) too. */
void dyn_acceleration_adjoint(DynamicRun *r, const AccelPoint *e, double *la, double *lres, Tan *adj, Pull *p)
{
    srd_sim *s = &r->b->s;
    memset(lres, 0, sizeof(double) * srd_system_grad_len(&s->solver.sys));
    srd_slides_along(s, la); /* the projection onto the lines is its own transpose */
    for (int d = 0; d < r->n_dofs; d++) {
        int f = s->solver.sys.free_index[d];
        double M = s->m->dof_mass[d];
        if (f < 0 || M <= 0)
            continue;
        lres[f] = -la[d] / M;
        p->lM[d] += (e->a[d] + s->m->damping_alpha * e->v[d]) * lres[f];
        p->lalpha += M * e->v[d] * lres[f];
        adj->v[d] += s->m->damping_alpha * M * lres[f];
        p->lfext[d] -= s->load_factor * lres[f];
    }
}

/* The transpose of an acceleration's beta K v with lres: beta K^T lres into v's adjoint, beta dK[v]'s
 * into q's, q0's (lq0) and the state's, lres . K v into lbeta. */
static void beta_acceleration_adjoint(DynamicRun *r, const AccelPoint *e, const double *lres, Tan *adj, double *lq0,
                                      Pull *p)
{
    size_t n = (size_t)r->n_dofs + 1;
    double *u = srd_xcalloc(n, sizeof(double)), *kt = srd_xcalloc(n, sizeof(double));
    for (int d = 0; d < r->n_dofs; d++)
        if (dyn_damps(r, d))
            u[d] = e->v[d];
    beta_pull(r, e->q, r->b->s.q0, u, lres, false, kt, adj->q, lq0, adj->S, p);
    for (int d = 0; d < r->n_dofs; d++)
        if (dyn_damps(r, d))
            adj->v[d] += r->b->m->damping_beta * kt[d];
    free(u), free(kt);
}

/* The transpose of velocity_forces_tangent (dynamic_forward.c) with lres: into adj's q and v and
 * the pull. */
static void velocity_forces_adjoint(DynamicRun *r, const AccelPoint *e, const double *lres, Tan *adj, Pull *p)
{
    srd_sim *s = &r->b->s;
    double *behind = dyn_behind(r, e->q, e->v), *lbehind = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    srd_eval_ctx ctx = { e->q, behind, e->v, s->params, e->t, s->dt, NULL, NULL, NULL };
    for (int k = 0; k < r->n_sets; k++) {
        InputAdjoints out = { adj->q, lbehind, adj->v, NULL, p->lc[k], p->lp };
        if (!dyn_stiffness_set(s, k))
            kernel_tangent_adjoint(&r->b->tangents[k], &ctx, &s->kernels[k].batch.b, lres, r->n_dofs, &out);
    }
    for (int d = 0; d < r->n_dofs; d++)
        adj->q[d] += lbehind[d], adj->v[d] -= s->dt * lbehind[d];
    free(behind), free(lbehind);
}

/* The second: the residual's adjoint lres into adj's q and v (e's configuration and velocity), lq0
 * (the step start's), adj's S and the pull's data, params and beta. */
void dyn_residual_adjoint(DynamicRun *r, const AccelPoint *e, const double *lres, Tan *adj, double *lq0, Pull *p)
{
    srd_sim *s = &r->b->s;
    srd_eval_ctx ctx = { e->q, s->q0, s->v0, s->params, e->t, s->dt, NULL, NULL, NULL };
    for (int k = 0; k < r->n_sets; k++) {
        InputAdjoints out = { adj->q, lq0, NULL, adj->S[k], p->lc[k], p->lp };
        if (dyn_stiffness_set(s, k)) /* the runtime's acceleration is static: no friction */
            kernel_tangent_adjoint(&r->b->tangents[k], &ctx, &s->kernels[k].batch.b, lres, r->n_dofs, &out);
    }
    if (dyn_explicit(r))
        velocity_forces_adjoint(r, e, lres, adj, p);
    if (beta_moves(r))
        beta_acceleration_adjoint(r, e, lres, adj, lq0, p);
}

/* The transpose of start_acceleration_tangent: Newmark's start acceleration's adjoint into the
 * start's configuration, state and the params. */
static void start_acceleration_adjoint(DynamicRun *r, const Record *first, Tan *adj, Pull *p, double *grad,
                                       int *status)
{
    srd_sim *s = &r->b->s;
    dyn_at_start(r, first);
    double *lres = srd_xcalloc(srd_system_grad_len(&s->solver.sys) + 1, sizeof(double));
    double *lq0 = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    dyn_pull_clear(r, p);
    AccelPoint e = { s->q, first->v0, first->a0, 0 };
    dyn_acceleration_adjoint(r, &e, adj->a, lres, adj, p);
    dyn_bodies_start_torque_adjoint(r, adj, lres, p->lfext);
    dyn_residual_adjoint(r, &e, lres, adj, lq0, p);
    double *shared = dyn_start_q0_share(r, lq0);
    for (int d = 0; d < r->n_dofs; d++)
        adj->q[d] += shared[d];
    free(lq0), free(shared);
    dyn_pull_params(r, p, 0, r->b->m->simulate.dt, grad, status);
    memset(adj->a, 0, sizeof(double) * (size_t)r->n_dofs);
    dyn_bodies_frames_adjoint(r, first, adj); /* the frames it read: the start's axes' turn */
    dyn_bodies_settle(&r->b->s, adj->q);
    free(lres);
}

/* sum over sets of lS . dS0: what a moving geometry's reference state gives the adjoint lS. */
static double state_pull(const DynamicRun *r, const Track *t, double *const *lS)
{
    double sum = 0;
    for (int j = 0; t->geometry && j < r->n_sets; j++)
        sum += dyn_dot(lS[j], t->dS0[j], dyn_set_state_len(&r->b->s, j));
    return sum;
}

/* The start's share: a static start's dq (and the frames carried to it) along every param. */
static void start_adjoint(DynamicRun *r, Tan *adj, double *grad, const int *status)
{
    double *dv = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    for (int k = 0; k < r->n_params && !r->from_equilibrium; k++) {
        Track *t = &r->tracks[k];
        if (status[k] != STATIC_DERIVED)
            continue;
        dyn_set_released(r, NULL); /* as start_tangent: the start holds every constraint */
        dyn_track_motion(r, t, 0);
        t->at = NAN;
        memcpy(dv, t->dmv, sizeof(double) * (size_t)r->n_dofs);
        dyn_slides_start_velocity(r, t, dv); /* the start's velocity tangent, as start_tangent takes it */
        grad[k] += dyn_dot(adj->q, t->geometry ? t->dx0 : t->dmq, (size_t)r->n_dofs) + dyn_dot(adj->v, dv, (size_t)r->n_dofs) +
                   state_pull(r, t, adj->S) + dyn_bodies_start_pull(r, t, adj);
    }
    free(dv);
    if (!r->from_equilibrium)
        return;
    const srd_sim *s = &r->b->s;
    double *lq = dyn_dup(adj->q, (size_t)r->n_dofs), *lq_ref = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    double **lS_ref = srd_xcalloc((size_t)r->n_sets + 1, sizeof *lS_ref);
    for (int j = 0; j < r->n_sets; j++) {
        lS_ref[j] = srd_xcalloc(dyn_set_state_len(s, j) + 1, sizeof(double));
        srd_state_adjoint(s->m, j, &s->kernels[j].info, r->S_ref[j], r->q_ref, r->q_start, adj->S[j], lS_ref[j], lq_ref, lq);
    }
    for (int k = 0; k < r->n_params; k++) {
        const Track *t = &r->tracks[k];
        if (status[k] != STATIC_DERIVED)
            continue;
        grad[k] += dyn_dot(lq, r->dq_eq[k], (size_t)r->n_dofs) + dyn_bodies_equilibrium_pull(r, r->dq_eq[k], adj);
        if (t->geometry) /* the reference the state is carried from moves too */
            grad[k] += dyn_dot(lq_ref, t->dx0, (size_t)r->n_dofs) + state_pull(r, t, lS_ref);
    }
    for (int j = 0; j < r->n_sets; j++)
        free(lS_ref[j]);
    free(lS_ref), free(lq), free(lq_ref);
}

/* What force probes read of a step's start (the adjoints of its q0 and v0), added when the
 * backward pass has crossed the step. */
typedef struct EndSeed {
    double *lq0, *lv0, **lS0;
} EndSeed;

typedef struct Backward {
    Tan           adj, other;
    Pull          p;
    double       *lg;
    DynamicSlopes slopes;
    void         *ctx;
    EndSeed      *seed;    /* the step being crossed's, or NULL */
    EndSeed       pending; /* its storage */
    double       *forces;  /* the slopes' weights on the force probes (GRAD_FORCE_WIDTH a probe) */
    double       *dparams; /* the slopes' on the params' values (n_params) */
} Backward;

/* ---- force probes by the adjoint (at the run's end, or an objective's at every step) ---- */

/* Adds the transpose of instances [lo, hi) of set j's residual tangent at the end (end_set_tangent)
 * with lam (a weight per DOF's row): into the end's q adjoint, the last step's start's (seed: its
 * q0, v0 and state) and the pull's data and params. */
static void end_set_adjoint(DynamicRun *r, int j, int lo, int hi, const double *lam, Backward *bw, EndSeed *seed)
{
    srd_sim *s = &r->b->s;
    srd_eval_ctx ctx = { s->q, s->q0, s->v0, s->params, s->t, srd_sim_view_dt(s), NULL, NULL, NULL };
    srd_elem_batch part = srd_batch_every_dof(&s->kernels[j].batch.b, lo, hi);
    InputAdjoints out = { bw->adj.q, seed->lq0, seed->lv0, seed->lS0[j] + (size_t)lo * part.n_state,
                          bw->p.lc[j] + (size_t)lo * part.n_data, bw->p.lp };
    if (hi > lo)
        kernel_tangent_adjoint(&r->b->tangents[j], &ctx, &part, lam, r->n_dofs, &out);
}

/* The reactions' adjoint lr as the residual's (the transpose of end_reactions_tangent's across
 * part: a sliding node's projection across its line is symmetric; other free rows give none). */
static void reactions_to_residual(const srd_sim *s, const double *lr, double *lam)
{
    size_t n = (size_t)s->m->n_dofs;
    double *free_part = srd_xcalloc(n + 1, sizeof(double)), *across = srd_xcalloc(n + 1, sizeof(double));
    for (size_t d = 0; d < n; d++)
        free_part[d] = s->fixed[d] ? 0 : lr[d];
    srd_slides_across_part(s, free_part, across);
    for (size_t d = 0; d < n; d++)
        lam[d] = s->fixed[d] ? lr[d] : across[d];
    free(free_part), free(across);
}

/* The turning lines' share of a reaction along param track t (end_reactions_tangent): minus
 * lr . ((da . res) a + (a . res) da) over the sliding nodes' free rows. */
static double turned_lines_pull(const srd_sim *s, const Track *t, const double *res, const double *lr)
{
    const srd_model *m = s->m;
    double sum = 0;
    for (int k = 0; t->geometry && k < m->n_slides; k++) {
        int node = m->node_dof[m->slide_node[k]];
        if (!sens_anchor_held(s, k))
            continue;
        const double *a = &s->slide_axis[3 * k], *da = &t->daxis[3 * k];
        double turn = srd_dot3(da, &res[node]), along = srd_dot3(a, &res[node]);
        for (int c = 0; c < 3; c++)
            if (!s->fixed[node + c])
                sum -= lr[node + c] * (turn * a[c] + along * da[c]);
    }
    return sum;
}

/* grad[k] += what the end's data, loads, params and prescribed accelerations give the seeds
 * (lam: the residual's adjoint; lr: the reactions', NULL for a contact probe; res: the residual). */
static void end_pull(DynamicRun *r, const Instant *at, const double *lam, const double *lr, const double *res,
                     const Pull *p, double *grad, const int *status)
{
    const srd_sim *s = &r->b->s;
    for (int k = 0; k < r->n_params; k++) {
        Track *t = &r->tracks[k];
        if (status[k] != STATIC_DERIVED)
            continue;
        dyn_track_at(r, t, at->t, at->dt);
        double sum = p->lp[k];
        for (int j = 0; j < r->n_sets; j++)
            sum += dyn_dot(p->lc[j], t->dc[j], data_len(r, j));
        for (int d = 0; lr && d < r->n_dofs; d++) {
            sum -= s->load_factor * lam[d] * t->dfext[d];
            if (s->fixed[d])
                sum += lr[d] * (t->dmass[d] * s->prescribed_acc[d] + s->m->dof_mass[d] * t->dma[d]);
        }
        grad[k] += sum + (lr ? turned_lines_pull(s, t, res, lr) : 0);
    }
}

/* The transpose of view_damping_tangent (dynamic_forward.c) with lam (a weight per DOF's row):
 * into the adjoints of the view's configuration or velocity (bw->adj), of its step's start (seed),
 * and the run's damping, masses, data and params (bw->p). */
static void view_damping_adjoint(DynamicRun *r, const double *lam, Backward *bw, EndSeed *seed)
{
    srd_sim *s = &r->b->s;
    const srd_model *m = s->m;
    size_t n = (size_t)r->n_dofs + 1;
    double *u = srd_xcalloc(n, sizeof(double)), *lu = srd_xcalloc(n, sizeof(double)), c[2];
    bool of_step = srd_sim_damped_velocity(s, u, c);
    for (int d = 0; d < r->n_dofs; d++) {
        lu[d] = m->damping_alpha * m->dof_mass[d] * lam[d];
        bw->p.lM[d] += m->damping_alpha * u[d] * lam[d];
        bw->p.lalpha += m->dof_mass[d] * u[d] * lam[d];
    }
    if (beta_moves(r)) {
        double *lK = srd_xcalloc(n, sizeof(double));
        beta_pull(r, of_step ? s->q0 : s->q, s->q0, u, lam, true, lK, of_step ? seed->lq0 : bw->adj.q, seed->lq0,
                  seed->lS0, &bw->p);
        for (int d = 0; d < r->n_dofs; d++)
            lu[d] += m->damping_beta * lK[d];
        free(lK);
    }
    for (int d = 0; d < r->n_dofs; d++) {
        if (m->dof_kind[d] == SRD_DOF_LAMBDA)
            continue;
        if (of_step)
            bw->adj.q[d] += c[0] * lu[d], seed->lq0[d] -= c[0] * lu[d], seed->lv0[d] += c[1] * lu[d];
        else
            bw->adj.v[d] += lu[d];
    }
    free(u), free(lu);
}

/* The reaction probe's seeds: w . its values through the reactions to every set's residual. */
static void reaction_seed(DynamicRun *r, const Instant *at, const srd_probe *pr, const double *w, Backward *bw,
                          EndSeed *seed, double *grad, const int *status)
{
    srd_sim *s = &r->b->s;
    size_t n = (size_t)r->n_dofs + 1;
    double *lr = srd_xcalloc(n, sizeof(double)), *lam = srd_xcalloc(n, sizeof(double));
    Reactions rx = dyn_reactions_here(r);
    srd_probe_reaction_adjoint(s->m, pr, at->q, rx.react, w, bw->adj.q, lr);
    reactions_to_residual(s, lr, lam);
    for (int j = 0; j < r->n_sets; j++)
        end_set_adjoint(r, j, 0, s->kernels[j].batch.b.n, lam, bw, seed);
    if (dyn_view_damped(r, NULL))
        view_damping_adjoint(r, lam, bw, seed);
    end_pull(r, at, lam, lr, rx.res, &bw->p, grad, status);
    free(lr), free(lam);
    dyn_reactions_free(&rx);
}

/* The contact probe's seeds: w . (minus the target's elements' residual summed over the nodes). */
static void contact_seed(DynamicRun *r, const Instant *at, const srd_probe *pr, const double *w, Backward *bw,
                         EndSeed *seed, double *grad, const int *status)
{
    const srd_model *m = r->b->m;
    double *lam = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    for (int i = 0; i < m->n_nodes; i++)
        for (int c = 0; c < 3; c++)
            lam[m->node_dof[i] + c] = -w[c];
    for (int j = 0, lo, hi; j < m->n_sets; j++)
        if (srd_sim_contact_instances(m, j, pr->target, &lo, &hi))
            end_set_adjoint(r, j, lo, hi, lam, bw, seed);
    end_pull(r, at, lam, NULL, NULL, &bw->p, grad, status);
    free(lam);
}

/* Seeds the backward pass with w . (probe pr's values at `at`), the sim set there: the adjoints
 * of the configuration and state there (bw->adj), of the step's start (seed) and the params'
 * direct share (grad). False when the probe is not one derived. */
static bool seed_force(DynamicRun *r, const Instant *at, const srd_probe *pr, const double *w, Backward *bw,
                       EndSeed *seed, double *grad, const int *status)
{
    if (!control_force_probe(pr))
        return false;
    dyn_pull_clear(r, &bw->p);
    if (pr->kind == SRD_PROBE_REACTION)
        reaction_seed(r, at, pr, w, bw, seed, grad, status);
    else
        contact_seed(r, at, pr, w, bw, seed, grad, status);
    return true;
}

static bool all_zero_n(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (x[i] != 0)
            return false;
    return true;
}

/* The slopes' weights on the force probes (bw->forces) as seeds at `at`. */
static void seed_forces(DynamicRun *r, const Instant *at, Backward *bw, EndSeed *seed, double *grad,
                        const int *status)
{
    const srd_analysis *a = &r->b->m->simulate;
    for (int i = 0; i < a->n_probes; i++) {
        const double *w = &bw->forces[GRAD_FORCE_WIDTH * i];
        if (!all_zero_n(w, GRAD_FORCE_WIDTH))
            seed_force(r, at, &a->probes[i], w, bw, seed, grad, status);
    }
}

/* An objective's slopes on the values of the inputs the controller sets, into their adjoints (the
 * gradients of the inputs, until the backward pass crosses the sample that set them). */
static void controlled_slopes(const DynamicRun *r, const double *dparams, double *grad)
{
    for (int k = 0; r->control && k < r->n_params; k++)
        if (control_sets(r->b->m, k))
            grad[k] += dparams[k];
}

/* An objective's slopes at the end of record x's step (its state and its force probes). */
static void step_slopes_at(DynamicRun *r, const Record *x, Backward *bw, double *grad, const int *status)
{
    size_t n = GRAD_FORCE_WIDTH * (size_t)r->b->m->simulate.n_probes;
    memset(bw->forces, 0, sizeof(double) * n);
    memset(bw->dparams, 0, sizeof(double) * (size_t)r->n_params);
    bw->slopes(bw->ctx, x->step, x->t, x->q1, x->v1, bw->adj.q, bw->adj.v, bw->forces, bw->dparams);
    controlled_slopes(r, bw->dparams, grad);
    if (all_zero_n(bw->forces, n))
        return;
    Instant at = dyn_at_record_end(r, x);
    seed_forces(r, &at, bw, &bw->pending, grad, status);
    bw->seed = &bw->pending;
}

/* lS0 (a force probe's adjoint of the state its step started from) into lS, and cleared. */
static void add_state_seed(const DynamicRun *r, double **lS, double **lS0)
{
    for (int j = 0; j < r->n_sets; j++) {
        size_t n = dyn_set_state_len(&r->b->s, j);
        for (size_t i = 0; i < n; i++)
            lS[j][i] += lS0[j][i];
        memset(lS0[j], 0, sizeof(double) * n);
    }
}

/* The start's share of the force probes' seeds at record x's end, once x is crossed. */
static void add_pending(DynamicRun *r, const Record *x, Backward *bw)
{
    if (!bw->seed)
        return;
    for (int d = 0; d < r->n_dofs; d++) {
        bw->adj.q[d] += bw->seed->lq0[d], bw->adj.v[d] += bw->seed->lv0[d];
        bw->seed->lq0[d] = bw->seed->lv0[d] = 0;
    }
    add_state_seed(r, bw->adj.S, bw->seed->lS0);
    dyn_bodies_frames_adjoint(r, x, &bw->adj); /* the frames the forces read: the axes' turn */
    dyn_bodies_settle(&r->b->s, bw->adj.q);
    bw->seed = NULL;
}

/* The pending seeds of the run's start, added now: the start's q0 is its q where no motion drives
 * it. */
static void pending_at_start(DynamicRun *r, Backward *bw)
{
    double *shared = dyn_start_q0_share(r, bw->pending.lq0);
    for (int d = 0; d < r->n_dofs; d++) {
        bw->adj.q[d] += shared[d], bw->adj.v[d] += bw->pending.lv0[d];
        bw->pending.lq0[d] = bw->pending.lv0[d] = 0;
    }
    add_state_seed(r, bw->adj.S, bw->pending.lS0);
    free(shared);
}

/* An objective's slopes at the start (record 0). */
static void start_slopes(DynamicRun *r, Backward *bw, double *grad, const int *status)
{
    size_t n = GRAD_FORCE_WIDTH * (size_t)r->b->m->simulate.n_probes;
    memset(bw->forces, 0, sizeof(double) * n);
    memset(bw->dparams, 0, sizeof(double) * (size_t)r->n_params);
    bw->slopes(bw->ctx, 0, 0, r->q_start, r->records ? r->records[0].v0 : bw->adj.v, bw->adj.q, bw->adj.v, bw->forces,
               bw->dparams);
    controlled_slopes(r, bw->dparams, grad);
    if (all_zero_n(bw->forces, n) || !r->n_records)
        return;
    Instant at = dyn_at_start_record(r);
    seed_forces(r, &at, bw, &bw->pending, grad, status);
    pending_at_start(r, bw);
}

/* The force probes' adjoints lforces (in their slots) that the sample before record x read, seeded
 * at its view (the sim is there): into the adjoint of x's start, the step before it's start
 * (pending, added once the backward pass has crossed that step; at the run's start, now) and the
 * params' gradients (their values before the sample). */
static void seed_sample_forces(DynamicRun *r, const Record *x, const double *lforces, Backward *bw, double *grad,
                               const int *status)
{
    const srd_model *m = r->b->m;
    Instant at = { x->q0, x->sample->t, x->sample->view->dt };
    for (int j = 0; j < m->control.n_slots; j++) {
        const srd_control_slot *sl = &m->control.slots[j];
        double w[GRAD_FORCE_WIDTH] = { 0 };
        if (!control_force_slot(m, j))
            continue;
        memcpy(w, &lforces[sl->first], sizeof(double) * (size_t)sl->n);
        if (!all_zero_n(w, GRAD_FORCE_WIDTH))
            seed_force(r, &at, &m->simulate.probes[sl->probe], w, bw, &bw->pending, grad, status);
    }
    if (x->sample->view->behind) {
        bw->seed = &bw->pending;
        return;
    }
    pending_at_start(r, bw);
}

/* The transpose of the sample before record x: the controller's adjoints (r->lctl) and the params'
 * (grad; an input's holds the adjoint of its value since the sample) become those before it; the
 * position probes' go into the adjoint of x's start, the force probes' are seeded at the step
 * before it. */
static void adjoint_sample(DynamicRun *r, const Record *x, Backward *bw, double *grad, const int *status)
{
    if (!x->sample)
        return;
    size_t nd = (size_t)r->b->m->control.n_data;
    double *hk = srd_xcalloc((size_t)r->n_params + 1, sizeof(double)), *lforces = srd_xcalloc(nd + 1, sizeof(double));
    bool *near = srd_xcalloc((size_t)r->n_params + 1, sizeof(bool));
    for (int k = 0; k < r->n_params; k++)
        hk[k] = r->tracks[k].hk;
    Reactions rx = { NULL, NULL };
    double *forces = x->sample->view ? dyn_sample_forces(r, x, &rx) : NULL;
    ControlSample c = dyn_sample_of(r, x->sample, x->q0, forces);
    control_tangents_adjoint(r->control, r->b->m, &c, r->lctl, grad, bw->adj.q, lforces, hk, near);
    for (int k = 0; k < r->n_params; k++)
        r->control_near |= near[k];
    if (forces)
        seed_sample_forces(r, x, lforces, bw, grad, status);
    free(c.data), free(c.params), free(hk), free(near), free(forces), free(lforces);
    dyn_reactions_free(&rx);
}

/* Carries bw's adjoint back over record x's step: explicit, or linearised and solved. */
static int step_adjoint(DynamicRun *r, const Record *x, Backward *bw, double *grad, int *status)
{
    if (dyn_explicit(r)) {
        dyn_explicit_adjoint(r, x, &bw->adj, &bw->other, &bw->p, grad, status);
        return 0;
    }
    dyn_linearize(r, x);
    return adjoint_record(r, x, &bw->adj, &bw->other, &bw->p, bw->lg, grad, status);
}

static int adjoint_segment(DynamicRun *r, Backward *bw, double *grad, int *status, char *why, size_t why_n)
{
    for (long i = r->n_records - 1; i >= 0; i--) {
        const Record *x = &r->records[i];
        if (x->step > 0 && bw->slopes)
            step_slopes_at(r, x, bw, grad, status);
        if (step_adjoint(r, x, bw, grad, status) != 0) {
            snprintf(why, why_n, "the Jacobian of the step ending at t = %.6g s is singular: no sensitivity", x->t);
            return -1;
        }
        add_pending(r, x, bw);
        if (i == 0 && x->t - x->dt <= 0 && r->method == SRD_NEWMARK)
            start_acceleration_adjoint(r, x, &bw->adj, &bw->p, grad, status);
        adjoint_sample(r, x, bw, grad, status); /* the step's inputs were set before all of it */
    }
    return 0;
}

/* The backward pass's adjoints and scratch, the end's from wq and wv (NULL: 0). */
static Backward backward_new(DynamicRun *r, const double *wq, const double *wv, DynamicSlopes slopes, void *ctx)
{
    Backward bw = { dyn_tan_new(r), dyn_tan_new(r), pull_new(r), NULL, slopes, ctx, NULL, { NULL, NULL, NULL }, NULL, NULL };
    bw.dparams = srd_xcalloc((size_t)r->n_params + 1, sizeof(double));
    for (int d = 0; d < r->n_dofs; d++) {
        bw.adj.q[d] = wq ? wq[d] : 0;
        bw.adj.v[d] = wv ? wv[d] : 0;
    }
    bw.pending.lq0 = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    bw.pending.lv0 = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    bw.pending.lS0 = srd_xcalloc((size_t)r->n_sets + 1, sizeof(double *));
    for (int j = 0; j < r->n_sets; j++)
        bw.pending.lS0[j] = srd_xcalloc(dyn_set_state_len(&r->b->s, j) + 1, sizeof(double));
    bw.forces = srd_xcalloc(GRAD_FORCE_WIDTH * (size_t)r->b->m->simulate.n_probes + 1, sizeof(double));
    bw.lg = srd_xcalloc(dyn_grad_room(r), sizeof(double)); /* a release may free more DOFs */
    return bw;
}

static void backward_free(DynamicRun *r, Backward *bw)
{
    dyn_tan_free(r, &bw->adj), dyn_tan_free(r, &bw->other), pull_free(r, &bw->p), free(bw->lg);
    free(bw->pending.lq0), free(bw->pending.lv0), free(bw->forces), free(bw->dparams);
    for (int j = 0; j < r->n_sets; j++)
        free(bw->pending.lS0[j]);
    free(bw->pending.lS0);
}

/* lJ . dJ: the bodies' principal moments' share (a track without their tangents: none). */
static double moments_pull(const DynamicRun *r, const Track *t, const double *lJ)
{
    return t->dinertia ? dyn_dot(lJ, t->dinertia, 3 * (size_t)r->b->m->n_bodies) : 0;
}

/* The backward pass from bw's adjoints of the run's end (and its seed); frees bw's own. */
static int backward(DynamicRun *r, Backward *bw, double *grad, int *status, char *why, size_t why_n)
{
    double t0 = srd_seconds();
    int code = 0;
    r->control_near = false;
    for (int i = r->n_segments - 1; i >= 0 && code == 0; i--) {
        if (!dyn_segment_records(r, i)) {
            snprintf(why, why_n, "a segment of the run could not be recomputed from its checkpoint");
            code = -1;
        } else
            code = adjoint_segment(r, bw, grad, status, why, why_n);
    }
    dyn_set_params(r, r->params_start);
    dyn_control_start(r, grad);
    if (code == 0 && bw->slopes)
        start_slopes(r, bw, grad, status);
    start_adjoint(r, &bw->adj, grad, status);
    if (r->control_near)
        t0 += dyn_control_kinks_by_forward(r);
    dyn_mark_switches(r, status);
    dyn_control_statuses(r, status);
    dyn_set_params(r, r->params_end); /* as the run ended: the passes set the steps' */
    for (int k = 0; k < r->n_params; k++)
        if (status[k] == STATIC_DERIVED)
            grad[k] += dyn_dot(bw->p.lM, r->tracks[k].dmass, (size_t)r->n_dofs) + bw->p.lalpha * r->tracks[k].dalpha +
                       bw->p.lbeta * r->tracks[k].dbeta + moments_pull(r, &r->tracks[k], bw->p.lJ);
        else
            grad[k] = 0;
    backward_free(r, bw);
    r->pass_seconds += srd_seconds() - t0;
    return code;
}

int dynamic_adjoint(DynamicRun *r, const double *wq, const double *wv, DynamicSlopes slopes, void *ctx, double *grad,
                    int *status, char *why, size_t why_n)
{
    dyn_param_status(r, status);
    memset(grad, 0, sizeof(double) * (size_t)r->n_params);
    Backward bw = backward_new(r, wq, wv, slopes, ctx);
    return backward(r, &bw, grad, status, why, why_n);
}

/* A joint's force or torque at record x's end, the sim there: w . its value's seeds (the
 * transpose of dynamic_forward.c's joint_probe_tangent). */
static void joint_seed(DynamicRun *r, const Record *x, const srd_probe *pr, const double *w, Backward *bw,
                       EndSeed *seed, double *grad, const int *status)
{
    const srd_joint *j = &r->b->m->joints[pr->target];
    Instant at = dyn_at_record_end(r, x);
    double *g = dyn_joint_gradient(r, pr), *lam = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    dyn_pull_clear(r, &bw->p);
    dyn_joint_wrench_seed(r, x, pr, g, w, lam, bw->adj.q, bw->adj.B);
    for (int i = 0; i < j->n_parts; i++)
        end_set_adjoint(r, j->part[i].set, j->part[i].instance, j->part[i].instance + 1, lam, bw, seed);
    end_pull(r, &at, lam, NULL, NULL, &bw->p, grad, status);
    free(g), free(lam);
}

/* dynamic_force_adjoint of a body's or a motor's probe: the end's seeds, then what each param
 * moves directly. */
static int end_probe_adjoint(DynamicRun *r, const srd_probe *pr, const double *w, double *grad, int *status, char *why,
                             size_t why_n)
{
    double *direct = srd_xcalloc((size_t)r->n_params + 1, sizeof(double));
    Backward bw = backward_new(r, NULL, NULL, NULL, NULL);
    dyn_end_probe_seed(r, pr, w, status, bw.adj.q, bw.adj.B, direct);
    int code = backward(r, &bw, grad, status, why, why_n);
    for (int k = 0; k < r->n_params; k++)
        if (status[k] == STATIC_DERIVED)
            grad[k] += direct[k];
    free(direct);
    return code;
}

int dynamic_force_adjoint(DynamicRun *r, const srd_probe *pr, const double *w, double *grad, int *status, char *why,
                          size_t why_n)
{
    dyn_param_status(r, status);
    memset(grad, 0, sizeof(double) * (size_t)r->n_params);
    if (!r->n_records)
        return 1;
    if (dyn_end_probe_derived(pr))
        return end_probe_adjoint(r, pr, w, grad, status, why, why_n);
    if (pr->kind == SRD_PROBE_JOINT) { /* its force or torque */
        if (!dyn_segment_records(r, r->n_segments - 1)) {
            snprintf(why, why_n, "a segment of the run could not be recomputed from its checkpoint");
            return -1;
        }
        Backward bw = backward_new(r, NULL, NULL, NULL, NULL);
        joint_seed(r, &r->records[r->n_records - 1], pr, w, &bw, &bw.pending, grad, status);
        bw.seed = &bw.pending;
        return backward(r, &bw, grad, status, why, why_n);
    }
    if (!dyn_segment_records(r, r->n_segments - 1)) { /* the run's last step */
        snprintf(why, why_n, "a segment of the run could not be recomputed from its checkpoint");
        return -1;
    }
    Backward bw = backward_new(r, NULL, NULL, NULL, NULL);
    Instant at = dyn_at_record_end(r, &r->records[r->n_records - 1]);
    if (!seed_force(r, &at, pr, w, &bw, &bw.pending, grad, status)) {
        backward_free(r, &bw);
        return 1;
    }
    bw.seed = &bw.pending;
    return backward(r, &bw, grad, status, why, why_n);
}

const char *dynamic_why(int status)
{
    if (status == DYNAMIC_MOVES_MOTION)
        return "it turns a clamped rod end by prescribed motion (`rotate`: its slide's line with it): not derived yet";
    if (status == DYNAMIC_TURNS_LINE)
        return "it turns a clamped rod end's line under an explicit method (the steps project the end's acceleration "
               "on it): not derived yet";
    if (status == DYNAMIC_NOT_ASKED)
        return "not asked for";
    if (status == DYNAMIC_MOVES_RELEASE)
        return "it moves the time of a `release`: a run frees the constraints at the first step from that time, so "
               "it changes by jumps in it: no derivative";
    if (status == DYNAMIC_NOT_SMOOTH)
        return "the model's values are not smooth in it near this value (a switch: min, max, abs, a step or a "
               "periodic wrap of a schedule or of the control block, or an input the controller sets reaching its "
               "range): no derivative";
    return static_point_why(status);
}
