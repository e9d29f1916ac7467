/* arena.h — bump allocation for everything the compiler builds (AST, types, model scratch). */
#ifndef SRD_ARENA_H
#define SRD_ARENA_H
#include <stddef.h>

typedef struct ArenaBlock ArenaBlock;
typedef struct Arena {
    ArenaBlock *head;
} Arena;

void  arena_init(Arena *a);
void  arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t size);          /* zeroed, 16-byte aligned */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A growable array of pointers whose storage lives in the arena. */
typedef struct PtrVec {
    void **items;
    int    len, cap;
} PtrVec;
void ptrvec_push(Arena *a, PtrVec *v, void *item);

#endif
