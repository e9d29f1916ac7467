/* natural.c — the natural shape of elements flagged `natural_from_reference`: the bend-twist
 * curvatures and twist, and the hinge angles, measured in the reference configuration with
 * the frames the kernels start from, so that the reference configuration is stress-free.
 * Only kinematics live here (what std.rods and std.shells measure); the energies and all
 * their derivatives stay in the language. */
#include "natural.h"
#include "vec3.h"
#include <math.h>
#include <string.h>

static void unit_between(const double *from, const double *to, double *t)
{
    for (int c = 0; c < 3; c++)
        t[c] = to[c] - from[c];
    double n = sqrt(srd_dot3(t, t));
    for (int c = 0; c < 3; c++)
        t[c] /= n;
}

/* The physical curvature k whose discrete curvature over a chord l is kd: std.rods maps
 * k to 2 tan(asin(k l / 2)), so k = 2 sin(atan(kd / 2)) / l. */
static double physical_curvature(double kd, double l) { return 2 * sin(atan(kd / 2)) / l; }

/* Curvatures and twist of one bend-twist instance at the reference, with zero twist angles,
 * the initial directors d1 (edge orientation) and the initial reference twist. */
static void measure_bend_twist(const srd_model *m, const srd_elemset *s, int i, const double *d1,
                               double ref_twist, double out[3])
{
    const int *nd = &s->nodes[3 * i];
    double t0[3], t1[3], b0[3], b1[3], kb[3];
    unit_between(&m->x0[3 * nd[0]], &m->x0[3 * nd[1]], t0);
    unit_between(&m->x0[3 * nd[1]], &m->x0[3 * nd[2]], t1);
    const double *a0 = &d1[3 * s->edges[2 * i]], *a1 = &d1[3 * s->edges[2 * i + 1]];
    srd_cross3(t0, a0, b0);
    srd_cross3(t1, a1, b1);
    srd_cross3(t0, t1, kb);
    double denom = 1 + srd_dot3(t0, t1);
    for (int c = 0; c < 3; c++)
        kb[c] *= 2 / denom;
    double k1 = 0, k2 = 0;
    for (int c = 0; c < 3; c++) {
        k1 += 0.5 * (b0[c] + b1[c]) * kb[c];
        k2 -= 0.5 * (a0[c] + a1[c]) * kb[c];
    }
    out[0] = k1;
    out[1] = k2;
    out[2] = ref_twist;
}

/* Signed dihedral angle of a hinge (x0-x1 shared, x2 and x3 opposite), as std.shells measures. */
static double hinge_angle(const srd_model *m, const int *nd)
{
    const double *x0 = &m->x0[3 * nd[0]], *x1 = &m->x0[3 * nd[1]], *x2 = &m->x0[3 * nd[2]], *x3 = &m->x0[3 * nd[3]];
    double e0[3], u[3], v[3], n0[3], n1[3], w[3];
    for (int c = 0; c < 3; c++) {
        e0[c] = x1[c] - x0[c];
        u[c] = x2[c] - x0[c];
        v[c] = x3[c] - x0[c];
    }
    srd_cross3(e0, u, n0);
    srd_cross3(v, e0, n1);
    srd_cross3(n0, n1, w);
    return atan2(srd_dot3(w, e0) / sqrt(srd_dot3(e0, e0)), srd_dot3(n0, n1));
}

void srd_natural_shape(const srd_model *m, const srd_elemset *s, double *data, const double *d1,
                       const double *ref_twist)
{
    int flag = srd_elemset_column(s, "natural_from_reference");
    if (flag < 0)
        return;
    int vl = srd_elemset_column(s, "voronoi_length"), k1 = srd_elemset_column(s, "kappa1_bar"), k2 = srd_elemset_column(s, "kappa2_bar");
    int tau = srd_elemset_column(s, "tau_bar"), phi = srd_elemset_column(s, "phi_bar");
    for (int i = 0; i < s->n; i++) {
        double *row = &data[i * s->n_data];
        if (row[flag] == 0)
            continue;
        if (k1 >= 0 && k2 >= 0 && tau >= 0 && vl >= 0 && s->n_node == 3 && s->n_edge == 2) {
            double q[3], l = row[vl];
            measure_bend_twist(m, s, i, d1, ref_twist ? ref_twist[i] : 0, q);
            row[k1] = physical_curvature(q[0], l);
            row[k2] = physical_curvature(q[1], l);
            row[tau] = q[2] / l;
        } else if (phi >= 0 && s->n_node == 4) {
            row[phi] = hinge_angle(m, &s->nodes[4 * i]);
        }
    }
}
