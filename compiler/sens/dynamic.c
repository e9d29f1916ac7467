/* dynamic.c — sensitivities of a simulation (see dynamic.h).
 *
 * One implicit substep takes its start (q0, v0, a0 and the elements' state S0) to q1 by solving
 *     R(q1) = a M (q1 - qhat) + grad E(b q1 + (1 - b) q0; q0, v0, S0, c(p, t)) - fext(p, t)
 *             + alpha M (c1 (q1 - q0) + c0 v0) = 0,   qhat = q0 + dt v0 (+ dt^2/4 a0),
 * then v1 and a1 by the scheme's formulas and S1 by the frames' transport. Differentiating:
 *     K dq1 = -(dR at fixed q1),  K = dR/dq1 (the step's Jacobian at its end),
 * where dR at fixed q1 collects the tangent kernels of the elements' other inputs, the inertia
 * and damping terms and the params' own change of data, loads and masses (c, fext, M: their
 * static part from one seeded elaboration, or samples of the model at nearby param values, as
 * the static derivative takes them; what the schedules write at the step's time exactly,
 * schedule_tangent.h). A param in the reference geometry moves the start (q, S), the held DOFs
 * and the sliding nodes' lines too. A `control` block's samples are differentiated where they
 * ran (control_tangent.h): the inputs they set carry their tangents into the steps that follow,
 * as the params do. Each step is linearised with the constraints it ran with (a `release` frees
 * DOFs during the run) and the sliding clamps' lines where it held them (a `rotate` turns them).
 * The adjoint runs the transposes of the same pieces backward: mu = K^-T lambda_q1 per step. */
#include "sens/dynamic_run.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "checkpoint.h"
#include "clock.h"
#include "control.h"
#include "sens/control_tangent.h"
#include "sens/schedule_tangent.h"
#include "sens/static.h"
#include "sens/state_tangent.h"
#include "contact/pairs.h"

/* ---- recording ---- */

double *dyn_dup(const double *a, size_t n)
{
    double *c = srd_xcalloc(n + 1, sizeof(double));
    memcpy(c, a, n * sizeof(double));
    return c;
}

size_t dyn_set_state_len(const srd_sim *s, int k)
{
    return (size_t)s->kernels[k].batch.b.n * (size_t)s->kernels[k].batch.b.n_state;
}

/* A copy of every set's elements' state as s holds it now. */
static double **states_copy(const DynamicRun *r, const srd_sim *s)
{
    double **S = srd_xcalloc((size_t)r->n_sets + 1, sizeof *S);
    for (int k = 0; k < r->n_sets; k++)
        S[k] = dyn_dup(s->kernels[k].batch.b.state, dyn_set_state_len(s, k));
    return S;
}

static void states_free(const DynamicRun *r, double **S)
{
    for (int k = 0; S && k < r->n_sets; k++)
        free(S[k]);
    free(S);
}

/* A copy of the release flags s holds now (NULL when the model releases nothing). */
static unsigned char *released_copy(const srd_sim *s)
{
    size_t n = (size_t)s->m->n_releases;
    if (!n)
        return NULL;
    unsigned char *c = srd_xcalloc(n, 1);
    memcpy(c, s->released, n);
    return c;
}

/* Room for a right-hand side over the free DOFs whichever releases are done (and the kernels'
 * scratch): a pass's buffers outlast the steps it crosses. */
size_t dyn_grad_room(const DynamicRun *r)
{
    return (size_t)r->n_dofs + SRD_SCRATCH + 1;
}

/* bytes more held by the records, views and checkpoints (negative: released), and the peak. */
static void count_bytes(DynamicRun *r, double bytes)
{
    r->bytes_now += bytes;
    r->peak_bytes = fmax(r->peak_bytes, r->bytes_now);
}

static void sampled_free(DynamicRun *r, Sampled *x)
{
    if (!x)
        return;
    if (x->view) {
        free(x->view->q0), free(x->view->v0);
        states_free(r, x->view->S);
        count_bytes(r, -(r->record_bytes + 2.0 * sizeof(int) * x->view->n_pairs));
        free(x->view->pairs), free(x->view->released), free(x->view);
    }
    free(x->data), free(x->params), free(x);
}

static void record_free(DynamicRun *r, Record *x)
{
    if (!x->q0)
        return;
    free(x->q0), free(x->v0), free(x->a0), free(x->q1), free(x->v1);
    states_free(r, x->S0);
    free(x->pairs), free(x->params), free(x->released), free(x->axes), free(x->bodies0);
    sampled_free(r, x->sample);
    count_bytes(r, -(r->record_bytes + 2.0 * sizeof(int) * x->n_pairs));
    memset(x, 0, sizeof *x);
}

static void record_begin(DynamicRun *r, const srd_sim *s)
{
    Record *x = &r->pending;
    size_t n = (size_t)r->n_dofs;
    x->dt = s->dt;
    x->step = 0;
    x->q0 = dyn_dup(s->q0, n), x->v0 = dyn_dup(s->v0, n), x->a0 = dyn_dup(s->a0, n);
    x->S0 = states_copy(r, s);
    x->params = s->controller ? dyn_dup(s->params, (size_t)r->n_params) : NULL;
    x->released = released_copy(s); /* after the step's releases: srd_step does them first */
    x->bodies0 = dyn_bodies_save(s);
    count_bytes(r, r->record_bytes);
    r->have_pending = true;
}

