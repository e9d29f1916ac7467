/* eval.c — evaluates expressions to values with physical dimensions. Values that depend on
 * time, arc length or the stencil's DOFs are "unknown" but still carry dimensions, so the
 * same code checks run-time expressions (actuation, loads, user energies) and computes
 * compile-time ones (geometry, materials). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elab.h"
#include "table.h"
#include "vec3.h"

#define PI 3.14159265358979323846

Value value_error(void)
{
    Value v;
    memset(&v, 0, sizeof v);
    v.kind = V_ERR;
    return v;
}

Value value_num(double x, Dims d)
{
    Value v;
    memset(&v, 0, sizeof v);
    v.kind = V_NUM;
    v.n = 1;
    v.v[0] = x;
    v.dims = d;
    v.known = true;
    return v;
}

Value value_of_dual(Dual x, Dims d, const char *param)
{
    Value v = value_num(x.v, d);
    v.dv[0] = x.d;
    v.param = x.dep ? param : NULL;
    return v;
}

Dual value_dual(const Value *v, int c)
{
    return (Dual){ v->v[c], v->dv[c], v->param != NULL };
}

void eval_note_switch(Elab *e, double g, double dg)
{
    if (dg != 0 && fabs(g) <= e->seed_reach * fabs(dg))
        e->tan_switch = true;
}

static Value value_unknown(int n, Dims d, const char *why)
{
    Value v = value_num(NAN, d);
    v.n = n;
    for (int i = 0; i < n; i++)
        v.v[i] = NAN;
    v.known = false;
    v.param = why;
    return v;
}

void value_describe(const Value *v, char *buf, size_t n)
{
    char d[96];
    switch (v->kind) {
    case V_NUM:
        if (v->any_dims) {
            /* zero, or a value whose dimension is not fixed yet (an element parameter) */
            if (v->n == 1)
                snprintf(buf, n, "a scalar");
            else
                snprintf(buf, n, "a %d-vector", v->n);
            return;
        }
        dims_describe(v->dims, d, sizeof d);
        if (v->n == 1)
            snprintf(buf, n, "%s", d);
        else if (v->n == 9)
            snprintf(buf, n, "a 3x3 matrix of %s", d + 2);
        else
            snprintf(buf, n, "a %d-vector of %s", v->n, d + (d[1] == 'n' ? 3 : 2));
        return;
    case V_STR: snprintf(buf, n, "a string"); return;
    case V_WORD: snprintf(buf, n, "the word `%s`", v->str); return;
    case V_OBJ: snprintf(buf, n, "an object"); return;
    case V_MATERIAL: snprintf(buf, n, "a material"); return;
    case V_SEL: {
        static const char *k[] = { "node", "edge", "triangle", "hinge" };
        snprintf(buf, n, "a selection of %d %s%s", v->sel->n, k[v->sel->kind], v->sel->n == 1 ? "" : "s");
        return;
    }
    case V_GEOM: snprintf(buf, n, "a %s geometry", v->geom->fn); return;
    case V_SECTION: snprintf(buf, n, "a cross-section"); return;
    case V_STENCIL: snprintf(buf, n, "a stencil %s", v->str); return;
    case V_ERR: snprintf(buf, n, "an invalid value"); return;
    }
}

static bool require_num(Elab *e, Value v, Expr *x);

/* ---- scopes ---- */

/* Puts the n bindings from `from` down into t, oldest first, so that the newest of a name wins. */
static void put_oldest_first(NameTable *t, Binding *from, int n)
{
    Binding **chain = malloc(sizeof *chain * (size_t)(n + 1));
    if (!chain)
        abort();
    for (int k = 0; k < n; k++, from = from->next)
        chain[k] = from;
    while (n > 0)
        n--, names_put(t, chain[n]->name, chain[n], false);
    free(chain);
}

/* Brings global_names up to date with e->globals: the new bindings since global_top are added;
 * if globals left that chain, it is rebuilt. */
static void index_globals(Elab *e)
{
    if (e->global_top == e->globals)
        return;
    int n = 0;
    Binding *b = e->globals;
    for (; b && b != e->global_top; b = b->next)
        n++;
    if (!b) /* not an extension of the indexed chain: start over */
        names_clear(&e->global_names);
    put_oldest_first(&e->global_names, e->globals, n);
    e->global_top = e->globals;
}

/* From this many local bindings on, they are found by hash too: a loop body of 20,000 lets
 * repeated 30 times took 10 s searching them in order. */
enum { LOCALS_INDEXED_FROM = 64 };

/* Whether lookups take the locals' index (true when the locals are many), brought up to date:
 * the bindings since local_head are added when the chain extends the indexed one, else a long
 * chain is indexed anew. A short chain (a function's arguments) is searched in order and leaves
 * the index alone, so a body of many lets that calls functions keeps its index across calls. */
static bool index_locals(Elab *e)
{
    int n = 0;
    Binding *b = e->scope;
    for (; b && b != e->local_head && b != e->global_top && n <= LOCALS_INDEXED_FROM; b = b->next)
        n++;
    if (e->local_head && b == e->local_head && e->global_top == e->local_base) {
        put_oldest_first(&e->local_names, e->scope, n);
    } else if (!b || b == e->global_top) {
        return false; /* few: searched in order */
    } else {
        for (; b && b != e->global_top; b = b->next)
            n++;
        e->locals_reach_top = b != NULL;
        names_clear(&e->local_names);
        put_oldest_first(&e->local_names, e->scope, n);
    }
    e->local_head = e->scope;
    e->local_base = e->global_top;
    return true;
}

/* Local bindings (arguments, loop variables, lets in a body) are searched in order while they
 * are few, by hash when they are many; the globals below them are found by hash. */
Binding *scope_lookup(Elab *e, const char *name)
{
    index_globals(e);
    if (index_locals(e)) {
        Binding *b = names_get(&e->local_names, name);
        return b || !e->locals_reach_top ? b : names_get(&e->global_names, name);
    }
    for (Binding *b = e->scope; b; b = b->next) {
        if (b == e->global_top)
            return names_get(&e->global_names, name);
        if (!strcmp(b->name, name))
            return b;
    }
    return NULL;
}

void scope_bind(Elab *e, const char *name, Value v, SrcLoc loc, int kind)
{
    Binding *b = arena_alloc(e->arena, sizeof *b);
    b->name = name;
    b->val = v;
    b->loc = loc;
    b->kind = kind;
    b->moment = NULL;
    b->next = e->scope;
    e->scope = b;
}

/* Indices are stored as index + 1, so that 0 (NULL) means absent. */
static void *as_entry(int i) { return (void *)(intptr_t)(i + 1); }
static int   entry_index(void *p) { return (int)(intptr_t)p - 1; }

const Decl *elab_find_decl(Elab *e, const char *name)
{
    for (; e->decls_indexed < e->decls.n; e->decls_indexed++)
        names_put(&e->decl_names, e->decls.a[e->decls_indexed].stmt->name, as_entry(e->decls_indexed), true);
    int i = entry_index(names_get(&e->decl_names, name));
    return i >= 0 ? &e->decls.a[i] : NULL;
}

int elab_find_object(Elab *e, const char *name)
{
    for (; e->objs_indexed < e->objs.n; e->objs_indexed++)
        names_put(&e->obj_names, e->objs.a[e->objs_indexed].name, as_entry(e->objs_indexed), true);
    return entry_index(names_get(&e->obj_names, name));
}

int elab_find_material(Elab *e, const char *name)
{
    for (; e->mats_indexed < e->mats.n; e->mats_indexed++)
        names_put(&e->mat_names, e->mats.a[e->mats_indexed].name, as_entry(e->mats_indexed), true);
    return entry_index(names_get(&e->mat_names, name));
}

static void free_memo(Elab *e);

void elab_free_names(Elab *e)
{
    free_memo(e);
    names_free(&e->global_names);
    names_free(&e->local_names);
    names_free(&e->obj_names);
    names_free(&e->mat_names);
    names_free(&e->decl_names);
}

static int find_object(Elab *e, const char *name) { return elab_find_object(e, name); }
static int find_material(Elab *e, const char *name) { return elab_find_material(e, name); }

