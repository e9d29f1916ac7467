/* body.c — rigid bodies in the time loop (see body.h): the discrete Euler equations of each
 * integrator with their exact Jacobians, and the update of orientation and momentum. */
#include "body.h"
#include "alloc.h"
#include "sim.h"
#include "vec3.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EULER = SRD_IMPLICIT_EULER, MIDPOINT = SRD_IMPLICIT_MIDPOINT, NEWMARK = SRD_NEWMARK };

/* ---- small 3x3 algebra (row-major) ---- */

static void hat(const double *a, double *A)
{
    double m[9] = { 0, -a[2], a[1], a[2], 0, -a[0], -a[1], a[0], 0 };
    memcpy(A, m, sizeof m);
}

static void mat_vec(const double *A, const double *x, double *y)
{
    for (int i = 0; i < 3; i++)
        y[i] = A[3 * i] * x[0] + A[3 * i + 1] * x[1] + A[3 * i + 2] * x[2];
}

static void mat_mul(const double *A, const double *B, double *C)
{
    double r[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            r[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
    memcpy(C, r, sizeof r);
}

void srd_cayley(const double *theta, double *R)
{
    double T[9], T2[9], c = 4 / (4 + srd_dot3(theta, theta));
    hat(theta, T);
    mat_mul(T, T, T2);
    for (int k = 0; k < 9; k++)
        R[k] = (k % 4 == 0) + c * (T[k] + 0.5 * T2[k]);
}

/* C(-theta) p = cay(theta)^T p = p + c (-theta x p + theta x (theta x p) / 2), c = 4 / (4 + |theta|^2),
 * and its derivative in theta (dout, row-major). */
void srd_body_turn_back(const double *th, const double *p, double *out, double *dout)
{
    double c = 4 / (4 + srd_dot3(th, th)), tp[3], ttp[3], g[3];
    srd_cross3(th, p, tp);
    srd_cross3(th, tp, ttp);
    for (int i = 0; i < 3; i++) {
        g[i] = -tp[i] + 0.5 * ttp[i];
        out[i] = p[i] + c * g[i];
    }
    if (!dout)
        return;
    /* dg = p^ + ((theta.p) I + theta p^T - 2 p theta^T) / 2, dc = -(c^2 / 2) theta^T */
    double P[9], tdp = srd_dot3(th, p);
    hat(p, P);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double dg = P[3 * i + j] + 0.5 * ((i == j) * tdp + th[i] * p[j] - 2 * p[i] * th[j]);
            dout[3 * i + j] = c * dg - 0.5 * c * c * g[i] * th[j];
        }
}

/* The discrete Euler equation X(theta) (a torque in body axes) and dX/dtheta:
 *   implicit Euler:  (Pi1 - cay^T Pi0) / h,            Pi1 = J theta / h
 *   midpoint:        (Pi1 - Pi0) / h + theta x J theta / h^2,  Pi1 = 2 J theta / h - Pi0
 *   Newmark:         2 (Pi1 - cay^T Pi0) / h - cay^T tau0,     Pi1 = 2 J theta / h - cay^T Pi0
 * Each equals the torque (Newmark's: trapezoidal, so X is the torque at the step end). */
void srd_body_euler_equation(const double *J, const double *Pi0, const double *tau0, const double *th, double h,
                             int method, double *X, double *dX)
{
    double Jt[3], back[3], dback[9];
    for (int i = 0; i < 3; i++)
        Jt[i] = J[i] * th[i];
    memset(dX, 0, 9 * sizeof(double));
    if (method == MIDPOINT) {
        double g[3], A[9], B[9];
        srd_cross3(th, Jt, g);
        hat(th, A);
        hat(Jt, B);
        for (int i = 0; i < 3; i++) {
            X[i] = 2 * (Jt[i] / h - Pi0[i]) / h + g[i] / (h * h);
            for (int j = 0; j < 3; j++)
                dX[3 * i + j] = (2 * (i == j) * J[j] + A[3 * i + j] * J[j] - B[3 * i + j]) / (h * h);
        }
        return;
    }
    srd_body_turn_back(th, Pi0, back, dback);
    double w = method == EULER ? 1 : 4;
    for (int i = 0; i < 3; i++) {
        X[i] = w * (Jt[i] / h - back[i]) / h;
        for (int j = 0; j < 3; j++)
            dX[3 * i + j] = w * ((i == j) * J[j] / h - dback[3 * i + j]) / h;
    }
    if (method == NEWMARK) {
        double tb[3], dtb[9];
        srd_body_turn_back(th, tau0, tb, dtb);
        for (int i = 0; i < 3; i++) {
            X[i] -= tb[i];
            for (int j = 0; j < 3; j++)
                dX[3 * i + j] -= dtb[3 * i + j];
        }
    }
}

/* rows = B(phi)^T X with phi = b theta, B^T = s (I + phi^ / 2), s = 4 / (4 + |phi|^2); jac its
 * derivative in theta: b d(B^T)/dphi X + B^T dX/dtheta. */
void srd_body_euler_rows(const double *J, const double *Pi0, const double *tau0, const double *theta, double b,
                         double h, int method, double *rows, double *jac)
{
    double X[3], dX[9], phi[3], PX[3], XH[9], PH[9];
    srd_body_euler_equation(J, Pi0, tau0, theta, h, method, X, dX);
    for (int i = 0; i < 3; i++)
        phi[i] = b * theta[i];
    double s = 4 / (4 + srd_dot3(phi, phi));
    srd_cross3(phi, X, PX);
    for (int i = 0; i < 3; i++)
        rows[i] = s * (X[i] + 0.5 * PX[i]);
    if (!jac)
        return;
    hat(X, XH);
    hat(phi, PH);
    for (int k = 0; k < 9; k++)
        PH[k] = s * ((k % 4 == 0) + 0.5 * PH[k]);
    mat_mul(PH, dX, jac);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            jac[3 * i + j] += b * (-0.5 * s * s * (X[i] + 0.5 * PX[i]) * phi[j] - 0.5 * s * XH[3 * i + j]);
}

/* ---- state ---- */

static int rot_dof(const srd_sim *s, int k) { return s->m->node_dof[s->m->bodies[k].node] + 3; }

/* Sets every element kernel's copy of the bodies' axes. */
void srd_bodies_share_frames(srd_sim *s)
{
    for (int k = 0; k < s->m->n_sets; k++)
        srd_batch_set_frames(&s->kernels[k].batch, s->m, k, &s->kernels[k].info, s->bodies.axes);
}

/* The body's angular velocity in its axes: J^-1 Pi. */
static void store_velocity(srd_sim *s, int k)
{
    const srd_body *b = &s->m->bodies[k];
    for (int c = 0; c < 3; c++)
        s->v[rot_dof(s, k) + c] = s->bodies.momentum[3 * k + c] / b->inertia[c];
}

void srd_bodies_init(srd_sim *s)
{
    const srd_model *m = s->m;
    srd_bodies *bs = &s->bodies;
    bs->n = m->n_bodies;
    bs->axes = srd_xcalloc((size_t)bs->n * 9 + 1, sizeof(double));
    bs->momentum = srd_xcalloc((size_t)bs->n * 3 + 1, sizeof(double));
    bs->torque = srd_xcalloc((size_t)bs->n * 3 + 1, sizeof(double));
    for (int k = 0; k < bs->n; k++) {
        const srd_body *b = &m->bodies[k];
        memcpy(&bs->axes[9 * k], b->axes, 9 * sizeof(double));
        for (int c = 0; c < 3; c++) {
            /* omega in body axes: R0^T omega_world */
            double w = srd_dot3(&b->axes[3 * c], b->omega0);
            bs->momentum[3 * k + c] = b->inertia[c] * w;
            s->v[m->node_dof[b->node] + c] = b->velocity0[c];
        }
        store_velocity(s, k);
        /* its rotation rows couple among themselves (gyroscopic terms) */
        int pairs[18], n = 0, d = rot_dof(s, k);
        const int *fi = s->solver.sys.free_index;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3 && fi[d] >= 0; j++) {
                pairs[2 * n] = fi[d + i];
                pairs[2 * n++ + 1] = fi[d + j];
            }
        if (n)
            srd_sim_add_couplings(s, n, pairs);
    }
    srd_bodies_share_frames(s);
}

