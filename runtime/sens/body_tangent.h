/* body_tangent.h — the derivative of a rigid body's implicit step (body.h) with respect to what
 * the body carries from step to step, its principal moments and its turn in the step: what a
 * sensitivity of a simulation carries for each body besides its DOFs. Forward and transpose.
 *
 * A body's carried state is its axes R0, its momentum Pi0 (body axes) and Newmark's torque tau0.
 * Their tangent is 9 numbers: phi (R0's change, R0 hat(phi), a turn in body axes), dPi0, dtau0.
 * The step solves for the turn theta (the rotation DOFs); the elements read R0 through their
 * frame state (SRD_STATE_FRAME), whose tangent follows from phi. */
#ifndef SRD_BODY_TANGENT_H
#define SRD_BODY_TANGENT_H
#include "batch.h"

enum { SRD_BODY_TAN = 9 }; /* phi, dPi, dtau */

/* The change of body rows B(b theta)^T X (srd_body_euler_rows) at fixed theta along the moments
 * dJ and the carried state's tangent in (its dPi and dtau): the rows are linear in (J, Pi0, tau0). */
void srd_body_rows_tangent(const double *dJ, const double *in, const double *theta, double b, double h, int method,
                           double *rows);
/* Its transpose with the rows' adjoint l: adds into lin (SRD_BODY_TAN) and lJ (3). */
void srd_body_rows_adjoint(const double *l, const double *theta, double b, double h, int method, double *lin,
                           double *lJ);

/* What srd_bodies_finish (after an implicit step of `method`) gives one body: the tangent out
 * (SRD_BODY_TAN) of its new axes, momentum and torque from the carried tangent in, the turn's
 * dtheta and the moments' dJ; J, Pi0, tau0 and theta are the step's. */
typedef struct srd_body_step {
    const double *J, *Pi0, *tau0, *theta;
    double        h;
    int           method;
} srd_body_step;
void srd_body_finish_tangent(const srd_body_step *st, const double *in, const double *dtheta, const double *dJ,
                             double *out);
/* Its transpose: from lout, adds into lin (SRD_BODY_TAN), ltheta (3) and lJ (3). */
void srd_body_finish_adjoint(const srd_body_step *st, const double *lout, double *lin, double *ltheta, double *lJ);

/* The frame state's tangent of set k (the entries SRD_STATE_FRAME of S, n * n_state) from the
 * bodies' tangents B (SRD_BODY_TAN per body; axes: 9 per body, as srd_bodies.axes). */
void srd_body_frames_tangent(const srd_model *m, int k, const srd_kernel_info *info, const double *axes,
                             const double *B, double *S);
/* Its transpose: the adjoints of those entries of lS go into lB's phi, and are cleared. */
void srd_body_frames_adjoint(const srd_model *m, int k, const srd_kernel_info *info, const double *axes, double *lS,
                             double *lB);

#endif
