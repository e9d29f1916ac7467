/* sparse.c — CHOLMOD and UMFPACK behind sparse.h. The Jacobian's arrays are wrapped, not copied:
 * CHOLMOD reads the upper triangle of the full pattern (stype > 0), UMFPACK reads all of it. */
#include "sparse.h"
#include "alloc.h"
#include "clock.h"
#include "pattern.h"
#include <math.h>
#include <cholmod.h>
#include <umfpack.h>
#include <stdlib.h>
#include <string.h>

struct srd_sparse {
    int             symmetric;
    cholmod_common  cm;
    cholmod_factor *chol;            /* symbolic analysis, then each Cholesky factor */
    cholmod_dense  *x, *y, *e;       /* cholmod_solve2's reusable workspace */
    void           *lu_symbolic;     /* UMFPACK's analysis: made on the first LU */
    void           *lu_numeric;
    double          lu_control[UMFPACK_CONTROL];
    const char     *method;
    int             factored_lu;     /* the last factorisation was UMFPACK's */
    /* Unsymmetric systems first try Cholesky of the symmetric part, refined (refine_symmetric). */
    int            *mirror;          /* nnz: position of the transposed entry */
    double         *half_sum;        /* nnz: (J + J') / 2 */
    double         *iterate, *r;     /* n: the refined solution and its residual */
    int             refine_failures; /* in a row: after a few, straight to LU */
};

/* sys's arrays seen as a CHOLMOD matrix; values may be NULL for the pattern alone. */
static cholmod_sparse wrap(const srd_system *sys, const double *values)
{
    cholmod_sparse a;
    memset(&a, 0, sizeof a);
    a.nrow = a.ncol = (size_t)sys->n_free;
    a.nzmax = (size_t)sys->nnz;
    a.p = sys->col_start;
    a.i = sys->row_index;
    a.x = (void *)values; /* CHOLMOD only reads it */
    a.stype = 1;
    a.itype = CHOLMOD_INT;
    a.xtype = values ? CHOLMOD_REAL : CHOLMOD_PATTERN;
    a.dtype = CHOLMOD_DOUBLE;
    a.sorted = 1;
    a.packed = 1;
    return a;
}

/* libgomp's entry point (CHOLMOD is built with OpenMP); its header is not needed for one call. */
void omp_set_dynamic(int dynamic);

/* CHOLMOD's supernodal factorisation opens an OpenMP region of 4 threads per supernode (a
 * num_threads clause, so OMP_NUM_THREADS cannot lower it). On 2 busy cores those threads mostly
 * wait for each other: the 38k-DOF plate factorised in 250 ms. Dynamic threads let the runtime
 * give fewer threads than asked when the cores are loaded: 85 ms. */
static void limit_openmp(void)
{
    static int done;
    if (!done) {
        omp_set_dynamic(1);
        done = 1;
    }
}

/* Defined (as 1) only in simulators built with --static, which cannot link METIS
 * (standalone/no_metis.c). */
extern const int srd_sparse_without_metis __attribute__((weak));

/* CHOLMOD's default tries AMD, and METIS's nested dissection when AMD fills much; without
 * METIS, AMD alone. */
static void choose_orderings(cholmod_common *cm)
{
    if (&srd_sparse_without_metis == NULL || !srd_sparse_without_metis)
        return;
    cm->nmethods = 1;
    cm->method[0].ordering = CHOLMOD_AMD;
    cm->postorder = 1;
}

srd_sparse *srd_sparse_analyze(const srd_system *sys, int symmetric)
{
    srd_sparse *sp = srd_xcalloc(1, sizeof *sp);
    sp->symmetric = symmetric;
    sp->method = "";
    cholmod_start(&sp->cm);
    sp->cm.print = 0; /* failures come back as status codes, reported by the caller */
    limit_openmp();
    choose_orderings(&sp->cm);
    umfpack_di_defaults(sp->lu_control);
    /* The pattern is structurally symmetric (stencils couple both ways) and the values nearly
     * so: AMD on A + A' with diagonal pivots preferred beats the unsymmetric COLAMD strategy
     * (parachute, 10,938 DOFs: 86 ms against 126 ms per factorisation). No iterative
     * refinement: Newton's next iteration is one (it cost 15 % more per solve). */
    sp->lu_control[UMFPACK_STRATEGY] = UMFPACK_STRATEGY_SYMMETRIC;
    sp->lu_control[UMFPACK_IRSTEP] = 0;
    cholmod_sparse a = wrap(sys, NULL);
    sp->chol = cholmod_analyze(&a, &sp->cm);
    if (!sp->chol) {
        srd_sparse_free(sp);
        return NULL;
    }
    return sp;
}

