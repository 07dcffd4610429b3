/* daemon.h — what lucidd's parts share: configuration, the in-memory view of
 * the jobs lucid manages, and counters for status and /metrics.
 *
 *   lucidd.c  options, startup (lock, state, Slurm, recovery), the threads
 *   hub.c     the decision thread's loop, the snapshot it publishes, the
 *             command queue between the server and the engine
 *   engine.c  one tick: intake, tracking, profiling limit, decisions, apply
 *   commands.c  the engine's side of client commands (release, explain's why)
 *   decide.c  the decision step on plain arrays (the core's pass + Slurm hooks)
 *   models.c  duration model + update engine, sharing tree, model versions
 *   server.c  the local UNIX-socket JSON API and /metrics, on its own thread
 *   slurm_io.c  libslurm;  state (liblucid)  SQLite */
#ifndef LUCIDD_DAEMON_H
#define LUCIDD_DAEMON_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "fit.h"
#include "limits.h"
#include "lucid/eta.h"
#include "lucid/gpumetrics.h"
#include "lucid/state.h"
#include "slurm_io.h"
#include "reader.h"
#include "writer.h"

/* Slurm refuses every update of a job while slurmdbd is giving it its
 * accounting record (job_mgr.c: ESLURM_JOB_SETTING_DB_INX), and slurmctld
 * then holds the RPC a whole second and tries again (proc_req.c,
 * _slurm_rpc_update_job).  The record is asked for by a thread that runs
 * every 5 s for the jobs submitted or requeued since (accounting_storage
 * /slurmdbd, _set_db_inx_thread): in the 2,000-job burst (docs/live.md)
 * 16 of 50,183 updates met it, each one of the tick's 21 over a second.
 * Writes that can wait — the AdminComment, an intake hold the job_submit
 * plugin still guards — wait this long after the job's (re)submission;
 * the decisions that cannot are written off the tick (writer.h). */
#define LUCIDD_ACCOUNTING_GRACE_S 10

/* --async-writes: which of lucid's starts, releases ahead and moves to main
 * are made on the writer's thread (writer.h) rather than the tick's.  A
 * config zeroed in code (the tests) with a writer of its own is WINDOW. */
typedef enum lucidd_async_writes {
    LUCIDD_WRITES_WINDOW = 0, /* those of a job inside Slurm's accounting window */
    LUCIDD_WRITES_ALL = 1,    /* every one (on, the default) */
    LUCIDD_WRITES_OFF = 2,    /* none: no writer */
} lucidd_async_writes;

