/* trace.h — the workload: jobs, virtual clusters and Lucid's side files.
 *
 * A trace is read once into flat arrays (one `lucid_job` per row, in trace
 * order after a stable sort by submit time, so equal submit times keep file
 * order) and never changes afterwards; simulations keep their mutable state
 * elsewhere.  Every loader reports the first problem as
 * "file:line: field: reason". */
#ifndef LUCID_TRACE_H
#define LUCID_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lucid/error.h"
#include "lucid/util.h"

/* Submit times lie in 0..LUCID_TIME_MAX and durations in 1..LUCID_TIME_MAX
 * seconds (2^40 s, about 34,800 years: Unix timestamps fit with room to
 * spare).  The bound keeps every sum the simulator forms (submit time plus
 * waits, work, checkpoint overheads, Tiresias' 1e15 queue offset) far from
 * int64 overflow and exact in a double; the loaders refuse anything outside. */
#define LUCID_TIME_MAX ((int64_t)1 << 40)

/* One workload signature: (model, dataset, batchsize, amp). */
typedef struct lucid_workload_key {
    int32_t model;   /* string id in the trace's string table, -1 = none */
    int32_t dataset; /* string id, -1 = none */
    int32_t batchsize;
    int32_t amp;
} lucid_workload_key;

typedef struct lucid_job {
    int64_t job_id;
    int64_t submit_time; /* seconds on the trace's timeline */
    int64_t duration;    /* seconds, >= 1 */
    int32_t vc;          /* index into lucid_vcs */
    int32_t gpu_num;
    int32_t cpu_num;
    int32_t user;        /* string id, -1 if the column is absent */
    int32_t state;       /* string id, -1 if absent */
    int32_t line;        /* line in the trace file (for messages) */
    int32_t gpu_type;    /* string id, -1 if absent (carried to outputs) */
    int64_t time_limit;  /* the user's requested limit, s; -1 if absent (carried to outputs) */
    lucid_workload_key workload; /* model = -1 when the trace has no workload columns */
    double speed, gpu_util, gmem_util, gmem; /* NaN when absent */
} lucid_job;

typedef struct lucid_vcs {
    lucid_strtab *names; /* id = VC index */
    int32_t *nodes;      /* nodes per VC */
    int32_t count;
} lucid_vcs;

typedef struct lucid_trace {
    lucid_job *jobs;
    size_t njobs;
    lucid_strtab *strings; /* users, states, models, datasets */
    size_t skipped_cpu_jobs; /* rows with gpu_num == 0 (the reference drops them too) */
    int has_workload;      /* model/dataset/batchsize/amp columns present */
    int has_metrics;       /* gpu_util/gmem_util/gmem columns present */
    /* Optional columns present, carried to jobs-<policy>.csv (carry.c). */
    int has_user, has_state, has_time_limit, has_gpu_type;
    int64_t *by_id;        /* job indices sorted by job_id (lucid_trace_find) */
} lucid_trace;

/* VC configuration: header `vc,nodes` or the reference's `,num`. */
int lucid_vcs_load(lucid_vcs *vcs, const char *path, lucid_error *err);
/* Adds a VC programmatically (tests, synthetic traces).  Returns its index or -1. */
int32_t lucid_vcs_add(lucid_vcs *vcs, const char *name, int32_t nodes);
void lucid_vcs_free(lucid_vcs *vcs);
const char *lucid_vcs_name(const lucid_vcs *vcs, int32_t vc);

/* Reads a trace CSV driven by its header.  Required columns: job_id, vc,
 * gpu_num, submit_time, duration.  submit_time is integer seconds or
 * "YYYY-MM-DD HH:MM:SS" (converted to seconds since 1970).  Unknown VCs,
 * negative or zero durations, bad numbers and duplicate job ids are errors. */
int lucid_trace_load(lucid_trace *trace, const char *path, const lucid_vcs *vcs, lucid_error *err);
/* Same, with up to `threads` threads: a file of 1 MiB or more is read in
 * two halves at once when threads > 1.  The trace, and any error with its
 * line, are the same as lucid_trace_load's. */
int lucid_trace_load_threads(lucid_trace *trace, const char *path, const lucid_vcs *vcs,
                             int threads, lucid_error *err);
/* Same over a buffer (fuzzing, tests). */
int lucid_trace_load_mem(lucid_trace *trace, const char *name, const char *data, size_t len,
                         const lucid_vcs *vcs, lucid_error *err);
void lucid_trace_free(lucid_trace *trace);

/* Index of the job with this id, or -1.  (Sorted index built at load.) */
int64_t lucid_trace_find(const lucid_trace *trace, int64_t job_id);

