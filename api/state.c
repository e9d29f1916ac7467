/* state.c — the C API's view of a simulation's state: the DOF vectors, the node views kept in
 * step with them, the DOF maps, and rigid bodies' poses. */
#include <math.h>
#include <string.h>
#include "body.h"
#include "instance.h"

/* ---- node views ---- */

void api_views_from_state(srd_instance *inst)
{
    const srd_model *m = inst->m;
    for (int i = 0; i < m->n_nodes; i++) {
        memcpy(&inst->x[3 * i], &inst->s.q[m->node_dof[i]], 3 * sizeof(double));
        memcpy(&inst->xdot[3 * i], &inst->s.v[m->node_dof[i]], 3 * sizeof(double));
    }
    size_t bytes = 3 * sizeof(double) * (size_t)m->n_nodes;
    memcpy(inst->x_synced, inst->x, bytes);
    memcpy(inst->xdot_synced, inst->xdot, bytes);
}

/* A node value the caller changed since the views were last filled (bit for bit: NaN too) goes
 * into the DOF vector; the others leave it as it is, which the caller may have written too. */
static void view_to_vector(const srd_model *m, const double *view, const double *synced, double *vector)
{
    for (int i = 0; i < m->n_nodes; i++)
        if (memcmp(&view[3 * i], &synced[3 * i], 3 * sizeof(double)))
            memcpy(&vector[m->node_dof[i]], &view[3 * i], 3 * sizeof(double));
}

void api_views_to_state(srd_instance *inst)
{
    view_to_vector(inst->m, inst->x, inst->x_synced, inst->s.q);
    view_to_vector(inst->m, inst->xdot, inst->xdot_synced, inst->s.v);
    api_views_from_state(inst);
}

/* ---- vectors and maps ---- */

int srd_dof_count(const srd_instance *inst) { return inst ? inst->m->n_dofs : 0; }
int srd_node_count(const srd_instance *inst) { return inst ? inst->m->n_nodes : 0; }
double *srd_q(srd_instance *inst) { return inst ? inst->s.q : NULL; }
double *srd_v(srd_instance *inst) { return inst ? inst->s.v : NULL; }
double *srd_x(srd_instance *inst) { return inst ? inst->x : NULL; }
double *srd_xdot(srd_instance *inst) { return inst ? inst->xdot : NULL; }
const int *srd_dof_kind(const srd_instance *inst) { return inst ? inst->m->dof_kind : NULL; }
const unsigned char *srd_dof_fixed(const srd_instance *inst) { return inst ? inst->m->dof_fixed : NULL; }
const int *srd_node_dof(const srd_instance *inst) { return inst ? inst->m->node_dof : NULL; }
const int *srd_edge_twist(const srd_instance *inst) { return inst ? inst->m->edge_twist : NULL; }

const int *srd_dof_owner(const srd_instance *inst) { return inst ? inst->m->dof_owner : NULL; }

const int *srd_edges(const srd_instance *inst, int *n_edges)
{
    if (n_edges)
        *n_edges = inst ? inst->m->n_edges : 0;
    return inst ? inst->m->edge_nodes : NULL;
}

const int *srd_triangles(const srd_instance *inst, int *n_triangles)
{
    if (n_triangles)
        *n_triangles = inst ? inst->m->n_tris : 0;
    return inst ? inst->m->tri_nodes : NULL;
}

/* ---- rigid bodies ---- */

int srd_body_count(const srd_instance *inst) { return inst ? inst->m->n_bodies : 0; }

const char *srd_body_name(const srd_instance *inst, int k)
{
    if (!inst || k < 0 || k >= inst->m->n_bodies)
        return NULL;
    return inst->m->objects[inst->m->bodies[k].object].name;
}

static srd_status check_body(srd_instance *inst, int k)
{
    API_CHECK(inst);
    if (k < 0 || k >= inst->m->n_bodies)
        return api_fail(inst, SRD_ERR_ARGUMENT, "there is no body %d (the model has %d)", k, inst->m->n_bodies);
    return SRD_OK;
}

/* R = A A_ref^T, A's columns the principal axes now (stored column by column). */
static void rotation_of(const double *axes, const double *ref, double *R)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            R[3 * i + j] = 0;
            for (int c = 0; c < 3; c++)
                R[3 * i + j] += axes[3 * c + i] * ref[3 * c + j];
        }
}

srd_status srd_get_body(const srd_instance *inst, int k, double position[3], double rotation[9], double velocity[3],
                        double omega[3])
{
    srd_status st = check_body((srd_instance *)inst, k);
    if (st != SRD_OK)
        return st;
    const srd_sim *s = &inst->s;
    const srd_body *b = &inst->m->bodies[k];
    int d = inst->m->node_dof[b->node];
    const double *axes = &s->bodies.axes[9 * k];
    if (position)
        memcpy(position, &s->q[d], 3 * sizeof(double));
    if (velocity)
        memcpy(velocity, &s->v[d], 3 * sizeof(double));
    if (rotation)
        rotation_of(axes, b->axes, rotation);
    if (omega)
        for (int i = 0; i < 3; i++) {
            omega[i] = 0;
            for (int c = 0; c < 3; c++)
                omega[i] += axes[3 * c + i] * s->bodies.momentum[3 * k + c] / b->inertia[c];
        }
    return SRD_OK;
}

static bool orthonormal(const double *R)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double dot = 0;
            for (int c = 0; c < 3; c++)
                dot += R[3 * i + c] * R[3 * j + c];
            if (!(fabs(dot - (i == j)) <= 1e-9))
                return false;
        }
    double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
                 R[2] * (R[3] * R[7] - R[4] * R[6]);
    return det > 0;
}

/* The principal axes turned by R from the reference: A = R A_ref. */
static void axes_of(const double *R, const double *ref, double *axes)
{
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 3; i++)
            axes[3 * c + i] = R[3 * i] * ref[3 * c] + R[3 * i + 1] * ref[3 * c + 1] + R[3 * i + 2] * ref[3 * c + 2];
}

srd_status srd_set_body(srd_instance *inst, int k, const double position[3], const double rotation[9],
                        const double velocity[3], const double omega[3])
{
    srd_status st = check_body(inst, k);
    if (st != SRD_OK)
        return st;
    if (rotation && !orthonormal(rotation))
        return api_fail(inst, SRD_ERR_ARGUMENT, "the rotation of body `%s` is not orthonormal with determinant 1 "
                        "(to 1e-9)", srd_body_name(inst, k));
    srd_sim *s = &inst->s;
    const srd_body *b = &inst->m->bodies[k];
    int d = inst->m->node_dof[b->node];
    api_views_to_state(inst);
    if (position)
        memcpy(&s->q[d], position, 3 * sizeof(double));
    if (velocity)
        memcpy(&s->v[d], velocity, 3 * sizeof(double));
    double axes[9];
    if (rotation)
        axes_of(rotation, b->axes, axes);
    srd_body_set_turn(s, k, rotation ? axes : NULL, omega);
    api_views_from_state(inst);
    return SRD_OK;
}
