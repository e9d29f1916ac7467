/* objective.c — an `optimize` block's objective on a run, and its exact derivatives with respect
 * to the recorded probe values, the final configuration and the params (see objective.h). */
#include "sens/objective.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "diff.h"
#include "probe.h"

static void gradient_of(LoweredElement *le, ExprId **slopes)
{
    int n = le->n_inputs;
    int *wrt = srd_xcalloc((size_t)n + 1, sizeof(int));
    for (int i = 0; i < n; i++)
        wrt[i] = i;
    *slopes = srd_xcalloc((size_t)n + 1, sizeof(ExprId));
    diff_gradient(le->dag, le->res[0], wrt, n, *slopes);
    free(wrt);
}

bool objective_prepare(Objective *ob, const Program *prog, const srd_model *m, char *err, size_t err_n)
{
    memset(ob, 0, sizeof *ob);
    ob->m = m;
    const srd_analysis *a = srd_objective_analysis(m);
    for (int i = 0; i < a->n_probes; i++)
        ob->n_slots += elab_objective_probe_width(&a->probes[i]);
    ob->forces = grad_has_probe(a, SRD_PROBE_REACTION) || grad_has_probe(a, SRD_PROBE_CONTACT);
    if (!lower_objective(prog, m, &ob->f, err, err_n))
        return false;
    gradient_of(&ob->f, &ob->f_slopes);
    const srd_optimize *o = &m->optimize;
    ob->terms = srd_xcalloc((size_t)o->n_terms + 1, sizeof *ob->terms);
    ob->n_terms = o->n_terms;
    for (int k = 0; k < o->n_terms; k++) {
        ObjectiveTerm *t = &ob->terms[k];
        int rows = o->terms[k].n_rows;
        t->rows = srd_xcalloc((size_t)rows + 1, sizeof(double));
        t->w = srd_xcalloc((size_t)rows + 1, sizeof(double));
        t->at = srd_xcalloc((size_t)rows + 1, sizeof(int));
        if (o->terms[k].kind == SRD_TERM_TRACK_CURVE)
            continue;
        if (!lower_objective_term(prog, m, k, &t->g, err, err_n))
            return false;
        gradient_of(&t->g, &t->slopes);
    }
    ob->value_of_term = srd_xcalloc((size_t)ob->n_terms + 1, sizeof(double));
    ob->df_dterm = srd_xcalloc((size_t)ob->n_terms + 1, sizeof(double));
    ob->df_dslot = srd_xcalloc((size_t)ob->n_slots + 1, sizeof(double));
    ob->df_dparam = srd_xcalloc((size_t)m->n_params + 1, sizeof(double));
    return true;
}

void objective_free(Objective *ob)
{
    if (ob->f.dag)
        lowered_free(&ob->f);
    free(ob->f_slopes);
    for (int k = 0; ob->terms && k < ob->n_terms; k++) {
        if (ob->terms[k].g.dag)
            lowered_free(&ob->terms[k].g);
        free(ob->terms[k].slopes);
        free(ob->terms[k].rows);
        free(ob->terms[k].at);
        free(ob->terms[k].w);
    }
    free(ob->terms);
    free(ob->value_of_term);
    free(ob->df_dterm);
    free(ob->df_dslot);
    free(ob->df_dparam);
    memset(ob, 0, sizeof *ob);
}

/* The inputs of a term's DAG: the probe slots, t and the params. */
static void term_inputs(const LoweredElement *g, const double *slots, double t, const double *params, double *in)
{
    for (int i = 0; i < g->n_inputs; i++)
        in[i] = g->inputs[i].cls == KIN_DATA    ? slots[g->inputs[i].index]
              : g->inputs[i].cls == KIN_PARAM ? params[g->inputs[i].index]
              : g->inputs[i].cls == KIN_TIME  ? t : 0;
}

static double term_at(const ObjectiveTerm *term, const double *slots, double t, const double *params)
{
    double *in = srd_xcalloc((size_t)term->g.n_inputs + 1, sizeof(double));
    term_inputs(&term->g, slots, t, params, in);
    double v = dag_eval(term->g.dag, term->g.res[0], in);
    free(in);
    return v;
}

