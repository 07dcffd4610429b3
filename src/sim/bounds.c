/* bounds.c — floors on the average JCT of a trace and the metrics that
 * compare a schedule with them (bounds.h). */
#include "lucid/bounds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the single-machine relaxation: preemptive SRPT ---- */

typedef struct heap_item {
    double remaining;
    int64_t release;
} heap_item;

static void heap_push(heap_item *h, size_t *n, heap_item item)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h[parent].remaining <= item.remaining)
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = item;
}

static void heap_pop(heap_item *h, size_t *n)
{
    heap_item last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= *n)
            break;
        if (child + 1 < *n && h[child + 1].remaining < h[child].remaining)
            child++;
        if (h[child].remaining >= last.remaining)
            break;
        h[i] = h[child];
        i = child;
    }
    if (*n > 0)
        h[i] = last;
}

double lucid_srpt_mean_flow(const int64_t *release, const double *work, size_t n, double capacity,
                            int *ok)
{
    *ok = 0;
    if (n == 0 || capacity <= 0)
        return 0;
    heap_item *h = malloc(n * sizeof *h);
    if (!h)
        return 0;
    size_t size = 0, next = 0;
    double t = (double)release[0], flow = 0;
    while (next < n || size > 0) {
        double arrival = next < n ? (double)release[next] : INFINITY;
        if (size == 0) {
            t = t > arrival ? t : arrival;
        } else {
            /* Only the top runs: it stays the smallest while it shrinks. */
            double finish = t + h[0].remaining / capacity;
            if (finish <= arrival) {
                t = finish;
                flow += t - (double)h[0].release;
                heap_pop(h, &size);
                continue;
            }
            h[0].remaining -= (arrival - t) * capacity;
            t = arrival;
        }
        while (next < n && (double)release[next] <= t) {
            heap_push(h, &size, (heap_item){work[next], release[next]});
            next++;
        }
    }
    free(h);
    *ok = 1;
    return flow / (double)n;
}

int lucid_bounds_compute(const lucid_trace *trace, const lucid_vcs *vcs, int32_t gpus_per_node,
                         lucid_bounds *out, lucid_error *err)
{
    memset(out, 0, sizeof *out);
    size_t n = trace->njobs;
    out->vc = calloc((size_t)vcs->count + 1, sizeof *out->vc);
    int64_t *release = malloc((n + 1) * sizeof *release);
    double *work = malloc((n + 1) * sizeof *work);
    if (!out->vc || !release || !work) {
        free(release);
        free(work);
        lucid_bounds_free(out);
        return lucid_error_set(err, "out of memory");
    }
    out->nvcs = vcs->count;
    double duration_sum = 0;
    for (int32_t v = 0; v < vcs->count; v++) {
        lucid_vc_bound *b = &out->vc[v];
        b->gpus = (int64_t)vcs->nodes[v] * gpus_per_node;
        out->gpus += b->gpus;
        size_t k = 0;
        double sum = 0;
        /* The trace is sorted by submit time, so each VC's jobs are too. */
        for (size_t i = 0; i < n; i++) {
            const lucid_job *job = &trace->jobs[i];
            if (job->vc != v)
                continue;
            release[k] = job->submit_time;
            work[k] = (double)job->gpu_num * (double)job->duration;
            sum += (double)job->duration;
            k++;
        }
        b->jobs = (int64_t)k;
        if (k == 0)
            continue;
        b->mean_duration = sum / (double)k;
        int ok;
        b->relaxation = lucid_srpt_mean_flow(release, work, k, (double)b->gpus, &ok);
        if (!ok && b->gpus > 0) {
            free(release);
            free(work);
            lucid_bounds_free(out);
            return lucid_error_set(err, "out of memory");
        }
        double floor = b->relaxation > b->mean_duration ? b->relaxation : b->mean_duration;
        out->per_vc += floor * (double)k;
        duration_sum += sum;
        out->jobs += (int64_t)k;
    }
    if (out->jobs > 0) {
        out->mean_duration = duration_sum / (double)out->jobs;
        out->per_vc /= (double)out->jobs;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            release[k] = trace->jobs[i].submit_time;
            work[k++] = (double)trace->jobs[i].gpu_num * (double)trace->jobs[i].duration;
        }
        int ok;
        double pooled = lucid_srpt_mean_flow(release, work, k, (double)out->gpus, &ok);
        out->pooled = pooled > out->mean_duration ? pooled : out->mean_duration;
    }
    free(release);
    free(work);
    return 0;
}

void lucid_bounds_free(lucid_bounds *b)
{
    free(b->vc);
    memset(b, 0, sizeof *b);
}

/* ---- per-schedule metrics ---- */

static double jain(const double *x, size_t n)
{
    double sum = 0, squares = 0;
    for (size_t i = 0; i < n; i++) {
        sum += x[i];
        squares += x[i] * x[i];
    }
    return n == 0 || squares == 0 ? NAN : sum * sum / ((double)n * squares);
}

