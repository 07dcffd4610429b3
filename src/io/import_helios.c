/* import_helios.c — HeliosData (SC'21): cluster_log.csv, one row per Slurm
 * job, and cluster_gpu_number.csv, GPUs per VC per day.
 *
 * Rules (docs/traces.md): CPU-only jobs (gpu_num 0) and jobs that never ran
 * (duration < 1 s) are removed and counted; the five documented states are
 * kept (the Lucid authors simulate cancelled and failed jobs too: they held
 * GPUs); any other state is an error.  A VC's size is the most frequent
 * daily GPU count over the days the kept jobs were submitted on (ties: the
 * larger) — on Venus September this gives exactly Lucid's vc_config.csv,
 * where the first or last day would not (vcJsw grew from 200 to 256 GPUs on
 * Sept 4, vcKeu shrank from 96 to 88 on Sept 23). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lucid/csv.h"
#include "lucid/import.h"

static const char *const helios_states[] = {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT",
                                            "NODE_FAIL"};

static int known_state(const char *s)
{
    for (size_t i = 0; i < sizeof helios_states / sizeof helios_states[0]; i++)
        if (strcmp(s, helios_states[i]) == 0)
            return 1;
    return 0;
}

static int text_field(lucid_import *imp, const lucid_csv *csv, int col, int32_t *out,
                      lucid_error *err)
{
    const char *s = lucid_csv_field(csv, col);
    if (lucid_import_check_text(s, lucid_csv_name(csv), lucid_csv_line(csv),
                                lucid_csv_header(csv, col), err) < 0)
        return -1;
    *out = lucid_import_string(imp, s);
    if (*s && *out < 0)
        return lucid_error_set(err, "out of memory");
    return 0;
}

static int read_log(lucid_import *imp, const char *path, int64_t record_base, lucid_error *err)
{
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    static const char *const names[] = {"job_id", "user", "vc", "gpu_num", "state", "submit_time"};
    int c[6];
    int rc = lucid_import_columns(csv, names, c, 6, err);
    int cpu = lucid_csv_col(csv, "cpu_num"), dur = lucid_csv_col(csv, "duration");
    int start = lucid_csv_col(csv, "start_time"), end = lucid_csv_col(csv, "end_time");
    if (rc == 0 && dur < 0 && (start < 0 || end < 0))
        rc = lucid_error_at(err, path, 1, "duration",
                            "required column is missing (or start_time and end_time)");
    int cpu_only = lucid_import_rule_add(imp, "cpu_only", "gpu_num = 0: CPU jobs, which GPU "
                                                          "schedulers never see");
    int never_ran = lucid_import_rule_add(imp, "zero_duration",
                                          "duration < 1 s or no times: never ran");
    int got = 0;
    while (rc == 0 && (got = lucid_csv_next(csv, err)) == 1) {
        long line = lucid_csv_line(csv);
        imp->records++;
        int64_t id, gpus, cpus = 0, submit, duration;
        if (lucid_csv_i64(csv, c[0], &id, err) < 0 || lucid_csv_i64(csv, c[3], &gpus, err) < 0) {
            rc = -1;
            break;
        }
        if (gpus < 0 || gpus > (1 << 20)) {
            rc = lucid_error_at(err, path, line, "gpu_num", "%lld out of range 0..1048576",
                                (long long)gpus);
            break;
        }
        const char *state = lucid_csv_field(csv, c[4]);
        if (!known_state(state)) {
            rc = lucid_error_at(err, path, line, "state",
                                "unknown state '%s' (HeliosData has COMPLETED, CANCELLED, "
                                "FAILED, TIMEOUT, NODE_FAIL)",
                                state);
            break;
        }
        if (lucid_import_time(lucid_csv_field(csv, c[5]), &submit, path, line, "submit_time",
                              err) < 0) {
            rc = -1;
            break;
        }
        if (lucid_import_duration(csv, dur, start, end, &duration, err) < 0) {
            rc = -1;
            break;
        }
        if (cpu >= 0 && *lucid_csv_field(csv, cpu) &&
            (lucid_csv_i64(csv, cpu, &cpus, err) < 0 || cpus < 0 || cpus > (1 << 24))) {
            rc = cpus < 0 || cpus > (1 << 24)
                     ? lucid_error_at(err, path, line, "cpu_num", "%lld out of range",
                                      (long long)cpus)
                     : -1;
            break;
        }
        if (gpus == 0) {
            lucid_import_count(imp, cpu_only);
            continue;
        }
        if (duration < 1) {
            lucid_import_count(imp, never_ran);
            continue;
        }
        const char *vc = lucid_csv_field(csv, c[2]);
        if (lucid_import_check_text(vc, path, line, "vc", err) < 0) {
            rc = -1;
            break;
        }
        if (!*vc) {
            rc = lucid_error_at(err, path, line, "vc", "empty VC name");
            break;
        }
        lucid_import_job *job = lucid_import_push(imp);
        int32_t v = job ? lucid_import_vc(imp, vc, -1) : -1;
        if (!job || v < 0) {
            rc = lucid_error_set(err, "out of memory");
            break;
        }
        job->job_id = id;
        job->submit = submit;
        job->duration = duration;
        job->gpu_num = (int32_t)gpus;
        job->cpu_num = (int32_t)cpus;
        job->vc = v;
        job->record = record_base + line;
        if (text_field(imp, csv, c[1], &job->user, err) < 0 ||
            text_field(imp, csv, c[4], &job->state, err) < 0) {
            rc = -1;
            break;
        }
    }
    if (got < 0)
        rc = -1;
    lucid_csv_close(csv);
    return rc;
}

/* Daily GPU counts: each VC's size is its most frequent value over the days
 * in [first, last] (calendar seconds of the first and last kept submit). */
