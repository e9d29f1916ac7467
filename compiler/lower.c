/* lower.c — symbolic evaluation of element definitions into the expression DAG. Stencil
 * members become DOF, state or data inputs; params become run-time inputs; lets and
 * functions are expanded inline; then the residual and Jacobian are derived in the DAG. */
#include "lower.h"
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diff.h"
#include "diag.h"
#include "schedule.h"
#include "table.h"

#define PI 3.14159265358979323846

enum { SY_ERR, SY_NUM, SY_NODE, SY_EDGE, SY_STR, SY_BODY };

typedef struct Sym {
    int    kind;
    int    n;       /* SY_NUM components */
    ExprId c[9];
    int    param;   /* SY_NODE / SY_EDGE / SY_BODY: stencil parameter */
} Sym;

typedef struct SymBind SymBind;
struct SymBind {
    const char *name;
    Sym         v;
    const Expr *src;    /* a body let's expression: prev(name) lowers it again at the step start */
    const Expr *lazy;   /* a global let, lowered on first use */
    bool        busy;
    Sym         moment;   /* a reaction probe's moment (`.mx`; v its force), else SY_ERR */
    SymBind    *next;
};

typedef struct Lower {
    ExprDag            *d;
    const Program      *prog;
    const Program      *model_prog; /* the model's own file: its params, lets and functions */
    const srd_model    *model;
    const srd_elemset  *set;
    const Stmt         *def;
    SymBind            *scope, *globals;
    const Stmt         *fn_stack[64];
    int                 depth;
    bool                prev;
    KernelInput        *inputs;
    int                 n_inputs, cap_inputs;
    StencilDof          dofs[64];
    int                 nd;
    StateEntry          state[128];
    int                 n_state;
    bool                failed;
    char               *err;
    size_t              err_n;
    int                 expr_depth;    /* lower_expr calls in progress */
    struct CallMemo    *memo;          /* function calls lowered so far (call_fn) */
    int                 memo_n, memo_cap;
    int                 n_probe_slots; /* an objective's: the data slots before its terms' */
} Lower;

/* A function call lowered once: the same function with the same argument nodes gives the same
 * result (the DAG is hash-consed), so f1(x) = f0(x) + f0(x) lowers f0 once per level. */
typedef struct CallMemo {
    const Stmt *fn;     /* NULL: an empty slot */
    bool        prev;
    int         n_args;
    Sym         args[32];
    Sym         result;
    uint64_t    hash;
} CallMemo;

static Sym sym_err(void)
{
    Sym s;
    memset(&s, 0, sizeof s);
    return s;
}

static Sym sym_scalar(ExprId id)
{
    Sym s = sym_err();
    s.kind = SY_NUM;
    s.n = 1;
    s.c[0] = id;
    return s;
}

static void fail(Lower *L, const char *fmt, ...)
{
    if (L->failed)
        return;
    L->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->err, L->err_n, fmt, ap);
    va_end(ap);
}

static void bind(Lower *L, const char *name, Sym v, const Expr *lazy)
{
    SymBind *b = calloc(1, sizeof *b);
    b->name = name;
    b->v = v;
    b->lazy = lazy;
    b->next = L->scope;
    L->scope = b;
}

static void unbind_to(Lower *L, SymBind *mark)
{
    while (L->scope != mark) {
        SymBind *b = L->scope;
        L->scope = b->next;
        if (b == L->globals)
            L->globals = b->next;
        free(b);
    }
}

/* ---- inputs ---- */

static ExprId input(Lower *L, KernelInputClass cls, int index)
{
    for (int i = 0; i < L->n_inputs; i++)
        if (L->inputs[i].cls == cls && L->inputs[i].index == index)
            return dag_input(L->d, i);
    if (L->n_inputs == L->cap_inputs) {
        L->cap_inputs = L->cap_inputs ? 2 * L->cap_inputs : 32;
        L->inputs = realloc(L->inputs, sizeof *L->inputs * (size_t)L->cap_inputs);
    }
    L->inputs[L->n_inputs].cls = cls;
    L->inputs[L->n_inputs].index = index;
    return dag_input(L->d, L->n_inputs++);
}

static int stencil_dof(Lower *L, int param, int comp)
{
    for (int k = 0; k < L->nd; k++)
        if (L->dofs[k].param == param && L->dofs[k].comp == comp)
            return k;
    if (L->nd == 64) {
        fail(L, "a stencil of more than 64 DOFs");
        return 0;
    }
    L->dofs[L->nd].param = param;
    L->dofs[L->nd].comp = comp;
    return L->nd++;
}

static ExprId dof_input(Lower *L, int param, int comp)
{
    return input(L, L->prev ? KIN_DOF0 : KIN_DOF, stencil_dof(L, param, comp));
}

static ExprId state_input(Lower *L, StateKind kind, int param, int comp)
{
    for (int k = 0; k < L->n_state; k++)
        if (L->state[k].kind == kind && L->state[k].param == param && L->state[k].comp == comp)
            return input(L, KIN_STATE, k);
    if (L->n_state == 128) {
        fail(L, "too many per-instance state values");
        return dag_const(L->d, 0);
    }
    L->state[L->n_state] = (StateEntry){ kind, param, comp };
    return input(L, KIN_STATE, L->n_state++);
}

/* True when the runtime sets this column: the natural-shape columns (*_bar), which it
 * measures from the reference for stress-free elements, and pressures; static load steps
 * ramp both. */
static bool filled_at_run_time(const srd_elemset *s, int column)
{
    return srd_column_ramped(s->kind, s->data_names[column]) != 0;
}

/* True when an actuation of the model writes this column of the set each step. */
static bool actuated(const Lower *L, int column)
{
    for (int k = 0; k < L->model->n_actuations; k++) {
        const srd_actuation *a = &L->model->actuations[k];
        if (&L->model->sets[a->set] == L->set && srd_actuation_drives(a->target, L->set->data_names[column]))
            return true;
    }
    return false;
}

/* An element parameter: a constant when all instances share its value (and neither the
 * runtime nor an actuation fills it in). */
static ExprId data_input(Lower *L, int column)
{
    const srd_elemset *s = L->set;
    if (!filled_at_run_time(s, column) && !actuated(L, column) && srd_elemset_uniform(s, column))
        return dag_const(L->d, s->data[column]);
    return input(L, KIN_DATA, column);
}

/* ---- expressions ---- */

static Sym lower_expr(Lower *L, const Expr *x);
static void bind_globals(Lower *L);

static Sym need_num(Lower *L, Sym s, const Expr *x)
{
    if (s.kind != SY_NUM && s.kind != SY_ERR)
        fail(L, "line %d: expected a number", x->loc.line);
    return s.kind == SY_NUM ? s : sym_err();
}

static Sym map2(Lower *L, Sym a, Sym b, ExprId (*f)(ExprDag *, ExprId, ExprId))
{
    Sym r = sym_err();
    r.kind = SY_NUM;
    r.n = a.n > b.n ? a.n : b.n;
    for (int i = 0; i < r.n; i++)
        r.c[i] = f(L->d, a.c[a.n > 1 ? i : 0], b.c[b.n > 1 ? i : 0]);
    return r;
}

static ExprId op_lt(ExprDag *d, ExprId a, ExprId b) { return dag_binary(d, XO_LT, a, b); }
static ExprId op_le(ExprDag *d, ExprId a, ExprId b) { return dag_binary(d, XO_LE, a, b); }
static ExprId op_gt(ExprDag *d, ExprId a, ExprId b) { return dag_binary(d, XO_LT, b, a); }
static ExprId op_ge(ExprDag *d, ExprId a, ExprId b) { return dag_binary(d, XO_LE, b, a); }
static ExprId op_eq(ExprDag *d, ExprId a, ExprId b) { return dag_binary(d, XO_EQ, a, b); }
static ExprId op_ne(ExprDag *d, ExprId a, ExprId b) { return dag_binary(d, XO_NE, a, b); }
static ExprId op_and(ExprDag *d, ExprId a, ExprId b) { return dag_binary(d, XO_AND, a, b); }
static ExprId op_or(ExprDag *d, ExprId a, ExprId b) { return dag_binary(d, XO_OR, a, b); }

