/* codegen.h — emits LLVM IR for element kernels from their value/gradient/Hessian DAGs.
 * One function per element kind, looping over the instances of a batch (srd_kernel.h). */
#ifndef SRD_CODEGEN_H
#define SRD_CODEGEN_H
#include <stdbool.h>
#include <llvm-c/Core.h>
#include "expr.h"

/* Where an input slot of the DAG comes from, per instance. */
typedef enum {
    KIN_DOF,   /* q[dofs[i*nd + index]] */
    KIN_DOF0,  /* q0[dofs[i*nd + index]] */
    KIN_VEL0,  /* v0[dofs[i*nd + index]] */
    KIN_DATA,  /* data[i*n_data + index] */
    KIN_STATE, /* state[i*n_state + index] */
    KIN_PARAM, /* params[index] */
    KIN_TIME,  /* t */
    KIN_DT,    /* dt */
    KIN_EXPR,  /* the value of DAG node `index` (a reduced coordinate of the stencil) */
} KernelInputClass;

typedef struct KernelInput {
    KernelInputClass cls;
    int              index;
} KernelInput;

/* A kernel to emit. Residual and Jacobian entries are DAG nodes (-1 for structural zeros). */
typedef struct KernelSpec {
    const char        *kind;      /* the function is srd_kernel_<kind> */
    ExprDag           *dag;
    int                n_inputs;  /* slots 0 .. n_inputs-1 of the DAG */
    const KernelInput *inputs;
    int                nd;        /* stencil DOFs */
    ExprId             value;     /* energy of one instance, or -1 */
    const ExprId      *res;       /* nd: residual contribution per stencil DOF */
    const ExprId      *jac;       /* nd * nd row-major; when symmetric only k <= l is read */
    bool               symmetric;
    bool               gradient_only; /* emit srd_gradient_<kind>: value and residual, no Jacobian */
    /* Compiling in `parts` modules at once: this module (part) gets the chunks numbered
     * part, part + parts, ... as external functions and declares the others; part 0 also
     * gets the kernel function itself. 0 or 1 part: one module with internal chunks. */
    int                part, parts;
    int                lanes;     /* instances evaluated at once, one per vector lane (0 or 1: scalar) */
} KernelSpec;

typedef struct CodegenStats {
    int ops;      /* DAG operations emitted */
    int chunks;   /* internal functions the body was split into */
} CodegenStats;

/* Instances per vector: eight where the host has AVX-512, four (an AVX2 register) elsewhere
 * and for portable objects (bench/README.md), unless SRD_LANES says otherwise (1, 2, 4, 8 or
 * 16; other values round down). */
int cg_lanes(bool portable);

/* Adds srd_kernel_<kind> to module M. Bodies above `chunk_ops` operations are split into
 * noinline functions of about that many operations, which keeps LLVM's optimisation time
 * linear in the kernel size: internal ones, or with spec->parts > 1 external ones spread over
 * the part modules. */
void cg_emit_kernel(LLVMModuleRef M, const KernelSpec *spec, int chunk_ops, CodegenStats *stats);

#endif
