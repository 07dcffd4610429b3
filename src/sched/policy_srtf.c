/* policy_srtf.c — oracle shortest remaining time first, preemptive.
 *
 * Every step with a waiting job, the waiting jobs and then the running ones
 * in stable order of remaining work go through the quota pass
 * (preemptive.c).  A running job's remainder at step t is F - t, F = its
 * start step plus its work then (rate 1: SRTF never packs), so the running
 * jobs keep their order by F and are compared with a waiting remainder w
 * as F < w + t (waiting first on ties).  Nothing can change while no job
 * waits; while jobs wait, the outcome only changes when a running job's
 * shrinking remainder drops below a waiting job's, so the next decision is
 * the earliest such crossing (or the next second after a decision that
 * changed something).  All remainders are whole seconds, exact in a double
 * (the trace loader bounds times and durations). */
#include "preemptive.h"

static double srtf_waiting_key(const lucid_sched *s, int32_t job) { return s->run[job].remain; }

static double srtf_running_key(const lucid_sched *s, const lucid_preemptive *p, int32_t job)
{
    (void)p;
    return (double)s->run[job].base + s->run[job].remain;
}

static int64_t srtf_running_before(const lucid_sched *s, const lucid_preemptive *p, int32_t job)
{
    return lucid_ordset_sum_below(&p->running, s->run[job].remain + (double)s->now, 0);
}

static const lucid_preemptive_keys srtf_keys = {
    .waiting_key = srtf_waiting_key,
    .running_key = srtf_running_key,
    .running_before = srtf_running_before,
};

static int srtf_init(lucid_sched *s, lucid_error *err)
{
    return lucid_preemptive_init(s, &srtf_keys, err);
}

static void srtf_decide(lucid_sched *s)
{
    if (s->qlen > 0)
        lucid_preemptive_pass(s);
}

/* The earliest crossing: min over running jobs j of x_j - (largest waiting
 * remainder <= x_j), which equals min over waiting remainders w of
 * (smallest running remainder >= w) - w: one look-up per waiting job. */
static int64_t srtf_next_decision(const lucid_sched *s)
{
    const lucid_preemptive *p = s->policy_state;
    if (s->qlen == 0)
        return LUCID_NEVER;
    if (s->changed || p->nwaiting != s->qlen)
        return s->now + 1;
    int64_t next = LUCID_NEVER;
    double previous = 0;
    for (size_t i = 0; i < p->nwaiting; i++) {
        double w = s->run[p->waiting[i]].remain, f;
        if (i > 0 && w == previous)
            continue;
        previous = w;
        if (lucid_ordset_first_at_least(&p->running, w + (double)s->now, &f) < 0)
            break; /* no running job at or above w, nor above any larger w */
        int64_t at = s->now + (int64_t)((f - (double)s->now) - w) + 1;
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
    .destroy = lucid_preemptive_destroy,
    .arrive = lucid_preemptive_arrive,
    .decide = srtf_decide,
    .next_decision = srtf_next_decision,
    .job_ending = lucid_preemptive_ending,
    .held_jobs = lucid_preemptive_held,
};
