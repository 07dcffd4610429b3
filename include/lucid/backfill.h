/* backfill.h — backfill with reservations for the head-of-line policies
 * (FIFO, SJF, QSSF, Lucid while its packing is off), and the availability
 * profile it shares with the start-time estimates (eta.h).
 *
 * EASY: the first waiting job that does not fit holds a reservation — the
 * earliest time the placer can put it on GPUs that the running jobs free by
 * their estimated ends — and a later job starts now only if it fits on GPUs
 * the reservation does not need during its own estimated run (its estimate
 * times the safety margin).  Conservative: every waiting job that cannot
 * start holds one, in queue order, and a job starts only if it delays none.
 * Reservations are recomputed at every decision from the current estimates,
 * so when a running job outlives its estimate the reservation moves later;
 * the simulator counts such moves.  `none` (the default) leaves the policy's
 * pass untouched, so every existing result is unchanged. */
#ifndef LUCID_BACKFILL_H
#define LUCID_BACKFILL_H

#include <stddef.h>
#include <stdint.h>

#include "lucid/sched.h"

enum { LUCID_BACKFILL_NONE = 0, LUCID_BACKFILL_EASY = 1, LUCID_BACKFILL_CONSERVATIVE = 2 };
enum { LUCID_BACKFILL_EST_MODEL = 0, LUCID_BACKFILL_EST_TIME_LIMIT = 1 };

typedef struct lucid_backfill_config {
    int mode;        /* LUCID_BACKFILL_* */
    int estimate;    /* LUCID_BACKFILL_EST_*: learned estimates, or users' time limits */
    double margin;   /* a job's estimate is multiplied by this when it is placed (1.2) */
    /* Look-ahead, s: a job gets a reservation only if its earliest start is
     * at most this far from now (0: no limit).  Once given, a reservation
     * is kept until its job starts, wherever it moves. */
    int64_t window;
    /* Only jobs of at least this many GPUs hold reservations (0: all); the
     * others start where they delay none and otherwise wait in the
     * policy's order, passed over, never holding the queue. */
    int32_t min_gpus;
} lucid_backfill_config;

/* The keys' ranges (the simulator's `backfill_window` / `backfill_min_gpus`,
 * lucidd's --backfill-window / --backfill-min-gpus). */
#define LUCID_BACKFILL_WINDOW_MAX 2147483647
#define LUCID_BACKFILL_MIN_GPUS_MAX 100000

/* Whether a job of `gpus` GPUs may be given a reservation: at least
 * cfg->min_gpus, and while packing (Lucid with its switch on) too large to
 * share GPUs — a job that could waits for a partner instead.  The rule of
 * the simulator's pass and of lucidd's (src/daemon/decide.c). */
int lucid_backfill_reservable(const lucid_backfill_config *cfg, int32_t gpus, int packing);
/* Whether a job whose earliest start is `start` may be given a new
 * reservation at `now`: within cfg->window (0: always).  A reservation
 * already held is kept whatever this says (both passes place those jobs
 * first and do not ask). */
int lucid_backfill_in_window(const lucid_backfill_config *cfg, int64_t now, int64_t start);

/* Parses "none|easy|conservative" / "model|time_limit"; -1 if unknown. */
int lucid_backfill_mode_parse(const char *text);
int lucid_backfill_estimate_parse(const char *text);
const char *lucid_backfill_mode_name(int mode);

typedef struct lucid_backfill_stats {
    int64_t reservations;  /* jobs that held a reservation at least once */
    int64_t moved_later;   /* a job's reservation recomputed more than 60 s later */
    int64_t moved_earlier; /* ... more than 60 s earlier */
    int64_t backfilled;    /* jobs started while a job ahead of them held a reservation */
} lucid_backfill_stats;

/* ---- the availability profile: free GPUs per node over future time ---- */
typedef struct lucid_profile {
    int64_t *times;   /* segment starts, increasing; times[0] = now */
    int32_t *ord;     /* segment k's row in freec (rows are appended, never moved) */
    int32_t *freec;   /* m rows of nslots free counts */
    int64_t *total;   /* per row: its free GPUs summed (a quick "cannot fit") */
    int32_t *whole;   /* per row: its nodes with every GPU free (the same, for a
                       * job the consolidated placer puts on whole nodes) */
    size_t m, cap_times, cap_ord, cap_free, cap_total, cap_whole;
    /* Running jobs' estimated ends, in time order; rows for them are made
     * only when a search reaches that far (a VC of 600 nodes and 1,000
     * running jobs would otherwise copy 600 counts 1,000 times per build). */
    struct lucid_profile_end {
        int64_t time;
        int32_t job;
    } *ends;
    size_t nends, next_end, cap_ends;
    const lucid_sched *src; /* the state the ends belong to */
    int32_t nslots, gpus_per_node;
    lucid_cluster hypo; /* a cluster with a window's free counts, for the placer */
    int hypo_ready, hypo_synced; /* synced: its nodes alive as at the last build */
    const lucid_placer_ops *consolidate; /* the placer fit_at applies itself, not on hypo */
    int32_t *winmin;
    size_t cap_winmin;
    lucid_alloc *alloc;
    int cap_alloc;
} lucid_profile;