typedef struct lucidd_config {
    const char *state_path;
    const char *socket_path;
    const char *main_partition;
    const char *profiling_partition;
    const char *share_gres; /* count-only GRES a packed job asks so Slurm accounts its
                             * GPUs, on nodes that have it ("lucidshare"; "" none) */
    const char *metrics_test_dir; /* test-file GPU metrics backend, or NULL for NVML */
    int metrics_port;             /* /metrics on 127.0.0.1, 0 = off */
    double profile_limit_s;       /* profiling time limit (enforced by lucidd) */
    int gpu_limit;                /* largest job that is profiled */
    double gpu_memory_mib;        /* one GPU's memory, for packing */
    int score_sum;                /* pair rule: sharing scores sum to at most this (2) */
    double priority_ratio;        /* pair rule: newcomer's priority <= this x partner's (2) */
    int packing_mode;             /* -1 auto, 0 off, 1 on */
    int backfill;                 /* LUCID_BACKFILL_* (0 none: strict order) */
    double backfill_margin;       /* estimates x this when planned (1.2) */
    int64_t backfill_window;      /* new reservations only within this many s (0: no limit) */
    int backfill_min_gpus;        /* ... and only for jobs of at least this many GPUs (0: all) */
    int tick_ms;                  /* the decision period, at most (500) */
    int tick_min_ms;              /* ... and at least: a cheap tick is followed after 20 x its
                                   * own wall time, not before this (100; >= tick_ms or 0:
                                   * a fixed period) */
    double release_timeout_s;     /* a release Slurm has not started after this is taken back */
    int profiler_bypass;          /* a job the profiler cannot start goes to idle main GPUs */
    int profiler_yield;           /* a job being profiled (or moving to main) takes part in
                                   * main's decision: placed there, its profiling ends now */
    int async_writes;             /* lucidd_async_writes: which starts, releases ahead and
                                   * moves are made on the writer's thread (writer.h) */
    int async_reads;              /* Slurm's jobs and nodes are read on the reader's
                                   * thread (reader.h) */
    int release_ahead;            /* the head of main's queue is released before GPUs free,
                                   * unpinned: Slurm starts it the moment they do */
    double fairshare_weight;      /* the site's fair share in lucid's order (docs/live.md,
                                   * "The site's priority"); 0 off; < 0 (the default): 2
                                   * where Slurm weighs fair share, else 0 */
    double age_weight;            /* waiting a week halves a job's order value this many times */
    double qos_weight;            /* a top-QOS job's order value is divided by 10^this; < 0
                                   * (the default): 2 where Slurm weighs QOS, else 0 */
    double default_estimate_s;    /* duration estimate without a time limit or model */
    double retrain_period_s;      /* update engine: seconds between trainings */
    int min_history;              /* finished jobs before the first duration model */
    const char *sharing_model;    /* CART file for sharing scores, or NULL */
    const char *heartbeat_path;   /* rewritten every tick for the job_submit plugin's
                                   * fail-open and the hand-back watchdog, or NULL */
    int socket_mode;              /* chmod of the socket after bind, -1 = leave (umask) */
    const char *socket_group;     /* chgrp of the socket after bind, or NULL (leave) */
    uint32_t socket_gid;          /* its gid, resolved when the option was read */
    const char *admin_group;      /* members see every job in queue/explain, or NULL */
    uint32_t admin_gid;
    const char *metrics_bind;     /* numeric address of /metrics; NULL = 127.0.0.1 */
    int log_targets;              /* LUCIDD_LOG_STDERR | LUCIDD_LOG_SYSLOG (--log) */
    double forget_ended_s;        /* an ended job Slurm no longer lists leaves memory this
                                   * long after its end (its record stays in the store) */
    size_t model_history;         /* finished jobs the duration model keeps (0: default) */
    double keep_history_s;        /* the state store deletes jobs ended longer ago (0: never) */
} lucidd_config;

#define LUCIDD_LOG_STDERR 1
#define LUCIDD_LOG_SYSLOG 2

/* Plain data (no pointers it owns): each tick's snapshot for the server
 * thread copies the job table with memcpy (hub.c).  A field that points to
 * memory the engine frees or changes would need a deep copy there. */
