/* grad.h — `srdc grad`: the derivative of every probe of a model's static equilibrium with
 * respect to every param, by one linear solve per param with the equilibrium's stiffness. */
#ifndef SRD_SENS_GRAD_H
#define SRD_SENS_GRAD_H
#include <stdbool.h>

typedef struct GradOptions {
    const char  *file;
    const char **overrides;  /* "name=value" */
    int          n_overrides;
    bool         quiet;
} GradOptions;

/* Prints d(probe)/d(param) with units for the static block's probes; returns an exit status. */
int grad_model(const GradOptions *o);

#endif
