/* fit.c — the site's rules for "could Slurm start this job there now?"
 * (fit.h): GPU type, features, CPUs, memory, --exclusive, node state and
 * reservations, the site's GPU limits, on plain structs. */
#include "fit.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static void say(char *why, size_t size, const char *fmt, const char *a, long long b, long long c)
{
    if (why && size)
        snprintf(why, size, fmt, a, b, c);
}

int fit_cpus_needed(const fit_request *r, int gpus_here)
{
    long long need = r->cpus_node;
    long long per_gpu = (long long)r->cpus_per_gpu * (gpus_here > 0 ? gpus_here : 0);
    if (per_gpu > need)
        need = per_gpu;
    if (need < 1)
        need = 1;
    return need > 1000000 ? 1000000 : (int)need;
}

int64_t fit_mem_needed(const fit_request *r, int gpus_here)
{
    int64_t need = r->mem_node_mib;
    if (r->mem_per_cpu_mib > 0) {
        int64_t per_cpu = r->mem_per_cpu_mib * fit_cpus_needed(r, gpus_here);
        if (per_cpu > need)
            need = per_cpu;
    }
    if (r->mem_per_gpu_mib > 0 && gpus_here > 0) {
        int64_t per_gpu = r->mem_per_gpu_mib * gpus_here;
        if (per_gpu > need)
            need = per_gpu;
    }
    return need;
}

