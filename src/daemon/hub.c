/* hub.c — what lucidd's two threads share, and nothing else: the decision
 * thread's loop (engine_tick every --tick-ms), the immutable snapshot it
 * publishes after each tick, and the small queue of commands clients send to
 * the engine (docs/live.md, "Threads and clients").
 *
 * The server thread never reads the engine's live structures: it renders
 * from the newest snapshot (a reference-counted copy, swapped under the
 * mutex) and posts requests that must change the engine as commands; the
 * engine takes them at the start of a tick and posts each answer back, then
 * wakes the server through a pipe.  So a slow client never delays a
 * decision, and a tick that blocks on Slurm never delays an answer. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

#define HUB_SLOTS 64 /* one outstanding command per connection at most */

typedef enum slot_state { SLOT_FREE, SLOT_POSTED, SLOT_TAKEN, SLOT_ANSWERED } slot_state;

typedef struct hub_slot {
    slot_state state;
    int forgotten; /* the client left while the engine held the command */
    lucidd_command cmd;
    int rc;
    char reply[LUCIDD_REPLY_MAX];
} hub_slot;

struct lucidd_hub {
    pthread_mutex_t lock;
    pthread_cond_t wake_engine; /* stop, or nothing (the tick period) */
    int stop;
    lucidd_snapshot *current;
    lucidd_snapshot *spare;     /* the last one released, kept for its job buffer */
    int64_t slurm_down_since;
    double tick_began;          /* monotonic start of the tick in progress, 0 between ticks */
    uint64_t next_id;
    hub_slot slots[HUB_SLOTS];
    int wake_pipe[2];           /* engine -> server: an answer is ready */
};

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

lucidd_hub *lucidd_hub_new(lucid_error *err)
{
    lucidd_hub *hub = calloc(1, sizeof *hub);
    if (!hub) {
        lucid_error_set(err, "out of memory");
        return NULL;
    }
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_mutex_init(&hub->lock, NULL);
    pthread_cond_init(&hub->wake_engine, &attr);
    pthread_condattr_destroy(&attr);
    hub->next_id = 1;
    if (pipe(hub->wake_pipe) < 0) {
        lucid_error_set(err, "pipe: %s", strerror(errno));
        hub->wake_pipe[0] = hub->wake_pipe[1] = -1;
        lucidd_hub_free(hub);
        return NULL;
    }
    for (int k = 0; k < 2; k++) {
        fcntl(hub->wake_pipe[k], F_SETFL, fcntl(hub->wake_pipe[k], F_GETFL) | O_NONBLOCK);
        fcntl(hub->wake_pipe[k], F_SETFD, FD_CLOEXEC);
    }
    return hub;
}

static void snapshot_free(lucidd_snapshot *snap)
{
    if (!snap)
        return;
    free(snap->jobs);
    free(snap->models);
    free(snap);
}

void lucidd_hub_free(lucidd_hub *hub)
{
    if (!hub)
        return;
    snapshot_free(hub->current);
    snapshot_free(hub->spare);
    for (int k = 0; k < 2; k++)
        if (hub->wake_pipe[k] >= 0)
            close(hub->wake_pipe[k]);
    pthread_cond_destroy(&hub->wake_engine);
    pthread_mutex_destroy(&hub->lock);
    free(hub);
}

int lucidd_hub_wake_fd(const lucidd_hub *hub)
{
    return hub->wake_pipe[0];
}

/* ---- snapshot ---- */

/* A released snapshot becomes the spare (its job buffer is reused: 10,000
 * jobs are ~11 MB, and a fresh buffer each tick would be mapped and faulted
 * in anew); called under the lock. */
static lucidd_snapshot *recycle(lucidd_hub *hub, lucidd_snapshot *snap)
{
    free(snap->models);
    snap->models = NULL;
    lucidd_snapshot *spare = hub->spare;
    hub->spare = snap;
    return spare; /* the caller frees the older spare, outside the lock */
}

/* A copy of everything a client may ask about, made on the engine thread
 * (into `spare`, the hub's recycled snapshot, when there is one). */
