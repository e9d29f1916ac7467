/* contact.c — gaps between nodes and the contact surfaces (ground plane, uneven ground, sphere
 * obstacles), summarised over a run: active contacts and the deepest penetration. */
#include "contact.h"
#include "alloc.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "schedule.h"
#include "vec3.h"

void srd_contact_stats_init(srd_contact_stats *c, const srd_model *m, srd_kernel_fn height)
{
    memset(c, 0, sizeof *c);
    c->posed = srd_xcalloc((size_t)m->n_obstacles + 1, sizeof *c->posed);
    if (m->n_obstacles)
        memcpy(c->posed, m->obstacles, sizeof *c->posed * (size_t)m->n_obstacles);
    for (int k = 0; k < m->n_obstacles; k++)
        c->has_contact |= m->obstacles[k].stiffness > 0;
    c->has_contact |= m->has_ground;
    if (!height || !m->has_ground || m->ground_height_expr < 0)
        return;
    c->height = height;
    int n = m->n_nodes;
    c->res = srd_xcalloc((size_t)n + 1, sizeof(int32_t));
    c->data = srd_xcalloc((size_t)n * SRD_SCHEDULE_N_DATA + 1, sizeof(double));
    c->out = srd_xcalloc((size_t)n + 1, sizeof(double));
    for (int i = 0; i < n; i++)
        c->res[i] = i;
    c->batch.n = n;
    c->batch.n_dofs = 1;
    c->batch.n_data = SRD_SCHEDULE_N_DATA;
    c->batch.dofs = c->res;
    c->batch.res = c->res;
    c->batch.data = c->data;
}

/* v turned by angle a about the unit axis k (Rodrigues), into out. */
static void turn(const double *v, const double *k, double a, double *out)
{
    double kxv[3], kv = srd_dot3(k, v), c = cos(a), s = sin(a);
    srd_cross3(k, v, kxv);
    for (int i = 0; i < 3; i++)
        out[i] = v[i] * c + kxv[i] * s + k[i] * kv * (1 - c);
}

/* Signed distance from x to an obstacle's surface, negative inside (std.contact's gaps). */
static double obstacle_gap(const srd_obstacle *ob, const double *x)
{
    double r[3], u[3], len = sqrt(srd_dot3(ob->axis, ob->axis));
    for (int k = 0; k < 3; k++) {
        r[k] = x[k] - ob->center[k];
        u[k] = len > 0 ? ob->axis[k] / len : 0;
    }
    if (!strcmp(ob->shape, "sphere"))
        return sqrt(srd_dot3(r, r)) - ob->radius;
    if (!strcmp(ob->shape, "plane"))
        return srd_dot3(r, u);
    if (!strcmp(ob->shape, "box") && ob->angle != 0) {
        double q[3];
        turn(r, u, -ob->angle, q); /* the node in the turned box's axes */
        memcpy(r, q, sizeof q);
    }
    double q[3], out2 = 0, inside;
    if (!strcmp(ob->shape, "box")) {
        for (int k = 0; k < 3; k++)
            q[k] = fabs(r[k]) - ob->size[k] / 2;
        inside = fmax(q[0], fmax(q[1], q[2]));
        for (int k = 0; k < 3; k++)
            out2 += q[k] > 0 ? q[k] * q[k] : 0;
    } else {
        double along = srd_dot3(r, u), w2 = srd_dot3(r, r) - along * along;
        q[0] = sqrt(fmax(w2, 0)) - ob->radius;
        q[1] = ob->length > 0 ? fabs(along) - ob->length / 2 : -INFINITY;
        inside = fmax(q[0], q[1]);
        for (int k = 0; k < 2; k++)
            out2 += q[k] > 0 ? q[k] * q[k] : 0;
    }
    return inside > 0 ? sqrt(out2) : inside;
}

/* Gap of node i to surface (ground, then each obstacle), with that surface's contact distance. */
static void record(srd_contact_stats *c, double gap, double delta, int *active)
{
    if (gap < delta)
        (*active)++;
    if (-gap > c->deepest)
        c->deepest = -gap;
}

void srd_contact_stats_sample(srd_contact_stats *c, const srd_model *m, const double *q, const double *params,
                              double t)
{
    if (!c->has_contact)
        return;
    double deepest = c->deepest;
    int active = 0;
    if (c->height) {
        for (int i = 0; i < m->n_nodes; i++)
            for (int k = 0; k < 3; k++)
                c->data[i * SRD_SCHEDULE_N_DATA + SRD_SCHEDULE_X + k] = q[m->node_dof[i] + k];
        memset(c->out, 0, sizeof(double) * (size_t)m->n_nodes);
        srd_eval_ctx ctx = { NULL, NULL, NULL, params, t, 0, NULL, c->out, NULL };
        c->height(&ctx, &c->batch);
    }
    for (int i = 0; i < m->n_nodes; i++) {
        const double *x = &q[m->node_dof[i]];
        if (m->has_ground && c->height) {
            record(c, x[2] - c->out[i], m->ground_delta, &active);
        } else if (m->has_ground && m->ground_height_expr < 0) {
            double gap = 0;
            for (int k = 0; k < 3; k++)
                gap += (x[k] - m->ground_point[k]) * m->ground_normal[k];
            record(c, gap, m->ground_delta, &active);
        }
        for (int o = 0; o < m->n_obstacles; o++) {
            const srd_obstacle *ob = &c->posed[o];
            if (ob->stiffness > 0)
                record(c, obstacle_gap(ob, x), ob->delta, &active);
        }
    }
    if (c->deepest > deepest)
        c->deepest_t = t;
    c->active_now = active;
    if (active > c->active_max) {
        c->active_max = active;
        c->active_max_t = t;
    }
    c->samples++;
    c->active_sum += active;
}

void srd_contact_stats_free(srd_contact_stats *c)
{
    free(c->res);
    free(c->data);
    free(c->out);
    free(c->posed);
    memset(c, 0, sizeof *c);
}
