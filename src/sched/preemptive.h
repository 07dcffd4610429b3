/* preemptive.h — the state and quota pass shared by SRTF and Tiresias (internal).
 *
 * Both policies order every waiting and running job by a key and walk that
 * order handing out the VC's GPUs (spec §4): a waiting job that fits is
 * started if it can be placed, a running job that does not fit is
 * preempted.  Re-sorting everything at every decision was quadratic in the
 * trace; here the waiting jobs are kept sorted (a short array: they are few
 * next to the running ones) and the running jobs in an ordered set with GPU
 * sums, so the pass costs O(waiting x log running + changes x log running).
 * The walk gives exactly the stable sort's outcome: ties between a waiting
 * and a running job are the policy's (`running_before`), ties among waiting
 * jobs go by queue position (arrival_seq, renewed when a preempted job
 * rejoins the queue), among running jobs by start order (run_seq). */
#ifndef LUCID_PREEMPTIVE_H
#define LUCID_PREEMPTIVE_H

#include <stddef.h>

#include "lucid/sched.h"
#include "ordset.h"

struct lucid_preemptive;

typedef struct lucid_preemptive_keys {
    /* A waiting job's key (fixed while it waits). */
    double (*waiting_key)(const lucid_sched *s, int32_t job);
    /* A running job's key in the ordered set now (fixed between the
     * policy's own updates). */
    double (*running_key)(const lucid_sched *s, const struct lucid_preemptive *p, int32_t job);
    /* GPUs of the running jobs ordered before waiting job `job`. */
    int64_t (*running_before)(const lucid_sched *s, const struct lucid_preemptive *p, int32_t job);
    /* A job has started: the policy's own bookkeeping (optional). */
    int (*started)(lucid_sched *s, struct lucid_preemptive *p, int32_t job);
} lucid_preemptive_keys;

typedef struct lucid_preemptive {
    const lucid_preemptive_keys *keys;
    int32_t *waiting; /* pending jobs in policy order */
    size_t nwaiting, cap_waiting;
    lucid_ordset running;
    int32_t *prerun, *preempt;
    size_t cap_prerun, cap_preempt;
    void *policy; /* the policy's own state */
} lucid_preemptive;

/* Allocates s->policy_state as a lucid_preemptive using `keys`. */
int lucid_preemptive_init(lucid_sched *s, const lucid_preemptive_keys *keys, lucid_error *err);
void lucid_preemptive_destroy(lucid_sched *s);
/* A job joins the queue at s->now. */
int lucid_preemptive_arrive(lucid_sched *s, int32_t job);
/* A running job ends at s->now (job_ending hook). */
void lucid_preemptive_ending(lucid_sched *s, int32_t job);
/* The jobs in the waiting list and the running set (the scratch lists
 * live only within a decision): the policies' held_jobs. */
void lucid_preemptive_held(const lucid_sched *s, lucid_job_visit visit, void *ctx);
/* The quota pass at s->now. */
void lucid_preemptive_pass(lucid_sched *s);

#endif
