/* test_sparse.c — the sparse path of solve.h (CSC storage, CHOLMOD and UMFPACK) against dense
 * LAPACK on element-assembled systems: the pattern holds every stencil pair, SPD systems take
 * Cholesky, unsymmetric ones LU, indefinite symmetric ones fall back to LU, a new set of fixed
 * DOFs gives a new pattern, couplings that appear later merge into it, nearly symmetric ones are solved by refining on the Cholesky
 * factor of their symmetric part, singular systems name the column with no pivot, a factorisation
 * kept for right-hand sides one at a time (srd_solver_factor) agrees with the solve in every layout,
 * and the automatic choice takes sparse where the band is as wide as the system. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diag.h"
#include "elab.h"
#include "kernels.h"
#include "parse.h"
#include "pattern.h"
#include "sim.h"
#include "solve.h"
#include "model_fixture.h"
#include "sparse.h"

#include "tap.h"

static Tally tally;

/* What the element blocks look like. */
typedef enum { SYS_SPD, SYS_UNSYMMETRIC, SYS_NEARLY_SYMMETRIC, SYS_INDEFINITE, SYS_SINGULAR } SysKind;

typedef struct Problem {
    SysKind  kind;
    uint64_t seed;
    int      zero_free;  /* SYS_SINGULAR: the free index left with an empty row and column */
} Problem;

/* Entry (a, c) of instance i's block over its nd free DOFs: nd + 1 on the diagonal and a
 * symmetric random part off it (so the symmetric part of every assembled matrix is diagonally
 * dominant), plus for the unsymmetric kinds a skew or random unsymmetric part. */
static double block_entry(const Problem *p, int i, int a, int c, int nd)
{
    if (a == c)
        return nd + 1.0;
    int lo = a < c ? a : c, hi = a < c ? c : a;
    double v = hash_uniform(p->seed, (uint64_t)i, (uint64_t)(lo * 64 + hi));
    /* a large skew part on a symmetric positive definite one: nonsingular, far from symmetric */
    if (p->kind == SYS_UNSYMMETRIC)
        return v + (a < c ? 8 : -8) * hash_uniform(p->seed + 2, (uint64_t)i, (uint64_t)(lo * 64 + hi));
    /* drag and friction: a small unsymmetric part on a symmetric one */
    return p->kind == SYS_NEARLY_SYMMETRIC ? v + 0.02 * hash_uniform(p->seed + 1, (uint64_t)i, (uint64_t)(a * 64 + c))
                                           : v;
}

/* Assembles every instance's block into the solver (through srd_system_position, as kernels
 * do) and into a dense n x n reference R; then the diagonal: negated on odd DOFs for the
 * indefinite kind. Returns the entries between free DOFs the layout had no position for. */
static long long assemble(srd_solver *s, const srd_model *m, double *R, const Problem *p)
{
    int n = s->sys.n_free, id = 0;
    long long lost = 0;
    srd_solver_zero(s);
    for (int k = 0; k < m->n_sets; k++)
        for (int i = 0; i < m->sets[k].n; i++, id++) {
            int f[SRD_STENCIL_MAX], nd = srd_instance_free_dofs(&s->sys, m, k, i, f);
            for (int a = 0; a < nd; a++)
                for (int c = 0; c < nd; c++) {
                    if (p->kind == SYS_SINGULAR && (f[a] == p->zero_free || f[c] == p->zero_free))
                        continue;
                    double v = block_entry(p, id, a, c, nd);
                    if (p->kind == SYS_INDEFINITE && a == c && f[a] % 2)
                        v = -v;
                    long long pos = srd_system_position(&s->sys, f[a], f[c]);
                    bool stored_here = s->sys.layout != SRD_JAC_BAND_SYM || f[a] <= f[c];
                    lost += pos < 0 && stored_here;
                    if (pos >= 0)
                        s->jac[pos] += v;
                    R[(size_t)f[c] * (size_t)n + (size_t)f[a]] += v;
                }
        }
    return lost;
}

