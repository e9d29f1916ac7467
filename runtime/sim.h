/* sim.h — a model with its compiled kernels, ready to solve: assembly of the residual and
 * Jacobian from the kernels, Newton's method with a backtracking line search, implicit Euler
 * time steps and static equilibrium with load stepping. */
#ifndef SRD_SIM_H
#define SRD_SIM_H
#include <stdbool.h>
#include <stdio.h>
#include "batch.h"
#include "body.h"
#include "schedule.h"
#include "solve.h"
#include "srd_kernel.h"
#include "srd_model.h"

typedef struct srd_sim_kernel {
    srd_kernel_fn   fn;
    srd_kernel_fn   gradient;   /* without the Jacobian, or NULL to use fn */
    srd_kernel_info info;
    srd_batch_owner batch;
} srd_sim_kernel;

typedef struct srd_newton_stats {
    int    iterations;
    double residual;      /* final infinity norm of the residual */
    double history[64];   /* residual norm of each iterate: the first 63, then the latest */
    int    n_history;     /* iterates evaluated; the last one's residual is in s->res */
    int    line_search_cuts;
    int    singular;      /* the last iteration's Jacobian was singular */
} srd_newton_stats;

typedef struct srd_sim {
    const srd_model *m;
    srd_sim_kernel  *kernels;    /* per element set; fn NULL when the set has none */
    srd_solver       solver;
    double          *q, *q0, *v, *v0;   /* n_dofs */
    double          *params;
    double           t, dt;
    double           step_dt;    /* the simulate block's time step (--dt applied): `dt` in actuations
                                  * and loads, which must not change when a step is subdivided */
    /* Between steps the elements' state stays where the last step's kernels read it (its start,
     * with q0) until the next step carries it to q: forces read after a step (reactions, contact
     * and friction, energies, a controller's probes) are the step's own, and a checkpoint keeps
     * them. last_dt is that step's length (a substep's when it was subdivided). */
    int              state_behind;
    double           last_dt;
    double          *res;        /* srd_system_grad_len */
    double          *res_nc, *res_nc_start; /* the forces' share of res (now: srd_system_grad_len; at the line search's start: n_free) */
    double          *dq;         /* n_free */
    double          *trial;      /* n_dofs */
    double          *fext;       /* n_dofs: gravity and loads at full strength */
    double           load_factor;/* static load stepping: fraction of fext applied */
    int              dynamic;    /* 1: include inertia, 0: static */
    /* The implicit scheme's residual is a M (q - qhat) + grad E(b q + (1 - b) q0) - fext. */
    double           inertia_a, stiffness_b;
    double          *qhat, *a0, *qeval, *work;  /* n_dofs each; a0: Newmark's acceleration */
    /* Rayleigh damping -(alpha M + beta K) v: K is the stiffness at the step start, and the
     * velocity of the step is v = c1 (q - q0) + c0 v0, so the force is linear in q, its
     * Jacobian exact and its integral a quadratic term of the incremental potential. */
    double          *damping_k;  /* Jacobian storage: K at the step start (beta > 0) */
    double          *damping_kv0;/* n_free: K v0 */
    double          *damping_x, *damping_y; /* n_free scratch */
    double          *damping_held;/* n_free: K0 times the held DOFs' step velocity (prescribed motion) */
    double           damping_c1, damping_c0;
    srd_schedules    schedules;  /* actuation and time-dependent loads */
    double         **set_data;   /* per element set: the data its kernel reads */
    double           force_scale;/* characteristic force for the convergence test */
    double           length_scale;
    double           tolerance;
    int              max_iterations;
    int              line_search;
    int              conservative; /* every element is an energy: line search on the potential */
    srd_newton_stats last;
    long             total_iterations, steps, rejected;
    FILE            *log;        /* when set, every Newton iteration is reported here */
    double           time_assembly, time_solve; /* seconds in the kernels and in LAPACK */
    struct srd_assembler *assembler; /* helper threads for assembly, or NULL */
    /* Prescribed motion (motion.c): the accelerations of driven DOFs (0 on fixed ones), and per
     * rotated rod edge the reference director and tangent at the last accepted state and the
     * material director at the reference. */
    double          *prescribed_acc;
    unsigned char   *fixed;       /* n_dofs: constrained now (the model's, less what was released) */
    unsigned char   *released;    /* per model release: done */
    int              n_frames;
    double          *frame_d1, *frame_t, *frame_m0;
    double          *slide_axis;  /* 3 per model slide: its line's direction now (slide.c) */
    srd_bodies       bodies;      /* rigid bodies' orientation and momentum (body.c) */
    int              method;      /* the integrator of the step being solved (srd_method) */
    int              n_multipliers; /* constraint multiplier DOFs (joints): an indefinite system */
    int              n_lambda_rows; /* the free ones' residual rows, found with the free numbering */
    int             *lambda_rows;
    double          *end_rows;    /* grad_len scratch: the constraints at the step's end (midpoint) */
    int              kernel_pass; /* 0: every set; 1: all but constraints; 2: constraints only */
    const double    *q_now;       /* the configuration being assembled (constraints hold there) */
    struct srd_pairs *pairs;      /* contact between the model's parts (contact/pairs.h), or NULL */
    struct srd_controller *controller; /* the `control` block (control.h), or NULL; srd_step samples it */
    /* Called around each implicit substep (a simulation's sensitivities record them): BEGIN
     * with the start in q0, v0, a0 and the elements' state, t still the start's; DONE after an
     * accepted one (q, v, a0 its end; t its end); FAILED after one that failed (state restored). */
    void           (*substep_hook)(struct srd_sim *s, int phase, void *ctx);
    void            *substep_ctx;
    /* The state srd_sim_static_sensitivity's kept factor belongs to: q, params, t, load factor. */
    double          *factor_key;
} srd_sim;

