/* srd_kernel.h — the contract between generated element kernels and the runtime. It is the
 * only header generated code is written against: plain C types, no LLVM.
 *
 * A kernel evaluates one element kind over a batch of instances. For each instance it gathers
 * the stencil's DOFs through an index table, computes the energy (or force), its gradient and
 * its Hessian (or force Jacobian), and adds them straight into the residual and the Jacobian
 * storage through positions precomputed at elaboration. The storage layout (dense
 * column-major or LAPACK band) is invisible to the kernel: it only adds at given positions. */
#ifndef SRD_KERNEL_H
#define SRD_KERNEL_H
#include <stdint.h>

/* What every kernel reads and accumulates into. Layout is fixed: generated code indexes it. */
typedef struct srd_eval_ctx {
    const double *q;       /* 0: DOF values now */
    const double *q0;      /* 1: DOF values at the start of the step */
    const double *v0;      /* 2: DOF velocities at the start of the step */
    const double *params;  /* 3: run-time parameter table */
    double        t;       /* 4: time */
    double        dt;      /* 5: time step */
    double       *energy;  /* 6: += sum of instance values (energies) ; NULL to skip */
    double       *grad;    /* 7: += gradient (energies) or -force (forces), by residual index; NULL to skip */
    double       *jac;     /* 8: += Hessian / -force Jacobian at jac positions; NULL to skip */
} srd_eval_ctx;
/* grad holds n_free + SRD_SCRATCH values and jac its storage + SRD_SCRATCH: the extra ones
 * are scratch slots that receive the entries of fixed DOFs and entries outside the stored band
 * or triangle, so kernels never branch. Entry (k, l) of a stencil goes to scratch slot
 * (k nd + l) mod SRD_SCRATCH: with one slot for all, every dropped entry (half of them in
 * symmetric band storage) waited for the previous one's store. */
enum { SRD_SCRATCH = 64 };

/* The instances of one element kind. Layout is fixed: generated code indexes it. */
typedef struct srd_elem_batch {
    int32_t        n;         /* 0: instances */
    int32_t        n_dofs;    /* 1: stencil DOFs per instance (nd) */
    int32_t        n_data;    /* 2: per-instance values */
    int32_t        n_state;   /* 3: per-instance step-start values */
    const int32_t *dofs;      /* 4: n * nd: DOF index of each stencil DOF (into q, q0, v0) */
    const int32_t *res;       /* 5: n * nd: residual index of each stencil DOF (a scratch slot if fixed) */
    const int64_t *jac_pos;   /* 6: n * nd * nd: position in jac of entry (row k, col l), or a scratch slot */
    const double  *data;      /* 7: n * n_data */
    const double  *state;     /* 8: n * n_state */
} srd_elem_batch;

typedef void (*srd_kernel_fn)(const srd_eval_ctx *ctx, const srd_elem_batch *batch);

/* The symbol of the kernel of element kind KIND is "srd_kernel_" KIND; "srd_gradient_" KIND
 * is the same without the Jacobian (for line searches and explicit integrators). */
#define SRD_KERNEL_PREFIX "srd_kernel_"
#define SRD_GRADIENT_PREFIX "srd_gradient_"

/* Stencil DOF components and per-instance state values, as the compiler lays them out. */
/* SRD_COMP_ROT + k: rotation parameter k of a body parameter (a node parameter of the set);
 * SRD_COMP_LAMBDA + k: multiplier k of a constraint instance (dof_param -1). */
enum { SRD_COMP_X, SRD_COMP_Y, SRD_COMP_Z, SRD_COMP_TWIST, SRD_COMP_XI, SRD_COMP_ROT, SRD_COMP_LAMBDA = 8 };
enum { SRD_MAX_MULTIPLIERS = 9 }; /* per constraint instance */
enum { SRD_STATE_X0, SRD_STATE_MASS, SRD_STATE_REST, SRD_STATE_D1, SRD_STATE_D2, SRD_STATE_TANGENT,
       SRD_STATE_SIGN, SRD_STATE_REF_TWIST, SRD_STATE_TAU0, SRD_STATE_TAU_REF,
       SRD_STATE_FRAME /* a body's orientation at the step start: comp 3 k + i, component i of axis k */ };

/* How a kernel reads an instance: stencil DOF k is component dof_comp[k] of stencil
 * parameter dof_param[k]; state value k is state_kind[k] of parameter state_param[k]
 * (component state_comp[k]). Stencil parameters are nodes or edges in the signature's
 * order; the element set stores nodes and edges separately, each in that order. */
typedef struct srd_kernel_info {
    const char *kind;
    int         is_force;     /* residual rows only on the first node; Jacobian not symmetric */
    int         symmetric;
    int         n_params;
    const int  *param_is_node;
    int         nd;
    const int  *dof_param, *dof_comp;
    int         n_state;
    const int  *state_kind, *state_param, *state_comp;
    int         needs_time_step; /* reads dt or velocities (friction, drag): not part of statics */
    int         cost;            /* operations of value, gradient and Jacobian per instance */
} srd_kernel_info;

#endif
