/* import.h — public GPU traces and Slurm accounting turned into Lucid's
 * trace folder (`lucid trace import`).
 *
 * One converter per format (src/io/import_<fmt>.c) reads its sources into a
 * lucid_import: jobs with calendar times, VC sizes in GPUs, and every rule
 * that removed jobs with how many it removed.  The shared code
 * (src/io/import.c) then applies the window, writes trace.csv,
 * vc_config.csv and MANIFEST whole or not at all.  Adding a format is one
 * file plus one row of lucid_import_formats[]. */
#ifndef LUCID_IMPORT_H
#define LUCID_IMPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lucid/error.h"
#include "lucid/util.h"

#define LUCID_IMPORT_MAX_RULES 32
#define LUCID_IMPORT_WORKLOAD_COLS 8 /* model..gmem, as in Lucid's trace */

#define LUCID_IMPORT_NO_TIME INT64_MIN /* a calendar time the source does not give */

typedef struct lucid_import_job {
    int64_t job_id;
    int64_t submit;     /* calendar seconds since 1970 (UTC): the user's own submission */
    int64_t first_start; /* calendar seconds its first run started, LUCID_IMPORT_NO_TIME =
                          * not given (then no first_start/earlier_runs columns) */
    int64_t duration;   /* seconds, >= 1: the run time of all its runs (sacct's records of a
                         * requeued job, lucidd's profiling run and main run) */
    int64_t earlier_runs; /* seconds of `duration` in runs before its last one (the
                           * profiling run of a job moved to main, runs lost to requeues) */
    int64_t time_limit; /* seconds the user asked for, -1 = unknown */
    int32_t gpu_num, cpu_num;
    int32_t vc;         /* index into lucid_import.vc_names */
    int32_t user, state, gpu_type; /* string ids, -1 = none */
    int32_t source_id;  /* the source's own id when it is not an integer (string id) */
    int32_t workload[LUCID_IMPORT_WORKLOAD_COLS]; /* string ids, -1 = none */
    int64_t record;     /* source line or record (messages, stable order) */
} lucid_import_job;

typedef struct lucid_import_rule {
    const char *name; /* short id, e.g. "cpu_only" */
    const char *what; /* one sentence: what the rule removes and why */
    int64_t removed;
} lucid_import_rule;

/* Options every converter may read; unset values are 0/NULL. */
typedef struct lucid_import_options {
    int32_t gpus_per_node;  /* 0 = the format's default */
    const char *vc_by;      /* sacct: "partition" (default) or "account"; swf: "queue",
                             * "partition" or NULL (one VC) */
    const char *attempts;   /* philly: "sum" (default), "span" or "each" */
    int include_running;    /* sacct: keep still-running jobs, ended at --now */
    int64_t now;            /* calendar seconds for still-running jobs; 0 = latest time seen */
    double procs_per_gpu;   /* swf: processors per GPU (default 1) */
    int64_t since, until;   /* the window (as in lucid_import_window), for sources whose
                             * VC sizes vary over time */
} lucid_import_options;

typedef struct lucid_import {
    const char *format;
    lucid_import_job *jobs;
    size_t njobs, cap;
    lucid_strtab *strings;   /* users, states, GPU types, workload fields */
    lucid_strtab *vc_names;  /* id = VC index */
    int64_t *vc_gpus;        /* GPUs per VC (-1 = not given by the source: derived) */
    int32_t vc_cap;
    int32_t gpus_per_node;
    int64_t records;         /* jobs (or rows) read from the sources */
    lucid_import_rule rules[LUCID_IMPORT_MAX_RULES];
    int nrules;
    char *notes;             /* free text for MANIFEST (how VC sizes were chosen ...) */
    const char *licence;     /* the format's licence notice (static text) */
    /* Set by lucid_import_finish, per VC: 1 where the size was derived by
     * the sizing rule (LUCID_IMPORT_TARGET_LOAD), and each VC's offered
     * load at its size (NaN: fewer than two submission times). */
    unsigned char *vc_derived;
    double *vc_load;
    /* sacct: the associations the jobs ran under, "ACCOUNT:USER,USER ..."
     * (the slurm policy's [slurm] accounts; NULL: none); the node list:
     * its nodes and CPUs (0: none read). */
    char *slurm_accounts;
    int64_t cluster_nodes, cluster_cpus;
} lucid_import;

