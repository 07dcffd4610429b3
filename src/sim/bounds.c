/* bounds.c — floors on the average JCT of a trace and the metrics that
 * compare a schedule with them (bounds.h). */
#include "lucid/bounds.h"
#include "lucid/fairshare.h"

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

/* Running sums of a group of jobs, each job added in trace order: every
 * grouping of the same jobs (one VC, all, a size class) then gives the
 * same bits, however many groups one pass fills at once. */
typedef struct job_sums {
    int64_t n;
    double jct, queue, duration, bsld;
    double prof_s, prof_gpu_s; /* time and GPU-seconds running in Lucid's profiler */
    int64_t ftf_n, ftf_over1;  /* jobs with a finish-time fairness, those above 1 */
    double ftf_max;
} job_sums;

static void sums_add(job_sums *s, double jct, double queue, double duration, double bsld)
{
    s->n++;
    s->jct += jct;
    s->queue += queue;
    s->duration += duration;
    s->bsld += bsld;
}

/* A job's finish-time fairness into a group's sums (beside sums_add). */
static void sums_add_ftf(job_sums *s, double rho)
{
    if (isnan(rho))
        return;
    if (s->ftf_n == 0 || rho > s->ftf_max)
        s->ftf_max = rho;
    s->ftf_n++;
    s->ftf_over1 += rho > 1;
}

/* ---- finish-time fairness (Themis) ---- */

typedef struct ftf_job {
    int64_t submit, end;
    int32_t user; /* 0: no user, else string id + 1 */
    int32_t vc;
    size_t index; /* trace index */
} ftf_job;

static int by_end(const void *pa, const void *pb)
{
    const ftf_job *a = *(const ftf_job *const *)pa, *b = *(const ftf_job *const *)pb;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* One VC's jobs (in submit order): N at each submission by a sweep over
 * submissions and ends (a job is in the system on [submit, end)), then rho. */
static void ftf_vc(const lucid_trace *trace, ftf_job *jobs, ftf_job **ends, size_t n,
                   int64_t *per_user, double vc_gpus, double *rho)
{
    for (size_t i = 0; i < n; i++)
        ends[i] = &jobs[i];
    qsort(ends, n, sizeof *ends, by_end);
    int64_t users = 0;
    size_t next_end = 0;
    for (size_t i = 0; i < n;) {
        int64_t t = jobs[i].submit;
        size_t group = i;
        for (; group < n && jobs[group].submit == t; group++)
            if (per_user[jobs[group].user]++ == 0)
                users++;
        /* every job ending by t arrived by then (end >= submit): out */
        for (; next_end < n && ends[next_end]->end <= t; next_end++)
            if (--per_user[ends[next_end]->user] == 0)
                users--;
        for (; i < group; i++) {
            const lucid_job *job = &trace->jobs[jobs[i].index];
            /* its own user counts though the job ended at once */
            double slices = (double)users + (per_user[jobs[i].user] == 0 ? 1 : 0);
            double stretch = (double)job->gpu_num * slices / vc_gpus;
            double private_jct = (double)job->duration * (stretch > 1 ? stretch : 1);
            if (private_jct < 1)
                private_jct = 1;
            rho[jobs[i].index] = (double)(jobs[i].end - jobs[i].submit) / private_jct;
        }
    }
    /* per_user back to zeros for the next VC */
    for (; next_end < n; next_end++)
        per_user[ends[next_end]->user]--;
}

int lucid_finish_time_fairness(const lucid_trace *trace, const lucid_sim_result *result,
                               double *rho)
{
    size_t n = trace->njobs;
    for (size_t i = 0; i < n; i++)
        rho[i] = NAN;
    if (!result->gpu_use || n == 0)
        return 0;
    int32_t nusers = (trace->strings ? lucid_strtab_count(trace->strings) : 0) + 1;
    ftf_job *jobs = malloc(n * sizeof *jobs);
    ftf_job **ends = malloc(n * sizeof *ends);
    int64_t *per_user = calloc((size_t)nusers, sizeof *per_user);
    size_t *count = calloc((size_t)result->ngpu_use + 1, sizeof *count);
    int rc = jobs && ends && per_user && count ? 0 : -1;
    /* Jobs grouped by VC, each group in trace (submit) order. */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        int32_t vc = trace->jobs[i].vc;
        if (!result->excluded[i] && vc >= 0 && vc < result->ngpu_use &&
            result->run[i].end_time >= trace->jobs[i].submit_time)
            count[vc + 1]++;
    }
    for (int32_t v = 0; rc == 0 && v < result->ngpu_use; v++)
        count[v + 1] += count[v];
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const lucid_job *job = &trace->jobs[i];
        if (result->excluded[i] || job->vc < 0 || job->vc >= result->ngpu_use ||
            result->run[i].end_time < job->submit_time)
            continue;
        jobs[count[job->vc]++] = (ftf_job){.submit = job->submit_time,
                                          .end = result->run[i].end_time,
                                          .user = lucid_fairshare_slot(job->user, nusers),
                                          .vc = job->vc,
                                          .index = i};
    }
    size_t first = 0;
    for (int32_t v = 0; rc == 0 && v < result->ngpu_use; v++) {
        size_t last = count[v]; /* filled up to the next VC's start */
        int32_t gpus = result->gpu_use[v].gpus_base;
        if (gpus > 0)
            ftf_vc(trace, jobs + first, ends, last - first, per_user, (double)gpus, rho);
        first = last;
    }
    free(jobs);
    free(ends);
    free(per_user);
    free(count);
    return rc;
}