static int read_gpu_numbers(lucid_import *imp, const char *path, int64_t first, int64_t last,
                            lucid_error *err)
{
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    int ncols = lucid_csv_ncols(csv), date_col = lucid_csv_col(csv, "date");
    int64_t *values = NULL; /* days x columns */
    size_t ndays = 0, cap = 0;
    int rc = 0, got = 0;
    int64_t first_day = first - (first % 86400 + 86400) % 86400;
    while ((got = lucid_csv_next(csv, err)) == 1) {
        int64_t day;
        if (lucid_import_time(lucid_csv_field(csv, date_col), &day, path, lucid_csv_line(csv),
                              "date", err) < 0) {
            rc = -1;
            break;
        }
        if (day < first_day || day > last)
            continue;
        if (LUCID_GROW(values, cap, (ndays + 1) * (size_t)ncols) < 0) {
            rc = lucid_error_set(err, "out of memory");
            break;
        }
        for (int k = 0; k < ncols; k++) {
            int64_t *v = &values[ndays * (size_t)ncols + (size_t)k];
            *v = 0;
            if (k == date_col)
                continue;
            if (lucid_csv_i64(csv, k, v, err) < 0) {
                rc = -1;
                break;
            }
            if (*v < 0) {
                rc = lucid_error_at(err, path, lucid_csv_line(csv), lucid_csv_header(csv, k),
                                    "negative GPU count");
                break;
            }
        }
        if (rc < 0)
            break;
        ndays++;
    }
    if (got < 0)
        rc = -1;
    if (rc == 0 && ndays == 0)
        rc = lucid_error_at(err, path, 0, "date", "no day covers the jobs' submit times");
    for (int k = 0; k < ncols && rc == 0; k++) {
        const char *name = lucid_csv_header(csv, k);
        if (k == date_col || strcmp(name, "total") == 0)
            continue;
        int64_t best = 0, best_count = 0;
        for (size_t d = 0; d < ndays; d++) {
            int64_t v = values[d * (size_t)ncols + (size_t)k], count = 0;
            for (size_t e = 0; e < ndays; e++)
                count += values[e * (size_t)ncols + (size_t)k] == v;
            if (count > best_count || (count == best_count && v > best)) {
                best = v;
                best_count = count;
            }
        }
        if (best % imp->gpus_per_node != 0)
            rc = lucid_error_at(err, path, 0, name,
                                "%lld GPUs is not a whole number of %d-GPU nodes (--gpus-per-node)",
                                (long long)best, imp->gpus_per_node);
        else if (lucid_import_vc(imp, name, best) < 0)
            rc = lucid_error_set(err, "out of memory");
        else
            imp->vc_gpus[lucid_strtab_find(imp->vc_names, name)] = best;
    }
    if (rc == 0) {
        char a[32], b[32];
        lucid_time_format(first_day, a, sizeof a);
        lucid_time_format(last, b, sizeof b);
        a[10] = b[10] = '\0';
        if (lucid_import_note(imp, "VC sizes from %s: the most frequent daily GPU count over the "
                                   "%zu days %s .. %s (ties: the larger)",
                              path, ndays, a, b) < 0)
            rc = lucid_error_set(err, "out of memory");
    }
    free(values);
    lucid_csv_close(csv);
    return rc;
}