/* Names visible here, for "did you mean" hints. */
static int visible_names(Elab *e, const char **out, int max)
{
    int n = 0;
    for (Binding *b = e->scope; b && n < max; b = b->next)
        out[n++] = b->name;
    for (int i = 0; i < e->objs.n && n < max; i++)
        out[n++] = e->objs.a[i].name;
    for (int i = 0; i < e->mats.n && n < max; i++)
        out[n++] = e->mats.a[i].name;
    for (int i = 0; i < e->decls.n && n < max; i++)
        out[n++] = e->decls.a[i].stmt->name;
    return n;
}

static void hint_closest_name(Elab *e, Diag *d, const char *name)
{
    if (!d) /* the same error was reported already (a loop body): no hint to look for */
        return;
    const char *names[512];
    int n = visible_names(e, names, 512);
    const char *close = diag_closest(name, names, n);
    if (close)
        diag_hint(d, "did you mean `%s`?", close);
    else if (e->unknown_name_hint)
        diag_hint(d, "%s", e->unknown_name_hint);
}

/* A number is needed: explain why this value is not one. */
bool eval_require_num(Elab *e, Value v, Expr *x)
{
    return require_num(e, v, x);
}

static bool require_num(Elab *e, Value v, Expr *x)
{
    if (v.kind == V_NUM)
        return true;
    if (v.kind == V_ERR)
        return false;
    if (v.kind == V_WORD && x->kind == EX_NAME) {
        Diag *d = diag_error(x->loc, "unknown name `%s`", v.str);
        hint_closest_name(e, d, v.str);
        return false;
    }
    char desc[128];
    value_describe(&v, desc, sizeof desc);
    diag_error(x->loc, "expected a number here, but this is %s", desc);
    return false;
}

static Value merge_meta(Value r, const Value *a, const Value *b)
{
    r.known = a->known && (!b || b->known);
    r.param = a->param ? a->param : b ? b->param : NULL;
    if (!r.known)
        for (int i = 0; i < r.n; i++)
            r.v[i] = NAN;
    return r;
}

static void describe_pair(const Value *a, const Value *b, char *da, char *db, size_t n)
{
    value_describe(a, da, n);
    value_describe(b, db, n);
}

/* The dimension both operands of + - < == ... share, or an error. */
static bool same_dims(const Value *a, const Value *b, Dims *out)
{
    if (a->any_dims) {
        *out = b->dims;
        return true;
    }
    if (b->any_dims || dims_eq(a->dims, b->dims)) {
        *out = a->dims;
        return true;
    }
    return false;
}

static Value eval_add(Expr *x, Value a, Value b)
{
    char da[128], db[128];
    Dims d;
    if (a.n != b.n) {
        describe_pair(&a, &b, da, db, sizeof da);
        diag_error(x->loc, "cannot %s %s and %s", x->op == OP_ADD ? "add" : "subtract", da, db);
        return value_error();
    }
    if (!same_dims(&a, &b, &d)) {
        describe_pair(&a, &b, da, db, sizeof da);
        diag_error(x->loc, "cannot %s %s and %s", x->op == OP_ADD ? "add" : "subtract", da, db);
        return value_error();
    }
    Value r = value_num(0, d);
    r.n = a.n;
    for (int i = 0; i < a.n; i++) {
        r.v[i] = x->op == OP_ADD ? a.v[i] + b.v[i] : a.v[i] - b.v[i];
        r.dv[i] = x->op == OP_ADD ? a.dv[i] + b.dv[i] : a.dv[i] - b.dv[i];
    }
    /* Literal zeros stay free of dimension; so do sums of the free parameters an energy's body
     * is checked with (unknown values), whose dimensions only a caller fixes. */
    r.any_dims = a.any_dims && b.any_dims && ((r.n == 1 && r.v[0] == 0) || !a.known || !b.known);
    return merge_meta(r, &a, &b);
}

static Value eval_mul(Elab *e, Expr *x, Value a, Value b)
{
    (void)e;
    if (a.n > 1 && b.n > 1) {
        Diag *d = diag_error(x->loc, "cannot %s two vectors with `%s`", x->op == OP_MUL ? "multiply" : "divide",
                             binop_name(x->op));
        diag_hint(d, "use dot(a, b) or cross(a, b)");
        return value_error();
    }
    if (x->op == OP_DIV && b.n > 1) {
        diag_error(x->loc, "cannot divide by a vector");
        return value_error();
    }
    if (x->op == OP_DIV && b.known && b.v[0] == 0) {
        diag_error(x->b->loc, "division by zero");
        return value_error();
    }
    Value r = value_num(0, x->op == OP_MUL ? dims_mul(a.dims, b.dims) : dims_div(a.dims, b.dims));
    r.n = a.n > b.n ? a.n : b.n;
    /* Zero, and parameters whose dimension is not fixed yet, stay dimension-free. */
    r.any_dims = a.any_dims || b.any_dims;
    for (int i = 0; i < r.n; i++) {
        int ia = a.n > 1 ? i : 0, ib = b.n > 1 ? i : 0;
        double av = a.v[ia], bv = b.v[ib], da = a.dv[ia], db = b.dv[ib];
        r.v[i] = x->op == OP_MUL ? av * bv : av / bv;
        r.dv[i] = x->op == OP_MUL ? da * bv + av * db : (da - r.v[i] * db) / bv;
    }
    return merge_meta(r, &a, &b);
}

/* d(a^b) = b a^(b-1) da + a^b ln(a) db (the second term only where b moves, so that a
 * negative base to a constant power keeps its derivative). */
static double pow_tangent(const Value *a, const Value *b, double r)
{
    double d = a->dv[0] != 0 ? b->v[0] * pow(a->v[0], b->v[0] - 1) * a->dv[0] : 0;
    return b->dv[0] != 0 ? d + r * log(a->v[0]) * b->dv[0] : d;
}

static Value eval_pow(Elab *e, Expr *x, Value a, Value b)
{
    (void)e;
    char db[128];
    if (b.n != 1 || a.n != 1) {
        diag_error(x->loc, "`^` needs scalars; use dot() or norm() for vectors");
        return value_error();
    }
    if (!b.any_dims && !dims_is_dimless(b.dims)) {
        value_describe(&b, db, sizeof db);
        diag_error(x->b->loc, "an exponent must be a dimensionless number, but this is %s", db);
        return value_error();
    }
    Dims d = DIMLESS;
    if (a.any_dims) {
        Value r = value_num(pow(a.v[0], b.v[0]), d);
        r.dv[0] = pow_tangent(&a, &b, r.v[0]);
        r.any_dims = true;
        return merge_meta(r, &a, &b);
    }
    if (!dims_is_dimless(a.dims)) {
        double p = b.v[0];
        if (!b.known || p != floor(p) || fabs(p) > 12) {
            diag_error(x->b->loc, "a quantity with a dimension can only be raised to a constant integer power");
            return value_error();
        }
        d = dims_pow(a.dims, (int)p);
    }
    Value r = value_num(pow(a.v[0], b.v[0]), d);
    r.dv[0] = pow_tangent(&a, &b, r.v[0]);
    return merge_meta(r, &a, &b);
}

static Value eval_compare(Elab *e, Expr *x, Value a, Value b)
{
    char da[128], db[128];
    Dims d;
    if (a.n != 1 || b.n != 1) {
        diag_error(x->loc, "`%s` compares scalars, not vectors", binop_name(x->op));
        return value_error();
    }
    if (x->op == OP_AND || x->op == OP_OR) {
        Value r = value_num(x->op == OP_AND ? (a.v[0] != 0 && b.v[0] != 0) : (a.v[0] != 0 || b.v[0] != 0), DIMLESS);
        return merge_meta(r, &a, &b);
    }
    if (!same_dims(&a, &b, &d)) {
        describe_pair(&a, &b, da, db, sizeof da);
        Diag *dg = diag_error(x->loc, "cannot compare %s with %s", da, db);
        if (dims_is_dimless(b.dims) || dims_is_dimless(a.dims))
            diag_hint(dg, "give the number a unit, for example `1 cm`");
        return value_error();
    }
    /* Geometry is generated in floating point: x <= 1 cm must hold for a node placed at
     * 0.010000000000000002 m. Comparisons allow 1e-9 relative. */
    double p = a.v[0], q = b.v[0];
    double tol = 1e-9 * fmax(fabs(p), fabs(q)) + 1e-15;
    eval_note_switch(e, p - q, a.dv[0] - b.dv[0]);
    bool res = false;
    switch (x->op) {
    case OP_LT: res = p < q - tol; break;
    case OP_LE: res = p <= q + tol; break;
    case OP_GT: res = p > q + tol; break;
    case OP_GE: res = p >= q - tol; break;
    case OP_EQ: res = fabs(p - q) <= tol; break;
    case OP_NE: res = fabs(p - q) > tol; break;
    default: break;
    }
    return merge_meta(value_num(res, DIMLESS), &a, &b);
}

