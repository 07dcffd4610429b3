/* why.c — explanations of one job's schedule: re-run the job's VC under the
 * policy with an observer (sim.h) that classifies, at every visited step
 * while the job waits, why it did not start, and records how it started.
 * Consecutive steps with the same reason become one interval. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/backfill.h"
#include "lucid/sim.h"
#include "lucid/util.h"
#include "sim_internal.h"

/* One waiting interval with one reason; the capacity it saw over the
 * interval goes into ranges (the counts change at every step and would
 * cut the interval into pieces that say the same). */
typedef struct wait_span {
    int64_t from, to;
    char reason[320];
    int64_t free_lo, free_hi;   /* free GPUs in the VC */
    int32_t whole_lo, whole_hi; /* nodes with every GPU free */
    int32_t frag_hi;            /* most free GPUs on one node */
    int64_t ahead_first, ahead_last; /* jobs ahead of it in the queue */
    char ahead_ids[96];         /* the first jobs ahead when the interval began */
} wait_span;

typedef struct why_state {
    const lucid_sim_inputs *in;
    const int64_t *calendar; /* trace second -> Unix time offset, or NULL */
    wait_span *spans;
    size_t nspans, cap;
    int64_t last_step;
    int started;
    int32_t packed_onto;
    double forecast;                      /* mean forecast behind the switch, NaN if none */
    double priority_job, priority_target; /* Lucid's priorities when it was packed */
} why_state;

static int32_t largest_free_node(const lucid_cluster *c)
{
    for (int32_t f = c->gpus_per_node; f >= 1; f--)
        if (c->bucket_count[f] > 0)
            return f;
    return 0;
}

static size_t queue_position(const lucid_sched *s, int32_t job)
{
    for (size_t i = 0; i < s->qlen; i++)
        if (s->queue[i] == job)
            return i;
    return s->qlen;
}

/* Lucid blocks at the head of its queue only while packing is off. */
static int blocks_at_head(const lucid_sched *s)
{
    if (s->policy->flags & LUCID_POLICY_HEAD_OF_LINE)
        return 1;
    return s->lucid && !lucid_packing_switch_at(s->lucid, s->now);
}

/* With backfill, why a job waits in one sentence: "waits for 16 GPUs;
 * reserved for it from ~14:20 on n3,n4; 3 jobs ahead of it". */
static void backfill_reason(const lucid_sched *s, int32_t job, const int64_t *calendar, char *out,
                            size_t size)
{
    const lucid_job *j = &s->jobs[job];
    size_t pos = queue_position(s, job);
    char nodes[96], when[40];
    int64_t at;
    /* (No free-GPU count: it changes at every step and would cut the
     * waiting interval into pieces that say the same.) */
    int n = snprintf(out, size, "waits for %d GPU%s", j->gpu_num, j->gpu_num == 1 ? "" : "s");
    if (n < 0 || (size_t)n >= size)
        return;
    if (lucid_backfill_reservation(s, job, &at, nodes, sizeof nodes)) {
        if (calendar) {
            char full[32];
            lucid_time_format(at + *calendar, full, sizeof full); /* YYYY-MM-DD HH:MM:SS */
            snprintf(when, sizeof when, "~%.5s UTC", strlen(full) >= 16 ? full + 11 : full);
        } else {
            snprintf(when, sizeof when, "~%lld", (long long)at);
        }
        n += snprintf(out + n, size - (size_t)n, "; reserved for it from %s on %s", when, nodes);
    } else if ((size_t)n < size) {
        n += snprintf(out + n, size - (size_t)n, "; no reservation (%s)",
                      s->backfill->cfg.mode == LUCID_BACKFILL_EASY
                          ? "EASY: one job ahead holds it; starts early only where that one is not delayed"
                          : "none fits yet");
    }
    if (n >= 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, "; %zu job%s ahead of it", pos, pos == 1 ? "" : "s");
}

