/* control_tangent.c — the derivative of the control block's samples (see control_tangent.h): per
 * step one interpreted program of its value, its derivative along its data and param inputs, and
 * its switches; a sample replays the runtime's (runtime/control.c) with them. */
#include "sens/control_tangent.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "control.h"
#include "sim.h"
#include "sens/schedule_program.h"

typedef struct ControlStep {
    ScheduleTangent st;   /* slots: the step's data and param inputs, in input order */
    bool           *data; /* per slot: a data column (else a param) */
    int            *index;/* per slot: the column or the param */
} ControlStep;

struct ControlTangents {
    int          n;
    ControlStep *a;
};

bool control_force_probe(const srd_probe *pr)
{
    return pr->kind == SRD_PROBE_REACTION || (pr->kind == SRD_PROBE_CONTACT && pr->target != SRD_CONTACT_PARTS);
}

const char *control_tangents_unsupported(const srd_model *m)
{
    const srd_control *c = &m->control;
    for (int j = 0; j < c->n_slots; j++) {
        const srd_probe *pr = &m->simulate.probes[c->slots[j].probe];
        if (c->slots[j].kind == SRD_CONTROL_PROBE && pr->kind != SRD_PROBE_STATE && !control_force_probe(pr))
            return "its `control` block reads a body's or a joint's probe, or the parts' forces on each other: "
                   "not derived yet";
    }
    return "";
}

bool control_force_slot(const srd_model *m, int j)
{
    const srd_control_slot *sl = &m->control.slots[j];
    return sl->kind == SRD_CONTROL_PROBE && control_force_probe(&m->simulate.probes[sl->probe]);
}

bool control_reads_forces(const srd_model *m)
{
    for (int j = 0; m->control.present && j < m->control.n_slots; j++)
        if (control_force_slot(m, j))
            return true;
    return false;
}

bool control_sets(const srd_model *m, int k)
{
    for (int j = 0; m->control.present && j < m->control.n_steps; j++)
        if (m->control.steps[j].param == k)
            return true;
    return false;
}

/* ---- building ---- */

static ScheduleKernel *kernel_of_step(ModelKernels *mk, int expr)
{
    for (int k = 0; k < mk->n_schedules; k++)
        if (mk->schedules[k].actuation < 0 && mk->schedules[k].expr == expr && mk->schedules[k].lowered.kind)
            return &mk->schedules[k];
    return NULL;
}

static bool build_step(ScheduleKernel *sk, const srd_control *c, ControlStep *cs)
{
    LoweredElement *le = &sk->lowered;
    int *slots = srd_xcalloc((size_t)le->n_inputs + 1, sizeof(int));
    cs->data = srd_xcalloc((size_t)le->n_inputs + 1, sizeof(bool));
    cs->index = srd_xcalloc((size_t)le->n_inputs + 1, sizeof(int));
    int n = 0;
    for (int i = 0; i < le->n_inputs; i++)
        if (le->inputs[i].cls == KIN_DATA || le->inputs[i].cls == KIN_PARAM) {
            cs->data[n] = le->inputs[i].cls == KIN_DATA;
            cs->index[n] = le->inputs[i].index;
            slots[n++] = i;
        }
    cs->st.n_slots = n;
    cs->st.actuation = -1, cs->st.expr = sk->expr, cs->st.nd = le->nd;
    bool ok = schedule_program_build(le, &cs->st, slots, c->n_data);
    free(slots);
    return ok;
}

ControlTangents *control_tangents_build(ModelKernels *mk, const srd_model *m, char *err, size_t err_n)
{
    const srd_control *c = &m->control;
    ControlTangents *C = srd_xcalloc(1, sizeof *C);
    C->a = srd_xcalloc((size_t)c->n_steps + 1, sizeof *C->a);
    for (int j = 0; j < c->n_steps; j++) {
        ScheduleKernel *sk = kernel_of_step(mk, c->steps[j].expr);
        C->n = j + 1;
        if (!sk || !build_step(sk, c, &C->a[j])) {
            snprintf(err, err_n, "the tangent of the control block's step %d could not be built", j + 1);
            control_tangents_free(C);
            return NULL;
        }
    }
    return C;
}

void control_tangents_free(ControlTangents *C)
{
    if (!C)
        return;
    for (int j = 0; j < C->n; j++) {
        free(C->a[j].data), free(C->a[j].index);
        schedule_program_free(&C->a[j].st);
    }
    free(C->a);
    free(C);
}

/* ---- one sample ---- */

