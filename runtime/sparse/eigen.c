/* eigen.c — shift-invert Lanczos with ARPACK (dsaupd/dseupd, Debian's libarpack2). In the
 * symmetric standard form A = M^-1/2 K M^-1/2, the operator (A - sigma I)^-1 =
 * M^1/2 (K - sigma M)^-1 M^1/2 has its largest eigenvalues nu = 1 / (lambda - sigma) at the
 * lambdas nearest sigma; with sigma just below zero those are the lowest modes, rigid ones
 * included (K - sigma M stays positive definite when K is only semi-definite). */
#include "eigen.h"
#include "alloc.h"
#include "sparse.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ARPACK's Fortran entry points; gfortran passes each CHARACTER argument's length at the end. */
void dsaupd_(int *ido, const char *bmat, const int *n, const char *which, const int *nev, const double *tol,
             double *resid, const int *ncv, double *v, const int *ldv, int *iparam, int *ipntr, double *workd,
             double *workl, const int *lworkl, int *info, size_t bmat_len, size_t which_len);
void dseupd_(const int *rvec, const char *howmny, int *select, double *d, double *z, const int *ldz,
             const double *sigma, const char *bmat, const int *n, const char *which, const int *nev,
             const double *tol, double *resid, const int *ncv, double *v, const int *ldv, int *iparam, int *ipntr,
             double *workd, double *workl, const int *lworkl, int *info, size_t howmny_len, size_t bmat_len,
             size_t which_len);

/* ARPACK's state for one run. */
typedef struct lanczos {
    int     n, nev, ncv, lworkl, ido, info;
    int     iparam[11], ipntr[11];
    double  tol;
    double *resid, *v, *workd, *workl;
} lanczos;

/* Lanczos vectors: twice the modes asked for, at least 20, at most n. */
static void lanczos_init(lanczos *l, int n, int nev)
{
    memset(l, 0, sizeof *l);
    l->n = n;
    l->nev = nev;
    l->ncv = 2 * nev + 1 > 20 ? 2 * nev + 1 : 20;
    if (l->ncv > n)
        l->ncv = n;
    l->lworkl = l->ncv * (l->ncv + 8);
    l->tol = 0; /* machine precision */
    l->iparam[0] = 1;   /* exact shifts */
    l->iparam[2] = 500; /* restarts */
    l->iparam[6] = 1;   /* mode 1: OP x given, B = I (the operator is already shift-inverted) */
    l->resid = srd_xcalloc((size_t)n, sizeof(double));
    l->v = srd_xcalloc((size_t)n * (size_t)l->ncv, sizeof(double));
    l->workd = srd_xcalloc(3 * (size_t)n, sizeof(double));
    l->workl = srd_xcalloc((size_t)l->lworkl, sizeof(double));
    /* A fixed start vector (info = 1): ARPACK's random one continues its seed between runs. */
    for (int i = 0; i < n; i++)
        l->resid[i] = 1 + 0.5 * sin(0.7 * i);
    l->info = 1;
}

static void lanczos_free(lanczos *l)
{
    free(l->resid);
    free(l->v);
    free(l->workd);
    free(l->workl);
}

/* The shift: a millionth of the largest K_ii / M_ii below zero. */
static double choose_shift(const srd_solver *s, const double *mass)
{
    double top = 0;
    for (int i = 0; i < s->sys.n_free; i++) {
        long long pos = srd_system_position(&s->sys, i, i);
        if (mass[i] > 0) /* a massless row (across a sliding node's line) has no frequency */
            top = fmax(top, fabs(s->jac[pos]) / mass[i]);
    }
    return -1e-6 * (top > 0 ? top : 1);
}

