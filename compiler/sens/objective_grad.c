/* objective_grad.c — an objective's value and its gradient with respect to params at a model's
 * point (objective_grad.h): a static equilibrium's through its sensitivities, a simulation's by
 * the adjoint fed the objective's slopes step by step. `srdc grad` (the optimize block's
 * objective, or --objective) and `srdc optimize` take it. */
#include "sens/objective_grad.h"
#include "sens/control_tangent.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "probe.h"
#include "sens/dynamic.h"

/* The objective's records, taken as the sensitivities' run steps. */
typedef struct Recorder {
    ObjectiveRun    *run;
    const Objective *ob;
} Recorder;

static void record_step(void *ctx, srd_sim *s)
{
    Recorder *rc = ctx;
    objective_record(rc->run, rc->ob, s);
}

/* dJ/dq and dJ/d(force probes) at record `step` for the adjoint: the terms over time, and at the
 * end F's final probes and the curves. */
static void step_slopes(void *ctx, long step, double t, const double *q, const double *v, double *dq, double *dv,
                        double *dforce, double *dparams)
{
    const Recorder *rc = ctx;
    double *slots = srd_xcalloc((size_t)rc->ob->n_slots + 1, sizeof(double));
    objective_step_slopes(rc->ob, rc->run, (int)step, slots);
    objective_slots_to_dofs(rc->ob->m, slots, dq);
    if (step == rc->run->n_steps) {
        objective_final_dofs(rc->ob, rc->run, dq);
        objective_final_slopes(rc->ob, slots); /* F's on the final values: only the forces' are read below */
    }
    objective_slots_to_forces(rc->ob->m, slots, dforce);
    if (rc->ob->m->control.present) /* the inputs a controller sets change over the run */
        objective_step_param_slopes(rc->ob, rc->run, (int)step, dparams);
    free(slots);
    (void)t, (void)q, (void)v, (void)dv;
}

static int simulated(StaticPoint *pt, const GradOptions *g, Objective *ob, const bool *want, double *J, double *dp,
                     int *status, char *why, size_t why_n)
{
    if (dynamic_refuses(pt, g, why, why_n))
        return OBJECTIVE_REFUSED;
    ObjectiveRun run;
    memset(&run, 0, sizeof run);
    Recorder rc = { &run, ob };
    DynamicOptions opt = { want, record_step, &rc };
    objective_record_start(&run, pt->m, pt->s.params);
    DynamicRun *r = dynamic_run(pt, g, &opt, why, why_n);
    int code = r ? 0 : -1;
    if (r) {
        *J = objective_value(ob, &run);
        code = dynamic_adjoint(r, NULL, NULL, step_slopes, &rc, dp, status, why, why_n);
    }
    for (int k = 0; code == 0 && k < pt->m->n_params; k++)
        if (status[k] == STATIC_DERIVED && !control_sets(pt->m, k)) /* a controlled input's: the adjoint's */
            dp[k] += objective_param_slope(ob, &run, k);
        else if (status[k] != DYNAMIC_NOT_ASKED)
            snprintf(pt->why_switch[k], sizeof pt->why_switch[k], "%s", dynamic_why(status[k]));
    dynamic_run_free(r);
    objective_run_free(&run);
    return code;
}

/* The objective's share through the static block's force probes along one param: weights (F's on
 * their forces, GRAD_FORCE_WIDTH a probe) times their derivatives (r: the reactions; dq, dr, dc:
 * static_point_derivative_all's). */
static double forces_share(const StaticPoint *pt, const double *weights, const double *r, const double *dq,
                           const double *dr, const double *dc)
{
    const srd_analysis *a = &pt->m->statics;
    double sum = 0;
    for (int i = 0; i < a->n_probes; i++) {
        const srd_probe *pr = &a->probes[i];
        const double *w = &weights[GRAD_FORCE_WIDTH * i];
        double dfm[6] = { 0 };
        if (pr->kind == SRD_PROBE_REACTION)
            srd_probe_reaction_tangent(pt->m, pr, pt->s.q, r, dq, dr, dfm);
        else if (pr->kind == SRD_PROBE_CONTACT)
            memcpy(dfm, &dc[3 * i], 3 * sizeof(double));
        for (int c = 0; c < 6; c++) /* a reaction's force and moment */
            sum += w[c] * dfm[c];
    }
    return sum;
}

