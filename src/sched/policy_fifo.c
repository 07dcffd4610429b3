/* policy_fifo.c — first in, first out: submit order, no backfill (the
 * first job that does not fit blocks the queue). */
#include "lucid/sched.h"

static int submitted_before(const lucid_sched *s, int32_t a, int32_t b)
{
    return s->jobs[a].submit_time < s->jobs[b].submit_time;
}

static int fifo_arrive(lucid_sched *s, int32_t job)
{
    lucid_sched_mark_arrival(s, job);
    return lucid_sched_enqueue_sorted(s, job, submitted_before);
}

static void fifo_decide(lucid_sched *s) { lucid_sched_place_in_order(s, 1); }

static int64_t fifo_next_decision(const lucid_sched *s)
{
    (void)s;
    return LUCID_NEVER; /* nothing changes between arrivals and completions */
}

const lucid_policy_ops lucid_policy_fifo = {
    .name = "fifo",
    .summary = "first in, first out; head-of-line blocking, no backfill",
    .arrive = fifo_arrive,
    .decide = fifo_decide,
    .next_decision = fifo_next_decision,
};
