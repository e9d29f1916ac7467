/* grad.h — `srdc grad`: the derivative of every probe of a model's static equilibrium with
 * respect to every param, by one linear solve per param with the equilibrium's stiffness. */
#ifndef SRD_SENS_GRAD_H
#define SRD_SENS_GRAD_H
#include <stdbool.h>
#include <stdio.h>
#include "arena.h"
#include "ast.h"
#include "kernels.h"
#include "sens/tangent.h"
#include "sim.h"

enum { GRAD_AUTO, GRAD_STATIC, GRAD_SIMULATE };

typedef struct GradOptions {
    const char  *file;
    const char **overrides;  /* "name=value" */
    int          n_overrides;
    bool         quiet;
    int          analysis;   /* GRAD_*: AUTO derives what an objective would read (srd_objective_analysis) */
    bool         adjoint;    /* a simulation's derivatives by the adjoint instead of forward sensitivities */
    const char  *objective;  /* --objective EXPR: an objective to derive (as `minimize = EXPR;`), or NULL */
    FILE        *errors;     /* where messages go; NULL: stderr */
} GradOptions;

/* Prints d(probe)/d(param) with units for the static block's probes; returns an exit status. */
int grad_model(const GradOptions *o);

/* A model elaborated with o's params, its kernels (and their tangent kernels) and a sim for its
 * static block: what derivatives are taken at once srd_static has solved it. */
typedef struct StaticPoint {
    Arena        arena;
    Program      prog;
    srd_model   *m;
    ModelKernels mk;
    bool         have_kernels;
    KernelTable  kt;
    srd_sim      s;
    KernelTangent *tangents;      /* every input's (static_point_tangents builds them when first needed) */
    KernelTangent *data_tangents; /* the data and params' alone: what most static derivatives need */
    SrdJit       *tangent_jit;  /* the tangent kernels' compiled code, or NULL (interpreted) */
    KernelTangent *hessian_tangents; /* of every set's K z (kernel_hessian_tangent_build), when needed */
    SrdJit       *hessian_jit;
    char        (*why_switch)[320]; /* per param: where a simulation's switch was found */
    struct ScheduleTangents *schedules; /* the schedules' exact param tangents (built when first needed) */
    bool         schedules_tried;
} StaticPoint;

/* How param k moves the model's numbers before any schedule: each set's data, the constant
 * external forces, the DOFs' masses and the objects' Young's moduli; `switched` when a switch
 * (max, a comparison, ...) lies within the param's reach. Exact: one elaboration with the param
 * seeded (elab_tangent.h). */
typedef struct StaticTangent {
    double **data;
    double  *fext, *mass, *E;
    double   alpha, beta; /* the mass- and stiffness-proportional damping's */
    bool     switched;
    double   pairs[5];    /* the `contact` block's values' (ElabTangent.pairs) */
    double  *radius;      /* per object: its own contact radius' (ElabTangent.object_contact_radius) */
    bool     moves_release; /* it moves the time of a `release` (simulations: no derivative) */
    double  *dinit;       /* the control block's data's initial values' (its vars') */
} StaticTangent;
/* False when elaboration carries no derivative along the param (it reaches rigid bodies,
 * joints, contact pairs or the geometry): differences of samples give it then. */
bool static_point_tangent(StaticPoint *b, const GradOptions *o, int k, StaticTangent *t);
void static_tangent_free(StaticTangent *t, int n_sets);
/* The point's schedule tangents (schedule_tangent.h), built on first use; NULL when they could
 * not be built. */
struct ScheduleTangents *static_point_schedules(StaticPoint *b);
/* Builds and compiles the tangent kernels of every set's K z (b->hessian_tangents) unless built;
 * false with a message. */
bool static_point_hessian_tangents(StaticPoint *b, char *err, size_t err_n);

/* Builds the point's tangent kernels of every input (b->tangents) unless built; false with a
 * message. */
bool static_point_tangents(StaticPoint *b, char *err, size_t err_n);
/* Compiles them (kernel_tangents_compile), building them first; false with a message. */
bool static_point_compile_tangents(StaticPoint *b, char *err, size_t err_n);

/* Returns an exit status (messages on stderr); close the point whatever it returns. */
int  static_point_open(StaticPoint *b, const GradOptions *o);
void static_point_close(StaticPoint *b);
/* dq/dp of param k at the solved equilibrium (n_dofs values); STATIC_DERIVED, or why not. */
enum { STATIC_DERIVED, STATIC_SINGULAR, STATIC_MOVES_GEOMETRY, STATIC_OUTSIDE_RANGE, STATIC_NOT_SAMPLED,
       STATIC_NOT_SMOOTH, STATIC_MOVES_MOTION, STATIC_MOVES_PAIRS, STATIC_NO_KERNELS, STATIC_TURNS_CLAMP };
int  static_point_derivative(StaticPoint *b, const GradOptions *o, int k, double *dq);
/* The same, and (each when not NULL) d(reactions)/dp (n_dofs: what srd_sim_reactions gives,
 * derived) and the static block's contact probes' derivatives (3 per probe, at the probe's
 * index; NaN for the parts' forces on each other). */
int  static_point_derivative_all(StaticPoint *b, const GradOptions *o, int k, double *dq, double *dreaction,
                                 double *dcontact);
/* Whether analysis a has a probe of kind (SRD_PROBE_*): reactions and contact forces are
 * derived only when asked (they need every input's tangent kernels). */
