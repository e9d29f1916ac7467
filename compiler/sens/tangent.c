/* tangent.c — tangent kernels of element kinds (see tangent.h): d(residual)/d(inputs) along
 * given tangents, and its transpose. They run on the interpreter tier, which evaluates a kernel's
 * DAG as the JIT's code does. */
#include "sens/tangent.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "diff.h"
#include "kernel/backend.h"

/* The DAG slots of le's inputs of the classes in mask; returns their count. */
static int mask_slots(const LoweredElement *le, int mask, int *slots)
{
    int n = 0;
    for (int i = 0; i < le->n_inputs; i++)
        if (le->inputs[i].cls != KIN_EXPR && (mask >> le->inputs[i].cls & 1))
            slots[n++] = i;
    return n;
}

/* The slots of le's computed inputs (reduced coordinates z of the stencil, and the offsets of
 * dependent ones) and the DAG nodes they stand for; returns their count. */
static int expr_slots(const LoweredElement *le, int *slots, ExprId *nodes)
{
    int n = 0;
    for (int i = 0; i < le->n_inputs; i++)
        if (le->inputs[i].cls == KIN_EXPR) {
            slots[n] = i;
            nodes[n++] = le->inputs[i].index;
        }
    return n;
}

/* d(res_k)/d(data_j) in full: the residual reads the data directly and through the reduced
 * coordinates z (a ground contact's z = n . x), which its DAG takes as inputs of their own:
 *     D_kj = dres_k/dd_j + sum_i dres_k/dz_i dz_i/dd_j. */
void kernel_total_jacobian(LoweredElement *le, const ExprId *res, int nd, const int *slots, int n, ExprId *total)
{
    ExprDag *d = le->dag;
    diff_jacobian(d, res, nd, slots, n, total);
    int *zslots = calloc((size_t)le->n_inputs + 1, sizeof(int));
    ExprId *znodes = calloc((size_t)le->n_inputs + 1, sizeof(ExprId));
    int nz = expr_slots(le, zslots, znodes);
    ExprId *dres_dz = calloc((size_t)nd * (size_t)nz + 1, sizeof(ExprId));
    ExprId *dz_dd = calloc((size_t)nz * (size_t)n + 1, sizeof(ExprId));
    if (nz > 0) {
        diff_jacobian(d, res, nd, zslots, nz, dres_dz);
        diff_jacobian(d, znodes, nz, slots, n, dz_dd);
    }
    for (int k = 0; k < nd; k++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < nz; i++)
                total[(size_t)k * n + j] = dag_add(d, total[(size_t)k * n + j],
                                                   dag_mul(d, dres_dz[(size_t)k * nz + i], dz_dd[(size_t)i * n + j]));
    free(zslots);
    free(znodes);
    free(dres_dz);
    free(dz_dd);
}

/* D_kj = d(res_k)/d(slot j) in full, nd x n (structural zeros as constant 0). */
static ExprId *residual_jacobian(LoweredElement *le, const int *slots, int n)
{
    ExprDag *d = le->dag;
    ExprId *res = calloc((size_t)le->nd + 1, sizeof(ExprId)), *jac = calloc((size_t)le->nd * (size_t)n + 1, sizeof(ExprId));
    for (int k = 0; k < le->nd; k++)
        res[k] = le->res[k] >= 0 ? le->res[k] : dag_const(d, 0);
    kernel_total_jacobian(le, res, le->nd, slots, n, jac);
    free(res);
    return jac;
}

/* The inputs of a tangent program: the kernel's, then `extra` data columns after the set's. */
static KernelInput *program_inputs(const LoweredElement *le, int n_data, int extra)
{
    KernelInput *inputs = malloc(sizeof *inputs * ((size_t)le->n_inputs + (size_t)extra + 1));
    memcpy(inputs, le->inputs, sizeof *inputs * (size_t)le->n_inputs);
    for (int j = 0; j < extra; j++)
        inputs[le->n_inputs + j] = (KernelInput){ KIN_DATA, n_data + j };
    return inputs;
}