/* Seconds job i ran in Lucid's profiler (0: not profiled, not Lucid). */
static double profiler_seconds(const lucid_sim_result *result, size_t i)
{
    if (!result->prof || result->prof[i].start < 0)
        return 0;
    return (double)(result->prof[i].end - result->prof[i].start);
}

/* A job's profiler time into a group's sums (beside sums_add). */
static void sums_add_prof(job_sums *s, double prof_s, int32_t gpus)
{
    s->prof_s += prof_s;
    s->prof_gpu_s += prof_s * (double)gpus;
}

static double bounded_slowdown(double jct, double duration)
{
    double s = jct / (duration > LUCID_BSLD_THRESHOLD ? duration : LUCID_BSLD_THRESHOLD);
    return s > 1 ? s : 1;
}

/* Jain's index of the groups' mean bounded slowdowns (groups without jobs
 * left out; NaN for fewer than two), from each group's sums. */
static double jain_of_sums(const job_sums *g, size_t ngroups)
{
    double sum = 0, squares = 0;
    size_t k = 0;
    for (size_t i = 0; i < ngroups; i++)
        if (g[i].n > 0) {
            double mean = g[i].bsld / (double)g[i].n;
            sum += mean;
            squares += mean * mean;
            k++;
        }
    return k < 2 || squares == 0 ? NAN : sum * sum / ((double)k * squares);
}

