/* policy_profiler.c — the queue of Lucid's profiler (spec §4.5, profiling
 * pass): least GPUs first, ties in arrival order, head-of-line blocking.
 * The simulator's profiler (src/sim/profiler.c) runs it on the profiling
 * cluster; lucidd's profiling step orders by the same rule
 * (LUCID_ORDER_FEWEST_GPUS). */
#include "lucid/sched.h"

/* Start-based: a job leaves exactly at start + min(duration, limit). */
const lucid_policy_ops lucid_policy_profiler = {
    .name = "lgf-profiler",
    .summary = "least GPU first",
    .flags = LUCID_POLICY_HEAD_OF_LINE,
    .arrive = lucid_sched_arrive_ordered,
    .order = lucid_sched_less_gpus,
    .decide = lucid_decide_head_of_line,
    .next_decision = lucid_no_timed_decisions,
};
