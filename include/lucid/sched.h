/* sched.h — the scheduling core shared by the simulator and the live daemon.
 *
 * One `lucid_sched` holds the state of one virtual cluster: its nodes and
 * GPUs (`lucid_cluster`), the pending queue, the running list (in start
 * order, which matters to the reference's tie-breaks), and the per-job
 * runtime records.  Policies and placers are ops tables (sched_policies.c,
 * placers in cluster.c): adding one means one file and one table row.  The
 * core never reads a clock: the caller passes `now` and feeds events
 * (arrivals, completions, capacity changes). */
#ifndef LUCID_SCHED_H
#define LUCID_SCHED_H

#include <stdint.h>

#include "lucid/error.h"
#include "lucid/trace.h"
#include "lucid/util.h"

#define LUCID_NEVER INT64_MAX
#define LUCID_MAX_GPUS_PER_NODE 64
#define LUCID_PACK_MAX_GPUS 8 /* only jobs of up to 8 GPUs share GPUs */

/* ---------------- cluster: nodes and GPUs of one VC ---------------- */

typedef struct lucid_node {
    int32_t label;      /* the reference's node name: 0..n-1, 9999 for a returned node */
    int32_t alive;      /* 0 once removed (lent to the profiler) */
    int32_t free;       /* free GPUs */
    int32_t jobs;       /* jobs with GPUs here (a packed pair counts twice) */
    uint64_t free_mask; /* bit g set = GPU g free */
} lucid_node;

typedef struct lucid_cluster {
    int32_t gpus_per_node;
    lucid_node *nodes; /* list order; removed nodes stay as dead slots */
    int32_t nslots, cap_slots;
    int32_t alive_nodes;
    int64_t total_gpus, free_gpus;
    /* Per free-count bucket f (0..G), a bitset over slots of alive nodes
     * with exactly f free GPUs, and over its words a second bitset of
     * those not zero: best-fit and whole-node queries in O(G + slots/4096)
     * (one word per 64 slots scanned made a 6,700-node VC's placements
     * cost ~100 word reads each). */
    uint64_t *buckets;
    uint64_t *nonzero; /* per bucket: `words2` words, bit w = bucket word w != 0 */
    int32_t words, words2;
    int32_t *bucket_count;
} lucid_cluster;

typedef struct lucid_alloc {
    int32_t node; /* slot */
    int32_t gpus;
    uint64_t mask;
} lucid_alloc;

int lucid_cluster_init(lucid_cluster *c, int32_t nodes, int32_t gpus_per_node, lucid_error *err);
void lucid_cluster_free(lucid_cluster *c);
/* Appends an empty node with this label; returns its slot or -1 (out of memory). */
int32_t lucid_cluster_add_node(lucid_cluster *c, int32_t label);
/* Removes an idle node (all GPUs free). */
void lucid_cluster_remove_node(lucid_cluster *c, int32_t slot);
void lucid_cluster_take(lucid_cluster *c, const lucid_alloc *a, int n);
void lucid_cluster_give(lucid_cluster *c, const lucid_alloc *a, int n);
/* The `count` lowest set bits of `mask` (fewer if it has fewer): the GPUs
 * a placement takes on a node. */
uint64_t lucid_mask_lowest(uint64_t mask, int32_t count);
/* First alive slot (list order) in free-count bucket f at or after slot `from`, or -1. */
int32_t lucid_cluster_first_in_bucket(const lucid_cluster *c, int32_t f, int32_t from);

/* Placers: choose GPUs without changing the cluster.  Return the number of
 * alloc entries written (>= 1), or 0 if the job does not fit now. */
typedef struct lucid_placer_ops {
    const char *name;
    const char *summary;
    int (*select)(const lucid_cluster *c, int32_t gpus, lucid_rng *rng, lucid_alloc *out,
                  int max_out);
} lucid_placer_ops;

const lucid_placer_ops *lucid_placer_find(const char *name);
const lucid_placer_ops *const *lucid_placer_list(void); /* NULL-terminated */

/* ---------------- semantics ---------------- */

/* Each reference-simulator defect (spec §4.6) is one flag, so tests can
 * switch them one at a time; lucid_semantics_reference() sets all of them. */
