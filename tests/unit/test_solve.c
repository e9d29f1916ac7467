/* test_solve.c — the solvers of solve.h on known matrices written through srd_system_position:
 * SPD, indefinite, nonsymmetric and singular systems in every layout, fixed DOFs, the automatic
 * choice, an empty system, and the time of a 3,000-DOF rod solve banded against dense. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "diag.h"
#include "elab.h"
#include "parse.h"
#include "model_fixture.h"
#include "solve.h"

#include "tap.h"

static Tally tally;

/* ---- models ---- */

/* ---- known matrices, generated entry by entry ---- */

typedef enum { MAT_SPD, MAT_INDEFINITE, MAT_NONSYMMETRIC, MAT_SINGULAR } MatKind;

/* A band matrix of half-bandwidth `band`: random off-diagonal entries in [-1, 1), and a diagonal
 * 1 + the row's absolute off-diagonal sum (strictly diagonally dominant, so SPD when symmetric and
 * well conditioned), negated on odd rows for the indefinite kind. The singular kind has row and
 * column n/2 exactly zero, so every factorisation meets an exactly zero pivot. */
typedef struct Mat {
    MatKind  kind;
    int      n, band;
    uint64_t seed;
} Mat;

static double off_diagonal(const Mat *A, int i, int j)
{
    if (A->kind == MAT_SINGULAR && (i == A->n / 2 || j == A->n / 2))
        return 0;
    if (A->kind != MAT_NONSYMMETRIC && i > j)
        return hash_uniform(A->seed, (uint64_t)j, (uint64_t)i);
    return hash_uniform(A->seed, (uint64_t)i, (uint64_t)j);
}

static double entry(const Mat *A, int i, int j)
{
    if (abs(i - j) > A->band)
        return 0;
    if (i != j)
        return off_diagonal(A, i, j);
    if (A->kind == MAT_SINGULAR && i == A->n / 2)
        return 0;
    double sum = 1;
    for (int k = i - A->band; k <= i + A->band; k++)
        if (k >= 0 && k < A->n && k != i)
            sum += fabs(off_diagonal(A, i, k));
    return A->kind == MAT_INDEFINITE && i % 2 ? -sum : sum;
}

/* y = A x from the generator itself, independent of any storage layout. */
static void reference_multiply(const Mat *A, const double *x, double *y)
{
    for (int i = 0; i < A->n; i++) {
        y[i] = 0;
        for (int j = i - A->band; j <= i + A->band; j++)
            if (j >= 0 && j < A->n)
                y[i] += entry(A, i, j) * x[j];
    }
}

/* Adds A into the solver's storage the way generated kernels do: each entry at its
 * srd_system_position, entries the layout does not keep into the scratch slot. Returns how many
 * went to the scratch slot. */
static long long fill(srd_solver *s, const Mat *A)
{
    long long scratch = srd_system_storage(&s->sys), dropped = 0;
    for (int j = 0; j < A->n; j++)
        for (int i = j - A->band; i <= j + A->band; i++) {
            if (i < 0 || i >= A->n)
                continue;
            long long pos = srd_system_position(&s->sys, i, j);
            dropped += pos < 0;
            s->jac[pos >= 0 ? pos : scratch] += entry(A, i, j);
        }
    return dropped;
}

/* Entries of the band strictly below the diagonal: what BAND_SYM leaves to the scratch slot. */
static long long lower_band_count(int n, int band)
{
    long long c = 0;
    for (int d = 1; d <= band && d < n; d++)
        c += n - d;
    return c;
}

/* ---- vectors ---- */

static double norm_inf(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s = fmax(s, fabs(v[i]));
    return s;
}

static double diff_inf(const double *a, const double *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s = fmax(s, fabs(a[i] - b[i]));
    return s;
}

static double *random_vector(int n, uint64_t seed)
{
    double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++)
        v[i] = hash_uniform(seed, (uint64_t)i, 77);
    return v;
}

/* ---- one solve of a known matrix in one configuration ---- */

typedef struct Config {
    const char     *name;
    srd_solver_kind kind;
    int             symmetric;
} Config;

