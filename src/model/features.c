/* features.c — inputs of Lucid's three models turned into datasets (features.h).
 *
 * One builder per model; each validates its file row by row through the CSV
 * reader, so a malformed value is reported as "file:line: column: reason". */
#include "lucid/features.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/csv.h"
#include "lucid/util.h"

static int need_col(const lucid_csv *csv, const char *name, lucid_error *err)
{
    int c = lucid_csv_col(csv, name);
    if (c < 0)
        lucid_error_at(err, lucid_csv_name(csv), 1, name, "missing column");
    return c;
}

/* A numeric field that may be empty (missing). */
static int maybe_f64(const lucid_csv *csv, int col, double *out, lucid_error *err)
{
    if (!lucid_csv_field(csv, col)[0]) {
        *out = NAN;
        return 0;
    }
    return lucid_csv_f64(csv, col, out, err);
}

static int add_columns(lucid_dataset *ds, const char *const *names, double *const *values,
                       int n, lucid_error *err)
{
    for (int i = 0; i < n; i++)
        if (lucid_dataset_add_numeric(ds, names[i], values[i], err) < 0)
            return -1;
    return 0;
}

/* A calendar field naming a period of the year (month, day of the year, ISO
 * week) as a category: its label is the number zero-padded to `width`
 * digits, so the categories sort in calendar order and the model splits
 * them exactly as it would the numbers.  The difference is a period the
 * training rows never reached (a forecast beyond their end): as an unseen
 * category it contributes nothing, where a number beyond the last cut would
 * take the score of the last training period (for the day of the year and
 * the week, a single day). */
static int add_period(lucid_dataset *ds, const char *name, const double *values, int width,
                      lucid_error *err)
{
    char **labels = calloc(ds->nrows ? ds->nrows : 1, sizeof *labels);
    char *text = malloc((ds->nrows ? ds->nrows : 1) * 8);
    int rc = labels && text ? 0 : lucid_error_set(err, "out of memory");
    for (size_t r = 0; rc == 0 && r < ds->nrows; r++) {
        labels[r] = text + 8 * r;
        snprintf(labels[r], 8, "%0*d", width, (int)values[r]);
    }
    if (rc == 0)
        rc = lucid_dataset_add_strings(ds, name, (const char *const *)labels, err);
    free(labels);
    free(text);
    return rc;
}

/* ---- throughput ---- */

enum { LAGS = 3 };
static const int lag_bins[LAGS] = {6, 18, 144};
static const char *const lag_names[LAGS] = {"1h", "3h", "1d"};

static double at(const double *s, long i, long n) { return i >= 0 && i < n ? s[i] : NAN; }

/* Lags, soft lags and 1-hour window statistics of one series into cols[0..8]. */
static void series_features(const double *s, long n, double **cols)
{
    for (long t = 0; t < n; t++) {
        for (int k = 0; k < LAGS; k++) {
            long i = t - lag_bins[k];
            cols[k][t] = at(s, i, n);
            cols[LAGS + k][t] =
                0.5 * at(s, i, n) + 0.25 * at(s, i - 1, n) + 0.25 * at(s, i + 1, n);
        }
        double w[6];
        int ok = t - 11 >= 0;
        for (int j = 0; ok && j < 6; j++)
            w[j] = s[t - 11 + j];
        double mean = NAN, median = NAN, sd = NAN;
        if (ok) {
            double sum = 0;
            for (int j = 0; j < 6; j++)
                sum += w[j];
            mean = sum / 6;
            double ss = 0;
            for (int j = 0; j < 6; j++)
                ss += (w[j] - mean) * (w[j] - mean);
            sd = sqrt(ss / 5); /* sample standard deviation, as pandas' rolling std */
            qsort(w, 6, sizeof *w, lucid_cmp_double);
            median = (w[2] + w[3]) / 2;
        }
        cols[6][t] = mean;
        cols[7][t] = median;
        cols[8][t] = sd;
    }
}

typedef struct series {
    long n;
    int64_t *time;
    char **keys;
    double *job, *gpu;
} series;

