/* features_jobs.c — the Workload Estimate Model's features from jobs in
 * memory (features.h: lucid_features_duration_jobs / _history).  The one
 * place the duration model's columns are built: lucid_features_duration
 * reads trace.csv into jobs and calls it, lucidd calls it on the finished
 * jobs of its state store and the simulator on the jobs its run has ended,
 * so a model trained on any of them applies to the others. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/features.h"
#include "lucid/util.h"

enum { J_USER, J_VC, J_NSTR };
enum {
    J_GPU,
    J_CPU,
    J_MONTH,
    J_DAY,
    J_HOUR,
    J_DOW,
    J_AMP,
    J_UTIL,
    J_GMEM_UTIL,
    J_GMEM,
    J_LOG_LAST,   /* log1p(duration of the user's last ended job) */
    J_LOG_MEDIAN, /* log1p(median duration of the user's last RECENT_JOBS ended jobs) */
    J_ENDED_DAY,  /* the user's jobs ended in the day before */
    J_NNUM
};

/* How many of a user's ended jobs the median looks at. */
enum { RECENT_JOBS = 10 };

static const char *const string_names[J_NSTR] = {"user", "vc"};
static const char *const numeric_names[J_NNUM] = {
    "gpu_num", "cpu_num",  "month",     "day",           "hour",           "dayofweek",
    "amp",     "gpu_util", "gmem_util", "gmem",          "user_log_last",  "user_log_median",
    "user_ended_24h"};

/* ---- the users' histories ---- */

/* The history's usable jobs (a user, an end, a duration) sorted by user,
 * then end time: each user's ended jobs form one run in end order. */
typedef struct ended_job {
    const char *user;
    int64_t end;
    double duration;
    size_t index; /* in the history: a total order for equal ends */
} ended_job;

struct lucid_duration_history {
    ended_job *jobs;
    size_t n, cap;
};
typedef struct lucid_duration_history history_index;

static int has_user(const char *user) { return user && user[0]; }

static int cmp_user_end(const void *a, const void *b)
{
    const ended_job *x = a, *y = b;
    int c = strcmp(x->user, y->user);
    if (c != 0)
        return c;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int usable(const lucid_duration_job *j)
{
    return has_user(j->user) && j->end_time > 0 && isfinite(j->duration) && j->duration >= 0;
}

static int index_build(history_index *ix, const lucid_duration_job *jobs, size_t n)
{
    ix->n = 0;
    ix->cap = n ? n : 1;
    ix->jobs = malloc(ix->cap * sizeof *ix->jobs);
    if (!ix->jobs)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const lucid_duration_job *j = &jobs[i];
        if (usable(j))
            ix->jobs[ix->n++] = (ended_job){j->user, j->end_time, j->duration, i};
    }
    qsort(ix->jobs, ix->n, sizeof *ix->jobs, cmp_user_end);
    return 0;
}

/* First position in the index whose (user, end) is >= (user, end). */
static size_t index_lower(const history_index *ix, const char *user, int64_t end)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ix->jobs[mid].user, user);
        if (c < 0 || (c == 0 && ix->jobs[mid].end < end))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The job's history features from the jobs of its user that ended
 * strictly before min(submit_time, known_at): what a scheduler knew when it
 * estimated the job.  A job's own end is never before its submission, so
 * its own duration is never used. */
static void history_features(const history_index *ix, const lucid_duration_job *job,
                             double *log_last, double *log_median, double *ended_day)
{
    *log_last = *log_median = *ended_day = NAN;
    if (!has_user(job->user))
        return;
    int64_t cutoff = job->known_at > 0 && job->known_at < job->submit_time ? job->known_at
                                                                            : job->submit_time;
    size_t first = index_lower(ix, job->user, INT64_MIN), end = index_lower(ix, job->user, cutoff);
    size_t day = index_lower(ix, job->user, cutoff - 86400);
    *ended_day = (double)(end - day);
    if (end == first)
        return;
    double recent[RECENT_JOBS];
    size_t k = 0;
    for (size_t p = end; p > first && k < RECENT_JOBS; p--)
        recent[k++] = ix->jobs[p - 1].duration;
    *log_last = log1p(recent[0]);
    qsort(recent, k, sizeof *recent, lucid_cmp_double);
    *log_median = log1p(k % 2 ? recent[k / 2] : (recent[k / 2 - 1] + recent[k / 2]) / 2);
}

