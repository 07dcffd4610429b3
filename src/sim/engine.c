/* engine.c — the event-driven simulation loop (sim.h).
 *
 * Per VC: jump to the next step at which something can change — an
 * arrival, a completion, the policy's own next decision point, a borrowed
 * node coming or going, or the step after a capacity change — and run the
 * reference's step there: completions, arrivals, the policy's decision,
 * node borrowing, the 60-second sample.  Samples between visited steps are
 * copies of the state after the last visited one (nothing changed).
 * Tasks (policy x VC) run on a small thread pool; each writes only its own
 * jobs' records, so results are identical for any thread count.
 *
 * A VC's run works on VC-local arrays: a copy of its jobs' trace records
 * and their working records (lucid_jobrun), indexed by the job's position
 * among the VC's jobs in trace order — so every tie-break by job index
 * orders as it did by trace index — and its per-job inputs (priorities,
 * sharing scores, plan estimates) copied likewise.  A job's records are
 * set up when it arrives; once it has ended and no structure names it any
 * more, its outcome goes into the policy's compact result (lucid_jobresult,
 * trace-indexed, job references mapped back) and the pages of its records
 * go back to the system (vc_run_release), the rest at the run's end: memory
 * holds about the records of the jobs in flight, not of the VC's jobs, and
 * a VC's jobs lie together in memory.  Pages that go back are recycled
 * where they can be: moved ahead to the records about to be set up, and at
 * a run's end to the front of the same worker's next run (release.c). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/eta.h"
#include "lucid/fairshare.h"
#include "lucid/online.h"
#include "sim_internal.h"

#define TEMP_NODE_LABEL 9999
#define SAMPLE_PERIOD 60
#define PROGRESS_BATCH 1024 /* ended jobs between progress reports of a VC run */
/* Ended jobs between two looks for working records to release (at least:
 * a look costs one pass over the jobs the VC's structures hold). */
#define RELEASE_EVERY 4096
#define LOOK_SPACING 4
/* Bytes of recycled record pages that may wait past the set-up frontier,
 * per array (release.c): little next to a releasable VC's 16 MiB or more
 * (at 1M jobs, pools of 2 to 64 MiB saved the same faults). */
#define RECYCLE_POOL ((size_t)16 << 20)
/* Series cover at most ten years of simulated time (5.3M samples, ~170 MB
 * per VC): a trace that runs longer, e.g. one stray submit time far in the
 * future, is refused instead of filling memory. */
#define SERIES_MAX_SPAN ((int64_t)3650 * 86400)

void lucid_sim_config_defaults(lucid_sim_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->placer = lucid_placer_find("consolidate");
    cfg->sem = lucid_semantics_fixed();
    cfg->gpus_per_node = 8;
    cfg->threads = 2;
    cfg->seed = 1;
    cfg->start = -1;
    cfg->lucid.profiler_nodes = 2;
    cfg->lucid.profiler_time_limit = 200;
    cfg->lucid.profiler_factor = 4;
    cfg->lucid.profiler_autoscale = 1;
    cfg->lucid.borrow_vc = -1;
    cfg->fairshare_half_life = LUCID_FAIRSHARE_HALF_LIFE_DEFAULT;
    cfg->slurm = lucid_slurm_priority_default();
    cfg->lucid.gmem_limit = 24576;
    cfg->lucid.priority_ratio = 2;
    cfg->lucid.score_sum = 2;
    cfg->lucid.pack_threshold = 2;
    cfg->lucid.scale_down_factor = 5;
    cfg->lucid.scale_up_queue = 10;
    cfg->observe.job = -1;
    cfg->lucid.scale_down_queue = 5;
    cfg->release_min_bytes = lucid_release_min_bytes_default();
}

/* Everything one policy's run shares across its VC tasks. */
typedef struct policy_run {
    const lucid_policy_ops *policy;
    lucid_sim_result *result;
    double *priority;          /* estimate x gpus, or NULL */
    int32_t *share;
    int32_t *outside_model;
    lucid_lucid_inputs lucid;
    int64_t *switch_times;
    int8_t *switch_values;
    lucid_profile_log log;
    /* arrivals per VC: (time, job) in join order; the job as its VC-local
     * index (its position among the VC's simulated jobs in trace order) */
    int64_t *arrival_time;
    int32_t *arrival_job;
    size_t *vc_first;          /* arrivals of VC v: [vc_first[v], vc_first[v+1]) */
    /* The same ranges of vc_jobs: VC v's simulated jobs' trace indices in
     * trace order, so vc_jobs[vc_first[v] + i] is VC-local job i. */
    int32_t *vc_jobs;
    lucid_sample **vc_samples;
    size_t *vc_nsamples;
    lucid_online *online;      /* models trained during the run (online mode) */
    lucid_forecast online_forecast;
    lucid_backfill_config backfill;
    lucid_backfill_stats *vc_backfill; /* per VC (each task writes its own) */
    lucid_eta_row **vc_hourly;         /* cfg.eta: per VC, its hourly re-predictions */
    size_t *vc_nhourly;
    int tasks_left;                    /* its VC tasks not yet done (the pool's lock) */
    int prepared;                      /* prepare_run's result: 0 ok, -1 failed (prep_err) */
    int finished;                      /* finish_run done */
    lucid_error prep_err;
} policy_run;

typedef struct sim_context {
    const lucid_sim_config *cfg;
    const lucid_sim_inputs *in;
    policy_run *runs;
    int nruns;
    unsigned char *excluded;
    /* task queue: (run, VC), or (run, -1): prepare that run */
    int32_t *task_run, *task_vc;
    int ntasks, next_task;
    pthread_mutex_t lock;
    /* progress: jobs ended over all policies' runs (one counter for the
     * whole call, so it never restarts, and it moves with simulated time
     * inside a VC run, not only when a run completes) */
    int64_t done_jobs, total_jobs;
    lucid_progress_fn progress;
    void *user;
    int failed;
    lucid_error err;
    /* Lockstep phase of an online run: tasks advance these runs to `limit`. */
    struct vc_run *vc_runs;
    int64_t limit;
} sim_context;

/* ---------------- node borrowing mirrored on the lending VC ---------------- */

typedef struct borrow_state {
    int has_temp_node;  /* the reference's flag: a node was lent before */
    int pending;        /* fixed semantics: lendings waiting for an idle node */
    int32_t base_nodes;
} borrow_state;

static int32_t find_label(const lucid_cluster *c, int32_t label)
{
    for (int32_t i = 0; i < c->nslots; i++)
        if (c->nodes[i].alive && c->nodes[i].label == label)
            return i;
    return -1;
}

/* Removes the idle node with the largest label; returns 0 if none is idle. */
static int lend_idle_node(lucid_cluster *c, borrow_state *b)
{
    int32_t chosen = -1;
    for (int32_t i = 0; i < c->nslots; i++)
        if (c->nodes[i].alive && c->nodes[i].free == c->gpus_per_node &&
            (chosen < 0 || c->nodes[i].label > c->nodes[chosen].label))
            chosen = i;
    if (chosen < 0)
        return 0;
    int32_t temp = find_label(c, TEMP_NODE_LABEL);
    if (c->nodes[chosen].label < TEMP_NODE_LABEL && b->has_temp_node && temp >= 0)
        c->nodes[temp].label = c->nodes[chosen].label; /* the busy 9999 node takes its name */
    lucid_cluster_remove_node(c, chosen);
    b->has_temp_node = 1;
    return 1;
}

/* Applies one mirrored scaling event; returns 1 if capacity was added. */
static int apply_borrow(lucid_sched *s, borrow_state *b, int32_t profiler_delta)
{
    lucid_cluster *c = &s->cluster;
    if (profiler_delta > 0) { /* the profiler took a node from this VC */
        if (!lend_idle_node(c, b) && !s->sem.borrow_lost)
            b->pending++;
        return 0;
    }
    if (s->sem.borrow_lost) { /* reference: add a 9999 node unless one exists */
        if (find_label(c, TEMP_NODE_LABEL) >= 0)
            return 0;
        lucid_cluster_add_node(c, TEMP_NODE_LABEL);
        return 1;
    }
    if (b->pending > 0) {
        b->pending--;
        return 0;
    }
    if (c->alive_nodes >= b->base_nodes)
        return 0;
    lucid_cluster_add_node(c, TEMP_NODE_LABEL);
    return 1;
}

/* ---------------- one VC under one policy ---------------- */

static int32_t pending_gpus(const lucid_sched *s)
{
    int64_t sum = 0;
    for (size_t i = 0; i < s->qlen; i++)
        sum += s->jobs[s->queue[i]].gpu_num;
    return (int32_t)sum;
}

static int record_sample(lucid_sample **samples, size_t *n, size_t *cap, const lucid_sched *s,
                         int64_t time, int32_t pending)
{
    if (LUCID_GROW(*samples, *cap, *n + 1) < 0)
        return -1;
    (*samples)[(*n)++] = (lucid_sample){
        .time = time,
        .vc = s->vc,
        .total_gpus = (int32_t)s->cluster.total_gpus,
        .idle_gpus = (int32_t)s->cluster.free_gpus,
        .pending_gpus = pending,
        .running_jobs = (int32_t)s->nrunning,
        .pending_jobs = (int32_t)s->qlen,
        .packed_gpus = (int32_t)s->packed_gpus,
    };
    return 0;
}

/* The loop state of one VC's run, so a run can pause at a time limit (the
 * online update engine retrains between periods) and go on. */
