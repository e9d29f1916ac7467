/* run.h — `srdc run`: compile a model's kernels and run its analysis with the runtime. */
#ifndef SRD_RUN_H
#define SRD_RUN_H
#include <stdbool.h>
#include "ast.h"
#include "srd_model.h"

typedef struct RunOptions {
    const char  *out;        /* output directory */
    double       duration;   /* > 0 overrides the file's */
    double       dt;
    const char **overrides;  /* "name=value" */
    int          n_overrides;
    bool         quiet;
    bool         verbose;    /* print every Newton iteration */
} RunOptions;

/* Returns the exit status: 0 success, 1 bad input, 2 numerical failure, 3 I/O error. */
int run_model(const Program *prog, srd_model *m, const RunOptions *o);

#endif