void lucid_profile_free(lucid_profile *p);
/* The running jobs' ends not yet applied (their records are read when a
 * search reaches them). */
void lucid_profile_held_jobs(const lucid_profile *p, lucid_job_visit visit, void *ctx);
/* Remaining time of running job `job` (s, >= 1) as the caller estimates it. */
typedef int64_t (*lucid_remaining_fn)(void *ctx, const lucid_sched *s, int32_t job);
/* Builds the profile from the cluster now and the running jobs' estimated
 * ends.  Returns 0, or -1 (out of memory). */
int lucid_profile_build(lucid_profile *p, const lucid_sched *s, lucid_remaining_fn remaining,
                        void *ctx);
/* Builds np (<= LUCID_PROFILE_MAX_MANY) profiles of the same state at once,
 * one per scenario: `remaining` writes job's time left in each (out[0..np)),
 * so what the scenarios share (the job's estimate, where it falls in a
 * table) is worked out once.  Profile k is what lucid_profile_build gives
 * with out[k] as the remaining time. */
#define LUCID_PROFILE_MAX_MANY 3
typedef void (*lucid_remaining_many_fn)(void *ctx, const lucid_sched *s, int32_t job,
                                        int64_t *out);
int lucid_profile_build_many(lucid_profile *const *p, int np, const lucid_sched *s,
                             lucid_remaining_many_fn remaining, void *ctx);
/* The first segment k with times[k] >= not_before where a job of `gpus`
 * GPUs fits, with the placer, on the GPUs free throughout [times[k],
 * times[k] + duration); its GPUs in p->alloc (count in *nalloc).  At k = 0
 * the GPUs are real free GPUs of s's cluster.  Returns k, or -1 if none. */
long lucid_profile_fit(lucid_profile *p, const lucid_sched *s, int32_t gpus, int64_t duration,
                       int64_t not_before, int *nalloc);
/* The same test at segment 0 only (now): 1 fits (GPUs in p->alloc), 0
 * not, -1 out of memory.  A backfill candidate needs no later start, and
 * the whole search costs a scan of the profile's future per job. */
int lucid_profile_fits_now(lucid_profile *p, const lucid_sched *s, int32_t gpus,
                           int64_t duration, int *nalloc);
/* Takes p->alloc[0..n) from segment k for `duration` seconds. */
int lucid_profile_reserve(lucid_profile *p, long k, int64_t duration, int nalloc);
/* Takes alloc[0..n) (GPUs a fit returned earlier) from time `from` (>=
 * times[0]) for `duration` seconds: a packed pair holds its GPUs until the
 * later of the two ends, so a partner that outlives the job it joined keeps
 * them longer. */
int lucid_profile_reserve_from(lucid_profile *p, int64_t from, int64_t duration,
                               const lucid_alloc *alloc, int nalloc);

/* ---- per-VC backfill state (lucid_sched.backfill) ---- */
typedef struct lucid_backfill {
    lucid_backfill_config cfg;
    const double *estimate; /* per job, s (NULL: the policy's priority / GPUs) */
    int64_t *reserved_at;   /* per job: its latest reservation, -1 (shared across VCs;
                             * each VC writes only its own jobs) */
    lucid_backfill_stats stats;
    lucid_profile prof;
} lucid_backfill;

/* The duration the scheduler assumes for `job` (s, >= 1): the users' time
 * limit in time_limit mode where the trace has one, else the estimate the
 * policy has (QSSF/Lucid: priority / GPUs), else `estimate`, else 1000. */
double lucid_backfill_job_estimate(const lucid_sched *s, const lucid_backfill *bf, int32_t job);
/* A running job's estimated time left (s, >= 1) as backfill plans with it
 * (a lucid_remaining_fn; ctx is the const lucid_backfill *): its estimate
 * less the time it has run, or, once it has outrun it, half as long again
 * as it has run (at least a minute).  lucidd's live reservations use it too. */
int64_t lucid_backfill_remaining(void *ctx, const lucid_sched *s, int32_t job);
/* The decision pass with backfill over jobs[0..n) in queue order (called by
 * lucid_sched_start_in_order when s->backfill is set).  With `pack` (Lucid
 * while its packing is on) every job first tries a partner's GPUs, which
 * takes no free GPU and so delays no reservation; on free GPUs the rules
 * above apply, so a large job that packing would pass over forever holds
 * a reservation instead.  Returns how many started; *stopped_at = first
 * position not started. */
size_t lucid_backfill_pass(lucid_sched *s, const int32_t *jobs, size_t n,
                           int (*pack)(lucid_sched *s, int32_t job), size_t *stopped_at);
void lucid_backfill_free(lucid_backfill *bf);
/* Where waiting `job` is reserved now, as the last pass placed it (the jobs
 * holding reservations ahead of it first): *at and the node labels
 * ("n3,n4") in `nodes`.  Returns 1, or 0 when it holds no reservation. */
int lucid_backfill_reservation(const lucid_sched *s, int32_t job, int64_t *at, char *nodes,
                               size_t size);

#endif
