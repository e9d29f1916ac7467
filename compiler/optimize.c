/* optimize.c — elaboration of the `optimize { minimize = ...; vary a, b; ... }` block: its
 * objective (an expression of the probes and params, checked here and kept
 * as a run-time expression), the params it varies (each with a declared range) and NLopt's
 * settings, laid out as srd_model.optimize for `srdc optimize` (compiler/sens/optimize.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "diag.h"
#include "elab.h"
#include "elab_internal.h"
#include "sources.h"
#include "table.h"

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

/* `srdc grad --objective`: an optimize block that states an objective to derive, varying none. */
static bool objective_only;

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
    for (int i = 0; i < a->n_probes; i++)
        if (elab_objective_probe_width(&a->probes[i])) /* a body's or a joint's probes have no derivative yet */
            elab_bind_probe(e, &a->probes[i], s->loc);
    return true;
}

/* ---- the terms of an objective: integral(g), track(h, "file.csv"), track(rod.z, "file.csv") ---- */

static srd_objective_term *add_term(Elab *e, Expr *call, int kind)
{
    srd_optimize *o = e->objective;
    o->terms = elab_grow(o->terms, sizeof *o->terms * (size_t)(o->n_terms + 1));
    srd_objective_term *t = &o->terms[o->n_terms++];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->call = elab_remember_expr(e, call);
    t->expr = -1;
    t->object = -1;
    return t;
}

/* The argument of a term, a scalar of the probes (at one step), t and the params. */
static Value term_argument(Elab *e, Expr *arg, const char *what)
{
    Binding *saved = e->scope;
    Value t = value_num(NAN, dims_of(0, 0, 1, 0));
    t.known = false;
    t.param = "t";
    scope_bind(e, "t", t, arg->loc, BIND_BUILTIN);
    e->in_term = true;
    Value v = eval_expr(e, arg);
    e->in_term = false;
    e->scope = saved;
    if (v.kind == V_ERR)
        return v;
    if (v.kind != V_NUM || v.n != 1) {
        char have[128];
        value_describe(&v, have, sizeof have);
        Diag *d = diag_error(arg->loc, "%s must be a scalar, but this is %s", what, have);
        diag_hint(d, "take one component of a node probe: `tip.z`");
        return value_error();
    }
    return v;
}

static bool needs_simulation(Elab *e, Expr *x, const char *what)
{
    if (e->model->simulate.present)
        return true;
    Diag *d = diag_error(x->loc, "%s runs over a simulation's steps, but the model has no `simulate` block", what);
    diag_hint(d, "add `simulate { ...; probe tip = arm.end; }`; for a static block, track a curve along a rod: "
                 "`track(arm.z, \"deflection.csv\")`");
    return false;
}

/* What the measurements' file says of itself: the first field of its header line (empty when
 * it has none) and the number of fields on its first row of data. */
static void file_shape(const char *path, char *first, size_t first_n, int *columns)
{
    FILE *f = sources_open(path);
    char line[512];
    first[0] = 0;
    *columns = 0;
    bool header = false;
    while (f && fgets(line, sizeof line, f)) {
        char *p = line + strspn(line, " \t");
        if (*p == '#' || *p == '\n' || *p == '\r' || *p == 0)
            continue;
        char *end;
        strtod(p, &end);
        if (end == p && !header) {
            header = true;
            size_t n = strcspn(p, ",; \t\r\n");
            snprintf(first, first_n, "%.*s", (int)(n < first_n ? n : first_n - 1), p);
            continue;
        }
        for (char *q = p; *q;) {
            strtod(q, &end);
            if (end == q)
                break;
            (*columns)++;
            q = end + strspn(end, ",; \t");
        }
        break;
    }
    if (f)
        fclose(f);
}

/* The measurements of track(..., "file.csv"): two columns, the first increasing, named (when a
 * header names it) as the track reads it: t for a time, s for a curve. */
