/* sweep.h — `srdc sweep`: one build, many runs over param values, one summary CSV. */
#ifndef SRD_SWEEP_H
#define SRD_SWEEP_H
#include <stdbool.h>

typedef struct SweepOptions {
    const char  *file;
    const char **specs;      /* "NAME=a..b:log:n", "NAME=v1,v2", "NAME=v" */
    int          n_specs;
    const char  *sets;       /* CSV of parameter sets, or NULL */
    const char  *out;        /* directory of the runs and summary.csv */
    int          jobs;       /* runs at a time; 0: one per processor */
    const char  *duration, *dt;  /* passed on to every run, or NULL */
    bool         quiet;
} SweepOptions;

/* Returns an exit status: 0 when every run succeeded, 2 when some failed, 1 for bad input,
 * 3 for I/O errors. */
int sweep_model(const SweepOptions *o);

#endif