typedef struct lucid_semantics {
    int end_lag;               /* remain-based jobs end one second late */
    int partner_lookup_bug;    /* a packed target ending first leaves its partner slowed */
    int profiled_rejoin_at_submit; /* profiled jobs re-enter at submit time, work not charged */
    int queue_double_count;    /* Lucid queue = profqueue + (start - submit) */
    int borrow_lost;           /* a borrow with no idle node is dropped; the return still adds */
    /* Queueing delay counts waiting only (the reference's accounting).
     * Cleared: it also counts discarded work, so that every policy's
     * queue means the same (docs/semantics.md): a profiled Lucid job's
     * queue is all time from submission to its main-cluster start (the
     * profiling run it restarts after included), a preempted job's the
     * checkpoint cost it pays at each restart. */
    int queue_waits_only;
} lucid_semantics;

lucid_semantics lucid_semantics_reference(void);
lucid_semantics lucid_semantics_fixed(void);
/* Clears the defects named in a comma-separated list (end_lag,
 * partner_lookup, profiled_rejoin, queue_double_count, borrow_lost,
 * queue_waits_only).
 * Returns 0, or -1 with the unknown name in err. */
int lucid_semantics_fix(lucid_semantics *sem, const char *list, lucid_error *err);

/* ---------------- per-job runtime state ---------------- */

enum { LUCID_WAITING = 0, LUCID_PENDING, LUCID_RUNNING, LUCID_DONE, LUCID_SKIPPED };
enum { LUCID_SCHED_ENDED, LUCID_SCHED_STARTED, LUCID_SCHED_REQUEUED }; /* on_change events */

typedef struct lucid_jobrun {
    int64_t start_time;  /* first start (main pass), -1 if never */
    int64_t end_time;    /* -1 until the job ends */
    double queue;        /* queueing delay as the policy accounts it */
    double remain;       /* work left after step `base` (seconds at rate 1) */
    int64_t base;        /* step at which `remain` / `attained` were last materialized */
    double rate;         /* progress per second: 1, or the co-located speed */
    int64_t attained;    /* Tiresias: GPU-seconds attained up to `base` */
    int64_t waiting_since; /* when it joined the queue, or was last preempted */
    int64_t profqueue;   /* Lucid: wait for the profiler */
    int64_t prof_start, prof_end; /* Lucid: profiling run (-1 if not profiled) */
    uint32_t arrival_seq; /* order of joining the queue (stable tie-break) */
    uint32_t run_seq;     /* order in the running list */
    int32_t run_prev, run_next; /* running list links (job indices, -1 = none) */
    int32_t alloc_off, alloc_n; /* GPUs held: entries in lucid_sched.allocs */
    int32_t partner;      /* job sharing our GPUs now, -1 */
    int32_t packed_with;  /* last partner (for reports), -1 */
    int32_t packed_onto;  /* the running job whose GPUs it started on, -1 */
    int32_t share_score;  /* Lucid sharing score 0/1/2 */
    int32_t ckpt_times;
    uint32_t gen;         /* invalidates stale completion events */
    int8_t status;
    int8_t exclusive;     /* 0 while marked packed */
    int8_t profiled, finished_in_profiler;
    int8_t in_cand;       /* Lucid: in its GPU count's partner candidates */
} lucid_jobrun;

/* What a simulation keeps of one job once its VC's run is over (the 144-byte
 * lucid_jobrun is a working record: the simulator holds one per job only
 * while that job's VC runs, on VC-local arrays).  40 bytes, no padding, so
 * that results compare with memcmp.  Job references are trace indices. */
typedef struct lucid_jobresult {
    int64_t start_time;  /* first start (main pass), -1 if never */
    int64_t end_time;    /* -1 if it never ended */
    double queue;        /* queueing delay as the policy accounts it */
    int32_t packed_with; /* last partner, -1 */
    int32_t packed_onto; /* the running job whose GPUs it started on, -1 */
    int32_t ckpt_times;  /* preemptions */
    int8_t status;       /* LUCID_DONE, or LUCID_SKIPPED when not simulated */
    int8_t exclusive;    /* 0: ended while packed */
    int8_t profiled, finished_in_profiler; /* Lucid */
} lucid_jobresult;

/* ---------------- the scheduler state of one VC ---------------- */

