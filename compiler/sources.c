/* sources.c — one place through which the front end reads files, so that a built simulator can
 * elaborate its model again (with new param values) from the copies it carries. */
#include "sources.h"
#include "alloc.h"
#include <stdlib.h>
#include <string.h>

typedef struct Kept {
    char  *path;
    char  *text;
    size_t len;
} Kept;

static Kept  *kept;
static int    n_kept, cap_kept;
static bool   recording;

void sources_record(bool on) { recording = on; }

int sources_count(void) { return n_kept; }

const char *sources_path(int i) { return i >= 0 && i < n_kept ? kept[i].path : NULL; }

const char *sources_text(int i, size_t *len)
{
    if (i < 0 || i >= n_kept)
        return NULL;
    *len = kept[i].len;
    return kept[i].text;
}

static const Kept *find(const char *path)
{
    for (int i = 0; i < n_kept; i++)
        if (!strcmp(kept[i].path, path))
            return &kept[i];
    return NULL;
}

static void keep(const char *path, const char *text, size_t len)
{
    if (n_kept == cap_kept) {
        cap_kept = cap_kept ? 2 * cap_kept : 8;
        kept = srd_xrealloc(kept, sizeof *kept * (size_t)cap_kept);
    }
    Kept *k = &kept[n_kept++];
    k->path = srd_xstrdup(path);
    k->text = srd_xcalloc(len + 1, 1);
    memcpy(k->text, text, len);
    k->text[len] = 0;
    k->len = len;
}

void sources_provide(const char *path, const char *text, size_t len)
{
    if (!find(path))
        keep(path, text, len);
}

static char *read_disk(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = srd_xcalloc(cap + 1, 1);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = srd_xrealloc(buf, cap + 1);
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0)
            break;
        n += got;
    }
    bool failed = ferror(f);
    fclose(f);
    if (failed) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

char *sources_read(const char *path, size_t *len)
{
    const Kept *k = find(path);
    if (k) {
        char *copy = srd_xcalloc(k->len + 1, 1);
        memcpy(copy, k->text, k->len + 1);
        *len = k->len;
        return copy;
    }
    char *text = read_disk(path, len);
    if (text && recording)
        keep(path, text, *len);
    return text;
}

FILE *sources_open(const char *path)
{
    const Kept *k = find(path);
    if (!k && recording) {
        size_t len;
        char *text = read_disk(path, &len);
        if (!text)
            return NULL;
        keep(path, text, len);
        free(text);
        k = &kept[n_kept - 1];
    }
    if (!k)
        return fopen(path, "r");
    /* fmemopen refuses an empty buffer: an empty file reads as its terminating NUL's absence. */
    return fmemopen(k->text, k->len ? k->len : 1, "r");
}

void sources_reset(void)
{
    for (int i = 0; i < n_kept; i++) {
        free(kept[i].path);
        free(kept[i].text);
    }
    free(kept);
    kept = NULL;
    n_kept = cap_kept = 0;
    recording = false;
}