/* Mean bounded slowdown per group (user or VC id), then Jain's index over
 * the groups that have jobs. */
static double jain_of_groups(const int32_t *group, const double *bsld, size_t n, int32_t ngroups)
{
    if (ngroups <= 0)
        return NAN;
    double *sum = calloc((size_t)ngroups, sizeof *sum), *mean = malloc((size_t)ngroups * sizeof *mean);
    int64_t *count = calloc((size_t)ngroups, sizeof *count);
    double j = NAN;
    if (sum && mean && count) {
        for (size_t i = 0; i < n; i++)
            if (group[i] >= 0 && group[i] < ngroups) {
                sum[group[i]] += bsld[i];
                count[group[i]]++;
            }
        size_t k = 0;
        for (int32_t g = 0; g < ngroups; g++)
            if (count[g] > 0)
                mean[k++] = sum[g] / (double)count[g];
        j = k >= 2 ? jain(mean, k) : NAN;
    }
    free(sum);
    free(mean);
    free(count);
    return j;
}

double lucid_gpu_utilisation(const lucid_sim_result *result, int32_t vc)
{
    if (!result->gpu_use || vc >= result->ngpu_use)
        return NAN;
    if (vc >= 0) {
        const lucid_gpu_use *u = &result->gpu_use[vc];
        return u->capacity > 0 ? u->busy / u->capacity : NAN;
    }
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    for (int32_t v = 0; v < result->ngpu_use; v++)
        if (result->gpu_use[v].first >= 0) {
            t0 = result->gpu_use[v].first < t0 ? result->gpu_use[v].first : t0;
            t1 = result->gpu_use[v].last > t1 ? result->gpu_use[v].last : t1;
        }
    if (t0 == INT64_MAX)
        return NAN;
    double busy = 0, capacity = 0;
    for (int32_t v = 0; v < result->ngpu_use; v++) {
        const lucid_gpu_use *u = &result->gpu_use[v];
        if (u->first < 0) {
            capacity += (double)u->gpus_first * (double)(t1 - t0);
            continue;
        }
        busy += u->busy;
        capacity += u->capacity + (double)u->gpus_first * (double)(u->first - t0) +
                    (double)u->gpus_last * (double)(t1 - u->last);
    }
    return capacity > 0 ? busy / capacity : NAN;
}

int lucid_metrics_compute(const lucid_trace *trace, const lucid_sim_result *result, int32_t vc,
                          lucid_metrics *out)
{
    return lucid_metrics_compute_sized(trace, result, vc, INT32_MIN, INT32_MAX, out);
}

/* The metrics of what `bsld` (n jobs, in trace order, with their users)
 * holds, sums given; reorders bsld (the percentile) after the fairness. */
static void finish_metrics(const lucid_trace *trace, double *bsld, const int32_t *users, size_t n,
                           double duration_sum, double jct_sum, double bsld_sum, lucid_metrics *out)
{
    out->jobs = (int64_t)n;
    if (n == 0)
        return;
    out->floor = duration_sum / (double)n;
    out->gap = jct_sum / duration_sum - 1;
    out->bsld_mean = bsld_sum / (double)n;
    out->jain_users = trace->strings ? jain_of_groups(users, bsld, n, lucid_strtab_count(trace->strings))
                                     : NAN;
    out->bsld_p99 = lucid_percentile(bsld, n, 99);
}

int lucid_metrics_compute_sized(const lucid_trace *trace, const lucid_sim_result *result,
                                int32_t vc, int32_t min_gpus_exclusive, int32_t max_gpus,
                                lucid_metrics *out)
{
    memset(out, 0, sizeof *out);
    out->jain_users = out->jain_vcs = NAN;
    out->gpu_util = min_gpus_exclusive == INT32_MIN && max_gpus == INT32_MAX
                        ? lucid_gpu_utilisation(result, vc)
                        : NAN;
    size_t cap = trace->njobs + 1;
    double *bsld = malloc(cap * sizeof *bsld);
    int32_t *users = malloc(cap * sizeof *users), *vcs = malloc(cap * sizeof *vcs);
    int rc = -1;
    if (!bsld || !users || !vcs)
        goto done;
    double duration_sum = 0, jct_sum = 0, bsld_sum = 0;
    int32_t max_vc = -1;
    size_t n = 0;
    for (size_t i = 0; i < trace->njobs; i++) {
        const lucid_job *job = &trace->jobs[i];
        if (result->excluded[i] || (vc >= 0 && job->vc != vc) ||
            job->gpu_num <= min_gpus_exclusive || job->gpu_num > max_gpus)
            continue;
        double jct = (double)(result->run[i].end_time - job->submit_time);
        double d = (double)job->duration;
        double s = jct / (d > LUCID_BSLD_THRESHOLD ? d : LUCID_BSLD_THRESHOLD);
        bsld[n] = s > 1 ? s : 1;
        users[n] = job->user;
        vcs[n] = job->vc;
        max_vc = job->vc > max_vc ? job->vc : max_vc;
        duration_sum += d;
        jct_sum += jct;
        bsld_sum += bsld[n];
        n++;
    }
    rc = 0;
    if (vc < 0 && n > 0)
        out->jain_vcs = jain_of_groups(vcs, bsld, n, max_vc + 1);
    finish_metrics(trace, bsld, users, n, duration_sum, jct_sum, bsld_sum, out);
done:
    free(bsld);
    free(users);
    free(vcs);
    return rc;
}