/* The sizing rule for a VC whose size the source does not give: the
 * fewest whole nodes at which its offered load (GPU-seconds asked for
 * over its submission window, lucid_offered_load) is at most this,
 * Venus's own (0.89) rounded up, and never fewer than its largest job
 * needs. */
#define LUCID_IMPORT_TARGET_LOAD 0.9

typedef struct lucid_import_format {
    const char *name;
    const char *summary; /* one line for --help */
    /* Reads the sources into imp (already initialised); -1 with a
     * "file:line: field: reason" error. */
    int (*read)(lucid_import *imp, const char *const *paths, int npaths,
                const lucid_import_options *opt, lucid_error *err);
    const char *licence;
} lucid_import_format;

extern const lucid_import_format lucid_import_formats[];
extern const size_t lucid_import_nformats;
const lucid_import_format *lucid_import_find(const char *name);

void lucid_import_init(lucid_import *imp, const lucid_import_format *fmt);
void lucid_import_free(lucid_import *imp);

/* ---- helpers for converters ---- */
/* Registers a rule (or finds it by name) and returns its index, -1 if full. */
int lucid_import_rule_add(lucid_import *imp, const char *name, const char *what);
void lucid_import_count(lucid_import *imp, int rule);
/* A new zeroed job (strings -1, time_limit -1) or NULL if out of memory. */
lucid_import_job *lucid_import_push(lucid_import *imp);
/* VC index by name, created with `gpus` (-1 = unknown) when new. */
int32_t lucid_import_vc(lucid_import *imp, const char *name, int64_t gpus);
int32_t lucid_import_string(lucid_import *imp, const char *s); /* -1 for "" or no memory */
/* Appends a line to the MANIFEST notes. */
int lucid_import_note(lucid_import *imp, const char *fmt, ...) LUCID_PRINTF(2, 3);
/* Checks a field is valid UTF-8 with no control characters; else a
 * "file:line: field: ..." error. */
int lucid_import_check_text(const char *s, const char *file, long line, const char *field,
                            lucid_error *err);

struct lucid_csv;
/* Looks up `n` header names; a missing one is "file:1: name: required column is missing". */
int lucid_import_columns(const struct lucid_csv *csv, const char *const *names, int *cols, int n,
                         lucid_error *err);
/* A calendar time "YYYY-MM-DD HH:MM:SS" (or with 'T', or a date) from a field;
 * a trailing UTC offset ("+08:00", "-0500", "Z") is applied, giving UTC. */
int lucid_import_time(const char *s, int64_t *out, const char *file, long line, const char *field,
                      lucid_error *err);

/* Line-oriented sources (sacct, PAI, SWF). */
/* The next line without its line end in *line: 1 a line, 0 the end, -1 (a
 * NUL byte, which strlen would silently cut, or a read error). */
int lucid_import_line(FILE *f, char **line, size_t *cap, const char *path, long *lineno,
                      lucid_error *err);
/* Splits `line` on `sep` in place: the number of fields, -1 for more than `max`. */
int lucid_import_split(char *line, char sep, char **fields, int max);
/* A per-cluster file's name without folder, `prefix` and extension
 * ("data/trace_seren.csv", "trace_" -> "seren"): the VC it stands for. */
void lucid_import_name_of(const char *path, const char *prefix, char *buf, size_t size);

/* A row's run time: its `duration` column (seconds, may be fractional), else
 * end_time - start_time; -1 when neither is there (the job never ran).
 * Column indices < 0 are absent columns. */
int lucid_import_duration(const struct lucid_csv *csv, int duration_col, int start_col,
                          int end_col, int64_t *out, lucid_error *err);

/* ---- the shared steps after reading ---- */

/* Overrides VC sizes from "NAME=GPUS,NAME=GPUS" (--vc-size); an unknown VC
 * or a size not in whole nodes is an error. */
int lucid_import_set_vc_sizes(lucid_import *imp, const char *spec, lucid_error *err);

typedef struct lucid_import_window {
    int64_t since, until; /* calendar seconds; INT64_MIN / INT64_MAX = open */
    int64_t origin;       /* trace second 0; INT64_MIN = the earliest submit read */
} lucid_import_window;

