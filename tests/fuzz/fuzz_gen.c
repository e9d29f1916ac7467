/* fuzz_gen.c — libFuzzer entry whose bytes steer gen.c: the generated program goes through the
 * front end, and the user energies and forces of a model that elaborates are lowered and
 * differentiated, as are its control block's steps and its objective with its terms (no code
 * generation: that needs LLVM's time, not the fuzzer's). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "elab.h"
#include "fuzz_common.h"
#include "gen.h"
#include "lower.h"
#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Lowers every element set whose kind the program defines (its own energies and forces, and
 * the standard ones it `use`s); sets of kinds it does not define need the standard library
 * loaded, which would cost more than the rest of an execution. */
static void lower_defined(const Program *prog, const srd_model *m)
{
    for (int s = 0; s < m->n_sets; s++) {
        const Stmt *def = lower_find_definition(prog, m->sets[s].kind);
        if (!def)
            continue;
        LoweredElement le = { 0 };
        char err[512];
        if (lower_element(prog, prog, m, def, &m->sets[s], &le, err, sizeof err))
            lowered_free(&le);
    }
}

/* The control block's steps, the objective and its terms (a rod's tracked curve has none). */
static void lower_run_expressions(const Program *prog, const srd_model *m)
{
    LoweredElement le;
    char err[512];
    for (int k = 0; k < m->control.n_steps; k++)
        if (lower_control_step(prog, m, "control_step", k, &le, err, sizeof err))
            lowered_free(&le);
    if (!m->optimize.present)
        return;
    if (lower_objective(prog, m, &le, err, sizeof err))
        lowered_free(&le);
    for (int k = 0; k < m->optimize.n_terms; k++)
        if (m->optimize.terms[k].kind != SRD_TERM_TRACK_CURVE && lower_objective_term(prog, m, k, &le, err, sizeof err))
            lowered_free(&le);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    elab_set_work_limit(FUZZ_WORK_LIMIT);
    size_t len;
    char *text = gen_program(data, size, &len);
    Arena arena;
    arena_init(&arena);
    Program prog = { 0 };
    if (parse_program_text(&arena, "gen.srd", text, len, parse_stdlib_dir(), &prog)) {
        srd_model *m = elab_program(&prog, &arena, "gen.srd");
        if (m) {
            lower_defined(&prog, m);
            lower_run_expressions(&prog, m);
        }
        srd_model_free(m);
    }
    fuzz_discard_diagnostics();
    arena_free(&arena);
    free(text);
    return 0;
}
