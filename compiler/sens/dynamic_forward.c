/* dynamic_forward.c — one recorded step of a simulation linearised (its Jacobian, the tangent of
 * its residual along a param, stiffness-proportional damping's share), the start, the control
 * block's samples, the forward pass (the state's tangents carried step by step) and the force
 * probes' tangents (at the run's end, and those a controller reads). See dynamic.h. */
#include "sens/dynamic_run.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "clock.h"
#include "control.h"
#include "sens/control_tangent.h"
#include "sens/state_tangent.h"
#include "sens/body_tangent.h"
#include "contact/pairs.h"
#include "probe.h"
#include "vec3.h"

/* ---- one step, linearised ---- */

Tan dyn_tan_new(const DynamicRun *r)
{
    Tan t;
    size_t n = (size_t)r->n_dofs + 1;
    t.q = srd_xcalloc(n, sizeof(double)), t.v = srd_xcalloc(n, sizeof(double)), t.a = srd_xcalloc(n, sizeof(double));
    t.S = srd_xcalloc((size_t)r->n_sets + 1, sizeof *t.S);
    for (int k = 0; k < r->n_sets; k++)
        t.S[k] = srd_xcalloc(dyn_set_state_len(&r->b->s, k) + 1, sizeof(double));
    t.B = srd_xcalloc((size_t)r->b->m->n_bodies * SRD_BODY_TAN + 1, sizeof(double));
    return t;
}

void dyn_tan_free(const DynamicRun *r, Tan *t)
{
    free(t->q), free(t->v), free(t->a);
    for (int k = 0; k < r->n_sets; k++)
        free(t->S[k]);
    free(t->S), free(t->B);
}

static void tan_copy(const DynamicRun *r, Tan *to, const Tan *from)
{
    size_t bytes = sizeof(double) * (size_t)r->n_dofs;
    memcpy(to->q, from->q, bytes), memcpy(to->v, from->v, bytes), memcpy(to->a, from->a, bytes);
    for (int k = 0; k < r->n_sets; k++)
        memcpy(to->S[k], from->S[k], sizeof(double) * dyn_set_state_len(&r->b->s, k));
    memcpy(to->B, from->B, sizeof(double) * SRD_BODY_TAN * (size_t)r->b->m->n_bodies);
}

void dyn_tan_swap(Tan *a, Tan *b)
{
    Tan c = *a;
    *a = *b;
    *b = c;
}

double dyn_dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* The contact pairs record x's solve held, back in the sim's batches. */
static void hold_pairs(srd_sim *s, const Record *x)
{
    if (s->pairs)
        srd_pairs_hold(s, x->pairs, x->n_pairs);
}

/* The sim's params (n_params values: a controller's inputs change over the run). */
void dyn_set_params(DynamicRun *r, const double *params)
{
    memcpy(r->b->s.params, params, sizeof(double) * (size_t)r->n_params);
}

/* The sim's releases as `released` says (NULL: none). The params' tracks hold the held DOFs' motion
 * tangents (dyn_track_motion) at the time they were taken: when the held set changes they are
 * taken anew, even at the same time (an explicit step's first stage shares the time of the step
 * before's end, across a release). */
void dyn_set_released(DynamicRun *r, const unsigned char *released)
{
    srd_sim *s = &r->b->s;
    int n_free = s->solver.sys.n_free;
    srd_sim_set_released(s, released);
    for (int k = 0; r->tracks && s->solver.sys.n_free != n_free && k < r->n_params; k++)
        r->tracks[k].at = NAN;
}

/* The sim at record x as its step ran: its start (q0, v0, a0, the elements' state), its end q1,
 * its pairs, its params, its time and step. So the runtime leaves a step: forces read at its end
 * are the step's own (sim.h: state_behind). */
void dyn_put_record(DynamicRun *r, const Record *x)
{
    srd_sim *s = &r->b->s;
    size_t bytes = sizeof(double) * (size_t)r->n_dofs;
    memcpy(s->q0, x->q0, bytes), memcpy(s->v0, x->v0, bytes), memcpy(s->a0, x->a0, bytes), memcpy(s->q, x->q1, bytes);
    memcpy(s->v, x->v1, bytes);
    s->method = r->method;
    dyn_set_released(r, x->released); /* before the pairs: they couple in the step's system */
    if (x->axes) /* a rotation turns the lines: where the step's end held them */
        memcpy(s->slide_axis, x->axes, 3 * sizeof(double) * (size_t)s->m->n_slides);
    hold_pairs(s, x);
    if (x->params)
        dyn_set_params(r, x->params);
    dyn_bodies_put(s, x->bodies0); /* the elements' frames are in S0 */
    for (int k = 0; k < r->n_sets; k++)
        memcpy(s->kernels[k].batch.state, x->S0[k], sizeof(double) * dyn_set_state_len(s, k));
    s->t = x->t;
    s->dt = x->dt;
    s->last_dt = x->dt;
    s->state_behind = 1;
}

/* The sim at record x with the step's Jacobian at its end. */
void dyn_linearize(DynamicRun *r, const Record *x)
{
    srd_sim *s = &r->b->s;
    dyn_put_record(r, x);
    srd_sim_step_jacobian(s, r->method);
    for (int k = 0; k < s->m->n_slides; k++) /* before the reduction keeps only their rows along the lines */
        for (int c = 0, node = s->m->node_dof[s->m->slide_node[k]]; c < 3; c++) {
            int f = s->solver.sys.free_index[node + c];
            r->slide_res[node + c] = f >= 0 ? s->res[f] : 0;
        }
    srd_slides_reduce(s, 1); /* the sliding nodes' rows and columns in their lines' basis, as Newton's */
}

/* A right-hand side (free rows) in the lines' basis, as srd_slides_reduce puts the residual. */
static void reduce_rows(srd_sim *s, double *g)
{
    size_t bytes = sizeof(double) * (size_t)s->solver.sys.n_free;
    memcpy(s->res, g, bytes);
    srd_slides_reduce(s, 0);
    memcpy(g, s->res, bytes);
}

/* K x = g with the linearised step's Jacobian (reduced by the slides), in place. The slides'
 * reduction R (a sliding node's rows onto its line) and expansion E (the line's coordinate back
 * to x, y, z) are each other's transposes, so K^-T goes between the same two. */
int dyn_solve_step(srd_sim *s, double *g, bool transposed)
{
    reduce_rows(s, g);
    int code = transposed ? srd_solver_solve_transposed(&s->solver, g) : srd_solver_solve(&s->solver, g);
    srd_slides_expand(s, g);
    return code;
}

/* What the kernels read at the linearised step: the evaluation point b q1 + (1 - b) q0. */
srd_eval_ctx dyn_step_ctx(const srd_sim *s, double *g)
{
    const double *qe = s->stiffness_b != 1 ? s->qeval : s->q;
    return (srd_eval_ctx){ qe, s->q0, s->v0, s->params, s->t, s->dt, NULL, g, NULL };
}

/* Mass-proportional damping's constants over the record's own step (srd_damping_constants: a
 * param may give damping where the model has none, so the sim's are not always set). */
void dyn_damping_constants(const DynamicRun *r, double dt, double *c1, double *c0)
{
    srd_damping_constants(r->method, dt, c1, c0);
}

/* The velocity mass-proportional damping reads over record x at DOF d: c1 (q1 - q0) + c0 v0. */
double dyn_damped_velocity(const DynamicRun *r, const Record *x, int d)
{
    double c1, c0;
    dyn_damping_constants(r, x->dt, &c1, &c0);
    return c1 * (x->q1[d] - x->q0[d]) + c0 * x->v0[d];
}

/* Where a moving geometry or a moved anchor takes each sliding node across its line at
 * configuration q (sens_slide_motion with the held anchors' tangent dmq); zero for a param that
 * moves neither. */
void dyn_slide_tangent(const DynamicRun *r, const Track *t, const double *q, double *w)
{
    if (t->geometry || t->moves_anchor)
        sens_slide_motion(&r->b->s, q, t->dmq, t->geometry ? t->daxis : NULL, w);
    else
        memset(w, 0, sizeof(double) * (size_t)r->n_dofs);
}

