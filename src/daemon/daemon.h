/* daemon.h — what lucidd's parts share: configuration, the in-memory view of
 * the jobs lucid manages, and counters for status and /metrics.
 *
 *   lucidd.c  options, startup (state, Slurm, recovery), the poll loop
 *   engine.c  one tick: intake, tracking, profiling limit, decisions, apply
 *   decide.c  the decision step on plain arrays (the core's pass + Slurm hooks)
 *   models.c  duration model + update engine, sharing tree, model versions
 *   server.c  the local UNIX-socket JSON API and the /metrics endpoint
 *   slurm_io.c  libslurm;  state (liblucid)  SQLite */
#ifndef LUCIDD_DAEMON_H
#define LUCIDD_DAEMON_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "lucid/gpumetrics.h"
#include "lucid/state.h"

typedef struct lucidd_config {
    const char *state_path;
    const char *socket_path;
    const char *main_partition;
    const char *profiling_partition;
    const char *metrics_test_dir; /* test-file GPU metrics backend, or NULL for NVML */
    int metrics_port;             /* /metrics on 127.0.0.1, 0 = off */
    double profile_limit_s;       /* profiling time limit (enforced by lucidd) */
    int gpu_limit;                /* largest job that is profiled */
    double gpu_memory_mib;        /* one GPU's memory, for packing */
    int score_sum;                /* pair rule: sharing scores sum to at most this (2) */
    double priority_ratio;        /* pair rule: newcomer's priority <= this x partner's (2) */
    int packing_mode;             /* -1 auto, 0 off, 1 on */
    int tick_ms;
    double default_estimate_s;    /* duration estimate without a time limit or model */
    double retrain_period_s;      /* update engine: seconds between trainings */
    int min_history;              /* finished jobs before the first duration model */
    const char *sharing_model;    /* CART file for sharing scores, or NULL */
    const char *heartbeat_path;   /* rewritten every tick for the job_submit plugin's
                                   * fail-open and the hand-back watchdog, or NULL */
} lucidd_config;

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
    double observed_at;        /* monotonic time it was last seen running in the profiler */
    char comment_sent[256];    /* AdminComment last written to Slurm */
    double comment_at;         /* monotonic time of that write */
} lucidd_job;

#define LUCIDD_LATENCY_SAMPLES 1024

typedef struct lucidd_models lucidd_models;

typedef struct lucidd {
    lucidd_config cfg;
    lucid_state *state;
    lucidd_models *models;
    lucid_gpumetrics *metrics;
    lucidd_job *jobs;
    size_t njobs, cap;
    int packing_on;
    int main_gpus;           /* GPUs of the main partition (bad-input check) */
    int slurm_up;            /* the latest Slurm call worked */
    time_t slurm_down_since; /* when Slurm stopped answering (0 while it answers) */
    double slurm_back_at;    /* monotonic time Slurm answered again after an outage or start */
    uint32_t intake_max;     /* highest job id taken in (and put on an operator's hold) */
    int reconciled;          /* unacknowledged decisions settled since start */
    char last_error[LUCID_ERROR_MAX];
    time_t started;
    uint64_t ticks, decisions_applied, slurm_errors, sample_errors;
    double latency_s[LUCIDD_LATENCY_SAMPLES]; /* decision step durations, ring */
    uint64_t latency_count;
    double latency_sum_s;
} lucidd;

/* engine.c */
int engine_load(lucidd *d, lucid_error *err);     /* jobs from the state store */
int engine_reconcile(lucidd *d, lucid_error *err); /* run by the first ticks after a start */
void engine_tick(lucidd *d);
lucidd_job *engine_find(lucidd *d, uint32_t job_id);
/* Percentile (0..1) of the recorded decision latencies, seconds. */
double engine_latency_quantile(const lucidd *d, double q);
/* `lucid release JOB` from user `uid`: lifts the owner's own hold (sbatch
 * -H); the owner or root only.  0 done, -1 refused (reply says why). */
int engine_release(lucidd *d, uint32_t job_id, uint32_t uid, char *reply, size_t size);
/* Jobs ended per (where, outcome): what status and /metrics report. */
typedef struct lucidd_ended {
    char where[16], outcome[24];
    long count;
} lucidd_ended;
/* Fills up to max distinct (where, outcome) pairs; returns how many. */
int engine_ended_counts(const lucidd *d, lucidd_ended *out, int max);

/* server.c */
int server_open(lucidd *d, int *unix_fd, int *http_fd, lucid_error *err);
void server_handle_unix(lucidd *d, int listen_fd);
void server_handle_http(lucidd *d, int listen_fd);

/* lucidd.c: one log line on stderr with a UTC timestamp. */
void lucidd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