/* Removes jobs outside the window (counted as rules) and jobs of VCs
 * without GPUs; fixes VC sizes not given by the source (the largest job's
 * GPUs rounded up to whole nodes) and the origin. */
int lucid_import_finish(lucid_import *imp, lucid_import_window *win, lucid_error *err);

/* Lucid's workload columns from a trace that has them: by job id where the
 * ids match, else (with `sample`) a seeded draw among the 32 reference jobs
 * nearest in duration.  Counts go to the notes. */
int lucid_import_workload_from(lucid_import *imp, const char *trace_path, int sample,
                               uint64_t seed, lucid_error *err);

/* Writes DIR/trace.csv and DIR/vc_config.csv (to temporary names first;
 * *_tmp paths are returned for the caller to rename together with its own
 * files). */
int lucid_import_write_trace(const lucid_import *imp, const lucid_import_window *win, FILE *out);
int lucid_import_write_vcs(const lucid_import *imp, FILE *out);
/* The sources' SHA-256, computed on a thread of its own while the
 * converter reads them (on a 6.8 GB Philly log hashing is a fifth of the
 * work).  start: 0, or -1 (a source is not a regular file, e.g. a pipe
 * only the converter may read, or no thread could start: write_manifest
 * then hashes after the converter, as without this).  The caller owns the struct; wait joins and frees. */
typedef struct lucid_source_hashes {
    const char *const *paths;
    int n;
    char (*hex)[65];
    int64_t *size;
    int rc;            /* after wait: 0, or -1 with err set */
    lucid_error err;
    int running;       /* a thread was started and not yet joined */
    void *thread;      /* pthread_t, opaque here */
} lucid_source_hashes;
int lucid_source_hashes_start(lucid_source_hashes *h, const char *const *paths, int n);
/* Joins the thread (if any); 0, or -1 with *err. */
int lucid_source_hashes_wait(lucid_source_hashes *h, lucid_error *err);
void lucid_source_hashes_free(lucid_source_hashes *h);

/* MANIFEST: command, sources with sha256 and size, rules, counts, notes,
 * licence (the format's notice and any LICENSE* file beside a source).
 * `hashes`: the sources' hashes when already computed (waited for), else
 * NULL (computed here). */
int lucid_import_write_manifest(const lucid_import *imp, const lucid_import_window *win,
                                const char *command, const char *const *paths, int npaths,
                                const lucid_source_hashes *hashes, FILE *out, lucid_error *err);

/* SHA-256 of a file as 64 hex digits (+NUL). */
int lucid_sha256_file(const char *path, char hex[65], int64_t *size, lucid_error *err);
void lucid_sha256_hex(const void *data, size_t len, char hex[65]);

/* ---- converters (one file each) ---- */
int lucid_import_helios(lucid_import *imp, const char *const *paths, int npaths,
                        const lucid_import_options *opt, lucid_error *err);
int lucid_import_sacct(lucid_import *imp, const char *const *paths, int npaths,
                       const lucid_import_options *opt, lucid_error *err);
int lucid_import_itp(lucid_import *imp, const char *const *paths, int npaths,
                     const lucid_import_options *opt, lucid_error *err);
int lucid_import_philly(lucid_import *imp, const char *const *paths, int npaths,
                        const lucid_import_options *opt, lucid_error *err);
int lucid_import_swf(lucid_import *imp, const char *const *paths, int npaths,
                     const lucid_import_options *opt, lucid_error *err);
int lucid_import_acme(lucid_import *imp, const char *const *paths, int npaths,
                      const lucid_import_options *opt, lucid_error *err);
int lucid_import_lucidd(lucid_import *imp, const char *const *paths, int npaths,
                        const lucid_import_options *opt, lucid_error *err);
int lucid_import_pai(lucid_import *imp, const char *const *paths, int npaths,
                     const lucid_import_options *opt, lucid_error *err);
/* The readers over an open stream (`name` in messages): fuzzing, tests. */
int lucid_import_philly_stream(lucid_import *imp, FILE *f, const char *name,
                               const lucid_import_options *opt, lucid_error *err);
int lucid_import_sacct_stream(lucid_import *imp, FILE *f, const char *name,
                              const lucid_import_options *opt, lucid_error *err);

#endif
