/* diff.h — symbolic differentiation inside the hash-consed DAG: reverse-mode gradients, and
 * Hessians (energies) or Jacobians (forces) by differentiating the gradient again, so the
 * second derivatives share the first derivatives' subexpressions. */
#ifndef SRD_DIFF_H
#define SRD_DIFF_H
#include "expr.h"

/* grad[k] = d f / d input(wrt[k]) for k < n_wrt. Inputs not listed are constants. */
void diff_gradient(ExprDag *d, ExprId f, const int *wrt, int n_wrt, ExprId *grad);

/* Upper triangle of the Hessian of f, row-major: hess[i*n - i*(i-1)/2 + (j - i)] for i <= j,
 * i.e. n(n+1)/2 entries. Also returns the gradient in grad (may be NULL). */
void diff_hessian(ExprDag *d, ExprId f, const int *wrt, int n_wrt, ExprId *grad, ExprId *hess_upper);

/* Full Jacobian of m functions: jac[i*n_wrt + k] = d f_i / d input(wrt[k]). */
void diff_jacobian(ExprDag *d, const ExprId *f, int m, const int *wrt, int n_wrt, ExprId *jac);

/* Index of entry (i, j) in the packed upper triangle of an n x n symmetric matrix. */
static inline int diff_upper_index(int n, int i, int j)
{
    if (i > j) {
        int t = i;
        i = j;
        j = t;
    }
    return i * n - i * (i - 1) / 2 + (j - i);
}

#endif
