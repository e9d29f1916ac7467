/* state_tangent.h — the derivative of the elements' step-start state update (rod frames carried
 * by time-parallel transport, the reference twist; srd_batch_advance_state) with respect to the
 * state before the step and the configurations at its start and end: what a sensitivity of a
 * simulation carries from one step to the next. Forward (a tangent) and reverse (its transpose). */
#ifndef SRD_STATE_TANGENT_H
#define SRD_STATE_TANGENT_H
#include <stdbool.h>
#include "batch.h"

/* Whether the update of set k's state has a derivative here. The bodies' frames (SRD_STATE_FRAME)
 * are kept as they were by these functions: their tangents come from the bodies' own
 * (body_tangent.h). */
bool srd_state_tangent_supported(const srd_kernel_info *info);

/* dS1 of set k's instances given their state before the step (S0, n * n_state values), the
 * configurations q0 and q1 (n_dofs) and the tangents dS0, dq0, dq1. */
void srd_state_tangent(const srd_model *m, int k, const srd_kernel_info *info, const double *S0, const double *q0,
                       const double *q1, const double *dS0, const double *dq0, const double *dq1, double *dS1);

/* The transpose: adds lS1's pull-back to lS0 (n * n_state) and to lq0, lq1 (n_dofs). */
void srd_state_adjoint(const srd_model *m, int k, const srd_kernel_info *info, const double *S0, const double *q0,
                       const double *q1, const double *lS1, double *lS0, double *lq0, double *lq1);

#endif