typedef struct vc_run {
    lucid_sched s;
    policy_run *pr;
    int32_t vc;
    /* The VC-local arrays (the file's head comment): njobs jobs, local job
     * i being trace job global[i]. */
    const int32_t *global;
    size_t njobs;
    lucid_job *jobs;
    lucid_jobrun *run;
    double *priority;       /* QSSF, Lucid: pr->priority's values */
    int32_t *share;         /* Lucid: sharing scores */
    double *estimate;       /* in->plan_estimates' values, or NULL */
    int64_t *reserved_at;   /* backfill: the latest reservation, or NULL */
    /* jobs' and run's pages, handed back as their jobs are done with
     * (vc_run_release) */
    lucid_record_pages jobs_pages, run_pages;
    /* the worker's pages kept from its last run, for its next (jobs',
     * run's; NULL: none kept) */
    lucid_record_pages *spare;
    /* per job: JOB_UNSET (records not written yet: they are set up when the
     * job arrives, so the pages of jobs to come stay untouched), JOB_SET,
     * JOB_PUBLISHED (outcome in the result, records released) */
    unsigned char *state;
    const lucid_job *trace_jobs; /* the trace's, indexed by v->global */
    lucid_semantics sem;
    int track_eta;            /* cfg->eta: changes go to eta_track too */
    int64_t ended_since, look_every; /* ended jobs since the last look; when to look */
    lucid_lucid_inputs lucid; /* pr->lucid with the local sharing scores */
    lucid_fairshare fairshare; /* the VC's users' usage (cfg->fairshare_weight > 0) */
    int32_t *slurm_account;    /* the slurm policy's: each ledger slot's account, -1 none */
    borrow_state borrow;
    int32_t watched;
    int lends;
    size_t next_scaling;
    size_t next_arrival, last;
    int64_t remaining;
    int64_t unreported;   /* jobs ended here since the last progress report */
    lucid_sample *samples;
    size_t nsamples, cap_samples;
    int64_t policy_next, forced, previous;
    lucid_gpu_use use; /* GPU use since the VC's first arrival */
    lucid_backfill bf;      /* backfill state, or the estimates the predictions use */
    lucid_eta_table table;  /* actual/estimate ratios of this VC's ended jobs */
    lucid_eta_plan plan;
    lucid_eta_plan hourly_plan; /* its own, so the hourly replays leave `plan` as it was */
    lucid_eta *eta;
    size_t cap_eta;
    double queued_work; /* the waiting jobs' estimated GPU-seconds */
    lucid_eta_row *hourly; /* re-predictions at whole hours, in time order */
    size_t nhourly, cap_hourly;
} vc_run;

/* The estimated GPU-seconds of a job (its share of the queue's work). */
static double job_work(const vc_run *v, int32_t job)
{
    return (double)v->s.jobs[job].gpu_num * lucid_backfill_job_estimate(&v->s, &v->bf, job);
}

/* The start-time estimates learn from every job that ends, and keep the
 * queue's total estimated work as jobs leave and rejoin it. */
static void eta_track(void *ctx, const lucid_sched *s, int32_t job, int event)
{
    vc_run *v = ctx;
    const lucid_jobrun *r = &s->run[job];
    if (event == LUCID_SCHED_STARTED) {
        v->queued_work -= job_work(v, job);
        return;
    }
    if (event == LUCID_SCHED_REQUEUED) {
        v->queued_work += job_work(v, job);
        lucid_eta_table_note_end(&v->table, job, 1, -1); /* preempted: not a run */
        return;
    }
    double est = lucid_backfill_job_estimate(s, &v->bf, job);
    if (r->start_time < 0 || r->ckpt_times > 0) {
        lucid_eta_table_note_end(&v->table, job, est, -1);
        return; /* preempted jobs' spans are not durations */
    }
    double duration = (double)(r->end_time - r->start_time);
    lucid_eta_table_note_end(&v->table, job, est, duration);
    lucid_eta_table_add_run(&v->table, est, duration);
}

/* Every change: an ended job's pages count it (vc_run_release); the
 * start-time estimates learn (eta_track). */
static void vc_track(void *ctx, const lucid_sched *s, int32_t job, int event)
{
    vc_run *v = ctx;
    if (event == LUCID_SCHED_ENDED) {
        lucid_record_pages_note_ended(&v->run_pages, (size_t)job);
        lucid_record_pages_note_ended(&v->jobs_pages, (size_t)job);
    }
    if (v->track_eta)
        eta_track(ctx, s, job, event);
}

/* Predicts the starts of the jobs that joined the queue at this step (whose
 * arrival_seq >= first_seq); a job that started at once gets its start. */
static int predict_arrivals(vc_run *v, uint32_t first_seq, size_t first, size_t last)
{
    lucid_sched *s = &v->s;
    lucid_sim_result *res = v->pr->result;
    size_t upto = 0, lo = s->qlen;
    /* Newcomers are mostly at the end (FIFO always): scan from there. */
    for (size_t i = s->qlen; i-- > 0;) {
        const lucid_jobrun *r = &s->run[s->queue[i]];
        if (r->arrival_seq >= first_seq && r->status == LUCID_PENDING) {
            lo = i;
            if (upto == 0)
                upto = i + 1;
        } else if (s->policy == &lucid_policy_fifo) {
            break; /* FIFO's queue is in arrival order: no newcomer before this */
        }
    }
    for (size_t k = first; k < last; k++) {
        int32_t job = v->pr->arrival_job[k], g = v->global[job];
        int64_t at = s->run[job].status == LUCID_PENDING ? -1 : s->now;
        res->eta_p10[g] = res->eta_p50[g] = res->eta_p90[g] = at;
        res->eta_at[g] = s->now;
        /* Every arrival, for the later predictions' arrivals to come (the
         * greedy replay's only; a prediction does not see its own step's).
         * The table keeps VC-local indices, as the replay reads s. */
        if (lucid_eta_uses_submitter(s, &v->bf) &&
            lucid_eta_table_note_arrival(&v->table, job, s->now) < 0)
            return -1;
    }
    if (upto == 0)
        return 0;
    /* The waiting newcomers' user, if one: that user's running jobs are
     * noted, and predicted at the levels such jobs have ended at. */
    int32_t user = -1;
    int users = 0;
    for (size_t i = lo; i < upto; i++) {
        int32_t job = s->queue[i];
        if (s->run[job].arrival_seq < first_seq || s->run[job].status != LUCID_PENDING)
            continue;
        if (users == 0 || s->jobs[job].user != user)
            users++;
        user = s->jobs[job].user;
    }
    int running = users == 1 && lucid_eta_uses_submitter(s, &v->bf)
                      ? lucid_eta_table_note_submission(&v->table, s, &v->bf, user)
                      : 0;
    if (running < 0)
        return -1;
    /* Only a user with running jobs changes the plan (a plan for no
     * submitter is then extended as before). */
    v->plan.submitter = user;
    v->plan.submitter_set = running > 0;
    if (LUCID_GROW(v->eta, v->cap_eta, upto) < 0 ||
        lucid_eta_predict(s, &v->bf, &v->table, &v->plan, lo, upto, v->queued_work, v->eta) < 0)
        return -1;
    for (size_t i = lo; i < upto; i++) {
        int32_t job = s->queue[i];
        if (s->run[job].arrival_seq < first_seq || s->run[job].status != LUCID_PENDING)
            continue;
        res->eta_p10[v->global[job]] = v->eta[i].p10;
        res->eta_p50[v->global[job]] = v->eta[i].p50;
        res->eta_p90[v->global[job]] = v->eta[i].p90;
    }
    return 0;
}

/* Predicts every waiting job's start again at whole hour m, which lies
 * after the last step and not after the next: nothing has changed since the
 * last step, so its state is the state at m.  One replay serves the whole
 * queue (deep jobs by volume), so the cost is one prediction per VC and
 * hour while jobs wait, whatever the queue's length. */
static int predict_hourly(vc_run *v, int64_t m)
{
    lucid_sched *s = &v->s;
    int64_t now = s->now;
    s->now = m;
    lucid_eta_invalidate(&v->hourly_plan); /* a fresh replay from m */
    int rc = LUCID_GROW(v->eta, v->cap_eta, s->qlen) < 0 ||
                     lucid_eta_predict(s, &v->bf, &v->table, &v->hourly_plan, 0, s->qlen,
                                       v->queued_work, v->eta) < 0
                 ? -1
                 : 0;
    s->now = now;
    if (rc < 0 || LUCID_GROW(v->hourly, v->cap_hourly, v->nhourly + s->qlen) < 0)
        return -1;
    for (size_t i = 0; i < s->qlen; i++) {
        int32_t job = s->queue[i];
        if (s->run[job].status == LUCID_PENDING)
            v->hourly[v->nhourly++] = (lucid_eta_row){v->global[job], m, v->eta[i].p10,
                                                      v->eta[i].p50, v->eta[i].p90};
    }
    return 0;
}

/* A job's working record as the run starts: waiting, its whole duration
 * left; for Lucid a profiled job carries its profiling run and joins the
 * queue with the profiler's wait counted as the semantics say. */
static void init_jobrun(lucid_jobrun *r, const lucid_job *job, const lucid_sim_result *res,
                        int32_t g, const lucid_semantics *sem)
{
    memset(r, 0, sizeof *r);
    r->start_time = r->end_time = -1;
    r->partner = r->packed_with = r->packed_onto = -1;
    r->exclusive = 1;
    r->rate = 1.0;
    r->remain = (double)job->duration;
    r->status = LUCID_WAITING;
    if (res->prof && res->prof[g].start >= 0) {
        r->profiled = 1;
        r->prof_start = res->prof[g].start;
        r->prof_end = res->prof[g].end;
        r->profqueue = r->prof_start - job->submit_time;
        if (!sem->queue_waits_only) {
            /* Comparable accounting: all time from submission to the start
             * of the run that completes; the profiling run is discarded
             * work.  Rejoining at submit, the main-queue wait spans it. */
            if (!sem->profiled_rejoin_at_submit)
                r->queue = (double)(r->prof_end - job->submit_time);
        } else if (sem->queue_double_count || !sem->profiled_rejoin_at_submit) {
            /* Rejoining at submit, the main-queue wait already spans the
             * profiler wait: adding profqueue counts it twice. */
            r->queue = (double)r->profqueue;
        }
    }
}

enum { JOB_UNSET, JOB_SET, JOB_PUBLISHED };

/* Sets up job i's records (trace record copy, working record), and those
 * of the next SET_AHEAD jobs not set up yet: jobs arrive mostly in index
 * order, and a pass over a stretch of the trace costs less than one job
 * at a time (each a cache miss in the trace and a fresh page's fault). */
#define SET_AHEAD 64
/* Records fetched ahead of use in the passes over a VC's jobs. */
#define SET_PREFETCH 8
static void set_job(vc_run *v, size_t i)
{
    if (v->state[i] != JOB_UNSET)
        return;
    size_t end = i + SET_AHEAD < v->njobs ? i + SET_AHEAD : v->njobs;
    for (size_t k = i; k < end; k++) {
        if (k + SET_PREFETCH < end) {
            const char *next = (const char *)&v->trace_jobs[v->global[k + SET_PREFETCH]];
            __builtin_prefetch(next);
            __builtin_prefetch(next + sizeof(lucid_job) - 1);
        }
        if (v->state[k] == JOB_UNSET) {
            lucid_record_pages_set(&v->jobs_pages, k);
            lucid_record_pages_set(&v->run_pages, k);
            v->jobs[k] = v->trace_jobs[v->global[k]];
            init_jobrun(&v->run[k], &v->jobs[k], v->pr->result, v->global[k], &v->sem);
            v->state[k] = JOB_SET;
        }
    }
}