/* dq along param k at the equilibrium, and the force probes' share of dJ (0 without weights). */
static int equilibrium_derivative(StaticPoint *pt, const GradOptions *g, int k, const double *weights, double *dq,
                                  double *share)
{
    const srd_model *m = pt->m;
    *share = 0;
    if (!weights)
        return static_point_derivative(pt, g, k, dq);
    size_t n = (size_t)m->n_dofs + 1;
    double *r = srd_xcalloc(n, sizeof(double)), *dr = srd_xcalloc(n, sizeof(double));
    double *dc = srd_xcalloc(3 * (size_t)m->statics.n_probes + 1, sizeof(double));
    srd_sim_reactions(&pt->s, r);
    int status = static_point_derivative_all(pt, g, k, dq, dr, dc);
    if (status == STATIC_DERIVED)
        *share = forces_share(pt, weights, r, dq, dr, dc);
    free(r), free(dr), free(dc);
    return status;
}

static int equilibrium(StaticPoint *pt, const GradOptions *g, Objective *ob, const bool *want, double *J, double *dp,
                       int *status, char *why, size_t why_n)
{
    ObjectiveRun run;
    memset(&run, 0, sizeof run);
    int code = objective_run_point(ob, pt, &run);
    if (code) {
        snprintf(why, why_n, "the static equilibrium's solve failed at this point");
        objective_run_free(&run);
        return -1;
    }
    *J = objective_value(ob, &run);
    const srd_model *m = pt->m;
    double *dq = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double)), *dj = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    double *weights = ob->forces ? srd_xcalloc(GRAD_FORCE_WIDTH * (size_t)m->statics.n_probes + 1, sizeof(double)) : NULL;
    objective_final_dofs(ob, &run, dj);
    if (weights)
        objective_slots_to_forces(m, ob->df_dslot, weights);
    for (int k = 0; k < m->n_params; k++) {
        double share = 0;
        status[k] = want && !want[k] ? DYNAMIC_NOT_ASKED : m->params[k].shapes ? STATIC_MOVES_GEOMETRY
                                                                              : equilibrium_derivative(pt, g, k, weights, dq, &share);
        dp[k] = 0;
        if (status[k] != STATIC_DERIVED)
            continue;
        dp[k] = objective_param_slope(ob, &run, k) + share;
        for (int d = 0; d < m->n_dofs; d++)
            dp[k] += dj[d] * dq[d];
    }
    free(dq), free(dj), free(weights);
    objective_run_free(&run);
    return 0;
}

int objective_gradient(StaticPoint *pt, const GradOptions *g, Objective *ob, const bool *want, double *J, double *dp,
                       int *status, char *why, size_t why_n)
{
    memset(dp, 0, sizeof(double) * (size_t)pt->m->n_params);
    const srd_model *first = ob->m;
    ob->m = pt->m; /* the objective was lowered on a model of the same layout: only the values differ */
    int code = pt->m->simulate.present ? simulated(pt, g, ob, want, J, dp, status, why, why_n)
                                       : equilibrium(pt, g, ob, want, J, dp, status, why, why_n);
    ob->m = first;
    return code;
}

const char *objective_why(const StaticPoint *pt, int k, int status)
{
    if (pt->m->params[k].shapes)
        return "it sets the discretisation";
    if (pt->m->simulate.present && status != STATIC_DERIVED && pt->why_switch[k][0])
        return pt->why_switch[k];
    return dynamic_why(status);
}

/* ---- srdc grad ---- */

static FILE *messages(const GradOptions *o) { return o->errors ? o->errors : stderr; }

int grad_objective(StaticPoint *pt, const GradOptions *o)
{
    char err[512] = "";
    Objective ob;
    if (!objective_prepare(&ob, &pt->prog, pt->m, err, sizeof err)) {
        fprintf(messages(o), "srdc: error: the objective: %s\n", err);
        objective_free(&ob);
        return SRD_EXIT_BAD_INPUT;
    }
    const srd_model *m = pt->m;
    double J = 0, *dp = srd_xcalloc((size_t)m->n_params + 1, sizeof(double));
    int *status = srd_xcalloc((size_t)m->n_params + 1, sizeof(int));
    int code = objective_gradient(pt, o, &ob, NULL, &J, dp, status, err, sizeof err);
    if (code == 0) {
        printf("objective%s = %.12e; its derivatives (%s):\n", o->objective ? " (--objective)" : " (the optimize block's)",
               J, m->simulate.present ? "adjoint of the simulation" : "static sensitivities");
        for (int k = 0; k < m->n_params; k++)
            if (status[k] == STATIC_DERIVED)
                printf("  d(objective)/d(%s) = %.12e per %s\n", m->params[k].name, dp[k],
                       strcmp(m->params[k].unit, "1") ? m->params[k].unit : "unit");
            else
                printf("  d(objective)/d(%s): %s\n", m->params[k].name, objective_why(pt, k, status[k]));
    } else
        fprintf(messages(o), "srdc: error: %s\n", err);
    free(dp), free(status);
    objective_free(&ob);
    return code == 0 ? SRD_EXIT_OK : code == OBJECTIVE_REFUSED ? SRD_EXIT_BAD_INPUT : SRD_EXIT_NUMERIC;
}
