/* errors.c — how the C API reports failures: a status returned, and its message kept for the
 * calling thread (srd_last_error) and for the instance (srd_error), never printed. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "instance.h"

static _Thread_local char *last_error;

const char *srd_last_error(void) { return last_error ? last_error : ""; }

const char *srd_error(const srd_instance *inst)
{
    return inst && inst->message ? inst->message : "";
}

srd_status api_fail_text(srd_instance *inst, srd_status status, char *text)
{
    if (!text)
        text = strdup("out of memory while reporting an error");
    if (text) {
        size_t n = strlen(text);
        while (n > 0 && text[n - 1] == '\n') /* messages end without a newline */
            text[--n] = 0;
    }
    free(last_error);
    last_error = text;
    if (inst) {
        free(inst->message);
        inst->message = text ? strdup(text) : NULL;
    }
    return status;
}

srd_status api_fail(srd_instance *inst, srd_status status, const char *fmt, ...)
{
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text)
        vsnprintf(text, (size_t)n + 1, fmt, again);
    va_end(again);
    va_end(ap);
    return api_fail_text(inst, status, text);
}

FILE *api_stream_open(char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    return open_memstream(buf, len);
}

char *api_stream_text(FILE *f, char **buf, size_t *len)
{
    if (!f)
        return NULL;
    fclose(f);
    (void)len;
    return *buf;
}