/* A copy of the contact pairs s's batches hold (2 parts each), their count into *n. */
static int *held_pairs(const srd_sim *s, int *n)
{
    const int *pairs = NULL;
    *n = s->pairs ? srd_pairs_held(s->pairs, &pairs) : 0;
    int *copy = srd_xcalloc(2 * (size_t)*n + 1, sizeof(int));
    if (*n)
        memcpy(copy, pairs, 2 * sizeof(int) * (size_t)*n);
    return copy;
}

/* The contact pairs the step's solve held: the step is linearised with them again. */
static void record_pairs(DynamicRun *r, const srd_sim *s, Record *x)
{
    x->pairs = held_pairs(s, &x->n_pairs);
    count_bytes(r, 2.0 * sizeof(int) * x->n_pairs);
}

/* Whether a rotation turns a sliding clamp's line (the records keep where the lines stood). */
static bool lines_turn(const srd_model *m)
{
    for (int k = 0; k < m->n_slides; k++)
        if (sens_anchor_rotated(m, k))
            return true;
    return false;
}

static void record_done(DynamicRun *r, const srd_sim *s)
{
    Record *x = &r->pending;
    x->t = s->t;
    if (r->lines_turn) /* the step's own: Newton held its sliding nodes on them */
        x->axes = dyn_dup(s->slide_axis, 3 * (size_t)s->m->n_slides);
    x->q1 = dyn_dup(s->q, (size_t)r->n_dofs), x->v1 = dyn_dup(s->v, (size_t)r->n_dofs);
    dyn_bodies_turn(s, x->q1); /* the turns the step solved for: it is linearised there */
    record_pairs(r, s, x);
    if (r->n_records == r->cap_records) {
        r->cap_records = r->cap_records ? 2 * r->cap_records : 64;
        r->records = srd_xrealloc(r->records, sizeof *r->records * (size_t)r->cap_records);
    }
    r->records[r->n_records++] = *x;
    memset(x, 0, sizeof *x);
    r->have_pending = false;
}

static void substep_hook(srd_sim *s, int phase, void *ctx)
{
    DynamicRun *r = ctx;
    if (phase == SRD_SUBSTEP_BEGIN)
        record_begin(r, s);
    else if (phase == SRD_SUBSTEP_DONE)
        record_done(r, s);
    else
        record_free(r, &r->pending);
    r->have_pending = phase == SRD_SUBSTEP_BEGIN;
}

static void forget_records(DynamicRun *r)
{
    for (long i = 0; i < r->n_records; i++)
        record_free(r, &r->records[i]);
    r->n_records = 0;
}

/* The forces' view of the step that ended where s stands (View). */
static View *view_of(DynamicRun *r, const srd_sim *s)
{
    View *v = srd_xcalloc(1, sizeof *v);
    v->q0 = dyn_dup(s->q0, (size_t)r->n_dofs), v->v0 = dyn_dup(s->v0, (size_t)r->n_dofs);
    v->S = states_copy(r, s);
    v->dt = srd_sim_view_dt(s), v->behind = s->state_behind, v->dynamic = s->dynamic;
    v->pairs = held_pairs(s, &v->n_pairs);
    v->released = released_copy(s);
    count_bytes(r, r->record_bytes + 2.0 * sizeof(int) * v->n_pairs);
    return v;
}

/* What the controller holds before a step (NULL without one): the sample the step may start with,
 * and when it reads forces, what they read. */
static Sampled *controller_before(DynamicRun *r, const srd_sim *s)
{
    if (!s->controller)
        return NULL;
    Sampled *x = srd_xcalloc(1, sizeof *x);
    x->t = s->t, x->dt = s->step_dt;
    x->data = dyn_dup(s->controller->data, (size_t)s->m->control.n_data);
    x->params = dyn_dup(s->params, (size_t)r->n_params);
    if (r->control_forces && srd_controller_due(s))
        x->view = view_of(r, s);
    return x;
}

/* One step of the run, its substeps recorded when `recording` (the controller's sample before
 * it with its first substep). */
static int run_step(DynamicRun *r, long step, bool recording)
{
    srd_sim *s = &r->b->s;
    long before = r->n_records;
    Sampled *sample = recording ? controller_before(r, s) : NULL;
    int64_t next = s->controller ? s->controller->next : 0;
    s->substep_hook = recording ? substep_hook : NULL;
    s->substep_ctx = r;
    long rejected = s->rejected;
    int code = srd_step(s, r->method, 6);
    s->substep_hook = NULL;
    r->subdivided += s->rejected - rejected;
    if (recording && r->n_records > before)
        r->records[r->n_records - 1].step = step;
    if (sample && r->n_records > before && s->controller->next != next)
        r->records[before].sample = sample, sample = NULL;
    sampled_free(r, sample);
    return code;
}

/* ---- what is not covered ---- */

static bool states_supported(const srd_sim *s)
{
    for (int k = 0; k < s->m->n_sets; k++)
        if (!srd_state_tangent_supported(&s->kernels[k].info))
            return false;
    return true;
}

/* Whether the contact pairs' sets keep no state (only pairs with rigid bodies keep their frames). */
static bool pair_states_none(const srd_sim *s)
{
    for (int k = 0; s->pairs && k < SRD_PAIR_SETS; k++)
        if (s->m->self_contact.set[k] >= 0 && s->kernels[s->m->self_contact.set[k]].info.n_state)
            return false;
    return true;
}