static void series_free(series *s)
{
    for (long i = 0; s->keys && i < s->n; i++)
        free(s->keys[i]);
    free(s->keys);
    free(s->time);
    free(s->job);
    free(s->gpu);
}

static int read_series(const char *path, series *s, lucid_error *err)
{
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    int ct = need_col(csv, "time", err), cj = ct < 0 ? -1 : need_col(csv, "submit_gpu_job", err);
    int cg = cj < 0 ? -1 : need_col(csv, "submit_gpu_num", err);
    int rc = cg < 0 ? -1 : 0;
    long cap = 0;
    while (rc == 0 && (rc = lucid_csv_next(csv, err)) == 1) {
        rc = 0;
        if (s->n == cap) {
            cap = cap ? cap * 2 : 4096;
            int64_t *time = realloc(s->time, (size_t)cap * sizeof *time);
            if (time)
                s->time = time;
            double *job = realloc(s->job, (size_t)cap * sizeof *job);
            if (job)
                s->job = job;
            double *gpu = realloc(s->gpu, (size_t)cap * sizeof *gpu);
            if (gpu)
                s->gpu = gpu;
            char **keys = realloc(s->keys, (size_t)cap * sizeof *keys);
            if (keys)
                s->keys = keys;
            if (!time || !job || !gpu || !keys) {
                rc = lucid_error_set(err, "out of memory");
                break;
            }
        }
        const char *tf = lucid_csv_field(csv, ct);
        if (lucid_time_parse(tf, &s->time[s->n]) < 0) {
            rc = lucid_error_at(err, path, lucid_csv_line(csv), "time",
                                "'%s' is not a YYYY-MM-DD HH:MM:SS time", tf);
            break;
        }
        if (s->n > 0 && s->time[s->n] != s->time[s->n - 1] + 600) {
            rc = lucid_error_at(err, path, lucid_csv_line(csv), "time",
                                "expected the bin 10 minutes after the previous row");
            break;
        }
        if (lucid_csv_f64(csv, cj, &s->job[s->n], err) < 0 ||
            lucid_csv_f64(csv, cg, &s->gpu[s->n], err) < 0) {
            rc = -1;
            break;
        }
        if (!(s->keys[s->n] = strdup(tf))) {
            rc = lucid_error_set(err, "out of memory");
            break;
        }
        s->n++;
    }
    if (rc == 0 && s->n == 0)
        rc = lucid_error_at(err, path, 0, NULL, "no data rows");
    lucid_csv_close(csv);
    return rc < 0 ? -1 : 0;
}