/* ---- stiffness-proportional damping: beta K0 u, K0 the stiffness where the step starts ---- */

/* What a stiffness reads as the runtime takes it for damping (net_force_residual: static, no
 * friction): the configuration q, the step start q0. */
srd_eval_ctx dyn_stiffness_ctx(const srd_sim *s, const double *q, const double *q0, double *g)
{
    return (srd_eval_ctx){ q, q0, s->v0, s->params, s->t, s->dt, NULL, g, NULL };
}

bool dyn_stiffness_set(const srd_sim *s, int k) { return !s->kernels[k].info.needs_time_step; }

/* Set k's batch with its rows by the solver's free rows, or by DOF (every: held ones too). */
srd_elem_batch dyn_rows_batch(const srd_sim *s, int k, bool every)
{
    const srd_elem_batch *b = &s->kernels[k].batch.b;
    return every ? srd_batch_every_dof(b, 0, b->n) : *b;
}

/* The length of a gradient by those rows (dyn_rows_batch). */
size_t dyn_rows_len(const srd_sim *s, bool every)
{
    return every ? (size_t)s->m->n_dofs + SRD_SCRATCH : srd_system_grad_len(&s->solver.sys);
}

/* Adds K v (every set's Jacobian along v, by DOF) into ctx's grad (free rows, or every DOF's). */
void dyn_stiffness_times(DynamicRun *r, const srd_eval_ctx *ctx, const double *v, bool every)
{
    srd_sim *s = &r->b->s;
    for (int k = 0; k < r->n_sets; k++) {
        InputTangents w = { .dq = v };
        srd_elem_batch b = dyn_rows_batch(s, k, every);
        if (dyn_stiffness_set(s, k))
            kernel_tangent_forward(&r->b->tangents[k], ctx, &b, &w);
    }
}

/* Set k's batch (its rows as dyn_rows_batch's) with u at its stencil DOFs as nd more data columns
 * (the hessian kernels' z), and a data tangent of that stride holding dc (may be NULL) and zeros
 * for z. */
srd_elem_batch dyn_with_direction(const srd_sim *s, int k, bool every, const double *u, const double *dc,
                                  double **data, double **ddata)
{
    srd_elem_batch rows = dyn_rows_batch(s, k, every);
    const srd_elem_batch *b = &rows;
    int n = b->n, nd0 = b->n_data, w = nd0 + b->n_dofs;
    *data = srd_xcalloc((size_t)n * (size_t)w + 1, sizeof(double));
    *ddata = srd_xcalloc((size_t)n * (size_t)w + 1, sizeof(double));
    for (int i = 0; i < n; i++) {
        memcpy(&(*data)[(size_t)i * w], &b->data[(size_t)i * nd0], sizeof(double) * (size_t)nd0);
        for (int j = 0; j < b->n_dofs; j++)
            (*data)[(size_t)i * w + nd0 + j] = u[b->dofs[(size_t)i * b->n_dofs + j]];
        if (dc)
            memcpy(&(*ddata)[(size_t)i * w], &dc[(size_t)i * nd0], sizeof(double) * (size_t)nd0);
    }
    srd_elem_batch e = *b;
    e.n_data = w, e.data = *data;
    return e;
}

/* Adds d(K u) at fixed u into ctx's grad (free rows, or every DOF's): K's inputs moved along dq
 * (the configuration), dq0 (the step start), the state dS, param track t's data and the param
 * itself. */
static void stiffness_tangent(DynamicRun *r, const srd_eval_ctx *ctx, const double *u, const double *dq,
                              const double *dq0, double *const *dS, const Track *t, bool every)
{
    srd_sim *s = &r->b->s;
    for (int k = 0; k < r->n_sets; k++) {
        if (!dyn_stiffness_set(s, k))
            continue;
        double *data, *ddata;
        srd_elem_batch e = dyn_with_direction(s, k, every, u, t->dc[k], &data, &ddata);
        InputTangents w = { dq, dq0, NULL, dS[k], ddata, t->dparams };
        kernel_tangent_forward(&r->b->hessian_tangents[k], ctx, &e, &w);
        free(data), free(ddata);
    }
}

/* The change of beta K u, K the stiffness at configuration q with step start q0 (where
 * dyn_stiffness_ctx puts them) and u fixed on the DOFs damping reads: beta K du + beta dK[u] (K's inputs along
 * dq, dq0, the state dS, track t's data and param) + dbeta K u. Into g (free rows, or every DOF's:
 * added). */
static void beta_tangent(DynamicRun *r, const double *q, const double *q0, const double *u, const double *du,
                         const double *dq, const double *dq0, double *const *dS, const Track *t, bool every, double *g)
{
    srd_sim *s = &r->b->s;
    double beta = s->m->damping_beta;
    size_t len = dyn_rows_len(s, every), rows = every ? (size_t)r->n_dofs : (size_t)s->solver.sys.n_free;
    double *kd = srd_xcalloc(len, sizeof(double)), *ku = srd_xcalloc(len, sizeof(double));
    srd_eval_ctx ctx = dyn_stiffness_ctx(s, q, q0, kd);
    if (beta > 0) {
        dyn_stiffness_times(r, &ctx, du, every);
        stiffness_tangent(r, &ctx, u, dq, dq0, dS, t, every);
    }
    ctx.grad = ku;
    if (t->dbeta != 0)
        dyn_stiffness_times(r, &ctx, u, every);
    dyn_drop_multiplier_rows(r, kd, every);
    dyn_drop_multiplier_rows(r, ku, every);
    for (size_t i = 0; i < rows; i++)
        g[i] += beta * kd[i] + t->dbeta * ku[i];
    free(kd), free(ku);
}

/* Whether stiffness-proportional damping reads DOF d's velocity: every DOF but a multiplier (the
 * runtime's add_damping on the free ones, held_damping on the held ones' prescribed motion; its
 * damping stiffness drops the multipliers' rows and columns, drop_multiplier_couplings). */
bool dyn_damps(const DynamicRun *r, int d) { return !dyn_multiplier(r->b->m, d); }

void dyn_drop_multiplier_rows(const DynamicRun *r, double *g, bool every)
{
    const srd_sim *s = &r->b->s;
    for (int d = 0; every && d < r->n_dofs; d++)
        if (!dyn_damps(r, d))
            g[d] = 0;
    for (int k = 0; !every && k < s->n_lambda_rows; k++)
        g[s->lambda_rows[k]] = 0;
}

/* u = c1 (q1 - q0) + c0 v0 of record x on the DOFs damping reads, 0 elsewhere. */
double *dyn_damped_velocities(const DynamicRun *r, const Record *x)
{
    double *u = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    for (int d = 0; d < r->n_dofs; d++)
        if (dyn_damps(r, d))
            u[d] = dyn_damped_velocity(r, x, d);
    return u;
}

/* beta K0 u's change at fixed q1, K0 the stiffness at the step start (both as the configuration
 * and as the start): du = c1 (w - dq0) + c0 dv0, w the sliding nodes' share of dq1 (a held DOF's
 * end: the motion's, dmq). */
static void beta_rhs(DynamicRun *r, const Record *x, const Tan *in, const Track *t, const double *w, double *g)
{
    double c1, c0, *u = dyn_damped_velocities(r, x), *du = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    dyn_damping_constants(r, x->dt, &c1, &c0);
    for (int d = 0; d < r->n_dofs; d++)
        if (dyn_damps(r, d))
            du[d] = c1 * ((r->b->s.solver.sys.free_index[d] >= 0 ? w[d] : t->dmq[d]) - in->q[d]) + c0 * in->v[d];
    beta_tangent(r, x->q0, x->q0, u, du, in->q, in->q, in->S, t, false, g);
    free(u), free(du);
}

bool dyn_multiplier(const srd_model *m, int d) { return m->dof_kind[d] == SRD_DOF_LAMBDA; }

bool dyn_split_set(const srd_sim *s, int k) { return s->stiffness_b != 1 && s->m->sets[k].n_lambda; }

