/* decide.h — lucidd's one decision step, kept behind this small interface.
 *
 * Input: the jobs waiting (in the order of their queue), the jobs running on
 * the main partition (for packing), and the free GPUs per node; output: which
 * jobs start now, where, and with whom they are packed, plus a reason for
 * every job that waits.  No Slurm, no clock, no I/O: the same inputs give the
 * same decisions (tested without Slurm, benchmarked in bench/).
 *
 * The decision is the shared scheduling core's (include/lucid/sched.h), the
 * code the simulator runs: its queue orders, its decision pass (head of line
 * while packing is off), its pair rule and its consolidated placer.  What
 * only Slurm needs (node counts fixed by -N, releases not started yet,
 * packed jobs invisible to Slurm) enters that pass as hooks (decide.c). */
#ifndef LUCIDD_DECIDE_H
#define LUCIDD_DECIDE_H

#include <stdint.h>

#include "fit.h"
#include "lucid/sched.h"

struct lucid_eta_table;

typedef struct decide_job {
    uint32_t id;
    int gpus;          /* total */
    int nodes;         /* nodes asked (-N); <= 0: the job fixed none (e.g. --gpus=16
                        * without -N): consolidated placement chooses how many */
    double priority;   /* lower first; ties by id */
    int sharing_score; /* 0..2, or -1 unknown (never packed) */
    double gmem_mib;   /* profiled peak GPU memory */
    const unsigned char *node_ok; /* NULL: any node; else node_ok[k] != 0 means node k of
                                   * this call's `nodes` array may be used (-w, --exclude),
                                   * for placement and for the partner's node */
    double estimate_s; /* duration estimate, for start-time estimates and reservations
                        * (<= 0: priority / GPUs, the estimate lucidd's priority holds) */
    int holds;         /* backfill: it held a reservation after the last decision
                        * (decide_result.holds, kept by the caller across decisions) */
    const fit_request *fit; /* the site's rules beyond GPUs (fit.h): CPUs, memory and
                             * --exclusive checked against each node's `room` as it is
                             * placed; NULL: GPUs only (the node rooms are not read) */
    const fit_limits *limits; /* the site's GPU limits it is under (fit.h), NULL none: a job
                               * they do not let start now is passed over without blocking
                               * the queue, and each start counts against them */
} decide_job;

typedef struct decide_running {
    decide_job job;
    int node;          /* index into the node array (single-node jobs only) */
    char gpu_list[64]; /* node-local indices it holds ("0-3") */
    int packed;        /* already shares its GPUs */
} decide_running;

typedef struct decide_node {
    char name[64];
    int free_gpus;
    int total_gpus;
    int settling; /* jobs released there that Slurm has not started yet (no
                   * packing onto that node meanwhile); placements add to it */
    fit_room room; /* CPUs and memory free, for jobs with `fit` (placements take from it) */
    /* Slurm's side of packing, read only with decide_params.slurm_packing
     * (fit_pack_ok): GPUs Slurm has not allocated nor lucid promised (a
     * packed job's node keeps them; placements take from it), and units of
     * the share GRES free (-1: the node has none; packs take from it). */
    int slurm_free;
    int share_free;
} decide_node;

/* A job holding GPUs of this call's nodes, as the start-time estimates and
 * reservations see it: its GPUs come back at its estimated end. */
#define DECIDE_BUSY_NODES 32
typedef struct decide_busy {
    uint32_t id;
    int gpus;           /* total, shared evenly by its nodes */
    int nnodes;         /* entries in node[]; 0: on none of these nodes (ignored) */
    int node[DECIDE_BUSY_NODES]; /* indices into the node array */
    double estimate_s;  /* the duration model's estimate (<= 0: 1000 s) */
    int64_t start;      /* when it started (s, the caller's clock); elapsed = now - start */
    uint32_t partner;   /* shares its GPUs with this job (packed), or 0 */
    /* For Lucid's packing replay (decide_predict with params->packing): its
     * priority, sharing score (-1 unknown: never a partner) and GPU memory. */
    double priority;
    int sharing_score;
    double gmem_mib;
} decide_busy;

/* A job that joined lucid's queues at `time` (the caller's clock): Lucid's
 * packing replay mirrors the recent ones as arrivals to come (eta.h,
 * LUCID_ETA_GHOST_WINDOW), as the simulator does.  `job` as it is now. */
typedef struct decide_arrival {
    int64_t time;
    decide_job job;
} decide_arrival;

/* What start-time estimates and reservations need beyond one decision:
 * the clock, the jobs holding GPUs, and the actual/estimate ratios of jobs
 * that ended (eta.h's table; the caller keeps it, no global). */
typedef struct decide_horizon {
    int64_t now;
    const decide_busy *busy;
    int nbusy;
    struct lucid_eta_table *table;
    const decide_arrival *arrivals; /* oldest first; read by decide_predict only */
    int narrivals;
} decide_horizon;

