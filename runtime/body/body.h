/* body.h — rigid bodies in the time loop: their orientation and angular momentum at the step
 * start, the rotational inertia terms of each integrator, and the update after a step.
 *
 * A body's rotation DOFs theta are the Cayley parameters of its turn since the step start, in
 * its own axes: R = R0 cay(theta), cay(theta) = (I - theta^/2)^-1 (I + theta^/2). Cayley's map is
 * rational (exact derivatives with no removable singularity at theta = 0, where every Newton
 * solve starts), and with it the implicit midpoint rule conserves a free body's angular
 * momentum and energy exactly. After each step R0 takes the turn and theta returns to zero, as
 * a rod's reference frames follow their edges. */
#ifndef SRD_BODY_H
#define SRD_BODY_H
#include <stdbool.h>

struct srd_sim;

typedef struct srd_bodies {
    int     n;
    double *axes;   /* 9 per body: R0, column k = principal axis k (world) at the step start */
    double *momentum; /* 3 per body: angular momentum Pi in its axes at the step start */
    double *torque; /* 3 per body: Newmark's torque at the step start, in its axes */
} srd_bodies;

/* Orientation, momentum and velocities from the model's initial values (into s->v). */
void srd_bodies_init(struct srd_sim *s);
void srd_bodies_free(srd_bodies *b);

/* Adds each body's rotational inertia to the residual rows of its rotation DOFs at q (and to
 * the Jacobian): B(b theta)^T X(theta), X the integrator's discrete Euler equation and B the
 * map from d theta to the turn in body axes (elements give B^T times the torque). */
void srd_bodies_inertia(struct srd_sim *s, const double *q, bool with_jacobian, int method);

/* After a converged step of `method` (or a static solve, method -1): the momentum and angular
 * velocity at its end, R0 <- R0 cay(theta), theta <- 0, and the element kernels' frames. */
void srd_bodies_finish(struct srd_sim *s, int method);

/* Explicit integration (symplectic Euler, Verlet): the torque in body axes at the step start
 * is -(gradient on the rotation rows); kick the momentum by dt * torque, then turn freely. */
void srd_bodies_kick(struct srd_sim *s, const double *rotation_residual, double dt);
void srd_bodies_drift(struct srd_sim *s, double dt);

/* RK4 on a body's rotation in its chart theta (R = R0 cay(theta)), with the body-axis angular
 * velocity w as the rate variable: theta' = B(theta)^-1 w = (I + theta^/2 + theta theta^T/4) w,
 * J w' = tau - w x J w, tau = B(theta)^-T times the generalised force acceleration() left in
 * bodies.torque. A stage's kq (entering: w at the stage) and kv rows of the rotation DOFs are
 * set; after the last stage, finish folds the turn into the axes. */
void srd_bodies_rk4_stage(struct srd_sim *s, const double *qs, double *kq, double *kv);
void srd_bodies_rk4_finish(struct srd_sim *s);

/* Gives the elements that read bodies' frames the turns in s->bodies.axes (after they were
 * written directly, as a checkpoint does). */
void   srd_bodies_share_frames(struct srd_sim *s);
/* Sets body k's orientation between steps (axes: column c is principal axis c in the world,
 * as srd_bodies.axes) and/or its angular velocity (world); either may be NULL. */
void   srd_body_set_turn(struct srd_sim *s, int k, const double *axes, const double *omega);

/* Rotational kinetic energy 1/2 Pi . J^-1 Pi, and a body's angular momentum in the world. */
double srd_bodies_kinetic_energy(const struct srd_sim *s);
void   srd_body_world_momentum(const struct srd_sim *s, int k, double *L);
/* Axis c of body k now (the world direction of its principal axis c). */
void   srd_body_axis(const struct srd_sim *s, int k, int c, double *out);

/* The Cayley rotation of theta (row-major 3x3), cay(theta)^T p (with its derivative in theta,
 * row-major, when dout is not NULL), the discrete Euler equation X(theta) of `method` (a torque in
 * body axes, see body.c) with dX/dtheta, and B(phi)^T X with its derivatives: exposed for the
 * unit tests and the sensitivities (runtime/sens/body_tangent.h). */
void srd_cayley(const double *theta, double *R);
void srd_body_turn_back(const double *theta, const double *p, double *out, double *dout);
void srd_body_euler_equation(const double *J, const double *Pi0, const double *tau0, const double *theta, double h,
                             int method, double *X, double *dX);
/* What a step of `method` that turned by theta leaves: the momentum Pi1 and Newmark's torque tau1
 * (other methods keep tau0); Pi1 and tau1 may be Pi0 and tau0. */
void srd_body_end_state(const double *J, const double *Pi0, const double *tau0, const double *theta, double h,
                        int method, double *Pi1, double *tau1);
void srd_body_euler_rows(const double *J, const double *Pi0, const double *tau0, const double *theta, double b,
                         double h, int method, double *rows, double *jac);

#endif
