/* probe.c — probe values (see probe.h), one function for the probe file, the controller and
 * library users, so that all of them see the same numbers. */
#include "probe.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "joint.h"
#include "vec3.h"

/* The total force and moment (about the probe's first node, where it is now) that the
 * constraints exert on the probe's region: node reactions, and twist reactions as moments
 * about their edges. */
static void region_reaction(const srd_model *m, const srd_probe *p, const double *q, const double *r, double *fm)
{
    unsigned char *in = srd_xcalloc((size_t)m->n_nodes + 1, 1);
    const double *o = &q[m->node_dof[p->node]];
    memset(fm, 0, 6 * sizeof(double));
    for (int i = 0; i < p->n_nodes; i++) {
        int d = m->node_dof[p->nodes[i]];
        in[p->nodes[i]] = 1;
        double arm[3] = { q[d] - o[0], q[d + 1] - o[1], q[d + 2] - o[2] };
        for (int c = 0; c < 3; c++)
            fm[c] += r[d + c];
        fm[3] += arm[1] * r[d + 2] - arm[2] * r[d + 1];
        fm[4] += arm[2] * r[d] - arm[0] * r[d + 2];
        fm[5] += arm[0] * r[d + 1] - arm[1] * r[d];
    }
    for (int e = 0; e < m->n_edges; e++) {
        int a = m->edge_nodes[2 * e], b = m->edge_nodes[2 * e + 1], tw = m->edge_twist[e];
        if (tw < 0 || !in[a] || !in[b])
            continue;
        double t[3], len = 0;
        for (int c = 0; c < 3; c++) {
            t[c] = q[m->node_dof[b] + c] - q[m->node_dof[a] + c];
            len += t[c] * t[c];
        }
        for (int c = 0; c < 3; c++)
            fm[3 + c] += r[tw] * t[c] / sqrt(len);
    }
    free(in);
}

void srd_probe_reaction_tangent(const srd_model *m, const srd_probe *p, const double *q, const double *r,
                                const double *dq, const double *dr, double dfm[6])
{
    unsigned char *in = srd_xcalloc((size_t)m->n_nodes + 1, 1);
    int o = m->node_dof[p->node];
    memset(dfm, 0, 6 * sizeof(double));
    for (int i = 0; i < p->n_nodes; i++) {
        int d = m->node_dof[p->nodes[i]];
        in[p->nodes[i]] = 1;
        double arm[3], darm[3], a[3], b[3];
        for (int c = 0; c < 3; c++) {
            arm[c] = q[d + c] - q[o + c], darm[c] = dq[d + c] - dq[o + c];
            dfm[c] += dr[d + c];
        }
        srd_cross3(darm, &r[d], a);
        srd_cross3(arm, &dr[d], b);
        for (int c = 0; c < 3; c++)
            dfm[3 + c] += a[c] + b[c];
    }
    for (int e = 0; e < m->n_edges; e++) {
        int a = m->node_dof[m->edge_nodes[2 * e]], b = m->node_dof[m->edge_nodes[2 * e + 1]], tw = m->edge_twist[e];
        if (tw < 0 || !in[m->edge_nodes[2 * e]] || !in[m->edge_nodes[2 * e + 1]])
            continue;
        double t[3], dt[3];
        for (int c = 0; c < 3; c++)
            t[c] = q[b + c] - q[a + c], dt[c] = dq[b + c] - dq[a + c];
        double len = sqrt(srd_dot3(t, t)), along = srd_dot3(t, dt) / (len * len);
        for (int c = 0; c < 3; c++) /* d(r t/|t|) = dr t/|t| + r (dt - t (t.dt)/|t|^2)/|t| */
            dfm[3 + c] += (dr[tw] * t[c] + r[tw] * (dt[c] - t[c] * along)) / len;
    }
    free(in);
}

/* The moment's part of the adjoint: darm x r . wm = darm . (r x wm), arm x dr . wm = dr . (wm x arm). */
static void moment_adjoint(const double *arm, const double *r, const double *wm, double *larm, double *lr)
{
    double a[3], b[3];
    srd_cross3(r, wm, a);
    srd_cross3(wm, arm, b);
    for (int c = 0; c < 3; c++)
        larm[c] = a[c], lr[c] += b[c];
}