static double *random_vector(int n, uint64_t seed)
{
    double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++)
        v[i] = hash_uniform(seed, (uint64_t)i, 77);
    return v;
}

/* |R x - b|_inf / |b|_inf */
static double residual(const double *R, const double *x, const double *b, int n)
{
    double worst = 0, scale = 0;
    for (int i = 0; i < n; i++) {
        double r = -b[i];
        for (int j = 0; j < n; j++)
            r += R[(size_t)j * (size_t)n + (size_t)i] * x[j];
        worst = fmax(worst, fabs(r));
        scale = fmax(scale, fabs(b[i]));
    }
    return worst / scale;
}

typedef struct Solved {
    const char *method;
    int    info, used_lu, singular_col, kind, layout;
    long long lost, nnz;
    double residual;
    double *x;
} Solved;

static Solved solve_problem(const srd_model *m, const unsigned char *fixed, srd_solver_kind kind, int symmetric,
                            const Problem *p)
{
    Solved o = { 0 };
    srd_solver s;
    srd_solver_plan_fixed(&s, m, fixed, kind, symmetric);
    srd_solver_allocate(&s);
    int n = s.sys.n_free;
    double *R = calloc((size_t)n * (size_t)n + 1, sizeof(double));
    o.lost = assemble(&s, m, R, p);
    double *b = random_vector(n, p->seed + 3);
    o.x = malloc(sizeof(double) * (size_t)n + 1);
    memcpy(o.x, b, sizeof(double) * (size_t)n);
    o.info = srd_solver_solve(&s, o.x);
    o.used_lu = s.used_lu;
    o.method = s.sparse ? srd_sparse_method(s.sparse) : "LAPACK";
    o.singular_col = s.singular_col;
    o.kind = s.kind;
    o.layout = s.sys.layout;
    o.nnz = s.sys.nnz;
    o.residual = o.info ? INFINITY : residual(R, o.x, b, n);
    if (p->kind == SYS_SINGULAR)
        o.residual = srd_solver_column_empty(&s, p->zero_free) ? 0 : 1; /* reused: the column is seen empty */
    free(R);
    free(b);
    srd_solver_free(&s);
    return o;
}

static double max_diff(const double *a, const double *b, int n)
{
    double d = 0, scale = 0;
    for (int i = 0; i < n; i++) {
        d = fmax(d, fabs(a[i] - b[i]));
        scale = fmax(scale, fabs(b[i]));
    }
    return d / scale;
}

/* One kind of system on one rod: sparse (as symmetric when the kind is) against dense LU, and
 * the library that solved it. */
static void compare(const srd_model *m, const char *what, const Problem *p, int want_lu, const char *want_method)
{
    int symmetric = p->kind != SYS_UNSYMMETRIC && p->kind != SYS_NEARLY_SYMMETRIC;
    Solved ref = solve_problem(m, m->dof_fixed, SRD_SOLVER_DENSE, 0, p);
    Solved sp = solve_problem(m, m->dof_fixed, SRD_SOLVER_SPARSE, symmetric, p);
    int n = 0;
    for (int d = 0; d < m->n_dofs; d++)
        n += !m->dof_fixed[d];
    double diff = max_diff(sp.x, ref.x, n);
    check(&tally, ref.info == 0 && sp.info == 0 && sp.kind == SRD_SOLVER_SPARSE && sp.layout == SRD_JAC_CSC &&
                      sp.lost == 0 && sp.used_lu == want_lu && sp.residual <= 1e-12 && diff <= 1e-12 &&
                      !strcmp(sp.method, want_method),
          "%s: sparse (%s, used_lu %d, want %d, solved by %s), nnz %lld, entries lost %lld, |Rx-b|/|b| %.1e (tol 1e-12), "
          "differs from dense LU by %.1e (tol 1e-12)",
          what, symmetric ? "Cholesky first" : "unsymmetric", sp.used_lu, want_lu, sp.method, sp.nnz, sp.lost, sp.residual, diff);
    free(ref.x);
    free(sp.x);
}