/* y = M^1/2 (K - sigma M)^-1 M^1/2 x */
static int apply_operator(srd_solver *s, const double *sqrt_m, const double *x, double *y)
{
    int n = s->sys.n_free;
    for (int i = 0; i < n; i++)
        y[i] = sqrt_m[i] * x[i];
    if (srd_sparse_solve_factored(s->sparse, &s->sys, s->jac, y) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        y[i] *= sqrt_m[i];
    return 0;
}

/* The reverse-communication loop of dsaupd; 0 when it converged. */
static int iterate(lanczos *l, srd_solver *s, const double *sqrt_m, char *err, size_t err_n)
{
    for (;;) {
        dsaupd_(&l->ido, "I", &l->n, "LM", &l->nev, &l->tol, l->resid, &l->ncv, l->v, &l->n, l->iparam, l->ipntr,
                l->workd, l->workl, &l->lworkl, &l->info, 1, 2);
        if (l->ido != -1 && l->ido != 1)
            break;
        if (apply_operator(s, sqrt_m, &l->workd[l->ipntr[0] - 1], &l->workd[l->ipntr[1] - 1]) != 0) {
            snprintf(err, err_n, "the shift-inverted solve failed in the modal analysis");
            return -1;
        }
    }
    if (l->info < 0 || l->iparam[4] < l->nev) {
        snprintf(err, err_n, "ARPACK found %d of %d modes (dsaupd info %d)", l->iparam[4], l->nev, l->info);
        return -1;
    }
    return 0;
}

/* Eigenvalues nu (ascending) and Ritz vectors; 0 on success. */
static int extract(lanczos *l, double *nu, double *z, char *err, size_t err_n)
{
    int rvec = 1, info = 0;
    int *select = srd_xcalloc((size_t)l->ncv, sizeof(int));
    double sigma = 0;
    dseupd_(&rvec, "A", select, nu, z, &l->n, &sigma, "I", &l->n, "LM", &l->nev, &l->tol, l->resid, &l->ncv, l->v,
            &l->n, l->iparam, l->ipntr, l->workd, l->workl, &l->lworkl, &info, 1, 1, 2);
    free(select);
    if (info != 0)
        snprintf(err, err_n, "ARPACK could not extract the modes (dseupd info %d)", info);
    return info != 0 ? -1 : 0;
}

/* From nu (ascending: the highest mode first) to lambda ascending, v = M^-1/2 y (0 on massless
 * rows, which the operator leaves out). */
static void store_modes(int n, int count, double sigma, const double *nu, const double *z, const double *sqrt_m,
                        double *lambda, double *vectors)
{
    for (int k = 0; k < count; k++) {
        int from = count - 1 - k;
        lambda[k] = sigma + 1 / nu[from];
        for (int i = 0; i < n; i++)
            vectors[(size_t)k * n + i] = sqrt_m[i] > 0 ? z[(size_t)from * n + i] / sqrt_m[i] : 0;
    }
}

int srd_sparse_modes(srd_solver *s, const double *mass, int count, double *lambda, double *vectors, char *err,
                     size_t err_n)
{
    int n = s->sys.n_free, used_lu, pivot;
    double sigma = choose_shift(s, mass), seconds = 0;
    s->factored = SRD_FACTOR_NONE; /* its own factor of K - sigma M replaces any kept one */
    for (int i = 0; i < n; i++)
        s->jac[srd_system_position(&s->sys, i, i)] -= sigma * mass[i];
    if (srd_sparse_factor(s->sparse, &s->sys, s->jac, &used_lu, &pivot, &seconds) != 0) {
        snprintf(err, err_n, "K - sigma M is singular (sigma = %.3g): the modal analysis cannot shift-invert", sigma);
        return -1;
    }
    double *sqrt_m = srd_xcalloc((size_t)n, sizeof(double));
    for (int i = 0; i < n; i++)
        sqrt_m[i] = sqrt(mass[i]);
    lanczos l;
    lanczos_init(&l, n, count);
    double *nu = srd_xcalloc((size_t)count, sizeof(double)), *z = srd_xcalloc((size_t)n * (size_t)count, sizeof(double));
    int status = iterate(&l, s, sqrt_m, err, err_n);
    if (status == 0)
        status = extract(&l, nu, z, err, err_n);
    if (status == 0)
        store_modes(n, count, sigma, nu, z, sqrt_m, lambda, vectors);
    lanczos_free(&l);
    free(nu);
    free(z);
    free(sqrt_m);
    return status;
}
