/* bench_model.h — what every benchmark does before it measures: a model from source text,
 * its kernels JIT-compiled, a simulation ready to step. */
#ifndef SRD_BENCH_MODEL_H
#define SRD_BENCH_MODEL_H
#include "kernels.h"
#include "sim.h"

typedef struct BenchModel {
    Arena        arena;
    Program      prog;
    srd_model   *m;
    ModelKernels mk;
    srd_sim      s;
} BenchModel;

/* Returns 0, or 1 after printing why the model could not be built. */
int  bench_model_open(BenchModel *b, const char *name, const char *text, srd_solver_kind solver);
void bench_model_close(BenchModel *b);

#endif