/* Constraint set k's rows of a split step (sim.c's constraints_at_end): its forces at the
 * evaluation point (their tangent along in->dq there), its constraints at the step's end, which
 * moves only where the end is not solved for (a held DOF's motion, a sliding node's line: w and
 * the motion's dmq). Into g (free rows). */
static void split_set_tangent(DynamicRun *r, int k, const srd_eval_ctx *ctx, const InputTangents *in, const double *w,
                              const Track *t, double *g)
{
    srd_sim *s = &r->b->s;
    size_t len = srd_system_grad_len(&s->solver.sys);
    double *forces = srd_xcalloc(len, sizeof(double)), *ends = srd_xcalloc(len, sizeof(double));
    double *dq1 = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    for (int d = 0; d < r->n_dofs; d++)
        dq1[d] = s->solver.sys.free_index[d] < 0 ? t->dmq[d] : w[d];
    srd_eval_ctx at = *ctx, end = *ctx;
    at.grad = forces, end.grad = ends, end.q = s->q;
    InputTangents in_end = *in;
    in_end.dq = dq1;
    kernel_tangent_forward(&r->b->tangents[k], &at, &s->kernels[k].batch.b, in);
    kernel_tangent_forward(&r->b->tangents[k], &end, &s->kernels[k].batch.b, &in_end);
    dyn_drop_multiplier_rows(r, forces, false);
    for (int f = 0; f < s->solver.sys.n_free; f++)
        g[f] += forces[f];
    for (int j = 0; j < s->n_lambda_rows; j++)
        g[s->lambda_rows[j]] += ends[s->lambda_rows[j]];
    free(forces), free(ends), free(dq1);
}

/* dR at fixed q1 along the start's tangents `in` and param track t: the kernels' inputs (the
 * evaluation point moves by (1 - b) dq0), inertia, damping, loads and masses. */
static void step_rhs(DynamicRun *r, const Record *x, const Tan *in, Track *t, double *g)
{
    srd_sim *s = &r->b->s;
    const srd_model *m = s->m;
    double b = s->stiffness_b, a = s->inertia_a, dt = x->dt, alpha = m->damping_alpha, c1, c0;
    dyn_damping_constants(r, dt, &c1, &c0);
    memset(g, 0, sizeof(double) * srd_system_grad_len(&s->solver.sys));
    double *dqe = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double)), *w = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    dyn_track_at(r, t, x->t, x->dt);
    dyn_slide_tangent(r, t, x->q1, w);
    for (int d = 0; d < r->n_dofs; d++) /* a driven DOF's end is the motion's; a sliding node's, part the line's */
        dqe[d] = dyn_multiplier(m, d) ? 0 /* a multiplier is the step's own */
                                      : (1 - b) * in->q[d] + (s->solver.sys.free_index[d] < 0 ? b * t->dmq[d] : b * w[d]);
    srd_eval_ctx ctx = dyn_step_ctx(s, g);
    for (int k = 0; k < r->n_sets; k++) {
        InputTangents in_k = { dqe, in->q, in->v, in->S[k], t->dc[k], t->dparams };
        if (dyn_split_set(s, k))
            split_set_tangent(r, k, &ctx, &in_k, w, t, g);
        else
            kernel_tangent_forward(&r->b->tangents[k], &ctx, &s->kernels[k].batch.b, &in_k);
    }
    free(dqe);
    for (int d = 0; d < r->n_dofs; d++) {
        int f = s->solver.sys.free_index[d];
        if (f < 0)
            continue;
        double M = m->dof_mass[d], dqhat = in->q[d] + dt * in->v[d] + (r->method == SRD_NEWMARK ? 0.25 * dt * dt * in->a[d] : 0);
        g[f] += a * (t->dmass[d] * (x->q1[d] - s->qhat[d]) - M * dqhat) - s->load_factor * t->dfext[d];
        g[f] += (alpha * t->dmass[d] + t->dalpha * M) * dyn_damped_velocity(r, x, d) +
                alpha * M * (-c1 * in->q[d] + c0 * in->v[d]) + (a + alpha * c1) * M * w[d];
    }
    if (m->damping_beta > 0 || t->dbeta != 0)
        beta_rhs(r, x, in, t, w, g);
    if (t->geometry) /* a line the geometry turns turns its node's row too */
        sens_slides_turn_rows(s, r->slide_res, t->daxis, g);
    dyn_bodies_rows(r, x, in, t, g);
    free(w);
}

/* The velocity the scheme gives DOF d over record x, before the runtime's last word on it. */
static double scheme_velocity(const DynamicRun *r, const Record *x, int d)
{
    double v1, a1;
    srd_scheme_rates(r->method, x->dt, x->q1[d] - x->q0[d], x->v0[d], x->a0[d], &v1, &a1);
    return v1;
}

/* After an implicit step of a model with prescribed motion, the runtime gives each sliding node its
 * clamp's velocity across the line (exact_prescribed_rates, srd_slides_place): v <- va + P (v - va),
 * P = a a^T at the step's end. Its tangent is dva + P (dv - dva) + dP (v - va), dP = da a^T + a da^T
 * as a line the geometry turns turns (t->daxis; a param that turns a line by a rotation is not
 * derived, dyn_track_motion). Slide k's dP (v - va) into out (3 values; zero when it does not turn). */
static void slide_turn_term(const DynamicRun *r, const Record *x, const Track *t, int k, double *out)
{
    const srd_model *m = r->b->m;
    int node = m->node_dof[m->slide_node[k]], anchor = m->node_dof[m->slide_anchor[k]];
    const double *a = &r->b->s.slide_axis[3 * k], *da = t->geometry ? &t->daxis[3 * k] : NULL;
    double was[3] = { 0, 0, 0 };
    for (int c = 0; da && c < 3; c++)
        was[c] = scheme_velocity(r, x, node + c) - x->v1[anchor + c];
    double along = srd_dot3(a, was), across = da ? srd_dot3(da, was) : 0;
    for (int c = 0; c < 3; c++)
        out[c] = da ? da[c] * along + a[c] * across : 0;
}

void dyn_slides_project_velocity(const DynamicRun *r, const Record *x, const Track *t, double *v)
{
    const srd_sim *s = &r->b->s;
    const srd_model *m = s->m;
    for (int k = 0; m->n_motions && k < m->n_slides; k++) {
        if (!sens_anchor_held(s, k))
            continue;
        double *vn = &v[m->node_dof[m->slide_node[k]]], turn[3];
        const double *va = &v[m->node_dof[m->slide_anchor[k]]], *a = &s->slide_axis[3 * k];
        slide_turn_term(r, x, t, k, turn);
        double along = srd_dot3(a, vn) - srd_dot3(a, va);
        for (int c = 0; c < 3; c++)
            vn[c] = va[c] + along * a[c] + turn[c];
    }
}

/* Its transpose, in place on the velocity adjoints lv: the node's keeps P lv, its anchor gains
 * (I - P) lv, and each param whose geometry turns the lines gains lv . dP (v - va) into grad
 * (status[j] STATIC_DERIVED). */
void dyn_slides_project_velocity_adjoint(const DynamicRun *r, const Record *x, double *lv, double *grad,
                                         const int *status)
{
    const srd_sim *s = &r->b->s;
    const srd_model *m = s->m;
    for (int k = 0; m->n_motions && k < m->n_slides; k++) {
        if (!sens_anchor_held(s, k))
            continue;
        double *ln = &lv[m->node_dof[m->slide_node[k]]], *la = &lv[m->node_dof[m->slide_anchor[k]]], turn[3];
        for (int j = 0; j < r->n_params; j++)
            if (status[j] == STATIC_DERIVED && r->tracks[j].geometry) {
                slide_turn_term(r, x, &r->tracks[j], k, turn);
                grad[j] += srd_dot3(ln, turn);
            }
        const double *a = &s->slide_axis[3 * k];
        double along = srd_dot3(a, ln);
        for (int c = 0; c < 3; c++) {
            la[c] += ln[c] - along * a[c];
            ln[c] = along * a[c];
        }
    }
}