typedef struct lucidd_job {
    lucid_job_record rec;
    lucid_gpu_profile profile; /* samples while profiling (persisted when it leaves) */
    int gpus_per_node;
    time_t slurm_start;        /* last start time Slurm reported */
    int restarts_seen;
    int seen;                  /* present in the latest Slurm listing */
    uint32_t time_limit_min;   /* Slurm's, as last read (0 = none or not read yet) */
    int64_t estimate_version;  /* duration model version behind rec.estimate_s (0 heuristic) */
    int64_t estimated_with;    /* duration version current when it was estimated (-1 never) */
    /* Slurm's view, refreshed every tick (not persisted). */
    uint32_t uid;              /* owner */
    int releasing;             /* lucid released it; Slurm has not started it yet */
    char slurm_reason[64];     /* Slurm's reason while it pends */
    char waits_for[16];        /* why Slurm would not run it now: "dependency", "begin",
                                * "user-hold", or "" (lucid may schedule it) */
    char user_nodes[256];      /* the job's own -w, while held */
    char user_exclude[256];    /* the job's own --exclude */
    int nodes_fixed;           /* it asked a node count (else placement chooses) */
    fit_request fit;           /* what it asks beyond GPUs (fit.h), as Slurm holds it */
    double released_at;        /* monotonic time Slurm had lucid's release (0: not releasing) */
    double wrote_at;           /* monotonic time lucid's latest write made on the tick to it
                                * was answered: no listing read before is judged for it */
    char avoid_nodes[256];     /* nodes Slurm would not start it on after a release ("*": any) */
    double avoid_until;        /* ... kept out of its placements until this monotonic time */
    int ahead;                 /* released ahead (--release-ahead): pending in Slurm,
                                * unpinned, while it waits in main's queue */
    int ahead_wanted;          /* ... chosen for it by this tick's decision */
    char ahead_exclude[256];   /* the nodes its release ahead excludes ("" none) */
    uint32_t ahead_priority;   /* the Slurm priority it went ahead at (0: not known, as
                                * after a restart) */
    int was_released;          /* released since it last waited held: Slurm's StartTime may
                                * be its backfill plan, not a --begin */
    int start_unapplied;       /* its start (or profiling start) is recorded, and Slurm did
                                * not take it whole (engine.c, start_not_applied) */
    char took_back[160];       /* why it was last taken back (shown with its reason meanwhile) */
    char account[64];          /* Slurm's account of the job (fair share, limits) */
    char qos[64];              /* its QOS (limits, the QOS factor) */
    double fairshare;          /* Slurm's fair-share factor of its association, -1 unknown */
    double qos_factor;         /* its QOS's priority over the site's largest (0..1) */
    double order_priority;     /* lucid's priority x the site's factors: the queue's order */
    double observed_at;        /* monotonic time it was last seen running in the profiler */
    char comment_sent[256];    /* AdminComment last written to Slurm */
    double comment_at;         /* monotonic time of that write */
    int comment_phase;         /* phase + 1 it was written in (0: never) */
    int64_t slurm_submit;      /* Slurm's SubmitTime: its submission or last requeue, when
                                * Slurm creates the job's accounting record (engine.c,
                                * in_accounting_grace) */
    int dirty;                 /* changed in ways written at the tick's end, in one
                                * transaction (profiling time) */
    int reason_dirty;          /* only its reason changed since stored: written with the
                                * tick's others at most every ENGINE_REASON_STORE_S */
    double stored_at;          /* monotonic time its record was last written (0 never) */
    /* Start-time estimate while it waits (engine.c, decide_predict). */
    int64_t eta_p10, eta_p50, eta_p90; /* predicted start (UTC s); 0 none */
    int eta_ahead;             /* jobs ahead of it in its queue */
    int64_t reserved_at;       /* backfill: start reserved for it (UTC s), 0 none */
    char reserved_nodes[64];   /* ... on these nodes */
    char eta_none[64];         /* why it has no estimate ("" when it has one) */
    int64_t shown_p10, shown_p50, shown_p90; /* the estimate its AdminComment shows: moved
                                * to the newest only when that drifted (an RPC each) */
} lucidd_job;

/* Jobs ended per (where, outcome): what status and /metrics report. */
typedef struct lucidd_ended {
    char where[16], outcome[24];
    long count;
} lucidd_ended;
#define LUCIDD_ENDED_MAX 64

#define LUCIDD_LATENCY_SAMPLES 1024

typedef struct lucidd_models lucidd_models;

