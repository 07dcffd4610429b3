/* preemptive.c — the quota pass shared by the preemptive policies (SRTF,
 * Tiresias): walk the jobs in policy order handing out the VC's GPU count;
 * a waiting job that fits is started if it can be placed, a running job
 * that does not fit is preempted (checkpoint cost added to its work) and
 * goes to the end of the queue. */
#include "preemptive.h"

#include <stdlib.h>

int lucid_preemptive_reserve(lucid_preemptive *p, size_t n)
{
    if (LUCID_GROW(p->order, p->cap_order, n) < 0 || LUCID_GROW(p->keys, p->cap_keys, n) < 0 ||
        LUCID_GROW(p->prerun, p->cap_prerun, n) < 0 || LUCID_GROW(p->preempt, p->cap_preempt, n) < 0)
        return -1;
    return 0;
}

void lucid_preemptive_free(lucid_preemptive *p)
{
    free(p->order);
    free(p->keys);
    free(p->prerun);
    free(p->preempt);
}

void lucid_preemptive_apply(lucid_sched *s, lucid_preemptive *p, size_t n)
{
    int64_t quota = s->cluster.total_gpus;
    size_t nprerun = 0, npreempt = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t job = p->order[i];
        int32_t gpus = s->jobs[job].gpu_num;
        if (gpus <= quota) {
            quota -= gpus;
            if (s->run[job].status == LUCID_PENDING)
                p->prerun[nprerun++] = job;
        } else if (s->run[job].status == LUCID_RUNNING) {
            p->preempt[npreempt++] = job;
        }
    }
    for (size_t i = 0; i < npreempt; i++) {
        int32_t job = p->preempt[i];
        lucid_sched_preempt(s, job);
        s->run[job].remain += (double)lucid_preempt_overhead(&s->jobs[job]);
        lucid_sched_enqueue(s, job);
    }
    int started = 0;
    for (size_t i = 0; i < nprerun; i++)
        started += lucid_sched_try_start(s, p->prerun[i]); /* no stop at failures */
    if (started)
        lucid_sched_compact_queue(s);
}

static int compare_keys(const void *pa, const void *pb)
{
    const lucid_sort_key *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->position < b->position ? -1 : a->position > b->position;
}

void lucid_preemptive_stable_sort(lucid_preemptive *p, size_t n)
{
    qsort(p->keys, n, sizeof *p->keys, compare_keys);
    for (size_t i = 0; i < n; i++)
        p->order[i] = p->keys[i].job;
}