static void waiting_reason(const lucid_sched *s, int32_t job, const int64_t *calendar, char *out,
                           size_t size)
{
    const lucid_job *j = &s->jobs[job];
    if (s->backfill) {
        backfill_reason(s, job, calendar, out, size);
        return;
    }
    size_t pos = queue_position(s, job);
    const lucid_cluster *c = &s->cluster;
    int32_t largest = largest_free_node(c);
    if (pos > 0 && blocks_at_head(s)) {
        const lucid_job *head = &s->jobs[s->queue[0]];
        snprintf(out, size,
                 "behind job %lld at the head of the queue (%d GPUs), which did not fit: the "
                 "queue does not backfill",
                 (long long)head->job_id, head->gpu_num);
        return;
    }
    (void)largest;
    int64_t period = s->policy->decision_period;
    if (period > 0 && s->now % period != 0) {
        snprintf(out, size, "%s starts jobs only at multiples of %lld s", s->policy->name,
                 (long long)period);
        return;
    }
    if (s->lucid && lucid_packing_switch_at(s->lucid, s->now) && j->gpu_num <= LUCID_PACK_MAX_GPUS)
        snprintf(out, size,
                 "needs %d GPU%s on one node, and no running job of %d GPUs it may share with",
                 j->gpu_num, j->gpu_num == 1 ? "" : "s", j->gpu_num);
    else if (j->gpu_num > c->gpus_per_node)
        snprintf(out, size, "needs %d GPUs: %d whole nodes%s", j->gpu_num,
                 j->gpu_num / c->gpus_per_node,
                 j->gpu_num % c->gpus_per_node ? " and part of another" : "");
    else
        snprintf(out, size, "needs %d GPU%s on one node", j->gpu_num, j->gpu_num == 1 ? "" : "s");
}

static int32_t whole_free_nodes(const lucid_cluster *c)
{
    return c->bucket_count[c->gpus_per_node];
}

/* Whether the free capacity could hold the job now (one node with its
 * GPUs, or enough whole nodes): then only a decision grid keeps it waiting. */
static int fits_now(const lucid_sched *s, int32_t job)
{
    const lucid_cluster *c = &s->cluster;
    int32_t g = s->jobs[job].gpu_num, G = c->gpus_per_node;
    if (g <= G)
        return largest_free_node(c) >= g;
    return whole_free_nodes(c) >= (g + G - 1) / G;
}

/* The capacity and queue of one more step of an interval. */
static void span_see(wait_span *sp, const lucid_sched *s, int32_t job)
{
    const lucid_cluster *c = &s->cluster;
    int32_t whole = whole_free_nodes(c), frag = largest_free_node(c);
    sp->free_lo = c->free_gpus < sp->free_lo ? c->free_gpus : sp->free_lo;
    sp->free_hi = c->free_gpus > sp->free_hi ? c->free_gpus : sp->free_hi;
    sp->whole_lo = whole < sp->whole_lo ? whole : sp->whole_lo;
    sp->whole_hi = whole > sp->whole_hi ? whole : sp->whole_hi;
    sp->frag_hi = frag > sp->frag_hi ? frag : sp->frag_hi;
    sp->ahead_last = (int64_t)queue_position(s, job);
}

/* An interval's first step: the ranges start there, and the first jobs
 * ahead of it are named. */
static void span_start(wait_span *sp, const lucid_sched *s, int32_t job)
{
    const lucid_cluster *c = &s->cluster;
    sp->free_lo = sp->free_hi = c->free_gpus;
    sp->whole_lo = sp->whole_hi = whole_free_nodes(c);
    sp->frag_hi = largest_free_node(c);
    size_t pos = queue_position(s, job);
    sp->ahead_first = sp->ahead_last = (int64_t)pos;
    size_t used = 0;
    for (size_t i = 0; i < pos && i < 3 && used < sizeof sp->ahead_ids; i++)
        used += (size_t)snprintf(sp->ahead_ids + used, sizeof sp->ahead_ids - used, "%s%lld",
                                 i ? ", " : "", (long long)s->jobs[s->queue[i]].job_id);
    if (pos > 3 && used < sizeof sp->ahead_ids)
        snprintf(sp->ahead_ids + used, sizeof sp->ahead_ids - used, ", ...");
}

