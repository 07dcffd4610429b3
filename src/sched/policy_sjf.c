/* policy_sjf.c — oracle shortest job first: true duration order,
 * non-preemptive, head-of-line blocking. */
#include "lucid/sched.h"

static int shorter(const lucid_sched *s, int32_t a, int32_t b)
{
    return s->jobs[a].duration < s->jobs[b].duration;
}

static double duration_priority(const lucid_sched *s, int32_t job)
{
    return (double)s->jobs[job].duration;
}

const lucid_policy_ops lucid_policy_sjf = {
    .name = "sjf",
    .summary = "oracle shortest job first (true durations), non-preemptive",
    .flags = LUCID_POLICY_HEAD_OF_LINE,
    .arrive = lucid_sched_arrive_ordered,
    .order = shorter,
    .decide = lucid_decide_head_of_line,
    .next_decision = lucid_no_timed_decisions,
    .fair_priority = duration_priority,
};
