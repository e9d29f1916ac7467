/* test_expr.c — unit tests of the expression DAG (expr.c): hash-consing, every simplification rule, constant folding, counting, evaluation, printing, and DAGs too deep for recursion. */
#include "expr.h"
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "tap.h"

static bool same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }
static bool same_value(double a, double b) { return (isnan(a) && isnan(b)) || same_bits(a, b) || a == b; }

static bool is_const_node(const ExprDag *d, ExprId id, double v)
{
    const ExprNode *x = dag_node(d, id);
    return x && x->op == XO_CONST && same_value(x->value, v);
}

static bool is_op(const ExprDag *d, ExprId id, ExprOp op) { return dag_node(d, id) && dag_node(d, id)->op == op; }

/* ------------------------------------------------------------------------------------------ */

static void test_hash_consing(Tally *t)
{
    ExprDag *d = dag_new();
    ExprId x = dag_input(d, 0), y = dag_input(d, 1);
    check(t, dag_input(d, 0) == x && x != y, "an input slot is one node");
    check(t, dag_const(d, 2.5) == dag_const(d, 2.5), "equal constants are one node");
    check(t, dag_const(d, -0.0) == dag_const(d, 0.0) && !signbit(dag_node(d, dag_const(d, -0.0))->value),
          "-0.0 is normalised to 0.0");
    double nan1 = NAN, nan2;
    uint64_t bits;
    memcpy(&bits, &nan1, sizeof bits);
    bits ^= 1; /* another quiet NaN payload */
    memcpy(&nan2, &bits, sizeof nan2);
    check(t, dag_const(d, nan1) == dag_const(d, nan1) && dag_const(d, nan1) != dag_const(d, nan2),
          "NaN constants are compared by bit pattern");

    ExprId s = dag_add(d, dag_unary(d, XO_SIN, x), dag_mul(d, x, y));
    int before = dag_size(d);
    ExprId s2 = dag_add(d, dag_unary(d, XO_SIN, x), dag_mul(d, x, y));
    check(t, s == s2 && dag_size(d) == before, "building an expression twice adds no node");
    check(t, dag_add(d, x, y) == dag_add(d, y, x), "a+b and b+a are one node");
    check(t, dag_mul(d, x, y) == dag_mul(d, y, x), "a*b and b*a are one node");
    ExprOp comm[] = { XO_MIN, XO_MAX, XO_EQ, XO_NE, XO_AND, XO_OR };
    bool all = true;
    for (size_t i = 0; i < sizeof comm / sizeof comm[0]; i++)
        all = all && dag_binary(d, comm[i], x, y) == dag_binary(d, comm[i], y, x);
    check(t, all, "min, max, ==, !=, &&, || are commutative");
    ExprOp ordered[] = { XO_ATAN2, XO_LT, XO_LE, XO_DIV, XO_POW };
    all = true;
    for (size_t i = 0; i < sizeof ordered / sizeof ordered[0]; i++)
        all = all && dag_binary(d, ordered[i], x, y) != dag_binary(d, ordered[i], y, x);
    check(t, all, "atan2, <, <=, /, ^ keep their operand order");
    check(t, dag_add(d, dag_add(d, x, y), dag_const(d, 1)) == dag_add(d, dag_const(d, 1), dag_add(d, y, x)),
          "(x+y)+1 and 1+(y+x) are one node");
    dag_free(d);

    /* Many distinct nodes force the table to grow; rebuilding them must find every one. */
    d = dag_new();
    enum { N = 200000 };
    ExprId *ids = malloc(N * sizeof *ids);
    ExprId acc = dag_input(d, 0);
    for (int i = 0; i < N; i++) {
        acc = dag_add(d, dag_unary(d, XO_SIN, acc), dag_input(d, 1 + i % 7));
        ids[i] = acc;
    }
    int size = dag_size(d);
    acc = dag_input(d, 0);
    bool same = true;
    for (int i = 0; i < N; i++) {
        acc = dag_add(d, dag_unary(d, XO_SIN, acc), dag_input(d, 1 + i % 7));
        same = same && acc == ids[i];
    }
    check(t, same && dag_size(d) == size, "hash-consing survives table growth (%d nodes rebuilt)", size);
    free(ids);
    dag_free(d);
}

/* ------------------------------------------------------------------------------------------ */

