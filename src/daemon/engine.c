/* engine.c — lucidd's tick: read Slurm, move each job through its phases,
 * enforce the profiling time limit, ask decide.c what starts, apply it.
 *
 * Durability rule: a decision is written (with the job's new phase) before it
 * is applied to Slurm and acknowledged after; a restart finds unacknowledged
 * decisions and re-applies or acknowledges them from what Slurm reports
 * (engine_reconcile), so no job is lost or started twice.
 *
 * Estimates and sharing scores come from models.c (the duration model the
 * update engine retrains, or the heuristic before it has enough finished
 * jobs; the sharing tree or the utilisation heuristic); a profiled job's
 * estimate is never below the time it already ran in the profiler.  The
 * packing switch "auto" is on while the main queue asks for more GPUs than
 * are free (docs/live.md). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon.h"
#include "decide.h"
#include "lucid/util.h"
#include "models.h"
#include "slurm_io.h"

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

lucidd_job *engine_find(lucidd *d, uint32_t job_id)
{
    for (size_t i = 0; i < d->njobs; i++)
        if (d->jobs[i].rec.job_id == job_id)
            return &d->jobs[i];
    return NULL;
}

static lucidd_job *add_job(lucidd *d)
{
    if (LUCID_GROW(d->jobs, d->cap, d->njobs + 1) < 0)
        return NULL;
    lucidd_job *job = &d->jobs[d->njobs++];
    memset(job, 0, sizeof *job);
    return job;
}

static void note_error(lucidd *d, const lucid_error *err)
{
    snprintf(d->last_error, sizeof d->last_error, "%s", err->msg);
    lucidd_log("%s", err->msg);
}

/* Persists the job; a store failure is logged, the daemon keeps serving. */
static void save(lucidd *d, lucidd_job *job)
{
    lucid_error err = {{0}};
    if (lucid_state_put_job(d->state, &job->rec, &err) < 0)
        note_error(d, &err);
}

