/* fake_slurm_io.h — an in-memory Slurm behind slurm_io.h, for lucidd's
 * engine tests (tests/lucidd/test_engine.c): the test sets jobs and nodes,
 * the engine's calls change them as slurmctld would and are logged. */
#ifndef LUCID_FAKE_SLURM_IO_H
#define LUCID_FAKE_SLURM_IO_H

#include "../../src/daemon/slurm_io.h"

#ifndef FAKE_MAX_JOBS /* the tick benchmark builds it larger */
#define FAKE_MAX_JOBS 64
#endif
#ifndef FAKE_MAX_NODES
#define FAKE_MAX_NODES 8
#endif

typedef struct fake_accounting {
    uint32_t id;
    char state[32];
    time_t start, end;
} fake_accounting;

typedef struct fake_slurm {
    int up;                 /* 0: every call fails as if slurmctld were down */
    time_t ctld_started;    /* what slurm_io_ctld_started reports */
    slurm_job jobs[FAKE_MAX_JOBS];
    int njobs;
    slurm_node nodes[FAKE_MAX_NODES];
    int nnodes;
    char pack_unsafe[128];  /* what slurm_io_packing_safety says is unsafe ("" safe) */
    fake_accounting accounting[8];
    int quiet;              /* no call log (the benchmark's thousands of calls) */
    int unchanged;          /* slurm_io_jobs_refresh answers "no change" (as slurmctld
                             * does when its job data did not change) */
    int naccounting;
    uint32_t next_id;       /* ids given to split array tasks */
    uint32_t ends_at_requeue; /* this job's script ends just as lucid requeues it */
    char log[8192];         /* "hold 3;start 3 main n1;..." */
    slurm_share shares[8];  /* what sshare reports (slurm_io_fairshare_poll) */
    int nshares;
    int share_slow;         /* sshare has not answered yet: poll says "still running" */
    int share_starts, share_polls; /* sshare runs started, polls of a running one */
    uint32_t fairshare_weight; /* Slurm's PriorityWeightFairshare */
    int limits_enforced;    /* AccountingStorageEnforce=limits */
    uint32_t qos_weight;    /* Slurm's PriorityWeightQOS */
    const char *qos_text;   /* what `sacctmgr show qos` prints (NULL: it fails) */
    const char *assoc_text; /* ... `show assoc` */
    int limits_starts;      /* sacctmgr runs started */
    int probes;             /* slurm_io_reachable calls */
    int job_calls;          /* calls on one job (hold, start, comment, ...), failed ones too */
    int down_at_call;       /* > 0: slurmctld stops at this job call (it and all after fail) */
    int hold_us;            /* each operator hold takes this long (a busy slurmctld) */
} fake_slurm;

extern fake_slurm fake;

void fake_reset(void);
/* Adds a job as the job_submit plugin leaves it: pending, held by its owner. */
slurm_job *fake_submit(uint32_t id, const char *user, int gpus, int per_node, int nodes);
slurm_job *fake_job(uint32_t id);
void fake_node(const char *name, const char *partition, int gpus);
/* The job runs now (on its pinned node, GPU indices "0-(g-1)"). */
void fake_run(uint32_t id, time_t start);
void fake_end(uint32_t id, slurm_job_run_state state, const char *word, time_t end);
/* Forgets the job (Slurm purged it after MinJobAge). */
void fake_purge(uint32_t id);
/* 1 if `entry` ("hold 3", "start 3 main n1"), or an entry it is the first
 * words of ("start 3" for "start 3 main n1"), is in the call log. */
int fake_called(const char *entry);

#endif