/* `15.7/m` divides by a name `m` (the scanner reads a unit after a slash only after a space,
 * so that `1/s` with a variable `s` keeps dividing): when there is no such name but a unit,
 * say how to write the unit. */
static bool unit_after_slash(Elab *e, Expr *x, Value b)
{
    Unit u;
    char bad[48];
    if (x->op != OP_DIV || b.kind != V_WORD || x->b->kind != EX_NAME || !units_parse(b.str, &u, bad, sizeof bad))
        return false;
    Diag *d = diag_error(x->b->loc, "unknown name `%s`; a unit after `/` needs a space before the slash", b.str);
    const char *num = x->a->kind == EX_NUM ? arena_printf(e->arena, "%.15g", x->a->num) : "2";
    diag_hint(d, "write `%s /%s`; without the space, `%s/%s` divides by a name `%s`", num, b.str, num, b.str, b.str);
    return true;
}

static Value eval_binary(Elab *e, Expr *x)
{
    Value a = eval_expr(e, x->a);
    Value b = eval_expr(e, x->b);
    if (unit_after_slash(e, x, b))
        return value_error();
    bool ok_a = require_num(e, a, x->a);
    bool ok_b = require_num(e, b, x->b);
    if (!ok_a || !ok_b)
        return value_error();
    switch (x->op) {
    case OP_ADD:
    case OP_SUB: return eval_add(x, a, b);
    case OP_MUL:
    case OP_DIV: return eval_mul(e, x, a, b);
    case OP_POW: return eval_pow(e, x, a, b);
    default: return eval_compare(e, x, a, b);
    }
}

/* `fine ? midedge : hinge`: a choice between words (a bending model, a mesh pattern) made by
 * a condition known when the model is built, so that a param can select it. The word keeps
 * the condition's param: the property it sets knows what it depends on. */
static Value choose_word(Elab *e, Expr *x, Value c, Value a, Value b)
{
    if (!require_num(e, c, x->a))
        return value_error();
    if (c.n != 1 || !c.known) {
        diag_error(x->a->loc, "a choice between words needs a scalar condition known when the model is built");
        return value_error();
    }
    Value r = c.v[0] != 0 ? a : b;
    r.param = c.param;
    return r;
}

/* A material by region (`material = z < 2 mm ? stiff : soft;` in a lattice): known when the
 * condition is; else the first branch, marked as depending on the position, which the lattice
 * evaluates again at each node and spring. */
static Value choose_material(Elab *e, Expr *x, Value c, Value a, Value b)
{
    if (!require_num(e, c, x->a))
        return value_error();
    if (c.n != 1) {
        diag_error(x->a->loc, "a condition must be a scalar");
        return value_error();
    }
    Value r = !c.known || c.v[0] != 0 ? a : b;
    r.known = c.known;
    r.param = c.param;
    return r;
}

static Value eval_cond(Elab *e, Expr *x)
{
    Value c = eval_expr(e, x->a);
    Value a = eval_expr(e, x->b);
    Value b = eval_expr(e, x->c);
    if (a.kind == V_WORD && b.kind == V_WORD)
        return choose_word(e, x, c, a, b);
    if (a.kind == V_MATERIAL && b.kind == V_MATERIAL)
        return choose_material(e, x, c, a, b);
    bool ok_c = require_num(e, c, x->a);
    bool ok_a = require_num(e, a, x->b);
    bool ok_b = require_num(e, b, x->c);
    if (!ok_c || !ok_a || !ok_b)
        return value_error();
    if (c.n != 1) {
        diag_error(x->a->loc, "a condition must be a scalar");
        return value_error();
    }
    Dims d;
    char da[128], db[128];
    if (a.n != b.n || !same_dims(&a, &b, &d)) {
        describe_pair(&a, &b, da, db, sizeof da);
        diag_error(x->loc, "the two branches of `?:` differ: %s and %s", da, db);
        return value_error();
    }
    Value r = c.known ? (c.v[0] != 0 ? a : b) : a;
    r.dims = d;
    r.any_dims = a.any_dims && b.any_dims;
    r.known = c.known && (c.v[0] != 0 ? a.known : b.known);
    if (!r.known)
        for (int i = 0; i < r.n; i++)
            r.v[i] = NAN;
    r.param = c.param ? c.param : a.param ? a.param : b.param;
    return r;
}

static Value eval_vector(Elab *e, Expr *x)
{
    Value r = value_num(0, DIMLESS);
    r.n = 0;
    r.any_dims = true;
    bool ok = true;
    for (int i = 0; i < x->n_args; i++) {
        Value c = eval_expr(e, x->args[i]);
        if (!require_num(e, c, x->args[i])) {
            ok = false;
            continue;
        }
        if (c.n > 1 && (c.n != 3 || x->n_args != 3)) {
            diag_error(x->args[i]->loc, "a vector's components must be numbers (only 3x3 matrices nest)");
            ok = false;
            continue;
        }
        Dims d;
        if (r.n > 0 && !same_dims(&r, &c, &d)) {
            char da[128], db[128];
            value_describe(&c, db, sizeof db);
            Value first = r;
            first.n = 1;
            value_describe(&first, da, sizeof da);
            diag_error(x->args[i]->loc, "vector components must share one dimension: this is %s, the others are %s",
                       db, da);
            ok = false;
            continue;
        }
        if (!c.any_dims) {
            r.dims = c.dims;
            r.any_dims = false;
        }
        for (int k = 0; k < c.n && r.n < 9; k++, r.n++) {
            r.v[r.n] = c.v[k];
            r.dv[r.n] = c.dv[k];
        }
        if (!c.known)
            r.known = false;
        if (!r.param)
            r.param = c.param;
    }
    if (!ok)
        return value_error();
    if (r.n > 9 || (r.n > 3 && r.n != 9)) {
        diag_error(x->loc, "vectors have 2 or 3 components");
        return value_error();
    }
    return r;
}

static Value eval_unit(Elab *e, Expr *x)
{
    Value a = eval_expr(e, x->a);
    char bad[48];
    /* The unit text is parsed once; later evaluations (loops) reuse x->unit, which a failed
     * parse leaves unset. */
    Unit parsed;
    bool known = x->unit.scale > 0;
    if (!known && units_parse(x->str, &parsed, bad, sizeof bad)) {
        x->unit = parsed;
        known = true;
    }
    if (!known) {
        SrcLoc at = x->loc;
        if (at.end_line == at.line && at.end_col - (int)strlen(x->str) + 1 > at.col)
            at.col = at.end_col - (int)strlen(x->str) + 1;
        Diag *d = diag_error(at, "unknown unit `%s`", bad);
        if (!d) /* reported already, from an earlier turn of a loop */
            return value_error();
        int n;
        const char *const *names = units_names(&n);
        const char *close = diag_closest(bad, names, n);
        if (scope_lookup(e, bad) || find_object(e, bad) >= 0)
            diag_hint(d, "to multiply by `%s`, write `*` between the factors", bad);
        else if (units_hint(bad))
            diag_hint(d, "%s", units_hint(bad));
        else if (close)
            diag_hint(d, "did you mean `%s`?", close);
        else
            diag_hint(d, "units are listed in docs/language.md (m, mm, kg, s, N, Pa, GPa, Hz, deg, ...)");
        return value_error();
    }
    if (!require_num(e, a, x->a))
        return value_error();
    if (!a.any_dims && !dims_is_dimless(a.dims)) {
        char da[128];
        value_describe(&a, da, sizeof da);
        diag_error(x->loc, "this already has a unit (%s); a unit can only follow a plain number", da);
        return value_error();
    }
    Value r = a;
    r.any_dims = false;
    r.dims = x->unit.dims;
    for (int i = 0; i < r.n; i++) {
        r.v[i] *= x->unit.scale;
        r.dv[i] *= x->unit.scale;
    }
    return r;
}

/* ---- calls ---- */

typedef enum { F_DIMLESS, F_SAME, F_SIGN, F_SQRT, F_ATAN2, F_MINMAX, F_CLAMP, F_POW, F_DOT, F_CROSS, F_NORM, F_NORMALIZE, F_PREV, F_GROUND_HEIGHT,
              F_GROUND_SLOPE, F_AT } FnRule;

