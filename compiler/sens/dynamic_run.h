/* dynamic_run.h — what the passes over a recorded simulation share (dynamic.c records the run
 * and the params' tracks; dynamic_forward.c linearises its steps and carries the tangents forward;
 * dynamic_adjoint.c runs the transposes backward): the records, the tracks, the tangents and the
 * helpers each file lends the others (prefixed dyn_). Internal to compiler/sens. */
#ifndef SRD_SENS_DYNAMIC_RUN_H
#define SRD_SENS_DYNAMIC_RUN_H
#include <stdbool.h>
#include <stddef.h>
#include "sens/control_tangent.h"
#include "sens/dynamic.h"
#include "sens/schedule_tangent.h"
#include "sens/static.h"

/* A sample of the control block before a step: its time and step, and the controller's values
 * and the params before it (those after it are the step's). */
/* What the forces read after a step take from it (sim.h: state_behind): its start's q0, v0 and
 * elements' state, its length, whether the state was still at its start, whether the sim was
 * dynamic, and the contact pairs its solve held; at the run's start, the start's. */
typedef struct View {
    double  *q0, *v0, **S;
    double   dt;
    int      behind, dynamic;
    int     *pairs, n_pairs; /* the contact pairs the step held (srd_pairs_held: 2 parts each) */
    unsigned char *released; /* the releases done then (srd_sim.released; NULL without releases) */
} View;

typedef struct Sampled {
    double  t, dt;
    double *data, *params;
    View   *view; /* a controller that reads forces: the step before the sample's */
} Sampled;

/* One accepted implicit substep: its start, its end, and the step it ends (0 if not the last
 * substep of its step). */
typedef struct Record {
    double   t, dt;   /* t: its end */
    long     step;
    double  *q0, *v0, *a0, *q1, *v1;
    double **S0;      /* per set: n * n_state */
    int     *pairs;   /* the contact pairs its solve held (srd_pairs_held: 2 parts each) */
    int      n_pairs;
    double  *params;  /* with a controller: the params (its inputs) the substep ran with */
    unsigned char *released; /* the releases done when it ran (NULL without releases) */
    double  *axes;    /* the sliding clamps' lines at its end, when a rotation turns them (else NULL) */
    Sampled *sample;  /* the controller's sample before it (the first substep of a step), or NULL */
    double  *bodies0; /* rigid bodies at its start: their axes, momenta, torques (dyn_bodies_save) */
} Record;

/* A stretch of the run from a checkpoint: recomputed to record it when the records of the whole
 * run would not fit the memory allowed. */
typedef struct Segment {
    char  *checkpoint;
    size_t size;
    long   first, steps; /* steps first+1 .. first+steps */
    unsigned char *released; /* the releases done at its start (the checkpoint keeps none) */
} Segment;

/* Adjoints of one record's inputs besides the state: the kernels' data (per set), the params
 * read directly, the loads, and (summed over the run) the masses. */
typedef struct Pull {
    double **lc, *lp, *lfext, *lM, *lq_eval;
    double  *lq_end;          /* a split step's constraints' at its end (dyn_split_set) */
    double  *lmq, *lmv, *lma; /* the driven DOFs' end position, velocity, acceleration */
    double   lalpha, lbeta;   /* the dampings' (the run's, as lM's) */
    double  *lK;              /* beta's share: K0^T lambda by DOF (rhs_adjoint), for the slides' */
    double  *lJ;              /* the rigid bodies' principal moments' (3 per body; the run's, as lM's) */
} Pull;

/* How param k moves the model: the derivative of the data the runtime reads at a time t
 * (columns after the schedules, external forces), of the masses and of the prescribed motion.
 * The static part (what elaboration gives) comes from one seeded elaboration, exactly
 * (static_point_tangent), or from four samples at nearby values when elaboration carries no
 * derivative along the param; the schedules' part is exact, at each time asked. */
typedef struct Track {
    int         status;
    int         param;
    Stencil     st;
    double      hk;      /* the switch test's step (schedule_switch_step) */
    double     *dmass, *dfext, *dparams;
    double     *dfext0;  /* the constant forces' tangent */
    double    **dc0;     /* per set: the data's static tangent (E schedules' bases included) */
    double     *dE;      /* per object: its material's E's tangent (E schedules' e0) */
    double      dalpha, dbeta; /* the mass- and stiffness-proportional damping's tangents */
    double      dpairs[5]; /* the `contact` block's values' (ElabTangent.pairs) */
    double     *dradius;  /* per object: its own contact radius' (StaticTangent.radius; NULL: none) */
    double     *dinit;   /* the control block's data's initial values' (its vars') */
    /* a param that moves the reference geometry: the start's configuration (every DOF; a held
     * DOF keeps it through the run) and the elements' state, and the sliding clamps' axes */
    bool        geometry;
    double     *dx0, **dS0, *daxis;
    bool        moves_anchor; /* prescribed motion moves a sliding clamp's anchor (its line with it) */
    bool        static_kink; /* a switch of the elaborated values lies within the param's reach */
    double     *dmq, *dmv, *dma; /* the driven DOFs' prescribed position, velocity, acceleration (n_dofs) */
    double    **dc;      /* per set, at the time last asked */
    double      at, h;   /* that time and step */
    bool        kink;    /* a switch within the param's stencil was seen (at kink_time): no derivative */
    double      kink_time;
    double     *dinertia; /* the rigid bodies' principal moments' (3 per body) */
} Track;

