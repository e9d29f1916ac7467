/* test_api.c — the C API (api/srd.h) as a program uses it: errors returned with their messages
 * (never printed, never exiting), stepping and resetting bit for bit, the node views kept in
 * step with the state, many instances on threads giving what one at a time gives, params and
 * probes, a free body's pose and invariants, and a numerical failure that keeps the last good
 * state. Usage: test_api EXAMPLES_DIR TESTS_DIR (the repository's examples/ and tests/). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../unit/tap.h"
#include "srd.h"

static char examples[4096], tests[4096];

static srd_instance *open_model(Tally *t, const char *dir, const char *name)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    srd_instance *inst = NULL;
    srd_status st = srd_open(path, NULL, 0, &inst);
    check(t, st == SRD_OK && inst, "srd_open %s%s%s", name, st ? ": " : "", st ? srd_last_error() : "");
    return inst;
}

static bool contains(const char *text, const char *part) { return strstr(text, part) != NULL; }

static void test_open_errors(Tally *t)
{
    srd_instance *inst = (srd_instance *)1;
    check(t, srd_open(NULL, NULL, 0, &inst) == SRD_ERR_ARGUMENT && !inst && srd_last_error()[0],
          "a NULL path is an argument error with a message");
    char path[8192];
    snprintf(path, sizeof path, "%s/lang/bad/planar_edge_element.srd", tests);
    srd_status st = srd_open(path, NULL, 0, &inst);
    const char *msg = srd_last_error();
    check(t, st == SRD_ERR_INPUT && contains(msg, "planar_edge_element.srd:5:1: error:") && contains(msg, "^") &&
             contains(msg, "hint:"), "a bad .srd file: file:line:col, caret and hint in the message");
    const char *bad_param[] = { "nodes" };
    snprintf(path, sizeof path, "%s/rod_drop.srd", examples);
    check(t, srd_open(path, bad_param, 1, &inst) == SRD_ERR_ARGUMENT && contains(srd_last_error(), "NAME=VALUE"),
          "a param without `=` is refused");
    const char *unknown[] = { "stiffnes=3" };
    st = srd_open(path, unknown, 1, &inst);
    check(t, st == SRD_ERR_INPUT && contains(srd_last_error(), "stiffnes"), "an unknown param is bad input naming it");
    snprintf(path, sizeof path, "%s/cantilever_rod.srd", examples);
    check(t, srd_open(path, NULL, 0, &inst) == SRD_ERR_INPUT && contains(srd_last_error(), "no `simulate` block"),
          "a model without a simulation is refused with a hint");
}

/* Runs n steps and returns a copy of q. */
static double *run_copy(srd_instance *inst, int n)
{
    srd_run_steps(inst, n);
    int dofs = srd_dof_count(inst);
    double *q = malloc(sizeof(double) * (size_t)dofs);
    memcpy(q, srd_q(inst), sizeof(double) * (size_t)dofs);
    return q;
}