typedef struct lucid_event {
    int64_t time;
    uint32_t run_seq;
    uint32_t gen;
    int32_t job;
} lucid_event;

struct lucid_policy_ops;
struct lucid_lucid_inputs;
struct lucid_fairshare;
typedef struct lucid_queued lucid_queued;
/* Called once per job index by the functions that list the jobs a
 * structure holds (lucid_sched_held_jobs and the like). */
typedef void (*lucid_job_visit)(void *ctx, int32_t job);
struct lucid_backfill;

typedef struct lucid_sched {
    const lucid_job *jobs;        /* the trace (global indices) */
    lucid_jobrun *run;            /* runtime records, indexed like jobs */
    lucid_cluster cluster;
    const lucid_placer_ops *placer;
    const struct lucid_policy_ops *policy;
    const struct lucid_lucid_inputs *lucid; /* Lucid's models' outputs (NULL otherwise) */
    const double *priority;       /* per job: estimate (<0 -> 1000) x gpu_num (QSSF, Lucid) */
    lucid_semantics sem;
    lucid_rng rng;
    int32_t vc;

    int32_t *queue;               /* pending jobs in policy order (points into qbuf) */
    size_t qlen;
    int32_t *qbuf;                /* queue storage; the queue starts at qbuf + (queue - qbuf) */
    size_t qcap;
    int64_t arrivals_step;        /* step of the latest arrival */
    size_t arrivals_now;          /* jobs that arrived at arrivals_step */
    /* Lucid only (NULL otherwise): per GPU count g <= LUCID_PACK_MAX_GPUS,
     * the running exclusive jobs of g GPUs in start order, the packing
     * partner candidates (an ordered set, src/sched/ordset.h). */
    struct lucid_ordset *cand;
    int32_t run_head, run_tail;   /* running list in start order */
    size_t nrunning;
    uint32_t next_run_seq, next_arrival_seq;

    lucid_alloc *allocs;          /* GPU holdings (append-only arena) */
    size_t nallocs, cap_allocs;
    lucid_event *heap;            /* pending completions (min-heap) */
    size_t nheap, cap_heap;

    int64_t now;
    int64_t packed_gpus;          /* GPUs carrying two jobs */
    int changed;                  /* the last decide() started, preempted or packed something */
    void *policy_state;
    lucid_alloc *scratch;         /* placement buffer */
    int scratch_cap;
    /* Backfill with reservations (backfill.h); NULL: the policy's own pass. */
    struct lucid_backfill *backfill;
    /* Called when a job ends (after), starts from the queue, or is preempted
     * back into it (NULL: none): the start-time estimates learn their error
     * table and keep the queue's total work from it. */
    void (*on_change)(void *ctx, const struct lucid_sched *s, int32_t job, int event);
    void *on_change_ctx;
    /* Fair share (fairshare.h; NULL: off, the default): the users' decayed
     * GPU-seconds, charged from here as jobs start and stop, and the weight
     * lucid_sched_decide orders the queue with (policies with a
     * fair_priority only). */
    struct lucid_fairshare *fairshare;
    double fairshare_weight;
    lucid_queued *fair_order; /* lucid_sched_decide's scratch (and the slurm policy's) */
    size_t fair_cap;
    /* The slurm policy's priority weights (NULL: slurm.conf's defaults). */
    const struct lucid_slurm_priority *slurm_priority;
    /* Its associations: per fair-share ledger slot, the account the user
     * is in (0, 1, ...), or -1 directly under the root (NULL: every user
     * under the root, each an equal share). */
    const int32_t *slurm_account;
    double *slurm_fs;             /* each slot's fair-share factor, as Slurm last computed it */
    size_t slurm_fs_cap;
    int64_t slurm_fs_at;          /* ... at this priority recalculation */
    int slurm_fs_valid;
    double slurm_latency_carry;   /* start_latency's fraction not yet spent */
    double *slurm_ft;             /* Fair Tree's working memory (policy_slurm.c) */
    size_t slurm_ft_cap;
} lucid_sched;

int lucid_sched_init(lucid_sched *s, const lucid_job *jobs, lucid_jobrun *run, int32_t vc,
                     int32_t nodes, int32_t gpus_per_node, const lucid_placer_ops *placer,
                     const struct lucid_policy_ops *policy, lucid_semantics sem, uint64_t seed,
                     lucid_error *err);
