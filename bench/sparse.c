/* sparse.c — the sparse-solver benchmark of the performance issue: the parachute
 * (examples/parachute.srd, canopy edges side / 6 .. side / 48: 1k to 40k DOFs; implicit Euler,
 * 10 ms steps) and the mid-edge cantilever plate (examples/cantilever_shell_midedge.srd, its
 * static solve under gravity, 9k to 200k DOFs), each with the banded and the sparse solver
 * (banded only where it finishes in reasonable time); case A of the rod benchmark and a rod
 * network with every solver. Per model and solver: DOFs, the time of
 * the run (3 steps after a warm-up step, or the whole static solve), Newton iterations, and per
 * Newton iteration the split into assembly, factorisation + solve and the rest, the solver's
 * memory, and the floor: the kernels' operations at their own in-cache rate plus the
 * factorisation's flops at the measured dgemm rate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_model.h"
#include "clock.h"
#include "sources.h"

#ifndef SRD_EXAMPLES_DIR
#define SRD_EXAMPLES_DIR "examples"
#endif

/* Fortran BLAS, as OpenBLAS exports it. */
void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const double *alpha,
            const double *a, const int *lda, const double *b, const int *ldb, const double *beta, double *c,
            const int *ldc);

/* Best flop rate of a 384-cubed dgemm on one thread: what a supernodal or frontal factorisation
 * can reach at most. */
static double blas_rate(void)
{
    int n = 384;
    double *a = calloc((size_t)n * n, sizeof(double)), *b = calloc((size_t)n * n, sizeof(double)),
           *c = calloc((size_t)n * n, sizeof(double)), one = 1, best = INFINITY;
    for (int i = 0; i < n * n; i++)
        a[i] = b[i] = 1.0 / (1 + i % 7);
    for (int r = 0; r < 5; r++) {
        double t0 = srd_seconds();
        dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &one, c, &n);
        best = fmin(best, srd_seconds() - t0);
    }
    free(a);
    free(b);
    free(c);
    return 2.0 * n * n * n / best;
}

/* Seconds one evaluation of every kernel (with Jacobian) takes at the rate each reaches on a
 * batch of at most 128 instances in cache, scaled to all instances: the assembly floor. */
static double assembly_floor(srd_sim *s)
{
    double total = 0, energy = 0;
    srd_eval_ctx ctx = { s->q, s->q0, s->v0, s->params, s->t, 1e-2, &energy, s->res, s->solver.jac };
    for (int k = 0; k < s->m->n_sets; k++) {
        srd_elem_batch part = s->kernels[k].batch.b;
        int n = part.n;
        part.n = n < 128 ? n : 128;
        if (part.n == 0)
            continue;
        double best = INFINITY;
        for (int r = 0; r < 20; r++) {
            double t0 = srd_seconds();
            s->kernels[k].fn(&ctx, &part);
            best = fmin(best, srd_seconds() - t0);
        }
        total += best * n / part.n;
    }
    return total;
}

typedef struct Run {
    const char *label;
    srd_solver_kind requested;
    double      wall, iterations, assembly, factor, bytes, floor_assembly, floor_factor;
    int         ok;
} Run;

static void print_header(void)
{
    printf("  %-30s %7s %12s %9s %6s %9s %9s %9s %9s %8s %9s\n", "model", "DOFs", "solver", "run s", "Newton",
           "ms/Newton", "assembly", "factor", "rest", "MB", "floor ms");
}

static void print_run(const BenchModel *b, const Run *r)
{
    const srd_sim *s = &b->s;
    double it = r->iterations > 0 ? r->iterations : 1;
    char kind[32];
    snprintf(kind, sizeof kind, "%s%s", r->requested == SRD_SOLVER_AUTO ? "auto:" : "",
             srd_solver_kind_name(s->solver.kind));
    printf("  %-30s %7d %12s %9.3f %6.0f %9.2f %9.2f %9.2f %9.2f %8.1f %9.2f%s\n", r->label, s->solver.sys.n_free,
           kind, r->wall, r->iterations, 1e3 * r->wall / it, 1e3 * r->assembly / it,
           1e3 * r->factor / it, 1e3 * (r->wall - r->assembly - r->factor) / it, r->bytes / 1e6,
           1e3 * (r->floor_assembly + r->floor_factor), r->ok ? "" : "  (failed)");
    fflush(stdout);
}

