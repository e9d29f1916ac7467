/* backend_static.c — the backend linked into the program itself (tests, benchmarks). */
#include "backend.h"

const SrdBackend *srd_backend(char *err, size_t err_n)
{
    (void)err;
    (void)err_n;
    return &srd_backend_table;
}
