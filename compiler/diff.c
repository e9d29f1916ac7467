/* diff.c — reverse-mode symbolic differentiation inside the hash-consed DAG: adjoints are DAG expressions, so derivatives share subexpressions with the value and with each other. */
#include "diff.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* One reverse sweep from a root over the nodes it reaches. New nodes made while sweeping are
 * younger than the root, so the arrays indexed by the old ids stay valid. */
typedef struct Sweep {
    ExprDag *d;
    ExprId   root;
    ExprId  *order;  /* the reachable nodes in increasing id order (children first) */
    int32_t  count;
    uint8_t *active; /* the node's value depends differentiably on an input in wrt */
    ExprId  *adj;    /* the node's adjoint so far; -1 while it is zero (set for reachable nodes) */
} Sweep;

/* wrt slots sorted, each with its position in the caller's array (a slot may be listed twice). */
typedef struct WrtEntry {
    int slot, k;
} WrtEntry;

static void *alloc_or_die(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size);
    if (!p) {
        fputs("srdc: out of memory (differentiation)\n", stderr);
        abort();
    }
    return p;
}

static int wrt_order(const void *pa, const void *pb)
{
    const WrtEntry *a = pa, *b = pb;
    if (a->slot != b->slot)
        return a->slot < b->slot ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}

/* First entry with this slot, or -1. */
static int find_slot(const WrtEntry *w, int n, int slot)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (w[mid].slot < slot)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && w[lo].slot == slot ? lo : -1;
}

/* Ops whose derivative is zero wherever it exists: nothing flows back through them. */
static bool has_zero_derivative(ExprOp op) { return (op >= XO_LT && op <= XO_NOT) || op == XO_FLOOR; }

/* Marks which nodes depend on a wrt input through differentiable paths, and records the node of
 * each wrt input (input_node[k], -1 when f does not use it). Increasing ids visit children first. */
static void mark_active(Sweep *s, const WrtEntry *w, int n_wrt, ExprId *input_node)
{
    for (int k = 0; k < n_wrt; k++)
        input_node[k] = -1;
    for (int32_t i = 0; i < s->count; i++) {
        ExprId id = s->order[i];
        const ExprNode *x = dag_node(s->d, id);
        ExprOp op = (ExprOp)x->op;
        bool on = false;
        if (op == XO_INPUT) {
            for (int e = find_slot(w, n_wrt, x->index); e >= 0 && e < n_wrt && w[e].slot == x->index; e++) {
                input_node[w[e].k] = id;
                on = true;
            }
        } else if (op == XO_SELECT) { /* the condition only chooses */
            on = s->active[x->b] || s->active[x->c];
        } else if (op != XO_CONST && !has_zero_derivative(op)) {
            on = s->active[x->a] || (x->b >= 0 && s->active[x->b]) || (x->c >= 0 && s->active[x->c]);
        }
        s->active[id] = on;
    }
}

static void accumulate(Sweep *s, ExprId child, ExprId contribution)
{
    s->adj[child] = s->adj[child] < 0 ? contribution : dag_add(s->d, s->adj[child], contribution);
}

/* g * local: the local derivative depends only on the primal values, so it is one node shared by
 * every sweep that passes through here (the gradient and each Hessian row). */
static void accumulate_scaled(Sweep *s, ExprId child, ExprId g, ExprId local)
{
    accumulate(s, child, dag_mul(s->d, g, local));
}

static bool active(const Sweep *s, ExprId id) { return id >= 0 && s->active[id]; }

