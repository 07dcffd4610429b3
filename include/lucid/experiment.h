/* experiment.h — experiment files (`lucid simulate EXPERIMENT.ini`).
 *
 * Sections and keys (paths are relative to the experiment file):
 *   [trace]    jobs, vcs, gpus_per_node, start
 *   [simulate] policies, placer, compat, fix, out, threads, series, seed, skip_oversized
 *   [qssf]     estimates
 *   [fifo], [sjf], [qssf], [lucid]: backfill, backfill_estimate, backfill_margin,
 *     backfill_window, backfill_min_gpus
 *   [simulate] eta
 *   [lucid]    estimates, forecast, sharing_labels, colocation, profiler_nodes_from,
 *              profiler_nodes, profiler_time_limit, profiler_factor,
 *              profiler_autoscale, borrow_vc, gpu_mem_mib, priority_ratio,
 *              score_sum, pack_threshold, scale_down_factor, models, history,
 *              history_start, retrain_period, estimate_period, min_history, model_bags,
 *              warm_start
 * Unknown sections or keys, and bad values, are errors naming the line.
 * "#" or ";" after whitespace starts a comment; numbers are decimal only
 * ("0x10" is refused); a policy may be listed once. */
#ifndef LUCID_EXPERIMENT_H
#define LUCID_EXPERIMENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lucid/error.h"

#define LUCID_EXP_MAX_POLICIES 16

typedef struct lucid_experiment {
    char *path;            /* the experiment file ("" when built from flags) */
    char *jobs, *vcs;      /* resolved paths */
    int32_t gpus_per_node;
    int64_t start;         /* -1 = midnight before the first job */
    char *policies[LUCID_EXP_MAX_POLICIES];
    int npolicies;
    char *placer;
    int reference;         /* compat = reference */
    char *fix;             /* reference defects to fix individually (names in docs/semantics.md) */
    char *out;
    int threads;
    int series;
    uint64_t seed;
    int skip_oversized;
    char *qssf_estimates;
    char *lucid_estimates, *forecast, *sharing_labels, *colocation;
    char *profiler_nodes_from; /* "vc:n,vc:n" */
    int32_t profiler_nodes;
    int64_t profiler_time_limit;
    char *profiler_overhead; /* [lucid] profiler_overhead, seconds (unset: 0) */
    int32_t profiler_factor;
    int profiler_autoscale;
    char *borrow_vc;
    double gpu_mem_mib;
    double priority_ratio;     /* newcomer priority <= ratio x partner's (2) */
    int32_t score_sum;         /* sharing scores must sum to <= this (2) */
    double pack_threshold;     /* packing on when mean pred_gpu_job > this (2) */
    double scale_down_factor;  /* profiler returns its node when pred_gpu_num <= this x GPU limit (5) */
    int pack_when_blocked; /* [lucid] pack_when_blocked (no) */
    char *prior;           /* [lucid] prior: "venus" (lucid_venus_prior for jobs without
                            * GPU metrics) or "none" (default) */
    char *models;          /* "files" (model outputs from files) or "online"; default: online
                            * when no [lucid] estimates are given */
    char *history;         /* throughput.csv-style series for the online forecaster */
    char *history_start;   /* calendar time of the simulation start ("YYYY-MM-DD HH:MM:SS") */
    int64_t retrain_period; /* update engine period, s (604800) */
    int32_t min_history;   /* ended jobs before the first duration model (2000) */
    int64_t estimate_period; /* arrivals estimated at the start of their day, s (86400) */
    int32_t model_bags;    /* outer bags of the online GA2Ms (8) */
    int warm_start;        /* online duration retraining from the previous model (yes) */
    /* Backfill per head-of-line policy (backfill.h), as written (NULL: unset,
     * none / model / 1.2): index LUCID_EXP_BF_FIFO.. */
    char *backfill[5], *backfill_estimate[5], *backfill_margin[5];
    /* ... backfill_window (s) and backfill_min_gpus, integers checked when
     * read (NULL: unset, 0 = no limit / every job) */
    char *backfill_window[5], *backfill_min_gpus[5];
    char *eta;             /* start-time estimates: on (default) | off */
    char *eta_hourly;      /* and re-predicted every whole hour while jobs wait: off (default) | on */
    char *stream;          /* policies one after another, each one's results written and
                            * freed before the next: auto (default) | on | off */
    /* Fair share (docs/fairshare.md), as written (NULL: unset): the weight,
     * a number in 0..10 (0, the default: off), and the usage's half-life in
     * seconds (604800) */
    char *fairshare_weight, *fairshare_half_life;
    /* The slurm policy's priority/multifactor ([slurm], docs/slurm-policy.md),
     * as written (NULL: slurm.conf's default): PriorityWeightAge,
     * PriorityWeightFairshare, PriorityWeightJobSize (numbers 0..4294967295),
     * PriorityMaxAge and PriorityCalcPeriod (seconds), PriorityFavorSmall
     * (yes / no) */
    char *slurm_weight_age, *slurm_weight_fairshare, *slurm_weight_jobsize;
    char *slurm_max_age, *slurm_calc_period, *slurm_favor_small;
    char *slurm_backfill_interval; /* bf_interval, seconds (30) */
    char *slurm_fair_tree;         /* yes / no (PriorityFlags=NO_FAIR_TREE) */
    char *slurm_billing_cpu, *slurm_billing_gpu; /* TRESBillingWeights CPU=, GRES/gpu= */
    char *slurm_cluster_nodes, *slurm_cluster_cpus; /* the job-size factor's N and C */
    char *slurm_start_latency;     /* seconds from decision to start, on average */
    /* The associations: "ACCOUNT:USER,USER ACCOUNT:USER ..." (users not
     * named are directly under the root) */
    char *slurm_accounts;
} lucid_experiment;

