/* codegen.c — lowers element DAGs to LLVM IR: a loop over the batch's instances that gathers
 * DOFs, evaluates the shared value/gradient/Hessian expressions, and scatters into the
 * residual and Jacobian through precomputed positions. */
#include "codegen.h"
#include "alloc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Cg {
    LLVMContextRef C;
    LLVMModuleRef  M;
    LLVMBuilderRef B;
    LLVMTypeRef    f64, i32, i64, i1, ptr, void_ty;
    LLVMTypeRef    ctx_ty, batch_ty;
    const KernelSpec *spec;
    const ExprDag *dag;
    LLVMValueRef  *val;      /* per node: its value in the function being emitted */
    int           *order;    /* reachable operation nodes, increasing id (topological) */
    int            n_order;
    int           *slot;     /* per node: spill slot when chunking, else -1 */
    LLVMValueRef   spill;    /* spill array pointer in the function being emitted */
    /* per-instance values of the loop body */
    LLVMValueRef   ctx, batch, i, dofs_row, data_row, state_row;
} Cg;

/* ---- types and small helpers ---- */

static void init_types(Cg *g)
{
    g->f64 = LLVMDoubleTypeInContext(g->C);
    g->i32 = LLVMInt32TypeInContext(g->C);
    g->i64 = LLVMInt64TypeInContext(g->C);
    g->i1 = LLVMInt1TypeInContext(g->C);
    g->ptr = LLVMPointerTypeInContext(g->C, 0);
    g->void_ty = LLVMVoidTypeInContext(g->C);
    LLVMTypeRef ctx_fields[9] = { g->ptr, g->ptr, g->ptr, g->ptr, g->f64, g->f64, g->ptr, g->ptr, g->ptr };
    g->ctx_ty = LLVMStructTypeInContext(g->C, ctx_fields, 9, 0);
    LLVMTypeRef batch_fields[9] = { g->i32, g->i32, g->i32, g->i32, g->ptr, g->ptr, g->ptr, g->ptr, g->ptr };
    g->batch_ty = LLVMStructTypeInContext(g->C, batch_fields, 9, 0);
}

static LLVMValueRef field(Cg *g, LLVMTypeRef sty, LLVMValueRef base, unsigned k, LLVMTypeRef ty, const char *name)
{
    LLVMValueRef p = LLVMBuildStructGEP2(g->B, sty, base, k, "");
    return LLVMBuildLoad2(g->B, ty, p, name);
}

static LLVMValueRef load_at(Cg *g, LLVMTypeRef ty, LLVMValueRef base, LLVMValueRef index)
{
    LLVMValueRef p = LLVMBuildGEP2(g->B, ty, base, &index, 1, "");
    return LLVMBuildLoad2(g->B, ty, p, "");
}

static LLVMValueRef i64c(Cg *g, long long v) { return LLVMConstInt(g->i64, (unsigned long long)v, 1); }
static LLVMValueRef f64c(Cg *g, double v) { return LLVMConstReal(g->f64, v); }

static LLVMValueRef call_intrinsic(Cg *g, const char *name, LLVMValueRef *args, unsigned n)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMTypeRef overload = g->f64;
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(g->M, id, &overload, 1);
    LLVMTypeRef fty = LLVMIntrinsicGetType(g->C, id, &overload, 1);
    return LLVMBuildCall2(g->B, fty, fn, args, n, "");
}

