/* static.c — static sensitivities: dq/dp = -K^-1 dR/dp at an equilibrium (see static.h). */
#include "sens/static.h"
#include <stdlib.h>
#include <string.h>
#include "alloc.h"

void sens_residual_tangent_moved(srd_sim *s, const KernelTangent *tangents, double *const *column_tangents,
                                 const double *dparams, const double *dq_held, const double *dq0,
                                 double *const *dstate, double *g)
{
    memset(g, 0, sizeof(double) * srd_system_grad_len(&s->solver.sys));
    double energy = 0;
    srd_eval_ctx ctx = { s->q, s->q0, s->v0, s->params, s->t, s->dt, &energy, g, NULL };
    for (int k = 0; k < s->m->n_sets; k++) {
        InputTangents w = { .dq = dq_held, .dq0 = dq0, .dstate = dstate ? dstate[k] : NULL,
                            .ddata = column_tangents[k], .dparams = dparams };
        kernel_tangent_forward(&tangents[k], &ctx, &s->kernels[k].batch.b, &w);
    }
}

void sens_residual_tangent(srd_sim *s, const KernelTangent *tangents, double *const *column_tangents,
                           const double *dparams, const double *dq_held, double *g)
{
    sens_residual_tangent_moved(s, tangents, column_tangents, dparams, dq_held, NULL, NULL, g);
}

int sens_static(srd_sim *s, const KernelTangent *tangents, double *const *column_tangents, const double *dparams,
                double *dq)
{
    double *g = srd_xcalloc(srd_system_grad_len(&s->solver.sys), sizeof(double));
    sens_residual_tangent(s, tangents, column_tangents, dparams, NULL, g);
    int singular = srd_sim_static_sensitivity(s, g, dq);
    free(g);
    return singular;
}
