/* alloc.c — zeroed allocation that aborts with a message when memory runs out. */
#include "alloc.h"
#include <stdio.h>
#include <stdlib.h>

void *srd_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fputs("srd: out of memory\n", stderr);
        abort();
    }
    return p;
}