static LLVMValueRef call_libm(Cg *g, const char *name, LLVMValueRef *args, unsigned n)
{
    LLVMTypeRef params[2] = { g->f64, g->f64 };
    LLVMTypeRef fty = LLVMFunctionType(g->f64, params, n, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(g->M, name);
    if (!fn)
        fn = LLVMAddFunction(g->M, name, fty);
    return LLVMBuildCall2(g->B, fty, fn, args, n, "");
}

static LLVMValueRef bool_to_f64(Cg *g, LLVMValueRef b) { return LLVMBuildUIToFP(g->B, b, g->f64, ""); }

static LLVMValueRef is_true(Cg *g, LLVMValueRef v) { return LLVMBuildFCmp(g->B, LLVMRealUNE, v, f64c(g, 0), ""); }

/* x^n by repeated squaring; exact for the small exponents energies use. */
static LLVMValueRef emit_powi(Cg *g, LLVMValueRef x, int n)
{
    int m = n < 0 ? -n : n;
    LLVMValueRef result = NULL, base = x;
    while (m) {
        if (m & 1)
            result = result ? LLVMBuildFMul(g->B, result, base, "") : base;
        m >>= 1;
        if (m)
            base = LLVMBuildFMul(g->B, base, base, "");
    }
    if (!result)
        result = f64c(g, 1);
    return n < 0 ? LLVMBuildFDiv(g->B, f64c(g, 1), result, "") : result;
}

/* ---- inputs ---- */

static LLVMValueRef operand(Cg *g, ExprId id);

static LLVMValueRef emit_input(Cg *g, int slot)
{
    const KernelInput *in = &g->spec->inputs[slot];
    LLVMValueRef idx = i64c(g, in->index);
    switch (in->cls) {
    case KIN_DOF:
    case KIN_DOF0:
    case KIN_VEL0: {
        LLVMValueRef dof = LLVMBuildSExt(g->B, load_at(g, g->i32, g->dofs_row, idx), g->i64, "");
        unsigned k = in->cls == KIN_DOF ? 0 : in->cls == KIN_DOF0 ? 1 : 2;
        LLVMValueRef arr = field(g, g->ctx_ty, g->ctx, k, g->ptr, "");
        return load_at(g, g->f64, arr, dof);
    }
    case KIN_DATA: return load_at(g, g->f64, g->data_row, idx);
    case KIN_STATE: return load_at(g, g->f64, g->state_row, idx);
    case KIN_PARAM: return load_at(g, g->f64, field(g, g->ctx_ty, g->ctx, 3, g->ptr, ""), idx);
    case KIN_TIME: return field(g, g->ctx_ty, g->ctx, 4, g->f64, "t");
    case KIN_DT: return field(g, g->ctx_ty, g->ctx, 5, g->f64, "dt");
    case KIN_EXPR: return operand(g, in->index);
    }
    return f64c(g, 0);
}

/* ---- DAG nodes ---- */

static LLVMValueRef operand(Cg *g, ExprId id);

static LLVMValueRef emit_op(Cg *g, const ExprNode *n)
{
    LLVMValueRef a = n->a >= 0 ? operand(g, n->a) : NULL;
    LLVMValueRef b = n->b >= 0 ? operand(g, n->b) : NULL;
    LLVMValueRef args[2] = { a, b };
    switch ((ExprOp)n->op) {
    case XO_ADD: return LLVMBuildFAdd(g->B, a, b, "");
    case XO_MUL: return LLVMBuildFMul(g->B, a, b, "");
    case XO_DIV: return LLVMBuildFDiv(g->B, a, b, "");
    case XO_NEG: return LLVMBuildFNeg(g->B, a, "");
    case XO_POWI: return emit_powi(g, a, n->index);
    case XO_POW: return call_intrinsic(g, "llvm.pow", args, 2);
    case XO_SQRT: return call_intrinsic(g, "llvm.sqrt", args, 1);
    case XO_EXP: return call_intrinsic(g, "llvm.exp", args, 1);
    case XO_LOG: return call_intrinsic(g, "llvm.log", args, 1);
    case XO_SIN: return call_intrinsic(g, "llvm.sin", args, 1);
    case XO_COS: return call_intrinsic(g, "llvm.cos", args, 1);
    case XO_ABS: return call_intrinsic(g, "llvm.fabs", args, 1);
    case XO_FLOOR: return call_intrinsic(g, "llvm.floor", args, 1);
    case XO_TAN: return call_libm(g, "tan", args, 1);
    case XO_ASIN: return call_libm(g, "asin", args, 1);
    case XO_ACOS: return call_libm(g, "acos", args, 1);
    case XO_ATAN: return call_libm(g, "atan", args, 1);
    case XO_TANH: return call_libm(g, "tanh", args, 1);
    case XO_ATAN2: return call_libm(g, "atan2", args, 2);
    case XO_MIN: return LLVMBuildSelect(g->B, LLVMBuildFCmp(g->B, LLVMRealOLT, b, a, ""), b, a, "");
    case XO_MAX: return LLVMBuildSelect(g->B, LLVMBuildFCmp(g->B, LLVMRealOGT, b, a, ""), b, a, "");
    case XO_SELECT: return LLVMBuildSelect(g->B, is_true(g, a), b, operand(g, n->c), "");
    case XO_LT: return bool_to_f64(g, LLVMBuildFCmp(g->B, LLVMRealOLT, a, b, ""));
    case XO_LE: return bool_to_f64(g, LLVMBuildFCmp(g->B, LLVMRealOLE, a, b, ""));
    case XO_EQ: return bool_to_f64(g, LLVMBuildFCmp(g->B, LLVMRealOEQ, a, b, ""));
    case XO_NE: return bool_to_f64(g, LLVMBuildFCmp(g->B, LLVMRealUNE, a, b, ""));
    case XO_AND: return bool_to_f64(g, LLVMBuildAnd(g->B, is_true(g, a), is_true(g, b), ""));
    case XO_OR: return bool_to_f64(g, LLVMBuildOr(g->B, is_true(g, a), is_true(g, b), ""));
    case XO_NOT: return bool_to_f64(g, LLVMBuildFCmp(g->B, LLVMRealOEQ, a, f64c(g, 0), ""));
    case XO_CONST:
    case XO_INPUT:
    case XO_COUNT: break;
    }
    return f64c(g, 0);
}

/* The value of a node in the current function: emitted here, loaded from the spill array
 * (chunked kernels), an input load, or a constant. */
static LLVMValueRef operand(Cg *g, ExprId id)
{
    if (g->val[id])
        return g->val[id];
    const ExprNode *n = dag_node(g->dag, id);
    LLVMValueRef v;
    if (n->op == XO_CONST)
        return f64c(g, n->value);
    if (g->spill && g->slot[id] >= 0)
        v = load_at(g, g->f64, g->spill, i64c(g, g->slot[id]));
    else if (n->op == XO_INPUT)
        v = emit_input(g, n->index);
    else
        v = emit_op(g, n);
    g->val[id] = v;
    return v;
}

/* ---- which nodes the outputs need ---- */

/* Marks every node the root needs, following reduced-coordinate inputs to their nodes. */
static void mark_reachable(const Cg *g, ExprId root, unsigned char *mark)
{
    const ExprDag *d = g->dag;
    if (root < 0 || mark[root])
        return;
    int cap = 64, top = 0;
    ExprId *stack = srd_xcalloc((size_t)cap, sizeof(ExprId));
    stack[top++] = root;
    mark[root] = 1;
    while (top) {
        const ExprNode *n = dag_node(d, stack[--top]);
        ExprId kids[3] = { n->a, n->b, n->c };
        if (n->op == XO_INPUT && g->spec->inputs[n->index].cls == KIN_EXPR)
            kids[0] = g->spec->inputs[n->index].index;
        for (int k = 0; k < 3; k++) {
            if (kids[k] < 0 || mark[kids[k]])
                continue;
            mark[kids[k]] = 1;
            if (top == cap) {
                cap *= 2;
                stack = realloc(stack, sizeof(ExprId) * (size_t)cap);
            }
            stack[top++] = kids[k];
        }
    }
    free(stack);
}

static bool jac_used(const KernelSpec *s, int k, int l) { return !s->symmetric || k <= l; }

static void collect_order(Cg *g)
{
    const KernelSpec *s = g->spec;
    int n = dag_size(g->dag);
    unsigned char *mark = srd_xcalloc((size_t)n + 1, 1);
    mark_reachable(g, s->value, mark);
    for (int k = 0; k < s->nd; k++)
        mark_reachable(g, s->res[k], mark);
    for (int k = 0; k < s->nd && !s->gradient_only; k++)
        for (int l = 0; l < s->nd; l++)
            if (jac_used(s, k, l))
                mark_reachable(g, s->jac[k * s->nd + l], mark);
    g->order = srd_xcalloc((size_t)n + 1, sizeof(int));
    g->n_order = 0;
    for (int id = 0; id < n; id++) {
        int op = dag_node(g->dag, id)->op;
        if (mark[id] && op != XO_CONST && op != XO_INPUT)
            g->order[g->n_order++] = id;
    }
    free(mark);
}

/* ---- the kernel function ---- */

static LLVMValueRef begin_function(Cg *g, const char *name, LLVMTypeRef fty, bool internal)
{
    LLVMValueRef fn = LLVMAddFunction(g->M, name, fty);
    if (internal) {
        LLVMSetLinkage(fn, LLVMInternalLinkage);
        unsigned kind = LLVMGetEnumAttributeKindForName("noinline", 8);
        LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(g->C, kind, 0));
    }
    LLVMPositionBuilderAtEnd(g->B, LLVMAppendBasicBlockInContext(g->C, fn, "entry"));
    return fn;
}

