/* solve.c — solves of the reduced Jacobian: LAPACK in dense or band storage, sparse/sparse.c in
 * compressed columns. Cholesky first when the caller says the system is symmetric, LU when it is
 * not or when Cholesky finds it indefinite. Also the automatic choice between the three. */
#include "solve.h"
#include "alloc.h"
#include "clock.h"
#include "sparse.h"
#include "pattern.h"
#include <lapacke.h>
#include <stdbool.h>
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

/* The cost model of the automatic choice, fitted to bench/sparse.c and tests/unit/test_solve.c
 * on the 2-core development machine (one BLAS thread; bench/README.md): dense LAPACK runs at
 * about 40 GFLOP/s; band LU and Cholesky approach 25 GFLOP/s only for wide bands (17 at a
 * half-bandwidth of 143, 23 at 1,190) and pay a cost per row besides; CHOLMOD's supernodal
 * Cholesky reaches about 9 GFLOP/s on shells, UMFPACK's LU 6, plus a fixed cost per call and per
 * entry of the factor (scatter, supernode bookkeeping, the triangular solves). */
#define RATE_DENSE 4.0e10
#define RATE_BAND_WIDE 2.5e10
#define BAND_HALF_RATE_WIDTH 60.0
#define BAND_SECONDS_PER_ROW 1e-7
#define RATE_CHOLESKY 9.0e9
#define RATE_LU 6.0e9
#define SPARSE_SECONDS_PER_CALL 2e-5
#define SPARSE_SECONDS_PER_ENTRY 8e-9

/* Flops of one factorisation; LU costs twice Cholesky. */
static double dense_flops(double n, int symmetric) { return (symmetric ? 1.0 : 2.0) / 3.0 * n * n * n; }

/* LAPACK's band LU tracks how far row interchanges widen U: with the few interchanges these
 * Jacobians need it stays near the band, so LU costs about twice Cholesky here too. */
static double band_flops(double n, double b, int symmetric)
{
    return symmetric ? n * (b * b + 3 * b) : 2 * n * b * (b + 1);
}

/* Below this many predicted flops the choice between dense and band hardly matters and the
 * sparse analysis would cost more than it could save. */
#define SPARSE_WORTH_FLOPS 2e7

/* Leading dimension of the general band matrix the LU fallback rebuilds from symmetric storage. */
static long long general_ldab(const srd_system *sys) { return 3LL * sys->ku + 1; }

/* Doubles of the factorisation copy: the matrix, with room for the general band when a symmetric
 * band may need LU. */
static size_t work_size(const srd_system *sys)
{
    if (sys->layout == SRD_JAC_CSC)
        return (size_t)sys->n_free; /* the libraries keep their own factors */
    long long matrix = srd_system_storage(sys);
    if (sys->layout == SRD_JAC_BAND_SYM)
        matrix = (long long)sys->n_free * general_ldab(sys);
    return (size_t)matrix;
}

void srd_solver_plan(srd_solver *s, const srd_model *m, srd_solver_kind kind, int symmetric)
{
    srd_solver_plan_fixed(s, m, m->dof_fixed, kind, symmetric);
}

/* The layout of the current rule for small systems: band storage when the band is narrow
 * against the size (4 b + 1 < n, n > 64), else dense; its predicted seconds go to predicted[]. */
static srd_solver_kind dense_or_band(srd_solver *s, int symmetric)
{
    double n = s->sys.n_free, b = s->sys.kl > s->sys.ku ? s->sys.kl : s->sys.ku;
    s->predicted[SRD_SOLVER_DENSE] = dense_flops(n, symmetric) / RATE_DENSE;
    s->predicted[SRD_SOLVER_BANDED] =
        band_flops(n, b, symmetric) / (RATE_BAND_WIDE * b / (b + BAND_HALF_RATE_WIDTH) + 1) + BAND_SECONDS_PER_ROW * n;
    return 4 * b + 1 < n && n > 64 ? SRD_SOLVER_BANDED : SRD_SOLVER_DENSE;
}

/* Renumbers into CSC storage and runs the symbolic analysis; the predicted seconds of one sparse
 * factorisation go to predicted[]. Returns 0, or -1 when the analysis failed. */
