/* dynamic_bodies.c — rigid bodies in the sensitivities of a simulation: what each record keeps of
 * the bodies (their axes, momenta and Newmark torques at its start, the turn it solved for), and
 * the bodies' share of a linearised step, forward and transposed (runtime/sens/body_tangent.h
 * holds the formulas). A tangent (Tan.B) carries per body the turn of its axes (phi), its
 * momentum's and its torque's; the elements' frame state follows from phi at each step's start. */
#include "sens/dynamic_run.h"
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "sens/body_tangent.h"
#include "vec3.h"

/* The bodies as dyn_bodies_save keeps them: every body's axes (9 each, as srd_bodies.axes), then
 * their momenta (3 each), then their torques (3 each). */
static const double *saved_momentum(const double *saved, int n, int k) { return &saved[9 * n + 3 * k]; }
static const double *saved_torque(const double *saved, int n, int k) { return &saved[12 * n + 3 * k]; }

static int rot_dof(const srd_model *m, int k) { return m->node_dof[m->bodies[k].node] + 3; }

/* Whether body k turns in the step (its rotation DOFs are free). */
static bool turns(const srd_sim *s, int k) { return s->solver.sys.free_index[rot_dof(s->m, k)] >= 0; }

double *dyn_bodies_save(const srd_sim *s)
{
    int n = s->bodies.n;
    if (!n)
        return NULL;
    double *c = srd_xcalloc(15 * (size_t)n, sizeof(double));
    memcpy(c, s->bodies.axes, 9 * sizeof(double) * (size_t)n);
    memcpy(&c[9 * n], s->bodies.momentum, 3 * sizeof(double) * (size_t)n);
    memcpy(&c[12 * n], s->bodies.torque, 3 * sizeof(double) * (size_t)n);
    return c;
}

void dyn_bodies_put(srd_sim *s, const double *saved)
{
    size_t n = (size_t)s->bodies.n;
    if (!saved)
        return;
    memcpy(s->bodies.axes, saved, 9 * sizeof(double) * n);
    memcpy(s->bodies.momentum, &saved[9 * n], 3 * sizeof(double) * n);
    memcpy(s->bodies.torque, &saved[12 * n], 3 * sizeof(double) * n);
}

void dyn_bodies_turn(const srd_sim *s, double *q1)
{
    for (int k = 0; k < s->bodies.n; k++)
        for (int c = 0; c < 3; c++)
            q1[rot_dof(s->m, k) + c] = -s->q0[rot_dof(s->m, k) + c]; /* srd_bodies_finish left q0 = -theta */
}

void dyn_bodies_frames(const DynamicRun *r, const Record *x, const Tan *t)
{
    const srd_sim *s = &r->b->s;
    for (int k = 0; s->bodies.n && k < r->n_sets; k++) /* x->bodies0 starts with the axes */
        srd_body_frames_tangent(s->m, k, &s->kernels[k].info, x->bodies0, t->B, t->S[k]);
}

void dyn_bodies_frames_adjoint(const DynamicRun *r, const Record *x, Tan *t)
{
    const srd_sim *s = &r->b->s;
    for (int k = 0; s->bodies.n && k < r->n_sets; k++)
        srd_body_frames_adjoint(s->m, k, &s->kernels[k].info, x->bodies0, t->S[k], t->B);
}

/* Body k's principal moments' tangent along track t (zero without one). */
static void moments_tangent(const Track *t, int k, double *dJ)
{
    for (int c = 0; c < 3; c++)
        dJ[c] = t && t->dinertia ? t->dinertia[3 * k + c] : 0;
}

void dyn_bodies_rows(const DynamicRun *r, const Record *x, const Tan *in, const Track *t, double *g)
{
    const srd_sim *s = &r->b->s;
    for (int k = 0; k < s->bodies.n; k++) {
        if (!turns(s, k))
            continue;
        int d = rot_dof(s->m, k);
        double dJ[3], rows[3];
        moments_tangent(t, k, dJ);
        srd_body_rows_tangent(dJ, &in->B[SRD_BODY_TAN * k], &x->q1[d], s->stiffness_b, x->dt, (int)r->method, rows);
        for (int c = 0; c < 3; c++)
            g[s->solver.sys.free_index[d + c]] += rows[c];
    }
}