/* Program `which` (0 forward, 1 adjoint) of t: its spec kept for compiling, and interpreted. */
static InterpProgram *program(LoweredElement *le, KernelTangent *t, int which, int n_inputs, KernelInput *inputs,
                              int n_rows, const ExprId *rows)
{
    snprintf(t->spec_kind[which], sizeof t->spec_kind[which], "%s_%s", which ? "adjoint" : "tangent", le->kind);
    t->spec_inputs[which] = inputs;
    t->spec_rows[which] = malloc(sizeof(ExprId) * ((size_t)n_rows + 1));
    memcpy(t->spec_rows[which], rows, sizeof(ExprId) * (size_t)n_rows);
    t->spec[which] = (KernelSpec){ .kind = t->spec_kind[which], .dag = le->dag, .n_inputs = n_inputs,
                                   .inputs = inputs, .nd = n_rows, .value = -1, .res = t->spec_rows[which],
                                   .jac = NULL, .gradient_only = true };
    return interp_build(&t->spec[which]);
}

/* Forward rows sum_j D_kj w_j; adjoint rows sum_k lambda_k D_kj (one per slot, padded to nd). */
static void build_programs(LoweredElement *le, KernelTangent *t, const ExprId *jac)
{
    ExprDag *d = le->dag;
    int nd = le->nd, n = t->n_slots, n_out = n > nd ? n : nd;
    ExprId *rows = malloc(sizeof(ExprId) * ((size_t)n_out + 1));
    for (int k = 0; k < nd; k++) {
        ExprId sum = dag_const(d, 0);
        for (int j = 0; j < n; j++)
            sum = dag_add(d, sum, dag_mul(d, jac[(size_t)k * n + j], dag_input(d, le->n_inputs + j)));
        rows[k] = le->res[k] >= 0 ? sum : -1;
    }
    KernelInput *inputs = program_inputs(le, t->n_data, n);
    t->forward = program(le, t, 0, le->n_inputs + n, inputs, nd, rows);
    for (int j = 0; j < n_out; j++) {
        ExprId sum = dag_const(d, 0);
        for (int k = 0; k < nd && j < n; k++)
            sum = dag_add(d, sum, dag_mul(d, jac[(size_t)k * n + j], dag_input(d, le->n_inputs + k)));
        rows[j] = j < n ? sum : -1;
    }
    inputs = program_inputs(le, t->n_data, nd);
    t->adjoint = program(le, t, 1, le->n_inputs + nd, inputs, n_out, rows);
    free(rows);
}

bool kernel_tangent_build(LoweredElement *le, const srd_elemset *set, int n_params, int mask, KernelTangent *out,
                          char *err, size_t err_n)
{
    memset(out, 0, sizeof *out);
    out->nd = le->nd;
    out->n_data = set->n_data;
    out->n_state = le->n_state;
    out->n_params = n_params;
    int *slots = malloc(sizeof(int) * ((size_t)le->n_inputs + 1));
    out->n_slots = mask_slots(le, mask, slots);
    out->slots = malloc(sizeof(KernelInput) * ((size_t)out->n_slots + 1));
    for (int j = 0; j < out->n_slots; j++)
        out->slots[j] = le->inputs[slots[j]];
    if (out->n_slots > 0) {
        ExprId *jac = residual_jacobian(le, slots, out->n_slots);
        build_programs(le, out, jac);
        free(jac);
    }
    free(slots);
    if (out->n_slots > 0 && (!out->forward || !out->adjoint)) {
        snprintf(err, err_n, "the tangent kernel of `%s` could not be built", le->kind);
        return false;
    }
    return true;
}

/* Entry (k, j) of le's Jacobian (a symmetric one keeps its upper triangle), or -1. */
static ExprId jacobian_entry(const LoweredElement *le, int k, int j)
{
    int nd = le->nd;
    if (le->symmetric && k > j)
        return le->jac[(size_t)j * nd + k];
    return le->jac[(size_t)k * nd + j];
}

