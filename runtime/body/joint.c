/* joint.c — what probes of bodies and joints read: a body's momentum, angular velocity and
 * axes; a joint's force and torque on its body b (from the multipliers of its constraints) and
 * its motor's effort. */
#include "joint.h"
#include "alloc.h"
#include "vec3.h"
#include <stdlib.h>
#include <string.h>

static int body_dof(const srd_model *m, int b) { return m->node_dof[m->bodies[b].node]; }

/* The force and torque (about the joint's point now) the joint's constraints exert on body b. */
static void joint_wrench(srd_sim *s, const srd_joint *j, double *force, double *torque)
{
    const srd_model *m = s->m;
    double *g = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    for (int k = 0; k < j->n_parts; k++)
        srd_sim_instance_gradient(s, j->part[k].set, j->part[k].instance, j->part[k].instance + 1, g);
    int d = body_dof(m, j->body_b);
    double tb[3], tc[3], p[3], arm[3], rb[3], ref[3], moment[3];
    for (int c = 0; c < 3; c++) {
        force[c] = -g[d + c];
        tb[c] = -g[d + 3 + c]; /* at theta = 0 the rotation rows are the torque in body axes */
    }
    free(g);
    const double *R0 = m->bodies[j->body_b].axes, *R = &s->bodies.axes[9 * j->body_b];
    srd_sub3(j->at, &m->x0[3 * m->bodies[j->body_b].node], ref);
    for (int c = 0; c < 3; c++) /* the point in b's axes, then in the world now */
        rb[c] = srd_dot3(&R0[3 * c], ref);
    for (int i = 0; i < 3; i++) {
        tc[i] = R[i] * tb[0] + R[3 + i] * tb[1] + R[6 + i] * tb[2];
        p[i] = s->q[d + i] + R[i] * rb[0] + R[3 + i] * rb[1] + R[6 + i] * rb[2];
        arm[i] = s->q[d + i] - p[i];
    }
    srd_cross3(arm, force, moment);
    for (int c = 0; c < 3; c++)
        torque[c] = tc[c] + moment[c];
}

/* A motor's torque (force) on b: minus its multiplier; a torque (force) motor's own value. */
static double motor_effort(const srd_sim *s, const srd_joint *j)
{
    if (j->motor_part.set < 0)
        return 0;
    const srd_elemset *set = &s->m->sets[j->motor_part.set];
    if (set->n_lambda)
        return -s->q[set->lambda_dof[j->motor_part.instance]];
    int c = srd_elemset_column(set, "target");
    return s->set_data ? s->set_data[j->motor_part.set][j->motor_part.instance * set->n_data + c]
                       : set->data[j->motor_part.instance * set->n_data + c];
}

int srd_probe_values(srd_sim *s, const srd_probe *p, double *out)
{
    if (p->kind == SRD_PROBE_JOINT) {
        const srd_joint *j = &s->m->joints[p->target];
        if (p->component == SRD_JOINT_MOTOR) {
            out[0] = motor_effort(s, j);
            return 1;
        }
        double f[3], t[3];
        joint_wrench(s, j, f, t);
        memcpy(out, p->component == SRD_JOINT_FORCE ? f : t, 3 * sizeof(double));
        return 3;
    }
    int b = p->target;
    if (p->component == SRD_BODY_MOMENTUM)
        srd_body_world_momentum(s, b, out);
    else if (p->component == SRD_BODY_OMEGA) {
        double L[3], w[3];
        const double *R = &s->bodies.axes[9 * b];
        for (int c = 0; c < 3; c++)
            w[c] = s->bodies.momentum[3 * b + c] / s->m->bodies[b].inertia[c];
        for (int i = 0; i < 3; i++)
            L[i] = R[i] * w[0] + R[3 + i] * w[1] + R[6 + i] * w[2];
        memcpy(out, L, sizeof L);
    } else
        srd_body_axis(s, b, p->component - SRD_BODY_AXIS, out);
    return 3;
}