/* Zeroes the counters a measured run accumulates. */
static void reset_counters(srd_sim *s)
{
    s->time_assembly = s->time_solve = s->solver.time_factor = 0;
    s->total_iterations = 0;
}

static void finish_run(BenchModel *b, Run *r, double t0, double rate)
{
    srd_sim *s = &b->s;
    r->wall = srd_seconds() - t0;
    r->iterations = (double)s->total_iterations;
    r->assembly = s->time_assembly;
    r->factor = s->solver.time_factor;
    r->bytes = srd_solver_bytes(&s->solver);
    r->floor_assembly = assembly_floor(s);
    r->floor_factor = srd_solver_factor_flops(&s->solver) / rate;
    print_run(b, r);
}

/* A warm-up step (the first LU analysis, page faults), then `steps` measured steps of dt. */
static int dynamic_run(const char *label, const char *text, double dt, int steps, srd_solver_kind solver, double rate)
{
    BenchModel b;
    Run r = { label, solver, 0, 0, 0, 0, 0, 0, 0, 1 };
    if (bench_model_open(&b, label, text, solver) != 0) {
        bench_model_close(&b);
        return 1;
    }
    srd_sim *s = &b.s;
    s->dt = dt;
    s->tolerance = b.m->simulate.tolerance;
    s->max_iterations = b.m->simulate.max_iterations;
    int code = srd_step(s, SRD_IMPLICIT_EULER, 6);
    reset_counters(s);
    double t0 = srd_seconds();
    for (int k = 0; k < steps && !code; k++)
        code = srd_step(s, SRD_IMPLICIT_EULER, 6);
    r.ok = code == 0;
    finish_run(&b, &r, t0, rate);
    bench_model_close(&b);
    return code;
}

/* The model's static solve, whole (its load steps), timed from the first assembly. */
static int static_run(const char *label, const char *text, srd_solver_kind solver, double rate)
{
    BenchModel b;
    Run r = { label, solver, 0, 0, 0, 0, 0, 0, 0, 1 };
    if (bench_model_open(&b, label, text, solver) != 0) {
        bench_model_close(&b);
        return 1;
    }
    srd_sim *s = &b.s;
    s->tolerance = b.m->statics.tolerance;
    s->max_iterations = b.m->statics.max_iterations;
    s->line_search = b.m->statics.line_search;
    double t0 = srd_seconds();
    r.ok = srd_static(s, b.m->statics.load_steps) == 0;
    finish_run(&b, &r, t0, rate);
    bench_model_close(&b);
    return !r.ok;
}

static char *read_example(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", SRD_EXAMPLES_DIR, name);
    size_t len;
    return sources_read(path, &len);
}

/* text with its first `from` replaced by `to` (the caller frees it), or NULL. */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = text ? strstr(text, from) : NULL;
    if (!at)
        return NULL;
    size_t head = (size_t)(at - text), n = strlen(text) - strlen(from) + strlen(to);
    char *out = malloc(n + 1);
    memcpy(out, text, head);
    strcpy(out + head, to);
    strcat(out, at + strlen(from));
    return out;
}

