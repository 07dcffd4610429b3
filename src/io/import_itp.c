/* import_itp.c — Microsoft ITP clusters (ElasticFlow, ASPLOS'23): the raw
 * traces of microsoft/elasticflow-traces, one CSV per cluster with
 * `job_id` (a UUID), `submission_time` (seconds since the collection
 * began), `duration` (s) and `num_gpu`.
 *
 * Rules (docs/traces.md): each file is one VC named after the file
 * (cluster01 ...); the collection began 2021-03-04 (the repository's
 * README), taken as 00:00:00 UTC for calendar times; job ids become
 * FILE_INDEX * 1000000 + ROW (files in command-line order, from 1) and the
 * UUID is kept in source_id; jobs with no GPU or a duration under 1 s are
 * removed (the public files have none); the traces give no cluster sizes,
 * so VC sizes are derived (the largest job, whole nodes) unless --vc-size. */
#include <stdlib.h>
#include <string.h>

#include "lucid/csv.h"
#include "lucid/import.h"

#define ITP_EPOCH 1614816000 /* 2021-03-04 00:00:00 UTC */

/* Ten years of seconds: the most a submission time or a duration may be. */
#define ITP_MAX_SECONDS (10LL * 365 * 86400)

/* Order of (VC, UUID, record): a UUID twice in one cluster's file. */
static int compare_uuid(const void *a, const void *b)
{
    const lucid_import_job *x = *(const lucid_import_job *const *)a,
                           *y = *(const lucid_import_job *const *)b;
    if (x->vc != y->vc)
        return x->vc < y->vc ? -1 : 1;
    if (x->source_id != y->source_id)
        return x->source_id < y->source_id ? -1 : 1;
    return (x->record > y->record) - (x->record < y->record);
}

/* A job is one row: the same UUID on two rows of a cluster is the
 * source's fault, reported with both lines. */
static int check_uuids(const lucid_import *imp, const char *const *paths, lucid_error *err)
{
    const lucid_import_job **by = malloc((imp->njobs + 1) * sizeof *by);
    if (!by)
        return lucid_error_set(err, "out of memory");
    for (size_t i = 0; i < imp->njobs; i++)
        by[i] = &imp->jobs[i];
    qsort(by, imp->njobs, sizeof *by, compare_uuid);
    int rc = 0;
    for (size_t i = 1; i < imp->njobs && rc == 0; i++)
        if (by[i]->vc == by[i - 1]->vc && by[i]->source_id == by[i - 1]->source_id)
            rc = lucid_error_at(err, paths[(by[i]->record >> 32) - 1], (long)(by[i]->record & 0xffffffff),
                                "job_id", "'%s' is also the job of line %ld",
                                lucid_strtab_get(imp->strings, by[i]->source_id),
                                (long)(by[i - 1]->record & 0xffffffff));
    free(by);
    return rc;
}

static int read_cluster(lucid_import *imp, const char *path, int64_t file_index, int cpu_only,
                        int zero, lucid_error *err)
{
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    static const char *const names[] = {"job_id", "submission_time", "duration", "num_gpu"};
    int c[4];
    int rc = lucid_import_columns(csv, names, c, 4, err);
    char vc[256];
    lucid_import_name_of(path, NULL, vc, sizeof vc);
    int32_t v = rc == 0 ? lucid_import_vc(imp, vc, -1) : -1;
    if (rc == 0 && v < 0)
        rc = lucid_error_set(err, "out of memory");
    int got = 0;
    int64_t row = 0;
    while (rc == 0 && (got = lucid_csv_next(csv, err)) == 1) {
        long line = lucid_csv_line(csv);
        imp->records++;
        row++;
        int64_t submit, duration, gpus;
        if (lucid_csv_i64(csv, c[1], &submit, err) < 0 ||
            lucid_csv_i64(csv, c[2], &duration, err) < 0 ||
            lucid_csv_i64(csv, c[3], &gpus, err) < 0) {
            rc = -1;
            break;
        }
        if (submit < 0 || gpus < 0 || gpus > (1 << 20) || row >= 1000000) {
            rc = lucid_error_at(err, path, line, submit < 0 ? "submission_time" : "num_gpu",
                                "%lld out of range",
                                (long long)(submit < 0 ? submit : row >= 1000000 ? row : gpus));
            break;
        }
        /* Seconds since a collection of months: more than ten years is a
         * corrupt value (2^63 - 1 would overflow every later sum). */
        if (submit > ITP_MAX_SECONDS || duration > ITP_MAX_SECONDS) {
            rc = lucid_error_at(err, path, line, submit > ITP_MAX_SECONDS ? "submission_time" : "duration",
                                "%lld s is more than ten years",
                                (long long)(submit > ITP_MAX_SECONDS ? submit : duration));
            break;
        }
        const char *uuid = lucid_csv_field(csv, c[0]);
        if (lucid_import_check_text(uuid, path, line, "job_id", err) < 0) {
            rc = -1;
            break;
        }
        if (!*uuid) {
            rc = lucid_error_at(err, path, line, "job_id", "empty job id");
            break;
        }
        if (gpus == 0) {
            lucid_import_count(imp, cpu_only);
            continue;
        }
        if (duration < 1) {
            lucid_import_count(imp, zero);
            continue;
        }
        lucid_import_job *job = lucid_import_push(imp);
        if (!job) {
            rc = lucid_error_set(err, "out of memory");
            break;
        }
        job->job_id = file_index * 1000000 + row;
        job->submit = ITP_EPOCH + submit;
        job->duration = duration;
        job->gpu_num = (int32_t)gpus;
        job->vc = v;
        job->record = (file_index << 32) + line;
        job->source_id = lucid_import_string(imp, uuid);
        if (job->source_id < 0) {
            rc = lucid_error_set(err, "out of memory");
            break;
        }
    }
    if (got < 0)
        rc = -1;
    lucid_csv_close(csv);
    return rc;
}

int lucid_import_itp(lucid_import *imp, const char *const *paths, int npaths,
                     const lucid_import_options *opt, lucid_error *err)
{
    if (opt->gpus_per_node > 0)
        imp->gpus_per_node = opt->gpus_per_node;
    int cpu_only = lucid_import_rule_add(imp, "cpu_only", "num_gpu = 0");
    int zero = lucid_import_rule_add(imp, "zero_duration", "duration < 1 s");
    for (int i = 0; i < npaths; i++)
        if (read_cluster(imp, paths[i], i + 1, cpu_only, zero, err) < 0)
            return -1;
    if (check_uuids(imp, paths, err) < 0)
        return -1;
    return lucid_import_note(imp, "ITP: one VC per file; calendar times from 2021-03-04 00:00:00 "
                                  "UTC (collection start); job_id = file number x 1000000 + row, "
                                  "the UUID in source_id") < 0
               ? lucid_error_set(err, "out of memory")
               : 0;
}
