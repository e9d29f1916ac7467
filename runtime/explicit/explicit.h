/* explicit.h — the explicit fast path: symplectic Euler, Verlet and RK4 at machine speed over
 * models whose DOFs are all node positions (lattices, mass-spring networks, with contact,
 * friction, gravity, loads, mass damping and actuation). The forces come from the compiled
 * gradient kernels of the model's element sets, run over a structure-of-arrays copy of the
 * state (x of every node, then y, then z) by a team of threads, each owning a contiguous block
 * of every set's instances and a force buffer of its own; the buffers are added over
 * contiguous node ranges, one per thread, together with the integrator's update. Nothing is
 * allocated per step. The same steps as the general path (sim.c), to round-off. */
#ifndef SRD_EXPLICIT_H
#define SRD_EXPLICIT_H
#include "sim.h"
#include "srd_kernel.h"
#include "srd_model.h"

/* What the fast path runs on: the model, its kernels and the values they read. */
typedef struct srd_explicit_input {
    const srd_model       *m;
    const srd_kernel_fn   *gradients;  /* per set: value and gradient (or -force) */
    const srd_kernel_info *infos;      /* per set */
    double *const         *set_data;   /* per set: the data its kernel reads (actuation writes it) */
    const double          *params;
    const double          *fext;       /* model DOFs: gravity and loads, or NULL for none */
    /* Actuation and time-dependent loads: called with time t before each force evaluation
     * (it may change set_data and, when fext_varies, fext); NULL when nothing changes. */
    void                 (*schedules)(void *ctx, double t);
    void                  *schedules_ctx;
    int                    fext_varies;
    int                    threads;    /* members of the thread team (1: the caller alone) */
} srd_explicit_input;

typedef struct srd_explicit srd_explicit;

/* NULL when the fast path can run model m with these kernels, else why not ("rod twists"). */
const char   *srd_explicit_unsupported(const srd_model *m, const srd_kernel_info *infos);
/* The fast path for `method` (SRD_SYMPLECTIC_EULER, SRD_VERLET or SRD_RK4) at time step dt,
 * starting from the reference configuration at rest at t = 0. NULL when unsupported. */
srd_explicit *srd_explicit_new(const srd_explicit_input *in, srd_method method, double dt);
void          srd_explicit_free(srd_explicit *x);
/* Sets the state (model DOF layout) at time t. */
void          srd_explicit_set_state(srd_explicit *x, const double *q, const double *v, double t);
/* Copies the state out (model DOF layout); q or v may be NULL. */
void          srd_explicit_get_state(const srd_explicit *x, double *q, double *v);
/* Takes n steps; 0, or 2 when the state became NaN or infinite. */
int           srd_explicit_steps(srd_explicit *x, long n);
double        srd_explicit_time(const srd_explicit *x);
int           srd_explicit_threads(const srd_explicit *x);
/* Element instances evaluated per force evaluation, and force evaluations per step. */
long          srd_explicit_instances(const srd_explicit *x);
int           srd_explicit_evaluations_per_step(const srd_explicit *x);

#endif
