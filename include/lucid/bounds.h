/* bounds.h — what no schedule can beat on a trace, and how far a
 * simulated schedule is from it (`lucid bounds`, summary.csv's extra columns).
 *
 * Floors on the average JCT (seconds):
 *  - mean duration: a job's JCT is its wait plus its duration, waits are
 *    >= 0, so no schedule that leaves durations unchanged averages less;
 *    holds for every policy (packing only slows a job, so it holds for
 *    Lucid too).
 *  - single-machine relaxation, per VC: a VC of G GPUs processes at most G
 *    GPU-seconds per second; treat it as one machine of speed G and each job
 *    as g x d units of work released at its submit time.  Every schedule
 *    inside the VC is feasible there, and preemptive shortest-remaining-work
 *    first is optimal for total completion time on one machine with release
 *    dates, so its average JCT is a floor.  Holds when jobs run only in
 *    their VC and never share a GPU (FIFO, SJF, SRTF, QSSF, Tiresias; not
 *    Lucid: its profiler runs jobs outside their VC and packing shares GPUs).
 *  - pooled relaxation: the same over all GPUs at once; holds for any
 *    schedule without packing.
 * Each VC's floor is the larger of its mean duration and its relaxation. */
#ifndef LUCID_BOUNDS_H
#define LUCID_BOUNDS_H

#include <stdint.h>
#include <stdio.h>

#include "lucid/error.h"
#include "lucid/sim.h"
#include "lucid/trace.h"

typedef struct lucid_vc_bound {
    int64_t jobs, gpus;
    double mean_duration; /* avg JCT floor from durations */
    double relaxation;    /* avg JCT floor from the single-machine relaxation */
} lucid_vc_bound;

typedef struct lucid_bounds {
    int64_t jobs, gpus;
    double mean_duration; /* over all jobs */
    double per_vc;        /* job-weighted mean of max(mean duration, relaxation) per VC */
    double pooled;        /* max(mean duration, relaxation of all GPUs as one machine) */
    lucid_vc_bound *vc;   /* per VC index (vcs->count) */
    int32_t nvcs;
} lucid_bounds;

int lucid_bounds_compute(const lucid_trace *trace, const lucid_vcs *vcs, int32_t gpus_per_node,
                         lucid_bounds *out, lucid_error *err);
void lucid_bounds_free(lucid_bounds *b);

/* Average JCT of preemptive shortest-remaining-work-first on one machine
 * of `capacity` work units per second; jobs (release, work) sorted by
 * release.  (Exposed for tests.) */
double lucid_srpt_mean_flow(const int64_t *release, const double *work, size_t n, double capacity,
                            int *ok);

/* Per-schedule metrics over the jobs of VC `vc` (-1 = all). */
typedef struct lucid_metrics {
    int64_t jobs;
    double floor;      /* mean duration of these jobs */
    double gap;        /* avg JCT / floor - 1 */
    double bsld_mean;  /* bounded slowdown max(1, JCT / max(duration, 10 s)) */
    double bsld_p99;
    double jain_users; /* Jain's index of the users' mean bounded slowdowns (NaN: < 1 user) */
    double jain_vcs;   /* same across VCs (NaN for a single VC) */
    /* Finish-time fairness (Themis, NSDI'20): per job rho = JCT / JCT on a
     * private 1/N slice of its VC, N the users with jobs in the VC (arrived,
     * not ended) at its submission, its own user included; the private JCT
     * is max(1 s, duration x max(1, gpus x N / VC GPUs)) (a job larger than
     * its slice runs at the slice's share of its GPUs).  The largest rho,
     * and the share of jobs with rho > 1 (NaN: no job, or the run did not
     * record the VC's GPUs). */
    double ftf_max;
    double ftf_over1;
    double gpu_util;   /* busy / available GPU-seconds (lucid_gpu_use, sim.h) from the
                        * first submission to the last end: of the VC's GPUs, or for
                        * all VCs of the cluster's (each VC counted over the whole
                        * window, idle before its first job and after its last);
                        * NaN for a size class or when the run did not record it */
} lucid_metrics;

#define LUCID_BSLD_THRESHOLD 10.0

int lucid_metrics_compute(const lucid_trace *trace, const lucid_sim_result *result, int32_t vc,
                          lucid_metrics *out);
