/* test_body_tangent.c — the derivatives of a rigid body's implicit step (runtime/sens/body_tangent.c)
 * against central differences of the runtime's own update (srd_body_end_state, the axes'
 * R0 cay(theta), srd_body_euler_rows) for each implicit method, at random states with turns up to
 * 0.8 rad, and each transpose against its forward map (lambda.(J w) = (J^T lambda).w). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "body/body.h"
#include "sens/body_tangent.h"
#include "sim.h"

#include "tap.h"

static Tally tally;

static double uniform(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return ((*seed >> 8) & 0xFFFFFF) / (double)0x1000000 * 2 - 1;
}

static void random_fill(double *x, int n, double scale, unsigned *seed)
{
    for (int i = 0; i < n; i++)
        x[i] = scale * uniform(seed);
}

/* A body's step: moments, state at the start, the turn solved for. */
typedef struct Body {
    double J[3], R0[9], Pi0[3], tau0[3], theta[3], h;
    int    method;
} Body;

/* C = A B, 3x3 row-major. */
static void mat_mul(const double *A, const double *B, double *C)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

/* The state after the step from b moved along w (SRD_BODY_TAN: phi, dPi, dtau), dtheta, dJ by h:
 * the new axes (row-major), momentum and torque, as the runtime computes them. */
static void stepped(const Body *b, const double *w, const double *dth, const double *dJ, double h, double *R1,
                    double *Pi1, double *tau1)
{
    double J[3], Pi0[3], tau0[3], th[3], phi[3], C[9], turn[9], R0[9];
    for (int c = 0; c < 3; c++) {
        J[c] = b->J[c] + h * dJ[c], Pi0[c] = b->Pi0[c] + h * w[3 + c], tau0[c] = b->tau0[c] + h * w[6 + c];
        th[c] = b->theta[c] + h * dth[c], phi[c] = h * w[c];
    }
    srd_cayley(phi, turn); /* R0 exp-like turned by phi: Cayley's map has the same first derivative */
    mat_mul(b->R0, turn, R0);
    srd_cayley(th, C);
    mat_mul(R0, C, R1);
    srd_body_end_state(J, Pi0, tau0, th, b->h, b->method, Pi1, tau1);
}

/* The turn in body axes between two rotations: vee(R1^T dR) for dR the central difference. */
static void body_turn(const double *Rp, const double *Rm, const double *R, double h, double *phi)
{
    double M[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            M[3 * i + j] = 0;
            for (int k = 0; k < 3; k++)
                M[3 * i + j] += R[3 * k + i] * (Rp[3 * k + j] - Rm[3 * k + j]) / (2 * h);
        }
    phi[0] = 0.5 * (M[7] - M[5]), phi[1] = 0.5 * (M[2] - M[6]), phi[2] = 0.5 * (M[3] - M[1]);
}

static double finish_gap(const Body *b, const double *w, const double *dth, const double *dJ)
{
    double out[SRD_BODY_TAN], fd[SRD_BODY_TAN], Rp[9], Rm[9], R[9], Pp[3], Pm[3], Tp[3], Tm[3], P[3], T[3];
    srd_body_step st = { b->J, b->Pi0, b->tau0, b->theta, b->h, b->method };
    srd_body_finish_tangent(&st, w, dth, dJ, out);
    double h = 1e-6, zero[SRD_BODY_TAN] = { 0 }, z3[3] = { 0, 0, 0 };
    stepped(b, w, dth, dJ, h, Rp, Pp, Tp);
    stepped(b, w, dth, dJ, -h, Rm, Pm, Tm);
    stepped(b, zero, z3, z3, 0, R, P, T);
    body_turn(Rp, Rm, R, h, fd);
    for (int c = 0; c < 3; c++)
        fd[3 + c] = (Pp[c] - Pm[c]) / (2 * h), fd[6 + c] = (Tp[c] - Tm[c]) / (2 * h);
    double gap = 0, scale = 1e-300;
    for (int i = 0; i < SRD_BODY_TAN; i++)
        scale = fmax(scale, fabs(fd[i]));
    for (int i = 0; i < SRD_BODY_TAN; i++)
        gap = fmax(gap, fabs(out[i] - fd[i]) / scale);
    return gap;
}

/* lambda . (T w) against (T^T lambda) . w for the finish map, over all its inputs. */
static double finish_transpose_gap(const Body *b, const double *w, const double *dth, const double *dJ,
                                   unsigned *seed)
{
    srd_body_step st = { b->J, b->Pi0, b->tau0, b->theta, b->h, b->method };
    double out[SRD_BODY_TAN], l[SRD_BODY_TAN], lin[SRD_BODY_TAN] = { 0 }, lth[3] = { 0, 0, 0 }, lJ[3] = { 0, 0, 0 };
    random_fill(l, SRD_BODY_TAN, 1, seed);
    srd_body_finish_tangent(&st, w, dth, dJ, out);
    srd_body_finish_adjoint(&st, l, lin, lth, lJ);
    double a = 0, c = 0;
    for (int i = 0; i < SRD_BODY_TAN; i++)
        a += l[i] * out[i], c += lin[i] * w[i];
    for (int i = 0; i < 3; i++)
        c += lth[i] * dth[i] + lJ[i] * dJ[i];
    return fabs(a - c) / fmax(fabs(a), 1e-300);
}