static int parachutes(double rate, int largest)
{
    static const char *divisions[] = { "side / 6", "side / 12", "side / 24", "side / 48" };
    static const char *labels[] = { "parachute, side / 6", "parachute, side / 12", "parachute, side / 24",
                                    "parachute, side / 48" };
    char *text = read_example("parachute.srd");
    int status = text ? 0 : 1;
    for (int r = 0; r < 4 && r < largest && text; r++) {
        char to[64];
        snprintf(to, sizeof to, "hexagon(side, %s)", divisions[r]);
        char *model = replace(text, "hexagon(side, side / 6)", to);
        if (r < 3) /* banded at 40k DOFs: about a minute per Newton iteration */
            status |= dynamic_run(labels[r], model, 1e-2, 3, SRD_SOLVER_BANDED, rate);
        status |= dynamic_run(labels[r], model, 1e-2, 3, SRD_SOLVER_SPARSE, rate);
        status |= dynamic_run(labels[r], model, 1e-2, 3, SRD_SOLVER_AUTO, rate);
        free(model);
    }
    free(text);
    return status;
}

static int plates(double rate, int largest)
{
    static const char *spacings[] = { "1.25 mm", "0.54 mm", "0.35 mm", "0.25 mm" };
    static const char *labels[] = { "plate, mid-edge, 1.25 mm", "plate, mid-edge, 0.54 mm",
                                    "plate, mid-edge, 0.35 mm", "plate, mid-edge, 0.25 mm" };
    char *text = read_example("cantilever_shell_midedge.srd");
    int status = text ? 0 : 1;
    for (int r = 0; r < 4 && r < largest && text; r++) {
        char to[64];
        snprintf(to, sizeof to, "%s, pattern", spacings[r]);
        char *model = replace(text, "5 mm, pattern", to);
        if (r < 2) /* banded beyond 43k DOFs: minutes */
            status |= static_run(labels[r], model, SRD_SOLVER_BANDED, rate);
        status |= static_run(labels[r], model, SRD_SOLVER_SPARSE, rate);
        status |= static_run(labels[r], model, SRD_SOLVER_AUTO, rate);
        free(model);
    }
    free(text);
    return status;
}

/* One model's dynamic run with each solver: banded, sparse, and the automatic choice. */
static int every_solver(const char *label, const char *text, double rate)
{
    static const srd_solver_kind kinds[] = { SRD_SOLVER_BANDED, SRD_SOLVER_SPARSE, SRD_SOLVER_AUTO };
    int status = 0;
    for (int k = 0; k < 3; k++)
        status |= dynamic_run(label, text, 1e-2, 3, kinds[k], rate);
    return status;
}

/* Case A of the rod benchmark (a 1 m rod clamped at one end under gravity; r = 2 cm, E = 1 GPa:
 * bench/cantilever.c) at 100, 1,000 and 4,000 nodes, whose band is narrow: banded should keep
 * winning there, and auto should keep it. */
static int rods_case_a(double rate, int largest)
{
    static const int nodes[] = { 100, 1000, 4000 };
    static const char *labels[] = { "rod, case A, 100 nodes", "rod, case A, 1,000 nodes", "rod, case A, 4,000 nodes" };
    int status = 0;
    for (int r = 0; r < 3 && r < largest; r++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "material m { E = 1 GPa; nu = 0.5; rho = 1000 kg/m^3; }\n"
                 "rod beam { path = line((0, 0, 0) m, (1, 0, 0) m); nodes = %d; radius = 0.02 m; material = m; }\n"
                 "clamp beam.start;\ngravity = (0, 0, -9.81) m/s^2;\n"
                 "simulate { method = implicit_euler; dt = 10 ms; duration = 1 s; tolerance = 1e-6; }\n",
                 nodes[r]);
        status |= every_solver(labels[r], text, rate);
    }
    return status;
}

/* A rod network: a square net of n rods along x and n along y, 5 cm apart, joined at every
 * crossing (four edges between crossings), its two outer x rods clamped at both ends, sagging
 * under gravity; 10 x 10 to 40 x 40 (2.6k to 45k DOFs). Junctions tie rods across the
 * numbering, so the band is wide. */
