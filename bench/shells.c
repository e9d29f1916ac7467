/* shells.c — the shell benchmark of the shells issue: the cantilever plate (mid-edge and hinge
 * bending, examples/cantilever_shell_*.srd) and the parachute (examples/parachute.srd) at three
 * mesh resolutions each. The plate runs 20 implicit-Euler steps of 1 ms from rest under gravity
 * (instead of its static solve, so that every model is timed per step); the parachute 10 steps
 * of its own 10 ms. Prints, per model: nodes, DOFs, the solver and half-bandwidth, time per
 * step, Newton iterations per step, time per Newton iteration split into assembly (generated
 * kernels), linear solve and the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_model.h"
#include "clock.h"
#include "sources.h"

#ifndef SRD_EXAMPLES_DIR
#define SRD_EXAMPLES_DIR "examples"
#endif

static char *read_example(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", SRD_EXAMPLES_DIR, name);
    size_t len;
    return sources_read(path, &len);
}

/* text with its first `from` replaced by `to`, or NULL when `from` is missing. */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at)
        return NULL;
    size_t head = (size_t)(at - text), n = strlen(text) - strlen(from) + strlen(to);
    char *out = malloc(n + 1);
    memcpy(out, text, head);
    strcpy(out + head, to);
    strcat(out, at + strlen(from));
    return out;
}

static int bench(const char *label, const char *text, double dt, int steps, srd_solver_kind solver)
{
    BenchModel b;
    if (bench_model_open(&b, label, text, solver) != 0) {
        bench_model_close(&b);
        return 1;
    }
    srd_sim *s = &b.s;
    s->dt = dt;
    s->tolerance = b.m->simulate.tolerance;
    s->max_iterations = b.m->simulate.max_iterations;
    s->line_search = b.m->simulate.line_search;
    double t0 = srd_seconds();
    int code = 0;
    for (int k = 0; k < steps && !code; k++)
        code = srd_step(s, SRD_IMPLICIT_EULER, 6);
    double wall = srd_seconds() - t0, iters = (double)(s->total_iterations ? s->total_iterations : 1);
    printf("  %-34s %6d %6d %7s %5d %9.2f %7.2f %9.3f %9.3f %9.3f %9.3f%s\n", label, b.m->n_nodes, b.m->n_dofs,
           s->solver.kind == SRD_SOLVER_DENSE ? "dense" : "banded", s->solver.sys.kl, 1e3 * wall / steps,
           s->total_iterations / (double)steps, 1e3 * wall / iters, 1e3 * s->time_assembly / iters,
           1e3 * s->time_solve / iters, 1e3 * (wall - s->time_assembly - s->time_solve) / iters,
           code ? "  (failed)" : "");
    fflush(stdout);
    bench_model_close(&b);
    return code;
}

int main(void)
{
    printf("  %-34s %6s %6s %7s %5s %9s %7s %9s %9s %9s %9s\n", "model", "nodes", "DOFs", "solver", "band",
           "ms/step", "Newton", "ms/Newton", "assembly", "solve", "rest");
    static const char *plates[] = { "cantilever_shell_midedge.srd", "cantilever_shell_hinge.srd" };
    static const char *spacings[] = { "5 mm", "2.5 mm", "1.25 mm" };
    static const char *dynamic = "simulate { method = implicit_euler; dt = 1 ms; duration = 20 ms; }\nstatic {";
    int status = 0;
    for (int p = 0; p < 2; p++) {
        char *text = read_example(plates[p]);
        char *as_dynamic = text ? replace(text, "static {", dynamic) : NULL;
        for (int r = 0; r < 3 && as_dynamic; r++) {
            char to[64], label[128];
            snprintf(to, sizeof to, "%s, pattern", spacings[r]);
            char *model = replace(as_dynamic, "5 mm, pattern", to);
            snprintf(label, sizeof label, "plate, %s, %s", p == 0 ? "mid-edge" : "hinge", spacings[r]);
            status |= model ? bench(label, model, 1e-3, 20, SRD_SOLVER_AUTO) : 1;
            free(model);
        }
        if (!as_dynamic) {
            fprintf(stderr, "cannot read or adapt %s/%s\n", SRD_EXAMPLES_DIR, plates[p]);
            status = 1;
        }
        free(text);
        free(as_dynamic);
    }
    static const char *divisions[] = { "side / 6", "side / 12", "side / 24" };
    char *text = read_example("parachute.srd");
    for (int r = 0; r < 3 && text; r++) {
        char to[64], label[128];
        snprintf(to, sizeof to, "hexagon(side, %s)", divisions[r]);
        char *model = replace(text, "hexagon(side, side / 6)", to);
        snprintf(label, sizeof label, "parachute, canopy edges %s", divisions[r]);
        status |= model ? bench(label, model, 1e-2, 10, SRD_SOLVER_AUTO) : 1;
        /* Dense on the two smaller canopies: what the automatic choice of banded saves. */
        if (model && r < 2) {
            snprintf(label, sizeof label, "  the same, dense forced");
            status |= bench(label, model, 1e-2, 10, SRD_SOLVER_DENSE);
        }
        free(model);
    }
    free(text);
    return status;
}