/* The rows' change along (dJ, dPi0, dtau0) against central differences of srd_body_euler_rows. */
static double rows_gap(const Body *b, const double *w, const double *dJ, double bb)
{
    double rows[3], p[3], m[3], Jp[3], Jm[3], Pp[3], Pm[3], Tp[3], Tm[3], h = 1e-6;
    srd_body_rows_tangent(dJ, w, b->theta, bb, b->h, b->method, rows);
    for (int c = 0; c < 3; c++) {
        Jp[c] = b->J[c] + h * dJ[c], Jm[c] = b->J[c] - h * dJ[c];
        Pp[c] = b->Pi0[c] + h * w[3 + c], Pm[c] = b->Pi0[c] - h * w[3 + c];
        Tp[c] = b->tau0[c] + h * w[6 + c], Tm[c] = b->tau0[c] - h * w[6 + c];
    }
    srd_body_euler_rows(Jp, Pp, Tp, b->theta, bb, b->h, b->method, p, NULL);
    srd_body_euler_rows(Jm, Pm, Tm, b->theta, bb, b->h, b->method, m, NULL);
    double gap = 0, scale = 1e-300;
    for (int c = 0; c < 3; c++)
        scale = fmax(scale, fabs(p[c] - m[c]) / (2 * h));
    for (int c = 0; c < 3; c++)
        gap = fmax(gap, fabs(rows[c] - (p[c] - m[c]) / (2 * h)) / scale);
    return gap;
}

static double rows_transpose_gap(const Body *b, const double *w, const double *dJ, double bb, unsigned *seed)
{
    double rows[3], l[3], lin[SRD_BODY_TAN] = { 0 }, lJ[3] = { 0, 0, 0 };
    random_fill(l, 3, 1, seed);
    srd_body_rows_tangent(dJ, w, b->theta, bb, b->h, b->method, rows);
    srd_body_rows_adjoint(l, b->theta, bb, b->h, b->method, lin, lJ);
    double a = l[0] * rows[0] + l[1] * rows[1] + l[2] * rows[2], c = 0;
    for (int i = 3; i < SRD_BODY_TAN; i++)
        c += lin[i] * w[i];
    for (int i = 0; i < 3; i++)
        c += lJ[i] * dJ[i];
    return fabs(a - c) / fmax(fabs(a), 1e-300);
}

static void random_body(Body *b, int method, unsigned *seed)
{
    double axis[3];
    random_fill(axis, 3, 1.5, seed);
    srd_cayley(axis, b->R0);
    for (int c = 0; c < 3; c++)
        b->J[c] = 1e-4 * (1.5 + uniform(seed));
    random_fill(b->Pi0, 3, 3e-3, seed);
    random_fill(b->tau0, 3, 1e-2, seed);
    random_fill(b->theta, 3, 0.45, seed); /* |theta| up to 0.8: a fast turn in one step */
    b->h = 2e-3;
    b->method = method;
}

int main(void)
{
    static const char *const names[] = { "implicit_euler", "implicit_midpoint", "newmark" };
    static const int methods[] = { SRD_IMPLICIT_EULER, SRD_IMPLICIT_MIDPOINT, SRD_NEWMARK };
    unsigned seed = 0xb0d1;
    for (int m = 0; m < 3; m++)
        for (int trial = 0; trial < 4; trial++) {
            Body b;
            random_body(&b, methods[m], &seed);
            double w[SRD_BODY_TAN], dth[3], dJ[3];
            random_fill(w, 3, 1, &seed);
            random_fill(&w[3], 3, 3e-3, &seed);
            random_fill(&w[6], 3, 1e-2, &seed);
            random_fill(dth, 3, 1, &seed);
            random_fill(dJ, 3, 1e-4, &seed);
            double bb = methods[m] == SRD_IMPLICIT_MIDPOINT ? 0.5 : 1;
            double gap = finish_gap(&b, w, dth, dJ);
            check(&tally, gap < 1e-7, "%s, body %d: the new axes' turn, momentum and torque along random tangents "
                  "match central differences of the runtime's update (relative %.2e, tol 1e-7)", names[m], trial, gap);
            double agree = finish_transpose_gap(&b, w, dth, dJ, &seed);
            check(&tally, agree < 1e-12, "%s, body %d: its transpose agrees (relative %.2e, tol 1e-12)", names[m],
                  trial, agree);
            gap = rows_gap(&b, w, dJ, bb);
            check(&tally, gap < 1e-7, "%s, body %d: the Euler rows' change along the moments, momentum and torque "
                  "matches central differences (relative %.2e, tol 1e-7)", names[m], trial, gap);
            agree = rows_transpose_gap(&b, w, dJ, bb, &seed);
            check(&tally, agree < 1e-12, "%s, body %d: its transpose agrees (relative %.2e, tol 1e-12)", names[m],
                  trial, agree);
        }
    printf("%d passed, %d failed\n", tally.run - tally.failed, tally.failed);
    return tally.failed ? 1 : 0;
}