/* The same over the jobs with more than `min_gpus_exclusive` and at most
 * `max_gpus` GPUs (Table 5's size classes; gpu_util NaN). */
int lucid_metrics_compute_sized(const lucid_trace *trace, const lucid_sim_result *result,
                                int32_t vc, int32_t min_gpus_exclusive, int32_t max_gpus,
                                lucid_metrics *out);
/* GPU utilisation of VC `vc` (-1: the cluster) in a run (NaN if unknown). */
double lucid_gpu_utilisation(const lucid_sim_result *result, int32_t vc);
/* The same for every VC at once, in one pass over the jobs: out[v] for VC
 * v < nvcs and out[nvcs] for all jobs, equal to nvcs + 1 calls of
 * lucid_metrics_compute (which each read every job). */
int lucid_metrics_compute_vcs(const lucid_trace *trace, const lucid_sim_result *result,
                              int32_t nvcs, lucid_metrics *out);
/* Table 5's size classes: class 0 the jobs of more than
 * LUCID_LARGE_JOB_GPUS GPUs, class 1 those of 1 to LUCID_LARGE_JOB_GPUS. */
#define LUCID_LARGE_JOB_GPUS 8
#define LUCID_SIZE_CLASSES 2
/* One policy's figures for summary.csv, eta-summary.csv and the terminal's
 * tables, made once for all three in two passes over the jobs: entry
 * v < nvcs for VC v, entry nvcs for all jobs (the figures of
 * lucid_summarize_vcs and lucid_metrics_compute_vcs; of
 * lucid_eta_calibration_vcs: NaN and no job counted without predictions);
 * class_sums / class_metrics those of lucid_summarize and
 * lucid_metrics_compute_sized over each size class of all VCs. */
typedef struct lucid_policy_summary {
    int32_t nvcs;
    lucid_summary *sums;
    lucid_metrics *metrics;
    double *eta_cov, *eta_err;
    int64_t *eta_waited;
    lucid_summary class_sums[LUCID_SIZE_CLASSES];
    lucid_metrics class_metrics[LUCID_SIZE_CLASSES];
    /* Borrowed, set by the caller after lucid_policy_summary_make (NULL:
     * the columns stay empty): each VC's offered load (nvcs + 1 values,
     * lucid_offered_load) and what the policy's model inputs were when
     * they are not the experiment's files ("online", "venus prior", ...). */
    const double *offered_load;
    const char *inputs;
} lucid_policy_summary;
/* 0, or -1 (out of memory; nothing to free then). */
int lucid_policy_summary_make(lucid_policy_summary *ps, const lucid_trace *trace,
                              const lucid_vcs *vcs, const lucid_sim_result *result);
void lucid_policy_summary_free(lucid_policy_summary *ps);
/* lucid_write_summary_rows (sim.h) from figures made before. */
int lucid_write_summary_rows_of(FILE *out, const lucid_vcs *vcs, const lucid_sim_result *result,
                                const lucid_policy_summary *ps);
/* Offered load of each VC (out[v], v < vcs->count) and of the cluster
 * (out[vcs->count]): the GPU-seconds its jobs ask for (gpu_num x
 * duration) over the GPU-seconds its GPUs (nodes x gpus_per_node) offer
 * from its first submission to its last; above 1 its queue grows for as
 * long as jobs arrive, whatever the policy.  NaN with fewer than two
 * distinct submission times. */
void lucid_offered_load(const lucid_trace *trace, const lucid_vcs *vcs, int32_t gpus_per_node,
                        double *out);

/* Each trace job's finish-time fairness rho (lucid_metrics.ftf_max; NaN
 * for an excluded job or without the VCs' GPUs) into rho[0..njobs-1].
 * 0, or -1 (out of memory). */
int lucid_finish_time_fairness(const lucid_trace *trace, const lucid_sim_result *result,
                               double *rho);

/* The summary.csv columns after p999_queue (header and one row's values,
 * each starting with a comma): those of lucid_metrics before ftf_max. */
void lucid_metrics_header(FILE *out);
void lucid_metrics_write(FILE *out, const lucid_metrics *m);
/* The finish-time fairness columns, ftf_max and ftf_over1, summary.csv's
 * last two (after inputs: the columns before keep their places). */
void lucid_metrics_ftf_header(FILE *out);
void lucid_metrics_ftf_write(FILE *out, const lucid_metrics *m);

#endif
