/* optimize.c — elaboration of the `optimize { minimize = ...; vary a, b; ... }` block: its
 * objective (an expression of the probes and params, checked here and kept
 * as a run-time expression), the params it varies (each with a declared range) and NLopt's
 * settings, laid out as srd_model.optimize for `srdc optimize` (compiler/sens/optimize.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "elab.h"
#include "elab_internal.h"

static const char *methods = "lbfgs mma slsqp bobyqa";

void elab_optimize_declared(Elab *e, Stmt *s)
{
    if (e->loop_depth) {
        diag_error(s->loc, "`optimize` must be declared at the top level, not inside `for`");
        return;
    }
    if (e->optimize) {
        Diag *d = diag_error(s->loc, "the model has a second `optimize` block");
        diag_note(d, e->optimize->loc, "the first one is here");
        return;
    }
    e->optimize = s;
}

static int param_index(const srd_model *m, const char *name)
{
    for (int k = 0; k < m->n_params; k++)
        if (!strcmp(m->params[k].name, name))
            return k;
    return -1;
}

/* `vary a, b;`: params (not inputs, not discretisation) with a finite declared range. */
static void vary(Elab *e, const Stmt *s, srd_optimize *o)
{
    for (int i = 0; i < s->n_params; i++) {
        const Ident *id = &s->params[i];
        int k = param_index(e->model, id->name);
        const srd_param *p = k >= 0 ? &e->model->params[k] : NULL;
        if (!p) {
            Diag *d = diag_error(id->loc, "`%s` is not a param of the model", id->name);
            const char *close = elab_closest_param(e->model, id->name);
            if (close)
                diag_hint(d, "did you mean `%s`?", close);
            continue;
        }
        if (p->input) {
            diag_hint(diag_error(id->loc, "`%s` is an input: an optimisation varies params", id->name),
                      "declare it with `param %s = ... in LOW..HIGH;` to search over it", id->name);
            continue;
        }
        if (!isfinite(p->lo) || !isfinite(p->hi)) {
            diag_hint(diag_error(id->loc, "`%s` has no range to search", id->name),
                      "declare its range: `param %s = ... in LOW..HIGH;`", id->name);
            continue;
        }
        o->vary = elab_grow(o->vary, sizeof *o->vary * (size_t)(o->n_vary + 1));
        o->vary[o->n_vary++] = k;
    }
}

/* The probes the objective reads (the simulation's final values, else the static equilibrium's)
 * as unknown values of their dimensions, for checking the objective. */
static bool bind_static_probes(Elab *e, const Stmt *s)
{
    const srd_analysis *a = srd_objective_analysis(e->model);
    if (!a->present || !a->n_probes) {
        Diag *d = diag_error(s->loc, "`optimize` minimises an expression of the probes of the simulate block (their "
                                     "final values) or of the static block, but the model has %s",
                             a->present ? "no probe in that block" : "neither block");
        diag_hint(d, "add `static { probe tip = arm.end; }` and minimise an expression of `tip`");
        return false;
    }
    for (int i = 0; i < a->n_probes; i++) {
        int n;
        Dims dims;
        if (a->probes[i].kind != SRD_PROBE_STATE || !elab_probe_type(&a->probes[i], &n, &dims))
            continue; /* force probes have no derivative yet: unknown names in the objective */
        Value v = value_num(NAN, dims);
        v.n = n;
        v.known = false;
        v.param = a->probes[i].name;
        scope_bind(e, a->probes[i].name, v, s->loc, BIND_LET);
    }
    return true;
}

static void minimize(Elab *e, const Stmt *prop, srd_optimize *o)
{
    Value v = eval_expr(e, prop->value);
    if (v.kind == V_ERR)
        return;
    if (v.kind != V_NUM || v.n != 1) {
        char have[128];
        value_describe(&v, have, sizeof have);
        Diag *d = diag_error(prop->value->loc, "the objective must be a scalar, but this is %s", have);
        diag_hint(d, "for a vector probe, minimise a sum of squares: `(tip.x - 5 cm)^2 + (tip.z - 2 cm)^2`");
        return;
    }
    o->objective = elab_remember_expr(e, prop->value);
}

static void setting(Elab *e, const Stmt *prop, srd_optimize *o)
{
    if (!strcmp(prop->name, "method")) {
        const char *w = prop->value->kind == EX_NAME ? prop->value->str : "";
        if (w[0] && strstr(methods, w) && !strchr(w, ' '))
            o->method = strdup(w);
        else
            diag_hint(diag_error(prop->value->loc, "unknown optimisation method"),
                      "the methods are lbfgs, mma and slsqp (with gradients) and bobyqa (without)");
        return;
    }
    Value v = eval_expr(e, prop->value);
    bool count = !strcmp(prop->name, "max_evaluations");
    if (v.kind != V_NUM || v.n != 1 || !v.known || !(v.v[0] > 0) || (count && v.v[0] != floor(v.v[0]))) {
        if (v.kind != V_ERR)
            diag_error(prop->value->loc, "`%s` must be a positive %s", prop->name, count ? "whole number" : "number");
        return;
    }
    if (count)
        o->max_evaluations = (int)fmin(v.v[0], 1e6);
    else
        o->tolerance = v.v[0];
}

static void block_item(Elab *e, const Stmt *s, srd_optimize *o, bool *has_objective)
{
    if (s->kind == ST_VARY)
        vary(e, s, o);
    else if (s->kind == ST_PROP && !strcmp(s->name, "minimize")) {
        *has_objective = true;
        minimize(e, s, o);
    } else if (s->kind == ST_PROP && (!strcmp(s->name, "method") || !strcmp(s->name, "tolerance") ||
                                      !strcmp(s->name, "max_evaluations")))
        setting(e, s, o);
    else
        diag_hint(diag_error(s->loc, "an `optimize` block holds `minimize = ...;`, `vary ...;`, `method`, "
                                     "`tolerance` and `max_evaluations`"),
                  "write `optimize { minimize = (tip.z - 2 cm)^2; vary E; }`");
}

void elab_optimize(Elab *e)
{
    const Stmt *s = e->optimize;
    if (!s)
        return;
    srd_optimize *o = &e->model->optimize;
    o->objective = -1;
    o->tolerance = 1e-10;
    o->max_evaluations = 200;
    Binding *saved = e->scope;
    bool has_objective = false, probes = bind_static_probes(e, s);
    for (int i = 0; i < s->n_body && probes; i++)
        block_item(e, s->body[i], o, &has_objective);
    e->scope = saved;
    if (probes && !has_objective)
        diag_hint(diag_error(s->loc, "the `optimize` block has no objective"), "add `minimize = (tip.z - 2 cm)^2;`");
    if (probes && has_objective && !o->n_vary && diag_error_count() == 0)
        diag_hint(diag_error(s->loc, "the `optimize` block varies no param"), "add `vary E;`");
    if (!o->method)
        o->method = strdup("lbfgs");
    o->present = o->objective >= 0 && o->n_vary > 0;
}
