/* schedule_tangent.h — the exact derivative, along one param, of what the schedules write at a
 * time t: actuation values in the element data (E's product rule included), time-dependent
 * loads in the external forces, moving obstacles' poses (and their step-start copies), and the
 * positions, velocities and accelerations prescribed motion gives its held DOFs. Each schedule
 * kernel's rows are differentiated symbolically with respect to its param inputs (the same DAG
 * the runtime's kernel runs) and run on the interpreter tier. With them, every switch of a
 * schedule (min, max, abs, comparisons and the conditionals, tables and sign built on them,
 * floor and the periodic wrap and rounding built on it, atan2's branch cut) has its switching
 * function g and its tangent dg evaluated: a switch within reach of the param's difference
 * stencil (|g| <= 2 hk |dg|) makes the param not smooth at that time. */
#ifndef SRD_SENS_SCHEDULE_TANGENT_H
#define SRD_SENS_SCHEDULE_TANGENT_H
#include <stdbool.h>
#include <stddef.h>
#include "kernels.h"
#include "schedule.h"

typedef struct ScheduleTangents ScheduleTangents;

/* The tangent programs of every schedule kernel of mk (the model's actuations, loads and
 * motions; the control block's steps are not schedules here). Adds nodes to the kernels' DAGs.
 * NULL, with a message in err, when a program could not be built. */
ScheduleTangents *schedule_tangents_build(ModelKernels *mk, const srd_model *m, char *err, size_t err_n);
void              schedule_tangents_free(ScheduleTangents *T);

/* hk of the switch test for param p: the step of its difference stencil (point_stencil),
 * 1e-3 |p|, or 1e-3 of its range when p is 0. */
double schedule_switch_step(const srd_param *p);

/* What srd_schedules_apply(S, m, params, t, dt, h, ...) writes, differentiated along the params'
 * tangents dp (n_params: a unit vector for one param; a controller's inputs add theirs):
 *   dset_data[j] (n * n_data per set) holds on entry the STATIC tangent of set j's data (the
 *     elaborated values' derivative, before any schedule); the columns the schedules write are
 *     overwritten with their exact derivative at t (a moving obstacle's step-start columns with
 *     the pose's at t - h; the natural-from-reference flag a schedule clears gets 0). For E the
 *     runtime writes value * base / e0: its tangent is
 *         dvalue base / e0 + value dbase / e0 - value base de0 / e0^2,
 *     dbase read from the stiffness columns of dset_data before they are overwritten, and de0
 *     (the material's E of the instance's object) from dE (per object of m, d(E)/dp_k: the
 *     static tangent of the elaborated objects' moduli; NULL: zero).
 *   dfext (n_dofs, may be NULL) gets the time-dependent loads' derivative added (at load factor
 *     1; the caller scales it as it scales fext).
 * S is the schedules srd_schedules_build made for m (the instances' positions, targets, base
 * and e0 are read from it; it is not changed). Returns true when a switch of a schedule lies
 * within reach of the param's stencil (at t, or at t - h for a step-start pose): the value is
 * not smooth in the param there (hk: its stencil's step). */
bool schedule_tangents_apply(const ScheduleTangents *T, const srd_schedules *S, const srd_model *m,
                             const double *params, const double *dp, double hk, double t, double dt, double h,
                             const double *dE, double *const *dset_data, double *dfext);

/* The derivative along the params' tangents dp of what srd_motion_impose(s, t, 1, q, v) and s->prescribed_acc give
 * the DOFs prescribed motion holds (dq, dv, da: n_dofs each, overwritten; zero on DOFs no motion
 * holds, and on nodes that `fixed` (per DOF, srd_sim.fixed) no longer holds). A move's
 * displacement and its time derivatives are differentiated directly; a rotation's positions
 * c + R(angle) r0 through its angle and rates. The frames of rotated rod edges (their twist
 * DOFs) are not derived: left zero. dt is the simulation's step (`dt` in the schedules). Returns
 * true when a switch of a motion's schedule lies within reach (as schedule_tangents_apply). */
bool schedule_tangents_motion(const ScheduleTangents *T, const srd_schedules *S, const srd_model *m,
                              const double *params, const double *dp, double hk, double t, double dt,
                              const unsigned char *fixed, double *dq, double *dv, double *da);

/* Whether the params' tangents dp move (at time t) a rotation whose tangent above leaves part out: one that turns
 * rod edges' frames (their twist DOFs) or a sliding clamp's line. */
bool schedule_tangents_turn_clamps(const ScheduleTangents *T, const srd_schedules *S, const srd_model *m,
                                   const double *params, const double *dp, double t, double dt);

/* For a caller that takes the static tangent from data the schedules have already written (a
 * sim's, after srd_schedules_apply): puts back into dset_data the static tangent of the
 * stiffness columns E schedules scale (their base), from delab (per set n * n_data: the
 * elaborated data's tangent, srd_elemset.data, which no schedule writes). */
void schedule_tangents_static_base(const srd_schedules *S, const srd_model *m, const double *const *delab,
                                   double *const *dset_data);

/* Number of switches found in the schedules' DAGs (tests). */
int schedule_tangents_switches(const ScheduleTangents *T);

#endif