/* dst[idx] += v. Entries the runtime drops (fixed DOFs, outside the band) point at its
 * scratch slot past the end, so the scatter needs no branch. */
static void add_at(Cg *g, LLVMValueRef dst, LLVMValueRef idx, LLVMValueRef v)
{
    LLVMValueRef i64idx = LLVMTypeOf(idx) == g->i64 ? idx : LLVMBuildSExt(g->B, idx, g->i64, "");
    LLVMValueRef p = LLVMBuildGEP2(g->B, g->f64, dst, &i64idx, 1, "");
    LLVMBuildStore(g->B, LLVMBuildFAdd(g->B, LLVMBuildLoad2(g->B, g->f64, p, ""), v, ""), p);
}

/* Runs `body` only when the ctx pointer field k is not NULL; returns that pointer. */
static LLVMValueRef begin_if_present(Cg *g, LLVMValueRef fn, unsigned k, LLVMBasicBlockRef *after)
{
    LLVMValueRef p = field(g, g->ctx_ty, g->ctx, k, g->ptr, "");
    LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(g->C, fn, "present");
    *after = LLVMAppendBasicBlockInContext(g->C, fn, "absent");
    LLVMBuildCondBr(g->B, LLVMBuildIsNotNull(g->B, p, ""), yes, *after);
    LLVMPositionBuilderAtEnd(g->B, yes);
    return p;
}

