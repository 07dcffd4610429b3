/* eta.h — start-time estimates: for the jobs waiting at a moment, when each
 * will start, as an interval (P10, P50, P90).
 *
 * One function serves the simulator (predictions at submission) and can
 * serve lucidd: it plays the policy's own queue order forward on the
 * availability profile (backfill.h) with the placer's rule.  Running jobs
 * end at their estimate times a ratio drawn from an empirical table of
 * actual/estimate ratios of jobs already finished, conditioned on how long
 * the running job has run already (only ratios at least elapsed/estimate
 * count: a job that has run 10 h is not expected to end in 5 min), or,
 * once it has outrun its estimate, at a duration drawn from the finished
 * jobs that ran at least as long when that rule has so far predicted the
 * ends of such jobs better; waiting jobs run their estimate times the
 * unconditioned ratio.  The three
 * scenarios use the table's 10th, 50th and 90th percentiles throughout,
 * except, in Lucid's replay, for the running jobs of the user whose new job
 * is predicted: those end at the levels such jobs have ended at (users
 * queue a job as their running one nears its end), and, in the P90
 * scenario of that replay, for the arrivals to come that overtake
 * (LUCID_ETA_GHOST_WINDOW). */
#ifndef LUCID_ETA_H
#define LUCID_ETA_H

#include <stddef.h>
#include <stdint.h>

#include "lucid/backfill.h"
#include "lucid/sched.h"

/* Ratios actual duration / estimate of finished jobs. */
typedef struct lucid_eta_table {
    double *ratios;
    size_t n, cap;
    size_t sorted; /* ratios[0..sorted) are sorted; later ones wait for the next re-sort */
    double sum;    /* of all ratios */
    /* The same jobs' durations (s), when added by lucid_eta_table_add_run. */
    double *durations;
    size_t nd, cap_d, sorted_d;
    /* Summed |log(predicted / actual)| remaining time of the finished jobs
     * that outran their estimates, as of when they did, by the ratio rule
     * and by the duration rule (see lucid_eta_table_duration). */
    double miss_ratio, miss_duration;
    /* The submitter's own running jobs.  A job submitted (and waiting) is
     * often queued as its user's running job nears its end (a pipeline's
     * next step); those jobs' quantile levels within the ratio table
     * (PIT: where their run fell among the ratios at least as large as
     * theirs at the submission, or among the durations when the duration
     * rule gave their remaining time) are kept here, once they end, and a
     * prediction for that user's new job replaces scenario q by the
     * q-quantile of these levels for the user's running jobs. */
    double *levels;
    size_t nlevels, cap_levels, sorted_levels;
    struct lucid_eta_pending *pending; /* at most one per running job */
    size_t npending, cap_pending;
    /* slot_of[job]: 1 + the job's place in pending, 0 if none (jobs below
     * cap_slot_of; a job's note is found without a scan at its end). */
    uint32_t *slot_of;
    size_t cap_slot_of;
    /* The VC's recent arrivals (lucid_eta_table_note_arrival), oldest first:
     * arrivals[arr_head..narr) are those of the last LUCID_ETA_GHOST_WINDOW s. */
    struct lucid_eta_arrival *arrivals;
    size_t arr_head, narr, cap_arr;
} lucid_eta_table;

typedef struct lucid_eta_arrival {
    int64_t time;
    int32_t job;
} lucid_eta_arrival;

typedef struct lucid_eta_pending {
    int32_t job;
    double elapsed, estimate; /* when its user submitted a job that waited */
    int by_duration;          /* its remaining time came from the duration rule then */
} lucid_eta_pending;

int lucid_eta_table_add(lucid_eta_table *t, double ratio);
/* Adds a finished job's ratio duration / estimate and its duration. */
int lucid_eta_table_add_run(lucid_eta_table *t, double estimate, double duration);
/* The q-quantile (0..1) of the ratios that are >= at_least; a table of
 * fewer than LUCID_ETA_MIN_HISTORY ratios answers from a fixed prior
 * (0.25, 1, 4 at q = 0.1, 0.5, 0.9), and one with no ratio that large from
 * at_least x (1.1, 1.5, 3). */
#define LUCID_ETA_MIN_HISTORY 20
double lucid_eta_table_quantile(lucid_eta_table *t, double at_least, double q);
/* The mean ratio (the prior's 1 below LUCID_ETA_MIN_HISTORY ratios). */
double lucid_eta_table_mean(const lucid_eta_table *t);
/* The q-quantile of the durations (s) that are >= at_least (at_least x
 * (1.1, 1.5, 3) when none is); -1 below LUCID_ETA_MIN_HISTORY durations. */
double lucid_eta_table_duration(const lucid_eta_table *t, double at_least, double q);
/* A job of `user` was submitted and waits: its user's running jobs are
 * noted (one note per running job, the latest), to score when they end.
 * Returns how many it noted, or -1 (out of memory). */
int lucid_eta_table_note_submission(lucid_eta_table *t, const lucid_sched *s,
                                    const lucid_backfill *bf, int32_t user);