static void test_simplification(Tally *t)
{
    ExprDag *d = dag_new();
    ExprId x = dag_input(d, 0), y = dag_input(d, 1), z = dag_input(d, 2);
    ExprId zero = dag_const(d, 0), one = dag_const(d, 1), two = dag_const(d, 2), three = dag_const(d, 3);
    ExprId c = dag_binary(d, XO_LT, x, y);

    check(t, dag_add(d, x, zero) == x && dag_add(d, zero, x) == x, "x+0 = 0+x = x");
    check(t, dag_mul(d, x, one) == x && dag_mul(d, one, x) == x, "x*1 = 1*x = x");
    check(t, dag_mul(d, x, zero) == zero && dag_mul(d, zero, x) == zero, "x*0 = 0*x = 0");
    check(t, dag_div(d, x, one) == x, "x/1 = x");
    check(t, dag_div(d, zero, x) == zero, "0/x = 0");
    check(t, dag_div(d, x, x) == one, "x/x = 1");
    check(t, dag_div(d, dag_add(d, x, y), dag_add(d, y, x)) == one, "(x+y)/(y+x) = 1");
    check(t, dag_neg(d, dag_neg(d, x)) == x, "-(-x) = x");
    check(t, dag_sub(d, x, x) == zero, "x-x = 0");
    ExprId e = dag_unary(d, XO_SIN, dag_mul(d, x, y));
    check(t, dag_sub(d, e, e) == zero, "e-e = 0 for a compound e");
    check(t, dag_add(d, x, dag_mul(d, dag_const(d, -1), x)) == zero, "x + (-1)*x = 0");
    check(t, dag_neg(d, x) == dag_mul(d, dag_const(d, -1), x), "-x is (-1)*x");
    check(t, dag_powi(d, x, 1) == x && dag_powi(d, x, 0) == one, "x^1 = x, x^0 = 1");
    check(t, dag_pow(d, x, one) == x && dag_pow(d, x, zero) == one, "pow(x, 1) = x, pow(x, 0) = 1");
    check(t, dag_pow(d, x, two) == dag_powi(d, x, 2), "pow(x, 2.0) is x^2");
    check(t, dag_pow(d, x, dag_const(d, 0.5)) == dag_unary(d, XO_SQRT, x), "pow(x, 0.5) is sqrt(x)");
    check(t, dag_pow(d, one, y) == one, "pow(1, y) = 1");

    ExprId six_x = dag_mul(d, dag_const(d, 2), dag_mul(d, three, x));
    const ExprNode *n6 = dag_node(d, six_x);
    check(t, n6->op == XO_MUL && is_const_node(d, n6->a, 6) && n6->b == x, "2*(3*x) = 6*x");
    check(t, dag_mul(d, dag_mul(d, two, x), dag_mul(d, three, y)) == dag_mul(d, dag_const(d, 6), dag_mul(d, x, y)),
          "(2x)(3y) = 6(xy)");
    check(t, dag_mul(d, dag_mul(d, two, x), y) == dag_mul(d, two, dag_mul(d, x, y)), "(2x)y = 2(xy)");
    ExprId x3 = dag_add(d, dag_add(d, x, one), two);
    const ExprNode *n3 = dag_node(d, x3);
    check(t, n3->op == XO_ADD && is_const_node(d, n3->a, 3) && n3->b == x, "x+1+2 = x+3");
    check(t, dag_add(d, dag_add(d, x, one), dag_add(d, y, two)) == dag_add(d, dag_add(d, x, y), three),
          "(x+1)+(y+2) = (x+y)+3");
    check(t, dag_add(d, dag_mul(d, two, x), dag_mul(d, three, x)) == dag_mul(d, dag_const(d, 5), x), "2x+3x = 5x");
    check(t, dag_add(d, x, x) == dag_mul(d, two, x), "x+x = 2x");
    check(t, dag_sub(d, dag_add(d, x, y), x) == y && dag_sub(d, dag_add(d, x, y), y) == x, "(x+y)-x = y");
    check(t, dag_add(d, dag_neg(d, y), dag_add(d, x, y)) == x, "-y + (x+y) = x");

    check(t, dag_mul(d, x, x) == dag_powi(d, x, 2) && is_op(d, dag_mul(d, x, x), XO_POWI), "x*x = x^2");
    check(t, dag_powi(d, dag_powi(d, x, 2), 3) == dag_powi(d, x, 6), "(x^2)^3 = x^6");
    check(t, dag_powi(d, dag_powi(d, x, -1), -1) == x, "(x^-1)^-1 = x");
    check(t, dag_mul(d, dag_powi(d, x, 2), dag_powi(d, x, 3)) == dag_powi(d, x, 5), "x^2 * x^3 = x^5");
    check(t, dag_mul(d, x, dag_powi(d, x, -1)) == one, "x * x^-1 = 1");
    check(t, dag_div(d, dag_powi(d, x, 3), x) == dag_powi(d, x, 2), "x^3 / x = x^2");
    check(t, dag_div(d, x, dag_powi(d, x, 3)) == dag_powi(d, x, -2), "x / x^3 = x^-2");
    check(t, dag_mul(d, dag_mul(d, x, y), x) == dag_mul(d, dag_powi(d, x, 2), y), "x*y*x = x^2*y");
    check(t, dag_powi(d, dag_mul(d, two, x), 3) == dag_mul(d, dag_const(d, 8), dag_powi(d, x, 3)), "(2x)^3 = 8x^3");
    check(t, dag_powi(d, dag_neg(d, x), 2) == dag_powi(d, x, 2), "(-x)^2 = x^2");

    ExprId sq = dag_powi(d, dag_unary(d, XO_SQRT, x), 2);
    check(t, sq != x && is_op(d, sq, XO_POWI), "sqrt(x)^2 is not simplified to x (wrong for x < 0)");
    check(t, dag_unary(d, XO_SQRT, dag_powi(d, x, 2)) == dag_unary(d, XO_ABS, x), "sqrt(x^2) = |x|");
    check(t, dag_div(d, x, two) == dag_mul(d, dag_const(d, 0.5), x), "x/2 = 0.5*x");
    check(t, dag_div(d, dag_mul(d, two, x), x) == two, "(2x)/x = 2");
    check(t, dag_div(d, y, dag_mul(d, dag_const(d, 4), x)) == dag_mul(d, dag_const(d, 0.25), dag_div(d, y, x)),
          "y/(4x) = 0.25*(y/x)");
    check(t, dag_div(d, dag_const(d, 0), dag_const(d, 0)) != zero, "0/0 folds to NaN, not to 0");
    ExprId xz = dag_div(d, x, zero);
    check(t, is_op(d, xz, XO_DIV), "x/0 is kept (no reciprocal of 0)");

    check(t, dag_unary(d, XO_LOG, dag_unary(d, XO_EXP, x)) == x, "log(exp(x)) = x");
    check(t, dag_unary(d, XO_EXP, dag_unary(d, XO_LOG, x)) == x, "exp(log(x)) = x");
    ExprId ax = dag_unary(d, XO_ABS, x);
    check(t, dag_unary(d, XO_ABS, ax) == ax && dag_unary(d, XO_ABS, dag_neg(d, x)) == ax, "||x|| = |-x| = |x|");
    check(t, dag_unary(d, XO_ABS, dag_mul(d, dag_const(d, -3), x)) == dag_mul(d, three, ax), "|-3x| = 3|x|");
    check(t, dag_unary(d, XO_ABS, dag_powi(d, x, 4)) == dag_powi(d, x, 4), "|x^4| = x^4");
    check(t, dag_unary(d, XO_NOT, dag_unary(d, XO_NOT, c)) == c, "!!(x<y) = x<y");
    check(t, dag_unary(d, XO_NOT, dag_unary(d, XO_NOT, x)) != x, "!!x is not x (x may be 2)");
    check(t, dag_unary(d, XO_FLOOR, dag_unary(d, XO_FLOOR, x)) == dag_unary(d, XO_FLOOR, x), "floor(floor(x)) = floor(x)");

    check(t, dag_binary(d, XO_MIN, x, x) == x && dag_binary(d, XO_MAX, x, x) == x, "min(x,x) = max(x,x) = x");
    check(t, dag_binary(d, XO_LT, x, x) == zero && dag_binary(d, XO_LE, x, x) == one, "x<x = 0, x<=x = 1");
    check(t, dag_binary(d, XO_EQ, x, x) == one && dag_binary(d, XO_NE, x, x) == zero, "x==x = 1, x!=x = 0");
    check(t, dag_binary(d, XO_AND, one, c) == c && dag_binary(d, XO_AND, c, zero) == zero, "1&&c = c, c&&0 = 0");
    check(t, dag_binary(d, XO_OR, zero, c) == c && dag_binary(d, XO_OR, c, two) == one, "0||c = c, c||2 = 1");
    check(t, dag_binary(d, XO_AND, x, one) == dag_binary(d, XO_NE, x, zero), "x&&1 = (x != 0)");
    check(t, dag_binary(d, XO_AND, c, c) == c, "c&&c = c");

    check(t, dag_select(d, one, y, z) == y && dag_select(d, zero, y, z) == z, "select with a constant condition");
    check(t, dag_select(d, dag_const(d, NAN), y, z) == y, "select(NaN, a, b) = a, as evaluated");
    check(t, dag_select(d, c, y, y) == y, "select with equal branches");
    check(t, dag_select(d, dag_unary(d, XO_NOT, c), y, z) == dag_select(d, c, z, y), "select(!c, a, b) = select(c, b, a)");
    check(t, dag_select(d, c, one, zero) == c, "select(c, 1, 0) = c for a boolean c");
    dag_free(d);
}