void srd_body_set_turn(srd_sim *s, int k, const double *axes, const double *omega)
{
    srd_bodies *bs = &s->bodies;
    if (axes) {
        memcpy(&bs->axes[9 * k], axes, 9 * sizeof(double));
        srd_bodies_share_frames(s);
    }
    if (omega) {
        const double *R = &bs->axes[9 * k];
        for (int c = 0; c < 3; c++)
            bs->momentum[3 * k + c] = s->m->bodies[k].inertia[c] * srd_dot3(&R[3 * c], omega);
        store_velocity(s, k);
    }
}

void srd_bodies_free(srd_bodies *b)
{
    free(b->axes);
    free(b->momentum);
    free(b->torque);
    memset(b, 0, sizeof *b);
}

void srd_bodies_inertia(srd_sim *s, const double *q, bool with_jacobian, int method)
{
    const srd_system *sys = &s->solver.sys;
    double b = s->stiffness_b;
    for (int k = 0; k < s->bodies.n; k++) {
        int d = rot_dof(s, k);
        if (sys->free_index[d] < 0)
            continue;
        double rows[3], jac[9];
        srd_body_euler_rows(s->m->bodies[k].inertia, &s->bodies.momentum[3 * k], &s->bodies.torque[3 * k], &q[d], b,
                            s->dt, method, rows, with_jacobian ? jac : NULL);
        for (int i = 0; i < 3; i++) {
            int fi = sys->free_index[d + i];
            s->res[fi] += rows[i];
            for (int j = 0; with_jacobian && j < 3; j++) {
                long long pos = srd_system_position(sys, fi, sys->free_index[d + j]);
                if (pos >= 0)
                    s->solver.jac[pos] += jac[3 * i + j];
            }
        }
    }
}

