/* run.c — `srdc run`: starts a model's kernels (interpreted at once, JIT-compiled on a helper
 * thread, kernels.h) and hands them to the driver, which runs the analyses. */
#include "run.h"
#include <stdio.h>
#include "kernels.h"

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
    if (!kernels_lower(&mk, prog, m, false, err, sizeof err) || !kernels_start(&mk, JIT_CHUNK_OPS, err, sizeof err)) {
        fprintf(stderr, "srdc: error: %s\n", err);
        kernels_free(&mk);
        return SRD_EXIT_BAD_INPUT;
    }
    KernelTable kt;
    kernels_table_fill(&kt, &mk);
    int status = srd_run(m, &kt.table, o);
    kernels_finish(&mk);
    kernels_table_free(&kt);
    kernels_free(&mk);
    return status;
}