/* Values of the state and their tangents (or adjoints): q, v, a (n_dofs) and per set S. */
typedef struct Tan {
    double  *q, *v, *a;
    double **S;
    double  *B;  /* per rigid body: its axes' turn, its momentum's and its torque's (SRD_BODY_TAN) */
} Tan;

struct DynamicRun {
    StaticPoint       *b;
    const GradOptions *o;
    srd_method         method;
    long               steps;
    int                n_sets, n_dofs, n_params;
    /* the start: the state S_ref and configuration q_ref a static start carries from */
    bool               from_equilibrium;
    double            *q_ref, **S_ref, *q_start, *q0_start; /* q0_start: the sim's q0 then (a driven
                                                              DOF's may be its reference) */
    double           **dq_eq;       /* per param: the static start's derivative */
    int               *eq_status;
    Segment           *segments;
    int                n_segments;
    long               per_segment;
    bool               kept;        /* the first run's records were kept (one segment) */
    Record            *records;
    long               n_records, cap_records;
    Record             pending;
    bool               have_pending;
    double            *qT, *vT;
    double            *bodiesT;     /* the bodies at the run's end (dyn_bodies_save) */
    long               subdivided;
    double             bytes_now, peak_bytes, record_bytes;
    double             run_seconds, pass_seconds; /* the first run; the passes so far */
    Track             *tracks;
    int               *start_pairs, n_start_pairs; /* the start's, as its probes read it */
    double             start_dt;
    int                start_dynamic;
    double            *start_axes;  /* the sliding clamps' lines at the start (3 per slide) */
    double            *v_start;     /* the velocities at the start */
    bool               lines_turn;  /* a rotation turns sliding clamps' lines (Record.axes kept) */
    double            *slide_res;   /* the linearised step's residual at its sliding nodes (n_dofs; the
                                     * part a turning line adds to their rows, sens_slides_turn_rows) */
    Tan               *before;      /* a controller that reads forces, in the forward pass: per param the
                                     * tangents at the previous record's start */
    Tan               *ends, *last; /* after a forward pass, per param: the tangents at the end, and at the
                                     * last step's start (force probes read both) */
    ScheduleTangents  *schedules;   /* the schedules' exact tangents (NULL until the tracks open) */
    ControlTangents   *control;     /* the control block's (NULL without one) */
    bool               control_forces; /* it reads force probes (a sample's View is recorded) */
    double           **dctl;        /* per param: the controller's values' tangents (forward pass) */
    double            *lctl;        /* their adjoint (backward pass) */
    bool               control_near; /* the backward pass met a sample near a switch */
    double            *params_start, *params_end; /* the params before the first sample and at the end */
    DynamicOptions     opt;
};

/* The reactions where the sim stands, as srd_sim_reactions gives them, and every DOF's residual
 * they come from (srd_sim_reaction_residual: a reaction's tangent and adjoint take its part across
 * the sliding lines). */
typedef struct Reactions {
    double *react, *res;
} Reactions;

/* Where and when force probes are read: the positions, the time and the step. */
typedef struct Instant {
    const double *q;
    double        t, dt;
} Instant;

/* A point where an acceleration is taken (srd_sim_acceleration): configuration q, velocity v,
 * the acceleration a there, time t. */
typedef struct AccelPoint {
    const double *q, *v, *a;
    double        t;
} AccelPoint;

/* The helpers one file lends the others; each is described where it is defined. */

/* dynamic.c: the run, its records and segments, the params' tracks */
size_t dyn_set_state_len(const srd_sim *s, int k);
double *dyn_dup(const double *a, size_t n);
bool dyn_asked(const DynamicRun *r, int k);
bool dyn_segment_records(DynamicRun *r, int i);
size_t dyn_grad_room(const DynamicRun *r);
void dyn_note_kink(Track *t, bool kink, double at);
void dyn_track_motion(DynamicRun *r, Track *t, double at);
void dyn_track_at(DynamicRun *r, Track *t, double at, double h);
void dyn_open_tracks(DynamicRun *r);