enum { LUCID_EXP_BF_FIFO, LUCID_EXP_BF_SJF, LUCID_EXP_BF_QSSF, LUCID_EXP_BF_LUCID,
       LUCID_EXP_BF_SLURM };
/* "fifo", "sjf", "qssf", "lucid", "slurm" */
extern const char *const lucid_exp_backfill_policies[5];

void lucid_experiment_defaults(lucid_experiment *exp);
/* Reads an experiment file on top of the current values. */
int lucid_experiment_load(lucid_experiment *exp, const char *path, lucid_error *err);
/* Same from a buffer (tests, fuzzing); relative paths resolve against `dir`. */
int lucid_experiment_load_mem(lucid_experiment *exp, const char *name, const char *dir,
                              const char *text, lucid_error *err);
/* Sets one key as if read from the file ("section", "key", "value");
 * `origin`/`line` name where it came from in messages. */
int lucid_experiment_set(lucid_experiment *exp, const char *section, const char *key,
                         const char *value, const char *dir, const char *origin, long line,
                         lucid_error *err);
void lucid_experiment_free(lucid_experiment *exp);
/* A site's slurm.conf into the slurm policy's keys (src/io/slurm_conf.c,
 * docs/slurm-policy.md): PriorityType, PriorityWeightAge / Fairshare /
 * JobSize, PriorityMaxAge, PriorityCalcPeriod, PriorityFavorSmall,
 * PriorityDecayHalfLife ([simulate] fairshare_half_life), SchedulerType
 * and SchedulerParameters' bf_interval and bf_window; other keys passed
 * over.  -1 with "FILE:LINE: KEY: reason" on a value it cannot take. */
int lucid_slurm_conf_apply(lucid_experiment *exp, const char *path, lucid_error *err);
/* A Slurm time string ("M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S") in
 * seconds; `infinite` for INFINITE / UNLIMITED; -1 if it is not one. */
int64_t lucid_slurm_time_parse(const char *text, int64_t infinite);
/* Writes every key with its current value (paths as stored: absolute when
 * the experiment was loaded with absolute paths); reading the result back
 * gives the same experiment. */
int lucid_experiment_write(FILE *out, const lucid_experiment *exp);
/* The files the experiment reads (the experiment file itself first, then
 * every path key but [simulate] out), with their key names in `what`;
 * returns how many (at most max).  Pointers into exp. */
int lucid_experiment_inputs(const lucid_experiment *exp, const char **paths, const char **what,
                            int max);
/* Adds to m what the experiment is: "semantics", every non-path setting as
 * "section.key", Lucid's knobs on one "knobs" line, and one
 * "input = <key> <absolute path> xxh64:<hash>" per input file with
 * "inputs_hash" over them all (manifest.h). */
struct lucid_manifest;
int lucid_experiment_manifest(const lucid_experiment *exp, struct lucid_manifest *m,
                              lucid_error *err);
/* The most input files lucid_experiment_inputs lists (one per path key and
 * the experiment file, with room to spare). */
#define LUCID_EXP_MAX_INPUTS 64
/* The XXH64 of every file lucid_experiment_inputs lists, in its order (a
 * file named twice is read once): 0, or -1 naming the first unreadable. */
int lucid_experiment_hash_inputs(const lucid_experiment *exp, uint64_t *hashes,
                                 lucid_error *err);
/* lucid_experiment_manifest with the inputs' hashes made before (by
 * lucid_experiment_hash_inputs, say on another thread while the inputs are
 * read); NULL: they are made here. */
int lucid_experiment_manifest_hashed(const lucid_experiment *exp, struct lucid_manifest *m,
                                     const uint64_t *hashes, lucid_error *err);

#endif
