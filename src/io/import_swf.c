/* import_swf.c — the Standard Workload Format of the Parallel Workloads
 * Archive (Feitelson et al.): `;` header comments, then one job per line of
 * 18 whitespace-separated integers (-1 = unknown):
 *   1 job  2 submit  3 wait  4 run time  5 allocated procs  6 avg CPU  7 used mem
 *   8 requested procs  9 requested time  10 requested mem  11 status  12 user
 *   13 group  14 executable  15 queue  16 partition  17 preceding job  18 think time
 *
 * Rules (docs/traces.md): GPUs = ceil(processors / --procs-per-gpu) (1 by
 * default), processors = allocated, else requested; the requested time is
 * the job's time_limit; status 1 COMPLETED, 0 FAILED, 5 CANCELLED, -1
 * UNKNOWN are jobs, 2/3/4 are the partial executions of a checkpointed job
 * whose own line carries it (removed, counted); other values are errors;
 * run time < 1 or unknown is removed; one VC per queue (--vc-by queue) or
 * partition (--vc-by partition), else one VC named "swf", sized from the
 * header's MaxProcs when there is one VC; calendar times from UnixStartTime. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/import.h"

#define SWF_FIELDS 18

typedef struct swf_rules {
    int partial, no_runtime, no_procs;
} swf_rules;

static int header_value(const char *line, const char *key, int64_t *out)
{
    size_t n = strlen(key);
    const char *p = line + 1;
    while (*p == ' ' || *p == '\t')
        p++;
    if (strncmp(p, key, n) != 0 || p[n] != ':')
        return 0;
    char *end;
    long long v = strtoll(p + n + 1, &end, 10);
    if (end == p + n + 1)
        return 0; /* UNKNOWN and the like */
    *out = v;
    return 1;
}

/* The 18 integers of a job line; "-1.00" and "3.5" count as their integer
 * part (some logs write them). */
static int parse_fields(const char *p, int64_t *v, const char *path, long lineno,
                        lucid_error *err)
{
    int n = 0;
    char *end;
    while (*p && n < SWF_FIELDS) {
        long long x = strtoll(p, &end, 10);
        if (end == p || (*end && *end != ' ' && *end != '\t' && *end != '.'))
            return lucid_error_at(err, path, lineno, NULL, "field %d: '%.20s' is not an integer",
                                  n + 1, p);
        while (*end && *end != ' ' && *end != '\t')
            end++;
        v[n++] = x;
        p = end;
        while (*p == ' ' || *p == '\t')
            p++;
    }
    if (n != SWF_FIELDS || *p)
        return lucid_error_at(err, path, lineno, NULL, "expected %d fields, found %s%d",
                              SWF_FIELDS, *p ? "more than " : "", n);
    return 0;
}

typedef struct swf_file {
    const char *path;
    int64_t index, epoch;
    double procs_per_gpu;
    int vc_field; /* 0: one VC; else the 1-based field naming it (15 queue, 16 partition) */
} swf_file;

/* One job line: a job, a counted rule, or an error. */
static int add_job(lucid_import *imp, const swf_file *sf, long lineno, const int64_t *v,
                   const swf_rules *r, lucid_error *err)
{
    static const char *const states[] = {"FAILED", "COMPLETED", NULL, NULL, NULL, "CANCELLED"};
    int64_t status = v[10], procs = v[4] > 0 ? v[4] : v[7];
    imp->records++;
    if (status >= 2 && status <= 4) {
        lucid_import_count(imp, r->partial);
        return 0;
    }
    if (status != -1 && status != 0 && status != 1 && status != 5)
        return lucid_error_at(err, sf->path, lineno, "status",
                              "%lld is not an SWF status (-1, 0, 1, 5; 2-4 partial)",
                              (long long)status);
    if (procs <= 0) {
        lucid_import_count(imp, r->no_procs);
        return 0;
    }
    if (v[3] < 1) {
        lucid_import_count(imp, r->no_runtime);
        return 0;
    }
    if (v[1] < 0)
        return lucid_error_at(err, sf->path, lineno, "submit time", "%lld is negative",
                              (long long)v[1]);
    double g = (double)procs / sf->procs_per_gpu;
    int64_t gpus = (int64_t)g;
    if ((double)gpus < g)
        gpus++;
    if (gpus > (1 << 20))
        return lucid_error_at(err, sf->path, lineno, "processors", "%lld is implausible",
                              (long long)procs);
    char vc[64], user[32];
    if (sf->vc_field)
        snprintf(vc, sizeof vc, "%s%lld", sf->vc_field == 15 ? "queue" : "partition",
                 (long long)v[sf->vc_field - 1]);
    else
        snprintf(vc, sizeof vc, "swf");
    snprintf(user, sizeof user, "u%lld", (long long)v[11]);
    lucid_import_job *job = lucid_import_push(imp);
    int32_t vid = job ? lucid_import_vc(imp, vc, -1) : -1;
    if (!job || vid < 0)
        return lucid_error_set(err, "out of memory");
    job->job_id = v[0] + sf->index * 1000000000LL;
    job->submit = sf->epoch + v[1];
    job->duration = v[3];
    job->time_limit = v[8] > 0 ? v[8] : -1;
    job->gpu_num = (int32_t)gpus;
    job->cpu_num = procs > (1 << 24) ? (1 << 24) : (int32_t)procs;
    job->vc = vid;
    job->record = (sf->index << 40) + lineno;
    job->user = v[11] >= 0 ? lucid_import_string(imp, user) : -1;
    job->state = lucid_import_string(imp, status == -1 ? "UNKNOWN" : states[status]);
    return 0;
}

