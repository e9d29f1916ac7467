/* modeshape.c — labels and display scales of mode shapes (modeshape.h). */
#include "modeshape.h"
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include "alloc.h"
#include "vec3.h"

double srd_mode_display_scale(const srd_model *m, const double *mode, double length)
{
    double node = 0, twist = 0;
    for (int d = 0; d < m->n_dofs; d++) {
        if (m->dof_kind[d] <= SRD_DOF_NODE_Z)
            node = fmax(node, fabs(mode[d]));
        else if (m->dof_kind[d] == SRD_DOF_TWIST)
            twist = fmax(twist, fabs(mode[d]));
    }
    double by_node = node > 0 ? 0.1 * length / node : INFINITY, by_twist = twist > 0 ? 0.5 / twist : INFINITY;
    double scale = fmin(by_node, by_twist);
    return isfinite(scale) ? scale : 0;
}

/* Unit tangent of the rods at every node (the mean of its rod edges' directions at q; zero
 * off rods), 3 per node. */
static double *rod_tangents(const srd_model *m, const double *q)
{
    double *t = srd_xcalloc(3 * (size_t)m->n_nodes + 1, sizeof(double));
    for (int e = 0; e < m->n_edges; e++) {
        if (!m->edge_is_rod[e])
            continue;
        const int *nd = &m->edge_nodes[2 * e];
        double d[3];
        srd_sub3(&q[m->node_dof[nd[1]]], &q[m->node_dof[nd[0]]], d);
        double len = sqrt(srd_dot3(d, d));
        for (int k = 0; k < 2 && len > 0; k++)
            for (int c = 0; c < 3; c++)
                t[3 * nd[k] + c] += d[c] / len;
    }
    for (int i = 0; i < m->n_nodes; i++) {
        double len = sqrt(srd_dot3(&t[3 * i], &t[3 * i]));
        for (int c = 0; c < 3 && len > 0; c++)
            t[3 * i + c] /= len;
    }
    return t;
}

/* Modal mass shares of a mode: twist, along the rods, across them per axis (with the rods'
 * direction per axis, weighted alike), and off rods per axis. */
typedef struct Shares {
    double twist, axial, across[3], rod_dir[3], off[3];
} Shares;

static void add_node_share(Shares *sh, const double *u, const double *t, double mass)
{
    double a = srd_dot3(u, t);
    bool on_rod = srd_dot3(t, t) > 0;
    sh->axial += mass * a * a;
    for (int c = 0; c < 3; c++) {
        double w = u[c] - a * t[c];
        if (on_rod) {
            sh->across[c] += mass * w * w;
            sh->rod_dir[c] += mass * (w * w) * fabs(t[c]);
        } else {
            sh->off[c] += mass * u[c] * u[c];
        }
    }
}

static Shares mode_shares(const srd_model *m, const double *q, const double *mode)
{
    Shares sh = { 0 };
    double *t = rod_tangents(m, q);
    for (int d = 0; d < m->n_dofs; d++)
        if (m->dof_kind[d] == SRD_DOF_TWIST)
            sh.twist += m->dof_mass[d] * mode[d] * mode[d];
    for (int i = 0; i < m->n_nodes; i++)
        add_node_share(&sh, &mode[m->node_dof[i]], &t[3 * i], m->dof_mass[m->node_dof[i]]);
    free(t);
    return sh;
}

static int largest(const double *v) { return v[0] >= v[1] && v[0] >= v[2] ? 0 : v[1] >= v[2] ? 1 : 2; }

static double sum3(const double *v) { return v[0] + v[1] + v[2]; }

void srd_mode_label(const srd_model *m, const double *q, const double *mode, double w, double w_bound, char *out,
                    size_t n)
{
    static const char axis[] = "xyz";
    Shares sh = mode_shares(m, q, mode);
    double total = sh.twist + sh.axial + sum3(sh.across) + sum3(sh.off);
    int c = largest(sh.across), r = largest(sh.rod_dir), o = largest(sh.off);
    if (!(w > 1e-5 * w_bound) || !(total > 0))
        snprintf(out, n, "rigid");
    else if (sh.twist >= 0.5 * total)
        snprintf(out, n, "torsion");
    else if (sh.axial >= 0.5 * total)
        snprintf(out, n, "axial");
    else if (sum3(sh.across) >= sum3(sh.off) && sh.across[c] >= 0.9 * sum3(sh.across) && r != c)
        snprintf(out, n, "bending %c-%c", axis[r < c ? r : c], axis[r < c ? c : r]);
    else if (sum3(sh.across) >= sum3(sh.off))
        snprintf(out, n, "bending");
    else if (sh.off[o] >= 0.9 * sum3(sh.off))
        snprintf(out, n, "along %c", axis[o]);
    else
        snprintf(out, n, "mixed");
}