static const Config configs[4] = {
    { "dense LU", SRD_SOLVER_DENSE, 0 },
    { "banded LU", SRD_SOLVER_BANDED, 0 },
    { "dense SPD", SRD_SOLVER_DENSE, 1 },
    { "banded SPD", SRD_SOLVER_BANDED, 1 },
};

typedef struct Outcome {
    int            info, used_lu, last_info;
    srd_jac_layout layout;
    long long      dropped;      /* entries written to the scratch slot */
    double         residual;     /* |A x - b|_inf / |b|_inf, A from the generator */
    double         multiply_err; /* |J x - A x|_inf / |A x|_inf after the solve: J kept intact */
    double        *x;
} Outcome;

static Outcome solve_known(const srd_model *m, const Config *c, const Mat *A, const double *b)
{
    Outcome o = { 0 };
    srd_solver s;
    srd_solver_init(&s, m, c->kind, c->symmetric);
    srd_solver_zero(&s);
    o.layout = s.sys.layout;
    o.dropped = fill(&s, A);
    int n = A->n;
    o.x = malloc(sizeof(double) * (size_t)n);
    memcpy(o.x, b, sizeof(double) * (size_t)n);
    o.info = srd_solver_solve(&s, o.x);
    o.used_lu = s.used_lu;
    o.last_info = s.last_info;
    double *ax = malloc(sizeof(double) * (size_t)n), *jx = malloc(sizeof(double) * (size_t)n);
    reference_multiply(A, o.x, ax);
    srd_solver_multiply(&s, o.x, jx);
    o.multiply_err = diff_inf(jx, ax, n) / fmax(norm_inf(ax, n), 1e-300);
    o.residual = diff_inf(ax, b, n) / norm_inf(b, n);
    free(ax);
    free(jx);
    srd_solver_free(&s);
    return o;
}

static const char *layout_name(srd_jac_layout l)
{
    return l == SRD_JAC_DENSE ? "dense" : l == SRD_JAC_BAND ? "band" : "symmetric band";
}

static srd_jac_layout expected_layout(const Config *c)
{
    if (c->kind == SRD_SOLVER_DENSE)
        return SRD_JAC_DENSE;
    return c->symmetric ? SRD_JAC_BAND_SYM : SRD_JAC_BAND;
}

/* Solves A x = b in the configurations `which` (bit k: configs[k]) and checks each against the
 * residual (infinity norm, relative to |b|), the stored layout, and the first solution. */
static void solve_all(const srd_model *m, const Mat *A, unsigned which, bool expect_lu_fallback, const char *what)
{
    double *b = random_vector(A->n, A->seed + 1);
    double *x0 = NULL;
    for (int k = 0; k < 4; k++) {
        if (!(which & (1u << k)))
            continue;
        const Config *c = &configs[k];
        Outcome o = solve_known(m, c, A, b);
        long long want_dropped = o.layout == SRD_JAC_BAND_SYM ? lower_band_count(A->n, A->band) : 0;
        bool fell_back = c->symmetric && expect_lu_fallback;
        double agree = x0 ? diff_inf(o.x, x0, A->n) / norm_inf(x0, A->n) : 0;
        check(&tally, o.info == 0 && o.last_info == 0 && o.layout == expected_layout(c) && o.dropped == want_dropped &&
                  o.residual <= 1e-12 && o.multiply_err <= 1e-14 && agree <= 1e-12 && o.used_lu == fell_back,
              "%s, %s (n %d, band %d, %s layout): info %d, used_lu %d, |Ax-b|_inf/|b|_inf %.1e (tol 1e-12), "
              "differs from %s by %.1e (tol 1e-12), multiply %.1e",
              what, c->name, A->n, A->band, layout_name(o.layout), o.info, o.used_lu, o.residual,
              x0 ? "the first" : "itself", agree, o.multiply_err);
        if (!x0)
            x0 = o.x;
        else
            free(o.x);
    }
    free(x0);
    free(b);
}