void dyn_bodies_rows_adjoint(const DynamicRun *r, const Record *x, const double *lg, Tan *start, double *lJ)
{
    const srd_sim *s = &r->b->s;
    for (int k = 0; k < s->bodies.n; k++) {
        if (!turns(s, k))
            continue;
        int d = rot_dof(s->m, k);
        double l[3];
        for (int c = 0; c < 3; c++)
            l[c] = lg[s->solver.sys.free_index[d + c]];
        srd_body_rows_adjoint(l, &x->q1[d], s->stiffness_b, x->dt, (int)r->method, &start->B[SRD_BODY_TAN * k],
                              &lJ[3 * k]);
    }
}

/* Body k's step over record x, as srd_bodies_finish took it. */
static srd_body_step body_step(const DynamicRun *r, const Record *x, int k)
{
    const srd_model *m = r->b->m;
    return (srd_body_step){ m->bodies[k].inertia, saved_momentum(x->bodies0, m->n_bodies, k),
                            saved_torque(x->bodies0, m->n_bodies, k),
                            &x->q1[rot_dof(m, k)], x->dt, (int)r->method };
}

void dyn_bodies_finish(const DynamicRun *r, const Record *x, const Track *t, const Tan *in, Tan *out)
{
    const srd_sim *s = &r->b->s;
    for (int k = 0; k < s->bodies.n; k++) {
        double *B = &out->B[SRD_BODY_TAN * k];
        int d = rot_dof(s->m, k);
        if (!turns(s, k)) { /* a held body keeps its axes and momentum */
            memcpy(B, &in->B[SRD_BODY_TAN * k], SRD_BODY_TAN * sizeof(double));
            continue;
        }
        double dJ[3];
        const double *J = s->m->bodies[k].inertia;
        moments_tangent(t, k, dJ);
        srd_body_step st = body_step(r, x, k);
        srd_body_finish_tangent(&st, &in->B[SRD_BODY_TAN * k], &out->q[d], dJ, B);
        for (int c = 0; c < 3; c++) /* the velocity is J^-1 Pi */
            out->v[d + c] = (B[3 + c] - x->v1[d + c] * dJ[c]) / J[c];
    }
}

void dyn_bodies_finish_adjoint(const DynamicRun *r, const Record *x, Tan *end, double *lq1, Tan *start, double *lJ)
{
    const srd_sim *s = &r->b->s;
    for (int k = 0; k < s->bodies.n; k++) {
        double *lB = &end->B[SRD_BODY_TAN * k];
        int d = rot_dof(s->m, k);
        if (!turns(s, k)) {
            for (int i = 0; i < SRD_BODY_TAN; i++)
                start->B[SRD_BODY_TAN * k + i] += lB[i];
            continue;
        }
        const double *J = s->m->bodies[k].inertia;
        for (int c = 0; c < 3; c++) {
            lB[3 + c] += end->v[d + c] / J[c];
            lJ[3 * k + c] -= x->v1[d + c] * end->v[d + c] / J[c];
            end->v[d + c] = 0; /* the scheme's velocity there was overwritten */
        }
        srd_body_step st = body_step(r, x, k);
        srd_body_finish_adjoint(&st, lB, &start->B[SRD_BODY_TAN * k], &lq1[d], &lJ[3 * k]);
    }
}

void dyn_bodies_settle(const srd_sim *s, double *q)
{
    for (int k = 0; k < s->bodies.n; k++)
        for (int c = 0; c < 3; c++)
            q[rot_dof(s->m, k) + c] = 0;
}

/* Body k's angular velocity at the start in its axes: R0^T omega0 (no param moves it; its
 * momentum J w moves with the moments). */
