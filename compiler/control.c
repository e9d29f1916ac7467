/* control.c — elaboration of the `control every P { ... }` block: its period, vars, lets and
 * assignments are checked (names, dimensions) and laid out as srd_model.control; each
 * right-hand side is kept as a run-time expression, which kernels.c compiles like a schedule
 * and the runtime (runtime/control.c) evaluates in order at every sample. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "elab.h"
#include "elab_internal.h"

void elab_control_declared(Elab *e, Stmt *s)
{
    if (e->loop_depth) {
        diag_error(s->loc, "`control` must be declared at the top level, not inside `for`");
        return;
    }
    if (e->control) {
        Diag *d = diag_error(s->loc, "the model has a second `control` block");
        diag_note(d, e->control->loc, "the first one is here");
        diag_hint(d, "one controller runs the model: put every assignment in one block");
        return;
    }
    e->control = s;
}

/* `every P`: a positive time known when the model is built. */
static bool control_period(Elab *e, const Stmt *s, double *period)
{
    if (!s->every) {
        Diag *d = diag_error(s->loc, "`control` needs its sampling period");
        diag_hint(d, "for example `control every 10 ms { ... }`");
        return false;
    }
    Value v = eval_expr(e, s->every);
    if (v.kind == V_ERR)
        return false;
    bool time = v.kind == V_NUM && v.n == 1 && (v.any_dims || dims_eq(v.dims, dims_of(0, 0, 1, 0)));
    if (!time || !v.known || !(v.v[0] > 0)) {
        char desc[128];
        value_describe(&v, desc, sizeof desc);
        Diag *d = !time ? diag_error(s->every->loc, "the control period must be a time, but this is %s", desc)
                : !v.known ? diag_error(s->every->loc, "the control period must be known when the model is built")
                           : diag_error(s->every->loc, "the control period must be positive, but it is %g s", v.v[0]);
        diag_hint(d, "for example `control every 10 ms { ... }`");
        return false;
    }
    *period = v.v[0];
    return true;
}

/* Whether expression x names `name` anywhere (a probe the controller reads). */
static bool mentions(const Expr *x, const char *name)
{
    if (!x)
        return false;
    if (x->kind == EX_NAME && !strcmp(x->str, name))
        return true;
    if (mentions(x->a, name) || mentions(x->b, name) || mentions(x->c, name))
        return true;
    if (x->range && (mentions(x->range->lo, name) || mentions(x->range->hi, name)))
        return true;
    for (int i = 0; i < x->n_args; i++)
        if (mentions(x->args[i], name))
            return true;
    return false;
}

/* Read, or assigned (which is an error worth naming the probe in). */
static bool block_mentions(const Stmt *s, const char *name)
{
    for (int i = 0; i < s->n_body; i++)
        if (mentions(s->body[i]->value, name) || (s->body[i]->kind == ST_ASSIGN && !strcmp(s->body[i]->name, name)))
            return true;
    return false;
}

/* The values of probe p a controller's or an objective's slots hold: a reaction's force and
 * moment, a contact probe's force, a node's position, a DOF's value. */
int elab_objective_probe_width(const srd_probe *p)
{
    if (p->kind == SRD_PROBE_STATE)
        return p->dof >= 0 ? 1 : 3;
    return p->kind == SRD_PROBE_REACTION ? 6 : p->kind == SRD_PROBE_CONTACT ? 3 : 0;
}

/* What probe p gives the controller: components and dimension; false for a motor's torque,
 * whose dimension depends on the joint. A reaction's value is its force (the first three). */
bool elab_probe_type(const srd_probe *p, int *n, Dims *d)
{
    *n = 3;
    switch (p->kind) {
    case SRD_PROBE_STATE:
        *n = p->node >= 0 && p->component < 0 ? 3 : 1;
        *d = p->node < 0 ? DIMLESS : dims_of(1, 0, 0, 0); /* an edge's twist: an angle */
        return true;
    case SRD_PROBE_REACTION:
    case SRD_PROBE_CONTACT: *d = dims_of(1, 1, -2, 0); return true;
    case SRD_PROBE_BODY:
        *d = p->component == SRD_BODY_MOMENTUM ? dims_of(2, 1, -1, 0)
           : p->component == SRD_BODY_OMEGA    ? dims_of(0, 0, -1, 0) : DIMLESS;
        return true;
    case SRD_PROBE_JOINT:
        *d = p->component == SRD_JOINT_FORCE ? dims_of(1, 1, -2, 0) : dims_of(2, 1, -2, 0);
        return p->component != SRD_JOINT_MOTOR;
    }
    return false;
}

