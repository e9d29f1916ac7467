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
 * as the params do. The adjoint runs the transposes of the same pieces backward: mu = K^-T
 * lambda_q1 per step. */
#include "sens/dynamic.h"
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
#include "probe.h"
#include "vec3.h"

/* A sample of the control block before a step: its time and step, and the controller's values
 * and the params before it (those after it are the step's). */
/* What the forces read after a step take from it (sim.h: state_behind): its start's q0, v0 and
 * elements' state, its length, and its contact pairs; at the run's start, the start's. */
typedef struct View {
    double  *q0, *v0, **S;
    double   dt;
    int      behind, dynamic;
} View;

typedef struct Sampled {
    double  t, dt;
    double *data, *params;
    View   *view; /* a controller that reads forces: the step before the sample's */
} Sampled;

/* One accepted implicit substep: its start, its end, and the step it ends (0 if not the last
 * substep of its step). */
typedef struct Record {
    double   t, dt;   /* t: its end */
    long     step;
    double  *q0, *v0, *a0, *q1, *v1;
    double **S0;      /* per set: n * n_state */
    int     *pairs;   /* the contact pairs its solve held (srd_pairs_held: 2 parts each) */
    int      n_pairs;
    double  *params;  /* with a controller: the params (its inputs) the substep ran with */
    Sampled *sample;  /* the controller's sample before it (the first substep of a step), or NULL */
} Record;

/* A stretch of the run from a checkpoint: recomputed to record it when the records of the whole
 * run would not fit the memory allowed. */
typedef struct Segment {
    char  *checkpoint;
    size_t size;
    long   first, steps; /* steps first+1 .. first+steps */
} Segment;

/* How param k moves the model: the derivative of the data the runtime reads at a time t
 * (columns after the schedules, external forces), of the masses and of the prescribed motion.
 * The static part (what elaboration gives) comes from one seeded elaboration, exactly
 * (static_point_tangent), or from four samples at nearby values when elaboration carries no
 * derivative along the param; the schedules' part is exact, at each time asked. */
typedef struct Track {
    int         status;
    int         param;
    Stencil     st;
    double      hk;      /* the switch test's step (schedule_switch_step) */
    double     *dmass, *dfext, *dparams;
    double     *dfext0;  /* the constant forces' tangent */
    double    **dc0;     /* per set: the data's static tangent (E schedules' bases included) */
    double     *dE;      /* per object: its material's E's tangent (E schedules' e0) */
    double      dalpha, dbeta; /* the mass- and stiffness-proportional damping's tangents */
    double      dpairs[5]; /* the `contact` block's values' (ElabTangent.pairs) */
    double     *dinit;   /* the control block's data's initial values' (its vars') */
    /* a param that moves the reference geometry: the start's configuration (every DOF; a held
     * DOF keeps it through the run) and the elements' state, and the sliding clamps' axes */
    bool        geometry;
    double     *dx0, **dS0, *daxis;
    bool        moves_anchor; /* prescribed motion moves a sliding clamp's anchor (its line with it) */
    bool        static_kink; /* a switch of the elaborated values lies within the param's reach */
    double     *dmq, *dmv, *dma; /* the driven DOFs' prescribed position, velocity, acceleration (n_dofs) */
    double    **dc;      /* per set, at the time last asked */
    double      at, h;   /* that time and step */
    bool        kink;    /* a switch within the param's stencil was seen (at kink_time): no derivative */
    double      kink_time;
} Track;

/* Values of the state and their tangents (or adjoints): q, v, a (n_dofs) and per set S. */
typedef struct Tan {
    double  *q, *v, *a;
    double **S;
} Tan;

struct DynamicRun {
    StaticPoint       *b;
    const GradOptions *o;
    srd_method         method;
    long               steps;
    int                n_sets, n_dofs, n_params;
    /* the start: the state S_ref and configuration q_ref a static start carries from */
    bool               from_equilibrium;
    double            *q_ref, **S_ref, *q_start, *q0_start; /* q0_start: the sim's q0 then (a driven
                                                              DOF's may be its reference) */
    double           **dq_eq;       /* per param: the static start's derivative */
    int               *eq_status;
    Segment           *segments;
    int                n_segments;
    long               per_segment;
    bool               kept;        /* the first run's records were kept (one segment) */
    Record            *records;
    long               n_records, cap_records;
    Record             pending;
    bool               have_pending;
    double            *qT, *vT;
    long               subdivided;
    double             bytes_now, peak_bytes, record_bytes;
    double             run_seconds, pass_seconds; /* the first run; the passes so far */
    Track             *tracks;
    int               *start_pairs, n_start_pairs; /* the start's, as its probes read it */
    double             start_dt;
    int                start_dynamic;
    Tan               *before;      /* a controller that reads forces, in the forward pass: per param the
                                     * tangents at the previous record's start */
    Tan               *ends, *last; /* after a forward pass, per param: the tangents at the end, and at the
                                     * last step's start (force probes read both) */
    ScheduleTangents  *schedules;   /* the schedules' exact tangents (NULL until the tracks open) */
    ControlTangents   *control;     /* the control block's (NULL without one) */
    double           **dctl;        /* per param: the controller's values' tangents (forward pass) */
    double            *lctl;        /* their adjoint (backward pass) */
    bool               control_near; /* the backward pass met a sample near a switch */
    double            *params_start, *params_end; /* the params before the first sample and at the end */
    DynamicOptions     opt;
};

/* ---- recording ---- */

static double *dup(const double *a, size_t n)
{
    double *c = srd_xcalloc(n + 1, sizeof(double));
    memcpy(c, a, n * sizeof(double));
    return c;
}

static size_t set_state_len(const srd_sim *s, int k)
{
    return (size_t)s->kernels[k].batch.b.n * (size_t)s->kernels[k].batch.b.n_state;
}

static void sampled_free(DynamicRun *r, Sampled *x)
{
    if (!x)
        return;
    if (x->view) {
        free(x->view->q0), free(x->view->v0);
        for (int k = 0; k < r->n_sets; k++)
            free(x->view->S[k]);
        free(x->view->S), free(x->view);
        r->bytes_now -= r->record_bytes;
    }
    free(x->data), free(x->params), free(x);
}

static void record_free(DynamicRun *r, Record *x)
{
    if (!x->q0)
        return;
    free(x->q0), free(x->v0), free(x->a0), free(x->q1), free(x->v1);
    for (int k = 0; k < r->n_sets; k++)
        free(x->S0[k]);
    free(x->S0), free(x->pairs), free(x->params);
    sampled_free(r, x->sample);
    r->bytes_now -= r->record_bytes + 2.0 * sizeof(int) * x->n_pairs;
    memset(x, 0, sizeof *x);
}

static void record_begin(DynamicRun *r, const srd_sim *s)
{
    Record *x = &r->pending;
    size_t n = (size_t)r->n_dofs;
    x->dt = s->dt;
    x->step = 0;
    x->q0 = dup(s->q0, n), x->v0 = dup(s->v0, n), x->a0 = dup(s->a0, n);
    x->S0 = srd_xcalloc((size_t)r->n_sets + 1, sizeof *x->S0);
    for (int k = 0; k < r->n_sets; k++)
        x->S0[k] = dup(s->kernels[k].batch.b.state, set_state_len(s, k));
    x->params = s->controller ? dup(s->params, (size_t)r->n_params) : NULL;
    r->bytes_now += r->record_bytes;
    r->peak_bytes = fmax(r->peak_bytes, r->bytes_now);
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
    r->bytes_now += 2.0 * sizeof(int) * x->n_pairs;
    r->peak_bytes = fmax(r->peak_bytes, r->bytes_now);
}

static void record_done(DynamicRun *r, const srd_sim *s)
{
    Record *x = &r->pending;
    x->t = s->t;
    x->q1 = dup(s->q, (size_t)r->n_dofs), x->v1 = dup(s->v, (size_t)r->n_dofs);
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
    v->q0 = dup(s->q0, (size_t)r->n_dofs), v->v0 = dup(s->v0, (size_t)r->n_dofs);
    v->S = srd_xcalloc((size_t)r->n_sets + 1, sizeof *v->S);
    for (int k = 0; k < r->n_sets; k++)
        v->S[k] = dup(s->kernels[k].batch.b.state, set_state_len(s, k));
    v->dt = srd_sim_view_dt(s), v->behind = s->state_behind, v->dynamic = s->dynamic;
    r->bytes_now += r->record_bytes;
    r->peak_bytes = fmax(r->peak_bytes, r->bytes_now);
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
    x->data = dup(s->controller->data, (size_t)s->m->control.n_data);
    x->params = dup(s->params, (size_t)r->n_params);
    if (control_reads_forces(s->m) && srd_controller_due(s))
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

/* Why the model's simulation has no derivative here ("" when it has). */
static const char *unsupported(const srd_model *m, const srd_sim *s, srd_method method)
{
    if ((int)method < 0 || method > SRD_NEWMARK)
        return "its method is explicit: derivatives are taken of implicit_euler, implicit_midpoint and newmark runs";
    if (m->n_bodies)
        return "it has rigid bodies: their rotations' derivatives are not derived yet";
    if (s->n_multipliers)
        return "it has joints or constraints with multipliers: not derived yet";
    if (s->controller && *control_tangents_unsupported(m))
        return control_tangents_unsupported(m);
    if (s->controller && s->pairs && control_reads_forces(m))
        return "its `control` block reads forces while parts touch each other (`contact`): the pairs the forces "
               "read are not kept across a sample; not derived yet";
    if (m->n_releases)
        return "it releases constraints during the run: not derived yet";
    if (s->n_frames)
        return "it turns a clamped rod end (a turning motion): not derived yet";
    if (s->pairs && m->damping_beta > 0)
        return "its stiffness-proportional damping takes the stiffness before the step's contact pairs are found: "
               "not derived yet";
    if (!pair_states_none(s))
        return "its contact pairs carry rigid bodies' frames in their state: not derived yet";
    if (!states_supported(s))
        return "it has rigid bodies' frames in its elements' state: not derived yet";
    return "";
}

/* ---- the first run ---- */

/* Whether param k is derived: every input a controller sets is (the backward pass carries the
 * adjoints of the inputs' values in their gradients). */
static bool asked(const DynamicRun *r, int k)
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
        n += (double)set_state_len(s, k);
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
    FILE *f = open_memstream(&seg->checkpoint, &seg->size);
    srd_checkpoint_pos pos = { 0 };
    bool ok = f && srd_checkpoint_save(f, &r->b->s, 0, &pos) == 0;
    if (f)
        fclose(f);
    r->bytes_now += (double)seg->size;
    r->peak_bytes = fmax(r->peak_bytes, r->bytes_now);
    return ok;
}

