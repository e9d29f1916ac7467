/* alloc.c — zeroed allocation, reallocation and string copies that abort with a message when memory runs out. */
#include "alloc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *srd_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fputs("srd: out of memory\n", stderr);
        abort();
    }
    return p;
}

void *srd_xrealloc(void *p, size_t bytes)
{
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q) {
        fputs("srd: out of memory\n", stderr);
        abort();
    }
    return q;
}

char *srd_xstrdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    return memcpy(srd_xcalloc(n, 1), s, n);
}