typedef struct lucidd {
    lucidd_config cfg;
    lucid_state *state;
    lucidd_models *models;
    lucid_gpumetrics *metrics;
    lucidd_job *jobs;
    size_t njobs, cap;
    uint32_t *slots;         /* job id -> index + 1, open addressing (engine_find) */
    slurm_job_list listing;  /* Slurm's jobs, sorted by id; read again only when changed */
    double listing_began;    /* monotonic time the listing's read began (0: none yet) */
    lucidd_reader *reader;   /* reads off the tick (--async-reads; NULL: read by the tick) */
    slurm_node *nodes;       /* with a reader: Slurm's nodes, read after the listing */
    long nnodes;             /* ... their count, -1 when that read failed (nodes_err) */
    lucid_error nodes_err;
    double split_at;         /* monotonic time of the latest array split (split_arrays) */
    int reasons_per_flush;   /* 0: ENGINE_REASON_STORE_MAX (the tests set fewer) */
    double listing_age_s;    /* how old the listing was when the last tick decided on it */
    double listing_age_max_s; /* ... the oldest one a tick decided on */
    size_t nslots;           /* a power of two, at least twice njobs */
    int packing_on;
    char pack_refused[256];  /* why this site's Slurm makes packing unsafe ("" safe) */
    time_t pack_checked_at;  /* when that was last read (every 10 minutes) */
    int share_nodes;         /* main nodes with the share GRES (packed jobs accounted) */
    int main_nodes;          /* nodes of the main partition */
    int main_gpus;           /* GPUs of the main partition (bad-input check) */
    int slurm_up;            /* the latest Slurm call worked */
    time_t slurm_down_since; /* when Slurm stopped answering (0 while it answers) */
    double slurm_back_at;    /* monotonic time Slurm answered again after an outage */
    time_t outage_began;     /* when that outage began (jobs started before it may be stale) */
    uint32_t intake_max;     /* highest job id taken in (and put on an operator's hold) */
    uint32_t intake_deferred; /* lowest id left on the plugin's hold in this tick (engine.c,
                               * hold), 0 none: the heartbeat's watermark stays below it */
    double hold_spent_s;      /* seconds of this tick spent putting jobs on lucid's hold */
    uint64_t profiler_bypassed; /* jobs sent past a busy profiler to idle main GPUs */
    uint64_t profiler_yielded;  /* profiling runs ended early: main had GPUs for the job */
    uint64_t released_ahead;    /* releases ahead of GPUs (--release-ahead) */
    uint64_t started_ahead;     /* ... that Slurm started before lucid held them again */
    lucidd_writer *writer;      /* writes off the tick (--async-writes; NULL: all made on
                                 * the decision thread); the engine's (engine_stop_io) */
    uint64_t writes_made;       /* writes off the tick Slurm took, and those it refused or */
    uint64_t writes_failed;     /* did not answer (outcomes taken) */
    double write_slowest_s;     /* the longest Slurm took to answer one */
    double fairshare_read_at;   /* monotonic time of the last sshare read (0 never) */
    double fairshare_weight;    /* the weight in use (cfg's, or 2 / 0 from Slurm's) */
    double qos_weight;          /* the same for the QOS factor */
    int limits_enforced;        /* Slurm enforces the limits read (else they order only) */
    struct slurm_share *shares; /* the last read, sorted by account then user */
    long nshares;
    share_read share_read;      /* the sshare run in flight, if any (shares.h) */
    uint64_t fairshare_reads;   /* sshare answers taken in */
    slurm_limits limits;        /* the site's GPU limits, last complete read (limits.h) */
    slurm_limits limits_next;   /* ... the read in progress (QOS read, associations not yet) */
    share_read limits_read;     /* the sacctmgr run in flight, if any */
    int limits_stage;           /* 1 reading the QOS, 2 the associations, 0 idle */
    double limits_read_at;      /* monotonic time the last read began (0 never) */
    uint64_t limits_reads;      /* complete reads taken in */
    char limits_bad[2][256];    /* the last unreadable limit logged, per command */
    int reconciled;          /* unacknowledged decisions settled since start */
    char last_error[LUCID_ERROR_MAX];
    time_t started;
    uint64_t ticks, decisions_applied, slurm_errors, sample_errors;
    uint64_t slow_ticks;       /* ticks longer than a second (each logged) */
    lucid_eta_table eta_table; /* actual/estimate duration ratios of ended jobs */
    double *recent_ratios;     /* the newest ENGINE_RATIO_WINDOW of them, a ring: the
                                * table is rebuilt from these when it holds twice as many */
    size_t nrecent, recent_next;
    uint64_t eta_signature[2]; /* per queue (main, profiling): of the waiting and busy
                                * jobs last predicted on */
    double eta_at[2];          /* monotonic time of that prediction */
    double eta_cpu_s;          /* CPU time of the latest prediction */
    double eta_tick_cpu_s;     /* ... of all the estimates' work in the latest tick */
    uint64_t eta_runs;         /* predictions made */
    double latency_s[LUCIDD_LATENCY_SAMPLES]; /* decision step durations, ring */
    uint64_t latency_count;
    double latency_sum_s;
    /* Ended jobs the engine forgot (engine.c, forget_ended): still counted
     * in status and /metrics; their records stay in the state store. */
    lucidd_ended forgotten[LUCIDD_ENDED_MAX];
    int nforgotten;
    long forgotten_by_phase[LUCID_PHASE_COUNT];
    long forgotten_profiled; /* ... of them, jobs that ran in the profiler */
    uint64_t forgotten_jobs;
    double forgot_at;        /* monotonic time of the latest pass */
    double pruned_at;        /* ... of the latest pruning of the state store */
    uint64_t pruned_jobs;    /* jobs it deleted since lucidd started */
} lucidd;

/* engine.c */
/* A waiting job's reason alone is written to the state store at most this
 * often (its reason changes whenever the job ahead of it does: in a burst,
 * a thousand records a tick).  Clients read reasons from memory; the store's
 * is for a restart, whose first decision gives every waiting job a new one. */