/* d(term)/d(input i) at a point. */
static double *term_slopes_at(const ObjectiveTerm *term, const double *slots, double t, const double *params)
{
    int n = term->g.n_inputs;
    double *in = srd_xcalloc((size_t)n + 1, sizeof(double)), *out = srd_xcalloc((size_t)n + 1, sizeof(double));
    term_inputs(&term->g, slots, t, params, in);
    dag_eval_many(term->g.dag, term->slopes, n, in, out);
    free(in);
    return out;
}

/* The params' values at record n (a controller's inputs change over the run). */
static const double *params_of(const Objective *ob, const ObjectiveRun *run, int n)
{
    return run->params_at ? &run->params_at[(size_t)n * (size_t)ob->m->n_params] : run->params;
}

/* The params' values at a time between records at and at + 1, weight w of the latter (as the
 * probes are interpolated); the caller frees them. */
static double *params_between(const Objective *ob, const ObjectiveRun *run, int at, double w)
{
    int np = ob->m->n_params;
    const double *a = params_of(ob, run, at), *b = params_of(ob, run, at < run->n_steps ? at + 1 : at);
    double *p = srd_xcalloc((size_t)np + 1, sizeof(double));
    for (int k = 0; k < np; k++)
        p[k] = a[k] == b[k] ? a[k] : (1 - w) * a[k] + w * b[k];
    return p;
}

/* The trapezoidal weight of record n. */
static double trapezoid(const ObjectiveRun *run, int n)
{
    if (run->n_steps == 0)
        return 0;
    double before = n > 0 ? run->t[n] - run->t[n - 1] : 0, after = n < run->n_steps ? run->t[n + 1] - run->t[n] : 0;
    return 0.5 * (before + after);
}

/* The probe values at time t, interpolated between records at and at + 1 with weight w. */
static void interpolated(const Objective *ob, const ObjectiveRun *run, int at, double w, double *slots)
{
    const double *a = &run->slots[(size_t)at * (size_t)ob->n_slots];
    const double *b = at < run->n_steps ? a + ob->n_slots : a;
    for (int j = 0; j < ob->n_slots; j++)
        slots[j] = (1 - w) * a[j] + w * b[j];
}

/* The node (local index) before arc-length fraction s on rod `term`, and the weight of the next. */
static int curve_bracket(const srd_objective_term *term, const srd_object *rod, double s, double *w)
{
    int n = rod->n_nodes, last = rod->closed ? n : n - 1;
    int k = 0;
    while (k + 1 < last && term->s[k + 1] <= s)
        k++;
    double s1 = k + 1 < n ? term->s[k + 1] : 1;
    *w = s1 > term->s[k] ? fmin(fmax((s - term->s[k]) / (s1 - term->s[k]), 0), 1) : 0;
    return k;
}

static int curve_dof(const srd_model *m, const srd_objective_term *term, int k)
{
    const srd_object *rod = &m->objects[term->object];
    return m->node_dof[rod->nodes[k % rod->n_nodes]] + term->component;
}

static double term_value(Objective *ob, const ObjectiveRun *run, int k)
{
    const srd_objective_term *spec = &ob->m->optimize.terms[k];
    ObjectiveTerm *term = &ob->terms[k];
    double sum = 0;
    if (spec->kind == SRD_TERM_INTEGRAL) {
        for (int n = 0; n <= run->n_steps; n++)
            sum += trapezoid(run, n) * term_at(term, &run->slots[(size_t)n * (size_t)ob->n_slots], run->t[n],
                                               params_of(ob, run, n));
        return sum;
    }
    double *slots = srd_xcalloc((size_t)ob->n_slots + 1, sizeof(double));
    for (int i = 0; i < spec->n_rows; i++) {
        double value;
        if (spec->kind == SRD_TERM_TRACK_TIME) {
            int at = 0;
            while (at + 1 < run->n_steps && run->t[at + 1] <= spec->x[i])
                at++;
            double span = run->n_steps ? run->t[at + 1] - run->t[at] : 0;
            term->at[i] = at;
            term->w[i] = span > 0 ? fmin(fmax((spec->x[i] - run->t[at]) / span, 0), 1) : 0;
            interpolated(ob, run, at, term->w[i], slots);
            double *params = params_between(ob, run, at, term->w[i]);
            value = term_at(term, slots, spec->x[i], params);
            free(params);
        } else {
            int node = curve_bracket(spec, &ob->m->objects[spec->object], spec->x[i], &term->w[i]);
            term->at[i] = node;
            value = (1 - term->w[i]) * run->q[curve_dof(ob->m, spec, node)] +
                    term->w[i] * run->q[curve_dof(ob->m, spec, node + 1)];
        }
        term->rows[i] = 2 * (value - spec->y[i]);
        sum += (value - spec->y[i]) * (value - spec->y[i]);
    }
    free(slots);
    return sum;
}