/* ------------------------------------------------------------------------------------------ */

typedef struct FoldCase {
    ExprOp op;
    int    arity; /* 1, 2, or 3 (select) */
} FoldCase;

static double reference(ExprOp op, double a, double b, double c)
{
    switch (op) {
    case XO_ADD: return a + b;
    case XO_MUL: return a * b;
    case XO_DIV: return a / b;
    case XO_NEG: return -a;
    case XO_POW: return pow(a, b);
    case XO_SQRT: return sqrt(a);
    case XO_EXP: return exp(a);
    case XO_LOG: return log(a);
    case XO_SIN: return sin(a);
    case XO_COS: return cos(a);
    case XO_TAN: return tan(a);
    case XO_ASIN: return asin(a);
    case XO_ACOS: return acos(a);
    case XO_ATAN: return atan(a);
    case XO_TANH: return tanh(a);
    case XO_ABS: return fabs(a);
    case XO_ATAN2: return atan2(a, b);
    case XO_MIN: return fmin(a, b);
    case XO_MAX: return fmax(a, b);
    case XO_SELECT: return a != 0 ? b : c;
    case XO_LT: return a < b;
    case XO_LE: return a <= b;
    case XO_EQ: return a == b;
    case XO_NE: return a != b;
    case XO_AND: return a != 0 && b != 0;
    case XO_OR: return a != 0 || b != 0;
    case XO_NOT: return a == 0;
    case XO_FLOOR: return floor(a);
    default: return NAN;
    }
}