static void set_phase(lucidd_job *job, lucid_phase phase, const char *reason)
{
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

/* ---- estimates ---- */

/* The job's estimate from the newest duration model (or the heuristic:
 * its Slurm time limit, else --default-estimate); a new value is recorded
 * with the model version behind it. */
static void estimate(lucidd *d, lucidd_job *job)
{
    double heuristic_s =
        job->time_limit_min ? 60.0 * job->time_limit_min : d->cfg.default_estimate_s;
    int64_t version = 0;
    double estimate_s = lucidd_models_estimate(d->models, job, heuristic_s, &version);
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

static int held(lucid_phase phase)
{
    return phase == LUCID_PHASE_PROFILE_QUEUE || phase == LUCID_PHASE_MAIN_QUEUE ||
           phase == LUCID_PHASE_MOVING;
}

/* Held jobs estimated before the newest duration model (or before a
 * restart) are estimated again, and their profiles scored again. */
static void refresh_estimates(lucidd *d)
{
    int64_t current = lucidd_models_version(d->models, "duration");
    for (size_t i = 0; i < d->njobs; i++) {
        lucidd_job *job = &d->jobs[i];
        if (!held(job->rec.phase) || job->estimated_with == current)
            continue;
        if (job->profile.samples > 0) {
            lucid_gpu_sample mean = lucid_gpu_profile_result(&job->profile);
            job->rec.sharing_score = lucidd_models_sharing(d->models, &mean);
        }
        estimate(d, job);
        save(d, job);
    }
}

/* The update engine's step: a finished training becomes the model the
 * estimates come from; a due one starts on the worker thread. */
static void update_models(lucidd *d, time_t now)
{
    lucid_error err = {{0}};
    int rc = lucidd_models_update(d->models, d->jobs, d->njobs, (int64_t)now, &err);
    if (rc < 0)
        note_error(d, &err);
    else if (rc == 1)
        lucidd_log("duration model v%lld in use; held jobs re-estimated",
                   (long long)lucidd_models_version(d->models, "duration"));
    refresh_estimates(d);
}

/* ---- intake ---- */

static int managed(const lucidd *d, const char *partition)
{
    return strcmp(partition, d->cfg.main_partition) == 0 ||
           strcmp(partition, d->cfg.profiling_partition) == 0;
}

static void reject(lucidd *d, lucidd_job *job, const char *reason)
{
    lucid_error err = {{0}};
    set_phase(job, LUCID_PHASE_FAILED, reason);
    int64_t id = record_decision(d, job, "reject", "", reason);
    if (slurm_io_cancel(job->rec.job_id, &err) < 0)
        note_error(d, &err);
    ack(d, id);
}

static void intake(lucidd *d, const slurm_job *sj)
{
    lucidd_job *job = add_job(d);
    if (!job)
        return;
    lucid_job_record *rec = &job->rec;
    rec->job_id = sj->id;
    snprintf(rec->user, sizeof rec->user, "%s", sj->user);
    snprintf(rec->name, sizeof rec->name, "%s", sj->name);
    snprintf(rec->partition, sizeof rec->partition, "%s", sj->partition);
    rec->gpus = sj->gpus;
    rec->nodes = sj->nodes;
    rec->submit_time = sj->submit_time;
    rec->sharing_score = -1;
    rec->phase_since = time(NULL);
    rec->cpus = sj->cpus;
    job->gpus_per_node = sj->gpus_per_node;
    job->restarts_seen = sj->restarts;
    job->time_limit_min = sj->time_limit_min;
    job->estimated_with = -1;
    estimate(d, job);
    char reason[256];
    if (sj->gres_malformed) {
        reject(d, job, "malformed GPU request: lucid cannot read it");
        return;
    }
    if (d->main_gpus > 0 && sj->gpus > d->main_gpus) {
        snprintf(reason, sizeof reason, "asks for %d GPUs but partition %s has %d", sj->gpus,
                 d->cfg.main_partition, d->main_gpus);
        reject(d, job, reason);
        return;
    }
    if (!sj->held || sj->state != SJ_PENDING) {
        /* Released before lucid saw it (lucid was down, or an operator). */
        int profiling = strcmp(sj->partition, d->cfg.profiling_partition) == 0;
        set_phase(job, profiling ? LUCID_PHASE_PROFILING : LUCID_PHASE_RUNNING,
                  "released outside lucid; adopted");
        save(d, job);
        return;
    }
    if (sj->gpus <= d->cfg.gpu_limit && sj->nodes <= 1) {
        set_phase(job, LUCID_PHASE_PROFILE_QUEUE, "waiting for the profiler");
    } else {
        snprintf(reason, sizeof reason, "not profiled (more than %d GPUs); in the main queue",
                 d->cfg.gpu_limit);
        set_phase(job, LUCID_PHASE_MAIN_QUEUE, reason);
    }
    save(d, job);
}

/* ---- tracking ---- */

static void keep_profile(lucidd *d, lucidd_job *job, double measured_s);

static void end_job(lucidd *d, lucidd_job *job, const slurm_job *sj)
{
    char reason[256];
    int in_profiler = job->rec.phase == LUCID_PHASE_PROFILING ||
                      job->rec.phase == LUCID_PHASE_MOVING ||
                      (job->rec.phase == LUCID_PHASE_PROFILE_QUEUE && sj->start_time);
    /* A short job may start and end between two ticks: its run, as Slurm
     * measured it, is a training row of the duration model. */
    if (in_profiler && sj->start_time) {
        snprintf(reason, sizeof reason, "ended in the profiler (%s)", sj->state_name);
        set_phase(job, LUCID_PHASE_DONE_IN_PROFILER, reason);
        if (!job->rec.profile_start)
            job->rec.profile_start = sj->start_time;
        keep_profile(d, job, difftime(sj->end_time ? sj->end_time : time(NULL), sj->start_time));
    } else if (sj->state == SJ_COMPLETED) {
        set_phase(job, LUCID_PHASE_DONE, "completed");
        if (!job->rec.main_start && sj->start_time)
            job->rec.main_start = sj->start_time;
    } else {
        snprintf(reason, sizeof reason, "ended %s", sj->state_name);
        set_phase(job, LUCID_PHASE_FAILED, reason);
    }
    job->rec.end_time = sj->end_time ? sj->end_time : time(NULL);
    if (job->rec.packed_with) {
        lucidd_job *partner = engine_find(d, job->rec.packed_with);
        if (partner && partner->rec.packed_with == job->rec.job_id) {
            partner->rec.packed_with = 0;
            save(d, partner);
        }
    }
    save(d, job);
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

static void profile_limit(lucidd *d, lucidd_job *job, const slurm_job *sj, time_t now)
{
    double ran = difftime(now, sj->start_time);
    if (ran < d->cfg.profile_limit_s)
        return;
    char reason[256];
    snprintf(reason, sizeof reason, "profiled for %.0f s (limit %.0f s); moving to %s", ran,
             d->cfg.profile_limit_s, d->cfg.main_partition);
    keep_profile(d, job, ran);
    set_phase(job, LUCID_PHASE_MOVING, reason);
    int64_t id = record_decision(d, job, "requeue", d->cfg.main_partition, reason);
    lucid_error err = {{0}};
    if (slurm_io_requeue_hold(job->rec.job_id, &err) < 0) {
        note_error(d, &err);
        return; /* retried by reconcile or next tick (phase MOVING, job still running) */
    }
    ack(d, id);
}

static void finish_move(lucidd *d, lucidd_job *job, const slurm_job *sj)
{
    if (sj->state == SJ_RUNNING && strcmp(sj->partition, d->cfg.profiling_partition) == 0) {
        /* The requeue did not take (or its acknowledgement was lost before it was sent). */
        lucid_error err = {{0}};
        if (slurm_io_requeue_hold(job->rec.job_id, &err) < 0)
            note_error(d, &err);
        return;
    }
    if (sj->state != SJ_PENDING || sj->completing)
        return; /* requeue is asynchronous */
    lucid_error err = {{0}};
    if (strcmp(sj->partition, d->cfg.main_partition) != 0 &&
        slurm_io_move(job->rec.job_id, d->cfg.main_partition, &err) < 0) {
        note_error(d, &err);
        return;
    }
    snprintf(job->rec.partition, sizeof job->rec.partition, "%s", d->cfg.main_partition);
    job->rec.node_list[0] = '\0';
    job->time_limit_min = sj->time_limit_min;
    estimate(d, job);
    set_phase(job, LUCID_PHASE_MAIN_QUEUE, "profiled; in the main queue");
    save(d, job);
}

static void note_start(lucidd *d, lucidd_job *job, const slurm_job *sj)
{
    if (sj->start_time == job->slurm_start)
        return;
    job->slurm_start = sj->start_time;
    if (job->rec.phase == LUCID_PHASE_RUNNING) {
        job->rec.main_start = sj->start_time;
        job->rec.runs++;
    } else if (job->rec.phase == LUCID_PHASE_PROFILING) {
        job->rec.profile_start = sj->start_time;
    }
    save(d, job);
}

static void track(lucidd *d, lucidd_job *job, const slurm_job *sj, time_t now)
{
    if (job->restarts_seen < 0)
        job->restarts_seen = sj->restarts; /* first sight after a restart of lucidd */
    job->time_limit_min = sj->time_limit_min;
    if (sj->state == SJ_COMPLETED || sj->state == SJ_FAILED) {
        /* A requeue passes through an ended state while it completes. */
        if (!sj->requeueing && !sj->completing)
            end_job(d, job, sj);
        return;
    }
    switch (job->rec.phase) {
    case LUCID_PHASE_PROFILE_QUEUE:
    case LUCID_PHASE_MAIN_QUEUE:
        if (sj->state == SJ_RUNNING || !sj->held) {
            int profiling = strcmp(sj->partition, d->cfg.profiling_partition) == 0;
            set_phase(job, profiling ? LUCID_PHASE_PROFILING : LUCID_PHASE_RUNNING,
                      "released outside lucid; adopted");
            save(d, job);
        }
        break;
    case LUCID_PHASE_PROFILING:
        if (sj->state == SJ_RUNNING) {
            note_start(d, job, sj);
            profile_limit(d, job, sj, now);
        } else if (sj->held && sj->restarts > job->restarts_seen) {
            set_phase(job, LUCID_PHASE_MOVING, "requeued by lucid; moving");
            save(d, job);
        }
        break;
    case LUCID_PHASE_MOVING:
        finish_move(d, job, sj);
        break;
    case LUCID_PHASE_RUNNING:
        if (sj->state == SJ_RUNNING)
            note_start(d, job, sj);
        else if (sj->held && sj->restarts > job->restarts_seen) {
            /* Requeued by Slurm (node failure...): back to the queue. */
            job->rec.packed_with = 0;
            set_phase(job, LUCID_PHASE_MAIN_QUEUE, "requeued by Slurm; waiting again");
            save(d, job);
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

static void apply_start(lucidd *d, lucidd_job *job, const decide_result *result, int profiling)
{
    const char *partition = profiling ? d->cfg.profiling_partition : d->cfg.main_partition;
    snprintf(job->rec.partition, sizeof job->rec.partition, "%s", partition);
    snprintf(job->rec.node_list, sizeof job->rec.node_list, "%s", result->nodes);
    snprintf(job->rec.gpu_list, sizeof job->rec.gpu_list, "%s", result->gpu_list);
    job->rec.packed_with = result->partner;
    set_phase(job, profiling ? LUCID_PHASE_PROFILING : LUCID_PHASE_RUNNING, result->reason);
    lucidd_job *partner = result->partner ? engine_find(d, result->partner) : NULL;
    if (partner) {
        partner->rec.packed_with = job->rec.job_id;
        save(d, partner);
    }
    /* The packing switch at decision time is kept with it: when it is off
     * the order is strict (no job passes a waiting higher-priority one). */
    char target[sizeof result->nodes + sizeof result->gpu_list + 32];
    snprintf(target, sizeof target, "%s%s%s%s", result->nodes, result->partner ? " gpus=" : "",
             result->gpu_list,
             profiling ? "" : d->packing_on ? " packing=on" : " packing=off");
    int64_t id = record_decision(d, job, profiling ? "profile" : result->partner ? "pack" : "start",
                                 target, result->reason);
    lucid_error err = {{0}};
    if (slurm_io_start(job->rec.job_id, partition, result->nodes,
                       result->partner ? result->gpu_list : NULL, &err) < 0) {
        note_error(d, &err);
        return; /* unacknowledged: reconcile re-applies or the next tick adopts */
    }
    ack(d, id);
}

/* Free GPUs per node: Slurm's count, less what lucid released that Slurm has
 * not started yet. */
static int collect_nodes(lucidd *d, const char *partition, const slurm_node *snodes, long n,
                         const slurm_job *sjobs, long nsjobs, decide_node *out)
{
    int count = 0;
    for (long i = 0; i < n; i++) {
        if (strcmp(snodes[i].partition, partition) != 0)
            continue;
        decide_node *node = &out[count++];
        snprintf(node->name, sizeof node->name, "%s", snodes[i].name);
        node->total_gpus = snodes[i].gpus;
        node->free_gpus = snodes[i].usable ? snodes[i].gpus - snodes[i].gpus_used : 0;
    }
    for (long i = 0; i < nsjobs; i++) {
        lucidd_job *job = engine_find(d, sjobs[i].id);
        if (!job || sjobs[i].state != SJ_PENDING || sjobs[i].held || job->rec.packed_with ||
            (job->rec.phase != LUCID_PHASE_RUNNING && job->rec.phase != LUCID_PHASE_PROFILING))
            continue;
        /* Released, not yet running: its GPUs are promised. */
        char nodes[256];
        snprintf(nodes, sizeof nodes, "%s", job->rec.node_list);
        int share = job->rec.nodes > 0 ? job->rec.gpus / job->rec.nodes : job->rec.gpus;
        char *save_ptr = NULL;
        for (char *name = strtok_r(nodes, ",", &save_ptr); name;
             name = strtok_r(NULL, ",", &save_ptr))
            for (int k = 0; k < count; k++)
                if (strcmp(out[k].name, name) == 0) {
                    out[k].free_gpus -= share;
                    out[k].settling++;
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
        for (int k = 0; k < count; k++)
            if (strcmp(out[k].name, r->node_list) == 0)
                out[k].free_gpus = 0;
    }
    for (int k = 0; k < count; k++)
        if (out[k].free_gpus < 0)
            out[k].free_gpus = 0;
    return count;
}

static decide_job decide_view(const lucidd_job *job)
{
    decide_job view = {.id = job->rec.job_id,
                       .gpus = job->rec.gpus,
                       .nodes = job->rec.nodes,
                       .priority = job->rec.priority,
                       .sharing_score = job->rec.sharing_score};
    lucid_gpu_sample mean = lucid_gpu_profile_result(&job->profile);
    view.gmem_mib = mean.gmem_used_mib;
    return view;
}

static void apply_results(lucidd *d, const decide_result *results, int n, int profiling)
{
    for (int i = 0; i < n; i++) {
        lucidd_job *job = engine_find(d, results[i].id);
        if (!job)
            continue;
        if (results[i].start) {
            apply_start(d, job, &results[i], profiling);
        } else if (strcmp(job->rec.reason, results[i].reason) != 0) {
            snprintf(job->rec.reason, sizeof job->rec.reason, "%s", results[i].reason);
            save(d, job);
        }
    }
}

static void update_packing(lucidd *d, const decide_node *nodes, int nnodes)
{
    if (d->cfg.packing_mode >= 0) {
        d->packing_on = d->cfg.packing_mode;
        return;
    }
    long wanted = 0, free_gpus = 0;
    for (size_t i = 0; i < d->njobs; i++)
        if (d->jobs[i].rec.phase == LUCID_PHASE_MAIN_QUEUE)
            wanted += d->jobs[i].rec.gpus;
    for (int k = 0; k < nnodes; k++)
        free_gpus += nodes[k].free_gpus;
    d->packing_on = wanted > free_gpus;
}

static void decide_and_apply(lucidd *d, const slurm_job *sjobs, long nsjobs)
{
    lucid_error err = {{0}};
    slurm_node *snodes = NULL;
    char partitions[256];
    snprintf(partitions, sizeof partitions, "%s,%s", d->cfg.main_partition,
             d->cfg.profiling_partition);
    long nsnodes = slurm_io_nodes(partitions, &snodes, &err);
    if (nsnodes < 0) {
        note_error(d, &err);
        d->slurm_errors++;
        return;
    }
    decide_node *nodes = calloc((size_t)nsnodes + 1, sizeof *nodes);
    decide_job *waiting = calloc(d->njobs + 1, sizeof *waiting);
    decide_running *running = calloc(d->njobs + 1, sizeof *running);
    decide_result *results = calloc(d->njobs + 1, sizeof *results);
    if (!nodes || !waiting || !running || !results)
        goto done;

    int nnodes = collect_nodes(d, d->cfg.profiling_partition, snodes, nsnodes, sjobs, nsjobs, nodes);
    int nwaiting = 0;
    for (size_t i = 0; i < d->njobs; i++)
        if (d->jobs[i].rec.phase == LUCID_PHASE_PROFILE_QUEUE)
            waiting[nwaiting++] = decide_view(&d->jobs[i]);
    double t0 = monotonic_s();
    decide_profiling(waiting, nwaiting, nodes, nnodes, results);
    double profiling_s = monotonic_s() - t0;
    apply_results(d, results, nwaiting, 1);

    nnodes = collect_nodes(d, d->cfg.main_partition, snodes, nsnodes, sjobs, nsjobs, nodes);
    d->main_gpus = 0;
    for (int k = 0; k < nnodes; k++)
        d->main_gpus += nodes[k].total_gpus;
    nwaiting = 0;
    int nrunning = 0;
    for (size_t i = 0; i < d->njobs; i++) {
        const lucidd_job *job = &d->jobs[i];
        if (job->rec.phase == LUCID_PHASE_MAIN_QUEUE)
            waiting[nwaiting++] = decide_view(job);
        if (job->rec.phase != LUCID_PHASE_RUNNING || job->rec.nodes > 1)
            continue;
        for (long s = 0; s < nsjobs; s++) {
            if (sjobs[s].id != job->rec.job_id || sjobs[s].state != SJ_RUNNING)
                continue;
            decide_running *r = &running[nrunning];
            r->job = decide_view(job);
            r->packed = job->rec.packed_with != 0;
            snprintf(r->gpu_list, sizeof r->gpu_list, "%s",
                     job->rec.packed_with && job->rec.gpu_list[0] ? job->rec.gpu_list
                                                                   : sjobs[s].first_gpus);
            r->node = -1;
            for (int k = 0; k < nnodes; k++)
                if (strcmp(nodes[k].name, sjobs[s].node_list) == 0)
                    r->node = k;
            if (r->node >= 0)
                nrunning++;
        }
    }
    update_packing(d, nodes, nnodes);
    decide_params params = {.packing = d->packing_on,
                            .gpu_memory_mib = d->cfg.gpu_memory_mib,
                            .score_sum = d->cfg.score_sum,
                            .priority_ratio = d->cfg.priority_ratio};
    t0 = monotonic_s();
    decide_main(waiting, nwaiting, running, nrunning, nodes, nnodes, &params, results);
    double latency = profiling_s + monotonic_s() - t0;
    apply_results(d, results, nwaiting, 0);
    d->latency_s[d->latency_count % LUCIDD_LATENCY_SAMPLES] = latency;
    d->latency_count++;
    d->latency_sum_s += latency;
done:
    free(nodes);
    free(waiting);
    free(running);
    free(results);
    free(snodes);
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

void engine_tick(lucidd *d)
{
    lucid_error err = {{0}};
    if (!d->reconciled) {
        /* After a restart, nothing is decided before the unacknowledged
         * decisions are settled; Slurm may not answer yet (slurmctld
         * restarting): the API keeps serving meanwhile. */
        if (engine_reconcile(d, &err) < 0) {
            if (d->slurm_up || d->ticks == 0)
                note_error(d, &err);
            d->slurm_up = 0;
            d->ticks++;
            return;
        }
        d->reconciled = 1;
    }
    slurm_job *sjobs = NULL;
    long n = slurm_io_jobs(&sjobs, &err);
    d->ticks++;
    if (n < 0) {
        if (d->slurm_up)
            note_error(d, &err);
        d->slurm_up = 0;
        d->slurm_errors++;
        return; /* keep serving the API; try again next tick */
    }
    d->slurm_up = 1;
    time_t now = time(NULL);
    for (size_t i = 0; i < d->njobs; i++)
        d->jobs[i].seen = 0;
    for (long i = 0; i < n; i++) {
        const slurm_job *sj = &sjobs[i];
        lucidd_job *job = engine_find(d, sj->id);
        if (job) {
            job->seen = 1;
            if (!lucid_phase_is_final(job->rec.phase))
                track(d, job, sj, now);
        } else if (managed(d, sj->partition) &&
                   (sj->state == SJ_PENDING || sj->state == SJ_RUNNING)) {
            intake(d, sj);
            if ((job = engine_find(d, sj->id)))
                job->seen = 1;
        }
    }
    for (size_t i = 0; i < d->njobs; i++) {
        lucidd_job *job = &d->jobs[i];
        if (!job->seen && !lucid_phase_is_final(job->rec.phase)) {
            set_phase(job, LUCID_PHASE_FAILED, "no longer known to Slurm");
            save(d, job);
        }
    }
    sample_profiles(d, sjobs, n);
    update_models(d, now);
    decide_and_apply(d, sjobs, n);
    free(sjobs);
}

int engine_load(lucidd *d, lucid_error *err)
{
    lucid_job_record *records = NULL;
    long n = lucid_state_list_jobs(d->state, 1, &records, err);
    if (n < 0)
        return -1;
    for (long i = 0; i < n; i++) {
        lucidd_job *job = add_job(d);
        if (!job) {
            free(records);
            return lucid_error_set(err, "out of memory");
        }
        job->rec = records[i];
        int64_t samples = 0;
        lucid_gpu_sample mean;
        if (lucid_state_get_profile(d->state, job->rec.job_id, &mean, &samples, err) == 1) {
            job->profile.samples = samples;
            job->profile.gpu_util_sum = mean.gpu_util_pct * (double)samples;
            job->profile.gmem_util_sum = mean.gmem_util_pct * (double)samples;
            job->profile.gmem_max_mib = mean.gmem_used_mib;
        }
        job->restarts_seen = -1;
        job->estimated_with = -1; /* re-estimated from the newest model at the first tick */
        job->estimate_version = -1;
        job->slurm_start = job->rec.phase == LUCID_PHASE_RUNNING ? job->rec.main_start
                                                                 : job->rec.profile_start;
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
    for (long i = 0; i < n; i++) {
        const lucid_decision_record *dec = &pending[i];
        lucidd_job *job = engine_find(d, dec->job_id);
        const slurm_job *sj = NULL;
        for (long s = 0; s < nsjobs; s++)
            if (sjobs[s].id == dec->job_id)
                sj = &sjobs[s];
        lucid_error apply_err = {{0}};
        int still_held = sj && sj->state == SJ_PENDING && sj->held;
        if (job && sj && still_held &&
            (strcmp(dec->action, "start") == 0 || strcmp(dec->action, "pack") == 0 ||
             strcmp(dec->action, "profile") == 0) &&
            (job->rec.phase == LUCID_PHASE_RUNNING || job->rec.phase == LUCID_PHASE_PROFILING)) {
            lucidd_log("job %u: re-applying unacknowledged %s on %s", dec->job_id, dec->action,
                       job->rec.node_list);
            if (slurm_io_start(dec->job_id, job->rec.partition, job->rec.node_list,
                               job->rec.packed_with ? job->rec.gpu_list : NULL, &apply_err) < 0) {
                note_error(d, &apply_err);
                continue;
            }
        } else if (job && sj && strcmp(dec->action, "requeue") == 0 && sj->state == SJ_RUNNING &&
                   job->rec.phase == LUCID_PHASE_MOVING) {
            lucidd_log("job %u: re-applying unacknowledged requeue", dec->job_id);
            if (slurm_io_requeue_hold(dec->job_id, &apply_err) < 0) {
                note_error(d, &apply_err);
                continue;
            }
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
