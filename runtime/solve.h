/* solve.h — the linear solvers behind one small interface: dense (LAPACK dgesv, dposv), banded
 * (dgbsv, dpbsv) and sparse (CHOLMOD, UMFPACK: sparse/sparse.h), in the storage layouts batch.h
 * describes. */
#ifndef SRD_SOLVE_H
#define SRD_SOLVE_H
#include "batch.h"

typedef enum {
    SRD_SOLVER_AUTO,   /* the layout whose factorisation is predicted cheapest (srd_solver_plan) */
    SRD_SOLVER_DENSE,
    SRD_SOLVER_BANDED,
    SRD_SOLVER_SPARSE,
} srd_solver_kind;

struct srd_sparse;

typedef struct srd_solver {
    srd_solver_kind kind;       /* dense, banded or sparse after the automatic choice */
    int             symmetric;  /* use the SPD routines (dposv/dpbsv), falling back to LU when not SPD */
    srd_system      sys;        /* free-DOF numbering and Jacobian layout */
    double         *jac;        /* srd_system_jac_len: storage and scratch slots, filled by the kernels */
    double         *work;       /* factorisation copy */
    int            *ipiv;
    int             last_info;  /* LAPACK info of the last solve (sparse: 1 when singular) */
    int             used_lu;    /* the last solve fell back to LU */
    int             singular_col; /* after a singular solve: the free index of a zero pivot, or -1 */
    struct srd_sparse *sparse;  /* the sparse factorisation (symbolic analysis kept per pattern) */
    double          time_factor; /* seconds spent factorising and solving, summed over solves */
    /* What srd_solver_factor kept (0: nothing; any change to jac or another solve drops it). */
    enum { SRD_FACTOR_NONE, SRD_FACTOR_CHOLESKY, SRD_FACTOR_LU } factored;
    /* The automatic choice: predicted seconds of one factorisation per layout (0: not predicted). */
    double          predicted[4];
} srd_solver;

/* Chooses the layout and allocates. auto predicts the cost of one factorisation from the
 * pattern: dense and band flops from the size and band, sparse flops from CHOLMOD's symbolic
 * analysis, each at the rate measured for it (bench/README.md), and takes the cheapest. */
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
/* Solves J X = B in place for nrhs right-hand sides (B's columns, n_free each) with one
 * factorisation. */
int  srd_solver_solve_many(srd_solver *s, double *b, int nrhs);
/* srd_solver_solve in two halves, for right-hand sides that arrive one at a time (static
 * sensitivities, one param after another): factorises J and keeps the factor until jac changes
 * (srd_solver_zero, _scale, _add_diagonal, _add_scaled) or another solve runs. Returns as
 * srd_solver_solve; srd_solver_solve_factored returns -1 when no factor is kept. */
int  srd_solver_factor(srd_solver *s);
int  srd_solver_solve_factored(srd_solver *s, double *b);
/* Solves J^T x = b in place (adjoint sensitivities); the plain solve when J is symmetric. */
int  srd_solver_solve_transposed(srd_solver *s, double *b);
/* y = J x with the current Jacobian (for tests and residual checks). */
void srd_solver_multiply(const srd_solver *s, const double *x, double *y);
/* y = A x for a matrix A in the system's Jacobian layout (a saved copy of a Jacobian). */
void srd_system_multiply(const srd_system *sys, const double *a, const double *x, double *y);
/* J += factor A, with A in the Jacobian's layout. */
void srd_solver_add_scaled(srd_solver *s, const double *a, double factor);
/* The name of a solver kind ("dense", "banded", "sparse"); of the library the last solve used
 * for the sparse kind (e.g. "sparse (CHOLMOD)"). */
const char *srd_solver_kind_name(srd_solver_kind kind);
/* Parses "auto", "dense", "banded", "sparse"; -1 when it is none of them. */
int srd_solver_kind_parse(const char *name);
/* New couplings between free DOFs (pairs[2k], pairs[2k+1]), as contact pairs bring: in sparse
 * storage the entries the pattern lacks are merged into it and the symbolic analysis is redone
 * (free numbering and everything sized by it stay; Jacobian positions move, so batches must be
 * remapped: srd_batch_remap). Dense storage holds every entry already. Returns the entries
 * added (0: nothing changed), or -1 when a pair lies outside the band: plan again. */
long long srd_solver_add_couplings(srd_solver *s, int n_pairs, const int *pairs);
/* Flops of one factorisation in the chosen layout (LU counted twice Cholesky): what the
 * benchmarks set against the measured BLAS rate as a floor. */
double srd_solver_factor_flops(const srd_solver *s);
/* 1 when column j of the Jacobian holds no nonzero at all (a DOF nothing acts on). */
int srd_solver_column_empty(const srd_solver *s, int j);

#endif
