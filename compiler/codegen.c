/* codegen.c — lowers element DAGs to LLVM IR: a loop over the batch's instances, W at a time
 * (one per vector lane), that gathers their DOFs, evaluates the shared value/gradient/Hessian
 * expressions on vectors of W instances, and scatters each lane into the residual and
 * Jacobian through precomputed positions. */
#include "codegen.h"
#include "alloc.h"
#include <llvm-c/TargetMachine.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Cg {
    LLVMContextRef C;
    LLVMModuleRef  M;
    LLVMBuilderRef B;
    LLVMTypeRef    f64, i32, i64, i1, ptr, void_ty;
    LLVMTypeRef    vt;       /* type of a DAG value: double, or W doubles (one per instance) */
    int            W;        /* instances evaluated together */
    LLVMTypeRef    ctx_ty, batch_ty;
    const KernelSpec *spec;
    const ExprDag *dag;
    LLVMValueRef  *val;      /* per node: its value in the function being emitted */
    unsigned char *reach;    /* per node: needed by some output */
    int           *order;    /* reachable operation nodes, increasing id (topological) */
    int            n_order;
    int           *slot;     /* per node: its place in the spill array, or -1 */
    bool           in_body;  /* emitting reduced-coordinate inputs in the loop body, before the chunks */
    LLVMValueRef   spill;    /* spill array pointer in the function being emitted */
    /* per-instance values of the gather and scatter loops */
    LLVMValueRef   ctx, batch, dofs_row, data_row, state_row;
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
    g->vt = g->W > 1 ? LLVMVectorType(g->f64, (unsigned)g->W) : g->f64;
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

/* A constant in every lane. */
static LLVMValueRef vconst(Cg *g, double v)
{
    if (g->W == 1)
        return f64c(g, v);
    LLVMValueRef lanes[16];
    for (int j = 0; j < g->W; j++)
        lanes[j] = f64c(g, v);
    return LLVMConstVector(lanes, (unsigned)g->W);
}

static LLVMValueRef call_intrinsic(Cg *g, const char *name, LLVMValueRef *args, unsigned n)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMTypeRef overload = g->vt;
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(g->M, id, &overload, 1);
    LLVMTypeRef fty = LLVMIntrinsicGetType(g->C, id, &overload, 1);
    return LLVMBuildCall2(g->B, fty, fn, args, n, "");
}

/* A scalar libm function, applied lane by lane to vectors. */
static LLVMValueRef call_libm(Cg *g, const char *name, LLVMValueRef *args, unsigned n)
{
    LLVMTypeRef params[2] = { g->f64, g->f64 };
    LLVMTypeRef fty = LLVMFunctionType(g->f64, params, n, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(g->M, name);
    if (!fn)
        fn = LLVMAddFunction(g->M, name, fty);
    if (g->W == 1)
        return LLVMBuildCall2(g->B, fty, fn, args, n, "");
    LLVMValueRef out = LLVMGetUndef(g->vt);
    for (int j = 0; j < g->W; j++) {
        LLVMValueRef lane = LLVMConstInt(g->i32, (unsigned)j, 0), scalar[2];
        for (unsigned k = 0; k < n; k++)
            scalar[k] = LLVMBuildExtractElement(g->B, args[k], lane, "");
        out = LLVMBuildInsertElement(g->B, out, LLVMBuildCall2(g->B, fty, fn, scalar, n, ""), lane, "");
    }
    return out;
}

static LLVMValueRef bool_to_f64(Cg *g, LLVMValueRef b) { return LLVMBuildUIToFP(g->B, b, g->vt, ""); }

static LLVMValueRef is_true(Cg *g, LLVMValueRef v) { return LLVMBuildFCmp(g->B, LLVMRealUNE, v, vconst(g, 0), ""); }

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
        result = vconst(g, 1);
    return n < 0 ? LLVMBuildFDiv(g->B, vconst(g, 1), result, "") : result;
}

/* ---- the spill array: slot s of lane j is element s*W + j, so a slot's lanes are one
 * aligned vector ---- */