static ExprId build(ExprDag *d, ExprOp op, ExprId a, ExprId b, ExprId c)
{
    switch (op) {
    case XO_ADD: return dag_add(d, a, b);
    case XO_MUL: return dag_mul(d, a, b);
    case XO_DIV: return dag_div(d, a, b);
    case XO_NEG: return dag_neg(d, a);
    case XO_POW: return dag_pow(d, a, b);
    case XO_SELECT: return dag_select(d, a, b, c);
    default: return dag_unary(d, op, a) >= 0 ? dag_unary(d, op, a) : dag_binary(d, op, a, b);
    }
}

static const char *op_name(ExprOp op)
{
    static const char *names[XO_COUNT] = {
        "const", "input", "add", "mul", "div", "neg", "powi", "pow", "sqrt", "exp", "log", "sin", "cos", "tan",
        "asin", "acos", "atan", "tanh", "abs", "atan2", "min", "max", "select", "lt", "le", "eq", "ne", "and",
        "or", "not", "floor",
    };
    return op < XO_COUNT ? names[op] : "?";
}

static void test_constant_folding(Tally *t)
{
    static const FoldCase cases[] = {
        { XO_ADD, 2 },  { XO_MUL, 2 },  { XO_DIV, 2 },   { XO_NEG, 1 },   { XO_POW, 2 },  { XO_SQRT, 1 },
        { XO_EXP, 1 },  { XO_LOG, 1 },  { XO_SIN, 1 },   { XO_COS, 1 },   { XO_TAN, 1 },  { XO_ASIN, 1 },
        { XO_ACOS, 1 }, { XO_ATAN, 1 }, { XO_TANH, 1 },  { XO_ABS, 1 },   { XO_ATAN2, 2 }, { XO_MIN, 2 },
        { XO_MAX, 2 },  { XO_SELECT, 3 }, { XO_LT, 2 },  { XO_LE, 2 },    { XO_EQ, 2 },   { XO_NE, 2 },
        { XO_AND, 2 },  { XO_OR, 2 },   { XO_NOT, 1 },   { XO_FLOOR, 1 },
    };
    static const double vals[] = { 0.0, 1.0, -1.0, 0.5, -0.3, 2.75, -3.5, 7.0, 1e-3, 0.9, -0.9 };
    const int nv = (int)(sizeof vals / sizeof vals[0]);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ExprDag *d = dag_new();
        bool ok = true;
        int tried = 0;
        for (int ia = 0; ia < nv; ia++)
            for (int ib = 0; ib < (cases[i].arity >= 2 ? nv : 1); ib++)
                for (int ic = 0; ic < (cases[i].arity == 3 ? 3 : 1); ic++) {
                    double a = vals[ia], b = vals[ib], c = vals[ic];
                    ExprId r = build(d, cases[i].op, dag_const(d, a), dag_const(d, b), dag_const(d, c));
                    double want = reference(cases[i].op, a, b, c);
                    if (want == 0)
                        want = 0.0; /* folding normalises -0.0 */
                    ok = ok && is_const_node(d, r, want);
                    tried++;
                }
        check(t, ok, "constant folding of %s (%d operand combinations)", op_name(cases[i].op), tried);
        dag_free(d);
    }
    ExprDag *d = dag_new();
    bool ok = true;
    for (int n = -4; n <= 5; n++)
        for (int ia = 0; ia < nv; ia++) {
            ExprId r = dag_powi(d, dag_const(d, vals[ia]), n);
            double want = n == 0 ? 1.0 : pow(vals[ia], n);
            ok = ok && is_const_node(d, r, want == 0 ? 0.0 : want);
        }
    check(t, ok, "constant folding of powi");
    bool only_constants = true;
    for (ExprId id = 0; id < dag_size(d); id++)
        only_constants = only_constants && dag_node(d, id)->op == XO_CONST;
    check(t, only_constants, "folding leaves only constants behind (%d nodes)", dag_size(d));
    dag_free(d);
}