/* Step cs's rows at the sample's values with slot tangents w (st.n_slots). */
static double *step_rows(const ControlStep *cs, const srd_model *m, const ControlSample *x, const double *w)
{
    int nd = m->control.n_data, width = nd + cs->st.n_slots, nr = cs->st.n_rows;
    double *data = srd_xcalloc((size_t)width + 1, sizeof(double)), *out = srd_xcalloc((size_t)nr + 1, sizeof(double));
    int32_t *rows = srd_xcalloc((size_t)nr + 1, sizeof(int32_t));
    memcpy(data, x->data, sizeof(double) * (size_t)nd);
    memcpy(data + nd, w, sizeof(double) * (size_t)cs->st.n_slots);
    for (int r = 0; r < nr; r++)
        rows[r] = r;
    srd_elem_batch b = { 1, nr, width, 0, rows, rows, NULL, data, NULL };
    srd_eval_ctx ctx = { NULL, NULL, NULL, x->params, x->t, x->dt, NULL, out, NULL };
    interp_run(cs->st.prog, &ctx, &b);
    free(data), free(rows);
    return out;
}

/* The configuration's index of probe p's value c (as srd_probe_value_at reads a position). */
static int probe_dof(const srd_model *m, const srd_probe *p, int c)
{
    return p->dof >= 0 ? p->dof : m->node_dof[p->node] + c;
}

/* The probes into their slots, and their tangents (dq may be NULL: values only): a position's
 * from the configuration, a force's from the caller's. */
static void read_probes(const srd_model *m, ControlSample *x, const double *dq, const double *dforces,
                        double *ddata)
{
    const srd_control *c = &m->control;
    for (int j = 0; j < c->n_slots; j++) {
        const srd_control_slot *sl = &c->slots[j];
        bool force = control_force_slot(m, j);
        for (int i = 0; sl->kind == SRD_CONTROL_PROBE && i < sl->n; i++) {
            int at = sl->first + i, d = force ? -1 : probe_dof(m, &m->simulate.probes[sl->probe], i);
            x->data[at] = force ? x->forces[at] : x->q[d];
            if (dq)
                ddata[at] = force ? dforces[at] : dq[d];
        }
    }
}

/* Whether v lies within 2 hk |dv| of the bound b (an infinite bound: never). */
static bool near_bound(double v, double dv, double b, double hk)
{
    return isfinite(b) && dv != 0 && fabs(v - b) <= 2 * hk * fabs(dv);
}

/* Writes step j's value (rows[0 .. n)) and its tangent (rows[nd ..)) where the runtime puts it: a
 * slot, or an input clamped to its range (zero tangent while it saturates). True when an input
 * has no derivative there: near its saturation, or where its derivative is not defined (atan2 at
 * the origin, a square root at 0, not saturated). */
static bool write_step(const srd_model *m, int j, const double *rows, int nd, ControlSample *x, double *ddata,
                       double *dparams, double hk)
{
    const srd_control_step *s = &m->control.steps[j];
    if (s->slot >= 0) {
        int first = m->control.slots[s->slot].first;
        for (int c = 0; c < s->n; c++) /* an undefined derivative matters where it reaches an input */
            x->data[first + c] = rows[c], ddata[first + c] = rows[nd + c];
        return false;
    }
    const srd_param *p = &m->params[s->param];
    double raw = rows[0], draw = rows[nd];
    bool inside = raw > p->lo && raw < p->hi;
    x->params[s->param] = fmin(fmax(raw, p->lo), p->hi);
    dparams[s->param] = inside ? draw : 0;
    return near_bound(raw, draw, p->lo, hk) || near_bound(raw, draw, p->hi, hk) || (inside && !isfinite(draw));
}

bool control_tangents_forward(const ControlTangents *C, const srd_model *m, ControlSample *x, const double *dq,
                              const double *dforces, double *ddata, double *dparams, double hk)
{
    read_probes(m, x, dq, dforces, ddata);
    bool kink = false;
    for (int j = 0; j < C->n; j++) {
        const ControlStep *cs = &C->a[j];
        double *w = srd_xcalloc((size_t)cs->st.n_slots + 1, sizeof(double));
        for (int i = 0; i < cs->st.n_slots; i++)
            w[i] = cs->data[i] ? ddata[cs->index[i]] : dparams[cs->index[i]];
        double *rows = step_rows(cs, m, x, w);
        kink |= schedule_program_switch(&cs->st, rows, 1, hk);
        kink |= write_step(m, j, rows, cs->st.nd, x, ddata, dparams, hk);
        free(rows), free(w);
    }
    return kink;
}

/* ---- the adjoint ---- */

/* The values before each step (data, then params, per step) as the sample ran them. */
static double *values_before_steps(const ControlTangents *C, const srd_model *m, ControlSample *x)
{
    size_t nd = (size_t)m->control.n_data, np = (size_t)m->n_params, w = nd + np;
    double *keep = srd_xcalloc(w * (size_t)C->n + 1, sizeof(double));
    double *dd = srd_xcalloc(nd + 1, sizeof(double)), *dp = srd_xcalloc(np + 1, sizeof(double));
    read_probes(m, x, NULL, NULL, NULL);
    for (int j = 0; j < C->n; j++) {
        memcpy(&keep[w * (size_t)j], x->data, nd * sizeof(double));
        memcpy(&keep[w * (size_t)j + nd], x->params, np * sizeof(double));
        double *zero = srd_xcalloc((size_t)C->a[j].st.n_slots + 1, sizeof(double));
        double *rows = step_rows(&C->a[j], m, x, zero);
        write_step(m, j, rows, C->a[j].st.nd, x, dd, dp, 0); /* dd, dp: the tangents' scratch */
        free(rows), free(zero);
    }
    free(dd), free(dp);
    return keep;
}

