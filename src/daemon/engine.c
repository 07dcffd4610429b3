/* engine.c — lucidd's tick: read Slurm, move each job through its phases,
 * enforce the profiling time limit, ask decide.c what starts, apply it.
 *
 * Lucid's picture of the cluster is Slurm's: used GPUs per node come from
 * Slurm (with detail), less what lucid released that Slurm has not started
 * yet; a job lucid released is "releasing" (with Slurm's reason) until Slurm
 * runs it.  Jobs Slurm itself would not run yet (a dependency, --begin, the
 * owner's own hold) wait without taking capacity.  Requests lucid cannot
 * place (no node could ever hold them) are handed back to Slurm's own
 * scheduler untouched, so Slurm's reason shows.
 *
 * Exactly once: a decision is written (with the job's new phase) before it
 * is applied to Slurm and acknowledged after; a restart reconciles the
 * unacknowledged ones (engine_reconcile).  A requeue is sent only after
 * Slurm confirms, just then, that the job still runs in the profiler.  The
 * profiling limit counts only time lucid watched the job run with Slurm
 * answering, and none for a short grace after Slurm comes back (its view of
 * jobs that ended during an outage settles first).  Lucid's hold is an
 * operator's hold, which a job's owner cannot lift behind lucid's back.
 *
 * Estimates and sharing scores come from models.c (docs/live.md). */
#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "decide.h"
#include "lucid/backfill.h"
#include "lucid/fairshare.h"
#include "lucid/util.h"
#include "models.h"
#include "slurm_io.h"

/* No profiling limit is enforced this long after Slurm answers again or
 * slurmctld restarts: a job that ended meanwhile is listed as running until
 * its step daemon's completion message gets through, and slurmstepd retries
 * that message every 15 s plus a connect timeout (slurmstepd/mgr.c,
 * RETRY_DELAY); measured 13 s after a restart on the lab cluster. */
#define GRACE_AFTER_OUTAGE_S 60.0
/* How long a tick waits for slurmctld to accept a connection. */
#define REACH_TIMEOUT_MS 300
/* A waiting job's AdminComment is rewritten at most this often, and at most
 * this many per tick (each is one RPC to slurmctld). */
#define COMMENT_PERIOD_S 30.0
#define COMMENTS_PER_TICK 64
#define COMMENT_TIME_S 0.05
/* At most this much of a tick turns new jobs' intake holds (the job_submit
 * plugin's, which its owner could lift) into lucid's operator holds, one RPC
 * each; the rest wait for the next ticks under the plugin's guard (hold). */
#define HOLD_TIME_S 0.1
/* Array tasks split into jobs of their own per tick. */
#define SPLITS_PER_TICK 256

/* Within LUCIDD_ACCOUNTING_GRACE_S of the job's submission or requeue (by
 * Slurm's SubmitTime, which a requeue resets). */
static int in_accounting_grace(const lucidd_job *job, time_t now)
{
    int64_t age = (int64_t)now - job->slurm_submit;
    return job->slurm_submit > 0 && age < LUCIDD_ACCOUNTING_GRACE_S && age > -LUCIDD_ACCOUNTING_GRACE_S;
}

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Jobs by id: a hash index over the table (ids are unique and never
 * removed), so a tick over 10,000 Slurm jobs costs no 10,000^2 scan. */
static size_t slot_of(uint32_t job_id, size_t nslots)
{
    return (size_t)((job_id * 2654435761u) & (uint32_t)(nslots - 1));
}

lucidd_job *engine_find(lucidd *d, uint32_t job_id)
{
    if (!d->nslots)
        return NULL;
    for (size_t k = slot_of(job_id, d->nslots);; k = (k + 1) & (d->nslots - 1)) {
        uint32_t at = d->slots[k];
        if (!at)
            return NULL;
        if (d->jobs[at - 1].rec.job_id == job_id)
            return &d->jobs[at - 1];
    }
}

static void index_insert(lucidd *d, size_t i)
{
    size_t k = slot_of(d->jobs[i].rec.job_id, d->nslots);
    while (d->slots[k])
        k = (k + 1) & (d->nslots - 1);
    d->slots[k] = (uint32_t)(i + 1);
}

static int index_grow(lucidd *d, size_t need)
{
    if (need * 2 <= d->nslots)
        return 0;
    size_t nslots = d->nslots ? d->nslots : 1024;
    while (need * 2 > nslots)
        nslots *= 2;
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return -1;
    free(d->slots);
    d->slots = slots;
    d->nslots = nslots;
    for (size_t i = 0; i < d->njobs; i++)
        index_insert(d, i);
    return 0;
}

/* The new job's id must be set by the caller before the next lookup:
 * add_job indexes it under `job_id`. */
static lucidd_job *add_job(lucidd *d, uint32_t job_id)
{
    if (LUCID_GROW(d->jobs, d->cap, d->njobs + 1) < 0 || index_grow(d, d->njobs + 1) < 0)
        return NULL;
    lucidd_job *job = &d->jobs[d->njobs++];
    memset(job, 0, sizeof *job);
    job->rec.job_id = job_id;
    job->fairshare = -1;
    index_insert(d, d->njobs - 1);
    return job;
}