static Sym lower_binary(Lower *L, const Expr *x)
{
    Sym a = need_num(L, lower_expr(L, x->a), x->a);
    Sym b = need_num(L, lower_expr(L, x->b), x->b);
    if (a.kind == SY_ERR || b.kind == SY_ERR)
        return sym_err();
    switch (x->op) {
    case OP_ADD: return map2(L, a, b, dag_add);
    case OP_SUB: return map2(L, a, b, dag_sub);
    case OP_MUL: return map2(L, a, b, dag_mul);
    case OP_DIV: return map2(L, a, b, dag_div);
    case OP_POW: return map2(L, a, b, dag_pow);
    case OP_LT: return map2(L, a, b, op_lt);
    case OP_LE: return map2(L, a, b, op_le);
    case OP_GT: return map2(L, a, b, op_gt);
    case OP_GE: return map2(L, a, b, op_ge);
    case OP_EQ: return map2(L, a, b, op_eq);
    case OP_NE: return map2(L, a, b, op_ne);
    case OP_AND: return map2(L, a, b, op_and);
    case OP_OR: return map2(L, a, b, op_or);
    }
    return sym_err();
}

static ExprId dot(Lower *L, Sym a, Sym b)
{
    ExprId s = dag_const(L->d, 0);
    for (int i = 0; i < a.n; i++)
        s = dag_add(L->d, s, dag_mul(L->d, a.c[i], b.c[i]));
    return s;
}

static Sym lower_body(Lower *L, Stmt **body, int n_body);

/* The parts of a Sym that lowering reads (the unused components stay out of the key). */
static uint64_t sym_hash(uint64_t h, const Sym *s)
{
    h = (h ^ (uint64_t)(s->kind * 31 + s->n)) * 0x100000001b3ull;
    h = (h ^ (uint64_t)s->param) * 0x100000001b3ull;
    for (int i = 0; i < s->n && i < 9; i++)
        h = (h ^ (uint64_t)(uint32_t)s->c[i]) * 0x100000001b3ull;
    return h;
}

static bool sym_same(const Sym *a, const Sym *b)
{
    return a->kind == b->kind && a->n == b->n && a->param == b->param &&
           !memcmp(a->c, b->c, sizeof a->c[0] * (size_t)(a->n < 9 ? a->n : 9));
}

static bool memo_same(const CallMemo *m, const CallMemo *k)
{
    if (m->hash != k->hash || m->fn != k->fn || m->prev != k->prev || m->n_args != k->n_args)
        return false;
    for (int i = 0; i < k->n_args; i++)
        if (!sym_same(&m->args[i], &k->args[i]))
            return false;
    return true;
}

/* The slot of key in the open-addressing table, or the empty slot where it goes. */
static CallMemo *memo_slot(Lower *L, const CallMemo *key)
{
    uint64_t mask = (uint64_t)L->memo_cap - 1;
    for (uint64_t i = key->hash & mask;; i = (i + 1) & mask)
        if (!L->memo[i].fn || memo_same(&L->memo[i], key))
            return &L->memo[i];
}

static void memo_grow(Lower *L)
{
    CallMemo *old = L->memo;
    int old_cap = L->memo_cap;
    L->memo_cap = old_cap ? 2 * old_cap : 64;
    L->memo = calloc((size_t)L->memo_cap, sizeof *L->memo);
    if (!L->memo)
        abort();
    for (int i = 0; i < old_cap; i++)
        if (old[i].fn)
            *memo_slot(L, &old[i]) = old[i];
    free(old);
}

static void memo_put(Lower *L, const CallMemo *key)
{
    if (2 * (L->memo_n + 1) > L->memo_cap)
        memo_grow(L);
    *memo_slot(L, key) = *key;
    L->memo_n++;
}

static void memo_free(Lower *L)
{
    free(L->memo);
    L->memo = NULL;
    L->memo_n = L->memo_cap = 0;
}

static Sym call_fn(Lower *L, const Expr *x, const Stmt *fn)
{
    for (int i = 0; i < L->depth; i++)
        if (L->fn_stack[i] == fn) {
            fail(L, "`%s` calls itself", fn->name);
            return sym_err();
        }
    if (L->depth == 64 || x->n_args != fn->n_params) {
        fail(L, "bad call of `%s`", fn->name);
        return sym_err();
    }
    CallMemo key;
    memset(&key, 0, sizeof key);
    key.fn = fn;
    key.prev = L->prev;
    key.n_args = fn->n_params < 32 ? fn->n_params : 32;
    Sym *args = key.args;
    uint64_t h = (uint64_t)(uintptr_t)fn * 0x9e3779b97f4a7c15ull ^ (uint64_t)L->prev;
    for (int i = 0; i < key.n_args; i++) {
        args[i] = lower_expr(L, x->args[i]);
        h = sym_hash(h, &args[i]);
    }
    key.hash = h;
    if (L->failed)
        return sym_err();
    if (L->memo_cap) {
        const CallMemo *m = memo_slot(L, &key);
        if (m->fn)
            return m->result;
    }
    SymBind *mark = L->scope, *saved_globals = L->globals;
    /* A function sees its arguments and the globals only. */
    SymBind *inner_top = L->globals;
    L->scope = inner_top;
    for (int i = 0; i < fn->n_params && i < 32; i++)
        bind(L, fn->params[i].name, args[i], NULL);
    L->fn_stack[L->depth++] = fn;
    Sym r = fn->value ? lower_expr(L, fn->value) : lower_body(L, fn->body, fn->n_body);
    L->depth--;
    unbind_to(L, inner_top);
    L->scope = mark;
    L->globals = saved_globals;
    key.result = r;
    if (!L->failed)
        memo_put(L, &key);
    return r;
}

static const Stmt *find_fn(const Program *p, const char *name)
{
    for (int i = 0; i < p->n_stmts; i++)
        if (p->stmts[i]->kind == ST_FN && !strcmp(p->stmts[i]->name, name))
            return p->stmts[i];
    return NULL;
}

/* Binds the elaboration-time values a run-time expression closed over (loop indices, local
 * lets) as constants. */
static void bind_captured(Lower *L, const CapturedValue *captured, int n)
{
    for (int i = 0; i < n; i++) {
        Sym v = sym_err();
        v.kind = SY_NUM;
        v.n = captured[i].n;
        for (int c = 0; c < v.n; c++)
            v.c[c] = dag_const(L->d, captured[i].v[c]);
        bind(L, captured[i].name, v, NULL);
    }
}

/* The model's ground surface z = h(x, y) at the given coordinates: the ground block's height
 * expression, lowered with its captured values and x, y bound to the arguments. */
static ExprId ground_height_at(Lower *L, ExprId x, ExprId y)
{
    if (L->model->ground_height_expr < 0) {
        fail(L, "the model has no uneven ground (`ground { height = ...; }`)");
        return dag_const(L->d, 0);
    }
    const RunExpr *r = elab_run_expr(L->model, L->model->ground_height_expr);
    /* The height is written in the model's file: lower it among that file's globals. */
    SymBind *saved = L->scope, *saved_globals = L->globals;
    const Program *saved_prog = L->prog;
    L->prog = L->model_prog ? L->model_prog : L->prog;
    L->scope = NULL;
    bind_globals(L);
    bind_captured(L, r->captured, r->n_captured);
    bind(L, "x", sym_scalar(x), NULL);
    bind(L, "y", sym_scalar(y), NULL);
    Sym h = need_num(L, lower_expr(L, r->expr), r->expr);
    unbind_to(L, NULL);
    L->scope = saved;
    L->globals = saved_globals;
    L->prog = saved_prog;
    if (!L->failed && h.n != 1)
        fail(L, "the ground height is not a scalar");
    return L->failed ? dag_const(L->d, 0) : h.c[0];
}

/* ground_height(x, y) and ground_slope(x, y) = (dh/dx, dh/dy): the slope is the derivative of
 * the lowered height with respect to its arguments, which must be coordinates of stencil
 * nodes (inputs of the kernel), so the contact elements' Hessians see the curvature of the
 * surface too. */
