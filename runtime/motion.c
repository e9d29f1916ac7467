/* motion.c — prescribed motion: the DOFs of `move` and `rotate` regions are constraints whose
 * values, velocities and accelerations come from their schedules (exact time derivatives from
 * the compiler), set by elimination; rotated rod edges keep their material frames turning with
 * the region. */
#include "sim.h"
#include "alloc.h"
#include "vec3.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* R(axis, angle) x, by Rodrigues' formula. */
static void rotate3(const double *a, double angle, const double *x, double *out)
{
    double c = cos(angle), s = sin(angle), ax[3], along = srd_dot3(a, x);
    srd_cross3(a, x, ax);
    for (int k = 0; k < 3; k++)
        out[k] = c * x[k] + s * ax[k] + (1 - c) * along * a[k];
}

static void edge_tangent(const srd_model *m, const double *q, int e, double *t)
{
    srd_sub3(&q[m->node_dof[m->edge_nodes[2 * e + 1]]], &q[m->node_dof[m->edge_nodes[2 * e]]], t);
    double n = sqrt(srd_dot3(t, t));
    for (int c = 0; c < 3; c++)
        t[c] /= n;
}

void srd_motion_init(srd_sim *s)
{
    const srd_model *m = s->m;
    s->prescribed_acc = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    s->fixed = srd_xcalloc((size_t)m->n_dofs + 1, 1);
    memcpy(s->fixed, m->dof_fixed, (size_t)m->n_dofs);
    s->released = srd_xcalloc((size_t)m->n_releases + 1, 1);
    s->slide_axis = srd_xcalloc(3 * (size_t)m->n_slides + 1, sizeof(double));
    memcpy(s->slide_axis, m->slide_axis, 3 * sizeof(double) * (size_t)m->n_slides);
    int n = 0;
    for (int k = 0; k < m->n_motions; k++)
        n += m->motions[k].n_edges;
    s->n_frames = n;
    s->frame_d1 = srd_xcalloc(3 * (size_t)n + 1, sizeof(double));
    s->frame_t = srd_xcalloc(3 * (size_t)n + 1, sizeof(double));
    s->frame_m0 = srd_xcalloc(3 * (size_t)n + 1, sizeof(double));
    if (!n)
        return;
    double *d1 = srd_initial_directors(m);
    int j = 0;
    for (int k = 0; k < m->n_motions; k++)
        for (int i = 0; i < m->motions[k].n_edges; i++, j++) {
            int e = m->motions[k].edges[i];
            edge_tangent(m, s->q, e, &s->frame_t[3 * j]);
            memcpy(&s->frame_d1[3 * j], &d1[3 * e], 3 * sizeof(double));
            memcpy(&s->frame_m0[3 * j], &d1[3 * e], 3 * sizeof(double)); /* twist 0 at the reference */
        }
    free(d1);
}

void srd_motion_free(srd_sim *s)
{
    free(s->prescribed_acc);
    free(s->fixed);
    free(s->released);
    free(s->frame_d1);
    free(s->frame_t);
    free(s->frame_m0);
    free(s->slide_axis);
}

/* A move: each node at its reference position plus the displacement, with its rates. */
static void impose_move(srd_sim *s, const srd_motion *mo, const double *u, double scale, double *q, double *v)
{
    const srd_model *m = s->m;
    for (int i = 0; i < mo->n_nodes; i++) {
        int d = m->node_dof[mo->nodes[i]];
        for (int c = 0; c < 3 && s->fixed[d]; c++) { /* a released node moves freely */
            q[d + c] = m->x0[3 * mo->nodes[i] + c] + scale * u[9 * i + c];
            if (v)
                v[d + c] = scale * u[9 * i + 3 + c];
            s->prescribed_acc[d + c] = scale * u[9 * i + 6 + c];
        }
    }
}