double objective_value(Objective *ob, const ObjectiveRun *run)
{
    for (int k = 0; k < ob->n_terms; k++)
        ob->value_of_term[k] = term_value(ob, run, k);
    const LoweredElement *f = &ob->f;
    const double *final = &run->slots[(size_t)run->n_steps * (size_t)ob->n_slots];
    double *in = srd_xcalloc((size_t)f->n_inputs + 1, sizeof(double)), *d = srd_xcalloc((size_t)f->n_inputs + 1,
                                                                                         sizeof(double));
    for (int i = 0; i < f->n_inputs; i++) {
        int j = f->inputs[i].index;
        in[i] = f->inputs[i].cls == KIN_DATA  ? (j < ob->n_slots ? final[j] : ob->value_of_term[j - ob->n_slots])
              : f->inputs[i].cls == KIN_PARAM ? run->params[j] : 0;
    }
    double J = dag_eval(f->dag, f->res[0], in);
    dag_eval_many(f->dag, ob->f_slopes, f->n_inputs, in, d);
    memset(ob->df_dslot, 0, sizeof(double) * (size_t)ob->n_slots);
    memset(ob->df_dterm, 0, sizeof(double) * (size_t)ob->n_terms);
    memset(ob->df_dparam, 0, sizeof(double) * (size_t)ob->m->n_params);
    for (int i = 0; i < f->n_inputs; i++) {
        int j = f->inputs[i].index;
        if (f->inputs[i].cls == KIN_DATA && j < ob->n_slots)
            ob->df_dslot[j] += d[i];
        else if (f->inputs[i].cls == KIN_DATA)
            ob->df_dterm[j - ob->n_slots] += d[i];
        else if (f->inputs[i].cls == KIN_PARAM)
            ob->df_dparam[j] += d[i];
    }
    free(in);
    free(d);
    return J;
}

/* Adds scale * d(term)/d(its inputs) at a point: the probe slots' into slot_out, the params' into
 * param_out (either may be NULL). */
static void add_term_slopes(const ObjectiveTerm *term, const double *slots, double t, const double *params,
                            double scale, double *slot_out, double *param_out)
{
    double *d = term_slopes_at(term, slots, t, params);
    for (int i = 0; i < term->g.n_inputs; i++) {
        int j = term->g.inputs[i].index;
        if (term->g.inputs[i].cls == KIN_DATA && slot_out)
            slot_out[j] += scale * d[i];
        else if (term->g.inputs[i].cls == KIN_PARAM && param_out)
            param_out[j] += scale * d[i];
    }
    free(d);
}

/* The terms' slopes with respect to record n's probe slots and params (tracks: the share of the
 * records their rows are interpolated between). */
