/* objective.h — an `optimize` block's objective evaluated on a run, with its derivatives.
 *
 * The objective J = F(p_N, v_1..v_K, params) is an expression of the final values p_N of the
 * probes of srd_objective_analysis ("slots": a node probe's three components in a row, a force
 * probe's force; elab_objective_probe_width), of
 * its terms' values v_k and of the params. A term is
 *   integral(g):           v = sum_n w_n g(p_n, t_n, params), the trapezoidal rule over the
 *                          recorded steps n = 0..N (w_0 = (t_1 - t_0) / 2, w_n = (t_(n+1) -
 *                          t_(n-1)) / 2, w_N = (t_N - t_(N-1)) / 2);
 *   track(h, "file.csv"):  v = sum_i (h(p(t_i), t_i, params) - y_i)^2 over the file's rows, p(t_i)
 *                          the probes interpolated linearly between the two steps around t_i;
 *   track(rod.c, "f.csv"): v = sum_i (c(s_i) - y_i)^2, c(s_i) the rod's coordinate c interpolated
 *                          linearly between its nodes at their reference arc-length fractions,
 *                          in the final configuration q_N.
 * F, g and h are lowered into DAGs and differentiated symbolically, so every derivative below is
 * exact given the run: a dynamic adjoint needs, per recorded step n, dJ/dp_n
 * (objective_step_slopes; objective_slots_to_dofs makes it dJ/dq_n), at the end dJ/dp_N through
 * F (objective_final_slopes) or as a DOF vector with the curves' share (objective_final_dofs),
 * and the params' explicit share (objective_param_slope). A static
 * objective is the case N = 0 with no integrals and no tracks over time. */
#ifndef SRD_SENS_OBJECTIVE_H
#define SRD_SENS_OBJECTIVE_H
#include <stdbool.h>
#include "lower.h"
#include "sens/grad.h"

/* The probe values a run recorded at each step, its final configuration and its params. */
typedef struct ObjectiveRun {
    int           n_steps;  /* records 0..n_steps (0 for a static equilibrium) */
    double       *t;        /* n_steps + 1 times, increasing */
    double       *slots;    /* (n_steps + 1) * n_slots probe values, record by record */
    double       *q;        /* the final configuration (n_dofs), owned */
    const double *params;   /* the run's param values (model order) at its end */
    double       *params_at;/* (n_steps + 1) * n_params: at each record (a controller sets inputs) */
    int           cap;
} ObjectiveRun;

typedef struct ObjectiveTerm {
    LoweredElement g;       /* the integrand or the tracked value (not for a curve) */
    ExprId        *slopes;  /* d(g)/d(input i) */
    /* Kept by objective_value for the derivatives: */
    double        *rows;    /* tracks: per row, 2 (h - y) */
    int           *at;      /* tracks over time: per row, the record before t_i */
    double        *w;       /* tracks: per row, the weight of the record (node) after t_i (s_i) */
} ObjectiveTerm;

typedef struct Objective {
    const srd_model *m;
    int              n_slots;      /* probe slots per record */
    bool             forces;       /* the analysis has force probes (reactions, contact forces) */
    LoweredElement   f;            /* F: probe slots, then the terms' values (data slots) */
    ExprId          *f_slopes;     /* dF/d(input i) */
    int              n_terms;
    ObjectiveTerm   *terms;
    /* Kept by objective_value: */
    double          *value_of_term; /* v_k */
    double          *df_dterm;      /* dF/dv_k */
    double          *df_dslot;      /* dF/dp_N (n_slots) */
    double          *df_dparam;     /* dF/dparam, explicit (n_params) */
} Objective;

/* Lowers the objective of model m (elaborated from prog) and its terms; false with a message. */
bool   objective_prepare(Objective *ob, const Program *prog, const srd_model *m, char *err, size_t err_n);
void   objective_free(Objective *ob);

/* J on a run; keeps what the derivatives below read (call it first). */
double objective_value(Objective *ob, const ObjectiveRun *run);
/* dJ/dp_n through the terms over time (integrals, tracks of probes), n = 0..n_steps: n_slots
 * values, added to out. The final probes' direct share (through F) is not included: see
 * objective_final_dofs. */
void   objective_step_slopes(const Objective *ob, const ObjectiveRun *run, int n, double *out);
/* dJ/dp_N through F alone (the objective's final probe values): n_slots values, added to out. */
void   objective_final_slopes(const Objective *ob, double *out);
/* dJ/dq_N of the final configuration's direct share: F's final probe values and the curves;
 * n_dofs values added to dq. */
void   objective_final_dofs(const Objective *ob, const ObjectiveRun *run, double *dq);
/* The explicit dJ/d(param k) at fixed probe values (through F, the integrands and the tracked
 * values); the share through the state is the adjoint's or the sensitivities'. */
double objective_param_slope(const Objective *ob, const ObjectiveRun *run, int k);
/* The same split by record: dJ/d(the params' values at record n) at fixed probe values, added to
 * out (n_params): what a controller's inputs, whose values change over the run, take. */
void   objective_step_param_slopes(const Objective *ob, const ObjectiveRun *run, int n, double *out);
/* Adds per-slot values (n_slots, e.g. objective_step_slopes) onto the DOFs they read (the state
 * probes'). */
void   objective_slots_to_dofs(const srd_model *m, const double *slot_values, double *dq);
/* Adds the force probes' slots' values onto dforce (GRAD_FORCE_WIDTH per probe of the analysis:
 * the force's three first). */
void   objective_slots_to_forces(const srd_model *m, const double *slot_values, double *dforce);

/* The records of a run: objective_record_start, then objective_record once per state (the
 * start, then after each step). */
void   objective_record_start(ObjectiveRun *run, const srd_model *m, const double *params);
void   objective_record(ObjectiveRun *run, const Objective *ob, srd_sim *s);
void   objective_run_free(ObjectiveRun *run);
/* The point's analysis run and recorded: its static equilibrium (one record), or its simulate
 * block from its start (one record per step, as point_simulate runs it). 0, or the failing
 * solve's code. */
int    objective_run_point(const Objective *ob, StaticPoint *pt, ObjectiveRun *run);

#endif