/* dynamic_forward.c: a step linearised, the start, the samples, the forward pass, force probes */
Tan dyn_tan_new(const DynamicRun *r);
void dyn_tan_free(const DynamicRun *r, Tan *t);
void dyn_tan_swap(Tan *a, Tan *b);
double dyn_dot(const double *a, const double *b, size_t n);
void dyn_set_params(DynamicRun *r, const double *params);
void dyn_set_released(DynamicRun *r, const unsigned char *released);
void dyn_put_record(DynamicRun *r, const Record *x);
void dyn_linearize(DynamicRun *r, const Record *x);
double *dyn_behind(const DynamicRun *r, const double *q, const double *v);
void dyn_acceleration_tangent(DynamicRun *r, const AccelPoint *e, const Track *t, const double *dq0, Tan *in, double *g);
/* Whether set k's rows split in the linearised step (constraints under the midpoint rule: their
 * forces at the evaluation point, their constraints at the end). */
bool dyn_split_set(const srd_sim *s, int k);
/* Whether DOF d is a constraint's multiplier: the step's own, never read at the evaluation point
 * b q1 + (1 - b) q0 (sim.c's assemble), and no velocity damping reads. */
bool dyn_multiplier(const srd_model *m, int d);
int dyn_solve_step(srd_sim *s, double *g, bool transposed);
srd_eval_ctx dyn_step_ctx(const srd_sim *s, double *g);
void dyn_damping_constants(const DynamicRun *r, double dt, double *c1, double *c0);
double dyn_damped_velocity(const DynamicRun *r, const Record *x, int d);
void dyn_slide_tangent(const DynamicRun *r, const Track *t, const double *q, double *w);
void dyn_slides_project_velocity(const DynamicRun *r, const Record *x, const Track *t, double *v);
void dyn_slides_project_velocity_adjoint(const DynamicRun *r, const Record *x, double *lv, double *grad,
                                         const int *status);
srd_eval_ctx dyn_stiffness_ctx(const srd_sim *s, const double *q, const double *q0, double *g);
bool dyn_stiffness_set(const srd_sim *s, int k);
srd_elem_batch dyn_rows_batch(const srd_sim *s, int k, bool every);
size_t dyn_rows_len(const srd_sim *s, bool every);
void dyn_stiffness_times(DynamicRun *r, const srd_eval_ctx *ctx, const double *v, bool every);
srd_elem_batch dyn_with_direction(const srd_sim *s, int k, bool every, const double *u, const double *dc,
                                  double **data, double **ddata);
bool    dyn_damps(const DynamicRun *r, int d);
/* Zeroes the multipliers' rows of g (free rows, or every DOF's): damping has none. */
void    dyn_drop_multiplier_rows(const DynamicRun *r, double *g, bool every);
/* dv (a velocity tangent at a start from the reference) with each sliding node's the anchor's
 * across its line. */
void    dyn_slides_start_velocity(const DynamicRun *r, const Track *t, double *dv);
double *dyn_damped_velocities(const DynamicRun *r, const Record *x);
void dyn_at_start(DynamicRun *r, const Record *first);
double *dyn_start_q0_share(const DynamicRun *r, const double *x);
ControlSample dyn_sample_of(const DynamicRun *r, const Sampled *x, const double *q, const double *forces);
double *dyn_sample_forces(DynamicRun *r, const Record *x, Reactions *rx);
Reactions dyn_reactions_here(DynamicRun *r);
bool dyn_view_damped(const DynamicRun *r, const Track *t);
void dyn_reactions_free(Reactions *x);
double dyn_control_kinks_by_forward(DynamicRun *r);
void dyn_control_start(const DynamicRun *r, double *grad);
void dyn_control_statuses(const DynamicRun *r, int *status);
void dyn_param_status(DynamicRun *r, int *status);
void dyn_mark_switches(DynamicRun *r, int *status);
void dyn_forget_ends(DynamicRun *r);
Instant dyn_at_record_end(DynamicRun *r, const Record *x);
Instant dyn_at_start_record(DynamicRun *r);

/* dynamic_adjoint.c: the pull of a record's inputs, an acceleration's transpose */
void dyn_pull_clear(const DynamicRun *r, Pull *p);
void dyn_pull_params(DynamicRun *r, const Pull *p, double at, double h, double *grad, int *status);
void dyn_acceleration_adjoint(DynamicRun *r, const AccelPoint *e, double *la, double *lres, Tan *adj, Pull *p);
void dyn_residual_adjoint(DynamicRun *r, const AccelPoint *e, const double *lres, Tan *adj, double *lq0, Pull *p);

/* dynamic_explicit.c: the steps of explicit methods (symplectic Euler, Verlet, RK4), forward and
 * transposed: every derived param's tangent carried over record x (status as forward_record's), and
 * the adjoint `end` of x's end carried to its start (into `start`, then swapped into end). */
