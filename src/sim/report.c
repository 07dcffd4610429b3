/* report.c — the simulator's CSV outputs: per-job results, per-VC
 * summaries and the 60-second time series (sim.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/bounds.h"
#include "lucid/sim.h"

/* Rows are formatted into a buffer of our own and written in large blocks:
 * fprintf's format parsing was a tenth of a million-job run. */
typedef struct line_buf {
    char data[1 << 16];
    size_t len;
    FILE *out;
} line_buf;

static void flush_buf(line_buf *b)
{
    fwrite(b->data, 1, b->len, b->out);
    b->len = 0;
}

static void put_str(line_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->len + n > sizeof b->data)
        flush_buf(b);
    if (n > sizeof b->data) {
        fwrite(s, 1, n, b->out);
        return;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
}

static void put_char(line_buf *b, char c)
{
    if (b->len + 1 > sizeof b->data)
        flush_buf(b);
    b->data[b->len++] = c;
}

static void put_i64(line_buf *b, int64_t v)
{
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[n++] = '-';
    if (b->len + (size_t)n > sizeof b->data)
        flush_buf(b);
    while (n > 0)
        b->data[b->len++] = tmp[--n];
}

/* Whole numbers as integers, others with six decimals (as "%.6f"). */
static void put_number(line_buf *b, double v)
{
    if (v == (double)(int64_t)v) {
        put_i64(b, (int64_t)v);
        return;
    }
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.6f", v);
    put_str(b, tmp);
}

int lucid_write_jobs(FILE *out, const lucid_trace *trace, const lucid_vcs *vcs,
                     const lucid_sim_result *result)
{
    int lucid = (result->policy->flags & LUCID_POLICY_LUCID) != 0;
    line_buf *b = malloc(sizeof *b);
    if (!b)
        return -1;
    b->len = 0;
    b->out = out;
    /* The trace's optional columns (carry.c) go straight to the file, after
     * what the buffer holds: only traces that have them pay the flushes. */
    int carry = trace->has_user || trace->has_state || trace->has_time_limit || trace->has_gpu_type;
    put_str(b, "job_id,vc,gpu_num,submit_time,duration,start_time,end_time,queue,jct,profiled,"
               "finished_in_profiler,packed_with");
    flush_buf(b);
    lucid_carry_header(out, trace);
    put_char(b, '\n');
    for (size_t i = 0; i < trace->njobs; i++) {
        if (result->excluded[i])
            continue;
        const lucid_job *job = &trace->jobs[i];
        const lucid_jobrun *r = &result->run[i];
        put_i64(b, job->job_id);
        put_char(b, ',');
        put_str(b, lucid_vcs_name(vcs, job->vc));
        const int64_t fields[] = {job->gpu_num, job->submit_time, job->duration, r->start_time,
                                  r->end_time};
        for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
            put_char(b, ',');
            put_i64(b, fields[k]);
        }
        put_char(b, ',');
        put_number(b, r->queue);
        put_char(b, ',');
        put_i64(b, r->end_time - job->submit_time);
        put_char(b, ',');
        if (lucid) {
            put_i64(b, r->profiled);
            put_char(b, ',');
            put_i64(b, r->finished_in_profiler);
            put_char(b, ',');
        } else {
            put_str(b, ",,");
        }
        if (r->packed_with >= 0)
            put_i64(b, trace->jobs[r->packed_with].job_id);
        if (carry) {
            flush_buf(b);
            lucid_carry_row(out, trace, job);
        }
        put_char(b, '\n');
    }
    flush_buf(b);
    free(b);
    return ferror(out) ? -1 : 0;
}

int lucid_write_summary_rows(FILE *out, const lucid_trace *trace, const lucid_vcs *vcs,
                             const lucid_sim_result *result)
{
    int32_t *order = malloc(((size_t)vcs->count + 1) * sizeof *order);
    if (!order)
        return -1;
    for (int32_t v = 0; v < vcs->count; v++)
        order[v] = v;
    /* Names sort with strcmp; insertion sort avoids qsort's global context. */
    for (int32_t i = 1; i < vcs->count; i++) {
        int32_t v = order[i], k = i;
        while (k > 0 && strcmp(lucid_vcs_name(vcs, order[k - 1]), lucid_vcs_name(vcs, v)) > 0) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = v;
    }
    lucid_summary *sums = malloc(((size_t)vcs->count + 1) * sizeof *sums);
    lucid_metrics *metrics = malloc(((size_t)vcs->count + 1) * sizeof *metrics);
    int rc = sums && metrics ? lucid_summarize_vcs(trace, result, vcs->count, sums) : -1;
    /* The floor, gap, bounded slowdown and fairness columns (bounds.c). */
    if (rc == 0)
        rc = lucid_metrics_compute_vcs(trace, result, vcs->count, metrics);
    for (int32_t i = 0; i <= vcs->count && rc == 0; i++) {
        int32_t vc = i < vcs->count ? order[i] : -1;
        const lucid_summary *sm = &sums[vc >= 0 ? vc : vcs->count];
        if (vc >= 0 && sm->jobs == 0)
            continue;
        fprintf(out, "%s,%s,%lld,%.3f,%.3f,%.3f", result->policy->name,
                vc >= 0 ? lucid_vcs_name(vcs, vc) : "all", (long long)sm->jobs, sm->avg_jct,
                sm->avg_queue, sm->p999_queue);
        lucid_metrics_write(out, &metrics[vc >= 0 ? vc : vcs->count]);
        fputc('\n', out);
    }
    free(sums);
    free(metrics);
    free(order);
    return rc < 0 || ferror(out) ? -1 : 0;
}