/* The scheme's velocity and acceleration tangents from the positions' (held DOFs: the motion's). */
static void rates_tangent(const DynamicRun *r, const Track *t, const Record *x, const Tan *in, Tan *out)
{
    double dt = x->dt;
    const srd_system *sys = &r->b->s.solver.sys;
    for (int d = 0; d < r->n_dofs; d++) {
        if (sys->free_index[d] < 0)
            out->v[d] = t->dmv[d], out->a[d] = r->method == SRD_NEWMARK ? t->dma[d] : in->a[d];
        else
            srd_scheme_rates(r->method, dt, out->q[d] - in->q[d], in->v[d], in->a[d], &out->v[d], &out->a[d]);
    }
    dyn_slides_project_velocity(r, x, t, out->v);
}

/* Carries a tangent over linearised record x given dq1's solution x1 (free rows, in the lines'
 * basis): in becomes the tangent at its end. */
static void forward_finish(DynamicRun *r, const Record *x, const Track *t, Tan *in, Tan *out, double *x1)
{
    srd_sim *s = &r->b->s;
    srd_slides_expand(s, x1);
    dyn_slide_tangent(r, t, x->q1, out->v); /* out->v as scratch: rates_tangent writes it next */
    for (int d = 0; d < r->n_dofs; d++) {
        int f = s->solver.sys.free_index[d];
        out->q[d] = f >= 0 ? -x1[f] + out->v[d] : t->dmq[d];
    }
    rates_tangent(r, t, x, in, out);
    dyn_bodies_finish(r, x, t, in, out);
    for (int k = 0; k < r->n_sets; k++)
        srd_state_tangent(s->m, k, &s->kernels[k].info, x->S0[k], x->q0, x->q1, in->S[k], in->q, out->q, out->S[k]);
    dyn_tan_swap(in, out);
}

/* Every derived param's tangent over linearised record x: their right-hand sides solved with one
 * factorisation of the step's Jacobian. */
static int forward_record(DynamicRun *r, const Record *x, Tan *tans, int *status, Tan *out, double *g, double *B)
{
    srd_sim *s = &r->b->s;
    int nf = s->solver.sys.n_free, n = 0, *which = srd_xcalloc((size_t)r->n_params + 1, sizeof(int));
    for (int k = 0; k < r->n_params; k++) {
        if (status[k] == STATIC_DERIVED)
            step_rhs(r, x, &tans[k], &r->tracks[k], g);
        if (status[k] == STATIC_DERIVED && r->tracks[k].status != STATIC_DERIVED)
            status[k] = r->tracks[k].status; /* a moving clamp's line, seen at this step */
        if (status[k] != STATIC_DERIVED)
            continue;
        reduce_rows(s, g);
        memcpy(&B[(size_t)n * nf], g, sizeof(double) * (size_t)nf);
        which[n++] = k;
    }
    int code = n ? srd_solver_solve_many(&s->solver, B, n) : 0;
    for (int j = 0; j < n && code == 0; j++)
        forward_finish(r, x, &r->tracks[which[j]], &tans[which[j]], out, &B[(size_t)j * nf]);
    free(which);
    return code ? -1 : 0;
}

/* ---- the start ---- */

/* The sim at the run's start as Newmark's first acceleration saw it, static (b = 1, no inertia). */
void dyn_at_start(DynamicRun *r, const Record *first)
{
    srd_sim *s = &r->b->s;
    size_t bytes = sizeof(double) * (size_t)r->n_dofs;
    memcpy(s->q, r->q_start, bytes), memcpy(s->q0, r->q0_start, bytes), memcpy(s->v0, first->v0, bytes);
    dyn_set_released(r, first->released); /* srd_step releases before it takes the acceleration */
    memcpy(s->slide_axis, r->start_axes, 3 * sizeof(double) * (size_t)s->m->n_slides);
    hold_pairs(s, first); /* found at the start */
    if (first->params) /* after the first sample, as srd_step takes the acceleration */
        dyn_set_params(r, first->params);
    dyn_bodies_put(s, first->bodies0);
    for (int k = 0; k < r->n_sets; k++)
        memcpy(s->kernels[k].batch.state, first->S0[k], sizeof(double) * dyn_set_state_len(s, k));
    s->t = 0;
    s->dt = r->b->m->simulate.dt;
    s->stiffness_b = 1;
    srd_sim_apply_schedules(s, 0);
}

/* The part of x (the start's q tangent or adjoint) that the sim's q0 at the start shares: where
 * q0 is q (a DOF a motion drives keeps its reference there, which no param moves). */
double *dyn_start_q0_share(const DynamicRun *r, const double *x)
{
    double *y = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    for (int d = 0; d < r->n_dofs; d++)
        y[d] = r->q0_start[d] == r->q_start[d] ? x[d] : 0;
    return y;
}

/* The configuration one step behind point e at its velocity, q - dt v: where explicit methods
 * put friction's and drag's step start (sim.c's add_velocity_forces), or its tangent. */
double *dyn_behind(const DynamicRun *r, const double *q, const double *v)
{
    double *behind = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    for (int d = 0; d < r->n_dofs; d++)
        behind[d] = q[d] - r->b->s.dt * v[d];
    return behind;
}

/* Under an explicit method, friction's and drag's change at point e (q0 = q - dt v, v0 = v) into g. */
static void velocity_forces_tangent(DynamicRun *r, const AccelPoint *e, const Track *t, const Tan *in, double *g)
{
    srd_sim *s = &r->b->s;
    double *behind = dyn_behind(r, e->q, e->v), *dbehind = dyn_behind(r, in->q, in->v);
    srd_eval_ctx ctx = { e->q, behind, e->v, s->params, e->t, s->dt, NULL, g, NULL };
    for (int k = 0; k < r->n_sets; k++) {
        InputTangents w = { in->q, dbehind, in->v, NULL, t->dc[k], t->dparams };
        if (!dyn_stiffness_set(s, k))
            kernel_tangent_forward(&r->b->tangents[k], &ctx, &s->kernels[k].batch.b, &w);
    }
    free(behind), free(dbehind);
}

/* An acceleration's beta K v (K at point e with the sim's step start, v on the DOFs damping reads):
 * its change (beta_tangent with u = v, du = in->v) into g. */
static void beta_acceleration_tangent(DynamicRun *r, const AccelPoint *e, const Track *t, const double *dq0,
                                      const Tan *in, double *g)
{
    size_t n = (size_t)r->n_dofs + 1;
    double *u = srd_xcalloc(n, sizeof(double)), *du = srd_xcalloc(n, sizeof(double));
    for (int d = 0; d < r->n_dofs; d++)
        if (dyn_damps(r, d))
            u[d] = e->v[d], du[d] = in->v[d];
    beta_tangent(r, e->q, r->b->s.q0, u, du, in->q, dq0, in->S, t, false, g);
    free(u), free(du);
}

/* The change of the runtime's acceleration a = -(R + alpha M v + beta K v - F) / M
 * (srd_sim_acceleration: static forces, and friction and drag under explicit methods) at point
 * e, with the sim's step start q0 and state, along the tangents of e's configuration and
 * velocity (in->q, in->v), of the step start (dq0) and state (in->S), and param track t at e's
 * time: into in->a, and the residual's change (free rows) into g. The sim holds e's data (the
 * schedules at e's time). */