static void test_kinds(void)
{
    Loaded l;
    if (!load_rod(&l, 60, true)) {
        check(&tally, 0, "clamped 60-node rod elaborates");
        return;
    }
    Problem spd = { SYS_SPD, 11, -1 }, uns = { SYS_UNSYMMETRIC, 12, -1 }, ind = { SYS_INDEFINITE, 13, -1 };
    Problem near = { SYS_NEARLY_SYMMETRIC, 14, -1 };
    compare(l.m, "SPD (CHOLMOD)", &spd, 0, "CHOLMOD");
    compare(l.m, "unsymmetric (refining on the symmetric part fails: UMFPACK)", &uns, 0, "UMFPACK");
    compare(l.m, "nearly symmetric (CHOLMOD on the symmetric part, refined)", &near, 0, "CHOLMOD, refined");
    compare(l.m, "indefinite symmetric (Cholesky fails, UMFPACK LU)", &ind, 1, "UMFPACK");
    unload(&l);
}

/* The pattern holds exactly what the stencils touch: a rod's bend-twist stencil spans 3 nodes
 * and 2 twists, so DOFs farther apart than that share no entry, and the band would be denser. */
static void test_pattern(void)
{
    Loaded l;
    if (!load_rod(&l, 40, false)) {
        check(&tally, 0, "40-node rod elaborates");
        return;
    }
    srd_system sys;
    srd_system_init(&sys, l.m, SRD_JAC_CSC);
    bool sorted = true, symmetric = true, diagonal = true;
    for (int j = 0; j < sys.n_free; j++) {
        diagonal &= srd_system_position(&sys, j, j) >= 0;
        for (int k = sys.col_start[j]; k < sys.col_start[j + 1]; k++) {
            sorted &= k == sys.col_start[j] || sys.row_index[k - 1] < sys.row_index[k];
            symmetric &= srd_system_position(&sys, j, sys.row_index[k]) >= 0;
        }
    }
    long long band_entries = 0;
    for (int j = 0; j < sys.n_free; j++)
        for (int i = j - sys.kl; i <= j + sys.kl; i++)
            band_entries += i >= 0 && i < sys.n_free;
    check(&tally, sorted && symmetric && diagonal && sys.nnz < band_entries && sys.nnz > 11LL * sys.n_free / 2,
          "CSC pattern of a 40-node rod: %d columns, nnz %lld (< %lld in the band), rows sorted %d, structurally "
          "symmetric %d, full diagonal %d",
          sys.n_free, sys.nnz, band_entries, sorted, symmetric, diagonal);
    check(&tally, srd_system_position(&sys, 0, sys.n_free - 1) == -1 && srd_system_storage(&sys) == sys.nnz,
          "entries no stencil touches have no position; the storage is nnz");
    srd_system_free(&sys);
    unload(&l);
}

/* A new set of fixed DOFs (a release) gives a new pattern and analysis, and solves right. */
static void test_changing_pattern(void)
{
    Loaded l;
    if (!load_rod(&l, 30, true)) {
        check(&tally, 0, "clamped 30-node rod elaborates");
        return;
    }
    const srd_model *m = l.m;
    unsigned char *fixed = calloc((size_t)m->n_dofs, 1);
    memcpy(fixed, m->dof_fixed, (size_t)m->n_dofs);
    Problem p = { SYS_SPD, 21, -1 };
    Solved before = solve_problem(m, fixed, SRD_SOLVER_SPARSE, 1, &p);
    for (int d = 3; d < m->n_dofs; d++) /* release all but the first node */
        fixed[d] = 0;
    Solved after = solve_problem(m, fixed, SRD_SOLVER_SPARSE, 1, &p);
    Solved ref = solve_problem(m, fixed, SRD_SOLVER_DENSE, 0, &p);
    int n = 0;
    for (int d = 0; d < m->n_dofs; d++)
        n += !fixed[d];
    double diff = max_diff(after.x, ref.x, n);
    check(&tally, before.info == 0 && after.info == 0 && after.nnz > before.nnz && after.lost == 0 &&
                      after.residual <= 1e-12 && diff <= 1e-12,
          "released DOFs: pattern grows from nnz %lld to %lld, entries lost %lld, |Rx-b|/|b| %.1e, differs from "
          "dense LU by %.1e (tol 1e-12)",
          before.nnz, after.nnz, after.lost, after.residual, diff);
    free(before.x);
    free(after.x);
    free(ref.x);
    free(fixed);
    unload(&l);
}