/* The twist that turns the edge's material frame rigidly with the region: the angle from the
 * reference director (transported from the last accepted state to the new tangent, as the
 * element kernels do) to the rotated initial material director, continued without 2 pi jumps.
 * Its rate is the spin of the rotation about the tangent. */
static void impose_frame(srd_sim *s, int j, int e, const srd_motion *mo, const double *w, double *q, double *v)
{
    const srd_model *m = s->m;
    double t[3], d1[3], m1[3], x[3];
    edge_tangent(m, q, e, t);
    srd_transport_director(&s->frame_d1[3 * j], &s->frame_t[3 * j], t, d1);
    rotate3(mo->axis, w[0], &s->frame_m0[3 * j], m1);
    srd_cross3(d1, m1, x);
    int dof = m->edge_twist[e];
    double angle = atan2(srd_dot3(x, t), srd_dot3(d1, m1)), prev = q[dof];
    q[dof] = prev + remainder(angle - prev, 2 * 3.14159265358979323846);
    double spin = srd_dot3(mo->axis, t);
    if (v)
        v[dof] = w[1] * spin;
    s->prescribed_acc[dof] = w[2] * spin;
}

/* A rotation by the angle about the axis through the centre: positions, the velocity
 * omega x r and the acceleration alpha x r + omega x (omega x r); then the frames. */
static void impose_rotation(srd_sim *s, const srd_motion *mo, int first_frame, const double *a, double scale, double *q,
                            double *v)
{
    const srd_model *m = s->m;
    double w[3] = { scale * a[0], scale * a[1], scale * a[2] };
    for (int i = 0; i < mo->n_nodes; i++) {
        int d = m->node_dof[mo->nodes[i]];
        double r0[3], r[3], ar[3], aar[3];
        if (!s->fixed[d])
            continue;
        srd_sub3(&m->x0[3 * mo->nodes[i]], mo->center, r0);
        rotate3(mo->axis, w[0], r0, r);
        srd_cross3(mo->axis, r, ar);
        srd_cross3(mo->axis, ar, aar);
        for (int c = 0; c < 3; c++) {
            q[d + c] = mo->center[c] + r[c];
            if (v)
                v[d + c] = w[1] * ar[c];
            s->prescribed_acc[d + c] = w[2] * ar[c] + w[1] * w[1] * aar[c];
        }
    }
    srd_slides_turn(s, mo, mo->axis, w[0]);
    srd_slides_place(s, q, v); /* before the frames: a sliding node's edge turns with its line */
    for (int i = 0; i < mo->n_edges; i++)
        if (s->fixed[m->edge_twist[mo->edges[i]]])
            impose_frame(s, first_frame + i, mo->edges[i], mo, w, q, v);
}

void srd_motion_impose(srd_sim *s, double t, double scale, double *q, double *v)
{
    const srd_model *m = s->m;
    int frame = 0;
    for (int k = 0; k < m->n_motions; k++) {
        const srd_motion *mo = &m->motions[k];
        const double *u = srd_schedules_motion(&s->schedules, k, s->params, t, s->step_dt);
        if (u && mo->kind == SRD_MOTION_MOVE)
            impose_move(s, mo, u, scale, q, v);
        else if (u)
            impose_rotation(s, mo, frame, u, scale, q, v);
        frame += mo->n_edges;
    }
    srd_slides_place(s, q, v); /* sliding nodes go with their clamps */
}

void srd_motion_commit(srd_sim *s, const double *q)
{
    const srd_model *m = s->m;
    int j = 0;
    for (int k = 0; k < m->n_motions; k++)
        for (int i = 0; i < m->motions[k].n_edges; i++, j++) {
            double t[3], d1[3];
            edge_tangent(m, q, m->motions[k].edges[i], t);
            srd_transport_director(&s->frame_d1[3 * j], &s->frame_t[3 * j], t, d1);
            memcpy(&s->frame_d1[3 * j], d1, sizeof d1);
            memcpy(&s->frame_t[3 * j], t, sizeof t);
        }
}