typedef struct decide_params {
    int packing;           /* switch: 1 on (every job tried, partners first), 0 off
                            * (head of line: the first job that does not fit blocks) */
    double gpu_memory_mib; /* one GPU's memory (24576 in the reference) */
    int score_sum;         /* the pair rule's limits (the paper's: 2 and 2; */
    double priority_ratio; /* `lucid tune` searches both) */
    int slurm_packing;     /* 1: a pair forms only where Slurm would start the packed
                            * job (fit_pack_ok on the node's slurm_free / share_free) */
    /* Backfill with reservations (backfill.h's LUCID_BACKFILL_*; 0 none, the
     * default: the pass above unchanged).  Needs `horizon`.  EASY: the first
     * job that does not fit holds a reservation on the availability profile
     * (the shared core's, built from the busy jobs' estimated ends); a later
     * job starts only on GPUs that reservation does not need during its own
     * estimated run x margin.  Conservative: every job that does not fit
     * holds one.  Reservations are recomputed at every decision; a job that
     * holds one (decide_job.holds) keeps it until it starts: those jobs are
     * placed first, in queue order, whatever the window or the size class
     * say now (the simulator's rule, backfill.c). */
    int backfill;
    double backfill_margin; /* < 1: 1 */
    /* A new reservation only for a job of at least backfill_min_gpus GPUs
     * (0: any) whose earliest start is at most backfill_window s from now
     * (0: no limit): lucid_backfill_reservable / lucid_backfill_in_window,
     * the simulator's `backfill_min_gpus` / `backfill_window`.  A job that
     * gets none holds nothing: later jobs start as if it were not there. */
    int64_t backfill_window;
    int backfill_min_gpus;
#define DECIDE_RESERVATIONS 64 /* conservative: at most this many per decision */
    const decide_horizon *horizon;
} decide_params;

typedef struct decide_result {
    uint32_t id;
    int start;            /* 1 start now, 0 wait */
    char nodes[256];      /* comma list when start */
    uint32_t partner;     /* packed with, or 0 */
    char gpu_list[64];    /* partner's GPUs when packed */
    int share_gpus;       /* packed onto a node with the share GRES: units to ask (its
                           * GPUs), so Slurm accounts them; 0 none */
    char reason[200];     /* why it starts here / why it waits */
    int64_t reserved_at;  /* backfill: the start reserved for it (horizon clock), or -1 */
    char reserved_nodes[64]; /* ... on these nodes ("n3,n4") */
    int holds;            /* it holds a reservation after this decision (given now or
                           * kept; with reserved_at -1 when it fits nowhere now): the
                           * caller passes it back as decide_job.holds next time */
} decide_result;

/* Orders `jobs` by priority (the core's LUCID_ORDER_PRIORITY, ties by id)
 * and runs the core's decision pass on them; `results` has room for njobs
 * and comes back in that order.  Node free counts are updated for the jobs
 * started.  Returns the number of jobs started. */
int decide_main(decide_job *jobs, int njobs, const decide_running *running, int nrunning,
                decide_node *nodes, int nnodes, const decide_params *params,
                decide_result *results);

/* The profiler: the core's pass without packing (stop at the first job that
 * does not fit), in `order`: least GPUs first (LUCID_ORDER_FEWEST_GPUS, the
 * reference profiler's) or by priority (LUCID_ORDER_PRIORITY, lucidd's
 * order with the site's fair share); ties by id. */
int decide_profiling(decide_job *jobs, int njobs, lucid_queue_order order, decide_node *nodes,
                     int nnodes, decide_result *results);

/* Start-time estimates (P10/P50/P90) of waiting jobs, by the shared core's
 * predictor (lucid_eta_predict, eta.h: the simulator's): the jobs in the
 * queue order of `order` (0 priority as decide_main, 1 fewest GPUs as
 * decide_profiling; `jobs` is left in that order) placed forward on the
 * availability profile of `nodes` (free GPUs now) and `horizon`'s busy jobs
 * (their GPUs back at estimate x ratio, conditioned on elapsed), in order
 * (or with `params->backfill`'s reservations).  Node masks and -N counts
 * are not modelled: an estimate is for the job's GPU count.  out[k] is for
 * jobs[k]; a start of -1 means it can never fit.  Returns 0, or -1 (out of
 * memory). */
typedef struct decide_eta {
    uint32_t id;
    int64_t p10, p50, p90; /* predicted start, the horizon's clock */
} decide_eta;
int decide_predict(decide_job *jobs, int njobs, int order, const decide_node *nodes, int nnodes,
                   const decide_params *params, const decide_horizon *horizon, decide_eta *out);

/* Consolidated placement (the core's placer) of `gpus` asked on `nodes_asked`
 * nodes (<= 0: as many as consolidation needs): writes the chosen node
 * indices, lowers their free counts and returns how many, or 0 if it does
 * not fit (nodes unchanged then). */
int decide_place(int gpus, int nodes_asked, decide_node *nodes, int nnodes, int *chosen);

#endif