static void record_slopes(const Objective *ob, const ObjectiveRun *run, int n, double *slot_out, double *param_out)
{
    const double *slots_n = &run->slots[(size_t)n * (size_t)ob->n_slots];
    double *slots = srd_xcalloc((size_t)ob->n_slots + 1, sizeof(double));
    for (int k = 0; k < ob->n_terms; k++) {
        const srd_objective_term *spec = &ob->m->optimize.terms[k];
        const ObjectiveTerm *term = &ob->terms[k];
        if (ob->df_dterm[k] == 0)
            continue;
        if (spec->kind == SRD_TERM_INTEGRAL)
            add_term_slopes(term, slots_n, run->t[n], params_of(ob, run, n), ob->df_dterm[k] * trapezoid(run, n),
                            slot_out, param_out);
        else if (spec->kind == SRD_TERM_TRACK_TIME)
            for (int i = 0; i < spec->n_rows; i++) {
                double weight = (term->at[i] == n ? 1 - term->w[i] : 0) +
                                (term->at[i] + 1 == n || (term->at[i] == n && n == run->n_steps) ? term->w[i] : 0);
                if (weight == 0)
                    continue;
                interpolated(ob, run, term->at[i], term->w[i], slots);
                double *params = params_between(ob, run, term->at[i], term->w[i]);
                add_term_slopes(term, slots, spec->x[i], params, ob->df_dterm[k] * term->rows[i] * weight, slot_out,
                                param_out);
                free(params);
            }
    }
    free(slots);
}

void objective_step_slopes(const Objective *ob, const ObjectiveRun *run, int n, double *out)
{
    record_slopes(ob, run, n, out, NULL);
}

void objective_step_param_slopes(const Objective *ob, const ObjectiveRun *run, int n, double *out)
{
    record_slopes(ob, run, n, NULL, out);
    for (int k = 0; n == run->n_steps && k < ob->m->n_params; k++)
        out[k] += ob->df_dparam[k]; /* F reads the params' values at the end */
}

void objective_slots_to_forces(const srd_model *m, const double *slot_values, double *dforce)
{
    const srd_analysis *a = srd_objective_analysis(m);
    for (int i = 0, n = 0; i < a->n_probes; i++) {
        const srd_probe *p = &a->probes[i];
        if (p->kind != SRD_PROBE_STATE)
            for (int c = 0; c < elab_objective_probe_width(p); c++)
                dforce[GRAD_FORCE_WIDTH * i + c] += slot_values[n + c];
        n += elab_objective_probe_width(p);
    }
}

void objective_slots_to_dofs(const srd_model *m, const double *slot_values, double *dq)
{
    const srd_analysis *a = srd_objective_analysis(m);
    int n = 0;
    for (int i = 0; i < a->n_probes; i++) {
        const srd_probe *p = &a->probes[i];
        if (p->kind != SRD_PROBE_STATE) {
            n += elab_objective_probe_width(p); /* a force's: objective_slots_to_forces */
            continue;
        }
        if (p->dof >= 0)
            dq[p->dof] += slot_values[n++];
        else
            for (int c = 0; c < 3; c++)
                dq[m->node_dof[p->node] + c] += slot_values[n++];
    }
}

void objective_final_slopes(const Objective *ob, double *out)
{
    for (int j = 0; j < ob->n_slots; j++)
        out[j] += ob->df_dslot[j];
}

void objective_final_dofs(const Objective *ob, const ObjectiveRun *run, double *dq)
{
    (void)run;
    objective_slots_to_dofs(ob->m, ob->df_dslot, dq);
    for (int k = 0; k < ob->n_terms; k++) {
        const srd_objective_term *spec = &ob->m->optimize.terms[k];
        const ObjectiveTerm *term = &ob->terms[k];
        if (spec->kind != SRD_TERM_TRACK_CURVE)
            continue;
        for (int i = 0; i < spec->n_rows; i++) {
            double r = ob->df_dterm[k] * term->rows[i];
            dq[curve_dof(ob->m, spec, term->at[i])] += r * (1 - term->w[i]);
            dq[curve_dof(ob->m, spec, term->at[i] + 1)] += r * term->w[i];
        }
    }
}

/* Whether the term's expression reads param k. */
static bool term_reads(const ObjectiveTerm *term, int k)
{
    for (int i = 0; i < term->g.n_inputs; i++)
        if (term->g.inputs[i].cls == KIN_PARAM && term->g.inputs[i].index == k)
            return true;
    return false;
}

