/* params.c — params (build-time values: a new one elaborates the model anew) and inputs
 * (signals the kernels read each step) through the C API. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "diag.h"
#include "elab.h"
#include "instance.h"

int srd_param_count(const srd_instance *inst) { return inst ? inst->m->n_params : 0; }

const char *srd_param_name(const srd_instance *inst, int k)
{
    return inst && k >= 0 && k < inst->m->n_params ? inst->m->params[k].name : NULL;
}

const char *srd_param_unit(const srd_instance *inst, int k)
{
    return inst && k >= 0 && k < inst->m->n_params ? inst->m->params[k].unit : NULL;
}

int srd_param_is_input(const srd_instance *inst, int k)
{
    return inst && k >= 0 && k < inst->m->n_params ? inst->m->params[k].input : 0;
}

int srd_param_index(const srd_instance *inst, const char *name)
{
    if (!inst || !name)
        return -1;
    for (int k = 0; k < inst->m->n_params; k++)
        if (!strcmp(inst->m->params[k].name, name))
            return k;
    return -1;
}

/* Index of param or input `name`, or a failure naming the closest one. */
static srd_status find(const srd_instance *inst, const char *name, int *k)
{
    API_CHECK(inst);
    srd_instance *mut = (srd_instance *)inst;
    if (!name)
        return api_fail(mut, SRD_ERR_ARGUMENT, "the name is NULL");
    *k = srd_param_index(inst, name);
    if (*k >= 0)
        return SRD_OK;
    const srd_model *m = inst->m;
    const char **names = srd_xcalloc((size_t)m->n_params + 1, sizeof *names);
    for (int j = 0; j < m->n_params; j++)
        names[j] = m->params[j].name;
    const char *close = diag_closest(name, names, m->n_params);
    free(names);
    if (close)
        return api_fail(mut, SRD_ERR_ARGUMENT, "the model has no param or input `%s`; did you mean `%s`?", name, close);
    return api_fail(mut, SRD_ERR_ARGUMENT, "the model has no param or input `%s`%s", name,
                    m->n_params ? "" : " (it declares none)");
}

srd_status srd_get_param(const srd_instance *inst, const char *name, double *value)
{
    int k;
    srd_status st = find(inst, name, &k);
    if (st == SRD_OK && value)
        *value = inst->s.params[k];
    return st;
}

srd_status srd_get_input(const srd_instance *inst, const char *name, double *value)
{
    return srd_get_param(inst, name, value);
}

srd_status srd_set_input_at(srd_instance *inst, int k, double value)
{
    API_CHECK(inst);
    const srd_model *m = inst->m;
    if (k < 0 || k >= m->n_params)
        return api_fail(inst, SRD_ERR_ARGUMENT, "there is no input %d", k);
    if (!m->params[k].input)
        return api_fail(inst, SRD_ERR_ARGUMENT, "`%s` is a param, fixed when the model is built, not an input\n"
                        "hint: srd_set_param (Model.set_param) builds the model anew with a new value; declare "
                        "`input %s = ...;` for a signal set while it runs", m->params[k].name, m->params[k].name);
    const srd_param *p = &m->params[k];
    if (!isfinite(value))
        return api_fail(inst, SRD_ERR_ARGUMENT, "input `%s` cannot be %g", p->name, value);
    if (value < p->lo || value > p->hi)
        return api_fail(inst, SRD_ERR_ARGUMENT, "%g %s is outside the range of input `%s`, %g to %g %s", value, p->unit,
                        p->name, p->lo, p->hi, p->unit);
    inst->s.params[k] = value;
    return SRD_OK;
}

srd_status srd_set_input(srd_instance *inst, const char *name, double value)
{
    int k;
    srd_status st = find(inst, name, &k);
    return st == SRD_OK ? srd_set_input_at(inst, k, value) : st;
}

/* The overrides with `name` set to value (SI, with its unit so that the front end checks it). */
static char **overrides_with(const srd_instance *inst, const srd_param *p, double value, int *n)
{
    char **o = srd_xcalloc((size_t)inst->n_overrides + 2, sizeof(char *));
    *n = 0;
    size_t len = strlen(p->name);
    for (int k = 0; k < inst->n_overrides; k++)
        if (strncmp(inst->overrides[k], p->name, len) || inst->overrides[k][len] != '=')
            o[(*n)++] = srd_xstrdup(inst->overrides[k]);
    char spec[512];
    elab_format_override(spec, sizeof spec, p, value);
    o[(*n)++] = srd_xstrdup(spec);
    return o;
}

static void free_overrides(char **o, int n)
{
    for (int k = 0; k < n; k++)
        free(o[k]);
    free(o);
}

/* The instance built anew with other overrides; on failure it is left as it was. */
static srd_status rebuild(srd_instance *inst, char **overrides, int n)
{
    srd_instance *fresh = srd_xcalloc(1, sizeof *fresh);
    fresh->path = inst->path;
    fresh->library = inst->library;
    fresh->built = inst->built;
    fresh->overrides = overrides;
    fresh->n_overrides = n;
    srd_status st = api_build(fresh);
    if (st != SRD_OK) {
        api_unbuild(fresh);
        free_overrides(overrides, n);
        free(fresh->message);
        free(fresh);
        return api_fail(inst, st, "%s", srd_last_error());
    }
    /* The simulation and the kernel table point into the struct that holds them: the fresh
     * one's are made again in place. */
    srd_sim_free(&fresh->s);
    api_unbuild(inst);
    free_overrides(inst->overrides, inst->n_overrides);
    free(inst->message);
    fresh->message = NULL;
    *inst = *fresh;
    free(fresh);
    if (inst->have_kernels)
        inst->table = &inst->kt.table;
    return api_start(inst);
}

srd_status srd_set_param(srd_instance *inst, const char *name, double value)
{
    int k;
    srd_status st = find(inst, name, &k);
    if (st != SRD_OK)
        return st;
    const srd_param *p = &inst->m->params[k];
    if (p->input)
        return api_fail(inst, SRD_ERR_ARGUMENT, "`%s` is an input: set it with srd_set_input (Model.set_input)",
                        p->name);
    if (!isfinite(value))
        return api_fail(inst, SRD_ERR_ARGUMENT, "param `%s` cannot be %g", p->name, value);
    int n;
    char **o = overrides_with(inst, p, value, &n);
    return rebuild(inst, o, n);
}
