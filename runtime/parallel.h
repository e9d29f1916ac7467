/* parallel.h — element assembly shared between threads (see parallel.c). */
#ifndef SRD_PARALLEL_H
#define SRD_PARALLEL_H
#include "sim.h"

typedef struct srd_assembler srd_assembler;

/* Threads to assemble with: $SRD_THREADS, else the processors online (at most 4). */
int  srd_assembly_threads(void);
/* Helper threads for s, or NULL when one thread is better: a small model, or a Jacobian whose
 * private copies would cost more to clear and add than the kernels' work saved. */
srd_assembler *srd_assembler_new(const srd_sim *s, int threads);
void srd_assembler_free(srd_assembler *a);
int  srd_assembler_threads(const srd_assembler *a);
/* Evaluates every element set's kernel, as one thread would, into ctx (energies) and ctx_nc
 * (forces): with_jacobian picks the full kernel or the gradient-only one. */
void srd_assembler_run(srd_assembler *a, const srd_sim *s, const srd_eval_ctx *ctx, const srd_eval_ctx *ctx_nc,
                       int with_jacobian);

#endif