/* Couplings that appear later (contact pairs): merged into the sparse pattern without a new
 * plan, old entries kept, and the solve with them right; a band refuses a pair outside it. */
static void test_added_couplings(void)
{
    Loaded l;
    if (!load_rod(&l, 30, true)) {
        check(&tally, 0, "clamped 30-node rod elaborates");
        return;
    }
    srd_solver s;
    srd_solver_plan(&s, l.m, SRD_SOLVER_SPARSE, 1);
    srd_solver_allocate(&s);
    int n = s.sys.n_free;
    long long nnz0 = s.sys.nnz;
    int *old_start = malloc(sizeof(int) * (size_t)(n + 1)), *old_rows = malloc(sizeof(int) * (size_t)nnz0);
    memcpy(old_start, s.sys.col_start, sizeof(int) * (size_t)(n + 1));
    memcpy(old_rows, s.sys.row_index, sizeof(int) * (size_t)nnz0);
    int pairs[] = { 0, n - 1, 1, 2, 5, n - 3, n - 1, 0 }; /* (1, 2) is there already; (n-1, 0) twice */
    long long added = srd_solver_add_couplings(&s, 4, pairs);
    bool kept = true;
    for (int j = 0; j < n; j++)
        for (int k = old_start[j]; k < old_start[j + 1]; k++)
            kept &= srd_system_position(&s.sys, old_rows[k], j) >= 0;
    check(&tally, added == 4 && s.sys.nnz == nnz0 + 4 && kept && srd_system_position(&s.sys, n - 1, 0) >= 0 &&
                      srd_system_position(&s.sys, 5, n - 3) >= 0 && srd_solver_add_couplings(&s, 4, pairs) == 0,
          "couplings added to the pattern: %lld entries (want 4), nnz %lld -> %lld, old entries kept %d; adding "
          "them again changes nothing",
          added, nnz0, s.sys.nnz, kept);
    double *R = calloc((size_t)n * (size_t)n, sizeof(double));
    Problem p = { SYS_SPD, 41, -1 };
    assemble(&s, l.m, R, &p);
    for (int k = 0; k < 3; k++) { /* 0.3 [1 1; 1 1] per pair: symmetric, still positive definite */
        int ends[2] = { pairs[2 * k], pairs[2 * k + 1] };
        for (int a = 0; a < 2; a++)
            for (int c = 0; c < 2; c++) {
                s.jac[srd_system_position(&s.sys, ends[a], ends[c])] += 0.3;
                R[(size_t)ends[c] * (size_t)n + (size_t)ends[a]] += 0.3;
            }
    }
    double *b = random_vector(n, 43), *x = malloc(sizeof(double) * (size_t)n);
    memcpy(x, b, sizeof(double) * (size_t)n);
    int info = srd_solver_solve(&s, x);
    double res = residual(R, x, b, n);
    check(&tally, info == 0 && !s.used_lu && res <= 1e-12,
          "the system with the new couplings solves by Cholesky: |Rx-b|/|b| %.1e (tol 1e-12)", res);
    srd_solver_free(&s);
    srd_solver_plan(&s, l.m, SRD_SOLVER_BANDED, 1);
    srd_solver_allocate(&s);
    long long band = srd_solver_add_couplings(&s, 1, pairs), inside = srd_solver_add_couplings(&s, 1, pairs + 2);
    check(&tally, band == -1 && inside == 0, "banded storage: a pair outside the band asks for a new plan (%lld), "
          "one inside needs nothing (%lld)", band, inside);
    srd_solver_free(&s);
    free(R);
    free(b);
    free(x);
    free(old_start);
    free(old_rows);
    unload(&l);
}

