/* policy_sjf.c — oracle shortest job first: true duration order,
 * non-preemptive, head-of-line blocking. */
#include "lucid/sched.h"

static int shorter(const lucid_sched *s, int32_t a, int32_t b)
{
    return s->jobs[a].duration < s->jobs[b].duration;
}

static int sjf_arrive(lucid_sched *s, int32_t job)
{
    lucid_sched_mark_arrival(s, job);
    return lucid_sched_enqueue_sorted(s, job, shorter);
}

static void sjf_decide(lucid_sched *s) { lucid_sched_place_in_order(s, 1); }

static int64_t sjf_next_decision(const lucid_sched *s)
{
    (void)s;
    return LUCID_NEVER;
}

const lucid_policy_ops lucid_policy_sjf = {
    .name = "sjf",
    .summary = "oracle shortest job first (true durations), non-preemptive",
    .arrive = sjf_arrive,
    .decide = sjf_decide,
    .next_decision = sjf_next_decision,
};
