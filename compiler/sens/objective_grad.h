/* objective_grad.h — an `optimize` objective's value and gradient with respect to the params at
 * one point of the model: through the static equilibrium's sensitivities, or through the
 * simulation's adjoint with the objective's per-step slopes (objective.h, dynamic.h). */
#ifndef SRD_SENS_OBJECTIVE_GRAD_H
#define SRD_SENS_OBJECTIVE_GRAD_H
#include <stdbool.h>
#include "sens/grad.h"
#include "sens/objective.h"

/* Runs point pt's analysis (its static block, or its simulation), evaluates the objective into
 * *J and its gradient dp[k] for the params `want` names (NULL: every one), with status[k]
 * STATIC_DERIVED or why not (objective_why). 0, or with a message in why OBJECTIVE_REFUSED (a
 * simulation the derivatives do not cover) or -1 (a failed solve or step). */
enum { OBJECTIVE_REFUSED = -2 };
int objective_gradient(StaticPoint *pt, const GradOptions *g, Objective *ob, const bool *want, double *J, double *dp,
                       int *status, char *why, size_t why_n);
const char *objective_why(const StaticPoint *pt, int k, int status);

/* `srdc grad` of a model with an objective (its optimize block's, or --objective's): prints it and
 * its derivative with respect to every param. An exit status. */
int grad_objective(StaticPoint *pt, const GradOptions *o);

#endif