/* A running job ended after `duration` s (its ratio `duration / estimate`)
 * or, with duration < 0, was preempted: its note, if any, becomes a level
 * (or is dropped).  Call before lucid_eta_table_add_run. */
int lucid_eta_table_note_end(lucid_eta_table *t, int32_t job, double estimate, double duration);
/* Whether predictions for this scheduler can use the submitter rule
 * (Lucid's greedy replay); elsewhere noting submissions is work for no one. */
int lucid_eta_uses_submitter(const lucid_sched *s, const lucid_backfill *bf);
/* The quantile level used for the running jobs of the submitting user in
 * scenario q: the q-quantile of the levels, q itself below
 * LUCID_ETA_MIN_HISTORY of them. */
double lucid_eta_table_submitter_level(const lucid_eta_table *t, double q);
void lucid_eta_table_free(lucid_eta_table *t);
/* The jobs the table's notes name (running jobs noted for their user,
 * recent arrivals the replay re-reads). */
void lucid_eta_table_held_jobs(const lucid_eta_table *t, lucid_job_visit visit, void *ctx);

/* Later arrivals that overtake.  A job's start also waits for the jobs
 * that arrive after its prediction and that the policy's order puts ahead
 * of it (Lucid: estimate x GPUs), which the queue at the prediction does
 * not show.  The replay assumes the next hours' arrivals mirror the last
 * ones: each job that arrived d s before the prediction (d within the
 * window; the LUCID_ETA_MAX_GHOSTS latest) arrives again d s after it, in
 * the scenarios of LUCID_ETA_GHOST_SCENARIOS, and joins the queue at its
 * place in the policy's order.  The simulator notes every job that joins a
 * VC's queue; lucidd every job it takes in, at its submission (by job id:
 * decide_predict hands the replay its own copy with the mirror's indices). */
#define LUCID_ETA_GHOST_WINDOW 21600
#define LUCID_ETA_MAX_GHOSTS 32
int lucid_eta_table_note_arrival(lucid_eta_table *t, int32_t job, int64_t time);

/* Jobs deeper in the queue than this are placed by volume: the estimated
 * GPU-seconds between the last exactly placed job and them drain at the
 * cluster's size after that job's start.  One prediction then costs
 * O(depth) placements plus O(queue behind it), not O(queue) placements. */
#define LUCID_ETA_EXACT_DEPTH 32

typedef struct lucid_eta {
    int64_t p10, p50, p90; /* predicted start times; -1 if the job can never fit */
} lucid_eta;

/* The plan of the last prediction, kept so that a later one at a moment
 * when no job has started or ended (lucid_eta_invalidate not called) and
 * the queue only grew at its end extends it instead of replaying the whole
 * queue: with FIFO's long queues that is the difference between O(queue)
 * and O(1) placements per arrival. */
typedef struct lucid_eta_plan {
    lucid_profile prof[3];
    int32_t *jobs;     /* the queue prefix placed, in order */
    lucid_eta *at;     /* their predictions */
    double head_work;  /* their estimated GPU-seconds */
    /* Set by the caller before a prediction: the user whose new job it is
     * for, if any (submitter_set: a zeroed plan has none); that user's
     * running jobs end at the submitter levels.  A plan built for another
     * submitter is not extended. */
    int32_t submitter;
    int submitter_set;
    int32_t built_for; /* the submitter of the plan's profiles, -1: none */
    size_t placed, cap_jobs, cap_at;
    int valid;
    /* The last placed job's reservation per scenario, made only if the
     * plan is extended (most plans are rebuilt first): segment, duration
     * and allocations (prof[sc].alloc, untouched since); 0 = none. */
    long defer_k[3];
    int64_t defer_dur[3];
    int defer_n[3];
} lucid_eta_plan;

void lucid_eta_invalidate(lucid_eta_plan *plan);
void lucid_eta_plan_free(lucid_eta_plan *plan);
/* The jobs whose records the plan may read when extended (its profiles'
 * pending ends). */
void lucid_eta_plan_held_jobs(const lucid_eta_plan *plan, lucid_job_visit visit, void *ctx);

/* Predicts the starts of the jobs at queue positions [lo, upto) of
 * s->queue into out[lo..upto) (out has room for upto entries; positions
 * below lo and deeper than LUCID_ETA_EXACT_DEPTH may be left unset).  `bf`
 * gives the estimates (lucid_backfill_job_estimate) and, when its mode is
 * not none, lets jobs start ahead of earlier ones (as backfill does);
 * without it, a job starts no earlier than the job ahead of it.
 * `queued_work`: the queue's estimated GPU-seconds (gpus x estimate summed),
 * kept by the caller as jobs join and leave; negative: summed here.
 * Returns 0, or -1 (out of memory). */
int lucid_eta_predict(const lucid_sched *s, const lucid_backfill *bf, lucid_eta_table *t,
                      lucid_eta_plan *plan, size_t lo, size_t upto, double queued_work,
                      lucid_eta *out);

#endif
