/* modal_gradient.c — modal sensitivities through the C API: the derivatives of the natural
 * frequencies of a model's `modes` block with respect to every param, as `srdc grad` prints them
 * (compiler/sens/modal.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "diag.h"
#include "instance.h"
#include "sens/modal.h"

struct srd_frequency_gradient {
    int     n_modes, n_params;
    double *freq;       /* n_modes, Hz */
    double *values;     /* [mode][param], Hz per SI unit; NaN where not derived */
    char  **params;
    char  **param_why;  /* per param: NULL when derived */
    char  **mode_why;   /* per mode: NULL when derived */
};

static srd_frequency_gradient *frequency_gradient_new(const ModalPoint *md, const srd_model *m)
{
    srd_frequency_gradient *g = srd_xcalloc(1, sizeof *g);
    g->n_modes = md->count;
    g->n_params = m->n_params;
    g->freq = srd_xcalloc((size_t)g->n_modes + 1, sizeof(double));
    memcpy(g->freq, md->freq, sizeof(double) * (size_t)g->n_modes);
    g->values = srd_xcalloc((size_t)g->n_modes * (size_t)g->n_params + 1, sizeof(double));
    g->params = srd_xcalloc((size_t)g->n_params + 1, sizeof(char *));
    g->param_why = srd_xcalloc((size_t)g->n_params + 1, sizeof(char *));
    g->mode_why = srd_xcalloc((size_t)g->n_modes + 1, sizeof(char *));
    char why[256];
    for (int k = 0; k < g->n_params; k++)
        g->params[k] = srd_xstrdup(m->params[k].name);
    for (int j = 0; j < g->n_modes; j++)
        if (modal_point_why(md, j, why, sizeof why))
            g->mode_why[j] = srd_xstrdup(why);
    return g;
}

/* Every param's derivatives of every mode. */
static void derive_all(srd_frequency_gradient *g, ModalPoint *md, StaticPoint *pt, const GradOptions *o)
{
    double *df = srd_xcalloc((size_t)g->n_modes + 1, sizeof(double));
    for (int k = 0; k < g->n_params; k++) {
        int status = modal_point_derivative(md, pt, o, k, df);
        if (status != STATIC_DERIVED)
            g->param_why[k] = srd_xstrdup(status == -1 ? "it sets the discretisation" : static_point_why(status));
        for (int j = 0; j < g->n_modes; j++)
            g->values[(size_t)j * g->n_params + k] = df[j];
    }
    free(df);
}

/* The point's modes and their derivatives; an exit status. */
static int modes_and_derive(StaticPoint *pt, const GradOptions *o, srd_frequency_gradient **out)
{
    ModalPoint md;
    int status = modal_point_open(&md, pt, o);
    if (status == 0 && md.refused) {
        fprintf(o->errors, "%s: natural frequencies not derived: %s\n", o->file, md.refused);
        status = SRD_EXIT_BAD_INPUT;
    }
    if (status == 0) {
        *out = frequency_gradient_new(&md, pt->m);
        derive_all(*out, &md, pt, o);
    }
    modal_point_close(&md, pt->m->n_sets);
    return status;
}

/* Opens, solves (the static block first for `at = equilibrium`) and derives under the front
 * end's lock; messages into `errors`. */
static srd_status solve_and_derive(GradOptions *o, srd_frequency_gradient **out)
{
    StaticPoint pt;
    int status = api_point_open(&pt, o, "modes");
    bool equilibrium = status == 0 && pt.m->modes.method && !strcmp(pt.m->modes.method, "equilibrium");
    if (equilibrium && srd_static(&pt.s, pt.m->statics.load_steps) != 0) {
        fprintf(o->errors, "%s: the static equilibrium was not found\n", o->file);
        status = SRD_EXIT_NUMERIC;
    }
    if (status == 0)
        status = modes_and_derive(&pt, o, out);
    static_point_close(&pt);
    return api_status_of(status);
}

/* The derivation under api_derive; a failure leaves no result. */
static srd_status modal_derive(GradOptions *o, void *out)
{
    srd_frequency_gradient **result = out;
    *result = NULL;
    srd_status st = solve_and_derive(o, result);
    if (st != SRD_OK) {
        srd_frequency_gradient_free(*result);
        *result = NULL;
    }
    return st;
}

srd_status srd_modal_gradient(const char *path, const char *const *params, int n_params,
                              srd_frequency_gradient **out)
{
    GradOptions o = { .analysis = GRAD_STATIC };
    return api_derive("srd_modal_gradient", path, params, n_params, o, modal_derive, out);
}

int srd_frequency_gradient_mode_count(const srd_frequency_gradient *g) { return g ? g->n_modes : 0; }
int srd_frequency_gradient_param_count(const srd_frequency_gradient *g) { return g ? g->n_params : 0; }

double srd_frequency_gradient_frequency(const srd_frequency_gradient *g, int j)
{
    return g && j >= 0 && j < g->n_modes ? g->freq[j] : NAN;
}

const char *srd_frequency_gradient_param(const srd_frequency_gradient *g, int k)
{
    return g && k >= 0 && k < g->n_params ? g->params[k] : NULL;
}

double srd_frequency_gradient_value(const srd_frequency_gradient *g, int j, int k)
{
    if (!g || j < 0 || j >= g->n_modes || k < 0 || k >= g->n_params)
        return NAN;
    return g->values[(size_t)j * g->n_params + k];
}

const char *srd_frequency_gradient_param_why(const srd_frequency_gradient *g, int k)
{
    return g && k >= 0 && k < g->n_params ? g->param_why[k] : NULL;
}

const char *srd_frequency_gradient_mode_why(const srd_frequency_gradient *g, int j)
{
    return g && j >= 0 && j < g->n_modes ? g->mode_why[j] : NULL;
}

void srd_frequency_gradient_free(srd_frequency_gradient *g)
{
    if (!g)
        return;
    for (int k = 0; k < g->n_params; k++) {
        free(g->params[k]);
        free(g->param_why[k]);
    }
    for (int j = 0; j < g->n_modes; j++)
        free(g->mode_why[j]);
    free(g->params);
    free(g->param_why);
    free(g->mode_why);
    free(g->freq);
    free(g->values);
    free(g);
}
