/* tap.h — what every unit test shares: it counts checks and prints each as `ok - ...` or
 * `not ok - ...`, so a failing check names itself in ctest's output. */
#ifndef SRD_TEST_TAP_H
#define SRD_TEST_TAP_H
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct Tally {
    int run, failed;
} Tally;

static void check(Tally *t, bool ok, const char *fmt, ...) __attribute__((format(printf, 3, 4), unused));

static void check(Tally *t, bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s - ", ok ? "ok" : "not ok");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    t->run++;
    if (!ok)
        t->failed++;
}

#endif