static void observe(void *user, const lucid_sched *s, int32_t job)
{
    why_state *w = user;
    const lucid_jobrun *r = &s->run[job];
    wait_span *last = w->nspans > 0 ? &w->spans[w->nspans - 1] : NULL;
    if (r->status == LUCID_PENDING) {
        /* A policy that starts jobs only every `period` seconds decides
         * nothing in between: those steps keep the interval going. */
        int64_t period = s->policy->decision_period;
        if (period > 0 && s->now % period != 0 && last && last->to < 0 && !fits_now(s, job)) {
            span_see(last, s, job);
            return;
        }
        char reason[320];
        waiting_reason(s, job, w->calendar, reason, sizeof reason);
        if (last && last->to < 0) {
            if (strcmp(last->reason, reason) == 0) {
                span_see(last, s, job); /* the same reason goes on */
                return;
            }
            last->to = s->now;
        }
        if (LUCID_GROW(w->spans, w->cap, w->nspans + 1) < 0)
            return;
        wait_span *sp = &w->spans[w->nspans++];
        memset(sp, 0, sizeof *sp);
        sp->from = s->now;
        sp->to = -1;
        snprintf(sp->reason, sizeof sp->reason, "%s", reason);
        span_start(sp, s, job);
        return;
    }
    if (r->status != LUCID_RUNNING)
        return;
    if (last && last->to < 0)
        last->to = s->now;
    if (!w->started && r->start_time == s->now) {
        w->started = 1;
        /* s is the VC's: its job indices are VC-local (sim.h) */
        w->packed_onto = r->packed_onto < 0
                             ? -1
                             : (int32_t)lucid_trace_find(w->in->trace, s->jobs[r->packed_onto].job_id);
        if (r->packed_onto >= 0 && s->priority) {
            w->priority_job = s->priority[job];
            w->priority_target = s->priority[r->packed_onto];
        }
        w->forecast = NAN;
        if (s->lucid && s->lucid->forecast) {
            /* The switch was last set at the latest multiple of 100 s. */
            int64_t at = s->now - ((s->now % 100) + 100) % 100;
            lucid_forecast_cursor cursor;
            lucid_forecast_cursor_init(&cursor, s->lucid->forecast,
                                       s->lucid->forecast->pred_gpu_job, s->lucid->forecast_start, 10);
            w->forecast = lucid_forecast_cursor_look(&cursor, at);
        }
    }
}

static int32_t share_of(const lucid_sim_inputs *in, int32_t job)
{
    if (!in->sharing)
        return 2;
    int64_t row = lucid_sharing_find(in->sharing, &in->trace->jobs[job].workload);
    return row >= 0 ? in->sharing->rows[row].label : 2;
}

/* " (2020-09-01 00:02:34 UTC)" for trace second t when the trace's
 * calendar is known (calendar = t's offset to Unix time), else "". */
static const char *date_of(const int64_t *calendar, int64_t t, char *buf, size_t size)
{
    if (!calendar) {
        buf[0] = '\0';
        return buf;
    }
    char when[32];
    lucid_time_format(t + *calendar, when, sizeof when);
    snprintf(buf, size, " (%s UTC)", when);
    return buf;
}

/* The same for an interval: "<before>2020-09-01 00:02:34 - 2020-09-01
 * 03:00:00 UTC<after>", or "" when the calendar is not known. */
static const char *dates_of(const int64_t *calendar, int64_t from, int64_t to, const char *before,
                            const char *after, char *buf, size_t size)
{
    if (!calendar) {
        buf[0] = '\0';
        return buf;
    }
    char a[32], b[32];
    lucid_time_format(from + *calendar, a, sizeof a);
    lucid_time_format(to + *calendar, b, sizeof b);
    snprintf(buf, size, "%s%s - %s UTC%s", before, a, b, after);
    return buf;
}

/* One interval's line: when, why, what capacity was free meanwhile
 * (GPUs, whole nodes, the largest fragment) and who was ahead. */