/* Frees the state (and the policy's, via policy->destroy). */
void lucid_sched_free(lucid_sched *s);

/* Queue helpers. */
int lucid_sched_enqueue(lucid_sched *s, int32_t job); /* append (arrival order) */
/* Inserts after every queued job that does not compare greater (stable insertion). */
int lucid_sched_enqueue_sorted(lucid_sched *s, int32_t job,
                               int (*less)(const lucid_sched *s, int32_t a, int32_t b));
/* Removes queued jobs whose status is no longer PENDING (after a pass). */
void lucid_sched_compact_queue(lucid_sched *s);

/* Tries to place `job` with the placer; on success starts it (status,
 * times, completion event) and returns 1; 0 if it does not fit. */
int lucid_sched_try_start(lucid_sched *s, int32_t job);
/* Starts `job` on exactly these free GPUs (backfill's chosen placement). */
int lucid_sched_start_on(lucid_sched *s, int32_t job, const lucid_alloc *a, int n);
/* Starts `job` on exactly the GPUs of running `target` (Lucid packing). */
void lucid_sched_start_packed(lucid_sched *s, int32_t job, int32_t target, double job_speed,
                              double target_speed);
/* Stops a running job and frees its GPUs (preemption); `remain` and
 * `attained` are brought up to `now` first. */
void lucid_sched_preempt(lucid_sched *s, int32_t job);
/* Changes a running job's rate from the next second on. */
void lucid_sched_set_rate(lucid_sched *s, int32_t job, double rate);
/* Work left after step `t` (t >= base) for a running job. */
double lucid_sched_remain_at(const lucid_sched *s, int32_t job, int64_t t);
int64_t lucid_sched_attained_at(const lucid_sched *s, int32_t job, int64_t t);
/* *value -= rate, `budget` times (or until <= 0 with `until_done`), exactly
 * as one double subtraction per second would; returns the count done. */
int64_t lucid_subtract_repeatedly(double *value, double rate, int64_t budget, int until_done);

/* Completions: the earliest pending end time, or LUCID_NEVER. */
int64_t lucid_sched_next_end(lucid_sched *s);
/* Ends every job due at `now` (in start order), frees GPUs, and returns how
 * many ended. */
int lucid_sched_finish_due(lucid_sched *s, int64_t now);
/* Calls visit for every job whose record the scheduler state may still
 * read (a job may come more than once): queued and running jobs, running
 * jobs' partners, every completion event, stale ones included (dropping one
 * reads the job's record), Lucid's partner candidates and the policy's own
 * structures (held_jobs).  The record of an ended job not named is never
 * read again by the scheduler, so the simulator may copy it out and give
 * it back. */
void lucid_sched_held_jobs(const lucid_sched *s, lucid_job_visit visit, void *ctx);
/* The smallest of those jobs, INT32_MAX if none. */
int32_t lucid_sched_oldest_job(const lucid_sched *s);
/* A lucid_job_visit that lowers *(int32_t *)ctx to the job. */
void lucid_job_visit_min(void *ctx, int32_t job);

/* ---------------- policies ---------------- */

enum {
    LUCID_POLICY_REMAIN_BASED = 1, /* ends by remaining work (end lag applies) */
    LUCID_POLICY_ESTIMATES = 2,    /* needs duration estimates */
    LUCID_POLICY_LUCID = 4,        /* profiler, packing, forecast */
    LUCID_POLICY_HEAD_OF_LINE = 8, /* the first waiting job that does not fit blocks the rest */
};

