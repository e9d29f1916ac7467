/* interp.h — the first tier of element kernels: a program of the kernel's DAG that a small
 * interpreter runs at once, with no code generation, while LLVM compiles the same kernel on
 * another thread (tier.h). It evaluates every operation as the JIT's code does (same order of
 * sums, the same libm calls, no contraction), so both tiers give bit-identical results. */
#ifndef SRD_INTERP_H
#define SRD_INTERP_H
#include "codegen.h"
#include "srd_kernel.h"

typedef struct InterpProgram InterpProgram;

/* Translates a kernel spec (as cg_emit_kernel takes it; part, parts and lanes are ignored)
 * into a program. The spec's DAG and arrays are copied from: the program stands alone. */
InterpProgram *interp_build(const KernelSpec *spec);
/* Does what the JIT's kernel of the same spec does: adds the instances' energy, residual and
 * Jacobian into ctx. Safe on several threads at once. */
void           interp_run(const InterpProgram *p, const srd_eval_ctx *ctx, const srd_elem_batch *batch);
/* Instructions, registers (of INTERP_LANES doubles) and gathered inputs, for tests. */
void           interp_stats(const InterpProgram *p, int *ins, int *regs, int *inputs);
void           interp_free(InterpProgram *p);

#endif