static Sym lower_ground(Lower *L, const Expr *x)
{
    if (x->n_args != 2) {
        fail(L, "line %d: `%s` takes (x, y)", x->loc.line, x->str);
        return sym_err();
    }
    Sym a = need_num(L, lower_expr(L, x->args[0]), x->args[0]);
    Sym b = need_num(L, lower_expr(L, x->args[1]), x->args[1]);
    if (L->failed)
        return sym_err();
    ExprId h = ground_height_at(L, a.c[0], b.c[0]);
    if (!strcmp(x->str, "ground_height"))
        return sym_scalar(h);
    const ExprNode *na = dag_node(L->d, a.c[0]), *nb = dag_node(L->d, b.c[0]);
    if (na->op != XO_INPUT || nb->op != XO_INPUT) {
        fail(L, "line %d: `ground_slope` takes node coordinates, such as (a.x.x, a.x.y)", x->loc.line);
        return sym_err();
    }
    int wrt[2] = { na->index, nb->index };
    Sym r = sym_err();
    r.kind = SY_NUM;
    r.n = 2;
    diff_gradient(L->d, h, wrt, 2, r.c);
    return r;
}

/* table("file.csv", u): the table's piecewise-linear interpolant as a chain of selects over
 * its segments (constant beyond the ends), so schedules read measured data in generated code. */
static Sym lower_table(Lower *L, const Expr *x)
{
    if (x->n_args != 2 || x->args[0]->kind != EX_STR) {
        fail(L, "line %d: `table` takes a file name and a value", x->loc.line);
        return sym_err();
    }
    Sym u = need_num(L, lower_expr(L, x->args[1]), x->args[1]);
    if (L->failed)
        return sym_err();
    char path[1024], err[1200];
    table_path(src_path(x->loc.file), x->args[0]->str, path, sizeof path);
    Table *t = malloc(sizeof *t);
    if (!t || !table_read(path, t, err, sizeof err)) {
        fail(L, "line %d: %s", x->loc.line, t ? err : "out of memory");
        free(t);
        return sym_err();
    }
    ExprDag *d = L->d;
    ExprId at = u.c[0], r = dag_const(d, t->y[t->n - 1]);
    for (int k = t->n - 2; k >= 0; k--) {
        double slope = (t->y[k + 1] - t->y[k]) / (t->x[k + 1] - t->x[k]);
        ExprId seg = dag_add(d, dag_const(d, t->y[k]), dag_mul(d, dag_const(d, slope), dag_sub(d, at, dag_const(d, t->x[k]))));
        r = dag_select(d, dag_binary(d, XO_LT, at, dag_const(d, t->x[k + 1])), seg, r);
    }
    r = dag_select(d, dag_binary(d, XO_LT, at, dag_const(d, t->x[0])), dag_const(d, t->y[0]), r);
    free(t);
    return sym_scalar(r);
}

/* A term of the objective (integral(...), track(...)): its value is the data slot after the
 * probes' (lower_objective). */
static Sym lower_objective_call(Lower *L, const Expr *x)
{
    const srd_optimize *o = &L->model->optimize;
    for (int k = 0; k < o->n_terms; k++)
        if (elab_run_expr(L->model, o->terms[k].call)->expr == x)
            return sym_scalar(input(L, KIN_DATA, L->n_probe_slots + k));
    fail(L, "line %d: `%s` belongs in an objective", x->loc.line, x->str);
    return sym_err();
}

static Sym lower_call(Lower *L, const Expr *x)
{
    const Stmt *fn = find_fn(L->prog, x->str);
    if (fn)
        return call_fn(L, x, fn);
    if (!strcmp(x->str, "ground_height") || !strcmp(x->str, "ground_slope"))
        return lower_ground(L, x);
    if (!strcmp(x->str, "table"))
        return lower_table(L, x);
    if (!strcmp(x->str, "integral") || !strcmp(x->str, "track"))
        return lower_objective_call(L, x);
    if (!strcmp(x->str, "prev")) {
        bool saved = L->prev;
        L->prev = true;
        Sym r = lower_expr(L, x->args[0]);
        L->prev = saved;
        return r;
    }
    Sym a[8];
    int n = x->n_args < 8 ? x->n_args : 8;
    for (int i = 0; i < n; i++) {
        a[i] = need_num(L, lower_expr(L, x->args[i]), x->args[i]);
        if (a[i].kind == SY_ERR)
            return sym_err();
    }
    static const struct { const char *name; ExprOp op; } unary[] = {
        { "sin", XO_SIN }, { "cos", XO_COS }, { "tan", XO_TAN }, { "asin", XO_ASIN }, { "acos", XO_ACOS },
        { "atan", XO_ATAN }, { "exp", XO_EXP }, { "log", XO_LOG }, { "tanh", XO_TANH }, { "sqrt", XO_SQRT },
        { "abs", XO_ABS }, { "floor", XO_FLOOR },
    };
    for (size_t k = 0; k < sizeof unary / sizeof unary[0]; k++)
        if (!strcmp(x->str, unary[k].name) && n == 1)
            return sym_scalar(dag_unary(L->d, unary[k].op, a[0].c[0]));
    ExprDag *d = L->d;
    if (!strcmp(x->str, "sign") && n == 1) {
        ExprId zero = dag_const(d, 0);
        return sym_scalar(dag_sub(d, dag_binary(d, XO_LT, zero, a[0].c[0]), dag_binary(d, XO_LT, a[0].c[0], zero)));
    }
    if (!strcmp(x->str, "ceil") && n == 1)
        return sym_scalar(dag_neg(d, dag_unary(d, XO_FLOOR, dag_neg(d, a[0].c[0]))));
    if (!strcmp(x->str, "round") && n == 1)
        return sym_scalar(dag_unary(d, XO_FLOOR, dag_add(d, a[0].c[0], dag_const(d, 0.5))));
    if (!strcmp(x->str, "atan2") && n == 2)
        return sym_scalar(dag_binary(d, XO_ATAN2, a[0].c[0], a[1].c[0]));
    if (!strcmp(x->str, "pow") && n == 2)
        return sym_scalar(dag_pow(d, a[0].c[0], a[1].c[0]));
    if ((!strcmp(x->str, "min") || !strcmp(x->str, "max")) && n >= 2) {
        ExprId r = a[0].c[0];
        for (int i = 1; i < n; i++)
            r = dag_binary(d, x->str[1] == 'i' ? XO_MIN : XO_MAX, r, a[i].c[0]);
        return sym_scalar(r);
    }
    if (!strcmp(x->str, "clamp") && n == 3)
        return sym_scalar(dag_binary(d, XO_MIN, dag_binary(d, XO_MAX, a[0].c[0], a[1].c[0]), a[2].c[0]));
    if (!strcmp(x->str, "dot") && n == 2)
        return sym_scalar(dot(L, a[0], a[1]));
    if (!strcmp(x->str, "norm") && n == 1)
        return sym_scalar(dag_unary(d, XO_SQRT, dot(L, a[0], a[0])));
    if (!strcmp(x->str, "normalize") && n == 1) {
        ExprId len = dag_unary(d, XO_SQRT, dot(L, a[0], a[0]));
        Sym r = a[0];
        for (int i = 0; i < r.n; i++)
            r.c[i] = dag_div(d, r.c[i], len);
        return r;
    }
    if (!strcmp(x->str, "at") && n == 2 && a[0].n == 3 && a[1].n == 3) {
        /* a force and its point: 6 numbers that only a force on a body returns (derive) */
        Sym r = a[0];
        r.n = 6;
        for (int c = 0; c < 3; c++)
            r.c[3 + c] = a[1].c[c];
        return r;
    }
    if (!strcmp(x->str, "cross") && n == 2 && a[0].n == 3 && a[1].n == 3) {
        const ExprId *p = a[0].c, *q = a[1].c;
        Sym r = a[0];
        r.c[0] = dag_sub(d, dag_mul(d, p[1], q[2]), dag_mul(d, p[2], q[1]));
        r.c[1] = dag_sub(d, dag_mul(d, p[2], q[0]), dag_mul(d, p[0], q[2]));
        r.c[2] = dag_sub(d, dag_mul(d, p[0], q[1]), dag_mul(d, p[1], q[0]));
        return r;
    }
    fail(L, "line %d: `%s` cannot be used inside an element kernel", x->loc.line, x->str);
    return sym_err();
}

