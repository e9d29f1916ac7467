/* fuzz_common.h — what both fuzz targets do around one input: a smaller elaboration budget,
 * and diagnostics thrown away after it. */
#ifndef SRD_FUZZ_COMMON_H
#define SRD_FUZZ_COMMON_H
#include <stdio.h>
#include "elab.h"

/* A tenth of the real work budget: about a second per input under the sanitizers, well inside
 * the per-input timeout; the budget's own error is tested at its real value (lang.bad). */
enum { FUZZ_WORK_LIMIT = 1000000 };

/* Diagnostics are the expected outcome of most inputs: printed nowhere, then cleared. */
static inline void fuzz_discard_diagnostics(void)
{
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        diag_flush(null);
        fclose(null);
    }
    diag_reset();
}

#endif