/* The reduced size and half-bandwidth of a model's free DOFs. */
static void measure(const srd_model *m, int *n, int *band)
{
    srd_system sys;
    srd_system_init(&sys, m, SRD_JAC_BAND);
    *n = sys.n_free;
    *band = sys.kl;
    srd_system_free(&sys);
}

/* ---- (a)-(d): known matrices on a 200-node rod ---- */

static void test_known_matrices(void)
{
    Loaded l;
    if (!load_rod(&l, 200, false)) {
        check(&tally, 0, "200-node rod elaborates");
        return;
    }
    Mat A = { MAT_SPD, 0, 0, 1234 };
    measure(l.m, &A.n, &A.band);
    check(&tally, A.n == 799 && A.band > 0 && A.band < 20, "200-node rod: %d free DOFs, half-bandwidth %d", A.n, A.band);

    solve_all(l.m, &A, 0xF, false, "(a) random SPD band");
    A.kind = MAT_INDEFINITE;
    A.seed = 99;
    solve_all(l.m, &A, 0xF, true, "(b) indefinite symmetric");
    A.kind = MAT_NONSYMMETRIC;
    A.seed = 4321;
    solve_all(l.m, &A, 0x3, false, "(c) nonsymmetric band");

    A.kind = MAT_SINGULAR;
    double *b = random_vector(A.n, 5);
    for (int k = 0; k < 4; k++) {
        Outcome o = solve_known(l.m, &configs[k], &A, b);
        check(&tally, o.info > 0 && o.info <= A.n && o.last_info == o.info && o.used_lu == configs[k].symmetric,
              "(d) singular (row and column %d zero), %s: info %d > 0, used_lu %d", A.n / 2, configs[k].name, o.info,
              o.used_lu);
        free(o.x);
    }
    free(b);

    /* The same solver object solves a good system after a singular one. */
    srd_solver s;
    srd_solver_init(&s, l.m, SRD_SOLVER_BANDED, 1);
    int infos[2];
    for (int round = 0; round < 2; round++) {
        A.kind = round == 0 ? MAT_SINGULAR : MAT_SPD;
        srd_solver_zero(&s);
        fill(&s, &A);
        double *x = random_vector(A.n, 6);
        infos[round] = srd_solver_solve(&s, x);
        free(x);
    }
    check(&tally, infos[0] > 0 && infos[1] == 0 && s.last_info == 0 && !s.used_lu,
          "(d) a solver reused after a singular solve succeeds (info %d then %d)", infos[0], infos[1]);
    srd_solver_free(&s);
    unload(&l);
}

/* ---- zero and add_diagonal ---- */

static void test_diagonal(void)
{
    srd_model *m = chain_model(40, false, false);
    for (int k = 0; k < 4; k++) {
        srd_solver s;
        srd_solver_init(&s, m, configs[k].kind, configs[k].symmetric);
        size_t len = srd_system_jac_len(&s.sys);
        for (size_t p = 0; p < len; p++)
            s.jac[p] = 1.0 + (double)p; /* garbage, scratch slots included */
        srd_solver_zero(&s);
        bool zeroed = norm_inf(s.jac, (int)len) == 0;
        int n = s.sys.n_free;
        for (int i = 0; i < n; i++)
            srd_solver_add_diagonal(&s, i, 2.0 + i);
        double *x = random_vector(n, 8), *b = random_vector(n, 8);
        int info = srd_solver_solve(&s, x);
        double worst = 0;
        for (int i = 0; i < n; i++)
            worst = fmax(worst, fabs(x[i] * (2.0 + i) - b[i]));
        check(&tally, zeroed && info == 0 && worst <= 1e-15,
              "zero clears the storage and its scratch slot; add_diagonal gives diag(2 + i), %s (error %.1e)",
              configs[k].name, worst);
        free(x);
        free(b);
        srd_solver_free(&s);
    }
    srd_model_free(m);
}

/* ---- (e): fixed DOFs ---- */

