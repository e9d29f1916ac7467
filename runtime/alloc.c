/* alloc.c — zeroed allocation, reallocation and string copies that never return NULL, and the
 * memory a process may use. */
#include "alloc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static void (*on_failure)(size_t bytes);

void srd_alloc_on_failure(void (*fn)(size_t bytes)) { on_failure = fn; }

/* The program's handler ends it with its own exit status; a library user without one gets the
 * old behaviour, since the callers have no error path. */
static void out_of_memory(size_t bytes)
{
    if (on_failure)
        on_failure(bytes);
    fprintf(stderr, "srd: out of memory (allocating %zu bytes)\n", bytes);
    abort();
}

void *srd_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory(n * size);
    return p;
}

void *srd_xrealloc(void *p, size_t bytes)
{
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q)
        out_of_memory(bytes);
    return q;
}

char *srd_xstrdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    return memcpy(srd_xcalloc(n, 1), s, n);
}

/* A resource limit in bytes, or 0 when there is none. */
static double rlimit_bytes(int resource)
{
    struct rlimit r;
    if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY)
        return 0;
    return (double)r.rlim_cur;
}

double srd_memory_limit(const char **what)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double limit = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    *what = "the physical memory";
    double as = rlimit_bytes(RLIMIT_AS), data = rlimit_bytes(RLIMIT_DATA);
    if (as > 0 && (limit == 0 || as < limit)) {
        limit = as;
        *what = "the address-space limit (ulimit -v)";
    }
    if (data > 0 && (limit == 0 || data < limit)) {
        limit = data;
        *what = "the data-size limit (ulimit -d)";
    }
    return limit;
}
