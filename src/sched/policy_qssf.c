/* policy_qssf.c — quasi-shortest-service-first (Helios, SC'21): queued jobs
 * ordered by estimated service (estimate x GPUs), non-preemptive,
 * head-of-line blocking.
 *
 * The reference first sorts the queue by GPU count and only applies the
 * priority order when the queue holds a job that arrived before this step;
 * a step whose queue holds only newcomers places them in GPU order.  Both
 * sorts are stable, so the priority order is (priority, gpus, arrival) and
 * the newcomer order is (gpus, arrival). */
#include <stdlib.h>
#include <string.h>

#include "lucid/sched.h"

typedef struct qssf_state {
    int newcomers_only; /* the last decision used the newcomer (GPU) order */
    int32_t *order;     /* scratch for the newcomer order */
    size_t cap;
} qssf_state;

static int by_priority(const lucid_sched *s, int32_t a, int32_t b)
{
    if (s->priority[a] != s->priority[b])
        return s->priority[a] < s->priority[b];
    return s->jobs[a].gpu_num < s->jobs[b].gpu_num;
}

static int by_gpus(const void *pa, const void *pb, const lucid_sched *s)
{
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    if (s->jobs[a].gpu_num != s->jobs[b].gpu_num)
        return s->jobs[a].gpu_num < s->jobs[b].gpu_num ? -1 : 1;
    return s->run[a].arrival_seq < s->run[b].arrival_seq ? -1 : 1;
}

static int qssf_init(lucid_sched *s, lucid_error *err)
{
    if (!s->priority)
        return lucid_error_set(err, "qssf needs duration estimates ([qssf] estimates)");
    s->policy_state = calloc(1, sizeof(qssf_state));
    return s->policy_state ? 0 : lucid_error_set(err, "out of memory");
}

static void qssf_destroy(lucid_sched *s)
{
    qssf_state *st = s->policy_state;
    if (st)
        free(st->order);
    free(st);
    s->policy_state = NULL;
}

static int qssf_arrive(lucid_sched *s, int32_t job)
{
    lucid_sched_mark_arrival(s, job);
    return lucid_sched_enqueue_sorted(s, job, by_priority);
}

static void qssf_decide(lucid_sched *s)
{
    qssf_state *st = s->policy_state;
    st->newcomers_only = 0;
    /* The reference: len(queue) > number of jobs that arrived this step. */
    int any_old = s->qlen > (s->arrivals_step == s->now ? s->arrivals_now : 0);
    /* Under fair share the queue is in its order already (lucid_sched_decide):
     * no newcomer order. */
    if (any_old || s->qlen == 0 || s->fairshare) {
        lucid_sched_place_in_order(s, 1);
        return;
    }
    /* Only newcomers: GPU order (insertion sort: the batch is one step's arrivals). */
    if (LUCID_GROW(st->order, st->cap, s->qlen) < 0)
        return;
    size_t n = s->qlen;
    for (size_t i = 0; i < n; i++) {
        int32_t job = s->queue[i];
        size_t k = i;
        while (k > 0 && by_gpus(&job, &st->order[k - 1], s) < 0) {
            st->order[k] = st->order[k - 1];
            k--;
        }
        st->order[k] = job;
    }
    size_t stopped_at;
    if (lucid_sched_start_in_order(s, st->order, n, 0, NULL, &stopped_at) > 0)
        lucid_sched_compact_queue(s);
    st->newcomers_only = s->qlen > 0;
}

static int64_t qssf_next_decision(const lucid_sched *s)
{
    const qssf_state *st = s->policy_state;
    /* Leftover newcomers are re-sorted by priority at the next step. */
    return st->newcomers_only ? s->now + 1 : LUCID_NEVER;
}

static double service_priority(const lucid_sched *s, int32_t job) { return s->priority[job]; }

const lucid_policy_ops lucid_policy_qssf = {
    .name = "qssf",
    .summary = "quasi-shortest-service-first from duration estimates, non-preemptive",
    .flags = LUCID_POLICY_ESTIMATES | LUCID_POLICY_HEAD_OF_LINE,
    .init = qssf_init,
    .destroy = qssf_destroy,
    .arrive = qssf_arrive,
    .decide = qssf_decide,
    .next_decision = qssf_next_decision,
    .fair_priority = service_priority,
};