typedef struct Builtin {
    const char *name;
    int         arity; /* -1: two or more */
    FnRule      rule;
    double (*f)(double);
} Builtin;

static double sign_of(double v) { return (v > 0) - (v < 0); }

static const Builtin builtins[] = {
    { "sin", 1, F_DIMLESS, sin },   { "cos", 1, F_DIMLESS, cos },   { "tan", 1, F_DIMLESS, tan },
    { "asin", 1, F_DIMLESS, asin }, { "acos", 1, F_DIMLESS, acos }, { "atan", 1, F_DIMLESS, atan },
    { "exp", 1, F_DIMLESS, exp },   { "log", 1, F_DIMLESS, log },   { "tanh", 1, F_DIMLESS, tanh },
    { "sqrt", 1, F_SQRT, sqrt },    { "abs", 1, F_SAME, fabs },     { "sign", 1, F_SIGN, sign_of },
    { "floor", 1, F_SAME, floor },  { "ceil", 1, F_SAME, ceil },    { "round", 1, F_SAME, round },
    { "atan2", 2, F_ATAN2, NULL },  { "min", -1, F_MINMAX, NULL },  { "max", -1, F_MINMAX, NULL },
    { "clamp", 3, F_CLAMP, NULL },  { "pow", 2, F_POW, NULL },      { "dot", 2, F_DOT, NULL },
    { "cross", 2, F_CROSS, NULL },  { "norm", 1, F_NORM, NULL },    { "normalize", 1, F_NORMALIZE, NULL },
    { "prev", 1, F_PREV, NULL },
    /* a force applied at a point of a body (a force element on a body returns it) */
    { "at", 2, F_AT, NULL },
    /* the model's uneven ground, for contact elements: known only inside kernels */
    { "ground_height", 2, F_GROUND_HEIGHT, NULL }, { "ground_slope", 2, F_GROUND_SLOPE, NULL },
};

static const char *geometry_fns[] = { "line",   "polyline", "arc",      "circle",   "helix",
                                      "rectangle", "hexagon", "disc",   "sphere", "obj",      "dismech", "box", "cylinder",
                                      "gmsh", "tetgen", "filled",
                                      "circular", "elliptic", "rectangular" };

/* Called for every evaluated call, in loops too: the first letters are compared before the
 * whole names, so a lookup costs about one string comparison. */
static const Builtin *find_builtin(const char *name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (builtins[i].name[0] == name[0] && !strcmp(builtins[i].name, name))
            return &builtins[i];
    return NULL;
}

static bool is_geometry_fn(const char *name)
{
    for (size_t i = 0; i < sizeof geometry_fns / sizeof geometry_fns[0]; i++)
        if (!strcmp(geometry_fns[i], name))
            return true;
    return false;
}

static Value call_geometry(Elab *e, Expr *x)
{
    Geom *g = arena_alloc(e->arena, sizeof *g);
    g->fn = x->str;
    g->loc = x->loc;
    g->n_args = x->n_args;
    g->args = arena_alloc(e->arena, sizeof(Value) * (size_t)(x->n_args + 1));
    g->names = x->arg_names;
    g->locs = arena_alloc(e->arena, sizeof(SrcLoc) * (size_t)(x->n_args + 1));
    bool ok = true;
    for (int i = 0; i < x->n_args; i++) {
        g->args[i] = eval_expr(e, x->args[i]);
        g->locs[i] = x->args[i]->loc;
        ok &= g->args[i].kind != V_ERR;
    }
    if (!ok)
        return value_error();
    Value v = value_error();
    bool section = !strcmp(g->fn, "circular") || !strcmp(g->fn, "elliptic") || !strcmp(g->fn, "rectangular");
    /* A shape moved by a param moves nodes and rest lengths, which carry no derivative (a
     * section's dimensions do: objects.c). */
    for (int i = 0; i < x->n_args && !section; i++)
        for (int c = 0; g->args[i].kind == V_NUM && c < g->args[i].n; c++)
            elab_value_only(e, &g->args[i], c);
    v.kind = section ? V_SECTION : V_GEOM;
    v.geom = g;
    v.known = true;
    return v;
}

static bool check_arity(Expr *x, const char *name, int want, int got)
{
    if (want >= 0 ? got == want : got >= 2)
        return true;
    if (want >= 0)
        diag_error(x->loc, "`%s` takes %d argument%s, but %d %s given", name, want, want == 1 ? "" : "s", got,
                   got == 1 ? "was" : "were");
    else
        diag_error(x->loc, "`%s` takes two or more arguments, but %d %s given", name, got, got == 1 ? "was" : "were");
    return false;
}

static Value apply_builtin(Elab *e, Expr *x, const Builtin *b, const Value *a, int n);

/* The larger (max) or smaller (min) of r and c, with its derivative; a switch between them
 * within the seeded param's reach is noted. */
static void pick(Elab *e, bool larger, Value *r, const Value *c)
{
    eval_note_switch(e, r->v[0] - c->v[0], r->dv[0] - c->dv[0]);
    if (larger ? c->v[0] > r->v[0] : c->v[0] < r->v[0])
        r->v[0] = c->v[0], r->dv[0] = c->dv[0];
}

/* atan2, clamp, min and max of known scalars, with their derivatives. */
static void choose_scalar(Elab *e, const Builtin *b, const Value *a, int n, Value *r)
{
    if (b->rule == F_ATAN2) {
        double y = a[0].v[0], x = a[1].v[0];
        r->v[0] = atan2(y, x);
        r->dv[0] = (x * a[0].dv[0] - y * a[1].dv[0]) / (x * x + y * y);
        return;
    }
    r->v[0] = a[0].v[0], r->dv[0] = a[0].dv[0];
    if (b->rule == F_CLAMP) {
        pick(e, true, r, &a[1]);
        pick(e, false, r, &a[2]);
        return;
    }
    for (int i = 1; i < n; i++)
        pick(e, b->name[1] != 'i', r, &a[i]);
}

/* Evaluates the arguments, then applies the function in a separate frame: only this one is on
 * the stack while a nested argument is evaluated, so it is kept small (more than three
 * arguments, as min and max may take, go to the arena). */
static Value call_builtin(Elab *e, Expr *x, const Builtin *b)
{
    if (!check_arity(x, b->name, b->arity, x->n_args))
        return value_error();
    Value small[3];
    memset(small, 0, sizeof small);
    int n = x->n_args < 8 ? x->n_args : 8;
    Value *a = n <= 3 ? small : arena_alloc(e->arena, sizeof(Value) * 8);
    bool ok = true;
    for (int i = 0; i < n; i++) {
        if (x->arg_names[i]) {
            diag_error(x->args[i]->loc, "`%s` takes no named arguments", b->name);
            return value_error();
        }
        a[i] = eval_expr(e, x->args[i]);
        ok &= require_num(e, a[i], x->args[i]);
    }
    if (!ok)
        return value_error();
    return apply_builtin(e, x, b, a, n);
}

/* The derivative of a one-argument built-in at x along dx (fx its value). Where the function
 * jumps or kinks (abs, sign, floor, ...), a switch within the seeded param's reach is noted. */
static double scalar_tangent(Elab *e, const char *name, double x, double dx, double fx)
{
    if (dx == 0)
        return 0;
    static const struct { const char *name; int rule; } smooth[] = {
        { "sin", 0 }, { "cos", 1 }, { "tan", 2 }, { "asin", 3 }, { "acos", 4 }, { "atan", 5 },
        { "exp", 6 }, { "log", 7 }, { "tanh", 8 }, { "sqrt", 9 },
    };
    for (size_t k = 0; k < sizeof smooth / sizeof smooth[0]; k++) {
        if (strcmp(name, smooth[k].name))
            continue;
        double slope[] = { cos(x), -sin(x), 1 + fx * fx, 1 / sqrt(1 - x * x), -1 / sqrt(1 - x * x),
                           1 / (1 + x * x), fx, 1 / x, 1 - fx * fx, 0.5 / fx };
        return slope[smooth[k].rule] * dx;
    }
    if (!strcmp(name, "abs")) {
        eval_note_switch(e, x, dx);
        return x < 0 ? -dx : dx;
    }
    if (!strcmp(name, "sign"))
        eval_note_switch(e, x, dx);
    else /* floor, ceil, round: steps at the integers (round's halfway between) */
        eval_note_switch(e, x - (name[0] == 'r' ? floor(x) + 0.5 : round(x)), dx);
    return 0;
}

