/* import_pai.c — Alibaba PAI (NSDI'22 "MLaaS in the Wild"),
 * alibaba/clusterdata cluster-trace-gpu-v2020: pai_job_table.csv,
 * pai_task_table.csv and optionally pai_machine_spec.csv, told apart by
 * file name.  The tables have no header row (the columns are in separate
 * .header files); a first row equal to the header is skipped.
 *
 *   job:     job_name, inst_id, user, status, start_time, end_time
 *   task:    job_name, task_name, inst_num, status, start_time, end_time,
 *            plan_cpu, plan_mem, plan_gpu, gpu_type
 *   machine: machine, gpu_type, cap_cpu, cap_mem, cap_gpu
 *
 * Rules (docs/traces.md): tasks join their job by job_name; a job asks for
 * the sum over its tasks of inst_num x ceil(plan_gpu / 100) GPUs (plan_gpu
 * is a percentage of one GPU: PAI shares GPUs, the simulator gives each
 * instance whole GPUs, so 50 becomes 1); submit = the job's start_time (its
 * submission), duration = last task end - first task start; Terminated and
 * Failed are kept, Running (still_running) and Waiting (never_started)
 * removed; jobs without tasks, GPUs or times removed.  VCs are GPU types
 * (a job's tasks' types joined by '+'), sized from pai_machine_spec (the
 * GPUs of that type's machines, whole nodes).  Times are seconds with a
 * constant removed; + 8 h gives Asia/Shanghai's time of day and weekday
 * (the trace's README), which is what the calendar columns show. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/csv.h"
#include "lucid/import.h"

#define PAI_TZ_OFFSET (8 * 3600)
#define PAI_MAX_FIELDS 12
#define PAI_MAX_TYPES 4

typedef struct pai_job {
    int64_t record, submit, end, first_start, last_end, gpus;
    int32_t user, status, source_id, ntasks;
    int32_t types[PAI_MAX_TYPES];
    int ntypes, has_times, bad_times;
} pai_job;

typedef struct pai_state {
    lucid_strtab *names; /* job_name -> index into jobs */
    pai_job *jobs;
    size_t njobs, cap;
    int64_t orphan_tasks;
} pai_state;

/* "4550879.0" -> seconds; "" or "nan" -> absent (0). */
static int seconds(const char *s, int64_t *out, int *present)
{
    double v;
    *present = 0;
    if (!*s || strcmp(s, "nan") == 0 || strcmp(s, "NaN") == 0)
        return 0;
    if (lucid_parse_f64(s, &v) < 0 || !isfinite(v) || v < 0 || v > 1e12)
        return -1;
    *out = (int64_t)llround(v);
    *present = 1;
    return 0;
}

typedef int (*row_fn)(lucid_import *imp, pai_state *st, char **f, const char *path, long line,
                      lucid_error *err);

static int job_row(lucid_import *imp, pai_state *st, char **f, const char *path, long line,
                   lucid_error *err)
{
    for (int k = 0; k < 4; k++)
        if (lucid_import_check_text(f[k], path, line, k == 0 ? "job_name" : k == 2 ? "user"
                                                               : k == 3 ? "status" : "inst_id",
                                    err) < 0)
            return -1;
    if (!*f[0])
        return lucid_error_at(err, path, line, "job_name", "empty");
    static const char *const known[] = {"Terminated", "Failed", "Running", "Waiting"};
    int status = -1;
    for (int k = 0; k < 4; k++)
        if (strcmp(f[3], known[k]) == 0)
            status = k;
    if (status < 0)
        return lucid_error_at(err, path, line, "status",
                              "unknown status '%s' (PAI has Terminated, Failed, Running, Waiting)",
                              f[3]);
    if (lucid_strtab_find(st->names, f[0]) >= 0)
        return lucid_error_at(err, path, line, "job_name", "job '%s' listed twice", f[0]);
    int32_t id = lucid_strtab_intern(st->names, f[0]);
    if (id < 0 || LUCID_GROW(st->jobs, st->cap, (size_t)id + 1) < 0)
        return lucid_error_set(err, "out of memory");
    pai_job *job = &st->jobs[id];
    memset(job, 0, sizeof *job);
    st->njobs = (size_t)id + 1;
    job->record = line;
    job->status = status;
    int present, end_present;
    if (seconds(f[4], &job->submit, &present) < 0)
        return lucid_error_at(err, path, line, "start_time", "'%s' is not seconds", f[4]);
    if (seconds(f[5], &job->end, &end_present) < 0)
        return lucid_error_at(err, path, line, "end_time", "'%s' is not seconds", f[5]);
    job->bad_times = !present;
    job->user = lucid_import_string(imp, f[2]);
    job->source_id = lucid_import_string(imp, f[0]);
    if ((*f[2] && job->user < 0) || job->source_id < 0)
        return lucid_error_set(err, "out of memory");
    imp->records++;
    return 0;
}