typedef struct lucid_policy_ops {
    const char *name;
    const char *summary;
    unsigned flags;
    int64_t decision_period; /* jobs start only at multiples of this (0: any second) */
    int (*init)(lucid_sched *s, lucid_error *err);
    void (*destroy)(lucid_sched *s);
    /* A job joins the queue at s->now. */
    int (*arrive)(lucid_sched *s, int32_t job);
    /* The queue order of the ordered non-preemptive policies (FIFO, SJF, the
     * profiler), for lucid_sched_arrive_ordered; NULL for the others. */
    int (*order)(const lucid_sched *s, int32_t a, int32_t b);
    /* Orders the queue and starts (or preempts) jobs at s->now. */
    void (*decide)(lucid_sched *s);
    /* The earliest step after s->now at which decide() could act although
     * no job arrives or ends; LUCID_NEVER if none. */
    int64_t (*next_decision)(const lucid_sched *s);
    /* A running job is about to end at s->now (optional). */
    void (*job_ending)(lucid_sched *s, int32_t job);
    /* Calls visit for every job index the policy's own state still holds
     * and may read again (optional: NULL for a policy that keeps no job
     * indices across steps).  See lucid_sched_held_jobs. */
    void (*held_jobs)(const lucid_sched *s, lucid_job_visit visit, void *ctx);
    /* The priority a fair-share order scales (lucid_order_value; lower runs
     * first), NULL for a policy that ignores fair share: FIFO 1 (fair share
     * alone, then arrival order), SJF the duration, QSSF and Lucid
     * estimate x GPUs.  SRTF and Tiresias have none (docs/fairshare.md). */
    double (*fair_priority)(const lucid_sched *s, int32_t job);
} lucid_policy_ops;

/* One decision at s->now: with fair share on (s->fairshare and the
 * policy's fair_priority), the queue is first stably re-sorted by
 * lucid_order_value(fair_priority, weight, the user's factor now), ties in
 * arrival order; then policy->decide.  Without, policy->decide alone. */
void lucid_sched_decide(lucid_sched *s);
/* policy->next_decision, and with fair share on, while jobs wait behind
 * running ones, the next multiple of LUCID_FAIRSHARE_PERIOD: usage moves
 * the order without an event. */
int64_t lucid_sched_next_decision(const lucid_sched *s);

/* By name: the six of lucid_policy_list and the baselines run only when
 * named ("slurm"). */
const lucid_policy_ops *lucid_policy_find(const char *name);
/* The six policies of the paper's tables, the set `policies = all` runs
 * (NULL-terminated). */
const lucid_policy_ops *const *lucid_policy_list(void);

extern const lucid_policy_ops lucid_policy_fifo, lucid_policy_sjf, lucid_policy_qssf,
    lucid_policy_srtf, lucid_policy_tiresias, lucid_policy_lucid, lucid_policy_slurm;

/* Slurm's priority/multifactor as the policy "slurm" computes it
 * (policy_slurm.c, docs/slurm-policy.md): slurm.conf's PriorityWeightAge,
 * PriorityWeightFairshare and PriorityWeightJobSize, PriorityMaxAge and
 * PriorityCalcPeriod (seconds) and PriorityFavorSmall; and how often
 * sched/backfill runs (SchedulerParameters bf_interval, seconds; with
 * backfill on, the decisions in between are the main scheduler's). */
typedef struct lucid_slurm_priority {
    double weight_age, weight_fairshare, weight_jobsize;
    int64_t max_age, calc_period;
    int favor_small;
    int64_t bf_interval;
    /* The fair-share factor: Fair Tree (1, Slurm's default since 19.05)
     * or the classic 2^(-U/S) (0, PriorityFlags=NO_FAIR_TREE). */
    int fair_tree;
    /* What a job's usage is counted in (TRESBillingWeights CPU= and
     * GRES/gpu=; without them Slurm bills a job's CPUs): per second
     * bill_cpu x CPUs + bill_gpu x GPUs (a job whose trace gives no CPUs
     * counts as many CPUs as GPUs). */
    double bill_cpu, bill_gpu;
    /* The job-size factor's denominators, Slurm's node and CPU counts of
     * the whole cluster (0: the simulated VC's nodes; its GPUs stand for
     * CPUs). */
    int64_t cluster_nodes, cluster_cpus;
    /* Slurm's latency from the decision to the start (sacct's Start), in
     * seconds on average: every start takes place that much later, in
     * whole seconds with the fraction carried to the next (0: at once). */
    double start_latency;
} lucid_slurm_priority;
/* slurm.conf's defaults: weights 0, 7 days, 300 s, no; bf_interval 30 s;
 * Fair Tree; billing by CPUs. */
#define LUCID_SLURM_PRIORITY_DEFAULT                                                             \
    {.max_age = 7 * 86400, .calc_period = 300, .bf_interval = 30, .fair_tree = 1, .bill_cpu = 1}
