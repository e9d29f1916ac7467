/* interp.c — runs a kernel's DAG without compiling it: the operations the outputs need, in an
 * order where operands come first, as a flat list of instructions on registers of
 * INTERP_LANES doubles (one instance per lane, like the JIT's vector lanes), followed by the
 * JIT's scatter, instance by instance. Registers are reused once their last reader has run, so
 * a bend-twist kernel's registers fit in the L1 cache. */
#include "interp.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"

/* Instances per pass. Results do not depend on it: lanes are independent. */
enum { INTERP_LANES = 8 };

typedef struct Ins {
    uint8_t op;
    int32_t dst, a, b, c; /* registers; -1 when unused */
    int32_t imm;          /* XO_POWI's exponent */
} Ins;

typedef struct Gather {
    int32_t reg, index;
    uint8_t cls; /* KernelInputClass */
} Gather;

/* An output added into the residual (pos = stencil DOF k) or the Jacobian (pos = k nd + l,
 * and for a symmetric kernel's off-diagonal entries its mirror l nd + k, else -1). */
typedef struct Scatter {
    int32_t reg, pos, mirror;
} Scatter;

struct InterpProgram {
    int      nd, n_regs, n_ins, n_gather, n_consts, n_res, n_jac;
    Ins     *ins;
    Gather  *gather;
    int32_t *const_reg;
    double  *const_val;
    int32_t  value_reg; /* the energy, or -1 */
    Scatter *res, *jac;
};

/* ---- building: order, lifetimes, registers ---- */

typedef struct Builder {
    const KernelSpec *s;
    const ExprDag    *d;
    InterpProgram    *p;
    int32_t          *reg;   /* per node: its register, -1 before it has one */
    int32_t          *last;  /* per node: the last instruction reading it (INT32_MAX: an output) */
    unsigned char    *state; /* per node: 0 not seen, 1 operands pending, 2 ordered */
    int32_t          *order; /* operation nodes, operands first */
    int               n_order;
    int32_t          *free_regs;
    int               n_free;
} Builder;

/* A reduced-coordinate input stands for the expression that computes it. */
static ExprId resolve(const Builder *b, ExprId id)
{
    const ExprNode *n = dag_node(b->d, id);
    while (n->op == XO_INPUT && b->s->inputs[n->index].cls == KIN_EXPR) {
        id = b->s->inputs[n->index].index;
        n = dag_node(b->d, id);
    }
    return id;
}

static void operands(const Builder *b, ExprId id, ExprId kids[3])
{
    const ExprNode *n = dag_node(b->d, id);
    bool op = n->op != XO_CONST && n->op != XO_INPUT;
    kids[0] = op && n->a >= 0 ? resolve(b, n->a) : -1;
    kids[1] = op && n->b >= 0 ? resolve(b, n->b) : -1;
    kids[2] = op && n->c >= 0 ? resolve(b, n->c) : -1;
}

/* Appends the operations `root` needs to the order, operands first, with an explicit stack
 * (derivative chains are thousands of nodes deep). Entries are ids + 1, negated once the
 * node's operands are pushed. */
static void order_from(Builder *b, ExprId root, int32_t *stack)
{
    int top = 0;
    stack[top++] = resolve(b, root) + 1;
    while (top) {
        int32_t entry = stack[--top];
        ExprId id = (entry > 0 ? entry : -entry) - 1;
        if (entry < 0) {
            b->state[id] = 2;
            int op = dag_node(b->d, id)->op;
            if (op != XO_CONST && op != XO_INPUT)
                b->order[b->n_order++] = id;
            continue;
        }
        if (b->state[id])
            continue;
        b->state[id] = 1;
        stack[top++] = -entry;
        ExprId kids[3];
        operands(b, id, kids);
        for (int k = 0; k < 3; k++)
            if (kids[k] >= 0 && !b->state[kids[k]])
                stack[top++] = kids[k] + 1;
    }
}