/* Axis k of body parameter p now: its axes at the step start (state) turned by the Cayley
 * rotation of its rotation DOFs, R0 cay(theta) e_k with
 * cay(theta) v = v + 4 / (4 + |theta|^2) (theta x v + theta x (theta x v) / 2). */
static Sym body_axis(Lower *L, int p, int k)
{
    ExprDag *d = L->d;
    ExprId th[3], v[3], zero = dag_const(d, 0.0);
    for (int c = 0; c < 3; c++) {
        th[c] = dof_input(L, p, SRD_COMP_ROT + c);
        v[c] = dag_const(d, c == k ? 1.0 : 0.0);
    }
    ExprId tv[3], ttv[3];
    for (int c = 0; c < 3; c++) { /* theta x e_k, then theta x (theta x e_k) */
        int a = (c + 1) % 3, b = (c + 2) % 3;
        tv[c] = dag_sub(d, dag_mul(d, th[a], v[b]), dag_mul(d, th[b], v[a]));
    }
    for (int c = 0; c < 3; c++) {
        int a = (c + 1) % 3, b = (c + 2) % 3;
        ttv[c] = dag_sub(d, dag_mul(d, th[a], tv[b]), dag_mul(d, th[b], tv[a]));
    }
    ExprId n2 = zero;
    for (int c = 0; c < 3; c++)
        n2 = dag_add(d, n2, dag_mul(d, th[c], th[c]));
    ExprId scale = dag_div(d, dag_const(d, 4.0), dag_add(d, dag_const(d, 4.0), n2));
    Sym r = sym_err();
    r.kind = SY_NUM;
    r.n = 3;
    for (int i = 0; i < 3; i++)
        r.c[i] = zero;
    for (int c = 0; c < 3; c++) { /* component c of the turned e_k, along axis c at the step start */
        ExprId w = dag_add(d, v[c], dag_mul(d, scale, dag_add(d, tv[c], dag_mul(d, dag_const(d, 0.5), ttv[c]))));
        for (int i = 0; i < 3; i++)
            r.c[i] = dag_add(d, r.c[i], dag_mul(d, w, state_input(L, STATE_FRAME, p, 3 * c + i)));
    }
    return r;
}

/* What nodes and bodies share: x (the node, a body's centre), x0 (reference), v (velocity at the
 * step start), m (mass); a body's rotation DOFs theta too. False when `m` is none of them. */
static bool point_member(Lower *L, int p, const char *m, bool body, Sym *r)
{
    r->n = 3;
    for (int c = 0; c < 3; c++) {
        if (!strcmp(m, "x"))
            r->c[c] = dof_input(L, p, c);
        else if (body && !strcmp(m, "theta"))
            r->c[c] = dof_input(L, p, SRD_COMP_ROT + c);
        else if (!strcmp(m, "x0"))
            r->c[c] = state_input(L, STATE_X0, p, c);
        else if (!strcmp(m, "v"))
            r->c[c] = input(L, KIN_VEL0, stencil_dof(L, p, c));
        else if (!strcmp(m, "m")) {
            r->n = 1;
            r->c[0] = state_input(L, STATE_MASS, p, 0);
            return true;
        } else
            return false;
    }
    return true;
}

/* A body's members: a point's, and e1 e2 e3 (its axes now). */
static Sym body_member(Lower *L, int p, const char *m)
{
    Sym r = sym_err();
    r.kind = SY_NUM;
    if (m[0] == 'e' && m[1] >= '1' && m[1] <= '3' && !m[2])
        return body_axis(L, p, m[1] - '1');
    if (!point_member(L, p, m, true, &r)) {
        fail(L, "a body has no member `%s`", m);
        return sym_err();
    }
    return r;
}

static Sym stencil_member(Lower *L, Sym base, const Expr *x)
{
    const char *m = x->str;
    Sym r = sym_err();
    r.kind = SY_NUM;
    int p = base.param;
    if (base.kind == SY_NODE) {
        if (!point_member(L, p, m, false, &r)) {
            fail(L, "a node has no member `%s`", m);
            return sym_err();
        }
        return r;
    }
    r.n = 1;
    if (!strcmp(m, "theta")) /* a planar model's edges do not turn about themselves */
        r.c[0] = L->model && L->model->planar ? dag_const(L->d, 0.0) : dof_input(L, p, 3);
    else if (!strcmp(m, "xi"))
        r.c[0] = dof_input(L, p, 4);
    else if (!strcmp(m, "rest"))
        r.c[0] = state_input(L, STATE_REST, p, 0);
    else if (!strcmp(m, "sign"))
        r.c[0] = state_input(L, STATE_SIGN, p, 0);
    else if (!strcmp(m, "ref_twist"))
        r.c[0] = state_input(L, STATE_REF_TWIST, p, 0);
    else if (!strcmp(m, "d1") || !strcmp(m, "d2") || !strcmp(m, "t") || !strcmp(m, "tau0") || !strcmp(m, "tau_ref")) {
        StateKind k = !strcmp(m, "tau0") ? STATE_TAU0 : !strcmp(m, "tau_ref") ? STATE_TAU_REF
                    : m[0] == 't' ? STATE_TANGENT : m[1] == '1' ? STATE_D1 : STATE_D2;
        r.n = 3;
        for (int c = 0; c < 3; c++)
            r.c[c] = state_input(L, k, p, c);
    } else {
        fail(L, "an edge has no member `%s`", m);
        return sym_err();
    }
    return r;
}

/* `R.fx` ... `R.mz` with R a reaction probe bound by name (bind_probe_data). */
static bool reaction_member(Lower *L, const Expr *x, Sym *out)
{
    int c = elab_reaction_member(x->str);
    if (c < 0 || x->a->kind != EX_NAME)
        return false;
    SymBind *b = L->scope;
    while (b && strcmp(b->name, x->a->str))
        b = b->next;
    if (!b || b->moment.kind != SY_NUM)
        return false;
    *out = sym_scalar(c < 3 ? b->v.c[c] : b->moment.c[c - 3]);
    return true;
}

static Sym lookup(Lower *L, const char *name)
{
    for (SymBind *b = L->scope; b; b = b->next) {
        if (strcmp(b->name, name))
            continue;
        if (L->prev && b->src) {
            SymBind *saved = L->scope;
            L->scope = b->next;
            Sym r = lower_expr(L, b->src);
            L->scope = saved;
            return r;
        }
        if (b->lazy) {
            if (b->busy) {
                fail(L, "`%s` depends on itself", name);
                return sym_err();
            }
            b->busy = true;
            SymBind *saved = L->scope;
            L->scope = b->next;
            b->v = lower_expr(L, b->lazy);
            L->scope = saved;
            b->lazy = NULL;
            b->busy = false;
        }
        return b->v;
    }
    if (!strcmp(name, "pi"))
        return sym_scalar(dag_const(L->d, PI));
    if (!strcmp(name, "t"))
        return sym_scalar(input(L, KIN_TIME, 0));
    if (!strcmp(name, "dt"))
        return sym_scalar(input(L, KIN_DT, 0));
    fail(L, "`%s` cannot be used inside an element kernel", name);
    return sym_err();
}

static Sym lower_node(Lower *L, const Expr *x);

/* Every lowering passes here. The recursion follows the expression into the functions and the
 * top-level lets it uses (expanded inline), so its depth is capped like evaluation's. */
static Sym lower_expr(Lower *L, const Expr *x)
{
    if (L->failed)
        return sym_err();
    if (L->expr_depth >= ELAB_MAX_EVAL_DEPTH) {
        fail(L, "line %d: expression nested too deeply (limit %d) once the functions and top-level lets it "
                "uses are expanded inline", x->loc.line, ELAB_MAX_EVAL_DEPTH);
        return sym_err();
    }
    L->expr_depth++;
    Sym r = lower_node(L, x);
    L->expr_depth--;
    return r;
}