/* Job i's outcome into the policy's result (trace-indexed); a job not set
 * up yet has the outcome its fresh record would give. */
static void publish_job(vc_run *v, size_t i)
{
    lucid_jobrun fresh;
    const lucid_jobrun *r = &v->run[i];
    if (v->state[i] == JOB_UNSET) {
        init_jobrun(&fresh, &v->trace_jobs[v->global[i]], v->pr->result, v->global[i], &v->sem);
        r = &fresh;
    }
    /* Its callers publish in index order: the result a few jobs on (a
     * cache miss each, the VC's jobs being spread over the trace) is
     * fetched while this one is written. */
    if (i + SET_PREFETCH < v->njobs)
        __builtin_prefetch(&v->pr->result->run[v->global[i + SET_PREFETCH]], 1);
    lucid_jobresult *o = &v->pr->result->run[v->global[i]];
    o->start_time = r->start_time;
    o->end_time = r->end_time;
    o->queue = r->queue;
    o->packed_with = r->packed_with < 0 ? -1 : v->global[r->packed_with];
    o->packed_onto = r->packed_onto < 0 ? -1 : v->global[r->packed_onto];
    o->ckpt_times = r->ckpt_times;
    o->status = r->status;
    o->exclusive = r->exclusive;
    o->profiled = r->profiled;
    o->finished_in_profiler = r->finished_in_profiler;
}

/* The run's jobs' outcomes into the policy's result, but for those there
 * already (released). */
static void vc_run_publish(vc_run *v)
{
    for (size_t i = 0; i < v->njobs; i++)
        if (v->state[i] != JOB_PUBLISHED)
            publish_job(v, i);
}

static void pin_job(void *ctx, int32_t job)
{
    vc_run *v = ctx;
    if (job < 0)
        return;
    lucid_record_pages_pin(&v->run_pages, (size_t)job);
    lucid_record_pages_pin(&v->jobs_pages, (size_t)job);
}

/* Releases the releasable pages of one array in stretches of at least
 * RELEASE_PAGES (shorter ones wait for a later look: one madvise call per
 * page would cost more than the memory is worth); for the working
 * records, the jobs on them are published first. */
#define RELEASE_PAGES 8
/* Whether pages [from, to) lie between released pages (or the array's
 * ends): such a stretch cannot grow to RELEASE_PAGES, and would be kept to
 * the run's end (and carried to the worker's next run: release.c). */
static int enclosed(const lucid_record_pages *r, size_t from, size_t to)
{
    return (from == 0 || r->released[from - 1]) && (to == r->npages || r->released[to]);
}

static void release_pages(vc_run *v, lucid_record_pages *r, int publish)
{
    size_t p = 0;
    while (p < r->npages) {
        if (!lucid_record_pages_releasable(r, p)) {
            p++;
            continue;
        }
        size_t from = p;
        while (p < r->npages && lucid_record_pages_releasable(r, p))
            p++;
        if (p - from < RELEASE_PAGES && !enclosed(r, from, p))
            continue;
        for (size_t q = from; publish && q < p; q++) {
            size_t first, end;
            lucid_record_pages_records(r, q, &first, &end);
            for (size_t i = first; i < end; i++)
                if (v->state[i] != JOB_PUBLISHED) {
                    publish_job(v, i);
                    v->state[i] = JOB_PUBLISHED;
                }
        }
        lucid_record_pages_release(r, from, p);
    }
}

/* Memory that follows the jobs in flight, not the VC's size: a page of
 * the working records (or of the trace records' copy) is handed back once
 * every job on it has ended and none is named by a structure that may
 * read its record again — the scheduler's (lucid_sched_held_jobs), the
 * start-time estimates' notes and plans, backfill's profile, the watched
 * job and its partners for the observer.  An ended job named by none will
 * not change: its outcome is published first.  Released pages are poisoned
 * under AddressSanitizer, so a read of a released record fails loudly.
 * Jobs end roughly in index (submit) order, so all but the pages of the
 * jobs in flight (and of the long ones' neighbours) go back. */
static void vc_run_release(vc_run *v)
{
    const lucid_sched *s = &v->s;
    memset(v->run_pages.pinned, 0, v->run_pages.npages);
    memset(v->jobs_pages.pinned, 0, v->jobs_pages.npages);
    lucid_sched_held_jobs(s, pin_job, v);
    if (v->watched >= 0) {
        pin_job(v, v->watched);
        pin_job(v, s->run[v->watched].packed_onto);
        pin_job(v, s->run[v->watched].packed_with);
    }
    lucid_eta_table_held_jobs(&v->table, pin_job, v);
    lucid_eta_plan_held_jobs(&v->plan, pin_job, v);
    lucid_eta_plan_held_jobs(&v->hourly_plan, pin_job, v);
    lucid_profile_held_jobs(&v->bf.prof, pin_job, v);
    release_pages(v, &v->run_pages, 1);
    release_pages(v, &v->jobs_pages, 0);
    /* The next look after LOOK_SPACING times as many ended jobs as this
     * one cost (at least RELEASE_EVERY), so looking costs O(1) per ended
     * job: at 10M jobs on 100k nodes, looks spaced by their cost alone
     * were ~45 ns per job (the pass over the held jobs, the pins, the page
     * checks); spaced by four times it, a look holds back the pages of at
     * most ~4 x (queue + 2 x running + ...) more ended jobs, a few MB. */
    size_t cost = s->qlen + 2 * s->nrunning + s->nheap + v->table.npending +
                  (v->table.narr - v->table.arr_head) + v->run_pages.npages / 16;
    v->look_every = LOOK_SPACING * cost > RELEASE_EVERY ? LOOK_SPACING * (int64_t)cost
                                                          : RELEASE_EVERY;
    v->ended_since = 0;
}

static void vc_run_free_arrays(vc_run *v)
{
    if (v->spare) {
        lucid_record_pages_keep(&v->spare[0], &v->jobs_pages);
        lucid_record_pages_keep(&v->spare[1], &v->run_pages);
    }
    lucid_record_pages_free(&v->jobs_pages);
    lucid_record_pages_free(&v->run_pages);
    free(v->state);
    v->state = NULL;
    free(v->priority);
    free(v->share);
    free(v->estimate);
    free(v->reserved_at);
    v->jobs = NULL;
    v->run = NULL;
    v->priority = NULL;
    v->share = NULL;
    v->estimate = NULL;
    v->reserved_at = NULL;
    v->njobs = 0; /* nothing left to publish (a run whose begin failed) */
}

static int compare_i32(const void *pa, const void *pb)
{
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    return (a > b) - (a < b);
}

/* Copies the VC's jobs and per-job inputs into its local arrays. */
static int vc_run_local_arrays(sim_context *ctx, policy_run *pr, vc_run *v)
{
    const lucid_trace *trace = ctx->in->trace;
    size_t n = v->njobs;
    /* A VC whose records are small keeps them whole: handing pages back
     * (and faulting fresh ones in for the next run) costs more than the
     * memory is worth (Venus: +1,050 page faults, ~3 ms of a 150 ms run). */
    int releasable = n * (sizeof *v->jobs + sizeof *v->run) >= ctx->cfg->release_min_bytes;
    if (lucid_record_pages_alloc(&v->jobs_pages, sizeof *v->jobs, n, releasable) < 0 ||
        lucid_record_pages_alloc(&v->run_pages, sizeof *v->run, n, releasable) < 0 ||
        !(v->state = calloc(n + 1, 1)))
        return -1;
    if (releasable) {
        /* The map budget is shared by the two arrays of every run alive at
         * once: one per thread, or, in an online run (the runs without a
         * spare), every VC's. */
        int threads = ctx->cfg->threads < 1 ? 1 : ctx->cfg->threads;
        size_t alive = v->spare ? (size_t)threads : (size_t)ctx->in->vcs->count + 1;
        size_t maps = lucid_record_pages_maps_budget() / (2 * alive);
        if (lucid_record_pages_recycle(&v->jobs_pages, RECYCLE_POOL, maps) < 0 ||
            lucid_record_pages_recycle(&v->run_pages, RECYCLE_POOL, maps) < 0)
            return -1;
    }
    if (v->spare) {
        lucid_record_pages_adopt(&v->jobs_pages, &v->spare[0]);
        lucid_record_pages_adopt(&v->run_pages, &v->spare[1]);
    }
    v->jobs = (lucid_job *)(void *)v->jobs_pages.base;
    v->run = (lucid_jobrun *)(void *)v->run_pages.base;
    v->trace_jobs = trace->jobs;
    v->sem = ctx->cfg->sem;
    v->look_every = releasable ? RELEASE_EVERY : INT64_MAX;
    if (pr->priority) {
        if (!(v->priority = malloc((n + 1) * sizeof *v->priority)))
            return -1;
        for (size_t i = 0; i < n; i++)
            v->priority[i] = pr->priority[v->global[i]];
    }
    if (pr->share) {
        if (!(v->share = malloc((n + 1) * sizeof *v->share)))
            return -1;
        for (size_t i = 0; i < n; i++)
            v->share[i] = pr->share[v->global[i]];
    }
    if (ctx->in->plan_estimates) {
        if (!(v->estimate = malloc((n + 1) * sizeof *v->estimate)))
            return -1;
        for (size_t i = 0; i < n; i++)
            v->estimate[i] = ctx->in->plan_estimates[v->global[i]];
    }
    if (pr->result->reserved_at) {
        if (!(v->reserved_at = malloc((n + 1) * sizeof *v->reserved_at)))
            return -1;
        for (size_t i = 0; i < n; i++)
            v->reserved_at[i] = -1;
    }
    return 0;
}

/* The VC's fair-share ledger: a share for each user with jobs in the VC
 * (jobs without a user are one user of their own), equal. */