static bool jac_used(const KernelSpec *s, int k, int l) { return !s->symmetric || k <= l; }

/* The Jacobian entry (k, l) as the JIT scatters it (codegen.c, jac_entry), or -1. */
static ExprId jac_entry(const Builder *b, int k, int l)
{
    const KernelSpec *s = b->s;
    if (s->gradient_only || !jac_used(s, k, l))
        return -1;
    ExprId id = s->jac[k * s->nd + l];
    if (id < 0)
        return -1;
    const ExprNode *n = dag_node(b->d, id);
    return n->op == XO_CONST && n->value == 0 ? -1 : id;
}

/* Every output in scatter order, calling `visit` on each (resolved) node. */
static void for_outputs(Builder *b, void (*visit)(Builder *, ExprId, void *), void *arg)
{
    const KernelSpec *s = b->s;
    if (s->value >= 0)
        visit(b, resolve(b, s->value), arg);
    for (int k = 0; k < s->nd; k++)
        if (s->res[k] >= 0)
            visit(b, resolve(b, s->res[k]), arg);
    for (int k = 0; k < s->nd; k++)
        for (int l = 0; l < s->nd; l++)
            if (jac_entry(b, k, l) >= 0)
                visit(b, resolve(b, jac_entry(b, k, l)), arg);
}

static void visit_order(Builder *b, ExprId id, void *stack) { order_from(b, id, stack); }
static void visit_keep(Builder *b, ExprId id, void *arg)
{
    (void)arg;
    b->last[id] = INT32_MAX;
}

static int32_t take_reg(Builder *b) { return b->n_free ? b->free_regs[--b->n_free] : b->p->n_regs++; }

/* A register for a leaf (constant or gathered input) the first time it is met. */
static void leaf_reg(Builder *b, ExprId id)
{
    if (b->reg[id] >= 0)
        return;
    const ExprNode *n = dag_node(b->d, id);
    InterpProgram *p = b->p;
    b->reg[id] = take_reg(b);
    if (n->op == XO_CONST) {
        p->const_reg[p->n_consts] = b->reg[id];
        p->const_val[p->n_consts++] = n->value;
    } else {
        const KernelInput *in = &b->s->inputs[n->index];
        p->gather[p->n_gather++] = (Gather){ b->reg[id], in->index, (uint8_t)in->cls };
    }
}

/* The node's register is free after instruction i when i read it last; constants stay. */
static void release(Builder *b, ExprId id, int i)
{
    if (id >= 0 && b->last[id] == i && dag_node(b->d, id)->op != XO_CONST) {
        b->free_regs[b->n_free++] = b->reg[id];
        b->last[id] = -2; /* released once, even when read twice by this instruction */
    }
}

/* Leaves get their registers before the first instruction (gathering happens first), then
 * each instruction takes a register for its result and frees its operands' dead ones. */
static void assign_registers(Builder *b)
{
    InterpProgram *p = b->p;
    for (int i = 0; i < b->n_order; i++) {
        ExprId kids[3];
        operands(b, b->order[i], kids);
        for (int k = 0; k < 3; k++)
            if (kids[k] >= 0 && dag_node(b->d, kids[k])->op <= XO_INPUT)
                leaf_reg(b, kids[k]);
    }
    p->ins = srd_xcalloc((size_t)b->n_order + 1, sizeof(Ins));
    for (int i = 0; i < b->n_order; i++) {
        ExprId id = b->order[i], kids[3];
        const ExprNode *n = dag_node(b->d, id);
        operands(b, id, kids);
        b->reg[id] = take_reg(b);
        p->ins[i] = (Ins){ n->op, b->reg[id], kids[0] >= 0 ? b->reg[kids[0]] : -1,
                           kids[1] >= 0 ? b->reg[kids[1]] : -1, kids[2] >= 0 ? b->reg[kids[2]] : -1, n->index };
        for (int k = 0; k < 3; k++)
            release(b, kids[k], i);
    }
    p->n_ins = b->n_order;
}

