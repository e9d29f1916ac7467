/* kernel_bench.c — for each model given: compile latency of every stage from source to
 * callable kernels, and per element kind the operation counts and the time of one element
 * evaluation (value + gradient + Hessian scattered into a band Jacobian), JIT-compiled and
 * in the interpreter that runs the first steps of `srdc run` (compiler/kernel/interp.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "batch.h"
#include "clock.h"
#include "elab.h"
#include "kernels.h"
#include "kernel/interp.h"
#include "kernel/tier.h"
#include "parse.h"

/* Evaluates a set's kernel repeatedly at the reference configuration plus a small
 * perturbation; returns nanoseconds per element, the best of several runs. */
static double time_kernel(const srd_model *m, int s, const KernelSet *ks, srd_kernel_fn fn)
{
    srd_system sys;
    srd_system_init(&sys, m, SRD_JAC_BAND);
    srd_batch_owner bo;
    if (srd_batch_build(&bo, m, s, &ks->info, &sys) != 0)
        return NAN;
    double *q = calloc((size_t)m->n_dofs, sizeof(double)), *q0 = calloc((size_t)m->n_dofs, sizeof(double));
    double *v0 = calloc((size_t)m->n_dofs, sizeof(double));
    for (int d = 0; d < m->n_dofs; d++) {
        double base = m->dof_kind[d] <= SRD_DOF_NODE_Z ? m->x0[3 * m->dof_owner[d] + m->dof_kind[d]] : 0;
        q[d] = base + 1e-4 * sin(d);
        q0[d] = base;
    }
    double *grad = calloc(srd_system_grad_len(&sys), sizeof(double));
    double *jac = calloc(srd_system_jac_len(&sys), sizeof(double));
    double params[64] = { 0 };
    for (int p = 0; p < m->n_params && p < 64; p++)
        params[p] = m->params[p].value;
    double energy = 0;
    srd_eval_ctx ctx = { q, q0, v0, params, 0, 1e-3, &energy, grad, jac };
    int reps = 1;
    double best = INFINITY;
    for (;;) {
        double t0 = srd_milliseconds();
        for (int r = 0; r < reps; r++)
            fn(&ctx, &bo.b);
        double t = srd_milliseconds() - t0;
        if (t > 20) {
            best = t / reps;
            for (int k = 0; k < 4; k++) {
                t0 = srd_milliseconds();
                for (int r = 0; r < reps; r++)
                    fn(&ctx, &bo.b);
                best = fmin(best, (srd_milliseconds() - t0) / reps);
            }
            break;
        }
        reps *= 2;
    }
    free(q);
    free(q0);
    free(v0);
    free(grad);
    free(jac);
    srd_batch_free(&bo);
    srd_system_free(&sys);
    return best * 1e6 / (m->sets[s].n ? m->sets[s].n : 1);
}

/* A trampoline that interprets the set's kernel (released by the next call), and the time it
 * took to build the interpreter's program. */
static srd_kernel_fn interp_tramp(const KernelSet *ks, double *ms_build)
{
    static InterpProgram *prog;
    static int slot = -1;
    tier_release(slot);
    interp_free(prog);
    const LoweredElement *le = &ks->lowered;
    KernelSpec spec = { .kind = le->kind, .dag = le->dag, .n_inputs = le->n_inputs, .inputs = le->inputs,
                        .nd = le->nd, .value = le->value, .res = le->res, .jac = le->jac,
                        .symmetric = le->symmetric, .parts = 1, .lanes = 1 };
    double t0 = srd_milliseconds();
    prog = interp_build(&spec);
    *ms_build = srd_milliseconds() - t0;
    return tier_claim(prog, &slot);
}

static int bench_file(const char *path)
{
    Arena arena;
    arena_init(&arena);
    Program prog = { 0 };
    double t0 = srd_milliseconds();
    if (!parse_program(&arena, path, parse_stdlib_dir(), &prog)) {
        diag_flush(stderr);
        return 1;
    }
    double t1 = srd_milliseconds();
    srd_model *m = elab_program(&prog, &arena, path);
    double t2 = srd_milliseconds();
    diag_flush(stderr);
    if (!m)
        return 1;
    ModelKernels mk;
    char err[512];
    if (!kernels_lower(&mk, &prog, m, true, err, sizeof err) || !kernels_jit(&mk, JIT_CHUNK_OPS, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", path, err);
        return 1;
    }
    double total = srd_milliseconds() - t0;
    printf("%s\n  compile: parse %.2f ms, elaborate %.2f ms, lower+differentiate %.2f ms, IR %.2f ms, "
           "optimise+JIT %.1f ms; total %.1f ms\n",
           path, t1 - t0, t2 - t1, mk.ms_lower, mk.ms_codegen, mk.ms_jit, total);
    for (int s = 0; s < mk.n; s++) {
        const KernelSet *ks = &mk.sets[s];
        if (!ks->fn) {
            printf("  %-16s no definition yet\n", m->sets[s].kind);
            continue;
        }
        double ns = time_kernel(m, s, ks, ks->fn), ms_build = 0, ns_interp = NAN;
        srd_kernel_fn tramp = interp_tramp(ks, &ms_build);
        if (tramp)
            ns_interp = time_kernel(m, s, ks, tramp);
        printf("  %-16s %6d elements  %3d DOFs  ops value %5d gradient %5d %s %6d   %8.1f ns/element"
               "  interpreted %8.1f ns (program %.2f ms)\n",
               ks->lowered.kind, m->sets[s].n, ks->lowered.nd, ks->lowered.ops_value, ks->lowered.ops_grad,
               ks->lowered.is_force ? "Jacobian" : "Hessian ", ks->lowered.ops_jac, ns, ns_interp, ms_build);
    }
    kernels_free(&mk);
    srd_model_free(m);
    arena_free(&arena);
    diag_reset();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: kernel_bench FILE.srd...\n");
        return 1;
    }
    int status = 0;
    for (int i = 1; i < argc; i++)
        status |= bench_file(argv[i]);
    return status;
}
