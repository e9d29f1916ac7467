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
    KernelTable kt;
    kernels_table_fill(&kt, &b->mk);
    int failed = srd_sim_init(&b->s, b->m, kt.fns, kt.gradients, kt.infos, solver, err, sizeof err) != 0;
    kernels_table_free(&kt);
    if (failed)
        fprintf(stderr, "%s\n", err);
    return failed;
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