static int vc_run_fairshare(sim_context *ctx, vc_run *v, lucid_error *err)
{
    const lucid_trace *trace = ctx->in->trace;
    int32_t nusers = (trace->strings ? lucid_strtab_count(trace->strings) : 0) + 1;
    unsigned char *seen = calloc((size_t)nusers, 1);
    if (!seen)
        return lucid_error_set(err, "out of memory");
    int32_t shares = 0;
    for (size_t i = 0; i < v->njobs; i++) {
        int32_t k = lucid_fairshare_slot(trace->jobs[v->global[i]].user, nusers);
        shares += !seen[k];
        seen[k] = 1;
    }
    if (lucid_fairshare_init(&v->fairshare, nusers, shares, ctx->cfg->fairshare_half_life, err) <
        0) {
        free(seen);
        return -1;
    }
    for (int32_t k = 0; k < nusers; k++)
        if (seen[k])
            lucid_fairshare_join(&v->fairshare, k);
    free(seen);
    v->s.fairshare = &v->fairshare;
    v->s.fairshare_weight = ctx->cfg->fairshare_weight;
    if (v->s.slurm_priority && ctx->cfg->slurm_accounts) {
        if (!(v->slurm_account = malloc((size_t)nusers * sizeof *v->slurm_account)))
            return lucid_error_set(err, "out of memory");
        for (int32_t k = 0; k < nusers; k++)
            v->slurm_account[k] = -1;
        if (lucid_slurm_accounts_parse(ctx->cfg->slurm_accounts, trace->strings, nusers,
                                       v->slurm_account, err) < 0)
            return -1;
        v->s.slurm_account = v->slurm_account;
    }
    return 0;
}

static int vc_run_begin(sim_context *ctx, policy_run *pr, int32_t vc, lucid_record_pages *spare,
                        vc_run *v, lucid_error *err)
{
    const lucid_sim_config *cfg = ctx->cfg;
    memset(v, 0, sizeof *v);
    v->spare = spare;
    v->pr = pr;
    v->vc = vc;
    v->global = pr->vc_jobs + pr->vc_first[vc];
    v->njobs = pr->vc_first[vc + 1] - pr->vc_first[vc];
    if (vc_run_local_arrays(ctx, pr, v) < 0) {
        vc_run_free_arrays(v);
        return lucid_error_set(err, "out of memory");
    }
    int is_lucid = (pr->policy->flags & LUCID_POLICY_LUCID) != 0;
    int32_t nodes = ctx->in->vcs->nodes[vc];
    if (is_lucid && cfg->lucid.nodes_from)
        nodes -= cfg->lucid.nodes_from[vc];
    lucid_sched *s = &v->s;
    if (lucid_sched_init(s, v->jobs, v->run, vc, nodes, cfg->gpus_per_node, cfg->placer,
                         pr->policy, cfg->sem, cfg->seed, err) < 0) {
        vc_run_free_arrays(v);
        return -1;
    }
    s->priority = v->priority;
    v->lucid = pr->lucid;
    v->lucid.share = v->share;
    s->lucid = is_lucid ? &v->lucid : NULL;
    v->bf.cfg = pr->backfill;
    v->bf.estimate = v->estimate;
    v->bf.reserved_at = v->reserved_at;
    if (pr->backfill.mode != LUCID_BACKFILL_NONE)
        s->backfill = &v->bf;
    s->on_change = vc_track;
    s->on_change_ctx = v;
    v->track_eta = cfg->eta != 0;
    if (pr->policy->init && pr->policy->init(s, err) < 0) {
        s->policy = NULL;
        lucid_sched_free(s);
        vc_run_free_arrays(v);
        return -1;
    }
    if (pr->policy == &lucid_policy_slurm)
        s->slurm_priority = &cfg->slurm;
    int ledger = (cfg->fairshare_weight > 0 && pr->policy->fair_priority) ||
                 (pr->policy == &lucid_policy_slurm && cfg->slurm.weight_fairshare > 0);
    if (ledger && vc_run_fairshare(ctx, v, err) < 0) {
        lucid_sched_free(s);
        lucid_fairshare_free(&v->fairshare);
        free(v->slurm_account);
        v->slurm_account = NULL;
        vc_run_free_arrays(v);
        return -1;
    }
    v->borrow = (borrow_state){.base_nodes = nodes};
    v->use.gpus_base = ctx->in->vcs->nodes[vc] * cfg->gpus_per_node;
    v->watched = -1;
    if (cfg->observe.after_step && cfg->observe.policy == pr->policy && cfg->observe.job >= 0 &&
        cfg->observe.job <= INT32_MAX) {
        int32_t key = (int32_t)cfg->observe.job;
        const int32_t *at = bsearch(&key, v->global, v->njobs, sizeof *v->global, compare_i32);
        if (at) {
            v->watched = (int32_t)(at - v->global);
            set_job(v, (size_t)v->watched); /* the observer reads it from the start */
        }
    }
    v->lends = is_lucid && vc == cfg->lucid.borrow_vc && pr->log.count > 0;
    v->next_arrival = pr->vc_first[vc];
    v->last = pr->vc_first[vc + 1];
    v->remaining = (int64_t)(v->last - v->next_arrival);
    v->policy_next = v->forced = LUCID_NEVER;
    v->previous = cfg->start - 1;
    return 0;
}

/* Adds a VC run's ended jobs to the shared counter and tells the caller
 * (`lock`: take the context lock, 0 when the caller holds it). */
static void report_progress(sim_context *ctx, vc_run *v, int lock)
{
    if (!ctx->progress || v->unreported == 0)
        return;
    if (lock)
        pthread_mutex_lock(&ctx->lock);
    ctx->done_jobs += v->unreported;
    v->unreported = 0;
    ctx->progress(ctx->user, ctx->done_jobs, ctx->total_jobs);
    if (lock)
        pthread_mutex_unlock(&ctx->lock);
}

/* Runs the steps before `limit` (LUCID_NEVER: to the end). */
static int vc_run_steps(sim_context *ctx, vc_run *v, int64_t limit, lucid_error *err)
{
    const lucid_sim_config *cfg = ctx->cfg;
    policy_run *pr = v->pr;
    lucid_sched *s = &v->s;
    int rc = 0;
    while (v->remaining > 0) {
        int64_t t = v->next_arrival < v->last ? pr->arrival_time[v->next_arrival] : LUCID_NEVER;
        int64_t end = lucid_sched_next_end(s);
        if (end < t)
            t = end;
        if (v->policy_next < t)
            t = v->policy_next;
        if (v->forced < t)
            t = v->forced;
        if (v->lends && v->next_scaling < pr->log.count && pr->log.times[v->next_scaling] < t)
            t = pr->log.times[v->next_scaling];
        if (t == LUCID_NEVER) {
            int32_t stuck = s->qlen > 0 ? s->queue[0] : -1;
            return lucid_error_set(err,
                                   "%s: VC %s: %lld jobs can never start (first: job %lld, %d GPUs)",
                                   pr->policy->name, lucid_vcs_name(ctx->in->vcs, v->vc),
                                   (long long)v->remaining,
                                   stuck >= 0 ? (long long)s->jobs[stuck].job_id : -1LL,
                                   stuck >= 0 ? s->jobs[stuck].gpu_num : 0);
        }
        if (t >= limit)
            return 0;
        /* GPU use over [previous, t): the cluster as the last step left it. */
        if (v->next_arrival > pr->vc_first[v->vc]) {
            double dt = (double)(t - v->previous);
            v->use.capacity += dt * (double)s->cluster.total_gpus;
            v->use.busy += dt * (double)(s->cluster.total_gpus - s->cluster.free_gpus);
        } else {
            v->use.first = t;
            v->use.gpus_first = (int32_t)s->cluster.total_gpus;
        }
        v->use.last = t;
        v->use.gpus_last = (int32_t)s->cluster.total_gpus;
        if (cfg->eta && cfg->eta_hourly && s->qlen > 0) {
            /* The whole hours in (previous step, t]: before t's events. */
            int64_t m = v->previous - ((v->previous % 3600) + 3600) % 3600 + 3600;
            for (; m <= t && rc == 0; m += 3600)
                if (predict_hourly(v, m) < 0)
                    rc = lucid_error_set(err, "out of memory");
        }
        if (cfg->series && t - cfg->start > SERIES_MAX_SPAN)
            return lucid_error_set(err,
                                   "%s: VC %s: --series covers at most %lld days of simulated "
                                   "time, but this run reaches day %lld (job submit times or "
                                   "durations far apart?)",
                                   pr->policy->name, lucid_vcs_name(ctx->in->vcs, v->vc),
                                   (long long)(SERIES_MAX_SPAN / 86400),
                                   (long long)((t - cfg->start) / 86400));
        if (cfg->series) {
            int64_t m = v->previous + SAMPLE_PERIOD -
                        ((v->previous % SAMPLE_PERIOD) + SAMPLE_PERIOD) % SAMPLE_PERIOD;
            if (m <= v->previous)
                m += SAMPLE_PERIOD;
            int32_t pending = m < t ? pending_gpus(s) : 0;
            for (; m < t && rc == 0; m += SAMPLE_PERIOD)
                if (record_sample(&v->samples, &v->nsamples, &v->cap_samples, s, m, pending) < 0)
                    rc = lucid_error_set(err, "out of memory");
        }
        s->now = t;
        v->forced = LUCID_NEVER;
        int ended = lucid_sched_finish_due(s, t);
        v->remaining -= ended;
        v->unreported += ended;
        v->ended_since += ended;
        if (v->unreported >= PROGRESS_BATCH)
            report_progress(ctx, v, 1);
        if (ended > 0)
            lucid_eta_invalidate(&v->plan);
        size_t first_arrival = v->next_arrival;
        uint32_t first_seq = s->next_arrival_seq;
        while (rc == 0 && v->next_arrival < v->last && pr->arrival_time[v->next_arrival] == t) {
            set_job(v, (size_t)pr->arrival_job[v->next_arrival]);
            if (pr->policy->arrive(s, pr->arrival_job[v->next_arrival]) < 0)
                rc = lucid_error_set(err, "out of memory");
            if (cfg->eta)
                v->queued_work += job_work(v, pr->arrival_job[v->next_arrival]);
            v->next_arrival++;
        }
        if (v->next_arrival < v->last) {
            /* The VC's next arriving job's records, loaded while this step
             * is decided (a cache miss each at 10M jobs when the records
             * were trace-wide; VC-local now, and still not in arrival
             * order for Lucid's profiled jobs). */
            int32_t next = pr->arrival_job[v->next_arrival];
            const char *j = (const char *)&s->jobs[next], *r = (const char *)&s->run[next];
            LUCID_PREFETCH(j, 0);
            LUCID_PREFETCH(j + sizeof *s->jobs - 1, 0);
            for (size_t off = 0; off < sizeof *s->run; off += 64)
                LUCID_PREFETCH(r + off, 1);
            LUCID_PREFETCH(r + sizeof *s->run - 1, 1);
        }
        s->changed = 0;
        lucid_sched_decide(s);
        if (s->changed)
            lucid_eta_invalidate(&v->plan);
        if (cfg->eta && rc == 0 && v->next_arrival > first_arrival &&
            predict_arrivals(v, first_seq, first_arrival, v->next_arrival) < 0)
            rc = lucid_error_set(err, "out of memory");
        if (v->watched >= 0)
            cfg->observe.after_step(cfg->observe.user, s, v->watched);
        if (v->lends) {
            while (v->next_scaling < pr->log.count && pr->log.times[v->next_scaling] == t) {
                if (apply_borrow(s, &v->borrow, pr->log.deltas[v->next_scaling]))
                    v->forced = t + 1;
                lucid_eta_invalidate(&v->plan); /* capacity may have changed */
                v->next_scaling++;
            }
            while (v->borrow.pending > 0 && lend_idle_node(&s->cluster, &v->borrow)) {
                v->borrow.pending--;
                lucid_eta_invalidate(&v->plan);
            }
        }
        if (cfg->series && t % SAMPLE_PERIOD == 0 &&
            record_sample(&v->samples, &v->nsamples, &v->cap_samples, s, t, pending_gpus(s)) < 0)
            rc = lucid_error_set(err, "out of memory");
        if (rc < 0)
            return rc;
        v->policy_next = lucid_sched_next_decision(s);
        v->previous = t;
        if (v->ended_since >= v->look_every)
            vc_run_release(v);
    }
    return 0;
}