static void scatter_outputs(Cg *g, LLVMValueRef fn, LLVMValueRef *energy_acc)
{
    const KernelSpec *s = g->spec;
    int nd = s->nd;
    if (s->value >= 0)
        *energy_acc = LLVMBuildFAdd(g->B, *energy_acc, operand(g, s->value), "");
    LLVMBasicBlockRef after;
    LLVMValueRef grad = begin_if_present(g, fn, 7, &after);
    LLVMValueRef res_row = LLVMBuildGEP2(g->B, g->i32, field(g, g->batch_ty, g->batch, 5, g->ptr, ""),
                                         &(LLVMValueRef){ LLVMBuildMul(g->B, g->i, i64c(g, nd), "") }, 1, "");
    for (int k = 0; k < nd; k++) {
        if (s->res[k] < 0)
            continue;
        LLVMValueRef v = operand(g, s->res[k]);
        add_at(g, grad, load_at(g, g->i32, res_row, i64c(g, k)), v);
    }
    LLVMBuildBr(g->B, after);
    LLVMPositionBuilderAtEnd(g->B, after);
    if (s->gradient_only)
        return;

    LLVMValueRef jac = begin_if_present(g, fn, 8, &after);
    LLVMValueRef pos_row = LLVMBuildGEP2(g->B, g->i64, field(g, g->batch_ty, g->batch, 6, g->ptr, ""),
                                         &(LLVMValueRef){ LLVMBuildMul(g->B, g->i, i64c(g, (long long)nd * nd), "") }, 1, "");
    for (int k = 0; k < nd; k++)
        for (int l = 0; l < nd; l++) {
            if (!jac_used(s, k, l) || s->jac[k * nd + l] < 0)
                continue;
            const ExprNode *n = dag_node(g->dag, s->jac[k * nd + l]);
            if (n->op == XO_CONST && n->value == 0)
                continue;
            LLVMValueRef v = operand(g, s->jac[k * nd + l]);
            add_at(g, jac, load_at(g, g->i64, pos_row, i64c(g, k * nd + l)), v);
            if (s->symmetric && k != l)
                add_at(g, jac, load_at(g, g->i64, pos_row, i64c(g, l * nd + k)), v);
        }
    LLVMBuildBr(g->B, after);
    LLVMPositionBuilderAtEnd(g->B, after);
}

