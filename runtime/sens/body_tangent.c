/* body_tangent.c — derivatives of a rigid body's implicit step (see body_tangent.h). The rows, the
 * new momentum and torque and the new axes' turn are each linear in the tangents they take (the
 * discrete Euler equations are linear in J, Pi0 and tau0 at a fixed turn), so each transpose is
 * taken column by column from the forward map on unit directions: exactly its transpose. */
#include "sens/body_tangent.h"
#include <string.h>
#include "body/body.h"
#include "sim.h"
#include "vec3.h"

void srd_body_rows_tangent(const double *dJ, const double *in, const double *theta, double b, double h, int method,
                           double *rows)
{
    srd_body_euler_rows(dJ, &in[3], &in[6], theta, b, h, method, rows, NULL);
}

void srd_body_rows_adjoint(const double *l, const double *theta, double b, double h, int method, double *lin,
                           double *lJ)
{
    for (int u = 0; u < 9; u++) { /* dJ, then dPi, then dtau */
        double dJ[3] = { 0, 0, 0 }, in[SRD_BODY_TAN] = { 0 }, rows[3];
        if (u < 3)
            dJ[u] = 1;
        else
            in[u] = 1;
        srd_body_rows_tangent(dJ, in, theta, b, h, method, rows);
        double sum = srd_dot3(l, rows);
        if (u < 3)
            lJ[u] += sum;
        else
            lin[u] += sum;
    }
}

/* The new axes' turn: R1 = R0 cay(theta), so R1^T dR1 = cay^T hat(phi) cay + cay^T dcay, which is
 * hat(cay^T phi + B dtheta) with B = s (I - theta^/2), s = 4 / (4 + |theta|^2). */
static void turn_tangent(const double *th, const double *phi, const double *dth, double *out)
{
    double s = 4 / (4 + srd_dot3(th, th)), txd[3];
    srd_body_turn_back(th, phi, out, NULL);
    srd_cross3(th, dth, txd);
    for (int c = 0; c < 3; c++)
        out[c] += s * (dth[c] - 0.5 * txd[c]);
}

/* d(Pi1) of end_momentum (body.c): Pi1 = k J theta / h (- Pi0 by the midpoint rule, - cay^T Pi0 by
 * Newmark's), k = 1 for implicit Euler, else 2. */
static void momentum_tangent(const srd_body_step *st, const double *dPi0, const double *dth, const double *dJ,
                             double *out)
{
    double k = st->method == SRD_IMPLICIT_EULER ? 1 : 2, back[3] = { 0, 0, 0 }, dback[9], turned[3] = { 0, 0, 0 };
    if (st->method == SRD_NEWMARK) {
        double unused[3];
        srd_body_turn_back(st->theta, dPi0, back, NULL);
        srd_body_turn_back(st->theta, st->Pi0, unused, dback);
        for (int i = 0; i < 3; i++)
            turned[i] = dback[3 * i] * dth[0] + dback[3 * i + 1] * dth[1] + dback[3 * i + 2] * dth[2];
    }
    for (int c = 0; c < 3; c++) {
        out[c] = k * (dJ[c] * st->theta[c] + st->J[c] * dth[c]) / st->h;
        if (st->method == SRD_IMPLICIT_MIDPOINT)
            out[c] -= dPi0[c];
        else if (st->method == SRD_NEWMARK)
            out[c] -= back[c] + turned[c];
    }
}

/* Newmark's new torque is X(theta) itself: dX/dtheta dtheta + X along (dJ, dPi0, dtau0). Other
 * methods leave the torque as it was. */
static void torque_tangent(const srd_body_step *st, const double *in, const double *dth, const double *dJ,
                           double *out)
{
    if (st->method != SRD_NEWMARK) {
        memcpy(out, &in[6], 3 * sizeof(double));
        return;
    }
    double X[3], dX[9], moved[3], unused[9];
    srd_body_euler_equation(st->J, st->Pi0, st->tau0, st->theta, st->h, st->method, X, dX);
    srd_body_euler_equation(dJ, &in[3], &in[6], st->theta, st->h, st->method, moved, unused);
    for (int i = 0; i < 3; i++)
        out[i] = moved[i] + dX[3 * i] * dth[0] + dX[3 * i + 1] * dth[1] + dX[3 * i + 2] * dth[2];
}