static int vc_run_until(sim_context *ctx, vc_run *v, int64_t limit, lucid_error *err)
{
    int rc = vc_run_steps(ctx, v, limit, err);
    report_progress(ctx, v, 1);
    return rc;
}

static void vc_run_end(vc_run *v)
{
    vc_run_publish(v);
    for (size_t i = 0; v->reserved_at && i < v->njobs; i++)
        v->pr->result->reserved_at[v->global[i]] = v->reserved_at[i];
    if (v->pr->vc_backfill)
        v->pr->vc_backfill[v->vc] = v->bf.stats;
    v->pr->result->gpu_use[v->vc] = v->use;
    lucid_backfill_free(&v->bf);
    lucid_eta_plan_free(&v->plan);
    lucid_eta_plan_free(&v->hourly_plan);
    lucid_eta_table_free(&v->table);
    free(v->eta);
    v->eta = NULL;
    if (v->pr->vc_hourly) {
        v->pr->vc_hourly[v->vc] = v->hourly;
        v->pr->vc_nhourly[v->vc] = v->nhourly;
    } else {
        free(v->hourly);
    }
    v->hourly = NULL;
    lucid_sched_free(&v->s);
    lucid_fairshare_free(&v->fairshare);
    free(v->slurm_account);
    v->slurm_account = NULL;
    vc_run_free_arrays(v);
    v->pr->vc_samples[v->vc] = v->samples;
    v->pr->vc_nsamples[v->vc] = v->nsamples;
    v->samples = NULL;
}

/* spare: the worker's record pages, from its last run to its next. */
static int simulate_vc(sim_context *ctx, policy_run *pr, int32_t vc, lucid_record_pages *spare,
                       lucid_error *err)
{
    vc_run v;
    if (vc_run_begin(ctx, pr, vc, spare, &v, err) < 0)
        return -1;
    int rc = vc_run_until(ctx, &v, LUCID_NEVER, err);
    vc_run_end(&v);
    return rc;
}

/* ---------------- preparing one policy's run ---------------- */

/* The switch's change list grows in two arrays kept the same length. */
typedef struct switch_list {
    size_t n, cap_times, cap_values;
} switch_list;

static int add_switch(policy_run *pr, switch_list *l, int64_t t, int8_t v)
{
    if (LUCID_GROW(pr->switch_times, l->cap_times, l->n + 1) < 0 ||
        LUCID_GROW(pr->switch_values, l->cap_values, l->n + 1) < 0)
        return -1;
    pr->switch_times[l->n] = t;
    pr->switch_values[l->n] = v;
    l->n++;
    return 0;
}

/* The packing switch is re-evaluated at every multiple of 100 s and only
 * depends on time: precompute the moments where its value changes. */
/* What the reference reads where no forecast row is left (jobs / bin). */
#define LUCID_FORECAST_NONE_LEFT 10.0

static int build_switch(const lucid_sim_config *cfg, const lucid_forecast *fc, policy_run *pr)
{
    switch_list list = {0};
    int8_t value = 0; /* starts off */
    pr->lucid.switch_initial = 0;
    /* Where no forecast row is left the reference reads 10 jobs (spec
     * §4.5): on unless the threshold is at least that. */
    int8_t beyond = LUCID_FORECAST_NONE_LEFT <= cfg->lucid.pack_threshold ? 0 : 1;
    if (!fc || fc->count == 0) {
        int64_t m = cfg->start + (100 - ((cfg->start % 100) + 100) % 100) % 100;
        if (beyond && add_switch(pr, &list, m, 1) < 0)
            return -1;
    } else {
        lucid_forecast_cursor cursor;
        lucid_forecast_cursor_init(&cursor, fc, fc->pred_gpu_job, cfg->start, 10);
        int64_t last_row = cfg->start + fc->offset[fc->count - 1];
        int64_t m = cfg->start + (100 - ((cfg->start % 100) + 100) % 100) % 100;
        for (;; m += 100) {
            double future = lucid_forecast_cursor_look(&cursor, m);
            int8_t v = future <= cfg->lucid.pack_threshold ? 0 : 1;
            if (v != value && add_switch(pr, &list, m, v) < 0)
                return -1;
            value = v;
            if (m > last_row)
                break; /* from here on the table is empty: `beyond` */
        }
    }
    pr->lucid.switch_times = pr->switch_times;
    pr->lucid.switch_values = pr->switch_values;
    pr->lucid.nswitch = list.n;
    return 0;
}

static int prepare_lucid(sim_context *ctx, policy_run *pr, lucid_error *err)
{
    const lucid_sim_config *cfg = ctx->cfg;
    const lucid_sim_inputs *in = ctx->in;
    const lucid_trace *trace = in->trace;
    pr->share = calloc(trace->njobs + 1, sizeof *pr->share);
    int32_t nstrings = lucid_strtab_count(trace->strings);
    pr->outside_model = calloc((size_t)nstrings + 1, sizeof *pr->outside_model);
    if (!pr->share || !pr->outside_model)
        return lucid_error_set(err, "out of memory");
    static const char *const unmeasured[] = {"NeuMF", "ResNet50", "BERT", "Transformer"};
    for (int i = 0; i < 4; i++) {
        int32_t id = lucid_strtab_find(trace->strings, unmeasured[i]);
        if (id >= 0)
            pr->outside_model[id] = 1;
    }
    for (size_t i = 0; i < trace->njobs; i++) {
        pr->share[i] = 2; /* unknown workloads are treated as heavy: never packed with heavy jobs */
        if (in->lucid_share && !ctx->excluded[i])
            pr->share[i] = in->lucid_share[i];
        if (in->lucid_share || !in->sharing || ctx->excluded[i])
            continue;
        int64_t row = lucid_sharing_find(in->sharing, &trace->jobs[i].workload);
        if (row >= 0)
            pr->share[i] = in->sharing->rows[row].label;
    }
    const lucid_forecast *forecast = in->forecast;
    if (cfg->online) {
        pr->online = lucid_online_new(cfg->online, trace, pr->share, &pr->online_forecast, err);
        if (!pr->online)
            return -1;
        pr->result->estimates = malloc((trace->njobs + 1) * sizeof *pr->result->estimates);
        if (!pr->result->estimates)
            return lucid_error_set(err, "out of memory");
        for (size_t i = 0; i < trace->njobs; i++)
            pr->result->estimates[i] = -1;
        forecast = pr->online_forecast.count ? &pr->online_forecast : NULL;
    }
    if (cfg->lucid.share_prior)
        for (size_t i = 0; i < trace->njobs; i++)
            if (trace->jobs[i].workload.model < 0 && !in->lucid_share)
                pr->share[i] = lucid_share_prior_score(&lucid_venus_prior, trace->jobs[i].job_id,
                                                       cfg->seed);
    pr->lucid.prior_speed = cfg->lucid.share_prior ? &lucid_venus_prior.speed[0][0] : NULL;
    pr->lucid.pack_when_blocked = cfg->lucid.pack_when_blocked;
    pr->lucid.share = pr->share;
    pr->lucid.pairs = in->pairs;
    pr->lucid.outside_model = pr->outside_model;
    pr->lucid.gmem_limit = cfg->lucid.gmem_limit;
    pr->lucid.priority_ratio = cfg->lucid.priority_ratio;
    pr->lucid.score_sum = cfg->lucid.score_sum;
    if (build_switch(cfg, forecast, pr) < 0)
        return lucid_error_set(err, "out of memory");
    pr->lucid.pack_threshold = cfg->lucid.pack_threshold;
    pr->lucid.forecast = forecast;
    pr->lucid.forecast_start = cfg->start;
    lucid_sim_inputs with_forecast = *in;
    with_forecast.forecast = forecast;
    return lucid_profile_pass(cfg, &with_forecast, ctx->excluded, &pr->result->prof, &pr->log,
                              err);
}

typedef struct arrival {
    int64_t time;
    int32_t vc;
    int32_t job;
} arrival;

static int compare_arrivals(const void *pa, const void *pb)
{
    const arrival *a = pa, *b = pb;
    if (a->vc != b->vc)
        return a->vc < b->vc ? -1 : 1;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return a->job < b->job ? -1 : a->job > b->job;
}

/* Whether job i joins its VC's queue and when (*at): its submit time, or
 * for Lucid without the reference quirk, the moment it leaves the
 * profiler; not an excluded job or one that ends in the profiler.  With
 * `r`, also sets up its result: "not run", or its profiler outcome (the
 * simulated jobs' are written when their VC's run ends: vc_run_publish). */