/* Whether prescribed motion drives a clamped rod end (its anchor: the runtime carries the sliding
 * node with it). */
static bool anchors_driven(const srd_model *m)
{
    for (int i = 0; i < m->n_motions; i++)
        for (int j = 0; j < m->motions[i].n_nodes; j++)
            for (int k = 0; k < m->n_slides; k++)
                if (m->motions[i].nodes[j] == m->slide_anchor[k])
                    return true;
    return false;
}

/* Why an explicit method's run of the model has no derivative here ("" when it has). */
static const char *explicit_unsupported(const srd_model *m, const srd_sim *s)
{
    if (m->n_bodies)
        return "it has rigid bodies under an explicit method: derivatives are taken of their implicit_euler, "
               "implicit_midpoint and newmark runs";
    if (anchors_driven(m))
        return "prescribed motion carries its clamped rod ends under an explicit method: not derived yet";
    if (s->n_multipliers)
        return "it has constraints with multipliers under an explicit method: not derived";
    if (s->pairs)
        return "it has contact between its parts under an explicit method: derivatives are taken of their "
               "implicit_euler, implicit_midpoint and newmark runs";
    return "";
}

/* Why the model's simulation has no derivative here ("" when it has). */
static const char *unsupported(const srd_model *m, const srd_sim *s, srd_method method)
{
    if ((int)method < 0 || method > SRD_RK4)
        return "its method has no derivative";
    const char *why = method >= SRD_SYMPLECTIC_EULER ? explicit_unsupported(m, s) : "";
    if (*why)
        return why;
    if (m->n_bodies && s->controller && control_reads_forces(m))
        return "its `control` block reads force probes of a model with rigid bodies: not derived yet";
    if (s->controller && *control_tangents_unsupported(m))
        return control_tangents_unsupported(m);
    if (!pair_states_none(s))
        return "its contact pairs carry rigid bodies' frames in their state: not derived yet";
    if (!states_supported(s))
        return "it has rigid bodies' frames in its elements' state: not derived yet";
    return "";
}

/* ---- the first run ---- */

/* Whether param k is derived: every input a controller sets is (the backward pass carries the
 * adjoints of the inputs' values in their gradients). */
bool dyn_asked(const DynamicRun *r, int k)
{
    return !r->opt.params || r->opt.params[k] || (r->b->s.controller && r->b->m->params[k].input);
}

static void each_step(DynamicRun *r)
{
    if (r->opt.each)
        r->opt.each(r->opt.ctx, &r->b->s);
}


static double state_bytes(const srd_sim *s)
{
    double n = 0;
    for (int k = 0; k < s->m->n_sets; k++)
        n += (double)dyn_set_state_len(s, k);
    return n;
}

/* Steps per segment: the whole run when its records fit the memory allowed (SRD_GRAD_MEMORY
 * bytes, 1 GiB by default), else about sqrt(steps) (checkpoints and one segment's records both
 * grow as sqrt(steps)); SRD_GRAD_SEGMENT forces a length (tests). */
static long segment_length(DynamicRun *r)
{
    const char *forced = getenv("SRD_GRAD_SEGMENT"), *limit = getenv("SRD_GRAD_MEMORY");
    if (forced && atol(forced) > 0)
        return atol(forced);
    double budget = limit && atof(limit) > 0 ? atof(limit) : 1024.0 * 1024 * 1024;
    if (r->record_bytes * (double)r->steps * 1.5 <= budget)
        return r->steps > 0 ? r->steps : 1;
    long k = (long)ceil(sqrt((double)r->steps));
    long fits = (long)(budget / (2 * r->record_bytes));
    return k < fits || fits < 1 ? k : fits;
}

static bool save_checkpoint(DynamicRun *r, Segment *seg)
{
    seg->released = released_copy(&r->b->s);
    FILE *f = open_memstream(&seg->checkpoint, &seg->size);
    srd_checkpoint_pos pos = { 0 };
    bool ok = f && srd_checkpoint_save(f, &r->b->s, 0, &pos) == 0;
    if (f)
        fclose(f);
    count_bytes(r, (double)seg->size);
    return ok;
}

static bool load_checkpoint(DynamicRun *r, const Segment *seg)
{
    dyn_set_released(r, seg->released); /* first: the checkpoint's pairs couple in its system */
    FILE *f = fmemopen(seg->checkpoint, seg->size, "rb");
    srd_checkpoint_pos pos;
    char err[256];
    bool ok = f && srd_checkpoint_load(f, "a checkpoint of the run", &r->b->s, 0, &pos, err, sizeof err) == 0;
    if (f)
        fclose(f);
    return ok;
}

static void describe_failure(const srd_sim *s, int code, char *why, size_t why_n)
{
    snprintf(why, why_n, "the simulation failed at t = %.6g s (%s): a failed step has no derivative; make the run "
             "succeed first (a smaller dt, a tighter model)", s->t,
             code == 1 ? "Newton's method did not converge" : code == 2 ? "the state became NaN or Inf"
                                                                  : "parts would pass through each other");
}

/* The static equilibrium's derivative along every param, while the sim stands there. */
static void start_derivatives(DynamicRun *r)
{
    r->dq_eq = srd_xcalloc((size_t)r->n_params + 1, sizeof *r->dq_eq);
    r->eq_status = srd_xcalloc((size_t)r->n_params + 1, sizeof *r->eq_status);
    for (int k = 0; k < r->n_params; k++) {
        r->dq_eq[k] = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
        r->eq_status[k] = !dyn_asked(r, k) ? DYNAMIC_NOT_ASKED : r->b->m->params[k].shapes ? STATIC_MOVES_GEOMETRY
                                                     : static_point_derivative(r->b, r->o, k, r->dq_eq[k]);
    }
}

