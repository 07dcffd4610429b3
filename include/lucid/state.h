/* state.h — lucidd's durable state: one SQLite database in WAL mode.
 *
 * What must survive a crash of the daemon: every job lucid has taken in and
 * the phase it is in, its measured profile, its estimates, every decision
 * lucid made with the reason, whether Slurm acknowledged it, and the versions
 * of the models that produced the estimates.  On start the daemon rebuilds
 * its view from here and reconciles it with what Slurm reports; a decision
 * recorded but not acknowledged is exactly "a release whose acknowledgement
 * was lost".  Every write is a transaction: after a crash the database holds
 * the last committed state, never half of one. */
#ifndef LUCID_STATE_H
#define LUCID_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "lucid/error.h"
#include "lucid/gpumetrics.h"

/* A job's life under lucid.  Profiling is for jobs up to the GPU limit;
 * larger ones go straight to the main queue. */
typedef enum lucid_phase {
    LUCID_PHASE_PROFILE_QUEUE = 0, /* held, waiting for the profiling partition */
    LUCID_PHASE_PROFILING,         /* released on the profiling partition */
    LUCID_PHASE_MOVING,            /* requeued + held, being moved to main */
    LUCID_PHASE_MAIN_QUEUE,        /* held on main, ordered by lucid's priority */
    LUCID_PHASE_RUNNING,           /* released on main by lucid */
    LUCID_PHASE_DONE_IN_PROFILER,  /* ended within the profiling time limit */
    LUCID_PHASE_DONE,              /* ended on main */
    LUCID_PHASE_FAILED,            /* ended otherwise: failed, cancelled, timed out, rejected
                                    * (the record's outcome says which) */
    LUCID_PHASE_HANDED_BACK,       /* lucid gave the job to Slurm's own scheduler (a request
                                    * lucid cannot place, or fail-open); tracked to its end */
    LUCID_PHASE_ENDED_UNKNOWN,     /* ended while lucid could not see how (no accounting) */
    LUCID_PHASE_COUNT
} lucid_phase;

/* "profile-queue", "profiling", ..., NULL for an invalid value. */
const char *lucid_phase_name(lucid_phase phase);
/* -1 if `name` is not a phase. */
int lucid_phase_parse(const char *name, lucid_phase *out);
/* DONE_IN_PROFILER, DONE, FAILED, ENDED_UNKNOWN. */
int lucid_phase_is_final(lucid_phase phase);

typedef struct lucid_job_record {
    uint32_t job_id; /* Slurm's job id */
    char user[64];
    char name[128];
    char partition[64]; /* where the job is now in Slurm */
    int gpus;           /* total GPUs asked */
    int nodes;          /* nodes asked */
    int64_t submit_time;
    lucid_phase phase;
    int64_t phase_since;
    int64_t profile_start, main_start, end_time; /* 0 = not yet */
    double estimate_s;  /* estimated duration on main, seconds */
    double priority;    /* lucid priority: estimate x gpus; lower runs first */
    int sharing_score;  /* 0 light, 1 medium, 2 heavy; -1 unknown */
    uint32_t packed_with; /* partner job id when packed, else 0 */
    char node_list[256];  /* where lucid placed it ("n1,n2") */
    char gpu_list[64];    /* GPUs on that node for a packed job ("0-3") */
    char reason[256];     /* why it waits, or why it failed */
    int runs;             /* starts on main seen so far (must end at most 1) */
    int cpus;             /* CPUs asked (0 = unknown) */
    /* How a job ended (set with a final phase): "completed", "failed",
     * "cancelled", "timeout", "node-fail", "out-of-memory", "preempted",
     * "rejected", "unknown"; and where: "queue", "profiler", "main". */
    char outcome[24];
    char ended_in[16];
    double profiled_s;    /* profiling time lucid observed (its limit counts only this) */
    int user_hold;        /* the owner holds it (sbatch -H); `lucid release` lifts it */
    char gpu_request[64]; /* the job's own GPU TRES as submitted ("tpn=gres:gpu:4"), so a
                           * pair that never formed can be given its GPUs back */
    int64_t reserved_since; /* backfill: when it was first given the reservation it holds
                             * (UTC s; 0 none).  Kept until it starts, across restarts:
                             * a reservation once given is kept (docs/live.md) */
    /* Main runs Slurm cut short (a node failure under --requeue, an
     * operator's requeue): main_start is the last run's start, these keep
     * the history the accounting needs.  main_first_start: the first start
     * on main (0 = never); main_earlier_s: seconds of the main runs before
     * the last one. */
    int64_t main_first_start, main_earlier_s;
    /* The job's time limit as Slurm last showed it, seconds (0 = none or
     * not read): what a replay of the site's history kills a job at. */
    int64_t time_limit_s;
} lucid_job_record;