static void start_spin(const srd_model *m, int k, double *w)
{
    const srd_body *b = &m->bodies[k];
    for (int c = 0; c < 3; c++)
        w[c] = b->axes[3 * c] * b->omega0[0] + b->axes[3 * c + 1] * b->omega0[1] + b->axes[3 * c + 2] * b->omega0[2];
}

void dyn_bodies_start(const DynamicRun *r, const Track *t, Tan *in)
{
    const srd_model *m = r->b->m;
    for (int k = 0; k < m->n_bodies; k++) {
        double w[3], dJ[3], *B = &in->B[SRD_BODY_TAN * k];
        start_spin(m, k, w);
        moments_tangent(t, k, dJ);
        memset(B, 0, SRD_BODY_TAN * sizeof(double)); /* a param that turns a body's axes moves the geometry */
        for (int c = 0; c < 3; c++)
            B[3 + c] = dJ[c] * w[c];
    }
}

double dyn_bodies_start_pull(const DynamicRun *r, const Track *t, const Tan *adj)
{
    const srd_model *m = r->b->m;
    double sum = 0;
    for (int k = 0; k < m->n_bodies; k++) {
        double w[3], dJ[3];
        start_spin(m, k, w);
        moments_tangent(t, k, dJ);
        for (int c = 0; c < 3; c++)
            sum += adj->B[SRD_BODY_TAN * k + 3 + c] * dJ[c] * w[c];
    }
    return sum;
}

void dyn_bodies_equilibrium_start(const DynamicRun *r, const double *dq, Tan *in)
{
    const srd_model *m = r->b->m;
    for (int k = 0; k < m->n_bodies; k++) {
        memset(&in->B[SRD_BODY_TAN * k], 0, SRD_BODY_TAN * sizeof(double)); /* at rest, no torque yet */
        memcpy(&in->B[SRD_BODY_TAN * k], &dq[rot_dof(m, k)], 3 * sizeof(double));
    }
}

double dyn_bodies_equilibrium_pull(const DynamicRun *r, const double *dq, const Tan *adj)
{
    const srd_model *m = r->b->m;
    double sum = 0;
    for (int k = 0; k < m->n_bodies; k++)
        for (int c = 0; c < 3; c++)
            sum += adj->B[SRD_BODY_TAN * k + c] * dq[rot_dof(m, k) + c];
    return sum;
}

/* ---- a body's and a motor's probes at the run's end ---- */

bool dyn_end_probe_derived(const srd_probe *pr)
{
    return pr->kind == SRD_PROBE_BODY || (pr->kind == SRD_PROBE_JOINT && pr->component == SRD_JOINT_MOTOR);
}

/* Body probe pr's change (world) at the run's end along the body's tangent B (its axes' turn phi
 * and momentum's) and its moments' dJ: with R the axes, an axis R e turns by R (phi x e), the
 * momentum R Pi changes by R (phi x Pi + dPi), the angular velocity R w (w = J^-1 Pi) by
 * R (phi x w + dw), dw = (dPi - w dJ) / J. */
static void body_probe_tangent(const DynamicRun *r, const srd_probe *pr, const double *B, const double *dJ, double *out)
{
    int b = pr->target;
    const double *R = &r->bodiesT[9 * b], *Pi = saved_momentum(r->bodiesT, r->b->m->n_bodies, b);
    const double *J = r->b->m->bodies[b].inertia;
    double v[3] = { 0, 0, 0 }, dv[3] = { 0, 0, 0 }, turn[3];
    for (int c = 0; c < 3; c++) {
        if (pr->component == SRD_BODY_MOMENTUM)
            v[c] = Pi[c], dv[c] = B[3 + c];
        else if (pr->component == SRD_BODY_OMEGA)
            v[c] = Pi[c] / J[c], dv[c] = (B[3 + c] - Pi[c] / J[c] * dJ[c]) / J[c];
        else
            v[c] = c == pr->component - SRD_BODY_AXIS;
    }
    srd_cross3(B, v, turn);
    for (int i = 0; i < 3; i++)
        out[i] = R[i] * (turn[0] + dv[0]) + R[3 + i] * (turn[1] + dv[1]) + R[6 + i] * (turn[2] + dv[2]);
}