/* Tells the two files apart by header; a GPU-number file's VCs are created
 * in its column order, so vc_config.csv lists them as HeliosData (and
 * Lucid's own vc_config.csv) do. */
static int is_gpu_number_file(lucid_import *imp, const char *path, int *yes, lucid_error *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return lucid_error_set(err, "%s: a Helios file cannot be read from a pipe (its header "
                                    "is read first to tell the two files apart): give the file "
                                    "itself",
                               path);
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    *yes = lucid_csv_col(csv, "date") >= 0 && lucid_csv_col(csv, "job_id") < 0;
    int rc = 0;
    for (int k = 0; *yes && k < lucid_csv_ncols(csv) && rc == 0; k++) {
        const char *name = lucid_csv_header(csv, k);
        if (strcmp(name, "date") != 0 && strcmp(name, "total") != 0 &&
            lucid_import_vc(imp, name, 0) < 0)
            rc = lucid_error_set(err, "out of memory");
    }
    lucid_csv_close(csv);
    return rc;
}

int lucid_import_helios(lucid_import *imp, const char *const *paths, int npaths,
                        const lucid_import_options *opt, lucid_error *err)
{
    const char *numbers = NULL;
    int logs = 0;
    if (opt->gpus_per_node > 0)
        imp->gpus_per_node = opt->gpus_per_node;
    for (int i = 0; i < npaths; i++) {
        int yes = 0; /* set unless it fails (gcc -Os cannot tell) */
        if (is_gpu_number_file(imp, paths[i], &yes, err) < 0)
            return -1;
        if (yes) {
            if (numbers)
                return lucid_error_set(err, "helios: two GPU-number files (%s, %s)", numbers,
                                       paths[i]);
            numbers = paths[i];
        }
    }
    for (int i = 0; i < npaths; i++) {
        if (paths[i] == numbers)
            continue;
        /* Records are numbered across files so ties keep the files' order. */
        if (read_log(imp, paths[i], (int64_t)logs << 40, err) < 0)
            return -1;
        logs++;
    }
    if (logs == 0)
        return lucid_error_set(err, "helios: no cluster_log.csv among the sources");
    if (!numbers)
        return 0; /* sizes derived in lucid_import_finish, noted there */
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (size_t i = 0; i < imp->njobs; i++) {
        int64_t t = imp->jobs[i].submit;
        if (t < opt->since || t >= opt->until)
            continue;
        first = t < first ? t : first;
        last = t > last ? t : last;
    }
    if (first == INT64_MAX)
        return 0;
    /* VCs seen only in the log get 0 GPUs unless the file lists them. */
    int32_t nvcs = lucid_strtab_count(imp->vc_names);
    for (int32_t v = 0; v < nvcs; v++)
        imp->vc_gpus[v] = 0;
    return read_gpu_numbers(imp, numbers, first, last, err);
}
