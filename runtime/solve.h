/* solve.h — the linear solvers behind one small interface: dense (LAPACK dgesv, dposv) and
 * banded (dgbsv, dpbsv), in the storage layouts batch.h describes. */
#ifndef SRD_SOLVE_H
#define SRD_SOLVE_H
#include "batch.h"

typedef enum {
    SRD_SOLVER_AUTO,   /* banded when the band is narrow against the size, else dense */
    SRD_SOLVER_DENSE,
    SRD_SOLVER_BANDED,
} srd_solver_kind;

typedef struct srd_solver {
    srd_solver_kind kind;       /* dense or banded after the automatic choice */
    int             symmetric;  /* use the SPD routines (dposv/dpbsv), falling back to LU when not SPD */
    srd_system      sys;        /* free-DOF numbering and Jacobian layout */
    double         *jac;        /* srd_system_jac_len: storage and scratch slots, filled by the kernels */
    double         *work;       /* factorisation copy */
    int            *ipiv;
    int             last_info;  /* LAPACK info of the last solve */
    int             used_lu;    /* the last solve fell back to LU */
} srd_solver;

/* Chooses the layout (auto: banded when 4 * bandwidth + 1 < n and n > 64; bench/README.md has the
 * measurements behind it) and allocates. */
void srd_solver_init(srd_solver *s, const srd_model *m, srd_solver_kind kind, int symmetric);
/* srd_solver_init in two halves, so that the memory can be checked in between: the layout
 * chosen and measured (nothing of the Jacobian's size allocated), then the storage. */
void   srd_solver_plan(srd_solver *s, const srd_model *m, srd_solver_kind kind, int symmetric);
double srd_solver_bytes(const srd_solver *s); /* what srd_solver_allocate will take */
/* srd_solver_plan with another set of constrained DOFs than the model's. */
void   srd_solver_plan_fixed(srd_solver *s, const srd_model *m, const unsigned char *fixed, srd_solver_kind kind,
                             int symmetric);
void   srd_solver_allocate(srd_solver *s);
void srd_solver_free(srd_solver *s);
/* Clears the Jacobian storage (and its scratch slots). */
void srd_solver_zero(srd_solver *s);
/* Multiplies the Jacobian by `factor` (the stiffness weight of implicit midpoint). */
void srd_solver_scale(srd_solver *s, double factor);
/* Adds `value` to the diagonal entry of free DOF i (mass and damping terms). */
void srd_solver_add_diagonal(srd_solver *s, int i, double value);
/* Solves J x = b in place (b has n_free entries). Returns 0, or LAPACK's info (> 0: singular). */
int  srd_solver_solve(srd_solver *s, double *b);
/* y = J x with the current Jacobian (for tests and residual checks). */
void srd_solver_multiply(const srd_solver *s, const double *x, double *y);
/* y = A x for a matrix A in the system's Jacobian layout (a saved copy of a Jacobian). */
void srd_system_multiply(const srd_system *sys, const double *a, const double *x, double *y);
/* J += factor A, with A in the Jacobian's layout. */
void srd_solver_add_scaled(srd_solver *s, const double *a, double factor);

#endif
