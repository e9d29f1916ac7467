/* alloc.h — allocation that never returns NULL: running out of memory calls the program's
 * handler (srdc and built simulators exit with SRD_EXIT_MEMORY), so callers need no error path
 * for it; and the memory a process may use, for refusing a model before allocating it. */
#ifndef SRD_ALLOC_H
#define SRD_ALLOC_H
#include <stddef.h>

/* calloc of at least one element of at least one byte; never returns NULL. */
void *srd_xcalloc(size_t n, size_t size);
/* realloc to at least one byte; never returns NULL. */
void *srd_xrealloc(void *p, size_t bytes);
/* A copy of s (NULL for NULL); never returns NULL for a string. */
char *srd_xstrdup(const char *s);
/* Called when an allocation fails; it should not return (when it does, or when none is set, the
 * process aborts with a message). */
void  srd_alloc_on_failure(void (*fn)(size_t bytes));
/* The bytes this process may allocate at most: physical memory, or RLIMIT_AS or RLIMIT_DATA
 * when lower; *what names the bound. 0 when unknown. */
double srd_memory_limit(const char **what);

#endif
