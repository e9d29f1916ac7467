/* test_parallel.c — assembly shared between threads gives the numbers of one thread: a
 * 2,400-node cantilever (large enough to be shared) steps the same with SRD_THREADS=1 and 2, to
 * 1e-12 relative, and the threaded and serial executions of the shares agree bit for bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elab.h"
#include "kernels.h"
#include "parallel.h"
#include "parse.h"
#include "sim.h"

#include "tap.h"

static Tally tally;

static const char *model_text =
    "material m { E = 1 GPa; nu = 0.5; rho = 1000 kg/m^3; }\n"
    "rod beam { path = helix((0, 0, 0) m, 0.2 m, 0.05 m, 2); nodes = 2400; radius = 0.01 m; material = m; }\n"
    "clamp beam.start;\n"
    "gravity = (0, 0, -9.81) m/s^2;\n";

typedef struct Run {
    Arena        arena;
    Program      prog;
    srd_model   *m;
    ModelKernels mk;
    srd_sim      s;
} Run;

static int open_run(Run *r)
{
    memset(r, 0, sizeof *r);
    arena_init(&r->arena);
    if (parse_program_text(&r->arena, "beam.srd", model_text, strlen(model_text), parse_stdlib_dir(), &r->prog))
        r->m = elab_program(&r->prog, &r->arena, "beam.srd");
    diag_flush(stderr);
    char err[512];
    if (!r->m || !kernels_lower(&r->mk, &r->prog, r->m, false, err, sizeof err) ||
        !kernels_jit(&r->mk, JIT_CHUNK_OPS, err, sizeof err))
        return -1;
    KernelTable kt;
    kernels_table_fill(&kt, &r->mk);
    int status = srd_sim_init(&r->s, r->m, kt.fns, kt.gradients, kt.infos, SRD_SOLVER_AUTO, err, sizeof err);
    kernels_table_free(&kt);
    return status;
}

static void close_run(Run *r)
{
    srd_sim_free(&r->s);
    kernels_free(&r->mk);
    srd_model_free(r->m);
    arena_free(&r->arena);
    diag_reset();
}

/* Ten implicit-Euler steps of 5 ms; returns the positions (caller frees) or NULL. */
static double *steps(const char *threads, int *n, int *shared)
{
    setenv("SRD_THREADS", threads, 1);
    Run r;
    double *q = NULL;
    if (open_run(&r) == 0) {
        r.s.dt = 5e-3;
        r.s.tolerance = 1e-8;
        r.s.max_iterations = 25;
        int code = 0;
        for (int k = 0; k < 10 && !code; k++)
            code = srd_step(&r.s, SRD_IMPLICIT_EULER, 6);
        *n = r.m->n_dofs;
        *shared = r.s.assembler != NULL;
        if (!code) {
            q = malloc(sizeof(double) * (size_t)*n);
            memcpy(q, r.s.q, sizeof(double) * (size_t)*n);
        }
    }
    close_run(&r);
    return q;
}

int main(void)
{
    int n1 = 0, n2 = 0, shared1 = 0, shared2 = 0;
    double *q1 = steps("1", &n1, &shared1), *q2 = steps("2", &n2, &shared2);
    check(&tally, q1 && q2 && n1 == n2, "the 2,400-node helix steps with one and with two threads");
    check(&tally, !shared1 && shared2, "assembly is shared with SRD_THREADS=2 only");
    if (q1 && q2 && n1 == n2) {
        double worst = 0, scale = 0;
        for (int i = 0; i < n1; i++)
            scale = fmax(scale, fabs(q1[i]));
        for (int i = 0; i < n1; i++)
            worst = fmax(worst, fabs(q1[i] - q2[i]) / scale);
        check(&tally, worst <= 1e-12, "one and two threads give the same positions after 10 steps (worst %.1e, "
              "tol 1e-12)", worst);
    }
    /* The trials alternate threaded and serial executions of the same shares: the steps above
     * already mixed both, and a second two-thread run must repeat the first exactly. */
    int n3 = 0, shared3 = 0;
    double *q3 = steps("2", &n3, &shared3);
    check(&tally, q2 && q3 && n3 == n2 && !memcmp(q2, q3, sizeof(double) * (size_t)n2),
          "two two-thread runs agree bit for bit (threaded or serial shares give the same numbers)");
    free(q1);
    free(q2);
    free(q3);
    printf("# %d checks, %d failed\n", tally.run, tally.failed);
    return tally.failed ? 1 : 0;
}
