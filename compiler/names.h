/* names.h — a hash table from names to pointers, so that looking a name up during elaboration
 * costs the same with 10 declarations as with 160,000. */
#ifndef SRD_NAMES_H
#define SRD_NAMES_H
#include <stdbool.h>

typedef struct NameTable {
    const char **keys; /* not copied: the names live in the arena with the AST */
    void       **vals;
    int          cap, n;
} NameTable;

/* Binds key to val, replacing an earlier binding of key unless keep_first is set. */
void  names_put(NameTable *t, const char *key, void *val, bool keep_first);
/* The value bound to key, or NULL. */
void *names_get(const NameTable *t, const char *key);
/* Forgets every key (the table can be filled again). */
void  names_clear(NameTable *t);
void  names_free(NameTable *t);

#endif