static Sym lower_node(Lower *L, const Expr *x)
{
    ExprDag *d = L->d;
    Sym a;
    switch (x->kind) {
    case EX_NUM: return sym_scalar(dag_const(d, x->num));
    case EX_STR:
        fail(L, "line %d: strings cannot be used inside an element kernel", x->loc.line);
        return sym_err();
    case EX_NAME: return lookup(L, x->str);
    case EX_VEC: {
        Sym r = sym_err();
        r.kind = SY_NUM;
        for (int i = 0; i < x->n_args; i++) {
            Sym c = need_num(L, lower_expr(L, x->args[i]), x->args[i]);
            for (int k = 0; k < c.n && r.n < 9; k++)
                r.c[r.n++] = c.c[k];
        }
        return L->failed ? sym_err() : r;
    }
    case EX_UNIT: {
        Unit u;
        char bad[48];
        a = need_num(L, lower_expr(L, x->a), x->a);
        if (!units_parse(x->str, &u, bad, sizeof bad)) {
            fail(L, "unknown unit `%s`", bad);
            return sym_err();
        }
        for (int i = 0; i < a.n; i++)
            a.c[i] = dag_mul(d, a.c[i], dag_const(d, u.scale));
        return a;
    }
    case EX_NEG:
        a = need_num(L, lower_expr(L, x->a), x->a);
        for (int i = 0; i < a.n; i++)
            a.c[i] = dag_neg(d, a.c[i]);
        return a;
    case EX_NOT:
        a = need_num(L, lower_expr(L, x->a), x->a);
        if (a.n)
            a.c[0] = dag_unary(d, XO_NOT, a.c[0]);
        return a;
    case EX_BIN: return lower_binary(L, x);
    case EX_COND: {
        Sym c = need_num(L, lower_expr(L, x->a), x->a);
        Sym p = need_num(L, lower_expr(L, x->b), x->b);
        Sym q = need_num(L, lower_expr(L, x->c), x->c);
        if (L->failed)
            return sym_err();
        for (int i = 0; i < p.n; i++)
            p.c[i] = dag_select(d, c.c[0], p.c[i], q.c[i]);
        return p;
    }
    case EX_CALL: return lower_call(L, x);
    case EX_MEMBER:
        if (reaction_member(L, x, &a))
            return a;
        a = lower_expr(L, x->a);
        if (a.kind == SY_NODE || a.kind == SY_EDGE)
            return stencil_member(L, a, x);
        if (a.kind == SY_BODY)
            return body_member(L, a.param, x->str);
        if (a.kind == SY_NUM && a.n > 1 && a.n <= 3) {
            int c = !strcmp(x->str, "x") ? 0 : !strcmp(x->str, "y") ? 1 : 2;
            return sym_scalar(a.c[c]);
        }
        fail(L, "line %d: `.%s` cannot be used inside an element kernel", x->loc.line, x->str);
        return sym_err();
    case EX_INDEX: {
        a = need_num(L, lower_expr(L, x->a), x->a);
        if (x->b->kind != EX_NUM || x->b->num < 0 || x->b->num >= a.n) {
            fail(L, "line %d: vector indices inside kernels must be constants", x->loc.line);
            return sym_err();
        }
        return sym_scalar(a.c[(int)x->b->num]);
    }
    case EX_SLICE:
    case EX_WHERE:
    case EX_OVER:
        fail(L, "line %d: selections cannot be used inside an element kernel", x->loc.line);
        return sym_err();
    }
    return sym_err();
}

static Sym lower_body(Lower *L, Stmt **body, int n_body)
{
    for (int i = 0; i < n_body; i++) {
        if (body[i]->kind == ST_LET) {
            bind(L, body[i]->name, lower_expr(L, body[i]->value), NULL);
            L->scope->src = body[i]->value;
        }
        else if (body[i]->kind == ST_RETURN)
            return lower_expr(L, body[i]->value);
    }
    fail(L, "a body without `return`");
    return sym_err();
}

/* Top-level lets (lowered on first use) and params (run-time inputs). */
static void bind_globals(Lower *L)
{
    for (int i = 0; i < L->prog->n_stmts; i++) {
        const Stmt *s = L->prog->stmts[i];
        if (s->kind == ST_LET) {
            bind(L, s->name, sym_err(), s->value);
        } else if (s->kind == ST_PARAM || s->kind == ST_INPUT) {
            int k = 0;
            while (k < L->model->n_params && strcmp(L->model->params[k].name, s->name))
                k++;
            if (k < L->model->n_params)
                bind(L, s->name, sym_scalar(input(L, KIN_PARAM, k)), NULL);
        }
    }
    L->globals = L->scope;
}

const Stmt *lower_find_definition(const Program *prog, const char *kind)
{
    for (int i = 0; i < prog->n_stmts; i++) {
        const Stmt *s = prog->stmts[i];
        if ((s->kind == ST_ENERGY || s->kind == ST_FORCE || s->kind == ST_CONSTRAINT) && !strcmp(s->name, kind))
            return s;
    }
    return NULL;
}

/* ---- differentiation in reduced coordinates ----
 * Most energies see their DOFs only through a few affine combinations: a rod's bend-twist
 * through its two edge vectors and signed twist angles (8 numbers for 11 DOFs), a stretch
 * through one edge vector. Differentiating with respect to those coordinates z = A q and
 * mapping back (g_q = A^T g_z, H_q = A^T H_z A, with A constant in q) gives the same exact
 * derivatives with far fewer operations. */

typedef struct Affinity {
    unsigned char *dep;    /* node depends on a DOF */
    unsigned char *affine; /* node is affine in the DOFs with DOF-independent coefficients */
} Affinity;

static Affinity classify(Lower *L, ExprId root)
{
    int n = root + 1;
    Affinity a = { calloc((size_t)n + 1, 1), calloc((size_t)n + 1, 1) };
    for (int id = 0; id < n; id++) {
        const ExprNode *x = dag_node(L->d, id);
        bool da = x->a >= 0 && a.dep[x->a], db = x->b >= 0 && a.dep[x->b], dc = x->c >= 0 && a.dep[x->c];
        bool aa = x->a < 0 || a.affine[x->a], ab = x->b < 0 || a.affine[x->b];
        switch (x->op) {
        case XO_CONST: a.affine[id] = 1; break;
        case XO_INPUT:
            a.dep[id] = L->inputs[x->index].cls == KIN_DOF;
            a.affine[id] = 1;
            break;
        case XO_ADD: a.dep[id] = da || db; a.affine[id] = aa && ab; break;
        case XO_MUL: a.dep[id] = da || db; a.affine[id] = (!da && ab) || (!db && aa); break;
        case XO_NEG: a.dep[id] = da; a.affine[id] = aa; break;
        case XO_DIV: a.dep[id] = da || db; a.affine[id] = aa && !db; break;
        default:
            a.dep[id] = da || db || dc;
            a.affine[id] = !a.dep[id];
        }
    }
    return a;
}

/* Rebuilds node id with its operands mapped (the DAG simplifies as it rebuilds). */
static ExprId rebuild(ExprDag *d, const ExprNode *x, const ExprId *map)
{
    ExprId a = x->a >= 0 ? map[x->a] : -1, b = x->b >= 0 ? map[x->b] : -1, c = x->c >= 0 ? map[x->c] : -1;
    switch ((ExprOp)x->op) {
    case XO_ADD: return dag_add(d, a, b);
    case XO_MUL: return dag_mul(d, a, b);
    case XO_DIV: return dag_div(d, a, b);
    case XO_NEG: return dag_neg(d, a);
    case XO_POWI: return dag_powi(d, a, x->index);
    case XO_POW: return dag_pow(d, a, b);
    case XO_SELECT: return dag_select(d, a, b, c);
    case XO_ATAN2: case XO_MIN: case XO_MAX: case XO_LT: case XO_LE: case XO_EQ: case XO_NE: case XO_AND:
    case XO_OR: return dag_binary(d, (ExprOp)x->op, a, b);
    default: return dag_unary(d, (ExprOp)x->op, a);
    }
}

/* Coordinates whose rows of A are numbers and a combination of earlier such rows (a
 * triangle's third edge vector is minus the sum of the other two) are not independent: dep[j]
 * is then set and comb[j * m + k] holds the coefficients over the independent rows k. Rows
 * with a non-constant entry (a sign read from the stencil) always count as independent. */