/* R0 <- R0 cay(theta), theta <- 0 (and the step start's theta0 <- -theta). */
static void turn_axes(srd_sim *s, int k)
{
    int d = rot_dof(s, k);
    double C[9], R[9], *axes = &s->bodies.axes[9 * k];
    srd_cayley(&s->q[d], C);
    for (int i = 0; i < 3; i++) /* R row-major from the axes (columns) */
        for (int j = 0; j < 3; j++)
            R[3 * i + j] = axes[3 * j + i];
    mat_mul(R, C, R);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            axes[3 * j + i] = R[3 * i + j];
    /* the step's start, seen from the new axes, is the turn back: probes and reports that evaluate
     * the step's elements afterwards (contact forces, friction) see the same motion */
    for (int c = 0; c < 3; c++) {
        s->q0[d + c] = -s->q[d + c];
        s->q[d + c] = 0;
    }
}

void srd_body_end_state(const double *J, const double *Pi0, const double *tau0, const double *theta, double h,
                        int method, double *Pi1, double *tau1)
{
    double back[3], X[3], dX[9], Pi[3];
    srd_body_turn_back(theta, Pi0, back, NULL);
    for (int c = 0; c < 3; c++)
        Pi[c] = method == EULER ? J[c] * theta[c] / h
              : method == MIDPOINT ? 2 * J[c] * theta[c] / h - Pi0[c] : 2 * J[c] * theta[c] / h - back[c];
    if (method == NEWMARK)
        srd_body_euler_equation(J, Pi0, tau0, theta, h, method, X, dX);
    else
        memcpy(X, tau0, sizeof X);
    memcpy(Pi1, Pi, sizeof Pi);
    memcpy(tau1, X, sizeof X);
}

static void end_momentum(srd_sim *s, int k, int method)
{
    double *Pi = &s->bodies.momentum[3 * k], *tau = &s->bodies.torque[3 * k];
    srd_body_end_state(s->m->bodies[k].inertia, Pi, tau, &s->q[rot_dof(s, k)], s->dt, method, Pi, tau);
}

void srd_bodies_finish(srd_sim *s, int method)
{
    for (int k = 0; k < s->bodies.n; k++) {
        if (method >= 0 && s->solver.sys.free_index[rot_dof(s, k)] >= 0)
            end_momentum(s, k, method);
        turn_axes(s, k);
        store_velocity(s, k);
    }
    srd_bodies_share_frames(s);
}

/* ---- explicit steps ---- */

void srd_bodies_kick(srd_sim *s, const double *torque, double dt)
{
    for (int k = 0; k < s->bodies.n; k++) {
        if (s->solver.sys.free_index[rot_dof(s, k)] < 0)
            continue;
        for (int c = 0; c < 3; c++)
            s->bodies.momentum[3 * k + c] += dt * torque[3 * k + c];
        store_velocity(s, k);
    }
}

/* The free turn over dt, by the midpoint rule (exact in momentum and energy): solves
 * 2 J theta / dt - 2 Pi + theta x J theta / dt = 0 by Newton's method. */