bool grad_has_probe(const srd_analysis *a, int kind);
/* Why static_point_derivative gave no derivative, in words ("" for STATIC_DERIVED). */
const char *static_point_why(int status);
/* The model elaborated with param k at `value` (the others as o gives them) and a sim of it with
 * the point's kernels: what a derivative along the param differences. False when it could not be
 * built or has another structure; close it whatever it returns. */
typedef struct PointSample {
    Arena      arena;
    Program    prog;
    srd_model *m;
    srd_sim    s;
    bool       ok;
} PointSample;
bool point_sample_open(const StaticPoint *b, const GradOptions *o, int k, double value, PointSample *x);
void point_sample_close(PointSample *x);

/* Four values of a param around its value and the weights that make a combination of samples
 * there its derivative: a central fourth-order stencil, or, within 2h of an end of the param's
 * range, a one-sided third-order one (NLopt's searches reach the ends). False when the range is
 * too narrow for either. */
typedef struct Stencil {
    double at[4], w[4];
} Stencil;
bool point_stencil(const srd_param *p, Stencil *st);
/* Whether values f[0..3] sampled at a central stencil (n in all, rows of `width` columns of one
 * unit each; base: the values at the param's own value, d: their derivative) have a switch
 * between the samples: a fourth difference above 1e-3 h of the column's largest derivative
 * (smooth data stay far below it unless they vary on the scale of the step itself, where the
 * differences would not be accurate either) and above rounding. A kink of a min, max, abs, step
 * or periodic wrap in a schedule puts it near h times the slope's jump. */
bool point_switches(const Stencil *st, const double *const *f, const double *base, const double *d, size_t n,
                    size_t width);
/* How the contact pairs' data move between four samples of a param (models[i] at st->at[i]):
 * the contact block's values' derivative (ElabTangent.pairs's order) into dpairs. False when the
 * samples move pair data that are not the block's: the parts' own contact radii, rigid bodies'
 * shapes. */
bool point_pairs_of_samples(const srd_model *base, const srd_model *const models[4], const Stencil *st,
                            double dpairs[5]);

/* Prints "name = value unit:", the line above a param's derivatives. */
void grad_print_param_head(const srd_param *p);
/* The same when status (of static_point_derivative; -1: p sets the discretisation) is
 * STATIC_DERIVED, else why not; returns whether it is. */
bool grad_print_param_head_or_why(const srd_param *p, int status);
/* Prints "  d(probe)/d(param) = value unit" from the state's derivative dq (n_dofs). */
void grad_print_probe(const srd_model *m, const srd_probe *pr, const srd_param *p, const double *dq);
/* Prints the derivative v of a probe derived at a simulation's end besides the state: a
 * reaction's force and moment (6 values), a contact force's 3, a body's vector (3), a motor's
 * effort (1); NaN: not derived. */
void grad_print_force(const srd_model *m, const srd_probe *pr, const srd_param *p, const double *v);

/* `srdc grad` of the simulate block (grad_dynamic.c): its probes at the end of the run. */
int grad_simulation(StaticPoint *b, const GradOptions *o);
/* The same without printing: dq[k] (n_dofs) the final state's derivative along param k
 * (forward, or by the adjoint for the DOFs the probes read), dforce[k] (may be NULL) the other
 * probes' (grad_end_probe: GRAD_FORCE_WIDTH values per probe of the simulate block: a reaction's
 * 6, a contact force's 3, a body's vector 3, a motor's effort 1; NaN where not derived), status[k] STATIC_DERIVED or why not (grad_simulation_why);
 * stats the run's figures (may be NULL). An exit status, with a message in why on failure. */
enum { GRAD_FORCE_WIDTH = 6 };
/* Whether pr is derived at the run's end besides the state (dforce): a force, a body's or a
 * joint's probe. */
bool        grad_end_probe(const srd_probe *pr);
typedef struct DynamicStats DynamicStats;
int         grad_simulation_derive(StaticPoint *b, const GradOptions *o, double **dq, double **dforce, int *status,
                                   DynamicStats *stats, char *why, size_t why_n);
const char *grad_simulation_why(const StaticPoint *b, int k, int status);

/* How param k moves the runtime's data (for modal sensitivities): d(columns)/dp per set (n *
 * n_data each) and d(mass)/dp per DOF (modal_dof_mass). STATIC_DERIVED, or why not; free it
 * with data_derivative_free whatever it returns. */
typedef struct DataDerivative {
    double **columns;
    double  *mass;
    double   pairs[5]; /* the `contact` block's values' (ElabTangent.pairs) */
    double  *radius;   /* per object: its own contact radius' (NULL: none moves) */
    double  *q0;       /* a moving reference geometry: the reference configuration's (n_dofs), else NULL */
    double **state;    /* then the elements' reference state's (per set) */
    double  *axis;     /* and the sliding clamps' lines' directions' (3 per slide) */
} DataDerivative;
int  static_point_data_derivative(StaticPoint *b, const GradOptions *o, int k, DataDerivative *d);
void data_derivative_free(DataDerivative *d, int n_sets);
/* The simulate block's start: its static equilibrium when it starts there (carried into a
 * start at rest, srd_sim_start_here), and its step and Newton settings on the sim; 0, or the
 * static solve's code. point_simulation_settings sets the settings alone. */
int  point_start_simulation(StaticPoint *b);
void point_simulation_settings(StaticPoint *b);
/* Runs the point's simulate block to its end (from the static equilibrium with `start =
 * equilibrium`); 0, or the failing step's code. The point must have no static-only sim: open it
 * for a model whose objective reads the simulation. */
int  point_simulate(StaticPoint *b);

#endif