/* The static start and what its derivative needs: the state it carries frames from. */
static int start_run(DynamicRun *r)
{
    StaticPoint *b = r->b;
    srd_sim *s = &b->s;
    const srd_model *m = b->m;
    r->from_equilibrium = m->simulate.start && m->statics.present;
    r->S_ref = states_copy(r, s);
    if (r->from_equilibrium) {
        int code = srd_static(s, m->statics.load_steps);
        if (code)
            return code;
        start_derivatives(r);
        r->q_ref = dyn_dup(s->q0, (size_t)r->n_dofs);
        srd_sim_start_here(s);
    }
    r->q_start = dyn_dup(s->q, (size_t)r->n_dofs);
    r->q0_start = dyn_dup(s->q0, (size_t)r->n_dofs);
    point_simulation_settings(b);
    return 0;
}

/* What the start's probes read besides the state: its pairs, its step and its dynamic flag. */
static void keep_start(DynamicRun *r, const srd_sim *s)
{
    r->params_start = dyn_dup(s->params, (size_t)r->n_params);
    r->start_pairs = held_pairs(s, &r->n_start_pairs);
    r->start_dt = s->dt;
    r->start_dynamic = s->dynamic;
    r->start_axes = dyn_dup(s->slide_axis, 3 * (size_t)s->m->n_slides);
    r->v_start = dyn_dup(s->v, (size_t)r->n_dofs);
}

/* Steps the whole run, saving a checkpoint at each segment's start; records it when it is one
 * segment. */
static int first_run(DynamicRun *r, char *why, size_t why_n)
{
    srd_sim *s = &r->b->s;
    r->n_segments = (int)((r->steps + r->per_segment - 1) / r->per_segment);
    r->segments = srd_xcalloc((size_t)r->n_segments + 1, sizeof *r->segments);
    r->kept = r->n_segments <= 1;
    int code = 0;
    keep_start(r, s);
    each_step(r);
    for (long k = 1; k <= r->steps && code == 0; k++) {
        Segment *seg = &r->segments[(k - 1) / r->per_segment];
        if ((k - 1) % r->per_segment == 0) {
            seg->first = k - 1;
            if (!r->kept && !save_checkpoint(r, seg)) {
                snprintf(why, why_n, "a checkpoint of the run could not be kept in memory");
                return -1;
            }
        }
        seg->steps++;
        code = run_step(r, k, r->kept);
        if (code == 0)
            each_step(r);
    }
    if (code)
        describe_failure(s, code, why, why_n);
    return code;
}

bool dynamic_refuses(const StaticPoint *b, const GradOptions *o, char *why, size_t why_n)
{
    const srd_model *m = b->m;
    srd_method method = (srd_method)srd_method_from_name(m->simulate.method);
    const char *no = !m->simulate.present ? "it has no `simulate` block" : unsupported(m, &b->s, method);
    if (*no)
        snprintf(why, why_n, "the simulation of %s has no derivative here: %s", o->file, no);
    return *no != 0;
}

DynamicRun *dynamic_run(StaticPoint *b, const GradOptions *o, const DynamicOptions *opt, char *why, size_t why_n)
{
    const srd_model *m = b->m;
    srd_sim *s = &b->s;
    srd_method method = (srd_method)srd_method_from_name(m->simulate.method);
    if (dynamic_refuses(b, o, why, why_n))
        return NULL;
    if (!static_point_compile_tangents(b, why, why_n) || (m->damping_beta > 0 && !static_point_hessian_tangents(b, why, why_n)))
        return NULL;
    ControlTangents *control = s->controller ? control_tangents_build(&b->mk, m, why, why_n) : NULL;
    if (s->controller && !control)
        return NULL;
    DynamicRun *r = srd_xcalloc(1, sizeof *r);
    r->control = control;
    r->control_forces = control && control_reads_forces(m);
    r->b = b, r->o = o, r->method = method;
    if (opt)
        r->opt = *opt;
    r->n_sets = m->n_sets, r->n_dofs = m->n_dofs, r->n_params = m->n_params;
    r->steps = (long)ceil(m->simulate.duration / m->simulate.dt - 1e-9);
    r->record_bytes = sizeof(double) * (5.0 * r->n_dofs + state_bytes(s) + 3.0 * m->n_slides + 15.0 * m->n_bodies) + sizeof(Record) +
                      (double)m->n_releases;
    r->per_segment = segment_length(r);
    r->slide_res = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    r->lines_turn = lines_turn(m);
    int code = start_run(r);
    double t0 = srd_seconds();
    if (code)
        snprintf(why, why_n, "the static equilibrium the simulation starts from was not found");
    else
        code = first_run(r, why, why_n);
    r->run_seconds = srd_seconds() - t0;
    if (code) {
        dynamic_run_free(r);
        return NULL;
    }
    r->qT = dyn_dup(s->q, (size_t)r->n_dofs), r->vT = dyn_dup(s->v, (size_t)r->n_dofs);
    r->bodiesT = dyn_bodies_save(s);
    r->params_end = dyn_dup(s->params, (size_t)r->n_params);
    return r;
}