static void print_span(FILE *out, const wait_span *sp, int64_t to, const int64_t *calendar)
{
    char d1[80];
    fprintf(out, "waited %lld-%lld (%lld s%s): %s; free meanwhile: ", (long long)sp->from,
            (long long)to, (long long)(to - sp->from),
            dates_of(calendar, sp->from, to, "; ", "", d1, sizeof d1), sp->reason);
    if (sp->free_lo == sp->free_hi)
        fprintf(out, "%lld GPUs", (long long)sp->free_lo);
    else
        fprintf(out, "%lld-%lld GPUs", (long long)sp->free_lo, (long long)sp->free_hi);
    if (sp->whole_lo == sp->whole_hi)
        fprintf(out, ", %d whole nodes", sp->whole_lo);
    else
        fprintf(out, ", %d-%d whole nodes", sp->whole_lo, sp->whole_hi);
    fprintf(out, ", at most %d on one node", sp->frag_hi);
    if (sp->ahead_first > 0)
        fprintf(out, "; %lld job%s ahead (%s)", (long long)sp->ahead_first,
                sp->ahead_first == 1 ? "" : "s", sp->ahead_ids);
    if (sp->ahead_last != sp->ahead_first)
        fprintf(out, ", %lld at the end", (long long)sp->ahead_last);
    fputc('\n', out);
}

/* The waiting intervals: each one when there are few; past WAIT_LINES, the
 * first and last few and one line for those between (a job that waited a
 * day may see hundreds of head-of-line changes). */
#define WAIT_LINES 8
static void print_waits(FILE *out, const why_state *w, int64_t start, const int64_t *calendar)
{
    size_t n = w->nspans, keep = WAIT_LINES / 2;
    for (size_t k = 0; k < n; k++) {
        const wait_span *sp = &w->spans[k];
        int64_t to = sp->to >= 0 ? sp->to : start;
        if (n > WAIT_LINES && k == keep) {
            /* the intervals between as one: their capacity ranges merged */
            wait_span mid = *sp;
            for (size_t m = keep + 1; m < n - keep; m++) {
                const wait_span *o = &w->spans[m];
                mid.free_lo = o->free_lo < mid.free_lo ? o->free_lo : mid.free_lo;
                mid.free_hi = o->free_hi > mid.free_hi ? o->free_hi : mid.free_hi;
                mid.whole_lo = o->whole_lo < mid.whole_lo ? o->whole_lo : mid.whole_lo;
                mid.whole_hi = o->whole_hi > mid.whole_hi ? o->whole_hi : mid.whole_hi;
                mid.frag_hi = o->frag_hi > mid.frag_hi ? o->frag_hi : mid.frag_hi;
                mid.ahead_last = o->ahead_last;
            }
            snprintf(mid.reason, sizeof mid.reason,
                     "%zu intervals (the job ahead or the reason changed at each)", n - 2 * keep);
            print_span(out, &mid, w->spans[n - keep].from, calendar);
            k = n - keep - 1;
            continue;
        }
        print_span(out, sp, to, calendar);
    }
}

int lucid_explain_job(const lucid_sim_config *cfg, const lucid_sim_inputs *in,
                      const lucid_policy_ops *policy, int64_t job, FILE *out, lucid_error *err)
{
    return lucid_explain_job_dated(cfg, in, policy, job, NULL, out, err);
}