static int plan_sparse(srd_solver *s, const srd_model *m, const unsigned char *fixed, int symmetric)
{
    srd_system_free(&s->sys);
    srd_system_init_fixed(&s->sys, m, fixed, SRD_JAC_CSC);
    s->sparse = srd_sparse_analyze(&s->sys, symmetric);
    if (!s->sparse)
        return -1;
    double flops = srd_sparse_flops(s->sparse) * (symmetric ? 1 : 2);
    double entries = srd_sparse_factor_entries(s->sparse) * (symmetric ? 1 : 2) + (double)s->sys.nnz;
    s->predicted[SRD_SOLVER_SPARSE] =
        flops / (symmetric ? RATE_CHOLESKY : RATE_LU) + SPARSE_SECONDS_PER_CALL + entries * SPARSE_SECONDS_PER_ENTRY;
    return 0;
}

/* Leaves the system in the layout of `kind` (it is in dense layout, or CSC after plan_sparse). */
static void set_layout(srd_solver *s, const srd_model *m, const unsigned char *fixed, srd_solver_kind kind,
                       int symmetric)
{
    if (kind != SRD_SOLVER_SPARSE) {
        srd_sparse_free(s->sparse);
        s->sparse = NULL;
    }
    if (kind == SRD_SOLVER_SPARSE || (kind == SRD_SOLVER_DENSE && s->sys.layout == SRD_JAC_DENSE))
        return;
    srd_system_free(&s->sys);
    srd_system_init_fixed(&s->sys, m, fixed,
                          kind == SRD_SOLVER_DENSE ? SRD_JAC_DENSE : symmetric ? SRD_JAC_BAND_SYM : SRD_JAC_BAND);
}

/* auto: the cheapest predicted layout; the sparse analysis only when the others are costly. */
static srd_solver_kind choose(srd_solver *s, const srd_model *m, const unsigned char *fixed, int symmetric)
{
    srd_solver_kind best = dense_or_band(s, symmetric);
    double n = s->sys.n_free, b = s->sys.kl > s->sys.ku ? s->sys.kl : s->sys.ku;
    double flops = best == SRD_SOLVER_DENSE ? dense_flops(n, symmetric) : band_flops(n, b, symmetric);
    if (flops < SPARSE_WORTH_FLOPS)
        return best;
    if (plan_sparse(s, m, fixed, symmetric) != 0)
        return best;
    return s->predicted[SRD_SOLVER_SPARSE] < s->predicted[best] ? SRD_SOLVER_SPARSE : best;
}

void srd_solver_plan_fixed(srd_solver *s, const srd_model *m, const unsigned char *fixed, srd_solver_kind kind,
                           int symmetric)
{
    memset(s, 0, sizeof *s);
    blas_single_thread();
    /* The band width is only known after numbering the free DOFs, so measure first. */
    srd_system_init_fixed(&s->sys, m, fixed, SRD_JAC_DENSE);
    if (kind == SRD_SOLVER_AUTO)
        kind = choose(s, m, fixed, symmetric);
    else if (kind == SRD_SOLVER_SPARSE)
        dense_or_band(s, symmetric);
    if (kind == SRD_SOLVER_SPARSE && !s->sparse && plan_sparse(s, m, fixed, symmetric) != 0)
        kind = SRD_SOLVER_BANDED; /* the library refused the pattern: the band still works */
    set_layout(s, m, fixed, kind, symmetric);
    s->kind = kind;
    s->symmetric = symmetric != 0;
    s->singular_col = -1;
}

double srd_solver_bytes(const srd_solver *s)
{
    double factor = 0;
    if (s->sparse) /* the factor's values and indices; an LU about twice a Cholesky factor */
        factor = 12.0 * srd_sparse_factor_entries(s->sparse) * (s->symmetric ? 1 : 2) + 4.0 * (double)s->sys.nnz;
    return sizeof(double) * ((double)srd_system_jac_len(&s->sys) + (double)work_size(&s->sys)) +
           sizeof(int) * (double)s->sys.n_free + factor;
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
    srd_sparse_free(s->sparse);
    srd_system_free(&s->sys);
    free(s->jac);
    free(s->work);
    free(s->ipiv);
    memset(s, 0, sizeof *s);
}

void srd_solver_zero(srd_solver *s)
{
    s->factored = SRD_FACTOR_NONE;
    memset(s->jac, 0, sizeof(double) * srd_system_jac_len(&s->sys));
}

