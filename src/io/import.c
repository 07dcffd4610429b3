/* import.c — what every trace converter shares (import.h): the table of
 * formats, the job/rule/VC bookkeeping, the window, Lucid's workload
 * columns, and the writers of trace.csv, vc_config.csv and MANIFEST. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "lucid/import.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lucid/csv.h"

static const char helios_licence[] =
    "HeliosData (SenseTime / S-Lab, https://github.com/S-Lab-System-Group/HeliosData):\n"
    "Creative Commons Attribution 4.0 International (CC-BY-4.0),\n"
    "https://creativecommons.org/licenses/by/4.0/legalcode.  Cite: Qinghao Hu et al.,\n"
    "\"Characterization and Prediction of Deep Learning Workloads in Large-Scale GPU\n"
    "Datacenters\", SC'21.\n";
static const char sacct_licence[] =
    "Your own cluster's Slurm accounting: its licence is your site's. Users, accounts\n"
    "and partitions are copied as they are: anonymise before publishing.\n";
static const char itp_licence[] =
    "microsoft/elasticflow-traces (https://github.com/microsoft/elasticflow-traces):\n"
    "released under the MIT License and the Microsoft Open Source Code of Conduct; the\n"
    "data is Microsoft's ITP cluster log (Gu et al., \"ElasticFlow\", ASPLOS'23).\n";
static const char philly_licence[] =
    "msr-fiddle/philly-traces (https://github.com/msr-fiddle/philly-traces):\n"
    "Creative Commons Attribution 4.0 International (CC-BY-4.0) for the data. Cite:\n"
    "Myeongjae Jeon et al., \"Analysis of Large-Scale Multi-Tenant GPU Clusters for\n"
    "DNN Training Workloads\", USENIX ATC'19.\n";

static const char swf_licence[] =
    "Parallel Workloads Archive (https://www.cs.huji.ac.il/labs/parallel/workload/): the\n"
    "logs are free to use with acknowledgement of the log's source (its header's\n"
    "Acknowledge line) and of the archive: D. G. Feitelson, D. Tsafrir, D. Krakov, \"Experience\n"
    "with using the Parallel Workloads Archive\", JPDC 74(10), 2014.\n";
static const char pai_licence[] =
    "alibaba/clusterdata cluster-trace-gpu-v2020 (https://github.com/alibaba/clusterdata):\n"
    "the repository carries no licence file; Alibaba publishes the trace for research and\n"
    "asks users to cite Qizhen Weng et al., \"MLaaS in the Wild: Workload Analysis and\n"
    "Scheduling in Large-Scale Heterogeneous GPU Clusters\", NSDI'22.\n";
static const char acme_licence[] =
    "InternLM/AcmeTrace (https://github.com/InternLM/AcmeTrace; job traces on HuggingFace,\n"
    "Qinghao/AcmeTrace): released for academic purposes (the repository's README); cite\n"
    "Qinghao Hu et al., \"Characterization of Large Language Model Development in the\n"
    "Datacenter\", NSDI'24.\n";
static const char lucidd_licence[] =
    "Your own cluster's history as lucidd recorded it: its licence is your site's. Users\n"
    "are copied as they are: anonymise before publishing.\n";
const lucid_import_format lucid_import_formats[] = {
    {"helios", "HeliosData cluster_log.csv + cluster_gpu_number.csv (Venus, Earth, ...)",
     lucid_import_helios, helios_licence},
    {"sacct",
     "sacct --parsable2 --allocations --duplicates output [+ scontrol show node -o] "
     "(docs/traces.md)",
     lucid_import_sacct, sacct_licence},
    {"itp", "microsoft/elasticflow-traces raw CSVs (one file per cluster)", lucid_import_itp,
     itp_licence},
    {"philly", "msr-fiddle philly-traces cluster_job_log (JSON) [+ cluster_machine_list]",
     lucid_import_philly, philly_licence},
    {"acme", "InternLM AcmeTrace trace_seren.csv / trace_kalos.csv (one VC per cluster)",
     lucid_import_acme, acme_licence},
    {"pai2020", "Alibaba PAI: pai_job_table + pai_task_table [+ pai_machine_spec] (.csv)",
     lucid_import_pai, pai_licence},
    {"lucidd", "a live cluster's history: lucidd's state database (read-only)",
     lucid_import_lucidd, lucidd_licence},
    {"swf", "Standard Workload Format (Parallel Workloads Archive), processors -> GPUs",
     lucid_import_swf, swf_licence},
};
const size_t lucid_import_nformats = sizeof lucid_import_formats / sizeof lucid_import_formats[0];

const lucid_import_format *lucid_import_find(const char *name)
{
    for (size_t i = 0; i < lucid_import_nformats; i++)
        if (strcmp(lucid_import_formats[i].name, name) == 0)
            return &lucid_import_formats[i];
    return NULL;
}

void lucid_import_init(lucid_import *imp, const lucid_import_format *fmt)
{
    memset(imp, 0, sizeof *imp);
    imp->format = fmt ? fmt->name : "";
    imp->licence = fmt ? fmt->licence : "";
    imp->gpus_per_node = 8;
}

void lucid_import_free(lucid_import *imp)
{
    free(imp->jobs);
    free(imp->vc_gpus);
    free(imp->notes);
    free(imp->vc_derived);
    free(imp->vc_load);
    free(imp->slurm_accounts);
    lucid_strtab_free(imp->strings);
    lucid_strtab_free(imp->vc_names);
    memset(imp, 0, sizeof *imp);
}

int lucid_import_rule_add(lucid_import *imp, const char *name, const char *what)
{
    for (int i = 0; i < imp->nrules; i++)
        if (strcmp(imp->rules[i].name, name) == 0)
            return i;
    if (imp->nrules >= LUCID_IMPORT_MAX_RULES)
        return -1;
    imp->rules[imp->nrules] = (lucid_import_rule){name, what, 0};
    return imp->nrules++;
}

void lucid_import_count(lucid_import *imp, int rule)
{
    if (rule >= 0 && rule < imp->nrules)
        imp->rules[rule].removed++;
}

lucid_import_job *lucid_import_push(lucid_import *imp)
{
    if (LUCID_GROW(imp->jobs, imp->cap, imp->njobs + 1) < 0)
        return NULL;
    lucid_import_job *job = &imp->jobs[imp->njobs++];
    memset(job, 0, sizeof *job);
    job->user = job->state = job->gpu_type = job->source_id = -1;
    job->time_limit = -1;
    job->first_start = LUCID_IMPORT_NO_TIME;
    for (int k = 0; k < LUCID_IMPORT_WORKLOAD_COLS; k++)
        job->workload[k] = -1;
    return job;
}

int32_t lucid_import_vc(lucid_import *imp, const char *name, int64_t gpus)
{
    if (!imp->vc_names && !(imp->vc_names = lucid_strtab_new()))
        return -1;
    int32_t id = lucid_strtab_find(imp->vc_names, name);
    if (id >= 0)
        return id;
    id = lucid_strtab_intern(imp->vc_names, name);
    if (id < 0)
        return -1;
    if (id >= imp->vc_cap) {
        int32_t cap = imp->vc_cap ? imp->vc_cap * 2 : 16;
        int64_t *grown = realloc(imp->vc_gpus, (size_t)cap * sizeof *grown);
        if (!grown)
            return -1;
        imp->vc_gpus = grown;
        imp->vc_cap = cap;
    }
    imp->vc_gpus[id] = gpus;
    return id;
}

int32_t lucid_import_string(lucid_import *imp, const char *s)
{
    if (!s || !*s)
        return -1;
    if (!imp->strings && !(imp->strings = lucid_strtab_new()))
        return -1;
    return lucid_strtab_intern(imp->strings, s);
}

int lucid_import_note(lucid_import *imp, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t old = imp->notes ? strlen(imp->notes) : 0, add = strlen(line);
    char *grown = realloc(imp->notes, old + add + 2);
    if (!grown)
        return -1;
    memcpy(grown + old, line, add);
    grown[old + add] = '\n';
    grown[old + add + 1] = '\0';
    imp->notes = grown;
    return 0;
}

int lucid_import_check_text(const char *s, const char *file, long line, const char *field,
                            lucid_error *err)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2
                              : (*p & 0xF8) == 0xF0 ? 3 : -1;
        if (*p < 0x20 || *p == 0x7F)
            return lucid_error_at(err, file, line, field, "control character 0x%02x", *p);
        if (n < 0 || (n == 1 && *p < 0xC2))
            return lucid_error_at(err, file, line, field, "byte 0x%02x is not UTF-8", *p);
        for (int k = 1; k <= n; k++)
            if ((p[k] & 0xC0) != 0x80)
                return lucid_error_at(err, file, line, field, "byte 0x%02x is not UTF-8", *p);
        p += n + 1;
    }
    return 0;
}

int lucid_import_columns(const lucid_csv *csv, const char *const *names, int *cols, int n,
                         lucid_error *err)
{
    for (int i = 0; i < n; i++)
        if ((cols[i] = lucid_csv_col(csv, names[i])) < 0)
            return lucid_error_at(err, lucid_csv_name(csv), 1, names[i],
                                  "required column is missing");
    return 0;
}

int lucid_import_time(const char *s, int64_t *out, const char *file, long line, const char *field,
                      lucid_error *err)
{
    /* An offset after the clock time: "+08:00", "+0800", "+08", "Z". */
    char plain[32];
    size_t n = strlen(s);
    int64_t offset = 0;
    if (n > 19 && n < sizeof plain && (s[19] == '+' || s[19] == '-' || s[19] == 'Z')) {
        const char *z = s + 19, *p = z + 1;
        int digits[4], nd = 0;
        while (*p && nd < 4) {
            if (*p >= '0' && *p <= '9')
                digits[nd++] = *p - '0';
            else if (!(*p == ':' && nd == 2))
                break;
            p++;
        }
        int ok = *z == 'Z' ? !z[1] : !*p && (nd == 2 || nd == 4);
        int hh = nd >= 2 ? digits[0] * 10 + digits[1] : 0;
        int mm = nd == 4 ? digits[2] * 10 + digits[3] : 0;
        if (!ok || hh > 14 || mm > 59)
            return lucid_error_at(err, file, line, field, "'%s': bad UTC offset", s);
        offset = (*z == '-' ? -1 : 1) * (int64_t)(hh * 3600 + mm * 60);
        memcpy(plain, s, 19);
        plain[19] = '\0';
        s = plain;
    }
    if (lucid_time_parse(s, out) < 0)
        return lucid_error_at(err, file, line, field, "'%s' is not a time (YYYY-MM-DD HH:MM:SS)",
                              s);
    *out -= offset; /* local = UTC + offset */
    return 0;
}