/* ---- the table ---- */

static void fill_row(const lucid_duration_job *job, const history_index *ix, size_t r,
                     const char ***str, double **num, const char **keys, double *target)
{
    lucid_tm tm;
    lucid_time_split(job->submit_time, &tm);
    str[J_USER][r] = job->user;
    str[J_VC][r] = job->vc;
    double values[J_NNUM] = {job->gpu_num,   job->cpu_num, tm.month,   tm.day,
                             tm.hour,        tm.dayofweek, job->amp,   job->gpu_util,
                             job->gmem_util, job->gmem,    NAN,        NAN,
                             NAN};
    history_features(ix, job, &values[J_LOG_LAST], &values[J_LOG_MEDIAN], &values[J_ENDED_DAY]);
    for (int c = 0; c < J_NNUM; c++)
        num[c][r] = values[c];
    keys[r] = job->key;
    target[r] = job->duration;
}

lucid_duration_history *lucid_duration_history_new(const lucid_duration_job *history,
                                                   size_t nhistory, lucid_error *err)
{
    history_index *ix = calloc(1, sizeof *ix);
    if (!ix || index_build(ix, history, nhistory) < 0) {
        free(ix);
        lucid_error_set(err, "out of memory");
        return NULL;
    }
    return ix;
}

int lucid_duration_history_add(lucid_duration_history *h, const lucid_duration_job *job,
                               size_t position, lucid_error *err)
{
    if (!usable(job))
        return 0;
    if (h->n == h->cap) {
        size_t cap = h->cap * 2;
        ended_job *grown = realloc(h->jobs, cap * sizeof *grown);
        if (!grown)
            return lucid_error_set(err, "out of memory");
        h->jobs = grown;
        h->cap = cap;
    }
    ended_job add = {job->user, job->end_time, job->duration, position};
    /* After every entry that sorts before it (the order of index_build). */
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_user_end(&h->jobs[mid], &add) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(h->jobs + lo + 1, h->jobs + lo, (h->n - lo) * sizeof *h->jobs);
    h->jobs[lo] = add;
    h->n++;
    return 0;
}

void lucid_duration_history_free(lucid_duration_history *h)
{
    if (h)
        free(h->jobs);
    free(h);
}

lucid_dataset *lucid_features_duration_indexed(const lucid_duration_job *jobs, size_t n,
                                               const lucid_duration_history *ix, int with_target,
                                               lucid_error *err)
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
        fill_row(&jobs[r], ix, r, str, num, keys, target);
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

lucid_dataset *lucid_features_duration_history(const lucid_duration_job *jobs, size_t n,
                                               const lucid_duration_job *history,
                                               size_t nhistory, int with_target, lucid_error *err)
{
    lucid_duration_history *ix = lucid_duration_history_new(history, nhistory, err);
    if (!ix)
        return NULL;
    lucid_dataset *ds = lucid_features_duration_indexed(jobs, n, ix, with_target, err);
    lucid_duration_history_free(ix);
    return ds;
}

lucid_dataset *lucid_features_duration_jobs(const lucid_duration_job *jobs, size_t n,
                                            int with_target, lucid_error *err)
{
    return lucid_features_duration_history(jobs, n, jobs, n, with_target, err);
}

void lucid_duration_model_params(lucid_ebm_params *p)
{
    lucid_ebm_default_params(p);
    p->learning_rate = 0.01;
    p->interactions = 20;
    p->target_transform = LUCID_TARGET_LOG1P;
    /* Lucid's uniform bins and leaves of 2 rows are kept.  Quantile bins
     * with leaves of >= 50 rows are more accurate offline (MAE 8,810 ->
     * 8,268 s on the 14-day Venus split) but schedule worse online
     * (Lucid's average JCT 13,036 -> 13,158 s, fixed semantics): see
     * docs/models.md; `lucid model train --binning quantile
     * --min-samples-leaf 50` trains that variant. */
    p->binning = LUCID_BIN_UNIFORM;
    /* Warm-started retraining (the simulator's update engine): 100 rounds
     * at 5x the learning rate; docs/online.md measures it against
     * retraining from scratch. */
    p->warm_rounds = 100;
    p->warm_learning_rate = 0.05;
}
