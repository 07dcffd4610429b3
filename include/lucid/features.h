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
 * cpu_num, month, day, hour, dayofweek, amp, gpu_util, gmem_util, gmem;
 * target duration (s); keys job_id; *times = submit instants. */
lucid_dataset *lucid_features_duration(const char *path, int64_t **times, lucid_error *err);

/* The same features from jobs held in memory (lucidd's state store): one
 * lucid_duration_job per row, strings NULL or "" when missing, numbers NAN
 * when missing (amp, the profiled metrics).  Columns, names and calendar
 * fields (UTC) are those of lucid_features_duration; the target "duration"
 * is set when `with_target`; keys are the jobs' `key`s. */
typedef struct lucid_duration_job {
    const char *key; /* job id */
    const char *user;
    const char *vc;
    double gpu_num, cpu_num;
    int64_t submit_time; /* seconds since 1970 */
    double amp, gpu_util, gmem_util, gmem;
    double duration; /* seconds; the target */
} lucid_duration_job;

lucid_dataset *lucid_features_duration_jobs(const lucid_duration_job *jobs, size_t n,
                                            int with_target, lucid_error *err);

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