static void test_reset_and_views(Tally *t)
{
    srd_instance *a = open_model(t, examples, "rod_drop.srd");
    if (!a)
        return;
    int dofs = srd_dof_count(a), nodes = srd_node_count(a);
    double *first = run_copy(a, 40);
    check(t, fabs(srd_time(a) - 40 * srd_dt(a)) < 1e-12 && srd_steps(a) == 40, "40 steps advance time by 40 dt");
    double *q_before = srd_q(a), *x_before = srd_x(a);
    check(t, srd_reset(a) == SRD_OK && srd_time(a) == 0 && srd_steps(a) == 0, "reset returns to t = 0");
    check(t, srd_q(a) == q_before && srd_x(a) == x_before, "the state arrays stay where they were across a reset");
    double *again = run_copy(a, 40);
    check(t, !memcmp(first, again, sizeof(double) * (size_t)dofs), "a run after reset repeats the first bit for bit");
    const double *x = srd_x(a), *q = srd_q(a);
    const int *node_dof = srd_node_dof(a);
    bool same = true;
    for (int i = 0; i < nodes; i++)
        for (int c = 0; c < 3; c++)
            same &= x[3 * i + c] == q[node_dof[i] + c];
    check(t, same, "the node view x equals q at every node's DOFs after steps");
    /* A state written through x and the same written through q step alike. */
    srd_instance *b = open_model(t, examples, "rod_drop.srd");
    srd_reset(a);
    srd_x(a)[3 * 2 + 2] += 1e-3;
    srd_q(b)[srd_node_dof(b)[2] + 2] += 1e-3;
    double *via_x = run_copy(a, 10), *via_q = run_copy(b, 10);
    check(t, !memcmp(via_x, via_q, sizeof(double) * (size_t)dofs), "writing x and writing q change the run alike");
    check(t, srd_run_until(a, 0.0205) == SRD_OK && srd_time(a) >= 0.0205 - 1e-12 &&
             srd_time(a) < 0.0205 + srd_dt(a), "srd_run_until stops at the first step past the time");
    check(t, srd_set_dt(a, -1) == SRD_ERR_ARGUMENT && srd_run_steps(a, -2) == SRD_ERR_ARGUMENT,
          "a negative dt or step count is refused");
    free(first);
    free(again);
    free(via_x);
    free(via_q);
    srd_close(a);
    srd_close(b);
}

static void test_many(Tally *t)
{
    enum { N = 4 };
    srd_instance *insts[N], *alone = open_model(t, examples, "snake.srd");
    for (int k = 0; k < N; k++)
        insts[k] = open_model(t, examples, "snake.srd");
    srd_status status[N];
    check(t, srd_run_many(insts, N, 20, 2, status) == SRD_OK, "four snakes stepped on two threads");
    double *q = run_copy(alone, 20);
    bool same = true;
    for (int k = 0; k < N; k++)
        same &= status[k] == SRD_OK && !memcmp(q, srd_q(insts[k]), sizeof(double) * (size_t)srd_dof_count(alone));
    check(t, same, "every instance of the batch equals the one stepped alone, bit for bit");
    srd_instance *twice[2] = { insts[0], insts[0] };
    check(t, srd_run_many(twice, 2, 1, 2, NULL) == SRD_ERR_ARGUMENT, "the same instance twice in a batch is refused");
    free(q);
    srd_close(alone);
    for (int k = 0; k < N; k++)
        srd_close(insts[k]);
}

static void test_params_and_probes(Tally *t)
{
    srd_instance *inst = open_model(t, examples, "snake.srd");
    if (!inst)
        return;
    double amplitude = 0;
    srd_status st;
    check(t, srd_get_param(inst, "amplitude", &amplitude) == SRD_OK && amplitude == 10, "a param's default (SI)");
    st = srd_set_param(inst, "amplitud", 5);
    check(t, st == SRD_ERR_ARGUMENT && contains(srd_last_error(), "`amplitude`"), "an unknown name suggests the closest");
    check(t, srd_set_input(inst, "amplitude", 5) == SRD_ERR_ARGUMENT && contains(srd_last_error(), "is a param"),
          "a param is not an input");
    st = srd_set_param(inst, "amplitude", 500);
    check(t, st == SRD_ERR_INPUT && contains(srd_last_error(), "range"), "a value outside the declared range is refused");
    check(t, srd_get_param(inst, "amplitude", &amplitude) == SRD_OK && amplitude == 10,
          "and the instance is left as it was");
    check(t, srd_set_param(inst, "amplitude", 5) == SRD_OK && srd_get_param(inst, "amplitude", &amplitude) == SRD_OK &&
             amplitude == 5, "a new param value builds the model anew");
    srd_run_steps(inst, 3);
    double head[3];
    int k = srd_probe_index(inst, "head_x");
    check(t, k >= 0 && srd_probe_size(inst, k) == 1 && srd_read_probe(inst, "head_x", head, 1) == SRD_OK &&
             head[0] == srd_x(inst)[3 * (srd_node_count(inst) - 1)], "a component probe reads the head's x");
    check(t, srd_read_probe(inst, "head", head, 3) == SRD_ERR_ARGUMENT && contains(srd_last_error(), "head"),
          "an unknown probe is refused");
    check(t, srd_read_probe(inst, "head_x", NULL, 0) == SRD_ERR_ARGUMENT, "a probe into no room is refused");
    double force[4];
    check(t, srd_reaction_forces(inst, force, 4) == SRD_ERR_ARGUMENT, "a force array of the wrong size is refused");
    srd_close(inst);
}

