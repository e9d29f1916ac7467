/* tangent.h — the derivative of an element kind's residual along a change of its data columns:
 * the kernel side of exact parameter sensitivities. For a param p that moves data columns d_c
 * of a set by t_c = d(d_c)/dp per instance, the residual moves by
 *     dR/dp = sum_c d(res)/d(d_c) t_c,
 * derived symbolically from the same DAG as the residual (as the Hessian is), so exactly. */
#ifndef SRD_TANGENT_H
#define SRD_TANGENT_H
#include <stdbool.h>
#include <stddef.h>
#include "kernel/interp.h"
#include "lower.h"

typedef struct DataTangent {
    int            n_data;  /* the set's data columns: its batch for the tangent kernel has 2 n_data
                               per instance, the data then their tangents */
    int            n_cols;  /* the columns the kernel reads (those not folded into constants) */
    int           *cols;    /* n_cols column indices */
    InterpProgram *program; /* adds sum_c d(res)/d(d_c) t_c at the batch's residual rows */
} DataTangent;

/* Builds the tangent kernel of element le, lowered for element set `set` (adds nodes to le's
 * DAG). A set whose kernel reads no data column gets n_cols 0 and no program. */
bool data_tangent_build(LoweredElement *le, const srd_elemset *set, DataTangent *out, char *err, size_t err_n);
/* Adds the residual's change along the tangents into ctx->grad. The batch is the set's batch
 * with n_data doubled and data holding, per instance, the data then their tangents. */
void data_tangent_run(const DataTangent *t, const srd_eval_ctx *ctx, const srd_elem_batch *batch);
void data_tangent_free(DataTangent *t);

#endif