void srd_body_finish_tangent(const srd_body_step *st, const double *in, const double *dtheta, const double *dJ,
                             double *out)
{
    turn_tangent(st->theta, in, dtheta, out);
    momentum_tangent(st, &in[3], dtheta, dJ, &out[3]);
    torque_tangent(st, in, dtheta, dJ, &out[6]);
}

void srd_body_finish_adjoint(const srd_body_step *st, const double *lout, double *lin, double *ltheta, double *lJ)
{
    for (int u = 0; u < SRD_BODY_TAN + 6; u++) { /* the carried tangent, then dtheta, then dJ */
        double in[SRD_BODY_TAN] = { 0 }, dth[3] = { 0, 0, 0 }, dJ[3] = { 0, 0, 0 }, out[SRD_BODY_TAN];
        if (u < SRD_BODY_TAN)
            in[u] = 1;
        else if (u < SRD_BODY_TAN + 3)
            dth[u - SRD_BODY_TAN] = 1;
        else
            dJ[u - SRD_BODY_TAN - 3] = 1;
        srd_body_finish_tangent(st, in, dth, dJ, out);
        double sum = 0;
        for (int i = 0; i < SRD_BODY_TAN; i++)
            sum += lout[i] * out[i];
        if (u < SRD_BODY_TAN)
            lin[u] += sum;
        else if (u < SRD_BODY_TAN + 3)
            ltheta[u - SRD_BODY_TAN] += sum;
        else
            lJ[u - SRD_BODY_TAN - 3] += sum;
    }
}

/* Frame state entry j of instance i as a linear function of its body's turn phi (R0's change
 * R0 hat(phi)): the entry is component `comp` of axis `axis`, row . (phi x e_axis) with row the
 * axes' row comp, so entry = phi . v with v = e_axis x row. Returns the body, or -1 for none. */
static int frame_gradient(const srd_model *m, int k, const srd_kernel_info *info, const double *axes, int i, int j,
                          double *v)
{
    int axis = info->state_comp[j] / 3, comp = info->state_comp[j] % 3, b = srd_batch_frame_body(m, k, info, i, j);
    if (b < 0)
        return -1;
    double row[3], e[3] = { 0, 0, 0 };
    for (int c = 0; c < 3; c++) /* axes: column c is axis c */
        row[c] = axes[9 * b + 3 * c + comp];
    e[axis] = 1;
    srd_cross3(e, row, v);
    return b;
}

void srd_body_frames_tangent(const srd_model *m, int k, const srd_kernel_info *info, const double *axes,
                             const double *B, double *S)
{
    int ns = info->n_state;
    for (int j = 0; j < ns; j++)
        for (int i = 0; info->state_kind[j] == SRD_STATE_FRAME && i < m->sets[k].n; i++) {
            double v[3];
            int b = frame_gradient(m, k, info, axes, i, j, v);
            S[(size_t)i * ns + j] = b >= 0 ? srd_dot3(&B[SRD_BODY_TAN * b], v) : 0;
        }
}

void srd_body_frames_adjoint(const srd_model *m, int k, const srd_kernel_info *info, const double *axes, double *lS,
                             double *lB)
{
    int ns = info->n_state;
    for (int j = 0; j < ns; j++)
        for (int i = 0; info->state_kind[j] == SRD_STATE_FRAME && i < m->sets[k].n; i++) {
            double v[3], *l = &lS[(size_t)i * ns + j];
            int b = frame_gradient(m, k, info, axes, i, j, v);
            for (int c = 0; b >= 0 && c < 3; c++)
                lB[SRD_BODY_TAN * b + c] += *l * v[c];
            *l = 0;
        }
}