/* `duration`, else end_time - start_time; -1 when neither is there (the job
 * never ran). */
int lucid_import_duration(const lucid_csv *csv, int dur, int start, int end, int64_t *out,
                        lucid_error *err)
{
    *out = -1;
    if (dur >= 0 && *lucid_csv_field(csv, dur)) {
        double d;
        if (lucid_csv_f64(csv, dur, &d, err) < 0)
            return -1;
        *out = (int64_t)d;
    } else if (start >= 0 && end >= 0 && *lucid_csv_field(csv, start) &&
               *lucid_csv_field(csv, end)) {
        int64_t t0, t1;
        const char *path = lucid_csv_name(csv);
        long line = lucid_csv_line(csv);
        if (lucid_import_time(lucid_csv_field(csv, start), &t0, path, line, "start_time", err) <
                0 ||
            lucid_import_time(lucid_csv_field(csv, end), &t1, path, line, "end_time", err) < 0)
            return -1;
        *out = t1 - t0;
    }
    return 0;
}

int lucid_import_line(FILE *f, char **line, size_t *cap, const char *path, long *lineno,
                      lucid_error *err)
{
    ssize_t got = getline(line, cap, f);
    if (got < 0)
        return ferror(f) ? lucid_error_set(err, "%s: read error", path) : 0;
    ++*lineno;
    if (strlen(*line) < (size_t)got)
        return lucid_error_at(err, path, *lineno, NULL, "NUL byte in the line");
    (*line)[strcspn(*line, "\r\n")] = '\0';
    return 1;
}

