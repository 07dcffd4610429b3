/* policy_lucid.c — Lucid's resource orchestrator for the main cluster
 * (spec §4.5): the queue in estimated-service order (estimate x GPUs), and
 * indolent packing when the forecast switch is on: a waiting job of up to 8
 * GPUs may share the GPUs of the first running, unpacked job with the same
 * GPU count, enough free GPU memory, sharing scores summing to at most 2 and
 * a comparable priority.  Without packing the first job that does not fit
 * blocks the queue; with packing every job is tried. */
#include "lucid/sched.h"

static int by_priority(const lucid_sched *s, int32_t a, int32_t b)
{
    return s->priority[a] < s->priority[b];
}

static int lucid_init(lucid_sched *s, lucid_error *err)
{
    if (!s->priority || !s->lucid)
        return lucid_error_set(err, "lucid needs duration estimates and its packing inputs");
    return 0;
}

static int lucid_arrive(lucid_sched *s, int32_t job)
{
    lucid_sched_mark_arrival(s, job);
    s->run[job].share_score = s->lucid->share ? s->lucid->share[job] : 2;
    return lucid_sched_enqueue_sorted(s, job, by_priority);
}

/* The first running job that `job` may share GPUs with, or -1. */
static int32_t pick_partner(const lucid_sched *s, int32_t job)
{
    const lucid_lucid_inputs *in = s->lucid;
    const lucid_job *j = &s->jobs[job];
    double gmem = j->gmem == j->gmem ? j->gmem : 0;
    double mem_limit = in->gmem_limit - gmem;
    if (j->gpu_num < 1 || j->gpu_num > LUCID_PACK_MAX_GPUS)
        return -1;
    for (int32_t other = s->cand_head[j->gpu_num]; other >= 0; other = s->run[other].cand_next) {
        const lucid_jobrun *o = &s->run[other];
        const lucid_job *oj = &s->jobs[other];
        double ogmem = oj->gmem == oj->gmem ? oj->gmem : 0;
        if (!o->exclusive || oj->gpu_num != j->gpu_num || !(ogmem < mem_limit))
            continue;
        if (s->run[job].share_score + o->share_score > in->score_sum)
            continue;
        if (s->priority[job] <= s->priority[other] * in->priority_ratio)
            return other;
    }
    return -1;
}

static int outside_pair_table(const lucid_sched *s, int32_t job)
{
    int32_t model = s->jobs[job].workload.model;
    return model < 0 || (s->lucid->outside_model && s->lucid->outside_model[model]);
}

static void pack(lucid_sched *s, int32_t job, int32_t target)
{
    double speed_job = 1.0, speed_target = 1.0;
    /* Pairs involving a model the co-location study did not measure run at
     * full speed (as in the reference's updater). */
    if (!outside_pair_table(s, job) && !outside_pair_table(s, target) && s->lucid->pairs)
        lucid_pairs_speed(s->lucid->pairs, &s->jobs[job].workload, &s->jobs[target].workload,
                          &speed_job, &speed_target);
    lucid_sched_start_packed(s, job, target, speed_job, speed_target);
}

static void lucid_decide(lucid_sched *s)
{
    if (!lucid_packing_switch_at(s->lucid, s->now)) {
        lucid_sched_place_in_order(s, 1);
        return;
    }
    int started = 0;
    for (size_t i = 0; i < s->qlen; i++) {
        int32_t job = s->queue[i];
        int32_t target = -1;
        if (s->jobs[job].gpu_num <= LUCID_PACK_MAX_GPUS)
            target = pick_partner(s, job);
        if (target >= 0) {
            pack(s, job, target);
            started++;
        } else {
            started += lucid_sched_try_start(s, job);
        }
    }
    if (started)
        lucid_sched_compact_queue(s);
}

/* Number of switch changes at or before t. */
static size_t switch_changes_until(const lucid_lucid_inputs *in, int64_t t)
{
    size_t lo = 0, hi = in->nswitch;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (in->switch_times[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int64_t lucid_next_decision(const lucid_sched *s)
{
    /* Only the packing switch changes without an event. */
    if (s->qlen == 0)
        return LUCID_NEVER;
    size_t k = switch_changes_until(s->lucid, s->now);
    return k < s->lucid->nswitch ? s->lucid->switch_times[k] : LUCID_NEVER;
}

int lucid_packing_switch_at(const lucid_lucid_inputs *in, int64_t t)
{
    size_t k = switch_changes_until(in, t);
    return k == 0 ? in->switch_initial : in->switch_values[k - 1];
}

const lucid_policy_ops lucid_policy_lucid = {
    .name = "lucid",
    .summary = "Lucid: profiler, estimated-service order, indolent packing",
    .flags = LUCID_POLICY_REMAIN_BASED | LUCID_POLICY_ESTIMATES | LUCID_POLICY_LUCID,
    .init = lucid_init,
    .arrive = lucid_arrive,
    .decide = lucid_decide,
    .next_decision = lucid_next_decision,
};