void srd_sparse_free(srd_sparse *sp)
{
    if (!sp)
        return;
    cholmod_free_factor(&sp->chol, &sp->cm);
    cholmod_free_dense(&sp->x, &sp->cm);
    cholmod_free_dense(&sp->y, &sp->cm);
    cholmod_free_dense(&sp->e, &sp->cm);
    cholmod_finish(&sp->cm);
    if (sp->lu_numeric)
        umfpack_di_free_numeric(&sp->lu_numeric);
    if (sp->lu_symbolic)
        umfpack_di_free_symbolic(&sp->lu_symbolic);
    free(sp->mirror);
    free(sp->half_sum);
    free(sp->iterate);
    free(sp->r);
    free(sp);
}

double srd_sparse_flops(const srd_sparse *sp) { return sp->cm.fl; }

double srd_sparse_factor_entries(const srd_sparse *sp) { return sp->cm.lnz; }

const char *srd_sparse_method(const srd_sparse *sp) { return sp->method; }

/* CHOLMOD's simplicial factor is LDL' without pivoting: it goes through an indefinite matrix
 * whenever no pivot is exactly zero, unstably. Only a positive D counts as Cholesky; anything
 * else is left to the pivoting LU. (The supernodal factor is LL' and fails by itself.) */
static int positive_definite(const cholmod_factor *l)
{
    if (l->is_super || l->is_ll)
        return 1;
    const int *p = l->p;
    const double *x = l->x;
    for (size_t j = 0; j < l->n; j++)
        if (!(x[p[j]] > 0))
            return 0;
    return 1;
}

/* Cholesky factorisation; 1 when J is not positive definite (the caller falls back to LU). */
static int factor_cholesky(srd_sparse *sp, const srd_system *sys, const double *values, double *factor_s)
{
    cholmod_sparse a = wrap(sys, values);
    double t0 = srd_seconds();
    int ok = cholmod_factorize(&a, sp->chol, &sp->cm);
    *factor_s += srd_seconds() - t0;
    if (!ok || sp->cm.status != CHOLMOD_OK || sp->chol->minor < sp->chol->n || !positive_definite(sp->chol))
        return 1;
    sp->method = "CHOLMOD";
    return 0;
}

static int solve_cholesky(srd_sparse *sp, int n, double *b)
{
    cholmod_dense rhs;
    memset(&rhs, 0, sizeof rhs);
    rhs.nrow = rhs.nzmax = rhs.d = (size_t)n;
    rhs.ncol = 1;
    rhs.x = b;
    rhs.xtype = CHOLMOD_REAL;
    rhs.dtype = CHOLMOD_DOUBLE;
    if (!cholmod_solve2(CHOLMOD_A, sp->chol, &rhs, NULL, &sp->x, NULL, &sp->y, &sp->e, &sp->cm))
        return 1;
    memcpy(b, sp->x->x, sizeof(double) * (size_t)n);
    return 0;
}

/* The free index of the first zero on U's diagonal, in column order (UMFPACK permutes columns). */
static int zero_pivot(const srd_sparse *sp, int n)
{
    int *p = srd_xcalloc((size_t)n + 1, sizeof(int)), *q = srd_xcalloc((size_t)n + 1, sizeof(int));
    double *d = srd_xcalloc((size_t)n + 1, sizeof(double)), *rs = srd_xcalloc((size_t)n + 1, sizeof(double));
    int recip = 0, found = -1;
    if (umfpack_di_get_numeric(NULL, NULL, NULL, NULL, NULL, NULL, p, q, d, &recip, rs, sp->lu_numeric) ==
        UMFPACK_OK)
        for (int k = 0; k < n && found < 0; k++)
            if (d[k] == 0)
                found = q[k];
    free(p);
    free(q);
    free(d);
    free(rs);
    return found;
}