/* Chunked evaluation: every input and operation has a slot in a spill array; each chunk
 * function computes a run of operations and stores them. Returns the slot count. */
static int assign_spill_slots(Cg *g)
{
    int n = dag_size(g->dag);
    g->slot = srd_xcalloc((size_t)n + 1, sizeof(int));
    for (int id = 0; id < n; id++)
        g->slot[id] = -1;
    int slots = 0;
    for (int id = 0; id < n; id++)
        if (dag_node(g->dag, id)->op == XO_INPUT)
            g->slot[id] = slots++;
    for (int k = 0; k < g->n_order; k++)
        g->slot[g->order[k]] = slots++;
    return slots;
}

/* needed[id]: the value of op node id is read outside the chunk that computes it (a later
 * chunk, or the scatter of outputs in the loop body), so that chunk must store it. */
static unsigned char *values_needed_later(Cg *g, int chunk_ops)
{
    int n = dag_size(g->dag);
    int *chunk_of = srd_xcalloc((size_t)n + 1, sizeof(int));
    unsigned char *needed = srd_xcalloc((size_t)n + 1, 1);
    for (int id = 0; id < n; id++)
        chunk_of[id] = -1;
    for (int k = 0; k < g->n_order; k++)
        chunk_of[g->order[k]] = k / chunk_ops;
    for (int k = 0; k < g->n_order; k++) {
        const ExprNode *nd = dag_node(g->dag, g->order[k]);
        ExprId kids[3] = { nd->a, nd->b, nd->c };
        for (int j = 0; j < 3; j++)
            if (kids[j] >= 0 && chunk_of[kids[j]] >= 0 && chunk_of[kids[j]] != k / chunk_ops)
                needed[kids[j]] = 1;
    }
    const KernelSpec *s = g->spec;
    if (s->value >= 0)
        needed[s->value] = 1;
    for (int k = 0; k < s->nd; k++)
        if (s->res[k] >= 0)
            needed[s->res[k]] = 1;
    for (int k = 0; k < s->nd * s->nd && !s->gradient_only; k++)
        if (s->jac[k] >= 0 && jac_used(s, k / s->nd, k % s->nd))
            needed[s->jac[k]] = 1;
    free(chunk_of);
    return needed;
}