static int find_dependent_rows(const ExprDag *d, const ExprId *A, int m, int nd, unsigned char *dep, double *comb)
{
    double *basis = calloc((size_t)m * (size_t)nd + 1, sizeof(double)); /* echelon rows */
    double *over = calloc((size_t)m * (size_t)m + 1, sizeof(double));  /* each in original rows */
    int *pivot = calloc((size_t)m + 1, sizeof(int)), n_basis = 0, independent = 0;
    double *w = calloc((size_t)nd + 1, sizeof(double)), *c = calloc((size_t)m + 1, sizeof(double));
    for (int j = 0; j < m; j++) {
        bool numeric = true;
        for (int k = 0; k < nd && numeric; k++) {
            const ExprNode *x = dag_node(d, A[j * nd + k]);
            numeric = x->op == XO_CONST;
            w[k] = numeric ? x->value : 0;
        }
        if (!numeric) {
            independent++;
            continue;
        }
        /* w = row j minus its projections on the basis; c = that combination of rows */
        memset(c, 0, sizeof(double) * (size_t)m);
        c[j] = 1;
        for (int b = 0; b < n_basis; b++) {
            double f = w[pivot[b]] / basis[b * nd + pivot[b]];
            if (f == 0)
                continue;
            for (int k = 0; k < nd; k++)
                w[k] -= f * basis[b * nd + k];
            for (int r = 0; r < m; r++)
                c[r] -= f * over[b * m + r];
        }
        int p = 0;
        for (int k = 1; k < nd; k++)
            if (fabs(w[k]) > fabs(w[p]))
                p = k;
        if (fabs(w[p]) > 1e-12) {
            memcpy(&basis[n_basis * nd], w, sizeof(double) * (size_t)nd);
            memcpy(&over[n_basis * m], c, sizeof(double) * (size_t)m);
            pivot[n_basis++] = p;
            independent++;
            continue;
        }
        /* 0 = row j + sum c[r] row r over earlier independent rows: row j = -sum c[r] row r */
        dep[j] = 1;
        for (int r = 0; r < m; r++)
            comb[j * m + r] = r == j ? 0 : -c[r];
    }
    free(basis);
    free(over);
    free(pivot);
    free(w);
    free(c);
    return independent;
}

/* Energy derivatives through the reduced coordinates. Returns false (and does nothing) when
 * the energy has no fewer independent affine coordinates than DOFs. */
static bool derive_reduced(Lower *L, LoweredElement *out, ExprId f, const int *wrt)
{
    int nd = L->nd;
    Affinity af = classify(L, f);
    int n = f + 1;
    unsigned char *reach = calloc((size_t)n + 1, 1), *front = calloc((size_t)n + 1, 1);
    reach[f] = 1;
    int m = 0;
    for (int id = f; id >= 0; id--) {
        if (!reach[id])
            continue;
        const ExprNode *x = dag_node(L->d, id);
        bool inner = af.dep[id] && !af.affine[id];
        ExprId kids[3] = { x->a, x->b, x->c };
        for (int k = 0; k < 3; k++) {
            if (kids[k] < 0)
                continue;
            reach[kids[k]] = 1;
            if (inner && af.dep[kids[k]] && af.affine[kids[k]] && !front[kids[k]]) {
                front[kids[k]] = 1;
                m++;
            }
        }
    }
    if (af.dep[f] && af.affine[f] && !front[f]) {
        front[f] = 1;
        m++;
    }
    ExprId *z = calloc((size_t)m + 1, sizeof(ExprId));
    for (int id = 0, j = 0; id < n; id++)
        if (front[id])
            z[j++] = id;
    /* A[j][k] = d z_j / d q_k: constants or signs */
    ExprId *A = calloc((size_t)m * (size_t)nd + 1, sizeof(ExprId));
    unsigned char *dep = calloc((size_t)m + 1, 1);
    double *comb = calloc((size_t)m * (size_t)m + 1, sizeof(double));
    int r = 0;
    if (m > 0) {
        diff_jacobian(L->d, z, m, wrt, nd, A);
        r = find_dependent_rows(L->d, A, m, nd, dep, comb);
    }
    bool worth = r > 0 && r < nd;
    if (worth) {
        int *zslot = calloc((size_t)m + 1, sizeof(int)), *row = calloc((size_t)r + 1, sizeof(int));
        ExprId *map = calloc((size_t)n + 1, sizeof(ExprId));
        for (int j = 0, i = 0; j < m; j++)
            if (!dep[j]) {
                ExprId in = input(L, KIN_EXPR, z[j]);
                zslot[i] = dag_node(L->d, in)->index;
                row[i++] = j;
                map[z[j]] = in;
            }
        /* A dependent coordinate is its combination of independent ones plus the difference
         * of the two, which does not change with the DOFs. That offset is itself an input
         * computed with the coordinates, once per group of instances, and a constant to the
         * derivatives (it is not one of zslot). */
        for (int j = 0; j < m; j++) {
            if (!dep[j])
                continue;
            ExprId v = dag_const(L->d, 0), offset = z[j];
            for (int k = 0; k < m; k++)
                if (comb[j * m + k] != 0) {
                    ExprId c = dag_const(L->d, comb[j * m + k]);
                    v = dag_add(L->d, v, dag_mul(L->d, c, map[z[k]]));
                    offset = dag_sub(L->d, offset, dag_mul(L->d, c, z[k]));
                }
            map[z[j]] = dag_add(L->d, v, input(L, KIN_EXPR, offset));
        }
        /* f with the coordinates as inputs */
        for (int id = 0; id < n; id++) {
            if (!reach[id] || front[id])
                continue;
            const ExprNode x = *dag_node(L->d, id);
            map[id] = x.op == XO_CONST || x.op == XO_INPUT ? id : rebuild(L->d, &x, map);
        }
        ExprId fz = map[f];
        ExprId *gz = calloc((size_t)r + 1, sizeof(ExprId));
        ExprId *hz = calloc((size_t)(r * (r + 1) / 2) + 1, sizeof(ExprId));
        diff_hessian(L->d, fz, zslot, r, gz, hz);
        ExprId zero = dag_const(L->d, 0);
        for (int k = 0; k < nd; k++) {
            ExprId g = zero;
            for (int i = 0; i < r; i++)
                g = dag_add(L->d, g, dag_mul(L->d, A[row[i] * nd + k], gz[i]));
            out->res[k] = g;
        }
        /* H_q = A^T H_z A over the independent rows, through HA = H_z A (r x nd) */
        ExprId *HA = calloc((size_t)r * (size_t)nd + 1, sizeof(ExprId));
        for (int i = 0; i < r; i++)
            for (int l = 0; l < nd; l++) {
                ExprId h = zero;
                for (int j = 0; j < r; j++)
                    h = dag_add(L->d, h, dag_mul(L->d, hz[diff_upper_index(r, i, j)], A[row[j] * nd + l]));
                HA[i * nd + l] = h;
            }
        for (int k = 0; k < nd; k++)
            for (int l = k; l < nd; l++) {
                ExprId h = zero;
                for (int i = 0; i < r; i++)
                    h = dag_add(L->d, h, dag_mul(L->d, A[row[i] * nd + k], HA[i * nd + l]));
                out->jac[k * nd + l] = h;
            }
        free(gz);
        free(hz);
        free(HA);
        free(zslot);
        free(row);
        free(map);
    }
    free(af.dep);
    free(af.affine);
    free(reach);
    free(front);
    free(z);
    free(A);
    free(dep);
    free(comb);
    return worth;
}

/* A force F at point p on the first parameter, a body: its generalised force on the body's six
 * DOFs is the virtual work of F on the body's material point at p, p_b = x + sum_i r_i e_i with
 * r_i = (p - x) . e_i held: F on the position rows, sum_i r_i (d e_i / d theta_k) . F on the
 * rotation rows, both entering the residual with a minus sign. (Differentiating p itself would
 * give nothing for a point that is not the body's, such as a node it touches.) The Jacobian is
 * that of those rows in every stencil DOF, so the point's motion is in it too. The body's DOFs
 * are stencil DOFs 0..5 (lower_element registers them first). */