int lucid_write_series(FILE *out, const lucid_vcs *vcs, const lucid_sim_result *result)
{
    fputs("time,vc,total_gpus,idle_gpus,pending_gpus,running_jobs,pending_jobs,packed_gpus,"
          "gpu_utilization\n",
          out);
    for (size_t i = 0; i < result->nsamples; i++) {
        const lucid_sample *s = &result->samples[i];
        double util = s->total_gpus > 0
                          ? (double)(s->total_gpus - s->idle_gpus) / (double)s->total_gpus
                          : 0.0;
        fprintf(out, "%lld,%s,%d,%d,%d,%d,%d,%d,%.3f\n", (long long)s->time,
                lucid_vcs_name(vcs, s->vc), s->total_gpus, s->idle_gpus, s->pending_gpus,
                s->running_jobs, s->pending_jobs, s->packed_gpus, util);
    }
    return ferror(out) ? -1 : 0;
}

/* Jobs whose wait is long enough for a prediction to matter. */
static int eta_counts(const lucid_trace *trace, const lucid_sim_result *result, size_t i, int32_t vc)
{
    const lucid_jobrun *r = &result->run[i];
    return !result->excluded[i] && (vc < 0 || trace->jobs[i].vc == vc) && r->start_time >= 0 &&
           result->eta_p50[i] >= 0 && r->start_time - result->eta_at[i] > 60;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void lucid_eta_calibration(const lucid_trace *trace, const lucid_sim_result *result, int32_t vc,
                           double *coverage, double *median_rel_error, int64_t *n)
{
    *coverage = *median_rel_error = NAN;
    *n = 0;
    if (!result->eta_p50)
        return;
    size_t count = 0, inside = 0;
    for (size_t i = 0; i < trace->njobs; i++)
        count += (size_t)eta_counts(trace, result, i, vc);
    double *errors = malloc((count + 1) * sizeof *errors);
    if (!errors)
        return;
    size_t k = 0;
    for (size_t i = 0; i < trace->njobs; i++) {
        if (!eta_counts(trace, result, i, vc))
            continue;
        int64_t start = result->run[i].start_time, submit = result->eta_at[i];
        inside += start >= result->eta_p10[i] && start <= result->eta_p90[i];
        double wait = (double)(start - submit);
        errors[k++] = fabs((double)(result->eta_p50[i] - submit) - wait) / wait;
    }
    if (k > 0) {
        qsort(errors, k, sizeof *errors, compare_doubles);
        *coverage = (double)inside / (double)k;
        *median_rel_error = k % 2 ? errors[k / 2] : (errors[k / 2 - 1] + errors[k / 2]) / 2;
    }
    *n = (int64_t)k;
    free(errors);
}

int lucid_write_eta(FILE *out, const lucid_trace *trace, const lucid_vcs *vcs,
                    const lucid_sim_result *result)
{
    fputs("job_id,vc,gpu_num,submit_time,predicted_at,start_time,wait,eta_p10,eta_p50,eta_p90\n",
          out);
    for (size_t i = 0; result->eta_p50 && i < trace->njobs; i++) {
        const lucid_jobrun *r = &result->run[i];
        if (result->excluded[i] || result->eta_p50[i] < 0)
            continue;
        const lucid_job *job = &trace->jobs[i];
        fprintf(out, "%lld,%s,%d,%lld,%lld,%lld,%lld,%lld,%lld,%lld\n", (long long)job->job_id,
                lucid_vcs_name(vcs, job->vc), job->gpu_num, (long long)job->submit_time,
                (long long)result->eta_at[i], (long long)r->start_time, (long long)(r->start_time - job->submit_time),
                (long long)result->eta_p10[i], (long long)result->eta_p50[i],
                (long long)result->eta_p90[i]);
    }
    return ferror(out) ? -1 : 0;
}
