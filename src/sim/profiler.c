/* profiler.c — Lucid's two-dimensional profiler (spec §4.5, profiling
 * pass): every job of up to `nodes x factor` GPUs first runs on a small
 * profiling cluster in least-GPU-first order (the core's
 * lucid_policy_profiler, whose order lucidd's profiling step shares), for at
 * most the time limit; jobs that finish within it are done.  With auto-scaling the profiler
 * borrows one node when more than 10 jobs wait and gives it back when its
 * queue is short, the node is idle and the forecast says load will be low. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define TEMP_NODE_LABEL 9999
/* Arrivals between two looks for working records to give back (at least:
 * a look costs one pass over the jobs in the profiler). */
#define RELEASE_EVERY 4096

/* The pass's working records, one per trace job; a prefix of them
 * (rel.done) is done with: their runs copied out, the records released. */
typedef struct work_records {
    lucid_jobrun *run;
    lucid_prof_run *out;
    lucid_released rel;
} work_records;

static void copy_out(work_records *w, const lucid_trace *trace, const unsigned char *excluded,
                     int64_t gpu_limit, size_t upto)
{
    for (size_t i = w->rel.done; i < upto; i++) {
        int eligible = !excluded[i] && trace->jobs[i].gpu_num <= gpu_limit;
        w->out[i] = (lucid_prof_run){eligible ? w->run[i].start_time : -1,
                                     eligible ? w->run[i].end_time : -1};
    }
}

/* Jobs pass through the profiler in trace order and leave it within its
 * time limit once started, so only a short stretch of records is in use:
 * those from the oldest job still queued, running or with a pending end
 * event to the newest arrival.  The records before that stretch are never
 * read again; their runs are copied out and their pages handed back
 * (lucid_released), so that the pass holds ~ the jobs in the profiler, not one
 * 144-byte record per trace job (1.4 GB at 10M jobs, Lucid's peak). */
static void release_finished(work_records *w, const lucid_sched *s, const lucid_trace *trace,
                             const unsigned char *excluded, int64_t gpu_limit, size_t next_job)
{
    size_t low = next_job;
    int32_t held = lucid_sched_oldest_job(s);
    if ((size_t)held < low)
        low = (size_t)held;
    copy_out(w, trace, excluded, gpu_limit, low);
    lucid_released_upto(&w->rel, low);
}

void lucid_forecast_cursor_init(lucid_forecast_cursor *c, const lucid_forecast *fc,
                                const double *values, int64_t start, double when_empty)
{
    memset(c, 0, sizeof *c);
    c->fc = fc;
    c->values = values;
    c->start = start;
    c->when_empty = when_empty;
}

double lucid_forecast_cursor_look(lucid_forecast_cursor *c, int64_t t)
{
    if (!c->fc || c->fc->count == 0 || c->exhausted)
        return c->when_empty;
    while (c->pos < c->fc->count && c->start + c->fc->offset[c->pos] <= t)
        c->pos++;
    size_t remaining = c->fc->count - c->pos;
    if (remaining == 0) {
        c->exhausted = 1;
        return NAN;
    }
    size_t n = remaining >= 6 ? 5 : remaining;
    double sum = 0;
    for (size_t k = 0; k < n; k++)
        sum += c->values[c->pos + k];
    return sum / (double)n;
}

typedef struct profiler {
    lucid_sched s;
    const lucid_sim_config *cfg;
    lucid_forecast_cursor forecast;
    int32_t temp_slot;   /* slot of the borrowed node, -1 if none */
    int64_t forced;      /* decide again at this step (after a capacity change) */
    lucid_profile_log *log;
} profiler;

static int log_scaling(profiler *p, int32_t delta)
{
    lucid_profile_log *log = p->log;
    size_t cap = log->count;
    int64_t *times = realloc(log->times, (cap + 1) * sizeof *times);
    if (!times)
        return -1;
    log->times = times;
    int32_t *deltas = realloc(log->deltas, (cap + 1) * sizeof *deltas);
    if (!deltas)
        return -1;
    log->deltas = deltas;
    log->times[log->count] = p->s.now;
    log->deltas[log->count] = delta;
    log->count++;
    return 0;
}

static int node_idle(const lucid_cluster *c, int32_t slot)
{
    return slot >= 0 && c->nodes[slot].alive && c->nodes[slot].free == c->gpus_per_node;
}

/* The reference's scaling checks, after placement in the step. */
static int autoscale(profiler *p)
{
    const lucid_sim_lucid_config *lc = &p->cfg->lucid;
    lucid_sched *s = &p->s;
    int64_t gpu_limit = (int64_t)lc->profiler_nodes * lc->profiler_factor;
    if (s->now % 10 == 0 && s->qlen > (size_t)lc->scale_up_queue && p->temp_slot < 0) {
        p->temp_slot = lucid_cluster_add_node(&s->cluster, TEMP_NODE_LABEL);
        if (p->temp_slot < 0 || log_scaling(p, +1) < 0)
            return -1;
        p->forced = s->now + 1; /* the new node is used from the next step */
    }
    if (s->now % 100 == 0 && s->qlen < (size_t)lc->scale_down_queue && p->temp_slot >= 0 &&
        node_idle(&s->cluster, p->temp_slot)) {
        double future = lucid_forecast_cursor_look(&p->forecast, s->now);
        if (future <= lc->scale_down_factor * (double)gpu_limit) {
            lucid_cluster_remove_node(&s->cluster, p->temp_slot);
            p->temp_slot = -1;
            if (log_scaling(p, -1) < 0)
                return -1;
        }
    }
    return 0;
}

static int64_t next_multiple(int64_t t, int64_t m)
{
    int64_t r = ((t % m) + m) % m;
    return r == 0 ? t : t + (m - r);
}

