/* ordset.h — an ordered set of jobs with GPU sums (internal).
 *
 * The preemptive policies (SRTF, Tiresias) walk their running jobs in
 * policy order handing out the VC's GPUs.  Walking every running job at
 * every decision made them quadratic in the trace; this set answers "GPUs
 * held by the running jobs ordered before key k" and "the first running job
 * at which the GPUs so far exceed q" in O(log n), so a decision costs
 * O((waiting jobs + changes) x log n).  A treap keyed by (key, seq) — seq
 * breaks ties and makes every element's key unique — whose nodes carry
 * their subtree's GPU sum; its priorities come from its own seeded
 * generator, so runs are reproducible.
 *
 * Lucid's partner candidates (running exclusive jobs of one GPU count, in
 * start order) use the same set: each node also carries the pair rule's
 * inputs (GPU memory, sharing score, priority) and its subtree's bounds of
 * them, so "the first candidate the rule allows" prunes whole subtrees that
 * cannot hold one instead of scanning the list from its head. */
#ifndef LUCID_ORDSET_H
#define LUCID_ORDSET_H

#include <stddef.h>
#include <stdint.h>

typedef struct lucid_ordnode {
    double key;
    uint32_t seq;
    uint32_t prio;
    int32_t job;
    int32_t gpus;
    int32_t left, right; /* node indices, -1 = none */
    int64_t sum;         /* GPUs of the subtree */
    /* Lucid's candidates: this job's GPU memory (NaN as 0), sharing score
     * and priority; then the subtree's bounds of them. */
    double gmem, priority;
    int32_t score, min_score;
    double min_gmem, min_priority, max_priority;
} lucid_ordnode;

/* What a partner candidate is matched on (lucid_ordset_first_match). */
typedef struct lucid_ordset_match {
    double gmem_below;  /* candidate's gmem must be < this */
    int32_t score_upto; /* candidate's score must be <= this */
    double priority;    /* newcomer's priority: <= candidate's x ratio */
    double ratio;
    /* the exact test, called on candidates the bounds do not exclude */
    int (*accept)(const void *ctx, int32_t job);
    const void *ctx;
} lucid_ordset_match;

typedef struct lucid_ordset {
    lucid_ordnode *nodes;
    size_t cap, used;
    int32_t root, free_list;
    size_t count;
    uint64_t rng;
} lucid_ordset;

void lucid_ordset_init(lucid_ordset *o);
void lucid_ordset_free(lucid_ordset *o);
/* Inserts (key, seq) -> job; 0, or -1 when out of memory. */
int lucid_ordset_insert(lucid_ordset *o, double key, uint32_t seq, int32_t job, int32_t gpus);
/* Inserts a partner candidate with its pair-rule inputs. */
int lucid_ordset_insert_pair(lucid_ordset *o, double key, uint32_t seq, int32_t job, int32_t gpus,
                             double gmem, int32_t score, double priority);
/* The first element (in order) that m->accept takes, skipping subtrees
 * whose bounds rule every element out; -1 if none. */
int32_t lucid_ordset_first_match(const lucid_ordset *o, const lucid_ordset_match *m);
/* Removes the element (key, seq); 1 if it was there, else 0. */
int lucid_ordset_remove(lucid_ordset *o, double key, uint32_t seq);
/* GPUs of all elements. */
int64_t lucid_ordset_total(const lucid_ordset *o);
/* GPUs of the elements whose key is < k (inclusive = 0) or <= k (inclusive = 1). */
int64_t lucid_ordset_sum_below(const lucid_ordset *o, double k, int inclusive);
/* The first element (in order) at which the running GPU sum from the start
 * exceeds `target`: its job, and that sum through it in *through.
 * -1 if the total does not exceed target. */
int32_t lucid_ordset_first_exceeding(const lucid_ordset *o, int64_t target, int64_t *through);
/* The first element whose key is >= k: its key in *key; -1 if none. */
int32_t lucid_ordset_first_at_least(const lucid_ordset *o, double k, double *key);
/* Calls visit(ctx, job) for each element (free nodes not counted). */
void lucid_ordset_visit_jobs(const lucid_ordset *o, void (*visit)(void *ctx, int32_t job),
                             void *ctx);

#endif
