/* policy_fifo.c — first in, first out: submit order, no backfill (the
 * first job that does not fit blocks the queue). */
#include "lucid/sched.h"

static int submitted_before(const lucid_sched *s, int32_t a, int32_t b)
{
    return s->jobs[a].submit_time < s->jobs[b].submit_time;
}

/* Under fair share every job weighs the same: the users' factors order the
 * queue, a user's own jobs stay in arrival order. */
static double same_priority(const lucid_sched *s, int32_t job)
{
    (void)s;
    (void)job;
    return 1.0;
}

const lucid_policy_ops lucid_policy_fifo = {
    .name = "fifo",
    .summary = "first in, first out; head-of-line blocking, no backfill",
    .flags = LUCID_POLICY_HEAD_OF_LINE,
    .arrive = lucid_sched_arrive_ordered,
    .order = submitted_before,
    .decide = lucid_decide_head_of_line,
    .next_decision = lucid_no_timed_decisions,
    .fair_priority = same_priority,
};
