/* sparse.h — sparse direct factorisations of the CSC Jacobian (batch.h's SRD_JAC_CSC layout):
 * CHOLMOD's supernodal Cholesky when the system is symmetric positive definite; for an
 * unsymmetric one, Cholesky of its symmetric part refined to the solution while that converges
 * fast, else UMFPACK's LU; UMFPACK's LU too when Cholesky finds a symmetric system indefinite. The symbolic
 * analysis (fill-reducing ordering) is done once per pattern; each solve refactorises only
 * numerically. */
#ifndef SRD_SPARSE_H
#define SRD_SPARSE_H
#include "batch.h"

typedef struct srd_sparse srd_sparse;

/* Analyses the pattern of sys (CSC layout). Returns NULL when the library fails (out of
 * memory, or an index beyond its integer type). */
srd_sparse *srd_sparse_analyze(const srd_system *sys, int symmetric);
void        srd_sparse_free(srd_sparse *sp);
/* Flops of one Cholesky factorisation with the chosen ordering, and the entries of its factor:
 * what the automatic choice of solver compares against dense and band storage. */
double srd_sparse_flops(const srd_sparse *sp);
double srd_sparse_factor_entries(const srd_sparse *sp);
/* Factorises J (values in sys's CSC order) and solves J x = b in place. Returns 0, or 1 when J
 * is singular; *used_lu says whether LU was used, *pivot is the free index of a column with a
 * zero pivot when singular (else -1). *factor_s gets the seconds spent factorising. */
int srd_sparse_solve(srd_sparse *sp, const srd_system *sys, const double *values, double *b, int *used_lu, int *pivot,
                     double *factor_s);
/* srd_sparse_solve in two halves, to solve many right-hand sides with one factorisation
 * (shift-invert modes): returns 0, or 1 when J is singular. values must stay unchanged until
 * the last srd_sparse_solve_factored (UMFPACK's solve reads them). */
int srd_sparse_factor(srd_sparse *sp, const srd_system *sys, const double *values, int *used_lu, int *pivot,
                      double *factor_s);
int srd_sparse_solve_factored(srd_sparse *sp, const srd_system *sys, const double *values, double *b);
/* How the last solve went: "CHOLMOD", "CHOLMOD, refined" or "UMFPACK" (or "" before any). */
const char *srd_sparse_method(const srd_sparse *sp);

/* Solves J^T x = b in place (the adjoint of a step); 0, or 1 when J is singular. */
int srd_sparse_solve_transposed(srd_sparse *sp, const srd_system *sys, const double *values, double *b, int *pivot,
                                double *factor_s);

#endif
