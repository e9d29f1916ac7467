/* tangent.c — tangent kernels of element kinds: d(residual)/d(data) along given tangents (see
 * tangent.h). They run on the interpreter tier, which evaluates a kernel's DAG as the JIT's code
 * does: a sensitivity needs them once per param per solve, not once per Newton iteration. */
#include "sens/tangent.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diff.h"

/* The DAG slots of le's data inputs and their columns; returns their count. */
static int data_slots(const LoweredElement *le, int *slots, int *cols)
{
    int n = 0;
    for (int i = 0; i < le->n_inputs; i++)
        if (le->inputs[i].cls == KIN_DATA) {
            slots[n] = i;
            cols[n++] = le->inputs[i].index;
        }
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
static void total_jacobian(LoweredElement *le, const ExprId *res, const int *slots, int n, ExprId *total)
{
    ExprDag *d = le->dag;
    int nd = le->nd;
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

/* res'_k = sum_j D_kj * (the tangent input of column j); -1 stays a structural zero. */
static void tangent_rows(LoweredElement *le, const int *slots, int n, int first_tangent_slot, ExprId *rows)
{
    ExprDag *d = le->dag;
    int nd = le->nd;
    ExprId *res = calloc((size_t)nd + 1, sizeof(ExprId)), *jac = calloc((size_t)nd * (size_t)n + 1, sizeof(ExprId));
    for (int k = 0; k < nd; k++)
        res[k] = le->res[k] >= 0 ? le->res[k] : dag_const(d, 0);
    total_jacobian(le, res, slots, n, jac);
    for (int k = 0; k < nd; k++) {
        ExprId sum = dag_const(d, 0);
        for (int j = 0; j < n; j++)
            sum = dag_add(d, sum, dag_mul(d, jac[(size_t)k * n + j], dag_input(d, first_tangent_slot + j)));
        rows[k] = le->res[k] >= 0 ? sum : -1;
    }
    free(res);
    free(jac);
}

bool data_tangent_build(LoweredElement *le, const srd_elemset *set, DataTangent *out, char *err, size_t err_n)
{
    memset(out, 0, sizeof *out);
    out->n_data = set->n_data;
    int *slots = malloc(sizeof(int) * ((size_t)le->n_inputs + 1));
    out->cols = malloc(sizeof(int) * ((size_t)le->n_inputs + 1));
    out->n_cols = data_slots(le, slots, out->cols);
    if (out->n_cols == 0) {
        free(slots);
        return true;
    }
    int n_inputs = le->n_inputs + out->n_cols;
    KernelInput *inputs = malloc(sizeof *inputs * (size_t)n_inputs);
    memcpy(inputs, le->inputs, sizeof *inputs * (size_t)le->n_inputs);
    for (int j = 0; j < out->n_cols; j++)
        inputs[le->n_inputs + j] = (KernelInput){ KIN_DATA, set->n_data + out->cols[j] };
    ExprId *rows = malloc(sizeof(ExprId) * (size_t)le->nd);
    tangent_rows(le, slots, out->n_cols, le->n_inputs, rows);
    char kind[256];
    snprintf(kind, sizeof kind, "tangent_%s", le->kind);
    KernelSpec spec = { .kind = kind, .dag = le->dag, .n_inputs = n_inputs, .inputs = inputs, .nd = le->nd,
                        .value = -1, .res = rows, .jac = NULL, .gradient_only = true };
    out->program = interp_build(&spec);
    free(slots);
    free(inputs);
    free(rows);
    if (!out->program) {
        snprintf(err, err_n, "the tangent kernel of `%s` could not be built", le->kind);
        return false;
    }
    return true;
}

void data_tangent_run(const DataTangent *t, const srd_eval_ctx *ctx, const srd_elem_batch *batch)
{
    if (t->program)
        interp_run(t->program, ctx, batch);
}

void data_tangent_free(DataTangent *t)
{
    if (t->program)
        interp_free(t->program);
    free(t->cols);
    memset(t, 0, sizeof *t);
}
