/* test_schedules.c — the schedule functions of std.schedules (ramp, smoothstep, pulse,
 * periodic, logistic, square, sma, sma_cycle) against their defining formulas, written here
 * from docs/language.md and, for the SMA law, Huang et al. (2020) eq. 7, at chosen times that
 * include the edges of their pieces. Each is evaluated both ways a model can evaluate it:
 * by the elaboration-time evaluator (a load whose time is a constant) and by the generated
 * run-time kernel (a load that depends on t, run by srd_schedules_apply as a simulation does). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elab.h"
#include "kernels.h"
#include "parse.h"
#include "schedule.h"

#include "tap.h"

static Tally tally;

/* ---- The defining formulas ---- */

/* ramp: 0 before t0, 1 after t1, linear in between. */
static double ref_ramp(double t)
{
    const double t0 = 0.25, t1 = 0.75;
    return t <= t0 ? 0 : t >= t1 ? 1 : (t - t0) / (t1 - t0);
}

/* smoothstep: the Hermite cubic 3u^2 - 2u^3 of the ramp's u, 0 and 1 outside. */
static double ref_smoothstep(double t)
{
    double u = ref_ramp(t);
    return 3 * u * u - 2 * u * u * u;
}

/* pulse: 1 during [t0, t0 + width), 0 elsewhere. */
static double ref_pulse(double t)
{
    const double t0 = 0.25, width = 0.5;
    return t >= t0 && t < t0 + width ? 1 : 0;
}

/* periodic: the phase of t in [0, period). fmod is exact, so it is the phase itself. */
static double phase(double t, double period)
{
    double p = fmod(t, period);
    return p < 0 ? p + period : p;
}

static double ref_periodic(double t) { return phase(t, 0.5); }

/* logistic: 1 / (1 + exp(-k (t - t0))). */
static double ref_logistic(double t) { return 1 / (1 + exp(-8 * (t - 0.5))); }

/* square: 1 while the phase is below duty * period, else 0. */
static double ref_square(double t) { return phase(t, 0.5) < 0.25 * 0.5 ? 1 : 0; }

/* The SMA law, Huang et al. eq. 7, as a factor of the cold value: (n - 1) t / t0 + 1 for
 * t < t0, (1 - n) / (1 + exp(-tau (t - tbar))) + n after. The paper leaves t = t0 itself to
 * neither piece; std.schedules gives it to the second (the cooling law). */
static double sma_law(double t, double n, double t0, double tau, double tbar)
{
    if (t < t0)
        return (n - 1) * t / t0 + 1;
    return (1 - n) / (1 + exp(-tau * (t - tbar))) + n;
}

/* Young's modulus: hot is 2.5 times stiffer, heating 0.25 s, cooling centred at 1 s. */
static double ref_sma_stiffen(double t) { return sma_law(t, 2.5, 0.25, 20, 1); }

/* Natural curvature: hot is 0.2 of cold, heating 0.5 s, cooling centred at 1.5 s. */
static double ref_sma_straighten(double t) { return sma_law(t, 0.2, 0.5, 10, 1.5); }

/* sma_cycle: the law every 2 s, heating from 0.5 s into each period. */
static double ref_sma_cycle(double t) { return sma_law(phase(t - 0.5, 2), 2.5, 0.25, 20, 1); }

/* ---- The cases: a call with %s for the time, its formula, and its times ---- */

enum { MAX_TIMES = 12 };

typedef struct Case {
    const char *call;             /* dimensionless; %s is the time */
    double      (*formula)(double t);
    double      times[MAX_TIMES]; /* seconds; the list ends at a negative value */
} Case;

/* Edges are taken exactly and 1e-6 s to either side (far beyond the 1e-9 relative tolerance
 * of elaboration-time comparisons); edges are binary fractions, so t0 + width and duty *
 * period are exact and both evaluators see the same edge. */