/* The adjoint of step j's value (its slot's or input's, which the step overwrote: cleared), the
 * input's saturation applied. */
static void take_output(const srd_model *m, int j, const double *rows, double *ldata, double *lparams, double *lout)
{
    const srd_control_step *s = &m->control.steps[j];
    if (s->slot >= 0) {
        int first = m->control.slots[s->slot].first;
        for (int c = 0; c < s->n; c++)
            lout[c] = ldata[first + c], ldata[first + c] = 0;
        return;
    }
    const srd_param *p = &m->params[s->param];
    lout[0] = rows[0] > p->lo && rows[0] < p->hi ? lparams[s->param] : 0;
    lparams[s->param] = 0;
}

/* Marks every param: the sample has a switch or a singular derivative whose reach only a forward
 * pass can tell. */
static void near_all(const srd_model *m, bool *near)
{
    for (int k = 0; k < m->n_params; k++)
        near[k] = true;
}

/* A saturation within 2 hk of the input's own step marks every param; a switch of the step within
 * reach of a param it reads marks that param (rows: along the param's unit tangent). */
static void mark_saturation(const srd_model *m, int j, const double *rows, const double *hk, bool *near)
{
    const srd_control_step *s = &m->control.steps[j];
    if (s->param < 0)
        return;
    const srd_param *p = &m->params[s->param];
    double h = hk[s->param];
    if (near_bound(rows[0], 1, p->lo, h) || near_bound(rows[0], 1, p->hi, h))
        near_all(m, near);
}

/* lz += J^T lout, J the step's derivative with respect to its slots, one slot at a time (a value
 * whose adjoint is zero, a saturated input's, pulls nothing: its derivative may not exist). */
static void pull_step(const ControlStep *cs, const srd_model *m, const ControlSample *x, const double *lout,
                      double *ldata, double *lparams, const double *hk, bool *near)
{
    bool any = false;
    for (int c = 0; c < cs->st.nd; c++)
        any |= lout[c] != 0;
    if (!any)
        return;
    double *w = srd_xcalloc((size_t)cs->st.n_slots + 1, sizeof(double));
    for (int i = 0; i < cs->st.n_slots; i++) {
        w[i] = 1;
        double *rows = step_rows(cs, m, x, w), sum = 0;
        for (int c = 0; c < cs->st.nd; c++)
            sum += lout[c] != 0 ? rows[cs->st.nd + c] * lout[c] : 0;
        if (!isfinite(sum)) {
            near_all(m, near);
            sum = 0;
        }
        if (cs->data[i])
            ldata[cs->index[i]] += sum;
        else {
            lparams[cs->index[i]] += sum;
            if (schedule_program_switch(&cs->st, rows, 1, hk[cs->index[i]]))
                near[cs->index[i]] = true;
        }
        w[i] = 0;
        free(rows);
    }
    free(w);
}

void control_tangents_adjoint(const ControlTangents *C, const srd_model *m, ControlSample *x, double *ldata,
                              double *lparams, double *lq, double *lforces, const double *hk, bool *near)
{
    size_t nd = (size_t)m->control.n_data, np = (size_t)m->n_params, w = nd + np;
    double *before = values_before_steps(C, m, x), lout[9];
    for (int j = C->n - 1; j >= 0; j--) {
        const ControlStep *cs = &C->a[j];
        memcpy(x->data, &before[w * (size_t)j], nd * sizeof(double));
        memcpy(x->params, &before[w * (size_t)j + nd], np * sizeof(double));
        double *zero = srd_xcalloc((size_t)cs->st.n_slots + 1, sizeof(double));
        double *rows = step_rows(cs, m, x, zero);
        take_output(m, j, rows, ldata, lparams, lout);
        mark_saturation(m, j, rows, hk, near);
        pull_step(cs, m, x, lout, ldata, lparams, hk, near);
        free(rows), free(zero);
    }
    const srd_control *c = &m->control;
    for (int j = 0; j < c->n_slots; j++) { /* the probes were read over what the slots held */
        const srd_control_slot *sl = &c->slots[j];
        bool force = control_force_slot(m, j);
        for (int i = 0; sl->kind == SRD_CONTROL_PROBE && i < sl->n; i++) {
            if (force)
                lforces[sl->first + i] += ldata[sl->first + i];
            else
                lq[probe_dof(m, &m->simulate.probes[sl->probe], i)] += ldata[sl->first + i];
            ldata[sl->first + i] = 0;
        }
    }
    free(before);
}