int lucid_import_split(char *line, char sep, char **fields, int max)
{
    int n = 0;
    fields[n++] = line;
    for (char *p = line; *p; p++)
        if (*p == sep) {
            *p = '\0';
            if (n == max)
                return -1;
            fields[n++] = p + 1;
        }
    return n;
}

void lucid_import_name_of(const char *path, const char *prefix, char *buf, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (prefix && strncmp(base, prefix, strlen(prefix)) == 0 && base[strlen(prefix)])
        base += strlen(prefix);
    snprintf(buf, size, "%s", base);
    char *dot = strrchr(buf, '.');
    if (dot && dot != buf)
        *dot = '\0';
}

/* ---------------- window, VC sizes ---------------- */

int lucid_import_set_vc_sizes(lucid_import *imp, const char *spec, lucid_error *err)
{
    char *copy = lucid_strdup(spec), *save = NULL;
    if (!copy)
        return lucid_error_set(err, "out of memory");
    int rc = 0;
    for (char *item = strtok_r(copy, ",", &save); item && rc == 0;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        int64_t gpus;
        int32_t v = -1;
        if (eq) {
            *eq = '\0';
            v = imp->vc_names ? lucid_strtab_find(imp->vc_names, item) : -1;
        }
        if (!eq || lucid_parse_i64(eq + 1, &gpus) < 0 || gpus < 0 ||
            gpus % imp->gpus_per_node != 0)
            rc = lucid_error_set(err, "--vc-size: '%s' is not NAME=GPUS in whole %d-GPU nodes",
                                 item, imp->gpus_per_node);
        else if (v < 0)
            rc = lucid_error_set(err, "--vc-size: no VC '%s' in the sources", item);
        else
            imp->vc_gpus[v] = gpus;
    }
    free(copy);
    if (rc == 0 && lucid_import_note(imp, "VC sizes set by --vc-size %s", spec) < 0)
        rc = lucid_error_set(err, "out of memory");
    return rc;
}

static int compare_job(const void *a, const void *b)
{
    const lucid_import_job *x = a, *y = b;
    if (x->submit != y->submit)
        return x->submit < y->submit ? -1 : 1;
    return x->record < y->record ? -1 : x->record > y->record; /* source order breaks ties */
}

static int compare_id(const void *a, const void *b)
{
    const lucid_import_job *x = a, *y = b;
    if (x->job_id != y->job_id)
        return x->job_id < y->job_id ? -1 : 1;
    return x->record < y->record ? -1 : x->record > y->record;
}

/* Removes the jobs that `rule_of` assigns a rule (>= 0), counting them. */
static void remove_jobs(lucid_import *imp, int (*rule_of)(const lucid_import *,
                                                         const lucid_import_job *, const void *),
                        const void *ctx)
{
    size_t kept = 0;
    for (size_t i = 0; i < imp->njobs; i++) {
        int rule = rule_of(imp, &imp->jobs[i], ctx);
        if (rule >= 0)
            lucid_import_count(imp, rule);
        else
            imp->jobs[kept++] = imp->jobs[i];
    }
    imp->njobs = kept;
}