enum { SRD_SUBSTEP_BEGIN, SRD_SUBSTEP_DONE, SRD_SUBSTEP_FAILED };


/* y = K(q) x over every DOF (n_dofs values each), held ones included: each element's Hessian (a
 * force's Jacobian) at q with the sim's step start, friction and drag left out as in statics
 * (stiffness_product.c). */
void srd_sim_stiffness_times(srd_sim *s, const double *q, const double *x, double *y);
/* Adds the gradient of instances [lo, hi) of set k at the current state into g (by model DOF). */
void srd_sim_instance_gradient(srd_sim *s, int k, int lo, int hi, double *g);
/* The step length the forces read between steps take (friction's velocity): the last step's
 * (substep's) after a step, s->dt before the first. */
double srd_sim_view_dt(const srd_sim *s);

/* Constraints hold to this (m or rad) when Newton's method stops. */
#define SRD_CONSTRAINT_TOLERANCE 1e-10

/* fns[s] is the compiled kernel of element set s, gradients[s] its gradient-only variant (the
 * array may be NULL). Returns 0, or -1 with a message in err when a set has no kernel, or
 * SRD_SIM_NO_MEMORY when the Jacobian would not fit in memory (srd_memory_limit). */
enum { SRD_SIM_NO_MEMORY = -2 };
int  srd_sim_init(srd_sim *s, const srd_model *m, const srd_kernel_fn *fns, const srd_kernel_fn *gradients,
                  const srd_kernel_info *infos, srd_solver_kind solver, char *err, size_t err_n);
void srd_sim_free(srd_sim *s);
/* Runs share `share` of `shares` of every set's kernel (each set's instances split evenly, in
 * order) with the given contexts: ctx_nc for forces, ctx for energies. */
void srd_sim_run_kernels(const srd_sim *s, const srd_eval_ctx *ctx, const srd_eval_ctx *ctx_nc, bool with_jacobian,
                         int share, int shares);
/* Installs the schedule kernels (see schedule.h) and applies them at the current time;
 * from then on every step evaluates them at its own time. The control block's steps are among
 * them: the controller (control.h) starts anew with them. */