static const Case cases[] = {
    { "ramp(%s, 0.25 s, 0.75 s)", ref_ramp, { 0, 0.249999, 0.25, 0.250001, 0.375, 0.5, 0.749999, 0.75, 1, -1 } },
    { "smoothstep(%s, 0.25 s, 0.75 s)", ref_smoothstep, { 0, 0.25, 0.250001, 0.375, 0.5, 0.625, 0.749999, 0.75, 2, -1 } },
    { "pulse(%s, 0.25 s, 0.5 s)", ref_pulse, { 0, 0.249999, 0.25, 0.5, 0.749999, 0.75, 0.750001, 1.5, -1 } },
    { "periodic(%s, 0.5 s) / 1 s", ref_periodic, { 0, 0.25, 0.499999, 0.5, 0.500001, 1.75, 3.125, -1 } },
    { "logistic(%s, 0.5 s, 8 /s)", ref_logistic, { 0, 0.25, 0.5, 0.625, 1, 3, 10, -1 } },
    { "square(%s, 0.5 s, 0.25)", ref_square, { 0, 0.124999, 0.125, 0.125001, 0.25, 0.499999, 0.5, 0.625, 1.0625, -1 } },
    { "sma(%s, 2.5, 0.25 s, 20 /s, 1 s)", ref_sma_stiffen, { 0, 0.125, 0.249999, 0.25, 0.5, 1, 1.25, 3, -1 } },
    { "sma(%s, 0.2, 0.5 s, 10 /s, 1.5 s)", ref_sma_straighten, { 0, 0.25, 0.499999, 0.5, 1.5, 2, 4, -1 } },
    { "sma_cycle(%s, 2 s, 0.5 s, 2.5, 0.25 s, 20 /s, 1 s)", ref_sma_cycle,
      { 0, 0.499999, 0.5, 0.625, 0.749999, 0.75, 1.5, 2.499999, 2.5, 2.625, 4.5, -1 } },
};
enum { N_CASES = sizeof cases / sizeof cases[0] };

static int n_times(const Case *c)
{
    int n = 0;
    while (n < MAX_TIMES && c->times[n] >= 0)
        n++;
    return n;
}

/* Values are of order 1 (at most 2.5): the evaluators may order the operations of a formula
 * differently from the C above (and exp may round differently), a few ulps; a wrong branch at
 * an edge is off by 0.25 or more. */
#define TOL 1e-14

/* The result line of a case: the call with t, the worst difference and where. */
static void report(const char *how, const Case *c, double worst, int at)
{
    char call[256], where[64] = "";
    snprintf(call, sizeof call, c->call, "t");
    if (at >= 0 && worst > 0)
        snprintf(where, sizeof where, " at t = %g s", c->times[at]);
    check(&tally, worst <= TOL, "%s: %s against its formula at %d times, edges included (worst %.1e%s, tol %.0e)", how,
          call, n_times(c), worst, where, TOL);
}

/* ---- Building the models ---- */

typedef struct Built {
    Arena      arena;
    Program    prog;
    srd_model *m;
} Built;

/* A body per load, each with one load along x whose value in N is one schedule value. */
static bool build(Built *b, const char *text)
{
    memset(b, 0, sizeof *b);
    arena_init(&b->arena);
    bool ok = parse_program_text(&b->arena, "schedules.srd", text, strlen(text), parse_stdlib_dir(), &b->prog);
    b->m = ok ? elab_program(&b->prog, &b->arena, "schedules.srd") : NULL;
    diag_flush(stdout);
    return b->m != NULL;
}

static void built_free(Built *b)
{
    if (b->m)
        srd_model_free(b->m);
    arena_free(&b->arena);
}