typedef struct window_rules {
    const lucid_import_window *win;
    int before, after, early, no_vc;
} window_rules;

static int window_rule(const lucid_import *imp, const lucid_import_job *job, const void *ctx)
{
    const window_rules *r = ctx;
    return job->submit < r->win->since     ? r->before
           : job->submit >= r->win->until  ? r->after
           : job->submit < r->win->origin  ? r->early
           : imp->vc_gpus[job->vc] == 0    ? r->no_vc
                                           : -1;
}

static int oversized_rule(const lucid_import *imp, const lucid_import_job *job, const void *ctx)
{
    /* vc_config.csv holds whole nodes: what fits is nodes x node size. */
    int64_t usable = imp->vc_gpus[job->vc] / imp->gpus_per_node * imp->gpus_per_node;
    return job->gpu_num > usable ? *(const int *)ctx : -1;
}

/* Sizes the source does not give (LUCID_IMPORT_TARGET_LOAD): the fewest
 * whole nodes that hold the VC's largest job and keep its offered load at
 * most the target; every VC's offered load at its size into vc_load.  The
 * rule and each derived size with its load go to the MANIFEST notes (the
 * CLI warns with them). */
static int derive_sizes(lucid_import *imp, lucid_error *err)
{
    int32_t nvcs = imp->vc_names ? lucid_strtab_count(imp->vc_names) : 0;
    size_t n = (size_t)nvcs + 1;
    int64_t *largest = calloc(n, sizeof *largest), *first = malloc(n * sizeof *first),
            *last = malloc(n * sizeof *last);
    double *work = calloc(n, sizeof *work);
    free(imp->vc_derived);
    free(imp->vc_load);
    imp->vc_derived = calloc(n, 1);
    imp->vc_load = malloc(n * sizeof *imp->vc_load);
    int rc = largest && first && last && work && imp->vc_derived && imp->vc_load
                 ? 0
                 : lucid_error_set(err, "out of memory");
    for (int32_t v = 0; rc == 0 && v < nvcs; v++) {
        first[v] = INT64_MAX;
        last[v] = INT64_MIN;
    }
    for (size_t i = 0; rc == 0 && i < imp->njobs; i++) {
        const lucid_import_job *job = &imp->jobs[i];
        if (job->gpu_num > largest[job->vc])
            largest[job->vc] = job->gpu_num;
        work[job->vc] += (double)job->gpu_num * (double)job->duration;
        first[job->vc] = job->submit < first[job->vc] ? job->submit : first[job->vc];
        last[job->vc] = job->submit > last[job->vc] ? job->submit : last[job->vc];
    }
    int64_t node = imp->gpus_per_node;
    for (int32_t v = 0; rc == 0 && v < nvcs; v++) {
        /* GPUs the work needs per second of the window, NaN without one */
        double rate = last[v] > first[v] ? work[v] / (double)(last[v] - first[v]) : NAN;
        if (imp->vc_gpus[v] < 0) {
            int64_t nodes = (largest[v] + node - 1) / node;
            if (rate == rate) {
                double need = ceil(rate / LUCID_IMPORT_TARGET_LOAD / (double)node);
                if (need > (double)nodes)
                    nodes = need < 1e12 ? (int64_t)need : (int64_t)1e12;
            }
            imp->vc_gpus[v] = (nodes > 0 ? nodes : 1) * node;
            imp->vc_derived[v] = first[v] != INT64_MAX; /* (a VC without jobs is not written) */
        }
        imp->vc_load[v] = imp->vc_gpus[v] > 0 ? rate / (double)imp->vc_gpus[v] : NAN;
        if (rc == 0 && imp->vc_derived[v] &&
            lucid_import_note(imp, "VC %s: no size in the source: %lld GPUs by the sizing rule "
                                   "(largest job %lld GPUs; offered load %.2f at this size, nan: one submission time)",
                              lucid_strtab_get(imp->vc_names, v), (long long)imp->vc_gpus[v],
                              (long long)largest[v], imp->vc_load[v]) < 0)
            rc = lucid_error_set(err, "out of memory");
    }
    free(largest);
    free(first);
    free(last);
    free(work);
    return rc;
}

/* The simulator needs unique job ids: a repeat is the source's fault,
 * reported with both records. */
static int check_unique_ids(const lucid_import *imp, lucid_error *err)
{
    lucid_import_job *by_id = malloc(imp->njobs * sizeof *by_id);
    if (!by_id)
        return lucid_error_set(err, "out of memory");
    memcpy(by_id, imp->jobs, imp->njobs * sizeof *by_id);
    qsort(by_id, imp->njobs, sizeof *by_id, compare_id);
    int rc = 0;
    for (size_t i = 1; i < imp->njobs && rc == 0; i++)
        if (by_id[i].job_id == by_id[i - 1].job_id)
            rc = lucid_error_set(err, "import: job id %lld appears twice (records %lld and %lld)",
                                 (long long)by_id[i].job_id, (long long)by_id[i - 1].record,
                                 (long long)by_id[i].record);
    free(by_id);
    return rc;
}