static void track_free(DynamicRun *r, Track *t);

void dynamic_run_free(DynamicRun *r)
{
    if (!r)
        return;
    forget_records(r);
    record_free(r, &r->pending);
    free(r->records);
    for (int i = 0; i < r->n_segments; i++)
        free(r->segments[i].checkpoint), free(r->segments[i].released);
    free(r->segments);
    states_free(r, r->S_ref);
    free(r->q_ref), free(r->q_start), free(r->q0_start), free(r->qT), free(r->vT), free(r->bodiesT), free(r->start_pairs);
    free(r->start_axes), free(r->slide_res), free(r->v_start);
    for (int k = 0; r->dq_eq && k < r->n_params; k++)
        free(r->dq_eq[k]);
    free(r->dq_eq), free(r->eq_status);
    for (int k = 0; r->tracks && k < r->n_params; k++)
        track_free(r, &r->tracks[k]);
    dyn_forget_ends(r);
    free(r->tracks);
    schedule_tangents_free(r->schedules);
    control_tangents_free(r->control);
    for (int k = 0; r->dctl && k < r->n_params; k++)
        free(r->dctl[k]);
    free(r->dctl), free(r->lctl), free(r->params_start), free(r->params_end);
    free(r);
}

DynamicStats dynamic_stats(const DynamicRun *r)
{
    return (DynamicStats){ r->steps, r->subdivided, r->n_segments, r->peak_bytes, r->run_seconds,
                           r->pass_seconds };
}

const double *dynamic_final_q(const DynamicRun *r) { return r->qT; }
const double *dynamic_final_v(const DynamicRun *r) { return r->vT; }

/* Brings the records of segment i into memory (recomputing it from its checkpoint). */
bool dyn_segment_records(DynamicRun *r, int i)
{
    if (r->kept)
        return true;
    forget_records(r);
    const Segment *seg = &r->segments[i];
    if (!load_checkpoint(r, seg))
        return false;
    point_simulation_settings(r->b); /* the passes set the sim to the steps they linearise */
    for (long k = seg->first + 1; k <= seg->first + seg->steps; k++)
        if (run_step(r, k, true) != 0)
            return false;
    return true;
}

/* ---- how params move the model ---- */

static bool same_values(const double *a, const double *b, size_t n)
{
    return n == 0 || memcmp(a, b, n * sizeof(double)) == 0;
}

/* Whether the samples move the reference geometry: the reference positions or the elements'
 * reference state (rest lengths, frames). */
static bool moves_geometry(const DynamicRun *r, const PointSample *x)
{
    for (int i = 0; i < 4; i++) {
        const srd_sim *s = &x[i].s;
        if (!same_values(s->m->x0, r->b->m->x0, 3 * (size_t)s->m->n_nodes))
            return true;
        for (int k = 0; k < r->n_sets; k++)
            if (!same_values(s->kernels[k].batch.b.state, r->S_ref[k], dyn_set_state_len(s, k)))
                return true;
    }
    return false;
}

/* sum_i w_i f_i[j] for j < n, into a new array. */
static double *combined(const Track *t, const double *const *f, size_t n)
{
    double *d = srd_xcalloc(n + 1, sizeof(double));
    for (size_t j = 0; j < n; j++)
        d[j] = t->st.w[0] * f[0][j] + t->st.w[1] * f[1][j] + t->st.w[2] * f[2][j] + t->st.w[3] * f[3][j];
    return d;
}

/* The forces that do not change with time (the loads' schedules add to them). */
static const double *constant_forces(const srd_sim *s) { return s->schedules.fext_const ? s->schedules.fext_const : s->fext; }

void dyn_note_kink(Track *t, bool kink, double at)
{
    if (kink && (!t->kink || at < t->kink_time)) { /* the adjoint meets the times backward */
        t->kink = true;
        t->kink_time = at;
    }
}


/* dc and dfext at time `at` after a step h: the static tangents with what the schedules write
 * there differentiated exactly (a moving obstacle's step-start pose at at - h); a schedule's
 * switch within the param's stencil (or a switch between the samples of the elaborated values)
 * makes the param's status DYNAMIC_NOT_SMOOTH (at the earliest time it is seen). */
void dyn_track_at(DynamicRun *r, Track *t, double at, double h)
{
    if (t->at == at && t->h == h)
        return;
    t->at = at, t->h = h;
    const srd_sim *base = &r->b->s;
    const srd_model *m = r->b->m;
    for (int k = 0; k < r->n_sets; k++)
        memcpy(t->dc[k], t->dc0[k], sizeof(double) * (size_t)m->sets[k].n * (size_t)m->sets[k].n_data);
    memcpy(t->dfext, t->dfext0, sizeof(double) * (size_t)r->n_dofs);
    bool kink = schedule_tangents_apply(r->schedules, &base->schedules, m, base->params, t->dparams, t->hk, at,
                                        m->simulate.dt, h, t->dE, t->dc, t->dfext);
    dyn_note_kink(t, kink || t->static_kink, at);
    sens_pair_columns(base, t->dpairs, t->dradius, t->dc); /* the pairs the sim holds now (the step's) */
    dyn_track_motion(r, t, at);
}

/* Whether the motion's tangent moves a sliding clamp's anchor (its line, and the sliding node
 * across it, move with it: t->moves_anchor); a rotation would turn the line: then true. */