/* A free box under the implicit midpoint rule keeps its kinetic energy and angular momentum. */
static void test_body(Tally *t)
{
    srd_instance *inst = open_model(t, tests, "api/spinning_box.srd");
    if (!inst)
        return;
    double ke0, ke1, pe, w0[3], w1[3], R[9], p[3], v[3];
    srd_energy(inst, &ke0, &pe);
    srd_get_body(inst, 0, p, R, v, w0);
    check(t, fabs(w0[0] - 1) + fabs(w0[1] - 2) + fabs(w0[2] - 3) < 1e-12 && R[0] == 1 && R[4] == 1 && R[8] == 1,
          "the body starts at its reference turning at (1, 2, 3) /s");
    srd_run_steps(inst, 200);
    srd_energy(inst, &ke1, &pe);
    srd_get_body(inst, 0, p, R, v, w1);
    check(t, fabs(ke1 - ke0) < 1e-10 * ke0, "kinetic energy kept to 1e-10 over 200 steps (%.3e J to %.3e J)", ke0, ke1);
    check(t, fabs(p[0] - 0.1 * srd_time(inst)) < 1e-12, "the centre moves at its velocity (x = %.15g m)", p[0]);
    double bad[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 2 };
    check(t, srd_set_body(inst, 0, NULL, bad, NULL, NULL) == SRD_ERR_ARGUMENT && contains(srd_last_error(), "orthonormal"),
          "a rotation that is not one is refused");
    double turn[9] = { 0, -1, 0, 1, 0, 0, 0, 0, 1 }, w[3] = { 0, 0, 5 }, back[9], wb[3];
    srd_set_body(inst, 0, NULL, turn, NULL, w);
    srd_get_body(inst, 0, NULL, back, NULL, wb);
    double err = 0;
    for (int k = 0; k < 9; k++)
        err += fabs(back[k] - turn[k]);
    check(t, err < 1e-14 && fabs(wb[2] - 5) < 1e-14 && fabs(wb[0]) + fabs(wb[1]) < 1e-14,
          "a pose and angular velocity set are read back");
    check(t, srd_get_body(inst, 3, NULL, NULL, NULL, NULL) == SRD_ERR_ARGUMENT, "body 3 of 1 is refused");
    srd_close(inst);
}

static void test_failure(Tally *t)
{
    srd_instance *inst = open_model(t, tests, "physics/failing.srd");
    if (!inst)
        return;
    srd_status st = srd_run_until(inst, 1.0);
    double at = srd_time(inst);
    check(t, st == SRD_ERR_NUMERIC && contains(srd_last_error(), "t = ") && contains(srd_error(inst), "hint"),
          "a step that fails says when and what to try: %.60s", srd_last_error());
    check(t, isfinite(srd_q(inst)[2]) && at > 0 && at < 1, "the state of the last good step is kept (t = %g s)", at);
    check(t, srd_run_steps(inst, 1) == SRD_ERR_STATE && contains(srd_last_error(), "reset"),
          "stepping a failed instance is refused with a hint");
    check(t, srd_reset(inst) == SRD_OK && srd_run_steps(inst, 1) == SRD_OK, "a reset makes it usable again");
    srd_close(inst);
}

/* Opening is serialised inside the library: two threads opening and stepping at once. */
static void *open_and_step(void *arg)
{
    srd_instance *inst = NULL;
    char path[8192];
    snprintf(path, sizeof path, "%s/snake.srd", examples);
    srd_status st = srd_open(path, NULL, 0, &inst);
    if (st == SRD_OK)
        st = srd_run_steps(inst, 10);
    *(double *)arg = st == SRD_OK ? srd_q(inst)[0] : NAN;
    srd_close(inst);
    return NULL;
}

