/* sim.h — trace-driven, event-driven simulation of the policies.
 *
 * The simulator feeds the scheduling core (sched.h) simulated time: it
 * jumps from one moment where something can change to the next (an
 * arrival, a completion, a policy's own decision point, a capacity change)
 * and still reproduces the reference simulator's one-second steps.  VCs are
 * independent and run on worker threads; results do not depend on the
 * thread count. */
#ifndef LUCID_SIM_H
#define LUCID_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "lucid/backfill.h"
#include "lucid/sched.h"
#include "lucid/trace.h"

typedef struct lucid_sim_lucid_config {
    int32_t profiler_nodes;      /* scale: nodes of the profiling cluster (2) */
    int64_t profiler_time_limit; /* seconds (200) */
    int64_t profiler_overhead;   /* seconds a job that leaves the profiler keeps its GPUs and
                                  * reaches main's queue late (0: the reference) */
    int32_t profiler_factor;     /* GPU limit = nodes x factor (4) */
    int profiler_autoscale;      /* borrow a node when the profiler queue grows */
    int32_t borrow_vc;           /* VC that lends the extra node (-1: none) */
    int32_t *nodes_from;         /* per VC: nodes given to the profiler */
    double gmem_limit;           /* 24576 MiB */
    double priority_ratio;       /* 2 */
    int32_t score_sum;           /* 2 */
    double pack_threshold;       /* packing on when mean pred_gpu_job > this (2) */
    double scale_down_factor;    /* profiler returns its node when pred_gpu_num <= this x GPU limit (5) */
    int32_t scale_up_queue;      /* add a node when more than this many wait (10) */
    int32_t scale_down_queue;    /* return it when fewer than this many wait (5) */
    /* 1: a job without a workload key (a trace without GPU metrics) gets
     * its sharing score from lucid_venus_prior (drawn by its id) and,
     * packed, the prior's co-located speed; 0: score 2 (never packed
     * with a heavy job) and full speed, as the reference. */
    int share_prior;
    /* 1: pack a job only when it cannot start on free GPUs at once
     * (lucid_lucid_inputs.pack_when_blocked); 0: the reference's rule. */
    int pack_when_blocked;
} lucid_sim_lucid_config;

/* Watches one job: called after every visited step of its VC's run under
 * the watched policy (explanations, tests).  The scheduler state passed
 * is the VC's: its jobs and run records are VC-local arrays, and `job`
 * and every job index in it (queue, running list, partners) are indices
 * into them (s->jobs[i].job_id names a job); lucid_trace_find maps back. */
typedef struct lucid_observer {
    int64_t job;                      /* trace index, -1 = none */
    const struct lucid_policy_ops *policy;
    void (*after_step)(void *user, const lucid_sched *s, int32_t job);
    void *user;
} lucid_observer;

/* Backfill for one policy (backfill.h); policies not listed run without. */
#define LUCID_SIM_MAX_BACKFILL 16
typedef struct lucid_sim_backfill {
    const struct lucid_policy_ops *policy;
    lucid_backfill_config cfg;
} lucid_sim_backfill;

struct lucid_sim_result;

typedef struct lucid_sim_config {
    const lucid_placer_ops *placer;
    lucid_semantics sem;
    int reference;            /* --compat reference */
    int32_t gpus_per_node;    /* 8 */
    int threads;              /* worker threads (>= 1) */
    uint64_t seed;
    int64_t start;            /* simulation start (first step) */
    int series;               /* record 60-second samples */
    int skip_oversized;       /* exclude jobs larger than their VC instead of refusing */
    lucid_sim_lucid_config lucid;
    lucid_observer observe;
    /* Lucid's models trained and applied during the run (online.h); NULL:
     * their outputs come from the input files. */
    const struct lucid_online_config *online;
    lucid_sim_backfill backfill[LUCID_SIM_MAX_BACKFILL];
    int nbackfill;
    int eta; /* predict every job's start at its submission (eta.h) */
    /* Fair share (fairshare.h, docs/fairshare.md): > 0 orders the queues
     * of FIFO, SJF, QSSF and Lucid by lucid_order_value with this weight,
     * from each VC's ledger of its users' GPU-seconds decayed with
     * fairshare_half_life (seconds).  0 (the default): off, every result
     * as without it. */
    double fairshare_weight;
    double fairshare_half_life;
    /* The slurm policy's priority/multifactor weights (sched.h; [slurm]
     * keys, docs/slurm-policy.md); its fair-share factor comes from the
     * same ledger, kept when weight_fairshare > 0. */
    lucid_slurm_priority slurm;
    const char *slurm_accounts; /* [slurm] accounts (not owned; NULL: every user under the root) */
    int eta_hourly; /* with eta: and again at every whole hour while it waits */
    /* A VC whose working records (256 bytes a job) take at least this many
     * bytes hands the pages of ended jobs back as it runs (memory follows
     * the jobs in flight); a smaller one keeps them to its end.  Default
     * 16 MiB (~65,000 jobs), 0 in sanitizer builds; results are the same
     * either way. */
    size_t release_min_bytes;
    /* Called once per policy as soon as its result (results[index]) is
     * complete, from the worker thread that finished it, while other
     * policies may still run: a caller can write one policy's outputs
     * during the others' simulation.  Calls for different policies may
     * overlap; each may read its result and the inputs, not change them.
     * Not called after a failure; the results are still freed then.  NULL:
     * none. */
    void (*on_result)(void *user, int index, const struct lucid_sim_result *result);
    void *on_result_user;
} lucid_sim_config;