static LLVMValueRef spill_lane_ptr(Cg *g, int slot, LLVMValueRef lane)
{
    LLVMValueRef idx = LLVMBuildAdd(g->B, i64c(g, (long long)slot * g->W), lane, "");
    return LLVMBuildGEP2(g->B, g->f64, g->spill, &idx, 1, "");
}

static LLVMValueRef spill_vector_ptr(Cg *g, int slot)
{
    LLVMValueRef idx = i64c(g, (long long)slot * g->W);
    return LLVMBuildGEP2(g->B, g->f64, g->spill, &idx, 1, "");
}

static LLVMValueRef load_slot(Cg *g, int slot)
{
    LLVMValueRef v = LLVMBuildLoad2(g->B, g->vt, spill_vector_ptr(g, slot), "");
    LLVMSetAlignment(v, (unsigned)(8 * g->W));
    return v;
}

static void store_slot(Cg *g, int slot, LLVMValueRef v)
{
    LLVMSetAlignment(LLVMBuildStore(g->B, v, spill_vector_ptr(g, slot)), (unsigned)(8 * g->W));
}

/* ---- inputs, one lane at a time ---- */

static LLVMValueRef emit_input_lane(Cg *g, int slot)
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
    case KIN_EXPR: break; /* computed from other inputs in the loop body */
    }
    return f64c(g, 0);
}

/* ---- DAG nodes, W instances at a time ---- */

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
    case XO_NOT: return bool_to_f64(g, LLVMBuildFCmp(g->B, LLVMRealOEQ, a, vconst(g, 0), ""));
    case XO_CONST:
    case XO_INPUT:
    case XO_COUNT: break;
    }
    return vconst(g, 0);
}

/* The value of a node in the current function. In the loop body (reduced-coordinate inputs)
 * operations are emitted from the gathered inputs; in a chunk, values computed before it
 * (inputs, earlier chunks) are loaded from the spill array. */
static LLVMValueRef operand(Cg *g, ExprId id)
{
    if (g->val[id])
        return g->val[id];
    const ExprNode *n = dag_node(g->dag, id);
    LLVMValueRef v;
    if (n->op == XO_CONST)
        return vconst(g, n->value);
    if (n->op == XO_INPUT && g->in_body && g->spec->inputs[n->index].cls == KIN_EXPR)
        v = operand(g, g->spec->inputs[n->index].index);
    else if (n->op == XO_INPUT || (!g->in_body && g->slot[id] >= 0))
        v = load_slot(g, g->slot[id]);
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
                stack = srd_xrealloc(stack, sizeof(ExprId) * (size_t)cap);
            }
            stack[top++] = kids[k];
        }
    }
    free(stack);
}

static bool jac_used(const KernelSpec *s, int k, int l) { return !s->symmetric || k <= l; }

/* The Jacobian entry (k, l) when the kernel scatters it: used, and not a structural zero. */
static ExprId jac_entry(const Cg *g, int k, int l)
{
    const KernelSpec *s = g->spec;
    if (s->gradient_only || !jac_used(s, k, l))
        return -1;
    ExprId id = s->jac[k * s->nd + l];
    if (id < 0)
        return -1;
    const ExprNode *n = dag_node(g->dag, id);
    return n->op == XO_CONST && n->value == 0 ? -1 : id;
}

static void collect_order(Cg *g)
{
    const KernelSpec *s = g->spec;
    int n = dag_size(g->dag);
    g->reach = srd_xcalloc((size_t)n + 1, 1);
    mark_reachable(g, s->value, g->reach);
    for (int k = 0; k < s->nd; k++)
        mark_reachable(g, s->res[k], g->reach);
    for (int k = 0; k < s->nd; k++)
        for (int l = 0; l < s->nd; l++)
            mark_reachable(g, jac_entry(g, k, l), g->reach);
    g->order = srd_xcalloc((size_t)n + 1, sizeof(int));
    g->n_order = 0;
    for (int id = 0; id < n; id++) {
        int op = dag_node(g->dag, id)->op;
        if (g->reach[id] && op != XO_CONST && op != XO_INPUT)
            g->order[g->n_order++] = id;
    }
}