lucid_dataset *lucid_features_throughput(const char *path, const char *target, int64_t **times,
                                         lucid_error *err)
{
    if (strcmp(target, "submit_gpu_job") != 0 && strcmp(target, "submit_gpu_num") != 0) {
        lucid_error_set(err, "unknown throughput target '%s' (submit_gpu_job or submit_gpu_num)",
                        target);
        return NULL;
    }
    series s;
    memset(&s, 0, sizeof s);
    if (read_series(path, &s, err) < 0) {
        series_free(&s);
        return NULL;
    }
    enum { NCOLS = 7 + 2 * 9 };
    char names[NCOLS][32];
    double *cols[NCOLS] = {0};
    const char *name_ptr[NCOLS];
    lucid_dataset *ds = NULL;
    for (int c = 0; c < NCOLS; c++)
        if (!(cols[c] = malloc((size_t)s.n * sizeof **cols)))
            goto fail;
    static const char *const calendar[7] = {"month",     "day",       "hour", "minute",
                                            "dayofweek", "dayofyear", "week"};
    for (int c = 0; c < 7; c++)
        snprintf(names[c], sizeof names[c], "%s", calendar[c]);
    for (long t = 0; t < s.n; t++) {
        lucid_tm tm;
        lucid_time_split(s.time[t], &tm);
        int v[7] = {tm.month, tm.day, tm.hour, tm.minute, tm.dayofweek, tm.dayofyear, tm.isoweek};
        for (int c = 0; c < 7; c++)
            cols[c][t] = v[c];
    }
    static const char *const prefix[2] = {"job", "gpu"};
    static const char *const kinds[3] = {"lag", "soft", ""};
    static const char *const stats[3] = {"mean", "median", "std"};
    for (int k = 0; k < 2; k++) {
        double **dst = cols + 7 + 9 * k;
        series_features(k == 0 ? s.job : s.gpu, s.n, dst);
        for (int i = 0; i < 6; i++)
            snprintf(names[7 + 9 * k + i], sizeof names[0], "%s_%s_%s", prefix[k], kinds[i / 3],
                     lag_names[i % 3]);
        for (int i = 0; i < 3; i++)
            snprintf(names[7 + 9 * k + 6 + i], sizeof names[0], "%s_%s_1h", prefix[k], stats[i]);
    }
    for (int c = 0; c < NCOLS; c++)
        name_ptr[c] = names[c];
    ds = lucid_dataset_new((size_t)s.n, err);
    /* Columns in order: month, day, hour, minute, dayofweek, dayofyear, week
     * (the first and the last two are periods), then the series features. */
    if (!ds || add_period(ds, names[0], cols[0], 2, err) < 0 ||
        add_columns(ds, name_ptr + 1, cols + 1, 4, err) < 0 ||
        add_period(ds, names[5], cols[5], 3, err) < 0 ||
        add_period(ds, names[6], cols[6], 2, err) < 0 ||
        add_columns(ds, name_ptr + 7, cols + 7, NCOLS - 7, err) < 0 ||
        lucid_dataset_set_target(ds, target,
                                 strcmp(target, "submit_gpu_job") == 0 ? s.job : s.gpu, err) < 0 ||
        lucid_dataset_set_keys(ds, (const char *const *)s.keys, err) < 0)
        goto fail;
    for (int c = 0; c < NCOLS; c++)
        free(cols[c]);
    *times = s.time;
    s.time = NULL;
    series_free(&s);
    return ds;
fail:
    if (!ds)
        lucid_error_set(err, "out of memory");
    for (int c = 0; c < NCOLS; c++)
        free(cols[c]);
    lucid_dataset_free(ds);
    series_free(&s);
    return NULL;
}

/* ---- a generic row store for the other two builders ---- */

typedef struct table {
    size_t n, cap;
    int ncols;
    double **num;   /* numeric columns */
    char ***str;    /* string columns (NULL entries for numeric ones) */
} table;

static int table_init(table *t, int ncols)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->num = calloc((size_t)ncols, sizeof *t->num);
    t->str = calloc((size_t)ncols, sizeof *t->str);
    return t->num && t->str ? 0 : -1;
}

static int table_reserve(table *t)
{
    if (t->n < t->cap)
        return 0;
    size_t cap = t->cap ? t->cap * 2 : 1024;
    for (int c = 0; c < t->ncols; c++) {
        double *num = realloc(t->num[c], cap * sizeof *num);
        if (!num)
            return -1;
        t->num[c] = num;
        char **str = realloc(t->str[c], cap * sizeof *str);
        if (!str)
            return -1;
        for (size_t r = t->cap; r < cap; r++)
            str[r] = NULL;
        t->str[c] = str;
    }
    t->cap = cap;
    return 0;
}

static void table_free(table *t)
{
    for (int c = 0; c < t->ncols; c++) {
        for (size_t r = 0; t->str && t->str[c] && r < t->n; r++)
            free(t->str[c][r]);
        if (t->str)
            free(t->str[c]);
        if (t->num)
            free(t->num[c]);
    }
    free(t->num);
    free(t->str);
}

/* ---- duration ---- */

/* duration, submit_time and end_time are optional: a file to predict has
 * no duration; a trace that records when its jobs ended (end_time, on the
 * timeline of submit_time) gives the users' histories exact ends. */
enum {
    D_USER,
    D_VC,
    D_GPU,
    D_CPU,
    D_AMP,
    D_UTIL,
    D_GMEM_UTIL,
    D_GMEM,
    D_DURATION,
    D_SUBMIT,
    D_END,
    D_NIN,
    D_KEY = D_NIN
};
static const char *const duration_inputs[D_NIN] = {
    "user",      "vc",   "gpu_num",  "cpu_num",     "amp",     "gpu_util",
    "gmem_util", "gmem", "duration", "submit_time", "end_time"};