static void free_turn(const double *J, const double *Pi, double dt, double *th)
{
    double zero[3] = { 0, 0, 0 };
    for (int c = 0; c < 3; c++)
        th[c] = dt * Pi[c] / J[c];
    for (int it = 0; it < 50; it++) {
        double X[3], dX[9];
        srd_body_euler_equation(J, Pi, zero, th, dt, MIDPOINT, X, dX);
        double A[9], x[3];
        memcpy(A, dX, sizeof A);
        /* solve A dth = -X by Cramer's rule */
        double det = A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
                     A[2] * (A[3] * A[7] - A[4] * A[6]);
        double inv[9] = { A[4] * A[8] - A[5] * A[7], A[2] * A[7] - A[1] * A[8], A[1] * A[5] - A[2] * A[4],
                          A[5] * A[6] - A[3] * A[8], A[0] * A[8] - A[2] * A[6], A[2] * A[3] - A[0] * A[5],
                          A[3] * A[7] - A[4] * A[6], A[1] * A[6] - A[0] * A[7], A[0] * A[4] - A[1] * A[3] };
        mat_vec(inv, X, x);
        double step = 0;
        for (int c = 0; c < 3; c++) {
            th[c] -= x[c] / det;
            step = fmax(step, fabs(x[c] / det));
        }
        if (step <= 1e-15 * (1 + sqrt(srd_dot3(th, th))))
            break;
    }
}

void srd_bodies_drift(srd_sim *s, double dt)
{
    for (int k = 0; k < s->bodies.n; k++) {
        int d = rot_dof(s, k);
        if (s->solver.sys.free_index[d] < 0)
            continue;
        const double *J = s->m->bodies[k].inertia;
        double *Pi = &s->bodies.momentum[3 * k];
        free_turn(J, Pi, dt, &s->q[d]);
        for (int c = 0; c < 3; c++)
            Pi[c] = 2 * J[c] * s->q[d + c] / dt - Pi[c];
        turn_axes(s, k);
        store_velocity(s, k);
    }
    srd_bodies_share_frames(s);
}

/* ---- RK4 ---- */

/* B(theta)^-1 x = (I + theta^/2 + theta theta^T / 4) x, and B^-T x = (I - theta^/2 + ...) x. */
static void chart_rate(const double *th, const double *x, int transpose, double *out)
{
    double tx[3], d = srd_dot3(th, x) / 4;
    srd_cross3(th, x, tx);
    for (int c = 0; c < 3; c++)
        out[c] = x[c] + (transpose ? -0.5 : 0.5) * tx[c] + d * th[c];
}

void srd_bodies_rk4_stage(srd_sim *s, const double *qs, double *kq, double *kv)
{
    for (int k = 0; k < s->bodies.n; k++) {
        int d = rot_dof(s, k);
        if (s->solver.sys.free_index[d] < 0)
            continue;
        const double *J = s->m->bodies[k].inertia, *th = &qs[d];
        double w[3], tau[3], Jw[3], gyro[3];
        memcpy(w, &kq[d], sizeof w);
        chart_rate(th, &s->bodies.torque[3 * k], 1, tau);
        for (int c = 0; c < 3; c++)
            Jw[c] = J[c] * w[c];
        srd_cross3(w, Jw, gyro);
        chart_rate(th, w, 0, &kq[d]);
        for (int c = 0; c < 3; c++)
            kv[d + c] = (tau[c] - gyro[c]) / J[c];
    }
}

void srd_bodies_rk4_finish(srd_sim *s)
{
    for (int k = 0; k < s->bodies.n; k++) {
        int d = rot_dof(s, k);
        if (s->solver.sys.free_index[d] < 0)
            continue;
        for (int c = 0; c < 3; c++)
            s->bodies.momentum[3 * k + c] = s->m->bodies[k].inertia[c] * s->v[d + c];
        turn_axes(s, k);
    }
    srd_bodies_share_frames(s);
}

/* ---- what probes and summaries read ---- */

double srd_bodies_kinetic_energy(const srd_sim *s)
{
    double e = 0;
    for (int k = 0; k < s->bodies.n; k++)
        for (int c = 0; c < 3; c++)
            e += 0.5 * s->bodies.momentum[3 * k + c] * s->bodies.momentum[3 * k + c] / s->m->bodies[k].inertia[c];
    return e;
}

void srd_body_world_momentum(const srd_sim *s, int k, double *L)
{
    const double *R = &s->bodies.axes[9 * k], *Pi = &s->bodies.momentum[3 * k];
    for (int i = 0; i < 3; i++)
        L[i] = R[i] * Pi[0] + R[3 + i] * Pi[1] + R[6 + i] * Pi[2];
}

void srd_body_axis(const srd_sim *s, int k, int c, double *out)
{
    double C[9], col[3];
    srd_cayley(&s->q[rot_dof(s, k)], C);
    for (int i = 0; i < 3; i++)
        col[i] = C[3 * i + c];
    const double *R = &s->bodies.axes[9 * k];
    for (int i = 0; i < 3; i++)
        out[i] = R[i] * col[0] + R[3 + i] * col[1] + R[6 + i] * col[2];
}
