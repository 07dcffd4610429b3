/* online.h — Lucid's models inside the scheduler (issue 4): the sharing
 * tree predicts each job's sharing score from the metrics the profiler
 * measured, the throughput GA2Ms forecast load from the history before the
 * simulated window (and are updated as the window unfolds), and the update
 * engine retrains the duration GA2M every period on the jobs that have
 * ended so far — never on a job that has not ended. */
#ifndef LUCID_ONLINE_H
#define LUCID_ONLINE_H

#include <stdint.h>

#include "lucid/ebm.h"
#include "lucid/error.h"
#include "lucid/sched.h"
#include "lucid/trace.h"

typedef struct lucid_online_config {
    const char *trace_path;      /* the trace, for the duration model's features */
    const char *sharing_labels;  /* sharing_labels.csv (training labels) */
    const char *colocation;      /* colocation_pairs.csv */
    const char *history;         /* throughput.csv-style series, or NULL (no forecast) */
    int64_t window_start;        /* calendar time (s since 1970) of the simulation start */
    int64_t period;              /* retraining period, s (604800) */
    /* Arrivals are estimated at the start of the estimate period they
     * arrive in, with the current model and the users' histories known
     * then (86400; 0 or more than `period`: `period`). */
    int64_t estimate_period;
    size_t min_history;          /* ended jobs needed before the first model (2000) */
    int bags;                    /* EBM outer bags (8) */
    uint64_t seed;
    /* 1: every retraining of the duration and throughput models starts
     * from scratch; 0 (default): from the previous model
     * (lucid_ebm_train_warm), several times faster, within
     * docs/online.md's tolerance. */
    int full_retrain;
    /* The throughput forecast of this history, window_start, period, bags
     * and seed, built beforehand (lucid_online_forecasts) and copied into
     * the run; NULL: the run trains its own. */
    const lucid_forecast *forecast;
} lucid_online_config;

typedef struct lucid_online lucid_online;

/* Lucid's throughput GA2M settings (learning rate 0.1, quantile binning,
 * 10 pairs) with the config's bags and seed. */
void lucid_online_forecast_params(const lucid_online_config *cfg, lucid_ebm_params *p);

/* Trains the sharing tree and the forecasters; fills `share` (per trace job)
 * and `forecast` (rows from the window start, for the packing switch and
 * the profiler). */
lucid_online *lucid_online_new(const lucid_online_config *cfg, const lucid_trace *trace,
                               int32_t *share, lucid_forecast *forecast, lucid_error *err);
void lucid_online_free(lucid_online *o);

/* The throughput forecasts lucid_online_new would build for each of
 * `periods` (cfg->period and cfg->forecast are ignored): per target, the
 * model at the window start trained from scratch once for all periods,
 * each later model warm-started from its period's model before it
 * (lucid_ebm_train_warm), equal periods sharing one chain.  The forecast
 * does not depend on the schedule, so runs that differ only in other knobs
 * can share it.  out[i] (freed with lucid_forecast_free) is bit-identical
 * to a build for periods[i] alone; all are empty when cfg->history is
 * NULL.  Returns 0, or -1 with every out[i] empty. */
int lucid_online_forecasts(const lucid_online_config *cfg, const int64_t *periods, int nperiods,
                           lucid_forecast *out, lucid_error *err);

/* The simulator's step between two calls of lucid_online_estimate: the
 * estimate period, or the retrain period when that is shorter or the
 * estimate period is unset. */
int64_t lucid_online_step(const lucid_online_config *cfg);

/* Cold start: until the first duration model, every job's estimate is this
 * one constant (s), so Lucid orders those jobs by their GPUs alone. */
#define LUCID_ONLINE_COLD_ESTIMATE 3600.0

/* The update engine at time `now` (trace timeline), called once per step
 * (lucid_online_step) from the simulation start: trains the duration model
 * on the jobs with run[i].end_time in [0, now) at the first call with at
 * least min_history of them, and then at the first call of every later
 * retrain period (periods counted from the first call; warm-started from
 * the model before unless full_retrain) — cold start until then: every
 * estimate is LUCID_ONLINE_COLD_ESTIMATE — then writes estimates for the
 * jobs listed, from the users' histories known at `now`.  With no jobs
 * listed nothing is trained (no job would use that model). */
int lucid_online_estimate(lucid_online *o, const lucid_jobresult *run, int64_t now,
                          const int32_t *jobs, size_t njobs, double *estimates, lucid_error *err);
/* Explanations: remember why trace job `job` got its estimate (the
 * duration model's intercept and largest additive terms, or the cold-start
 * rule) when it is estimated; lucid_online_why() returns that text ("" if
 * the job was not estimated). */
void lucid_online_watch(lucid_online *o, int64_t job);
const char *lucid_online_why(const lucid_online *o);
/* How many times the duration model was trained, and on how many jobs last. */
int lucid_online_trainings(const lucid_online *o, size_t *last_rows);

#endif
