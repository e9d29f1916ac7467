/* sources.c — one place through which the front end reads files, so that a built simulator can
 * elaborate its model again (with new param values) from the copies it carries. */
#include "sources.h"
#include "alloc.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static char last_error[160];

const char *sources_error(void) { return last_error; }

static void fail(const char *why)
{
    snprintf(last_error, sizeof last_error, "%s", why);
}

/* Opens `path` for reading only if it is a regular file of at most SOURCES_MAX_BYTES: a device
 * (/dev/zero) would never end, a FIFO would block, and a directory is not a file. O_NONBLOCK
 * keeps the open itself from blocking on a FIFO; it is cleared once the file is known to be
 * regular. Returns -1 with the reason in last_error. */
static int open_regular(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fail(strerror(errno));
        return -1;
    }
    struct stat st;
    const char *why = fstat(fd, &st) != 0 ? strerror(errno)
                    : S_ISDIR(st.st_mode) ? "it is a directory"
                    : !S_ISREG(st.st_mode) ? "it is not a regular file (a device, FIFO or socket)"
                    : st.st_size > SOURCES_MAX_BYTES ? "it is larger than the limit of "
                                                        SOURCES_MAX_TEXT " (SOURCES_MAX_BYTES)"
                                                      : NULL;
    if (!why && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
        why = strerror(errno);
    if (why) {
        fail(why);
        close(fd);
        return -1;
    }
    return fd;
}

FILE *sources_fopen(const char *path)
{
    int fd = open_regular(path);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (fd >= 0 && !f) {
        fail(strerror(errno));
        close(fd);
    }
    return f;
}

/* Reads at most SOURCES_MAX_BYTES: a file that grows while it is read is refused too. */
static char *read_disk(const char *path, size_t *len)
{
    FILE *f = sources_fopen(path);
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
        if (n > SOURCES_MAX_BYTES)
            break;
    }
    bool failed = ferror(f) || n > SOURCES_MAX_BYTES;
    if (failed)
        fail(n > SOURCES_MAX_BYTES ? "it is larger than the limit of " SOURCES_MAX_TEXT " (SOURCES_MAX_BYTES)"
                                   : strerror(errno));
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
        return sources_fopen(path);
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
