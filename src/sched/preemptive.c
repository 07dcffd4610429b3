/* preemptive.c — the quota pass shared by the preemptive policies (SRTF,
 * Tiresias): walk the jobs in policy order handing out the VC's GPU count;
 * a waiting job that fits is started if it can be placed, a running job
 * that does not fit is preempted (checkpoint cost added to its work) and
 * goes to the end of the queue.  See preemptive.h for the structures. */
#include "preemptive.h"

#include <stdlib.h>
#include <string.h>

int lucid_preemptive_init(lucid_sched *s, const lucid_preemptive_keys *keys, lucid_error *err)
{
    lucid_preemptive *p = calloc(1, sizeof *p);
    if (!p)
        return lucid_error_set(err, "out of memory");
    p->keys = keys;
    lucid_ordset_init(&p->running);
    s->policy_state = p;
    return 0;
}

void lucid_preemptive_destroy(lucid_sched *s)
{
    lucid_preemptive *p = s->policy_state;
    if (p) {
        free(p->waiting);
        free(p->prerun);
        free(p->preempt);
        lucid_ordset_free(&p->running);
        free(p->policy);
    }
    free(p);
    s->policy_state = NULL;
}

/* Does waiting job a come before waiting job b? */
static int waiting_before(const lucid_sched *s, const lucid_preemptive *p, int32_t a, int32_t b)
{
    double ka = p->keys->waiting_key(s, a), kb = p->keys->waiting_key(s, b);
    if (ka != kb)
        return ka < kb;
    return s->run[a].arrival_seq < s->run[b].arrival_seq;
}

static int waiting_insert(lucid_sched *s, lucid_preemptive *p, int32_t job)
{
    if (LUCID_GROW(p->waiting, p->cap_waiting, p->nwaiting + 1) < 0)
        return -1;
    size_t lo = 0, hi = p->nwaiting;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (waiting_before(s, p, p->waiting[mid], job))
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(p->waiting + lo + 1, p->waiting + lo, (p->nwaiting - lo) * sizeof *p->waiting);
    p->waiting[lo] = job;
    p->nwaiting++;
    return 0;
}

int lucid_preemptive_arrive(lucid_sched *s, int32_t job)
{
    lucid_preemptive *p = s->policy_state;
    lucid_sched_mark_arrival(s, job);
    if (lucid_sched_enqueue(s, job) < 0)
        return -1;
    return waiting_insert(s, p, job);
}

static void running_remove(lucid_sched *s, lucid_preemptive *p, int32_t job)
{
    lucid_ordset_remove(&p->running, p->keys->running_key(s, p, job), s->run[job].run_seq);
}

void lucid_preemptive_ending(lucid_sched *s, int32_t job) { running_remove(s, s->policy_state, job); }

void lucid_preemptive_held(const lucid_sched *s, lucid_job_visit visit, void *ctx)
{
    const lucid_preemptive *p = s->policy_state;
    lucid_ordset_visit_jobs(&p->running, visit, ctx);
    for (size_t i = 0; i < p->nwaiting; i++)
        visit(ctx, p->waiting[i]);
}

/* Visits the running jobs from GPU sum *visited up to `upto`, in order:
 * each that still fits takes its GPUs from the quota, each that does not is
 * preempted.  Runs of fitting jobs are skipped at once with the set's sums. */
static void visit_running(const lucid_sched *s, lucid_preemptive *p, int64_t *quota,
                          int64_t *visited, int64_t upto, size_t *npreempt)
{
    while (*visited < upto) {
        if (*visited + *quota >= upto) {
            *quota -= upto - *visited;
            *visited = upto;
            return;
        }
        int64_t through = 0;
        int32_t job = lucid_ordset_first_exceeding(&p->running, *visited + *quota, &through);
        if (job < 0) /* cannot happen: the set's total is >= upto */
            return;
        *quota -= through - s->jobs[job].gpu_num - *visited;
        p->preempt[(*npreempt)++] = job;
        *visited = through;
    }
}

void lucid_preemptive_pass(lucid_sched *s)
{
    lucid_preemptive *p = s->policy_state;
    if (LUCID_GROW(p->prerun, p->cap_prerun, p->nwaiting + 1) < 0 ||
        LUCID_GROW(p->preempt, p->cap_preempt, p->running.count + 1) < 0)
        return;
    int64_t quota = s->cluster.total_gpus, visited = 0;
    size_t nprerun = 0, npreempt = 0;
    for (size_t i = 0; i < p->nwaiting; i++) {
        int32_t job = p->waiting[i];
        visit_running(s, p, &quota, &visited, p->keys->running_before(s, p, job), &npreempt);
        int32_t gpus = s->jobs[job].gpu_num;
        if (gpus <= quota) {
            quota -= gpus;
            p->prerun[nprerun++] = job;
        }
    }
    visit_running(s, p, &quota, &visited, lucid_ordset_total(&p->running), &npreempt);

    for (size_t i = 0; i < npreempt; i++) {
        int32_t job = p->preempt[i];
        running_remove(s, p, job);
        lucid_sched_preempt(s, job);
        s->run[job].remain += (double)lucid_preempt_overhead(&s->jobs[job]);
        /* The checkpoint cost is work done again: queueing in the
         * comparable accounting, not in the reference's. */
        if (!s->sem.queue_waits_only)
            s->run[job].queue += (double)lucid_preempt_overhead(&s->jobs[job]);
        lucid_sched_enqueue(s, job);
        s->run[job].arrival_seq = s->next_arrival_seq++; /* its new queue position */
    }
    int started = 0;
    for (size_t i = 0; i < nprerun; i++) {
        int32_t job = p->prerun[i];
        if (!lucid_sched_try_start(s, job)) /* no stop at failures */
            continue;
        started = 1;
        lucid_ordset_insert(&p->running, p->keys->running_key(s, p, job), s->run[job].run_seq, job,
                            s->jobs[job].gpu_num);
        if (p->keys->started)
            p->keys->started(s, p, job);
    }
    if (started) {
        lucid_sched_compact_queue(s);
        size_t kept = 0;
        for (size_t i = 0; i < p->nwaiting; i++)
            if (s->run[p->waiting[i]].status == LUCID_PENDING)
                p->waiting[kept++] = p->waiting[i];
        p->nwaiting = kept;
    }
    for (size_t i = 0; i < npreempt; i++)
        waiting_insert(s, p, p->preempt[i]);
}