/* For every node: the chunk that computes it (BODY for inputs, gathered or computed before the
 * chunks) and the last chunk that reads it (n_chunks for the outputs, read by the scatter). */
enum { BODY = -1 };

static void chunk_lifetimes(Cg *g, int chunk_ops, int *defined, int *last)
{
    int n = dag_size(g->dag), n_chunks = g->n_order / chunk_ops + 1;
    for (int id = 0; id < n; id++)
        defined[id] = last[id] = BODY;
    for (int k = 0; k < g->n_order; k++)
        defined[g->order[k]] = k / chunk_ops;
    for (int k = 0; k < g->n_order; k++) {
        const ExprNode *x = dag_node(g->dag, g->order[k]);
        ExprId kids[3] = { x->a, x->b, x->c };
        for (int j = 0; j < 3; j++)
            if (kids[j] >= 0 && last[kids[j]] < k / chunk_ops)
                last[kids[j]] = k / chunk_ops;
    }
    const KernelSpec *s = g->spec;
    if (s->value >= 0)
        last[s->value] = n_chunks;
    for (int k = 0; k < s->nd; k++)
        if (s->res[k] >= 0)
            last[s->res[k]] = n_chunks;
    for (int k = 0; k < s->nd; k++)
        for (int l = 0; l < s->nd; l++)
            if (jac_entry(g, k, l) >= 0)
                last[jac_entry(g, k, l)] = n_chunks;
}

/* Spill slots for the inputs the outputs reach and for the operations read outside the chunk
 * that computes them (needed[id], which that chunk stores). A slot is taken again once every
 * chunk that reads its value has run, which keeps the array (W doubles a slot) small enough to
 * stay in the L1 cache. Returns the slot count. */
static int assign_spill_slots(Cg *g, int chunk_ops, unsigned char *needed)
{
    int n = dag_size(g->dag);
    int *defined = srd_xcalloc((size_t)n + 1, sizeof(int));
    int *last = srd_xcalloc((size_t)n + 1, sizeof(int));
    chunk_lifetimes(g, chunk_ops, defined, last);
    g->slot = srd_xcalloc((size_t)n + 1, sizeof(int));
    /* Values by the chunk that stores them: the inputs first, then chunk by chunk. */
    int *by_chunk = srd_xcalloc((size_t)n + 1, sizeof(int)), n_by = 0;
    for (int id = 0; id < n; id++) {
        g->slot[id] = -1;
        if (dag_node(g->dag, id)->op == XO_INPUT && g->reach[id])
            by_chunk[n_by++] = id;
    }
    for (int k = 0; k < g->n_order; k++) {
        int id = g->order[k];
        needed[id] = last[id] > defined[id];
        if (needed[id])
            by_chunk[n_by++] = id;
    }
    int *free_slots = srd_xcalloc((size_t)n_by + 1, sizeof(int)), n_free = 0;
    int *owner = srd_xcalloc((size_t)n_by + 1, sizeof(int)); /* value in each slot */
    int slots = 0, chunk = BODY;
    for (int k = 0; k < n_by; k++) {
        int id = by_chunk[k];
        if (defined[id] != chunk) {
            /* Entering a chunk: slots whose values no chunk from here on reads are free. */
            chunk = defined[id];
            n_free = 0;
            for (int sl = 0; sl < slots; sl++)
                if (owner[sl] < 0 || last[owner[sl]] < chunk)
                    free_slots[n_free++] = sl, owner[sl] = -1;
        }
        int sl = n_free ? free_slots[--n_free] : slots++;
        owner[sl] = id;
        g->slot[id] = sl;
    }
    free(defined);
    free(last);
    free(by_chunk);
    free(free_slots);
    free(owner);
    return slots;
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

/* A counted loop `for (var = 0; var < count; var++)` (count >= 1) starting at the builder's
 * block; the builder is left in the body. end_loop closes it and continues after. */
typedef struct Loop {
    LLVMValueRef      var;
    LLVMBasicBlockRef entry, head;
} Loop;

static Loop begin_loop(Cg *g, LLVMValueRef fn, const char *name)
{
    Loop l = { NULL, LLVMGetInsertBlock(g->B), LLVMAppendBasicBlockInContext(g->C, fn, name) };
    LLVMBuildBr(g->B, l.head);
    LLVMPositionBuilderAtEnd(g->B, l.head);
    l.var = LLVMBuildPhi(g->B, g->i64, name);
    return l;
}

static void end_loop(Cg *g, LLVMValueRef fn, Loop *l, LLVMValueRef count, LLVMValueRef step)
{
    LLVMValueRef next = LLVMBuildAdd(g->B, l->var, step, "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->B), after = LLVMAppendBasicBlockInContext(g->C, fn, "");
    LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, next, count, ""), l->head, after);
    LLVMAddIncoming(l->var, (LLVMValueRef[]){ i64c(g, 0), next }, (LLVMBasicBlockRef[]){ l->entry, latch }, 2);
    LLVMPositionBuilderAtEnd(g->B, after);
}