/* Ten implicit-Euler steps of a 100-node rod on the sparse solver, with couplings added to the
 * pattern first (pairs of far DOFs no element touches, so their entries stay zero) or not.
 * Returns the positions (the caller frees them), or NULL. */
static double *steps_with_couplings(bool couple, long long *added, int *n_dofs)
{
    static const char *text = "material m { E = 10 MPa; nu = 0.5; rho = 1000 kg/m^3; }\n"
                              "rod r { path = line((0, 0, 0) m, (0.5, 0, 0) m); nodes = 100; radius = 5 mm; "
                              "material = m; }\nclamp r.start;\ngravity = (0, 0, -9.81) m/s^2;\n";
    Arena arena;
    arena_init(&arena);
    Program prog = { 0 };
    srd_model *m = parse_program_text(&arena, "couple.srd", text, strlen(text), parse_stdlib_dir(), &prog)
                       ? elab_program(&prog, &arena, "couple.srd")
                       : NULL;
    diag_flush(stdout);
    ModelKernels mk;
    memset(&mk, 0, sizeof mk);
    srd_sim s;
    memset(&s, 0, sizeof s);
    char err[256];
    double *q = NULL;
    if (m && kernels_lower(&mk, &prog, m, false, err, sizeof err) && kernels_jit(&mk, JIT_CHUNK_OPS, err, sizeof err)) {
        KernelTable kt;
        kernels_table_fill(&kt, &mk);
        int status = srd_sim_init(&s, m, kt.fns, kt.gradients, kt.infos, SRD_SOLVER_SPARSE, err, sizeof err);
        kernels_table_free(&kt);
        int n = s.solver.sys.n_free, pairs[] = { 0, n - 1, 3, n / 2, 10, n - 20 };
        *added = status == 0 && couple ? srd_sim_add_couplings(&s, 3, pairs) : 0;
        s.dt = 5e-3;
        s.tolerance = 1e-10;
        s.max_iterations = 25;
        for (int k = 0; k < 10 && status == 0; k++)
            status = srd_step(&s, SRD_IMPLICIT_EULER, 6);
        if (status == 0) {
            q = malloc(sizeof(double) * (size_t)m->n_dofs);
            memcpy(q, s.q, sizeof(double) * (size_t)m->n_dofs);
            *n_dofs = m->n_dofs;
        }
        srd_sim_free(&s);
    }
    kernels_free(&mk);
    srd_model_free(m);
    arena_free(&arena);
    diag_reset();
    return q;
}

static void test_sim_couplings(void)
{
    long long added = 0, none = 0;
    int n = 0;
    double *plain = steps_with_couplings(false, &none, &n), *coupled = steps_with_couplings(true, &added, &n);
    double worst = plain && coupled ? 0 : INFINITY;
    for (int d = 0; plain && coupled && d < n; d++)
        worst = fmax(worst, fabs(coupled[d] - plain[d]) / 0.5);
    check(&tally, added == 6 && worst <= 1e-12,
          "a sim given 3 new couplings (%lld entries, want 6) remaps its kernels and steps as before: positions "
          "differ by %.1e of the length (tol 1e-12)",
          added, worst);
    free(plain);
    free(coupled);
}

/* A DOF with an empty row and column: every path reports it singular, the sparse ones name the
 * column, and srd_solver_column_empty finds it. */