/* Is `name` (len bytes) one of the comma list `have`? */
static int has_feature(const char *have, const char *name, size_t len)
{
    for (const char *p = have; p && *p;) {
        size_t n = strcspn(p, ",");
        if (n == len && strncmp(p, name, len) == 0)
            return 1;
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

int fit_features_match(const char *want, const char *have)
{
    if (!want || !*want)
        return 1;
    if (strpbrk(want, "[]()*:"))
        return -1;
    int any = strchr(want, '|') != NULL;
    if (any && strpbrk(want, "&,"))
        return -1; /* mixed and/or: Slurm's precedence, not lucid's to guess */
    for (const char *p = want; *p;) {
        size_t n = strcspn(p, any ? "|" : "&,");
        if (n > 0) {
            int here = has_feature(have, p, n);
            if (any && here)
                return 1;
            if (!any && !here)
                return 0;
        }
        p += n;
        if (*p)
            p++;
    }
    return !any;
}

static int type_matches(const fit_request *r, const fit_node *n)
{
    if (!r->gpu_type[0])
        return 1;
    /* A node of several types: the count per type is not modelled, so a
     * typed job is not placed there (documented in docs/live.md). */
    return strcmp(r->gpu_type, n->gpu_type) == 0;
}

int fit_node_ever(const fit_request *r, int gpus_here, const fit_node *n, char *why, size_t size)
{
    if (gpus_here > 0 && !type_matches(r, n)) {
        if (why && size)
            snprintf(why, size, "%s has %s GPUs, it asks %s", n->name,
                     n->gpu_type[0] ? n->gpu_type : "untyped", r->gpu_type);
        return 0;
    }
    if (gpus_here > n->gpus) {
        say(why, size, "%s has %lld GPUs, it asks %lld there", n->name, n->gpus, gpus_here);
        return 0;
    }
    int features = fit_features_match(r->features, n->features);
    if (features == 0) {
        if (why && size)
            snprintf(why, size, "%s lacks the features %s", n->name, r->features);
        return 0;
    }
    int cpus = fit_cpus_needed(r, gpus_here);
    if (n->cpus > 0 && cpus > n->cpus) {
        say(why, size, "%s has %lld CPUs, it asks %lld", n->name, n->cpus, cpus);
        return 0;
    }
    int64_t mem = fit_mem_needed(r, gpus_here);
    if (n->mem_mib > 0 && mem > n->mem_mib) {
        say(why, size, "%s has %lld MiB of memory, it asks %lld", n->name, (long long)n->mem_mib,
            (long long)mem);
        return 0;
    }
    return 1;
}

int fit_node_now(const fit_request *r, int gpus_here, const fit_node *n, int64_t now, char *why,
                 size_t size)
{
    if (!n->usable) {
        if (why && size)
            snprintf(why, size, "%s is %s", n->name, n->state[0] ? n->state : "not usable");
        return 0;
    }
    if (!fit_node_ever(r, gpus_here, n, why, size))
        return 0;
    int64_t until = r->time_limit_s > 0 ? now + r->time_limit_s : INT64_MAX;
    for (int k = 0; k < n->nwindows; k++) {
        const fit_window *w = &n->windows[k];
        if (w->end > now && w->start < until) {
            if (why && size) {
                if (w->start <= now)
                    snprintf(why, size, "%s is in reservation %s", n->name, w->name);
                else
                    snprintf(why, size, "%s is reserved (%s) in %lld s, before its time limit ends",
                             n->name, w->name, (long long)(w->start - now));
            }
            return 0;
        }
    }
    return 1;
}

fit_room fit_room_of(const fit_node *n)
{
    fit_room room = {.cpus_free = n->cpus > 0 ? n->cpus - n->cpus_alloc : -1,
                     .cpus_total = n->cpus > 0 ? n->cpus : -1,
                     .mem_free_mib = n->mem_mib > 0 ? n->mem_mib - n->mem_alloc_mib : -1};
    if (room.cpus_free < 0 && n->cpus > 0)
        room.cpus_free = 0;
    if (room.mem_free_mib < 0 && n->mem_mib > 0)
        room.mem_free_mib = 0;
    return room;
}

/* The value of `key` in "Key = Value" lines (case-insensitive key), copied
 * into `out`; "" when absent. */
static void conf_value(const char *text, const char *key, char *out, size_t size)
{
    out[0] = '\0';
    size_t len = strlen(key);
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        const char *p = line;
        while (p < line + n && (*p == ' ' || *p == '\t'))
            p++;
        if ((size_t)(line + n - p) > len && strncasecmp(p, key, len) == 0) {
            const char *q = p + len;
            while (q < line + n && (*q == ' ' || *q == '\t'))
                q++;
            if (q < line + n && *q == '=') {
                q++;
                while (q < line + n && (*q == ' ' || *q == '\t'))
                    q++;
                const char *stop = line + n;
                while (stop > q && (stop[-1] == ' ' || stop[-1] == '\t' || stop[-1] == '\r'))
                    stop--;
                snprintf(out, size, "%.*s", (int)(stop - q), q);
                return;
            }
        }
        line = end ? end + 1 : NULL;
    }
}

int fit_packing_safe(const char *task_plugin, const char *cgroup_conf, int host_cgroup_v2,
                     char *why, size_t size)
{
    char devices[16], plugin[64];
    if (!task_plugin || !strstr(task_plugin, "task/cgroup")) {
        if (why && size)
            snprintf(why, size, "no device confinement (TaskPlugin %s): every job sees its "
                                "node's GPUs",
                     task_plugin && task_plugin[0] ? task_plugin : "none");
        return 1;
    }
    conf_value(cgroup_conf, "ConstrainDevices", devices, sizeof devices);
    if (strcasecmp(devices, "yes") != 0) {
        if (why && size)
            snprintf(why, size, "no device confinement (ConstrainDevices=%s)",
                     devices[0] ? devices : "no");
        return 1;
    }
    conf_value(cgroup_conf, "CgroupPlugin", plugin, sizeof plugin);
    int v2 = strcmp(plugin, "cgroup/v2") == 0 ||
             ((!plugin[0] || strcmp(plugin, "autodetect") == 0) && host_cgroup_v2);
    if (v2) {
        if (why && size)
            snprintf(why, size,
                     "cgroup v2 device confinement (ConstrainDevices=yes, CgroupPlugin=%s%s): a "
                     "packed job cannot be given its partner's GPUs",
                     plugin[0] ? plugin : "autodetect",
                     strcmp(plugin, "cgroup/v2") == 0 ? "" : " on a cgroup v2 host");
        return 0;
    }
    if (why && size)
        snprintf(why, size, "cgroup v1 device confinement: the SPANK plugin grants a packed job "
                            "its partner's GPUs");
    return 1;
}

void fit_share_take(int *share_free, int gpus)
{
    if (*share_free >= 0)
        *share_free = *share_free > gpus ? *share_free - gpus : 0;
}

int fit_pack_ok(int gpus_here, int slurm_free_gpus, int share_free, char *why, size_t size)
{
    if (slurm_free_gpus < 1) {
        if (why && size)
            snprintf(why, size, "no GPU of the node free (Slurm starts a packed job only "
                                "beside one)");
        return 0;
    }
    if (share_free >= 0 && share_free < gpus_here) {
        if (why && size)
            snprintf(why, size, "%d of the node's share GRES free, %d needed", share_free,
                     gpus_here);
        return 0;
    }
    return 1;
}

int fit_room_ok(const fit_request *r, int gpus_here, int gpus_free, int gpus_total,
                const fit_room *room)
{
    if (r->whole) {
        if (gpus_free < gpus_total)
            return 0;
        if (room->cpus_total >= 0 && room->cpus_free < room->cpus_total)
            return 0;
    }
    if (room->cpus_free >= 0 && fit_cpus_needed(r, gpus_here) > room->cpus_free)
        return 0;
    if (room->mem_free_mib >= 0 && fit_mem_needed(r, gpus_here) > room->mem_free_mib)
        return 0;
    return 1;
}

void fit_room_take(const fit_request *r, int gpus_here, fit_room *room)
{
    if (room->cpus_free >= 0) {
        room->cpus_free -= r->whole ? room->cpus_free : fit_cpus_needed(r, gpus_here);
        if (room->cpus_free < 0)
            room->cpus_free = 0;
    }
    if (room->mem_free_mib >= 0) {
        room->mem_free_mib -= r->whole ? room->mem_free_mib : fit_mem_needed(r, gpus_here);
        if (room->mem_free_mib < 0)
            room->mem_free_mib = 0;
    }
}

int fit_limits_ever(const fit_limits *limits, int gpus, char *why, size_t size)
{
    for (int k = 0; limits && k < limits->count; k++) {
        const fit_limit *l = limits->limit[k];
        if (gpus > l->gpus) {
            if (why && size)
                snprintf(why, size, "needs %d GPUs; %s: can never start", gpus, l->name);
            return 0;
        }
    }
    return 1;
}

int fit_limits_now(const fit_limits *limits, int gpus, char *why, size_t size)
{
    for (int k = 0; limits && k < limits->count; k++) {
        const fit_limit *l = limits->limit[k];
        if (!l->per_job && (long long)l->used + gpus > l->gpus) {
            if (why && size)
                snprintf(why, size, "%s: %s runs %d; it needs %d more", l->name, l->whose, l->used,
                         gpus);
            return 0;
        }
    }
    return 1;
}

void fit_limits_take(const fit_limits *limits, int gpus)
{
    for (int k = 0; limits && k < limits->count; k++)
        if (!limits->limit[k]->per_job)
            limits->limit[k]->used += gpus;
}