void srd_solver_add_diagonal(srd_solver *s, int i, double value)
{
    long long pos = srd_system_position(&s->sys, i, i);
    s->factored = SRD_FACTOR_NONE;
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

/* ---- LAPACK: a factorisation of a copy of the Jacobian in work, then triangular solves ---- */

/* LU of a copy of the Jacobian into work and ipiv (general band storage for symmetric bands). */
static int factor_lu(srd_solver *s)
{
    const srd_system *sys = &s->sys;
    int n = sys->n_free;
    switch (sys->layout) {
    case SRD_JAC_DENSE:
        memcpy(s->work, s->jac, sizeof(double) * (size_t)srd_system_storage(sys));
        return LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, s->work, n, s->ipiv);
    case SRD_JAC_BAND:
        memcpy(s->work, s->jac, sizeof(double) * (size_t)srd_system_storage(sys));
        return LAPACKE_dgbtrf_work(LAPACK_COL_MAJOR, n, n, sys->kl, sys->ku, s->work, (int)sys->ldab, s->ipiv);
    case SRD_JAC_BAND_SYM:
        expand_symmetric_band(sys, s->jac, s->work);
        return LAPACKE_dgbtrf_work(LAPACK_COL_MAJOR, n, n, sys->ku, sys->ku, s->work, (int)general_ldab(sys),
                                   s->ipiv);
    case SRD_JAC_CSC: break;
    }
    return -1;
}

/* Cholesky of a copy of the upper triangle into work; info > 0 when not positive definite. */
static int factor_spd(srd_solver *s)
{
    const srd_system *sys = &s->sys;
    int n = sys->n_free;
    memcpy(s->work, s->jac, sizeof(double) * (size_t)srd_system_storage(sys));
    if (sys->layout == SRD_JAC_BAND_SYM)
        return LAPACKE_dpbtrf_work(LAPACK_COL_MAJOR, 'U', n, sys->ku, s->work, (int)sys->ldab);
    return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', n, s->work, n);
}

/* The LAPACK factorisation: Cholesky first when symmetric, LU when not or when it fails. U(info,
 * info) is zero after LU with row pivoting, so column info - 1 is the one without a pivot. */
static int factor_lapack(srd_solver *s)
{
    int info = s->symmetric ? factor_spd(s) : 1;
    if (info == 0) {
        s->factored = SRD_FACTOR_CHOLESKY;
        return 0;
    }
    s->used_lu = s->symmetric; /* a fallback from Cholesky */
    info = factor_lu(s);
    if (info > 0)
        s->singular_col = info - 1;
    if (info == 0)
        s->factored = SRD_FACTOR_LU;
    return info;
}

/* The triangular solves with the factor in work for nrhs right-hand sides (columns of b): with J,
 * or with its transpose (trans 'T', an LU factor). */
static int solve_lapack_factored(srd_solver *s, char trans, double *b, int nrhs)
{
    const srd_system *sys = &s->sys;
    int n = sys->n_free;
    bool band = sys->layout != SRD_JAC_DENSE;
    if (s->factored == SRD_FACTOR_CHOLESKY)
        return band ? LAPACKE_dpbtrs_work(LAPACK_COL_MAJOR, 'U', n, sys->ku, nrhs, s->work, (int)sys->ldab, b, n)
                    : LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'U', n, nrhs, s->work, n, b, n);
    if (!band)
        return LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, trans, n, nrhs, s->work, n, s->ipiv, b, n);
    bool sym = sys->layout == SRD_JAC_BAND_SYM;
    int kl = sym ? sys->ku : sys->kl, ldab = sym ? (int)general_ldab(sys) : (int)sys->ldab;
    return LAPACKE_dgbtrs_work(LAPACK_COL_MAJOR, trans, n, kl, sys->ku, nrhs, s->work, ldab, s->ipiv, b, n);
}

/* The LAPACK solve: the factorisation (Cholesky first when symmetric), then the solves; b is
 * untouched when the factorisation fails. */
static int solve_lapack(srd_solver *s, double *b, int nrhs)
{
    int info = factor_lapack(s);
    return info ? info : solve_lapack_factored(s, 'N', b, nrhs);
}

int srd_solver_solve(srd_solver *s, double *b)
{
    s->factored = SRD_FACTOR_NONE; /* a solve keeps no factor (srd_solver_factor does) */
    s->used_lu = 0;
    s->singular_col = -1;
    if (s->sys.n_free == 0) {
        s->last_info = 0;
        return 0;
    }
    double t0 = srd_seconds(), factor = 0;
    int info = s->sys.layout == SRD_JAC_CSC
                   ? srd_sparse_solve(s->sparse, &s->sys, s->jac, b, &s->used_lu, &s->singular_col, &factor)
                   : solve_lapack(s, b, 1);
    s->factored = SRD_FACTOR_NONE;
    s->time_factor += srd_seconds() - t0;
    s->last_info = info;
    return info;
}

