/* tangent.h — the derivative of an element kind's residual with respect to the inputs its kernel
 * reads besides the configuration being solved for: data columns, params, the step start (q0,
 * v0), the elements' step-start state, and the evaluation point itself. Forward, it adds
 *     dR = sum_j d(res)/d(input_j) w_j
 * for tangents w of the inputs; reverse, it gives lambda . d(res)/d(input_j) for a vector lambda
 * of the residual's rows (an adjoint). Both are derived symbolically from the residual's DAG (as
 * the Hessian is, through the stencil's reduced coordinates), so exactly, and run on the
 * interpreter tier: a sensitivity evaluates them once per step or solve, not per Newton iteration. */
#ifndef SRD_TANGENT_H
#define SRD_TANGENT_H
#include <stdbool.h>
#include <stddef.h>
#include "kernel/interp.h"
#include "lower.h"

/* Input classes a tangent kernel differentiates with respect to, as a mask of 1 << KIN_*. */
enum {
    TANGENT_DATA = 1 << KIN_DATA | 1 << KIN_PARAM,
    TANGENT_ALL = TANGENT_DATA | 1 << KIN_DOF | 1 << KIN_DOF0 | 1 << KIN_VEL0 | 1 << KIN_STATE,
};

/* Tangents of the inputs by source (NULL: zero). dq is the tangent of the point the kernel is
 * evaluated at (its KIN_DOF inputs), dq0 and dv0 of the step start (n_dofs each). */
typedef struct InputTangents {
    const double *dq, *dq0, *dv0;
    const double *dstate;  /* the set's n * n_state */
    const double *ddata;   /* the set's n * n_data */
    const double *dparams; /* n_params */
} InputTangents;

/* Where lambda . d(res)/d(input) is added, by source (NULL: dropped); sizes as above. */
typedef struct InputAdjoints {
    double *lq, *lq0, *lv0, *lstate, *ldata, *lparams;
} InputAdjoints;

typedef struct KernelTangent {
    int            n_slots;  /* the inputs differentiated */
    KernelInput   *slots;
    int            nd, n_data, n_state, n_params;
    InterpProgram *forward;  /* rows: sum_j D_kj w_j, w_j read as data columns n_data + j */
    InterpProgram *adjoint;  /* one row per slot: sum_k lambda_k D_kj, lambda_k as columns n_data + k */
    /* The two as kernel specs (on the element's DAG), for compiling; and their compiled code
     * (kernel_tangents_compile), which runs instead of the interpreter once there. */
    KernelSpec     spec[2];
    KernelInput   *spec_inputs[2];
    ExprId        *spec_rows[2];
    char           spec_kind[2][256];
    srd_kernel_fn  fn[2];
} KernelTangent;

/* Compiles the tangent kernels of n sets with the LLVM backend into a new JIT (*jit: free it
 * with the backend's jit_free after the kernels' last use). A simulation's sensitivities run
 * them once per step, where the interpreter would cost several times the step. */
typedef struct SrdJit SrdJit;
bool kernel_tangents_compile(KernelTangent *t, int n, SrdJit **jit, char *err, size_t err_n);

/* Builds the tangent kernels of element le, lowered for element set `set` (adds nodes to le's
 * DAG), for the input classes of `mask`. A kernel that reads none of them gets no programs. */
bool kernel_tangent_build(LoweredElement *le, const srd_elemset *set, int n_params, int mask, KernelTangent *out,
                          char *err, size_t err_n);
/* The tangent kernels of the element's Jacobian times z, K_e z, whose z the kernels read as nd
 * more data columns after the set's (one per stencil DOF): stiffness-proportional damping's
 * beta K(q0) u moves with K's inputs (a third derivative of the energy). Their batches' data
 * (and a data tangent's stride) are n_data + nd wide. */
bool kernel_hessian_tangent_build(LoweredElement *le, const srd_elemset *set, int n_params, int mask,
                                  KernelTangent *out, char *err, size_t err_n);
/* Adds the residual's change along w into ctx->grad (by the batch's residual rows). */
void kernel_tangent_forward(const KernelTangent *t, const srd_eval_ctx *ctx, const srd_elem_batch *batch,
                            const InputTangents *w);
/* Adds lambda . d(res)/d(input) into out; lambda by residual index (srd_system_grad_len values,
 * zero in the scratch slots), n_dofs the model's. */
void kernel_tangent_adjoint(const KernelTangent *t, const srd_eval_ctx *ctx, const srd_elem_batch *batch,
                            const double *lambda, int n_dofs, const InputAdjoints *out);
void kernel_tangent_free(KernelTangent *t);
/* total[k * n + j] = d(rows_k)/d(slot j) for nd rows of le's DAG, in full: directly and through
 * the reduced coordinates the DAG takes as inputs of their own (adds nodes to le's DAG). */
void kernel_total_jacobian(LoweredElement *le, const ExprId *rows, int nd, const int *slots, int n, ExprId *total);

#endif
