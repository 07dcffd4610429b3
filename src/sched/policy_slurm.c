/* policy_slurm.c — Slurm's own scheduling as a baseline (issue 26): the
 * queue in priority/multifactor order, started by sched/builtin's rule
 * (in priority order; the first job that does not fit blocks the rest) or,
 * with [slurm] backfill, by sched/backfill's reservations (backfill.c),
 * every bf_interval seconds as Slurm runs it.
 *
 * The priority of a pending job, as slurm.conf's weights make it
 * (docs/slurm-policy.md):
 *
 *   P = trunc(W_age x min(1, age / PriorityMaxAge) + W_fairshare x F
 *             + W_jobsize x size)
 *
 * higher first, ties in submission order.  Slurm recalculates priorities
 * every PriorityCalcPeriod: a job's age counts up to the last multiple of
 * the period at or before now (a job submitted since has age 0, as Slurm
 * gives a new job its priority at submission).  F is the user's fair-share
 * factor from the VC's ledger of decayed GPU-seconds (fairshare.h,
 * 2^(-U/S), Slurm's classic multifactor).  size is the job's GPUs over the
 * VC's, or 1 minus that with PriorityFavorSmall.  Not in the simulator:
 * partition and QOS factors (one partition per VC, no QOS in a trace),
 * association trees (equal shares per user). */
#include <math.h>

#include "lucid/fairshare.h"
#include "lucid/sched.h"
#include "lucid/util.h"

lucid_slurm_priority lucid_slurm_priority_default(void)
{
    /* slurm.conf's defaults: every weight 0 (all jobs equal: submission
     * order), PriorityMaxAge 7-0, PriorityCalcPeriod 5, FavorSmall no. */
    return (lucid_slurm_priority)LUCID_SLURM_PRIORITY_DEFAULT;
}

static const lucid_slurm_priority *weights(const lucid_sched *s)
{
    static const lucid_slurm_priority none = LUCID_SLURM_PRIORITY_DEFAULT;
    return s->slurm_priority ? s->slurm_priority : &none;
}

/* The last multiple of `period` at or before now. */
static int64_t last_multiple(int64_t period, int64_t now)
{
    int64_t p = period > 0 ? period : 1;
    return now - (((now % p) + p) % p);
}

/* The last priority recalculation at or before now. */
static int64_t last_calc(const lucid_slurm_priority *w, int64_t now)
{
    return last_multiple(w->calc_period, now);
}

double lucid_slurm_priority_of(const lucid_sched *s, int32_t job)
{
    const lucid_slurm_priority *w = weights(s);
    const lucid_job *j = &s->jobs[job];
    double p = 0;
    if (w->weight_age > 0) {
        int64_t calc = last_calc(w, s->now);
        double age = calc > j->submit_time ? (double)(calc - j->submit_time) : 0.0;
        double max_age = w->max_age > 0 ? (double)w->max_age : 1.0;
        p += w->weight_age * (age < max_age ? age / max_age : 1.0);
    }
    if (w->weight_fairshare > 0) {
        double f = 1.0; /* no ledger: nobody has used anything */
        if (s->fairshare)
            f = lucid_fairshare_factor(s->fairshare,
                                       lucid_fairshare_slot(j->user, s->fairshare->nusers), s->now);
        p += w->weight_fairshare * f;
    }
    if (w->weight_jobsize > 0) {
        int64_t total = s->cluster.total_gpus;
        double size = total > 0 ? (double)j->gpu_num / (double)total : 0.0;
        if (size > 1)
            size = 1;
        p += w->weight_jobsize * (w->favor_small ? 1.0 - size : size);
    }
    return floor(p); /* Slurm keeps an integer priority */
}

/* Arrivals join at the end: decide() orders the queue. */
static int never_before(const lucid_sched *s, int32_t a, int32_t b)
{
    (void)s;
    (void)a;
    (void)b;
    return 0;
}

/* Orders the queue by priority now (higher first, then arrival order),
 * then starts in that order. */
static void decide(lucid_sched *s)
{
    if (s->qlen > 1 && LUCID_GROW(s->fair_order, s->fair_cap, s->qlen) == 0) {
        for (size_t i = 0; i < s->qlen; i++) {
            int32_t job = s->queue[i];
            s->fair_order[i] = (lucid_queued){.key = -lucid_slurm_priority_of(s, job),
                                              .seq = s->run[job].arrival_seq,
                                              .index = (uint32_t)job};
        }
        lucid_queue_sort(s->fair_order, s->qlen);
        for (size_t i = 0; i < s->qlen; i++)
            s->queue[i] = (int32_t)s->fair_order[i].index;
    }
    /* sched/backfill runs every bf_interval; at the decisions in between
     * only the main scheduler does (priority order, the first job that
     * does not fit stops it). */
    const lucid_slurm_priority *w = weights(s);
    struct lucid_backfill *bf = s->backfill;
    if (bf && last_multiple(w->bf_interval, s->now) != s->now)
        s->backfill = NULL;
    lucid_decide_head_of_line(s);
    s->backfill = bf;
}

/* Priorities move at each recalculation while jobs wait behind running
 * ones (age, usage): the next one is a decision point then. */
static int64_t next_decision(const lucid_sched *s)
{
    const lucid_slurm_priority *w = weights(s);
    int64_t next = LUCID_NEVER;
    if (s->qlen >= 2 && s->nrunning > 0 && (w->weight_age > 0 || w->weight_fairshare > 0))
        next = last_calc(w, s->now) + (w->calc_period > 0 ? w->calc_period : 1);
    /* The next backfill pass, while jobs wait behind running ones. */
    if (s->backfill && s->qlen > 0 && s->nrunning > 0 && w->bf_interval > 1) {
        int64_t at = last_multiple(w->bf_interval, s->now) + w->bf_interval;
        if (at < next)
            next = at;
    }
    return next;
}

const lucid_policy_ops lucid_policy_slurm = {
    .name = "slurm",
    .summary = "Slurm: priority/multifactor order (age, fair share, job size), "
               "sched/builtin start; [slurm] backfill for sched/backfill",
    .flags = LUCID_POLICY_HEAD_OF_LINE,
    .arrive = lucid_sched_arrive_ordered,
    .order = never_before,
    .decide = decide,
    .next_decision = next_decision,
};