void engine_tune_malloc(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

void engine_free(lucidd *d)
{
    lucidd_writer_free(d->writer); /* no-op when engine_stop_io ran */
    d->writer = NULL;
    lucidd_reader_free(d->reader);
    d->reader = NULL;
    free(d->nodes);
    d->nodes = NULL;
    slurm_io_fairshare_cancel(&d->share_read);
    slurm_io_limits_cancel(&d->limits_read);
    limits_free(&d->limits);
    limits_free(&d->limits_next);
    d->limits_stage = 0;
    free(d->shares);
    d->shares = NULL;
    d->nshares = 0;
    lucid_eta_table_free(&d->eta_table);
    free(d->recent_ratios);
    d->recent_ratios = NULL;
    d->nrecent = d->recent_next = 0;
    slurm_io_job_list_free(&d->listing);
    free(d->jobs);
    free(d->slots);
    d->jobs = NULL;
    d->slots = NULL;
    d->njobs = d->cap = d->nslots = 0;
}

/* Slurm taken as down: the API says so and the next ticks probe it. */
static void slurm_down(lucidd *d)
{
    if (!d->slurm_down_since)
        d->slurm_down_since = time(NULL);
    d->slurm_up = 0;
    d->slurm_errors++;
}

/* A call to slurmctld failed in the middle of a tick.  If slurmctld stopped
 * answering, the tick makes no more calls (each would wait libslurm's
 * connect retries, MessageTimeout - 1 s) and the next ticks probe it.
 * 1 when Slurm is taken as down. */
static int slurm_lost(lucidd *d)
{
    if (!d->slurm_up)
        return 1;
    if (slurm_io_reachable(REACH_TIMEOUT_MS))
        return 0;
    slurm_down(d);
    return 1;
}

static void note_error(lucidd *d, const lucid_error *err)
{
    snprintf(d->last_error, sizeof d->last_error, "%s", err->msg);
    lucidd_log_level(LOG_ERR, "%s", err->msg);
    if (strncmp(err->msg, "slurm: ", 7) == 0)
        slurm_lost(d);
}

/* Persists the job; a store failure is logged, the daemon keeps serving. */
static void save(lucidd *d, lucidd_job *job)
{
    lucid_error err = {{0}};
    job->dirty = job->reason_dirty = 0;
    job->stored_at = monotonic_s();
    if (lucid_state_put_job(d->state, &job->rec, &err) < 0)
        note_error(d, &err);
}

/* What changes every tick for many jobs (profiling time, reasons) is
 * written once per tick in one transaction: one fsync, not one per job; a
 * change of reason alone at most every ENGINE_REASON_STORE_S, and at most
 * ENGINE_REASON_STORE_MAX of those a tick.  The number of records written. */
static long flush(lucidd *d)
{
    lucid_error err = {{0}};
    int began = 0;
    long written = 0;
    int reasons_left = d->reasons_per_flush > 0 ? d->reasons_per_flush : ENGINE_REASON_STORE_MAX;
    double now_mono = monotonic_s();
    for (size_t i = 0; i < d->njobs; i++) {
        lucidd_job *job = &d->jobs[i];
        if (!job->dirty) {
            if (!job->reason_dirty || now_mono - job->stored_at < ENGINE_REASON_STORE_S ||
                reasons_left == 0)
                continue;
            reasons_left--;
        }
        if (!began && lucid_state_begin(d->state, &err) < 0)
            break;
        began = 1;
        job->dirty = job->reason_dirty = 0;
        job->stored_at = now_mono;
        written++;
        if (lucid_state_put_job(d->state, &job->rec, &err) < 0) {
            lucid_state_rollback(d->state);
            note_error(d, &err);
            return written;
        }
    }
    if (began && lucid_state_commit(d->state, &err) < 0)
        note_error(d, &err);
    return written;
}

static void set_phase(lucidd_job *job, lucid_phase phase, const char *reason)
{
    if (phase != LUCID_PHASE_MAIN_QUEUE)
        job->ahead = 0; /* released ahead only while it waits there */
    if (phase == LUCID_PHASE_RUNNING || phase == LUCID_PHASE_PROFILING)
        job->was_released = 0;
    if (job->rec.phase != phase) {
        lucidd_log("job %u: %s -> %s (%s)", job->rec.job_id, lucid_phase_name(job->rec.phase),
                   lucid_phase_name(phase), reason);
        job->rec.phase = phase;
        job->rec.phase_since = time(NULL);
    }
    snprintf(job->rec.reason, sizeof job->rec.reason, "%s", reason);
    if (lucid_phase_is_final(phase) && !job->rec.end_time)
        job->rec.end_time = time(NULL);
}

static void set_reason(lucidd *d, lucidd_job *job, const char *reason)
{
    (void)d;
    if (strcmp(job->rec.reason, reason) != 0) {
        snprintf(job->rec.reason, sizeof job->rec.reason, "%s", reason);
        job->reason_dirty = 1;
    }
}

/* Fault injection for the recovery tests: with LUCIDD_TEST_CRASH_AFTER_RECORD=N
 * the daemon kills itself right after recording its Nth decision, before
 * applying it — exactly "a release whose acknowledgement was lost". */
static void maybe_crash_after_record(void)
{
    static long remaining = -1;
    if (remaining < 0) {
        const char *env = getenv("LUCIDD_TEST_CRASH_AFTER_RECORD");
        remaining = env ? atol(env) : 0;
        if (remaining <= 0)
            remaining = 0;
    }
    if (remaining > 0 && --remaining == 0) {
        lucidd_log("test crash after recording a decision (LUCIDD_TEST_CRASH_AFTER_RECORD)");
        raise(SIGKILL);
    }
}

/* Records a decision before it is applied; returns its id or -1. */
static int64_t record_decision(lucidd *d, lucidd_job *job, const char *action,
                               const char *target, const char *reason)
{
    lucid_decision_record rec = {.at = time(NULL), .job_id = job->rec.job_id};
    snprintf(rec.action, sizeof rec.action, "%s", action);
    snprintf(rec.target, sizeof rec.target, "%s", target);
    snprintf(rec.reason, sizeof rec.reason, "%s", reason);
    lucid_error err = {{0}};
    int64_t id = -1;
    if (lucid_state_begin(d->state, &err) == 0) {
        id = lucid_state_add_decision(d->state, &rec, &err);
        if (id > 0 && lucid_state_put_job(d->state, &job->rec, &err) == 0 &&
            lucid_state_commit(d->state, &err) == 0) {
            maybe_crash_after_record();
            return id;
        }
        lucid_state_rollback(d->state);
    }
    note_error(d, &err);
    return -1;
}

static void ack(lucidd *d, int64_t id)
{
    lucid_error err = {{0}};
    if (id > 0 && lucid_state_ack_decision(d->state, id, &err) < 0)
        note_error(d, &err);
    d->decisions_applied++;
}

/* ---- writes off the tick (writer.h) ----
 * A start or a move of a job inside Slurm's accounting window (its
 * submission or requeue seconds ago) is made on the writer's thread: there
 * slurmctld may hold it a second, and the tick goes on.  Until its outcome
 * is taken (at the next tick, before Slurm's jobs are read), lucid's record
 * of the job is what it decided and the job is not judged on a listing
 * that may predate the write (track); a write lucid makes on the tick to a
 * job with writes off it waits for them first (settle_writes), so Slurm
 * gets a job's writes in the order lucid made them. */

static int writes_pending(lucidd *d, const lucidd_job *job)
{
    return d->writer && lucidd_writer_pending(d->writer, job->rec.job_id);
}

/* This job's next start, release ahead or move is made off the tick: any
 * (--async-writes on), or one inside the accounting window or behind writes
 * of the job that are (window). */
static int write_off_tick(lucidd *d, const lucidd_job *job)
{
    return d->writer && (d->cfg.async_writes == LUCIDD_WRITES_ALL ||
                         in_accounting_grace(job, time(NULL)) || writes_pending(d, job));
}

/* A write the tick made to the job has been answered: a listing whose
 * read began before this moment may not show it. */
static void wrote(lucidd_job *job)
{
    job->wrote_at = monotonic_s();
}

/* Slurm's listing may predate lucid's latest write to this job: a write
 * off the tick not yet taken, or one on the tick answered after the
 * listing's read began (with --async-reads the tick decides on the newest
 * listing the reader has, read while the previous tick wrote).  Such a job
 * is not judged on this listing. */
static int stale(lucidd *d, const lucidd_job *job)
{
    return job->wrote_at >= d->listing_began || writes_pending(d, job);
}

static void settle_writes(lucidd *d, uint32_t job_id)
{
    if (d->writer)
        lucidd_writer_settle(d->writer, job_id);
}

static void moved_to_main(lucidd *d, lucidd_job *job);

/* The outcomes of the writes off the tick answered before `before` (the
 * listing's read began then: it shows them). */
static void take_writes(lucidd *d, double before)
{
    if (!d->writer)
        return;
    lucidd_write *done = NULL;
    size_t n = lucidd_writer_take(d->writer, before, &done);
    for (size_t i = 0; i < n; i++) {
        const lucidd_write *wr = &done[i];
        lucidd_job *job = engine_find(d, wr->job_id);
        if (wr->seconds > d->write_slowest_s)
            d->write_slowest_s = wr->seconds;
        static const char *const what[] = {"", "hold", "move", "start", "release ahead",
                                           "start of a job released ahead"};
        if (wr->seconds >= 0.5) /* what the tick was spared (Slurm's accounting window) */
            lucidd_log("job %u: %s written off the tick; Slurm took %.2f s", wr->job_id,
                       what[wr->kind <= LUCIDD_WRITE_PROMOTE ? wr->kind : 0], wr->seconds);
        if (wr->rc == 0) {
            if (job && wr->kind >= LUCIDD_WRITE_START)
                snprintf(job->comment_sent, sizeof job->comment_sent, "%s", wr->comment);
            if (job && (wr->kind == LUCIDD_WRITE_START || wr->kind == LUCIDD_WRITE_PROMOTE)) {
                job->start_unapplied = 0;
                /* Slurm has had it since then, not since lucid decided
                 * it: --release-timeout and the pin's Resources wait
                 * count from there. */
                job->released_at = wr->done_at;
            }
            if (job && wr->kind == LUCIDD_WRITE_MOVE && job->rec.phase == LUCID_PHASE_MOVING)
                moved_to_main(d, job);
            if (wr->decision > 0)
                ack(d, wr->decision);
            d->writes_made++;
            continue;
        }
        d->writes_failed++;
        lucid_error err = {{0}};
        snprintf(err.msg, sizeof err.msg, "%s", wr->error);
        note_error(d, &err);
        if (!job)
            continue;
        if (wr->kind == LUCIDD_WRITE_AHEAD) {
            /* As a release ahead refused on the tick: one that half took
             * is held again by track. */
            if (job->rec.phase == LUCID_PHASE_MAIN_QUEUE)
                job->ahead = 0;
        } else if (wr->kind == LUCIDD_WRITE_START || wr->kind == LUCIDD_WRITE_PROMOTE) {
            /* Its start stays unapplied: start_not_applied places it again
             * while Slurm still holds it (a release Slurm does not start is
             * taken back after --release-timeout); unacknowledged, a
             * restart re-applies it. */
            lucidd_log("job %u: lucid's start on %s did not reach Slurm off the tick", wr->job_id,
                       job->rec.node_list);
        }
        /* A refused move or hold: the job is still moving (it enters main's
         * queue only once Slurm has moved it), made again from Slurm's
         * state at the next tick. */
    }
    free(done);
}

void engine_stop_io(lucidd *d)
{
    lucidd_reader_free(d->reader);
    d->reader = NULL;
    if (!d->writer)
        return;
    lucidd_writer_flush(d->writer);
    take_writes(d, INFINITY);
    lucidd_writer_free(d->writer);
    d->writer = NULL;
}

/* ---- estimates ---- */

/* The job's estimate from the newest duration model (or the heuristic:
 * its Slurm time limit, else --default-estimate); a new value is recorded
 * with the model version behind it. */
static double heuristic_estimate(const lucidd *d, const lucidd_job *job)
{
    return job->time_limit_min ? 60.0 * job->time_limit_min : d->cfg.default_estimate_s;
}

/* Records the estimate the models gave (estimate_s, by `version`). */
static void estimate_set(lucidd *d, lucidd_job *job, double estimate_s, int64_t version)
{
    if (job->rec.profile_start && estimate_s < d->cfg.profile_limit_s)
        estimate_s = d->cfg.profile_limit_s;
    int changed = estimate_s != job->rec.estimate_s || version != job->estimate_version ||
                  job->estimated_with < 0;
    job->rec.estimate_s = estimate_s;
    job->rec.priority = estimate_s * (job->rec.gpus > 0 ? job->rec.gpus : 1);
    job->estimate_version = version;
    job->estimated_with = d->models ? lucidd_models_version(d->models, "duration") : 0;
    lucid_error err = {{0}};
    if (changed && lucid_state_add_estimate(d->state, job->rec.job_id, "duration", version,
                                            estimate_s, (int64_t)time(NULL), &err) < 0)
        note_error(d, &err);
}

static void estimate(lucidd *d, lucidd_job *job)
{
    int64_t version = 0;
    double estimate_s =
        lucidd_models_estimate(d->models, job, heuristic_estimate(d, job), &version);
    estimate_set(d, job, estimate_s, version);
}

static int held(lucid_phase phase)
{
    return phase == LUCID_PHASE_PROFILE_QUEUE || phase == LUCID_PHASE_MAIN_QUEUE ||
           phase == LUCID_PHASE_MOVING;
}

static int queued(lucid_phase phase)
{
    return phase == LUCID_PHASE_PROFILE_QUEUE || phase == LUCID_PHASE_MAIN_QUEUE;
}

/* Held jobs estimated before the newest duration model (or before a
 * restart) are estimated again, and their profiles scored again. */
static void refresh_estimates(lucidd *d)
{
    int64_t current = lucidd_models_version(d->models, "duration");
    size_t n = 0;
    for (size_t i = 0; i < d->njobs; i++)
        n += held(d->jobs[i].rec.phase) && d->jobs[i].estimated_with != current;
    if (n == 0)
        return;
    /* All of them in one table and one prediction (a new model meets every
     * held job at once; one at a time, each job sorted the whole history
     * again); one at a time only if the arrays cannot be had. */
    lucidd_job **stale = malloc(n * sizeof *stale);
    double *estimate_s = malloc(n * sizeof *estimate_s);
    int64_t *version = malloc(n * sizeof *version);
    size_t k = 0;
    for (size_t i = 0; i < d->njobs; i++) {
        lucidd_job *job = &d->jobs[i];
        if (!held(job->rec.phase) || job->estimated_with == current)
            continue;
        if (job->profile.samples > 0) {
            lucid_gpu_sample mean = lucid_gpu_profile_result(&job->profile);
            job->rec.sharing_score = lucidd_models_sharing(d->models, &mean);
        }
        if (stale && estimate_s && version) {
            stale[k] = job;
            estimate_s[k++] = heuristic_estimate(d, job);
        } else {
            estimate(d, job);
            save(d, job);
        }
    }
    if (k > 0) {
        lucidd_models_estimate_many(d->models, (const lucidd_job *const *)stale, k, estimate_s,
                                    version);
        /* One transaction for the k estimates and jobs: one fsync, not 2k
         * (0.7 s of CPU for 2,000 held jobs, bench/tick_latency). */
        lucid_error err = {{0}};
        int tx = lucid_state_begin(d->state, &err) == 0;
        if (!tx)
            note_error(d, &err);
        for (size_t j = 0; j < k; j++) {
            estimate_set(d, stale[j], estimate_s[j], version[j]);
            save(d, stale[j]);
        }
        if (tx && lucid_state_commit(d->state, &err) < 0) {
            lucid_state_rollback(d->state);
            note_error(d, &err);
        }
    }
    free(stale);
    free(estimate_s);
    free(version);
}

/* The update engine's step: a finished training becomes the model the
 * estimates come from; a due one starts on the worker thread. */
static void update_models(lucidd *d, time_t now)
{
    lucid_error err = {{0}};
    int rc = lucidd_models_update(d->models, (int64_t)now, &err);
    if (rc < 0)
        note_error(d, &err);
    else if (rc == 1)
        lucidd_log("duration model v%lld in use; held jobs re-estimated",
                   (long long)lucidd_models_version(d->models, "duration"));
    refresh_estimates(d);
}

/* ---- what lucid tells Slurm ---- */

/* The job's place in lucid's order: its priority with the site's factors,
 * once computed (order_values), else its own. */
static double order_of(const lucidd_job *job)
{
    return job->order_priority > 0 ? job->order_priority : job->rec.priority;
}

/* Slurm priority of a released job: decreasing in lucid's order (lower
 * runs first there, higher runs first in Slurm), on a log scale so that
 * every lucid priority from 1 s x 1 GPU to 10^12 keeps its order. */
static uint32_t slurm_priority(const lucidd_job *job)
{
    double p = order_of(job) > 0 ? order_of(job) : 0;
    double value = 4.0e9 - 1.4e8 * log1p(p);
    return value < 1 ? 1u : (uint32_t)value;
}

/* "lucid-profile=U:G:M" in the AdminComment: a job's profile survives a lost
 * state file (gpu util %, peak memory MiB, memory util %). */
static void profile_tag(const lucidd_job *job, char *out, size_t size)
{
    out[0] = '\0';
    if (job->profile.samples <= 0)
        return;
    lucid_gpu_sample mean = lucid_gpu_profile_result(&job->profile);
    snprintf(out, size, " lucid-profile=%.1f:%.0f:%.1f", mean.gpu_util_pct, mean.gmem_used_mib,
             mean.gmem_util_pct);
}

/* A start time as users read it on this host: "14:20" within a day,
 * else "12-04 14:20". */
static void clock_text(int64_t t, char *out, size_t size)
{
    time_t tt = (time_t)t, now = time(NULL);
    struct tm tm;
    localtime_r(&tt, &tm);
    strftime(out, size, llabs((long long)(tt - now)) < 20 * 3600 ? "%H:%M" : "%m-%d %H:%M", &tm);
}

/* "; start ~14:20 (13:50-15:40)", or "; no start estimate: <why>". */
static void start_text(const lucidd_job *job, char *out, size_t size)
{
    out[0] = '\0';
    if (job->shown_p50 > 0) {
        char p10[16], p50[16], p90[16];
        clock_text(job->shown_p10, p10, sizeof p10);
        clock_text(job->shown_p50, p50, sizeof p50);
        clock_text(job->shown_p90, p90, sizeof p90);
        snprintf(out, size, "; start ~%s (%s-%s)", p50, p10, p90);
    } else if (job->eta_none[0]) {
        snprintf(out, size, "; no start estimate: %.60s", job->eta_none);
    }
}

#define AHEAD_TAG " " AHEAD_MARK

static void comment_text(const lucidd_job *job, char *out, size_t size)
{
    char tag[96];
    profile_tag(job, tag, sizeof tag);
    /* The plugin's mark of the owner's own hold stays in the comment: a
     * lucidd that lost its state (or the hand-back watchdog) still sees it. */
    if (job->rec.user_hold)
        snprintf(tag + strlen(tag), sizeof tag - strlen(tag), " lucid-user-hold");
    /* ... and a release ahead: a lucidd that restarts knows it from a stray release. */
    if (job->ahead)
        snprintf(tag + strlen(tag), sizeof tag - strlen(tag), "%s", AHEAD_TAG);
    const lucid_job_record *r = &job->rec;
    if (r->phase == LUCID_PHASE_RUNNING && r->packed_with)
        snprintf(out, size, "lucid: running packed with job %u on %.40s GPUs %.20s lucid-gpus=%.20s%s",
                 r->packed_with, r->node_list, r->gpu_list, r->gpu_list, tag);
    else {
        /* Waiting jobs: when lucid expects them to start, for scontrol users. */
        char start[96] = "";
        if (queued(r->phase))
            start_text(job, start, sizeof start);
        snprintf(out, size, "lucid: %s: %.150s%s%s", lucid_phase_name(r->phase), r->reason, start,
                 tag);
    }
}

/* Waiting jobs: what squeue -O AdminComment and scontrol show job say. */
static void push_comments(lucidd *d, time_t now, double now_mono)
{
    int budget = COMMENTS_PER_TICK;
    double began = monotonic_s();
    for (size_t i = 0; i < d->njobs && budget > 0; i++) {
        /* Each comment is an RPC to slurmctld: a busy controller must not
         * stretch the tick (the rest are written at the next ones). */
        if (monotonic_s() - began > COMMENT_TIME_S)
            break;
        lucidd_job *job = &d->jobs[i];
        if (!queued(job->rec.phase) || job->rec.phase == LUCID_PHASE_HANDED_BACK ||
            in_accounting_grace(job, now))
            continue;
        /* A new phase at once (once Slurm's accounting has the job); a
         * changed reason at most every period. */
        int phase_changed = job->comment_phase != (int)job->rec.phase + 1;
        if (!phase_changed && now_mono - job->comment_at < COMMENT_PERIOD_S)
            continue;
        /* The estimate it shows moves to the newest when that appears,
         * disappears or drifts by more than 10 min or a tenth of the wait:
         * not at every small shift (each rewrite is an RPC). */
        int64_t wait = job->eta_p50 - (int64_t)time(NULL), drift = job->eta_p50 - job->shown_p50;
        int64_t tolerance = wait / 10 > 600 ? wait / 10 : 600;
        if (phase_changed || (job->eta_p50 > 0) != (job->shown_p50 > 0) || drift > tolerance ||
            drift < -tolerance) {
            job->shown_p10 = job->eta_p10;
            job->shown_p50 = job->eta_p50;
            job->shown_p90 = job->eta_p90;
        }
        if (writes_pending(d, job))
            continue; /* a start off the tick carries its comment */
        char text[256];
        comment_text(job, text, sizeof text);
        if (strcmp(text, job->comment_sent) == 0) {
            job->comment_phase = (int)job->rec.phase + 1;
            continue;
        }
        lucid_error err = {{0}};
        if (slurm_io_comment(job->rec.job_id, text, &err) == 0) {
            snprintf(job->comment_sent, sizeof job->comment_sent, "%s", text);
            job->comment_at = now_mono;
            job->comment_phase = (int)job->rec.phase + 1;
        } else if (slurm_lost(d)) {
            break; /* slurmctld stopped answering: the rest at a later tick */
        }
        budget--;
    }
}

/* One line, replaced whole: the job_submit plugin stops holding new jobs
 * and the hand-back watchdog releases held ones when it goes stale. */
static void write_heartbeat(lucidd *d)
{
    if (!d->cfg.heartbeat_path)
        return;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", d->cfg.heartbeat_path);
    FILE *file = fopen(tmp, "w");
    if (!file)
        return;
    /* Below every job still on the plugin's hold (hold(): an array task
     * split meanwhile may have raised intake_max past one). */
    uint32_t intake = d->intake_max;
    if (d->intake_deferred && d->intake_deferred <= intake)
        intake = d->intake_deferred - 1;
    int ok = fprintf(file, "pid=%ld time=%lld intake=%u\n", (long)getpid(),
                     (long long)time(NULL), intake) > 0;
    ok = fclose(file) == 0 && ok;
    if (!ok || rename(tmp, d->cfg.heartbeat_path) != 0)
        unlink(tmp);
}

/* ---- outcomes ---- */

static const char *outcome_of(const char *slurm_state)
{
    static const struct {
        const char *state, *outcome;
    } table[] = {
        {"COMPLETED", "completed"}, {"FAILED", "failed"},         {"CANCELLED", "cancelled"},
        {"TIMEOUT", "timeout"},     {"NODE_FAIL", "node-fail"},   {"OUT_OF_MEMORY", "out-of-memory"},
        {"PREEMPTED", "preempted"}, {"BOOT_FAIL", "failed"},      {"DEADLINE", "timeout"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strncmp(slurm_state, table[i].state, strlen(table[i].state)) == 0)
            return table[i].outcome;
    return "failed";
}

static const char *where_now(const lucidd_job *job)
{
    switch (job->rec.phase) {
    case LUCID_PHASE_PROFILING:
    case LUCID_PHASE_MOVING:
        return "profiler";
    case LUCID_PHASE_RUNNING:
    case LUCID_PHASE_HANDED_BACK:
        return "main";
    default:
        return "queue";
    }
}

static void unpair(lucidd *d, lucidd_job *job)
{
    if (!job->rec.packed_with)
        return;
    lucidd_job *partner = engine_find(d, job->rec.packed_with);
    if (partner && partner->rec.packed_with == job->rec.job_id) {
        partner->rec.packed_with = 0;
        save(d, partner);
    }
}

static void keep_profile(lucidd *d, lucidd_job *job, double measured_s);

static void learn_ratio(lucidd *d, const lucidd_job *job);

/* The job ended: its final phase says where, its outcome how.  Only a job
 * that completed is a training row of the duration model. */
static void finish(lucidd *d, lucidd_job *job, const char *outcome, time_t start, time_t end,
                   const char *detail)
{
    char where[16];
    snprintf(where, sizeof where, "%s", where_now(job));
    /* Released but never started (cancelled while Slurm had it pending). */
    if (!start && ((strcmp(where, "main") == 0 && !job->rec.main_start) ||
                   (strcmp(where, "profiler") == 0 && !job->rec.profile_start)))
        snprintf(where, sizeof where, "queue");
    int completed = strcmp(outcome, "completed") == 0;
    int in_profiler = strcmp(where, "profiler") == 0, in_queue = strcmp(where, "queue") == 0;
    char reason[256];
    snprintf(reason, sizeof reason, "ended in the %s: %s%s",
             in_queue ? "queue" : in_profiler ? "profiler" : "main partition", outcome, detail);
    if (in_profiler && start) {
        if (!job->rec.profile_start)
            job->rec.profile_start = start;
        keep_profile(d, job, difftime(end ? end : time(NULL), start));
    }
    if (!in_profiler && !in_queue && !job->rec.main_start && start)
        job->rec.main_start = start;
    if (completed && in_queue && start) {
        job->rec.main_start = start; /* released outside lucid and done within a tick */
        snprintf(where, sizeof where, "main");
    }
    if (!job->rec.main_first_start && job->rec.main_start)
        job->rec.main_first_start = job->rec.main_start;
    lucid_phase phase = !completed     ? LUCID_PHASE_FAILED
                        : in_profiler ? LUCID_PHASE_DONE_IN_PROFILER
                                      : LUCID_PHASE_DONE;
    snprintf(job->rec.outcome, sizeof job->rec.outcome, "%s", outcome);
    snprintf(job->rec.ended_in, sizeof job->rec.ended_in, "%s", where);
    set_phase(job, phase, reason);
    job->rec.end_time = end ? end : time(NULL);
    job->releasing = 0;
    unpair(d, job);
    learn_ratio(d, job);
    if (lucidd_models_add_finished(d->models, job) < 0)
        lucidd_log_level(LOG_ERR, "out of memory keeping job %u as a training row", job->rec.job_id);
    save(d, job);
}

static void end_job(lucidd *d, lucidd_job *job, const slurm_job *sj)
{
    char detail[64];
    snprintf(detail, sizeof detail, " (Slurm: %s)", sj->state_name);
    finish(d, job, outcome_of(sj->state_name), sj->start_time, sj->end_time, detail);
}

/* A job Slurm no longer lists (it ended while lucid could not see it, and
 * Slurm purged it after MinJobAge): its outcome from Slurm's accounting if
 * there is any, else "unknown" — never a guessed failure. */
static int vanished(lucidd *d, lucidd_job *job)
{
    char state[64] = "", source[16] = "";
    time_t start = 0, end = 0;
    lucid_error err = {{0}};
    int found = slurm_io_accounting(job->rec.job_id, state, sizeof state, &start, &end, source,
                                    sizeof source, &err);
    if (found < 0) {
        note_error(d, &err);
        return -1; /* try again next tick */
    }
    if (found == 1) {
        char detail[128];
        snprintf(detail, sizeof detail, " (Slurm's accounting, %s: %s)", source, state);
        finish(d, job, outcome_of(state), start, end, detail);
        return 0;
    }
    snprintf(job->rec.outcome, sizeof job->rec.outcome, "unknown");
    snprintf(job->rec.ended_in, sizeof job->rec.ended_in, "%s", where_now(job));
    set_phase(job, LUCID_PHASE_ENDED_UNKNOWN,
              "ended while lucid could not see it; Slurm no longer knows it and keeps no "
              "accounting lucid can read: outcome unknown");
    job->releasing = 0;
    unpair(d, job);
    save(d, job);
    return 0;
}

/* Leaving the profiler: keep the mean of the samples as the job's profile. */
static void keep_profile(lucidd *d, lucidd_job *job, double measured_s)
{
    lucid_gpu_sample mean = lucid_gpu_profile_result(&job->profile);
    lucid_error err = {{0}};
    if (job->profile.samples > 0) {
        job->rec.sharing_score = lucidd_models_sharing(d->models, &mean);
        if (lucid_state_put_profile(d->state, job->rec.job_id, &mean, job->profile.samples,
                                    measured_s, &err) < 0)
            note_error(d, &err);
    }
}

/* A profile recovered from "lucid-profile=U:G:M" in the AdminComment. */
static int recover_profile(lucidd_job *job, const char *comment)
{
    const char *tag = strstr(comment, "lucid-profile=");
    lucid_gpu_sample s;
    if (!tag || sscanf(tag + 14, "%lf:%lf:%lf", &s.gpu_util_pct, &s.gmem_used_mib,
                       &s.gmem_util_pct) != 3)
        return 0;
    job->profile.samples = 1;
    job->profile.gpu_util_sum = s.gpu_util_pct;
    job->profile.gmem_util_sum = s.gmem_util_pct;
    job->profile.gmem_max_mib = s.gmem_used_mib;
    return 1;
}

/* ---- when Slurm would run a job: dependencies, --begin, its owner's hold ---- */

typedef enum { TARGET_WAITING, TARGET_RUNNING, TARGET_OK, TARGET_NOT_OK, TARGET_GONE } target_state;

/* The tick's Slurm listing is sorted by job id (engine_tick). */
static const slurm_job *find_slurm(const slurm_job *sjobs, long n, uint32_t id)
{
    long lo = 0, hi = n - 1;
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        if (sjobs[mid].id == id)
            return &sjobs[mid];
        if (sjobs[mid].id < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

static int by_id(const void *a, const void *b)
{
    uint32_t x = ((const slurm_job *)a)->id, y = ((const slurm_job *)b)->id;
    return x < y ? -1 : x > y;
}

static target_state target_of(lucidd *d, const slurm_job *sjobs, long n, uint32_t id)
{
    const slurm_job *sj = find_slurm(sjobs, n, id);
    if (sj) {
        if (sj->state == SJ_PENDING)
            return TARGET_WAITING;
        if (sj->state == SJ_RUNNING)
            return TARGET_RUNNING;
        return sj->state == SJ_COMPLETED ? TARGET_OK : TARGET_NOT_OK;
    }
    const lucidd_job *job = engine_find(d, id);
    lucid_job_record stored;
    const lucid_job_record *r = job ? &job->rec : NULL;
    lucid_error err = {{0}};
    if (!job && d->state && lucid_state_get_job(d->state, id, &stored, &err) == 1)
        r = &stored; /* ended long ago: forgotten by the engine, kept in the store */
    if (r && lucid_phase_is_final(r->phase) && strcmp(r->outcome, "unknown") != 0)
        return strcmp(r->outcome, "completed") == 0 ? TARGET_OK : TARGET_NOT_OK;
    /* Purged by Slurm and unknown to lucid: Slurm treats such a dependency
     * as satisfied. */
    return TARGET_GONE;
}

typedef enum { DEP_SATISFIED, DEP_WAITING, DEP_NEVER } dep_state;

/* One "type:id[:id...]" item; Slurm's own "(state)" suffix is read too. */
static dep_state dependency_item(lucidd *d, const lucidd_job *self, const slurm_job *sjobs, long n,
                                 char *item, char *why, size_t size)
{
    char *paren = strchr(item, '(');
    if (paren) {
        if (strncmp(paren, "(failed)", 8) == 0) {
            snprintf(why, size, "%.100s can never be satisfied", item);
            return DEP_NEVER;
        }
        *paren = '\0';
    }
    char *colon = strchr(item, ':');
    if (strcmp(item, "singleton") == 0) {
        for (size_t i = 0; i < d->njobs; i++) {
            const lucidd_job *other = &d->jobs[i];
            if (other != self && other->uid == self->uid &&
                strcmp(other->rec.name, self->rec.name) == 0 &&
                (other->rec.phase == LUCID_PHASE_RUNNING || other->rec.phase == LUCID_PHASE_PROFILING)) {
                snprintf(why, size, "singleton: job %u of the same name runs", other->rec.job_id);
                return DEP_WAITING;
            }
        }
        return DEP_SATISFIED;
    }
    if (!colon)
        return DEP_SATISFIED; /* a form lucid does not know: Slurm decides once released */
    *colon = '\0';
    const char *type = item;
    dep_state result = DEP_SATISFIED;
    for (char *id_text = colon + 1; id_text && *id_text;) {
        char *next = strchr(id_text, ':');
        if (next)
            *next++ = '\0';
        uint32_t id = (uint32_t)strtoul(id_text, NULL, 10); /* "12_3", "12+60": the job id */
        target_state t = target_of(d, sjobs, n, id);
        int started = t != TARGET_WAITING, ended = t == TARGET_OK || t == TARGET_NOT_OK || t == TARGET_GONE;
        dep_state s = DEP_SATISFIED;
        if (strcmp(type, "after") == 0)
            s = started ? DEP_SATISFIED : DEP_WAITING;
        else if (strcmp(type, "afterok") == 0)
            s = !ended ? DEP_WAITING : t == TARGET_NOT_OK ? DEP_NEVER : DEP_SATISFIED;
        else if (strcmp(type, "afternotok") == 0)
            s = !ended ? DEP_WAITING : t == TARGET_OK ? DEP_NEVER : DEP_SATISFIED;
        else /* afterany, aftercorr, afterburstbuffer: the job ended */
            s = ended ? DEP_SATISFIED : DEP_WAITING;
        if (s == DEP_NEVER) {
            snprintf(why, size, "%s:%u can never be satisfied (job %u %s)", type, id, id,
                     t == TARGET_OK ? "completed" : "did not complete");
            return DEP_NEVER;
        }
        if (s == DEP_WAITING && result == DEP_SATISFIED) {
            snprintf(why, size, "waits for its dependency %s:%u", type, id);
            result = DEP_WAITING;
        }
        id_text = next;
    }
    return result;
}

/* Slurm does not evaluate the dependencies of held jobs, so lucid does,
 * from the same facts: "a,b" all must hold, "a?b" any. */
static dep_state dependency(lucidd *d, const lucidd_job *self, const slurm_job *sjobs, long n,
                            const char *text, char *why, size_t size)
{
    if (!text[0] || strcmp(text, "(null)") == 0)
        return DEP_SATISFIED;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", text);
    int any = strchr(copy, '?') != NULL;
    dep_state result = any ? DEP_NEVER : DEP_SATISFIED;
    char item_why[200] = "";
    char *save_ptr = NULL;
    for (char *item = strtok_r(copy, any ? "?" : ",", &save_ptr); item;
         item = strtok_r(NULL, any ? "?" : ",", &save_ptr)) {
        dep_state s = dependency_item(d, self, sjobs, n, item, item_why, sizeof item_why);
        if (any) {
            if (s == DEP_SATISFIED)
                return DEP_SATISFIED;
            if (s == DEP_WAITING)
                result = DEP_WAITING;
        } else if (s > result) {
            result = s;
            snprintf(why, size, "%s", item_why);
        }
    }
    if (any && result != DEP_SATISFIED)
        snprintf(why, size, "%s", item_why);
    return result;
}

/* Sets waits_for and, for a waiting job, its reason. */
static void eligibility(lucidd *d, lucidd_job *job, const slurm_job *sj, const slurm_job *sjobs,
                        long n, time_t now)
{
    char why[256] = "";
    job->waits_for[0] = '\0';
    /* Slurm waits for its begin time: from now on its StartTime is one. */
    if (strcmp(sj->reason, "BeginTime") == 0)
        job->was_released = 0;
    if (job->rec.user_hold) {
        snprintf(job->waits_for, sizeof job->waits_for, "user-hold");
        snprintf(why, sizeof why,
                 "held by its owner (sbatch -H): `lucid release %u` lifts it", job->rec.job_id);
    } else {
        char dep_why[200] = "";
        dep_state dep = dependency(d, job, sjobs, n, sj->dependency, dep_why, sizeof dep_why);
        if (dep != DEP_SATISFIED) {
            snprintf(job->waits_for, sizeof job->waits_for, "dependency");
            snprintf(why, sizeof why, "%s%s", dep_why,
                     dep == DEP_NEVER ? "; it will not run (Slurm: DependencyNeverSatisfied)" : "");
        } else if (sj->start_time > now && !job->was_released) {
            /* Held, Slurm's StartTime is the job's --begin; released (ahead,
             * or taken back after), it may be Slurm's plan for it, and only
             * Slurm's reason tells a begin time. */
            char at[32];
            lucid_time_format((int64_t)sj->start_time, at, sizeof at);
            snprintf(job->waits_for, sizeof job->waits_for, "begin");
            snprintf(why, sizeof why, "begins at %s UTC (--begin)", at);
        }
    }
    if (why[0])
        set_reason(d, job, why);
}

/* ---- intake ---- */

static int managed(const lucidd *d, const char *partition)
{
    return strcmp(partition, d->cfg.main_partition) == 0 ||
           strcmp(partition, d->cfg.profiling_partition) == 0;
}

/* Which queue a held job belongs in: profiled jobs (a single node, at most
 * --gpu-limit GPUs, no nodes of its own choosing) or straight to main. */
static void route(lucidd *d, lucidd_job *job, const char *why_profiled)
{
    char reason[256];
    int profilable = job->rec.gpus <= d->cfg.gpu_limit && job->rec.nodes <= 1 &&
                     !job->user_nodes[0] && !job->user_exclude[0] && !job->fit.whole;
    if (job->profile.samples > 0 || job->rec.profile_start) {
        set_phase(job, LUCID_PHASE_MAIN_QUEUE, why_profiled ? why_profiled : "profiled; in the main queue");
    } else if (profilable) {
        set_phase(job, LUCID_PHASE_PROFILE_QUEUE, "waiting for the profiler");
    } else {
        if (job->user_nodes[0] || job->user_exclude[0])
            snprintf(reason, sizeof reason, "not profiled (it chose its nodes); in the main queue");
        else if (job->fit.whole)
            snprintf(reason, sizeof reason, "not profiled (--exclusive: whole nodes); in the main queue");
        else
            snprintf(reason, sizeof reason, "not profiled (more than %d GPUs or nodes); in the main queue",
                     d->cfg.gpu_limit);
        set_phase(job, LUCID_PHASE_MAIN_QUEUE, reason);
    }
}

static void copy_request(lucidd_job *job, const slurm_job *sj)
{
    job->rec.gpus = sj->gpus;
    job->rec.nodes = sj->nodes;
    job->gpus_per_node = sj->gpus_per_node;
    job->nodes_fixed = sj->nodes_fixed;
    job->fit = sj->fit;
    snprintf(job->account, sizeof job->account, "%s", sj->account);
    snprintf(job->qos, sizeof job->qos, "%s", sj->qos);
    snprintf(job->rec.gpu_request, sizeof job->rec.gpu_request, "%s", sj->gpu_request);
    snprintf(job->user_nodes, sizeof job->user_nodes, "%s", sj->req_nodes);
    snprintf(job->user_exclude, sizeof job->user_exclude, "%s", sj->exc_nodes);
}

/* Lucid's hold is an operator's: the owner cannot release it by hand. */
static void hold(lucidd *d, lucidd_job *job, const slurm_job *sj)
{
    lucid_error err = {{0}};
    if (!(sj->held && sj->admin_held) && !d->slurm_up)
        return; /* slurmctld stopped answering in this tick: held at a later one */
    if (sj->held && !sj->admin_held && sj->id > d->intake_max &&
        (in_accounting_grace(job, time(NULL)) || d->hold_spent_s > HOLD_TIME_S)) {
        /* The plugin's hold, new: the plugin refuses its owner's release
         * while its id is above the heartbeat's watermark, so lucid's own
         * hold can wait out Slurm's accounting and a burst's backlog (tried
         * at every tick, oldest first). */
        if (!d->intake_deferred || sj->id < d->intake_deferred)
            d->intake_deferred = sj->id;
        return;
    }
    if (!(sj->held && sj->admin_held))
        settle_writes(d, sj->id);
    double began = monotonic_s();
    int held = (sj->held && sj->admin_held) || slurm_io_admin_hold(sj->id, &err) == 0;
    d->hold_spent_s += monotonic_s() - began;
    if (!(sj->held && sj->admin_held))
        wrote(job);
    if (held) {
        if (sj->id > d->intake_max)
            d->intake_max = sj->id;
        return;
    }
    note_error(d, &err);
}

/* A record for a job lucid has not seen: who, what it asks, when. */
static lucidd_job *new_job(lucidd *d, const slurm_job *sj)
{
    lucidd_job *job = add_job(d, sj->id);
    if (!job)
        return NULL;
    lucid_job_record *rec = &job->rec;
    job->uid = sj->uid;
    snprintf(rec->user, sizeof rec->user, "%s", sj->user);
    snprintf(rec->name, sizeof rec->name, "%s", sj->name);
    snprintf(rec->partition, sizeof rec->partition, "%s", sj->partition);
    copy_request(job, sj);
    rec->submit_time = sj->submit_time;
    job->slurm_submit = sj->submit_time;
    rec->sharing_score = -1;
    rec->cpus = sj->cpus;
    rec->time_limit_s = 60 * (int64_t)sj->time_limit_min;
    job->estimated_with = -1;
    return job;
}

static void note_arrival(lucidd *d, const lucidd_job *job);
static void hand_back(lucidd *d, lucidd_job *job, const char *why);

/* A request lucid leaves to Slurm as it is (no GPUs, a heterogeneous job,
 * --gpus-per-socket, a reservation's job): recorded as handed back; released
 * if lucid's intake held it, left held if its owner did (sbatch -H). */
static void pass_through(lucidd *d, lucidd_job *job, const slurm_job *sj)
{
    char why[200];
    snprintf(why, sizeof why, "%s", sj->pass_why[0] ? sj->pass_why : "it asks no GPUs");
    if (sj->id > d->intake_max)
        d->intake_max = sj->id;
    if (sj->held && !job->rec.user_hold) {
        hand_back(d, job, why);
        return;
    }
    char reason[256];
    snprintf(reason, sizeof reason, "%.200s; Slurm schedules it as it is", why);
    set_phase(job, LUCID_PHASE_HANDED_BACK, reason);
    int64_t id = record_decision(d, job, "hand-back", "", reason);
    ack(d, id);
    save(d, job);
}

static void intake(lucidd *d, const slurm_job *sj)
{
    lucidd_job *job = new_job(d, sj);
    if (!job)
        return;
    note_arrival(d, job);
    lucid_job_record *rec = &job->rec;
    /* Released by lucid before its state was lost: the required nodes are
     * lucid's pin, not the job's own -w. */
    if (strncmp(sj->admin_comment, "lucid: profiling", 16) == 0 ||
        strncmp(sj->admin_comment, "lucid: running", 14) == 0)
        job->user_nodes[0] = '\0';
    rec->phase_since = time(NULL);
    rec->user_hold = strstr(sj->admin_comment, "lucid-user-hold") != NULL;
    job->restarts_seen = sj->restarts;
    job->time_limit_min = sj->time_limit_min;
    /* A job lucid already profiled (its state file lost): its profile is in
     * the AdminComment; one requeued held on the profiling partition is mid-move. */
    int profiled = recover_profile(job, sj->admin_comment);
    if (profiled)
        rec->sharing_score = lucidd_models_sharing(d->models, &(lucid_gpu_sample){
            .gpu_util_pct = job->profile.gpu_util_sum, .gmem_used_mib = job->profile.gmem_max_mib,
            .gmem_util_pct = job->profile.gmem_util_sum});
    estimate(d, job);
    if (!sj->asks_gpus || sj->pass_why[0]) {
        pass_through(d, job, sj); /* also one Slurm already started */
        return;
    }
    if (sj->state == SJ_RUNNING) {
        int profiling = strcmp(sj->partition, d->cfg.profiling_partition) == 0;
        set_phase(job, profiling ? LUCID_PHASE_PROFILING : LUCID_PHASE_RUNNING,
                  "started outside lucid (while lucidd was away); adopted");
        save(d, job);
        return;
    }
    hold(d, job, sj);
    if (strcmp(sj->partition, d->cfg.profiling_partition) == 0 && sj->restarts > 0) {
        set_phase(job, LUCID_PHASE_MOVING, "requeued by lucid from the profiler; moving");
    } else if (strcmp(sj->partition, d->cfg.main_partition) == 0 && sj->restarts > 0) {
        /* Requeued onto main by lucid before its state was lost: never
         * profiled twice (the profile, if lucid had written it, is back). */
        rec->profile_start = sj->submit_time; /* it ran in the profiler; exact time lost */
        route(d, job, profiled ? "profiled before lucid's state was lost (profile from Slurm's AdminComment)"
                               : "profiled before lucid's state was lost (Slurm's restart count)");
    } else {
        route(d, job, NULL);
    }
    if (!sj->held)
        lucidd_log("job %u: found released while waiting; held again (lucid decides when it starts)",
                   sj->id);
    save(d, job);
}

/* A job of lucid's partitions that started and ended while lucidd was away
 * (the plugin's fail-open let it through, or lucid's state was lost): its
 * record, with Slurm's outcome, so the history counts what Slurm ran. */
static void intake_ended(lucidd *d, const slurm_job *sj)
{
    lucidd_job *job = new_job(d, sj);
    if (!job)
        return;
    lucid_job_record *rec = &job->rec;
    int ran = sj->start_time > 0 && sj->end_time > sj->start_time;
    rec->phase = !ran ? LUCID_PHASE_MAIN_QUEUE
                 : strcmp(sj->partition, d->cfg.profiling_partition) == 0 ? LUCID_PHASE_PROFILING
                                                                          : LUCID_PHASE_RUNNING;
    rec->phase_since = sj->start_time ? sj->start_time : sj->submit_time;
    char detail[96];
    snprintf(detail, sizeof detail, " (Slurm: %s; it ran while lucidd was away)", sj->state_name);
    finish(d, job, outcome_of(sj->state_name), ran ? sj->start_time : 0, sj->end_time, detail);
}

/* Array records holding several pending tasks are split so that each task
 * is a job of its own (its own profile, its own place in the queue). */
static void split_arrays(lucidd *d, const slurm_job *sjobs, long n)
{
    /* A listing read before the latest splits still shows those tasks in
     * their array's record: split once. */
    if (d->split_at >= d->listing_began)
        return;
    int budget = SPLITS_PER_TICK;
    for (long i = 0; i < n && budget > 0 && d->slurm_up; i++) {
        const slurm_job *sj = &sjobs[i];
        if (!sj->array_tasks[0] || sj->state != SJ_PENDING || !managed(d, sj->partition))
            continue;
        char tasks[128];
        snprintf(tasks, sizeof tasks, "%s", sj->array_tasks);
        tasks[strcspn(tasks, "%")] = '\0'; /* "0-5%2": the throttle is not lucid's to keep */
        long highest = -1;
        char *save_ptr = NULL;
        for (char *range = strtok_r(tasks, ",", &save_ptr); range; range = strtok_r(NULL, ",", &save_ptr)) {
            char *dash = strchr(range, '-');
            long first = strtol(range, NULL, 10), last = dash ? strtol(dash + 1, NULL, 10) : first;
            char *colon = dash ? strchr(dash, ':') : NULL; /* "0-10:2" */
            long step = colon ? strtol(colon + 1, NULL, 10) : 1;
            if (step < 1)
                step = 1;
            for (long t = first; t <= last && budget > 0; t += step) {
                if (t > highest) {
                    /* The record keeps its highest task: split the one kept so far. */
                    if (highest >= 0) {
                        lucid_error err = {{0}};
                        if (slurm_io_split_task(sj->array_job_id, (uint32_t)highest, &err) < 0)
                            note_error(d, &err);
                        budget--;
                    }
                    highest = t;
                } else {
                    lucid_error err = {{0}};
                    if (slurm_io_split_task(sj->array_job_id, (uint32_t)t, &err) < 0)
                        note_error(d, &err);
                    budget--;
                }
            }
        }
    }
    if (budget < SPLITS_PER_TICK)
        d->split_at = monotonic_s();
}

/* ---- tracking ---- */

/* Whether Slurm's "running" may be stale for this job: it started before
 * slurmctld (re)started, or before lucid saw Slurm answer again after an
 * outage, and the grace since then has not passed. */
static int maybe_stale(lucidd *d, const lucidd_job *job, double now_mono)
{
    time_t now = time(NULL), started = 0;
    if (!d->slurm_up)
        return 1; /* slurmctld stopped answering in this tick: cannot tell */
    if (d->slurm_back_at > 0 && now_mono - d->slurm_back_at < GRACE_AFTER_OUTAGE_S &&
        job->slurm_start < d->outage_began)
        return 1;
    lucid_error err = {{0}};
    if (slurm_io_ctld_started(&started, &err) < 0)
        return 1; /* cannot tell: do not requeue now */
    /* Whole seconds on both sides: a job the new slurmctld started in its
     * first second has the same stamp, and a recovered one cannot (the old
     * slurmctld was gone for longer than that). */
    return job->slurm_start < started && difftime(now, started) < GRACE_AFTER_OUTAGE_S;
}

/* The profiling run ends: its profile is kept, the job requeued (held) to
 * be moved to main. */
static void end_profiling(lucidd *d, lucidd_job *job, const char *reason)
{
    keep_profile(d, job, job->rec.profiled_s);
    set_phase(job, LUCID_PHASE_MOVING, reason);
    int64_t id = record_decision(d, job, "requeue", d->cfg.main_partition, reason);
    settle_writes(d, job->rec.job_id);
    lucid_error err = {{0}};
    int rc = slurm_io_requeue_hold_if_running(job->rec.job_id, d->cfg.profiling_partition, &err);
    wrote(job);
    if (rc < 0) {
        note_error(d, &err);
        return; /* retried by reconcile or the next tick (phase MOVING, job still running) */
    }
    if (rc == 0)
        lucidd_log("job %u: not requeued: Slurm says it no longer runs (it ended in the profiler)",
                   job->rec.job_id);
    ack(d, id);
}

static void profile_limit(lucidd *d, lucidd_job *job, double now_mono)
{
    if (job->rec.profiled_s < d->cfg.profile_limit_s || maybe_stale(d, job, now_mono))
        return;
    char reason[256];
    snprintf(reason, sizeof reason, "profiled for %.0f s (limit %.0f s); moving to %s",
             job->rec.profiled_s, d->cfg.profile_limit_s, d->cfg.main_partition);
    end_profiling(d, job, reason);
}

/* Main's decision placed a job being profiled (--profiler-yield): main has
 * GPUs for it now, before any job it outranks, so its profiling ends here
 * rather than at the limit (profiling is for while a job would wait). */
static void yield_profiler(lucidd *d, lucidd_job *job, const decide_result *placed,
                           double now_mono)
{
    if (job->rec.phase != LUCID_PHASE_PROFILING || maybe_stale(d, job, now_mono))
        return;
    char reason[256];
    snprintf(reason, sizeof reason,
             "profiled for %.0f s (limit %.0f s): %.60s has GPUs for it now; moving to %s",
             job->rec.profiled_s, d->cfg.profile_limit_s, placed->nodes, d->cfg.main_partition);
    end_profiling(d, job, reason);
    d->profiler_yielded++;
}

static void finish_move(lucidd *d, lucidd_job *job, const slurm_job *sj)
{
    if (!d->slurm_up)
        return; /* slurmctld stopped answering in this tick: moved at a later one */
    if (sj->state == SJ_RUNNING && strcmp(sj->partition, d->cfg.profiling_partition) == 0) {
        /* The requeue did not take (or its acknowledgement was lost before it was sent). */
        lucid_error err = {{0}};
        if (slurm_io_requeue_hold_if_running(job->rec.job_id, d->cfg.profiling_partition, &err) < 0)
            note_error(d, &err);
        wrote(job);
        return;
    }
    if (sj->state != SJ_PENDING)
        return; /* requeue is asynchronous */
    /* slurm_requeue(JOB_REQUEUE_HOLD) leaves a user hold, which the owner
     * could lift during the move: an operator's hold at once, completing
     * or not.  Both writes fall in Slurm's accounting window (the requeue
     * opened it): off the tick where lucidd has a writer. */
    int off_tick = write_off_tick(d, job);
    if (!sj->admin_held) {
        lucidd_write wr = {.kind = LUCIDD_WRITE_HOLD, .job_id = job->rec.job_id};
        if (!off_tick || lucidd_writer_post(d->writer, &wr) < 0)
            hold(d, job, sj);
    }
    if (sj->completing)
        return;
    if (strcmp(sj->partition, d->cfg.main_partition) != 0) {
        lucidd_write wr = {.kind = LUCIDD_WRITE_MOVE, .job_id = job->rec.job_id};
        snprintf(wr.partition, sizeof wr.partition, "%s", d->cfg.main_partition);
        if (!off_tick || lucidd_writer_post(d->writer, &wr) < 0) {
            settle_writes(d, job->rec.job_id);
            lucid_error err = {{0}};
            int moved = slurm_io_move(job->rec.job_id, d->cfg.main_partition, &err);
            wrote(job);
            if (moved < 0) {
                note_error(d, &err);
                return;
            }
        } else {
            /* In main's queue once Slurm has moved it (take_writes): until
             * then its record says moving, so a lucidd stopped meanwhile
             * moves it again. */
            return;
        }
    }
    job->time_limit_min = sj->time_limit_min;
    moved_to_main(d, job);
}

/* Slurm has the job on the main partition, unpinned: it waits in main's queue. */
static void moved_to_main(lucidd *d, lucidd_job *job)
{
    snprintf(job->rec.partition, sizeof job->rec.partition, "%s", d->cfg.main_partition);
    job->rec.node_list[0] = '\0';
    job->user_nodes[0] = '\0'; /* the profiler's pin, cleared by the move (profiled jobs chose none) */
    estimate(d, job);
    set_phase(job, LUCID_PHASE_MAIN_QUEUE, "profiled; in the main queue");
    save(d, job);
}

/* A packed job's partner ended before Slurm started it: it is no pair. */
static int partner_gone(lucidd *d, const lucidd_job *job)
{
    const lucidd_job *partner = engine_find(d, job->rec.packed_with);
    return !partner || lucid_phase_is_final(partner->rec.phase);
}

static void note_start(lucidd *d, lucidd_job *job, const slurm_job *sj)
{
    job->releasing = 0;
    if (sj->start_time == job->slurm_start)
        return;
    job->slurm_start = sj->start_time;
    if (job->rec.phase == LUCID_PHASE_RUNNING || job->rec.phase == LUCID_PHASE_HANDED_BACK) {
        /* Slurm's choice where lucid left it one (a job released ahead that
         * lucid started: its plan is replaced), and where a job lucid
         * adopted runs (started while lucidd was away: without it the
         * start estimates took its GPUs for free). */
        if (!job->rec.gpu_list[0] && sj->node_list[0] &&
            strcmp(job->rec.node_list, sj->node_list) != 0)
            snprintf(job->rec.node_list, sizeof job->rec.node_list, "%s", sj->node_list);
        job->rec.main_start = sj->start_time;
        if (!job->rec.main_first_start)
            job->rec.main_first_start = sj->start_time;
        job->rec.runs++;
        if (job->rec.packed_with && partner_gone(d, job)) {
            /* Too late to hold it again: it runs alone on GPUs Slurm counts
             * as free, and the node stays closed to new jobs (its gpu_list)
             * until it ends; not reported as a pair. */
            lucidd_log("job %u: started after its partner %u ended; not a pair", job->rec.job_id,
                       job->rec.packed_with);
            job->rec.packed_with = 0;
            set_phase(job, LUCID_PHASE_RUNNING,
                      "started after its partner ended: runs alone on the GPUs it was packed onto");
        }
    } else if (job->rec.phase == LUCID_PHASE_PROFILING) {
        job->rec.profile_start = sj->start_time;
    }
    save(d, job);
}

/* ---- releases Slurm does not start ----
 * lucid places a job only where the site's rules say Slurm would start it
 * (fit.h), but Slurm has rules lucid cannot see (QOS and association
 * limits, partition limits, a select plugin's choices).  A release Slurm
 * has not started within --release-timeout, or one Slurm says it cannot
 * start there (its reason below), is taken back: held again, unpinned, its
 * own GPU request given back, and queued again with Slurm's reason; the
 * nodes it was pinned to are kept out of its placements for a while (a
 * limit: the job is not placed at all for a while), so it neither holds
 * capacity nor loops. */
#define AVOID_NODES_S 300.0
#define AVOID_LIMIT_S 30.0
/* A pinned release Slurm found no GPUs for (its reason Resources) this
 * long is placed again, its node left out of its placements for a moment
 * only (the node is fine; its GPUs went to another job). */
#define PIN_RESOURCES_S 2.0
#define PIN_RESOURCES_AVOID_S 5.0

/* What a job taken back keeps out of its placements. */
typedef enum {
    AVOID_NONE,       /* nothing: the node is fine (a pair gone, a requeue) */
    AVOID_NODE,       /* the node it was refused on, AVOID_NODES_S */
    AVOID_NODE_BRIEF, /* that node, PIN_RESOURCES_AVOID_S: its GPUs went elsewhere */
    AVOID_ALL         /* every node, AVOID_LIMIT_S: a limit of the site */
} avoid_kind;

static int slurm_limit(const char *reason);

/* Slurm's reasons that say the pinned job will not start there soon. */
static int slurm_refuses(const char *reason)
{
    /* Not ReqNodeNotAvail: Slurm says it, for a moment, of a node still
     * completing its previous job; a node that is down or drained is
     * take_back_from_unusable's, and a lasting refusal the timeout's. */
    static const char *const never[] = {"BadConstraints", "PartitionConfig", "PartitionNodeLimit",
                                        "PartitionTimeLimit", "PartitionDown", "PartitionInactive",
                                        "InvalidQOS", "InvalidAccount", "AccountNotAllowed",
                                        "QOSNotAllowed"};
    for (size_t k = 0; k < sizeof never / sizeof never[0]; k++)
        if (strncmp(reason, never[k], strlen(never[k])) == 0)
            return 1;
    return slurm_limit(reason);
}

static int slurm_limit(const char *reason)
{
    return strncmp(reason, "QOS", 3) == 0 || strncmp(reason, "Assoc", 5) == 0 ||
           strstr(reason, "Limit") != NULL || strstr(reason, "MaxGRES") != NULL ||
           strstr(reason, "MaxCpu") != NULL || strstr(reason, "MaxNode") != NULL ||
           strstr(reason, "MaxJobs") != NULL || strstr(reason, "MaxSubmit") != NULL;
}

/* A released job Slurm found it can never start as it stands (its nodes
 * cannot hold it, every node excluded): Slurm's scheduler holds it itself,
 * priority 0 with reason BadConstraints, not an operator's hold. */
static int slurm_holds_it(const slurm_job *sj)
{
    return sj->state == SJ_PENDING && sj->held && !sj->admin_held &&
           strncmp(sj->reason, "BadConstraints", 14) == 0;
}

static double release_timeout(const lucidd *d)
{
    return d->cfg.release_timeout_s > 0 ? d->cfg.release_timeout_s : 60.0;
}

/* Takes a released job back into its queue (see above); `why` is what its
 * REASON, `lucid explain` and the AdminComment say. */
static void take_back(lucidd *d, lucidd_job *job, const char *why, avoid_kind avoid,
                      double now_mono)
{
    if (!d->slurm_up)
        return; /* slurmctld stopped answering in this tick: tried again at a later one */
    int packed = job->rec.packed_with != 0;
    lucid_phase queue = job->rec.phase == LUCID_PHASE_PROFILING ? LUCID_PHASE_PROFILE_QUEUE
                                                                : LUCID_PHASE_MAIN_QUEUE;
    char comment[256];
    snprintf(comment, sizeof comment, "lucid: %s: %.200s", lucid_phase_name(queue), why);
    int64_t id = record_decision(d, job, "take-back", job->rec.node_list, why);
    settle_writes(d, job->rec.job_id);
    lucid_error err = {{0}};
    int taken = slurm_io_take_back(job->rec.job_id, packed ? job->rec.gpu_request : NULL,
                                   job->user_nodes, comment, &err);
    wrote(job);
    if (taken < 0) {
        note_error(d, &err);
        return; /* tried again next tick */
    }
    ack(d, id);
    snprintf(job->comment_sent, sizeof job->comment_sent, "%s", comment);
    lucidd_log("job %u: taken back from %s: %s", job->rec.job_id, job->rec.node_list, why);
    snprintf(job->took_back, sizeof job->took_back, "%s", why);
    if (avoid == AVOID_ALL) {
        snprintf(job->avoid_nodes, sizeof job->avoid_nodes, "*");
        job->avoid_until = now_mono + AVOID_LIMIT_S;
    } else if (avoid == AVOID_NONE) {
        job->avoid_nodes[0] = '\0';
    } else {
        snprintf(job->avoid_nodes, sizeof job->avoid_nodes, "%s", job->rec.node_list);
        job->avoid_until = now_mono + (avoid == AVOID_NODE ? AVOID_NODES_S : PIN_RESOURCES_AVOID_S);
    }
    unpair(d, job);
    job->rec.packed_with = 0;
    job->rec.node_list[0] = job->rec.gpu_list[0] = '\0';
    job->releasing = 0;
    job->released_at = 0;
    job->was_released = 1;
    job->start_unapplied = 0;
    set_phase(job, queue, why);
    save(d, job);
}

/* While lucid released it but Slurm has not started it. */
static void note_releasing(lucidd *d, lucidd_job *job, const slurm_job *sj, double now_mono)
{
    job->releasing = 1;
    if (job->released_at <= 0)
        job->released_at = now_mono; /* first sight (after a restart of lucidd) */
    snprintf(job->slurm_reason, sizeof job->slurm_reason, "%s", sj->reason);
    char why[256];
    if (job->rec.phase == LUCID_PHASE_RUNNING && job->rec.packed_with && partner_gone(d, job)) {
        take_back(d, job, "its partner ended before it started; waiting again", AVOID_NONE,
                  now_mono);
        return;
    }
    /* As of the listing's read: that is the Slurm it shows. */
    double waited = (d->listing_began > 0 ? d->listing_began : now_mono) - job->released_at;
    if (slurm_refuses(sj->reason)) {
        snprintf(why, sizeof why, "Slurm would not start it on %.100s (Slurm: %.60s)%s",
                 job->rec.node_list, sj->reason,
                 slurm_limit(sj->reason) ? "; a limit of the site: tried again in 30 s"
                                         : "; placed elsewhere");
        take_back(d, job, why, slurm_limit(sj->reason) ? AVOID_ALL : AVOID_NODE, now_mono);
    } else if (waited >= release_timeout(d)) {
        snprintf(why, sizeof why,
                 "Slurm did not start it on %.100s within %.0f s (Slurm: %.60s); placed elsewhere",
                 job->rec.node_list, release_timeout(d), sj->reason[0] ? sj->reason : "none");
        take_back(d, job, why, AVOID_NODE, now_mono);
    } else if (waited >= PIN_RESOURCES_S && job->rec.phase == LUCID_PHASE_RUNNING &&
               !job->rec.packed_with && !job->rec.gpu_list[0] && sj->req_nodes[0] &&
               strcmp(sj->req_nodes, job->user_nodes) != 0 &&
               strcmp(sj->reason, "Resources") == 0) {
        /* Pinned where lucid saw free GPUs, and Slurm found none there:
         * another job took them first (one Slurm started ahead, at an
         * epilog between lucid's read and its release), or Slurm passed
         * it over as a task of an array whose first task it could not
         * start (Slurm 22.05's schedule() tries no other task of that
         * array in the pass, and gives them all the first one's reason).
         * Either way the pin only keeps it from GPUs free elsewhere: it is
         * placed again in this tick, from Slurm's nodes as they are now. */
        snprintf(why, sizeof why,
                 "Slurm found no free GPUs for it on %.100s in %.0f s (Slurm: Resources); "
                 "placed again", job->rec.node_list, waited);
        take_back(d, job, why, AVOID_NODE_BRIEF, now_mono);
    }
}

/* Started in lucid's record, and Slurm still holds it under lucid's hold
 * (or, its start not taken, the plugin's) with no requeue since: the
 * start never reached Slurm (a call of it
 * failed part-way: slurmctld stopped or refused the update), and nothing
 * else would ever release it (an unacknowledged decision is re-applied
 * only at a restart).  Taken back into its queue, with any pin or cleared
 * GPU request of a half-applied start undone, and placed again from
 * Slurm's nodes as they are now; that node is avoided briefly, so a pin
 * Slurm keeps refusing is not retried at every tick. */
static void start_not_applied(lucidd *d, lucidd_job *job, const slurm_job *sj, double now_mono)
{
    /* lucid's own hold is the operator's; a fresh job may still be under
     * the plugin's user hold (lucid makes it its own only 10 s after the
     * submission), and then only a start Slurm did not take tells it from
     * its owner's own `scontrol hold` of a job lucid started. */
    if (sj->state != SJ_PENDING || !sj->held || (!sj->admin_held && !job->start_unapplied))
        return;
    char why[256];
    snprintf(why, sizeof why,
             "lucid's start on %.100s did not reach Slurm (still held); placed again",
             job->rec.node_list[0] ? job->rec.node_list : "its nodes");
    take_back(d, job, why, AVOID_NODE_BRIEF, now_mono);
}

/* ---- releases ahead of the GPUs (--release-ahead) ----
 * Slurm runs its scheduler the moment a job's epilog completes, but a
 * release reaches it only at its next periodic pass (the background loop,
 * about once a second): released after the end, lucid's next job started
 * 0.59 s after the last one (median, slurmctld's log), plain Slurm's 0.29 s.
 * So the jobs at the head of main's queue that no GPUs are free for are
 * released ahead: unpinned, at Slurm priorities below every pinned release
 * and in lucid's order, so Slurm starts them on the first GPUs to free, as
 * it starts its own queue.  Only jobs that leave the node choice to lucid
 * (no -w, no --exclude, no node avoided after a refused release) and fit
 * one node, taken in lucid's order up to the first that is not one (no job
 * passes it), as many GPUs as main has in all; the nodes where lucid knows of GPU use
 * Slurm does not see (packed jobs) are excluded.  A job that leaves the head
 * is held again. */

/* Held again: no longer at the head, or refused by Slurm (`why`: then kept
 * from placements for a while, as a refused pinned release is). */
static void hold_back(lucidd *d, lucidd_job *job, const char *why, double now_mono)
{
    if (!d->slurm_up)
        return;
    settle_writes(d, job->rec.job_id);
    lucid_error err = {{0}};
    int held = slurm_io_admin_hold(job->rec.job_id, &err);
    wrote(job);
    if (held < 0) {
        note_error(d, &err);
        return;
    }
    if (job->ahead_exclude[0] && slurm_io_exclude(job->rec.job_id, job->user_exclude, &err) < 0)
        note_error(d, &err); /* kept: tried again when it is released */
    else
        job->ahead_exclude[0] = '\0';
    job->ahead = 0;
    if (why) {
        lucidd_log("job %u: released ahead, held again: %s", job->rec.job_id, why);
        snprintf(job->took_back, sizeof job->took_back, "%.150s", why);
        snprintf(job->avoid_nodes, sizeof job->avoid_nodes, "*");
        job->avoid_until = now_mono + AVOID_LIMIT_S;
        set_reason(d, job, why);
    }
}

/* Slurm started a job released ahead: it runs where Slurm put it. */
static void started_ahead(lucidd *d, lucidd_job *job, const slurm_job *sj)
{
    job->ahead_exclude[0] = '\0';
    snprintf(job->rec.partition, sizeof job->rec.partition, "%s", d->cfg.main_partition);
    snprintf(job->rec.node_list, sizeof job->rec.node_list, "%s", sj->node_list);
    job->rec.gpu_list[0] = '\0';
    job->rec.packed_with = 0;
    job->rec.reserved_since = 0;
    job->observed_at = 0;
    job->eta_p10 = job->eta_p50 = job->eta_p90 = 0;
    job->eta_none[0] = '\0';
    char reason[200];
    snprintf(reason, sizeof reason,
             "started by Slurm on %.100s the moment its GPUs freed (released ahead at the head "
             "of the main queue)", sj->node_list);
    set_phase(job, LUCID_PHASE_RUNNING, reason);
    char target[300];
    snprintf(target, sizeof target, "%s ahead", sj->node_list);
    ack(d, record_decision(d, job, "start", target, reason));
    note_start(d, job, sj);
    d->started_ahead++;
    char comment[256];
    comment_text(job, comment, sizeof comment);
    lucid_error err = {{0}};
    if (slurm_io_comment(job->rec.job_id, comment, &err) == 0)
        snprintf(job->comment_sent, sizeof job->comment_sent, "%s", comment);
}

/* A held job's request changed (scontrol update after intake): examined again. */
static void resized(lucidd *d, lucidd_job *job, const slurm_job *sj)
{
    /* Released ahead, it excludes what lucid set (its own is none). */
    const char *exclude = job->ahead || job->ahead_exclude[0] ? job->ahead_exclude
                                                              : job->user_exclude;
    if (sj->gpus == job->rec.gpus && sj->nodes == job->rec.nodes &&
        strcmp(sj->gpu_request, job->rec.gpu_request) == 0 && sj->nodes_fixed == job->nodes_fixed &&
        strcmp(sj->req_nodes, job->user_nodes) == 0 && strcmp(sj->exc_nodes, exclude) == 0)
        return;
    lucidd_log("job %u: request changed after intake (%d GPUs on %d nodes -> %d on %d); examined again",
               job->rec.job_id, job->rec.gpus, job->rec.nodes, sj->gpus, sj->nodes);
    copy_request(job, sj);
    estimate(d, job);
    route(d, job, NULL);
    save(d, job);
}

/* Slurm requeued a job that ran on main (a node failure under --requeue, an
 * operator's requeue): the run it cut short stays in the job's history
 * (main_first_start, main_earlier_s: what sacct --duplicates keeps as an
 * earlier record), and main_start waits for the next start.  The run ended
 * when Slurm says, or now if Slurm gives no end within the run. */
static void main_run_cut(lucidd_job *job, const slurm_job *sj, time_t now)
{
    int64_t start = job->rec.main_start;
    if (start <= 0)
        return;
    int64_t end = sj->end_time > start && sj->end_time <= now ? (int64_t)sj->end_time : (int64_t)now;
    if (end > start)
        job->rec.main_earlier_s += end - start;
    if (!job->rec.main_first_start)
        job->rec.main_first_start = start;
    job->rec.main_start = 0;
    job->dirty = 1;
}

static void track(lucidd *d, lucidd_job *job, const slurm_job *sj, const slurm_job *sjobs, long n,
                  time_t now, double now_mono, int continuous)
{
    if (job->restarts_seen < 0)
        job->restarts_seen = sj->restarts; /* first sight after a restart of lucidd */
    job->slurm_submit = sj->submit_time;
    job->time_limit_min = sj->time_limit_min;
    /* Kept with the record from its next save (an update while it waits
     * changes what Slurm kills it at). */
    job->rec.time_limit_s = 60 * (int64_t)sj->time_limit_min;
    job->uid = sj->uid;
    job->fit = sj->fit;
    memcpy(job->qos, sj->qos, sizeof job->qos); /* an operator may change it while it waits */
    if (stale(d, job))
        return; /* judged on a listing read after lucid's writes to it are answered */
    if (sj->state == SJ_COMPLETED || sj->state == SJ_FAILED) {
        /* A requeue passes through an ended state while it completes; a
         * cancelled job is never requeued, and under task/cgroup its
         * completing (cgroup and epilog clean-up) lasts seconds: ended now. */
        int cancelled = strcmp(sj->state_name, "CANCELLED") == 0;
        if (!sj->requeueing && (!sj->completing || cancelled))
            end_job(d, job, sj);
        return;
    }
    switch (job->rec.phase) {
    case LUCID_PHASE_PROFILE_QUEUE:
    case LUCID_PHASE_MAIN_QUEUE:
        if (job->rec.phase == LUCID_PHASE_MAIN_QUEUE && !sj->held && !job->ahead &&
            strstr(sj->admin_comment, AHEAD_MARK)) {
            /* Released ahead by a lucidd before this one (a restart). */
            job->ahead = 1;
            snprintf(job->ahead_exclude, sizeof job->ahead_exclude, "%s", sj->exc_nodes);
        }
        if (job->ahead && sj->state == SJ_RUNNING) {
            started_ahead(d, job, sj);
            break;
        }
        if (job->ahead && sj->held && !slurm_holds_it(sj))
            job->ahead = 0; /* held by its owner or an operator: as any held job */
        if (job->ahead) {
            /* Checked against the exclusion lucid set, before any hold_back
             * gives the job its own back (this listing still has lucid's). */
            resized(d, job, sj);
            eligibility(d, job, sj, sjobs, n, now);
            if (job->ahead && slurm_refuses(sj->reason)) {
                char why[200];
                snprintf(why, sizeof why, "Slurm would not start it (Slurm: %.60s)%s", sj->reason,
                         slurm_limit(sj->reason) ? "; a limit of the site: tried again in 30 s"
                                                 : "");
                hold_back(d, job, why, now_mono);
            }
            break;
        }
        if (sj->state == SJ_RUNNING) {
            int profiling = strcmp(sj->partition, d->cfg.profiling_partition) == 0;
            set_phase(job, profiling ? LUCID_PHASE_PROFILING : LUCID_PHASE_RUNNING,
                      "started outside lucid; adopted");
            save(d, job);
            break;
        }
        if (!sj->held || !sj->admin_held) {
            if (!sj->held && job->rec.user_hold) {
                /* Only its owner or an operator could have released it (the
                 * hand-back watchdog turns lucid's hold into the owner's):
                 * the owner's own hold is lifted. */
                job->rec.user_hold = 0;
                job->waits_for[0] = '\0';
                set_reason(d, job, "its owner released it; waiting for lucid's decision");
                lucidd_log("job %u: released by its owner while lucid was away; held by lucid",
                           job->rec.job_id);
            } else if (!sj->held) {
                lucidd_log("job %u: released behind lucid's back while waiting; held again",
                           job->rec.job_id);
            }
            hold(d, job, sj);
            if (!sj->held) /* nothing of lucid's record changes while the plugin's hold waits */
                save(d, job);
        }
        resized(d, job, sj);
        eligibility(d, job, sj, sjobs, n, now);
        break;
    case LUCID_PHASE_PROFILING:
        if (sj->state == SJ_RUNNING) {
            note_start(d, job, sj);
            /* Counted only between two ticks that both saw Slurm answer: an
             * outage of Slurm or of lucidd adds nothing. */
            double limit_gap = 3.0 * d->cfg.tick_ms / 1000.0 + 1.0;
            if (continuous && job->observed_at > 0 && now_mono - job->observed_at <= limit_gap)
                job->rec.profiled_s += now_mono - job->observed_at;
            job->observed_at = now_mono;
            job->dirty = 1;
            profile_limit(d, job, now_mono);
        } else if (sj->held && sj->restarts > job->restarts_seen) {
            set_phase(job, LUCID_PHASE_MOVING, "requeued by lucid; moving");
            save(d, job);
        } else if (!sj->held || slurm_holds_it(sj)) {
            note_releasing(d, job, sj, now_mono);
        } else {
            start_not_applied(d, job, sj, now_mono);
        }
        break;
    case LUCID_PHASE_MOVING:
        finish_move(d, job, sj);
        break;
    case LUCID_PHASE_RUNNING:
    case LUCID_PHASE_HANDED_BACK:
        if (sj->state != SJ_RUNNING && sj->restarts > job->restarts_seen)
            main_run_cut(job, sj, now);
        if (sj->state == SJ_RUNNING)
            note_start(d, job, sj);
        else if (sj->restarts > job->restarts_seen && job->rec.phase == LUCID_PHASE_RUNNING &&
                 !sj->held) {
            /* Requeued by Slurm unheld (a node failed under a --requeue
             * job): still pinned to that node; placed again. */
            take_back(d, job, "requeued by Slurm (its node failed or an operator requeued it); "
                              "waiting again", AVOID_NONE, now_mono);
        } else if (sj->held && sj->restarts > job->restarts_seen) {
            /* Requeued by Slurm (node failure, an operator...): back to the queue. */
            unpair(d, job);
            job->rec.packed_with = 0;
            job->releasing = 0;
            set_phase(job, LUCID_PHASE_MAIN_QUEUE, "requeued by Slurm; waiting again");
            save(d, job);
        } else if ((!sj->held || slurm_holds_it(sj)) && job->rec.phase == LUCID_PHASE_RUNNING) {
            note_releasing(d, job, sj, now_mono);
        } else if (job->rec.phase == LUCID_PHASE_RUNNING) {
            start_not_applied(d, job, sj, now_mono);
        }
        break;
    default:
        break;
    }
    job->restarts_seen = sj->restarts;
}

static void sample_profiles(lucidd *d, const slurm_job *sjobs, long count)
{
    for (long i = 0; i < count; i++) {
        const slurm_job *sj = &sjobs[i];
        lucidd_job *job = engine_find(d, sj->id);
        if (!job || job->rec.phase != LUCID_PHASE_PROFILING || sj->state != SJ_RUNNING)
            continue;
        int gpus[64];
        lucid_error err = {{0}};
        int n = lucid_gpu_parse_indices(sj->first_gpus, gpus, 64, &err);
        char id[16];
        snprintf(id, sizeof id, "%u", sj->id);
        lucid_gpu_sample sample;
        if (n >= 0 && lucid_gpumetrics_sample(d->metrics, id, gpus, n, &sample, &err) == 0)
            lucid_gpu_profile_add(&job->profile, &sample);
        else
            d->sample_errors++;
    }
}

/* ---- decisions ---- */

/* `list` (a comma list of node names) without those in `drop` (a hostlist),
 * into `out`; returns 1 if any was dropped, 0 if `out` is `list`. */
static int hostlist_minus(const char *list, const char *drop, char *out, size_t size)
{
    int dropped = 0;
    size_t len = 0;
    out[0] = '\0';
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), p);
        if (n && slurm_io_in_hostlist(drop, name)) {
            dropped = 1;
        } else if (n && len + n + 2 <= size) {
            len += (size_t)snprintf(out + len, size - len, "%s%s", len ? "," : "", name);
        }
        p = end ? end + 1 : NULL;
    }
    return dropped;
}

/* A job released ahead that lucid now starts on `nodes`: a pinned
 * release's priority and its comment, and `nodes` taken out of what it
 * excludes (`excluded`, the exclusion its release ahead set), into
 * `kept` when any was (NULL: none changed).  Unpinned: Slurm may be
 * starting it this very moment, and a pin sent to a running job resizes it
 * (sacct records the run twice). */
static int promote_ahead(lucidd_job *job, const char *excluded, const char *nodes,
                         char kept[256], lucid_error *err)
{
    char comment[256];
    comment_text(job, comment, sizeof comment);
    int narrowed = hostlist_minus(excluded, nodes, kept, 256);
    int promoted = slurm_io_promote(job->rec.job_id, comment, slurm_priority(job),
                                    narrowed ? kept : NULL, err);
    wrote(job);
    if (promoted < 0)
        return -1;
    snprintf(job->comment_sent, sizeof job->comment_sent, "%s", comment);
    return narrowed;
}

static void apply_start(lucidd *d, lucidd_job *job, const decide_result *result, int profiling)
{
    int was_ahead = job->ahead && !profiling && !result->partner;
    const char *partition = profiling ? d->cfg.profiling_partition : d->cfg.main_partition;
    snprintf(job->rec.partition, sizeof job->rec.partition, "%s", partition);
    snprintf(job->rec.node_list, sizeof job->rec.node_list, "%s", result->nodes);
    snprintf(job->rec.gpu_list, sizeof job->rec.gpu_list, "%s", result->gpu_list);
    job->rec.packed_with = result->partner;
    job->observed_at = 0;
    job->eta_p10 = job->eta_p50 = job->eta_p90 = 0; /* it starts: no estimate to show */
    job->eta_none[0] = '\0';
    set_phase(job, profiling ? LUCID_PHASE_PROFILING : LUCID_PHASE_RUNNING, result->reason);
    job->releasing = 1;
    job->released_at = monotonic_s();
    snprintf(job->slurm_reason, sizeof job->slurm_reason, "just released");
    lucidd_job *partner = result->partner ? engine_find(d, result->partner) : NULL;
    if (partner) {
        partner->rec.packed_with = job->rec.job_id;
        save(d, partner);
        /* Both halves of a pair say so in scontrol show job. */
        char partner_comment[256];
        snprintf(partner_comment, sizeof partner_comment,
                 "lucid: running; shares its GPUs with packed job %u", job->rec.job_id);
        settle_writes(d, partner->rec.job_id);
        lucid_error comment_err = {{0}};
        if (slurm_io_comment(partner->rec.job_id, partner_comment, &comment_err) == 0)
            snprintf(partner->comment_sent, sizeof partner->comment_sent, "%s", partner_comment);
    }
    /* The packing switch at decision time is kept with it: when it is off
     * the order is strict (no job passes a waiting higher-priority one). */
    /* A packed job on a node with the share GRES asks it, so Slurm
     * accounts its GPUs; kept in the decision for a re-apply. */
    char share_tres[64] = "";
    if (result->partner && result->share_gpus > 0 && d->cfg.share_gres && d->cfg.share_gres[0])
        snprintf(share_tres, sizeof share_tres, "gres:%.30s:%d", d->cfg.share_gres,
                 result->share_gpus);
    char target[sizeof result->nodes + sizeof result->gpu_list + sizeof share_tres + 48];
    snprintf(target, sizeof target, "%s%s%s%s%s%s", result->nodes, result->partner ? " gpus=" : "",
             result->gpu_list, share_tres[0] ? " share=" : "", share_tres,
             profiling ? "" : d->packing_on ? " packing=on" : " packing=off");
    int64_t id = record_decision(d, job, profiling ? "profile" : result->partner ? "pack" : "start",
                                 target, result->reason);
    job->start_unapplied = 1; /* until Slurm has taken it */
    char comment[256];
    comment_text(job, comment, sizeof comment);
    lucid_error err = {{0}};
    if (was_ahead) {
        /* Slurm starts it where it fits, lucid reads where.  The nodes it
         * excluded (packed ones, when it went ahead) lose lucid's choice:
         * a node whose packed jobs have ended since is where lucid may
         * now place it. */
        char kept[sizeof job->ahead_exclude];
        if (write_off_tick(d, job)) {
            lucidd_write wr = {.kind = LUCIDD_WRITE_PROMOTE, .job_id = job->rec.job_id,
                               .decision = id, .priority = slurm_priority(job)};
            comment_text(job, wr.comment, sizeof wr.comment);
            wr.narrow = hostlist_minus(job->ahead_exclude, result->nodes, kept, sizeof kept);
            snprintf(wr.nodes, sizeof wr.nodes, "%s", kept);
            if (lucidd_writer_post(d->writer, &wr) == 0) {
                if (wr.narrow)
                    snprintf(job->ahead_exclude, sizeof job->ahead_exclude, "%s", kept);
                return; /* acknowledged when its outcome is taken (take_writes) */
            }
        }
        settle_writes(d, job->rec.job_id);
        int narrowed = promote_ahead(job, job->ahead_exclude, result->nodes, kept, &err);
        if (narrowed < 0) {
            note_error(d, &err);
            return;
        }
        if (narrowed)
            snprintf(job->ahead_exclude, sizeof job->ahead_exclude, "%s", kept);
        job->start_unapplied = 0;
        ack(d, id);
        return;
    }
    if (job->ahead_exclude[0]) {
        /* Released ahead (set_phase cleared it): its own exclusion back
         * (failing, it is tried again while the job waits). */
        if (slurm_io_exclude(job->rec.job_id, job->user_exclude, &err) == 0)
            job->ahead_exclude[0] = '\0';
        else
            note_error(d, &err);
        wrote(job);
        err = (lucid_error){{0}};
    }
    if (write_off_tick(d, job)) {
        lucidd_write wr = {.kind = LUCIDD_WRITE_START, .job_id = job->rec.job_id,
                           .decision = id, .priority = slurm_priority(job)};
        snprintf(wr.partition, sizeof wr.partition, "%s", partition);
        snprintf(wr.nodes, sizeof wr.nodes, "%s", result->nodes);
        snprintf(wr.packed_gpus, sizeof wr.packed_gpus, "%s",
                 result->partner ? result->gpu_list : "");
        snprintf(wr.share_tres, sizeof wr.share_tres, "%s", share_tres);
        snprintf(wr.comment, sizeof wr.comment, "%s", comment);
        if (lucidd_writer_post(d->writer, &wr) == 0)
            return; /* acknowledged when its outcome is taken (take_writes) */
    }
    settle_writes(d, job->rec.job_id);
    int started = slurm_io_start(job->rec.job_id, partition, result->nodes,
                                 result->partner ? result->gpu_list : NULL, share_tres, comment,
                                 slurm_priority(job), &err);
    wrote(job);
    if (started < 0) {
        note_error(d, &err);
        return; /* unacknowledged: reconcile re-applies or the next tick adopts */
    }
    snprintf(job->comment_sent, sizeof job->comment_sent, "%s", comment);
    job->start_unapplied = 0;
    ack(d, id);
}

/* A request no node set of lucid's could ever hold goes to Slurm as it is,
 * so that Slurm's own reason (and its own refusal) is what the user sees. */
static void hand_back(lucidd *d, lucidd_job *job, const char *why)
{
    char reason[256], comment[256];
    snprintf(reason, sizeof reason, "handed back to Slurm's scheduler: %.200s", why);
    snprintf(comment, sizeof comment, "lucid: %.240s", reason);
    set_phase(job, LUCID_PHASE_HANDED_BACK, reason);
    int64_t id = record_decision(d, job, "hand-back", "", reason);
    settle_writes(d, job->rec.job_id);
    lucid_error err = {{0}};
    int handed = slurm_io_hand_back(job->rec.job_id, comment, &err);
    wrote(job);
    if (handed < 0) {
        note_error(d, &err);
        return;
    }
    ack(d, id);
}

typedef struct node_name {
    const char *name;
    int index;
} node_name;

static int by_node_name(const void *a, const void *b)
{
    return strcmp(((const node_name *)a)->name, ((const node_name *)b)->name);
}

/* nodes[0..nnodes)'s names sorted, for look-ups by name: a tick matched
 * every running job against every node by strcmp (2,000 x 1,000 a tick on
 * bench/tick_latency's cluster).  malloc'ed; NULL when out of memory. */
static node_name *sorted_node_names(const decide_node *nodes, int nnodes)
{
    node_name *names = malloc((size_t)(nnodes > 0 ? nnodes : 1) * sizeof *names);
    if (!names)
        return NULL;
    for (int k = 0; k < nnodes; k++)
        names[k] = (node_name){nodes[k].name, k};
    qsort(names, (size_t)nnodes, sizeof *names, by_node_name);
    return names;
}

/* The index in nodes[] of the node called `name`, or -1; by `names`
 * (sorted_node_names) or, when that could not be had, by a scan. */
static int find_node(const node_name *names, const decide_node *nodes, int nnodes,
                     const char *name)
{
    if (!names) {
        for (int k = 0; k < nnodes; k++)
            if (strcmp(nodes[k].name, name) == 0)
                return k;
        return -1;
    }
    node_name key = {name, 0};
    const node_name *hit = bsearch(&key, names, (size_t)nnodes, sizeof *names, by_node_name);
    return hit ? hit->index : -1;
}

/* Free GPUs per node: Slurm's count, less what lucid released that Slurm has
 * not started yet. */
static int collect_nodes(lucidd *d, const char *partition, const slurm_node *snodes, long n,
                         const slurm_job *sjobs, long nsjobs, decide_node *out, fit_node *fits)
{
    int count = 0;
    for (long i = 0; i < n; i++) {
        if (strcmp(snodes[i].partition, partition) != 0)
            continue;
        fit_node *f = &fits[count];
        *f = snodes[i].fit;
        snprintf(f->name, sizeof f->name, "%s", snodes[i].name);
        f->gpus = snodes[i].gpus;
        f->usable = snodes[i].usable;
        decide_node *node = &out[count++];
        snprintf(node->name, sizeof node->name, "%s", snodes[i].name);
        node->total_gpus = snodes[i].gpus;
        node->free_gpus = snodes[i].usable ? snodes[i].gpus - snodes[i].gpus_used : 0;
        node->slurm_free = node->free_gpus;
        node->share_free = f->share > 0 ? f->share - f->share_used : -1;
        node->settling = 0;
        node->room = fit_room_of(f);
    }
    node_name *names = sorted_node_names(out, count);
    for (long i = 0; i < nsjobs; i++) {
        lucidd_job *job = engine_find(d, sjobs[i].id);
        /* A start still on its way to Slurm (written off the tick), or
         * made after this listing was read, is promised too, though the
         * listing shows the job held. */
        if (!job || sjobs[i].state != SJ_PENDING ||
            (job->rec.phase != LUCID_PHASE_RUNNING && job->rec.phase != LUCID_PHASE_PROFILING) ||
            (sjobs[i].held && !stale(d, job)))
            continue;
        if (job->rec.packed_with) {
            /* A released packed job asks the share GRES of its node, if any. */
            int k = find_node(names, out, count, job->rec.node_list);
            if (k >= 0)
                fit_share_take(&out[k].share_free, job->rec.gpus);
            continue;
        }
        /* Released, not yet running: its GPUs are promised. */
        char nodes[256];
        snprintf(nodes, sizeof nodes, "%s", job->rec.node_list);
        int placed = 1;
        for (const char *c = nodes; *c; c++)
            placed += *c == ',';
        int share = job->rec.gpus / placed;
        char *save_ptr = NULL;
        for (char *name = strtok_r(nodes, ",", &save_ptr); name;
             name = strtok_r(NULL, ",", &save_ptr)) {
            int k = find_node(names, out, count, name);
            if (k >= 0) {
                out[k].free_gpus -= share;
                out[k].slurm_free -= share;
                out[k].settling++;
                fit_room_take(&job->fit, share, &out[k].room); /* its CPUs and memory too */
            }
        }
    }
    /* A packed job uses its partner's GPUs without Slurm knowing; once the
     * partner ends Slurm believes them free, and Slurm picks GPU indices
     * itself.  So no new unpacked job goes to a node with a packed job
     * (released or running) until it ends. */
    for (size_t i = 0; i < d->njobs; i++) {
        const lucid_job_record *r = &d->jobs[i].rec;
        if (r->phase != LUCID_PHASE_RUNNING || !r->gpu_list[0])
            continue;
        int k = find_node(names, out, count, r->node_list);
        if (k >= 0)
            out[k].free_gpus = 0;
    }
    free(names);
    for (int k = 0; k < count; k++) {
        if (out[k].free_gpus < 0)
            out[k].free_gpus = 0;
        if (out[k].slurm_free < 0)
            out[k].slurm_free = 0;
    }
    return count;
}

static decide_job decide_view(const lucidd_job *job)
{
    decide_job view = {.id = job->rec.job_id,
                       .gpus = job->rec.gpus,
                       .nodes = job->nodes_fixed ? job->rec.nodes : 0,
                       .priority = order_of(job),
                       .sharing_score = job->rec.sharing_score,
                       .estimate_s = job->rec.estimate_s,
                       .holds = job->rec.reserved_since != 0};
    lucid_gpu_sample mean = lucid_gpu_profile_result(&job->profile);
    view.gmem_mib = mean.gmem_used_mib;
    return view;
}

typedef struct node_sizes {
    int count, total, largest; /* nodes, their GPUs, the largest node's */
} node_sizes;

static node_sizes sizes_of(const decide_node *nodes, int nnodes, const unsigned char *mask)
{
    node_sizes z = {0, 0, 0};
    for (int k = 0; k < nnodes; k++) {
        if (mask && !mask[k])
            continue;
        z.count++;
        z.total += nodes[k].total_gpus;
        if (nodes[k].total_gpus > z.largest)
            z.largest = nodes[k].total_gpus;
    }
    return z;
}

/* Whether some set of the nodes sized `z` could ever hold the job: 1 yes,
 * 0 never (why says which limit). */
static int placeable(const lucidd_job *job, node_sizes z, char *why, size_t size)
{
    int count = z.count, total = z.total, largest = z.largest;
    const lucid_job_record *r = &job->rec;
    if (count == 0) {
        snprintf(why, size, "no node of its partition is left by -w %.60s / --exclude %.60s",
                 job->user_nodes[0] ? job->user_nodes : "(none)",
                 job->user_exclude[0] ? job->user_exclude : "(none)");
        return 0;
    }
    if (job->nodes_fixed && r->nodes > count) {
        snprintf(why, size, "asks for %d nodes; only %d may be used", r->nodes, count);
        return 0;
    }
    int per_node = job->nodes_fixed && r->nodes > 0 ? (r->gpus + r->nodes - 1) / r->nodes : r->gpus;
    if (job->nodes_fixed && per_node > largest) {
        snprintf(why, size, "asks for %d GPUs per node; the largest node it may use has %d",
                 per_node, largest);
        return 0;
    }
    if (r->gpus > total) {
        snprintf(why, size, "asks for %d GPUs; the nodes it may use have %d", r->gpus, total);
        return 0;
    }
    return 1;
}

/* A backfill reservation, once given, is kept until its job starts (the
 * simulator's rule; decide_main places the jobs that hold one first).  The
 * state store keeps when it was given (rec.reserved_since), so a restarted
 * lucidd keeps the promise: its first decision places those jobs first
 * again.  Written at once: a reservation is given or dropped rarely. */
static void keep_reservation(lucidd *d, lucidd_job *job, const decide_result *result)
{
    int holds = result->holds && !result->start;
    if (holds == (job->rec.reserved_since != 0))
        return;
    if (result->start) {
        job->rec.reserved_since = 0; /* written with the start's decision */
        return;
    }
    if (holds) {
        job->rec.reserved_since = (int64_t)time(NULL);
        lucidd_log("job %u: holds a backfill reservation until it starts", job->rec.job_id);
    } else {
        job->rec.reserved_since = 0;
        lucidd_log("job %u: backfill reservation dropped (backfill is %s)", job->rec.job_id,
                   lucid_backfill_mode_name(d->cfg.backfill));
    }
    save(d, job);
}

/* A job that holds a reservation and leaves the jobs lucid may start (it
 * ended, was handed back, or Slurm would not run it now: a hold, a
 * dependency) gives it up: it could not use it, and kept it would come back
 * ahead of every job that waited meanwhile. */
static void drop_unusable_reservations(lucidd *d)
{
    for (size_t i = 0; i < d->njobs; i++) {
        lucidd_job *job = &d->jobs[i];
        if (!job->rec.reserved_since ||
            (job->rec.phase == LUCID_PHASE_MAIN_QUEUE && !job->waits_for[0]))
            continue;
        lucidd_log("job %u: backfill reservation dropped (%s)", job->rec.job_id,
                   job->rec.phase != LUCID_PHASE_MAIN_QUEUE ? lucid_phase_name(job->rec.phase)
                                                            : job->waits_for);
        job->rec.reserved_since = 0;
        save(d, job);
    }
}

static int is_standin(const lucidd_job *job);

static void apply_results(lucidd *d, const decide_result *results, int n, int profiling)
{
    for (int i = 0; i < n && d->slurm_up; i++) {
        lucidd_job *job = engine_find(d, results[i].id);
        if (!job)
            continue;
        if (!profiling && job->rec.phase == LUCID_PHASE_PROFILE_QUEUE && results[i].start) {
            /* --profiler-yield: main starts it before the profiler would. */
            set_phase(job, LUCID_PHASE_MAIN_QUEUE,
                      "not profiled: main has GPUs for it now, before any job it outranks");
            d->profiler_bypassed++;
        } else if (!profiling && is_standin(job)) {
            /* --profiler-yield's stand-ins: placed, a profiling run ends
             * now; a moving job keeps its place until it arrives. */
            if (results[i].start)
                yield_profiler(d, job, &results[i], monotonic_s());
            continue;
        }
        job->reserved_at = results[i].reserved_at >= 0 ? results[i].reserved_at : 0;
        snprintf(job->reserved_nodes, sizeof job->reserved_nodes, "%s",
                 results[i].reserved_at >= 0 ? results[i].reserved_nodes : "");
        if (!profiling)
            keep_reservation(d, job, &results[i]);
        if (results[i].start) {
            apply_start(d, job, &results[i], profiling);
        } else if (job->took_back[0] && job->avoid_until > monotonic_s()) {
            char reason[256];
            snprintf(reason, sizeof reason, "%.120s (taken back: %.120s)", results[i].reason,
                     job->took_back);
            set_reason(d, job, reason);
        } else {
            set_reason(d, job, results[i].reason);
        }
    }
}

/* Whether this site's Slurm lets a packed job reach its partner's GPUs
 * (fit_packing_safe), read at the first tick and every 10 minutes; a change
 * is logged once. */
static void check_packing_safety(lucidd *d)
{
    time_t now = time(NULL);
    if (d->pack_checked_at && now - d->pack_checked_at < 600)
        return;
    char why[256];
    lucid_error err = {{0}};
    int safe = slurm_io_packing_safety(why, sizeof why, &err);
    if (safe < 0) {
        note_error(d, &err);
        return;
    }
    if (!safe && strcmp(why, d->pack_refused) != 0)
        lucidd_log("packing refused on this site: %s; lucid does not pack (docs/live.md)", why);
    else if (safe && (d->pack_refused[0] || !d->pack_checked_at))
        lucidd_log("packing possible: %s", why);
    snprintf(d->pack_refused, sizeof d->pack_refused, "%s", safe ? "" : why);
    d->pack_checked_at = now;
}

static void update_packing(lucidd *d, const decide_job *waiting, int nwaiting,
                           const decide_node *nodes, int nnodes)
{
    check_packing_safety(d);
    if (d->pack_refused[0]) { /* never a packed job without its GPUs */
        d->packing_on = 0;
        return;
    }
    if (d->cfg.packing_mode >= 0) {
        d->packing_on = d->cfg.packing_mode;
        return;
    }
    long wanted = 0, free_gpus = 0;
    for (int i = 0; i < nwaiting; i++)
        wanted += waiting[i].gpus;
    for (int k = 0; k < nnodes; k++)
        free_gpus += nodes[k].free_gpus;
    d->packing_on = wanted > free_gpus;
}

/* ---- where Slurm would start a job (fit.h) ----
 * A job's node mask: the nodes of this decision Slurm would start it on
 * now (its -w / --exclude, the nodes it was just refused on, and fit.h's
 * rules: state, reservations, type, features, CPUs and memory configured),
 * and the nodes that could ever hold it (for the hand-back rule).  Only
 * jobs that ask more than GPUs of a uniform partition get one. */
typedef struct partition_view {
    const decide_node *nodes;
    const fit_node *fits;
    int nnodes;
    int uniform;   /* every node usable, same type, no reservation, none smaller */
    fit_node least; /* the smallest CPUs and memory of any node */
} partition_view;

static partition_view view_of(const decide_node *nodes, const fit_node *fits, int nnodes)
{
    partition_view v = {.nodes = nodes, .fits = fits, .nnodes = nnodes, .uniform = 1};
    for (int k = 0; k < nnodes; k++) {
        const fit_node *f = &fits[k];
        if (!f->usable || f->nwindows > 0 || f->features[0] ||
            strcmp(f->gpu_type, fits[0].gpu_type) != 0)
            v.uniform = 0;
        if (k == 0 || f->cpus < v.least.cpus)
            v.least.cpus = f->cpus;
        if (k == 0 || f->mem_mib < v.least.mem_mib)
            v.least.mem_mib = f->mem_mib;
    }
    v.least.gpus = 1 << 20;
    v.least.usable = 1;
    return v;
}

static int avoiding(const lucidd_job *job, double now_mono)
{
    return job->avoid_nodes[0] && now_mono < job->avoid_until;
}

/* GPUs the job gets on each node it uses (the check's per-node share). */
static int gpus_here(const lucidd_job *job, const fit_node *f)
{
    if (job->nodes_fixed && job->rec.nodes > 0)
        return (job->rec.gpus + job->rec.nodes - 1) / job->rec.nodes;
    return job->rec.gpus < f->gpus ? job->rec.gpus : f->gpus;
}

static int needs_mask(const lucidd_job *job, const partition_view *v, double now_mono)
{
    if (job->user_nodes[0] || job->user_exclude[0] || avoiding(job, now_mono) || !v->uniform ||
        job->fit.gpu_type[0] || job->fit.features[0])
        return 1;
    return !fit_node_ever(&job->fit, job->rec.gpus < 1 ? 0 : 1, &v->least, NULL, 0);
}

/* `now_mask` / `ever_mask` over the view's nodes; returns how many nodes
 * the job may use now, and says in `why` why the first refused node was. */
static int build_masks(const lucidd_job *job, const partition_view *v, int64_t now, double now_mono,
                       unsigned char *now_mask, unsigned char *ever_mask, char *why, size_t size)
{
    int usable = 0;
    int avoid = avoiding(job, now_mono);
    if (why && size)
        why[0] = '\0';
    for (int k = 0; k < v->nnodes; k++) {
        const char *name = v->nodes[k].name;
        int chosen = !(job->user_nodes[0] && !slurm_io_in_hostlist(job->user_nodes, name)) &&
                     !(job->user_exclude[0] && slurm_io_in_hostlist(job->user_exclude, name));
        int here = gpus_here(job, &v->fits[k]);
        char first[160] = "";
        ever_mask[k] = chosen && fit_node_ever(&job->fit, here, &v->fits[k], NULL, 0);
        now_mask[k] = ever_mask[k] &&
                      fit_node_now(&job->fit, here, &v->fits[k], now, first, sizeof first) &&
                      !(avoid && (strcmp(job->avoid_nodes, "*") == 0 ||
                                  slurm_io_in_hostlist(job->avoid_nodes, name)));
        if (ever_mask[k] && !now_mask[k] && why && size && !why[0] && first[0])
            snprintf(why, size, "%s", first);
        usable += now_mask[k];
    }
    return usable;
}

/* --exclusive: Slurm gives it every GPU of each node it gets. */
static void whole_nodes(lucidd *d, lucidd_job *job, decide_job *view, node_sizes ever)
{
    if (!job->fit.whole || ever.largest <= 0)
        return;
    int nodes = job->nodes_fixed && job->rec.nodes > 0 ? job->rec.nodes : 1;
    int gpus = nodes * ever.largest;
    if (gpus > job->rec.gpus) {
        lucidd_log("job %u: --exclusive: counted as %d GPUs (%d whole nodes), not %d",
                   job->rec.job_id, gpus, nodes, job->rec.gpus);
        job->rec.gpus = gpus;
        save(d, job);
    }
    view->gpus = job->rec.gpus;
    view->nodes = nodes;
}

/* Waiting jobs of `phase` that Slurm would run now, with their node masks;
 * the profiler's that no profiling node can take (of its type, with its
 * CPUs, or none usable now) go to the main queue, the main queue's that no
 * node set could ever hold are handed back. */
/* A waiting job the decision leaves out says why it has no start estimate
 * (the short form: its REASON says the rest). */
static void no_estimate(lucidd_job *job, const char *why)
{
    job->eta_p10 = job->eta_p50 = job->eta_p90 = 0;
    job->eta_ahead = 0;
    snprintf(job->eta_none, sizeof job->eta_none, "%.*s", (int)sizeof job->eta_none - 1, why);
}

/* The QOS weight in the order: only where some QOS has a priority (a site
 * whose QOS all have priority 0 keeps lucid's order, as Slurm's QOS factor
 * is then 0 for every job). */
static double qos_weight_in_order(const lucidd *d)
{
    return d->qos_weight > 0 && limits_qos_top(&d->limits) > 0 ? d->qos_weight : 0;
}

/* The profiler's queue order: the site's priority (fair share, age, QOS)
 * where lucidd weighs it, else the reference profiler's fewest GPUs first. */
static lucid_queue_order profiler_order(const lucidd *d)
{
    int site = d->fairshare_weight > 0 || d->cfg.age_weight > 0 || qos_weight_in_order(d) > 0;
    return site ? LUCID_ORDER_PRIORITY : LUCID_ORDER_FEWEST_GPUS;
}

static int gather_waiting(lucidd *d, lucid_phase phase, const partition_view *v,
                          const fit_limits *limits, decide_job *waiting, unsigned char *masks,
                          double now_mono)
{
    int nnodes = v->nnodes;
    size_t nmasks = 0;
    node_sizes all = sizes_of(v->nodes, nnodes, NULL);
    int count = 0;
    int64_t now = (int64_t)time(NULL);
    unsigned char *ever = nnodes > 0 ? malloc((size_t)nnodes) : NULL;
    int unknown = 0; /* nodes slurmctld has not heard from since it started */
    for (int k = 0; k < nnodes; k++)
        unknown += !v->fits[k].usable && strncmp(v->fits[k].state, "UNKNOWN", 7) == 0;
    for (size_t i = 0; i < d->njobs; i++) {
        lucidd_job *job = &d->jobs[i];
        if (job->rec.phase != phase || job->waits_for[0])
            continue;
        char why[200] = "", now_why[160] = "";
        if (avoiding(job, now_mono) && strcmp(job->avoid_nodes, "*") == 0) {
            /* Refused for a limit of the site: not placed for a while. */
            snprintf(why, sizeof why, "refused by a site limit; placed again in %.0f s",
                     job->avoid_until - now_mono + 0.5);
            no_estimate(job, why);
            continue;
        }
        /* The site's GPU limits (fit.h): over one by its own count, it can
         * never start: Slurm's to keep; its user at one now, it waits and
         * holds nothing (the profiler takes the next job). */
        const fit_limits *lim = limits && limits[i].count ? &limits[i] : NULL;
        if (!fit_limits_ever(lim, job->rec.gpus, why, sizeof why)) {
            hand_back(d, job, why);
            continue;
        }
        if (!fit_limits_now(lim, job->rec.gpus, why, sizeof why)) {
            set_reason(d, job, why);
            no_estimate(job, "its user is at a limit of the site");
            continue;
        }
        decide_job view = decide_view(job);
        view.fit = &job->fit;
        view.limits = lim;
        if (job->ahead)
            view.sharing_score = -1; /* released ahead: Slurm may start it any moment, so
                                      * its request is not changed (packing clears it) */
        unsigned char *mask = NULL;
        node_sizes ever_sizes = all;
        int usable_now = nnodes;
        if (nnodes > 0 && ever && needs_mask(job, v, now_mono)) {
            mask = masks + nmasks * (size_t)nnodes;
            usable_now = build_masks(job, v, now, now_mono, mask, ever, now_why, sizeof now_why);
            ever_sizes = sizes_of(v->nodes, nnodes, ever);
        }
        if (phase == LUCID_PHASE_PROFILE_QUEUE) {
            if (nnodes > 0 && (job->rec.gpus > ever_sizes.largest || ever_sizes.count == 0)) {
                snprintf(why, sizeof why, "not profiled (no profiling node%s%s can hold it); in the main queue",
                         job->fit.gpu_type[0] ? " of type " : "", job->fit.gpu_type);
                set_phase(job, LUCID_PHASE_MAIN_QUEUE, why);
                save(d, job);
                continue;
            }
            if (nnodes > 0 && usable_now == 0 && unknown > 0) {
                /* slurmctld has not heard from a profiling node since it
                 * started (its state UNKNOWN until slurmd registers, at
                 * most SlurmdTimeout): wait for it, not past the profiler. */
                set_reason(d, job, "waiting for the profiler: Slurm does not know its node's state yet "
                                   "(slurmctld just started)");
                no_estimate(job, "the profiler's node is not yet known to Slurm");
                continue;
            }
            if (nnodes > 0 && usable_now == 0) {
                snprintf(why, sizeof why, "not profiled (the profiler cannot take it now: %.120s); in the main queue",
                         now_why[0] ? now_why : "no usable profiling node");
                set_phase(job, LUCID_PHASE_MAIN_QUEUE, why);
                save(d, job);
                continue;
            }
        } else if (nnodes > 0) {
            whole_nodes(d, job, &view, ever_sizes);
            if (!placeable(job, ever_sizes, why, sizeof why)) {
                hand_back(d, job, why);
                continue;
            }
            if (mask && usable_now == 0) {
                /* Every node it could use is down, drained or reserved: it
                 * waits, and says which rule keeps it out. */
                snprintf(why, sizeof why, "no node it may use can start it now: %.150s",
                         now_why[0] ? now_why : "refused there by Slurm a moment ago");
                if (job->took_back[0] && avoiding(job, now_mono))
                    snprintf(why, sizeof why, "waiting (taken back: %.150s)", job->took_back);
                set_reason(d, job, why);
                no_estimate(job, "no node it may use can start it now");
                continue;
            }
        }
        if (mask && usable_now < nnodes) {
            view.node_ok = mask;
            nmasks++;
        }
        waiting[count++] = view;
    }
    free(ever);
    return count;
}

/* ---- profiling never delays a main start (--profiler-yield) ----
 * Profiling is for while a job would wait anyway.  A job waiting for the
 * profiler (one it did not take this tick), one the profiler is running,
 * and one it requeued that lucid is moving to main take part in main's
 * decision as stand-ins at their own priority.  Only where main's GPUs are
 * contended (a job of the main queue is left waiting) does a stand-in act
 * (otherwise nobody takes those GPUs meanwhile), and only one whose
 * priority is better than every such job's (not by the ids' tie-break: a
 * round trip among equals idles GPUs for nothing).  Placed there, the waiting
 * job starts on main unprofiled (apply_results), the profiling run ends now
 * (yield_profiler) instead of at the limit, and the moving job keeps the
 * GPUs it was placed on for the tick or two of its move, so no job it
 * outranks takes them meanwhile.  Without this a light user's job profiled
 * behind a heavy user's backlog came out of the profiler a second after the
 * turnover it outranked every heavy job for, and waited a whole round of the
 * backlog for the next one (the fair-share lab, docs/live.md).  A stand-in
 * asks GPUs only (the jobs that need node masks profile as before) and never
 * packs; a running or moving one is not counted against its user's limits
 * (its profiling run already is, and the move swaps those GPUs for main's).
 * A stand-in that is not placed must not hold the queue: main's decision is
 * made again without those (decide_and_apply). */
#define STANDIN_MOVING_S 60 /* a move that takes longer holds nothing */

static int is_standin(const lucidd_job *job)
{
    return job->rec.phase == LUCID_PHASE_PROFILE_QUEUE ||
           job->rec.phase == LUCID_PHASE_PROFILING || job->rec.phase == LUCID_PHASE_MOVING;
}

static int gather_standins(lucidd *d, const partition_view *v, const slurm_job *sjobs,
                           long nsjobs, const fit_limits *limits, decide_job *waiting, int count,
                           double now_mono)
{
    if (!d->cfg.profiler_yield || v->nnodes <= 0)
        return count;
    int64_t now = (int64_t)time(NULL);
    for (size_t i = 0; i < d->njobs; i++) {
        lucidd_job *job = &d->jobs[i];
        if (!is_standin(job) || job->waits_for[0] || needs_mask(job, v, now_mono))
            continue;
        const fit_limits *lim = NULL;
        if (job->rec.phase == LUCID_PHASE_PROFILE_QUEUE) {
            /* Waiting for the profiler (it did not take it this tick). */
            lim = limits && limits[i].count ? &limits[i] : NULL;
            if (avoiding(job, now_mono) || !fit_limits_now(lim, job->rec.gpus, NULL, 0))
                continue;
        } else if (job->rec.phase == LUCID_PHASE_MOVING) {
            if (now - job->rec.phase_since > STANDIN_MOVING_S)
                continue;
        } else {
            const slurm_job *sj = find_slurm(sjobs, nsjobs, job->rec.job_id);
            if (job->releasing || !sj || sj->state != SJ_RUNNING)
                continue; /* not running yet: nothing to end */
        }
        decide_job view = decide_view(job);
        view.fit = &job->fit;
        view.limits = lim;
        view.sharing_score = -1;
        view.holds = 0;
        waiting[count++] = view;
    }
    return count;
}

/* A job lucid released onto a node that went down, was drained or is now
 * reserved before its time limit ends: Slurm will not start it there. */
static void take_back_from_unusable(lucidd *d, lucid_phase phase, const partition_view *v,
                                    double now_mono)
{
    if (v->uniform)
        return;
    int64_t now = (int64_t)time(NULL);
    for (size_t i = 0; i < d->njobs; i++) {
        lucidd_job *job = &d->jobs[i];
        if (!job->releasing || job->rec.phase != phase || !job->rec.node_list[0])
            continue;
        for (int k = 0; k < v->nnodes; k++) {
            char why[200];
            if (!slurm_io_in_hostlist(job->rec.node_list, v->nodes[k].name) ||
                fit_node_now(&job->fit, 0, &v->fits[k], now, why, sizeof why))
                continue;
            char reason[256];
            snprintf(reason, sizeof reason, "released onto %.60s, but %.140s; placed elsewhere",
                     job->rec.node_list, why);
            take_back(d, job, reason, AVOID_NODE, now_mono);
            break;
        }
    }
}

/* ---- start-time estimates ----
 * Each waiting job's P10/P50/P90 start, by the core's predictor through
 * decide_predict (the simulator's: the queue's own order on the profile of
 * the busy jobs' estimated ends, their remaining time conditioned on how
 * long they have run, the ratios actual/estimate of jobs that ended).  Made
 * when a queue or its busy jobs changed, else at most every
 * ETA_REFRESH_S: the estimates are absolute times and stay true while
 * nothing changes, and a tick must stay cheap. */
#define ETA_REFRESH_S 60.0

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A job that held GPUs on the main partition and ended teaches the
 * predictor how long jobs really hold GPUs against their estimate, whatever
 * its outcome (one that fails early frees its GPUs early too). */
static void learn_ratio(lucidd *d, const lucidd_job *job)
{
    const lucid_job_record *r = &job->rec;
    if (strcmp(r->ended_in, "main") != 0 || r->main_start <= 0 || r->end_time <= r->main_start ||
        !(r->estimate_s > 0))
        return;
    double ratio = (double)(r->end_time - r->main_start) / r->estimate_s;
    if (!(ratio > 0) || !isfinite(ratio))
        return;
    /* The table keeps the newest ENGINE_RATIO_WINDOW ratios (between one and
     * two windows of them): memory stays bounded over months. */
    if (!d->recent_ratios && !(d->recent_ratios = malloc(ENGINE_RATIO_WINDOW * sizeof(double))))
        return;
    d->recent_ratios[d->recent_next] = ratio;
    d->recent_next = (d->recent_next + 1) % ENGINE_RATIO_WINDOW;
    if (d->nrecent < ENGINE_RATIO_WINDOW)
        d->nrecent++;
    lucid_eta_table *t = &d->eta_table;
    if (t->n + 1 >= 2 * ENGINE_RATIO_WINDOW) {
        t->n = t->sorted = 0;
        t->sum = 0;
        for (size_t k = 0; k < d->nrecent; k++)
            lucid_eta_table_add(t, d->recent_ratios[k]);
        return; /* the ratio just kept is among them */
    }
    lucid_eta_table_add(t, ratio);
}

/* Why a waiting job has no estimate, in a user's words ("" if it has one). */
static const char *eta_none_reason(const lucidd_job *job)
{
    if (job->rec.phase == LUCID_PHASE_HANDED_BACK)
        return "handed back to Slurm's scheduler";
    if (job->rec.phase == LUCID_PHASE_MOVING)
        return "moving to the main queue";
    if (strcmp(job->waits_for, "user-hold") == 0)
        return "held by its owner (lucid release)";
    if (strcmp(job->waits_for, "dependency") == 0)
        return "waits for its dependency";
    if (strcmp(job->waits_for, "begin") == 0)
        return "waits for its begin time";
    if (job->waits_for[0])
        return "Slurm would not run it yet";
    return "";
}

/* Jobs lucid cannot predict say why; jobs no longer waiting carry none. */
static void eta_clear_unpredictable(lucidd *d)
{
    for (size_t i = 0; i < d->njobs; i++) {
        lucidd_job *job = &d->jobs[i];
        const char *why = eta_none_reason(job);
        int waiting = queued(job->rec.phase) || job->rec.phase == LUCID_PHASE_MOVING ||
                      job->rec.phase == LUCID_PHASE_HANDED_BACK;
        if (waiting && !*why)
            continue; /* predicted (kept from the last prediction meanwhile) */
        if (!waiting && !job->eta_p50 && !job->eta_none[0] && !job->reserved_at)
            continue; /* already clear: most of the table, every tick */
        job->eta_p10 = job->eta_p50 = job->eta_p90 = 0;
        job->eta_ahead = 0;
        snprintf(job->eta_none, sizeof job->eta_none, "%s", waiting ? why : "");
        job->reserved_at = 0;
        job->reserved_nodes[0] = '\0';
    }
}

/* The nodes of `list` ("n1,n2" as lucid writes it, or a Slurm host list)
 * as indices into nodes[]. */
static void busy_nodes(decide_busy *b, const char *list, const node_name *names, int nnodes,
                       const decide_node *nodes)
{
    b->nnodes = 0;
    char copy[4096];
    if (strchr(list, '[')) {
        /* A compressed host list (Slurm's, of a job it started): its names
         * from Slurm's parser once, not one parse per node of the cluster
         * (1,000 parses a multi-node job at every estimate). */
        if (slurm_io_hostlist_expand(list, copy, sizeof copy) < 0 && !copy[0]) {
            for (int k = 0; k < nnodes && b->nnodes < DECIDE_BUSY_NODES; k++)
                if (slurm_io_in_hostlist(list, nodes[k].name))
                    b->node[b->nnodes++] = k;
            return;
        }
    } else {
        snprintf(copy, sizeof copy, "%s", list);
    }
    char *save_ptr = NULL;
    for (char *name = strtok_r(copy, ",", &save_ptr); name && b->nnodes < DECIDE_BUSY_NODES;
         name = strtok_r(NULL, ",", &save_ptr)) {
        int k = find_node(names, nodes, nnodes, name);
        if (k >= 0)
            b->node[b->nnodes++] = k;
    }
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ULL;
}

/* The jobs holding GPUs of one partition's nodes (profiling: the
 * profiler's), as the profile sees them; malloc'ed, NULL when out of memory. */
static decide_busy *collect_busy(lucidd *d, int profiling, const decide_node *nodes, int nnodes,
                                 int *count)
{
    lucid_phase busy_phase = profiling ? LUCID_PHASE_PROFILING : LUCID_PHASE_RUNNING;
    const char *partition = profiling ? d->cfg.profiling_partition : d->cfg.main_partition;
    size_t count_busy = 1; /* sized to what is there: a fresh 2 MB per tick is page faults */
    for (size_t i = 0; i < d->njobs; i++)
        count_busy += d->jobs[i].rec.phase == busy_phase;
    decide_busy *busy = malloc(count_busy * sizeof *busy);
    node_name *names = sorted_node_names(nodes, nnodes);
    *count = 0;
    if (!busy || !names) {
        free(busy);
        free(names);
        return NULL;
    }
    int64_t now = (int64_t)time(NULL);
    int nbusy = 0;
    for (size_t i = 0; i < d->njobs; i++) {
        const lucidd_job *job = &d->jobs[i];
        const lucid_job_record *r = &job->rec;
        if (r->phase != busy_phase || strcmp(r->partition, partition) != 0)
            continue;
        decide_busy *b = &busy[nbusy++];
        int64_t start = profiling ? r->profile_start : r->main_start;
        *b = (decide_busy){.id = r->job_id, .gpus = r->gpus, .estimate_s = r->estimate_s,
                           .start = job->releasing || start <= 0 ? now : start,
                           .partner = r->packed_with, .priority = r->priority,
                           .sharing_score = r->sharing_score,
                           .gmem_mib = lucid_gpu_profile_result(&job->profile).gmem_used_mib};
        if (profiling && (b->estimate_s <= 0 || b->estimate_s > d->cfg.profile_limit_s))
            b->estimate_s = d->cfg.profile_limit_s; /* the profiler stops it there */
        busy_nodes(b, r->node_list, names, nnodes, nodes);
    }
    free(names);
    *count = nbusy;
    return busy;
}

/* The jobs that joined lucid's queues in the last LUCID_ETA_GHOST_WINDOW s
 * before `now` (d->eta_table's arrivals: their ids), the latest
 * LUCID_ETA_MAX_GHOSTS of them, oldest first, as they are now: Lucid's
 * packing replay mirrors them as arrivals to come, as the simulator's does.
 * Returns how many (out has room for LUCID_ETA_MAX_GHOSTS). */
static int recent_arrivals(lucidd *d, int64_t now, decide_arrival *out)
{
    const lucid_eta_table *t = &d->eta_table;
    int n = 0;
    for (size_t a = t->narr; a-- > t->arr_head && n < LUCID_ETA_MAX_GHOSTS;) {
        const lucid_eta_arrival *r = &t->arrivals[a];
        if (r->time >= now)
            continue;
        if (r->time < now - LUCID_ETA_GHOST_WINDOW)
            break;
        lucidd_job *job = engine_find(d, (uint32_t)r->job);
        if (job)
            out[n++] = (decide_arrival){r->time, decide_view(job)};
    }
    for (int i = 0; i < n / 2; i++) { /* newest first -> oldest first */
        decide_arrival tmp = out[i];
        out[i] = out[n - 1 - i];
        out[n - 1 - i] = tmp;
    }
    return n;
}

/* A job joined lucid's queues (taken in, or loaded from the store at start):
 * noted at its submission for recent_arrivals.  The table keeps arrivals in
 * time order (it drops the oldest first), and jobs are taken in in id
 * order, whose submission times may step back a little: such a job is
 * noted at the time of the one before it.  One submitted before the window
 * is no arrival to come (a backlog taken in after an outage). */
static void note_arrival(lucidd *d, const lucidd_job *job)
{
    int64_t now = (int64_t)time(NULL);
    int64_t at = job->rec.submit_time > 0 ? job->rec.submit_time : now;
    const lucid_eta_table *t = &d->eta_table;
    if (at < now - LUCID_ETA_GHOST_WINDOW)
        return;
    if (t->narr > t->arr_head && t->arrivals[t->narr - 1].time > at)
        at = t->arrivals[t->narr - 1].time;
    if (lucid_eta_table_note_arrival(&d->eta_table, (int32_t)job->rec.job_id, at) < 0)
        lucidd_log_level(LOG_ERR, "out of memory noting job %u's arrival", job->rec.job_id);
}

/* Predicts the waiting jobs of one queue (profiling: the profiler's) that
 * did not start in this decision; `waiting`/`results` as the decision left
 * them, `nodes` with its placements. */
static void predict_queue(lucidd *d, decide_job *waiting, const decide_result *results, int n,
                          const decide_node *nodes, int nnodes, int profiling, double now_mono)
{
    decide_job *pending = malloc((size_t)(n > 0 ? n : 1) * sizeof *pending);
    decide_busy *busy = NULL;
    decide_eta *eta = malloc((size_t)(n > 0 ? n : 1) * sizeof *eta);
    if (!pending || !eta)
        goto done;
    uint64_t sig = 0xcbf29ce484222325ULL;
    int np = 0, nbusy = 0;
    for (int k = 0; k < n; k++) {
        if (results[k].start)
            continue;
        pending[np] = waiting[k];
        pending[np].holds = results[k].holds; /* as this decision left it */
        if (profiling && pending[np].estimate_s > d->cfg.profile_limit_s)
            pending[np].estimate_s = d->cfg.profile_limit_s; /* the profiler stops it there */
        sig = mix(sig, waiting[k].id);
        np++;
    }
    busy = collect_busy(d, profiling, nodes, nnodes, &nbusy);
    if (!busy)
        goto done;
    for (int k = 0; k < nbusy; k++)
        sig = mix(mix(sig, busy[k].id ^ 0x80000000u), (uint64_t)busy[k].nnodes);
    sig = mix(sig, (uint64_t)np);
    int q = profiling ? 1 : 0;
    if (sig == d->eta_signature[q] && now_mono - d->eta_at[q] < ETA_REFRESH_S)
        goto done; /* nothing changed: the absolute estimates stand */
    double cpu0 = thread_cpu_s();
    decide_arrival arrivals[LUCID_ETA_MAX_GHOSTS];
    decide_horizon horizon = {.now = (int64_t)time(NULL), .busy = busy, .nbusy = nbusy, .table = &d->eta_table,
                              .arrivals = arrivals};
    if (!profiling && d->packing_on && !d->cfg.backfill)
        horizon.narrivals = recent_arrivals(d, horizon.now, arrivals);
    decide_params params = {.packing = profiling ? 0 : d->packing_on,
                            .gpu_memory_mib = d->cfg.gpu_memory_mib,
                            .score_sum = d->cfg.score_sum,
                            .priority_ratio = d->cfg.priority_ratio,
                            .backfill = profiling ? 0 : d->cfg.backfill,
                            .backfill_margin = d->cfg.backfill_margin,
                            .backfill_window = d->cfg.backfill_window,
                            .backfill_min_gpus = d->cfg.backfill_min_gpus};
    int order = profiling && profiler_order(d) == LUCID_ORDER_FEWEST_GPUS;
    if (decide_predict(pending, np, order, nodes, nnodes, &params, &horizon, eta) < 0)
        goto done;
    d->eta_cpu_s = thread_cpu_s() - cpu0;
    d->eta_runs++;
    d->eta_signature[q] = sig;
    d->eta_at[q] = now_mono;
    for (int k = 0; k < np; k++) {
        lucidd_job *job = engine_find(d, eta[k].id);
        if (!job)
            continue;
        int never = eta[k].p50 < 0;
        job->eta_p10 = never ? 0 : eta[k].p10;
        job->eta_p50 = never ? 0 : eta[k].p50;
        job->eta_p90 = never ? 0 : eta[k].p90;
        job->eta_ahead = k;
        snprintf(job->eta_none, sizeof job->eta_none, "%s",
                 never ? "no start in sight: too few GPUs in service" : "");
    }
done:
    free(pending);
    free(busy);
    free(eta);
}

/* The profiler never keeps a job from idle main GPUs (issue 28: with one
 * profiling node, a burst of 2,000 jobs waited for it while 5 of 8 main
 * nodes were idle).  A job the profiler could not start in this decision,
 * that fits a main node's free GPUs now (its type, its CPUs and memory, the
 * site's rules of fit.h), goes to the main queue unprofiled, with the
 * heuristic estimate (its time limit or --default-estimate), in the
 * profiler's order until main's free GPUs are spoken for.  The simulator's
 * profiler_autoscale borrows idle main nodes for profiling instead; live,
 * a profiling run on a main node would be a requeue later, so the job
 * runs there for good.  Off with --profiler-bypass off. */
static void bypass_profiler(lucidd *d, const decide_result *profiled, int nprofiled,
                            const partition_view *main, const fit_limits *limits,
                            double now_mono)
{
    if (!d->cfg.profiler_bypass || main->nnodes <= 0)
        return;
    int *free_gpus = malloc((size_t)main->nnodes * sizeof *free_gpus);
    if (!free_gpus)
        return;
    int total = 0;
    for (int k = 0; k < main->nnodes; k++)
        total += free_gpus[k] = main->nodes[k].free_gpus;
    int64_t now = (int64_t)time(NULL);
    for (int i = 0; i < nprofiled && total > 0; i++) {
        lucidd_job *job = engine_find(d, profiled[i].id);
        if (!job || profiled[i].start || job->rec.phase != LUCID_PHASE_PROFILE_QUEUE ||
            avoiding(job, now_mono) ||
            (limits && !fit_limits_now(&limits[job - d->jobs], job->rec.gpus, NULL, 0)))
            continue; /* at a limit: it could start nowhere */
        for (int k = 0; k < main->nnodes; k++) {
            if (free_gpus[k] < job->rec.gpus ||
                !fit_node_now(&job->fit, job->rec.gpus, &main->fits[k], now, NULL, 0) ||
                !fit_room_ok(&job->fit, job->rec.gpus, main->nodes[k].free_gpus,
                             main->nodes[k].total_gpus, &main->nodes[k].room))
                continue;
            free_gpus[k] -= job->rec.gpus;
            total -= job->rec.gpus;
            char why[256];
            snprintf(why, sizeof why,
                     "not profiled: the profiler is busy and %s has %d GPUs idle; in the main "
                     "queue with a prior estimate", main->nodes[k].name, free_gpus[k] + job->rec.gpus);
            set_phase(job, LUCID_PHASE_MAIN_QUEUE, why);
            ack(d, record_decision(d, job, "bypass", main->nodes[k].name, why));
            d->profiler_bypassed++;
            break;
        }
    }
    free(free_gpus);
}

/* ---- the site's priority (issue 23) ----
 * lucid's order is its service estimate (estimate x GPUs, lower first);
 * a site's Slurm orders by multifactor priority, fair share first.  The
 * queue's order value combines both:
 *     order = priority x 10^(W_fs x (1/2 - F)) x 2^(-W_age x wait / 7 days)
 *                      x 10^(-W_qos x Q)
 * F is Slurm's fair-share factor of the job's association (sshare's
 * FairShare: 1 for an account that used nothing of its share, 0 for one
 * far over it), read every FAIRSHARE_READ_S; W_fs is --fairshare-weight
 * (default 2 where Slurm weighs fair share, PriorityWeightFairshare > 0,
 * else 0): a user at F = 1 has their jobs' values divided by 10, one at
 * F = 0 multiplied by 10.  W_age (--age-weight, default 0) halves a job's
 * value per week waited, W_age times.  Q is the job's QOS priority over the
 * largest QOS priority of the site (Slurm's QOS factor, from sacctmgr with
 * the limits, every LIMITS_READ_S); W_qos is --qos-weight (default 2 where
 * Slurm weighs QOS, PriorityWeightQOS > 0, else 0): a job of the top QOS has
 * its value divided by 100.  With any on, the profiler's queue
 * follows the same order (profiler_order); with neither it keeps the
 * reference profiler's fewest-GPUs-first order. */
#define FAIRSHARE_READ_S 10.0

static int by_share_key(const void *a, const void *b)
{
    const slurm_share *x = a, *y = b;
    int c = strcmp(x->account, y->account);
    return c ? c : strcmp(x->user, y->user);
}

/* Collects a running sshare's answer when it is there; starts the next
 * read every FAIRSHARE_READ_S.  A tick never waits for sshare (a slow
 * slurmdbd): until an answer comes, the last one read stays in use. */
static void take_shares(lucidd *d, double now_mono)
{
    lucid_error err = {{0}};
    slurm_share *shares = NULL;
    long n = 0;
    int rc = slurm_io_fairshare_poll(&d->share_read, now_mono, &shares, &n, &err);
    if (rc < 0)
        note_error(d, &err); /* keep the last read */
    if (rc <= 0)
        return;
    if (n > 1)
        qsort(shares, (size_t)n, sizeof *shares, by_share_key);
    free(d->shares);
    d->shares = shares;
    d->nshares = n;
    d->fairshare_reads++;
}

static void read_fairshare(lucidd *d, double now_mono)
{
    if (d->share_read.running) {
        take_shares(d, now_mono);
        return;
    }
    if (d->fairshare_read_at > 0 && now_mono - d->fairshare_read_at < FAIRSHARE_READ_S)
        return;
    d->fairshare_read_at = now_mono;
    d->fairshare_weight = d->cfg.fairshare_weight >= 0 ? d->cfg.fairshare_weight
                          : slurm_io_fairshare_weight() > 0 ? 2.0 : 0.0;
    if (d->fairshare_weight <= 0)
        return;
    lucid_error err = {{0}};
    if (slurm_io_fairshare_start(&d->share_read, now_mono, &err) < 0)
        note_error(d, &err);
    else
        take_shares(d, now_mono); /* an answer already there is used now */
}

/* ---- the site's GPU limits (limits.h) ----
 * Read like the shares: sacctmgr as a child, the QOS records and then the
 * cluster's associations, every LIMITS_READ_S; a tick never waits for it,
 * and the last complete read stays in use until the next one is in (a
 * failed or silent run, slurmdbd down, changes nothing).  A site that does
 * not enforce limits (no slurmdbd, or AccountingStorageEnforce without
 * "limits") is not asked, and lucid applies none. */
#define LIMITS_READ_S 15.0

/* An unreadable limit is logged once (one line naming it), then ignored. */
static void note_bad_limit(lucidd *d, int which, const char *bad)
{
    if (!bad[0] || strcmp(bad, d->limits_bad[which]) == 0)
        return;
    snprintf(d->limits_bad[which], sizeof d->limits_bad[which], "%s", bad);
    lucidd_log("limits: %s", bad);
}

static void limits_read_ends(lucidd *d)
{
    limits_free(&d->limits_next);
    d->limits_stage = 0;
}

/* Takes a finished sacctmgr's answer: 1 when the next stage was started
 * (poll again), else 0. */
static int take_limits(lucidd *d, double now_mono)
{
    lucid_error err = {{0}};
    char *text = NULL, bad[256] = "";
    int rc = slurm_io_limits_poll(&d->limits_read, now_mono, &text, &err);
    if (rc == 0)
        return 0;
    if (rc < 0 || !text) {
        if (rc < 0)
            note_error(d, &err);
        limits_read_ends(d);
        return 0;
    }
    slurm_limits *next = &d->limits_next;
    long n = d->limits_stage == 1 ? limits_parse_qos(text, &next->qos, bad, sizeof bad, &err)
                                  : limits_parse_assoc(text, &next->assoc, bad, sizeof bad, &err);
    free(text);
    if (n < 0) {
        note_error(d, &err);
        limits_read_ends(d);
        return 0;
    }
    note_bad_limit(d, d->limits_stage - 1, bad);
    if (d->limits_stage == 1) {
        next->nqos = n;
        d->limits_stage = 2;
        if (slurm_io_limits_start(&d->limits_read, 1, now_mono, &err) == 0)
            return 1;
        note_error(d, &err);
        limits_read_ends(d);
        return 0;
    }
    next->nassoc = n;
    int had = limits_any(&d->limits), has = limits_any(next);
    limits_free(&d->limits);
    d->limits = *next;
    *next = (slurm_limits){0};
    d->limits_stage = 0;
    d->limits_reads++;
    if (has != had)
        lucidd_log("limits: %s (%ld QOS, %ld associations read)",
                   has ? "the site's GPU limits apply" : "the site sets no GPU limits",
                   d->limits.nqos, d->limits.nassoc);
    return 0;
}

static void read_limits(lucidd *d, double now_mono)
{
    if (!d->limits_read.running) {
        if (d->limits_read_at > 0 && now_mono - d->limits_read_at < LIMITS_READ_S)
            return;
        d->limits_read_at = now_mono;
        /* Read for the limits where Slurm enforces them, and for the QOS
         * priorities where lucid's order weighs them. */
        d->limits_enforced = slurm_io_limits_enforced();
        d->qos_weight = d->cfg.qos_weight >= 0 ? d->cfg.qos_weight
                        : slurm_io_qos_weight() > 0 ? 2.0 : 0.0;
        if (!d->limits_enforced && !(d->qos_weight > 0)) {
            limits_free(&d->limits);
            return;
        }
        lucid_error err = {{0}};
        if (slurm_io_limits_start(&d->limits_read, 0, now_mono, &err) < 0) {
            note_error(d, &err);
            return;
        }
        d->limits_stage = 1;
    }
    while (take_limits(d, now_mono)) /* an answer already there is used now */
        ;
}

/* Each job's limits for this decision (indexed as d->jobs), booked with
 * what Slurm runs now and what lucid released that Slurm has not started:
 * NULL when the site sets no GPU limit (or out of memory: none applied,
 * Slurm's own refusal is the fallback). */
static fit_limits *book_limits(lucidd *d, const slurm_job *sjobs, long nsjobs, limits_book *book)
{
    *book = (limits_book){0};
    if (!d->limits_enforced || !limits_any(&d->limits))
        return NULL;
    fit_limits *per_job = calloc(d->njobs + 1, sizeof *per_job);
    limits_job *waiting = calloc(d->njobs + 1, sizeof *waiting);
    limits_job *running = calloc((size_t)nsjobs + 1, sizeof *running);
    size_t nrunning = 0;
    if (!per_job || !waiting || !running)
        goto fail;
    for (size_t i = 0; i < d->njobs; i++) {
        const lucidd_job *job = &d->jobs[i];
        int waits = queued(job->rec.phase);
        waiting[i] = (limits_job){job->rec.user, waits ? job->account : "",
                                  waits ? job->qos : "", job->rec.partition, job->rec.gpus};
    }
    for (long k = 0; k < nsjobs; k++) {
        const slurm_job *sj = &sjobs[k];
        const lucidd_job *mine = engine_find(d, sj->id);
        /* A packed job asks Slurm for no GPU (or the share GRES): its
         * GPUs are lucid's record, and count against its user's limits
         * like any others (packing is no way around them). */
        int gpus = sj->gpus;
        if (gpus == 0 && mine && mine->rec.packed_with && mine->rec.gpu_list[0])
            gpus = mine->rec.gpus;
        if (gpus > 0 && (sj->state == SJ_RUNNING ||
                         (sj->state == SJ_PENDING && mine && mine->releasing)))
            running[nrunning++] = (limits_job){sj->user, sj->account, sj->qos, sj->partition,
                                               gpus};
    }
    lucid_error err = {{0}};
    if (limits_book_build(book, &d->limits, waiting, d->njobs, per_job, running, nrunning, &err) < 0) {
        note_error(d, &err);
        goto fail;
    }
    free(waiting);
    free(running);
    return per_job;
fail:
    free(per_job);
    free(waiting);
    free(running);
    return NULL;
}

static void order_values(lucidd *d, time_t now)
{
    /* No factor on (the default): the queue's order is lucid's own
     * priority, read straight from each record (no copy to go stale). */
    double qos_weight = qos_weight_in_order(d);
    if (!(d->fairshare_weight > 0) && !(d->cfg.age_weight > 0) && !(qos_weight > 0)) {
        for (size_t i = 0; i < d->njobs; i++)
            d->jobs[i].order_priority = d->jobs[i].qos_factor = 0;
        return;
    }
    for (size_t i = 0; i < d->njobs; i++) {
        lucidd_job *job = &d->jobs[i];
        if (lucid_phase_is_final(job->rec.phase))
            continue;
        job->fairshare = -1;
        if (d->fairshare_weight > 0 && d->nshares > 0) {
            slurm_share key;
            snprintf(key.account, sizeof key.account, "%s", job->account);
            snprintf(key.user, sizeof key.user, "%s", job->rec.user);
            const slurm_share *hit = bsearch(&key, d->shares, (size_t)d->nshares, sizeof key,
                                             by_share_key);
            if (hit)
                job->fairshare = hit->factor; /* in [0, 1] (shares.c) */
        }
        double wait = job->rec.submit_time > 0 && now > job->rec.submit_time
                          ? (double)(now - job->rec.submit_time)
                          : 0;
        /* The core's formula (fairshare.h), the one the simulator orders by. */
        job->order_priority = lucid_order_value(job->rec.priority, d->fairshare_weight,
                                                job->fairshare, d->cfg.age_weight, wait);
        job->qos_factor = qos_weight > 0 ? limits_qos_factor(&d->limits, job->qos) : 0;
        job->order_priority = lucid_order_qos(job->order_priority, qos_weight, job->qos_factor);
    }
}

/* Room for the node masks of the jobs of `phase` that need one. */
static unsigned char *node_masks(const lucidd *d, lucid_phase phase, const partition_view *v,
                                 double now_mono)
{
    size_t count = 1;
    for (size_t i = 0; i < d->njobs; i++)
        count += d->jobs[i].rec.phase == phase && needs_mask(&d->jobs[i], v, now_mono);
    return calloc(count * (size_t)(v->nnodes > 0 ? v->nnodes : 1), 1);
}

/* A job lucid may release ahead (see hold_back above): Slurm's choice of
 * node is lucid's, it has no pin, exclusion or avoided node, and it fits
 * one node of `largest` GPUs. */
static int may_go_ahead(const lucidd_job *job, int largest, double now_mono)
{
    return job->rec.phase == LUCID_PHASE_MAIN_QUEUE && !job->waits_for[0] &&
           !job->rec.user_hold && !job->user_nodes[0] && !job->user_exclude[0] &&
           !avoiding(job, now_mono) && job->rec.gpus >= 1 && job->rec.gpus <= largest &&
           (job->rec.nodes <= 1 || !job->nodes_fixed);
}

/* CPUs and memory (MiB) a job asks on its node. */
static void per_node_room(const lucidd_job *job, int64_t *cpus, int64_t *mem)
{
    const fit_request *f = &job->fit;
    int64_t c = f->cpus_node > 1 ? f->cpus_node : 1;
    if ((int64_t)f->cpus_per_gpu * job->rec.gpus > c)
        c = (int64_t)f->cpus_per_gpu * job->rec.gpus;
    int64_t m = f->mem_node_mib;
    if (f->mem_per_cpu_mib * c > m)
        m = f->mem_per_cpu_mib * c;
    if (f->mem_per_gpu_mib * job->rec.gpus > m)
        m = f->mem_per_gpu_mib * job->rec.gpus;
    *cpus = c;
    *mem = m;
}

/* Wherever `later` fits, `earlier` fits too: as many GPUs of the same type
 * or fewer, CPUs and memory no more, the same features, --exclusive only if
 * `later` is too.  With lucid's order strict (no backfill), a job goes
 * ahead behind another only then: Slurm's own backfill could otherwise
 * start it while the one before it waits. */
static int no_easier(const lucidd_job *later, const lucidd_job *earlier)
{
    int64_t lc, lm, ec, em;
    per_node_room(later, &lc, &lm);
    per_node_room(earlier, &ec, &em);
    return later->rec.gpus >= earlier->rec.gpus && lc >= ec && lm >= em &&
           strcmp(later->fit.gpu_type, earlier->fit.gpu_type) == 0 &&
           strcmp(later->fit.features, earlier->fit.features) == 0 &&
           later->fit.whole >= earlier->fit.whole;
}

/* The Slurm priority of a job released ahead: below every pinned release. */
static uint32_t ahead_priority(const lucidd_job *job)
{
    uint32_t p = slurm_priority(job) / 100;
    return p > 0 ? p : 1;
}

/* After main's decision (`waiting` in its order, `results` beside them):
 * the jobs to release ahead, released; those released before that are no
 * longer among them, held again. */
static void release_ahead(lucidd *d, const decide_job *waiting, const decide_result *results,
                          int nwaiting, const decide_node *nodes, int nnodes,
                          double standin_best, double now_mono)
{
    /* Packed jobs' nodes: Slurm counts their shared GPUs free. */
    char exclude[256] = "";
    size_t len = 0;
    int too_many = 0;
    for (size_t i = 0; i < d->njobs; i++) {
        const lucid_job_record *r = &d->jobs[i].rec;
        if (r->phase != LUCID_PHASE_RUNNING || !r->gpu_list[0] || !r->node_list[0] ||
            slurm_io_in_hostlist(exclude, r->node_list))
            continue;
        int wrote = snprintf(exclude + len, sizeof exclude - len, "%s%s", len ? "," : "",
                             r->node_list);
        if (wrote < 0 || (size_t)wrote >= sizeof exclude - len) {
            exclude[len] = '\0';
            too_many = 1; /* too many to name: none released ahead this tick */
            break;
        }
        len += (size_t)wrote;
    }
    /* The largest node left to Slurm: with every node packed, a job
     * released ahead could start nowhere (Slurm holds such a job as
     * BadConstraints), so none goes. */
    int largest = 0, total = 0;
    for (int k = 0; k < nnodes; k++) {
        total += nodes[k].total_gpus;
        if (nodes[k].total_gpus > largest && !slurm_io_in_hostlist(exclude, nodes[k].name))
            largest = nodes[k].total_gpus;
    }
    /* As many GPUs as main has (a wave of ends may free them all at once);
     * a job already ahead stays so within twice that, so that small moves
     * of the order do not hold and release it again tick after tick. */
    int budget = d->cfg.release_ahead && d->slurm_up && !too_many ? total : 0, used = 0;
    /* A backfill reservation is lucid's promise Slurm does not know: a job
     * released ahead would take the first GPUs to free, reserved or not.
     * Unless the one job that holds it is the head of what waits: it goes
     * ahead first, and behind it only jobs no easier to place (as with
     * lucid's order strict), so wherever Slurm could start one of them it
     * starts the holder first.  With backfill on, a burst's head nearly
     * always holds one, and without this every turnover waited for lucid's
     * next tick and Slurm's next scheduling pass (issue 28: each of 7 of
     * 154 samples of main under 90 % in a burst had such a head).  Two
     * holders (conservative), or one behind a job that holds none: none
     * goes. */
    int holders = 0, head = -1;
    for (int i = 0; i < nwaiting; i++) {
        if (results[i].start)
            continue;
        if (head < 0)
            head = i;
        holders += results[i].holds != 0;
    }
    if (holders > 1 || (holders == 1 && !results[head].holds))
        budget = 0;
    int strict = !d->cfg.backfill || holders == 1;
    const lucidd_job *before = NULL;
    /* Slurm starts the jobs ahead in its priority order: when lucid's order
     * of them has changed since they went (a QOS or fair-share factor read
     * later, a new estimate), every one is given its priority again. */
    uint32_t last = UINT32_MAX;
    int reorder = 0;
    for (int i = 0; i < nwaiting && used < 2 * budget; i++) {
        if (results[i].start)
            continue;
        if (standin_best < waiting[i].priority)
            break; /* a job being profiled (or moving, or waiting for the profiler)
                    * outranks it: main gives it the next GPUs and keeps them through
                    * its move (--profiler-yield), which Slurm must not take first */
        lucidd_job *job = engine_find(d, waiting[i].id);
        if (!job || !may_go_ahead(job, largest, now_mono) ||
            used + job->rec.gpus > (job->ahead ? 2 : 1) * budget ||
            (before && strict && !no_easier(job, before)))
            break; /* in order: none passes a job that cannot go ahead */
        job->ahead_wanted = 1;
        used += job->rec.gpus;
        before = job;
        uint32_t at = job->ahead ? job->ahead_priority : ahead_priority(job);
        if (at > last)
            reorder = 1;
        last = at;
    }
    for (size_t i = 0; i < d->njobs && d->slurm_up; i++) {
        lucidd_job *job = &d->jobs[i];
        int wanted = job->ahead_wanted;
        job->ahead_wanted = 0;
        if (job->rec.phase != LUCID_PHASE_MAIN_QUEUE || writes_pending(d, job))
            continue; /* its move to main off the tick first: at a later tick */
        lucid_error err = {{0}};
        if (!job->ahead && job->ahead_exclude[0]) {
            /* Held again, but its own exclusion not yet given back. */
            if (slurm_io_exclude(job->rec.job_id, job->user_exclude, &err) < 0)
                note_error(d, &err);
            else
                job->ahead_exclude[0] = '\0';
            wrote(job);
        }
        if (job->ahead && !wanted) {
            hold_back(d, job, NULL, now_mono);
        } else if (job->ahead && strcmp(job->ahead_exclude, exclude) != 0) {
            if (slurm_io_exclude(job->rec.job_id, exclude, &err) < 0)
                note_error(d, &err);
            else
                snprintf(job->ahead_exclude, sizeof job->ahead_exclude, "%s", exclude);
            wrote(job);
        } else if (wanted && !job->ahead) {
            job->ahead = 1; /* the comment says so */
            char comment[256];
            comment_text(job, comment, sizeof comment);
            uint32_t priority = ahead_priority(job);
            lucidd_write wr = {.kind = LUCIDD_WRITE_AHEAD, .job_id = job->rec.job_id,
                               .priority = priority};
            snprintf(wr.partition, sizeof wr.partition, "%s", d->cfg.main_partition);
            snprintf(wr.nodes, sizeof wr.nodes, "%s", exclude);
            snprintf(wr.comment, sizeof wr.comment, "%s", comment);
            int posted = write_off_tick(d, job) && lucidd_writer_post(d->writer, &wr) == 0;
            int released = posted ? 0
                                  : slurm_io_release_ahead(job->rec.job_id, d->cfg.main_partition,
                                                           exclude, comment, priority, &err);
            if (!posted)
                wrote(job);
            if (released < 0) {
                job->ahead = 0; /* a release that half took is held again by track */
                note_error(d, &err);
                continue;
            }
            snprintf(job->comment_sent, sizeof job->comment_sent, "%s", comment);
            snprintf(job->ahead_exclude, sizeof job->ahead_exclude, "%s", exclude);
            job->ahead_priority = priority;
            job->was_released = 1;
            d->released_ahead++;
            continue;
        }
        if (job->ahead && wanted && reorder && job->ahead_priority != ahead_priority(job)) {
            char comment[256];
            comment_text(job, comment, sizeof comment);
            err = (lucid_error){{0}};
            int promoted = slurm_io_promote(job->rec.job_id, comment, ahead_priority(job), NULL,
                                            &err);
            wrote(job);
            if (promoted < 0) {
                note_error(d, &err);
                continue;
            }
            snprintf(job->comment_sent, sizeof job->comment_sent, "%s", comment);
            job->ahead_priority = ahead_priority(job);
        }
    }
}

static void decide_and_apply(lucidd *d, const slurm_job *sjobs, long nsjobs, double now_mono)
{
    lucid_error err = {{0}};
    slurm_node *snodes = NULL, *read_here = NULL;
    long nsnodes;
    if (d->reader) {
        /* Read by the reader after the listing (engine_tick). */
        snodes = d->nodes;
        nsnodes = d->nnodes;
        err = d->nodes_err;
    } else {
        char partitions[256];
        snprintf(partitions, sizeof partitions, "%s,%s", d->cfg.main_partition,
                 d->cfg.profiling_partition);
        nsnodes = slurm_io_nodes(partitions, d->cfg.share_gres, &read_here, &err);
        snodes = read_here;
    }
    if (nsnodes < 0) {
        note_error(d, &err);
        d->slurm_errors++;
        /* No decision this tick: a waiting job without an estimate says why. */
        for (size_t i = 0; i < d->njobs; i++) {
            lucidd_job *job = &d->jobs[i];
            if (queued(job->rec.phase) && !job->eta_p50 && !job->eta_none[0])
                no_estimate(job, "lucid could not read Slurm's nodes");
        }
        return;
    }
    size_t nn = (size_t)nsnodes + 1;
    decide_node *nodes = calloc(nn, sizeof *nodes);
    fit_node *fits = calloc(nn, sizeof *fits);
    decide_job *waiting = calloc(d->njobs + 1, sizeof *waiting);
    decide_running *running = calloc(d->njobs + 1, sizeof *running);
    decide_result *results = calloc(d->njobs + 1, sizeof *results);
    unsigned char *masks = NULL;
    limits_book book = {0};
    fit_limits *limits = NULL;
    if (!nodes || !fits || !waiting || !running || !results)
        goto done;
    /* One book for both passes: a profiling run counts against the user's
     * limits as a main run does. */
    limits = book_limits(d, sjobs, nsjobs, &book);

    int nnodes = collect_nodes(d, d->cfg.profiling_partition, snodes, nsnodes, sjobs, nsjobs, nodes, fits);
    partition_view view = view_of(nodes, fits, nnodes);
    take_back_from_unusable(d, LUCID_PHASE_PROFILING, &view, now_mono);
    if (!(masks = node_masks(d, LUCID_PHASE_PROFILE_QUEUE, &view, now_mono)))
        goto done;
    int nwaiting = gather_waiting(d, LUCID_PHASE_PROFILE_QUEUE, &view, limits, waiting, masks,
                                  now_mono);
    double t0 = monotonic_s();
    decide_profiling(waiting, nwaiting, profiler_order(d), nodes, nnodes, results);
    double profiling_s = monotonic_s() - t0;
    apply_results(d, results, nwaiting, 1);
    if (!d->slurm_up)
        goto done; /* slurmctld stopped answering: decided again next tick */
    double eta0 = thread_cpu_s();
    eta_clear_unpredictable(d);
    predict_queue(d, waiting, results, nwaiting, nodes, nnodes, 1, now_mono);
    double eta_s = thread_cpu_s() - eta0;

    nnodes = collect_nodes(d, d->cfg.main_partition, snodes, nsnodes, sjobs, nsjobs, nodes, fits);
    d->main_gpus = d->share_nodes = 0;
    d->main_nodes = nnodes;
    for (int k = 0; k < nnodes; k++) {
        d->main_gpus += nodes[k].total_gpus;
        d->share_nodes += nodes[k].share_free >= 0;
    }
    view = view_of(nodes, fits, nnodes);
    take_back_from_unusable(d, LUCID_PHASE_RUNNING, &view, now_mono);
    bypass_profiler(d, results, nwaiting, &view, limits, now_mono);
    free(masks);
    if (!(masks = node_masks(d, LUCID_PHASE_MAIN_QUEUE, &view, now_mono)))
        goto done;
    nwaiting = gather_waiting(d, LUCID_PHASE_MAIN_QUEUE, &view, limits, waiting, masks, now_mono);
    int nrunning = 0;
    node_name *names = sorted_node_names(nodes, nnodes);
    for (size_t i = 0; i < d->njobs; i++) {
        const lucidd_job *job = &d->jobs[i];
        if (job->rec.phase != LUCID_PHASE_RUNNING || job->rec.nodes > 1 || job->releasing)
            continue;
        const slurm_job *sj = find_slurm(sjobs, nsjobs, job->rec.job_id);
        if (!sj || sj->state != SJ_RUNNING)
            continue;
        decide_running *r = &running[nrunning];
        r->job = decide_view(job);
        r->packed = job->rec.packed_with != 0 || job->rec.gpu_list[0];
        snprintf(r->gpu_list, sizeof r->gpu_list, "%s",
                 job->rec.gpu_list[0] ? job->rec.gpu_list : sj->first_gpus);
        r->node = find_node(names, nodes, nnodes, sj->node_list);
        if (r->node >= 0)
            nrunning++;
    }
    free(names);
    update_packing(d, waiting, nwaiting, nodes, nnodes);
    decide_params params = {.packing = d->packing_on,
                            .gpu_memory_mib = d->cfg.gpu_memory_mib,
                            .score_sum = d->cfg.score_sum,
                            .priority_ratio = d->cfg.priority_ratio,
                            .slurm_packing = 1,
                            .backfill = d->cfg.backfill,
                            .backfill_margin = d->cfg.backfill_margin,
                            .backfill_window = d->cfg.backfill_window,
                            .backfill_min_gpus = d->cfg.backfill_min_gpus};
    decide_busy *busy = NULL;
    decide_horizon horizon = {.now = (int64_t)time(NULL), .table = &d->eta_table};
    if (d->cfg.backfill) {
        /* Reservations need every job holding GPUs of the main partition. */
        busy = collect_busy(d, 0, nodes, nnodes, &horizon.nbusy);
        horizon.busy = busy;
        params.horizon = busy ? &horizon : NULL;
    }
    t0 = monotonic_s();
    int nqueued = nwaiting;
    nwaiting = gather_standins(d, &view, sjobs, nsjobs, limits, waiting, nwaiting, now_mono);
    decide_node *before = NULL; /* decide_main takes the GPUs it places from `nodes` */
    double standin_best = INFINITY; /* the best priority among the stand-ins */
    unsigned char *standin = NULL; /* which of `waiting` are stand-ins, after its sort */
    if (nwaiting > nqueued && (before = malloc((size_t)nn * sizeof *before)) != NULL &&
        (standin = malloc((size_t)nwaiting)) != NULL) {
        memcpy(before, nodes, (size_t)nnodes * sizeof *before);
    } else {
        free(before); /* none, or no memory for a second pass: none this tick */
        before = NULL;
        nwaiting = nqueued;
    }
    decide_main(waiting, nwaiting, running, nrunning, nodes, nnodes, &params, results);
    if (before) {
        /* The stand-ins main did not place leave; the rest is decided again
         * without them, so that none holds the queue or a reservation. */
        int keep = 0, dropped = 0, contended = 0;
        double best_left = 0; /* the best priority of the main queue's jobs left waiting */
        for (int i = 0; i < nwaiting; i++) { /* looked up once: decide_main sorted them */
            const lucidd_job *job = engine_find(d, waiting[i].id);
            standin[i] = job && is_standin(job);
            if (standin[i] && waiting[i].priority < standin_best)
                standin_best = waiting[i].priority;
            if (!standin[i] && !results[i].start &&
                (!contended || waiting[i].priority < best_left)) {
                best_left = waiting[i].priority;
                contended = 1;
            }
        }
        /* With no job of the main queue left waiting, main's GPUs are
         * nobody's to take: a profiling run goes on to its limit (a short
         * job ends there) and the profiler's queue stays the profiler's
         * (--profiler-bypass is for idle main GPUs).  A stand-in acts only
         * where it outranks every job it leaves waiting by the order
         * itself, not by the tie-break of ids: among equals (one user's
         * backlog of alike jobs) a cut profiling run or a move's held GPUs
         * idle main for the round trip and gain nothing. */
        for (int i = 0; i < nwaiting; i++) {
            int unplaced = standin[i] && (!results[i].start || !contended ||
                                          !(waiting[i].priority < best_left));
            dropped += unplaced;
            if (!unplaced)
                waiting[keep++] = waiting[i];
        }
        nwaiting = keep;
        if (dropped) {
            memcpy(nodes, before, (size_t)nnodes * sizeof *nodes);
            decide_main(waiting, nwaiting, running, nrunning, nodes, nnodes, &params, results);
        }
        free(standin);
        free(before);
    }
    double latency = profiling_s + monotonic_s() - t0;
    free(busy);
    apply_results(d, results, nwaiting, 0);
    drop_unusable_reservations(d);
    release_ahead(d, waiting, results, nwaiting, nodes, nnodes, standin_best, now_mono);
    eta0 = thread_cpu_s();
    predict_queue(d, waiting, results, nwaiting, nodes, nnodes, 0, now_mono);
    d->eta_tick_cpu_s = eta_s + thread_cpu_s() - eta0;
    d->latency_s[d->latency_count % LUCIDD_LATENCY_SAMPLES] = latency;
    d->latency_count++;
    d->latency_sum_s += latency;
done:
    free(limits);
    limits_book_free(&book);
    free(nodes);
    free(fits);
    free(waiting);
    free(running);
    free(results);
    free(masks);
    free(read_here);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double engine_latency_quantile(const lucidd *d, double q)
{
    size_t n = d->latency_count < LUCIDD_LATENCY_SAMPLES ? d->latency_count
                                                         : LUCIDD_LATENCY_SAMPLES;
    if (n == 0)
        return 0;
    double sorted[LUCIDD_LATENCY_SAMPLES];
    memcpy(sorted, d->latency_s, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    size_t k = (size_t)ceil(q * (double)n);
    return sorted[k > 0 ? k - 1 : 0];
}

/* ---- ended jobs leave memory ----
 * An ended job stays in the table while Slurm lists it (else the next
 * listing would take it in again) and for --forget-ended after its end
 * (status, queue --all); then only its record in the state store remains,
 * and the (where, outcome) counts it adds to.  A pass every
 * FORGET_PERIOD_S: compacting the table is O(jobs), once a minute, not a
 * tick. */
#define FORGET_PERIOD_S 60.0

static void rebuild_index(lucidd *d)
{
    memset(d->slots, 0, d->nslots * sizeof *d->slots);
    for (size_t i = 0; i < d->njobs; i++)
        index_insert(d, i);
}

/* What status and /metrics count of a job that leaves the table. */
static void count_forgotten(lucidd *d, const lucidd_job *job)
{
    d->nforgotten = lucidd_ended_counts(job, 1, d->forgotten, d->nforgotten, LUCIDD_ENDED_MAX);
    d->forgotten_by_phase[job->rec.phase]++;
    d->forgotten_profiled +=
        job->rec.profile_start || job->rec.phase == LUCID_PHASE_DONE_IN_PROFILER;
}

static void forget_ended(lucidd *d, time_t now, double now_mono)
{
    if (d->forgot_at > 0 && now_mono - d->forgot_at < FORGET_PERIOD_S)
        return;
    d->forgot_at = now_mono;
    size_t kept = 0;
    for (size_t i = 0; i < d->njobs; i++) {
        lucidd_job *job = &d->jobs[i];
        if (lucid_phase_is_final(job->rec.phase) && !job->seen && !job->dirty &&
            !job->reason_dirty && difftime(now, (time_t)job->rec.end_time) >= d->cfg.forget_ended_s) {
            count_forgotten(d, job);
            d->forgotten_jobs++;
            continue;
        }
        if (kept != i)
            d->jobs[kept] = *job;
        kept++;
    }
    if (kept == d->njobs)
        return;
    lucidd_log("forgot %zu jobs that ended more than %.0f s ago (their records stay in the state "
               "store)", d->njobs - kept, d->cfg.forget_ended_s);
    d->njobs = kept;
    /* Give back the memory of a table that shrank by half (a burst ended). */
    if (d->cap > 1024 && d->njobs < d->cap / 4) {
        size_t cap = d->njobs * 2 > 1024 ? d->njobs * 2 : 1024;
        lucidd_job *jobs = realloc(d->jobs, cap * sizeof *jobs);
        if (jobs) {
            d->jobs = jobs;
            d->cap = cap;
        }
    }
    rebuild_index(d);
}

/* The state store keeps ended jobs for --keep-history: once an hour (and
 * at start) those that ended earlier are deleted, PRUNE_BATCH at a time (a
 * tick stays short; a full batch is followed by another at the next tick).
 * A job still in the table is never one of them (it ended within
 * --forget-ended, or Slurm lists it), unless --keep-history is shorter. */
#define PRUNE_PERIOD_S 3600.0
#define PRUNE_BATCH 2000

static void prune_store(lucidd *d, time_t now, double now_mono)
{
    if (!(d->cfg.keep_history_s > 0) ||
        (d->pruned_at > 0 && now_mono - d->pruned_at < PRUNE_PERIOD_S))
        return;
    lucid_error err = {{0}};
    long n = lucid_state_prune(d->state, (int64_t)now - (int64_t)d->cfg.keep_history_s,
                               PRUNE_BATCH, &err);
    if (n < 0) {
        note_error(d, &err);
        d->pruned_at = now_mono; /* tried again in a period */
        return;
    }
    d->pruned_jobs += (uint64_t)n;
    if (n > 0)
        lucidd_log("state store: deleted %ld jobs that ended more than %.0f days ago", n,
                   d->cfg.keep_history_s / 86400.0);
    if (n < PRUNE_BATCH)
        d->pruned_at = now_mono;
}

/* A job Slurm still lists as ended that the engine forgot (lucidd restarted
 * after it ended; MinJobAge longer than --forget-ended): its record comes
 * back from the store, untouched.  1 adopted, 0 not in the store. */
static int adopt_stored(lucidd *d, const slurm_job *sj)
{
    lucid_job_record stored;
    lucid_error err = {{0}};
    if (!d->state || lucid_state_get_job(d->state, sj->id, &stored, &err) != 1 ||
        !lucid_phase_is_final(stored.phase))
        return 0;
    lucidd_job *job = add_job(d, sj->id);
    if (!job)
        return 0;
    job->rec = stored;
    job->uid = sj->uid;
    job->seen = 1;
    return 1;
}

static void slurm_unreachable(lucidd *d, const lucid_error *err)
{
    int was_up = d->slurm_up;
    slurm_down(d);
    if (was_up || d->ticks == 0)
        note_error(d, err); /* logged once an outage, not once a tick */
}

/* A tick longer than this is logged with where its time went. */
#define SLOW_TICK_S 1.0

static void tick(lucidd *d);

void engine_tick(lucidd *d)
{
    tick(d);
    /* The next listing is read after this tick's writes: with a reader,
     * begun now, while the tick's period runs out. */
    if (d->reader && d->reconciled)
        lucidd_reader_wake(d->reader);
}

/* Slurm's jobs (and with a reader its nodes) for this tick: 1 read anew,
 * 0 as the tick before had them, -1 not read (err).  d->listing_began is
 * when the listing's read began. */
static int read_listing(lucidd *d, lucid_error *err)
{
    if (!d->reader) {
        d->listing_began = monotonic_s();
        return slurm_io_jobs_refresh(&d->listing, err);
    }
    /* The first listing is waited for: none is no listing. */
    double began = 0;
    lucidd_read got = lucidd_reader_take(d->reader, d->listing_began <= 0, &d->listing, &began,
                                         &d->nodes, &d->nnodes, &d->nodes_err, err);
    if (got == LUCIDD_READ_FAILED)
        return -1;
    if (got == LUCIDD_READ_NONE)
        return d->slurm_up ? 0 : -1; /* no read since a failed one: still failed */
    d->listing_began = began;
    return got == LUCIDD_READ_NEW;
}

static void tick(lucidd *d)
{
    lucid_error err = {{0}};
    /* Probed only while Slurm is not known to answer (the first tick, an
     * outage): a probe is a connection that sends nothing, which slurmctld
     * logs as an error ("Zero Bytes were transmitted"), and while it answers
     * the tick's own calls tell (slurm_lost). */
    if (!d->slurm_up && !slurm_io_reachable(REACH_TIMEOUT_MS)) {
        lucid_error_set(&err, "slurm: slurmctld does not accept connections");
        slurm_unreachable(d, &err);
        d->ticks++;
        return;
    }
    if (!d->reconciled) {
        /* After a restart, nothing is decided before the unacknowledged
         * decisions are settled; Slurm may not answer yet (slurmctld
         * restarting): the API keeps serving meanwhile. */
        if (engine_reconcile(d, &err) < 0) {
            slurm_unreachable(d, &err);
            d->ticks++;
            return;
        }
        d->reconciled = 1;
    }
    /* The heartbeat first: a restarted lucidd holds jobs again in this
     * tick, and the hand-back watchdog must not still see it silent. */
    if (d->ticks == 0 || !d->slurm_up)
        write_heartbeat(d);
    /* Where a tick's time goes: logged when a tick runs past a second
     * (clients see its phases that much late; the RPCs to Slurm are the
     * usual reason). */
    double stamp[7];
    stamp[0] = monotonic_s();
    int fresh = read_listing(d, &err);
    /* Only the outcomes of writes answered before the listing was read:
     * a job with a later one is not judged on it (stale). */
    take_writes(d, d->listing_began);
    d->ticks++;
    if (fresh < 0) {
        slurm_unreachable(d, &err);
        return; /* keep serving the API; try again next tick */
    }
    /* In id (submission) order: jobs are taken in as they were submitted,
     * and found by binary search.  An unchanged listing is still sorted. */
    if (fresh)
        qsort(d->listing.jobs, (size_t)d->listing.count, sizeof *d->listing.jobs, by_id);
    const slurm_job *sjobs = d->listing.jobs;
    long n = d->listing.count;
    double now_mono = monotonic_s();
    int continuous = !d->slurm_down_since;
    if (d->slurm_down_since && d->ticks > 1) {
        lucidd_log("Slurm answers again (unreachable for %lld s)",
                   (long long)(time(NULL) - d->slurm_down_since));
        d->slurm_back_at = now_mono;
        d->outage_began = d->slurm_down_since;
    }
    d->slurm_up = 1;
    d->slurm_down_since = 0;
    time_t now = time(NULL);
    for (size_t i = 0; i < d->njobs; i++)
        d->jobs[i].seen = 0;
    d->intake_deferred = 0;
    d->hold_spent_s = 0;
    split_arrays(d, sjobs, n);
    for (long i = 0; i < n; i++) {
        const slurm_job *sj = &sjobs[i];
        lucidd_job *job = engine_find(d, sj->id);
        if (job) {
            job->seen = 1;
            if (!lucid_phase_is_final(job->rec.phase))
                track(d, job, sj, sjobs, n, now, now_mono, continuous);
        } else if (managed(d, sj->partition) && !sj->array_tasks[0] &&
                   (sj->state == SJ_COMPLETED || sj->state == SJ_FAILED)) {
            if (!sj->requeueing && !sj->completing && !adopt_stored(d, sj)) {
                intake_ended(d, sj);
                if ((job = engine_find(d, sj->id)))
                    job->seen = 1; /* listed: not forgotten while Slurm lists it */
            }
        } else if (managed(d, sj->partition) && !sj->array_tasks[0] &&
                   (sj->state == SJ_PENDING || sj->state == SJ_RUNNING)) {
            intake(d, sj);
            if ((job = engine_find(d, sj->id))) {
                job->seen = 1;
                if (queued(job->rec.phase))
                    eligibility(d, job, sj, sjobs, n, now);
            }
        }
    }
    for (size_t i = 0; i < d->njobs && d->slurm_up; i++) {
        lucidd_job *job = &d->jobs[i];
        /* An accounting that does not answer is asked once a tick, not once
         * a job: each try may wait for a connection timeout. */
        if (!job->seen && !lucid_phase_is_final(job->rec.phase) && vanished(d, job) < 0)
            break;
    }
    stamp[1] = monotonic_s();
    d->listing_age_s = stamp[1] - d->listing_began;
    if (d->listing_age_s > d->listing_age_max_s)
        d->listing_age_max_s = d->listing_age_s;
    sample_profiles(d, sjobs, n);
    update_models(d, now);
    read_fairshare(d, now_mono);
    read_limits(d, now_mono);
    order_values(d, now);
    stamp[2] = monotonic_s();
    if (d->slurm_up) /* not if slurmctld stopped answering earlier in this tick */
        decide_and_apply(d, sjobs, n, now_mono);
    stamp[3] = monotonic_s();
    if (d->slurm_up)
        push_comments(d, now, now_mono);
    stamp[4] = monotonic_s();
    long stored = flush(d);
    stamp[5] = monotonic_s();
    forget_ended(d, now, now_mono);
    prune_store(d, now, now_mono);
    write_heartbeat(d);
    stamp[6] = monotonic_s();
    if (stamp[6] - stamp[0] > SLOW_TICK_S) {
        d->slow_ticks++;
        lucidd_log("slow tick %llu: %.0f ms (read Slurm and track %.0f, samples/models/fair share "
                   "%.0f, decide and release %.0f, comments %.0f, store %.0f (%ld records), rest "
                   "%.0f; %ld jobs listed, listing %.0f ms old)",
                   (unsigned long long)d->ticks, 1e3 * (stamp[6] - stamp[0]),
                   1e3 * (stamp[1] - stamp[0]), 1e3 * (stamp[2] - stamp[1]),
                   1e3 * (stamp[3] - stamp[2]), 1e3 * (stamp[4] - stamp[3]),
                   1e3 * (stamp[5] - stamp[4]), stored, 1e3 * (stamp[6] - stamp[5]), n,
                   1e3 * d->listing_age_s);
    }
}

int engine_load(lucidd *d, lucid_error *err)
{
    lucid_job_record *records = NULL;
    long n = lucid_state_list_jobs(d->state, 1, &records, err);
    if (n < 0)
        return -1;
    time_t now = time(NULL);
    for (long i = 0; i < n; i++) {
        lucidd_job loaded = {.rec = records[i]};
        int64_t samples = 0;
        lucid_gpu_sample mean;
        if (lucid_state_get_profile(d->state, loaded.rec.job_id, &mean, &samples, err) == 1) {
            loaded.profile.samples = samples;
            loaded.profile.gpu_util_sum = mean.gpu_util_pct * (double)samples;
            loaded.profile.gmem_util_sum = mean.gmem_util_pct * (double)samples;
            loaded.profile.gmem_max_mib = mean.gmem_used_mib;
        }
        if (loaded.rec.job_id > d->intake_max)
            d->intake_max = loaded.rec.job_id;
        if (lucid_phase_is_final(loaded.rec.phase)) {
            learn_ratio(d, &loaded); /* the predictor's ratio table, rebuilt from the store */
            if (lucidd_models_add_finished(d->models, &loaded) < 0) {
                free(records);
                return lucid_error_set(err, "out of memory");
            }
            if (difftime(now, (time_t)loaded.rec.end_time) >= d->cfg.forget_ended_s) {
                /* Ended long ago: counted, not kept (forget_ended). */
                count_forgotten(d, &loaded);
                continue;
            }
        }
        lucidd_job *job = add_job(d, records[i].job_id);
        if (!job) {
            free(records);
            return lucid_error_set(err, "out of memory");
        }
        *job = loaded;
        job->restarts_seen = -1;
        /* Shown only if the first tick cannot reach Slurm (nothing is
         * published before it, hub.c): the first decision replaces it. */
        if (queued(job->rec.phase))
            snprintf(job->eta_none, sizeof job->eta_none, "%s", ENGINE_ETA_NOT_YET);
        job->estimated_with = -1; /* re-estimated from the newest model at the first tick */
        job->estimate_version = -1;
        job->nodes_fixed = 1;     /* refreshed from Slurm while it waits */
        job->slurm_start = job->rec.phase == LUCID_PHASE_RUNNING ? job->rec.main_start
                                                                 : job->rec.profile_start;
        note_arrival(d, job); /* the predictor's recent arrivals */
    }
    free(records);
    return 0;
}

/* Unacknowledged decisions: re-apply those Slurm has not seen, acknowledge
 * the others.  Runs once at start, before the first tick. */
int engine_reconcile(lucidd *d, lucid_error *err)
{
    lucid_decision_record *pending = NULL;
    long n = lucid_state_list_decisions(d->state, 0, &pending, err);
    if (n < 0)
        return -1;
    slurm_job *sjobs = NULL;
    long nsjobs = n > 0 ? slurm_io_jobs(&sjobs, err) : 0;
    if (nsjobs < 0) {
        free(pending);
        return -1;
    }
    if (nsjobs > 0)
        qsort(sjobs, (size_t)nsjobs, sizeof *sjobs, by_id);
    for (long i = 0; i < n; i++) {
        const lucid_decision_record *dec = &pending[i];
        lucidd_job *job = engine_find(d, dec->job_id);
        const slurm_job *sj = find_slurm(sjobs, nsjobs, dec->job_id);
        lucid_error apply_err = {{0}};
        int still_held = sj && sj->state == SJ_PENDING && sj->held;
        if (job && sj && still_held &&
            (strcmp(dec->action, "start") == 0 || strcmp(dec->action, "pack") == 0 ||
             strcmp(dec->action, "profile") == 0) &&
            (job->rec.phase == LUCID_PHASE_RUNNING || job->rec.phase == LUCID_PHASE_PROFILING)) {
            lucidd_log("job %u: re-applying unacknowledged %s on %s", dec->job_id, dec->action,
                       job->rec.node_list);
            char comment[256], share_tres[64] = "";
            comment_text(job, comment, sizeof comment);
            const char *share = strstr(dec->target, " share=");
            if (share && job->rec.packed_with)
                snprintf(share_tres, sizeof share_tres, "%.*s", (int)strcspn(share + 7, " "),
                         share + 7);
            if (slurm_io_start(dec->job_id, job->rec.partition, job->rec.node_list,
                               job->rec.packed_with ? job->rec.gpu_list : NULL, share_tres,
                               comment,
                               slurm_priority(job), &apply_err) < 0) {
                note_error(d, &apply_err);
                job->start_unapplied = 1; /* placed again at a tick (start_not_applied) */
                continue;
            }
        } else if (job && sj && sj->state == SJ_PENDING && !sj->held &&
                   strcmp(dec->action, "start") == 0 && job->rec.phase == LUCID_PHASE_RUNNING &&
                   !job->rec.packed_with && strstr(sj->admin_comment, AHEAD_MARK)) {
            /* A job released ahead that lucid started (apply_start's promote). */
            lucidd_log("job %u: re-applying unacknowledged start (released ahead) on %s",
                       dec->job_id, job->rec.node_list);
            char kept[256];
            if (promote_ahead(job, sj->exc_nodes, job->rec.node_list, kept, &apply_err) < 0) {
                note_error(d, &apply_err);
                continue;
            }
        } else if (job && sj && strcmp(dec->action, "requeue") == 0 &&
                   job->rec.phase == LUCID_PHASE_MOVING) {
            /* Only if it still runs: a job that ended meanwhile is never requeued. */
            int rc = slurm_io_requeue_hold_if_running(dec->job_id, d->cfg.profiling_partition,
                                                      &apply_err);
            if (rc < 0) {
                note_error(d, &apply_err);
                continue;
            }
            if (rc == 1)
                lucidd_log("job %u: re-applied unacknowledged requeue", dec->job_id);
        } else if (job && sj && still_held && strcmp(dec->action, "hand-back") == 0) {
            char comment[256];
            snprintf(comment, sizeof comment, "lucid: %.240s", job->rec.reason);
            if (slurm_io_hand_back(dec->job_id, comment, &apply_err) < 0)
                note_error(d, &apply_err);
        } else if (job && sj && strcmp(dec->action, "reject") == 0 && sj->state == SJ_PENDING) {
            if (slurm_io_cancel(dec->job_id, &apply_err) < 0)
                note_error(d, &apply_err);
        }
        if (lucid_state_ack_decision(d->state, dec->id, &apply_err) < 0)
            note_error(d, &apply_err);
    }
    free(pending);
    free(sjobs);
    return 0;
}

int engine_release(lucidd *d, uint32_t job_id, uint32_t uid, char *reply, size_t size)
{
    lucidd_job *job = engine_find(d, job_id);
    if (!job || lucid_phase_is_final(job->rec.phase)) {
        snprintf(reply, size, "job %u is not waiting in lucid", job_id);
        return -1;
    }
    if (uid != 0 && uid != job->uid) {
        snprintf(reply, size, "job %u belongs to %s: only its owner or root may release it",
                 job_id, job->rec.user);
        return -1;
    }
    if (!job->rec.user_hold) {
        snprintf(reply, size,
                 "job %u is not held by its owner; it waits for lucid's decision (%s)", job_id,
                 job->rec.reason);
        return -1;
    }
    job->rec.user_hold = 0;
    job->waits_for[0] = '\0';
    set_reason(d, job, "its owner released it; waiting for lucid's decision");
    save(d, job);
    lucidd_log("job %u: released by its owner (uid %u)", job_id, uid);
    snprintf(reply, size, "job %u released: it now waits for lucid's decision", job_id);
    return 0;
}
