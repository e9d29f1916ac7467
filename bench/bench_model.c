/* bench_model.c — builds a benchmark's model and simulation (see bench_model.h). */
#include "bench_model.h"
#include <stdio.h>
#include <string.h>
#include "elab.h"
#include "parse.h"

int bench_model_open(BenchModel *b, const char *name, const char *text, srd_solver_kind solver)
{
    memset(b, 0, sizeof *b);
    arena_init(&b->arena);
    if (parse_program_text(&b->arena, name, text, strlen(text), parse_stdlib_dir(), &b->prog))
        b->m = elab_program(&b->prog, &b->arena, name);
    diag_flush(stderr);
    if (!b->m)
        return 1;
    char err[512];
    if (!kernels_lower(&b->mk, &b->prog, b->m, false, err, sizeof err) ||
        !kernels_jit(&b->mk, JIT_CHUNK_OPS, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    int n = b->m->n_sets;
    srd_kernel_fn fns[64], gradients[64];
    srd_kernel_info infos[64];
    for (int k = 0; k < n && k < 64; k++) {
        fns[k] = b->mk.sets[k].fn;
        gradients[k] = b->mk.sets[k].gradient;
        infos[k] = b->mk.sets[k].info;
    }
    if (srd_sim_init(&b->s, b->m, fns, gradients, infos, solver, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    return 0;
}

void bench_model_close(BenchModel *b)
{
    if (b->s.m)
        srd_sim_free(&b->s);
    kernels_free(&b->mk);
    srd_model_free(b->m);
    arena_free(&b->arena);
    diag_reset();
}