static void emit_chunk_functions(Cg *g, LLVMValueRef loop_fn, int chunk_ops, LLVMValueRef spill, CodegenStats *st)
{
    int n = dag_size(g->dag);
    unsigned char *needed = values_needed_later(g, chunk_ops);
    /* Inputs are loaded in the loop body and stored for the chunks. */
    for (int id = 0; id < n; id++)
        if (dag_node(g->dag, id)->op == XO_INPUT && g->slot[id] >= 0) {
            LLVMValueRef v = emit_input(g, dag_node(g->dag, id)->index);
            LLVMValueRef idx = i64c(g, g->slot[id]);
            LLVMBuildStore(g->B, v, LLVMBuildGEP2(g->B, g->f64, spill, &idx, 1, ""));
        }
    LLVMBasicBlockRef loop_block = LLVMGetInsertBlock(g->B);
    LLVMTypeRef chunk_ty = LLVMFunctionType(g->void_ty, &g->ptr, 1, 0);
    char name[256];
    for (int start = 0, c = 0; start < g->n_order; start += chunk_ops, c++) {
        int end = start + chunk_ops < g->n_order ? start + chunk_ops : g->n_order;
        snprintf(name, sizeof name, "%s%s.chunk%d", g->spec->gradient_only ? "srd_gradient_" : "srd_kernel_",
                 g->spec->kind, c);
        LLVMValueRef fn = begin_function(g, name, chunk_ty, true);
        memset(g->val, 0, sizeof(LLVMValueRef) * (size_t)n);
        g->spill = LLVMGetParam(fn, 0);
        for (int k = start; k < end; k++) {
            int id = g->order[k];
            LLVMValueRef v = emit_op(g, dag_node(g->dag, id));
            g->val[id] = v;
            if (!needed[id])
                continue;
            LLVMValueRef idx = i64c(g, g->slot[id]);
            LLVMBuildStore(g->B, v, LLVMBuildGEP2(g->B, g->f64, g->spill, &idx, 1, ""));
        }
        LLVMBuildRetVoid(g->B);
        if (g->spec->parts > 1) {
            /* Split compilation: the chunk is someone's external function; other modules
             * only declare it. Its body is built either way, so both agree on its slots. */
            LLVMSetLinkage(fn, LLVMExternalLinkage);
            if (c % g->spec->parts != g->spec->part) {
                LLVMDeleteFunction(fn);
                fn = LLVMAddFunction(g->M, name, chunk_ty);
            }
        }
        LLVMPositionBuilderAtEnd(g->B, loop_block);
        LLVMBuildCall2(g->B, chunk_ty, fn, &spill, 1, "");
        st->chunks++;
    }
    (void)loop_fn;
    free(needed);
    memset(g->val, 0, sizeof(LLVMValueRef) * (size_t)n);
    g->spill = spill;
}