typedef struct lucid_decision_record {
    int64_t id;
    int64_t at;
    uint32_t job_id;
    char action[32];  /* "profile", "start", "pack", "move", "requeue", "reject" */
    char target[256]; /* nodes / GPUs / partner, as applied */
    char reason[256];
    int acked;        /* 1 once Slurm confirmed it */
} lucid_decision_record;

typedef struct lucid_model_version {
    char name[64];
    int64_t version;
    int64_t trained_at;
    int64_t rows; /* training rows (0 for a heuristic or a model read from a file) */
    char note[256];
} lucid_model_version;

typedef struct lucid_state lucid_state;

/* Opens (creating if absent) the database at `path`, switches to WAL, checks
 * its integrity and creates or checks the schema.  A file that is not a
 * lucid state database fails with one line naming the file and what to do. */
lucid_state *lucid_state_open(const char *path, lucid_error *err);
/* A second, read-only connection to a database another connection opened
 * (lucidd's server thread: WAL readers never wait for the writer); no
 * schema work, and a busy database is waited for at most `busy_ms`. */
lucid_state *lucid_state_open_readonly(const char *path, int busy_ms, lucid_error *err);
void lucid_state_close(lucid_state *state);

/* Groups several writes into one atomic step (optional: each call below is
 * atomic on its own). */
int lucid_state_begin(lucid_state *state, lucid_error *err);
int lucid_state_commit(lucid_state *state, lucid_error *err);
void lucid_state_rollback(lucid_state *state);

/* Inserts or replaces the job; a phase change is also appended to the job's
 * phase history. */
int lucid_state_put_job(lucid_state *state, const lucid_job_record *job, lucid_error *err);
/* 1 found, 0 absent, -1 error. */
int lucid_state_get_job(lucid_state *state, uint32_t job_id, lucid_job_record *out,
                        lucid_error *err);
/* All jobs (with `include_final` also finished ones) by job id; *out is
 * malloc'ed, free() it.  Returns the count or -1. */
long lucid_state_list_jobs(lucid_state *state, int include_final, lucid_job_record **out,
                           lucid_error *err);
/* Deletes at most `limit` jobs that ended before `ended_before` (UTC s),
 * oldest end first, with their phases, profile, estimates and
 * acknowledged decisions, in one transaction (a job with an unacknowledged
 * decision stays).  The number deleted, or -1. */
long lucid_state_prune(lucid_state *state, int64_t ended_before, long limit, lucid_error *err);
/* Phases a job went through, oldest first (at most max); count or -1. */
long lucid_state_phase_history(lucid_state *state, uint32_t job_id, lucid_phase *phases,
                               int64_t *times, long max, lucid_error *err);

int lucid_state_put_profile(lucid_state *state, uint32_t job_id, const lucid_gpu_sample *mean,
                            int64_t samples, double measured_s, lucid_error *err);
/* 1 found, 0 absent, -1 error. */
int lucid_state_get_profile(lucid_state *state, uint32_t job_id, lucid_gpu_sample *mean,
                            int64_t *samples, lucid_error *err);

/* Records an estimate (duration seconds) and the model version behind it. */
int lucid_state_add_estimate(lucid_state *state, uint32_t job_id, const char *model,
                             int64_t version, double value, int64_t at, lucid_error *err);

/* Appends a decision before it is applied; returns its id (> 0) or -1. */
int64_t lucid_state_add_decision(lucid_state *state, const lucid_decision_record *decision,
                                 lucid_error *err);
int lucid_state_ack_decision(lucid_state *state, int64_t id, lucid_error *err);
/* Decisions of one job (job_id > 0) or all unacknowledged ones (job_id 0),
 * oldest first; *out malloc'ed; count or -1. */
long lucid_state_list_decisions(lucid_state *state, uint32_t job_id,
                                lucid_decision_record **out, lucid_error *err);

int lucid_state_set_model_version(lucid_state *state, const lucid_model_version *model,
                                  lucid_error *err);
/* Stores a model's version and its file text (`body`, NULL = none; a
 * version without a file is a heuristic or a file named in the note). */
int lucid_state_save_model(lucid_state *state, const lucid_model_version *model,
                           const char *body, lucid_error *err);
/* The current version of model `name` and, if body is not NULL, its file
 * text (*body malloc'ed, "" if none).  1 found, 0 absent, -1 error. */
int lucid_state_load_model(lucid_state *state, const char *name, lucid_model_version *model,
                           char **body, lucid_error *err);
long lucid_state_list_model_versions(lucid_state *state, lucid_model_version **out,
                                     lucid_error *err);

/* Small key/value settings that must survive restarts (packing switch...). */
int lucid_state_set_setting(lucid_state *state, const char *key, const char *value,
                            lucid_error *err);
/* 1 found (value copied), 0 absent, -1 error. */
int lucid_state_get_setting(lucid_state *state, const char *key, char *value, size_t size,
                            lucid_error *err);

#endif