lucid_slurm_priority lucid_slurm_priority_default(void);
/* The priority Slurm gives queued `job` at s->now (higher runs first). */
double lucid_slurm_priority_of(const lucid_sched *s, int32_t job);
/* [slurm] accounts ("ACCOUNT:USER,USER ACCOUNT:USER ..."): with `users`
 * (the trace's strings), each named user's fair-share ledger slot (of
 * `nslots`) gets its account's index in `account` (others are left as
 * they are: -1, under the root); users the trace lacks are passed over.
 * Without `users` only the text is checked.  Returns the accounts named,
 * or -1 with a message naming the bad part. */
int32_t lucid_slurm_accounts_parse(const char *text, const struct lucid_strtab *users,
                                   int32_t nslots, int32_t *account, lucid_error *err);

/* Lucid's inputs (from the side files or the online models). */
typedef struct lucid_lucid_inputs {
    const int32_t *share;     /* per job sharing score 0..2 */
    const lucid_pairs *pairs; /* co-located speeds */
    const int32_t *outside_model; /* per string id: 1 = model not in the pair table */
    /* 3 x 3 co-located speeds by (own, partner's) sharing score for jobs
     * without a workload key (lucid_venus_prior); NULL: they run at full
     * speed when packed, as the reference. */
    const double *prior_speed;
    /* 1: while packing is on, a job packs only when it cannot start on
     * free GPUs at once (indolent by the cluster's state as well as the
     * forecast); 0: partner first, as the reference. */
    int pack_when_blocked;
    double gmem_limit;        /* MiB per GPU (24576) */
    double priority_ratio;    /* newcomer priority <= ratio x partner's (2) */
    int32_t score_sum;        /* sharing scores must sum to <= this (2) */
    /* Packing switch: on at [switch_on[k], switch_off[k]) — times are
     * multiples of 100 s computed from the forecast. */
    const int64_t *switch_times; /* times where the switch value changes */
    const int8_t *switch_values; /* value from that time on */
    size_t nswitch;
    int8_t switch_initial;
    double pack_threshold;        /* the switch is on while the forecast exceeds it */
    const lucid_forecast *forecast; /* for explanations (NULL: none) */
    int64_t forecast_start;         /* the step forecast row 0 stands for */
} lucid_lucid_inputs;

/* Lucid's affine-pair rule (spec §2.3), the one implementation the
 * simulator's Lucid policy and lucidd's decision step share: may a newcomer
 * of `gpus` GPUs share the GPUs of a running job? Same GPU count, at most
 * LUCID_PACK_MAX_GPUS, GPU memory fitting in one GPU (strictly), sharing
 * scores summing to at most `score_sum`, and the newcomer's priority at
 * most `priority_ratio` times the running job's. */
typedef struct lucid_pair_side {
    int32_t gpus;
    double gmem_mib;  /* NaN counts as 0 */
    int32_t score;    /* 0..2 */
    double priority;
} lucid_pair_side;
int lucid_pair_allowed(const lucid_pair_side *newcomer, const lucid_pair_side *running,
                       double gmem_limit_mib, int32_t score_sum, double priority_ratio);

/* Value of the packing switch at step t. */
int lucid_packing_switch_at(const lucid_lucid_inputs *in, int64_t t);

/* ---------------- queue order and the decision pass ----------------
 * (decision.c) The rules of a decision that do not depend on where the jobs
 * live, one implementation for both callers: the simulator's policies apply
 * them to the trace-indexed queue of a lucid_sched, lucidd's decision step
 * (src/daemon/decide.c) to the live jobs it read from Slurm this tick. */

/* Lucid's two queues (spec §4.5): the main queue by priority (estimated
 * duration x GPUs, lower first), the profiler's by GPU count (least GPU
 * first); equal keys keep arrival order. */
typedef enum lucid_queue_order { LUCID_ORDER_PRIORITY, LUCID_ORDER_FEWEST_GPUS } lucid_queue_order;

/* A queued job as the orders see it: 16 bytes, so that sorting 10,000 of
 * them moves little (lucidd sorts its whole queue at each decision). */
struct lucid_queued {
    double key;     /* the order's key (lucid_queued_make) */
    uint32_t seq;   /* arrival order (the simulator's arrival_seq; lucidd: the
                     * Slurm job id, which grows with submission) */
    uint32_t index; /* the caller's, carried along by lucid_queue_sort */
};