static int64_t next_scaling_check(const profiler *p)
{
    const lucid_sim_lucid_config *lc = &p->cfg->lucid;
    const lucid_sched *s = &p->s;
    if (!lc->profiler_autoscale)
        return LUCID_NEVER;
    if (p->temp_slot < 0 && s->qlen > (size_t)lc->scale_up_queue)
        return next_multiple(s->now + 1, 10);
    if (p->temp_slot >= 0 && s->qlen < (size_t)lc->scale_down_queue &&
        node_idle(&s->cluster, p->temp_slot))
        return next_multiple(s->now + 1, 100);
    return LUCID_NEVER;
}

int lucid_profile_pass(const lucid_sim_config *cfg, const lucid_sim_inputs *in,
                       const unsigned char *excluded, lucid_prof_run **prof,
                       lucid_profile_log *log, lucid_error *err)
{
    *prof = NULL;
    const lucid_trace *trace = in->trace;
    const lucid_sim_lucid_config *lc = &cfg->lucid;
    memset(log, 0, sizeof *log);
    profiler p;
    memset(&p, 0, sizeof p);
    p.cfg = cfg;
    p.log = log;
    p.temp_slot = -1;
    p.forced = LUCID_NEVER;
    lucid_forecast_cursor_init(&p.forecast, in->forecast,
                               in->forecast ? in->forecast->pred_gpu_num : NULL, cfg->start, -1);
    /* Working records for the pass, indexed by trace position (the
     * profiler's one cluster serves every VC); a record is set up when its
     * job arrives, so those of jobs never profiled stay untouched pages. */
    lucid_jobrun *run = calloc(trace->njobs + 1, sizeof *run);
    lucid_prof_run *out = malloc((trace->njobs + 1) * sizeof *out);
    if (!run || !out) {
        free(run);
        free(out);
        return lucid_error_set(err, "out of memory");
    }
    work_records w = {.run = run, .out = out};
    lucid_released_init(&w.rel, run, sizeof *run);
    if (lucid_sched_init(&p.s, trace->jobs, run, -1, lc->profiler_nodes, cfg->gpus_per_node,
                         cfg->placer, &lucid_policy_profiler, cfg->sem, cfg->seed, err) < 0) {
        free(run);
        free(out);
        return -1;
    }
    size_t arrivals = 0, next_release = RELEASE_EVERY;
    int64_t gpu_limit = (int64_t)lc->profiler_nodes * lc->profiler_factor;
    size_t next_job = 0;
    int64_t active = 0; /* queued or running in the profiler */
    int rc = 0;
    for (;;) {
        while (next_job < trace->njobs &&
               (excluded[next_job] || trace->jobs[next_job].gpu_num > gpu_limit))
            next_job++;
        int64_t t = LUCID_NEVER;
        if (next_job < trace->njobs)
            t = trace->jobs[next_job].submit_time;
        int64_t end = lucid_sched_next_end(&p.s);
        if (end < t)
            t = end;
        if (p.forced < t)
            t = p.forced;
        int64_t check = next_scaling_check(&p);
        if ((active > 0 || next_job < trace->njobs) && check < t)
            t = check;
        if (t == LUCID_NEVER)
            break;
        p.forced = LUCID_NEVER;
        active -= lucid_sched_finish_due(&p.s, t);
        while (next_job < trace->njobs && (excluded[next_job] ||
                                           trace->jobs[next_job].gpu_num > gpu_limit ||
                                           trace->jobs[next_job].submit_time == t)) {
            if (!excluded[next_job] && trace->jobs[next_job].gpu_num <= gpu_limit) {
                int32_t job = (int32_t)next_job;
                int64_t d = trace->jobs[job].duration;
                run[job] = (lucid_jobrun){0};
                run[job].start_time = run[job].end_time = -1;
                run[job].partner = run[job].packed_with = run[job].packed_onto = -1;
                run[job].exclusive = 1;
                run[job].status = LUCID_WAITING;
                /* A job that leaves keeps its GPUs for the overhead too (a
                 * live profiler's limit checked per tick, Slurm's requeue
                 * and epilog): its run, and so its arrival in main's
                 * queue, end that much later. */
                run[job].remain = (double)(d <= lc->profiler_time_limit
                                               ? d
                                               : lc->profiler_time_limit + lc->profiler_overhead);
                run[job].rate = 1.0;
                if (lucid_policy_profiler.arrive(&p.s, job) < 0) {
                    rc = lucid_error_set(err, "out of memory");
                    break;
                }
                active++;
                arrivals++;
            }
            next_job++;
        }
        if (rc < 0)
            break;
        if (arrivals >= next_release) {
            release_finished(&w, &p.s, trace, excluded, gpu_limit, next_job);
            size_t look = (size_t)active > RELEASE_EVERY ? (size_t)active : RELEASE_EVERY;
            next_release = arrivals + look;
        }
        p.s.changed = 0;
        lucid_policy_profiler.decide(&p.s);
        if (lc->profiler_autoscale && autoscale(&p) < 0) {
            rc = lucid_error_set(err, "out of memory");
            break;
        }
    }
    if (rc == 0 && (p.s.qlen > 0 || p.s.nrunning > 0))
        rc = lucid_error_set(err, "profiler: %zu jobs never finished profiling", p.s.qlen);
    lucid_sched_free(&p.s);
    if (rc == 0)
        copy_out(&w, trace, excluded, gpu_limit, trace->njobs);
    lucid_released_end(&w.rel);
    free(run);
    if (rc < 0) {
        free(out);
        lucid_profile_log_free(log);
        return rc;
    }
    *prof = out;
    return 0;
}

void lucid_profile_log_free(lucid_profile_log *log)
{
    free(log->times);
    free(log->deltas);
    memset(log, 0, sizeof *log);
}