static Table *measurements(Elab *e, Expr *x, bool curve)
{
    (void)e;
    if (x->args[1]->kind != EX_STR) {
        Diag *d = diag_error(x->args[1]->loc, "`track` takes the measurements' file as a string second");
        diag_hint(d, "write `track(tip.z, \"measured.csv\")`");
        return NULL;
    }
    char path[1024], err[1200];
    table_path(src_path(x->loc.file), x->args[1]->str, path, sizeof path);
    Table *t = malloc(sizeof *t);
    if (!t)
        abort();
    if (!table_read(path, t, err, sizeof err)) {
        /* table_read speaks of `table(...)`'s files: these are measurements. */
        const char *word = strstr(err, "table `");
        Diag *d = word ? diag_error(x->args[1]->loc, "%.*smeasurements%s", (int)(word - err), err, word + 5)
                       : diag_error(x->args[1]->loc, "%s", err);
        diag_hint(d, "the file holds two columns, time in s (or arc-length fraction s along a rod) and the measured "
                     "value in SI units, after at most one header line");
        free(t);
        return NULL;
    }
    char first[64];
    int columns;
    file_shape(path, first, sizeof first, &columns);
    bool time_named = !strcmp(first, "t") || !strcmp(first, "time");
    if (columns != 2 || (curve && time_named) || (!curve && !strcmp(first, "s"))) {
        Diag *d = columns != 2 ? diag_error(x->args[1]->loc, "the measurements `%s` have %d columns, but `track` reads "
                                                             "two", x->args[1]->str, columns)
                               : diag_error(x->args[1]->loc, "the measurements `%s` are over `%s`, but this tracks %s",
                                            x->args[1]->str, first, curve ? "a curve along a rod (over s)"
                                                                          : "a value over time (t)");
        if (columns != 2)
            diag_hint(d, "keep two columns, %s and the measured value: one file per tracked value",
                      curve ? "the arc-length fraction s" : "the time t");
        else
            diag_hint(d, curve ? "a curve's file has the arc-length fraction s and the value: `s,z` rows"
                           : "a time series' file has the time in s and the value: `t,z` rows; to follow a rod's "
                             "curve, track the rod: `track(arm.z, \"curve.csv\")`");
        free(t);
        return NULL;
    }
    return t;
}

static void keep_rows(srd_objective_term *term, const Table *t)
{
    term->n_rows = t->n;
    term->x = malloc(sizeof(double) * (size_t)t->n);
    term->y = malloc(sizeof(double) * (size_t)t->n);
    if (!term->x || !term->y)
        abort();
    memcpy(term->x, t->x, sizeof(double) * (size_t)t->n);
    memcpy(term->y, t->y, sizeof(double) * (size_t)t->n);
}

/* The rod and component of `track(arm.z, ...)`: -1 when the argument is no such thing (then it is
 * an expression of probes). */
static int curve_of(Elab *e, const Expr *arg, int *component)
{
    if (arg->kind != EX_MEMBER || arg->has_args || !arg->a || arg->a->kind != EX_NAME || scope_lookup(e, arg->a->str))
        return -1;
    int o = elab_find_object(e, arg->a->str);
    static const char *axes[3] = { "x", "y", "z" };
    for (int c = 0; c < 3 && o >= 0; c++)
        if (!strcmp(arg->str, axes[c])) {
            *component = c;
            return o;
        }
    return -1;
}

static Value track_curve(Elab *e, Expr *x, int o, int component)
{
    const ElabObj *ob = &e->objs.a[o];
    if (ob->broken)
        return value_error();
    if (ob->kind != SRD_OBJ_ROD) {
        Diag *d = diag_error(x->args[0]->loc, "`track` follows a curve along a rod, but `%s` is not a rod", ob->name);
        diag_hint(d, "track a rod's coordinate, `track(arm.z, \"curve.csv\")`, or a probe's over time");
        return value_error();
    }
    Table *t = measurements(e, x, true);
    if (!t)
        return value_error();
    for (int i = 0; i < t->n; i++)
        if (!(t->x[i] >= 0 && t->x[i] <= 1)) {
            Diag *d = diag_error(x->args[1]->loc, "the measured curve's arc-length fraction %g (row %d) is outside 0..1",
                                 t->x[i], i + 1);
            diag_hint(d, "the first column is s, the fraction of `%s`'s length from its start", ob->name);
            free(t);
            return value_error();
        }
    srd_objective_term *term = add_term(e, x, SRD_TERM_TRACK_CURVE);
    keep_rows(term, t);
    free(t);
    term->object = o;
    term->component = component;
    term->s = malloc(sizeof(double) * (size_t)ob->n_nodes);
    if (!term->s)
        abort();
    memcpy(term->s, ob->s, sizeof(double) * (size_t)ob->n_nodes);
    Value r = value_num(NAN, dims_of(2, 0, 0, 0));
    r.known = false;
    r.param = "track";
    return r;
}

