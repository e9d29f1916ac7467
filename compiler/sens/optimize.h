/* optimize.h — `srdc optimize`: the model's `optimize` block solved with NLopt, each objective
 * value and gradient from a static equilibrium and its sensitivities (grad.h). */
#ifndef SRD_SENS_OPTIMIZE_H
#define SRD_SENS_OPTIMIZE_H
#include "sens/grad.h"

typedef struct OptimizeOptions {
    GradOptions model;   /* the file and its -p values (the start of the search) */
    const char *out;     /* where optimum.args and history.csv go (default: the file's stem) */
} OptimizeOptions;

int optimize_model(const OptimizeOptions *o);

#endif