void cg_emit_kernel(LLVMModuleRef M, const KernelSpec *spec, int chunk_ops, CodegenStats *stats)
{
    Cg g;
    memset(&g, 0, sizeof g);
    g.M = M;
    g.C = LLVMGetModuleContext(M);
    g.B = LLVMCreateBuilderInContext(g.C);
    g.spec = spec;
    g.dag = spec->dag;
    init_types(&g);
    collect_order(&g);
    int n = dag_size(g.dag);
    g.val = srd_xcalloc((size_t)n + 1, sizeof(LLVMValueRef));
    CodegenStats st = { g.n_order, 0 };
    bool chunked = chunk_ops > 0 && g.n_order > chunk_ops;
    int slots = chunked ? assign_spill_slots(&g) : 0;

    char name[256];
    snprintf(name, sizeof name, "%s%s", spec->gradient_only ? "srd_gradient_" : "srd_kernel_", spec->kind);
    LLVMTypeRef params[2] = { g.ptr, g.ptr };
    LLVMValueRef fn = begin_function(&g, name, LLVMFunctionType(g.void_ty, params, 2, 0), false);
    g.ctx = LLVMGetParam(fn, 0);
    g.batch = LLVMGetParam(fn, 1);
    LLVMValueRef spill = chunked ? LLVMBuildArrayAlloca(g.B, g.f64, LLVMConstInt(g.i32, (unsigned)slots, 0), "spill") : NULL;
    LLVMValueRef count = LLVMBuildSExt(g.B, field(&g, g.batch_ty, g.batch, 0, g.i32, "n"), g.i64, "");
    LLVMValueRef n_data = LLVMBuildSExt(g.B, field(&g, g.batch_ty, g.batch, 2, g.i32, ""), g.i64, "");
    LLVMValueRef n_state = LLVMBuildSExt(g.B, field(&g, g.batch_ty, g.batch, 3, g.i32, ""), g.i64, "");
    LLVMValueRef dofs = field(&g, g.batch_ty, g.batch, 4, g.ptr, "dofs");
    LLVMValueRef data = field(&g, g.batch_ty, g.batch, 7, g.ptr, "data");
    LLVMValueRef state = field(&g, g.batch_ty, g.batch, 8, g.ptr, "state");
    LLVMBasicBlockRef entry = LLVMGetInsertBlock(g.B);
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(g.C, fn, "loop");
    LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(g.C, fn, "exit");
    LLVMBuildCondBr(g.B, LLVMBuildICmp(g.B, LLVMIntSGT, count, i64c(&g, 0), ""), loop, exit);

    LLVMPositionBuilderAtEnd(g.B, loop);
    LLVMValueRef i = LLVMBuildPhi(g.B, g.i64, "i");
    LLVMValueRef energy = LLVMBuildPhi(g.B, g.f64, "energy");
    g.i = i;
    LLVMValueRef nd = i64c(&g, spec->nd);
    g.dofs_row = LLVMBuildGEP2(g.B, g.i32, dofs, &(LLVMValueRef){ LLVMBuildMul(g.B, i, nd, "") }, 1, "");
    g.data_row = LLVMBuildGEP2(g.B, g.f64, data, &(LLVMValueRef){ LLVMBuildMul(g.B, i, n_data, "") }, 1, "");
    g.state_row = LLVMBuildGEP2(g.B, g.f64, state, &(LLVMValueRef){ LLVMBuildMul(g.B, i, n_state, "") }, 1, "");
    if (chunked)
        emit_chunk_functions(&g, fn, chunk_ops, spill, &st);
    else
        for (int k = 0; k < g.n_order; k++)
            operand(&g, g.order[k]);
    LLVMValueRef acc = energy;
    scatter_outputs(&g, fn, &acc);
    LLVMValueRef next = LLVMBuildAdd(g.B, i, i64c(&g, 1), "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(g.B);
    LLVMBuildCondBr(g.B, LLVMBuildICmp(g.B, LLVMIntSLT, next, count, ""), loop, exit);
    LLVMValueRef zero = i64c(&g, 0), fzero = f64c(&g, 0);
    LLVMAddIncoming(i, (LLVMValueRef[]){ zero, next }, (LLVMBasicBlockRef[]){ entry, latch }, 2);
    LLVMAddIncoming(energy, (LLVMValueRef[]){ fzero, acc }, (LLVMBasicBlockRef[]){ entry, latch }, 2);

    LLVMPositionBuilderAtEnd(g.B, exit);
    LLVMValueRef total = LLVMBuildPhi(g.B, g.f64, "total");
    LLVMAddIncoming(total, (LLVMValueRef[]){ fzero, acc }, (LLVMBasicBlockRef[]){ entry, latch }, 2);
    LLVMBasicBlockRef after;
    LLVMValueRef eptr = begin_if_present(&g, fn, 6, &after);
    LLVMBuildStore(g.B, LLVMBuildFAdd(g.B, LLVMBuildLoad2(g.B, g.f64, eptr, ""), total, ""), eptr);
    LLVMBuildBr(g.B, after);
    LLVMPositionBuilderAtEnd(g.B, after);
    LLVMBuildRetVoid(g.B);
    /* Only part 0 keeps the kernel function: the other parts carry chunk bodies. */
    if (spec->parts > 1 && spec->part != 0)
        LLVMDeleteFunction(fn);

    LLVMDisposeBuilder(g.B);
    free(g.val);
    free(g.order);
    free(g.slot);
    if (stats)
        *stats = st;
}