/* A motor's effort (joint.c): minus its multiplier (the DOF returned), or (a torque or force
 * motor) its target, the data column *column of its set's instance (-1 both: no motor). */
static int motor_dof(const srd_model *m, const srd_probe *pr, int *column)
{
    const srd_part *part = &m->joints[pr->target].motor_part;
    *column = -1;
    if (part->set < 0)
        return -1;
    const srd_elemset *set = &m->sets[part->set];
    if (set->n_lambda)
        return set->lambda_dof[part->instance];
    *column = part->instance * set->n_data + srd_elemset_column(set, "target");
    return -1;
}

void dyn_end_probe_tangent(DynamicRun *r, int k, const srd_probe *pr, const Tan *end, double *out)
{
    Track *t = &r->tracks[k];
    if (pr->kind == SRD_PROBE_BODY) {
        double dJ[3];
        moments_tangent(t, pr->target, dJ);
        body_probe_tangent(r, pr, &end->B[SRD_BODY_TAN * pr->target], dJ, out);
        return;
    }
    int column, d = motor_dof(r->b->m, pr, &column);
    out[0] = d >= 0 ? -end->q[d] : 0;
    if (column >= 0) { /* the target as the schedules write it at the end */
        const Record *x = &r->records[r->n_records - 1];
        dyn_track_at(r, t, x->t, x->dt);
        out[0] = t->dc[r->b->m->joints[pr->target].motor_part.set][column];
    }
}

void dyn_end_probe_seed(DynamicRun *r, const srd_probe *pr, const double *w, const int *status, double *lq,
                        double *lB, double *direct)
{
    int column, d = pr->kind == SRD_PROBE_BODY ? -1 : motor_dof(r->b->m, pr, &column);
    for (int k = 0; k < r->n_params && d < 0; k++) /* what a param moves directly: the moments, a motor's target */
        if (status[k] == STATIC_DERIVED) {
            double out[3] = { 0, 0, 0 }, zero[SRD_BODY_TAN] = { 0 };
            Tan none = { NULL, NULL, NULL, NULL, zero };
            dyn_end_probe_tangent(r, k, pr, &none, out);
            direct[k] = w[0] * out[0] + (pr->kind == SRD_PROBE_BODY ? w[1] * out[1] + w[2] * out[2] : 0);
        }
    if (d >= 0)
        lq[d] -= w[0];
    if (pr->kind != SRD_PROBE_BODY)
        return;
    for (int u = 0; u < 6; u++) { /* linear in the turn and the momentum: its transpose by columns */
        double B[SRD_BODY_TAN] = { 0 }, zero[3] = { 0, 0, 0 }, out[3];
        B[u] = 1;
        body_probe_tangent(r, pr, B, zero, out);
        lB[SRD_BODY_TAN * pr->target + u] += w[0] * out[0] + w[1] * out[1] + w[2] * out[2];
    }
}

/* ---- a joint's force and torque at a record's end (joint.c's joint_wrench) ---- */

/* The joint's body b as the record's end leaves it: its DOFs, its turn theta in the step (the
 * linearised chart: axes R0 at the step's start), its axes R1 = R0 cay(theta) (row-major), and the
 * joint's point in its axes (rb, from the reference). */
typedef struct JointEnd {
    int    d;
    double theta[3], R1[9], rb[3];
} JointEnd;

static JointEnd joint_end(const DynamicRun *r, const Record *x, const srd_probe *pr)
{
    const srd_model *m = r->b->m;
    const srd_joint *j = &m->joints[pr->target];
    const srd_body *body = &m->bodies[j->body_b];
    JointEnd e;
    e.d = m->node_dof[body->node];
    double R0[9], C[9], ref[3];
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 3; c++)
            R0[3 * i + c] = x->bodies0[9 * j->body_b + 3 * c + i];
    memcpy(e.theta, &x->q1[e.d + 3], sizeof e.theta);
    srd_cayley(e.theta, C);
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 3; c++)
            e.R1[3 * i + c] = R0[3 * i] * C[c] + R0[3 * i + 1] * C[3 + c] + R0[3 * i + 2] * C[6 + c];
    srd_sub3(j->at, &m->x0[3 * body->node], ref);
    for (int c = 0; c < 3; c++)
        e.rb[c] = srd_dot3(&body->axes[3 * c], ref);
    return e;
}