bool kernel_hessian_tangent_build(LoweredElement *le, const srd_elemset *set, int n_params, int mask,
                                  KernelTangent *out, char *err, size_t err_n)
{
    ExprDag *d = le->dag;
    int nd = le->nd;
    LoweredElement kz = *le; /* the same element with rows K z and z as nd data inputs more */
    char kind[300];
    snprintf(kind, sizeof kind, "hessian_%s", le->kind);
    kz.kind = kind;
    kz.n_inputs = le->n_inputs + nd;
    kz.inputs = program_inputs(le, set->n_data, nd);
    kz.res = srd_xcalloc((size_t)nd + 1, sizeof(ExprId));
    for (int k = 0; k < nd; k++) {
        ExprId sum = dag_const(d, 0);
        for (int j = 0; j < nd && le->jac; j++) {
            ExprId h = jacobian_entry(le, k, j);
            if (h >= 0)
                sum = dag_add(d, sum, dag_mul(d, h, dag_input(d, le->n_inputs + j)));
        }
        kz.res[k] = sum;
    }
    srd_elemset wide = *set;
    wide.n_data = set->n_data + nd;
    bool ok = kernel_tangent_build(&kz, &wide, n_params, mask, out, err, err_n);
    free(kz.inputs), free(kz.res);
    return ok;
}

/* The set's data per instance followed by `extra` values per instance, which fill() gives. */
typedef double (*ExtraFn)(const KernelTangent *t, const srd_elem_batch *b, const void *arg, int i, int j);

static double *extended_data(const KernelTangent *t, const srd_elem_batch *b, int extra, ExtraFn fill,
                             const void *arg)
{
    int n = b->n, nd = b->n_data, w = nd + extra;
    double *ext = srd_xcalloc((size_t)n * (size_t)w + 1, sizeof(double));
    for (int i = 0; i < n; i++) {
        memcpy(&ext[(size_t)i * w], &b->data[(size_t)i * nd], sizeof(double) * (size_t)nd);
        for (int j = 0; j < extra; j++)
            ext[(size_t)i * w + nd + j] = fill(t, b, arg, i, j);
    }
    return ext;
}

static double at(const double *v, long long i) { return v ? v[i] : 0; }

/* w_j of instance i: the tangent of slot j's source. */
static double slot_tangent(const KernelTangent *t, const srd_elem_batch *b, const void *arg, int i, int j)
{
    const InputTangents *w = arg;
    const KernelInput *in = &t->slots[j];
    long long dof = in->cls <= KIN_VEL0 ? b->dofs[(size_t)i * t->nd + in->index] : 0;
    switch (in->cls) {
    case KIN_DOF: return at(w->dq, dof);
    case KIN_DOF0: return at(w->dq0, dof);
    case KIN_VEL0: return at(w->dv0, dof);
    case KIN_STATE: return at(w->dstate, (long long)i * t->n_state + in->index);
    case KIN_DATA: return at(w->ddata, (long long)i * t->n_data + in->index);
    case KIN_PARAM: return at(w->dparams, in->index);
    default: return 0;
    }
}

void kernel_tangent_forward(const KernelTangent *t, const srd_eval_ctx *ctx, const srd_elem_batch *batch,
                            const InputTangents *w)
{
    if (!t->forward || batch->n == 0)
        return;
    srd_elem_batch b = *batch;
    double *ext = extended_data(t, batch, t->n_slots, slot_tangent, w);
    b.n_data += t->n_slots;
    b.data = ext;
    if (t->fn[0])
        t->fn[0](ctx, &b);
    else
        interp_run(t->forward, ctx, &b);
    free(ext);
}

/* lambda_k of instance i: lambda at stencil DOF k's residual row. */
static double row_lambda(const KernelTangent *t, const srd_elem_batch *b, const void *arg, int i, int k)
{
    return ((const double *)arg)[b->res[(size_t)i * t->nd + k]];
}

/* Where the adjoint row of slot j of instance i goes in the buffer laid out as
 * [lq | lq0 | lv0 (n_dofs each) | lstate | ldata | lparams | a slot for padding rows]. */
static long long adjoint_position(const KernelTangent *t, const srd_elem_batch *b, int n_dofs, int i, int j)
{
    long long state0 = 3LL * n_dofs, data0 = state0 + (long long)b->n * t->n_state;
    long long params0 = data0 + (long long)b->n * t->n_data, pad = params0 + t->n_params;
    if (j >= t->n_slots)
        return pad;
    const KernelInput *in = &t->slots[j];
    long long dof = in->cls <= KIN_VEL0 ? b->dofs[(size_t)i * t->nd + in->index] : 0;
    switch (in->cls) {
    case KIN_DOF: return dof;
    case KIN_DOF0: return n_dofs + dof;
    case KIN_VEL0: return 2LL * n_dofs + dof;
    case KIN_STATE: return state0 + (long long)i * t->n_state + in->index;
    case KIN_DATA: return data0 + (long long)i * t->n_data + in->index;
    case KIN_PARAM: return params0 + in->index;
    default: return pad;
    }
}

