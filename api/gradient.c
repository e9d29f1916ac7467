/* gradient.c — sensitivities through the C API: the derivatives of a static equilibrium's probes,
 * or of a simulation's at its end, with respect to every param, as `srdc grad` prints them
 * (compiler/sens/grad.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "diag.h"
#include "instance.h"
#include "probe.h"
#include "sens/grad.h"
#include "sens/objective_grad.h"

enum { WIDTH = 6 }; /* the most values a probe has */

struct srd_gradient {
    int     n_params, n_probes;
    char  **params, **probes, **why;  /* why[k]: NULL when param k is derived */
    int    *size;                     /* per probe: 1, 3, or 6 for a reaction (force, moment) */
    double *values;                   /* [probe][param][WIDTH] */
};

/* Probe i's derivative along param k from dq (and, for a reaction, the reactions r and their
 * derivative dr; for a contact force, dc; in a simulation, simulate_and_derive fills these). */
static void fill_probe(srd_gradient *g, const StaticPoint *pt, const srd_analysis *a, int i, int k, const double *dq,
                       const double *r, const double *dr, const double *dc)
{
    const srd_probe *p = &a->probes[i];
    double *out = &g->values[((size_t)i * g->n_params + k) * WIDTH];
    if (p->kind == SRD_PROBE_REACTION && dr)
        srd_probe_reaction_tangent(pt->m, p, pt->s.q, r, dq, dr, out);
    else if (p->kind == SRD_PROBE_CONTACT && dc)
        memcpy(out, &dc[3 * i], 3 * sizeof(double));
    else if (p->kind != SRD_PROBE_STATE)
        for (int c = 0; c < WIDTH; c++)
            out[c] = NAN;
    else if (p->dof >= 0)
        out[0] = dq[p->dof];
    else
        memcpy(out, &dq[pt->m->node_dof[p->node]], 3 * sizeof(double));
}

static srd_gradient *gradient_new(const StaticPoint *pt, const srd_analysis *a)
{
    srd_gradient *g = srd_xcalloc(1, sizeof *g);
    const srd_model *m = pt->m;
    g->n_params = m->n_params;
    g->n_probes = a->n_probes;
    g->params = srd_xcalloc((size_t)g->n_params + 1, sizeof(char *));
    g->why = srd_xcalloc((size_t)g->n_params + 1, sizeof(char *));
    g->probes = srd_xcalloc((size_t)g->n_probes + 1, sizeof(char *));
    g->size = srd_xcalloc((size_t)g->n_probes + 1, sizeof(int));
    g->values = srd_xcalloc(WIDTH * (size_t)g->n_params * (size_t)g->n_probes + 1, sizeof(double));
    for (int k = 0; k < g->n_params; k++)
        g->params[k] = srd_xstrdup(m->params[k].name);
    for (int i = 0; i < g->n_probes; i++) {
        g->probes[i] = srd_xstrdup(a->probes[i].name);
        g->size[i] = a->probes[i].kind == SRD_PROBE_REACTION ? 6
                   : a->probes[i].kind == SRD_PROBE_STATE && a->probes[i].dof >= 0 ? 1 : 3;
    }
    return g;
}

static const char *reason(const srd_param *p, int status)
{
    return p->shapes ? "it sets the discretisation" : static_point_why(status);
}

/* Every param's derivatives at the solved point. */
static void derive_all(srd_gradient *g, StaticPoint *pt, const GradOptions *o)
{
    size_t n = (size_t)pt->m->n_dofs + 1;
    const srd_analysis *a = &pt->m->statics;
    double *dq = srd_xcalloc(n, sizeof(double)), *r = NULL, *dr = NULL, *dc = NULL;
    if (grad_has_probe(a, SRD_PROBE_REACTION)) {
        r = srd_xcalloc(n, sizeof(double)), dr = srd_xcalloc(n, sizeof(double));
        srd_sim_reactions(&pt->s, r);
    }
    if (grad_has_probe(a, SRD_PROBE_CONTACT))
        dc = srd_xcalloc(3 * (size_t)a->n_probes + 1, sizeof(double));
    for (int k = 0; k < g->n_params; k++) {
        const srd_param *p = &pt->m->params[k];
        int status = p->shapes ? -1 : static_point_derivative_all(pt, o, k, dq, dr, dc);
        if (status != STATIC_DERIVED) {
            g->why[k] = srd_xstrdup(reason(p, status));
            memset(dq, 0, sizeof(double) * (size_t)pt->m->n_dofs);
            for (int i = 0; i < g->n_probes; i++)
                for (int c = 0; c < WIDTH; c++)
                    g->values[((size_t)i * g->n_params + k) * WIDTH + c] = NAN;
            continue;
        }
        for (int i = 0; i < g->n_probes; i++)
            fill_probe(g, pt, a, i, k, dq, r, dr, dc);
    }
    free(dq), free(r), free(dr), free(dc);
}

static void not_derived(srd_gradient *g, int k, const char *why)
{
    g->why[k] = srd_xstrdup(why);
    for (int i = 0; i < g->n_probes; i++)
        for (int c = 0; c < WIDTH; c++)
            g->values[((size_t)i * g->n_params + k) * WIDTH + c] = NAN;
}