static int read_duration_row(const lucid_csv *csv, const int *cols, int cid, int ctime, table *t,
                             int64_t *when, lucid_error *err)
{
    size_t r = t->n;
    for (int c = 0; c < D_NIN; c++) {
        t->str[c][r] = NULL;
        t->num[c][r] = NAN;
    }
    t->str[D_KEY][r] = strdup(lucid_csv_field(csv, cid));
    if (!t->str[D_KEY][r])
        return lucid_error_set(err, "out of memory");
    t->n++; /* from here on the row's strings are owned by the table */
    for (int c = 0; c < D_NIN; c++) {
        if (cols[c] < 0)
            continue;
        if (c == D_USER || c == D_VC) {
            if (!(t->str[c][r] = strdup(lucid_csv_field(csv, cols[c]))))
                return lucid_error_set(err, "out of memory");
        } else if (maybe_f64(csv, cols[c], &t->num[c][r], err) < 0) {
            return -1;
        }
    }
    const char *tf = lucid_csv_field(csv, ctime);
    if (lucid_time_parse(tf, when) < 0)
        return lucid_error_at(err, lucid_csv_name(csv), lucid_csv_line(csv), "submit_datetime",
                              "'%s' is not a YYYY-MM-DD HH:MM:SS time", tf);
    return 0;
}

/* When row r's job ended, in calendar time: its end_time (moved from the
 * submit_time timeline to submit_datetime's), else submit + duration — the
 * earliest it can have ended, exact for a job that did not queue; 0 when
 * neither is known. */
static int64_t job_end(const table *t, size_t r, int64_t submit_time)
{
    double end = t->num[D_END][r], submit = t->num[D_SUBMIT][r], d = t->num[D_DURATION][r];
    if (isfinite(end) && isfinite(submit) && end >= submit)
        return submit_time + (int64_t)ceil(end - submit);
    return isfinite(d) ? submit_time + (int64_t)ceil(d) : 0;
}

/* Row r of the table as a job; its strings stay the table's. */
static lucid_duration_job table_job(const table *t, size_t r, int64_t submit_time)
{
    return (lucid_duration_job){.key = t->str[D_KEY][r],
                                .user = t->str[D_USER][r],
                                .vc = t->str[D_VC][r],
                                .gpu_num = t->num[D_GPU][r],
                                .cpu_num = t->num[D_CPU][r],
                                .submit_time = submit_time,
                                .amp = t->num[D_AMP][r],
                                .gpu_util = t->num[D_UTIL][r],
                                .gmem_util = t->num[D_GMEM_UTIL][r],
                                .gmem = t->num[D_GMEM][r],
                                .duration = t->num[D_DURATION][r],
                                .end_time = job_end(t, r, submit_time)};
}

/* The rows are read into a table and handed to lucid_features_duration_jobs
 * (features_jobs.c), which alone decides the columns. */
lucid_dataset *lucid_features_duration(const char *path, int64_t **times, lucid_error *err)
{
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return NULL;
    table t;
    int64_t *when = NULL;
    size_t when_cap = 0;
    lucid_duration_job *jobs = NULL;
    lucid_dataset *ds = NULL;
    if (table_init(&t, D_NIN + 1) < 0) {
        lucid_error_set(err, "out of memory");
        goto fail;
    }
    int cols[D_NIN];
    for (int c = 0; c < D_NIN; c++) {
        cols[c] = lucid_csv_col(csv, duration_inputs[c]);
        /* Only gpu_num is required: an imported trace has the columns its
         * source has, and a missing one is a missing value in every row
         * (the GA2M learns on the columns present, docs/traces.md). */
        if (cols[c] < 0 && c == D_GPU) {
            need_col(csv, duration_inputs[c], err);
            goto fail;
        }
    }
    int cid = need_col(csv, "job_id", err);
    int ctime = cid < 0 ? -1 : need_col(csv, "submit_datetime", err);
    if (ctime < 0)
        goto fail;
    int rc;
    while ((rc = lucid_csv_next(csv, err)) == 1) {
        if (table_reserve(&t) < 0 || LUCID_GROW(when, when_cap, t.n + 1) < 0) {
            lucid_error_set(err, "out of memory");
            goto fail;
        }
        if (read_duration_row(csv, cols, cid, ctime, &t, &when[t.n], err) < 0)
            goto fail;
    }
    if (rc < 0)
        goto fail;
    if (t.n == 0) {
        lucid_error_at(err, path, 0, NULL, "no data rows");
        goto fail;
    }
    if (!(jobs = malloc(t.n * sizeof *jobs))) {
        lucid_error_set(err, "out of memory");
        goto fail;
    }
    for (size_t r = 0; r < t.n; r++)
        jobs[r] = table_job(&t, r, when[r]);
    ds = lucid_features_duration_jobs(jobs, t.n, cols[D_DURATION] >= 0, err);
    if (!ds)
        goto fail;
    free(jobs);
    table_free(&t);
    lucid_csv_close(csv);
    *times = when;
    return ds;
fail:
    free(jobs);
    table_free(&t);
    free(when);
    lucid_csv_close(csv);
    return NULL;
}

