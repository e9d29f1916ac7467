/* static.c — static sensitivities: dq/dp = -K^-1 dR/dp at an equilibrium (see static.h). */
#include "sens/static.h"
#include <stdlib.h>
#include <string.h>
#include "alloc.h"

/* Set k's data followed by their tangents, per instance, as the tangent kernel reads them. */
static double *data_with_tangents(const srd_elem_batch *b, const double *tangents)
{
    int n = b->n, nd = b->n_data;
    double *both = srd_xcalloc((size_t)n * 2 * (size_t)nd + 1, sizeof(double));
    for (int i = 0; i < n; i++) {
        memcpy(&both[(size_t)i * 2 * nd], &b->data[(size_t)i * nd], sizeof(double) * (size_t)nd);
        memcpy(&both[(size_t)i * 2 * nd + nd], &tangents[(size_t)i * nd], sizeof(double) * (size_t)nd);
    }
    return both;
}

void sens_residual_tangent(srd_sim *s, const DataTangent *tangents, double *const *column_tangents, double *g)
{
    memset(g, 0, sizeof(double) * srd_system_grad_len(&s->solver.sys));
    double energy = 0;
    srd_eval_ctx ctx = { s->q, s->q0, s->v0, s->params, s->t, s->dt, &energy, g, NULL };
    for (int k = 0; k < s->m->n_sets; k++) {
        if (!column_tangents[k] || !tangents[k].n_cols)
            continue;
        srd_elem_batch b = s->kernels[k].batch.b;
        double *both = data_with_tangents(&b, column_tangents[k]);
        b.n_data *= 2;
        b.data = both;
        data_tangent_run(&tangents[k], &ctx, &b);
        free(both);
    }
}

int sens_static(srd_sim *s, const DataTangent *tangents, double *const *column_tangents, double *dq)
{
    double *g = srd_xcalloc(srd_system_grad_len(&s->solver.sys), sizeof(double));
    sens_residual_tangent(s, tangents, column_tangents, g);
    int singular = srd_sim_static_sensitivity(s, g, dq);
    free(g);
    return singular;
}
