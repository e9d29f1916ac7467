/* solve.c — LAPACK solves of the reduced Jacobian in dense or band storage: Cholesky first when
 * the caller says the system is symmetric, LU when it is not or when Cholesky finds it indefinite. */
#include "solve.h"
#include "alloc.h"
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

/* ipiv is declared int in solve.h so users need no LAPACK header; LP64 LAPACKE agrees. */
_Static_assert(sizeof(lapack_int) == sizeof(int), "srd expects LP64 LAPACKE (32-bit lapack_int)");

/* OpenBLAS's own entry point; its header is not needed for this one call. */
void openblas_set_num_threads(int);

/* Rod systems are small and narrow: OpenBLAS threads cost more than they save there. */
static void blas_single_thread(void)
{
    static int done;
    if (!done) {
        openblas_set_num_threads(1);
        done = 1;
    }
}

/* The rule of solve.h: band storage pays off only when the band is narrow against the size. */
/* Band LU costs about 4 n b^2 flops against dense LU's 2/3 n^3, at a lower rate: measured on the
 * parachute (bench/shells.c), a band of 0.21 n still solves 3.8 times faster than dense. */
static int band_pays_off(int n, int bandwidth) { return 4 * bandwidth + 1 < n && n > 64; }

/* Leading dimension of the general band matrix the LU fallback rebuilds from symmetric storage. */
static long long general_ldab(const srd_system *sys) { return 3LL * sys->ku + 1; }

/* Doubles of the factorisation copy: the matrix (room for the general band when a symmetric band
 * may need LU) plus n for a copy of the right-hand side, restored before the LU fallback. */
static size_t work_size(const srd_system *sys)
{
    long long matrix = srd_system_storage(sys);
    if (sys->layout == SRD_JAC_BAND_SYM)
        matrix = (long long)sys->n_free * general_ldab(sys);
    return (size_t)matrix + (size_t)sys->n_free;
}

void srd_solver_plan(srd_solver *s, const srd_model *m, srd_solver_kind kind, int symmetric)
{
    srd_solver_plan_fixed(s, m, m->dof_fixed, kind, symmetric);
}

void srd_solver_plan_fixed(srd_solver *s, const srd_model *m, const unsigned char *fixed, srd_solver_kind kind,
                           int symmetric)
{
    memset(s, 0, sizeof *s);
    blas_single_thread();
    /* The band width is only known after numbering the free DOFs, so measure first. */
    srd_system_init_fixed(&s->sys, m, fixed, SRD_JAC_DENSE);
    if (kind == SRD_SOLVER_AUTO)
        kind = band_pays_off(s->sys.n_free, s->sys.kl > s->sys.ku ? s->sys.kl : s->sys.ku) ? SRD_SOLVER_BANDED
                                                                                            : SRD_SOLVER_DENSE;
    if (kind == SRD_SOLVER_BANDED) {
        srd_system_free(&s->sys);
        srd_system_init_fixed(&s->sys, m, fixed, symmetric ? SRD_JAC_BAND_SYM : SRD_JAC_BAND);
    }
    s->kind = kind;
    s->symmetric = symmetric != 0;
}

double srd_solver_bytes(const srd_solver *s)
{
    return sizeof(double) * ((double)srd_system_jac_len(&s->sys) + (double)work_size(&s->sys)) +
           sizeof(int) * (double)s->sys.n_free;
}

void srd_solver_allocate(srd_solver *s)
{
    s->jac = srd_xcalloc(srd_system_jac_len(&s->sys), sizeof(double));
    s->work = srd_xcalloc(work_size(&s->sys), sizeof(double));
    s->ipiv = srd_xcalloc((size_t)s->sys.n_free, sizeof(int));
}

void srd_solver_init(srd_solver *s, const srd_model *m, srd_solver_kind kind, int symmetric)
{
    srd_solver_plan(s, m, kind, symmetric);
    srd_solver_allocate(s);
}

void srd_solver_free(srd_solver *s)
{
    srd_system_free(&s->sys);
    free(s->jac);
    free(s->work);
    free(s->ipiv);
    memset(s, 0, sizeof *s);
}

void srd_solver_zero(srd_solver *s)
{
    memset(s->jac, 0, sizeof(double) * srd_system_jac_len(&s->sys));
}

void srd_solver_add_diagonal(srd_solver *s, int i, double value)
{
    long long pos = srd_system_position(&s->sys, i, i);
    if (i < s->sys.n_free && pos >= 0)
        s->jac[pos] += value;
}

/* Expands the upper symmetric band (ldab = kd + 1) into LAPACK general band storage with
 * kl = ku = kd (ldab = 3 kd + 1, the top kd rows left for LU fill-in). */
