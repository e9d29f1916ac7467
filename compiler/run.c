/* run.c — `srdc run`: JIT-compiles a model's kernels and hands them to the driver, which runs
 * the analyses. */
#include "run.h"
#include <stdio.h>
#include <stdlib.h>
#include "kernels.h"

/* The driver's view of JIT-compiled kernels; the arrays live as long as mk. */
typedef struct JitTable {
    srd_kernel_table table;
    srd_kernel_fn   *fns, *gradients, *schedules;
    srd_kernel_info *infos;
    int             *actuation, *expr;
} JitTable;

static void jit_table_fill(JitTable *jt, const ModelKernels *mk)
{
    int n = mk->n, ns = mk->n_schedules;
    jt->fns = calloc((size_t)n + 1, sizeof *jt->fns);
    jt->gradients = calloc((size_t)n + 1, sizeof *jt->gradients);
    jt->infos = calloc((size_t)n + 1, sizeof *jt->infos);
    jt->schedules = calloc((size_t)ns + 1, sizeof *jt->schedules);
    jt->actuation = calloc((size_t)ns + 1, sizeof(int));
    jt->expr = calloc((size_t)ns + 1, sizeof(int));
    for (int k = 0; k < n; k++) {
        jt->fns[k] = mk->sets[k].fn;
        jt->gradients[k] = mk->sets[k].gradient;
        jt->infos[k] = mk->sets[k].info;
    }
    for (int k = 0; k < ns; k++) {
        jt->schedules[k] = mk->schedules[k].fn;
        jt->actuation[k] = mk->schedules[k].actuation;
        jt->expr[k] = mk->schedules[k].expr;
    }
    jt->table = (srd_kernel_table){ jt->fns, jt->gradients, jt->infos, ns, jt->schedules, jt->actuation, jt->expr,
                                    mk->ground_height_fn };
}

static void jit_table_free(JitTable *jt)
{
    free(jt->fns);
    free(jt->gradients);
    free(jt->infos);
    free(jt->schedules);
    free(jt->actuation);
    free(jt->expr);
}

int run_model(const Program *prog, srd_model *m, const srd_run_options *o)
{
    if (srd_run_check(m, o) != SRD_EXIT_OK)
        return SRD_EXIT_BAD_INPUT;
    char err[512];
    /* The same columns stay inputs as in a built simulator, so both run the same code. Its
     * refusal of loop values captured from params concerns built simulators only: here the
     * kernels are compiled with the values given. */
    (void)kernels_mark_param_columns(m->source, m, err, sizeof err);
    ModelKernels mk;
    if (!kernels_lower(&mk, prog, m, false, err, sizeof err) || !kernels_jit(&mk, JIT_CHUNK_OPS, err, sizeof err)) {
        fprintf(stderr, "srdc: error: %s\n", err);
        kernels_free(&mk);
        return SRD_EXIT_BAD_INPUT;
    }
    JitTable jt;
    jit_table_fill(&jt, &mk);
    int status = srd_run(m, &jt.table, o);
    jit_table_free(&jt);
    kernels_free(&mk);
    return status;
}
