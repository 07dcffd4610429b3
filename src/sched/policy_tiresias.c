/* policy_tiresias.c — Tiresias (NSDI'19): discretized two-queue
 * least-attained-service, preemptive, no duration knowledge.
 *
 * Decisions only at multiples of 60 s.  Running jobs first, then waiting
 * ones, split into a high queue (attained GPU-seconds <= 18,000) and a low
 * queue, each stably ordered by submit time; then the quota pass
 * (preemptive.c).  The key is the submit time, plus 1e15 in the low queue
 * (the loader bounds submit times far below that).  Waiting jobs' attained
 * service is frozen, so between decisions the outcome only changes when a
 * running job crosses the threshold: each running job's crossing step is
 * known when it starts and kept in a min-heap, which gives both the next
 * decision and the jobs to move to the low queue at a decision.
 *
 * (The re-sorting implementation also decided every interval while a job
 * that had crossed kept running.  Such a decision repeats one that changed
 * nothing on an unchanged state, so it changes nothing either — the
 * placers draw random numbers only on the way to a placement that
 * succeeds — and skipping it keeps the results while a queue waiting
 * behind a long job no longer costs a step a minute.) */
#include <stdlib.h>

#include "preemptive.h"

#define TIRESIAS_INTERVAL 60
#define TIRESIAS_THRESHOLD 18000
#define TIRESIAS_LOW 1e15

typedef struct crossing {
    int64_t time; /* first step at which the job's attained service exceeds the threshold */
    uint32_t run_seq;
    int32_t job;
} crossing;

typedef struct tiresias_state {
    crossing *heap;
    size_t n, cap;
    int64_t moved_upto; /* crossings at or before this step are in the low queue */
} tiresias_state;

static int crossing_of(const lucid_sched *s, int32_t job, int64_t *time)
{
    const lucid_jobrun *r = &s->run[job];
    int64_t gpus = s->jobs[job].gpu_num;
    if (r->attained > TIRESIAS_THRESHOLD || gpus <= 0)
        return 0;
    *time = r->base + (TIRESIAS_THRESHOLD - r->attained) / gpus + 1;
    return 1;
}

static int in_low_queue(const lucid_sched *s, const lucid_preemptive *p, int32_t job)
{
    const tiresias_state *st = p->policy;
    int64_t cross;
    return !crossing_of(s, job, &cross) ? s->run[job].attained > TIRESIAS_THRESHOLD
                                         : cross <= st->moved_upto;
}

static double tiresias_waiting_key(const lucid_sched *s, int32_t job)
{
    int low = s->run[job].attained > TIRESIAS_THRESHOLD;
    return (double)s->jobs[job].submit_time + (low ? TIRESIAS_LOW : 0);
}

static double tiresias_running_key(const lucid_sched *s, const lucid_preemptive *p, int32_t job)
{
    return (double)s->jobs[job].submit_time + (in_low_queue(s, p, job) ? TIRESIAS_LOW : 0);
}

static int64_t tiresias_running_before(const lucid_sched *s, const lucid_preemptive *p,
                                       int32_t job)
{
    /* running jobs first on equal keys */
    return lucid_ordset_sum_below(&p->running, tiresias_waiting_key(s, job), 1);
}

static int crossing_before(const crossing *a, const crossing *b)
{
    return a->time < b->time || (a->time == b->time && a->run_seq < b->run_seq);
}

static int heap_push(tiresias_state *st, crossing c)
{
    if (LUCID_GROW(st->heap, st->cap, st->n + 1) < 0)
        return -1;
    size_t i = st->n++;
    while (i > 0 && crossing_before(&c, &st->heap[(i - 1) / 2])) {
        st->heap[i] = st->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    st->heap[i] = c;
    return 0;
}

static void heap_pop(tiresias_state *st)
{
    crossing last = st->heap[--st->n];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= st->n)
            break;
        if (child + 1 < st->n && crossing_before(&st->heap[child + 1], &st->heap[child]))
            child++;
        if (!crossing_before(&st->heap[child], &last))
            break;
        st->heap[i] = st->heap[child];
        i = child;
    }
    if (st->n > 0)
        st->heap[i] = last;
}