int elab_bind_probe(Elab *e, const srd_probe *p, SrcLoc loc)
{
    int n;
    Dims d;
    if (!elab_probe_type(p, &n, &d))
        return 0;
    Value v = value_num(NAN, d);
    v.n = n;
    v.known = false;
    v.param = p->name;
    scope_bind(e, p->name, v, loc, BIND_LET);
    if (p->kind == SRD_PROBE_REACTION) {
        Value *moment = arena_alloc(e->arena, sizeof *moment);
        *moment = v;
        moment->dims = dims_mul(d, dims_of(1, 0, 0, 0)); /* N*m */
        e->scope->moment = moment;
        return 6;
    }
    return n;
}

static int add_slot(srd_control *c, const char *name, int kind, int n, int probe)
{
    c->slots = elab_grow(c->slots, sizeof *c->slots * (size_t)(c->n_slots + 1));
    c->slots[c->n_slots] = (srd_control_slot){ strdup(name), kind, c->n_data, n, probe };
    c->n_data += n;
    c->init = elab_grow(c->init, sizeof *c->init * (size_t)c->n_data);
    for (int k = c->n_data - n; k < c->n_data; k++)
        c->init[k] = 0;
    return c->n_slots++;
}

static int find_slot(const srd_control *c, const char *name)
{
    for (int k = c->n_slots - 1; k >= 0; k--)
        if (!strcmp(c->slots[k].name, name))
            return k;
    return -1;
}

/* The probes of the simulate block the controller reads, bound by name to run-time values. */
static void bind_probes(Elab *e, const Stmt *s, srd_control *c)
{
    const srd_analysis *a = &e->model->simulate;
    for (int i = 0; i < a->n_probes; i++) {
        const srd_probe *p = &a->probes[i];
        if (!block_mentions(s, p->name))
            continue;
        SrcLoc loc = i < 256 ? e->probe_locs[0][i] : s->loc;
        int n = elab_bind_probe(e, p, loc);
        if (!n) {
            Diag *dg = diag_error(loc, "the controller reads probe `%s`, but a motor probe's dimension depends "
                                       "on its joint", p->name);
            diag_hint(dg, "read the joint's angle or position with a probe of its bodies instead");
            continue;
        }
        add_slot(c, p->name, SRD_CONTROL_PROBE, n, i);
    }
}

static void add_step(srd_control *c, int slot, int param, int n, int expr)
{
    c->steps = elab_grow(c->steps, sizeof *c->steps * (size_t)(c->n_steps + 1));
    c->steps[c->n_steps++] = (srd_control_step){ slot, param, n, expr };
}

/* The derivative of var slot k's initial value v along the seeded param (elab_tangent.h). */
static void record_init_tangent(Elab *e, const srd_control *c, int k, const Value *v)
{
    e->control_dinit = elab_grow(e->control_dinit, sizeof(double) * (size_t)c->n_data);
    for (int i = e->control_dinit_n; i < c->n_data; i++)
        e->control_dinit[i] = 0;
    e->control_dinit_n = c->n_data;
    for (int i = 0; i < v->n; i++)
        e->control_dinit[c->slots[k].first + i] = value_dual(v, i).d;
}

/* `var name = init;`: state kept between samples, starting at a value known when the model is
 * built. */
static void control_var(Elab *e, Stmt *s, srd_control *c)
{
    Value v = eval_expr(e, s->value);
    if (!elab_check_new_name(e, s->name, s->name_loc))
        return;
    if (eval_require_num(e, v, s->value) && !v.known) {
        Diag *d = diag_error(s->value->loc, "a var's initial value must be known when the model is built, but it "
                             "depends on `%s`", v.param ? v.param : "a run-time value");
        diag_hint(d, "start it at a constant and assign it in the block: `var %s = 0; %s = ...;`", s->name, s->name);
        v = value_error();
    }
    if (v.kind != V_NUM) { /* declared all the same: its uses add no errors */
        scope_bind(e, s->name, value_error(), s->name_loc, BIND_LET);
        return;
    }
    int k = add_slot(c, s->name, SRD_CONTROL_VAR, v.n, -1);
    memcpy(&c->init[c->slots[k].first], v.v, sizeof(double) * (size_t)v.n);
    record_init_tangent(e, c, k, &v);
    v.known = false;
    v.param = s->name;
    scope_bind(e, s->name, v, s->name_loc, BIND_LET);
}

/* `let name = value;`: a local of each sample, in a slot that a step fills in its turn. Even
 * one known when the model is built is not captured as a constant: it may depend on a param,
 * which a built simulator's -p changes without compiling anew. */
