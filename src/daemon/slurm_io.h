/* slurm_io.h — lucidd's only contact with Slurm (libslurm's C API).
 *
 * Reads jobs and nodes into plain structs the rest of the daemon can test
 * without Slurm, and applies lucid's decisions: pin + release, requeue with
 * hold, move to another partition, cancel.  Facts behind each call:
 * shared/spec/slurm-lab.md. */
#ifndef LUCIDD_SLURM_IO_H
#define LUCIDD_SLURM_IO_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "fit.h"
#include "shares.h"
#include "lucid/error.h"

typedef enum slurm_job_run_state {
    SJ_PENDING, /* includes "requeued, still completing" (see completing) */
    SJ_RUNNING,
    SJ_COMPLETED,
    SJ_FAILED, /* failed, cancelled, timeout, node fail, out of memory... */
} slurm_job_run_state;

typedef struct slurm_job {
    uint32_t id;
    uint32_t uid;        /* the owner's user id (who may lift its own hold) */
    char user[64];
    char name[128];
    char partition[64];
    slurm_job_run_state state;
    char state_name[32]; /* Slurm's word for it, for reasons */
    int completing;      /* still cleaning up (requeue is asynchronous) */
    int requeueing;      /* a requeue is in progress */
    int held;            /* priority 0 */
    int admin_held;      /* held by an operator (Slurm reason JobHeldAdmin): only an
                          * operator can release it */
    uint32_t reason_code; /* Slurm's state_reason */
    char reason[64];     /* Slurm's word for why it waits ("Resources", "Dependency"...) */
    int gpus;            /* total GPUs asked (per node x nodes, or per job) */
    int gpus_per_node;   /* 0 when asked per job */
    int nodes;           /* nodes asked */
    int nodes_fixed;     /* the node count was asked (-N, or GPUs per node); else Slurm
                          * may choose it (--gpus=16 without -N) */
    int cpus;            /* CPUs asked or allocated (0 = unknown) */
    int gres_malformed;  /* a GPU request lucid cannot read */
    time_t submit_time, start_time, end_time;
    uint32_t time_limit_min; /* 0 = none */
    int restarts;
    char node_list[256];   /* allocated nodes, Slurm's hostlist form */
    char first_gpus[64];   /* GPU indices on the first allocated node ("0-3") */
    char admin_comment[256];
    char req_nodes[256];   /* the job's required nodes (-w, or lucid's pin once placed) */
    char exc_nodes[256];   /* nodes it excludes (--exclude) */
    char dependency[256];  /* Slurm's dependency text ("afterok:12(unfulfilled)"), "" none */
    char gpu_request[64];  /* its GPU TRES as Slurm holds it: "tpn=gres:gpu:4", "tpj=..." */
    uint32_t array_job_id; /* array master's id, 0 if not an array */
    uint32_t array_task_id;/* this task's index, or UINT32_MAX for a record of tasks */
    char array_tasks[128]; /* tasks still inside this record ("0-5"), "" if one job */
    /* The site's rules beyond GPUs (fit.h): type, CPUs, memory, --exclusive,
     * features, time limit, as Slurm holds them. */
    fit_request fit;
    int asks_gpus;         /* some GPU request (a count of 0 included: --gres=gpu:0) */
    char account[64];      /* its association's account (fair share, limits) */
    char qos[64];          /* its QOS (limits) */
    char pass_why[128];    /* a request lucid leaves to Slurm as it is, and why
                            * (heterogeneous job, --gpus-per-socket, --reservation,
                            * a feature expression lucid does not read); "" none */
} slurm_job;

typedef struct slurm_node {
    char name[64];
    char partition[64]; /* the first lucid partition that holds it, or "" */
    int gpus;           /* configured */
    int gpus_used;      /* Slurm's view of allocated GPUs */
    int usable;         /* idle/mixed/allocated, not down or drained */
    /* Type, CPUs, memory, features, state word and reservations (fit.h);
     * its name, gpus and usable are the fields above, copied in by the
     * engine.  A node with fit.cpus 0 has its CPUs and memory unchecked. */
    fit_node fit;
} slurm_node;

int slurm_io_init(lucid_error *err);
void slurm_io_fini(void);

/* All jobs Slurm knows; *out malloc'ed.  Count or -1. */
long slurm_io_jobs(slurm_job **out, lucid_error *err);

/* The job listing a daemon keeps between ticks.  It is read again only when
 * slurmctld's job data changed since (libslurm's update_time: slurmctld
 * answers SLURM_NO_CHANGE_IN_DATA otherwise, as it does for scontrol), so an
 * idle cluster costs one small RPC a tick, not a listing of every job.
 * Read whole regardless while a listed job is completing (slurmctld does
 * not count the end of that as a change) and every 10 s. */