/* Runs what follows only when the ctx pointer field k is not NULL; returns that pointer. */
static LLVMValueRef begin_if_present(Cg *g, LLVMValueRef fn, unsigned k, LLVMBasicBlockRef *after)
{
    LLVMValueRef p = field(g, g->ctx_ty, g->ctx, k, g->ptr, "");
    LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(g->C, fn, "present");
    *after = LLVMAppendBasicBlockInContext(g->C, fn, "absent");
    LLVMBuildCondBr(g->B, LLVMBuildIsNotNull(g->B, p, ""), yes, *after);
    LLVMPositionBuilderAtEnd(g->B, yes);
    return p;
}

static void end_if(Cg *g, LLVMBasicBlockRef after)
{
    LLVMBuildBr(g->B, after);
    LLVMPositionBuilderAtEnd(g->B, after);
}

/* Row `inst` of a per-instance table of `width` elements of type ty. */
static LLVMValueRef table_row(Cg *g, LLVMTypeRef ty, LLVMValueRef table, LLVMValueRef inst, LLVMValueRef width)
{
    LLVMValueRef off = LLVMBuildMul(g->B, inst, width, "");
    return LLVMBuildGEP2(g->B, ty, table, &off, 1, "");
}

/* The value of output node id in lane `lane`: a constant, or its spill slot. */
static LLVMValueRef output_lane(Cg *g, ExprId id, LLVMValueRef lane)
{
    const ExprNode *n = dag_node(g->dag, id);
    if (n->op == XO_CONST)
        return f64c(g, n->value);
    return LLVMBuildLoad2(g->B, g->f64, spill_lane_ptr(g, g->slot[id], lane), "");
}

/* dst[idx] += v. Entries the runtime drops (fixed DOFs, outside the band) point at its
 * scratch slot past the end, so the scatter needs no branch. */
static void add_at(Cg *g, LLVMValueRef dst, LLVMValueRef idx, LLVMValueRef v)
{
    LLVMValueRef i64idx = LLVMTypeOf(idx) == g->i64 ? idx : LLVMBuildSExt(g->B, idx, g->i64, "");
    LLVMValueRef p = LLVMBuildGEP2(g->B, g->f64, dst, &i64idx, 1, "");
    LLVMBuildStore(g->B, LLVMBuildFAdd(g->B, LLVMBuildLoad2(g->B, g->f64, p, ""), v, ""), p);
}

/* Points the row pointers at instance `inst` of the batch. */
static void select_rows(Cg *g, LLVMValueRef inst, LLVMValueRef n_data, LLVMValueRef n_state)
{
    g->dofs_row = table_row(g, g->i32, field(g, g->batch_ty, g->batch, 4, g->ptr, ""), inst, i64c(g, g->spec->nd));
    g->data_row = table_row(g, g->f64, field(g, g->batch_ty, g->batch, 7, g->ptr, ""), inst, n_data);
    g->state_row = table_row(g, g->f64, field(g, g->batch_ty, g->batch, 8, g->ptr, ""), inst, n_state);
}