void dyn_acceleration_tangent(DynamicRun *r, const AccelPoint *e, const Track *t, const double *dq0, Tan *in, double *g)
{
    srd_sim *s = &r->b->s;
    memset(g, 0, sizeof(double) * srd_system_grad_len(&s->solver.sys));
    srd_eval_ctx ctx = { e->q, s->q0, s->v0, s->params, e->t, s->dt, NULL, g, NULL };
    for (int k = 0; k < r->n_sets; k++) {
        InputTangents w = { in->q, dq0, NULL, in->S[k], t->dc[k], t->dparams };
        if (dyn_stiffness_set(s, k))
            kernel_tangent_forward(&r->b->tangents[k], &ctx, &s->kernels[k].batch.b, &w);
    }
    if (dyn_explicit(r))
        velocity_forces_tangent(r, e, t, in, g);
    if (s->m->damping_beta > 0 || t->dbeta != 0)
        beta_acceleration_tangent(r, e, t, dq0, in, g);
    double alpha = s->m->damping_alpha;
    for (int d = 0; d < r->n_dofs; d++) {
        int f = s->solver.sys.free_index[d];
        double M = s->m->dof_mass[d], damping = (alpha * t->dmass[d] + t->dalpha * M) * e->v[d] + alpha * M * in->v[d];
        in->a[d] = f >= 0 && M > 0 ? -(g[f] + damping - s->load_factor * t->dfext[d] + e->a[d] * t->dmass[d]) / M : 0;
    }
    srd_slides_along(s, in->a); /* a sliding node accelerates along its line (a projection) */
}

/* Newmark's start acceleration: its tangent along param t (in: the start's). */
static void start_acceleration_tangent(DynamicRun *r, const Record *first, Track *t, Tan *in)
{
    srd_sim *s = &r->b->s;
    double *g = srd_xcalloc(srd_system_grad_len(&s->solver.sys), sizeof(double));
    dyn_track_at(r, t, 0, r->b->m->simulate.dt);
    double *dq0 = dyn_start_q0_share(r, in->q);
    AccelPoint e = { s->q, first->v0, first->a0, 0 };
    dyn_acceleration_tangent(r, &e, t, dq0, in, g);
    free(dq0);
    dyn_bodies_start_torque(r, t, g, in);
    free(g);
}

/* A sliding node starts with its clamp's velocity across its line (srd_slides_place), and at
 * rest along it: v = va - (a . va) a. Its velocity's tangent is the anchor's across the line, and
 * as a line the geometry turns (t->daxis) -(da . va) a - (a . va) da more (va: the anchor's start
 * velocity). */
void dyn_slides_start_velocity(const DynamicRun *r, const Track *t, double *dv)
{
    const srd_sim *s = &r->b->s;
    const double *v0 = r->v_start;
    for (int k = 0; k < s->m->n_slides; k++) {
        int d = s->m->node_dof[s->m->slide_node[k]], anchor = s->m->node_dof[s->m->slide_anchor[k]];
        const double *a = &s->slide_axis[3 * k], *va = &v0[anchor], *da = t->geometry ? &t->daxis[3 * k] : NULL;
        double along = srd_dot3(&dv[anchor], a), turn = da ? srd_dot3(da, va) : 0, va_along = srd_dot3(a, va);
        for (int c = 0; c < 3; c++)
            dv[d + c] = dv[anchor + c] - along * a[c] - (da ? turn * a[c] + va_along * da[c] : 0);
    }
}

/* The start's tangent along param k: the static equilibrium's and the frames carried to it. */
static void start_tangent(DynamicRun *r, int k, Tan *in)
{
    if (!r->from_equilibrium) { /* the reference, but where prescribed motion puts the driven DOFs */
        Track *t = &r->tracks[k];
        dyn_set_released(r, NULL); /* the start: nothing is released before the first step */
        dyn_track_motion(r, t, 0); /* the motion alone: the base sim's data are not at t = 0 here */
        t->at = NAN;
        memcpy(in->q, t->geometry ? t->dx0 : t->dmq, sizeof(double) * (size_t)r->n_dofs);
        memcpy(in->v, t->dmv, sizeof(double) * (size_t)r->n_dofs);
        dyn_slides_start_velocity(r, t, in->v);
        dyn_bodies_start(r, t, in);
        for (int j = 0; t->geometry && j < r->n_sets; j++) /* the reference state moves with a geometry */
            memcpy(in->S[j], t->dS0[j], sizeof(double) * dyn_set_state_len(&r->b->s, j));
        return;
    }
    const srd_sim *s = &r->b->s;
    const Track *t = &r->tracks[k];
    memcpy(in->q, r->dq_eq[k], sizeof(double) * (size_t)r->n_dofs);
    dyn_bodies_equilibrium_start(r, r->dq_eq[k], in);
    double *zero = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    for (int j = 0; j < r->n_sets; j++) { /* the reference's state and configuration move with a geometry */
        double *zs = srd_xcalloc(dyn_set_state_len(s, j) + 1, sizeof(double));
        srd_state_tangent(s->m, j, &s->kernels[j].info, r->S_ref[j], r->q_ref, r->q_start, t->geometry ? t->dS0[j] : zs,
                          t->geometry ? t->dx0 : zero, in->q, in->S[j]);
        free(zs);
    }
    free(zero);
}

/* ---- the control block's samples ---- */

/* The params' tangents back to each track's own unit direction, the controller's values' tangents
 * to their initial values' and their adjoints to zero: how a pass starts. */
static void control_reset(DynamicRun *r)
{
    for (int k = 0; k < r->n_params; k++) {
        Track *t = &r->tracks[k];
        if (!t->dparams)
            continue;
        memset(t->dparams, 0, sizeof(double) * (size_t)r->n_params);
        t->dparams[k] = 1;
        t->at = NAN;
    }
    if (!r->control)
        return;
    size_t nd = (size_t)r->b->m->control.n_data;
    if (!r->dctl) {
        r->dctl = srd_xcalloc((size_t)r->n_params + 1, sizeof *r->dctl);
        for (int k = 0; k < r->n_params; k++)
            r->dctl[k] = srd_xcalloc(nd + 1, sizeof(double));
        r->lctl = srd_xcalloc(nd + 1, sizeof(double));
    }
    for (int k = 0; k < r->n_params; k++)
        for (size_t i = 0; i < nd; i++)
            r->dctl[k][i] = r->tracks[k].dinit ? r->tracks[k].dinit[i] : 0;
    memset(r->lctl, 0, nd * sizeof(double));
}

/* The sample x as the run took it, reading configuration q and the force probes' values forces
 * (copies: a pass replays it). */
ControlSample dyn_sample_of(const DynamicRun *r, const Sampled *x, const double *q, const double *forces)
{
    size_t nd = (size_t)r->b->m->control.n_data;
    return (ControlSample){ x->t, x->dt, q, forces, dyn_dup(x->data, nd), dyn_dup(x->params, (size_t)r->n_params) };
}

static double *sample_force_tangents(DynamicRun *r, const Record *x, int k, const Tan *end, const Tan *start,
                                     const Reactions *rx);
static Tan start_view_tangent(const DynamicRun *r, const Tan *start);

/* The force probes' tangents along param k that the sample before record x reads (NULL when it
 * reads none): the step before it ended at x's start (tangents end), from r->before[k], or the
 * run's start. */
static double *forward_sample_forces(DynamicRun *r, const Record *x, int k, const Tan *end, const Reactions *rx)
{
    const View *v = x->sample->view;
    if (!v)
        return NULL;
    if (v->behind)
        return sample_force_tangents(r, x, k, end, &r->before[k], rx);
    Tan start = start_view_tangent(r, end);
    double *d = sample_force_tangents(r, x, k, end, &start, rx);
    free(start.q);
    return d;
}

/* Carries every derived param's tangent over the sample before record x (tans: at its start): the
 * controller's values' and the inputs' (the track's params' tangents). */
static void forward_sample(DynamicRun *r, const Record *x, const Tan *tans, const int *status)
{
    if (!x->sample)
        return;
    Reactions rx = { NULL, NULL };
    double *forces = x->sample->view ? dyn_sample_forces(r, x, &rx) : NULL;
    for (int k = 0; k < r->n_params; k++) {
        Track *t = &r->tracks[k];
        if (status[k] != STATIC_DERIVED)
            continue;
        double *dforces = forward_sample_forces(r, x, k, &tans[k], &rx);
        ControlSample c = dyn_sample_of(r, x->sample, x->q0, forces);
        bool kink =
            control_tangents_forward(r->control, r->b->m, &c, tans[k].q, dforces, r->dctl[k], t->dparams, t->hk);
        dyn_note_kink(t, kink, x->sample->t);
        t->at = NAN; /* the data's tangents move with the inputs' */
        free(c.data), free(c.params), free(dforces);
    }
    free(forces);
    dyn_reactions_free(&rx);
}