/* One sparse factorisation for all nrhs right-hand sides (an unsymmetric system takes LU then,
 * where one right-hand side would try Cholesky of its symmetric part first). */
static int solve_sparse_many(srd_solver *s, double *b, int nrhs)
{
    double factor = 0;
    int info = srd_sparse_factor(s->sparse, &s->sys, s->jac, &s->used_lu, &s->singular_col, &factor);
    for (int k = 0; k < nrhs && info == 0; k++)
        info = srd_sparse_solve_factored(s->sparse, &s->sys, s->jac, b + (size_t)k * (size_t)s->sys.n_free);
    return info;
}

int srd_solver_solve_many(srd_solver *s, double *b, int nrhs)
{
    if (nrhs == 1 || s->sys.n_free == 0)
        return nrhs == 1 ? srd_solver_solve(s, b) : 0;
    s->factored = SRD_FACTOR_NONE;
    s->used_lu = 0;
    s->singular_col = -1;
    double t0 = srd_seconds();
    int info = s->sys.layout == SRD_JAC_CSC ? solve_sparse_many(s, b, nrhs) : solve_lapack(s, b, nrhs);
    s->factored = SRD_FACTOR_NONE;
    s->time_factor += srd_seconds() - t0;
    s->last_info = info;
    return info;
}

int srd_solver_factor(srd_solver *s)
{
    s->factored = SRD_FACTOR_NONE;
    s->used_lu = 0;
    s->singular_col = -1;
    double t0 = srd_seconds(), factor = 0;
    int info = 0;
    if (s->sys.n_free == 0)
        s->factored = SRD_FACTOR_CHOLESKY;
    else if (s->sys.layout != SRD_JAC_CSC)
        info = factor_lapack(s);
    else if ((info = srd_sparse_factor(s->sparse, &s->sys, s->jac, &s->used_lu, &s->singular_col, &factor)) == 0)
        s->factored = s->used_lu || !s->symmetric ? SRD_FACTOR_LU : SRD_FACTOR_CHOLESKY;
    s->time_factor += srd_seconds() - t0;
    s->last_info = info;
    return info;
}

int srd_solver_solve_factored(srd_solver *s, double *b)
{
    if (s->factored == SRD_FACTOR_NONE)
        return -1;
    if (s->sys.n_free == 0)
        return 0;
    double t0 = srd_seconds();
    int info = s->sys.layout == SRD_JAC_CSC ? srd_sparse_solve_factored(s->sparse, &s->sys, s->jac, b)
                                             : solve_lapack_factored(s, 'N', b, 1);
    s->time_factor += srd_seconds() - t0;
    return info;
}

/* LU of a copy of an unsymmetric dense or band Jacobian, then the solve with its transpose. */
static int solve_lu_transposed(srd_solver *s, double *b)
{
    int info = factor_lu(s);
    s->factored = SRD_FACTOR_LU;
    return info ? info : solve_lapack_factored(s, 'T', b, 1);
}

int srd_solver_solve_transposed(srd_solver *s, double *b)
{
    const srd_system *sys = &s->sys;
    if (s->symmetric || sys->layout == SRD_JAC_BAND_SYM || sys->n_free == 0)
        return srd_solver_solve(s, b); /* J^T = J */
    double t0 = srd_seconds(), factor = 0;
    s->factored = SRD_FACTOR_NONE;
    s->used_lu = 1;
    s->singular_col = -1;
    int info = sys->layout == SRD_JAC_CSC ? srd_sparse_solve_transposed(s->sparse, sys, s->jac, b, &s->singular_col,
                                                                        &factor)
                                          : solve_lu_transposed(s, b);
    s->factored = SRD_FACTOR_NONE;
    s->time_factor += srd_seconds() - t0;
    s->last_info = info;
    return info;
}

void srd_solver_multiply(const srd_solver *s, const double *x, double *y)
{
    srd_system_multiply(&s->sys, s->jac, x, y);
}

static void csc_multiply(const srd_system *sys, const double *a, const double *x, double *y)
{
    for (int j = 0; j < sys->n_free; j++)
        for (int k = sys->col_start[j]; k < sys->col_start[j + 1]; k++)
            y[sys->row_index[k]] += a[k] * x[j];
}