/* Whether DAG node id is an input gathered from the batch. */
static bool gathered_input(const Cg *g, int id)
{
    const ExprNode *n = dag_node(g->dag, id);
    return n->op == XO_INPUT && g->slot[id] >= 0 && g->spec->inputs[n->index].cls != KIN_EXPR;
}

/* The vector form of gather_inputs: each input's lanes are put together in a register
 * (insertelement, lanes unrolled) and stored as one vector. Stored lane by lane, the vector
 * loads of the body could not be forwarded from the pending scalar stores and waited for them
 * to reach the cache: in a kernel as small as a spring that stall was most of its time
 * (bench/README.md, lattices). The same values reach the same slots. */
static void gather_vectors(Cg *g, LLVMValueRef base, LLVMValueRef count, LLVMValueRef n_data, LLVMValueRef n_state)
{
    int n = dag_size(g->dag);
    LLVMValueRef *vec = srd_xcalloc((size_t)n + 1, sizeof *vec);
    LLVMValueRef last = LLVMBuildSub(g->B, count, i64c(g, 1), "");
    for (int lane = 0; lane < g->W; lane++) {
        LLVMValueRef inst = LLVMBuildAdd(g->B, base, i64c(g, lane), "");
        inst = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, inst, count, ""), inst, last, "inst");
        select_rows(g, inst, n_data, n_state);
        for (int id = 0; id < n; id++) {
            if (!gathered_input(g, id))
                continue;
            LLVMValueRef v = emit_input_lane(g, dag_node(g->dag, id)->index);
            vec[id] = LLVMBuildInsertElement(g->B, vec[id] ? vec[id] : LLVMGetUndef(g->vt), v,
                                             LLVMConstInt(g->i32, (unsigned)lane, 0), "");
        }
    }
    for (int id = 0; id < n; id++)
        if (vec[id])
            store_slot(g, g->slot[id], vec[id]);
    free(vec);
}

/* Gathers the inputs of lanes 0..W-1 into the spill array. Lanes past the last instance
 * repeat it: their results are computed but never scattered. */
static void gather_inputs(Cg *g, LLVMValueRef fn, LLVMValueRef base, LLVMValueRef count)
{
    LLVMValueRef n_data = LLVMBuildSExt(g->B, field(g, g->batch_ty, g->batch, 2, g->i32, ""), g->i64, "");
    LLVMValueRef n_state = LLVMBuildSExt(g->B, field(g, g->batch_ty, g->batch, 3, g->i32, ""), g->i64, "");
    if (g->W > 1) {
        gather_vectors(g, base, count, n_data, n_state);
        return;
    }
    Loop lane = begin_loop(g, fn, "gather");
    LLVMValueRef inst = LLVMBuildAdd(g->B, base, lane.var, "");
    LLVMValueRef last = LLVMBuildSub(g->B, count, i64c(g, 1), "");
    inst = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, inst, count, ""), inst, last, "inst");
    select_rows(g, inst, n_data, n_state);
    for (int id = 0; id < dag_size(g->dag); id++)
        if (gathered_input(g, id))
            LLVMBuildStore(g->B, emit_input_lane(g, dag_node(g->dag, id)->index),
                           spill_lane_ptr(g, g->slot[id], lane.var));
    end_loop(g, fn, &lane, i64c(g, g->W), i64c(g, 1));
}

/* Values of the function being emitted are not valid in the next one: each emitting pass
 * starts from none. */
static void forget_values(Cg *g) { memset(g->val, 0, sizeof(LLVMValueRef) * (size_t)dag_size(g->dag)); }

/* The operands of a node in the loop body, where a reduced-coordinate input stands for its
 * expression; -1 where there is none. */