static void rotate(const double *R, const double *v, double *out, bool transposed)
{
    for (int i = 0; i < 3; i++)
        out[i] = transposed ? R[i] * v[0] + R[3 + i] * v[1] + R[6 + i] * v[2]
                            : R[3 * i] * v[0] + R[3 * i + 1] * v[1] + R[3 * i + 2] * v[2];
}

/* B(theta)^-T x (transposed: B^-1 x), B^-T = I - theta^/2 + theta theta^T / 4: the torque in the
 * body's axes now from the rotation rows in the step's chart (B^T times it). */
static void unturned(const double *th, const double *x, double *out, bool transposed)
{
    double tx[3], along = srd_dot3(th, x) / 4;
    srd_cross3(th, x, tx);
    for (int c = 0; c < 3; c++)
        out[c] = x[c] + (transposed ? 0.5 : -0.5) * tx[c] + along * th[c];
}

/* The torque on the body in its axes now, tau = -B^-T g_rot (g_rot: its rotation rows), and its
 * change along dg and the turn's dtheta: -(B^-T dg_rot + d(B^-T)[dtheta] g_rot), where
 * d(B^-T)[dth] x = -dth x x / 2 + (dth (theta . x) + theta (dth . x)) / 4. */
static void body_torque(const JointEnd *e, const double *g, const double *dg, const double *dth, double *tau,
                        double *dtau)
{
    const double *gr = &g[e->d + 3];
    double cross[3], along = srd_dot3(e->theta, gr), across = srd_dot3(dth, gr);
    unturned(e->theta, gr, tau, false);
    unturned(e->theta, &dg[e->d + 3], dtau, false);
    srd_cross3(dth, gr, cross);
    for (int c = 0; c < 3; c++) {
        dtau[c] = -(dtau[c] - 0.5 * cross[c] + 0.25 * (dth[c] * along + e->theta[c] * across));
        tau[c] = -tau[c];
    }
}

/* Its transpose: for u (the torque's adjoint in the body's axes), the rows' weights into lam and
 * the turn's adjoint into lth. */
static void body_torque_adjoint(const JointEnd *e, const double *g, const double *u, double *lam, double *lth)
{
    const double *gr = &g[e->d + 3];
    double rows[3], cross[3], ut = srd_dot3(u, e->theta), gt = srd_dot3(e->theta, gr);
    unturned(e->theta, u, rows, true); /* B^-1 u */
    srd_cross3(gr, u, cross);
    for (int c = 0; c < 3; c++) {
        lam[e->d + 3 + c] -= rows[c];
        lth[c] -= -0.5 * cross[c] + 0.25 * (u[c] * gt + gr[c] * ut);
    }
}

/* The joint's torque about its point: T = R1 tau + arm x f, arm = -R1 rb (from the point to the
 * centre); f = -g_trans. Along the axes' turn phi (R1 hat(phi)), dtau, and df:
 * dT = R1 (phi x tau + dtau) + darm x f + arm x df, darm = -R1 (phi x rb). */
static void joint_torque_tangent(const JointEnd *e, const double *phi, const double *tau, const double *dtau,
                                 const double *f, const double *df, double *out)
{
    double turn[3], arm[3], darm[3], v[3], w[3];
    srd_cross3(phi, tau, turn);
    for (int c = 0; c < 3; c++)
        turn[c] += dtau[c];
    rotate(e->R1, turn, out, false);
    rotate(e->R1, e->rb, arm, false);
    srd_cross3(phi, e->rb, v);
    rotate(e->R1, v, darm, false);
    for (int c = 0; c < 3; c++)
        arm[c] = -arm[c], darm[c] = -darm[c];
    srd_cross3(darm, f, v);
    srd_cross3(arm, df, w);
    for (int c = 0; c < 3; c++)
        out[c] += v[c] + w[c];
}

