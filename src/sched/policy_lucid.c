/* policy_lucid.c — Lucid's resource orchestrator for the main cluster
 * (spec §4.5): the queue in estimated-service order (estimate x GPUs), and
 * indolent packing when the forecast switch is on: a waiting job of up to 8
 * GPUs may share the GPUs of the first running, unpacked job with the same
 * GPU count, enough free GPU memory, sharing scores summing to at most 2 and
 * a comparable priority.  Without packing the first job that does not fit
 * blocks the queue; with packing every job is tried.  The queue order, the
 * pass and the pair rule are the core's (decision.c, lucid_pair_allowed),
 * shared with lucidd's decision step; this file adds the simulator's side:
 * the trace's estimates and co-located speeds, the forecast switch. */
#include "lucid/sched.h"
#include "ordset.h"

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
    return lucid_sched_enqueue_sorted(s, job, lucid_sched_less_priority);
}

int lucid_pair_allowed(const lucid_pair_side *newcomer, const lucid_pair_side *running,
                       double gmem_limit_mib, int32_t score_sum, double priority_ratio)
{
    double gmem_new = newcomer->gmem_mib == newcomer->gmem_mib ? newcomer->gmem_mib : 0;
    double gmem_run = running->gmem_mib == running->gmem_mib ? running->gmem_mib : 0;
    return newcomer->gpus == running->gpus && newcomer->gpus >= 1 &&
           newcomer->gpus <= LUCID_PACK_MAX_GPUS && gmem_run < gmem_limit_mib - gmem_new &&
           newcomer->score + running->score <= score_sum &&
           newcomer->priority <= running->priority * priority_ratio;
}

static lucid_pair_side pair_side(const lucid_sched *s, int32_t job)
{
    return (lucid_pair_side){.gpus = s->jobs[job].gpu_num,
                             .gmem_mib = s->jobs[job].gmem,
                             .score = s->run[job].share_score,
                             .priority = s->priority[job]};
}

typedef struct partner_query {
    const lucid_sched *s;
    lucid_pair_side newcomer;
} partner_query;

static int partner_accepts(const void *ctx, int32_t other)
{
    const partner_query *q = ctx;
    const lucid_lucid_inputs *in = q->s->lucid;
    lucid_pair_side running = pair_side(q->s, other);
    return q->s->run[other].exclusive && lucid_pair_allowed(&q->newcomer, &running, in->gmem_limit,
                                                            in->score_sum, in->priority_ratio);
}

/* The first running job that `job` may share GPUs with, or -1: candidates
 * are the running unpacked jobs of its GPU count, in start order (the
 * reference scans its running list).  The candidate set skips runs of
 * candidates the rule cannot allow (ordset.c). */
static int32_t pick_partner(const lucid_sched *s, int32_t job)
{
    const lucid_lucid_inputs *in = s->lucid;
    int32_t gpus = s->jobs[job].gpu_num;
    if (gpus < 1 || gpus > LUCID_PACK_MAX_GPUS || !s->cand)
        return -1;
    partner_query q = {s, pair_side(s, job)};
    double gmem_new = q.newcomer.gmem_mib == q.newcomer.gmem_mib ? q.newcomer.gmem_mib : 0;
    lucid_ordset_match m = {.gmem_below = in->gmem_limit - gmem_new,
                            .score_upto = in->score_sum - q.newcomer.score,
                            .priority = q.newcomer.priority,
                            .ratio = in->priority_ratio,
                            .accept = partner_accepts,
                            .ctx = &q};
    return lucid_ordset_first_match(&s->cand[gpus], &m);
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
    const double *prior = s->lucid->prior_speed;
    if (prior && (s->jobs[job].workload.model < 0 || s->jobs[target].workload.model < 0)) {
        /* No workload to look up (a trace without GPU metrics): the prior's
         * speeds by sharing score, at most 1. */
        int32_t a = s->run[job].share_score, b = s->run[target].share_score;
        if (a >= 0 && a <= 2 && b >= 0 && b <= 2) {
            speed_job = prior[a * 3 + b] < 1.0 ? prior[a * 3 + b] : 1.0;
            speed_target = prior[b * 3 + a] < 1.0 ? prior[b * 3 + a] : 1.0;
        }
    } else if (!outside_pair_table(s, job) && !outside_pair_table(s, target) && s->lucid->pairs)
        lucid_pairs_speed(s->lucid->pairs, &s->jobs[job].workload, &s->jobs[target].workload,
                          &speed_job, &speed_target);
    lucid_sched_start_packed(s, job, target, speed_job, speed_target);
}

/* The pack hook of the decision pass: `job` starts on the GPUs of the
 * first running job the pair rule allows. */
/* Whether `job` (at most one node's GPUs) could start on free GPUs now:
 * some node has at least its GPUs free. */
static int fits_on_free(const lucid_sched *s, int32_t job)
{
    int32_t g = s->jobs[job].gpu_num, G = s->cluster.gpus_per_node;
    if (g > G || s->cluster.free_gpus < g)
        return 0;
    for (int32_t f = g; f <= G; f++)
        if (lucid_cluster_first_in_bucket(&s->cluster, f, 0) >= 0)
            return 1;
    return 0;
}

static int pack_onto_partner(lucid_sched *s, int32_t job)
{
    if (s->lucid->pack_when_blocked && fits_on_free(s, job))
        return 0; /* the pass places it on free GPUs instead */
    int32_t target = pick_partner(s, job);
    if (target < 0)
        return 0;
    pack(s, job, target);
    return 1;
}

/* The core's decision pass (lucid_start_in_order), the one lucidd runs too:
 * head of line while the switch is off, every job tried (partner first)
 * while it is on. */
static void lucid_decide(lucid_sched *s)
{
    lucid_sched_start_queue(s, lucid_packing_switch_at(s->lucid, s->now), pack_onto_partner);
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

static double service_priority(const lucid_sched *s, int32_t job) { return s->priority[job]; }

const lucid_policy_ops lucid_policy_lucid = {
    .name = "lucid",
    .summary = "Lucid: profiler, estimated-service order, indolent packing",
    .flags = LUCID_POLICY_REMAIN_BASED | LUCID_POLICY_ESTIMATES | LUCID_POLICY_LUCID,
    .init = lucid_init,
    .arrive = lucid_arrive,
    .decide = lucid_decide,
    .next_decision = lucid_next_decision,
    .fair_priority = service_priority,
};
