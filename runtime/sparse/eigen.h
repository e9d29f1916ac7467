/* eigen.h — the lowest modes of a big model: ARPACK's implicitly restarted Lanczos on the
 * shift-inverted problem, each step one solve with a sparse factorisation made once. */
#ifndef SRD_EIGEN_H
#define SRD_EIGEN_H
#include <stddef.h>
#include "solve.h"

/* The `count` smallest eigenvalues lambda (ascending) of K v = lambda M v and their vectors,
 * M-normalised (v' M v = 1), count x n_free, free numbering. K is the stiffness in the sparse
 * solver s (SRD_SOLVER_SPARSE; its storage is overwritten by K - sigma M), mass the diagonal of
 * M per free DOF (all > 0). Needs count + 1 < n_free. Returns 0, or -1 with a message. */
int srd_sparse_modes(srd_solver *s, const double *mass, int count, double *lambda, double *vectors, char *err,
                     size_t err_n);

#endif