static void test_singular(void)
{
    Loaded l;
    if (!load_rod(&l, 20, true)) {
        check(&tally, 0, "clamped 20-node rod elaborates");
        return;
    }
    static const struct {
        const char     *name;
        srd_solver_kind kind;
        int             symmetric;
    } runs[] = { { "sparse SPD", SRD_SOLVER_SPARSE, 1 }, { "sparse LU", SRD_SOLVER_SPARSE, 0 },
                 { "dense LU", SRD_SOLVER_DENSE, 0 },   { "banded SPD", SRD_SOLVER_BANDED, 1 } };
    for (int k = 0; k < 4; k++) {
        Problem p = { SYS_SINGULAR, 31, 17 };
        Solved o = solve_problem(l.m, l.m->dof_fixed, runs[k].kind, runs[k].symmetric, &p);
        bool named = runs[k].kind != SRD_SOLVER_SPARSE || o.singular_col == p.zero_free;
        check(&tally, o.info > 0 && named && o.residual == 0,
              "singular (free DOF %d held by nothing), %s: info %d, zero pivot at column %d, column seen empty %d",
              p.zero_free, runs[k].name, o.info, o.singular_col, o.residual == 0);
        free(o.x);
    }
    unload(&l);
}

/* ---- srd_solver_factor: one factorisation kept for right-hand sides that come one at a time ---- */

typedef struct Kept {
    int    info, solves, used_lu, ref_lu, dropped_by_solve, dropped_by_zero, singular_col;
    double diff, residual;
} Kept;

/* Solves two right-hand sides with srd_solver_solve, then with one srd_solver_factor and two
 * srd_solver_solve_factored; then checks that another solve and a new assembly drop the factor. */
static Kept kept_factor(const srd_model *m, srd_solver_kind kind, int symmetric, const Problem *p)
{
    Kept k = { 0 };
    srd_solver s;
    srd_solver_plan_fixed(&s, m, m->dof_fixed, kind, symmetric);
    srd_solver_allocate(&s);
    int n = s.sys.n_free;
    double *R = calloc((size_t)n * (size_t)n + 1, sizeof(double)), *b[2], *x[2], *y[2];
    assemble(&s, m, R, p);
    for (int r = 0; r < 2; r++) {
        b[r] = random_vector(n, p->seed + 5 + (uint64_t)r);
        x[r] = malloc(sizeof(double) * (size_t)n + 1);
        y[r] = malloc(sizeof(double) * (size_t)n + 1);
        memcpy(x[r], b[r], sizeof(double) * (size_t)n);
        memcpy(y[r], b[r], sizeof(double) * (size_t)n);
        srd_solver_solve(&s, x[r]);
    }
    k.ref_lu = s.used_lu;
    k.info = srd_solver_factor(&s);
    k.used_lu = s.used_lu;
    k.singular_col = s.singular_col;
    for (int r = 0; r < 2; r++) {
        k.solves |= srd_solver_solve_factored(&s, y[r]);
        k.diff = fmax(k.diff, k.solves ? INFINITY : max_diff(y[r], x[r], n));
        k.residual = fmax(k.residual, k.solves ? INFINITY : residual(R, y[r], b[r], n));
    }
    srd_solver_solve(&s, x[0]);
    k.dropped_by_solve = srd_solver_solve_factored(&s, y[0]) == -1;
    srd_solver_factor(&s);
    srd_solver_zero(&s);
    k.dropped_by_zero = srd_solver_solve_factored(&s, y[0]) == -1;
    for (int r = 0; r < 2; r++)
        free(b[r]), free(x[r]), free(y[r]);
    free(R);
    srd_solver_free(&s);
    return k;
}