/* ------------------------------------------------------------------------------------------ */

static void test_counts_and_eval(Tally *t)
{
    ExprDag *d = dag_new();
    ExprId x = dag_input(d, 0), y = dag_input(d, 1);
    ExprId s = dag_add(d, x, y);
    ExprId sq = dag_mul(d, s, dag_add(d, y, x));
    check(t, dag_count_ops(d, &sq, 1) == 2, "(x+y)*(y+x) is 2 ops: add, powi (%d)", dag_count_ops(d, &sq, 1));
    check(t, dag_count_ops(d, &x, 1) == 0, "an input is 0 ops");
    ExprId f = dag_add(d, dag_unary(d, XO_SIN, s), dag_unary(d, XO_COS, s));
    ExprId roots[] = { f, sq, s };
    check(t, dag_count_ops(d, &f, 1) == 4, "sin(x+y)+cos(x+y) is 4 ops");
    check(t, dag_count_ops(d, roots, 3) == 5, "shared nodes count once over several roots (%d)", dag_count_ops(d, roots, 3));
    check(t, dag_count_ops(d, roots, 0) == 0, "no roots count 0");

    double in[] = { 0.3, -1.7 };
    double want_f = sin(in[0] + in[1]) + cos(in[0] + in[1]);
    check(t, fabs(dag_eval(d, f, in) - want_f) <= 1e-15, "dag_eval of sin(x+y)+cos(x+y)");
    double out[3];
    dag_eval_many(d, roots, 3, in, out);
    check(t, out[0] == dag_eval(d, f, in) && out[1] == dag_eval(d, sq, in) && out[2] == in[0] + in[1],
          "dag_eval_many agrees with dag_eval");
    check(t, isnan(dag_eval(d, -1, in)), "evaluating no node gives NaN");
    check(t, dag_eval(d, dag_const(d, 4.5), NULL) == 4.5, "a constant evaluates without inputs");
    ExprId sel = dag_select(d, dag_binary(d, XO_LT, y, x), dag_unary(d, XO_LOG, dag_neg(d, y)), dag_unary(d, XO_LOG, y));
    check(t, fabs(dag_eval(d, sel, in) - log(1.7)) < 1e-15, "select ignores the NaN of the branch not taken");
    dag_free(d);
}

/* ------------------------------------------------------------------------------------------ */
/* random programs: the simplified DAG against direct evaluation of the same unsimplified steps */

enum { PROG_REGS = 24, PROG_INPUTS = 3 };

typedef struct Step {
    int op, a, b; /* op: an index into the step kinds of run_step */
} Step;