void srd_probe_reaction_adjoint(const srd_model *m, const srd_probe *p, const double *q, const double *r,
                                const double w[6], double *lq, double *lr)
{
    unsigned char *in = srd_xcalloc((size_t)m->n_nodes + 1, 1);
    int o = m->node_dof[p->node];
    for (int i = 0; i < p->n_nodes; i++) {
        int d = m->node_dof[p->nodes[i]];
        in[p->nodes[i]] = 1;
        double arm[3], larm[3];
        for (int c = 0; c < 3; c++)
            arm[c] = q[d + c] - q[o + c], lr[d + c] += w[c];
        moment_adjoint(arm, &r[d], &w[3], larm, &lr[d]);
        for (int c = 0; c < 3; c++)
            lq[d + c] += larm[c], lq[o + c] -= larm[c];
    }
    for (int e = 0; e < m->n_edges; e++) {
        int a = m->node_dof[m->edge_nodes[2 * e]], b = m->node_dof[m->edge_nodes[2 * e + 1]], tw = m->edge_twist[e];
        if (tw < 0 || !in[m->edge_nodes[2 * e]] || !in[m->edge_nodes[2 * e + 1]])
            continue;
        double t[3];
        for (int c = 0; c < 3; c++)
            t[c] = q[b + c] - q[a + c];
        double len = sqrt(srd_dot3(t, t)), tw_m = srd_dot3(t, &w[3]) / len;
        lr[tw] += tw_m;
        for (int c = 0; c < 3; c++) { /* the transpose of r (dt - t (t.dt)/|t|^2)/|t| */
            double ldt = r[tw] * (w[3 + c] - t[c] * tw_m / len) / len;
            lq[b + c] += ldt, lq[a + c] -= ldt;
        }
    }
    free(in);
}

/* A reaction (about positions at the sim's state, as the reactions are) from the given
 * reactions or ones computed now. */
static int reaction_value(srd_sim *s, const srd_probe *p, const double *reactions, double out[6])
{
    double *own = NULL;
    if (!reactions) {
        own = srd_xcalloc((size_t)s->m->n_dofs + 1, sizeof(double));
        srd_sim_reactions(s, own);
        reactions = own;
    }
    region_reaction(s->m, p, s->q, reactions, out);
    free(own);
    return 6;
}

/* The total force the ground or an obstacle exerts on the model's nodes. */
static int contact_value(srd_sim *s, const srd_probe *p, double out[6])
{
    const srd_model *m = s->m;
    double *f = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    srd_sim_contact_forces(s, p->target, f);
    out[0] = out[1] = out[2] = 0;
    for (int i = 0; i < m->n_nodes; i++)
        for (int c = 0; c < 3; c++)
            out[c] += f[m->node_dof[i] + c];
    free(f);
    return 3;
}

int srd_probe_value_at(srd_sim *s, const srd_probe *p, const double *q, const double *reactions, double out[6])
{
    switch (p->kind) {
    case SRD_PROBE_BODY:
    case SRD_PROBE_JOINT: return srd_probe_values(s, p, out);
    case SRD_PROBE_REACTION: return reaction_value(s, p, reactions, out);
    case SRD_PROBE_CONTACT: return contact_value(s, p, out);
    default: break;
    }
    if (p->dof >= 0) {
        out[0] = q[p->dof];
        return 1;
    }
    memcpy(out, &q[s->m->node_dof[p->node]], 3 * sizeof(double));
    return 3;
}

int srd_probe_value(srd_sim *s, const srd_probe *p, double out[6])
{
    return srd_probe_value_at(s, p, s->q, NULL, out);
}

int srd_probe_width(const srd_probe *p)
{
    switch (p->kind) {
    case SRD_PROBE_REACTION: return 6;
    case SRD_PROBE_CONTACT: return 3;
    case SRD_PROBE_JOINT: return p->component == SRD_JOINT_MOTOR ? 1 : 3;
    case SRD_PROBE_BODY: return 3;
    default: return p->dof >= 0 ? 1 : 3;
    }
}