#define ENGINE_REASON_STORE_S 30.0
/* ... and at most this many such records a tick: a burst's waiting jobs
 * all change reason in the same tick, and 30 s later a tick stored 1,215
 * records in 393 ms; the rest wait for the next ticks. */
#define ENGINE_REASON_STORE_MAX 200
/* Ratios actual / estimated duration the start-time predictor keeps. */
#define ENGINE_RATIO_WINDOW 50000
/* Jobs from the state store.  Their start estimates and where their
 * reservations lie come from the first decision; until then a waiting
 * job's eta_none is ENGINE_ETA_NOT_YET (what clients see when the first
 * tick cannot reach Slurm; nothing is published before it). */
/* In the AdminComment of a job lucidd released ahead (--release-ahead):
 * a restarted lucidd and the hand-back watchdog know it by this. */
#define AHEAD_MARK "lucid-ahead"
#define ENGINE_ETA_NOT_YET "lucidd restarted and has not reached Slurm since"
int engine_load(lucidd *d, lucid_error *err);
int engine_reconcile(lucidd *d, lucid_error *err); /* run by the first ticks after a start */
void engine_tick(lucidd *d);
lucidd_job *engine_find(lucidd *d, uint32_t job_id);
/* The allocator's settings for ticks, once, before the first (lucidd's
 * main; bench/tick_latency too).  A tick's work arrays (a decide_result
 * alone is 620 bytes a job: 7.7 MB at 12,400 listed jobs) are allocated
 * and freed every tick; glibc handed such blocks back to the kernel at
 * each free (mmap, or the heap's top trimmed) and every page faulted in
 * again the next tick: 3,000 page faults a tick, half the tick's CPU at
 * 12,400 listed jobs (docs/live.md, "One whole tick").  Blocks up to
 * 32 MB now come from the heap, and up to 64 MB of free heap is kept. */
void engine_tune_malloc(void);
/* Makes the writes still queued and takes their outcomes (acknowledging
 * their decisions), then frees the writer and the reader: before the state
 * store closes and libslurm is let go. */
void engine_stop_io(lucidd *d);
/* Frees what the engine allocated (the job table and its index). */
void engine_free(lucidd *d);
/* Percentile (0..1) of the recorded decision latencies, seconds. */
double engine_latency_quantile(const lucidd *d, double q);
/* `lucid release JOB` from user `uid`: lifts the owner's own hold (sbatch
 * -H); the owner or root only.  0 done, -1 refused (reply says why). */
int engine_release(lucidd *d, uint32_t job_id, uint32_t uid, char *reply, size_t size);
/* Adds the ended jobs among `jobs` (the engine's table or a snapshot's) to
 * the `count` (where, outcome) pairs already in out[], up to max pairs;
 * returns how many pairs out[] holds then (hub.c). */
int lucidd_ended_counts(const lucidd_job *jobs, size_t njobs, lucidd_ended *out, int count,
                        int max);

/* ---- hub.c: what the decision thread and the server thread share ----
 * After each tick the engine publishes a snapshot: an immutable copy of what
 * clients may ask about.  The server holds it by reference while it renders;
 * the last holder frees it. */
typedef struct lucidd_snapshot {
    int refs; /* under the hub's mutex */
    lucidd_job *jobs;
    size_t njobs, jobs_cap;
    lucidd_ended forgotten[LUCIDD_ENDED_MAX]; /* ended jobs no longer in jobs[] */
    int nforgotten;
    long forgotten_by_phase[LUCID_PHASE_COUNT];
    long forgotten_profiled;
    uint64_t slurm_reads, slurm_unchanged; /* job listings read / answered "no change" */
    double listing_age_s, listing_age_max_s; /* the last decision's listing's age, the most */
    uint64_t ticks, slow_ticks, decisions_applied, slurm_errors, sample_errors, latency_count;
    uint64_t profiler_bypassed, profiler_yielded, released_ahead, started_ahead;
    uint64_t writes_off_tick, writes_failed;
    double write_slowest_s;
    double latency_sum_s, latency_p50_s, latency_p99_s;
    int packing_on, slurm_up;
    char pack_refused[256];
    int share_nodes, main_nodes;
    int64_t slurm_down_since; /* start of the first failed tick; 0 while reachable */
    int64_t started, published_at;
    char last_error[LUCID_ERROR_MAX];
    lucid_model_version *models;
    long nmodels;
    char metrics_backend[32], metrics_detail[256];
} lucidd_snapshot;