void srd_sim_set_schedules(srd_sim *s, int n, const srd_kernel_fn *fns, const int *actuation, const int *expr);
/* The acceleration explicit methods take (and Newmark's first): at time t (the schedules applied
 * there), configuration q and velocity v, with the sim's step start q0 and elements' state;
 * -(static residual + damping) / mass on free DOFs with mass, 0 elsewhere, sliding nodes' along
 * their lines; the rigid bodies' torques into s->bodies.torque. 0, or 2 when not finite. */
int  srd_sim_acceleration(srd_sim *s, double t, const double *q, const double *v, double *acc);
/* Evaluates the schedules at time t into the element data and the external forces. */
void srd_sim_apply_schedules(srd_sim *s, double t);

/* One Newton solve at the current state (q is the initial guess and the result).
 * Returns 0 on convergence, 1 when it did not converge, 2 on NaN/Inf. */
int srd_newton(srd_sim *s);

typedef enum {
    SRD_IMPLICIT_EULER, SRD_IMPLICIT_MIDPOINT, SRD_NEWMARK, SRD_SYMPLECTIC_EULER, SRD_VERLET, SRD_RK4,
} srd_method;

/* Looks a method up by its name in the language (implicit_euler, ..., rk4); -1 if unknown. */
int srd_method_from_name(const char *name);

/* What a step that fails returns besides Newton's codes: two parts in contact would pass
 * through each other. */
enum { SRD_STEP_CROSSED = 3 };

/* One step of size s->dt with `method`; an implicit step that fails is retried with 2, 4, ...
 * substeps (at most `max_halvings` times). Returns 0, or the Newton code of the failure
 * (explicit methods: 2 when the state becomes NaN), or SRD_STEP_CROSSED. */
int srd_step(srd_sim *s, srd_method method, int max_halvings);

/* The Jacobian (into the solver's storage) and residual of the implicit step of `method` that
 * ends at time s->t after s->dt: s->q0, s->v0 and s->a0 hold its start (a0: Newmark's start
 * acceleration), s->q its end and the batches their state at its start. Exact, where Newton's
 * method makes do with an approximation: with constraints under the midpoint rule (their rows
 * hold at the step's end, their forces act at its middle). */
void srd_sim_step_jacobian(srd_sim *s, srd_method method);

/* Makes the current configuration (a static equilibrium) the start of a simulation at t = 0,
 * at rest: the elements' step-start state (reference frames, reference twist, tau0) is carried
 * from the reference to it as one step would carry it, so that the energies the static solve
 * balanced are the ones the first step sees. */
void srd_sim_start_here(srd_sim *s);

/* A static equilibrium kept for a new sim of the model to start from (`start = equilibrium`): its
 * DOFs and the rigid bodies' axes, into which srd_static folded their turns (the rotation DOFs
 * are zero after it). */
typedef struct srd_start_state {
    double *q, *axes;
} srd_start_state;
void srd_start_state_save(const srd_sim *s, srd_start_state *out);
void srd_start_state_free(srd_start_state *st);
/* Puts s at st (its DOFs and bodies' axes) and makes it the start, at rest (srd_sim_start_here). */
void srd_sim_start_at(srd_sim *s, const srd_start_state *st);

/* Net force on every DOF at the current configuration: external minus elastic (zero on
 * constrained DOFs, whose forces srd_sim_reactions gives). force has n_dofs entries. */
void srd_sim_net_force(srd_sim *s, double *force);

/* Prescribed motion (motion.c). srd_motion_impose sets the driven DOFs of q (and of v when not
 * NULL) to their values at time t, the motion scaled by `scale` (static load steps ramp it),
 * and their accelerations in s->prescribed_acc. srd_motion_commit carries the rotated edges'
 * frames to configuration q after an accepted step. */
void srd_motion_init(srd_sim *s);
void srd_motion_free(srd_sim *s);
void srd_motion_impose(srd_sim *s, double t, double scale, double *q, double *v);
void srd_motion_commit(srd_sim *s, const double *q);

