/* lucid_tres.h — how many GPUs a Slurm TRES string asks for.  Shared by the
 * job_submit plugin (a module built alone) and lucidd, so it is header-only. */
#ifndef LUCID_TRES_H
#define LUCID_TRES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GPUs in one TRES item: "gres:gpu:8", "gres:gpu:a100:2", "gres/gpu=2", "gres:gpu" (one),
 * or 0 for another resource; -1 when the count is not a number. */
static inline long lucid_tres_gpu_item(char *item)
{
    if (strncmp(item, "gres:", 5) == 0 || strncmp(item, "gres/", 5) == 0)
        item += 5;
    if (strncmp(item, "gpu", 3) != 0 || (item[3] != '\0' && item[3] != ':' && item[3] != '='))
        return 0;
    const char *count = strrchr(item, item[3] == '=' ? '=' : ':');
    if (!count)
        return 1;
    char *stop;
    long n = strtol(count + 1, &stop, 10);
    if (*stop != '\0' || stop == count + 1 || n < 0)
        return -1; /* Slurm always writes a count last: anything else is malformed */
    return n;
}

/* GPUs in a TRES list ("gres:gpu:8;gres:shard:1" or comma-separated). */
static inline long lucid_tres_gpus(const char *tres)
{
    if (!tres)
        return 0;
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", tres);
    long total = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",;", &save); item; item = strtok_r(NULL, ",;", &save)) {
        long n = lucid_tres_gpu_item(item);
        if (n < 0)
            return -1;
        total += n;
    }
    return total;
}

/* Whether a TRES list names GRES `name` ("gres:lucidshare:2",
 * "gres/lucidshare=2", "lucidshare"). */
static inline int lucid_tres_names(const char *tres, const char *name)
{
    size_t len = strlen(name);
    if (!tres || !len)
        return 0;
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", tres);
    char *save = NULL;
    for (char *item = strtok_r(copy, ",;", &save); item; item = strtok_r(NULL, ",;", &save)) {
        if (strncmp(item, "gres:", 5) == 0 || strncmp(item, "gres/", 5) == 0)
            item += 5;
        if (strncmp(item, name, len) == 0 &&
            (item[len] == '\0' || item[len] == ':' || item[len] == '='))
            return 1;
    }
    return 0;
}

/* The GPU type a TRES list names ("gres:gpu:a100:2" -> "a100"), copied into
 * `out`; "" when untyped or no GPU item.  Returns 1 typed, 0 untyped. */
static inline int lucid_tres_gpu_type(const char *tres, char *out, size_t size)
{
    if (size)
        out[0] = '\0';
    if (!tres)
        return 0;
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", tres);
    char *save = NULL;
    for (char *item = strtok_r(copy, ",;", &save); item; item = strtok_r(NULL, ",;", &save)) {
        if (strncmp(item, "gres:", 5) == 0 || strncmp(item, "gres/", 5) == 0)
            item += 5;
        if (strncmp(item, "gpu:", 4) != 0)
            continue;
        char *type = item + 4, *colon = strchr(type, ':');
        if (!colon)
            return 0; /* "gpu:2": untyped */
        snprintf(out, size, "%.*s", (int)(colon - type), type);
        return 1;
    }
    return 0;
}

#endif