/* The entry of a job in `order`: its key is the priority, or the GPU count. */
lucid_queued lucid_queued_make(lucid_queue_order order, double priority, int32_t gpus,
                               uint32_t seq, uint32_t index);
/* < 0 if `a` goes first, > 0 if `b` does: lower key first, then lower seq. */
int lucid_queue_compare(const lucid_queued *a, const lucid_queued *b);
/* Sorts into queue order (deterministic when seqs are unique). */
void lucid_queue_sort(lucid_queued *jobs, size_t n);

/* How a caller starts the job at `position` of its ordered queue. */
typedef struct lucid_start_hooks {
    void *ctx;
    /* On a running job's GPUs, where Lucid's pair rule (lucid_pair_allowed)
     * finds a partner: 1 if packed.  NULL: never packs. */
    int (*pack)(void *ctx, size_t position);
    /* On free GPUs (the caller's placer): 1 if started, 0 if it does not fit. */
    int (*place)(void *ctx, size_t position);
    /* 1: the job may not start now for a reason of its own, not of the
     * cluster (lucidd: its user is at a limit of the site); it is passed
     * over and blocks nobody, also with packing off.  NULL: none is (the
     * simulator). */
    int (*skip)(void *ctx, size_t position);
} lucid_start_hooks;

/* The decision pass over n jobs in queue order (spec §4.5).  Packing on:
 * every job is tried, on a partner's GPUs first, then on free ones.
 * Packing off: jobs start in order until the first that does not fit, which
 * blocks the rest (head of line: Lucid without packing, its profiler, FIFO,
 * SJF, QSSF).  A job the skip hook passes over neither starts nor blocks.
 * Returns how many started; *stopped_at is the position of the blocking
 * job, or n. */
size_t lucid_start_in_order(size_t n, int packing, const lucid_start_hooks *hooks,
                            size_t *stopped_at);


/* ---------------- helpers for policies ---------------- */
/* Marks `job` pending from s->now on (arrival order, waiting-since time). */
void lucid_sched_mark_arrival(lucid_sched *s, int32_t job);
/* The decision pass (lucid_start_in_order) over `n` of this VC's jobs in
 * the given order; `pack` (NULL: none) tries a job on a partner's GPUs
 * first while `packing`.  Returns how many started; the queue is not
 * compacted. */
size_t lucid_sched_start_in_order(lucid_sched *s, const int32_t *jobs, size_t n, int packing,
                                  int (*pack)(lucid_sched *s, int32_t job), size_t *stopped_at);
/* The same pass over the queue; started jobs leave it. */
void lucid_sched_start_queue(lucid_sched *s, int packing, int (*pack)(lucid_sched *s, int32_t job));
/* Starts queued jobs in queue order; with `stop_at_failure` the first job
 * that does not fit ends the pass (head-of-line blocking).  Compacts the queue. */
void lucid_sched_place_in_order(lucid_sched *s, int stop_at_failure);
/* Lucid's queue orders (lucid_queue_compare) as `less` functions for
 * lucid_sched_enqueue_sorted: by priority (main queue), by fewest GPUs
 * (the profiler); ties by arrival_seq. */
int lucid_sched_less_priority(const lucid_sched *s, int32_t a, int32_t b);
int lucid_sched_less_gpus(const lucid_sched *s, int32_t a, int32_t b);
/* Building blocks of the non-preemptive ordered policies (FIFO, SJF, the
 * profiler's least-GPU-first): the job joins the queue after every job
 * that does not order after it; decide() starts jobs in order until one
 * does not fit; nothing changes between arrivals and completions. */
int lucid_sched_arrive_ordered(lucid_sched *s, int32_t job); /* by s->policy->order */
void lucid_decide_head_of_line(lucid_sched *s);
int64_t lucid_no_timed_decisions(const lucid_sched *s);
/* Lucid's profiler queue: least GPUs first, head of line (src/sim/profiler.c
 * runs it on the profiling cluster; not a policy of its own in the table). */
extern const lucid_policy_ops lucid_policy_profiler;
/* The reference's checkpoint-restore cost of a preemption: 40 s up to 8 GPUs, else 60 s. */
int64_t lucid_preempt_overhead(const lucid_job *job);
#endif