void lucid_sim_config_defaults(lucid_sim_config *cfg);

typedef struct lucid_sim_inputs {
    const lucid_trace *trace;
    const lucid_vcs *vcs;
    const double *qssf_estimates;  /* per job, seconds (may be negative) */
    const double *lucid_estimates;
    const lucid_sharing *sharing;
    const lucid_pairs *pairs;
    const lucid_forecast *forecast;
    /* Per job sharing score for Lucid (NULL: looked up in `sharing`); with
     * lucid_estimates and forecast taken from an online run's result it
     * replays that run without training (the tuner's surrogate). */
    const int32_t *lucid_share;
    /* Estimates for the policies that have none of their own (FIFO, SRTF,
     * Tiresias; SJF orders by true durations but plans with these), used
     * by backfill and the start-time estimates: the [qssf] estimates, else
     * [lucid]'s.  NULL: 1000 s each. */
    const double *plan_estimates;
} lucid_sim_inputs;

typedef struct lucid_sample {
    int64_t time;
    int32_t vc;
    int32_t total_gpus, idle_gpus, pending_gpus, running_jobs, pending_jobs, packed_gpus;
} lucid_sample;

/* A start time predicted for `job` at `at` (P10, P50, P90; -1: never fits). */
typedef struct lucid_eta_row {
    int32_t job;
    int64_t at, p10, p50, p90;
} lucid_eta_row;
/* One VC's GPU use over its run: busy = GPU-seconds of GPUs held by a job
 * (a GPU two packed jobs share counts once), capacity = GPU-seconds of the
 * GPUs the policy schedules on, both over [first, last] = the VC's first
 * submission to its last job's end; gpus_first / gpus_last = its GPUs at
 * those moments (a VC with no job: first = -1 and gpus_first its size). */
/* A job's run in Lucid's profiler: [start, end), or -1, -1 if not profiled. */
typedef struct lucid_prof_run {
    int64_t start, end;
} lucid_prof_run;

typedef struct lucid_gpu_use {
    double busy, capacity;
    int64_t first, last;
    int32_t gpus_first, gpus_last;
    /* the VC's own GPUs (its nodes x GPUs per node, Lucid's profiler nodes
     * included): the cluster finish-time fairness slices (bounds.h) */
    int32_t gpus_base;
} lucid_gpu_use;

typedef struct lucid_sim_result {
    const lucid_policy_ops *policy;
    lucid_jobresult *run;    /* per trace job */
    /* Lucid: per trace job, its profiling run (-1, -1 if not profiled);
     * NULL for the other policies. */
    lucid_prof_run *prof;
    unsigned char *excluded; /* per job: 1 if not simulated (oversized, skipped) */
    size_t nexcluded;        /* jobs with excluded[i] = 1 */
    lucid_sample *samples;   /* by VC then time (when cfg.series) */
    size_t nsamples;
    int64_t profiled, finished_in_profiler, packed_at_end;
    int64_t scaling_events;
    int duration_trainings;  /* online: times the duration model was trained */
    char estimate_why[1024]; /* online: why the observed job got its estimate */
    /* Online: what the models gave the schedule, so that the run can be
     * replayed from inputs (lucid_estimates, lucid_share, forecast) at
     * other knobs without training.  NULL / empty otherwise. */
    double *estimates;       /* per job: the estimate behind its priority (-1: none) */
    int32_t *share;          /* per job: the predicted sharing score */
    lucid_forecast forecast; /* the load forecast the run used */
    lucid_backfill_config backfill; /* mode none: no backfill */
    lucid_backfill_stats backfill_stats;
    /* cfg.eta: per job, its start predicted when it joined the queue
     * (P10, P50, P90; -1: none).  NULL otherwise. */
    int64_t *eta_p10, *eta_p50, *eta_p90;
    int64_t *eta_at; /* when: its submission, or (Lucid, fixed semantics) when it
                      * left the profiler and joined the main queue */
    int64_t *reserved_at; /* backfill: per job, its latest reservation (-1) */
    /* cfg.eta: the re-predictions of waiting jobs at every whole hour of
     * simulated time (t % 3600 == 0) while they wait, by job (trace order)
     * then time; NULL / 0 when none. */
    lucid_eta_row *eta_hourly;
    size_t neta_hourly;
    lucid_gpu_use *gpu_use; /* per VC index (vcs->count entries) */
    int32_t ngpu_use;
} lucid_sim_result;

