/* expr.c — the hash-consed expression DAG: a growable node array, an open-addressing table that finds equal nodes, simplification while building, and an iterative evaluator and printer. */
#include "expr.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ExprDag {
    ExprNode *nodes;
    int32_t   n, cap;
    int32_t  *table; /* node ids, -1 for an empty slot; the size is a power of two */
    uint32_t  table_size;
};

/* Node ids are int32; stay far enough below the limit that doubling never overflows. */
enum { DAG_MAX_NODES = INT32_MAX / 4, TABLE_MIN = 256 };

static void *grow_or_die(void *p, size_t count, size_t size)
{
    void *q = realloc(p, count * size);
    if (!q) {
        fputs("srdc: out of memory (expression DAG)\n", stderr);
        abort();
    }
    return q;
}

/* ------------------------------------------------------------------------------------------ */
/* node storage and hash-consing                                                               */

static uint64_t mix64(uint64_t h)
{
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

static uint64_t value_bits(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}

static uint64_t node_hash(const ExprNode *k)
{
    uint64_t h = mix64(k->op + ((uint64_t)(uint32_t)k->a << 8));
    h = mix64(h ^ ((uint64_t)(uint32_t)k->b | (uint64_t)(uint32_t)k->c << 32));
    h = mix64(h ^ (uint64_t)(uint32_t)k->index);
    return mix64(h ^ value_bits(k->value));
}

/* Constants are equal when their bits are: NaNs with one payload share a node, 0.0 and -0.0 never
 * meet here because dag_const normalises the sign of zero first. */
static bool node_equal(const ExprNode *x, const ExprNode *y)
{
    return x->op == y->op && x->a == y->a && x->b == y->b && x->c == y->c && x->index == y->index &&
           value_bits(x->value) == value_bits(y->value);
}

static void table_insert(ExprDag *d, ExprId id)
{
    uint32_t mask = d->table_size - 1;
    uint32_t i = (uint32_t)node_hash(&d->nodes[id]) & mask;
    while (d->table[i] >= 0)
        i = (i + 1) & mask;
    d->table[i] = id;
}

static void table_grow(ExprDag *d)
{
    free(d->table);
    d->table_size *= 2;
    d->table = grow_or_die(NULL, d->table_size, sizeof *d->table);
    memset(d->table, 0xff, d->table_size * sizeof *d->table);
    for (ExprId id = 0; id < d->n; id++)
        table_insert(d, id);
}

/* Returns the node equal to key, appending it first when there is none. */
static ExprId intern(ExprDag *d, const ExprNode *key)
{
    uint32_t mask = d->table_size - 1;
    uint32_t i = (uint32_t)node_hash(key) & mask;
    for (; d->table[i] >= 0; i = (i + 1) & mask)
        if (node_equal(&d->nodes[d->table[i]], key))
            return d->table[i];
    if (d->n >= DAG_MAX_NODES) {
        fputs("srdc: expression DAG too large\n", stderr);
        abort();
    }
    if (d->n == d->cap) {
        d->cap *= 2;
        d->nodes = grow_or_die(d->nodes, (size_t)d->cap, sizeof *d->nodes);
    }
    ExprId id = d->n++;
    d->nodes[id] = *key;
    d->table[i] = id;
    /* Keep the load factor at most one half so probe sequences stay short. */
    if ((uint32_t)d->n * 2 > d->table_size)
        table_grow(d);
    return id;
}

static ExprId make_node(ExprDag *d, ExprOp op, ExprId a, ExprId b, ExprId c, int32_t index)
{
    ExprNode key = { .op = (uint8_t)op, .a = a, .b = b, .c = c, .index = index, .value = 0.0 };
    return intern(d, &key);
}

ExprDag *dag_new(void)
{
    ExprDag *d = grow_or_die(NULL, 1, sizeof *d);
    d->n = 0;
    d->cap = 64;
    d->nodes = grow_or_die(NULL, (size_t)d->cap, sizeof *d->nodes);
    d->table_size = TABLE_MIN;
    d->table = grow_or_die(NULL, d->table_size, sizeof *d->table);
    memset(d->table, 0xff, d->table_size * sizeof *d->table);
    return d;
}

void dag_free(ExprDag *d)
{
    if (!d)
        return;
    free(d->nodes);
    free(d->table);
    free(d);
}

int dag_size(const ExprDag *d) { return d->n; }

static bool valid_id(const ExprDag *d, ExprId id) { return id >= 0 && id < d->n; }

/* The pointer is invalidated by the next builder call (the array may move). */
const ExprNode *dag_node(const ExprDag *d, ExprId id) { return valid_id(d, id) ? &d->nodes[id] : NULL; }

/* ------------------------------------------------------------------------------------------ */
/* the semantics of every operation, shared by constant folding and evaluation                 */

static double apply_op(ExprOp op, int32_t index, double x, double y, double z)
{
    switch (op) {
    case XO_ADD: return x + y;
    case XO_MUL: return x * y;
    case XO_DIV: return x / y;
    case XO_NEG: return -x;
    case XO_POWI: return pow(x, (double)index);
    case XO_POW: return pow(x, y);
    case XO_SQRT: return sqrt(x);
    case XO_EXP: return exp(x);
    case XO_LOG: return log(x);
    case XO_SIN: return sin(x);
    case XO_COS: return cos(x);
    case XO_TAN: return tan(x);
    case XO_ASIN: return asin(x);
    case XO_ACOS: return acos(x);
    case XO_ATAN: return atan(x);
    case XO_TANH: return tanh(x);
    case XO_ABS: return fabs(x);
    case XO_ATAN2: return atan2(x, y);
    case XO_MIN: return fmin(x, y);
    case XO_MAX: return fmax(x, y);
    case XO_SELECT: return x != 0 ? y : z;
    case XO_LT: return x < y ? 1.0 : 0.0;
    case XO_LE: return x <= y ? 1.0 : 0.0;
    case XO_EQ: return x == y ? 1.0 : 0.0;
    case XO_NE: return x != y ? 1.0 : 0.0;
    case XO_AND: return x != 0 && y != 0 ? 1.0 : 0.0;
    case XO_OR: return x != 0 || y != 0 ? 1.0 : 0.0;
    case XO_NOT: return x == 0 ? 1.0 : 0.0;
    case XO_FLOOR: return floor(x);
    case XO_CONST:
    case XO_INPUT:
    case XO_COUNT: break;
    }
    return NAN;
}

/* ------------------------------------------------------------------------------------------ */
/* small queries the simplifier uses                                                           */

static ExprOp op_of(const ExprDag *d, ExprId id) { return (ExprOp)d->nodes[id].op; }
static bool   is_const(const ExprDag *d, ExprId id) { return op_of(d, id) == XO_CONST; }
static double const_of(const ExprDag *d, ExprId id) { return d->nodes[id].value; }
static bool   is_const_value(const ExprDag *d, ExprId id, double v) { return is_const(d, id) && const_of(d, id) == v; }

/* Comparisons and logic produce exactly 0.0 or 1.0, which some rules rely on. */
static bool is_boolean(const ExprDag *d, ExprId id)
{
    ExprOp op = op_of(d, id);
    return (op >= XO_LT && op <= XO_NOT) || is_const_value(d, id, 0.0) || is_const_value(d, id, 1.0);
}

/* A product c*x with a constant c (constants are always the first operand). */
static bool is_scaled(const ExprDag *d, ExprId id)
{
    return op_of(d, id) == XO_MUL && is_const(d, d->nodes[id].a);
}

/* A sum c+x with a constant c. */
static bool is_offset(const ExprDag *d, ExprId id)
{
    return op_of(d, id) == XO_ADD && is_const(d, d->nodes[id].a);
}

/* Splits a term of a sum into coefficient * base, so like terms can be combined. */
static double split_term(const ExprDag *d, ExprId id, ExprId *base)
{
    if (is_scaled(d, id)) {
        *base = d->nodes[id].b;
        return const_of(d, d->nodes[id].a);
    }
    *base = id;
    return 1.0;
}

/* Splits a factor of a product into base ^ exponent, so like factors can be combined. */
static int32_t split_power(const ExprDag *d, ExprId id, ExprId *base)
{
    if (op_of(d, id) == XO_POWI) {
        *base = d->nodes[id].a;
        return d->nodes[id].index;
    }
    *base = id;
    return 1;
}

static bool fits_int32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/* Commutative operands in canonical order: a constant first, otherwise the older node first. */
static void order_operands(const ExprDag *d, ExprId *a, ExprId *b)
{
    bool ca = is_const(d, *a), cb = is_const(d, *b);
    if ((cb && !ca) || (ca == cb && *b < *a)) {
        ExprId t = *a;
        *a = *b;
        *b = t;
    }
}

static ExprId fold(ExprDag *d, ExprOp op, int32_t index, ExprId a, ExprId b, ExprId c)
{
    double x = const_of(d, a);
    double y = b >= 0 ? const_of(d, b) : 0.0;
    double z = c >= 0 ? const_of(d, c) : 0.0;
    return dag_const(d, apply_op(op, index, x, y, z));
}

/* ------------------------------------------------------------------------------------------ */
/* leaves                                                                                      */

ExprId dag_const(ExprDag *d, double v)
{
    if (v == 0)
        v = 0.0; /* -0.0 and 0.0 are one node */
    ExprNode key = { .op = XO_CONST, .a = -1, .b = -1, .c = -1, .index = 0, .value = v };
    return intern(d, &key);
}

ExprId dag_input(ExprDag *d, int slot)
{
    if (slot < 0)
        return -1;
    return make_node(d, XO_INPUT, -1, -1, -1, slot);
}

/* ------------------------------------------------------------------------------------------ */
/* sums                                                                                        */

/* c*x + k*x -> (c+k)*x when both terms have the same base. */
static ExprId combine_like_terms(ExprDag *d, ExprId a, ExprId b)
{
    ExprId base_a, base_b;
    double ca = split_term(d, a, &base_a), cb = split_term(d, b, &base_b);
    if (base_a != base_b)
        return -1;
    return dag_mul(d, dag_const(d, ca + cb), base_a);
}

/* (p + q) + t where t is like p or q: combine them, so x + y - x folds to y. One level deep only,
 * which keeps building O(1) per node. */
static ExprId combine_into_sum(ExprDag *d, ExprId sum, ExprId t)
{
    ExprId p = d->nodes[sum].a, q = d->nodes[sum].b;
    ExprId base_t, base_p, base_q;
    split_term(d, t, &base_t);
    split_term(d, p, &base_p);
    split_term(d, q, &base_q);
    if (base_t == base_p)
        return dag_add(d, dag_add(d, p, t), q);
    if (base_t == base_q)
        return dag_add(d, p, dag_add(d, q, t));
    return -1;
}

static ExprId add_constant(ExprDag *d, ExprId c, ExprId x)
{
    if (const_of(d, c) == 0)
        return x;
    if (is_offset(d, x)) /* c + (k + y) -> (c+k) + y */
        return dag_add(d, dag_const(d, const_of(d, c) + const_of(d, d->nodes[x].a)), d->nodes[x].b);
    return make_node(d, XO_ADD, c, x, -1, 0);
}

ExprId dag_add(ExprDag *d, ExprId a, ExprId b)
{
    if (!valid_id(d, a) || !valid_id(d, b))
        return -1;
    order_operands(d, &a, &b);
    if (is_const(d, a) && is_const(d, b))
        return fold(d, XO_ADD, 0, a, b, -1);
    if (is_const(d, a))
        return add_constant(d, a, b);
    /* Float constants to the top of the sum so they meet and fold. */
    bool oa = is_offset(d, a), ob = is_offset(d, b);
    if (oa && ob)
        return dag_add(d, dag_add(d, d->nodes[a].a, d->nodes[b].a), dag_add(d, d->nodes[a].b, d->nodes[b].b));
    if (oa)
        return dag_add(d, d->nodes[a].a, dag_add(d, d->nodes[a].b, b));
    if (ob)
        return dag_add(d, d->nodes[b].a, dag_add(d, a, d->nodes[b].b));
    ExprId r = combine_like_terms(d, a, b);
    if (r < 0 && op_of(d, a) == XO_ADD)
        r = combine_into_sum(d, a, b);
    if (r < 0 && op_of(d, b) == XO_ADD)
        r = combine_into_sum(d, b, a);
    return r >= 0 ? r : make_node(d, XO_ADD, a, b, -1, 0);
}

ExprId dag_neg(ExprDag *d, ExprId a)
{
    /* -a is canonically (-1)*a, so -(-a), -(2*a) and a + -a all simplify through dag_mul/dag_add. */
    if (!valid_id(d, a))
        return -1;
    return dag_mul(d, dag_const(d, -1.0), a);
}

ExprId dag_sub(ExprDag *d, ExprId a, ExprId b)
{
    if (!valid_id(d, a) || !valid_id(d, b))
        return -1;
    return dag_add(d, a, dag_neg(d, b));
}

/* ------------------------------------------------------------------------------------------ */
/* products and quotients                                                                      */

/* x^m * x^n -> x^(m+n). */
static ExprId combine_like_factors(ExprDag *d, ExprId a, ExprId b)
{
    ExprId base_a, base_b;
    int64_t na = split_power(d, a, &base_a), nb = split_power(d, b, &base_b);
    if (base_a != base_b || !fits_int32(na + nb))
        return -1;
    return dag_powi(d, base_a, (int)(na + nb));
}

/* (p * q) * t where t has the base of p or q: combine them, so x*y*x becomes x^2*y. */
static ExprId combine_into_product(ExprDag *d, ExprId prod, ExprId t)
{
    ExprId p = d->nodes[prod].a, q = d->nodes[prod].b;
    ExprId base_t, base_p, base_q;
    split_power(d, t, &base_t);
    split_power(d, p, &base_p);
    split_power(d, q, &base_q);
    ExprId r;
    if (base_t == base_p && (r = combine_like_factors(d, p, t)) >= 0)
        return dag_mul(d, r, q);
    if (base_t == base_q && (r = combine_like_factors(d, q, t)) >= 0)
        return dag_mul(d, p, r);
    return -1;
}

static ExprId scale_by_constant(ExprDag *d, ExprId c, ExprId x)
{
    double v = const_of(d, c);
    if (v == 0)
        return c;
    if (v == 1)
        return x;
    if (is_scaled(d, x)) /* c * (k * y) -> (c*k) * y */
        return dag_mul(d, dag_const(d, v * const_of(d, d->nodes[x].a)), d->nodes[x].b);
    return make_node(d, XO_MUL, c, x, -1, 0);
}

ExprId dag_mul(ExprDag *d, ExprId a, ExprId b)
{
    if (!valid_id(d, a) || !valid_id(d, b))
        return -1;
    order_operands(d, &a, &b);
    if (is_const(d, a) && is_const(d, b))
        return fold(d, XO_MUL, 0, a, b, -1);
    if (is_const(d, a))
        return scale_by_constant(d, a, b);
    /* Float constant factors to the top of the product so they meet and fold. */
    bool sa = is_scaled(d, a), sb = is_scaled(d, b);
    if (sa && sb)
        return dag_mul(d, dag_mul(d, d->nodes[a].a, d->nodes[b].a), dag_mul(d, d->nodes[a].b, d->nodes[b].b));
    if (sa)
        return dag_mul(d, d->nodes[a].a, dag_mul(d, d->nodes[a].b, b));
    if (sb)
        return dag_mul(d, d->nodes[b].a, dag_mul(d, a, d->nodes[b].b));
    ExprId r = combine_like_factors(d, a, b);
    if (r < 0 && op_of(d, a) == XO_MUL)
        r = combine_into_product(d, a, b);
    if (r < 0 && op_of(d, b) == XO_MUL)
        r = combine_into_product(d, b, a);
    return r >= 0 ? r : make_node(d, XO_MUL, a, b, -1, 0);
}

/* The reciprocal of a constant when using it keeps the value finite and nonzero. */
static bool usable_reciprocal(double v, double *inv)
{
    *inv = 1.0 / v;
    return v != 0 && isfinite(v) && isfinite(*inv) && *inv != 0;
}

ExprId dag_div(ExprDag *d, ExprId a, ExprId b)
{
    if (!valid_id(d, a) || !valid_id(d, b))
        return -1;
    if (is_const(d, a) && is_const(d, b))
        return fold(d, XO_DIV, 0, a, b, -1);
    double inv;
    if (is_const(d, b)) {
        /* x / c -> (1/c) * x: a multiplication, and the constant can join others. */
        if (usable_reciprocal(const_of(d, b), &inv))
            return dag_mul(d, dag_const(d, inv), a);
        return make_node(d, XO_DIV, a, b, -1, 0);
    }
    if (is_const_value(d, a, 0.0) || a == b) /* 0/x = 0 and x/x = 1 for x != 0 */
        return dag_const(d, a == b ? 1.0 : 0.0);
    if (is_scaled(d, a)) /* (c*x)/y -> c*(x/y) */
        return dag_mul(d, d->nodes[a].a, dag_div(d, d->nodes[a].b, b));
    if (is_scaled(d, b) && usable_reciprocal(const_of(d, d->nodes[b].a), &inv)) {
        if (is_const(d, a)) /* k/(c*y) -> (k/c)/y */
            return dag_div(d, dag_const(d, const_of(d, a) / const_of(d, d->nodes[b].a)), d->nodes[b].b);
        return dag_mul(d, dag_const(d, inv), dag_div(d, a, d->nodes[b].b)); /* x/(c*y) -> (1/c)*(x/y) */
    }
    ExprId base_a, base_b;
    int64_t na = split_power(d, a, &base_a), nb = split_power(d, b, &base_b);
    if (!is_const(d, a) && base_a == base_b && fits_int32(na - nb)) /* x^m / x^n -> x^(m-n) */
        return dag_powi(d, base_a, (int)(na - nb));
    /* x/y -> x * (1/y): derivatives divide many terms by the same few lengths, and one shared
     * reciprocal costs far less than a division each. */
    if (is_const_value(d, a, 1.0))
        return make_node(d, XO_DIV, a, b, -1, 0);
    return dag_mul(d, a, dag_div(d, dag_const(d, 1.0), b));
}

/* ------------------------------------------------------------------------------------------ */
/* powers                                                                                      */

ExprId dag_powi(ExprDag *d, ExprId a, int n)
{
    if (!valid_id(d, a))
        return -1;
    if (n == 0)
        return dag_const(d, 1.0);
    if (n == 1)
        return a;
    if (is_const(d, a))
        return fold(d, XO_POWI, n, a, -1, -1);
    if (op_of(d, a) == XO_POWI) { /* (x^m)^n = x^(mn) for integers m, n */
        int64_t mn = (int64_t)d->nodes[a].index * n;
        if (fits_int32(mn))
            return dag_powi(d, d->nodes[a].a, (int)mn);
    }
    if (is_scaled(d, a)) { /* (c*x)^n = c^n * x^n keeps the constant outside */
        double cn = pow(const_of(d, d->nodes[a].a), (double)n);
        if (isfinite(cn) && cn != 0)
            return dag_mul(d, dag_const(d, cn), dag_powi(d, d->nodes[a].b, n));
    }
    return make_node(d, XO_POWI, a, -1, -1, n);
}

ExprId dag_pow(ExprDag *d, ExprId a, ExprId b)
{
    if (!valid_id(d, a) || !valid_id(d, b))
        return -1;
    if (is_const(d, b)) {
        double e = const_of(d, b);
        if (e == floor(e) && fabs(e) <= INT32_MAX)
            return dag_powi(d, a, (int)e);
        if (e == 0.5)
            return dag_unary(d, XO_SQRT, a);
        if (is_const(d, a))
            return fold(d, XO_POW, 0, a, b, -1);
    }
    if (is_const_value(d, a, 1.0)) /* pow(1, y) = 1 for every y */
        return a;
    return make_node(d, XO_POW, a, b, -1, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* functions of one argument                                                                   */

static bool is_unary_op(ExprOp op) { return (op >= XO_SQRT && op <= XO_ABS) || op == XO_NOT || op == XO_FLOOR; }

/* Identities that hold wherever the left side is defined. Returns -1 when none applies. */
static ExprId simplify_unary(ExprDag *d, ExprOp op, ExprId a)
{
    ExprOp inner = op_of(d, a);
    ExprId x = d->nodes[a].a;
    switch (op) {
    case XO_LOG:
        return inner == XO_EXP ? x : -1;
    case XO_EXP:
        return inner == XO_LOG ? x : -1;
    case XO_SQRT:
        return inner == XO_POWI && d->nodes[a].index == 2 ? dag_unary(d, XO_ABS, x) : -1;
    case XO_ABS:
        if (inner == XO_ABS || inner == XO_SQRT || inner == XO_EXP || is_boolean(d, a))
            return a;
        if (inner == XO_POWI && d->nodes[a].index % 2 == 0)
            return a;
        if (is_scaled(d, a)) /* |c*y| = |c| * |y| */
            return dag_mul(d, dag_const(d, fabs(const_of(d, x))), dag_unary(d, XO_ABS, d->nodes[a].b));
        return -1;
    case XO_NOT:
        return inner == XO_NOT && is_boolean(d, x) ? x : -1;
    case XO_FLOOR:
        return inner == XO_FLOOR || is_boolean(d, a) ? a : -1;
    default:
        return -1;
    }
}

ExprId dag_unary(ExprDag *d, ExprOp op, ExprId a)
{
    if (!valid_id(d, a))
        return -1;
    if (op == XO_NEG)
        return dag_neg(d, a);
    if (!is_unary_op(op))
        return -1;
    if (is_const(d, a))
        return fold(d, op, 0, a, -1, -1);
    ExprId r = simplify_unary(d, op, a);
    return r >= 0 ? r : make_node(d, op, a, -1, -1, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* functions of two arguments, comparisons and logic                                           */

static bool is_commutative(ExprOp op)
{
    return op == XO_MIN || op == XO_MAX || op == XO_EQ || op == XO_NE || op == XO_AND || op == XO_OR;
}

/* x as exactly 0.0 or 1.0 (x != 0). */
static ExprId as_boolean(ExprDag *d, ExprId x)
{
    return is_boolean(d, x) ? x : dag_binary(d, XO_NE, x, dag_const(d, 0.0));
}

/* AND/OR with one constant operand (a, by the canonical order) and the other not. */
static ExprId logic_with_constant(ExprDag *d, ExprOp op, ExprId c, ExprId x)
{
    bool truth = const_of(d, c) != 0;
    if (op == XO_AND)
        return truth ? as_boolean(d, x) : dag_const(d, 0.0);
    return truth ? dag_const(d, 1.0) : as_boolean(d, x);
}

static ExprId simplify_binary(ExprDag *d, ExprOp op, ExprId a, ExprId b)
{
    if ((op == XO_AND || op == XO_OR) && is_const(d, a))
        return logic_with_constant(d, op, a, b);
    if (a != b)
        return -1;
    switch (op) { /* both operands the same node */
    case XO_MIN:
    case XO_MAX: return a;
    case XO_LT:
    case XO_NE: return dag_const(d, 0.0);
    case XO_LE:
    case XO_EQ: return dag_const(d, 1.0);
    case XO_AND:
    case XO_OR: return as_boolean(d, a);
    default: return -1;
    }
}

ExprId dag_binary(ExprDag *d, ExprOp op, ExprId a, ExprId b)
{
    if (!valid_id(d, a) || !valid_id(d, b))
        return -1;
    switch (op) {
    case XO_ADD: return dag_add(d, a, b);
    case XO_MUL: return dag_mul(d, a, b);
    case XO_DIV: return dag_div(d, a, b);
    case XO_POW: return dag_pow(d, a, b);
    case XO_ATAN2:
    case XO_MIN:
    case XO_MAX:
    case XO_LT:
    case XO_LE:
    case XO_EQ:
    case XO_NE:
    case XO_AND:
    case XO_OR: break;
    default: return -1;
    }
    if (is_commutative(op))
        order_operands(d, &a, &b);
    if (is_const(d, a) && is_const(d, b))
        return fold(d, op, 0, a, b, -1);
    ExprId r = simplify_binary(d, op, a, b);
    return r >= 0 ? r : make_node(d, op, a, b, -1, 0);
}

ExprId dag_select(ExprDag *d, ExprId cond, ExprId a, ExprId b)
{
    if (!valid_id(d, cond) || !valid_id(d, a) || !valid_id(d, b))
        return -1;
    if (is_const(d, cond))
        return const_of(d, cond) != 0 ? a : b; /* a NaN condition is true, as in evaluation */
    if (a == b)
        return a;
    if (op_of(d, cond) == XO_NOT) /* select(!c, a, b) = select(c, b, a) */
        return dag_select(d, d->nodes[cond].a, b, a);
    if (is_boolean(d, cond) && is_const_value(d, a, 1.0) && is_const_value(d, b, 0.0))
        return cond;
    return make_node(d, XO_SELECT, cond, a, b, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* reachability, evaluation, counting                                                          */

static int compare_ids(const void *pa, const void *pb)
{
    ExprId a = *(const ExprId *)pa, b = *(const ExprId *)pb;
    return (a > b) - (a < b);
}

/* The nodes reachable from the roots, by an explicit-stack DFS (no recursion, so any depth works),
 * in increasing id order: children are always older than their parents, so that order is
 * topological. The cost is O(reachable), plus a mark array the size of the largest root. */
ExprId *dag_reachable(const ExprDag *d, const ExprId *roots, int n, int32_t *count, int32_t *limit)
{
    int32_t top = -1;
    for (int i = 0; i < n; i++)
        if (valid_id(d, roots[i]) && roots[i] > top)
            top = roots[i];
    *limit = top + 1;
    *count = 0;
    uint8_t *seen = calloc((size_t)top + 2, 1); /* never calloc(0), which may return NULL */
    ExprId *stack = grow_or_die(NULL, 64, sizeof *stack);
    ExprId *ids = grow_or_die(NULL, 64, sizeof *ids);
    if (!seen) {
        fputs("srdc: out of memory (expression DAG)\n", stderr);
        abort();
    }
    size_t sp = 0, stack_cap = 64, ids_cap = 64;
    for (int i = 0; i < n; i++) {
        if (!valid_id(d, roots[i]) || seen[roots[i]])
            continue;
        seen[roots[i]] = 1;
        stack[sp++] = roots[i];
        while (sp > 0) {
            ExprId id = stack[--sp];
            if ((size_t)*count == ids_cap)
                ids = grow_or_die(ids, ids_cap *= 2, sizeof *ids);
            ids[(*count)++] = id;
            const ExprNode *x = &d->nodes[id];
            ExprId kids[3] = { x->a, x->b, x->c };
            for (int k = 0; k < 3; k++) {
                if (kids[k] < 0 || seen[kids[k]])
                    continue;
                seen[kids[k]] = 1;
                if (sp == stack_cap)
                    stack = grow_or_die(stack, stack_cap *= 2, sizeof *stack);
                stack[sp++] = kids[k];
            }
        }
    }
    /* Sorting costs k log k; when most of [0, top] is reachable, scanning the marks is cheaper. */
    double reached = *count;
    if (reached * log2(reached + 2) > *limit) {
        int32_t m = 0;
        for (int32_t id = 0; id < *limit; id++)
            if (seen[id])
                ids[m++] = id;
    } else {
        qsort(ids, (size_t)*count, sizeof *ids, compare_ids);
    }
    free(stack);
    free(seen);
    return ids;
}

static double node_value(const ExprNode *x, const double *val, const double *inputs)
{
    switch ((ExprOp)x->op) {
    case XO_CONST: return x->value;
    case XO_INPUT: return inputs[x->index];
    default:
        return apply_op((ExprOp)x->op, x->index, val[x->a], x->b >= 0 ? val[x->b] : 0.0,
                        x->c >= 0 ? val[x->c] : 0.0);
    }
}

void dag_eval_many(const ExprDag *d, const ExprId *roots, int n, const double *inputs, double *out)
{
    int32_t count, limit;
    ExprId *order = dag_reachable(d, roots, n, &count, &limit);
    /* Indexed by id but only the reachable entries are written, so no clearing is needed. */
    double *val = grow_or_die(NULL, limit > 0 ? (size_t)limit : 1, sizeof *val);
    for (int32_t i = 0; i < count; i++)
        val[order[i]] = node_value(&d->nodes[order[i]], val, inputs);
    for (int i = 0; i < n; i++)
        out[i] = valid_id(d, roots[i]) ? val[roots[i]] : NAN;
    free(val);
    free(order);
}

double dag_eval(const ExprDag *d, ExprId root, const double *inputs)
{
    double out;
    dag_eval_many(d, &root, 1, inputs, &out);
    return out;
}

int dag_count_ops(const ExprDag *d, const ExprId *roots, int n)
{
    int32_t count, limit;
    ExprId *order = dag_reachable(d, roots, n, &count, &limit);
    int ops = 0;
    for (int32_t i = 0; i < count; i++)
        if (d->nodes[order[i]].op != XO_CONST && d->nodes[order[i]].op != XO_INPUT)
            ops++;
    free(order);
    return ops;
}

/* ------------------------------------------------------------------------------------------ */
/* printing                                                                                    */

/* Binding strength, loosest first. A child is parenthesised when it binds less than its slot
 * requires. + and * are printed as associative (equal values in exact arithmetic). */
enum { P_NONE, P_OR, P_AND, P_CMP, P_ADD, P_MUL, P_UNARY, P_POW, P_ATOM };

typedef enum { PI_NODE, PI_TEXT, PI_NUMBER, PI_INPUT } PrintKind;

typedef struct PrintItem {
    PrintKind   kind;
    ExprId      id;       /* PI_NODE */
    int         min_prec; /* PI_NODE: the binding its position requires */
    const char *text;     /* PI_TEXT */
    double      number;   /* PI_NUMBER; PI_INPUT: the slot */
} PrintItem;

/* An explicit stack instead of recursion: deep DAGs must not overflow the C stack. */
typedef struct Printer {
    const ExprDag *d;
    char          *buf;
    size_t         cap, len;
    PrintItem     *stack;
    size_t         sp, stack_cap;
} Printer;

static void out_text(Printer *p, const char *s)
{
    while (*s && p->len + 1 < p->cap)
        p->buf[p->len++] = *s++;
}

static void out_number(Printer *p, double v)
{
    char tmp[40];
    if (isnan(v)) {
        out_text(p, "nan");
        return;
    }
    if (isinf(v)) {
        out_text(p, v < 0 ? "-inf" : "inf");
        return;
    }
    /* The shortest of %.15g..%.17g that reads back as the same double. */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    out_text(p, tmp);
}

static void push_item(Printer *p, PrintItem item)
{
    if (p->sp == p->stack_cap) {
        p->stack_cap = p->stack_cap ? p->stack_cap * 2 : 64;
        p->stack = grow_or_die(p->stack, p->stack_cap, sizeof *p->stack);
    }
    p->stack[p->sp++] = item;
}

static int node_prec(const ExprDag *d, ExprId id)
{
    const ExprNode *x = &d->nodes[id];
    switch ((ExprOp)x->op) {
    case XO_CONST: return x->value < 0 ? P_UNARY : P_ATOM; /* printed with its sign */
    case XO_INPUT: return P_ATOM;
    case XO_ADD: return P_ADD;
    case XO_MUL:
        if (is_const_value(d, x->a, -1.0)) /* printed -b */
            return node_prec(d, x->b) >= P_UNARY ? P_UNARY : P_MUL;
        return P_MUL;
    case XO_NEG: return node_prec(d, x->a) >= P_UNARY ? P_UNARY : P_MUL;
    case XO_DIV: return P_MUL;
    case XO_POWI:
    case XO_POW: return P_POW;
    case XO_LT:
    case XO_LE:
    case XO_EQ:
    case XO_NE: return P_CMP;
    case XO_AND: return P_AND;
    case XO_OR: return P_OR;
    case XO_NOT: return P_UNARY;
    default: return P_ATOM; /* function calls */
    }
}

static const char *function_name(ExprOp op)
{
    switch (op) {
    case XO_SQRT: return "sqrt(";
    case XO_EXP: return "exp(";
    case XO_LOG: return "log(";
    case XO_SIN: return "sin(";
    case XO_COS: return "cos(";
    case XO_TAN: return "tan(";
    case XO_ASIN: return "asin(";
    case XO_ACOS: return "acos(";
    case XO_ATAN: return "atan(";
    case XO_TANH: return "tanh(";
    case XO_ABS: return "abs(";
    case XO_FLOOR: return "floor(";
    case XO_ATAN2: return "atan2(";
    case XO_MIN: return "min(";
    case XO_MAX: return "max(";
    case XO_SELECT: return "select(";
    default: return "?(";
    }
}

static const char *infix_name(ExprOp op)
{
    switch (op) {
    case XO_LT: return " < ";
    case XO_LE: return " <= ";
    case XO_EQ: return " == ";
    case XO_NE: return " != ";
    case XO_AND: return " && ";
    case XO_OR: return " || ";
    default: return " ? ";
    }
}

/* The items a node prints as, left to right (at most 10 with parentheses). */
typedef struct ItemList {
    PrintItem item[12];
    int       n;
} ItemList;

static void add_node(ItemList *l, ExprId id, int min_prec)
{
    l->item[l->n++] = (PrintItem){ .kind = PI_NODE, .id = id, .min_prec = min_prec };
}
static void add_text(ItemList *l, const char *s) { l->item[l->n++] = (PrintItem){ .kind = PI_TEXT, .text = s }; }
static void add_number(ItemList *l, double v) { l->item[l->n++] = (PrintItem){ .kind = PI_NUMBER, .number = v }; }

/* The second term of a sum: "- 3", "- y", "- 2*y" for negative terms, "+ t" otherwise. */
static void add_second_term(const ExprDag *d, ItemList *l, ExprId t)
{
    const ExprNode *x = &d->nodes[t];
    if (x->op == XO_CONST && x->value < 0) {
        add_text(l, " - ");
        add_number(l, -x->value);
    } else if (is_scaled(d, t) && const_of(d, x->a) < 0) {
        add_text(l, " - ");
        if (const_of(d, x->a) != -1) {
            add_number(l, -const_of(d, x->a));
            add_text(l, "*");
        }
        add_node(l, x->b, P_MUL);
    } else {
        add_text(l, " + ");
        add_node(l, t, P_ADD);
    }
}

/* 1/y: the form divisions take (dag_div). */
static bool is_reciprocal(const ExprDag *d, ExprId id)
{
    return d->nodes[id].op == XO_DIV && is_const_value(d, d->nodes[id].a, 1.0);
}

static void node_items(const ExprDag *d, ExprId id, ItemList *l)
{
    const ExprNode *x = &d->nodes[id];
    ExprOp op = (ExprOp)x->op;
    switch (op) {
    case XO_CONST: add_number(l, x->value); break;
    case XO_INPUT: l->item[l->n++] = (PrintItem){ .kind = PI_INPUT, .number = x->index }; break;
    case XO_ADD: /* the constant of c + y reads better last */
        add_node(l, is_const(d, x->a) ? x->b : x->a, P_ADD);
        add_second_term(d, l, is_const(d, x->a) ? x->a : x->b);
        break;
    case XO_MUL:
        if (is_reciprocal(d, x->b) || is_reciprocal(d, x->a)) { /* x * (1/y) reads x/y */
            bool b_recip = is_reciprocal(d, x->b);
            add_node(l, b_recip ? x->a : x->b, P_MUL);
            add_text(l, "/");
            add_node(l, d->nodes[b_recip ? x->b : x->a].b, P_UNARY);
            break;
        }
        if (is_const_value(d, x->a, -1.0)) {
            add_text(l, "-");
        } else {
            add_node(l, x->a, P_MUL);
            add_text(l, "*");
        }
        add_node(l, x->b, P_MUL);
        break;
    case XO_NEG:
        add_text(l, "-");
        add_node(l, x->a, P_MUL);
        break;
    case XO_DIV:
        add_node(l, x->a, P_MUL);
        add_text(l, "/");
        add_node(l, x->b, P_UNARY);
        break;
    case XO_POWI:
        add_node(l, x->a, P_POW + 1);
        add_text(l, x->index < 0 ? "^(" : "^");
        add_number(l, x->index);
        if (x->index < 0)
            add_text(l, ")");
        break;
    case XO_POW:
        add_node(l, x->a, P_POW + 1);
        add_text(l, "^");
        add_node(l, x->b, P_POW);
        break;
    case XO_LT:
    case XO_LE:
    case XO_EQ:
    case XO_NE:
        add_node(l, x->a, P_CMP + 1);
        add_text(l, infix_name(op));
        add_node(l, x->b, P_CMP + 1);
        break;
    case XO_AND:
    case XO_OR:
        add_node(l, x->a, node_prec(d, id));
        add_text(l, infix_name(op));
        add_node(l, x->b, node_prec(d, id));
        break;
    case XO_NOT:
        add_text(l, "!");
        add_node(l, x->a, P_UNARY);
        break;
    default: /* function call */
        add_text(l, function_name(op));
        add_node(l, x->a, P_NONE);
        if (x->b >= 0) {
            add_text(l, ", ");
            add_node(l, x->b, P_NONE);
        }
        if (x->c >= 0) {
            add_text(l, ", ");
            add_node(l, x->c, P_NONE);
        }
        add_text(l, ")");
        break;
    }
}

static void expand_node(Printer *p, ExprId id, int min_prec)
{
    ItemList l = { .n = 0 };
    bool paren = node_prec(p->d, id) < min_prec;
    if (paren)
        add_text(&l, "(");
    node_items(p->d, id, &l);
    if (paren)
        add_text(&l, ")");
    for (int i = l.n - 1; i >= 0; i--) /* reversed: the stack pops the first item first */
        push_item(p, l.item[i]);
}

void dag_print(const ExprDag *d, ExprId root, char *buf, size_t n)
{
    if (n == 0)
        return;
    Printer p = { .d = d, .buf = buf, .cap = n };
    if (!valid_id(d, root)) {
        out_text(&p, "<none>");
    } else {
        push_item(&p, (PrintItem){ .kind = PI_NODE, .id = root, .min_prec = P_NONE });
        while (p.sp > 0 && p.len + 1 < p.cap) {
            PrintItem it = p.stack[--p.sp];
            char tmp[24];
            switch (it.kind) {
            case PI_NODE: expand_node(&p, it.id, it.min_prec); break;
            case PI_TEXT: out_text(&p, it.text); break;
            case PI_NUMBER: out_number(&p, it.number); break;
            case PI_INPUT:
                snprintf(tmp, sizeof tmp, "in%d", (int)it.number);
                out_text(&p, tmp);
                break;
            }
        }
    }
    buf[p.len] = '\0';
    free(p.stack);
}