static Value apply_builtin(Elab *e, Expr *x, const Builtin *b, const Value *a, int n)
{
    char da[128], db[128];
    Value r = a[0];
    r.any_dims = false;
    switch (b->rule) {
    case F_DIMLESS:
    case F_SQRT:
    case F_SAME:
    case F_SIGN:
        if (a[0].n != 1) {
            diag_error(x->loc, "`%s` takes a scalar", b->name);
            return value_error();
        }
        if (b->rule == F_DIMLESS && !a[0].any_dims && !dims_is_dimless(a[0].dims)) {
            value_describe(&a[0], da, sizeof da);
            Diag *d = diag_error(x->args[0]->loc, "`%s` needs a dimensionless argument, but this is %s", b->name, da);
            if (dims_eq(a[0].dims, dims_of(0, 0, 1, 0)))
                diag_hint(d, "multiply by a frequency: `sin(2*pi*f*t)`");
            return value_error();
        }
        if (b->rule == F_SQRT && !a[0].any_dims && !dims_sqrt(a[0].dims, &r.dims)) {
            value_describe(&a[0], da, sizeof da);
            diag_error(x->args[0]->loc, "the square root of %s has no dimension srd can express", da);
            return value_error();
        }
        r.v[0] = b->f(a[0].v[0]);
        r.dv[0] = scalar_tangent(e, b->name, a[0].v[0], a[0].dv[0], r.v[0]);
        if (b->rule == F_DIMLESS || b->rule == F_SIGN) /* sign(-2 m) is -1, a pure number */
            r.dims = DIMLESS;
        else
            r.any_dims = a[0].any_dims;
        return merge_meta(r, &a[0], NULL);
    case F_ATAN2:
    case F_MINMAX:
    case F_CLAMP: {
        Dims d = a[0].dims;
        Value acc = a[0];
        for (int i = 1; i < n; i++) {
            if (a[i].n != 1 || a[0].n != 1 || !same_dims(&acc, &a[i], &d)) {
                describe_pair(&a[0], &a[i], da, db, sizeof da);
                diag_error(x->loc, "the arguments of `%s` must be scalars of one dimension: %s and %s", b->name, da, db);
                return value_error();
            }
            if (!a[i].any_dims)
                acc = a[i];
            r = merge_meta(r, &r, &a[i]);
        }
        r.dims = b->rule == F_ATAN2 ? DIMLESS : d;
        r.any_dims = false;
        if (r.known)
            choose_scalar(e, b, a, n, &r);
        return r;
    }
    case F_POW: {
        Expr fake = *x;
        fake.a = x->args[0];
        fake.b = x->args[1];
        fake.op = OP_POW;
        return eval_pow(e, &fake, a[0], a[1]);
    }
    case F_DOT:
    case F_CROSS:
        if (a[0].n != a[1].n || a[0].n < 2 || a[0].n > 3 || (b->rule == F_CROSS && a[0].n != 3)) {
            diag_error(x->loc, "`%s` needs two %svectors of the same size", b->name, b->rule == F_CROSS ? "3-" : "");
            return value_error();
        }
        r.dims = dims_mul(a[0].dims, a[1].dims);
        r.any_dims = a[0].any_dims || a[1].any_dims;
        if (b->rule == F_DOT) {
            r.n = 1;
            r.v[0] = r.dv[0] = 0;
            for (int i = 0; i < a[0].n; i++) {
                r.v[0] += a[0].v[i] * a[1].v[i];
                r.dv[0] += a[0].dv[i] * a[1].v[i] + a[0].v[i] * a[1].dv[i];
            }
        } else {
            srd_cross3(a[0].v, a[1].v, r.v);
            double u[3], w[3];
            srd_cross3(a[0].dv, a[1].v, u);
            srd_cross3(a[0].v, a[1].dv, w);
            for (int c = 0; c < 3; c++)
                r.dv[c] = u[c] + w[c];
        }
        return merge_meta(r, &a[0], &a[1]);
    case F_NORM:
    case F_NORMALIZE: {
        if (a[0].n < 2 || a[0].n > 3) {
            diag_error(x->loc, "`%s` needs a vector", b->name);
            return value_error();
        }
        double s = 0, ds = 0;
        for (int i = 0; i < a[0].n; i++)
            s += a[0].v[i] * a[0].v[i], ds += a[0].v[i] * a[0].dv[i];
        s = sqrt(s);
        ds = s > 0 ? ds / s : 0;
        if (b->rule == F_NORM) {
            r.n = 1;
            r.v[0] = s;
            r.dv[0] = ds;
            r.any_dims = a[0].any_dims;
        } else {
            if (a[0].known && s == 0) {
                diag_error(x->loc, "cannot normalize a zero vector");
                return value_error();
            }
            r.dims = DIMLESS;
            for (int i = 0; i < r.n; i++) {
                r.v[i] /= s;
                r.dv[i] = (r.dv[i] - r.v[i] * ds) / s;
            }
        }
        return merge_meta(r, &a[0], NULL);
    }
    case F_GROUND_HEIGHT:
    case F_GROUND_SLOPE:
        r.n = b->rule == F_GROUND_SLOPE ? 2 : 1;
        r.dims = b->rule == F_GROUND_SLOPE ? DIMLESS : dims_of(1, 0, 0, 0);
        r.known = false;
        for (int i = 0; i < r.n; i++)
            r.v[i] = NAN;
        r.param = "ground";
        return r;
    case F_AT:
        if (a[0].n != 3 || a[1].n != 3 || !(a[1].any_dims || dims_eq(a[1].dims, dims_of(1, 0, 0, 0)))) {
            Diag *d = diag_error(x->loc, "`at` takes a force and the point it acts at, two 3-vectors");
            diag_hint(d, "for example `return at(f, b.x + 0.1 m * b.e1);` in a force on body b");
            return value_error();
        }
        return a[0];
    case F_PREV:
        r.known = false;
        for (int i = 0; i < r.n; i++)
            r.v[i] = NAN;
        if (!r.param)
            r.param = "prev";
        return r;
    }
    return value_error();
}

/* table("file.csv", x): two columns, linear interpolation, held constant beyond the ends. */
static Value table_lookup(Elab *e, Expr *x, const char *file, Value a);

static Value call_table(Elab *e, Expr *x)
{
    if (!check_arity(x, "table", 2, x->n_args))
        return value_error();
    Value f = eval_expr(e, x->args[0]);
    Value a = eval_expr(e, x->args[1]);
    if (f.kind != V_STR) {
        diag_error(x->args[0]->loc, "`table` takes a file name first: table(\"data.csv\", t / 1 s)");
        return value_error();
    }
    if (!require_num(e, a, x->args[1]))
        return value_error();
    return table_lookup(e, x, f.str, a);
}

/* The lookup itself, in its own frame: its buffers stay off the stack of nested evaluation. */
static Value table_lookup(Elab *e, Expr *x, const char *file, Value a)
{
    if (a.n != 1 || (!a.any_dims && !dims_is_dimless(a.dims))) {
        char da[128];
        value_describe(&a, da, sizeof da);
        Diag *d = diag_error(x->args[1]->loc, "a table is looked up with a dimensionless scalar, but this is %s", da);
        diag_hint(d, "divide by the table's unit, for example `table(\"f.csv\", t / 1 s)`");
        return value_error();
    }
    char path[1024], err[1200];
    table_path(src_path(x->loc.file), file, path, sizeof path);
    Table *table = malloc(sizeof *table);
    if (!table)
        abort();
    bool ok = table_read(path, table, err, sizeof err);
    if (!ok)
        diag_error(x->args[0]->loc, "%s", err);
    Value r = value_num(NAN, DIMLESS);
    r = merge_meta(r, &a, NULL);
    if (ok && a.known) {
        r.v[0] = table_at(table, a.v[0]);
        r.dv[0] = table_slope(table, a.v[0]) * a.dv[0];
        eval_note_switch(e, a.v[0] - table_nearest_row(table, a.v[0]), a.dv[0]);
    }
    free(table);
    if (!ok)
        return value_error();
    return r;
}

static Value eval_body(Elab *e, Stmt **body, int n_body, SrcLoc def_loc);

/* ---- memoised function calls ----
 * A call's value depends on the function, its argument values and what the body can see: the
 * globals (a chain that only grows, so its head names it) and the objects and materials
 * declared so far. Error results are kept too: their diagnostics were given once already. */