/* Model DOFs of one element instance, as measure_band in batch.c sees them. */
static int stencil_dofs(const srd_model *m, const srd_elemset *set, int i, int *dofs)
{
    int nd = 0;
    for (int j = 0; j < set->n_node; j++)
        for (int c = 0; c < 3; c++)
            dofs[nd++] = m->node_dof[set->nodes[i * set->n_node + j]] + c;
    for (int j = 0; j < set->n_edge; j++) {
        int e = set->edges[i * set->n_edge + j];
        if (m->edge_twist[e] >= 0)
            dofs[nd++] = m->edge_twist[e];
        if (m->edge_xi[e] >= 0)
            dofs[nd++] = m->edge_xi[e];
    }
    return nd;
}

/* Assembles a random SPD block per element instance over its model DOFs, as a kernel would:
 * into the solver through free_index and srd_system_position (the scratch slot for anything not
 * stored), and into a dense reference R over all model DOFs. Returns entries between two free
 * DOFs that had no position in a layout that should store them. */
static long long assemble_elements(srd_solver *s, const srd_model *m, double *R, uint64_t seed)
{
    int nm = m->n_dofs;
    long long scratch = srd_system_storage(&s->sys), lost = 0;
    for (int k = 0; k < m->n_sets; k++) {
        const srd_elemset *set = &m->sets[k];
        for (int i = 0; i < set->n; i++) {
            int dofs[64];
            int nd = stencil_dofs(m, set, i, dofs);
            for (int a = 0; a < nd; a++)
                for (int c = 0; c < nd; c++) {
                    int lo = a < c ? a : c, hi = a < c ? c : a;
                    double v = a == c ? nd : hash_uniform(seed + (uint64_t)k, (uint64_t)i, (uint64_t)(lo * 64 + hi));
                    R[(size_t)dofs[c] * (size_t)nm + (size_t)dofs[a]] += v;
                    int fa = s->sys.free_index[dofs[a]], fc = s->sys.free_index[dofs[c]];
                    long long pos = srd_system_position(&s->sys, fa, fc);
                    bool stored_here = s->sys.layout != SRD_JAC_BAND_SYM || fa <= fc;
                    lost += fa >= 0 && fc >= 0 && pos < 0 && stored_here;
                    s->jac[pos >= 0 ? pos : scratch] += v;
                }
        }
    }
    return lost;
}

static void test_fixed_dofs(void)
{
    Loaded l;
    const srd_model *m = load_rod(&l, 50, true);
    if (!m) {
        check(&tally, 0, "clamped rod elaborates");
        return;
    }
    int nm = m->n_dofs;
    srd_system sys;
    srd_system_init(&sys, m, SRD_JAC_BAND);
    bool numbering = true;
    for (int d = 0, next = 0; d < nm; d++)
        numbering &= m->dof_fixed[d] ? sys.free_index[d] == -1 : sys.free_index[d] == next++;
    /* the clamp: the end node (3) and the end edge's twist; the next node slides (free rows) */
    check(&tally, m->n_fixed == 4 && m->n_slides == 1 && sys.n_free == nm - m->n_fixed && numbering,
          "(e) clamped rod: %d DOFs, %d fixed, %d free, numbered in model order, %d sliding node", nm, m->n_fixed,
          sys.n_free, m->n_slides);
    srd_system_free(&sys);

    double *x0 = NULL;
    for (int k = 0; k < 4; k++) {
        srd_solver s;
        srd_solver_init(&s, m, configs[k].kind, configs[k].symmetric);
        int n = s.sys.n_free;
        double *R = calloc((size_t)nm * (size_t)nm, sizeof(double));
        srd_solver_zero(&s);
        long long lost = assemble_elements(&s, m, R, 2024);
        /* A unit mass on every free DOF, through add_diagonal, makes the system SPD. */
        for (int d = 0; d < nm; d++)
            if (s.sys.free_index[d] >= 0) {
                srd_solver_add_diagonal(&s, s.sys.free_index[d], 1.0);
                R[(size_t)d * (size_t)nm + (size_t)d] += 1.0;
            }
        double *b = random_vector(n, 31), *x = malloc(sizeof(double) * (size_t)n);
        memcpy(x, b, sizeof(double) * (size_t)n);
        int info = srd_solver_solve(&s, x);
        /* Residual over free DOFs with the model-numbered reference. */
        double res = 0;
        for (int d = 0; d < nm; d++) {
            int fd = s.sys.free_index[d];
            if (fd < 0)
                continue;
            double r = -b[fd];
            for (int e = 0; e < nm; e++)
                if (s.sys.free_index[e] >= 0)
                    r += R[(size_t)e * (size_t)nm + (size_t)d] * x[s.sys.free_index[e]];
            res = fmax(res, fabs(r));
        }
        res /= norm_inf(b, n);
        double agree = x0 ? diff_inf(x, x0, n) / norm_inf(x0, n) : 0;
        check(&tally, info == 0 && lost == 0 && !s.used_lu && res <= 1e-12 && agree <= 1e-12,
              "(e) element-assembled clamped rod, %s: n_free %d, band %d, entries lost %lld, "
              "|Rx-b|_inf/|b|_inf %.1e (tol 1e-12), differs from dense LU by %.1e",
              configs[k].name, n, s.sys.kl, lost, res, agree);
        if (!x0)
            x0 = x;
        else
            free(x);
        free(b);
        free(R);
        srd_solver_free(&s);
    }
    free(x0);
    unload(&l);
}