/* The simulation's derivatives (forward, or adjoint per probe value) into a new result. */
static int simulate_and_derive(StaticPoint *pt, const GradOptions *o, srd_gradient **out)
{
    const srd_model *m = pt->m;
    double **dq = srd_xcalloc((size_t)m->n_params + 1, sizeof *dq), **df = srd_xcalloc((size_t)m->n_params + 1, sizeof *df);
    for (int k = 0; k < m->n_params; k++) {
        dq[k] = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
        df[k] = srd_xcalloc(GRAD_FORCE_WIDTH * (size_t)m->simulate.n_probes + 1, sizeof(double));
    }
    int *status = srd_xcalloc((size_t)m->n_params + 1, sizeof(int));
    char why[512] = "";
    int code = grad_simulation_derive(pt, o, dq, df, status, NULL, why, sizeof why);
    if (code == 0) {
        srd_gradient *g = *out = gradient_new(pt, &m->simulate);
        for (int k = 0; k < m->n_params; k++)
            if (status[k] != STATIC_DERIVED)
                not_derived(g, k, grad_simulation_why(pt, k, status[k]));
            else
                for (int i = 0; i < g->n_probes; i++)
                    if (!grad_end_probe(&m->simulate.probes[i]))
                        fill_probe(g, pt, &m->simulate, i, k, dq[k], NULL, NULL, NULL);
                    else /* derived at the end of the run */
                        memcpy(&g->values[((size_t)i * g->n_params + k) * WIDTH], &df[k][GRAD_FORCE_WIDTH * i],
                               WIDTH * sizeof(double));
    } else
        fprintf(o->errors, "%s: %s\n", o->file, why);
    for (int k = 0; k < m->n_params; k++)
        free(dq[k]), free(df[k]);
    free(dq), free(df), free(status);
    return code;
}

int api_point_open(StaticPoint *pt, GradOptions *o, const char *block)
{
    int status = static_point_open(pt, o);
    if (status != 0)
        return status;
    const srd_model *m = pt->m;
    const srd_analysis *a = !strcmp(block, "static") ? &m->statics : !strcmp(block, "modes") ? &m->modes : &m->simulate;
    if (a->present)
        return 0;
    fprintf(o->errors, "%s: the model has no `%s` block to differentiate\n", o->file, block);
    return SRD_EXIT_BAD_INPUT;
}

srd_status api_status_of(int exit_status)
{
    return exit_status == 0 ? SRD_OK : exit_status == SRD_EXIT_NUMERIC ? SRD_ERR_NUMERIC : SRD_ERR_INPUT;
}

/* Opens, solves and derives under the front end's lock; messages into `errors`. */
static srd_status solve_and_derive(GradOptions *o, srd_gradient **out)
{
    StaticPoint pt;
    int status = api_point_open(&pt, o, "static");
    if (status == 0 && srd_static(&pt.s, pt.m->statics.load_steps) != 0) {
        fprintf(o->errors, "%s: the static equilibrium was not found\n", o->file);
        status = SRD_EXIT_NUMERIC;
    }
    if (status == 0) {
        *out = gradient_new(&pt, &pt.m->statics);
        derive_all(*out, &pt, o);
    }
    static_point_close(&pt);
    return api_status_of(status);
}

/* Opens, simulates and derives under the front end's lock; messages into `errors`. */
static srd_status run_and_derive(GradOptions *o, srd_gradient **out)
{
    StaticPoint pt;
    int status = api_point_open(&pt, o, "simulate");
    if (status == 0)
        status = simulate_and_derive(&pt, o, out);
    static_point_close(&pt);
    return api_status_of(status);
}

srd_status api_derive(const char *fn, const char *path, const char *const *params, int n_params, GradOptions o,
                      api_derive_fn derive, void *out)
{
    if (!path || !out || n_params < 0 || (n_params > 0 && !params))
        return api_fail(NULL, SRD_ERR_ARGUMENT, "%s: a NULL path, params or result", fn);
    o.file = path, o.overrides = (const char **)params, o.n_overrides = n_params, o.quiet = true;
    char *buf;
    size_t len;
    o.errors = api_stream_open(&buf, &len);
    if (!o.errors)
        return api_fail(NULL, SRD_ERR_MEMORY, "%s: no memory for messages", fn);
    api_lock_front_end();
    diag_set_program("srd");
    srd_status st = derive(&o, out);
    diag_reset();
    api_unlock_front_end();
    char *text = api_stream_text(o.errors, &buf, &len);
    if (st == SRD_OK) {
        free(text);
        return SRD_OK;
    }
    return api_fail_text(NULL, st, text);
}

static srd_status static_derive(GradOptions *o, void *out)
{
    *(srd_gradient **)out = NULL;
    return solve_and_derive(o, out);
}

static srd_status simulation_derive(GradOptions *o, void *out)
{
    *(srd_gradient **)out = NULL;
    return run_and_derive(o, out);
}

