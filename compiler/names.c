/* names.c — open-addressing hash table from names to pointers (see names.h). */
#include "names.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The slot of key, or the empty slot where it would go; cap is a power of two. */
static int find_slot(const NameTable *t, const char *key)
{
    uint32_t mask = (uint32_t)t->cap - 1;
    uint32_t i = hash_name(key) & mask;
    while (t->keys[i] && strcmp(t->keys[i], key))
        i = (i + 1) & mask;
    return (int)i;
}

static void *zalloc_or_die(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p) {
        fputs("srdc: out of memory (name table)\n", stderr);
        abort();
    }
    return p;
}

/* Doubles the table (kept at most half full, so probes stay short). */
static void grow(NameTable *t)
{
    NameTable old = *t;
    t->cap = old.cap ? 2 * old.cap : 64;
    t->keys = zalloc_or_die((size_t)t->cap, sizeof *t->keys);
    t->vals = zalloc_or_die((size_t)t->cap, sizeof *t->vals);
    for (int i = 0; i < old.cap; i++)
        if (old.keys[i]) {
            int k = find_slot(t, old.keys[i]);
            t->keys[k] = old.keys[i];
            t->vals[k] = old.vals[i];
        }
    free(old.keys);
    free(old.vals);
}

void names_put(NameTable *t, const char *key, void *val, bool keep_first)
{
    if (2 * (t->n + 1) > t->cap)
        grow(t);
    int k = find_slot(t, key);
    if (t->keys[k] && keep_first)
        return;
    if (!t->keys[k])
        t->n++;
    t->keys[k] = key;
    t->vals[k] = val;
}

void *names_get(const NameTable *t, const char *key)
{
    if (!t->cap)
        return NULL;
    int k = find_slot(t, key);
    return t->keys[k] ? t->vals[k] : NULL;
}

void names_clear(NameTable *t)
{
    if (t->cap) {
        memset(t->keys, 0, sizeof *t->keys * (size_t)t->cap);
        memset(t->vals, 0, sizeof *t->vals * (size_t)t->cap);
    }
    t->n = 0;
}

void names_free(NameTable *t)
{
    free(t->keys);
    free(t->vals);
    memset(t, 0, sizeof *t);
}