/* d/da of the unary elementary function f = op(a), as a DAG expression in a and f. */
static ExprId unary_local_derivative(ExprDag *d, ExprOp op, ExprId a, ExprId f)
{
    ExprId one = dag_const(d, 1.0);
    switch (op) {
    case XO_SQRT: return dag_div(d, dag_const(d, 0.5), f);
    case XO_EXP: return f;
    case XO_SIN: return dag_unary(d, XO_COS, a);
    case XO_COS: return dag_neg(d, dag_unary(d, XO_SIN, a));
    case XO_TAN: return dag_add(d, one, dag_powi(d, f, 2));
    case XO_TANH: return dag_sub(d, one, dag_powi(d, f, 2));
    case XO_ASIN: return dag_div(d, one, dag_unary(d, XO_SQRT, dag_sub(d, one, dag_powi(d, a, 2))));
    case XO_ACOS: return dag_div(d, dag_const(d, -1.0), dag_unary(d, XO_SQRT, dag_sub(d, one, dag_powi(d, a, 2))));
    case XO_ATAN: return dag_div(d, one, dag_add(d, one, dag_powi(d, a, 2)));
    /* sign(a), taking +1 at the kink */
    case XO_ABS: return dag_select(d, dag_binary(d, XO_LT, a, dag_const(d, 0.0)), dag_const(d, -1.0), one);
    default: return -1;
    }
}

/* Routes g to the operands of a comparison-driven choice: `when` true -> a, false -> b. */
static void propagate_choice(Sweep *s, ExprId when, ExprId a, ExprId b, ExprId g)
{
    ExprId zero = dag_const(s->d, 0.0);
    if (active(s, a))
        accumulate(s, a, dag_select(s->d, when, g, zero));
    if (active(s, b))
        accumulate(s, b, dag_select(s->d, when, zero, g));
}

static void propagate_pow(Sweep *s, ExprId f, ExprId a, ExprId b, ExprId g)
{
    ExprDag *d = s->d;
    if (active(s, a)) /* b a^(b-1): also right at a = 0 for b >= 1 */
        accumulate_scaled(s, a, g, dag_mul(d, b, dag_pow(d, a, dag_add(d, b, dag_const(d, -1.0)))));
    if (active(s, b)) /* log(a) a^b, with a > 0 */
        accumulate_scaled(s, b, g, dag_mul(d, dag_unary(d, XO_LOG, a), f));
}

static void propagate_atan2(Sweep *s, ExprId a, ExprId b, ExprId g)
{
    ExprDag *d = s->d;
    ExprId r2 = dag_add(d, dag_powi(d, a, 2), dag_powi(d, b, 2));
    if (active(s, a))
        accumulate_scaled(s, a, g, dag_div(d, b, r2));
    if (active(s, b))
        accumulate_scaled(s, b, g, dag_neg(d, dag_div(d, a, r2)));
}

/* Adds node f's contributions (its adjoint is g) to the adjoints of its active operands. */
static void propagate(Sweep *s, ExprId f, ExprId g)
{
    ExprDag *d = s->d;
    ExprNode x = *dag_node(d, f); /* a copy: building may move the node array */
    ExprOp op = (ExprOp)x.op;
    switch (op) {
    case XO_ADD:
        if (active(s, x.a))
            accumulate(s, x.a, g);
        if (active(s, x.b))
            accumulate(s, x.b, g);
        break;
    case XO_MUL:
        if (active(s, x.a))
            accumulate_scaled(s, x.a, g, x.b);
        if (active(s, x.b))
            accumulate_scaled(s, x.b, g, x.a);
        break;
    case XO_DIV:
        if (active(s, x.a))
            accumulate(s, x.a, dag_div(d, g, x.b));
        if (active(s, x.b)) /* d(a/b)/db = -(a/b)/b */
            accumulate_scaled(s, x.b, g, dag_neg(d, dag_div(d, f, x.b)));
        break;
    case XO_NEG: accumulate(s, x.a, dag_neg(d, g)); break;
    case XO_POWI:
        accumulate_scaled(s, x.a, g, dag_mul(d, dag_const(d, x.index), dag_powi(d, x.a, x.index - 1)));
        break;
    case XO_POW: propagate_pow(s, f, x.a, x.b, g); break;
    case XO_LOG: accumulate(s, x.a, dag_div(d, g, x.a)); break;
    case XO_ATAN2: propagate_atan2(s, x.a, x.b, g); break;
    case XO_MIN: propagate_choice(s, dag_binary(d, XO_LE, x.a, x.b), x.a, x.b, g); break;
    case XO_MAX: propagate_choice(s, dag_binary(d, XO_LE, x.b, x.a), x.a, x.b, g); break;
    case XO_SELECT: propagate_choice(s, x.a, x.b, x.c, g); break;
    default:
        if (op >= XO_SQRT && op <= XO_ABS)
            accumulate_scaled(s, x.a, g, unary_local_derivative(d, op, x.a, f));
        break; /* constants, inputs and zero-derivative ops pass nothing on */
    }
}

