/* expr.h — the scalar expression DAG of the kernel compiler. Nodes are hash-consed (an
 * expression that is built twice exists once) and simplified while they are built, so the
 * derivatives that diff.c adds share every common subexpression automatically. */
#ifndef SRD_EXPR_H
#define SRD_EXPR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int32_t ExprId; /* index of a node in its DAG; -1 is "none" */

typedef enum {
    XO_CONST,   /* value */
    XO_INPUT,   /* input slot `index` (a DOF, per-instance datum, param, t, dt, step-start value) */
    XO_ADD, XO_MUL, XO_DIV, /* a + b, a * b, a / b (no XO_SUB: a - b is a + (-1)*b, canonical) */
    XO_NEG,     /* -a */
    XO_POWI,    /* a ^ index (integer exponent, index != 0, 1) */
    XO_POW,     /* a ^ b (general, a > 0 assumed where differentiated) */
    XO_SQRT, XO_EXP, XO_LOG, XO_SIN, XO_COS, XO_TAN, XO_ASIN, XO_ACOS, XO_ATAN, XO_TANH,
    XO_ABS,     /* derivative sign(a) */
    XO_ATAN2,   /* atan2(a, b) */
    XO_MIN, XO_MAX,
    XO_SELECT,  /* a != 0 ? b : c; differentiated branch-wise */
    XO_LT, XO_LE, XO_EQ, XO_NE, XO_AND, XO_OR, XO_NOT, /* 1.0 or 0.0; derivative 0 */
    XO_FLOOR,   /* derivative 0 */
    XO_COUNT
} ExprOp;

typedef struct ExprNode {
    uint8_t op;
    int32_t a, b, c; /* operands (-1 when unused) */
    int32_t index;   /* XO_INPUT slot, XO_POWI exponent */
    double  value;   /* XO_CONST */
} ExprNode;

typedef struct ExprDag ExprDag;

ExprDag *dag_new(void);
void     dag_free(ExprDag *d);
int      dag_size(const ExprDag *d);
const ExprNode *dag_node(const ExprDag *d, ExprId id);

/* Builders: each returns an existing node when an equal one exists, and simplifies:
 * constant folding; x+0, 0+x, x*1, x*0, x/1, 0/x -> 0, -(-x), x-x -> 0 (via a + (-1)*a),
 * x^1, x^0, products of constants gathered, commutative operands ordered canonically,
 * select with a constant condition or equal branches. */
ExprId dag_const(ExprDag *d, double v);
ExprId dag_input(ExprDag *d, int slot);
ExprId dag_add(ExprDag *d, ExprId a, ExprId b);
ExprId dag_sub(ExprDag *d, ExprId a, ExprId b);
ExprId dag_mul(ExprDag *d, ExprId a, ExprId b);
ExprId dag_div(ExprDag *d, ExprId a, ExprId b);
ExprId dag_neg(ExprDag *d, ExprId a);
ExprId dag_powi(ExprDag *d, ExprId a, int n);
ExprId dag_pow(ExprDag *d, ExprId a, ExprId b);    /* uses dag_powi when b is an integer constant */
ExprId dag_unary(ExprDag *d, ExprOp op, ExprId a); /* SQRT .. TANH, ABS, NOT, FLOOR */
ExprId dag_binary(ExprDag *d, ExprOp op, ExprId a, ExprId b); /* ATAN2, MIN, MAX, comparisons, AND, OR */
ExprId dag_select(ExprDag *d, ExprId cond, ExprId a, ExprId b);

/* Evaluates nodes by interpretation (tests and constant folding); inputs[slot]. */
double dag_eval(const ExprDag *d, ExprId root, const double *inputs);
/* Evaluates many roots at once, sharing the work. */
void   dag_eval_many(const ExprDag *d, const ExprId *roots, int n, const double *inputs, double *out);

/* The nodes reachable from the roots in increasing id order (children before parents), as a
 * malloc'd array of *count ids; *limit is one past the largest root. */
ExprId *dag_reachable(const ExprDag *d, const ExprId *roots, int n, int32_t *count, int32_t *limit);

/* Number of distinct operation nodes (not constants or inputs) reachable from the roots. */
int dag_count_ops(const ExprDag *d, const ExprId *roots, int n);

/* Writes the expression in readable infix form (for dumps and tests). */
void dag_print(const ExprDag *d, ExprId root, char *buf, size_t n);

#endif