void srd_system_multiply(const srd_system *sys, const double *a, const double *x, double *y)
{
    int n = sys->n_free, kl = sys->kl, ku = sys->ku;
    long long ld = sys->ldab;
    for (int i = 0; i < n; i++)
        y[i] = 0;
    if (sys->layout == SRD_JAC_CSC) {
        csc_multiply(sys, a, x, y);
        return;
    }
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
        case SRD_JAC_CSC: break;
        }
    }
}

void srd_solver_scale(srd_solver *s, double factor)
{
    s->factored = SRD_FACTOR_NONE;
    long long n = srd_system_storage(&s->sys);
    for (long long k = 0; k < n; k++)
        s->jac[k] *= factor;
}

void srd_solver_add_scaled(srd_solver *s, const double *a, double factor)
{
    s->factored = SRD_FACTOR_NONE;
    long long n = srd_system_storage(&s->sys);
    for (long long k = 0; k < n; k++)
        s->jac[k] += factor * a[k];
}

const char *srd_solver_kind_name(srd_solver_kind kind)
{
    static const char *names[] = { "auto", "dense", "banded", "sparse" };
    return kind >= SRD_SOLVER_AUTO && kind <= SRD_SOLVER_SPARSE ? names[kind] : "?";
}

int srd_solver_kind_parse(const char *name)
{
    for (int k = SRD_SOLVER_AUTO; k <= SRD_SOLVER_SPARSE; k++)
        if (!strcmp(name, srd_solver_kind_name((srd_solver_kind)k)))
            return k;
    return -1;
}

/* Entry (i, j) of the Jacobian whichever triangle stores it. */
static double entry(const srd_solver *s, int i, int j)
{
    long long pos = srd_system_position(&s->sys, i, j);
    if (pos < 0)
        pos = s->sys.layout == SRD_JAC_BAND_SYM ? srd_system_position(&s->sys, j, i) : -1;
    return pos >= 0 ? s->jac[pos] : 0;
}

int srd_solver_column_empty(const srd_solver *s, int j)
{
    const srd_system *sys = &s->sys;
    if (sys->layout == SRD_JAC_CSC) {
        for (int k = sys->col_start[j]; k < sys->col_start[j + 1]; k++)
            if (s->jac[k] != 0)
                return 0;
        return 1;
    }
    int reach = sys->layout == SRD_JAC_DENSE ? sys->n_free : (sys->kl > sys->ku ? sys->kl : sys->ku);
    for (int i = j - reach > 0 ? j - reach : 0; i <= j + reach && i < sys->n_free; i++)
        if (entry(s, i, j) != 0)
            return 0;
    return 1;
}

double srd_solver_factor_flops(const srd_solver *s)
{
    double n = s->sys.n_free, b = s->sys.kl > s->sys.ku ? s->sys.kl : s->sys.ku;
    switch (s->kind) {
    case SRD_SOLVER_SPARSE: return srd_sparse_flops(s->sparse) * (s->symmetric ? 1 : 2);
    case SRD_SOLVER_BANDED: return band_flops(n, b, s->symmetric);
    default: return dense_flops(n, s->symmetric);
    }
}

/* Whether every pair lies inside the band (or dense storage, which holds everything). */
static int pairs_stored(const srd_system *sys, int n_pairs, const int *pairs)
{
    for (int k = 0; k < 2 * n_pairs; k += 2) {
        int d = pairs[k] - pairs[k + 1];
        if (sys->layout != SRD_JAC_DENSE && (d > sys->kl || -d > sys->ku))
            return 0;
    }
    return 1;
}

long long srd_solver_add_couplings(srd_solver *s, int n_pairs, const int *pairs)
{
    if (s->sys.layout != SRD_JAC_CSC)
        return pairs_stored(&s->sys, n_pairs, pairs) ? 0 : -1;
    long long added = srd_pattern_add(&s->sys, n_pairs, pairs);
    if (added == 0)
        return 0;
    s->factored = SRD_FACTOR_NONE;
    free(s->jac);
    s->jac = srd_xcalloc(srd_system_jac_len(&s->sys), sizeof(double));
    srd_sparse_free(s->sparse);
    s->sparse = srd_sparse_analyze(&s->sys, s->symmetric);
    return s->sparse ? added : -1;
}