/* Slides (slide.c): the sliding node of a clamped rod end moves on its line only, while the
 * clamp holds (its end node held in full). srd_slides_reduce turns the residual (and the
 * Jacobian) of each sliding node into the line's basis, its rows across the line identity
 * rows; srd_slides_expand turns a solution of that system (n_free values) back. across gets a
 * 1 at each row across a line (n_free entries); returns their count. srd_slides_place puts
 * each sliding node of q (and its velocity in v, when not NULL) on its line, keeping its place
 * along it; srd_slides_along keeps only the part along the line of each sliding node's entries
 * of the DOF vector x (a force or an acceleration); srd_slides_across_part writes the part
 * across it into out. srd_slides_turn turns the lines of the slides whose clamp `mo` drives
 * by angle about axis from their reference. */
void srd_slides_reduce(srd_sim *s, int with_jacobian);
void srd_slides_expand(const srd_sim *s, double *x);
int  srd_slides_across(const srd_sim *s, unsigned char *across);
void srd_slides_place(const srd_sim *s, double *q, double *v);
void srd_slides_along(const srd_sim *s, double *x);
void srd_slides_across_part(const srd_sim *s, const double *x, double *out);
void srd_slides_turn(srd_sim *s, const srd_motion *mo, const double *axis, double angle);

/* Frees the model's release k: its DOFs join the Newton system from now on (the solver, the
 * element batches' maps and the assembly buffers are rebuilt; state and data stay). */
void srd_sim_release(srd_sim *s, int k);
/* Sets every release's flag (n_releases values, 1: released; NULL: none, as at the start) and the
 * constraints with them: a sim put back to an earlier time (a checkpoint, a recorded step) holds
 * what it held then. The system is planned again only when a flag changes. */
void srd_sim_set_released(srd_sim *s, const unsigned char *released);

/* The force each constraint exerts on its DOFs (n_dofs values, 0 on free DOFs): the residual
 * of the constrained rows, grad E(q) - fext, plus, in a simulation, M a for the prescribed
 * acceleration a and Rayleigh damping (srd_sim_damping_forces). A twist entry is a moment about
 * its edge. */
void srd_sim_reactions(srd_sim *s, double *reaction);
/* srd_sim_reactions in two halves: every DOF's residual as the reactions take it (the elements'
 * gradient less the loads, with the damping in a simulation), then the reactions from it. */
void srd_sim_reaction_residual(srd_sim *s, double *res);
void srd_sim_reactions_of_residual(const srd_sim *s, const double *res, double *reaction);
/* Whether the damping the sim's forces read is an implicit step's own (srd_sim_damping_forces). */
bool srd_sim_damping_of_step(const srd_sim *s);
/* The velocity that damping damps where the sim stands, on every DOF (n_dofs; a multiplier none),
 * into u: after an implicit step c1 (q - q0) + c0 v0 (true; its constants into c), else v. */
bool srd_sim_damped_velocity(const srd_sim *s, double *u, double c[2]);
/* Adds Rayleigh damping's force on every DOF where the sim stands into out (n_dofs): after an
 * implicit step, that step's own, (alpha M + beta K(q0)) (c1 (q - q0) + c0 v0) (so the reactions
 * close the step's momentum balance; K0 with the contact pairs the step ended with); at the start
 * and after an explicit step, (alpha M + beta K(q)) v. Multipliers take none. */
void srd_sim_damping_forces(srd_sim *s, double *out);
/* Adds the force that the ground (target -1) or obstacle `target` exerts on each node to
 * force (n_dofs values): contact, and friction in a simulation. target -2: all of them;
 * SRD_CONTACT_PARTS: the model's parts on each other (`contact`), over the pairs of the step. */
enum { SRD_CONTACT_PARTS = -3 };
void srd_sim_contact_forces(srd_sim *s, int target, double *force);
/* The instances [lo, hi) of set k by which the ground (target -1), obstacle `target` or all of
 * them (-2) touch the model; 0 when the set is none of theirs. */