/* ---- sharing ---- */

/* "model/dataset/batchsize/amp" of a workload, numbers normalised. */
static int workload_key(const lucid_csv *csv, const int *cols, char *buf, size_t size,
                        lucid_error *err)
{
    int64_t batch, amp;
    if (lucid_csv_i64(csv, cols[2], &batch, err) < 0 || lucid_csv_i64(csv, cols[3], &amp, err) < 0)
        return -1;
    snprintf(buf, size, "%s/%s/%lld/%lld", lucid_csv_field(csv, cols[0]),
             lucid_csv_field(csv, cols[1]), (long long)batch, (long long)amp);
    return 0;
}

typedef struct speed_sum {
    lucid_strtab *keys;
    double *sum;
    long *count;
    size_t cap;
} speed_sum;

static int speed_add(speed_sum *s, const char *key, double speed)
{
    int32_t id = lucid_strtab_intern(s->keys, key);
    if (id < 0)
        return -1;
    if ((size_t)id >= s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        double *sum = realloc(s->sum, cap * sizeof *sum);
        if (sum)
            s->sum = sum;
        long *count = realloc(s->count, cap * sizeof *count);
        if (count)
            s->count = count;
        if (!sum || !count)
            return -1;
        for (size_t i = s->cap; i < cap; i++) {
            s->sum[i] = 0;
            s->count[i] = 0;
        }
        s->cap = cap;
    }
    s->sum[id] += speed;
    s->count[id]++;
    return 0;
}

static int read_pairs(const char *path, speed_sum *s, lucid_error *err)
{
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    static const char *const fields[5] = {"model", "dataset", "batchsize", "amp", "speed"};
    int cols[2][5];
    char name[32];
    for (int side = 0; side < 2; side++)
        for (int k = 0; k < 5; k++) {
            snprintf(name, sizeof name, "%s%d", fields[k], side + 1);
            if ((cols[side][k] = need_col(csv, name, err)) < 0) {
                lucid_csv_close(csv);
                return -1;
            }
        }
    int rc;
    while ((rc = lucid_csv_next(csv, err)) == 1) {
        for (int side = 0; side < 2; side++) {
            char key[512];
            double speed;
            if (workload_key(csv, cols[side], key, sizeof key, err) < 0 ||
                lucid_csv_f64(csv, cols[side][4], &speed, err) < 0) {
                lucid_csv_close(csv);
                return -1;
            }
            if (speed_add(s, key, speed) < 0) {
                lucid_csv_close(csv);
                return lucid_error_set(err, "out of memory");
            }
        }
    }
    lucid_csv_close(csv);
    return rc < 0 ? -1 : 0;
}

enum { S_AMP, S_UTIL, S_GMEM_UTIL, S_GMEM, S_AVG, S_AUTO, S_LABEL, S_NCOL };