static void lifetimes(Builder *b)
{
    for (int i = 0; i < b->n_order; i++) {
        ExprId kids[3];
        operands(b, b->order[i], kids);
        for (int k = 0; k < 3; k++)
            if (kids[k] >= 0 && b->last[kids[k]] != INT32_MAX)
                b->last[kids[k]] = i;
    }
}

static void visit_leaf(Builder *b, ExprId id, void *arg)
{
    (void)arg;
    if (dag_node(b->d, id)->op <= XO_INPUT)
        leaf_reg(b, id);
}

/* The scatter lists, in the JIT's order. */
static void build_scatter(Builder *b)
{
    const KernelSpec *s = b->s;
    InterpProgram *p = b->p;
    int nd = s->nd;
    p->value_reg = s->value >= 0 ? b->reg[resolve(b, s->value)] : -1;
    p->res = srd_xcalloc((size_t)nd + 1, sizeof(Scatter));
    p->jac = srd_xcalloc((size_t)nd * nd + 1, sizeof(Scatter));
    for (int k = 0; k < nd; k++)
        if (s->res[k] >= 0)
            p->res[p->n_res++] = (Scatter){ b->reg[resolve(b, s->res[k])], k, -1 };
    for (int k = 0; k < nd; k++)
        for (int l = 0; l < nd; l++) {
            ExprId id = jac_entry(b, k, l);
            if (id >= 0)
                p->jac[p->n_jac++] = (Scatter){ b->reg[resolve(b, id)], k * nd + l,
                                                s->symmetric && k != l ? l * nd + k : -1 };
        }
}

InterpProgram *interp_build(const KernelSpec *spec)
{
    int n = dag_size(spec->dag);
    InterpProgram *p = srd_xcalloc(1, sizeof *p);
    Builder b = { spec, spec->dag, p, NULL, NULL, NULL, NULL, 0, NULL, 0 };
    b.reg = srd_xcalloc((size_t)n + 1, sizeof(int32_t));
    b.last = srd_xcalloc((size_t)n + 1, sizeof(int32_t));
    b.state = srd_xcalloc((size_t)n + 1, 1);
    b.order = srd_xcalloc((size_t)n + 1, sizeof(int32_t));
    b.free_regs = srd_xcalloc((size_t)n + 1, sizeof(int32_t));
    int32_t *stack = srd_xcalloc(4 * (size_t)n + 8, sizeof(int32_t));
    for (int id = 0; id < n; id++)
        b.reg[id] = b.last[id] = -1;
    p->nd = spec->nd;
    p->gather = srd_xcalloc((size_t)n + 1, sizeof(Gather));
    p->const_reg = srd_xcalloc((size_t)n + 1, sizeof(int32_t));
    p->const_val = srd_xcalloc((size_t)n + 1, sizeof(double));
    for_outputs(&b, visit_order, stack);
    for_outputs(&b, visit_keep, NULL);
    for_outputs(&b, visit_leaf, NULL); /* outputs that are constants or plain inputs */
    lifetimes(&b);
    assign_registers(&b);
    build_scatter(&b);
    free(stack);
    free(b.reg);
    free(b.last);
    free(b.state);
    free(b.order);
    free(b.free_regs);
    return p;
}

void interp_stats(const InterpProgram *p, int *ins, int *regs, int *inputs)
{
    *ins = p->n_ins;
    *regs = p->n_regs;
    *inputs = p->n_gather;
}

void interp_free(InterpProgram *p)
{
    if (!p)
        return;
    free(p->ins);
    free(p->gather);
    free(p->const_reg);
    free(p->const_val);
    free(p->res);
    free(p->jac);
    free(p);
}

/* ---- running ---- */