/* The adjoint has no direction along one param: where it met a sample near a switch, a forward
 * pass tells which params it is within reach of (their tracks' kinks, as the forward pass finds
 * them). Returns the seconds it took. */

/* Once the backward pass has crossed the first sample: the controller's initial values' share. */
void dyn_control_start(const DynamicRun *r, double *grad)
{
    for (int k = 0; r->control && k < r->n_params; k++)
        if (r->tracks[k].dinit)
            grad[k] += dyn_dot(r->lctl, r->tracks[k].dinit, (size_t)r->b->m->control.n_data);
}

/* The backward pass carries every param's adjoint through the inputs' gradients: an input the
 * controller sets that has no derivative leaves none to the others. */
void dyn_control_statuses(const DynamicRun *r, int *status)
{
    const srd_control *c = &r->b->m->control;
    for (int j = 0; r->control && j < c->n_steps; j++) {
        int in = c->steps[j].param;
        for (int k = 0; in >= 0 && status[in] != STATIC_DERIVED && k < r->n_params; k++)
            if (status[k] == STATIC_DERIVED)
                status[k] = status[in];
    }
}


/* Each param's status before the passes: its samples', then its static start's. */
void dyn_param_status(DynamicRun *r, int *status)
{
    dyn_open_tracks(r);
    control_reset(r);
    dyn_set_params(r, r->params_start); /* the start's tangents read them */
    for (int k = 0; k < r->n_params; k++) {
        status[k] = r->tracks[k].status;
        if (status[k] == STATIC_DERIVED && r->from_equilibrium)
            status[k] = r->eq_status[k];
    }
}

/* Params whose samples straddled a switch somewhere in the run have no derivative. */
void dyn_mark_switches(DynamicRun *r, int *status)
{
    for (int k = 0; k < r->n_params; k++)
        if (status[k] == STATIC_DERIVED && r->tracks[k].kink)
            status[k] = DYNAMIC_NOT_SMOOTH;
}

double dynamic_switch_time(const DynamicRun *r, int k) { return r->tracks[k].kink_time; }

/* ---- forward ---- */

/* The derived params' tangents at the last step's start (force probes at the end read them). */
static void keep_starts(DynamicRun *r, const Tan *tans, const int *status)
{
    r->last = srd_xcalloc((size_t)r->n_params + 1, sizeof *r->last);
    for (int k = 0; k < r->n_params; k++) {
        r->last[k] = dyn_tan_new(r);
        if (status[k] != STATIC_DERIVED)
            continue;
        memcpy(r->last[k].q, tans[k].q, sizeof(double) * (size_t)r->n_dofs);
        memcpy(r->last[k].v, tans[k].v, sizeof(double) * (size_t)r->n_dofs);
        for (int j = 0; j < r->n_sets; j++)
            memcpy(r->last[k].S[j], tans[k].S[j], sizeof(double) * dyn_set_state_len(&r->b->s, j));
    }
}

/* r->before for a controller that reads forces: made (on) or released (off). */
static void keep_befores(DynamicRun *r, bool on)
{
    if (on && r->control_forces) {
        r->before = srd_xcalloc((size_t)r->n_params + 1, sizeof *r->before);
        for (int k = 0; k < r->n_params; k++)
            r->before[k] = dyn_tan_new(r);
    } else if (!on && r->before) {
        for (int k = 0; k < r->n_params; k++)
            dyn_tan_free(r, &r->before[k]);
        free(r->before);
        r->before = NULL;
    }
}

/* The tangents at record x's start in the bodies' axes there: the previous step's turns went into
 * the axes (the rotation DOFs start at zero), and the frames the elements read follow the axes'. */
static void bodies_at_start(DynamicRun *r, const Record *x, Tan *tans, const int *status)
{
    for (int k = 0; r->b->m->n_bodies && k < r->n_params; k++)
        if (status[k] == STATIC_DERIVED) {
            dyn_bodies_settle(&r->b->s, tans[k].q);
            dyn_bodies_frames(r, x, &tans[k]);
        }
}

static int forward_segment(DynamicRun *r, Tan *tans, int *status, bool *first, bool last, char *why, size_t why_n)
{
    double *g = srd_xcalloc(dyn_grad_room(r), sizeof(double)); /* a release may free more DOFs */
    double *B = srd_xcalloc((size_t)r->n_dofs * (size_t)r->n_params + 1, sizeof(double));
    Tan out = dyn_tan_new(r);
    int code = 0;
    for (long i = 0; i < r->n_records && code == 0; i++) {
        const Record *x = &r->records[i];
        bodies_at_start(r, x, tans, status);
        forward_sample(r, x, tans, status);
        if (*first && r->method == SRD_NEWMARK) {
            dyn_at_start(r, x);
            for (int k = 0; k < r->n_params; k++)
                if (status[k] == STATIC_DERIVED)
                    start_acceleration_tangent(r, x, &r->tracks[k], &tans[k]);
        }
        *first = false;
        if (last && i == r->n_records - 1)
            keep_starts(r, tans, status);
        for (int k = 0; r->before && k < r->n_params; k++) /* the next sample's forces read them */
            if (status[k] == STATIC_DERIVED)
                tan_copy(r, &r->before[k], &tans[k]);
        if (dyn_explicit(r)) {
            dyn_explicit_forward(r, x, tans, status);
            continue;
        }
        dyn_linearize(r, x);
        code = forward_record(r, x, tans, status, &out, g, B);
        if (code)
            snprintf(why, why_n, "the Jacobian of the step ending at t = %.6g s is singular: no sensitivity", x->t);
    }
    dyn_tan_free(r, &out);
    free(g), free(B);
    return code;
}

int dynamic_forward(DynamicRun *r, double **dq, double **dv, int *status, char *why, size_t why_n)
{
    double t0 = srd_seconds();
    dyn_forget_ends(r);
    dyn_param_status(r, status);
    Tan *tans = srd_xcalloc((size_t)r->n_params + 1, sizeof *tans);
    for (int k = 0; k < r->n_params; k++) {
        tans[k] = dyn_tan_new(r);
        if (status[k] == STATIC_DERIVED)
            start_tangent(r, k, &tans[k]);
    }
    bool first = true;
    int code = 0;
    keep_befores(r, true);
    for (int i = 0; i < r->n_segments && code == 0; i++) {
        if (!dyn_segment_records(r, i)) {
            snprintf(why, why_n, "a segment of the run could not be recomputed from its checkpoint");
            code = -1;
        } else
            code = forward_segment(r, tans, status, &first, i == r->n_segments - 1, why, why_n);
    }
    keep_befores(r, false);
    dyn_mark_switches(r, status);
    dyn_set_params(r, r->params_end); /* as the run ended: the passes set the steps' */
    for (int k = 0; k < r->n_params; k++) {
        memcpy(dq[k], tans[k].q, sizeof(double) * (size_t)r->n_dofs);
        memcpy(dv[k], tans[k].v, sizeof(double) * (size_t)r->n_dofs);
    }
    r->ends = tans; /* for the force probes (dynamic_force_probe) */
    r->pass_seconds += srd_seconds() - t0;
    return code;
}

double dyn_control_kinks_by_forward(DynamicRun *r)
{
    double t0 = srd_seconds();
    int *status = srd_xcalloc((size_t)r->n_params + 1, sizeof(int));
    size_t n = (size_t)r->n_dofs + 1, np = (size_t)r->n_params + 1;
    double **dq = srd_xcalloc(np, sizeof *dq), **dv = srd_xcalloc(np, sizeof *dv);
    for (int k = 0; k < r->n_params; k++)
        dq[k] = srd_xcalloc(n, sizeof(double)), dv[k] = srd_xcalloc(n, sizeof(double));
    char why[256];
    dynamic_forward(r, dq, dv, status, why, sizeof why); /* a singular step: the adjoint has met it too */
    for (int k = 0; k < r->n_params; k++)
        free(dq[k]), free(dv[k]);
    free(dq), free(dv), free(status);
    return srd_seconds() - t0;
}

