/* fuzz_front.c — libFuzzer entry: any bytes go through the whole front end (parse, check,
 * elaborate); the only acceptable outcomes are a model or diagnostics. */
#include <stdint.h>
#include <stdio.h>
#include "elab.h"
#include "fuzz_common.h"
#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    elab_set_work_limit(FUZZ_WORK_LIMIT);
    Arena arena;
    arena_init(&arena);
    Program prog = { 0 };
    if (parse_program_text(&arena, "fuzz.srd", (const char *)data, size, parse_stdlib_dir(), &prog)) {
        srd_model *m = elab_program(&prog, &arena, "fuzz.srd");
        srd_model_free(m);
    }
    fuzz_discard_diagnostics();
    arena_free(&arena);
    return 0;
}