static void generalised_rows(Lower *L, const Sym *result, const int *wrt, ExprId rows[6])
{
    ExprDag *d = L->d;
    ExprId de[27]; /* d e_i[c] / d theta_k at 9 i + 3 c + k */
    Sym e[3];
    ExprId r[3];
    for (int i = 0; i < 3; i++) {
        e[i] = body_axis(L, 0, i);
        diff_jacobian(d, e[i].c, 3, wrt + 3, 3, &de[9 * i]);
        r[i] = dag_const(d, 0.0);
        for (int c = 0; c < 3; c++)
            r[i] = dag_add(d, r[i], dag_mul(d, dag_sub(d, result->c[3 + c], dof_input(L, 0, c)), e[i].c[c]));
    }
    for (int c = 0; c < 3; c++)
        rows[c] = dag_neg(d, result->c[c]);
    for (int k = 0; k < 3; k++) {
        ExprId w = dag_const(d, 0.0);
        for (int i = 0; i < 3; i++)
            for (int c = 0; c < 3; c++)
                w = dag_add(d, w, dag_mul(d, dag_mul(d, r[i], de[9 * i + 3 * c + k]), result->c[c]));
        rows[3 + k] = dag_neg(d, w);
    }
}

static void force_at_point(Lower *L, LoweredElement *out, Sym result, const int *wrt)
{
    int nd = L->nd;
    ExprId rows[6], *jac = calloc((size_t)(6 * nd) + 1, sizeof(ExprId));
    generalised_rows(L, &result, wrt, rows);
    diff_jacobian(L->d, rows, 6, wrt, nd, jac);
    for (int k = 0; k < nd; k++)
        out->res[k] = -1;
    for (int k = 0; k < 6; k++) {
        out->res[k] = rows[k];
        for (int l = 0; l < nd; l++)
            out->jac[k * nd + l] = jac[k * nd + l];
    }
    free(jac);
    out->value = -1;
    out->symmetric = false;
}

static void derive(Lower *L, LoweredElement *out, Sym result)
{
    int nd = L->nd;
    int *wrt = calloc((size_t)nd + 1, sizeof(int));
    for (int k = 0; k < nd; k++) {
        ExprId in = input(L, KIN_DOF, k);
        wrt[k] = dag_node(L->d, in)->index;
    }
    out->res = calloc((size_t)nd + 1, sizeof(ExprId));
    out->jac = calloc((size_t)nd * (size_t)nd + 1, sizeof(ExprId));
    for (int k = 0; k < nd * nd; k++)
        out->jac[k] = -1;
    if (!out->is_force) {
        if (!derive_reduced(L, out, result.c[0], wrt)) {
            ExprId *hess = calloc((size_t)(nd * (nd + 1) / 2) + 1, sizeof(ExprId));
            diff_hessian(L->d, result.c[0], wrt, nd, out->res, hess);
            for (int k = 0; k < nd; k++)
                for (int l = k; l < nd; l++)
                    out->jac[k * nd + l] = hess[diff_upper_index(nd, k, l)];
            free(hess);
        }
        out->value = result.c[0];
        out->symmetric = true;
    } else if (result.n == 6) {
        force_at_point(L, out, result, wrt);
    } else {
        /* A force F on the first node enters the residual as -F. */
        ExprId f[3];
        for (int c = 0; c < 3; c++)
            f[c] = dag_neg(L->d, result.c[c]);
        ExprId *jac = calloc((size_t)(3 * nd) + 1, sizeof(ExprId));
        diff_jacobian(L->d, f, 3, wrt, nd, jac);
        for (int k = 0; k < nd; k++)
            out->res[k] = -1;
        for (int c = 0; c < 3; c++) {
            int row = stencil_dof(L, 0, c);
            out->res[row] = f[c];
            for (int l = 0; l < nd; l++)
                out->jac[row * nd + l] = jac[c * nd + l];
        }
        free(jac);
        out->value = -1;
        out->symmetric = false;
    }
    free(wrt);
    out->ops_value = out->value >= 0 ? dag_count_ops(L->d, &out->value, 1) : dag_count_ops(L->d, result.c, 3);
    out->ops_grad = dag_count_ops(L->d, out->res, nd);
    int n_jac = 0;
    ExprId *all = calloc((size_t)nd * (size_t)nd + 1, sizeof(ExprId));
    for (int k = 0; k < nd * nd; k++)
        if (out->jac[k] >= 0)
            all[n_jac++] = out->jac[k];
    out->ops_jac = dag_count_ops(L->d, all, n_jac);
    free(all);
}

static void lower_begin(Lower *L, const Program *prog, const srd_model *model, char *err, size_t err_n)
{
    memset(L, 0, sizeof *L);
    L->d = dag_new();
    L->prog = prog;
    L->model = model;
    L->err = err;
    L->err_n = err_n;
}

/* A constraint c(q) = 0 of k components enters as the energy lambda . c(q), lambda being the
 * instance's k multiplier DOFs: stationarity gives c = 0 on the multipliers' rows and the
 * constraint forces (grad c)^T lambda on the others, with the exact Hessian of both. */
static Sym multiplier_energy(Lower *L, const Stmt *def, Sym c)
{
    if (c.kind != SY_NUM || c.n < 1 || c.n > SRD_MAX_MULTIPLIERS) {
        fail(L, "constraint `%s` must give 1 to %d numbers", def->name, SRD_MAX_MULTIPLIERS);
        return sym_err();
    }
    ExprId e = dag_const(L->d, 0.0);
    for (int i = 0; i < c.n; i++)
        e = dag_add(L->d, e, dag_mul(L->d, dof_input(L, -1, SRD_COMP_LAMBDA + i), c.c[i]));
    return sym_scalar(e);
}

bool lower_element(const Program *prog, const Program *model_prog, const srd_model *model, const Stmt *def,
                   const srd_elemset *set, LoweredElement *out, char *err, size_t err_n)
{
    memset(out, 0, sizeof *out);
    Lower L;
    lower_begin(&L, prog, model, err, err_n);
    L.model_prog = model_prog;
    L.set = set;
    L.def = def;
    bind_globals(&L);
    /* Node DOFs first, in parameter order, so stencils read like their signature; a body's
     * rotation follows its position. */
    for (int p = 0; p < def->n_stencil; p++) {
        bool body = !strcmp(def->stencil[p].kind, "body");
        if (body || !strcmp(def->stencil[p].kind, "node"))
            for (int c = 0; c < (body ? 6 : 3); c++)
                stencil_dof(&L, p, c < 3 ? c : SRD_COMP_ROT + c - 3);
    }
    for (int p = 0; p < def->n_stencil; p++) {
        Sym s = sym_err();
        const char *kind = def->stencil[p].kind;
        s.kind = !strcmp(kind, "node") ? SY_NODE : !strcmp(kind, "body") ? SY_BODY : SY_EDGE;
        s.param = p;
        bind(&L, def->stencil[p].name, s, NULL);
    }
    for (int k = 0; k < def->n_params; k++) {
        int col = srd_elemset_column(set, def->params[k].name);
        if (col < 0) {
            fail(&L, "element set `%s` has no value for parameter `%s`", set->kind, def->params[k].name);
            break;
        }
        bind(&L, def->params[k].name, sym_scalar(data_input(&L, col)), NULL);
    }
    Sym r = L.failed ? sym_err() : def->value ? lower_expr(&L, def->value) : lower_body(&L, def->body, def->n_body);
    if (def->kind == ST_CONSTRAINT && !L.failed)
        r = multiplier_energy(&L, def, r);
    out->is_force = def->kind == ST_FORCE;
    bool on_body = out->is_force && def->n_stencil > 0 && !strcmp(def->stencil[0].kind, "body");
    if (!L.failed && on_body && (r.kind != SY_NUM || r.n != 6))
        fail(&L, "`%s` acts on body `%s`: return the force with its point, `at(force, point)`", def->name,
             def->stencil[0].name);
    else if (!L.failed && !on_body && (r.kind != SY_NUM || r.n != (out->is_force ? 3 : 1)))
        fail(&L, "`%s` does not give a %s", def->name, out->is_force ? "3-vector force" : "scalar energy");
    if (!L.failed)
        derive(&L, out, r);
    unbind_to(&L, NULL);
    memo_free(&L);
    if (L.failed) {
        dag_free(L.d);
        free(L.inputs);
        lowered_free(out);
        return false;
    }
    out->kind = strdup(set->kind);
    out->dag = L.d;
    out->inputs = L.inputs;
    out->n_inputs = L.n_inputs;
    out->nd = L.nd;
    out->dofs = malloc(sizeof *out->dofs * (size_t)(L.nd + 1));
    memcpy(out->dofs, L.dofs, sizeof *out->dofs * (size_t)L.nd);
    out->n_state = L.n_state;
    out->state = malloc(sizeof *out->state * (size_t)(L.n_state + 1));
    memcpy(out->state, L.state, sizeof *out->state * (size_t)L.n_state);
    return true;
}