static bool turns_slide(const DynamicRun *r, Track *t)
{
    int how = sens_anchors_moved(r->b->m, t->dmq);
    t->moves_anchor |= how == SENS_ANCHORS_MOVED;
    return how == SENS_ANCHORS_TURNED;
}

/* The derivative of the prescribed motion at time `at`: of the driven DOFs' positions, velocities
 * and accelerations (zero on DOFs no motion drives), exactly. A param that moves a clamp's anchor
 * gets DYNAMIC_MOVES_MOTION. */
void dyn_track_motion(DynamicRun *r, Track *t, double at)
{
    const srd_sim *s = &r->b->s;
    for (int d = 0; t->geometry && d < r->n_dofs; d++) /* no motion: a held DOF stays at its reference */
        if (s->solver.sys.free_index[d] < 0)
            t->dmq[d] = t->dx0[d];
    if (!r->b->m->n_motions || !t->dmq)
        return;
    bool kink = schedule_tangents_motion(r->schedules, &s->schedules, s->m, s->params, t->dparams, t->hk, at,
                                         r->b->m->simulate.dt, s->fixed, t->dmq, t->dmv, t->dma);
    for (int d = 0; d < r->n_dofs; d++)
        if (s->solver.sys.free_index[d] >= 0)
            t->dmq[d] = t->dmv[d] = t->dma[d] = 0;
    dyn_note_kink(t, kink, at);
    bool turns = schedule_tangents_turn_clamps(r->schedules, &s->schedules, s->m, s->params, t->dparams, at,
                                               r->b->m->simulate.dt); /* the lines and the frames a rotation carries */
    if (t->status == STATIC_DERIVED && (turns || turns_slide(r, t)))
        t->status = DYNAMIC_MOVES_MOTION;
    for (int d = 0; t->geometry && d < r->n_dofs; d++) /* a move holds its nodes at x0 + u */
        if (s->solver.sys.free_index[d] < 0)
            t->dmq[d] += t->dx0[d];
}

static void track_allocate(DynamicRun *r, int k, Track *t, const PointSample *x);
static void track_room(DynamicRun *r, int k, Track *t);
static void track_geometry(DynamicRun *r, Track *t, const PointSample *x);

/* The rigid bodies' principal moments' tangents out of dmass, which holds them at the rotation DOFs
 * (what modal_dof_mass reads; the runtime's masses are zero there). */
static double *moments_of(const srd_model *m, double *dmass)
{
    double *dJ = srd_xcalloc(3 * (size_t)m->n_bodies + 1, sizeof(double));
    for (int k = 0; k < m->n_bodies; k++)
        for (int c = 0; c < 3; c++) {
            int d = m->node_dof[m->bodies[k].node] + 3 + c;
            dJ[3 * k + c] = dmass[d];
            dmass[d] = 0;
        }
    return dJ;
}

/* A track whose static part elaboration gave exactly. */
static void track_take(DynamicRun *r, int k, Track *t, StaticTangent *st)
{
    t->dc0 = st->data, t->dfext0 = st->fext, t->dmass = st->mass, t->dE = st->E, t->dinit = st->dinit;
    t->dinertia = moments_of(r->b->m, t->dmass);
    t->dalpha = st->alpha, t->dbeta = st->beta;
    memcpy(t->dpairs, st->pairs, sizeof t->dpairs);
    t->dradius = st->radius, st->radius = NULL;
    t->status = st->moves_release ? DYNAMIC_MOVES_RELEASE : STATIC_DERIVED;
    t->static_kink = st->switched;
    memset(st, 0, sizeof *st);
    track_room(r, k, t);
}

/* Which reference coordinates (s, x, y, z: bit c for data column c) schedule kernel le's values
 * read. */
static unsigned coordinates_read(const LoweredElement *le)
{
    int32_t count = 0, limit = 0;
    ExprId *order = dag_reachable(le->dag, le->res, le->nd, &count, &limit);
    unsigned read = 0;
    for (int32_t i = 0; i < count; i++) {
        const ExprNode *x = dag_node(le->dag, order[i]);
        if (x->op == XO_INPUT && x->index < le->n_inputs && le->inputs[x->index].cls == KIN_DATA &&
            le->inputs[x->index].index < SCHEDULE_N_DATA)
            read |= 1u << le->inputs[x->index].index;
    }
    free(order);
    return read;
}

static bool reads_coordinates(const LoweredElement *le) { return coordinates_read(le) != 0; }

/* Whether coordinate column c of schedule j's rows moves between the samples and the base by more
 * than rounding (1e-9 of the column's largest value: the samples lie 1e-3 of the param apart, so a
 * coordinate that moves with it moves by about that much; the normalised arc length s of a line
 * whose length changes keeps its values but for their last digits). */
static bool coordinate_moves(const srd_schedule *sc, const PointSample *x, int j, int c)
{
    double scale = 0, moved = 0;
    for (int row = 0; row < sc->n; row++)
        scale = fmax(scale, fabs(sc->data[row * SCHEDULE_N_DATA + c]));
    for (int i = 0; i < 4; i++)
        for (int row = 0; row < sc->n; row++) {
            const double *at = &x[i].s.schedules.a[j].data[row * SCHEDULE_N_DATA];
            moved = fmax(moved, fabs(at[c] - sc->data[row * SCHEDULE_N_DATA + c]));
        }
    return moved > 1e-9 * scale;
}

/* Whether an actuation or load schedule reads a reference coordinate that moves with the param:
 * its tangent at a time is taken along the params only, so the coordinates' share would be lost
 * (a geometry param under a travelling wave in x). */
