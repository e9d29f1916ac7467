/* dynamic.h — sensitivities of a simulation with respect to params: forward (the state's
 * derivative carried step by step, one linear solve per param per step) and adjoint (the
 * discrete adjoint of the implicit scheme, backward through the recorded steps, one transposed
 * solve per step for every param at once). Both linearise the steps the run actually took
 * (implicit Euler, implicit midpoint, Newmark; subdivided steps included) with the step's exact
 * Jacobian, the tangent kernels of its inputs (tangent.h) and the derivative of the rods' frame
 * transport (state_tangent.h); memory stays bounded by recomputing segments of the run from
 * checkpoints. */
#ifndef SRD_SENS_DYNAMIC_H
#define SRD_SENS_DYNAMIC_H
#include <stddef.h>
#include "sens/grad.h"

typedef struct DynamicRun DynamicRun;

/* What an objective reads at the end of step `step` (0: the start, 1 .. steps; the last is the
 * final state): adds dJ/dq and dJ/dv of the state there into dq and dv (n_dofs each),
 * dJ/d(the simulate block's force probes' values there) into dforce (GRAD_FORCE_WIDTH a probe,
 * zeroed before the call), and dJ/d(the params' values there) into dparams (n_params, zeroed
 * before the call): only the inputs a control block sets are taken from it (control_sets), the
 * others' explicit share being constant over the run. */
typedef void (*DynamicSlopes)(void *ctx, long step, double t, const double *q, const double *v, double *dq,
                              double *dv, double *dforce, double *dparams);

/* What a run is for: the params to derive (NULL: every one; the others get DYNAMIC_NOT_ASKED),
 * and a function called with the sim at the start and after each step of the run (an
 * objective's records; NULL: none). */
typedef struct DynamicOptions {
    const bool *params;
    void      (*each)(void *ctx, srd_sim *s);
    void       *ctx;
} DynamicOptions;

/* Whether the derivatives do not cover b's simulation, with the reason in why (what dynamic_run
 * would refuse before running). */
bool dynamic_refuses(const StaticPoint *b, const GradOptions *o, char *why, size_t why_n);

/* Runs point b's simulate block as point_simulate does and records what the sensitivities need.
 * NULL, with the reason in why, when the model has something they do not cover (named) or a
 * step fails (when, and how). opt may be NULL. */
DynamicRun *dynamic_run(StaticPoint *b, const GradOptions *o, const DynamicOptions *opt, char *why, size_t why_n);
void        dynamic_run_free(DynamicRun *r);

/* Figures of the run for reports: steps, steps that were subdivided, the segments it
 * was recorded in, the peak bytes the records and checkpoints took, and times (the passes' time
 * includes recomputing segments and sampling the params). */
struct DynamicStats {
    long   steps, subdivided;
    int    segments;
    double peak_bytes;
    double run_seconds, pass_seconds; /* the recorded run; the forward or adjoint passes so far */
};
DynamicStats dynamic_stats(const DynamicRun *r);

/* The state at the end of the run (n_dofs each). */
const double *dynamic_final_q(const DynamicRun *r);
const double *dynamic_final_v(const DynamicRun *r);

/* Forward sensitivities of the final state: dq[k], dv[k] (n_dofs each) for every param k, with
 * status[k] STATIC_DERIVED or why not (static_point_why, dynamic_why). 0, or -1 when a linear
 * solve failed (a singular step Jacobian; why says when). */
int dynamic_forward(DynamicRun *r, double **dq, double **dv, int *status, char *why, size_t why_n);

/* After dynamic_forward: the derivative along param k of force probe pr of the simulate block
 * at the run's end (a reaction's force and moment, 6 values; a contact force's 3; a body's axis,
 * angular velocity or momentum, 3; a joint's force or torque, 3; a motor's effort, 1), into out.
 * False when it has none: param k not derived, a probe of the parts' contact. */
bool dynamic_force_probe(DynamicRun *r, int k, const srd_probe *pr, double *out);

/* The adjoint: grad[k] = dJ/dp_k for J = wq . q(T) + wv . v(T) (NULL: 0) plus what slopes adds
 * at the end of each step (NULL: nothing), for every param at once; status as above. */
int dynamic_adjoint(DynamicRun *r, const double *wq, const double *wv, DynamicSlopes slopes, void *ctx, double *grad,
                    int *status, char *why, size_t why_n);

/* The adjoint for force probe pr of the simulate block at the run's end: grad[k] = d(w . its
 * values)/dp_k (w: 6 weights for a reaction's force and moment, 3 for a contact force); status as
 * above. 0, -1 when a solve failed (why says when), 1 when the probe has no derivative here (the
 * parts' contact). Also for a body's and a joint's probes. */
int dynamic_force_adjoint(DynamicRun *r, const srd_probe *pr, const double *w, double *grad, int *status, char *why,
                          size_t why_n);

/* Reasons beyond static_point_why's: a param that moves a prescribed motion, one whose effect on
 * the model's values has a switch (a kink or a jump) within reach of its difference stencil (a
 * schedule's switch, schedule_tangent.h, or one between the samples of its elaborated values),
 * first at the time dynamic_switch_time gives, and one that moves the time of a `release`. */
enum { DYNAMIC_MOVES_MOTION = 16, DYNAMIC_NOT_SMOOTH, DYNAMIC_NOT_ASKED, DYNAMIC_MOVES_RELEASE, DYNAMIC_TURNS_LINE };
const char *dynamic_why(int status);
double      dynamic_switch_time(const DynamicRun *r, int k);

#endif