static void add_part(double *to, const double *from, long long n)
{
    for (long long i = 0; to && i < n; i++)
        to[i] += from[i];
}

void kernel_tangent_adjoint(const KernelTangent *t, const srd_eval_ctx *ctx, const srd_elem_batch *batch,
                            const double *lambda, int n_dofs, const InputAdjoints *out)
{
    if (!t->adjoint || batch->n == 0)
        return;
    int n = batch->n, nd = t->nd, n_out = t->n_slots > nd ? t->n_slots : nd;
    long long len = 3LL * n_dofs + (long long)n * (t->n_state + t->n_data) + t->n_params + 1;
    int32_t *dofs = srd_xcalloc((size_t)n * n_out + 1, sizeof(int32_t)), *rows = srd_xcalloc((size_t)n * n_out + 1, sizeof(int32_t));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n_out; j++) {
            dofs[(size_t)i * n_out + j] = j < nd ? batch->dofs[(size_t)i * nd + j] : 0;
            rows[(size_t)i * n_out + j] = (int32_t)adjoint_position(t, batch, n_dofs, i, j);
        }
    srd_elem_batch b = *batch;
    double *ext = extended_data(t, batch, nd, row_lambda, lambda), *buf = srd_xcalloc((size_t)len, sizeof(double));
    b.n_dofs = n_out, b.dofs = dofs, b.res = rows, b.n_data += nd, b.data = ext;
    srd_eval_ctx c = *ctx;
    c.grad = buf, c.jac = NULL, c.energy = NULL;
    if (t->fn[1])
        t->fn[1](&c, &b);
    else
        interp_run(t->adjoint, &c, &b);
    long long state0 = 3LL * n_dofs, data0 = state0 + (long long)n * t->n_state;
    add_part(out->lq, buf, n_dofs), add_part(out->lq0, buf + n_dofs, n_dofs), add_part(out->lv0, buf + 2 * n_dofs, n_dofs);
    add_part(out->lstate, buf + state0, (long long)n * t->n_state), add_part(out->ldata, buf + data0, (long long)n * t->n_data);
    add_part(out->lparams, buf + data0 + (long long)n * t->n_data, t->n_params);
    free(dofs), free(rows), free(ext), free(buf);
}

bool kernel_tangents_compile(KernelTangent *t, int n, SrdJit **jit, char *err, size_t err_n)
{
    *jit = NULL;
    const SrdBackend *be = srd_backend(err, err_n);
    if (!be)
        return false;
    KernelSpec *specs = srd_xcalloc(2 * (size_t)n + 1, sizeof *specs);
    char (*kinds)[300] = srd_xcalloc(2 * (size_t)n + 1, sizeof *kinds);
    srd_kernel_fn *fns = srd_xcalloc(2 * (size_t)n + 1, sizeof *fns);
    int m = 0;
    for (int k = 0; k < n; k++)
        for (int w = 0; w < 2 && t[k].n_slots; w++, m++) {
            specs[m] = t[k].spec[w];
            snprintf(kinds[m], sizeof kinds[m], "%d_%s", k, t[k].spec_kind[w]); /* a kind may have sets of its own */
            specs[m].kind = kinds[m];
        }
    bool ok = m == 0 || be->compile_specs(specs, m, jit, fns, err, err_n);
    for (int k = 0, i = 0; ok && k < n; k++)
        for (int w = 0; w < 2 && t[k].n_slots; w++)
            t[k].fn[w] = fns[i++];
    free(specs), free(kinds), free(fns);
    return ok;
}

void kernel_tangent_free(KernelTangent *t)
{
    for (int w = 0; w < 2; w++)
        free(t->spec_inputs[w]), free(t->spec_rows[w]);
    if (t->forward)
        interp_free(t->forward);
    if (t->adjoint)
        interp_free(t->adjoint);
    free(t->slots);
    memset(t, 0, sizeof *t);
}
