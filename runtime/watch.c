/* watch.c — the strain of linear-elastic springs and a bound on the highest natural frequency,
 * for the driver's warnings (watch.h). */
#include "watch.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "vec3.h"

/* The largest strain among the instances of one stretch set; its kernel's data hold the rest
 * lengths in force (schedules write actuated ones there). */
static srd_strain set_max_strain(const srd_sim *s, int k, const double *q)
{
    const srd_model *m = s->m;
    const srd_elemset *set = &m->sets[k];
    int rest = srd_elemset_column(set, "rest_length"), fraction = srd_elemset_column(set, "span_fraction");
    srd_strain worst = { 0, -1 };
    for (int i = 0; i < set->n && rest >= 0; i++) {
        const int *nd = &set->nodes[2 * i];
        double e[3];
        srd_sub3(&q[m->node_dof[nd[1]]], &q[m->node_dof[nd[0]]], e);
        const double *data = &s->kernels[k].batch.data[i * set->n_data];
        /* A spring next to a clamp stands for more rod than its own length: its elongation
         * spreads over that. */
        double share = fraction >= 0 ? data[fraction] : 1;
        double strain = data[rest] > 0 ? share * fabs(sqrt(srd_dot3(e, e)) / data[rest] - 1) : 0;
        if (strain > worst.strain) {
            worst.strain = strain;
            worst.object = set->object[i];
        }
    }
    return worst;
}

srd_strain srd_max_strain(const srd_sim *s, const double *q)
{
    srd_strain worst = { 0, -1 };
    for (int k = 0; k < s->m->n_sets; k++) {
        if (strcmp(s->m->sets[k].kind, "stretch") || !s->kernels[k].batch.data)
            continue;
        srd_strain w = set_max_strain(s, k, q);
        if (w.strain > worst.strain)
            worst = w;
    }
    return worst;
}

/* |K_ij| for free DOFs i, j whichever half of a symmetric Jacobian the layout stores. */
static double stiffness_entry(const srd_solver *sv, int i, int j)
{
    long long a = srd_system_position(&sv->sys, i, j), b = srd_system_position(&sv->sys, j, i);
    return fmax(a >= 0 ? fabs(sv->jac[a]) : 0, b >= 0 ? fabs(sv->jac[b]) : 0);
}

double srd_max_frequency_bound(srd_sim *s)
{
    const srd_model *m = s->m;
    const srd_system *sys = &s->solver.sys;
    int n = sys->n_free;
    /* sqrt of each free DOF's mass; massless DOFs (mid-edge xi) are not integrated explicitly. */
    double *root = srd_xcalloc((size_t)n + 1, sizeof(double));
    for (int d = 0; d < m->n_dofs; d++)
        if (sys->free_index[d] >= 0)
            root[sys->free_index[d]] = sqrt(fmax(m->dof_mass[d], 0));
    srd_sim_stiffness(s);
    int reach = sys->layout == SRD_JAC_DENSE ? n : (sys->kl > sys->ku ? sys->kl : sys->ku);
    double w2 = 0;
    for (int i = 0; i < n; i++) {
        if (root[i] <= 0)
            continue;
        double row = 0;
        int lo = i - reach > 0 ? i - reach : 0, hi = i + reach < n - 1 ? i + reach : n - 1;
        for (int j = lo; j <= hi; j++)
            if (root[j] > 0)
                row += stiffness_entry(&s->solver, i, j) / (root[i] * root[j]);
        w2 = fmax(w2, row);
    }
    free(root);
    return sqrt(w2);
}

double srd_stable_dt(srd_method method, double w)
{
    if (method < SRD_SYMPLECTIC_EULER || !(w > 0))
        return 0;
    return (method == SRD_RK4 ? 2 * sqrt(2.0) : 2.0) / w;
}
