/* features_jobs.c — the Workload Estimate Model's features from jobs in
 * memory (features.h: lucid_features_duration_jobs).  The one place the
 * duration model's columns are built: lucid_features_duration reads
 * trace.csv into jobs and calls it, and lucidd calls it on the finished jobs
 * of its state store, so a model trained on either applies to the other. */
#include <stdlib.h>

#include "lucid/features.h"
#include "lucid/util.h"

enum { J_USER, J_VC, J_NSTR };
enum { J_GPU, J_CPU, J_MONTH, J_DAY, J_HOUR, J_DOW, J_AMP, J_UTIL, J_GMEM_UTIL, J_GMEM, J_NNUM };

static const char *const string_names[J_NSTR] = {"user", "vc"};
static const char *const numeric_names[J_NNUM] = {"gpu_num", "cpu_num",  "month",     "day",
                                                  "hour",    "dayofweek", "amp",      "gpu_util",
                                                  "gmem_util", "gmem"};

static void fill_row(const lucid_duration_job *job, size_t r, const char ***str, double **num,
                     const char **keys, double *target)
{
    lucid_tm tm;
    lucid_time_split(job->submit_time, &tm);
    str[J_USER][r] = job->user;
    str[J_VC][r] = job->vc;
    const double values[J_NNUM] = {job->gpu_num,   job->cpu_num, tm.month,        tm.day,
                                   tm.hour,        tm.dayofweek, job->amp,        job->gpu_util,
                                   job->gmem_util, job->gmem};
    for (int c = 0; c < J_NNUM; c++)
        num[c][r] = values[c];
    keys[r] = job->key;
    target[r] = job->duration;
}

lucid_dataset *lucid_features_duration_jobs(const lucid_duration_job *jobs, size_t n,
                                            int with_target, lucid_error *err)
{
    size_t rows = n ? n : 1;
    const char **str[J_NSTR] = {0};
    double *num[J_NNUM] = {0};
    const char **keys = malloc(rows * sizeof *keys);
    double *target = malloc(rows * sizeof *target);
    int ok = keys && target;
    for (int c = 0; c < J_NSTR; c++)
        ok &= (str[c] = malloc(rows * sizeof **str)) != NULL;
    for (int c = 0; c < J_NNUM; c++)
        ok &= (num[c] = malloc(rows * sizeof **num)) != NULL;
    lucid_dataset *ds = ok ? lucid_dataset_new(n, err) : NULL;
    if (!ok)
        lucid_error_set(err, "out of memory");
    for (size_t r = 0; ds && r < n; r++)
        fill_row(&jobs[r], r, str, num, keys, target);
    /* Column order: user, vc, then the numbers. */
    for (int c = 0; ds && c < J_NSTR; c++)
        if (lucid_dataset_add_strings(ds, string_names[c], str[c], err) < 0) {
            lucid_dataset_free(ds);
            ds = NULL;
        }
    for (int c = 0; ds && c < J_NNUM; c++)
        if (lucid_dataset_add_numeric(ds, numeric_names[c], num[c], err) < 0) {
            lucid_dataset_free(ds);
            ds = NULL;
        }
    if (ds && (lucid_dataset_set_keys(ds, keys, err) < 0 ||
               (with_target && lucid_dataset_set_target(ds, "duration", target, err) < 0))) {
        lucid_dataset_free(ds);
        ds = NULL;
    }
    for (int c = 0; c < J_NSTR; c++)
        free(str[c]);
    for (int c = 0; c < J_NNUM; c++)
        free(num[c]);
    free(keys);
    free(target);
    return ds;
}
