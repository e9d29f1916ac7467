/* test_objective.c — an optimisation objective with terms (compiler/sens/objective.h): the
 * derivatives an adjoint reads (dJ/d(probes) at each recorded step, dJ/dq at the end, the
 * params' explicit share) against central differences of the objective itself, on a run of
 * made-up records with uneven steps (no simulation: the records are the objective's only input).
 * The objective has every kind of term: integrals of the probes, t and a param, a squared
 * integral, a track of a probe expression over time (rows between records and on them) and a
 * track of a curve along a rod; the values of an integral of t (trapezoidal: exact for a linear
 * integrand) and of the curve's misfit are checked against sums written out here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "diag.h"
#include "elab.h"
#include "parse.h"
#include "sens/objective.h"

#include "tap.h"

static Tally tally;

/* A deterministic value in [-1, 1). */
static double noise(unsigned k)
{
    k = k * 2654435761u + 12345u;
    k ^= k >> 13;
    k *= 0x5bd1e995u;
    k ^= k >> 15;
    return (double)(k % 20000u) / 10000.0 - 1.0;
}

static const char *model_text =
    "param a = 1.5 in 0..10;\n"
    "param E = 2 MPa in 1 MPa..10 MPa;\n"
    "material m { E = E; nu = 0.5; rho = 1100 kg/m^3; }\n"
    "rod arm { path = line((0, 0, 0) m, (0.1, 0, 0) m); nodes = 6; radius = 2 mm; material = m; }\n"
    "clamp arm.start;\n"
    "simulate { method = implicit_euler; dt = 10 ms; duration = 1 s; probe tip = arm.end; "
    "probe mid = arm.node(2).z; }\n"
    "optimize {\n"
    "  minimize = a * tip.x / 1 m + integral(a * (tip.z - mid)^2 + sin(t / 1 s) * mid * 1 m) / (1 m^2 * 1 s)\n"
    "           + (integral(tip.y / 1 m) / 1 s)^2 + integral(t / 1 s) / 1 s\n"
    "           + track(tip.z * a + mid^2 / 1 m, \"%s/measured.csv\") / (1 m)^2\n"
    "           + 3 * track(arm.z, \"%s/curve.csv\") / (1 m)^2;\n"
    "  vary a;\n"
    "}\n";

enum { STEPS = 7 };

static double value(Objective *ob, ObjectiveRun *run) { return objective_value(ob, run); }

/* Central difference of J in *x. */
static double difference(Objective *ob, ObjectiveRun *run, double *x)
{
    double keep = *x, h = 1e-6 * fmax(fabs(keep), 1e-3);
    *x = keep + h;
    double up = value(ob, run);
    *x = keep - h;
    double down = value(ob, run);
    *x = keep;
    value(ob, run);
    return (up - down) / (2 * h);
}

static void check_slopes(Objective *ob, ObjectiveRun *run, const srd_model *m, double *params)
{
    int ns = ob->n_slots;
    double worst = 0, scale = 0;
    double *slopes = calloc((size_t)ns, sizeof(double));
    for (int n = 0; n <= run->n_steps; n++) {
        value(ob, run);
        memset(slopes, 0, sizeof(double) * (size_t)ns);
        objective_step_slopes(ob, run, n, slopes);
        if (n == run->n_steps)
            objective_final_slopes(ob, slopes);
        for (int j = 0; j < ns; j++) {
            double exact = slopes[j];
            double fd = difference(ob, run, &run->slots[(size_t)n * (size_t)ns + (size_t)j]);
            worst = fmax(worst, fabs(exact - fd));
            scale = fmax(scale, fabs(exact));
        }
    }
    check(&tally, scale > 0 && worst < 1e-7 * scale,
          "dJ/d(probe values at each of %d records) (objective_step_slopes, and objective_final_slopes at the end) "
          "against "
          "central differences: largest error %.2e of the largest slope %.3g (tolerance 1e-7 relative)",
          run->n_steps + 1, worst, scale);

    /* dJ/dq at the end: here only the curve reads q (the records carry the probes). */
    value(ob, run);
    double *dq = calloc((size_t)m->n_dofs, sizeof(double)), *probes = calloc((size_t)m->n_dofs, sizeof(double));
    objective_final_dofs(ob, run, dq);
    objective_slots_to_dofs(m, ob->df_dslot, probes);
    worst = scale = 0;
    int read = 0;
    for (int d = 0; d < m->n_dofs; d++) {
        double exact = dq[d] - probes[d], fd = difference(ob, run, &run->q[d]);
        worst = fmax(worst, fabs(exact - fd));
        scale = fmax(scale, fabs(exact));
        read += exact != 0;
    }
    check(&tally, scale > 0 && worst < 1e-7 * scale && read == 6,
          "dJ/dq of the curve's share (objective_final_dofs) against central differences: largest error %.2e of "
          "%.3g, on the 6 z DOFs of the rod's nodes (%d read)", worst, scale, read);
    free(dq);
    free(probes);

    for (int k = 0; k < m->n_params; k++) {
        value(ob, run);
        double exact = objective_param_slope(ob, run, k), fd = difference(ob, run, &params[k]);
        check(&tally, fabs(exact - fd) < 1e-7 * fmax(fabs(exact), 1e-12) || (exact == 0 && fabs(fd) < 1e-12),
              "dJ/d(%s) at fixed probes (objective_param_slope) %.10g against central differences %.10g",
              m->params[k].name, exact, fd);
    }
    free(slopes);
}

