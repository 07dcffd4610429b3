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
} decide_node;

typedef struct decide_params {
    int packing;           /* switch: 1 on (every job tried, partners first), 0 off
                            * (head of line: the first job that does not fit blocks) */
    double gpu_memory_mib; /* one GPU's memory (24576 in the reference) */
    int score_sum;         /* the pair rule's limits (the paper's: 2 and 2; */
    double priority_ratio; /* `lucid tune` searches both) */
} decide_params;

typedef struct decide_result {
    uint32_t id;
    int start;            /* 1 start now, 0 wait */
    char nodes[256];      /* comma list when start */
    uint32_t partner;     /* packed with, or 0 */
    char gpu_list[64];    /* partner's GPUs when packed */
    char reason[200];     /* why it starts here / why it waits */
} decide_result;

/* Orders `jobs` by priority (the core's LUCID_ORDER_PRIORITY, ties by id)
 * and runs the core's decision pass on them; `results` has room for njobs
 * and comes back in that order.  Node free counts are updated for the jobs
 * started.  Returns the number of jobs started. */
int decide_main(decide_job *jobs, int njobs, const decide_running *running, int nrunning,
                decide_node *nodes, int nnodes, const decide_params *params,
                decide_result *results);

/* The profiler: least GPUs first (LUCID_ORDER_FEWEST_GPUS, ties by id),
 * the core's pass without packing (stop at the first job that does not fit). */
int decide_profiling(decide_job *jobs, int njobs, decide_node *nodes, int nnodes,
                     decide_result *results);

/* Consolidated placement (the core's placer) of `gpus` asked on `nodes_asked`
 * nodes (<= 0: as many as consolidation needs): writes the chosen node
 * indices, lowers their free counts and returns how many, or 0 if it does
 * not fit (nodes unchanged then). */
int decide_place(int gpus, int nodes_asked, decide_node *nodes, int nnodes, int *chosen);

#endif