/* ---- (f): the automatic choice between dense and banded (sparse: test_sparse.c), and an
 * empty system ---- */

static void expect_choice(const srd_model *m, const char *what, srd_solver_kind want)
{
    for (int sym = 0; sym <= 1; sym++) {
        srd_solver s;
        srd_solver_init(&s, m, SRD_SOLVER_AUTO, sym);
        const srd_system *y = &s.sys;
        long long want_ldab = want == SRD_SOLVER_DENSE ? y->n_free : sym ? y->ku + 1 : 2 * y->kl + y->ku + 1;
        srd_jac_layout want_layout = want == SRD_SOLVER_DENSE ? SRD_JAC_DENSE : sym ? SRD_JAC_BAND_SYM : SRD_JAC_BAND;
        check(&tally, s.kind == want && y->layout == want_layout && y->ldab == want_ldab && s.symmetric == sym,
              "(f) auto picks %s for %s%s (n %d, band %d, ldab %lld)", want == SRD_SOLVER_DENSE ? "dense" : "banded",
              what, sym ? ", symmetric" : "", y->n_free, y->kl, y->ldab);
        srd_solver_free(&s);
    }
}

static void test_auto_choice(void)
{
    Loaded l;
    if (load_rod(&l, 200, false)) {
        expect_choice(l.m, "a 200-node rod", SRD_SOLVER_BANDED);
        srd_solver s;
        srd_solver_init(&s, l.m, SRD_SOLVER_DENSE, 1);
        check(&tally, s.kind == SRD_SOLVER_DENSE && s.sys.layout == SRD_JAC_DENSE, "(f) an explicit dense choice is kept");
        srd_solver_free(&s);
        unload(&l);
    }
    if (load_rod(&l, 10, false)) {
        expect_choice(l.m, "a 10-node rod", SRD_SOLVER_DENSE);
        srd_solver s;
        srd_solver_init(&s, l.m, SRD_SOLVER_BANDED, 0);
        check(&tally, s.kind == SRD_SOLVER_BANDED && s.sys.layout == SRD_JAC_BAND, "(f) an explicit banded choice is kept");
        srd_solver_free(&s);
        unload(&l);
    }
    /* A closed chain (band as wide as the system) now goes sparse: test_sparse.c checks it. */
    srd_model *m = chain_model(22, false, false); /* 66 DOFs, band 5: just over the n > 64 floor */
    expect_choice(m, "a 22-node chain", SRD_SOLVER_BANDED);
    srd_model_free(m);
    m = chain_model(21, false, false); /* 63 DOFs */
    expect_choice(m, "a 21-node chain", SRD_SOLVER_DENSE);
    srd_model_free(m);
}