static void expand_symmetric_band(const srd_system *sys, const double *sym, double *gen)
{
    int n = sys->n_free, kd = sys->ku;
    long long lds = sys->ldab, ldg = general_ldab(sys);
    memset(gen, 0, sizeof(double) * (size_t)n * (size_t)ldg);
    for (int j = 0; j < n; j++)
        for (int i = j - kd > 0 ? j - kd : 0; i <= j; i++) {
            double a = sym[j * lds + kd + i - j];
            gen[j * ldg + 2 * kd + i - j] = a; /* (i, j), upper */
            gen[i * ldg + 2 * kd + j - i] = a; /* (j, i), lower */
        }
}

/* LU with partial pivoting of a copy of the Jacobian. */
static int solve_lu(srd_solver *s, double *b)
{
    const srd_system *sys = &s->sys;
    int n = sys->n_free;
    size_t storage = (size_t)srd_system_storage(sys);
    switch (sys->layout) {
    case SRD_JAC_DENSE:
        memcpy(s->work, s->jac, sizeof(double) * storage);
        return LAPACKE_dgesv_work(LAPACK_COL_MAJOR, n, 1, s->work, n, s->ipiv, b, n);
    case SRD_JAC_BAND:
        memcpy(s->work, s->jac, sizeof(double) * storage);
        return LAPACKE_dgbsv_work(LAPACK_COL_MAJOR, n, sys->kl, sys->ku, 1, s->work, (int)sys->ldab, s->ipiv, b, n);
    case SRD_JAC_BAND_SYM:
        expand_symmetric_band(sys, s->jac, s->work);
        return LAPACKE_dgbsv_work(LAPACK_COL_MAJOR, n, sys->ku, sys->ku, 1, s->work, (int)general_ldab(sys), s->ipiv,
                                  b, n);
    }
    return -1;
}

/* Cholesky of a copy of the upper triangle; info > 0 when the matrix is not positive definite. */
static int solve_spd(srd_solver *s, double *b)
{
    const srd_system *sys = &s->sys;
    int n = sys->n_free;
    memcpy(s->work, s->jac, sizeof(double) * (size_t)srd_system_storage(sys));
    if (sys->layout == SRD_JAC_BAND_SYM)
        return LAPACKE_dpbsv_work(LAPACK_COL_MAJOR, 'U', n, sys->ku, 1, s->work, (int)sys->ldab, b, n);
    return LAPACKE_dposv_work(LAPACK_COL_MAJOR, 'U', n, 1, s->work, n, b, n);
}

int srd_solver_solve(srd_solver *s, double *b)
{
    int n = s->sys.n_free, info = 0;
    s->used_lu = 0;
    if (n == 0) {
        s->last_info = 0;
        return 0;
    }
    if (!s->symmetric) {
        info = solve_lu(s, b);
    } else {
        /* LAPACK leaves b alone when Cholesky fails, but the fallback must not depend on it. */
        double *saved_b = s->work + work_size(&s->sys) - n;
        memcpy(saved_b, b, sizeof(double) * (size_t)n);
        info = solve_spd(s, b);
        if (info > 0) {
            memcpy(b, saved_b, sizeof(double) * (size_t)n);
            info = solve_lu(s, b);
            s->used_lu = 1;
        }
    }
    s->last_info = info;
    return info;
}

void srd_solver_multiply(const srd_solver *s, const double *x, double *y)
{
    srd_system_multiply(&s->sys, s->jac, x, y);
}

void srd_system_multiply(const srd_system *sys, const double *a, const double *x, double *y)
{
    int n = sys->n_free, kl = sys->kl, ku = sys->ku;
    long long ld = sys->ldab;
    for (int i = 0; i < n; i++)
        y[i] = 0;
    for (int j = 0; j < n; j++) {
        int lo = j - ku > 0 ? j - ku : 0;
        switch (sys->layout) {
        case SRD_JAC_DENSE:
            for (int i = 0; i < n; i++)
                y[i] += a[j * ld + i] * x[j];
            break;
        case SRD_JAC_BAND:
            for (int i = lo; i <= j + kl && i < n; i++)
                y[i] += a[j * ld + kl + ku + i - j] * x[j];
            break;
        case SRD_JAC_BAND_SYM:
            /* Only the upper band is stored: each off-diagonal entry also stands for its mirror. */
            for (int i = lo; i <= j; i++) {
                double v = a[j * ld + ku + i - j];
                y[i] += v * x[j];
                if (i != j)
                    y[j] += v * x[i];
            }
            break;
        }
    }
}

void srd_solver_scale(srd_solver *s, double factor)
{
    long long n = srd_system_storage(&s->sys);
    for (long long k = 0; k < n; k++)
        s->jac[k] *= factor;
}

void srd_solver_add_scaled(srd_solver *s, const double *a, double factor)
{
    long long n = srd_system_storage(&s->sys);
    for (long long k = 0; k < n; k++)
        s->jac[k] += factor * a[k];
}