void lowered_free(LoweredElement *le)
{
    free(le->kind);
    if (le->dag)
        dag_free(le->dag);
    free(le->inputs);
    free(le->dofs);
    free(le->state);
    free(le->res);
    free(le->jac);
    memset(le, 0, sizeof *le);
}

/* The first and second derivatives of the n values in r with respect to time, after them:
 * prescribed motion needs the velocity and acceleration it implies, exactly. */
static void time_rates(Lower *L, Sym *r, int n)
{
    ExprId t = input(L, KIN_TIME, 0);
    int wrt = dag_node(L->d, t)->index;
    ExprId d1[3], d2[3];
    diff_jacobian(L->d, r->c, n, &wrt, 1, d1);
    diff_jacobian(L->d, d1, n, &wrt, 1, d2);
    for (int c = 0; c < n; c++) {
        r->c[n + c] = d1[c];
        r->c[2 * n + c] = d2[c];
    }
    r->n = 3 * n;
}

/* The kernel of a run-time value r (n_out components) lowered in L: its rows are the components,
 * with no Jacobian. Frees L's scope; false when the lowering failed. */
static bool value_kernel(Lower *L, const char *kind, Sym r, int n_out, LoweredElement *out)
{
    unbind_to(L, NULL);
    memo_free(L);
    if (L->failed) {
        dag_free(L->d);
        free(L->inputs);
        return false;
    }
    out->kind = strdup(kind);
    out->dag = L->d;
    out->inputs = L->inputs;
    out->n_inputs = L->n_inputs;
    out->nd = n_out;
    out->dofs = calloc((size_t)n_out + 1, sizeof *out->dofs);
    out->state = calloc(1, sizeof *out->state);
    out->value = -1;
    out->res = calloc((size_t)n_out + 1, sizeof(ExprId));
    out->jac = calloc((size_t)n_out * (size_t)n_out + 1, sizeof(ExprId));
    for (int c = 0; c < n_out; c++)
        out->res[c] = r.c[c];
    for (int k = 0; k < n_out * n_out; k++)
        out->jac[k] = -1;
    out->ops_grad = dag_count_ops(L->d, out->res, n_out);
    return true;
}

bool lower_schedule(const Program *prog, const srd_model *model, const char *kind, const RunExpr *run, int n_value,
                    bool rates, LoweredElement *out, char *err, size_t err_n)
{
    const Expr *value = run->expr;
    memset(out, 0, sizeof *out);
    Lower L;
    lower_begin(&L, prog, model, err, err_n);
    bind_globals(&L);
    bind_captured(&L, run->captured, run->n_captured);
    static const char *columns[SCHEDULE_N_DATA] = { "s", "x", "y", "z" };
    for (int c = 0; c < SCHEDULE_N_DATA; c++)
        bind(&L, columns[c], sym_scalar(input(&L, KIN_DATA, c)), NULL);
    Sym r = lower_expr(&L, value);
    if (!L.failed && (r.kind != SY_NUM || r.n != n_value))
        fail(&L, "line %d: the value does not have %d component%s", value->loc.line, n_value, n_value == 1 ? "" : "s");
    if (!L.failed && rates)
        time_rates(&L, &r, n_value);
    return value_kernel(&L, kind, r, rates ? 3 * n_value : n_value, out);
}

/* Binds probe p by name to its n values in data slots first, first + 1, ...: a reaction's force
 * (n = 6: its moment after it, for `.mx`, `.my`, `.mz`). */
static void bind_probe_data(Lower *L, const srd_probe *p, int first, int n)
{
    bool reaction = p->kind == SRD_PROBE_REACTION;
    Sym v = sym_err();
    v.kind = SY_NUM;
    v.n = reaction ? 3 : n;
    for (int j = 0; j < v.n; j++)
        v.c[j] = input(L, KIN_DATA, first + j);
    bind(L, p->name, v, NULL);
    if (!reaction)
        return;
    L->scope->moment = v;
    for (int j = 0; j < 3; j++)
        L->scope->moment.c[j] = input(L, KIN_DATA, first + 3 + j);
}

bool lower_control_step(const Program *prog, const srd_model *model, const char *kind, int step, LoweredElement *out,
                        char *err, size_t err_n)
{
    const srd_control *c = &model->control;
    const srd_control_step *st = &c->steps[step];
    const RunExpr *run = elab_run_expr(model, st->expr);
    memset(out, 0, sizeof *out);
    Lower L;
    lower_begin(&L, prog, model, err, err_n);
    bind_globals(&L);
    bind_captured(&L, run->captured, run->n_captured);
    for (int k = 0; k < c->n_slots; k++) {
        if (c->slots[k].kind == SRD_CONTROL_PROBE) {
            bind_probe_data(&L, &model->simulate.probes[c->slots[k].probe], c->slots[k].first, c->slots[k].n);
            continue;
        }
        Sym v = sym_err();
        v.kind = SY_NUM;
        v.n = c->slots[k].n;
        for (int j = 0; j < v.n; j++)
            v.c[j] = input(&L, KIN_DATA, c->slots[k].first + j);
        bind(&L, c->slots[k].name, v, NULL);
    }
    Sym r = lower_expr(&L, run->expr);
    if (!L.failed && (r.kind != SY_NUM || r.n != st->n))
        fail(&L, "line %d: the value does not have %d component%s", run->expr->loc.line, st->n, st->n == 1 ? "" : "s");
    return value_kernel(&L, kind, r, st->n, out);
}

/* Binds the probes of the objective's analysis to data slots 0, 1, ... (a node probe's three
 * components in a row, a reaction's force and moment); returns the number of slots. */
static int bind_probe_slots(Lower *L)
{
    const srd_analysis *a = srd_objective_analysis(L->model);
    int first = 0;
    for (int i = 0; i < a->n_probes; i++) {
        const srd_probe *p = &a->probes[i];
        if (!elab_objective_probe_width(p))
            continue;
        bind_probe_data(L, p, first, elab_objective_probe_width(p));
        first += elab_objective_probe_width(p);
    }
    return first;
}

static bool lower_scalar_of_probes(const Program *prog, const srd_model *model, int expr, const char *kind,
                                   LoweredElement *out, char *err, size_t err_n)
{
    const RunExpr *run = elab_run_expr(model, expr);
    memset(out, 0, sizeof *out);
    Lower L;
    lower_begin(&L, prog, model, err, err_n);
    bind_globals(&L);
    bind_captured(&L, run->captured, run->n_captured);
    L.n_probe_slots = bind_probe_slots(&L);
    Sym r = lower_expr(&L, run->expr);
    if (!L.failed && (r.kind != SY_NUM || r.n != 1))
        fail(&L, "line %d: the %s is not a scalar", run->expr->loc.line, kind);
    return value_kernel(&L, kind, r, 1, out);
}

bool lower_objective(const Program *prog, const srd_model *model, LoweredElement *out, char *err, size_t err_n)
{
    return lower_scalar_of_probes(prog, model, model->optimize.objective, "objective", out, err, err_n);
}

bool lower_objective_term(const Program *prog, const srd_model *model, int k, LoweredElement *out, char *err,
                          size_t err_n)
{
    return lower_scalar_of_probes(prog, model, model->optimize.terms[k].expr, "objective's term", out, err, err_n);
}
