/* files.c — small file-system helpers (see files.h). */
#include "files.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int srd_make_dirs(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(path, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

int srd_outfile_open(srd_outfile *o, const char *dir, const char *name)
{
    memset(o, 0, sizeof *o);
    snprintf(o->path, sizeof o->path, "%s/%s", dir, name);
    o->f = fopen(o->path, "w");
    if (!o->f)
        o->failed_errno = errno;
    return o->f ? 0 : -1;
}

void srd_outfile_printf(srd_outfile *o, const char *fmt, ...)
{
    if (!o->f)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(o->f, fmt, ap) < 0 && !o->failed_errno)
        o->failed_errno = errno ? errno : EIO;
    va_end(ap);
}

int srd_outfile_flush(srd_outfile *o)
{
    if (o->f && (fflush(o->f) != 0 || ferror(o->f)) && !o->failed_errno)
        o->failed_errno = errno ? errno : EIO;
    return o->failed_errno ? -1 : 0;
}

int srd_outfile_close(srd_outfile *o)
{
    if (!o->f)
        return o->failed_errno ? -1 : 0;
    srd_outfile_flush(o);
    if (fclose(o->f) != 0 && !o->failed_errno)
        o->failed_errno = errno ? errno : EIO;
    o->f = NULL;
    return o->failed_errno ? -1 : 0;
}

int srd_outfile_resume(srd_outfile *o, const char *dir, const char *name, long long bytes)
{
    memset(o, 0, sizeof *o);
    snprintf(o->path, sizeof o->path, "%s/%s", dir, name);
    if (truncate(o->path, (off_t)bytes) != 0 || !(o->f = fopen(o->path, "a"))) {
        o->failed_errno = errno;
        return -1;
    }
    return 0;
}

long long srd_outfile_size(srd_outfile *o)
{
    if (!o->f || srd_outfile_flush(o) != 0)
        return -1;
    return (long long)ftell(o->f);
}

void srd_outfile_error(const srd_outfile *o, char *buf, size_t n)
{
    snprintf(buf, n, "cannot write %s: %s", o->path, strerror(o->failed_errno ? o->failed_errno : EIO));
}