static bool load_checkpoint(DynamicRun *r, const Segment *seg)
{
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
        r->eq_status[k] = !asked(r, k) ? DYNAMIC_NOT_ASKED : r->b->m->params[k].shapes ? STATIC_MOVES_GEOMETRY
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
    r->S_ref = srd_xcalloc((size_t)r->n_sets + 1, sizeof *r->S_ref);
    for (int k = 0; k < r->n_sets; k++)
        r->S_ref[k] = dup(s->kernels[k].batch.b.state, set_state_len(s, k));
    if (r->from_equilibrium) {
        int code = srd_static(s, m->statics.load_steps);
        if (code)
            return code;
        start_derivatives(r);
        r->q_ref = dup(s->q0, (size_t)r->n_dofs);
        srd_sim_start_here(s);
    }
    r->q_start = dup(s->q, (size_t)r->n_dofs);
    r->q0_start = dup(s->q0, (size_t)r->n_dofs);
    point_simulation_settings(b);
    return 0;
}

/* What the start's probes read besides the state: its pairs, its step and its dynamic flag. */
static void keep_start(DynamicRun *r, const srd_sim *s)
{
    r->params_start = dup(s->params, (size_t)r->n_params);
    r->start_pairs = held_pairs(s, &r->n_start_pairs);
    r->start_dt = s->dt;
    r->start_dynamic = s->dynamic;
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
    r->b = b, r->o = o, r->method = method;
    if (opt)
        r->opt = *opt;
    r->n_sets = m->n_sets, r->n_dofs = m->n_dofs, r->n_params = m->n_params;
    r->steps = (long)ceil(m->simulate.duration / m->simulate.dt - 1e-9);
    r->record_bytes = sizeof(double) * (5.0 * r->n_dofs + state_bytes(s)) + sizeof(Record);
    r->per_segment = segment_length(r);
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
    r->qT = dup(s->q, (size_t)r->n_dofs), r->vT = dup(s->v, (size_t)r->n_dofs);
    r->params_end = dup(s->params, (size_t)r->n_params);
    return r;
}

static void track_free(DynamicRun *r, Track *t);
static void forget_ends(DynamicRun *r);

void dynamic_run_free(DynamicRun *r)
{
    if (!r)
        return;
    forget_records(r);
    record_free(r, &r->pending);
    free(r->records);
    for (int i = 0; i < r->n_segments; i++)
        free(r->segments[i].checkpoint);
    free(r->segments);
    for (int k = 0; r->S_ref && k < r->n_sets; k++)
        free(r->S_ref[k]);
    free(r->S_ref), free(r->q_ref), free(r->q_start), free(r->q0_start), free(r->qT), free(r->vT), free(r->start_pairs);
    for (int k = 0; r->dq_eq && k < r->n_params; k++)
        free(r->dq_eq[k]);
    free(r->dq_eq), free(r->eq_status);
    for (int k = 0; r->tracks && k < r->n_params; k++)
        track_free(r, &r->tracks[k]);
    forget_ends(r);
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
static bool segment_records(DynamicRun *r, int i)
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
            if (!same_values(s->kernels[k].batch.b.state, r->S_ref[k], set_state_len(s, k)))
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

static void note_kink(Track *t, bool kink, double at)
{
    if (kink && (!t->kink || at < t->kink_time)) { /* the adjoint meets the times backward */
        t->kink = true;
        t->kink_time = at;
    }
}

static void track_motion(DynamicRun *r, Track *t, double at);

/* dc and dfext at time `at` after a step h: the static tangents with what the schedules write
 * there differentiated exactly (a moving obstacle's step-start pose at at - h); a schedule's
 * switch within the param's stencil (or a switch between the samples of the elaborated values)
 * makes the param's status DYNAMIC_NOT_SMOOTH (at the earliest time it is seen). */
static void track_at(DynamicRun *r, Track *t, double at, double h)
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
    note_kink(t, kink || t->static_kink, at);
    sens_pair_columns(base, t->dpairs, t->dc); /* the pairs the sim holds now (the step's) */
    track_motion(r, t, at);
}

/* Whether the motion's tangent moves a sliding clamp's anchor (its line, and the sliding node
 * across it, move with it: t->moves_anchor); a rotation would turn the line: then true. */
static bool turns_slide(const DynamicRun *r, Track *t)
{
    const srd_model *m = r->b->m;
    for (int k = 0; k < m->n_slides; k++) {
        const double *da = &t->dmq[m->node_dof[m->slide_anchor[k]]];
        if (da[0] == 0 && da[1] == 0 && da[2] == 0)
            continue;
        if (sens_anchor_rotated(m, k))
            return true;
        t->moves_anchor = true;
    }
    return false;
}

/* The derivative of the prescribed motion at time `at`: of the driven DOFs' positions, velocities
 * and accelerations (zero on DOFs no motion drives), exactly. A param that moves a clamp's anchor
 * gets DYNAMIC_MOVES_MOTION. */
static void track_motion(DynamicRun *r, Track *t, double at)
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
    note_kink(t, kink, at);
    if (t->status == STATIC_DERIVED && turns_slide(r, t))
        t->status = DYNAMIC_MOVES_MOTION;
    for (int d = 0; t->geometry && d < r->n_dofs; d++) /* a move holds its nodes at x0 + u */
        if (s->solver.sys.free_index[d] < 0)
            t->dmq[d] += t->dx0[d];
}

static void track_allocate(DynamicRun *r, int k, Track *t, const PointSample *x);
static void track_room(DynamicRun *r, int k, Track *t);
static void track_geometry(DynamicRun *r, Track *t, const PointSample *x);

/* A track whose static part elaboration gave exactly. */
static void track_take(DynamicRun *r, int k, Track *t, StaticTangent *st)
{
    t->dc0 = st->data, t->dfext0 = st->fext, t->dmass = st->mass, t->dE = st->E, t->dinit = st->dinit;
    t->dalpha = st->alpha, t->dbeta = st->beta;
    memcpy(t->dpairs, st->pairs, sizeof t->dpairs);
    t->status = st->moves_pairs ? STATIC_MOVES_PAIRS : STATIC_DERIVED;
    t->static_kink = st->switched;
    memset(st, 0, sizeof *st);
    track_room(r, k, t);
}