/* Progress callback: called from worker threads (serialized by the
 * simulator) with the jobs ended so far over all policies' runs and the
 * total; `done` grows with simulated time inside each VC run (every ~1,000
 * ended jobs and when a run stops) and never goes back, online runs
 * included.  Jobs that end in Lucid's profiler are not counted. */
typedef void (*lucid_progress_fn)(void *user, int64_t done, int64_t total);

/* Runs each policy over the trace.  results[i] receives policy i. */
int lucid_simulate(const lucid_sim_config *cfg, const lucid_sim_inputs *in,
                   const lucid_policy_ops *const *policies, int npolicies,
                   lucid_sim_result *results, lucid_progress_fn progress, void *user,
                   lucid_error *err);
void lucid_sim_result_free(lucid_sim_result *result);

/* ---- the profiler at equal capacity (capacity.c) ---- */
/* Adjusts taken[v] (nodes VC v gives Lucid's profiler; nodes[v] its size,
 * min_nodes[v] the fewest it may keep, 0 for a VC that takes no part:
 * then give it nodes[v] = 0) until they sum to `want`: each node more from
 * the VC with the most nodes left that keeps min_nodes (ties: the first),
 * each node fewer back to the VC that gave the most (ties: the last).
 * 0, or -1 when no VC can give another node (taken as far as it got). */
int lucid_profiler_take(const int32_t *nodes, const int32_t *min_nodes, int32_t nvcs,
                        int32_t want, int32_t *taken);

/* ---- the Venus prior (prior.c) ---- */
/* Sharing scores and co-located speeds learned on Venus, for traces that
 * have no GPU metrics to learn their own (docs/traces.md). */
typedef struct lucid_share_prior {
    int64_t jobs[3];      /* Venus jobs with sharing score 0, 1, 2 */
    double speed[3][3];   /* mean co-located speed of a job of score [i] packed with [j] */
} lucid_share_prior;
extern const lucid_share_prior lucid_venus_prior;
/* A job's score drawn from p->jobs by its id (same id and seed: same score). */
int32_t lucid_share_prior_score(const lucid_share_prior *p, int64_t job_id, uint64_t seed);
/* Speed of a job of `score` packed with one of `partner` (at most 1). */
double lucid_share_prior_speed(const lucid_share_prior *p, int32_t score, int32_t partner);
/* The prior learned from a trace with workload keys, its sharing labels and
 * its measured pairs; 0, or -1 when a score pair has no measurement (1.0). */
int lucid_share_prior_learn(const lucid_trace *trace, const lucid_sharing *sharing,
                            const lucid_pairs *pairs, lucid_share_prior *out);

/* ---- metrics ---- */
typedef struct lucid_summary {
    int64_t jobs;
    double avg_jct, avg_queue, p999_queue;
    double avg_delay;      /* mean of JCT - duration: every policy's, one definition */
    double avg_profiler_s; /* mean time a job ran in Lucid's profiler (0 for the others) */
    double profiler_gpu_s; /* total GPU-seconds of those profiler runs */
} lucid_summary;
/* Summary over the simulated jobs of VC `vc` (-1 = all), restricted to
 * jobs with more than `min_gpus` and at most `max_gpus` GPUs. */
int lucid_summarize(const lucid_trace *trace, const lucid_sim_result *result, int32_t vc,
                    int32_t min_gpus_exclusive, int32_t max_gpus, lucid_summary *out);
/* The same for every VC at once (out[v] for VC v, out[nvcs] for all; all
 * GPU counts), in one pass over the jobs. */
int lucid_summarize_vcs(const lucid_trace *trace, const lucid_sim_result *result, int32_t nvcs,
                        lucid_summary *out);
/* The p-th percentile (0..100) with linear interpolation between closest ranks
 * (ranks of the sorted order; found by selection, O(n)); reorders `v`. */
double lucid_percentile(double *v, size_t n, double p);


/* ---- outputs (report.c) ---- */
#include <stdio.h>
/* jobs-<policy>.csv: job_id,vc,gpu_num,submit_time,duration,start_time,end_time,queue,jct,
 * delay,profiled,finished_in_profiler,profiler_s,packed_with, then the trace's optional columns
 * user,state,time_limit,gpu_type that it has (carry.c) */