void diff_gradient(ExprDag *d, ExprId f, const int *wrt, int n_wrt, ExprId *grad)
{
    if (n_wrt <= 0)
        return;
    if (!dag_node(d, f)) {
        for (int k = 0; k < n_wrt; k++)
            grad[k] = -1;
        return;
    }
    WrtEntry *w = alloc_or_die((size_t)n_wrt, sizeof *w);
    for (int k = 0; k < n_wrt; k++)
        w[k] = (WrtEntry){ .slot = wrt[k], .k = k };
    qsort(w, (size_t)n_wrt, sizeof *w, wrt_order);

    Sweep s = { .d = d, .root = f };
    int32_t limit;
    s.order = dag_reachable(d, &f, 1, &s.count, &limit);
    s.active = alloc_or_die((size_t)f + 1, 1);
    s.adj = alloc_or_die((size_t)f + 1, sizeof *s.adj);
    ExprId *input_node = alloc_or_die((size_t)n_wrt, sizeof *input_node);
    mark_active(&s, w, n_wrt, input_node);

    for (int32_t i = 0; i < s.count; i++)
        s.adj[s.order[i]] = -1;
    if (s.active[f])
        s.adj[f] = dag_const(d, 1.0);
    /* Decreasing ids: every parent is finished before its children are visited. */
    for (int32_t i = s.count - 1; i >= 0; i--) {
        ExprId id = s.order[i];
        if (s.adj[id] >= 0 && s.active[id] && dag_node(d, id)->op != XO_INPUT)
            propagate(&s, id, s.adj[id]);
    }

    ExprId zero = dag_const(d, 0.0);
    for (int k = 0; k < n_wrt; k++)
        grad[k] = input_node[k] >= 0 && s.adj[input_node[k]] >= 0 ? s.adj[input_node[k]] : zero;
    free(input_node);
    free(s.order);
    free(s.adj);
    free(s.active);
    free(w);
}

void diff_hessian(ExprDag *d, ExprId f, const int *wrt, int n_wrt, ExprId *grad, ExprId *hess_upper)
{
    if (n_wrt <= 0)
        return;
    ExprId *g = grad ? grad : alloc_or_die((size_t)n_wrt, sizeof *g);
    diff_gradient(d, f, wrt, n_wrt, g);
    /* Row i of the upper triangle is the gradient of g[i] with respect to inputs i..n-1: it is
     * contiguous in the packed layout, and the sweep reuses the nodes of g and of f. */
    for (int i = 0; i < n_wrt; i++)
        diff_gradient(d, g[i], wrt + i, n_wrt - i, hess_upper + diff_upper_index(n_wrt, i, i));
    if (!grad)
        free(g);
}

/* Reverse mode per function: one sweep per output, each touching only the nodes that output
 * reaches. The Jacobians needed are of forces (m = n_wrt), where forward mode would take as many
 * sweeps, and reverse mode reuses diff_gradient's rules and its sharing with the Hessian. */
void diff_jacobian(ExprDag *d, const ExprId *f, int m, const int *wrt, int n_wrt, ExprId *jac)
{
    for (int i = 0; i < m; i++)
        diff_gradient(d, f[i], wrt, n_wrt, jac + (size_t)i * (size_t)n_wrt);
}