/* Appends to buf (of size n, used so far *len) a body and a load of `call` with `time`. */
static void add_load(char *buf, size_t n, size_t *len, int k, const char *call, const char *time)
{
    char expr[256];
    snprintf(expr, sizeof expr, call, time);
    *len += (size_t)snprintf(buf + *len, n - *len,
                             "body b%d { position = (%d, 0, 0) m; mass = 1 kg; }\nload b%d.node = (%s, 0, 0) N;\n", k,
                             k, k, expr);
}

/* ---- Elaboration time: every (case, time) pair as a constant load ---- */

static void check_elaboration(void)
{
    size_t n = 1 << 16, len = 0;
    char *text = malloc(n);
    len += (size_t)snprintf(text, n, "use std.schedules;\n");
    int k = 0;
    for (int c = 0; c < N_CASES; c++)
        for (int i = 0; i < n_times(&cases[c]); i++) {
            char time[64];
            snprintf(time, sizeof time, "(%.17g s)", cases[c].times[i]);
            add_load(text, n, &len, k++, cases[c].call, time);
        }
    Built b;
    bool ok = len < n && build(&b, text);
    check(&tally, ok && b.m->n_loads == k, "elaboration-time model with %d constant schedule loads builds", k);
    for (int c = 0, j = 0; ok && c < N_CASES; c++) {
        double worst = 0;
        int at = -1;
        for (int i = 0; i < n_times(&cases[c]); i++, j++) {
            const srd_load *ld = &b.m->loads[j];
            double err = fabs(ld->f[0] - cases[c].formula(cases[c].times[i]));
            if (ld->expr >= 0 || !(err <= worst)) {
                worst = ld->expr >= 0 ? INFINITY : err;
                at = i;
            }
        }
        report("elaboration", &cases[c], worst, at);
    }
    built_free(&b);
    free(text);
}

/* ---- Run time: one load per case, of t, through the schedule kernels ---- */

static void check_run_time(void)
{
    size_t n = 1 << 14, len = 0;
    char *text = malloc(n);
    len += (size_t)snprintf(text, n, "use std.schedules;\n");
    for (int c = 0; c < N_CASES; c++)
        add_load(text, n, &len, c, cases[c].call, "t");
    Built b;
    bool ok = len < n && build(&b, text);
    ModelKernels mk;
    char err[512] = "";
    bool lowered = ok && kernels_lower(&mk, &b.prog, b.m, false, err, sizeof err);
    ok = lowered && kernels_jit(&mk, JIT_CHUNK_OPS, err, sizeof err);
    check(&tally, ok && mk.n_schedules == N_CASES, "run-time model: %d schedule kernels compile (%s)",
          ok ? mk.n_schedules : 0, ok ? "ok" : err);
    if (ok && mk.n_schedules == N_CASES) {
        const srd_model *m = b.m;
        KernelTable kt;
        kernels_table_fill(&kt, &mk);
        double *fext = calloc((size_t)m->n_dofs, sizeof(double));
        srd_schedules S;
        srd_schedules_build(&S, m, kt.table.n_schedules, kt.table.schedules, kt.table.schedule_actuation,
                            kt.table.schedule_expr, NULL, fext);
        double params[1] = { 0 };
        for (int c = 0; c < N_CASES; c++) {
            double worst = 0;
            int at = -1;
            for (int i = 0; i < n_times(&cases[c]); i++) {
                double t = cases[c].times[i];
                srd_schedules_apply(&S, m, params, t, 1e-3, 1e-3, NULL, fext);
                double e = fabs(fext[m->node_dof[c]] - cases[c].formula(t));
                if (!(e <= worst)) {
                    worst = e;
                    at = i;
                }
            }
            report("run time", &cases[c], worst, at);
        }
        srd_schedules_free(&S);
        free(fext);
        kernels_table_free(&kt);
    }
    if (lowered)
        kernels_free(&mk);
    built_free(&b);
    free(text);
}

int main(void)
{
    check_elaboration();
    check_run_time();
    diag_reset();
    printf("%d passed, %d failed\n", tally.run - tally.failed, tally.failed);
    return tally.failed != 0;
}
