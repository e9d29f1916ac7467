/* sim.h — a model with its compiled kernels, ready to solve: assembly of the residual and
 * Jacobian from the kernels, Newton's method with a backtracking line search, implicit Euler
 * time steps and static equilibrium with load stepping. */
#ifndef SRD_SIM_H
#define SRD_SIM_H
#include <stdio.h>
#include "batch.h"
#include "solve.h"
#include "srd_kernel.h"
#include "srd_model.h"

typedef struct srd_sim_kernel {
    srd_kernel_fn   fn;
    srd_kernel_info info;
    srd_batch_owner batch;
} srd_sim_kernel;

typedef struct srd_newton_stats {
    int    iterations;
    double residual;      /* final infinity norm of the residual */
    double history[64];   /* residual norm after each iteration */
    int    line_search_cuts;
} srd_newton_stats;

typedef struct srd_sim {
    const srd_model *m;
    srd_sim_kernel  *kernels;    /* per element set; fn NULL when the set has none */
    srd_solver       solver;
    double          *q, *q0, *v, *v0;   /* n_dofs */
    double          *params;
    double           t, dt;
    double          *res;        /* n_free + 1 */
    double          *dq;         /* n_free */
    double          *trial;      /* n_dofs */
    double          *fext;       /* n_dofs: gravity and loads at full strength */
    double           load_factor;/* static load stepping: fraction of fext applied */
    int              dynamic;    /* 1: include inertia (implicit Euler), 0: static */
    double           force_scale;/* characteristic force for the convergence test */
    double           length_scale;
    double           tolerance;
    int              max_iterations;
    int              line_search;
    int              conservative; /* every element is an energy: line search on the potential */
    srd_newton_stats last;
    long             total_iterations, steps, rejected;
} srd_sim;

/* kernels[s] gives the compiled kernel of element set s (fn NULL if absent). Returns 0, or -1
 * with a message in err when a set has no kernel. */
int  srd_sim_init(srd_sim *s, const srd_model *m, const srd_kernel_fn *fns, const srd_kernel_info *infos,
                  srd_solver_kind solver, char *err, size_t err_n);
void srd_sim_free(srd_sim *s);

/* One Newton solve at the current state (q is the initial guess and the result).
 * Returns 0 on convergence, 1 when it did not converge, 2 on NaN/Inf. */
int srd_newton(srd_sim *s);

/* One implicit Euler step of size s->dt; on failure the step is retried with halved steps
 * (at most `max_halvings` times). Returns 0, or the Newton code of the failure. */
int srd_step_implicit_euler(srd_sim *s, int max_halvings);

/* Static equilibrium under gravity and loads, applied in `load_steps` increments. */
int srd_static(srd_sim *s, int load_steps);

/* The free DOFs with the largest residuals, described as "rod finger, node 37, z". */
void srd_sim_report_worst(const srd_sim *s, FILE *out, int count);

#endif
