/* solids.c — the tetrahedral solid benchmark (issue 19 item 4): a neo-Hookean silicone block
 * (4 x 1 x 1 units, clamped at one end, sagging under gravity) at mesh sizes from about 500 to
 * 100,000 DOFs, 3 implicit-Euler steps of 10 ms from rest (after one warm-up step). Prints, per
 * mesh: nodes, tetrahedra, DOFs, the solver the automatic choice takes, time per step, Newton
 * iterations per step, and time per Newton iteration split into assembly (generated kernels),
 * linear solve (factorisation and solve) and the rest. `solid_bench LARGEST_DOFS` stops after
 * the first mesh above that size; `solid_bench N sparse|banded` forces a solver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_model.h"
#include "clock.h"

static const char *model_fmt =
    "material silicone { E = 1 MPa; nu = 0.45; rho = 1100 kg/m^3; }\n"
    "solid block { mesh = box((40, 10, 10) mm); spacing = %g mm; material = silicone; }\n"
    "clamp block.nodes where x == 0 m;\n"
    "gravity = (0, 0, -9.81) m/s^2;\n"
    "simulate { method = implicit_euler; dt = 10 ms; duration = 40 ms; tolerance = 1e-8; }\n";

static const char *solver_name(srd_solver_kind k)
{
    return k == SRD_SOLVER_DENSE ? "dense" : k == SRD_SOLVER_BANDED ? "banded" : "sparse";
}

static int tet_count(const srd_model *m)
{
    for (int k = 0; k < m->n_sets; k++)
        if (!strncmp(m->sets[k].kind, "tet_", 4))
            return m->sets[k].n;
    return 0;
}

static int bench(double spacing_mm, srd_solver_kind solver)
{
    char text[1024], label[64];
    snprintf(text, sizeof text, model_fmt, spacing_mm);
    snprintf(label, sizeof label, "block, %g mm", spacing_mm);
    BenchModel b;
    if (bench_model_open(&b, label, text, solver) != 0) {
        bench_model_close(&b);
        return -1;
    }
    srd_sim *s = &b.s;
    s->dt = 1e-2;
    s->tolerance = b.m->simulate.tolerance;
    s->max_iterations = b.m->simulate.max_iterations;
    s->line_search = b.m->simulate.line_search;
    int code = srd_step(s, SRD_IMPLICIT_EULER, 6); /* warm-up: the sparse analysis, first faults */
    s->total_iterations = 0;
    s->time_assembly = s->time_solve = 0;
    double t0 = srd_seconds();
    for (int k = 0; k < 3 && !code; k++)
        code = srd_step(s, SRD_IMPLICIT_EULER, 6);
    double wall = srd_seconds() - t0, iters = (double)(s->total_iterations ? s->total_iterations : 1);
    int dofs = b.m->n_dofs;
    printf("  %-16s %7d %8d %7d %7s %9.1f %7.2f %10.2f %9.2f %9.2f %9.2f%s\n", label, b.m->n_nodes, tet_count(b.m),
           dofs, solver_name(s->solver.kind), 1e3 * wall / 3, s->total_iterations / 3.0, 1e3 * wall / iters,
           1e3 * s->time_assembly / iters, 1e3 * s->time_solve / iters,
           1e3 * (wall - s->time_assembly - s->time_solve) / iters, code ? "  (failed)" : "");
    fflush(stdout);
    bench_model_close(&b);
    return code ? -1 : dofs;
}

int main(int argc, char **argv)
{
    int largest = argc > 1 ? atoi(argv[1]) : 100000;
    srd_solver_kind solver = argc > 2 && !strcmp(argv[2], "banded") ? SRD_SOLVER_BANDED
                           : argc > 2 && !strcmp(argv[2], "sparse") ? SRD_SOLVER_SPARSE : SRD_SOLVER_AUTO;
    printf("  %-16s %7s %8s %7s %7s %9s %7s %10s %9s %9s %9s\n", "model", "nodes", "tets", "DOFs", "solver",
           "ms/step", "Newton", "ms/Newton", "assembly", "solve", "rest");
    static const double spacings[] = { 2.5, 1.667, 1.25, 0.833, 0.625, 0.5, 0.4167 };
    for (size_t r = 0; r < sizeof spacings / sizeof *spacings; r++) {
        int dofs = bench(spacings[r], solver);
        if (dofs < 0)
            return 1;
        if (dofs > largest)
            break;
    }
    return 0;
}