static int arrives(const sim_context *ctx, const policy_run *pr, size_t i, int64_t *at,
                   lucid_jobresult *r)
{
    const lucid_job *job = &ctx->in->trace->jobs[i];
    const lucid_sim_result *res = pr->result;
    if (r)
        *r = (lucid_jobresult){.start_time = -1, .end_time = -1, .packed_with = -1,
                               .packed_onto = -1, .status = LUCID_WAITING, .exclusive = 1};
    if (ctx->excluded[i]) {
        if (r)
            r->status = LUCID_SKIPPED;
        return 0;
    }
    *at = job->submit_time;
    if ((pr->policy->flags & LUCID_POLICY_LUCID) && res->prof[i].start >= 0) {
        if (r)
            r->profiled = 1;
        if (job->duration <= ctx->cfg->lucid.profiler_time_limit) {
            if (r) {
                r->finished_in_profiler = 1;
                r->status = LUCID_DONE;
                r->start_time = res->prof[i].start;
                r->end_time = res->prof[i].end;
                r->queue = (double)(res->prof[i].start - job->submit_time);
            }
            return 0;
        }
        if (!ctx->cfg->sem.profiled_rejoin_at_submit)
            *at = res->prof[i].end;
    }
    return 1;
}

/* Who joins each VC's queue when: arrival_time / arrival_job by VC
 * (vc_first[v] .. vc_first[v + 1]), in (time, job) order within a VC; and
 * each VC's simulated jobs in trace order (vc_jobs), the arrivals' jobs
 * as positions in that order (VC-local indices). */