void dyn_joint_wrench_tangent(const DynamicRun *r, const Record *x, const srd_probe *pr, const double *g,
                              const double *dg, const Tan *end, double *out)
{
    JointEnd e = joint_end(r, x, pr);
    double f[3], df[3], tau[3], dtau[3];
    for (int c = 0; c < 3; c++)
        f[c] = -g[e.d + c], df[c] = -dg[e.d + c];
    if (pr->component == SRD_JOINT_FORCE) {
        memcpy(out, df, sizeof df);
        return;
    }
    body_torque(&e, g, dg, &end->q[e.d + 3], tau, dtau);
    joint_torque_tangent(&e, &end->B[SRD_BODY_TAN * r->b->m->joints[pr->target].body_b], tau, dtau, f, df, out);
}

/* The transpose of joint_torque_tangent for w: w . R1 (phi x tau) = phi . (tau x R1^T w) and
 * w . (darm x f) = -phi . (rb x R1^T (f x w)) into lphi; R1^T w, the adjoint of dtau, into u;
 * w . (arm x df) = df . (w x arm) into ldf. */
static void joint_torque_adjoint(const JointEnd *e, const double *tau, const double *f, const double *w,
                                 double *lphi, double *u, double *ldf)
{
    double arm[3], fw[3], a[3], tu[3], ra[3];
    rotate(e->R1, w, u, true);
    rotate(e->R1, e->rb, arm, false);
    for (int c = 0; c < 3; c++)
        arm[c] = -arm[c];
    srd_cross3(w, arm, ldf);
    srd_cross3(f, w, fw);
    rotate(e->R1, fw, a, true);
    srd_cross3(tau, u, tu);
    srd_cross3(e->rb, a, ra);
    for (int c = 0; c < 3; c++)
        lphi[c] += tu[c] - ra[c];
}

void dyn_joint_wrench_seed(const DynamicRun *r, const Record *x, const srd_probe *pr, const double *g,
                           const double *w, double *lam, double *lq, double *lB)
{
    JointEnd e = joint_end(r, x, pr);
    double f[3], ldf[3], u[3], tau[3], dtau[3], zero[3] = { 0, 0, 0 };
    for (int c = 0; c < 3; c++)
        f[c] = -g[e.d + c], ldf[c] = w[c];
    if (pr->component != SRD_JOINT_FORCE) {
        body_torque(&e, g, g, zero, tau, dtau);
        joint_torque_adjoint(&e, tau, f, w, &lB[SRD_BODY_TAN * r->b->m->joints[pr->target].body_b], u, ldf);
        body_torque_adjoint(&e, g, u, lam, &lq[e.d + 3]);
    }
    for (int c = 0; c < 3; c++) /* f = -g_trans */
        lam[e.d + c] -= ldf[c];
}

void dyn_bodies_start_torque(const DynamicRun *r, const Track *t, const double *g, Tan *in)
{
    const srd_sim *s = &r->b->s;
    for (int k = 0; k < s->bodies.n; k++)
        for (int c = 0; c < 3 && turns(s, k); c++) {
            int d = rot_dof(s->m, k) + c;
            in->B[SRD_BODY_TAN * k + 6 + c] = -(g[s->solver.sys.free_index[d]] - s->load_factor * t->dfext[d]);
        }
}

void dyn_bodies_start_torque_adjoint(const DynamicRun *r, Tan *adj, double *lres, double *lfext)
{
    const srd_sim *s = &r->b->s;
    for (int k = 0; k < s->bodies.n; k++)
        for (int c = 0; c < 3 && turns(s, k); c++) {
            int d = rot_dof(s->m, k) + c;
            double *l = &adj->B[SRD_BODY_TAN * k + 6 + c];
            lres[s->solver.sys.free_index[d]] -= *l;
            lfext[d] += s->load_factor * *l;
            *l = 0;
        }
}
