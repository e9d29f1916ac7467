/* cantilever.c — the rod benchmark of the rods issue: a rod clamped at one end (first two
 * nodes and the first edge's twist fixed), straight along +x, at rest, under gravity 9.81
 * m/s^2 along -z; L = 1 m, r = 0.02 m, E = 1 GPa, nu = 0.5, rho = 1000 kg/m^3; implicit Euler,
 * dt = 10 ms, 1 s (100 steps), no damping. For each node count: wall time per step, Newton
 * iterations per step, time per Newton iteration split into assembly (generated kernels),
 * linear solve and the rest, and the tip z at t = 1 s. */
#include <stdio.h>
#include <stdlib.h>
#include "bench_model.h"
#include "clock.h"

static int bench(int nodes)
{
    char text[1024];
    snprintf(text, sizeof text,
             "material m { E = 1 GPa; nu = 0.5; rho = 1000 kg/m^3; }\n"
             "rod beam { path = line((0, 0, 0) m, (1, 0, 0) m); nodes = %d; radius = 0.02 m; material = m; }\n"
             "clamp beam.start;\n"
             "gravity = (0, 0, -9.81) m/s^2;\n"
             "simulate { method = implicit_euler; dt = 10 ms; duration = 1 s; tolerance = 1e-6; }\n",
             nodes);
    BenchModel b;
    if (bench_model_open(&b, "cantilever.srd", text, SRD_SOLVER_AUTO) != 0) {
        bench_model_close(&b);
        return 1;
    }
    srd_sim *s = &b.s;
    const srd_model *m = b.m;
    s->dt = 0.01;
    s->tolerance = 1e-6;
    s->max_iterations = 25;
    double t0 = srd_seconds();
    int code = 0;
    for (int k = 0; k < 100 && !code; k++)
        code = srd_step(s, SRD_IMPLICIT_EULER, 6);
    double wall = srd_seconds() - t0;
    const srd_object *o = &m->objects[0];
    double tip = s->q[m->node_dof[o->nodes[o->n_nodes - 1]] + 2];
    double iters = (double)s->total_iterations;
    printf("%7d %7d %9s %10.3f %8.2f %10.3f %10.3f %10.3f %10.3f %13.6e%s\n", nodes, m->n_dofs,
           s->solver.kind == SRD_SOLVER_DENSE ? "dense" : "banded", 1e3 * wall / 100, iters / 100, 1e3 * wall / iters,
           1e3 * s->time_assembly / iters, 1e3 * s->time_solve / iters,
           1e3 * (wall - s->time_assembly - s->time_solve) / iters, tip, code ? "  (failed)" : "");
    fflush(stdout);
    bench_model_close(&b);
    return code;
}

int main(int argc, char **argv)
{
    static const int sizes[] = { 50, 100, 200, 500, 1000, 2000, 10000 };
    int limit = argc > 1 ? atoi(argv[1]) : 10000;
    printf("  nodes    DOFs    solver    ms/step  Newton/step  ms/Newton  assembly      solve       rest   tip z at 1 s (m)\n");
    int status = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i] <= limit)
            status |= bench(sizes[i]);
    return status;
}