/* Runs one step both in plain doubles and through the builders. Operations keep values bounded
 * and defined for all inputs, so the two must agree up to rounding. */
static void run_step(const Step *s, double *v, ExprId *id, int dst, ExprDag *d)
{
    double a = v[s->a], b = v[s->b];
    ExprId ia = id[s->a], ib = id[s->b];
    ExprId one = dag_const(d, 1.0);
    switch (s->op) {
    case 0: v[dst] = a + b; id[dst] = dag_add(d, ia, ib); break;
    case 1: v[dst] = a - b; id[dst] = dag_sub(d, ia, ib); break;
    case 2: v[dst] = a * b; id[dst] = dag_mul(d, ia, ib); break;
    case 3: v[dst] = a / (1 + b * b); id[dst] = dag_div(d, ia, dag_add(d, one, dag_mul(d, ib, ib))); break;
    case 4: v[dst] = -a; id[dst] = dag_neg(d, ia); break;
    case 5: v[dst] = sin(a) * 2.5; id[dst] = dag_mul(d, dag_unary(d, XO_SIN, ia), dag_const(d, 2.5)); break;
    case 6: v[dst] = a * a * a; id[dst] = dag_mul(d, dag_mul(d, ia, ia), ia); break;
    case 7: v[dst] = tanh(a) / 3.0; id[dst] = dag_div(d, dag_unary(d, XO_TANH, ia), dag_const(d, 3.0)); break;
    case 8: v[dst] = a - 2 * a + b + 1.5; id[dst] = dag_add(d, dag_add(d, dag_sub(d, ia, dag_mul(d, dag_const(d, 2), ia)), ib), dag_const(d, 1.5)); break;
    case 9: v[dst] = fmin(a, b); id[dst] = dag_binary(d, XO_MIN, ia, ib); break;
    case 10: v[dst] = a < b ? a : b * 0.5; id[dst] = dag_select(d, dag_binary(d, XO_LT, ia, ib), ia, dag_mul(d, ib, dag_const(d, 0.5))); break;
    case 11: v[dst] = sqrt(1 + a * a); id[dst] = dag_unary(d, XO_SQRT, dag_add(d, dag_powi(d, ia, 2), one)); break;
    case 12: v[dst] = atan2(a, 1 + b * b); id[dst] = dag_binary(d, XO_ATAN2, ia, dag_add(d, dag_mul(d, ib, ib), one)); break;
    case 13: v[dst] = (2 * a) * (3 * b) / (1 + a * a); id[dst] = dag_div(d, dag_mul(d, dag_mul(d, dag_const(d, 2), ia), dag_mul(d, dag_const(d, 3), ib)), dag_add(d, one, dag_powi(d, ia, 2))); break;
    case 14: v[dst] = fabs(a) - b; id[dst] = dag_sub(d, dag_unary(d, XO_ABS, ia), ib); break;
    case 15: v[dst] = a / (2 + cos(b)); id[dst] = dag_div(d, ia, dag_add(d, dag_const(d, 2), dag_unary(d, XO_COS, ib))); break;
    case 16: { /* quotients of powers of one base, scaled denominators: x^m/x^n and x/(c*y) rules */
        double w = 1 + b * b;
        v[dst] = (3 * a * w * w * w) / (2 * w * w) + a / (4 * w);
        ExprId iw = dag_add(d, one, dag_powi(d, ib, 2));
        ExprId num = dag_mul(d, dag_mul(d, dag_const(d, 3), ia), dag_powi(d, iw, 3));
        id[dst] = dag_add(d, dag_div(d, num, dag_mul(d, dag_const(d, 2), dag_mul(d, iw, iw))),
                          dag_div(d, ia, dag_mul(d, dag_const(d, 4), iw)));
        break;
    }
    default: v[dst] = pow(1 + a * a, 0.5 * b); id[dst] = dag_pow(d, dag_add(d, one, dag_powi(d, ia, 2)), dag_mul(d, dag_const(d, 0.5), ib)); break;
    }
    /* Squash large values so later steps stay well conditioned. */
    if (fabs(v[dst]) > 50) {
        v[dst] = tanh(v[dst]);
        id[dst] = dag_unary(d, XO_TANH, id[dst]);
    }
}