static int task_row(lucid_import *imp, pai_state *st, char **f, const char *path, long line,
                    lucid_error *err)
{
    if (lucid_import_check_text(f[0], path, line, "job_name", err) < 0 ||
        lucid_import_check_text(f[9], path, line, "gpu_type", err) < 0)
        return -1;
    int32_t id = lucid_strtab_find(st->names, f[0]);
    if (id < 0) {
        st->orphan_tasks++; /* the job table may be a different cut */
        return 0;
    }
    pai_job *job = &st->jobs[id];
    double inst = 0, plan = 0;
    if (lucid_parse_f64(f[2], &inst) < 0 || !isfinite(inst) || inst < 0 || inst > 1e6)
        return lucid_error_at(err, path, line, "inst_num", "'%s' is not a count", f[2]);
    if (*f[8] && strcmp(f[8], "nan") != 0 &&
        (lucid_parse_f64(f[8], &plan) < 0 || !isfinite(plan) || plan < 0 || plan > 1e5))
        return lucid_error_at(err, path, line, "plan_gpu", "'%s' is not a percentage", f[8]);
    int64_t start = 0, end = 0; /* set when has_start, has_end */
    int has_start, has_end;
    if (seconds(f[4], &start, &has_start) < 0)
        return lucid_error_at(err, path, line, "start_time", "'%s' is not seconds", f[4]);
    if (seconds(f[5], &end, &has_end) < 0)
        return lucid_error_at(err, path, line, "end_time", "'%s' is not seconds", f[5]);
    job->ntasks++;
    /* Each instance gets whole GPUs: ceil(plan / 100). */
    job->gpus += (int64_t)llround(inst) * (int64_t)ceil(plan / 100.0 - 1e-9);
    if (!has_start || !has_end)
        job->bad_times = 1;
    else if (!job->has_times) {
        job->first_start = start;
        job->last_end = end;
        job->has_times = 1;
    } else {
        job->first_start = start < job->first_start ? start : job->first_start;
        job->last_end = end > job->last_end ? end : job->last_end;
    }
    if (plan > 0 && *f[9]) {
        int32_t t = lucid_import_string(imp, f[9]);
        if (t < 0)
            return lucid_error_set(err, "out of memory");
        int seen = 0;
        for (int k = 0; k < job->ntypes; k++)
            seen |= job->types[k] == t;
        if (!seen && job->ntypes < PAI_MAX_TYPES)
            job->types[job->ntypes++] = t;
    }
    return 0;
}

static int machine_row(lucid_import *imp, pai_state *st, char **f, const char *path, long line,
                       lucid_error *err)
{
    (void)st;
    double gpus;
    if (lucid_parse_f64(f[4], &gpus) < 0 || gpus < 0 || gpus > 1024)
        return lucid_error_at(err, path, line, "cap_gpu", "'%s' is not a GPU count", f[4]);
    if (gpus == 0)
        return 0;
    if (lucid_import_check_text(f[1], path, line, "gpu_type", err) < 0)
        return -1;
    int32_t v = lucid_import_vc(imp, f[1], 0);
    if (v < 0)
        return lucid_error_set(err, "out of memory");
    if (imp->vc_gpus[v] < 0)
        imp->vc_gpus[v] = 0;
    imp->vc_gpus[v] += (int64_t)gpus;
    return 0;
}

static int read_table(lucid_import *imp, pai_state *st, const char *path, int nfields,
                      const char *header, row_fn fn, lucid_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return lucid_error_set(err, "%s: cannot open", path);
    char *line = NULL, *fields[PAI_MAX_FIELDS + 1];
    size_t cap = 0;
    long lineno = 0;
    int rc = 0, got;
    while (rc == 0 && (got = lucid_import_line(f, &line, &cap, path, &lineno, err)) != 0) {
        if (got < 0) {
            rc = -1;
            break;
        }
        if (!*line || (lineno == 1 && strcmp(line, header) == 0))
            continue;
        int n = lucid_import_split(line, ',', fields, PAI_MAX_FIELDS);
        if (n != nfields) {
            rc = lucid_error_at(err, path, lineno, NULL, "expected %d fields (%s), found %s%d",
                                nfields, header, n < 0 ? "more than " : "",
                                n < 0 ? PAI_MAX_FIELDS : n);
            break;
        }
        rc = fn(imp, st, fields, path, lineno, err);
    }
    free(line);
    fclose(f);
    return rc;
}

