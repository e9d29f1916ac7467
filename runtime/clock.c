/* clock.c — the monotonic wall clock behind run summaries, assembly timings, the thread
 * choice, compiler stage timings and the benchmarks. */
#include "clock.h"
#include <time.h>

double srd_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double srd_milliseconds(void) { return 1e3 * srd_seconds(); }