/* A request that needs the engine, queued by the server thread and taken by
 * the engine at the start of a tick; the answer comes back asynchronously. */
typedef enum lucidd_command_kind {
    LUCIDD_CMD_RELEASE = 1, /* {"cmd":"release","job":N}: an owner lifts their own hold */
    LUCIDD_CMD_WHY,         /* the "why" of a job's estimate (needs the duration model) */
} lucidd_command_kind;

typedef struct lucidd_command {
    lucidd_command_kind kind;
    uint32_t job_id;
    uint32_t uid; /* the client's, from SO_PEERCRED */
    int32_t pid;
    uint64_t id;  /* given by lucidd_hub_post */
} lucidd_command;

#define LUCIDD_REPLY_MAX 1024

typedef struct lucidd_hub lucidd_hub;
lucidd_hub *lucidd_hub_new(lucid_error *err);
void lucidd_hub_free(lucidd_hub *hub);
/* Engine thread: copy what clients see; `tick_started` (UTC) dates a failure.
 * Nothing is published before the daemon's first tick (d->ticks 0). */
void lucidd_hub_publish(lucidd_hub *hub, const lucidd *d, int64_t tick_started);
/* Server thread: the newest snapshot (NULL before the first publish), held
 * until released; *tick_running_s: how long the tick in progress has run. */
lucidd_snapshot *lucidd_hub_acquire(lucidd_hub *hub, double *tick_running_s);
void lucidd_hub_release(lucidd_hub *hub, lucidd_snapshot *snap);
/* Server thread: queue a command; its id, or 0 when the queue is full. */
uint64_t lucidd_hub_post(lucidd_hub *hub, const lucidd_command *cmd);
/* Server thread: 1 and the engine's answer (rc 0 done, -1 refused) once
 * there is one (the slot is freed), else 0. */
int lucidd_hub_answer(lucidd_hub *hub, uint64_t id, int *rc, char *reply, size_t size);
/* Server thread: the client is gone; drop the command or its answer. */
void lucidd_hub_forget(lucidd_hub *hub, uint64_t id);
/* Readable when an answer was posted (the server drains it). */
int lucidd_hub_wake_fd(const lucidd_hub *hub);
/* Engine thread: answer every queued command (engine_command), oldest first. */
void lucidd_hub_drain(lucidd_hub *hub, lucidd *d);
/* The period after a tick that took tick_wall_s (wall): 20 x that, at least
 * cfg->tick_min_ms, at most cfg->tick_ms (docs/live.md, "Threads and
 * clients"); tick_min_ms 0: always tick_ms. */
long lucidd_tick_period_ms(const lucidd_config *cfg, double tick_wall_s);

/* The decision thread: drain, engine_tick, publish, every --tick-ms, until
 * lucidd_hub_stop (which returns at once; the loop ends after its tick). */
void lucidd_engine_loop(lucidd *d, lucidd_hub *hub);
void lucidd_hub_stop(lucidd_hub *hub);
int lucidd_hub_stopping(lucidd_hub *hub);

/* commands.c (engine thread): one command; writes the answer, returns 0
 * done or -1 refused. */
int engine_command(lucidd *d, const lucidd_command *cmd, char *reply, size_t size);

/* ---- server.c: the API on its own thread ---- */
typedef struct lucidd_server lucidd_server;
/* Binds the UNIX socket (refusing one another lucidd serves, replacing only
 * a stale one) and the metrics port; opens a read-only state connection. */
lucidd_server *server_open(const lucidd_config *cfg, lucidd_hub *hub, lucid_error *err);
/* Serves until *stop becomes non-zero (a signal handler's flag) or the hub
 * is stopped (checked at least every 200 ms). */
void server_run(lucidd_server *srv, volatile sig_atomic_t *stop);
/* Closes everything; unlinks the socket only if it is still the one bound. */
void server_close(lucidd_server *srv);

/* lucidd.c: one log line, on stderr with a UTC timestamp and/or to syslog
 * (--log); lucidd_log at LOG_INFO, lucidd_log_level at a <syslog.h>
 * priority (LOG_WARNING, LOG_ERR) where the caller knows it is one. */
void lucidd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void lucidd_log_level(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