typedef struct FnMemo {
    const Stmt    *fn;
    const Binding *globals;
    int            n_objs, n_mats, n_args;
    Value         *args;
    Value          result;
    uint64_t       hash;
    struct FnMemo *next;
} FnMemo;

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

/* The parts of a numeric argument that can change a result. */
static uint64_t value_hash(uint64_t h, const Value *v)
{
    h = mix(h, (uint64_t)v->n);
    for (int i = 0; i < v->n; i++) {
        uint64_t bits;
        memcpy(&bits, &v->v[i], sizeof bits);
        h = mix(h, bits);
    }
    for (int i = 0; i < DIM_COUNT; i++)
        h = mix(h, (uint64_t)(unsigned char)v->dims.e[i]);
    return mix(mix(mix(h, v->any_dims), v->known), (uint64_t)(uintptr_t)v->param);
}

static bool value_same(const Value *a, const Value *b)
{
    return a->n == b->n && !memcmp(a->v, b->v, sizeof a->v[0] * (size_t)a->n) &&
           !memcmp(a->dv, b->dv, sizeof a->dv[0] * (size_t)a->n) && dims_eq(a->dims, b->dims) &&
           a->any_dims == b->any_dims && a->known == b->known && a->param == b->param;
}

static uint64_t memo_hash(const FnMemo *k)
{
    uint64_t h = mix(mix(0xcbf29ce484222325ull, (uint64_t)(uintptr_t)k->fn), (uint64_t)(uintptr_t)k->globals);
    h = mix(mix(h, (uint64_t)k->n_objs), (uint64_t)k->n_mats);
    for (int i = 0; i < k->n_args; i++)
        h = value_hash(h, &k->args[i]);
    return h;
}

static bool memo_same(const FnMemo *a, const FnMemo *b)
{
    if (a->hash != b->hash || a->fn != b->fn || a->globals != b->globals || a->n_objs != b->n_objs ||
        a->n_mats != b->n_mats || a->n_args != b->n_args)
        return false;
    for (int i = 0; i < a->n_args; i++)
        if (!value_same(&a->args[i], &b->args[i]))
            return false;
    return true;
}

static const FnMemo *memo_find(Elab *e, const FnMemo *key)
{
    if (!e->memo_cap)
        return NULL;
    for (const FnMemo *m = e->memo[key->hash & (uint64_t)(e->memo_cap - 1)]; m; m = m->next)
        if (memo_same(m, key))
            return m;
    return NULL;
}

static void memo_link(FnMemo **buckets, int cap, FnMemo *m)
{
    FnMemo **head = &buckets[m->hash & (uint64_t)(cap - 1)];
    m->next = *head;
    *head = m;
}

/* Doubles the buckets when the chains would grow past one entry on average. */
static void memo_grow(Elab *e)
{
    int cap = e->memo_cap ? 2 * e->memo_cap : 256;
    FnMemo **buckets = calloc((size_t)cap, sizeof *buckets);
    if (!buckets)
        abort();
    for (int i = 0; i < e->memo_cap; i++)
        for (FnMemo *m = e->memo[i], *next; m; m = next) {
            next = m->next;
            memo_link(buckets, cap, m);
        }
    free(e->memo);
    e->memo = buckets;
    e->memo_cap = cap;
}

/* Entries and their argument copies live in the arena, with the rest of elaboration. */
static void memo_add(Elab *e, const FnMemo *key)
{
    if (e->memo_n >= ELAB_MAX_MEMO)
        return; /* calls that never repeat would only fill memory */
    if (e->memo_n >= e->memo_cap)
        memo_grow(e);
    FnMemo *m = arena_alloc(e->arena, sizeof *m);
    *m = *key;
    m->args = arena_alloc(e->arena, sizeof(Value) * (size_t)(key->n_args + 1));
    memcpy(m->args, key->args, sizeof(Value) * (size_t)key->n_args);
    memo_link(e->memo, e->memo_cap, m);
    e->memo_n++;
}

static void free_memo(Elab *e)
{
    free(e->memo);
    e->memo = NULL;
    e->memo_cap = e->memo_n = 0;
}

/* Reports why fn cannot be called here (recursion, arity, nesting), or returns true. */
static bool fn_callable(Elab *e, Expr *x, const Stmt *fn)
{
    const Decl *decl = elab_find_decl(e, fn->name);
    if (decl && decl->recursive)
        return false; /* reported at its definition */
    for (int i = 0; i < e->fn_depth; i++)
        if (e->fn_stack[i] == fn) {
            Diag *d = diag_error(x->loc, "`%s` calls itself (recursion is not allowed)", fn->name);
            diag_note(d, fn->name_loc, "`%s` is defined here", fn->name);
            diag_hint(d, "functions are expanded inline into kernels; write the recursion as a closed form");
            return false;
        }
    if (x->n_args != fn->n_params) {
        Diag *d = diag_error(x->loc, "`%s` takes %d argument%s, but %d %s given", fn->name, fn->n_params,
                             fn->n_params == 1 ? "" : "s", x->n_args, x->n_args == 1 ? "was" : "were");
        diag_note(d, fn->name_loc, "`%s` is defined here", fn->name);
        return false;
    }
    if (e->fn_depth == (int)(sizeof e->fn_stack / sizeof e->fn_stack[0])) {
        diag_error(x->loc, "functions nest too deeply");
        return false;
    }
    return true;
}

/* Evaluates fn's body with the arguments bound, or takes the value of an equal earlier call. */
static Value run_fn(Elab *e, const Stmt *fn, SrcLoc call, Value *args, int n)
{
    FnMemo key = { fn, e->globals, e->objs.n, e->mats.n, n, args, value_error(), 0, NULL };
    key.hash = memo_hash(&key);
    const FnMemo *known = memo_find(e, &key);
    if (known)
        return known->result;
    Binding *saved = e->scope;
    e->scope = e->globals;
    for (int i = 0; i < n; i++)
        scope_bind(e, fn->params[i].name, args[i], fn->params[i].loc, BIND_ARG);
    e->fn_calls[e->fn_depth] = call;
    e->fn_stack[e->fn_depth++] = fn;
    Value r = fn->value ? eval_expr(e, fn->value) : eval_body(e, fn->body, fn->n_body, fn->name_loc);
    e->fn_depth--;
    e->scope = saved;
    key.result = r;
    if (r.kind == V_NUM || r.kind == V_ERR) /* other kinds point at data a caller may change */
        memo_add(e, &key);
    return r;
}

/* The arguments are evaluated in this frame, which nested calls such as f(g(h(x))) stack up:
 * it holds two arguments, and functions of more take theirs from the arena. */
static Value call_user_fn(Elab *e, Expr *x, const Stmt *fn)
{
    if (!fn_callable(e, x, fn))
        return value_error();
    Value small[2];
    int n = fn->n_params < 32 ? fn->n_params : 32;
    Value *args = n <= 2 ? small : arena_alloc(e->arena, sizeof(Value) * (size_t)n);
    for (int i = 0; i < n; i++) {
        if (x->arg_names[i])
            diag_error(x->args[i]->loc, "functions take positional arguments only");
        args[i] = eval_expr(e, x->args[i]);
        /* Report a mistake in an argument here, at the call, not inside the function. */
        if (!require_num(e, args[i], x->args[i]))
            return value_error();
    }
    return run_fn(e, fn, x->loc, args, n);
}

static Value eval_call(Elab *e, Expr *x)
{
    const Decl *d = elab_find_decl(e, x->str);
    if (d && d->stmt->kind == ST_FN)
        return call_user_fn(e, x, d->stmt);
    if (d) {
        Diag *dg = diag_error(x->loc, "`%s` is %s, not a function", x->str,
                              d->stmt->kind == ST_ENERGY ? "an energy" : d->stmt->kind == ST_CONSTRAINT ? "a constraint" : "a force");
        diag_hint(dg, "use it with `apply %s(...);`", x->str);
        return value_error();
    }
    if (!strcmp(x->str, "integral") || !strcmp(x->str, "track"))
        return elab_objective_call(e, x);
    const Builtin *b = find_builtin(x->str);
    if (b)
        return call_builtin(e, x, b);
    if (!strcmp(x->str, "table"))
        return call_table(e, x);
    if (is_geometry_fn(x->str))
        return call_geometry(e, x);
    Diag *dg = diag_error(x->loc, "unknown function `%s`", x->str);
    if (!dg) /* reported already, from an earlier turn of a loop: the hint costs more than the call */
        return value_error();
    /* every name a call can reach: the builtins, the geometry functions, the declarations, `table` */
    size_t cap = sizeof builtins / sizeof builtins[0] + sizeof geometry_fns / sizeof geometry_fns[0] +
                 (size_t)e->decls.n + 1;
    const char **names = arena_alloc(e->arena, cap * sizeof *names);
    int n = 0;
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        names[n++] = builtins[i].name;
    for (size_t i = 0; i < sizeof geometry_fns / sizeof geometry_fns[0]; i++)
        names[n++] = geometry_fns[i];
    for (int i = 0; i < e->decls.n; i++)
        names[n++] = e->decls.a[i].stmt->name;
    names[n++] = "table";
    const char *close = diag_closest(x->str, names, n);
    if (close)
        diag_hint(dg, "did you mean `%s`?", close);
    return value_error();
}