typedef struct slurm_job_list {
    slurm_job *jobs;    /* malloc'ed; in Slurm's order until the caller sorts them */
    long count;
    long capacity;      /* entries allocated: kept between reads (see below) */
    time_t last_update; /* slurmctld's time of this listing; 0: never read */
    time_t read_at;     /* when it was read (local clock) */
    uint64_t reads;     /* listings read */
    uint64_t unchanged; /* requests slurmctld answered "no change" */
    int completing;     /* a job of the last read was completing (read whole next) */
} slurm_job_list;

/* 1 read anew (list replaced), 0 unchanged (list kept), -1 error (list kept). */
int slurm_io_jobs_refresh(slurm_job_list *list, lucid_error *err);

/* Room for n jobs in list->jobs, its entries undefined.  The array is kept
 * between reads and grows with headroom: a listing of 12,000 jobs is 24 MB,
 * and a fresh array for every read (its size changing by the jobs that
 * arrived and left) was mapped and faulted in afresh each tick, more than
 * half of a tick's CPU at that size (bench/tick_latency).  0, or -1 out of
 * memory (the list as it was). */
static inline int slurm_job_list_reserve(slurm_job_list *list, long n)
{
    if (n <= list->capacity && list->jobs)
        return 0;
    long cap = n + n / 4 + 16;
    slurm_job *jobs = (slurm_job *)malloc((size_t)cap * sizeof *jobs);
    if (!jobs)
        return -1;
    free(list->jobs);
    list->jobs = jobs;
    list->capacity = cap;
    list->count = 0;
    return 0;
}
void slurm_io_job_list_free(slurm_job_list *list);
/* Nodes of the given partitions (comma list), in Slurm's node order;
 * *out malloc'ed.  `share_gres` names the count-only GRES that accounts
 * packed jobs (docs/live.md, "Packing under device confinement"; NULL or
 * "" none): each node's fit.share / fit.share_used.  Count or -1. */
long slurm_io_nodes(const char *partitions, const char *share_gres, slurm_node **out,
                    lucid_error *err);

/* Whether packing is safe on this site (fit_packing_safe on Slurm's
 * TaskPlugin and cgroup.conf, and this host's cgroup hierarchy for
 * CgroupPlugin=autodetect): 1 yes, 0 no (`why` says), -1 Slurm unreachable. */
int slurm_io_packing_safety(char *why, size_t size, lucid_error *err);

/* Puts a held job on `partition` pinned to `nodes` (comma list; NULL keeps
 * the job's own -w); with `packed_gpus`, drops its GPU gres and tells the
 * SPANK plugin which GPUs of the partner to use, and with `share_tres`
 * ("gres:lucidshare:2") asks that instead, so Slurm accounts the shared
 * GPUs to the packed job; sets its AdminComment to
 * `comment` (NULL: unchanged); releases it; then gives it Slurm priority
 * `priority` (0: Slurm's own), so squeue orders released jobs as lucid does. */
int slurm_io_start(uint32_t job_id, const char *partition, const char *nodes,
                   const char *packed_gpus, const char *share_tres, const char *comment,
                   uint32_t priority, lucid_error *err);
/* Releases a held job ahead of its GPUs (lucidd --release-ahead): on
 * `partition` with no required nodes (only for a job that chose none),
 * excluding `exclude` (nodes whose GPUs lucid knows are used where Slurm
 * does not see it; "" none), AdminComment `comment`; released; then Slurm
 * priority `priority`, below every pinned release.  Slurm starts it itself
 * the moment GPUs free on a node it may use: a job's end (its epilog's
 * completion) runs Slurm's scheduler at once, where a release reaches it
 * only at its next periodic pass. */
int slurm_io_release_ahead(uint32_t job_id, const char *partition, const char *exclude,
                           const char *comment, uint32_t priority, lucid_error *err);
/* A job released ahead that lucid now starts: its AdminComment and a
 * pinned release's Slurm `priority`, in one update that is harmless if
 * Slurm has just started it (no pin, no request changed); then, unless
 * `exclude` is NULL, the nodes it excludes (lucid's choice taken out of
 * them), which a job Slurm has started meanwhile no longer needs. */
int slurm_io_promote(uint32_t job_id, const char *comment, uint32_t priority, const char *exclude,
                     lucid_error *err);
/* Sets the nodes a pending job excludes ("" none). */
int slurm_io_exclude(uint32_t job_id, const char *exclude, lucid_error *err);
/* Releases a held job as it is (no pin, no partition change): Slurm's own
 * scheduler takes it from here. */
int slurm_io_hand_back(uint32_t job_id, const char *comment, lucid_error *err);
/* Turns any hold into an operator's hold (priority 0, JobHeldAdmin), which a
 * job's owner cannot lift; also holds a pending job that was released. */