/* x^n with the JIT's multiplications (codegen.c, emit_powi), so the rounding is the same. */
static double powi_as_jit(double x, int n)
{
    int m = n < 0 ? -n : n;
    double result = 0, base = x;
    bool have = false;
    while (m) {
        if (m & 1) {
            result = have ? result * base : base;
            have = true;
        }
        m >>= 1;
        if (m)
            base = base * base;
    }
    if (!have)
        result = 1;
    return n < 0 ? 1 / result : result;
}

#define LANEWISE(expr)                          \
    for (int j = 0; j < INTERP_LANES; j++)      \
        o[j] = (expr);                          \
    break

/* The four arithmetic operations, nearly all of a kernel's instructions, on whole registers
 * (GCC and Clang vector extensions; unaligned, so any calloc'd register file will do). IEEE
 * arithmetic lane by lane, as the JIT's vector instructions. */
typedef double Lanes __attribute__((vector_size(INTERP_LANES * sizeof(double)), aligned(sizeof(double))));
#define WHOLE(expr)          \
    *(Lanes *)o = (expr);    \
    break
#define R(p) (*(const Lanes *)(p))

/* One instruction on every lane. The cases mirror codegen.c's emit_op: comparisons are
 * ordered except `!=` (unordered, as LLVM's UNE), and min/max pick b only when it compares
 * strictly, so NaNs travel as they do there. */
static void run_ins(const Ins *x, double *regs)
{
    double *restrict o = regs + (size_t)x->dst * INTERP_LANES;
    const double *a = regs + (size_t)(x->a >= 0 ? x->a : 0) * INTERP_LANES;
    const double *b = regs + (size_t)(x->b >= 0 ? x->b : 0) * INTERP_LANES;
    const double *c = regs + (size_t)(x->c >= 0 ? x->c : 0) * INTERP_LANES;
    switch ((ExprOp)x->op) {
    case XO_ADD: WHOLE(R(a) + R(b));
    case XO_MUL: WHOLE(R(a) * R(b));
    case XO_DIV: WHOLE(R(a) / R(b));
    case XO_NEG: WHOLE(-R(a));
    case XO_POWI: LANEWISE(powi_as_jit(a[j], x->imm));
    case XO_POW: LANEWISE(pow(a[j], b[j]));
    case XO_SQRT: LANEWISE(sqrt(a[j]));
    case XO_EXP: LANEWISE(exp(a[j]));
    case XO_LOG: LANEWISE(log(a[j]));
    case XO_SIN: LANEWISE(sin(a[j]));
    case XO_COS: LANEWISE(cos(a[j]));
    case XO_TAN: LANEWISE(tan(a[j]));
    case XO_ASIN: LANEWISE(asin(a[j]));
    case XO_ACOS: LANEWISE(acos(a[j]));
    case XO_ATAN: LANEWISE(atan(a[j]));
    case XO_TANH: LANEWISE(tanh(a[j]));
    case XO_ABS: LANEWISE(fabs(a[j]));
    case XO_FLOOR: LANEWISE(floor(a[j]));
    case XO_ATAN2: LANEWISE(atan2(a[j], b[j]));
    case XO_MIN: LANEWISE(b[j] < a[j] ? b[j] : a[j]);
    case XO_MAX: LANEWISE(b[j] > a[j] ? b[j] : a[j]);
    case XO_SELECT: LANEWISE(a[j] != 0 ? b[j] : c[j]);
    case XO_LT: LANEWISE(a[j] < b[j] ? 1.0 : 0.0);
    case XO_LE: LANEWISE(a[j] <= b[j] ? 1.0 : 0.0);
    case XO_EQ: LANEWISE(a[j] == b[j] ? 1.0 : 0.0);
    case XO_NE: LANEWISE(a[j] != b[j] ? 1.0 : 0.0);
    case XO_AND: LANEWISE(a[j] != 0 && b[j] != 0 ? 1.0 : 0.0);
    case XO_OR: LANEWISE(a[j] != 0 || b[j] != 0 ? 1.0 : 0.0);
    case XO_NOT: LANEWISE(a[j] == 0 ? 1.0 : 0.0);
    case XO_CONST:
    case XO_INPUT:
    case XO_COUNT: LANEWISE(0.0);
    }
}