int lucid_import_finish(lucid_import *imp, lucid_import_window *win, lucid_error *err)
{
    if (win->origin == INT64_MIN) {
        win->origin = imp->njobs ? INT64_MAX : 0;
        for (size_t i = 0; i < imp->njobs; i++)
            if (imp->jobs[i].submit < win->origin)
                win->origin = imp->jobs[i].submit;
    }
    window_rules w = {
        win,
        lucid_import_rule_add(imp, "before_since", "submitted before --since"),
        lucid_import_rule_add(imp, "after_until", "submitted at or after --until"),
        lucid_import_rule_add(imp, "before_origin", "submitted before --origin (trace times "
                                                    "cannot be negative)"),
        lucid_import_rule_add(imp, "vc_without_gpus",
                              "in a VC the source gives no GPUs for the window"),
    };
    int too_big = lucid_import_rule_add(imp, "larger_than_vc",
                                        "asks for more GPUs than its VC has (would never run)");
    if (too_big < 0)
        return lucid_error_set(err, "import: too many rules");
    remove_jobs(imp, window_rule, &w);
    if (derive_sizes(imp, err) < 0)
        return -1;
    remove_jobs(imp, oversized_rule, &too_big);
    if (imp->njobs == 0)
        return lucid_error_set(err, "import: no GPU jobs left after the rules");
    qsort(imp->jobs, imp->njobs, sizeof *imp->jobs, compare_job);
    return check_unique_ids(imp, err);
}

/* ---------------- workload columns ---------------- */

static const char *const workload_names[LUCID_IMPORT_WORKLOAD_COLS] = {
    "model", "dataset", "batchsize", "amp", "speed", "gpu_util", "gmem_util", "gmem"};

typedef struct ref_job {
    int64_t id, duration;
    int32_t fields[LUCID_IMPORT_WORKLOAD_COLS];
} ref_job;