/* Runs `let` statements then the `return` of a function or energy body. */
static Value eval_body(Elab *e, Stmt **body, int n_body, SrcLoc def_loc)
{
    for (int i = 0; i < n_body; i++) {
        Stmt *s = body[i];
        if (s->kind == ST_LET) {
            Value v = eval_expr(e, s->value);
            scope_bind(e, s->name, v, s->name_loc, BIND_LET);
        } else if (s->kind == ST_RETURN) {
            return eval_expr(e, s->value);
        }
    }
    Diag *d = diag_error(def_loc, "this body has no `return`");
    diag_hint(d, "end it with `return <expression>;`");
    return value_error();
}

/* ---- names, members, indexing ---- */

static Value object_value(int index, VKind kind)
{
    Value v = value_error();
    v.kind = kind;
    v.index = index;
    v.known = true;
    return v;
}

static Value eval_name(Elab *e, Expr *x)
{
    Binding *b = scope_lookup(e, x->str);
    if (b)
        return b->val;
    int o = find_object(e, x->str);
    if (o >= 0)
        return e->objs.a[o].broken ? value_error() : object_value(o, V_OBJ);
    int m = find_material(e, x->str);
    if (m >= 0)
        return object_value(m, V_MATERIAL);
    const Decl *d = elab_find_decl(e, x->str);
    if (d) {
        diag_error(x->loc, "`%s` is a %s; call it with arguments", x->str,
                   d->stmt->kind == ST_FN ? "function" : d->stmt->kind == ST_ENERGY ? "energy"
                   : d->stmt->kind == ST_CONSTRAINT ? "constraint" : "force");
        return value_error();
    }
    /* An unknown bare word: an option such as `implicit_euler`, or a mistake the consumer reports. */
    Value v = value_error();
    v.kind = V_WORD;
    v.str = x->str;
    v.known = true;
    return v;
}

static Value stencil_member(Elab *e, Value base, Expr *x)
{
    (void)e;
    const char *m = x->str;
    if (strcmp(base.str, "node") && strcmp(base.str, "edge") && strcmp(base.str, "body"))
        return value_error(); /* an unknown stencil kind, reported at the signature */
    Dims L = dims_of(1, 0, 0, 0);
    bool body = !strcmp(base.str, "body");
    if (body || !strcmp(base.str, "node")) {
        /* a node's members, and a body's with its rotation and axes */
        if (!strcmp(m, "x") || !strcmp(m, "x0"))
            return value_unknown(3, L, "stencil");
        if (!strcmp(m, "v"))
            return value_unknown(3, dims_of(1, 0, -1, 0), "stencil");
        if (!strcmp(m, "m"))
            return value_unknown(1, dims_of(0, 1, 0, 0), "stencil");
        if (body && (!strcmp(m, "theta") || !strcmp(m, "e1") || !strcmp(m, "e2") || !strcmp(m, "e3")))
            return value_unknown(3, DIMLESS, "stencil");
        Diag *d = diag_error(x->loc, "a stencil %s has no member `%s`", base.str, m);
        diag_hint(d, body ? "a body has x (centre of mass), e1, e2, e3 (its axes now), theta (its turn in the step), "
                            "x0 (reference position), v (velocity at the step start), m (mass)"
                          : "a node has x (position), x0 (reference position), v (velocity at the step start), m (mass)");
        return value_error();
    }
    if (!strcmp(m, "theta") || !strcmp(m, "xi"))
        return value_unknown(1, DIMLESS, "stencil");
    if (!strcmp(m, "d1") || !strcmp(m, "d2") || !strcmp(m, "t") || !strcmp(m, "tau0") || !strcmp(m, "tau_ref"))
        return value_unknown(3, DIMLESS, "stencil");
    if (!strcmp(m, "rest"))
        return value_unknown(1, L, "stencil");
    if (!strcmp(m, "sign") || !strcmp(m, "ref_twist"))
        return value_unknown(1, DIMLESS, "stencil");
    Diag *d = diag_error(x->loc, "a stencil edge has no member `%s`", m);
    diag_hint(d, "an edge has theta (twist), xi (mid-edge DOF), d1, d2, t (reference frame at the step start), "
                 "rest (rest length), sign (+1 along the stencil), ref_twist (reference twist at the step start), "
                 "tau0 (mid-edge tau = n_avg x e at the step start) and tau_ref (tau0 at the reference configuration)");
    return value_error();
}

/* Member m of a reaction probe: 0-2 for fx, fy, fz (its force, as x, y, z), 3-5 for mx, my, mz
 * (its moment); -1 for any other name. */
int elab_reaction_member(const char *m)
{
    static const char *const names[6] = { "fx", "fy", "fz", "mx", "my", "mz" };
    for (int c = 0; c < 6; c++)
        if (!strcmp(m, names[c]))
            return c;
    return -1;
}

/* `R.fx` ... `R.mz` with R a reaction probe bound by name (elab_bind_probe). */
static bool reaction_member(Elab *e, Expr *x, Value *out)
{
    int c = elab_reaction_member(x->str);
    Binding *b = c >= 0 && !x->has_args && x->a->kind == EX_NAME ? scope_lookup(e, x->a->str) : NULL;
    if (!b || !b->moment)
        return false;
    *out = c < 3 ? b->val : *b->moment;
    out->n = 1;
    out->v[0] = out->v[c % 3];
    out->dv[0] = out->dv[c % 3];
    return true;
}

/* A number's member that is none of x, y, z: named with what the reaction probes have. */
static void member_error(Elab *e, Expr *x)
{
    const char *name = x->a->kind == EX_NAME ? x->a->str : NULL;
    Binding *b = name ? scope_lookup(e, name) : NULL;
    static const char *members = "a reaction probe `R` (`probe R = reaction(arm.start);`) has its force as `R.fx`, "
                                 "`R.fy`, `R.fz` (or `R.x`, `R.y`, `R.z`) and its moment as `R.mx`, `R.my`, `R.mz`";
    Diag *d;
    if (b && b->moment)
        d = diag_error(x->loc, "the reaction probe `%s` has no member `%s`", name, x->str);
    else if (name && elab_reaction_member(x->str) >= 0)
        d = diag_error(x->loc, "`%s` is not a reaction probe: it has no member `%s`", name, x->str);
    else {
        diag_error(x->loc, "a number has no member `%s`", x->str);
        return;
    }
    diag_hint(d, "%s", members);
}

static Value eval_member(Elab *e, Expr *x)
{
    Value r;
    if (reaction_member(e, x, &r))
        return r;
    Value base = eval_expr(e, x->a);
    if (base.kind == V_ERR)
        return base;
    if (base.kind == V_NUM && !x->has_args) {
        int c = !strcmp(x->str, "x") ? 0 : !strcmp(x->str, "y") ? 1 : !strcmp(x->str, "z") ? 2 : -1;
        if (c < 0 || c >= base.n || base.n == 1 || base.n == 9) {
            member_error(e, x);
            return value_error();
        }
        r = base;
        r.n = 1;
        r.v[0] = base.v[c];
        r.dv[0] = base.dv[c];
        return r;
    }
    if (base.kind == V_STENCIL)
        return stencil_member(e, base, x);
    if (base.kind == V_MATERIAL) {
        ElabMaterial *mt = &e->mats.a[base.index];
        if (!strcmp(x->str, "E"))
            return value_of_dual(mt->E, dims_of(-1, 1, -2, 0), mt->runtime_param);
        if (!strcmp(x->str, "nu"))
            return value_of_dual(mt->nu, DIMLESS, mt->runtime_param);
        if (!strcmp(x->str, "rho"))
            return value_of_dual(mt->rho, dims_of(-3, 1, 0, 0), mt->runtime_param);
        diag_error(x->loc, "a material has no member `%s` (it has E, nu, rho)", x->str);
        return value_error();
    }
    if (base.kind == V_WORD && x->a->kind == EX_NAME) {
        require_num(e, base, x->a);
        return value_error();
    }
    return select_member(e, base, x);
}

