/* error.c — formatting of liblucid's error values (see error.h). */
#include "lucid/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int lucid_error_set(lucid_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int lucid_error_at(lucid_error *err, const char *file, long line, const char *field,
                   const char *fmt, ...)
{
    if (!err)
        return -1;
    char reason[LUCID_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    char where[512];
    if (line > 0)
        snprintf(where, sizeof where, "%s:%ld", file ? file : "<input>", line);
    else
        snprintf(where, sizeof where, "%s", file ? file : "<input>");
    /* Assemble piecewise: truncation of an over-long message is acceptable. */
    size_t used = 0, cap = sizeof err->msg;
    const char *parts[5] = {where, field ? ": " : "", field ? field : "", ": ", reason};
    for (int i = 0; i < 5; i++) {
        size_t n = strlen(parts[i]);
        if (used + n >= cap)
            n = cap - 1 - used;
        memcpy(err->msg + used, parts[i], n);
        used += n;
    }
    err->msg[used] = '\0';
    return -1;
}

void lucid_error_clear(lucid_error *err)
{
    if (err)
        err->msg[0] = '\0';
}