static bool schedules_read_moving_coordinates(const DynamicRun *r, const PointSample *x)
{
    const ModelKernels *mk = &r->b->mk;
    const srd_schedules *S = &r->b->s.schedules;
    for (int j = 0; j < S->n; j++) {
        const srd_schedule *sc = &S->a[j];
        unsigned read = 0;
        for (int k = 0; sc->motion < 0 && k < mk->n_schedules; k++)
            if (mk->schedules[k].lowered.kind && mk->schedules[k].actuation == sc->actuation &&
                (sc->actuation >= 0 || mk->schedules[k].expr == sc->expr))
                read |= coordinates_read(&mk->schedules[k].lowered);
        for (int c = 0; c < SCHEDULE_N_DATA; c++)
            if ((read >> c & 1u) && coordinate_moves(sc, x, j, c))
                return true;
    }
    return false;
}

/* Whether the prescribed motion moves with the reference geometry by the reference's own change:
 * moves whose displacement reads no reference coordinate (s, x, y, z), held at x0 + u. A
 * rotation turns the reference about a node of it (its change would turn too): not derived. */
static bool motions_follow_reference(const DynamicRun *r)
{
    const srd_model *m = r->b->m;
    const ModelKernels *mk = &r->b->mk;
    for (int i = 0; i < m->n_motions; i++) {
        if (m->motions[i].kind != SRD_MOTION_MOVE)
            return false;
        for (int j = 0; j < mk->n_schedules; j++)
            if (mk->schedules[j].expr == m->motions[i].expr && mk->schedules[j].lowered.kind &&
                reads_coordinates(&mk->schedules[j].lowered))
                return false;
    }
    return true;
}

/* Whether the samples' models release at other times than m. */
static bool releases_move(const srd_model *m, const srd_model *const *models)
{
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < m->n_releases; j++)
            if (models[i]->n_releases != m->n_releases || models[i]->releases[j].time != m->releases[j].time)
                return true;
    return false;
}

static void track_open(DynamicRun *r, int k, Track *t)
{
    const srd_param *p = &r->b->m->params[k];
    t->at = NAN;
    t->param = k;
    if (!dyn_asked(r, k)) {
        t->status = DYNAMIC_NOT_ASKED;
        return;
    }
    if (p->shapes) {
        t->status = STATIC_MOVES_GEOMETRY;
        return;
    }
    if (!point_stencil(p, &t->st)) {
        t->status = STATIC_OUTSIDE_RANGE;
        return;
    }
    t->hk = schedule_switch_step(p);
    StaticTangent st;
    if (r->schedules && static_point_tangent(r->b, r->o, k, &st)) {
        track_take(r, k, t, &st);
        return;
    }
    PointSample x[4];
    bool ok = r->schedules != NULL;
    for (int i = 0; i < 4; i++)
        ok &= point_sample_open(r->b, r->o, k, t->st.at[i], &x[i]);
    const srd_model *models[4] = { x[0].m, x[1].m, x[2].m, x[3].m };
    bool pairs = ok && point_pairs_of_samples(r->b->m, models, &t->st, t->dpairs); /* made at run time */
    t->geometry = ok && moves_geometry(r, x);
    t->status = !ok ? STATIC_NOT_SAMPLED : r->b->s.pairs && !pairs ? STATIC_MOVES_PAIRS
              : releases_move(r->b->m, models) ? DYNAMIC_MOVES_RELEASE
              : t->geometry && (r->b->m->n_bodies || !motions_follow_reference(r) ||
                                schedules_read_moving_coordinates(r, x))
                  ? STATIC_MOVES_GEOMETRY : STATIC_DERIVED;
    if (t->status == STATIC_DERIVED)
        track_allocate(r, k, t, x);
    if (t->status == STATIC_DERIVED && t->geometry)
        track_geometry(r, t, x);
    for (int i = 0; i < 4; i++)
        point_sample_close(&x[i]);
}

/* The data's static tangent: the samples' sims' data (their schedules applied at their start: the
 * columns schedules write are rewritten at each time), with the E schedules' bases from the
 * elaborated data; and whether the elaborated data straddle a switch. */
static void static_data(DynamicRun *r, Track *t, const PointSample *x)
{
    const srd_model *m = r->b->m;
    double **delab = srd_xcalloc((size_t)r->n_sets + 1, sizeof *delab);
    t->dc0 = srd_xcalloc((size_t)r->n_sets + 1, sizeof *t->dc0);
    for (int j = 0; j < r->n_sets; j++) {
        size_t n = (size_t)m->sets[j].n * (size_t)m->sets[j].n_data;
        const double *f[4], *e[4];
        for (int i = 0; i < 4; i++)
            f[i] = x[i].s.kernels[j].batch.b.data, e[i] = x[i].m->sets[j].data;
        t->dc0[j] = combined(t, f, n);
        delab[j] = combined(t, e, n);
        t->static_kink |= point_switches(&t->st, e, m->sets[j].data, delab[j], n, (size_t)m->sets[j].n_data);
    }
    schedule_tangents_static_base(&r->b->s.schedules, m, (const double *const *)delab, t->dc0);
    for (int j = 0; j < r->n_sets; j++)
        free(delab[j]);
    free(delab);
}

/* The rigid bodies' principal moments' tangents from the samples (their initial velocities and
 * axes are known when the model is built: no param moves them). */
