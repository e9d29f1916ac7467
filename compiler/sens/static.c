/* static.c — static sensitivities: dq/dp = -K^-1 dR/dp at an equilibrium (see static.h). */
#include "sens/static.h"
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "pairs.h"
#include "vec3.h"

void sens_residual_tangent_moved(srd_sim *s, const KernelTangent *tangents, double *const *column_tangents,
                                 const double *dparams, const double *dq_held, const double *dq0,
                                 double *const *dstate, double *g)
{
    memset(g, 0, sizeof(double) * srd_system_grad_len(&s->solver.sys));
    double energy = 0;
    srd_eval_ctx ctx = { s->q, s->q0, s->v0, s->params, s->t, s->dt, &energy, g, NULL };
    for (int k = 0; k < s->m->n_sets; k++) {
        if (!s->dynamic && s->kernels[k].info.needs_time_step)
            continue; /* friction acts over a step: none in a static state (as the runtime's residual) */
        InputTangents w = { .dq = dq_held, .dq0 = dq0, .dstate = dstate ? dstate[k] : NULL,
                            .ddata = column_tangents[k], .dparams = dparams };
        kernel_tangent_forward(&tangents[k], &ctx, &s->kernels[k].batch.b, &w);
    }
}

void sens_slide_motion(const srd_sim *s, const double *q, const double *danchor, const double *daxis, double *w)
{
    const srd_model *m = s->m;
    memset(w, 0, sizeof(double) * (size_t)m->n_dofs);
    for (int k = 0; k < m->n_slides; k++) {
        int node = m->node_dof[m->slide_node[k]], anchor = m->node_dof[m->slide_anchor[k]];
        double r[3];
        srd_sub3(&q[node], &q[anchor], r);
        double along = srd_dot3(r, &s->slide_axis[3 * k]);
        for (int c = 0; c < 3; c++)
            if (s->solver.sys.free_index[node + c] >= 0)
                w[node + c] = danchor[anchor + c] + (daxis ? along * daxis[3 * k + c] : 0);
    }
}

bool sens_anchor_rotated(const srd_model *m, int k)
{
    for (int i = 0; i < m->n_motions; i++)
        for (int j = 0; m->motions[i].kind == SRD_MOTION_ROTATE && j < m->motions[i].n_nodes; j++)
            if (m->motions[i].nodes[j] == m->slide_anchor[k])
                return true;
    return false;
}

int sens_anchors_moved(const srd_model *m, const double *dheld)
{
    int how = SENS_ANCHORS_STILL;
    for (int k = 0; k < m->n_slides; k++) {
        const double *da = &dheld[m->node_dof[m->slide_anchor[k]]];
        if (da[0] == 0 && da[1] == 0 && da[2] == 0)
            continue;
        if (sens_anchor_rotated(m, k))
            return SENS_ANCHORS_TURNED;
        how = SENS_ANCHORS_MOVED;
    }
    return how;
}

bool sens_anchor_held(const srd_sim *s, int k)
{
    int anchor = s->m->node_dof[s->m->slide_anchor[k]];
    return s->fixed[anchor] && s->fixed[anchor + 1] && s->fixed[anchor + 2];
}

void sens_reactions_across(const srd_sim *s, const double *res, const double *daxis, double *dr)
{
    const srd_model *m = s->m;
    double *across = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    srd_slides_across_part(s, dr, across);
    for (int d = 0; d < m->n_dofs; d++)
        if (!s->fixed[d])
            dr[d] = across[d];
    free(across);
    for (int k = 0; daxis && k < m->n_slides; k++) {
        if (!sens_anchor_held(s, k))
            continue;
        int node = m->node_dof[m->slide_node[k]];
        const double *a = &s->slide_axis[3 * k], *da = &daxis[3 * k];
        double turn = srd_dot3(da, &res[node]), along = srd_dot3(a, &res[node]);
        for (int c = 0; c < 3; c++)
            if (!s->fixed[node + c])
                dr[node + c] -= turn * a[c] + along * da[c];
    }
}

void sens_slides_turn_rows(const srd_sim *s, const double *res, const double *daxis, double *g)
{
    const srd_model *m = s->m;
    for (int k = 0; daxis && k < m->n_slides; k++) {
        if (!sens_anchor_held(s, k))
            continue;
        int node = m->node_dof[m->slide_node[k]];
        double turn = srd_dot3(&daxis[3 * k], &res[node]);
        for (int c = 0; c < 3; c++) {
            int f = s->solver.sys.free_index[node + c];
            if (f >= 0)
                g[f] += turn * s->slide_axis[3 * k + c];
        }
    }
}

/* Instance i's contact thickness h: twice the radius `contact` gives (dpairs[4]), or the two
 * parts' objects' own radii (dradius, per object; a rigid body's is its shape's). */
static double pair_thickness(const srd_sim *s, int kind, int i, const double dpairs[5], const double *dradius)
{
    int a, b;
    if (s->m->self_contact.radius > 0 || !dradius || !srd_pairs_instance_objects(s->pairs, kind, i, &a, &b))
        return 2 * dpairs[4];
    return (a >= 0 ? dradius[a] : 0) + (b >= 0 ? dradius[b] : 0);
}

/* Pair set `kind`'s rows: each instance's contact columns along dpairs and dradius
 * (sens_pair_columns). */
static void pair_rows(const srd_sim *s, int kind, int n, const double dpairs[5], const double *dradius, double *rows)
{
    static const char *const names[] = { "delta", "kc", "mu", "slip_velocity", "h" }; /* dpairs' order */
    const srd_elemset *set = &s->m->sets[s->m->self_contact.set[kind]];
    memset(rows, 0, sizeof(double) * (size_t)n * (size_t)set->n_data);
    for (int k = 0; k < 5; k++) {
        int c = srd_elemset_column(set, names[k]);
        for (int i = 0; c >= 0 && i < n; i++)
            rows[(size_t)i * set->n_data + c] = k < 4 ? dpairs[k] : pair_thickness(s, kind, i, dpairs, dradius);
    }
}

void sens_pair_columns(const srd_sim *s, const double dpairs[5], const double *dradius, double **columns)
{
    const srd_model *m = s->m;
    for (int k = 0; s->pairs && k < SRD_PAIR_SETS; k++) {
        int j = m->self_contact.set[k];
        if (j < 0)
            continue;
        int n = s->kernels[j].batch.b.n;
        columns[j] = srd_xrealloc(columns[j], sizeof(double) * ((size_t)n * (size_t)m->sets[j].n_data + 1));
        pair_rows(s, k, n, dpairs, dradius, columns[j]);
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