/* ---- side files ---- */

/* Duration estimates per job (`job_id,priority`): est[i] for trace job i.
 * Jobs missing from the file are an error naming the first one. */
int lucid_estimates_load(double **est, const lucid_trace *trace, const char *path,
                         lucid_error *err);

/* Sharing labels per workload (`model,dataset,batchsize,amp,...,label`). */
typedef struct lucid_sharing_row {
    lucid_workload_key key;
    double speed, gpu_util, gmem_util, gmem;
    int32_t label;
} lucid_sharing_row;
typedef struct lucid_sharing {
    lucid_sharing_row *rows;
    size_t count;
    /* The rows by key, built by lucid_sharing_load (NULL for a table built
     * by hand: look-ups then scan the rows). */
    struct lucid_key_slot *index;
} lucid_sharing;
/* Strings are interned into the trace's table so keys compare by id. */
int lucid_sharing_load(lucid_sharing *sharing, lucid_trace *trace, const char *path,
                       lucid_error *err);
void lucid_sharing_free(lucid_sharing *sharing);
/* Row index of a workload, or -1. */
int64_t lucid_sharing_find(const lucid_sharing *sharing, const lucid_workload_key *key);

/* Measured co-location pairs (colocation_pairs.csv). */
typedef struct lucid_pair_row {
    lucid_workload_key a, b;
    double speed_a, speed_b, gpu_util, gmem;
} lucid_pair_row;
typedef struct lucid_pairs {
    lucid_pair_row *rows;
    size_t count;
    /* The rows by (a, b), built by lucid_pairs_load (NULL for a table built
     * by hand: look-ups then scan the rows). */
    struct lucid_pair_slot *index;
} lucid_pairs;
int lucid_pairs_load(lucid_pairs *pairs, lucid_trace *trace, const char *path, lucid_error *err);
void lucid_pairs_free(lucid_pairs *pairs);
/* Co-located speeds of a and b.  Returns 1 if found (in either order), 0 if
 * not (speeds left unchanged). */
int lucid_pairs_speed(const lucid_pairs *pairs, const lucid_workload_key *a,
                      const lucid_workload_key *b, double *speed_a, double *speed_b);

/* Throughput forecast: 10-minute rows with `time`, `pred_gpu_job`, `pred_gpu_num`. */
typedef struct lucid_forecast {
    int64_t *offset; /* seconds since the first row */
    double *pred_gpu_job;
    double *pred_gpu_num;
    size_t count;
} lucid_forecast;
int lucid_forecast_load(lucid_forecast *fc, const char *path, lucid_error *err);
void lucid_forecast_free(lucid_forecast *fc);
/* A deep copy of src into dst (dst's old arrays are not freed). */
int lucid_forecast_copy(lucid_forecast *dst, const lucid_forecast *src, lucid_error *err);


/* ---- synthetic traces (synth.c) ---- */
typedef struct lucid_synth_config {
    int64_t jobs;      /* number of jobs */
    int32_t nodes;     /* total nodes over all VCs */
    int32_t vcs;       /* number of VCs */
    int32_t gpus_per_node;
    double load;       /* offered load: GPU-seconds asked per GPU-second available */
    double estimate_noise; /* sigma of the log-normal noise on estimates */
    uint64_t seed;
} lucid_synth_config;

/* Writes a trace.csv, a vc_config.csv and an estimates.csv to the three
 * streams: jobs drawn (GPU count, duration and workload together) from
 * `base`, Poisson arrivals at the rate that gives the target load, VC sizes
 * in the base trace's proportions.  Same seed, same files.  The caller owns
 * the streams and checks them for write errors (lucid trace synth writes
 * them through lucid_outfile with its experiment.ini, all renamed together). */
int lucid_synth_write_files(const lucid_synth_config *cfg, const lucid_trace *base,
                            const lucid_vcs *base_vcs, FILE *trace, FILE *vcs, FILE *estimates,
                            lucid_error *err);
/* The VC sizes (nodes, cfg->vcs of them, largest first) those files get;
 * NULL if out of memory, else the caller frees. */
int32_t *lucid_synth_vc_sizes(const lucid_synth_config *cfg, const lucid_vcs *base_vcs);
/* The same into dir/trace.csv, dir/vc_config.csv and dir/estimates.csv,
 * written whole or not at all (lucid_outfile). */
int lucid_synth_write(const lucid_synth_config *cfg, const lucid_trace *base,
                      const lucid_vcs *base_vcs, const char *dir, lucid_error *err);

#endif
