/* policy_tiresias.c — Tiresias (NSDI'19): discretized two-queue
 * least-attained-service, preemptive, no duration knowledge.
 *
 * Decisions only at multiples of 60 s.  Running jobs first, then waiting
 * ones, split into a high queue (attained GPU-seconds <= 18,000) and a low
 * queue, each stably ordered by submit time; then the quota pass.  Waiting
 * jobs' attained service is frozen, so between decisions the outcome only
 * changes when a running job crosses the threshold. */
#include <stdlib.h>

#include "preemptive.h"

#define TIRESIAS_INTERVAL 60
#define TIRESIAS_THRESHOLD 18000

typedef struct tiresias_state {
    lucid_preemptive scratch;
} tiresias_state;

static int tiresias_init(lucid_sched *s, lucid_error *err)
{
    s->policy_state = calloc(1, sizeof(tiresias_state));
    return s->policy_state ? 0 : lucid_error_set(err, "out of memory");
}

static void tiresias_destroy(lucid_sched *s)
{
    tiresias_state *st = s->policy_state;
    if (st)
        lucid_preemptive_free(&st->scratch);
    free(st);
    s->policy_state = NULL;
}

static int tiresias_arrive(lucid_sched *s, int32_t job)
{
    lucid_sched_mark_arrival(s, job);
    s->run[job].attained = 0;
    return lucid_sched_enqueue(s, job);
}

static void tiresias_decide(lucid_sched *s)
{
    tiresias_state *st = s->policy_state;
    if (s->now % TIRESIAS_INTERVAL != 0 || s->qlen == 0)
        return;
    size_t n = s->qlen + s->nrunning, k = 0;
    if (lucid_preemptive_reserve(&st->scratch, n) < 0)
        return;
    /* Key: queue level first (high = 0), then submit time; position keeps
     * running-before-waiting and list order on ties. */
    for (int32_t job = s->run_head; job >= 0; job = s->run[job].run_next, k++) {
        int low = lucid_sched_attained_at(s, job, s->now) > TIRESIAS_THRESHOLD;
        st->scratch.keys[k] =
            (lucid_sort_key){(double)s->jobs[job].submit_time + (low ? 1e15 : 0), k, job};
    }
    for (size_t i = 0; i < s->qlen; i++, k++) {
        int32_t job = s->queue[i];
        int low = s->run[job].attained > TIRESIAS_THRESHOLD;
        st->scratch.keys[k] =
            (lucid_sort_key){(double)s->jobs[job].submit_time + (low ? 1e15 : 0), k, job};
    }
    lucid_preemptive_stable_sort(&st->scratch, n);
    lucid_preemptive_apply(s, &st->scratch, n);
}

static int64_t next_multiple(int64_t t)
{
    int64_t m = t - (t % TIRESIAS_INTERVAL + TIRESIAS_INTERVAL) % TIRESIAS_INTERVAL;
    return m < t ? m + TIRESIAS_INTERVAL : m;
}

static int64_t tiresias_next_decision(const lucid_sched *s)
{
    if (s->qlen == 0)
        return LUCID_NEVER;
    if (s->now % TIRESIAS_INTERVAL != 0 || s->changed)
        return next_multiple(s->now + 1);
    int64_t next = LUCID_NEVER;
    for (int32_t job = s->run_head; job >= 0; job = s->run[job].run_next) {
        const lucid_jobrun *r = &s->run[job];
        if (r->attained > TIRESIAS_THRESHOLD)
            continue;
        int64_t gpus = s->jobs[job].gpu_num;
        int64_t cross = r->base + (TIRESIAS_THRESHOLD - r->attained) / gpus + 1;
        int64_t at = next_multiple(cross > s->now ? cross : s->now + 1);
        if (at < next)
            next = at;
    }
    return next;
}

const lucid_policy_ops lucid_policy_tiresias = {
    .name = "tiresias",
    .summary = "discretized two-queue least-attained-service (Tiresias), preemptive",
    .flags = LUCID_POLICY_REMAIN_BASED,
    .decision_period = TIRESIAS_INTERVAL,
    .init = tiresias_init,
    .destroy = tiresias_destroy,
    .arrive = tiresias_arrive,
    .decide = tiresias_decide,
    .next_decision = tiresias_next_decision,
};