/* Whether schedule kernel le's values read an instance's reference coordinates (s, x, y, z). */
static bool reads_coordinates(const LoweredElement *le)
{
    int32_t count = 0, limit = 0;
    ExprId *order = dag_reachable(le->dag, le->res, le->nd, &count, &limit);
    bool reads = false;
    for (int32_t i = 0; i < count && !reads; i++) {
        const ExprNode *x = dag_node(le->dag, order[i]);
        reads = x->op == XO_INPUT && x->index < le->n_inputs && le->inputs[x->index].cls == KIN_DATA &&
                le->inputs[x->index].index < SCHEDULE_N_DATA;
    }
    free(order);
    return reads;
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

static void track_open(DynamicRun *r, int k, Track *t)
{
    const srd_param *p = &r->b->m->params[k];
    t->at = NAN;
    t->param = k;
    if (!asked(r, k)) {
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
              : t->geometry && !motions_follow_reference(r) ? STATIC_MOVES_GEOMETRY : STATIC_DERIVED;
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
    t->dS0 = srd_xcalloc((size_t)r->n_sets + 1, sizeof *t->dS0);
    for (int j = 0; j < r->n_sets; j++) {
        for (int i = 0; i < 4; i++)
            f[i] = x[i].s.kernels[j].batch.b.state;
        t->dS0[j] = combined(t, f, set_state_len(&r->b->s, j));
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
    free(t->dinit);
    free(t->dmq), free(t->dmv), free(t->dma);
}

/* The tracks of every param (and the schedules' tangents they evaluate): a param whose
 * schedules' tangents could not be built is not sampled. */
static void open_tracks(DynamicRun *r)
{
    if (r->tracks)
        return;
    char err[256];
    r->schedules = schedule_tangents_build(&r->b->mk, r->b->m, err, sizeof err);
    r->tracks = srd_xcalloc((size_t)r->n_params + 1, sizeof *r->tracks);
    for (int k = 0; k < r->n_params; k++)
        track_open(r, k, &r->tracks[k]);
}

/* ---- one step, linearised ---- */

static Tan tan_new(const DynamicRun *r)
{
    Tan t;
    size_t n = (size_t)r->n_dofs + 1;
    t.q = srd_xcalloc(n, sizeof(double)), t.v = srd_xcalloc(n, sizeof(double)), t.a = srd_xcalloc(n, sizeof(double));
    t.S = srd_xcalloc((size_t)r->n_sets + 1, sizeof *t.S);
    for (int k = 0; k < r->n_sets; k++)
        t.S[k] = srd_xcalloc(set_state_len(&r->b->s, k) + 1, sizeof(double));
    return t;
}

static void tan_free(const DynamicRun *r, Tan *t)
{
    free(t->q), free(t->v), free(t->a);
    for (int k = 0; k < r->n_sets; k++)
        free(t->S[k]);
    free(t->S);
}

static void tan_copy(const DynamicRun *r, Tan *to, const Tan *from)
{
    size_t bytes = sizeof(double) * (size_t)r->n_dofs;
    memcpy(to->q, from->q, bytes), memcpy(to->v, from->v, bytes), memcpy(to->a, from->a, bytes);
    for (int k = 0; k < r->n_sets; k++)
        memcpy(to->S[k], from->S[k], sizeof(double) * set_state_len(&r->b->s, k));
}

static void tan_swap(Tan *a, Tan *b)
{
    Tan c = *a;
    *a = *b;
    *b = c;
}

static double dot(const double *a, const double *b, size_t n)
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
static void set_params(DynamicRun *r, const double *params)
{
    memcpy(r->b->s.params, params, sizeof(double) * (size_t)r->n_params);
}

/* The sim at record x as its step ran: its start (q0, v0, a0, the elements' state), its end q1,
 * its pairs, its params, its time and step. So the runtime leaves a step: forces read at its end
 * are the step's own (sim.h: state_behind). */
static void put_record(DynamicRun *r, const Record *x)
{
    srd_sim *s = &r->b->s;
    size_t bytes = sizeof(double) * (size_t)r->n_dofs;
    memcpy(s->q0, x->q0, bytes), memcpy(s->v0, x->v0, bytes), memcpy(s->a0, x->a0, bytes), memcpy(s->q, x->q1, bytes);
    hold_pairs(s, x);
    if (x->params)
        set_params(r, x->params);
    for (int k = 0; k < r->n_sets; k++)
        memcpy(s->kernels[k].batch.state, x->S0[k], sizeof(double) * set_state_len(s, k));
    s->t = x->t;
    s->dt = x->dt;
    s->last_dt = x->dt;
    s->state_behind = 1;
}

/* The sim at record x with the step's Jacobian at its end. */
static void linearize(DynamicRun *r, const Record *x)
{
    srd_sim *s = &r->b->s;
    put_record(r, x);
    srd_sim_step_jacobian(s, r->method);
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
static int solve_step(srd_sim *s, double *g, bool transposed)
{
    reduce_rows(s, g);
    int code = transposed ? srd_solver_solve_transposed(&s->solver, g) : srd_solver_solve(&s->solver, g);
    srd_slides_expand(s, g);
    return code;
}

/* What the kernels read at the linearised step: the evaluation point b q1 + (1 - b) q0. */
static srd_eval_ctx step_ctx(const srd_sim *s, double *g)
{
    const double *qe = s->stiffness_b != 1 ? s->qeval : s->q;
    return (srd_eval_ctx){ qe, s->q0, s->v0, s->params, s->t, s->dt, NULL, g, NULL };
}

/* Mass-proportional damping's constants over the record's own step (srd_damping_constants: a
 * param may give damping where the model has none, so the sim's are not always set). */
static void damping_constants(const DynamicRun *r, double dt, double *c1, double *c0)
{
    srd_damping_constants(r->method, dt, c1, c0);
}

/* The velocity mass-proportional damping reads over record x at DOF d: c1 (q1 - q0) + c0 v0. */
static double damped_velocity(const DynamicRun *r, const Record *x, int d)
{
    double c1, c0;
    damping_constants(r, x->dt, &c1, &c0);
    return c1 * (x->q1[d] - x->q0[d]) + c0 * x->v0[d];
}

/* Where a moving geometry or a moved anchor takes each sliding node across its line at
 * configuration q (sens_slide_motion with the held anchors' tangent dmq); zero for a param that
 * moves neither. */
static void slide_tangent(const DynamicRun *r, const Track *t, const double *q, double *w)
{
    if (t->geometry || t->moves_anchor)
        sens_slide_motion(&r->b->s, q, t->dmq, t->geometry ? t->daxis : NULL, w);
    else
        memset(w, 0, sizeof(double) * (size_t)r->n_dofs);
}

/* ---- stiffness-proportional damping: beta K0 u, K0 the stiffness where the step starts ---- */

/* What a stiffness reads as the runtime takes it for damping (net_force_residual: static, no
 * friction): the configuration q, the step start q0. */
static srd_eval_ctx stiffness_ctx(const srd_sim *s, const double *q, const double *q0, double *g)
{
    return (srd_eval_ctx){ q, q0, s->v0, s->params, s->t, s->dt, NULL, g, NULL };
}

static bool stiffness_set(const srd_sim *s, int k) { return !s->kernels[k].info.needs_time_step; }

/* Adds K v (every set's Jacobian along v, by DOF) into ctx's grad (free rows). */
static void stiffness_times(DynamicRun *r, const srd_eval_ctx *ctx, const double *v)
{
    srd_sim *s = &r->b->s;
    for (int k = 0; k < r->n_sets; k++) {
        InputTangents w = { .dq = v };
        if (stiffness_set(s, k))
            kernel_tangent_forward(&r->b->tangents[k], ctx, &s->kernels[k].batch.b, &w);
    }
}

/* Set k's batch with u at its stencil DOFs as nd more data columns (the hessian kernels' z), and
 * a data tangent of that stride holding dc (may be NULL) and zeros for z. */
static srd_elem_batch with_direction(const srd_elem_batch *b, const double *u, const double *dc, double **data,
                                     double **ddata)
{
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

/* Adds d(K u) at fixed u into ctx's grad: K's inputs moved along dq (the configuration), dq0 (the
 * step start), the state dS, param track t's data and the param itself. */
static void stiffness_tangent(DynamicRun *r, const srd_eval_ctx *ctx, const double *u, const double *dq,
                              const double *dq0, double *const *dS, const Track *t)
{
    srd_sim *s = &r->b->s;
    for (int k = 0; k < r->n_sets; k++) {
        if (!stiffness_set(s, k))
            continue;
        double *data, *ddata;
        srd_elem_batch e = with_direction(&s->kernels[k].batch.b, u, t->dc[k], &data, &ddata);
        InputTangents w = { dq, dq0, NULL, dS[k], ddata, t->dparams };
        kernel_tangent_forward(&r->b->hessian_tangents[k], ctx, &e, &w);
        free(data), free(ddata);
    }
}

/* The change of beta K u, K the stiffness at configuration q with step start q0 (where
 * stiffness_ctx puts them) and u fixed on the free DOFs: beta K du + beta dK[u] (K's inputs along
 * dq, dq0, the state dS, track t's data and param) + dbeta K u. Into g (free rows, added). */
static void beta_tangent(DynamicRun *r, const double *q, const double *q0, const double *u, const double *du,
                         const double *dq, const double *dq0, double *const *dS, const Track *t, double *g)
{
    srd_sim *s = &r->b->s;
    double beta = s->m->damping_beta;
    size_t len = srd_system_grad_len(&s->solver.sys);
    double *kd = srd_xcalloc(len, sizeof(double)), *ku = srd_xcalloc(len, sizeof(double));
    srd_eval_ctx ctx = stiffness_ctx(s, q, q0, kd);
    if (beta > 0) {
        stiffness_times(r, &ctx, du);
        stiffness_tangent(r, &ctx, u, dq, dq0, dS, t);
    }
    ctx.grad = ku;
    if (t->dbeta != 0)
        stiffness_times(r, &ctx, u);
    for (int f = 0; f < s->solver.sys.n_free; f++)
        g[f] += beta * kd[f] + t->dbeta * ku[f];
    free(kd), free(ku);
}

/* u = c1 (q1 - q0) + c0 v0 of record x on the free DOFs (the runtime's add_damping), 0 elsewhere. */
static double *damped_velocities(const DynamicRun *r, const Record *x)
{
    double *u = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    for (int d = 0; d < r->n_dofs; d++)
        if (r->b->s.solver.sys.free_index[d] >= 0)
            u[d] = damped_velocity(r, x, d);
    return u;
}

/* beta K0 u's change at fixed q1, K0 the stiffness at the step start (both as the configuration
 * and as the start): du = c1 (w - dq0) + c0 dv0, w the sliding nodes' share of dq1. */
static void beta_rhs(DynamicRun *r, const Record *x, const Tan *in, const Track *t, const double *w, double *g)
{
    double c1, c0, *u = damped_velocities(r, x), *du = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    damping_constants(r, x->dt, &c1, &c0);
    for (int d = 0; d < r->n_dofs; d++)
        if (r->b->s.solver.sys.free_index[d] >= 0)
            du[d] = c1 * (w[d] - in->q[d]) + c0 * in->v[d];
    beta_tangent(r, x->q0, x->q0, u, du, in->q, in->q, in->S, t, g);
    free(u), free(du);
}

/* dR at fixed q1 along the start's tangents `in` and param track t: the kernels' inputs (the
 * evaluation point moves by (1 - b) dq0), inertia, damping, loads and masses. */
static void step_rhs(DynamicRun *r, const Record *x, const Tan *in, Track *t, double *g)
{
    srd_sim *s = &r->b->s;
    const srd_model *m = s->m;
    double b = s->stiffness_b, a = s->inertia_a, dt = x->dt, alpha = m->damping_alpha, c1, c0;
    damping_constants(r, dt, &c1, &c0);
    memset(g, 0, sizeof(double) * srd_system_grad_len(&s->solver.sys));
    double *dqe = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double)), *w = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    track_at(r, t, x->t, x->dt);
    slide_tangent(r, t, x->q1, w);
    for (int d = 0; d < r->n_dofs; d++) /* a driven DOF's end is the motion's; a sliding node's, part the line's */
        dqe[d] = (1 - b) * in->q[d] + (s->solver.sys.free_index[d] < 0 ? b * t->dmq[d] : b * w[d]);
    srd_eval_ctx ctx = step_ctx(s, g);
    for (int k = 0; k < r->n_sets; k++) {
        InputTangents w = { dqe, in->q, in->v, in->S[k], t->dc[k], t->dparams };
        kernel_tangent_forward(&r->b->tangents[k], &ctx, &s->kernels[k].batch.b, &w);
    }
    free(dqe);
    for (int d = 0; d < r->n_dofs; d++) {
        int f = s->solver.sys.free_index[d];
        if (f < 0)
            continue;
        double M = m->dof_mass[d], dqhat = in->q[d] + dt * in->v[d] + (r->method == SRD_NEWMARK ? 0.25 * dt * dt * in->a[d] : 0);
        g[f] += a * (t->dmass[d] * (x->q1[d] - s->qhat[d]) - M * dqhat) - s->load_factor * t->dfext[d];
        g[f] += (alpha * t->dmass[d] + t->dalpha * M) * damped_velocity(r, x, d) +
                alpha * M * (-c1 * in->q[d] + c0 * in->v[d]) + (a + alpha * c1) * M * w[d];
    }
    if (m->damping_beta > 0 || t->dbeta != 0)
        beta_rhs(r, x, in, t, w, g);
    free(w);
}

/* The scheme's velocity and acceleration tangents from the positions' (held DOFs: the motion's). */
static void rates_tangent(const DynamicRun *r, const Track *t, double dt, const Tan *in, Tan *out)
{
    const srd_system *sys = &r->b->s.solver.sys;
    for (int d = 0; d < r->n_dofs; d++) {
        double dq = out->q[d] - in->q[d];
        if (sys->free_index[d] < 0)
            out->v[d] = t->dmv[d], out->a[d] = r->method == SRD_NEWMARK ? t->dma[d] : in->a[d];
        else if (r->method == SRD_IMPLICIT_EULER)
            out->v[d] = dq / dt, out->a[d] = in->a[d];
        else if (r->method == SRD_IMPLICIT_MIDPOINT)
            out->v[d] = 2 * dq / dt - in->v[d], out->a[d] = in->a[d];
        else {
            out->a[d] = 4 * (dq - dt * in->v[d]) / (dt * dt) - in->a[d];
            out->v[d] = in->v[d] + 0.5 * dt * (in->a[d] + out->a[d]);
        }
    }
}

/* Carries a tangent over linearised record x given dq1's solution x1 (free rows, in the lines'
 * basis): in becomes the tangent at its end. */
static void forward_finish(DynamicRun *r, const Record *x, const Track *t, Tan *in, Tan *out, double *x1)
{
    srd_sim *s = &r->b->s;
    srd_slides_expand(s, x1);
    slide_tangent(r, t, x->q1, out->v); /* out->v as scratch: rates_tangent writes it next */
    for (int d = 0; d < r->n_dofs; d++) {
        int f = s->solver.sys.free_index[d];
        out->q[d] = f >= 0 ? -x1[f] + out->v[d] : t->dmq[d];
    }
    rates_tangent(r, t, x->dt, in, out);
    for (int k = 0; k < r->n_sets; k++)
        srd_state_tangent(s->m, k, &s->kernels[k].info, x->S0[k], x->q0, x->q1, in->S[k], in->q, out->q, out->S[k]);
    tan_swap(in, out);
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
static void at_start(DynamicRun *r, const Record *first)
{
    srd_sim *s = &r->b->s;
    size_t bytes = sizeof(double) * (size_t)r->n_dofs;
    memcpy(s->q, r->q_start, bytes), memcpy(s->q0, r->q0_start, bytes), memcpy(s->v0, first->v0, bytes);
    hold_pairs(s, first); /* found at the start */
    if (first->params) /* after the first sample, as srd_step takes the acceleration */
        set_params(r, first->params);
    for (int k = 0; k < r->n_sets; k++)
        memcpy(s->kernels[k].batch.state, first->S0[k], sizeof(double) * set_state_len(s, k));
    s->t = 0;
    s->dt = r->b->m->simulate.dt;
    s->stiffness_b = 1;
    srd_sim_apply_schedules(s, 0);
}

/* The part of x (the start's q tangent or adjoint) that the sim's q0 at the start shares: where
 * q0 is q (a DOF a motion drives keeps its reference there, which no param moves). */
static double *start_q0_share(const DynamicRun *r, const double *x)
{
    double *y = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    for (int d = 0; d < r->n_dofs; d++)
        y[d] = r->q0_start[d] == r->q_start[d] ? x[d] : 0;
    return y;
}

/* The start acceleration's beta K v0 (K at the start, acceleration()'s): its change (beta_tangent
 * with u = v0, du = dv0 on the free rows) into g. dq0: the start's q0 tangent. */
static void beta_start_tangent(DynamicRun *r, const Record *first, const Track *t, const Tan *in, const double *dq0,
                               double *g)
{
    srd_sim *s = &r->b->s;
    size_t n = (size_t)r->n_dofs + 1;
    double *u = srd_xcalloc(n, sizeof(double)), *du = srd_xcalloc(n, sizeof(double));
    for (int d = 0; d < r->n_dofs; d++)
        if (s->solver.sys.free_index[d] >= 0)
            u[d] = first->v0[d], du[d] = in->v[d];
    beta_tangent(r, s->q, s->q0, u, du, in->q, dq0, in->S, t, g);
    free(u), free(du);
}

/* Newmark's start acceleration a = -(R_static + alpha M v) / M: its tangent along param t (in: the start's). */
static void start_acceleration_tangent(DynamicRun *r, const Record *first, Track *t, Tan *in)
{
    srd_sim *s = &r->b->s;
    double *g = srd_xcalloc(srd_system_grad_len(&s->solver.sys), sizeof(double));
    track_at(r, t, 0, r->b->m->simulate.dt);
    srd_eval_ctx ctx = step_ctx(s, g);
    double *dq0 = start_q0_share(r, in->q);
    for (int k = 0; k < r->n_sets; k++) {
        InputTangents w = { in->q, dq0, NULL, in->S[k], t->dc[k], t->dparams };
        if (stiffness_set(s, k)) /* the runtime's acceleration() is static: no friction */
            kernel_tangent_forward(&r->b->tangents[k], &ctx, &s->kernels[k].batch.b, &w);
    }
    if (s->m->damping_beta > 0 || t->dbeta != 0)
        beta_start_tangent(r, first, t, in, dq0, g);
    free(dq0);
    double alpha = s->m->damping_alpha;
    for (int d = 0; d < r->n_dofs; d++) {
        int f = s->solver.sys.free_index[d];
        double M = s->m->dof_mass[d], damping = (alpha * t->dmass[d] + t->dalpha * M) * first->v0[d] + alpha * M * in->v[d];
        in->a[d] = f >= 0 && M > 0 ? -(g[f] + damping - s->load_factor * t->dfext[d] + first->a0[d] * t->dmass[d]) / M : 0;
    }
    srd_slides_along(s, in->a); /* a sliding node accelerates along its line (a projection) */
    free(g);
}

/* The start's tangent along param k: the static equilibrium's and the frames carried to it. */
static void start_tangent(DynamicRun *r, int k, Tan *in)
{
    if (!r->from_equilibrium) { /* the reference, but where prescribed motion puts the driven DOFs */
        Track *t = &r->tracks[k];
        track_motion(r, t, 0); /* the motion alone: the base sim's data are not at t = 0 here */
        t->at = NAN;
        memcpy(in->q, t->geometry ? t->dx0 : t->dmq, sizeof(double) * (size_t)r->n_dofs);
        memcpy(in->v, t->dmv, sizeof(double) * (size_t)r->n_dofs);
        for (int j = 0; t->geometry && j < r->n_sets; j++) /* the reference state moves with a geometry */
            memcpy(in->S[j], t->dS0[j], sizeof(double) * set_state_len(&r->b->s, j));
        return;
    }
    const srd_sim *s = &r->b->s;
    const Track *t = &r->tracks[k];
    memcpy(in->q, r->dq_eq[k], sizeof(double) * (size_t)r->n_dofs);
    double *zero = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    for (int j = 0; j < r->n_sets; j++) { /* the reference's state and configuration move with a geometry */
        double *zs = srd_xcalloc(set_state_len(s, j) + 1, sizeof(double));
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
static ControlSample sample_of(const DynamicRun *r, const Sampled *x, const double *q, const double *forces)
{
    size_t nd = (size_t)r->b->m->control.n_data;
    return (ControlSample){ x->t, x->dt, q, forces, dup(x->data, nd), dup(x->params, (size_t)r->n_params) };
}

static double *sample_forces(DynamicRun *r, const Record *x);
static double *sample_force_tangents(DynamicRun *r, const Record *x, int k, const Tan *end, const Tan *start);
static Tan start_view_tangent(const DynamicRun *r, const Tan *start);

/* The force probes' tangents along param k that the sample before record x reads (NULL when it
 * reads none): the step before it ended at x's start (tangents end), from r->before[k], or the
 * run's start. */
static double *forward_sample_forces(DynamicRun *r, const Record *x, int k, const Tan *end)
{
    const View *v = x->sample->view;
    if (!v)
        return NULL;
    if (v->behind)
        return sample_force_tangents(r, x, k, end, &r->before[k]);
    Tan start = start_view_tangent(r, end);
    double *d = sample_force_tangents(r, x, k, end, &start);
    free(start.q);
    return d;
}

/* Carries every derived param's tangent over the sample before record x (tans: at its start): the
 * controller's values' and the inputs' (the track's params' tangents). */
static void forward_sample(DynamicRun *r, const Record *x, const Tan *tans, const int *status)
{
    if (!x->sample)
        return;
    double *forces = x->sample->view ? sample_forces(r, x) : NULL;
    for (int k = 0; k < r->n_params; k++) {
        Track *t = &r->tracks[k];
        if (status[k] != STATIC_DERIVED)
            continue;
        double *dforces = forward_sample_forces(r, x, k, &tans[k]);
        ControlSample c = sample_of(r, x->sample, x->q0, forces);
        bool kink =
            control_tangents_forward(r->control, r->b->m, &c, tans[k].q, dforces, r->dctl[k], t->dparams, t->hk);
        note_kink(t, kink, x->sample->t);
        t->at = NAN; /* the data's tangents move with the inputs' */
        free(c.data), free(c.params), free(dforces);
    }
    free(forces);
}

/* The adjoint has no direction along one param: where it met a sample near a switch, a forward
 * pass tells which params it is within reach of (their tracks' kinks, as the forward pass finds
 * them). Returns the seconds it took. */
static double control_kinks_by_forward(DynamicRun *r);

/* Once the backward pass has crossed the first sample: the controller's initial values' share. */
static void control_start(const DynamicRun *r, double *grad)
{
    for (int k = 0; r->control && k < r->n_params; k++)
        if (r->tracks[k].dinit)
            grad[k] += dot(r->lctl, r->tracks[k].dinit, (size_t)r->b->m->control.n_data);
}

/* The backward pass carries every param's adjoint through the inputs' gradients: an input the
 * controller sets that has no derivative leaves none to the others. */
static void control_statuses(const DynamicRun *r, int *status)
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
static void param_status(DynamicRun *r, int *status)
{
    open_tracks(r);
    control_reset(r);
    set_params(r, r->params_start); /* the start's tangents read them */
    for (int k = 0; k < r->n_params; k++) {
        status[k] = r->tracks[k].status;
        if (status[k] == STATIC_DERIVED && r->from_equilibrium)
            status[k] = r->eq_status[k];
    }
}

/* Params whose samples straddled a switch somewhere in the run have no derivative. */
static void mark_switches(DynamicRun *r, int *status)
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
        r->last[k] = tan_new(r);
        if (status[k] != STATIC_DERIVED)
            continue;
        memcpy(r->last[k].q, tans[k].q, sizeof(double) * (size_t)r->n_dofs);
        memcpy(r->last[k].v, tans[k].v, sizeof(double) * (size_t)r->n_dofs);
        for (int j = 0; j < r->n_sets; j++)
            memcpy(r->last[k].S[j], tans[k].S[j], sizeof(double) * set_state_len(&r->b->s, j));
    }
}

/* r->before for a controller that reads forces: made (on) or released (off). */
static void keep_befores(DynamicRun *r, bool on)
{
    if (on && r->control && control_reads_forces(r->b->m)) {
        r->before = srd_xcalloc((size_t)r->n_params + 1, sizeof *r->before);
        for (int k = 0; k < r->n_params; k++)
            r->before[k] = tan_new(r);
    } else if (!on && r->before) {
        for (int k = 0; k < r->n_params; k++)
            tan_free(r, &r->before[k]);
        free(r->before);
        r->before = NULL;
    }
}

static int forward_segment(DynamicRun *r, Tan *tans, int *status, bool *first, bool last, char *why, size_t why_n)
{
    srd_sim *s = &r->b->s;
    double *g = srd_xcalloc(srd_system_grad_len(&s->solver.sys) + 1, sizeof(double));
    double *B = srd_xcalloc((size_t)s->solver.sys.n_free * (size_t)r->n_params + 1, sizeof(double));
    Tan out = tan_new(r);
    int code = 0;
    for (long i = 0; i < r->n_records && code == 0; i++) {
        const Record *x = &r->records[i];
        forward_sample(r, x, tans, status);
        if (*first && r->method == SRD_NEWMARK) {
            at_start(r, x);
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
        linearize(r, x);
        code = forward_record(r, x, tans, status, &out, g, B);
        if (code)
            snprintf(why, why_n, "the Jacobian of the step ending at t = %.6g s is singular: no sensitivity", x->t);
    }
    tan_free(r, &out);
    free(g), free(B);
    return code;
}

int dynamic_forward(DynamicRun *r, double **dq, double **dv, int *status, char *why, size_t why_n)
{
    double t0 = srd_seconds();
    forget_ends(r);
    param_status(r, status);
    Tan *tans = srd_xcalloc((size_t)r->n_params + 1, sizeof *tans);
    for (int k = 0; k < r->n_params; k++) {
        tans[k] = tan_new(r);
        if (status[k] == STATIC_DERIVED)
            start_tangent(r, k, &tans[k]);
    }
    bool first = true;
    int code = 0;
    keep_befores(r, true);
    for (int i = 0; i < r->n_segments && code == 0; i++) {
        if (!segment_records(r, i)) {
            snprintf(why, why_n, "a segment of the run could not be recomputed from its checkpoint");
            code = -1;
        } else
            code = forward_segment(r, tans, status, &first, i == r->n_segments - 1, why, why_n);
    }
    keep_befores(r, false);
    mark_switches(r, status);
    set_params(r, r->params_end); /* as the run ended: the passes set the steps' */
    for (int k = 0; k < r->n_params; k++) {
        memcpy(dq[k], tans[k].q, sizeof(double) * (size_t)r->n_dofs);
        memcpy(dv[k], tans[k].v, sizeof(double) * (size_t)r->n_dofs);
    }
    r->ends = tans; /* for the force probes (dynamic_force_probe) */
    r->pass_seconds += srd_seconds() - t0;
    return code;
}

static double control_kinks_by_forward(DynamicRun *r)
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

static void forget_ends(DynamicRun *r)
{
    for (int k = 0; k < r->n_params; k++) {
        if (r->ends)
            tan_free(r, &r->ends[k]);
        if (r->last)
            tan_free(r, &r->last[k]);
    }
    free(r->ends), free(r->last);
    r->ends = r->last = NULL;
}

/* Where and when force probes are read: the positions, the time and the step. */
typedef struct Instant {
    const double *q;
    double        t, dt;
} Instant;

/* The schedules and the prescribed motion (its accelerations) at time t, on the sim. */
static void motion_at(DynamicRun *r, double t, const double *q, const double *v)
{
    srd_sim *s = &r->b->s;
    srd_sim_apply_schedules(s, t);
    double *qm = dup(q, (size_t)r->n_dofs), *vm = dup(v, (size_t)r->n_dofs);
    srd_motion_impose(s, t, 1, qm, vm);
    free(qm), free(vm);
}

/* The sim at the end of record x's step as the probes read it there (write_probes after a step):
 * its end with its start's inputs (the elements' state still at its start), its pairs, and the
 * schedules and prescribed motion there. */
static Instant at_record_end(DynamicRun *r, const Record *x)
{
    srd_sim *s = &r->b->s;
    put_record(r, x);
    s->dynamic = 1;
    motion_at(r, x->t, x->q1, x->v1);
    return (Instant){ x->q1, x->t, x->dt };
}

/* The sim at the run's start as the objective's first record read it (the start's pairs, its
 * dynamic flag). */
static Instant at_start_record(DynamicRun *r)
{
    srd_sim *s = &r->b->s;
    const Record *first = &r->records[0];
    size_t bytes = sizeof(double) * (size_t)r->n_dofs;
    memcpy(s->q, r->q_start, bytes), memcpy(s->q0, r->q0_start, bytes), memcpy(s->v0, first->v0, bytes);
    memcpy(s->a0, first->a0, bytes);
    if (s->pairs)
        srd_pairs_hold(s, r->start_pairs, r->n_start_pairs);
    set_params(r, r->params_start);
    for (int k = 0; k < r->n_sets; k++)
        memcpy(s->kernels[k].batch.state, first->S0[k], sizeof(double) * set_state_len(s, k));
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

/* d(every DOF's reaction at the end)/dp, as srd_sim_reactions takes them: the elements' residual
 * less the loads, a sliding node's across its line, and on held DOFs the mass times the prescribed
 * acceleration. */
static void end_reactions_tangent(DynamicRun *r, int k, const Tan *end, const Tan *start, double *dr)
{
    srd_sim *s = &r->b->s;
    const srd_model *m = s->m;
    const Track *t = &r->tracks[k];
    double *res = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    memset(dr, 0, sizeof(double) * (size_t)m->n_dofs);
    for (int j = 0; j < m->n_sets; j++) {
        end_set_tangent(r, k, end, start, j, 0, s->kernels[j].batch.b.n, dr);
        srd_sim_instance_gradient(s, j, 0, s->kernels[j].batch.b.n, res);
    }
    for (int d = 0; d < m->n_dofs; d++) {
        dr[d] -= s->load_factor * t->dfext[d];
        res[d] -= s->load_factor * s->fext[d];
    }
    sens_reactions_across(s, res, t->geometry ? t->daxis : NULL, dr);
    for (int d = 0; d < m->n_dofs; d++)
        if (s->fixed[d])
            dr[d] += t->dmass[d] * s->prescribed_acc[d] + m->dof_mass[d] * t->dma[d];
    free(res);
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
                                double *out)
{
    if (pr->kind != SRD_PROBE_REACTION) {
        end_contact_tangent(r, k, end, start, pr->target, out);
        return;
    }
    size_t n = (size_t)r->n_dofs + 1;
    double *react = srd_xcalloc(n, sizeof(double)), *dr = srd_xcalloc(n, sizeof(double));
    end_reactions_tangent(r, k, end, start, dr);
    srd_sim_reactions(&r->b->s, react);
    srd_probe_reaction_tangent(r->b->m, pr, r->b->s.q, react, end->q, dr, out);
    free(react), free(dr);
}

bool dynamic_force_probe(DynamicRun *r, int k, const srd_probe *pr, double *out)
{
    if (!r->ends || !r->last || !r->n_records || r->tracks[k].status != STATIC_DERIVED || !control_force_probe(pr))
        return false;
    const Record *x = &r->records[r->n_records - 1];
    at_record_end(r, x);
    track_at(r, &r->tracks[k], x->t, x->dt);
    force_probe_tangent(r, k, pr, &r->ends[k], &r->last[k], out);
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
    memcpy(s->q, x->q0, bytes), memcpy(s->q0, v->q0, bytes), memcpy(s->v0, v->v0, bytes);
    for (int k = 0; k < r->n_sets; k++)
        memcpy(s->kernels[k].batch.state, v->S[k], sizeof(double) * set_state_len(s, k));
    set_params(r, c->params);
    s->t = c->t, s->dt = s->last_dt = v->dt, s->state_behind = v->behind, s->dynamic = v->dynamic;
    motion_at(r, c->t, x->q0, x->v0);
    for (int k = 0; k < r->n_params; k++) /* the data's tangents at this time, with these params */
        r->tracks[k].at = NAN;
    return (Instant){ x->q0, c->t, v->dt };
}

/* Whether slot j of the control block holds a force probe's values. */
static bool force_slot(const srd_model *m, int j)
{
    const srd_control_slot *sl = &m->control.slots[j];
    return sl->kind == SRD_CONTROL_PROBE && control_force_probe(&m->simulate.probes[sl->probe]);
}

/* The force probes' values that the sample before record x read, in their slots (n_data values);
 * the sim is left at the sample's view. */
static double *sample_forces(DynamicRun *r, const Record *x)
{
    const srd_model *m = r->b->m;
    double *f = srd_xcalloc((size_t)m->control.n_data + 1, sizeof(double));
    at_sample_view(r, x);
    for (int j = 0; j < m->control.n_slots; j++) {
        const srd_control_slot *sl = &m->control.slots[j];
        double v[6];
        if (force_slot(m, j)) {
            srd_probe_value_at(&r->b->s, &m->simulate.probes[sl->probe], r->b->s.q, NULL, v);
            memcpy(&f[sl->first], v, sizeof(double) * (size_t)sl->n);
        }
    }
    return f;
}

/* Their tangents along param k (the sim at the sample's view): end, the tangents at record x's
 * start; start, at the start of the step before it. */
static double *sample_force_tangents(DynamicRun *r, const Record *x, int k, const Tan *end, const Tan *start)
{
    const srd_model *m = r->b->m;
    double *d = srd_xcalloc((size_t)m->control.n_data + 1, sizeof(double));
    track_at(r, &r->tracks[k], x->sample->t, x->sample->view->dt);
    for (int j = 0; j < m->control.n_slots; j++) {
        const srd_control_slot *sl = &m->control.slots[j];
        double out[GRAD_FORCE_WIDTH];
        if (force_slot(m, j)) {
            force_probe_tangent(r, k, &m->simulate.probes[sl->probe], end, start, out);
            memcpy(&d[sl->first], out, sizeof(double) * (size_t)sl->n);
        }
    }
    return d;
}

/* The run's start as the forces read it there: its q0 is its q where no motion drives it (the q
 * returned is the caller's to free; the rest is borrowed from start). */
static Tan start_view_tangent(const DynamicRun *r, const Tan *start)
{
    return (Tan){ start_q0_share(r, start->q), start->v, start->a, start->S };
}

/* ---- adjoint ---- */

/* Adjoints of one record's inputs besides the state: the kernels' data (per set), the params
 * read directly, the loads, and (summed over the run) the masses. */
typedef struct Pull {
    double **lc, *lp, *lfext, *lM, *lq_eval;
    double  *lmq, *lmv, *lma; /* the driven DOFs' end position, velocity, acceleration */
    double   lalpha, lbeta;   /* the dampings' (the run's, as lM's) */
    double  *lK;              /* beta's share: K0^T lambda by DOF (rhs_adjoint), for the slides' */
} Pull;

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
    p.lmq = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    p.lmv = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    p.lma = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    return p;
}

/* Set k's data as the sim holds them now (a contact pairs' set: the step's pairs). */
static size_t data_len(const DynamicRun *r, int k)
{
    const srd_elem_batch *bt = &r->b->s.kernels[k].batch.b;
    return (size_t)bt->n * (size_t)bt->n_data;
}

/* Zeroes the pull, its data adjoints sized to the sets' instances now. */
static void pull_clear(const DynamicRun *r, Pull *p)
{
    for (int k = 0; k < r->n_sets; k++) {
        p->lc[k] = srd_xrealloc(p->lc[k], sizeof(double) * (data_len(r, k) + 1));
        memset(p->lc[k], 0, sizeof(double) * data_len(r, k));
    }
    memset(p->lp, 0, sizeof(double) * (size_t)r->n_params);
    memset(p->lfext, 0, sizeof(double) * (size_t)r->n_dofs);
    memset(p->lq_eval, 0, sizeof(double) * (size_t)r->n_dofs);
    memset(p->lmq, 0, sizeof(double) * (size_t)r->n_dofs);
    memset(p->lmv, 0, sizeof(double) * (size_t)r->n_dofs);
    memset(p->lma, 0, sizeof(double) * (size_t)r->n_dofs);
}

static void pull_free(const DynamicRun *r, Pull *p)
{
    for (int k = 0; k < r->n_sets; k++)
        free(p->lc[k]);
    free(p->lc), free(p->lp), free(p->lfext), free(p->lM), free(p->lq_eval);
    free(p->lmq), free(p->lmv), free(p->lma), free(p->lK);
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

/* The transpose of stiffness_tangent with lambda (free rows): into lq (the configuration's), lq0
 * (the step start's), lS (per set) and the pull's data and params. */
static void stiffness_adjoint(DynamicRun *r, const srd_eval_ctx *ctx, const double *u, const double *lambda,
                              double *lq, double *lq0, double **lS, Pull *p)
{
    srd_sim *s = &r->b->s;
    for (int k = 0; k < r->n_sets; k++) {
        if (!stiffness_set(s, k))
            continue;
        double *data, *ddata;
        srd_elem_batch e = with_direction(&s->kernels[k].batch.b, u, NULL, &data, &ddata);
        InputAdjoints out = { lq, lq0, NULL, lS[k], ddata, p->lp }; /* ddata: the wide data's adjoint */
        kernel_tangent_adjoint(&r->b->hessian_tangents[k], ctx, &e, lambda, r->n_dofs, &out);
        int nd0 = s->kernels[k].batch.b.n_data, w = e.n_data;
        for (int i = 0; i < e.n; i++)
            for (int c = 0; c < nd0; c++)
                p->lc[k][(size_t)i * nd0 + c] += ddata[(size_t)i * w + c];
        free(data), free(ddata);
    }
}

/* Adds K^T lambda (lambda by free row) into lq (by DOF). */
static void stiffness_transposed(DynamicRun *r, const srd_eval_ctx *ctx, const double *lambda, double *lq)
{
    srd_sim *s = &r->b->s;
    for (int k = 0; k < r->n_sets; k++) {
        InputAdjoints out = { .lq = lq };
        if (stiffness_set(s, k))
            kernel_tangent_adjoint(&r->b->tangents[k], ctx, &s->kernels[k].batch.b, lambda, r->n_dofs, &out);
    }
}

/* lambda . (K u) for lambda by free row. */
static double along_stiffness(DynamicRun *r, const srd_eval_ctx *at, const double *u, const double *lambda)
{
    srd_sim *s = &r->b->s;
    size_t len = srd_system_grad_len(&s->solver.sys);
    double *ku = srd_xcalloc(len, sizeof(double));
    srd_eval_ctx ctx = *at;
    ctx.grad = ku;
    stiffness_times(r, &ctx, u);
    double sum = dot(lambda, ku, (size_t)s->solver.sys.n_free);
    free(ku);
    return sum;
}

/* The transpose of beta_tangent with lambda (free rows), K at configuration q with step start q0:
 * K^T lambda into lK (by DOF, overwritten: the caller scales it into its du's sources), beta
 * dK[u]'s into lq, lq0, lS and the pull, lambda . K u into lbeta. */
static void beta_pull(DynamicRun *r, const double *q, const double *q0, const double *u, const double *lambda,
                      double *lK, double *lq, double *lq0, double **lS, Pull *p)
{
    srd_sim *s = &r->b->s;
    double beta = s->m->damping_beta;
    size_t len = srd_system_grad_len(&s->solver.sys);
    double *lb = srd_xcalloc(len, sizeof(double));
    for (int f = 0; f < s->solver.sys.n_free; f++)
        lb[f] = beta * lambda[f];
    srd_eval_ctx ctx = stiffness_ctx(s, q, q0, NULL);
    memset(lK, 0, sizeof(double) * (size_t)r->n_dofs);
    stiffness_transposed(r, &ctx, lambda, lK);
    if (beta > 0)
        stiffness_adjoint(r, &ctx, u, lb, lq, lq0, lS, p);
    p->lbeta += along_stiffness(r, &ctx, u, lambda);
    free(lb);
}

/* The transpose of beta_rhs with lambda lg: K0^T lambda (kept in p->lK for the slides) into the
 * start's q and v, beta dK0[u]'s into the start's q (K0 reads q0 as both), state and the pull. */
static void beta_adjoint(DynamicRun *r, const Record *x, const double *lg, Tan *start, Pull *p)
{
    srd_sim *s = &r->b->s;
    double beta = s->m->damping_beta, c1, c0, *u = damped_velocities(r, x);
    damping_constants(r, x->dt, &c1, &c0);
    beta_pull(r, x->q0, x->q0, u, lg, p->lK, start->q, start->q, start->S, p);
    for (int d = 0; d < r->n_dofs; d++)
        if (s->solver.sys.free_index[d] >= 0)
            start->q[d] -= beta * c1 * p->lK[d], start->v[d] += beta * c0 * p->lK[d];
    free(u);
}

static void rhs_adjoint(DynamicRun *r, const Record *x, const double *lg, Tan *start, Pull *p)
{
    srd_sim *s = &r->b->s;
    const srd_model *m = s->m;
    double b = s->stiffness_b, a = s->inertia_a, dt = x->dt, alpha = m->damping_alpha, c1, c0;
    damping_constants(r, dt, &c1, &c0);
    srd_eval_ctx ctx = step_ctx(s, NULL);
    pull_clear(r, p);
    for (int k = 0; k < r->n_sets; k++) {
        InputAdjoints out = { p->lq_eval, start->q, start->v, start->S[k], p->lc[k], p->lp };
        kernel_tangent_adjoint(&r->b->tangents[k], &ctx, &s->kernels[k].batch.b, lg, r->n_dofs, &out);
    }
    for (int d = 0; d < r->n_dofs; d++) {
        int f = s->solver.sys.free_index[d];
        start->q[d] += (1 - b) * p->lq_eval[d];
        if (f < 0)
            continue;
        double M = m->dof_mass[d], l = lg[f];
        start->q[d] -= a * M * l, start->v[d] -= a * M * dt * l;
        if (r->method == SRD_NEWMARK)
            start->a[d] -= a * M * 0.25 * dt * dt * l;
        p->lM[d] += a * (x->q1[d] - s->qhat[d]) * l;
        p->lfext[d] = -s->load_factor * l;
        double v = damped_velocity(r, x, d);
        start->q[d] -= alpha * M * c1 * l, start->v[d] += alpha * M * c0 * l;
        p->lM[d] += alpha * v * l;
        p->lalpha += M * v * l;
    }
    if (beta_moves(r))
        beta_adjoint(r, x, lg, start, p);
}

/* grad[k] += what the record's data, loads and params' own reads contribute (at time at). */
static void pull_params(DynamicRun *r, const Pull *p, double at, double h, double *grad, int *status)
{
    for (int k = 0; k < r->n_params; k++) {
        Track *t = &r->tracks[k];
        if (status[k] != STATIC_DERIVED)
            continue;
        track_at(r, t, at, h);
        if (t->status != STATIC_DERIVED) {
            status[k] = t->status; /* a moving clamp's line, seen at this step */
            continue;
        }
        double sum = p->lp[k] + dot(p->lfext, t->dfext, (size_t)r->n_dofs) + dot(p->lmq, t->dmq, (size_t)r->n_dofs) +
                     dot(p->lmv, t->dmv, (size_t)r->n_dofs) + dot(p->lma, t->dma, (size_t)r->n_dofs);
        for (int j = 0; j < r->n_sets; j++)
            sum += dot(p->lc[j], t->dc[j], data_len(r, j));
        grad[k] += sum;
    }
}

/* The adjoints of the driven DOFs' end position (through the states, the rates, the objective and
 * the elements' evaluation point b q1 + (1 - b) q0), velocity and Newmark's acceleration. */
static void motion_adjoint(const DynamicRun *r, const Tan *end, const double *lq1, Pull *p)
{
    const srd_sim *s = &r->b->s;
    for (int d = 0; d < r->n_dofs; d++) { /* held DOFs too: a moving geometry holds them at its reference */
        if (s->solver.sys.free_index[d] >= 0)
            continue;
        p->lmq[d] = lq1[d] + s->stiffness_b * p->lq_eval[d];
        p->lmv[d] = end->v[d];
        p->lma[d] = r->method == SRD_NEWMARK ? end->a[d] : 0;
    }
}

/* The transpose of the sliding nodes' part in a moving geometry (slide_tangent): it moves their
 * end (lq1), the elements' evaluation point (b of it) and the inertia and damping of the step. */
static void slides_adjoint(DynamicRun *r, const Record *x, const double *lq1, const double *lg, const Pull *p,
                           double *grad, const int *status)
{
    const srd_sim *s = &r->b->s;
    double c1, c0, a = s->inertia_a, alpha = s->m->damping_alpha;
    damping_constants(r, x->dt, &c1, &c0);
    double *w = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    for (int k = 0; k < r->n_params && s->m->n_slides; k++) {
        const Track *t = &r->tracks[k];
        if (status[k] != STATIC_DERIVED || !(t->geometry || t->moves_anchor))
            continue;
        slide_tangent(r, t, x->q1, w);
        for (int d = 0; d < r->n_dofs; d++) {
            int f = s->solver.sys.free_index[d];
            if (f >= 0 && w[d] != 0)
                grad[k] += w[d] * (lq1[d] + s->stiffness_b * p->lq_eval[d] + (a + alpha * c1) * s->m->dof_mass[d] * lg[f] +
                                   s->m->damping_beta * c1 * p->lK[d]);
        }
    }
    free(w);
}

/* Carries the adjoint `end` (of the state after linearised record x) to the state before it. */
static int adjoint_record(DynamicRun *r, const Record *x, Tan *end, Tan *start, Pull *p, double *lg, double *grad,
                          int *status)
{
    srd_sim *s = &r->b->s;
    size_t n = (size_t)r->n_dofs, len = srd_system_grad_len(&s->solver.sys);
    double *lq1 = dup(end->q, n);
    memset(start->q, 0, n * sizeof(double)), memset(start->v, 0, n * sizeof(double)), memset(start->a, 0, n * sizeof(double));
    for (int k = 0; k < r->n_sets; k++) {
        memset(start->S[k], 0, set_state_len(s, k) * sizeof(double));
        srd_state_adjoint(s->m, k, &s->kernels[k].info, x->S0[k], x->q0, x->q1, end->S[k], start->S[k], start->q, lq1);
    }
    rates_adjoint(r, x->dt, end, lq1, start);
    memset(lg, 0, len * sizeof(double));
    for (size_t d = 0; d < n; d++)
        if (s->solver.sys.free_index[d] >= 0)
            lg[s->solver.sys.free_index[d]] = lq1[d];
    int code = solve_step(s, lg, true);
    for (int f = 0; f < s->solver.sys.n_free; f++)
        lg[f] = -lg[f]; /* dq1 = -K^-1 g: the adjoint of g is -K^-T lambda_q1 */
    if (code == 0) {
        rhs_adjoint(r, x, lg, start, p);
        motion_adjoint(r, end, lq1, p);
        pull_params(r, p, x->t, x->dt, grad, status);
        slides_adjoint(r, x, lq1, lg, p, grad, status);
    }
    free(lq1);
    if (code)
        return -1;
    tan_swap(end, start);
    return 0;
}

/* The transpose of start_acceleration_tangent: Newmark's start acceleration's adjoint into the
 * start's configuration, state and the params. */
/* The transpose of beta_start_tangent with lambda lres: beta K^T lres into v0's adjoint, beta
 * dK[v0]'s into the start's q (adj->q), its q0 (lq0), its state and the pull, lres . K v0 into lbeta. */
static void beta_start_adjoint(DynamicRun *r, const Record *first, const double *lres, Tan *adj, double *lq0, Pull *p)
{
    srd_sim *s = &r->b->s;
    size_t n = (size_t)r->n_dofs + 1;
    double *u = srd_xcalloc(n, sizeof(double)), *kt = srd_xcalloc(n, sizeof(double));
    for (int d = 0; d < r->n_dofs; d++)
        if (s->solver.sys.free_index[d] >= 0)
            u[d] = first->v0[d];
    beta_pull(r, s->q, s->q0, u, lres, kt, adj->q, lq0, adj->S, p);
    for (int d = 0; d < r->n_dofs; d++)
        if (s->solver.sys.free_index[d] >= 0)
            adj->v[d] += s->m->damping_beta * kt[d];
    free(u), free(kt);
}

static void start_acceleration_adjoint(DynamicRun *r, const Record *first, Tan *adj, Pull *p, double *grad,
                                       int *status)
{
    srd_sim *s = &r->b->s;
    at_start(r, first);
    double *lres = srd_xcalloc(srd_system_grad_len(&s->solver.sys) + 1, sizeof(double));
    pull_clear(r, p);
    srd_slides_along(s, adj->a); /* the projection onto the lines is its own transpose */
    for (int d = 0; d < r->n_dofs; d++) {
        int f = s->solver.sys.free_index[d];
        double M = s->m->dof_mass[d];
        if (f < 0 || M <= 0)
            continue;
        lres[f] = -adj->a[d] / M;
        p->lM[d] -= adj->a[d] * first->a0[d] / M;
        p->lM[d] += s->m->damping_alpha * first->v0[d] * lres[f]; /* the start's damping force */
        p->lalpha += M * first->v0[d] * lres[f];
        adj->v[d] += s->m->damping_alpha * M * lres[f];
        p->lfext[d] = -s->load_factor * lres[f];
    }
    srd_eval_ctx ctx = step_ctx(s, NULL);
    double *lq0 = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    for (int k = 0; k < r->n_sets; k++) {
        InputAdjoints out = { adj->q, lq0, NULL, adj->S[k], p->lc[k], p->lp };
        if (stiffness_set(s, k)) /* the runtime's acceleration() is static: no friction */
            kernel_tangent_adjoint(&r->b->tangents[k], &ctx, &s->kernels[k].batch.b, lres, r->n_dofs, &out);
    }
    if (beta_moves(r))
        beta_start_adjoint(r, first, lres, adj, lq0, p);
    double *shared = start_q0_share(r, lq0);
    for (int d = 0; d < r->n_dofs; d++)
        adj->q[d] += shared[d];
    free(lq0), free(shared);
    pull_params(r, p, 0, r->b->m->simulate.dt, grad, status);
    memset(adj->a, 0, sizeof(double) * (size_t)r->n_dofs);
    free(lres);
}

/* sum over sets of lS . dS0: what a moving geometry's reference state gives the adjoint lS. */
static double state_pull(const DynamicRun *r, const Track *t, double *const *lS)
{
    double sum = 0;
    for (int j = 0; t->geometry && j < r->n_sets; j++)
        sum += dot(lS[j], t->dS0[j], set_state_len(&r->b->s, j));
    return sum;
}

/* The start's share: a static start's dq (and the frames carried to it) along every param. */
static void start_adjoint(DynamicRun *r, Tan *adj, double *grad, const int *status)
{
    for (int k = 0; k < r->n_params && !r->from_equilibrium; k++) {
        Track *t = &r->tracks[k];
        if (status[k] != STATIC_DERIVED)
            continue;
        track_motion(r, t, 0);
        t->at = NAN;
        grad[k] += dot(adj->q, t->geometry ? t->dx0 : t->dmq, (size_t)r->n_dofs) + dot(adj->v, t->dmv, (size_t)r->n_dofs) +
                   state_pull(r, t, adj->S);
    }
    if (!r->from_equilibrium)
        return;
    const srd_sim *s = &r->b->s;
    double *lq = dup(adj->q, (size_t)r->n_dofs), *lq_ref = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    double **lS_ref = srd_xcalloc((size_t)r->n_sets + 1, sizeof *lS_ref);
    for (int j = 0; j < r->n_sets; j++) {
        lS_ref[j] = srd_xcalloc(set_state_len(s, j) + 1, sizeof(double));
        srd_state_adjoint(s->m, j, &s->kernels[j].info, r->S_ref[j], r->q_ref, r->q_start, adj->S[j], lS_ref[j], lq_ref, lq);
    }
    for (int k = 0; k < r->n_params; k++) {
        const Track *t = &r->tracks[k];
        if (status[k] != STATIC_DERIVED)
            continue;
        grad[k] += dot(lq, r->dq_eq[k], (size_t)r->n_dofs);
        if (t->geometry) /* the reference the state is carried from moves too */
            grad[k] += dot(lq_ref, t->dx0, (size_t)r->n_dofs) + state_pull(r, t, lS_ref);
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
        track_at(r, t, at->t, at->dt);
        double sum = p->lp[k];
        for (int j = 0; j < r->n_sets; j++)
            sum += dot(p->lc[j], t->dc[j], data_len(r, j));
        for (int d = 0; lr && d < r->n_dofs; d++) {
            sum -= s->load_factor * lam[d] * t->dfext[d];
            if (s->fixed[d])
                sum += lr[d] * (t->dmass[d] * s->prescribed_acc[d] + s->m->dof_mass[d] * t->dma[d]);
        }
        grad[k] += sum + (lr ? turned_lines_pull(s, t, res, lr) : 0);
    }
}

/* The reaction probe's seeds: w . its values through the reactions to every set's residual. */
static void reaction_seed(DynamicRun *r, const Instant *at, const srd_probe *pr, const double *w, Backward *bw,
                          EndSeed *seed, double *grad, const int *status)
{
    srd_sim *s = &r->b->s;
    size_t n = (size_t)r->n_dofs + 1;
    double *react = srd_xcalloc(n, sizeof(double)), *lr = srd_xcalloc(n, sizeof(double));
    double *lam = srd_xcalloc(n, sizeof(double)), *res = srd_xcalloc(n, sizeof(double));
    srd_sim_reactions(s, react);
    srd_probe_reaction_adjoint(s->m, pr, at->q, react, w, bw->adj.q, lr);
    reactions_to_residual(s, lr, lam);
    for (int j = 0; j < r->n_sets; j++) {
        end_set_adjoint(r, j, 0, s->kernels[j].batch.b.n, lam, bw, seed);
        srd_sim_instance_gradient(s, j, 0, s->kernels[j].batch.b.n, res);
    }
    for (int d = 0; d < r->n_dofs; d++)
        res[d] -= s->load_factor * s->fext[d];
    end_pull(r, at, lam, lr, res, &bw->p, grad, status);
    free(react), free(lr), free(lam), free(res);
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
    pull_clear(r, &bw->p);
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
    Instant at = at_record_end(r, x);
    seed_forces(r, &at, bw, &bw->pending, grad, status);
    bw->seed = &bw->pending;
}

/* lS0 (a force probe's adjoint of the state its step started from) into lS, and cleared. */
static void add_state_seed(const DynamicRun *r, double **lS, double **lS0)
{
    for (int j = 0; j < r->n_sets; j++) {
        size_t n = set_state_len(&r->b->s, j);
        for (size_t i = 0; i < n; i++)
            lS[j][i] += lS0[j][i];
        memset(lS0[j], 0, sizeof(double) * n);
    }
}

/* The step's start's share of its force probes' seeds, once the step is crossed. */
static void add_pending(DynamicRun *r, Backward *bw)
{
    if (!bw->seed)
        return;
    for (int d = 0; d < r->n_dofs; d++) {
        bw->adj.q[d] += bw->seed->lq0[d], bw->adj.v[d] += bw->seed->lv0[d];
        bw->seed->lq0[d] = bw->seed->lv0[d] = 0;
    }
    add_state_seed(r, bw->adj.S, bw->seed->lS0);
    bw->seed = NULL;
}

/* An objective's slopes at the start (record 0): the start's q0 is its q where no motion drives it. */
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
    Instant at = at_start_record(r);
    seed_forces(r, &at, bw, &bw->pending, grad, status);
    double *shared = start_q0_share(r, bw->pending.lq0);
    for (int d = 0; d < r->n_dofs; d++) {
        bw->adj.q[d] += shared[d], bw->adj.v[d] += bw->pending.lv0[d];
        bw->pending.lq0[d] = bw->pending.lv0[d] = 0;
    }
    add_state_seed(r, bw->adj.S, bw->pending.lS0);
    free(shared);
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
        memcpy(w, &lforces[sl->first], sizeof(double) * (size_t)(force_slot(m, j) ? sl->n : 0));
        if (force_slot(m, j) && !all_zero_n(w, GRAD_FORCE_WIDTH))
            seed_force(r, &at, &m->simulate.probes[sl->probe], w, bw, &bw->pending, grad, status);
    }
    if (x->sample->view->behind) {
        bw->seed = &bw->pending;
        return;
    }
    double *shared = start_q0_share(r, bw->pending.lq0);
    for (int d = 0; d < r->n_dofs; d++) {
        bw->adj.q[d] += shared[d], bw->adj.v[d] += bw->pending.lv0[d];
        bw->pending.lq0[d] = bw->pending.lv0[d] = 0;
    }
    add_state_seed(r, bw->adj.S, bw->pending.lS0);
    free(shared);
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
    double *forces = x->sample->view ? sample_forces(r, x) : NULL;
    ControlSample c = sample_of(r, x->sample, x->q0, forces);
    control_tangents_adjoint(r->control, r->b->m, &c, r->lctl, grad, bw->adj.q, lforces, hk, near);
    for (int k = 0; k < r->n_params; k++)
        r->control_near |= near[k];
    if (forces)
        seed_sample_forces(r, x, lforces, bw, grad, status);
    free(c.data), free(c.params), free(hk), free(near), free(forces), free(lforces);
}

static int adjoint_segment(DynamicRun *r, Backward *bw, double *grad, int *status, char *why, size_t why_n)
{
    for (long i = r->n_records - 1; i >= 0; i--) {
        const Record *x = &r->records[i];
        if (x->step > 0 && bw->slopes)
            step_slopes_at(r, x, bw, grad, status);
        linearize(r, x);
        if (adjoint_record(r, x, &bw->adj, &bw->other, &bw->p, bw->lg, grad, status) != 0) {
            snprintf(why, why_n, "the Jacobian of the step ending at t = %.6g s is singular: no sensitivity", x->t);
            return -1;
        }
        add_pending(r, bw);
        if (i == 0 && x->t - x->dt <= 0 && r->method == SRD_NEWMARK)
            start_acceleration_adjoint(r, x, &bw->adj, &bw->p, grad, status);
        adjoint_sample(r, x, bw, grad, status); /* the step's inputs were set before all of it */
    }
    return 0;
}

/* The backward pass's adjoints and scratch, the end's from wq and wv (NULL: 0). */
static Backward backward_new(DynamicRun *r, const double *wq, const double *wv, DynamicSlopes slopes, void *ctx)
{
    Backward bw = { tan_new(r), tan_new(r), pull_new(r), NULL, slopes, ctx, NULL, { NULL, NULL, NULL }, NULL, NULL };
    bw.dparams = srd_xcalloc((size_t)r->n_params + 1, sizeof(double));
    for (int d = 0; d < r->n_dofs; d++) {
        bw.adj.q[d] = wq ? wq[d] : 0;
        bw.adj.v[d] = wv ? wv[d] : 0;
    }
    bw.pending.lq0 = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    bw.pending.lv0 = srd_xcalloc((size_t)r->n_dofs + 1, sizeof(double));
    bw.pending.lS0 = srd_xcalloc((size_t)r->n_sets + 1, sizeof(double *));
    for (int j = 0; j < r->n_sets; j++)
        bw.pending.lS0[j] = srd_xcalloc(set_state_len(&r->b->s, j) + 1, sizeof(double));
    bw.forces = srd_xcalloc(GRAD_FORCE_WIDTH * (size_t)r->b->m->simulate.n_probes + 1, sizeof(double));
    bw.lg = srd_xcalloc(srd_system_grad_len(&r->b->s.solver.sys) + 1, sizeof(double));
    return bw;
}

static void backward_free(DynamicRun *r, Backward *bw)
{
    tan_free(r, &bw->adj), tan_free(r, &bw->other), pull_free(r, &bw->p), free(bw->lg);
    free(bw->pending.lq0), free(bw->pending.lv0), free(bw->forces), free(bw->dparams);
    for (int j = 0; j < r->n_sets; j++)
        free(bw->pending.lS0[j]);
    free(bw->pending.lS0);
}

/* The backward pass from bw's adjoints of the run's end (and its seed); frees bw's own. */
static int backward(DynamicRun *r, Backward *bw, double *grad, int *status, char *why, size_t why_n)
{
    double t0 = srd_seconds();
    int code = 0;
    r->control_near = false;
    for (int i = r->n_segments - 1; i >= 0 && code == 0; i--) {
        if (!segment_records(r, i)) {
            snprintf(why, why_n, "a segment of the run could not be recomputed from its checkpoint");
            code = -1;
        } else
            code = adjoint_segment(r, bw, grad, status, why, why_n);
    }
    set_params(r, r->params_start);
    control_start(r, grad);
    if (code == 0 && bw->slopes)
        start_slopes(r, bw, grad, status);
    start_adjoint(r, &bw->adj, grad, status);
    if (r->control_near)
        t0 += control_kinks_by_forward(r);
    mark_switches(r, status);
    control_statuses(r, status);
    set_params(r, r->params_end); /* as the run ended: the passes set the steps' */
    for (int k = 0; k < r->n_params; k++)
        if (status[k] == STATIC_DERIVED)
            grad[k] += dot(bw->p.lM, r->tracks[k].dmass, (size_t)r->n_dofs) + bw->p.lalpha * r->tracks[k].dalpha +
                       bw->p.lbeta * r->tracks[k].dbeta;
        else
            grad[k] = 0;
    backward_free(r, bw);
    r->pass_seconds += srd_seconds() - t0;
    return code;
}

int dynamic_adjoint(DynamicRun *r, const double *wq, const double *wv, DynamicSlopes slopes, void *ctx, double *grad,
                    int *status, char *why, size_t why_n)
{
    param_status(r, status);
    memset(grad, 0, sizeof(double) * (size_t)r->n_params);
    Backward bw = backward_new(r, wq, wv, slopes, ctx);
    return backward(r, &bw, grad, status, why, why_n);
}

int dynamic_force_adjoint(DynamicRun *r, const srd_probe *pr, const double *w, double *grad, int *status, char *why,
                          size_t why_n)
{
    param_status(r, status);
    memset(grad, 0, sizeof(double) * (size_t)r->n_params);
    if (!r->n_records)
        return 1;
    if (!segment_records(r, r->n_segments - 1)) { /* the run's last step */
        snprintf(why, why_n, "a segment of the run could not be recomputed from its checkpoint");
        return -1;
    }
    Backward bw = backward_new(r, NULL, NULL, NULL, NULL);
    Instant at = at_record_end(r, &r->records[r->n_records - 1]);
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
    if (status == DYNAMIC_NOT_ASKED)
        return "not asked for";
    if (status == DYNAMIC_NOT_SMOOTH)
        return "the model's values are not smooth in it near this value (a switch: min, max, abs, a step or a "
               "periodic wrap of a schedule or of the control block, or an input the controller sets reaching its "
               "range): no derivative";
    return static_point_why(status);
}