/* One gathered input of instance `inst`, read as the JIT's gather loop reads it. */
static double input_value(const InterpProgram *p, const Gather *g, const srd_eval_ctx *ctx,
                          const srd_elem_batch *batch, int64_t inst)
{
    switch ((KernelInputClass)g->cls) {
    case KIN_DOF: return ctx->q[batch->dofs[inst * p->nd + g->index]];
    case KIN_DOF0: return ctx->q0[batch->dofs[inst * p->nd + g->index]];
    case KIN_VEL0: return ctx->v0[batch->dofs[inst * p->nd + g->index]];
    case KIN_DATA: return batch->data[inst * batch->n_data + g->index];
    case KIN_STATE: return batch->state[inst * batch->n_state + g->index];
    case KIN_PARAM: return ctx->params[g->index];
    case KIN_TIME: return ctx->t;
    case KIN_DT: return ctx->dt;
    case KIN_EXPR: break;
    }
    return 0;
}

/* Lanes past the last instance repeat it, as in the JIT: computed, never scattered. */
static void gather(const InterpProgram *p, const srd_eval_ctx *ctx, const srd_elem_batch *batch, int64_t base,
                   double *regs)
{
    for (int j = 0; j < INTERP_LANES; j++) {
        int64_t inst = base + j < batch->n ? base + j : batch->n - 1;
        for (int k = 0; k < p->n_gather; k++)
            regs[(size_t)p->gather[k].reg * INTERP_LANES + j] = input_value(p, &p->gather[k], ctx, batch, inst);
    }
}

/* Instance base + j's outputs, added in the JIT's order: energy, residual rows, Jacobian. */
static void scatter(const InterpProgram *p, const srd_eval_ctx *ctx, const srd_elem_batch *batch, int64_t inst,
                    const double *regs, int j, double *energy)
{
#define LANE(reg) regs[(size_t)(reg) * INTERP_LANES + j]
    if (p->value_reg >= 0)
        *energy += LANE(p->value_reg);
    if (ctx->grad) {
        const int32_t *row = batch->res + inst * p->nd;
        for (int k = 0; k < p->n_res; k++)
            ctx->grad[row[p->res[k].pos]] += LANE(p->res[k].reg);
    }
    if (ctx->jac && p->n_jac) {
        const int64_t *row = batch->jac_pos + inst * p->nd * p->nd;
        for (int k = 0; k < p->n_jac; k++) {
            double v = LANE(p->jac[k].reg);
            ctx->jac[row[p->jac[k].pos]] += v;
            if (p->jac[k].mirror >= 0)
                ctx->jac[row[p->jac[k].mirror]] += v;
        }
    }
#undef LANE
}

void interp_run(const InterpProgram *p, const srd_eval_ctx *ctx, const srd_elem_batch *batch)
{
    size_t bytes = ((size_t)p->n_regs + 1) * INTERP_LANES * sizeof(double);
    double *regs = srd_xcalloc(1, bytes);
    for (int k = 0; k < p->n_consts; k++)
        for (int j = 0; j < INTERP_LANES; j++)
            regs[(size_t)p->const_reg[k] * INTERP_LANES + j] = p->const_val[k];
    double energy = 0;
    for (int64_t base = 0; base < batch->n; base += INTERP_LANES) {
        gather(p, ctx, batch, base, regs);
        for (int i = 0; i < p->n_ins; i++)
            run_ins(&p->ins[i], regs);
        for (int j = 0; j < INTERP_LANES && base + j < batch->n; j++)
            scatter(p, ctx, batch, base + j, regs, j, &energy);
    }
    if (ctx->energy)
        *ctx->energy += energy;
    free(regs);
}