/* ---- force probes at the end ---- */

void dyn_forget_ends(DynamicRun *r)
{
    for (int k = 0; k < r->n_params; k++) {
        if (r->ends)
            dyn_tan_free(r, &r->ends[k]);
        if (r->last)
            dyn_tan_free(r, &r->last[k]);
    }
    free(r->ends), free(r->last);
    r->ends = r->last = NULL;
}

/* The schedules and the prescribed motion (its accelerations) at time t, on the sim. */
static void motion_at(DynamicRun *r, double t, const double *q, const double *v)
{
    srd_sim *s = &r->b->s;
    srd_sim_apply_schedules(s, t);
    double *qm = dyn_dup(q, (size_t)r->n_dofs), *vm = dyn_dup(v, (size_t)r->n_dofs);
    srd_motion_impose(s, t, 1, qm, vm);
    free(qm), free(vm);
}

/* The sim at the end of record x's step as the probes read it there (write_probes after a step):
 * its end with its start's inputs (the elements' state still at its start), its pairs, and the
 * schedules and prescribed motion there. */
Instant dyn_at_record_end(DynamicRun *r, const Record *x)
{
    srd_sim *s = &r->b->s;
    dyn_put_record(r, x);
    s->dynamic = 1;
    motion_at(r, x->t, x->q1, x->v1);
    return (Instant){ x->q1, x->t, x->dt };
}

/* The sim at the run's start as the objective's first record read it (the start's pairs, its
 * dynamic flag). */
Instant dyn_at_start_record(DynamicRun *r)
{
    srd_sim *s = &r->b->s;
    const Record *first = &r->records[0];
    size_t bytes = sizeof(double) * (size_t)r->n_dofs;
    memcpy(s->q, r->q_start, bytes), memcpy(s->q0, r->q0_start, bytes), memcpy(s->v0, first->v0, bytes);
    memcpy(s->v, first->v0, bytes), memcpy(s->a0, first->a0, bytes);
    s->method = r->method;
    dyn_set_released(r, NULL);
    if (s->pairs)
        srd_pairs_hold(s, r->start_pairs, r->n_start_pairs);
    dyn_set_params(r, r->params_start);
    for (int k = 0; k < r->n_sets; k++)
        memcpy(s->kernels[k].batch.state, first->S0[k], sizeof(double) * dyn_set_state_len(s, k));
    s->t = 0, s->dt = r->start_dt, s->dynamic = r->start_dynamic, s->state_behind = 0;
    motion_at(r, 0, r->q_start, first->v0);
    return (Instant){ r->q_start, 0, r->start_dt };
}

/* Adds into g (a row per DOF, held ones too) instances [lo, hi) of set j's residual at the end
 * moved along param k: the end's configuration, the last step's start (its q0, v0 and the state
 * it read), the data and the param itself. */
static void end_set_tangent(DynamicRun *r, int k, const Tan *end, const Tan *start, int j, int lo, int hi,
                            double *g)
{
    srd_sim *s = &r->b->s;
    const Track *t = &r->tracks[k];
    srd_eval_ctx ctx = { s->q, s->q0, s->v0, s->params, s->t, srd_sim_view_dt(s), NULL, g, NULL };
    srd_elem_batch part = srd_batch_every_dof(&s->kernels[j].batch.b, lo, hi);
    size_t at_data = (size_t)lo * part.n_data, at_state = (size_t)lo * part.n_state;
    InputTangents w = { end->q, start->q, start->v, start->S[j] + at_state, t->dc[j] + at_data,
                        t->dparams };
    if (hi > lo)
        kernel_tangent_forward(&r->b->tangents[j], &ctx, &part, &w);
}

/* The reactions where the sim stands (Reactions), once for every param's tangent or seed. */
Reactions dyn_reactions_here(DynamicRun *r)
{
    srd_sim *s = &r->b->s;
    size_t n = (size_t)r->n_dofs + 1;
    Reactions x = { srd_xcalloc(n, sizeof(double)), srd_xcalloc(n, sizeof(double)) };
    srd_sim_reaction_residual(s, x.res);
    srd_sim_reactions_of_residual(s, x.res, x.react);
    return x;
}

void dyn_reactions_free(Reactions *x)
{
    free(x->react), free(x->res);
    x->react = x->res = NULL;
}

/* Whether the sim's forces where it stands read damping: a simulation's, with a damping the
 * model has or param track t moves (NULL: any track). */
bool dyn_view_damped(const DynamicRun *r, const Track *t)
{
    const srd_sim *s = &r->b->s;
    bool moved = t && (t->dalpha != 0 || t->dbeta != 0);
    for (int k = 0; !t && r->tracks && k < r->n_params; k++)
        moved |= r->tracks[k].dalpha != 0 || r->tracks[k].dbeta != 0;
    return s->dynamic && (s->m->damping_alpha > 0 || s->m->damping_beta > 0 || moved);
}

/* srd_sim_damped_velocity (u, c; true when the damping is the step's own: K at q0), and its
 * tangent du from the tangents at the view (end) and at its step's start (start). */
static bool view_damped_velocity(const DynamicRun *r, const Tan *end, const Tan *start, double *u, double *du,
                                 double *c)
{
    const srd_sim *s = &r->b->s;
    bool of_step = srd_sim_damped_velocity(s, u, c);
    for (int d = 0; d < r->n_dofs; d++)
        du[d] = s->m->dof_kind[d] == SRD_DOF_LAMBDA ? 0
              : of_step ? c[0] * (end->q[d] - start->q[d]) + c[1] * start->v[d]
                        : end->v[d];
    return of_step;
}

/* d(the damping force on every DOF where the sim stands)/dp along track t, into dr (added):
 * (dalpha M + alpha dM) u + alpha M du + beta_tangent's by DOF. */
static void view_damping_tangent(DynamicRun *r, const Track *t, const Tan *end, const Tan *start, double *dr)
{
    srd_sim *s = &r->b->s;
    const srd_model *m = s->m;
    size_t n = (size_t)r->n_dofs + 1;
    double *u = srd_xcalloc(n, sizeof(double)), *du = srd_xcalloc(n, sizeof(double)), c[2];
    bool of_step = view_damped_velocity(r, end, start, u, du, c);
    for (int d = 0; d < r->n_dofs; d++)
        dr[d] += (t->dalpha * m->dof_mass[d] + m->damping_alpha * t->dmass[d]) * u[d] +
                 m->damping_alpha * m->dof_mass[d] * du[d];
    if (m->damping_beta > 0 || t->dbeta != 0)
        beta_tangent(r, of_step ? s->q0 : s->q, s->q0, u, du, of_step ? start->q : end->q, start->q, start->S, t, true,
                     dr);
    free(u), free(du);
}

/* d(every DOF's reaction at the end)/dp, as srd_sim_reactions takes them: the elements' residual
 * less the loads and with the damping, a sliding node's across its line, and on held DOFs the
 * mass times the prescribed acceleration. */
static void end_reactions_tangent(DynamicRun *r, int k, const Tan *end, const Tan *start, const Reactions *rx,
                                  double *dr)
{
    srd_sim *s = &r->b->s;
    const srd_model *m = s->m;
    const Track *t = &r->tracks[k];
    memset(dr, 0, sizeof(double) * (size_t)m->n_dofs);
    for (int j = 0; j < m->n_sets; j++)
        end_set_tangent(r, k, end, start, j, 0, s->kernels[j].batch.b.n, dr);
    for (int d = 0; d < m->n_dofs; d++)
        dr[d] -= s->load_factor * t->dfext[d];
    if (dyn_view_damped(r, t))
        view_damping_tangent(r, t, end, start, dr);
    sens_reactions_across(s, rx->res, t->geometry ? t->daxis : NULL, dr);
    for (int d = 0; d < m->n_dofs; d++)
        if (s->fixed[d])
            dr[d] += t->dmass[d] * s->prescribed_acc[d] + m->dof_mass[d] * t->dma[d];
}