lucid_dataset *lucid_features_sharing(const char *labels_path, const char *pairs_path,
                                      lucid_error *err)
{
    speed_sum speeds = {lucid_strtab_new(), NULL, NULL, 0};
    lucid_csv *csv = NULL;
    table t;
    lucid_dataset *ds = NULL;
    int have_label = 0;
    if (table_init(&t, S_NCOL + 1) < 0 || !speeds.keys) {
        lucid_error_set(err, "out of memory");
        goto done;
    }
    if (read_pairs(pairs_path, &speeds, err) < 0 || !(csv = lucid_csv_open(labels_path, err)))
        goto done;
    static const char *const key_fields[4] = {"model", "dataset", "batchsize", "amp"};
    static const char *const num_fields[4] = {"amp", "gpu_util", "gmem_util", "gmem"};
    int kcols[4], ncols[4];
    for (int k = 0; k < 4; k++)
        if ((kcols[k] = need_col(csv, key_fields[k], err)) < 0 ||
            (ncols[k] = need_col(csv, num_fields[k], err)) < 0)
            goto done;
    int clabel = lucid_csv_col(csv, "label");
    have_label = clabel >= 0;
    int rc;
    while ((rc = lucid_csv_next(csv, err)) == 1) {
        char key[512];
        if (table_reserve(&t) < 0) {
            lucid_error_set(err, "out of memory");
            goto done;
        }
        size_t r = t.n;
        for (int c = 0; c <= S_NCOL; c++)
            t.str[c][r] = NULL;
        if (workload_key(csv, kcols, key, sizeof key, err) < 0)
            goto done;
        for (int k = 0; k < 4; k++)
            if (lucid_csv_f64(csv, ncols[k], &t.num[k][r], err) < 0)
                goto done;
        int32_t id = lucid_strtab_find(speeds.keys, key);
        double avg = id < 0 ? 0.0 : speeds.sum[id] / (double)speeds.count[id];
        t.num[S_AVG][r] = avg;
        t.num[S_AUTO][r] = avg < 0.85 ? 2 : avg < 0.95 ? 1 : 0;
        t.num[S_LABEL][r] = NAN;
        if (have_label && lucid_csv_f64(csv, clabel, &t.num[S_LABEL][r], err) < 0)
            goto done;
        if (!(t.str[S_NCOL][r] = strdup(key))) {
            lucid_error_set(err, "out of memory");
            goto done;
        }
        t.n++;
    }
    if (rc < 0)
        goto done;
    static const char *const names[S_LABEL] = {"amp",       "gpu_util",  "gmem_util",
                                               "gmem",      "avg_speed", "auto_label"};
    ds = lucid_dataset_new(t.n, err);
    if (!ds || add_columns(ds, names, t.num, S_LABEL, err) < 0 ||
        lucid_dataset_set_keys(ds, (const char *const *)t.str[S_NCOL], err) < 0 ||
        (have_label && lucid_dataset_set_target(ds, "label", t.num[S_LABEL], err) < 0)) {
        lucid_dataset_free(ds);
        ds = NULL;
    }
done:
    if (csv)
        lucid_csv_close(csv);
    table_free(&t);
    if (speeds.keys)
        lucid_strtab_free(speeds.keys);
    free(speeds.sum);
    free(speeds.count);
    return ds;
}

int lucid_split_by_time(const lucid_dataset *ds, const int64_t *times, int64_t until,
                        lucid_dataset **train, lucid_dataset **test, lucid_error *err)
{
    size_t *rows = malloc((ds->nrows ? ds->nrows : 1) * sizeof *rows);
    if (!rows)
        return lucid_error_set(err, "out of memory");
    size_t ntrain = 0, ntest = 0;
    for (size_t r = 0; r < ds->nrows; r++)
        if (times[r] < until)
            rows[ntrain++] = r;
    for (size_t r = 0; r < ds->nrows; r++)
        if (times[r] >= until)
            rows[ntrain + ntest++] = r;
    *train = lucid_dataset_subset(ds, rows, ntrain, err);
    *test = *train ? lucid_dataset_subset(ds, rows + ntrain, ntest, err) : NULL;
    free(rows);
    if (!*train || !*test) {
        lucid_dataset_free(*train);
        *train = NULL;
        return -1;
    }
    return 0;
}