static int read_swf(lucid_import *imp, FILE *f, const char *path, int64_t file_index,
                    const swf_rules *r, const lucid_import_options *opt, int64_t *max_procs,
                    lucid_error *err)
{
    swf_file sf = {path, file_index, 0, opt->procs_per_gpu > 0 ? opt->procs_per_gpu : 1,
                   !opt->vc_by ? 0 : strcmp(opt->vc_by, "queue") == 0 ? 15 : 16};
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int rc = 0, got;
    while (rc == 0 && (got = lucid_import_line(f, &line, &cap, path, &lineno, err)) != 0) {
        if (got < 0 || lucid_import_check_text(line, path, lineno, NULL, err) < 0) {
            rc = -1;
            break;
        }
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == ';') {
            header_value(p, "UnixStartTime", &sf.epoch);
            header_value(p, "MaxProcs", max_procs);
        } else if (*p) {
            int64_t v[SWF_FIELDS];
            rc = parse_fields(p, v, path, lineno, err);
            if (rc == 0)
                rc = add_job(imp, &sf, lineno, v, r, err);
        }
    }
    free(line);
    return rc;
}

int lucid_import_swf(lucid_import *imp, const char *const *paths, int npaths,
                     const lucid_import_options *opt, lucid_error *err)
{
    if (opt->gpus_per_node > 0)
        imp->gpus_per_node = opt->gpus_per_node;
    swf_rules r = {
        lucid_import_rule_add(imp, "partial_execution", "status 2/3/4: a partial execution of a "
                                                        "checkpointed job; the job's own line "
                                                        "carries it"),
        lucid_import_rule_add(imp, "no_runtime", "run time unknown or < 1 s"),
        lucid_import_rule_add(imp, "no_processors", "allocated and requested processors unknown"),
    };
    int64_t max_procs = -1;
    for (int i = 0; i < npaths; i++) {
        FILE *f = fopen(paths[i], "r");
        if (!f)
            return lucid_error_set(err, "%s: cannot open", paths[i]);
        /* Several files: job ids offset by 10^9 per file after the first. */
        int rc = read_swf(imp, f, paths[i], i, &r, opt, &max_procs, err);
        fclose(f);
        if (rc < 0)
            return -1;
    }
    double ppg = opt->procs_per_gpu > 0 ? opt->procs_per_gpu : 1;
    int32_t nvcs = imp->vc_names ? lucid_strtab_count(imp->vc_names) : 0;
    if (nvcs == 1 && max_procs > 0) {
        int64_t gpus = (int64_t)((double)max_procs / ppg);
        gpus -= gpus % imp->gpus_per_node;
        imp->vc_gpus[0] = gpus;
        if (lucid_import_note(imp, "SWF: one VC of MaxProcs %lld / %g processors per GPU = %lld "
                                   "GPUs (whole nodes of %d)",
                              (long long)max_procs, ppg, (long long)gpus, imp->gpus_per_node) < 0)
            return lucid_error_set(err, "out of memory");
    }
    return lucid_import_note(imp, "SWF: GPUs = ceil(processors / %g); requested time kept as "
                                  "time_limit",
                             ppg) < 0
               ? lucid_error_set(err, "out of memory")
               : 0;
}