int lucid_write_jobs(FILE *out, const lucid_trace *trace, const lucid_vcs *vcs,
                     const lucid_sim_result *result);
/* Each job's "job_id,vc,gpu_num,submit_time", the start of its rows in
 * every policy's jobs and eta files, formatted once for all of them (NULL
 * if out of memory). */
typedef struct lucid_row_prefix lucid_row_prefix;
lucid_row_prefix *lucid_row_prefix_make(const lucid_trace *trace, const lucid_vcs *vcs);
void lucid_row_prefix_free(lucid_row_prefix *p);
/* The same, giving the XXH64 of the bytes written (the file's, when it
 * holds nothing else): a MANIFEST's hash without reading the file back;
 * prefix (made for this trace and VCs) saves formatting the rows' starts,
 * NULL: they are formatted here. */
int lucid_write_jobs_hashed(FILE *out, const lucid_trace *trace, const lucid_vcs *vcs,
                            const lucid_sim_result *result, const lucid_row_prefix *prefix,
                            uint64_t *xxh64);
void lucid_carry_header(FILE *out, const lucid_trace *trace);
/* summary rows (no header): policy,vc,jobs,avg_jct,avg_queue,p999_queue,avg_delay,
 * avg_profiler_s,profiler_gpu_s per VC (by name) and
 * `all`, then the columns of lucid_metrics_header (bounds.h), then eta_coverage and
 * eta_median_rel_error (lucid_eta_calibration; empty without predictions or when no job
 * waited more than 60 s), then offered_load and inputs (empty here; lucid_policy_summary) */
int lucid_write_summary_rows(FILE *out, const lucid_trace *trace, const lucid_vcs *vcs,
                             const lucid_sim_result *result);
/* eta-<policy>.csv: job_id,vc,gpu_num,submit_time,predicted_at,start_time,wait,eta_p10,
 * eta_p50,eta_p90,when: per job, the start predicted when it joined the queue
 * (when = queued: at its submission, or for Lucid's profiled jobs in fixed
 * semantics when they left the profiler), then its re-predictions at every
 * whole hour while it waited (when = hourly); jobs with no prediction are
 * left out */
int lucid_write_eta(FILE *out, const lucid_trace *trace, const lucid_vcs *vcs,
                    const lucid_sim_result *result);
/* The same with the XXH64 of the bytes written (lucid_write_jobs_hashed). */
int lucid_write_eta_hashed(FILE *out, const lucid_trace *trace, const lucid_vcs *vcs,
                           const lucid_sim_result *result, const lucid_row_prefix *prefix,
                           uint64_t *xxh64);
/* Calibration over the jobs of VC `vc` (-1: all) that waited more than 60 s
 * after their prediction: share started inside [P10, P90], and the median of
 * |predicted wait - wait| / wait, waits counted from the prediction.  NaN
 * when no job qualifies; *n = how many did. */
void lucid_eta_calibration(const lucid_trace *trace, const lucid_sim_result *result, int32_t vc,
                           double *coverage, double *median_rel_error, int64_t *n);
/* For every VC at once (one pass): entry v < nvcs for VC v, entry nvcs for
 * all jobs; each array holds nvcs + 1 values. */
void lucid_eta_calibration_vcs(const lucid_trace *trace, const lucid_sim_result *result,
                               int32_t nvcs, double *coverage, double *median_rel_error,
                               int64_t *n);
/* series-<policy>.csv */
int lucid_write_series(FILE *out, const lucid_vcs *vcs, const lucid_sim_result *result);

/* ---- why a job was scheduled as it was (why.c) ---- */
/* Re-runs `policy` over the inputs watching trace job `job` and writes a
 * plain-text explanation: its priority, profiling, each waiting interval
 * with its reason (the job ahead that blocked the queue, or the GPUs it
 * needed against those free), and how it started (packed: with whom and
 * the rule values that allowed it). */
int lucid_explain_job(const lucid_sim_config *cfg, const lucid_sim_inputs *in,
                      const struct lucid_policy_ops *policy, int64_t job, FILE *out,
                      lucid_error *err);
/* The same with dates: `calendar` (NULL: none) is the offset from trace
 * seconds to Unix time, and every time printed gets its UTC date beside it
 * ("submitted at 13219203 (2020-09-01 00:02:34 UTC)"). */
int lucid_explain_job_dated(const lucid_sim_config *cfg, const lucid_sim_inputs *in,
                            const struct lucid_policy_ops *policy, int64_t job, const int64_t *calendar,
                            FILE *out, lucid_error *err);

#endif