static void track_bodies(Track *t, const PointSample *x)
{
    int n = x[0].m->n_bodies;
    double *f[4];
    for (int i = 0; i < 4; i++) {
        f[i] = srd_xcalloc(3 * (size_t)n + 1, sizeof(double));
        for (int k = 0; k < n; k++)
            memcpy(&f[i][3 * k], x[i].m->bodies[k].inertia, 3 * sizeof(double));
    }
    t->dinertia = combined(t, (const double *const *)f, 3 * (size_t)n);
    for (int i = 0; i < 4; i++)
        free(f[i]);
}

/* A derived param's derivatives: the static ones from its samples (data, constant forces,
 * materials' E, masses) and its own; room for the data's, loads' and motion's at a time. */
static void track_allocate(DynamicRun *r, int k, Track *t, const PointSample *x)
{
    const srd_model *m = r->b->m;
    size_t n = (size_t)r->n_dofs;
    static_data(r, t, x);
    const double *f[4];
    for (int i = 0; i < 4; i++)
        f[i] = constant_forces(&x[i].s);
    t->dfext0 = combined(t, f, n);
    t->static_kink |= point_switches(&t->st, f, constant_forces(&r->b->s), t->dfext0, n, 1);
    for (int i = 0; i < 4; i++)
        f[i] = x[i].m->dof_mass;
    t->dmass = combined(t, f, n);
    t->dE = srd_xcalloc((size_t)m->n_objects + 1, sizeof(double));
    for (int o = 0; o < m->n_objects; o++)
        for (int i = 0; i < 4; i++)
            t->dE[o] += t->st.w[i] * x[i].m->objects[o].E;
    for (int i = 0; i < 4; i++)
        t->dalpha += t->st.w[i] * x[i].m->damping_alpha, t->dbeta += t->st.w[i] * x[i].m->damping_beta;
    for (int i = 0; i < 4; i++)
        f[i] = x[i].m->control.init;
    t->dinit = combined(t, f, (size_t)m->control.n_data);
    track_bodies(t, x);
    track_room(r, k, t);
}

/* A moving reference geometry's tangents from the samples' sims at their start. */
static void track_geometry(DynamicRun *r, Track *t, const PointSample *x)
{
    const srd_model *m = r->b->m;
    const double *f[4];
    for (int i = 0; i < 4; i++)
        f[i] = x[i].s.q;
    t->dx0 = combined(t, f, (size_t)r->n_dofs);
    for (int i = 0; i < 4; i++)
        f[i] = x[i].s.slide_axis;
    t->daxis = combined(t, f, 3 * (size_t)m->n_slides);
    for (int k = 0; dyn_explicit(r) && k < 3 * m->n_slides; k++) /* the lines explicit steps project on */
        if (fabs(t->daxis[k]) > 1e-8 && t->status == STATIC_DERIVED) /* above the differences' rounding */
            t->status = DYNAMIC_TURNS_LINE;
    t->dS0 = srd_xcalloc((size_t)r->n_sets + 1, sizeof *t->dS0);
    for (int j = 0; j < r->n_sets; j++) {
        for (int i = 0; i < 4; i++)
            f[i] = x[i].s.kernels[j].batch.b.state;
        t->dS0[j] = combined(t, f, dyn_set_state_len(&r->b->s, j));
    }
}

/* Room for the data's, loads' and motion's derivatives at a time, and the param's own. */
static void track_room(DynamicRun *r, int k, Track *t)
{
    const srd_model *m = r->b->m;
    size_t n = (size_t)r->n_dofs;
    t->dc = srd_xcalloc((size_t)r->n_sets + 1, sizeof *t->dc);
    for (int j = 0; j < r->n_sets; j++)
        t->dc[j] = srd_xcalloc((size_t)m->sets[j].n * (size_t)m->sets[j].n_data + 1, sizeof(double));
    t->dfext = srd_xcalloc(n + 1, sizeof(double));
    t->dparams = srd_xcalloc((size_t)r->n_params + 1, sizeof(double));
    t->dparams[k] = 1;
    t->dmq = srd_xcalloc(n + 1, sizeof(double));
    t->dmv = srd_xcalloc(n + 1, sizeof(double));
    t->dma = srd_xcalloc(n + 1, sizeof(double));
}

static void track_free(DynamicRun *r, Track *t)
{
    for (int j = 0; t->dS0 && j < r->n_sets; j++)
        free(t->dS0[j]);
    free(t->dS0), free(t->dx0), free(t->daxis);
    for (int j = 0; t->dc && j < r->n_sets; j++)
        free(t->dc[j]), free(t->dc0[j]);
    free(t->dc), free(t->dc0), free(t->dfext), free(t->dfext0), free(t->dE), free(t->dmass), free(t->dparams);
    free(t->dinit), free(t->dinertia), free(t->dradius);
    free(t->dmq), free(t->dmv), free(t->dma);
}

/* The tracks of every param (and the schedules' tangents they evaluate): a param whose
 * schedules' tangents could not be built is not sampled. */
void dyn_open_tracks(DynamicRun *r)
{
    if (r->tracks)
        return;
    char err[256];
    r->schedules = schedule_tangents_build(&r->b->mk, r->b->m, err, sizeof err);
    r->tracks = srd_xcalloc((size_t)r->n_params + 1, sizeof *r->tracks);
    for (int k = 0; k < r->n_params; k++)
        track_open(r, k, &r->tracks[k]);
}