static void test_empty(void)
{
    srd_model *m = chain_model(5, false, true);
    for (int k = 0; k < 4; k++) {
        srd_solver s;
        srd_solver_init(&s, m, configs[k].kind, configs[k].symmetric);
        srd_solver_zero(&s);
        srd_solver_add_diagonal(&s, 0, 1.0); /* no free DOF 0: ignored */
        double b[1] = { 42 }, y[1] = { 42 };
        int info = srd_solver_solve(&s, b);
        srd_solver_multiply(&s, b, y);
        check(&tally, s.sys.n_free == 0 && info == 0 && s.last_info == 0 && b[0] == 42 && y[0] == 42,
              "n_free 0, %s: nothing to solve, info %d", configs[k].name, info);
        srd_solver_free(&s);
    }
    srd_model_free(m);
}

/* ---- timing: a 3,000-DOF rod, banded against dense ---- */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Best time of `reps` solves (factorisation included) of the SPD generator matrix, and the
 * solution of the last one. */
static double time_solve(const srd_model *m, const Config *c, const Mat *A, int reps, double *x_out, int *kind)
{
    srd_solver s;
    srd_solver_init(&s, m, c->kind, c->symmetric);
    srd_solver_zero(&s);
    fill(&s, A);
    *kind = s.kind;
    double *b = random_vector(A->n, 17), best = INFINITY;
    for (int r = 0; r < reps; r++) {
        memcpy(x_out, b, sizeof(double) * (size_t)A->n);
        double t0 = now();
        srd_solver_solve(&s, x_out);
        best = fmin(best, now() - t0);
    }
    free(b);
    srd_solver_free(&s);
    return best;
}

static void time_rod(void)
{
    Loaded l;
    if (!load_rod(&l, 752, true)) {
        check(&tally, 0, "752-node rod elaborates");
        return;
    }
    Mat A = { MAT_SPD, 0, 0, 555 };
    measure(l.m, &A.n, &A.band);
    const Config runs[] = {
        { "auto LU", SRD_SOLVER_AUTO, 0 },   { "auto SPD", SRD_SOLVER_AUTO, 1 },   { "banded LU", SRD_SOLVER_BANDED, 0 },
        { "banded SPD", SRD_SOLVER_BANDED, 1 }, { "dense LU", SRD_SOLVER_DENSE, 0 }, { "dense SPD", SRD_SOLVER_DENSE, 1 },
    };
    double *x[6], t[6];
    int kinds[6];
    for (int k = 0; k < 6; k++) {
        x[k] = malloc(sizeof(double) * (size_t)A.n);
        t[k] = time_solve(l.m, &runs[k], &A, runs[k].kind == SRD_SOLVER_DENSE ? 2 : 50, x[k], &kinds[k]);
    }
    double worst = 0;
    for (int k = 1; k < 6; k++)
        worst = fmax(worst, diff_inf(x[k], x[0], A.n) / norm_inf(x[0], A.n));
    check(&tally, A.n == 3003 && kinds[0] == SRD_SOLVER_BANDED && kinds[1] == SRD_SOLVER_BANDED && worst <= 1e-12,
          "clamped 752-node rod: %d free DOFs, auto picks banded, all six solves agree to %.1e (tol 1e-12)", A.n,
          worst);
    printf("# %d-DOF rod, half-bandwidth %d, one solve (copy + factorisation + substitution), best of 50 banded,"
           " best of 2 dense, single-threaded OpenBLAS:\n",
           A.n, A.band);
    for (int k = 0; k < 6; k++)
        printf("#   %-10s %10.3f ms\n", runs[k].name, 1e3 * t[k]);
    printf("#   dense LU / banded LU %.0fx, dense SPD / banded SPD %.0fx\n", t[4] / t[2], t[5] / t[3]);
    for (int k = 0; k < 6; k++)
        free(x[k]);
    unload(&l);
}

int main(void)
{
    test_known_matrices();
    test_diagonal();
    test_fixed_dofs();
    test_auto_choice();
    test_empty();
    time_rod();
    printf("%d passed, %d failed\n", tally.run - tally.failed, tally.failed);
    return tally.failed != 0;
}