int  srd_sim_contact_instances(const srd_model *m, int k, int target, int *lo, int *hi);
/* The current pose of obstacle k as its elements read it (a moving one's schedules rewrite it
 * each step): centre (a plane's point), unit axis (a plane's normal) and a box's turn.
 * Unchanged when the obstacle has no elements. */
void srd_sim_obstacle_pose(const srd_sim *s, int k, double center[3], double axis[3], double *angle);

/* Assembles the stiffness (the Hessian of the energy, with forces' Jacobians) at the current
 * configuration into the solver's Jacobian storage; the residual is overwritten too. */
void srd_sim_stiffness(srd_sim *s);

/* Rayleigh damping's velocity over a step of method and length dt: c1 (q - q0) + c0 v0 (implicit
 * Euler's end velocity, midpoint's mean velocity, Newmark's end velocity). */
void srd_damping_constants(srd_method method, double dt, double *c1, double *c0);

/* An implicit step's end velocity and acceleration from a DOF's displacement dq over it and its
 * start's v0 and a0 (implicit Euler and midpoint keep a0). Linear in (dq, v0, a0), so it serves
 * their tangents too. */
void srd_scheme_rates(srd_method method, double dt, double dq, double v0, double a0, double *v1, double *a1);

/* The change of a static equilibrium with a param: dq = -K^-1 g, K the stiffness at the current
 * configuration (an equilibrium) and g the derivative of the residual with respect to the param
 * (n_free rows, in the residual's numbering, at q). dq has n_dofs entries, 0 on held DOFs.
 * Returns 0, or 1 when K is singular. The residual is overwritten. K is assembled and factorised
 * once for the calls that follow at the same state (one per param: each is then one solve). */
int srd_sim_static_sensitivity(srd_sim *s, const double *g, double *dq);

/* Kinetic energy 1/2 v.M v and the potential E(q) - fext.q at the current state. */
double srd_kinetic_energy(const srd_sim *s);
double srd_potential_energy(srd_sim *s);

/* Natural frequencies (Hz) and mode shapes of K v = w^2 M v at the current configuration,
 * M-normalised. freq has `count` entries, modes count * n_dofs (zero on fixed DOFs). Dense
 * (LAPACK dsyevr on the whole matrix) unless srd_modes_use_lanczos. Returns 0, or -1 with a
 * message when a free DOF has no mass or the eigensolver fails. */
int srd_modes(srd_sim *s, int count, double *freq, double *modes, char *err, size_t err_n);
/* New couplings between free DOFs (contact pairs): srd_solver_add_couplings, then the kernels'
 * Jacobian positions remapped and the buffers sized by the storage made anew; the free
 * numbering, the element batches' DOFs and state stay. Returns the entries added, or -1 when
 * the solver must be planned again (a pair outside the band). */
long long srd_sim_add_couplings(srd_sim *s, int n_pairs, const int *pairs);
/* Whether srd_modes uses shift-invert Lanczos (ARPACK) with the sparse factorisation: on the
 * sparse solver, for fewer modes than free DOFs less one. Memory then grows with n, not n^2. */
bool srd_modes_use_lanczos(const srd_sim *s, int count);

/* Static equilibrium under gravity and loads, applied in `load_steps` increments. */
int srd_static(srd_sim *s, int load_steps);

/* The free DOFs with the largest residuals, described as "rod finger, node 37, z". */
void srd_sim_report_worst(const srd_sim *s, FILE *out, int count);
/* After a singular Jacobian (last.singular): the free DOFs nothing holds (an empty column: no
 * element, mass or support acts on them), at most `count`, else the DOF of the zero pivot the
 * factorisation met (one DOF of a free rigid motion or mechanism). Returns how many it named, or
 * -1 when the pivot is a constraint's multiplier (a redundant constraint of a closed loop). */
int  srd_sim_report_singular(const srd_sim *s, FILE *out, int count);

/* After an explicit step failed: the free DOFs whose position or velocity is not finite, or
 * else those with the largest speeds, with their values. */
void srd_sim_report_state(const srd_sim *s, FILE *out, int count);

#endif