/* Drops crossings of jobs that stopped (ended or preempted) since. */
static void heap_clean(const lucid_sched *s, tiresias_state *st)
{
    while (st->n > 0) {
        const lucid_jobrun *r = &s->run[st->heap[0].job];
        if (r->status == LUCID_RUNNING && r->run_seq == st->heap[0].run_seq)
            return;
        heap_pop(st);
    }
}

static int tiresias_started(lucid_sched *s, lucid_preemptive *p, int32_t job)
{
    int64_t cross;
    if (!crossing_of(s, job, &cross))
        return 0;
    return heap_push(p->policy, (crossing){cross, s->run[job].run_seq, job});
}

static const lucid_preemptive_keys tiresias_keys = {
    .waiting_key = tiresias_waiting_key,
    .running_key = tiresias_running_key,
    .running_before = tiresias_running_before,
    .started = tiresias_started,
};

static int tiresias_init(lucid_sched *s, lucid_error *err)
{
    if (lucid_preemptive_init(s, &tiresias_keys, err) < 0)
        return -1;
    lucid_preemptive *p = s->policy_state;
    p->policy = calloc(1, sizeof(tiresias_state));
    if (!p->policy)
        return lucid_error_set(err, "out of memory");
    ((tiresias_state *)p->policy)->moved_upto = INT64_MIN;
    return 0;
}

static void tiresias_destroy(lucid_sched *s)
{
    lucid_preemptive *p = s->policy_state;
    if (p && p->policy)
        free(((tiresias_state *)p->policy)->heap);
    lucid_preemptive_destroy(s);
}

static int tiresias_arrive(lucid_sched *s, int32_t job)
{
    s->run[job].attained = 0;
    return lucid_preemptive_arrive(s, job);
}

static void tiresias_decide(lucid_sched *s)
{
    lucid_preemptive *p = s->policy_state;
    tiresias_state *st = p->policy;
    if (s->now % TIRESIAS_INTERVAL != 0 || s->qlen == 0)
        return;
    /* Move the running jobs that crossed the threshold by now to the low queue. */
    for (heap_clean(s, st); st->n > 0 && st->heap[0].time <= s->now; heap_clean(s, st)) {
        int32_t job = st->heap[0].job;
        double high = (double)s->jobs[job].submit_time;
        lucid_ordset_remove(&p->running, high, s->run[job].run_seq);
        lucid_ordset_insert(&p->running, high + TIRESIAS_LOW, s->run[job].run_seq, job,
                            s->jobs[job].gpu_num);
        heap_pop(st);
    }
    st->moved_upto = s->now;
    lucid_preemptive_pass(s);
}

static int64_t next_multiple(int64_t t)
{
    int64_t m = t - (t % TIRESIAS_INTERVAL + TIRESIAS_INTERVAL) % TIRESIAS_INTERVAL;
    return m < t ? m + TIRESIAS_INTERVAL : m;
}

static int64_t tiresias_next_decision(const lucid_sched *s)
{
    if (s->qlen == 0)
        return LUCID_NEVER;
    if (s->now % TIRESIAS_INTERVAL != 0 || s->changed)
        return next_multiple(s->now + 1);
    tiresias_state *st = ((lucid_preemptive *)s->policy_state)->policy;
    heap_clean(s, st);
    if (st->n == 0)
        return LUCID_NEVER;
    int64_t cross = st->heap[0].time;
    return next_multiple(cross > s->now ? cross : s->now + 1);
}

/* The crossings keep jobs that stopped until they reach the heap's top
 * (heap_clean reads their records then), so they count too. */
static void tiresias_held(const lucid_sched *s, lucid_job_visit visit, void *ctx)
{
    const tiresias_state *st = ((const lucid_preemptive *)s->policy_state)->policy;
    lucid_preemptive_held(s, visit, ctx);
    for (size_t i = 0; i < st->n; i++)
        visit(ctx, st->heap[i].job);
}

const lucid_policy_ops lucid_policy_tiresias = {
    .name = "tiresias",
    .summary = "discretized two-queue least-attained-service (Tiresias), preemptive",
    .flags = LUCID_POLICY_REMAIN_BASED,
    .decision_period = TIRESIAS_INTERVAL,
    .init = tiresias_init,
    .destroy = tiresias_destroy,
    .arrive = tiresias_arrive,
    .decide = tiresias_decide,
    .next_decision = tiresias_next_decision,
    .job_ending = lucid_preemptive_ending,
    .held_jobs = tiresias_held,
};