static void body_operands(const Cg *g, ExprId id, ExprId kids[3])
{
    const ExprNode *n = dag_node(g->dag, id);
    kids[0] = n->a;
    kids[1] = n->b;
    kids[2] = n->c;
    if (n->op == XO_INPUT) {
        bool expr = g->spec->inputs[n->index].cls == KIN_EXPR;
        kids[0] = expr ? g->spec->inputs[n->index].index : -1;
        kids[1] = kids[2] = -1;
    }
}

/* Emits what `root` needs in the loop body, operands first, with an explicit stack: a reduced
 * coordinate may be an affine expression thousands of levels deep, which operand() would
 * follow by recursion. Each entry is a node id, negated once its operands are pushed. */
static void emit_in_body(Cg *g, ExprId root)
{
    int cap = 64, top = 0;
    ExprId *stack = srd_xcalloc((size_t)cap, sizeof(ExprId));
    stack[top++] = root + 1; /* ids are stored +1, so that the sign can mark expansion */
    while (top) {
        ExprId entry = stack[--top], id = (entry > 0 ? entry : -entry) - 1;
        if (g->val[id] || dag_node(g->dag, id)->op == XO_CONST)
            continue;
        if (entry < 0) { /* operands done: operand() finds them all and does not recurse */
            operand(g, id);
            continue;
        }
        ExprId kids[3];
        body_operands(g, id, kids);
        if (top + 4 > cap) {
            cap *= 2;
            stack = srd_xrealloc(stack, sizeof(ExprId) * (size_t)cap);
        }
        stack[top++] = -entry;
        for (int k = 0; k < 3; k++)
            if (kids[k] >= 0 && !g->val[kids[k]])
                stack[top++] = kids[k] + 1;
    }
    free(stack);
}

/* Reduced coordinates (edge vectors and the like) are inputs computed from the gathered
 * DOFs, once per group of instances. */
static void emit_reduced_inputs(Cg *g)
{
    int n = dag_size(g->dag);
    forget_values(g);
    g->in_body = true;
    for (int id = 0; id < n; id++) {
        const ExprNode *nd = dag_node(g->dag, id);
        if (nd->op == XO_INPUT && g->slot[id] >= 0 && g->spec->inputs[nd->index].cls == KIN_EXPR) {
            emit_in_body(g, id);
            store_slot(g, g->slot[id], operand(g, id));
        }
    }
    g->in_body = false;
}

/* Operations order[start..end) in the current function, storing those read later. */
static void emit_ops(Cg *g, int start, int end, const unsigned char *needed)
{
    forget_values(g);
    for (int k = start; k < end; k++) {
        int id = g->order[k];
        LLVMValueRef v = emit_op(g, dag_node(g->dag, id));
        g->val[id] = v;
        if (needed[id])
            store_slot(g, g->slot[id], v);
    }
}

/* Chunk c (operations order[start..end)) as a noinline function of the spill array: internal,
 * or in a split compilation external, built in the module that owns it and declared in the
 * others. */
static LLVMValueRef emit_chunk(Cg *g, int c, int start, int end, const unsigned char *needed)
{
    char name[256];
    snprintf(name, sizeof name, "%s%s.chunk%d", g->spec->gradient_only ? "srd_gradient_" : "srd_kernel_",
             g->spec->kind, c);
    LLVMTypeRef chunk_ty = LLVMFunctionType(g->void_ty, &g->ptr, 1, 0);
    bool split = g->spec->parts > 1;
    if (split && c % g->spec->parts != g->spec->part)
        return LLVMAddFunction(g->M, name, chunk_ty);
    LLVMValueRef fn = begin_function(g, name, chunk_ty, true);
    LLVMValueRef spill = g->spill;
    g->spill = LLVMGetParam(fn, 0);
    emit_ops(g, start, end, needed);
    LLVMBuildRetVoid(g->B);
    g->spill = spill;
    if (split)
        LLVMSetLinkage(fn, LLVMExternalLinkage);
    return fn;
}

/* Chunks of a kernel (0: its operations are emitted inline); chunk c runs the operations
 * order[c * chunk_ops .. chunk_end(c)). */
static int chunk_count(const Cg *g, int chunk_ops)
{
    return g->n_order <= chunk_ops ? 0 : (g->n_order + chunk_ops - 1) / chunk_ops;
}