int main(void)
{
    char dir[512], path[700], text[4096];
    if (!tap_mkdtemp(dir, sizeof dir, "objective_")) {
        check(&tally, false, "a scratch directory");
        return 1;
    }
    snprintf(path, sizeof path, "%s/measured.csv", dir);
    FILE *f = fopen(path, "w");
    /* rows between records, on one (t = 0.25) and at both ends */
    fprintf(f, "t,value\n0,0.01\n0.1,0.02\n0.25,-0.01\n0.33,0.03\n0.8,0.0\n1,0.05\n");
    fclose(f);
    snprintf(path, sizeof path, "%s/curve.csv", dir);
    f = fopen(path, "w");
    fprintf(f, "s,z\n0,0\n0.3,0.01\n0.45,0.015\n0.95,0.02\n1,0.03\n");
    fclose(f);
    snprintf(text, sizeof text, model_text, dir, dir);

    Arena arena;
    arena_init(&arena);
    Program prog = { 0 };
    srd_model *m = NULL;
    if (parse_program_text(&arena, "objective.srd", text, strlen(text), parse_stdlib_dir(), &prog))
        m = elab_program(&prog, &arena, "objective.srd");
    diag_flush(stdout);
    diag_reset();
    check(&tally, m && m->optimize.n_terms == 5, "the model elaborates with 5 terms (%d)", m ? m->optimize.n_terms : -1);
    Objective ob;
    char err[512] = "";
    bool ok = m && objective_prepare(&ob, &prog, m, err, sizeof err);
    check(&tally, ok && ob.n_slots == 4, "the objective lowers (%s), reading 4 probe slots", err);
    if (ok) {
        double *params = calloc((size_t)m->n_params, sizeof(double));
        for (int k = 0; k < m->n_params; k++)
            params[k] = m->params[k].value;
        ObjectiveRun run;
        memset(&run, 0, sizeof run);
        run.n_steps = STEPS;
        run.params = params;
        run.t = calloc(STEPS + 1, sizeof(double));
        run.slots = calloc((size_t)(STEPS + 1) * 4, sizeof(double));
        run.q = calloc((size_t)m->n_dofs, sizeof(double));
        static const double times[STEPS + 1] = { 0, 0.05, 0.25, 0.3, 0.5, 0.61, 0.9, 1 };
        memcpy(run.t, times, sizeof times);
        for (int i = 0; i < (STEPS + 1) * 4; i++)
            run.slots[i] = 0.05 * noise((unsigned)i);
        for (int i = 0; i < m->n_dofs; i++)
            run.q[i] = 0.02 * noise(1000u + (unsigned)i);
        value(&ob, &run);

        /* integral(t / 1 s) / 1 s over 0..1 s: 0.5 exactly; the curve's misfit by hand. */
        const srd_object *rod = &m->objects[0];
        double by_hand = 0;
        static const double s[5] = { 0, 0.3, 0.45, 0.95, 1 }, z[5] = { 0, 0.01, 0.015, 0.02, 0.03 };
        for (int i = 0; i < 5; i++) {
            double u = s[i] * (rod->n_nodes - 1);
            int k = (int)fmin(floor(u), rod->n_nodes - 2);
            double w = u - k;
            double at = (1 - w) * run.q[m->node_dof[rod->nodes[k]] + 2] + w * run.q[m->node_dof[rod->nodes[k + 1]] + 2];
            by_hand += (at - z[i]) * (at - z[i]);
        }
        check(&tally, fabs(ob.value_of_term[2] - 0.5) < 1e-15,
              "integral(t / 1 s) over records at uneven times 0..1 s is 0.5 (trapezoidal, exact for a linear "
              "integrand): %.17g", ob.value_of_term[2]);
        check(&tally, fabs(ob.value_of_term[4] - by_hand) < 1e-15 * fmax(by_hand, 1e-300) + 1e-18,
              "the curve's misfit, z interpolated between the rod's 6 nodes at s = 0, 0.2, ..: %.17g (by hand %.17g)",
              ob.value_of_term[4], by_hand);
        check_slopes(&ob, &run, m, params);
        objective_run_free(&run);
        free(params);
    }
    if (ok)
        objective_free(&ob);
    srd_model_free(m);
    arena_free(&arena);
    snprintf(path, sizeof path, "%s/measured.csv", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/curve.csv", dir);
    remove(path);
    rmdir(dir);
    printf("%d checks, %d failed\n", tally.run, tally.failed);
    return tally.failed ? 1 : 0;
}
