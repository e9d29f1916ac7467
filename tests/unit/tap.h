/* tap.h — what every unit test shares: it counts checks and prints each as `ok - ...` or
 * `not ok - ...`, so a failing check names itself in ctest's output. */
#ifndef SRD_TEST_TAP_H
#define SRD_TEST_TAP_H
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

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

/* Makes a new directory <prefix>XXXXXX in $TMPDIR (else /tmp) and puts its path in buf (n
 * bytes). The suite gives its tests their own TMPDIR and fails when anything is left there
 * (tmp.leftovers), so a test removes what it makes, also when a check fails. */
static bool tap_mkdtemp(char *buf, size_t n, const char *prefix) __attribute__((unused));

static bool tap_mkdtemp(char *buf, size_t n, const char *prefix)
{
    const char *dir = getenv("TMPDIR");
    int len = snprintf(buf, n, "%s/%sXXXXXX", dir && *dir ? dir : "/tmp", prefix);
    return len > 0 && (size_t)len < n && mkdtemp(buf) != NULL;
}

#endif