/* A result with one "probe", the objective, of size 1. */
static srd_gradient *objective_result(const srd_model *m, const double *dp, const int *status, const StaticPoint *pt)
{
    srd_gradient *g = srd_xcalloc(1, sizeof *g);
    g->n_params = m->n_params;
    g->n_probes = 1;
    g->params = srd_xcalloc((size_t)g->n_params + 1, sizeof(char *));
    g->why = srd_xcalloc((size_t)g->n_params + 1, sizeof(char *));
    g->probes = srd_xcalloc(2, sizeof(char *));
    g->size = srd_xcalloc(2, sizeof(int));
    g->values = srd_xcalloc(WIDTH * (size_t)g->n_params + 1, sizeof(double));
    g->probes[0] = srd_xstrdup("objective");
    g->size[0] = 1;
    for (int k = 0; k < g->n_params; k++) {
        g->params[k] = srd_xstrdup(m->params[k].name);
        if (status[k] == STATIC_DERIVED)
            g->values[WIDTH * k] = dp[k];
        else
            not_derived(g, k, objective_why(pt, k, status[k]));
    }
    return g;
}

typedef struct ObjectiveOut {
    double        *value;
    srd_gradient **g;
} ObjectiveOut;

/* Opens the model (with o->objective when given), and derives its objective. */
static srd_status objective_derive(GradOptions *o, void *arg)
{
    ObjectiveOut *out = arg;
    *out->g = NULL;
    StaticPoint pt;
    int status = static_point_open(&pt, o);
    if (status == 0 && !pt.m->optimize.present) {
        fprintf(o->errors, "%s: no objective: pass one, or give the model an `optimize` block\n", o->file);
        status = SRD_EXIT_BAD_INPUT;
    }
    Objective ob;
    memset(&ob, 0, sizeof ob);
    char why[512] = "";
    if (status == 0 && !objective_prepare(&ob, &pt.prog, pt.m, why, sizeof why)) {
        fprintf(o->errors, "%s: the objective: %s\n", o->file, why);
        status = SRD_EXIT_BAD_INPUT;
    }
    if (status == 0) {
        double *dp = srd_xcalloc((size_t)pt.m->n_params + 1, sizeof(double));
        int *st = srd_xcalloc((size_t)pt.m->n_params + 1, sizeof(int));
        if (objective_gradient(&pt, o, &ob, NULL, out->value, dp, st, why, sizeof why) == 0)
            *out->g = objective_result(pt.m, dp, st, &pt);
        else {
            fprintf(o->errors, "%s: %s\n", o->file, why);
            status = SRD_EXIT_NUMERIC;
        }
        free(dp), free(st);
    }
    objective_free(&ob);
    static_point_close(&pt);
    return api_status_of(status);
}

srd_status srd_objective_gradient(const char *path, const char *const *params, int n_params, const char *objective,
                                  double *value, srd_gradient **out)
{
    if (!value)
        return api_fail(NULL, SRD_ERR_ARGUMENT, "srd_objective_gradient: a NULL value");
    GradOptions o = { .objective = objective };
    ObjectiveOut arg = { value, out };
    return api_derive("srd_objective_gradient", path, params, n_params, o, objective_derive, out ? (void *)&arg : NULL);
}

srd_status srd_static_gradient(const char *path, const char *const *params, int n_params, srd_gradient **out)
{
    GradOptions o = { .analysis = GRAD_STATIC };
    return api_derive("srd_static_gradient", path, params, n_params, o, static_derive, out);
}

srd_status srd_simulation_gradient(const char *path, const char *const *params, int n_params, int adjoint,
                                   srd_gradient **out)
{
    GradOptions o = { .analysis = GRAD_SIMULATE, .adjoint = adjoint != 0 };
    return api_derive("srd_simulation_gradient", path, params, n_params, o, simulation_derive, out);
}

int srd_gradient_param_count(const srd_gradient *g) { return g ? g->n_params : 0; }
int srd_gradient_probe_count(const srd_gradient *g) { return g ? g->n_probes : 0; }

const char *srd_gradient_param(const srd_gradient *g, int k)
{
    return g && k >= 0 && k < g->n_params ? g->params[k] : NULL;
}

const char *srd_gradient_probe(const srd_gradient *g, int i, int *size)
{
    bool ok = g && i >= 0 && i < g->n_probes;
    if (size)
        *size = ok ? g->size[i] : 0;
    return ok ? g->probes[i] : NULL;
}

const double *srd_gradient_values(const srd_gradient *g, int i, int k)
{
    if (!g || i < 0 || i >= g->n_probes || k < 0 || k >= g->n_params)
        return NULL;
    return &g->values[((size_t)i * g->n_params + k) * WIDTH];
}

const char *srd_gradient_why(const srd_gradient *g, int k)
{
    return g && k >= 0 && k < g->n_params ? g->why[k] : NULL;
}

void srd_gradient_free(srd_gradient *g)
{
    if (!g)
        return;
    for (int k = 0; k < g->n_params; k++) {
        free(g->params[k]);
        free(g->why[k]);
    }
    for (int i = 0; i < g->n_probes; i++)
        free(g->probes[i]);
    free(g->params);
    free(g->why);
    free(g->probes);
    free(g->size);
    free(g->values);
    free(g);
}