static int build_arrivals(sim_context *ctx, policy_run *pr, lucid_error *err)
{
    const lucid_trace *trace = ctx->in->trace;
    int32_t nvcs = ctx->in->vcs->count;
    pr->vc_first = calloc((size_t)nvcs + 2, sizeof *pr->vc_first);
    pr->vc_samples = calloc((size_t)nvcs + 1, sizeof *pr->vc_samples);
    pr->vc_nsamples = calloc((size_t)nvcs + 1, sizeof *pr->vc_nsamples);
    if (!pr->vc_first || !pr->vc_samples || !pr->vc_nsamples)
        return lucid_error_set(err, "out of memory");
    /* Counts per VC, and whether the arrivals come in (time, job) order
     * already, as they do when the trace is sorted by submit time (Lucid
     * with profiler exits the exception). */
    size_t n = 0;
    int sorted = 1;
    int64_t last = INT64_MIN;
    for (size_t i = 0; i < trace->njobs; i++) {
        int64_t at;
        if (!arrives(ctx, pr, i, &at, &pr->result->run[i]))
            continue;
        sorted &= at >= last; /* (job indices rise: ties are in order) */
        last = at;
        pr->vc_first[trace->jobs[i].vc + 1]++;
        n++;
    }
    pr->arrival_time = malloc((n + 1) * sizeof *pr->arrival_time);
    pr->arrival_job = malloc((n + 1) * sizeof *pr->arrival_job);
    pr->vc_jobs = malloc((n + 1) * sizeof *pr->vc_jobs);
    if (!pr->arrival_time || !pr->arrival_job || !pr->vc_jobs)
        return lucid_error_set(err, "out of memory");
    for (int32_t v = 0; v < nvcs; v++)
        pr->vc_first[v + 1] += pr->vc_first[v];
    if (sorted) {
        /* A stable counting pass by VC gives the (vc, time, job) order, and
         * a VC's arrival order is its trace order: the k-th arrival of VC
         * v is its local job k - vc_first[v]. */
        size_t *fill = malloc(((size_t)nvcs + 1) * sizeof *fill);
        if (!fill)
            return lucid_error_set(err, "out of memory");
        memcpy(fill, pr->vc_first, (size_t)nvcs * sizeof *fill);
        for (size_t i = 0; i < trace->njobs; i++) {
            int64_t at;
            if (!arrives(ctx, pr, i, &at, NULL))
                continue;
            int32_t v = trace->jobs[i].vc;
            size_t k = fill[v]++;
            pr->arrival_time[k] = at;
            pr->arrival_job[k] = (int32_t)(k - pr->vc_first[v]);
            pr->vc_jobs[k] = (int32_t)i;
        }
        free(fill);
        return 0;
    }
    arrival *list = malloc((n + 1) * sizeof *list);
    int32_t *local = malloc((trace->njobs + 1) * sizeof *local);
    size_t *fill = malloc(((size_t)nvcs + 1) * sizeof *fill);
    if (!list || !local || !fill) {
        free(list);
        free(local);
        free(fill);
        return lucid_error_set(err, "out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < trace->njobs; i++) {
        int64_t at;
        local[i] = -1;
        if (arrives(ctx, pr, i, &at, NULL)) {
            list[k++] = (arrival){at, trace->jobs[i].vc, (int32_t)i};
            local[i] = 0;
        }
    }
    qsort(list, n, sizeof *list, compare_arrivals);
    for (k = 0; k < n; k++) {
        pr->arrival_time[k] = list[k].time;
        pr->arrival_job[k] = list[k].job;
    }
    free(list);
    memcpy(fill, pr->vc_first, (size_t)nvcs * sizeof *fill);
    for (size_t i = 0; i < trace->njobs; i++) {
        if (local[i] < 0)
            continue;
        int32_t v = trace->jobs[i].vc;
        local[i] = (int32_t)(fill[v] - pr->vc_first[v]);
        pr->vc_jobs[fill[v]++] = (int32_t)i;
    }
    for (k = 0; k < n; k++)
        pr->arrival_job[k] = local[pr->arrival_job[k]];
    free(local);
    free(fill);
    return 0;
}

static int prepare_run(sim_context *ctx, policy_run *pr, lucid_error *err)
{
    const lucid_sim_inputs *in = ctx->in;
    const lucid_trace *trace = in->trace;
    pr->result->policy = pr->policy;
    pr->result->excluded = malloc(trace->njobs + 1);
    if (!pr->result->excluded)
        return lucid_error_set(err, "out of memory");
    memcpy(pr->result->excluded, ctx->excluded, trace->njobs);
    /* A VC whose run never begins keeps its size, idle, for the whole trace. */
    int32_t nvcs = in->vcs->count;
    pr->result->gpu_use = calloc((size_t)nvcs + 1, sizeof *pr->result->gpu_use);
    if (!pr->result->gpu_use)
        return lucid_error_set(err, "out of memory");
    pr->result->ngpu_use = nvcs;
    for (int32_t v = 0; v < nvcs; v++) {
        int32_t nodes = in->vcs->nodes[v];
        if ((pr->policy->flags & LUCID_POLICY_LUCID) && ctx->cfg->lucid.nodes_from)
            nodes -= ctx->cfg->lucid.nodes_from[v];
        pr->result->gpu_use[v] = (lucid_gpu_use){.first = -1,
                                                 .last = -1,
                                                 .gpus_first = nodes * ctx->cfg->gpus_per_node,
                                                 .gpus_last = nodes * ctx->cfg->gpus_per_node};
    }
    for (int b = 0; b < ctx->cfg->nbackfill; b++)
        if (ctx->cfg->backfill[b].policy == pr->policy)
            pr->backfill = ctx->cfg->backfill[b].cfg;
    pr->result->backfill = pr->backfill;
    if (pr->backfill.mode != LUCID_BACKFILL_NONE) {
        pr->result->reserved_at = malloc((trace->njobs + 1) * sizeof *pr->result->reserved_at);
        pr->vc_backfill = calloc((size_t)in->vcs->count + 1, sizeof *pr->vc_backfill);
        if (!pr->result->reserved_at || !pr->vc_backfill)
            return lucid_error_set(err, "out of memory");
        for (size_t i = 0; i < trace->njobs; i++)
            pr->result->reserved_at[i] = -1;
    }
    if (ctx->cfg->eta) {
        lucid_sim_result *res = pr->result;
        res->eta_p10 = malloc((trace->njobs + 1) * sizeof *res->eta_p10);
        res->eta_p50 = malloc((trace->njobs + 1) * sizeof *res->eta_p50);
        res->eta_p90 = malloc((trace->njobs + 1) * sizeof *res->eta_p90);
        res->eta_at = malloc((trace->njobs + 1) * sizeof *res->eta_at);
        pr->vc_hourly = calloc((size_t)in->vcs->count + 1, sizeof *pr->vc_hourly);
        pr->vc_nhourly = calloc((size_t)in->vcs->count + 1, sizeof *pr->vc_nhourly);
        if (!res->eta_p10 || !res->eta_p50 || !res->eta_p90 || !res->eta_at || !pr->vc_hourly ||
            !pr->vc_nhourly)
            return lucid_error_set(err, "out of memory");
        for (size_t i = 0; i < trace->njobs; i++)
            res->eta_p10[i] = res->eta_p50[i] = res->eta_p90[i] = res->eta_at[i] = -1;
    }
    for (size_t i = 0; i < trace->njobs; i++)
        pr->result->nexcluded += ctx->excluded[i];
    if (pr->policy->flags & LUCID_POLICY_ESTIMATES) {
        int lucid = (pr->policy->flags & LUCID_POLICY_LUCID) != 0;
        const double *est = lucid ? in->lucid_estimates : in->qssf_estimates;
        if (!est && !(lucid && ctx->cfg->online))
            return lucid_error_set(err, "policy %s needs duration estimates", pr->policy->name);
        pr->priority = calloc(trace->njobs + 1, sizeof *pr->priority);
        if (!pr->priority)
            return lucid_error_set(err, "out of memory");
        for (size_t i = 0; est && i < trace->njobs; i++) /* the reference: negative -> 1000 */
            pr->priority[i] = (est[i] < 0 ? 1000.0 : est[i]) * trace->jobs[i].gpu_num;
    }
    if ((pr->policy->flags & LUCID_POLICY_LUCID) && prepare_lucid(ctx, pr, err) < 0)
        return -1;
    /* After Lucid's profiling pass, whose working records are freed by then. */
    pr->result->run = malloc((trace->njobs + 1) * sizeof *pr->result->run);
    if (!pr->result->run)
        return lucid_error_set(err, "out of memory");
    return build_arrivals(ctx, pr, err);
}

/* The run's per-job working arrays, not needed once its VC runs are done:
 * freed before its results are handed on (on_result), so that the memory
 * the outputs allocate next (summaries, row starts) is pages just freed,
 * not fresh ones (at 10M jobs 160-240 MB; on a VM, fresh memory is
 * memory its host may have to fault in). */
static void free_job_arrays(policy_run *pr)
{
    free(pr->priority);
    free(pr->share);
    free(pr->arrival_time);
    free(pr->arrival_job);
    free(pr->vc_jobs);
    pr->priority = NULL;
    pr->share = NULL;
    pr->arrival_time = NULL;
    pr->arrival_job = pr->vc_jobs = NULL;
}

static void free_run(policy_run *pr, int32_t nvcs)
{
    for (int32_t v = 0; pr->vc_hourly && v < nvcs; v++)
        free(pr->vc_hourly[v]);
    free(pr->vc_hourly);
    free(pr->vc_nhourly);
    free(pr->vc_backfill);
    free_job_arrays(pr);
    free(pr->outside_model);
    free(pr->switch_times);
    free(pr->switch_values);
    lucid_profile_log_free(&pr->log);
    lucid_online_free(pr->online);
    lucid_forecast_free(&pr->online_forecast);
    free(pr->vc_first);
    free(pr->vc_samples);
    free(pr->vc_nsamples);
}

/* ---------------- thread pool ---------------- */

static int finish_run(sim_context *ctx, policy_run *pr);

static void *worker(void *arg)
{
    sim_context *ctx = arg;
    /* one VC run's record pages for the next's (release.c) */
    lucid_record_pages spare[2];
    memset(spare, 0, sizeof spare);
    /* (a lockstep phase sets ctx->vc_runs; tasks then advance those runs) */
    for (;;) {
        pthread_mutex_lock(&ctx->lock);
        if (ctx->failed || ctx->next_task >= ctx->ntasks) {
            pthread_mutex_unlock(&ctx->lock);
            break;
        }
        int task = ctx->next_task++;
        pthread_mutex_unlock(&ctx->lock);
        lucid_error err = {{0}};
        policy_run *pr = &ctx->runs[ctx->task_run[task]];
        if (!ctx->vc_runs && ctx->task_vc[task] < 0) {
            /* Preparing: its error is kept with the run, so that the first
             * policy's is reported whichever thread failed first. */
            pr->prepared = prepare_run(ctx, pr, &pr->prep_err);
            continue;
        }
        int rc = ctx->vc_runs
                     ? vc_run_until(ctx, &ctx->vc_runs[ctx->task_vc[task]], ctx->limit, &err)
                     : simulate_vc(ctx, pr, ctx->task_vc[task], spare, &err);
        pthread_mutex_lock(&ctx->lock);
        if (rc < 0 && !ctx->failed) {
            ctx->failed = 1;
            ctx->err = err;
        }
        int complete = !ctx->vc_runs && --pr->tasks_left == 0 && !ctx->failed;
        pthread_mutex_unlock(&ctx->lock);
        /* The policy's last VC is done: its result is put together and
         * handed out here, while the other policies run on. */
        if (complete && finish_run(ctx, pr) < 0) {
            pthread_mutex_lock(&ctx->lock);
            if (!ctx->failed) {
                ctx->failed = 1;
                lucid_error_set(&ctx->err, "out of memory");
            }
            pthread_mutex_unlock(&ctx->lock);
        }
    }
    lucid_record_pages_free(&spare[0]);
    lucid_record_pages_free(&spare[1]);
    return NULL;
}

/* Collects the VCs' samples into the result (VC order, then time). */
static int gather_samples(sim_context *ctx, policy_run *pr)
{
    int32_t nvcs = ctx->in->vcs->count;
    size_t total = 0;
    for (int32_t v = 0; v < nvcs; v++)
        total += pr->vc_nsamples[v];
    lucid_sim_result *res = pr->result;
    res->samples = malloc((total + 1) * sizeof *res->samples);
    if (!res->samples)
        return -1;
    for (int32_t v = 0; v < nvcs; v++) {
        memcpy(res->samples + res->nsamples, pr->vc_samples[v],
               pr->vc_nsamples[v] * sizeof *res->samples);
        res->nsamples += pr->vc_nsamples[v];
        free(pr->vc_samples[v]);
        pr->vc_samples[v] = NULL;
    }
    return 0;
}

/* Collects the VCs' hourly re-predictions into the result, by job then
 * time (a counting sort by job: each VC's rows are in time order). */
static int gather_hourly(sim_context *ctx, policy_run *pr)
{
    int32_t nvcs = ctx->in->vcs->count;
    size_t njobs = ctx->in->trace->njobs, total = 0;
    for (int32_t v = 0; v < nvcs; v++)
        total += pr->vc_nhourly[v];
    lucid_sim_result *res = pr->result;
    size_t *first = calloc(njobs + 1, sizeof *first);
    res->eta_hourly = malloc((total + 1) * sizeof *res->eta_hourly);
    if (!first || !res->eta_hourly) {
        free(first);
        return -1;
    }
    for (int32_t v = 0; v < nvcs; v++)
        for (size_t i = 0; i < pr->vc_nhourly[v]; i++)
            first[pr->vc_hourly[v][i].job + 1]++;
    for (size_t j = 0; j < njobs; j++)
        first[j + 1] += first[j];
    for (int32_t v = 0; v < nvcs; v++)
        for (size_t i = 0; i < pr->vc_nhourly[v]; i++)
            res->eta_hourly[first[pr->vc_hourly[v][i].job]++] = pr->vc_hourly[v][i];
    res->neta_hourly = total;
    free(first);
    return 0;
}

/* A policy's result put together from its VC runs, then handed to
 * cfg->on_result: 0, or -1 (out of memory). */
static int finish_run(sim_context *ctx, policy_run *pr)
{
    const lucid_sim_config *cfg = ctx->cfg;
    const lucid_trace *trace = ctx->in->trace;
    int32_t nvcs = ctx->in->vcs->count;
    lucid_sim_result *res = pr->result;
    if (cfg->series && gather_samples(ctx, pr) < 0)
        return -1;
    if (cfg->eta && gather_hourly(ctx, pr) < 0)
        return -1;
    res->scaling_events = (int64_t)pr->log.count;
    for (int32_t v = 0; pr->vc_backfill && v < nvcs; v++) {
        const lucid_backfill_stats *b = &pr->vc_backfill[v];
        res->backfill_stats.reservations += b->reservations;
        res->backfill_stats.moved_later += b->moved_later;
        res->backfill_stats.moved_earlier += b->moved_earlier;
        res->backfill_stats.backfilled += b->backfilled;
    }
    for (size_t i = 0; i < trace->njobs; i++) {
        res->profiled += res->run[i].profiled;
        res->finished_in_profiler += res->run[i].finished_in_profiler;
        res->packed_at_end += res->run[i].status == LUCID_DONE && !res->run[i].exclusive;
    }
    pr->finished = 1;
    free_job_arrays(pr);
    if (cfg->on_result)
        cfg->on_result(cfg->on_result_user, (int)(pr - ctx->runs), res);
    return 0;
}

/* Runs the queued tasks on `threads` workers (this thread included). */
static void run_pool(sim_context *ctx, int threads)
{
    int nthreads = threads < ctx->ntasks ? threads : ctx->ntasks;
    pthread_t workers[64];
    if (nthreads > 64)
        nthreads = 64;
    int started = 0;
    for (int i = 1; i < nthreads; i++)
        if (pthread_create(&workers[started], NULL, worker, ctx) == 0)
            started++;
    worker(ctx);
    for (int i = 0; i < started; i++)
        pthread_join(workers[i], NULL);
}

typedef struct timed_job {
    int64_t time;
    int32_t job;         /* trace index */
    int32_t vc, local;   /* its VC and index there */
} timed_job;

static int compare_timed(const void *pa, const void *pb)
{
    const timed_job *a = pa, *b = pb;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return a->job < b->job ? -1 : a->job > b->job;
}

/* Online Lucid: all VCs advance together one estimate period (a day) at a
 * time; before each the update engine retrains on the jobs that have ended
 * when a retraining is due, and sets the priorities of the jobs that will
 * arrive in it from the current model and the users' histories as of then.
 * The step is min(estimate period, retrain period). */
static int run_online(sim_context *ctx, int p, lucid_error *err)
{
    policy_run *pr = &ctx->runs[p];
    const lucid_trace *trace = ctx->in->trace;
    int32_t nvcs = ctx->in->vcs->count;
    size_t narrivals = pr->vc_first[nvcs];
    vc_run *runs = calloc((size_t)nvcs + 1, sizeof *runs);
    timed_job *arrivals = malloc((narrivals + 1) * sizeof *arrivals);
    int32_t *batch = malloc((narrivals + 1) * sizeof *batch);
    double *est = malloc((narrivals + 1) * sizeof *est);
    int rc = runs && arrivals && batch && est ? 0 : lucid_error_set(err, "out of memory");
    int32_t begun = 0;
    for (; rc == 0 && begun < nvcs; begun++)
        rc = vc_run_begin(ctx, pr, begun, NULL, &runs[begun], err);
    for (int32_t v = 0; rc == 0 && v < nvcs; v++)
        for (size_t k = pr->vc_first[v]; k < pr->vc_first[v + 1]; k++) {
            int32_t local = pr->arrival_job[k];
            arrivals[k] = (timed_job){pr->arrival_time[k], pr->vc_jobs[pr->vc_first[v] + (size_t)local],
                                      v, local};
        }
    if (rc == 0)
        qsort(arrivals, narrivals, sizeof *arrivals, compare_timed);
    int64_t period = lucid_online_step(ctx->cfg->online);
    if (ctx->cfg->observe.after_step && ctx->cfg->observe.policy == pr->policy)
        lucid_online_watch(pr->online, ctx->cfg->observe.job);
    size_t next = 0;
    for (int64_t from = ctx->cfg->start; rc == 0;) {
        int64_t left = 0;
        for (int32_t v = 0; v < nvcs; v++)
            left += runs[v].remaining;
        if (left == 0)
            break;
        int64_t until = from + period;
        size_t n = 0, batch_first = next;
        while (next < narrivals && arrivals[next].time < until)
            batch[n++] = arrivals[next++].job;
        /* The models learn from the jobs ended so far: the VC runs' records
         * into the result, where the update engine reads them. */
        for (int32_t v = 0; v < nvcs; v++)
            vc_run_publish(&runs[v]);
        rc = lucid_online_estimate(pr->online, pr->result->run, from, batch, n, est, err);
        for (size_t k = 0; rc == 0 && k < n; k++) {
            const timed_job *a = &arrivals[batch_first + k];
            double priority = (est[k] < 0 ? 1000.0 : est[k]) * trace->jobs[batch[k]].gpu_num;
            pr->priority[batch[k]] = priority;
            runs[a->vc].priority[a->local] = priority;
            pr->result->estimates[batch[k]] = est[k];
        }
        if (rc < 0)
            break;
        ctx->vc_runs = runs;
        ctx->limit = until;
        ctx->ntasks = ctx->next_task = 0;
        for (int32_t v = 0; v < nvcs; v++) {
            ctx->task_run[ctx->ntasks] = p;
            ctx->task_vc[ctx->ntasks++] = v;
        }
        run_pool(ctx, ctx->cfg->threads);
        ctx->vc_runs = NULL;
        if (ctx->failed) {
            *err = ctx->err;
            rc = -1;
        }
        from = until;
    }
    pr->result->duration_trainings = pr->online ? lucid_online_trainings(pr->online, NULL) : 0;
    if (pr->online)
        snprintf(pr->result->estimate_why, sizeof pr->result->estimate_why, "%s",
                 lucid_online_why(pr->online));
    /* What the models gave the schedule goes with the result (replays). */
    if (rc == 0 && !(pr->result->share = malloc((trace->njobs + 1) * sizeof *pr->share)))
        rc = lucid_error_set(err, "out of memory");
    if (rc == 0) {
        memcpy(pr->result->share, pr->share, trace->njobs * sizeof *pr->share);
        pr->result->forecast = pr->online_forecast;
        pr->online_forecast = (lucid_forecast){0};
    }
    for (int32_t v = 0; v < begun; v++)
        vc_run_end(&runs[v]);
    free(runs);
    free(arrivals);
    free(batch);
    free(est);
    return rc;
}

static int mark_oversized(sim_context *ctx, lucid_error *err)
{
    const lucid_trace *trace = ctx->in->trace;
    const lucid_vcs *vcs = ctx->in->vcs;
    for (size_t i = 0; i < trace->njobs; i++) {
        const lucid_job *job = &trace->jobs[i];
        int64_t capacity = (int64_t)vcs->nodes[job->vc] * ctx->cfg->gpus_per_node;
        if (job->gpu_num <= capacity)
            continue;
        if (!ctx->cfg->skip_oversized)
            return lucid_error_set(
                err,
                "trace line %d: job %lld asks for %d GPUs but VC %s has only %lld; it could "
                "never run (use --skip-oversized to leave such jobs out)",
                job->line, (long long)job->job_id, job->gpu_num, lucid_vcs_name(vcs, job->vc),
                (long long)capacity);
        ctx->excluded[i] = 1;
    }
    return 0;
}

int lucid_simulate(const lucid_sim_config *cfg_in, const lucid_sim_inputs *in,
                   const lucid_policy_ops *const *policies, int npolicies,
                   lucid_sim_result *results, lucid_progress_fn progress, void *user,
                   lucid_error *err)
{
    const lucid_trace *trace = in->trace;
    lucid_sim_config cfg = *cfg_in;
    if (cfg.start < 0) /* reference timelines start at midnight before the first job */
        cfg.start = trace->jobs[0].submit_time - trace->jobs[0].submit_time % 86400;
    if (trace->jobs[0].submit_time < cfg.start)
        return lucid_error_set(err, "job %lld is submitted at %lld, before the start %lld",
                               (long long)trace->jobs[0].job_id,
                               (long long)trace->jobs[0].submit_time, (long long)cfg.start);
    if (cfg.threads < 1)
        cfg.threads = 1;
    /* Results are owned by the caller once this returns 0, and freed here on
     * any failure: zeroed first so that a failure before a run starts frees
     * nothing it does not own. */
    memset(results, 0, (size_t)npolicies * sizeof *results);
    sim_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cfg = &cfg;
    ctx.in = in;
    ctx.progress = progress;
    ctx.user = user;
    ctx.nruns = npolicies;
    ctx.runs = calloc((size_t)npolicies + 1, sizeof *ctx.runs);
    ctx.excluded = calloc(trace->njobs + 1, 1);
    int32_t nvcs = in->vcs->count;
    ctx.task_run = malloc(((size_t)npolicies * (size_t)nvcs + 1) * sizeof *ctx.task_run);
    ctx.task_vc = malloc(((size_t)npolicies * (size_t)nvcs + 1) * sizeof *ctx.task_vc);
    int rc = 0;
    if (!ctx.runs || !ctx.excluded || !ctx.task_run || !ctx.task_vc)
        rc = lucid_error_set(err, "out of memory");
    if (rc == 0)
        rc = mark_oversized(&ctx, err);
    int locked = rc == 0 && pthread_mutex_init(&ctx.lock, NULL) == 0;
    if (rc == 0 && !locked)
        rc = lucid_error_set(err, "cannot create a lock");
    if (rc == 0) {
        /* The policies are prepared on the pool too, Lucid's first (its
         * profiler pass makes it the longest). */
        for (int p = 0; p < npolicies; p++) {
            ctx.runs[p].policy = policies[p];
            ctx.runs[p].result = &results[p];
        }
        for (int lucid = 1; lucid >= 0; lucid--)
            for (int p = 0; p < npolicies; p++)
                if (((policies[p]->flags & LUCID_POLICY_LUCID) != 0) == lucid) {
                    ctx.task_run[ctx.ntasks] = p;
                    ctx.task_vc[ctx.ntasks++] = -1;
                }
        run_pool(&ctx, cfg.threads);
        ctx.ntasks = ctx.next_task = 0;
        for (int p = 0; p < npolicies && rc == 0; p++)
            if (ctx.runs[p].prepared < 0) {
                *err = ctx.runs[p].prep_err;
                rc = -1;
            }
    }
    for (int p = 0; p < npolicies && rc == 0; p++)
        ctx.total_jobs += (int64_t)ctx.runs[p].vc_first[nvcs];
    if (rc == 0) {
        /* Big VCs first keeps both workers busy to the end. */
        for (int p = 0; p < npolicies; p++)
            for (int32_t v = 0; v < nvcs && !ctx.runs[p].online; v++) {
                ctx.task_run[ctx.ntasks] = p;
                ctx.task_vc[ctx.ntasks] = v;
                ctx.ntasks++;
                ctx.runs[p].tasks_left++;
            }
        for (int i = 1; i < ctx.ntasks; i++) {
            int32_t r = ctx.task_run[i], v = ctx.task_vc[i];
            size_t jobs = ctx.runs[r].vc_first[v + 1] - ctx.runs[r].vc_first[v];
            int k = i;
            while (k > 0) {
                int32_t pr = ctx.task_run[k - 1], pv = ctx.task_vc[k - 1];
                size_t pj = ctx.runs[pr].vc_first[pv + 1] - ctx.runs[pr].vc_first[pv];
                if (pj >= jobs)
                    break;
                ctx.task_run[k] = pr;
                ctx.task_vc[k] = pv;
                k--;
            }
            ctx.task_run[k] = r;
            ctx.task_vc[k] = v;
        }
        run_pool(&ctx, cfg.threads);
        for (int p = 0; p < npolicies && !ctx.failed; p++)
            if (ctx.runs[p].online && run_online(&ctx, p, &ctx.err) < 0)
                ctx.failed = 1;
        /* Online runs (and any without a VC task) are put together here. */
        for (int p = 0; p < npolicies && !ctx.failed; p++)
            if (!ctx.runs[p].finished && finish_run(&ctx, &ctx.runs[p]) < 0) {
                ctx.failed = 1;
                lucid_error_set(&ctx.err, "out of memory");
            }
        if (ctx.failed) {
            *err = ctx.err;
            rc = -1;
        }
    }
    if (locked)
        pthread_mutex_destroy(&ctx.lock);
    for (int p = 0; p < npolicies; p++) {
        if (ctx.runs && ctx.runs[p].vc_samples)
            for (int32_t v = 0; v < nvcs; v++)
                free(ctx.runs[p].vc_samples[v]);
        if (ctx.runs)
            free_run(&ctx.runs[p], nvcs);
        if (rc < 0)
            lucid_sim_result_free(&results[p]);
    }
    free(ctx.runs);
    free(ctx.excluded);
    free(ctx.task_run);
    free(ctx.task_vc);
    return rc;
}

void lucid_sim_result_free(lucid_sim_result *result)
{
    free(result->run);
    free(result->prof);
    free(result->excluded);
    free(result->samples);
    free(result->estimates);
    free(result->share);
    free(result->eta_p10);
    free(result->eta_p50);
    free(result->eta_p90);
    free(result->eta_at);
    free(result->eta_hourly);
    free(result->reserved_at);
    free(result->gpu_use);
    lucid_forecast_free(&result->forecast);
    memset(result, 0, sizeof *result);
}

/* ---------------- metrics ---------------- */

/* The k-th smallest of v[0..n) (0-based), v reordered so that every value
 * before k is <= it and every value after is >= it (Hoare's selection,
 * median-of-three pivots): O(n) where a sort was O(n log n), which at 10M
 * jobs was seconds per summary. */
double lucid_select_kth(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        double a = v[lo], b = v[mid], c = v[hi];
        double pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t i = lo, j = hi;
        for (;;) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i >= j)
                break;
            double t = v[i];
            v[i] = v[j];
            v[j] = t;
            i++;
            j--;
        }
        /* v[lo..j] <= pivot <= v[j+1..hi] */
        if (k <= j)
            hi = j;
        else
            lo = j + 1;
    }
    return v[k];
}

double lucid_percentile(double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    double pos = (double)(n - 1) * p / 100.0;
    size_t lo = (size_t)floor(pos);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double frac = pos - (double)lo;
    /* The values of rank lo and lo + 1 of the sorted order: the first by
     * selection, the second the least of what selection left above it. */
    double at_lo = lucid_select_kth(v, n, lo), at_hi = at_lo;
    if (hi > lo) {
        at_hi = v[hi];
        for (size_t i = hi + 1; i < n; i++)
            if (v[i] < at_hi)
                at_hi = v[i];
    }
    return at_lo + (at_hi - at_lo) * frac;
}