static int compare_ref_id(const void *a, const void *b)
{
    const ref_job *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int compare_ref_duration(const void *a, const void *b)
{
    const ref_job *x = a, *y = b;
    if (x->duration != y->duration)
        return x->duration < y->duration ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The reference jobs that have a workload: id, duration, the 8 fields. */
static int load_reference(lucid_import *imp, const char *trace_path, ref_job **out, size_t *n,
                          lucid_error *err)
{
    *out = NULL;
    *n = 0;
    lucid_csv *csv = lucid_csv_open(trace_path, err);
    if (!csv)
        return -1;
    int cols[LUCID_IMPORT_WORKLOAD_COLS];
    int id_col = lucid_csv_col(csv, "job_id"), dur_col = lucid_csv_col(csv, "duration");
    int rc = 0;
    if (id_col < 0 || dur_col < 0)
        rc = lucid_error_at(err, trace_path, 1, id_col < 0 ? "job_id" : "duration",
                            "required column is missing");
    for (int k = 0; k < LUCID_IMPORT_WORKLOAD_COLS && rc == 0; k++)
        if ((cols[k] = lucid_csv_col(csv, workload_names[k])) < 0)
            rc = lucid_error_at(err, trace_path, 1, workload_names[k],
                                "required column is missing (--workload-from needs a trace "
                                "with Lucid's workload columns)");
    ref_job *refs = NULL;
    size_t nrefs = 0, cap = 0;
    int got = 0;
    while (rc == 0 && (got = lucid_csv_next(csv, err)) == 1) {
        if (!*lucid_csv_field(csv, cols[0]))
            continue; /* a job without a workload teaches nothing */
        if (LUCID_GROW(refs, cap, nrefs + 1) < 0) {
            rc = lucid_error_set(err, "out of memory");
            break;
        }
        ref_job *r = &refs[nrefs];
        if (lucid_csv_i64(csv, id_col, &r->id, err) < 0 ||
            lucid_csv_i64(csv, dur_col, &r->duration, err) < 0) {
            rc = -1;
            break;
        }
        for (int k = 0; k < LUCID_IMPORT_WORKLOAD_COLS; k++) {
            const char *s = lucid_csv_field(csv, cols[k]);
            r->fields[k] = *s ? lucid_import_string(imp, s) : -1;
            if (*s && r->fields[k] < 0)
                rc = lucid_error_set(err, "out of memory");
        }
        nrefs++;
    }
    if (got < 0)
        rc = -1;
    lucid_csv_close(csv);
    if (rc == 0 && nrefs == 0)
        rc = lucid_error_at(err, trace_path, 0, NULL, "no job with workload columns");
    if (rc < 0) {
        free(refs);
        return -1;
    }
    *out = refs;
    *n = nrefs;
    return 0;
}

int lucid_import_workload_from(lucid_import *imp, const char *trace_path, int sample,
                               uint64_t seed, lucid_error *err)
{
    ref_job *refs;
    size_t nrefs;
    if (load_reference(imp, trace_path, &refs, &nrefs, err) < 0)
        return -1;
    /* By id first: the Lucid authors attached one workload per real job. */
    qsort(refs, nrefs, sizeof *refs, compare_ref_id);
    size_t by_id = 0, sampled = 0, none = 0;
    unsigned char *done = calloc(imp->njobs + 1, 1);
    if (!done) {
        free(refs);
        return lucid_error_set(err, "out of memory");
    }
    for (size_t i = 0; i < imp->njobs; i++) {
        ref_job key = {.id = imp->jobs[i].job_id};
        const ref_job *r = bsearch(&key, refs, nrefs, sizeof *refs, compare_ref_id);
        if (r) {
            memcpy(imp->jobs[i].workload, r->fields, sizeof r->fields);
            done[i] = 1;
            by_id++;
        }
    }
    /* Otherwise the authors' way: a workload of a job of similar duration. */
    qsort(refs, nrefs, sizeof *refs, compare_ref_duration);
    lucid_rng rng;
    lucid_rng_seed(&rng, seed);
    for (size_t i = 0; i < imp->njobs; i++) {
        if (done[i])
            continue;
        if (!sample) {
            none++;
            continue;
        }
        size_t lo = 0, hi = nrefs;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (refs[mid].duration < imp->jobs[i].duration)
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t first = lo > 16 ? lo - 16 : 0, last = first + 32 < nrefs ? first + 32 : nrefs;
        if (last - first < 32 && nrefs >= 32)
            first = nrefs - 32;
        size_t pick = first + (size_t)lucid_rng_below(&rng, (uint64_t)(last - first));
        memcpy(imp->jobs[i].workload, refs[pick].fields, sizeof refs[pick].fields);
        sampled++;
    }
    free(done);
    free(refs);
    if (lucid_import_note(imp,
                          "workload columns from %s: %zu jobs by job id, %zu sampled among the "
                          "32 jobs nearest in duration (seed %llu), %zu left without (Lucid "
                          "does not pack those)",
                          trace_path, by_id, sampled, (unsigned long long)seed, none) < 0)
        return lucid_error_set(err, "out of memory");
    return 0;
}

/* ---------------- writers ---------------- */

static const char *str_or_empty(const lucid_import *imp, int32_t id)
{
    return id >= 0 && imp->strings ? lucid_strtab_get(imp->strings, id) : "";
}

int lucid_import_write_trace(const lucid_import *imp, const lucid_import_window *win, FILE *out)
{
    int has_limit = 0, has_type = 0, has_workload = 0, has_source = 0, has_runs = 0;
    for (size_t i = 0; i < imp->njobs; i++) {
        has_source |= imp->jobs[i].source_id >= 0;
        has_runs |= imp->jobs[i].first_start != LUCID_IMPORT_NO_TIME;
        has_limit |= imp->jobs[i].time_limit >= 0;
        has_type |= imp->jobs[i].gpu_type >= 0;
        for (int k = 0; k < LUCID_IMPORT_WORKLOAD_COLS; k++)
            has_workload |= imp->jobs[i].workload[k] >= 0;
    }
    fputs("job_id,user,vc,gpu_num,cpu_num,state,submit_time,duration", out);
    if (has_limit)
        fputs(",time_limit", out);
    if (has_type)
        fputs(",gpu_type", out);
    if (has_runs)
        fputs(",first_start,earlier_runs", out);
    if (has_workload)
        for (int k = 0; k < LUCID_IMPORT_WORKLOAD_COLS; k++)
            fprintf(out, ",%s", workload_names[k]);
    fputs(",submit_datetime", out);
    fputs(has_source ? ",source_id\n" : "\n", out);
    for (size_t i = 0; i < imp->njobs; i++) {
        const lucid_import_job *job = &imp->jobs[i];
        fprintf(out, "%lld,", (long long)job->job_id);
        lucid_csv_write_field(out, str_or_empty(imp, job->user));
        fputc(',', out);
        lucid_csv_write_field(out, lucid_strtab_get(imp->vc_names, job->vc));
        fprintf(out, ",%d,%d,", job->gpu_num, job->cpu_num);
        lucid_csv_write_field(out, str_or_empty(imp, job->state));
        fprintf(out, ",%lld,%lld", (long long)(job->submit - win->origin),
                (long long)job->duration);
        if (has_limit) {
            if (job->time_limit >= 0)
                fprintf(out, ",%lld", (long long)job->time_limit);
            else
                fputc(',', out);
        }
        if (has_type) {
            fputc(',', out);
            lucid_csv_write_field(out, str_or_empty(imp, job->gpu_type));
        }
        if (has_runs && job->first_start != LUCID_IMPORT_NO_TIME)
            fprintf(out, ",%lld,%lld", (long long)(job->first_start - win->origin),
                    (long long)job->earlier_runs);
        else if (has_runs)
            fputs(",,", out);
        if (has_workload)
            for (int k = 0; k < LUCID_IMPORT_WORKLOAD_COLS; k++) {
                fputc(',', out);
                lucid_csv_write_field(out, str_or_empty(imp, job->workload[k]));
            }
        char when[32];
        lucid_time_format(job->submit, when, sizeof when);
        fprintf(out, ",%s", when);
        if (has_source) {
            fputc(',', out);
            lucid_csv_write_field(out, str_or_empty(imp, job->source_id));
        }
        fputc('\n', out);
    }
    return ferror(out) ? -1 : 0;
}

/* VCs with at least one job, in the source's order. */
int lucid_import_write_vcs(const lucid_import *imp, FILE *out)
{
    int32_t nvcs = lucid_strtab_count(imp->vc_names);
    unsigned char *used = calloc((size_t)nvcs + 1, 1);
    if (!used)
        return -1;
    for (size_t i = 0; i < imp->njobs; i++)
        used[imp->jobs[i].vc] = 1;
    fputs("vc,nodes\n", out);
    for (int32_t v = 0; v < nvcs; v++)
        if (used[v]) {
            lucid_csv_write_field(out, lucid_strtab_get(imp->vc_names, v));
            fprintf(out, ",%lld\n", (long long)(imp->vc_gpus[v] / imp->gpus_per_node));
        }
    free(used);
    return ferror(out) ? -1 : 0;
}

/* Every LICENSE* / COPYING* file in the source's folder, verbatim. */
static void copy_licences(const char *source, FILE *out, int *copied)
{
    char dir[PATH_MAX], path[PATH_MAX + 256];
    snprintf(dir, sizeof dir, "%s", source);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    DIR *d = opendir(dir);
    if (!d)
        return;
    char *names[16];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 16)
        if (strncmp(e->d_name, "LICENSE", 7) == 0 || strncmp(e->d_name, "LICENCE", 7) == 0 ||
            strncmp(e->d_name, "COPYING", 7) == 0)
            names[n++] = lucid_strdup(e->d_name);
    closedir(d);
    /* readdir order is the file system's: sort for a stable MANIFEST. */
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && names[k] && names[k - 1] && strcmp(names[k - 1], names[k]) > 0; k--) {
            char *t = names[k];
            names[k] = names[k - 1];
            names[k - 1] = t;
        }
    for (int i = 0; i < n; i++) {
        if (!names[i])
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "rb");
        if (f) {
            fprintf(out, "\n--- %s ---\n", names[i]);
            char buf[8192];
            size_t got;
            while ((got = fread(buf, 1, sizeof buf, f)) > 0)
                fwrite(buf, 1, got, out);
            fclose(f);
            (*copied)++;
        }
        free(names[i]);
    }
}