/* LU factorisation (UMFPACK's analysis on first use); 1 when singular or failed. */
static int factor_lu(srd_sparse *sp, const srd_system *sys, const double *values, int *pivot, double *factor_s)
{
    double info[UMFPACK_INFO];
    int n = sys->n_free;
    if (!sp->lu_symbolic && umfpack_di_symbolic(n, n, sys->col_start, sys->row_index, NULL, &sp->lu_symbolic,
                                                sp->lu_control, info) != UMFPACK_OK)
        return 1;
    if (sp->lu_numeric)
        umfpack_di_free_numeric(&sp->lu_numeric);
    double t0 = srd_seconds();
    int status = umfpack_di_numeric(sys->col_start, sys->row_index, values, sp->lu_symbolic, &sp->lu_numeric,
                                    sp->lu_control, info);
    *factor_s += srd_seconds() - t0;
    sp->method = "UMFPACK";
    if (status == UMFPACK_WARNING_singular_matrix)
        *pivot = zero_pivot(sp, n);
    return status != UMFPACK_OK;
}

static int solve_lu(srd_sparse *sp, const srd_system *sys, const double *values, double *b)
{
    double info[UMFPACK_INFO];
    int n = sys->n_free;
    double *x = srd_xcalloc((size_t)n + 1, sizeof(double));
    int status = umfpack_di_solve(UMFPACK_A, sys->col_start, sys->row_index, values, x, b, sp->lu_numeric,
                                  sp->lu_control, info);
    memcpy(b, x, sizeof(double) * (size_t)n);
    free(x);
    return status == UMFPACK_OK ? 0 : 1;
}

/* J^T x = b with UMFPACK's LU of J (a symmetric J: the plain solve). */
int srd_sparse_solve_transposed(srd_sparse *sp, const srd_system *sys, const double *values, double *b, int *pivot,
                                double *factor_s)
{
    int used_lu = 0;
    if (sp->symmetric)
        return srd_sparse_solve(sp, sys, values, b, &used_lu, pivot, factor_s);
    *pivot = -1;
    sp->factored_lu = 1;
    if (factor_lu(sp, sys, values, pivot, factor_s) != 0)
        return 1;
    double info[UMFPACK_INFO];
    double *x = srd_xcalloc((size_t)sys->n_free + 1, sizeof(double));
    int status = umfpack_di_solve(UMFPACK_At, sys->col_start, sys->row_index, values, x, b, sp->lu_numeric,
                                  sp->lu_control, info);
    memcpy(b, x, sizeof(double) * (size_t)sys->n_free);
    free(x);
    return status == UMFPACK_OK ? 0 : 1;
}

int srd_sparse_factor(srd_sparse *sp, const srd_system *sys, const double *values, int *used_lu, int *pivot,
                      double *factor_s)
{
    *used_lu = 0;
    *pivot = -1;
    sp->factored_lu = 0;
    if (sp->symmetric && factor_cholesky(sp, sys, values, factor_s) == 0)
        return 0;
    *used_lu = sp->symmetric; /* LU as a fallback from Cholesky, as in the dense and band paths */
    sp->factored_lu = 1;
    return factor_lu(sp, sys, values, pivot, factor_s);
}

int srd_sparse_solve_factored(srd_sparse *sp, const srd_system *sys, const double *values, double *b)
{
    return sp->factored_lu ? solve_lu(sp, sys, values, b) : solve_cholesky(sp, sys->n_free, b);
}

/* ---- unsymmetric systems that are nearly symmetric ----
 * Friction and drag add a small unsymmetric part N to a symmetric positive definite S (mass,
 * stiffness): J = S + N. Cholesky of S costs half an LU and runs at a higher rate, and
 * x <- x + S^-1 (b - J x) converges to J's solution while S^-1 N is small. The iteration stops
 * at the backward error of a direct solve, |b - J x| <= 1e-14 (|J| |x| + |b|) in every row, so
 * the solution is the LU's to rounding; when it converges slowly or S is not positive definite,
 * UMFPACK's LU solves instead. */

