/* schedule.h — actuation and time-dependent loads at run time: generated schedule kernels
 * evaluate each value at the current time for every instance it drives, and the results are
 * written into the element data (natural curvature and twist, rest length, hinge angle,
 * stiffness) or added to the external forces. */
#ifndef SRD_SCHEDULE_H
#define SRD_SCHEDULE_H
#include "srd_kernel.h"
#include "srd_model.h"

/* Per-instance data a schedule kernel reads: arc-length fraction and reference position. */
enum { SRD_SCHEDULE_S, SRD_SCHEDULE_X, SRD_SCHEDULE_Y, SRD_SCHEDULE_Z, SRD_SCHEDULE_N_DATA };

typedef struct srd_schedule {
    srd_kernel_fn  fn;          /* adds the n_out components of instance i at out[i * n_out + k] */
    int            actuation;   /* index into the model's actuations, or -1 */
    int            expr;        /* loads: the run-time expression, or -1 */
    int            motion;      /* prescribed motion: index into the model's motions, or -1 */
    int            n, n_out;
    int           *targets;     /* actuation: element instances; loads: model nodes */
    int            columns[4];  /* data columns written (E: every stiffness column) */
    int            prev_columns[4]; /* a moving obstacle's: where columns[k]'s step-start value goes, or -1 */
    int            has_prev;
    int            n_columns;
    int            flag_column; /* natural_from_reference, cleared: the value is absolute */
    double        *base;        /* E: the stiffness columns at the material's E, n * n_columns */
    double        *e0;          /* E: the material's Young's modulus of each instance */
    srd_elem_batch b;
    int32_t       *res;
    double        *data, *out;
} srd_schedule;

typedef struct srd_schedules {
    int           n;
    srd_schedule *a;
    double       *fext_const;  /* n_dofs: the external forces that do not change with time */
    int           has_loads;   /* some schedule drives loads: fext is rebuilt from fext_const */
} srd_schedules;

/* fns[k] evaluates actuation actuation[k] (or, when that is -1, the loads whose expression
 * is expr[k]). set_data[j] is the data the kernels of element set j read; fext the external
 * forces without the time-dependent loads. */
void srd_schedules_build(srd_schedules *S, const srd_model *m, int n, const srd_kernel_fn *fns,
                         const int *actuation, const int *expr, double *const *set_data, const double *fext);
/* Evaluates every schedule at time t, `dt` being the simulation's time step, and writes the
 * values into set_data and fext; a moving obstacle's step-start pose is its value at t - h, h
 * being the step the element kernels take (a part of dt when a step is subdivided). */
void srd_schedules_apply(srd_schedules *S, const srd_model *m, const double *params, double t, double dt, double h,
                         double *const *set_data, double *fext);
void srd_schedules_free(srd_schedules *S);
/* Evaluates the schedule of prescribed motion k at time t (value, then its first and second
 * time derivatives: 9 numbers per node of a move, 3 for a rotation) and returns them, or NULL
 * when the motion has no schedule. */
const double *srd_schedules_motion(srd_schedules *S, int k, const double *params, double t, double dt);
/* Components of an actuation's value: 2 for curvature, 3 for an obstacle's centre, axis,
 * point or normal, else 1. */
int  srd_actuation_components(const char *target);
/* True when actuating `target` (curvature, twist, rest_length, angle, E) writes data column
 * `column`: such columns must stay run-time inputs of the element kernels. */
int  srd_actuation_drives(const char *target, const char *column);
/* True when static load steps ramp data column `column` of element kind `kind` with the loads:
 * the natural shapes (columns *_bar) and the pressure of pressure elements. Such columns stay
 * run-time inputs of the kernels. */
int  srd_column_ramped(const char *kind, const char *column);

#endif