int lucid_explain_job_dated(const lucid_sim_config *cfg_in, const lucid_sim_inputs *in,
                            const lucid_policy_ops *policy, int64_t job, const int64_t *calendar,
                            FILE *out, lucid_error *err)
{
    char d1[80], d2[80];
    const lucid_trace *tr = in->trace;
    if (job < 0 || (size_t)job >= tr->njobs)
        return lucid_error_set(err, "no such job");
    why_state w;
    memset(&w, 0, sizeof w);
    w.in = in;
    w.calendar = calendar;
    w.packed_onto = -1;
    lucid_sim_config cfg = *cfg_in;
    cfg.observe = (lucid_observer){.job = job, .policy = policy, .after_step = observe, .user = &w};
    cfg.series = 0;
    lucid_sim_result res;
    if (lucid_simulate(&cfg, in, &policy, 1, &res, NULL, NULL, err) < 0) {
        free(w.spans);
        return -1;
    }
    const lucid_job *j = &tr->jobs[job];
    const lucid_jobresult *r = &res.run[job];
    const char *vc = lucid_vcs_name(in->vcs, j->vc);
    fprintf(out, "job %lld: VC %s, %d GPUs, submitted at %lld%s, runs %lld s; policy %s (%s semantics)\n",
            (long long)j->job_id, vc, j->gpu_num, (long long)j->submit_time,
            date_of(calendar, j->submit_time, d1, sizeof d1), (long long)j->duration, policy->name,
            cfg.reference ? "reference" : "fixed");
    if (res.excluded[job]) {
        fprintf(out, "not simulated: it asks for more GPUs than VC %s has\n", vc);
        lucid_sim_result_free(&res);
        free(w.spans);
        return 0;
    }
    if ((policy->flags & LUCID_POLICY_LUCID) && r->finished_in_profiler) {
        fprintf(out, "priority: none needed: it finished in the profiler\n");
    } else if ((policy->flags & LUCID_POLICY_LUCID) && cfg.online) {
        fprintf(out, "priority: estimated duration x %d GPUs; the estimate: %s\n", j->gpu_num,
                res.estimate_why[0] ? res.estimate_why : "(not estimated)");
    } else if (policy->flags & LUCID_POLICY_ESTIMATES) {
        const double *est = (policy->flags & LUCID_POLICY_LUCID) ? in->lucid_estimates : in->qssf_estimates;
        double e = est[job];
        fprintf(out, "priority: estimated duration %.0f s%s x %d GPUs = %.0f (lower starts first)\n",
                e < 0 ? 1000.0 : e, e < 0 ? " (negative estimate counts as 1000)" : "",
                j->gpu_num, (e < 0 ? 1000.0 : e) * j->gpu_num);
    }
    if (policy->flags & LUCID_POLICY_LUCID) {
        int64_t limit = (int64_t)cfg.lucid.profiler_nodes * cfg.lucid.profiler_factor;
        if (!r->profiled)
            fprintf(out, "profiling: not profiled: %d GPUs is more than the profiler's limit of %lld\n",
                    j->gpu_num, (long long)limit);
        else
            fprintf(out,
                    "profiling: waited %lld s for the profiler, profiled %lld-%lld%s%s\n",
                    (long long)(res.prof[job].start - j->submit_time),
                    (long long)res.prof[job].start, (long long)res.prof[job].end,
                    dates_of(calendar, res.prof[job].start, res.prof[job].end, " (", ")", d1,
                             sizeof d1),
                    r->finished_in_profiler ? "; finished there (never reached the main cluster)"
                                            : "; then went to the main cluster");
    }
    print_waits(out, &w, r->start_time, calendar);
    if (!(r->finished_in_profiler && (policy->flags & LUCID_POLICY_LUCID))) {
        fprintf(out, "started at %lld%s after a queueing delay of %.0f s", (long long)r->start_time,
                date_of(calendar, r->start_time, d1, sizeof d1), r->queue);
        if (r->ckpt_times > 0)
            fprintf(out, "; preempted %d times (40-60 s of checkpoint cost each)", r->ckpt_times);
        fputc('\n', out);
    }
    if (w.packed_onto >= 0) {
        int32_t t = w.packed_onto;
        const lucid_job *pj = &tr->jobs[t];
        double p_job = w.priority_job, p_t = w.priority_target;
        fprintf(out,
                "packed: shared the %d GPUs of running job %lld: sharing scores %d + %d <= %d; GPU "
                "memory %.0f + %.0f < %.0f MiB; priority %.0f <= %.2g x %.0f; packing switch on\n",
                j->gpu_num, (long long)pj->job_id, share_of(in, (int32_t)job), share_of(in, t),
                cfg.lucid.score_sum, j->gmem == j->gmem ? j->gmem : 0,
                pj->gmem == pj->gmem ? pj->gmem : 0, cfg.lucid.gmem_limit, p_job,
                cfg.lucid.priority_ratio, p_t);
        if (w.forecast == w.forecast)
            fprintf(out, "packing switch: forecast %.2f GPU jobs per 10 minutes over the next 50 "
                         "minutes > %.2g: the cluster was expected to be busy\n",
                    w.forecast, cfg.lucid.pack_threshold);
        else
            fprintf(out, "packing switch: on (no forecast: packing always allowed)\n");
    } else if (r->packed_with >= 0) {
        fprintf(out, "packed: job %lld later shared its GPUs\n",
                (long long)tr->jobs[r->packed_with].job_id);
    }
    fprintf(out, "ended at %lld%s: JCT %lld s\n", (long long)r->end_time,
            date_of(calendar, r->end_time, d2, sizeof d2), (long long)(r->end_time - j->submit_time));
    lucid_sim_result_free(&res);
    free(w.spans);
    return 0;
}
