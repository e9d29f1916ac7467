/* run.h — `srdc run`: compile a model's kernels (JIT) and run its analyses with the driver. */
#ifndef SRD_RUN_H
#define SRD_RUN_H
#include "ast.h"
#include "driver.h"
#include "srd_model.h"

/* Returns the exit status: 0 success, 1 bad input, 2 numerical failure, 3 I/O error. */
int run_model(const Program *prog, srd_model *m, const srd_run_options *o);

#endif
