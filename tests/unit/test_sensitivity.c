/* test_sensitivity.c — static sensitivities (compiler/sens): the derivative of a cantilever's
 * equilibrium with respect to its Young's modulus and to its natural curvature, by one solve
 * with the stiffness and the elements' tangent kernels, against central differences of whole
 * static solves with the param moved (to 1e-6 relative). How the param moves the elements'
 * data is taken here from two elaborations (exact for data linear in the param, as these are);
 * the compiler deriving it from the elaboration itself is the next step of issue 22. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elab.h"
#include "kernels.h"
#include "parse.h"
#include "sens/static.h"

#include "kernel_models.h"
#include "tap.h"

static Tally tally;

static const char *cantilever =
    "param E = 2 MPa;\n"
    "param kappa0 = 3 /m;\n"
    "material silicone { E = E; nu = 0.5; rho = 1200 kg/m^3; }\n"
    "rod arm { path = line((0, 0, 0) m, (0.1, 0, 0) m); nodes = 21; radius = 2 mm; material = silicone;\n"
    "          curvature = (kappa0, 1 /m); }\n"
    "clamp arm.start;\n"
    "load arm.end = (0, 2 mN, -5 mN);\n"
    "gravity = (0, 0, -9.81) m/s^2;\n"
    "static { load_steps = 4; tolerance = 1e-12; }\n";

/* One elaboration of the cantilever with a param set, its kernels (every column an input, as
 * the columns a param moves are) and its static equilibrium. */
typedef struct Solved {
    Arena        arena;
    srd_model   *m;
    ModelKernels mk;
    KernelTable  kt;
    srd_sim      s;
    bool         ok;
} Solved;

static bool solve(Solved *v, const char *override)
{
    memset(v, 0, sizeof *v);
    arena_init(&v->arena);
    Program prog = { 0 };
    const char *overrides[1] = { override };
    if (parse_program_text(&v->arena, "cantilever.srd", cantilever, strlen(cantilever), parse_stdlib_dir(), &prog))
        v->m = elab_program_with(&prog, &v->arena, "cantilever.srd", overrides, override ? 1 : 0);
    diag_flush(stdout);
    char err[512] = "";
    if (!v->m)
        return false;
    keep_every_column(v->m);
    if (!kernels_lower(&v->mk, &prog, v->m, false, err, sizeof err) || !kernels_jit(&v->mk, JIT_CHUNK_OPS, err, sizeof err)) {
        printf("# %s\n", err);
        return false;
    }
    kernels_table_fill(&v->kt, &v->mk);
    if (srd_sim_for_analysis(&v->s, v->m, &v->kt.table, &v->m->statics, NULL, 0, err, sizeof err) != 0)
        return false;
    v->s.tolerance = v->m->statics.tolerance;
    v->s.max_iterations = v->m->statics.max_iterations;
    v->s.line_search = v->m->statics.line_search;
    v->ok = srd_static(&v->s, v->m->statics.load_steps) == 0;
    return v->ok;
}

static void release(Solved *v)
{
    if (v->s.m)
        srd_sim_free(&v->s);
    if (v->m) {
        kernels_table_free(&v->kt);
        kernels_free(&v->mk);
    }
    srd_model_free(v->m);
    arena_free(&v->arena);
}

static double tip_z(const Solved *v) { return v->s.q[v->m->node_dof[v->m->n_nodes - 1] + 2]; }

static char *spec(const char *name, double value, const char *unit)
{
    char *text = malloc(96);
    snprintf(text, 96, "%s=%.17g %s", name, value, unit);
    return text;
}

/* The tip's height against param `name` at `value`: by the sensitivity and by differences. */
static void check_param(const char *name, double value, const char *unit)
{
    char *at = spec(name, value, unit), *up = spec(name, 2 * value, unit);
    Solved base, moved;
    bool ok = solve(&base, at) && solve(&moved, up);
    check(&tally, ok, "%s: the cantilever's equilibria at %s and at twice it", name, at);
    if (!ok) {
        release(&base);
        release(&moved);
        free(at);
        free(up);
        return;
    }
    const srd_model *m = base.m;
    KernelTangent *tangents = calloc((size_t)m->n_sets + 1, sizeof *tangents);
    double **columns = calloc((size_t)m->n_sets + 1, sizeof *columns);
    char err[256];
    for (int k = 0; k < m->n_sets; k++) {
        size_t n = (size_t)m->sets[k].n * (size_t)m->sets[k].n_data;
        columns[k] = calloc(n + 1, sizeof(double));
        for (size_t i = 0; i < n; i++) /* d(column)/d(param), exact for columns linear in it */
            columns[k][i] = (moved.m->sets[k].data[i] - m->sets[k].data[i]) / value;
        kernel_tangent_build(&base.mk.sets[k].lowered, &m->sets[k], m->n_params, TANGENT_DATA, &tangents[k], err, sizeof err);
    }
    double *dq = calloc((size_t)m->n_dofs + 1, sizeof(double));
    int singular = sens_static(&base.s, tangents, columns, NULL, dq);
    double exact = dq[m->node_dof[m->n_nodes - 1] + 2];
    double best = INFINITY, h_best = 0, fd_best = 0;
    for (double h = 1e-3; h >= 1e-6; h /= 10) {
        char *plus = spec(name, value * (1 + h), unit), *minus = spec(name, value * (1 - h), unit);
        Solved a, b;
        if (solve(&a, plus) && solve(&b, minus)) {
            double fd = (tip_z(&a) - tip_z(&b)) / (2 * h * value);
            if (fabs(fd - exact) < best) {
                best = fabs(fd - exact);
                h_best = h;
                fd_best = fd;
            }
        }
        release(&a);
        release(&b);
        free(plus);
        free(minus);
    }
    check(&tally, !singular && exact != 0 && best <= 1e-6 * fabs(exact),
          "%s: d(tip z)/d(%s) = %.9e by one solve, %.9e by central differences of static solves (step %.0e): "
          "relative %.2e (tol 1e-6)", name, name, exact, fd_best, h_best, best / fabs(exact));
    for (int k = 0; k < m->n_sets; k++) {
        kernel_tangent_free(&tangents[k]);
        free(columns[k]);
    }
    free(tangents);
    free(columns);
    free(dq);
    release(&base);
    release(&moved);
    free(at);
    free(up);
}

int main(void)
{
    check_param("E", 2e6, "Pa");
    check_param("kappa0", 3, "/m");
    diag_reset();
    printf("%d passed, %d failed\n", tally.run - tally.failed, tally.failed);
    return tally.failed ? 1 : 0;
}