static void *hash_sources(void *arg)
{
    lucid_source_hashes *h = arg;
    h->rc = 0;
    for (int i = 0; i < h->n && h->rc == 0; i++)
        h->rc = lucid_sha256_file(h->paths[i], h->hex[i], &h->size[i], &h->err);
    return NULL;
}

int lucid_source_hashes_start(lucid_source_hashes *h, const char *const *paths, int n)
{
    memset(h, 0, sizeof *h);
    /* A pipe (`<(zcat log.gz)`) can be read once only, by the converter. */
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0 || !S_ISREG(st.st_mode))
            return -1;
    }
    h->paths = paths;
    h->n = n;
    h->hex = calloc((size_t)n + 1, sizeof *h->hex);
    h->size = calloc((size_t)n + 1, sizeof *h->size);
    pthread_t *t = malloc(sizeof *t);
    if (!h->hex || !h->size || !t || pthread_create(t, NULL, hash_sources, h) != 0) {
        free(t);
        lucid_source_hashes_free(h);
        return -1;
    }
    h->thread = t;
    h->running = 1;
    return 0;
}

int lucid_source_hashes_wait(lucid_source_hashes *h, lucid_error *err)
{
    if (h->running) {
        pthread_join(*(pthread_t *)h->thread, NULL);
        h->running = 0;
    }
    if (h->rc < 0 && err)
        *err = h->err;
    return h->rc;
}

void lucid_source_hashes_free(lucid_source_hashes *h)
{
    lucid_source_hashes_wait(h, NULL);
    free(h->hex);
    free(h->size);
    free(h->thread);
    h->hex = NULL;
    h->size = NULL;
    h->thread = NULL;
}

