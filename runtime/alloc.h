/* alloc.h — allocation that never returns NULL: running out of memory ends the program with a
 * message, so callers need no error path for it. */
#ifndef SRD_ALLOC_H
#define SRD_ALLOC_H
#include <stddef.h>

/* calloc of at least one element of at least one byte; aborts when memory runs out. */
void *srd_xcalloc(size_t n, size_t size);
/* realloc to at least one byte; aborts when memory runs out. */
void *srd_xrealloc(void *p, size_t bytes);
/* A copy of s (NULL for NULL); aborts when memory runs out. */
char *srd_xstrdup(const char *s);

#endif
