/* slurm_io.h — lucidd's only contact with Slurm (libslurm's C API).
 *
 * Reads jobs and nodes into plain structs the rest of the daemon can test
 * without Slurm, and applies lucid's decisions: pin + release, requeue with
 * hold, move to another partition, cancel.  Facts behind each call:
 * shared/spec/slurm-lab.md. */
#ifndef LUCIDD_SLURM_IO_H
#define LUCIDD_SLURM_IO_H

#include <stdint.h>
#include <time.h>

#include "lucid/error.h"

typedef enum slurm_job_run_state {
    SJ_PENDING, /* includes "requeued, still completing" (see completing) */
    SJ_RUNNING,
    SJ_COMPLETED,
    SJ_FAILED, /* failed, cancelled, timeout, node fail, out of memory... */
} slurm_job_run_state;

typedef struct slurm_job {
    uint32_t id;
    char user[64];
    char name[128];
    char partition[64];
    slurm_job_run_state state;
    char state_name[32]; /* Slurm's word for it, for reasons */
    int completing;      /* still cleaning up (requeue is asynchronous) */
    int requeueing;      /* a requeue is in progress */
    int held;            /* priority 0 */
    int gpus;            /* total GPUs asked (per node x nodes, or per job) */
    int gpus_per_node;   /* 0 when asked per job */
    int nodes;           /* nodes asked */
    int cpus;            /* CPUs asked or allocated (0 = unknown) */
    int gres_malformed;  /* a GPU request lucid cannot read */
    time_t submit_time, start_time, end_time;
    uint32_t time_limit_min; /* 0 = none */
    int restarts;
    char node_list[256];   /* allocated nodes, Slurm's hostlist form */
    char first_gpus[64];   /* GPU indices on the first allocated node ("0-3") */
    char admin_comment[128];
} slurm_job;

typedef struct slurm_node {
    char name[64];
    char partition[64]; /* the first lucid partition that holds it, or "" */
    int gpus;           /* configured */
    int gpus_used;      /* Slurm's view of allocated GPUs */
    int usable;         /* idle/mixed/allocated, not down or drained */
} slurm_node;

int slurm_io_init(lucid_error *err);
void slurm_io_fini(void);

/* All jobs Slurm knows; *out malloc'ed.  Count or -1. */
long slurm_io_jobs(slurm_job **out, lucid_error *err);
/* Nodes of the given partitions (comma list), in Slurm's node order;
 * *out malloc'ed.  Count or -1. */
long slurm_io_nodes(const char *partitions, slurm_node **out, lucid_error *err);

/* Puts a held job on `partition` pinned to `nodes` (comma list); with
 * `packed_gpus`, drops its GPU gres and tells the SPANK plugin which GPUs of
 * the partner to use; then releases it. */
int slurm_io_start(uint32_t job_id, const char *partition, const char *nodes,
                   const char *packed_gpus, lucid_error *err);
/* Requeues a running job and keeps it held. */
int slurm_io_requeue_hold(uint32_t job_id, lucid_error *err);
/* Moves a held pending job to `partition`, unpinned, eligible now. */
int slurm_io_move(uint32_t job_id, const char *partition, lucid_error *err);
int slurm_io_cancel(uint32_t job_id, lucid_error *err);

#endif