static void test_random_programs(Tally *t)
{
    Rng r = { 0x9E3779B97F4A7C15ULL };
    int bad = 0, programs = 400, points = 8;
    double worst = 0;
    for (int p = 0; p < programs; p++) {
        Step prog[PROG_REGS];
        for (int s = PROG_INPUTS; s < PROG_REGS; s++) {
            /* Small operand pools make repeated operands (x-x, x*x, x/x) common. */
            int lo = s > 6 ? s - 6 : 0;
            prog[s] = (Step){ .op = rng_int(&r, 18), .a = lo + rng_int(&r, s - lo), .b = lo + rng_int(&r, s - lo) };
            if (rng_int(&r, 4) == 0)
                prog[s].b = prog[s].a;
        }
        for (int k = 0; k < points; k++) {
            ExprDag *d = dag_new();
            double v[PROG_REGS], in[PROG_INPUTS];
            ExprId id[PROG_REGS];
            for (int i = 0; i < PROG_INPUTS; i++) {
                in[i] = v[i] = rng_uniform(&r, -2, 2);
                id[i] = dag_input(d, i);
            }
            double scale = 1;
            for (int s = PROG_INPUTS; s < PROG_REGS; s++) {
                run_step(&prog[s], v, id, s, d);
                scale = fmax(scale, fabs(v[s]));
            }
            double got = dag_eval(d, id[PROG_REGS - 1], in), want = v[PROG_REGS - 1];
            double err = fabs(got - want) / scale;
            worst = fmax(worst, err);
            if (!(err <= 1e-9))
                bad++;
            dag_free(d);
        }
    }
    check(t, bad == 0, "%d random programs x %d points: simplified DAG = direct evaluation within 1e-9 "
          "relative to the largest intermediate (worst %.2g, %d bad)", programs, points, worst, bad);
}

/* ------------------------------------------------------------------------------------------ */

static void expect_print(Tally *t, ExprDag *d, ExprId e, const char *want)
{
    char buf[256];
    dag_print(d, e, buf, sizeof buf);
    check(t, strcmp(buf, want) == 0, "prints %s (got %s)", want, buf);
}

static void test_print(Tally *t)
{
    ExprDag *d = dag_new();
    ExprId x = dag_input(d, 0), y = dag_input(d, 1), z = dag_input(d, 2);
    ExprId two = dag_const(d, 2), three = dag_const(d, 3);
    expect_print(t, d, dag_add(d, x, three), "in0 + 3");
    expect_print(t, d, dag_sub(d, x, three), "in0 - 3");
    expect_print(t, d, dag_sub(d, x, y), "in0 - in1");
    expect_print(t, d, dag_sub(d, x, dag_mul(d, two, y)), "in0 - 2*in1");
    expect_print(t, d, dag_sub(d, x, dag_add(d, y, z)), "in0 - (in1 + in2)");
    /* Operands print in canonical (id) order: the older input z before the newer sum. */
    expect_print(t, d, dag_add(d, dag_add(d, x, y), z), "in2 + in0 + in1");
    expect_print(t, d, dag_mul(d, two, x), "2*in0");
    expect_print(t, d, dag_mul(d, dag_const(d, -2.5), x), "-2.5*in0");
    expect_print(t, d, dag_neg(d, x), "-in0");
    expect_print(t, d, dag_neg(d, dag_mul(d, x, y)), "-in0*in1");
    expect_print(t, d, dag_neg(d, dag_add(d, x, y)), "-(in0 + in1)");
    expect_print(t, d, dag_mul(d, dag_add(d, x, y), z), "in2*(in0 + in1)");
    expect_print(t, d, dag_div(d, x, dag_mul(d, y, z)), "in0/(in1*in2)");
    expect_print(t, d, dag_div(d, dag_mul(d, x, y), z), "in0*in1/in2");
    expect_print(t, d, dag_powi(d, x, 2), "in0^2");
    expect_print(t, d, dag_powi(d, x, -2), "in0^(-2)");
    expect_print(t, d, dag_powi(d, dag_add(d, x, y), 3), "(in0 + in1)^3");
    expect_print(t, d, dag_neg(d, dag_powi(d, x, 2)), "-in0^2");
    expect_print(t, d, dag_pow(d, x, dag_neg(d, y)), "in0^(-in1)");
    expect_print(t, d, dag_pow(d, dag_unary(d, XO_SIN, x), y), "sin(in0)^in1");
    expect_print(t, d, dag_unary(d, XO_SQRT, dag_add(d, x, dag_const(d, 0.1))), "sqrt(in0 + 0.1)");
    expect_print(t, d, dag_binary(d, XO_ATAN2, x, y), "atan2(in0, in1)");
    expect_print(t, d, dag_select(d, dag_binary(d, XO_LT, x, y), x, y), "select(in0 < in1, in0, in1)");
    expect_print(t, d, dag_binary(d, XO_AND, dag_binary(d, XO_LT, x, y), dag_binary(d, XO_LE, y, z)),
                 "in0 < in1 && in1 <= in2");
    expect_print(t, d, dag_unary(d, XO_NOT, dag_binary(d, XO_EQ, x, y)), "!(in0 == in1)");
    expect_print(t, d, dag_const(d, 1.0 / 3.0), "0.3333333333333333");
    expect_print(t, d, dag_const(d, 1e-300), "1e-300");
    expect_print(t, d, -1, "<none>");
    char small[8];
    dag_print(d, dag_add(d, dag_unary(d, XO_SIN, x), dag_unary(d, XO_COS, y)), small, sizeof small);
    check(t, strcmp(small, "sin(in0") == 0, "printing truncates to the buffer (got %s)", small);
    dag_free(d);
}

