/* features.h — the feature engineering of Lucid's three models (spec lucid.md §6).
 *
 * Each builder reads its input file and returns a dataset whose columns are
 * exactly the model's features, with the target set when the input has it,
 * row keys (the time or the job id, written by `lucid model predict`) and,
 * where the rows are ordered in time, each row's time for time-ordered
 * splits. */
#ifndef LUCID_FEATURES_H
#define LUCID_FEATURES_H

#include <stdint.h>

#include "lucid/dataset.h"
#include "lucid/ebm.h"
#include "lucid/error.h"

/* Throughput Predict Model, from a cluster_throughput.csv-style series of
 * 10-minute bins (columns time, submit_gpu_job, submit_gpu_num): 7 calendar
 * features, and for each of the two series the values 1 h, 3 h and 1 day
 * earlier, their "soft" versions (0.5 lag + 0.25 neighbours) and the mean,
 * median and standard deviation of the 6 bins ending 1 h earlier: 25
 * features.  `target` is "submit_gpu_job" or "submit_gpu_num".  *times
 * (caller frees) gets each row's time in seconds since 1970. */
lucid_dataset *lucid_features_throughput(const char *path, const char *target, int64_t **times,
                                         lucid_error *err);

/* Workload Estimate Model, from a trace (trace.csv): user, vc, gpu_num,
 * cpu_num, month, day, hour, dayofweek, amp, gpu_util, gmem_util, gmem and
 * the user's recent jobs (below); target duration (s); keys job_id; *times
 * = submit instants.  A job's end is taken as submit_time + duration:
 * the earliest it can have ended, exact for a job that did not queue
 * (Venus' trace.csv has no start or end times). */
lucid_dataset *lucid_features_duration(const char *path, int64_t **times, lucid_error *err);

/* The same features from jobs held in memory (lucidd's state store, the
 * simulator's run): one lucid_duration_job per row, strings NULL or "" when
 * missing, numbers NAN when missing (amp, the profiled metrics).  Columns,
 * names and calendar fields (UTC) are those of lucid_features_duration; the
 * target "duration" is set when `with_target`; keys are the jobs' `key`s.
 *
 * Three columns describe the user's recent jobs, from the jobs of the same
 * user that had *ended* strictly before the job's cutoff = submit_time, or
 * known_at when that is earlier (a scheduler that estimates a job before it
 * arrives knows less): user_log_last = log1p(duration of the user's most
 * recently ended job), user_log_median = log1p(median duration of the
 * user's last 10 ended jobs) — NAN without such a job — and user_ended_24h
 * = how many of the user's jobs ended in the 24 h before the cutoff.  (Log
 * scale because durations span seconds to weeks and the model bins
 * uniformly.)  A job's end is never before its submission, so its own
 * duration is never among them.  _jobs takes the history from the rows
 * themselves; _history from a separate list (e.g. every ended job, for a
 * few jobs to estimate). */
typedef struct lucid_duration_job {
    const char *key; /* job id */
    const char *user;
    const char *vc;
    double gpu_num, cpu_num;
    int64_t submit_time; /* seconds since 1970 */
    double amp, gpu_util, gmem_util, gmem;
    double duration;  /* seconds; the target */
    int64_t end_time; /* s since 1970 when it ended; <= 0: not ended (or unknown) */
    int64_t known_at; /* > 0: its estimate was made then, before submit_time */
} lucid_duration_job;

lucid_dataset *lucid_features_duration_jobs(const lucid_duration_job *jobs, size_t n,
                                            int with_target, lucid_error *err);
lucid_dataset *lucid_features_duration_history(const lucid_duration_job *jobs, size_t n,
                                               const lucid_duration_job *history,
                                               size_t nhistory, int with_target,
                                               lucid_error *err);

/* The users' histories indexed once (sorted by user, then end), for many
 * calls of _indexed: _history builds this index at every call, O(H log H)
 * for H history rows, which a daemon estimating jobs one at a time against
 * tens of thousands of finished jobs cannot pay per job.  The index points
 * at the history's `user` strings: they must stay put and unchanged while
 * it is used (build a new one when the history changes).  NULL: out of
 * memory (err set). */
typedef struct lucid_duration_history lucid_duration_history;
lucid_duration_history *lucid_duration_history_new(const lucid_duration_job *history,
                                                   size_t nhistory, lucid_error *err);
/* One more history row, `position` its index in the history (a later row
 * than any indexed: equal ends keep the history's order): the index is then
 * the one lucid_duration_history_new would build, at O(H) (a move) instead
 * of O(H log H).  A row without user, end or duration is left out, as there.
 * -1: out of memory (err set; the index is unchanged). */
int lucid_duration_history_add(lucid_duration_history *h, const lucid_duration_job *job,
                               size_t position, lucid_error *err);
void lucid_duration_history_free(lucid_duration_history *h);
/* As _history, the histories from `h`: the same rows, column for column. */
lucid_dataset *lucid_features_duration_indexed(const lucid_duration_job *jobs, size_t n,
                                               const lucid_duration_history *h, int with_target,
                                               lucid_error *err);

/* The Workload Estimate GA2M's training settings, shared by `lucid model
 * train --kind duration`, the simulator's update engine and lucidd: the
 * library defaults with Lucid's learning rate 0.01, 20 pairs and uniform
 * bins, fitted to log1p(duration) (docs/models.md: on the 14-day Venus
 * split the MAE falls from 15,348 s to 8,810 s with the users' histories,
 * to 11,193 s with the log target alone).  Callers set bags, seed,
 * threads. */
void lucid_duration_model_params(lucid_ebm_params *p);

/* Packing Analyze Model, from sharing_labels.csv and colocation_pairs.csv:
 * amp, gpu_util, gmem_util, gmem, avg_speed (mean normalised speed of the
 * workload over every measured pair it is in, either side; 0 if none) and
 * auto_label (2 if avg_speed < 0.85, 1 if < 0.95, else 0); target `label`
 * when present; keys "model/dataset/batchsize/amp". */
lucid_dataset *lucid_features_sharing(const char *labels_path, const char *pairs_path,
                                      lucid_error *err);

/* Rows whose time is < until (train) and the others (test), in order. */
int lucid_split_by_time(const lucid_dataset *ds, const int64_t *times, int64_t until,
                        lucid_dataset **train, lucid_dataset **test, lucid_error *err);

#endif