static void test_threads(Tally *t)
{
    pthread_t a, b;
    double qa = 0, qb = 1;
    pthread_create(&a, NULL, open_and_step, &qa);
    pthread_create(&b, NULL, open_and_step, &qb);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    check(t, isfinite(qa) && qa == qb, "two threads open and step their own instances alike");
}

/* Static sensitivities through the API: the cantilever's tip against E, by the result's maps. */
static void test_gradient(Tally *t)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/physics/grad/arm.srd", tests);
    srd_gradient *g = NULL;
    srd_status st = srd_static_gradient(path, NULL, 0, &g);
    check(t, st == SRD_OK && g, "srd_static_gradient solves arm.srd%s%s", st ? ": " : "", st ? srd_last_error() : "");
    int size = 0, k_e = -1, i_tip = -1;
    for (int k = 0; k < srd_gradient_param_count(g); k++)
        if (!strcmp(srd_gradient_param(g, k), "E"))
            k_e = k;
    for (int i = 0; i < srd_gradient_probe_count(g); i++)
        if (!strcmp(srd_gradient_probe(g, i, &size), "tip"))
            i_tip = i;
    const double *d = k_e >= 0 && i_tip >= 0 ? srd_gradient_values(g, i_tip, k_e) : NULL;
    srd_gradient_probe(g, i_tip, &size);
    check(t, d && size == 3 && d[2] > 0 && !srd_gradient_why(g, k_e),
          "d(tip)/d(E) has three components, the tip rising with E (%.3e m/Pa)", d ? d[2] : NAN);
    srd_gradient_free(g);
    snprintf(path, sizeof path, "%s/snake.srd", examples);
    check(t, srd_static_gradient(path, NULL, 0, &g) == SRD_ERR_INPUT && !g && contains(srd_last_error(), "static"),
          "a model without a static block is refused");
}

/* Modal sensitivities through the API: the planar cantilever's first frequency against E is
 * f1 / 2E (f ~ sqrt(E)); a model without modes is refused. */
static void test_modal_gradient(Tally *t)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/physics/grad_modal/rod.srd", tests);
    srd_frequency_gradient *g = NULL;
    srd_status st = srd_modal_gradient(path, NULL, 0, &g);
    check(t, st == SRD_OK && g && srd_frequency_gradient_mode_count(g) == 6, "srd_modal_gradient derives rod.srd's "
          "six modes%s%s", st ? ": " : "", st ? srd_last_error() : "");
    double f1 = srd_frequency_gradient_frequency(g, 0), d = srd_frequency_gradient_value(g, 0, 0);
    check(t, !strcmp(srd_frequency_gradient_param(g, 0) ? srd_frequency_gradient_param(g, 0) : "", "E") &&
          fabs(d / (f1 / 6e6) - 1) < 1e-9 && !srd_frequency_gradient_mode_why(g, 0),
          "d(f1)/d(E) = %.9e Hz/Pa is f1 / 2E", d);
    srd_frequency_gradient_free(g);
    const char *params[] = { "r=2mm" };
    snprintf(path, sizeof path, "%s/physics/grad/arm.srd", tests);
    check(t, srd_modal_gradient(path, params, 1, &g) == SRD_ERR_INPUT && !g && contains(srd_last_error(), "modes"),
          "a model without a modes block is refused");
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_api EXAMPLES_DIR TESTS_DIR\n");
        return 2;
    }
    snprintf(examples, sizeof examples, "%s", argv[1]);
    snprintf(tests, sizeof tests, "%s", argv[2]);
    Tally t = { 0, 0 };
    test_open_errors(&t);
    test_reset_and_views(&t);
    test_many(&t);
    test_params_and_probes(&t);
    test_body(&t);
    test_failure(&t);
    test_threads(&t);
    test_gradient(&t);
    test_modal_gradient(&t);
    printf("%d checks, %d failed\n", t.run, t.failed);
    return t.failed ? 1 : 0;
}