double objective_param_slope(const Objective *ob, const ObjectiveRun *run, int k)
{
    double *d = srd_xcalloc((size_t)ob->m->n_params + 1, sizeof(double));
    double *slots = srd_xcalloc((size_t)ob->n_slots + 1, sizeof(double));
    for (int j = 0; j < ob->n_terms; j++) {
        const srd_objective_term *spec = &ob->m->optimize.terms[j];
        const ObjectiveTerm *term = &ob->terms[j];
        if (ob->df_dterm[j] == 0 || !term_reads(term, k))
            continue;
        if (spec->kind == SRD_TERM_INTEGRAL)
            for (int n = 0; n <= run->n_steps; n++)
                add_term_slopes(term, &run->slots[(size_t)n * (size_t)ob->n_slots], run->t[n], params_of(ob, run, n),
                                ob->df_dterm[j] * trapezoid(run, n), NULL, d);
        else if (spec->kind == SRD_TERM_TRACK_TIME)
            for (int i = 0; i < spec->n_rows; i++) {
                interpolated(ob, run, term->at[i], term->w[i], slots);
                double *params = params_between(ob, run, term->at[i], term->w[i]);
                add_term_slopes(term, slots, spec->x[i], params, ob->df_dterm[j] * term->rows[i], NULL, d);
                free(params);
            }
    }
    double sum = ob->df_dparam[k] + d[k];
    free(slots), free(d);
    return sum;
}

void objective_record_start(ObjectiveRun *run, const srd_model *m, const double *params)
{
    memset(run, 0, sizeof *run);
    run->n_steps = -1;
    run->q = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    run->params = params;
}

void objective_record(ObjectiveRun *run, const Objective *ob, srd_sim *s)
{
    int n = ++run->n_steps;
    if (n + 1 > run->cap) {
        run->cap = 2 * run->cap + 16;
        run->t = srd_xrealloc(run->t, sizeof(double) * (size_t)run->cap);
        run->slots = srd_xrealloc(run->slots, sizeof(double) * (size_t)run->cap * (size_t)(ob->n_slots + 1));
        size_t np = (size_t)ob->m->n_params + 1;
        run->params_at = srd_xrealloc(run->params_at, sizeof(double) * (size_t)run->cap * np);
    }
    run->t[n] = s->t;
    memcpy(&run->params_at[(size_t)n * (size_t)ob->m->n_params], s->params, sizeof(double) * (size_t)ob->m->n_params);
    const srd_analysis *a = srd_objective_analysis(ob->m);
    double *slots = &run->slots[(size_t)n * (size_t)ob->n_slots], *reactions = NULL, value[6];
    if (grad_has_probe(a, SRD_PROBE_REACTION)) { /* as the probe file takes them */
        reactions = srd_xcalloc((size_t)ob->m->n_dofs + 1, sizeof(double));
        srd_sim_reactions(s, reactions);
    }
    for (int i = 0, j = 0; i < a->n_probes; i++) {
        int width = elab_objective_probe_width(&a->probes[i]);
        if (width)
            srd_probe_value_at(s, &a->probes[i], s->q, reactions, value);
        memcpy(&slots[j], value, sizeof(double) * (size_t)width);
        j += width;
    }
    free(reactions);
    memcpy(run->q, s->q, sizeof(double) * (size_t)ob->m->n_dofs);
}

void objective_run_free(ObjectiveRun *run)
{
    free(run->t);
    free(run->slots);
    free(run->params_at);
    free(run->q);
    memset(run, 0, sizeof *run);
}

/* As point_simulate (grad.c), with a record at the start and after every step. */
int objective_run_point(const Objective *ob, StaticPoint *pt, ObjectiveRun *run)
{
    srd_sim *s = &pt->s;
    const srd_model *m = pt->m;
    objective_record_start(run, m, s->params);
    if (!m->simulate.present) {
        int code = srd_static(s, m->statics.load_steps);
        if (!code)
            objective_record(run, ob, s);
        return code;
    }
    const srd_analysis *a = &m->simulate;
    int code = point_start_simulation(pt);
    if (code)
        return code;
    srd_method method = (srd_method)srd_method_from_name(a->method);
    long steps = (long)ceil(a->duration / a->dt - 1e-9);
    objective_record(run, ob, s);
    for (long k = 0; k < steps && code == 0; k++) {
        code = srd_step(s, method, 6);
        if (!code)
            objective_record(run, ob, s);
    }
    return code;
}