static lucidd_snapshot *snapshot_make(const lucidd *d, lucidd_snapshot *spare)
{
    lucidd_snapshot *snap = spare ? spare : calloc(1, sizeof *snap);
    if (!snap)
        return NULL;
    lucidd_job *jobs = snap->jobs;
    size_t cap = snap->jobs_cap;
    if (cap < d->njobs || !jobs) {
        cap = d->njobs + d->njobs / 4 + 16;
        jobs = realloc(snap->jobs, cap * sizeof *jobs);
        if (!jobs) {
            snapshot_free(snap);
            return NULL;
        }
    }
    memset(snap, 0, sizeof *snap);
    snap->jobs = jobs;
    snap->jobs_cap = cap;
    if (d->njobs)
        memcpy(snap->jobs, d->jobs, d->njobs * sizeof *snap->jobs);
    snap->njobs = d->njobs;
    memcpy(snap->forgotten, d->forgotten, sizeof snap->forgotten);
    snap->nforgotten = d->nforgotten;
    memcpy(snap->forgotten_by_phase, d->forgotten_by_phase, sizeof snap->forgotten_by_phase);
    snap->forgotten_profiled = d->forgotten_profiled;
    snap->slurm_reads = d->listing.reads;
    snap->slurm_unchanged = d->listing.unchanged;
    snap->listing_age_s = d->listing_age_s;
    snap->listing_age_max_s = d->listing_age_max_s;
    snap->refs = 1; /* the hub's */
    snap->ticks = d->ticks;
    snap->decisions_applied = d->decisions_applied;
    snap->slurm_errors = d->slurm_errors;
    snap->slow_ticks = d->slow_ticks;
    snap->profiler_bypassed = d->profiler_bypassed;
    snap->profiler_yielded = d->profiler_yielded;
    snap->released_ahead = d->released_ahead;
    snap->started_ahead = d->started_ahead;
    snap->writes_off_tick = d->writes_made;
    snap->writes_failed = d->writes_failed;
    snap->write_slowest_s = d->write_slowest_s;
    snap->sample_errors = d->sample_errors;
    snap->latency_count = d->latency_count;
    snap->latency_sum_s = d->latency_sum_s;
    snap->latency_p50_s = engine_latency_quantile(d, 0.5);
    snap->latency_p99_s = engine_latency_quantile(d, 0.99);
    snap->packing_on = d->packing_on;
    snprintf(snap->pack_refused, sizeof snap->pack_refused, "%s", d->pack_refused);
    snap->share_nodes = d->share_nodes;
    snap->main_nodes = d->main_nodes;
    snap->slurm_up = d->slurm_up;
    snap->started = (int64_t)d->started;
    snap->published_at = (int64_t)time(NULL);
    snprintf(snap->last_error, sizeof snap->last_error, "%s", d->last_error);
    snprintf(snap->metrics_backend, sizeof snap->metrics_backend, "%s",
             d->metrics ? lucid_gpumetrics_backend_name(d->metrics) : "unavailable");
    snprintf(snap->metrics_detail, sizeof snap->metrics_detail, "%s",
             d->metrics ? lucid_gpumetrics_describe(d->metrics) : "");
    if (d->state) {
        lucid_error err = {{0}};
        snap->nmodels = lucid_state_list_model_versions(d->state, &snap->models, &err);
        if (snap->nmodels < 0)
            snap->nmodels = 0;
    }
    return snap;
}

void lucidd_hub_publish(lucidd_hub *hub, const lucidd *d, int64_t tick_started)
{
    /* Before its first tick a (re)started daemon has only its stored jobs:
     * no start estimates, no reservation's start and nodes (those come
     * from a decision), so a client shown them would read "no start" for
     * every waiting job.  Clients are told "lucidd is starting" until the
     * first tick ends instead; a tick that cannot reach Slurm publishes,
     * so status says so at once (the waiting jobs then say why they have
     * no estimate: engine_load). */
    if (d->ticks == 0)
        return;
    pthread_mutex_lock(&hub->lock);
    lucidd_snapshot *spare = hub->spare;
    hub->spare = NULL;
    pthread_mutex_unlock(&hub->lock);
    lucidd_snapshot *snap = snapshot_make(d, spare), *unused = NULL;
    pthread_mutex_lock(&hub->lock);
    /* "Unreachable since" is the start of the first tick whose Slurm call
     * failed. */
    if (d->slurm_up)
        hub->slurm_down_since = 0;
    else if (!hub->slurm_down_since)
        hub->slurm_down_since = tick_started;
    if (snap) {
        snap->slurm_down_since = hub->slurm_down_since;
        lucidd_snapshot *old = hub->current;
        hub->current = snap;
        if (old && --old->refs == 0)
            unused = recycle(hub, old);
    } /* else out of memory: clients keep seeing the previous tick */
    pthread_mutex_unlock(&hub->lock);
    snapshot_free(unused);
}