static int finish_jobs(lucid_import *imp, pai_state *st, int have_machines, lucid_error *err)
{
    int running = lucid_import_rule_add(imp, "still_running", "status Running");
    int waiting = lucid_import_rule_add(imp, "never_started", "status Waiting");
    int no_task = lucid_import_rule_add(imp, "no_task", "no row in pai_task_table");
    int no_times = lucid_import_rule_add(imp, "no_times", "a start_time or end_time missing");
    int cpu_only = lucid_import_rule_add(imp, "cpu_only", "no task asks for a GPU");
    int zero = lucid_import_rule_add(imp, "zero_duration", "last task end - first task start < 1 s");
    for (size_t i = 0; i < st->njobs; i++) {
        const pai_job *j = &st->jobs[i];
        int rule = j->status == 2 ? running : j->status == 3 ? waiting : j->ntasks == 0 ? no_task
                   : j->bad_times || !j->has_times                          ? no_times
                   : j->gpus == 0                                           ? cpu_only
                   : j->last_end - j->first_start < 1                       ? zero
                                                                            : -1;
        if (rule >= 0) {
            lucid_import_count(imp, rule);
            continue;
        }
        if (j->gpus > (1 << 20))
            return lucid_error_set(err, "pai: job record %lld asks for %lld GPUs",
                                   (long long)j->record, (long long)j->gpus);
        char vc[256] = "";
        for (int k = 0; k < j->ntypes; k++) {
            size_t used = strlen(vc);
            snprintf(vc + used, sizeof vc - used, "%s%s", k ? "+" : "",
                     lucid_strtab_get(imp->strings, j->types[k]));
        }
        if (!*vc)
            snprintf(vc, sizeof vc, "untyped");
        lucid_import_job *job = lucid_import_push(imp);
        int32_t v = job ? lucid_import_vc(imp, vc, have_machines ? 0 : -1) : -1;
        int32_t state = lucid_import_string(imp, j->status == 0 ? "Terminated" : "Failed");
        if (!job || v < 0 || state < 0)
            return lucid_error_set(err, "out of memory");
        job->job_id = j->record;
        job->submit = j->submit + PAI_TZ_OFFSET;
        job->duration = j->last_end - j->first_start;
        job->gpu_num = (int32_t)j->gpus;
        job->vc = v;
        job->user = j->user;
        job->state = state;
        job->source_id = j->source_id;
        job->gpu_type = lucid_import_string(imp, vc);
        job->record = j->record;
    }
    return 0;
}

int lucid_import_pai(lucid_import *imp, const char *const *paths, int npaths,
                     const lucid_import_options *opt, lucid_error *err)
{
    if (opt->gpus_per_node > 0)
        imp->gpus_per_node = opt->gpus_per_node;
    const char *jobs = NULL, *tasks = NULL, *machines = NULL;
    for (int i = 0; i < npaths; i++) {
        const char *base = strrchr(paths[i], '/');
        base = base ? base + 1 : paths[i];
        const char **slot = strstr(base, "job_table")      ? &jobs
                            : strstr(base, "task_table")   ? &tasks
                            : strstr(base, "machine_spec") ? &machines
                                                           : NULL;
        if (!slot)
            return lucid_error_set(err, "%s: not a PAI table (the name must contain job_table, "
                                        "task_table or machine_spec)",
                                   paths[i]);
        if (*slot)
            return lucid_error_set(err, "pai: %s and %s are the same table", *slot, paths[i]);
        *slot = paths[i];
    }
    if (!jobs || !tasks)
        return lucid_error_set(err, "pai: needs pai_job_table.csv and pai_task_table.csv");
    pai_state st = {0};
    st.names = lucid_strtab_new();
    if (!st.names)
        return lucid_error_set(err, "out of memory");
    int rc = 0;
    if (machines)
        rc = read_table(imp, &st, machines, 5, "machine,gpu_type,cap_cpu,cap_mem,cap_gpu",
                        machine_row, err);
    if (rc == 0)
        rc = read_table(imp, &st, jobs, 6, "job_name,inst_id,user,status,start_time,end_time",
                        job_row, err);
    if (rc == 0)
        rc = read_table(imp, &st, tasks, 10,
                        "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,"
                        "plan_mem,plan_gpu,gpu_type",
                        task_row, err);
    if (rc == 0)
        rc = finish_jobs(imp, &st, machines != NULL, err);
    if (rc == 0 && machines) {
        /* Whole nodes: a type's GPUs rounded down to the node size. */
        int32_t nvcs = lucid_strtab_count(imp->vc_names);
        for (int32_t v = 0; v < nvcs; v++)
            if (imp->vc_gpus[v] > 0)
                imp->vc_gpus[v] -= imp->vc_gpus[v] % imp->gpus_per_node;
        rc = lucid_import_note(imp, "PAI: VCs are GPU types sized from %s (whole %d-GPU nodes); "
                                    "jobs whose tasks mix types get a VC of their own (0 GPUs)",
                               machines, imp->gpus_per_node);
    }
    if (rc == 0)
        rc = lucid_import_note(imp, "PAI: GPUs = sum of inst_num x ceil(plan_gpu / 100); times + 8 h "
                                    "(Asia/Shanghai wall clock, fake dates); job id = row of "
                                    "pai_job_table, job_name in source_id; %lld task rows "
                                    "without a job",
                               (long long)st.orphan_tasks);
    free(st.jobs);
    lucid_strtab_free(st.names);
    return rc < 0 ? (err->msg[0] ? -1 : lucid_error_set(err, "out of memory")) : 0;
}
