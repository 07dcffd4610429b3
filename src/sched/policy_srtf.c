/* policy_srtf.c — oracle shortest remaining time first, preemptive.
 *
 * Every step the waiting jobs and then the running ones are sorted stably
 * by remaining work and the quota pass runs (preemptive.c).  Nothing can
 * change while no job waits; while jobs wait, the outcome only changes when
 * a running job's shrinking remainder drops below a waiting job's, so the
 * next decision is the earliest such crossing (or the next second after a
 * decision that changed something). */
#include <stdlib.h>

#include "preemptive.h"

typedef struct srtf_state {
    lucid_preemptive scratch;
    double *waiting_remain; /* sorted remainders of waiting jobs after the last decision */
    size_t nwaiting, cap_waiting;
} srtf_state;

static int srtf_init(lucid_sched *s, lucid_error *err)
{
    s->policy_state = calloc(1, sizeof(srtf_state));
    return s->policy_state ? 0 : lucid_error_set(err, "out of memory");
}

static void srtf_destroy(lucid_sched *s)
{
    srtf_state *st = s->policy_state;
    if (st) {
        lucid_preemptive_free(&st->scratch);
        free(st->waiting_remain);
    }
    free(st);
    s->policy_state = NULL;
}

static int srtf_arrive(lucid_sched *s, int32_t job)
{
    lucid_sched_mark_arrival(s, job);
    return lucid_sched_enqueue(s, job);
}

static void srtf_decide(lucid_sched *s)
{
    srtf_state *st = s->policy_state;
    size_t n = s->qlen + s->nrunning, k = 0;
    if (s->qlen == 0 || lucid_preemptive_reserve(&st->scratch, n) < 0) {
        st->nwaiting = 0;
        return;
    }
    for (size_t i = 0; i < s->qlen; i++, k++)
        st->scratch.keys[k] = (lucid_sort_key){s->run[s->queue[i]].remain, k, s->queue[i]};
    for (int32_t job = s->run_head; job >= 0; job = s->run[job].run_next, k++)
        st->scratch.keys[k] = (lucid_sort_key){lucid_sched_remain_at(s, job, s->now), k, job};
    lucid_preemptive_stable_sort(&st->scratch, n);
    lucid_preemptive_apply(s, &st->scratch, n);
    /* Remember the waiting remainders for the crossing computation. */
    st->nwaiting = 0;
    if (LUCID_GROW(st->waiting_remain, st->cap_waiting, s->qlen) < 0)
        return;
    for (size_t i = 0; i < n; i++)
        if (s->run[st->scratch.order[i]].status == LUCID_PENDING)
            st->waiting_remain[st->nwaiting++] = s->run[st->scratch.order[i]].remain;
}

static int64_t srtf_next_decision(const lucid_sched *s)
{
    const srtf_state *st = s->policy_state;
    if (s->qlen == 0)
        return LUCID_NEVER;
    if (s->changed || st->nwaiting != s->qlen)
        return s->now + 1;
    int64_t next = LUCID_NEVER;
    for (int32_t job = s->run_head; job >= 0; job = s->run[job].run_next) {
        double x = lucid_sched_remain_at(s, job, s->now);
        /* Largest waiting remainder <= x (the list is sorted ascending). */
        size_t lo = 0, hi = st->nwaiting;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (st->waiting_remain[mid] <= x)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == 0)
            continue;
        int64_t at = s->now + (int64_t)(x - st->waiting_remain[lo - 1]) + 1;
        if (at < next)
            next = at;
    }
    return next;
}

const lucid_policy_ops lucid_policy_srtf = {
    .name = "srtf",
    .summary = "oracle shortest remaining time first, preemptive",
    .flags = LUCID_POLICY_REMAIN_BASED,
    .init = srtf_init,
    .destroy = srtf_destroy,
    .arrive = srtf_arrive,
    .decide = srtf_decide,
    .next_decision = srtf_next_decision,
};