bool dyn_explicit(const DynamicRun *r);
void dyn_explicit_forward(DynamicRun *r, const Record *x, Tan *tans, int *status);
void dyn_explicit_adjoint(DynamicRun *r, const Record *x, Tan *end, Tan *start, Pull *p, double *grad, int *status);

/* dynamic_bodies.c: rigid bodies' records and their share of a step, forward and transposed */
double *dyn_bodies_save(const srd_sim *s);
void    dyn_bodies_put(srd_sim *s, const double *saved);
/* The turn each body took in the step that just ended (the runtime has folded it into its axes). */
void    dyn_bodies_turn(const srd_sim *s, double *q1);
/* The elements' frame state's tangents (or adjoints: into t->B, cleared) at record x's start. */
void    dyn_bodies_frames(const DynamicRun *r, const Record *x, const Tan *t);
void    dyn_bodies_frames_adjoint(const DynamicRun *r, const Record *x, Tan *t);
/* The bodies' rows of step_rhs (into g, free rows), and their transpose (into start->B and lJ). */
void    dyn_bodies_rows(const DynamicRun *r, const Record *x, const Tan *in, const Track *t, double *g);
void    dyn_bodies_rows_adjoint(const DynamicRun *r, const Record *x, const double *lg, Tan *start, double *lJ);
/* After record x's solve (out->q holds each turn's tangent): out->B and the rotations' velocities;
 * the transpose from end's adjoints into start->B, lq1 (the turns') and lJ (3 per body). */
void    dyn_bodies_finish(const DynamicRun *r, const Record *x, const Track *t, const Tan *in, Tan *out);
void    dyn_bodies_finish_adjoint(const DynamicRun *r, const Record *x, Tan *end, double *lq1, Tan *start,
                                  double *lJ);
/* The rotation DOFs back to zero, as srd_bodies_finish leaves them. */
void    dyn_bodies_settle(const srd_sim *s, double *q);
/* The start's tangent along t (the momenta: J w0), and an adjoint's pull on it. */
void    dyn_bodies_start(const DynamicRun *r, const Track *t, Tan *in);
double  dyn_bodies_start_pull(const DynamicRun *r, const Track *t, const Tan *adj);
/* A body's or a motor's probe at the run's end (derived: a body's axes, angular velocity and
 * momentum; a motor's effort): whether it is, its tangent along param k after the forward pass
 * (end: the tangents there), and for the adjoint the seeds of w . its values (into lq, the end's
 * configuration's, and lB, its bodies') and what each param adds directly (direct, n_params). */
bool    dyn_end_probe_derived(const srd_probe *pr);
void    dyn_end_probe_tangent(DynamicRun *r, int k, const srd_probe *pr, const Tan *end, double *out);
void    dyn_end_probe_seed(DynamicRun *r, const srd_probe *pr, const double *w, const int *status, double *lq,
                           double *lB, double *direct);
/* A joint's force or torque (on its body b, the torque about the joint's point now) at record x's
 * end, the sim there: its tangent from the joint's parts' gradient g there and its change dg
 * (every DOF's rows), with end's tangents (the turn's, at the rotation DOFs, and the axes');
 * and for the adjoint of w . its value, the weights lam on g's rows (added) and the seeds of the
 * end's configuration (lq: the turn's) and bodies (lB). */
/* The gradient of joint pr's constraint instances where the sim stands (every DOF's rows). */
double *dyn_joint_gradient(DynamicRun *r, const srd_probe *pr);
void    dyn_joint_wrench_tangent(const DynamicRun *r, const Record *x, const srd_probe *pr, const double *g,
                                 const double *dg, const Tan *end, double *out);
void    dyn_joint_wrench_seed(const DynamicRun *r, const Record *x, const srd_probe *pr, const double *g,
                              const double *w, double *lam, double *lq, double *lB);
/* A start from a static equilibrium (srd_static folds the bodies' turns into their axes): the axes'
 * turn is the equilibrium's dq at the rotation DOFs (dq: the static derivative), and the pull of
 * an adjoint on it. */
void    dyn_bodies_equilibrium_start(const DynamicRun *r, const double *dq, Tan *in);
double  dyn_bodies_equilibrium_pull(const DynamicRun *r, const double *dq, const Tan *adj);
/* Newmark's start torque -(residual) from the start residual's tangent g (free rows); its
 * transpose into lres and lfext. */
void    dyn_bodies_start_torque(const DynamicRun *r, const Track *t, const double *g, Tan *in);
void    dyn_bodies_start_torque_adjoint(const DynamicRun *r, Tan *adj, double *lres, double *lfext);

#endif