int slurm_io_admin_hold(uint32_t job_id, lucid_error *err);
/* Sets the job's AdminComment (what lucid says about it in scontrol/squeue). */
int slurm_io_comment(uint32_t job_id, const char *comment, lucid_error *err);
/* Requeues the job held, but only if Slurm says, just now, that it is
 * running on `partition` and not completing: a job that already ended is
 * never requeued (it would run again).  1 requeued, 0 not running, -1 error. */
int slurm_io_requeue_hold_if_running(uint32_t job_id, const char *partition, lucid_error *err);
/* A job lucid released that Slurm did not start (or a packed job whose
 * partner ended first): held again as an operator's hold, its required
 * nodes set back to `nodes` (the job's own -w, "" none), its own GPU
 * request `gpu_request` (as in slurm_job; NULL: unchanged) given back, and
 * its AdminComment set to `comment`. */
int slurm_io_take_back(uint32_t job_id, const char *gpu_request, const char *nodes,
                       const char *comment, lucid_error *err);
/* Splits task `task_id` of array `array_job_id` into a job record of its
 * own (Slurm gives it its own job id), so each task is scheduled alone. */
int slurm_io_split_task(uint32_t array_job_id, uint32_t task_id, lucid_error *err);
/* The outcome Slurm's accounting recorded for a job Slurm no longer lists:
 * copies Slurm's state word ("COMPLETED", "FAILED"...), start/end times and
 * where it was read into `source`: "slurmdbd" (the job's last record, when
 * AccountingStorageType=accounting_storage/slurmdbd), else "jobcomp" (the
 * job-completion log, when JobCompType=jobcomp/filetxt).  1 found, 0 no
 * record (or no accounting), -1 error (slurmctld or slurmdbd did not answer:
 * ask again later). */
int slurm_io_accounting(uint32_t job_id, char *state, size_t size, time_t *start, time_t *end,
                        char *source, size_t source_size, lucid_error *err);
/* When slurmctld started (when its statistics were last reset): a job it
 * recovered from an earlier run may still be listed as running after it
 * ended, until the node's completion message gets through. */
int slurm_io_ctld_started(time_t *started, lucid_error *err);
/* Whether slurmctld accepts a TCP connection within timeout_ms: libslurm's
 * own calls retry a dead controller for MessageTimeout seconds, so a tick
 * asks this first and stays on time while slurmctld is down. */
int slurm_io_reachable(int timeout_ms);
/* Slurm's fair-share factor of each association (account, user), as
 * `sshare` reports it, read in the background (shares.h: start, then poll
 * at each tick until it answers; a read that outlasts 20 s is killed). */
int slurm_io_fairshare_start(share_read *r, double now, lucid_error *err);
int slurm_io_fairshare_poll(share_read *r, double now, slurm_share **out, long *count,
                            lucid_error *err);
void slurm_io_fairshare_cancel(share_read *r);
/* Slurm's PriorityWeightFairshare (0: fair share plays no part in its order). */
uint32_t slurm_io_fairshare_weight(void);
/* Slurm's PriorityWeightQOS (0: QOS priority plays no part in its order). */
uint32_t slurm_io_qos_weight(void);
/* Whether Slurm enforces QOS and association limits: slurmdbd accounting
 * with AccountingStorageEnforce=limits (0: a site without them; lucid
 * reads none). */
int slurm_io_limits_enforced(void);
/* The site's GPU limits as sacctmgr prints them (limits.h), read in the
 * background like the shares: `assoc` 0 the QOS records, 1 this cluster's
 * associations; poll until 1 (*text malloc'ed; NULL when sacctmgr failed
 * without a word: slurmdbd down); a read that outlasts 20 s is killed. */
int slurm_io_limits_start(share_read *r, int assoc, double now, lucid_error *err);
int slurm_io_limits_poll(share_read *r, double now, char **text, lucid_error *err);
void slurm_io_limits_cancel(share_read *r);

/* Is `node` in Slurm's host list expression `list` ("n[1-3],p1")? */
int slurm_io_in_hostlist(const char *list, const char *node);
/* The names of Slurm's host list expression `list` ("n[1-3],p1"), comma
 * separated into `out` ("n1,n2,n3,p1"): 0, or -1 (it does not parse, or
 * out is too small; out then holds what fitted, whole names only). */
int slurm_io_hostlist_expand(const char *list, char *out, size_t size);
/* Moves a held pending job to `partition`, unpinned, eligible now. */
int slurm_io_move(uint32_t job_id, const char *partition, lucid_error *err);
int slurm_io_cancel(uint32_t job_id, lucid_error *err);

#endif