int lucid_import_write_manifest(const lucid_import *imp, const lucid_import_window *win,
                                const char *command, const char *const *paths, int npaths,
                                const lucid_source_hashes *hashes, FILE *out, lucid_error *err)
{
    char when[32];
    fprintf(out, "# MANIFEST of a trace folder written by lucid trace import\n");
    fprintf(out, "command: %s\n", command);
    fprintf(out, "format: %s\n", imp->format);
    for (int i = 0; i < npaths; i++) {
        char hex[65], real[PATH_MAX];
        int64_t size;
        struct stat st;
        const char *name = realpath(paths[i], real) ? real : paths[i];
        if (stat(paths[i], &st) == 0 && !S_ISREG(st.st_mode)) {
            /* A pipe was consumed by the converter: hashing it now would
             * record the empty stream's checksum. */
            fprintf(out, "source: %s sha256=- bytes=- (not a regular file: read once, not hashed)\n",
                    name);
            continue;
        }
        if (hashes && hashes->hex && i < hashes->n) {
            memcpy(hex, hashes->hex[i], sizeof hex);
            size = hashes->size[i];
        } else if (lucid_sha256_file(paths[i], hex, &size, err) < 0) {
            return -1;
        }
        fprintf(out, "source: %s sha256=%s bytes=%lld\n", name, hex, (long long)size);
    }
    lucid_time_format(win->origin, when, sizeof when);
    fprintf(out, "origin: %s (trace second 0)\n", when);
    if (win->since != INT64_MIN) {
        lucid_time_format(win->since, when, sizeof when);
        fprintf(out, "since: %s\n", when);
    }
    if (win->until != INT64_MAX) {
        lucid_time_format(win->until, when, sizeof when);
        fprintf(out, "until: %s\n", when);
    }
    fprintf(out, "records_read: %lld\n", (long long)imp->records);
    int64_t removed = 0;
    for (int i = 0; i < imp->nrules; i++) {
        fprintf(out, "rule: %s removed=%lld: %s\n", imp->rules[i].name,
                (long long)imp->rules[i].removed, imp->rules[i].what);
        removed += imp->rules[i].removed;
    }
    int32_t nvcs = lucid_strtab_count(imp->vc_names);
    unsigned char *used = calloc((size_t)nvcs + 1, 1);
    if (!used)
        return lucid_error_set(err, "out of memory");
    int64_t gpu_jobs_gpus = 0;
    for (size_t i = 0; i < imp->njobs; i++) {
        used[imp->jobs[i].vc] = 1;
        gpu_jobs_gpus += imp->jobs[i].gpu_num;
    }
    int64_t vcs = 0, nodes = 0;
    for (int32_t v = 0; v < nvcs; v++)
        if (used[v]) {
            vcs++;
            nodes += imp->vc_gpus[v] / imp->gpus_per_node;
        }
    free(used);
    fprintf(out, "jobs_removed: %lld\n", (long long)removed);
    fprintf(out, "jobs_written: %zu\n", imp->njobs);
    fprintf(out, "gpus_requested: %lld\n", (long long)gpu_jobs_gpus);
    fprintf(out, "vcs: %lld\nnodes: %lld\ngpus_per_node: %d\n", (long long)vcs, (long long)nodes,
            imp->gpus_per_node);
    if (imp->notes)
        fprintf(out, "\n# notes\n%s", imp->notes);
    fprintf(out, "\n# licence of the source\n%s", imp->licence);
    int copied = 0;
    for (int i = 0; i < npaths; i++)
        if (i == 0 || strcmp(paths[i], paths[i - 1]) != 0)
            copy_licences(paths[i], out, &copied);
    (void)copied;
    return ferror(out) ? lucid_error_set(err, "MANIFEST: write error") : 0;
}

/* ---------------- SHA-256 (FIPS 180-4) ---------------- */

typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t bytes;
    unsigned char block[64];
    size_t fill;
} sha256_ctx;

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(sha256_ctx *c, const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3], e = c->h[4], f = c->h[5],
             g = c->h[6], h = c->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                      sha256_k[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = cc;
        cc = b;
        b = a;
        a = t1 + t2;
    }
    c->h[0] += a;
    c->h[1] += b;
    c->h[2] += cc;
    c->h[3] += d;
    c->h[4] += e;
    c->h[5] += f;
    c->h[6] += g;
    c->h[7] += h;
}

static void sha256_init(sha256_ctx *c)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, h0, sizeof h0);
    c->bytes = 0;
    c->fill = 0;
}

static void sha256_update(sha256_ctx *c, const unsigned char *p, size_t n)
{
    c->bytes += n;
    while (n > 0) {
        size_t take = 64 - c->fill < n ? 64 - c->fill : n;
        memcpy(c->block + c->fill, p, take);
        c->fill += take;
        p += take;
        n -= take;
        if (c->fill == 64) {
            sha256_block(c, c->block);
            c->fill = 0;
        }
    }
}

static void sha256_final(sha256_ctx *c, char hex[65])
{
    uint64_t bits = c->bytes * 8;
    unsigned char pad = 0x80, zero = 0, len[8];
    sha256_update(c, &pad, 1);
    while (c->fill != 56)
        sha256_update(c, &zero, 1);
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(bits >> (56 - 8 * i));
    sha256_update(c, len, 8);
    for (int i = 0; i < 8; i++)
        snprintf(hex + 8 * i, 9, "%08x", c->h[i]);
}

void lucid_sha256_hex(const void *data, size_t len, char hex[65])
{
    sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, data, len);
    sha256_final(&c, hex);
}

int lucid_sha256_file(const char *path, char hex[65], int64_t *size, lucid_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return lucid_error_set(err, "%s: cannot open: %s", path, strerror(errno));
    sha256_ctx c;
    sha256_init(&c);
    unsigned char buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        sha256_update(&c, buf, got);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return lucid_error_set(err, "%s: read error", path);
    *size = (int64_t)c.bytes;
    sha256_final(&c, hex);
    return 0;
}