static void control_let(Elab *e, Stmt *s, srd_control *c)
{
    Value v = eval_expr(e, s->value);
    if (!elab_check_new_name(e, s->name, s->name_loc))
        return;
    if (!eval_require_num(e, v, s->value)) {
        scope_bind(e, s->name, value_error(), s->name_loc, BIND_LET);
        return;
    }
    int k = add_slot(c, s->name, SRD_CONTROL_LET, v.n, -1);
    add_step(c, k, -1, v.n, elab_remember_expr(e, s->value));
    v.known = false;
    v.param = v.param ? v.param : s->name;
    scope_bind(e, s->name, v, s->name_loc, BIND_LET);
}

/* What the left side of an assignment is: a var's slot (*slot) or an input (*param), with the
 * value it must have; false after reporting anything else. */
static bool assign_target(Elab *e, const Stmt *s, const srd_control *c, int *slot, int *param, Value *want)
{
    *slot = find_slot(c, s->name);
    *param = -1;
    for (int k = 0; *slot < 0 && k < e->model->n_params; k++)
        if (!strcmp(e->model->params[k].name, s->name))
            *param = k;
    Binding *b = scope_lookup(e, s->name);
    if ((*slot >= 0 && c->slots[*slot].kind == SRD_CONTROL_VAR) || (*param >= 0 && e->model->params[*param].input)) {
        *want = b->val;
        return true;
    }
    Diag *d;
    if (*slot >= 0 && c->slots[*slot].kind == SRD_CONTROL_PROBE) {
        d = diag_error(s->name_loc, "`%s` is a probe: the controller reads it but cannot set it", s->name);
    } else if (*param >= 0) {
        d = diag_error(s->name_loc, "`%s` is a param, fixed while the model runs", s->name);
        diag_hint(d, "declare it with `input` instead of `param` to set it from the controller");
        return false;
    } else if (b && b->kind == BIND_BUILTIN) {
        d = diag_error(s->name_loc, "`%s` is a built-in name and cannot be assigned", s->name);
    } else if (b || *slot >= 0) {
        d = diag_error(s->name_loc, "`%s` is a `let` and cannot be assigned", s->name);
    } else {
        d = diag_error(s->name_loc, "unknown name `%s`", s->name);
    }
    diag_hint(d, "a controller assigns its `var`s and the model's `input`s");
    return false;
}

/* `name = value;`: the value must have the dimension and size of what it is assigned to. */
static void control_assign(Elab *e, Stmt *s, srd_control *c)
{
    int slot, param;
    Value want;
    bool ok = assign_target(e, s, c, &slot, &param, &want);
    Value v = eval_expr(e, s->value);
    if (!ok || !eval_require_num(e, v, s->value))
        return;
    if (v.n != want.n || !(v.any_dims || dims_eq(v.dims, want.dims))) {
        char have[128], need[128], unit[64];
        value_describe(&v, have, sizeof have);
        value_describe(&want, need, sizeof need);
        dims_format(want.dims, unit, sizeof unit);
        Diag *d = diag_error(s->value->loc, "`%s` is %s, but this value is %s", s->name, need, have);
        diag_hint(d, "the value assigned must have the dimension of `%s` (%s)", s->name, unit);
        return;
    }
    add_step(c, slot, param, v.n, elab_remember_expr(e, s->value));
}

void elab_control(Elab *e)
{
    Stmt *s = (Stmt *)e->control;
    srd_control *c = &e->model->control;
    if (!s || !control_period(e, s, &c->period))
        return;
    /* `period` is a slot too, not a captured constant: it may depend on a param. */
    Binding *saved = e->scope;
    Value period = value_num(NAN, dims_of(0, 0, 1, 0));
    period.known = false;
    period.param = "period";
    scope_bind(e, "period", period, s->loc, BIND_BUILTIN);
    int slot = add_slot(c, "period", SRD_CONTROL_PERIOD, 1, -1);
    c->init[c->slots[slot].first] = c->period;
    bind_probes(e, s, c);
    e->unknown_name_hint = "a controller reads t, period, params, inputs, its vars and lets, and the simulate "
                           "block's probes by name";
    e->control_depth = 1;
    for (int i = 0; i < s->n_body; i++) {
        Stmt *st = s->body[i];
        if (st->kind == ST_VAR)
            control_var(e, st, c);
        else if (st->kind == ST_LET)
            control_let(e, st, c);
        else
            control_assign(e, st, c);
    }
    e->unknown_name_hint = NULL;
    e->control_depth = 0;
    e->scope = saved;
    c->present = 1;
}