static void test_kept_factor(void)
{
    Loaded l;
    if (!load_rod(&l, 40, true)) {
        check(&tally, 0, "clamped 40-node rod elaborates");
        return;
    }
    static const struct {
        const char     *name;
        srd_solver_kind kind;
    } layouts[] = { { "sparse", SRD_SOLVER_SPARSE }, { "dense", SRD_SOLVER_DENSE }, { "banded", SRD_SOLVER_BANDED } };
    static const struct {
        const char *name;
        Problem     p;
        int         symmetric, lu;
    } systems[] = { { "SPD (Cholesky)", { SYS_SPD, 41, -1 }, 1, 0 },
                    { "indefinite symmetric (LU after Cholesky)", { SYS_INDEFINITE, 42, -1 }, 1, 1 },
                    { "unsymmetric (LU)", { SYS_UNSYMMETRIC, 43, -1 }, 0, 0 } };
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) {
            Kept k = kept_factor(l.m, layouts[a].kind, systems[c].symmetric, &systems[c].p);
            check(&tally, k.info == 0 && k.solves == 0 && k.used_lu == systems[c].lu && k.ref_lu == k.used_lu &&
                              k.diff <= 1e-12 && k.residual <= 1e-12 && k.dropped_by_solve && k.dropped_by_zero,
                  "kept factor, %s, %s: factor info %d, used_lu %d (solve's %d), two right-hand sides: |Rx-b|/|b| "
                  "%.1e, differ from srd_solver_solve by %.1e (tol 1e-12); dropped by a solve %d, by srd_solver_zero %d",
                  layouts[a].name, systems[c].name, k.info, k.used_lu, k.ref_lu, k.residual, k.diff,
                  k.dropped_by_solve, k.dropped_by_zero);
        }
    for (int a = 0; a < 3; a++) {
        Problem p = { SYS_SINGULAR, 44, 13 };
        Kept k = kept_factor(l.m, layouts[a].kind, 1, &p);
        bool named = layouts[a].kind != SRD_SOLVER_SPARSE || k.singular_col == p.zero_free;
        check(&tally, k.info > 0 && k.solves == -1 && named,
              "kept factor, %s, singular (free DOF %d held by nothing): factor info %d, zero pivot at %d, "
              "solves with no factor return %d",
              layouts[a].name, p.zero_free, k.info, k.singular_col, k.solves);
    }
    unload(&l);
}

/* The ring has a band as wide as the system but 3 neighbours per node: auto predicts the
 * sparse factorisation far cheaper than dense. A rod (narrow band) stays banded. */
static void test_auto(void)
{
    Loaded l;
    if (load_rod(&l, 400, false)) {
        srd_solver s;
        srd_solver_plan(&s, l.m, SRD_SOLVER_AUTO, 1);
        check(&tally, s.kind == SRD_SOLVER_BANDED && !s.sparse,
              "auto keeps banded for a 400-node rod (n %d, band %d: %.2g band flops, no sparse analysis)",
              s.sys.n_free, s.sys.kl, srd_solver_factor_flops(&s));
        srd_solver_free(&s);
        unload(&l);
    }
    /* A ring numbered in order: the closing link makes the band as wide as the system. */
    srd_model *m = chain_model(600, true, false) /* a ring: the band as wide as the system */;
    srd_solver s;
    srd_solver_plan(&s, m, SRD_SOLVER_AUTO, 1);
    check(&tally, s.kind == SRD_SOLVER_SPARSE && s.sys.layout == SRD_JAC_CSC &&
                      s.predicted[SRD_SOLVER_SPARSE] < s.predicted[SRD_SOLVER_BANDED] &&
                      s.predicted[SRD_SOLVER_SPARSE] < s.predicted[SRD_SOLVER_DENSE],
          "auto picks sparse for a 600-node ring numbered in order (n %d, band %d): predicted dense %.3g ms, "
          "banded %.3g ms, sparse %.3g ms",
          s.sys.n_free, s.sys.kl, 1e3 * s.predicted[SRD_SOLVER_DENSE], 1e3 * s.predicted[SRD_SOLVER_BANDED],
          1e3 * s.predicted[SRD_SOLVER_SPARSE]);
    srd_solver_free(&s);
    srd_model_free(m);
}

int main(void)
{
    test_pattern();
    test_kinds();
    test_changing_pattern();
    test_added_couplings();
    test_sim_couplings();
    test_singular();
    test_kept_factor();
    test_auto();
    printf("%d passed, %d failed\n", tally.run - tally.failed, tally.failed);
    return tally.failed != 0;
}