enum { REFINE_MAX_STEPS = 25, REFINE_MAX_FAILURES = 3 };
#define REFINE_TOLERANCE 1e-14

static void build_mirror(srd_sparse *sp, const srd_system *sys)
{
    int n = sys->n_free;
    sp->mirror = srd_xcalloc((size_t)sys->nnz + 1, sizeof(int));
    sp->half_sum = srd_xcalloc((size_t)sys->nnz + 1, sizeof(double));
    sp->iterate = srd_xcalloc((size_t)n + 1, sizeof(double));
    sp->r = srd_xcalloc((size_t)n + 1, sizeof(double));
    for (int j = 0; j < n; j++)
        for (int k = sys->col_start[j]; k < sys->col_start[j + 1]; k++)
            sp->mirror[k] = (int)srd_pattern_find(sys, j, sys->row_index[k]);
}

/* r = b - J x; returns the largest |r_i| / (|J| |x| + |b|)_i. */
static double residual(const srd_system *sys, const double *values, const double *x, const double *b, double *r,
                       double *scale)
{
    int n = sys->n_free;
    for (int i = 0; i < n; i++) {
        r[i] = b[i];
        scale[i] = fabs(b[i]);
    }
    for (int j = 0; j < n; j++)
        for (int k = sys->col_start[j]; k < sys->col_start[j + 1]; k++) {
            double a = values[k] * x[j];
            r[sys->row_index[k]] -= a;
            scale[sys->row_index[k]] += fabs(a);
        }
    double worst = 0;
    for (int i = 0; i < n; i++)
        if (scale[i] > 0)
            worst = fmax(worst, fabs(r[i]) / scale[i]);
    return worst;
}

/* 0 when x solves J x = b to the tolerance (b overwritten by x). */
static int refine_symmetric(srd_sparse *sp, const srd_system *sys, const double *values, double *b, double *factor_s)
{
    int n = sys->n_free;
    if (!sp->mirror)
        build_mirror(sp, sys);
    for (long long k = 0; k < sys->nnz; k++)
        sp->half_sum[k] = 0.5 * (values[k] + values[sp->mirror[k]]);
    if (factor_cholesky(sp, sys, sp->half_sum, factor_s) != 0)
        return 1;
    double *scale = srd_xcalloc((size_t)n + 1, sizeof(double)), previous = INFINITY;
    memset(sp->iterate, 0, sizeof(double) * (size_t)n);
    memcpy(sp->r, b, sizeof(double) * (size_t)n);
    int status = 1;
    for (int step = 0; step < REFINE_MAX_STEPS; step++) {
        if (solve_cholesky(sp, n, sp->r) != 0)
            break;
        for (int i = 0; i < n; i++)
            sp->iterate[i] += sp->r[i];
        double error = residual(sys, values, sp->iterate, b, sp->r, scale);
        if (error <= REFINE_TOLERANCE) {
            status = 0;
            break;
        }
        if (!(error < 0.5 * previous)) /* too slow, or diverging */
            break;
        previous = error;
    }
    free(scale);
    if (status == 0) {
        memcpy(b, sp->iterate, sizeof(double) * (size_t)n);
        sp->method = "CHOLMOD, refined";
    }
    return status;
}

int srd_sparse_solve(srd_sparse *sp, const srd_system *sys, const double *values, double *b, int *used_lu, int *pivot,
                     double *factor_s)
{
    if (!sp->symmetric && sp->refine_failures < REFINE_MAX_FAILURES) {
        *used_lu = 0;
        *pivot = -1;
        if (refine_symmetric(sp, sys, values, b, factor_s) == 0) {
            sp->refine_failures = 0;
            return 0;
        }
        sp->refine_failures++;
    }
    if (srd_sparse_factor(sp, sys, values, used_lu, pivot, factor_s) != 0)
        return 1;
    return srd_sparse_solve_factored(sp, sys, values, b);
}