/* ------------------------------------------------------------------------------------------ */

static void test_deep_dag(Tally *t)
{
    enum { DEPTH = 300000 };
    ExprDag *d = dag_new();
    ExprId x = dag_input(d, 0), y = dag_input(d, 1);
    ExprId e = x;
    double in[] = { 0.4, 0.9 }, v = in[0];
    for (int i = 0; i < DEPTH; i++) { /* a left-deep chain: recursion would need DEPTH frames */
        e = dag_add(d, dag_mul(d, dag_unary(d, XO_SIN, e), y), x);
        v = sin(v) * in[1] + in[0];
    }
    check(t, dag_count_ops(d, &e, 1) == 3 * DEPTH, "a chain of %d ops is counted", 3 * DEPTH);
    check(t, fabs(dag_eval(d, e, in) - v) <= 1e-12, "a chain of %d ops evaluates iteratively", 3 * DEPTH);
    char buf[64];
    dag_print(d, e, buf, sizeof buf);
    check(t, strncmp(buf, "in0 + in1*sin(in0 + in1*sin(", 28) == 0 && strlen(buf) == sizeof buf - 1,
          "a chain of %d ops prints (truncated) without recursion", 3 * DEPTH);
    /* Divisions by alternating inputs: x/y/y would become x*(1/y)^2. */
    ExprId q = x, z = dag_input(d, 2);
    for (int i = 0; i < DEPTH; i++) /* left-deep: the first character printed is DEPTH levels down */
        q = dag_div(d, q, i % 2 ? z : y);
    dag_print(d, q, buf, sizeof buf);
    check(t, strncmp(buf, "in0/in1/in2/in1/", 16) == 0 &&
                 fabs(dag_eval(d, q, (double[]){ 0.4, 1.0, 1.0 }) - 0.4) < 1e-15,
          "a left-deep chain of %d divisions prints and evaluates", DEPTH);
    dag_free(d);
}

static void test_invalid(Tally *t)
{
    ExprDag *d = dag_new();
    ExprId x = dag_input(d, 0), y = dag_input(d, 1);
    check(t, dag_unary(d, XO_ADD, x) == -1 && dag_unary(d, XO_ATAN2, x) == -1, "dag_unary rejects non-unary ops");
    check(t, dag_binary(d, XO_SIN, x, y) == -1 && dag_binary(d, XO_SELECT, x, y) == -1, "dag_binary rejects non-binary ops");
    check(t, dag_unary(d, XO_NEG, x) == dag_neg(d, x) && dag_binary(d, XO_ADD, x, y) == dag_add(d, x, y),
          "dag_unary/dag_binary also build neg and the arithmetic ops");
    check(t, dag_add(d, x, -1) == -1 && dag_mul(d, 12345, x) == -1 && dag_select(d, x, y, -1) == -1,
          "builders reject missing operands");
    check(t, dag_input(d, -1) == -1 && dag_node(d, -1) == NULL && dag_node(d, dag_size(d)) == NULL,
          "invalid slots and ids");
    dag_free(d);
}

int main(void)
{
    Tally t = { 0, 0 };
    test_hash_consing(&t);
    test_simplification(&t);
    test_constant_folding(&t);
    test_counts_and_eval(&t);
    test_random_programs(&t);
    test_print(&t);
    test_deep_dag(&t);
    test_invalid(&t);
    printf("# %d tests, %d failed\n", t.run, t.failed);
    return t.failed ? 1 : 0;
}