static int chunk_end(const Cg *g, int c, int chunk_ops)
{
    return (c + 1) * chunk_ops < g->n_order ? (c + 1) * chunk_ops : g->n_order;
}

/* The operations in chunks of chunk_ops, called in turn from the kernel's loop body; a
 * kernel of one chunk is emitted inline. */
static void emit_chunks(Cg *g, int chunk_ops, const unsigned char *needed, CodegenStats *st)
{
    int chunks = chunk_count(g, chunk_ops);
    if (chunks == 0) {
        emit_ops(g, 0, g->n_order, needed);
        return;
    }
    LLVMBasicBlockRef loop_block = LLVMGetInsertBlock(g->B);
    LLVMTypeRef chunk_ty = LLVMFunctionType(g->void_ty, &g->ptr, 1, 0);
    for (int c = 0; c < chunks; c++) {
        LLVMValueRef fn = emit_chunk(g, c, c * chunk_ops, chunk_end(g, c, chunk_ops), needed);
        LLVMPositionBuilderAtEnd(g->B, loop_block);
        LLVMBuildCall2(g->B, chunk_ty, fn, &g->spill, 1, "");
        st->chunks++;
    }
}

/* Scatters lanes 0..lanes-1 (instances base + lane) in instance order, so the sums are
 * those of a one-instance-at-a-time loop. */
static void scatter_outputs(Cg *g, LLVMValueRef fn, LLVMValueRef base, LLVMValueRef lanes, LLVMValueRef energy_acc)
{
    const KernelSpec *s = g->spec;
    int nd = s->nd;
    Loop lane = begin_loop(g, fn, "scatter");
    LLVMValueRef inst = LLVMBuildAdd(g->B, base, lane.var, "");
    if (s->value >= 0) {
        LLVMValueRef acc = LLVMBuildLoad2(g->B, g->f64, energy_acc, "");
        LLVMBuildStore(g->B, LLVMBuildFAdd(g->B, acc, output_lane(g, s->value, lane.var), ""), energy_acc);
    }
    LLVMBasicBlockRef after;
    LLVMValueRef grad = begin_if_present(g, fn, 7, &after);
    LLVMValueRef res_row = table_row(g, g->i32, field(g, g->batch_ty, g->batch, 5, g->ptr, ""), inst, i64c(g, nd));
    for (int k = 0; k < nd; k++)
        if (s->res[k] >= 0)
            add_at(g, grad, load_at(g, g->i32, res_row, i64c(g, k)), output_lane(g, s->res[k], lane.var));
    end_if(g, after);
    if (!s->gradient_only) {
        LLVMValueRef jac = begin_if_present(g, fn, 8, &after);
        LLVMValueRef pos_row = table_row(g, g->i64, field(g, g->batch_ty, g->batch, 6, g->ptr, ""), inst,
                                         i64c(g, (long long)nd * nd));
        for (int k = 0; k < nd; k++)
            for (int l = 0; l < nd; l++) {
                ExprId id = jac_entry(g, k, l);
                if (id < 0)
                    continue;
                LLVMValueRef v = output_lane(g, id, lane.var);
                add_at(g, jac, load_at(g, g->i64, pos_row, i64c(g, k * nd + l)), v);
                if (s->symmetric && k != l)
                    add_at(g, jac, load_at(g, g->i64, pos_row, i64c(g, l * nd + k)), v);
            }
        end_if(g, after);
    }
    end_loop(g, fn, &lane, lanes, i64c(g, 1));
}

int cg_lanes(bool portable)
{
    const char *env = getenv("SRD_LANES");
    if (env && *env) { /* a power of two, so a slot's lanes are an aligned vector */
        int w = 1;
        while (w < 16 && 2 * w <= atoi(env))
            w *= 2;
        return w;
    }
    if (portable)
        return 4;
    char *features = LLVMGetHostCPUFeatures();
    int w = features && strstr(features, "+avx512f") ? 8 : 4;
    LLVMDisposeMessage(features);
    return w;
}