static Value track_time(Elab *e, Expr *x)
{
    if (!needs_simulation(e, x, "`track` of a probe"))
        return value_error();
    Value v = term_argument(e, x->args[0], "the tracked value");
    if (v.kind == V_ERR)
        return v;
    Table *t = measurements(e, x, false);
    if (!t)
        return value_error();
    double end = e->model->simulate.duration;
    if (t->x[0] < 0 || t->x[t->n - 1] > end * (1 + 1e-12)) {
        Diag *d = diag_error(x->args[1]->loc, "the measurements run from t = %g s to %g s, outside the simulation's "
                                              "0 s to %g s", t->x[0], t->x[t->n - 1], end);
        diag_hint(d, "keep the rows whose times the simulation covers, or lengthen its `duration`");
        free(t);
        return value_error();
    }
    srd_objective_term *term = add_term(e, x, SRD_TERM_TRACK_TIME);
    term->expr = elab_remember_expr(e, x->args[0]);
    keep_rows(term, t);
    free(t);
    Value r = value_num(NAN, v.any_dims ? DIMLESS : dims_pow(v.dims, 2));
    r.any_dims = v.any_dims;
    r.known = false;
    r.param = "track";
    return r;
}

static Value integral(Elab *e, Expr *x)
{
    if (!needs_simulation(e, x, "`integral`"))
        return value_error();
    Value v = term_argument(e, x->args[0], "the integrand");
    if (v.kind == V_ERR)
        return v;
    srd_objective_term *term = add_term(e, x, SRD_TERM_INTEGRAL);
    term->expr = elab_remember_expr(e, x->args[0]);
    Value r = value_num(NAN, v.any_dims ? dims_of(0, 0, 1, 0) : dims_mul(v.dims, dims_of(0, 0, 1, 0)));
    r.known = false;
    r.param = "integral";
    return r;
}

Value elab_objective_call(Elab *e, Expr *x)
{
    bool is_integral = !strcmp(x->str, "integral");
    const char *example = is_integral ? "integral((tip.z - 1 cm)^2) / (1 cm^2 * 1 s)"
                                      : "track(tip.z, \"measured.csv\") / (1 mm)^2";
    if (!e->objective || e->in_term || e->fn_depth) {
        Diag *d = diag_error(x->loc, "`%s` is a term of an objective: it belongs in an `optimize` block's `minimize`%s",
                             x->str, !e->objective ? "" : e->in_term ? ", not inside another term" : ", not in a function");
        diag_hint(d, "write `optimize { minimize = %s; vary ...; }`", example);
        return value_error();
    }
    int want = is_integral ? 1 : 2;
    if (x->n_args != want) {
        Diag *d = diag_error(x->loc, "`%s` takes %d argument%s, but %d %s given", x->str, want, want == 1 ? "" : "s",
                             x->n_args, x->n_args == 1 ? "was" : "were");
        diag_hint(d, "write `%s`", example);
        return value_error();
    }
    if (is_integral)
        return integral(e, x);
    int component = -1, o = curve_of(e, x->args[0], &component);
    return o >= 0 ? track_curve(e, x, o, component) : track_time(e, x);
}

static void minimize(Elab *e, const Stmt *prop, srd_optimize *o)
{
    e->objective = o;
    Value v = eval_expr(e, prop->value);
    e->objective = NULL;
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
    if (probes && has_objective && !o->n_vary && !objective_only && diag_error_count() == 0)
        diag_hint(diag_error(s->loc, "the `optimize` block varies no param"), "add `vary E;`");
    if (!o->method)
        o->method = strdup("lbfgs");
    o->present = o->objective >= 0 && (o->n_vary > 0 || objective_only);
}

void elab_objective_only(bool on) { objective_only = on; }
