/* models.h — lucidd's models (issue 5): the duration GA2M that the update
 * engine retrains on the jobs that finished, the sharing tree read from a
 * model file, and the load forecast in use; each is recorded as a version
 * in the state store's `models` table, so `lucid status` says what produced
 * the numbers.  No Slurm and no clock: the caller passes the jobs and the
 * time, so tests drive the update engine directly (tests/test_lucidd_models.c).
 *
 * Training runs on a worker thread on a copy of the finished jobs' features
 * and never touches the state store; the caller's thread installs the
 * result (lucidd_models_update), so a decision never waits for training and
 * never sees half a model. */
#ifndef LUCIDD_MODELS_H
#define LUCIDD_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"
#include "lucid/error.h"
#include "lucid/gpumetrics.h"
#include "lucid/state.h"

typedef struct lucidd_models_config {
    double retrain_period_s;   /* between trainings (604800: weekly, as Lucid) */
    size_t min_history;        /* finished jobs before the first model (100) */
    int bags;                  /* EBM outer bags (8) */
    uint64_t seed;             /* 42 */
    const char *sharing_model; /* CART file (`lucid model train --kind sharing`), or NULL */
    const char *vc;            /* the duration model's `vc` feature: the main partition */
    size_t history_max;        /* finished jobs kept as training rows and users' histories
                                * (the newest); 0: LUCIDD_MODELS_HISTORY_MAX */
} lucidd_models_config;

#define LUCIDD_MODELS_HISTORY_MAX 50000

/* lucidd_models is declared in daemon.h (the daemon holds one). */

/* Reads the newest duration model from the state store (if any), loads and
 * checks the sharing tree, and records each model's version.  A sharing
 * file that is unreadable, not a tree, or asks for features lucidd cannot
 * give fails with one line naming the file.  `now` stamps new versions. */
lucidd_models *lucidd_models_open(const lucidd_models_config *cfg, lucid_state *state,
                                  int64_t now, lucid_error *err);
/* Waits for a training in progress, then frees everything. */
void lucidd_models_close(lucidd_models *m);
/* A problem found at open that did not stop it (a stored model that could
 * not be read: the heuristic is used until the next training), or "". */
const char *lucidd_models_warning(const lucidd_models *m);

/* A job that ended (told once, when it ends or when lucidd loads it from
 * the state store): if it finished (phase done or done-in-profiler with a
 * measured run) its features become a training row and part of its user's
 * history.  The models keep the newest history_max such rows, so the
 * engine may forget ended jobs.  1 kept, 0 not a finished job, -1 out of
 * memory. */
int lucidd_models_add_finished(lucidd_models *m, const lucidd_job *job);
size_t lucidd_models_history_max(const lucidd_models *m);
/* The update engine, once per tick: installs a model the worker finished
 * (the next version, persisted with its file text) and starts a training
 * when one is due — the first as soon as min_history jobs have finished,
 * then every retrain period after the previous one started, on the rows
 * lucidd_models_add_finished kept.  No work proportional to the jobs when
 * nothing is due.  1: a new duration model is in use (refresh the held
 * jobs' estimates); 0: nothing changed; -1: error (a failed training is
 * retried a period later). */
int lucidd_models_update(lucidd_models *m, int64_t now, lucid_error *err);
/* Waits until no training runs (tests, shutdown). */
void lucidd_models_wait(lucidd_models *m);
int lucidd_models_training(const lucidd_models *m);

/* The job's duration estimate: the duration model's prediction (at least
 * 1 s) when there is a model, else `heuristic_s`.  *version: the model
 * version behind it (0: the heuristic).  Not const: the first estimate
 * after a job finished indexes the finished jobs again. */
double lucidd_models_estimate(lucidd_models *m, const lucidd_job *job, double heuristic_s,
                              int64_t *version);
/* The same for n jobs at once, one table and one prediction (a new model
 * re-estimates every held job): estimate_s[i] holds job i's heuristic on
 * entry and its estimate on return, exactly as lucidd_models_estimate
 * gives it; version[i] as *version there. */
void lucidd_models_estimate_many(lucidd_models *m, const lucidd_job *const *jobs, size_t n,
                                 double *estimate_s, int64_t *version);
/* Why the job's estimate (made by `version`) is what it is: the model's
 * intercept and largest additive terms, or the heuristic's rule. */
void lucidd_models_explain(lucidd_models *m, const lucidd_job *job, int64_t version,
                           char *buf, size_t size);
/* Sharing score 0/1/2 from a profile: the tree's prediction, or the
 * utilisation heuristic without a tree. */
int lucidd_models_sharing(const lucidd_models *m, const lucid_gpu_sample *profile);
/* Current version of "duration", "sharing" or "forecast". */
int64_t lucidd_models_version(const lucidd_models *m, const char *name);

#endif