/* The kernel function: the group loop gathers W instances, computes the reduced inputs, runs
 * the chunks and scatters; the energy is added to ctx->energy at the end. */
static void emit_kernel_function(Cg *g, int slots, int chunk_ops, const unsigned char *needed, CodegenStats *st)
{
    char name[256];
    snprintf(name, sizeof name, "%s%s", g->spec->gradient_only ? "srd_gradient_" : "srd_kernel_", g->spec->kind);
    LLVMTypeRef params[2] = { g->ptr, g->ptr };
    LLVMValueRef fn = begin_function(g, name, LLVMFunctionType(g->void_ty, params, 2, 0), false);
    g->ctx = LLVMGetParam(fn, 0);
    g->batch = LLVMGetParam(fn, 1);
    LLVMValueRef spill_n = LLVMConstInt(g->i32, (unsigned)((slots ? slots : 1) * g->W), 0);
    g->spill = LLVMBuildArrayAlloca(g->B, g->f64, spill_n, "spill");
    LLVMSetAlignment(g->spill, 64);
    LLVMValueRef energy = LLVMBuildAlloca(g->B, g->f64, "energy");
    LLVMBuildStore(g->B, f64c(g, 0), energy);
    LLVMValueRef count = LLVMBuildSExt(g->B, field(g, g->batch_ty, g->batch, 0, g->i32, "n"), g->i64, "");
    LLVMBasicBlockRef loop_entry = LLVMAppendBasicBlockInContext(g->C, fn, "start");
    LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(g->C, fn, "exit");
    LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntSGT, count, i64c(g, 0), ""), loop_entry, exit);

    LLVMPositionBuilderAtEnd(g->B, loop_entry);
    Loop group = begin_loop(g, fn, "group");
    gather_inputs(g, fn, group.var, count);
    emit_reduced_inputs(g);
    emit_chunks(g, chunk_ops, needed, st);
    LLVMValueRef left = LLVMBuildSub(g->B, count, group.var, "");
    LLVMValueRef wide = i64c(g, g->W);
    LLVMValueRef lanes = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, left, wide, ""), left, wide, "lanes");
    scatter_outputs(g, fn, group.var, lanes, energy);
    end_loop(g, fn, &group, count, wide);
    LLVMBuildBr(g->B, exit);

    LLVMPositionBuilderAtEnd(g->B, exit);
    LLVMBasicBlockRef after;
    LLVMValueRef eptr = begin_if_present(g, fn, 6, &after);
    LLVMValueRef total = LLVMBuildLoad2(g->B, g->f64, energy, "");
    LLVMBuildStore(g->B, LLVMBuildFAdd(g->B, LLVMBuildLoad2(g->B, g->f64, eptr, ""), total, ""), eptr);
    end_if(g, after);
    LLVMBuildRetVoid(g->B);
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
    g.W = spec->lanes > 1 ? spec->lanes : 1;
    init_types(&g);
    collect_order(&g);
    int n = dag_size(g.dag);
    g.val = srd_xcalloc((size_t)n + 1, sizeof(LLVMValueRef));
    if (chunk_ops <= 0)
        chunk_ops = g.n_order + 1;
    CodegenStats st = { g.n_order, 0 };
    unsigned char *needed = srd_xcalloc((size_t)n + 1, 1);
    int slots = assign_spill_slots(&g, chunk_ops, needed);

    if (spec->parts > 1 && spec->part != 0) {
        /* The other parts of a split compilation carry only the chunk bodies they own. */
        st.chunks = chunk_count(&g, chunk_ops);
        for (int c = spec->part; c < st.chunks; c += spec->parts)
            emit_chunk(&g, c, c * chunk_ops, chunk_end(&g, c, chunk_ops), needed);
    } else {
        emit_kernel_function(&g, slots, chunk_ops, needed, &st);
    }
    LLVMDisposeBuilder(g.B);
    free(needed);
    free(g.val);
    free(g.reach);
    free(g.order);
    free(g.slot);
    if (stats)
        *stats = st;
}