static Value eval_index(Elab *e, Expr *x)
{
    /* limb[i] names one object of a family declared in a loop. */
    if (x->a->kind == EX_NAME && !scope_lookup(e, x->a->str) && find_object(e, x->a->str) < 0) {
        Value i = eval_expr(e, x->b);
        if (!require_num(e, i, x->b))
            return value_error();
        if (i.n != 1 || !i.known || i.v[0] != floor(i.v[0])) {
            diag_error(x->b->loc, "an object index must be an integer known when the model is built");
            return value_error();
        }
        char name[256];
        snprintf(name, sizeof name, "%s[%d]", x->a->str, (int)i.v[0]);
        int o = find_object(e, name);
        if (o >= 0)
            return e->objs.a[o].broken ? value_error() : object_value(o, V_OBJ);
        size_t len = strlen(x->a->str);
        int count = 0;
        for (int k = 0; k < e->objs.n; k++)
            count += !strncmp(e->objs.a[k].name, x->a->str, len) && e->objs.a[k].name[len] == '[';
        if (count) {
            Diag *d = diag_error(x->loc, "there is no `%s`", name);
            diag_hint(d, "`%s` has %d members declared so far", x->a->str, count);
        } else {
            Diag *d = diag_error(x->a->loc, "unknown name `%s`", x->a->str);
            hint_closest_name(e, d, x->a->str);
        }
        return value_error();
    }
    Value base = eval_expr(e, x->a);
    if (base.kind == V_ERR)
        return base;
    if (base.kind == V_NUM) {
        Value i = eval_expr(e, x->b);
        if (!require_num(e, i, x->b))
            return value_error();
        if (!i.known || i.v[0] != floor(i.v[0]) || i.v[0] < 0 || i.v[0] >= base.n) {
            diag_error(x->b->loc, "index out of range: this vector has %d components (0 to %d)", base.n, base.n - 1);
            return value_error();
        }
        Value r = base;
        r.n = 1;
        r.v[0] = base.v[(int)i.v[0]];
        r.dv[0] = base.dv[(int)i.v[0]];
        return r;
    }
    return select_index(e, base, x);
}

/* a[i..j], a where c, a over s in r: kept out of eval_node, whose frame every level of a deep
 * expression pays for. */
static Value eval_selection(Elab *e, Expr *x)
{
    Value base = eval_expr(e, x->a);
    if (base.kind == V_ERR)
        return base;
    if (x->kind == EX_SLICE)
        return select_slice(e, base, x);
    return x->kind == EX_WHERE ? select_where(e, base, x) : select_over(e, base, x);
}

static Value eval_node(Elab *e, Expr *x)
{
    Value v;
    switch (x->kind) {
    case EX_NUM:
        v = value_num(x->num, DIMLESS);
        v.any_dims = x->num == 0;
        return v;
    case EX_STR:
        v = value_error();
        v.kind = V_STR;
        v.str = x->str;
        v.known = true;
        return v;
    case EX_NAME: return eval_name(e, x);
    case EX_VEC: return eval_vector(e, x);
    case EX_UNIT: return eval_unit(e, x);
    case EX_NEG:
        v = eval_expr(e, x->a);
        if (!require_num(e, v, x->a))
            return value_error();
        for (int i = 0; i < v.n; i++)
            v.v[i] = -v.v[i], v.dv[i] = -v.dv[i];
        return v;
    case EX_NOT:
        v = eval_expr(e, x->a);
        if (!require_num(e, v, x->a))
            return value_error();
        if (v.n != 1) {
            diag_error(x->loc, "`!` needs a scalar");
            return value_error();
        }
        eval_note_switch(e, v.v[0], v.dv[0]);
        v.v[0] = v.known ? v.v[0] == 0 : NAN;
        v.dv[0] = 0;
        v.dims = DIMLESS;
        return v;
    case EX_BIN: return eval_binary(e, x);
    case EX_COND: return eval_cond(e, x);
    case EX_CALL: return eval_call(e, x);
    case EX_MEMBER: return eval_member(e, x);
    case EX_INDEX: return eval_index(e, x);
    case EX_SLICE:
    case EX_WHERE:
    case EX_OVER: return eval_selection(e, x);
    }
    return value_error();
}

/* A value computed here from finite operands must be finite: infinity or NaN would only
 * surface at run time, as "NaN at t = 0" with no position. */
static Value check_finite(Expr *x, Value v)
{
    if (v.kind == V_NUM && v.dims.overflow) {
        Diag *d = diag_error(x->loc, "the unit of this has an exponent beyond %d", UNITS_MAX_EXPONENT);
        diag_hint(d, "units are kept as powers of m, kg, s and K between -%d and %d", UNITS_MAX_EXPONENT,
                  UNITS_MAX_EXPONENT);
        return value_error();
    }
    if (v.kind != V_NUM || !v.known)
        return v;
    for (int i = 0; i < v.n; i++) {
        if (isfinite(v.v[i]))
            continue;
        bool inf = isinf(v.v[i]);
        Diag *d = diag_error(x->loc, "this evaluates to %s", inf ? "infinity" : "NaN (not a number)");
        diag_hint(d, inf ? "the result is beyond the range of double precision (about 1.8e308 in SI units)"
                         : "an argument is outside the function's domain (a square root or logarithm of a "
                           "negative number, asin of more than 1, ...)");
        return value_error();
    }
    return v;
}

static Value too_deep(Elab *e, Expr *x)
{
    if (!e->too_deep) {
        Diag *d = diag_error(x->loc, "expression nested too deeply (limit %d)", ELAB_MAX_EVAL_DEPTH);
        if (e->fn_depth > 0) /* the depth comes from the functions: show where they were entered */
            diag_note(d, e->fn_calls[0], "reached while evaluating this call of `%s`", e->fn_stack[0]->name);
        diag_hint(d, "functions are expanded inline, so their bodies add to the depth of the expression "
                     "that calls them; compute parts with `let`");
    }
    e->too_deep = true;
    return value_error();
}

/* Every evaluation passes here: it bounds the recursion (one level per node, function bodies
 * included) and counts the work of elaboration. Past ELAB_MAX_WORK values are errors that the
 * enclosing loop reports (elab.c), or the caller when there is none. */
Value eval_expr(Elab *e, Expr *x)
{
    if (e->eval_depth >= ELAB_MAX_EVAL_DEPTH)
        return too_deep(e, x);
    if (++e->work > elab_work_limit()) {
        if (e->loop_depth == 0)
            elab_over_budget(e, x->loc);
        return value_error();
    }
    e->eval_depth++;
    Value v = eval_node(e, x);
    e->eval_depth--;
    return check_finite(x, v);
}

static long long work_limit = ELAB_MAX_WORK;

void elab_set_work_limit(long long limit) { work_limit = limit > 0 ? limit : ELAB_MAX_WORK; }

long long elab_work_limit(void) { return work_limit; }

void elab_over_budget(Elab *e, SrcLoc loc)
{
    if (!e->over_budget) {
        Diag *d = diag_error(loc, "elaboration takes too long here: more than %lld steps in total", elab_work_limit());
        diag_hint(d, "every loop iteration and every evaluated operation is a step, and nested loops "
                     "multiply their counts: make the loops shorter or fewer");
    }
    e->over_budget = true;
}

Value eval_user_element(Elab *e, const Stmt *def, const Value *params, int n_params)
{
    Binding *saved = e->scope;
    e->scope = e->globals;
    for (int i = 0; i < def->n_stencil; i++) {
        Value s = value_error();
        s.kind = V_STENCIL;
        s.str = def->stencil[i].kind;
        s.index = i;
        s.known = false;
        scope_bind(e, def->stencil[i].name, s, def->stencil[i].loc, BIND_ARG);
    }
    for (int i = 0; i < def->n_params && i < n_params; i++)
        scope_bind(e, def->params[i].name, params[i], def->params[i].loc, BIND_ARG);
    Value r = def->value ? eval_expr(e, def->value) : eval_body(e, def->body, def->n_body, def->name_loc);
    e->scope = saved;
    return r;
}
