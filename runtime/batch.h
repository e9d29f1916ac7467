/* batch.h — builds the per-kind instance batches that generated kernels read: DOF index
 * tables, the residual map of free DOFs, Jacobian positions for the chosen storage, data and
 * state. Done once per model (state is refreshed per step). */
#ifndef SRD_BATCH_H
#define SRD_BATCH_H
#include "srd_kernel.h"
#include "srd_model.h"

typedef enum {
    SRD_JAC_DENSE,      /* column-major n x n, n = free DOFs */
    SRD_JAC_BAND,       /* LAPACK general band (dgbsv): ldab = 2 kl + ku + 1 */
    SRD_JAC_BAND_SYM,   /* LAPACK symmetric band, upper (dpbsv): ldab = kd + 1 */
    SRD_JAC_CSC,        /* compressed sparse columns, both triangles, rows sorted (CHOLMOD, UMFPACK) */
} srd_jac_layout;

/* The reduced system: free DOFs numbered 0..n_free-1 in model DOF order. */
typedef struct srd_system {
    int            n_free;
    int           *free_index;  /* per model DOF: its free index, or -1 when fixed */
    srd_jac_layout layout;
    int            kl, ku;      /* band widths in the free numbering */
    long long      ldab;        /* leading dimension of the band storage (dense: n_free; CSC: 0) */
    /* CSC only: the pattern every element stencil can touch, plus the whole diagonal. */
    int           *col_start;   /* n_free + 1 */
    int           *row_index;   /* nnz, sorted within each column */
    long long      nnz;
} srd_system;

/* Numbers the free DOFs and measures the band of the reduced system. */
void srd_system_init(srd_system *s, const srd_model *m, srd_jac_layout layout);
/* The same with another set of constrained DOFs than the model's (after a release). */
void srd_system_init_fixed(srd_system *s, const srd_model *m, const unsigned char *fixed, srd_jac_layout layout);
void srd_system_free(srd_system *s);
/* Position of entry (row, col) of the reduced Jacobian, or -1 if it is not stored. */
long long srd_system_position(const srd_system *s, int row, int col);
/* Size of the Jacobian storage in doubles. */
long long srd_system_storage(const srd_system *s);
/* Lengths of the arrays kernels add into (srd_eval_ctx grad and jac): the residual and the
 * Jacobian storage, each followed by SRD_SCRATCH scratch slots. */
size_t srd_system_grad_len(const srd_system *s);
size_t srd_system_jac_len(const srd_system *s);

typedef struct srd_batch_owner {
    srd_elem_batch b;
    int32_t       *dofs, *res;
    int64_t       *jac_pos;
    double        *data, *state;
} srd_batch_owner;

/* Builds the batch of element set `set` for a kernel described by `info`. State values X0,
 * MASS and REST are filled here; frame values are maintained by the rod code. Returns 0, or
 * -1 when the set does not match the kernel's stencil. */
int  srd_batch_build(srd_batch_owner *out, const srd_model *m, int set, const srd_kernel_info *info,
                     const srd_system *sys);
/* After an accepted step from configuration q_start to q_end (DOF vectors): the state the
 * next step starts from. Reference directors are carried to the new tangents by parallel
 * transport in time (as the kernels did within the step), the reference twist between
 * consecutive stencil edges is measured anew and continued without 2 pi jumps, and the
 * mid-edge tau0 is recomputed from the new positions. */
void srd_batch_advance_state(srd_batch_owner *bo, const srd_model *m, int set_index, const srd_kernel_info *info,
                             const double *q_start, const double *q_end);
void srd_batch_free(srd_batch_owner *bo);
/* Instances [lo, hi) of batch b as a batch of their own whose residual rows are their DOFs
 * (res = dofs): a row for every DOF, held ones too (reactions, contact forces, their tangents). */
srd_elem_batch srd_batch_every_dof(const srd_elem_batch *b, int lo, int hi);
/* Recomputes the residual rows and Jacobian positions for another system (a release frees
 * DOFs); DOFs, data and state stay. */
/* The body whose axes frame state entry k (SRD_STATE_FRAME) of instance i holds, or -1. */
int  srd_batch_frame_body(const srd_model *m, int set_index, const srd_kernel_info *info, int i, int k);
/* Puts the bodies' axes at the step start (9 per body, column k = axis k) into the state of
 * every body parameter of the set. */
void srd_batch_set_frames(srd_batch_owner *bo, const srd_model *m, int set_index, const srd_kernel_info *info,
                          const double *body_axes);
void srd_batch_remap(srd_batch_owner *bo, const srd_system *sys);
/* The same for instances first .. first + n - 1 only. */
void srd_batch_remap_range(srd_batch_owner *bo, const srd_system *sys, int first, int n);
/* The reference director d1 of every edge at the reference configuration (3 per edge, in the
 * edge's own orientation; the caller frees it): what the element state starts from. */
double *srd_initial_directors(const srd_model *m);
/* A director carried from unit tangent t0 to t1 by parallel transport, kept unit and normal to
 * t1: the step the element state takes (srd_batch_advance_state). */
void srd_transport_director(const double *d, const double *t0, const double *t1, double *out);

#endif