lucidd_snapshot *lucidd_hub_acquire(lucidd_hub *hub, double *tick_running_s)
{
    pthread_mutex_lock(&hub->lock);
    lucidd_snapshot *snap = hub->current;
    if (snap)
        snap->refs++;
    if (tick_running_s)
        *tick_running_s = hub->tick_began > 0 ? monotonic_s() - hub->tick_began : 0;
    pthread_mutex_unlock(&hub->lock);
    return snap;
}

void lucidd_hub_release(lucidd_hub *hub, lucidd_snapshot *snap)
{
    if (!snap)
        return;
    lucidd_snapshot *unused = NULL;
    pthread_mutex_lock(&hub->lock);
    if (--snap->refs == 0)
        unused = recycle(hub, snap);
    pthread_mutex_unlock(&hub->lock);
    snapshot_free(unused);
}

/* ---- commands ---- */

uint64_t lucidd_hub_post(lucidd_hub *hub, const lucidd_command *cmd)
{
    uint64_t id = 0;
    pthread_mutex_lock(&hub->lock);
    for (int k = 0; k < HUB_SLOTS && !id; k++) {
        hub_slot *slot = &hub->slots[k];
        if (slot->state != SLOT_FREE)
            continue;
        memset(slot, 0, sizeof *slot);
        slot->cmd = *cmd;
        slot->cmd.id = id = hub->next_id++;
        slot->state = SLOT_POSTED;
    }
    pthread_mutex_unlock(&hub->lock);
    return id;
}

static hub_slot *find_slot(lucidd_hub *hub, uint64_t id)
{
    for (int k = 0; k < HUB_SLOTS; k++)
        if (hub->slots[k].state != SLOT_FREE && hub->slots[k].cmd.id == id)
            return &hub->slots[k];
    return NULL;
}

int lucidd_hub_answer(lucidd_hub *hub, uint64_t id, int *rc, char *reply, size_t size)
{
    pthread_mutex_lock(&hub->lock);
    hub_slot *slot = find_slot(hub, id);
    int answered = slot && slot->state == SLOT_ANSWERED;
    if (answered) {
        *rc = slot->rc;
        snprintf(reply, size, "%s", slot->reply);
        slot->state = SLOT_FREE;
    }
    pthread_mutex_unlock(&hub->lock);
    return answered;
}

void lucidd_hub_forget(lucidd_hub *hub, uint64_t id)
{
    pthread_mutex_lock(&hub->lock);
    hub_slot *slot = find_slot(hub, id);
    if (slot && slot->state == SLOT_TAKEN)
        slot->forgotten = 1; /* the engine frees it when it answers */
    else if (slot)
        slot->state = SLOT_FREE;
    pthread_mutex_unlock(&hub->lock);
}

/* The oldest posted command, marked taken; 0 when there is none. */
static int take_oldest(lucidd_hub *hub, lucidd_command *out)
{
    pthread_mutex_lock(&hub->lock);
    hub_slot *oldest = NULL;
    for (int k = 0; k < HUB_SLOTS; k++)
        if (hub->slots[k].state == SLOT_POSTED &&
            (!oldest || hub->slots[k].cmd.id < oldest->cmd.id))
            oldest = &hub->slots[k];
    if (oldest) {
        oldest->state = SLOT_TAKEN;
        *out = oldest->cmd;
    }
    pthread_mutex_unlock(&hub->lock);
    return oldest != NULL;
}

void lucidd_hub_drain(lucidd_hub *hub, lucidd *d)
{
    lucidd_command cmd;
    while (take_oldest(hub, &cmd)) {
        char reply[LUCIDD_REPLY_MAX] = "";
        int rc = engine_command(d, &cmd, reply, sizeof reply); /* outside the lock */
        pthread_mutex_lock(&hub->lock);
        hub_slot *slot = find_slot(hub, cmd.id);
        if (slot && slot->forgotten) {
            slot->state = SLOT_FREE;
        } else if (slot) {
            slot->rc = rc;
            snprintf(slot->reply, sizeof slot->reply, "%s", reply);
            slot->state = SLOT_ANSWERED;
        }
        pthread_mutex_unlock(&hub->lock);
        ssize_t ignored = write(hub->wake_pipe[1], "!", 1); /* full pipe: already awake */
        (void)ignored;
    }
}