static int rod_nets(double rate, int largest)
{
    static const int sizes[] = { 10, 20, 40 };
    static const char *labels[] = { "rod net, 10 x 10", "rod net, 20 x 20", "rod net, 40 x 40" };
    int status = 0;
    for (int r = 0; r < 3 && r < largest; r++) {
        char text[2048];
        snprintf(text, sizeof text,
                 "material m { E = 10 MPa; nu = 0.5; rho = 1000 kg/m^3; }\nlet n = %d;\nlet per = 4;\nlet cell = 5 cm;\n"
                 "for i in 0..n {\n"
                 "  rod hx[i] { path = line((0 m, i * cell, 0 m), ((n - 1) * cell, i * cell, 0 m)); "
                 "nodes = (n - 1) * per + 1; radius = 1 mm; material = m; }\n"
                 "  rod hy[i] { path = line((i * cell, 0 m, 0 m), (i * cell, (n - 1) * cell, 0 m)); "
                 "nodes = (n - 1) * per + 1; radius = 1 mm; material = m; }\n}\n"
                 "for i in 0..n { for j in 0..n { join hx[i].node(j * per), hy[j].node(i * per); } }\n"
                 "clamp hx[0].start;\nclamp hx[0].end;\nclamp hx[n - 1].start;\nclamp hx[n - 1].end;\n"
                 "gravity = (0, 0, -9.81) m/s^2;\n"
                 "simulate { method = implicit_euler; dt = 10 ms; duration = 1 s; }\n",
                 sizes[r]);
        status |= every_solver(labels[r], text, rate);
    }
    return status;
}

/* The first 20 modes of the hinge plate (examples/cantilever_shell_hinge.srd; the mid-edge one
 * has massless xi DOFs) at about 100,000 DOFs: shift-invert Lanczos on the sparse solver,
 * timed from the stiffness assembly to the M-normalised shapes. */
static int modes_run(void)
{
    char *text = read_example("cantilever_shell_hinge.srd");
    char *model = replace(text, "5 mm, pattern", "0.25 mm, pattern");
    BenchModel b;
    int status = !model || bench_model_open(&b, "plate, hinge, 0.25 mm", model, SRD_SOLVER_SPARSE) != 0;
    if (!status) {
        int count = 20, n = b.s.solver.sys.n_free;
        double *freq = calloc((size_t)count, sizeof(double));
        double *shapes = calloc((size_t)count * (size_t)b.m->n_dofs, sizeof(double));
        char err[256];
        double t0 = srd_seconds();
        status = srd_modes(&b.s, count, freq, shapes, err, sizeof err) != 0;
        double wall = srd_seconds() - t0;
        printf("\n  modes: hinge plate, 0.25 mm, %d free DOFs, first %d modes by shift-invert Lanczos: %.2f s "
               "(%.4g Hz to %.4g Hz)%s\n", n, count, wall, freq[0], freq[count - 1], status ? "  (failed)" : "");
        free(freq);
        free(shapes);
    }
    if (model)
        bench_model_close(&b);
    free(text);
    free(model);
    return status;
}

/* sparse_bench [parachute|plate|rods|modes] [LARGEST]: every family by default, sizes up to LARGEST (1-4). */
int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "all";
    int largest = argc > 2 ? atoi(argv[2]) : 4;
    srd_solver warm; /* sets OpenBLAS to one thread, as every solver does */
    memset(&warm, 0, sizeof warm);
    double rate = 0;
    (void)warm;
    {
        srd_model *m = srd_model_new();
        srd_solver_init(&warm, m, SRD_SOLVER_DENSE, 1);
        srd_solver_free(&warm);
        srd_model_free(m);
        rate = blas_rate();
    }
    printf("dgemm (384^3, one thread): %.1f GFLOP/s\n", rate / 1e9);
    print_header();
    int status = 0;
    if (!strcmp(which, "all") || !strcmp(which, "parachute"))
        status |= parachutes(rate, largest);
    if (!strcmp(which, "all") || !strcmp(which, "plate"))
        status |= plates(rate, largest);
    if (!strcmp(which, "all") || !strcmp(which, "rods")) {
        status |= rods_case_a(rate, largest);
        status |= rod_nets(rate, largest);
    }
    if (!strcmp(which, "all") || !strcmp(which, "modes"))
        status |= modes_run();
    return status;
}