/* The same from jobs' groups (user or VC ids) and bounded slowdowns. */
static double jain_of_groups(const int32_t *group, const double *bsld, size_t n, int32_t ngroups)
{
    if (ngroups <= 0)
        return NAN;
    job_sums *g = calloc((size_t)ngroups, sizeof *g);
    if (!g)
        return NAN;
    for (size_t i = 0; i < n; i++)
        if (group[i] >= 0 && group[i] < ngroups) {
            g[group[i]].n++;
            g[group[i]].bsld += bsld[i];
        }
    double j = jain_of_sums(g, (size_t)ngroups);
    free(g);
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

static void metrics_blank(lucid_metrics *out)
{
    memset(out, 0, sizeof *out);
    out->jain_users = out->jain_vcs = out->gpu_util = NAN;
    out->ftf_max = out->ftf_over1 = NAN;
}

/* The metrics of a group from its sums, its users' Jain index and its
 * jobs' bounded slowdowns (reordered: the percentile). */
static void metrics_of(const job_sums *s, double jain_users, double *bsld, lucid_metrics *out)
{
    out->jobs = s->n;
    if (s->n == 0)
        return;
    out->floor = s->duration / (double)s->n;
    out->gap = s->jct / s->duration - 1;
    out->bsld_mean = s->bsld / (double)s->n;
    out->jain_users = jain_users;
    out->bsld_p99 = lucid_percentile(bsld, (size_t)s->n, 99);
    if (s->ftf_n > 0) {
        out->ftf_max = s->ftf_max;
        out->ftf_over1 = (double)s->ftf_over1 / (double)s->ftf_n;
    }
}

/* The summary of a group from its sums and its jobs' queue times
 * (reordered: the percentile). */
static void summary_of(const job_sums *s, double *queues, lucid_summary *out)
{
    memset(out, 0, sizeof *out);
    out->jobs = s->n;
    if (s->n == 0)
        return;
    out->avg_jct = s->jct / (double)s->n;
    out->avg_queue = s->queue / (double)s->n;
    out->p999_queue = lucid_percentile(queues, (size_t)s->n, 99.9);
    out->avg_delay = (s->jct - s->duration) / (double)s->n;
    out->avg_profiler_s = s->prof_s / (double)s->n;
    out->profiler_gpu_s = s->prof_gpu_s;
}

static int in_range(const lucid_job *job, int32_t min_gpus_exclusive, int32_t max_gpus)
{
    return job->gpu_num > min_gpus_exclusive && job->gpu_num <= max_gpus;
}

int lucid_summarize(const lucid_trace *trace, const lucid_sim_result *result, int32_t vc,
                    int32_t min_gpus_exclusive, int32_t max_gpus, lucid_summary *out)
{
    memset(out, 0, sizeof *out);
    double *queues = malloc((trace->njobs + 1) * sizeof *queues);
    if (!queues)
        return -1;
    job_sums s = {0};
    for (size_t i = 0; i < trace->njobs; i++) {
        const lucid_job *job = &trace->jobs[i];
        if (result->excluded[i] || (vc >= 0 && job->vc != vc) ||
            !in_range(job, min_gpus_exclusive, max_gpus))
            continue;
        const lucid_jobresult *r = &result->run[i];
        queues[s.n] = r->queue;
        sums_add(&s, (double)(r->end_time - job->submit_time), r->queue, (double)job->duration, 0);
        sums_add_prof(&s, profiler_seconds(result, i), job->gpu_num);
    }
    summary_of(&s, queues, out);
    free(queues);
    return 0;
}

int lucid_metrics_compute_sized(const lucid_trace *trace, const lucid_sim_result *result,
                                int32_t vc, int32_t min_gpus_exclusive, int32_t max_gpus,
                                lucid_metrics *out)
{
    metrics_blank(out);
    if (min_gpus_exclusive == INT32_MIN && max_gpus == INT32_MAX)
        out->gpu_util = lucid_gpu_utilisation(result, vc);
    size_t cap = trace->njobs + 1;
    double *bsld = malloc(cap * sizeof *bsld);
    int32_t *users = malloc(cap * sizeof *users), *vcs = malloc(cap * sizeof *vcs);
    double *rho = malloc(cap * sizeof *rho);
    int rc = -1;
    if (!bsld || !users || !vcs || !rho || lucid_finish_time_fairness(trace, result, rho) < 0)
        goto done;
    job_sums s = {0};
    int32_t max_vc = -1;
    for (size_t i = 0; i < trace->njobs; i++) {
        const lucid_job *job = &trace->jobs[i];
        if (result->excluded[i] || (vc >= 0 && job->vc != vc) ||
            !in_range(job, min_gpus_exclusive, max_gpus))
            continue;
        double jct = (double)(result->run[i].end_time - job->submit_time);
        double d = (double)job->duration, b = bounded_slowdown(jct, d);
        bsld[s.n] = b;
        users[s.n] = job->user;
        vcs[s.n] = job->vc;
        max_vc = job->vc > max_vc ? job->vc : max_vc;
        sums_add(&s, jct, 0, d, b);
        sums_add_ftf(&s, rho[i]);
    }
    rc = 0;
    size_t n = (size_t)s.n;
    if (vc < 0 && n > 0)
        out->jain_vcs = jain_of_groups(vcs, bsld, n, max_vc + 1);
    /* (the users' index before the percentile reorders bsld) */
    double jain_users = trace->strings ? jain_of_groups(users, bsld, n,
                                                        lucid_strtab_count(trace->strings))
                                       : NAN;
    metrics_of(&s, jain_users, bsld, out);
done:
    free(bsld);
    free(users);
    free(vcs);
    free(rho);
    return rc;
}

/* Table 5's size classes: more than LUCID_LARGE_JOB_GPUS GPUs, and 1 to
 * LUCID_LARGE_JOB_GPUS (a job of no GPU is in neither). */
static int size_class(int32_t gpus)
{
    return gpus > LUCID_LARGE_JOB_GPUS ? 0 : gpus > 0 ? 1 : -1;
}

/* Every figure of one policy's results at once, in two passes over the
 * jobs in trace order: sums[v] / metrics[v] for VC v < nvcs and [nvcs] for
 * all jobs (summary.csv), cls_sums[c] / cls_metrics[c] for the size
 * classes (Table 5).  The first pass adds every sum (per VC, all, class,
 * and per user and per VC within each class for the fairness indices);
 * the second gathers queue times and bounded slowdowns into each VC's
 * segment (stable, so a VC's per-user sums run in trace order) and each
 * class's, for the percentiles: the bits of one lucid_summarize and one
 * lucid_metrics_compute_sized call per row, which each read every job and
 * allocated their own arrays (at 10M jobs, ~20 arrays of 40-80 MB, each
 * faulted in afresh). */
static int policy_figures(const lucid_trace *trace, const lucid_sim_result *result, int32_t nvcs,
                          lucid_summary *sums, lucid_metrics *metrics,
                          lucid_summary cls_sums[LUCID_SIZE_CLASSES],
                          lucid_metrics cls_metrics[LUCID_SIZE_CLASSES])
{
    enum { NC = LUCID_SIZE_CLASSES };
    size_t nv = nvcs > 0 ? (size_t)nvcs : 0;
    int32_t nusers = trace->strings ? lucid_strtab_count(trace->strings) : 0;
    size_t nu = nusers > 0 ? (size_t)nusers : 0;
    /* Sums: VCs [0, nv), all (nv), classes (nv + 1 + c), each class's VCs
     * (nv + 1 + NC + c * nv + v); users: all (u), each class's (nu + c * nu + u). */
    job_sums *g = calloc(nv + 1 + NC + NC * nv, sizeof *g);
    job_sums *ug = calloc((1 + NC) * nu + 1, sizeof *ug);
    size_t *first = calloc(nv + 1 + NC + 1, sizeof *first);
    double *rho = malloc((trace->njobs + 1) * sizeof *rho);
    int rc = g && ug && first && rho ? 0 : -1;
    if (rc == 0)
        rc = lucid_finish_time_fairness(trace, result, rho);
    job_sums *all = g + nv, *cls = g + nv + 1, *cls_vc = g + nv + 1 + NC;
    for (size_t i = 0; rc == 0 && i < trace->njobs; i++) {
        const lucid_job *job = &trace->jobs[i];
        if (result->excluded[i] || job->vc < 0 || job->vc >= nvcs)
            continue;
        const lucid_jobresult *r = &result->run[i];
        double jct = (double)(r->end_time - job->submit_time);
        double d = (double)job->duration, b = bounded_slowdown(jct, d);
        double ps = profiler_seconds(result, i);
        sums_add(&g[job->vc], jct, r->queue, d, b);
        sums_add(all, jct, r->queue, d, b);
        sums_add_prof(&g[job->vc], ps, job->gpu_num);
        sums_add_prof(all, ps, job->gpu_num);
        sums_add_ftf(&g[job->vc], rho[i]);
        sums_add_ftf(all, rho[i]);
        int c = size_class(job->gpu_num);
        if (c >= 0) {
            sums_add(&cls[c], jct, r->queue, d, b);
            sums_add_ftf(&cls[c], rho[i]);
            sums_add_prof(&cls[c], ps, job->gpu_num);
            sums_add(&cls_vc[(size_t)c * nv + (size_t)job->vc], jct, r->queue, d, b);
        }
        if (job->user >= 0 && job->user < nusers) {
            sums_add(&ug[job->user], jct, r->queue, d, b);
            if (c >= 0)
                sums_add(&ug[nu + (size_t)c * nu + (size_t)job->user], jct, r->queue, d, b);
        }
    }
    /* Segment starts: VCs from 0, classes from 0 in their own arrays. */
    size_t nall = rc == 0 ? (size_t)all->n : 0, ncls = 0;
    for (size_t v = 0; rc == 0 && v < nv; v++)
        first[v + 1] = first[v] + (size_t)g[v].n;
    for (int c = 0; rc == 0 && c < NC; c++) {
        first[nv + 1 + (size_t)c] = ncls;
        ncls += (size_t)cls[c].n;
    }
    double *queue = malloc((nall + 1) * sizeof *queue), *bsld = malloc((nall + 1) * sizeof *bsld);
    int32_t *users = malloc((nall + 1) * sizeof *users);
    double *cqueue = malloc((ncls + 1) * sizeof *cqueue), *cbsld = malloc((ncls + 1) * sizeof *cbsld);
    size_t *at = calloc(nv + NC + 1, sizeof *at);
    if (!queue || !bsld || !users || !cqueue || !cbsld || !at)
        rc = -1;
    if (rc == 0) { /* the next free slot of each VC's segment, then of each class's */
        memcpy(at, first, nv * sizeof *at);
        memcpy(at + nv, first + nv + 1, NC * sizeof *at);
    }
    for (size_t i = 0; rc == 0 && i < trace->njobs; i++) {
        const lucid_job *job = &trace->jobs[i];
        if (result->excluded[i] || job->vc < 0 || job->vc >= nvcs)
            continue;
        const lucid_jobresult *r = &result->run[i];
        double b = bounded_slowdown((double)(r->end_time - job->submit_time), (double)job->duration);
        size_t k = at[job->vc]++;
        queue[k] = r->queue;
        bsld[k] = b;
        users[k] = job->user;
        int c = size_class(job->gpu_num);
        if (c >= 0) {
            k = at[nv + (size_t)c]++;
            cqueue[k] = r->queue;
            cbsld[k] = b;
        }
    }
    for (size_t v = 0; rc == 0 && v < nv; v++) {
        size_t f = first[v];
        summary_of(&g[v], queue + f, &sums[v]);
        metrics_blank(&metrics[v]);
        double ju = trace->strings ? jain_of_groups(users + f, bsld + f, (size_t)g[v].n, nusers) : NAN;
        metrics_of(&g[v], ju, bsld + f, &metrics[v]);
        metrics[v].gpu_util = lucid_gpu_utilisation(result, (int32_t)v);
    }
    if (rc == 0) { /* every job is in one VC's segment: all of them, reordered within */
        summary_of(all, queue, &sums[nv]);
        lucid_metrics *m = &metrics[nv];
        metrics_blank(m);
        if (all->n > 0)
            m->jain_vcs = jain_of_sums(g, nv);
        metrics_of(all, trace->strings ? jain_of_sums(ug, nu) : NAN, bsld, m);
        m->gpu_util = lucid_gpu_utilisation(result, -1);
    }
    for (int c = 0; rc == 0 && c < NC; c++) {
        size_t f = first[nv + 1 + (size_t)c];
        summary_of(&cls[c], cqueue + f, &cls_sums[c]);
        lucid_metrics *m = &cls_metrics[c];
        metrics_blank(m);
        if (cls[c].n > 0)
            m->jain_vcs = jain_of_sums(cls_vc + (size_t)c * nv, nv);
        metrics_of(&cls[c], trace->strings ? jain_of_sums(ug + nu + (size_t)c * nu, nu) : NAN,
                   cbsld + f, m);
    }
    free(g);
    free(ug);
    free(first);
    free(rho);
    free(queue);
    free(bsld);
    free(users);
    free(cqueue);
    free(cbsld);
    free(at);
    return rc;
}

/* policy_figures for the rows of one kind: the other kind (NULL) in a
 * scratch array, the size classes dropped. */
static int figures_of_vcs(const lucid_trace *trace, const lucid_sim_result *result, int32_t nvcs,
                          lucid_summary *sums, lucid_metrics *metrics)
{
    size_t rows = (size_t)(nvcs > 0 ? nvcs : 0) + 1;
    lucid_summary *s = sums ? sums : malloc(rows * sizeof *s);
    lucid_metrics *m = metrics ? metrics : malloc(rows * sizeof *m);
    lucid_summary cs[LUCID_SIZE_CLASSES];
    lucid_metrics cm[LUCID_SIZE_CLASSES];
    int rc = s && m ? policy_figures(trace, result, nvcs, s, m, cs, cm) : -1;
    if (!sums)
        free(s);
    if (!metrics)
        free(m);
    return rc;
}

int lucid_summarize_vcs(const lucid_trace *trace, const lucid_sim_result *result, int32_t nvcs,
                        lucid_summary *out)
{
    return figures_of_vcs(trace, result, nvcs, out, NULL);
}

int lucid_metrics_compute_vcs(const lucid_trace *trace, const lucid_sim_result *result,
                              int32_t nvcs, lucid_metrics *out)
{
    return figures_of_vcs(trace, result, nvcs, NULL, out);
}

void lucid_policy_summary_free(lucid_policy_summary *ps)
{
    free(ps->sums);
    free(ps->metrics);
    free(ps->eta_cov);
    free(ps->eta_err);
    free(ps->eta_waited);
    memset(ps, 0, sizeof *ps);
}

int lucid_policy_summary_make(lucid_policy_summary *ps, const lucid_trace *trace,
                              const lucid_vcs *vcs, const lucid_sim_result *result)
{
    memset(ps, 0, sizeof *ps);
    size_t nrows = (size_t)vcs->count + 1;
    ps->nvcs = vcs->count;
    ps->sums = malloc(nrows * sizeof *ps->sums);
    ps->metrics = malloc(nrows * sizeof *ps->metrics);
    ps->eta_cov = malloc(nrows * sizeof *ps->eta_cov);
    ps->eta_err = malloc(nrows * sizeof *ps->eta_err);
    ps->eta_waited = malloc(nrows * sizeof *ps->eta_waited);
    int rc = ps->sums && ps->metrics && ps->eta_cov && ps->eta_err && ps->eta_waited
                 ? policy_figures(trace, result, vcs->count, ps->sums, ps->metrics,
                                  ps->class_sums, ps->class_metrics)
                 : -1;
    /* (without predictions: no job counted, NaN) */
    if (rc == 0)
        lucid_eta_calibration_vcs(trace, result, vcs->count, ps->eta_cov, ps->eta_err,
                                  ps->eta_waited);
    if (rc < 0)
        lucid_policy_summary_free(ps);
    return rc;
}

void lucid_offered_load(const lucid_trace *trace, const lucid_vcs *vcs, int32_t gpus_per_node,
                        double *out)
{
    int32_t nv = vcs->count;
    for (int32_t v = 0; v <= nv; v++)
        out[v] = NAN;
    double *work = calloc((size_t)nv + 1, sizeof *work);
    int64_t *first = malloc(((size_t)nv + 1) * sizeof *first), *last = malloc(((size_t)nv + 1) * sizeof *last);
    if (work && first && last) {
        for (int32_t v = 0; v <= nv; v++) {
            first[v] = INT64_MAX;
            last[v] = INT64_MIN;
        }
        for (size_t i = 0; i < trace->njobs; i++) {
            const lucid_job *job = &trace->jobs[i];
            if (job->vc < 0 || job->vc >= nv)
                continue;
            double w = (double)job->gpu_num * (double)job->duration;
            int32_t at[2] = {job->vc, nv};
            for (int k = 0; k < 2; k++) {
                work[at[k]] += w;
                first[at[k]] = job->submit_time < first[at[k]] ? job->submit_time : first[at[k]];
                last[at[k]] = job->submit_time > last[at[k]] ? job->submit_time : last[at[k]];
            }
        }
        double all_gpus = 0;
        for (int32_t v = 0; v < nv; v++)
            all_gpus += (double)vcs->nodes[v] * gpus_per_node;
        for (int32_t v = 0; v <= nv; v++) {
            double gpus = v < nv ? (double)vcs->nodes[v] * gpus_per_node : all_gpus;
            if (last[v] > first[v] && gpus > 0)
                out[v] = work[v] / (gpus * (double)(last[v] - first[v]));
        }
    }
    free(work);
    free(first);
    free(last);
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

void lucid_metrics_ftf_header(FILE *out) { fputs(",ftf_max,ftf_over1", out); }

void lucid_metrics_ftf_write(FILE *out, const lucid_metrics *m)
{
    put(out, m->ftf_max, "%.6f");
    put(out, m->ftf_over1, "%.6f");
}
