/* diag_capture.h — unit tests that elaborate text read its diagnostics back as one string. */
#ifndef SRD_TEST_DIAG_CAPTURE_H
#define SRD_TEST_DIAG_CAPTURE_H
#include <stdio.h>
#include "diag.h"

/* Flushes the pending diagnostics into buf (n bytes, NUL-terminated; empty when none). */
static inline void diag_capture(char *buf, size_t n)
{
    FILE *f = tmpfile();
    buf[0] = 0;
    if (!f)
        return;
    diag_flush(f);
    rewind(f);
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = 0;
    fclose(f);
}

#endif