/* d(the force the ground or an obstacle exerts, summed over the nodes)/dp at the end: minus
 * its contact (and friction) elements' residual moved along the param. */
static void end_contact_tangent(DynamicRun *r, int k, const Tan *end, const Tan *start, int target, double *out)
{
    const srd_model *m = r->b->m;
    double *g = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    for (int j = 0, lo, hi; j < m->n_sets; j++)
        if (srd_sim_contact_instances(m, j, target, &lo, &hi))
            end_set_tangent(r, k, end, start, j, lo, hi, g);
    out[0] = out[1] = out[2] = 0;
    for (int i = 0; i < m->n_nodes; i++)
        for (int c = 0; c < 3; c++)
            out[c] -= g[m->node_dof[i] + c];
    free(g);
}

/* Force probe pr's tangent along param k (its track at the sim's time) where the sim stands: end,
 * the tangents there; start, those at the start of the step whose forces are read. */
static void force_probe_tangent(DynamicRun *r, int k, const srd_probe *pr, const Tan *end, const Tan *start,
                                const Reactions *rx, double *out)
{
    if (pr->kind != SRD_PROBE_REACTION) {
        end_contact_tangent(r, k, end, start, pr->target, out);
        return;
    }
    double *dr = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    end_reactions_tangent(r, k, end, start, rx, dr);
    srd_probe_reaction_tangent(r->b->m, pr, r->b->s.q, rx->react, end->q, dr, out);
    free(dr);
}

/* The gradient g of joint pr's constraint instances where the sim stands (every DOF's rows), and
 * with end and start (the tangents there, as end_set_tangent takes them) its change dg. */
static void joint_parts_tangent(DynamicRun *r, int k, const srd_probe *pr, const Tan *end, const Tan *start,
                                double *g, double *dg)
{
    const srd_joint *j = &r->b->m->joints[pr->target];
    for (int i = 0; i < j->n_parts; i++) {
        srd_sim_instance_gradient(&r->b->s, j->part[i].set, j->part[i].instance, j->part[i].instance + 1, g);
        if (dg)
            end_set_tangent(r, k, end, start, j->part[i].set, j->part[i].instance, j->part[i].instance + 1, dg);
    }
}

double *dyn_joint_gradient(DynamicRun *r, const srd_probe *pr)
{
    double *g = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    joint_parts_tangent(r, 0, pr, NULL, NULL, g, NULL);
    return g;
}

/* A joint's force or torque at the run's end along param k (dyn_joint_wrench_tangent). */
static void joint_probe_tangent(DynamicRun *r, int k, const srd_probe *pr, double *out)
{
    const Record *x = &r->records[r->n_records - 1];
    dyn_at_record_end(r, x);
    dyn_track_at(r, &r->tracks[k], x->t, x->dt);
    double *g = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double)), *dg = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    joint_parts_tangent(r, k, pr, &r->ends[k], &r->last[k], g, dg);
    dyn_joint_wrench_tangent(r, x, pr, g, dg, &r->ends[k], out);
    free(g), free(dg);
}

bool dynamic_force_probe(DynamicRun *r, int k, const srd_probe *pr, double *out)
{
    if (pr->kind == SRD_PROBE_JOINT && !dyn_end_probe_derived(pr)) {
        if (!r->ends || !r->last || !r->n_records || r->tracks[k].status != STATIC_DERIVED)
            return false;
        joint_probe_tangent(r, k, pr, out);
        return true;
    }
    if (dyn_end_probe_derived(pr)) {
        if (!r->ends || !r->n_records || r->tracks[k].status != STATIC_DERIVED)
            return false;
        dyn_end_probe_tangent(r, k, pr, &r->ends[k], out);
        return true;
    }
    if (!r->ends || !r->last || !r->n_records || r->tracks[k].status != STATIC_DERIVED || !control_force_probe(pr))
        return false;
    const Record *x = &r->records[r->n_records - 1];
    dyn_at_record_end(r, x);
    dyn_track_at(r, &r->tracks[k], x->t, x->dt);
    Reactions rx = pr->kind == SRD_PROBE_REACTION ? dyn_reactions_here(r) : (Reactions){ NULL, NULL };
    force_probe_tangent(r, k, pr, &r->ends[k], &r->last[k], &rx, out);
    dyn_reactions_free(&rx);
    return true;
}

/* ---- the forces a controller reads ---- */

/* The sim as the force probes read before record x's sample: the step before it (its View) ending at
 * x's start, the params before the sample, the schedules and prescribed motion at its time. */
static Instant at_sample_view(DynamicRun *r, const Record *x)
{
    srd_sim *s = &r->b->s;
    const Sampled *c = x->sample;
    const View *v = c->view;
    size_t bytes = sizeof(double) * (size_t)r->n_dofs;
    memcpy(s->q, x->q0, bytes), memcpy(s->q0, v->q0, bytes), memcpy(s->v0, v->v0, bytes), memcpy(s->v, x->v0, bytes);
    s->method = r->method;
    dyn_set_released(r, v->released);
    if (s->pairs) /* before the state: the pairs' sets are sized by them */
        srd_pairs_hold(s, v->pairs, v->n_pairs);
    for (int k = 0; k < r->n_sets; k++)
        memcpy(s->kernels[k].batch.state, v->S[k], sizeof(double) * dyn_set_state_len(s, k));
    dyn_set_params(r, c->params);
    s->t = c->t, s->dt = s->last_dt = v->dt, s->state_behind = v->behind, s->dynamic = v->dynamic;
    motion_at(r, c->t, x->q0, x->v0);
    for (int k = 0; k < r->n_params; k++) /* the data's tangents at this time, with these params */
        r->tracks[k].at = NAN;
    return (Instant){ x->q0, c->t, v->dt };
}

/* The force probes' values that the sample before record x read, in their slots (n_data values);
 * the sim is left at the sample's view, and rx (NULL arrays on entry) holds the reactions there
 * when one is read (the caller frees them). */
double *dyn_sample_forces(DynamicRun *r, const Record *x, Reactions *rx)
{
    const srd_model *m = r->b->m;
    double *f = srd_xcalloc((size_t)m->control.n_data + 1, sizeof(double));
    at_sample_view(r, x);
    for (int j = 0; j < m->control.n_slots && !rx->react; j++)
        if (control_force_slot(m, j) && m->simulate.probes[m->control.slots[j].probe].kind == SRD_PROBE_REACTION)
            *rx = dyn_reactions_here(r);
    for (int j = 0; j < m->control.n_slots; j++) {
        const srd_control_slot *sl = &m->control.slots[j];
        double v[6];
        if (control_force_slot(m, j)) {
            srd_probe_value_at(&r->b->s, &m->simulate.probes[sl->probe], r->b->s.q, rx->react, v);
            memcpy(&f[sl->first], v, sizeof(double) * (size_t)sl->n);
        }
    }
    return f;
}

/* Their tangents along param k (the sim at the sample's view): end, the tangents at record x's
 * start; start, at the start of the step before it. */
static double *sample_force_tangents(DynamicRun *r, const Record *x, int k, const Tan *end, const Tan *start,
                                     const Reactions *rx)
{
    const srd_model *m = r->b->m;
    double *d = srd_xcalloc((size_t)m->control.n_data + 1, sizeof(double));
    dyn_track_at(r, &r->tracks[k], x->sample->t, x->sample->view->dt);
    for (int j = 0; j < m->control.n_slots; j++) {
        const srd_control_slot *sl = &m->control.slots[j];
        double out[GRAD_FORCE_WIDTH];
        if (control_force_slot(m, j)) {
            force_probe_tangent(r, k, &m->simulate.probes[sl->probe], end, start, rx, out);
            memcpy(&d[sl->first], out, sizeof(double) * (size_t)sl->n);
        }
    }
    return d;
}

/* The run's start as the forces read it there: its q0 is its q where no motion drives it (the q
 * returned is the caller's to free; the rest is borrowed from start). */
static Tan start_view_tangent(const DynamicRun *r, const Tan *start)
{
    return (Tan){ dyn_start_q0_share(r, start->q), start->v, start->a, start->S, start->B };
}