/* ---- the decision thread ---- */

void lucidd_hub_stop(lucidd_hub *hub)
{
    pthread_mutex_lock(&hub->lock);
    hub->stop = 1;
    pthread_cond_broadcast(&hub->wake_engine);
    pthread_mutex_unlock(&hub->lock);
}

int lucidd_hub_stopping(lucidd_hub *hub)
{
    pthread_mutex_lock(&hub->lock);
    int stop = hub->stop;
    pthread_mutex_unlock(&hub->lock);
    return stop;
}

static void set_tick_began(lucidd_hub *hub, double began)
{
    pthread_mutex_lock(&hub->lock);
    hub->tick_began = began;
    pthread_mutex_unlock(&hub->lock);
}

long lucidd_tick_period_ms(const lucidd_config *cfg, double tick_wall_s)
{
    /* 20 x the tick's own time: lucidd ticks at most ~5 % of the time
     * beyond the floor, and a tick slowed by Slurm (its RPCs are in the
     * wall time) is followed later, sparing a busy slurmctld. */
    if (cfg->tick_min_ms <= 0) /* a fixed period (a config made in code) */
        return cfg->tick_ms;
    double ms = 20e3 * (tick_wall_s > 0 ? tick_wall_s : 0);
    if (ms < cfg->tick_min_ms)
        ms = cfg->tick_min_ms;
    return ms < cfg->tick_ms ? (long)ms : (long)cfg->tick_ms;
}

void lucidd_engine_loop(lucidd *d, lucidd_hub *hub)
{
    for (;;) {
        /* A tick every period from this one's start (--tick-ms, or
         * sooner after a cheap tick: lucidd_tick_period_ms); one that ran
         * longer is followed at once, with no catching up.  Waiting
         * --tick-ms after each tick's end, as before threads, made the
         * period tick_ms + the tick's own time: 1.45 ticks a second
         * against 2 during a 2,000-job burst (bench/burst.sh). */
        struct timespec next;
        clock_gettime(CLOCK_MONOTONIC, &next);
        double began = monotonic_s();
        set_tick_began(hub, began);
        int64_t started = (int64_t)time(NULL);
        lucidd_hub_drain(hub, d);
        engine_tick(d);
        lucidd_hub_publish(hub, d, started);
        set_tick_began(hub, 0);
        long period_ms = lucidd_tick_period_ms(&d->cfg, monotonic_s() - began);
        next.tv_sec += period_ms / 1000;
        next.tv_nsec += (period_ms % 1000) * 1000000;
        if (next.tv_nsec >= 1000000000) {
            next.tv_sec++;
            next.tv_nsec -= 1000000000;
        }
        pthread_mutex_lock(&hub->lock);
        while (!hub->stop &&
               pthread_cond_timedwait(&hub->wake_engine, &hub->lock, &next) != ETIMEDOUT)
            ;
        int stop = hub->stop;
        pthread_mutex_unlock(&hub->lock);
        if (stop)
            return;
    }
}

int lucidd_ended_counts(const lucidd_job *jobs, size_t njobs, lucidd_ended *out, int count,
                        int max)
{
    for (size_t i = 0; i < njobs; i++) {
        const lucid_job_record *r = &jobs[i].rec;
        if (!lucid_phase_is_final(r->phase))
            continue;
        /* Jobs finished before outcomes were kept (schema 2) by their phase. */
        const char *outcome = r->outcome[0] ? r->outcome
                              : r->phase == LUCID_PHASE_FAILED ? "failed" : "completed";
        const char *where = r->ended_in[0] ? r->ended_in
                            : r->phase == LUCID_PHASE_DONE_IN_PROFILER ? "profiler" : "main";
        int k = 0;
        while (k < count && (strcmp(out[k].where, where) != 0 || strcmp(out[k].outcome, outcome) != 0))
            k++;
        if (k == count) {
            if (count == max)
                continue;
            snprintf(out[k].where, sizeof out[k].where, "%s", where);
            snprintf(out[k].outcome, sizeof out[k].outcome, "%s", outcome);
            out[k].count = 0;
            count++;
        }
        out[k].count++;
    }
    return count;
}