int lucid_metrics_compute_vcs(const lucid_trace *trace, const lucid_sim_result *result,
                              int32_t nvcs, lucid_metrics *out)
{
    /* One pass in trace order: each VC's sums add its jobs in the order
     * lucid_metrics_compute(vc) adds them, so the results are the same
     * bits; then each VC's jobs gathered into its own segment (stable), so
     * its per-user sums run in that order too. */
    size_t cap = trace->njobs + 1, nv = (size_t)nvcs;
    double *bsld = malloc(cap * sizeof *bsld), *seg = malloc(cap * sizeof *seg);
    int32_t *users = malloc(cap * sizeof *users), *vcs = malloc(cap * sizeof *vcs);
    int32_t *seg_users = malloc(cap * sizeof *seg_users);
    size_t *first = calloc(nv + 2, sizeof *first);
    double *sums = calloc(3 * (nv + 1), sizeof *sums); /* duration, jct, bsld per VC */
    int rc = bsld && seg && users && vcs && seg_users && first && sums ? 0 : -1;
    double duration_sum = 0, jct_sum = 0, bsld_sum = 0;
    int32_t max_vc = -1;
    size_t n = 0;
    for (size_t i = 0; rc == 0 && i < trace->njobs; i++) {
        const lucid_job *job = &trace->jobs[i];
        if (result->excluded[i] || job->vc < 0 || job->vc >= nvcs)
            continue;
        double jct = (double)(result->run[i].end_time - job->submit_time);
        double d = (double)job->duration;
        double b = jct / (d > LUCID_BSLD_THRESHOLD ? d : LUCID_BSLD_THRESHOLD);
        b = b > 1 ? b : 1;
        bsld[n] = b;
        users[n] = job->user;
        vcs[n] = job->vc;
        max_vc = job->vc > max_vc ? job->vc : max_vc;
        double *v = &sums[3 * (size_t)job->vc];
        v[0] += d;
        v[1] += jct;
        v[2] += b;
        first[job->vc + 1]++;
        duration_sum += d;
        jct_sum += jct;
        bsld_sum += b;
        n++;
    }
    for (size_t v = 0; rc == 0 && v < nv; v++)
        first[v + 1] += first[v];
    for (size_t k = 0; rc == 0 && k < n; k++) {
        size_t at = first[vcs[k]]++;
        seg[at] = bsld[k];
        seg_users[at] = users[k];
    }
    for (size_t v = nv; rc == 0 && v > 0; v--) /* back to segment starts */
        first[v] = first[v - 1];
    if (rc == 0)
        first[0] = 0;
    for (size_t v = 0; rc == 0 && v <= nv; v++) {
        lucid_metrics *o = &out[v];
        memset(o, 0, sizeof *o);
        o->jain_users = o->jain_vcs = NAN;
        if (v < nv) {
            const double *sv = &sums[3 * v];
            finish_metrics(trace, seg + first[v], seg_users + first[v], first[v + 1] - first[v],
                           sv[0], sv[1], sv[2], o);
        } else {
            if (n > 0)
                o->jain_vcs = jain_of_groups(vcs, bsld, n, max_vc + 1);
            finish_metrics(trace, bsld, users, n, duration_sum, jct_sum, bsld_sum, o);
        }
        o->gpu_util = lucid_gpu_utilisation(result, v < nv ? (int32_t)v : -1);
    }
    free(bsld);
    free(seg);
    free(users);
    free(vcs);
    free(seg_users);
    free(first);
    free(sums);
    return rc;
}

void lucid_metrics_header(FILE *out)
{
    fputs(",floor,gap,bsld_mean,bsld_p99,jain_users,jain_vcs,gpu_util", out);
}

static void put(FILE *out, double v, const char *format)
{
    fputc(',', out);
    if (!isnan(v))
        fprintf(out, format, v);
}

void lucid_metrics_write(FILE *out, const lucid_metrics *m)
{
    put(out, m->floor, "%.3f");
    put(out, m->gap, "%.6f");
    put(out, m->bsld_mean, "%.6f");
    put(out, m->bsld_p99, "%.6f");
    put(out, m->jain_users, "%.6f");
    put(out, m->jain_vcs, "%.6f");
    put(out, m->gpu_util, "%.6f");
}
